"""Root conftest: the seeded-bug fixtures and examples import from the repository."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))


_SHARE = pytest.StashKey[str]()


def pytest_unconfigure(config: pytest.Config) -> None:
    if _SHARE in config.stash:
        from resumecheck import forkshare

        forkshare.unshare()


def runs_tests(config: pytest.Config) -> bool:
    """False in the controller of an xdist session: it collects and runs
    nothing, so it need not pay for torch or hypothesis before its workers
    start (each worker pays them anyway)."""
    return hasattr(config, "workerinput") or not getattr(config.option, "numprocesses", None)


def pytest_configure(config: pytest.Config) -> None:
    # One set of warm servers for the whole session: every xdist worker, and
    # every command a test starts, forks its process-isolated segments from
    # them instead of importing torch in servers of its own (the controller,
    # or the only process, owns them; they end with it).
    from resumecheck import forkserver, forkshare

    if forkserver.available() and forkshare.shared_directory() is None:
        config.stash[_SHARE] = forkshare.share()
    if not runs_tests(config):
        return
    import torch
    from hypothesis import settings

    # Bitwise reproducibility holds only at a fixed thread count.
    torch.set_num_threads(1)

    settings.register_profile("dev", max_examples=20, deadline=None)
    if not os.environ.get("CI"):
        settings.load_profile("dev")
