"""Markdown for CI job summaries, $GITHUB_STEP_SUMMARY, and the plugin's figures."""

from __future__ import annotations

import json

import pytest

from resumecheck.cli import main
from resumecheck.schema import validate

pytestmark = pytest.mark.e2e

BUGGY = "fixtures.bugs.class01_scheduler_not_saved:BUGGY"


def _table(markdown: str) -> list[list[str]]:
    rows = [line for line in markdown.splitlines() if line.startswith("|")]
    # split on unescaped pipes only
    return [[c.strip() for c in row.replace("\\|", "\0").strip("|").split("|")] for row in rows]


def test_run_markdown_is_a_well_formed_summary(capsys):
    assert main(["run", BUGGY, "--drop", "scheduler", "--noise-seeds", "0",
                 "--format", "markdown"]) == 1
    text = capsys.readouterr().out
    assert text.startswith(f"### resumecheck: full resume NOT EQUIVALENT — `{BUGGY}`")
    table = _table(text)
    assert table[0] == ["run", "verdict", "first divergence", "max \0Δloss\0", "noise", "why"]
    assert {len(row) for row in table} == {6}  # every row has the header's columns
    assert table[2][0] == "full resume (own save/load)" and table[2][1] == "diverged"
    assert "- **diagnosis**: scheduler: last_epoch 0, expected 9" in text
    assert f"- **reproduce**: `resumecheck run {BUGGY} --steps" in text


def test_step_summary_appends_when_set(tmp_path, monkeypatch, capsys):
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    argv = ["run", BUGGY, "--drop", "none", "--noise-seeds", "0", "--step-summary",
            "--format", "json"]
    assert main(argv) == 1
    validate(json.loads(capsys.readouterr().out))  # stdout keeps the chosen format
    assert main(argv) == 1
    text = summary.read_text()
    assert text.startswith("earlier step\n### resumecheck: full resume NOT EQUIVALENT")
    assert text.count("### resumecheck:") == 2  # appended, never overwritten


def test_step_summary_without_the_variable_says_so(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    monkeypatch.chdir(tmp_path)
    assert main(["baseline", "--steps", "3", "--step-summary"]) == 0
    assert "GITHUB_STEP_SUMMARY is not set" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_fuzz_markdown_names_the_minimal_schedule_and_plots_it(tmp_path, capsys):
    plot = tmp_path / "fuzz.png"
    # a bug the first example shows: the search for a hidden schedule is tests/test_fuzz.py's
    assert main(["fuzz", BUGGY, "--max-examples", "15", "--format", "markdown",
                 "--plot", str(plot)]) == 1
    captured = capsys.readouterr()
    text = captured.out
    assert plot.read_bytes()[:4] == b"\x89PNG" and f"plot written to {plot}" in captured.err
    assert text.startswith("### resumecheck fuzz: failing schedule FOUND")
    assert "minimal failing schedule: resume at" in text
    # (the command alone in its code span: it is copied from there)
    assert f"- **reproduce**: `resumecheck run {BUGGY}" in text


TESTS = '''
def test_correct(resumecheck):
    resumecheck.assert_resume_equivalent("fixtures.bugs.class01_scheduler_not_saved:CORRECT")


def test_buggy(resumecheck):
    resumecheck.assert_resume_equivalent("fixtures.bugs.class01_scheduler_not_saved:BUGGY")
'''


def test_plugin_plot_dir_and_step_summary(torch_dynamo_imported, pytester, monkeypatch):
    pytester.makepyfile(test_checks=TESTS)
    summary = pytester.path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    result = pytester.runpytest_inprocess(
        "-p", "no:cacheprovider", "--resumecheck-noise-seeds=0", "--resumecheck-plot-dir=plots",
        "--resumecheck-step-summary")
    result.assert_outcomes(passed=1, failed=1)
    plots = sorted(p.name for p in (pytester.path / "plots").iterdir())
    assert plots == ["test_checks.py__test_buggy.png", "test_checks.py__test_correct.png"]
    # the failure message names its figure, after the readable diff
    result.stdout.fnmatch_lines([
        "*resume is not equivalent: fixtures.bugs.class01_scheduler_not_saved:BUGGY*",
        "*reproduce: resumecheck run*",
        f"*divergence plot: {pytester.path / 'plots' / 'test_checks.py__test_buggy.png'}*",
    ])
    table = _table(summary.read_text())
    assert summary.read_text().startswith("### resumecheck: 2 check(s), 1 NOT equivalent")
    assert table[0] == ["test", "target", "full resume", "first divergence", "blind spots"]
    buggy = next(row for row in table if "test_buggy" in row[0])
    assert buggy[2].startswith("**NOT equivalent**") and buggy[3] == "step 12: learning rate (confirmed: scheduler)"


def test_plugin_plot_dir_without_matplotlib_is_a_usage_error(torch_dynamo_imported, pytester,
                                                               monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "matplotlib" else real(name, *a))
    pytester.makepyfile(test_checks=TESTS)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--resumecheck-plot-dir=p")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--resumecheck-plot-dir needs matplotlib*resumecheck[[]plot]*"])


def test_a_plot_dir_that_cannot_be_made_is_refused_before_any_test(pytester):
    """A trial: a read-only --resumecheck-plot-dir failed a passing test with an
    OSError traceback when its figure was drawn."""
    pytester.makepyfile(test_checks=TESTS)
    (pytester.path / "afile").write_text("")
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider",
                                          "--resumecheck-plot-dir=afile/plots")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([
        "*--resumecheck-plot-dir=afile/plots: cannot write figures in *afile/plots: Not a "
        "directory. Give a directory that can be created and written (or leave the option "
        "out)*"])
    assert "Traceback" not in result.stderr.str()


def test_the_step_summary_row_of_a_failed_run_names_its_step_not_none():
    """A trial: a check whose resumed run raised at step 5 read `step 5: None`
    in the plugin's step summary (a failed run has a step, no quantity)."""
    from resumecheck import verify
    from resumecheck.pytest_plugin import _markdown_cells

    report = verify("fixtures.bugs.class01_scheduler_not_saved:CORRECT", drop="none",
                    noise_seeds=0, check_determinism=False).to_json()
    report["equivalent"] = False
    for run in report["runs"]:
        run.update(verdict="failed", first_divergent_step=5, first_divergent_quantity=None)
    cells = _markdown_cells({"nodeid": "test_x.py::test_x", "report": report})
    assert cells[3] == "step 5: (failed)"
    assert cells[2] == "**NOT equivalent** (failed)"


def test_the_summary_row_names_what_is_not_compared_and_ends_otherwise_in_the_own_resume():
    """A trial: `full resume: ok`, PASSED, on a checkpoint that loses an EMA the
    program does not declare; the `not compared` line was only in the JSON."""
    from resumecheck import verify
    from resumecheck.pytest_plugin import _summary_row

    report = verify("fixtures.trust.undeclared_ema:UNDECLARED", drop="none", noise_seeds=0,
                    check_determinism=False).to_json()
    row = _summary_row({"nodeid": "test_x.py::test_x", "target": "t", "report": report})
    assert row.endswith("full resume: ok | not compared, ends otherwise in your resume: ema")


def test_the_summary_row_names_what_the_resume_point_found_as_built():
    """Trial 137: an epoch counter a state_dict() leaves out, as built at the
    resume point, was named by `resumecheck run` and not in the session's row
    (`full resume: ok`, nothing else), where the CI reads it."""
    from resumecheck import verify
    from resumecheck.pytest_plugin import _summary_row

    report = verify("fixtures.trust.field_left_out:EPOCH_LEFT_OUT", drop="none", noise_seeds=0,
                    check_determinism=False).to_json()
    row = _summary_row({"nodeid": "test_x.py::test_x", "target": "t", "report": report})
    assert row.endswith("full resume: ok | not compared, as built at the resume point (one "
                        "where the run has changed it shows it): data_cursor.epoch"), row


def test_a_drop_whose_only_difference_is_its_end_state_says_so_in_the_row():
    """Trial 197: `sampler_epoch: ok` of a component no step read, whose loss
    only the state it ends with showed."""
    from resumecheck import verify
    from resumecheck.pytest_plugin import _summary_row

    report = verify("fixtures.trust.cursor_pattern:TARGET", drop=["global_step", "data_cursor"],
                    noise_seeds=0, check_determinism=False)
    row = _summary_row({"nodeid": "t", "target": "x", "report": report.to_json()})
    assert "global_step: exercised, by the state it ends with alone (every step matched)" in row, row
    assert "data_cursor: exercised |" in row + " |", row


def test_the_text_tables_why_cells_are_short_and_each_whole_why_follows_it():
    """Every trial: why cells of 600-1900 characters in one line made the
    table unreadable at any terminal width. A long why keeps its first clause
    in the row and is given whole below the table; the JSON keeps it whole."""
    from resumecheck import verify
    from resumecheck.report import _CELL

    report = verify(BUGGY, drop=["scheduler", "rng"], noise_seeds=0, check_determinism=False)
    lines = report.render().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("run "))
    rows = lines[start + 2:start + 2 + len(report.runs)]
    whys = [line for line in lines if line.startswith("why, ")]
    cut = [r for r in report.runs if len(r.explanation) > _CELL]
    assert cut and len(whys) == len(cut)
    for run, row in zip(report.runs, rows):
        label = report.label_of(run)
        assert row.startswith(label)
        if run in cut:
            head = run.explanation.split("; ")[0]
            assert row.endswith(" (why below)") and head[:40] in row
            assert len(row) - row.index(head[:40]) <= _CELL + len(" ... (why below)")
            assert f"why, {label}: {run.explanation}" in whys
        else:
            assert row.endswith(run.explanation)
    # the JSON and the Markdown table keep every why whole
    assert [r["explanation"] for r in report.to_json()["runs"]] == \
        [r.explanation for r in report.runs]
    assert all(r.explanation.replace("|", "\\|") in report.render("markdown") for r in cut)


def test_the_sessions_job_summary_says_what_each_check_did_not_try():
    """Trial 438: the terminal's row of a passing check said that no epoch's end
    was tried (`not checked: a restart where an epoch ends (--resume-at 6 checks
    one)`); the job summary's row read `equivalent` alone."""
    from resumecheck import verify
    from resumecheck.pytest_plugin import _beside_cells, session_markdown

    report = verify("resumecheck.tiny:TARGET", drop="none", noise_seeds=0,
                    check_determinism=False).to_json()
    cells = _beside_cells(report)
    assert any("a restart where an epoch ends" in c for c in cells), cells
    summary = session_markdown([{"nodeid": "tests/test_a.py::test_resume",
                                 "target": report["target"], "report": report}])
    assert "What each check did not compare or try:" in summary
    assert "- `tests/test_a.py::test_resume`: " + "; ".join(cells) in summary


def test_an_equivalent_check_whose_test_failed_is_said_in_the_job_summary():
    """Trial 471: an `assert_components_exercised` test failed on a blind spot; the
    job summary counted "1 NOT equivalent" (the other test) and its row read
    "equivalent" alone."""
    from resumecheck import verify
    from resumecheck.pytest_plugin import session_markdown

    report = verify("resumecheck.tiny:TARGET", drop="none", noise_seeds=0,
                    check_determinism=False).to_json()
    entry = {"nodeid": "t.py::test_exercised", "target": report["target"], "report": report,
             "failed": "ComponentsNotExercised"}
    summary = session_markdown([entry])
    assert summary.startswith("### resumecheck: 1 check(s), 1 equivalent whose test failed")
    assert "| equivalent; **test failed** (ComponentsNotExercised) |" in summary
    passed = session_markdown([{**entry, "failed": None}])
    assert "test failed" not in passed and "every full resume equivalent" in passed


def test_a_drop_whose_steps_differ_but_not_their_loss_is_said_silent_in_the_row():
    """Trial 447: a dropped EMA read `ema: exercised` in the row and `silent` in
    `resumecheck run`'s table: its steps differ, its loss never does."""
    from resumecheck.pytest_plugin import _exercised_cell

    ema = {"first_divergent_quantity": "parameter ema.w", "max_abs_loss_diff": 0.0}
    assert _exercised_cell(ema) == "exercised, silent: the training loss does not differ"
    assert _exercised_cell({**ema, "max_abs_loss_diff": 0.2}) == "exercised"
