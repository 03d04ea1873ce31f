"""A TorchScript model declared as ``params`` (fixtures/trust/scripted_model.py,
trial 484: every run stopped before any judgement, blamed on the program)."""

from __future__ import annotations

import pytest

from resumecheck import verify

SPEC = "fixtures.trust.scripted_model:"
FAST = {"noise_seeds": 0, "check_determinism": False}


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # (torch.jit.script's own)
def test_a_scripted_model_is_checked_and_its_untraced_inputs_are_said():
    report = verify(SPEC + "CORRECT", drop=["data_cursor"], **FAST)
    assert report.equivalent
    assert report.untraced == [
        "the model's inputs: the model is a TorchScript module (torch.jit.script), which takes "
        "no Python hooks, and no step returned its samples, so data that differs shows first "
        "in the loss (return them, StepOutput(samples=...))"], report.untraced
    [dropped] = [r for r in report.runs if r.dropped]
    assert dropped.verdict == "diverged" and dropped.first_divergent_step == 5


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_a_scripted_models_lost_position_is_caught_and_blamed():
    own = verify(SPEC + "LOSES_POSITION", drop="none", **FAST).full_resume
    assert own.verdict == "diverged" and own.first_divergent_step == 5
    assert [(f.component, f.status) for f in own.diagnosis] == [("data_cursor", "confirmed")]


class _NoHooks(__import__("torch").nn.Linear):
    def register_forward_pre_hook(self, *args, **kwargs):  # (as a ScriptModule's)
        raise RuntimeError("register_forward_pre_hook is not supported here")


class _RefusesHooks:
    def __init__(self, settings: dict) -> None:
        import torch

        self.model = _NoHooks(3, 1)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)

    def components(self) -> dict:
        return {"params": self.model, "optimizer": self.opt}

    def train_step(self):
        import torch

        loss = self.model(torch.ones(2, 3)).pow(2).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.detach()


def test_hooks_the_check_cannot_put_on_the_program_are_its_own_fault_not_the_programs():
    """Trial 484: the check's forward hook, refused by the model, read "the
    uninterrupted reference run ... failed ... Fix the program so that it
    trains without a restart first"."""
    from resumecheck import Target
    from resumecheck.errors import ReferenceFailed

    with pytest.raises(ReferenceFailed) as caught:
        verify(Target(factory=_RefusesHooks, steps=4, resume_at=(2,)), drop="none", **FAST)
    said = str(caught.value)
    assert "resumecheck's own tracing (its hooks) raised RuntimeError: register_forward_pre_hook " \
        "is not supported here" in said, said
    assert "as they were put on the program before its first step: a fault of resumecheck" in said
    assert "Fix the program" not in said
