"""A checkpoint that keeps a model's parameters and not its buffers ends
otherwise in ``params`` while every step matches: the why says that what
differs is its buffers, which no step compares (trial 189: BatchNorm's running
statistics a checkpoint lost, which an evaluation read at step 12, read as
nothing wrong before the end)."""

from __future__ import annotations

import torch

from resumecheck import Attr, StepOutput, Target, verify


class ParametersOnly:
    def __init__(self, settings: dict) -> None:
        torch.manual_seed(0)
        self.x, self.y = torch.randn(8, 3), torch.randn(8, 1)
        self.model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4),
                                         torch.nn.Linear(4, 1))
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.step = 0

    def components(self) -> dict:
        return {"params": self.model, "optimizer": self.opt, "global_step": Attr(self, "step")}

    def train_step(self) -> StepOutput:
        loss = torch.nn.functional.mse_loss(self.model(self.x), self.y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.step += 1
        return StepOutput(loss=loss.item(), samples=torch.arange(8))

    def save(self, path: str) -> None:
        torch.save({"model": dict(self.model.named_parameters()), "opt": self.opt.state_dict(),
                    "step": self.step}, path)

    def load(self, path: str) -> None:
        state = torch.load(path)
        self.model.load_state_dict(state["model"], strict=False)
        self.opt.load_state_dict(state["opt"])
        self.step = state["step"]


def test_params_ending_otherwise_with_every_step_matching_is_said_of_its_buffers():
    own = verify(Target(factory=ParametersOnly, steps=6, resume_at=(3,)), noise_seeds=0,
                 drop="none", check_determinism=False).full_resume
    assert own.verdict == "diverged" and own.ended_otherwise == ["params"]
    assert ("(every step's loss, gradients and parameters match); of params, what differs at "
            "the end is its buffers, which no step compares") in own.explanation, \
        own.explanation
