"""Progress: events from the core, a bar on a terminal, nothing in logs or captured output."""

from __future__ import annotations

import fcntl
import io
import os
import pty
import struct
import sys
import termios
import threading
import time

import pytest

import fixtures.bugs.class15_second_resume_stale_cursor as c15
from resumecheck.baseline import check_baseline
from resumecheck.cli import main
from resumecheck.engine import verify
from resumecheck.fuzz import fuzz
from resumecheck.progress import ProgressEvent, ProgressTracker, note_step
from resumecheck import progress_bar
from resumecheck.progress_bar import progress_wanted, terminal_progress



class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_event_message_names_run_step_elapsed_and_estimate():
    event = ProgressEvent(task="run", run="drop rng", step=12, steps=16, done=30, total=90,
                          unit="steps", elapsed=10.0)
    assert event.remaining == pytest.approx(20.0)
    assert event.message == "run: drop rng step 12/16 (10 s, about 20 s left)"
    assert ProgressEvent(task="run", run="reference", step=None, steps=16, done=0, total=None,
                         unit="steps", elapsed=0.5).remaining is None


def test_tracker_counts_steps_of_the_current_segment_only():
    events: list[ProgressEvent] = []
    tracker = ProgressTracker(events.append, "run", total=10)
    note_step(1)  # outside a segment: nothing
    with tracker.segment("reference", 0, 4):
        for step in (1, 2, 3):
            note_step(step)
    # the segment ended early (a failure, or a fresh interpreter): the rest is counted
    assert [e.done for e in events] == [0, 1, 2, 3, 4]
    assert events[-1].step == 4 and all(e.run == "reference" for e in events)


@pytest.mark.e2e
def test_verify_reports_every_run_and_step_in_order():
    events: list[ProgressEvent] = []
    report = verify(c15.BUGGY_DEFAULT_K, drop=["rng"], noise_seeds=1, progress=events.append)
    runs = []
    for e in events:
        if not runs or runs[-1] != e.run:
            runs.append(e.run)
    assert runs[:3] == ["reference", "determinism", "seed run 1"]
    assert "full resume (own save/load)" in runs and "drop rng" in runs
    assert all(a.done <= b.done and a.elapsed <= b.elapsed for a, b in zip(events, events[1:]))
    assert events[-1].done == events[-1].total  # the estimate is met at the end
    ref_steps = [e.step for e in events if e.run == "reference" and e.step is not None]
    assert ref_steps == list(range(1, report.steps + 1))
    assert all(e.unit == "steps" and e.task == "run" for e in events)


@pytest.mark.e2e
def test_fuzz_and_baseline_report_progress():
    events: list[ProgressEvent] = []
    result = fuzz(c15.CORRECT, max_examples=5, progress=events.append)
    examples = [e for e in events if e.run.startswith("example")]
    assert len(examples) == result.examples == 5  # the default schedule is one of the five
    assert examples[-1].done == result.examples
    assert all(e.unit == "examples" and e.total and e.total <= 5 for e in examples)

    events.clear()
    check_baseline(c15.CORRECT, steps=4, progress=events.append)
    assert events[-1].run == "gradient checks" and events[-1].done == events[-1].total == 9
    assert [e.run for e in events].count("determinism, second run") >= 4


def test_bar_only_on_a_terminal_and_never_under_ci(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    assert not progress_wanted(io.StringIO())
    assert progress_wanted(_Terminal())
    monkeypatch.setenv("CI", "true")
    assert not progress_wanted(_Terminal())
    stream = _Terminal()
    with terminal_progress(stream=stream) as callback:  # (a callback that draws nothing)
        assert callback is not None
        callback(ProgressEvent(task="run", run="reference", step=1, steps=20, done=1,
                               total=40, unit="steps", elapsed=0.1))
    assert stream.getvalue() == ""


def test_bar_draws_after_a_second_and_clears_itself(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    assert progress_bar.DELAY_S == 1.0  # a second; the rule is tested on a shorter one
    monkeypatch.setattr(progress_bar, "DELAY_S", 0.3)
    stream = _Terminal()
    with terminal_progress(stream=stream) as callback:
        assert callback is not None
        tracker = ProgressTracker(callback, "run", total=40)
        tracker.emit("reference", 1, 20, advance=1)
        assert stream.getvalue() == ""  # nothing within the delay
        time.sleep(0.4)
        tracker.emit("drop rng", 12, 20, advance=20)
        shown = stream.getvalue()
    assert "run: drop rng" in shown and "step 12/20" in shown and "21/40" in shown
    assert stream.getvalue().endswith("\r")  # cleared: the bar leaves no line behind


@pytest.mark.e2e
def test_cli_output_captured_has_no_progress(capsys, monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    assert main(["run", "fixtures.bugs.class15_second_resume_stale_cursor:CORRECT",
                 "--drop", "none", "--noise-seeds", "0"]) == 0
    assert capsys.readouterr().err == ""


def _on_a_terminal(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    """Run the CLI in this process with stderr on a pseudo-terminal (24x120);
    what the terminal got. (The terminal, not a fresh interpreter, is what the
    bar depends on: in-process spares two interpreters' ``import torch``.)"""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 120, 0, 0))
    chunks: list[bytes] = []

    def read() -> None:  # drain as it is written: a full terminal would block the CLI
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the terminal was closed
                return
            if not chunk:
                return
            chunks.append(chunk)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    terminal = open(slave, "w", buffering=1)  # noqa: SIM115 (closed below)
    try:
        with monkeypatch.context() as patch:
            patch.setattr(sys, "stderr", terminal)
            code = main(argv)
    finally:
        terminal.close()
        reader.join(10)
        os.close(master)
    return code, b"".join(chunks).decode(errors="replace")


@pytest.mark.e2e
def test_progress_on_a_terminal_and_not_under_ci(monkeypatch):
    argv = ["run", "fixtures.bugs.class15_second_resume_stale_cursor:CORRECT", "--drop", "none",
            "--steps", "24", "--noise-seeds", "1"]
    monkeypatch.delenv("CI", raising=False)
    # the bar shows after DELAY_S (tested above); this check can end sooner than that
    monkeypatch.setattr(progress_bar, "DELAY_S", 0.0)
    # and a fast machine can end it between two redraws of a step's number
    monkeypatch.setattr(progress_bar, "REFRESH_S", 0.0)
    code, seen = _on_a_terminal(argv, monkeypatch)
    assert code == 0
    assert "run: " in seen and "step " in seen and " steps [" in seen, seen[-500:]

    monkeypatch.setenv("CI", "true")
    code, seen = _on_a_terminal(argv, monkeypatch)
    assert code == 0
    assert seen == ""


def test_in_a_log_a_stall_is_said_with_where_the_check_stands(monkeypatch):
    """A trial: a hung step without --timeout gave ten minutes of silence in a
    log. Where no bar is drawn, a note says no progress was seen for a while,
    where the check stands and what bounds a step; a step finishing resets it."""
    monkeypatch.setattr(progress_bar, "STALL_S", 0.2)
    log = io.StringIO()  # (not a terminal: no bar)
    event = ProgressEvent(task="run", run="reference", step=3, steps=16, done=3, total=40,
                          unit="steps", elapsed=1.0)
    with terminal_progress(stream=log) as progress:
        assert progress is not None
        progress(event)
        time.sleep(0.1)
        progress(event)
        assert log.getvalue() == ""  # (steps finish: nothing said)
        deadline = time.monotonic() + 10
        while "still working" not in log.getvalue() and time.monotonic() < deadline:
            time.sleep(0.05)
    said = log.getvalue()
    assert said.startswith("resumecheck: still working: no progress seen for ")
    assert "(last step done: reference, step 3/16; what follows it has not ended)" in said
    assert "--timeout" in said
    assert said.count("\n") == 1  # (the next note waits twice as long)


def test_a_warning_of_the_program_names_the_run_it_came_from(capsys):
    """Trial 473: torch's "lr_scheduler.step() before optimizer.step()", given
    in the run that dropped the scheduler, topped the report unexplained and
    was read as the checkpoint's fault."""
    from resumecheck.cli import main

    import pytest

    with pytest.warns(UserWarning, match="the step count began again"):  # (shown under it)
        assert main(["run", "tests.programs:WARNS_WHEN_ITS_COUNT_IS_LOST", "--drop",
                     "global_step", "--noise-seeds", "0", "--no-determinism-check"]) == 0
    err = capsys.readouterr().err
    assert ("resumecheck: your program warned in the check's run `drop global_step` (a restart "
            "that leaves global_step out of the restore on purpose, not your checkpoint's):\n"
            ) in err, err


def test_under_fuzz_a_warning_names_the_run_it_came_from(capsys):
    """Trial 590: under fuzz, torch's scheduler-order warning came with no line
    naming its run, as run names it; named by the last event, it would have
    said the example before."""
    from resumecheck.cli import main

    import pytest

    with pytest.warns(UserWarning, match="a warning every run gives"):
        main(["fuzz", "tests.programs:WARNS_IN_EVERY_RUN", "--max-examples", "2", "--budget",
              "60", "--quiet"])
    err = capsys.readouterr().err
    assert "resumecheck: your program warned in the check's run `reference`:\n" in err, err


def test_under_process_isolation_a_warning_is_said_once_with_the_run_it_came_from(capsys):
    """Trials 511, 537: under --isolation process a program's warning came once
    from every segment's interpreter (5 to 15 times), with no line naming the
    run, as in-process has."""
    from resumecheck.cli import main

    assert main(["run", "tests.programs:WARNS_IN_EVERY_RUN", "--drop", "global_step",
                 "--noise-seeds", "0", "--no-determinism-check", "--isolation", "process"]) == 0
    err = capsys.readouterr().err
    assert err.count("UserWarning: a warning every run gives") == 1, err
    assert "resumecheck: your program warned in the check's run `reference`:\n" in err, err


def test_a_warning_an_installed_package_gave_is_said_to_be_that_packages():
    """Trial 493: a deprecation Lightning gave as the program ran was said to be
    the program's warning."""
    from resumecheck.progress import who_warned as _who_warned

    assert _who_warned("/v/lib/python3.11/site-packages/lightning/pytorch/utilities/_pytree.py") \
        == "lightning, which your program uses,"
    assert _who_warned("/usr/lib/python3/dist-packages/six.py") == "six, which your program uses,"
    assert _who_warned("/home/me/train.py") == "your program"
