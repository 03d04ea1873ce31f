"""Warm against cold distributed launches, side by side (run by hand).

    python benchmarks/dist_launch.py [--launches 3] [--repeat 1] [--skip-run]

Times, in one invocation, with ranks started warm (the launcher forked from a
server that imported torch once, each rank forked from the launcher by torch's
own launcher, ``start_method="fork"``) and cold (``RESUMECHECK_WARM=0``: the
launcher and every rank a new interpreter), medians:

* launch: an empty 2-rank segment of the built-in DDP program (every rank
  initialises the process group, builds the program, runs no step, captures
  its state), through ``resumecheck.distributed.run_ranks`` as the engine
  runs each segment; --launches launches in one interpreter after a first one
  that is not timed (it starts the warm server, which a check does once);
* run: ``resumecheck run resumecheck.tiny_dist:DDP --nproc 2`` (a full
  sweep: reference, determinism rerun, noise runs, resumes, every ablation),
  --repeat times each.

The runs alternate between the modes, so machine load hits both alike; a
run's warm figure includes starting the server, as every check pays it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

MODES = {"cold": {"RESUMECHECK_WARM": "0"}, "warm": {"RESUMECHECK_WARM": "1"}}

# Empty segments, as the engine runs each segment; prints each one's wall time
# after a first one (not timed) that starts the warm server.
LAUNCH = """
import sys, tempfile, time
from resumecheck.distributed import run_ranks
from resumecheck.segments import SegmentSpec
with tempfile.TemporaryDirectory() as work:
    for i in range(int(sys.argv[1]) + 1):
        spec = SegmentSpec(target_spec="resumecheck.tiny_dist:DDP", config={}, start=1,
                           stop=0, workdir=work, name=f"empty{i}", nproc=2)
        started = time.perf_counter()
        result = run_ranks(spec)
        assert result.error is None, result.error
        if i:
            print(time.perf_counter() - started)
"""


def _launches(env: dict[str, str], repeat: int) -> list[float]:
    out = subprocess.run([sys.executable, "-c", LAUNCH, str(repeat)],
                         env={**os.environ, **env}, check=True, capture_output=True, text=True)
    return [float(line) for line in out.stdout.split()]


def _run(env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "resumecheck", "run", "resumecheck.tiny_dist:DDP",
                    "--nproc", "2", "--format", "json"],
                   env={**os.environ, **env}, stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - started


def _show(label: str, times: dict[str, list[float]]) -> None:
    cold, warm = (statistics.median(times[m]) for m in ("cold", "warm"))
    print(f"  {label:40s} cold {cold:6.2f} s   warm {warm:6.2f} s   "
          f"cold/warm {cold / warm:4.2f}x", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--launches", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--skip-run", action="store_true",
                        help="time the empty launch only (the full run takes minutes cold)")
    args = parser.parse_args()
    print(f"{os.cpu_count()} cores; medians of {args.launches} launches, {args.repeat} run(s)")
    launches = {mode: _launches(env, args.launches) for mode, env in MODES.items()}
    _show("empty 2-rank segment launch", launches)
    if not args.skip_run:
        runs: dict[str, list[float]] = {mode: [] for mode in MODES}
        for _ in range(args.repeat):
            for mode, env in MODES.items():
                runs[mode].append(_run(env))
        _show("resumecheck run tiny_dist:DDP --nproc 2", runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
