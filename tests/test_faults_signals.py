"""SIGTERM and SIGINT end a check promptly, in both isolation modes, during
run, fuzz and baseline, even while a step hangs: every child process is
reaped, every temporary directory removed, and the exit status is 130
(SIGINT) or 143 (SIGTERM), not 2 (bad usage).

Each test starts ``python -m resumecheck`` on a program whose step hangs
(the fixture writes the hanging process's pid to FAULTS_MARKER when it does),
sends the signal once the step hangs, and checks the aftermath. The command
is a process of its own that receives the signal, forked from a warm server
as a process-isolated segment is (a new interpreter's signal handlers,
environment, directory and module path, torch already imported): what is
under test is how the command ends, not how an interpreter starts.
"""

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from resumecheck import forkserver, forkshare

pytestmark = [pytest.mark.e2e,
              pytest.mark.skipif(not forkserver.available(), reason="no fork on this platform")]

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FAST_RUN = ["--drop", "none", "--noise-seeds", "0", "--no-determinism-check"]


def _running(pid: int) -> bool:
    """Whether process ``pid``, or any process of the group it leads, still runs.
    A zombie does not: it has ended and only awaits its reaper (on some
    machines an orphan's reaper, process 1, collects it only a second or two
    later)."""
    if not os.path.isdir("/proc"):  # (no process table to read: any member, zombie or not)
        try:
            os.killpg(pid, 0)
        except ProcessLookupError:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return False
        return True
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                state, _, group = fh.read().rsplit(b")", 1)[1].split()[:3]
        except (OSError, ValueError):
            continue
        if (int(entry) == pid or int(group) == pid) and state not in (b"Z", b"X"):
            return True
    return False


def _gone(pid: int, within: float = 3.0) -> bool:
    """No process is left running in the process group ``pid`` (or no process ``pid``)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not _running(pid):
            return True
        time.sleep(0.02)
    return False


def _start(tmp_path, argv, own_servers=True):
    """``python -m resumecheck *argv`` with TMPDIR a directory of its own; the
    command, the scratch directory and the file the hung step writes its pid to.
    ``own_servers``: the command starts its warm servers, as a user's does
    (else it forks from the session's share: the same segments, started sooner)."""
    # (short, as a user's TMPDIR is: multiprocessing's sockets go in the
    # check's scratch only where their paths fit; pytest's tmp_path is long)
    scratch = Path(tempfile.mkdtemp(prefix="sig-"))
    marker = tmp_path / "hanging.pid"
    env = {**os.environ, "TMPDIR": str(scratch), "FAULTS_MARKER": str(marker)}
    if own_servers:
        env.pop(forkshare.SHARE_ENV, None)
        # (no warm-up step: these servers fork one or two segments, and how a
        # check ends does not depend on it; the share's servers warm up)
        env[forkserver.WARM_UP_ENV] = "0"
    proc = forkserver.spawn("resumecheck", argv, env, cwd=ROOT, output_dir=str(tmp_path))
    return proc, scratch, marker


def _hung_pid(proc, marker) -> int:
    """Wait until the step hangs; the pid of the process it hangs in."""
    deadline = time.monotonic() + 120
    while not marker.exists() or not marker.read_text():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the step never hung"
        time.sleep(0.02)
    return int(marker.read_text())


def _interrupt(tmp_path, argv, signum, own_servers):
    """Run, signal once the step hangs; (exit code, seconds until the check had
    cleaned up and ended, the hung pid, what TMPDIR holds, stdout, stderr)."""
    proc, scratch, marker = _start(tmp_path, argv, own_servers)
    try:
        hanging = _hung_pid(proc, marker)
        time.sleep(0.1)  # inside the hung step
        sent = time.monotonic()
        os.kill(proc.pid, signum)  # the command only, as `kill` sends it
        proc.wait(timeout=60)
        took = time.monotonic() - sent
        out, err = proc.communicate()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    left = [p.name for p in scratch.iterdir() if not p.name.startswith("torchinductor")]
    shutil.rmtree(scratch, ignore_errors=True)
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
    # (a trial: Ctrl-C left the pymp-* directories of a DataLoader's workers in TMPDIR)
    pytest.param(["run", "fixtures.faults.programs:HANGS_WITH_LOADER_WORKERS", *FAST_RUN,
                  "--isolation", "process"],
                 signal.SIGINT, id="run-process-SIGINT-loader-workers", marks=pytest.mark.process),
    pytest.param(["run", "fixtures.faults.programs:HANGS_WITH_LOADER_WORKERS", *FAST_RUN],
                 signal.SIGINT, id="run-inprocess-SIGINT-loader-workers"),
    # (a trial: fuzz, whose hypothesis collects garbage with a callback, went on and exited 0)
    pytest.param(["run", "fixtures.faults.programs:HANGS_IN_GC", *FAST_RUN],
                 signal.SIGTERM, id="run-inprocess-SIGTERM-in-a-gc-callback"),
    pytest.param(["fuzz", "fixtures.faults.programs:HANGS", "--isolation", "process", "--quiet"],
                 signal.SIGTERM, id="fuzz-process-SIGTERM", marks=pytest.mark.process),
    pytest.param(["fuzz", "fixtures.faults.programs:HANGS", "--quiet"],
                 signal.SIGINT, id="fuzz-inprocess-SIGINT"),
    pytest.param(["baseline", "fixtures.faults.programs:HANGS_ALWAYS", "--isolation", "process"],
                 signal.SIGINT, id="baseline-process-SIGINT", marks=pytest.mark.process),
    pytest.param(["baseline", "fixtures.faults.programs:HANGS_ALWAYS"],
                 signal.SIGTERM, id="baseline-inprocess-SIGTERM"),
]


# The command of each case named here starts its own warm servers, as a
# user's command does (so does the one killed outright, below); the others
# fork from the session's share: how the command ends is the same.
OWN_SERVERS = {"run-process-SIGTERM"}


@pytest.mark.parametrize(("argv", "signum"), CASES)
def test_a_signal_ends_the_check_promptly_and_cleanly(request, tmp_path, argv, signum):
    own = request.node.callspec.id in OWN_SERVERS
    code, took, hanging, left, out, err = _interrupt(tmp_path, argv, signum, own)
    assert code == 128 + signum, err
    assert took < 3, f"took {took:.1f} s to stop"
    assert f"interrupted by {signal.Signals(signum).name}" in err
    assert "Traceback" not in err and "Exception ignored" not in err, err
    assert _gone(hanging), "the hung process outlived the check"
    assert left == [], f"left behind in TMPDIR: {left}"


@pytest.mark.process
def test_children_of_a_check_killed_outright_exit_by_themselves(tmp_path):
    """SIGKILL cannot be handled: the check's fresh interpreters notice that
    their parent is gone and exit, even one whose step hangs."""
    proc, scratch, marker = _start(
        tmp_path, ["run", "fixtures.faults.programs:HANGS", *FAST_RUN, "--isolation", "process"])
    try:
        hanging = _hung_pid(proc, marker)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
        assert _gone(hanging, within=5), "a child outlived its killed check"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        shutil.rmtree(scratch, ignore_errors=True)


# Sends the process SIGINT as it starts importing numpy (torch's extension
# imports it while `import torch` runs), then lets the import go on.
_SIGINT_AT_NUMPY = '''
import os, signal, sys

class SigintAtNumpy:
    def find_spec(self, name, path=None, target=None):
        if name == "numpy":
            sys.meta_path.remove(self)
            os.kill(os.getpid(), signal.SIGINT)
        return None

sys.meta_path.insert(0, SigintAtNumpy())
'''


def _marked(mark: str) -> list[int]:
    """The live processes whose environment holds RC_TEST_MARK=mark."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/environ", "rb") as fh:
                if f"RC_TEST_MARK={mark}".encode() in fh.read().split(b"\0"):
                    found.append(int(pid))
        except OSError:
            pass
    return found


@pytest.mark.process
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_signal_while_torch_is_being_imported_ends_the_command_and_its_servers(tmp_path):
    """A new interpreter's `resumecheck run --isolation process` gets SIGINT
    while it imports torch, its own warm servers still importing theirs.
    torch's extension imports numpy and takes any error there for "numpy is not
    installed": an interrupt raised inside that import was swallowed and the
    check went on (exit 0, or a half-imported numpy's AttributeError). And the
    servers, not yet serving, outlived the command that had said "child
    processes were stopped" by seconds."""
    (tmp_path / "sigint_at_numpy.py").write_text(_SIGINT_AT_NUMPY)
    argv = ["resumecheck", "run", "--steps", "2", "--resume-at", "1", *FAST_RUN,
            "--isolation", "process"]
    code = (f"import sys; sys.path.insert(0, {str(tmp_path)!r}); import sigint_at_numpy; "
            f"sys.argv = {argv!r}; from resumecheck.cli import entrypoint; entrypoint()")
    mark = os.urandom(8).hex()
    env = {**os.environ, "TMPDIR": str(tmp_path), "RC_TEST_MARK": mark}
    env.pop(forkshare.SHARE_ENV, None)  # servers of its own, as a user's command starts
    env.pop(forkserver.WARM_UP_ENV, None)  # (with their warm-up step: still busy at the end)
    try:
        done = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 128 + signal.SIGINT, done.stderr
        assert "interrupted by SIGINT: nothing was judged" in done.stderr
        assert "Traceback" not in done.stderr
        deadline = time.monotonic() + 0.5  # (a killed process may take a moment to go)
        while _marked(mark) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert _marked(mark) == [], "a warm server outlived the interrupted command"
    finally:
        for pid in _marked(mark):
            os.kill(pid, signal.SIGKILL)


def test_a_signal_as_the_command_ends_exits_at_once_saying_the_output_is_complete():
    """A trial: SIGINT while the warm servers ended at exit printed a
    KeyboardInterrupt traceback from an atexit callback."""
    code = ("import os, signal, time; from resumecheck import cli; print('report'); "
            "cli._late_signals_end_at_once(); os.kill(os.getpid(), signal.SIGINT); "
            "time.sleep(5); print('not reached')")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 130 and done.stdout == "report\n", done
    assert done.stderr == ("resumecheck: error: interrupted by SIGINT as the command ended: "
                           "what it printed is complete, but the exit status says it was "
                           "interrupted\n")


def test_a_signal_in_the_interpreters_teardown_leaves_the_commands_exit_status():
    """The re-check of a trial: SIGTERM during the teardown after a complete
    report (the interpreter puts the default handlers back) gave exit 143 with
    nothing said; now the command's own status stands."""
    code = ("import os, signal, sys; from resumecheck import cli; print('report'); "
            "cli._end_quietly(); os.kill(os.getpid(), signal.SIGTERM); sys.exit(3)")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (3, "report\n", ""), done


def test_once_a_signal_is_taken_a_finalizers_exception_is_not_printed():
    """Trial 287: Ctrl-C as a DataLoader made its worker iterator printed that
    half-made iterator's `__del__` AttributeError under the message that the
    command was interrupted. Once a signal is taken, what a finalizer raises is
    not printed, while the hook is installed and, in the command's own process,
    after; a dropped KeyboardInterrupt is still raised again."""
    from resumecheck.interrupt import Redelivery

    printed: list[str] = []

    class HalfMade:
        def __del__(self) -> None:
            raise AttributeError("'HalfMade' object has no attribute '_workers_status'")

    before = sys.unraisablehook
    sys.unraisablehook = lambda info: printed.append(type(info.exc_value).__name__)
    received: list[int] = []
    dropped = Redelivery(received)
    try:
        dropped.install()
        HalfMade()
        assert printed == ["AttributeError"]  # before a signal: printed
        received.append(signal.SIGINT)
        HalfMade()
        assert printed == ["AttributeError"]
        dropped.uninstall(quiet=True)
        HalfMade()
        assert printed == ["AttributeError"]
        dropped.uninstall()  # (a caller of main(): its own hook back)
        HalfMade()
        assert printed == ["AttributeError", "AttributeError"]
    finally:
        sys.unraisablehook = before


def test_once_a_signal_is_taken_another_threads_exception_is_not_printed():
    """A trial's Ctrl-C during a DataLoader with workers printed a traceback
    under 'interrupted by SIGINT': multiprocessing's resource-sharing thread was
    mid-handshake with a worker the check had just stopped. Once the main
    thread takes a signal, another thread's exception is a consequence of the
    stopping, and is not printed (the hook that prints it is not called)."""
    import threading

    from resumecheck.interrupt import Watcher

    printed: list[str] = []

    def fail() -> None:
        raise EOFError("the worker hung up mid-handshake")

    def reports_itself() -> None:  # (as multiprocessing's resource sharer does)
        try:
            fail()
        except EOFError:
            sys.excepthook(*sys.exc_info())

    def in_a_thread() -> None:
        for target in (fail, reports_itself):
            thread = threading.Thread(target=target)
            thread.start()
            thread.join()

    before, before_sys = threading.excepthook, sys.excepthook
    threading.excepthook = lambda args: printed.append(type(args.exc_value).__name__)
    sys.excepthook = lambda kind, value, tb: printed.append(f"sys: {kind.__name__}")
    watcher = Watcher(lambda signum: "ended")
    try:
        in_a_thread()
        assert printed == ["EOFError", "sys: EOFError"]  # before a signal: printed
        assert watcher.taken(signal.SIGINT)
        in_a_thread()
        assert printed == ["EOFError", "sys: EOFError"]
        sys.excepthook(*_raised(EOFError("in the main thread")))
        assert printed[-1] == "sys: EOFError"  # (the main thread's own is printed)
    finally:
        watcher.close()
        threading.excepthook, sys.excepthook = before, before_sys


def _raised(exc: BaseException) -> tuple:
    try:
        raise exc
    except BaseException:
        return sys.exc_info()
