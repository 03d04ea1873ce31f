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

import errno
import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from resumecheck.settings import DEFAULT_NOISE_SEEDS

_MARKER_ARGS = {
    "target", "steps", "resume_at", "drop", "isolation", "tolerance", "rtol", "atol",
    "seed", "noise_seeds", "threads", "timeout", "jobs", "nproc", "resume_nproc",
}
_OPTIONS = {
    # name: (type, default, help)
    "steps": (int, None,
              "steps N (calls of train_step()) for every check (default: each target's)"),
    "resume_at": (str, None, "resume points K[,K...] for every check (default: each target's)"),
    "isolation": (str, "inprocess", "restarts: inprocess (default) or process"),
    "tolerance": (str, "bitwise", "bitwise (default) or close (torch.testing's tolerances)"),
    "seed": (int, None, "set the program's seed setting for every check (default: the program's own)"),
    "noise_seeds": (int, DEFAULT_NOISE_SEEDS,
                    f"extra seeds for the noise band (default {DEFAULT_NOISE_SEEDS})"),
    "threads": (int, 1, "torch threads for every run (default 1)"),
    "timeout": (float, None, "seconds one training step may take; a slower step fails its "
                "run (default: 600 per reference step, then max(60, 20x the reference's "
                "slowest step); 0: no bound)"),
    "jobs": (int, None, "independent runs of a check side by side (default: one per "
             "threads cores with process isolation, 1 in-process); the report is the same "
             "for any number"),
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
    group.addoption(
        "--resumecheck-plot-dir", dest="resumecheck_plot_dir", default=None, metavar="DIR",
        help="draw each check's divergence figure into DIR (one PNG per check; needs the "
        "extra resumecheck[plot]); a failure message names its file",
    )
    parser.addini("resumecheck_plot_dir", "draw each check's divergence figure into this directory")
    group.addoption(
        "--resumecheck-step-summary", dest="resumecheck_step_summary", action="store_true",
        default=False, help="append a Markdown summary of the session's checks to "
        "$GITHUB_STEP_SUMMARY (GitHub Actions), when it is set",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "resumecheck(target=None, steps=None, resume_at=None, drop=None, isolation=None, "
        "tolerance=None, rtol=None, atol=None, seed=None, noise_seeds=None, threads=None, "
        "timeout=None, jobs=None, nproc=None, resume_nproc=None): "
        "settings for the resumecheck fixture's checks in this test (nproc=N: every "
        "segment as N ranks under torch's launcher; resume_nproc=M with it: the elastic "
        "resume, restarted at M ranks, judged within a tolerance)",
    )
    config.stash[_results_key] = []
    config.stash[_failed_key] = []
    config.stash[_options_key] = _session_options(config)
    config.pluginmanager.register(_Collector(config.stash[_results_key], config.stash[_failed_key]),
                                  "resumecheck-collector")
    config.stash[_plot_dir_key] = _plot_dir(config)
    _check_session_outputs(config)


def _check_session_outputs(config: pytest.Config) -> None:
    """Before any test: refuse a --resumecheck-report that cannot be written,
    and a --resumecheck-step-summary whose $GITHUB_STEP_SUMMARY cannot take it
    (found at the session's end, the whole session's result would be lost)."""
    if getattr(config, "workeroutput", None) is not None:
        return  # (an xdist worker: the controller writes them)
    from resumecheck.errors import OutputError

    raw = config.getoption("resumecheck_report") or config.getini("resumecheck_report")
    if raw:
        from resumecheck.output import check_output

        try:
            check_output(str(raw), "", what="the session's reports")
        except OutputError as exc:
            raise pytest.UsageError(f"--resumecheck-report={raw}: {exc}") from None
    if config.getoption("resumecheck_step_summary", False):
        from resumecheck.ci import step_summary_problem

        problem = step_summary_problem()
        if problem:
            raise pytest.UsageError(f"--resumecheck-step-summary: {problem}")


def _plot_dir(config: pytest.Config) -> Path | None:
    raw = config.getoption("resumecheck_plot_dir") or config.getini("resumecheck_plot_dir")
    if not raw:
        return None
    import importlib.util

    if importlib.util.find_spec("matplotlib") is None:
        from resumecheck.errors import MissingExtra

        raise pytest.UsageError(str(MissingExtra("--resumecheck-plot-dir", "matplotlib", "plot")))
    path = Path(config.invocation_params.dir, str(raw))  # absolute: failure messages name it
    if path.exists() and not path.is_dir():
        raise pytest.UsageError(f"--resumecheck-plot-dir={raw}: exists and is not a directory")
    try:  # now, not when a passing test draws its figure (a trial: that test failed)
        path.mkdir(parents=True, exist_ok=True)
        if not os.access(path, os.W_OK | os.X_OK):
            raise PermissionError(errno.EACCES, "no permission to write in it")
    except OSError as exc:
        raise pytest.UsageError(
            f"--resumecheck-plot-dir={raw}: cannot write figures in {path}: "
            f"{exc.strerror or exc}. Give a directory that can be created and written "
            "(or leave the option out)") from None
    return path


_results_key = pytest.StashKey[list]()
_failed_key = pytest.StashKey[list]()
_options_key = pytest.StashKey[dict]()
_plot_dir_key = pytest.StashKey["Path | None"]()
_report_failed_key = pytest.StashKey[str]()
_summary_failed_key = pytest.StashKey[str]()


def _session_options(config: pytest.Config) -> dict[str, Any]:
    """The session's options, parsed here and judged by ``Settings`` (its one set
    of rules; it imports no torch)."""
    from resumecheck.errors import InvalidArgument
    from resumecheck.settings import Settings

    options: dict[str, Any] = {}
    given: dict[str, tuple[str, Any]] = {}
    for name, (kind, default, _) in _OPTIONS.items():
        raw = config.getoption(f"resumecheck_{name}")
        source = f"--resumecheck-{name.replace('_', '-')}"
        if raw is None:
            raw = config.getini(f"resumecheck_{name}")
            source = f"ini resumecheck_{name}"
        if raw in (None, "", []):
            options[name] = default
            continue
        given[name] = (source, raw)
        try:
            options[name] = _parse(name, kind, str(raw))
        except ValueError as exc:
            raise pytest.UsageError(f"{source}={raw!r}: {exc}") from None
    try:
        Settings(**{k: v for k, v in options.items() if k != "tolerance" and v is not None})
    except InvalidArgument as exc:
        source, raw = given.get(exc.name, (exc.name, exc.value))
        raise pytest.UsageError(f"{source}={raw!r}: {exc.why}") from None
    return options


def _parse(name: str, kind: type, raw: str) -> Any:
    if name == "resume_at":
        try:
            return [int(p) for p in raw.split(",") if p.strip()]
        except ValueError:
            raise ValueError("expected step numbers separated by commas, e.g. 8 or 7,13") from None
    if name == "tolerance" and raw not in ("bitwise", "close"):
        raise ValueError("expected bitwise or close")
    if kind is int:
        try:
            return int(raw)
        except ValueError:
            raise ValueError("expected a whole number") from None
    if kind is float:
        try:
            return float(raw)
        except ValueError:
            raise ValueError("expected a number of seconds") from None
    return raw


class ResumeCheck:
    """The ``resumecheck`` fixture: the engine bound to this session's and test's settings."""

    def __init__(self, options: dict[str, Any], marker: dict[str, Any], nodeid: str,
                 results: list, plot_dir: Path | None = None) -> None:
        self._options = options
        self._marker = marker
        self._nodeid = nodeid
        self._results = results
        self._plot_dir = plot_dir
        self.plots: list[Path] = []
        """The divergence figures this test's checks drew (--resumecheck-plot-dir)."""

    def _settings(self, target: Any, overrides: dict[str, Any]) -> tuple[Any, Any]:
        """The check's target and its one ``Settings``: the session's options, then
        the marker's, then the call's."""
        from resumecheck.compare import Tolerance
        from resumecheck.settings import Settings

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
        return target, Settings(**{k: v for k, v in merged.items() if v is not None})

    def verify(self, target: Any = None, **overrides: Any):
        """Run the engine and record the report for the session summary."""
        __tracebackhide__ = True
        from resumecheck.engine import run_check
        from resumecheck.errors import ResumecheckError, TargetError

        target, settings = self._settings(target, overrides)
        try:
            report = run_check(target, settings)
        except ResumecheckError as exc:
            # Nothing was judged (the reference run failed, the target does not
            # load, the environment failed): listed in the session's summary,
            # and the test fails on the message, as it does on a verdict, not
            # on a traceback through the engine (a cause in the program's own
            # code, such as an import error, stays chained).
            self._results.append({"nodeid": self._nodeid, "target": _target_name(target),
                                  "error": {"kind": type(exc).__name__, "message": str(exc)}})
            raise exc.with_traceback(None) from (
                _own_frames_out(exc.__cause__) if isinstance(exc, TargetError) else None)
        self._results.append({"nodeid": self._nodeid, "report": report.to_json()})
        if self._plot_dir is not None:
            from resumecheck.plot import save_plot

            self._plot_dir.mkdir(parents=True, exist_ok=True)
            stem = "".join(c if c.isalnum() or c in "._-" else "_" for c in self._nodeid)
            suffix = f"-{len(self.plots) + 1}" if self.plots else ""
            self.plots.append(save_plot(report, self._plot_dir / f"{stem}{suffix}.png"))
        return report

    def _with_plot(self, exc: AssertionError) -> AssertionError:
        """The failure message names the check's figure, when one was drawn."""
        if self.plots:
            exc.args = (f"{exc}\n  divergence plot: {self.plots[-1]}",)
        return exc

    def assert_resume_equivalent(self, target: Any = None, **overrides: Any):
        """Fail with a readable diff unless the full resume is equivalent."""
        __tracebackhide__ = True
        from resumecheck.assertions import require_equivalent

        overrides.setdefault("drop", self._marker.get("drop", "none"))
        report = self.verify(target, **overrides)
        try:
            return require_equivalent(report)
        except AssertionError as exc:
            self._results[-1]["failed"] = type(exc).__name__
            raise self._with_plot(exc) from None

    def assert_components_exercised(self, target: Any = None, components: Any = None,
                                    **overrides: Any):
        """Fail, naming them, when dropping a component changes nothing (a blind spot)."""
        __tracebackhide__ = True
        from resumecheck.assertions import components_to_drop, require_exercised

        # (trial 403: a drop= given here was replaced by every component, unsaid: it
        # names the components, as components= does)
        given = overrides.pop("drop", None)
        names = (components if components is not None else given if given is not None
                 else self._marker.get("drop"))
        overrides["drop"] = components_to_drop(names)
        report = self.verify(target, **overrides)
        try:
            return require_exercised(report)
        except AssertionError as exc:
            # (trial 152: a blind spot's failure, on an equivalent report, was told
            # as one that no recorded check shows)
            self._results[-1]["failed"] = type(exc).__name__
            raise self._with_plot(exc) from None


def _own_frames_out(cause: BaseException | None) -> BaseException | None:
    """The program's exception with its traceback through the program's code
    only: the frames of resumecheck that called it are left out."""
    if cause is None:
        return None
    import types

    package = os.path.dirname(os.path.abspath(__file__)) + os.sep
    frames = []
    tb = cause.__traceback__
    while tb is not None:
        if not os.path.abspath(tb.tb_frame.f_code.co_filename).startswith(package):
            frames.append(tb)
        tb = tb.tb_next
    kept = None
    for frame in reversed(frames):
        kept = types.TracebackType(kept, frame.tb_frame, frame.tb_lasti, frame.tb_lineno)
    return cause.with_traceback(kept)


def _target_name(target: Any) -> str:
    """How a check's target is named in the session's summary."""
    if isinstance(target, str):
        return target
    if target is None:
        from resumecheck.program import BUILTIN_SPEC

        return BUILTIN_SPEC
    return str(getattr(target, "name", target))


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
                       request.node.stash.setdefault(_unsent_key, []),
                       config.stash.get(_plot_dir_key, None))


# A check's report travels with the test's own reports (setup, call,
# teardown), as plain data in a report attribute: under xdist every report
# reaches the controller as soon as it is made, so a worker that crashes later
# loses nothing that had finished. pytest_runtest_logreport collects them, in
# the controller and in a plain session alike.
_unsent_key = pytest.StashKey[list]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: Any) -> Any:
    report = yield
    unsent = item.stash.get(_unsent_key, None)
    if unsent:
        report.resumecheck_checks = json.dumps(unsent)
        unsent.clear()
    return report


class _Collector:
    """Collects the checks that arrive with test reports (registered per
    session), and the tests that failed."""

    def __init__(self, results: list, failed: list) -> None:
        self.results, self.failed = results, failed

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        data = getattr(report, "resumecheck_checks", None)
        if data:
            self.results.extend(json.loads(data))
        if report.failed and report.nodeid not in self.failed:
            self.failed.append(report.nodeid)


def _unrecorded(config: pytest.Config) -> list[str]:
    """The failed tests whose failure no check they recorded through the
    fixture shows: none recorded (a direct ``fuzz()`` or ``verify()`` call),
    or only equivalent ones before the test failed otherwise (trial 147: the
    README's fuzz test caught a bug that the summary rows and the report file,
    every one ok, did not show; trial 148: a check that passed, then a direct
    fuzz() that failed, in one test)."""
    shown = {e["nodeid"] for e in config.stash.get(_results_key, [])
             if "error" in e or "failed" in e or not e["report"]["equivalent"]}
    return [n for n in config.stash.get(_failed_key, []) if n not in shown]


_UNRECORDED = ("whose failure no check recorded through the resumecheck fixture shows (a "
               "direct fuzz(), verify() or assert_resume_equivalent() call, a hypothesis test "
               "of resumecheck.strategies or its resume_state_machine, or a failure of their "
               "own after their checks)")
# (trial 483: the patterns docs/FUZZ.md shows were not among them, and read as failures
# of another kind)
"""Said of ``_unrecorded``'s tests, under the summary's rows and in the job summary."""


def _unrecorded_line(unrecorded: list[str], written: bool) -> str:
    """The line that names them (``written``: the report file lists them too)."""
    return (f"{len(unrecorded)} failed test(s) {_UNRECORDED}: the rows do not show them"
            + (" (the report file lists them: unrecorded_failures)" if written else "")
            + ": " + ", ".join(unrecorded))


def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    results = config.stash.get(_results_key, [])
    if getattr(config, "workeroutput", None) is not None:
        return  # an xdist worker: its checks went to the controller with its reports
    path = config.getoption("resumecheck_report") or config.getini("resumecheck_report")
    if path:
        from resumecheck.errors import OutputError
        from resumecheck.output import write_report

        try:
            write_report(str(path), json.dumps(session_document(results, _unrecorded(config)),
                                               indent=2))
        except OutputError as exc:  # (checked at the start; the disk may fill since)
            config.stash[_report_failed_key] = str(exc)
    unrecorded = _unrecorded(config)
    if config.getoption("resumecheck_step_summary", False) and (results or unrecorded):
        from resumecheck.ci import append_step_summary

        problem = append_step_summary(session_markdown(results, unrecorded),
                                      "--resumecheck-step-summary")
        if problem:  # said in the terminal summary, on a line of its own
            config.stash[_summary_failed_key] = problem


def session_document(results: list[dict[str, Any]],
                     unrecorded: list[str] | None = None) -> dict[str, Any]:
    """The ``--resumecheck-report`` file: every check of the session
    (``resumecheck.session/1``), and the failed tests that recorded none."""
    document: dict[str, Any] = {"schema": "resumecheck.session/1", "checks": results}
    if unrecorded:
        document["unrecorded_failures"] = list(unrecorded)
    return document


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    results = config.stash.get(_results_key, [])
    path = config.getoption("resumecheck_report") or config.getini("resumecheck_report")
    unrecorded = _unrecorded(config)
    asked = bool(path) or config.getoption("resumecheck_step_summary", False)
    if not (results or (unrecorded and asked)) or getattr(config, "workeroutput", None) is not None:
        return  # (no check, nothing asked of resumecheck: a failure is only the test's own)
    tr = terminalreporter
    tr.write_sep("=", "resumecheck")
    for entry in sorted(results, key=lambda e: e["nodeid"]):
        tr.write_line(_summary_row(entry))
    for line in _caveat_lines(results):
        tr.write_line(f"resumecheck: {line}")
    if unrecorded:
        tr.write_line("resumecheck: " + _unrecorded_line(unrecorded, bool(path)), yellow=True)
    failed = config.stash.get(_report_failed_key, None)
    if failed:
        tr.write_line(f"resumecheck: {failed}", red=True)
    elif path:
        tr.write_line(f"resumecheck: {len(results)} report(s) written to {path}")
    summary_failed = config.stash.get(_summary_failed_key, None)
    if summary_failed:
        tr.write_line(f"resumecheck: {summary_failed}", yellow=True)


def _caveat_lines(results: list[dict[str, Any]]) -> list[str]:
    """What the checks could not see (their reports' ``caveats``), each once,
    with the checks it is said of where not all (trial 147: the rows and a
    passing check's output never showed them; a build's settings that the
    script's own resume path must set too went unsaid in CI)."""
    said: dict[str, list[str]] = {}
    checks = [e for e in results if "report" in e]
    for entry in checks:
        for caveat in entry["report"].get("caveats", []):
            said.setdefault(caveat, []).append(entry["nodeid"])
    # (trials 596, 609: a caveat named beside the one check that passed read as not said
    # of the failing check, which ran so too: a failing report lists none)
    passed = [e["nodeid"] for e in checks if e["report"]["equivalent"]]
    failing = len(checks) - len(passed)
    lines = []
    for caveat, nodeids in said.items():
        of = ("every check" if len(nodeids) == len(checks) else ", ".join(nodeids)
              if len(nodeids) <= 3 else f"{len(nodeids)} of {len(checks)} checks")
        if failing and len(nodeids) < len(checks) and sorted(nodeids) == sorted(passed):
            of = ((f"{of}, the check that passed" if len(passed) == 1 else
                   "every check that passed") + "; a check that failed lists none: it may hold "
                  "of it too")
        lines.append(f"{caveat} ({of})")
    return lines


def session_markdown(results: list[dict[str, Any]], unrecorded: list[str] | None = None) -> str:
    """The session's checks as a Markdown table, for a CI job summary; and the
    failed tests whose failure no check shows (``unrecorded``: trial 148, the
    job summary said every resume was equivalent while a fuzz test failed)."""
    outcomes = [_outcome(e["report"]) if "report" in e else "not judged" for e in results]
    counts = [f"{outcomes.count(o)} {o}" for o in ("NOT equivalent", "inconclusive", "not judged")
              if o in outcomes]
    # (trial 471: an equivalent check whose test failed on a blind spot read "equivalent"
    # in a summary that counted one problem where pytest had two)
    failed = sum(1 for e, o in zip(results, outcomes) if o == "equivalent" and e.get("failed"))
    if failed:
        counts.append(f"{failed} equivalent whose test failed")
    if unrecorded:
        counts.append(f"{len(unrecorded)} failed test(s) no check shows")
    verdict = ", ".join(counts) or "every full resume equivalent"
    lines = [f"### resumecheck: {len(results)} check(s), {verdict}", "",
             "| test | target | full resume | first divergence | blind spots |",
             "|---|---|---|---|---|"]
    for entry in sorted(results, key=lambda e: e["nodeid"]):
        cells = _markdown_cells(entry)
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    caveats = _caveat_lines(results)
    if caveats:
        lines += ["", "What the checks could not see:", ""] + [f"- {c}" for c in caveats]
    # (trial 438: the terminal's row said no epoch's end was tried; the job summary,
    # "equivalent" alone)
    beside = [(e["nodeid"], cells) for e in sorted(results, key=lambda e: e["nodeid"])
              if "report" in e and (cells := _beside_cells(e["report"]))]
    if beside:
        lines += ["", "What each check did not compare or try:", ""] + [
            f"- `{nodeid}`: " + "; ".join(cells) for nodeid, cells in beside]
    if unrecorded:
        lines += ["", f"Failed tests {_UNRECORDED}: " + ", ".join(f"`{n}`" for n in unrecorded)]
    return "\n".join(lines) + "\n"


def _full_run(report: dict[str, Any]) -> dict[str, Any] | None:
    return next((r for r in report["runs"] if not r["dropped"]), None)


def _outcome(report: dict[str, Any]) -> str:
    """A check's full resume in words, from its JSON report (as Report.outcome)."""
    if report["equivalent"]:
        return "equivalent"
    full = _full_run(report)
    return "inconclusive" if full and full["verdict"] == "inconclusive" else "NOT equivalent"


def _not_judged(entry: dict[str, Any]) -> str:
    """A check that raised instead of judging, in one line: its error's kind and
    first sentence."""
    error = entry["error"]
    text = error["message"].splitlines()[0] if error["message"] else ""
    if len(text) > 200:
        text = text[:199] + "…"
    return f"not judged: {error['kind']}: {text}"


def _markdown_cells(entry: dict[str, Any]) -> list[str]:
    if "error" in entry:
        return [f"`{entry['nodeid']}`", f"`{entry['target']}`",
                f"**not judged** ({entry['error']['kind']})", _not_judged(entry), "-"]
    report = entry["report"]
    full = _full_run(report)
    where = "-"
    if full is not None and full["first_divergent_step"] is not None:
        # a failed run has a step (where it failed) but no quantity, as in the report
        what = full["first_divergent_quantity"] or (
            "(failed)" if full["verdict"] == "failed" else "")
        where = f"step {full['first_divergent_step']}: {what}".rstrip(": ")
    if full is not None and not report["equivalent"]:
        where += _confirmed_text(full)
    said = _outcome(report)
    if said == "equivalent" and entry.get("failed"):
        said = f"equivalent; **test failed** ({entry['failed']})"
    elif said == "inconclusive":
        said = "**inconclusive**"
    elif said != "equivalent" and full is not None and _lost_on_resave(full):
        said = f"**NOT equivalent** ({_lost_on_resave(full)})"
    elif said != "equivalent":
        said = f"**NOT equivalent** ({full['verdict'] if full else 'not run'})"
    if report.get("declared_state_complete") is False:
        said += "; declared state incomplete: ablations not judged"
    blind = ", ".join(",".join(r["dropped"]) for r in report["runs"] if r["blind_spot"])
    unsure = ", ".join(",".join(r["dropped"]) for r in report["runs"]
                       if r["dropped"] and r["verdict"] == "inconclusive")
    latent = ", ".join(full["latent_gaps"]) if full is not None else ""
    spots = "; ".join(w for w in (blind, unsure and f"inconclusive: {unsure}",
                                  latent and f"latent gap: {latent}") if w)
    return [f"`{entry['nodeid']}`", f"`{report['target']}`", said, where, spots or "-"]


def _lossy_loads(run: dict[str, Any]) -> list[dict[str, Any]]:
    """``RunResult.lossy_loads`` of a run's JSON: at the first restore, the
    reference's state put in, or at a later one that changed what the run held alike;
    not a data position whose later steps read alike (trial 847: the row read "a
    load_state_dict() loses state")."""
    from resumecheck.phrases import CAME_BACK_READ, RESTORE_CHANGED, place_read_alike

    first = (run["resume_at"] or [None])[0]
    t = run.get("trajectory") or {}
    return [f for f in run["diagnosis"] if f.get("basis") == "reference" and (
        f.get("step") == first or RESTORE_CHANGED in f["detail"])
        and CAME_BACK_READ not in f["detail"] and not place_read_alike(
            f["component"], f["detail"], f.get("step") == first, t.get("compared", []),
            t.get("differs", {}))]


def _engine_why(run: dict[str, Any], own: dict[str, Any], named: bool = False) -> str:
    """Why the engine's own full resume departs, beside the program's save/load
    (``own``), where the declared components do not capture the program's state."""
    from resumecheck.phrases import (
        BUILDING, FETCHED_BEFORE_RESTORE, LOOP_GOES_ON, NOT_WHAT_IT_MAKES, PLACE_CAME_BACK,
        RESTORING, SAME_PLACE, STOPPED, is_place_finding,
    )

    lossy = _lossy_loads(run)
    # (trial 768: Lightning's recount of an epoch's end, in a correct resume too, beside a
    # callback set again before the first step, read "a load_state_dict() loses state")
    # (trial 873: beside state the program's own resume showed its checkpoint losing
    # (``named``), the recount alone is no lead: the row reads as the WARNING does)
    lossy = [f for f in lossy if not (f["component"] == "data_cursor" and f["detail"].startswith(
        "epoch_progress."))] or ([] if named else lossy)
    stepped = run["verdict"] != "failed"
    if stepped and FETCHED_BEFORE_RESTORE in own["explanation"]:
        # (trial 304 read "declared state incomplete" where the WARNING said this)
        return f"its batches were {FETCHED_BEFORE_RESTORE}"
    alike = _lossy_alike(lossy) if stepped else None
    return (alike if alike is not None
            # (trial 595: a LightningModule's on_load_checkpoint() that set nothing back)
            else "its on_load_checkpoint() loses state"
            if stepped and lossy and all(f["component"] == "hooks" for f in lossy)
            # (trial 833: a datamodule's place, set at its next iterator, read as lost)
            else PLACE_CAME_BACK if stepped and lossy and SAME_PLACE in (
                run.get("divergence_detail") or "") and all(
                is_place_finding(f["component"], f["detail"]) for f in lossy)
            else "a load_state_dict() loses state" if stepped and lossy
            else "declared state left otherwise after a restart"
            if stepped and _later_otherwise(run)
            # (trial 259: a restore that skipped one loader of two, its position back
            # as saved, read "declared state incomplete")
            else "every declared component came back; it reads other samples"
            if stepped and _position_unused(run)
            # (trial 392: a plateau step Lightning's loop left out after a restore read
            # "declared state incomplete" alone, where the WARNING offered both)
            else f"declared state incomplete, or the framework's {LOOP_GOES_ON}"
            if stepped and LOOP_GOES_ON in run["explanation"]
            # (trial 415: a loader's seed drawn after the restore read "declared state
            # incomplete", where every declared component came back)
            else "it draws from a random stream after the restore more than the "
            "uninterrupted run"
            if stepped and any((o.get("draws") or 0) > 0 for o in run.get("stream_offsets", []))
            # (trial 831: a position's load that skipped its epoch's batches unread)
            else f"declared state incomplete, or {NOT_WHAT_IT_MAKES}" if stepped
            else "its build failed" if run["explanation"].startswith(BUILDING)
            else "its restore failed" if run["explanation"].startswith(RESTORING)
            else STOPPED if run["explanation"].startswith(STOPPED)
            else "it failed")


def _lossy_alike(lossy: list[dict[str, Any]]) -> str | None:
    """``_engine_why``'s words where every finding of a lossy load says one
    thing of itself (None: they do not, or there are none)."""
    from resumecheck.phrases import (
        MOVED_BY_LATER_LOAD, NO_LONGER_USED, REORDERED, changed_after_load,
    )

    kinds: list[tuple[Callable[[str], bool], str]] = [
        # (a trial: an optimizer built over its parameters in another order read
        # "a load_state_dict() loses state", where it loaded all of it, onto others)
        (lambda d: d.startswith(REORDERED), "an optimizer built over its parameters in another "
         "order"),
        # (a trial: a callback reset in on_train_begin read "a load loses state")
        (changed_after_load, "a restored component changed before the first step"),
        # (trial 862: a generator another component's load made anew, the state set
        # into the old one, read "a load_state_dict() loses state")
        (lambda d: NO_LONGER_USED in d, "a generator made anew by another component's load"),
        # (trial 891: a generator a later component's load drew from)
        (lambda d: MOVED_BY_LATER_LOAD in d,
         "a restored component changed by a later component's load")]
    for test, words in kinds:
        if lossy and all(test(f["detail"]) for f in lossy):
            return words
    return None


def _position_unused(run: dict[str, Any]) -> bool:
    """Whether a run's why says its declared data position came back as saved
    and the samples differ all the same (``phrases.POSITION_UNUSED``)."""
    from resumecheck.phrases import POSITION_NEW_EPOCH, POSITION_UNUSED

    return any(sentence.split("{}")[1].split(":")[0] in run["explanation"]
               for sentence in (POSITION_UNUSED, POSITION_NEW_EPOCH))


def _later_otherwise(run: dict[str, Any]) -> bool:
    """``RunResult.later_restore_otherwise`` of a run's JSON, or one whose every
    step matched and only the end differs (the WARNING's LATER_OTHERWISE too)."""
    later, diverged_at = run["resume_at"][1:], run["first_divergent_step"]
    if (run.get("first_divergent_quantity") or "").startswith("state of"):
        return not _lossy_loads(run)
    return bool(later) and not _lossy_loads(run) and any(
        f.get("basis") == "reference" and f.get("step") in later
        and (diverged_at is None or diverged_at > f["step"]) for f in run["diagnosis"])


def _confirmed_text(run: dict[str, Any]) -> str:
    """`` (confirmed: scaler)``: the components a rerun confirmed as the cause
    of a run in JSON ('' where none was; a trial's CI summary named no cause,
    only the verdict)."""
    from resumecheck.phrases import OLDER_CHECKPOINT, RATE_ALONE, RATE_AND_MOMENTUM

    if OLDER_CHECKPOINT in run.get("explanation", ""):  # (trial 157: a data loader's bug?)
        return f" ({OLDER_CHECKPOINT})"
    # (trial 837: "confirmed: optimizer" of a rate a scheduler made after its load set;
    # trial 841: of a rate and momentum so)
    confirmed = list(dict.fromkeys(
        f"{f['component']}'s learning rate, which a scheduler sets"
        if RATE_ALONE in f["detail"] else
        f"{f['component']}'s learning rate and momentum, which a scheduler sets"
        if RATE_AND_MOMENTUM in f["detail"] else f["component"]
        for f in run["diagnosis"] if f.get("status") == "confirmed"))
    # (trial 559: a cause the ablation alone showed, read as no cause named)
    likely = list(dict.fromkeys(f["component"] for f in run["diagnosis"]
                                if f.get("status") == "likely"))
    return "".join(f" ({word}: {', '.join(names)})" for word, names in (
        ("confirmed", confirmed), ("likely cause", likely)) if names)


def _end_alone(run: dict[str, Any]) -> str:
    """`` in the end state alone``, of a run whose every step matched (trials
    539, 555: a Lightning twin's streams, a draw off at the end, read as a
    false alarm under a bare DIVERGED)."""
    quantity = run.get("first_divergent_quantity") or ""
    return (f" in the end state alone ({quantity.removeprefix('state of ')}; every step "
            "matched)" if run.get("verdict") == "diverged" and quantity.startswith("state of")
            else "")


def _lost_on_resave(run: dict[str, Any]) -> str:
    """Of a full resume in JSON whose steps all match: what a save right after
    the program's load() loses, in words ('' when nothing)."""
    lost = list(dict.fromkeys(f["component"] for f in run["diagnosis"]
                              if f.get("status") == "lost_on_resave"))
    return f"a save right after the load loses {', '.join(lost)}" if lost else ""


def _summary_row(entry: dict[str, Any]) -> str:
    from resumecheck.phrases import CHECKPOINT_LOSES, CHECKPOINT_MAY_LOSE

    if "error" in entry:
        return f"{entry['nodeid']}  {entry['target']}  {_not_judged(entry)}"
    report = entry["report"]
    cells = []
    full_seen = False
    for run in report["runs"]:
        if not run["dropped"] and not full_seen:
            full_seen = True
            verdict = ("ok" if report["equivalent"] else
                       f"NOT EQUIVALENT ({_lost_on_resave(run)})" if _lost_on_resave(run)
                       else run["verdict"].upper() + _end_alone(run) + _confirmed_text(run))
            if report["equivalent"] and run["latent_gaps"]:  # (an "ok" that hides a gap)
                verdict += f" (latent gap: {', '.join(run['latent_gaps'])})"
            cells.append(f"full resume: {verdict}")
        elif not run["dropped"]:  # the engine's own, beside the program's save/load
            if report.get("declared_state_complete") is False:
                why = _engine_why(run, report["runs"][0], any(
                    CHECKPOINT_LOSES in line or CHECKPOINT_MAY_LOSE in line
                    for line in report.get("undeclared", ())))
                cells.append(f"engine resume: {run['verdict'].upper()} ({why})")
        else:
            # "exercised" only for an ablation that diverged; never for "inconclusive"
            # (trial 203 read "normaliser: ok" as "the normaliser resumes fine")
            from resumecheck.phrases import (
                CANNOT_RESTORE_WITHOUT, CAUSE_YET_BLIND, MODES_PUT_BACK, fields_as_built,
            )

            # (trial 158: a blind spot the full resume's row confirmed as its cause)
            state = ("blind spot, yet confirmed in the full resume"
                     if run["blind_spot"] and CAUSE_YET_BLIND in run["explanation"]
                     else "blind spot" if run["blind_spot"] else
                     _exercised_cell(run) if run["verdict"] == "diverged" else
                     # (trial 699: a callback that freezes layers, which the engine's restore
                     # of the module froze again)
                     f"{_EXERCISED}: without it the program holds parameters' requires_grad "
                     "or modules' modes otherwise, which the engine's restore put back"
                     if MODES_PUT_BACK in run["explanation"] else
                     # (trial 457: `freeze: failed` in the row of a test that passed: a
                     # restore that fails without it needs it, which counts as exercised)
                     f"{_EXERCISED}: the restore fails without it"
                     if run["verdict"] == "failed" and CANNOT_RESTORE_WITHOUT in run["explanation"]
                     else _failed_cell(run) if run["verdict"] == "failed"
                     and run.get("first_divergent_step") is not None
                     else run["verdict"])
            untried = fields_as_built(report.get("not_checked", []), ",".join(run["dropped"]))
            if state.startswith(_EXERCISED) and untried:  # (trial 159: `early_stop: ok`)
                # (trial 235 read "but not stopped" of a field `stopped` as English)
                named = [u if u.endswith(" more") else f"`{u}`" for u in untried]
                state += (f", but not {', '.join(named)}: as a restore without it leaves it, "
                          "at the resume point")
            cells.append(f"{','.join(run['dropped'])}: {state}")
    cells += _beside_cells(report)
    return f"{entry['nodeid']}  {report['target']}  " + " | ".join(cells)


def _exercised_cell(run: dict[str, Any]) -> str:
    """A dropped component's cell where dropping it departs: exercised; where only
    the end state departs, said so (trial 197: `sampler_epoch: ok` of a
    component no step read, its loss shown only by the state it ends with;
    trial 207: not "no step read it" of a scheduler whose lost milestone fell
    on the step it would have cut at, every step matching)."""
    if (run.get("first_divergent_quantity") or "").startswith("state of"):
        return f"{_EXERCISED}, by the state it ends with alone (every step matched)"
    if run.get("max_abs_loss_diff") == 0:  # (trial 447: `ema: exercised`, where run said silent)
        return f"{_EXERCISED}, silent: the training loss does not differ"
    return _EXERCISED


def _failed_cell(run: dict[str, Any]) -> str:
    """A dropped component's cell where the run without it departed before it
    failed, or failed in a step (trial 533: `hard_cache: failed` in the row of
    a test that passed, whose step raised without it: the run needs it)."""
    step = run["first_divergent_step"]
    if run.get("first_divergent_quantity"):
        return f"{_EXERCISED}: without it the run departs at step {step}, then fails"
    return f"{_EXERCISED}: without it the run fails at step {step}"


_EXERCISED = "exercised"
"""A row's cell of a dropped component whose loss the check sees (it was
``ok``, which trial 203 read as "it resumes fine")."""


def _beside_cells(report: dict[str, Any]) -> list[str]:
    """A row's cells on what the check did not compare: state the program's
    own resume ends without, files its save() keeps beside its checkpoint,
    state the resume point found as built."""
    # (torch-free: an xdist controller that ran no check never imports torch for a row)
    from resumecheck.phrases import ADAPTER_LOOP, as_built_uncompared, global_streams, side_files

    drawn = report.get("drawn_at_import") or []
    if drawn and report.get("isolation") == "inprocess" and not report.get("nproc"):
        # (trial 142: a data order drawn at import passed the test with nothing said)
        cells = [f"not checked in-process: drawn at import from {global_streams(drawn)} "
                 f"({_IN_PROCESSES} checks it)"]
    else:
        cells = []

    if report.get("set_order"):  # (trial 149: a data order sorted by hash() of a string)
        cells.append("WARNING: an order that follows the hash seed, which in-process restarts "
                     f"share (the report's set_order names it): {_IN_PROCESSES} checks it")
    cells += _uncompared_cells(report.get("undeclared", []))
    run: dict[str, Any] = next(
        (r for r in report["runs"] if not r["dropped"] and r["checkpoint"] == "program"), {})
    own = run.get("explanation", "")
    beside = side_files(run.get("side_files", {}))
    if beside:  # (trial 138: a step count kept in a file of its own passed silently)
        cells.append(f"{beside} outside its checkpoint")
    if ADAPTER_LOOP in own:  # (trial 138: its loop's skip, unchecked)
        cells.append(f"{ADAPTER_LOOP}: your own resume code is not checked")
    # (trial 137: an epoch counter a state_dict() left out, still as built at the
    # resume point, was named by `run` and not in the session's row)
    unseen = as_built_uncompared(report.get("undeclared", []))
    if unseen:
        cells.append("not compared, as built at the resume point (one where the run has "
                     "changed it shows it): " + ", ".join(unseen))
    return cells + (_unchecked_cells(report) if report.get("equivalent") else [])


def _uncompared_cells(undeclared: list[str]) -> list[str]:
    """A row's cells on the report's `not compared` lines, by what each says."""
    from resumecheck.phrases import (
        CHECKPOINT_LOSES, CHECKPOINT_MAY_LOSE, GENERATOR_POSITION, MODULE_LEVEL, NOT_SET_BACK,
        UNHELD_POSITION, lost_uncompared, paths_said, set_again_uncompared, uncompared_path,
        unless_not_state,
    )

    cells = []
    kept = [uncompared_path(w) for w in undeclared if f": {MODULE_LEVEL}" in w]
    if kept:
        cells.append("not compared, kept where no checkpoint holds it: " + ", ".join(kept))
    positions = [uncompared_path(w) for w in undeclared if GENERATOR_POSITION in w]
    may = [uncompared_path(w) for w in undeclared
           if f": {CHECKPOINT_MAY_LOSE}" in w and uncompared_path(w) not in kept + positions]
    if may:  # (trial 156: a closure's count the why named, in no row)
        cells.append(f"not compared, {CHECKPOINT_MAY_LOSE}: " + ", ".join(may))
    if positions:  # (trial 154: named by `run`, in no row; trial 404: after what may be lost)
        cells.append(f"not compared, {UNHELD_POSITION}: " + ", ".join(positions))
    lost = lost_uncompared(undeclared)
    if lost:  # (an "ok" covers what is compared: say what the resume loses beside it)
        cells.append("not compared, ends otherwise in your resume: " + paths_said(lost, quote=""))
    again = set_again_uncompared(undeclared)
    if again:  # (trial 180: a callback's best loss lost, set again by a later evaluation)
        cells.append("not compared, lost by your load, set again later: "
                     + paths_said(again, quote=""))
    left = [uncompared_path(w) for w in undeclared if f" {NOT_SET_BACK}: " in w]
    # (trial 485: a field its component left out was named twice, once as lost)
    loses = [path for w in undeclared if f": {CHECKPOINT_LOSES}" in w
             and (path := uncompared_path(w)) not in [*kept, *positions, *lost, *again, *left]]
    if loses:  # (trial 481: lost buffers the WARNING led with, in no row)
        cells.append(f"not compared, {CHECKPOINT_LOSES}{unless_not_state(undeclared, loses)}: "
                     + ", ".join(loses))
    if left:  # (trial 175: a lost EMA count named by `run`; the row named only its effects)
        cells.append("not compared, a field its component's state_dict() leaves out: "
                     + ", ".join(left))
    return cells


_IN_PROCESSES = "--resumecheck-isolation=process"
"""How a session's row says to restart in fresh interpreters (trial 483: it said
the CLI's --isolation process)."""


def _unchecked_cells(report: dict[str, Any]) -> list[str]:
    """A passing row's cells on what its resume points cannot show (not beside a
    failure, trial 172: the row's news is the failure)."""
    from resumecheck.phrases import (
        AFTER_LAST_STEP, AS_THE_BUILD_MADE, BETWEEN_STEPS, as_built_at_points,
    )

    cells = []
    for line in report.get("not_checked", []):
        # (trial 175: a pass whose resume points held no epoch's end, said by `run` only)
        if line.startswith(("a restart where an epoch ends", "a restart inside an epoch")):
            found = re.search(r"--resume-at ([\w ]+?) checks one", line)
            k = found.group(1) if found else ""
            # (trial 483: the CLI's option, where a test sets the marker's resume_at)
            # (trial 812: "resume_at=[12]" read as in place of the test's own points)
            points = sorted({*report.get("resume_at", []), int(k)}) if k.isdigit() else None
            # (trial 827: a Trainer's sampler known to read other samples there, left out)
            known = line.split("; there ", 1)[1] if "; there " in line else ""
            cells.append(f"not checked: {line.split(' (')[0]}"
                         # (trials 825, 830, 837, 838: "the test's mark" of a test with none)
                         + (f" (resume_at={points}, adding {k}, in the test's "
                            "mark.resumecheck or its call, checks one)" if points is not None
                            else f" (resume_at=[{k}] in the test's mark.resumecheck or its "
                            "call checks one)"
                            if k else "") + (f"; there {known}" if known else ""))
        elif line.startswith(AFTER_LAST_STEP):  # (trial 376: the best model loaded at the end)
            cells.append(f"not checked: {line.split(': ')[0]})")
        elif line.startswith(BETWEEN_STEPS):  # (trial 875: a count kept by hand, always 0)
            cells.append(f"not checked: {line.split('): ')[0]})")
    built = as_built_at_points(report.get("not_checked", []))
    if built:  # (trials 161, 165: `full resume: ok` beside a counter as built there)
        cells.append(f"not checked, {AS_THE_BUILD_MADE} it at the resume point (one where the "
                     "run has changed it shows it): " + ", ".join(built))
    return cells
