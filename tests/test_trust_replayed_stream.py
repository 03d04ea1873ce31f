"""A stream the checkpoint never held, seeded again as the program is built
and moved on by its load()'s replay of the batches the epoch had read, stands
where the uninterrupted run's stood at an earlier step: the words name that
cause too (trials 592, 594: "set back to a state kept then, or seeded again
as it was then (a seed from an epoch's number)", neither of which the
program did; ``evidence._set_back``)."""

from __future__ import annotations

import torch

from resumecheck import Attr, RNGState, StepOutput, Target, verify


class _Replays:
    """Four batches an epoch; each batch's augmentation draws 5000 values from
    torch's stream (beyond the offset search); load() seeds nothing back and
    replays the epoch's batches already read."""

    steps_per_epoch = 4

    def __init__(self, settings: dict) -> None:
        torch.manual_seed(0)
        self.model = torch.nn.Linear(4, 1)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.data, self.step = torch.randn(16, 4), 0

    def batch(self, i: int) -> torch.Tensor:
        noise = torch.rand(5000)[:4].reshape(4, 1)
        return self.data[(i % 4) * 4:(i % 4) * 4 + 4] + noise

    def components(self) -> dict:
        return {"params": self.model, "optimizer": self.opt,
                "rng": RNGState(streams=["torch"]), "global_step": Attr(self, "step")}

    def train_step(self) -> StepOutput:
        loss = self.model(self.batch(self.step)).pow(2).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.step += 1
        return StepOutput(loss=loss)

    def save(self, path: str) -> None:
        torch.save({"m": self.model.state_dict(), "o": self.opt.state_dict(),
                    "step": self.step}, path)

    def load(self, path: str) -> None:
        state = torch.load(path)
        self.model.load_state_dict(state["m"])
        self.opt.load_state_dict(state["o"])
        self.step = state["step"]
        for i in range(self.step - self.step % 4, self.step):  # (the epoch's batches read)
            self.batch(i)


def test_a_stream_moved_by_the_loads_replay_names_that_cause():
    own = verify(Target(factory=_Replays, steps=8, resume_at=(6,)), drop="none",
                 noise_seeds=0).full_resume
    assert own.verdict == "diverged"
    [offset] = own.stream_offsets
    assert "is where the uninterrupted run's was at the start of step 3 (4 steps earlier)" \
        in offset.detail, offset.detail
    assert ("or not restored at all and moved on from where the build seeded it by draws the "
            "restore made (batches already read, replayed through what draws from it)") \
        in offset.detail
