"""Segments: a stretch of training between two checkpoints, run for real.

A run is a chain of segments. The first builds the program from the run's
settings and trains from step 0; each later one is a genuine restart: a
fresh program built the way real restarts are started (from the program's
defaults), then restored from the previous segment's checkpoint, minus the
dropped components, then trained on.

Two isolation modes run a segment:

* ``process``: a fresh interpreter (``python -m resumecheck._segment``). The
  ground truth: nothing survives but the checkpoint file.
* ``inprocess``: fresh objects from the factory in this interpreter, after
  every process-global random stream has been reseeded to a different value,
  so leftover state cannot hide a missing restore.

Checkpoints always go through ``torch.save`` and ``torch.load(weights_only=True)``,
so restored state never aliases live objects of the segment before.
"""

from __future__ import annotations

import collections
import errno
import json
import math
import os
import re
import select
import shutil
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

import torch

from resumecheck import forkserver
from resumecheck.components import (
    CONFIG, OPTIMIZER, PARAMS, RNG, launch_global_streams, reseed_global_streams,
)
from resumecheck.errors import (
    BudgetExhausted, CheckpointError, EnvironmentFailure, InvalidArgument, ResumecheckError,
    StepError, TargetError,
)
from resumecheck.program import BuiltProgram, Target, load_target
from resumecheck.progress import note_step
from resumecheck.state_diff import reorder_optimizer_state
from resumecheck.trace import StepRecord, Tracer, unwrap_optimizer

__all__ = [
    "CHECKPOINT_FORMAT",
    "PHASE_TIMEOUT",
    "LiveProgram",
    "Restore",
    "SegmentResult",
    "SegmentSpec",
    "check_timeout",
    "environment_failure",
    "load_checkpoint",
    "run_segment",
    "subprocess_main",
]

CHECKPOINT_FORMAT = "resumecheck.checkpoint/1"

PHASE_TIMEOUT = 600.0
"""Bound in seconds on each part of a segment that is not a training step
(starting an interpreter, building, restoring, saving, capturing), and on
each step of an uninterrupted reference unless a timeout is given."""

SYS_PATH_ENV = "RESUMECHECK_SYS_PATH"
"""The parent's sys.path, which a process-isolated segment appends to its own."""
Isolation = Literal["process", "inprocess"]


@dataclass(kw_only=True)
class Restore:
    """Where a restarted segment's state comes from."""

    path: str
    """The checkpoint: an engine capture file, or the program's own checkpoint."""
    source: Literal["engine", "program"] = "engine"
    """``engine``: restore each declared component; ``program``: call program.load()."""
    drop: list[str] = field(default_factory=list)
    """Components left as the freshly built program has them."""
    override_path: str | None = None
    """An engine capture whose components in ``override`` replace the checkpoint's
    (for ``source="program"``: loaded into them after the program's load())."""
    override: list[str] = field(default_factory=list)


@dataclass(kw_only=True)
class SegmentSpec:
    """One segment to run: plain data, so it can travel to a fresh interpreter."""

    target_spec: str | None
    config: dict[str, Any]
    start: int
    stop: int
    workdir: str
    name: str
    restore: Restore | None = None
    capture_at: list[int] = field(default_factory=list)
    program_save_at: int | None = None
    keep_tensors_after: int | None = None
    reseed: int | None = None
    threads: int = 1
    hash_seed: int | None = None
    """PYTHONHASHSEED of a process-isolated segment (None: the interpreter picks one)."""
    reference_digests: list[dict[str, str]] | None = None
    """The reference's digests per step: full tensors are written only for the
    steps that differ from it (the only ones a comparison will read)."""
    step_timeout: float | None = None
    """Seconds one training step may take (None: no bound); a step that takes
    longer ends the segment as failed. Other phases get max(this, PHASE_TIMEOUT)."""
    keep_tensor_steps: list[int] = field(default_factory=list)
    """Steps whose full tensors are written whatever the digests say (the
    reference keeps the few steps after each resume point)."""
    max_tensor_steps: int | None = None
    """At most this many differing steps get their full tensors written (None: all)."""
    capture_end: bool = True
    """Capture every component's state at the end (runs judged on their trace alone skip it)."""
    nproc: int | None = None
    """Run as this many ranks under torch's elastic launcher (resumecheck.distributed);
    None: one process."""


@dataclass(kw_only=True)
class SegmentResult:
    """What a segment produced; files live in the run's work directory."""

    records: list[StepRecord]
    names: list[str]
    captures: dict[int, str]
    end_state: str | None
    tensor_dir: str | None = None
    has_own_checkpoint: bool = False
    boundaries: dict[str, Any] = field(default_factory=dict)
    restored_state: str | None = None
    program_checkpoint: str | None = None

    error: str | None = None
    error_step: int | None = None
    error_stage: str | None = None
    slowest_step: float = 0.0
    """Seconds the slowest training step of this segment took."""

    def to_plain(self) -> dict[str, Any]:
        plain = asdict(self)
        plain["records"] = [r.to_plain() for r in self.records]
        plain["captures"] = {str(k): v for k, v in self.captures.items()}
        return plain

    @classmethod
    def from_plain(cls, plain: dict[str, Any]) -> SegmentResult:
        plain = dict(plain)
        plain["records"] = [StepRecord.from_plain(r) for r in plain["records"]]
        plain["captures"] = {int(k): v for k, v in plain["captures"].items()}
        return cls(**plain)


def run_segment(
    spec: SegmentSpec, isolation: Isolation, target: Target | None = None, *,
    cancel: threading.Event | None = None, deadline: float | None = None,
) -> SegmentResult:
    """Run one segment under the chosen isolation.

    ``spec.step_timeout`` bounds each step (a slower step ends the segment as
    failed; in process mode its interpreter is killed). ``deadline`` (a
    ``time.monotonic()`` value) bounds the whole segment: past it the segment
    is stopped and ``BudgetExhausted`` raised. ``cancel``, set from another
    thread, stops a process-isolated segment within a fraction of a second
    (its interpreter is killed). Out of disk space, out of memory or a
    process killed from outside raise ``EnvironmentFailure``: never a result.
    """
    if spec.nproc is not None:  # every rank a fresh interpreter, whatever the isolation
        from resumecheck.distributed import run_ranks

        return run_ranks(spec, cancel, deadline)
    if isolation == "process":
        return _run_in_subprocess(spec, cancel, deadline)
    assert target is not None
    return _run_here(spec, target, deadline=deadline)


class _Timeout(BaseException):
    """Raised inside a phase that outlived its bound. A BaseException, so a
    program's own ``except Exception`` cannot swallow it; what timed out is
    kept by the _Watch that raised it."""


class _Cancelled(BaseException):
    """A process-isolated segment was stopped because its check was cancelled."""


def check_timeout(timeout: float | None, name: str = "timeout") -> None:
    """Validate a step timeout: None (automatic), 0 (off) or seconds > 0."""
    if timeout is None:
        return
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not (
        timeout >= 0 and math.isfinite(timeout)
    ):
        raise InvalidArgument(name, timeout, "expected seconds > 0, 0 (no bound) or None "
                              "(automatic)")


def _phase_bound(phase: str, step_timeout: float | None) -> float | None:
    if step_timeout is None:
        return None
    return step_timeout if phase == "step" else max(step_timeout, PHASE_TIMEOUT)


def _timeout_text(phase: str, step: int | None, bound: float) -> str:
    if phase == "step":
        return f"step {step} took longer than {bound:g} s (the step timeout)"
    what = {"start": "starting the interpreter", "build": "building the program",
            "restore": "restoring the checkpoint", "save": "the program's save()",
            "capture": "capturing state"}.get(phase, phase)
    return f"{what} took longer than {bound:g} s"


class _Watch:
    """Bounds each phase of a segment (build, restore, one step, save, capture).

    A step gets the step timeout, any other phase max(step timeout,
    PHASE_TIMEOUT), and no phase runs past ``deadline``. In the main thread
    an interval timer (SIGALRM) raises ``_Timeout`` inside the phase, which
    interrupts a sleep or a wait too; in another thread a timer raises it
    asynchronously in the running thread, where it takes effect at the next
    Python instruction. Code stuck inside one C call cannot be interrupted
    in-process; process isolation kills it.

    In a process-isolated child, ``report_fd`` carries each phase to the
    parent, which enforces the bounds (and kills the child), so the child
    sets no timer of its own.
    """

    def __init__(self, step_timeout: float | None, deadline: float | None = None,
                 report_fd: int | None = None) -> None:
        self.step_timeout = step_timeout
        self.deadline = deadline
        self.report_fd = report_fd
        self.enforce = report_fd is None and (step_timeout is not None or deadline is not None)
        self.phase_name: str = "start"
        self.step: int | None = None
        self.bound: float = 0.0
        self.budget_hit = False
        self._armed = False
        self._previous: Any = None
        self._outer: tuple[tuple[float, float], float] = ((0.0, 0.0), 0.0)
        self._thread = threading.get_ident()
        self._main = (threading.current_thread() is threading.main_thread()
                      and hasattr(signal, "setitimer"))
        self._timer: threading.Timer | None = None
        self._lock = threading.Lock()

    def phase(self, name: str, step: int | None = None) -> None:
        self.phase_name, self.step = name, step
        if self.report_fd is not None:
            _report_phase(self.report_fd, name, step)
        if not self.enforce:
            return
        bound = _phase_bound(name, self.step_timeout)
        seconds = bound if bound is not None else math.inf
        self.budget_hit = False
        if self.deadline is not None and self.deadline - time.monotonic() < seconds:
            seconds, self.budget_hit = max(self.deadline - time.monotonic(), 0.001), True
        self.bound = bound or 0.0
        self._arm(seconds)

    def timed_out_text(self) -> str:
        return _timeout_text(self.phase_name, self.step, self.bound)

    def _arm(self, seconds: float) -> None:
        self._disarm()
        if math.isinf(seconds):
            return
        self._armed = True
        if self._main:
            if self._previous is None:
                # someone else's interval timer (pytest-timeout's, say) is put back on stop()
                self._outer = (signal.getitimer(signal.ITIMER_REAL), time.monotonic())
                self._previous = signal.signal(signal.SIGALRM, self._fire)
            signal.setitimer(signal.ITIMER_REAL, seconds)
        else:
            self._timer = threading.Timer(seconds, self._fire_async)
            self._timer.daemon = True
            self._timer.start()

    def _fire(self, *_: Any) -> None:
        if self._armed:
            self._armed = False
            raise _Timeout()

    def _fire_async(self) -> None:
        import ctypes

        with self._lock:  # never after _disarm() has returned
            if self._armed:
                self._armed = False
                ctypes.pythonapi.PyThreadState_SetAsyncExc(
                    ctypes.c_ulong(self._thread), ctypes.py_object(_Timeout))

    def _disarm(self) -> None:
        with self._lock:
            self._armed = False
        if self._main and self._previous is not None:
            signal.setitimer(signal.ITIMER_REAL, 0)
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def stop(self) -> None:
        self._disarm()
        if self._main and self._previous is not None:
            signal.signal(signal.SIGALRM, self._previous)
            self._previous = None
            (delay, interval), since = self._outer
            if delay > 0:
                left = delay - (time.monotonic() - since)
                signal.setitimer(signal.ITIMER_REAL, max(left, 0.001), interval)


def _report_phase(fd: int, name: str, step: int | None) -> None:
    try:
        os.write(fd, f"{name} {'-' if step is None else step}\n".encode())
    except OSError:  # the parent is gone: nobody waits for this segment
        os._exit(70)


def _run_here(spec: SegmentSpec, target: Target, *, deadline: float | None = None,
              report_fd: int | None = None) -> SegmentResult:
    work = Path(spec.workdir)
    tensor_dir = work / f"{spec.name}.tensors"
    result = SegmentResult(
        records=[], names=[], captures={}, end_state=None, tensor_dir=str(tensor_dir)
    )
    watch = _Watch(spec.step_timeout, deadline, report_fd)
    stage, step = "build", None

    def enter(name: str, at: int | None = None) -> None:
        nonlocal stage
        stage = name
        watch.phase(name, at)

    previous_threads = torch.get_num_threads()
    tracer = None
    try:
        tensor_dir.mkdir(parents=True, exist_ok=True)
        torch.set_num_threads(spec.threads)
        enter("build")
        if spec.reseed is not None:
            reseed_global_streams(spec.reseed)
        elif spec.restore is None:
            launch_global_streams()
        enter("restore")
        capture = _engine_capture(spec.restore)
        enter("build")
        built = target.build(_build_settings(spec.config, spec.restore, capture))
        result.names = list(built.names)
        result.has_own_checkpoint = built.has_own_checkpoint
        result.boundaries = built.boundaries()
        if spec.restore is not None:
            enter("restore")
            _restore(built, spec.restore, capture)
            built.refresh()
            result.restored_state = str(work / f"{spec.name}.restored.pt")
            save_capture(built, result.restored_state, verify=False)
        if spec.program_save_at == spec.start:  # save right after the restore
            enter("save", spec.start)
            result.program_checkpoint = str(work / f"{spec.name}.program{spec.start}")
            _program_save(built, result.program_checkpoint, spec.start)
        tracer = Tracer(built, tensor_dir, stream_states_at=_stream_steps(spec))
        keep = _tensor_keeper(spec)
        for step in range(spec.start + 1, spec.stop + 1):
            enter("step", step)
            began = time.monotonic()
            tracer.before_step(step)
            try:
                out = built.step(step)
            except ResumecheckError:
                raise
            except Exception as exc:
                raise StepError(step, f"train_step() raised {type(exc).__name__}: {exc}") from exc
            result.slowest_step = max(result.slowest_step, time.monotonic() - began)
            tracer.after_step(step, out, keep)
            result.records = tracer.records
            if step in spec.capture_at:
                enter("capture", step)
                result.captures[step] = str(work / f"{spec.name}.capture{step}.pt")
                save_capture(built, result.captures[step], verify=len(result.captures) == 1)
            if step == spec.program_save_at:
                enter("save", step)
                result.program_checkpoint = str(work / f"{spec.name}.program{step}")
                _program_save(built, result.program_checkpoint, step)
            note_step(step)
        enter("capture")
        if spec.capture_end:
            result.end_state = str(work / f"{spec.name}.end.pt")
            save_capture(built, result.end_state, verify=not result.captures)
        watch.stop()
    except _Timeout:
        watch.stop()
        if watch.budget_hit:
            raise BudgetExhausted(None) from None
        result.error = watch.timed_out_text()
        result.error_stage = stage
        result.error_step = watch.step
    except Exception as exc:  # a failed segment is a result, not a crash
        watch.stop()
        failure = environment_failure(exc, spec.workdir)
        if failure is not None:
            raise failure from exc
        result.error = _describe(exc)
        result.error_stage = stage
        result.error_step = getattr(exc, "step", step)
        if not isinstance(exc, ResumecheckError):
            result.error += "\n" + "".join(traceback.format_exception(exc)[-3:])
        if isinstance(exc, TargetError) and spec.restore is None and spec.start == 0:
            raise
    finally:
        watch.stop()
        if tracer is not None:
            tracer.close()
        torch.set_num_threads(previous_threads)
    return result


def _stream_steps(spec: SegmentSpec) -> frozenset[int]:
    """Steps at whose start the full random-stream states are kept: the first
    two after a restore, and the reference's first two after each capture
    (where a restart will resume), so a stream offset can be measured."""
    after = [spec.start] if spec.restore is not None else []
    return frozenset(s + d for s in [*after, *spec.capture_at] for d in (1, 2))


def _tensor_keeper(spec: SegmentSpec) -> Callable[[StepRecord], bool]:
    """Which steps' full tensors go to disk: the steps asked for by number,
    and after ``keep_tensors_after`` the steps that differ from the reference,
    the first ``max_tensor_steps`` of them."""
    kept = 0
    wanted = set(spec.keep_tensor_steps)

    def keep(record: StepRecord) -> bool:
        nonlocal kept
        if record.step in wanted:
            return True
        if spec.keep_tensors_after is None or record.step <= spec.keep_tensors_after:
            return False
        ref = spec.reference_digests
        if ref is not None and record.step <= len(ref) and ref[record.step - 1] == record.digests:
            return False
        if spec.max_tensor_steps is not None and kept >= spec.max_tensor_steps:
            return False
        kept += 1
        return True

    return keep


def _engine_capture(restore: Restore | None) -> dict[str, Any] | None:
    """The engine capture a restart restores from, read once (None otherwise)."""
    if restore is None or restore.source != "engine":
        return None
    return load_checkpoint(restore.path)


def _build_settings(
    config: dict[str, Any], restore: Restore | None, capture: dict[str, Any] | None
) -> dict[str, Any]:
    """The settings a restart is built from.

    A real resume reads the run's settings from the checkpoint before it
    builds anything (nanoGPT's model_args, OLMo's config.yaml), so settings
    baked in at build time come back too. When the engine restores the
    ``config`` component and its state is a settings mapping, the restart is
    built from it; when config is dropped, from the program's defaults.
    """
    if restore is None or capture is None or CONFIG in restore.drop:
        return config
    state = capture["components"].get(CONFIG)
    if isinstance(state, dict) and set(state) == {"value"}:
        state = state["value"]
    return dict(state) if isinstance(state, dict) else config


def _describe(exc: BaseException) -> str:
    return str(exc) if isinstance(exc, ResumecheckError) else f"{type(exc).__name__}: {exc}"


def _restore(built: BuiltProgram, restore: Restore, capture: dict[str, Any] | None) -> None:
    """Restore a fresh program: through its own load(), or from the engine's
    ``capture`` (already read) minus the dropped components."""
    if restore.source == "program":
        try:
            built.program.load(restore.path)
        except Exception as exc:
            problem = f"the program's load() raised {type(exc).__name__}: {exc}"
            damage = _damaged(restore.path)
            if damage:
                problem = f"the checkpoint its save() wrote is truncated or corrupted ({damage}); {problem}"
            raise CheckpointError("load", restore.path, problem) from exc
        if restore.override_path is not None:
            built.refresh()  # load() may have replaced objects
            _load_states(built, _overrides(built, restore), restore.override_path)
        return
    assert capture is not None
    states = capture["components"]
    if restore.override_path is not None:
        states = {**states, **_overrides(built, restore)}
    missing = [c.name for c in built.components
               if c.name not in restore.drop and c.name not in states]
    if missing:
        raise CheckpointError(
            "load", restore.path, f"component {missing[0]!r} is missing from the capture"
        )
    _load_states(built, {n: v for n, v in states.items() if n not in restore.drop}, restore.path)


def _load_states(built: BuiltProgram, states: dict[str, Any], path: str) -> None:
    """Load ``states`` into the declared components of those names."""
    # RNG goes last, and the other components are settled before it: some
    # build what they need lazily and draw a seed when they do (a
    # StatefulDataLoader creates its iterator on the first state_dict() or
    # iter()). Settled first, they draw before the streams are set, as a
    # correct resume must (docs/HONEST-CHECKS.md: a DataLoader shifts the RNG by one draw).
    order = sorted(built.components, key=lambda c: c.name == RNG)
    for comp in order:
        if comp.name not in states:
            continue
        if comp.name == RNG:
            for other in built.components:
                if other.name != RNG:
                    other.obj.state_dict()
        try:
            comp.obj.load_state_dict(states[comp.name])
        except Exception as exc:
            raise CheckpointError(
                "load",
                path,
                f"{comp.name}.load_state_dict raised {type(exc).__name__}: {exc}",
            ) from exc


def _overrides(built: BuiltProgram, restore: Restore) -> dict[str, Any]:
    """States of ``restore.override`` taken from another capture.

    Optimizer state is moved by parameter name: the other capture may list
    the parameters in another order (that is what class-16 bugs do).
    """
    assert restore.override_path is not None
    other = load_checkpoint(restore.override_path)
    states = {n: other["components"][n] for n in restore.override if n in other["components"]}
    if OPTIMIZER in states:
        ours = _meta(built).get("optimizer_params")
        theirs = other.get("meta", {}).get("optimizer_params")
        if ours and theirs:
            states[OPTIMIZER] = reorder_optimizer_state(states[OPTIMIZER], theirs, ours)
    return states


def _damaged(path: str) -> str | None:
    """Why a torch checkpoint file cannot be read at all (None: it reads, or is no file)."""
    if not Path(path).is_file():
        return None
    try:
        torch.load(path, weights_only=True, map_location="cpu")
    except Exception as exc:
        text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if "weights_only" in text or "Unsupported global" in text:
            return None  # readable, only not as plain data
        return text
    return None


def _program_save(built: BuiltProgram, path: str, step: int) -> None:
    try:
        built.program.save(path)
    except Exception as exc:
        raise CheckpointError(
            "save", path, f"the program's save() at step {step} raised {type(exc).__name__}: {exc}"
        ) from exc


def capture(built: BuiltProgram) -> dict[str, Any]:
    """The engine's own checkpoint of every declared component."""
    return {
        "format": CHECKPOINT_FORMAT,
        "rank": _rank_of_process(),
        "world_size": _world_size(),
        "meta": _meta(built),
        "components": _states(built),
    }


def _rank_of_process() -> int:
    dist = torch.distributed
    return dist.get_rank() if dist.is_available() and dist.is_initialized() else 0


def _world_size() -> int:
    dist = torch.distributed
    return dist.get_world_size() if dist.is_available() and dist.is_initialized() else 1


def _states(built: BuiltProgram) -> dict[str, Any]:
    """Every component's state_dict(), the random streams first: another
    component's state_dict() may draw (a lazily created loader iterator), and
    the capture must hold the streams as they were at the checkpoint."""
    first = sorted(built.components, key=lambda c: c.name != RNG)
    states = {c.name: c.obj.state_dict() for c in first}
    return {c.name: states[c.name] for c in built.components}


def _meta(built: BuiltProgram) -> dict[str, Any]:
    """What comparisons need beside the state: the optimizer's parameter names."""
    opt = built.component(OPTIMIZER)
    optimizer = unwrap_optimizer(opt.obj) if opt is not None else None
    if optimizer is None:
        return {}
    model = built.component(PARAMS)
    names = {}
    if model is not None and isinstance(model.obj, torch.nn.Module):
        names = {id(p): n for n, p in model.obj.named_parameters()}
    return {
        "optimizer_params": [
            names.get(id(p), f"group{g}.param{i}")
            for g, group in enumerate(optimizer.param_groups)
            for i, p in enumerate(group["params"])
        ]
    }


def save_capture(built: BuiltProgram, path: str, verify: bool = True) -> None:
    """Write the engine's capture and prove that it loads with weights_only=True,
    naming the component and the value that would not.

    ``verify`` loads the file back (done for a program's first capture). Later
    captures are loaded back only when their state holds a kind of value not
    seen in a capture that loaded already: state can turn non-plain mid-run
    (a list that becomes a deque), and that must be named here, not found
    later as an unreadable file.
    """
    state = capture(built)
    try:
        torch.save(state, path)
    except Exception as exc:
        raise CheckpointError("save", path, f"torch.save failed: {exc}") from exc
    unfamiliar = _unfamiliar_types(state["components"])
    if not verify and not unfamiliar:
        return
    try:
        torch.load(path, weights_only=True)
    except Exception as exc:
        bad, where, kind = _unsafe_value(state["components"])
        raise CheckpointError(
            "load",
            path,
            f"component {bad!r} has state that torch.load(weights_only=True) refuses: "
            f"{where} is a {kind} ({_first_sentence(exc)}); make its state_dict() "
            "return tensors, numbers, strings, lists and dicts only",
        ) from exc
    _LOADABLE_TYPES.update(unfamiliar)


def _first_sentence(exc: BaseException) -> str:
    """An exception's first sentence, without terminal escapes (torch's
    weights_only refusal is a page long and bold in places)."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(exc)).strip()
    return text.split(". ")[0].splitlines()[0] if text else type(exc).__name__


# Kinds of value known to load with weights_only=True: plain data, and every
# type found in a capture that loaded back.
_LOADABLE_TYPES: set[type] = {
    int, float, bool, str, bytes, type(None), list, tuple, dict, collections.OrderedDict,
    torch.Tensor, torch.nn.Parameter,
}


def _leaves(value: Any, path: str) -> Iterator[tuple[str, Any]]:
    """(path, value) for every value in a nested state, containers included."""
    yield path, value
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, f"{path}[{k!r}]")
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            yield from _leaves(v, f"{path}[{i}]")


def _unfamiliar_types(components: dict[str, Any]) -> set[type]:
    return {
        type(v) for name, state in components.items() for _, v in _leaves(state, name)
        if type(v) not in _LOADABLE_TYPES
    }


def _unsafe_value(components: dict[str, Any]) -> tuple[str, str, str]:
    """The component whose state does not load with weights_only=True, the
    path of the first value in it of a kind not known to load, and its type."""
    import io

    for name, state in components.items():
        buffer = io.BytesIO()
        torch.save(state, buffer)
        buffer.seek(0)
        try:
            torch.load(buffer, weights_only=True)
        except Exception:
            for where, value in _leaves(state, "state_dict()"):
                kind = type(value)
                if kind not in _LOADABLE_TYPES:
                    return name, where, f"{kind.__module__}.{kind.__qualname__}"
            return name, "a value", "type it cannot load"
    return "?", "a value", "type it cannot load"


def load_checkpoint(path: str) -> dict[str, Any]:
    """Load an engine capture safely, with a clear error when it is damaged."""
    try:
        data = torch.load(path, weights_only=True)
    except FileNotFoundError:
        raise CheckpointError("load", path, "the file does not exist") from None
    except Exception as exc:
        first = _first_sentence(exc)
        if "weights_only" in str(exc) or "Weights only" in str(exc):
            raise CheckpointError(
                "load", path, f"the file holds a value that torch.load(weights_only=True) "
                f"refuses, it is not damaged ({first})"
            ) from exc
        raise CheckpointError(
            "load", path, f"the file is truncated or corrupted ({type(exc).__name__}: {first})"
        ) from exc
    if not isinstance(data, dict) or data.get("format") != CHECKPOINT_FORMAT:
        raise CheckpointError("load", path, f"not a {CHECKPOINT_FORMAT} file")
    return data


def _child_env(spec: SegmentSpec) -> dict[str, str]:
    """The environment of a process-isolated segment."""
    env = dict(os.environ)
    env["OMP_NUM_THREADS"] = str(spec.threads)
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




# Signals a process receives from outside (a user, a scheduler, the kernel's
# out-of-memory killer, a resource limit): an environment failure. The others
# (SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL) are the program crashing.
_EXTERNAL_SIGNALS = {
    getattr(signal, name) for name in (
        "SIGKILL", "SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGXCPU", "SIGXFSZ",
        "SIGUSR1", "SIGUSR2", "SIGPIPE", "SIGALRM",
    ) if hasattr(signal, name)
}
_DISK_ERRNOS = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)}
_DISK_ADVICE = (
    "Free space there, or point TMPDIR at a disk with more room (resumecheck keeps its "
    "scratch files and the program's checkpoints under TMPDIR), then run again."
)
_MEMORY_ADVICE = (
    "Give the check more memory, or check a smaller configuration of the program "
    "(batch, model size), or, with --isolation process, use a larger --threads so that "
    "fewer interpreters run side by side; then run again."
)
ENVIRONMENT_EXIT = 4
"""Exit status of a process-isolated segment that met an environment failure."""


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
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if isinstance(cur, EnvironmentFailure):
            return cur
        if isinstance(cur, CheckpointError) and path is None:
            path = cur.path
        if isinstance(cur, OSError) and cur.errno in _DISK_ERRNOS:
            where = cur.filename if isinstance(cur.filename, str) else path or workdir
            return EnvironmentFailure("disk", f"{type(cur).__name__}: {cur.strerror or cur}",
                                      _DISK_ADVICE, where)
        if _out_of_memory(cur):
            text = _first_line(cur)
            return EnvironmentFailure(
                "memory", f"{type(cur).__name__}: {text}" if text else type(cur).__name__,
                _MEMORY_ADVICE)
        if _torch_write_failed(cur) and _nearly_full(path or workdir):
            return EnvironmentFailure(
                "disk", f"torch.save failed ({_first_line(cur)}) and the disk is full",
                _DISK_ADVICE, path or workdir)
        nxt = cur.__cause__ or cur.__context__
        cur = nxt if isinstance(nxt, BaseException) else None
    return None


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


def _run_in_subprocess(spec: SegmentSpec, cancel: threading.Event | None = None,
                       deadline: float | None = None) -> SegmentResult:
    """Run a segment in a fresh interpreter, in a process group of its own.

    The child reports each phase (build, restore, step N, ...) over a pipe;
    this side enforces the timeouts and the deadline and kills the child's
    whole process group when one passes, when ``cancel`` is set, or when
    this thread is interrupted (Ctrl-C, SIGTERM): no child outlives its check.
    """
    if spec.target_spec is None:
        raise TargetError(
            "(an in-memory target)",
            "process isolation needs a target that a fresh interpreter can import",
            "Give the target as module:attr or path/to/file.py:attr, or use "
            "isolation='inprocess'",
        )
    if cancel is not None and cancel.is_set():
        raise _Cancelled()
    work = Path(spec.workdir)
    spec_path = work / f"{spec.name}.spec.json"
    out_path = work / f"{spec.name}.result.json"
    log_path = work / f"{spec.name}.log"
    try:
        spec_path.write_text(json.dumps(asdict(spec)))
        log = open(log_path, "w+b")
    except OSError as exc:
        failure = environment_failure(exc, spec.workdir)
        if failure is not None:
            raise failure from exc
        raise
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
        failure = environment_failure(exc, spec.workdir)
        if failure is not None:
            raise failure from exc
        raise
    env = _child_env(spec)
    env["RESUMECHECK_PROGRESS_PATH"] = str(fifo)
    env["RESUMECHECK_PARENT_PID"] = str(os.getpid())
    try:
        proc = forkserver.spawn("resumecheck._segment", [str(spec_path), str(out_path)], env,
                                log=str(log_path))
    except BaseException:
        os.close(read_fd)
        os.close(keep_fd)
        log.close()
        raise
    try:
        timed_out = _watch_child(proc, read_fd, spec.step_timeout, cancel, deadline)
    finally:
        os.close(read_fd)
        os.close(keep_fd)
        if proc.poll() is None:
            _kill_group(proc)
        log.seek(0)
        output = log.read().decode(errors="replace")
        log.close()
    if timed_out is not None:
        phase, step, text = timed_out
        return SegmentResult(
            records=[], names=[], captures={}, end_state=None,
            error=f"{text}; its interpreter was killed",
            error_stage="process" if phase == "start" else phase, error_step=step,
        )
    code = proc.returncode
    if code == 3 and out_path.exists():
        err = json.loads(out_path.read_text())
        raise TargetError(err["target"], err["problem"], err["hint"])
    if code == ENVIRONMENT_EXIT and out_path.exists():
        raise EnvironmentFailure(**json.loads(out_path.read_text())["environment"])
    if code == ENVIRONMENT_EXIT:
        raise EnvironmentFailure("disk", "the interpreter could not write its result",
                                 _DISK_ADVICE, str(out_path))
    if code < 0 and -code in _EXTERNAL_SIGNALS:
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


def _watch_child(
    proc: Any, fd: int, step_timeout: float | None,
    cancel: threading.Event | None, deadline: float | None,
) -> tuple[str, int | None, str] | None:
    """Wait for the child, enforcing each phase's bound; the phase that timed
    out (phase, step, wording), or None when the child exited by itself."""
    phase, step = "start", None
    since = time.monotonic()
    pending = b""
    open_pipe = True
    while proc.poll() is None:
        ready: list[int] = []
        if open_pipe:
            ready, _, _ = select.select([fd], [], [], 0.1)
        else:
            time.sleep(0.05)
        if ready:
            chunk = os.read(fd, 4096)
            open_pipe = bool(chunk)  # closed: the child is exiting
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                name, _, at = line.decode().partition(" ")
                phase, step = name, (None if at in ("", "-") else int(at))
                since = time.monotonic()
        now = time.monotonic()
        if cancel is not None and cancel.is_set():
            _kill_group(proc)
            raise _Cancelled()
        if deadline is not None and now > deadline:
            _kill_group(proc)
            raise BudgetExhausted(None)
        bound = _phase_bound(phase, step_timeout)
        if bound is not None and now - since > bound:
            _kill_group(proc)
            return phase, step, _timeout_text(phase, step, bound)
    return None


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


def subprocess_main(spec_path: str, out_path: str) -> int:
    """Entry point of a process-isolated segment."""
    _watch_parent()
    plain = json.loads(Path(spec_path).read_text())
    if plain.get("restore"):
        plain["restore"] = Restore(**plain["restore"])
    spec = SegmentSpec(**plain)
    fifo = os.environ.get("RESUMECHECK_PROGRESS_PATH")
    try:
        fd = os.open(fifo, os.O_WRONLY) if fifo else None
        target = load_target(spec.target_spec)
        result = _run_here(spec, target, report_fd=fd)
        Path(out_path).write_text(json.dumps(result.to_plain()))
    except TargetError as exc:
        Path(out_path).write_text(
            json.dumps({"target": exc.target, "problem": exc.problem, "hint": exc.hint})
        )
        return 3
    except BaseException as exc:
        failure = environment_failure(exc, spec.workdir)
        if failure is None:
            raise
        Path(out_path).unlink(missing_ok=True)
        try:
            Path(out_path).write_text(json.dumps({"environment": {
                "resource": failure.resource, "detail": failure.detail,
                "advice": failure.advice, "path": failure.path,
            }}))
        except OSError:
            Path(out_path).unlink(missing_ok=True)
        return ENVIRONMENT_EXIT
    return 0


class LiveProgram:
    """A program trained one step at a time and restarted on demand.

    What a hypothesis state machine drives: ``step()`` runs one optimizer step
    and returns its record; ``restart()`` checkpoints (the program's own
    save/load when it has them, else the engine's capture), reseeds every
    global stream, builds a fresh program and restores it, in this
    interpreter, exactly as an in-process segment restart does.
    """

    def __init__(self, target: Target, config: dict[str, Any],
                 restart_config: dict[str, Any], work: str) -> None:
        self.target = target
        self.restart_config = restart_config
        self.work = Path(work)
        self.step_no = 0
        launch_global_streams()
        self.built = target.build(config)
        self.tracer = Tracer(self.built, None)

    def step(self) -> StepRecord:
        self.step_no += 1
        self.tracer.before_step(self.step_no)
        try:
            out = self.built.step(self.step_no)
        except ResumecheckError:
            raise
        except Exception as exc:
            raise StepError(self.step_no, f"train_step() raised {type(exc).__name__}: {exc}") from exc
        return self.tracer.after_step(self.step_no, out, keep_tensors=False)

    def restart(self, reseed: int) -> None:
        path = str(self.work / f"live-{self.step_no}.ckpt")
        own = self.built.has_own_checkpoint
        if own:
            _program_save(self.built, path, self.step_no)
        else:
            save_capture(self.built, path)
        self.tracer.close()
        restore = Restore(path=path, source="program" if own else "engine")
        capture = _engine_capture(restore)
        reseed_global_streams(reseed)
        self.built = self.target.build(_build_settings(self.restart_config, restore, capture))
        _restore(self.built, restore, capture)
        self.built.refresh()
        self.tracer = Tracer(self.built, None)
        shutil.rmtree(path, ignore_errors=True)
        Path(path).unlink(missing_ok=True)

    def close(self) -> None:
        self.tracer.close()
