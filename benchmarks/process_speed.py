"""Process isolation against in-process restarts, side by side (run by hand).

    python benchmarks/process_speed.py [--repeat 3] [TARGET]

Times the whole `resumecheck run` command (a full sweep: reference,
determinism rerun, noise seeds, the full resume and one run per component)
three ways in one invocation, median of --repeat runs each:

* inprocess: restarts in this interpreter (the fast path);
* process, warm: each segment forked from a server that imported torch once;
* process, cold: each segment a new interpreter (RESUMECHECK_WARM=0).

Prints each median and the ratios; the goal is process (warm) <= 1.5x inprocess.
The runs alternate, so machine load hits every mode alike.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

MODES = {
    "inprocess": (["--isolation", "inprocess"], {}),
    "process (warm)": (["--isolation", "process"], {}),
    "process (cold)": (["--isolation", "process"], {"RESUMECHECK_WARM": "0"}),
}


def _time(target: list[str], args: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "resumecheck", "run", *target, *args, "--format", "json"],
                   env={**os.environ, **env}, stdout=subprocess.DEVNULL, check=False)
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("target", nargs="?")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    target = [args.target] if args.target else []
    times: dict[str, list[float]] = {mode: [] for mode in MODES}
    for _ in range(args.repeat):
        for mode, (extra, env) in MODES.items():
            times[mode].append(_time(target, extra, env))
    median = {mode: statistics.median(ts) for mode, ts in times.items()}
    base = median["inprocess"]
    print(f"resumecheck run {' '.join(target) or '(built-in program)'}, median of {args.repeat}, "
          f"{os.cpu_count()} cores")
    for mode, value in median.items():
        print(f"  {mode:15s} {value:6.2f} s   {value / base:4.2f}x inprocess")
    ratio = median["process (warm)"] / base
    print(f"goal: process (warm) <= 1.5x inprocess: {ratio:.2f}x "
          f"{'met' if ratio <= 1.5 else 'NOT met'}; warm start saves "
          f"{median['process (cold)'] / median['process (warm)']:.2f}x over cold")
    return 0


if __name__ == "__main__":
    sys.exit(main())
