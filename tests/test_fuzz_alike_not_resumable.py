"""A shrink does not trade a failure found at an epoch's end for a resume
inside an epoch that a framework's training loader, keeping no place in its
epoch, fails in any program (trials 653, 659: the correct twin failed there
too, and the minimal schedule no longer showed the lost stream)."""

from __future__ import annotations

from resumecheck.fuzz import _alike
from resumecheck.evidence import EPOCH_AGAIN
from resumecheck.report import DIVERGED, Finding, RunResult


def _run(k: int, detail: str) -> RunResult:
    return RunResult(dropped=[], resume_at=[k], verdict=DIVERGED, checkpoint="program",
                     first_divergent_step=k + 1,
                     first_divergent_quantity="data (the samples consumed)",
                     divergence_detail=detail,
                     diagnosis=[Finding("rng", "torch CPU stream differs", step=k)])


def test_a_loader_that_keeps_no_place_is_another_failure():
    found = _run(5, "samples of step 6: max |Δ| 4; what the uninterrupted run read at step 1")
    inside = _run(1, f"samples of step 2: max |Δ| 4; {EPOCH_AGAIN}")
    assert not _alike(inside, found, not_resumable=True)
    assert _alike(inside, found)  # (a loader that keeps its place: the same fault may)
    assert _alike(inside, inside, not_resumable=True)  # (found so itself: alike)
