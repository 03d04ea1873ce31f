"""Many ranks: segments run as N ranks under torch's elastic launcher.

The first tests need no launch (names, what each rank restores, merging
captures); the rest start real ranks (gloo, CPU, two ranks) and are marked
``distributed``: each launch costs an interpreter and ``import torch`` per
rank and one for the launcher.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from resumecheck.distributed import (
    launched_world_size, merge_captures, rank_file, rank_name, split_rank_name,
)
from resumecheck.errors import CheckpointError, InvalidArgument
from resumecheck.capture import CHECKPOINT_FORMAT, load_checkpoint
from resumecheck.segments import Restore
from resumecheck.settings import Settings

ROOT = Path(__file__).resolve().parent.parent


def test_rank_names_round_trip():
    assert rank_name("rng", 1) == "rng[rank 1]"
    assert split_rank_name("rng[rank 12]") == ("rng", 12)
    assert split_rank_name("grad:fc.weight[rank 0]") == ("grad:fc.weight", 0)
    assert split_rank_name("params") == ("params", None)


@pytest.mark.parametrize("bad", [0, -1, True, 1.5, "2"])
def test_nproc_must_be_a_positive_int(bad):
    with pytest.raises(InvalidArgument, match="nproc"):
        Settings(nproc=bad)
    assert Settings(nproc=None).nproc is None
    assert Settings(nproc=2).nproc == 2


def test_torchrun_environment_is_recognised():
    assert launched_world_size({}) is None
    assert launched_world_size({"RANK": "1", "WORLD_SIZE": "2"}) is None  # not torchrun's
    env = {"TORCHELASTIC_RUN_ID": "x", "RANK": "1", "WORLD_SIZE": "2"}
    assert launched_world_size(env) == (1, 2)


def _capture(path: Path, rank: int, rng: int, params: float) -> str:
    torch.save({"format": CHECKPOINT_FORMAT, "rank": rank, "world_size": 2, "meta": {},
                "components": {"params": {"w": torch.tensor([params])},
                               "rng": {"torch": torch.tensor([rng])},
                               "global_step": {"value": 3}}}, path)
    return str(path)


def test_merged_capture_names_per_rank_state_and_keeps_replicated_state_once(tmp_path):
    files = [_capture(tmp_path / "a.rank0.pt", 0, 10, 1.0),
             _capture(tmp_path / "a.rank1.pt", 1, 11, 1.0)]
    merged = load_checkpoint(merge_captures(files, str(tmp_path / "a.pt")))
    comps = merged["components"]
    assert set(comps) == {"params", "rng[rank 0]", "rng[rank 1]", "global_step"}
    assert comps["rng[rank 1]"]["torch"].item() == 11
    assert comps["params"]["w"].item() == 1.0  # equal on every rank: kept once
    assert merged["world_size"] == 2
    assert rank_file(str(tmp_path / "a.pt"), 1) == str(Path(files[1]).resolve())


def test_state_that_differs_between_ranks_is_kept_per_rank(tmp_path):
    files = [_capture(tmp_path / "b.rank0.pt", 0, 10, 1.0),
             _capture(tmp_path / "b.rank1.pt", 1, 11, 2.0)]  # a shard each
    comps = load_checkpoint(merge_captures(files, str(tmp_path / "b.pt")))["components"]
    assert comps["params"]["[rank 1]"]["w"].item() == 2.0


def test_each_rank_restores_its_own_file_and_drops_only_what_names_it(tmp_path):
    from resumecheck.distributed import _rank_restore  # the translation under test

    files = [_capture(tmp_path / "c.rank0.pt", 0, 10, 1.0),
             _capture(tmp_path / "c.rank1.pt", 1, 11, 1.0)]
    merged = merge_captures(files, str(tmp_path / "c.pt"))
    restore = Restore(path=merged, drop=["rng[rank 1]", "global_step"])
    r0, r1 = _rank_restore(restore, 0, 2), _rank_restore(restore, 1, 2)
    assert (r0.path, r0.drop) == (str(Path(files[0]).resolve()), ["global_step"])
    assert (r1.path, r1.drop) == (str(Path(files[1]).resolve()), ["rng", "global_step"])
    own = Restore(path="/shared/dir", source="program", override_path=merged,
                  override=["rng[rank 0]"])
    assert _rank_restore(own, 0, 2).override == ["rng"]
    assert _rank_restore(own, 1, 2).override == []
    assert _rank_restore(own, 1, 2).path == "/shared/dir"  # one directory for every rank


def test_a_capture_of_fewer_ranks_says_which_rank_has_no_state(tmp_path):
    merged = merge_captures([_capture(tmp_path / "d.rank0.pt", 0, 10, 1.0)],
                            str(tmp_path / "d.pt"))
    with pytest.raises(CheckpointError, match="rank 1 has none of its own"):
        rank_file(merged, 1)


@pytest.mark.parametrize("command", ["run", "fuzz"])
def test_a_torchrun_rank_other_than_0_ends_at_once_without_importing_torch(command):
    """Under a user's torchrun only rank 0 checks; the others say so and end
    before they pay for ``import torch``."""
    env = {**os.environ, "TORCHELASTIC_RUN_ID": "x", "RANK": "1", "WORLD_SIZE": "2"}
    probe = ("import sys; from resumecheck.cli import main; "
             f"code = main([{command!r}, 'fixtures.dist.ddp:CORRECT']); "
             "print(code, 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.stdout.split() == ["0", "False"], out.stdout + out.stderr
    assert "rank 1 of a torchrun launch: the check runs on rank 0" in out.stderr


@pytest.mark.parametrize(("code", "said"), [(1, True), (3, True), (0, False)])
def test_under_torchrun_rank_0_says_what_the_launchers_traceback_after_a_failure_is(
        monkeypatch, capsys, code, said):
    """A trial: after NOT EQUIVALENT under torchrun, torchrun's ChildFailedError
    traceback followed the report, unexplained."""
    from resumecheck import cli

    monkeypatch.setenv("TORCHELASTIC_RUN_ID", "x")
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setattr(cli, "main", lambda: code)
    with pytest.raises(SystemExit) as info:
        cli.entrypoint()
    assert info.value.code == code
    err = capsys.readouterr().err
    assert (f"exit status {code}, which torchrun passes on: the ChildFailedError" in err) == said


# -- real launches: two ranks, gloo, CPU ----------------------------------------------

FAST = {"noise_seeds": 0, "check_determinism": False, "nproc": 2}


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


def _no_rank_survives(pids_dir: Path) -> None:
    pids = [int(p.name) for p in pids_dir.iterdir()]
    assert len(pids) >= 4, pids  # every launch's ranks wrote theirs
    assert [p for p in pids if _alive(p)] == []


def _by_label(report):
    return {(tuple(r.dropped), r.checkpoint): r for r in report.runs}


# The class 9 fixtures and per-rank ablations through the engine: tests/test_dist_engine.py.


@pytest.mark.e2e
@pytest.mark.distributed
def test_a_rank_killed_mid_run_fails_the_run_naming_it_and_leaves_no_process(
        tmp_path, monkeypatch):
    from resumecheck.engine import verify

    monkeypatch.setenv("RESUMECHECK_TEST_PIDS", str(tmp_path))
    report = verify("fixtures.dist.ddp:KILLED", drop="none", **FAST)
    own = _by_label(report)[((), "program")]
    assert own.verdict == "failed"
    assert own.first_divergent_step == 3
    assert own.failure.startswith("rank 1 was killed by SIGKILL (signal 9) during step 3")
    assert "rank 0" in own.failure  # its collective lost its peer: a consequence, said so
    _no_rank_survives(tmp_path)


@pytest.mark.e2e
@pytest.mark.distributed
def test_a_hung_rank_ends_the_run_within_the_timeout_and_is_named(tmp_path, monkeypatch):
    from resumecheck.engine import verify

    monkeypatch.setenv("RESUMECHECK_TEST_PIDS", str(tmp_path))
    began = time.monotonic()
    # 1 s: a step here takes milliseconds, even on a loaded machine
    report = verify("fixtures.dist.ddp:HUNG", drop="none", timeout=1, **FAST)
    own = _by_label(report)[((), "program")]
    assert own.verdict == "failed"
    assert own.failure.startswith("rank 1 hung: step 3 took longer than 1 s (the step timeout)")
    assert "ddp.py" in own.failure and "in _meet_fault" in own.failure  # where it hung
    assert "waiting for it: rank 0 at torch/" in own.failure  # in the all-reduce
    assert time.monotonic() - began < 600
    _no_rank_survives(tmp_path)


def test_joining_the_process_group_is_bounded_whatever_the_step_timeout():
    """Seconds on one machine; starting is bounded only where nothing imports
    (forked ranks): a new interpreter's ``import torch`` may be slow."""
    from resumecheck.distributed import LAUNCH_BOUND, _RankWatch

    fresh, forked = _RankWatch(2, []), _RankWatch(2, [], forked=True)
    assert fresh._bound("group", None) == forked._bound("group", None) == LAUNCH_BOUND
    assert fresh._bound("group", 900.0) == LAUNCH_BOUND
    assert forked._bound("start", None) == LAUNCH_BOUND and fresh._bound("start", None) is None
    assert fresh._bound("step", 5.0) == 5.0 and fresh._bound("build", None) is None


def _hold_up_launches(monkeypatch, held: int) -> list[int]:
    """Stop (SIGSTOP) the first ``held`` launchers as they start, before any
    rank does, with a starting bound of half a second; later launches go on
    as they would. CI once saw a launch held up so: one forked rank never got
    through connecting to the launcher's store, and the check waited ten
    minutes for the collective timeout."""
    from resumecheck import distributed, forkserver

    real, stopped = forkserver.spawn, []

    def spawn(module, *args, **kwargs):
        proc = real(module, *args, **kwargs)
        if module == "resumecheck._launch":
            hold = len(stopped) < held
            monkeypatch.setattr(distributed, "LAUNCH_BOUND", 0.5 if hold else 60.0)
            if hold:
                os.kill(proc.pid, signal.SIGSTOP)
                stopped.append(proc.pid)
        return proc

    monkeypatch.setattr(forkserver, "spawn", spawn)
    return stopped


needs_warm = pytest.mark.skipif(not __import__("resumecheck.forkserver").forkserver.available(),
                                reason="a launch's start is bounded when its ranks are forked")


@pytest.mark.e2e
@pytest.mark.distributed
@needs_warm
def test_a_launch_held_up_before_the_program_runs_is_launched_once_more(monkeypatch, capsys):
    from resumecheck.engine import verify

    stopped = _hold_up_launches(monkeypatch, 1)
    report = verify("resumecheck.tiny_dist:DDP", steps=2, resume_at=1, drop="none", **FAST)
    assert stopped and report.equivalent, report.runs
    assert all(not _alive(pid) for pid in stopped)
    err = capsys.readouterr().err
    # (stopped as it starts: on a loaded machine the launcher has forked its ranks by then,
    # and they wait for its store; either way nothing of the program ran)
    held = ("no rank started within 0.5 s", "did not join the process group within 0.5 s")
    assert any(h in err for h in held) and "is launched once more" in err, err


@pytest.mark.e2e
@pytest.mark.distributed
@needs_warm
def test_a_launch_held_up_twice_says_nothing_of_the_program_ran(monkeypatch):
    from resumecheck.engine import verify
    from resumecheck.errors import ReferenceFailed

    stopped = _hold_up_launches(monkeypatch, 2)
    with pytest.raises(ReferenceFailed) as info:
        verify("resumecheck.tiny_dist:DDP", steps=2, resume_at=1, drop="none", **FAST)
    said = str(info.value)
    assert len(stopped) == 2 and all(not _alive(pid) for pid in stopped)
    assert ("no rank started within 0.5 s; the launch was killed" in said
            or "did not join the process group within 0.5 s" in said), said
    assert "launched once more, it did the same. Nothing of the program had run" in said, said
    assert "Fix the program" not in said and "longer" not in said, said


@pytest.mark.e2e
@pytest.mark.distributed
def test_a_rank_whose_load_raises_ends_the_run_at_once_naming_it(tmp_path, monkeypatch,
                                                                 capsys):
    """Rank 1 raises in load() after the load's collectives; rank 0 goes on into
    the next collective and waits there. The run ends when rank 1 fails, not at
    a bound, and names rank 1 and its error, not the rank left waiting. What
    the rank printed first reaches standard error, marked with its rank (a
    trial: the ranks' output was lost)."""
    from resumecheck.engine import verify

    monkeypatch.setenv("RESUMECHECK_TEST_PIDS", str(tmp_path))
    began = time.monotonic()
    report = verify("fixtures.dist.ddp:RAISES_IN_LOAD", drop="none", timeout=60, **FAST)
    own = _by_label(report)[((), "program")]
    assert own.verdict == "failed"
    assert own.failure.startswith("rank 1: "), own.failure
    assert "FileNotFoundError" in own.failure and "rank1.pt is missing" in own.failure
    assert "hung" not in own.failure
    assert time.monotonic() - began < 60  # the step bound (60 s) was not what ended it
    assert "[rank 1] loading " in capsys.readouterr().err
    _no_rank_survives(tmp_path)


@pytest.mark.e2e
@pytest.mark.distributed
def test_a_rank_whose_save_raises_ends_the_run_at_once_naming_its_error():
    """Trial 393: rank 0 saved one file at the path, a directory under several
    ranks, and its save raised; the uninterrupted run went on as one that did
    not save, while rank 1 waited in the program's barrier, and the run was
    said to hang at its step bound, the error shown nowhere."""
    from resumecheck.engine import verify
    from resumecheck.errors import ReferenceFailed

    began = time.monotonic()
    with pytest.raises(ReferenceFailed) as info:
        verify("fixtures.dist.ddp:SAVES_ONE_FILE", drop="none", timeout=30, **FAST)
    said = str(info.value)
    assert "rank 0: checkpoint save failed" in said and "Is a directory" in said, said
    assert "write the files inside it" in said and "hung" not in said, said
    assert said.endswith("Fix the program's save() so that the uninterrupted run can save."), said
    assert time.monotonic() - began < 30  # (not the step bound)


@pytest.mark.e2e
@pytest.mark.distributed
def test_started_under_torchrun_it_is_the_same_check(tmp_path):
    """``torchrun --nproc-per-node 2 -m resumecheck run`` checks at two ranks:
    rank 0 launches every segment, rank 1 ends at once."""
    env = {k: v for k, v in os.environ.items() if k != "RESUMECHECK_TEST_PIDS"}
    out = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
         "--log-dir", str(tmp_path / "torchrun-logs"),  # not a torchelastic_* dir in /tmp
         "-m", "resumecheck", "run", "fixtures.dist.ddp:CORRECT", "--steps", "4",
         "--resume-at", "2", "--drop", "none", "--noise-seeds", "0",
         "--no-determinism-check", "--format", "json"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    import json

    report = json.loads(out.stdout)
    assert report["nproc"] == 2 and report["equivalent"]
    assert "rank 1 of a torchrun launch: the check runs on rank 0" in out.stderr


@pytest.mark.e2e
def test_the_pytest_marker_takes_nproc(torch_dynamo_imported, pytester):
    """``@pytest.mark.resumecheck(nproc=N)`` reaches the engine (an invalid
    number is refused there, before any launch). In-process: nothing here
    needs an interpreter of its own, and nothing is launched."""
    pytester.makepyfile(test_ranks='''
import pytest


@pytest.mark.resumecheck(nproc=0, noise_seeds=0)
def test_two_ranks(resumecheck):
    resumecheck.assert_resume_equivalent("fixtures.dist.ddp:CORRECT")
''')
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--strict-markers")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*nproc=0*expected an int >= 1*the number of ranks*"])


def test_a_rank_stopped_while_it_writes_its_result_does_not_hide_the_failure(tmp_path):
    """Rank 1 is killed; torch's launcher stops rank 0 as it writes its result,
    leaving an empty file. The run fails naming rank 1 (a suite run once saw a
    JSONDecodeError escape the check instead)."""
    import types

    from resumecheck.distributed import _collect  # the merge under test
    from resumecheck.segments import SegmentSpec

    spec = SegmentSpec(target_spec=None, config={}, start=0, stop=4, workdir=str(tmp_path),
                       name="seg")
    (tmp_path / "seg.rank0.result.json").write_text("")  # stopped mid-write
    failures = tmp_path / "seg.failures.json"
    failures.write_text(json.dumps({"1": {"exitcode": -9, "first": True}}))
    watch = types.SimpleNamespace(exited={}, last_step=[2, 3], phase=[("step", 3)] * 2)
    result = _collect(spec, 2, 1, watch, failures, "")
    assert result.error is not None and result.error.startswith("rank 1 was killed by SIGKILL")


@pytest.mark.parametrize("stop", ["budget", "cancel", None])
def test_what_ranks_print_as_the_check_stops_them_is_not_passed_on(tmp_path, monkeypatch,
                                                                     capsys, stop):
    """Trial 412: a passing fuzz printed the ranks' KeyboardInterrupt tracebacks,
    ending in the program's load(), as its time budget stopped a launch
    mid-collective. What ranks print in a launch the check stops is no output
    of the program's; in one that ends otherwise, it is passed on."""
    import resumecheck.distributed as distributed
    from resumecheck.errors import BudgetExhausted
    from resumecheck.segments import SegmentSpec

    spec = SegmentSpec(target_spec="resumecheck.tiny_dist:DDP", config={}, start=0, stop=2,
                       workdir=str(tmp_path), name="seg", nproc=2)
    monkeypatch.setattr(distributed, "_write_rank_specs", lambda *a: None)
    ended = {"budget": BudgetExhausted(None), "cancel": distributed._Cancelled(), None: None}

    def launch(*args):
        for r in range(2):
            (tmp_path / f"seg.rank{r}.log").write_text("Traceback\nKeyboardInterrupt\n")
        if ended[stop] is not None:
            raise ended[stop]
        return ("rank 0 hung", "step", 1), None, None, ""

    monkeypatch.setattr(distributed, "_launch", launch)
    if stop is None:
        distributed.run_ranks(spec)
    else:
        with pytest.raises(type(ended[stop])):
            distributed.run_ranks(spec)
    err = capsys.readouterr().err
    assert ("[rank 1] KeyboardInterrupt" in err) == (stop is None), err


def test_an_iterator_a_ranks_load_made_before_a_rerun_put_its_sampler_right_is_kept(tmp_path):
    """Trial 449: one process was told that its load() made its iterator before
    the rerun put `sampler_epoch` right; on two ranks that was lost in the merge
    of the ranks' results, and the sampler's epoch, the whole bug, read
    "put right alone, the run departs no later"."""
    from resumecheck.distributed import merge
    from resumecheck.segments import SegmentResult, SegmentSpec

    spec = SegmentSpec(target_spec=None, config={}, start=0, stop=2, workdir=str(tmp_path),
                       name="seg")
    ranks = [SegmentResult(records=[], names=["sampler_epoch", "rng"], captures={},
                           end_state=None, unreached={"sampler_epoch": ["s.it"]})
             for _ in range(2)]
    assert merge(spec, ranks).unreached == {"sampler_epoch": ["s.it"]}
    ranks[1].unreached = {"rng": ["s.it"]}  # (per rank: named by rank)
    assert merge(spec, ranks).unreached == {"sampler_epoch": ["s.it"], "rng[rank 1]": ["s.it"]}
