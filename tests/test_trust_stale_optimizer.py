"""An optimizer kept across a model that load() rebuilt: its state loads
exactly, its steps move tensors the model no longer uses. A trial found the
diagnosis false: every entry of its state "missing" (keyed by the model's
parameter names) and the optimizer "differs, not the cause"."""

from __future__ import annotations

from resumecheck import verify

SPEC = "fixtures.trust.stale_optimizer:"


def test_an_optimizer_left_on_the_old_model_is_named_for_what_it_is_and_not_cleared():
    report = verify(SPEC + "BUGGY", drop="none", noise_seeds=0)
    own = report.full_resume
    assert own.verdict == "diverged" and own.first_divergent_step == 5
    [finding] = own.diagnosis
    assert finding.component == "optimizer"
    assert finding.detail.startswith("steps tensors the model does not train with: 4 of its 4 "
                                     "parameters are not the model's")
    assert finding.status is None  # (no state put into it attaches it to the model)
    # (a trial: a bare "(not judged)" made the one right line read as doubtful)
    assert finding.detail.endswith("; not judged by a rerun, which puts state in and cannot "
                                   "attach an optimizer to the model's tensors: this is read off "
                                   "the objects themselves")
    # (trial 840: "restored state differs in optimizer" of a state that came back bit for bit;
    # "one of 4 gradients one run lacks" of all 4)
    assert "restored state differs in which tensors optimizer steps" in own.explanation
    assert own.first_divergent_quantity.startswith(
        "gradient of 0.bias (4 gradients one run lacks, this one among them)"), \
        own.first_divergent_quantity
    text = report.render()
    assert "themselves (not judged)" not in text
    assert "missing" not in text and "put right alone, the run departs no later" not in text


def test_its_twin_that_loads_into_its_own_model_is_equivalent():
    assert verify(SPEC + "CORRECT", drop="none", noise_seeds=0).equivalent
