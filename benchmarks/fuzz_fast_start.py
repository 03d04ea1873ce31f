"""Benchmark: what reusing replayed first halves saves fuzzing.

Runs the same schedules of the seeded-bug twin (a user program with its own
save/load) twice in one process, side by side: every example replaying its
first half from step 0 (reuse off) and reusing the first half replayed once
per first resume point (reuse on, what ``resumecheck fuzz`` does). Prints the
time per example and the ratio. (Starting from the engine's capture instead
is not done: it calls save() on a program the engine restored, not one that
trained there.)

    python benchmarks/fuzz_fast_start.py
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from fixtures.userprog import RUN, build  # noqa: E402
from resumecheck import Target  # noqa: E402
from resumecheck.engine import Checker  # noqa: E402
from resumecheck.settings import Settings  # noqa: E402

# fuzzing draws many schedules per first resume point: each is used 3 times here
SCHEDULES = [[k] for k in range(1, 16)] + [[k, 15] for k in range(1, 15)] + [[k, k + 1] for k in range(1, 15)]
ROUNDS = 3


SIZES = {  # the user program at its test size, and with steps ~30x dearer
    "small steps (batch 4)": {},
    "dear steps (batch 128)": {"batch": 128, "n_samples": 1280},
}


def per_example(settings: dict, fast: bool) -> list[float]:
    target = Target(factory=build, run_config={**RUN, **settings}, steps=16, restart_config="run")
    settings = Settings(steps=16, resume_at=[9], check_determinism=False)
    times = []
    with tempfile.TemporaryDirectory() as work:
        checker = Checker(target, settings.for_target(target), work,
                          capture_at=list(range(1, 16)), reuse_prefix=fast)
        for schedule in SCHEDULES:
            start = time.perf_counter()
            result = checker.check(schedule)
            times.append(time.perf_counter() - start)
            assert result.verdict == "identical", (schedule, result.explanation)
    return times


def main() -> None:
    torch.set_num_threads(1)
    print(f"examples: {len(SCHEDULES)} schedules x {ROUNDS} rounds, 16 steps, "
          "resume points 1..15, the program's own save/load")
    for label, settings in SIZES.items():
        slow, fast = [], []
        for _ in range(ROUNDS):  # interleaved, so both see the same machine
            slow += per_example(settings, False)
            fast += per_example(settings, True)
        s, f = statistics.median(slow), statistics.median(fast)
        print(f"{label}: replayed each time {s * 1000:7.1f} ms, reused {f * 1000:7.1f} ms "
              f"per example; ratio {s / f:.2f}x")


if __name__ == "__main__":
    main()
