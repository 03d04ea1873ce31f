"""A step that called the model another number of times than the
uninterrupted run's step. A trial's L-BFGS, restarted at the rate its build
gave it, called the model once more in its line search: the report named the
number of calls alone and guessed at "an evaluation every few steps"; at
another resume point the batch differed too, and only the count was said.
Now the step's learning rate, where it differs, and inputs that differ are
said (hand-built records: ``evidence._calls_text``, ``verdict._calls_counted``)."""

from __future__ import annotations

from types import SimpleNamespace

import torch

from resumecheck.evidence import _calls_text
from resumecheck.trace import StepRecord
from resumecheck.verdict import _calls_counted

GUESS = "an evaluation every few steps"


def _calls(run_lr: list[float], ref_lr: list[float], run_in: list[torch.Tensor],
           ref_in: list[torch.Tensor]) -> str:
    run_keys = [f"inputs:{i}" for i in range(len(run_in))]
    ref_keys = [f"inputs:{i}" for i in range(len(ref_in))]
    return _calls_text(13, StepRecord(13, 0.5, lr=run_lr), StepRecord(13, 0.4, lr=ref_lr),
                       ref_keys, run_keys, ref_in, run_in)


def test_a_rate_that_differs_is_said_in_place_of_the_guess():
    same = [torch.ones(2)] * 6
    text = _calls([1.0], [0.25], [*same, torch.zeros(2)], same)
    assert "the first 6 agree bit for bit, so the data agree" in text
    assert ("this step's learning rate differs too (1.0, expected 0.25): an optimizer that "
            "calls the model inside its step (a line search's, L-BFGS's) calls it as often as "
            "its rate leads it") in text
    assert GUESS not in text
    assert GUESS in _calls([0.25], [0.25], [*same, torch.zeros(2)], same)


def test_inputs_that_differ_are_said_beside_the_count():
    text = _calls([1.0], [1.0], [torch.zeros(2)] * 6, [torch.ones(2)] * 7)
    assert text == ("step 13 called the model with 6 input tensors over all its calls, 7 in "
                    "the reference; the inputs both made differ too, from the first one: the "
                    "data differ")
    later = _calls([1.0], [1.0], [torch.ones(2), torch.zeros(2)], [torch.ones(2)] * 3)
    assert "differ too, first at its input tensor 2 of 2: the data differ" in later


def test_the_first_divergence_names_the_rate_and_the_inputs_that_differ():
    def counted(run: dict[str, str], ref: dict[str, str], run_lr: float) -> str | None:
        mine, theirs = StepRecord(13, 0.5, run, lr=[run_lr]), StepRecord(13, 0.4, ref, lr=[0.25])
        return _calls_counted(SimpleNamespace(by_step={13: theirs}),
                              [(12, SimpleNamespace(records=[mine]))], 13, "inputs:2")

    both = {"inputs:0": "a", "inputs:1": "b"}
    assert counted({**both, "inputs:2": "c"}, both, 1.0) == (
        "number of model calls (3 input tensors, 2 in the uninterrupted run; the first 2 "
        "agree; its learning rate differs too)")
    assert counted({"inputs:0": "x", "inputs:1": "b", "inputs:2": "c"}, both, 0.25) == (
        "number of model calls (3 input tensors, 2 in the uninterrupted run; the inputs both "
        "made differ too)")
    # (trial 543: calls counted on both sides, 1 against 3, where a call takes 2 tensors)
    mine = StepRecord(13, 0.5, {"inputs:0": "a", "inputs:1": "b"}, lr=[0.25], calls=1)
    theirs = StepRecord(13, 0.4, {f"inputs:{i}": "abcdef"[i] for i in range(6)}, lr=[0.25],
                        calls=3)
    assert _calls_counted(SimpleNamespace(by_step={13: theirs}),
                          [(12, SimpleNamespace(records=[mine]))], 13, "inputs:2") == (
        "number of model calls (1 call, 3 in the uninterrupted run; 2 input tensors, 6 there; "
        "the first 2 agree)")


def test_a_restart_that_drew_less_is_offered_the_epoch_end_its_iterator_did_not_reach():
    """Trial 489: a restart at an epoch's end drew 255 words less than the
    uninterrupted run, whose exhausted RandomSampler drew one more shuffle of
    256 items; the words offered a skipped draw or a replayed shuffle only."""
    from resumecheck.evidence import _skipped

    text = _skipped("generators.loader", "32-bit words", "255 32-bit words", 8)
    assert text.startswith("step 9, the first after the restore, drew 255 32-bit words less "
                           "than the uninterrupted run's: a draw the restart skips"), text
    assert text.endswith(
        "or an epoch's end the uninterrupted run's iterator ran into and the restart's did not "
        "(a RandomSampler draws one more shuffle, n - 1 words, as an epoch's indices run out: "
        "a restart that makes its iterator anew there skips it)"), text


def test_a_rate_that_differs_first_says_when_the_loss_does():
    """Trial 503: "learning rate differs from step 11", and a user comparing loss
    curves found none at 11: a step computes its loss before its optimizer
    steps with the rate (``verdict._loss_after_rate``)."""
    from resumecheck import verify

    report = verify("resumecheck.tiny:TARGET", drop=["optimizer"], noise_seeds=0,
                    check_determinism=False)
    [run] = [r for r in report.runs if r.dropped == ["optimizer"]]
    assert run.explanation.startswith(
        "learning rate differs from step 9 (its loss is alike: a step computes its loss before "
        "its optimizer steps with the rate; the loss differs from step 10)"), run.explanation


def test_a_program_that_says_it_has_no_epochs_is_offered_no_loaders_epoch():
    """Trial 535: a generator that drew less after a restart that lost the step
    (shorter sequences), in a program with no loader that declared
    ``epoch_boundaries = []``, was offered a loader's replayed shuffle and a
    RandomSampler's epoch end."""
    from resumecheck import verify
    from resumecheck.evidence import _skipped

    text = _skipped("generator data", "32-bit words", "16 32-bit words", 4, epochs=False)
    assert text.endswith("or the stream set back during that step (seeded again, from a "
                         "position the restart lacks)"), text
    report = verify("fixtures.trust.length_by_step:TARGET", drop="none", noise_seeds=0)
    own = report.full_resume
    assert [f.component for f in own.diagnosis] == ["global_step"], own.diagnosis
    [behind] = [o.detail for o in own.stream_offsets if "behind" in o.detail]
    # (the step confirmed as the cause, its draws are put to it alone: trial 568)
    assert "global_step, which a rerun confirmed as the run's cause" in behind, behind
    assert "epoch" not in behind and "RandomSampler" not in behind, behind


def test_draws_that_follow_a_confirmed_cause_are_offered_no_causes_of_their_own():
    """Trial 568: a lost position (confirmed) read another student, whose
    shorter sequence drew fewer dropout masks; the stream's line offered a
    skipped draw, eval mode and a replayed shuffle beside it."""
    from resumecheck.evidence import _branch_note
    from resumecheck.report import Finding, RunResult, StreamOffset

    detail = ("torch CPU stream is 64 32-bit words behind the reference's at the start of "
              "step 17: step 16, the first after the restore, drew 64 32-bit words less")
    run = RunResult(dropped=[], resume_at=[15], verdict="diverged", checkpoint="program",
                    first_divergent_step=16, first_divergent_quantity="data (the samples "
                    "consumed)", diagnosis=[Finding("data_cursor", "pos 624, expected 15",
                                                    step=15, status="confirmed")],
                    stream_offsets=[StreamOffset("torch", 17, -32, "draws", detail)])
    _branch_note(run)
    [said] = [o.detail for o in run.stream_offsets]
    assert said.endswith("step 16 read state that differs right after the restore "
                         "(data_cursor, which a rerun confirmed as the run's cause), and a "
                         "step that reads it otherwise draws otherwise: these draws follow "
                         "from it"), said
    assert "drew 64 32-bit words less" not in said
