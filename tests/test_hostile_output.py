"""--output never destroys what is not ours, and an unwritable one is refused before any work.

Each test gives --output something hostile (a character device, a FIFO, a
symlink, a directory, a place where no file can be created) and checks what
is left there afterwards.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from resumecheck.cli import main
from resumecheck.output import write_report

pytestmark = pytest.mark.e2e

# The cheapest command that does real work and writes a report.
CHEAP = ["timing", "--steps", "2", "--warmup", "0", "--checkpoint-every", "1"]


def _marker_target(tmp_path: Path) -> tuple[str, Path]:
    """A target whose import leaves a marker: the work has started."""
    marker = tmp_path / "work-started"
    program = tmp_path / "marked.py"
    program.write_text(
        "from pathlib import Path\n"
        f"Path({str(marker)!r}).write_text('imported')\n"
        "from resumecheck.tiny import TARGET\n"
    )
    return f"{program}:TARGET", marker


def test_dev_full_is_an_error_not_a_report_written_and_stays_a_device(capsys):
    before = os.stat("/dev/full")
    assert stat.S_ISCHR(before.st_mode)
    code = main(["run", "--steps", "4", "--resume-at", "2", "--drop", "none",
                 "--noise-seeds", "0", "--no-determinism-check", "--output", "/dev/full"])
    out, err = capsys.readouterr()
    assert code == 2
    assert "report written" not in out
    assert "cannot write the report to /dev/full" in err and "ENOSPC" in err
    # the check is done: its report is not lost with the file (a trial)
    assert out.startswith("resumecheck: ") and "full resume: EQUIVALENT" in out
    # the word that says where the report went is not on stdout, which may be JSON
    assert ("full resume: EQUIVALENT; the report goes to standard output instead: it could not be "
            "written to /dev/full") in err
    assert "Traceback" not in err
    after = os.stat("/dev/full")
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev
    assert stat.S_IMODE(after.st_mode) == stat.S_IMODE(before.st_mode)


def test_dev_null_is_written_through(capsys):
    assert main([*CHEAP, "--output", "/dev/null"]) == 0
    assert "report written to /dev/null" in capsys.readouterr().out
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def _rescue(fifo: Path, after: float) -> threading.Timer:
    """If the writer is still stuck waiting for a reader, become one, so a
    failing test fails instead of hanging the suite."""
    def drain() -> None:
        fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        time.sleep(1)
        os.close(fd)

    timer = threading.Timer(after, drain)
    timer.daemon = True
    timer.start()
    return timer


@pytest.mark.parametrize("reader_first", [True, False])
def test_a_fifo_is_written_through_to_its_reader(tmp_path, capsys, reader_first):
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    received: list[str] = []
    codes: list[int] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text()), daemon=True)
    writer = threading.Thread(target=lambda: codes.append(
        main([*CHEAP, "--format", "json", "--output", str(fifo)])), daemon=True)
    # reader first: it waits in open() while the check starts, and the output
    # check must not hand it an empty stream; reader late: the writer waits
    first, second = (reader, writer) if reader_first else (writer, reader)
    rescue = _rescue(fifo, 120)
    try:
        first.start()
        time.sleep(0.3)
        second.start()
        writer.join(timeout=150)
        reader.join(timeout=30)
    finally:
        rescue.cancel()
    assert codes == [0]
    assert len(received) == 1 and '"schema"' in received[0]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert [p.name for p in tmp_path.iterdir()] == ["report.fifo"]


def test_a_fifo_with_no_reader_yet_is_waited_for_with_a_word(tmp_path):
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    received: list[str] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text()), daemon=True)
    rescue = _rescue(fifo, 60)
    try:
        write_report(str(fifo), "the report\n", on_wait=reader.start)  # (no reader until asked)
        reader.join(timeout=30)
    finally:
        rescue.cancel()
    assert received == ["the report\n"]


def test_a_fifo_with_a_reader_is_written_without_a_word(tmp_path):
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # (there before the write)
    waited: list[bool] = []
    try:
        write_report(str(fifo), "the report\n", on_wait=lambda: waited.append(True))
        os.set_blocking(reader, True)
        received = os.read(reader, 100)
    finally:
        os.close(reader)
    assert received == b"the report\n" and waited == []


def test_standard_output_that_fails_says_the_verdict_and_why(capsys, monkeypatch):
    full = open("/dev/full", "w", encoding="utf-8")  # noqa: SIM115
    monkeypatch.setattr(sys, "stdout", full)
    code = main(CHEAP)
    with contextlib.suppress(OSError):  # (what it failed to take is still in its buffer)
        full.close()
    err = capsys.readouterr().err
    assert code == 2
    assert "resumecheck timing: 2 steps timed; the report could not be written" in err
    assert ("cannot write the report to standard output: No space left on device (ENOSPC)"
            in err)
    assert "unexpected" not in err and "Traceback" not in err


def test_standard_output_closed_is_refused_before_any_work(tmp_path, capsys, monkeypatch):
    target, marker = _marker_target(tmp_path)
    monkeypatch.setattr(sys, "stdout", None)
    code = main([*CHEAP[:1], target, *CHEAP[1:]])
    assert code == 2 and not marker.exists()
    assert "standard output is closed" in capsys.readouterr().err
    report = tmp_path / "report.txt"  # (with --output, the report has a place to go)
    monkeypatch.setattr(sys, "stdout", None)
    assert main([*CHEAP[:1], target, *CHEAP[1:], "--output", str(report)]) == 0
    assert "timing" in report.read_text()


def test_a_symlink_stays_a_link_and_its_target_gets_the_report(tmp_path, capsys):
    real = tmp_path / "real" / "report.json"
    real.parent.mkdir()
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    assert main([*CHEAP, "--format", "json", "--output", str(link)]) == 0
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert '"schema"' in real.read_text()
    assert sorted(p.name for p in real.parent.iterdir()) == ["report.json"]


def test_a_symlink_to_a_device_leaves_the_device(tmp_path, capsys):
    link = tmp_path / "null"
    link.symlink_to("/dev/null")
    assert main([*CHEAP, "--output", str(link)]) == 0
    assert link.is_symlink() and stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_dash_means_stdout(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main([*CHEAP, "--format", "json", "--output", "-"]) == 0
    out = capsys.readouterr().out
    assert '"schema"' in out and "report written" not in out
    assert list(tmp_path.iterdir()) == []


def test_a_new_report_gets_the_umask_mode_and_an_old_one_keeps_its_mode(tmp_path, capsys):
    previous = os.umask(0o027)
    try:
        fresh = tmp_path / "fresh.txt"
        assert main([*CHEAP, "--output", str(fresh)]) == 0
        assert stat.S_IMODE(fresh.stat().st_mode) == 0o640
        kept = tmp_path / "kept.txt"
        kept.write_text("old")
        kept.chmod(0o604)
        inode = kept.stat().st_ino
        assert main([*CHEAP, "--output", str(kept)]) == 0
        assert stat.S_IMODE(kept.stat().st_mode) == 0o604
        assert kept.stat().st_ino != inode  # replaced atomically, not rewritten in place
        assert "phase" in kept.read_text()
    finally:
        os.umask(previous)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fresh.txt", "kept.txt"]


@pytest.mark.parametrize(
    ("output", "message"),
    [
        ("{tmp}", "it is a directory"),
        ("{tmp}/missing/report.json", "does not exist"),
        ("{tmp}/afile/report.json", "ENOTDIR"),
        # sysfs takes no new files, even from root (chmod does not stop root)
        ("/sys/resumecheck-report.json", "EACCES"),
        # a trial: the trailing slash was dropped (a file `newdir` written, or
        # `afile` replaced) and an empty path printed the report
        ("{tmp}/newdir/", "ends with a slash, which names a directory, and there is no such"),
        ("{tmp}/afile/", "ends with a slash, which names a directory, and it is not one"),
        ("", "an empty path names no file"),
    ],
)
def test_an_unwritable_output_is_refused_before_any_work(tmp_path, capsys, output, message):
    (tmp_path / "afile").write_text("a file, not a directory")
    target, marker = _marker_target(tmp_path)
    path = output.format(tmp=tmp_path)
    code = main(["run", target, "--output", path])
    err = capsys.readouterr().err
    assert code == 2
    assert message in err and f"cannot write the report to {path or repr(path)}" in err
    assert "Traceback" not in err and "This is a bug" not in err
    assert not marker.exists(), "the check ran before --output was refused"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "marked.py"]
    assert (tmp_path / "afile").read_text() == "a file, not a directory"


def test_a_read_only_report_file_is_refused_before_any_work_and_kept(tmp_path, capsys):
    """A trial: a report file made read-only was replaced (the report replaces
    a file through its directory; root may write any file)."""
    target, marker = _marker_target(tmp_path)
    kept = tmp_path / "kept.txt"
    kept.write_text("the report to keep")
    kept.chmod(0o444)
    code = main(["run", target, "--output", str(kept)])
    err = capsys.readouterr().err
    assert code == 2
    assert (f"cannot write the report to {kept}: it is a read-only file (mode 0444), which "
            "the report would replace") in err, err
    assert not marker.exists(), "the check ran before --output was refused"
    assert kept.read_text() == "the report to keep"


@pytest.mark.parametrize("command", ["fuzz", "baseline", "timing"])
def test_every_command_checks_output_first(tmp_path, capsys, command):
    target, marker = _marker_target(tmp_path)
    assert main([command, target, "--output", str(tmp_path)]) == 2
    assert "it is a directory" in capsys.readouterr().err
    assert not marker.exists()


def test_a_fifo_without_a_reader_is_accepted_by_the_probe_without_hanging(tmp_path):
    from resumecheck.output import check_output

    fifo = tmp_path / "nobody-reads"
    os.mkfifo(fifo)
    done = threading.Event()

    def probe() -> None:
        check_output(str(fifo))
        done.set()

    threading.Thread(target=probe, daemon=True).start()
    assert done.wait(5), "probing a FIFO with no reader blocked"
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_a_failed_check_says_its_output_file_holds_an_earlier_report(tmp_path, capsys):
    """A trial: after a failed or interrupted check the --output file still read
    'full resume: EQUIVALENT' from an earlier run, and nothing said so."""
    earlier = tmp_path / "report.txt"
    earlier.write_text("full resume: EQUIVALENT\n")
    code = main(["run", "fixtures.faults.programs:OWN_SAVE_DISK_FULL", "--drop", "none",
                 "--noise-seeds", "0", "--output", str(earlier)])
    err = capsys.readouterr().err
    assert code == 4
    assert f"The report file {earlier} was not written by this command: what it holds is " \
           "from before." in err
    assert earlier.read_text() == "full resume: EQUIVALENT\n"


def test_an_interrupt_before_the_output_check_still_says_the_file_is_from_before(tmp_path):
    # (a trial: a Ctrl-C while torch was being imported, before the output check,
    # left out the sentence the later interrupts carried)
    import argparse

    from resumecheck.cli import _stale_output

    earlier = tmp_path / "report.txt"
    earlier.write_text("full resume: EQUIVALENT\n")
    args = argparse.Namespace(output=str(earlier))  # (not checked yet, not written)
    assert _stale_output(args) == ""
    assert "was not written by this command" in _stale_output(args, interrupted=True)
    source = tmp_path / "train.py"  # (a program's source is never called a report)
    source.write_text("x = 1\n")
    assert _stale_output(argparse.Namespace(output=str(source)), interrupted=True) == ""


def _reader_leaves_after_one_line(args: list[str]) -> int:
    """Run the command with standard output and error one pipe, whose reader
    reads one line and closes it (``2>&1 | head -1``); its exit status."""
    read, write = os.pipe()
    command = subprocess.Popen([sys.executable, "-m", "resumecheck", *args],
                               stdout=write, stderr=write)
    os.close(write)
    with os.fdopen(read) as reader:
        reader.readline()
    return command.wait(timeout=120)


def test_a_reader_gone_mid_check_is_the_environments_failure_not_the_programs(tmp_path):
    """The program's own log lines then fail (BrokenPipeError): that is not the
    program's failure, and says what to do (a trial: "Fix the program")."""
    report = tmp_path / "report.json"
    code = _reader_leaves_after_one_line(
        ["run", "fixtures.hostile.programs:CHATTY", "--drop", "none", "--noise-seeds", "0",
         "--no-determinism-check", "--output", str(report)])
    error = json.loads(report.read_text())["error"]
    assert code == 4 and error["kind"] == "EnvironmentFailure", error
    assert ("the environment failed, not the program: what read the check's output went away "
            "(BrokenPipeError: Broken pipe; standard output and standard error are a pipe whose "
            "reader closed it") in error["message"]
    assert "nothing is wrong with the program" in error["message"]
    assert "Fix the program" not in error["message"]


def test_with_fresh_interpreters_the_report_is_written_and_its_verdict_is_the_exit_status(
        tmp_path):
    """There the programs' lines come through this process, which drops those
    no one reads; the report is in its file, and the word after it, that it
    was written, finds no reader either: the verdict's exit status, not
    "unexpected BrokenPipeError ... a bug"."""
    report = tmp_path / "report.json"
    code = _reader_leaves_after_one_line(
        ["run", "fixtures.hostile.programs:CHATTY", "--drop", "none", "--noise-seeds", "0",
         "--no-determinism-check", "--isolation", "process", "--output", str(report)])
    assert code == 0
    assert json.loads(report.read_text())["equivalent"] is True


def test_a_programs_own_broken_pipe_stays_the_programs():
    from resumecheck.faults import environment_failure

    assert environment_failure(BrokenPipeError(32, "Broken pipe")) is None
