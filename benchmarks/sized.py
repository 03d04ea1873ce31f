"""The built-in program at sizes where the steps dominate (for targets.py).

The tiny program with wider layers, everything else unchanged: the same nine
components, the same resume point. The sizes are the factory's defaults, so
a restart that loses the config component still builds the same model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from resumecheck import tiny
from resumecheck.program import Target

_HERE = Path(__file__).resolve()


def _sized(n_features: int, hidden: int, name: str) -> Target:
    def build(config: dict[str, Any]) -> tiny.TinyProgram:
        return tiny.build({"n_features": n_features, "hidden": hidden, **config})

    build.__name__ = f"build_{name.lower()}"
    return Target(factory=build, run_config=tiny.RUN_CONFIG, steps=tiny.STEPS,
                  resume_at=(tiny.RESUME_AT,), spec=f"{_HERE}:{name}")


TARGET_1M = _sized(256, 4096, "TARGET_1M")
"""1.07M parameters."""
TARGET_3M = _sized(768, 4096, "TARGET_3M")
"""3.16M parameters: steps long enough that running them dominates a sweep."""


def parameters(target: Target) -> int:
    """How many parameters the target's model has."""
    model = target.build({}).program.model
    return sum(p.numel() for p in model.parameters())
