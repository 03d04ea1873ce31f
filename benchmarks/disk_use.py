"""Benchmark: how much scratch disk a check uses (peak bytes and files under TMPDIR).

Runs each check in a fresh interpreter with TMPDIR pointed at an empty
directory and samples that directory every few milliseconds:

* ``sized``: a 5M-parameter MLP (SGD with momentum), 10 steps, resume at 5,
  every component dropped in turn, two noise seeds (what `resumecheck run`
  does by default);
* ``long``: the built-in tiny program for 400 steps, full resume only: the
  number of files the uninterrupted reference leaves while it runs.

    python benchmarks/disk_use.py            # both
    python benchmarks/disk_use.py sized

Prints figures only; it is not a timed test. Measured when the reference
stopped writing every step (2 CPU cores, torch 2.13): ``sized`` 840 MiB in 22
files before, 382 MiB in 10 files after; ``long`` 404 files before, 7 after.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CASES = {
    "sized": "import resumecheck; resumecheck.verify('fixtures.hostile.programs:SIZED', "
             "steps=10, resume_at=5, noise_seeds=2)",
    "long": "import resumecheck; resumecheck.verify(steps=400, resume_at=200, drop='none', "
            "noise_seeds=0, check_determinism=False)",
}


def _usage(root: str) -> tuple[int, int]:
    size = files = 0
    for folder, _, names in os.walk(root):
        for name in names:
            try:
                size += os.lstat(os.path.join(folder, name)).st_size
                files += 1
            except OSError:
                pass  # removed while we looked
    return size, files


def measure(code: str) -> tuple[int, int, float]:
    """(peak bytes, peak files, seconds) of ``code`` run with a private TMPDIR."""
    with tempfile.TemporaryDirectory(prefix="disk-bench-") as tmp:
        env = {**os.environ, "TMPDIR": tmp, "PYTHONPATH": str(ROOT)}
        peak = [0, 0]
        done = threading.Event()

        def sample() -> None:
            while not done.is_set():
                size, files = _usage(tmp)
                peak[0], peak[1] = max(peak[0], size), max(peak[1], files)
                time.sleep(0.005)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        started = time.monotonic()
        subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, check=True)
        elapsed = time.monotonic() - started
        done.set()
        sampler.join()
        return peak[0], peak[1], elapsed


def main(names: list[str]) -> None:
    for name in names or list(CASES):
        size, files, seconds = measure(CASES[name])
        print(f"{name:6s} peak {size / 2**20:9.1f} MiB in {files:6d} files  ({seconds:.1f} s)")


if __name__ == "__main__":
    main(sys.argv[1:])
