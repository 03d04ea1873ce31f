"""A full resume whose every step matched and whose end differs in a
component whose own field the checkpoint lost points at the `not compared`
lines, which name it, not at a diagnosis with nothing on it (trial 627: an
EMA's update count, left out of its state_dict(), and "(see the diagnosis)"
beside no diagnosis line)."""

from __future__ import annotations

import torch

from resumecheck import Attr, RNGState, StepOutput, Target, verify


class _Ema:
    """Shadow weights whose decay warms up with a count its state leaves out."""

    def __init__(self, model: torch.nn.Module) -> None:
        self.model, self.n = model, 0
        self.shadow = {k: v.detach().clone() for k, v in model.state_dict().items()}

    def update(self) -> None:
        decay = min(0.99, (1 + self.n) / (10 + self.n))
        for k, v in self.model.state_dict().items():
            self.shadow[k].mul_(decay).add_(v.detach(), alpha=1 - decay)
        self.n += 1

    def state_dict(self) -> dict:
        return {k: v.clone() for k, v in self.shadow.items()}

    def load_state_dict(self, state: dict) -> None:
        self.shadow = {k: v.clone() for k, v in state.items()}


class _Program:
    def __init__(self, settings: dict) -> None:
        torch.manual_seed(0)
        self.model = torch.nn.Linear(4, 1)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.ema = _Ema(self.model)
        self.x = torch.randn(8, 4)
        self.step = 0

    def components(self) -> dict:
        return {"params": self.model, "optimizer": self.opt, "ema": self.ema,
                "rng": RNGState(streams=["torch"]), "global_step": Attr(self, "step")}

    def train_step(self) -> StepOutput:
        loss = (self.model(self.x) ** 2).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.ema.update()
        self.step += 1
        return StepOutput(loss=loss, samples=torch.arange(8))

    def save(self, path: str) -> None:
        torch.save({"m": self.model.state_dict(), "o": self.opt.state_dict(),
                    "e": self.ema.state_dict(), "s": self.step}, path)

    def load(self, path: str) -> None:
        state = torch.load(path)
        self.model.load_state_dict(state["m"])
        self.opt.load_state_dict(state["o"])
        self.ema.load_state_dict(state["e"])
        self.step = state["s"]


def test_an_end_state_headline_points_at_the_lines_that_name_the_lost_field():
    report = verify(Target(factory=_Program, steps=6, resume_at=(3,)), drop="none",
                    noise_seeds=0, check_determinism=False)
    own = report.full_resume
    assert own.steps_match() and own.ended_otherwise == ["ema"], own.explanation
    assert not any(f.component == "ema" for f in own.diagnosis)
    assert any(line.startswith("ema.n ") for line in report.undeclared), report.undeclared
    headline = report.render().splitlines()[1]
    assert headline.endswith("that reads it may differ (see the `not compared` lines)"), \
        headline
