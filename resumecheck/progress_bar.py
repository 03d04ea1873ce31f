"""Progress on a terminal: the CLI's rendering of the core's ProgressEvents.

A front end (the core only emits ``ProgressEvent``s, see
``resumecheck.progress``). The bar is tqdm's: it appears only once a task has
run for a second, shows which run and step, elapsed time and an estimate of
what is left, and clears itself at the end. Nothing is drawn when stderr is
not a terminal or when ``CI`` is set, so logs and captured output stay clean.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any

from resumecheck.progress import ProgressCallback, ProgressEvent

__all__ = ["progress_wanted", "terminal_progress"]

DELAY_S = 1.0
"""Tasks shorter than this show nothing."""
REFRESH_S = 0.1
"""The bar is redrawn at most this often (tqdm's own default)."""


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
    if not enabled or not progress_wanted(stream):
        yield None
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
