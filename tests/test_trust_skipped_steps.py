"""A learning rate that first differs a step after the restart, because the
loss scaler skipped the step in between, says so (fixtures/trust/skipped_after_restart.py)."""

from __future__ import annotations

import warnings

from resumecheck import verify
from resumecheck.report import DIVERGED

SPEC = "fixtures.trust.skipped_after_restart:"
FAST = {"noise_seeds": 0, "drop": "none", "check_determinism": False}


def _verify(name: str):
    with warnings.catch_warnings():  # (torch: the scheduler steps after a skipped step)
        warnings.simplefilter("ignore", UserWarning)
        return verify(SPEC + name, **FAST)


def test_a_lost_scheduler_behind_a_skipped_step_says_which_step_was_skipped():
    own = _verify("BUGGY").runs[0]
    assert own.verdict == DIVERGED
    assert (own.first_divergent_step, own.first_divergent_quantity) == (6, "learning rate")
    assert [f.component for f in own.diagnosis] == ["scheduler"]
    assert own.explanation.startswith(
        # (trial 441: the scale that fell after it says which of two causes it was)
        "learning rate differs from step 6 (step 5, after the restart, stepped no optimizer "
        "in either run (the loss scaler skipped it on an overflow: the scale fell after it): a "
        "step whose optimizer does not step reads no learning rate, so whether the rate already "
        "differed there is not seen) (its loss is alike: a step computes its loss before its "
        "optimizer steps with the rate; the loss differs from step 7); "
    ), own.explanation


def test_a_micro_batch_without_a_loss_scaler_is_not_said_to_be_skipped_by_one():
    """A trial's accumulation over micro-batches, no GradScaler: the steps in
    between were said to be steps "the loss scaler skipped"."""
    own = _verify("ACCUMULATES_BUGGY").runs[0]
    assert own.verdict == DIVERGED
    # (the optimizer's load puts its rate back; the fresh scheduler's first step
    # at 6 sets another, which step 8 reads)
    assert (own.first_divergent_step, own.first_divergent_quantity) == (8, "learning rate")
    assert own.explanation.startswith(
        "learning rate differs from step 8 (steps 5 and 7, after the restart, stepped no "
        "optimizer in either run (micro-batches of gradient accumulation, or steps the "
        "program skips): a step whose optimizer does not step reads no learning rate, so whether "
        "the rate already differed there is not seen); "
    ), own.explanation
    assert "loss scaler" not in own.explanation


def test_its_twin_resumes_through_the_skipped_step():
    report = _verify("CORRECT")
    assert report.equivalent, report.render()
    assert "stepped no optimizer" not in report.render()


def test_a_scale_restored_otherwise_says_the_skipped_step_was_stepped():
    """Trial 606: a scaler made anew at the load; the restart stepped the step
    the uninterrupted run skipped on an overflow, and the why said only that
    the scale differed."""
    own = _verify("SCALE_LOST").runs[0]
    assert (own.first_divergent_step, own.first_divergent_quantity) == (5, "loss scale")
    assert [f.component for f in own.diagnosis] == ["scaler"]
    assert own.divergence_detail == (
        "loss scale of step 5: 16.0, expected 256.0; the uninterrupted run's loss scaler "
        "skipped step 5 on an overflow, which this run stepped"), own.divergence_detail
