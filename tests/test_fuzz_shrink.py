"""The shrink of a failing schedule, judged on made-up runs (no program runs).

A fake checker says which schedules fail; the shrink must end at the
earliest one in the sense docs/REPORT.md gives "minimal"."""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace

from resumecheck.fuzz import _earliest
from resumecheck.report import LOST_ON_RESAVE, NOT_CAUSE, Finding, RunResult


class _Checker:
    """Fails the schedules ``fails`` says; counts what it was asked."""

    jobs = 1
    segment = SimpleNamespace(boundaries={})  # (the reference's, as a Checker has it)

    def __init__(self, fails: Callable[[list[int]], bool]) -> None:
        self.fails = fails
        self.asked: list[list[int]] = []

    def check(self, schedule: list[int], resave: bool = False) -> RunResult:
        self.asked.append(schedule)
        return RunResult(dropped=[], resume_at=schedule,
                         verdict="diverged" if self.fails(schedule) else "identical")

    def map(self, fn, items):
        return [fn(item) for item in items]


class _ResaveChecker(_Checker):
    """Fails every schedule, but only where a save right after the first load
    is tried too (a skip count that the load resets: the restart from that
    save reads the wrong batches), as the default schedule is tried."""

    def check(self, schedule: list[int], resave: bool = False) -> RunResult:
        self.asked.append(schedule)
        if not resave:
            return RunResult(dropped=[], resume_at=schedule, verdict="identical")
        return RunResult(dropped=[], resume_at=schedule, verdict="identical", diagnosis=[
            Finding("data_cursor", "0, expected 3", status=LOST_ON_RESAVE)])


def _shrunk(found: list[int], fails: Callable[[list[int]], bool]) -> list[int]:
    checker = _Checker(fails)
    run, ended = _earliest(checker, checker.check(found), lambda _: None,  # type: ignore[arg-type]
                           [])
    assert ended
    return run.resume_at


def _in_one_epoch(schedule: list[int], per_epoch: int = 5) -> bool:
    """Two restarts within one epoch (a skip count reset by the first)."""
    return len(schedule) == 2 and (schedule[0] - 1) // per_epoch == (schedule[1] - 1) // per_epoch


def test_two_restarts_in_one_epoch_slide_to_the_first_epoch_together():
    # (a trial: 8,9 was reported minimal; neither point moves alone, 1,2 fails too)
    assert _shrunk([8, 9], _in_one_epoch) == [1, 2]


def test_the_shift_keeps_the_gap_and_then_points_move_alone():
    # fails where the second restart is 3 after the first, the first anywhere
    assert _shrunk([9, 12], lambda s: len(s) == 2 and s[1] - s[0] == 3) == [1, 4]
    # fails with any restart at or after 7: one point, the earliest
    assert _shrunk([8, 12], lambda s: any(k >= 7 for k in s)) == [7]


def test_a_single_point_moves_to_the_earliest_that_fails():
    assert _shrunk([12], lambda s: s[-1] >= 5) == [5]


def test_a_failure_only_a_save_after_the_load_shows_is_shrunk_with_that_save_tried():
    # (a trial: found at the default point 9 through the save right after its load,
    # "minimal", where 1 fails the same way: the candidates were tried without it)
    checker = _ResaveChecker(lambda s: True)
    run, ended = _earliest(checker, checker.check([9], resave=True),  # type: ignore[arg-type]
                           lambda _: None, [])
    assert ended and run.resume_at == [1] and run.lost_on_resave() == ["data_cursor"]


def test_a_minimal_failure_names_an_earlier_schedule_that_failed_outright():
    """Trial 263: a resume at an epoch's end that crashed (EarlyStopping found no
    metric) was said to fail "blaming other components"."""
    from resumecheck.fuzz import FuzzResult

    result = FuzzResult(target="t", steps=12, seed=None, max_interruptions=2, minimal=True,
                        failing_otherwise=[{"resume_at": [5], "how": "failed"}])
    result.failure = RunResult(dropped=[], resume_at=[6], verdict="diverged")
    assert result.summary().endswith(
        "; minimal among the schedules that fail as it does: resuming at 5 fails otherwise (a "
        "step or a restore raising: see `resumecheck run` of it)"), result.summary()


def test_an_earlier_schedule_that_names_no_component_is_not_said_to_blame_others():
    """Trial 392: resuming at 3, whose report named no declared component, was
    said to fail "blaming other components"."""
    from resumecheck.fuzz import FuzzResult

    result = FuzzResult(target="t", steps=12, seed=None, max_interruptions=2, minimal=True,
                        failing_otherwise=[{"resume_at": [3], "how": "no component"},
                                           {"resume_at": [4], "how": "other components"}])
    result.failure = RunResult(dropped=[], resume_at=[5], verdict="diverged")
    assert result.summary().endswith(
        "; minimal among the schedules that fail as it does: resuming at 3 and at 4 fail "
        "otherwise (blaming other components or naming no declared component: state the "
        "components do not declare may be the same fault's, `resumecheck run` of it names what "
        "it keeps outside them)"), \
        result.summary()
    # (every way the shrink says a schedule failed otherwise is one the schema knows)
    import json
    from importlib import resources

    schema = json.loads(resources.files("resumecheck").joinpath("schemas/fuzz-1.json")
                        .read_text())
    how = schema["properties"]["failing_otherwise"]["items"]["properties"]["how"]
    assert set(how["enum"]) == {"end state alone", "lost on resave", "other components",
                                "no component", "failed", "engine departs", "epoch again"}
    from resumecheck.fuzz import _failing_otherwise

    for way in how["enum"]:  # (each is said in words: trial 694's was missing from both)
        assert _failing_otherwise([{"resume_at": [1], "how": way}]).strip(), way


def test_a_failure_whose_components_no_rerun_decided_is_not_traded_for_another_cause():
    """Trial 349: the first failure named the datamodule, which its rerun left
    undecided (its own load loses the stage again); the shrink took an earlier
    epoch's end where only Lightning's counters were named, and the bug it had
    found left the report. What an undecided failure names still counts; a
    failure that names nothing still shrinks to any."""
    from resumecheck.fuzz import _alike

    def failing(at: int, *named: str, status=NOT_CAUSE) -> RunResult:
        return RunResult(dropped=[], resume_at=[at], verdict="diverged",
                         first_divergent_step=at + 1, first_divergent_quantity="loss",
                         diagnosis=[Finding(n, "differs", step=at, status=status) for n in named])

    found = failing(9, "datamodule")
    assert not _alike(failing(6, "data_cursor"), found)
    assert _alike(failing(6, "datamodule", "data_cursor"), found)
    assert _alike(failing(6, "data_cursor"), failing(9))  # (it named nothing)
    # (one it blamed: a lead or a confirmed cause, as before)
    assert not _alike(failing(6, "datamodule"), failing(9, "scheduler", status=None))
    assert _alike(failing(6, "scheduler", status=None), failing(9, "scheduler", status=None))
