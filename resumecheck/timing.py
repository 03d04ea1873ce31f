"""Per-phase step timing: where a training step's time goes.

Programs mark their phases with ``resumecheck.phase(name)`` (``phases.py``);
a ``PhaseTimer`` records them while it is active. The engine marks the checkpoint
and the barrier itself. On CUDA a phase records a pair of events and the
durations are resolved once, when the report is made (no synchronize per
phase in the hot path); on CPU a monotonic clock is read. Warm-up steps are
left out of the figures.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import Token
from dataclasses import dataclass, field
from typing import Any

import torch

from resumecheck import torch_modes
from resumecheck.phases import (
    BARRIER, CHECKPOINT, GRAD_SYNC, HOST_TO_DEVICE, PHASES, PhaseRecorder, activate, deactivate,
)

__all__ = ["PhaseTimer", "TimingReport", "measure"]

_UNMARKED = "- (never entered: mark it in your step with resumecheck.phase(...))"
_NOT_ENTERED = {
    GRAD_SYNC: "- (none: one process has no gradient sync)",
    BARRIER: "- (none: one process waits at no barrier)",
    CHECKPOINT: "- (no checkpoint fell in the measured steps)",
}
"""What the single-process table says of a phase with no call, instead of zeros."""

_CHECKPOINT_BY = {"program": "your save()",
                  "engine": "the engine's capture of the declared components"}
"""What the checkpoint phase timed, in the header."""


@dataclass
class _Step:
    index: int
    spans: list[tuple[str, Any, Any]] = field(default_factory=list)
    start: Any = None
    end: Any = None


class PhaseTimer:
    """Collects phase spans per step; CUDA events or a monotonic clock."""

    def __init__(self, *, cuda: bool | None = None, warmup: int = 1) -> None:
        self.cuda = torch.cuda.is_available() if cuda is None else cuda
        self.warmup = warmup
        self.steps: list[_Step] = []
        self._current: _Step | None = None
        self._token: Token[PhaseRecorder | None] | None = None

    def _mark(self) -> Any:
        if self.cuda:
            event = torch.cuda.Event(enable_timing=True)
            event.record()
            return event
        return time.perf_counter()

    def __enter__(self) -> PhaseTimer:
        self._token = activate(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._token is not None:
            deactivate(self._token)
            self._token = None

    @contextmanager
    def step(self, index: int) -> Iterator[None]:
        """One whole step: its wall time is what the phases are measured against."""
        current = _Step(index, start=self._mark())
        self._current = current
        try:
            yield
        finally:
            current.end = self._mark()
            self.steps.append(current)
            self._current = None

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        if name not in PHASES:
            raise ValueError(f"unknown phase {name!r}; phases are: {', '.join(PHASES)}")
        start = self._mark()
        try:
            yield
        finally:
            if self._current is not None:
                self._current.spans.append((name, start, self._mark()))

    def _elapsed(self, start: Any, end: Any) -> float:
        if self.cuda:
            return start.elapsed_time(end) / 1000.0
        return end - start

    def summary(self) -> dict[str, Any]:
        """Per phase: calls, total, median, p95 and share of step time (seconds)."""
        if self.cuda:
            torch.cuda.synchronize()  # resolve every event once, here
        measured = self.steps[self.warmup:]
        step_times = [self._elapsed(s.start, s.end) for s in measured]
        total_step = sum(step_times)
        phases = {}
        for name in PHASES:
            durations = [self._elapsed(a, b) for s in measured for n, a, b in s.spans if n == name]
            total = sum(durations)
            phases[name] = {
                "calls": len(durations),
                "total_s": total,
                "median_s": statistics.median(durations) if durations else 0.0,
                "p95_s": _percentile(durations, 95),
                "share": total / total_step if total_step else 0.0,
            }
        # A phase inside another (DDP's gradient sync inside backward) is in both
        # totals; the time the phases cover counts it once.
        covered = sum(self._elapsed(a, b) for s in measured for a, b in _outermost(s.spans))
        return {
            "steps": len(measured),
            "warmup": min(self.warmup, len(self.steps)),
            "clock": "cuda events" if self.cuda else "monotonic (perf_counter)",
            "step_total_s": total_step,
            "step_median_s": statistics.median(step_times) if step_times else 0.0,
            "phases": phases,
            "phases_total_s": covered,
            "unaccounted_share": 1 - covered / total_step if total_step else 0.0,
        }


def _outermost(spans: list[tuple[str, Any, Any]]) -> list[tuple[Any, Any]]:
    """The spans not inside another (spans close inner first: an inner span is
    recorded before the span that holds it)."""
    out: list[tuple[Any, Any]] = []
    for i, (_, start, end) in enumerate(spans):
        if not any(_within(start, end, s, e) for _, s, e in spans[i + 1:]):
            out.append((start, end))
    return out


def _within(start: Any, end: Any, outer_start: Any, outer_end: Any) -> bool:
    if isinstance(start, float):
        return outer_start <= start and end <= outer_end
    return False  # CUDA events are ordered only once resolved: no nesting assumed


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


@dataclass(kw_only=True)
class TimingReport:
    """Per-phase timing of one program's steps (per rank; one rank here)."""

    target: str
    steps: int
    warmup: int
    checkpoint_every: int
    ranks: list[dict[str, Any]]
    environment: dict[str, Any]
    checkpoint: str = "engine"
    """What the checkpoint phase timed: ``program``, the program's own save();
    ``engine``, the engine's capture (a program without save(), or many ranks)."""
    saved_by: str | None = None
    """A framework target's save, in words, where ``checkpoint`` is ``program``
    (the header's words, not in the JSON: a trial's Accelerate loop read "your save()")."""
    save_untimed: bool = False
    """The program has a save() of its own that was not timed (many ranks time
    the engine's capture): the header says so (a trial read the engine's
    capture beside its own save() as a mistake)."""

    def _checkpointed_by(self) -> str:
        if self.checkpoint == "program" and self.saved_by:
            return self.saved_by
        return _CHECKPOINT_BY[self.checkpoint] + (
            "; your save() is not timed on many ranks" if self.save_untimed else "")

    def _not_entered(self, name: str, ranks: bool = False) -> str:
        """What the table says of a phase no step entered (``ranks``: of many
        ranks, where a sync and a barrier are there to mark)."""
        if name == HOST_TO_DEVICE and self.environment.get("device") == "cpu":
            # (a trial was told to mark a copy its CPU-only program never makes)
            return "- (none: no GPU here, so no host-to-device copy)"
        if ranks:
            return _UNMARKED
        return _NOT_ENTERED.get(name, _UNMARKED)

    def phases(self) -> dict[str, dict[str, float]]:
        """Per phase, min and max over ranks of each figure."""
        out: dict[str, dict[str, float]] = {}
        for name in PHASES:
            rows = [r["phases"][name] for r in self.ranks]
            out[name] = {
                key: rows[0][key] if len(rows) == 1 else min(row[key] for row in rows)
                for key in rows[0]
            }
            if len(rows) > 1:
                out[name].update({f"{k}_max": max(row[k] for row in rows) for k in rows[0]})
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": "resumecheck.timing/1", "target": self.target, "steps": self.steps,
            "warmup": self.warmup, "checkpoint_every": self.checkpoint_every,
            "checkpoint": self.checkpoint,
            "phases": list(PHASES), "ranks": self.ranks, "environment": self.environment,
        }

    def render(self, fmt: str = "table") -> str:
        import json

        if fmt == "json":
            return json.dumps(self.to_json(), indent=2)
        rank = self.ranks[0]
        env = self.environment
        lines = [
            f"resumecheck timing: {self.target}, {rank['steps']} measured steps "
            f"(+{rank['warmup']} warm-up), checkpoint every {self.checkpoint_every} "
            f"({self._checkpointed_by()}); "
            f"{rank['clock']}; torch {env.get('torch')}, {env.get('threads')} thread(s), "
            f"{env.get('device')}",
            f"step time: total {_ms(rank['step_total_s'])}, median {_ms(rank['step_median_s'])}; "
            f"phases cover {100 * (1 - rank['unaccounted_share']):.1f}% of it",
            "",
            f"{'phase':<16}{'calls':>7}{'total':>12}{'median':>12}{'p95':>12}{'share':>8}",
        ]
        if len(self.ranks) > 1:
            lines = lines[:1] + self._rank_lines()
        else:
            for name, p in self.phases().items():
                if not p["calls"]:  # never entered: not a measured zero
                    lines.append(f"{name:<16}{0:>7}   {self._not_entered(name)}")
                    continue
                lines.append(
                    f"{name:<16}{p['calls']:>7}{_ms(p['total_s']):>12}{_ms(p['median_s']):>12}"
                    f"{_ms(p['p95_s']):>12}{100 * p['share']:>7.1f}%"
                )
        text = "\n".join(lines) + "\n"
        if fmt == "markdown":
            return "\n".join(f"    {line}" if line else "" for line in text.splitlines()) + "\n"
        return text


    def _rank_lines(self) -> list[str]:
        """Many ranks: per phase the smallest and largest figure over the ranks, then
        gradient sync and the time at the barrier rank by rank."""
        n = len(self.ranks)
        steps = [r["step_median_s"] for r in self.ranks]
        lines = [
            f"{n} ranks; step median min {_ms(min(steps))}, max {_ms(max(steps))}",
            "",
            f"{'phase':<16}{'calls':>7}{'total min':>12}{'total max':>12}{'median min':>12}"
            f"{'median max':>12}{'share':>15}",
        ]
        for name, p in self.phases().items():
            if not p["calls_max"]:  # (a trial: zeros on every rank, said as a measured zero)
                note = (_NOT_ENTERED[CHECKPOINT] if name == CHECKPOINT
                        else self._not_entered(name, ranks=True))
                lines.append(f"{name:<16}{0:>7}   {note[:-1]} on any rank)")
                continue
            share = f"{100 * p['share']:.1f}-{100 * p['share_max']:.1f}%"
            lines.append(
                f"{name:<16}{p['calls_max']:>7}{_ms(p['total_s']):>12}{_ms(p['total_s_max']):>12}"
                f"{_ms(p['median_s']):>12}{_ms(p['median_s_max']):>12}{share:>15}"
            )
        # Every rank's time in the barrier includes the barrier's own round trip;
        # what a rank waits for slower ones is its time beyond the rank that
        # spent the least there (alike on every rank: the barrier's cost, no wait).
        least = min(r["phases"][BARRIER]["total_s"] for r in self.ranks)
        lines += ["", f"{'rank':<6}{'grad_sync total':>17}{'at barrier':>13}"
                      f"{'beyond the least':>18}{'step median':>14}"]
        for r in self.ranks:
            at = r["phases"][BARRIER]["total_s"]
            sync = r["phases"][GRAD_SYNC]
            # (a trial: "0.000 ms" under a phase the top table said was never entered)
            synced = _ms(sync["total_s"]) if sync.get("calls") else "-"
            lines.append(
                f"{r['rank']:<6}{synced:>17}{_ms(at):>13}"
                f"{_ms(at - least):>18}{_ms(r['step_median_s']):>14}"
            )
        lines.append(f"(at barrier: the barrier's own round trip, {_ms(least)} on the rank that "
                     "spent the least there, plus any wait for slower ranks: 'beyond the "
                     "least' is that wait)")
        return lines


def _on_ranks(tgt: Any, nproc: int, steps: int, warmup: int, checkpoint_every: int,
              seed: int | None, threads: int) -> TimingReport:
    """``measure`` on ``nproc`` ranks launched through ``torch.distributed.run``."""
    from resumecheck.dist_timing import measure_ranks
    from resumecheck.errors import InvalidArgument

    if tgt.spec is None:
        raise InvalidArgument("target", tgt.name, "timing on ranks starts every rank as a "
                              "fresh interpreter: give the target as module:attr or "
                              "path/to/file.py:attr")
    return measure_ranks(tgt.spec, nproc=nproc, steps=steps, warmup=warmup,
                         checkpoint_every=checkpoint_every, seed=seed, threads=threads,
                         config=tgt.launch_config(seed))


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.3f} ms"


def measure(
    target: Any = None,
    *,
    steps: int | None = None,
    warmup: int = 3,
    checkpoint_every: int = 5,
    seed: int | None = None,
    threads: int = 1,
    nproc: int | None = None,
) -> TimingReport:
    """Run ``target`` for ``steps`` steps (None: 30, or, for a framework target,
    at most as many as its loop runs after the warm-up) under a PhaseTimer; the engine times
    the program's own ``save()`` every ``checkpoint_every`` steps (where it has
    none, or on many ranks, the engine's own capture through torch.save), and
    the barrier when torch.distributed is initialised.

    ``nproc``: run on that many ranks launched through ``torch.distributed.run``
    (``resumecheck.dist_timing``); the report holds every rank."""
    from resumecheck.environment import fingerprint
    from resumecheck.interrupt import scratch_directory
    from resumecheck.errors import InvalidArgument
    from resumecheck.program import Target, load_target
    from resumecheck.settings import Settings

    asked, steps = steps, 30 if steps is None else steps
    Settings(steps=steps, seed=seed, threads=threads)  # validated once, here
    tgt = target if isinstance(target, Target) else load_target(target)
    for name, value, low in (("warmup", warmup, 0), ("checkpoint_every", checkpoint_every, 1)):
        if not isinstance(value, int) or value < low:
            raise InvalidArgument(name, value, f"expected an int >= {low}")
    if nproc is not None:
        return _on_ranks(tgt, nproc, steps, warmup, checkpoint_every, seed, threads)
    previous, modes = torch.get_num_threads(), torch_modes.fresh()
    torch.set_num_threads(threads)
    distributed = torch.distributed.is_available() and torch.distributed.is_initialized()
    try:
        built = tgt.build(tgt.launch_config(seed))
        if asked is None and getattr(built.program, "framework", None):
            # a framework's loop stops at the target's steps (two trials: the default
            # 30 + 3 failed on a Lightning and a Trainer target of 12)
            steps = max(1, min(steps, tgt.steps - warmup))
        own = built.has_own_checkpoint and not distributed  # (ranks share one save path)
        timer = PhaseTimer(warmup=warmup)
        with scratch_directory("resumecheck-timing-") as work, timer:
            save = _saver(built, work, own)
            for step in range(1, warmup + steps + 1):
                _timed_step(built, timer, step, save if step % checkpoint_every == 0 else None,
                            work, distributed, warmup + steps)
    finally:
        torch.set_num_threads(previous)
        torch_modes.put(modes)
    rank = torch.distributed.get_rank() if distributed else 0
    return TimingReport(
        target=tgt.spec or tgt.name, steps=steps, warmup=warmup,
        checkpoint_every=checkpoint_every, ranks=[{"rank": rank, **timer.summary()}],
        environment=fingerprint(threads), checkpoint="program" if own else "engine",
        saved_by=built.boundaries().get("saved_by"),
        save_untimed=built.has_own_checkpoint and not own,
    )


def _saver(built: Any, work: str, own: bool) -> Callable[[int], None]:
    """The checkpoint a step makes in ``work``: the program's own save() when
    ``own`` (its earlier saves removed after it, untimed), else the engine's capture."""
    from resumecheck.capture import save_capture
    from resumecheck.restore import program_save

    if not own:
        return lambda step: save_capture(built, f"{work}/capture.pt")
    return lambda step: program_save(built, f"{work}/save-{step}", step)


def _timed_step(built: Any, timer: PhaseTimer, step: int,
                save: Callable[[int], None] | None, work: str, distributed: bool,
                total: int) -> None:
    """One step of ``total`` under ``timer``; its checkpoint by ``save`` (None:
    none this step)."""
    from resumecheck.errors import ResumecheckError, StepError
    from resumecheck.module_state import raised

    with timer.step(step):
        try:
            built.step(step)
        except StepError as exc:  # (a framework's loop that ended too soon for timing)
            raise StepError(step, f"{exc.problem}; {_all_in_one_run(total)}") from exc
        except ResumecheckError:
            raise
        except Exception as exc:  # (the program's own error, as `run` reports it)
            raise StepError(step, f"train_step() raised {raised(exc)}; "
                            f"{_all_in_one_run(total)}") from exc
        if save is not None:
            with timer.phase(CHECKPOINT):
                save(step)
        if distributed:
            with timer.phase(BARRIER):
                torch.distributed.barrier()
    if save is not None:  # (one save on disk at a time: the program's earlier ones go)
        _remove_other_saves(work, f"save-{step}")


def _all_in_one_run(total: int) -> str:
    """What a failed step's message adds of the steps timing runs."""
    return (f"timing runs the warm-up steps and then --steps steps, {total} in all, in one "
            "run: ask for fewer (--steps, --warmup), or give the target more")


def _remove_other_saves(work: str, keep: str) -> None:
    """Remove the program's earlier saves from the scratch directory."""
    import shutil

    for entry in os.listdir(work):
        if entry.startswith("save-") and entry != keep:
            path = os.path.join(work, entry)
            shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)
