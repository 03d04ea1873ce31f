"""An in-process segment's end state (the program runs no more) is kept
uncopied until this process runs a program again: then it is copied, so that
nothing a later program does, even to tensors it shares with the earlier
one, can change what the judging reads."""

from __future__ import annotations

import torch

from resumecheck.capture import load_checkpoint, save_capture, settle_captures
from resumecheck.compare import digest
from resumecheck.program import BuiltProgram, Target
from resumecheck.runner import run_segment
from resumecheck.segments import SegmentSpec
from resumecheck.tiny import build

_SHARED = torch.nn.Linear(4, 2)
"""A model at module level, reused by every build (as some scripts do)."""


class _Reused:
    def __init__(self, config):
        self.model = _SHARED
        with torch.no_grad():  # the build re-initialises the shared model in place
            self.model.weight.fill_(config.get("init", 0.5))
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)

    def components(self):
        return {"params": self.model, "optimizer": self.optimizer}

    def train_step(self):
        self.optimizer.zero_grad()
        loss = self.model(torch.ones(3, 4)).square().mean()
        loss.backward()
        self.optimizer.step()
        return loss


def _parameter(state):
    return state["components"]["params"]["weight"]


def test_an_end_state_is_kept_uncopied_then_copied_before_a_program_runs(tmp_path):
    built = BuiltProgram.wrap("tiny", build({}))
    built.step(1)
    save_capture(built, str(tmp_path / "first.pt"))  # (its structure is known to load)
    built.step(2)
    end = str(tmp_path / "run.end.pt")
    save_capture(built, end, verify=False, unwritten=True, final=True)
    live = built.component("params").obj.state_dict()
    kept = load_checkpoint(end, read_only=True)["components"]["params"]
    name = next(iter(live))
    assert kept[name].data_ptr() == live[name].data_ptr()  # not copied yet
    at_end = digest(kept)
    settle_captures()
    copied = load_checkpoint(end, read_only=True)["components"]["params"]
    assert copied[name].data_ptr() != live[name].data_ptr()
    built.step(3)  # the program moves on: what was kept does not
    assert digest(load_checkpoint(end, read_only=True)["components"]["params"]) == at_end


def test_a_later_segment_that_reuses_a_module_level_model_leaves_the_end_state_alone(tmp_path):
    target = Target(factory=_Reused, steps=3, resume_at=(1,))
    first = run_segment(SegmentSpec(target_spec=None, workdir=str(tmp_path), name="first",
                                    config={"init": 0.5}, start=0, stop=3, capture_at=[1]),
                        "inprocess", target)
    assert first.error is None and first.end_state
    trained = _parameter(load_checkpoint(first.end_state)).clone()
    assert not torch.equal(trained, torch.full_like(trained, 0.5))  # (it trained)
    second = run_segment(SegmentSpec(target_spec=None, workdir=str(tmp_path), name="second",
                                     config={"init": -3.0}, start=0, stop=1, capture_at=[]),
                         "inprocess", target)
    assert second.error is None
    assert torch.equal(_parameter(load_checkpoint(first.end_state, read_only=True)), trained)
