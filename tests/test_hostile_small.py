"""The smaller faults of issue 14, each reproduced: quoting, the Markdown table,
wording of crashes and seeds, empty resume points, late non-plain state, and
module resolution from the current directory."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import resumecheck
from resumecheck import forkserver, forkshare
from resumecheck.cli import main
from resumecheck.engine import ReferenceFailed, verify
from resumecheck.errors import CheckpointError
from resumecheck.report import FAILED, IDENTICAL, Report, RunResult
from resumecheck.reproduce import reproduce_command
from resumecheck.capture import load_checkpoint

ROOT = Path(__file__).resolve().parent.parent
QUICK = ["--noise-seeds", "0", "--no-determinism-check"]


# -- reproduce: one builder, shell-quoted -------------------------------------

@pytest.mark.e2e
def test_reproduce_survives_a_target_path_with_spaces_and_reproduces(tmp_path, capsys):
    program = tmp_path / "my runs" / "bug prog's.py"
    program.parent.mkdir()
    program.write_text("from fixtures.bugs.class01_scheduler_not_saved import BUGGY\n")
    spec = f"{program}:BUGGY"
    report = verify(spec, drop="none", noise_seeds=0, check_determinism=False)
    full = report.full_resume
    assert full is not None and full.verdict != IDENTICAL
    argv = shlex.split(full.reproduce)
    assert argv[:3] == ["resumecheck", "run", spec]
    assert main([*argv[1:], "--format", "json", *QUICK]) == 1
    again = json.loads(capsys.readouterr().out)["runs"][0]
    assert again["reproduce"] == full.reproduce
    assert (again["verdict"], again["first_divergent_step"]) == (
        full.verdict, full.first_divergent_step)


def test_reproduce_command_quotes_and_keeps_every_setting():
    from resumecheck.compare import Tolerance

    cmd = reproduce_command(
        "run", "/a dir/t.py:T", steps=9, seed=3, threads=2, isolation="process",
        resume_at=[2, 5], drop=["rng", "config"], tolerance=Tolerance.close(1.2345678e-5, 1e-7),
    )
    argv = shlex.split(cmd)
    assert argv == ["resumecheck", "run", "/a dir/t.py:T", "--steps", "9", "--resume-at", "2,5",
                    "--drop", "rng,config", "--seed", "3", "--isolation", "process",
                    "--threads", "2", "--tolerance", "close", "--rtol", "1.2345678e-05",
                    "--atol", "1e-07"]
    baseline = shlex.split(reproduce_command("baseline", "m:T", steps=4, seed=0, threads=3,
                                             isolation="inprocess"))
    assert baseline == ["resumecheck", "baseline", "m:T", "--steps", "4", "--seed", "0",
                        "--isolation", "inprocess", "--threads", "3"]


def test_a_reproduce_command_runs_the_noise_seeds_the_check_ran():
    # (the noise band decides whether a difference is called plausible)
    report = verify("tests.programs:NOISY_FORGETS_RNG", drop="none", noise_seeds=0,
                    check_determinism=False)
    argv = shlex.split(report.full_resume.reproduce)
    assert argv[argv.index("--noise-seeds") + 1] == "0"
    default = reproduce_command("run", "m:T", steps=4, seed=None, threads=1,
                                isolation="inprocess", noise_seeds=2)
    assert "--noise-seeds" not in default  # the default needs no flag


# -- the Markdown table and failed rows ----------------------------------------

def _report(*runs: RunResult) -> Report:
    from resumecheck.environment import fingerprint

    return Report(target="t.py:T", steps=10, resume_at=[5], seed=0, isolation="inprocess",
                  tolerance={"mode": "bitwise", "rtol": None, "atol": None},
                  determinism={"checked": False}, noise={"seeds": [], "band": None},
                  environment=fingerprint(1), runs=list(runs))


def _cells(line: str) -> int:
    return len(re.split(r"(?<!\\)\|", line.strip())) - 2  # split on unescaped pipes


def test_markdown_table_has_as_many_cells_in_every_row_as_in_its_divider():
    failed = RunResult(dropped=[], resume_at=[5], verdict=FAILED, first_divergent_step=8,
                       explanation="a step failed: x | y", failure="boom")
    ok = RunResult(dropped=["rng"], resume_at=[5], verdict=IDENTICAL, max_abs_loss_diff=0.5)
    table = [line for line in _report(failed, ok).render("markdown").splitlines()
             if line.startswith("|")]
    assert len(table) == 4
    assert re.fullmatch(r"\|(---\|)+", table[1])
    widths = {_cells(line) for line in table}
    assert widths == {6}, table


def test_a_failed_row_says_failed_not_none():
    failed = RunResult(dropped=[], resume_at=[5], verdict=FAILED, first_divergent_step=8,
                       explanation="a step failed: boom", failure="boom")
    for fmt in ("table", "markdown"):
        text = _report(failed).render(fmt)
        assert "None" not in text
        assert "8 (failed)" in text


# -- wording -------------------------------------------------------------------

@pytest.mark.e2e
def test_a_crash_in_the_reference_is_worded_for_the_reference():
    with pytest.raises(ReferenceFailed) as info:
        verify("fixtures.hostile.programs:CRASHES", drop="none", isolation="process",
               noise_seeds=0, check_determinism=False)
    message = str(info.value)
    assert "the interpreter of the uninterrupted run exited with code 7" in message
    assert "restarted" not in message


@pytest.mark.e2e
@pytest.mark.parametrize("seed", ["-1", str(2**70)])
def test_a_seed_the_program_rejects_is_blamed_on_the_seed(seed, capsys):
    code = main(["run", "--seed", seed, *QUICK])  # the built-in program seeds numpy too
    err = capsys.readouterr().err
    assert code == 2
    assert f"the program rejected the seed setting seed={seed}" in err
    assert "Fix the factory" not in err and "Traceback" not in err


@pytest.mark.parametrize("points", [",", " , ", "", "3,,5", "3,"])  # (a trial: 3,,5 ran 3,5)
def test_resume_at_without_a_step_is_a_usage_error(points, capsys):
    assert main(["run", "--resume-at", points]) == 2
    assert "expected step numbers" in capsys.readouterr().err


@pytest.mark.parametrize("drop", ["", "rng,,scheduler"])
def test_drop_with_an_empty_name_is_a_usage_error(drop, capsys):
    # (a trial: --drop '' was taken silently)
    assert main(["run", "--drop", drop]) == 2
    assert f"--drop {drop!r}: an empty component name" in capsys.readouterr().err


@pytest.mark.parametrize("seconds", ["-1", "nan"])
def test_timeout_below_zero_or_nan_is_a_usage_error_in_the_commands_words(seconds, capsys):
    # (a trial: told "None (automatic)", which the command line cannot say)
    assert main(["run", "--timeout", seconds]) == 2
    err = capsys.readouterr().err
    assert "expected seconds > 0, or 0 or inf for no bound" in err and "None" not in err


def test_drop_all_with_a_name_is_a_usage_error(capsys):
    assert main(["run", "--drop", "rng,all"]) == 2  # (a trial: "unknown component 'all'")
    assert "all and none cannot be combined with component names" in capsys.readouterr().err


def test_timeout_inf_means_no_bound(monkeypatch):
    # (a trial: --timeout inf was refused; 0 is "no bound")
    from resumecheck import cli

    seen = []
    monkeypatch.setattr(cli, "_run", lambda args: seen.append(args.timeout) or 0)
    assert main(["run", "--timeout", "inf"]) == 0 and seen == [0.0]


# -- state that turns non-plain after the first capture ------------------------

@pytest.mark.e2e
def test_state_that_turns_non_plain_later_names_the_component_and_type():
    with pytest.raises(ReferenceFailed) as info:
        verify("fixtures.hostile.programs:LATE_NONPLAIN", drop="none", noise_seeds=0,
               check_determinism=False)
    message = str(info.value)
    assert "component 'recent_losses'" in message
    assert "state_dict()['recent'] is a collections.deque" in message
    assert "truncated" not in message and "corrupted" not in message
    assert "\x1b[" not in message
    # (a trial: "Fix the program so that it trains without a restart first": it does)
    assert "trains without a restart" not in message and "make its state_dict() return" in message


class _DequeLoop:
    """A replay buffer kept as a deque, declared with a bare Attr."""

    def __init__(self, settings: dict) -> None:
        import collections

        self.model = torch.nn.Linear(2, 1)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.buffer = collections.deque(maxlen=4)

    def components(self) -> dict:
        return {"params": self.model, "optimizer": self.opt,
                "replay": resumecheck.Attr(self, "buffer")}

    def train_step(self):
        self.buffer.append(float(len(self.buffer)))
        loss = self.model(torch.ones(1, 2)).sum() * len(self.buffer)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()


def test_an_attr_of_a_deque_is_told_to_convert_it_with_to_state():
    """A trial: a replay buffer declared as Attr(self, "buffer") was told to
    make its state_dict() return plain data: it wrote no state_dict()."""
    with pytest.raises(ReferenceFailed) as info:
        verify(resumecheck.Target(factory=_DequeLoop, steps=4, resume_at=(2,)), drop="none",
               noise_seeds=0, check_determinism=False)
    message = str(info.value)
    assert "component 'replay'" in message and "collections.deque" in message
    assert "give the Attr to_state= and from_state=" in message
    assert "make its state_dict() return" not in message


@pytest.mark.e2e
def test_a_class_of_a_file_target_is_named_after_its_file(tmp_path):
    # (a trial: "is a _resumecheck_target_1941240306132552064.Best")
    source = (Path(__file__).parents[1] / "fixtures" / "hostile" / "programs.py").read_text()
    assert "collections.deque(" in source  # (the fixture's late state: a deque)
    program = tmp_path / "window.py"
    program.write_text(source.replace("collections.deque(", "Window(") +
                       "\n\nclass Window(collections.deque):\n    pass\n")
    with pytest.raises(ReferenceFailed) as info:
        verify(f"{program}:LATE_NONPLAIN", drop="none", noise_seeds=0, check_determinism=False)
    assert "is a window.Window" in str(info.value), str(info.value)


def test_a_capture_refused_by_weights_only_is_not_called_corrupted(tmp_path):
    import collections

    path = tmp_path / "capture.pt"
    torch.save({"format": "resumecheck.checkpoint/1", "components": {
        "x": collections.deque([1])}}, path)
    with pytest.raises(CheckpointError) as info:
        load_checkpoint(str(path))
    assert "refuses, it is not damaged" in str(info.value)
    assert "truncated" not in str(info.value)


# -- resolving modules: console script, python -m and process children ---------

@pytest.mark.e2e
def test_the_console_script_imports_module_targets_from_the_cwd(tmp_path):
    script = Path(sys.executable).with_name("resumecheck")
    assert script.exists()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    argv = ["run", "fixtures.hostile.programs:PLAIN", "--steps", "1"]
    # the console script, a new interpreter; and `python -m resumecheck` as a
    # warm server forks it (the module path a new `python -m` has: the cwd first)
    procs = [
        subprocess.Popen([str(script), *argv], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True),
        forkserver.spawn("resumecheck", argv, env, cwd=str(ROOT), output_dir=str(tmp_path)),
    ]
    errs = [proc.communicate(timeout=300)[1] for proc in procs]
    for proc, err in zip(procs, errs):
        # the target imported; the (deliberately) bad --steps is what stops it
        assert proc.returncode == 2, err
        assert "No module named" not in err
        assert "--steps 1" in err
    assert errs[0] == errs[1]


@pytest.mark.e2e
def test_a_random_py_in_the_cwd_does_not_run_in_a_process_child(tmp_path, monkeypatch):
    marker = tmp_path / "shadow-ran"
    (tmp_path / "random.py").write_text(
        f"open({str(marker)!r}, 'w').write('the cwd shadowed the standard library')\n"
        "raise ImportError('shadowed random')\n"
    )
    monkeypatch.chdir(tmp_path)
    report = verify("fixtures.hostile.programs:PLAIN", drop="none", isolation="process",
                    noise_seeds=0, check_determinism=False)
    assert not marker.exists()
    assert report.full_resume is not None and report.full_resume.verdict == IDENTICAL


@pytest.mark.process
@pytest.mark.skipif(not forkserver.available(), reason="warm servers need fork")
def test_a_warm_server_started_in_a_directory_with_a_random_py_does_not_import_it(
        tmp_path, monkeypatch):
    # (the test above passes whenever the servers were started elsewhere
    # earlier; this one starts a server of its own, from the shadowing cwd)
    marker = tmp_path / "shadow-ran"
    (tmp_path / "random.py").write_text(
        f"open({str(marker)!r}, 'w').write('the cwd shadowed the standard library')\n"
        "raise ImportError('shadowed random')\n"
    )
    monkeypatch.chdir(tmp_path)
    # a server of this process's own (the session's share starts its servers in
    # a directory of its own: through it, this passed whatever the server did);
    # no warm-up step: `import torch` is what imports `random`
    monkeypatch.delenv(forkshare.SHARE_ENV, raising=False)
    env = {**os.environ, "PYTHONHASHSEED": "7", forkserver.WARM_UP_ENV: "0"}
    child = forkserver.spawn("this", [], env, cwd=str(ROOT), output_dir=str(tmp_path))
    out, _ = child.communicate(timeout=120)
    assert child.returncode == 0 and "Beautiful is better than ugly" in out
    assert not marker.exists()


@pytest.mark.e2e
def test_the_state_machine_reproduce_line_comes_from_the_same_builder():
    from hypothesis import Phase, settings
    from hypothesis.stateful import run_state_machine_as_test

    from resumecheck.strategies import resume_state_machine
    from tests import programs

    machine = resume_state_machine(programs.NOISY_FORGETS_RNG, threads=1)
    # any failing schedule carries the line: no shrinking needed to read it
    quick = settings(max_examples=50, deadline=None, database=None,
                     phases=[Phase.explicit, Phase.generate])
    with pytest.raises(AssertionError) as info:
        run_state_machine_as_test(machine, settings=quick)
    command = str(info.value).split("reproduce: ", 1)[1].strip()
    argv = shlex.split(command)
    points = argv[argv.index("--resume-at") + 1]
    assert command == reproduce_command(
        "run", "tests.programs:NOISY_FORGETS_RNG", steps=8, seed=None, threads=1,
        isolation="inprocess", resume_at=[int(p) for p in points.split(",")],
    )
    assert argv[argv.index("--threads") + 1] == "1"
