"""State a program keeps at module level, and whether a run changed it.

A real restart imports the program's modules afresh: a cache a module fills
(``functools.lru_cache`` on a function, a dict at module level), a counter
it keeps, a global it rebinds, all start again as the import leaves them. An
in-process restart runs in the interpreter that ran the reference: that
state is still there, as the reference left it. A program whose restart
recomputes something from such state (an epoch's order, drawn from the
restored random stream the first time the epoch is reached, then cached)
then resumes in-process as it never would for real, and the check could
call a lost checkpoint equivalent.

``snapshot`` fingerprints what the program's own modules hold (the modules
loaded from the program's directory or package, never an installed package's
nor resumecheck's): every global and, one level down, the attributes of the
classes and plain objects they hold; ``changed`` names what differs between
two snapshots. Fingerprints are cheap: a cache's size and misses, a
container's length and the identities of its first and last items, a
tensor's storage and in-place version counter (a model's or an optimizer's
tensors' too), a random generator's state, a scalar's value; never a copy. A numpy array changed in
place is not seen.
"""

from __future__ import annotations

import os
import sys
import sysconfig
import types
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import torch

from resumecheck.components import declared_generators

__all__ = ["changed", "changed_by", "note_import", "program_modules", "snapshot"]

_SAMPLE = 64
"""Items of a container whose identities are fingerprinted, at each end."""

_PACKAGE = os.path.dirname(os.path.abspath(__file__))


def _installed_roots() -> list[str]:
    paths = sysconfig.get_paths()
    roots = {paths.get(key) for key in ("stdlib", "platstdlib", "purelib", "platlib")}
    roots |= {sys.prefix, sys.base_prefix, sys.exec_prefix, _PACKAGE}
    return [os.path.abspath(r) for r in roots if r]


def _where(path: str) -> str:
    """A module's file as an absolute path, by string alone: resolving links
    costs a system call per path component, and a check looks at every
    loaded module (thousands in a test session)."""
    return os.path.abspath(path)


def _root_of_module(module: types.ModuleType) -> str | None:
    """The directory that holds the program's own code: its top-level
    package's, or the directory of its module's file."""
    path = getattr(module, "__file__", None)
    if not isinstance(path, str):
        return None
    top = sys.modules.get(module.__name__.split(".")[0])
    top_path = getattr(top, "__file__", None)
    if top is not module and isinstance(top_path, str) \
            and os.path.basename(top_path) == "__init__.py":
        return os.path.dirname(_where(top_path))
    return os.path.dirname(_where(path))


_AT_IMPORT: dict[int, tuple[types.ModuleType, dict[str, Any]]] = {}
"""By module object: the fingerprints of its globals right after the engine
imported the program (``note_import``): state an earlier check in this
interpreter left behind (a cache it filled) is still a change from the import.
(A module imported again is a new object, with records of its own.)"""

_SEEN: dict[int, tuple[types.ModuleType, dict[str, str]]] = {}
"""By module object: what an earlier check in this interpreter saw a run
change there, in words: a later check (a warm cache no longer changes) still
names it."""


def note_import(module: types.ModuleType) -> None:
    """Fingerprint the program's modules just after the engine imported ``module``."""
    for each in _modules_under(_root_of_module(module)):
        if _record(_AT_IMPORT, each) is None:
            _AT_IMPORT[id(each)] = (each, snapshot([each]))


def _record(records: dict[int, tuple[types.ModuleType, Any]], module: types.ModuleType) -> Any:
    held = records.get(id(module))
    return held[1] if held is not None and held[0] is module else None


def program_modules(factory: Callable[..., Any]) -> list[types.ModuleType]:
    """The program's own modules that its code reaches: the factory's module
    and, through their globals, the modules (and the modules of the functions
    and classes) of the program's own code it uses, nothing installed."""
    module = sys.modules.get(getattr(factory, "__module__", None) or "")
    if module is None:
        return []
    own = {m.__name__: m for m in _modules_under(_root_of_module(module))}
    if module.__name__ not in own:
        return []
    reached, todo = {module.__name__}, [module]
    while todo:
        for _, value in _globals(todo.pop(), functions=True):
            name = value.__name__ if isinstance(value, types.ModuleType) else \
                getattr(value, "__module__", None)
            if isinstance(name, str) and name in own and name not in reached:
                reached.add(name)
                todo.append(own[name])
    return [own[name] for name in sorted(reached)]


_UNDER: dict[str, tuple[int, list[types.ModuleType]]] = {}
"""By root: the modules found under it, and how many modules were loaded then."""


def _modules_under(root: str | None) -> list[types.ModuleType]:
    if root is None:
        return []
    known = _UNDER.get(root)
    if known is not None and known[0] == len(sys.modules) and all(
            sys.modules.get(m.__name__) is m for m in known[1]):
        return list(known[1])  # (nothing imported since: the same modules)
    found = _find_under(root)
    _UNDER[root] = (len(sys.modules), found)
    return list(found)


def _find_under(root: str) -> list[types.ModuleType]:
    installed = _installed_roots()
    if any(_under(root, r) for r in installed):
        return []  # a program inside an installed package (or resumecheck's built-in one)
    out = []
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if not isinstance(module, types.ModuleType) or not isinstance(path, str) \
                or not os.path.isabs(path):  # (torch.ops says its file is "_ops.py")
            continue
        path = _where(path)
        # (a virtual environment inside the project holds installed packages)
        if _under(path, root) and not any(_under(path, r) for r in installed):
            out.append(module)
    return out


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def snapshot(modules: list[types.ModuleType]) -> dict[str, Any]:
    """A fingerprint of each global of ``modules`` (and one level below)."""
    out: dict[str, Any] = {}
    for module in modules:
        for name, value in _globals(module):
            where = f"{module.__name__}.{name}"
            out[where] = _fingerprint(value)
            for attr, inner in _inside(value, module):
                out[f"{where}.{attr}"] = _fingerprint(inner)
    return out


def changed(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, str]:
    """What differs between two snapshots, each in words
    (``data.epoch_order (a cache: 0 -> 2 entries)``), by where it is. A
    generator that a declared ``RNGState`` registers is judged as a component,
    not named here."""
    declared = declared_generators()
    return {where: f"{_shown(where)} ({_how(before[where], after[where])})"
            for where in sorted(before.keys() & after.keys()) if before[where] != after[where]
            and not (before[where][0] == "stream" and before[where][1] in declared)}


def changed_by(run: Callable[[], Any], modules: list[types.ModuleType]) -> tuple[Any, list[str]]:
    """``run()``'s result, and what of ``modules``' state differs after it from
    what it was right after the engine imported them (or, for what it did not
    import, from what it was before ``run``), together with what an earlier
    check in this interpreter saw change in them."""
    before = [{**snapshot([m]), **(_record(_AT_IMPORT, m) or {})} for m in modules]
    out = run()
    moved: dict[str, str] = {}
    for module, was in zip(modules, before):
        seen = _record(_SEEN, module)
        if seen is None:
            seen = {}
            _SEEN[id(module)] = (module, seen)
        seen.update(changed(was, snapshot([module])))
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


def _globals(module: types.ModuleType, functions: bool = False) -> Iterator[tuple[str, Any]]:
    """A module's globals that can hold state (``functions``: and its modules
    and functions too)."""
    try:
        items = list(vars(module).items())
    except TypeError:
        return
    for name, value in items:
        if name.startswith("__"):
            continue
        if not functions and (isinstance(value, types.ModuleType) or isinstance(
                value, (types.FunctionType, types.BuiltinFunctionType))
                and not hasattr(value, "cache_info")):
            continue
        yield name, value


def _inside(value: Any, module: types.ModuleType) -> Iterator[tuple[str, Any]]:
    """One level down: a class's own attributes (a class-level cache or
    counter), a plain object's fields, for classes defined in the program."""
    if isinstance(value, type):
        if value.__module__ != module.__name__:
            return
        space: Mapping[str, Any] = value.__dict__
    elif isinstance(value, (types.SimpleNamespace,)) or (
            type(value).__module__ == module.__name__ and hasattr(value, "__dict__")):
        try:
            space = vars(value)
        except TypeError:
            return
    else:
        return
    for name, inner in list(space.items()):
        if name.startswith("__") or isinstance(inner, (types.ModuleType, property)):
            continue
        if isinstance(inner, (types.FunctionType, staticmethod, classmethod)) \
                and not hasattr(inner, "cache_info"):
            continue
        yield name, inner


def _fingerprint(value: Any) -> Any:
    """Something that compares unequal when ``value`` changed in a way a
    restart would undo. Never raises."""
    try:
        if hasattr(value, "cache_info") and callable(value.cache_info):
            info = value.cache_info()
            return ("cache", info.currsize, info.misses)
        if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
            return ("value", type(value).__name__, value)
        if isinstance(value, torch.Tensor):
            return ("tensor", id(value), value.data_ptr() if value.device.type != "meta" else 0,
                    value._version, tuple(value.shape))
        if isinstance(value, (dict, list, set, frozenset, tuple, bytearray)) or _is_deque(value):
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
    except Exception:  # an object that cannot be looked at is not compared
        return ("unknown",)


def _stream_state(value: Any) -> int | None:
    """A random generator's state as a hash (a torch.Generator, a numpy
    Generator or RandomState, a random.Random); None: not a generator."""
    import random

    if isinstance(value, torch.Generator):
        return hash(bytes(value.get_state().numpy()))
    if isinstance(value, random.Random):
        return hash(value.getstate())
    module = type(value).__module__ or ""
    if module.startswith("numpy.random"):
        bits = getattr(value, "bit_generator", None)
        state = bits.state if bits is not None else getattr(value, "get_state", lambda: None)()
        return None if state is None else hash(repr(state))
    return None


def _is_deque(value: Any) -> bool:
    import collections

    return isinstance(value, collections.deque)


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
    would miss ``counts[0] += 1`` from 5 to 6 only when both are cached)."""
    if isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, torch.Tensor):
        return (value._version,)
    return None


def _how(before: Any, after: Any) -> str:
    kind = before[0]
    if kind == "cache" and after[0] == "cache":
        return f"a cache: {before[1]} -> {after[1]} entries"
    if kind == "value" and after[0] == "value":
        return f"{before[2]!r} -> {after[2]!r}"
    if kind == "container" and after[0] == "container":
        if before[1] != after[1]:
            return "rebound"
        if before[2] != after[2]:
            return f"{before[2]} -> {after[2]} items"
        return f"{after[2]} items, changed"
    if kind == "tensor" and after[0] == "tensor":
        return "a tensor, changed in place" if before[1] == after[1] else "rebound"
    if kind == "stream" and after[0] == "stream" and before[1] == after[1]:
        return "a random generator, drawn from"
    if kind in ("model", "optimizer") and after[0] == kind and before[1] == after[1]:
        return "a model, trained in place" if kind == "model" else "an optimizer, stepped in place"
    return "rebound"
