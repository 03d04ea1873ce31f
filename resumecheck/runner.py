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

This module runs a segment here and bounds its phases; the rest of the runs
layer has rooms of its own: ``segments.py`` (specs and results),
``restore.py`` (the restore rules), ``capture.py`` (the engine's checkpoint
file), ``transport.py`` (the fresh interpreter), ``faults.py`` (environment
failures) and ``live.py`` (the state machine's program).
"""

from __future__ import annotations

import contextlib
import gc
import math
import multiprocessing.process
import os
import re
import shutil
import signal
import sys
import threading
import time
import traceback
import warnings
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any, NoReturn

import torch

from resumecheck import torch_modes
from resumecheck.capture import (
    add_loadable_shapes,
    capture as capture_state,
    asks_apart,
    leaf_digests,
    loadable_shapes,
    save_capture,
    save_capture_apart,
)
from resumecheck.components import (
    RNGState,
    launch_global_streams,
    reseed_global_streams,
    short_device_seed_stacks,
)
from resumecheck.errors import (
    BudgetExhausted, CheckpointError, EnvironmentFailure, ProgramExited, ResumecheckError,
    StepError, TargetError, TracingFailed, UnboundedStepsWarning,
)
from resumecheck.compare import digest
from resumecheck.faults import after_restore, beyond_the_machine, environment_failure
from resumecheck.grad_carry import GradCarry
from resumecheck.module_state import (
    changed_by, own_line, program_line, program_spaces, raised, settings_set, torch_settings,
)
from resumecheck.program import BuiltProgram, Target, replaced_objects
from resumecheck.progress import note_step
from resumecheck.restore import (
    among_ranks, build_settings, engine_capture, program_save, restore_state,
)
from resumecheck.side_files import changed_since, outside, shown
from resumecheck.segments import (
    Isolation, Restore, SegmentResult, SegmentSpec, phase_bound, scratch_dir, timeout_text,
)
from resumecheck.streams import STEPS_AFTER_RESTORE, streams_set
from resumecheck.trace import StepRecord, Tracer, hooks_hidden, model_unhooked
from resumecheck.transport import report_phase, run_in_subprocess
from resumecheck.undeclared import UndeclaredWatch, held_digests

__all__ = ["run_here", "run_segment"]


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
    if spec.nproc is not None or isolation == "process":
        # Fresh interpreters (every rank one, whatever the isolation): each starts
        # with the capture structures the check knows to load back, and hands
        # back those it proved, so none is read back twice.
        spec = replace(spec, loadable_shapes=loadable_shapes())
        if spec.nproc is not None:
            from resumecheck.distributed import run_ranks

            result = run_ranks(spec, cancel, deadline)
        else:
            result = run_in_subprocess(spec, cancel, deadline)
        add_loadable_shapes(result.loadable_shapes)
        return result
    assert target is not None
    return run_here(spec, target, deadline=deadline, judged_here=True)


class _Timeout(BaseException):
    """Raised inside a phase that outlived its bound. A BaseException, so a
    program's own ``except Exception`` cannot swallow it; what timed out is
    kept by the _Watch that raised it."""




_SAID_UNBOUNDED: set[str] = set()


def _unbounded(target: str) -> None:
    """Say once per program and process that its steps are not bounded (a
    trial: a program's SIGALRM watchdog took the signal, and a hung step hung
    the check past its --timeout, with nothing said)."""
    if target not in _SAID_UNBOUNDED:
        _SAID_UNBOUNDED.add(target)
        warnings.warn(UnboundedStepsWarning(target), stacklevel=2)


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
                 report_fd: int | None = None, target: str = "the program") -> None:
        self.target = target
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
        self.fired = False
        """A phase was interrupted: what it left half made may complain as it goes."""

    def phase(self, name: str, step: int | None = None) -> None:
        self.phase_name, self.step = name, step
        if self.report_fd is not None:
            report_phase(self.report_fd, name, step)
        if not self.enforce:
            return
        bound = phase_bound(name, self.step_timeout)
        seconds = bound if bound is not None else math.inf
        self.budget_hit = False
        if self.deadline is not None and self.deadline - time.monotonic() < seconds:
            seconds, self.budget_hit = max(self.deadline - time.monotonic(), 0.001), True
        self.bound = bound or 0.0
        self._arm(seconds)

    def timed_out_text(self) -> str:
        return timeout_text(self.phase_name, self.step, self.bound)

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
            elif signal.getsignal(signal.SIGALRM) != self._fire:
                _unbounded(self.target)  # (the program's own handler: left to it)
            signal.setitimer(signal.ITIMER_REAL, seconds)
        else:
            self._timer = threading.Timer(seconds, self._fire_async)
            self._timer.daemon = True
            self._timer.start()

    def _fire(self, *_: Any) -> None:
        if self._armed:
            self._armed, self.fired = False, True
            raise _Timeout()

    def _fire_async(self) -> None:
        import ctypes

        with self._lock:  # never after _disarm() has returned
            if self._armed:
                self._armed, self.fired = False, True
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



def run_here(spec: SegmentSpec, target: Target, *, deadline: float | None = None,
             report_fd: int | None = None, judged_here: bool = False) -> SegmentResult:
    """Run one segment in this interpreter: build, restore, steps, captures.

    A failed segment is a result, not a crash: its error, stage and step are
    in the result. A timed-out phase is one too, unless it was ``deadline``
    that ran out (``BudgetExhausted``). An environment failure is raised, and
    so is a target that fails to build at the very start of a run.
    ``report_fd`` (in a process-isolated child) carries each phase to the
    parent, which enforces the bounds. ``judged_here``: this process judges
    the result, so the restored and end states (which only judging reads)
    may stay in memory instead of files (see ``save_capture``).
    """
    watch = _Watch(spec.step_timeout, deadline, report_fd, target.name)
    segment = _Segment(spec, target, watch, judged_here)
    # (in a fresh interpreter: what the run changes at module level, as imported;
    # trial 152's module counter was named by the in-process refusal only)
    spaces = program_spaces(target.factory) if spec.find_undeclared and not judged_here else []
    with _quiet_once_interrupted(watch):
        _, moved = changed_by(lambda: _run_watched(segment, spec.workdir), spaces)
    if segment.result.error is None:
        segment.result.module_moved = moved
    return segment.result


@contextlib.contextmanager
def _quiet_once_interrupted(watch: _Watch) -> Iterator[None]:
    """Once the watch has interrupted a phase, what the phase left half made
    is not reported as it is freed: a DataLoader iterator stopped inside its
    own constructor complains from its ``__del__`` ("Exception ignored ...
    has no attribute '_shutdown'", a trial's traceback before the check's own
    error). Before that, and where nothing was interrupted, such reports go
    where they always go."""
    previous = sys.unraisablehook

    def hook(unraisable: Any) -> None:
        if not watch.fired:
            previous(unraisable)

    sys.unraisablehook = hook
    try:
        yield
        if watch.fired:
            gc.collect()  # (what the interrupted phase left in cycles goes now, quietly)
    finally:
        sys.unraisablehook = previous


def _run_watched(segment: _Segment, workdir: str) -> None:
    """The segment's run under its watch, its failure kept as its result (``run_here``)."""
    previous_threads, cwd = torch.get_num_threads(), os.getcwd()
    modes = torch_modes.fresh()  # (a caller's autocast or no_grad is no restart's)
    try:
        with _exits_raise(), short_device_seed_stacks(), _multiprocessing_files_in(workdir):
            segment.run()
        segment.watch.stop()
    except _Timeout as exc:
        segment.watch.stop()
        if segment.watch.budget_hit:
            raise BudgetExhausted(None) from None
        segment.timed_out(program_line(exc))
    except SystemExit as exc:  # the program's sys.exit(): its run failed, the check goes on
        segment.watch.stop()
        segment.failed(ProgramExited("sys.exit", exc.code, program_line(exc)))
    except Exception as exc:  # a failed segment is a result, not a crash
        segment.watch.stop()
        segment.failed(exc)
    finally:
        segment.watch.stop()
        segment.close()
        torch.set_num_threads(previous_threads)
        torch_modes.put(modes)  # (the watch stopped: nothing cuts this short)
        # the next segment starts where a new interpreter would: a program's
        # os.chdir() ends with its run here, as it does with its process
        with contextlib.suppress(OSError):
            os.chdir(cwd)


_SOCKET_DIR_MAX = 89
"""How long a directory may be for multiprocessing's sockets in it (an
AF_UNIX path holds 107 bytes; a listener's name adds 18 to its directory's)."""


@contextlib.contextmanager
def _multiprocessing_files_in(workdir: str) -> Iterator[None]:
    """Where multiprocessing makes its temporary directory (``pymp-*``: the
    sockets through which a DataLoader worker passes tensors) during a
    process-isolated segment: inside the segment's work directory, which the
    check removes whatever ends the segment. Left alone, a worker makes one in
    TMPDIR and removes it only when it exits cleanly, which a killed segment's
    workers do not (a trial: Ctrl-C left ``pymp-*`` directories behind).

    Left alone in process (the workers of a program run here may outlive
    its run, and would then fail to remove sockets the check has removed),
    where the socket paths would be too long, or where this process has one
    already (removed when it exits)."""
    config: dict[str, Any] = getattr(multiprocessing.process.current_process(), "_config")
    path = os.path.join(workdir, "mp")
    if (scratch_dir() != workdir or config.get("tempdir") is not None
            or len(os.fsencode(path)) > _SOCKET_DIR_MAX):
        yield
        return
    with contextlib.suppress(OSError):
        os.makedirs(path, exist_ok=True)
        config["tempdir"] = path
    try:
        yield
    finally:
        config.pop("tempdir", None)


_EXITS_LOCK = threading.Lock()
_EXITS_USERS = 0
_EXITS_OWNER = os.getpid()
_REAL_EXIT = os._exit


def _program_exit(status: int) -> NoReturn:
    """``os._exit`` while segments run here: a call from the program raises
    ``ProgramExited`` instead of ending this interpreter (and the check with
    it, silently, with the program's exit status); a forked child of this
    process and resumecheck's own calls still exit."""
    caller = sys._getframe(1).f_globals.get("__name__", "")
    if os.getpid() != _EXITS_OWNER or caller.split(".")[0] == "resumecheck":
        _REAL_EXIT(status)
    raise ProgramExited("os._exit", status)


@contextlib.contextmanager
def _exits_raise() -> Iterator[None]:
    """While a segment runs here, the program's ``os._exit`` raises (see
    ``_program_exit``); segments running at once in several threads share it."""
    global _EXITS_USERS, _EXITS_OWNER
    with _EXITS_LOCK:
        if _EXITS_USERS == 0:
            _EXITS_OWNER = os.getpid()
            os._exit = _program_exit
        _EXITS_USERS += 1
    try:
        yield
    finally:
        with _EXITS_LOCK:
            _EXITS_USERS -= 1
            if _EXITS_USERS == 0:
                os._exit = _REAL_EXIT


def _digest_first_step(spec: SegmentSpec, built: BuiltProgram, result: SegmentResult,
                       step: int) -> None:
    """Of a full resume's restart on one rank, its declared state after its first
    step, leaf by leaf, as the reference's is there (trial 870: an EMA, declared,
    wrong from the restart's first step, was said to differ only at the end)."""
    if spec.restore is not None and not spec.restore.drop and step == spec.start + 1 \
            and not among_ranks():
        result.leaves_after[step] = leaf_digests(built, stepped=True)


def _replaced_error(built: BuiltProgram, names: list[str], step: int) -> TargetError:
    """A run whose program replaced declared objects as it trained: the check
    holds the first ones, and would judge their state as the run's."""
    kinds = {c.name: type(c.obj).__name__ for c in built.components}
    try:  # (trial 476: "`optimizer` (SGD)" was read as the new one's kind)
        now = {n: f", {type(o).__name__} now" for n, o in built.program.components().items()}
    except Exception:  # (said as at the build only)
        now = {}
    said = ", ".join(f"`{n}` ({kinds[n]} at the build{now.get(n, '')})" for n in names)
    return TargetError(
        built.target_name,
        f"after step {step}, components() gives other objects for {said}: "
        "the program replaces them as it trains (a new optimizer for a new phase, say), and "
        "the check reads the declared objects after the build and after each restore only, "
        "so it would judge the first ones' state as the run's",
        "Declare a component that stays one object and passes state_dict() and "
        "load_state_dict() through to the program's current one (its load_state_dict() "
        "building it as the program's load() does), or keep one object and change it in "
        "place (add_param_group, param_groups' settings)")


def _advice(built: BuiltProgram, spec: SegmentSpec) -> dict[str, str]:
    """``built.advice()``, told the program's own checkpoint its load read, if
    one did (trial 684: what that checkpoint holds decides the advice)."""
    restore = spec.restore
    return built.advice(restore.path if restore is not None and restore.source == "program"
                        else None)


def _build_watched(target: Target, spec: SegmentSpec, capture: dict[str, Any] | None,
                   result: SegmentResult) -> BuiltProgram:
    """The segment's program built; for the reference (the run that looks for
    what the program holds undeclared), what its build set of the process-wide
    settings goes into ``result``, and what it built (``SegmentSpec.digest_built``)."""
    before = torch_settings() if spec.restore is None and spec.find_undeclared else None
    built = target.build(build_settings(spec.config, spec.restore, capture))
    if before is not None:
        result.build_settings = settings_set(before, torch_settings())
    if spec.digest_built and spec.restore is None:
        result.built_leaves = leaf_digests(built)
    return built


def _as_restored(built: BuiltProgram) -> contextlib.AbstractContextManager[Any]:
    """The view of the state right after a restore that a framework's program
    gives (``LoopProgram.restored_look``); none where it gives none."""
    look = getattr(built.program, "restored_look", None)
    return look() if callable(look) else contextlib.nullcontext()


def _look_after_restore(built: BuiltProgram, restored: str, source: str | None,
                        unwritten: bool) -> None:
    """Save the state right after a restore to ``restored``, in the view a
    framework's program gives of it (``LoopProgram.restored_look``)."""
    with _as_restored(built):
        if asks_apart(built):  # (what a loader's state_dict() does stays in the fork)
            save_capture_apart(built, restored)
        else:
            save_capture(built, restored, verify=False, unwritten=unwritten,
                         restored_from=source)


class _Segment:
    """One segment being run here; ``stage`` and ``step`` say where it failed."""

    def __init__(self, spec: SegmentSpec, target: Target, watch: _Watch,
                 judged_here: bool = False) -> None:
        self.spec, self.target, self.watch, self.judged_here = spec, target, watch, judged_here
        self.work = Path(spec.workdir)
        self.tensor_dir = self.work / f"{spec.name}.tensors"
        self.result = SegmentResult(records=[], names=[], captures={}, end_state=None,
                                    tensor_dir=str(self.tensor_dir))
        self.stage = "build"
        self.step: int | None = None
        self.tracer: Tracer | None = None
        self.built: BuiltProgram | None = None

    def enter(self, name: str, at: int | None = None) -> None:
        self.stage = name
        self.watch.phase(name, at)

    def run(self) -> None:
        spec = self.spec
        self.work.mkdir(parents=True, exist_ok=True)  # (its tensor_dir: once a file is kept)
        torch.set_num_threads(spec.threads)
        built = self._build_and_restore()
        tracer = self.tracer = _traced(self, built)
        self.result.model_unhooked = model_unhooked(tracer)  # (once: not every step's work)
        keep = _TensorKeeper(spec, tracer.step_bytes())
        tracer.copy_grads_at, tracer.keep_samples = keep.might, spec.keep_samples
        tracer.reference_digests = spec.reference_digests
        undeclared = (UndeclaredWatch(built.program, built.components)
                      if spec.find_undeclared else None)
        carry = GradCarry(built.components, spec.capture_at if spec.find_undeclared else [])
        if spec.restore is not None and spec.start in spec.held_after:  # (as restored)
            self._look_at_held(built, spec.start, undeclared)
        for step in range(spec.start + 1, spec.stop + 1):
            self.step = step
            self._train_step(built, tracer, step, keep)
            if step in spec.held_after:
                self._look_at_held(built, step, undeclared)
            _digest_first_step(spec, built, self.result, step)
            self._checkpoint(built, step)
            carry.arm(step)  # (at a resume point, after its save: what a restart starts without)
            note_step(step)
        self.enter("capture")
        self.result.boundaries, self.result.advice = built.boundaries(), _advice(built, self.spec)
        if spec.capture_end:
            self.result.end_state = str(self.work / f"{spec.name}.end.pt")
            save_capture(built, self.result.end_state, verify=not self.result.captures,
                         unwritten=self.judged_here)
        if undeclared is not None:
            self.result.undeclared = undeclared.found(built.program, built.components,
                                                      tracer.last_data, tracer.records)
            self.result.unrestorable = undeclared.unrestorable
            self.result.held_at_build = undeclared.at_build
            self.result.held = undeclared.held  # (one walk of the program at the end)
            self.result.undeclared.update(carry.found())
        elif spec.digest_held:
            self.result.held = held_digests(built.program, built.components)
        if spec.save_after_end and built.has_own_checkpoint:  # (after all that is compared)
            self._scratch_save(built, spec.stop)

    def _look_at_held(self, built: BuiltProgram, step: int,
                      undeclared: UndeclaredWatch | None) -> None:
        """What the program holds outside its declared components after ``step``
        (and its declared ones after a resume point's: ``SegmentSpec.digest_built``)."""
        if undeclared is not None:
            undeclared.look(step, built.program, built.components)
            self.result.held_after = undeclared.held_after
        else:
            self.result.held_after[step] = held_digests(built.program, built.components)
        if self.spec.digest_built and step - 1 in self.spec.capture_at:
            self.result.leaves_after[step] = leaf_digests(built, stepped=True)

    def _build_and_restore(self) -> BuiltProgram:
        spec, result = self.spec, self.result
        self.enter("build")
        if spec.reseed is not None:
            reseed_global_streams(spec.reseed)
        elif spec.restore is None:
            launch_global_streams(spec.launch_moved)
        if self.target.import_streams:  # seeded by the module at import: as a new launch has them
            RNGState().load_state_dict(dict(self.target.import_streams))
        self.enter("restore")
        capture = engine_capture(spec.restore)
        self.enter("build")
        built = self.built = _build_watched(self.target, spec, capture, result)
        result.names, result.modes_set = list(built.names), built.modes_set  # (restores fill it)
        result.has_own_checkpoint = built.has_own_checkpoint
        result.boundaries = built.boundaries()
        result.advice = built.advice()
        if spec.restore is not None:
            self.enter("restore")
            result.unreached = _restore_watched(built, spec.restore, capture, result, spec.began)
            built.refresh()
            result.advice = _advice(built, self.spec)  # (what the restore found: trial 516)
            restored = str(self.work / f"{spec.name}.restored.pt")
            source = spec.restore.path if spec.restore.source == "engine" else None
            _look_after_restore(built, restored, source, self.judged_here)
            result.restored_state = restored  # only once written: the diagnosis reads it
        if spec.program_save_at == spec.start:  # save right after the restore
            with _as_restored(built):
                self._program_save(built, spec.start)
        return built

    def _train_step(self, built: BuiltProgram, tracer: Tracer, step: int,
                    keep: Callable[[StepRecord], bool]) -> None:
        self.enter("step", step)
        began = time.monotonic()
        tracer.before_step(step)
        try:
            out = built.step(step)
        except TracingFailed:
            self.stage = "trace"  # (the check's fault: not "fix the program")
            raise
        except ResumecheckError:
            raise
        except Exception as exc:
            raise StepError(step, f"train_step() raised {raised(exc)}") from exc
        self.result.slowest_step = max(self.result.slowest_step, time.monotonic() - began)
        tracer.after_step(step, out, keep)
        self.result.records = tracer.records
        if self.spec.restore is None and (replaced := replaced_objects(built)):
            raise _replaced_error(built, replaced, step)

    def _checkpoint(self, built: BuiltProgram, step: int) -> None:
        """The program's own save and the capture asked for at ``step`` (the
        save first: the capture holds what the save left)."""
        if step == self.spec.program_save_at:
            self._program_save(built, step)
        elif step in self.spec.save_at and built.has_own_checkpoint:
            self._scratch_save(built, step)
        if step in self.spec.capture_at:
            self.enter("capture", step)
            path = self.result.captures[step] = str(self.work / f"{self.spec.name}.capture{step}.pt")
            save_capture(built, path, verify=len(self.result.captures) == 1)

    def _scratch_save(self, built: BuiltProgram, step: int) -> None:
        """The program's save() where the run it models checkpoints, its file
        removed at once. A save that fails is the program's own resume's failure,
        reported there: this run goes on as one that did not save, but for one of
        several ranks, whose others may wait for it (trial 393: the run hung)."""
        self.enter("save", step)
        with _scratch_place(self.work, self.spec.name, step) as path:
            try:
                self._watched(built, step, lambda: program_save(built, str(path), step))
            except CheckpointError:
                if among_ranks():
                    raise

    def _program_save(self, built: BuiltProgram, step: int) -> None:
        self.enter("save", step)
        path = self.result.program_checkpoint = str(self.work / f"{self.spec.name}.program{step}")
        with outside(path, writes=True) as written:
            self._watched(built, step, lambda: program_save(built, path, step))
        if _own_files(self.result) and (left := _left_beside(written)):
            self.result.side_files["save"] = shown(left, path)

    def _watched(self, built: BuiltProgram, step: int, save: Callable[[], None]) -> None:
        """``save()``, and with ``watch_save`` what it changed (``save_moved``).
        Not where asking a component for its state could draw (``asks_apart``)."""
        watch = self.spec.watch_save and not asks_apart(built)
        with hooks_hidden(self.tracer):
            before = _fingerprint(built) if watch else {}
            save()
            after = _fingerprint(built) if watch else {}
        if moved := [what for what in before if before[what] != after.get(what)]:
            self.result.save_moved[step] = moved

    def timed_out(self, where: str | None = None) -> None:
        """``where``: the program's line the phase was stopped in."""
        self.result.error = self.watch.timed_out_text() + (f"; it was at {where}" if where else "")
        self.result.error_stage = self.stage
        self.result.error_step = self.watch.step
        self.result.timed_out = True

    def failed(self, exc: Exception) -> None:
        """Record why the segment failed; raise what is not the program's failure."""
        failure = environment_failure(exc, self.spec.workdir)
        # (a restored run that asks for more than the machine has, where the
        # uninterrupted run passed: the restore's doing, as a trial found)
        asked = beyond_the_machine(exc, restored=self.spec.restore is not None)
        if failure is not None and asked is None:
            raise _in_this_run(failure, exc, self.spec, self.step) from exc
        result = self.result
        result.error = asked or _describe(exc)
        result.error_stage = self.stage
        result.error_step = getattr(exc, "step", self.step)
        if not isinstance(exc, ResumecheckError):
            result.error += "\n" + "".join(traceback.format_exception(exc)[-3:])
        if isinstance(exc, TargetError) and self.spec.restore is None and self.spec.start == 0:
            raise exc

    def close(self) -> None:
        if self.tracer is not None:
            self.tracer.close()
        if self.built is not None:
            self.built.close()
            _stop_loader_workers(self.built.program)


def _stop_loader_workers(program: Any) -> None:
    """Shut down the workers of the data loader iterators a finished program
    holds (its attributes, their items and fields, a few levels down). An
    iterator stopped mid-epoch keeps its workers until it is freed, and one in
    a reference cycle is freed by the collector: inside the next program's
    forked worker, where its ``__del__`` printed "AssertionError: can only test
    a child process" (a trial's check, a dozen times), or here, where the
    collector's shutdown waits five seconds a worker. Shut down now, it is
    done with them in a few milliseconds and its ``__del__`` does nothing."""
    if not multiprocessing.active_children():  # (no worker alive: nothing to look for)
        return
    kind = torch.utils.data.dataloader._MultiProcessingDataLoaderIter
    seen: set[int] = set()
    todo: list[tuple[Any, int]] = [(program, 0)]
    while todo and len(seen) < 5000:
        obj, depth = todo.pop()
        if id(obj) in seen or isinstance(obj, (torch.Tensor, torch.nn.Module, str, bytes, type,
                                               torch.utils.data.DataLoader)):
            continue  # (a loader's own persistent iterator it makes again from: left alone)
        seen.add(id(obj))
        if isinstance(obj, kind):
            with contextlib.suppress(Exception):  # (what it does is torch's own __del__'s)
                obj._shutdown_workers()
            continue
        fields = getattr(obj, "__dict__", None)
        items = (obj.values() if isinstance(obj, dict) else obj
                 if isinstance(obj, (list, tuple)) else
                 fields.values() if isinstance(fields, dict) else ())
        if depth < 5:
            todo.extend((item, depth + 1) for item in list(items)[:1000])


_RANK_NAME = re.compile(r"(.+)\.rank\d+")
"""A rank's segment name (``reference.rank1``), and the segment's own."""


@contextlib.contextmanager
def _scratch_place(work: Path, name: str, step: int) -> Iterator[Path]:
    """Where segment ``name`` has the program save at ``step`` a checkpoint it
    does not resume from, removed after. On many ranks, the one directory they
    share, as a resume's save gets (trial 242: each rank had a path of its own,
    rank 0's save, writing inside it, failed before its barrier, and the other
    ranks waited there for ever); it goes with the check's directory."""
    rank = _RANK_NAME.fullmatch(name) if among_ranks() else None
    if rank is not None:
        shared = work / f"{rank.group(1)}.saved{step}"
        shared.mkdir(parents=True, exist_ok=True)
        yield shared
        return
    path = work / f"{name}.saved{step}"
    try:
        yield path
    finally:
        _remove(path)


def _remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def _in_this_run(failure: EnvironmentFailure, exc: BaseException, spec: SegmentSpec,
                 step: int | None) -> EnvironmentFailure:
    """The environment failure of this segment: out of memory in a restored
    run says its step and what it means where more memory does not fix it."""
    if failure.resource == "memory" and spec.restore is not None:
        return after_restore(failure, exc, step, spec.start)
    return failure


def _fingerprint(built: BuiltProgram) -> dict[str, str]:
    """Each declared component's state, and each declared module's modes, as
    digests keyed by what they are in words."""
    state = capture_state(built)
    out = {name: digest(value) for name, value in state["components"].items()}
    for name, modes in ((state.get("meta") or {}).get("eval_modules") or {}).items():
        out[f"{name} (its modules' train/eval modes)"] = digest(sorted(modes))
    return out


def _stream_steps(spec: SegmentSpec) -> frozenset[int]:
    """Steps at whose start the full random-stream states are kept: the first
    two after a restore, and the reference's first two after each capture
    (where a restart will resume), so a stream offset can be measured."""
    after = [spec.start] if spec.restore is not None else []
    return frozenset(s + d for s in [*after, *spec.capture_at] for d in (1, 2))


def _stream_digest_steps(spec: SegmentSpec) -> frozenset[int] | None:
    """Steps at whose start the streams' digests are recorded (None: every
    step). A run from step 0 may be the reference every restart is compared
    with; a restart is compared at its first steps only (``STEPS_AFTER_RESTORE``)."""
    if not spec.trace_streams:
        return frozenset()
    if spec.restore is None:
        return None
    return frozenset(range(spec.start + 1, spec.start + STEPS_AFTER_RESTORE + 1))


def _traced(segment: _Segment, built: BuiltProgram) -> Tracer:
    """The tracer of a segment's steps, its hooks put on the program; what
    that raises is the check's fault (trial 484: a TorchScript model refused
    the forward hook, and the check said to fix the program)."""
    try:
        return Tracer(built, segment.tensor_dir, stream_states_at=_stream_steps(segment.spec),
                      stream_digests_at=_stream_digest_steps(segment.spec),
                      kept=segment.result.kept if segment.judged_here else None)
    except ResumecheckError:
        raise
    except Exception as exc:
        segment.stage = "trace"
        raise TracingFailed("its hooks", f"{type(exc).__name__}: {exc}", own_line(exc),
                            "as they were put on the program before its first step") from exc


class _TensorKeeper:
    """Which steps' full tensors are kept: the steps asked for by number,
    the spare steps while ``spare_tensor_bytes`` lasts (``step_bytes`` each),
    and after ``keep_tensors_after`` the steps that differ from the
    reference, the first ``max_tensor_steps`` of them. ``might(step)``, before
    the step, says whether it can be one of them (the tracer copies its
    gradients only then)."""

    def __init__(self, spec: SegmentSpec, step_bytes: int) -> None:
        self.spec, self.step_bytes = spec, step_bytes
        self.kept = 0
        self.wanted = set(spec.keep_tensor_steps)
        self.spare_steps, self.spare = set(spec.spare_tensor_steps), spec.spare_tensor_bytes

    def might(self, step: int) -> bool:
        spec = self.spec
        if step in self.wanted or (step in self.spare_steps and 0 < self.step_bytes <= self.spare):
            return True
        if spec.keep_tensors_after is None or step <= spec.keep_tensors_after:
            return False
        return spec.max_tensor_steps is None or self.kept < spec.max_tensor_steps

    def __call__(self, record: StepRecord) -> bool:
        step = record.step
        if step in self.wanted:
            return True
        if step in self.spare_steps and 0 < self.step_bytes <= self.spare:
            self.spare -= self.step_bytes
            return True
        if not self.might(step):  # (before the resume point, or enough kept already)
            return False
        ref = self.spec.reference_digests
        if ref is not None and step <= len(ref) and ref[step - 1] == record.digests:
            return False
        self.kept += 1
        return True


def _describe(exc: BaseException) -> str:
    return str(exc) if isinstance(exc, ResumecheckError) else f"{type(exc).__name__}: {exc}"


def _restore_watched(built: BuiltProgram, restore: Restore, capture: dict[str, Any] | None,
                     result: SegmentResult, began: float | None) -> dict[str, list[str]]:
    """``restore_state``; through the program's own load() (not a framework
    target's), the files it read outside the checkpoint path that changed
    since the check ``began`` go to ``result.side_files``, the global streams
    it set to ``result.streams_set``."""
    if restore.source != "program" or not _own_files(result):
        return restore_state(built, restore, capture, result.made_anew, result.moved_by_load)
    with outside(restore.path, writes=False) as read, streams_set(result.streams_set):
        unreached = restore_state(built, restore, capture)
    if read := changed_since(read, began):
        result.side_files["load"] = shown(read, restore.path)
    return unreached


def _own_files(result: SegmentResult) -> bool:
    """Whether the files a save() or load() opens outside its path are the
    program's own doing: not a framework target's, whose adapter writes the
    framework's checkpoint where the framework puts it and moves it."""
    return not result.boundaries.get("restored_by")


def _left_beside(written: list[str]) -> list[str]:
    """Of the files a save() wrote outside its path, those still there (one
    written and then moved into place, or removed, is not left beside it)."""
    return [f for f in written if os.path.lexists(f)]
