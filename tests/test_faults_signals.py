"""SIGTERM and SIGINT end a check promptly, in both isolation modes, during
run, fuzz and baseline, even while a step hangs: every child process is
reaped, every temporary directory removed, and the exit status is 130
(SIGINT) or 143 (SIGTERM), not 2 (bad usage).

Each test starts ``python -m resumecheck`` on a program whose step hangs
(the fixture writes the hanging process's pid to FAULTS_MARKER when it does),
sends the signal once the step hangs, and checks the aftermath.
"""

import os
import signal
import subprocess
import sys
import threading
import time

import pytest

pytestmark = pytest.mark.e2e

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FAST_RUN = ["--drop", "none", "--noise-seeds", "0", "--no-determinism-check"]


def _gone(pid: int, within: float = 3.0) -> bool:
    """No process is left in the process group ``pid`` (or no process ``pid``)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.killpg(pid, 0)
        except ProcessLookupError:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return True
        time.sleep(0.05)
    return False


def _interrupt(tmp_path, argv, signum):
    """Run, signal once the step hangs; (exit code, seconds until the check had
    cleaned up and said so, the hung pid, what TMPDIR holds, stdout, stderr)."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    marker = tmp_path / "hanging.pid"
    env = {**os.environ, "TMPDIR": str(scratch), "FAULTS_MARKER": str(marker)}
    proc = subprocess.Popen([sys.executable, "-m", "resumecheck", *argv], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: list[tuple[float, str]] = []
    reader = threading.Thread(
        target=lambda: lines.extend((time.monotonic(), line) for line in proc.stderr), daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 120
        while not marker.exists() or not marker.read_text():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the step never hung"
            time.sleep(0.05)
        time.sleep(0.3)  # well inside the hung step
        hanging = int(marker.read_text())
        sent = time.monotonic()
        proc.send_signal(signum)
        # (the interpreter's own exit with torch loaded takes seconds more on a busy machine)
        proc.wait(timeout=60)
        reader.join(10)
        out = proc.stdout.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    said = [t for t, line in lines if "interrupted by" in line]
    took = (said[0] - sent) if said else float("inf")
    err = "".join(line for _, line in lines)
    left = [p.name for p in scratch.iterdir() if not p.name.startswith("torchinductor")]
    return proc.returncode, took, hanging, left, out, err


CASES = [
    pytest.param(["run", "fixtures.faults.programs:HANGS", *FAST_RUN, "--isolation", "process"],
                 signal.SIGTERM, id="run-process-SIGTERM", marks=pytest.mark.process),
    pytest.param(["run", "fixtures.faults.programs:HANGS", *FAST_RUN, "--isolation", "process"],
                 signal.SIGINT, id="run-process-SIGINT", marks=pytest.mark.process),
    pytest.param(["run", "fixtures.faults.programs:HANGS", *FAST_RUN],
                 signal.SIGTERM, id="run-inprocess-SIGTERM"),
    pytest.param(["run", "fixtures.faults.programs:HANGS", *FAST_RUN],
                 signal.SIGINT, id="run-inprocess-SIGINT"),
    pytest.param(["fuzz", "fixtures.faults.programs:HANGS", "--isolation", "process", "--quiet"],
                 signal.SIGTERM, id="fuzz-process-SIGTERM", marks=pytest.mark.process),
    pytest.param(["fuzz", "fixtures.faults.programs:HANGS", "--quiet"],
                 signal.SIGINT, id="fuzz-inprocess-SIGINT"),
    pytest.param(["baseline", "fixtures.faults.programs:HANGS_ALWAYS", "--isolation", "process"],
                 signal.SIGINT, id="baseline-process-SIGINT", marks=pytest.mark.process),
    pytest.param(["baseline", "fixtures.faults.programs:HANGS_ALWAYS"],
                 signal.SIGTERM, id="baseline-inprocess-SIGTERM"),
]


@pytest.mark.parametrize(("argv", "signum"), CASES)
def test_a_signal_ends_the_check_promptly_and_cleanly(tmp_path, argv, signum):
    code, took, hanging, left, out, err = _interrupt(tmp_path, argv, signum)
    assert code == 128 + signum, err
    assert took < 3, f"took {took:.1f} s to stop"
    assert f"interrupted by {signal.Signals(signum).name}" in err
    assert "Traceback" not in err
    assert _gone(hanging), "the hung process outlived the check"
    assert left == [], f"left behind in TMPDIR: {left}"


@pytest.mark.process
def test_children_of_a_check_killed_outright_exit_by_themselves(tmp_path):
    """SIGKILL cannot be handled: the check's fresh interpreters notice that
    their parent is gone and exit, even one whose step hangs."""
    marker = tmp_path / "hanging.pid"
    env = {**os.environ, "TMPDIR": str(tmp_path), "FAULTS_MARKER": str(marker)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "resumecheck", "run", "fixtures.faults.programs:HANGS",
         *FAST_RUN, "--isolation", "process"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while not marker.exists() or not marker.read_text():
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        hanging = int(marker.read_text())
        proc.kill()
        proc.wait()
        assert _gone(hanging, within=5), "a child outlived its killed check"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
