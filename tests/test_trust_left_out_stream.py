"""A global stream that the declared RNGState leaves out (its ``streams=``)
and the run draws from is named as not compared (a trial: a per-rank Python
random augmentation, left out of ``RNGState(streams=("torch",))`` as the
README's wrapper narrows it, was named nowhere)."""

from __future__ import annotations

import random

import pytest
import torch
from torch import nn

import resumecheck
from resumecheck import Attr, RNGState, StepOutput, verify

pytestmark = pytest.mark.e2e


class Flips:
    """Flips the sign of its inputs with Python's global stream."""

    streams: tuple[str, ...] | None = ("torch",)

    def __init__(self, settings: dict) -> None:
        torch.manual_seed(0)
        random.seed(0)
        self.x, self.y = torch.randn(32, 4), torch.randn(32, 1)
        self.model = nn.Linear(4, 1)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.step = 0

    def components(self) -> dict:
        out = {"params": self.model, "optimizer": self.optimizer,
               "global_step": Attr(self, "step")}
        if self.streams is not None:
            out["rng"] = RNGState(streams=self.streams)
        return out

    def train_step(self) -> StepOutput:
        idx = torch.randint(0, 32, (8,))
        x = self.x[idx] * (-1.0 if random.random() < 0.5 else 1.0)
        loss = nn.functional.mse_loss(self.model(x), self.y[idx])
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        self.step += 1
        return StepOutput(loss=loss.item(), samples=idx)


class Declared(Flips):
    streams = ("torch", "python")


class NoStreams(Flips):
    streams = None


def _check(factory):
    return verify(resumecheck.Target(factory=factory, steps=8, resume_at=(4,)), drop="none",
                  noise_seeds=0, check_determinism=False)


def test_a_stream_the_declared_rng_leaves_out_is_named_with_what_to_add():
    report = _check(Flips)
    assert report.declared_state_complete is False
    assert report.undeclared == [
        "Python's random stream (the run drew from it, or seeded it again, and the declared "
        "RNGState leaves it out: add 'python' to its streams= to check that it resumes)"]
    assert "`Python's random stream`" in report.incomplete_state_notice()


def test_declared_it_resumes_and_without_any_rng_component_nothing_is_said_of_streams():
    declared = _check(Declared)
    assert declared.equivalent and declared.undeclared == []
    assert _check(NoStreams).undeclared == []
