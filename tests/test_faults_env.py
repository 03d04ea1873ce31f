"""An environment failure is never a verdict.

Out of disk space (anywhere: the engine's capture, the program's own save, a
tensor dump, the reference), out of memory, a child killed from outside:
each ends the whole check with its own message and exit code 4, never a
`diverged` or `failed` row and never "fix the program".
"""

import errno
import os
import shutil
import subprocess
import sys
import tempfile

import pytest
import torch

from resumecheck import forkserver, verify
from resumecheck.cli import EXIT_ENVIRONMENT, main
from resumecheck.errors import EnvironmentFailure

pytestmark = pytest.mark.e2e

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FAST = ["--drop", "none", "--noise-seeds", "0", "--no-determinism-check"]


@pytest.fixture(autouse=True)
def _private_tmp(tmp_path, monkeypatch):
    """Scratch files go to a fresh TMPDIR, which must be empty afterwards."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    yield
    assert [p.name for p in scratch.iterdir() if not p.name.startswith("torchinductor")] == []


def _cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _no_verdict(out, err):
    text = out + err
    assert "diverged" not in text and "NOT EQUIVALENT" not in text
    assert "failed" not in out and "Fix the program" not in text
    assert "nothing was judged" in err.lower() or "Nothing was judged" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("target", "detail"),
    [
        ("OUT_OF_MEMORY", "DefaultCPUAllocator: not enough memory"),
        ("MEMORY_ERROR", "MemoryError"),
    ],
)
def test_out_of_memory_in_a_resumed_run_ends_the_check(target, detail, capsys):
    code, out, err = _cli(capsys, "run", f"fixtures.faults.programs:{target}", *FAST)
    assert code == EXIT_ENVIRONMENT == 4
    # (trials: blamed on the environment alone, though the uninterrupted run passed that
    # step in the same machine; and which run and step were not said)
    assert ("a restored run failed at a step the uninterrupted run passed in this machine: the "
            "machine ran short, or the restored program asks for more than the uninterrupted "
            "one did: out of memory") in err and detail in err
    assert "the environment failed, not the program" not in err
    assert "of a run restored at " in err and "a step the uninterrupted run passed" in err
    assert "look at what your load() sets" in err
    _no_verdict(out, err)


def test_an_ask_beyond_the_whole_machine_in_a_resumed_run_is_the_programs_failure(capsys):
    """A trial: a restored run that asked for 141 TB at a step the uninterrupted
    run passed was blamed on the environment ("says nothing about the
    program's resume"). No machine gives that: the restore's doing."""
    code, out, err = _cli(capsys, "run", "fixtures.faults.programs:ASKS_BEYOND_THE_MACHINE",
                          *FAST)
    assert code == 1
    assert "failed" in out and "out of memory in the restored run" in out
    assert "one allocation asked for 1152922 TB" in out
    assert "more than this machine's whole memory" in out
    assert "the environment failed" not in err and "Traceback" not in err


def test_an_unusable_tmpdir_is_said_with_where_the_scratch_goes(tmp_path, monkeypatch):
    """A trial: TMPDIR naming no directory silently sent the scratch to /tmp."""
    from resumecheck.errors import ScratchElsewhereWarning
    from resumecheck.interrupt import scratch_directory

    missing = str(tmp_path / "no-such-dir")
    monkeypatch.setenv("TMPDIR", missing)
    with pytest.warns(ScratchElsewhereWarning, match="TMPDIR=.*no-such-dir is not a directory"):
        with scratch_directory("t-") as path:
            assert not path.startswith(missing)
    # (a trial: /proc, which os.access calls writable for root, but takes no new file)
    monkeypatch.setenv("TMPDIR", "/proc")
    with pytest.warns(ScratchElsewhereWarning, match="TMPDIR=/proc is not a directory"):
        with scratch_directory("t-"):
            pass
    monkeypatch.setenv("TMPDIR", tempfile.gettempdir())
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with scratch_directory("t-"):
            pass


def test_full_disk_in_the_programs_own_save(capsys):
    code, out, err = _cli(capsys, "run", "fixtures.faults.programs:OWN_SAVE_DISK_FULL", *FAST)
    assert code == 4
    assert "out of disk space writing" in err and ".program3" in err
    assert "No space left on device" in err and "TMPDIR" in err
    _no_verdict(out, err)


def test_full_disk_where_the_programs_own_save_writes_is_not_said_to_be_ours(capsys):
    """A trial: a save() writing to a full disk of its own was reported as
    'out of disk space writing <the path resumecheck gave it>', with advice
    to move TMPDIR, which has room."""
    code, out, err = _cli(capsys, "run", "fixtures.faults.programs:OWN_SAVE_DISK_FULL_ELSEWHERE",
                          *FAST)
    assert code == 4
    assert "out of disk space (OSError: No space left on device, in the program's save()" in err
    assert "writing" not in err and "TMPDIR" not in err
    assert "so it wrote elsewhere" in err and "Free space on the disk where your save() writes" in err
    _no_verdict(out, err)


def test_full_disk_in_the_reference_is_not_blamed_on_the_program(capsys):
    code, out, err = _cli(capsys, "run", "fixtures.faults.programs:DUMPS_DISK_FULL", *FAST)
    assert code == 4
    assert "out of disk space writing /scratch/dump-3.pt" in err
    _no_verdict(out, err)


def test_full_disk_in_the_engines_capture_during_resumed_runs(monkeypatch, capsys):
    """torch.save of the engine's capture fails with ENOSPC once the reference is done."""
    import resumecheck.capture as capture

    real_save = torch.save
    calls = {"n": 0}

    def save(obj, f, *args, **kwargs):
        calls["n"] += 1
        if isinstance(obj, dict) and obj.get("format") and calls["n"] > 3:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_save(obj, f, *args, **kwargs)

    monkeypatch.setattr(capture.torch, "save", save)
    # two resume points: each restart but the last writes a capture (an in-process
    # run keeps its restored and end states in memory)
    code, out, err = _cli(capsys, "run", "fixtures.faults.programs:HEALTHY", "--resume-at", "2,4",
                          "--noise-seeds", "0", "--no-determinism-check")
    assert code == 4 and "out of disk space" in err
    _no_verdict(out, err)


def test_torch_saves_own_full_disk_error_counts_when_the_disk_is_full(monkeypatch, tmp_path):
    """torch.save reports a full disk as a RuntimeError from its zip writer,
    with no errno: it is an environment failure only when the disk is full."""
    import resumecheck.capture as capture
    import resumecheck.faults as faults

    def save(obj, f, *args, **kwargs):
        raise RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos 576 vs 534")

    monkeypatch.setattr(capture.torch, "save", save)
    full = shutil._ntuple_diskusage(1 << 30, 1 << 30, 0)  # type: ignore[attr-defined]
    monkeypatch.setattr(faults.shutil, "disk_usage", lambda path: full)
    with pytest.raises(EnvironmentFailure) as info:
        verify("fixtures.faults.programs:HEALTHY", drop="none", noise_seeds=0,
               check_determinism=False)
    assert info.value.resource == "disk" and "unexpected pos" in info.value.detail
    roomy = shutil._ntuple_diskusage(1 << 40, 0, 1 << 40)  # type: ignore[attr-defined]
    monkeypatch.setattr(faults.shutil, "disk_usage", lambda path: roomy)
    with pytest.raises(Exception) as info2:  # a real bug: the reference failed
        verify("fixtures.faults.programs:HEALTHY", drop="none", noise_seeds=0,
               check_determinism=False)
    assert not isinstance(info2.value, EnvironmentFailure)


def _can_mount_tmpfs() -> bool:
    if not shutil.which("unshare") or sys.platform != "linux":
        return False
    probe = subprocess.run(
        ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c",
         "mount -t tmpfs -o size=64k tmpfs /mnt"], capture_output=True)
    return probe.returncode == 0


@pytest.mark.skipif(not _can_mount_tmpfs(), reason="needs unshare and a mountable tmpfs")
@pytest.mark.skipif(not forkserver.available(), reason="no fork on this platform")
def test_a_real_full_disk_under_tmpdir(tmp_path):
    """A 1 MB tmpfs as TMPDIR: the check runs out of space wherever it does
    (the reference's capture at its resume point, about 2 MB, does not fit;
    its kept steps stay in memory, in-process).
    The command runs in a process of its own (forked from a warm server, one
    thread, as a new interpreter) that mounts the tmpfs in a mount namespace
    of its own, as ``unshare --user --map-root-user --mount`` would."""
    disk = tmp_path / "small"
    disk.mkdir()
    proc = forkserver.spawn(
        "fixtures.faults.small_disk",
        [str(disk), "1m", "run", "fixtures.faults.programs:BIG", "--noise-seeds", "0",
         "--no-determinism-check"],
        dict(os.environ), cwd=ROOT, output_dir=str(tmp_path))
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 4, err
    assert "out of disk space" in err
    _no_verdict(out, err)


@pytest.mark.process
def test_a_child_killed_by_sigkill_is_named_and_not_a_verdict(capsys):
    code, out, err = _cli(capsys, "run", "fixtures.faults.programs:KILLED",
                          "--isolation", "process", *FAST)
    assert code == 4
    assert "killed by SIGKILL (signal 9)" in err
    assert "out-of-memory killer" in err
    _no_verdict(out, err)


@pytest.mark.process
def test_a_crashing_child_is_the_programs_failure_and_names_its_signal(capsys):
    code, out, err = _cli(capsys, "run", "fixtures.faults.programs:SEGFAULTS",
                          "--isolation", "process", *FAST, "--format", "json")
    assert code == 1
    import json

    run = json.loads(out)["runs"][0]
    assert run["verdict"] == "failed" and "killed by SIGSEGV (signal 11)" in run["failure"]


def test_an_ask_beyond_the_whole_machine_in_the_uninterrupted_run_is_the_programs(capsys):
    """Trial 462: the uninterrupted run asked for 4.4 TB at its step 3 and the check
    said the environment failed and to give it more memory (exit 4)."""
    code, out, err = _cli(capsys, "run",
                          "fixtures.faults.programs:ASKS_BEYOND_THE_MACHINE_ALWAYS", *FAST)
    assert code == 2, err
    assert "the uninterrupted reference run" in err and "failed at step 5" in err
    assert ("out of memory: one allocation asked for 1152922 TB, more than this machine's whole "
            "memory") in err and "more memory would not fix it; the program asks for it" in err
    assert "the environment failed" not in err and "Give the check more memory" not in err
    assert "Traceback" not in err


def test_an_out_of_memory_under_an_address_space_limit_names_the_limit():
    """Trial 462: under `ulimit -v` 6 GB, with 17 GB free, the failure read "the
    machine ran short"; the limit set on the process is named."""
    import subprocess
    import sys

    code = (
        "import resource\n"
        "from resumecheck.faults import environment_failure\n"
        "oom = RuntimeError('DefaultCPUAllocator: not enough memory: you tried to allocate 8 "
        "bytes.')\n"
        "print(environment_failure(oom).detail)\n"
        "resource.setrlimit(resource.RLIMIT_AS, (64 << 30, resource.getrlimit("
        "resource.RLIMIT_AS)[1]))\n"
        "print(environment_failure(oom).detail)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert "ulimit" not in out[0], out
    assert out[1] == (
        "RuntimeError: DefaultCPUAllocator: not enough memory: you tried to allocate 8 bytes; "
        "this process runs under an address-space limit (ulimit -v) of 69 GB, which may be "
        "what ran short: raise it, or run without it"), out
