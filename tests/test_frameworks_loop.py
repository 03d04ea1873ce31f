"""The driver of framework-owned loops (resumecheck.frameworks._loop), with a
loop of our own standing in for a framework: a loop that calls back after
each optimizer step, checkpoints from inside the loop and resumes from a
path. No framework needs to be installed.
"""

from __future__ import annotations

import gc
import threading

import pytest
import torch

import resumecheck
from resumecheck import Target
from resumecheck.errors import CheckpointError, StepError
from resumecheck.frameworks._loop import LiveState, LoopProgram, LoopRecord
from resumecheck.report import DIVERGED, IDENTICAL


class OwnLoop(LoopProgram):
    """A framework-like loop: it builds its optimizer and scheduler inside
    ``run``, parks after each step, and saves and resumes its own checkpoint."""

    framework = "OwnLoop"

    def __init__(self, settings, *, forget_scheduler=False, fail_at=None, steps=8):
        super().__init__()
        torch.manual_seed(settings.get("seed", 0))
        self.model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Dropout(0.2),
                                         torch.nn.Linear(8, 1))
        self.live_objects: dict = {}
        self.forget_scheduler = forget_scheduler
        self.fail_at = fail_at
        self.steps = steps

    def _runner(self):
        channel, model, live = self._channel, self.model, self.live_objects
        fail_at, steps, pending = self.fail_at, self.steps, self.pending
        data = torch.randn(40, 4, generator=torch.Generator().manual_seed(1))

        def run(resume_from):
            opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
            sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 1.0 / (1 + s))
            live.update(opt=opt, sched=sched, step=0)
            if resume_from is not None:
                state = torch.load(resume_from, weights_only=True)
                model.load_state_dict(state["model"])
                opt.load_state_dict(state["opt"])
                if "sched" in state:
                    sched.load_state_dict(state["sched"])
                torch.set_rng_state(state["rng"])
                live["step"] = state["step"]
            for load in pending.pop("started", []):
                load()
            channel.park("started", live["step"])
            while live["step"] < steps:
                if live["step"] + 1 == fail_at:
                    raise ValueError("the loop broke")
                x = data[live["step"] % 5 * 8:][:8]
                loss = model(x).pow(2).mean()
                loss.backward()
                opt.step()
                sched.step()
                opt.zero_grad()
                live["step"] += 1
                channel.park("step", LoopRecord(step=live["step"], loss=loss.detach(),
                                                samples=x))

        return run

    def _save(self, path):
        live = self.live_objects
        state = {"model": self.model.state_dict(), "opt": live["opt"].state_dict(),
                 "sched": live["sched"].state_dict(), "rng": torch.get_rng_state(),
                 "step": live["step"]}
        if self.forget_scheduler:
            del state["sched"]
        torch.save(state, path)

    def components(self):
        live = self.live_objects
        return {
            "params": self.model,
            "optimizer": LiveState(self, lambda: live["opt"]),
            "scheduler": LiveState(self, lambda: live["sched"]),
            "global_step": LiveState(self, lambda: live, dump=lambda d: {"value": d["step"]},
                                     load=lambda d, s: d.update(step=s["value"])),
            "rng": resumecheck.RNGState(streams=["torch"]),
        }


def loop_threads():
    return [t for t in threading.enumerate() if t.name == "resumecheck OwnLoop loop"]


def test_a_loop_program_resumes_through_its_own_checkpoint_and_engine_restores_wait():
    target = Target(factory=OwnLoop, steps=8, resume_at=(3,))
    report = resumecheck.verify(target, drop=["scheduler"], noise_seeds=0,
                                check_determinism=False)
    own, engine, scheduler = report.runs
    assert (own.checkpoint, own.verdict) == ("program", IDENTICAL), own.explanation
    assert (engine.checkpoint, engine.verdict) == ("engine", IDENTICAL), engine.explanation
    assert scheduler.verdict == DIVERGED
    assert not loop_threads()


def test_a_checkpoint_without_the_scheduler_is_blamed_on_it():
    target = Target(factory=lambda s: OwnLoop(s, forget_scheduler=True), steps=8,
                    resume_at=(3,))
    run = resumecheck.verify(target, drop="none", noise_seeds=0,
                             check_determinism=False).runs[0]
    assert run.verdict == DIVERGED
    assert [f.component for f in run.diagnosis] == ["scheduler"]


def test_an_exception_in_the_loop_fails_the_step_with_its_frames():
    program = OwnLoop({}, fail_at=2)
    try:
        program.train_step()
        with pytest.raises(StepError) as info:
            program.train_step()
    finally:
        program.close()
    assert info.value.step == 2
    assert "OwnLoop's loop raised ValueError: the loop broke" in str(info.value)
    assert "in run" in str(info.value)
    assert not loop_threads()


def test_the_loop_ending_first_and_a_late_load_say_what_happened():
    program = OwnLoop({}, steps=1)
    try:
        program.train_step()
        with pytest.raises(StepError, match="ended after step 1"):
            program.train_step()
        with pytest.raises(RuntimeError, match="already running"):
            program.load("somewhere")
    finally:
        program.close()


def test_a_loop_that_fails_while_restoring_says_so_and_a_resumed_loop_counts_from_its_step(
        tmp_path):
    program = OwnLoop({})
    program.load(str(tmp_path / "missing.pt"))
    with pytest.raises(CheckpointError, match="before its first step") as info:
        program.train_step()
    assert "OwnLoop's loop raised FileNotFoundError" in str(info.value)
    assert info.value.path == str(tmp_path / "missing.pt")
    program.close()

    first = OwnLoop({}, steps=3)
    first.train_step()
    first.train_step()
    first.save(str(tmp_path / "at2.pt"))
    first.close()
    resumed = OwnLoop({}, steps=3)
    resumed.load(str(tmp_path / "at2.pt"))
    try:
        resumed.train_step()
        with pytest.raises(StepError, match="ended after step 3") as ended:
            resumed.train_step()
    finally:
        resumed.close()
    assert ended.value.step == 4
    # (a trial's early stopping ended the run: "give the target more steps" could not help)
    assert "a callback that stops it, early stopping" in str(ended.value)
    assert "check fewer steps (--steps 3 or less)" in str(ended.value)
    # (trial 523: a lost patience count let the resumed run train past that stop)
    assert "the uninterrupted run does not train after such a stop, and where a resumed run " \
        "stops is then not checked: what decides it (a patience count) is compared where a " \
        "component declares it, and named under `not compared` where none does" \
        in str(ended.value), str(ended.value)
    assert not loop_threads()


def test_save_runs_in_the_loop_thread_and_close_ends_it(tmp_path):
    program = OwnLoop({})
    seen = []
    program._save = lambda path: seen.append(threading.current_thread().name)
    program.train_step()
    program.save(str(tmp_path / "x"))
    assert seen == ["resumecheck OwnLoop loop"]
    program.close()
    assert not loop_threads()


def test_an_abandoned_loop_program_is_collected_and_its_thread_ends():
    program = OwnLoop({})
    program.train_step()
    del program
    gc.collect()
    for thread in loop_threads():
        thread.join(timeout=10)
    assert not loop_threads()


class _BreaksAfterRestore:
    """State whose state_dict() fails once it has been restored (as a framework
    object can when its loop failed to start after the restore)."""

    def __init__(self):
        self.restored = False

    def state_dict(self):
        if self.restored:
            raise RuntimeError("no state after the restore")
        return {"value": 1}

    def load_state_dict(self, state):
        self.restored = True


class _StepProgram:
    def __init__(self, settings):
        torch.manual_seed(0)
        self.model = torch.nn.Linear(2, 1)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.extra = _BreaksAfterRestore()

    def components(self):
        return {"params": self.model, "optimizer": self.opt, "extra": self.extra}

    def train_step(self):
        loss = self.model(torch.ones(1, 2)).pow(2).sum()
        loss.backward()
        self.opt.step()
        self.opt.zero_grad()
        return loss


def test_a_capture_that_fails_after_the_restore_is_the_runs_failure_not_a_crash():
    report = resumecheck.verify(Target(factory=_StepProgram, steps=4, resume_at=(2,)),
                                drop="none", noise_seeds=0, check_determinism=False)
    run = report.runs[0]
    assert run.verdict == "failed"
    assert "no state after the restore" in run.failure


def test_the_state_machines_live_program_restarts_a_loop_program_exactly(tmp_path):
    from resumecheck.live import LiveProgram

    target = Target(factory=OwnLoop, steps=8)
    straight = LiveProgram(target, {}, {}, str(tmp_path))
    expected = [straight.step().digests for _ in range(5)]
    straight.close()
    live = LiveProgram(target, {}, {}, str(tmp_path))
    got = [live.step().digests for _ in range(2)]
    live.restart(reseed=99)
    assert len(loop_threads()) == 1  # the first program's thread has ended
    got += [live.step().digests for _ in range(3)]
    live.close()
    assert got == expected
    assert not loop_threads()


def test_a_callbacks_fields_beside_its_state_are_by_name_or_the_very_object():
    """A callback's attributes its exported state does not hold: a number equal
    to an exported one by chance (small ints are one object) is not held; a
    list exported under another name is."""
    import types

    from resumecheck.frameworks._loop import fields_beside

    callback = types.SimpleNamespace(best=3, bad=3, history=[1.0], note=None)
    callback.alias = callback.history
    beside = fields_beside(callback, {"best": callback.best, "kept": callback.history})
    assert sorted(vars(beside)) == ["bad", "note"]
