"""A loss scaler made anew after the load, where no gradient overflows: only the
loss scale differs, and the why says that the weights match
(fixtures/trust/scale_alone.py)."""

from __future__ import annotations

from resumecheck import verify

SPEC = "fixtures.trust.scale_alone:"
FAST = {"noise_seeds": 2, "drop": "none", "check_determinism": False}


def test_a_loss_scale_alone_apart_says_that_every_step_s_weights_match():
    """Trial 890: a GradScaler made anew after the load, under bf16, read "loss
    scale differs from step 22 ... silent but different", and the user took the
    weights to have departed; they matched bit for bit for 700 steps."""
    report = verify(SPEC + "BUGGY", **FAST)
    full = report.full_resume
    assert not report.equivalent and full.first_divergent_quantity == "loss scale"
    assert "only the loss scale differs: every step's loss, gradients and parameters match " \
        "bit for bit" in full.explanation, full.explanation
    assert "scaler" in {f.component for f in full.diagnosis}
    assert verify(SPEC + "CORRECT", **FAST).equivalent


def test_a_scale_that_makes_a_step_skip_is_not_said_to_leave_the_weights_alike():
    """The clause is of runs whose steps differ in the scale alone: a scaler
    re-created where it skips a step changes the weights (class 3)."""
    report = verify("fixtures.bugs.class03_scaler_recreated:BUGGY", **FAST)
    assert "only the loss scale differs" not in report.full_resume.explanation
