"""``resumecheck fuzz``: search interruption schedules with hypothesis.

Some resume bugs appear only when the interruption lands on an epoch
boundary, at step 1, or on the second of two resumes. The fuzzer draws
schedules (biased towards the program's boundaries and the extremes), runs
each as a resumed run against one shared reference, and shrinks the first
failure to the smallest schedule that still fails.

The reference is computed once and captures state at every step. Examples
through the program's own save/load replay their first half from step 0, as
``resumecheck run`` does; that replay is made once per first resume point and
reused (the determinism check proved it reproducible), never replaced by a
start from the engine's capture. Before a minimal schedule is reported, it is
run again exactly as its printed ``resumecheck run`` command runs it, and only
a failure that reproduces is reported.

Fuzzing an elastic resume (``nproc`` N, ``resume_nproc`` M): the schedule's
points are drawn as always; the first half runs at N ranks and every restart
at M, through the program's own checkpoint (the only one that can be
resharded), each example judged as ``resumecheck run --resume-nproc M`` judges
it, within a tolerance. A schedule fails when its continuation leaves the
tolerance with no unmapped per-rank state to explain it (``diverged``) or a
run fails; an ``inconclusive`` example (per-rank state that could not be
mapped could explain the difference) is counted and said, not reported as a
failure; a search that found no failure but judged not every example is
inconclusive (the command exits 5), not a pass.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from hypothesis import HealthCheck, Phase, Verbosity, assume, example, given
from hypothesis import settings as hypothesis_settings
from hypothesis import seed as hypothesis_seed
from hypothesis.errors import Unsatisfiable

from resumecheck.components import preserved_global_streams
from resumecheck.engine import Checker, hash_order_notice, run_check, save_moves
from resumecheck.environment import fingerprint
from resumecheck.errors import BudgetExhausted, InvalidArgument, ModuleStateChanged, SaveMovesState
from resumecheck.evidence import EPOCH_AGAIN
from resumecheck.program import (
    Target, declares_no_epochs, ends_inside, epoch_boundaries, load_target,
)
from resumecheck.progress import ProgressCallback, ProgressTracker
from resumecheck.report import (
    CLOSE, CONFIRMED, FAILED, IDENTICAL, INCONCLUSIVE, NOT_CAUSE, RESUME_CODE_UNCHECKED,
    RunResult,
    caveats, isolation_made, restarts_text, seed_text, unseeded_notice,
)
from resumecheck.faults import environment_failure
from resumecheck.interrupt import scratch_directory
from resumecheck.phrases import (
    HASH_ORDER_UNCHECKED, NOT_STEPPED_MODULE, UNCOMPARED_SEE, at_the_point, at_the_schedule,
    drawn_at_import_text, first_line, lost_uncompared, paths_said, side_files,
)
from resumecheck.reproduce import reproduce_command
from resumecheck.settings import Settings
from resumecheck.streams import is_stream_detail
from resumecheck.strategies import interruption_schedules
from resumecheck.verdict import later_epoch_untried

__all__ = ["FuzzResult", "fuzz", "run_fuzz"]

SCHEMA = "resumecheck.fuzz/1"


def _and(steps: list[int]) -> str:
    """``5, 10 and 15``."""
    words = [str(s) for s in steps]
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def _shrink_reached(failure: RunResult | None, boundaries: list[int],
                    covered: list[int], otherwise: Sequence[Mapping[str, Any]] = ()) -> str:
    """The epoch boundaries the failing schedule resumes at that no drawn
    example did, in words ('' where none): the shrink reached them (a trial
    read "no example drawn resumed at any" beside a failure at a boundary as
    a contradiction); and those that the earlier schedules which fail
    otherwise resume at (``otherwise``: trial 511 read "no example tried
    resumed at any" beside "resuming at 6 fails otherwise")."""
    shrunk = [k for k in (failure.resume_at if failure else [])
              if k in boundaries and k not in covered]
    earlier = list(dict.fromkeys(k for tried in otherwise for k in tried["resume_at"]
                                 if k in boundaries and k not in covered and k not in shrunk))
    return ((f", and the shrink of the failure reached {_and(shrunk)}" if shrunk else "")
            # (trial 526 read "no example tried resumed at any, and the search for an
            # earlier failure tried 12" twice: the search came after the examples)
            + (f"; the search for an earlier failure, after them, resumed at {_and(earlier)}"
               if earlier else ""))


@dataclass(kw_only=True)
class FuzzResult:
    """What a fuzzing session tried and, if it found one, the minimal failing schedule."""

    target: str
    steps: int
    seed: int | None
    max_interruptions: int
    base_seed: int | None | str = "?"
    """The program's own seed where no ``seed`` was asked (``Report``'s
    ``noise["base_seed"]``: None, not known; ``"?"``: not looked at)."""
    seeded_by: str | None = None
    """A framework target's adapter, where it seeds the build (``seed_text``)."""
    isolation: str = "inprocess"
    """How each restart ran: ``inprocess`` or ``process`` (fresh interpreters)."""
    examples: int = 0
    distinct_schedules: int = 0
    boundaries: list[int] = field(default_factory=list)
    boundaries_covered: list[int] = field(default_factory=list)
    epochs_declared: bool = False
    """The program says where its epochs end (even none before its last step)."""
    no_epochs: bool = False  # (it says it has none: ``epoch_boundaries = []``)
    inside: list[int] = field(default_factory=list)  # (those whose epoch ends in the next step)
    budget_exhausted: bool = False
    fast_start: bool = False
    """Own-checkpoint examples reused an earlier one's replayed first half (same first point)."""
    failure: RunResult | None = None
    """The earliest failing full resume found, as ``resumecheck run`` reports it."""
    minimal: bool | None = None
    """No resume point of the failure can be dropped, nor moved earlier with the others kept,
    and it still fail (False: the time budget stopped that search first; None: no failure)."""
    shrunk_from: list[int] | None = None
    """The first failing schedule drawn, where the failure is another (None: none)."""
    shrunk_from_loss_diff: float | None = None
    """That schedule's largest |Δloss| (None: none, or not known)."""
    shrunk_from_diagnosis: list[str] = field(default_factory=list)
    """That schedule's findings (``component: detail``), where they are not the
    failure's (trial 546: shrunk to resume at 1, where a rebuilt EMA equals the
    lost one, only its counter was named; at 16 every weight was)."""
    failing_losses: list[float] = field(default_factory=list)
    """The largest |Δloss| of each failing schedule the search and its shrink
    tried (trial 530: where none changed a step's loss, "at other resume
    points the same fault may change the training" read as found)."""
    failing_otherwise: list[dict[str, Any]] = field(default_factory=list)
    """Schedules the shrink tried that fail, but not as the failure does (each
    ``resume_at`` and ``how``: ``end state alone``, ``other components``, or
    ``failed``: a step or a restore raised), so not taken for it (a trial read
    "minimal" where an earlier one failed)."""
    declared_state_notice: str | None = None
    """When the failure's report found the declared components incomplete, its sentence."""
    undeclared: list[str] | None = field(default_factory=list)
    """What is not compared, as ``resumecheck run`` words it (``Report.undeclared``)
    for the failing schedule, or, when none failed, for the program's default
    resume point (a trial: fuzz passed, silent, a checkpoint that lost an EMA
    that `run` named). None: not looked at (the time budget ran out first, or
    an elastic resume, which ``run`` does not look at either)."""
    latent_gaps: list[str] = field(default_factory=list)
    """Where no schedule failed: the full resume's latent gaps at the default
    resume point, as ``run`` words them (trial 248: fuzz said nothing of one)."""
    default_run: str | None = None
    """The ``run`` command of the look at what is not compared (``fuzz --strict``'s)."""
    caveats: list[str] = field(default_factory=list)
    """Where no schedule failed: what ``run`` says it cannot see at the default
    resume point (``Report.caveats``; trial 155: a seed set again in the script's
    resume path passed fuzz with nothing said), but a draw at import (above)."""
    resumed_at: list[int] = field(default_factory=list, repr=False)  # (by any example)
    set_order: str | None = None
    """In-process: the WARNING ``run`` gives on an order that follows the hash seed
    (``Report.set_order``; trial 149: a hash() of a string, fuzz silent)."""
    unseeded_notice: str | None = None
    """Two launches of the program differ (it draws from a global stream it
    never seeds): the warning ``run`` gives too (None: they do not)."""
    side_files: str | None = None
    """Where no schedule failed: the files the program's save() wrote (or its
    load() read) beside its checkpoint at the default resume point, in
    ``run``'s words (a restart from an earlier checkpoint reads what a later
    save wrote there, which no schedule fuzz draws does: trial 139); None: none."""
    drawn_at_import: list[str] = field(default_factory=list)
    """The global streams the program's module drew from without a seed as it
    was imported (``Report.drawn_at_import``): in-process every example shares
    what it drew, which a real restart draws again (trial 142)."""
    unreproduced: list[list[int]] = field(default_factory=list)
    """Schedules that failed while fuzzing but not when run again as their
    reproduce command runs them (not reported as failures)."""
    reference_loss: list[float] = field(default_factory=list)
    """The uninterrupted reference's loss at steps 1..N (what a plot compares with)."""
    environment: dict[str, Any] = field(default_factory=dict)
    nproc: int | None = None
    """Ranks of every run (None: one process)."""
    resume_nproc: int | None = None
    """Elastic resume: the ranks of every restart (None: as many as ``nproc``)."""
    inconclusive: list[list[int]] = field(default_factory=list)
    """Elastic resume: schedules whose continuation left the tolerance while per-rank
    state could not be mapped (not judged, not failures)."""
    inconclusive_why: str | None = None
    """The first of those examples' explanation."""

    @property
    def found(self) -> bool:
        return self.failure is not None

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "target": self.target,
            "steps": self.steps,
            "seed": self.seed,
            "base_seed": None if self.base_seed == "?" else self.base_seed,
            "max_interruptions": self.max_interruptions,
            "isolation": isolation_made(self.isolation, self.nproc),
            "examples": self.examples,
            "distinct_schedules": self.distinct_schedules,
            "boundaries": self.boundaries,
            "boundaries_covered": self.boundaries_covered,
            "budget_exhausted": self.budget_exhausted,
            "fast_start": self.fast_start,
            "found": self.found,
            "minimal": self.minimal, "shrunk_from": self.shrunk_from,
            "shrunk_from_loss_diff": self.shrunk_from_loss_diff,
            "failing_losses": list(self.failing_losses),
            "shrunk_from_diagnosis": list(self.shrunk_from_diagnosis),
            "failing_otherwise": list(self.failing_otherwise),
            "failure": self.failure.to_json() if self.failure else None,
            "reference_loss": list(self.reference_loss),
            "unreproduced": self.unreproduced,
            "declared_state_notice": self.declared_state_notice,
            "undeclared": None if self.undeclared is None else list(self.undeclared),
            "unseeded_notice": self.unseeded_notice,
            "set_order": self.set_order,
            "caveats": list(self.caveats),
            "latent_gaps": list(self.latent_gaps),
            "side_files": self.side_files,
            "drawn_at_import": list(self.drawn_at_import),
            "environment": self.environment,
            "nproc": self.nproc,
            "resume_nproc": self.resume_nproc,
            "inconclusive": self.inconclusive,
            "inconclusive_why": self.inconclusive_why,
        }

    def summary(self) -> str:
        # (trial 164 read "found in 1 example" as the shrink's count too: it is
        # the examples drawn, the first failure's the last of them)
        tried = (f"{self.examples} example{'' if self.examples == 1 else 's'} tried "
                 f"({self.distinct_schedules} distinct schedule"
                 f"{'' if self.distinct_schedules == 1 else 's'}{_edges(self)})")
        if self.failure is None and not self.examples and self.inconclusive_why:
            return f"inconclusive: {self.inconclusive_why}"
        if self.failure is None:
            cut = "; the time budget ran out first" if self.budget_exhausted else ""
            # (a trial: every elastic example inconclusive, and the search passed)
            head = ("inconclusive: " if self.inconclusive else "") + "no failing schedule"
            return f"{head} in {tried}{cut}{_passed_notes(self, bool(cut))}{_unjudged(self)}"
        schedule = self.failure.resume_at
        at = ",".join(map(str, schedule)) + _at_edges(self.boundaries, schedule)
        if self.minimal:
            return (f"minimal failing schedule: resume at {at}{_shrunk(self)}, found after "
                    f"{tried}{_failing_otherwise(self.failing_otherwise)}{_silent_here(self)}")
        return (f"failing schedule: resume at {at}{_shrunk(self)}, found after {tried}; not shown "
                "to be minimal: "
                f"the time budget ran out before every earlier resume point was tried"
                f"{_silent_here(self)}")

    def render(self, fmt: Literal["table", "json", "markdown"] = "table") -> str:
        import json

        if fmt == "json":
            return json.dumps(self.to_json(), indent=2)
        env = self.environment
        seed = seed_text(self.seed, self.base_seed, self.seeded_by)
        lines = [
            f"resumecheck fuzz: {self.target}, {self.steps} steps, up to "
            f"{self.max_interruptions} interruption(s), {seed}, "
            f"{restarts_text(self.isolation, self.nproc, self.resume_nproc)}; torch "
            f"{env.get('torch')}, {env.get('threads')} thread(s), {env.get('device')}",
            self.summary(),
        ]
        run = self.failure
        if run is not None:
            quantity = run.first_divergent_quantity
            lines.append(f"  {run.label}: {run.verdict}"
                         # (a trial read "from step 20 (state of data_cursor)" as a step
                         # that differed, where only the end state did, as `run` says)
                         + (f" in the {quantity} at the end (no step departs)"
                            if quantity is not None and quantity.startswith("state of ")
                            else f" from step {run.first_divergent_step} ({quantity})"
                            if quantity is not None
                            else f" at step {run.first_divergent_step}"
                            if run.first_divergent_step is not None else "")
                         + (", but a save right after the load departs"
                            if run.lost_on_resave() else ""))
            if run.failure:
                lines.append(f"  failure: {first_line(run.failure)}")
            lines += _finding_lines(run, self.declared_state_notice)
            first = ",".join(map(str, self.shrunk_from or []))
            lines += [f"  at the first to fail, resume at {first}: {said}"
                      for said in self.shrunk_from_diagnosis]
            lines.append(f"  why: {run.explanation}")
            lines.append(f"  reproduce: {run.reproduce}")
        lines += _closing_lines(self)
        return _markdown(self, lines) if fmt == "markdown" else "\n".join(lines) + "\n"


def _closing_lines(result: FuzzResult) -> list[str]:
    """A fuzz report's lines after the failing schedule's own indented ones (a
    trial found them parted from their schedule by the not-compared lines)."""
    lines = [f"WARNING: {notice}" for notice in (
        result.declared_state_notice, result.unseeded_notice, result.set_order) if notice]
    lines += [f"not compared: {what}" for what in result.undeclared or []]
    if result.latent_gaps and result.failure is None:
        lines.append(f"latent gap at the default resume point: {', '.join(result.latent_gaps)}: "
                     "the resume leaves it otherwise than the uninterrupted run, in state no "
                     "step after it read here; a longer run, or a resume point before the "
                     "step that reads it, shows whether it matters")
    lines += result.caveats if result.failure is None else []  # (as run's last lines)
    if result.failure is None and not result.caveats and result.isolation == "inprocess" \
            and not result.nproc and not result.set_order:  # (trial 149: a hash() order)
        lines.append(HASH_ORDER_UNCHECKED)
    return lines


def _markdown(result: FuzzResult, lines: list[str]) -> str:
    """A fuzz report's lines (``render``'s) as Markdown."""
    verdict = ("failing schedule FOUND" if result.found else "INCONCLUSIVE"
               if result.inconclusive else "no failing schedule")
    head = [f"### resumecheck fuzz: {verdict} — `{result.target}`", "", lines[0], "",
            lines[1], ""]
    body = [line.strip() for line in lines[2:]]
    return "\n".join(head + [
        f"- **reproduce**: `{line.removeprefix('reproduce: ')}`"
        if line.startswith("reproduce:") else f"- {line}" for line in body
    ]) + "\n"


class _ScheduleFails(Exception):
    def __init__(self, result: RunResult) -> None:
        self.result = result
        super().__init__(result.explanation)


def fuzz(
    target: Target | str | None = None,
    *,
    steps: int | None = None,
    max_examples: int = 100,
    budget: float = 60.0,
    max_interruptions: int = 2,
    seed: int | None = None,
    isolation: Literal["inprocess", "process"] = "inprocess",
    threads: int = 1,
    progress: ProgressCallback | None = None,
    timeout: float | None = None,
    jobs: int | None = None,
    nproc: int | None = None,
    resume_nproc: int | None = None,
) -> FuzzResult:
    """Search resume schedules of ``target`` for one whose full resume is not identical.

    At most ``max_examples`` schedules are tried, the program's default resume
    point first.

    ``budget`` bounds the search in seconds, a run in progress included (it is
    stopped); shrinking a failure found gets as long again. ``timeout`` bounds
    each step, as in ``verify()``. ``progress`` receives a ``ProgressEvent``
    per example (``unit`` examples; ``total`` the examples that fit in
    ``max_examples`` and the budget at the pace so far), and per shrinking step.
    ``seed`` is the run's seed, as in ``verify`` (None: the program's own),
    and seeds hypothesis's search (None: 0). ``jobs``: hypothesis draws one
    example at a time; shrinking tries the candidate points of a resume point
    ``jobs`` at a time, with the same result for any ``jobs``. ``nproc`` runs
    every segment as that many ranks, as in ``verify``; ``resume_nproc`` fuzzes
    the elastic resume: every restart at that many ranks (see the module's notes).
    """
    settings = Settings(steps=steps, seed=seed, isolation=isolation, threads=threads,
                        timeout=timeout, jobs=jobs, drop="none", noise_seeds=0, nproc=nproc,
                        resume_nproc=resume_nproc)
    return run_fuzz(target, settings, max_examples=max_examples, budget=budget,
                    max_interruptions=max_interruptions, progress=progress)


def run_fuzz(target: Target | str | None, settings: Settings, *, max_examples: int = 100,
             budget: float = 60.0, max_interruptions: int = 2,
             progress: ProgressCallback | None = None) -> FuzzResult:
    """``fuzz`` with its settings already built (the CLI builds them)."""
    tgt = target if isinstance(target, Target) else load_target(target)
    s = settings.for_target(tgt)
    n = s.n
    if not isinstance(max_examples, int) or max_examples < 1:
        raise InvalidArgument("max_examples", max_examples, "expected an int >= 1")
    if not (isinstance(budget, (int, float)) and budget > 0):
        raise InvalidArgument("budget", budget, "expected a number of seconds > 0")
    if not isinstance(max_interruptions, int) or not 1 <= max_interruptions <= n - 1:
        raise InvalidArgument("max_interruptions", max_interruptions, f"expected an int in 1..{n - 1}")
    say = _progress(progress, max_examples, budget)
    result = FuzzResult(
        target=tgt.spec or tgt.name, steps=n, seed=s.seed, max_interruptions=max_interruptions,
        isolation=s.isolation, environment=fingerprint(s.threads), nproc=s.nproc,
        resume_nproc=s.resume_nproc, drawn_at_import=list(tgt.drawn_at_import),
    )
    with scratch_directory("resumecheck-fuzz-") as work, preserved_global_streams(), \
            _hypothesis_storage(Path(work) / "hypothesis"):
        try:
            say("reference")
            # (an elastic resume restarts from the program's own checkpoint only; the
            # captures are what its state right after a load is compared with: a
            # trial's shrink found no blame before the default point, and called it
            # minimal)
            checker = Checker(tgt, s, work, capture_at=list(range(1, n)), reuse_prefix=True)
            _check_elastic(checker)
            result.reference_loss, result.base_seed = checker.reference.loss, checker.base_seed()
            result.seeded_by = checker.segment.boundaries.get("seeded_by")
            result.unseeded_notice = unseeded_notice(checker.determinism)
            if s.isolation == "inprocess" and (s.nproc or 1) == 1:
                result.set_order = hash_order_notice(checker)
            checker.check_disk(runs=1, jobs=checker.jobs)
            _refuse_moving_saves(checker, tgt, s)
            _epochs(result, checker.segment.boundaries)
            result.fast_start = checker.reuse_prefix
            _search(checker, result, s.points, result.boundaries, max_examples, budget, say)
            if result.failure is not None:
                result.failure = _reproduced(tgt, s, result, say)
                if _unnamed(result, checker.resume_at):
                    _named_at_the_default(checker, result, budget, say)
            else:
                result.undeclared = _not_compared(checker, result, budget, say)
        except ModuleStateChanged as exc:  # (the same search, in fresh interpreters)
            raise ModuleStateChanged(exc.target, exc.changed, None if tgt.spec is None else
                                     reproduce_command(
                "fuzz", tgt.spec, steps=n, seed=s.seed, threads=s.threads, isolation="process",
                timeout=s.timeout, search=(max_examples, max_interruptions, budget))) from None
        except Exception as exc:
            failure = environment_failure(exc, work)
            if failure is None or failure is exc:
                raise
            raise failure from exc
    return result


def _edges(result: FuzzResult) -> str:
    """Which of the program's epoch boundaries before its last step a schedule resumed at."""
    if not result.boundaries:  # (a trial read "before its last step" as "declares later")
        # (two trials read a comma there as joining the count and the boundaries; a
        # bandit's user looked for what to say of data with no epochs)
        # (a trial read "before its last step" of epoch_boundaries = [] as odd)
        return ("; the program declares epoch_boundaries = []: it has no epochs"
                if result.no_epochs else
                "; the program declares no epoch boundary before its last step"
                if result.epochs_declared else
                "; the program does not say where its epochs end, so no schedule was aimed "
                "at one: steps_per_epoch or epoch_boundaries say it, and epoch_boundaries "
                "= [] that it has none")
    # (said of the schedules tried, not of the failing one beside it; a trial
    # read "among them resumes at epoch boundary 8 of 8, 16" as hard to parse)
    # (a trial read "they resumed at none" beside a minimal schedule at a
    # boundary as said of that schedule: it is said of the examples drawn)
    # (a trial read "the examples drawn resumed at none" as hard to read)
    reached = _shrink_reached(result.failure, result.boundaries, result.boundaries_covered,
                              result.failing_otherwise)
    # (trial 436: fuzz's boundary 4 was run's "an epoch ends inside step 5")
    inside = (f" (an epoch ends inside the step after {_and(result.inside)})"
              if result.inside else "")
    if not result.boundaries_covered:
        return (f"; of the program's epoch boundaries, {_and(result.boundaries)}{inside}, no "
                f"example tried resumed at any{reached}")
    return (f"; of the program's epoch boundaries, {_and(result.boundaries)}{inside}, the "
            f"examples tried resumed at {_and(result.boundaries_covered)}{reached}")


def _epochs(result: FuzzResult, declared: dict[str, Any]) -> None:
    """Where the program's epochs end (whole, fractional or declared), and what it says of them
    (trial 164: a program without epochs had no way to say so; ``epoch_boundaries = []`` does)."""
    result.boundaries = epoch_boundaries(declared, result.steps)
    result.inside = sorted(ends_inside(declared, result.steps))
    result.epochs_declared = any(declared.get(key) is not None
                                 for key in ("epoch_boundaries", "steps_per_epoch"))
    result.no_epochs = declares_no_epochs(declared)


def _refuse_moving_saves(checker: Checker, tgt: Any, s: Settings) -> None:
    """A program whose own save() changes state that training reads cannot be
    fuzzed against one reference (``SaveMovesState``): refuse it, before any
    example (a trial: fuzzing passed such a program that ``run`` failed)."""
    if s.resume_nproc is not None:
        return
    at, moved = save_moves(checker)
    if moved:
        raise SaveMovesState(tgt.spec or tgt.name, at, moved, None if tgt.spec is None else
                             reproduce_command("run", tgt.spec, steps=s.n, seed=s.seed,
                                               threads=s.threads, isolation=s.isolation,
                                               resume_at=list(s.points)))


def _check_elastic(checker: Checker) -> None:
    """An elastic resume crosses world sizes through the program's own checkpoint
    only: refuse one without, before any example."""
    s = checker.settings
    if s.resume_nproc is not None and not checker.segment.has_own_checkpoint:
        raise InvalidArgument(
            "resume_nproc", s.resume_nproc,
            f"{checker.target.name} has no save()/load() of its own: the engine's captures "
            f"hold each rank's state apart and cannot be resharded for {s.resume_nproc} "
            "rank(s), so no schedule can be fuzzed elastically; fuzz it without "
            "--resume-nproc, or give the program save() and load()")


def _progress(progress: ProgressCallback | None, max_examples: int,
              budget: float) -> Callable[..., None]:
    """``say(line, example=False)``: a progress event per example (``total``: the
    examples that fit in ``max_examples`` and the budget at the pace so far), and
    one as each starts, which names a warning it gives (trial 590: named by the
    example before)."""
    planned = max_examples  # (the default schedule first, then what hypothesis draws)
    tracker = ProgressTracker(progress, "fuzz", unit="examples", total=planned) \
        if progress else None

    def say(line: str, example: bool = False) -> None:
        if tracker is None:
            return
        if example:
            elapsed = time.monotonic() - tracker.started
            fit = (tracker.done + 1) * budget / elapsed if elapsed > 0 else max_examples
            tracker.total = max(tracker.done + 1, min(planned, fit))
        elif line.startswith("shrinking"):
            tracker.total = None
        tracker.emit(line, advance=1 if example else 0)
    return say


def _reproduced(tgt: Target, settings: Settings, result: FuzzResult,
                say: Callable[[str], None]) -> RunResult | None:
    """Run the minimal schedule again as its reproduce command does (a fresh
    check: same target, steps, seed, isolation, threads and timeout,
    ``--drop none``) and return that run's full resume if it fails; else
    record the schedule as unreproduced and return None."""
    assert result.failure is not None
    schedule = result.failure.resume_at
    say(f"reproducing: resume at {','.join(map(str, schedule))} as `resumecheck run` does")
    again = replace(settings, resume_at=tuple(schedule), drop="none", noise_seeds=0,
                    check_determinism=False)
    report = run_check(tgt, again)
    result.undeclared = at_the_schedule(report.undeclared, schedule)  # (however it ends)
    if report.equivalent:
        result.unreproduced.append(list(schedule))
        return None
    # (its `not compared` lines are printed below it: trial 152 was sent to `run`)
    result.declared_state_notice = report.incomplete_state_notice(
        lines_shown=bool(result.undeclared))
    return report.full_resume


_AT_IMPORT = "not checked in-process: as your module was imported"
"""How ``run``'s caveat on a draw at import opens (fuzz's summary says it already)."""


def _unjudged(result: FuzzResult) -> str:
    """The elastic examples that could not be judged, in words."""
    if not result.inconclusive:
        return ""
    n, schedules = len(result.inconclusive), list(dict.fromkeys(map(tuple, result.inconclusive)))
    return (f"; {n} of them inconclusive, not judged (resume at "  # (each schedule once)
            + " and ".join(",".join(map(str, s)) for s in schedules[:3])
            + (" and more" if len(schedules) > 3 else "") + f"): {result.inconclusive_why}")


def _at_edges(boundaries: list[int], schedule: list[int]) -> str:
    """`` (an epoch boundary)`` when a failing schedule resumes at one ('' else)."""
    hit = [k for k in schedule if k in boundaries]
    if not hit:
        return ""
    if len(schedule) == 1:
        return " (an epoch boundary)"
    return f" ({_and(hit)} {'is an epoch boundary' if len(hit) == 1 else 'are epoch boundaries'})"


NONE_TO_ITS_END = (
    "no example ran to its end: the first, resume at {0}, was stopped when the time budget "
    "({1:g} s) ran out, so nothing was judged; a step that hangs after a restart shows as "
    "that (resumecheck run {2} --resume-at {0} --timeout SECONDS says where it waits), and a "
    "program slower than the budget needs a larger --budget")
"""A search whose budget ran out before its first example ended (trial 462: a
program that hung after every restart read "no failing schedule in 0 examples
tried", exit 0)."""


def _first_failure(result: FuzzResult, first: RunResult) -> None:
    """What the first failing schedule showed, where the failure was shrunk
    from it: its largest |Δloss| and the findings the failure's lack."""
    if result.shrunk_from and result.failure is not None:
        result.shrunk_from_loss_diff = first.max_abs_loss_diff
        result.shrunk_from_diagnosis = _other_findings(first, result.failure)


def _other_findings(first: RunResult, final: RunResult) -> list[str]:
    """The first failing schedule's findings, ``component: detail``, where any
    is not among the failure's (by component and detail)."""
    # (trial 894: a stream not judged there read, without its mark, as the cause)
    said = [f"{f.component}: {f.detail}{f.mark_in(first, None)}" for f in first.diagnosis
            if not f.put_back()]
    kept = {f"{f.component}: {f.detail}{f.mark_in(final, None)}" for f in final.diagnosis}
    return said if any(s not in kept for s in said) else []


def _unless_same(first: Sequence[int], final: Sequence[int]) -> list[int] | None:
    """The first failing schedule drawn, where the failure reported is another."""
    return None if list(first) == list(final) else list(first)


def _shrunk(result: FuzzResult) -> str:
    """Where the failure was shrunk from another schedule, the first drawn that
    failed (trial 200 read "resume at 1, found after 1 example drawn" beside a
    default resume point of 9, and could not tell where 1 came from)."""
    if not result.shrunk_from:
        return ""
    # (trials 705, 714: "found after 1 example tried" beside a shrink read as a contradiction)
    return (f" (shrunk from resume at {','.join(map(str, result.shrunk_from))}, the first to "
            "fail, by schedules of its own, not counted among the examples)")


def _silent_here(result: FuzzResult) -> str:
    """Of a failure whose loss differs at no step: that the search keeps the
    smallest failing schedule, not the one that shows most, and what the first
    to fail showed (trial 473: a lost growth count of a loss scaler shrank to a
    schedule where only the scale differed, and read as cosmetic; its relaunch
    at other points changed the loss. Trial 469: the first to fail had
    departed in the loss, which the summary did not say)."""
    failure = result.failure
    if failure is None or failure.max_abs_loss_diff != 0:
        return ""
    first = ",".join(map(str, result.shrunk_from or []))
    loss = result.shrunk_from_loss_diff
    before = (f", where the first to fail, resume at {first}, changed it by up to {loss:.3g}"
              if first and loss else f", nor did the first to fail, resume at {first}"
              if first and loss == 0 else "")
    if failure.lost_on_resave():
        # (trial 839: "a resume point not tried (--resume-at K)" of a position every save
        # until the next epoch lost: each single resume was exact, two resumes departed)
        k = failure.resume_at[0]
        return (f"; no step's loss differs at this schedule{before}: what fails it is a save "
                "right after your load(), whose restart departs (lost on resave); two resumes "
                f"with steps between (resumecheck run --resume-at {k},K2, K2 a few steps after "
                f"{k}) show whether a save after steps, before your code sets the state again, "
                "loses it too")
    tried = result.failing_losses
    # (trial 601: an EMA's lost counter, which no loss reads, at 7 and at 1 alike, read
    # "at other resume points the same fault may change the training ... shows one")
    if not any(tried) and (len(tried) > 1 or (first and loss == 0)):
        nor = (f"any of the {len(tried)} failing schedules tried" if len(tried) > 1
               else f"the first to fail, resume at {first}")
        if NOT_STEPPED_MODULE in (failure.first_divergent_quantity or ""):
            # (trial 822: an EMA's lost count, read by evaluation alone, was pointed at
            # other resume points, where no training loss reads it either)
            return (f"; no step's loss differs at this schedule, nor at {nor}: what differs "
                    f"is {NOT_STEPPED_MODULE}, which no training step's loss reads (an average "
                    "of the weights): what uses it, an evaluation, shows it, which the check "
                    "does not compare")
        return (f"; no step's loss differs at this schedule, nor at {nor}: the state it loses "
                "may reach no step's loss, or reach one only from a resume point not tried "
                "(resumecheck run --resume-at K checks one)")
    return (f"; no step's loss differs at this schedule{before}: the search keeps the smallest "
            "failing schedule, not the one that shows most, and at other resume points the "
            "same fault may change the training (resumecheck run --resume-at K checks one)")


def _failing_otherwise(tried: list[dict[str, Any]]) -> str:
    """What a minimal failure's summary adds where the shrink tried earlier or
    shorter schedules that fail otherwise (in the end state alone, blaming
    other components, or failing outright): "minimal" is said of the
    schedules that fail as it does."""
    if not tried:
        return ""
    its = "its" if len(tried) == 1 else "their"
    ways = {"end state alone": f"in {its} end state alone",
            "lost on resave": ("only where a save right after the load, and a resume from "
                               "it, departs: lost on a second resume"),
            "other components": "blaming other components",
            # (trial 494: resuming at 1 to 4 lost the same counter, undeclared there, and
            # "fail otherwise" read as another failure)
            "no component": ("naming no declared component: state the components do not "
                             "declare may be the same fault's, `resumecheck run` of it names "
                             "what it keeps outside them"),
            "failed": "a step or a restore raising: see `resumecheck run` of it",
            # (trial 600: a Trainer's fetch before its restore, which the correct twin's
            # resume failed on too)
            "engine departs": ("where the engine's own full resume departs too, a cause "
                               "the checkpoint may not hold: `resumecheck run` of it says "
                               "which"),
            # (trials 653, 659: a framework's loader that keeps no place, at any program)
            "epoch again": ("reading the epoch again from its start, as a framework's "
                            "training loader that keeps no place in its epoch does after any "
                            "resume inside one")}
    how = " or ".join(ways[h] for h in ways if any(t["how"] == h for t in tried))
    at = [f"at {','.join(map(str, t['resume_at']))}" for t in tried[:4]]
    if len(tried) > 4:
        at.append(f"{len(tried) - 4} more")
    said = at[0] if len(at) == 1 else f"{', '.join(at[:-1])} and {at[-1]}"
    return (f"; minimal among the schedules that fail as it does: resuming {said} "
            f"fail{'s' if len(tried) == 1 else ''} otherwise ({how})")


def _passed_notes(result: FuzzResult, cut: bool) -> str:
    """What a search that found no failing schedule adds to its summary
    (``cut``: its time budget ran out first)."""
    odd = ""
    if result.unreproduced:
        odd = ("; failures seen at resume at "
               + " and ".join(",".join(map(str, s)) for s in result.unreproduced)
               + " did not fail again when run again as `resumecheck run` runs it (not "
               "reported): a program that fails only some of the times it runs (a fault that "
               "comes and goes, a read that may fail) cannot be judged; if it trains alike "
               "every time, please report this to resumecheck")
    if result.drawn_at_import and result.isolation == "inprocess" and not result.nproc:
        odd += f"; not checked in-process: {drawn_at_import_text(result.drawn_at_import)}"
    if result.side_files:  # (trial 139: a step count kept beside the checkpoint passed)
        odd += (f"; {result.side_files} outside the checkpoint path it was given: a resume "
                "from an earlier checkpoint reads what a later save wrote there, which no "
                "schedule here tries: keep that state in the checkpoint")
    lost = lost_uncompared(result.undeclared or [])
    if lost:  # (as `run` words an equivalent resume that ends otherwise)
        odd += ("; not compared, and your own resume ends otherwise with: "
                + paths_said(lost) + " (see below)")
    elif result.undeclared is None and result.resume_nproc is None:
        # (a trial read "the time budget ran out first" twice over)
        # (trial 195: "what is not compared was not looked at" read as a riddle)
        # (trial 426: "ran out first; so state ... was not looked for" read as a riddle)
        odd += (", before the run that looks for state your program keeps outside its "
                "declared components" if cut else "; state your program keeps outside its "
                "declared components was not looked for, the time budget ran out first"
                ) + " (`resumecheck run` lists it as `not compared`)"
    return odd


def _unnamed(result: FuzzResult, default: Sequence[int]) -> bool:
    """A failure found whose run names no cause, no declared component and
    nothing not compared, at a schedule other than the default resume point:
    what ``resumecheck run`` names there may be it."""
    failure = result.failure
    return (failure is not None and not failure.diagnosis and not result.undeclared
            and list(failure.resume_at) != list(default))


def _named_at_the_default(checker: Checker, result: FuzzResult, budget: float,
                          say: Callable[[str], None]) -> None:
    """A failure found that names nothing (``_unnamed``) gets what ``resumecheck
    run`` names as not compared at the default resume point, said so (trial 183:
    shrunk to resume at 1, where a collator's own generator could not be named,
    the failure named no cause; at 8 it was)."""
    caveats_then = result.caveats  # (a failure's caveats are its own)
    result.undeclared = _not_compared(checker, result, budget, say)
    result.caveats = caveats_then
    if result.undeclared:
        points = ",".join(map(str, checker.resume_at))
        result.declared_state_notice = (
            (result.declared_state_notice or "") + " The schedule found names nothing not "
            "compared; the default resume point does: the `not compared` lines below are "
            f"`resumecheck run`'s at {points}.").strip()


def _not_compared(checker: Checker, result: FuzzResult, budget: float,
                  say: Callable[[str], None]) -> list[str] | None:
    """What ``resumecheck run --drop none`` names as not compared at the
    program's default resume point: its full resume again (the program's own
    and the engine's), now looking at what the program holds beside the
    declared components at their ends; given as long as the search again.
    None: not looked at (the search or this ran out of time; an elastic resume),
    and the caveats are those that need no run."""
    result.caveats = _caveats_unlooked(checker, result)  # (the report's, once it is made)
    if result.budget_exhausted or checker.settings.resume_nproc is not None:
        return None
    say("looking at what is not compared, at the default resume point, as `resumecheck run` does")
    checker.limit(time.monotonic() + budget, budget)
    try:
        report = checker.report()
        full = report.full_resume
        result.side_files = side_files(full.side_files) if full is not None else None
        result.caveats = [c for c in caveats(report) if not c.startswith(_AT_IMPORT)] \
            + _loop_note(checker) + _later_epochs_untried(checker, result)
        result.latent_gaps = list(full.latent_parts().values()) if full is not None else []
        result.default_run = _default_run(checker)
        return at_the_point(report.undeclared, list(checker.resume_at))
    except BudgetExhausted:
        return None
    finally:
        checker.limit(None)


def _default_run(checker: Checker) -> str | None:
    """The ``resumecheck run`` command that looks at the default resume point as
    ``_not_compared`` did (none dropped, no noise runs): None for an in-memory target."""
    s, spec = checker.settings, checker.target.spec
    return None if spec is None else reproduce_command(
        "run", spec, steps=s.n, seed=s.seed, threads=s.threads, isolation=s.isolation,
        resume_at=list(checker.resume_at), drop=(), noise_seeds=0, timeout=s.timeout,
        nproc=s.nproc)


def _caveats_unlooked(checker: Checker, result: FuzzResult) -> list[str]:
    """Where no schedule failed and the default point's report was not made
    (the time budget ran out first), the caveats ``run`` gives that need no run:
    trial 253's pass said nothing of the script's own resume code, which ``run``
    says is not checked."""
    lines = [HASH_ORDER_UNCHECKED] if (result.isolation == "inprocess" and not result.nproc
                                       and not result.set_order) else []
    if checker.segment.has_own_checkpoint and not checker.segment.boundaries.get("loop_note"):
        lines.append(RESUME_CODE_UNCHECKED)
    return lines + _loop_note(checker) + _later_epochs_untried(checker, result)


def _later_epochs_untried(checker: Checker, result: FuzzResult) -> list[str]:
    """Where no example resumed inside an epoch after the first, ``run``'s line
    on it, of the examples (trial 827: 6 examples passed a Trainer whose
    group_by_length sampler reads other samples at every resume inside a later
    epoch, which ``run`` at the default point says, and fuzz left out)."""
    if checker.reference is None or not result.resumed_at:
        return []
    said = later_epoch_untried(checker.reference, result.resumed_at, result.steps)
    if said is None:
        return []
    said = said.replace("every resume point here is", "every example resumed").replace(
        "resumecheck fuzz tries them all, until a schedule fails",
        "more examples (--max-examples, --budget) reach them")
    return [f"not checked: {said}"]


def _loop_note(checker: Checker) -> list[str]:
    """A framework target's note that the loop or resume that ran is not the
    script's own, as a caveat: ``run`` says it in its row, which a pass of
    fuzz does not print (trial 260)."""
    note = checker.segment.boundaries.get("loop_note")
    return [f"not checked: {note}"] if note else []


_PASSING = (IDENTICAL, CLOSE)
"""Verdicts of a schedule that resumes correctly (``close``: within the tolerance
an elastic resume is judged under; plain fuzzing is bit for bit)."""


def _fails(run: RunResult) -> bool:
    """A schedule that does not resume: it departs, or its steps all match but
    a save right after the program's load() loses state (``Report.equivalent``)."""
    return run.verdict not in _PASSING or bool(run.lost_on_resave())


def _not_judged(run: RunResult) -> bool:
    """An example the evidence cannot decide (an elastic one that unmapped
    per-rank state could explain, or one whose replayed first half already
    differs before its first restart): no verdict, never a failure."""
    return run.verdict == INCONCLUSIVE


def _search(checker: Checker, result: FuzzResult, default: list[int], edges: list[int],
            max_examples: int, budget: float, say: Callable[..., None]) -> None:
    seen: set[tuple[int, ...]] = set()
    started = time.monotonic()

    # The budget bounds a run in progress too: the checker stops it at the
    # deadline. Shrinking a found failure gets as long again.
    checker.limit(started + budget, budget)

    def out_of_time() -> bool:
        return checker.deadline is not None and time.monotonic() > checker.deadline

    strategy = interruption_schedules(
        steps=checker.steps, max_interruptions=result.max_interruptions, epoch_boundaries=edges
    )

    failed: list[RunResult] = []  # (the first failure: the search's examples end there)
    explicit = _explicit_schedules(default, edges, checker.steps, max_examples, result)

    def probe(schedule: list[int]) -> None:
        if out_of_time():
            result.budget_exhausted = True
            assume(False)
        say(f"{'shrinking: ' if failed else ''}resume at {','.join(map(str, schedule))}")
        try:
            # (the default schedule as `run` checks it, a save right after its first load
            # too: a trial's run failed a point that fuzz, trying it first, passed)
            run = checker.check(schedule, resave=schedule == default)
        except BudgetExhausted:
            _stopped(result, schedule, budget, bool(failed), say)
            assume(False)
            raise
        if failed:  # (hypothesis's own shrink calls again: not examples of the search)
            say(f"shrinking: resume at {','.join(map(str, schedule))}: {run.verdict}")
        else:
            _count(result, seen, schedule, edges)
            say(f"example {result.examples}: resume at {','.join(map(str, schedule))}: "
                f"{run.verdict}", example=True)
        if _not_judged(run):
            result.inconclusive.append(list(schedule))
            result.inconclusive_why = result.inconclusive_why or run.explanation
            return
        if _fails(run):
            result.failing_losses += [d for d in (run.max_abs_loss_diff,) if d is not None]
            if not failed:
                checker.limit(started + 2 * budget)  # shrinking gets as long again
                failed.append(run)
            raise _ScheduleFails(run)

    search = _searching(probe, strategy, explicit, max_examples, result.seed)
    try:
        search()
    except _ScheduleFails as exc:
        result.failure, result.minimal = _earliest(checker, exc.result, say, result.failing_otherwise)
        result.shrunk_from = _unless_same(failed[0].resume_at, result.failure.resume_at)
        _first_failure(result, failed[0])
    except Unsatisfiable:
        result.budget_exhausted = True
    finally:
        checker.limit(None)


def _stopped(result: FuzzResult, schedule: list[int], budget: float, failed: bool,
             say: Callable[..., None]) -> None:
    """An example the time budget stopped; where none had ended before it (and
    none failed), the search is inconclusive (trial 462: a hang read "no failing
    schedule in 0 examples tried", exit 0)."""
    say(f"resume at {','.join(map(str, schedule))}: stopped, the time budget ran out")
    result.budget_exhausted = True
    if not result.examples and not failed:
        result.inconclusive = [list(schedule)]
        result.inconclusive_why = NONE_TO_ITS_END.format(
            ",".join(map(str, schedule)), budget, result.target)


def _count(result: FuzzResult, seen: set[tuple[int, ...]], schedule: list[int],
           edges: list[int]) -> None:
    """One more example of the search, and the epoch boundaries it resumed at."""
    seen.add(tuple(schedule))
    result.examples += 1
    result.distinct_schedules = len(seen)
    covered = {k for k in schedule if k in edges}
    result.boundaries_covered = sorted(set(result.boundaries_covered) | covered)
    result.resumed_at = sorted(set(result.resumed_at) | set(schedule))


@contextmanager
def _hypothesis_storage(directory: Path) -> Iterator[None]:
    """hypothesis keeps what it caches (the constants of the modules it finds
    in the working directory: the user's program) under ``.hypothesis`` in
    the working directory; the search's caches go to its scratch directory
    instead, removed with it, and the user's directory is left as it was."""
    try:
        from hypothesis.configuration import set_hypothesis_home_dir, storage_directory
    except ImportError:  # (another hypothesis: its default place)
        yield
        return
    before = storage_directory(intent_to_write=False).home_directory
    set_hypothesis_home_dir(directory)
    try:
        yield
    finally:
        set_hypothesis_home_dir(before)


def _searching(probe: Callable[[list[int]], None], strategy: Any, explicit: list[list[int]],
               max_examples: int, seed: int | None) -> Callable[[], None]:
    """``probe`` as hypothesis searches with it: the ``explicit`` schedules
    first, in their order, then what ``strategy`` draws."""
    tried: Any = probe
    for schedule in reversed(explicit):  # (run in this order, before any drawn)
        tried = example(schedule)(tried)
    return hypothesis_seed(seed if seed is not None else 0)(
        _hypothesis_settings(max_examples, len(explicit))(given(strategy)(tried)))


def _explicit_schedules(default: list[int], edges: list[int], steps: int,
                        max_examples: int, result: FuzzResult | None = None) -> list[list[int]]:
    """The schedules tried first, in order: the default one, then a resume at
    each of the program's epoch boundaries (trial 299: 8 examples drawn never
    resumed at its one boundary, where a plain --resume-at failed), then, where
    a schedule may restart twice, at the first two boundaries in one run (trial
    815: a second restart at an epoch's end, which Lightning's recount of the
    first made read the epoch before's order, was never drawn in 100 examples),
    as many as ``max_examples`` allows."""
    inside = [b for b in edges if 1 <= b < steps]
    ends = [[b] for b in inside if [b] != list(default)]
    twice = result is not None and result.max_interruptions >= 2
    both = [inside[:2]] if twice and len(inside) >= 2 \
        and inside[:2] != list(default) else []
    return [list(default), *ends, *both][:max(max_examples, 1)]


def _hypothesis_settings(max_examples: int, explicit: int = 1) -> Any:
    """The search's settings. The default schedule and the epoch boundaries
    are tried first (explicit examples, on top of what hypothesis draws): they
    count among the ``max_examples``."""
    drawn = max_examples - explicit
    return hypothesis_settings(
        max_examples=max(drawn, 1), deadline=None, database=None, derandomize=False,
        suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet,
        phases=[Phase.explicit, Phase.generate, Phase.shrink] if drawn else [Phase.explicit],
        report_multiple_bugs=False, print_blob=False,
    )


def _earliest(checker: Checker, failure: RunResult, say: Callable[[str], None],
              otherwise: list[dict[str, Any]]) -> tuple[RunResult, bool]:
    """Finish hypothesis's shrink, which does not cross the branches of the
    schedule strategy (so [15] may stand where [5] fails too) and never
    shrinks an explicit example (the program's default schedule): until
    nothing changes, drop each resume point whose removal still fails as the
    failure found did (``_alike``; fewer restarts first), then move the
    whole schedule earlier, its gaps kept (a trial's two restarts in one
    epoch stood at 8,9 where 1,2 fails too: neither moves alone), then move
    each point to the earliest point that still fails so, the others kept,
    every earlier point tried. Candidates go ``checker.jobs``
    at a time, in that order; the first that fails wins, whatever the number
    of jobs. Also whether the search ended (False: the time budget stopped it).
    Schedules tried that fail otherwise go to ``otherwise``."""
    best = failure
    # (a failure only a save right after the load shows, which the default schedule
    # is tried with as `run` tries it: every candidate is tried so too, or none of the
    # earlier ones could fail as it did, and a trial's 9 was called minimal where 1 fails)
    resave = bool(failure.lost_on_resave())
    try:
        while True:
            smaller = None
            for candidates in (_fewer, _shifted, _earlier):
                smaller = _first_failing(checker, candidates(best.resume_at), say, failure,
                                         resave, otherwise)
                if smaller is not None:
                    break
            if smaller is None:
                return best, True
            best = smaller
    except BudgetExhausted:
        say("shrinking stopped: the time budget ran out")
        return best, False


def _fewer(schedule: list[int]) -> list[list[int]]:
    """The schedule without one of its resume points, each in turn."""
    if len(schedule) < 2:
        return []
    return [schedule[:i] + schedule[i + 1:] for i in range(len(schedule))]


def _shifted(schedule: list[int]) -> list[list[int]]:
    """The schedule moved earlier as a whole, its gaps kept, earliest first
    (none for one resume point: ``_earlier`` moves it)."""
    if len(schedule) < 2:
        return []
    return [[point - by for point in schedule] for by in range(schedule[0] - 1, 0, -1)]


def _earlier(schedule: list[int]) -> list[list[int]]:
    """The schedule with one resume point moved earlier (after the one before
    it), the first point first, each earliest first."""
    return [[*schedule[:i], point, *schedule[i + 1:]]
            for i in range(len(schedule))
            for point in range(schedule[i - 1] + 1 if i else 1, schedule[i])]


def _blamed(run: RunResult, named: bool = False) -> set[str]:
    """The components a run's diagnosis confirms or leaves as leads (``named``:
    or names, that a rerun did not decide: not the cause alone)."""
    kinds = (CONFIRMED, None, NOT_CAUSE) if named else (CONFIRMED, None)
    return {f.component for f in run.diagnosis if f.status in kinds}


def _alike(run: RunResult, found: RunResult, not_resumable: bool = False) -> bool:
    """Whether ``run`` fails as the failure ``found`` did: it blames one of the
    components that one blamed (where that one blamed none, it names one of
    those it named, a rerun undecided; any failure, where it named none). A
    trial's shrink moved a failure blamed on the optimizer's rate to an
    earlier resume point where another cause, in its framework, failed, and
    the bug it had found was no longer in the report. Where ``found`` departs
    at a step, ``run`` does too: trial 168's plateau scheduler, lost at 27,
    skipped a rate cut at step 31, and the shrink moved it to 5, where only
    its end state differed ("nothing in the training loss shows it").
    ``not_resumable``: the framework's training loader keeps no place in its
    epoch (``BuiltProgram.boundaries``), so a run that reads its epoch again
    from its start, where ``found`` did not, fails for that."""
    # (trial 349: a datamodule that lost its stage, its rerun undecided, was traded
    # for Lightning's own counters at an earlier epoch's end)
    named = not _blamed(found)
    blamed = set() if _streams_beside_uncompared(found) else _blamed(found, named)
    # (trial 600: a Trainer callback's lost rate, confirmed at 8, was traded for resume at
    # 1, where the framework's fetch before its restore failed the correct twin too, the
    # callback left unjudged there because the engine's own resume departed as well)
    theirs = _blamed(run, named)
    if run.engine_departs and any(f.status == CONFIRMED for f in found.diagnosis):
        theirs = {f.component for f in run.diagnosis if f.status == CONFIRMED}
    # (trials 653, 659: found at an epoch's end, traded for a resume inside an epoch that a
    # framework's loader keeping no place fails in any program, the correct twin's too)
    if not_resumable and _epoch_again(run) and not _epoch_again(found):
        return False
    return (not blamed or bool(blamed & theirs)) and (_departs(run) or not _departs(found))


def _streams_beside_uncompared(found: RunResult) -> bool:
    """Whether what ``found`` leaves as leads is random streams alone, none
    confirmed (not judged, or put right to no change), where the engine's own
    full resume departs too (``RunResult.engine_departs``: the declared
    components miss state), or beside state no component holds that its why
    says the checkpoint loses, or may: the streams are no lead then, and an
    earlier schedule that departs as it does fails as it does (trial 801: a
    Lightning scheduler of the module's own, lost, found at 6 beside a torch
    stream one draw off; the shrink stopped at 5, where the stream still
    differed, and said that 1 to 4, which failed for the same scheduler,
    failed otherwise)."""
    leads = [f for f in found.diagnosis if f.status in (CONFIRMED, None, NOT_CAUSE)]
    return (bool(leads) and (found.engine_departs or UNCOMPARED_SEE in found.explanation)
            and all(f.status != CONFIRMED and is_stream_detail(f.detail) for f in leads))


def _epoch_again(run: RunResult) -> bool:
    """Whether a run's first divergence reads its epoch again from its start."""
    return EPOCH_AGAIN in (run.divergence_detail or "")


def _departs(run: RunResult) -> bool:
    """Whether a failure departs at a step (not in its end state alone)."""
    return (run.first_divergent_step is not None
            and not (run.first_divergent_quantity or "").startswith("state of"))


def _first_failing(checker: Checker, candidates: list[list[int]],
                   say: Callable[[str], None], found: RunResult,
                   resave: bool, otherwise: list[dict[str, Any]]) -> RunResult | None:
    """The first of ``candidates`` (in their order) whose run fails, judged, as
    ``found`` failed (``_alike``); ``resave``: each tried with a save right
    after its first load too, as ``run`` tries a schedule. Those before it
    that fail otherwise go to ``otherwise`` (the same for any number of jobs)."""
    for start in range(0, len(candidates), checker.jobs):
        batch = candidates[start:start + checker.jobs]
        if len(batch) == 1:  # (run here: a warning it gives is named by it)
            say(f"shrinking: resume at {','.join(map(str, batch[0]))}")
        runs = checker.map(functools.partial(checker.check, resave=resave), batch)
        for schedule, run in zip(batch, runs):
            say(f"shrinking: resume at {','.join(map(str, schedule))}: {run.verdict}")
        for run in runs:
            if not _fails(run) or _not_judged(run):
                continue
            if _alike(run, found, bool(checker.segment.boundaries.get("data_not_resumable"))):
                return run
            if all(t["resume_at"] != run.resume_at for t in otherwise):
                otherwise.append({"resume_at": list(run.resume_at), "how": _how(run, found)})
    return None


def _how(run: RunResult, found: RunResult) -> str:
    """How a schedule the shrink tried fails otherwise than ``found``."""
    # (trial 263: a crash at an epoch's end, earlier, read "blaming other components")
    return ("failed" if run.verdict == FAILED
            else "epoch again" if _epoch_again(run) and not _epoch_again(found)
            # (trial 694: "in its end state alone" of a resume alike to its end, whose
            # save right after the load departed)
            else "lost on resave" if _departs(found) and run.first_divergent_step is None
            and bool(run.lost_on_resave())
            else "end state alone" if _departs(found) and not _departs(run)
            else "engine departs" if run.engine_departs
            else "no component" if not run.diagnosis  # (trial 392: "blaming other
            else "other components")  # components" of one that named none)


def _finding_lines(run: RunResult, notice: str | None) -> list[str]:
    """A failing schedule's findings, each a line: one the program put back
    itself a note, not a diagnosis (a trial read a put-back stream as the cause)."""
    return [f"  {'note' if f.put_back() else 'diagnosis'}: {f.line_in(run, notice)}"
            for f in run.diagnosis]
