"""Every JSON document the suite produces must match the published schema.

At configuration (before any test module imports the package's names), the report
classes' ``to_json`` and the constructors of complete reports are wrapped so
that each document is validated against ``resumecheck/schemas/`` the moment it
exists: a ``Report`` when it is built and whenever it is serialised, a
``FuzzResult`` when ``fuzz()`` returns it and whenever it is serialised, a
baseline or timing report when it is built, and the pytest plugin's session
file. A field added to a report without the schema knowing it fails the test
that produced it, naming the field. (The controller of an xdist session builds
no report: it wraps only the session file, and imports no torch.)
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections import Counter
from typing import Any

import pytest

import resumecheck.pytest_plugin
from conftest import runs_tests
from resumecheck.schema import validate

VALIDATED: Counter[str] = Counter()
"""How many documents of each kind this process validated (tests read it)."""


_VALID: set[bytes] = set()
"""A digest of the text of every document found valid (a report is serialised again and
again: by its constructor, render(), the CLI's output, each test's reading)."""


def check_document(document: Any) -> None:
    """Validate a document exactly as a reader of the JSON would see it (the
    very same text again counts without a second pass of the validator)."""
    text = json.dumps(document, default=str)
    plain = json.loads(text)
    seen = hashlib.blake2b(text.encode(), digest_size=16).digest()
    if seen not in _VALID:
        validate(plain)
        _VALID.add(seen)
    VALIDATED[plain["schema"]] += 1


def _after(function: Any, check: Any) -> Any:
    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        out = function(*args, **kwargs)
        check(args, out)
        return out

    wrapper.__wrapped_by_schema_check__ = True  # type: ignore[attr-defined]
    return wrapper


def _install(config: pytest.Config) -> None:
    if not getattr(resumecheck.pytest_plugin.session_document, "__wrapped_by_schema_check__",
                   False):
        resumecheck.pytest_plugin.session_document = _after(
            resumecheck.pytest_plugin.session_document, lambda args, out: check_document(out)
        )
    if not runs_tests(config):
        return
    import resumecheck.fuzz as fuzz_module
    from resumecheck.baseline import BaselineReport
    from resumecheck.fuzz import FuzzResult
    from resumecheck.report import Report
    from resumecheck.timing import TimingReport

    if getattr(Report.to_json, "__wrapped_by_schema_check__", False):
        return
    for cls in (Report, FuzzResult, BaselineReport, TimingReport):
        cls.to_json = _after(cls.to_json, lambda args, out: check_document(out))
    for cls in (Report, BaselineReport, TimingReport):  # built complete: check at once
        cls.__init__ = _after(cls.__init__, lambda args, out: args[0].to_json())
    fuzz_module.fuzz = _after(fuzz_module.fuzz, lambda args, out: out.to_json())


def pytest_configure(config: pytest.Config) -> None:
    _install(config)


@pytest.fixture(scope="module")
def torch_dynamo_imported() -> None:
    """Request it before ``pytester`` in tests that run pytest in-process.

    A program's first optimizer step imports torch._dynamo (~800 modules, one
    of them a TORCH_LIBRARY registration that cannot run twice), and pytester
    drops the modules imported while it was set up: imported from within, the
    next test would import it again and fail. Imported here, outside every
    pytester's snapshot, it stays."""
    import torch._dynamo  # noqa: F401


# Modules whose tests share a module-scoped fixture that launches ranks or runs
# checks: under xdist's default (load) mode each worker that receives one of
# their tests would make it again (the distributed programs' two launches are
# ~35 s each time on a loaded 2-core machine; a framework's import is seconds,
# and its README table's runs are shared with the tests that read them).
# They go to one worker whole.
# (xdist_group cannot do it here: pytest 9 ignores the node id xdist rewrites.)
SHARED_FIXTURE_MODULES = frozenset({
    "tests/test_dist_programs.py", "tests/test_engine.py", "tests/test_reports_plot.py",
    "tests/test_reports_schema.py", "tests/test_reports_trajectory.py",
    "tests/test_frameworks_accelerate.py", "tests/test_frameworks_lightning.py",
    "tests/test_frameworks_transformers.py", "tests/test_trust_blame.py",
})


# The modules whose tests took longest (summed seconds on main c95d4bf, -n 2,
# two cores: 22 s down to 2 s), heaviest first, after the mypy check (1 s with
# its cache, 15-20 s in a fresh checkout). They run first, each module's tests
# in their own order, so that the workers end on short tests together instead
# of one of them starting a long one at the end. A module not listed (or
# renamed) keeps its place after them.
HEAVY_FIRST = (
    "tests/test_typing.py", "tests/test_faults_signals.py", "tests/test_distributed.py",
    "tests/test_frameworks_transformers.py", "tests/test_dist_elastic.py",
    "tests/test_seeded_bugs.py", "tests/test_dist_engine.py",
    "tests/test_frameworks_lightning.py", "tests/test_frameworks_accelerate.py",
    "tests/test_trust_fuzz.py", "tests/test_pytest_plugin.py", "tests/test_dist_programs.py",
    "tests/test_faults_timeout.py", "tests/test_fuzz.py", "tests/test_baseline.py",
    "tests/test_trust_seed.py", "tests/test_trust_blame.py", "tests/test_reports_plot.py",
    "tests/test_dist_launch.py", "tests/test_speed_preload.py", "tests/test_hostile_small.py",
    "tests/test_speed_forkserver.py", "tests/test_warm_restarts.py",
    "tests/test_reports_progress.py", "tests/test_dist_front_streams.py",
    "tests/test_dist_front.py", "tests/test_reports_summary.py", "tests/test_engine.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {module: i for i, module in enumerate(HEAVY_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))  # stable


@pytest.hookimpl(optionalhook=True)  # xdist may be off (-p no:xdist)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """xdist's hook: its load scheduling, except that the modules above are
    each one unit of work, handed out in the order collected (heaviest first);
    only when no other --dist mode was asked for."""
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    config.option.loadscopereorder = False  # (it would put the largest module first)

    class KeepSharedModulesTogether(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            return module if module in SHARED_FIXTURE_MODULES else nodeid

    return KeepSharedModulesTogether(config, log)
