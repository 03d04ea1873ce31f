"""Root conftest: the seeded-bug fixtures and examples import from the repository."""

from __future__ import annotations

import gc
import os
import sys
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))


_SHARE = pytest.StashKey[str]()


# Python's full garbage collections walk every object the process tracks: in a
# worker that has imported torch (and a framework) some 400,000, 0.2-0.3 s
# each time, and a framework's training loop asks for one (the HF Trainer
# calls gc.collect() as each train() starts). The objects of the modules a
# worker has imported never become garbage: once many modules have arrived
# (collection, a framework's import inside a test), whatever is alive then is
# frozen (gc.freeze: left out of every later collection).
_FROZEN_AT_MODULES = [0]


def _freeze_after_imports() -> None:
    if len(sys.modules) - _FROZEN_AT_MODULES[0] >= 200:
        gc.collect()
        gc.freeze()
        _FROZEN_AT_MODULES[0] = len(sys.modules)


def pytest_collection_finish() -> None:
    _freeze_after_imports()


def pytest_runtest_setup() -> None:
    _freeze_after_imports()


def pytest_runtest_call() -> None:  # (after the fixtures: one may import a framework)
    _freeze_after_imports()


def pytest_unconfigure(config: pytest.Config) -> None:
    if _SHARE in config.stash:
        from resumecheck import forkshare

        forkshare.unshare()


def runs_tests(config: pytest.Config) -> bool:
    """False in the controller of an xdist session: it collects and runs
    nothing, so it need not pay for torch or hypothesis before its workers
    start (each worker pays them anyway)."""
    return hasattr(config, "workerinput") or not getattr(config.option, "numprocesses", None)


def _compile_sources() -> None:
    """Write the bytecode of the project's own modules once, before any
    worker starts. Where PYTHONDONTWRITEBYTECODE is set (as on this project's
    machines) no interpreter writes it, and each one (the workers, every
    process-isolated segment and rank, each command a test starts) would
    compile the package and the fixture programs it imports from source
    again; every interpreter reads what is written here."""
    import compileall

    for directory in ("resumecheck", "fixtures", "tests", "examples"):
        compileall.compile_dir(ROOT / directory, quiet=2)  # (a read-only checkout: only slower)


def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput"):  # (the controller, or the only process)
        _compile_sources()
    # One set of warm servers for the whole session: every xdist worker, and
    # every command a test starts, forks its process-isolated segments from
    # them instead of importing torch in servers of its own (the controller,
    # or the only process, owns them; they end with it).
    from resumecheck import forkserver, forkshare

    if forkserver.available() and forkshare.shared_directory() is None:
        config.stash[_SHARE] = forkshare.share()
    if not runs_tests(config):
        return
    from resumecheck.heap import collector_off

    # their objects stay: no collection need walk them, as they arrive or after
    with collector_off(freeze=True):
        import torch
        from hypothesis import settings

    # Bitwise reproducibility holds only at a fixed thread count.
    torch.set_num_threads(1)

    settings.register_profile("dev", max_examples=20, deadline=None)
    if not os.environ.get("CI"):
        settings.load_profile("dev")
    _freeze_after_imports()  # (torch and hypothesis: before collection's collections)
