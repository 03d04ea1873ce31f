import resumecheck
from resumecheck import Attr, RNGState, StepOutput
from dataclasses import asdict

import train_buggy as train


class Cursor:
    """data_cursor: where the loader stands (epoch, batch); restoring replays the reads."""
    def __init__(self, s): self.s = s
    def state_dict(self): return {"epoch": self.s.epoch, "batch": self.s.batch}
    def load_state_dict(self, d): train.fast_forward(self.s, d["epoch"], d["batch"])


class Program:
    steps_per_epoch = 8   # 64 clips, batch 8, drop_last

    def __init__(self, settings):
        self.state = train.build(train.Config(**settings))

    def components(self):
        s = self.state
        return {"params": s.model, "optimizer": s.opt, "scheduler": s.sched,
                "rng": RNGState(streams=["torch"]),
                "data_cursor": Cursor(s),
                "global_step": Attr(s, "step"),
                "config": Attr(s, "cfg", to_state=asdict, from_state=lambda d: train.Config(**d))}

    def train_step(self):
        return StepOutput(loss=train.train_step(self.state))

    def save(self, path): train.save(self.state, path)
    def load(self, path): self.state = train.load(path)


TARGET = resumecheck.Target(factory=Program, steps=24, resume_at=(12,))
