"""Root conftest: the seeded-bug fixtures and examples import from the repository."""

from __future__ import annotations

import gc
import os
import sys
import threading
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


def _rewrite_test_modules(config: pytest.Config) -> None:
    """Write pytest's assertion-rewritten bytecode of the test modules, in a
    thread of the controller of an xdist session while its workers start.

    Each worker rewrites every test module it collects (about 180, some 2 s
    of CPU) and, where PYTHONDONTWRITEBYTECODE is set, keeps the result in
    memory only, so the next worker does it all again; a module whose
    rewritten bytecode is in ``__pycache__`` is read from there instead (pytest
    reads it whether or not it may write). From the last module to the first,
    the reverse of the workers' collection, so that they meet halfway. Uses
    pytest's own rewriting functions; where they are not there (another
    pytest), or fail, nothing is written and each worker rewrites as before."""
    try:
        from _pytest.assertion import rewrite
        from _pytest.assertion.rewrite import assertstate_key

        state = config.stash[assertstate_key]
        sources = sorted((ROOT / "tests").glob("test_*.py"), reverse=True)
        sources.append(ROOT / "tests" / "conftest.py")
    except (ImportError, AttributeError, KeyError):
        return

    def write_all() -> None:
        for source in sources:
            pyc = rewrite.get_cache_dir(source) / (source.name[:-3] + rewrite.PYC_TAIL)
            try:
                if rewrite._read_pyc(source, pyc) is not None:
                    continue
                pyc.parent.mkdir(exist_ok=True)
                stat, code = rewrite._rewrite_test(source, config)
                rewrite._write_pyc(state, code, stat, pyc)  # (atomic: a temporary file renamed)
            except Exception:  # (a read-only checkout, another pytest: only slower)
                return

    threading.Thread(target=write_all, name="rewrite-test-modules", daemon=True).start()


def pytest_configure(config: pytest.Config) -> None:
    # torch's TCPStore looks up the name of every address it connects to or
    # accepts from (::ffff:127.0.0.1 here, which /etc/hosts does not name) in
    # DNS; on this project's machines the resolver now and then drops such a
    # query, and glibc waits 5 s before it asks again: a distributed launch
    # held 5 s, both cores idle (measured: 2 of 130 launches in a run of the
    # suite, 10 s of its 100). One second before asking again, for every
    # process of the session (the workers, servers, launchers and ranks it
    # starts); the answer is the same. A setting of the user's own is kept.
    os.environ.setdefault("RES_OPTIONS", "timeout:1")
    if not hasattr(config, "workerinput"):  # (the controller, or the only process)
        _compile_sources()
        if not runs_tests(config):
            _rewrite_test_modules(config)
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
