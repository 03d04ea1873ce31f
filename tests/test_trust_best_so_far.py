"""A component the uninterrupted run leaves alone after the resume point is
unused there only if the resumed run leaves it alone too (a trial: a best
held-out loss that its load left at infinity was called a latent gap, the
resume EQUIVALENT, and `drop best_val` a blind spot)."""

from __future__ import annotations

import pytest

from resumecheck import verify

from fixtures.trust import best_heals, best_so_far

pytestmark = pytest.mark.e2e


def test_a_best_so_far_left_unrestored_ends_otherwise_and_is_blamed():
    report = verify(best_so_far.BUGGY, drop="none", noise_seeds=0)
    own = report.full_resume
    assert not report.equivalent
    assert own.verdict == "diverged" and own.first_divergent_quantity == "state of best_val"
    assert "best_val at the end: 1.20116, expected 1.09314" in own.divergence_detail
    (finding,) = [f for f in own.diagnosis if f.component == "best_val"]
    assert finding.status == "confirmed" and finding.detail.startswith("inf, expected 1.0931")
    assert own.latent_gaps == []


def test_its_twin_resumes_and_dropping_the_best_so_far_shows_it_matters():
    report = verify(best_so_far.CORRECT, drop=["best_val"], noise_seeds=0)
    assert report.equivalent, report.render()
    (dropped,) = [r for r in report.runs if r.dropped]
    assert dropped.verdict == "diverged" and not dropped.blind_spot
    assert dropped.first_divergent_quantity == "state of best_val"
    assert report.blind_spots == []


def test_a_best_loss_set_right_after_one_restart_and_lost_at_the_last_ends_as_that_last_alone():
    """Trial 145: lost at a first restart, set right by the next evaluation,
    lost again at a last restart that no evaluation follows, the same
    difference at the end was a failure with both restarts and a latent gap
    with the last alone (and fuzz shrank to both)."""
    for schedule in ([9], [6, 9]):
        report = verify(best_heals.BUGGY, resume_at=schedule, drop="none", noise_seeds=0)
        own = report.full_resume
        assert report.equivalent, (schedule, report.render())
        assert own.verdict == "identical" and own.latent_gaps == ["best_val"], schedule
        assert own.latent_ended == ["best_val"], schedule  # (said: it ends otherwise)
