"""Where the engine's own full resume departs and the `not compared` lines
name state the program keeps outside its components, the engine's why points
at them, not at model inputs that were not compared (trial 597: a scheduled
sampling counter no component declared; the why asked to take `samples` out
of a StepOutput whose inputs were the samples themselves)."""

from __future__ import annotations

import torch

from resumecheck import Attr, RNGState, StepOutput, Target, verify
from resumecheck.evidence import SAMPLES_STAND_FOR_DATA


class _Ramp:
    """A loss weight ramped by a count outside any declared component, which
    its own save and load keep; each step returns the indices it read."""

    def __init__(self, settings: dict) -> None:
        torch.manual_seed(0)
        self.data = torch.randn(32, 4)
        self.model = torch.nn.Linear(4, 1)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.ramp = 0
        self.step = 0

    def components(self) -> dict:
        return {"params": self.model, "optimizer": self.opt, "rng": RNGState(streams=["torch"]),
                "global_step": Attr(self, "step")}

    def train_step(self) -> StepOutput:
        idx = (torch.arange(8) + 8 * self.step) % 32
        weight = min(1.0, (self.ramp + 1) / 10)
        loss = (self.model(self.data[idx]) ** 2).mean() * weight
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.ramp += 1
        self.step += 1
        return StepOutput(loss=loss, samples=idx)

    def save(self, path: str) -> None:
        torch.save({"m": self.model.state_dict(), "o": self.opt.state_dict(),
                    "step": self.step, "ramp": self.ramp}, path)

    def load(self, path: str) -> None:
        state = torch.load(path)
        self.model.load_state_dict(state["m"])
        self.opt.load_state_dict(state["o"])
        self.step, self.ramp = state["step"], state["ramp"]


def test_the_engines_why_names_the_undeclared_state_not_the_uncompared_inputs():
    report = verify(Target(factory=_Ramp, steps=6, resume_at=(3,)), drop="none",
                    noise_seeds=0, check_determinism=False)
    assert report.equivalent
    engine = report.engine_resume
    assert engine is not None and engine.verdict == "diverged"
    assert [w.split(" (")[0] for w in report.undeclared] == ["ramp"]
    assert SAMPLES_STAND_FOR_DATA not in engine.explanation, engine.explanation
    assert engine.explanation.endswith(
        "; what no declared component holds: `ramp` (see `not compared`)"), engine.explanation
