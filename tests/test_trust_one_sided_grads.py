"""Where both runs step at the first step that departs and some parameters
have a gradient in one run only, the first divergence names them (trial 610:
stochastic depth dropped a block in one run and not the other, and no figure
named its gradients, which no comparison of values reaches)."""

from __future__ import annotations

import random

import torch

from resumecheck import Attr, RNGState, StepOutput, Target, verify


class _Depth:
    """Uses its second layer where a coin of its own says so; its checkpoint
    leaves the coin out, so a restart tosses it anew."""

    def __init__(self, settings: dict) -> None:
        torch.manual_seed(0)
        self.a, self.b = torch.nn.Linear(4, 4), torch.nn.Linear(4, 1)
        self.model = torch.nn.ModuleDict({"a": self.a, "b": self.b})
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.coin = random.Random(0)  # (0.844, 0.758, 0.420, 0.259, ...: b at steps 3 and 4)
        self.x = torch.randn(8, 4)
        self.step = 0

    def components(self) -> dict:
        return {"params": self.model, "optimizer": self.opt, "rng": RNGState(streams=["torch"]),
                "global_step": Attr(self, "step")}

    def train_step(self) -> StepOutput:
        h = self.a(self.x)
        out = self.b(h) if self.coin.random() < 0.5 else h.mean(1, keepdim=True)
        loss = (out ** 2).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.step += 1
        return StepOutput(loss=loss, samples=torch.arange(8))

    def save(self, path: str) -> None:
        torch.save({"m": self.model.state_dict(), "o": self.opt.state_dict(), "s": self.step},
                   path)

    def load(self, path: str) -> None:
        state = torch.load(path)
        self.model.load_state_dict(state["m"])
        self.opt.load_state_dict(state["o"])
        self.step = state["s"]


def test_gradients_one_run_has_at_the_first_step_that_departs_are_named():
    report = verify(Target(factory=_Depth, steps=5, resume_at=(3,)), drop="none",
                    noise_seeds=0, check_determinism=False)
    own = report.full_resume
    assert (own.verdict, own.first_divergent_step, own.first_divergent_quantity) == (
        "diverged", 4, "loss"), own.explanation
    assert own.divergence_detail == (
        "at step 4 the uninterrupted run has a gradient of `b.bias`, `b.weight`, which the "
        "resumed run's has none of (parameters one run's loss reached and the other's did "
        "not: a part of the model one used, or one left frozen in the other)")
