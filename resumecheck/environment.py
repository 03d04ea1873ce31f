"""The environment fingerprint recorded in every report.

Bitwise results hold only for the same build, thread count and flags, so a
report that says "identical" must say under what.
"""

from __future__ import annotations

import platform
import sys
from typing import Any

import numpy as np
import torch

__all__ = ["fingerprint"]


def fingerprint(threads: int) -> dict[str, Any]:
    """Versions, thread count, determinism flags and device of this run."""
    cuda = torch.cuda.is_available()
    return {
        "python": platform.python_version(),
        "platform": sys.platform,
        "machine": platform.machine(),
        "torch": torch.__version__,
        "numpy": np.__version__,
        "threads": threads,
        "deterministic_algorithms": torch.are_deterministic_algorithms_enabled(),
        "cudnn_deterministic": bool(torch.backends.cudnn.deterministic),
        "cudnn_benchmark": bool(torch.backends.cudnn.benchmark),
        "device": torch.cuda.get_device_name(0) if cuda else "cpu",
        "cuda": torch.version.cuda if cuda else None,
    }
