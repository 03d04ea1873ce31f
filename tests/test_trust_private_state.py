"""A scheduler re-created after the load with ``last_epoch`` (as torch's docs
allow), no scheduler state in the checkpoint: every step trains bit for bit
as the reference, and only its private ``_step_count`` (read by torch's
call-order warning alone) ends differently. A trial found the check calling
that NOT EQUIVALENT; a later one (829) found it called a latent gap, which
--strict failed. No rate and no resume point reads it: it is no gap at all."""

from __future__ import annotations

import torch

from resumecheck import Attr, Target, verify

TOTAL = 8


class _Relaunched:
    def __init__(self, settings: dict) -> None:
        torch.manual_seed(0)
        self.model = torch.nn.Linear(4, 1)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.01, momentum=0.9)
        self.sched = torch.optim.lr_scheduler.OneCycleLR(self.opt, max_lr=0.05, total_steps=TOTAL)
        self.x, self.y = torch.randn(16, 4), torch.randn(16, 1)
        self.step = 0

    def components(self) -> dict:
        return {"params": self.model, "optimizer": self.opt, "scheduler": self.sched,
                "global_step": Attr(self, "step")}

    def train_step(self) -> float:
        loss = torch.nn.functional.mse_loss(self.model(self.x), self.y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.sched.step()
        self.step += 1
        return loss.item()

    def save(self, path: str) -> None:
        torch.save({"model": self.model.state_dict(), "opt": self.opt.state_dict(),
                    "step": self.step}, path)

    def load(self, path: str) -> None:
        ck = torch.load(path, weights_only=True)
        self.model.load_state_dict(ck["model"])
        self.opt.load_state_dict(ck["opt"])
        self.step = ck["step"]
        self.sched = torch.optim.lr_scheduler.OneCycleLR(
            self.opt, max_lr=0.05, total_steps=TOTAL, last_epoch=self.step - 1)


def test_only_a_schedulers_count_of_calls_ending_differently_is_no_gap_nor_divergence():
    report = verify(Target(factory=_Relaunched, steps=TOTAL, resume_at=(4,)), drop="none",
                    noise_seeds=0)
    own = report.full_resume
    assert report.equivalent and own.verdict == "identical", report.render()
    assert own.latent_gaps == [] and own.diagnosis == [], (own.latent_gaps, own.diagnosis)
    assert "_step_count" not in report.render()
