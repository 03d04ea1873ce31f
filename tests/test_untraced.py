"""A program whose components wrap the model and the optimizer (as users write
state-dict wrappers for FSDP) gives the tracer no module and no optimizer to
hook: the report says what was not traced and what to declare, since a
divergence then shows first in the loss, a step after it begins."""

from __future__ import annotations

import torch

from resumecheck import StepOutput, Target
from resumecheck.engine import verify

X = torch.linspace(-1, 1, 24).reshape(8, 3)
Y = X @ torch.tensor([[0.5], [-1.0], [2.0]])


class Wrapped:
    """state_dict()/load_state_dict() around an object, hiding what it wraps."""

    def __init__(self, inner) -> None:
        self._inner = inner

    def state_dict(self) -> dict:
        return self._inner.state_dict()

    def load_state_dict(self, state: dict) -> None:
        self._inner.load_state_dict(state)


class WrapperProgram:
    expose = False

    def __init__(self, config: dict) -> None:
        torch.manual_seed(0)
        net = torch.nn.Linear(3, 1)
        opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
        self._net, self._opt = net, opt
        if self.expose:
            self.model, self.optimizer = net, opt

    def components(self) -> dict:
        return {"params": Wrapped(self._net), "optimizer": Wrapped(self._opt)}

    def train_step(self) -> StepOutput:
        loss = torch.nn.functional.mse_loss(self._net(X), Y)
        loss.backward()
        self._opt.step()
        self._opt.zero_grad()
        return StepOutput(loss=loss.detach())


class ExposedProgram(WrapperProgram):
    expose = True


HIDDEN = Target(factory=WrapperProgram, steps=4, resume_at=(2,))
EXPOSED = Target(factory=ExposedProgram, steps=4, resume_at=(2,))


def test_a_program_that_hides_its_model_and_optimizer_is_told_what_was_not_traced():
    report = verify(HIDDEN, drop="none", noise_seeds=0, isolation="inprocess")
    assert [line.split(":")[0] for line in report.untraced] == [
        "parameters and gradients", "learning rate"]
    assert "`model` attribute" in report.untraced[0]
    table = report.render()
    assert "not traced: parameters and gradients" in table
    assert report.to_json()["untraced"] == report.untraced


def test_its_twin_with_model_and_optimizer_attributes_traces_everything():
    report = verify(EXPOSED, drop="none", noise_seeds=0, isolation="inprocess")
    assert report.untraced == []
    assert "not traced" not in report.render()


def test_a_model_no_step_calls_and_no_samples_says_the_inputs_were_not_traced():
    """Trial 219: a GAN's two networks declared as one nn.ModuleDict, which no
    step calls, read `5 loss` where the data (noise from a lost stream) differed,
    and nothing said the inputs were not traced (fixtures/trust/module_dict_gan.py)."""
    spec = "fixtures.trust.module_dict_gan:"
    report = verify(spec + "MODULE_DICT", drop="none", noise_seeds=0)
    assert [line.split(":")[0] for line in report.untraced] == ["the model's inputs"]
    assert "nn.ModuleDict" in report.untraced[0] and "StepOutput(samples=" in report.untraced[0]
    assert report.full_resume.first_divergent_quantity == "loss"
    # the generator declared as params: its inputs are traced, and the data shows first
    report = verify(spec + "GENERATOR_AS_PARAMS", drop="none", noise_seeds=0)
    assert report.untraced == []
    assert report.full_resume.first_divergent_quantity == "data (the model's inputs)"
    assert report.full_resume.first_divergent_step == 5


def test_on_many_ranks_samples_a_step_returned_are_traced_inputs():
    """Trial 258: a DDP program whose steps returned their samples was told on
    every report that no step returned them: its keys carry their rank."""
    from resumecheck.trace import StepRecord
    from resumecheck.verdict import untraced

    def records(*keys: str) -> list[StepRecord]:
        return [StepRecord(step=1, loss=0.5, digests=dict.fromkeys(keys, "d"), lr=[0.1])]

    assert untraced(records("param:0.weight[rank 0]", "data[rank 0]",
                            "param:0.weight[rank 1]", "data[rank 1]")) == []
    assert untraced(records("param:0.weight[rank 0]", "inputs:x[rank 0]")) == []
    assert [line.split(":")[0] for line in untraced(records("param:0.weight[rank 0]"))] == [
        "the model's inputs"]


def test_a_model_called_with_no_tensor_is_not_said_to_be_called_in_no_step():
    """Trial 579: a policy called with a Python int state (it makes its one-hot
    tensor itself) was said to be "called in no step"."""
    from resumecheck.trace import StepRecord
    from resumecheck.verdict import untraced

    def records(calls: int) -> list[StepRecord]:
        return [StepRecord(step=1, loss=0.5, digests={"param:0.weight": "d"}, lr=[0.1],
                           calls=calls)]

    [called] = untraced(records(calls=60))
    assert called.startswith("the model's inputs: the module traced as the model was called "
                             "with no tensor (a number, or another object it makes its "
                             "tensors from)"), called
    assert "called in no step" not in called
    [never] = untraced(records(calls=0))
    assert "was called in no step" in never


class _CountsEvaluations(WrapperProgram):
    """Its own evaluation count, declared, which the checkpoint loses: only the
    end state differs, and the steps' parameters were never traced."""

    def __init__(self, config: dict) -> None:
        super().__init__(config)
        self.evaluations = 0

    def components(self) -> dict:
        from resumecheck import Attr

        return {**super().components(), "evaluations": Attr(self, "evaluations")}

    def train_step(self) -> StepOutput:
        self.evaluations += 1
        return super().train_step()


def test_an_end_state_alone_otherwise_does_not_claim_untraced_steps_matched():
    """A trial: "every step's loss, gradients and parameters match" beside
    "not traced: parameters and gradients"."""
    report = verify(Target(factory=_CountsEvaluations, steps=4, resume_at=(2,)),
                    drop=["evaluations"], noise_seeds=0)
    [run] = [r for r in report.runs if r.dropped == ["evaluations"]]
    assert run.explanation.startswith(
        "the final state of evaluations differs (every step's loss matches; its parameters and "
        "gradients were not traced)"), run.explanation
    assert "gradients and parameters match" not in report.render()


class _ModelOnly(_CountsEvaluations):
    """Its model an attribute, its optimizer hidden in a wrapper (trial 399: a
    GAN's two optimizers held by one object of its own): parameters traced,
    no gradient and no learning rate."""

    def __init__(self, config: dict) -> None:
        super().__init__(config)
        self.model = self._net


def test_a_model_traced_without_its_optimizer_says_its_gradients_were_not_traced():
    report = verify(Target(factory=_ModelOnly, steps=4, resume_at=(2,)),
                    drop=["evaluations"], noise_seeds=0)
    [line] = report.untraced
    assert line.startswith("gradients and learning rate: no torch optimizer was found"), line
    assert "declare each optimizer as a component of its own" in line
    [run] = [r for r in report.runs if r.dropped == ["evaluations"]]
    assert run.explanation.startswith(
        "the final state of evaluations differs (every step's loss and parameters match; its "
        "gradients were not traced)"), run.explanation


def test_parameters_and_an_update_written_by_hand_are_said_to_be_untraceable():
    """Trial 617: parameters in a dict of tensors and an Adam written by hand
    were told to give the program `model` and `optimizer` attributes, which
    it had no module or torch optimizer for."""
    from resumecheck.trace import StepRecord
    from resumecheck.verdict import untraced

    lines = untraced([StepRecord(step=1, loss=0.5, digests={"data": "d"}, lr=None)])
    assert lines[0].endswith("(give the program a `model` attribute that is the nn.Module "
                             "holding them; parameters kept outside any, in a dict of tensors, "
                             "cannot be traced)"), lines
    assert lines[-1].endswith("an update written by hand, with no torch.optim.Optimizer, "
                              "cannot be traced, and a rate that differs shows first in what "
                              "that step's update changes)"), lines
