"""The fresh-interpreter transport: a segment run in a process of its own.

The parent writes the spec as JSON, starts ``python -m resumecheck._segment``
(forked from a warm server when one is up: ``forkserver.py``) in its own
process group, and reads the child's phases (build, restore, step N, ...)
from a FIFO. It enforces each phase's bound and the deadline from outside and
kills the child's whole group when one passes, when the check is cancelled or
when this thread is interrupted: no child outlives its check. The child
answers with a result file and an exit status that says what kind of ending
it was (0 done, 3 a target that does not load, 4 an environment failure).

``run_in_subprocess`` is the one entry point of this launch.
"""

from __future__ import annotations

import contextlib
import faulthandler
import json
import os
import re
import select
import signal
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any, NoReturn, Protocol

from resumecheck import forkserver, heap, module_state
from resumecheck.capture import add_loadable_shapes, loadable_shapes
from resumecheck.errors import BudgetExhausted, EnvironmentFailure, TargetError
from resumecheck.faults import (
    DISK_ADVICE, EXTERNAL_SIGNALS, environment_failure, killed_by_signal, signal_text,
)
from resumecheck.program import Target, load_target
from resumecheck.progress import run_label, warned_header
from resumecheck.segments import (
    SCRATCH_ENV,
    Restore,
    SegmentResult,
    SegmentSpec,
    phase_bound,
    timeout_text,
)

__all__ = [
    "ENVIRONMENT_EXIT", "SYS_PATH_ENV", "child_env", "pass_on", "phase_line", "report_phase",
    "run_in_subprocess", "subprocess_main",
]

SYS_PATH_ENV = "RESUMECHECK_SYS_PATH"
"""The parent's sys.path, which a process-isolated segment appends to its own."""

ENVIRONMENT_EXIT = 4
"""Exit status of a process-isolated segment that met an environment failure."""

TARGET_EXIT = 3
"""Exit status of a process-isolated segment whose target would not load."""

class SegmentRunner(Protocol):
    """Runs a segment in the child, reporting its phases on ``report_fd``."""

    def __call__(self, spec: SegmentSpec, target: Target, *,
                 report_fd: int | None = None) -> SegmentResult: ...


class _Cancelled(BaseException):
    """A process-isolated segment was stopped because its check was cancelled."""


@dataclass
class _Files:
    """A segment's files on the parent's side: spec, result, log, phase FIFO."""

    spec: Path
    out: Path
    log_path: Path
    fifo: Path
    log: IO[bytes]
    read_fd: int
    keep_fd: int

    def close_fifo(self) -> None:
        """Close both ends and remove the FIFO: it serves this one segment
        (another run of the same name makes its own)."""
        os.close(self.read_fd)
        os.close(self.keep_fd)
        with contextlib.suppress(OSError):
            self.fifo.unlink()

    def read_log(self) -> str:
        self.log.seek(0)
        output = self.log.read().decode(errors="replace")
        self.log.close()
        return output


def run_in_subprocess(spec: SegmentSpec, cancel: threading.Event | None = None,
                      deadline: float | None = None) -> SegmentResult:
    """Run a segment in a fresh interpreter, in a process group of its own.

    The child reports each phase (build, restore, step N, ...) over a FIFO;
    this side enforces the timeouts and the deadline and kills the child's
    whole process group when one passes, when ``cancel`` is set, or when
    this thread is interrupted (Ctrl-C, SIGTERM): no child outlives its check.
    """
    _require_importable(spec)
    if cancel is not None and cancel.is_set():
        raise _Cancelled()
    files = _open_files(spec)
    env = child_env(spec)
    env["RESUMECHECK_PROGRESS_PATH"] = str(files.fifo)
    env["RESUMECHECK_PARENT_PID"] = str(os.getpid())
    try:
        proc = forkserver.spawn("resumecheck._segment", [str(files.spec), str(files.out)], env,
                                log=str(files.log_path), preload=spec.preload)
    except BaseException:
        files.close_fifo()
        files.log.close()
        raise
    where = None
    try:
        timed_out = _watch_child(proc, files.read_fd, spec.step_timeout, cancel, deadline)
        if timed_out is not None and timed_out[0] != "start" and timed_out[3]:
            where = _where_stuck(proc, files.log_path)  # (still in it: its stack dump is set up)
    finally:
        files.close_fifo()
        if proc.poll() is None:
            _kill_group(proc)
        output = files.read_log()
        pass_on(named_warnings(output if where is None
                               else output[:output.rfind(_DUMP_HEAD_LINE)], spec.name))
    if timed_out is not None:
        phase, step, text, _ = timed_out
        return SegmentResult(
            records=[], names=[], captures={}, end_state=None,
            error=f"{text}{f'; it was at {where}' if where else ''}; its interpreter was killed",
            error_stage="process" if phase == "start" else phase, error_step=step,
            timed_out=True,
        )
    return _outcome(spec, proc.returncode, files.out, output)


_WARNING = re.compile(r"^(\S[^\n]*?\.py):\d+: [^\n]*\n(?:[ \t]+[^\n]*\n)?", re.M)
"""A warning as Python's ``formatwarning`` writes it, ``file.py:line: Category:
message`` and the source line indented under it, or as Lightning's own format
does, without the category."""
_RELAYED: set[str] = set()
"""The warnings this process has relayed from segments' interpreters."""


def named_warnings(output: str, segment: str) -> str:
    """What a segment's interpreter wrote, each warning in it preceded by the
    line that names the check's run it came from, as in-process, and one
    already relayed from another segment left out, as one interpreter shows
    a warning once (trials 511, 537: a program's warning, and Lightning's,
    came 5 to 15 times under process isolation, none said to be whose)."""
    run = run_label(segment)
    pieces, last = [], 0
    for found in _WARNING.finditer(output):
        pieces.append(output[last:found.start()])
        last = found.end()
        text = found.group(0)
        if text in _RELAYED:
            continue
        _RELAYED.add(text)
        pieces.append(f"{warned_header(run, found.group(1))}\n{text}")
    return "".join(pieces) + output[last:]


def pass_on(output: str) -> None:
    """What the program printed in its interpreter goes to this process's
    standard error, as what it prints in-process does (standard output
    carries the report alone)."""
    if output:
        try:
            sys.stderr.write(output)
            sys.stderr.flush()
        except (OSError, ValueError):  # (no stderr any more: the output is only lost)
            pass


def _require_importable(spec: SegmentSpec) -> None:
    if spec.target_spec is None:
        raise TargetError(
            "(an in-memory target)",
            "process isolation needs a target that a fresh interpreter can import",
            "Give the target as module:attr or path/to/file.py:attr, or use "
            "isolation='inprocess'",
        )


def _raise_environment(exc: OSError, workdir: str) -> NoReturn:
    failure = environment_failure(exc, workdir)
    if failure is not None:
        raise failure from exc
    raise exc


def _open_files(spec: SegmentSpec) -> _Files:
    """Write the spec, open the log, and make the FIFO the child reports its phases on."""
    work = Path(spec.workdir)
    spec_path = work / f"{spec.name}.spec.json"
    try:
        spec_path.write_text(json.dumps(asdict(spec)))
        log = open(log_path := work / f"{spec.name}.log", "w+b")
    except OSError as exc:
        _raise_environment(exc, spec.workdir)
    # The child reports each phase through a FIFO: a forked child of the warm
    # server cannot inherit a pipe from this process, a FIFO it opens by name.
    fifo = work / f"{spec.name}.phases"
    try:
        os.mkfifo(fifo)
        read_fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        # our own writer keeps the FIFO from reading as closed before the child opens it
        keep_fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    except OSError as exc:
        log.close()
        _raise_environment(exc, spec.workdir)
    return _Files(spec_path, work / f"{spec.name}.result.json", log_path, fifo, log,
                  read_fd, keep_fd)


def _outcome(spec: SegmentSpec, code: int, out_path: Path, output: str) -> SegmentResult:
    """What the child's exit status and result file say: a result, or the error behind them."""
    if code == TARGET_EXIT and out_path.exists():
        err = json.loads(out_path.read_text())
        raise TargetError(err["target"], err["problem"], err["hint"])
    if code == ENVIRONMENT_EXIT and out_path.exists():
        raise EnvironmentFailure(**json.loads(out_path.read_text())["environment"])
    if code == ENVIRONMENT_EXIT:
        raise EnvironmentFailure("disk", "the interpreter could not write its result",
                                 DISK_ADVICE, str(out_path))
    if code < 0 and -code in EXTERNAL_SIGNALS:
        raise killed_by_signal(-code, "the interpreter running segment " + repr(spec.name))
    if code != 0 or not out_path.exists():
        tail = output.strip().splitlines()[-5:]
        how = (f"was killed by {signal_text(-code)}" if code < 0
               else f"exited with code {code}")
        return SegmentResult(
            records=[], names=[], captures={}, end_state=None,
            error=f"{_interpreter(spec)} {how}: " + " | ".join(tail),
            error_stage="process",
        )
    return SegmentResult.from_plain(json.loads(out_path.read_text()))


_DUMP_HEAD_LINE = "Stack (most recent call first):"
"""What faulthandler writes before the frames of the thread it dumps."""

DUMP_FRAME = re.compile(r'File "([^"]+)", line (\d+) in (\S+)')
"""A frame of a faulthandler stack dump: its file, line and function."""

STACK_DUMP_SIGNAL = int(getattr(signal, "SIGRTMAX", signal.SIGUSR1 + 3)) - 3
"""The signal on which a segment's interpreter (and a rank) writes its Python
stack to its log (faulthandler), sent when a phase outlives its bound. A
real-time signal, which programs leave alone: a program may install its own
handler for SIGUSR1 or SIGUSR2 (a cluster's requeue hook), which would then
run instead, and the stack would not say where the program was. (Where no
real-time signals exist, SIGUSR1.)"""


def _where_stuck(proc: Any, log_path: Path) -> str | None:
    """The program's innermost line in the stack of a child that outlived its
    phase's bound: the child dumps it (faulthandler, STACK_DUMP_SIGNAL) to its log,
    at once from the signal handler; None when none of the frames is the
    program's or no dump came within half a second."""
    before = _read(log_path).count(_DUMP_HEAD_LINE)
    try:
        os.kill(proc.pid, STACK_DUMP_SIGNAL)
    except ProcessLookupError:
        return None
    until = time.monotonic() + 0.5
    while _read(log_path).count(_DUMP_HEAD_LINE) <= before and time.monotonic() < until:
        time.sleep(0.01)
    time.sleep(0.02)  # (the frames follow the dump's first line)
    text = _read(log_path)
    head = text.rfind(_DUMP_HEAD_LINE)
    if head < 0:
        return None
    for path, line, func in DUMP_FRAME.findall(text[head:]):
        if module_state.is_program_file(path):
            return f"{path}:{line}, in {func}"
    return None


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def _watch_child(
    proc: Any, fd: int, step_timeout: float | None,
    cancel: threading.Event | None, deadline: float | None,
) -> tuple[str, int | None, str, bool] | None:
    """Wait for the child, enforcing each phase's bound; the phase that timed
    out (phase, step, wording, and whether the child is still in it: one that
    ended past its bound is caught too, as in-process; the child is left
    running), or None when the child exited by itself."""
    phase, step = "start", None
    since = time.monotonic()
    pending = b""
    open_pipe = True
    while proc.poll() is None:
        ready: list[int] = []
        if phase == "exit":  # the result is written: only the exit is left
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=0.1)
        elif open_pipe:
            ready, _, _ = select.select([fd], [], [], 0.1)
        else:
            time.sleep(0.05)
        if ready:
            chunk = os.read(fd, 4096)
            open_pipe = bool(chunk)  # closed: the child is exiting
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                name, at, started = phase_line(line)
                bound = phase_bound(phase, step_timeout)
                if bound is not None and started - since > bound:  # (it ended, past its bound)
                    return phase, step, timeout_text(phase, step, bound), False
                phase, step, since = name, (None if at in ("", "-") else int(at)), started
        now = time.monotonic()
        if cancel is not None and cancel.is_set():
            _kill_group(proc)
            raise _Cancelled()
        if deadline is not None and now > deadline:
            _kill_group(proc)
            raise BudgetExhausted(None)
        bound = phase_bound(phase, step_timeout)
        if bound is not None and now - since > bound:  # (the caller asks where, then kills it)
            return phase, step, timeout_text(phase, step, bound), True
    return None


def phase_line(line: bytes) -> tuple[str, str, float]:
    """A line ``report_phase`` wrote: (phase, step or ``-``, when it began);
    a line without a time (a rank's ``pid N``) began when it is read."""
    name, _, rest = line.decode().partition(" ")
    at, _, stamp = rest.partition(" ")
    try:
        return name, at, float(stamp)
    except ValueError:
        return name, at, time.monotonic()


def _kill_group(proc: Any) -> None:
    """Kill the child and everything it started (its own process group), and reap it."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


def _watch_parent() -> None:
    """In a process-isolated child: exit when the parent is gone, so a killed
    check leaves no child behind, even one whose step hangs."""
    parent = os.environ.get("RESUMECHECK_PARENT_PID")
    if not parent:
        return

    def watch() -> None:
        while os.getppid() == int(parent):
            time.sleep(0.5)
        os._exit(70)

    threading.Thread(target=watch, name="resumecheck-parent-watch", daemon=True).start()


def _interpreter(spec: SegmentSpec) -> str:
    """Which run's fresh interpreter it was, in words (a crash names it)."""
    if spec.restore is not None:
        return "the restarted interpreter"
    return "the interpreter of the uninterrupted run"


def subprocess_main(spec_path: str, out_path: str, run: SegmentRunner) -> int:
    """The child's side: read the spec, ``run`` the segment, write the result;
    the exit status says what kind of ending it was."""
    _watch_parent()
    faulthandler.register(STACK_DUMP_SIGNAL, all_threads=False)  # (where a hung step is)
    module_state.ignore_imports()
    heap.settle()
    plain = json.loads(Path(spec_path).read_text())
    if plain.get("restore"):
        plain["restore"] = Restore(**plain["restore"])
    spec = SegmentSpec(**plain)
    fifo = os.environ.get("RESUMECHECK_PROGRESS_PATH")
    try:
        fd = os.open(fifo, os.O_WRONLY) if fifo else None
        target = load_target(spec.target_spec)
        add_loadable_shapes(spec.loadable_shapes)
        result = run(spec, target, report_fd=fd)
        result.loadable_shapes = loadable_shapes()
        Path(out_path).write_text(json.dumps(result.to_plain()))
        if fd is not None:  # the parent stops polling and waits for the exit
            report_phase(fd, "exit", None)
    except TargetError as exc:
        Path(out_path).write_text(
            json.dumps({"target": exc.target, "problem": exc.problem, "hint": exc.hint})
        )
        return TARGET_EXIT
    except BaseException as exc:
        failure = environment_failure(exc, spec.workdir)
        if failure is None:
            raise
        Path(out_path).unlink(missing_ok=True)
        try:
            Path(out_path).write_text(json.dumps({"environment": {
                "resource": failure.resource, "detail": failure.detail,
                "advice": failure.advice, "path": failure.path, "lead": failure.lead,
            }}))
        except OSError:
            Path(out_path).unlink(missing_ok=True)
        return ENVIRONMENT_EXIT
    return 0


def child_env(spec: SegmentSpec) -> dict[str, str]:
    """The environment of a process-isolated segment."""
    env = dict(os.environ)
    env["OMP_NUM_THREADS"] = str(spec.threads)
    env[SCRATCH_ENV] = spec.workdir  # (removed by the check whatever ends the segment)
    if spec.hash_seed is not None:
        env["PYTHONHASHSEED"] = str(spec.hash_seed)
    # Modules resolve in the child as they did here: its own standard library
    # and installed packages first, then this interpreter's sys.path (the
    # current directory included, for module:attr targets). Never the current
    # directory first: a random.py there must not replace the standard one.
    env["PYTHONSAFEPATH"] = "1"  # `python -m` would otherwise put the cwd first
    env[SYS_PATH_ENV] = os.pathsep.join(os.path.abspath(p) if p else os.getcwd() for p in sys.path)
    root = str(Path(__file__).resolve().parent.parent)
    if root == os.path.realpath(os.getcwd()):  # resumecheck itself is imported from the cwd
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [env.get("PYTHONPATH"), root]))
    return env


def report_phase(fd: int, name: str, step: int | None) -> None:
    """In the child: tell the parent which phase (and step) starts now, and
    when by the system's monotonic clock, which the parent reads too: a phase
    is timed from its own start and end, not from when the parent read them
    (a trial: a bound a step outlived was enforced or not, by the parent's
    polling)."""
    try:
        os.write(fd, f"{name} {'-' if step is None else step} {time.monotonic():.6f}\n".encode())
    except OSError:  # the parent is gone: nobody waits for this segment
        os._exit(70)

