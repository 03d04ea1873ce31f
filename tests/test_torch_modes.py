"""An in-process run starts from a new interpreter's autocast and gradient
modes, whatever its thread holds, and gives the thread's modes back after.

CI once failed 154 tests in one pytest worker: a run stopped by a time bound
inside torch's own ``autocast.__exit__`` (the built-in program trains under
float16 autocast) left the worker's main thread in autocast, with a context
counted open. Every later in-process run there trained in float16 and reused
the cast of its first weights: correct programs were NOT EQUIVALENT, their
loss frozen after the restore."""

from __future__ import annotations

import contextlib

import pytest
import torch

from fixtures.hostile import programs
from resumecheck import verify
from resumecheck.live import LiveProgram
from resumecheck.torch_modes import FRESH, current, put

FAST = {"drop": "none", "noise_seeds": 0}


@contextlib.contextmanager
def _left_open(ctx):
    """``ctx`` entered and, as a run stopped inside its exit leaves it, never
    exited; this thread's modes are put back after the test."""
    before = current()
    ctx.__enter__()
    try:
        yield
    finally:
        put(before)


def test_a_run_after_an_autocast_left_open_is_judged_as_a_new_interpreter_would():
    with _left_open(torch.autocast("cpu", dtype=torch.float16)):
        left = current()
        assert left.nesting == 1 and ("cpu", True, torch.float16) in left.autocast
        report = verify(programs.PLAIN, **FAST)
        assert report.equivalent, report.render()
        assert report.full_resume.verdict == "identical"
        assert current() == left  # (the caller's modes, given back)


def test_a_caller_inside_no_grad_gets_a_run_that_trains_and_its_mode_back():
    with torch.no_grad():
        report = verify(programs.PLAIN, **FAST)
        assert report.equivalent, report.render()
        assert not torch.is_grad_enabled()


def test_the_state_machines_program_restarts_with_fresh_modes():
    with _left_open(torch.autocast("cpu", dtype=torch.float16)):
        left = current()
        live = LiveProgram(programs.PLAIN, {}, {}, work="/nonexistent")
        try:
            assert current() == FRESH
            live.step()
            assert current() == FRESH
        finally:
            live.close()
        assert current() == left


@pytest.mark.parametrize("nesting", [0, 2])
def test_put_sets_the_count_of_open_autocast_contexts(nesting):
    before = current()
    try:
        put(FRESH.__class__(autocast=FRESH.autocast, cache=False, nesting=nesting, grad=False))
        now = current()
        assert (now.nesting, now.cache, now.grad) == (nesting, False, False)
    finally:
        put(before)
    assert current() == before


def test_a_build_that_fails_gives_the_caller_its_modes_back():
    from resumecheck import Target
    from resumecheck.errors import TargetError

    def fails(config):
        raise RuntimeError("no data here")

    with torch.no_grad():
        with pytest.raises(TargetError, match="no data here"):
            LiveProgram(Target(factory=fails, steps=4, resume_at=(2,)), {}, {}, work="/nonexistent")
        assert not torch.is_grad_enabled()


class _SlowToLeave(torch.autocast):
    """An autocast whose exit is slow before it puts the modes back: a step's
    time bound fires inside it, as it once did inside torch's own exit."""

    def __exit__(self, *exc):
        import time

        time.sleep(5)
        return super().__exit__(*exc)


class _StoppedInsideAutocast:
    """Trains under float16 autocast; after a restore its exit is slow."""

    def __init__(self, config: dict) -> None:
        from resumecheck import Attr

        torch.manual_seed(0)
        self.model = torch.nn.Linear(4, 1)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.x, self.y = torch.randn(8, 4), torch.randn(8, 1)
        self.restored = 0
        self.restores = Attr(self, "restored", from_state=lambda v: v + 1)

    def components(self) -> dict:
        return {"params": self.model, "optimizer": self.opt, "restores": self.restores}

    def train_step(self):
        from resumecheck import StepOutput

        cast = _SlowToLeave if self.restored else torch.autocast
        with cast("cpu", dtype=torch.float16):
            loss = torch.nn.functional.mse_loss(self.model(self.x).float(), self.y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return StepOutput(loss=loss.detach())


def test_a_run_stopped_inside_autocasts_exit_leaves_no_autocast_for_the_next_check():
    """The incident itself: a resumed step's time bound fired inside autocast's
    exit, before it put the modes back."""
    from resumecheck import Target

    stopped = Target(factory=_StoppedInsideAutocast, steps=4, resume_at=(2,))
    report = verify(stopped, drop="none", noise_seeds=0, check_determinism=False, timeout=1)
    assert report.full_resume.verdict == "failed" and "took longer than" in (
        report.full_resume.failure or ""), report.render()
    assert current() == FRESH  # (this thread's modes as the check found them)
    assert verify(programs.PLAIN, **FAST).full_resume.verdict == "identical"
