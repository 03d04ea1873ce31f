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
from resumecheck.components import SAMPLER_EPOCH, preserved_global_streams, validate_drop
from resumecheck.environment import fingerprint
from resumecheck.errors import (
    BudgetExhausted, DiskSpaceShortage, DiskUseWarning, InvalidArgument, NondeterministicBaseline, ResumecheckError,
)
from resumecheck.evidence import annotate
from resumecheck.program import (
    BUILTIN_SPEC, Target, declared_names, load_target, next_epoch_start,
)
from resumecheck.progress import ProgressCallback, ProgressTracker, run_label
from resumecheck.report import (
    CLOSE, DIVERGED, FAILED, IDENTICAL, Finding, Report, RunResult,
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

__all__ = ["MAX_NOISE_SEEDS", "MIN_STEP_TIMEOUT", "check_timeout", "ReferenceFailed", "verify"]

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


class ReferenceFailed(ResumecheckError):
    """The uninterrupted reference run itself failed: nothing can be judged."""

    def __init__(self, target: str, reason: str, step: int | None) -> None:
        self.target = target
        self.reason = reason
        self.step = step
        where = f" at step {step}" if step is not None else ""
        super().__init__(
            f"the uninterrupted reference run of {target} failed{where}: {reason}. "
            "Fix the program so that it trains without a restart first."
        )


DropSpec = str | Sequence[str | Collection[str]]


def verify(
    target: Target | str | None = None,
    *,
    steps: int | None = None,
    resume_at: Sequence[int] | int | None = None,
    drop: DropSpec = "all",
    isolation: Literal["inprocess", "process"] = "inprocess",
    tolerance: Tolerance | None = None,
    seed: int = 0,
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
    ks = _resume_points(resume_at if resume_at is not None else tgt.resume_at, n)
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
    check = _Check(tgt, n, ks, isolation, tol, seed, threads,
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


def _resume_points(value: Sequence[int] | int, n: int) -> list[int]:
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
class _Check:
    target: Target
    steps: int
    resume_at: list[int]
    isolation: Literal["inprocess", "process"]
    tolerance: Tolerance
    seed: int
    threads: int
    work: str = ""
    reference: SegmentResult | None = None
    noise: list[list[float]] = field(default_factory=list)
    capture_at: list[int] | None = None
    """Steps at which the reference captures state (default: the resume points)."""
    fast_start: bool = False
    """Start the program's own-checkpoint runs from reference captures (see _resumed_program)."""
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

    def _reference_file(self, path: str) -> dict[str, Any]:
        """A capture of the reference, loaded once: those files never change."""
        if path not in self._loaded:
            self._loaded[path] = load_checkpoint(path)
        return self._loaded[path]

    # -- running ---------------------------------------------------------

    @property
    def run_config(self) -> dict[str, Any]:
        return {**self.target.run_config, self.target.seed_key: self.seed}

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

    def _map(self, fn: Callable[[Any], Any], items: Iterable[Any]) -> list[Any]:
        """``fn`` over ``items``, in order. Fresh interpreters spend most of their
        time starting, so process-isolated runs go side by side, at most one
        per free core submitted at once; in-process runs share this
        interpreter's streams and go one by one, in this thread (so a step
        can be interrupted there). If anything goes wrong or the check is
        interrupted, the runs in flight are cancelled and their interpreters
        killed before this returns."""
        jobs = _process_jobs(self.threads) if self.isolation == "process" else 1
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
        ref = self._segment(self._spec(
            "reference", config=self.run_config, start=0, stop=self.steps,
            capture_at=points, hash_seed=1, **keep,
        ))
        if ref.error is not None:
            raise ReferenceFailed(self.target.name, ref.error, ref.error_step)
        self.reference = ref
        if self.check_determinism:
            self._check_determinism(ref)
        return ref

    def _check_determinism(self, ref: SegmentResult) -> None:
        # In fresh interpreters, another hash seed: set and dict order may differ.
        again = self._segment(self._spec(
            "determinism", config=self.run_config, start=0, stop=self.steps, hash_seed=2,
            capture_end=False,
        ))
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

        def noise_run(i: int) -> SegmentResult:
            config = {**self.run_config, self.target.seed_key: self.seed + i}
            return self._segment(self._spec(f"noise{i}", config=config, start=0, stop=self.steps,
                                            capture_end=False))

        def resumed_run(dropped: list[str]) -> RunResult:
            return self.check(self.resume_at, dropped)

        jobs = _process_jobs(self.threads) if self.isolation == "process" else 1
        self.check_disk(runs=len(drop_sets), jobs=jobs)
        noise = self._map(noise_run, range(1, noise_seeds + 1))
        self.noise = [[r.loss for r in seg.records] for seg in noise if seg.error is None]
        runs = self._map(resumed_run, drop_sets)
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
        assert self.reference is not None
        schedule, dropped = list(schedule), list(dropped)
        own = self.reference.has_own_checkpoint and not dropped and source == "auto"
        work = tempfile.mkdtemp(prefix="run-", dir=self.work)
        try:
            if own:
                segments = self._resumed_program(schedule, work)
            else:
                segments = self._resumed_engine(schedule, dropped, work)
            return self._judge(schedule, dropped, segments, "program" if own else "engine", work)
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

        The first half runs from step 0, unless ``fast_start`` says the
        engine's capture is complete (its own full resume was identical): then
        it starts from the reference's capture at the first resume point and
        calls save() right away, which costs no steps.
        """
        assert self.reference is not None
        first = schedule[0]
        if self.fast_start and first in self.reference.captures:
            seg = self._segment(self._spec(
                "own-start", work, config=self.restart_config, start=first, stop=first,
                restore=Restore(path=self.reference.captures[first]), program_save_at=first,
                reseed=_RESEED_BASE,
            ))
            seg.restored_state = None  # the engine's own restore: nothing to diagnose
        else:
            seg = self._segment(self._spec(
                "own-0", work, config=self.run_config, start=0, stop=first,
                program_save_at=first, keep_tensors_after=0,
            ))
        out = [(0, seg)]
        bounds = [*schedule, self.steps]
        for i, k in enumerate(schedule):
            prev = out[-1][1]
            if prev.error is not None:
                break
            stop = bounds[i + 1]
            seg = self._segment(self._spec(
                f"own-{k}", work, config=self.restart_config, start=k, stop=stop,
                restore=Restore(path=prev.program_checkpoint or "", source="program"),
                program_save_at=stop if stop < self.steps else None,
                keep_tensors_after=k, reseed=_RESEED_BASE + k,
            ))
            out.append((k, seg))
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
        records = [(seg, r) for _, seg in segments for r in seg.records]
        result.trajectory = Trajectory.compare([r for _, r in records], ref_by_step)
        first: tuple[int, str] | None = None
        first_bitwise: tuple[int, str] | None = None
        worst: Difference | None = None
        loss_deltas: dict[int, float] = {}
        for seg, rec in records:
            ref = ref_by_step[rec.step]
            loss_deltas[rec.step] = abs(rec.loss - ref.loss)
            keys = differing_quantities(ref, rec)
            if not keys:
                continue
            first_bitwise = first_bitwise or (rec.step, keys[0])
            diffs = self._tensor_differences(seg, rec.step, keys)
            for key in keys:
                d = diffs.get(key, Difference(False))
                worst = d.worse(worst)
                if not d.within_tolerance and first is None:
                    first = (rec.step, key)
        trajectory_identical = first is None  # (within tolerance)
        for name, diff in self._end_state_differences(
            schedule[0], dropped, segments[-1][1],
            result.latent_gaps if trajectory_identical else None,
        ):
            worst = diff.worse(worst)
            first_bitwise = first_bitwise or (self.steps, f"state:{name}")
            if first is None and not diff.within_tolerance:
                first = (self.steps, f"state:{name}")
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
        if source == "program" and result.diagnosis:
            self._confirm(result, segments, work)
        result.blind_spot = bool(dropped) and result.verdict in (IDENTICAL, CLOSE)
        result.explanation = self._explain(result, first_bitwise)
        annotate(result, self.reference, segments)  # streams after the restore, data in words
        return result

    def _confirm(
        self, result: RunResult, segments: list[tuple[int, SegmentResult]], work: str
    ) -> None:
        """Rerun with only the blamed component from the program's checkpoint.

        Everything else comes from the engine's capture at the same step; if
        that run diverges too, the blame is confirmed. A component whose wrong
        state changes nothing here is a latent gap.
        """
        assert self.reference is not None
        restored = {k: seg.restored_state for k, seg in segments if seg.restored_state}
        confirmed = []
        for finding in result.diagnosis:
            k = finding.step
            if k is None or k not in restored or k not in self.reference.captures:
                confirmed.append(finding)
                continue
            seg = self._segment(self._spec(
                f"confirm-{finding.component}-{k}", work, config=self.restart_config, start=k,
                stop=self.steps, restore=Restore(
                    path=self.reference.captures[k], override_path=restored[k],
                    override=[finding.component],
                ),
                reseed=_RESEED_BASE + k,
            ))
            diverged = (
                seg.error is not None
                or any(differing_quantities(self._reference_record(r.step), r) for r in seg.records)
                or bool(self._end_state_differences(k, [], seg, latent=[]))
            )
            confirmed.append(replace(
                finding, confirmed=diverged,
                matters_from=None if diverged else self._matters_from(finding.component, k),
            ))
            if not diverged and finding.component not in result.latent_gaps:
                result.latent_gaps.append(finding.component)
        result.diagnosis = confirmed

    def _matters_from(self, component: str, k: int) -> int | None:
        """For a latent gap: the first step where it would start to matter, when
        the program's declared boundaries tell (the sampler epoch is read at
        the next epoch boundary)."""
        assert self.reference is not None
        if component == SAMPLER_EPOCH:
            return next_epoch_start(self.reference.boundaries, k)
        return None

    def _reference_record(self, step: int) -> StepRecord:
        assert self.reference is not None
        return self.reference.records[step - 1]

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
        """Compare each restored component with the reference's state at that point."""
        assert self.reference is not None
        findings: list[Finding] = []
        seen: set[str] = set()
        for k, seg in segments:
            if seg.restored_state is None or k not in self.reference.captures:
                continue
            ref = self._reference_file(self.reference.captures[k])
            run = load_checkpoint(seg.restored_state)
            for name in self.reference.names:
                if name in dropped or name in seen:
                    continue
                detail = describe_difference(
                    name, ref["components"].get(name), run["components"].get(name), k,
                    ref.get("meta"), run.get("meta"),
                )
                if detail is not None:
                    findings.append(Finding(name, detail, step=k))
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
        if self.reference is None or not self.noise:
            return {"seeds": [], "band": None}
        after = [r.step for r in self.reference.records if r.step > self.resume_at[0]]
        return {
            "seeds": [self.seed + i for i in range(1, len(self.noise) + 1)],
            "band": self._band(after),
            "steps": [after[0], after[-1]] if after else [],
        }

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
        if r.diagnosis:
            text += "; restored state differs in " + ", ".join(f.component for f in r.diagnosis)
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
            tolerance=self.tolerance,
        )


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _tree_size(root: str) -> int:
    return sum(_size(os.path.join(folder, name))
               for folder, _, names in os.walk(root) for name in names)


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
