"""A loss scale of the program's own (plain numbers, no scaler the tracer
knows): its growth count lost by the load makes the restart step a step the
uninterrupted run skipped on an overflow. The first divergence is that skipped
step, not "gradient of ... (N gradients one run lacks)" (trial 851)."""

from __future__ import annotations

import torch

from resumecheck import Attr, StepOutput, Target, verify

LIMIT = 40.0  # (a scale above it "overflows": the step is skipped and the scale halved)


class _Script:
    keeps_good = True

    def __init__(self, settings: dict) -> None:
        torch.manual_seed(0)
        self.model = torch.nn.Linear(3, 1)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.05)
        self.x = torch.randn(8, 3, generator=torch.Generator().manual_seed(1))
        self.scale, self.good, self.step = 16.0, 0, 0

    def components(self) -> dict:
        return {"params": self.model, "optimizer": self.opt, "global_step": Attr(self, "step"),
                "scaler": Attr(self, "scale")}

    def train_step(self) -> StepOutput:
        i = self.step % 4 * 2
        loss = self.model(self.x[i:i + 2]).pow(2).mean()
        self.opt.zero_grad()
        (loss * self.scale).backward()
        if self.scale > LIMIT:
            self.scale, self.good = self.scale / 2, 0  # (overflow: skipped)
        else:
            for p in self.model.parameters():
                p.grad /= self.scale
            self.opt.step()
            self.good += 1
            if self.good == 2:
                self.scale, self.good = self.scale * 2, 0
        self.step += 1
        return StepOutput(loss=loss.item(), samples=torch.arange(i, i + 2))

    def save(self, path: str) -> None:
        torch.save({"model": self.model.state_dict(), "opt": self.opt.state_dict(),
                    "scale": self.scale, "good": self.good, "step": self.step}, path)

    def load(self, path: str) -> None:
        ck = torch.load(path, weights_only=True)
        self.model.load_state_dict(ck["model"])
        self.opt.load_state_dict(ck["opt"])
        self.scale, self.step = ck["scale"], ck["step"]
        if self.keeps_good:
            self.good = ck["good"]


class _LosesGood(_Script):
    keeps_good = False


def test_a_skipped_step_one_run_stepped_is_the_first_divergence():
    report = verify(Target(factory=_LosesGood, steps=12, resume_at=(3,)), drop="none",
                    noise_seeds=0, check_determinism=False)
    own = report.full_resume
    assert own.verdict == "diverged" and own.first_divergent_quantity == "skipped step", \
        (own.first_divergent_step, own.first_divergent_quantity)
    assert own.divergence_detail.startswith(f"step {own.first_divergent_step}: "), \
        own.divergence_detail
    assert "skipped its optimizer step (a loss scale's overflow, or a step the program skips), " \
        "which " in own.divergence_detail, own.divergence_detail
    assert verify(Target(factory=_Script, steps=12, resume_at=(3,)), drop="none",
                  noise_seeds=0, check_determinism=False).equivalent
