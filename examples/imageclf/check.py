"""Wrapping examples/imageclf/train.py for resumecheck: `resumecheck run examples/imageclf/check.py:TARGET`."""

import resumecheck
from resumecheck import Attr, RNGState, StepOutput

import train  # the user's script, beside this file


class Program:
    def __init__(self, settings: dict) -> None:
        self.trainer = train.Trainer(train.Config(**settings))

    def components(self) -> dict:
        t = self.trainer
        return {
            "params": t.model, "optimizer": t.opt, "scheduler": t.sched,
            "data_cursor": t.loader,  # a StatefulDataLoader is a component as it is
            "rng": RNGState({"loader": t.loader_gen}, streams=["torch"]),
            "global_step": Attr(t, "step"), "sampler_epoch": Attr(t, "epoch"),
        }

    def train_step(self) -> StepOutput:
        loss, indices = self.trainer.train_step()
        return StepOutput(loss=loss, samples=indices)

    def save(self, path: str) -> None:
        self.trainer.save(path)

    def load(self, path: str) -> None:
        self.trainer.load(path)


TARGET = resumecheck.Target(factory=Program, steps=14, resume_at=(8,))
