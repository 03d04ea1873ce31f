"""Root conftest: the seeded-bug fixtures and examples import from the repository."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))


def runs_tests(config: pytest.Config) -> bool:
    """False in the controller of an xdist session: it collects and runs
    nothing, so it need not pay for torch or hypothesis before its workers
    start (each worker pays them anyway)."""
    return hasattr(config, "workerinput") or not getattr(config.option, "numprocesses", None)


def pytest_configure(config: pytest.Config) -> None:
    if not runs_tests(config):
        return
    import torch
    from hypothesis import settings

    # Bitwise reproducibility holds only at a fixed thread count.
    torch.set_num_threads(1)

    settings.register_profile("dev", max_examples=20, deadline=None)
    if not os.environ.get("CI"):
        settings.load_profile("dev")
