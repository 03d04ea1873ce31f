"""A check killed outright (SIGKILL, the out-of-memory killer) cannot remove
its scratch directory; the next check on the machine does, and only that:
never a live check's, another host's, or a directory that is not a check's."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile

import pytest

from resumecheck import interrupt

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads /proc")


@pytest.fixture
def tmpdir_root(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(interrupt, "_CHECKED_ABANDONED", False)
    return tmp_path


def _scratch(root, name: str, owner: str | None):
    path = root / name
    path.mkdir()
    (path / "reference.capture.pt").write_bytes(b"x" * 10)
    if owner is not None:
        (path / interrupt.OWNER_FILE).write_text(owner)
    return path


def _dead_owner() -> str:
    """The owner line of a process that has ended."""
    proc = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"],
                            stdin=subprocess.PIPE)
    line = interrupt._owner_line(proc.pid)
    proc.communicate(b"")
    assert line is not None
    return line


def test_the_scratch_of_a_check_killed_outright_is_removed_by_the_next_check(tmpdir_root):
    killed = _scratch(tmpdir_root, "resumecheck-abc", _dead_owner())
    live = _scratch(tmpdir_root, "resumecheck-live", interrupt._owner_line(os.getpid()))
    host, pid, started = _dead_owner().split()
    elsewhere = _scratch(tmpdir_root, "resumecheck-other-host", f"{host}-other {pid} {started}")
    unowned = _scratch(tmpdir_root, "resumecheck-no-owner", None)
    not_ours = _scratch(tmpdir_root, "mine-abc", _dead_owner())
    with interrupt.scratch_directory("resumecheck-") as work:
        assert os.path.dirname(work) == str(tmpdir_root)
        assert (tmpdir_root / os.path.basename(work) / interrupt.OWNER_FILE).exists()
        assert not killed.exists()
        assert live.exists() and elsewhere.exists() and unowned.exists() and not_ours.exists()
    assert not os.path.exists(work)


def test_a_pid_taken_by_a_new_process_is_not_the_owner(tmpdir_root):
    host, pid, started = interrupt._owner_line(os.getpid()).split()
    reused = _scratch(tmpdir_root, "resumecheck-reused", f"{host} {pid} {int(started) - 1}")
    interrupt.remove_abandoned()
    assert not reused.exists()


def test_a_scratch_directory_a_child_still_writes_in_is_removed_all_the_same(tmpdir_root):
    """A trial: an interrupted `baseline --nproc 2` left its scratch behind
    ('Directory not empty': a rank killed a moment before was still writing)."""
    import threading
    import time

    written = threading.Event()

    def late_writer(path: str) -> None:  # writes for 0.2 s after the check is done
        deadline = time.monotonic() + 0.2
        os.makedirs(os.path.join(path, "rank1"))
        n = 0
        while time.monotonic() < deadline:
            # (into its directory, as a rank writes its files: os.makedirs would
            # make the scratch directory again after any removal, at any delay)
            with contextlib.suppress(OSError):
                os.mkdir(os.path.join(path, "rank1", str(n)))
                written.set()
            n += 1

    with interrupt.scratch_directory("resumecheck-test-") as path:
        writer = threading.Thread(target=late_writer, args=(path,))
        writer.start()
        written.wait(5)
    writer.join()
    assert not os.path.exists(path)
