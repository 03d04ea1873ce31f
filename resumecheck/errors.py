"""One exception hierarchy for resumecheck.

Every exception carries the data that explains it as attributes and builds
its message from them, so a caller (the CLI, the pytest plugin) can show the
message and a program can inspect the data. They pickle: xdist workers and
process-isolated restarts send them across processes.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from resumecheck.phrases import CHANGED_NO_STEP, HASH_ORDER, amount, global_streams, paths_said

if TYPE_CHECKING:
    from resumecheck.report import Report

__all__ = [
    "BudgetExhausted",
    "CheckpointError",
    "ComponentStateFailed",
    "ComponentsNotExercised",
    "DiskSpaceShortage",
    "DiskUseWarning",
    "ScratchElsewhereWarning",
    "EnvironmentFailure",
    "InvalidArgument",
    "DrawnAtImportWarning",
    "LatentGapWarning",
    "LostStateWarning",
    "NotStateUnmatchedWarning",
    "MissingFramework",
    "MissingExtra",
    "ModuleStateChanged",
    "NondeterministicBaseline",
    "OutputError",
    "ProgramExited",
    "SaveMovesState",
    "ReferenceFailed",
    "ReportSchemaError",
    "ResumeNotEquivalent",
    "ResumecheckError",
    "StepError",
    "TargetError",
    "TracingFailed",
    "UnboundedStepsWarning",
    "UnknownComponent",
]


class ResumecheckError(Exception):
    """Base class of every error resumecheck raises on purpose."""

    def __reduce__(self):  # keep pickling working for subclasses with kw-only data
        return (_rebuild, (type(self), self.__dict__, str(self)))


def _rebuild(cls, state, message):
    err = cls.__new__(cls)
    Exception.__init__(err, message)
    err.__dict__.update(state)
    return err


class InvalidArgument(ResumecheckError, ValueError):
    """A library argument is out of range or of the wrong kind (``name=value``)."""

    def __init__(self, name: str, value: object, why: str) -> None:
        self.name = name
        self.value = value
        self.why = why
        super().__init__(f"{name}={value!r}: {why}")


class UnknownComponent(InvalidArgument):
    """A component name that the program does not declare."""

    def __init__(self, component: str, known: Iterable[str]) -> None:
        self.component = component
        self.known = tuple(known)
        # (trial 168: `--drop schedular` listed the names, none singled out)
        close = difflib.get_close_matches(component, self.known, n=1)
        super().__init__(
            "drop",
            component,
            f"unknown component {component!r}"
            + (f" (did you mean {close[0]!r}?)" if close else "")
            + f"; this program declares: {', '.join(self.known) or '(none)'}",
        )


class TargetError(ResumecheckError):
    """The training program to check could not be loaded or built."""

    def __init__(self, target: str, problem: str, hint: str) -> None:
        self.target = target
        self.problem = problem
        self.hint = hint
        super().__init__(f"target {target!r}: {problem}. {hint}")


class MissingFramework(ResumecheckError, ImportError):
    """A target needs a training framework that is not installed."""

    # importable module -> the resumecheck extra that installs it
    EXTRAS = {
        "accelerate": "accelerate",
        "lightning": "lightning",
        "pytorch_lightning": "lightning",
        "transformers": "transformers",
    }

    def __init__(self, module: str, needed_by: str = "this target") -> None:
        self.module = module
        self.extra = self.EXTRAS.get(module, module)
        self.needed_by = needed_by
        self.problem = f"{needed_by} needs the {module} package, which is not installed"
        self.hint = f"Install it with resumecheck's extra: pip install 'resumecheck[{self.extra}]'"
        super().__init__(f"{self.problem}. {self.hint}")


class StepError(ResumecheckError):
    """A training step misbehaved (raised, or returned an unusable loss)."""

    def __init__(self, step: int, problem: str) -> None:
        self.step = step
        self.problem = problem
        super().__init__(f"step {step}: {problem}")


class TracingFailed(ResumecheckError):
    """resumecheck's own tracing, which runs inside the program's step (an
    optimizer's step hook, the model's forward hook), raised: a fault of
    resumecheck, not of the program (a trial: a sparse gradient's digest
    raised inside the hook, and the check told the user to fix the program)."""

    def __init__(self, hook: str, error: str, where: str,
                 inside: str = "inside the program's step") -> None:
        self.hook = hook
        """Which of the check's hooks raised."""
        self.error = error
        """What it raised, ``RuntimeError: ...``."""
        self.where = where
        """The innermost line of resumecheck's own code it raised at."""
        super().__init__(
            f"resumecheck's own tracing ({hook}) raised {error} (at {where}) {inside}: a fault "
            "of resumecheck, not of your program's code. Report it "
            "to resumecheck's maintainers with this message and what that step trains (the "
            "layers, optimizers and tensor kinds)")


class ProgramExited(ResumecheckError):
    """The program asked its interpreter to end (``sys.exit``, ``os._exit``)
    inside a phase the check ran: a failed run, not the end of the check."""

    def __init__(self, call: str, code: object, where: str | None = None) -> None:
        self.call = call
        self.code = code
        self.where = where
        """The program's own line that called it (trial 435: a raise said where, an exit
        did not), where its traceback shows one."""
        at = f" (at {where})" if where else ""
        super().__init__(f"the program called {call}({code!r}){at}, which ends a real run "
                         "there: this run failed")


class CheckpointError(ResumecheckError):
    """Saving or loading a checkpoint failed."""

    def __init__(self, action: str, path: str, problem: str, by_program: bool = False) -> None:
        self.action = action
        self.path = path
        self.problem = problem
        self.by_program = by_program
        """The program's own save() or load() failed (it was given ``path``, but may
        write or read elsewhere)."""
        super().__init__(f"checkpoint {action} failed ({path}): {problem}")


class ComponentStateFailed(ResumecheckError):
    """A declared component's ``state_dict()`` raised where the check asked it
    for its state (a capture, after a step): not the program's training."""

    def __init__(self, component: str, kind: str, raised: str) -> None:
        self.component = component
        self.kind = kind
        """The component's type, by name."""
        self.raised = raised
        """What it raised, in words, with the program's line where there is one."""
        super().__init__(
            f"the declared component `{component}` ({kind}): its state_dict() raised "
            f"{raised}, where the check asked it for its state. The check asks every declared "
            "component for it after the steps it captures (each resume point and the end; "
            "fuzz, every step), as a checkpoint would, on every rank: make its state_dict() "
            "answer there, or declare a component of your own whose state_dict() gathers "
            "what it needs first")


class SaveMovesState(ResumecheckError):
    """Fuzzing a program whose own save() changes state that training reads
    (draws from a stream, leaves a module in eval mode): a run that checkpoints
    continues from what its save() left, so each schedule would need a
    reference that saves where it resumes, and fuzzing compares every
    schedule with one uninterrupted run. ``moved`` names what the save changed
    at ``step``; ``reproduce`` checks one resume point that way (None: an
    in-memory target)."""

    def __init__(self, target: str, step: int, moved: list[str], reproduce: str | None) -> None:
        self.target = target
        self.step = step
        self.moved = list(moved)
        self.reproduce = reproduce
        todo = (f"Check resume points one at a time, each with a reference that saves where "
                f"it resumes: {reproduce}" if reproduce else
                "Check resume points one at a time with verify(), each with a reference that "
                "saves where it resumes")
        super().__init__(
            f"{target}: fuzzing cannot judge this program: its save() changes state that "
            f"training reads ({', '.join(moved)}, at step {step}). A run that checkpoints "
            "goes on from what its save() left, so every schedule would need a reference "
            "that saves where that schedule resumes, and fuzzing compares all of them with "
            f"one uninterrupted run. Nothing was judged. {todo} (another point K: "
            "--resume-at K)."
        )


class ModuleStateChanged(ResumecheckError):
    """In-process, state the program keeps at module level (a cache a module
    fills, a counter, a global it rebinds) has changed in this interpreter (in
    the reference run, or before it): a restart in this interpreter would keep
    it, where a real restart imports the program afresh, so an in-process
    check cannot judge the resume.

    ``changed`` names each piece (``data.epoch_order (a cache: 0 -> 2 entries)``);
    ``reproduce`` is the command that checks it in fresh interpreters (None:
    an in-memory target, which no command can name).
    """

    def __init__(self, target: str, changed: list[str], reproduce: str | None) -> None:
        self.target = target
        self.changed = list(changed)
        self.reproduce = reproduce
        shown = "; ".join(changed[:4]) + (f"; and {len(changed) - 4} more"
                                          if len(changed) > 4 else "")
        todo = (f"Check it with --isolation process, where every run and every restart is "
                f"a new interpreter: {reproduce}" if reproduce else
                "Give the target as module:attr or file.py:attr and check it with "
                "isolation='process', where every run and every restart is a new interpreter")
        super().__init__(
            f"{target}: state the program keeps at module level has changed in this "
            f"interpreter (in the uninterrupted run, or earlier: an earlier check or the "
            f"caller's own use of the program): {shown}. A real restart imports the program "
            "afresh and starts without it; a restart in this interpreter would keep it, so "
            "an in-process check cannot judge this resume (a checkpoint that loses state "
            f"could pass). {todo}."
        )


class NondeterministicBaseline(ResumecheckError):
    """Two uninterrupted runs differ: resume equivalence cannot be judged bitwise."""

    CAUSES = (
        "an unseeded random stream, or a seed taken from the time, the process id or "
        "os.urandom",
        "a different torch thread count between runs (sums change with it)",
        "a nondeterministic kernel (CUDA scatter/index_add, cuDNN autotuning: "
        "torch.use_deterministic_algorithms(True))",
        f"{HASH_ORDER} (depends on PYTHONHASHSEED)",
        "time-based values (a schedule or a cadence read from the clock)",
    )

    def __init__(self, target: str, step: int, quantity: str, reproduce: str,
                 cause: str | None = None, *, tolerance_may_help: bool = True,
                 in_process: bool = False, nproc: int | None = None) -> None:
        self.target = target
        self.step = step
        self.quantity = quantity
        self.reproduce = reproduce
        self.cause = cause
        """What differs first between the two runs, in words (None: not found)."""
        self.tolerance_may_help = tolerance_may_help
        """False: the runs differ in data, or by far more than rounding, so no
        tolerance would judge the resume."""
        self.in_process = in_process
        why = (f"What differs first: {cause}." if cause else
               f"Likely causes to check: {'; '.join(self.CAUSES)}.")
        todo = ("Fix the program, or judge within tolerance with --tolerance close."
                if tolerance_may_help else
                "Fix the program (the runs differ by more than rounding, so --tolerance "
                "close would not judge it either).")
        if in_process:
            # Both runs ran in this interpreter: an object they share (made at import, a
            # callback instance in the target's settings, a module-level counter) can make
            # the second differ though two real launches agree.
            super().__init__(
                f"{target}: two uninterrupted runs in this one interpreter differ from step "
                f"{step} in {quantity}, so a resume cannot be judged bit for bit here. Either "
                "the program is not deterministic, or one run leaves state for the next in "
                "an object both use (made when its module was imported: a callback instance "
                "in the target's settings, a module-level counter or cache). Run with "
                "--isolation process, where every run is a new interpreter, to tell them "
                f"apart (and judge it, if it is the latter). {why} {todo} Reproduce: {reproduce}"
            )
            return
        # (trial 143: at many ranks it said "two runs" of what were two launches)
        runs = f"launches of {nproc} ranks" if nproc else "runs"
        super().__init__(
            f"{target} is not deterministic: two uninterrupted {runs} differ from step {step} "
            f"in {quantity}, so a resume cannot be judged bit for bit. {why} {todo} "
            f"Reproduce: {reproduce}"
        )


class EnvironmentFailure(ResumecheckError):
    """The machine failed the check, not the program: no disk space, a file size
    limit, no memory, or a process killed from outside. Never a verdict on the program.

    ``resource`` is ``"disk"``, ``"file size"``, ``"memory"``, ``"signal"`` or ``"output"``
    (the reader of the check's standard output or error closed its pipe); ``path`` is where
    it happened (a file being written, when known); ``detail`` what was seen;
    ``advice`` what to do.
    """

    def __init__(self, resource: str, detail: str, advice: str, path: str | None = None,
                 lead: str | None = None) -> None:
        self.resource = resource
        self.detail = detail
        self.advice = advice
        self.path = path
        what = {"disk": "out of disk space", "memory": "out of memory",
                "file size": "a file reached the file size limit",
                "signal": "a process was killed",
                "output": "what read the check's output went away"}.get(resource, resource)
        where = f" writing {path}" if path else ""
        # (``lead``: where the evidence does not say it was the environment alone)
        super().__init__(
            f"{lead or 'the environment failed, not the program'}: {what}{where} ({detail}). "
            f"{advice} Nothing was judged: "
            + ("no verdict on the program's resume." if lead else
               "this says nothing about the program's resume.")
        )
        self.lead = lead


class BudgetExhausted(ResumecheckError):
    """A time budget (``fuzz(budget=...)``) ran out while a run was in progress."""

    def __init__(self, budget: float | None) -> None:
        self.budget = budget
        of = f" of {budget:g} s" if budget is not None else ""
        super().__init__(f"the time budget{of} ran out during a run")


class ReportSchemaError(ResumecheckError):
    """A JSON document does not match the published schema its ``schema`` field names."""

    def __init__(self, schema: str, path: str, reason: str, more: int = 0) -> None:
        self.schema = schema
        self.path = path
        self.reason = reason
        self.more = more
        others = f" (and {more} more problem(s))" if more else ""
        super().__init__(
            f"the document does not match the published schema {schema} at {path}: "
            f"{reason}{others}. A field added to a report needs the schema in "
            "resumecheck/schemas/ (and docs/REPORT.md) to describe it too"
        )


class MissingExtra(ResumecheckError):
    """A feature needs an optional package that is not installed."""

    def __init__(self, feature: str, package: str, extra: str) -> None:
        self.feature = feature
        self.package = package
        self.extra = extra
        super().__init__(
            f"{feature} needs {package}, which is not installed. Install the extra: "
            f"pip install 'resumecheck[{extra}]' (or pip install {package})"
        )


class OutputError(ResumecheckError):
    """A report cannot be written where the caller asked (``--output``)."""

    def __init__(self, path: str, problem: str, hint: str = "", what: str = "the report") -> None:
        self.path = path
        self.problem = problem
        self.hint = hint
        self.what = what
        super().__init__(
            f"cannot write {what} to {path or repr(path)}: {problem}."
            + (f" {hint}" if hint else "")
        )


class DiskSpaceShortage(EnvironmentFailure):
    """The scratch directory cannot hold what the check is about to write: an
    environment failure found before it happens."""

    def __init__(self, path: str, needed: int, free: int, written: int = 0) -> None:
        self.resource = "disk"
        self.path = path
        self.needed = needed
        self.free = free
        self.written = written
        """Of ``needed``, what the check had written there already (trial 435 read
        the shortfall as ``needed - free``, where ``needed - written`` is to come)."""
        ahead = (f" ({amount(written)} of it written already, {amount(needed - written)} "
                 "still to write)" if written else "")
        self.detail = f"needs about {amount(needed)}{ahead}, {amount(free)} free"
        self.advice = "Free space there, or point TMPDIR at a disk with more room."
        ResumecheckError.__init__(
            self,
            f"not enough disk space for this check: it needs about {amount(needed)} under "
            f"{path}{ahead} and {amount(free)} is free. Free space there, or point TMPDIR at a "
            "disk with more room, then run again. Nothing was judged: this says nothing about the "
            "program's resume"
        )


class _MadeWarning(UserWarning):
    """A warning whose words are made from its data. Its ``args`` are that data,
    so that it is made again whole from them: pytest-xdist carries a worker's
    warning to the controller by its class and ``args``, and one it cannot make
    again from them it shows as a bare Warning whose words repeat its class's
    name (trial 160: `LostStateWarning: resumecheck.errors.LostStateWarning: ...`)."""

    _text = ""

    def _words(self, made_from: tuple[Any, ...], text: str) -> None:
        super().__init__(text)
        self.args, self._text = made_from, text

    def __str__(self) -> str:
        return self._text


class DiskUseWarning(_MadeWarning):
    """A check will write a lot of scratch data (said once, before the bulk of it)."""

    def __init__(self, path: str, size: int) -> None:
        self.path = path
        self.size = size
        self._words((path, size),
            f"this check will use about {amount(size)} of scratch space under {path} "
            "(TMPDIR), removed when it ends"
        )


class ScratchElsewhereWarning(_MadeWarning):
    """TMPDIR names no usable directory: the scratch files go where Python's
    ``tempfile`` falls back to (said once per check, since a full or small
    fallback disk then fails the check with a path the user did not choose)."""

    def __init__(self, given: str, used: str) -> None:
        self.given = given
        self.used = used
        self._words((given, used),
            f"TMPDIR={given} is not a directory this process can write in, so the check's "
            f"scratch files go to {used} instead; point TMPDIR at a writable directory to "
            "choose where they go"
        )


class LatentGapWarning(_MadeWarning):
    """A resume judged equivalent that leaves a component otherwise than the
    uninterrupted run, where that changed no step (a latent gap): the test
    passes, and this says what it would not show."""

    def __init__(self, target: str, gaps: list[str], resume_at: list[int], reproduce: str) -> None:
        self.target, self.gaps, self.resume_at, self.reproduce = target, gaps, resume_at, reproduce
        points = ", ".join(map(str, resume_at))
        self._words((target, gaps, resume_at, reproduce),
            f"{target}: the resume is equivalent at {points}, but it leaves "
            f"{', '.join(gaps)} otherwise than the uninterrupted run, in state that changed "
            "no step after the restart there (a latent gap): another resume point, or a "
            "second restart, may show it "
            f"(resume_at=[K, K2]; resumecheck fuzz tries many schedules); the whole report: "
            f"{reproduce}"
        )


class LostStateWarning(_MadeWarning):
    """A resume judged equivalent in what is compared, where the program's own
    resume ends otherwise with state no component declares: its checkpoint
    likely loses it (a trial: the test passed silently where the command's
    report said so; only the summary row did)."""

    def __init__(self, target: str, paths: list[str], reproduce: str,
                 declarable: bool = True) -> None:
        self.target, self.paths, self.reproduce = target, paths, reproduce
        self.declarable = declarable
        """Whether the program can declare it as a component (False: a framework's
        target, which declares the framework's own state only; trial 507 was told to
        declare a callback's counter, where trainer_target takes no component)."""
        todo, unstate = (
            # (trial 668: a field its declared component's state_dict() left out was told
            # to declare it)
            ("where it is a field of a declared component (its `not compared` line says), "
             "return it from that component's state_dict() and set it in its "
             "load_state_dict(); else declare it as a component to check that it resumes",
             "Target(not_state=...)")
            if declarable else
            ("the report's `not compared` line says how to keep it in the checkpoint the "
             "framework writes", "the target's not_state=..."))
        self._words((target, paths, reproduce, declarable),
            f"{target}: the resume is equivalent in what is compared, but your own resume ends "
            f"otherwise than the uninterrupted run with {paths_said(paths, quote='')}, which no "
            "declared component's state holds: your checkpoint likely loses it, unless it is "
            "not state "
            f"(a log, a timer, a cache the program fills again when it needs it: say so, "
            # (trial 744: a log a subclass kept, warned of on its correct twin)
            f"{unstate}): every step after the restart matched all the same: "
            f"{CHANGED_NO_STEP}; {todo}; "
            f"the whole report: {reproduce}"
        )


class DrawnAtImportWarning(_MadeWarning):
    """A resume judged equivalent in one interpreter whose program's module drew
    from a global stream without a seed as it was imported: every in-process
    restart shares what it drew, a real one draws again (trial 143: the test
    passed with no warning, where the report's last lines said so)."""

    def __init__(self, target: str, streams: list[str], reproduce: str) -> None:
        self.target, self.streams, self.reproduce = target, streams, reproduce
        self._words((target, streams, reproduce),
            f"{target}: the resume is equivalent in this interpreter, but the program's module "
            f"drew from {global_streams(streams)} without a seed as it was imported: every restart "
            "here shares what it drew, while a real restart imports it again and draws "
            "otherwise; seed it before that draw, or check with --isolation process; the whole "
            f"report: {reproduce}"
        )


class SideFilesWarning(_MadeWarning):
    """A resume judged equivalent whose program's save() wrote (or load() read)
    files beside the checkpoint it was given: a restart from an older
    checkpoint reads what was written there last (trial 138: its step count
    kept in progress.json passed every check, and a resume from an earlier
    checkpoint departed; the note was only in the report's why)."""

    def __init__(self, target: str, files: str, reproduce: str) -> None:
        self.target, self.files, self.reproduce = target, files, reproduce
        self._words((target, files, reproduce),
            f"{target}: the resume is equivalent, but {files} outside the checkpoint path it "
            "was given: a restart reads what was written there last (by a later save, or "
            "another run beside it), not what that checkpoint saved, so a resume from an "
            "earlier checkpoint may depart; keep that state in the checkpoint; the whole "
            f"report: {reproduce}"
        )


class NotStateUnmatchedWarning(_MadeWarning):
    """A ``Target(not_state=...)`` path that no `not compared` line is of: a
    misspelt or relative path leaves the line it meant as it was (trial 164:
    `loss_log`, where the line named `state.loss_log`, went unsaid)."""

    def __init__(self, target: str, paths: list[str], like: list[str]) -> None:
        self.target, self.paths, self.like = target, paths, like
        named = ", ".join(f"`{p}`" for p in paths)
        hint = (f"; the report names {', '.join(f'`{p}`' for p in like)}: give the path as "
                "the `not compared` line begins") if like else ""
        self._words((target, paths, like),
            f"{target}: not_state names {named}, which no `not compared` line is of, so it "
            f"leaves nothing out{hint}"
        )


class UnboundedStepsWarning(_MadeWarning):
    """The program replaced the SIGALRM handler that bounds each phase of an
    in-process run (``--timeout``): its steps are not bounded any more."""

    def __init__(self, target: str) -> None:
        self.target = target
        self._words((target,),
            f"{target} installs a SIGALRM handler of its own (a watchdog, signal.alarm), and "
            "the in-process step timeout (--timeout) uses that signal: from here its steps "
            "are not bounded in this interpreter, and a step that hangs hangs the check. "
            "Check it with --isolation process, whose steps are bounded from outside"
        )


LONGER_BOUND = ("if the program is merely slower than that, give it a longer bound "
                "(--timeout SECONDS; 0 turns it off)")
"""The advice for a run stopped by the step timeout (a trial: a bound set too
small was read as the program's fault); one wording wherever it is said."""


class ReferenceFailed(ResumecheckError):
    """The uninterrupted reference run itself failed: nothing can be judged."""

    def __init__(self, target: str, reason: str, step: int | None,
                 rerun: bool = False, stage: str | None = None, timed_out: bool = False) -> None:
        self.target = target
        self.reason = reason
        self.step = step
        self.rerun = rerun
        """The failed run is a second uninterrupted one (the determinism rerun):
        the reference ran through."""
        self.stage = stage
        """Where it failed (``capture``: the check's own checkpoint of the
        components, which the program's training does not touch)."""
        self.timed_out = timed_out
        """It ran past its bound (the step timeout) and was stopped."""
        where = f" at step {step}" if step is not None else ""
        reason = reason.removeprefix(f"step {step}: ")  # (said once: "at step N")
        if timed_out:
            # (a trial: a --timeout set too small was told to fix its program)
            run = ("a second uninterrupted run of {} (the determinism rerun)" if rerun
                   else "the uninterrupted reference run of {}").format(target)
            super().__init__(
                f"{run} was stopped{where}: {reason}. {LONGER_BOUND[0].upper()}{LONGER_BOUND[1:]}"
                " (under pytest, --resumecheck-timeout); if it hangs there, fix the program so "
                "that it trains without a restart first."
            )
            return
        if rerun:
            super().__init__(
                f"a second uninterrupted run of {target} (the determinism rerun) failed{where}, "
                f"where the reference run did not: {reason}. The program fails only some of "
                "the times it runs; make it train alike every time (a read that may fail, a "
                "fault that comes and goes) and check again."
            )
            return
        if stage == "capture":
            # (trial 305 read "the uninterrupted reference run ... failed at step 7" of the
            # check's own capture, refused, and looked for a crash in its training code)
            after = where.replace(" at", " after")
            super().__init__(
                f"the check's own capture of the declared components{after} of the "
                f"uninterrupted reference run of {target} failed (the training itself did "
                f"not): {reason}.")
            return
        # (the reason says what to do: the tracing, a loop that ended early,
        # which a trial read as its program's fault, not the target's steps)
        advice = ("" if stage in ("trace", "rendezvous") or "at least as many steps" in reason
                  # (trial 393: a save that raised on one rank of several)
                  else " Fix the program's save() so that the uninterrupted run can save."
                  if stage == "save"
                  # (trial 668: early stopping, as designed, was told to fix the program)
                  else (f" A program that stops on its own (early stopping, the end of its "
                        f"data) stops here, before the check's last step: check fewer steps "
                        f"(--steps {step - 1} or less); where a resumed run stops is then not "
                        "checked.") if "raised StopIteration" in reason and step
                  else " Fix the program so that it trains without a restart first.")
        super().__init__(
            f"the uninterrupted reference run of {target} failed{where}: {reason}.{advice}"
        )


class ResumeNotEquivalent(ResumecheckError, AssertionError):
    """The full-state resume does not continue like the uninterrupted run.

    ``description``: the failure as a diff (``assertions.describe_failure``
    writes it); the report is kept as ``report``."""

    def __init__(self, report: Report, description: str | None = None) -> None:
        self.report = report
        self.description = description or f"resume is not equivalent: {report.target}"
        super().__init__(self.description)


SCHEDULER_UNREAD = "; the learning rate changes after the resume point all the same"
"""Said of a blind spot of the scheduler where the learning rate changes after
the resume point (a trial: the advice was to make it change), followed by
``SCHEDULER_BY_EPOCH`` or ``SCHEDULER_IDLE``."""
SCHEDULER_BY_EPOCH = (
    ": what this scheduler's state holds sets nothing a step reads (a scheduler stepped with "
    "an explicit epoch, step(epoch), one the program rebuilds from its step, or one it makes "
    "anew before what it holds matters: a new phase's, fold's or stage's)")
"""(trial 476: a program that made the next phase's scheduler at the next step
was offered only the first two)"""
HOLDS_NOTHING = "holds nothing at the resume point and at the end"
"""Said of a blind spot whose component's state is empty at the resume points
and at the end (``verdict._as_built_explanation``)."""
SCHEDULER_IDLE = (
    ", not through this scheduler: the uninterrupted run ends with it as it was at the resume "
    "point, so nothing steps it after there (another scheduler sets the rate: SWA's SWALR, "
    "one that takes over); a resume point before its last step shows it")
"""A scheduler the uninterrupted run no longer steps after the resume point (a
trial: a cosine schedule that SWALR took over was said to be stepped by epoch)."""


_AS_BUILT_WHOSE = {
    "built": "a fresh build's state",
    # (trial 489: a loader's generator that the position component's restore drew to
    # where it was, told only "or one another declared component puts back")
    "put back": ("not a fresh build's, which the build's own digests show, so another "
                 "declared component's restore puts {it} back")}
"""Whose a blind spot's dropped state is, by ``as_built_text``'s ``held``."""
_EITHER_WHOSE = "a fresh build's state, or one another declared component puts back"


def _held_said(explanation: str) -> str | None:
    """``as_built_text``'s ``held``, read back from a why (None: not said)."""
    return next((held for held, words in _AS_BUILT_WHOSE.items()
                 if any(f"bit for bit: {words.format(it=it)})" in explanation
                        for it in ("it", "them"))), None)


def as_built_text(names: list[str], points: list[int], unmoved: bool = False,
                  held: str | None = None) -> str:
    """The clause a blind spot's explanation ends with when ``names`` were, at
    each resume point of ``points``, the state a fresh build starts with (a trial: a loss
    scaler whose scale and growth tracker were the build's at that step was
    told to make its scale change). ``unmoved``: at the end of the run too,
    so no resume point can show them lost (a trial: a run configuration equal
    to the factory's defaults was told to choose another resume point).
    ``held``: the build's own digests show that state a fresh build's
    (``"built"``), or not (``"put back"``: another declared component's restore
    puts it back); None: not known, both said. ``as_built_names`` reads it back."""
    one = len(names) == 1
    it = "it" if one else "them"
    steps = ("step " + str(points[0]) if len(points) == 1 else
             "steps " + ", ".join(map(str, points[:-1])) + f" and {points[-1]}")
    # (a trial: a random stream that a callback of the program's own put back as
    # well was said to be "as a fresh build has it", which it was not)
    whose = _AS_BUILT_WHOSE.get(held or "", _EITHER_WHOSE).format(it=it)
    text = (f"at {steps}{' and at the end' if unmoved else ''} the uninterrupted run's "
            f"{', '.join(names)} {'is' if one else 'are'}{_AS_RESTORED}{it} leaves "
            f"(state_dict() bit for bit: {whose}): dropping {it} puts in that same state, "
            f"however the program uses {it}; ")
    if held == "put back" and not unmoved:
        # (trial 679 read "<that component>" as a placeholder left unfilled)
        return text + (f"dropping {it} alone shows nothing at a resume point where that "
                       f"component puts {it} back, and the component keeps {it} there: a "
                       f"resume point where it no longer does (in another epoch, say) checks "
                       f"{it} alone, and --drop with {', '.join(names)} and that component "
                       "together checks them together")
    if not unmoved:
        # (trial 181: a best loss, moved at a later point, was set again by the next
        # evaluation before any step read it, and stayed a blind spot there)
        return text + (f"a resume point where {'it has' if one else 'they have'} moved from "
                       f"there shows the difference, unless another component puts {it} back "
                       f"or the program sets {it} again before a step reads {it}")
    if names == ["config"]:  # (the run's settings: no step changes them)
        return text + f"{NEVER_MOVES} {it} here, so no resume point shows {it} lost; " \
            + CONFIG_AS_BUILT
    # (trial 151: a queue pointer that cycled back to its start at the resume point
    # and at the end was told that training does not change it)
    return text + (f"either the run changes {it} and comes back to {'it' if one else 'them'} "
                   "between (a position that cycles, gradients accumulated and emptied at each "
                   "cycle's end), and a resume point where it has moved shows it (resumecheck "
                   f"fuzz tries them), or {NEVER_MOVES} {it} here, and no resume point shows "
                   f"{it} lost") + (
        f"; {CONFIG_AS_BUILT}" if "config" in names else "")


LEFT_ALONE = "the uninterrupted run did not change it after there"
"""How a blind spot's why says the run left the dropped component alone after
the resume point (``verdict._unread_because``)."""

NEVER_DRAWN = ("the random streams' state was the same before every step and at the end: no "
               "step draws from them here (or each step seeds them again as it found them)")
"""Said of a blind spot of random streams none of which the uninterrupted run
drew from (``verdict._never_drawn``); what a restart moves them to then
changes no step at any resume point."""

NEVER_MOVES = "training does not change"
"""Said of a blind spot whose components are a fresh build's at the resume point
and at the end (``as_built_text``)."""

SET_AGAIN = "the program set it again before any step's loss, gradients or parameters showed it"
"""Said of a blind spot whose dropped state differed right after the restore and
ended as the uninterrupted run's (``verdict._set_again_text``)."""

CONFIG_MASKED = (
    "the run's settings are not a fresh build's, and dropping them changed nothing: what the "
    "steps read of them comes back through other restored state (an optimizer's or a "
    "scheduler's learning rate), or is not read after the resume point")
"""Said of a blind spot of ``config`` whose state differed right after the restore."""

CONFIG_AS_BUILT = (
    "the run's settings are those a fresh build starts from (your factory's defaults): "
    "give the check other settings, Target(run_config={...}), and dropping config "
    "builds another program")
"""What makes a ``config`` component matter when the run's settings are the defaults."""

CONFIG_RESTARTED = (
    "each restart is built with the run's launch settings (restart_config=\"run\"), so it "
    "has them back without any checkpoint: no resume point shows them lost, and none needs "
    "them kept (leave config out of the components such a test asserts)")
"""``CONFIG_AS_BUILT`` where the restart is built with the run's own settings,
which differ from the defaults (trial 302 was told to give the check other
settings, Target(run_config=...), which it had)."""


_AS_RESTORED = " what the restore that drops "
"""How ``as_built_text`` says that a dropped state is the reference's (read back)."""


def as_built_names(explanation: str) -> list[str]:
    """The components an explanation says were, at the resume point, what the
    restore that drops them leaves (``as_built_text``; none when it does not)."""
    head, sep, rest = explanation.partition(" the uninterrupted run's ")
    names, found, _ = rest.partition(_AS_RESTORED)
    if not sep or not found:
        return []
    return names.rsplit(" ", 1)[0].split(", ")


_EXERCISE = {
    # (trial 853: its augmentation drew in loader workers, whose streams RNGState does not hold)
    "rng": "dropout or augmentation in the main process for rng: a loader's workers draw from "
           "streams of their own",
    "sampler_epoch": "a resume after an epoch boundary for sampler_epoch",
    "data_cursor": "mid-epoch for data_cursor",
    "global_step": "something that reads the step for global_step",
    "config": "run settings other than the defaults a fresh build starts from for config",
    "scheduler": "a learning rate that changes after the resume point for scheduler",
    "optimizer": "an optimizer with state (momentum, Adam's moments) for optimizer",
    "scaler": "a loss scale that changes after the resume point for scaler",
    "params": "training steps after the resume point for params",
}
"""How to make a standard component matter to a check, in words."""


class ComponentsNotExercised(ResumecheckError, AssertionError):
    """Dropping these components changed nothing (the check is blind to them),
    or could not be judged (``inconclusive``: the declared components do not
    capture the program's state; ``failed``: the run that drops them failed)."""

    def __init__(self, report: Report, components: list[str],
                 inconclusive: list[str] | None = None, failed: list[str] | None = None) -> None:
        self.report = report
        self.components = components
        self.inconclusive = list(inconclusive or [])
        self.failed = list(failed or [])
        lines = []
        if self.failed:
            why: dict[str, list[str]] = {}  # (one line per failure, however many it ended)
            for r in report.runs:
                if r.dropped and ",".join(r.dropped) in self.failed:
                    why.setdefault(r.explanation.splitlines()[0], []).append(",".join(r.dropped))
            lines += [f"cannot tell whether {', '.join(names)} "
                      f"{'is' if len(names) == 1 else 'are'} exercised in {report.target}: the "
                      f"run{'' if len(names) == 1 else 's'} that drop{'s' if len(names) == 1 else ''} "
                      f"{'it' if len(names) == 1 else 'them'} failed ({text})"
                      for text, names in why.items()]
        if self.inconclusive:
            lines += [
                # (trial 817: "whether rng are exercised")
                f"cannot tell whether {', '.join(self.inconclusive)} "
                f"{'is' if len(self.inconclusive) == 1 else 'are'} exercised in "
                f"{report.target}: {report.incomplete_state_notice()}",
            ]
        if components:
            lines += _blind_spot_lines(report, components)
        runs = [r for r in report.runs
                if r.blind_spot or r.verdict == "inconclusive"
                or (r.dropped and r.verdict == "failed")]
        lines += [f"  reproduce: {r.reproduce}" for r in runs]
        if any(r.blind_spot for r in runs):  # (a trial expected the command to fail too)
            # (trial 524 looked for `blind spots:` in a report that named one)
            lines.append("  (a blind spot is not a failed resume: the command exits 0, and its "
                         "report names it in its `blind spot:` line, `blind spots:` of several)")
        super().__init__("\n".join(lines))


def _config_why(spots: list[Any]) -> str:
    """Why a config that is so at the end too is a blind spot, as its run says."""
    said = any(CONFIG_RESTARTED in r.explanation for r in spots if "config" in r.dropped)
    return CONFIG_RESTARTED if said else CONFIG_AS_BUILT


def _blind_spot_lines(report: Report, components: list[str]) -> list[str]:
    """The lines of ``ComponentsNotExercised`` on its blind spots: what each
    needs to be exercised, where the runs' explanations say why it was not
    (trial 845: not "cannot catch their bugs", of a scheduler whose making after
    the load the same check caught, through the optimizer's rate)."""
    spots = [r for r in report.runs if r.blind_spot]
    unread = sorted({c for r in spots if SCHEDULER_UNREAD + SCHEDULER_BY_EPOCH in r.explanation
                     for c in r.dropped if c in components})
    idle = sorted({c for r in spots if SCHEDULER_UNREAD + SCHEDULER_IDLE in r.explanation
                   for c in r.dropped if c in components})
    built = sorted({c for r in spots for c in as_built_names(r.explanation) if c in components})
    unmoved = {c for r in spots if NEVER_MOVES in r.explanation
               for c in as_built_names(r.explanation)}
    again = sorted({c for r in spots if SET_AGAIN in r.explanation
                    for c in r.dropped if c in components and c not in built})
    # (a trial: a config with settings other than the defaults, masked by the
    # optimizer's restored learning rate, was told to use other settings)
    masked = [c for c in components if c == "config"
              and any(CONFIG_MASKED in r.explanation for r in spots if c in r.dropped)]
    # (trial 211: a stream the run drew from at step 4 and not after the resume
    # point at 8 was told "dropout or augmentation for rng")
    alone = sorted({c for r in spots if LEFT_ALONE in r.explanation for c in r.dropped
                    if c in components and c not in built})
    empty = sorted({c for r in spots if HOLDS_NOTHING in r.explanation for c in r.dropped
                    if c in components})  # (trial 387: given no line of its own)
    undrawn = sorted({c for r in spots if NEVER_DRAWN in r.explanation for c in r.dropped
                      if c in components})  # (trial 716: sent to fuzz)
    # (trial 682: an optimizer whose steps a loss scale skipped to the resume point, set
    # again by the program, was also told to use "an optimizer with state")
    together = _held_together(spots, components)
    said = {*unread, *idle, *built, *masked, *alone, *empty, *again, *together}
    ways = [_EXERCISE[c] for c in _EXERCISE if c in components and c not in said]
    if any(c not in _EXERCISE and c not in said for c in components):  # (your own)
        ways.append("a step after the resume point that reads what the checkpoint "
                    "would lose, for a component of your own")
    lead = _lead(ways, bool(built or masked or alone or idle or again or empty or unread
                            or together))
    lines = [f"blind spots in {report.target} at resume point(s) "
             f"{','.join(map(str, report.resume_at))}: {', '.join(components)}",
             f"dropping these from the engine's restore changed nothing, so this check cannot "
             f"show a checkpoint that loses their state; {lead}"]
    lines += [_built_line(c, c in unmoved, spots) for c in built] + [
        f"{c}: another declared component holds its random state there too, bit for bit, and "
        f"its restore puts it back: --drop {drop} checks them together (the report's why names "
        "it)" for c, drop in together.items()]
    return lines + _unexercised_lines(masked, again, unread, idle, alone) + [
        f"{c}: it {HOLDS_NOTHING}: a resume point where it holds state checks it (resumecheck "
        "fuzz tries them)" for c in empty] + [
        f"{c}: {NEVER_DRAWN}, so no resume point shows it lost: a program that draws from them "
        "(dropout, augmentation) in the main process exercises it (a loader's workers draw "
        "from streams of their own, seeded from the loader's base seed, which it does not "
        "hold: what they draw shows in the data); else leave it out of the components this "
        "test asserts (the marker's drop=[...])" for c in undrawn]


def _lead(ways: list[str], said_below: bool) -> str:
    """What ``_blind_spot_lines`` says after the components: how to exercise
    them (``ways``), that what would is said below each (``said_below``), or
    that nothing the program does here can."""
    # (a trial: "nothing the program does here can exercise them" above a line
    # that said what would, for a config equal to the factory's defaults)
    # (trial 243: rng, a blind spot because a callback component put the streams back,
    # in a program with dropout, was told to make the program draw)
    return (f"make the program exercise them ({', '.join(ways)}) or choose another resume "
            "point, unless another declared component puts the same state back (a callback "
            "that saves the random streams: dropping one of the two then changes nothing)"
            if ways else "what would exercise each is said below"  # (trials 375, 387: not
            if said_below else "nothing the program does here can exercise them")  # "nothing"
    # above them)


def _held_together(spots: list[Any], components: list[str]) -> dict[str, str]:
    """Of the blind spots, each component whose row's why says another declared
    component holds its random state too (the ``--drop`` that checks them
    together, by component; trial 857: a sampler's generator declared as `rng`
    and held by `sampler` too was told to add dropout, or another resume point)."""
    out = {}
    for r in spots:
        found = re.search(r"--drop (\S+) checks them together", r.explanation)
        if found and len(r.dropped) == 1 and r.dropped[0] in components \
                and r.dropped[0] not in as_built_names(r.explanation):
            out[r.dropped[0]] = found.group(1)
    return out


def _built_line(c: str, unmoved: bool, spots: list[Any]) -> str:
    """``_blind_spot_lines``'s words on a component that is, at the resume point,
    what the restore that drops it leaves (``unmoved``: at the end too)."""
    # (trial 489: the row's why knew, by the build's own digests, which of the two it was)
    held = _held_said(" ".join(r.explanation for r in spots if c in r.dropped))
    whose = {"built": "a fresh build's",
             "put back": "not a fresh build's: another declared component's restore puts it "
                         "back"}.get(held or "", "a fresh build's, or one another component "
                                                 "puts back")
    put_back = held == "put back"
    return (f"{c}: at the resume point its state is what the restore that drops it leaves "
            f"({whose}), bit for bit: "
            "dropping it puts in the same state, however the program uses it; "
            + ("no resume point where that component puts it back shows it lost alone: leave "
               "it out of the components this test asserts (the marker's drop=[...]), or "
               "drop it together with that component" if put_back and not unmoved else
               # (trial 256: rng, put back by the program's own hooks component, was
               # told to choose a resume point where it has moved: none would show it)
               "choose a resume point where it has moved, unless another declared "
               "component puts it back (then none shows it: leave it out of the "
               "components this test asserts, the marker's drop=[...])"
               if not unmoved else
               "it is so at the end too: training does not change it, so no resume "
               f"point shows it lost; {_config_why(spots)}" if c == "config" else
               # (trial 198: an agent drawing only from generators of its own was told
               # to make the program change the global streams)
               # (trial 499: an accumulation buffer, empty at each cycle's end, was
               # offered first to be left out of the test)
               "it is so at the end too: either it changes and comes back between (a "
               "position that cycles, gradients accumulated and emptied at each cycle's "
               "end), and another resume point shows it (resumecheck fuzz tries them), or "
               "training never changes it, and no checkpoint can lose what it holds (then "
               "leave it out of the components this test asserts: the marker's drop=[...])"))


def _unexercised_lines(masked: list[str], again: list[str], unread: list[str],
                       idle: list[str], alone: list[str]) -> list[str]:
    """``_blind_spot_lines``'s words on the blind spots that are so for a
    reason of their own: a masked config, state set again, a schedule not read
    or no longer stepped, state the run left alone after the resume point."""
    lines = [f"{c}: {CONFIG_MASKED}; a setting that only the config holds, read by a "
             "later step, shows the difference" for c in masked]
    # (trial 797: a running mean a plateau scheduler read, both values on one side of its
    # threshold, read as if no step had read it: the report's why says "or other state
    # masks it", this line did not)
    lines += [f"{c}: right after the restore it differed, and {SET_AGAIN} (the report's "
              "why says how), or a step read it where other state masked it: a resume point "
              "after which a step reads it, before the program sets it again, where what it "
              "decides turns on it, shows the difference" for c in again]
    # (trial 287: a plateau scheduler that a new fold set anew read as "stepped with
    # an explicit epoch", which it was not)
    lines += [f"{c}: the learning rate changes after the resume point without its "
              "state (a scheduler stepped with an explicit epoch, step(epoch), or one the "
              "program sets anew before what it holds matters, a new fold's or stage's): "
              "what it holds sets nothing a step reads here, so losing it changes nothing "
              "(a scheduler made or stepped wrongly still shows in the optimizer's rate); where "
              "your program means it so, leave it out of the components this test asserts (the "
              "marker's drop=[...])" for c in unread]
    lines += [f"{c}: the learning rate changes after the resume point, but the uninterrupted "
              "run no longer steps it there (it ends as it was at the resume point): choose a "
              "resume point before its last step" for c in idle]
    lines += [f"{c}: no step after the resume point read it, and {LEFT_ALONE}: the run "
              "changes it only before; a resume point before its last change shows it "
              "(resumecheck fuzz tries them)" for c in alone]
    return lines
