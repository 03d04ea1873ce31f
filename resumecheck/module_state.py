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
``snapshot`` fingerprints what they hold: every global and, two levels down
by name, the attributes of plain namespaces and of the program's own classes
and objects; and, inside each value, a bounded summary of its content (four
levels, 512 values): containers item by item, the program's objects' fields,
functions' closures, defaults and attributes (a hand-written memo,
``def f(x, _cache={})``, ``f.memo``), partials, bound methods' objects,
``threading.local``, a model's own attributes. Scalars count by value,
tensors and arrays (``numpy``, ``array.array``) by their bytes up to 65,536
elements (a write through ``.data`` moves no version counter; a no-op
``clamp_`` moves it and changes nothing), larger tensors by version counter;
caches by size and misses; models, optimizers and random generators by their
state. Nothing is copied, and no code of the program's objects runs (no
``__getattr__``, no property, no method). ``changed`` names what differs
between two snapshots, a global or attribute created since included. Not
seen: state beyond those bounds, an array of more than 65,536 elements
changed in place, an installed class's object (a logger, a mock) except the
kinds above, a module the program imports only while it trains.
"""

from __future__ import annotations

import array
import collections
import functools
import os
import random
import re
import sys
import sysconfig
import threading
import traceback
import types
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch

from resumecheck.compare import digest
from resumecheck.components import declared_generators, generator_state

__all__ = ["cell_filled", "changed", "changed_by", "ignore_imports", "named_spaces",
           "note_import", "program_spaces", "settings_set", "snapshot", "torch_settings"]

Space = dict[str, Any]
"""A module's namespace (its ``__dict__``, or a function's ``__globals__``)."""

_SAMPLE = 64
"""Items of a container fingerprinted at each end."""

_SMALL = 1 << 16
"""Elements of a tensor or array whose bytes are hashed (larger: identity only)."""

_PACKAGE = os.path.dirname(os.path.abspath(__file__))

_LRU = type(functools.lru_cache(maxsize=None)(lambda: None))
"""The type of an ``functools.lru_cache`` wrapper: recognised by type, never by
probing a user object's attributes (a proxy's ``__getattr__`` may raise; a
mock would record the call)."""

_BUDGET = 512
"""Values a container's content summary looks at, at most (see ``_summary``)."""


@functools.lru_cache(maxsize=1)
def _installed_roots() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    roots = {paths.get(key) for key in ("stdlib", "platstdlib", "purelib", "platlib")}
    roots |= {sys.prefix, sys.base_prefix, sys.exec_prefix, _PACKAGE}
    return tuple(os.path.abspath(r) for r in roots if r)


def raised(exc: BaseException) -> str:
    """What the program raised and where in its own code, in words:
    ``ValueError: bad row (at train.py:41, in train_step)`` (no clause when
    no frame is the program's). The check keeps a failure as its message,
    across processes; without the clause the user's own line is lost.

    An exception a DataLoader worker raised reaches the program's process as
    torch re-raises it: its message is "Caught ValueError in DataLoader
    worker process 0." and the worker's whole traceback as text. Said here
    as the worker's own exception, at the worker's line (the dataset's
    ``__getitem__``, not the ``next()`` that received it):
    ``ValueError in DataLoader worker process 0: bad row (at data.py:9, in __getitem__)``."""
    worker = _WORKER_RAISED.match(str(exc))
    if worker is None:
        where = program_line(exc)
        return f"{type(exc).__name__}: {exc}" + (f" (at {where})" if where else "")
    name, process, text = worker.groups()
    frames = _FRAME.findall(text)
    where = next((f"{path}:{line}, in {func}" for path, line, func in reversed(frames)
                  if is_program_file(path)), None) or program_line(exc)
    # the exception's own lines, after the frames: its name (a class of the
    # program's own module is named with that module's) and its message
    own = list(re.finditer(rf"^(?:[\w.]+\.)?{re.escape(name)}(?::[ ]?|$)", text, re.M))
    message = text[own[-1].end():].strip() if own else text.strip()
    return f"{name} {process}: {message}" + (f" (at {where})" if where else "")


_WORKER_RAISED = re.compile(
    r"Caught (\w+) (in DataLoader worker process \d+)\.\s*\n"
    r"Original Traceback \(most recent call last\):\n(.*)", re.S)
_FRAME = re.compile(r'File "([^"]+)", line (\d+), in (\S+)')


def own_line(exc: BaseException) -> str:
    """The innermost frame of ``exc``'s traceback in resumecheck's own code, in
    words: ``resumecheck/compare.py:156, in _update`` (``?`` where none is)."""
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if frame.filename.startswith(_PACKAGE):
            where = os.path.relpath(frame.filename, os.path.dirname(_PACKAGE))
            return f"{where}:{frame.lineno}, in {frame.name}"
    return "?"


def program_line(exc: BaseException) -> str | None:
    """The innermost frame of ``exc``'s traceback in the program's own code (a
    file outside every installed package, the standard library and
    resumecheck), in words: ``train.py:41, in train_step``."""
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if frame.filename and is_program_file(frame.filename):
            return f"{frame.filename}:{frame.lineno}, in {frame.name}"
    return None


def is_program_file(path: str) -> bool:
    """Whether a source file is the program's own code (see ``_programs``)."""
    return _programs({"__file__": path})


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


_NOTING = [True]
"""Whether this process fingerprints the program's imports (see ``ignore_imports``)."""


def ignore_imports() -> None:
    """This process judges no module state (a process-isolated segment, a
    rank: the checking process judges their results): its imports are not
    fingerprinted (10-20 ms each)."""
    _NOTING[0] = False


def note_import(module: types.ModuleType) -> None:
    """Fingerprint the program's namespaces just after the engine imported ``module``."""
    if not _NOTING[0]:
        return
    for space in _reached(vars(module)):
        if _record(_AT_IMPORT, space) is None:
            _AT_IMPORT[id(space)] = (space, snapshot([space]))


def _record(records: dict[int, tuple[Space, Any]], space: Space) -> Any:
    held = records.get(id(space))
    return held[1] if held is not None and held[0] is space else None


def program_spaces(factory: Callable[..., Any]) -> list[Space]:
    """The program's own namespaces that its code reaches (see the module's text)."""
    start = _space_of(factory)
    return [] if start is None or not _programs(start) else _reached(start, factory)


def _space_of(obj: Any) -> Space | None:
    """Where ``obj``'s code lives: a function's globals, a class's methods'
    globals (or its module's), a module's namespace."""
    if isinstance(obj, types.ModuleType):
        return vars(obj)
    if isinstance(obj, functools.partial):
        return _space_of(obj.func)
    if isinstance(obj, types.MethodType):
        return _space_of(obj.__func__)
    fn = obj.__wrapped__ if isinstance(obj, _LRU) else obj
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


def _reached(start: Space, factory: Any = None) -> list[Space]:
    """``start`` and every namespace of the program's own code its globals reach,
    and the factory's closures (a class made by a function of the program's:
    its methods' free variables, a training module imported inside it)."""
    reached: dict[int, Space] = {}
    todo: list[Space] = []

    def visit(value: Any) -> None:
        try:
            space = _space_of(value)
        except Exception:  # (an object whose attributes cannot be read)
            return
        if space is not None and id(space) not in reached and _programs(space):
            reached[id(space)] = space
            todo.append(space)

    reached[id(start)] = start
    for value in [*start.values(), *_closed_over(factory)]:
        visit(value)
    while todo:
        for value in list(todo.pop().values()):
            visit(value)
    return sorted(reached.values(), key=lambda s: str(s.get("__name__")))


def _closed_over(obj: Any) -> list[Any]:
    """What a function, or a class's methods, hold in their closures (trial
    178: `train = importlib.import_module(name)` inside the function that
    makes the program class; its module's cache was never looked at)."""
    if isinstance(obj, functools.partial):
        obj = obj.func
    functions = ([m for m in vars(obj).values() if isinstance(m, types.FunctionType)]
                 if isinstance(obj, type) else [obj] if isinstance(obj, types.FunctionType)
                 else [])
    out = []
    for fn in functions:
        for cell in fn.__closure__ or ():
            try:
                out.append(cell.cell_contents)
            except ValueError:  # (an empty cell)
                continue
    return out


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
    if not isinstance(value, (type, types.FunctionType, _LRU)):
        return False
    try:
        home = _space_of(value)
    except Exception:
        return False
    return home is not None and home is not space and _programs(home)


def _walk(where: str, value: Any, out: dict[str, Any], depth: int) -> None:
    out[where] = _fingerprint(value)
    if depth:
        try:
            inside = list(_inside(value))
        except Exception:  # (an object whose attributes cannot be read)
            return
        for attr, inner in inside:
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
        if _differ(before[where], after[where]) and not (
                before[where][0] == "stream" and before[where][1] in declared):
            out[where] = f"{_shown(where)} ({_how(before[where], after[where])})"
    return out


def _differ(a: Any, b: Any) -> bool:
    """Whether two fingerprints differ (a scalar of a class whose == raises:
    not known to differ)."""
    try:
        return bool(a != b)
    except Exception:
        return False


def changed_by(run: Callable[[], Any], spaces: list[Space],
               named: set[int] | None = None) -> tuple[Any, list[str]]:
    """``run()``'s result, and what of ``spaces``' state differs after it from
    what it was right after the engine imported them (or, for what it did not
    import, from what it was before ``run``: a cache already filled then was
    filled earlier in this interpreter), together with what an earlier check
    in this interpreter saw change in them. ``named`` (``named_spaces``): the
    namespaces whose earlier changes count; in the others only what ``run``
    changes does (trial 255: one wrapper module imported a correct script and
    a copy with a module-level generator; a check of the copy moved it, and
    the correct script's check, whose code never names that copy, was refused)."""
    before, earlier = [], []
    for space in spaces:
        now = snapshot([space])
        at_import = _record(_AT_IMPORT, space)
        earlier.append(named is None or id(space) in named)
        before.append({**now, **at_import} if at_import is not None and earlier[-1] else
                      {k: (("cache", "before", *v[1:]) if v[0] == "cache" and v[1] else v)
                       for k, v in now.items()})
    out = run()
    moved: dict[str, str] = {}
    for space, was, counts in zip(spaces, before, earlier):
        seen = _record(_SEEN, space)
        if seen is None:
            seen = {}
            _SEEN[id(space)] = (space, seen)
        now_changed = changed(was, snapshot([space]))
        seen.update(now_changed)
        moved.update(seen if counts else now_changed)
    return out, [moved[where] for where in sorted(moved)]


def named_spaces(factory: Callable[..., Any]) -> set[int]:
    """The program's namespaces (by ``id``) that its code names, from the
    factory on: the factory's own, and each one a name in reached code
    resolves to (a module named by the code counts whole; a function, a
    class, or an object's class, is followed into its code), and closures."""
    named: set[int] = set()
    seen: set[int] = set()
    todo: list[Any] = [factory]
    while todo:
        obj = todo.pop()
        obj = obj if _has_code(obj) else type(obj)  # (an object: its class's code)
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        try:
            space = _space_of(obj)
        except Exception:  # (a class whose attributes cannot be read)
            continue
        if space is None or not _programs(space):
            continue
        named.add(id(space))
        if isinstance(obj, types.ModuleType):
            todo.extend(space.values())
            continue
        for code in _codes(obj):
            todo.extend(space[name] for name in code.co_names if name in space)
        todo.extend(_closed_over(obj))
    return named


def _has_code(obj: Any) -> bool:
    return isinstance(obj, (types.ModuleType, types.FunctionType, types.MethodType, type,
                            functools.partial, _LRU))


def _codes(obj: Any) -> list[types.CodeType]:
    """The code objects of a function or of a class's methods, nested ones included."""
    if isinstance(obj, functools.partial):
        obj = obj.func
    if isinstance(obj, (types.MethodType, _LRU)):
        obj = obj.__func__ if isinstance(obj, types.MethodType) else obj.__wrapped__
    if isinstance(obj, type):
        members = [getattr(m, "__func__", getattr(m, "fget", m)) for m in vars(obj).values()]
    else:
        members = [obj]
    out, todo = [], [m.__code__ for m in members if isinstance(m, types.FunctionType)]
    while todo:
        code = todo.pop()
        out.append(code)
        todo.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    return out


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
        if not _ours(value):
            return
        space: Mapping[str, Any] = value.__dict__
    elif isinstance(value, (types.SimpleNamespace, threading.local)) or _ours(type(value)):
        space = _fields(value)
    else:
        return
    for name, inner in list(space.items()):
        if name.startswith("__") or isinstance(inner, (types.ModuleType, property)):
            continue
        if isinstance(value, type) and _inherited_hook(value, name, inner):
            continue
        yield name, inner


def _fields(value: Any) -> Mapping[str, Any]:
    """An object's own attributes, read without calling its code (empty: none)."""
    try:
        fields = vars(value) if isinstance(value, threading.local) else \
            object.__getattribute__(value, "__dict__")  # (this thread's, for a local)
    except Exception:
        return {}
    return fields if isinstance(fields, dict) else {}


def _ours(obj: Any) -> bool:
    """Whether a class's or function's code is the program's own (not an
    installed package's)."""
    try:
        space = _space_of(obj)
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
    if isinstance(value, _LRU):
        info = value.cache_info()
        return ("cache", info.currsize, info.misses)
    if isinstance(value, (types.FunctionType, types.MethodType, functools.partial)):
        value = _unhooked(value)
        return ("function", id(value), _summary(value, [_BUDGET]))
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
        return ("value", type(value).__name__, value)
    if isinstance(value, torch.Tensor):
        return ("tensor", id(value), tuple(value.shape), _tensor_content(value))
    if isinstance(value, (np.ndarray, array.array)):
        return ("array", id(value), _bytes_hash(value))
    if isinstance(value, (dict, list, set, frozenset, tuple, bytearray, collections.deque)):
        return ("container", id(value), len(value), _summary(value, [_BUDGET]))
    stream = _stream_state(value)
    if stream is not None:  # (a generator made at import draws on across runs)
        return ("stream", id(value), stream)
    if isinstance(value, torch.nn.Module):  # (a model made at import, trained in place)
        return ("model", id(value), tuple(t._version for t in value.state_dict(
            keep_vars=True).values() if isinstance(t, torch.Tensor)),
            _summary({k: v for k, v in _fields(value).items() if not k.startswith("_")},
                     [_BUDGET]))
    if isinstance(value, threading.local):
        return ("object", id(value), _summary(dict(_fields(value)), [_BUDGET]))
    if isinstance(value, torch.optim.Optimizer):
        return ("optimizer", id(value), len(value.state), tuple(
            t._version for state in value.state.values() for t in state.values()
            if isinstance(t, torch.Tensor)))
    return ("object", id(value))


def _tensor_content(t: torch.Tensor) -> Any:
    """A small tensor's bytes (a write through ``.data`` does not move its
    version counter; a no-op ``clamp_`` moves it and changes nothing), a
    large one's version counter."""
    small = _bytes_hash(t)
    return ("version", t._version) if small is None else small


def _bytes_hash(value: Any) -> int | None:
    """A small tensor's or array's bytes, hashed (None: too large, or not on the CPU)."""
    if isinstance(value, torch.Tensor):
        if value.numel() > _SMALL or value.device.type != "cpu" or value.is_sparse:
            return None
        return hash(value.detach().contiguous().view(-1).view(torch.uint8).numpy().tobytes())
    if isinstance(value, array.array):
        return None if len(value) > _SMALL else hash(value.tobytes())
    return None if value.size > _SMALL else hash(np.ascontiguousarray(value).tobytes())


def _summary(value: Any, budget: list[int], depth: int = 4) -> Any:
    """What a value holds, as something hashable that changes when it does:
    scalars by value, tensors and arrays by content (large ones by version or
    identity), containers item by item (their first and last ``_SAMPLE``),
    and inside functions (closure, defaults, attributes), partials, bound
    methods' objects, threading.local and the program's own objects; at most
    ``depth`` levels and ``budget[0]`` values in all (then ``...``)."""
    budget[0] -= 1
    if budget[0] < 0 or depth < 0:
        return "..."
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
        return value
    if isinstance(value, torch.Tensor):
        return ("tensor", id(value), _tensor_content(value))
    if isinstance(value, (np.ndarray, array.array)):
        return ("array", id(value), _bytes_hash(value))
    if isinstance(value, _LRU):
        info = value.cache_info()
        return ("cache", info.currsize, info.misses)
    inner = _parts(value)
    if inner is None:
        return ("object", id(value))
    return (type(value).__name__, len(inner),
            tuple(_summary(v, budget, depth - 1) for v in _ends(inner)))


def _parts(value: Any) -> list[Any] | None:
    """What a value holds that a summary looks into (None: nothing it looks into)."""
    if isinstance(value, dict):
        return [x for item in value.items() for x in item]
    if isinstance(value, (list, tuple, collections.deque)):
        return list(value)
    if isinstance(value, (set, frozenset)):
        return [] if len(value) > 2 * _SAMPLE else sorted(value, key=id)
    if isinstance(value, bytearray):
        return [bytes(value)] if len(value) <= _SMALL else [len(value)]
    if isinstance(value, types.FunctionType) and not _ours(value):
        # an installed function: what it keeps is its library's (torch marks a
        # function on its first call); only a function of the program that it
        # wraps (a library's decorator around a memo) is looked into
        wrapped = _fields(value).get("__wrapped__")
        return [wrapped] if isinstance(wrapped, types.FunctionType) and \
            _ours(wrapped) else []
    if isinstance(value, types.FunctionType):
        held = [cell.cell_contents for cell in value.__closure__ or () if cell_filled(cell)]
        return [v for v in [*held, *(value.__defaults__ or ()),
                            *(value.__kwdefaults__ or {}).values(), _fields(value)]
                if not isinstance(v, (types.FunctionType, type, types.ModuleType))]
    if isinstance(value, functools.partial):
        return [value.func, list(value.args), dict(value.keywords)]
    if isinstance(value, types.MethodType):
        return [value.__self__]
    if isinstance(value, (types.SimpleNamespace, threading.local)) or _ours(type(value)):
        return [dict(_fields(value))]
    return None


def _unhooked(fn: Any) -> Any:
    """The function torch's optimizer wraps: the first optimizer of a class
    that is built rebinds its class's ``step`` to a profiling wrapper marked
    ``hooked`` (``functools.wraps``), once per interpreter, as a real restart's
    first build does too (trial 151: every in-process check of a program with
    an optimizer class of its own was refused, its ``step`` "rebound")."""
    while getattr(fn, "hooked", False) is True and isinstance(
            _fields(fn).get("__wrapped__"), types.FunctionType):
        fn = _fields(fn)["__wrapped__"]
    return fn


def _inherited_hook(cls: type, name: str, value: Any) -> bool:
    """Whether torch put its optimizer hook (``_unhooked``) on a subclass of
    the program's around the ``step`` it inherits: built first, a subclass
    gets the wrapper as an attribute of its own."""
    if getattr(value, "hooked", False) is not True:
        return False
    for base in cls.__mro__[1:]:
        if name in vars(base):
            return _unhooked(vars(base)[name]) is _unhooked(value)
    return False


def cell_filled(cell: Any) -> bool:
    """Whether a closure's cell holds a value (an empty one raises on reading)."""
    try:
        cell.cell_contents
    except ValueError:  # an empty cell
        return False
    return True


def _ends(items: list[Any]) -> list[Any]:
    return items if len(items) <= 2 * _SAMPLE else items[:_SAMPLE] + items[-_SAMPLE:]


def _stream_state(value: Any) -> Any:
    """A random generator's state as a digest or hash (a torch or numpy
    Generator, as a declared RNGState holds it; a numpy RandomState, a
    random.Random); None: not a generator."""
    if isinstance(value, (torch.Generator, np.random.Generator)):
        return digest(generator_state(value))
    if isinstance(value, random.Random):
        return hash(value.getstate())
    if isinstance(value, np.random.RandomState):
        return hash(repr(value.get_state()))
    return None


def _how(before: Any, after: Any) -> str:
    kind = before[0]
    if kind != after[0]:
        return "rebound"
    if kind == "cache" and before[1] == "before":  # (filled before the check: not known how)
        return (f"a cache: {before[2]} entries before this check began (filled earlier in "
                f"this interpreter), {after[1]} after")
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


# -- process-wide settings a build may set ------------------------------------------------

_TORCH_CONFIGS = ("torch._dynamo.config", "torch._inductor.config", "torch._functorch.config")

def torch_settings() -> dict[str, Any]:
    """The process-wide settings a program may set as it builds, by name:
    torch's determinism and precision switches, and the values of torch's
    compiler config modules already imported (none is imported here). Not the
    environment: torch's own imports, which a build may set off, write to it.
    Reading them runs nothing of the program's (a millisecond at most)."""
    out: dict[str, Any] = {
        "torch.get_default_dtype()": torch.get_default_dtype(),
        "torch.are_deterministic_algorithms_enabled()":
            torch.are_deterministic_algorithms_enabled(),
        "torch.get_float32_matmul_precision()": torch.get_float32_matmul_precision(),
        "torch.backends.cudnn.deterministic": torch.backends.cudnn.deterministic,
        "torch.backends.cudnn.benchmark": torch.backends.cudnn.benchmark,
        "torch.backends.cuda.matmul.allow_tf32": torch.backends.cuda.matmul.allow_tf32,
    }
    for module in _TORCH_CONFIGS:
        config = sys.modules.get(module)
        try:
            values = config.get_config_copy() if config is not None else {}
        except Exception:  # (another torch's config module: not read)
            continue
        out.update((f"{module}.{key}", value) for key, value in values.items()
                   if isinstance(value, (bool, int, float, str, type(None))))
    return out


_DETERMINISTIC = "torch.are_deterministic_algorithms_enabled()"
_INDUCTOR_DETERMINISTIC = "torch._inductor.config.deterministic"


def settings_set(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    """What ``after`` holds otherwise than ``before``, in words (`name`:
    before → after); of a config module first read in ``after`` (imported in
    between), its values other than their defaults."""
    out = []
    for name, value in after.items():
        if name == _INDUCTOR_DETERMINISTIC and before.get(_DETERMINISTIC) != after.get(
                _DETERMINISTIC):  # (what torch.use_deterministic_algorithms sets with it: a
            continue  # trial read it as a compiler setting its build never made)
        if name in before:
            if before[name] != value:
                out.append(f"`{name}`: {before[name]!r} → {value!r}")
        elif not _is_default(name):
            out.append(f"`{name}`: its default → {value!r}")
    return out


def _is_default(name: str) -> bool:
    """Whether a config module's setting (``torch._inductor.config.KEY``) holds
    its default (True where that cannot be told)."""
    module, _, key = name.rpartition(".")
    default = getattr(sys.modules.get(module), "_is_default", None)
    try:
        return not callable(default) or bool(default(key))
    except Exception:
        return True
