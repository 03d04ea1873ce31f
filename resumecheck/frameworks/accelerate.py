"""HuggingFace Accelerate: a program from an ``Accelerator`` and what the user prepared.

The user keeps their setup (everything up to ``accelerator.prepare``) and the
body of their loop; ``accelerate_program`` runs the loop one optimizer step
at a time and checkpoints with Accelerate's own ``save_state`` /
``load_state``, resuming mid-epoch the way Accelerate's documentation does
(``skip_first_batches`` on a plain loader; the restored loader state on a
``use_stateful_dataloader=True`` one)::

    from resumecheck.frameworks.accelerate import accelerate_program

    def build(settings):
        accelerator, model, optimizer, loader, scheduler = train.setup(**settings)
        def step(batch):
            loss = train.loss(model, batch)
            accelerator.backward(loss)
            optimizer.step(); scheduler.step(); optimizer.zero_grad()
            return loss
        return accelerate_program(accelerator, model=model, optimizer=optimizer,
                                  loader=loader, scheduler=scheduler, step=step)

What the audited checkpoint holds is exactly what Accelerate saves: the
prepared models, optimizers, schedulers and scaler, the global random
streams, a stateful loader's state, and the objects registered with
``register_for_checkpointing`` — here the loop's epoch and the number of
batches consumed in it, which the loop needs to resume mid-epoch (a user's
loop keeps them in the checkpoint folder's name or a registered object).

The engine's own capture, the reference for the diagnosis, adds what a
complete checkpoint would need besides (``data_cursor``): the state of the
stream the epoch's shuffle was drawn from and, when making a batch draws from
a global stream, the streams the batch fetched ahead was made from. The
engine rebuilds the loader's iterator exactly where the reference's was by
replaying the epoch, and puts every stream back after.

Accelerate is imported only when a program is built.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import torch

from resumecheck.components import (
    DATA_CURSOR, OPTIMIZER, PARAMS, RNG, SAMPLER_EPOCH, SCALER, SCHEDULER, Attr, RNGState,
)
from resumecheck.errors import InvalidArgument, TargetError
from resumecheck.frameworks import require
from resumecheck.frameworks._loop import batch_fingerprint, user_dataset
from resumecheck.phrases import ACCELERATE_DATASET, ADAPTER_LOOP, accelerate_scheduler_todo
from resumecheck.program import StepOutput, accelerate_kept
from resumecheck.undeclared import LOADER_EPOCH_COUNT, seeds_no_worker

__all__ = ["AccelerateProgram", "accelerate_program"]


def accelerate_program(
    accelerator: Any,
    *,
    model: torch.nn.Module,
    optimizer: Any,
    loader: Any,
    step: Callable[[Any], Any],
    scheduler: Any = None,
    samples: Callable[[Any], Any] | None = None,
    extra: Mapping[str, Any] | None = None,
    set_epoch: bool = True,
    epoch_start: Callable[[int], Any] | None = None,
) -> AccelerateProgram:
    """A resumecheck program from an Accelerator and the objects ``prepare`` returned.

    ``step(batch)`` is the body of the user's loop: forward, ``accelerator.backward``,
    ``optimizer.step()``, ``scheduler.step()``, ``zero_grad()``; it returns the loss.
    ``samples(batch)`` says which samples a batch holds (default: the batch's
    tensors themselves, so the data order is checked by content). ``extra``
    declares further components of the user's own (EMA weights, a counter);
    Accelerate's checkpoint holds them only if the user registers them with
    ``accelerator.register_for_checkpointing``, as their loop must.
    ``set_epoch``: the loop calls ``loader.set_epoch(epoch)`` at each epoch's
    start, as a loop that resumes must (a prepared loader counts its epochs
    itself, from 0 in every new process: after a resume, a loop without it
    reads another epoch's order); False checks a loop that iterates the
    loader as it is (``for batch in loader``), without it.
    ``epoch_start(epoch)``: the head of the user's loop, called at each epoch's
    start before its iterator is made (and before ``set_epoch``), as the loop
    runs it: a loader's generator seeded again each epoch
    (``lambda epoch: generator.manual_seed(seed + epoch)``), which Accelerate's
    checkpoint does not keep.
    """
    return AccelerateProgram(accelerator, model=model, optimizer=optimizer, loader=loader,
                             step=step, scheduler=scheduler, samples=samples, extra=extra,
                             set_epoch=set_epoch, epoch_start=epoch_start)


def _check_arguments(accelerator: Any, step: Any, samples: Any, loader: Any,
                     epoch_start: Any = None) -> None:
    if not callable(getattr(accelerator, "save_state", None)):
        raise InvalidArgument("accelerator", accelerator, "expected an accelerate.Accelerator")
    if not callable(step):
        raise InvalidArgument("step", step, "expected a function of one batch returning the loss")
    if samples is not None and not callable(samples):
        raise InvalidArgument("samples", samples, "expected a function of one batch")
    if epoch_start is not None and not callable(epoch_start):
        raise InvalidArgument("epoch_start", epoch_start,
                              "expected a function of the epoch, run at each epoch's start")
    try:
        len(loader)
    except TypeError:
        # (trial 415: "Fix the factory", of the loader prepare() returned)
        raise TargetError(
            "accelerate_program", "the loader has no length (a loader over an IterableDataset), "
            "which resumecheck's Accelerate adapter does not drive yet (a limit of resumecheck, "
            "not a fault of your program, which it has not judged)",
            "To check it now, wrap your own loop, save and load as a program of your own "
            "(README, 'Checking your own program'): a class with components(), train_step(), "
            "save() and load(), its data position declared as a component") from None


LOOP_NOTE = (f"{ADAPTER_LOOP}, around your step function: your script's own "
             "resume code (where it restarts, what it skips with skip_first_batches, counters it "
             "keeps outside the objects registered with Accelerate) did not run, and is not "
             "checked here: wrap your own loop, save and load as a program to check it")
"""What the program's own resume says of the loop (``BuiltProgram.boundaries``)."""


def _steps_per_epoch(program: AccelerateProgram) -> int:
    """``AccelerateProgram.steps_per_epoch``: optimizer steps per epoch
    (Accelerate steps at the end of an epoch too)."""
    return -(-len(program.loader) // max(1, program.accumulation))


def _counted_itself(program: AccelerateProgram, value: Any) -> None:
    """Setting ``steps_per_epoch`` on the adapter (trial 179: set as the README's
    Epochs bullet says of a program of one's own, "property ... has no setter")."""
    raise AttributeError(
        f"steps_per_epoch={value!r}: accelerate_program counts its epochs itself, "
        f"{program.steps_per_epoch} optimizer steps each (the prepared loader's "
        f"{len(program.loader)} batches, gradient accumulation {program.accumulation}): "
        "leave it out")


class AccelerateProgram:
    """An Accelerate training loop driven one optimizer step at a time."""

    restored_by, saved_by, loop_note = ("Accelerate's load_state()", "Accelerate's save_state()",
                                        LOOP_NOTE)  # (words of the report)
    loop_counters = ("epoch", "batch")  # (its own, saved by _Progress: no state of the user's)

    def __init__(
        self,
        accelerator: Any,
        *,
        model: torch.nn.Module,
        optimizer: Any,
        loader: Any,
        step: Callable[[Any], Any],
        scheduler: Any = None,
        samples: Callable[[Any], Any] | None = None,
        extra: Mapping[str, Any] | None = None,
        set_epoch: bool = True,
        epoch_start: Callable[[int], Any] | None = None,
    ) -> None:
        require("accelerate", "resumecheck.frameworks.accelerate")
        _check_arguments(accelerator, step, samples, loader, epoch_start)
        self.accelerator, self.model, self.optimizer = accelerator, model, optimizer
        self.scheduler, self.loader = scheduler, loader
        self.step_fn = step
        self.samples_fn = samples
        self.extra = dict(extra or {})
        # at each epoch's start: the loop calls loader.set_epoch(epoch); the loop's head
        self.sets_epoch, self.epoch_start = set_epoch, epoch_start
        # the epoch the loop is in, and the batches consumed in it (Accelerate keeps neither)
        self.epoch, self.batch = 0, 0
        self.stateful = bool(getattr(loader, "use_stateful_dataloader", False))
        self.accumulation = int(getattr(accelerator, "gradient_accumulation_steps", 1) or 1)
        self._iter: Iterator[Any] | None = None
        self._order: dict[str, torch.Tensor] = {}  # the order's stream at this epoch's start
        self._fetch_draws = False  # making a batch draws from a global stream
        self._fetches = 0  # next() calls on this iterator
        self._lookahead: dict[str, Any] | None = None  # the streams the last fetch began from
        self._resume: tuple[str, Any] | None = None
        self.progress = _Progress(self)
        accelerator.register_for_checkpointing(self.progress)

    # -- the program protocol ---------------------------------------------

    steps_per_epoch = property(_steps_per_epoch, _counted_itself)

    def components(self) -> dict[str, Any]:
        comps: dict[str, Any] = {PARAMS: self.model, OPTIMIZER: self.optimizer}
        if self.scheduler is not None:
            comps[SCHEDULER] = self.scheduler
        if getattr(self.accelerator, "scaler", None) is not None:
            comps[SCALER] = self.accelerator.scaler
        comps[RNG] = _loader_streams(self.loader)
        comps[DATA_CURSOR] = _Cursor(self)
        comps[SAMPLER_EPOCH] = _Epoch(self)
        comps.update(self.extra)
        return comps

    def checkpoint_advice(self) -> dict[str, str]:
        """What of yours the Accelerator's checkpoint does not hold (``_unsaved``)."""
        return _unsaved(self.accelerator, self.extra, self.scheduler,
                        None if self.epoch_start is not None else self.loader)

    def undeclared_roots(self) -> list[tuple[str, Any]]:
        """What your step function keeps (an EMA it updates), looked at; without
        ``set_epoch``, the loader's own epoch count, which no checkpoint holds."""
        iteration = getattr(self.loader, "iteration", None)
        # (trial 382: a dataset's own crop generator)
        own = user_dataset(ACCELERATE_DATASET, getattr(self.loader, "dataset", None))
        return [*_closure("step", self.step_fn), *_closure("samples", self.samples_fn), *own,
                *([(LOADER_EPOCH_COUNT, iteration)] if not self.sets_epoch and isinstance(
                    iteration, int) and _epoch_orders(self.loader) else [])]

    def train_step(self) -> StepOutput:
        """One optimizer step: one batch, or under gradient accumulation
        (``step`` uses ``accelerator.accumulate``) the micro-batches up to the
        one after which the optimizer really stepped."""
        losses, samples = [], []
        for _ in range(max(1, self.accumulation)):
            batch = self._next_batch()
            losses.append(self.step_fn(batch))
            self.batch += 1
            samples.append(torch.as_tensor(self.samples_fn(batch))
                           if self.samples_fn is not None else batch_fingerprint(batch))
            if self.accumulation <= 1 or self.accelerator.sync_gradients:
                break
        if len(losses) == 1:
            return StepOutput(loss=losses[0], samples=samples[0])
        loss = torch.stack([torch.as_tensor(x).detach().float() for x in losses]).mean()
        return StepOutput(loss=loss, samples=torch.cat([x.reshape(-1).double() for x in samples]))

    def save(self, path: str) -> None:
        with self._named_checkpoints():
            self.accelerator.save_state(path)

    def load(self, path: str) -> None:
        with self._named_checkpoints():
            self.accelerator.load_state(path)

    @contextmanager
    def _named_checkpoints(self) -> Iterator[None]:
        """Save and load at the engine's path even when the user's
        ProjectConfiguration names checkpoints itself: only the folder's name
        changes, never what is saved (and no checkpoint of the user's is rotated away)."""
        config: Any = getattr(self.accelerator, "project_configuration", None)
        automatic = getattr(config, "automatic_checkpoint_naming", False)
        if automatic:
            config.automatic_checkpoint_naming = False
        try:
            yield
        finally:
            if automatic:
                config.automatic_checkpoint_naming = True

    # -- the loop -----------------------------------------------------------

    def _next_batch(self) -> Any:
        self._realize()
        if self._iter is None:
            self._start_epoch()
        assert self._iter is not None
        try:
            return self._fetch()
        except StopIteration:
            self.epoch += 1
            self.batch = 0
            self._start_epoch()
            return self._fetch()

    def _fetch(self) -> Any:
        """``next()`` on the loader, noting the streams it started from. A
        prepared loader fetches one batch ahead: the batch a step will get next
        was made during this call. When the dataset draws from a global stream
        as it makes a batch (augmentation), the state the call started from is
        part of where the data is (``data_cursor``'s look-ahead)."""
        assert self._iter is not None
        before = _global_streams()
        batch = next(self._iter)
        self._fetches += 1
        if self._fetches > 1 and not self._fetch_draws:  # an iterator's first call draws its order
            after = _global_streams()
            self._fetch_draws = any(not _same(before[k], after[k]) for k in before)
        self._lookahead = before
        return batch

    def _start_epoch(self) -> None:
        """Start iterating this epoch, as the user's ``for batch in loader`` does.

        After Accelerate's ``load_state`` the first epoch skips the batches
        already consumed, with ``skip_first_batches`` (a stateful loader
        resumes from its own restored state instead).
        """
        if self.epoch_start is not None:
            self.epoch_start(self.epoch)
        self._order = _order_streams(self.loader)
        if self.sets_epoch and callable(getattr(self.loader, "set_epoch", None)):
            self.loader.set_epoch(self.epoch)
        active = self.loader
        resume, self._resume = self._resume, None
        if resume is not None and resume[0] == "skip" and resume[1]:
            active = self.accelerator.skip_first_batches(self.loader, resume[1])
        self._iter = iter(active)
        self._fetches = 0

    def _realize(self) -> None:
        """Rebuild the iterator where the engine's capture says it was.

        Replays this epoch from the stream its order was drawn from, in the
        same number of ``next()`` calls, so the loader's look-ahead and its
        seed draw happen as they did; every random stream is put back after.
        """
        if self._resume is None or self._resume[0] != "replay":
            return
        order, consumed, lookahead = self._resume[1]
        self._resume = None
        streams = _loader_streams(self.loader)
        saved = streams.state_dict()
        base: Any = getattr(self.loader, "base_dataloader", None)
        if self.epoch > 0 and getattr(base, "_initial_iter_for_state_dict", False):
            # A StatefulDataLoader reuses the iterator its first state_dict()
            # made (at prepare), once. The reference's loader had been
            # iterated before this epoch: it made a new iterator, drawing a
            # new base seed before the order; so must the replay.
            base._initial_iter_for_state_dict = False
        try:
            _set_order_streams(self.loader, order)
            self._start_epoch()
            self._order = order
            assert self._iter is not None
            for i in range(consumed):
                if i == consumed - 1 and lookahead is not None:
                    RNGState(streams=_LOOKAHEAD_STREAMS).load_state_dict(lookahead)
                next(self._iter)
            self._fetch_draws = lookahead is not None
            self._lookahead = lookahead
            self._fetches = consumed
        finally:
            streams.load_state_dict(saved)


def _unsaved(accelerator: Any, extra: Mapping[str, Any], scheduler: Any,
             headless: Any = None) -> dict[str, str]:
    """Your ``extra`` components and scheduler that the Accelerator does not
    save, and what makes it: its ``save_state()`` holds only the objects
    registered with it and the schedulers prepared (a trial's lost EMA was
    confirmed, with no word of how to keep it). ``headless``: the loader of a
    loop with no ``epoch_start``, where a plain shuffled loader draws each
    epoch's order from a generator of its own, which no checkpoint holds
    (trial 408's loop seeded it at each epoch's start; the check's did not)."""
    objects = list(getattr(accelerator, "_custom_objects", ()))
    registered = {id(obj) for obj in objects}
    advice = {name: _register_advice(name, obj, objects)
              for name, obj in extra.items() if id(obj) not in registered}
    if scheduler is not None and id(scheduler) not in accelerate_kept(accelerator):
        advice[SCHEDULER] = accelerate_scheduler_todo("scheduler")
    if headless is not None and "the sampler's generator" in _order_streams(headless):
        advice[DATA_CURSOR] = (
            "Accelerate's save_state() does not hold the generator a plain shuffled loader "
            "draws each epoch's order from: seed it again at each epoch's start in your loop, "
            "and give that here as accelerate_program(..., epoch_start=lambda epoch: "
            "generator.manual_seed(seed + epoch)), or prepare the loader with "
            "use_seedable_sampler=True")
    return advice


def _epoch_orders(loader: Any) -> bool:
    """Whether a prepared loader's epoch count reaches what orders its data (a
    sampler or dataset with ``set_epoch``, as Accelerate's own set_epoch looks;
    an unshuffled loader's does not: a trial was told of a shuffle it had not)."""
    batches = getattr(loader, "batch_sampler", None)
    inner = getattr(batches, "batch_sampler", None)
    return any(callable(getattr(o, "set_epoch", None)) for o in (
        batches, getattr(batches, "sampler", None), getattr(inner, "sampler", None),
        getattr(loader, "dataset", None)) if o is not None)


def _register_advice(name: str, obj: Any, registered: list[Any]) -> str:
    """How to make Accelerate's checkpoint hold ``extra[name]``. An ``RNGState``
    is the check's declaration, never registered itself: the generators it
    names must be saved by an object of yours that is (a trial was told to
    register the declaration, whose generator its registered owner's
    state_dict() left out)."""
    if isinstance(obj, Attr) and any(o is obj.obj for o in registered):
        # (a trial: an Attr of its registered Progress was told to register
        # "global_step", a name in the check's declaration only)
        return (f"Accelerate's save_state() holds `{obj.name}` only through the object "
                f"registered with it: your registered {type(obj.obj).__name__} keeps it, and "
                f"its state_dict() must return `{obj.name}` and its load_state_dict() set it "
                "back")
    if isinstance(obj, Attr):
        kind = type(obj.obj).__name__
        # (trial 865 read it as "register your State", which has neither method)
        has = all(callable(getattr(obj.obj, m, None)) for m in ("state_dict", "load_state_dict"))
        what = (f"the object that keeps `{obj.name}` (your {kind}), whose state_dict() must "
                "return it and whose load_state_dict() set it back" if has else
                f"an object of yours whose state_dict() returns `{obj.name}` of your {kind} "
                "and whose load_state_dict() sets it back there (your "
                f"{kind} has no state_dict() of its own to register)")
        return (f"Accelerate's save_state() holds only what is registered with it: register "
                f"{what}: accelerator.register_for_checkpointing(...) where you build it, "
                "before the run's first save_state() and every load_state()")
    if not isinstance(obj, RNGState):
        return (f"Accelerate's save_state() holds only what is registered with it: "
                f"accelerator.register_for_checkpointing({name}) where you build it, "
                "before the run's first save_state() and every load_state()")
    held = {id(g) for g in obj.generators.values()}
    owners = sorted({type(o).__name__ for o in registered
                     if any(id(v) in held for v in getattr(o, "__dict__", {}).values())})
    if owners:
        return (f"Accelerate's save_state() holds a generator only through an object registered "
                f"with it: your registered {', '.join(owners)} keeps it, and its state_dict() "
                "must return the generator's get_state() and its load_state_dict() set it "
                "back with set_state()")
    return ("Accelerate's save_state() holds a generator only through an object registered with "
            "it: register the object that keeps it (accelerator.register_for_checkpointing), "
            "whose state_dict() returns the generator's get_state() and whose load_state_dict() "
            "sets it back with set_state()")


def _closure(label: str, fn: Any) -> list[tuple[str, Any]]:
    """The objects a function keeps in its closure, named ``label.variable``."""
    out = []
    cells = getattr(fn, "__closure__", None) or ()
    names = getattr(getattr(fn, "__code__", None), "co_freevars", ())
    for name, cell in zip(names, cells):
        try:
            out.append((f"{label}.{name}", cell.cell_contents))
        except ValueError:  # (an empty cell)
            continue
    return out


class _Progress:
    """What the loop registers with ``accelerator.register_for_checkpointing``:
    the epoch and the batches consumed in it (Accelerate saves neither)."""

    def __init__(self, program: AccelerateProgram) -> None:
        self.program = program

    def state_dict(self) -> dict[str, int]:
        return {"epoch": self.program.epoch, "batch": self.program.batch}

    def load_state_dict(self, state: Mapping[str, int]) -> None:
        p = self.program
        p.epoch, p.batch = int(state["epoch"]), int(state["batch"])
        p._iter = None
        p._resume = None if p.stateful else ("skip", p.batch)


# How the diagnosis names it: "data_cursor: epoch shuffle drawn from torch's
# global stream differs".
_ORDER_KEY = "epoch shuffle drawn from "
_GLOBAL = "torch's global stream"
_LOOKAHEAD_KEY = "batch fetched ahead drawn from"
_LOOKAHEAD_STREAMS = ("python", "numpy", "torch")


class _Cursor:
    """``data_cursor`` in the engine's capture: the batches consumed in this
    epoch and the stream state the epoch's order was drawn from."""

    def __init__(self, program: AccelerateProgram) -> None:
        self.program = program

    def state_dict(self) -> dict[str, Any]:
        p = self.program
        p._realize()  # the engine settles components before it restores the streams
        # No iterator yet (a fresh start, or Accelerate's load_state): the
        # order will be drawn from the streams as they are now.
        order = p._order if p._iter is not None else _order_streams(p.loader)
        state: dict[str, Any] = {"batch": p.batch}
        state.update({_ORDER_KEY + k: v.clone() for k, v in order.items()})
        if p._fetch_draws and p._iter is not None and p._lookahead is not None:
            # the batch fetched ahead was made from these streams
            state[_LOOKAHEAD_KEY] = p._lookahead
        return state

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        p = self.program
        p.batch = int(state["batch"])
        order = {k.removeprefix(_ORDER_KEY): v for k, v in state.items()
                 if k.startswith(_ORDER_KEY)}
        p._iter = None
        p._resume = ("replay", (order, p.batch, state.get(_LOOKAHEAD_KEY)))


class _Epoch:
    """``sampler_epoch``: the epoch the loop is in (it sets the sampler's epoch)."""

    def __init__(self, program: AccelerateProgram) -> None:
        self.program = program

    def state_dict(self) -> dict[str, int]:
        return {"value": self.program.epoch}

    def load_state_dict(self, state: Mapping[str, int]) -> None:
        self.program.epoch = int(state["value"])


def _loader_streams(loader: Any) -> RNGState:
    """The loader's own random streams (its generator, when it has one and it
    draws more than the base seed of workers the loader does not have: trial
    525's, beside a sampler of its own, ended a draw behind after a correct
    resume, and the report read NOT EQUIVALENT for a stream nothing read)."""
    generator = getattr(loader, "generator", None)
    if isinstance(generator, torch.Generator) and seeds_no_worker(loader, generator):
        generator = None
    return RNGState({"loader": generator} if generator is not None else None)

def _sampler(loader: Any) -> Any:
    """The index sampler under Accelerate's batch-sampler wrappers."""
    obj = getattr(loader, "batch_sampler", None) or getattr(loader, "sampler", None)
    for _ in range(4):
        inner = getattr(obj, "batch_sampler", None) or getattr(obj, "sampler", None)
        if inner is None:
            break
        obj = inner
    return obj

def _order_streams(loader: Any) -> dict[str, torch.Tensor]:
    """The state of the stream this epoch's order will be drawn from.

    A ``RandomSampler`` draws its permutation from its generator, or
    from torch's global stream when it has none; Accelerate's
    ``SeedableRandomSampler`` (``use_seedable_sampler=True``) and a
    sequential sampler need nothing but the epoch; of a sampler of the
    program's own, none is known (its order shows in the data all the same).
    """
    from accelerate.data_loader import SeedableRandomSampler

    sampler = _sampler(loader)
    if isinstance(sampler, (SeedableRandomSampler, torch.utils.data.SequentialSampler)):
        return {}
    generator = getattr(sampler, "generator", None)
    if isinstance(generator, torch.Generator):
        return {"the sampler's generator": generator.get_state()}
    # (trial 525: a sampler of the program's own, seeded from its epoch, read "epoch
    # shuffle drawn from torch's global stream differs (confirmed)")
    return ({_GLOBAL: torch.get_rng_state()}
            if isinstance(sampler, torch.utils.data.RandomSampler) else {})

def _set_order_streams(loader: Any, order: Mapping[str, torch.Tensor]) -> None:
    """Put back the stream an epoch's order is drawn from."""
    if _GLOBAL in order:
        torch.set_rng_state(order[_GLOBAL])
    generator = getattr(_sampler(loader), "generator", None)
    key = "the sampler's generator"
    if key in order and isinstance(generator, torch.Generator):
        generator.set_state(order[key])


def _global_streams() -> dict[str, Any]:
    state = RNGState(streams=_LOOKAHEAD_STREAMS).state_dict()
    state.pop("generators", None)
    return state


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and torch.equal(a, b)
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return bool(a == b)

