"""The engine's own checkpoint file: what a capture holds, and loading it safely.

A capture is ``{"format", "rank", "world_size", "meta", "components"}``,
written with ``torch.save`` and read with ``torch.load(weights_only=True)``,
so restored state never aliases live objects and an untrusted file cannot
run code. A capture whose state will not load that way is refused when it is
written, naming the component and the value.
"""

from __future__ import annotations

import collections
import contextlib
import gc
import hashlib
import importlib
import logging
import os
import random
import re
import signal
import sys
import threading
from collections.abc import Iterable, Iterator
from typing import Any

import torch

from resumecheck.compare import digest, flatten_state
from resumecheck.components import (
    OPTIMIZER, PARAMS, RNG, SCHEDULER_TYPES, Attr, asked_state, preserved_global_streams,
)
from resumecheck.errors import CheckpointError, ComponentStateFailed, ResumecheckError
from resumecheck.module_state import raised
from resumecheck.program import BuiltProgram
from resumecheck.trace import unwrap_optimizer

__all__ = ["CHECKPOINT_FORMAT", "add_loadable_shapes", "capture", "capture_meta",
           "forget_captures_under", "keep_written", "leaf_digests", "load_checkpoint",
           "loadable_shapes", "save_capture"]

CHECKPOINT_FORMAT = "resumecheck.checkpoint/1"


def capture(built: BuiltProgram) -> dict[str, Any]:
    """The engine's own checkpoint of every declared component."""
    # Reading the meta first reaches a framework's optimizer, which starts its
    # loop: the loop restores the checkpoint (the random streams too) and runs
    # its hooks before any state is read. The meta is read again after the
    # states: a hook may have set modes or frozen layers again (a trial's
    # callback froze them in on_train_begin, and its resume was called a gap).
    capture_meta(built)
    components = _states(built)
    meta = capture_meta(built)
    if held := _held_deques(built, components):
        meta["held_deque_maxlen"] = held
    return {
        "format": CHECKPOINT_FORMAT,
        "rank": _rank_of_process(),
        "world_size": _world_size(),
        "meta": meta,
        "components": components,
    }


def _held_deques(built: BuiltProgram, states: dict[str, Any]) -> dict[str, list[Any]]:
    """For a component of the program's own whose state lists the very items
    of a deque it reaches (an attribute, or an attribute's attribute: a
    ``Queue`` over ``state.queue``), where that deque is and its maxlen: a
    load() that makes it again without one lets it grow, and the items alike
    right after the load say nothing of it (a trial's memory queue)."""
    held: dict[str, list[Any]] = {}
    for c in built.components:
        if isinstance(c.obj, (Attr, torch.nn.Module)) or unwrap_optimizer(c.obj) is not None:
            continue
        state = states.get(c.name)
        lists = [v for v in (state, *(state.values() if isinstance(state, dict) else ()))
                 if isinstance(v, (list, tuple)) and v]
        for path, queue in _deques_under(c.obj):
            if any(len(v) == len(queue) and all(a is b for a, b in zip(v, queue))
                   for v in lists):
                held[c.name] = [path, queue.maxlen]
                break
    return held


def _deques_under(obj: Any) -> Iterator[tuple[str, collections.deque[Any]]]:
    """The deques among an object's attributes and its attributes' attributes."""
    for name, value in _fields(obj):
        if isinstance(value, collections.deque):
            yield name, value
        elif not isinstance(value, (torch.nn.Module, torch.Tensor, type)):
            for inner, held in _fields(value):
                if isinstance(held, collections.deque):
                    yield f"{name}.{inner}", held


def _fields(obj: Any) -> list[tuple[str, Any]]:
    fields = getattr(obj, "__dict__", None)
    return list(fields.items()) if isinstance(fields, dict) else []


def leaf_digests(built: BuiltProgram, stepped: bool = False) -> dict[str, dict[str, str]]:
    """Each declared component's state, leaf by leaf digested (as the build made
    it: ``SegmentResult.built_leaves``; after a step, ``stepped``:
    ``leaves_after``). Asked as a capture asks it (``asked_state``: a loader's
    iterator made to answer is undone), the global streams given back; not of
    a framework's program before a step, whose loop starts when a component is
    first asked (empty; after a step its loop is parked, and answers as it does
    a capture: trial 894's EMA callback, wrong from the restart's first step,
    was said to differ at the end only), nor of a component whose state_dict()
    raises here (left out)."""
    if hasattr(built.program, "loaded_back") and not stepped:
        return {}
    out: dict[str, dict[str, str]] = {}
    with preserved_global_streams():
        for c in built.components:
            try:
                state = asked_state(c.obj)
            except Exception:  # (asked again at the capture, which says why it fails)
                continue
            out[c.name] = {path: digest(leaf) for path, leaf in flatten_state(state)}
    return out


def _rank_of_process() -> int:
    dist = torch.distributed
    return dist.get_rank() if dist.is_available() and dist.is_initialized() else 0


def _world_size() -> int:
    dist = torch.distributed
    return dist.get_world_size() if dist.is_available() and dist.is_initialized() else 1


def _states(built: BuiltProgram) -> dict[str, Any]:
    """Every component's state_dict(), the random streams first: another
    component's state_dict() may draw (a lazily created loader iterator), and
    the capture must hold the streams as they were at the checkpoint."""
    first = sorted(built.components, key=lambda c: c.name != RNG)
    states = {}
    for c in first:
        try:
            states[c.name] = asked_state(c.obj)
        except ResumecheckError:  # (the check's own: a bound that ran out, ...)
            raise
        except Exception as exc:  # (a trial's was told to fix its program)
            raise ComponentStateFailed(c.name, type(c.obj).__name__, raised(exc)) from exc
    return {c.name: states[c.name] for c in built.components}


def capture_meta(built: BuiltProgram) -> dict[str, Any]:
    """What comparisons need beside the state: the optimizer's parameter names,
    which modules of each declared module are in eval mode (a module's
    state_dict() leaves its mode out; dropout and batch norm act on it), and
    which of its parameters are frozen (``requires_grad`` False)."""
    modules = [(c.name, c.obj) for c in built.components if isinstance(c.obj, torch.nn.Module)]
    meta: dict[str, Any] = {
        "eval_modules": {name: [n for n, m in obj.named_modules() if not m.training]
                         for name, obj in modules},
        # (requires_grad is left out of a state_dict() too: a frozen layer has no gradient)
        "frozen_params": {name: [n for n, p in obj.named_parameters() if not p.requires_grad]
                          for name, obj in modules},
    }
    # (a deque's maxlen is in none of its items: a load() that makes it again
    # without one lets it grow; a trial's clip history was 6 long at step 10)
    maxlens = {c.name: value.maxlen for c in built.components if isinstance(c.obj, Attr)
               and isinstance(value := getattr(c.obj.obj, c.obj.name, None), collections.deque)}
    if maxlens:
        meta["deque_maxlen"] = maxlens
    loaded_back = getattr(built.program, "loaded_back", None)
    if isinstance(loaded_back, set) and loaded_back:
        # (a framework's components their own loads gave back: frameworks._loop.LiveState)
        meta["loaded_back"] = sorted(str(name) for name in loaded_back)
    optimizers = [(c, o) for c in built.components if (o := unwrap_optimizer(c.obj)) is not None]
    if not optimizers:
        return meta
    names: dict[int, str] = {}
    for c in sorted(built.components, key=lambda c: c.name != PARAMS):  # (the model first)
        if isinstance(c.obj, torch.nn.Module):
            prefix = "" if c.name == PARAMS else f"{c.name}."
            for n, p in c.obj.named_parameters():
                names.setdefault(id(p), prefix + n)
    others = {}
    for c, optimizer in optimizers:
        if _is_scheduler(c.obj):  # (its state lists no parameters)
            continue
        listed = [names.get(id(p), f"group{g}.param{i}")
                  for g, group in enumerate(optimizer.param_groups)
                  for i, p in enumerate(group["params"])]
        if c.name == OPTIMIZER:
            meta["optimizer_params"] = listed
        else:  # (a second optimizer: a GAN's discriminator's, keyed by its parameters' names)
            others[c.name] = listed
    if others:
        meta["optimizer_params_of"] = others
    # which declared optimizer each scheduler steps (None: one no component declares);
    # a scheduler keeps the optimizer it was made with (a trial's load() made the
    # optimizer again, and the scheduler went on setting the rate of the old one)
    declared = [(c.name, o) for c, o in optimizers if isinstance(c.obj, torch.optim.Optimizer)]
    meta["steps_optimizer"] = {
        c.name: next((name for name, o in declared if o is inner), None)
        for c, inner in optimizers if not isinstance(c.obj, torch.optim.Optimizer)}
    return meta


def save_capture(built: BuiltProgram, path: str, verify: bool = True, *,
                 unwritten: bool = False, restored_from: str | None = None) -> None:
    """Write the engine's capture and prove that it loads with weights_only=True,
    naming the component and the value that would not.

    ``verify`` loads the file back (done for a program's first capture). Later
    captures are loaded back only when their state holds a kind of value not
    seen in a capture that loaded already: state can turn non-plain mid-run
    (a list that becomes a deque), and that must be named here, not found
    later as an unreadable file.

    ``unwritten``: only this process will read the file (an in-process run's
    restored and end states, which only its judging reads): when a capture of the same
    structure loaded back already and memory allows, a copy of the state is
    kept in memory under ``path`` (``load_checkpoint`` reads it) and nothing
    is written; else the file is written as always. ``restored_from``: the
    engine capture the program was just restored from; a component whose
    state has its very digest there is kept as that capture holds it (read
    only, never given to a program), not copied.
    """
    state = capture(built)
    shape, unfamiliar = _survey(state["components"])
    if unwritten and _keep_unwritten(path, state, shape, unfamiliar, restored_from):
        return
    try:
        torch.save(state, path)
    except Exception as exc:
        raise CheckpointError("save", path, f"torch.save failed: {exc}") from exc
    if shape in _LOADED_SHAPES:
        # this very structure (every key, every leaf's type) loaded back
        # already: so does this file, to what was just written (a reader in
        # this process gets a copy of it from memory, see load_checkpoint)
        _CACHE.put(path, state, copy=True)
        return
    if not verify and not unfamiliar:
        return
    try:
        _CACHE.put(path, torch.load(path, weights_only=True))
    except Exception as exc:
        bad, where, kind = _unsafe_value(state["components"])
        comp = built.component(bad)
        # (a trial's Attr of a deque was told to fix a state_dict() it never wrote)
        fix = ("give the Attr to_state= and from_state= that turn the value into tensors, "
               "numbers, strings, lists and dicts and back (Attr(..., to_state=list, "
               "from_state=lambda s: deque(s, maxlen=...)) for a deque)"
               if comp is not None and isinstance(comp.obj, Attr) else
               "make its state_dict() return tensors, numbers, strings, lists and dicts only")
        raise CheckpointError(
            "load",
            path,
            f"component {bad!r} has state that torch.load(weights_only=True) refuses: "
            f"{where} is a {kind} ({_first_sentence(exc)}); {fix}",
        ) from exc
    _LOADABLE_TYPES.update(unfamiliar)
    _LOADED_SHAPES.add(shape)


def asks_apart(built: BuiltProgram) -> bool:
    """Whether the state right after a restore is to be asked for in a fork of
    this process (``save_capture_apart``): where a declared component is a
    data loader. Asked for its state, a loader without an iterator makes one
    (a StatefulDataLoader's ``state_dict()`` does), drawing its base seed from
    the random stream the load just set: a real resume asks nothing there, so
    the check would run on one draw off it. Not with worker processes (a fork
    would start its own), nor where fork is missing or CUDA is in use (a fork
    cannot use it), nor among ranks (a state_dict() may be a collective the
    other ranks would not join): there it is asked here, as before."""
    dist = torch.distributed
    among_ranks = dist.is_available() and dist.is_initialized()
    return (hasattr(os, "fork") and not torch.cuda.is_initialized() and not among_ranks
            and any(isinstance(c.obj, torch.utils.data.DataLoader) and c.obj.num_workers == 0
                    for c in built.components))


def save_capture_apart(built: BuiltProgram, path: str) -> None:
    """``save_capture`` to a file, in a fork of this process: whatever asking
    the components for their state does (a draw, an iterator made) is done
    in the fork, and the program here goes on as a real resume would."""
    read, write = os.pipe()
    python_stream = random.getstate()
    pid = os.fork()
    if pid == 0:  # the child: never returns, runs none of this interpreter's cleanups
        code = 0
        try:
            os.close(read)
            gc.freeze()  # (nor finalizers of what it inherited)
            # (Python's random module seeds its stream anew in a forked child: trial 819's
            # correct program read "rng: Python random stream differs" right after the load)
            random.setstate(python_stream)
            save_capture(built, path, verify=False)
        except BaseException as exc:  # noqa: BLE001 - every outcome goes to the parent
            code = 1
            with contextlib.suppress(Exception):
                os.write(write, f"{type(exc).__name__}: {exc}".encode()[:4000])
        finally:
            os._exit(code)
    os.close(write)
    try:
        with os.fdopen(read, "rb") as pipe:
            why = pipe.read().decode(errors="replace")
    except BaseException:  # (the phase's time ran out, an interrupt: the fork ends too)
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
        raise
    finally:
        _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0 or not os.path.exists(path):
        raise CheckpointError("save", path, "asking the declared components for their state "
                              f"after the restore failed: {why or 'the fork that asked ended'}")


# Below this many bytes of tensors, copying a restored state whole costs less
# than the digests that would spare copying its components (a small
# program's capture: a fifth of a millisecond to digest, a tenth to copy).
_SHARED_FROM_BYTES = 1 << 20


def _keep_unwritten(path: str, state: dict[str, Any], shape: str, unfamiliar: set[type],
                    restored_from: str | None = None) -> bool:
    """Keep ``state`` (of ``_survey``'s ``shape`` and ``unfamiliar`` types) in
    memory as what ``path`` would load to, if a capture of its very structure
    loaded back with weights_only=True already (so would this file) and
    memory for unwritten captures is left. Components equal to
    ``restored_from``'s (by digest) are that capture's own, uncopied, where
    the state is large enough for that to matter."""
    if unfamiliar or shape not in _LOADED_SHAPES:
        return False
    size = _copyable_bytes(state)
    if restored_from is None or size is None or size < _SHARED_FROM_BYTES:
        return _CACHE.put(path, state, copy=True, unwritten=True, size=size)
    source = _CACHE.get(restored_from, copy=False)
    digests = _CACHE.digests(restored_from)
    if source is None or digests is None:
        return _CACHE.put(path, state, copy=True, unwritten=True, size=size)
    components = {}
    for name, value in state["components"].items():
        same = name in digests and digest(value) == digests[name]
        components[name] = source["components"][name] if same else _copy(value)
    return _CACHE.put(path, {**state, "components": components}, unwritten=True)


def _first_sentence(exc: BaseException) -> str:
    """An exception's first sentence, without terminal escapes (torch's
    weights_only refusal is a page long and bold in places)."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(exc)).strip()
    return text.split(". ")[0].splitlines()[0] if text else type(exc).__name__


# Kinds of value known to load with weights_only=True: plain data, and every
# type found in a capture that loaded back.
_LOADABLE_TYPES: set[type] = {
    int, float, bool, str, bytes, type(None), list, tuple, dict, collections.OrderedDict,
    torch.Tensor, torch.nn.Parameter,
}


def _leaves(value: Any, path: str) -> Iterator[tuple[str, Any]]:
    """(path, value) for every value in a nested state, containers included."""
    yield path, value
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, f"{path}[{k!r}]")
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            yield from _leaves(v, f"{path}[{i}]")


# Structures of captures that loaded back with weights_only=True (see _survey),
# in this process or in another segment of this check's: a capture of the
# same structure loads back too, so the first capture of each later segment
# need not be read back to prove it.
_LOADED_SHAPES: set[str] = set()


def loadable_shapes() -> list[str]:
    """The structures of captures known to load back with weights_only=True
    (``_survey``'s names), for the next process-isolated segment to start with."""
    return sorted(_LOADED_SHAPES)


def add_loadable_shapes(names: Iterable[str]) -> None:
    """Take in the structures another process of the same torch loaded back
    (``loadable_shapes`` there): a capture of one of them is not read back."""
    _LOADED_SHAPES.update(names)


def _survey(components: dict[str, Any]) -> tuple[str, set[type]]:
    """From one walk of a capture's components: a name for everything that
    decides whether it loads with weights_only=True (its *shape*), and the
    types in it not known to load.

    The shape: the path of every value (its keys' types included) and every
    value's type (a tensor's dtype and layout too); not the values. (A digest
    of their text, the same in every process: a type is named by its module
    and class, a key by its type and repr.)"""
    out: list[str] = []
    unfamiliar: set[type] = set()

    def walk(value: Any, path: str) -> None:
        if type(value) not in _LOADABLE_TYPES:
            unfamiliar.add(type(value))
        kind = f"{type(value).__module__}.{type(value).__qualname__}"
        if isinstance(value, torch.Tensor):
            out.append(f"{path}={kind}:{value.dtype}:{value.layout}")
        else:
            out.append(f"{path}={kind}")
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, f"{path}/{type(k).__qualname__}:{k!r}")
        elif isinstance(value, (list, tuple)):
            for i, v in enumerate(value):
                walk(v, f"{path}/{i}")

    walk(components, "")
    return hashlib.blake2b("\n".join(out).encode(), digest_size=16).hexdigest(), unfamiliar


def _unsafe_value(components: dict[str, Any]) -> tuple[str, str, str]:
    """The component whose state does not load with weights_only=True, the
    path of the first value in it of a kind not known to load, and its type."""
    import io

    for name, state in components.items():
        buffer = io.BytesIO()
        torch.save(state, buffer)
        buffer.seek(0)
        try:
            torch.load(buffer, weights_only=True)
        except Exception:
            for where, value in _leaves(state, "state_dict()"):
                kind = type(value)
                if kind not in _LOADABLE_TYPES:
                    return name, where, _type_name(kind)
            return name, "a value", "type it cannot load"
    return "?", "a value", "type it cannot load"


def _type_name(kind: type) -> str:
    """A type as its user knows it: a class of a file target is named after the
    file (``train.Best``), not the module name the engine imported it under."""
    module = kind.__module__
    origin = getattr(sys.modules.get(module), "__file__", None)
    if module.startswith("_resumecheck_target_") and isinstance(origin, str):
        module = os.path.splitext(os.path.basename(origin))[0]
    return f"{module}.{kind.__qualname__}"


def load_checkpoint(path: str, *, read_only: bool = False) -> dict[str, Any]:
    """Load an engine capture safely, with a clear error when it is damaged.

    A file this process has read (or written and read back) already, unchanged
    since, comes from memory as a copy (no tensor shared with another
    caller): every restart of a check restores from the same reference
    capture, and the safe unpickler runs in Python. ``read_only``: the caller
    only reads what it gets (judging does), so it may be the kept state
    itself, not a copy; it must never be changed."""
    with _meshes_without_groups():
        return _load_checkpoint(path, read_only)


def keep_written(path: str, state: dict[str, Any]) -> None:
    """Remember ``state`` as what the capture just written at ``path`` loads
    to, when it is built of loaded captures only (the ranks' captures merged
    into one): a later ``load_checkpoint`` of the unchanged file reads it from
    memory. The caller must not change ``state`` afterwards."""
    _CACHE.put(path, state)


@contextlib.contextmanager
def _meshes_without_groups() -> Iterator[None]:
    """Quiet torch's warning, for each DeviceMesh (FSDP2's DTensors) unpickled
    where its process groups do not exist, that torch.compile could not find
    them: the judging side never computes on a mesh (``compare`` reads each
    DTensor's shard and layout), and the warning would fill the terminal."""
    log = logging.getLogger("torch.distributed.device_mesh")
    log.addFilter(_not_the_mesh_warning)
    try:
        yield
    finally:
        log.removeFilter(_not_the_mesh_warning)


def _not_the_mesh_warning(record: logging.LogRecord) -> bool:
    return "unpickling of the DeviceMesh occurred before the PGs" not in record.getMessage()


def _load_checkpoint(path: str, read_only: bool) -> dict[str, Any]:
    cached = _CACHE.get(path, copy=not read_only)
    if cached is not None:
        return cached
    try:
        data = _safe_load(path)
    except FileNotFoundError:
        raise CheckpointError("load", path, "the file does not exist") from None
    except Exception as exc:
        first = _first_sentence(exc)
        if "weights_only" in str(exc) or "Weights only" in str(exc):
            raise CheckpointError(
                "load", path, f"the file holds a value that torch.load(weights_only=True) "
                f"refuses, it is not damaged ({first})"
            ) from exc
        raise CheckpointError(
            "load", path, f"the file is truncated or corrupted ({type(exc).__name__}: {first})"
        ) from exc
    if not isinstance(data, dict) or data.get("format") != CHECKPOINT_FORMAT:
        raise CheckpointError("load", path, f"not a {CHECKPOINT_FORMAT} file")
    if _CACHE.put(path, data) and not read_only:
        return _copy(data)
    return data


def _safe_load(path: str) -> Any:
    """``torch.load(weights_only=True)``; where the file holds a DTensor (an
    FSDP2 model's state, captured by its rank) and torch's tensor types for it
    are not imported in this process (the check's own, which merges and judges
    the ranks' captures), imports them and loads again (trial 144)."""
    try:
        return torch.load(path, weights_only=True)
    except Exception as exc:
        if "torch.distributed.tensor" not in str(exc) or "torch.distributed.tensor" in sys.modules:
            raise
        importlib.import_module("torch.distributed.tensor")  # (DTensor, for the safe unpickler)
        return torch.load(path, weights_only=True)


class _Loaded:
    """Captures already loaded, by file identity (device, inode, size, mtime):
    a file changed or replaced since is read again. Bounded by the bytes of
    their tensors; least recently used go first.

    An unwritten capture (no file: see ``save_capture``) has no identity; it
    is never evicted (there is nothing to read it again from), stays while
    its directory does, and all of them together take at most half the bound.
    """

    LIMIT = 256 << 20

    def __init__(self) -> None:
        self._files: collections.OrderedDict[
            str, tuple[tuple[int, ...] | None, Any, int]] = collections.OrderedDict()
        self._bytes = 0
        self._unwritten = 0
        self._digests: dict[str, tuple[Any, dict[str, str]]] = {}
        self._lock = threading.Lock()

    @staticmethod
    def _identity(path: str) -> tuple[int, ...] | None:
        try:
            st = os.stat(path)
        except OSError:
            return None
        return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)

    def get(self, path: str, *, copy: bool = True) -> dict[str, Any] | None:
        """What ``path`` loads to, if kept: a copy of it (without ``copy``, the
        kept state itself, for a caller that never changes it)."""
        key = os.path.abspath(path)
        with self._lock:
            entry = self._files.get(key)
            if entry is None:
                return None
            if entry[0] is not None and entry[0] != self._identity(path):
                self._drop(key)
                return None
            self._files.move_to_end(key)
            data = entry[1]
        return _copy(data) if copy else data  # type: ignore[no-any-return]

    def digests(self, path: str) -> dict[str, str] | None:
        """The digest of each component of the capture kept for ``path``,
        computed once while it is kept (None: not kept)."""
        data = self.get(path, copy=False)
        if data is None:
            return None
        key = os.path.abspath(path)
        with self._lock:
            known = self._digests.get(key)
            if known is not None and known[0] is data:
                return known[1]
        found = {n: digest(v) for n, v in data["components"].items()}
        with self._lock:
            self._digests[key] = (data, found)
        return found

    def put(self, path: str, data: Any, *, copy: bool = False, unwritten: bool = False,
            size: int | None = None) -> bool:
        """Keep ``data``, what ``path`` loads to (a copy of it with ``copy``;
        without, the caller keeps it no more; ``unwritten``: no file holds
        it; ``size``: ``_copyable_bytes(data)``, where known); False when it
        cannot be copied faithfully or is too large."""
        size = _copyable_bytes(data) if size is None else size
        identity = None if unwritten else self._identity(path)
        if size is None or (identity is None and not unwritten) or size > self.LIMIT // 4:
            return False
        key = os.path.abspath(path)
        with self._lock:
            for gone in [k for k, e in self._files.items() if k == key or not os.path.exists(
                    k if e[0] is not None else os.path.dirname(k))]:
                self._drop(gone)  # (a check's files go with its directory)
            if unwritten and self._unwritten + size > self.LIMIT // 2:
                return False
        if copy:
            data = _copy(data)
        with self._lock:
            self._drop(key)
            self._files[key] = (identity, data, size)
            self._bytes += size
            self._unwritten += size if unwritten else 0
            for old in [k for k, e in self._files.items() if e[0] is not None]:
                if self._bytes <= self.LIMIT:
                    break
                self._drop(old)
        return True

    def forget_under(self, directory: str) -> None:
        """Drop what is kept for paths inside ``directory`` (emptied to be used again)."""
        inside = os.path.join(os.path.abspath(directory), "")
        with self._lock:
            for key in [k for k in self._files if k.startswith(inside)]:
                self._drop(key)

    def _drop(self, key: str) -> None:
        self._digests.pop(key, None)
        entry = self._files.pop(key, None)
        if entry is not None:
            self._bytes -= entry[2]
            self._unwritten -= entry[2] if entry[0] is None else 0


_CACHE = _Loaded()


def forget_captures_under(directory: str) -> None:
    """Forget the captures kept in memory for paths inside ``directory``, written
    or not: a run directory emptied for the next run holds none of them."""
    _CACHE.forget_under(directory)


def _copyable_bytes(data: Any) -> int | None:
    """The bytes of the tensors in ``data``; None when a copy made by _copy
    would not be what loading the file again gives: two tensors sharing
    memory, a tensor subclass, or a value of a kind _copy does not know."""
    total = 0
    storages: set[int] = set()
    tensors: set[int] = set()
    stack = [data]
    while stack:
        value = stack.pop()
        kind = type(value)
        if kind in (dict, collections.OrderedDict):
            stack.extend(value.values())
        elif kind in (list, tuple):
            stack.extend(value)
        elif kind is torch.Tensor:
            if id(value) in tensors:
                continue
            tensors.add(id(value))
            ptr = value.untyped_storage().data_ptr()
            if value.layout != torch.strided or (ptr and ptr in storages):
                return None
            storages.add(ptr)
            total += value.untyped_storage().nbytes()
        elif kind not in _IMMUTABLE:
            return None
    return total


_IMMUTABLE = (int, float, bool, str, bytes, type(None), torch.dtype, torch.Size)


def _copy(value: Any, memo: dict[int, Any] | None = None) -> Any:
    """A copy of loaded state that shares no tensor with it (one object
    appearing twice stays one object, as the unpickler gives it)."""
    memo = {} if memo is None else memo
    kind = type(value)
    if kind is torch.Tensor:
        if id(value) not in memo:
            memo[id(value)] = value.detach().clone().requires_grad_(value.requires_grad)
        return memo[id(value)]
    if kind in (dict, collections.OrderedDict):
        return kind((k, _copy(v, memo)) for k, v in value.items())
    if kind is list:
        return [_copy(v, memo) for v in value]
    if kind is tuple:
        return tuple(_copy(v, memo) for v in value)
    return value


def _is_scheduler(obj: Any) -> bool:
    """A learning-rate scheduler: it holds the optimizer it steps (as an
    optimizer's wrapper does) and counts steps (trial 475: a scheduler was read
    as a second optimizer, and its line lost the causes of a count one step
    ahead)."""
    return isinstance(obj, SCHEDULER_TYPES) or hasattr(obj, "last_epoch")
