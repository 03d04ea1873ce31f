"""Trial 838: a memory bank's pointer, a plain tensor attribute the program's
own save() left out, vanished from the report resumed at two points: at the
first it was as built, and the engine's own restart, which departed right after
that restore, was taken to bring it back."""

from __future__ import annotations

from resumecheck import verify


def test_a_pointer_as_built_at_the_first_restore_and_lost_at_the_second_is_named():
    from fixtures.trust import queue_pointer

    report = verify(queue_pointer.TARGET, drop="none", noise_seeds=0, check_determinism=False)
    own, engine = report.full_resume, report.engine_resume
    assert (own.verdict, own.first_divergent_step) == ("diverged", 10), own.explanation
    assert (engine.verdict, engine.first_divergent_step) == ("diverged", 7), engine.explanation
    [line] = [u for u in report.undeclared if u.startswith("params.queue_ptr ")]
    assert "your own resume held it otherwise right after your load() at step 8 and after " \
        "step 9, before it departed from the uninterrupted run at step 10: your checkpoint " \
        "loses it" in line, line


def test_a_pointer_that_cycles_back_to_its_build_value_is_said_to_cycle():
    """Trial 866: a queue pointer that wrapped every 4 steps, as built at the resume
    point and at the end, was told "a resume point after the run changes it shows
    whether it comes back"; the trial tried a later one, as built there too."""
    from fixtures.trust import queue_pointer
    from resumecheck.phrases import AS_BUILT_CYCLING

    report = verify(queue_pointer.AT_SIX, drop="none", noise_seeds=0,
                    check_determinism=False)
    [line] = [u for u in report.undeclared if u.startswith("params.queue_ptr ")]
    assert AS_BUILT_CYCLING.format(at="step 6") in line, line
    assert "a resume point after the run changes it" not in line, line
    # what the run changed and did not bring back to its build's value keeps the words
    [queue] = [u for u in report.undeclared if u.startswith("params.queue ")]
    assert "cycles" not in queue, queue
