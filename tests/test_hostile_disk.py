"""Disk use: full tensors only where a comparison reads them, free space checked
before the resumed runs, and a large check announced up front.

The verdicts must not change: each test that trims what is written compares
with a check that keeps everything (``_TENSOR_STEPS`` raised past the run).
"""

from __future__ import annotations

import subprocess
import tempfile
import warnings
from pathlib import Path

import pytest

from resumecheck import engine
from resumecheck.cli import main
from resumecheck.compare import Tolerance
from resumecheck.engine import Checker, verify
from resumecheck.errors import DiskSpaceShortage, DiskUseWarning
from resumecheck.program import load_target
from resumecheck.settings import Settings

pytestmark = pytest.mark.e2e


def _summary(report, figures: bool) -> list[tuple]:
    keys = ["label", "verdict", "first_divergent_step", "first_divergent_quantity",
            "plausible", "blind_spot", "latent_gaps"]
    if figures:
        keys += ["max_abs_diff", "max_rel_diff", "max_ulp_diff", "explanation"]
    return [tuple(getattr(r, k) for k in keys) for r in report.runs]


@pytest.mark.parametrize("tolerance", [Tolerance.bitwise(), Tolerance.close()])
def test_trimmed_tensors_give_the_same_verdicts_as_keeping_every_step(monkeypatch, tolerance):
    # Every component dropped: most runs diverge at once, the lost step
    # counter only at step 7, beyond the steps the reference keeps (3..5).
    kw = dict(drop="all", noise_seeds=1, check_determinism=False, tolerance=tolerance)
    target = "fixtures.hostile.programs:LATE_READ"
    trimmed = verify(target, **kw)
    late = [r for r in trimmed.runs if r.dropped == ["global_step"]][0]
    assert late.first_divergent_step == 7 > 2 + engine._TENSOR_STEPS
    monkeypatch.setattr(engine, "_TENSOR_STEPS", 100)
    everything = verify(target, **kw)
    figures = not tolerance.bitwise_only  # bitwise: figures cover the first differing steps
    assert _summary(trimmed, figures) == _summary(everything, figures)
    diverged = [r for r in trimmed.runs if r.verdict == "diverged"]
    assert diverged and all(r.max_abs_diff is not None for r in diverged)


def test_a_long_reference_keeps_tensors_of_a_few_steps_only(tmp_path):
    target = load_target("fixtures.hostile.programs:PLAIN")
    settings = Settings(steps=300, resume_at=[150], seed=0, check_determinism=False)
    check = Checker(target, settings.for_target(target), str(tmp_path))
    ref = check.segment
    # (in files or, judged in this process, in memory: ``SegmentResult.kept``)
    kept = sorted({p.name for p in Path(ref.tensor_dir).glob("step_*.pt")}
                  | {k for k in ref.kept if k.startswith("step_")})
    # three steps after the capture, five more where they are small (spare bytes)
    assert kept == [f"step_{s}.pt" for s in range(151, 159)]
    # beside them, only the random streams at the first two steps after the capture
    streams = sorted({p.name for p in Path(ref.tensor_dir).glob("streams_*.pt")}
                     | {k for k in ref.kept if k.startswith("streams_")})
    assert streams == ["streams_151.pt", "streams_152.pt"]
    # a step outside the window is replayed on demand, proven by its digests
    tensors = check.tensors(200)
    assert tensors is not None
    assert "step_200.pt" in ref.kept or (Path(ref.tensor_dir) / "step_200.pt").exists()
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(files) < 17, files


@pytest.fixture
def small_tmpfs(tmp_path):
    """A 4 MB tmpfs: room for the reference of MEDIUM, not for its resumed runs."""
    where = tmp_path / "tmpfs"
    where.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(where)],
                             capture_output=True)
    if mounted.returncode != 0:
        pytest.skip("mounting a tmpfs needs root: " + mounted.stderr.decode().strip())
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


@pytest.mark.process  # (a fresh interpreter's run writes every file it keeps)
def test_too_little_free_space_is_found_before_the_resumed_runs(small_tmpfs, monkeypatch, capsys):
    monkeypatch.setattr(tempfile, "tempdir", str(small_tmpfs))
    code = main(["run", "fixtures.hostile.programs:MEDIUM", "--noise-seeds", "0",
                 "--isolation", "process"])
    err = capsys.readouterr().err
    assert code not in (0, 1)  # never a verdict
    assert "not enough disk space for this check" in err and str(small_tmpfs) in err
    assert "Nothing was judged" in err and "Traceback" not in err
    assert list(small_tmpfs.iterdir()) == []  # the scratch directory is gone


@pytest.mark.process
def test_the_shortage_is_an_error_with_its_figures(small_tmpfs, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(small_tmpfs))
    with pytest.raises(DiskSpaceShortage) as info:
        verify("fixtures.hostile.programs:MEDIUM", noise_seeds=0, check_determinism=False,
               isolation="process")
    assert info.value.needed > info.value.free
    # (trial 435: the shortfall is what is still to write against what is free)
    assert info.value.needed - info.value.written > info.value.free
    if info.value.written:
        assert "written already" in str(info.value)


def test_the_shortage_says_what_is_written_already_and_what_is_to_come():
    from resumecheck.errors import DiskSpaceShortage

    said = str(DiskSpaceShortage("/tmp/x", 402_000, 303_000, written=80_000))
    assert "needs about 402 kB under /tmp/x (80 kB of it written already, 322 kB still to " \
        "write) and 303 kB is free" in said, said


def test_in_process_the_step_tensors_kept_in_memory_are_not_counted(small_tmpfs, monkeypatch,
                                                                      capsys):
    """The same disk is enough in-process: a run judged where it runs keeps its
    differing steps' tensors in memory (the check was refused, though it fit)."""
    monkeypatch.setattr(tempfile, "tempdir", str(small_tmpfs))
    code = main(["run", "fixtures.hostile.programs:MEDIUM", "--noise-seeds", "0"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "disk" not in err
    assert list(small_tmpfs.iterdir()) == []


def test_a_large_check_says_up_front_what_it_will_use(monkeypatch, capsys):
    monkeypatch.setattr(engine, "_LARGE_DISK_USE", 1)  # every check is "large"
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        verify("fixtures.hostile.programs:PLAIN", drop="none", noise_seeds=0,
               check_determinism=False)
    notes = [w for w in seen if issubclass(w.category, DiskUseWarning)]
    assert len(notes) == 1 and "of scratch space under" in str(notes[0].message)
    assert main(["run", "fixtures.hostile.programs:PLAIN", "--drop", "none",
                 "--noise-seeds", "0", "--no-determinism-check"]) == 0
    err = capsys.readouterr().err
    assert err.count("resumecheck: note: this check will use about") == 1
