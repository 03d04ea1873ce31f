"""A program that ends its interpreter, prints, or changes directory during an
in-process check (fixtures/faults/exits.py; a trial: the check ended silently
with exit 0, a pytest session with it; ``--format json`` on stdout was not
JSON; a program's ``os.chdir`` leaked into later runs and a relative ``--output``)."""

from __future__ import annotations

import json
import os

import pytest

from resumecheck import forkserver, verify
from resumecheck.cli import main

pytestmark = pytest.mark.skipif(not forkserver.available(), reason="no fork on this platform")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SPEC = "fixtures.faults.exits:"
FAST = ["--noise-seeds", "0", "--drop", "none", "--no-determinism-check"]


def _command(tmp_path, *argv):
    """``resumecheck *argv`` in a process of its own (forked warm, as a new
    interpreter): an ``os._exit`` that got through would end it, not this test."""
    proc = forkserver.spawn("resumecheck", list(argv), dict(os.environ), cwd=ROOT,
                            output_dir=str(tmp_path))
    out, err = proc.communicate(timeout=300)
    return proc.returncode, out, err


@pytest.mark.parametrize("isolation", ["inprocess", pytest.param("process", marks=[
    pytest.mark.process, pytest.mark.e2e])])
def test_os_exit_in_a_resumed_step_is_that_runs_failure_and_the_check_goes_on(tmp_path,
                                                                              isolation):
    code, out, err = _command(tmp_path, "run", SPEC + "EXITS_AFTER_LOAD", *FAST,
                              "--isolation", isolation)
    assert code == 1, (out, err)
    assert "full resume: NOT EQUIVALENT" in out
    assert "the program called os._exit(0), which ends a real run there" in out


def test_sys_exit_in_the_reference_is_a_clear_error_not_a_silent_exit(capsys):
    code = main(["run", SPEC + "SYS_EXIT_AT_STEP_3", *FAST])
    err = capsys.readouterr().err
    assert code == 2
    assert "failed at step 3: the program called sys.exit(0)" in err
    assert "goes on" not in err  # (a trial: "this run failed (the check goes on)"; it stops)
    # (trial 435: a raise said where it was raised, an exit did not)
    assert "sys.exit(0) (at " in err and "exits.py:" in err, err


@pytest.mark.parametrize("isolation", ["inprocess", pytest.param("process", marks=[
    pytest.mark.process, pytest.mark.e2e])])
def test_what_the_program_prints_goes_to_stderr_and_stdout_stays_json(tmp_path, isolation):
    # (a trial: with --isolation process, what the program printed was lost)
    code, out, err = _command(tmp_path, "run", SPEC + "CHATTY", *FAST, "--format", "json",
                              "--isolation", isolation)
    assert code == 0, err
    assert json.loads(out)["equivalent"] is True
    assert "step 1 loss" in err and "written to fd 1" in err


def test_a_programs_chdir_ends_with_its_run(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # (where the program moves to)

    before = os.getcwd()
    report = verify(SPEC + "CHDIR", noise_seeds=0, drop="none", check_determinism=False)
    assert report.equivalent, report.render()
    assert os.getcwd() == before
    built_in = (tmp_path / "resumecheck-chdir-fixture" / "built-in.txt").read_text().split()
    assert len(built_in) >= 2 and set(built_in) == {before}  # every build started here


def test_a_fault_in_the_second_uninterrupted_run_is_not_called_the_references(
        tmp_path, monkeypatch):
    """A trial: a fault that struck the determinism rerun was worded as the
    reference run's failure."""
    from resumecheck import ReferenceFailed

    monkeypatch.setenv("TMPDIR", str(tmp_path))  # (where the fault counts the runs)
    with pytest.raises(ReferenceFailed) as info:
        verify(SPEC + "FAILS_THE_SECOND_TIME", noise_seeds=0, drop="none")
    assert info.value.rerun and info.value.step == 3
    assert str(info.value).startswith("a second uninterrupted run of ")
    assert "where the reference run did not" in str(info.value)
