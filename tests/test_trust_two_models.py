"""Every declared module is traced step by step, not only the ``params`` model
(fixtures/trust/two_models.py: a GAN whose checkpoint forgets the
discriminator's optimizer)."""

from __future__ import annotations

from resumecheck import verify

SPEC = "fixtures.trust.two_models:"


def test_a_second_models_divergence_is_found_at_its_first_step():
    """A trial: the discriminator's parameters differed from step 9, the report
    said the loss at step 10, with nothing saying the discriminator was not
    traced step by step."""
    report = verify(SPEC + "BUGGY", drop="none", noise_seeds=0)
    own = report.full_resume
    assert own.verdict == "diverged"
    assert own.first_divergent_step == 5  # (resumed at 4; the loss differs from step 6)
    assert own.first_divergent_quantity.startswith("parameter discriminator."), \
        own.first_divergent_quantity
    assert [(f.component, f.status) for f in own.diagnosis] == [("optimizer_d", "confirmed")]
    # in the words the `optimizer` component gets (a trial: `state.0.exp_avg missing`)
    assert own.diagnosis[0].detail == "no per-parameter state (fresh), expected the state at step 4"
    assert report.untraced == []
    # the same for programs that read the JSON (a trial: the quantity is prose)
    assert own.first_divergent_key.startswith("param:discriminator.")
    assert report.to_json()["runs"][0]["first_divergent_key"] == own.first_divergent_key
    twin = verify(SPEC + "CORRECT", drop="none", noise_seeds=0)
    assert twin.equivalent and twin.full_resume.verdict == "identical"


def test_the_models_parameters_are_named_with_its_component_beside_another_module():
    """A trial: a GAN's generator and discriminator both have a ``0.bias``;
    "parameter 0.bias" did not say which model departed."""
    own = verify(SPEC + "BUGGY_G", drop="none", noise_seeds=0).full_resume
    assert own.first_divergent_step == 6  # (resumed at 5, a generator's step)
    assert own.first_divergent_key.startswith("param:params."), own.first_divergent_key
    assert own.first_divergent_quantity.startswith("parameter params."), \
        own.first_divergent_quantity
    assert [(f.component, f.status) for f in own.diagnosis] == [("optimizer", "confirmed")]


def test_a_second_optimizers_state_is_named_by_its_parameters():
    import torch

    from resumecheck.state_diff import describe_difference

    def adam(value: float) -> dict:
        return {"state": {0: {"step": torch.tensor(4.0), "exp_avg": torch.full((2,), value)}},
                "param_groups": [{"lr": 0.01, "params": [0]}]}

    meta = {"optimizer_params_of": {"optimizer_d": ["discriminator.0.weight"]}}
    said = describe_difference("optimizer_d", adam(1.0), adam(2.0), 4, meta, meta)
    assert said.startswith("exp_avg of `discriminator.0.weight` differs"), said


def test_an_undeclared_optimizer_the_load_leaves_empty_is_said_lost_by_the_checkpoint():
    """A trial: the discriminator's optimizer, not declared and lost by the
    checkpoint, was said to end otherwise, "but that says nothing of your
    checkpoint"; right after the load it held no state at all."""
    report = verify(SPEC + "UNDECLARED_BUGGY", drop="none", noise_seeds=0)
    assert not report.equivalent
    lines = {line.split(" (")[0]: line for line in report.undeclared}
    assert ("your own resume held it otherwise right after your load() at step 4 and after "
            "step 5, before it departed from the uninterrupted run at step 6: your checkpoint "
            "loses it") in lines["optimizer_d"], lines
    # its parameters, which the checkpoint keeps, depart with the rest: no more said
    assert "that says nothing of your checkpoint" in lines["discriminator"], lines

    # a resume that departs at the first step after the load: only the load is seen
    # (a re-check: an optimizer left without state held nothing to compare there)
    early = verify(SPEC + "UNDECLARED_BUGGY_AT_ONCE", drop="none", noise_seeds=0)
    assert early.full_resume.first_divergent_step == 5
    lines = {line.split(" (")[0]: line for line in early.undeclared}
    assert ("your own resume held it otherwise right after your load() at step 4, and "
            "departed from the uninterrupted run at the next step: your checkpoint may lose "
            "it") in lines["optimizer_d"], lines
