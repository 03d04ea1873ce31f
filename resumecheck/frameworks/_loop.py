"""A loop the framework owns, driven as a step program.

Lightning's ``Trainer.fit`` and HuggingFace's ``Trainer.train`` run their
own loop. ``LoopProgram`` runs that loop in a worker thread and turns it into
the ordinary program protocol, so the engine and the runner stay as they are:

* the adapter's callback, at the point of each optimizer step where the
  framework has also updated its scheduler, hands the step's record (loss,
  samples when known) to the engine's thread and *parks* the loop until the
  engine calls ``train_step()`` again;
* ``save(path)`` is executed by the parked loop thread (the framework's own
  checkpoint, written where the framework writes it mid-loop);
* ``load(path)`` only records the path: the loop starts, lazily, through the
  framework's own resume path (``Trainer.fit(ckpt_path=path)``,
  ``trainer.train(resume_from_checkpoint=path)``);
* ``components()`` are proxies of the framework's live objects (optimizer,
  scheduler, progress counters); touching one starts the loop and parks it
  before its first step, where the framework has finished restoring.

The loop thread is a daemon and never outlives the program: ``close()`` (the
runner calls it after each segment; garbage collection does too) ends it by
raising ``_Stop`` inside the framework's callback. An exception in the loop
becomes the failure of the step that was waiting for it, with the
framework's traceback summarized. Random streams (torch, Python ``random``,
numpy) are process-global, so the two threads share them; grad mode and
autocast are per thread, and only the loop thread trains.
"""

from __future__ import annotations

import atexit
import contextlib
import queue
import re
import threading
import traceback
import types
import weakref
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import torch

from resumecheck.compare import digest
from resumecheck.components import CALLBACKS, RNGState
from resumecheck.errors import CheckpointError, StepError
from resumecheck.program import StepOutput
from resumecheck.phrases import FEWER_STEPS, FRAMEWORK_RESUME, LOOP_ENDED
from resumecheck.trace import unwrap_optimizer

__all__ = ["CALLBACKS", "CONTINUE", "LiveState", "LoopProgram", "LoopRecord",
           "batch_fingerprint", "fields_beside", "run_pending", "user_callbacks", "user_dataset",
           "user_object"]

CONTINUE = object()
"""What a function run in the loop returns to let the loop go on until its
next park (whose event answers the engine), e.g. a save the framework does
after the callback returns."""


_ANSI = re.compile(r"\x1b\[[0-9;]*m")
"""Terminal colour codes some frameworks put in their messages."""


class _Stop(BaseException):
    """Raised inside the framework's callback to end the loop thread."""


@dataclass(slots=True)
class LoopRecord:
    """One optimizer step, as the adapter's callback saw it."""

    step: int
    loss: torch.Tensor | float
    samples: torch.Tensor | None = None


class _Channel:
    """The two threads' hand-off: commands to the loop, events from it.

    The loop thread holds only this object (never the program), so the
    program can be collected, and closing it ends the thread.
    """

    def __init__(self) -> None:
        self.inbox: queue.Queue[tuple[str, Any]] = queue.Queue()
        self.outbox: queue.Queue[tuple[str, Any]] = queue.Queue()
        self.closed = False

    # -- the loop thread's side ---------------------------------------------

    def park(self, event: str, payload: Any = None) -> None:
        """Report ``event`` and wait for the engine: run what it asks in this
        thread, until it says to go on (or to stop)."""
        self.outbox.put((event, payload))
        while True:
            if self.closed:
                raise _Stop
            try:
                command, arg = self.inbox.get(timeout=1.0)
            except queue.Empty:
                continue
            if command == "go":
                return
            if command == "stop":
                raise _Stop
            if command == "call":
                try:
                    result = arg()
                except BaseException as exc:  # handed to the engine's thread
                    self.outbox.put(("raised", exc))
                else:
                    if result is CONTINUE:
                        return
                    self.outbox.put(("returned", result))

    # -- the engine's side --------------------------------------------------

    def close(self) -> None:
        self.closed = True
        self.inbox.put(("stop", None))
        _LIVE.pop(self, None)


# Loop threads still running, ended at interpreter exit: a daemon thread
# parked inside torch when the interpreter tears down aborts the process.
_LIVE: dict[_Channel, threading.Thread] = {}


@atexit.register
def _end_loops() -> None:
    for channel, thread in list(_LIVE.items()):
        channel.close()
        thread.join(timeout=10)


class LoopProgram:
    """A framework-owned training loop as a resumecheck program.

    An adapter subclasses it and provides ``_runner()`` (the framework's
    ``fit``/``train`` call, run in the loop thread, with a callback that
    calls ``channel.park("started", global_step)`` before the first step
    and ``channel.park("step", LoopRecord(...))`` after each),
    ``components()`` and ``_save(path)`` (the framework's checkpoint, called
    in the loop thread).
    """

    framework = "the framework"
    """How messages name the framework."""

    @property
    def restored_by(self) -> str:
        """What restores a resumed run, in a report's words (no load() of yours)."""
        return f"{self.framework}'s restore"

    @property
    def saved_by(self) -> str:
        """What writes the checkpoint, in a report's words (no save() of yours)."""
        return f"{self.framework}'s checkpoint save"

    saved_where = ""
    """Where the framework writes its checkpoint otherwise than the run's own saves do,
    or code of the user's its save and restore call, in words (``loop_note``); ''."""

    @property
    def loop_note(self) -> str:
        """What the program's own resume says of the code that ran (a trial's
        script picked the wrong checkpoint when relaunched, and its row, "own
        save/load", read "resumes bit for bit"); and, where the framework writes
        its checkpoint elsewhere than the run's own saves do, where
        (``saved_where``)."""
        return loop_note(self.framework) + self.saved_where

    def __init__(self) -> None:
        self._channel = _Channel()
        self._thread: threading.Thread | None = None
        self._resume_from: str | None = None
        self._started = False
        self._finished = False
        self._last_step = 0
        self._finalizer = weakref.finalize(self, _Channel.close, self._channel)
        self.pending: dict[str, list[Callable[[], None]]] = {}
        """Loads of the engine's capture that wait for the loop to reach a
        stage (by the stage's name); the adapter's callback runs them there."""
        self.loaded_back: set[str] = set()
        """The components whose load, checked at once, gave back what was
        loaded (``LiveState``'s ``verify_as``)."""

    # -- what adapters provide ------------------------------------------------

    def _runner(self) -> Callable[[str | None], None]:  # pragma: no cover - abstract
        """The loop: ``runner(resume_from)`` calls the framework's fit/train.
        It must not hold the program (only the framework's objects), so that
        an abandoned program is collected and its thread ended."""
        raise NotImplementedError

    def _save(self, path: str) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    # -- the program protocol -------------------------------------------------

    def train_step(self) -> StepOutput:
        """Let the loop run one optimizer step and return what it reported."""
        self.live()
        if self._finished:
            raise StepError(self._last_step + 1, self._ended_text())
        self._channel.inbox.put(("go", None))
        event, payload = self._wait()
        if event == "step":
            record: LoopRecord = payload
            self._last_step = record.step
            return StepOutput(loss=record.loss, samples=record.samples)
        raise StepError(self._last_step + 1, self._ended_text())

    def save(self, path: str) -> None:
        """The framework's own checkpoint, written by the parked loop."""
        self.live()
        if self._finished:
            raise RuntimeError(f"{self.framework}'s loop has ended: nothing is left to save")
        self.in_loop(lambda: self._save(path))

    def load(self, path: str) -> None:
        """Resume through the framework's own path when the loop starts."""
        if self._started:
            raise RuntimeError(
                f"{self.framework}'s loop is already running: a checkpoint can only be "
                "loaded by a freshly built program")
        self._resume_from = path

    streams_at_restore: dict[str, Any] | None = None
    """The global streams as the restore left them, where the framework's setup
    drew from them before the first step (``restored_look``)."""
    _looking: list[dict[str, Any]] | None = None

    kept_before_hooks: dict[str, Any] | None = None
    """Components' states (by name) as the restore left them, where hooks of the
    user's ran between the restore and the first step that the uninterrupted
    run ran only after its checkpoint: what the look right after a restore
    reads of them (``LiveState.state_dict``). None or empty: none ran."""

    def restored_look(self) -> contextlib.AbstractContextManager[None]:
        """Around the look at the state right after a restore (``_restored_look``)."""
        return _restored_look(self)

    def close(self) -> None:
        """End the loop thread (idempotent)."""
        self._finalizer()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=30)

    # -- the driver -----------------------------------------------------------

    def live(self) -> None:
        """Start the loop if it has not started, and wait until it is parked
        before its first step (the framework's restore done)."""
        if self._started:
            return
        self._started = True
        channel, run, resume_from = self._channel, self._runner(), self._resume_from
        name = f"resumecheck {self.framework} loop"

        def main() -> None:
            try:
                run(resume_from)
            except _Stop:
                channel.outbox.put(("stopped", None))
            except BaseException as exc:
                if not channel.closed:
                    channel.outbox.put(("failed", exc))
            else:
                channel.outbox.put(("finished", None))

        self._thread = threading.Thread(target=main, name=name, daemon=True)
        _LIVE[self._channel] = self._thread
        self._thread.start()
        try:
            event, payload = self._wait()
        except StepError as exc:
            # Building its optimizers or restoring the checkpoint failed: a
            # resumecheck error, so the report shows the framework's error
            # once (with its innermost frames), not this module's stack.
            if resume_from is not None:
                raise CheckpointError(
                    "load", resume_from,
                    f"{exc.problem}, while it restored the checkpoint or built its optimizers "
                    "(before its first step)") from exc.__cause__
            raise StepError(exc.step, f"{exc.problem}, before its first step (while it built "
                                      "its optimizers)") from exc.__cause__
        if event != "started":
            raise RuntimeError(f"{self.framework}'s loop ended before its first step")
        if isinstance(payload, int):
            self._last_step = payload  # the framework's step after its restore
        _show_restored(self)

    def in_loop(self, fn: Callable[[], Any]) -> Any:
        """Run ``fn`` in the parked loop thread and return its result."""
        self.live()
        if self._finished:
            return fn()
        self._channel.inbox.put(("call", fn))
        event, payload = self._wait()
        if event == "raised":
            raise payload
        return payload

    def _wait(self) -> tuple[str, Any]:
        event, payload = self._channel.outbox.get()
        if event in ("finished", "stopped"):
            self._finished = True
        if event == "failed":
            self._finished = True
            raise StepError(self._last_step + 1, self._failure_text(payload)) from payload
        return event, payload

    def _failure_text(self, exc: BaseException) -> str:
        frames = traceback.extract_tb(exc.__traceback__)
        where = "; ".join(f"{f.filename.rsplit('/', 1)[-1]}:{f.lineno} in {f.name}"
                          for f in frames[-3:])
        text = _ANSI.sub("", str(exc)).strip()
        return (f"{self.framework}'s loop raised {type(exc).__name__}: {text} "
                f"(innermost frames: {where})")

    def _ended_text(self) -> str:
        # (a trial's EarlyStoppingCallback ended the run at 18 of 24 steps: told to give
        # the target more steps, which could not help)
        return (f"{self.framework}{LOOP_ENDED} {self._last_step}: its own stop "
                "(max_steps, max_epochs, the end of the data, or a callback that stops it, "
                f"early stopping) came first{FEWER_STEPS}, or, where it stopped early, check "
                f"fewer steps (--steps {self._last_step} or less): the uninterrupted run "
                # (trial 523: its early stopping lost its patience count, and the resumed
                # run trained two steps past the uninterrupted run's stop, which no check
                # of fewer steps can show)
                "does not train after such a stop, and where a resumed run stops is then "
                "not checked: what decides it (a patience count) is compared where a "
                "component declares it, and named under `not compared` where none does")


@contextlib.contextmanager
def _restored_look(program: LoopProgram) -> Iterator[None]:
    """The global streams as the restore left them (``streams_at_restore``),
    from when the loop is parked before its first step, not as the
    framework's setup drew from them since (Lightning's iterators at an
    epoch's end, which the uninterrupted run made after its checkpoint); set
    back after the look."""
    program._looking = []
    try:
        _show_restored(program)
        yield
    finally:
        now, program._looking = program._looking, None
        if now:
            RNGState().load_state_dict(now[0])


def _show_restored(program: LoopProgram) -> None:
    """In ``_restored_look``, once the loop is parked: the streams at restore."""
    looking, before = program._looking, program.streams_at_restore
    if program._started and looking == [] and before is not None:
        looking.append(RNGState().state_dict())
        RNGState().load_state_dict(before)

def run_pending(pending: dict[str, list[Callable[[], None]]], stage: str) -> None:
    """Run the loads waiting for ``stage`` (called by an adapter's callback, in the loop)."""
    for load in pending.pop(stage, []):
        load()


class LiveState:
    """A component whose object exists only once the loop runs (an optimizer
    Lightning builds in ``fit``): ``state_dict()`` starts the loop, parked
    before its first step, and reads the live object.

    ``load_state_dict()`` before the loop has started (the engine restoring
    its own capture into a fresh program) waits until the loop reaches
    ``stage``, where the adapter's callback loads it: the framework reads
    some state once, before its first step (Lightning's fit loop counters
    and loader position, in ``setup``), and builds other objects only later
    (its optimizers, by ``on_train_start``).
    """

    def __init__(self, program: LoopProgram, get: Callable[[], Any],
                 load: Callable[[Any, dict[str, Any]], None] | None = None,
                 dump: Callable[[Any], dict[str, Any]] | None = None,
                 stage: str = "started", verify_as: str | None = None,
                 verify_stage: str | None = None, name: str | None = None) -> None:
        self._program = program
        self._name = name
        """The component's name, where the program may keep its state from before
        hooks that ran after the restore (``LoopProgram.kept_before_hooks``)."""
        self._get = get
        self._load = load
        self._dump = dump
        self._stage = stage
        self._verify_as = verify_as
        """The component's name, where its load is checked at once: one that
        gives back what was loaded is named in the program's ``loaded_back``
        (where it differs right after the restore, what ran between changed it:
        ``capture_meta``)."""
        self._verify_stage = verify_stage
        """Where that check is made instead, where the framework makes what the
        load sets only later (a module's ``on_load_checkpoint`` that keeps the state
        for its ``configure_optimizers()``); what cannot be read back then is not
        named."""

    @property
    def live_object(self) -> Any:
        self._program.live()
        return self._get()

    @property
    def optimizer(self) -> Any:
        """The torch optimizer under the framework's wrappers (what the tracer hooks)."""
        return unwrap_optimizer(self.live_object)

    def state_dict(self) -> dict[str, Any]:
        obj = self.live_object
        kept = self._program.kept_before_hooks if self._program._looking is not None else None
        if kept is not None and self._name in kept:  # (in the look right after the restore)
            return kept[self._name]  # type: ignore[no-any-return]
        return self._dump(obj) if self._dump is not None else obj.state_dict()

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if self._program._started:
            self._apply(state)
        else:
            self._program.pending.setdefault(self._stage, []).append(lambda: self._apply(state))

    def _apply(self, state: dict[str, Any]) -> None:
        obj = self._get()
        if self._load is not None:
            self._load(obj, state)
        else:
            obj.load_state_dict(state)
        if self._verify_as is not None and self._verify_stage is not None:
            self._program.pending.setdefault(self._verify_stage, []).append(
                lambda: self._verify(state, tolerant=True))
        elif self._verify_as is not None:
            self._verify(state)

    def _verify(self, state: dict[str, Any], tolerant: bool = False) -> None:
        """Name the component in ``loaded_back`` where it gives back ``state``
        (``tolerant``: a read that raises names nothing)."""
        obj = self._get()
        try:
            back = self._dump(obj) if self._dump is not None else obj.state_dict()
        except Exception:
            if not tolerant:
                raise
            return
        if digest(back) == digest(state):
            self._program.loaded_back.add(self._verify_as)  # type: ignore[arg-type]


def fields_beside(obj: Any, state: Any) -> types.SimpleNamespace:
    """The attributes of a callback that its exported ``state`` (a mapping)
    does not hold: not under their own name, nor as the very object (a list
    exported under another name). A number, a string or None is held by name
    only: equal values of those may be one object by chance."""
    state = state if isinstance(state, Mapping) else {}
    held = {id(v) for v in state.values() if not isinstance(v, _BY_VALUE)}
    return types.SimpleNamespace(**{
        k: v for k, v in vars(obj).items()
        if k not in state and (isinstance(v, _BY_VALUE) or id(v) not in held)})


_BY_VALUE = (int, float, complex, str, bytes, bool, type(None))


def batch_fingerprint(batch: Any) -> torch.Tensor:
    """Every tensor of a batch, flattened into one float64 vector: what the
    step was fed, compared by content (a ``LightningModule`` that calls its
    layers from ``training_step`` never runs its own forward, so the
    tracer's forward hook sees nothing)."""
    tensors: list[torch.Tensor] = []

    def walk(obj: Any) -> None:
        if isinstance(obj, torch.Tensor):
            tensors.append(obj.detach().reshape(-1).to("cpu", torch.float64))
        elif isinstance(obj, Mapping):
            for key in sorted(obj, key=str):
                walk(obj[key])
        elif isinstance(obj, (list, tuple)):
            for item in obj:
                walk(item)

    walk(batch)
    return torch.cat(tensors) if tensors else torch.zeros(0, dtype=torch.float64)


_FRAMEWORKS = ("lightning", "pytorch_lightning", "transformers", "accelerate", "resumecheck")


def user_object(path: str, obj: Any) -> list[tuple[str, Any]]:
    """``obj`` under ``path``, if it is an object of the program's own (a data
    collator it wrote), which the framework holds and no walk of the program
    reaches: state it keeps (a generator it masks with) is looked at."""
    if obj is None or type(obj).__module__.split(".")[0] in (*_FRAMEWORKS, "builtins"):
        return []
    return [(path, obj)]


def user_dataset(where: str, dataset: Any) -> list[tuple[str, Any]]:
    """``dataset`` under ``where (ItsClass)``, where it is the program's own (not
    torch's, nor the datasets library's): the training data a framework holds,
    whose state (an epoch it counts, a generator it draws from) is looked at."""
    if dataset is None or type(dataset).__module__.split(".")[0] in ("torch", "datasets"):
        return []
    return user_object(f"{where} ({type(dataset).__name__})", dataset)


def loop_note(framework: str) -> str:
    """``LoopProgram.loop_note`` for ``framework``."""
    return (f"{FRAMEWORK_RESUME}, through {framework}'s own resume from the "
            "checkpoint its save wrote: your script's own resume code (which checkpoint it "
            "picks, the arguments it builds for the relaunch) did not run, and is not checked "
            "here")


def user_callbacks(callbacks: Any, keep: type | None = None) -> list[tuple[str, Any]]:
    """The callbacks among ``callbacks`` that are the program's own (not a
    framework's, not the adapter's; but a framework's of class ``keep``, one
    the program adds and whose state the framework's checkpoint holds), named
    for a report: state they keep (an EMA of the weights) is looked at like
    the program's own attributes."""
    own = [cb for cb in list(callbacks or [])
           if type(cb).__module__.split(".")[0] not in _FRAMEWORKS
           or (keep is not None and isinstance(cb, keep)
               and type(cb).__module__.split(".")[0] != "resumecheck")]
    # (by class, not by place in the list: a framework's own restore may put a
    # callback back elsewhere, the Trainer's at the end, and the path must name
    # the same one in the uninterrupted run and the resumed: a trial)
    classes = [type(cb).__name__ for cb in own]
    out: list[tuple[str, Any]] = []
    for callback, name in zip(own, classes):
        nth = classes[:len(out) + 1].count(name)
        label = name if classes.count(name) == 1 else f"{name}#{nth}"
        out.append((f"callbacks ({label})", callback))
    return out
