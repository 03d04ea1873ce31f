"""A stream one draw off that no step reads, beside the lost state that is
the cause (trial 782): where the engine's own full resume, which puts the
stream back, departs step for step as the program's own, the stream is not
the cause, and the only `diagnosis:` line no longer reads as a lead."""

import pytest

from resumecheck import verify

from fixtures.trust import unread_stream

pytestmark = pytest.mark.e2e


def test_a_stream_the_engines_resume_puts_right_to_no_change_is_not_the_cause():
    report = verify(unread_stream.BUGGY, drop="none", noise_seeds=0, check_determinism=False)
    own, engine = report.runs
    assert (own.verdict, engine.verdict) == ("diverged", "diverged")
    assert own.first_divergent_step == engine.first_divergent_step == 4
    assert [(f.component, f.status) for f in own.diagnosis] == [("rng", "not_cause")], \
        report.render()
    assert ("diagnosis: rng: torch CPU stream differs from the uninterrupted run's at step 3 "
            "(differs; put right alone, the run departs no later)") in report.render()
    assert any(u.startswith("place (int: ") for u in report.undeclared), report.undeclared


def test_its_twin_that_keeps_both_resumes():
    report = verify(unread_stream.CORRECT, drop="none", noise_seeds=0, check_determinism=False)
    assert report.equivalent, report.render()
