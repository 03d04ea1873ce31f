"""Writing a report where the user asked (``--output``), without destroying anything.

Two functions, used by every command of the CLI:

* ``check_output(path, target)``, before any work: can a report be written
  there? A directory, a missing parent, a parent that is a file, a place where
  no new file can be created, or the source file of the program under test
  (``run train.py:TARGET --output train.py``) or any existing ``.py`` file (a
  module it imports) is refused at once, not after a long check whose result
  would then be lost (or would replace the program).
* ``write_report(path, text)``, after the work: ``-`` is standard output; a
  character device, FIFO or socket (``/dev/null``, ``/dev/stdout`` on a
  terminal, a file or a pipe, a named pipe) is written through, never
  replaced; a symbolic link is followed and its target written, the link
  stays; a regular file is replaced atomically (a temporary file beside it,
  then ``os.replace``), so a reader never sees half a report. A new report
  file gets the usual mode (0666 minus the umask); an existing one keeps its own.

Both raise ``OutputError`` with a sentence a user can act on.
"""

from __future__ import annotations

import contextlib
import errno
import importlib.machinery
import os
import stat
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from resumecheck.errors import OutputError

__all__ = ["STDOUT", "check_output", "write_report", "write_stdout"]

STDOUT = "-"
"""The ``--output`` value that means standard output."""


def check_output(path: str, target: str | None = None, what: str = "the report") -> None:
    """Refuse now, before any work, an output ``what`` (the report, a plot)
    could not be written to, or one that is Python source: the program under
    test, ``target`` (``module:attr`` or ``path/to/file.py:attr``; None: the
    built-in program), or any other existing ``.py`` file (a module it imports)."""
    try:
        _check(path, target)
    except OutputError as exc:
        raise OutputError(exc.path, exc.problem, exc.hint, what=what) from None


def _check(path: str, target: str | None) -> None:
    if path == STDOUT:
        return
    if not path:
        raise OutputError(path, "an empty path names no file",
                          "Give a file name, or - for standard output")
    try:
        real, st = _resolved(path)
    except OSError as exc:  # e.g. a parent that is a regular file (ENOTDIR)
        raise _error(path, exc) from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise OutputError(path, "it is a directory", "Give a file name inside it")
    if path.endswith(os.sep):  # (a path the system resolves without the slash)
        raise OutputError(
            path, "it ends with a slash, which names a directory, and "
            + ("there is no such directory" if st is None else "it is not one"),
            "Give a file name (without the trailing slash), or create the directory "
            "and give a file name inside it")
    if st is not None and stat.S_ISREG(st.st_mode):
        _refuse_existing_file(path, real, st, target)
    if st is not None and not stat.S_ISREG(st.st_mode):
        _probe_special(path, real)
        return
    parent = os.path.dirname(real) or "."
    if not os.path.isdir(parent):
        raise OutputError(
            path,
            f"the directory {parent} does not exist" if not os.path.exists(parent)
            else f"{parent} is not a directory",
            "Create the directory first, or choose another path",
        )
    # The report replaces the file atomically through a temporary file beside
    # it: creating one proves the directory takes new files (a read-only
    # mount, /sys, a full inode table all fail here).
    try:
        fd, tmp = tempfile.mkstemp(dir=parent, prefix=f".{os.path.basename(real)}.")
    except OSError as exc:
        if exc.errno == errno.ENOENT:  # the directory is there (above): not "create it"
            raise OutputError(
                path,
                f"the directory {parent} exists, but no new file can be created in it "
                "(creating one fails with No such file or directory, ENOENT, as on a "
                "virtual file system such as /proc or /sys); the report is written to a "
                "new file beside the old one, which then replaces it",
                "Write the report to a file in an ordinary directory",
            ) from None
        raise _error(path, exc) from None
    os.close(fd)
    os.unlink(tmp)
    if st is not None and (not os.access(real, os.W_OK) or not st.st_mode & 0o222):
        # (the report replaces the file, which its directory allows whatever
        # the file's mode; `cmd > file` would refuse it, and so does root's
        # shell only where no one may write it: a trial's root replaced one)
        raise OutputError(
            path, f"it is a read-only file (mode {stat.S_IMODE(st.st_mode):04o}), which "
            "the report would replace",
            "Make it writable (chmod u+w) if it may be replaced, or choose another path")


def _resolved(path: str) -> tuple[str, os.stat_result | None]:
    """What writing to ``path`` reaches: the path to open (a symlink's target)
    and its status (None: no such file yet). A link the kernel follows but
    that names no path (``/dev/stdout`` on a pipe: ``/proc/self/fd/1`` ->
    ``pipe:[...]``) is opened as given."""
    real = os.path.realpath(path)
    try:
        return real, os.stat(real)
    except FileNotFoundError:
        pass
    try:
        st = os.stat(path)  # (the kernel follows /proc's links to what they name)
    except FileNotFoundError:
        return real, None
    return (path, st) if not stat.S_ISREG(st.st_mode) else (real, None)


def _refuse_target_source(path: str, real: str, target: str | None) -> None:
    """An existing file that is the target's own source (the file of
    ``train.py:TARGET``, or the module of ``pkg.train:TARGET``, through any
    link): the report would replace the program under test."""
    for source in _target_sources(target):
        try:
            same = os.path.samefile(real, source)
        except OSError:
            continue
        if same:
            shown = "" if source == path else f" ({source})"
            raise OutputError(
                path,
                f"it is the Python source of the program under test, "
                f"{target or _builtin_spec()}{shown}: writing the report there would "
                "overwrite the program",
                "Give a new file name for it (e.g. report.txt)",
            )


def _builtin_spec() -> str:
    from resumecheck.program import BUILTIN_SPEC

    return BUILTIN_SPEC


def _target_sources(target: str | None) -> list[str]:
    """The source file of ``target``'s module, found without importing it (the
    work has not started: importing runs the program's code)."""
    where, sep, _ = (target or _builtin_spec()).rpartition(":")
    if not sep or not where:
        return []
    if where.endswith(".py") or "/" in where or os.sep in where:
        return [where]
    loaded = sys.modules.get(where)
    origin = getattr(getattr(loaded, "__spec__", None), "origin", None)
    if isinstance(origin, str) and os.path.isfile(origin):
        return [origin]
    # as load_target imports a module: from sys.path, then the current directory
    search: list[str] | None = [*sys.path, os.getcwd()]
    spec = None
    parts = where.split(".")
    for i in range(len(parts)):
        try:
            spec = importlib.machinery.PathFinder.find_spec(".".join(parts[:i + 1]), search)
        except (ImportError, ValueError):
            return []
        if spec is None:
            return []
        search = list(spec.submodule_search_locations or [])
    if spec is not None and spec.has_location and isinstance(spec.origin, str):
        return [spec.origin]
    return []


def _refuse_existing_file(path: str, real: str, st: os.stat_result,
                          target: str | None) -> None:
    """A regular file the report would replace: not the program's source,
    not a Python module. (A read-only one: once its directory is probed.)"""
    _refuse_target_source(path, real, target)
    if real.endswith(".py"):
        raise OutputError(
            path, "it is a Python source file (a module of the program under test, "
            "or another): writing there would overwrite it",
            "Give a new file name for it (e.g. report.txt)")


def _probe_special(path: str, real: str) -> None:
    """A device, FIFO or socket: can it be written through?

    A FIFO is never opened here: a writer that opens and closes it hands a
    reader already waiting on it an empty stream (it ends at once), and the
    real write would then wait for a reader forever. Only its permissions are
    checked; the real write opens it normally (waiting for a reader, as
    ``cmd > fifo`` does). A device is opened for writing without blocking
    (O_NONBLOCK) and closed again.
    """
    mode = os.stat(real).st_mode
    if stat.S_ISSOCK(mode):
        raise OutputError(path, "it is a socket, which cannot be opened as a file",
                          "Give a file, a FIFO or a device")
    if stat.S_ISFIFO(mode):
        if not os.access(real, os.W_OK):
            raise _error(path, PermissionError(errno.EACCES, os.strerror(errno.EACCES)))
        return
    try:
        fd = os.open(real, os.O_WRONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise _error(path, exc) from None
    os.close(fd)


def write_report(path: str, text: str, on_wait: Callable[[], None] | None = None) -> None:
    """Write ``text`` to ``path`` (``-``: standard output) without replacing
    anything that is not a regular file. A FIFO that no one reads yet is
    waited for (as ``cmd > fifo`` waits), after calling ``on_wait``."""
    if path == STDOUT:
        write_stdout(text)
        return
    try:
        real, st = _resolved(path)
    except OSError as exc:
        raise _error(path, exc) from None
    try:
        if st is not None and stat.S_ISDIR(st.st_mode):
            raise OutputError(path, "it is a directory", "Give a file name inside it")
        if st is not None and stat.S_ISFIFO(st.st_mode):
            _write_fifo(real, text, on_wait)
            return
        if st is not None and not stat.S_ISREG(st.st_mode):
            # a device or socket: write through it, never replace it
            with open(real, "w", encoding="utf-8") as fh:
                fh.write(text)
            return
        _replace_atomically(real, text, None if st is None else stat.S_IMODE(st.st_mode))
    except OSError as exc:
        raise _error(path, exc) from None


def _write_fifo(path: str, text: str, on_wait: Callable[[], None] | None) -> None:
    """Open the FIFO without waiting: a reader is there (the write goes
    through at once) or is not (ENXIO: say so through ``on_wait``, then wait
    for one). It is never opened and closed unwritten (see ``_probe_special``)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        os.set_blocking(fd, True)
    except OSError as exc:
        if exc.errno != errno.ENXIO:
            raise
        if on_wait is not None:
            on_wait()
        fd = os.open(path, os.O_WRONLY)
    with open(fd, "w", encoding="utf-8") as fh:
        fh.write(text)


def write_stdout(text: str) -> None:
    """Write ``text`` to standard output and flush it. Raises ``OutputError``
    where it cannot be: closed when the command started (``>&-``), or a
    write that fails (``> /dev/full``: ENOSPC; a reader gone: EPIPE). What
    could not be written is then dropped, so that the interpreter's exit does
    not try it again: standard output leads to ``os.devnull`` from then on."""
    stream = sys.stdout
    if stream is None:
        raise OutputError(
            STANDARD_OUTPUT, "it is closed (the command was started with standard output "
            "closed, as `>&-` does)", "Start it with standard output open, or give "
            "--output FILE")
    try:
        stream.write(text)
        stream.flush()
    except OSError as exc:
        abandon_stdout()
        raise _error(STANDARD_OUTPUT, exc) from None


STANDARD_OUTPUT = "standard output"
"""How a message names standard output as a place a report goes."""


def abandon_stdout() -> None:
    """Standard output failed: point it (the stream and file descriptor 1) at
    ``os.devnull``, dropping what it still buffers, so that no later flush
    (the interpreter's own, at exit) fails again with a traceback."""
    if _descriptor(sys.stdout) == 1 or _descriptor(None) is None:
        # (1 failed, or is closed, where the next file opened would take it)
        with contextlib.suppress(OSError):
            null = os.open(os.devnull, os.O_WRONLY)
            if null != 1:
                os.dup2(null, 1)
                os.close(null)
    sys.stdout = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 (lives to exit)


def _descriptor(stream: object) -> int | None:
    """The file descriptor under ``stream`` (None: descriptor 1, if open), or None."""
    try:
        if stream is None:
            os.fstat(1)
            return 1
        return int(stream.fileno())  # type: ignore[attr-defined]
    except (OSError, ValueError, AttributeError):
        return None


def _replace_atomically(real: str, text: str, mode: int | None) -> None:
    parent = os.path.dirname(real) or "."
    fd, tmp = tempfile.mkstemp(dir=parent, prefix=f".{os.path.basename(real)}.")
    try:
        # mkstemp makes 0600 files; a report gets what open() would give it
        os.fchmod(fd, _new_file_mode() if mode is None else mode)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, real)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _new_file_mode() -> int:
    """0666 minus the process's umask: the mode ``open(path, "w")`` gives a new file."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def _error(path: str, exc: OSError) -> OutputError:
    hints = {
        errno.ENOSPC: "The device is full: free some space or write elsewhere",
        errno.EDQUOT: "The disk quota is exceeded: free some space or write elsewhere",
        errno.EROFS: "The file system is read-only: write elsewhere",
        errno.EACCES: "Choose a location you may write to",
        errno.EPERM: "Choose a location you may write to",
        errno.ENOTDIR: "A part of the path is a file, not a directory: check the path",
        errno.EISDIR: "Give a file name, not a directory",
        errno.ENOENT: "Create the directory first, or choose another path",
        errno.EPIPE: "What reads it (the other end of a pipe) closed before the report "
                     "was written: keep the reader open, or write to a file",
        errno.EBADF: "It is not open for writing: open it, or write to a file",
        errno.EFBIG: "The file size limit (ulimit -f) is smaller than the report: raise "
                     "it, or write elsewhere",
    }
    problem = os.strerror(exc.errno) if exc.errno else str(exc)
    name = errno.errorcode.get(exc.errno or 0)
    if name:
        problem += f" ({name})"
    return OutputError(path, problem, hints.get(exc.errno or 0, "Choose another --output"))
