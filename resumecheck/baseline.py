"""Trust in the baseline: is the program deterministic, are its gradients right?

Equivalence is meaningless on a baseline that is not deterministic or that
computes wrong gradients. ``check_baseline()`` runs:

1. determinism: two uninterrupted runs compared bitwise, step by step;
2. on a tiny deterministic batch (programs that offer ``tiny_batch(size)``
   and ``batch_loss(model, batch)``), in float64 with dropout off:
   the loss is finite; autograd gradients agree with central finite
   differences on a sample of entries of every parameter; m accumulated
   micro-batches give the gradient of one batch m times larger; a few steps
   on one repeated batch lower the loss.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import torch

from resumecheck import module_state, torch_modes
from resumecheck.compare import digest
from resumecheck.components import LAUNCH_STREAMS, PARAMS, preserved_global_streams
from resumecheck.environment import fingerprint
from resumecheck.errors import LONGER_BOUND, InvalidArgument
from resumecheck.hash_calls import watching
from resumecheck.phrases import HASH_ORDER, drawn_at_import_text, global_streams
from resumecheck.program import BuiltProgram, Target, load_target
from resumecheck.progress import ProgressCallback, ProgressTracker
from resumecheck.capture import load_checkpoint
from resumecheck.faults import environment_failure
from resumecheck.interrupt import scratch_directory
from resumecheck.runner import run_segment
from resumecheck.segments import PHASE_TIMEOUT, SegmentResult, SegmentSpec
from resumecheck.settings import Settings
from resumecheck.streams import is_stream_state, stream_label, unseeded_text
from resumecheck.trace import first_difference
from resumecheck.verdict import quantity_name

N_VS_ONE = "N ranks vs 1 rank"
"""The name of the distributed baseline's check of N ranks against one."""

__all__ = ["BaselineCheck", "BaselineReport", "LaunchComparison", "check_baseline",
           "compare_launches", "nondeterminism_cause"]

SCHEMA = "resumecheck.baseline/1"


@dataclass(kw_only=True)
class BaselineCheck:
    """One check: passed, failed or skipped, with its figures."""

    name: str
    status: Literal["passed", "failed", "skipped"]
    detail: str
    figures: dict[str, Any] = field(default_factory=dict)


@dataclass(kw_only=True)
class BaselineReport:
    target: str
    steps: int
    checks: list[BaselineCheck]
    environment: dict[str, Any]
    nproc: int | None = None
    """Ranks of a distributed baseline (``--nproc``); None: one process."""

    @property
    def passed(self) -> bool:
        return all(c.status != "failed" for c in self.checks)

    def _skipped_text(self) -> str:
        """Say what a pass rests on when checks were skipped."""
        skipped = [c.name for c in self.checks if c.status == "skipped"]
        if not skipped or not self.passed:
            return ""
        ran = [c.name for c in self.checks if c.status == "passed"]
        # (a trial: a pass resting on 2 checks of 6 read like one resting on all six)
        return (f" (only {len(ran)} of {len(self.checks)} checks ran: {', '.join(ran)}; "
                f"skipped: {', '.join(skipped)}: see each line for why)")

    @property
    def headline(self) -> str:
        """``TRUSTWORTHY``, ``TRUSTWORTHY as far as checked`` (a check was
        skipped) or ``NOT TRUSTWORTHY``."""
        # (a trial: a pass resting on 2 checks of 6 read TRUSTWORTHY at a glance)
        if not self.passed:
            return "NOT TRUSTWORTHY"
        skipped = any(c.status == "skipped" for c in self.checks)
        return "TRUSTWORTHY as far as checked" if skipped else "TRUSTWORTHY"

    def to_json(self) -> dict[str, Any]:
        doc = {
            "schema": SCHEMA, "target": self.target, "steps": self.steps,
            "passed": self.passed, "environment": self.environment,
            "checks": [vars(c) for c in self.checks],
        }
        if self.nproc is not None:
            doc["nproc"] = self.nproc
        return doc

    def _ranks_text(self) -> str:
        """' on N ranks', and ' against 1' only where the N-vs-1 check ran."""
        if not self.nproc:
            return ""
        against = any(c.name == N_VS_ONE and c.status != "skipped" for c in self.checks)
        return f" on {self.nproc} ranks{' against 1' if against else ''}"

    def render(self, fmt: Literal["table", "json", "markdown"] = "table") -> str:
        import json

        if fmt == "json":
            return json.dumps(self.to_json(), indent=2, default=str)
        env = self.environment
        lines = [
            f"resumecheck baseline: {self.target}, {self.steps} steps"
            f"{self._ranks_text()}; torch {env.get('torch')}, "
            f"{env.get('threads')} thread(s), {env.get('device')}",
            f"baseline: {self.headline}{self._skipped_text()}",
            "",
        ]
        width = max(len(c.name) for c in self.checks)
        for c in self.checks:
            lines.append(f"{c.name.ljust(width)}  {c.status:<7}  {c.detail}")
        text = "\n".join(lines) + "\n"
        if fmt == "markdown":
            return "\n".join(f"    {line}" if line else "" for line in text.splitlines()) + "\n"
        return text


def check_baseline(
    target: Target | str | None = None,
    *,
    steps: int | None = None,
    seed: int | None = None,
    threads: int = 1,
    isolation: Literal["inprocess", "process"] = "inprocess",
    batch_size: int = 8,
    micro_batches: int = 2,
    timeout: float | None = None,
    progress: ProgressCallback | None = None,
    nproc: int | None = None,
) -> BaselineReport:
    """Run the determinism and tiny-batch gradient checks on ``target``.

    ``timeout``: seconds one step of a determinism run may take (None:
    ``PHASE_TIMEOUT``; 0: no bound); a slower step fails the check. Out of
    disk space, out of memory or a process killed from outside raise
    ``EnvironmentFailure``. ``progress`` receives a ``ProgressEvent`` per step
    of the determinism runs and once the gradient checks are done (counted as
    one more step).

    ``nproc``: check distributed equivalence instead, on that many ranks
    launched through ``torch.distributed.run`` against one rank
    (``resumecheck.dist_baseline``); ``timeout`` then bounds each launch."""
    settings = Settings(steps=steps, seed=seed, threads=threads, isolation=isolation,
                        timeout=timeout)  # validated once, here
    tgt = target if isinstance(target, Target) else load_target(target)
    n = settings.steps_for(tgt)
    if nproc is not None:
        return _distributed(tgt, nproc, n, settings, batch_size)
    if batch_size % micro_batches or micro_batches < 2:
        raise InvalidArgument("micro_batches", micro_batches,
                              f"expected an int >= 2 dividing batch_size={batch_size}")
    step_timeout = PHASE_TIMEOUT if timeout is None else (float(timeout) or None)
    config = tgt.launch_config(seed)
    tracker = ProgressTracker(progress, "baseline", total=2 * n + 1) if progress else None
    previous, modes = torch.get_num_threads(), torch_modes.fresh()
    torch.set_num_threads(threads)
    try:
        with preserved_global_streams():
            checks = _determinism(tgt, n, config, threads, isolation, seed, step_timeout,
                                  tracker)
            checks += _gradient_checks(tgt, config, batch_size, micro_batches)
            if tracker is not None:
                tracker.emit("gradient checks", advance=1)
    except Exception as exc:
        failure = environment_failure(exc)
        if failure is None or failure is exc:
            raise
        raise failure from exc
    finally:
        torch.set_num_threads(previous)
        torch_modes.put(modes)
    return BaselineReport(target=tgt.spec or tgt.name, steps=n, checks=checks,
                          environment=fingerprint(threads))


def _distributed(tgt: Target, nproc: int, n: int, settings: Settings,
                 batch_size: int) -> BaselineReport:
    from resumecheck.dist_baseline import distributed_checks

    if not isinstance(nproc, int) or isinstance(nproc, bool) or nproc < 1:
        raise InvalidArgument("nproc", nproc, "expected an int >= 1")
    if tgt.spec is None:
        raise InvalidArgument("target", tgt.name, "a distributed baseline starts every rank "
                              "as a fresh interpreter: give the target as module:attr or "
                              "path/to/file.py:attr")
    checks = distributed_checks(tgt.spec, nproc=nproc, steps=n,
                                config=tgt.launch_config(settings.seed), threads=settings.threads,
                                batch_size=batch_size, timeout=settings.timeout)
    return BaselineReport(target=tgt.spec, steps=n, checks=checks,
                          environment=fingerprint(settings.threads), nproc=nproc)


def _determinism(tgt: Target, n: int, config: dict[str, Any], threads: int,
                 isolation: Literal["inprocess", "process"], seed: int | None,
                 step_timeout: float | None,
                 progress: ProgressTracker | None = None) -> list[BaselineCheck]:
    """Determinism and seeding: a run, a second from another launch's global
    streams; only when they differ, a third from the first's streams tells a
    program that is not deterministic from one that never seeds a stream."""
    with scratch_directory("resumecheck-baseline-") as work:
        def run(spec: SegmentSpec) -> SegmentResult:
            if progress is None:
                return run_segment(spec, isolation, tgt)
            label = _RUN_LABELS.get(spec.name, spec.name.replace("-", ", ") + " moved")
            with progress.segment(label, spec.start, spec.stop):
                return run_segment(spec, isolation, tgt)

        def spec(name: str, hash_seed: int, moved: tuple[str, ...] = ()) -> SegmentSpec:
            return SegmentSpec(
                target_spec=tgt.spec, config=config, start=0, stop=n, workdir=work,
                name=f"determinism-{name}", threads=threads, hash_seed=hash_seed,
                capture_end=False, step_timeout=step_timeout, launch_moved=list(moved),
            )

        calls: list[str] = []  # (in-process: where its code calls hash() on a string)
        first, moved = _first_run(tgt, isolation, lambda: run(spec("first", 1)), calls)
        second = spec("second", 2, LAUNCH_STREAMS)
        other = run(second) if first.error is None else first
        if first.error or other.error:
            return _run_failed(first if first.error else other)
        launches = compare_launches(run, second, first, other)
        if launches.again is None:
            return [_determinism_passed(n, isolation, other_streams=True, calls=calls),
                    _seeded(tgt.drawn_at_import, first.boundaries.get("seeded_by"))]
        if launches.again.error:
            return _run_failed(launches.again)
        if launches.unseeded is not None:
            step, quantity = launches.unseeded[0], quantity_name(launches.unseeded[1])
            seeding = BaselineCheck(
                name="seeding", status="failed",
                detail=unseeded_text(launches.streams, step, quantity),
                figures={"first_step": step, "first_quantity": quantity,
                         "streams": launches.streams},
            )
            return [_determinism_passed(n, isolation, other_streams=False, calls=calls), seeding]
        assert launches.departs is not None
        step, quantity = launches.departs[0], quantity_name(launches.departs[1])
        cause = (_module_state_text(moved) if moved else
                 nondeterminism_cause(tgt, config, threads, isolation, work, step, quantity,
                                      first=first))
    return [BaselineCheck(
        name="determinism", status="failed",
        detail=f"two uninterrupted runs differ from step {step} in {quantity}; {cause}",
        figures={"first_step": step, "first_quantity": quantity, "cause": cause},
    ), _not_judged("two runs from the same streams already differ")]


def _first_run(tgt: Target, isolation: str, run: Callable[[], SegmentResult],
               calls: list[str]) -> tuple[SegmentResult, list[str]]:
    """The first determinism run and, in-process, the state the program keeps
    at module level that it changed (``module_state``), which the runs after
    it start from: what `run` names and refuses to judge; and into ``calls``,
    where its code called hash() on a string (``hash_calls``)."""
    if isolation != "inprocess":
        return run(), []
    spaces = module_state.program_spaces(tgt.factory)
    with watching(spaces, calls):
        first, moved = module_state.changed_by(run, spaces)
    return first, (moved if first.error is None else [])


def _module_state_text(moved: list[str]) -> str:
    """The cause, where the first run changed module-level state (a trial:
    `run` named a counter that baseline, in-process, did not)."""
    shown = "; ".join(moved[:4]) + (f"; and {len(moved) - 4} more" if len(moved) > 4 else "")
    return (f"the first run changed state the program keeps at module level: {shown}; the "
            "second run, in the same interpreter, started from it, where a new launch starts "
            "without it: check with --isolation process, where every run is a new interpreter")


def _determinism_passed(n: int, isolation: str, *, other_streams: bool,
                        calls: list[str]) -> BaselineCheck:
    runs = ("the second started from other global random streams" if other_streams
            else "both from the same global random streams")
    unseen = ("a set's, hash() of a string" if not calls else
              f"as from hash() of a string, which your program calls: {'; '.join(calls)}")
    return BaselineCheck(
        name="determinism", status="passed",
        detail=f"two uninterrupted {isolation} runs are identical bit for bit over {n} steps, "
               f"{runs}" + (" (PYTHONHASHSEED 1 and 2)" if isolation == "process" else
                            # (trial 149: a data order sorted by hash() of a string passed)
                            f"; under one hash seed: an order that follows it ({unseen}) is "
                            "not checked, --isolation process runs them under PYTHONHASHSEED 1 "
                            "and 2"),
        figures={"steps": n, "isolation": isolation},
    )


_RUN_LABELS = {"determinism-first": "determinism, first run",
               "determinism-second": "determinism, second run",
               "determinism-again": "determinism, same streams again"}


def _run_failed(failed: SegmentResult) -> list[BaselineCheck]:
    detail = f"an uninterrupted run failed: {(failed.error or '').splitlines()[0]}"
    if failed.timed_out:  # (a trial: a bound set too small read as the program's fault)
        detail += f"; {LONGER_BOUND}"
    return [BaselineCheck(name="determinism", status="failed", detail=detail),
            _not_judged("an uninterrupted run failed")]


def _seeded(drawn: tuple[str, ...] = (), seeded_by: str | None = None) -> BaselineCheck:
    if drawn:  # (trial 142: a data order drawn at import passed as seeded)
        return BaselineCheck(
            name="seeding", status="failed",
            detail="a run started from other torch, numpy and Python global streams is "
                   f"identical, but {drawn_at_import_text(drawn)}",
            figures={"streams": list(drawn)},
        )
    if seeded_by:  # (trial 221: credited to a script that built its model unseeded)
        return BaselineCheck(
            name="seeding", status="passed",
            detail="a run started from other torch, numpy and Python global streams is "
                   f"identical: {seeded_by} seeds them, so this says nothing of your script's "
                   "own seeding: a script that builds its model or draws before its framework "
                   "seeds must seed first itself",
        )
    return BaselineCheck(
        name="seeding", status="passed",
        detail="a run started from other torch, numpy and Python global streams is identical: "
               "the program seeds every global stream it draws from as it builds and trains",
    )


def _not_judged(why: str) -> BaselineCheck:
    return BaselineCheck(name="seeding", status="skipped", detail=f"not judged: {why}")


@dataclass(frozen=True)
class LaunchComparison:
    """What a run from another launch's global streams tells against a first
    run, with a third run from the first's streams where they differ."""

    again: SegmentResult | None = None
    """The rerun from the first run's streams (None: not needed: they matched)."""
    departs: tuple[int, str] | None = None
    """Where that rerun departs from the first: the program is not deterministic."""
    unseeded: tuple[int, str] | None = None
    """Where the run from other streams departs while the rerun does not: the
    program draws from a global stream it never seeds."""
    streams: list[str] = field(default_factory=list)
    """Those streams: each, moved alone, makes a run depart by that step."""


def compare_launches(run: Callable[[SegmentSpec], SegmentResult], other_spec: SegmentSpec,
                     first: SegmentResult, other: SegmentResult) -> LaunchComparison:
    """Compare ``first`` with ``other`` (a run of ``other_spec``: another
    launch's streams, PYTHONHASHSEED 2); where they differ, rerun from the
    first's streams, and then name the streams one by one (``run`` runs a
    spec, the caller's way: progress, bounds). A rerun that fails comes back
    as ``again`` with its error, and nothing else is judged."""
    diff = first_difference(first.records, other.records)
    if diff is None:
        return LaunchComparison()
    again = run(replace(other_spec, name="determinism-again", launch_moved=[]))
    if again.error is not None:
        return LaunchComparison(again=again)
    departs = first_difference(first.records, again.records)
    if departs is not None:
        return LaunchComparison(again=again, departs=departs)
    streams = _unseeded_streams(run, other_spec, first, diff[0])
    if _differs_at_build(run, other_spec):  # (step 1's loss is not where it begins)
        diff = (0, INITIAL)
    return LaunchComparison(again=again, unseeded=diff, streams=streams)


_SAME_OBJECTS = (
    "a second build hands back the objects the first built ({}): your factory returns what "
    "it made before (a module's globals, objects it keeps), so the second run starts where "
    "the first ended, and a restart here would get the trained program too: make the "
    "factory build anew at each call (the model, optimizer and loader made inside it; for a "
    "script that keeps them at module level, importlib.reload(module) in the factory), or "
    "check it with --isolation process, where every run is a new interpreter")
"""The nondeterminism cause where, in-process, two builds share their declared
objects (trial 466: a factory that returned an imported script module read "two new
builds start alike ... the difference arises inside step 1")."""


def _built_again_the_same(target: Target, config: dict[str, Any]) -> list[str]:
    """The declared components whose object a second build in this interpreter
    hands back as the first built it (the same object, not an equal one)."""
    built: list[BuiltProgram] = []
    try:
        with preserved_global_streams():
            for _ in range(2):
                built.append(target.build(dict(config)))
    except Exception:  # (no evidence either way: the usual cause is looked for)
        return []
    finally:
        for b in built:
            try:
                b.close()
            except Exception:
                pass
    if len(built) < 2:
        return []
    first = {c.name: c.obj for c in built[0].components}
    # (a stateful object: a constant both builds share, a settings mapping, is no cause)
    return [c.name for c in built[1].components if first.get(c.name) is c.obj
            and callable(getattr(c.obj, "state_dict", None))]


INITIAL = "init"
"""The quantity of a difference found at build: the initial parameters."""


def _differs_at_build(run: Callable[[SegmentSpec], SegmentResult], other: SegmentSpec) -> bool:
    """Whether a build from another launch's streams (``other``) starts from
    other parameters than one from the first run's streams (no step taken)."""
    built = [run(replace(other, name=f"seeding-build-{i}", start=0, stop=0, hash_seed=1,
                         launch_moved=moved, capture_end=True, trace_streams=False))
             for i, moved in ((1, []), (2, list(other.launch_moved)))]
    states = _built_states(built)
    return states is not None and _params_differ(*states)


def _built_states(built: list[SegmentResult]) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The components of two builds (segments that took no step); None when
    either failed or kept no state."""
    if any(b.error is not None or not b.end_state for b in built):
        return None
    a, b = (load_checkpoint(str(r.end_state))["components"] for r in built)
    return a, b


def _unseeded_streams(run: Callable[[SegmentSpec], SegmentResult], base: SegmentSpec,
                      first: SegmentResult, step: int) -> list[str]:
    """The global streams that, each moved alone to another launch's state, make
    a run of ``base`` depart from ``first`` by ``step``. Each run stops at
    ``step`` and keeps ``first``'s PYTHONHASHSEED."""
    found = []
    for name in LAUNCH_STREAMS:
        spec = replace(base, name=f"seeding-{name}", start=0, stop=step, hash_seed=1,
                       launch_moved=[name], capture_end=False, trace_streams=False)
        again = run(spec)
        if again.error is None and first_difference(first.records[:step], again.records):
            found.append(name)
    return found


def nondeterminism_cause(
    target: Target, config: dict[str, Any], threads: int,
    isolation: Literal["inprocess", "process"], work: str, step: int, quantity: str,
    first: SegmentResult | None = None,
) -> str:
    """What differs first between two uninterrupted runs, in words.

    The initial state first: two programs built as the runs build them (no
    step taken), compared component by component: the parameters, then each
    declared random stream and registered generator, then the rest. If the
    initial state is identical, the difference arises inside a step; in
    fresh interpreters one more run with the first run's PYTHONHASHSEED
    tells whether the hash seed is what differs.
    """
    def build(name: str, hash_seed: int) -> SegmentResult:
        return run_segment(SegmentSpec(
            target_spec=target.spec, config=config, start=0, stop=0, workdir=work,
            name=name, threads=threads, hash_seed=hash_seed,
        ), isolation, target)

    shared = _built_again_the_same(target, config) if isolation == "inprocess" else []
    if shared:
        return _SAME_OBJECTS.format(", ".join(f"`{name}`" for name in shared))
    built = [build(f"initial-{i}", i) for i in (1, 2)]
    states = _built_states(built)
    found = _initial_difference(*states) if states is not None else None
    if found:
        return found + _built_by_hash_seed(found, built[0], build, isolation)
    inside = f"the difference arises inside step {step} ({quantity})"
    if target.drawn_at_import and isolation == "process":
        # (trial 142: a data order drawn at import read as "arises inside step 1")
        return (f"two new builds start alike (parameters and every declared stream), so "
                f"{inside}; as its module is imported, the program draws from "
                f"{global_streams(target.drawn_at_import)} without a seed (an order or a "
                "split made at import), which "
                "each new interpreter draws otherwise: seed it before that draw")
    if isolation == "process" and first is not None:
        again = run_segment(SegmentSpec(
            target_spec=target.spec, config=config, start=0, stop=step, workdir=work,
            name="same-hash-seed", threads=threads, hash_seed=1,
        ), isolation, target)
        if again.error is None and first_difference(first.records[:step], again.records) is None:
            return (f"two new builds start alike and {inside}, but only between "
                    f"interpreters with different PYTHONHASHSEEDs: the program depends on "
                    f"{HASH_ORDER}")
    return (
        f"two new builds start alike (parameters and every declared stream), so {inside}, "
        "or the runs' own builds differed where two later ones do not: look for a random "
        "stream the program creates without a fixed seed (numpy.random.default_rng(), a "
        "Generator seeded from the clock), a seed or values read from the clock (a seed in "
        "whole seconds agrees between builds within one second), a nondeterministic kernel "
        "(torch.use_deterministic_algorithms(True))"
        + (", state one run leaves in a module or a class for the next (every run here "
           "shares one interpreter: a counter, or a cache the first build fills), or set "
           "iteration order (run with --isolation process to tell these two)"
           if isolation == "inprocess" else "")
    )


def _built_by_hash_seed(found: str, first: SegmentResult,
                        build: Callable[[str, int], SegmentResult], isolation: str) -> str:
    """Where two builds in fresh interpreters (PYTHONHASHSEED 1 and 2) hold a
    declared component otherwise: whether a third under the first's hash seed
    agrees with it, so that the hash seed is what differs (trial 157: a
    vocabulary numbered from a set read "the initial state of `vocab` differs
    at build", and nothing named the set)."""
    if isolation != "process" or not found.startswith("the initial state of"):
        return ""
    again = _built_states([first, build("initial-again", 1)])
    if again is None or _initial_difference(*again) is not None:
        return ""
    return (" between interpreters with different PYTHONHASHSEEDs only (two builds under one "
            f"agree): the program builds it from {HASH_ORDER}")


def _params_differ(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return PARAMS in a and PARAMS in b and digest(a[PARAMS]) != digest(b[PARAMS])


def _initial_difference(a: dict[str, Any], b: dict[str, Any]) -> str | None:
    """The first component (parameters, then streams, then the rest) that differs."""
    if _params_differ(a, b):
        return "initial parameters differ: the seed depends on the clock, or is missing"
    for name in a:
        if name == PARAMS or name not in b or not is_stream_state(a[name]):
            continue
        for key in sorted(set(a[name]) | set(b[name])):
            if key == "generators":
                gens_a, gens_b = a[name].get(key, {}), b[name].get(key, {})
                for gen in sorted(set(gens_a) | set(gens_b)):
                    if digest(gens_a.get(gen)) != digest(gens_b.get(gen)):
                        kind = ("torch Generator" if hasattr(gens_a.get(gen), "dtype")
                                else "numpy Generator")
                        return (f"{kind} `{gen}` differs at build: it is seeded from the clock "
                                "or not at all")
            elif digest(a[name].get(key)) != digest(b[name].get(key)):
                return (f"the {stream_label(key)} differs at build: the program seeds it from "
                        "the clock, or draws from it before seeding")
    for name in a:
        if name != PARAMS and name in b and digest(a[name]) != digest(b[name]):
            return f"the initial state of `{name}` differs at build"
    return None


def _no_tiny_batch(framework: str | None) -> str:
    """Why the gradient checks did not run: what the program lacks, or, for a
    framework target, that it cannot offer it (trial 142: a Trainer target was
    told what it "must offer", which its trainer_target has no way to give)."""
    if not framework:
        return "the program has no tiny_batch(size) and batch_loss(model, batch)"
    return (f"not run for a target trained with {framework}: these checks call the program's "
            "tiny_batch(size) and batch_loss(model, batch), which a framework target does not "
            "offer; a program of your own around the same model can")


def _gradient_checks(tgt: Target, config: dict[str, Any], size: int, m: int) -> list[BaselineCheck]:
    names = ("finite loss", "gradients vs finite differences", "gradient accumulation",
             "loss decreases")
    built = tgt.build(config)
    program = built.program
    if not (callable(getattr(program, "tiny_batch", None))
            and callable(getattr(program, "batch_loss", None))):
        why = _no_tiny_batch(getattr(program, "framework", None))
        return [BaselineCheck(name=n, status="skipped", detail=why) for n in names]
    model = _model(built)
    if model is None:
        return [BaselineCheck(name=n, status="skipped", detail="no nn.Module 'params' component")
                for n in names]
    model64 = copy.deepcopy(model).double().eval()  # dropout off, float64
    batch = _double(program.tiny_batch(size))
    switched: list[bool] = []

    def loss_of(mod: torch.nn.Module, b: Any) -> torch.Tensor:
        with _modes_kept(mod, switched):
            return program.batch_loss(mod, b)

    try:
        loss = loss_of(model64, batch)
    except Exception as exc:  # the program's: said, the checks before it kept
        return [BaselineCheck(name=names[0], status="failed",
                              detail=f"batch_loss(model, tiny_batch({size})) raised "
                              f"{type(exc).__name__}: {exc}")] + [
            BaselineCheck(name=n, status="skipped", detail="batch_loss raised (above)")
            for n in names[1:]]
    finite = bool(torch.isfinite(loss).all()) and loss.numel() == 1
    held = ("; batch_loss sets the model's train/eval mode (model.train()): held off here, "
            "where the checks run the model in eval mode, dropout off, so that every call "
            "computes the same function" if switched else "")
    checks = [BaselineCheck(
        name="finite loss", status="passed" if finite else "failed",
        detail=f"loss on a batch of {size}: {loss.detach().flatten()[0].item():.6g}{held}",
        figures={"loss": loss.detach().flatten()[0].item()},
    )]
    if not finite:
        return checks + [BaselineCheck(name=n, status="skipped", detail="the loss is not finite")
                         for n in names[1:]]
    if not loss.requires_grad:
        why = ("batch_loss returns a loss without a gradient (it runs under torch.no_grad() or "
               "inference_mode, or detaches the loss): there is no backward to check; return "
               "the loss as training computes it")
        return checks + [BaselineCheck(name=n, status="skipped", detail=why) for n in names[1:]]
    if loss.dtype != torch.float64:  # (a .float() in batch_loss, or autocast)
        checks.append(BaselineCheck(
            name=names[1], status="skipped",
            detail=f"batch_loss returns a {str(loss.dtype).removeprefix('torch.')} loss for a "
            "float64 model and batch (a cast inside it, such as .float(), or autocast): central "
            "differences at this step size are rounding noise in that dtype, not evidence "
            "either way; return the loss in the model's dtype to check the gradients"))
    else:
        checks.append(_finite_differences(model64, batch, loss_of))
    checks.append(_accumulation(model64, batch, loss_of, m))
    checks.append(_decreases(model64, batch, loss_of))
    return checks


@contextmanager
def _modes_kept(model: torch.nn.Module, switched: list[bool]) -> Iterator[None]:
    """While ``batch_loss`` runs: a ``train()`` or ``eval()`` call changes no
    module's mode (a batch_loss that calls ``model.train()``, as its training
    step does, would switch dropout on, and every call would then compute
    another function); one that sets ``.training`` itself is put back after.
    ``switched`` gets an entry for each attempt."""
    modes = [(mod, mod.training) for mod in model.modules()]
    original = torch.nn.Module.train

    def kept(self: torch.nn.Module, mode: bool = True) -> torch.nn.Module:
        if any(m.training != mode for m in self.modules()):
            switched.append(mode)
        return self

    torch.nn.Module.train = kept  # type: ignore[method-assign, assignment]
    try:
        yield
    finally:
        torch.nn.Module.train = original  # type: ignore[method-assign]
        for mod, mode in modes:
            if mod.training != mode:
                switched.append(mod.training)
                mod.training = mode


def _model(built: BuiltProgram) -> torch.nn.Module | None:
    comp = built.component(PARAMS)
    if comp is not None and isinstance(comp.obj, torch.nn.Module):
        return comp.obj
    model = getattr(built.program, "model", None)
    return model if isinstance(model, torch.nn.Module) else None


def _double(batch: Any) -> Any:
    if isinstance(batch, torch.Tensor):
        return batch.double() if batch.is_floating_point() else batch
    if isinstance(batch, (tuple, list)):
        return type(batch)(_double(b) for b in batch)
    return batch


def _split(batch: Any, m: int) -> list[Any]:
    if isinstance(batch, torch.Tensor):
        return list(batch.chunk(m))
    parts = [_split(b, m) for b in batch]
    return [type(batch)(p[i] for p in parts) for i in range(m)]


def _finite_differences(model: torch.nn.Module, batch: Any, loss_of, per_param: int = 4,
                        eps: float = 1e-6, rtol: float = 1e-4, atol: float = 1e-6) -> BaselineCheck:
    params = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    loss = loss_of(model, batch)
    grads = torch.autograd.grad(loss, [p for _, p in params])
    worst = (0.0, "", -1, 0.0, 0.0)
    failures = []
    checked = 0
    with torch.no_grad():
        for (name, p), g in zip(params, grads):
            flat, gflat = p.view(-1), g.reshape(-1)
            for i in sorted({round(j * (flat.numel() - 1) / max(1, per_param - 1))
                             for j in range(per_param)}):
                original = flat[i].item()
                flat[i] = original + eps
                plus = loss_of(model, batch).item()
                flat[i] = original - eps
                minus = loss_of(model, batch).item()
                flat[i] = original
                numeric, analytic = (plus - minus) / (2 * eps), gflat[i].item()
                error = abs(numeric - analytic)
                checked += 1
                if error > worst[0]:
                    worst = (error, name, i, analytic, numeric)
                if error > atol + rtol * abs(numeric) and name not in failures:
                    failures.append(name)
    error, name, index, analytic, numeric = worst
    figures = {"entries": checked, "max_abs_error": error, "worst_parameter": name,
               "worst_index": index, "autograd": analytic, "finite_difference": numeric}
    if failures:
        return BaselineCheck(
            name="gradients vs finite differences", status="failed",
            detail=f"autograd disagrees with central differences for {', '.join(failures)}: "
            f"worst {name}[{index}] autograd {analytic:.6g} vs numeric {numeric:.6g} "
            f"(a wrong backward?); {_agreeing(params, failures)}",
            figures=figures,
        )
    return BaselineCheck(
        name="gradients vs finite differences", status="passed",
        detail=f"{checked} entries of {len(params)} parameters agree in float64, "
        f"max error {error:.2g}",
        figures=figures,
    )


def _agreeing(params: list[tuple[str, torch.nn.Parameter]], failures: list[str]) -> str:
    """The parameters whose sampled entries agree, in words (a trial could not
    tell whether the others had been checked at all)."""
    agree = [n for n, _ in params if n not in failures]
    if not agree:
        return "no parameter's sampled entries agree"
    shown = ", ".join(agree[:6]) + (f" and {len(agree) - 6} more" if len(agree) > 6 else "")
    return f"the sampled entries of {shown} agree"


def _accumulation(model: torch.nn.Module, batch: Any, loss_of, m: int) -> BaselineCheck:
    error, scale, ok = _accumulation_error(model, batch, loss_of, m)
    detail = (f"{m} micro-batches accumulate to the gradient of the whole batch in eval mode "
              f"(dropout off, batch norm on its running statistics): max |Δ| {error:.2g}; "
              f"the check's own split through batch_loss, each loss divided by {m}, not the "
              "program's own accumulation loop (its steps are what the resume check compares)"
              if ok else f"{m} accumulated micro-batches differ from the whole batch by "
              f"{error:.3g} in eval mode (largest gradient {scale:.3g}): is the loss a mean, "
              "and independent of how the batch is split?")
    figures: dict[str, Any] = {"micro_batches": m, "max_abs_diff": error}
    in_training = _batch_norm_training_error(model, batch, loss_of, m)
    if in_training is not None:
        kinds, apart = in_training
        figures["max_abs_diff_batch_norm_training"] = apart
        detail += (f"; in training its {kinds} layers normalise each micro-batch by its own "
                   f"statistics: there accumulated micro-batches differ from the whole batch "
                   f"by {apart:.3g} (expected of batch norm; it matters only if the program "
                   "accumulates gradients)")
    return BaselineCheck(name="gradient accumulation", status="passed" if ok else "failed",
                         detail=detail, figures=figures)


def _batch_norm_training_error(model: torch.nn.Module, batch: Any, loss_of,
                               m: int) -> tuple[str, float] | None:
    """For a model with batch norm: its kinds, and how far accumulated
    micro-batches are from the whole batch with the batch norms training (each
    micro-batch normalised by its own statistics; dropout still off). None: no
    batch norm, or a micro-batch it cannot normalise."""
    norm = torch.nn.modules.batchnorm._BatchNorm
    kinds = sorted({type(mod).__name__ for mod in model.modules() if isinstance(mod, norm)})
    if not kinds:
        return None
    trained = copy.deepcopy(model).eval()
    for mod in trained.modules():
        if isinstance(mod, norm):
            mod.train()
    try:
        return ", ".join(kinds), _accumulation_error(trained, batch, loss_of, m)[0]
    except (RuntimeError, ValueError):  # (a micro-batch of one sample per channel)
        return None


def _accumulation_error(model: torch.nn.Module, batch: Any, loss_of,
                        m: int) -> tuple[float, float, bool]:
    """How far ``m`` accumulated micro-batches' gradient is from the whole
    batch's: (max |Δ|, the largest gradient, whether they agree)."""
    params = [p for p in model.parameters() if p.requires_grad]
    whole = torch.autograd.grad(loss_of(model, batch), params)
    summed = [torch.zeros_like(p) for p in params]
    for micro in _split(batch, m):
        for acc, g in zip(summed, torch.autograd.grad(loss_of(model, micro) / m, params)):
            acc += g
    error = max((a - b).abs().max().item() for a, b in zip(whole, summed))
    scale = max(g.abs().max().item() for g in whole) or 1.0
    ok = all(torch.allclose(a, b, rtol=1e-7, atol=1e-7) for a, b in zip(whole, summed))
    return error, scale, ok


def _decreases(model: torch.nn.Module, batch: Any, loss_of, steps: int = 5) -> BaselineCheck:
    trial = copy.deepcopy(model)
    opt = torch.optim.Adam(trial.parameters(), lr=1e-2)
    losses = []
    for _ in range(steps + 1):
        loss = loss_of(trial, batch)
        losses.append(loss.item())
        opt.zero_grad()
        loss.backward()
        opt.step()
    ok = losses[-1] < losses[0] and math.isfinite(losses[-1])
    return BaselineCheck(
        name="loss decreases", status="passed" if ok else "failed",
        detail=(f"{steps} steps of the check's own Adam (lr 1e-2, not the program's optimizer) "
                f"on one repeated batch: {losses[0]:.6g} -> {losses[-1]:.6g}"),
        figures={"losses": losses},
    )


