"""Hypothesis strategies and a state machine for resume equivalence.

In hypothesis's house style: plural nouns, keyword-only bounds, invalid
arguments raise ``hypothesis.errors.InvalidArgument``::

    import resumecheck
    from hypothesis import given, settings
    from resumecheck.strategies import interruption_schedules

    @settings(deadline=None)  # (a check takes seconds)
    @given(interruption_schedules(steps=16, max_interruptions=2, steps_per_epoch=5))
    def test_resumes(schedule):
        resumecheck.assert_resume_equivalent("train.py:TARGET", resume_at=schedule, drop="none")

    TestResume = resume_state_machine("train.py:TARGET").TestCase   # unittest/pytest

Each strategy and the state machine, when first made, register torch's
global stream with hypothesis (``register_random``), so examples that draw
from torch are reproducible. Importing the module registers nothing: the
registration walks every object the process holds (0.1-0.3 s once torch is
imported), and a process that imports the module without using it (the fuzz
command's imports, a test module's collection) should not pay for it, nor
have torch's stream managed in hypothesis tests that do not use it.
"""

from __future__ import annotations

import math
import shutil
import tempfile
from collections.abc import Iterable, Sequence
from typing import Any

import torch
from hypothesis import Phase, register_random
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from resumecheck.program import Target, load_target
from resumecheck.program import epoch_boundaries as _epoch_boundaries
from resumecheck.phrases import first_few
from resumecheck.reproduce import reproduce_command
from resumecheck.live import LiveProgram
from resumecheck.runner import run_segment
from resumecheck.segments import SegmentSpec
from resumecheck.settings import MIN_STEPS, Settings
from resumecheck.trace import differing_quantities
from resumecheck.verdict import quantity_name

__all__ = [
    "component_subsets",
    "interruption_schedules",
    "resume_state_machine",
]


class _TorchRandom:
    """torch's global CPU stream, in the shape hypothesis.register_random wants."""

    def seed(self, seed: int) -> None:
        torch.manual_seed(seed)

    def getstate(self) -> torch.Tensor:
        return torch.get_rng_state()

    def setstate(self, state: torch.Tensor) -> None:
        torch.set_rng_state(state)


# hypothesis keeps a weak reference: this list keeps the strong one.
_REGISTERED: list[_TorchRandom] = []


def _manage_torch_stream() -> None:
    """Register torch's global stream with hypothesis, once per process."""
    if not _REGISTERED:
        # (registered from a list made now: hypothesis looks for an object that
        # holds it among those garbage collection tracks, and a test session
        # may have frozen this module's objects since its import)
        kept = [_TorchRandom()]
        register_random(kept[0])
        _REGISTERED.extend(kept)
        kept.clear()


def _check_int(name: str, value: Any, minimum: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool):
        raise InvalidArgument(f"{name}={value!r} must be an int")
    if value < minimum:
        raise InvalidArgument(f"{name}={value!r} must be at least {minimum}")


def special_points(
    steps: int, steps_per_epoch: float | None = None, *,
    epoch_boundaries: Sequence[int] | None = None,
) -> list[int]:
    """Resume points most likely to break a checkpoint: the first and last
    step, every epoch boundary and the steps either side of it.

    ``steps_per_epoch`` may be fractional (13 batches with accumulation 2 is
    6.5 optimizer steps); ``epoch_boundaries`` lists the steps after which a
    new epoch is first read, for epochs of any length.
    """
    points = {1, steps - 1}
    for edge in _edges(steps, steps_per_epoch, epoch_boundaries):
        points.update({edge - 1, edge, edge + 1})
    return sorted(p for p in points if 1 <= p <= steps - 1)


def _edges(steps: int, steps_per_epoch: float | None,
           epoch_boundaries: Sequence[int] | None) -> list[int]:
    return _epoch_boundaries(
        {"steps_per_epoch": steps_per_epoch,
         "epoch_boundaries": sorted(set(epoch_boundaries)) if epoch_boundaries else None},
        steps,
    )


def interruption_schedules(
    *,
    steps: int,
    max_interruptions: int = 2,
    min_interruptions: int = 1,
    steps_per_epoch: float | None = None,
    epoch_boundaries: Sequence[int] | None = None,
) -> st.SearchStrategy[list[int]]:
    """Sorted lists of distinct resume points in ``1..steps-1``.

    Biased towards the extremes (step 1, step N-1) and, when
    ``steps_per_epoch`` (whole or fractional) or ``epoch_boundaries`` is
    given, epoch boundaries and their neighbours. Shrinks towards fewer and
    earlier interruptions.
    """
    _manage_torch_stream()
    _check_int("steps", steps, MIN_STEPS)
    _check_int("min_interruptions", min_interruptions, 1)
    _check_int("max_interruptions", max_interruptions, min_interruptions)
    if steps_per_epoch is not None and not (
        isinstance(steps_per_epoch, (int, float)) and not isinstance(steps_per_epoch, bool)
        and math.isfinite(steps_per_epoch) and steps_per_epoch > 0
    ):
        raise InvalidArgument(f"steps_per_epoch={steps_per_epoch!r} must be a number > 0")
    if epoch_boundaries is not None:
        for edge in epoch_boundaries:
            _check_int("each of epoch_boundaries", edge, 1)
    if max_interruptions > steps - 1:
        raise InvalidArgument(
            f"max_interruptions={max_interruptions} exceeds the {steps - 1} possible "
            f"resume points of steps={steps}"
        )
    points = st.one_of(
        st.sampled_from(special_points(steps, steps_per_epoch,
                                       epoch_boundaries=epoch_boundaries)),
        st.integers(min_value=1, max_value=steps - 1),
    )
    return st.lists(
        points, min_size=min_interruptions, max_size=max_interruptions, unique=True
    ).map(sorted)


def component_subsets(
    components: Iterable[str], *, min_size: int = 0, max_size: int | None = None
) -> st.SearchStrategy[frozenset[str]]:
    """Sets of component names to drop, from ``components``: ``verify(...,
    drop=subset)`` drops a drawn set's names together in one run (an empty set:
    the full resume alone)."""
    _manage_torch_stream()
    names = sorted(set(components))
    if not names:
        raise InvalidArgument("components must name at least one component")
    _check_int("min_size", min_size, 0)
    if max_size is not None:
        _check_int("max_size", max_size, min_size)
    if min_size > len(names):
        raise InvalidArgument(f"min_size={min_size} exceeds the {len(names)} components")
    return st.sets(st.sampled_from(names), min_size=min_size, max_size=max_size).map(frozenset)


def resume_state_machine(
    target: Target | str | None = None, *, steps: int | None = None, threads: int = 1,
    seed: int | None = None,
) -> type[RuleBasedStateMachine]:
    """A state machine: train a step / checkpoint and restart / check.

    Its invariant: the trajectory so far equals the uninterrupted reference,
    step for step, bitwise. Use ``resume_state_machine(...).TestCase`` in a
    test suite; hypothesis explores where restarts happen and shrinks a
    failure to the fewest steps and restarts.
    """
    _manage_torch_stream()
    settings = Settings(steps=steps, threads=threads, seed=seed)  # validated once, here
    tgt = target if isinstance(target, Target) else load_target(target)
    plan = _Plan(tgt, settings.steps_for(tgt), threads, seed)
    machine = type("ResumeMachine", (_ResumeMachine,), {"plan": plan})
    machine.__qualname__ = "ResumeMachine"
    # No explain phase: the lines it lists as "always and only run by failing test
    # cases" are the restore code a failing schedule reaches, resumecheck's and the
    # program's, not the bug (a trial); the failure's own message names the step,
    # the quantities and the command that reproduces it.
    case: Any = getattr(machine, "TestCase")
    case.settings = hypothesis_settings(
        case.settings, phases=[p for p in case.settings.phases if p is not Phase.explain])
    return machine


class _Plan:
    """What a resume state machine checks: the target, its settings and the
    uninterrupted reference (run once, on first use, for every example)."""

    def __init__(self, target: Target, steps: int, threads: int, seed: int | None) -> None:
        self.target, self.steps, self.threads, self.seed = target, steps, threads, seed
        self.run_config = target.launch_config(seed)
        self.restart_config = self.run_config if target.restart_config == "run" else {}
        self._records: list | None = None

    def reference(self) -> list:
        if self._records is None:
            work = tempfile.mkdtemp(prefix="resumecheck-sm-")
            try:
                previous = torch.get_num_threads()
                ref = run_segment(SegmentSpec(
                    target_spec=self.target.spec, config=self.run_config, start=0,
                    stop=self.steps, workdir=work, name="reference", threads=self.threads,
                    capture_end=False,
                ), "inprocess", self.target)
                torch.set_num_threads(previous)
            finally:
                shutil.rmtree(work, ignore_errors=True)
            if ref.error is not None:
                raise AssertionError(f"the uninterrupted reference run failed: {ref.error}")
            self._records = ref.records
        return self._records

    def reproduce(self, restarts: list[int]) -> str:
        # no restart: two uninterrupted runs differ, a baseline matter
        return reproduce_command(
            "run" if restarts else "baseline", self.target.spec, steps=self.steps,
            seed=self.seed, threads=self.threads, isolation="inprocess", resume_at=restarts,
        )


class _ResumeMachine(RuleBasedStateMachine):
    """Train a step / checkpoint and restart; the trajectory must stay the reference's."""

    plan: _Plan

    def __init__(self) -> None:
        super().__init__()
        self.work = tempfile.mkdtemp(prefix="resumecheck-sm-")
        self.restarts: list[int] = []
        self.checked = 0
        self.previous_threads = torch.get_num_threads()
        self.live: LiveProgram | None = None

    @initialize()
    def start(self) -> None:
        self.reference = self.plan.reference()
        torch.set_num_threads(self.plan.threads)
        self.live = LiveProgram(self.plan.target, self.plan.run_config,
                                self.plan.restart_config, self.work)
        self.records: list = []

    @precondition(lambda self: self.live is not None and self.live.step_no < self.plan.steps)
    @rule()
    def train_a_step(self) -> None:
        assert self.live is not None
        self.records.append(self.live.step())

    def may_restart(self) -> bool:
        """After a step, before the last, and not twice at one step: every
        schedule is one ``resumecheck run --resume-at`` can reproduce (its
        resume points are distinct; a trial got a reproduce command with
        ``--resume-at 1,1``, which ``run`` refuses). A save right after a load
        is still explored, one step later (restarts at 1,2)."""
        if self.live is None or not 0 < self.live.step_no < self.plan.steps:
            return False
        return not self.restarts or self.restarts[-1] != self.live.step_no

    @precondition(lambda self: self.may_restart())
    @rule()
    def checkpoint_and_restart(self) -> None:
        assert self.live is not None
        self.restarts.append(self.live.step_no)
        self.live.restart(0x5EED_F00D + self.live.step_no)

    @precondition(lambda self: self.live is not None and self.live.step_no >= self.plan.steps)
    @rule()
    def run_finished(self) -> None:
        """All N steps are done; the invariant has checked every one."""

    @invariant()
    def trajectory_equals_reference(self) -> None:
        if self.live is None:
            return
        for record in self.records[self.checked:]:
            expected = self.reference[record.step - 1]
            differing = differing_quantities(expected, record)
            if differing:
                points = ",".join(map(str, self.restarts)) or "none"
                # (trial 298 read "lr, param:0.bias" where the CLI says learning rate
                # and parameter, and no component: the reproduce command's report names it)
                raise AssertionError(
                    f"step {record.step} differs from the uninterrupted run in "
                    f"{first_few([quantity_name(k) for k in differing])} after restarts at "
                    f"{points} (the report of the command below names what each restore "
                    "left otherwise); reproduce: " + self.plan.reproduce(self.restarts)
                )
        self.checked = len(self.records)

    def teardown(self) -> None:
        if self.live is not None:
            self.live.close()
        torch.set_num_threads(self.previous_threads)
        shutil.rmtree(self.work, ignore_errors=True)
