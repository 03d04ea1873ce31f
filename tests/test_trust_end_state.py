"""A run whose every step matches and whose end state does not: the report
says how the state ends, gives figures only where something that differs
has a magnitude, and does not put the difference "within seed-to-seed
noise" when the loss never differed (``fixtures/trust/end_state_only.py``:
a ReduceLROnPlateau left out of the checkpoint, its patience never used up)."""

from __future__ import annotations

import pytest

from resumecheck import verify
from resumecheck.report import DIVERGED, IDENTICAL


def test_a_state_that_differs_only_at_the_end_is_described_there():
    report = verify("fixtures.trust.end_state_only:BUGGY", drop=["global_step"],
                    noise_seeds=2)
    own, _, dropped = report.runs
    assert own.verdict == DIVERGED and own.max_abs_loss_diff == 0
    assert (own.first_divergent_step, own.first_divergent_quantity) == (16, "state of scheduler")
    # how it ends, not only how it was right after the load (the diagnosis)
    assert own.divergence_detail.startswith("scheduler at the end: best 0.7417")
    assert "expected 0.6961" in own.divergence_detail
    assert own.max_abs_diff == pytest.approx(0.7417685 - 0.6961151, rel=1e-5)
    assert "nothing in the loss shows it: plausible but different" in own.explanation
    assert "seed-to-seed noise" not in own.explanation
    # a counter has no magnitude: no figures, not zeros
    assert dropped.dropped == ["global_step"] and dropped.verdict == DIVERGED
    assert dropped.divergence_detail == "global_step at the end: 8, expected 16"
    assert dropped.max_abs_diff is None and dropped.max_ulp_diff is None


def test_its_twin_that_saves_the_scheduler_resumes():
    report = verify("fixtures.trust.end_state_only:CORRECT", drop="none", noise_seeds=0)
    assert report.equivalent and report.full_resume.verdict == IDENTICAL


def test_a_dropped_component_that_ends_otherwise_is_named_before_what_it_moved():
    """A trial: `drop global_step` named `state of plateau at the end`, the
    best loss its evaluation schedule moved, and not the step count itself,
    because the program declared the plateau first."""
    from tests.programs import EVAL_BY_STEP

    report = verify(EVAL_BY_STEP, drop=["global_step"], noise_seeds=0)
    dropped = report.runs[-1]
    assert dropped.dropped == ["global_step"] and dropped.verdict == DIVERGED
    assert dropped.first_divergent_quantity == "state of global_step (and of best)"
    assert dropped.divergence_detail == "global_step at the end: 4, expected 8"
    assert "the final state of global_step (and of best) differs" in dropped.explanation
    assert "state of global_step (and of best) at the end" in report.render()
