"""A full resume whose data departs at the first step of a new epoch, every
step before it matching, is said to read another order for that epoch
(fixtures/trust/order_saved_not_generator.py)."""

from __future__ import annotations

from resumecheck import verify
from resumecheck.report import DIVERGED

SPEC = "fixtures.trust.order_saved_not_generator:"
FAST = {"noise_seeds": 0, "drop": "none", "check_determinism": False}
NEW_EPOCH = ("step 9 is the first of a new epoch, and every step from the restore at 4 until "
             "then read what the uninterrupted run read: the new epoch's order differs")


def test_a_generator_lost_with_the_order_saved_departs_at_the_next_epoch_and_says_so():
    report = verify(SPEC + "LOSES_GENERATOR", **FAST)
    own = report.full_resume
    assert own.verdict == DIVERGED
    assert (own.first_divergent_step, own.first_divergent_quantity) == (
        9, "data (the samples consumed)")
    assert NEW_EPOCH in own.explanation, own.explanation
    assert [u.split(" (")[0] for u in report.undeclared] == ["shuffle"]


def test_its_twin_that_keeps_the_generator_resumes_and_a_resume_at_the_boundary_says_nothing():
    assert verify(SPEC + "KEEPS_GENERATOR", **FAST).equivalent
    # resumed at the epoch's end, step 9 is the first after the restore: nothing to add
    own = verify(SPEC + "LOSES_GENERATOR", **{**FAST, "resume_at": 8}).full_resume
    assert own.first_divergent_step == 9
    assert "first of a new epoch" not in own.explanation
