"""State a program keeps at module level, and whether it changed.

A real restart imports the program's modules afresh: a cache a module fills
(``functools.lru_cache`` on a function, a dict at module level), a counter
it keeps, a global it rebinds, all start again as the import leaves them. An
in-process restart runs in the interpreter that ran the reference: that
state is still there, as the reference left it. A program whose restart
recomputes something from such state (an epoch's order, drawn from the
restored random stream the first time the epoch is reached, then cached)
then resumes in-process as it never would for real, and the check could
call a lost checkpoint equivalent.

``program_spaces`` are the namespaces of the program's own code: the
factory's module and every module (or function's globals) of code that is
not installed that its globals reach, whatever directory it lies in.
``snapshot`` fingerprints what they hold: every global and, two levels down,
the attributes of the plain objects and of the program's own classes and
objects they hold; functions' closures and default values (a hand-written
memo, ``def f(x, _cache={})``). Fingerprints are cheap and never copy: a
cache's size and misses, a container's length and the identities (and, for
numbers and nested containers, the values and lengths) of its first and last
items, a tensor's storage and version counter (and its bytes when small), a
small numpy array's bytes, a model's, an optimizer's or a random generator's
state, a scalar's value. ``changed`` names what differs between two
snapshots, a global or attribute created since included. Not seen: state
deeper than that, a large array changed in place without its version
counter (numpy; a tensor's ``.data`` written), state of a module the program
imports only while it trains.
"""

from __future__ import annotations

import collections
import functools
import os
import random
import sys
import sysconfig
import types
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch

from resumecheck.components import declared_generators

__all__ = ["changed", "changed_by", "note_import", "program_spaces", "snapshot"]

Space = dict[str, Any]
"""A module's namespace (its ``__dict__``, or a function's ``__globals__``)."""

_SAMPLE = 64
"""Items of a container fingerprinted at each end."""

_SMALL = 1 << 16
"""Elements of a tensor or array whose bytes are hashed (larger: identity only)."""

_PACKAGE = os.path.dirname(os.path.abspath(__file__))


@functools.lru_cache(maxsize=1)
def _installed_roots() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    roots = {paths.get(key) for key in ("stdlib", "platstdlib", "purelib", "platlib")}
    roots |= {sys.prefix, sys.base_prefix, sys.exec_prefix, _PACKAGE}
    return tuple(os.path.abspath(r) for r in roots if r)


def _programs(space: Mapping[str, Any]) -> bool:
    """Whether a namespace is the program's own code: a module loaded from a
    file (an absolute path; torch.ops says "_ops.py") outside every installed
    package, the standard library and resumecheck (a virtual environment
    inside the project holds installed packages). By string paths alone:
    resolving links costs a system call per path component."""
    path = space.get("__file__")
    if not isinstance(path, str) or not os.path.isabs(path):
        return False
    path = os.path.abspath(path)
    return not any(path == r or path.startswith(r.rstrip(os.sep) + os.sep)
                   for r in _installed_roots())


_AT_IMPORT: dict[int, tuple[Space, dict[str, Any]]] = {}
"""By namespace: fingerprints of what it held right after the engine imported
the program (``note_import``): state an earlier check in this interpreter
left behind (a cache it filled) is still a change from the import."""

_SEEN: dict[int, tuple[Space, dict[str, str]]] = {}
"""By namespace: what an earlier check in this interpreter saw change there,
in words: a later check (a warm cache no longer changes) still names it."""


def note_import(module: types.ModuleType) -> None:
    """Fingerprint the program's namespaces just after the engine imported ``module``."""
    for space in _reached(vars(module)):
        if _record(_AT_IMPORT, space) is None:
            _AT_IMPORT[id(space)] = (space, snapshot([space]))


def _record(records: dict[int, tuple[Space, Any]], space: Space) -> Any:
    held = records.get(id(space))
    return held[1] if held is not None and held[0] is space else None


def program_spaces(factory: Callable[..., Any]) -> list[Space]:
    """The program's own namespaces that its code reaches (see the module's text)."""
    start = _space_of(factory)
    return [] if start is None or not _programs(start) else _reached(start)


def _space_of(obj: Any) -> Space | None:
    """Where ``obj``'s code lives: a function's globals, a class's methods'
    globals (or its module's), a module's namespace."""
    if isinstance(obj, types.ModuleType):
        return vars(obj)
    if isinstance(obj, functools.partial):
        return _space_of(obj.func)
    fn = getattr(obj, "__wrapped__", obj)  # (an lru_cache wrapper)
    if isinstance(fn, types.FunctionType):
        return fn.__globals__
    if isinstance(obj, type):
        for member in vars(obj).values():
            member = getattr(member, "__func__", member)
            if isinstance(member, types.FunctionType):
                return member.__globals__
        module = sys.modules.get(obj.__module__)
        return None if module is None else vars(module)
    return None


def _reached(start: Space) -> list[Space]:
    """``start`` and every namespace of the program's own code its globals reach."""
    reached, todo = {id(start): start}, [start]
    while todo:
        for value in list(todo.pop().values()):
            try:
                space = _space_of(value)
            except Exception:  # (an object whose attributes cannot be read)
                continue
            if space is not None and id(space) not in reached and _programs(space):
                reached[id(space)] = space
                todo.append(space)
    return sorted(reached.values(), key=lambda s: str(s.get("__name__")))


def snapshot(spaces: list[Space] | list[types.ModuleType]) -> dict[str, Any]:
    """A fingerprint of each global of ``spaces`` (modules or namespaces), and below."""
    out: dict[str, Any] = {}
    for each in spaces:
        space = vars(each) if isinstance(each, types.ModuleType) else each
        prefix = str(space.get("__name__", "?"))
        out[prefix] = ("space",)  # (a global created later is named against it)
        for name, value in _globals(space):
            if _imported(value, space):
                continue  # (a class or function of another of its modules: named there)
            _walk(f"{prefix}.{name}", value, out, depth=2)
    return out


def _imported(value: Any, space: Space) -> bool:
    """A class or function defined in another of the program's namespaces."""
    if not (isinstance(value, (type, types.FunctionType)) or hasattr(value, "cache_info")):
        return False
    try:
        home = _space_of(value)
    except Exception:
        return False
    return home is not None and home is not space and _programs(home)


def _walk(where: str, value: Any, out: dict[str, Any], depth: int) -> None:
    out[where] = _fingerprint(value)
    if depth:
        for attr, inner in _inside(value):
            _walk(f"{where}.{attr}", inner, out, depth - 1)


def changed(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, str]:
    """What differs between two snapshots, each in words
    (``data.epoch_order (a cache: 0 -> 2 entries)``), by where it is; a global
    or attribute that appeared is named too. A generator that a declared
    ``RNGState`` registers is judged as a component, not named here."""
    declared = declared_generators()
    out = {}
    for where in sorted(after):
        if where not in before:
            if where.rpartition(".")[0] in before:  # (not below something new)
                out[where] = f"{_shown(where)} (created)"
            continue
        if before[where] != after[where] and not (
                before[where][0] == "stream" and before[where][1] in declared):
            out[where] = f"{_shown(where)} ({_how(before[where], after[where])})"
    return out


def changed_by(run: Callable[[], Any], spaces: list[Space]) -> tuple[Any, list[str]]:
    """``run()``'s result, and what of ``spaces``' state differs after it from
    what it was right after the engine imported them (or, for what it did not
    import, from what it was before ``run``: a cache already filled then was
    filled earlier in this interpreter), together with what an earlier check
    in this interpreter saw change in them."""
    before = []
    for space in spaces:
        now = snapshot([space])
        at_import = _record(_AT_IMPORT, space)
        before.append({**now, **at_import} if at_import is not None else
                      {k: (("cache", 0, 0) if v[0] == "cache" else v) for k, v in now.items()})
    out = run()
    moved: dict[str, str] = {}
    for space, was in zip(spaces, before):
        seen = _record(_SEEN, space)
        if seen is None:
            seen = {}
            _SEEN[id(space)] = (space, seen)
        seen.update(changed(was, snapshot([space])))
        moved.update(seen)
    return out, [moved[where] for where in sorted(moved)]


def _shown(where: str) -> str:
    # a file target's module has a generated name: show the file's stem instead
    head, _, rest = where.partition(".")
    if head.startswith("_resumecheck_target_"):
        module = sys.modules.get(head)
        path = getattr(module, "__file__", None)
        if path:
            return f"{Path(path).stem}.{rest}"
    return where


def _globals(space: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    """A namespace's entries that can hold state."""
    for name, value in list(space.items()):
        if name.startswith("__") or isinstance(value, types.ModuleType):
            continue
        yield name, value


def _inside(value: Any) -> Iterator[tuple[str, Any]]:
    """One level down: a class's own attributes (a class-level cache or
    counter) and a plain object's fields, for the program's own classes."""
    if isinstance(value, type):
        if not _own_class(value):
            return
        space: Mapping[str, Any] = value.__dict__
    elif isinstance(value, types.SimpleNamespace) or (
            _own_class(type(value)) and hasattr(value, "__dict__")):
        try:
            space = vars(value)
        except TypeError:
            return
    else:
        return
    for name, inner in list(space.items()):
        if name.startswith("__") or isinstance(inner, (types.ModuleType, property)):
            continue
        yield name, inner


def _own_class(cls: type) -> bool:
    try:
        space = _space_of(cls)
    except Exception:
        return False
    return space is not None and _programs(space)


def _fingerprint(value: Any) -> Any:
    """Something that compares unequal when ``value`` changed in a way a
    restart would undo. Never raises."""
    try:
        return _fingerprint_of(value)
    except Exception:  # an object that cannot be looked at is not compared
        return ("unknown",)


def _fingerprint_of(value: Any) -> Any:
    if hasattr(value, "cache_info") and callable(value.cache_info):
        info = value.cache_info()
        return ("cache", info.currsize, info.misses)
    if isinstance(value, types.FunctionType):
        return ("function", id(value), _function_state(value))
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
        return ("value", type(value).__name__, value)
    if isinstance(value, torch.Tensor):
        return ("tensor", id(value), value._version, tuple(value.shape), _bytes_hash(value))
    if isinstance(value, np.ndarray):
        return ("array", id(value), value.shape, _bytes_hash(value))
    if isinstance(value, (dict, list, set, frozenset, tuple, bytearray, collections.deque)):
        return ("container", id(value), len(value), _sample(value))
    stream = _stream_state(value)
    if stream is not None:  # (a generator made at import draws on across runs)
        return ("stream", id(value), stream)
    if isinstance(value, torch.nn.Module):  # (a model made at import, trained in place)
        return ("model", id(value), tuple(t._version for t in value.state_dict(
            keep_vars=True).values() if isinstance(t, torch.Tensor)))
    if isinstance(value, torch.optim.Optimizer):
        return ("optimizer", id(value), len(value.state), tuple(
            t._version for state in value.state.values() for t in state.values()
            if isinstance(t, torch.Tensor)))
    return ("object", id(value))


def _function_state(fn: types.FunctionType) -> tuple[Any, ...]:
    """What a function keeps between calls: the containers, caches and arrays
    in its closure and its default values (a memo dict, ``_cache={}``)."""
    held = [cell.cell_contents for cell in fn.__closure__ or () if _filled(cell)]
    held += list(fn.__defaults__ or ()) + list((fn.__kwdefaults__ or {}).values())
    return tuple(_fingerprint(v) for v in held if not isinstance(v, (types.FunctionType, type))
                 and not isinstance(v, (str, bytes, int, float, bool, type(None))))


def _filled(cell: Any) -> bool:
    try:
        cell.cell_contents
    except ValueError:  # an empty cell
        return False
    return True


def _bytes_hash(value: Any) -> int | None:
    """A small tensor's or array's bytes, hashed (None: too large, or not on the CPU)."""
    if isinstance(value, torch.Tensor):
        if value.numel() > _SMALL or value.device.type != "cpu" or value.is_sparse:
            return None
        return hash(value.detach().contiguous().view(-1).view(torch.uint8).numpy().tobytes())
    return None if value.size > _SMALL else hash(np.ascontiguousarray(value).tobytes())


def _stream_state(value: Any) -> int | None:
    """A random generator's state as a hash (a torch.Generator, a numpy
    Generator or RandomState, a random.Random); None: not a generator."""
    if isinstance(value, torch.Generator):
        return hash(bytes(value.get_state().numpy()))
    if isinstance(value, random.Random):
        return hash(value.getstate())
    if (type(value).__module__ or "").startswith("numpy.random"):
        bits = getattr(value, "bit_generator", None)
        state = bits.state if bits is not None else getattr(value, "get_state", lambda: None)()
        return None if state is None else hash(repr(state))
    return None


def _sample(value: Any) -> tuple[Any, ...]:
    if isinstance(value, bytearray):
        return (bytes(value[:_SAMPLE]), bytes(value[-_SAMPLE:]))
    if isinstance(value, dict):
        items = list(value.items()) if len(value) <= 2 * _SAMPLE else \
            _ends(list(value.items()))
        return tuple((id(k), id(v), _scalar(v)) for k, v in items)
    if isinstance(value, (set, frozenset)):
        return () if len(value) > 2 * _SAMPLE else tuple(sorted(id(v) for v in value))
    items = list(value) if len(value) <= 2 * _SAMPLE else _ends(list(value))
    return tuple((id(v), _scalar(v)) for v in items)


def _ends(items: list[Any]) -> list[Any]:
    return items[:_SAMPLE] + items[-_SAMPLE:]


def _scalar(value: Any) -> Any:
    """A small item's value (ints are shared objects: their identity alone
    would miss ``counts[0] += 1`` from 5 to 6 only when both are cached), a
    nested container's length, a tensor's version."""
    if isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (dict, list, set, tuple, collections.deque)):
        return ("len", len(value))
    if isinstance(value, torch.Tensor):
        return (value._version,)
    return None


def _how(before: Any, after: Any) -> str:
    kind = before[0]
    if kind != after[0]:
        return "rebound"
    if kind == "cache":
        return f"a cache: {before[1]} -> {after[1]} entries"
    if kind == "value":
        return f"{before[2]!r} -> {after[2]!r}"
    if before[1] != after[1]:
        return "rebound"
    if kind == "container":
        return f"{before[2]} -> {after[2]} items" if before[2] != after[2] else \
            f"{after[2]} items, changed"
    return {"tensor": "a tensor, changed in place", "array": "an array, changed in place",
            "stream": "a random generator, drawn from", "model": "a model, trained in place",
            "optimizer": "an optimizer, stepped in place",
            "function": "what the function keeps between calls changed"}.get(kind, "changed")
