"""Benchmark: the trace keeps memory flat however long the run.

Measures the peak resident memory of `resumecheck run --drop none` on the
built-in program at N = 16 and N = 160 steps, each in a fresh interpreter,
side by side, and prints the ratio. Per-step records hold digests only; full
tensors go to disk one step per file.

    python benchmarks/trace_memory.py
"""

from __future__ import annotations

import subprocess
import sys

CODE = """
import resource, resumecheck
resumecheck.verify(steps={n}, resume_at={k}, drop="none", noise_seeds=0)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def peak_kib(n: int) -> int:
    out = subprocess.run([sys.executable, "-c", CODE.format(n=n, k=n // 2)],
                         capture_output=True, text=True, check=True)
    return int(out.stdout.strip().splitlines()[-1])


def main() -> None:
    short, long = peak_kib(16), peak_kib(160)
    print(f"peak RSS, 16 steps : {short / 1024:8.1f} MiB")
    print(f"peak RSS, 160 steps: {long / 1024:8.1f} MiB")
    print(f"ratio (160 / 16 steps): {long / short:.3f}x for 10x the steps")


if __name__ == "__main__":
    main()
