"""What a trial of the front ends found (each fixed; each test fails without
its fix): a report written over a module of the program, a plot replaced by
the report, an unwritable job summary or session report that threw the
result away with a traceback, /dev/stdout on a pipe refused, and a traceback
through resumecheck when a test's factory raised."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from resumecheck.cli import main

FAST = ["--steps", "4", "--resume-at", "2", "--drop", "none", "--noise-seeds", "0",
        "--no-determinism-check"]


def _program_with_a_module(tmp_path: Path) -> tuple[str, Path, Path]:
    """A script that imports a module beside it (its program), and a marker
    its import writes: the work has started."""
    marker = tmp_path / "work-started"
    (tmp_path / "common.py").write_text(
        "from pathlib import Path\n"
        f"Path({str(marker)!r}).write_text('imported')\n"
        "from resumecheck.tiny import TARGET\n")
    (tmp_path / "good.py").write_text("from common import TARGET\n")
    return f"{tmp_path / 'good.py'}:TARGET", tmp_path / "common.py", marker


def test_a_report_is_never_written_over_python_source(tmp_path, capsys):
    target, module, marker = _program_with_a_module(tmp_path)
    source = module.read_text()
    assert main(["run", target, *FAST, "--output", str(module)]) == 2
    err = capsys.readouterr().err
    assert f"cannot write the report to {module}: it is a Python source file" in err
    assert module.read_text() == source and not marker.exists()


def test_the_same_file_for_the_report_and_the_plot_is_refused(tmp_path, capsys):
    target, _, marker = _program_with_a_module(tmp_path)
    same = tmp_path / "same.png"
    assert main(["run", target, *FAST, "--output", str(same), "--plot", str(same)]) == 2
    assert "name the same file: the report would replace the plot" in capsys.readouterr().err
    assert not marker.exists() and not same.exists()


def test_a_plot_that_cannot_be_written_is_called_a_plot(tmp_path, capsys):
    plot = tmp_path / "missing" / "p.png"
    assert main(["run", *FAST, "--plot", str(plot)]) == 2
    assert f"cannot write the plot to {plot}: the directory" in capsys.readouterr().err


def test_a_job_summary_in_a_missing_directory_is_refused_before_any_work(
        tmp_path, capsys, monkeypatch):
    target, _, marker = _program_with_a_module(tmp_path)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "nowhere" / "summary.md"))
    assert main(["run", target, *FAST, "--step-summary"]) == 2
    err = capsys.readouterr().err
    assert "--step-summary: GITHUB_STEP_SUMMARY=" in err and "does not exist" in err
    assert "Traceback" not in err and "This is a bug" not in err and not marker.exists()


def test_a_job_summary_that_fails_to_append_keeps_the_verdict_and_the_report(
        tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", "/dev/full")
    report = tmp_path / "report.json"
    code = main(["run", "fixtures.bugs.class01_scheduler_not_saved:BUGGY", "--steps", "12",
                 "--resume-at", "6", "--drop", "none", "--noise-seeds", "0",
                 "--no-determinism-check", "--step-summary", "--format", "json",
                 "--output", str(report)])
    err = capsys.readouterr().err
    assert code == 1  # the verdict's status: not equivalent
    assert "cannot append to GITHUB_STEP_SUMMARY=/dev/full" in err
    assert json.loads(report.read_text())["equivalent"] is False


def test_dev_stdout_on_a_pipe_is_written_through():
    # (refused as "no new file can be created in /proc/PID/fd": the link names a pipe)
    probe = ("from resumecheck.output import check_output, write_report; "
             "check_output('/dev/stdout'); write_report('/dev/stdout', 'the report\\n')")
    done = subprocess.run([sys.executable, "-c", probe], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "the report\n"


PLUGIN_TESTS = '''
def test_correct(resumecheck):
    resumecheck.assert_resume_equivalent("fixtures.bugs.class01_scheduler_not_saved:CORRECT",
                                         steps=4, resume_at=[2])
'''


@pytest.mark.parametrize("where", ["missing/report.json", "."])
def test_a_session_report_that_cannot_be_written_is_refused_at_the_start(
        torch_dynamo_imported, pytester, where):
    pytester.makepyfile(test_checks=PLUGIN_TESTS)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider",
                                          "--resumecheck-noise-seeds=0",
                                          f"--resumecheck-report={where}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*--resumecheck-report={where}: cannot write the session's "
                                 "reports to*"])


def test_an_unwritable_job_summary_leaves_a_passing_session_passing(
        torch_dynamo_imported, pytester, monkeypatch):
    pytester.makepyfile(test_checks=PLUGIN_TESTS)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", "/dev/full")
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider",
                                          "--resumecheck-noise-seeds=0",
                                          "--resumecheck-step-summary")
    result.assert_outcomes(passed=1)
    assert result.ret == pytest.ExitCode.OK
    # on a line of its own in the summary, naming the plugin's option (a trial: it
    # named the CLI's --step-summary, glued to the progress line on stderr)
    result.stdout.fnmatch_lines(["resumecheck: --resumecheck-step-summary: cannot append to "
                                 "GITHUB_STEP_SUMMARY=/dev/full*"])
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


def test_a_factory_that_raises_fails_the_test_without_frames_of_resumecheck(
        torch_dynamo_imported, pytester):
    pytester.makepyfile(broken_program='''
from resumecheck import Target

def broken(settings):
    return 1 / 0

TARGET = Target(factory=broken, steps=4, resume_at=(2,))
''', test_checks='''
def test_broken(resumecheck):
    resumecheck.assert_resume_equivalent("broken_program.py:TARGET")
''')
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--resumecheck-noise-seeds=0")
    result.assert_outcomes(failed=1)
    text = result.stdout.str()
    assert "ZeroDivisionError" in text and "return 1 / 0" in text
    assert "resumecheck/program.py" not in text and "resumecheck/engine.py" not in text, text
