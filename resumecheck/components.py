"""State components: the named pieces of state a checkpoint must carry.

Everything resumable speaks torch's ``Stateful`` protocol
(``state_dict()`` / ``load_state_dict()``), so the engine can capture,
restore, drop and compare components generically. The nine standard names
are constants used everywhere (CLI, JSON, errors); programs may declare
further components of their own (EMA weights, a curriculum counter).
"""

from __future__ import annotations

import copy
import random
import re
import sys
import threading
import traceback
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np
import torch

from resumecheck.compare import digest
from resumecheck.errors import UnknownComponent
from resumecheck.phrases import a_type

__all__ = [
    "CALLBACKS",
    "CONFIG",
    "Attr",
    "DATA_CURSOR",
    "DRAWN_STREAMS",
    "GLOBAL_STEP",
    "LAUNCH_STREAMS",
    "OPTIMIZER",
    "PARAMS",
    "PER_RANK",
    "RNG",
    "SAMPLER_EPOCH",
    "SCALER",
    "SCHEDULER",
    "SCHEDULER_TYPES",
    "STANDARD_COMPONENTS",
    "Component",
    "RNGState",
    "Stateful",
    "Value",
    "asked_state",
    "declared_generators",
    "drawn_streams",
    "generator_state",
    "launch_global_streams",
    "preserved_global_streams",
    "python_state_from_plain",
    "python_state_to_plain",
    "reseed_global_streams",
    "seeded_streams",
    "settle_component",
    "validate_drop",
]

PARAMS = "params"
OPTIMIZER = "optimizer"
SCHEDULER = "scheduler"
SCALER = "scaler"
RNG = "rng"
DATA_CURSOR = "data_cursor"
SAMPLER_EPOCH = "sampler_epoch"
GLOBAL_STEP = "global_step"
CONFIG = "config"
CALLBACKS = "callbacks"
"""The component of the user's own callbacks' states, where a framework adapter
declares it (a framework's checkpoint holds them: Lightning's ``state_dict()``,
the Trainer's ``ExportableState``)."""

STANDARD_COMPONENTS: tuple[str, ...] = (
    PARAMS,
    OPTIMIZER,
    SCHEDULER,
    SCALER,
    RNG,
    DATA_CURSOR,
    SAMPLER_EPOCH,
    GLOBAL_STEP,
    CONFIG,
)

# State that differs from rank to rank: each rank saves and restores its own.
# The rest is replicated (or sharded by the program itself) and saved once.
PER_RANK: frozenset[str] = frozenset({RNG, DATA_CURSOR})


@runtime_checkable
class Stateful(Protocol):
    """torch's checkpointing protocol: what every component speaks."""

    def state_dict(self) -> dict[str, Any]: ...

    def load_state_dict(self, state_dict: dict[str, Any], /) -> Any: ...


@dataclass(frozen=True, slots=True)
class Component:
    """A declared piece of state: its name, the object and whether it is per rank."""

    name: str
    obj: Stateful
    per_rank: bool = False

    @classmethod
    def of(cls, name: str, obj: Any) -> Component:
        if _is_positionless_loader(obj):
            raise TypeError(
                f"component {name!r} is a plain {type(obj).__name__}"
                f"{' prepared by Accelerate' if hasattr(obj, 'use_stateful_dataloader') else ''}, "
                "which keeps no position within the epoch: there is no state to save or "
                "restore. Declare what does keep it: torchdata's StatefulDataLoader (with "
                "Accelerate, DataLoaderConfiguration(use_stateful_dataloader=True)), your "
                "loop's own counters (resumecheck.Attr or resumecheck.Value), or build the "
                "program with resumecheck.frameworks.accelerate.accelerate_program, which "
                "tracks the epoch and the position itself"
            )
        if not _speaks_stateful(obj):
            raise TypeError(
                f"component {name!r} is {a_type(type(obj).__name__)}, which has no "
                "state_dict()/load_state_dict(); wrap it in resumecheck.Value or "
                "give it those two methods"
            )
        return cls(name, obj, per_rank=name in PER_RANK)


def _speaks_stateful(obj: Any) -> bool:
    """``isinstance(obj, Stateful)`` without the protocol check's cost (6 us,
    paid for every component of every build): both methods, callable."""
    return callable(getattr(obj, "state_dict", None)) and \
        callable(getattr(obj, "load_state_dict", None))


def _is_positionless_loader(obj: Any) -> bool:
    """A DataLoader without state: torch's own, or Accelerate's prepared
    wrapper of one (it has state_dict(), which raises)."""
    if not isinstance(obj, torch.utils.data.DataLoader):
        return False
    if getattr(obj, "use_stateful_dataloader", None) is False:
        return True
    return not callable(getattr(obj, "state_dict", None))


class Value:
    """A plain value (a step counter, an epoch, a settings dict) as a component.

    ``Value(0)`` holds an int; read and write ``.value``. Programs use it for
    the small counters that real training loops keep in local variables, and
    which are exactly what checkpoints forget.
    """

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def state_dict(self) -> dict[str, Any]:
        value = self.value
        return {"value": dict(value) if isinstance(value, Mapping) else value}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.value = state_dict["value"]

    def __repr__(self) -> str:
        return f"Value({self.value!r})"


class Attr:
    """An attribute of an object as a component: ``Attr(trainer, "step")``.

    Training loops keep counters (step, epoch, position) and settings as plain
    attributes; this makes one capturable without changing the program.
    ``to_state``/``from_state`` convert values that are not plain data (a
    config dataclass: ``to_state=dataclasses.asdict, from_state=lambda d: Config(**d)``).
    """

    __slots__ = ("from_state", "name", "obj", "to_state")

    def __init__(
        self,
        obj: Any,
        name: str,
        *,
        to_state: Callable[[Any], Any] | None = None,
        from_state: Callable[[Any], Any] | None = None,
    ) -> None:
        if not hasattr(obj, name):
            raise AttributeError(f"{type(obj).__name__} has no attribute {name!r}")
        self.obj = obj
        self.name = name
        self.to_state = to_state
        self.from_state = from_state

    def state_dict(self) -> dict[str, Any]:
        value = getattr(self.obj, self.name)
        return {"value": self.to_state(value) if self.to_state else value}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        value = state_dict["value"]
        setattr(self.obj, self.name, self.from_state(value) if self.from_state else value)

    def __repr__(self) -> str:
        return f"Attr({type(self.obj).__name__}.{self.name})"


_DECLARED_GENERATORS: dict[int, Any] = {}
"""Every generator an ``RNGState`` registered in this process, by id (held,
so that no other object takes its id)."""


def declared_generators() -> set[int]:
    """The ids of the generators ``RNGState`` components registered in this
    process (a check judges them as components: their state is not module state)."""
    return set(_DECLARED_GENERATORS)


class RNGState:
    """Every random stream a step may draw from.

    The process-global streams (Python ``random``, numpy's global stream,
    torch CPU and torch CUDA on every device) plus any ``torch.Generator`` or
    numpy ``Generator`` the program registers (a DataLoader's generator, an
    augmentation stream). ``streams`` narrows the global streams to those the
    program draws from (``streams=("torch",)``), so a stream it never uses is
    not reported as a latent gap of its checkpoint. The state is stored in forms that load under
    ``torch.load(weights_only=True)``: tensors, lists, ints and strings.
    """

    STREAMS = ("python", "numpy", "torch", "cuda")

    def __init__(
        self,
        generators: Mapping[str, torch.Generator | np.random.Generator] | None = None,
        *,
        streams: Iterable[str] = STREAMS,
    ) -> None:
        if generators is not None and not isinstance(generators, Mapping):
            # (a user wrote RNGState(["python"]) for the streams: a bare ValueError of dict())
            names = isinstance(generators, (list, tuple, set)) and all(
                isinstance(g, str) for g in generators)
            raise TypeError(
                f"RNGState's first argument is a dict of the generators your program keeps, "
                f"{{'name': generator}}, not a {type(generators).__name__}: "
                + (f"to choose which global streams it holds, say streams={list(generators)!r} "
                   f"(of {', '.join(self.STREAMS)})" if names else
                   "RNGState({'sampler': generator}) registers one under a name of your choice"))
        for name, gen in (generators or {}).items():
            if not isinstance(gen, (torch.Generator, np.random.Generator)):
                # (trial 191: a numpy RandomState failed the reference run, "Fix the program")
                raise TypeError(
                    f"RNGState({{{name!r}: {type(gen).__name__}}}): RNGState holds torch "
                    "Generators and numpy Generators (numpy.random.default_rng); for a "
                    f"{type(gen).__name__}, declare a component of your own whose state_dict() "
                    "returns its state (a RandomState's get_state()) and whose "
                    "load_state_dict() sets it (set_state())")
        self.generators = dict(generators or {})
        self.streams = tuple(streams)
        _DECLARED_GENERATORS.update((id(g), g) for g in self.generators.values())
        unknown = sorted(set(self.streams) - set(self.STREAMS))
        if unknown:
            raise ValueError(f"streams={unknown}: known streams are {', '.join(self.STREAMS)}")

    def state_dict(self) -> dict[str, Any]:
        state: dict[str, Any] = {}
        if "python" in self.streams:
            state["python"] = python_state_to_plain(random.getstate())
        if "numpy" in self.streams:
            state["numpy"] = _numpy_state_to_plain(np.random.get_state())
        if "torch" in self.streams:
            state["torch"] = torch.get_rng_state()
        if "cuda" in self.streams and torch.cuda.is_available():
            state["cuda"] = list(torch.cuda.get_rng_state_all())
        state["generators"] = {
            name: generator_state(gen) for name, gen in self.generators.items()
        }
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        if "python" in state_dict:
            random.setstate(python_state_from_plain(state_dict["python"]))
        if "numpy" in state_dict:
            np_state = state_dict["numpy"]
            np.random.set_state(
                (
                    np_state["kind"],
                    np_state["keys"].numpy().astype(np.uint32),
                    np_state["pos"],
                    np_state["has_gauss"],
                    np_state["cached_gaussian"],
                )
            )
        if "torch" in state_dict:
            torch.set_rng_state(state_dict["torch"])
        if "cuda" in state_dict and torch.cuda.is_available():
            torch.cuda.set_rng_state_all(state_dict["cuda"])
        saved = state_dict.get("generators", {})
        for name, gen in self.generators.items():
            if name in saved:
                _set_generator_state(gen, saved[name])


def reseed_global_streams(seed: int) -> None:
    """Move every process-global stream somewhere new.

    An in-process restart calls this before building the restarted program, so
    that a missing RNG restore cannot hide behind the stream the first half
    left behind.
    """
    random.seed(seed)
    np.random.seed(seed % 2**32)
    _seed_torch(seed)


def _seed_torch(seed: int) -> None:
    """``torch.manual_seed(seed)``, which also seeds every accelerator, where
    torch sees one; where it sees none, the CPU generator is all there is to
    seed, and seeding it alone skips what ``manual_seed`` does for each
    accelerator backend that is not there: record the caller's whole stack
    for a seed queued until the device starts (several milliseconds under a
    deep stack, twice per run: a tenth of a small run's time)."""
    accelerator = getattr(torch, "accelerator", None)  # (torch >= 2.6)
    if accelerator is None or accelerator.is_available():
        torch.manual_seed(seed)
    else:
        torch.default_generator.manual_seed(seed)


# The accelerator backends whose seeds torch queues, with the caller's stack,
# until their device starts.
_QUEUEING_BACKENDS = ("cuda", "xpu", "mtia")
_SHORT_STACKS_LOCK = threading.Lock()
_SHORT_STACKS_USERS = 0
_SHORT_STACKS_PATCHED: list[Any] = []


class _InnermostFrames:
    """Stands in for the ``traceback`` module where a backend records a queued
    call's stack: the call's innermost frames only (the program's line that
    seeded, and a few callers), each as file, line and function, without the
    source line (reading it is most of the cost: ``linecache`` checks the file
    on disk for every frame)."""

    @staticmethod
    def format_stack(f: Any = None, limit: int | None = None) -> list[str]:
        frame, lines = f or sys._getframe(1), list[str]()
        while frame is not None and len(lines) < 8:
            code = frame.f_code
            lines.append(f'  File "{code.co_filename}", line {frame.f_lineno}, in {code.co_name}\n')
            frame = frame.f_back
        return lines[::-1]


@contextmanager
def short_device_seed_stacks() -> Iterator[None]:
    """While a program runs under the check, a seed it gives an accelerator
    backend that has no device here records only the innermost frames of its
    stack.

    ``torch.manual_seed`` also seeds CUDA, XPU and MTIA; a backend whose device
    has not started queues the seed with the caller's whole formatted stack
    (to name the line should the device fail to start), every call: under a
    check's deep stack that is about a millisecond per seed, which a program
    pays at each build and the check at each restart (a twentieth of a small
    sweep). A backend with no device here never runs what it queued, nor
    shows its stack. Backends with a device are left as they are; segments
    running at once in several threads share this (as ``_exits_raise``)."""
    global _SHORT_STACKS_USERS
    with _SHORT_STACKS_LOCK:
        if _SHORT_STACKS_USERS == 0:
            for name in _QUEUEING_BACKENDS:
                backend = getattr(torch, name, None)
                if (backend is not None and getattr(backend, "traceback", None) is traceback
                        and not backend.is_available()):
                    backend.traceback = _InnermostFrames
                    _SHORT_STACKS_PATCHED.append(backend)
        _SHORT_STACKS_USERS += 1
    try:
        yield
    finally:
        with _SHORT_STACKS_LOCK:
            _SHORT_STACKS_USERS -= 1
            if _SHORT_STACKS_USERS == 0:
                while _SHORT_STACKS_PATCHED:
                    _SHORT_STACKS_PATCHED.pop().traceback = traceback


# A fixed torch seed (torch's former default CPU seed): every in-process run from
# step 0 starts from it. A new interpreter of a recent torch draws its own.
_TORCH_DEFAULT_SEED = 67280421310721


def launch_global_streams(moved: Iterable[str] = ()) -> None:
    """Put every global stream in one fixed state (a run's launch state).

    Every in-process run that starts from step 0 (the reference, the seeds of
    the noise band, the first half of a resumed run) begins here, so a program
    that never seeds a stream still starts each run alike (where two real
    launches of it would differ). ``moved``: these streams (of
    ``LAUNCH_STREAMS``) start from another fixed state instead, as they would
    in another launch: a program that seeds them itself does not notice, one
    that draws from them unseeded does (the seeding check).
    """
    moved = set(moved)
    random.seed(_OTHER_LAUNCH_SEED if "python" in moved else 0)
    np.random.seed(_OTHER_LAUNCH_SEED if "numpy" in moved else 0)
    _seed_torch(_OTHER_LAUNCH_SEED if "torch" in moved else _TORCH_DEFAULT_SEED)


# Another launch's streams (any other value would do).
_OTHER_LAUNCH_SEED = 2_718_281_828

SCHEDULER_TYPES = (torch.optim.lr_scheduler.LRScheduler,
                   torch.optim.lr_scheduler.ReduceLROnPlateau)
"""torch's learning-rate schedulers: each holds the optimizer it steps and counts steps."""

LAUNCH_STREAMS = ("torch", "numpy", "python")
"""The global streams a new interpreter seeds from entropy, which a program
must seed itself for two launches of it to match."""


IMPORT_STREAMS = ("python", "numpy", "torch")
"""The global streams a program's module may seed at import."""


def seeded_streams(after: dict[str, Any], seeded: Iterable[str]) -> dict[str, Any]:
    """Of an ``RNGState(streams=IMPORT_STREAMS).state_dict()`` taken right after
    an import, the ``seeded`` streams, as the import left them (a seed that
    happens to leave a stream where it was, np.random.seed(0) after another
    check seeded it so, is a seed all the same)."""
    return {name: after[name] for name in IMPORT_STREAMS if name in seeded}


DRAWN_STREAMS = ("numpy", "torch")
"""The global streams a module's import is watched drawing from without a seed
(``drawn_streams``). Not Python's: a framework's own import draws from it
(Lightning's), which says nothing of the program."""


def drawn_streams(before: dict[str, Any], after: dict[str, Any],
                  seeded: Iterable[str]) -> list[str]:
    """Of two ``RNGState(streams=IMPORT_STREAMS).state_dict()`` taken around an
    import, the streams in ``DRAWN_STREAMS`` it moved without seeding them: what
    it drew there (a data order or a split made at import) a new interpreter
    draws otherwise."""
    seeded = set(seeded)
    return [name for name in DRAWN_STREAMS
            if name not in seeded and name in before and name in after
            and not _same(before[name], after[name])]


def _same(a: Any, b: Any) -> bool:
    """Two streams' saved states (tensors, and dicts and lists of them) alike."""
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return a.shape == b.shape and bool(torch.equal(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return bool(a == b)


@contextmanager
def seeds_called() -> Iterator[set[str]]:
    """Note which global streams are seeded while the block runs (``random.seed``,
    ``numpy.random.seed``, ``torch.manual_seed``, as a script's top lines call
    them, or through a helper that does): a stream that is only drawn from is
    not noted (a library's import may draw from an unseeded stream; its state
    then differs from one new interpreter to the next)."""
    seeded: set[str] = set()
    owners = [(random, "seed", "python"), (np.random, "seed", "numpy"),
              (torch, "manual_seed", "torch"), (torch.random, "manual_seed", "torch")]
    originals = [getattr(owner, attr) for owner, attr, _ in owners]

    def noting(original: Callable[..., Any], name: str) -> Callable[..., Any]:
        def seed(*args: Any, **kwargs: Any) -> Any:
            seeded.add(name)
            return original(*args, **kwargs)
        return seed

    for (owner, attr, name), original in zip(owners, originals):
        setattr(owner, attr, noting(original, name))
    try:
        yield seeded
    finally:
        for (owner, attr, _), original in zip(owners, originals):
            setattr(owner, attr, original)


@contextmanager
def preserved_global_streams() -> Iterator[None]:
    """Give the caller its random streams back: in-process runs reseed them."""
    saved = RNGState().state_dict()
    try:
        yield
    finally:
        RNGState().load_state_dict(saved)


# -- asking a data loader for its state ------------------------------------------------

# What a StatefulDataLoader sets when its state_dict() makes its next iterator.
_MADE_WHEN_ASKED = ("_iterator", "_initial_iter_for_state_dict", "next_iter_state")


def _makes_an_iterator(obj: Any) -> bool:
    """A data loader whose state_dict() makes its next iterator to answer: a
    StatefulDataLoader that has none (before its first batch, and right after
    its load_state_dict())."""
    return (isinstance(obj, torch.utils.data.DataLoader)
            and all(hasattr(obj, name) for name in _MADE_WHEN_ASKED)
            and getattr(obj, "_iterator") is None)


class _Unmade:
    """A loader as it is before its state_dict() makes an iterator, to put
    back: its fields, its own generators' states (the loader's, its
    sampler's: making an iterator draws a base seed, a shuffling sampler its
    order) and the global streams."""

    def __init__(self, loader: Any) -> None:
        self.loader = loader
        self.fields = {name: copy.deepcopy(getattr(loader, name)) if name == "next_iter_state"
                       else getattr(loader, name) for name in _MADE_WHEN_ASKED}
        sampler = getattr(loader, "sampler", None)
        batches = getattr(getattr(loader, "batch_sampler", None), "sampler", None)
        owned = [getattr(o, "generator", None) for o in (loader, sampler, batches)]
        self.generators = [(g, g.get_state()) for g in
                           {id(g): g for g in owned if isinstance(g, torch.Generator)}.values()]
        self.streams = RNGState().state_dict()

    def drew_from_declared_streams(self) -> bool:
        """Whether making the iterator drew from a global stream or from a
        generator an ``RNGState`` declares: streams the restore sets after it."""
        declared = [(g, state) for g, state in self.generators
                    if _DECLARED_GENERATORS.get(id(g)) is g]
        return digest(self.streams) != digest(RNGState().state_dict()) or any(
            not torch.equal(g.get_state(), state) for g, state in declared)

    def undo(self, streams: bool) -> None:
        made = getattr(self.loader, "_iterator", None)
        shutdown = getattr(made, "_shutdown_workers", None)
        if callable(shutdown):  # (the worker processes it started)
            shutdown()
        for name, value in self.fields.items():
            setattr(self.loader, name, value)
        for generator, state in self.generators:
            generator.set_state(state)
        if streams:
            RNGState().load_state_dict(self.streams)


def asked_state(obj: Stateful) -> dict[str, Any]:
    """A component's ``state_dict()``, asked without a trace in the program.

    A data loader that makes its next iterator to answer (a
    StatefulDataLoader before its first batch, or right after its
    ``load_state_dict()``) would make it before the program has set what that
    iterator reads (a sampler's epoch its loop sets before the next
    ``iter()``), and the loop's next ``iter()`` would take it; making it also
    draws (a base seed, a shuffle's order). Here the iterator, its draws and
    any worker processes it started are undone: the program makes its own
    when it asks, as it does where nothing checks it (trial 144)."""
    if _is_zero(obj):
        return _consolidated(obj)
    if isinstance(obj, torch.optim.Optimizer):
        return _with_stray_state(obj, obj.state_dict())
    if not _makes_an_iterator(obj):
        return obj.state_dict()
    unmade = _Unmade(obj)
    try:
        return obj.state_dict()
    finally:
        unmade.undo(streams=True)


STRAY_STATE = "state under no parameter"
"""The entry a capture adds to an optimizer's state where its live state holds
entries under keys that are no parameter of it (``_with_stray_state``)."""


def _with_stray_state(optimizer: torch.optim.Optimizer, state: dict[str, Any]) -> dict[str, Any]:
    """``state`` with how many entries the optimizer's live state holds under keys
    that are no parameter, where it holds any: a load_state_dict() run before an
    add_param_group leaves the saved state under its indices, and state_dict()
    then packs the new group's parameters onto those indices, so it reads alike
    while the live state lost it (trial 879: a backbone unfrozen after the load
    lost its Adam moments, and every declared state read as restored)."""
    stray = sum(1 for key in optimizer.state if not isinstance(key, torch.Tensor))
    return {**state, STRAY_STATE: stray} if stray else state


def _is_zero(obj: Any) -> bool:
    zero = sys.modules.get("torch.distributed.optim.zero_redundancy_optimizer")
    return zero is not None and isinstance(obj, zero.ZeroRedundancyOptimizer)


def _consolidated(obj: Any) -> dict[str, Any]:
    """A ``ZeroRedundancyOptimizer`` holds on each rank its shard of the state,
    and its ``state_dict()`` answers only on the rank its last
    ``consolidate_state_dict(to=)`` gathered the whole onto: gathered here onto
    every rank of its group in turn, each rank asking its own right after its
    turn, so each rank's answer is the whole state (which its
    ``load_state_dict()`` takes back at any number of ranks). A collective:
    every rank asks its components at the same moments (a build, each
    capture). (A trial: declared as the optimizer, the check failed at its
    first capture and told the user to fix the program.)"""
    dist = torch.distributed
    state: dict[str, Any] = {}
    for rank in dist.get_process_group_ranks(obj.process_group or dist.group.WORLD):
        obj.consolidate_state_dict(to=rank)
        if rank == dist.get_rank():
            state = obj.state_dict()
    return state


def settle_component(obj: Stateful) -> None:
    """At a restore, before the random streams are set: have a component make
    now what it makes lazily (its ``state_dict()`` does), as a correct resume
    does before it restores the streams. A data loader's next iterator is kept
    only where making it drew from a stream the restore sets after it (a
    global stream: the base seed of a loader without a generator of its own;
    a generator an ``RNGState`` declares): the draw is then before that stream
    is set, not after. One whose making draws from neither is left for the
    program to make when it asks, after whatever it sets first (a sampler's
    epoch): its own generator's draw is the same then (trial 144). (Not of a
    ``ZeroRedundancyOptimizer``: it makes nothing lazily, and asking it is a
    collective, see ``_consolidated``.)"""
    if not _makes_an_iterator(obj):
        if not _is_zero(obj):
            obj.state_dict()
        return
    unmade = _Unmade(obj)
    obj.state_dict()
    if not unmade.drew_from_declared_streams():
        unmade.undo(streams=False)


def validate_drop(drop: Iterable[str], known: Iterable[str]) -> frozenset[str]:
    """Check that every name to drop is a component the program declares."""
    known = tuple(known)
    names = frozenset(drop)
    for name in sorted(names):
        if name not in known:
            raise UnknownComponent(name, known)
    return names


def python_state_to_plain(state: tuple) -> dict[str, Any]:
    """Python's stream as ``weights_only``-safe data: its 625 words as one int64
    tensor (not 625 ints: every save, load and digest of a capture walks them)."""
    version, internal, gauss = state
    words = torch.from_numpy(np.fromiter(internal, dtype=np.int64, count=len(internal)))
    return {"version": version, "internal": words, "gauss": gauss}


def _numpy_state_to_plain(state: Any) -> dict[str, Any]:
    version, keys, pos, has_gauss, cached = state
    return {"kind": version, "keys": torch.from_numpy(np.array(keys, dtype=np.int64)),
            "pos": int(pos), "has_gauss": int(has_gauss), "cached_gaussian": float(cached)}


def seeded_state(stream: str, seed: int) -> Any:
    """The state a global stream (``python``, ``numpy``, ``torch``) has right
    after it is seeded with ``seed``, as ``RNGState.state_dict`` gives it; the
    streams themselves are untouched. None: another stream, or a seed it
    does not take."""
    try:
        if stream == "torch":
            return torch.Generator().manual_seed(seed).get_state()
        if stream == "python":
            return python_state_to_plain(random.Random(seed).getstate())
        if stream == "numpy":
            return _numpy_state_to_plain(np.random.RandomState(seed).get_state())
    except (ValueError, RuntimeError, OverflowError):  # (numpy takes seeds below 2**32)
        return None
    return None


def python_state_from_plain(plain: dict[str, Any]) -> tuple:
    """The ``random.setstate`` tuple (``internal`` a tensor, or a list as
    checkpoints written before it was one hold it)."""
    internal = plain["internal"]
    words = internal.tolist() if isinstance(internal, torch.Tensor) else list(internal)
    return (plain["version"], tuple(words), plain["gauss"])


def generator_state(gen: torch.Generator | np.random.Generator) -> Any:
    """A registered generator's state, in a form a checkpoint holds."""
    if isinstance(gen, torch.Generator):
        return gen.get_state()
    if isinstance(gen, np.random.Generator):
        return _plain(gen.bit_generator.state)
    raise TypeError(f"cannot capture a {type(gen).__name__} as a random stream")


def _set_generator_state(gen: torch.Generator | np.random.Generator, state: Any) -> None:
    if isinstance(gen, torch.Generator):
        gen.set_state(state)
    else:
        gen.bit_generator.state = state


def _plain(value: Any) -> Any:
    """numpy's bit-generator state holds numpy ints; make them Python ints."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, np.integer):
        return int(value)
    return value


_RANK_NAME = re.compile(r"^(?P<name>.+)\[rank (?P<rank>\d+)\]$")


def rank_name(name: str, rank: int) -> str:
    """``rng[rank 1]``: a per-rank component or quantity of one rank of many."""
    return f"{name}[rank {rank}]"


def split_rank_name(name: str) -> tuple[str, int | None]:
    """``("rng", 1)`` for ``rng[rank 1]``; ``(name, None)`` for a name of no rank."""
    m = _RANK_NAME.match(name)
    return (m["name"], int(m["rank"])) if m else (name, None)
