"""Every failure fuzz prints reproduces through its printed command (issue 13, section 1)."""

import pytest

from resumecheck import verify
from resumecheck.fuzz import fuzz

from fixtures.bugs import class01_scheduler_not_saved as c01
from fixtures.bugs import class11_cursor_dropped as c11
from fixtures.trust import relative_cursor
from tests.fuzz_runs import run_printed

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("isolation", ["inprocess", pytest.param("process", marks=pytest.mark.process)])
def test_a_save_relative_to_the_last_resume_fails_with_a_second_resume(isolation):
    # (one resume too: the check also saves right after its load, and a restart from
    # that save, a second resume, departs)
    schedules = [([1], False), ([1, 4], False)]
    if isolation == "inprocess":
        schedules.append(([4], False))
    for schedule, equivalent in schedules:
        report = verify(relative_cursor.BUGGY, resume_at=schedule, drop="none", noise_seeds=0,
                        isolation=isolation)
        assert report.equivalent == equivalent, (schedule, report.render())


def test_fuzz_finds_the_second_resume_and_its_command_gives_the_same_verdict(capsys):
    # (the default point first, with a save right after its load as `run` tries it:
    # that save is the second resume the bug needs)
    result = fuzz(relative_cursor.BUGGY)
    assert result.found, result.summary()
    run = result.failure
    assert result.unreproduced == [] and run.lost_on_resave() == ["data_cursor"]
    assert [(f.component, f.status) for f in run.diagnosis] == [("data_cursor", "lost_on_resave")]
    code, report = run_printed(run.reproduce, capsys)
    assert code == 1 and report["equivalent"] is False
    full = report["runs"][0]
    assert (full["verdict"], full["first_divergent_step"], full["first_divergent_quantity"]) == (
        run.verdict, run.first_divergent_step, run.first_divergent_quantity)
    assert [(f["component"], f["status"]) for f in full["diagnosis"]] == [
        ("data_cursor", "lost_on_resave")]


def test_its_twin_yields_no_failure():
    result = fuzz(relative_cursor.CORRECT, max_examples=20)
    assert not result.found and result.unreproduced == [], result.render()
    assert result.fast_start  # first halves were replayed once and reused


@pytest.mark.process
def test_in_fresh_interpreters_a_single_resume_fails_only_through_a_save_right_after_its_load():
    # The default resume point comes first: with a start from the engine's
    # capture, save() would have written a position "since the last resume". Its
    # steps all match; what fails it is the save right after its load (a second
    # resume), tried on the default schedule as `run` tries it, and reproduced.
    result = fuzz(relative_cursor.BUGGY, isolation="process", max_examples=3, max_interruptions=1)
    assert result.found and result.unreproduced == [], result.render()
    run = result.failure
    assert run.verdict == "identical" and run.lost_on_resave() == ["data_cursor"], result.render()


@pytest.mark.parametrize(
    ("target", "max_examples"), [(c01.BUGGY, 3), (c11.BUGGY, 3)], ids=["class01", "class11"])
def test_every_failure_fuzz_prints_reproduces_through_its_command(target, max_examples, capsys):
    # hypothesis is seeded (--seed, default 0): these budgets find each bug. Classes 14
    # and 15 at their default resume point: tests/test_fuzz.py, on its default-budget search.
    result = fuzz(target, max_examples=max_examples, budget=60)
    assert result.found and result.unreproduced == [], result.render()
    run = result.failure
    assert f"reproduce: {run.reproduce}" in result.render()
    code, report = run_printed(run.reproduce, capsys)
    full = report["runs"][0]
    assert code == 1
    assert full["resume_at"] == run.resume_at
    assert (full["verdict"], full["first_divergent_step"]) == (run.verdict, run.first_divergent_step)
    assert [(f["component"], f["status"]) for f in full["diagnosis"]] == [
        (f.component, f.status) for f in run.diagnosis]


def test_fuzz_says_when_the_declared_state_is_incomplete():
    from fixtures.trust import lazy_loader

    result = fuzz(lazy_loader.BUGGY, max_examples=2)
    assert result.found and result.unreproduced == []
    notice = result.declared_state_notice
    assert notice.startswith("the restart draws from a random stream"), notice
    assert "WARNING: the restart draws from a random stream" in result.render()
    assert "Ablations" not in notice  # (fuzz runs none)
    assert result.to_json()["declared_state_notice"] == result.declared_state_notice


def test_a_failure_at_the_default_point_shrinks_to_the_earliest_point_that_fails():
    """fixtures/trust/earliest.py: fails from a resume at 3 on, default point 7.
    Found at 7 first (an explicit example, which hypothesis does not shrink),
    it is reported at 3, and called minimal only because every earlier point
    was tried."""
    from fixtures.trust import earliest

    result = fuzz(earliest.BUGGY, max_examples=5)
    assert result.found and result.failure.resume_at == [3], result.summary()
    assert result.minimal is True
    assert result.summary().startswith("minimal failing schedule: resume at 3")
    assert verify(earliest.BUGGY, resume_at=[2], drop="none", noise_seeds=0).equivalent
    assert not fuzz(earliest.CORRECT, max_examples=5).found
    # from a default schedule of two resume points: one of them alone fails
    two = fuzz(earliest.BUGGY_TWO, max_examples=5)
    assert two.failure.resume_at == [3] and two.minimal is True, two.summary()


def test_a_failure_not_shown_minimal_is_not_called_minimal():
    from dataclasses import replace

    from resumecheck.fuzz import FuzzResult
    from resumecheck.report import RunResult

    failure = RunResult(dropped=[], resume_at=[7], checkpoint="program", verdict="diverged")
    result = FuzzResult(target="t", steps=10, seed=None, max_interruptions=2, examples=3,
                        distinct_schedules=3, failure=failure, minimal=False)
    assert result.summary().startswith(
        "failing schedule: resume at 7, found after 3 examples tried")
    assert "not shown to be minimal: the time budget ran out" in result.summary()
    assert replace(result, minimal=True).summary().startswith("minimal failing schedule")


def test_fuzzs_warning_names_what_is_not_compared_and_points_at_the_lines_it_prints():
    """A trial: fuzz's WARNING said "the `not compared` lines name ..." though
    fuzz printed no such lines; it prints them now, below the failing schedule,
    and trial 152 was told to run `resumecheck run` to see lines printed there."""
    result = fuzz("fixtures.trust.annealed_temperature:FORGETS", max_examples=2,
                  max_interruptions=1)
    notice = result.declared_state_notice
    assert notice is not None and "`temperature`" in notice, notice
    assert ("the `not compared` lines name what the program keeps outside their states: "
            "`temperature`") in notice
    assert "its reproduce command) lists them" not in notice
    assert any(line.startswith("not compared: temperature")
               for line in result.render().splitlines())
    assert "reproduce: resumecheck run fixtures.trust.annealed_temperature:FORGETS" in \
        result.render()


def test_fuzz_fails_a_schedule_whose_save_right_after_the_load_departs(capsys):
    """A trial: `run` said the resume was not equivalent (a save right after the
    load, and a restart from it, depart), where fuzz, passing every schedule
    whose steps matched, found nothing at that resume point."""
    from fixtures.trust import stale_snapshot

    result = fuzz(stale_snapshot.STALE, max_examples=3)
    assert result.found, result.summary()
    run = result.failure
    assert run.verdict == "identical" and run.lost_on_resave() == ["data_cursor"]
    assert ", but a save right after the load departs" in result.render()
    # (trial 839: told a single resume point might show it; every one was exact, two departed)
    k = run.resume_at[0]
    assert (f"what fails it is a save right after your load(), whose restart departs (lost on "
            f"resave); two resumes with steps between (resumecheck run --resume-at {k},K2, K2 a "
            f"few steps after {k}) show whether a save after steps") in result.render(), \
        result.render()
    assert "--resume-at K checks one" not in result.render()
    code, report = run_printed(run.reproduce, capsys)
    assert code == 1 and report["equivalent"] is False
    assert fuzz(stale_snapshot.CORRECT, max_examples=3).failure is None


def test_fuzz_tries_the_default_schedule_with_a_save_right_after_its_load_as_run_does():
    """A trial: `run` failed a resume point that fuzz, trying it first, passed."""
    from tests import programs

    result = fuzz(programs.SNAPSHOT_FORGOTTEN, max_examples=3)
    # found at the default point 4; shrunk with the same save tried on each candidate
    # (a trial: without it, 4 was called minimal where `run --resume-at 1` fails alike)
    assert result.failure is not None and result.failure.resume_at == [1] and result.minimal
    assert result.failure.lost_on_resave() == ["data_cursor"]
    assert fuzz(programs.SNAPSHOT, max_examples=3).failure is None


def test_a_shrink_keeps_a_failure_that_departs_at_a_step_where_the_one_found_did():
    """Trial 168: a plateau scheduler lost at the default point skipped a rate
    cut; the shrink moved it to step 1, where only the scheduler's step count
    ended otherwise, and fuzz said nothing in the training loss shows it."""
    from fixtures.trust import plateau_cut

    found = fuzz(plateau_cut.BUGGY, max_examples=5)
    assert found.failure is not None and found.minimal
    assert found.failure.resume_at == [5], found.failure.resume_at
    assert found.failure.first_divergent_quantity == "learning rate"
    # the earlier schedules that fail in their end state alone are said beside "minimal"
    # (trial 250 read "minimal" where an earlier one failed)
    assert found.failing_otherwise and all(
        t["how"] == "end state alone" and t["resume_at"][-1] < 5
        for t in found.failing_otherwise), found.failing_otherwise
    assert ("; minimal among the schedules that fail as it does: resuming at 1, at 2, at 3 "
            "and at 4 fail otherwise (in their end state alone)" in found.summary()), \
        found.summary()
    assert fuzz(plateau_cut.CORRECT, max_examples=5).failure is None


def test_a_found_failure_that_names_nothing_is_given_the_default_points_lines():
    """Trial 183: fuzz shrank a Trainer's lost collator generator to `resume at 1`,
    where nothing could be named, and printed no cause; at the default point
    `run` names it. Which found failures are given the default point's lines."""
    from resumecheck.fuzz import FuzzResult, _unnamed
    from resumecheck.report import Finding, RunResult

    def found(at, diagnosis=(), undeclared=()):
        result = FuzzResult(target="t", steps=16, seed=None, max_interruptions=2,
                            undeclared=list(undeclared))
        result.failure = RunResult(dropped=[], resume_at=at, verdict="diverged",
                                   diagnosis=list(diagnosis))
        return result

    assert _unnamed(found([1]), (8,))
    assert not _unnamed(found([8]), (8,))  # (the default point's lines are its own)
    assert not _unnamed(found([1], diagnosis=[Finding("rng", "differs", step=1)]), (8,))
    assert not _unnamed(found([1], undeclared=["gen (a torch.Generator ...)"]), (8,))
    assert not _unnamed(FuzzResult(target="t", steps=16, seed=None, max_interruptions=2), (8,))
