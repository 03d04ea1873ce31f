"""Many ranks: a segment run as N processes under torch's elastic launcher.

A distributed segment is the same segment as in one process (build, restore,
steps, capture; ``resumecheck.runner``), run by every rank of a fresh
``torch.distributed.run`` launch (``resumecheck._launch``, the launcher's own
API with ``--standalone``'s rendezvous), so a restart starts every rank anew.
Warm (the default), the launcher is forked from a warm server that holds
torch and its distributed modules (``LAUNCHER_PRELOAD``), and torch's launcher
forks each rank from it (``start_method="fork"``); each rank becomes what a
new interpreter would be before it runs (``forkserver.become_fresh``: its own
session, new entropy in every global stream). ``RESUMECHECK_WARM=0``: the
launcher and every rank are new interpreters. Each rank initialises the default process group (gloo on
CPU, NCCL when the program asks for a CUDA device) before the program is
built, runs the segment exactly as a process-isolated segment does, and
writes its own result, trace and captures (``NAME.rank{r}.*``).

This side merges the ranks into one segment result, so the engine judges N
ranks as it judges one process:

* a per-rank component (``components.PER_RANK``: the random streams, the
  data position) becomes one component per rank, ``rng[rank 1]``, each
  captured, restored, compared and droppable alone;
* every step's quantities are recorded per rank (``loss[rank 1]``,
  ``grad:fc.weight[rank 0]``), so a divergence names its rank; a step's loss
  is the mean over ranks;
* replicated state (every rank equal, as under DDP) is kept once; state that
  differs between ranks (sharded) is kept per rank inside the component.

Failures never hang: each rank reports its phases over a FIFO of its own, and
this side bounds them as for one process (the step timeout; other phases
``max(step timeout, PHASE_TIMEOUT)``). A rank past its bound is the hung one;
before every rank is killed, each dumps its Python stack (faulthandler), so
the report says where the hung rank was and that the others waited inside
torch. A rank that raises, exits or is killed ends the launch (torch's
launcher stops the others); the segment is ``failed`` with that rank, its
error and its step. Collectives time out after the same phase bound. Joining
the process group (and, forked, starting) is bounded by ``LAUNCH_BOUND``
whatever the step timeout; a launch held up there, before any of the program
runs, is launched once more. Every
process is killed by process group (each rank leads its own session) and
checked gone.
"""

from __future__ import annotations

import faulthandler
import json
import os
import select
import signal
import sys
import threading
import time
from dataclasses import asdict, replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import torch

from resumecheck import forkserver
from resumecheck.capture import keep_written, load_checkpoint
from resumecheck.components import PER_RANK, rank_name, split_rank_name
from resumecheck.compare import digest
from resumecheck.errors import (
    BudgetExhausted, CheckpointError, EnvironmentFailure, TargetError,
)
from resumecheck.faults import killed_by_signal, signal_text
from resumecheck.interrupt import proc_stat
from resumecheck.segments import PHASE_TIMEOUT, Restore, SegmentResult, SegmentSpec, phase_bound
from resumecheck.transport import (
    DUMP_FRAME, ENVIRONMENT_EXIT, STACK_DUMP_SIGNAL, child_env, pass_on, phase_line,
    subprocess_main,
)
from resumecheck.trace import StepRecord, load_step_file, save_step_file

__all__ = [
    "COLLECTIVE_TIMEOUT_ENV", "LAUNCHER_PRELOAD", "launch_env", "launched_world_size",
    "prestart_launchers", "rank_main", "rank_name", "run_ranks", "split_rank_name",
]

COLLECTIVE_TIMEOUT_ENV = "RESUMECHECK_COLLECTIVE_TIMEOUT"
"""Seconds a rank's collectives wait for the others (the process group's timeout)."""

_PHASES_ENV = "RESUMECHECK_RANK_PHASES"
_LOG_ENV = "RESUMECHECK_RANK_LOG"
# What torch's launcher and a user's torchrun put in the environment: a launch
# started from inside a rank must not inherit them.
_LAUNCH_VARS = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK",
                "GROUP_WORLD_SIZE", "ROLE_RANK", "ROLE_WORLD_SIZE", "ROLE_NAME",
                "MASTER_ADDR", "MASTER_PORT")


BEFORE_PROGRAM = ("start", "group")
"""A rank's phases before any of the program runs: starting (torch's launcher
and the rank's interpreter) and joining the process group."""

LAUNCH_BOUND = 60.0
"""Seconds a rank may spend joining its process group, and, forked from the
warm server, starting, whatever the step timeout: on one machine each takes
well under a second. A launch held up there is launched once more."""


LAUNCHER_PRELOAD = (
    "torch.distributed.launcher.api", "torch.distributed.elastic.multiprocessing",
    "torch.distributed.checkpoint", "torch.distributed.checkpoint.state_dict",
    "torch.distributed.checkpoint._fsspec_filesystem",  # what every dcp.save/load imports
    "torch.distributed.fsdp", "torch.nn.parallel", "resumecheck.distributed",
)
"""What the warm server of distributed launches imports besides torch (torch's
own modules only): torch's launcher, which the launcher needs, and the
distributed checkpoint (with the fsspec storage it looks for at every save
and load), FSDP and DDP, which every rank of a distributed program imports;
forked, a rank finds them loaded instead of importing them again (seconds
per rank on a busy machine)."""


def prestart_launchers(hash_seeds: list[str | None]) -> None:
    """Start the warm servers of distributed launches for these hash seeds now,
    side by side (``forkserver.prestart``); a no-op where warm start is off."""
    forkserver.prestart(hash_seeds, preload=LAUNCHER_PRELOAD)


def launched_world_size(environ: dict[str, str] | None = None) -> tuple[int, int] | None:
    """(rank, world size) when this process is a rank started by torchrun (a
    user's ``torchrun --nproc-per-node N -m resumecheck run ...``), else None."""
    env = os.environ if environ is None else environ
    if "TORCHELASTIC_RUN_ID" not in env or "WORLD_SIZE" not in env or "RANK" not in env:
        return None
    return int(env["RANK"]), int(env["WORLD_SIZE"])


# -- this side: launch, watch, merge -------------------------------------------


class _Cancelled(BaseException):
    """The check was abandoned: every rank was killed."""


def collective_timeout(step_timeout: float | None) -> float:
    """How long a collective waits for the other ranks: the bound of a phase
    other than a step (max(step timeout, PHASE_TIMEOUT); PHASE_TIMEOUT when
    steps are not bounded). This side kills a hung launch before that; the
    bound ends a collective whose peer is gone when nothing else does."""
    return max(step_timeout or 0.0, PHASE_TIMEOUT)


def run_ranks(spec: SegmentSpec, cancel: threading.Event | None = None,
              deadline: float | None = None) -> SegmentResult:
    """Run ``spec`` as ``spec.nproc`` ranks and merge them into one result."""
    n = spec.nproc or 1
    if spec.target_spec is None:
        raise TargetError(
            "(an in-memory target)",
            "a distributed check starts every rank as a fresh interpreter, which must "
            "import the target",
            "Give the target as module:attr or path/to/file.py:attr",
        )
    if cancel is not None and cancel.is_set():
        raise _Cancelled()
    work = Path(spec.workdir)
    base = spec.name
    shared_checkpoint = _write_rank_specs(spec, n, work)
    stopped = False  # (by the check: its time budget, or the check abandoned)
    try:
        hung, code, watch, launch_output = _launch(spec, n, cancel, deadline)
        if hung is not None and hung[1] in BEFORE_PROGRAM:
            # Nothing of the program ran: torch's rendezvous was held up (seen on a
            # loaded machine: one forked rank never got through connecting to the
            # launcher's store). A second launch loses nothing.
            pass_on(f"resumecheck: {hung[0]}; nothing of the program had run, so segment "
                    f"{base!r} is launched once more\n")
            for r in range(n):
                (work / f"{base}.rank{r}.log").unlink(missing_ok=True)
            hung, code, watch, launch_output = _launch(spec, n, cancel, deadline)
            if hung is not None and hung[1] in BEFORE_PROGRAM:
                hung = (f"{hung[0]}; launched once more, it did the same. Nothing of the "
                        "program had run: torch's rendezvous on this machine is held up (look "
                        "for a firewall, or no free local ports); RESUMECHECK_WARM=0 starts "
                        "every rank as a new interpreter", hung[1], hung[2])
    except (BudgetExhausted, _Cancelled):
        # (trial 412: a passing fuzz printed 70 lines of the ranks' KeyboardInterrupt,
        # ending in the program's load(), as the budget stopped them mid-collective)
        stopped = True
        raise
    finally:
        if not stopped:
            _pass_on_ranks(work, base, n)
    if hung is not None and hung[1] in BEFORE_PROGRAM:
        return _failed(hung[0], "rendezvous", None)  # (not the program's, nor a bound's)
    if hung is not None:
        return replace(_failed(hung[0], hung[1], hung[2]), timed_out=True)
    result = _collect(spec, n, code, watch, work / f"{base}.failures.json", launch_output)
    if result.error is None and shared_checkpoint is not None:
        result.program_checkpoint = str(shared_checkpoint)
    return result


def _launch(spec: SegmentSpec, n: int, cancel: threading.Event | None, deadline: float | None
            ) -> tuple[tuple[str, str, int | None] | None, int | None, _RankWatch, str]:
    """One launch of the segment's ranks, watched until it ends or a rank
    outlives its bound: (where it hung or None, the launcher's exit code, the
    watch, the launcher's output)."""
    work = Path(spec.workdir)
    base = spec.name
    fifos, keep = [], []
    try:
        for r in range(n):
            fifo = work / f"{base}.rank{r}.phases"
            fifo.unlink(missing_ok=True)
            os.mkfifo(fifo)
            fifos.append(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
            keep.append(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        env = launch_env(spec)
        env[_PHASES_ENV] = str(work / f"{base}.rank{{rank}}.phases")
        env[_LOG_ENV] = str(work / f"{base}.rank{{rank}}.log")
        env[COLLECTIVE_TIMEOUT_ENV] = f"{collective_timeout(spec.step_timeout):g}"
        launch_log = work / f"{base}.launch.log"
        with open(launch_log, "w+b") as log:
            # forked from the warm server when it is on (and the launcher then
            # forks the ranks), a new interpreter otherwise; either way in a
            # process group of its own, its output in the launch log
            proc = forkserver.spawn(
                "resumecheck._launch",
                [str(n), str(work / f"{base}.failures.json"), str(work / f"{base}.launch-logs"),
                 "-m", "resumecheck._rank", str(work / f"{base}.rank{{rank}}.spec.json"),
                 str(work / f"{base}.rank{{rank}}.result.json")],
                env, log=str(launch_log), preload=LAUNCHER_PRELOAD,
            )
            # (forked as _launch forks them: not where a GPU is, each rank a new interpreter)
            watch = _RankWatch(n, fifos,
                               forked=forkserver.available() and not forkserver.gpu_device())
            try:
                hung = watch.wait(proc, spec.step_timeout, cancel, deadline, work, base)
            finally:  # (a rank that said it exited is not signalled: its pid may be reused)
                _kill_all(proc, {r: pid for r, pid in watch.pids.items()
                                 if r not in watch.exited})
            log.seek(0)
            launch_output = log.read().decode(errors="replace")
    finally:
        for fd in [*fifos, *keep]:
            os.close(fd)
    return hung, proc.returncode, watch, launch_output


class _RankWatch:
    """Each rank's last reported phase (and when), its pid and its exit."""

    def __init__(self, n: int, fds: list[int], forked: bool = False) -> None:
        self.n = n
        self.fds = fds
        self.forked = forked
        """The launcher and its ranks are forked (no interpreter starts): starting is bounded."""
        now = time.monotonic()
        self.phase: list[tuple[str, int | None]] = [("start", None)] * n
        self.since = [now] * n
        self.pids: dict[int, int] = {}
        self.exited: dict[int, int] = {}
        self.last_step: list[int | None] = [None] * n
        self._pending = [b""] * n

    def read(self, timeout: float) -> None:
        ready, _, _ = select.select(self.fds, [], [], timeout)
        for fd in ready:
            r = self.fds.index(fd)
            chunk = os.read(fd, 4096)
            self._pending[r] += chunk
            *lines, self._pending[r] = self._pending[r].split(b"\n")
            for line in lines:
                name, at, started = phase_line(line)
                if name == "pid":
                    self.pids[r] = int(at)
                elif name == "exit" and at.lstrip("-").isdigit():  # the rank's exit code
                    self.exited[r] = int(at)
                else:
                    step = None if at in ("", "-") else int(at)
                    self.phase[r] = (name, step)
                    self.since[r] = started
                    if name == "step":
                        self.last_step[r] = step

    def wait(self, proc: Any, step_timeout: float | None,
             cancel: threading.Event | None, deadline: float | None, work: Path,
             base: str) -> tuple[str, str, int | None] | None:
        """Until the launch ends; (error, stage, step) when a rank outlived its bound."""
        while proc.poll() is None:
            # once every rank has said it exited, only the launcher's own end is
            # awaited: look more often (it comes within a tenth of a second)
            self.read(0.1 if len(self.exited) < self.n else 0.01)
            now = time.monotonic()
            if cancel is not None and cancel.is_set():
                raise _Cancelled()
            if deadline is not None and now > deadline:
                raise BudgetExhausted(None)
            late = []
            for r in range(self.n):
                bound = self._bound(self.phase[r][0], step_timeout)
                if r not in self.exited and bound is not None and now - self.since[r] > bound:
                    late.append((r, bound))
            if late:
                return self._hung(late, work, base)
        self.read(0)
        return None

    def _bound(self, phase: str, step_timeout: float | None) -> float | None:
        if phase == "group" or phase == "start" and self.forked:
            return LAUNCH_BOUND
        return phase_bound(phase, step_timeout)

    def _hung(self, late: list[tuple[int, float]], work: Path,
              base: str) -> tuple[str, str, int | None]:
        """Where every rank was when one outlived its bound, from a stack dump
        of each (faulthandler, on STACK_DUMP_SIGNAL); which rank hung."""
        stuck = [r for r in range(self.n) if r not in self.exited]
        logs = {r: work / f"{base}.rank{r}.log" for r in range(self.n)}
        before = {r: _dumps(logs[r]) for r in stuck if r in self.pids}
        for pid in self.pids.values():
            try:
                os.kill(pid, STACK_DUMP_SIGNAL)
            except ProcessLookupError:
                pass
        # each dump is written from the signal handler at once: wait until every
        # stuck rank's is there (half a second at most), not a fixed half second
        until = time.monotonic() + 0.5
        while any(_dumps(logs[r]) <= n for r, n in before.items()) and time.monotonic() < until:
            time.sleep(0.01)
        time.sleep(0.02)  # the frames follow each dump's first line
        frames = {r: _innermost_frame(logs[r]) for r in range(self.n)}
        where = {r: f[0] for r, f in frames.items() if f is not None}
        outside = [r for r in stuck if (f := frames[r]) is not None and not f[1]]
        r, bound = late[0]
        if len(outside) == 1:
            r = outside[0]
        phase, step = self.phase[r]
        what = (f"step {step} took longer than {bound:g} s (the step timeout)"
                if phase == "step" else f"its phase {phase!r} took longer than {bound:g} s")
        text = f"rank {r} hung: {what}"
        if phase in BEFORE_PROGRAM:
            text = (f"rank {r} did not join the process group within {bound:g} s"
                    if phase == "group" else f"rank {r} did not start within {bound:g} s"
                    if self.pids else f"no rank started within {bound:g} s")
        if r in where:
            text += f"; it was at {where[r]}"
        others = [f"rank {o} at {where[o]}" for o in stuck if o != r and o in where]
        if others:
            text += "; waiting for it: " + ", ".join(others)
        text += "; every rank was killed" if self.pids else "; the launch was killed"
        return text, phase, step


_DUMP_HEAD = "most recent call first):"


def _dumps(log: Path) -> int:
    """How many stack dumps a rank's log holds (faulthandler's, on STACK_DUMP_SIGNAL)."""
    try:
        return log.read_text(errors="replace").count(_DUMP_HEAD)
    except OSError:
        return 0


def _innermost_frame(log: Path) -> tuple[str, bool] | None:
    """The innermost Python frame of the last stack dump in a rank's log, in
    words, and whether it lies inside torch (a collective, a backward)."""
    try:
        text = log.read_text(errors="replace")
    except OSError:
        return None
    head = text.rfind(_DUMP_HEAD)
    if head < 0:
        return None
    m = DUMP_FRAME.search(text[head:])
    if m is None:
        return None
    path, line, func = m.groups()
    inside = os.sep + "torch" + os.sep in path and "site-packages" in path \
        or path.startswith(str(Path(torch.__file__).parent))
    short = path
    try:
        short = os.path.relpath(path)
    except ValueError:
        pass
    if inside:
        short = "torch/" + path.split(os.sep + "torch" + os.sep, 1)[-1]
    return f"{short}:{line} in {func}", inside


def _kill_all(proc: Any, pids: dict[int, int]) -> None:
    """Kill the launcher's process group and each rank's (every rank leads
    its own session), reap the launcher, and wait until the ranks are gone."""
    for pgid in [proc.pid, *pids.values()]:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    proc.wait()
    until = time.monotonic() + 5.0
    while any(_alive(pid) for pid in pids.values()) and time.monotonic() < until:
        time.sleep(0.05)


def _alive(pid: int) -> bool:
    """A process that exists and is not a zombie."""
    fields = proc_stat(pid)
    return fields is not None and fields[0] != "Z"


def _failed(error: str, stage: str | None, step: int | None) -> SegmentResult:
    return SegmentResult(records=[], names=[], captures={}, end_state=None,
                         error=error, error_stage=stage, error_step=step)


def launch_env(spec: SegmentSpec) -> dict[str, str]:
    """The launcher's environment: this one without another launch's
    variables, the segment's threads and hash seed, and this interpreter's
    module path (as for a process-isolated segment)."""
    return {k: v for k, v in child_env(spec).items()
            if k not in _LAUNCH_VARS and not k.startswith("TORCHELASTIC_")}


def _first_problem(problems: list[tuple[int, int, str, str | None, int | None]]) -> SegmentResult:
    """The failure of the rank that failed first, naming the ranks that followed."""
    problems.sort(key=lambda p: (p[0], p[1]))
    _, _, text, failed_stage, step = problems[0]
    echoes = [p[1] for p in problems[1:] if p[0] == 1]
    stopped = [p[1] for p in problems[1:] if p[0] == 2]
    if echoes:
        text += "; then " + _ranks(echoes) + " failed too (a collective lost its peer)"
    if stopped:
        text += "; torch's launcher then stopped " + _ranks(stopped)
    return _failed(text, failed_stage, step)


def _write_rank_specs(spec: SegmentSpec, n: int, work: Path) -> Path | None:
    """Each rank's spec file; and the program's shared checkpoint directory, when
    it saves: ``save(path)`` is called on every rank with one directory (DCP
    writes its shards and metadata there), each rank's own name for it a link."""
    base = spec.name
    for r in range(n):
        rank_spec = replace(spec, name=f"{base}.rank{r}", nproc=None,
                            restore=_rank_restore(spec.restore, r, n))
        (work / f"{base}.rank{r}.spec.json").write_text(json.dumps(asdict(rank_spec)))
    if spec.program_save_at is None:
        return None
    shared = work / f"{base}.program{spec.program_save_at}"
    shared.mkdir(parents=True, exist_ok=True)
    for r in range(n):
        link = work / f"{base}.rank{r}.program{spec.program_save_at}"
        link.unlink(missing_ok=True)
        link.symlink_to(shared.name)
    return shared


def _read_json(path: Path) -> dict[str, Any] | None:
    """A rank's (or the launcher's) JSON file; None when there is none, or only
    part of one: a rank that torch's launcher stopped, because another rank
    failed, may be stopped while it writes its result."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _collect(spec: SegmentSpec, n: int, code: int | None, watch: _RankWatch,
             failures_path: Path, launch_output: str) -> SegmentResult:
    """Each rank's result, merged; or the failure of the rank that failed first."""
    work = Path(spec.workdir)
    failures: dict[str, Any] = _read_json(failures_path) or {}
    outs = {r: _read_json(work / f"{spec.name}.rank{r}.result.json") for r in range(n)}
    for r in range(n):  # what the program or the environment decided, as for one process
        exitcode = failures.get(str(r), {}).get("exitcode", watch.exited.get(r))
        out = outs[r]
        if exitcode == 3 and out is not None and "target" in out:
            raise TargetError(out["target"], out["problem"], out["hint"])
        if exitcode == ENVIRONMENT_EXIT and out is not None and "environment" in out:
            raise EnvironmentFailure(**out["environment"])
    if code is not None and code < 0 and not failures:
        # the launcher itself was killed from outside, as a lone interpreter can be
        raise killed_by_signal(-code, f"the launcher of segment {spec.name!r}")
    # (priority, rank, wording, stage, step): 0 the cause, 1 a rank whose
    # collective lost its peer, 2 a rank torch's launcher stopped because of it
    problems: list[tuple[int, int, str, str | None, int | None]] = []
    for r in range(n):
        out, failure = outs[r], failures.get(str(r))
        last, phase = watch.last_step[r], watch.phase[r][0]
        stage = phase if phase in ("build", "restore", "step", "save", "capture") else "process"
        if out is not None and out.get("error"):
            # an error that only says a peer is gone is a consequence of another rank's
            priority = 1 if _peer_error(out["error"]) else 0
            problems.append((priority, r, f"rank {r}: {out['error']}", out.get("error_stage"),
                             out.get("error_step")))
        elif failure is not None and not failure.get("first", True):
            problems.append((2, r, f"rank {r}", stage, last))
        elif failure is None and out is None and failures:
            # ranks forked by torch's launcher: it reports the rank that failed
            # first only, and stops the others
            problems.append((2, r, f"rank {r}", stage, last))
        elif failure is not None and failure["exitcode"] < 0:
            problems.append((0, r, f"rank {r} was killed by {signal_text(-failure['exitcode'])}"
                             f"{_during(phase, last)}; resumecheck did not send it: the program "
                             "itself did, or the system (SIGKILL most often comes from the "
                             "out-of-memory killer: see `dmesg`)", stage, last))
        elif failure is not None:
            tail = _tail(work / f"{spec.name}.rank{r}.log")
            problems.append((0, r, f"rank {r} exited with code {failure['exitcode']}"
                             f"{_during(phase, last)}" + (f": {tail}" if tail else ""),
                             stage, last))
        elif out is None:
            problems.append((0, r, f"rank {r} exited{_during(phase, last)} without finishing "
                             f"its segment (exit code {watch.exited.get(r, code)})", stage, last))
    if problems:
        return _first_problem(problems)
    if code not in (0, None):
        tail = " | ".join(launch_output.strip().splitlines()[-5:])
        return _failed(f"torch's launcher exited with code {code}: {tail}", "process", None)
    results = [SegmentResult.from_plain(outs[r] or {}) for r in range(n)]
    return merge(spec, results)


def _ranks(ranks: list[int]) -> str:
    return ("rank " if len(ranks) == 1 else "ranks ") + ", ".join(map(str, ranks))


def _during(phase: str, step: int | None) -> str:
    if phase == "step" and step is not None:
        return f" during step {step}"
    return {"start": " while starting", "build": " while building the program",
            "restore": " while restoring the checkpoint", "save": " in the program's save()",
            "capture": " while capturing state"}.get(phase, "")


_PEER_GONE = ("Connection closed by peer", "Connection reset by peer", "Broken pipe",
              "Timed out waiting", "timed out", "NCCL communicator was aborted",
              "Socket Timeout", "Connection refused")


def _peer_error(text: str) -> bool:
    return any(m in text for m in _PEER_GONE)


def _pass_on_ranks(work: Path, base: str, n: int) -> None:
    """What each rank printed goes to this process's standard error, as a
    process-isolated segment's output does, each line marked with its rank."""
    for r in range(n):
        try:
            text = (work / f"{base}.rank{r}.log").read_text(errors="replace")
        except OSError:  # (a rank that never started has no log)
            continue
        pass_on("".join(f"[rank {r}] {line}" for line in text.splitlines(keepends=True)))


def _tail(log: Path, lines: int = 5) -> str:
    try:
        text = log.read_text(errors="replace").strip().splitlines()
    except OSError:
        return ""
    return " | ".join(text[-lines:])


# -- merging N ranks into one result -------------------------------------------


def merge(spec: SegmentSpec, ranks: list[SegmentResult]) -> SegmentResult:
    """One segment result from every rank's: per-rank components and
    quantities named by rank, replicated state once."""
    work = Path(spec.workdir)
    first = ranks[0]
    names: list[str] = []
    for name in first.names:
        names += [rank_name(name, r) for r in range(len(ranks))] if name in PER_RANK else [name]
    records = []
    for step_records in zip(*(r.records for r in ranks)):
        head = step_records[0]
        digests: dict[str, str] = {}
        streams: dict[str, str] = {}
        inputs: dict[str, str] = {}
        exact: list[str] = []
        for r, rec in enumerate(step_records):
            digests.update({rank_name(k, r): v for k, v in rec.digests.items()})
            streams.update({rank_name(k, r): v for k, v in rec.streams.items()})
            inputs.update({rank_name(k, r): v for k, v in rec.inputs.items()})
            exact += [rank_name(k, r) for k in rec.exact]
        records.append(StepRecord(
            step=head.step, loss=sum(rec.loss for rec in step_records) / len(step_records),
            digests=digests, lr=head.lr, scale=head.scale,
            skipped=any(rec.skipped for rec in step_records), streams=streams, inputs=inputs,
            lr_of=list(head.lr_of), lr_call=list(head.lr_call), exact=exact,
            calls=head.calls if len({rec.calls for rec in step_records}) == 1 else 0,
            grads_left=(True if any(rec.grads_left for rec in step_records) else False
                        if all(rec.grads_left is False for rec in step_records) else None),
        ))
    tensor_dir = work / f"{spec.name}.tensors"
    _merge_tensors([Path(r.tensor_dir) for r in ranks if r.tensor_dir], tensor_dir)
    captures = {k: merge_captures([r.captures[k] for r in ranks],
                                  str(work / f"{spec.name}.capture{k}.pt"))
                for k in first.captures}
    return SegmentResult(
        records=records, names=names, captures=captures,
        end_state=_merged(ranks, "end_state", str(work / f"{spec.name}.end.pt")),
        tensor_dir=str(tensor_dir), has_own_checkpoint=first.has_own_checkpoint,
        boundaries=first.boundaries,
        advice=first.advice, build_settings=first.build_settings,
        restored_state=_merged(ranks, "restored_state", str(work / f"{spec.name}.restored.pt")),
        slowest_step=max(r.slowest_step for r in ranks),
        # what is not compared is rank 0's, and so is what shows whether a
        # restart brings it back (a trial: a counter a component of its own
        # sets back was named on every report at 2 ranks, held or not)
        undeclared=first.undeclared, unrestorable=first.unrestorable,
        held=first.held, held_after=first.held_after,
        # (trial 449: an iterator its load() made before the rerun put the sampler's
        # epoch right was said of one process, and lost on ranks)
        made_anew=first.made_anew, moved_by_load=first.moved_by_load,
        unreached={rank_name(n, r) if n in PER_RANK else n: where
                   for r, rank in enumerate(ranks) for n, where in rank.unreached.items()},
        loadable_shapes=sorted({s for r in ranks for s in r.loadable_shapes}),
        side_files={kind: list(dict.fromkeys(f for r in ranks for f in r.side_files.get(kind, ())))
                    for kind in ("save", "load") if any(r.side_files.get(kind) for r in ranks)},
    )


def _merged(ranks: list[SegmentResult], attr: str, path: str) -> str | None:
    files = [getattr(r, attr) for r in ranks]
    if any(f is None for f in files):
        return None
    return merge_captures(files, path)


def merge_captures(files: list[str], path: str) -> str:
    """Write one engine capture from every rank's (and, beside it, which file
    holds each rank's own: a restart of rank r restores from that)."""
    caps = [load_checkpoint(f) for f in files]
    components: dict[str, Any] = {}
    for name, state in caps[0]["components"].items():
        if name in PER_RANK:
            for r, cap in enumerate(caps):
                components[rank_name(name, r)] = cap["components"].get(name)
            continue
        states = [cap["components"].get(name) for cap in caps]
        if len({digest(s) for s in states}) == 1:
            components[name] = state  # replicated: every rank holds the same
        else:  # sharded or diverged: compared rank by rank
            components[name] = {rank_name("", r).strip(): s for r, s in enumerate(states)}
    merged = {**caps[0], "rank": None, "world_size": len(caps), "components": components,
              "ranks": [str(Path(f).resolve()) for f in files]}
    torch.save(merged, path)
    keep_written(path, merged)  # (judging reads it next: not through the unpickler again)
    Path(path + ".ranks.json").write_text(json.dumps(merged["ranks"]))
    return path


def _merge_tensors(dirs: list[Path], out: Path) -> None:
    """Every rank's kept step tensors (and stream states) in one file per step,
    keyed by rank, as the comparison reads them."""
    out.mkdir(parents=True, exist_ok=True)
    files = sorted({p.name for d in dirs if d.is_dir() for p in d.glob("*.pt")})
    for name in files:
        merged: dict[str, Any] = {}
        for r, d in enumerate(dirs):
            data = load_step_file(d / name)
            if data is not None:
                merged.update({rank_name(k, r): v for k, v in data.items()})
        save_step_file(merged, out / name)


def _rank_restore(restore: Restore | None, rank: int, n: int) -> Restore | None:
    """What rank ``rank`` restores: its own file of a merged capture, and the
    dropped / overridden components named for it (``rng[rank 1]`` is rank
    1's ``rng``; a name without a rank applies to every rank)."""
    if restore is None:
        return None
    path = restore.path
    if restore.source == "engine":
        path = rank_file(restore.path, rank)
    return Restore(
        path=path, source=restore.source, drop=_for_rank(restore.drop, rank),
        override_path=rank_file(restore.override_path, rank) if restore.override_path else None,
        override=_for_rank(restore.override, rank),
    )


def _for_rank(names: list[str], rank: int) -> list[str]:
    out = []
    for full in names:
        name, r = split_rank_name(full)
        if r is None or r == rank:
            out.append(name)
    return out


def rank_file(merged: str, rank: int) -> str:
    """The file that holds rank ``rank``'s own state in a merged capture."""
    try:
        files = json.loads(Path(merged + ".ranks.json").read_text())
    except OSError:
        raise CheckpointError("load", merged, "not a capture of a distributed run (no "
                              "record of its ranks' files beside it)") from None
    if rank >= len(files):
        raise CheckpointError(
            "load", merged, f"the capture holds the state of {len(files)} rank(s); rank "
            f"{rank} has none of its own (restart with --nproc {len(files)})")
    return str(files[rank])


# -- one rank ---------------------------------------------------------------------


def rank_main(spec_pattern: str, out_pattern: str) -> int:
    """One rank of a distributed segment: report the pid, initialise the
    process group, run the segment as a process-isolated one, report the exit."""
    rank = int(os.environ.get("RANK", "0"))
    log = os.environ.get(_LOG_ENV)
    if log:
        fd = os.open(log.format(rank=rank), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
    faulthandler.register(STACK_DUMP_SIGNAL, all_threads=False)  # where a hung rank is
    phases = os.environ.get(_PHASES_ENV, "").format(rank=rank)
    say = os.open(phases, os.O_WRONLY) if phases else None

    def report(line: str) -> None:
        if say is not None:
            os.write(say, f"{line}\n".encode())

    report(f"pid {os.getpid()}")
    report(f"group - {time.monotonic():.6f}")  # (the launch's own: see LAUNCH_BOUND)
    os.environ["RESUMECHECK_PROGRESS_PATH"] = phases
    os.environ["RESUMECHECK_PARENT_PID"] = str(os.getppid())  # the launcher's agent
    spec_path = spec_pattern.format(rank=rank)
    config = json.loads(Path(spec_path).read_text()).get("config") or {}
    import torch.distributed as dist

    backend = _backend(config)
    timeout = float(os.environ.get(COLLECTIVE_TIMEOUT_ENV, PHASE_TIMEOUT))
    if backend == "nccl":  # guarded: no GPU is needed for the rest
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    dist.init_process_group(backend, timeout=timedelta(seconds=timeout))
    out = out_pattern.format(rank=rank)
    failed = True
    try:
        from resumecheck.runner import run_here

        code = subprocess_main(spec_path, out, run_here)
        error = _segment_error(out)
        failed = code != 0 or (error is not None and not _peer_error(error))
    finally:
        # A rank whose segment failed of its own leaves at once, without tearing the
        # process group down (that can wait on peers still inside a collective): its
        # exit is what makes torch's launcher stop the others, and its result names
        # it. A rank that failed only because a peer is gone leaves as before, so
        # the launcher sees the peer's failure first.
        if dist.is_initialized() and not failed:
            dist.destroy_process_group()
    report(f"exit {code}")
    if failed:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code or 1)
    return code


def _segment_error(out: str) -> str | None:
    """The error this rank's result reports (None: its segment ran through)."""
    try:
        error = json.loads(Path(out).read_text()).get("error")
    except (OSError, ValueError):
        return "no readable result"
    return str(error) if error else None


def _backend(config: dict[str, Any]) -> str:
    """NCCL when the program asks for a CUDA device and one is there; gloo otherwise
    (``RESUMECHECK_BACKEND`` overrides)."""
    chosen = os.environ.get("RESUMECHECK_BACKEND")
    if chosen:
        return chosen
    device = str(config.get("device", ""))
    return "nccl" if device.startswith("cuda") and torch.cuda.is_available() else "gloo"
