"""Ending a check on a signal even when its main thread cannot respond.

A Python signal handler runs in the main thread, between two bytecodes: while
that thread waits inside one C call (a step that shells out with
``os.system``, a blocking read, a long regular expression), SIGTERM is only
noted, and the check would end when the call returns, if ever. So the front
end that handles SIGINT, SIGTERM and SIGHUP also watches for them here: the
interpreter writes every signal it catches to a wakeup file descriptor
(``signal.set_wakeup_fd``), a thread reads it, and when the main thread has
not taken the signal within ``GRACE`` seconds the thread ends the check
itself, as the main thread would have: it says so, stops every child process
of the check, removes the check's scratch directories and exits with
128 + the signal's number. When the main thread does take the signal, the
watcher does nothing.

The scratch directories are known through ``scratch_directory``, which the
engine, fuzz, the baseline and timing make theirs with.
"""

from __future__ import annotations

import _thread
import contextlib
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from typing import Any

from resumecheck.errors import ScratchElsewhereWarning

__all__ = [
    "GRACE", "HANDLED", "Redelivery", "RunDirectories", "Watcher", "proc_stat",
    "scratch_directory", "stop_descendants",
]

HANDLED = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP")
                if hasattr(signal, name))
"""The signals that end a check: Ctrl-C, a polite kill, the terminal closed."""

GRACE = 1.0
"""Seconds the main thread has to take a signal before the watcher ends the check."""

_EXIT = os._exit
"""The interpreter's own exit, as at import (a program's call may be intercepted
while a segment runs in this interpreter; the watcher's must not)."""

_SCRATCH: set[str] = set()
_SCRATCH_LOCK = threading.Lock()


@contextlib.contextmanager
def scratch_directory(prefix: str) -> Iterator[str]:
    """A temporary directory (as ``tempfile.TemporaryDirectory``) that a check
    ended by the watcher removes too. It names its owner (``OWNER_FILE``), so
    that a later check removes it should its owner be killed outright
    (``remove_abandoned``)."""
    remove_abandoned()
    _warn_if_tmpdir_unusable()
    # (a child killed a moment ago may still be writing in it: its removal is
    # tried again below rather than failing, which would leave it behind)
    path = tempfile.mkdtemp(prefix=prefix)
    try:
        with contextlib.suppress(OSError):  # (best effort: a full disk fails later, named)
            with open(os.path.join(path, OWNER_FILE), "w") as fh:
                fh.write(_owner_line(os.getpid()) or "")
        with _SCRATCH_LOCK:
            _SCRATCH.add(path)
        yield path
    finally:
        try:  # (an interrupt landing in the removal still leaves nothing behind)
            remove_tree(path)
        finally:
            try:
                _remove_while_written(path)  # (at once where nothing made it again)
            finally:
                with _SCRATCH_LOCK:
                    _SCRATCH.discard(path)


def _warn_if_tmpdir_unusable() -> None:
    """Say where the scratch files go when TMPDIR names no usable directory
    (``tempfile`` falls back to /tmp without a word: a trial's check then ran
    on a disk it had been pointed away from)."""
    given = os.environ.get("TMPDIR")
    if not given:
        return
    used = tempfile.gettempdir()
    if os.path.realpath(given) == os.path.realpath(used):
        return
    try:  # (as tempfile tries it: os.access passes root on /proc, where no file is made)
        fd, probe = tempfile.mkstemp(dir=given)
    except OSError:
        warnings.warn(ScratchElsewhereWarning(given, used), stacklevel=4)
        return
    os.close(fd)
    os.unlink(probe)  # (usable: tempfile chose before TMPDIR was set, and keeps its choice)


def remove_tree(path: str) -> None:
    """``shutil.rmtree(path, ignore_errors=True)``, except that an interrupt
    (Ctrl-C, or a signal raised as one) that lands inside it comes out as
    itself. Landing right after rmtree closed a directory, it makes rmtree
    close the descriptor again, and the OSError (EBADF) would stand in for
    the interrupt: a trial's SIGTERM read "unexpected OSError ... a bug"."""
    try:
        shutil.rmtree(path, ignore_errors=True)
    except OSError as exc:
        behind = interrupt_behind(exc)
        if behind is None:
            raise
        raise behind from None


def interrupt_behind(exc: BaseException) -> KeyboardInterrupt | None:
    """The interrupt (KeyboardInterrupt, or a signal raised as one) that was
    propagating when ``exc`` was raised, if any: a cleanup that an interrupt
    cut short can fail in its turn (a descriptor closed twice), and what
    ended the command is the interrupt, not that failure."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return exc
        seen.add(id(exc))
        exc = exc.__context__  # type: ignore[assignment]
    return None


def _remove_while_written(path: str) -> None:
    """Remove what is left of a scratch directory a child may still be writing
    in (nothing, mostly: then at once). For up to 2 s by the clock (on a loaded
    machine each removal takes longer), until it has stayed gone for 0.25 s:
    a child writing with ``os.makedirs`` makes the directory again."""
    if not os.path.lexists(path):
        return
    deadline = time.monotonic() + 2.0
    gone_since: float | None = None
    while time.monotonic() < deadline:
        if os.path.lexists(path):
            gone_since = None
            remove_tree(path)
        elif gone_since is None:
            gone_since = time.monotonic()
        elif time.monotonic() - gone_since >= 0.25:
            return
        time.sleep(0.05)


class RunDirectories:
    """Directories inside a scratch directory, one per run, used again:
    when a run ends its directory is emptied and kept for the next run of
    the same process, not removed. Removing a directory costs 2-3 ms on some
    file systems (ext4 mounted with ``discard``: measured here), emptying an
    empty one nothing; a sweep's ten runs paid it ten times. ``emptied`` is
    called with each directory emptied (what refers to its files forgets
    them). Safe across threads; a forked child starts with none of its
    parent's (siblings would share them). What is left is removed with the
    scratch directory."""

    def __init__(self, parent: str, emptied: Callable[[str], None]) -> None:
        self.parent = parent
        self.emptied = emptied
        self._free: list[str] = []
        self._pid = os.getpid()
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def __call__(self, prefix: str) -> Iterator[str]:
        with self._lock:
            if self._pid != os.getpid():
                self._free, self._pid = [], os.getpid()
            path = self._free.pop() if self._free else None
        if path is None:
            path = tempfile.mkdtemp(prefix=prefix, dir=self.parent)
        try:
            yield path
        finally:
            if _emptied(path):
                self.emptied(path)
                with self._lock:
                    self._free.append(path)
            else:
                shutil.rmtree(path, ignore_errors=True)
                self.emptied(path)


def _emptied(path: str) -> bool:
    """Remove what ``path`` holds; whether it is now an empty directory."""
    try:
        with os.scandir(path) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path)
                else:
                    os.unlink(entry.path)
        return True
    except OSError:
        return False


OWNER_FILE = ".resumecheck-owner"
"""In a scratch directory: the host, pid and start time of the process it is for."""

_PREFIX = "resumecheck-"
_CHECKED_ABANDONED = False


def proc_stat(pid: int | str) -> list[str] | None:
    """The fields of ``/proc/PID/stat`` after the command's name (state,
    parent, ..., start time at index 19); None: no such process, or no /proc."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return [f.decode() for f in fields] if len(fields) > 19 else None


def _started(pid: int) -> str | None:
    """When process ``pid`` started (clock ticks since boot); None: no such process."""
    fields = proc_stat(pid)
    return None if fields is None else fields[19]


def _owner_line(pid: int) -> str | None:
    started = _started(pid)
    return None if started is None else f"{os.uname().nodename} {pid} {started}\n"


def _abandoned(path: str) -> bool:
    """Whether a scratch directory's owner, a process of this host, is gone
    (no process with its pid, or another one that took the pid since)."""
    try:
        with open(os.path.join(path, OWNER_FILE)) as fh:
            host, pid, started = fh.read().split()
    except (OSError, ValueError):  # not one of ours, or no /proc where it was made
        return False
    if host != os.uname().nodename or not os.path.isdir("/proc/self"):
        return False
    return _started(int(pid)) != started


def remove_abandoned() -> None:
    """Remove the scratch directories of checks killed outright (SIGKILL, a
    machine's out-of-memory killer), which nothing else would ever remove:
    once per process, in the temporary directory this process uses."""
    global _CHECKED_ABANDONED
    if _CHECKED_ABANDONED:
        return
    _CHECKED_ABANDONED = True
    root = tempfile.gettempdir()
    try:
        names = [n for n in os.listdir(root) if n.startswith(_PREFIX)]
    except OSError:
        return
    for name in names:
        path = os.path.join(root, name)
        if os.path.isdir(path) and not os.path.islink(path) and _abandoned(path):
            shutil.rmtree(path, ignore_errors=True)


def remove_scratch() -> None:
    """Remove every scratch directory a check holds now."""
    with _SCRATCH_LOCK:
        paths = list(_SCRATCH)
    for path in paths:
        shutil.rmtree(path, ignore_errors=True)


def stop_descendants() -> None:
    """SIGKILL every process descended from this one (a program's shell-out,
    a forked run, a warm server and the segments it forked), found through
    /proc; where there is none (not Linux), nothing."""
    children: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return
    for entry in entries:
        fields = proc_stat(entry) if entry.isdigit() else None
        if fields is not None:
            children.setdefault(int(fields[1]), []).append(int(entry))
    found, todo = [], list(children.get(os.getpid(), []))
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    for pid in found:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


class Watcher:
    """Watches the signals in ``HANDLED`` from a thread, for a main thread
    that may be stuck in a C call (see the module's docstring).

    The main thread's handler calls ``taken(signum)`` first: True means it
    owns the ending (the watcher stands down); False means the watcher is
    ending the check already. ``message(signum)`` is printed by the watcher
    before it stops the children and removes the scratch directories.
    """

    def __init__(self, message: Callable[[int], str]) -> None:
        self._message = message
        self._lock = threading.Lock()
        self._owner: str | None = None
        self._taken = threading.Event()
        self._read, self._write = os.pipe()
        os.set_blocking(self._write, False)
        self._previous = signal.set_wakeup_fd(self._write, warn_on_full_buffer=False)
        global _ACTIVE
        _ACTIVE = self
        self._thread = threading.Thread(target=self._watch, name="resumecheck-signals",
                                        daemon=True)
        self._thread.start()

    def taken(self, signum: int) -> bool:
        with self._lock:
            if self._owner is None:
                self._owner = "main"
                self._taken.set()
                quiet_other_threads()
            return self._owner == "main"

    def close(self) -> None:
        """Stop watching (main thread): the previous wakeup descriptor is back."""
        global _ACTIVE
        _ACTIVE = None
        with contextlib.suppress(ValueError):
            signal.set_wakeup_fd(self._previous)
        with contextlib.suppress(OSError):
            os.write(self._write, b"\0")  # not a signal: the thread's cue to end
        self._thread.join(timeout=5)
        for fd in (self._read, self._write):
            with contextlib.suppress(OSError):
                os.close(fd)

    def _watch(self) -> None:
        while True:
            try:
                data = os.read(self._read, 64)
            except OSError:
                return
            if not data or 0 in data:
                return
            handled = [s for s in data if s in HANDLED]
            if handled:  # (at once: the children stopped by the same signal may
                # make a thread of this process fail before the main thread's
                # handler runs, as a DataLoader's resource-sharing thread did)
                quiet_other_threads()
            if handled and not self._taken.wait(GRACE):
                self._end(handled[0])

    def _end(self, signum: int) -> None:
        with self._lock:
            if self._owner is not None:
                return
            self._owner = "watcher"
        quiet_other_threads()
        with contextlib.suppress(OSError, ValueError):
            print(self._message(signum), file=sys.stderr, flush=True)
        stop_descendants()
        remove_scratch()
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
        _EXIT(128 + signum)


def quiet_other_threads() -> None:
    """Once a signal ends the command, an exception in a thread other than
    the main one is a consequence of stopping the children, not news: it is
    not printed under the message that says the command was interrupted (a
    trial's Ctrl-C during a DataLoader with workers: multiprocessing's
    resource-sharing thread, mid-handshake with a worker just stopped, printed
    a traceback; it reports through ``sys.excepthook`` itself, which is
    quieted for threads other than the main one too)."""
    previous = threading.excepthook
    if getattr(previous, "quiet_after_signal", False):
        return
    previous_sys = sys.excepthook

    def hook(args: Any) -> None:
        if args.thread is threading.main_thread():
            previous(args)

    def sys_hook(*exc_info: Any) -> None:
        if threading.current_thread() is threading.main_thread():
            previous_sys(*exc_info)

    hook.quiet_after_signal = True  # type: ignore[attr-defined]
    threading.excepthook = hook
    sys.excepthook = sys_hook


class Redelivery:
    """Python drops an exception raised where it cannot propagate (a
    garbage-collection callback, as hypothesis installs, or a ``__del__``) and
    prints it: a signal whose handler raised there would be lost, and the
    command would go on and exit 0. While installed (main thread), such a
    dropped KeyboardInterrupt is not printed; the main thread is signalled
    again, from another thread, until its handler (which asks ``due()``)
    raises where the exception propagates. ``received`` holds the signal taken."""

    def __init__(self, received: list[int]) -> None:
        self._received = received
        self._pending = False
        self._in_hook = False
        self._previous = sys.unraisablehook

    def install(self) -> None:
        self._previous = sys.unraisablehook
        sys.unraisablehook = self._hook

    def uninstall(self, quiet: bool = False) -> None:
        """``quiet``: where a signal was taken, what is dropped from here on (as
        the command ends) is not printed either (the command's own process)."""
        sys.unraisablehook = _dropped_quietly if quiet and self._received else self._previous
        self._pending = False

    def due(self) -> bool:
        """In the handler: raise again now (never inside the hook, where it is dropped again)."""
        if not self._pending or self._in_hook:
            return False
        self._pending = False
        return True

    def _hook(self, info: Any) -> None:
        if not self._received:
            self._previous(info)
            return
        if not isinstance(info.exc_value, KeyboardInterrupt):
            # (trial 287: Ctrl-C as a DataLoader made its worker iterator printed that
            # half-made iterator's __del__ AttributeError under the message that the
            # command was interrupted: a consequence of stopping, not news)
            return
        self._in_hook = True
        try:
            if not self._pending:
                self._pending = True
                threading.Thread(target=self._nudge, daemon=True).start()
        finally:
            self._in_hook = False

    def _nudge(self) -> None:
        while self._pending:
            time.sleep(0.005)
            if self._pending:
                _thread.interrupt_main(signal.Signals(self._received[0]))


def _dropped_quietly(info: Any) -> None:
    """``sys.unraisablehook`` once a signal has ended the command: what objects
    torn down mid-way raise in their finalizers is not printed."""


_ACTIVE: Watcher | None = None


def _forget_in_child() -> None:
    """A fork of a watched interpreter (a forked run) must not wake our
    watcher with its own signals."""
    global _ACTIVE
    if _ACTIVE is not None:
        _ACTIVE = None
        with contextlib.suppress(ValueError, OSError):
            signal.set_wakeup_fd(-1)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)
