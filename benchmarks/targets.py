"""The speed targets, side by side in one invocation (run by hand).

    python benchmarks/targets.py [--repeat 3] [--only a,b,c,d] [--suite]

Each target prints its measured ratio next to its goal:

a. process isolation <= 1.5x in-process on the built-in program: the whole
   ``resumecheck run`` command, each mode a new interpreter, alternating;
b. ``jobs=2`` >= 1.7x faster than ``jobs=1`` on a sweep whose steps dominate
   (the built-in program at 3.2M parameters, process isolation);
c. a full sweep <= 1.3x its unavoidable step compute on the built-in
   program, <= 1.1x at >= 1M parameters (in-process, in a warm interpreter);
d. the test suite <= 90 s with ``-n 2`` (only with --suite or --only d: it
   takes minutes).

*Unavoidable step compute* (c) is the training steps a sweep must run, timed
alone: a program is built, then its steps run with nothing else around them
(no tracing, digests, captures or files), one thread, as the sweep runs them;
the build is not counted. A sweep must run the reference (N steps), the
determinism rerun (N), each noise run (N) and, for each resumed run, the
tail after its resume point (N - k); a program with its own save/load also
runs its full resume's first half (k). Everything else the sweep spends
(builds, restores, tracing, digests, captures, stream records, disk,
judging) is its fixed cost.

Beside c's ratio, a *floor*: what a sweep cannot avoid beyond its steps, in
the same units. Every run and every restart builds the program (one build
per segment, timed alone), and every step of every run digests each
parameter and gradient (the check compares steps by their digests; timed
alone on the program's own tensors after each step). The floor's ratio is
(steps + builds + digests) / steps: how far the goal is from what is possible.
It also says what a restart's first step costs beyond a later one (each
resumed run's first step follows a fresh build, where the steps timed alone
follow one build): not counted in the floor, but not the check's own either.

The runs alternate, so machine load hits every mode alike; medians of
--repeat. On a shared machine the figures move with the load: compare the
ratios, not the seconds. Target c also prints its ratio in CPU time (this
process's, one thread): the steps and the sweep are timed at different
moments, so on a loaded machine the wall-clock ratio swings with the load,
the CPU-time one much less. It swings still (this host's speed moves by 2x
within minutes), so c also prints the ratio *within one sweep*: the sweep's
CPU time over the CPU time of its own steps, timed as it ran them, less the
check's hooks inside them (the gradients' digests, the forward pre-hook).
Both come from one run, so the host's speed moves them alike; it is the
figure to watch while working on the fixed cost (the steps inside a sweep
are not quite the steps alone: a restart's first step follows a fresh build).
"""

from __future__ import annotations

import argparse
import inspect
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import sized  # noqa: E402  (benchmarks/sized.py: the built-in program, wider)


def _line(name: str, measured: float, op: str, goal: float, detail: str) -> str:
    held = measured <= goal if op == "<=" else measured >= goal
    return (f"{name}  {measured:5.2f}x  goal {op} {goal:g}x  {'met' if held else 'NOT met'}"
            f"   ({detail})")


def _median_pair(first: Callable[[], float], second: Callable[[], float],
                 repeat: int) -> tuple[float, float]:
    a: list[float] = []
    b: list[float] = []
    for _ in range(repeat):
        a.append(first())
        b.append(second())
    return statistics.median(a), statistics.median(b)


# -- a. process isolation against in-process --------------------------------------


def _cli(isolation: str) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "resumecheck", "run", "--isolation", isolation,
                    "--format", "json"], cwd=ROOT, stdout=subprocess.DEVNULL, check=False)
    return time.perf_counter() - started


def target_a(repeat: int) -> str:
    inprocess, process = _median_pair(lambda: _cli("inprocess"), lambda: _cli("process"),
                                      repeat)
    return _line("a. process / inprocess (resumecheck run)", process / inprocess, "<=", 1.5,
                 f"inprocess {inprocess:.2f} s, process {process:.2f} s")


# -- b. jobs ------------------------------------------------------------------------


def _verify_jobs(target: Any, jobs: int) -> float:
    """One process-isolated sweep with ``jobs`` runs side by side."""
    from resumecheck import verify

    started = time.perf_counter()
    if "jobs" in inspect.signature(verify).parameters:
        verify(target, isolation="process", jobs=jobs)
    else:  # before the jobs setting: side-by-side runs follow the core count
        cores = os.cpu_count
        os.cpu_count = lambda: jobs
        try:
            verify(target, isolation="process")
        finally:
            os.cpu_count = cores
    return time.perf_counter() - started


def target_b(repeat: int) -> str:
    target = sized.TARGET_3M
    _verify_jobs(target, 2)  # the warm servers start, the files are cached
    one, two = _median_pair(lambda: _verify_jobs(target, 1), lambda: _verify_jobs(target, 2),
                            repeat)
    return _line("b. jobs=1 / jobs=2 (3.2M parameters, process)", one / two, ">=", 1.7,
                 f"jobs=1 {one:.2f} s, jobs=2 {two:.2f} s, {os.cpu_count()} cores")


# -- c. fixed costs of a sweep --------------------------------------------------------


def _step_times(target: Any) -> tuple[list[float], list[float], list[float]]:
    """Each step of an uninterrupted run, timed alone (build not counted):
    wall-clock and CPU seconds; and the CPU seconds the floor adds: one
    build, then each step's digests of every parameter and gradient."""
    import torch

    from resumecheck.compare import digest
    from resumecheck.components import launch_global_streams

    torch.set_num_threads(1)
    launch_global_streams()
    used = time.process_time()
    program = target.build(dict(target.run_config))
    floor = [time.process_time() - used]
    model = getattr(program.program, "model", None)
    tensors = [] if model is None else list(model.parameters())
    times, cpu = [], []
    for step in range(1, target.steps + 1):
        started, used = time.perf_counter(), time.process_time()
        program.step(step)
        times.append(time.perf_counter() - started)
        cpu.append(time.process_time() - used)
        used = time.process_time()
        for p in tensors:
            digest(p.detach())
            if p.grad is not None:
                digest(p.grad)
        floor.append(time.process_time() - used)
    return times, cpu, floor


def _unavoidable(report: Any, times: list[float], own_checkpoint: bool) -> float:
    k = report.resume_at[0]
    full, tail = sum(times), sum(times[k:])
    runs = 1 + int(report.determinism.get("checked", False)) + len(report.seed_losses)
    return runs * full + len(report.runs) * tail + (k and own_checkpoint) * sum(times[:k])


def _builds(report: Any, own_checkpoint: bool) -> int:
    """The builds a sweep must do: one per run from step 0 and per restart
    (a program with its own save/load also builds its full resume's first half)."""
    runs = 1 + int(report.determinism.get("checked", False)) + len(report.seed_losses)
    return runs + len(report.runs) * len(report.resume_at) + int(own_checkpoint)


def _sweep(target: Any) -> tuple[float, float, Any]:
    from resumecheck import verify

    started, used = time.perf_counter(), time.process_time()
    report = verify(target)
    return time.perf_counter() - started, time.process_time() - used, report


class _InSweep:
    """CPU time inside the program's steps during one sweep, less the hooks
    that run inside them (the check's: the gradients' digests at the
    optimizer's step, the model's forward pre-hook; the programs measured
    here register none): the steps as the sweep ran them, timed in the same
    run as the sweep, so the host's speed moves both alike. The hooks are
    timed as torch registers them."""

    def __init__(self) -> None:
        self.steps = self.hooks = 0.0

    def __enter__(self) -> _InSweep:
        import torch

        from resumecheck import program

        self._patched: list[tuple[Any, str, Callable[..., Any]]] = []
        self._patch(program.BuiltProgram, "step", lambda fn: self._timed(fn, "steps"))
        for owner, name in [(torch.nn.Module, "register_forward_pre_hook"),
                            (torch.optim.Optimizer, "register_step_pre_hook"),
                            (torch.optim.Optimizer, "register_step_post_hook")]:
            self._patch(owner, name, self._registering)
        return self

    def _patch(self, owner: Any, name: str, wrap: Callable[..., Any]) -> None:
        fn = getattr(owner, name)
        self._patched.append((owner, name, fn))
        setattr(owner, name, wrap(fn))

    def _registering(self, register: Callable[..., Any]) -> Callable[..., Any]:
        def run(owner: Any, hook: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
            return register(owner, self._timed(hook, "hooks"), *args, **kwargs)
        return run

    def _timed(self, fn: Callable[..., Any], into: str) -> Callable[..., Any]:
        def run(*args: Any, **kwargs: Any) -> Any:
            used = time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                setattr(self, into, getattr(self, into) + time.process_time() - used)
        return run

    def __exit__(self, *exc: object) -> None:
        for owner, name, fn in reversed(self._patched):
            setattr(owner, name, fn)


def _sweep_apart(target: Any) -> tuple[float, float]:
    """One sweep's CPU time, and the part of it its program's steps took."""
    with _InSweep() as inside:
        _, cpu, _ = _sweep(target)
    return cpu, inside.steps - inside.hooks


def target_c(repeat: int, target: Any, label: str, goal: float) -> str:
    _sweep(target)  # warm: torch's lazy imports, the first allocations
    sweeps, sweeps_cpu, steps, steps_cpu, floors = [], [], [], [], []
    report = None
    for _ in range(repeat):
        wall, cpu, report = _sweep(target)
        sweeps.append(wall)
        sweeps_cpu.append(cpu)
        times, cpu_times, floor = _step_times(target)
        steps.append(times)
        steps_cpu.append(cpu_times)
        floors.append(floor)
    assert report is not None
    own = any(r.checkpoint == "program" for r in report.runs)

    def needed(per_run: list[list[float]]) -> float:
        per_step = [statistics.median(s[i] for s in per_run) for i in range(len(per_run[0]))]
        return _unavoidable(report, per_step, own)

    need, need_cpu = needed(steps), needed(steps_cpu)
    apart = [_sweep_apart(target) for _ in range(repeat)]
    inside = statistics.median(cpu / own for cpu, own in apart)
    inside_fixed = statistics.median(cpu - own for cpu, own in apart)
    wall, cpu = statistics.median(sweeps), statistics.median(sweeps_cpu)
    builds = _builds(report, own)
    build = statistics.median(f[0] for f in floors)
    digests = needed([f[1:] for f in floors])  # every step the sweep runs, digested
    floor = need_cpu + builds * build + digests
    first = [statistics.median(s[0] for s in steps_cpu),
             statistics.median(statistics.median(s[1:]) for s in steps_cpu)]
    warmup = len(report.runs) * len(report.resume_at) * max(first[0] - first[1], 0.0)
    return (_line(f"c. sweep / step compute ({label})", wall / need, "<=", goal,
                  f"sweep {wall:.2f} s, unavoidable steps {need:.2f} s; CPU time "
                  f"{cpu / need_cpu:.2f}x ({cpu:.2f} s / {need_cpu:.2f} s); "
                  f"{len(report.runs)} resumed runs, {len(report.seed_losses)} noise runs")
            + f"\n   floor (CPU): {floor / need_cpu:.2f}x = steps {need_cpu:.3f} s + {builds} "
              f"builds {builds * build:.3f} s + digests of every step {digests:.3f} s; "
              f"fixed cost now {cpu - need_cpu:.3f} s, at the goal "
              f"{(goal - 1) * need_cpu:.3f} s, at the floor {floor - need_cpu:.3f} s; "
              f"restarts' first steps beyond a later step's {warmup:.3f} s"
              f"\n   within one sweep (CPU; its steps timed as it ran them, less the check's "
              f"hooks inside them): {inside:.2f}x, fixed cost {inside_fixed:.3f} s")


# -- d. the test suite ------------------------------------------------------------------


def target_d() -> str:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pytest", "-n", "2", "-q",
                           "-p", "no:cacheprovider"], cwd=ROOT, check=False,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wall = time.perf_counter() - started
    tail = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else "?"
    return _line("d. test suite -n 2 / 90 s", wall / 90, "<=", 1.0,
                 f"{wall:.0f} s: {tail}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", default="a,b,c", help="which targets (a,b,c,d)")
    parser.add_argument("--suite", action="store_true", help="also d, the test suite")
    args = parser.parse_args()
    wanted = set(args.only.split(",")) | ({"d"} if args.suite else set())
    print(f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}, median of {args.repeat}",
          flush=True)
    if "a" in wanted:
        print(target_a(args.repeat), flush=True)
    if "b" in wanted:
        print(target_b(args.repeat), flush=True)
    if "c" in wanted:
        from resumecheck.tiny import TARGET

        print(target_c(args.repeat, TARGET, "built-in program", 1.3), flush=True)
        print(target_c(args.repeat, sized.TARGET_1M,
                       f"{sized.parameters(sized.TARGET_1M) / 1e6:.2f}M parameters", 1.1),
              flush=True)
    if "d" in wanted:
        print(target_d(), flush=True)
    print(f"load afterwards {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
