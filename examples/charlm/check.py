"""Wrapping examples/charlm/train.py for resumecheck: `resumecheck run examples/charlm/check.py:TARGET`."""

import resumecheck
from resumecheck import Attr, RNGState, StepOutput

import train  # the user's script, beside this file


class Program:
    def __init__(self, settings: dict) -> None:
        self.state = train.build(train.Config(**settings))  # {} -> the script's defaults

    def components(self) -> dict:
        s = self.state
        return {
            "params": s.model, "optimizer": s.optimizer,
            "rng": RNGState(streams=["torch"]),  # get_batch and dropout draw from torch only
            "global_step": Attr(s, "iter_num"),  # get_lr() reads it
            "config": Attr(s, "cfg", to_state=train.asdict, from_state=lambda d: train.Config(**d)),
        }

    def train_step(self) -> StepOutput:
        loss, batch_starts = train.train_step(self.state)
        return StepOutput(loss=loss, samples=batch_starts)

    def save(self, path: str) -> None:
        train.save(self.state, path)

    def load(self, path: str) -> None:
        self.state = train.load(path)  # components() is read again after load


# The run was launched as `train.py --dropout 0.2 --grad-clip 0.5`.
TARGET = resumecheck.Target(
    factory=Program, run_config={"dropout": 0.2, "grad_clip": 0.5}, steps=12, resume_at=(5,),
    seed_key="seed",
)
