"""How a process that runs a check's steps keeps the memory they free.

glibc gives a freed block of 128 KiB or more back to the system at once, and
trims the top of its heap whenever more than twice that lies free there; as it
sees large blocks freed it raises both thresholds, up to 32 MiB and 64 MiB. A
training step allocates and frees its activations and gradients: run alone,
the thresholds soon settle and every step reuses the pages of the one before.
Inside a check the copies the check keeps between steps (traces, captures,
restored state) land among them, the top of the heap is trimmed and grown
again, and the steps touch fresh pages: measured on the built-in program at
1.07M parameters, 120,000 to 250,000 page faults and 0.4 to 0.6 s of a 2.4 s
sweep, the steps themselves about a fifth slower than alone.

``settle()`` fixes the thresholds at the values glibc would settle at (32 MiB
and 64 MiB), once per process: a step's memory is reused as it is when it
runs alone. Nothing a step computes depends on where its memory lies; a block
of 32 MiB or more is still mapped and given back at once, and at most 64 MiB
free at the heap's top is kept. Elsewhere than glibc, nothing changes.

``collector_off(freeze=True)`` holds Python's garbage collector while a new
interpreter imports torch, then leaves what the import made out of every
later collection (``gc.freeze``): some 400,000 objects that never become
garbage, which each full collection would otherwise walk again, during the
import (a fifth of it) and during the check that follows (torch's first
optimizer step imports some 800 modules more). Measured on this project's
2-core machines: ``resumecheck run`` of a small program in process, 2.9 s of
CPU before, 2.1 s after.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import sys
from collections.abc import Iterator

__all__ = ["collector_off", "settle"]

_M_TRIM_THRESHOLD = -1  # mallopt's parameters (malloc.h)
_M_MMAP_THRESHOLD = -3
_MMAP_THRESHOLD = 32 << 20  # glibc's own ceiling for the dynamic thresholds on 64 bits
_TRIM_THRESHOLD = 2 * _MMAP_THRESHOLD

_settled = False


def settle() -> bool:
    """Fix this process's malloc thresholds (see the module's docstring);
    whether they are fixed (False off glibc)."""
    global _settled
    if _settled or not sys.platform.startswith("linux"):
        return _settled
    try:
        # (the interpreter's own symbols, libc's among them: finding libc by
        # name would run `ldconfig -p` in a process of its own each time)
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc (musl has no mallopt)
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    _settled = bool(mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD)) and bool(
        mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD))
    return _settled


@contextlib.contextmanager
def collector_off(freeze: bool = False) -> Iterator[None]:
    """No garbage collection inside (see the module's docstring); as it was
    after (a nested use, or one where it is off already, changes nothing).
    ``freeze``: what exists when it ends is left out of every later
    collection (``gc.freeze``); else the first collections after it walk all
    that the import made, and the time is only put off."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
        if freeze:
            gc.freeze()
    finally:
        gc.enable()
