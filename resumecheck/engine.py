"""The resume-equivalence engine: reference, resumed runs, verdicts.

``verify()`` runs the program N steps uninterrupted (the reference, capturing
every component's state at each resume point), a few more references with
other seeds (the seed-to-seed noise band), then one resumed run per set of
dropped components: restart at each resume point, restore everything but the
dropped components, continue to N. Each resumed run is compared step by step
with the reference and gets a verdict.
"""

from __future__ import annotations

import math
import os
import shutil
import tempfile
import threading
import warnings
from collections import deque
from collections.abc import Callable, Collection, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import torch

from resumecheck import forkserver
from resumecheck.baseline import nondeterminism_cause
from resumecheck.compare import Difference, Tolerance, compare_values, digest, flatten_state
from resumecheck.components import CONFIG, SAMPLER_EPOCH, preserved_global_streams, validate_drop
from resumecheck.environment import fingerprint
from resumecheck.errors import (
    BudgetExhausted, DiskSpaceShortage, DiskUseWarning, InvalidArgument,
    NondeterministicBaseline, ReferenceFailed,
)
from resumecheck.evidence import annotate
from resumecheck.program import (
    BUILTIN_SPEC, Target, declared_names, load_target, next_epoch_start,
)
from resumecheck.progress import ProgressCallback, ProgressTracker, run_label
from resumecheck.report import (
    AFTER_DIVERGENCE, CLOSE, CONFIRMED, DIVERGED, FAILED, IDENTICAL, INCONCLUSIVE, LATENT,
    NOT_CAUSE, Finding, Report, RunResult,
)
from resumecheck.reproduce import reproduce_command
from resumecheck.runner import (
    PHASE_TIMEOUT, Restore, SegmentResult, SegmentSpec, environment_failure, load_checkpoint,
    check_timeout, run_segment,
)
from resumecheck.state_diff import describe_difference
from resumecheck.trace import (
    StepRecord, differing_quantities, first_difference, load_step_tensors,
)
from resumecheck.trajectory import Trajectory

__all__ = [
    "MAX_NOISE_SEEDS", "MIN_STEP_TIMEOUT", "Checker", "ReferenceFailed", "check_timeout",
    "resume_points", "verify",
]

MAX_NOISE_SEEDS = 100
"""Upper limit of ``noise_seeds``: each seed is one more uninterrupted run."""

MIN_STEP_TIMEOUT = 60.0
"""The automatic step timeout is max(this, 20 x the reference's slowest step)."""

# In-process restarts first move every global stream to a value no program
# would pick, so a missing RNG restore cannot hide.
_RESEED_BASE = 0x5EED_F00D

# Full tensors of a step go to disk only where a comparison reads them: the
# reference keeps the few steps after each resume point (more are replayed on
# demand) and, judged bit for bit, a run keeps its first few differing steps:
# the first divergence is decided there; later steps differ in digests anyway.
_TENSOR_STEPS = 3

# A check that will write more than this says so up front.
_LARGE_DISK_USE = 1 << 30


DropSpec = str | Sequence[str | Collection[str]]


def verify(
    target: Target | str | None = None,
    *,
    steps: int | None = None,
    resume_at: Sequence[int] | int | None = None,
    drop: DropSpec = "all",
    isolation: Literal["inprocess", "process"] = "inprocess",
    tolerance: Tolerance | None = None,
    seed: int | None = None,
    noise_seeds: int = 2,
    threads: int = 1,
    check_determinism: bool = True,
    timeout: float | None = None,
    progress: ProgressCallback | None = None,
) -> Report:
    """Check that the target resumes from a checkpoint like it never stopped.

    ``drop``: ``"all"`` (the full resume plus one run per component),
    ``"none"`` (the full resume only), or a list whose items are a component
    name or a collection of names dropped together (one run each, after the
    full resume).

    ``seed``: None (the default) runs the program with its own settings,
    its default seed included; an int sets ``target.seed_key`` for the run
    (the reference and the first half of each resumed run; a restart is
    still built from the program's defaults and gets the seed back only
    through its checkpoint). The noise runs vary the seed from the one the
    run uses, when it can be known (see ``Checker.base_seed``).

    Every report holds the engine's own full resume (every declared
    component restored by the engine) beside the program's own save/load
    one; when the engine's is not equivalent, the declared components do
    not capture the program's state and the ablations are ``inconclusive``.

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
    ``progress`` receives a ``ProgressEvent`` as each step and run completes.
    """
    tgt = target if isinstance(target, Target) else load_target(target)
    n = tgt.steps if steps is None else steps
    ks = resume_points(resume_at if resume_at is not None else tgt.resume_at, n)
    if isolation not in ("inprocess", "process"):
        raise InvalidArgument("isolation", isolation, "expected 'inprocess' or 'process'")
    if not isinstance(noise_seeds, int) or not 0 <= noise_seeds <= MAX_NOISE_SEEDS:
        raise InvalidArgument("noise_seeds", noise_seeds,
                              f"expected an int in 0..{MAX_NOISE_SEEDS} (the upper limit)")
    if not isinstance(threads, int) or threads < 1:
        raise InvalidArgument("threads", threads, "expected an int >= 1")
    check_timeout(timeout)
    tol = tolerance or Tolerance.bitwise()
    if isolation == "process":  # the reference, the determinism rerun, the restarts
        forkserver.prestart(["1", *[None] * _process_jobs(threads)])
    check = Checker(tgt, n, ks, isolation, tol, seed, threads,
                   check_determinism=check_determinism, timeout=timeout,
                   progress=ProgressTracker(progress, "run", total=n * (1 + check_determinism))
                   if progress else None)
    if not (isinstance(drop, str) and drop in ("all", "none")):
        _drop_sets(drop, declared_names(tgt, check.run_config))  # a typo fails before any run
    with tempfile.TemporaryDirectory(prefix="resumecheck-") as work, preserved_global_streams():
        check.work = work
        try:
            return check.run(drop, noise_seeds)
        except Exception as exc:
            failure = environment_failure(exc, work)
            if failure is None or failure is exc:
                raise
            raise failure from exc


def _process_jobs(threads: int) -> int:
    """Fresh interpreters run side by side, one per ``threads`` cores."""
    return max(1, (os.cpu_count() or 1) // threads)


def resume_points(value: Sequence[int] | int, n: int) -> list[int]:
    if not isinstance(n, int) or isinstance(n, bool) or n < 2:
        raise InvalidArgument("steps", n, "expected an int >= 2 (a resume needs a step before and after)")
    points = [value] if isinstance(value, int) else list(value)
    if not points:
        points = [n // 2]
    for k in points:
        if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= n - 1:
            raise InvalidArgument(
                "resume_at", k, f"each resume point must be an int in 1..{n - 1} (steps={n})"
            )
    if len(set(points)) != len(points):
        raise InvalidArgument("resume_at", points, "resume points must be distinct")
    return sorted(points)


@dataclass
class Checker:
    target: Target
    steps: int
    resume_at: list[int]
    isolation: Literal["inprocess", "process"]
    tolerance: Tolerance
    seed: int | None
    """The seed asked for (None: the program's own settings, unchanged)."""
    threads: int
    work: str = ""
    reference: SegmentResult | None = None
    noise: list[list[float]] = field(default_factory=list)
    capture_at: list[int] | None = None
    """Steps at which the reference captures state (default: the resume points)."""
    reuse_prefix: bool = False
    """Replay each own-checkpoint run's first half once per first resume point
    and reuse it (fuzzing: many schedules share a first point)."""
    check_determinism: bool = True
    determinism: dict[str, Any] = field(default_factory=lambda: {"checked": False})
    timeout: float | None = None
    """Seconds per step (None: automatic, see verify(); 0: no bound)."""
    deadline: float | None = None
    """A time.monotonic() past which every run stops (BudgetExhausted): the fuzz budget."""
    budget: float | None = None
    """The budget behind ``deadline``, in seconds (for BudgetExhausted's message)."""
    cancel: threading.Event = field(default_factory=threading.Event)
    """Set when the check is abandoned: process-isolated runs in flight kill their interpreters."""
    _loaded: dict[str, dict[str, Any]] = field(default_factory=dict)
    progress: ProgressTracker | None = None
    _replay_lock: threading.Lock = field(default_factory=threading.Lock)
    _prefixes: dict[int, SegmentResult] = field(default_factory=dict)
    noise_seeds: list[int] = field(default_factory=list)
    """The seeds of the noise runs that ran (empty: none, or the seed is unknown)."""

    def _reference_file(self, path: str) -> dict[str, Any]:
        """A capture of the reference, loaded once: those files never change."""
        if path not in self._loaded:
            self._loaded[path] = load_checkpoint(path)
        return self._loaded[path]

    # -- running ---------------------------------------------------------

    @property
    def run_config(self) -> dict[str, Any]:
        return self.target.launch_config(self.seed)

    def base_seed(self) -> int | None:
        """The seed the run uses, when it can be known: ``--seed``; else the
        run's settings; else the ``seed_key`` entry of the program's declared
        ``config`` state in the reference (its default, as built). None: the
        program's seed cannot be known, and the noise runs are not made
        (setting ``seed_key`` to a guess could reproduce the reference itself,
        or name a setting the program does not have)."""
        if self.seed is not None:
            return self.seed
        key = self.target.seed_key
        value = self.target.run_config.get(key)
        if value is None and self.reference is not None and self.reference.end_state:
            state = self._reference_file(self.reference.end_state)["components"].get(CONFIG)
            if isinstance(state, dict) and set(state) == {"value"}:
                state = state["value"]
            value = state.get(key) if isinstance(state, dict) else None
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    @property
    def restart_config(self) -> dict[str, Any]:
        return self.run_config if self.target.restart_config == "run" else {}

    def _segment(self, spec: SegmentSpec) -> SegmentResult:
        try:
            if self.progress is None:
                return run_segment(spec, self.isolation, self.target,
                                   cancel=self.cancel, deadline=self.deadline)
            with self.progress.segment(run_label(spec.name), spec.start, spec.stop):
                return run_segment(spec, self.isolation, self.target,
                                   cancel=self.cancel, deadline=self.deadline)
        except BudgetExhausted:
            raise BudgetExhausted(self.budget) from None

    def step_timeout(self) -> float | None:
        """The bound on one step of the next run (see verify())."""
        if self.timeout == 0:
            return None
        if self.timeout is not None:
            return float(self.timeout)
        if self.reference is None:
            return PHASE_TIMEOUT
        return max(MIN_STEP_TIMEOUT, 20 * self.reference.slowest_step)

    def _spec(self, name: str, work: str | None = None, **kw: Any) -> SegmentSpec:
        if self.reference is not None and kw.get("keep_tensors_after") is not None:
            kw["reference_digests"] = [r.digests for r in self.reference.records]
            if self.tolerance.bitwise_only:
                kw.setdefault("max_tensor_steps", _TENSOR_STEPS)
        return SegmentSpec(
            target_spec=self.target.spec, workdir=work or self.work, name=name,
            threads=self.threads, step_timeout=self.step_timeout(), **kw,
        )

    @property
    def jobs(self) -> int:
        """Runs side by side: one per ``threads`` cores in fresh interpreters;
        in-process runs share this interpreter's streams, so one."""
        return _process_jobs(self.threads) if self.isolation == "process" else 1

    def _map(self, fn: Callable[[Any], Any], items: Iterable[Any]) -> list[Any]:
        """``fn`` over ``items``, in order. Fresh interpreters spend most of their
        time starting, so process-isolated runs go side by side, at most one
        per free core submitted at once; in-process runs share this
        interpreter's streams and go one by one, in this thread (so a step
        can be interrupted there). If anything goes wrong or the check is
        interrupted, the runs in flight are cancelled and their interpreters
        killed before this returns."""
        jobs = self.jobs
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
            self.cancel.set()
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        pool.shutdown()
        return out

    def prepare(self) -> SegmentResult:
        """Run the uninterrupted reference, capturing state at ``capture_at``."""
        points = self.capture_at or self.resume_at
        if self.tolerance.bitwise_only:
            keep: dict[str, Any] = {"keep_tensor_steps": sorted({
                k + i for k in points for i in range(1, _TENSOR_STEPS + 1) if k + i <= self.steps
            })}
        else:  # within tolerance, every step after a restart may be read
            keep = {"keep_tensors_after": min(points)}
        spec = self._spec(
            "reference", config=self.run_config, start=0, stop=self.steps,
            capture_at=points, hash_seed=1, **keep,
        )
        again: SegmentResult | None = None
        if self.check_determinism and self.jobs > 1:
            # The rerun does not need the reference: side by side, with the
            # reference's step bound (its slowest step is not known yet).
            ref, again = self._map(self._segment, [spec, self._determinism_spec()])
        else:
            ref = self._segment(spec)
        if ref.error is not None:
            raise ReferenceFailed(self.target.name, ref.error, ref.error_step)
        self.reference = ref
        if self.check_determinism:
            self._check_determinism(ref, again or self._segment(self._determinism_spec()))
        return ref

    def _determinism_spec(self) -> SegmentSpec:
        # In fresh interpreters, another hash seed: set and dict order may differ.
        return self._spec(
            "determinism", config=self.run_config, start=0, stop=self.steps, hash_seed=2,
            capture_end=False,
        )

    def _check_determinism(self, ref: SegmentResult, again: SegmentResult) -> None:
        if again.error is not None:
            raise ReferenceFailed(self.target.name, again.error, again.error_step)
        diff = first_difference(ref.records, again.records)
        self.determinism = {"checked": True, "deterministic": diff is None}
        if diff is None:
            return
        step, key = diff
        self.determinism.update(first_step=step, first_quantity=_quantity_name(key))
        if self.tolerance.bitwise_only:
            raise NondeterministicBaseline(
                self.target.spec or self.target.name, step, _quantity_name(key),
                reproduce_command(
                    "baseline", self.target.spec, steps=self.steps, seed=self.seed,
                    threads=self.threads, isolation=self.isolation,
                ),
                cause=nondeterminism_cause(self.target, self.run_config, self.threads,
                                           self.isolation, self.work, step,
                                           _quantity_name(key), first=ref),
            )

    def run(self, drop: DropSpec, noise_seeds: int) -> Report:
        ref = self.prepare()
        drop_sets = _drop_sets(drop, ref.names)
        if self.progress is not None:  # an estimate: confirmation runs come on top
            self.progress.total = self.progress.done + self.steps * noise_seeds + sum(
                self.steps if not d and ref.has_own_checkpoint else self.steps - self.resume_at[0]
                for d in drop_sets)
        base = self.base_seed()
        self.noise_seeds = [base + i for i in range(1, noise_seeds + 1)] if base is not None else []

        def noise_run(seed: int) -> SegmentResult:
            config = {**self.run_config, self.target.seed_key: seed}
            return self._segment(self._spec(f"noise{seed}", config=config, start=0,
                                            stop=self.steps, capture_end=False))

        # The full resume (the program's own save/load when it has them), the
        # engine's own full resume when that is another run, then the ablations.
        jobs_list: list[tuple[list[str], Literal["auto", "engine"]]] = [([], "auto")]
        if ref.has_own_checkpoint:
            jobs_list.append(([], "engine"))
        jobs_list += [(dropped, "auto") for dropped in drop_sets[1:]]

        def resumed_run(job: tuple[list[str], Literal["auto", "engine"]]) -> tuple[RunResult, list[Any]]:
            return self._run_one(self.resume_at, job[0], job[1])

        self.check_disk(runs=len(jobs_list), jobs=self.jobs)
        noise = self._map(noise_run, self.noise_seeds)
        self.noise_seeds = [s for s, seg in zip(self.noise_seeds, noise) if seg.error is None]
        self.noise = [[r.loss for r in seg.records] for seg in noise if seg.error is None]
        done = self._map(resumed_run, jobs_list)
        fulls = len(jobs_list) - len(drop_sets) + 1
        engine_full, engine_trajectory = done[fulls - 1]
        self._judge_ablations(engine_full, engine_trajectory, done[fulls:])
        runs = [r for r, _ in done]
        return Report(
            target=self.target.spec or self.target.name,
            steps=self.steps,
            resume_at=list(self.resume_at),
            seed=self.seed,
            isolation=self.isolation,
            tolerance=self.tolerance.to_json(),
            environment=fingerprint(self.threads),
            runs=runs,
            noise=self._noise_summary(),
            determinism=self.determinism,
            reference_loss=[r.loss for r in ref.records],
            seed_losses=self.noise,
        )

    def check(
        self, schedule: Sequence[int], dropped: Sequence[str] = (),
        source: Literal["auto", "engine"] = "auto",
    ) -> RunResult:
        """One resumed run: restart at every point of ``schedule``, judged.

        The full resume goes through the program's own save/load when it has
        them; ablations use the engine's capture. The run's files are removed
        once it is judged, so a long fuzzing session uses bounded disk.
        """
        return self._run_one(schedule, dropped, source)[0]

    def _run_one(
        self, schedule: Sequence[int], dropped: Sequence[str] = (),
        source: Literal["auto", "engine"] = "auto",
    ) -> tuple[RunResult, list[Any]]:
        """``check``, also returning the run's trajectory after its first
        resume point (per-step digests): ablations are compared with it."""
        assert self.reference is not None
        schedule, dropped = list(schedule), list(dropped)
        own = self.reference.has_own_checkpoint and not dropped and source == "auto"
        work = tempfile.mkdtemp(prefix="run-", dir=self.work)
        try:
            if own:
                segments = self._resumed_program(schedule, work)
            else:
                segments = self._resumed_engine(schedule, dropped, work)
            trajectory = [r.digests for _, seg in segments for r in seg.records
                          if r.step > schedule[0]]
            result = self._judge(schedule, dropped, segments, "program" if own else "engine", work)
            return result, trajectory
        finally:
            shutil.rmtree(work, ignore_errors=True)

    def _resumed_engine(
        self, schedule: list[int], dropped: list[str], work: str
    ) -> list[tuple[int, SegmentResult]]:
        """Restart from the reference's capture at each resume point."""
        assert self.reference is not None
        out = []
        path = self.reference.captures[schedule[0]]
        bounds = [*schedule, self.steps]
        tag = "-".join(dropped) or "none"
        for i, k in enumerate(schedule):
            stop = bounds[i + 1]
            seg = self._segment(self._spec(
                f"drop-{tag}-{k}", work, config=self.restart_config, start=k, stop=stop,
                restore=Restore(path=path, drop=list(dropped)),
                capture_at=[stop] if stop < self.steps else [],
                keep_tensors_after=k, reseed=_RESEED_BASE + k,
            ))
            out.append((k, seg))
            if seg.error is not None or stop == self.steps:
                break
            path = seg.captures[stop]
        return out

    def _resumed_program(self, schedule: list[int], work: str) -> list[tuple[int, SegmentResult]]:
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
        seg = self._prefixes.get(first) if self.reuse_prefix else None
        if seg is None:
            prefix_work = self._prefix_dir(first) if self.reuse_prefix else work
            seg = self._segment(self._spec(
                "own-0", prefix_work, config=self.run_config, start=0, stop=first,
                program_save_at=first, keep_tensors_after=0,
            ))
            if self.reuse_prefix and seg.error is None:
                self._prefixes[first] = seg
        return [(0, seg), *self._own_chain(schedule, seg.program_checkpoint, work, seg)]

    def _prefix_dir(self, first: int) -> str:
        path = Path(self.work) / f"prefix-{first}"
        path.mkdir(parents=True, exist_ok=True)
        return str(path)

    def _own_chain(
        self, schedule: list[int], checkpoint: str | None, work: str,
        previous: SegmentResult, tag: str = "own", first_restore: Restore | None = None,
    ) -> list[tuple[int, SegmentResult]]:
        """Restart at each point of ``schedule`` through the program's load(),
        saving with its save() at the next point. ``first_restore`` replaces
        the first restart's restore (a confirmation's override)."""
        out: list[tuple[int, SegmentResult]] = []
        bounds = [*schedule, self.steps]
        prev = previous
        for i, k in enumerate(schedule):
            if prev.error is not None:
                break
            stop = bounds[i + 1]
            restore = Restore(path=prev.program_checkpoint or "", source="program")
            if i == 0 and first_restore is not None:
                restore = first_restore
            elif i == 0 and checkpoint is not None:
                restore = Restore(path=checkpoint, source="program")
            prev = self._segment(self._spec(
                f"{tag}-{k}", work, config=self.restart_config, start=k, stop=stop,
                restore=restore, program_save_at=stop if stop < self.steps else None,
                keep_tensors_after=k, reseed=_RESEED_BASE + k,
            ))
            out.append((k, prev))
        return out

    # -- judging ---------------------------------------------------------

    def _judge(
        self, schedule: list[int], dropped: list[str],
        segments: list[tuple[int, SegmentResult]], source: str, work: str,
    ) -> RunResult:
        assert self.reference is not None
        result = RunResult(
            dropped=list(dropped), resume_at=list(schedule), verdict=IDENTICAL,
            checkpoint=source,  # type: ignore[arg-type]
            reproduce=self._reproduce(schedule, dropped),
        )
        result.diagnosis = self._diagnose(dropped, segments)
        failed = next((s for _, s in segments if s.error is not None), None)
        if failed is not None:
            result.verdict = FAILED
            result.failure = failed.error
            result.first_divergent_step = failed.error_step
            stage = {"restore": "restoring the checkpoint", "save": "saving the checkpoint",
                     "build": "building the restarted program", "step": "a step",
                     "capture": "capturing state", "process": "a fresh interpreter"}
            result.explanation = (
                f"{stage.get(failed.error_stage or '', 'the run')} failed: "
                f"{(failed.error or '').splitlines()[0]}"
            )
            return result

        ref_by_step = {r.step: r for r in self.reference.records}
        result.trajectory = Trajectory.compare(
            [r for _, seg in segments for r in seg.records], ref_by_step)
        cmp = self._compare(schedule[0], dropped, segments, result.latent_gaps)
        first, first_bitwise, worst, loss_deltas = (
            cmp.first, cmp.first_bitwise, cmp.worst, cmp.loss_deltas)
        if worst is not None:
            result.max_abs_diff, result.max_rel_diff, result.max_ulp_diff = (
                worst.max_abs, worst.max_rel, worst.max_ulp)
        resumed_from = schedule[0]
        deltas_after = {s: d for s, d in loss_deltas.items() if s > resumed_from}
        result.max_abs_loss_diff = max(deltas_after.values(), default=0.0)
        if first is not None:
            result.verdict = DIVERGED
            result.first_divergent_step, quantity = first
            result.first_divergent_quantity = _quantity_name(quantity)
            self._plausibility(result, loss_deltas)
        elif first_bitwise is not None:
            result.verdict = CLOSE
        if result.diagnosis:
            self._confirm(result, segments, work, source)
        result.blind_spot = bool(dropped) and result.verdict in (IDENTICAL, CLOSE)
        result.explanation = self._explain(result, first_bitwise)
        annotate(result, self.reference, segments)  # streams after the restore, data in words
        return result

    def _compare(
        self, first_k: int, dropped: list[str], segments: list[tuple[int, SegmentResult]],
        latent: list[str],
    ) -> _Comparison:
        """Compare a run's steps and end state with the reference's: the first
        difference beyond tolerance, the first bitwise one, the worst, and
        |Δloss| per step. ``latent`` collects latent gaps when the trajectory
        is identical (see _end_state_differences)."""
        assert self.reference is not None
        ref_by_step = {r.step: r for r in self.reference.records}
        out = _Comparison()
        for _, seg in segments:
            for rec in seg.records:
                ref = ref_by_step[rec.step]
                out.loss_deltas[rec.step] = abs(rec.loss - ref.loss)
                keys = differing_quantities(ref, rec)
                if not keys:
                    continue
                out.first_bitwise = out.first_bitwise or (rec.step, keys[0])
                diffs = self._tensor_differences(seg, rec.step, keys)
                for key in keys:
                    d = diffs.get(key, Difference(False))
                    out.worst = d.worse(out.worst)
                    if not d.within_tolerance and out.first is None:
                        out.first = (rec.step, key)
        trajectory_identical = out.first is None  # (within tolerance)
        for name, diff in self._end_state_differences(
            first_k, dropped, segments[-1][1], latent if trajectory_identical else None,
        ):
            out.worst = diff.worse(out.worst)
            out.first_bitwise = out.first_bitwise or (self.steps, f"state:{name}")
            if out.first is None and not diff.within_tolerance:
                out.first = (self.steps, f"state:{name}")
        return out

    def _confirm(
        self, result: RunResult, segments: list[tuple[int, SegmentResult]], work: str,
        source: str,
    ) -> None:
        """Give each finding a status: is the difference the cause?

        The findings that count are those at the resume points up to the one
        after which the run departs from the reference (later points were
        compared with what the run saved: ``after_divergence``, not blamed).
        A run that never departs leaves them ``latent``. Otherwise each is
        tried: the same schedule through the program's own save/load, with
        only that component set to the reference's state at its resume
        point. If that removes the divergence or moves it later, the blame is
        ``confirmed``; if the divergence stays where it was, the component
        differs but is ``not_cause``. The engine's own checkpoint is not
        tried (its restore is the experiment itself).
        """
        assert self.reference is not None
        diverged_at = result.first_divergent_step if result.verdict == DIVERGED else None
        if result.verdict == FAILED:
            return
        departure = None
        if diverged_at is not None:
            departure = max((k for k in result.resume_at if k < diverged_at),
                            default=result.resume_at[0])
        checkpoints = {k: prev.program_checkpoint
                       for (_, prev), (k, _) in zip(segments, segments[1:])}
        judged = []
        for finding in result.diagnosis:
            k = finding.step
            if finding.status == AFTER_DIVERGENCE:
                judged.append(finding)
            elif departure is None:
                judged.append(replace(finding, status=LATENT, confirmed=False,
                                      matters_from=self._matters_from(finding.component, k or 0)))
            elif (source != "program" or k is None or k > departure
                  or k not in self.reference.captures or not checkpoints.get(k)):
                judged.append(finding)
            else:
                cause = self._replacing_helps(finding.component, k, checkpoints[k] or "",
                                              result.resume_at, diverged_at, work)
                if not cause and finding.component == CONFIG:
                    # Settings are read at build too (a seed, a data order): set
                    # after the load, they cannot undo what the build made of
                    # the wrong ones. No evidence either way: not judged.
                    judged.append(finding)
                    continue
                judged.append(replace(finding, status=CONFIRMED if cause else NOT_CAUSE,
                                      confirmed=cause))
        result.diagnosis = judged
        for finding in judged:
            if finding.status == LATENT and finding.component not in result.latent_gaps:
                result.latent_gaps.append(finding.component)

    def _replacing_helps(
        self, component: str, k: int, checkpoint: str, schedule: list[int],
        diverged_at: int | None, work: str,
    ) -> bool:
        """Rerun ``schedule`` from point ``k`` (the program's checkpoint there,
        but ``component`` from the reference's capture); True when the
        divergence goes away or starts later than ``diverged_at``."""
        assert self.reference is not None and diverged_at is not None
        rest = [p for p in schedule if p >= k]
        restore = Restore(path=checkpoint, source="program",
                          override_path=self.reference.captures[k], override=[component])
        segments = self._own_chain(rest, None, work, SegmentResult(
            records=[], names=[], captures={}, end_state=None), tag=f"confirm-{component}",
            first_restore=restore)
        if any(seg.error is not None for _, seg in segments):
            return False
        first = self._compare(schedule[0], [], segments, []).first
        return first is None or first[0] > diverged_at

    def _matters_from(self, component: str, k: int) -> int | None:
        """For a latent gap: the first step where it would start to matter, when
        the program's declared boundaries tell (the sampler epoch is read at
        the next epoch boundary)."""
        assert self.reference is not None
        if component == SAMPLER_EPOCH:
            return next_epoch_start(self.reference.boundaries, k)
        return None

    def _tensor_differences(self, seg: SegmentResult, step: int, keys: list[str]) -> dict[str, Difference]:
        assert self.reference is not None
        run_t = load_step_tensors(Path(seg.tensor_dir or ""), step)
        ref_t = self._reference_tensors(step) if run_t is not None else None
        out = {}
        for key in keys:
            if ref_t is None or run_t is None or key not in ref_t or key not in run_t:
                out[key] = Difference(False, summary="missing")
                continue
            out[key] = compare_values(ref_t[key], run_t[key], self.tolerance)
        return out

    def _reference_tensors(self, step: int) -> dict[str, torch.Tensor] | None:
        """The reference's full tensors at ``step``: from its files, or replayed
        (the reference keeps only the steps after each resume point)."""
        assert self.reference is not None
        if self.reference.tensor_dir is None:
            return None
        ref_dir = Path(self.reference.tensor_dir)
        with self._replay_lock:
            if not (ref_dir / f"step_{step}.pt").exists():
                self._replay_reference(step, ref_dir)
        return load_step_tensors(ref_dir, step)

    def _replay_reference(self, step: int, ref_dir: Path) -> None:
        """Run the reference again up to ``step`` (and the few steps after it)
        and keep those steps' tensors, where its digests prove them the
        reference's own: from the last capture before it, else from step 0."""
        assert self.reference is not None
        stop = min(step + _TENSOR_STEPS - 1, self.steps)
        wanted = list(range(step, stop + 1))
        before = [k for k in self.reference.captures if k < step]
        for start in ([max(before)] if before else []) + [0]:
            work = tempfile.mkdtemp(prefix="replay-", dir=self.work)
            try:
                restore = Restore(path=self.reference.captures[start]) if start else None
                seg = self._segment(self._spec(
                    f"replay-{step}", work, start=start, stop=stop, hash_seed=1,
                    config=self.restart_config if start else self.run_config, restore=restore,
                    reseed=_RESEED_BASE + start if start else None, keep_tensor_steps=wanted,
                ))
                if seg.error is not None or seg.tensor_dir is None:
                    continue
                for rec in seg.records:
                    own = Path(seg.tensor_dir) / f"step_{rec.step}.pt"
                    same = rec.digests == self._reference_record(rec.step).digests
                    if rec.step in wanted and same and own.exists():
                        shutil.move(str(own), ref_dir / own.name)
                if (ref_dir / f"step_{step}.pt").exists():
                    return
            finally:
                shutil.rmtree(work, ignore_errors=True)

    def _reference_record(self, step: int) -> StepRecord:
        assert self.reference is not None
        return self.reference.records[step - 1]

    def check_disk(self, runs: int, jobs: int) -> None:
        """Before the resumed runs: estimate what they will write from the
        reference's own files; refuse when the disk cannot hold it, and say
        so up front when it is large."""
        assert self.reference is not None
        ref = self.reference
        capture = max((_size(p) for p in [*ref.captures.values(), ref.end_state] if p), default=0)
        steps = list(Path(ref.tensor_dir).glob("step_*.pt")) if ref.tensor_dir else []
        step_file = max((_size(str(p)) for p in steps), default=capture)
        kept = _TENSOR_STEPS if self.tolerance.bitwise_only else self.steps - self.resume_at[0]
        segments = len(self.resume_at)
        # per run: restored state and a capture per restart, the end state,
        # the program's own checkpoint, and the tensors of differing steps
        per_run = capture * (2 * segments + 2) + step_file * kept
        ahead = min(jobs, max(runs, 1)) * per_run
        used = _tree_size(self.work)
        free = shutil.disk_usage(self.work).free
        if ahead > free:
            raise DiskSpaceShortage(self.work, used + ahead, free)
        if used + ahead > _LARGE_DISK_USE:
            warnings.warn(DiskUseWarning(self.work, used + ahead), stacklevel=2)

    def _end_state_differences(
        self, first_k: int, dropped: list[str], last: SegmentResult, latent: list[str] | None
    ) -> list[tuple[str, Difference]]:
        """Components whose state at the end differs from the reference's.

        While the trajectory is identical, a component that the reference
        never changed after the resume point (an unused stream, a setting
        nothing reads) is a latent gap, collected in ``latent`` (None: the
        trajectory already diverged, every difference counts).
        """
        assert self.reference is not None and self.reference.end_state and last.end_state
        ref_end = self._reference_file(self.reference.end_state)["components"]
        run_end = load_checkpoint(last.end_state)["components"]
        ref_at_k = self._reference_file(self.reference.captures[first_k])["components"]
        out = []
        for name in self.reference.names:
            if name not in run_end:
                out.append((name, Difference(False, summary="missing")))
                continue
            if digest(ref_end[name]) == digest(run_end[name]):
                continue
            if latent is not None and digest(ref_at_k[name]) == digest(ref_end[name]):
                if name not in dropped:
                    latent.append(name)
                continue
            out.append((name, _state_difference(ref_end[name], run_end[name], self.tolerance)))
        return out

    def _diagnose(self, dropped: list[str], segments: list[tuple[int, SegmentResult]]) -> list[Finding]:
        """Compare each restored component with the state it should have had.

        Up to the first resume point after which the run differs from the
        reference, that is the reference's state there. Once the run has
        differed, later restored state is compared with what the run itself
        had when it saved (``basis="saved"``): the reference's state there is
        no longer what a correct checkpoint would restore, so differences
        from it are consequences, not causes (status ``after_divergence``).
        """
        assert self.reference is not None
        ref_by_step = {r.step: r for r in self.reference.records}
        findings: list[Finding] = []
        seen: set[str] = set()
        differed = False
        previous: SegmentResult | None = None
        for k, seg in segments:
            differed = differed or any(
                differing_quantities(ref_by_step[r.step], r)
                for _, s in segments for r in s.records if r.step <= k
            )
            given: str | None = None
            basis: Literal["reference", "saved"] = "reference"
            status: Literal["after_divergence"] | None = None
            if differed and previous is not None and previous.end_state:
                given, basis, status = previous.end_state, "saved", AFTER_DIVERGENCE
            elif k in self.reference.captures:
                given = self.reference.captures[k]
            prev, previous = previous, seg
            if seg.restored_state is None or given is None or (differed and prev is None):
                continue
            ref = self._reference_file(given) if basis == "reference" else load_checkpoint(given)
            run = load_checkpoint(seg.restored_state)
            for name in self.reference.names:
                if name in dropped or name in seen:
                    continue
                detail = describe_difference(
                    name, ref["components"].get(name), run["components"].get(name), k,
                    ref.get("meta"), run.get("meta"),
                )
                if detail is not None:
                    findings.append(Finding(name, detail, step=k, basis=basis, status=status))
                    seen.add(name)
        return findings

    def _plausibility(self, result: RunResult, loss_deltas: dict[int, float]) -> None:
        """Plausible: every |Δloss| after the restart stays within the seed-to-seed band.

        The band is the largest loss difference between the reference and a
        run with another seed over the same steps: how far apart two honest
        runs of this program drift. A lost component whose continuation stays
        inside it is the silent, plausible-but-different kind.
        """
        if not self.noise or self.reference is None:
            return
        after = [s for s in loss_deltas if s > result.resume_at[0]]
        band = self._band(after)
        worst = max((loss_deltas[s] for s in after), default=0.0)
        result.noise_ratio = worst / band if band > 0 else (math.inf if worst > 0 else 0.0)
        result.plausible = result.noise_ratio <= 1.0

    def _band(self, steps: list[int]) -> float:
        """The largest loss difference between any two honest runs (the reference
        and the other seeds, every pair) over ``steps``: with M seeds that is
        M(M+1)/2 pairs, a steadier estimate of the spread than M."""
        assert self.reference is not None
        runs = [[r.loss for r in self.reference.records], *self.noise]
        return max(
            (abs(a[s - 1] - b[s - 1]) for i, a in enumerate(runs) for b in runs[i + 1:]
             for s in steps),
            default=0.0,
        )

    def _noise_summary(self) -> dict[str, Any]:
        base = self.base_seed()
        if self.reference is None or not self.noise:
            out: dict[str, Any] = {"seeds": [], "band": None, "base_seed": base}
            if base is None:
                out["why"] = (
                    f"the program's seed is unknown (no --seed, no {self.target.seed_key!r} "
                    "in run_config or in a declared config component), so no other seed "
                    "could be chosen for noise runs"
                )
            return out
        after = [r.step for r in self.reference.records if r.step > self.resume_at[0]]
        return {
            "seeds": list(self.noise_seeds),
            "base_seed": base,
            "band": self._band(after),
            "steps": [after[0], after[-1]] if after else [],
        }

    def _judge_ablations(
        self, engine_full: RunResult, engine_trajectory: list[Any],
        ablations: list[tuple[RunResult, list[Any]]],
    ) -> None:
        """When the engine's own full resume is not equivalent, the declared
        components do not capture the program's state: no ablation is
        evidence of anything. Mark them ``inconclusive`` (a failed one stays
        failed: that is a fact), and say when one's trajectory is the full
        resume's own divergence, step for step."""
        allowed = (IDENTICAL,) if self.tolerance.bitwise_only else (IDENTICAL, CLOSE)
        if engine_full.verdict in allowed:
            return
        where = (f"from step {engine_full.first_divergent_step} "
                 f"({engine_full.first_divergent_quantity})"
                 if engine_full.verdict == DIVERGED else "(it failed)")
        for run, trajectory in ablations:
            if run.verdict == FAILED:
                continue
            run.verdict = INCONCLUSIVE
            run.blind_spot = False
            run.plausible = None
            run.noise_ratio = None
            run.same_as_full_resume = (
                engine_full.verdict == DIVERGED and trajectory == engine_trajectory)
            text = (f"inconclusive: the engine's full resume of every declared component "
                    f"already differs {where}, so dropping {', '.join(run.dropped)} shows "
                    "nothing about it")
            if run.same_as_full_resume:
                text += ("; its trajectory is identical to the full resume's divergence: "
                         "not evidence that the component matters")
            run.explanation = text

    def _explain(self, r: RunResult, first_bitwise: tuple[int, str] | None) -> str:
        what = "dropping " + ", ".join(r.dropped) if r.dropped else "the full resume"
        k = ",".join(map(str, r.resume_at))
        if r.verdict == IDENTICAL and not r.dropped:
            if r.latent_gaps:
                return "every step after the restart matches bit for bit" + self._latent_text(r)
            return "resumes bit for bit: every step after the restart and every component's state match"
        if r.blind_spot:
            return (
                f"blind spot: {what} changed nothing at k={k}; this program does not exercise "
                "it here (or other state masks it); not evidence that it is saved"
            )
        if r.verdict == CLOSE:
            step, key = first_bitwise or (None, "")
            return (
                f"within tolerance; first bitwise difference at step {step} "
                f"({_quantity_name(key)}), max |Δ| {r.max_abs_diff:.3g}"
            )
        q = r.first_divergent_quantity or ""
        text = f"{q} differs from step {r.first_divergent_step}"
        if q.startswith("state of"):
            text = f"the final {q} differs"
            if not r.max_abs_loss_diff:
                text += " (every step's loss, gradients and parameters match)"
        if not r.dropped and r.checkpoint == "engine" and self.reference is not None \
                and self.reference.has_own_checkpoint:
            text += ("; the engine restored every declared component: they do not capture "
                     "the program's state (undeclared state, or state consumed after the "
                     "restore)")
        if r.diagnosis:
            text += "; restored state differs in " + ", ".join(
                f.component + f.mark for f in r.diagnosis)
        text += self._latent_text(r)
        if r.plausible is True:
            text += "; loss stays within seed-to-seed noise: plausible but different"
        elif r.plausible is False:
            text += f"; loss leaves the seed-to-seed band ({r.noise_ratio:.3g}x): gross"
        return text

    @staticmethod
    def _latent_text(r: RunResult) -> str:
        if not r.latent_gaps:
            return ""
        when = {f.component: f.matters_from for f in r.diagnosis if f.matters_from}
        parts = [
            f"{name} (from step {when[name]})" if name in when else name
            for name in r.latent_gaps
        ]
        return (
            f"; latent gap: {', '.join(parts)} restored wrongly but unused after the restart "
            "here; it matters once something reads it"
        )

    def _reproduce(self, schedule: list[int], dropped: list[str]) -> str:
        return reproduce_command(
            "run", self.target.spec, steps=self.steps, seed=self.seed, threads=self.threads,
            isolation=self.isolation, resume_at=schedule, drop=dropped,
            tolerance=self.tolerance, timeout=self.timeout,
        )


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _tree_size(root: str) -> int:
    return sum(_size(os.path.join(folder, name))
               for folder, _, names in os.walk(root) for name in names)


@dataclass
class _Comparison:
    """How a run's steps and end state compare with the reference's."""

    first: tuple[int, str] | None = None
    """The first (step, quantity) beyond tolerance."""
    first_bitwise: tuple[int, str] | None = None
    worst: Difference | None = None
    loss_deltas: dict[int, float] = field(default_factory=dict)


def _drop_sets(drop: DropSpec, names: Sequence[str]) -> list[list[str]]:
    if isinstance(drop, str):
        if drop == "all":
            return [[]] + [[n] for n in names]
        if drop == "none":
            return [[]]
        drop = [drop]
    sets: list[list[str]] = [[]]
    for item in drop:
        group = [item] if isinstance(item, str) else list(item)
        checked = validate_drop(group, names)
        ordered = [n for n in names if n in checked]
        if ordered and ordered not in sets:
            sets.append(ordered)
    return sets


def _quantity_name(key: str) -> str:
    head, _, name = key.partition(":")
    return {
        "data": "data (the samples consumed)",
        "inputs": "data (the model's inputs)",
        "lr": "learning rate",
        "scale": "loss scale",
        "loss": "loss",
        "skipped": "skipped step",
        "grad": f"gradient of {name}",
        "param": f"parameter {name}",
        "state": f"state of {name}",
    }.get(head, key)


def _state_difference(ref: Any, run: Any, tolerance: Tolerance) -> Difference:
    ref_leaves = dict(flatten_state(ref))
    run_leaves = dict(flatten_state(run))
    worst: Difference | None = None
    for path in ref_leaves.keys() | run_leaves.keys():
        if path not in ref_leaves or path not in run_leaves:
            return Difference(False, summary=f"{path} missing")
        ref, run = ref_leaves[path], run_leaves[path]
        d = compare_values(ref, run, tolerance)
        if not _is_float(ref):  # stream states, counters: no meaningful magnitude
            d = Difference(d.within_tolerance, summary=d.summary)
        worst = d.worse(worst)
    return worst or Difference(True)




def _is_float(value: Any) -> bool:
    if isinstance(value, torch.Tensor):
        return value.is_floating_point()
    return isinstance(value, float)
