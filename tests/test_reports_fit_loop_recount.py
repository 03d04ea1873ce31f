"""Lightning's recount of an epoch's end in its fit-loop progress, which a
correct resume from a checkpoint at an epoch's last batch has too, is said
last and as no lead of itself (trial 659: it led the diagnosis before the
stream the checkpoint lost)."""

from __future__ import annotations

from resumecheck.report import (
    DIVERGED, LOSSY_ONE, Finding, RunResult, is_fit_loop_recount, lossy_first,
)
from resumecheck.verdict import _causes_first

RECOUNT = Finding("data_cursor", "epoch_progress.current.completed 1, expected 0", step=5)
STREAM = Finding("rng", "torch CPU stream differs from the uninterrupted run's at step 5", step=5)


def test_the_recount_goes_after_the_stream_and_says_it_is_no_lead():
    assert is_fit_loop_recount(RECOUNT) and not is_fit_loop_recount(STREAM)
    assert _causes_first([RECOUNT, STREAM]) == [STREAM, RECOUNT]
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
    assert _causes_first([position, STREAM]) == [position, STREAM]


def test_a_rate_that_departs_first_beside_a_lossy_load_names_the_frameworks_loop():
    """Trial 669: Lightning left out a plateau's epoch-end step after the
    resume, which the correct twin shared, and the WARNING tied the departure
    to the lost state of the module's hooks."""
    from resumecheck.report import _loop_rate

    said = _loop_rate("differs from step 16 (learning rate)", "Lightning's restore")
    assert said.startswith(" The learning rate is the first to differ: Lightning's loop may "
                           "also step a scheduler otherwise after a restore"), said
    assert said.endswith("which no checkpoint puts right: the lost state may matter only "
                         "later.")
    # (trial 749: BackboneFinetuning's group rate, set in on_train_epoch_start, which
    # Lightning does not run for the next epoch after a resume at an epoch's last batch)
    assert ("resumed from a checkpoint at an epoch's last batch, it does not run the next "
            "epoch's on_train_epoch_start hooks, where a callback may set a group's rate: "
            "BackboneFinetuning's") in said
    assert _loop_rate("differs from step 16 (loss)", "Lightning's restore") == ""
    assert _loop_rate("differs from step 16 (learning rate)", None) == ""


def test_a_finding_its_rerun_cleared_goes_after_the_confirmed_one():
    """Trial 708: at an epoch's end, a data position in its other form (its rerun
    changed nothing) led the diagnosis and the why, before the lost generator
    a rerun confirmed."""
    from resumecheck.report import CONFIRMED, NOT_CAUSE
    from resumecheck.verdict import _causes_first

    position = Finding("data_cursor", "batch 0, expected 8", step=16, status=NOT_CAUSE)
    stream = Finding("rng", "generator 'noise' differs", step=16, status=CONFIRMED)
    assert [f.component for f in _causes_first([position, stream])] == ["rng", "data_cursor"]
    assert _causes_first([RECOUNT, position, stream]) == [stream, position, RECOUNT]
