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
