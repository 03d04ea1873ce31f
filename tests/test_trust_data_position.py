"""A resume that reads other samples says where they come from: a batch the
uninterrupted run read at another step, or its own batch shifted by a few
samples; and, where the declared data position came back as saved while the
samples differ first, it names that position as the lead (two trials: a
loop that never skipped the batches it had read, a position counted one
batch late, were told only of state they did not declare)."""

from __future__ import annotations

import warnings

import torch

from resumecheck import verify
from resumecheck.evidence import _shifted
from resumecheck.report import DIVERGED

FAST = {"noise_seeds": 0, "drop": "none", "check_determinism": False}


def _own(spec: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return verify(spec, **FAST)


def test_a_loop_that_ignores_its_restored_position_is_told_so_and_which_batch_it_read():
    report = _own("fixtures.trust.position_unused:BUGGY")
    own = report.runs[0]
    assert own.verdict == DIVERGED and own.first_divergent_key == "data"
    assert "the declared data position `data_cursor` came back as saved" in own.explanation
    # (a trial read it last, after the list of state no component declares: it leads)
    assert own.explanation.index("came back as saved") < own.explanation.index(
        "no declared component's state (what it saves) differs right after your load()")
    assert own.divergence_detail.endswith(
        "they are what the uninterrupted run read at step 1 (3 steps earlier): the restart "
        "reads the run's own data, at another position (or in another epoch's order, or from "
        "another of its sources, picked by state that differs: a step count that takes two "
        "loaders in turn), or draws them from a random stream set back to where it was then "
        "(indices or offsets drawn at each step from a stream re-seeded or not restored)")
    notice = report.incomplete_state_notice()
    assert "The declared data position `data_cursor` came back as saved" in notice
    # (a trial read "do not capture the program's state" as its declarations incomplete)
    assert notice.startswith("the restart reads other samples though every declared component "
                             "came back: the engine restored every one of them")


def test_a_position_lost_where_putting_it_right_drives_nothing_says_what_that_leaves():
    """A trial's load() made its loader's iterator anew; the declared position,
    0 after the load, was 'differs, not the cause', and no cause was named."""
    own = _own("fixtures.trust.position_unused:LOSES_IT").runs[0]
    # (trial 549: the ablation that drops it alone, run where none was asked for, departs
    # as this resume does: the likely cause, said with what may leave it unread)
    assert [(f.component, f.status) for f in own.diagnosis] == [("data_cursor", "likely")]
    assert ("; the engine's resume without `data_cursor` alone departs as yours does, step for "
            "step: the likely cause") in own.explanation, own.explanation
    assert ("or which nothing reads where it matters (a declared position that does not drive "
            "the iterator your load() makes again from the epoch's start)") in own.explanation
    assert "came back as saved" not in own.explanation  # (it did not)
    assert "read at step 1 (3 steps earlier)" in own.divergence_detail


def test_its_twin_that_skips_the_batches_read_resumes():
    assert _own("fixtures.trust.position_unused:CORRECT").equivalent


def test_a_cursor_saved_one_micro_batch_early_reads_the_batch_shifted_by_it():
    own = _own("fixtures.bugs.class12_cursor_off_by_one:BUGGY").runs[0]
    assert own.divergence_detail.endswith(
        "they are the uninterrupted run's samples of that step shifted by 4: the restart "
        "reads from 4 samples earlier (a data position off: by as much where each position is "
        "one sample read; or, where a step reads several batches, the same batches in another "
        "order: micro-batches or tasks picked otherwise)")


def test_a_lost_sampler_epoch_is_no_lead_for_the_position():
    """The lead is only said where nothing declared differs after the load."""
    own = _own("fixtures.bugs.class10_sampler_epoch:BUGGY").runs[0]
    assert [f.component for f in own.diagnosis] == ["sampler_epoch"]
    assert "came back as saved" not in own.explanation


def test_a_shift_is_only_said_where_a_match_means_something():
    ids = torch.arange(10, 18)
    assert "shifted by 1" in _shifted(ids, torch.cat([torch.tensor([9]), ids[:-1]]))
    assert "2 samples later" in _shifted(ids, torch.cat([ids[2:], torch.tensor([40, 41])]))
    labels = torch.tensor([0, 1, 0, 1, 0, 1, 0, 1])  # (repeats: a match by chance)
    assert _shifted(labels, torch.roll(labels, 1)) == ""
    assert _shifted(ids[:3], ids[:3] + 1) == ""  # too few


def test_the_no_cause_clause_goes_where_the_declared_state_is_incomplete():
    """A trial's Lightning run: the engine's own resume departed too (its
    position did not load back), so the rerun that 'put it right' did not,
    and the clause saying none of it changes the departure must go with the
    marks; in the framework's words too."""
    from resumecheck.report import Finding, RunResult
    from resumecheck.verdict import _no_cause_found, in_its_words, unjudge_when_incomplete

    own = RunResult(dropped=[], resume_at=[5], verdict=DIVERGED, checkpoint="program",
                    first_divergent_step=6, first_divergent_quantity="data (the samples consumed)",
                    first_divergent_key="data",
                    diagnosis=[Finding("data_cursor", "1, expected 0", step=5, status="not_cause")])
    clause = _no_cause_found(own)
    assert clause.startswith("; put right in a rerun, none of what differs right after the load")
    own.explanation = ("data (the samples consumed) differs from step 6; restored state differs "
                       "in data_cursor (differs; put right alone, the run departs no later)"
                       + clause + "; samples of step 6")
    in_its_words(own, {"restored_by": "Lightning's restore"})
    engine = RunResult(dropped=[], resume_at=[5], verdict=DIVERGED, checkpoint="engine")
    unjudge_when_incomplete(own, engine)
    assert own.explanation == ("data (the samples consumed) differs from step 6; restored state "
                               "differs in data_cursor; samples of step 6"), own.explanation
    assert own.diagnosis[0].status is None


def test_the_models_inputs_read_at_another_step_are_said_to_be_so():
    """A trial's Trainer with ignore_data_skip=True read the epoch's first
    batches again; the report, on the model's inputs, led with a stream."""
    from resumecheck.evidence import _inputs_elsewhere
    from resumecheck.segments import SegmentResult
    from resumecheck.trace import StepRecord

    def rec(step, a, b):
        return StepRecord(step=step, loss=0.0, digests={"inputs:0": a, "inputs:1": b})

    reference = SegmentResult(records=[rec(1, "a", "b"), rec(2, "c", "d"), rec(3, "e", "f")],
                              names=[], captures={}, end_state=None)
    read = [torch.randn(4, 3)]
    said = _inputs_elsewhere(reference, rec(3, "a", "b"), None, 3, read)
    assert said == ("; they are what the uninterrupted run called it with at step 1 (2 steps "
                    "earlier): the restart reads the run's own data, at another position (or "
                    "in another epoch's order, or from another of its sources, picked by state "
                    "that differs: a step count that takes two loaders in turn), or makes "
                    "them from a random stream set back to where it was then (noise from a "
                    "generator left at its build state)")
    # (trial 434: a program that says it has no epochs was offered another epoch's order)
    reference.boundaries = {"epoch_boundaries": []}
    said = _inputs_elsewhere(reference, rec(3, "a", "b"), None, 3, read)
    assert ("the restart reads the run's own data, at another position (or from another of its "
            "sources, picked by state that differs: a step count that takes two loaders in "
            "turn), or makes them") in said
    assert _inputs_elsewhere(reference, rec(3, "a", "d"), None, 3, read) == ""  # (not all)
    labels = [torch.tensor([0, 1, 0, 1])]  # (repeats: a match by chance)
    assert _inputs_elsewhere(reference, rec(3, "a", "b"), None, 3, labels) == ""


def test_samples_of_the_same_place_in_another_epoch_lead_to_the_epochs_order():
    """A trial's forgotten set_epoch: the position came back and was skipped
    to, and the report led with a position saved where the run was not."""
    own = _own("fixtures.trust.position_unused:EPOCH_ORDER").runs[0]
    assert own.verdict == DIVERGED and own.first_divergent_step == 11
    assert own.divergence_detail.endswith(
        "they are what the uninterrupted run read at step 3 (8 steps earlier), at the same "
        "place of another epoch: the restart reads this place of another epoch's data (the "
        "epoch it reads differs: its order, a sampler's epoch that set_epoch sets, or a "
        "shuffle generator's state, that the restart does not put back; a position or an "
        "epoch counted otherwise at an epoch's end; or state the data depends on: a "
        "curriculum's level)")
    assert ("the declared data position `data_cursor` came back as saved, and the samples are "
            "those of the same place in another epoch: the position is not what differs, the "
            "epoch's data is (its order") in own.explanation
    assert "a position saved where the run was not" not in own.explanation
    # (trial 297: a loop that read its first epoch again, ignoring the epoch it loaded)
    assert ("or a resumed loop that does not act on the epoch it came back with, and reads an "
            "epoch it had read)") in own.explanation


def test_the_first_batch_of_the_epoch_read_again_is_said_to_be_so():
    own = _own("fixtures.trust.position_unused:FROM_EPOCH_START").runs[0]
    assert own.divergence_detail.endswith(
        "they are what the uninterrupted run read at step 9 (2 steps earlier), the first of its "
        "epoch: the restart reads the epoch again from its start (a position that came back but "
        "that the loop does not skip to, or one not kept)")
    assert "a resumed loop that does not act on it" in own.explanation


def test_where_another_step_stands_in_the_epochs():
    """A trial: Lightning, its fit loop's counters dropped, read the first
    epoch from its start, and was told it read its own epoch again."""
    from resumecheck.evidence import epoch_place
    from resumecheck.segments import SegmentResult

    ref = SegmentResult(records=[], names=[], captures={}, end_state=None,
                        boundaries={"steps_per_epoch": 4})
    assert epoch_place(ref, 7, 3) == "same place"  # (3rd of epochs 2 and 1)
    assert epoch_place(ref, 7, 5) == "epoch start"  # (the first of its own epoch)
    assert epoch_place(ref, 7, 1) == "another epoch's start"
    assert epoch_place(ref, 7, 6) is None
    assert epoch_place(SegmentResult(records=[], names=[], captures={}, end_state=None),
                       7, 3) is None  # (no epochs known)


def test_a_skip_past_the_epochs_end_reads_ahead_and_is_said_so():
    """A trial's skip counted in samples, not batches, ran past the epoch's
    end: the report said a position and an epoch came back otherwise."""
    own = _own("fixtures.trust.position_unused:TOO_MANY").runs[0]
    assert own.verdict == DIVERGED and own.first_divergent_step == 11
    assert ("the first of a later epoch: the restart reads ahead, from that epoch's start (a "
            "loop that skips more batches than it read") in own.divergence_detail
    assert "or too many" in own.explanation  # (the position's lead)


def test_a_position_held_in_a_component_of_its_own_at_an_epochs_end_may_be_one_in_two_forms():
    """Trial 448: a datamodule's load_state_dict() turned {epoch 1, batches_done 6}
    into the next epoch's start {epoch 2, batches_done 0}, and the WARNING said
    Lightning's restore did not bring back what it saved. Any component of which
    an epoch and more differ at an epoch's end is told it may be one position."""
    from types import SimpleNamespace

    from resumecheck.report import Finding
    from resumecheck.verdict import _epoch_end_positions

    ref = SimpleNamespace(segment=SimpleNamespace(boundaries={"steps_per_epoch": 6}), steps=20)
    moved = Finding("datamodule", "batches_done 0, expected 6 (and 1 more entry of its "
                    "state_dict() differs: epoch 2, expected 1)", step=12)
    ema = Finding("ema", "decay 0.9, expected 0.99 (and 1 more entry of its state_dict() "
                  "differs: updates 3, expected 12)", step=12)
    [said, alone] = _epoch_end_positions(ref, [moved, ema])
    assert said.detail == moved.detail + (": at an epoch's end, the end of one epoch and the "
                                          "start of the next may be one position in two forms")
    assert alone == ema  # (no epoch among what differs: no position)
    [inside] = _epoch_end_positions(ref, [Finding("datamodule", moved.detail, step=8)])
    assert inside.detail == moved.detail  # (not at an epoch's end)
