"""A stream as the build left it when the first step after a restore begins,
and a draw from the uninterrupted run's when it ends, was set during that step
(a callback as a batch starts), not left unrestored (trial 180: a Lightning
callback's restore, one draw behind, read "it was not restored")
(fixtures/trust/stream_set_at_batch_start.py)."""

from __future__ import annotations

from resumecheck import verify

FAST = {"noise_seeds": 0, "drop": "none", "check_determinism": False}


def test_a_stream_set_as_the_batch_starts_is_said_set_during_the_step():
    report = verify("fixtures.trust.stream_set_at_batch_start:AT_EPOCH_END", **FAST)
    own = report.full_resume
    assert not report.equivalent and own.first_divergent_step == 5
    [lead] = [o.detail for o in own.stream_offsets if o.stream == "torch"]
    assert lead.startswith(
        "torch CPU stream at the start of step 5, the first after the restore at 4, is where the "
        "uninterrupted run's was at the start of step 1, as the build left it; at the start of "
        "step 6 it is 1 draw behind the uninterrupted run's: something set it during step 5, "
        "after the step began"), lead
    assert "it was not restored" not in own.explanation
