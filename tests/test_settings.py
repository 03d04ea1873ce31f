"""One settings object, validated once at every door; ``jobs`` changes no report."""

from __future__ import annotations

import pytest

from resumecheck import InvalidArgument, Settings, verify
from resumecheck.baseline import check_baseline
from resumecheck.cli import main
from resumecheck.fuzz import fuzz
from resumecheck.program import Target
from resumecheck.settings import MIN_STEPS, resume_points
from resumecheck.timing import measure

PLAIN = "fixtures.hostile.programs:PLAIN"


@pytest.mark.parametrize(("field", "value", "why"), [
    ("steps", 1, "steps=1: expected an int >= 2"),
    ("steps", True, "steps=True: expected an int >= 2"),
    ("isolation", "thread", "isolation='thread': expected inprocess or process"),
    ("noise_seeds", 101, "noise_seeds=101: expected an int in 0..100"),
    ("threads", 0, "threads=0: expected an int >= 1"),
    ("jobs", 0, "jobs=0: expected an int >= 1"),
    ("timeout", -1, "timeout=-1: expected seconds > 0, 0"),
    ("timeout", float("inf"), "timeout=inf"),
    ("seed", 1.5, "seed=1.5: expected an int"),
    ("drop", 3, "drop=3: expected 'all', 'none'"),
    ("resume_at", "7", "resume_at='7': expected a step number"),
    ("tolerance", "close", "tolerance='close': expected a Tolerance"),
])
def test_each_field_is_refused_by_name(field, value, why):
    with pytest.raises(InvalidArgument, match=why.replace("(", r"\(").replace(".", r"\.")):
        Settings(**{field: value})


def test_resume_points_are_checked_against_steps_and_resolved_from_the_target():
    with pytest.raises(InvalidArgument, match=r"each resume point must be an int in 1\.\.8"):
        Settings(steps=9, resume_at=[9])
    target = Target(factory=lambda config: None, steps=12, resume_at=(4, 9))
    assert Settings().for_target(target).points == [4, 9]
    assert Settings(steps=10).for_target(Target(factory=lambda c: None, steps=12)).points == [5]
    # (a trial: `--steps 2` named a resume point 8 it never gave, unexplained)
    with pytest.raises(InvalidArgument, match=r"the program's own resume point 9 \(its Target's "
                       r"resume_at, used where none is given\) does not fit in steps=6"):
        Settings(steps=6).for_target(target)
    assert Settings(resume_at=[7, 3]).for_target(target).resume_at == (3, 7)
    with pytest.raises(InvalidArgument, match="steps=1"):
        Settings().for_target(Target(factory=lambda c: None, steps=1))
    assert resume_points(3, MIN_STEPS * 3) == [3]


@pytest.mark.parametrize("door", [
    lambda **kw: verify(PLAIN, **kw),
    lambda **kw: fuzz(PLAIN, **kw),
    lambda **kw: check_baseline(PLAIN, **kw),
])
def test_every_door_refuses_a_thread_isolation_and_one_step(door):
    with pytest.raises(InvalidArgument, match="isolation='thread'"):
        door(isolation="thread")
    with pytest.raises(InvalidArgument, match=r"steps=1: expected an int >= 2"):
        door(steps=1)


def test_timing_and_the_cli_follow_the_same_steps_rule(capsys):
    with pytest.raises(InvalidArgument, match=r"steps=1: expected an int >= 2"):
        measure(PLAIN, steps=1)
    for command in ("run", "fuzz", "baseline", "timing"):
        assert main([command, PLAIN, "--steps", "1"]) == 2
        assert "--steps 1: expected an int >= 2" in capsys.readouterr().err
    assert main(["run", PLAIN, "--jobs", "0"]) == 2
    assert "--jobs 0: expected an int >= 1" in capsys.readouterr().err


def _without_timings(report) -> dict:
    plain = report.to_json()
    plain.pop("environment", None)
    return plain


@pytest.mark.e2e
@pytest.mark.process
def test_the_report_is_the_same_for_any_number_of_jobs():
    kw = dict(steps=6, resume_at=[3], drop=["params", "optimizer"], noise_seeds=2, seed=0,
              isolation="process", check_determinism=False)
    one = verify(PLAIN, jobs=1, **kw)
    two = verify(PLAIN, jobs=2, **kw)
    assert [r.verdict for r in one.runs][0] == "identical" and len(one.runs) == 3
    assert one.noise["band"] is not None and len(one.seed_losses) == 2
    assert _without_timings(one) == _without_timings(two)


def test_the_report_is_the_same_for_any_number_of_jobs_in_process():
    kw = dict(steps=4, resume_at=[2], drop="all", noise_seeds=1, check_determinism=False)
    assert _without_timings(verify(PLAIN, jobs=1, **kw)) == _without_timings(
        verify(PLAIN, jobs=3, **kw))


def test_forked_runs_keep_their_order_and_their_state_and_raise_what_they_raise():
    from resumecheck import engine

    seen: list[int] = []

    def square(i: int) -> int:
        seen.append(i)  # in the child: never seen here
        return i * i

    assert engine.forked_map(square, range(5), 2) == [0, 1, 4, 9, 16]
    assert seen == []

    def refuse(i: int) -> int:
        raise InvalidArgument("item", i, "refused")

    with pytest.raises(InvalidArgument, match="item=1: refused"):
        engine.forked_map(refuse, [1, 2, 3], 2)


def test_a_forked_run_returns_while_a_process_it_started_lives_on():
    """A run's DataLoader workers inherit the pipe its result comes back on and
    keep it open until they notice their parent is gone (seconds): the result
    is read by its length, not waited for to the pipe's end."""
    import os
    import signal

    from resumecheck import engine

    read, write = os.pipe()

    def leave_a_child(i: int) -> int:
        pid = os.fork()
        if pid == 0:  # the grandchild: holds every inherited pipe until killed
            os.close(read)
            signal.pause()
            os._exit(0)
        os.write(write, pid.to_bytes(8, "little"))
        return i + 1

    try:
        assert engine.forked_map(leave_a_child, [1, 2], 2) == [2, 3]
        os.close(write)
        for _ in range(2):
            pid = int.from_bytes(os.read(read, 8), "little")
            os.kill(pid, 0)  # still alive when the results were in
            os.kill(pid, signal.SIGKILL)
    finally:
        os.close(read)


def test_a_set_or_a_comma_list_drops_its_names_together_as_the_cli_does():
    """A trial: a set drawn by component_subsets was refused by verify(drop=...),
    the empty set too, and drop='rng,scheduler' named an unknown component."""
    from resumecheck.settings import Settings

    assert Settings(drop=frozenset({"scheduler", "rng"})).drop == [["rng", "scheduler"]]
    assert Settings(drop=frozenset()).drop == "none"
    assert Settings(drop="rng, scheduler").drop == [["rng", "scheduler"]]
    assert Settings(drop="rng").drop == "rng" and Settings(drop=["rng"]).drop == ["rng"]
    # (trial 403: the README's marker, drop=["rng,hooks"], read as one unknown name)
    assert Settings(drop=["rng, scheduler", "params"]).drop == [["rng", "scheduler"], "params"]
