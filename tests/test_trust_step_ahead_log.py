"""A log of evaluations that a step counter restored one ahead moves is not
said lost by a checkpoint that kept it (fixtures/trust/step_ahead_log.py)."""

from __future__ import annotations

import pytest

from resumecheck import verify

from fixtures.trust import step_ahead_log

pytestmark = pytest.mark.e2e


def test_one_restore_names_the_declared_counter_the_steps_read():
    report = verify(step_ahead_log.BUGGY, drop="none", noise_seeds=0)
    assert not report.equivalent
    (log,) = report.undeclared
    assert log.startswith("val_history (list: 4 numbers")
    assert "so the load is not what lost it" in log
    assert log.endswith("from state they read: global_step, which differed right after the "
                        "load (see the diagnosis), or other state that is not compared")


def test_at_a_later_restore_what_an_earlier_one_moved_is_not_blamed_on_the_checkpoint():
    report = verify(step_ahead_log.BUGGY, resume_at=[4, 10], drop="none", noise_seeds=0)
    (log,) = report.undeclared
    assert "your checkpoint loses it" not in log and "your checkpoint may lose it" not in log
    assert ("held it otherwise right after your load() at step 10, but declared state differed "
            "after an earlier restore, which the steps since read: global_step (at the restore "
            "at 4)") in log
    assert "your checkpoint loses" not in report.render()


def test_a_stream_the_program_set_right_itself_is_not_what_the_steps_read():
    """A trial (Lightning, 8,13): a loader's generator put back by the program
    in the step after the restore at 8 was offered as the earlier difference
    that the steps since read."""
    from resumecheck.report import Finding, RunResult
    from resumecheck.verdict import _differed_before

    righted = Finding("rng", "generator 'loader' differs from the uninterrupted run's at "
                             "step 8, which the program set right itself during step 9", step=8)
    idle = Finding("rng", "Python random stream differs from the uninterrupted run's at "
                          "step 8, which the uninterrupted run held the same from it to its end",
                  step=8)
    counter = Finding("global_step", "9, expected 8", step=8, status="confirmed")
    run = RunResult(dropped=[], resume_at=[8, 13], verdict="diverged", checkpoint="program",
                    diagnosis=[righted, idle, counter])
    assert _differed_before(run, 13) == [("global_step", 8)]
