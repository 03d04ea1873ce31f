"""Phase markers: the names of a training step's parts, and ``phase(name)``.

Programs mark their phases with ``resumecheck.phase(name)``::

    with phase(FORWARD):
        loss = model(x)

which costs nothing unless a recorder is active (``timing.PhaseTimer`` is
one). This module sits at the bottom of the house: it imports nothing of
resumecheck, so a program, the built-in one included, can mark its phases
without importing the engine or the runs layer.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar, Token
from typing import Protocol

__all__ = [
    "BACKWARD",
    "BARRIER",
    "CHECKPOINT",
    "DATA_WAIT",
    "FORWARD",
    "GRAD_SYNC",
    "HOST_TO_DEVICE",
    "OPTIMIZER_STEP",
    "PHASES",
    "PhaseRecorder",
    "activate",
    "deactivate",
    "phase",
]

DATA_WAIT = "data_wait"
HOST_TO_DEVICE = "host_to_device"
FORWARD = "forward"
BACKWARD = "backward"
GRAD_SYNC = "grad_sync"
OPTIMIZER_STEP = "optimizer"
CHECKPOINT = "checkpoint"
BARRIER = "barrier"

PHASES: tuple[str, ...] = (
    DATA_WAIT, HOST_TO_DEVICE, FORWARD, BACKWARD, GRAD_SYNC, OPTIMIZER_STEP, CHECKPOINT, BARRIER,
)


class PhaseRecorder(Protocol):
    """Whatever records the phases marked while it is active."""

    def phase(self, name: str) -> AbstractContextManager[None]: ...


_ACTIVE: ContextVar[PhaseRecorder | None] = ContextVar("resumecheck_timer", default=None)


def activate(recorder: PhaseRecorder) -> Token[PhaseRecorder | None]:
    """Make ``recorder`` receive the phases marked from now on (in this context)."""
    return _ACTIVE.set(recorder)


def deactivate(token: Token[PhaseRecorder | None]) -> None:
    """Put back the recorder that was active before ``activate`` returned ``token``."""
    _ACTIVE.reset(token)


@contextmanager
def phase(name: str) -> Iterator[None]:
    """Mark a phase of the current step (a no-op unless a recorder is active)."""
    recorder = _ACTIVE.get()
    if recorder is None:
        yield
        return
    with recorder.phase(name):
        yield
