"""The resume-equivalence engine: it runs the reference and the resumed runs.

``verify()`` runs the program N steps uninterrupted (the reference, capturing
every component's state at each resume point), a few more references with
other seeds (the seed-to-seed noise band), then one resumed run per set of
dropped components: restart at each resume point, restore everything but the
dropped components, continue to N. ``verdict.py`` judges each resumed run
against the reference; this module only runs things and asks it.
"""

from __future__ import annotations

import contextlib
import difflib
import gc
import math
import os
import pickle
import re
import shutil
import signal
import threading
import time
import warnings
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal, NamedTuple

import torch

from resumecheck import forkserver, hash_calls, hashorder, heap, module_state, verdict
from resumecheck.baseline import compare_launches, nondeterminism_cause
from resumecheck.capture import forget_captures_under, load_checkpoint
from resumecheck.compare import Tolerance
from resumecheck.dist_names import check_rank_suffixes, declared_rank_names
from resumecheck.components import (
    CONFIG, LAUNCH_STREAMS, OPTIMIZER, PARAMS, preserved_global_streams, split_rank_name,
)
from resumecheck.environment import fingerprint
from resumecheck.evidence import next_draw
from resumecheck.errors import (
    BudgetExhausted, DiskSpaceShortage, DiskUseWarning, EnvironmentFailure,
    ModuleStateChanged, NondeterministicBaseline, NotStateUnmatchedWarning, ReferenceFailed,
)
from resumecheck.program import Target, declared_names, load_target
from resumecheck.progress import ProgressCallback, ProgressTracker, run_label
from resumecheck.elastic import judge_elastic, unmapped_state
from resumecheck.phrases import (
    AS_BUILT_AT_RESUME, AS_BUILT_CYCLING, GRADS_SUMMED, MODULE_LEVEL, RESTART_HELD_OTHERWISE,
    SET_ALIKE_LATER, STOPPED, merge_alike, merge_items, uncompared_path, under_roots,
)
from resumecheck.report import (
    CLOSE, DIVERGED, FAILED, IDENTICAL, INCONCLUSIVE, NOT_CAUSE, Finding, Report, RunResult,
    settings_text,
)
from resumecheck.reproduce import reproduce_command
from resumecheck.restore import build_settings
from resumecheck.faults import environment_failure
from resumecheck.interrupt import RunDirectories, scratch_directory
from resumecheck.runner import run_segment
from resumecheck.segments import PHASE_TIMEOUT, Restore, SegmentResult, SegmentSpec
from resumecheck.settings import DEFAULT_NOISE_SEEDS, MAX_NOISE_SEEDS, DropSpec, Settings, resume_points
from resumecheck.streams import is_stream_state
from resumecheck.trace import KEPT_IN_MEMORY, first_difference, load_step_tensors
from resumecheck.undeclared import (
    alike_named, brought_back, generator_paths, not_known_if_held, set_back_unseen,
)

__all__ = [
    "MAX_NOISE_SEEDS", "MIN_STEP_TIMEOUT", "Checker", "ReferenceFailed", "elastic_settings_clause",
    "forked_map",
    "parallel_map", "resume_points", "run_check", "save_moves", "verify",
]

MIN_STEP_TIMEOUT = 60.0
"""The automatic step timeout is max(this, 20 x the reference's slowest step)."""

REFERENCE_HASH_SEED = 1
"""The ``PYTHONHASHSEED`` of the reference, of its replays and of the first half
of a run through the program's own save/load (the run that was interrupted)."""


def restart_hash_seed(i: int, first: int = 2) -> int:
    """The ``PYTHONHASHSEED`` of a run's ``i``-th restart (from 0): ``first``
    (``restart_seed``), then the reference's again, and so on; never the one
    the segment it resumes from ran under, as a real restart draws a new one
    (a set of parameter names iterated in another order gives the saved
    optimizer state to other parameters), and the same in every check of a
    program, so a verdict reproduces. Only a fresh interpreter
    (``--isolation process``) can take it: in-process, every segment shares
    this interpreter's."""
    return first if i % 2 == 0 else REFERENCE_HASH_SEED


def restart_seed(reference: SegmentResult) -> int:
    """The hash seed of a run's first restart: 2, unless 2 orders each of the
    optimizers' parameter groups, were it a set of names, as the reference's
    seed does while another seed (up to 63) would not: then that one, so a
    group built by iterating a set shows (``hashorder``; a trial: q, k and v
    weights in a set, ordered alike under 1 and 2, passed)."""
    return hashorder.telling_seed(_optimizer_groups(reference), REFERENCE_HASH_SEED,
                                  range(2, 64)) or 2


def _optimizer_groups(reference: SegmentResult) -> list[list[str]]:
    """Each declared optimizer's parameter groups by parameter name, each in
    the model's order (its state_dict()'s), from the reference's first
    capture (empty: none known)."""
    return [sorted(group, key=lambda n: rank.get(n, len(rank)))  # (the model's order)
            for _, group, rank in _listed_groups(reference)]


def set_order_notice(reference: SegmentResult, command: str | None) -> str | None:
    """In-process: the sentence a report carries when a declared optimizer lists
    a group of parameters in the order a set of their names iterates in this
    interpreter, not the model's (a trial: an optimizer built by iterating sets
    of names passed every in-process check; restarts in new interpreters,
    under other hash seeds, gave its state to other parameters). ``command``:
    the check with ``--isolation process``. A hint, never a verdict: a set
    built otherwise (of parameters, by address) is not seen, nor a group of
    two names, whose order a set's matches as often as not."""
    found: list[str] = []
    groups: Counter[str] = Counter()
    for optimizer, group, rank in _listed_groups(reference):
        model = sorted(group, key=lambda n: rank.get(n, len(rank)))
        # (a set's order depends on what was put in first where two names collide,
        # and on its table's size: one made from a dict is sized for it at once)
        # (trial 792: two names listed by hand, list(a.parameters()) + [b], matched the set's
        # order in about half of all interpreters, and were warned of as built from a set)
        if len(group) >= 3 and group != model and not _module_by_module(group, rank) \
                and group in [list(set(made(names))) for names in (model, group, sorted(group))
                              for made in (list, dict.fromkeys)]:
            chance = ", an order a set of three matches by chance once in six" \
                if len(group) == 3 else ""
            found.append(f"{optimizer}'s group {groups[optimizer]} ({_few(group)}; the model's "
                         f"order: {_few(model)}{chance})")
        groups[optimizer] += 1
    if not found:
        return None
    return (f"{'; '.join(found)} lists parameters in the order a set of their names iterates "
            "in this interpreter, not the model's: an order that follows PYTHONHASHSEED, which "
            "every in-process restart shares, so this check cannot see a real restart give the "
            "optimizer's saved state to other parameters (sort the names, or list the "
            "parameters in the model's order). Check it with --isolation process, each restart "
            "a new interpreter under another hash seed" + (f": {command}" if command else ""))


def _module_by_module(group: list[str], rank: dict[str, int]) -> bool:
    """Whether a group lists its parameters in runs of the model's order, at
    least two names a run on average: modules' parameters put one after the
    other by hand (list(head.parameters()) + list(norm.parameters())), which a
    set's order matches only by chance (trial 300: four names, in that order
    under one hash seed in 24, read as built from a set)."""
    runs = 1 + sum(1 for a, b in zip(group, group[1:])
                   if rank.get(b, -2) != rank.get(a, -1) + 1)
    return 2 * runs <= len(group)


def hash_order_notice(checker: Checker) -> str | None:
    """In-process: the WARNING on an order that follows the hash seed, which
    every in-process restart shares: a declared optimizer in a set's order
    (``set_order_notice``), the program's code calling hash() on a string
    (``hash_calls``); None: neither seen."""
    command = _in_processes(checker)
    found = [set_order_notice(checker.segment, None),
             hash_calls.hash_calls_notice(checker.hash_calls, None)]
    said = [notice for notice in found if notice]
    if not said:
        return None
    return ". ".join(said) + (f": {command}" if command else "")


def _module_lines(checker: Checker) -> list[str]:
    """In fresh interpreters, the `not compared` lines of the module-level state
    the reference changed (``SegmentResult.module_moved``; trial 152)."""
    return [f"{moved}: {MODULE_LEVEL}; a restart imports your module afresh and starts from "
            "its value there, and no checkpoint holds it unless your save() and your load() do "
            "(keep it in a declared component)" for moved in checker.segment.module_moved]


def _few(names: list[str]) -> str:
    return ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")


def _listed_groups(reference: SegmentResult) -> list[tuple[str, list[str], dict[str, int]]]:
    """Each declared optimizer's parameter groups by parameter name, in its own
    order, with its name and the rank of each name in the model's order, from
    the reference's first capture (empty: none known)."""
    if not reference.captures:
        return []
    data = load_checkpoint(reference.captures[min(reference.captures)], read_only=True)
    meta, components = data.get("meta") or {}, data.get("components") or {}
    listed = {OPTIMIZER: meta.get("optimizer_params") or [],
              **(meta.get("optimizer_params_of") or {})}
    model = components.get(PARAMS)
    rank = {n: i for i, n in enumerate(model)} if isinstance(model, dict) else {}
    out: list[tuple[str, list[str], dict[str, int]]] = []
    for name, names in listed.items():
        state = components.get(name)
        groups = state.get("param_groups") if isinstance(state, dict) else None
        if not isinstance(groups, list) or not names:
            continue
        at = 0
        for group in groups:
            size = len(group.get("params", [])) if isinstance(group, dict) else 0
            out.append((name, [str(n) for n in names[at:at + size]], rank))
            at += size
    return out


# In-process restarts first move every global stream to a value no program
# would pick, so a missing RNG restore cannot hide.
_RESEED_BASE = 0x5EED_F00D

# Full tensors of a step go to disk only where a comparison reads them: the
# reference keeps the few steps after each resume point (more are replayed on
# demand) and, judged bit for bit, a run keeps its first differing step: the
# first divergence is decided there, and its figures are the departure where
# it begins; later steps differ in digests anyway, and at 1M parameters two
# more steps' figures cost 0.1 s a sweep.
_TENSOR_STEPS = 1

# Where they are small, the reference keeps the steps after those too, up to
# this many after each resume point and this many bytes in all: a run that
# first differs there is compared without a replay of the reference (writing
# a step's tensors costs far less than running it again from the capture).
_SPARE_TENSOR_STEPS = 8
_SPARE_TENSOR_BYTES = 64 << 20

# A check that will write more than this says so up front.
_LARGE_DISK_USE = 1 << 30

Source = Literal["auto", "engine"]


def verify(
    target: Target | str | None = None,
    *,
    steps: int | None = None,
    resume_at: Sequence[int] | int | None = None,
    drop: DropSpec = "all",
    isolation: Literal["inprocess", "process"] = "inprocess",
    tolerance: Tolerance | None = None,
    seed: int | None = None,
    noise_seeds: int = DEFAULT_NOISE_SEEDS,
    threads: int = 1,
    check_determinism: bool = True,
    timeout: float | None = None,
    jobs: int | None = None,
    progress: ProgressCallback | None = None,
    nproc: int | None = None,
    resume_nproc: int | None = None,
) -> Report:
    """Check that the target resumes from a checkpoint like it never stopped.

    ``drop``: ``"all"`` (the full resume plus one run per component), ``"none"``
    (the full resume only), or a list of names or collections of names dropped
    together (one run each, after the full resume).

    ``seed``: None (the default) runs the program with its own settings,
    its default seed included; an int sets ``target.seed_key`` for the run
    (the reference and the first half of each resumed run; a restart is
    still built from the program's defaults and gets the seed back only
    through its checkpoint). The noise runs vary the seed from the one the
    run uses, when it can be known (see ``Checker.base_seed``).

    Every report holds the engine's own full resume beside the program's own
    save/load one; when the engine's is not equivalent, the declared components
    do not capture the program's state: the ablations are ``inconclusive``.

    Before judging, a second uninterrupted run must match the reference bit
    for bit; if it does not, bitwise mode raises ``NondeterministicBaseline``
    (tolerance mode records it in the report and goes on).

    ``timeout``: seconds one training step may take. ``None`` (the default)
    bounds each step of the reference by ``PHASE_TIMEOUT`` and each step of
    every later run by max(``MIN_STEP_TIMEOUT``, 20 x the reference's slowest
    step); ``0`` turns the bound off. A slower step ends that run as
    ``failed`` (in process mode its interpreter is killed; in-process the
    step is interrupted where Python code runs, in the main thread by
    SIGALRM). Out of disk space, out of memory or a process killed from
    outside raise ``EnvironmentFailure``: never a verdict.
    ``jobs``: independent runs (noise seeds, ablations) side by side, at most
    ``jobs`` at once: in fresh interpreters (process isolation) or in forks of
    this one (in-process). The report is the same for any ``jobs``; progress
    events of a run in a fork are not seen here. None (default): one per
    ``threads`` cores in process isolation, else one.
    ``progress`` receives a ``ProgressEvent`` per step and run. ``nproc``: every segment
    as N ranks (``rng[rank 1]``); ``resume_nproc``: restarts at M (``resumecheck.elastic``).
    """
    settings = Settings(
        steps=steps, resume_at=resume_at, drop=drop, isolation=isolation, tolerance=tolerance,
        seed=seed, noise_seeds=noise_seeds, threads=threads, check_determinism=check_determinism,
        timeout=timeout, jobs=jobs, nproc=nproc, resume_nproc=resume_nproc)
    return run_check(target, settings, progress=progress)


def run_check(target: Target | str | None, settings: Settings, *,
              progress: ProgressCallback | None = None) -> Report:
    """``verify`` with its settings already built (the CLI and the plugin build them)."""
    tgt = target if isinstance(target, Target) else load_target(target)
    resolved = settings.for_target(tgt)
    if resolved.isolation == "process" and resolved.nproc is None:  # warm fresh interpreters
        forkserver.prestart(["1", *[None] * resolved.workers], preload=tgt.preload)
    if resolved.nproc is not None:  # the reference's and the other runs' launchers' servers
        from resumecheck.distributed import prestart_launchers

        prestart_launchers(["1", None])
    if not (isinstance(resolved.drop, str) and resolved.drop in ("all", "none")):
        _check_drop_names(tgt, resolved)  # a typo fails before any run
    total = resolved.n * (1 + resolved.check_determinism)
    tracker = ProgressTracker(progress, "run", total=total) if progress else None
    with scratch_directory("resumecheck-") as work, preserved_global_streams(), \
            _torch_threads(resolved.threads):
        try:
            return Checker(tgt, resolved, work, progress=tracker).report()
        except Exception as exc:
            failure = environment_failure(exc, work)
            if failure is None or failure is exc:
                raise
            raise failure from exc


def _check_drop_names(tgt: Target, s: Settings) -> None:
    """The drop list against the names the program declares, before any run. A
    distributed program builds only inside its ranks: its rank suffixes are
    checked from the names, its declared names from one build as a world of one
    rank (``dist_names``); where that build fails, after the reference."""
    config = tgt.launch_config(s.seed)
    if s.nproc is None:
        verdict.drop_sets(s.drop, declared_names(tgt, config))
        return
    check_rank_suffixes(s.drop, s.nproc)
    if tgt.spec is None:
        return  # the launch refuses an in-memory target, saying so
    names = declared_rank_names(tgt.spec, config, s.nproc, s.threads)
    if names is not None:
        verdict.drop_sets(s.drop, names)


@contextlib.contextmanager
def _torch_threads(threads: int) -> Iterator[None]:
    """The check's own work (digests, judging) on the check's thread count, as
    its runs: comparisons give the same figures on any count, and torch's
    default (every core) slows to a crawl on a machine others load too."""
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def parallel_map(fn: Callable[[Any], Any], items: Iterable[Any], jobs: int,
                 cancel: threading.Event) -> list[Any]:
    """``fn`` over ``items``, in order, at most ``jobs`` at once. One job: one by
    one, in this thread (so a step can be interrupted there). Several: at most
    ``jobs`` submitted at once; if anything goes wrong or the check is
    interrupted, ``cancel`` is set (process-isolated runs in flight kill their
    interpreters) before this returns."""
    if jobs == 1:
        return [fn(item) for item in items]
    out: list[Any] = []
    pending: deque[Future[Any]] = deque()
    pool = ThreadPoolExecutor(max_workers=jobs)
    try:
        for item in items:
            if len(pending) >= jobs:
                out.append(pending.popleft().result())
            pending.append(pool.submit(fn, item))
        while pending:
            out.append(pending.popleft().result())
    except BaseException:
        cancel.set()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown()
    return out


def forked_map(fn: Callable[[Any], Any], items: Iterable[Any], jobs: int) -> list[Any]:
    """``fn`` over ``items``, in order, each call in a fork of this interpreter,
    at most ``jobs`` at once: in-process runs side by side. A run reads and
    writes only files (the reference's among them) and its result comes back
    pickled, so nothing a run changes here (streams, modules, caches) reaches
    another; runs from step 0 begin from a fresh interpreter's stream state
    and restarts reseed every stream, so the results do not depend on the
    order. If anything goes wrong or the check is interrupted, the children
    still running are killed before this returns. Where torch sees an
    accelerator the runs go one by one here instead (``_forks_can_train``)."""
    if jobs <= 1 or not _forks_can_train():
        return [fn(item) for item in items]
    out: list[Any] = []
    pending: deque[tuple[int, int]] = deque()
    try:
        for item in items:
            if len(pending) >= jobs:
                out.append(_collect(*pending.popleft()))
            pending.append(_fork(fn, item))
        while pending:
            out.append(_collect(*pending.popleft()))
    except BaseException:
        for pid, fd in pending:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(fd)
        raise
    return out


def _forks_can_train() -> bool:
    """Whether a fork of this interpreter can still train: not where torch sees
    a CUDA (or XPU) device. This interpreter's first backward then started
    autograd's per-device threads, and a fork of a process that has them
    refuses to run backward ("Unable to handle autograd's threading in
    combination with fork-based multiprocessing"); CUDA used here cannot be
    used in a fork either."""
    xpu = getattr(torch, "xpu", None)
    return not (torch.cuda.is_available() or (xpu is not None and xpu.is_available()))


def _fork(fn: Callable[[Any], Any], item: Any) -> tuple[int, int]:
    read, write = os.pipe()
    pid = os.fork()
    if pid:
        os.close(write)
        return pid, read
    try:  # the child: never returns, never runs this interpreter's cleanups
        os.close(read)
        # nor finalizers of what it inherited: an earlier run's DataLoader
        # iterator, garbage in a cycle here, would shut down workers that are
        # not its children ("AssertionError: can only test a child process")
        gc.freeze()
        try:
            payload = pickle.dumps((True, fn(item)))
        except BaseException as exc:  # noqa: BLE001 - every outcome goes to the parent
            try:
                payload = pickle.dumps((False, exc))
            except Exception:
                payload = pickle.dumps((False, RuntimeError(f"{type(exc).__name__}: {exc}")))
        with os.fdopen(write, "wb") as pipe:
            pipe.write(len(payload).to_bytes(8, "little") + payload)
    finally:
        os._exit(0)


def _collect(pid: int, fd: int) -> Any:
    """The result of a forked run: read by its length, not to the pipe's end,
    which comes only when every process holding it has ended (a DataLoader's
    workers, forked by the run, hold it until they notice their parent is
    gone: seconds)."""
    with os.fdopen(fd, "rb") as pipe:
        size = int.from_bytes(pipe.read(8) or bytes(8), "little")
        data = pipe.read(size) if size else b""
    _, status = os.waitpid(pid, 0)
    if not data:
        signum = -os.waitstatus_to_exitcode(status)
        raise EnvironmentFailure(
            "signal", f"a forked in-process run ended without a result (signal {signum})",
            "Free memory, or run with --jobs 1.")
    ok, value = pickle.loads(data)
    if not ok:
        raise value
    return value


class _Segments:
    """Runs the segments of one check: the settings every spec shares, the step
    bound, progress, the time budget and the cancellation of runs in flight."""

    def __init__(self, target: Target, settings: Settings, work: str,
                 progress: ProgressTracker | None) -> None:
        self.target = target
        self.settings = settings
        self.steps = settings.n
        self.tolerance = settings.tolerance or Tolerance.bitwise()
        self.run_config = target.launch_config(settings.seed)
        self.restart_config = self.run_config if target.restart_config == "run" else {}
        self.work = work
        self.run_directory = RunDirectories(work, forget_captures_under)
        """A directory of its own for each run (used again once emptied)."""
        self.progress = progress
        self.cancel = threading.Event()
        self.deadline: float | None = None
        self.budget: float | None = None
        self.reference: SegmentResult | None = None
        """Once it ran: bounds the later steps and gives its digests to later runs."""
        self.save_at: list[int] = []
        """Where every run calls the program's own save() (``SegmentSpec.save_at``)."""
        self.restart_seed = 2
        """The hash seed of a run's first restart (``restart_seed``)."""
        self.hash_calls: list[str] = []
        """In-process: where the program's code called hash() on a string as the
        reference ran (``hash_calls.watching``)."""
        self.began = time.time()
        """When the check began (``SegmentSpec.began``)."""

    def run(self, spec: SegmentSpec) -> SegmentResult:
        try:
            if self.progress is None:
                return run_segment(spec, self.settings.isolation, self.target,
                                   cancel=self.cancel, deadline=self.deadline)
            with self.progress.segment(run_label(spec.name), spec.start, spec.stop):
                return run_segment(spec, self.settings.isolation, self.target,
                                   cancel=self.cancel, deadline=self.deadline)
        except BudgetExhausted:
            raise BudgetExhausted(self.budget) from None

    def step_timeout(self) -> float | None:
        """The bound on one step of the next run (see verify())."""
        timeout = self.settings.timeout
        if timeout == 0:
            return None
        if timeout is not None:
            return float(timeout)
        if self.reference is None:
            return PHASE_TIMEOUT
        return max(MIN_STEP_TIMEOUT, 20 * self.reference.slowest_step)

    def spec(self, name: str, work: str | None = None, *, ranks: int | None = None,
             **kw: Any) -> SegmentSpec:
        if self.reference is not None and kw.get("keep_tensors_after") is not None:
            kw["reference_digests"] = [r.digests for r in self.reference.records]
            if self.tolerance.bitwise_only:
                kw.setdefault("max_tensor_steps", _TENSOR_STEPS)
        kw.setdefault("save_at", self.save_at)
        return SegmentSpec(
            target_spec=self.target.spec, workdir=work or self.work, name=name,
            threads=self.settings.threads, step_timeout=self.step_timeout(),
            nproc=ranks or self.settings.nproc, preload=list(self.target.preload),
            began=self.began, **kw,
        )

    def reference_runs(self, points: list[int], probe_save: bool = False,
                       ) -> tuple[SegmentResult, SegmentResult | None]:
        """The uninterrupted reference, capturing state at ``points``, and the
        determinism rerun (None when not asked for): independent of each other,
        so side by side in fresh interpreters when ``jobs`` allows."""
        if self.tolerance.bitwise_only:
            keep: dict[str, Any] = {
                "keep_tensor_steps": self._after(points, 1, _TENSOR_STEPS),
                "spare_tensor_steps": self._after(points, _TENSOR_STEPS + 1, _SPARE_TENSOR_STEPS),
                "spare_tensor_bytes": _SPARE_TENSOR_BYTES}
        else:  # within tolerance, every step after a restart may be read
            keep = {"keep_tensors_after": min(points)}
        # (elastic: where a continuation's global batch came from, among the earlier ones)
        keep["keep_samples"] = self.settings.resume_nproc is not None
        spec = self.spec("reference", config=self.run_config, start=0, stop=self.steps,
                         capture_at=points, hash_seed=REFERENCE_HASH_SEED, find_undeclared=True,
                         watch_save=bool(self.save_at) or probe_save,
                         save_after_end=probe_save,
                         digest_held=True, held_after=self._after(points, 0, 1),
                         digest_built=self._one_rank(), **keep)
        jobs = self.settings.workers if self.settings.isolation == "process" else 1
        again: list[SegmentResult] = []
        if self.settings.check_determinism and jobs > 1:
            # The rerun does not need the reference: side by side, with the
            # reference's step bound (its slowest step is not known yet).
            ref, *again = parallel_map(self.run, [spec, self._determinism_spec()], 2, self.cancel)
        else:
            ref = self._in_this_interpreter(spec)
        if ref.error is not None:
            raise ReferenceFailed(self.target.name, ref.error, ref.error_step,
                                  stage=ref.error_stage, timed_out=ref.timed_out)
        if self.settings.check_determinism and not again:
            self.reference = ref  # the rerun's steps are bounded from the reference's
            again = [self.run(self._determinism_spec())]
        return ref, (again[0] if again else None)

    def _one_rank(self) -> bool:
        """Whether the reference digests what the build made and what the step
        after each resume point left (``as_built_untried`` for a component no
        run drops alone; ``fields_as_built`` for one whose row departs on other
        fields: trial 268's step count, back to its value at the end, went
        unsaid under --drop all); one rank only."""
        s = self.settings
        return s.nproc is None and s.resume_nproc is None

    def _in_this_interpreter(self, spec: SegmentSpec) -> SegmentResult:
        """Run the reference; in-process, refuse to go on when it changed state
        the program keeps at module level, which every in-process restart would
        keep and a real restart would not (``module_state``)."""
        if self.settings.isolation != "inprocess" or (self.settings.nproc or 1) > 1:
            return self.run(spec)  # (ranks are processes of their own)
        spaces = module_state.program_spaces(self.target.factory)
        with hash_calls.watching(spaces, self.hash_calls):
            ref, moved = module_state.changed_by(lambda: self.run(spec), spaces,
                                                 module_state.named_spaces(self.target.factory))
        if moved and ref.error is None:
            raise ModuleStateChanged(self.target.spec or self.target.name, moved,
                                     _in_processes(self))
        return ref

    def _after(self, points: list[int], first: int, last: int) -> list[int]:
        """The steps ``first`` to ``last`` after each of ``points``."""
        return sorted({k + i for k in points for i in range(first, last + 1)
                       if k + i <= self.steps})

    def _determinism_spec(self) -> SegmentSpec:
        # In fresh interpreters, another hash seed: set and dict order may differ.
        # From another launch's global streams: a program that seeds what it draws
        # from does not notice (see ``determinism``).
        return self.spec("determinism", config=self.run_config, start=0, stop=self.steps,
                         hash_seed=2, capture_end=False, trace_streams=False,
                         launch_moved=list(LAUNCH_STREAMS))

    def determinism(self, ref: SegmentResult, again: SegmentResult | None) -> dict[str, Any]:
        """The second uninterrupted run, started from another launch's global
        streams, must match the reference bit for bit. When it does not, a
        third from the reference's streams tells a program that never seeds a
        stream it draws from (``seeded: False``: every run here starts from the
        same streams, so the check stands, but two real launches differ) from
        one that is not deterministic (``baseline.compare_launches``)."""
        if again is None:
            return {"checked": False}
        if again.error is not None:
            raise ReferenceFailed(self.target.name, again.error, again.error_step, rerun=True,
                                  timed_out=again.timed_out)
        launches = compare_launches(self.run, self._determinism_spec(), ref, again)
        if launches.again is None:
            return {"checked": True, "deterministic": True, "seeded": True}
        if launches.again.error is not None:
            raise ReferenceFailed(self.target.name, launches.again.error,
                                  launches.again.error_step, rerun=True,
                                  timed_out=launches.again.timed_out)
        if launches.unseeded is not None:
            step, key = launches.unseeded
            return {"checked": True, "deterministic": True, "seeded": False,
                    "unseeded": {"step": step, "quantity": verdict.quantity_name(key),
                                 "streams": launches.streams}}
        assert launches.departs is not None
        if _by_hash_seed_only(self, ref):
            step, key = launches.departs
            return {"checked": True, "deterministic": True, "seeded": True,
                    "hash_order": {"step": step, "quantity": verdict.quantity_name(key)}}
        return self._not_deterministic(ref, launches.again, launches.departs)

    def _not_deterministic(self, ref: SegmentResult, again: SegmentResult,
                           diff: tuple[int, str]) -> dict[str, Any]:
        step, quantity = diff[0], verdict.quantity_name(diff[1])
        if self.tolerance.bitwise_only:
            s = self.settings
            # (trial 141: at --nproc the search for the cause built the program in this
            # process, without a process group, and its factory's error read as the
            # target's: two launches differ, and the likely causes are listed instead)
            cause = None if s.nproc else nondeterminism_cause(
                self.target, self.run_config, s.threads, s.isolation, self.work, step,
                quantity, first=ref)
            raise NondeterministicBaseline(
                self.target.spec or self.target.name, step, quantity,
                reproduce_command("baseline", self.target.spec, steps=self.steps, seed=s.seed,
                                  threads=s.threads, isolation=s.isolation, nproc=s.nproc),
                cause=cause, tolerance_may_help=_rounding_apart(ref, again, diff),
                in_process=s.isolation == "inprocess" and not s.nproc, nproc=s.nproc,
            )
        return {"checked": True, "deterministic": False, "first_step": step,
                "first_quantity": quantity}


def _by_hash_seed_only(segments: _Segments, ref: SegmentResult) -> bool:
    """In fresh interpreters, where two launches differ: whether a third run
    under the reference's PYTHONHASHSEED, from another launch's streams,
    matches it, so that the hash seed alone tells launches apart (an order
    that follows it: a vocabulary numbered by iterating a set). A relaunch
    runs under another, as each restart here does: the resume is judged so
    (trial 783: both twins were refused, "a resume cannot be judged bit for
    bit", where with the check off each was judged right)."""
    s = segments.settings
    if s.isolation != "process" or s.nproc or not segments.tolerance.bitwise_only:
        return False
    same = segments.run(replace(segments._determinism_spec(), name="determinism-hash",
                                hash_seed=REFERENCE_HASH_SEED))
    return same.error is None and first_difference(ref.records, same.records) is None


def _rounding_apart(first: SegmentResult, second: SegmentResult, diff: tuple[int, str]) -> bool:
    """Whether two runs that first differ at ``diff`` may differ by rounding
    alone: not in the samples they read, nor by a loss 0.1% apart or more."""
    step, key = diff
    # (the samples read, and the model's inputs where they hold no floats: token ids
    # cannot differ by rounding, trial 143; a float input may)
    if split_rank_name(key)[0].split(":", 1)[0] == "data" or key in first.records[step - 1].exact:
        return False
    a, b = (run.records[step - 1].loss for run in (first, second))
    return math.isfinite(a) and math.isfinite(b) and abs(a - b) <= 1e-3 * max(abs(a), abs(b))


class _ReferenceTensors:
    """The reference's full tensors per step: from its files, or replayed (it
    keeps only the steps after each resume point)."""

    def __init__(self, segments: _Segments, reference: SegmentResult) -> None:
        self.segments = segments
        self.reference = reference
        self.run_config, self.restart_config = segments.run_config, segments.restart_config
        self._lock = threading.Lock()

    def __call__(self, step: int) -> dict[str, torch.Tensor] | None:
        if self.reference.tensor_dir is None:
            return None
        ref_dir = Path(self.reference.tensor_dir)
        with self._lock:
            if not self._has(step, ref_dir):
                self._replay(step, ref_dir)
        return load_step_tensors(ref_dir, step, self.reference.kept)

    def _has(self, step: int, ref_dir: Path) -> bool:
        name = f"step_{step}.pt"
        return name in self.reference.kept or (ref_dir / name).exists()

    def _replay(self, step: int, ref_dir: Path) -> None:
        """Run the reference again up to ``step`` (and the few steps after it)
        and keep those steps' tensors, where its digests prove them the
        reference's own: from the last capture before it, else from step 0."""
        stop = min(step + _TENSOR_STEPS - 1, self.segments.settings.n)
        wanted = list(range(step, stop + 1))
        before = [k for k in self.reference.captures if k < step]
        for start in ([max(before)] if before else []) + [0]:
            with self.segments.run_directory("replay-") as work:
                restore = Restore(path=self.reference.captures[start]) if start else None
                seg = self.segments.run(self.segments.spec(
                    f"replay-{step}", work, start=start, stop=stop, hash_seed=REFERENCE_HASH_SEED,
                    config=self.restart_config if start else self.run_config, restore=restore,
                    reseed=_RESEED_BASE + start if start else None, keep_tensor_steps=wanted,
                    trace_streams=False, capture_end=False,
                ))
                if seg.error is None and seg.tensor_dir is not None:
                    self._keep(seg, wanted, ref_dir)
                if self._has(step, ref_dir):
                    return

    def _keep(self, seg: SegmentResult, wanted: list[int], ref_dir: Path) -> None:
        for rec in seg.records:
            own = Path(seg.tensor_dir or "") / f"step_{rec.step}.pt"
            same = rec.digests == self.reference.records[rec.step - 1].digests
            if rec.step not in wanted or not same:
                continue
            if own.name in seg.kept:  # (an in-process replay keeps them in memory)
                self.reference.kept[own.name] = seg.kept.pop(own.name)
            elif own.exists():
                ref_dir.mkdir(parents=True, exist_ok=True)
                shutil.move(str(own), ref_dir / own.name)


class _Restarts:
    """The resumed runs' segments: restarts from the engine's captures, or
    through the program's own save() and load()."""

    def __init__(self, segments: _Segments, reference: SegmentResult, reuse_prefix: bool) -> None:
        self.segments = segments
        self.steps = segments.steps
        self.work = segments.work
        self.run_config, self.restart_config = segments.run_config, segments.restart_config
        self.captures = reference.captures
        self.reuse_prefix = reuse_prefix
        self.prefixes: dict[int, SegmentResult] = {}

    def engine(self, schedule: list[int], dropped: list[str], work: str,
               held: bool = False, config: dict[str, Any] | None = None,
               ) -> list[tuple[int, SegmentResult]]:
        """Restart from the reference's capture at each resume point; ``held``:
        the last segment digests what the program holds outside its declared
        components (``SegmentSpec.digest_held``: for the report, not a fuzz
        example); ``config``: the settings each restart is built with (the
        restarts' own when None)."""
        out = []
        path = self.captures[schedule[0]]
        bounds = [*schedule, self.steps]
        tag = "-".join(dropped) or "none"
        for i, k in enumerate(schedule):
            stop = bounds[i + 1]
            seg = self.segments.run(self.segments.spec(
                f"drop-{tag}-{k}", work, start=k, stop=stop,
                config=self.restart_config if config is None else config,
                restore=Restore(path=path, drop=list(dropped)),
                hash_seed=restart_hash_seed(i, self.segments.restart_seed),
                capture_at=[stop] if stop < self.steps else [],
                keep_tensors_after=k, reseed=_RESEED_BASE + k,
                digest_held=held and stop == self.steps,
                held_after=[k, k + 1] if held else [],  # (at k: right after the restore)
            ))
            out.append((k, seg))
            if seg.error is not None or stop == self.steps:
                break
            path = seg.captures[stop]
        return out

    def program(self, schedule: list[int], work: str, ranks: int | None = None,
                held: bool = False, config: dict[str, Any] | None = None,
                ) -> list[tuple[int, SegmentResult]]:
        """The program's own save() and load(): the checkpoint under audit.

        The first half runs from step 0 and calls save() at the first resume
        point, exactly as ``resumecheck run`` does. With ``reuse_prefix`` that
        first half runs once per first resume point and its checkpoint is
        reused: a replay, memoized (the determinism check proved the prefix
        reproducible), never a start from the engine's capture, which would
        call save() on a program the engine restored, not one that trained
        there (a save that writes its position relative to the last resume
        would look already resumed).
        """
        first = schedule[0]
        seg = self.prefixes.get(first) if self.reuse_prefix else None
        if seg is None:
            prefix_work = work
            if self.reuse_prefix:
                prefix_work = os.path.join(self.work, f"prefix-{first}")
                os.makedirs(prefix_work, exist_ok=True)
            seg = self.segments.run(self.segments.spec(
                "own-0", prefix_work, config=self.run_config, start=0, stop=first,
                program_save_at=first, keep_tensors_after=0, trace_streams=False,
                hash_seed=REFERENCE_HASH_SEED,  # (the run that was interrupted: the reference's)
                digest_built=self.segments._one_rank(),  # (verdict.build_varying)
            ))
            if self.reuse_prefix and seg.error is None:
                self.prefixes[first] = seg
        first_restore = Restore(path=seg.program_checkpoint or "", source="program")
        return [(0, seg), *self.chain(schedule, work, seg, first_restore=first_restore,
                                      ranks=ranks, held=held, config=config)]

    def chain(
        self, schedule: list[int], work: str, previous: SegmentResult, *,
        first_restore: Restore, tag: str = "own", ranks: int | None = None,
        put_right: dict[int, str] | None = None, held: bool = False,
        config: dict[str, Any] | None = None,
    ) -> list[tuple[int, SegmentResult]]:
        """Restart at each point of ``schedule`` through the program's load()
        (the first from ``first_restore``), saving with its save() at the next;
        ``ranks``: the restarts' number of ranks (an elastic resume), else the check's;
        ``put_right``: captures (by resume point) from which every later restart
        puts ``first_restore.override`` right too, after the program's load();
        ``held``, ``config``: as ``engine``'s."""
        out: list[tuple[int, SegmentResult]] = []
        bounds = [*schedule, self.steps]
        prev = previous
        for i, k in enumerate(schedule):
            if prev.error is not None:
                break
            stop = bounds[i + 1]
            again = (put_right or {}).get(k)
            restore = first_restore if i == 0 else Restore(
                path=prev.program_checkpoint or "", source="program",
                override_path=again, override=first_restore.override if again else [])
            name = f"{tag}-{k}" if k not in schedule[:i] else f"{tag}-{k}-again"
            prev = self.segments.run(self.segments.spec(
                name, work, config=self.restart_config if config is None else config,
                start=k, stop=stop,
                restore=restore, program_save_at=stop if stop < self.steps else None,
                keep_tensors_after=k, reseed=_RESEED_BASE + k, ranks=ranks,
                hash_seed=restart_hash_seed(i, self.segments.restart_seed),
                digest_held=held and stop == self.steps,
                held_after=[k, k + 1] if held else [],  # (at k: right after the load)
            ))
            out.append((k, prev))
        return out


class _Confirmations:
    """The reruns that decide whether a finding of a run through the program's
    own save/load is a cause: the same schedule with the finding's component
    set to the reference's state at its resume point."""

    def __init__(self, reference: verdict.Reference, captures: dict[int, str],
                 restarts: _Restarts) -> None:
        self._reference = reference
        self._captures = captures
        self._restarts = restarts
        self._unreached: dict[str, list[str]] = {}
        """Components a rerun put into a loader whose iterator was made before it."""
        self._rerun_steps: list[tuple[int, dict[str, str]]] | None = None
        """The last rerun's steps, each by its digests (None: it failed)."""
        self._ended_at: dict[int, SegmentResult] = {}  # (the settled run's, by restore)

    def settle(self, result: RunResult, segments: list[tuple[int, SegmentResult]],
               work: str, own: bool, diverged_at: tuple[int, str] | None) -> bool:
        """Try each finding that may be the cause: the same schedule through the
        program's own save/load, with only that component set to the
        reference's state at its resume point; then each that did not help
        alone on top of those that did (``_later_causes``); when none helped
        alone, all of them together (``_joint_causes``). The verdict decides
        from the reruns (``verdict.settle_findings``). True: a latent gap's
        rerun saved right after a load (``_resave``)."""
        tries = verdict.confirmation_tries(self._reference, result, segments,
                                           "program" if own else "engine")
        outcomes: dict[int, bool] = {}
        moved: set[int] = set()
        self._unreached = {}
        self._ended_at = {segments[i + 1][0]: seg for i, (_, seg) in enumerate(segments[:-1])}
        for i, (k, checkpoint) in tries.items():
            component = result.diagnosis[i].component
            outcomes[i] = self._helps([component], k, checkpoint, result, work,
                                      f"confirm-{component}", diverged_at)
            if (not outcomes[i] and self._rerun_steps not in (None, _steps_of(segments, k))
                    and self._random_state(component, k)):
                moved.add(i)  # (it changed the run: not "changes nothing", see settle_findings)
        outcomes.update(self._later_causes(result, tries, outcomes, work))
        joint = self._joint_causes(result, tries, outcomes, work, diverged_at)
        together = [result.diagnosis[i].component for i, helped in joint.items() if helped]
        outcomes.update(joint)
        if any(joint.values()):
            # (trial 160: a data position and an epoch, causes only together, left
            # the optimizer, scheduler and streams "not the cause", where each
            # moved what those two leave: tried on top of them, as for one alone)
            outcomes.update(self._later_causes(result, tries, outcomes, work))
        if any(outcomes.values()):
            # (what the confirmed ones leave, the others are tried on: a change
            # they made alone may be theirs together with a confirmed one)
            moved = set()
        verdict.note_frozen_set_again(self._reference, result, segments)
        # (modes even where the run departs, trial 166: an EMA's mode, a note where
        # the run resumed, read "(differs, not the cause)" beside a lost step counter)
        resumed = verdict.departure(result) is None or verdict.steps_match(result)
        put_back = (verdict.modes_put_back(self._reference, result, segments)
                    | (verdict.streams_put_back(self._reference, segments) if resumed else set())
                    | verdict.positions_in_other_form(self._reference, result, segments)
                    if result.diagnosis else set())
        judged = verdict.rerun_evidence(result, outcomes, self._unreached)
        verdict.settle_findings(self._reference, result, judged, put_back, self._unreached,
                                moved, self._next_draws(result, segments))
        verdict.note_together(result, together)
        return own and _resave(self._reference, self._restarts, result, segments, work,
                               lambda f: self._random_state(f.component, f.step or 0))

    def _next_draws(self, result: RunResult,
                    segments: list[tuple[int, SegmentResult]]) -> dict[str, int]:
        """For the one declared random-state component, where a latent gap in it
        would start to change the run (``evidence.next_draw``)."""
        randoms = [f for f in result.diagnosis if self._random_state(f.component, f.step or 0)]
        if verdict.departure(result) is not None or len(randoms) != 1 or not segments:
            return {}
        k = randoms[0].step
        seg = dict(segments).get(k) if k is not None else None
        if seg is None or k is None:
            return {}
        step = next_draw(self._reference.segment, seg, k, self._reference.segment.boundaries)
        return {} if step is None else {randoms[0].component: step}

    def _random_state(self, component: str, k: int) -> bool:
        """Whether ``component`` is random state (an ``RNGState``): putting it
        right sets streams and does nothing else, so a rerun that changed the
        run shows that its state matters. (Another's ``load_state_dict`` may
        act as well: a loader's makes its iterator again, drawing a seed.)"""
        state = self._reference.file(self._captures[k])["components"].get(component)
        return is_stream_state(state)

    def _later_causes(self, result: RunResult, tries: dict[int, tuple[int, str]],
                      outcomes: dict[int, bool], work: str) -> dict[int, bool]:
        """A component that changes nothing when put right alone may still
        cause a later divergence, hidden behind the first one (a scheduler
        rebuilt one step ahead, behind an optimizer whose learning rate it
        already moved). With every confirmed component of the same resume point
        put right, what is left of the divergence: each other finding helps
        when putting it right too removes that or moves it later; when none
        does alone, all of them together (``_together``). Again with those
        put right too, until nothing is left or no other finding helps (a load
        of an older checkpoint: its weights and stream first, then its
        optimizer, then its scheduler). When nothing is left, the others keep
        "not the cause"."""
        confirmed = [i for i, helped in outcomes.items() if helped]
        others = [i for i, helped in outcomes.items() if not helped]
        points = {tries[i] for i in confirmed + others}
        if not confirmed or not others or len(points) != 1:
            return {}
        [(k, checkpoint)] = points
        out: dict[int, bool] = {}
        rounds = 0
        while others:
            rounds += 1
            names = [result.diagnosis[i].component for i in confirmed]
            left = self._rerun_putting_right(names, k, checkpoint, result, work,
                                             "confirmed-" + "-".join(names))
            if left is None or left.first is None:
                return out
            # (each round's reruns are segments of their own: a name of a
            # former round's would find its files)
            found = {i: self._helps([*names, result.diagnosis[i].component], k, checkpoint,
                                    result, work, f"confirm-also{rounds}-"
                                    f"{result.diagnosis[i].component}", left.first)
                     for i in others}
            if not any(found.values()):
                found.update(self._together({i: result.diagnosis[i].component for i in others},
                                            names, k, checkpoint, result, work, left.first,
                                            tag=f"{rounds}"))
            out.update(found)
            confirmed += [i for i in others if found.get(i)]
            if not any(found.values()):
                return out
            others = [i for i in others if not found.get(i)]
        return out

    def _joint_causes(self, result: RunResult, tries: dict[int, tuple[int, str]],
                      outcomes: dict[int, bool], work: str,
                      diverged_at: tuple[int, str] | None) -> dict[int, bool]:
        """No finding helps alone, yet several may cause the divergence
        together: a stream lost on every rank (putting rank 0's right leaves
        rank 1 diverging at the same step, and the other way round)."""
        points = {tries[i] for i in outcomes}
        if any(outcomes.values()) or len(points) != 1:
            return {}
        [(k, checkpoint)] = points
        return self._together({i: result.diagnosis[i].component for i in outcomes}, [],
                              k, checkpoint, result, work, diverged_at)

    def _together(self, candidates: dict[int, str], base: list[str], k: int, checkpoint: str,
                  result: RunResult, work: str, diverged_at: tuple[int, str] | None,
                  tag: str = "") -> dict[int, bool]:
        """Findings none of which helps alone on top of ``base`` (components
        put right already): when putting all of them right at once helps,
        each one whose leaving out undoes that is a cause, the others are not;
        else nothing is decided here. (Of two, leaving one out is putting the
        other right alone: tried already, it did not help.) ``tag`` tells the
        reruns of one call from another's."""
        if len(candidates) < 2 or not self._helps(
                [*base, *candidates.values()], k, checkpoint, result, work,
                f"confirm-together{tag}", diverged_at):
            return {}
        if len(candidates) == 2:
            return dict.fromkeys(candidates, True)
        return {i: not self._helps([*base, *(n for j, n in candidates.items() if j != i)], k,
                                   checkpoint, result, work, f"confirm-without{tag}-{name}",
                                   diverged_at)
                for i, name in candidates.items()}

    def _helps(self, components: list[str], k: int, checkpoint: str, result: RunResult,
               work: str, tag: str, diverged_at: tuple[int, str] | None) -> bool:
        """Whether putting ``components`` right removes the divergence that
        began at ``diverged_at`` or moves it later (``verdict.rerun_helps``)."""
        cmp = self._rerun_putting_right(components, k, checkpoint, result, work, tag)
        return cmp is not None and verdict.rerun_helps(cmp, diverged_at, result)

    def _rerun_putting_right(self, components: list[str], k: int, checkpoint: str,
                             result: RunResult, work: str,
                             tag: str) -> verdict.Comparison | None:
        """Rerun the schedule from point ``k`` (the program's checkpoint there,
        but ``components`` from the reference's capture; its segments named
        after ``tag``) and compare it with the reference (None: the rerun
        failed). Every later restart of the schedule puts ``components``
        right as well: a load that loses a component loses it at each
        restart, and putting it right at the first alone leaves the second's
        loss standing, so the rerun would say the component is not the cause."""
        rest = [p for p in result.resume_at if p >= k]
        restore = Restore(path=checkpoint, source="program",
                          override_path=self._captures[k], override=components)
        segments = self._restarts.chain(
            rest, work,
            SegmentResult(records=[], names=[], captures={}, end_state=None),
            first_restore=restore, tag=tag, put_right=self._captures)
        self._rerun_steps = None
        if any(seg.error is not None for _, seg in segments):
            return None
        self._rerun_steps = _steps_of(segments, k)
        for _, seg in segments:
            for name in set(seg.unreached) & set(components):
                self._unreached.setdefault(name, seg.unreached[name])
        return verdict.compare_run(self._reference, result.resume_at[0], [], segments, [],
                                   self._ended_at.get(k))


def _resave(reference: verdict.Reference, restarts: _Restarts, result: RunResult,
            segments: list[tuple[int, SegmentResult]], work: str,
            is_random: Callable[[Finding], bool]) -> bool:
    """Latent findings of the program's own resume, tried once more: the
    same schedule, with the program's save() right after each load() they
    were found at and a restart from that checkpoint (``verdict.settle_resaved``).
    Whether that rerun ran."""
    found = verdict.resave_findings(reference, result, segments, is_random)
    rerun = _saved_again(reference, restarts, result, segments, work,
                         {result.diagnosis[i].step or 0 for i in found}) if found else None
    if rerun is None:
        return False
    verdict.settle_resaved(reference, result, found, rerun[0],
                           verdict.rates_set_sooner(reference, result, segments))
    return True


def _resaves(checker: Checker, result: RunResult, cmp: verdict.Comparison | None) -> bool:
    """A full resume through the program's own save/load that resumes is tried
    with a save right after its first load (``_resave_clean``), unless a latent
    gap's rerun did so (``_resave``); not where the program's save() moves state."""
    return (cmp is not None and verdict.resumes(result, checker.tolerance)
            and not any(checker.segment.save_moved.values()))


def _resave_clean(reference: verdict.Reference, restarts: _Restarts, result: RunResult,
                  segments: list[tuple[int, SegmentResult]], work: str) -> None:
    """A full resume through the program's own save/load that resumes: the same
    schedule once more, with the program's save() right after its first load()
    and a restart from that checkpoint (a trial: a save() that writes the
    position snapshotted with the last batch, which a load() does not set, wrote
    the epoch's start right after a resume). Where that departs, the components
    that differ right after the second load are lost on a second resume
    (``verdict.lost_after_resave``); where none does, nothing is said. Not where
    the program's save() changes state training reads (a validation pass that
    draws): the rerun saves twice where the uninterrupted run saved once, and
    departs for that alone."""
    k = result.resume_at[0]
    rerun = _saved_again(reference, restarts, result, segments, work, {k})
    if rerun is not None and rerun[0] is not None and rerun[0].first is not None:
        verdict.lost_after_resave(reference, result, [s for s in rerun[1] if s[0] == k][1:],
                                  rerun[0].first)


def _saved_again(reference: verdict.Reference, restarts: _Restarts, result: RunResult,
                 segments: list[tuple[int, SegmentResult]], work: str, points: set[int]
                 ) -> tuple[verdict.Comparison | None, list[tuple[int, SegmentResult]]] | None:
    """The run's schedule through the program's own save/load once more, with
    its save() right after the load at each of ``points`` and a restart from
    that checkpoint: compared with the reference (None: a segment failed), and
    the rerun's segments. None: there is no first half to restart from."""
    prefix = segments[0][1] if segments else None
    if prefix is None or not prefix.program_checkpoint:
        return None
    if any(seg.side_files.get("load") for _, seg in segments):
        # (trial 548: a load() that read the latest checkpoint of its own folder met, in
        # this rerun, the later save the schedule had written there: lost on resave, of a
        # correct program; which checkpoint such a load() reads is not the rerun's to say)
        return None
    rerun = restarts.chain(
        sorted([*result.resume_at, *points]), work, prefix, tag="resave",
        first_restore=Restore(path=prefix.program_checkpoint, source="program"))
    cmp = None if any(seg.error is not None for _, seg in rerun) else \
        verdict.compare_run(reference, result.resume_at[0], [], rerun, [])
    return cmp, rerun


def _in_processes(check: _Segments | Checker) -> str | None:
    """The check's ``resumecheck run`` with ``--isolation process`` (None: the
    target was handed over as an object, which fresh interpreters cannot import)."""
    s = check.settings
    if check.target.spec is None:
        return None
    return reproduce_command(
        "run", check.target.spec, steps=check.steps, seed=s.seed, threads=s.threads,
        isolation="process", resume_at=s.points, drop_setting=s.drop,
        tolerance=check.tolerance, timeout=s.timeout, noise_seeds=s.noise_seeds)


def _steps_of(segments: list[tuple[int, SegmentResult]],
              k: int) -> list[tuple[int, dict[str, str]]]:
    """A run's steps after step ``k``, each by its digests (what it consumed and
    computed: data, loss, gradients, parameters)."""
    return [(r.step, r.digests) for _, seg in segments for r in seg.records if r.step > k]


class _Judged(NamedTuple):
    """A resumed run, judged."""

    result: RunResult
    trajectory: list[Any]
    """Its per-step digests after its first resume point (ablations are compared with it)."""
    held: dict[str, list[str]]
    """What the program held outside its declared components at the end, when
    its last segment digested it (``SegmentSpec.digest_held``: the engine's
    own and the program's own full resume, in the report)."""
    held_after: dict[int, dict[str, list[str]]]
    """The same after the first step of each restart (the engine's own full
    resume, in the report: ``SegmentSpec.held_after``)."""


class Checker:
    """One target's reference, and resumed runs judged against it.

    Built complete: the constructor runs the uninterrupted reference (with
    captures at ``capture_at``, default the resume points) and, unless the
    settings say not to, the determinism rerun. ``report()`` is the whole
    check; ``check()`` one resumed run (the fuzzer calls it per schedule).
    ``reuse_prefix``: replay each own-checkpoint run's first half once per
    first resume point and reuse it (fuzzing: many schedules share a first
    point); only where the program has its own save/load.
    """

    def __init__(self, target: Target, settings: Settings, work: str, *,
                 capture_at: Sequence[int] | None = None, reuse_prefix: bool = False,
                 progress: ProgressTracker | None = None) -> None:
        settings = _elastic_tolerance(settings)
        heap.settle()  # (run, fuzz, the plugin) the steps reuse their memory as alone
        self.target = target
        self.settings = settings
        self.steps = settings.n
        self.resume_at = settings.points
        self.work = work
        self.progress = progress
        self._segments = runs = _Segments(target, settings, work, progress)
        self.tolerance, self.run_config = runs.tolerance, runs.run_config
        # Every run checkpoints at the resume points, as the run a resume is
        # compared with did (fuzzing: a reference for many schedules, which
        # no one set of saves models: none)
        runs.save_at = list(self.resume_at) if capture_at is None else []
        self.segment, again = runs.reference_runs(list(capture_at or self.resume_at),
                                                  probe_save=capture_at is not None)
        """The uninterrupted reference run."""
        runs.reference = self.segment
        if settings.isolation == "process":  # (in-process, no segment can take a hash seed)
            runs.restart_seed = restart_seed(self.segment)
        self.determinism = runs.determinism(self.segment, again)
        self.reuse_prefix = reuse_prefix and self.segment.has_own_checkpoint
        self.hash_calls = runs.hash_calls
        self.fields_as_built: dict[str, str] = {}  # (verdict.fields_as_built of each ablation)
        self._restarts = _Restarts(runs, self.segment, self.reuse_prefix)
        self.tensors = _ReferenceTensors(runs, self.segment)
        self.reference = verdict.Reference(self.segment, self.tolerance, self.tensors)
        self._confirmations = _Confirmations(self.reference, self.segment.captures,
                                             self._restarts)
        self.noise_seeds: list[int] = []
        """The seeds of the noise runs that ran (empty: none, or the seed is unknown)."""
        self.noise_unmoved: list[int] = []
        """The other seeds that ran, when each trained exactly as the reference."""
        self.noise_failed: list[tuple[int, str, int | None]] = []
        """The noise runs that failed: seed, error, the step it failed at."""
        self.deadline: float | None = None
        """Past this ``time.monotonic()`` every run stops (see ``limit``)."""

    def base_seed(self) -> int | None:
        """The seed the run uses, when it can be known: ``--seed``; else the run's
        settings; else the ``seed_key`` entry of the declared ``config`` state in
        the reference (its default, as built). None: unknown, and no noise runs
        (a guess could reproduce the reference, or name no setting at all)."""
        if self.settings.seed is not None:
            return self.settings.seed
        key = self.target.seed_key
        value = self.target.run_config.get(key)
        if value is None and self.segment.end_state:
            state = self.reference.file(self.segment.end_state)["components"].get(CONFIG)
            if isinstance(state, dict) and set(state) == {"value"}:
                state = state["value"]
            value = state.get(key) if isinstance(state, dict) else None
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    # -- the whole check -------------------------------------------------

    def report(self) -> Report:
        """Noise runs, then the full resume (the program's own save/load when it
        has them), the engine's own full resume when that is another run, and
        the ablations; each judged; the ablations judged again against the
        engine's full resume."""
        if self.settings.resume_nproc is not None:
            if self.segment.has_own_checkpoint:
                _noise_runs(self)
            return _report(self, [_elastic(self, self.resume_at)])
        runs = self._planned_runs(verdict.drop_sets(self.settings.drop, self.segment.names))
        self.check_disk(runs=len(runs), jobs=self.jobs)
        _noise_runs(self)
        done = self.map(lambda job: self._run_one(self.resume_at, job[0], job[1],
                                                  held=not job[0], resave=True), runs)
        fulls = 2 if self.segment.has_own_checkpoint else 1
        engine_full = done[fulls - 1]
        verdict.modes_set_over(engine_full.result, [d.result for d in done[fulls:]])
        verdict.judge_ablations(engine_full.result, engine_full.trajectory,
                                [(d.result, d.trajectory) for d in done[fulls:]], self.tolerance)
        verdict.positions_alike_in_ablations(engine_full.result, [d.result for d in done[fulls:]])
        settings_matter = _launch_settings_matter(self, engine_full)
        if fulls == 2:
            _notes_on_own_resume(self, done[0], engine_full, settings_matter)
            _note_alike(self, done[0], [(d.result, d.trajectory) for d in done[fulls:]],
                        engine_full.result)
            verdict.put_right_by_engine(done[0].result, engine_full.result,
                                        done[0].trajectory == engine_full.trajectory)
        return _report(self, [d.result for d in done], engine_full.held,
                       done[0].held if fulls == 2 else None,  # (the program's own resume)
                       engine_run=engine_full.result, restarted_after=engine_full.held_after,
                       own_after=done[0].held_after if fulls == 2 else None,
                       settings_matter=settings_matter)

    def _planned_runs(self, drop_sets: list[list[str]]) -> list[tuple[list[str], Source]]:
        """The resumed runs of the report, in its order (and the progress estimate;
        confirmation runs come on top)."""
        runs: list[tuple[list[str], Source]] = [([], "auto")]
        if self.segment.has_own_checkpoint:
            runs.append(([], "engine"))
        runs += [(dropped, "auto") for dropped in drop_sets[1:]]
        if self.progress is not None:
            self.progress.total = self.progress.done + self.steps * self.settings.noise_seeds + sum(
                self.steps if not d and self.segment.has_own_checkpoint
                else self.steps - self.resume_at[0] for d in drop_sets)
        return runs

    @property
    def jobs(self) -> int:
        return self.settings.workers

    def map(self, fn: Callable[[Any], Any], items: Iterable[Any]) -> list[Any]:
        """``fn`` over ``items`` in order, ``jobs`` at once: fresh interpreters from
        threads (``parallel_map``), in-process runs in forks (``forked_map``)."""
        if self.jobs > 1 and self.settings.isolation == "inprocess":
            return forked_map(fn, items, self.jobs)
        return parallel_map(fn, items, self.jobs, self._segments.cancel)

    def limit(self, deadline: float | None, budget: float | None = None) -> None:
        """Stop every run past ``deadline`` (a ``time.monotonic()``; None: no
        limit) with ``BudgetExhausted`` naming ``budget`` seconds (the fuzz budget)."""
        self.deadline = self._segments.deadline = deadline
        if budget is not None:
            self._segments.budget = budget

    def check_disk(self, runs: int, jobs: int) -> None:
        """Before the resumed runs: refuse when the disk cannot hold what they will
        write, and say so up front when it is large (see ``check_disk``)."""
        judged_here = self.settings.isolation == "inprocess" and self.settings.nproc is None
        check_disk(self.work, min(jobs, max(runs, 1)) * _per_run_disk(
            self.segment, self.tolerance, self.steps, self.resume_at, judged_here))

    # -- one resumed run -------------------------------------------------

    def check(self, schedule: Sequence[int], dropped: Sequence[str] = (),
              source: Source = "auto", resave: bool = False) -> RunResult:
        """One resumed run: restart at every point of ``schedule``, judged.

        The full resume goes through the program's own save/load when it has
        them; ablations use the engine's capture. The run's files are removed
        once it is judged, so a long fuzzing session uses bounded disk. With
        ``resume_nproc``, the elastic resume of ``schedule``; ``resave``: ``_run_one``'s."""
        if self.settings.resume_nproc is not None:
            return _elastic(self, list(schedule))
        judged = self._run_one(schedule, dropped, source, resave=resave)
        if judged.result.checkpoint == "program":
            _note_alike(self, judged, [])
        return judged.result

    def _run_one(self, schedule: Sequence[int], dropped: Sequence[str] = (),
                 source: Source = "auto", held: bool = False, resave: bool = False) -> _Judged:
        """``check``, and the run's trajectory after its first resume point (per-step
        digests, to compare ablations with); ``held``: what its program held outside
        the declared components at the end; ``resave``: ``_resave_clean``."""
        schedule, dropped = list(schedule), list(dropped)
        own = self.segment.has_own_checkpoint and not dropped and source == "auto"
        with self._segments.run_directory("run-") as work:
            segments = (self._restarts.program(schedule, work, held=held) if own
                        else self._restarts.engine(schedule, dropped, work, held=held))
            result = RunResult(dropped=dropped, resume_at=schedule, verdict="identical",
                               checkpoint="program" if own else "engine", reproduce=_reproduce(
                                   self.target, self.settings, schedule, dropped))
            cmp = verdict.judge(self.reference, result, segments)
            result.modes_set = [what for _, seg in segments
                                for said in seg.modes_set.values() for what in said]
            resaved = False
            if cmp is not None and result.diagnosis:
                resaved = self._confirmations.settle(result, segments, work, own, cmp.first)
            if own and resave and not resaved and _resaves(self, result, cmp):
                _resave_clean(self.reference, self._restarts, result, segments, work)
            verdict.conclude(self.reference, result, cmp, segments)
            if own and cmp is not None:  # (after conclude: the streams' lines say who left them)
                verdict.give_fixes(result, _advice(self.segment, segments), self.reference,
                                   segments)
            verdict.place_came_back(result)
            verdict.position_read_in_place(result)
            verdict.in_its_words(result, self.segment.boundaries)
            self.fields_as_built.update(verdict.fields_as_built(self.reference, result, segments))
            return _Judged(result, _trajectory(segments, schedule[0], cmp),
                           segments[-1][1].held,
                           {step: held for _, seg in segments
                            for step, held in seg.held_after.items()})


def _launch_settings_matter(checker: Checker, engine_full: _Judged) -> bool | None:
    """Whether the settings the run was launched with, which its restarts are
    built without, are what the engine's full resume lacks: where it departs,
    it runs again built with them. True: it then resumes; False: it departs
    step for step as before, so they change nothing of it; None: not asked
    (it resumed, there are none, a declared ``config`` carries them back, or
    it was stopped by the step timeout) or the answer is mixed. (A trial:
    told that the launch settings might be the cause, where they equalled
    the defaults.) Where they are, the engine's full resume's why says so."""
    result = engine_full.result
    launched = launched_with(checker.target, checker.run_config)
    if (not launched or verdict.resumes(result, checker.tolerance)
            or CONFIG in checker.segment.names
            or checker.settings.resume_nproc is not None
            or result.explanation.startswith(STOPPED)):  # (a hang would cost its bound again)
        return None
    matter = _with_launch_settings(checker, engine_full, own=False)
    if matter:  # (its why says so, as the WARNING does)
        verdict.note_engine_lacks_settings(result, launched)
    return matter


def _note_own_launch_settings(checker: Checker, own: _Judged, engine_full: _Judged) -> None:
    """``verdict.note_launch_settings`` on the program's own full resume, told
    by ``_own_settings_matter`` whether the settings change it."""
    verdict.note_launch_settings(own.result, engine_full.result,
                                 launched_with(checker.target, checker.run_config),
                                 CONFIG in checker.segment.names,
                                 _own_settings_matter(checker, own, engine_full))


def _own_settings_matter(checker: Checker, own: _Judged, engine_full: _Judged) -> bool | None:
    """Whether the launch settings, which the program's own restarts are built
    without, are what its own full resume lacks, where the report would offer
    them as the cause (``verdict.launch_settings_suspected``): it runs again,
    its restarts built with them. True: it then resumes; False: it departs
    step for step as before; None: not asked, or mixed. (A trial: a load()
    that rebuilt the program from its saved settings was told the restart
    keeps the defaults', where a deque that lost its maxlen was the cause.)"""
    result = own.result
    launched = launched_with(checker.target, checker.run_config)
    if not (verdict.launch_settings_suspected(result, engine_full.result, launched,
                                              CONFIG in checker.segment.names)
            or verdict.launch_settings_failed(result, launched)) \
            or result.explanation.startswith(STOPPED):  # (a hang would cost its bound again)
        return None
    return _with_launch_settings(checker, own, own=True)


def _with_launch_settings(checker: Checker, judged: _Judged, own: bool) -> bool | None:
    """``judged``, a full resume (the program's own save/load, or the engine's),
    run again with its restarts built with the launch settings. True: it then
    resumes; False: it departs step for step as before, and ends alike; None:
    mixed."""
    schedule = list(checker.resume_at)
    with checker._segments.run_directory("run-") as work:
        segments = (checker._restarts.program(schedule, work, config=checker.run_config) if own
                    else checker._restarts.engine(schedule, [], work, config=checker.run_config))
        again = RunResult(dropped=[], resume_at=schedule, verdict=IDENTICAL,
                          checkpoint="program" if own else "engine")
        cmp = verdict.judge(checker.reference, again, segments)
    if verdict.resumes(again, checker.tolerance):
        return True
    result = judged.result
    if (again.verdict, again.failure, _trajectory(segments, schedule[0], cmp)) == (
            result.verdict, result.failure, judged.trajectory):
        return False
    return None


def _settings_come_back(checker: Checker) -> bool:
    """Whether the engine's restarts are built with the run's settings: its
    declared ``config`` holds a settings mapping at the first resume point,
    which a restart is built from (``restore.build_settings``). The settings
    are then not what the engine's full resume lacks (a trial: its WARNING
    offered them as a cause beside a declared settings dict)."""
    captures = checker.reference.segment.captures
    k = checker.resume_at[0]
    if CONFIG not in checker.segment.names or k not in captures:
        return False
    capture = checker.reference.file(captures[k])
    return build_settings({}, Restore(path=captures[k]), capture) != {}


def _trajectory(segments: list[tuple[int, SegmentResult]], first: int,
                cmp: verdict.Comparison | None = None) -> list[Any]:
    """A resumed run's per-step digests after its first resume point ``first``,
    and, where no step departs (``cmp``), how its components that end otherwise
    end (a trial: two runs that ended otherwise alike by name, not by state,
    were said to be step for step one divergence)."""
    steps: list[Any] = [r.digests for _, seg in segments for r in seg.records if r.step > first]
    return steps + ([sorted(cmp.end_digests.items())] if cmp and cmp.end_digests else [])


def _notes_on_own_resume(checker: Checker, own: _Judged, engine_full: _Judged,
                         settings_matter: bool | None) -> None:
    """What the program's own full resume's why adds once every run is judged."""
    verdict.unjudge_when_incomplete(own.result, engine_full.result)
    if settings_matter is not False:
        _note_own_launch_settings(checker, own, engine_full)
    verdict.note_engine_resumes(own.result, engine_full.result)
    verdict.note_save_moves(own.result, checker.segment.save_moved)
    validated = checker.segment.boundaries.get("validates_after") or []
    moved = [k for k in checker.segment.boundaries.get("rate_moved_after") or []
             if k not in validated]  # (a validation that stepped it: said so, below)
    plateaus = [k for k in checker.segment.boundaries.get("plateau_moved_after") or []
                if k not in validated]  # (one stepped on a validation's metric: said so)
    for run in (own.result, engine_full.result):
        verdict.note_validation_not_run_again(run, validated)
        verdict.note_rate_moved_after_save(run, moved, plateaus)
    verdict.note_data_not_skipped(own.result, checker.segment.boundaries.get("data_not_skipped"))
    for run in (own.result, engine_full.result):
        verdict.note_data_not_resumable(run, checker.segment.boundaries.get("data_not_resumable"),
                                        checker.segment.boundaries.get("restored_by"))
        verdict.note_lengthless(run, checker.segment.boundaries.get("data_lengthless"),
                                checker.segment.boundaries.get("restored_by"))
    bounds = checker.segment.boundaries
    verdict.note_draws_before_restore(own.result, bounds.get("draws_before_restore") or [],
                                      bounds.get("restored_by"), bounds.get("steps_per_epoch"))
    verdict.note_order_before_restore(own.result, bounds.get("order_before_restore"),
                                      bounds.get("restored_by"), bounds.get("steps_per_epoch"))


def _noise_runs(checker: Checker) -> None:
    """Uninterrupted runs with other seeds: the reference's noise curves."""
    base = checker.base_seed()
    seeds = [base + i for i in range(1, checker.settings.noise_seeds + 1)] \
        if base is not None else []
    segments = checker._segments

    def noise_run(seed: int) -> SegmentResult:
        config = {**checker.run_config, checker.target.seed_key: seed}
        return segments.run(segments.spec(
            f"noise{seed}", config=config, start=0, stop=checker.steps, capture_end=False,
            trace_streams=False, hash_seed=REFERENCE_HASH_SEED,
            save_at=[]))  # (a band of losses, never compared step by step: no saves)

    noise = checker.map(noise_run, seeds)
    ran = [(s, seg) for s, seg in zip(seeds, noise) if seg.error is None]
    checker.noise_seeds = [s for s, _ in ran]
    # (trial 463: EarlyStopping ended the other seeds' runs early; dropped unsaid)
    checker.noise_failed = [(s, seg.error or "", seg.error_step) for s, seg in zip(seeds, noise)
                            if seg.error is not None]
    checker.reference.noise = [[r.loss for r in seg.records] for _, seg in ran]
    ref_digests = [r.digests for r in checker.segment.records]
    if ran and all([r.digests for r in seg.records] == ref_digests for _, seg in ran):
        # every other seed trained exactly as the reference: the setting
        # changes nothing the program draws, and says nothing of noise
        checker.noise_unmoved = checker.noise_seeds
        checker.noise_seeds, checker.reference.noise = [], []


def _report(checker: Checker, runs: list[RunResult],
            restarted_held: dict[str, list[str]] | None = None,
            own_held: dict[str, list[str]] | None = None,
            engine_run: RunResult | None = None,
            restarted_after: dict[int, dict[str, list[str]]] | None = None,
            own_after: dict[int, dict[str, list[str]]] | None = None,
            settings_matter: bool | None = None) -> Report:
    """The report of ``checker``'s reference and ``runs``; ``restarted_held``:
    what the engine's own full resume (``engine_run``) held outside the
    declared components at its end (what it ends with as the reference did
    is not named as lost, unless it held it otherwise after its first step:
    ``restarted_after``); ``own_held``: the same of the program's own full
    resume (what is named says how that resume ends with it, and, where it
    departed, how it held it after its first step, ``own_after``:
    ``verdict.own_resume_ends``); ``settings_matter``: see
    ``_launch_settings_matter``."""
    s, ref = checker.settings, checker.reference
    after = _held_after_restarts(engine_run, restarted_after or {}, checker.segment)
    back, on_the_way = brought_back(checker.segment.held, restarted_held or {},
                                    checker.segment.held_after, after)
    back |= _set_back_with_its_component(checker, restarted_after)
    back |= _grads_restored(checker, engine_run)
    back |= _alike_until_it_departed(checker, engine_run, after)
    named = _named(checker, back, on_the_way, runs)
    unsure = _no_evidence_of_held(engine_run)
    if unsure is not None:
        named = {path: not_known_if_held(text, unsure) for path, text in named.items()}
    in_process = s.isolation == "inprocess" and (s.nproc or 1) == 1
    seg = checker.segment
    undeclared = merge_items(verdict.own_resume_ends(
        named, seg.held, own_held, runs[0] if own_held is not None else None, seg.held_after,
        own_after, seg.boundaries.get("run_before_restored_look") or (), seg.held_at_build))
    undeclared = _without_not_state(undeclared + _module_lines(checker), checker.target)
    if own_held is not None:
        verdict.note_lost_uncompared(runs[0], undeclared)
    verdict.note_uncompared_leads(runs, undeclared)
    verdict.note_ablations(runs, launched_with(checker.target, checker.run_config),
                           checker.run_config if checker.target.restart_config == "run" else {})
    for run in runs:  # (and what was said of them since they were judged)
        verdict.in_its_words(run, checker.segment.boundaries)
        verdict.note_the_loop(run, checker.segment.boundaries)
    undeclared = verdict.reworded_lines(undeclared, checker.segment.boundaries)
    return Report(
        set_order=hash_order_notice(checker) if in_process else None,
        drawn_at_import=list(checker.target.drawn_at_import),
        build_settings=list(checker.segment.build_settings),
        not_checked=_not_checked(checker, runs),
        target=checker.target.spec or checker.target.name, steps=checker.steps,
        resume_at=list(checker.resume_at), seed=s.seed, isolation=s.isolation,
        launched_with=launched_with(checker.target, checker.run_config),
        launch_settings_matter=(False if settings_matter is None and _settings_come_back(checker)
                                else settings_matter),
        tolerance=checker.tolerance.to_json(),
        environment=fingerprint(s.threads), runs=runs,
        noise=_noise_summary(checker),
        determinism=checker.determinism, reference_loss=ref.loss, seed_losses=ref.noise,
        nproc=s.nproc, untraced=verdict.note_untraced(runs, ref.segment.records,
                                                             ref.segment.model_unhooked),
        undeclared=undeclared,
    )


def _noise_summary(checker: Checker) -> dict[str, Any]:
    """The report's ``noise`` entry (``verdict.noise_summary``), and who seeds
    the build where a framework target's adapter does (``seeded_by``)."""
    noise = verdict.noise_summary(checker.reference, checker.resume_at[0], checker.noise_seeds,
                                  checker.base_seed(), checker.target.seed_key,
                                  unmoved=checker.noise_unmoved,
                                  asked=checker.settings.noise_seeds, failed=checker.noise_failed)
    seeded_by = checker.segment.boundaries.get("seeded_by")
    return {**noise, "seeded_by": seeded_by} if seeded_by else noise


def _not_checked(checker: Checker, runs: list[RunResult]) -> list[str]:
    """What the resume points tried cannot show (``Report.not_checked``)."""
    s, points = checker.settings, checker.resume_at
    alone = {r.dropped[0] for r in runs if len(r.dropped) == 1}  # (their rows say it)
    # (trial 182: "a checkpoint that loses it resumes alike here" of a stream whose load
    # made the full resume depart: that row shows what this resume point does)
    departed = {f.component for r in runs if not r.dropped and r.verdict == DIVERGED
                for f in r.diagnosis}
    alone |= departed
    found = [verdict.epochs_unsaid(checker.reference),
             verdict.epoch_ends_untried(checker.reference, points, checker.steps),
             verdict.mid_epoch_untried(checker.reference, points, checker.steps),
             verdict.later_epoch_untried(checker.reference, points, checker.steps),
             verdict.mid_cycle_untried(checker.reference, points),
             # (trial 190: "a checkpoint that loses them resumes alike here" of the
             # fields of a position the full resume departed on, blamed above)
             *(line for name, line in _fields_as_built(checker, runs).items()
               if name not in departed),
             *verdict.as_built_untried(checker.reference, points, alone,
                                       full_failed=bool(runs) and runs[0].verdict == FAILED),
             *verdict.alike_components(checker.reference, points),
             verdict.next_epoch_beyond(checker.reference, points, runs),
             checker.segment.boundaries.get("after_last_step"),
             checker.segment.boundaries.get("between_steps")]
    if (s.nproc or 1) > 1 and s.resume_nproc is None:
        found.append(verdict.alike_on_ranks(checker.reference, points))
    return [what for what in found if what]


def _fields_as_built(checker: Checker, runs: list[RunResult]) -> dict[str, str]:
    """``Checker.fields_as_built`` of the ablations still diverged once judged
    (trial 500: "other fields ... differ there and made it diverge" of a row
    judged inconclusive after: its trajectory was the full resume's)."""
    diverged = {r.dropped[0] for r in runs if len(r.dropped) == 1 and r.verdict == DIVERGED}
    return {name: line for name, line in checker.fields_as_built.items() if name in diverged}


def _declared_as_built(checker: Checker, runs: list[RunResult]) -> dict[str, str]:
    """Component -> the line on its fields as built at every resume point: its
    ablation's (``fields_as_built``), else the run's build's (``as_built_untried``:
    a trial's `--drop none` named no `batch` of its position beside its loop's
    `batch_in_epoch`)."""
    lines = _fields_as_built(checker, runs)
    for line in verdict.as_built_untried(checker.reference, checker.resume_at, set()):
        if (named := re.match(r"of `([^`]+)`, ", line)) is not None:
            lines.setdefault(named.group(1), line)
    return lines


def _named(checker: Checker, back: set[str], on_the_way: dict[str, int],
           runs: list[RunResult]) -> dict[str, str]:
    """What the reference held outside the declared components that is named,
    in words: not what a restart brings back (``back``), unless it brings it
    back only because the resume point found it as built; each line says why
    it is named at this resume point where a restart ends with it alike (a
    trial: a line that came and went with the resume point, nothing saying why)."""
    as_built = _as_built_at_resume(checker) & back
    # (a trial read "after step 12" as after the restore at 12 in one line and after
    # the first resumed step in the next: which one is said)
    # (trial 297 read "from after step 11 on" of a value lost at the restore at 10: the
    # step after a restore is where a restart's state is first looked at)
    when = {path: (f"right after its restore at step {step}" if step in checker.resume_at
                   else f"after step {step} (the first after the restore at {step - 1}, where "
                   "it is first looked at)" if step - 1 in checker.resume_at
                   else f"after step {step}") for path, step in on_the_way.items()}
    declared = _declared_as_built(checker, runs) if as_built else {}
    at = verdict.steps_text(checker.resume_at)
    return {path: (set_back_unseen(text, alike_named(path, declared))
                   if path in as_built else text)
            # (trial 254 read "held it otherwise after step 8" as one step: held so from
            # there on, until a later step set it alike)
            + (f"; {RESTART_HELD_OTHERWISE} from {when[path]} on, {SET_ALIKE_LATER}"
               if path in on_the_way else "")
            + (f"; {_as_built_text(checker, path).format(at=at)}" if path in as_built else "")
            for path, text in checker.segment.undeclared.items()
            if path not in back or path in as_built}


def _as_built_text(checker: Checker, path: str) -> str:
    """Why a line found as built at every resume point is named: of state the
    run changed and held as built again at its end, that it cycles or is set
    back (trial 866)."""
    built = checker.segment.held_at_build.get(path)
    changed = any(after.get(path) not in (None, built)
                  for after in checker.segment.held_after.values())
    return (AS_BUILT_CYCLING if changed and checker.segment.held.get(path) == built
            else AS_BUILT_AT_RESUME)


def _as_built_at_resume(checker: Checker) -> set[str]:
    """What the reference held at every resume point as it held it right after
    its build: a restart, whatever it restores, holds it alike there, so its
    ending alike shows nothing of whether the checkpoint keeps it (trial 136's
    epoch counter left out of a stream's state_dict(), in the first epoch at
    the resume point: not named, and the resume departed from a later one)."""
    built, after = checker.segment.held_at_build, checker.segment.held_after
    return {path for path, digests in built.items()
            if all(after.get(k, {}).get(path) == digests for k in checker.resume_at)}


def _held_after_restarts(engine_run: RunResult | None,
                         after: dict[int, dict[str, list[str]]], reference: SegmentResult
                         ) -> dict[int, dict[str, list[str]]]:
    """What the engine's own full resume held after each step looked at, less
    what it held right after a restore where that says nothing of lost state:
    after a restore it did not depart from, and, after the one it departed
    from, a random generator it held as the uninterrupted run (``reference``)
    did again after the next step: the program seeded it again
    itself (trial 202: a loader's generator seeded again as the restart made
    its iterator was said to be the state the checkpoint may lose). A number
    alike again is no such evidence: a patience counter lost, read, and reset
    as the uninterrupted run's was."""
    if engine_run is None:
        return dict(after)
    if engine_run.verdict in (IDENTICAL, CLOSE) or verdict.steps_match(engine_run):
        # right after a restore, what the program sets again from declared state
        # as it steps (a sampler's epoch) differs: evidence only where the
        # restart departed in a step, and something it does not declare may be
        # the cause (a trial: a collator's generator, seeded again for every
        # batch, was named where only a callback's end state differed)
        kept = None
    elif engine_run.first_divergent_step is not None:
        # only right after the last restore before it departed: from the others
        # the run went on alike past its next restart, its steps set it again (a
        # trial: a sampler's epoch, made again with the iterator, was named from
        # the first of two restarts, where the run departed after the second)
        kept = max((k for k in engine_run.resume_at if k < engine_run.first_divergent_step),
                   default=None)
    else:
        return dict(after)
    kept_after = {step: held for step, held in after.items()
                  if step not in engine_run.resume_at or step == kept}
    early = reference.boundaries.get("run_before_restored_look") or ()
    generators = generator_paths(reference.undeclared)
    if kept is not None and kept in kept_after and early:
        # (trial 400: a Trainer's collator has run on the first resumed batch when
        # the state right after its restore is looked at: its per-batch scratch was
        # said to be held otherwise from there. Taken as the uninterrupted run's,
        # but for a generator, which a restart that lost it holds otherwise anyway)
        there, looked = reference.held_after.get(kept, {}), kept_after[kept]

        def looked_early(path: str) -> bool:  # (but not one steady across the first step)
            return (path not in generators and under_roots(path, early)
                    and not verdict.steady_across(path, kept, reference.held_after, after))

        # (trial 400 again: a scratch list the restart had not made yet at that look)
        kept_after[kept] = {**{p: d for p, d in looked.items() if not looked_early(p)},
                            **{p: d for p, d in there.items() if looked_early(p)}}
    if kept is not None and kept in kept_after and kept + 1 in after:
        held = reference.held_after
        again = {path for path, digests in after[kept + 1].items()
                 if path in generators and digests == held.get(kept + 1, {}).get(path)}
        there = held.get(kept, {})
        kept_after[kept] = {path: there.get(path, digests) if path in again else digests
                            for path, digests in kept_after[kept].items()}
    return kept_after


def _alike_until_it_departed(checker: Checker, engine_run: RunResult | None,
                             after: dict[int, dict[str, list[str]]]) -> set[str]:
    """Where the engine's own full resume departed in a step, how it ends says
    nothing of what the declared state brings back: what it held as the
    uninterrupted run did right after its restore, and after every step
    before it departed, is brought back (a trial: a field its component's
    load_state_dict() sets from the declared state was named "not set back",
    from the end of a restart that had departed, by a buggy state_dict())."""
    if engine_run is None or engine_run.verdict != DIVERGED or verdict.steps_match(engine_run) \
            or engine_run.first_divergent_step is None:
        return set()
    ref_after = checker.segment.held_after
    steps = [s for s in after if s < engine_run.first_divergent_step and s in ref_after]
    # (trial 636: what a framework runs on the first resumed batch before the look
    # right after its restore, a Trainer's collator, was looked at after that batch's
    # draw: its generator, alike there, had drawn for another batch; no evidence)
    early = tuple(checker.segment.boundaries.get("run_before_restored_look") or ())
    restores = set(engine_run.resume_at)

    def seen(path: str) -> list[int]:
        late = early and path.split(".")[0] in early
        return [s for s in steps if not (late and s in restores)]

    # (one it held in neither there is made later, by steps that then differ; trial 838: a
    # queue's pointer, as built at the first restore, alike there, and not looked at after
    # the second, where the uninterrupted run had moved it: a look that finds the
    # uninterrupted run holding it as built shows nothing brought back)
    built = checker.segment.held_at_build
    return {path for path in checker.segment.held
            if (looked := seen(path)) and all(after[s].get(path) == ref_after[s].get(path)
                                              for s in looked)
            and (path not in built or any(ref_after[s].get(path) != built[path]
                                          for s in looked))}


def _without_not_state(undeclared: list[str], target: Target) -> list[str]:
    """``undeclared`` less what ``Target.not_state`` names, attributes said
    alike as one line (``merge_alike``); a path it names that no line is of
    is warned of (``NotStateUnmatchedWarning``)."""
    unmatched = [p for p in target.not_state
                 if not any(_not_state(u, [p]) for u in undeclared)]
    if unmatched:
        paths = [uncompared_path(u) for u in undeclared]
        # (trial 172: `state.tokens_sen` was told no path it was close to)
        like = list(dict.fromkeys(
            [path for path in paths if any(p in path for p in unmatched)]
            + [c for p in unmatched for c in difflib.get_close_matches(p, paths, n=1)]))
        warnings.warn(NotStateUnmatchedWarning(target.spec or target.name, unmatched, like),
                      stacklevel=2)
    return merge_alike([u for u in undeclared if not _not_state(u, target.not_state)])


def _not_state(line: str, paths: Sequence[str]) -> bool:
    """Whether a `not compared` line is of what ``Target.not_state`` names."""
    path = uncompared_path(line)
    return any(path == p or path.startswith((f"{p}.", f"{p}[")) for p in paths)


def _grads_restored(checker: Checker, engine_run: RunResult | None) -> set[str]:
    """Gradients the reference carried across a resume point into the
    optimizer's step (``grad_carry``) where the engine's own full resume,
    which restores the declared components only, resumes all the same: a
    declared component holds them (one that returns and sets them)."""
    if engine_run is None or engine_run.verdict not in (IDENTICAL, CLOSE):
        return set()
    return {path for path, text in checker.segment.undeclared.items() if GRADS_SUMMED in text}


def _set_back_with_its_component(checker: Checker,
                                 restarted_after: dict[int, dict[str, list[str]]] | None
                                 ) -> set[str]:
    """What a declared component keeps beyond its ``state_dict()`` (its fields,
    ``data_cursor.epoch``) that the engine's restore of the components set as
    the uninterrupted run held it at the resume point, or that the restart's
    first step set so: its state_dict() and load_state_dict() carry it, or the
    component makes it again from its declared state (an epoch's order, from
    the epoch), so it is held, however that resume went on (one that departs
    ends with every field otherwise)."""
    names = set(checker.segment.names)
    after = restarted_after or {}

    def alike(path: str, step: int) -> bool:
        there = checker.segment.held_after.get(step, {})
        return path in there and step in after and after[step].get(path) == there[path]

    fields = {path for step in checker.resume_at for path in checker.segment.held_after.get(step, {})
              if path.split(".")[0] in names}
    # (at every restart of the schedule: one lost field may happen to be right at one of them)
    return {path for path in fields
            if all(alike(path, k) or alike(path, k + 1) for k in checker.resume_at)}


def launched_with(target: Target, run_config: dict[str, Any]) -> dict[str, Any]:
    """The run's launch settings where a restart is built from the program's
    defaults instead (``Report.launched_with``)."""
    return {} if target.restart_config == "run" else dict(run_config)


def save_moves(checker: Checker) -> tuple[int, list[str]]:
    """What the program's own save() changes of the state training reads, and
    where it was asked: a check that compares many schedules with one
    reference (``capture_at``: fuzzing) asks its reference once it is done
    (``SegmentSpec.save_after_end``); empty: nothing, or no save()."""
    return checker.steps, checker.segment.save_moved.get(checker.steps, [])


def _no_evidence_of_held(engine_run: RunResult | None) -> str | None:
    """Why nothing shows what the declared state brings back outside the
    declared components (None: the engine's own full resume ran to its end,
    and its end shows it; one that departed, too: the WARNING then points at
    what is not compared)."""
    if engine_run is None:
        return "this check makes no restart of every declared component"
    if engine_run.verdict == FAILED:
        return "the engine's own full resume failed"
    return None


def _elastic(checker: Checker, schedule: list[int]) -> RunResult:
    """The full resume through the program's own checkpoint at each point of
    ``schedule``, every restart at ``resume_nproc`` ranks; judged within the
    tolerance (``elastic``)."""
    s = checker.settings
    n, m = s.nproc or 1, s.resume_nproc or 1
    result = RunResult(dropped=[], resume_at=list(schedule), verdict=INCONCLUSIVE,
                       checkpoint="program", nproc=m,
                       reproduce=_reproduce(checker.target, s, list(schedule), []))
    if not checker.segment.has_own_checkpoint:
        result.unmapped = unmapped_state(checker.segment.names, n, m)
        result.explanation = (
            "the program has no save()/load() of its own: the engine's captures hold "
            f"each rank's state apart and cannot be resharded for {m} rank(s), so "
            "there is no elastic resume to judge")
        return result
    with checker._segments.run_directory("elastic-") as work:
        segments = checker._restarts.program(list(schedule), work, ranks=m)
        judge_elastic(checker.segment, result, segments, checker.tolerance, n, m)
    result.explanation += elastic_settings_clause(
        launched_with(checker.target, checker.run_config), result, checker.segment.names)
    return result


def elastic_settings_clause(launched: dict[str, Any], result: RunResult,
                            declared: Sequence[str]) -> str:
    """Of an elastic resume that does not continue alike, where its restarts are
    built from the factory's defaults and not the run's settings (``launched``,
    no ``config`` component to carry them back): say so (a trial: a restart
    built without ``dropout=0.0`` read as unmapped random state). '' otherwise."""
    if not launched or result.verdict in (IDENTICAL, CLOSE) or CONFIG in declared:
        return ""
    return (f"; the restarts are built from your factory's defaults, not the settings the run "
            f"was launched with ({settings_text(launched)}): a restart without them may train "
            "another program; if your launcher passes them again, say so, "
            "Target(restart_config=\"run\"), or declare a `config` component that holds them")


def _elastic_tolerance(settings: Settings) -> Settings:
    """An elastic resume is judged within a tolerance: across world sizes the
    sync sums in another order, never bit for bit (bitwise becomes torch's defaults)."""
    if settings.resume_nproc is not None and (
            settings.tolerance is None or settings.tolerance.bitwise_only):
        return replace(settings, tolerance=Tolerance.close())
    return settings


def _advice(first: SegmentResult, segments: verdict.Segments) -> dict[str, str]:
    """What makes the checkpoint hold each component, as the build said and
    as each restore found it (trial 516: a checkpoint folder without the
    Trainer's ``rng_state.pth``, found only by the restart)."""
    advice = dict(first.advice)
    for _, seg in segments[1:]:
        advice.update(seg.advice)
    return advice


def _note_alike(checker: Checker, own: _Judged, ablations: list[tuple[RunResult, list[Any]]],
                engine_full: RunResult | None = None) -> None:
    """``verdict.note_dropped_alike`` of the program's own resume, with the
    ablations that ran and, for a finding a rerun put right to no change
    that none of them dropped, one that drops it alone (trial 549: under
    --drop none, fuzz, the plugin and the reproduce command lost the words
    that name the likely cause, which only that ablation shows).
    ``engine_full``: the engine's own full resume where it ran already (else
    it runs here, before any such ablation)."""
    result = own.result
    have = {r.dropped[0] for r, _ in ablations if len(r.dropped) == 1}
    unsettled = list(dict.fromkeys(f.component for f in result.diagnosis
                                   if f.status == NOT_CAUSE and f.component not in have))
    extra = []
    if unsettled and result.verdict == DIVERGED:
        full = engine_full or _engine_alone(checker, result, [])[0]
        if full.verdict not in (IDENTICAL, CLOSE):
            # (trial 577: where the engine's own full resume departs too, an ablation
            # departs however much it matters: "left out alone ... departs as your resume
            # does" blamed a stream Lightning left one draw off, beside a lost tensor no
            # component held; trial 582: fuzz said "put right alone, the run departs no
            # later" of a callback whose load lost it, where run says not judged)
            verdict.unjudge_when_incomplete(result, full)
            return
        extra = [_engine_alone(checker, result, [name]) for name in unsettled]
    verdict.note_dropped_alike(result, own.trajectory, [*ablations, *extra])


def _engine_alone(checker: Checker, result: RunResult,
                  dropped: list[str]) -> tuple[RunResult, list[Any]]:
    """The engine's resume of ``result``'s schedule without ``dropped``, judged,
    and its trajectory after the first resume point."""
    with checker._segments.run_directory("run-") as work:
        segments = checker._restarts.engine(result.resume_at, dropped, work)
        alone = RunResult(dropped=dropped, resume_at=list(result.resume_at),
                          verdict=IDENTICAL, checkpoint="engine")
        cmp = verdict.judge(checker.reference, alone, segments)
        return alone, _trajectory(segments, result.resume_at[0], cmp)


def _reproduce(target: Target, s: Settings, schedule: list[int], dropped: list[str]) -> str:
    """The command that runs this one schedule again, as the CLI would."""
    return reproduce_command(
        "run", target.spec, steps=s.n, seed=s.seed, threads=s.threads, isolation=s.isolation,
        resume_at=schedule, drop=dropped, tolerance=s.tolerance or Tolerance.bitwise(),
        timeout=s.timeout, nproc=s.nproc, resume_nproc=s.resume_nproc,
        noise_seeds=s.noise_seeds,
    )


def check_disk(work: str, ahead: int) -> None:
    """Refuse a check whose next ``ahead`` bytes the disk under ``work`` cannot
    hold (``DiskSpaceShortage``); warn when it will use more than 1 GiB."""
    used = _tree_size(work)
    free = shutil.disk_usage(work).free
    if ahead > free:
        raise DiskSpaceShortage(work, used + ahead, free, written=used)
    if used + ahead > _LARGE_DISK_USE:
        warnings.warn(DiskUseWarning(work, used + ahead), stacklevel=3)


def _per_run_disk(ref: SegmentResult, tolerance: Tolerance, steps: int,
                  resume_at: list[int], judged_here: bool) -> int:
    """What one resumed run writes, estimated from the reference's own files:
    restored state and a capture per restart, the end state, the program's
    own checkpoint, and the tensors of differing steps (``judged_here``: a run
    judged in the process that runs it, which keeps up to ``KEPT_IN_MEMORY``
    bytes of them in memory)."""
    capture = max((_size(p) for p in [*ref.captures.values(), ref.end_state] if p), default=0)
    kept_files = list(Path(ref.tensor_dir).glob("step_*.pt")) if ref.tensor_dir else []
    in_memory = [sum(t.numel() * t.element_size() for t in v.values())
                 for k, v in ref.kept.items() if k.startswith("step_")]
    step_file = max([*(_size(str(p)) for p in kept_files), *in_memory], default=capture)
    kept = _TENSOR_STEPS if tolerance.bitwise_only else steps - resume_at[0]
    step_files = step_file * kept
    if judged_here:
        step_files = max(0, step_files - KEPT_IN_MEMORY)
    return capture * (2 * len(resume_at) + 2) + step_files


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _tree_size(root: str) -> int:
    return sum(_size(os.path.join(folder, name))
               for folder, _, names in os.walk(root) for name in names)
