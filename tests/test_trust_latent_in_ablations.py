"""A declared component whose state_dict() holds a field its load does not set
(a snapshot taken as each epoch starts, read by no step) is a latent gap of
the engine's full resume; each ablation finds it alike, and its why no longer
names it beside what the drop changed (trial 848: every ablation read
"restored state differs in data_cursor")."""

from __future__ import annotations

import torch

from resumecheck import StepOutput, Target, verify


class _Cursor:
    def __init__(self) -> None:
        self.pos, self.snapshot = 0, 0

    def state_dict(self) -> dict:
        return {"pos": self.pos, "snapshot": self.snapshot}

    def load_state_dict(self, state: dict) -> None:
        self.pos = state["pos"]  # (the snapshot is taken again as the next epoch starts)


class _Script:
    def __init__(self, settings: dict) -> None:
        torch.manual_seed(0)
        self.model = torch.nn.Linear(3, 1)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1, momentum=0.9)
        self.x = torch.randn(8, 3, generator=torch.Generator().manual_seed(1))
        self.cursor = _Cursor()

    def components(self) -> dict:
        return {"params": self.model, "optimizer": self.opt, "data_cursor": self.cursor}

    def train_step(self) -> StepOutput:
        c = self.cursor
        if c.pos % 4 == 0:
            c.snapshot = c.pos + 100
        i = c.pos % 4 * 2
        loss = self.model(self.x[i:i + 2]).pow(2).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        c.pos += 1
        return StepOutput(loss=loss.item(), samples=torch.arange(i, i + 2))


def test_an_ablation_does_not_name_the_full_resumes_latent_gap_in_its_why():
    report = verify(Target(factory=_Script, steps=10, resume_at=(6,)),
                    drop=["params", "optimizer"], noise_seeds=0, check_determinism=False)
    engine = report.full_resume
    assert engine.checkpoint == "engine" and engine.latent_gaps == ["data_cursor"], engine
    for run in report.runs[1:]:
        assert run.verdict == "diverged", run.explanation
        assert "data_cursor" in {f.component for f in run.diagnosis}
        assert "restored state differs in data_cursor" not in run.explanation, run.explanation
