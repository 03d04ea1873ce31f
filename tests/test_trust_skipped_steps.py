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
        "learning rate differs from step 6 (step 5, after the restart, was one the loss "
        "scaler skipped in both runs: a skipped step reads no learning rate); "), own.explanation


def test_its_twin_resumes_through_the_skipped_step():
    report = _verify("CORRECT")
    assert report.equivalent, report.render()
    assert "skipped in both runs" not in report.render()
