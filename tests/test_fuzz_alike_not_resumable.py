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


def test_a_schedule_alike_to_its_end_whose_resave_departs_is_said_so():
    """Trial 694: beside a failure found at 12 (another epoch's data), resuming
    at 8 was "fail otherwise (in its end state alone)", where every step and
    the end state matched and only a save right after the load, resumed again,
    departed."""
    from resumecheck.fuzz import _failing_otherwise, _how
    from resumecheck.report import IDENTICAL, LOST_ON_RESAVE

    found = _run(12, "samples of step 13: max |Δ| 4; what the uninterrupted run read at step 5")
    resaved = RunResult(dropped=[], resume_at=[8], verdict=IDENTICAL, checkpoint="program",
                        diagnosis=[Finding("sampler_epoch", "1, expected 0", step=8,
                                           status=LOST_ON_RESAVE)])
    assert _how(resaved, found) == "lost on resave"
    assert "(only where a save right after the load, and a resume from it, departs: lost " \
        "on a second resume)" in _failing_otherwise([{"resume_at": [8], "how": "lost on resave"}])
    ended = RunResult(dropped=[], resume_at=[8], verdict=DIVERGED, checkpoint="program",
                      first_divergent_step=16, first_divergent_quantity="state of ema",
                      diagnosis=[Finding("ema", "n 0, expected 3", step=8)])
    assert _how(ended, found) == "end state alone"
