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
    # (trial 165: the test's failure read "first divergence: step 16, state of best_val",
    # as if a step had departed there)
    from resumecheck.assertions import describe_failure

    assert (f"first divergence: state of best_val at the end (after step {own.first_divergent_step}"
            ": every step matched)") in describe_failure(report)
    # (trial 582: "the largest |Δ| 0.0882 in state of callbacks" beside a count 5 against 12)
    assert ("in state of best_val (of its floating-point entries: a count is compared "
            "exactly)") in describe_failure(report)


def test_its_twin_resumes_and_dropping_the_best_so_far_shows_it_matters():
    report = verify(best_so_far.CORRECT, drop=["best_val"], noise_seeds=0)
    assert report.equivalent, report.render()
    (dropped,) = [r for r in report.runs if r.dropped]
    assert dropped.verdict == "diverged" and not dropped.blind_spot
    assert dropped.first_divergent_quantity == "state of best_val"
    assert report.blind_spots == []


def test_a_best_loss_lost_after_its_last_evaluation_is_a_gap_that_two_restarts_show():
    """Restarted after the last evaluation, a best loss the load forgets is
    read by no step: a latent gap, said to end otherwise. With a first restart
    before an evaluation that sets it right, the steps between change it in
    the uninterrupted run, and the same end counts: fuzz finds it so (trial
    146: judged from the last restart alone, as trial 145 asked for the two
    schedules to agree, fuzz passed a load that forgets it)."""
    report = verify(best_heals.BUGGY, resume_at=[9], drop="none", noise_seeds=0)
    own = report.full_resume
    assert report.equivalent and own.verdict == "identical"
    assert own.latent_gaps == ["best_val"] and own.latent_ended == ["best_val"]
    assert "a second restart after this one, may show it" in own.explanation
    report = verify(best_heals.BUGGY, resume_at=[6, 9], drop="none", noise_seeds=0)
    own = report.full_resume
    assert not report.equivalent
    assert own.verdict == "diverged" and own.first_divergent_quantity == "state of best_val"
    from resumecheck.fuzz import fuzz

    found = fuzz(best_heals.BUGGY, max_examples=20)
    assert found.failure is not None
    assert found.failure.first_divergent_quantity == "state of best_val"
    # (it says nothing of where its epochs end; a trial read "no epoch boundary
    # before its last step" as saying it declares later ones)
    assert not found.epochs_declared and "does not say where its epochs end" in found.render()
