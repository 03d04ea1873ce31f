"""A data position that its load sets only when the next iterator is made (as
torchdata's StatefulDataLoader does) reads otherwise right after the restore;
where every step after it reads the uninterrupted run's samples, its place came
back, and it is not said to "not load back its own state" (trial 847)."""

from __future__ import annotations

import torch

from resumecheck import StepOutput, Target, verify
from resumecheck.report import LOSSY_ONE


class _LazyCursor:
    def __init__(self) -> None:
        self.pos, self.pending = 0, None

    def state_dict(self) -> dict:
        return {"pos": self.pos}

    def load_state_dict(self, state: dict) -> None:
        self.pending = state["pos"]  # (set when the next batch is fetched)

    def next_index(self) -> int:
        if self.pending is not None:
            self.pos, self.pending = self.pending, None
        i = self.pos % 4
        self.pos += 1
        return i


class _Script:
    def __init__(self, settings: dict) -> None:
        torch.manual_seed(0)
        self.model = torch.nn.Linear(3, 1)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.x = torch.randn(8, 3, generator=torch.Generator().manual_seed(1))
        self.cursor = _LazyCursor()
        self.calls = 0  # (undeclared, read by the loss: the engine's restart departs)

    def components(self) -> dict:
        return {"params": self.model, "optimizer": self.opt, "data_cursor": self.cursor}

    def train_step(self) -> StepOutput:
        i = self.cursor.next_index() * 2
        self.calls += 1
        loss = self.model(self.x[i:i + 2]).pow(2).mean() * (1 + 0.01 * self.calls)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return StepOutput(loss=loss.item(), samples=torch.arange(i, i + 2))


def test_a_position_set_at_the_next_fetch_whose_samples_match_is_no_lossy_load():
    report = verify(Target(factory=_Script, steps=8, resume_at=(3,)), drop="none",
                    noise_seeds=0, check_determinism=False)
    engine = report.full_resume
    assert engine.verdict == "diverged" and engine.first_divergent_quantity == "loss", engine
    assert "data_cursor" in {f.component for f in engine.diagnosis}
    assert engine.lossy_loads() == []
    notice = report.incomplete_state_notice() or ""
    assert LOSSY_ONE not in notice, notice
    assert "`data_cursor` did not come back" not in engine.explanation, engine.explanation


def test_the_plugins_row_reads_the_json_alike():
    """Trial 847: the session row read "engine resume: DIVERGED (a load_state_dict()
    loses state)" of the same position; the row, built from the JSON on the xdist
    controller, asks the same predicate."""
    from resumecheck.pytest_plugin import _engine_why, _lossy_loads

    report = verify(Target(factory=_Script, steps=8, resume_at=(3,)), drop="none",
                    noise_seeds=0, check_determinism=False)
    run = report.full_resume.to_json()
    assert _lossy_loads(run) == []
    assert _engine_why(run, {"explanation": ""}) != "a load_state_dict() loses state"
