"""Torch's per-thread modes a run starts from: autocast and gradient mode.

A new interpreter trains with autocast off on every device, at torch's
default autocast dtypes, with an empty autocast cache and no autocast
context open, and with gradients on. An in-process run trains in its
caller's thread, where none of that need hold: a caller inside
``torch.no_grad()`` or ``torch.autocast(...)``, or a run stopped inside
torch's own ``autocast.__exit__`` (by a step's time bound, a fuzz budget or
a signal, which raise between two lines of it) before it put the modes back.
Every later in-process run of that thread then trained in float16, reusing
the cast of its first weights from the autocast cache: its loss no longer
moved after the restore, and correct programs were NOT EQUIVALENT.

``fresh()`` puts a new interpreter's modes in for a run, and ``put(saved)``
the caller's back after it, however it ended.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

__all__ = ["FRESH", "TorchModes", "current", "fresh", "put"]

_DEVICES = ("cpu", "cuda", "xpu", "mps", "hpu", "xla", "ipu", "mtia", "privateuseone")
"""Device types whose autocast state torch keeps (those this torch can read are used)."""


def _readable(device: str) -> bool:
    try:
        torch.is_autocast_enabled(device)
        torch.get_autocast_dtype(device)
    except (RuntimeError, TypeError, ValueError):
        return False
    return True


_AUTOCAST_DEVICES = tuple(d for d in _DEVICES if _readable(d))


@dataclass(frozen=True)
class TorchModes:
    """This thread's autocast state on each device and its gradient mode."""

    autocast: tuple[tuple[str, bool, torch.dtype], ...]
    """Per device type: autocast on, and the dtype it casts to."""
    cache: bool
    """Whether autocast keeps its casts of leaf tensors (weights) for reuse."""
    nesting: int
    """Autocast contexts open (their cache is dropped as the last one ends)."""
    grad: bool


def _nesting() -> int:
    depth = torch.autocast_increment_nesting() - 1
    torch.autocast_decrement_nesting()
    return depth


def current() -> TorchModes:
    """This thread's modes now."""
    return TorchModes(
        autocast=tuple((d, torch.is_autocast_enabled(d), torch.get_autocast_dtype(d))
                       for d in _AUTOCAST_DEVICES),
        cache=torch.is_autocast_cache_enabled(), nesting=_nesting(),
        grad=torch.is_grad_enabled())


def put(modes: TorchModes) -> None:
    """Set this thread's modes to ``modes``, with an empty autocast cache."""
    torch.clear_autocast_cache()
    for device, on, dtype in modes.autocast:
        torch.set_autocast_enabled(device, on)
        torch.set_autocast_dtype(device, dtype)
    torch.set_autocast_cache_enabled(modes.cache)
    depth = _nesting()
    while depth < modes.nesting:
        depth = torch.autocast_increment_nesting()
    while depth > modes.nesting:
        depth = torch.autocast_decrement_nesting()
    torch.set_grad_enabled(modes.grad)


FRESH = TorchModes(autocast=tuple((d, False, torch.get_autocast_dtype(d))
                                  for d in _AUTOCAST_DEVICES),
                   cache=True, nesting=0, grad=True)
"""A new interpreter's modes (torch's default autocast dtypes, as read at this import)."""


def fresh() -> TorchModes:
    """Put a new interpreter's modes in; returns the ones they replace, for ``put``."""
    saved = current()
    put(FRESH)
    return saved
