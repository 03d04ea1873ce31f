"""A position of the program's own whose state_dict() keeps its generator
after the epoch's shuffle (trial 190): the full resume departs on it, and no
line says that a checkpoint that loses its fields resumes alike at the resume
point; its correct twin is told so (fixtures/trust/bucket_sampler.py)."""

from __future__ import annotations

from resumecheck import verify

SPEC = "fixtures.trust.bucket_sampler:"
QUICK = {"noise_seeds": 0, "check_determinism": False}


def test_the_fields_of_a_position_the_full_resume_departs_on_are_not_said_to_resume_alike():
    lost = verify(SPEC + "SAVES_AFTER_SHUFFLE", **QUICK)
    assert not lost.equivalent
    assert [f.component for f in lost.full_resume.diagnosis] == ["data_cursor"]
    assert not any(line.startswith("of `data_cursor`") for line in lost.not_checked), \
        lost.not_checked
    kept = verify(SPEC + "CORRECT", **QUICK)
    assert kept.equivalent
    [said] = [line for line in kept.not_checked if line.startswith("of `data_cursor`")]
    assert "are at step 2 as the restore without `data_cursor` leaves them" in said
    # (trial 190 read "a tensor of 5056 values there, a tensor of 5056 values at the end"
    # as alike: worded as a build's line words it)
    assert "`start` (a tensor of 5056 values there, other values at the end)" in said
