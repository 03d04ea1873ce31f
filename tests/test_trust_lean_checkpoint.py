"""A checkpoint that keeps a model's parameters alone says the buffers it lost
are as a fresh build makes them (fixtures/trust/lean_checkpoint.py; trials 752, 753)."""

from __future__ import annotations

from resumecheck import verify

SPEC = "fixtures.trust.lean_checkpoint:"
FAST = {"drop": "none", "noise_seeds": 0, "check_determinism": False}


def test_buffers_a_lean_checkpoint_lost_are_said_to_be_a_fresh_builds():
    own = verify(SPEC + "LEAN", **FAST).full_resume
    [finding] = own.diagnosis
    assert finding.component == "params" and finding.detail.endswith(
        "; each entry that differs is as a fresh build makes it: your checkpoint leaves them "
        "out, or your load does not set them"), finding.detail
    assert verify(SPEC + "KEEPS_BUFFERS", **FAST).equivalent
