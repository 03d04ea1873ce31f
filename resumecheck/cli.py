"""The ``resumecheck`` command line: a thin front end over the engine.

``main(argv) -> int`` is the whole CLI, testable without a subprocess. It is
the one place that maps library errors to messages and exit codes:

* 0: the full-state resume is equivalent under the chosen tolerance
  (``fuzz``: no failing schedule found);
* 1: it is not (``fuzz``: a failing schedule was found);
* 2: bad usage or bad input (a message says what and what to do);
* 3: ``run``/``fuzz`` refuse to judge: the baseline is not deterministic;
* 4: the environment failed, not the program (out of disk space, a file size
  limit reached, out of memory, a process killed from outside, e.g. by the
  kernel's OOM killer): nothing was judged;
* 129 / 130 / 143: interrupted by SIGHUP (the terminal closed) / SIGINT
  (Ctrl-C) / SIGTERM. Every child process is killed and every temporary file
  removed before the command exits, within about a second even while a step
  waits inside a call that Python cannot interrupt.

``--timeout SECONDS`` (run, fuzz, baseline) bounds each training step; by
default the reference's steps get 600 s each and every later run's steps
max(60 s, 20x the reference's slowest step); ``--timeout 0`` turns it off.
A step that takes longer ends its run as ``failed``.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import signal
import sys
import warnings
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn, TextIO

from resumecheck.progress_bar import terminal_progress, warnings_named
from resumecheck.settings import DEFAULT_NOISE_SEEDS, MAX_NOISE_SEEDS

__all__ = ["main"]

EXIT_EQUIVALENT = 0
EXIT_NOT_EQUIVALENT = 1
EXIT_USAGE = 2
EXIT_NONDETERMINISTIC = 3
EXIT_ENVIRONMENT = 4
EXIT_INCONCLUSIVE = 5
EXIT_SIGINT = 128 + signal.SIGINT  # 130
EXIT_SIGTERM = 128 + signal.SIGTERM  # 143
EXIT_SIGHUP = 128 + getattr(signal, "SIGHUP", 1)  # 129

_EXIT_CODES = """\
exit codes: 0 equivalent, 1 not equivalent (the full resume diverged or failed; with
              --strict, also where your own resume ends otherwise in state no
              component declares, or held it otherwise after its load, or
              restored declared state otherwise where it changed no step),
            2 bad usage or input: a target that does not load, or a program whose
              uninterrupted run fails, or hangs past --timeout (600 s a step unless
              told: give a --timeout to hear sooner),
            3 the baseline is not deterministic (--tolerance close judges it where the
              runs differ only by rounding: the message says whether they do),
              or, in-process, the run changed state the program keeps at module level
              (use --isolation process),
            4 the environment failed, not the program (disk full, a file size limit,
              out of memory, a process killed from outside, a reader of the output
              gone, as `| head` goes): nothing was judged,
            5 inconclusive: the evidence cannot decide (an elastic resume whose per-rank
              state cannot be mapped, a run that differs before its first restart;
              fuzz of a program whose save() changes state training reads); the
              report or the message says why,
            129 / 130 / 143 interrupted by SIGHUP / SIGINT / SIGTERM (children killed,
              files removed)
"""

_TIMEOUT_HELP = (
    "seconds one training step may take; a slower step ends its run as failed (in "
    "process mode its interpreter is killed). Default: 600 per reference step, then "
    "max(60, 20x the reference's slowest step); 0 or inf: no bound. Any other phase "
    "(build, restore, save, capture) may take the larger of this and 600 s"
)

_JOBS_HELP = (
    "independent runs (noise seeds, ablations) side by side, at most N at once: each in "
    "its own fresh interpreter with --isolation process, in a fork of this one "
    "in-process. Default: one per --threads cores with --isolation process, 1 in-process; "
    "the report is the same for any N, unless the program keeps state in files outside "
    "its checkpoint (its own resume's why names them). Runs of a few seconds each gain "
    "little on a busy machine: the time goes to starting them"
)

_RUN_EXAMPLES = """\
examples:
  resumecheck run
      the built-in tiny program: full resume plus one run per dropped component
  resumecheck run --drop none --isolation process
      only the full resume, restarted in a fresh interpreter
  resumecheck run --steps 20 --resume-at 7 --drop scheduler --drop rng,config
      two ablations: scheduler alone, then rng and config together
  resumecheck run mytrain.py:build --format json --output report.json
      audit your own program (a factory returning components() and train_step())
  resumecheck run --tolerance close --rtol 1e-5 --atol 1e-6
      accept differences within rtol/atol instead of demanding identical bits
  resumecheck run mytrain.py:TARGET --isolation process --timeout 120
      a step slower than 120 s ends its run as failed and its interpreter is killed

""" + _EXIT_CODES


_FUZZ_EXAMPLES = """\
examples:
  resumecheck fuzz
      the built-in program: expect "no failing schedule"
  resumecheck fuzz mytrain.py:TARGET --max-examples 200 --budget 120
      search harder; a failure prints the minimal schedule and the
      `resumecheck run ... --resume-at ...` command that reproduces it
  resumecheck fuzz mytrain.py:TARGET --max-interruptions 3 --format json
  resumecheck fuzz resumecheck.tiny_dist:DDP_ELASTIC --nproc 2 --resume-nproc 1
      elastic resume: the first half at 2 ranks, every restart at 1, each
      schedule judged within a tolerance as `run --resume-nproc 1` judges it

exit codes: 0 no failing schedule found, 1 one found, 2 bad usage or input,
            3 the baseline is not deterministic, or, in-process, the run changed state
              the program keeps at module level (use --isolation process),
            4 the environment failed (disk full, out of memory, a process killed from
              outside),
            5 nothing judged: the program's save() changes state that training reads
              (check a resume point with the `resumecheck run ... --resume-at K` it prints),
              or no schedule failed but some could not be judged (an elastic resume's
              per-rank state that could not be mapped),
            129 / 130 / 143 interrupted
"""


class _UsageError(Exception):
    pass


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a number >= 1, got {value}")
    return value


def _int_list(text: str) -> list[int]:
    bad = argparse.ArgumentTypeError(
        f"expected step numbers separated by commas (e.g. 8 or 7,13), got {text!r}"
    )
    try:  # ("3,,5", "," or "": an empty place is a mistake, not a silent default)
        return [int(part) for part in text.split(",")]
    except ValueError:
        raise bad from None


class _OneSchedule(argparse.Action):
    """``--resume-at`` once: ``K1,K2`` is one run restarted at each point, so a
    second flag could mean either that or another check (a trial's second
    flag silently replaced the first)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        before = getattr(namespace, self.dest, None)
        if before is not None:
            first, then = ",".join(map(str, before)), ",".join(map(str, values))
            raise argparse.ArgumentError(
                self, f"given twice ({first}, then {then}); it takes one schedule: "
                f"--resume-at {first},{then} restarts one run at {first} and again at {then}; "
                "to check each resume point on its own, run the command once per point")
        setattr(namespace, self.dest, values)


def _whole(text: str) -> int:
    """A whole number; its range is the settings' to judge (``Settings``)."""
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None


def _float(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None


def _seconds(text: str) -> float:
    """A ``--timeout``: ``inf`` says what 0 does, no bound."""
    value = _float(text)
    if math.isnan(value) or value < 0:  # (a trial: told of "None (automatic)", the API's)
        raise argparse.ArgumentTypeError(
            f"expected seconds > 0, or 0 or inf for no bound (leave it out for the "
            f"default), got {text!r}")
    return 0.0 if value == math.inf else value


class _Parser(argparse.ArgumentParser):
    """argparse's parser, whose errors say the command's usage in one line
    (a trial: a wrong value printed the whole option list above the error)."""

    def error(self, message: str) -> NoReturn:
        shape = "[options] [target]" if " " in self.prog else "COMMAND [options] [target]"
        self.exit(EXIT_USAGE, f"usage: {self.prog} {shape} (all options: {self.prog} --help)\n"
                  f"{self.prog}: error: {message}\n")


def _parser() -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    """The command line, and each command's own parser (for its usage in errors)."""
    parser = _Parser(
        prog="resumecheck",
        description="Prove that a PyTorch training run resumed from a checkpoint "
        "continues exactly like the run that was never interrupted.",
    )
    from resumecheck import __version__

    # (trial 171: `resumecheck --version` was a usage error)
    parser.add_argument("--version", action="version", version=f"resumecheck {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    _run_parser(sub)
    _fuzz_parser(sub)
    _baseline_parser(sub)
    _timing_parser(sub)
    return parser, dict(sub.choices)


def _run_parser(sub: Any) -> None:
    run = sub.add_parser(
        "run",
        help="check resume equivalence of a training program",
        description="Run TARGET N steps uninterrupted (the reference), then resumed at "
        "step K with every component restored, and once more per dropped component; "
        "compare each with the reference.",
        epilog=_RUN_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _common(run)
    run.add_argument("--steps", type=_whole,
                     help="steps N, calls of train_step() (default: the target's; a "
                     "framework target's own loop stops at the steps it was given)")
    run.add_argument(
        "--resume-at", type=_int_list, metavar="K[,K...]", action=_OneSchedule,
        help="resume after step K; several for repeated restarts (default: the target's)",
    )
    run.add_argument(
        "--drop", action="append", metavar="all|none|NAME[,NAME...]",
        help="all (default): the full resume plus one run per component; none: the full "
        "resume only; NAME,NAME: one run dropping these together (repeat for more runs)",
    )
    run.add_argument("--isolation", choices=("inprocess", "process"), default="inprocess",
                     help="restart in this interpreter with fresh objects and reseeded "
                     "streams (default), or in a fresh interpreter")
    run.add_argument("--tolerance", choices=("bitwise", "close"), default=None,
                     help="bitwise (default) or close: within rtol/atol (torch.testing's "
                     "per-dtype defaults unless --rtol/--atol)")
    run.add_argument("--rtol", type=_float,
                     help="relative tolerance, given with --atol (implies --tolerance close)")
    run.add_argument("--atol", type=_float,
                     help="absolute tolerance, given with --rtol (implies --tolerance close)")
    run.add_argument("--noise-seeds", type=_whole, default=DEFAULT_NOISE_SEEDS, metavar="M",
                     help="extra reference runs with other seeds for the noise band "
                     f"(default {DEFAULT_NOISE_SEEDS}, at most {MAX_NOISE_SEEDS})")
    run.add_argument("--timeout", type=_seconds, metavar="SECONDS", help=_TIMEOUT_HELP)
    run.add_argument("--nproc", type=_positive_int, metavar="N", help=_NPROC_HELP)
    run.add_argument("--resume-nproc", type=_positive_int, metavar="M",
                     help="elastic resume: restart at M ranks from the program's own checkpoint "
                     "of --nproc N ranks; compared with the uninterrupted run at N within a "
                     "tolerance (default: torch's per dtype), no ablations")
    run.add_argument("--jobs", type=_whole, default=None, metavar="N", help=_JOBS_HELP)
    run.add_argument("--plot", metavar="FILE.png|FILE.svg",
                     help="draw the divergence figure (needs the extra resumecheck[plot])")
    run.add_argument("--no-determinism-check", dest="determinism", action="store_false",
                     help="skip the second uninterrupted run that proves the baseline is "
                     "deterministic")
    run.add_argument("--strict", action="store_true",
                     help="exit 1 also where the resume is equivalent in what is compared but "
                     "your own resume ends otherwise in state no component declares, or held "
                     "it otherwise right after its load until a later step set it again (a "
                     "`not compared` line that says your checkpoint loses it, or may), or "
                     "restored a declared component otherwise in state that changed no step "
                     "(a latent gap)")


def _fuzz_parser(sub: Any) -> None:
    fz = sub.add_parser(
        "fuzz",
        help="search interruption schedules for one that breaks the resume",
        description="Draw resume schedules with hypothesis (biased towards epoch boundaries, "
        "step 1 and step N-1, one or more restarts), run each against one shared "
        "reference, and shrink the first failure to the smallest schedule.",
        epilog=_FUZZ_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _common(fz)
    fz.add_argument("--steps", type=_whole,
                    help="steps N, calls of train_step() (default: the target's; a "
                    "framework target's own loop stops at the steps it was given)")
    fz.add_argument("--max-examples", type=_positive_int, default=100,
                    help="schedules to try at most (default 100)")
    fz.add_argument("--budget", type=_float, default=60.0, metavar="SECONDS",
                    help="stop generating after this long, stopping a run in progress "
                    "(default 60; shrinking a failure gets as long again; the reference run "
                    "before the search and the report of what it found after it are not "
                    "counted, so the command takes longer)")
    fz.add_argument("--timeout", type=_seconds, metavar="SECONDS", help=_TIMEOUT_HELP)
    fz.add_argument("--nproc", type=_positive_int, metavar="N", help=_NPROC_HELP)
    fz.add_argument("--resume-nproc", type=_positive_int, metavar="M",
                    help="elastic resume: every restart of a schedule at M ranks from the "
                    "program's own checkpoint of --nproc N ranks, judged within a tolerance; "
                    "an example that unmapped per-rank state could explain is inconclusive, "
                    "counted, not a failure")
    fz.add_argument("--jobs", type=_whole, default=None, metavar="N",
                    help="shrinking tries this many candidate schedules side by side "
                    "(default: one per --threads cores with --isolation process, else 1); "
                    "the result is the same")
    fz.add_argument("--max-interruptions", type=_positive_int, default=2, metavar="M",
                    help="restarts per schedule at most (default 2)")
    fz.add_argument("--isolation", choices=("inprocess", "process"), default="inprocess",
                    help="restart each example's runs in this interpreter with fresh objects "
                    "and reseeded streams (default), or in fresh interpreters")
    fz.add_argument("--plot", metavar="FILE.png|FILE.svg",
                    help="draw the minimal failing schedule's divergence figure (needs the "
                    "extra resumecheck[plot])")
    fz.add_argument("--strict", action="store_true",
                    help="where no schedule fails, exit 1 also where `resumecheck run "
                    "--strict` would at the default resume point (a `not compared` line that "
                    "says your checkpoint loses it, or a latent gap), said on standard error")
    fz.add_argument("--quiet", action="store_true",
                    help="no progress bar on stderr, even on a terminal")


def _baseline_parser(sub: Any) -> None:
    bl = sub.add_parser(
        "baseline",
        help="check that the program is deterministic and its gradients are right",
        description="Two uninterrupted runs compared bit for bit; then, on a tiny batch in "
        "float64 (programs with tiny_batch() and batch_loss()): a finite loss, autograd vs "
        "central finite differences, accumulated micro-batches vs one larger batch, and a "
        "loss that falls on a repeated batch.",
        epilog="examples:\n  resumecheck baseline\n  resumecheck baseline mytrain.py:TARGET "
        "--isolation process\n  resumecheck baseline resumecheck.tiny_dist:DDP --nproc 2"
        "\n\nexit codes: 0 every check passed, 1 one failed, 2 bad usage, "
        "4 the environment failed\n            (disk full, out of memory, a process killed "
        "from outside), 129 / 130 / 143 interrupted",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _common(bl)
    bl.add_argument("--steps", type=_whole, help="steps per determinism run")
    bl.add_argument("--isolation", choices=("inprocess", "process"), default="inprocess",
                    help="run the two determinism runs here or in fresh interpreters")
    bl.add_argument("--timeout", type=_seconds, metavar="SECONDS",
                    help="seconds one step of a determinism run may take (default 600; 0 or "
                    "inf: no bound); with --nproc, one launch of the ranks")
    bl.add_argument("--batch-size", type=_positive_int, default=8)
    bl.add_argument("--micro-batches", type=_positive_int, default=2)
    bl.add_argument("--nproc", type=_positive_int, metavar="N",
                    help="check distributed equivalence instead: N ranks launched through "
                    "torch.distributed.run against 1 rank (synchronized gradient on a tiny "
                    "float64 batch, ranks bit for bit alike, N-fold accumulation on 1 rank)")


def _timing_parser(sub: Any) -> None:
    tm = sub.add_parser(
        "timing",
        help="time the phases of a training step",
        description="Run the program and report per phase (data wait, host-to-device, "
        "forward, backward, gradient sync, optimizer, checkpoint, idle at barrier): calls, "
        "total, median, p95 and share of step time. Programs mark phases with "
        "resumecheck.phase(NAME); the engine times its own checkpoint.",
        epilog="examples:\n  resumecheck timing\n  resumecheck timing mytrain.py:TARGET "
        "--steps 100 --checkpoint-every 10 --format json",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _common(tm)
    tm.add_argument("--steps", type=_whole, help="measured steps (default 30; for a framework "
                    "target, at most as many as its loop runs after the warm-up)")
    tm.add_argument("--warmup", type=int, default=3, help="warm-up steps left out (default 3)")
    tm.add_argument("--checkpoint-every", type=_positive_int, default=5,
                    help="a checkpoint every K steps, timed: the program's own save() where it "
                    "has one, else the engine's capture (default 5)")
    tm.add_argument("--nproc", type=_positive_int, metavar="N",
                    help="time the program on N ranks launched through torch.distributed.run: "
                    "per phase the min and max over the ranks, gradient sync and barrier idle "
                    "rank by rank")


_NPROC_HELP = (
    "run every segment as N ranks under torch's elastic launcher (gloo on CPU, NCCL for a "
    "CUDA program); per-rank state is judged per rank: rng[rank 1] (default: one process; "
    "started under torchrun, the launch's world size)"
)


def _ranks(args: argparse.Namespace) -> int | None:
    """``--nproc``; under a user's torchrun, its world size (rank 0 runs the
    check and launches every rank of every segment itself; the other ranks
    of that launch have nothing to do and end at once: see ``_idle_rank``)."""
    from resumecheck.distributed import launched_world_size

    launched = launched_world_size()
    if launched is None:
        return getattr(args, "nproc", None)
    _, world = launched
    if args.nproc is not None and args.nproc != world:
        raise _UsageError(f"--nproc {args.nproc} under torchrun with {world} ranks: give "
                          "one or the other (or the same number)")
    return world


def _idle_rank() -> int | None:
    """Under a user's torchrun, on a rank other than 0: say so and return 0."""
    if "TORCHELASTIC_RUN_ID" not in os.environ or os.environ.get("RANK", "0") == "0":
        return None
    print(f"resumecheck: rank {os.environ['RANK']} of a torchrun launch: the check runs on "
          "rank 0, which starts every rank of every segment itself", file=sys.stderr)
    return EXIT_EQUIVALENT


def _common(cmd: argparse.ArgumentParser) -> None:
    """The arguments every command shares."""
    cmd.add_argument("target", nargs="?", default=None,
                     help="module:attr or path/to/file.py:attr naming the program factory "
                     "(default: the built-in tiny program)")
    cmd.add_argument("--seed", type=int, default=None,
                     help="set the program's seed setting (Target.seed_key) for the run; a restart "
                     "is still built from the program's defaults and gets the seed back only "
                     "through its checkpoint (default: the program's own settings, unchanged)")
    cmd.add_argument("--threads", type=_whole, default=1,
                     help="torch threads for every run (default 1; bitwise results need a "
                     "fixed count)")
    cmd.add_argument("--format", choices=("table", "json", "markdown"), default=None,
                     help="default: json for an --output FILE ending in .json, markdown for "
                     ".md, else table")
    cmd.add_argument("--output", metavar="FILE",
                     help="write the result here instead of stdout ('-': stdout); a device, "
                     "FIFO or symlink is written through, a regular file replaced atomically")
    cmd.add_argument("--step-summary", action="store_true",
                     help="also append the result as Markdown to the file $GITHUB_STEP_SUMMARY "
                     "names (a GitHub Actions job summary), when it is set")
    cmd.add_argument("--debug", action="store_true", help="show tracebacks")


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised like Ctrl-C's KeyboardInterrupt so that every cleanup runs."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _raise_for(signum: int) -> NoReturn:
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise _Terminated(signum)


_HELD: list[int] | None = None
"""The signals that arrived while ``_importing_torch`` holds them (None: not holding)."""


@contextmanager
def _importing_torch(freeze: bool = True) -> Iterator[None]:
    """While a command first imports torch (and the core with it):

    * the handled signals are held: torch's extension imports numpy and takes
      any error there for "numpy is not installed", so an interrupt raised
      inside that import was swallowed (the command went on, with a
      half-imported numpy, and ignored every later signal). A signal that
      arrives meanwhile ends the command as soon as the import is done (a
      second or two at most);
    * no garbage collection runs (``heap.collector_off``), and what the
      import made is frozen after it: none of it is garbage, and the
      collections that would walk it again cost a fifth of the import and
      more during the check. The collector is on again before the check
      starts; the program's own objects are collected as ever. Not for
      ``timing`` (``freeze=False``), which measures the program's step as
      its own script runs it, collections of torch's objects included (as
      it leaves glibc's thresholds alone, ``heap.settle``)."""
    from resumecheck.heap import collector_off

    global _HELD
    _HELD = []
    try:
        with collector_off(freeze=True) if freeze else contextlib.nullcontext():
            yield
    finally:
        held, _HELD = _HELD, None
    if held:
        _raise_for(held[0])


@contextmanager
def _interruptible() -> Iterator[list[int]]:
    """SIGINT, SIGTERM and SIGHUP (the terminal closed; left alone where it is
    ignored, as under nohup) end the command at once, from wherever the main
    thread is: a KeyboardInterrupt unwinds the check, which kills its child
    processes and removes its temporary files on the way out. Signals that
    arrive while it does so are ignored, so the cleanup finishes. A main
    thread stuck in one C call cannot take the signal: after a grace period
    the watcher ends the check the same way (``resumecheck.interrupt``).
    Yields the signal taken, once one is: Python drops an exception raised
    where it cannot propagate (a garbage-collection callback), so it is
    raised again from there; a command that still returns was interrupted."""
    if threading.current_thread() is not threading.main_thread():
        yield []
        return
    from resumecheck.interrupt import HANDLED, Redelivery, Watcher

    received: list[int] = []
    watcher = Watcher(_stuck_message)
    dropped = Redelivery(received)

    def handler(signum: int, frame: object) -> None:
        if dropped.due():  # the first raise was dropped: raise it again
            _raise_for(received[0])
        if received or not watcher.taken(signum):
            return
        received.append(signum)
        if _HELD is not None:  # torch is being imported: raised once it is
            _HELD.append(signum)
            return
        _raise_for(signum)

    previous = {s: signal.signal(s, handler) for s in HANDLED
                if s in (signal.SIGINT, signal.SIGTERM) or signal.getsignal(s) != signal.SIG_IGN}
    thread_hook, sys_hook = threading.excepthook, sys.excepthook  # (quieted once a signal is taken)
    dropped.install()
    try:
        yield received
    finally:
        dropped.uninstall(quiet=_CONSOLE)
        if _CONSOLE:  # the command's own process: signals end it at once from here on
            _late_signals_end_at_once()
        else:
            for s, h in previous.items():
                signal.signal(s, h)
            threading.excepthook, sys.excepthook = thread_hook, sys_hook
        watcher.close()


_CONSOLE = False
"""Whether this process is the ``resumecheck`` command (``entrypoint``), not a
caller of ``main()``: once the command is done, what is left (freeing the
check's memory, ending the warm servers) must not be cut short by a signal
without a word."""


def _interrupted_message(signum: int, command: str | None = None,
                         done: str | None = None,
                         examples: tuple[int, str] | None = None) -> str:
    """What an interrupt cost: ``done`` is the command's summary where it had
    finished its work and was writing the report; ``examples``, of a fuzz
    search, how many examples had ended and the last in words (trial 462: "no
    result is reported, whatever examples it had run" said nothing of them)."""
    if done is not None:
        lost = f"the {command} had finished ({done}), but its report was not written"
    elif command == "fuzz" and examples is not None:
        count, last = examples
        lost = (f"the search was stopped before it ended, after {count} example"
                f"{'' if count == 1 else 's'} (the last: {last}): no result is reported")
    else:
        lost = {"timing": "no timing was reported",
                "fuzz": "the search was stopped before it ended: no result is reported, "
                        "whatever examples it had run"}.get(command or "", "nothing was judged")
    # (trial 163: "child processes were stopped" of an in-process run that had none;
    # trial 462: the warm servers, told to end, were still there 2 s after the exit)
    return (f"interrupted by {signal.Signals(signum).name}: {lost}; its child processes, if "
            "any, were stopped (its warm servers end within seconds of the exit) and "
            "temporary files removed")


def _ended_message(signum: int) -> str:
    return (f"interrupted by {signal.Signals(signum).name} as the command ended: what it "
            "printed is complete, but the exit status says it was interrupted")


def _stuck_message(signum: int) -> str:
    from resumecheck.interrupt import GRACE

    return (f"resumecheck: error: {_interrupted_message(signum)} (the check's main thread "
            "was inside a call that Python cannot interrupt, such as os.system or a "
            f"blocking read, and had not returned {GRACE:g} s after the signal)")


def main(argv: Sequence[str] | None = None) -> int:
    parser, commands_parsers = _parser()
    try:
        args, extra = parser.parse_known_args(argv)
        if extra:  # said with the command's own usage, not the top level's
            # (trials 808, 818, 820, 824 tried --json)
            hint = " (the JSON report: --format json)" if "--json" in extra else ""
            (commands_parsers.get(args.command) or parser).error(
                f"unrecognized arguments: {' '.join(extra)}{hint}")
    except SystemExit as exc:  # argparse has printed its usage message
        return int(exc.code or 0) and EXIT_USAGE
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    args.format_given = args.format is not None
    args.format = args.format or _format_of(getattr(args, "output", None))
    commands = {"run": _run, "fuzz": _fuzz, "baseline": _baseline, "timing": _timing}
    if sys.stdout is None:  # started with it closed (`>&-`)
        from resumecheck.output import STDOUT, abandon_stdout

        if not getattr(args, "output", None) or args.output == STDOUT:
            _error(f"{args.command}: standard output is closed (the command was started "
                   "with it closed, as `>&-` does), and the report goes there: start it "
                   "with standard output open, or give --output FILE")
            return EXIT_USAGE
        abandon_stdout()  # (the report goes to its file; the word that says so, nowhere)
    _prestart(args)
    with _interruptible() as received:
        try:
            with warnings.catch_warnings():
                warnings.showwarning = _note
                code = commands[args.command](args)
            if received:  # taken where Python dropped the exception, and not raised again in time
                _error(_ended_message(received[0]))
                return 128 + received[0]
            return code
        except _UsageError as exc:
            _error_document(args, "UsageError", str(exc), EXIT_USAGE)
            _error(_said(str(exc), _stale_output(args)))
            return EXIT_USAGE
        except KeyboardInterrupt as exc:
            return _interrupted(args, exc)
        except Exception as exc:
            from resumecheck.interrupt import interrupt_behind

            behind = interrupt_behind(exc)  # (a cleanup the interrupt cut short failed in turn)
            return _failed(args, exc) if behind is None else _interrupted(args, behind)


def _interrupted(args: argparse.Namespace, exc: KeyboardInterrupt) -> int:
    signum = getattr(exc, "signum", signal.SIGINT)
    from resumecheck import forkserver

    forkserver.shutdown(wait=False)  # (before saying so: a server may still be starting)
    _error(_said(_interrupted_message(signum, args.command, getattr(args, "done", None),
                                      getattr(args, "examples_run", None)),
                 _stale_output(args, interrupted=True)))
    return 128 + signum


def _prestart(args: argparse.Namespace) -> None:
    """With process isolation, start the warm servers before this interpreter
    imports torch, so that their ``import torch`` overlaps ours. Every run of
    a check starts with hash seed 1 (the reference) or 2 (everything else)."""
    if getattr(args, "isolation", None) == "process":
        from resumecheck import forkserver

        forkserver.prestart(["1", "2"])


def _failed(args: argparse.Namespace, exc: Exception) -> int:
    """The one place that maps a library error to its message and exit code."""
    from resumecheck.errors import (
        EnvironmentFailure, ModuleStateChanged, NondeterministicBaseline, ResumecheckError,
        SaveMovesState,
    )

    if getattr(args, "debug", False):  # (trial 484: raised, it exited 1, "not equivalent")
        import traceback

        traceback.print_exception(exc, file=sys.stderr)
    code = (EXIT_NONDETERMINISTIC if isinstance(exc, (NondeterministicBaseline, ModuleStateChanged))
            else EXIT_ENVIRONMENT if isinstance(exc, EnvironmentFailure)
            # (nothing judged: neither a pass nor a failure)
            else EXIT_INCONCLUSIVE if isinstance(exc, SaveMovesState) else EXIT_USAGE)
    message = _as_option(args, exc) if isinstance(exc, ResumecheckError) else (
        f"unexpected {type(exc).__name__}: {exc}. This is a bug in resumecheck or "
        "in the program under test; rerun with --debug for the traceback")
    _error_document(args, type(exc).__name__, message, code)
    _error(_said(message, _stale_output(args)))
    return code


def _as_option(args: argparse.Namespace, exc: Exception) -> str:
    """A library error in the words of the command line: a setting out of range
    named by its option, ``--resume-at 20``, not ``resume_at=20`` (a trial)."""
    from resumecheck.errors import InvalidArgument

    name = getattr(exc, "name", None)
    if not (isinstance(exc, InvalidArgument) and isinstance(name, str) and hasattr(args, name)):
        return str(exc)
    value = exc.value
    given = ",".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)
    return f"--{name.replace('_', '-')} {given}: {exc.why}"


def _format_of(output: str | None) -> str:
    """The format an ``--output`` file's name asks for, where ``--format`` is
    not given (trial 289: `--output report.json` wrote the text table there)."""
    suffix = os.path.splitext(output or "")[1].lower()
    return {".json": "json", ".md": "markdown", ".markdown": "markdown"}.get(suffix, "table")


def _error_document(args: argparse.Namespace, kind: str, message: str, code: int) -> None:
    """With ``--format json``, the error as a JSON document where the report
    would have gone (``resumecheck.error/1``): a job that parses the output
    reads why there is no report (trial 158: exit 3 left stdout empty). To
    ``--output`` only where that file passes the output check (never over
    the program's source); where it does not, to standard output, where
    ``--format json`` was given (trial 197: `--output nodir/report.json` left
    no document anywhere), not where only the file's name asked for JSON (a
    reader of that file finds none either way, and every later trial read the
    document on its terminal as the command's output twice over). One that
    cannot be written there either is left out: the message on standard error
    and the exit status say it all the same."""
    if getattr(args, "format", None) != "json":
        return
    import json

    from resumecheck.errors import OutputError
    from resumecheck.output import STDOUT, check_output, write_report, write_stdout

    text = json.dumps({"schema": "resumecheck.error/1", "command": args.command,
                       "target": getattr(args, "target", None), "exit_code": code,
                       "error": {"kind": kind, "message": message}}, indent=2) + "\n"
    try:
        if not args.output or args.output == STDOUT:
            write_stdout(text)
            return
        if not getattr(args, "output_checked", False):
            try:
                check_output(args.output, getattr(args, "target", None))
            except OutputError:
                if getattr(args, "format_given", True):
                    write_stdout(text)
                return
        write_report(args.output, text)
        args.written = args.error_written = True
    except (OutputError, OSError):
        pass


_show_warning = warnings.showwarning


def _note(message: Warning | str, category: type[Warning], filename: str, lineno: int,
          file: TextIO | None = None, line: str | None = None) -> None:
    """Our own warnings (how much disk a check will use) read as one-line notes."""
    if category.__module__.startswith("resumecheck"):
        print(f"resumecheck: note: {message}", file=sys.stderr, flush=True)
    else:
        _show_warning(message, category, filename, lineno, file, line)


def _stale_output(args: argparse.Namespace, interrupted: bool = False) -> str:
    """When the command ends without writing ``--output`` and that file exists
    from an earlier run: say so (a CI job that uploads it would show that run).
    Said of a file the output check passed, or, for an interrupt that came
    before that check (while torch was imported: a trial's early Ctrl-C), of
    any file that is not Python source."""
    path = getattr(args, "output", None)
    if getattr(args, "error_written", False):  # (trial 421: a report from before, replaced)
        return (f" The error is written to {path} as JSON (resumecheck.error/1), in place of "
                "a report.")
    checked = getattr(args, "output_checked", False) or (
        interrupted and not (path or "").endswith(".py"))
    if not checked or getattr(args, "written", False) or not os.path.isfile(path or ""):
        return ""
    return (f" The report file {path} was not written by this command: what it holds is "
            "from before.")


def _said(message: str, more: str) -> str:
    """``message`` and a further sentence, with the full stop between them."""
    if not more:
        return message
    message = message.rstrip()
    return message + ("" if message.endswith(".") else ".") + more


def _error(message: str) -> None:
    try:
        print(f"resumecheck: error: {message}", file=sys.stderr)
    except (OSError, ValueError):  # no terminal any more (SIGHUP): the exit code says it
        pass


def _drop_spec(values: list[str] | None) -> str | list[list[str]]:
    if not values:
        return "all"
    if len(values) == 1 and values[0] in ("all", "none"):
        return values[0]
    if any(v in ("all", "none") for v in values):
        raise _UsageError("--drop all and --drop none cannot be combined with other --drop values")
    groups = [[n.strip() for n in v.split(",")] for v in values]
    for value, names in zip(values, groups):
        if not all(names):  # ('' or 'rng,,scheduler': not a silent "drop nothing")
            raise _UsageError(f"--drop {value!r}: an empty component name; give component "
                              "names separated by commas (e.g. --drop rng,scheduler), all or none")
        if {"all", "none"} & set(names):
            raise _UsageError(f"--drop {value!r}: all and none cannot be combined with "
                              "component names")
    return groups


def _settings(args: argparse.Namespace, **fields: Any) -> Any:
    """The command's one ``Settings``, from its arguments (validated there: a bad
    value is an ``InvalidArgument``, exit 2)."""
    from resumecheck.settings import Settings

    if fields.get("nproc") and args.isolation == "process":
        # (trial 218: accepted and dropped without a word, from the reproduce command too)
        print(f"resumecheck: note: --isolation process adds nothing to --nproc "
              f"{fields['nproc']}: every run and every restart is already a launch of its "
              # (trial 436: the ranks are forked from a warm server, made as new ones are)
              "ranks, each starting as a new interpreter does", file=sys.stderr, flush=True)
    return Settings(steps=args.steps, seed=args.seed, threads=args.threads,
                    isolation=args.isolation, timeout=args.timeout, **fields)


def _tolerance(args: argparse.Namespace) -> Any:
    from resumecheck.compare import Tolerance

    if (args.rtol is None) != (args.atol is None):
        raise _UsageError("give --rtol and --atol together (or neither, for torch's defaults)")
    if args.rtol is not None and args.tolerance == "bitwise":
        raise _UsageError("--tolerance bitwise demands identical bits, and --rtol/--atol "
                          "accept differences within them: give --tolerance close (or leave "
                          "it out) with --rtol/--atol, or neither for bit for bit")
    if args.rtol is not None:
        try:
            return Tolerance.close(args.rtol, args.atol)
        except ValueError as exc:
            raise _UsageError(str(exc)) from None
    return Tolerance.close() if args.tolerance == "close" else Tolerance.bitwise()


def _run(args: argparse.Namespace) -> int:
    idle = _idle_rank()  # before any import of torch: such a rank has nothing to do
    if idle is not None:
        return idle
    with _importing_torch():
        from resumecheck.engine import run_check
        from resumecheck.report import outcome_text

    settings = _settings(
        args, resume_at=args.resume_at, drop=_drop_spec(args.drop), tolerance=_tolerance(args),
        noise_seeds=args.noise_seeds, check_determinism=args.determinism, jobs=args.jobs,
        nproc=_ranks(args), resume_nproc=args.resume_nproc,
    )
    _check_outputs(args)
    _check_plot(args.plot, args.target, args.output)
    with _program_output_aside(), terminal_progress() as bar, warnings_named(bar) as progress:
        report = run_check(args.target, settings, progress=progress)
    _plot_and_summary(args, report)
    # (as the report's own headline words it: a trial read two spellings of one verdict)
    # (trial 159: "EQUIVALENT; report written to ..." of a resume whose report read
    # "EQUIVALENT in what is compared; not compared, and your own resume ends otherwise")
    _emit(args, report.render(args.format),
          f"full resume: {outcome_text(report).removesuffix(' (see below)')}")
    if report.outcome == "INCONCLUSIVE":
        return EXIT_INCONCLUSIVE
    return EXIT_EQUIVALENT if report.equivalent and not _strict_fails(args, report) \
        else EXIT_NOT_EQUIVALENT


def _strict_fails(args: argparse.Namespace, report: Any) -> bool:
    """``--strict`` of an equivalent report whose own resume ends otherwise in
    state no component declares, or held it otherwise after its load (a later
    step setting it again), or whose full resume has a latent gap: said on
    standard error (trials 180, 183, 186:
    a checkpoint that loses a callback's state, or an EMA's count, exited 0, and
    a pipeline reads the exit code)."""
    from resumecheck.report import latent_words

    if not args.strict:
        return False
    full = report.full_resume  # (trial 381: the one failure with no command to rerun)
    again_with = f"; reproduce: {full.reproduce} --strict" if full and full.reproduce else ""
    return _strict_said(report.undeclared, latent_words(report), again_with)


def _strict_said(undeclared: list[str], gaps: str, again_with: str) -> bool:
    """Say on standard error what fails ``--strict`` (the `not compared` lines that
    say the own resume ends otherwise, or held it otherwise after its load; the
    latent gaps, in words), each with the command that shows it again; whether any does."""
    from resumecheck.phrases import lost_uncompared, paths_said, set_again_uncompared

    lost, again = lost_uncompared(undeclared), set_again_uncompared(undeclared)
    if gaps:  # (trial 473: a scaler restored otherwise passed --strict, exit 0)
        print(f"resumecheck: --strict: {gaps}: exit 1 (see the diagnosis; another resume "
              f"point may show it change the run){again_with}", file=sys.stderr)
    if lost or again:
        said = [f"ends otherwise with {paths_said(lost, quote='')}"] if lost else []
        said += [f"held {paths_said(again, quote='')} otherwise after its load (a later step "
                 "set it again)"] if again else []
        # (trial 668: "which no component declares" of a field its component's state left out)
        print(f"resumecheck: --strict: your own resume {', and '.join(said)}, which no "
              f"declared component's state holds: exit 1 (see `not compared` in the report)"
              f"{again_with}", file=sys.stderr)
    return bool(lost or again or gaps)


def _strict_fuzz(args: argparse.Namespace, result: Any) -> int | None:
    """``fuzz --strict`` where no schedule failed (trials 646, 661, 668: an early
    stopper's lost counters, named in `not compared` lines alone, exited 0, and
    fuzz had no --strict): what fails ``run --strict`` at the default resume
    point exits 1 here too; where that was not looked at (the time budget ran
    out first), nothing can pass it: inconclusive. None: ``--strict`` passes."""
    if not args.strict:
        return None
    if result.undeclared is None:
        print("resumecheck: --strict: what your program keeps outside its declared "
              "components was not looked at (the time budget ran out first, or an elastic "
              "resume, which is not looked at), so --strict cannot pass it: exit 5; give a "
              "larger --budget, or run `resumecheck run --strict`", file=sys.stderr)
        return EXIT_INCONCLUSIVE
    gaps = ", ".join(result.latent_gaps)
    gaps = f"latent gap at the default resume point: {gaps}" if gaps else ""
    again_with = f"; reproduce: {result.default_run} --strict" if result.default_run else ""
    return EXIT_NOT_EQUIVALENT if _strict_said(result.undeclared, gaps, again_with) else None


def _check_outputs(args: argparse.Namespace) -> None:
    """Before any work: refuse an --output the report could not be written to,
    or one that would overwrite the target's own source; and a --step-summary
    whose $GITHUB_STEP_SUMMARY cannot take it."""
    if args.output is not None:
        from resumecheck.output import check_output

        check_output(args.output, args.target)
        args.output_checked = True  # (a file there now is from before, if it is not written)
    if args.step_summary:
        from resumecheck.ci import step_summary_problem

        problem = step_summary_problem()
        if problem:
            raise _UsageError(f"--step-summary: {problem}")


def _fuzz(args: argparse.Namespace) -> int:
    idle = _idle_rank()  # before any import of torch, as for run
    if idle is not None:
        return idle
    with _importing_torch():
        from resumecheck.fuzz import run_fuzz

    settings = _settings(args, jobs=args.jobs, drop="none", noise_seeds=0, nproc=_ranks(args),
                         resume_nproc=args.resume_nproc)
    _check_outputs(args)
    _check_plot(args.plot, args.target, args.output)
    if args.budget <= 0:
        raise _UsageError(f"--budget must be a number of seconds > 0, got {args.budget}")

    # (trial 590: a warning of the program came unnamed under fuzz, as run names it)
    with _program_output_aside(), terminal_progress(enabled=not args.quiet) as bar, \
            warnings_named(bar) as progress:
        def watched(event: Any) -> None:  # (what an interrupt then says was run)
            ended = getattr(args, "examples_run", (0, ""))[0]
            if event.unit == "examples" and event.done and int(event.done) != ended:
                args.examples_run = (int(event.done), event.run)  # (not one begun since)
            progress(event)

        result = run_fuzz(
            args.target, settings, max_examples=args.max_examples, budget=args.budget,
            max_interruptions=args.max_interruptions, progress=watched,
        )
    _plot_and_summary(args, result)
    _emit(args, result.render(args.format), result.summary())
    if result.found:
        return EXIT_NOT_EQUIVALENT
    # (a trial: every elastic example inconclusive, and the command exited 0: a green
    # build on a real bug)
    if result.inconclusive:
        return EXIT_INCONCLUSIVE
    strict = _strict_fuzz(args, result)
    return EXIT_EQUIVALENT if strict is None else strict


def _check_plot(plot: str | None, target: str | None, output: str | None = None) -> None:
    """Refuse a --plot that cannot be written before any run starts, or that is
    the --output file too (one would replace the other)."""
    if not plot:
        return
    if Path(plot).suffix.lower() not in (".png", ".svg"):
        raise _UsageError(f"--plot {plot}: the file name must end in .png or .svg")
    if output and output != "-" and os.path.realpath(output) == os.path.realpath(plot):
        raise _UsageError(f"--plot {plot} and --output {output} name the same file: the "
                          "report would replace the plot; give each its own file")
    from resumecheck.output import check_output

    check_output(plot, target, what="the plot")
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        from resumecheck.errors import MissingExtra

        raise _UsageError(str(MissingExtra("--plot", "matplotlib", "plot"))) from None


def _plot_and_summary(args: argparse.Namespace, result: Any) -> None:
    """--plot and --step-summary, once the result is known."""
    plot = getattr(args, "plot", None)
    if plot and getattr(result, "found", True) is False:  # fuzz found nothing
        print(f"resumecheck: no failing schedule: nothing to plot, {plot} not written",
              file=sys.stderr)
    elif plot:
        from resumecheck.plot import save_plot

        save_plot(result, plot)
        print(f"resumecheck: divergence plot written to {plot}", file=sys.stderr)
    if args.step_summary:
        from resumecheck.ci import append_step_summary

        problem = append_step_summary(result.render("markdown"))
        if problem:
            print(f"resumecheck: {problem}", file=sys.stderr)


@contextmanager
def _program_output_aside() -> Iterator[None]:
    """While a command runs the program in this interpreter, what the program
    prints (``print()``, or a library writing to file descriptor 1) goes to
    standard error: standard output carries the report alone, so that
    ``--format json`` on stdout stays JSON. Restored before the report is written."""
    report = sys.stdout
    report.flush()
    try:
        fd, aside = report.fileno(), sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):  # (not files: Python-level only)
        fd = aside = -1
    saved = os.dup(fd) if fd >= 0 else -1
    if saved >= 0:
        os.dup2(aside, fd)
    sys.stdout = sys.stderr
    try:
        yield
    finally:
        sys.stdout = report
        if saved >= 0:
            sys.stderr.flush()
            os.dup2(saved, fd)
            os.close(saved)


def _emit(args: argparse.Namespace, text: str, summary: str) -> None:
    """The one report writer of every command: stdout, or --output FILE
    (``-`` is stdout; devices, FIFOs and symlink targets are written through,
    never replaced; a regular file is replaced atomically). Where the report
    cannot be written, the verdict is still said, on standard error, with why;
    a FIFO that no one reads yet is waited for, with a word."""
    from resumecheck.errors import OutputError
    from resumecheck.output import STDOUT, write_report, write_stdout

    args.done = summary  # (an interrupt from here on: the check itself has finished)
    text = text if text.endswith("\n") else text + "\n"  # (a text file ends with one)
    if not args.output or args.output == STDOUT:
        try:
            write_stdout(text)
        except OutputError:
            _aside(f"{args.command}: {summary}; the report could not be written (below)")
            raise
        return

    def waiting() -> None:
        _aside(f"{args.command}: {summary}; waiting for a reader of the FIFO {args.output} "
               "to write the report to it (Ctrl-C gives up)")

    try:
        write_report(args.output, text, on_wait=waiting)
    except OutputError:  # the check is done: its report is not lost with the file
        _aside(f"{args.command}: {summary}; the report goes to standard output instead: it "
               f"could not be written to {args.output} (below)")
        try:
            write_stdout(text)
        except OutputError as also:  # (both gone: said, and the first failure is the error)
            _aside(f"{args.command}: nor could it be written to standard output: {also}")
        raise
    args.written = True
    try:
        write_stdout(f"resumecheck {args.command}: {summary}; report written to {args.output}\n")
    except OutputError:  # (`| head -1` gone: the report is in its file, the exit code says it)
        pass


def _aside(message: str) -> None:
    """A word on standard error that is not an error (the verdict, where its
    report went)."""
    try:
        print(f"resumecheck {message}", file=sys.stderr, flush=True)
    except (OSError, ValueError):  # (no terminal any more: the exit code says it)
        pass


def _baseline(args: argparse.Namespace) -> int:
    with _importing_torch():
        from resumecheck.baseline import check_baseline

    _check_outputs(args)
    with _program_output_aside(), terminal_progress() as progress:
        report = check_baseline(args.target, steps=args.steps, seed=args.seed,
                                threads=args.threads, isolation=args.isolation,
                                batch_size=args.batch_size, micro_batches=args.micro_batches,
                                timeout=args.timeout,
                                progress=progress, nproc=args.nproc)
    _emit(args, report.render(args.format), report.headline)
    _plot_and_summary(args, report)
    return EXIT_EQUIVALENT if report.passed else EXIT_NOT_EQUIVALENT


def _timing(args: argparse.Namespace) -> int:
    with _importing_torch(freeze=False):
        from resumecheck.timing import measure

    _check_outputs(args)
    with _program_output_aside():
        report = measure(args.target, steps=args.steps, warmup=args.warmup,
                         checkpoint_every=args.checkpoint_every, seed=args.seed,
                         threads=args.threads, nproc=args.nproc)
    _emit(args, report.render(args.format), f"{report.steps} steps timed")
    _plot_and_summary(args, report)
    return EXIT_EQUIVALENT


def _late_signals_end_at_once() -> None:
    """The command is done; its warm servers end as the interpreter exits. A
    signal meanwhile (Python's own handler would print a KeyboardInterrupt
    traceback from there) stops them and exits at once, saying that what was
    printed is complete."""
    from resumecheck.interrupt import HANDLED, quiet_other_threads, stop_descendants

    def late(signum: int, frame: object) -> None:
        quiet_other_threads()
        stop_descendants()
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
            _error(_ended_message(signum))
        os._exit(128 + signum)

    if threading.current_thread() is threading.main_thread():
        for s in HANDLED:
            if s in (signal.SIGINT, signal.SIGTERM) or signal.getsignal(s) != signal.SIG_IGN:
                signal.signal(s, late)


def entrypoint() -> None:
    global _CONSOLE
    _CONSOLE = True
    code = main()
    if code in (EXIT_SIGINT, EXIT_SIGTERM, EXIT_SIGHUP):
        # Interrupted: the check has already stopped its children and removed
        # its files. Leave without the seconds an interpreter holding torch
        # spends tearing down, so the signal takes effect at once.
        from resumecheck import forkserver
        from resumecheck.interrupt import stop_descendants

        forkserver.shutdown(wait=False)
        stop_descendants()  # (a server still starting, a launcher's: none outlives the command)
        _flush()
        os._exit(code)
    if code != EXIT_EQUIVALENT and "TORCHELASTIC_RUN_ID" in os.environ:
        # torchrun turns rank 0's exit status into a ChildFailedError with a
        # traceback of its own, printed after everything above
        print(f"resumecheck: exit status {code}, which torchrun passes on: the "
              "ChildFailedError and traceback it prints next are the launcher reporting "
              "this status, not another failure; the report above is the result",
              file=sys.stderr, flush=True)
    _end_quietly()
    sys.exit(code)


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):  # the terminal is gone (SIGHUP); closed
            pass


def _end_quietly() -> None:
    """The command is done and has said everything. End its warm servers now,
    while a signal still ends it with a word; then ignore the handled signals
    through the interpreter's own teardown, which puts the default handlers
    back for Python's (a signal there killed the command without a word, exit
    143, after a complete report): the exit status stays the command's."""
    forkserver = sys.modules.get("resumecheck.forkserver")
    if forkserver is not None:
        forkserver.shutdown()
    _flush()
    if threading.current_thread() is threading.main_thread():
        from resumecheck.interrupt import HANDLED

        for s in HANDLED:  # (ignored, not handled in Python: the teardown keeps SIG_IGN)
            signal.signal(s, signal.SIG_IGN)
