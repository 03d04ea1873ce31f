"""Progress on a terminal: the CLI's rendering of the core's ProgressEvents.

A front end (the core only emits ``ProgressEvent``s, see
``resumecheck.progress``). The bar is tqdm's: it appears only once a task has
run for a second, shows which run and step, elapsed time and an estimate of
what is left, and clears itself at the end. Nothing is drawn when stderr is
not a terminal or when ``CI`` is set, so logs and captured output stay clean.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any

from resumecheck.progress import ProgressCallback, ProgressEvent, warned_header

__all__ = ["progress_wanted", "terminal_progress", "warnings_named"]

DELAY_S = 1.0
"""Tasks shorter than this show nothing."""
REFRESH_S = 0.1
"""The bar is redrawn at most this often (tqdm's own default)."""
STALL_S = 120.0
"""Where no bar is drawn (a log, CI): a note once no progress has been seen for this
long, and again each time as long again has passed (a trial's hung step gave
ten minutes of silence before its bound ended it)."""


def progress_wanted(stream: IO[str] | None = None) -> bool:
    """Draw progress only on a terminal, and never under CI (``CI`` set)."""
    stream = sys.stderr if stream is None else stream
    if os.environ.get("CI"):
        return False
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


@contextmanager
def terminal_progress(enabled: bool = True, stream: IO[str] | None = None
                      ) -> Iterator[ProgressCallback | None]:
    """A progress callback drawing a tqdm bar on ``stream`` (stderr), or None
    when progress is not wanted there; the bar is removed on exit."""
    stream = sys.stderr if stream is None else stream
    if not enabled:
        yield None
        return
    if not progress_wanted(stream):
        with _stall_notes(stream) as note:
            yield note
        return
    from tqdm import tqdm

    bar: Any = None

    def show(event: ProgressEvent) -> None:
        nonlocal bar
        if bar is None:
            bar = tqdm(total=None, file=stream, delay=DELAY_S, mininterval=REFRESH_S, leave=False,
                       dynamic_ncols=True,
                       unit=" " + event.unit, bar_format=(
                           "{desc} {percentage:3.0f}%|{bar}| {n:.0f}/{total_fmt} {unit}"
                           " [{elapsed}<{remaining}]{postfix}"))
        total = round(event.total) if event.total else None
        if total != bar.total:
            bar.total = total
        where = f"step {event.step}/{event.steps}" if event.step is not None and event.steps else ""
        bar.set_description_str(f"{event.task}: {event.run}", refresh=False)
        bar.set_postfix_str(where, refresh=False)
        bar.update(event.done - bar.n)

    try:
        yield show
    finally:
        if bar is not None:
            bar.close()


@contextmanager
def _stall_notes(stream: IO[str]) -> Iterator[ProgressCallback]:
    """A progress callback that draws nothing, and a watcher that says on
    ``stream`` when no progress has been seen for ``STALL_S`` (then after twice
    as long, and so on), where the check stands and what bounds a step."""
    last: list[Any] = [time.monotonic(), None]  # (when, the last event)
    done = threading.Event()

    def seen(event: ProgressEvent) -> None:
        last[:] = [time.monotonic(), event]

    def watch() -> None:
        wait = STALL_S
        while not done.wait(min(wait, 5.0)):
            quiet = time.monotonic() - last[0]
            if quiet < wait:
                if quiet < STALL_S:
                    wait = STALL_S
                continue
            event: ProgressEvent | None = last[1]
            # (trial 462: "step 3/16" was read as the step it hangs in; it is the last one done)
            where = (f" (last step done: {event.run}, step {event.step}/{event.steps}; what"
                     " follows it has not ended)"
                     if event is not None and event.step is not None else "")
            with contextlib.suppress(OSError, ValueError):
                print(f"resumecheck: still working: no progress seen for {quiet:.0f} s"
                      # (trial 435: said under --timeout 5 of a load hung for 10 minutes)
                      f"{where}; a step that hangs is stopped at its bound (--timeout; "
                      "600 s unless told), any other phase at the larger of --timeout and "
                      "600 s, or Ctrl-C stops the check", file=stream,
                      flush=True)
            wait *= 2

    thread = threading.Thread(target=watch, name="resumecheck-stall-notes", daemon=True)
    thread.start()
    try:
        yield seen
    finally:
        done.set()
        thread.join(timeout=1.0)


@contextmanager
def warnings_named(progress: ProgressCallback | None,
                   stream: IO[str] | None = None) -> Iterator[ProgressCallback]:
    """A progress callback that passes its events on to ``progress`` and
    remembers the run under way, so that a warning the program gives in this
    interpreter is preceded by a line naming that run (trial 473: torch's
    "lr_scheduler.step() before optimizer.step()", given in the run that
    dropped the scheduler, was read as the checkpoint's fault). Warnings of
    other processes are named as they are relayed (``transport.named_warnings``)."""
    import warnings

    stream = sys.stderr if stream is None else stream
    shown, here, under_way = warnings.showwarning, os.getpid(), [""]

    def seen(event: ProgressEvent) -> None:
        under_way[0] = event.run
        if progress is not None:
            progress(event)

    def named(message: Any, category: Any, filename: str, lineno: int, file: Any = None,
              line: str | None = None) -> None:
        run = under_way[0]
        if os.getpid() == here and run:
            with contextlib.suppress(OSError, ValueError):
                print(warned_header(run, filename), file=stream, flush=True)
        shown(message, category, filename, lineno, file, line)

    warnings.showwarning = named
    try:
        yield seen
    finally:
        if warnings.showwarning is named:
            warnings.showwarning = shown
