"""Faults a new user's trial found (round 10), each as the user met it.

* ``--output`` naming the target's own script overwrote the program with the
  report; now refused before any work.
* ``--output /proc/version`` advised creating a directory that exists.
* A file size limit (``ulimit -f``) hit by the engine's capture or the
  program's own save read as the program's failure; it is the environment's.
* The pytest plugin showed a failed reference run as a traceback through
  resumecheck's internals and left it out of the session summary.
* SIGHUP (the terminal closed) ended a check with no message and a temporary
  directory left behind; SIGTERM during a step stuck in one C call took as
  long as the call.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import time
from pathlib import Path

import pytest

from resumecheck import forkserver, forkshare
from resumecheck.cli import main
from resumecheck.errors import OutputError
from resumecheck.output import check_output

pytestmark = pytest.mark.e2e

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FAST = ["--drop", "none", "--noise-seeds", "0", "--no-determinism-check"]


def _marked_copy(tmp_path: Path) -> tuple[Path, Path]:
    """A user's script (the built-in program re-exported) whose import leaves
    a marker: the work has started."""
    marker = tmp_path / "work-started"
    script = tmp_path / "train.py"
    script.write_text(
        "from pathlib import Path\n"
        f"Path({str(marker)!r}).write_text('imported')\n"
        "from resumecheck.tiny import TARGET\n"
    )
    return script, marker


# --output and the program under test ---------------------------------------------


@pytest.mark.parametrize("command", ["run", "fuzz", "baseline", "timing"])
def test_output_naming_the_target_script_is_refused_before_any_work(tmp_path, capsys, command):
    script, marker = _marked_copy(tmp_path)
    before = script.read_text()
    code = main([command, f"{script}:TARGET", "--output", str(script)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert f"cannot write the report to {script}: it is the Python source of the program " \
           "under test" in err
    assert "Traceback" not in err and err.count("\n") == 1  # one paragraph
    assert script.read_text() == before
    assert not marker.exists(), "the work started before the refusal"


def test_output_through_a_link_or_a_relative_path_to_the_target_is_refused(
        tmp_path, capsys, monkeypatch):
    script, marker = _marked_copy(tmp_path)
    before = script.read_text()
    (tmp_path / "link.txt").symlink_to(script)
    os.link(script, tmp_path / "hard.txt")
    monkeypatch.chdir(tmp_path)
    for output in ("train.py", "./train.py", "link.txt", "hard.txt"):
        assert main(["run", "train.py:TARGET", "--output", output]) == 2, output
        assert "it is the Python source of the program under test" in capsys.readouterr().err
    assert script.read_text() == before and not marker.exists()


def test_output_naming_the_source_of_a_module_target_is_refused(tmp_path, capsys, monkeypatch):
    package = tmp_path / "mypkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    script, marker = _marked_copy(package)
    before = script.read_text()
    monkeypatch.chdir(tmp_path)  # module targets import from the current directory
    assert main(["run", "mypkg.train:TARGET", "--output", "mypkg/train.py"]) == 2
    err = capsys.readouterr().err
    assert f"mypkg.train:TARGET ({script})" in err
    assert script.read_text() == before and not marker.exists()
    # the built-in program's module too (asked of the check alone: a run that
    # got past it would overwrite this checkout's resumecheck/tiny.py)
    with pytest.raises(OutputError, match=r"resumecheck\.tiny:TARGET"):
        check_output(str(Path(ROOT, "resumecheck", "tiny.py")), None)


def test_output_beside_the_target_is_written(tmp_path, capsys):
    script, _ = _marked_copy(tmp_path)
    before = script.read_text()
    report = tmp_path / "train.txt"
    report.write_text("an old report\n")
    code = main(["timing", f"{script}:TARGET", "--steps", "2", "--warmup", "0",
                 "--checkpoint-every", "1", "--output", str(report)])
    assert code == 0, capsys.readouterr().err
    assert report.read_text() not in ("", "an old report\n")
    assert script.read_text() == before


def test_output_in_a_directory_that_takes_no_files_says_so(capsys):
    if not os.path.isfile("/proc/version"):
        pytest.skip("no /proc on this platform")
    assert main(["run", "--output", "/proc/version"]) == 2
    err = capsys.readouterr().err
    assert "the directory /proc exists, but no new file can be created in it" in err
    assert "Create the directory" not in err


# The file size limit ----------------------------------------------------------------


@pytest.fixture
def file_size_limit():
    """Lower this process's file size limit (RLIMIT_FSIZE, ``ulimit -f``) for the
    test; Python ignores SIGXFSZ, so a write past it fails with EFBIG."""
    previous = resource.getrlimit(resource.RLIMIT_FSIZE)

    def lower(size: int) -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, previous[1]))

    yield lower
    resource.setrlimit(resource.RLIMIT_FSIZE, previous)


@pytest.mark.parametrize("target", [
    "fixtures.faults.programs:BIG",  # the engine's own capture (about 2 MB)
    "fixtures.faults.trial10:OWN_SAVE_TOO_BIG",  # the program's own torch.save (512 kB)
])
def test_a_file_size_limit_is_the_environments_failure(capsys, file_size_limit, target):
    file_size_limit(256 * 1024)
    code = main(["run", target, *FAST])
    err = capsys.readouterr().err
    assert code == 4, err
    assert "the environment failed, not the program: a file reached the file size limit" in err
    assert "the file size limit (ulimit -f) is 262144 bytes" in err
    assert "ulimit -f unlimited" in err
    assert "Fix the program" not in err and "Traceback" not in err


# The pytest plugin: a reference run that fails ---------------------------------------


def test_a_failed_reference_fails_its_test_cleanly_and_is_in_the_summary(
        torch_dynamo_imported, pytester, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", ROOT)
    pytester.makepyfile(test_ref='''
def test_reference_fails(resumecheck):
    resumecheck.assert_resume_equivalent("fixtures.faults.trial10:REFERENCE_RAISES")

def test_healthy(resumecheck):
    resumecheck.assert_resume_equivalent("fixtures.faults.programs:HEALTHY")
''')
    report = pytester.path / "session.json"
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--resumecheck-noise-seeds=0",
                                          f"--resumecheck-report={report}")
    result.assert_outcomes(failed=1, passed=1)
    out = result.stdout.str()
    result.stdout.fnmatch_lines([
        "E *resumecheck.errors.ReferenceFailed: the uninterrupted reference run of "
        "fixtures.faults.trial10:REFERENCE_RAISES failed at step 2*the data file is missing*",
    ])
    assert "engine.py" not in out and "runner.py" not in out, out
    result.stdout.fnmatch_lines([
        "*= resumecheck =*",
        "test_ref.py::test_healthy  fixtures.faults.programs:HEALTHY  full resume: ok",
        "test_ref.py::test_reference_fails  fixtures.faults.trial10:REFERENCE_RAISES  "
        "not judged: ReferenceFailed: the uninterrupted reference run of * failed at step 2*",
    ])
    document = json.loads(report.read_text())
    from resumecheck.schema import validate

    validate(document)
    failed = [c for c in document["checks"] if "error" in c]
    assert [c["nodeid"] for c in failed] == ["test_ref.py::test_reference_fails"]
    assert failed[0]["error"]["kind"] == "ReferenceFailed"
    assert failed[0]["target"] == "fixtures.faults.trial10:REFERENCE_RAISES"


# Signals: SIGHUP, and SIGTERM while a step waits inside one C call -------------------


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for its reaper does not)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except (OSError, IndexError):
        return False


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                if int(fh.read().rsplit(b")", 1)[1].split()[1]) == pid:
                    found.append(int(entry))
        except (OSError, IndexError, ValueError):
            continue
    return found


def _signal_hung_check(tmp_path: Path, target: str, signum: int, wait_for_child: bool):
    """``python -m resumecheck run TARGET`` (in-process restarts) in a process of
    its own, TMPDIR a directory of its own; once the resumed step hangs, send
    ``signum`` to the command alone. (exit code, seconds from the signal to the
    end, stderr, what TMPDIR holds, the pids the hung step had started)."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    marker = tmp_path / "hanging.pid"
    env = {**os.environ, "TMPDIR": str(scratch), "FAULTS_MARKER": str(marker)}
    env.pop(forkshare.SHARE_ENV, None)
    proc = forkserver.spawn("resumecheck", ["run", target, *FAST], env, cwd=ROOT,
                            output_dir=str(tmp_path))
    try:
        deadline = time.monotonic() + 120
        started: list[int] = []
        while not marker.exists() or not marker.read_text() or (wait_for_child and not started):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the step never hung"
            time.sleep(0.05)
            if wait_for_child and marker.exists():
                started = _children(proc.pid)
        time.sleep(0.2)  # inside the hung step
        sent = time.monotonic()
        os.kill(proc.pid, signum)
        proc.wait(timeout=60)
        took = time.monotonic() - sent
        _, err = proc.communicate()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    left = [p.name for p in scratch.iterdir() if not p.name.startswith("torchinductor")]
    return proc.returncode, took, err, left, started


@pytest.mark.skipif(not forkserver.available() or not hasattr(signal, "SIGHUP"),
                    reason="no fork or no SIGHUP on this platform")
def test_sighup_ends_the_check_like_sigterm(tmp_path):
    code, took, err, left, _ = _signal_hung_check(
        tmp_path, "fixtures.faults.programs:HANGS", signal.SIGHUP, wait_for_child=False)
    assert code == 128 + signal.SIGHUP, err
    assert took < 3, f"took {took:.1f} s to stop"
    assert "interrupted by SIGHUP: nothing was judged" in err and "Traceback" not in err
    assert left == [], f"left behind in TMPDIR: {left}"


@pytest.mark.skipif(not forkserver.available() or not os.path.isdir("/proc"),
                    reason="no fork or no /proc on this platform")
def test_sigterm_ends_a_check_whose_step_waits_in_one_c_call(tmp_path):
    """The resumed step waits in os.system("sleep 30"), where the main thread's
    handler cannot run: the check still ends within seconds, says so, stops the
    shell-out and removes its files."""
    code, took, err, left, started = _signal_hung_check(
        tmp_path, "fixtures.faults.trial10:SYSTEM_HANGS", signal.SIGTERM, wait_for_child=True)
    assert code == 128 + signal.SIGTERM, err
    assert took < 5, f"took {took:.1f} s to stop"
    assert "interrupted by SIGTERM: nothing was judged" in err
    assert "a call that Python cannot interrupt" in err and "Traceback" not in err
    assert started, "the step's shell-out was never seen"
    assert left == [], f"left behind in TMPDIR: {left}"
    deadline = time.monotonic() + 5
    while any(_alive(pid) for pid in started) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(pid) for pid in started), "the step's shell-out outlived the check"


@pytest.mark.skipif(not forkserver.available(), reason="no fork on this platform")
def test_sigterm_ends_a_check_whose_step_waits_on_a_silent_pipe(tmp_path):
    """A blocking select: the main thread takes the signal when its call is
    interrupted, the watcher when another thread received it; either way the
    check ends within seconds, cleanly."""
    code, took, err, left, _ = _signal_hung_check(
        tmp_path, "fixtures.faults.trial10:READ_HANGS", signal.SIGTERM, wait_for_child=False)
    assert code == 128 + signal.SIGTERM, err
    assert took < 5, f"took {took:.1f} s to stop"
    assert "interrupted by SIGTERM: nothing was judged" in err and "Traceback" not in err
    assert left == [], f"left behind in TMPDIR: {left}"
