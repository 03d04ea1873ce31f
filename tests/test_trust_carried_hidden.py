"""A recurrent state carried from one step to the next (an LSTM's hidden
state under truncated backpropagation, kept with its graph until the next
step detaches it) is looked at like any tensor the program keeps: a
checkpoint that loses it is named, and the first divergence says that the
model was called as often, without it. A trial's report named no state, and
said "number of model calls" of one call in each run
(``fixtures/trust/carried_hidden.py``)."""

from __future__ import annotations

from resumecheck import verify

SPEC = "fixtures.trust.carried_hidden:"


def test_a_lost_hidden_state_is_named_and_the_call_said_to_lack_it():
    lost = verify(SPEC + "FORGETS_HIDDEN", drop="none", noise_seeds=0)
    assert not lost.equivalent
    [line] = [w for w in lost.undeclared if w.startswith("hidden ")]
    assert "your own resume held it otherwise right after your load() at step 4" in line, line
    own = lost.runs[0]
    assert own.first_divergent_quantity == (
        "model inputs (1 tensor, 3 in the uninterrupted run, in 1 call each; the first one "
        "agrees)"), own.first_divergent_quantity
    text = lost.render()
    assert "step 5 called the model as often as the reference (once), with 1 input tensor in " \
        "all, 3 in the reference" in text
    assert "`hidden` at `[0]`, `hidden` at `[1]` were not passed on the other side (an " \
        "argument the step passes only where it holds one, a recurrent state carried" in text
    assert "an evaluation every few steps" not in text


def test_its_twin_resumes_and_is_told_only_that_the_state_is_not_compared():
    kept = verify(SPEC + "CORRECT", drop="none", noise_seeds=0)
    assert kept.equivalent
    [line] = [w for w in kept.undeclared if w.startswith("hidden ")]
    assert line.endswith("your own resume ends with it as the uninterrupted run did"), line


def test_a_step_that_returns_its_samples_is_not_told_its_inputs_went_unchecked_beside_the_lead():
    """Trial 542: beside a carried hidden state the why named as what the
    checkpoint may lose, it said that the samples matched and the model's
    inputs (an augmentation) went unchecked: a second cause, which was none."""
    own = verify(SPEC + "FORGETS_HIDDEN_SAMPLES", drop="none", noise_seeds=0).full_resume
    assert own.verdict == "diverged"
    assert "; not compared, and your checkpoint" in own.explanation, own.explanation
    assert "the samples it consumed match" not in own.explanation, own.explanation
