"""Float samples of another size are said by how many values each run read,
not as two tensor types (trial 179: "samples of step 8: torch.float64[2048],
expected torch.float64[1792]" of an Accelerate loop's token ids, which it
fingerprints as floats)."""

from __future__ import annotations

import torch

from resumecheck import Attr, StepOutput, Target, verify

FAST = {"noise_seeds": 0, "drop": "none", "check_determinism": False}


class Rows:
    """Batches of 4 rows of 10, the last of each epoch 2; its load() puts the
    cursor on the epoch's last batch, whatever was saved."""

    def __init__(self, settings: dict) -> None:
        torch.manual_seed(0)
        self.x = torch.randn(10, 3)
        self.model = torch.nn.Linear(3, 1)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.cursor = 0

    def components(self) -> dict:
        return {"params": self.model, "optimizer": self.opt, "cursor": Attr(self, "cursor")}

    def train_step(self) -> StepOutput:
        rows = self.x[self.cursor:self.cursor + 4]
        self.cursor = (self.cursor + 4) % 12
        loss = self.model(rows).pow(2).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return StepOutput(loss=loss.item(), samples=rows)  # (the rows themselves: floats)

    def save(self, path: str) -> None:
        torch.save({"model": self.model.state_dict(), "opt": self.opt.state_dict()}, path)

    def load(self, path: str) -> None:
        state = torch.load(path)
        self.model.load_state_dict(state["model"])
        self.opt.load_state_dict(state["opt"])
        self.cursor = 8


def test_float_samples_of_another_size_are_said_by_their_counts():
    report = verify(Target(factory=Rows, steps=4, resume_at=(1,)), **FAST)
    own = report.full_resume
    assert own.first_divergent_step == 2
    assert "samples of step 2: 6 values, 12 in the reference" in own.explanation, own.explanation
    assert "torch.float32[" not in own.explanation
