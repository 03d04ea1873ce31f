"""Streams no step of the uninterrupted run drew from, which the resumed run
never moved either, are no finding at a later restore of a run that had
diverged (trial 184: a GAN that draws only from torch's stream and lost its
discriminator's optimizer read "rng (restored at 11): Python random stream,
numpy global stream differ ... (after the run had diverged ...)", which its
correct twin never said)."""

from __future__ import annotations

import torch

from resumecheck import Attr, RNGState, StepOutput, Target, verify

FAST = {"noise_seeds": 0, "drop": "none", "check_determinism": False}


class TorchOnly:
    """Dropout draws from torch's stream only; the checkpoint keeps that stream
    and loses the optimizer's moments when ``forgets``."""

    forgets = True

    def __init__(self, settings: dict) -> None:
        torch.manual_seed(0)
        self.x = torch.randn(8, 3)
        self.model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Dropout(0.3),
                                         torch.nn.Linear(4, 1))
        self.opt = torch.optim.Adam(self.model.parameters(), lr=0.05)
        self.step = 0

    def components(self) -> dict:
        return {"params": self.model, "optimizer": self.opt, "rng": RNGState(),
                "global_step": Attr(self, "step")}

    def train_step(self) -> StepOutput:
        loss = self.model(self.x).pow(2).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.step += 1
        return StepOutput(loss=loss.item(), samples=torch.arange(8))

    def save(self, path: str) -> None:
        torch.save({"model": self.model.state_dict(), "step": self.step,
                    "torch": torch.get_rng_state(),
                    **({} if self.forgets else {"opt": self.opt.state_dict()})}, path)

    def load(self, path: str) -> None:
        state = torch.load(path)
        self.model.load_state_dict(state["model"])
        if "opt" in state:
            self.opt.load_state_dict(state["opt"])
        self.step = state["step"]
        torch.set_rng_state(state["torch"])


class KeepsIt(TorchOnly):
    forgets = False


def test_idle_streams_are_no_finding_after_the_run_diverged():
    lost = verify(Target(factory=TorchOnly, steps=8, resume_at=(3, 6)), **FAST)
    assert not lost.equivalent
    assert [f.component for f in lost.full_resume.diagnosis] == ["optimizer"], \
        lost.full_resume.diagnosis
    kept = verify(Target(factory=KeepsIt, steps=8, resume_at=(3, 6)), **FAST)
    assert kept.equivalent and kept.full_resume.diagnosis == []
