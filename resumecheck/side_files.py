"""Files a program's save() writes, or its load() reads, outside the
checkpoint path it is given.

A checkpoint is what save(path) puts at ``path``; a counter written beside
it (``out/step.json``) is not part of it: a restart reads whatever was
written there last, by this run, a later save, or another run writing the
same file beside it, not what the checkpoint saved. Python's audit hook
(``sys.addaudithook``: every ``open()``, ``os.open()`` and
``io.open_code()``) sees the files while ``outside`` watches; a hook cannot
be removed, so one is installed once and does nothing while nothing is
watched. Source files, the interpreter's own and the system's are not named,
nor a file a load() read that nothing changed while the check ran (its input).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["changed_since", "outside", "shown"]

_MOST = 8
"""At most this many files are named per watch."""

_FILES_IN_DEV = ("/dev/shm/",)
"""Under /dev, where a program keeps files (a counter kept in shared memory, a
TMPDIR there); the rest of /dev is devices, and not named."""
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
_SOURCE = (".py", ".pyc", ".pyi", ".so", ".pth", ".json.lock")


class _Watch:
    def __init__(self, root: str, writes: bool) -> None:
        self.root = os.path.abspath(root)
        self.writes = writes
        self.files: list[str] = []
        self.made: set[str] = set()
        """Watching reads: files opened for writing before any read of them (a
        load() that writes a file from its checkpoint's contents and reads it
        back, trial 462: not state kept beside the checkpoint)."""
        skip = {sys.prefix, sys.base_prefix, sys.exec_prefix, "/proc", "/sys", "/dev"}
        self.skip = tuple(os.path.abspath(p) + os.sep for p in skip if p)

    def saw(self, args: tuple[Any, ...]) -> None:
        path, mode, flags = (tuple(args) + (None, None, None))[:3]
        if not isinstance(path, (str, bytes, os.PathLike)):
            return  # (a file descriptor)
        writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
            isinstance(flags, int) and bool(flags & _WRITE_FLAGS))
        where = os.path.abspath(os.fsdecode(path))
        if writing and not self.writes and where not in self.files:
            self.made.add(where)
        if writing != self.writes or (not writing and where in self.made):
            return
        if where == self.root or where.startswith(self.root + os.sep) or where.endswith(_SOURCE) \
                or (where.startswith(self.skip) and not where.startswith(_FILES_IN_DEV)):
            return
        if where in self.files or len(self.files) >= _MOST or where in _path_entries():
            return
        self.files.append(where)


def _path_entries() -> set[str]:
    """The entries of ``sys.path``, absolute: ``importlib.metadata`` opens each
    that is no directory as a zip archive when it lists the installed packages
    (trial 399: a framework's version check during a load named the marker an
    editable install puts there, `__editable__....__path_hook__`, as a file
    the load read)."""
    return {os.path.abspath(p or os.curdir) for p in sys.path if isinstance(p, str)}


_watch: list[_Watch] = []
_installed: list[bool] = []


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if _watch and event == "open":
        try:
            _watch[-1].saw(args)
        except Exception:  # (a notice never fails a program)
            pass


@contextmanager
def outside(path: str, *, writes: bool) -> Iterator[list[str]]:
    """While the block runs, the files opened outside ``path`` (a file, or a
    directory and what it holds), for writing (``writes``) or for reading,
    absolute, in the order first opened (at most a few)."""
    if not _installed:
        sys.addaudithook(_hook)
        _installed.append(True)
    watch = _Watch(path, writes)
    _watch.append(watch)
    try:
        yield watch.files
    finally:
        _watch.remove(watch)


def changed_since(files: list[str], since: float | None) -> list[str]:
    """Of ``files``, those written, replaced or removed since ``since`` (when
    the check began; None: all of them). A file a load() reads that nothing
    changed while the check ran (the run's data, which a load() that builds
    the model again reads) is the run's input, not state kept beside the
    checkpoint (trial 426: a dataset was said to be state to keep in the
    checkpoint, on a correct program). Its change time counts too, which
    nothing but the system sets (a file moved into place, copied with its
    times); a second's slack for file systems that keep coarse times."""
    if since is None:
        return list(files)
    changed = []
    for f in files:
        try:
            status = os.stat(f)
        except OSError:  # (gone: something removed it)
            changed.append(f)
            continue
        if max(status.st_mtime, status.st_ctime) >= since - 1.0:
            changed.append(f)
    return changed


def shown(files: list[str], checkpoint: str) -> list[str]:
    """``files`` as a report names them: one in the directory that holds the
    checkpoint (the check's scratch directory, gone when the check ends) by
    its name, ```step.txt` (beside the checkpoint)``; one under the working
    directory relative to it; any other as it is."""
    home, here = os.path.dirname(os.path.abspath(checkpoint)), os.getcwd() + os.sep
    return [f"`{os.path.basename(f)}` (beside the checkpoint)" if os.path.dirname(f) == home
            else f"`{os.path.relpath(f) if f.startswith(here) else f}`" for f in files]
