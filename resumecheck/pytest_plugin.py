"""The pytest plugin: resume equivalence as a CI test.

Loaded by pytest through the ``pytest11`` entry point in every session of an
environment where resumecheck is installed, so importing this module must stay
cheap: it registers options, ini settings and the marker, and imports torch
and the engine only inside the fixture and hooks that run a check.

    def test_resume(resumecheck):
        resumecheck.assert_resume_equivalent("mytrain.py:TARGET")

    @pytest.mark.resumecheck(steps=20, resume_at=[7, 13], drop=["rng"])
    def test_rng_is_exercised(resumecheck):
        resumecheck.assert_components_exercised("mytrain.py:TARGET", ["rng"])
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

_KEY = "resumecheck"
_MARKER_ARGS = {
    "target", "steps", "resume_at", "drop", "isolation", "tolerance", "rtol", "atol",
    "seed", "noise_seeds", "threads",
}
_OPTIONS = {
    # name: (type, default, help)
    "steps": (int, None, "optimizer steps N for every check (default: each target's)"),
    "resume_at": (str, None, "resume points K[,K...] for every check (default: each target's)"),
    "isolation": (str, "inprocess", "restarts: inprocess (default) or process"),
    "tolerance": (str, "bitwise", "bitwise (default) or close (torch.testing's tolerances)"),
    "seed": (int, None, "set the program's seed setting for every check (default: the program's own)"),
    "noise_seeds": (int, 2, "extra seeds for the noise band (default 2)"),
    "threads": (int, 1, "torch threads for every run (default 1)"),
}


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("resumecheck", "resume equivalence checks")
    for name, (_, _, help_text) in _OPTIONS.items():
        flag = "--resumecheck-" + name.replace("_", "-")
        group.addoption(flag, dest=f"resumecheck_{name}", default=None, help=help_text)
        parser.addini(f"resumecheck_{name}", help_text, default=None)
    group.addoption(
        "--resumecheck-report", dest="resumecheck_report", default=None, metavar="PATH",
        help="write every check's report of the session to one JSON file",
    )
    parser.addini("resumecheck_report", "write the session's reports to this JSON file")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "resumecheck(target=None, steps=None, resume_at=None, drop=None, isolation=None, "
        "tolerance=None, rtol=None, atol=None, seed=None, noise_seeds=None, threads=None): "
        "settings for the resumecheck fixture's checks in this test",
    )
    config.stash[_results_key] = []
    config.stash[_options_key] = _session_options(config)


_results_key = pytest.StashKey[list]()
_options_key = pytest.StashKey[dict]()


def _session_options(config: pytest.Config) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for name, (kind, default, _) in _OPTIONS.items():
        raw = config.getoption(f"resumecheck_{name}")
        source = f"--resumecheck-{name.replace('_', '-')}"
        if raw is None:
            raw = config.getini(f"resumecheck_{name}")
            source = f"ini resumecheck_{name}"
        if raw in (None, "", []):
            options[name] = default
            continue
        try:
            options[name] = _parse(name, kind, str(raw))
        except ValueError as exc:
            raise pytest.UsageError(f"{source}={raw!r}: {exc}") from None
    return options


def _parse(name: str, kind: type, raw: str) -> Any:
    if name == "resume_at":
        try:
            return [int(p) for p in raw.split(",") if p.strip()]
        except ValueError:
            raise ValueError("expected step numbers separated by commas, e.g. 8 or 7,13") from None
    if name == "isolation" and raw not in ("inprocess", "process"):
        raise ValueError("expected inprocess or process")
    if name == "tolerance" and raw not in ("bitwise", "close"):
        raise ValueError("expected bitwise or close")
    if kind is int:
        try:
            value = int(raw)
        except ValueError:
            raise ValueError("expected a whole number") from None
        if value < (0 if name in ("seed", "noise_seeds") else 1):
            raise ValueError("out of range")
        return value
    return raw


class ResumeCheck:
    """The ``resumecheck`` fixture: the engine bound to this session's and test's settings."""

    def __init__(self, options: dict[str, Any], marker: dict[str, Any], nodeid: str,
                 results: list) -> None:
        self._options = options
        self._marker = marker
        self._nodeid = nodeid
        self._results = results

    def _settings(self, target: Any, overrides: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        from resumecheck.compare import Tolerance

        merged = {**self._options, **self._marker, **overrides}
        target = target if target is not None else merged.pop("target", None)
        merged.pop("target", None)
        rtol, atol = merged.pop("rtol", None), merged.pop("atol", None)
        tolerance = merged.pop("tolerance", "bitwise")
        if isinstance(tolerance, str):
            if rtol is not None or atol is not None:
                tolerance = Tolerance.close(rtol, atol)
            else:
                tolerance = Tolerance.bitwise() if tolerance == "bitwise" else Tolerance.close()
        merged["tolerance"] = tolerance
        return target, {k: v for k, v in merged.items() if v is not None}

    def verify(self, target: Any = None, **overrides: Any):
        """Run the engine and record the report for the session summary."""
        __tracebackhide__ = True
        from resumecheck.engine import verify

        target, settings = self._settings(target, overrides)
        report = verify(target, **settings)
        self._results.append({"nodeid": self._nodeid, "report": report.to_json()})
        return report

    def assert_resume_equivalent(self, target: Any = None, **overrides: Any):
        """Fail with a readable diff unless the full resume is equivalent."""
        __tracebackhide__ = True
        from resumecheck.assertions import require_equivalent

        overrides.setdefault("drop", self._marker.get("drop", "none"))
        return require_equivalent(self.verify(target, **overrides))

    def assert_components_exercised(self, target: Any = None, components: Any = None,
                                    **overrides: Any):
        """Fail, naming them, when dropping a component changes nothing (a blind spot)."""
        __tracebackhide__ = True
        from resumecheck.assertions import components_to_drop, require_exercised

        names = components if components is not None else self._marker.get("drop")
        overrides["drop"] = components_to_drop(names)
        return require_exercised(self.verify(target, **overrides))


@pytest.fixture
def resumecheck(request: pytest.FixtureRequest) -> ResumeCheck:
    """Resume-equivalence checks bound to this session's --resumecheck-* options and
    this test's @pytest.mark.resumecheck(...) settings."""
    marker: dict[str, Any] = {}
    for mark in reversed(list(request.node.iter_markers("resumecheck"))):
        if mark.args:
            pytest.fail(
                f"@pytest.mark.resumecheck takes keyword arguments only, got positional "
                f"{mark.args!r}; write e.g. @pytest.mark.resumecheck(steps=20, resume_at=[8])",
                pytrace=False,
            )
        unknown = sorted(set(mark.kwargs) - _MARKER_ARGS)
        if unknown:
            pytest.fail(
                f"@pytest.mark.resumecheck got unknown argument(s) {', '.join(unknown)}; "
                f"known: {', '.join(sorted(_MARKER_ARGS))}",
                pytrace=False,
            )
        marker.update(mark.kwargs)
    config = request.config
    return ResumeCheck(config.stash[_options_key], marker, request.node.nodeid,
                       config.stash[_results_key])


def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    results = config.stash.get(_results_key, [])
    workeroutput = getattr(config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: hand plain data to the controller
        workeroutput[_KEY] = json.dumps(results)
        return
    path = config.getoption("resumecheck_report") or config.getini("resumecheck_report")
    if path:
        Path(path).write_text(json.dumps(
            {"schema": "resumecheck.session/1", "checks": results}, indent=2))


def pytest_testnodedown(node: Any, error: Any) -> None:
    """xdist controller: collect a worker's checks."""
    data = getattr(node, "workeroutput", {}).get(_KEY)
    if data:
        node.config.stash[_results_key].extend(json.loads(data))


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    results = config.stash.get(_results_key, [])
    if not results or getattr(config, "workeroutput", None) is not None:
        return
    tr = terminalreporter
    tr.write_sep("=", "resumecheck")
    for entry in sorted(results, key=lambda e: e["nodeid"]):
        tr.write_line(_summary_row(entry))
    path = config.getoption("resumecheck_report") or config.getini("resumecheck_report")
    if path:
        tr.write_line(f"resumecheck: {len(results)} report(s) written to {path}")


def _summary_row(entry: dict[str, Any]) -> str:
    report = entry["report"]
    cells = []
    full_seen = False
    for run in report["runs"]:
        if not run["dropped"] and not full_seen:
            full_seen = True
            verdict = "ok" if report["equivalent"] else run["verdict"].upper()
            cells.append(f"full resume: {verdict}")
        elif not run["dropped"]:  # the engine's own, beside the program's save/load
            if report.get("declared_state_complete") is False:
                cells.append(f"engine resume: {run['verdict'].upper()} (declared state incomplete)")
        else:
            # "ok" only for an ablation that diverged; never for "inconclusive"
            state = ("blind spot" if run["blind_spot"] else
                     "ok" if run["verdict"] == "diverged" else run["verdict"])
            cells.append(f"{','.join(run['dropped'])}: {state}")
    return f"{entry['nodeid']}  {report['target']}  " + " | ".join(cells)
