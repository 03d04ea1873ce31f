"""Lightning's recount of an epoch's end in its fit-loop progress, which a
correct resume from a checkpoint at an epoch's last batch has too, is said
last and as no lead of itself (trial 659: it led the diagnosis before the
stream the checkpoint lost)."""

from __future__ import annotations

from resumecheck.report import (
    DIVERGED, LOSSY_ONE, Finding, RunResult, is_fit_loop_recount, lossy_first,
)
from resumecheck.verdict import _recounts_last

RECOUNT = Finding("data_cursor", "epoch_progress.current.completed 1, expected 0", step=5)
STREAM = Finding("rng", "torch CPU stream differs from the uninterrupted run's at step 5", step=5)


def test_the_recount_goes_after_the_stream_and_says_it_is_no_lead():
    assert is_fit_loop_recount(RECOUNT) and not is_fit_loop_recount(STREAM)
    assert _recounts_last([RECOUNT, STREAM]) == [STREAM, RECOUNT]
    incomplete = f"{LOSSY_ONE}: ... `data_cursor`: epoch_progress.current.completed 1, ..."
    # (named in a WARNING on lossy loads, it is not moved first)
    assert lossy_first([STREAM, RECOUNT], incomplete) == [STREAM, RECOUNT]
    own = RunResult(dropped=[], resume_at=[5], verdict=DIVERGED, checkpoint="program",
                    diagnosis=[STREAM, RECOUNT])
    assert RECOUNT.mark_in(own, incomplete) == (
        " (not judged: Lightning's counts of epochs, which its restore of a checkpoint taken "
        "at an epoch's last batch counts once more in a correct resume too: of itself no lead)")


def test_another_data_position_keeps_its_place():
    position = Finding("data_cursor", "batch 0, expected 2", step=5)
    assert not is_fit_loop_recount(position)
    assert _recounts_last([position, STREAM]) == [position, STREAM]
