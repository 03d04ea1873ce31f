"""One exception hierarchy for resumecheck.

Every exception carries the data that explains it as attributes and builds
its message from them, so a caller (the CLI, the pytest plugin) can show the
message and a program can inspect the data. They pickle: xdist workers and
process-isolated restarts send them across processes.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = [
    "CheckpointError",
    "DiskSpaceShortage",
    "DiskUseWarning",
    "InvalidArgument",
    "NondeterministicBaseline",
    "OutputError",
    "ResumecheckError",
    "StepError",
    "TargetError",
    "UnknownComponent",
]


class ResumecheckError(Exception):
    """Base class of every error resumecheck raises on purpose."""

    def __reduce__(self):  # keep pickling working for subclasses with kw-only data
        return (_rebuild, (type(self), self.__dict__, str(self)))


def _rebuild(cls, state, message):
    err = cls.__new__(cls)
    Exception.__init__(err, message)
    err.__dict__.update(state)
    return err


class InvalidArgument(ResumecheckError, ValueError):
    """A library argument is out of range or of the wrong kind (``name=value``)."""

    def __init__(self, name: str, value: object, why: str) -> None:
        self.name = name
        self.value = value
        self.why = why
        super().__init__(f"{name}={value!r}: {why}")


class UnknownComponent(InvalidArgument):
    """A component name that the program does not declare."""

    def __init__(self, component: str, known: Iterable[str]) -> None:
        self.component = component
        self.known = tuple(known)
        super().__init__(
            "drop",
            component,
            f"unknown component {component!r}; this program declares: "
            f"{', '.join(self.known) or '(none)'}",
        )


class TargetError(ResumecheckError):
    """The training program to check could not be loaded or built."""

    def __init__(self, target: str, problem: str, hint: str) -> None:
        self.target = target
        self.problem = problem
        self.hint = hint
        super().__init__(f"target {target!r}: {problem}. {hint}")


class StepError(ResumecheckError):
    """A training step misbehaved (raised, or returned an unusable loss)."""

    def __init__(self, step: int, problem: str) -> None:
        self.step = step
        self.problem = problem
        super().__init__(f"step {step}: {problem}")


class CheckpointError(ResumecheckError):
    """Saving or loading a checkpoint failed."""

    def __init__(self, action: str, path: str, problem: str) -> None:
        self.action = action
        self.path = path
        self.problem = problem
        super().__init__(f"checkpoint {action} failed ({path}): {problem}")


class NondeterministicBaseline(ResumecheckError):
    """Two uninterrupted runs differ: resume equivalence cannot be judged bitwise."""

    CAUSES = (
        "an unseeded random stream, or a seed taken from the time or os.urandom",
        "a different torch thread count between runs (sums change with it)",
        "a nondeterministic kernel (CUDA scatter/index_add, cuDNN autotuning: "
        "torch.use_deterministic_algorithms(True))",
        "iteration order of a set, or of a dict keyed by hash (depends on PYTHONHASHSEED)",
        "time-based values (a schedule or a cadence read from the clock)",
    )

    def __init__(self, target: str, step: int, quantity: str, reproduce: str) -> None:
        self.target = target
        self.step = step
        self.quantity = quantity
        self.reproduce = reproduce
        causes = "; ".join(self.CAUSES)
        super().__init__(
            f"{target} is not deterministic: two uninterrupted runs differ from step {step} "
            f"in {quantity}, so a resume cannot be judged bit for bit. Likely causes to check: "
            f"{causes}. Fix the program, or judge within tolerance with --tolerance close. "
            f"Reproduce: {reproduce}"
        )


class OutputError(ResumecheckError):
    """A report cannot be written where the caller asked (``--output``)."""

    def __init__(self, path: str, problem: str, hint: str = "") -> None:
        self.path = path
        self.problem = problem
        self.hint = hint
        super().__init__(
            f"cannot write the report to {path}: {problem}."
            + (f" {hint}" if hint else "")
        )


def _amount(size: int) -> str:
    """Bytes in words: ``1.3 GB``, ``240 MB``."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if size >= scale:
            return f"{size / scale:.2g} {unit}" if size < 10 * scale else f"{size / scale:.0f} {unit}"
    return f"{size} bytes"


class DiskSpaceShortage(ResumecheckError):
    """The scratch directory cannot hold what the check is about to write."""

    def __init__(self, path: str, needed: int, free: int) -> None:
        self.path = path
        self.needed = needed
        self.free = free
        super().__init__(
            f"not enough disk space for this check: it needs about {_amount(needed)} under "
            f"{path} and {_amount(free)} is free. Free space there, or point TMPDIR at a disk "
            "with more room, then run again. Nothing was judged: this says nothing about the "
            "program's resume"
        )


class DiskUseWarning(UserWarning):
    """A check will write a lot of scratch data (said once, before the bulk of it)."""

    def __init__(self, path: str, size: int) -> None:
        self.path = path
        self.size = size
        super().__init__(
            f"this check will use about {_amount(size)} of scratch space under {path} "
            "(TMPDIR), removed when it ends"
        )
