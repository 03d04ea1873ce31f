"""The one writer of the ``resumecheck ...`` command that reproduces a finding.

Every report that says how to reproduce something (the table, the JSON, the
pytest plugin's failures, the fuzzer, the nondeterministic-baseline error, the
hypothesis state machine) takes its command from ``reproduce_command``, so they
all agree and all survive a shell: each argument is quoted with
``shlex.join`` (a target path with spaces or quotes stays one argument).
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from resumecheck.program import BUILTIN_SPEC
from resumecheck.settings import DEFAULT_NOISE_SEEDS, DropSpec

if TYPE_CHECKING:
    from resumecheck.compare import Tolerance

__all__ = ["IN_MEMORY_TARGET", "reproduce_command"]

IN_MEMORY_TARGET = "<in-memory target: give it as module:attr>"
"""Stands where the target goes when it was built in memory and has no import path."""


def reproduce_command(
    command: Literal["run", "baseline", "fuzz"],
    target: str | None,
    *,
    steps: int,
    seed: int | None,
    threads: int,
    isolation: str,
    resume_at: Sequence[int] | None = None,
    drop: Sequence[str] | None = None,
    tolerance: Tolerance | None = None,
    timeout: float | None = None,
    nproc: int | None = None,
    resume_nproc: int | None = None,
    noise_seeds: int | None = None,
    drop_setting: DropSpec | None = None,
    search: tuple[int, int, float] | None = None,
) -> str:
    """A shell command line that runs the same check again.

    ``target``: the import spec (None: an in-memory target, which no command
    can name; the built-in program's spec is left out, it is the default).
    ``seed`` None: the program's own seed (no ``--seed``, as the run had
    none). ``timeout`` None: the automatic step bound (no ``--timeout``).
    ``resume_at``/``drop``/``tolerance``/``noise_seeds`` apply to ``run`` only
    (``drop_setting``: a whole ``Settings.drop``, instead of ``drop``'s one run);
    ``search``, ``fuzz``'s (max examples, max interruptions, budget in seconds:
    given where not the default 60). ``noise_seeds``
    None or the default: no ``--noise-seeds`` (the noise band
    decides only whether a difference is called plausible, so a command that
    reproduces a report carries the count it ran with).
    """
    argv = ["resumecheck", command]
    if target is None:
        argv.append(IN_MEMORY_TARGET)
    elif target != BUILTIN_SPEC:
        argv.append(target)
    argv += ["--steps", str(steps)]
    if command == "run":
        argv += _run_arguments(resume_at, drop, drop_setting, noise_seeds)
    if command == "fuzz" and search is not None:
        argv += ["--max-examples", str(search[0]), "--max-interruptions", str(search[1])]
        if search[2] != 60.0:  # (trial 151: a --budget 30 left out)
            argv += ["--budget", f"{search[2]:g}"]
    if seed is not None:
        argv += ["--seed", str(seed)]
    argv += _process_arguments(isolation, threads, timeout, nproc)
    if command == "run" and resume_nproc is not None:
        argv += ["--resume-nproc", str(resume_nproc)]
    if command == "run" and tolerance is not None and not tolerance.bitwise_only:
        argv += ["--tolerance", "close"]
        if tolerance.rtol is not None and tolerance.atol is not None:
            # repr keeps every digit: the same tolerance, not a rounded one
            argv += ["--rtol", repr(float(tolerance.rtol)), "--atol", repr(float(tolerance.atol))]
    if target is None:
        # the placeholder is not an argument to quote: it says what to put there
        head = shlex.join(argv[:2])
        return f"{head} {IN_MEMORY_TARGET} {shlex.join(argv[3:])}"
    return shlex.join(argv)


def _run_arguments(resume_at: Sequence[int] | None, drop: Sequence[str] | None,
                   drop_setting: DropSpec | None, noise_seeds: int | None) -> list[str]:
    """``run``'s own options: resume points, what to drop, noise seeds."""
    argv = [] if resume_at is None else ["--resume-at", ",".join(map(str, resume_at))]
    if drop_setting is not None:  # (each run of the setting: one --drop each)
        values = [drop_setting] if isinstance(drop_setting, str) else \
            [d if isinstance(d, str) else ",".join(d) for d in drop_setting]
        argv += [arg for value in values for arg in ("--drop", value)]
    else:
        argv += ["--drop", ",".join(drop or ()) or "none"]
    if noise_seeds is not None and noise_seeds != DEFAULT_NOISE_SEEDS:
        argv += ["--noise-seeds", str(noise_seeds)]
    return argv


def _process_arguments(isolation: str, threads: int, timeout: float | None,
                       nproc: int | None) -> list[str]:
    """How each run's processes run: isolation, threads, step bound, ranks."""
    # (with --nproc every segment is a new launch of its ranks, whatever --isolation says)
    argv = [] if nproc is not None else ["--isolation", isolation]
    argv += ["--threads", str(threads)]
    if timeout is not None:
        argv += ["--timeout", f"{timeout:g}"]
    if nproc is not None:
        argv += ["--nproc", str(nproc)]
    return argv
