"""State a program keeps that no declared component holds.

A check compares what the components declare, and the steps. A program may
keep more: an exponential moving average of the weights used only for
evaluation, a second optimizer, a loss scaler. When training changes such
state and the checkpoint forgets it, every step and every declared component
still match: the check cannot see the loss, and must not let "every
component's state match" read as the whole program's.

So the reference run looks at the tensors its program holds as attributes
(one level into dicts, lists and tuples): bare tensors, modules' parameters
and buffers, optimizers' state (read where they are: no ``state_dict()`` of
an undeclared object is called). Those that training changed (between the build and the end of the
run) and that no declared component holds (the same storage, or the same
values in what a component's ``state_dict()`` returns) are named in the
report: not compared. Data tensors, a frozen teacher, anything training does
not change, is not state and is not named.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import torch

from resumecheck.compare import digest, flatten_state
from resumecheck.components import Component

__all__ = ["UndeclaredWatch"]

_LONGEST = 64
"""A list, tuple or dict with more items is not looked into (a dataset kept as a
list of tensors is data, and digesting it would cost more than the check)."""


class UndeclaredWatch:
    """The tensors a program holds at its build, to name at the end of its run
    those training changed that no declared component holds."""

    def __init__(self, program: Any) -> None:
        try:
            self._before: dict[str, list[str]] | None = {
                path: [digest(t) for t in tensors] for path, (_, tensors) in _held(program).items()}
        except Exception:  # a notice never fails a check: then none is given
            self._before = None

    def found(self, program: Any, components: Sequence[Component]) -> list[str]:
        """Each attribute whose changed tensors no declared component holds, in
        words (none when they cannot be read: a notice never fails a check)."""
        if self._before is None:
            return []
        try:
            return self._found(self._before, program, components)
        except Exception:
            return []

    @staticmethod
    def _found(before_all: dict[str, list[str]], program: Any,
               components: Sequence[Component]) -> list[str]:
        declared = {id(c.obj) for c in components}
        ptrs: set[int | None] = set()
        values: set[str] = set()
        for c in components:
            for t in _state_tensors(c.obj):
                ptrs.add(_ptr(t))
                values.add(digest(t))
        ptrs.discard(None)
        out = []
        for path, (obj, tensors) in _held(program).items():
            if id(obj) in declared:
                continue
            before = before_all.get(path, [])
            changed = [t for i, t in enumerate(tensors)
                       if i >= len(before) or digest(t) != before[i]]
            missed = [t for t in changed if _ptr(t) not in ptrs and digest(t) not in values]
            if missed:
                count = sum(t.numel() for t in missed)
                out.append(f"{path} ({type(obj).__name__}: {len(missed)} tensor"
                           f"{'' if len(missed) == 1 else 's'}, {count} values, that training "
                           "changed and no declared component holds: declare it as a "
                           "component to check that it resumes)")
        return out


def _ptr(t: torch.Tensor) -> int | None:
    """Where a tensor's data lives (None: a tensor without one of its own, a
    sharded or meta tensor)."""
    try:
        return t.data_ptr() or None
    except Exception:
        return None


def _held(program: Any) -> dict[str, tuple[Any, list[torch.Tensor]]]:
    """Attribute path -> (object, its tensors) for each attribute of the program
    (and each item of a short dict, list or tuple attribute) that holds any."""
    out = {}
    for path, obj in _attributes(program):
        if obj is program:
            continue
        tensors = [t for t in _tensors_of(obj) if t.numel()]
        if tensors:
            out[path] = (obj, tensors)
    return out


def _attributes(program: Any) -> Iterator[tuple[str, Any]]:
    """The program's attributes (and the items of short containers), but the
    private bookkeeping of resumecheck's own programs (a framework adapter's
    stream lookahead is no state of the user's)."""
    try:
        items = list(vars(program).items())
    except TypeError:  # (no __dict__: slots)
        return
    ours = type(program).__module__.startswith("resumecheck.")
    for name, value in items:
        if name.startswith("__") or (ours and name.startswith("_")):
            continue
        yield name, value
        if isinstance(value, dict) and len(value) <= _LONGEST:
            for key, item in list(value.items()):
                yield f"{name}[{key!r}]", item
        elif isinstance(value, (list, tuple)) and len(value) <= _LONGEST:
            for i, item in enumerate(value):
                yield f"{name}[{i}]", item


def _tensors_of(obj: Any) -> list[torch.Tensor]:
    """The tensors an object holds as state: a tensor, a module's parameters and
    buffers, an optimizer's state. Read, never asked for: no ``state_dict()`` of
    an object the program did not declare is called (a loader's may start an
    iterator, which draws from the global stream, and the run would change)."""
    if isinstance(obj, torch.Tensor):
        return [obj.detach()]
    if isinstance(obj, torch.nn.Module):
        return [t.detach() for t in (*obj.parameters(), *obj.buffers())]
    if isinstance(obj, torch.optim.Optimizer):
        return [v.detach() for s in obj.state.values() for v in s.values()
                if isinstance(v, torch.Tensor)]
    return []


def _state_tensors(obj: Any) -> list[torch.Tensor]:
    """The tensors in what a declared component's ``state_dict()`` returns (at
    the end of the run, after its end capture asked for the same; none: it
    raises)."""
    if isinstance(obj, torch.nn.Module):
        return [t.detach() for t in (*obj.parameters(), *obj.buffers())]
    state_dict = getattr(obj, "state_dict", None)
    if not callable(state_dict):
        return []
    try:
        state = state_dict()
    except Exception:  # (not ours to judge here: the capture says it)
        return []
    return [v.detach() for _, v in flatten_state(state) if isinstance(v, torch.Tensor)]
