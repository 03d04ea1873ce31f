"""The knobs of one check, validated once where they come in.

Every door (the CLI's commands, the pytest plugin, ``verify``, ``fuzz``,
``check_baseline``, ``measure``) builds one ``Settings`` and passes it down
whole; nothing below validates a knob again. An invalid value raises
``InvalidArgument`` naming ``field=value``. This module imports neither torch
nor the engine: the pytest plugin validates its session options with it.
"""

from __future__ import annotations

import math
import os
from collections.abc import Collection, Sequence, Set as AbstractSet
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

from resumecheck.errors import InvalidArgument

if TYPE_CHECKING:
    from resumecheck.compare import Tolerance
    from resumecheck.program import Target

__all__ = ["DEFAULT_NOISE_SEEDS", "ISOLATIONS", "MAX_NOISE_SEEDS", "MIN_STEPS", "DropSpec", "Settings", "resume_points"]

DEFAULT_NOISE_SEEDS = 2
"""Noise runs a check makes unless told otherwise (CLI, plugin, ``verify``)."""

MAX_NOISE_SEEDS = 100
"""Upper limit of ``noise_seeds``: each seed is one more uninterrupted run."""

MIN_STEPS = 2
"""The one rule for ``steps`` everywhere: a resume needs a step before and after
it, and two steps are the fewest a determinism run or a timing can compare."""

ISOLATIONS = ("inprocess", "process")

DropSpec = str | Sequence[str | Collection[str]] | AbstractSet[str]
Isolation = Literal["inprocess", "process"]


@dataclass(kw_only=True, slots=True, frozen=True)
class Settings:
    """How one check runs; every field is validated in ``__post_init__``."""

    steps: int | None = None
    """Optimizer steps N of every run (None: the target's own; see ``for_target``)."""
    resume_at: Sequence[int] | int | None = None
    """Steps after which a run restarts, each in 1..N-1 (None: the target's own); kept
    as a tuple."""
    drop: DropSpec = "all"
    """``"all"``, ``"none"`` or component names / groups of names to drop, one run each
    (a set, or ``"a,b"``: one run dropping those together)."""
    isolation: Isolation = "inprocess"
    """Restarts in this interpreter (``inprocess``) or in a fresh one (``process``)."""
    tolerance: Tolerance | None = None
    """How close is equivalent (None: bit for bit)."""
    seed: int | None = None
    """The program's seed setting for the run (None: the program's own settings)."""
    noise_seeds: int = DEFAULT_NOISE_SEEDS
    """Extra uninterrupted runs with other seeds, for the seed-to-seed noise band."""
    threads: int = 1
    """Torch threads of every run, and of the check's own judging."""
    timeout: float | None = None
    """Seconds one training step may take (None: automatic; 0: no bound)."""
    check_determinism: bool = True
    """Run the reference twice and demand identical bits before judging."""
    jobs: int | None = None
    """Independent runs side by side at most (noise seeds, ablations, shrinking candidates);
    None: one per ``threads`` cores with process isolation, one in-process (see ``workers``)."""

    nproc: int | None = None
    """Ranks of every segment under torch's elastic launcher (None: one process)."""
    resume_nproc: int | None = None
    """Elastic resume: the restart after the first resume point runs at this many
    ranks instead of ``nproc`` (the program's own checkpoint, resharded by its
    load()); compared with the uninterrupted run at ``nproc`` ranks within a
    tolerance. None: every segment at ``nproc``."""

    def __post_init__(self) -> None:
        if self.steps is not None:
            _check_steps(self.steps)
        if self.isolation not in ISOLATIONS:
            raise InvalidArgument("isolation", self.isolation, "expected inprocess or process")
        _check_int("noise_seeds", self.noise_seeds, 0, high=MAX_NOISE_SEEDS,
                   why=f"each seed is one more full run; {MAX_NOISE_SEEDS} is the upper limit")
        _check_int("threads", self.threads, 1)
        _check_int("jobs", self.jobs, 1, optional=True)
        _check_int("nproc", self.nproc, 1, optional=True,
                   why="the number of ranks, or None for one process without a launcher")
        _check_int("seed", self.seed, None, optional=True)
        _check_resume_nproc(self)
        if self.timeout is not None and (
            isinstance(self.timeout, bool) or not isinstance(self.timeout, (int, float))
            or not (self.timeout >= 0 and math.isfinite(self.timeout))
        ):
            raise InvalidArgument("timeout", self.timeout,
                                  "expected seconds > 0, 0 (no bound) or None (automatic)")
        if self.tolerance is not None and not isinstance(
                getattr(self.tolerance, "bitwise_only", None), bool):
            raise InvalidArgument("tolerance", self.tolerance,
                                  "expected a Tolerance (Tolerance.bitwise() or Tolerance.close())")
        if not isinstance(self.check_determinism, bool):
            raise InvalidArgument("check_determinism", self.check_determinism, "expected a bool")
        object.__setattr__(self, "drop", _one_form(self.drop))
        _check_drop(self.drop)
        if self.resume_at is not None:
            if not isinstance(self.resume_at, tuple):  # lists given by callers: one frozen form
                object.__setattr__(self, "resume_at", tuple(_as_points(self.resume_at)))
            if self.steps is not None:
                resume_points(self.resume_at, self.steps)

    def steps_for(self, target: Target) -> int:
        """``steps``, or the target's own when none was given."""
        steps = target.steps if self.steps is None else self.steps
        _check_steps(steps)
        return steps

    def for_target(self, target: Target) -> Settings:
        """These settings with the target's own ``steps`` and ``resume_at`` where
        none were given (the default resume point: halfway)."""
        steps = self.steps_for(target)
        given = self.resume_at if self.resume_at is not None else target.resume_at
        if self.resume_at is None and given:  # (a trial: `--steps 2` named a point 8 unasked)
            for k in _as_points(given):
                if isinstance(k, int) and not 1 <= k <= steps - 1:
                    raise InvalidArgument(
                        "resume_at", k, f"the program's own resume point {k} (its Target's "
                        f"resume_at, used where none is given) does not fit in steps={steps}: "
                        f"give resume points in 1..{steps - 1} too (--resume-at K)")
        return replace(self, steps=steps, resume_at=tuple(resume_points(given or (), steps)))

    @property
    def workers(self) -> int:
        """``jobs``, or when none was given: fresh interpreters side by side, one per
        ``threads`` cores; in-process runs one after the other (a fork per run costs
        more than it saves on a small program)."""
        if self.jobs is not None:
            return self.jobs
        if self.nproc is not None:  # every rank of a run takes its threads
            return max(1, (os.cpu_count() or 1) // (self.threads * self.nproc))
        if self.isolation == "process":
            return max(1, (os.cpu_count() or 1) // self.threads)
        return 1

    @property
    def n(self) -> int:
        """``steps``, once resolved by ``for_target``."""
        if self.steps is None:
            raise InvalidArgument("steps", None, "unresolved: call Settings.for_target first")
        return self.steps

    @property
    def points(self) -> list[int]:
        """``resume_at``, once resolved by ``for_target``."""
        if self.resume_at is None:
            raise InvalidArgument("resume_at", None, "unresolved: call Settings.for_target first")
        return _as_points(self.resume_at)


def resume_points(value: Sequence[int] | int, n: int) -> list[int]:
    """The resume points, sorted and checked against ``n`` steps; none given: N // 2."""
    _check_steps(n)
    points = _as_points(value)
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


def _as_points(value: object) -> list[int]:
    if isinstance(value, int):
        return [value]
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise InvalidArgument("resume_at", value, "expected a step number or a list of them")
    return list(value)


def _check_steps(steps: object) -> None:
    """The one rule for ``steps``."""
    _check_int("steps", steps, MIN_STEPS, why="a resume needs a step before and after it, "
               "and a determinism run or a timing compares two steps at least")


def _check_int(name: str, value: object, low: int | None, *, high: int | None = None,
               optional: bool = False, why: str = "") -> None:
    if value is None and optional:
        return
    ok = isinstance(value, int) and not isinstance(value, bool)
    if ok and low is not None:
        ok = value >= low  # type: ignore[operator]
    if ok and high is not None:
        ok = value <= high  # type: ignore[operator]
    if not ok:
        if high is not None:
            expected = f"expected an int in {low}..{high}"
        elif low is not None:
            expected = f"expected an int >= {low}"
        else:
            expected = "expected an int"
        raise InvalidArgument(name, value, f"{expected} ({why})" if why else expected)


def _check_resume_nproc(s: Settings) -> None:
    """An elastic resume needs ranks to start from and another number to restart at."""
    _check_int("resume_nproc", s.resume_nproc, 1, optional=True,
               why="the ranks of the restart, or None for as many as nproc")
    if s.resume_nproc is None:
        return
    if s.nproc is None:
        raise InvalidArgument("resume_nproc", s.resume_nproc,
                              "an elastic resume restarts a run of several ranks: give nproc too "
                              "(--nproc N --resume-nproc M)")
    if s.resume_nproc == s.nproc:
        raise InvalidArgument("resume_nproc", s.resume_nproc,
                              f"equals nproc={s.nproc}: that is the plain check; leave it out, "
                              "or give another number of ranks")
    if s.drop not in ("all", "none"):
        raise InvalidArgument("resume_nproc", s.resume_nproc,
                              "an elastic resume runs the full resume through the program's own "
                              "checkpoint only (the engine's capture is per rank and cannot be "
                              "resharded): drop components in a check without resume_nproc")


def _one_form(drop: object) -> object:
    """``drop`` as the CLI reads it: ``"rng,scheduler"`` is one run dropping both,
    and a set (what ``strategies.component_subsets`` draws) is one run dropping
    its names together, none for an empty set (the full resume alone)."""
    if isinstance(drop, str) and "," in drop:
        return [_group(drop)]
    if isinstance(drop, AbstractSet):
        return [sorted(drop)] if drop else "none"
    if isinstance(drop, list) and any(isinstance(item, str) and "," in item for item in drop):
        # (trial 403: the README's marker, drop=["rng,hooks"], was one unknown name)
        return [_group(item) if isinstance(item, str) and "," in item else item for item in drop]
    return drop


def _group(names: str) -> list[str]:
    """``"rng,scheduler"``: the names of one run that drops them together."""
    return [n.strip() for n in names.split(",") if n.strip()]


def _check_drop(drop: object) -> None:
    """The shape of ``drop``; the names are checked against the program's own
    components once it is built (``validate_drop``)."""
    if isinstance(drop, str):
        return
    bad = InvalidArgument("drop", drop, "expected 'all', 'none', a component name, or a list "
                          "of names and groups of names")
    if not isinstance(drop, Sequence):
        raise bad
    for item in drop:
        if isinstance(item, str):
            continue
        if not isinstance(item, Collection) or not all(isinstance(n, str) for n in item):
            raise bad
