"""A blind spot that ends otherwise says why no step read it, truly (trial
167: a GradScaler beside bfloat16 autocast, whose growth tracker the
uninterrupted run counted from 5 to 16, read "the uninterrupted run did not
change it after there")."""

from __future__ import annotations

import pytest

from resumecheck import verify

pytestmark = pytest.mark.e2e


def test_a_scaler_that_never_scales_ends_otherwise_in_a_private_entry_and_says_so():
    report = verify("fixtures.trust.scaler_at_full_precision:TARGET", drop=["scaler"],
                    noise_seeds=0)
    assert report.equivalent
    [dropped] = [r for r in report.runs if r.dropped == ["scaler"]]
    assert dropped.verdict == "identical" and dropped.blind_spot
    assert ("the run ends with scaler otherwise than the uninterrupted run (only private "
            "entries of it differ, `_growth_tracker`: state its class keeps for itself, which "
            "no step here read)") in dropped.explanation
    assert "did not change it after there" not in dropped.explanation


def test_one_the_uninterrupted_run_left_alone_after_the_resume_point_still_says_that():
    from tests.test_trust_undeclared import NUMBERS  # (a best loss after its last evaluation)

    report = verify(NUMBERS + "DECLARED", steps=9, resume_at=8, drop="best", noise_seeds=0)
    [dropped] = [r for r in report.runs if r.dropped == ["best"]]
    assert dropped.blind_spot, dropped.explanation
    assert ("the run ends with best otherwise than the uninterrupted run (no step after the "
            "restart read it here, and the uninterrupted run did not change it after there)"
            in dropped.explanation), dropped.explanation
