"""A full resume whose data departs at the first step of a new epoch, every
step before it matching, is said to read another order for that epoch
(fixtures/trust/order_saved_not_generator.py)."""

from __future__ import annotations

from resumecheck import verify
from resumecheck.evidence import next_draw
from resumecheck.report import DIVERGED
from resumecheck.segments import SegmentResult
from resumecheck.trace import StepRecord

SPEC = "fixtures.trust.order_saved_not_generator:"
FAST = {"noise_seeds": 0, "drop": "none", "check_determinism": False}
NEW_EPOCH = ("step 9 is the first to read a new epoch, and every step from the restore at 4 until "
             "then read what the uninterrupted run read: the new epoch's order differs")


def test_a_generator_lost_with_the_order_saved_departs_at_the_next_epoch_and_says_so():
    report = verify(SPEC + "LOSES_GENERATOR", **FAST)
    own = report.full_resume
    assert own.verdict == DIVERGED
    assert (own.first_divergent_step, own.first_divergent_quantity) == (
        9, "data (the samples consumed)")
    assert NEW_EPOCH in own.explanation, own.explanation
    assert [u.split(" (")[0] for u in report.undeclared] == ["shuffle"]


def test_inputs_that_first_differ_where_a_new_epoch_begins_are_not_said_to_be_another_order():
    """Trial 477: the same samples in the same order, cut to another length by a
    curriculum its checkpoint lost, read "the new epoch's order differs": where
    the model's inputs are compared, what makes them from the samples may differ."""
    own = verify(SPEC + "INPUTS_ONLY", **FAST).full_resume
    assert (own.first_divergent_step, own.first_divergent_quantity) == (
        9, "data (the model's inputs)"), own.explanation
    assert ("then read what the uninterrupted run read: the new epoch's inputs differ, in their "
            "order (a sampler's") in own.explanation, own.explanation
    assert "or in what makes them from the samples (state a collator or a dataset reads" in \
        own.explanation


def test_its_twin_that_keeps_the_generator_resumes_and_a_resume_at_the_boundary_says_nothing():
    assert verify(SPEC + "KEEPS_GENERATOR", **FAST).equivalent
    # resumed at the epoch's end, step 9 is the first after the restore: nothing to add
    own = verify(SPEC + "LOSES_GENERATOR", **{**FAST, "resume_at": 8}).full_resume
    assert own.first_divergent_step == 9
    assert "first of a new epoch" not in own.explanation


def test_a_declared_generator_lost_after_the_runs_last_shuffle_is_latent_from_the_next_epoch():
    """A trial: a latent gap in a stream drawn at each epoch's start said nothing
    of when it would matter (only a sampler's epoch had "from step N")."""
    report = verify(SPEC + "LOST_AFTER_THE_LAST_SHUFFLE", **FAST)
    own = report.full_resume
    assert report.equivalent and own.latent_gaps == ["rng"]
    assert own.latent_parts() == {"rng": "rng (next read at step 17)"}
    assert "latent gap: rng (next read at step 17)" in own.explanation


def _records(draws: dict[str, list[int]], steps: int, k: int | None = None) -> SegmentResult:
    """A segment whose streams were drawn during the given steps (``k``: a
    restart after it, whose streams all differ from the start)."""
    records, state = [], {key: 0 for key in draws}
    for step in range(1, steps + 1):
        streams = {key: f"{value}" for key, value in state.items()}
        if k is not None:
            streams = {key: f"other{value}" for key, value in state.items()}
        records.append(StepRecord(step=step, loss=0.0, streams=streams))
        state = {key: value + (step in draws[key]) for key, value in state.items()}
    if k is not None:
        records = records[k:]
    return SegmentResult(records=records, names=["rng"], captures={}, end_state=None)


def test_the_next_draw_is_read_off_the_reference_only_for_draws_at_epoch_starts():
    epochs = {"steps_per_epoch": 4}
    reference = _records({"g": [1, 5, 9]}, 12)
    assert next_draw(reference, _records({"g": [1, 5, 9]}, 12, k=10), 10, epochs) == 13
    assert next_draw(reference, _records({"g": [1, 5, 9]}, 12, k=9), 9, epochs) == 13
    # drawn at a step that begins no epoch, or drawn after the restore: no prediction
    odd = _records({"g": [1, 6]}, 12)
    assert next_draw(odd, _records({"g": [1, 6]}, 12, k=10), 10, epochs) is None
    assert next_draw(reference, _records({"g": [1, 5, 9]}, 12, k=7), 7, epochs) is None
    # never drawn, or no epochs declared: none either
    idle = _records({"g": []}, 12)
    assert next_draw(idle, _records({"g": []}, 12, k=10), 10, epochs) is None
    assert next_draw(reference, _records({"g": [1, 5, 9]}, 12, k=10), 10, {}) is None


def test_a_confirmed_cause_that_first_changes_the_inputs_at_a_new_epoch_is_not_another_order():
    """Trial 222: a curriculum lost at the restore, whose difficulty first rises
    where an epoch begins, read "the new epoch's order differs" beside the
    confirmed curriculum, though each epoch's order was right."""
    spec = "fixtures.trust.curriculum_at_epoch:"
    own = verify(spec + "LOSES_CURRICULUM", **FAST).full_resume
    assert (own.verdict, own.first_divergent_step) == (DIVERGED, 9)
    assert [(f.component, f.confirmed) for f in own.diagnosis] == [("curriculum", True)]
    assert "new epoch" not in own.explanation, own.explanation
    assert verify(spec + "KEEPS_CURRICULUM", **FAST).equivalent


def test_a_count_made_over_every_micro_batch_is_named_with_the_batch_that_changed_shape():
    """Trial 477: a Trainer's `num_items_in_batch`, counted over both
    micro-batches of a step, was the first input named, alone; the second
    call's batch, cut to a curriculum's other length, was not."""
    own = verify("fixtures.trust.counted_inputs:LOSES_LENGTH", **FAST).full_resume
    assert own.divergence_detail.startswith(
        "the model's `n` in its 1st call of 2 in step 5: max |Δ| 8 (and 2 more of the step's "
        "inputs, among them the model's `x` in its 2nd call of 2: torch.float32[4, 6], expected "
        "torch.float32[4, 8])"), own.divergence_detail
