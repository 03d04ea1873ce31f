"""A full resume the engine cannot judge is said to be inconclusive everywhere
it is reported, never "NOT EQUIVALENT": the headline, the Markdown summary, the
pytest failure, the session table and the CLI's exit status (5)."""

from __future__ import annotations

import pytest

from resumecheck import cli
from resumecheck.assertions import describe_failure, require_equivalent
from resumecheck.environment import fingerprint
from resumecheck.errors import ResumeNotEquivalent
from resumecheck.pytest_plugin import session_markdown
from resumecheck.report import DIVERGED, IDENTICAL, INCONCLUSIVE, Report, RunResult

WHY = "per-rank state could not be mapped (rng[rank 1])"


def _report(verdict: str) -> Report:
    full = RunResult(dropped=[], resume_at=[4], verdict=verdict, checkpoint="program",
                     nproc=1, explanation=WHY, reproduce="resumecheck run t.py:T")
    return Report(target="t.py:T", steps=8, resume_at=[4], seed=0, isolation="process",
                  tolerance={"mode": "close", "rtol": None, "atol": None},
                  determinism={"checked": False}, noise={"seeds": [], "band": None},
                  environment=fingerprint(1), runs=[full], nproc=2)


@pytest.mark.parametrize("verdict, outcome", [
    (INCONCLUSIVE, "INCONCLUSIVE"), (DIVERGED, "NOT EQUIVALENT"), (IDENTICAL, "EQUIVALENT"),
])
def test_the_headline_says_what_the_evidence_decided(verdict, outcome):
    report = _report(verdict)
    assert report.outcome == outcome
    assert f"full resume: {outcome}\n" in report.render("table")
    assert report.render("markdown").startswith(f"### resumecheck: full resume {outcome} — ")


def test_an_inconclusive_resume_fails_an_assertion_without_calling_it_not_equivalent():
    report = _report(INCONCLUSIVE)
    text = describe_failure(report)
    assert text.startswith("resume could not be judged (inconclusive): t.py:T")
    assert "not equivalent" not in text
    with pytest.raises(ResumeNotEquivalent):  # nothing proved equivalent: the test fails
        require_equivalent(report)


def test_the_session_summary_counts_inconclusive_checks_apart():
    entries = [{"nodeid": f"t::{v}", "report": _report(v).to_json()}
               for v in (INCONCLUSIVE, DIVERGED, IDENTICAL)]
    text = session_markdown(entries)
    assert text.startswith("### resumecheck: 3 check(s), 1 NOT equivalent, 1 inconclusive")
    row = next(line for line in text.splitlines() if line.startswith("| `t::inconclusive`"))
    assert "**inconclusive**" in row and "NOT equivalent" not in row


@pytest.mark.parametrize("verdict, code", [(INCONCLUSIVE, 5), (DIVERGED, 1), (IDENTICAL, 0)])
def test_the_cli_exit_status_tells_inconclusive_from_not_equivalent(
        verdict, code, monkeypatch, capsys):
    import resumecheck.engine

    monkeypatch.setattr(resumecheck.engine, "run_check",
                        lambda *args, **kwargs: _report(verdict))
    assert cli.main(["run", "resumecheck.tiny:TARGET"]) == code
    captured = capsys.readouterr()
    assert f"full resume: {_report(verdict).outcome}" in captured.out
    if verdict == INCONCLUSIVE:
        assert "NOT" not in captured.out + captured.err
