"""Environment failures: what ended a run that was not the program's doing.

Out of disk space, a file size limit (``ulimit -f``), out of memory, or a
process killed from outside are failures of the machine, not verdicts on the
program: they become an ``EnvironmentFailure`` with advice, never a result.
"""

from __future__ import annotations

import errno
import os
import re
import select
import shutil
import signal
from pathlib import Path

import torch

from resumecheck.errors import CheckpointError, EnvironmentFailure
from resumecheck.module_state import program_line
from resumecheck.phrases import amount

__all__ = [
    "DISK_ADVICE", "EXTERNAL_SIGNALS", "after_restore", "beyond_the_machine", "environment_failure",
    "killed_by_signal", "signal_text",
]

# Signals a process receives from outside (a user, a scheduler, the kernel's
# out-of-memory killer, a resource limit): an environment failure. The others
# (SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL) are the program crashing.
EXTERNAL_SIGNALS = {
    getattr(signal, name) for name in (
        "SIGKILL", "SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGXCPU", "SIGXFSZ",
        "SIGUSR1", "SIGUSR2", "SIGPIPE", "SIGALRM",
    ) if hasattr(signal, name)
}
_DISK_ERRNOS = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)}
DISK_ADVICE = (
    "Free space there, or point TMPDIR at a disk with more room (resumecheck keeps its "
    "scratch files and the program's checkpoints under TMPDIR), then run again."
)
_FSIZE_ADVICE = (
    "Raise the limit in the shell or job that starts the check (`ulimit -f unlimited`, or "
    "the batch scheduler's file size limit), or check a smaller configuration of the "
    "program (model size), then run again."
)
_READER_GONE_ADVICE = (
    "Send the output to a file (`> check.log 2>&1`) or to a reader that reads all of it "
    "(`| tee check.log`, `| less`), then run again; nothing is wrong with the program."
)
_MEMORY_ADVICE = (
    "Give the check more memory, or check a smaller configuration of the program "
    "(batch, model size), or, with --isolation process, use a larger --threads so that "
    "fewer interpreters run side by side; then run again."
)


def _with_limit(detail: str) -> str:
    """``detail`` and, where one is set, the address-space limit that may be what ran short."""
    limit = _address_space_limit()
    return detail.rstrip(".") + limit if limit else detail


def _address_space_limit() -> str:
    """Where this process runs under an address-space limit (``ulimit -v``), that
    limit in words, which may be what ran short rather than the machine (trial
    462: 6 GB of it, 17 GB free, read "the machine ran short"); '' where none."""
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    except (ImportError, OSError, ValueError):
        return ""
    if soft == resource.RLIM_INFINITY or soft <= 0:
        return ""
    return (f"; this process runs under an address-space limit (ulimit -v) of {amount(soft)}, "
            "which may be what ran short: raise it, or run without it")


def signal_text(signum: int) -> str:
    """``SIGKILL (signal 9)``."""
    try:
        name = signal.Signals(signum).name
    except ValueError:
        name = "an unknown signal"
    return f"{name} (signal {signum})"


def killed_by_signal(signum: int, who: str) -> EnvironmentFailure:
    """The environment failure of a process killed from outside."""
    advice = "Something outside resumecheck sent it (a user, a scheduler, a time limit); run again."
    if signum == getattr(signal, "SIGKILL", None):
        advice = (
            "SIGKILL is most often the kernel's out-of-memory killer (see `dmesg` or the "
            "job's memory limit) or a scheduler ending the job: give the check more memory "
            "or check a smaller configuration, then run again."
        )
    return EnvironmentFailure("signal", f"{who} was killed by {signal_text(signum)}", advice)


def environment_failure(exc: BaseException, workdir: str | None = None) -> EnvironmentFailure | None:
    """The environment failure behind ``exc`` or anything in its chain
    (out of disk space, out of memory), or None when the program failed.

    torch.save reports a full disk as a RuntimeError from its zip writer, with
    no errno: that counts as out of space when the file system it wrote to
    (``workdir`` when no path is known) is then nearly full.
    """
    path: str | None = None
    program = False
    for cur in _chain(exc):
        if isinstance(cur, EnvironmentFailure):
            return cur
        if isinstance(cur, BrokenPipeError) and (gone := _readers_gone()):
            # (a trial: `2>&1 | head -1` read "Fix the program")
            return EnvironmentFailure(
                "output", f"{type(cur).__name__}: {cur.strerror or cur}; {' and '.join(gone)} "
                f"{'is a pipe' if len(gone) == 1 else 'are a pipe'} whose reader closed it, as "
                "`head` does once it has read enough", _READER_GONE_ADVICE)
        if isinstance(cur, CheckpointError) and path is None:
            path, program = cur.path, cur.by_program
        if isinstance(cur, OSError) and cur.errno == errno.EFBIG:
            where = cur.filename if isinstance(cur.filename, str) else path or workdir
            return _file_size_limit(f"{type(cur).__name__}: {cur.strerror or cur}", where)
        if isinstance(cur, OSError) and cur.errno in _DISK_ERRNOS:
            if not isinstance(cur.filename, str) and program and not _nearly_full(path):
                return _elsewhere(cur, path)
            where = cur.filename if isinstance(cur.filename, str) else path or workdir
            return EnvironmentFailure("disk", f"{type(cur).__name__}: {cur.strerror or cur}",
                                      DISK_ADVICE, where)
        if _out_of_memory(cur):
            text = _first_line(cur)
            return EnvironmentFailure(
                "memory", _with_limit(f"{type(cur).__name__}: {text}" if text
                                      else type(cur).__name__), _MEMORY_ADVICE)
        if _torch_write_failed(cur) and path and _at_file_size_limit(path):
            # Python ignores SIGXFSZ: the write fails with EFBIG, which torch's
            # zip writer reports without the errno ("unexpected pos ...")
            return _file_size_limit(f"torch.save failed ({_first_line(cur)})", path)
        if _torch_write_failed(cur) and _nearly_full(path or workdir):
            return EnvironmentFailure(
                "disk", f"torch.save failed ({_first_line(cur)}) and the disk is full",
                DISK_ADVICE, path or workdir)
    return None


def _readers_gone() -> list[str]:
    """Which of this process's standard output and standard error are a pipe
    whose reader has gone (its write end reports POLLERR)."""
    gone = []
    for fd, name in ((1, "standard output"), (2, "standard error")):
        poll = select.poll()
        try:
            poll.register(fd, select.POLLOUT)
            events = poll.poll(0)
        except (OSError, ValueError):
            continue
        if any(event & select.POLLERR for _, event in events):
            gone.append(name)
    return gone


def _elsewhere(exc: OSError, given: str | None) -> EnvironmentFailure:
    """The program's save() ran out of space, naming no file, while the path
    it was given has room: it wrote somewhere else (a directory of its own)."""
    return EnvironmentFailure(
        "disk", f"{type(exc).__name__}: {exc.strerror or exc}, in the program's save(), in a "
        f"file the error does not name; the path resumecheck gave it ({given}) is on a disk "
        "with room, so it wrote elsewhere",
        "Free space on the disk where your save() writes (or have it write inside the path it "
        "is given), then run again.")


def _file_size_limit(detail: str, where: str | None) -> EnvironmentFailure:
    limit = _fsize_limit()
    said = f"the file size limit (ulimit -f) is {limit} bytes" if limit is not None else \
        "the file size limit (ulimit -f) was reached"
    return EnvironmentFailure("file size", f"{detail}; {said}", _FSIZE_ADVICE, where)


def _fsize_limit() -> int | None:
    """This process's file size limit (RLIMIT_FSIZE) in bytes, None when unlimited."""
    try:
        import resource
    except ImportError:  # not on this platform
        return None
    soft = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    return None if soft == resource.RLIM_INFINITY else soft


def _at_file_size_limit(path: str) -> bool:
    """A file at ``path`` (or, for a directory, a file in it) has reached the
    file size limit: a write that crossed it failed there."""
    limit = _fsize_limit()
    if limit is None:
        return False
    if os.path.isfile(path):
        files = [path]
    else:
        files = [os.path.join(d, f) for d, _, names in os.walk(path) for f in names][:1000]
    for name in files:
        try:
            if os.path.getsize(name) >= limit:
                return True
        except OSError:
            continue
    return False


def _first_line(exc: BaseException) -> str:
    text = str(exc)
    return text.splitlines()[0] if text else ""


def _out_of_memory(exc: BaseException) -> bool:
    if isinstance(exc, MemoryError):
        return True
    if isinstance(exc, OSError) and exc.errno == errno.ENOMEM:
        return True
    oom = getattr(torch, "OutOfMemoryError", None) or getattr(torch.cuda, "OutOfMemoryError", None)
    if oom is not None and isinstance(exc, oom):
        return True
    text = str(exc) if isinstance(exc, RuntimeError) else ""
    return any(m in text for m in (
        "out of memory", "DefaultCPUAllocator: not enough memory",
        "DefaultCPUAllocator: can't allocate memory",
    ))


_ASKED = (
    (re.compile(r"tried to allocate (\d+) bytes"), {"": 1}),  # the CPU allocator
    (re.compile(r"Tried to allocate ([\d.]+) ([KMGT]i?B|B)"),  # CUDA's
     {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}),
)


def beyond_the_machine(exc: BaseException, restored: bool = True) -> str | None:
    """Out of memory in one allocation larger than the whole machine (host
    memory; for CUDA, the device's): not something more memory would fix,
    but the program asking for it: in a restored run, where the uninterrupted
    run passed every step in the same machine, or, ``restored`` False, in the
    uninterrupted run itself (trial 462: 4.4 TB asked at its step 3 read as
    the environment's failure, "give the check more memory"). Words that say
    so, or None (an ordinary out-of-memory, or a size the message does not
    give: the environment's failure)."""
    text = str(exc)
    for pattern, units in _ASKED:
        found = pattern.search(text)
        if not found:
            continue
        unit = found.group(2) if found.lastindex == 2 else ""
        asked = float(found.group(1)) * units.get(unit, 1)
        has, what = _memory_of("CUDA" in text or unit != "")
        if has and asked > has and not restored:
            return (f"out of memory: one allocation asked for {amount(asked)}, more than this "
                    f"machine's whole {what} ({amount(has)}): more memory would not fix it; "
                    "the program asks for it (a size or a shape far larger than meant) "
                    f"({type(exc).__name__}: {_first_line(exc)})")
        if has and asked > has:
            return (f"out of memory in the restored run: one allocation asked for "
                    f"{amount(asked)}, more than this machine's whole {what} "
                    f"({amount(has)}), at a step the uninterrupted run passed: more memory "
                    "would not fix it; the restored program asks for more than the "
                    f"uninterrupted one did ({type(exc).__name__}: {_first_line(exc)})")
    return None


def after_restore(failure: EnvironmentFailure, exc: BaseException, step: int | None,
                  restored_at: int) -> EnvironmentFailure:
    """An out-of-memory in a restored run, where the uninterrupted run passed
    that step in the same machine: said with the step, the program's line,
    and what it means if more memory does not fix it (a trial read a
    MemoryError its load() caused as the machine's fault, with no step)."""
    line = next((where for cur in _chain(exc) if (where := program_line(cur))), None)
    at = f" at {line}" if line else ""
    return EnvironmentFailure(
        failure.resource, f"{failure.detail}; in step {step} of a run restored at "
        f"{restored_at}{at}, a step the uninterrupted run passed",
        failure.advice + " If it runs out again with more memory, the restored program asks "
        "for more than the uninterrupted one did: look at what your load() sets (a size, a "
        "buffer, a cache).", failure.path,
        lead="a restored run failed at a step the uninterrupted run passed in this machine: "
        "the machine ran short, or the restored program asks for more than the uninterrupted "
        "one did")


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and what caused it (``__cause__``, else ``__context__``), each
    once, innermost last."""
    out: list[BaseException] = []
    cur: BaseException | None = exc
    while cur is not None and all(cur is not seen for seen in out):
        out.append(cur)
        nxt = cur.__cause__ or cur.__context__
        cur = nxt if isinstance(nxt, BaseException) else None
    return out


def _memory_of(device: bool) -> tuple[float, str]:
    """The machine's total memory in bytes (0 when unknown), and its name."""
    if device and torch.cuda.is_available():
        index = torch.cuda.current_device()
        return float(torch.cuda.get_device_properties(index).total_memory), "device memory"
    try:
        return float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")), "memory"
    except (ValueError, OSError, AttributeError):
        return 0.0, "memory"


def _torch_write_failed(exc: BaseException) -> bool:
    text = str(exc) if isinstance(exc, RuntimeError) else ""
    return any(m in text for m in ("inline_container", "file write failed", "PytorchStreamWriter"))


def _nearly_full(path: str | None, floor: int = 16 << 20) -> bool:
    if not path:
        return False
    where = Path(path)
    while not where.exists() and where != where.parent:
        where = where.parent
    try:
        return shutil.disk_usage(where).free < floor
    except OSError:
        return False

