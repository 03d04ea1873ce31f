"""Progress of a long check, as plain events: the core's side of a progress bar.

The engine, the fuzzer and the baseline report what they are doing through a
callback that receives ``ProgressEvent``s; they never draw anything. A front
end decides whether and how to show them (the CLI draws a tqdm bar on a
terminal, see ``resumecheck.cli``); a library caller may log them or ignore
them. Nothing here imports a front end.

Steps run in this interpreter are reported one by one (the runner calls
``note_step``); a segment run in a fresh interpreter is reported when it ends.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

__all__ = ["ProgressCallback", "ProgressEvent", "ProgressTracker", "note_step", "run_label"]


@dataclass(frozen=True, slots=True)
class ProgressEvent:
    """Where a long task stands."""

    task: str
    """``"run"``, ``"fuzz"`` or ``"baseline"``."""
    run: str
    """The run under way, in words: ``reference``, ``seed 2``, ``drop rng``, ``example 3: resume at 4,9``."""
    step: int | None
    """The last step that run completed (None: not started, or not counted in steps)."""
    steps: int | None
    """The step that run stops at."""
    done: float
    """Work done so far in the whole task, in ``unit``."""
    total: float | None
    """Work planned for the whole task (an estimate; None: not known yet)."""
    unit: str
    """``"steps"``, ``"examples"`` or ``"checks"``."""
    elapsed: float
    """Seconds since the task started."""

    @property
    def remaining(self) -> float | None:
        """Seconds left, estimated from the pace so far (None: not known yet)."""
        if not self.total or self.done <= 0 or self.elapsed <= 0:
            return None
        return max(0.0, self.elapsed * (self.total - self.done) / self.done)

    @property
    def message(self) -> str:
        """One line: which run, which step, elapsed, estimate."""
        where = f" step {self.step}/{self.steps}" if self.step is not None and self.steps else ""
        eta = self.remaining
        rest = f", about {eta:.0f} s left" if eta is not None else ""
        return f"{self.task}: {self.run}{where} ({self.elapsed:.0f} s{rest})"


ProgressCallback = Callable[[ProgressEvent], None]


class ProgressTracker:
    """Counts a task's work and sends an event for every change.

    ``segment(label, start, stop)`` wraps one stretch of steps; inside it,
    ``note_step(step)`` (called by the runner for every step run in this
    interpreter, from whichever thread runs the segment) advances it.
    """

    def __init__(self, callback: ProgressCallback, task: str, unit: str = "steps",
                 total: float | None = None) -> None:
        self.callback = callback
        self.task = task
        self.unit = unit
        self.total = total
        self.done = 0.0
        self.started = time.monotonic()
        self._lock = threading.Lock()

    def emit(self, run: str, step: int | None = None, steps: int | None = None,
             advance: float = 0.0) -> None:
        with self._lock:
            self.done += advance
            if self.total is not None and self.done > self.total:
                self.total = self.done
            event = ProgressEvent(
                task=self.task, run=run, step=step, steps=steps, done=self.done,
                total=self.total, unit=self.unit, elapsed=time.monotonic() - self.started,
            )
        self.callback(event)

    @contextmanager
    def segment(self, label: str, start: int, stop: int) -> Iterator[None]:
        """A stretch of steps ``start+1 .. stop`` of the run ``label``."""
        state = _Segment(self, label, start, stop)
        previous = getattr(_current, "segment", None)
        _current.segment = state
        self.emit(label, start if start else None, stop)
        try:
            yield
        finally:
            _current.segment = previous
            if state.step < stop:  # a fresh interpreter's steps, or a failure: count the rest
                self.emit(label, stop, stop, advance=stop - state.step)


@dataclass(slots=True)
class _Segment:
    tracker: ProgressTracker
    label: str
    start: int
    stop: int
    step: int = 0

    def __post_init__(self) -> None:
        self.step = self.start


_current = threading.local()


def note_step(step: int) -> None:
    """A step finished in this thread's current segment (no-op outside one)."""
    seg: _Segment | None = getattr(_current, "segment", None)
    if seg is None or step <= seg.step:
        return
    advance = step - seg.step
    seg.step = step
    seg.tracker.emit(seg.label, step, seg.stop, advance=advance)


def run_label(segment_name: str) -> str:
    """A segment's name as the engine gives it (``drop-rng-8``, ``own-8``,
    ``noise1``, ``confirm-rng-8``) in words."""
    head, _, rest = segment_name.partition("-")
    if segment_name.startswith("noise"):
        return f"seed run {segment_name[5:]}"
    if head == "drop":
        dropped = rest.rsplit("-", 1)[0]
        return "full resume" if dropped == "none" else f"drop {dropped.replace('-', ',')}"
    if head == "own":
        return "full resume (own save/load)"
    if head == "confirm":
        return f"confirming {rest.rsplit('-', 1)[0]}"
    return segment_name


def who_warned(filename: str) -> str:
    """Who gave a warning, from the file it names: an installed package (its
    name: trial 493's Lightning deprecation was said to be the program's),
    else the program."""
    parts = filename.replace("\\", "/").split("/")
    for i, part in enumerate(parts[:-1]):
        if part in ("site-packages", "dist-packages"):
            return f"{parts[i + 1].removesuffix('.py')}, which your program uses,"
    return "your program"


def warned_header(run: str, filename: str) -> str:
    """The line said before a warning the program gave in the check's run
    ``run`` (trial 473: one given where a run left a component out on
    purpose was read as the checkpoint's fault)."""
    on_purpose = (f" (a restart that leaves {run.removeprefix('drop ')} out of the restore on "
                  "purpose, not your checkpoint's)" if run.startswith("drop ") else "")
    return f"resumecheck: {who_warned(filename)} warned in the check's run `{run}`{on_purpose}:"
