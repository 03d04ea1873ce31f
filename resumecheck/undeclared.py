"""State a program keeps that no declared component holds.

A check compares what the components declare, and the steps. A program may
keep more: an exponential moving average of the weights used only for
evaluation, a second optimizer, a loss scaler. When training changes such
state and the checkpoint forgets it, every step and every declared component
still match: the check cannot see the loss, and must not let "every
component's state match" read as the whole program's.

So the reference run looks at the tensors its program holds: in its
attributes, the items of short dicts, lists and tuples, a deque of any
length (one holder: a replay buffer), and the fields of its
own plain objects (``types.SimpleNamespace``, its classes; not a framework's),
four levels down: bare tensors (views too, and a step's output kept with its graph: a
recurrent state carried to the next step), modules'
parameters and buffers, optimizers' state, and plain numbers (an int or
float: a best loss, a patience counter), and what a declared model's layers
keep outside its ``state_dict()`` (number and tensor attributes, buffers
registered with ``persistent=False``, generators), the fields of a declared
component of the program's own class (a data position it wrote, whose
``state_dict()`` may leave one out), and random generators it
keeps (torch's, numpy's, Python's ``random.Random``); read where they are: no
``state_dict()`` of an undeclared object is called (but by a framework's
adapter, of what the framework itself asks at every save: a Lightning
callback's or training loader's of the program's own class, whose fields
beside it are named). Those that the run
changed (between the build and the end of the run, or after a step looked
at: each resume point and the step after it) and that no declared component
holds (the same storage, or the same values in what a component's
``state_dict()`` returns; a number: an attribute declared with ``Attr``) are
named in the report: not compared. Data tensors (the dataset, the last batch
the program kept: its samples or what the model was called with), a frozen
teacher, anything training does not change, is not state and is not named.
Nor is what a restart that restores every declared component brings back
(``brought_back``: it ends with it as the uninterrupted run did, and held it
so after its first step: ``held_digests``, ``UndeclaredWatch.look``): the
program sets it again from declared state. Apart from all that, a DataLoader
with persistent workers is state no checkpoint can hold
(``UndeclaredWatch.unrestorable``: said where a full resume diverges).
"""

from __future__ import annotations

import collections
import functools
import gc
import inspect
import json
import math
import random
import re
import types
import zlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch

from resumecheck.compare import digest, flatten_state
from resumecheck.components import (
    SAMPLER_EPOCH, SCHEDULER_TYPES, Attr, Component, RNGState, asked_state,
)
from resumecheck.module_state import cell_filled
from resumecheck.phrases import (
    ACCELERATE_DATASET, GENERATOR_CHANGED, GENERATOR_POSITION, LIGHTNING_DATASET,
    LIGHTNING_LOADER,
    LIKE_NAMED_AS_BUILT,
    IDLE_SEED, LOSS_LOG, MODULE_ATTR_TODO, NOT_SET_BACK, REGISTER_GENERATOR,
)
from resumecheck.streams import stream_digests, stream_items

__all__ = ["UndeclaredWatch", "alike_named", "brought_back", "held_digests", "iterators_over",
           "seeds_no_worker", "set_back_unseen"]

_LONGEST = 64
"""A list, tuple or dict with more items is not looked into (a dataset kept as a
list of tensors is data, and digesting it would cost more than the check)."""


EXPORTABLE_MADE_ANEW = (
    " (it makes the callback anew from what its state() returns and puts it in the old one's "
    "place: code that holds the old object, a collator that reads it, must find the new one "
    "in trainer.callback_handler.callbacks)")
"""How the advice to keep state in an ExportableState callback says that the
Trainer's restore replaces the callback (trial 477: a collator that read the
callback it was built with went on with the old one, and the resume departed)."""

_LIGHTNING_CALLBACK = (
    "Lightning: its state_dict() and load_state_dict(), and the check compares it as the "
    "component `callbacks`, so a state_dict() that leaves it out loses it")
_TRAINER_CALLBACK = (
    # (trial 843 followed the ExportableState advice, given first, and the resume failed: its
    # callback was made with a dataset; reading state.epoch, said last, was its fix)
    "the HuggingFace Trainer: a count of the loop's epochs or steps is best read from the "
    "Trainer's own state, state.epoch or state.global_step, which its checkpoint holds; other "
    "state, in a callback that is an ExportableState (transformers.trainer_callback), whose "
    "state() returns it among its `attributes`: the Trainer restores it only with "
    "restore_callback_states_from_checkpoint=True, and then as a new object, made with the "
    "keyword arguments among its state()'s `args` (saved as JSON: a callback made with a "
    f"dataset or a model cannot be made so){EXPORTABLE_MADE_ANEW}")
_CALLBACK_TODO = ("a framework's target declares the framework's own state only: make the "
                  "callback save and restore it with the checkpoint ({})")
"""What to do about state a framework adapter's user callback keeps (``undeclared_roots``)."""

_LIGHTNING_SAMPLERS = (f"{LIGHTNING_LOADER}.sampler.", f"{LIGHTNING_LOADER}.batch_sampler.")
_SAMPLER_GENERATOR_TODO = (
    "a generator a sampler of the training loader keeps, which the loader's state_dict() "
    "does not hold where the sampler keeps no state of its own (torch's RandomSampler), and "
    "a Lightning target declares the framework's own state only: use a sampler whose "
    "state_dict() holds it (torchdata's RandomSampler, with a StatefulDataLoader), or keep "
    "its get_state() in your module's on_save_checkpoint and set it back in on_load_checkpoint")
"""What to do about a generator a Lightning training loader's sampler keeps
(``frameworks.lightning._sampler_generators``; trial 737)."""

_FRAMEWORK_HELD_TODO = (
    "the framework's checkpoint does not hold it unless your code saves it there, and a "
    "framework's target declares the framework's own state only: draw from a generator "
    "seeded again from the step or the sample's index (a callback that saves its state "
    "saves it ahead of the step: the loader collates the next batch before the save)")
"""What to do about a generator an object the framework holds keeps (a Trainer's data
collator; a trial's Trainer subclass saved it, and read that the checkpoint did not)."""


# What a `not compared` line says of the declared components: none holds it
# (by storage or by values; a number, never by an equal value).
_NO_COMPONENT_HOLDS = "no declared component holds"
_HELD_BY_NONE = "held by no declared component"


class UndeclaredWatch:
    """The tensors a program holds at its build, to name at the end of its run
    those the run changed (its steps, or its save()) that no declared component holds."""

    def __init__(self, program: Any, components: Sequence[Component]) -> None:
        self._framework = ""  # (its name, a framework's target's: what to do depends on it)
        self._storages: set[int | None] = set()
        self._numbers: dict[str, Any] = {}
        self.held: dict[str, list[str]] = {}
        """After ``found``: what the program holds, digested (``held_digests``)."""
        self.unrestorable: list[str] = []
        """After ``found``: state no checkpoint can hold, in words (persistent workers)."""
        self.held_after: dict[int, dict[str, list[str]]] = {}
        """After each step ``look`` was called at: what the program held, digested."""
        self.at_build: dict[str, list[str]] = {}
        """What the program held right after its build, digested."""
        self._numbers_after: dict[str, dict[int, Any]] = {}
        self._losses: list[tuple[int, float]] = []
        self._streams = _left_out_streams(components)
        try:
            held = _watched(program, components)
            self._before: dict[str, list[str]] | None = _digested(held)
            self.at_build = dict(self._before)
            self._storages = {_ptr(t) for obj, tensors in held.values() if not _is_number(obj)
                              for t in tensors}
            self._numbers = {path: obj for path, (obj, _) in held.items() if _is_number(obj)}
        except Exception:  # a notice never fails a check: then none is given
            self._before = None

    def look(self, step: int, program: Any, components: Sequence[Component]) -> None:
        """Digest what the program holds after ``step`` (the first step after
        a resume point): state that training changes and sets back by the
        end (a patience counter that a better evaluation resets) counts as
        changed, and a restart is compared with it there (``held_after``)."""
        if self._before is None:
            return
        try:
            now = _watched(program, components)
        except Exception:  # (a notice never fails a check)
            return
        self.held_after[step] = _digested(now)
        for path, (obj, _) in now.items():
            if _is_number(obj):
                self._numbers_after.setdefault(path, {})[step] = obj

    def found(self, program: Any, components: Sequence[Component],
              data: Sequence[torch.Tensor] = (), records: Sequence[Any] = ()) -> dict[str, str]:
        """Each attribute whose changed tensors no declared component holds: its
        path, and it in words (none when they cannot be read: a notice never
        fails a check).
        ``data``: the last step's samples and model inputs; a tensor kept
        where they live (the last batch) is data, not state, unless its storage
        was there at the build already (a memory bank the program changes in
        place and hands the model every step is state). ``records``: the run's
        steps' (a list of their losses the program keeps is a log of the loss)."""
        if self._before is None:
            return {}
        self._framework = str(getattr(program, "framework", "") or "")
        self._losses = [(r.step, r.loss) for r in records]
        try:
            batch = {_ptr(t) for t in data} - self._storages - {None}
            # (streams first: a trial's left-out Python stream, the cause, came last,
            # after a generator its program seeds again every epoch)
            return {**_streams_moved(self._streams),
                    **self._found(self._before, program, components, batch)}
        except Exception:
            return {}

    def _found(self, before_all: dict[str, list[str]], program: Any,
               components: Sequence[Component], batch: set[int | None]) -> dict[str, str]:
        # (held until the end: a freed temporary's memory may hold the next tensor made)
        declared = [(c, t) for c in components for t in _state_tensors(c.obj)]
        ptrs = {_ptr(t) for _, t in declared if not _is_number_tensor(t)} - {None}
        # a number is never held by an equal value (a counter at 12 and some
        # component's 12 are a coincidence, a trial's lost EMA counter went
        # unnamed so): one a component of the program's own reads where the
        # program keeps it, the engine's own full resume brings back (``brought_back``)
        values = {digest(t) for c, t in declared if not _is_number_tensor(t)}
        modules = {c.name for c in components if isinstance(c.obj, torch.nn.Module)}
        own = {c.name: type(c.obj).__name__ for c in components
               if _own_class(c.obj) or _fields_added(c.obj) is not None}
        kept = {c.name: _state_leaves(c.obj) for c in components if _own_class(c.obj)}
        now, running, positions = _generators_apart(_watched(program, components))
        also = _fields_of_own(program, components)
        self.held = {**_digested(now), **positions}
        self.unrestorable = [_workers_text(path, obj) for path, (obj, _) in now.items()
                             if _keeps_workers(obj)]
        out = {}
        moved = {path for after in self.held_after.values() for path, digests in after.items()
                 if digests != before_all.get(path)}  # (and perhaps set back by the end)
        for path, (obj, tensors) in now.items():
            before = before_all.get(path, [])
            changed = [t for i, t in enumerate(tensors)
                       if i >= len(before) or self.held[path][i] != before[i]]
            if not changed and path in moved:
                changed = list(tensors)
            # by storage, or by values; one number kept bare equal to a declared
            # one (a counter at 10, and a batch norm's count) is a coincidence;
            # a Python number has no storage: by value (a component of the
            # program's own may read it where it is)
            bare = isinstance(obj, (torch.Tensor, dict, list, tuple))  # (trial 152: a bare
            # number at 16 was taken for a batch norm's num_batches_tracked, 16)
            missed = [t for t in changed if _ptr(t) not in ptrs and _ptr(t) not in batch
                      and ((bare and t.numel() == 1 and not _is_number_tensor(t))
                           or (_is_number_tensor(t) and not bare)
                           or digest(t) not in values)]
            owner = path.split(".")[0]
            if missed and owner in kept and _in_its_state(path, obj, kept[owner]):
                continue  # (its state_dict() returns it: compared, a lossy load is diagnosed)
            if missed and (_held_by_name(path, obj, components, kept)
                           or _returned(obj, also.get(id(obj)), kept)):
                continue  # (a component keeps it, under its name and equal: compared there)
            if missed and (_is_number(obj) or isinstance(obj, _PLAIN)) and (
                    reached := _reached_by_own(path, obj, program, components)) is not None:
                if reached:  # ('': its state_dict() returns it, equal: compared there)
                    out[path] = (f"{path} ({_number_values(self, path, obj)}, changed during "
                                 f"the run; {reached})")
                continue
            if missed:
                field = also.get(id(obj))
                out[path] = self._line(path, obj, tensors, missed,
                                       owner_kind=own.get(path.split(".")[0]),
                                       in_module=_in_module(path, obj, modules, components),
                                       none_holds=_NO_COMPONENT_HOLDS if field is None
                                       or field.split(".")[0] == path.split(".")[0]
                                       else _kept_by_own(field, own[field.split(".")[0]]))
        out.update({path: _generator_text(path, gen) for path, gen in running.items()})
        return _idle_seeds_said(out, program, now)

    def _line(self, path: str, obj: Any, tensors: list[torch.Tensor],
              missed: list[torch.Tensor], owner_kind: str | None, in_module: bool | str,
              none_holds: str = _NO_COMPONENT_HOLDS) -> str:
        """The `not compared` line of what ``path`` holds (``missed``: its
        changed tensors no declared component holds; ``owner_kind``: the
        class of the declared component of the program's own whose field it
        is; ``in_module``: it is in a declared module (``_in_module``);
        ``none_holds``: how the line says that no declared component's state holds it)."""
        if owner_kind is not None:  # (a field of a declared object of its own class)
            what = (f"{_number_values(self, path, obj)}, changed during the run" if _is_number(obj)
                    # (a trial read "Generator: 1 tensor, 5056 values": its state's bytes)
                    else f"a torch.Generator {GENERATOR_CHANGED}"
                    if isinstance(obj, torch.Generator)
                    else f"a numpy Generator {GENERATOR_CHANGED}"
                    if isinstance(obj, np.random.Generator)
                    # (a trial read "Random: 1 tensor, 7350 values" of a random.Random)
                    else f"a {type(obj).__module__.split('.')[0]}.{type(obj).__name__} whose "
                    "state the run changed" if isinstance(obj, _OTHER_GENERATORS)
                    else f"{type(obj).__name__}: {_amount_of(obj, missed)}, "
                    "changed during the run")
            return (f"{path} ({what}; a field of the declared component "
                    f"{path.split('.')[0]} ({owner_kind}) {NOT_SET_BACK}: {_FIELD_TODO})")
        if _is_number(obj):
            return self._number(path, obj, in_module, none_holds)
        if isinstance(obj, (torch.Generator, np.random.Generator)):
            kind = "a torch.Generator" if isinstance(obj, torch.Generator) else \
                "a numpy Generator"
            todo = (_SAMPLER_GENERATOR_TODO if path.startswith(_LIGHTNING_SAMPLERS)
                    else _SEEDED_COLLATOR_TODO if path.startswith("data_collator (")
                    else _FRAMEWORK_HELD_TODO if _framework_held(path) else REGISTER_GENERATOR)
            return (f"{path} ({kind} {GENERATOR_CHANGED}, drawn "
                    f"from or seeded again, and {none_holds}: {todo})")
        if isinstance(obj, _OTHER_GENERATORS):  # (trial 394: a Trainer dataset's
            # random.Random was given the advice on callbacks that set a value again)
            todo = _FRAMEWORK_HELD_TODO if _framework_held(path) else _todo(path, self._framework)
            return (f"{path} (a {type(obj).__module__.split('.')[0]}."
                    f"{type(obj).__name__} {GENERATOR_CHANGED}, drawn from "
                    f"or seeded again, and {none_holds}: {todo})")
        if isinstance(obj, SCHEDULER_TYPES):
            return (f"{path} (a {type(obj).__name__} whose counts the run changed, and "
                    f"{none_holds}: declare it as a component, and save and load its "
                    "state_dict() with the checkpoint" + (
                        " (a LightningModule: return it from configure_optimizers(), or keep "
                        "its state_dict() in on_save_checkpoint and load it in "
                        "on_load_checkpoint)" if in_module else "") + ", to check that it "
                    "resumes)")
        if isinstance(obj, torch.Tensor) and in_module == _METRIC_STATE:
            # (trial 742: a torchmetrics Accuracy's counts were told to use register_buffer)
            metric = "self." + path.partition(".")[2].rpartition(".")[0]
            return (f"{path} (Tensor: {_amount(missed)}, that the run changed, "
                    f"{_METRIC_TODO.format(metric=metric)})")
        if isinstance(obj, torch.Tensor) and in_module:
            return f"{path} (Tensor: {_amount(missed)}, that the run changed, {_LOOSE_TODO})"
        amount = (f"{len(obj)} item{'' if len(obj) == 1 else 's'}, "
                  f"{sum(t.numel() for t in tensors)} values"
                  if isinstance(obj, collections.deque) else _amount_of(obj, missed))
        return (f"{path} ({type(obj).__name__}: {amount}, that the run "
                f"changed and {none_holds}: {_todo(path, self._framework)}"
                f"{_loss_log(obj, self._losses)})")

    def _number(self, path: str, now: Any, in_module: bool | str,
                none_holds: str = _NO_COMPONENT_HOLDS) -> str:
        # (a trial's LightningModule counter: a Lightning target declares no component)
        held = (f"a setting of torch's {in_module}, which its state_dict() leaves out: "
                f"{_SETTING_TODO}" if isinstance(in_module, str)
                else f"an attribute of a declared module, which its state_dict() leaves out: "
                f"{MODULE_ATTR_TODO}" if in_module
                else f"{_HELD_BY_NONE if none_holds == _NO_COMPONENT_HOLDS else none_holds}: "
                f"{_todo(path, self._framework)}")
        return f"{path} ({_number_values(self, path, now)}, changed during the run; {held})"


def _loss_log(obj: Any, losses: list[tuple[int, float]]) -> str:
    """Where a list of numbers the program keeps holds the run's losses of
    consecutive steps, in order, the words that say it is a log of the loss
    (trial 570: a Trainer subclass's list of its steps' losses read as a
    cause among two real ones, and as state the correct twin lost); '' where
    it does not."""
    values = list(obj) if isinstance(obj, (list, tuple, collections.deque)) else []
    n = len(values)
    if n < 2 or n > len(losses) or not all(isinstance(v, float) for v in values):
        return ""
    for start in range(len(losses) - n + 1):
        run = losses[start:start + n]  # ((step, loss) of n consecutive steps)
        if all(math.isclose(v, loss, rel_tol=1e-6, abs_tol=1e-12)
               for v, (_, loss) in zip(values, run)):
            return (f"; its {n} numbers are the run's losses of steps {run[0][0]} to "
                    f"{run[-1][0]}, in order: {LOSS_LOG} (name it in Target(not_state=...) "
                    "where none does)")
    return ""


def _number_values(watch: UndeclaredWatch, path: str, now: Any) -> str:
    """``int: 0 at the build, 5 after step 5, 0 at the end``."""
    was = (f"{watch._numbers[path]!r} at the build" if path in watch._numbers
           else "None or not set at the build")  # (trial 402: it was None)
    shown = watch._numbers.get(path)
    if shown == now:  # set back by the end: where it went on the way
        for step, value in sorted(watch._numbers_after.get(path, {}).items()):
            if value != shown and value != now:
                was += f", {value!r} after step {step}"
                shown = value
    return f"{type(now).__name__}: {was}, {now!r} at the end"


# What a `not compared` line says of a field of a declared component of the
# program's own class, and what to do.
_FIELD_TODO = ("its state_dict() leaves it out, or its load_state_dict() does not set it: "
               "return it from state_dict() and set it in load_state_dict(), to check that "
               "it resumes")


_NUMBERS_ONLY = re.compile(rf"^\S+ \(\w+: \d+ numbers?(?: \(of its \d+ entries\))?, "
                           rf"that the run changed and "
                           rf"{_NO_COMPONENT_HOLDS}:")
"""A `not compared` line of a holder of the program's own numbers only (no tensor)."""


_STREAM_PATHS = {"python": "Python's random stream", "numpy": "numpy's global stream",
                 "torch": "torch's CPU stream"}


def _left_out_streams(components: Sequence[Component]) -> dict[str, str]:
    """The digests of the global streams that the declared ``RNGState``s leave
    out (their ``streams=``), where one is declared (none is: nothing is said
    of streams a program may restore in other ways)."""
    declared = [c.obj for c in components if isinstance(c.obj, RNGState)]
    left = [s for s in _STREAM_PATHS if declared and all(s not in r.streams for r in declared)]
    if not left:
        return {}
    try:
        return stream_digests(stream_items(RNGState(streams=left).state_dict()))
    except Exception:  # (a notice never fails a check)
        return {}


def _streams_moved(before: dict[str, str]) -> dict[str, str]:
    """Of the streams ``_left_out_streams`` digested, those the run moved, in
    words (a trial: Python's stream, left out of ``RNGState(streams=("torch",))``
    and drawn from by an augmentation, was named nowhere)."""
    if not before:
        return {}
    now = stream_digests(stream_items(RNGState(streams=list(before)).state_dict()))
    return {_STREAM_PATHS[s]: (
        f"{_STREAM_PATHS[s]} (the run drew from it, or seeded it again, and the declared "
        f"RNGState leaves it out: add '{s}' to its streams= to check that it resumes)")
        for s, digested in before.items() if now.get(s) != digested}


def not_known_if_held(text: str, why: str) -> str:
    """A `not compared` line (``found``'s) as said where nothing shows what
    the declared state brings back (``why``: the engine's own full resume
    failed, say). Numbers are never held by an equal value: a component of
    the program's own that reads them where the program keeps them (its
    ``state_dict()`` returns them) is seen only by that resume; so the line
    of a number, or of a holder of numbers only, does not say that no
    declared component holds it (a tensor is held by its storage or values,
    a generator by itself: those lines stand)."""
    hedge = (f"whether a declared component holds it is not known ({why}: that resume shows "
             "what the declared state brings back); if none does")
    if f" {NOT_SET_BACK}: " in text:  # (a field of a component of the program's own)
        return text.replace(f" {NOT_SET_BACK}: ", f"; whether restoring the component sets "
                            f"it back is not known ({why}: that resume shows what the "
                            "declared state brings back); if it does not, ", 1)
    if _NUMBERS_ONLY.match(text):
        return text.replace(f" and {_NO_COMPONENT_HOLDS}:", f"; {hedge},", 1)
    return text.replace(f"; {_HELD_BY_NONE}:", f"; {hedge},", 1)


def alike_named(path: str, fields_as_built: Mapping[str, str]) -> str:
    """Of the declared components' fields that are as built at the resume point
    too (``Checker.fields_as_built``: component -> its line), those of the
    last name of ``path``, in words: `` (`data_cursor` returns `a.epoch`,
    `b.epoch`, of a like name, as built there too)``; '' where none is (trials:
    a position returning a task's `epoch` beside a program's epochs by task,
    as built at the resume point, read "declare it" as the checkpoint missing it)."""
    name = path.rsplit(".", 1)[-1]
    # (a trial's `batch_in_epoch` beside its position's `batch`: its first word, where
    # nothing is named so or by its last words)
    said: list[str] = []
    for like in ({name, name.split("_", 1)[-1]}, {name.split("_", 1)[0]}):
        for component, line in fields_as_built.items():
            fields = [f for f in re.findall(r"`([^`]+)` \(", line)
                      if f.rsplit(".", 1)[-1] in like]
            if fields:
                said.append(f"`{component}` returns {', '.join(f'`{f}`' for f in fields)}")
        if said:
            break
    return (f" ({'; '.join(said)}{LIKE_NAMED_AS_BUILT}: if that is this value, "
            "it holds it)") if said else ""


def set_back_unseen(text: str, alike: str = "") -> str:
    """A `not compared` line (``found``'s) where every resume point found it as
    a fresh build holds it: of a field of a declared component of the
    program's own, whether the component's restore sets it back cannot be
    seen there, so the line does not say that it does not (trial 147: a
    sampler whose state_dict() holds its generator as a string, and whose
    load sets it and makes its order again, was told to return what it
    returns); of a number, or a holder of numbers only, whether a declared
    component returns it cannot be seen either (numbers are held by no
    storage: only a restart shows it)."""
    if f" {NOT_SET_BACK}: " in text:
        return text.replace(f" {NOT_SET_BACK}: ", "; whether restoring the component sets it "
                            "back cannot be seen at a resume point where it is as a fresh "
                            "build holds it; if it does not, ", 1)
    # (trial 167: an epoch a declared position's state_dict() returns, read from where
    # the program keeps it, was "held by no declared component"; a number is never
    # held by an equal value, and the restart that would show it holds it as built)
    hedge = ("whether a declared component's state_dict() returns it cannot be seen at a "
             f"resume point where it is as a fresh build holds it{alike}; if none does,")
    if _NUMBERS_ONLY.match(text):
        return text.replace(f" and {_NO_COMPONENT_HOLDS}:", f"; {hedge}", 1)
    if _COUNTS_ONLY.match(text):  # (a scheduler's counts, as a fresh one's there: a trial's
        # `Through` component returned its state_dict() and was said to hold none)
        return text.replace(f", and {_NO_COMPONENT_HOLDS}:", f"; {hedge}", 1)
    if f"; {_HELD_BY_NONE}:" in text:
        return text.replace(f"; {_HELD_BY_NONE}:", f"; {hedge}", 1)
    # (trial 537: a generator and an order a declared position's load_state_dict() makes
    # again from the epoch, named at a resume at 1 as held by none, told to register)
    made = ("no declared component holds it, and whether one's restore makes it again (a "
            "load_state_dict() that seeds it, or makes it anew, from what it returns) cannot "
            f"be seen at a resume point where it is as a fresh build holds it{alike}; if none "
            "does,")
    return re.sub(rf",? and {_NO_COMPONENT_HOLDS}:", f"; {made}", text, count=1)


_COUNTS_ONLY = re.compile(rf"^\S+ \(a \w+ whose counts the run changed, and {_NO_COMPONENT_HOLDS}:")


def generator_paths(lines: Mapping[str, str]) -> set[str]:
    """Of ``UndeclaredWatch.found``'s lines (path -> words), the paths of the
    random generators (torch's, numpy's, a ``random.Random``): state a program
    seeds again, whose digest alike after a step is no coincidence of a value
    that was read otherwise before (a counter set back to 0 is one)."""
    return {path for path, text in lines.items() if GENERATOR_CHANGED in text}


def held_digests(program: Any, components: Sequence[Component]) -> dict[str, list[str]]:
    """Where the program keeps state outside its declared components, and the
    digest of each tensor or number there (empty when it cannot be read)."""
    try:
        return _digested(_watched(program, components))
    except Exception:  # (a notice never fails a check)
        return {}


def _digested(held: dict[str, tuple[Any, list[torch.Tensor]]]) -> dict[str, list[str]]:
    """``_watched``'s holders, each as the digests of its tensors."""
    return {path: [digest(t) for t in tensors] for path, (_, tensors) in held.items()}


def brought_back(reference: dict[str, list[str]], restarted: dict[str, list[str]],
                 reference_after: dict[int, dict[str, list[str]]] | None = None,
                 restarted_after: dict[int, dict[str, list[str]]] | None = None
                 ) -> tuple[set[str], dict[str, int]]:
    """What a restart that restored every declared component ends with as the
    reference ended (``held_digests`` of each): the declared state brings it
    back (a sampler's epoch set from the declared one, the last batch's
    indices), so it is not lost state (none when the restart's is unknown).
    Unless the restart held it otherwise than the reference did after a step
    (``*_after``: step -> digests, ``UndeclaredWatch.look``): after its first
    step, what the program sets again from declared state is right; a
    counter the restart lost may be set back alike by the end (a patience
    counter that a better evaluation resets). (The caller passes what a
    restart held right after its restore only where it departed.) Also, of
    what it ends with alike, what it held otherwise on the way: path -> the
    first step after which it did."""
    alike = {path for path, digests in reference.items() if restarted.get(path) == digests}
    otherwise: dict[str, int] = {}
    for step, restarted_there in sorted((restarted_after or {}).items()):
        there = (reference_after or {}).get(step)
        if there is not None:
            for path in alike:
                if path in there and restarted_there.get(path) != there[path]:
                    otherwise.setdefault(path, step)
    return alike - set(otherwise), otherwise


def iterators_over(program: Any, loaders: dict[str, Any]) -> dict[str, list[str]]:
    """Where the program keeps an iterator made from one of ``loaders``
    (component name -> its object; data loaders, ``RNGState``s holding a
    generator such an iterator's sampler draws from, and ``Attr``s of such a
    sampler, its epoch): component name -> the
    paths (``it``, ``state.it``). A loader's ``load_state_dict`` sets the
    position of the iterators it makes next (a StatefulDataLoader's); one the
    program made before goes on from where it was, in the order it drew."""
    ours = {_made_from(obj): name for name, obj in loaders.items()
            if isinstance(obj, torch.utils.data.DataLoader)}
    # (trial 226: a declared generator a loader's sampler draws its order from, put
    # right after a load() that had made the iterator from it, read "not the cause")
    drawn = {id(g): name for name, obj in loaders.items() if isinstance(obj, RNGState)
             for g in obj.generators.values() if isinstance(g, torch.Generator)}
    # (trial 241: so is a sampler's epoch, declared as an Attr of it, put right after a
    # load() that had made the epoch's iterator over that sampler without setting it)
    drawn.update({id(obj.obj): name for name, obj in loaders.items() if isinstance(obj, Attr)
                  and (isinstance(obj.obj, torch.utils.data.Sampler) or name == SAMPLER_EPOCH)})
    found: dict[str, list[str]] = {}
    if not ours and not drawn:
        return found
    seen = {id(program), *(id(obj) for obj in loaders.values())}
    todo = [(name, value, 1) for name, value in _fields(program)]
    looked = 0
    while todo and looked < _MOST:
        path, obj, depth = todo.pop(0)
        if id(obj) in seen or _is_number(obj) or isinstance(obj, torch.Tensor):
            continue
        seen.add(id(obj))
        looked += 1
        if isinstance(obj, torch.utils.data.dataloader._BaseDataLoaderIter):
            made_from = _made_from(obj)
            if made_from in ours:
                found.setdefault(ours[made_from], []).append(path)
            for name in dict.fromkeys(drawn[g] for g in _sampler_generators(obj) if g in drawn):
                found.setdefault(name, []).append(path)
        elif inspect.isgenerator(obj) and obj.gi_frame is not None \
                and id(obj.gi_frame.f_locals.get("self")) in drawn:  # (a sampler's own __iter__)
            found.setdefault(drawn[id(obj.gi_frame.f_locals["self"])], []).append(path)
        elif depth < _DEPTH and not isinstance(obj, (torch.nn.Module, torch.utils.data.DataLoader)):
            todo.extend((p, v, depth + 1) for p, v in _children(path, obj, set()))
    return found


def _sampler_generators(iterator: Any) -> list[int]:
    """The ids of the samplers a loader's iterator drew its order from, as
    made (its index sampler, and the samplers that one wraps), and of their
    torch generators."""
    out, sampler = [], getattr(iterator, "_index_sampler", None)
    for _ in range(3):  # (a BatchSampler over a RandomSampler, say)
        if sampler is None:
            break
        out.append(id(sampler))
        if isinstance(getattr(sampler, "generator", None), torch.Generator):
            out.append(id(sampler.generator))
        sampler = getattr(sampler, "sampler", None)
    return out


def _made_from(obj: Any) -> tuple[int, int]:
    """A data loader, or an iterator it made: its dataset's and index sampler's ids."""
    try:
        data = obj._dataset if hasattr(obj, "_dataset") else obj.dataset
        return id(data), id(obj._index_sampler)
    except Exception:  # noqa: BLE001 - a loader of an unusual kind: matched by nothing
        return id(obj), id(obj)


def _generators_apart(now: dict[str, tuple[Any, list[torch.Tensor]]]) -> tuple[
        dict[str, tuple[Any, list[torch.Tensor]]], dict[str, Any], dict[str, list[str]]]:
    """What the program holds, less its Python generators; those it advanced,
    whose position no checkpoint holds: a line says so; and the digests of
    where those stand, where that reads (``position_of``): a restart that ends
    with one alike brings it back, and the line goes."""
    running = {path: obj for path, (obj, _) in now.items() if _advanced(obj)}
    return ({path: held for path, held in now.items() if not _positional(held[0])}, running,
            _digested({path: now[path] for path in running if now[path][1]}))


def position_of(gen: Any, _within: frozenset[int] = frozenset()) -> list[torch.Tensor] | None:
    """Where a Python generator stands, as tensors to digest (None: not known):
    the instruction its frame is suspended at, the numbers and tensors among
    its locals but its arguments (what it was made from: a restart makes it
    from elsewhere, ``range(start, n)``, to stand where the uninterrupted run's
    stands), and the position of each iterator it holds or loops over (a
    list's or a range's, a data loader's count, a generator's, read so); not
    known where it holds another iterator (a file, an itertools one), or
    nothing of the kind. Two generators of one function that stand alike by it
    yield alike from there: a restart that makes it anew from declared state (a
    position kept as a step count) ends where the uninterrupted run's ended,
    and it is not named (trial 194: batches remade from a declared cursor after
    each load read "how far it ran is in no checkpoint")."""
    if not isinstance(gen, types.GeneratorType):
        return _iterator_position(gen)
    frame = gen.gi_frame
    if frame is None:
        return [_number_tensor(-1)]  # (ended)
    code = gen.gi_code
    made_from = set(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount
                                     + bool(code.co_flags & inspect.CO_VARARGS)
                                     + bool(code.co_flags & inspect.CO_VARKEYWORDS)])
    values, read = [_number_tensor(frame.f_lasti)], 0
    for name, value in sorted(frame.f_locals.items()):
        if name in made_from:
            continue
        if _is_number(value):
            values.append(_number_tensor(value))
        elif isinstance(value, torch.Tensor) and value.grad_fn is None:
            values.append(value.detach())
        else:
            continue
        read += 1
    within = _within | {id(gen)}  # (generators that hold each other: not known)
    for held in gc.get_referents(gen):  # (its locals and its stack: a loop's iterator)
        if held is gen or not hasattr(type(held), "__next__"):
            continue
        inner = None if id(held) in within else position_of(held, within)
        if inner is None:
            return None
        values += inner
        read += 1
    return values if read else None


def _iterator_position(it: Any) -> list[torch.Tensor] | None:
    """How far an iterator a generator holds has run (None: not known): a data
    loader's count of batches, or a list's, a tuple's or a range's index and
    what is left (what a range iterator yields next, as it reads from elsewhere
    when made from elsewhere)."""
    if isinstance(it, torch.utils.data.dataloader._BaseDataLoaderIter):
        return [_number_tensor(it._num_yielded)]
    if type(it).__name__ not in ("list_iterator", "tuple_iterator", "range_iterator"):
        return None
    reduced = it.__reduce__()
    seq = reduced[1][0]
    index = reduced[2] if len(reduced) > 2 else len(seq)
    if isinstance(seq, range):
        return [_number_tensor(seq.start + index * seq.step), _number_tensor(len(seq) - index)]
    return [_number_tensor(index), _number_tensor(len(seq) - index)]


def _positional(obj: Any) -> bool:
    """A Python generator, or an iterator of ``itertools`` (a chain of repeats,
    a count): a position no checkpoint holds."""
    return isinstance(obj, types.GeneratorType) or type(obj).__module__ == "itertools"


def _advanced(gen: Any) -> bool:
    """Whether a generator has run (it yielded, or ended), or an itertools
    iterator is held (whether it ran is not known), and its position is not
    that of a data loader it reads (``def forever(loader)``, ``cycle(loader)``:
    where it is shows in the samples, which are compared; a sampler's own
    ``__iter__``, trial 190: a bucket sampler whose position its state_dict()
    keeps, named "kept where no checkpoint of yours holds it")."""
    data = (torch.utils.data.DataLoader, torch.utils.data.Dataset,
            torch.utils.data.Sampler, torch.utils.data.dataloader._BaseDataLoaderIter)
    if not isinstance(gen, types.GeneratorType):  # (itertools: what it reads, by its reduce)
        if not _positional(gen):
            return False
        try:
            reduced = gen.__reduce__()
        except Exception:
            return True
        parts = list(reduced[1]) if len(reduced) > 1 else []
        if len(reduced) > 2 and isinstance(reduced[2], tuple):
            parts += list(reduced[2])
        # (a cycle past its first pass replays the batches it saved: tensors)
        saved = [x for p in parts if isinstance(p, list) for x in p[:4]]
        batches = [t for x in saved for t in (x if isinstance(x, (list, tuple)) else [x])]
        return not any(isinstance(p, data) for p in parts) and not any(
            isinstance(t, torch.Tensor) for t in batches)
    if inspect.getgeneratorstate(gen) == inspect.GEN_CREATED:
        return False
    frame = gen.gi_frame
    return frame is None or not any(isinstance(v, data) for v in frame.f_locals.values())


def _generator_text(path: str, gen: Any) -> str:
    """The `not compared` line of a Python generator the program keeps and ran
    (trial 153: a loss-weight ramp kept in a generator, made anew by every
    restart, was named nowhere, where its departure came after the run's end)."""
    if not isinstance(gen, types.GeneratorType):  # (trial 154: a chain of repeats)
        return (f"{path} (an itertools.{type(gen).__name__} iterator: {GENERATOR_POSITION}; a "
                "restart makes it anew from its start, so where what it yields depends on how "
                "far it ran (a warm-up of repeats, a count), keep that position in a declared "
                "component and make it again from there after a load)")
    code = gen.gi_code
    where = f"{code.co_name}() of {code.co_filename.rsplit('/', 1)[-1]}"
    # (trial 404: "a restart makes it anew from its start" of a stream its load made
    # anew from a saved count, which ended elsewhere for a buffer the load lost)
    return (f"{path} (a Python generator, {where}, that the run advanced: {GENERATOR_POSITION}"
            "; a restart makes it anew, from its start unless your load() makes it from a "
            "position a component keeps, and then where it ends follows from what that resume "
            "read; where what it yields depends on how far it ran (a count, a schedule, a data "
            "stream), keep that position in a declared component and make it again from there "
            "after a load)")


def _keeps_workers(obj: Any) -> bool:
    """A DataLoader whose worker processes live from epoch to epoch."""
    return (isinstance(obj, torch.utils.data.DataLoader) and obj.num_workers > 0
            and bool(obj.persistent_workers))


def _workers_text(path: str, loader: Any) -> str:
    """A DataLoader with persistent workers, as state no checkpoint can hold:
    what its dataset draws in them (augmentation) comes from the workers' own
    streams, which carry on across epochs (trial 247: said as fact of a dataset
    that seeded its generator from each sample's index, which resumed); and its
    one iterator draws the workers' base seed once (trial 324: a shuffle
    generator seeded again each epoch, moved by a restart's new iterator; trial 421's
    load() replayed every batch, and resumed bit for bit, which the text left out)."""
    return (f"the DataLoader `{path}` keeps its {loader.num_workers} worker processes from "
            "epoch to epoch (persistent_workers=True): a random stream its dataset draws "
            "from in them (augmentation) carries on across epochs in the uninterrupted run and "
            "starts anew after a restart, and no checkpoint holds it; a dataset that draws from "
            "none, or from a generator it seeds again from the epoch and the sample's index, "
            "resumes all the same, and so does a load() that reads again, through the workers, "
            "every batch the run read before the save; and it makes its iterator once: the "
            "uninterrupted run draws the workers' base seed (from the loader's generator, else "
            "torch's stream) in its "
            "first epoch only, where a restart's new iterator draws it again, and what that "
            "stream gives next (the next shuffle) moves: an iterator made as the program is "
            "built (iter(loader)), before the load, keeps the draws alike")


LOADER_EPOCH_COUNT = "loader (Accelerate).iteration"
"""Where an Accelerate target names the prepared loader's own epoch count
(``undeclared_roots``, where the loop does not call ``set_epoch``)."""

_LOADER_EPOCH_TODO = (
    "a prepared loader counts its epochs itself, from 0 in every new process, and orders each "
    "epoch's shuffle by that count; Accelerate's checkpoint does not hold it: call "
    "loader.set_epoch(epoch) at each epoch's start, from an epoch your checkpoint keeps")


_IDLE_SEED_TODO = (
    "it is the generator of the DataLoader `{loader}`, which has no workers and whose "
    f"sampler does not draw from it: each iter() draws from it {IDLE_SEED}, "
    "so a restart that makes its iterator at another point moves "
    "it and changes no step; a checkpoint may leave it out (name it in "
    "Target(not_state=('{path}',)) to say so), and registered in an RNGState it would be "
    "compared all the same")
"""(trial 424: a loader's generator, drawn once per iter() for the base seed of workers it
did not have; registered as the line advised, a correct program failed.)"""

_IDLE_LIVE_TODO = (
    "it is the generator of the training DataLoader the framework holds, which has no workers "
    f"and whose sampler does not draw from it: each iter() draws from it {IDLE_SEED}, so a "
    "restart that makes its iterator at another point moves it and changes no step; a "
    "checkpoint may leave it out (name it in the target's not_state=('{path}',) to say so)")
"""``_IDLE_SEED_TODO`` of a framework target's loader (``_live_loader_seeds``)."""


def _idle_seeds_said(lines: dict[str, str], program: Any,
                     held: dict[str, tuple[Any, list[torch.Tensor]]] | None = None
                     ) -> dict[str, str]:
    """``lines``, where one advises registering a loader's own generator that
    seeds no worker (``_loader_without_workers``; ``held``: each line's object
    and its tensors, where a framework holds the loader): what it is, instead."""
    for path, text in lines.items():
        if REGISTER_GENERATOR in text and (loader := _loader_without_workers(program, path)):
            lines[path] = text.replace(REGISTER_GENERATOR,
                                       _IDLE_SEED_TODO.format(loader=loader, path=path))
        elif (said := _live_loader_seeds(program, path, (held or {}).get(path, (None,))[0],
                                         text)):
            lines[path] = said
    return lines


def _loader_without_workers(program: Any, path: str) -> str | None:
    """The path of the DataLoader whose own ``generator`` ``path`` is, where
    that loader has no workers, its dataset is a map-style one and its sampler
    does not draw from it (None: not such a generator). Read through the
    objects' ``__dict__`` alone, as the rest of this module reads the program."""
    parent, _, name = path.rpartition(".")
    if name != "generator" or not parent:
        return None
    holder: Any = program
    for part in parent.split("."):
        space = getattr(holder, "__dict__", None)
        if not isinstance(space, dict) or part not in space:
            return None
        holder = space[part]
    gen = getattr(holder, "generator", None)
    return parent if isinstance(gen, torch.Generator) and seeds_no_worker(holder, gen) else None


def seeds_no_worker(loader: Any, gen: torch.Generator) -> bool:
    """Whether ``gen`` is the own generator of the DataLoader ``loader``, which
    has no workers, reads a map-style dataset, and whose sampler does not draw
    from it: it serves the workers' base seed alone."""
    if not isinstance(loader, torch.utils.data.DataLoader) or loader.generator is not gen \
            or loader.num_workers or isinstance(loader.dataset, torch.utils.data.IterableDataset):
        return False
    samplers = [loader.sampler, getattr(loader.batch_sampler, "sampler", None)]
    return not any(getattr(s, "generator", None) is gen for s in samplers)


def _live_loader_seeds(program: Any, path: str, gen: Any, text: str) -> str | None:
    """A framework target's line of a generator that is the own generator of a
    training loader its framework holds (``live_loaders``), seeding no worker:
    what it is, instead of the advice to keep it (trial 519: a datamodule's
    generator, given to the loader its train_dataloader() made, read "your
    checkpoint loses it" in a correct program). None: not such a line."""
    live = getattr(program, "live_loaders", None)
    if not isinstance(gen, torch.Generator) or not callable(live):
        return None
    try:
        loaders = list(live())
    except Exception:
        return None
    if not any(seeds_no_worker(loader, gen) for loader in loaders):
        return None
    # (a line holds the plain advice here: a framework's wording of it comes later,
    # ``verdict.reworded_lines``)
    if REGISTER_GENERATOR not in text:
        return None
    return text.replace(REGISTER_GENERATOR, _IDLE_LIVE_TODO.format(path=path))


def _framework_held(path: str) -> bool:
    """Whether ``path`` is an object a framework holds (a Trainer's collator or
    dataset, a Lightning or Accelerate loader's dataset)."""
    return path.startswith(("data_collator", "train_dataset", LIGHTNING_DATASET,
                            ACCELERATE_DATASET))


def _callback_todo(framework: str) -> str:
    """What to do about a callback's state, for ``framework`` (trial 480: a
    Lightning program's line carried the HuggingFace Trainer's advice too)."""
    return _CALLBACK_TODO.format(
        _LIGHTNING_CALLBACK if framework == "Lightning" else
        _TRAINER_CALLBACK if framework == "the HuggingFace Trainer" else
        f"{_LIGHTNING_CALLBACK}; {_TRAINER_CALLBACK}")


def _todo(path: str, framework: str = "") -> str:
    if path == LOADER_EPOCH_COUNT:
        return _LOADER_EPOCH_TODO
    return (_callback_todo(framework) if path.startswith("callbacks (")
            else _DATASET_TODO if path.startswith("train_dataset (")
            else _LIGHTNING_DATASET_TODO if path.startswith(f"{LIGHTNING_DATASET} (")
            else _LIGHTNING_LOADER_TODO if path.startswith(f"{LIGHTNING_LOADER} (")
            else _DATAMODULE_TODO if path.startswith("datamodule (")
            else _ACCELERATE_DATASET_TODO if path.startswith(f"{ACCELERATE_DATASET} (")
            else _SUBCLASS_TODO if path.startswith("trainer.")
            else _COLLATOR_TODO if path.startswith("data_collator")
            else _SCHEDULER_TODO if path.startswith("lr_scheduler (")
            else "declare it as a component to check that it resumes")


_SCHEDULER_TODO = (
    "a field of your scheduler that its state_dict() leaves out, which the Trainer's "
    "checkpoint saves and restores: return it there and set it in its load_state_dict()")
"""What to do about state a Trainer's scheduler of the program's own class keeps
outside its state_dict() (trial 655: a step count its schedule read)."""


WHOLE_EPOCH = ("int(state.epoch) (resumed inside an epoch, the Trainer restores state.epoch "
               "as a fraction: two thirds into the second epoch 1.67, where the uninterrupted "
               "run read 1.0 at that epoch's start)")
"""The epoch a Trainer callback sets by-epoch state from (trial 823: round(state.epoch),
set from restored state as the advice said, read a resumed epoch one level too hard)."""

_DATASET_TODO = (
    "a framework's target declares the framework's own state only, and the Trainer's "
    "checkpoint holds nothing of your dataset; the Trainer fetches a step's batches before "
    "that step's callbacks run (a micro-batch ahead), so a value a callback sets again from "
    "the restored global step comes too late for them: make what a sample depends on a "
    "function of state the Trainer restores, applied where the batch is used (compute_loss, "
    "a collator that reads the step), or, for what changes by epoch, set in on_epoch_begin "
    f"from {WHOLE_EPOCH}, which runs before the epoch's first fetch")
"""What to do about state the training dataset of a Trainer target keeps (trial 260;
trial 272: a callback that set it from the global step in on_step_begin, as this
advised, was too late for the batches fetched ahead, and an ExportableState
callback cannot hold the dataset: the Trainer makes it again from its arguments;
a later trial's level set from state.epoch in on_epoch_begin resumed, where this
steered it away from callbacks)."""


_LIGHTNING_DATASET_TODO = (
    "a framework's target declares the framework's own state only, and Lightning's "
    "checkpoint holds nothing of your dataset unless its loader saves it: give the dataset "
    "state_dict() and load_state_dict(), and load it with torchdata's StatefulDataLoader, "
    "which keeps them with its position in Lightning's checkpoint (a value a hook sets at an "
    "epoch's start, on_train_epoch_start, comes after a resumed epoch's first batch is "
    "fetched)")
"""What to do about state the training dataset of a Lightning target keeps (trial 368:
a dataset that counted its own epochs in a hook; one that took Lightning's epoch in
on_train_epoch_start read the build's at a resumed epoch's first batch:
``tests/frameworks_loop_programs.py:DATASET_*``)."""


_DATAMODULE_TODO = (
    "a framework's target declares the framework's own state only, and Lightning's "
    "checkpoint holds what your LightningDataModule's state_dict() returns: return it there "
    "and set it in its load_state_dict() (define the two where it has none: the check then "
    "compares what they hold as the component `datamodule`)")
"""What to do about a field a Lightning target's datamodule keeps (trial 782: its
state_dict() left out the place in the epoch, and the line said to declare a
component, which a Lightning target cannot)."""


_LIGHTNING_LOADER_TODO = (
    "a framework's target declares the framework's own state only, and Lightning's "
    "checkpoint holds what your loader's state_dict() returns: return it there and set it "
    "in its load_state_dict()")
"""What to do about a field a Lightning target's training loader of the program's own
class keeps beside its state_dict() (trial 511: an epoch its state_dict() left out)."""


_ACCELERATE_DATASET_TODO = (
    "a framework's target declares the framework's own state only, and Accelerate's "
    "checkpoint holds nothing of your dataset unless it is registered: give the dataset "
    "state_dict() and load_state_dict() and pass it to accelerator.register_for_checkpointing")
"""What to do about state the prepared loader's dataset of an Accelerate target keeps
(trial 382: a dataset's own crop generator, which no checkpoint held, went unnamed)."""


_SEEDED_COLLATOR_TODO = (
    "transformers' data collator, given a seed, draws from a generator of its own, which the "
    "Trainer's checkpoint does not hold (it keeps torch's streams): leave its seed unset for "
    "it to draw from torch's stream, which the checkpoint keeps")
"""What to do about transformers' own collator made with ``seed=`` (trial 816)."""

_COLLATOR_TODO = (
    "a framework's target declares the framework's own state only, and the Trainer's "
    "checkpoint holds nothing of your collator: make what it depends on a function of state "
    "the Trainer restores (for what changes by epoch, set in a callback's on_epoch_begin from "
    f"{WHOLE_EPOCH}, which runs before the epoch's first fetch), or keep it in a callback that "
    "is an ExportableState (with restore_callback_states_from_checkpoint=True"
    + EXPORTABLE_MADE_ANEW.replace(" (", ": ", 1))
"""What to do about state a Trainer target's data collator keeps (trial 443: an epoch
counter a callback kept by counting epoch ends was told to be declared, which a Trainer
target has no way to do; its twin set it from state.epoch in on_epoch_begin and resumed)."""


_SUBCLASS_TODO = (
    "a field your Trainer subclass sets, which the Trainer's checkpoint does not hold unless "
    "your code saves it there: where your subclass's own _save_checkpoint() writes it, check "
    # (trial 849 kept a count in an ExportableState callback its subclass held: the Trainer's
    # restore made the callback anew, and the subclass counted on in the old one)
    "that its _load_from_checkpoint() sets it back from what was written; else derive it from "
    "state.global_step, or keep it in a callback that is an ExportableState (with "
    "restore_callback_states_from_checkpoint=True" + EXPORTABLE_MADE_ANEW.replace(" (", ": ", 1)
    .removesuffix(")") + ", as must your subclass), for the engine to compare it as the rest")
"""What to do about state a Trainer subclass keeps (``transformers._subclass_fields``); a
trial's subclass saved its controller in a file of its own beside the Trainer's, and read
that the checkpoint did not hold it; trial 673's load read a key its save had renamed, and
was told to move the field into a callback."""


def _amount(missed: list[torch.Tensor]) -> str:
    """``2 tensors, 49 values``; the program's own numbers (one-element tensors
    here, see ``_number_tensor``) counted apart: ``3 numbers``."""
    numbers = sum(1 for t in missed if _is_number_tensor(t))
    tensors = [t for t in missed if not _is_number_tensor(t)]
    count = sum(t.numel() for t in tensors)
    parts = [f"{len(tensors)} tensor{'' if len(tensors) == 1 else 's'}, {count} value"
             f"{'' if count == 1 else 's'}"] if tensors else []
    parts += [f"{numbers} number{'' if numbers == 1 else 's'}"] if numbers else []
    return " and ".join(parts)


def _amount_of(obj: Any, missed: list[torch.Tensor]) -> str:
    """``_amount(missed)``, and where a dict, list or tuple holds more entries
    (a sample, a view of the data, beside its label): ``1 number (of its 2
    entries; the other is left out here: no tensor or number (or a view of
    other data), unchanged since the build, or equal to what a declared component
    holds)`` (a trial
    read `tuple: 1 number` as the whole tuple; another, `3 numbers (of its 4
    entries)` of a log entry whose fourth was the very float its optimizer
    held, as a miscount)."""
    named = _amount(missed)
    if _long(obj):  # (trial 208: "dict: 480 numbers" of 96 entries of 5 ids each)
        return f"{len(obj)} entries, {named} in all"
    if isinstance(obj, (dict, list, tuple)) and len(missed) < len(obj):
        one = len(obj) - len(missed) == 1
        # (a trial: "the other the run did not change" of a bytes blob it changed
        # every step, which is not looked at)
        # (a trial read "the other not looked at" of an entry compared and equal)
        # (a trial read "held by a declared component" of a log entry's step number,
        # 20, left out because the declared step counter was 20 too: by value)
        return (f"{named} (of its {len(obj)} entries; {'the other is' if one else 'the others are'}"
                " left out here: no tensor or number (or a view of other data), unchanged since"
                " the build, or equal to what a declared component holds)")
    return named


def _ptr(t: torch.Tensor) -> int | None:
    """Where a tensor's data lives (None: a tensor without one of its own, a
    sharded or meta tensor)."""
    try:  # (its storage's: every view of one storage lives where it does)
        return t.untyped_storage().data_ptr() or None
    except Exception:
        return None


_DEPTH = 4
"""How deep below the program the walk goes: an attribute, an item or a field
of it (``self.state.ema``), and two more (``self.state.opt.slow[0]``, a
Lookahead wrapper's slow weights, a list of lists of tensors)."""

_MOST = 512
"""Objects looked at, at most (the walk never costs more than the check)."""

_OPAQUE = frozenset({
    "torch", "numpy", "lightning", "pytorch_lightning", "transformers", "accelerate",
    "torchdata", "threading", "queue", "logging", "multiprocessing", "concurrent", "asyncio",
    "socket", "io", "subprocess", "tempfile", "pathlib", "random",
})
"""Packages whose objects are not walked into (a framework's trainer holds the
user's model, which is found where the program keeps it, and much else)."""


def _watched(program: Any,
             components: Sequence[Component]) -> dict[str, tuple[Any, list[torch.Tensor]]]:
    """What the program holds outside its declared components (``_held``), and
    the generators and numbers inside a declared model (a counter its layer
    keeps as an attribute), which its state_dict() leaves out."""
    attrs = {(id(c.obj.obj), c.obj.name) for c in components if isinstance(c.obj, Attr)}
    seen = {id(program), *(id(c.obj) for c in components)}
    out = _held(program, seen, attrs)
    for c in components:
        if _own_class(c.obj):  # (its fields: what its state_dict() may leave out; what
            # the program holds too, seen above, is named once, where the program keeps it)
            for where, holder in _held(c.obj, seen, attrs).items():
                out.setdefault(f"{c.name}.{where}", holder)
        added = _fields_added(c.obj)
        if added:  # (an optimizer class of yours: what it keeps beside torch's fields)
            for where, holder in _held(added, seen, attrs).items():
                out.setdefault(f"{c.name}.{where}", holder)
        if isinstance(c.obj, torch.nn.Module):
            schedulers = _schedulers_in(c.obj)
            # (asked only where a layer keeps one: a framework's live component
            # starts its loop when asked, which a build must not do)
            held = _declared_schedulers(components) if schedulers else set()
            for where, sched in schedulers:
                if id(sched) not in held:
                    out.setdefault(f"{c.name}.{where}", (sched, _tensors_of(sched) or []))
            for where, gen in _generators_in(c.obj):
                out.setdefault(f"{c.name}.{where}", (gen, [gen.get_state()]))
            for where, kept in _outside_state_dict(c.obj, attrs):
                tensor = kept.detach() if isinstance(kept, torch.Tensor) else _number_tensor(kept)
                out.setdefault(f"{c.name}.{where}", (kept, [tensor]))
    return out


def _schedulers_in(model: torch.nn.Module) -> list[tuple[str, Any]]:
    """The learning-rate schedulers a model's layers keep as attributes, by path."""
    return [(f"{name}.{key}" if name else key, value)
            for name, layer in model.named_modules() for key, value in vars(layer).items()
            if isinstance(value, SCHEDULER_TYPES)]


def _declared_schedulers(components: Sequence[Component]) -> set[int]:
    """The ids of the schedulers the declared components hold: the component
    itself, or those a framework's live component holds (Lightning's
    configured schedulers)."""
    out = set()
    for c in components:
        try:  # (a LiveState's: the framework's object)
            got = getattr(c.obj, "live_object", None)
        except Exception:  # (a notice never fails a check)
            got = None
        objs: list[Any] = [c.obj, *(got if isinstance(got, (list, tuple)) else [got])]
        out |= {id(getattr(o, "scheduler", o)) for o in objs}
    return out


def _fields_of_own(program: Any, components: Sequence[Component]) -> dict[int, str]:
    """id -> the path, as a field of a declared component of the program's own
    class, of each object such a component keeps (``_watched`` names an object
    the program keeps too where the program keeps it)."""
    attrs = {(id(c.obj.obj), c.obj.name) for c in components if isinstance(c.obj, Attr)}
    # (a field that refers back to an object the program keeps whole, its state
    # namespace, is no state of the component: a trial's data position kept the
    # whole training state, and every entry of its metrics history was said to be
    # kept by the data position)
    shared = {id(v) for _, v in _fields(program)
              if _tensors_of(v) is None and not _is_number(v)
              and not isinstance(v, collections.deque)}
    out: dict[int, str] = {}
    for c in components:
        if _own_class(c.obj):
            seen = {id(program), *shared, *(id(d.obj) for d in components)}
            for where, (obj, _) in _held(c.obj, seen, attrs).items():
                if not _is_number(obj):  # (small ints are one object: no identity to share)
                    out.setdefault(id(obj), f"{c.name}.{where}")
    return out


def _reached_by_own(path: str, number: Any, program: Any,
                    components: Sequence[Component]) -> str | None:
    """Of a ``number`` (or a list of numbers) the program keeps at ``path``
    (``run.progress.batch``),
    what a `not compared` line says where a declared component of the
    program's own class keeps an object on that path (``run``, or the program
    itself) and its state_dict() returns an entry of the number's name: that
    component may hold it (a trial's data position returned its loop's
    ``progress.batch``, and the line said that no declared component held it).
    '': the entry (``_entry_at``) is that number, equal: compared there, no
    line (trial 149: a line on every report said it could not tell, of a
    wrapper's ``p.epoch`` returned as ``epoch``). None: none does."""
    parts = path.split(".")
    if len(parts) < 2 or not all(p.isidentifier() for p in parts):
        return None
    # (trial 196: a cursor that keeps the program itself, and returns its state.epoch)
    on_path, obj, said = {id(program): path}, program, None
    for i, part in enumerate(parts[:-1]):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
        on_path[id(obj)] = ".".join(parts[i + 1:])
    for c in components:
        if not _own_class(c.obj):
            continue
        for attr, value in _reaching(c.obj):
            rest = on_path.get(id(value))
            if rest is None:
                continue
            try:
                state = asked_state(c.obj)
            except Exception:  # (a state_dict() that fails: the capture says it)
                continue
            if _returned_whole(number, state):
                return ""  # (trial 431: a replay buffer returned as `items`: compared there)
            entry = _entry_at(state, parts)
            if entry is not _NO_ENTRY:
                if _same_plain(number, entry) or _named_alike(number, state, parts[-1]):
                    return ""
                if _is_number(number) and parts[-1] in state and said is None:
                    # (another component may still return it: trial 217's two positions)
                    said = (f"the declared component {c.name} ({type(c.obj).__name__}) keeps "
                            f"it too, as {c.name}.{attr}.{rest}, and its state_dict() returns a "
                            f"`{parts[-1]}`, but not this number "
                            f"({_repr_brief(state[parts[-1]])} at the end): it may keep it "
                            "another way (a state it sets it from again), which is not compared")
    return said


_NO_ENTRY = object()

_PLAIN = (list, tuple, dict, collections.deque)
"""Containers of plain values a component of the program's own may return
(trial 431: a replay buffer in a deque)."""


def _returned_whole(kept: Any, state: Any) -> bool:
    """Whether a list or deque of several items that the program keeps is what
    a component's state_dict() returns under any name, item for item (a
    replay buffer returned as ``{"items": list(buffer)}``): compared there.
    One number is never matched by value (a coincidence); many items alike,
    in order, are the same state."""
    if not isinstance(kept, (list, tuple, collections.deque)) or len(kept) < 2 \
            or not isinstance(state, dict):
        return False
    items = list(kept)
    return any(isinstance(v, (list, tuple)) and _same_plain(items, v) for v in state.values())


def _named_alike(number: Any, state: Any, name: str) -> bool:
    """Whether a component's state holds, nested at any depth under the
    number's own name, an entry equal to it (trial 493: a position that
    returned its sampler's epoch as ``loader.epoch``, beside its own
    ``epoch``, was said to return "an `epoch`, but not this number")."""
    return _is_number(number) and any(
        path.rsplit(".", 1)[-1] == name and _same_plain(number, value)
        for path, value in flatten_state(state))


def _entry_at(state: Any, parts: list[str]) -> Any:
    """The entry of a component's state_dict() under the path's last names
    nested (``{'unl': {'epoch': ..}}`` of ``state.unl.epoch``: trial 217's
    position of two loaders), or under its last name (``epoch``); ``_NO_ENTRY``."""
    if not isinstance(state, dict):
        return _NO_ENTRY
    for start in range(1, len(parts)):  # (the most names first: `unl.epoch`, then `epoch`)
        entry: Any = state
        for name in parts[start:]:
            entry = entry.get(name, _NO_ENTRY) if isinstance(entry, dict) else _NO_ENTRY
        if entry is not _NO_ENTRY:
            return entry
    return _NO_ENTRY


def _reaching(obj: Any) -> list[tuple[str, Any]]:
    """A component's fields, and what a function among them keeps in its
    closure (trial 207: a position reading its program through a getter,
    `lambda: self.state`, returned its epoch and was said not to)."""
    out = []
    for attr, value in _fields(obj):
        out.append((attr, value))
        if isinstance(value, types.FunctionType) and value.__closure__:
            out += [(f"{attr}.{name}", cell.cell_contents)
                    for name, cell in zip(value.__code__.co_freevars, value.__closure__)
                    if cell_filled(cell)]
    return out


def _repr_brief(value: Any) -> str:
    """A value in a line, at most 40 characters (a number; a tensor by its shape)."""
    if isinstance(value, torch.Tensor):
        return f"a tensor of shape {tuple(value.shape)}"
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"


def _returned(obj: Any, field: str | None, kept: dict[str, dict[Any, Any]]) -> bool:
    """Whether the declared component of the program's own whose field ``obj``
    is (``field``, its path there) returns, among what its state_dict() holds
    (``kept``: each such component's ``_state_leaves``), the state_dict() of
    ``obj`` (a trial's component kept three schedulers and returned each
    one's state_dict(), and was said to return none equal)."""
    leaves = kept.get(field.split(".")[0], {}) if field is not None else {}
    if not leaves or not isinstance(obj, (torch.optim.Optimizer, torch.nn.Module,
                                          *SCHEDULER_TYPES)):
        return False  # (torch's own, which draw nothing and start nothing when asked)
    try:
        own = digest(obj.state_dict())
    except Exception:  # (a notice never fails a check)
        return False
    return any(isinstance(key, tuple) and isinstance(value, Mapping) and digest(value) == own
               for key, value in leaves.items())


def _kept_by_own(field: str, kind: str) -> str:
    """What a `not compared` line says, in place of "no declared component
    holds", of an object that a declared component of the program's own class
    keeps too (a trial: a loader's generator, kept by the declared data
    position whose state_dict() holds its state at the epoch's start)."""
    return (f"the declared component {field.split('.')[0]} ({kind}) keeps it too, as {field}, "
            "but returns no state equal to it from its state_dict(): it may keep it another "
            "way (a state it sets it from again), which is not compared")


@functools.cache
def _optimizer_fields() -> frozenset[str]:
    """The fields torch's optimizers keep (an SGD's, and the one their class's
    first step hook sets)."""
    made = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
    return frozenset(vars(made)) | {"_zero_grad_profile_name"}


def _fields_added(obj: Any) -> types.SimpleNamespace | None:
    """Of a declared optimizer of the program's own class (a subclass of
    torch's), the fields it keeps beside torch's, which its state_dict()
    leaves out unless it says otherwise (trial 151: a LARS whose smoothed
    trust ratios, a dict keyed by parameter, were lost by every restart was
    blamed on nothing); None: not such an optimizer, or none added."""
    if not isinstance(obj, torch.optim.Optimizer) or \
            type(obj).__module__.split(".")[0] in _OPAQUE:
        return None
    added = {k: v for k, v in vars(obj).items() if k not in _optimizer_fields()}
    return types.SimpleNamespace(**added) if added else None


def _own_class(obj: Any) -> bool:
    """Whether a declared component is an object of the program's own class (a
    data position, a curriculum), whose fields the walk looks at: its
    ``state_dict()`` is the program's own code and may leave one out. Not
    torch's, a framework's or resumecheck's objects, whose state_dict() is
    theirs, nor a module or optimizer (looked at as such)."""
    if isinstance(obj, (torch.nn.Module, torch.optim.Optimizer, Attr, RNGState)):
        return False
    module = type(obj).__module__.split(".")[0]
    return module not in _OPAQUE and module not in ("resumecheck", "builtins", "collections")


def _held(program: Any, seen: set[int],
          attrs: set[tuple[int, str]]) -> dict[str, tuple[Any, list[torch.Tensor]]]:
    """Path -> (object, its tensors) for each tensor, module, optimizer or number (a
    counter, a best loss) the program keeps, short container of bare tensors and
    numbers, deque, or dict or list too long to look into (``_long``: one entry of
    its values): in its attributes, short containers' items, its own plain objects'
    fields (``types.SimpleNamespace``, its classes), ``_DEPTH`` levels down; never in
    a declared component or an object walked already (``seen``: their ids, to which
    it adds those it walks) or an ``Attr`` attribute (``attrs``: id and name)."""
    ours = type(program).__module__.startswith("resumecheck.")
    own = getattr(program, "loop_counters", ()) if ours else ()  # (an adapter's loop's)
    out: dict[str, tuple[Any, list[torch.Tensor]]] = {}
    todo = [(name, value, 1, not ours) for name, value in _fields(program) if not (ours and (
        name.startswith("_") or name in own)) and (id(program), name) not in attrs]
    # (an adapter's user code: the objects a step function keeps, callbacks)
    roots = getattr(program, "undeclared_roots", None)
    todo += [(name, value, 1, True) for name, value in (roots() if callable(roots) else [])]
    looked = 0
    while todo and looked < _MOST:
        path, obj, depth, free = todo.pop(0)
        if _is_number(obj):  # (small ints are one object: no id to go by)
            out[path] = (obj, [_number_tensor(obj)])
            continue
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        looked += 1
        if isinstance(obj, collections.deque) or _long(obj):  # (a replay buffer, a cache:
            kept = _long_values(obj)  # one entry, whatever its length)
            if kept:
                out[path] = (obj, kept)
            continue
        tensors = _tensors_of(obj)
        if _keeps_workers(obj) or _positional(obj):  # (no tensors of its own: state
            out[path] = (obj, position_of(obj) or [])  # no checkpoint can hold, a position)
        if isinstance(obj, torch.nn.Module):
            for where, held in _module_kept(obj, seen, attrs).items():
                out.setdefault(f"{path}.{where}", held)
        if tensors is not None:
            # (an optimizer with no state yet too: a load that leaves it so is
            # seen right after the load, not only once it steps; a trial)
            if tensors or isinstance(obj, torch.optim.Optimizer):
                out[path] = (obj, tensors)
            continue
        if not free and not isinstance(obj, (dict, list, tuple)):
            continue
        children = _children(path, obj, attrs)
        if isinstance(obj, (dict, list, tuple)):  # its bare tensors and numbers: one entry
            bare = _bare(children, by_key=isinstance(obj, dict))
            # (empty too: a buffer a load left empty is held otherwise than one of 63
            # numbers, where "not held" would say nothing; trial 136's shuffle buffer)
            if bare or not obj:
                out[path] = (obj, bare)
            children = [(p, v) for p, v in children
                        if not isinstance(v, torch.Tensor) and not _is_number(v)]
        if depth < _DEPTH:
            todo.extend((p, v, depth + 1, free) for p, v in children)
    return out


def _bare(children: list[tuple[str, Any]], by_key: bool = False) -> list[torch.Tensor]:
    """The tensors and numbers among a container's items, as tensors (a dict's
    in the order of its paths, which hold its keys: ``_by_key``)."""
    if by_key:
        children = sorted(children, key=lambda c: c[0])
    return ([t for _, v in children if isinstance(v, torch.Tensor)
             for t in (_tensors_of(v) or [])]
            + [_number_tensor(v) for _, v in children if _is_number(v)])


def _long(obj: Any) -> bool:
    """A dict or list too long to look into item by item, and short enough to
    digest whole (trial 208: a cache of hard negatives by query id, 96 of them,
    lost by the checkpoint, was named nowhere, nor said not looked at)."""
    return isinstance(obj, (dict, list)) and _LONGEST < len(obj) <= _LONG_MOST


_LONG_MOST = 4096
"""A longer dict or list is data (a dataset kept as a list): not looked at."""


def _long_values(obj: collections.deque | dict | list) -> list[torch.Tensor]:
    """A deque's values (``_deque_values``), or a long dict's or list's as one
    entry: a dict's keys with the values each holds (a list of ids per key)."""
    if isinstance(obj, dict):
        return _deque_values(collections.deque(
            (_key_number(k), *v) if isinstance(v, (list, tuple)) else (_key_number(k), v)
            for k, v in _by_key(obj)))
    return _deque_values(obj if isinstance(obj, collections.deque) else collections.deque(obj))


def _by_key(mapping: dict[Any, Any]) -> list[tuple[Any, Any]]:
    """A dict's items in the order of their keys, not of their insertion: a
    cache a restart fills again in another order holds the same state (a
    trial's token cache, alike as a dict, was said to be lost by its
    checkpoint, and ``--strict`` failed the correct program)."""
    items = list(mapping.items())
    try:
        return sorted(items, key=lambda item: (type(item[0]).__name__, item[0]))
    except TypeError:  # (keys of one type that do not order)
        return sorted(items, key=lambda item: (type(item[0]).__name__, repr(item[0])))


def _key_number(key: Any) -> Any:
    """A key as the number its digest holds: a string's CRC-32 (the same in
    every interpreter, unlike its hash), a number as it is."""
    return zlib.crc32(key.encode()) if isinstance(key, str) else key


_DEQUE_MOST = 100_000
"""At most this many values of a deque are looked at (its newest)."""


def _deque_values(queue: collections.deque) -> list[torch.Tensor]:
    """The tensors, arrays and numbers a deque holds, and those its items hold
    one level down (a replay buffer's transitions, as tuples or dicts): one
    entry for the whole deque, however many items it has."""
    out: list[torch.Tensor] = []
    for item in reversed(queue):
        leaves = item.values() if isinstance(item, dict) else \
            item if isinstance(item, (list, tuple)) else (item,)
        for leaf in leaves:
            if isinstance(leaf, torch.Tensor) and leaf.numel() and leaf.grad_fn is None:
                out.append(leaf.detach())
            elif isinstance(leaf, np.ndarray) and leaf.size and leaf.dtype != object:
                out.append(torch.from_numpy(np.ascontiguousarray(leaf)))
            elif _is_number(leaf):
                out.append(_number_tensor(leaf))
        if len(out) >= _DEQUE_MOST:
            break
    return out


def _fields(obj: Any) -> list[tuple[str, Any]]:
    try:
        return [(k, v) for k, v in vars(obj).items() if not k.startswith("__")]
    except TypeError:  # (no __dict__: slots)
        return []


def _is_number(value: Any) -> bool:
    """An int, a float or a bool (trial 161: an early stop's `should_stop`,
    True at the end of the uninterrupted run and False after a resume that lost
    it, was named nowhere, where the same flag as an int was)."""
    return isinstance(value, (int, float))


_NUMBER_MARK = "_resumecheck_number"


def _is_number_tensor(t: torch.Tensor) -> bool:
    """Whether a tensor stands for a number the program keeps (``_number_tensor``)."""
    return getattr(t, _NUMBER_MARK, False)


def _number_tensor(value: int | float) -> torch.Tensor:
    """A number the program keeps, as a one-element tensor (digested, compared
    by value), marked as a number."""
    if isinstance(value, bool):
        t = torch.tensor(value)
    elif isinstance(value, int) and -2**63 <= value < 2**63:
        t = torch.tensor(value, dtype=torch.int64)
    else:
        t = torch.tensor(float(value), dtype=torch.float64)
    setattr(t, _NUMBER_MARK, True)
    return t


def _children(path: str, obj: Any, attrs: set[tuple[int, str]]) -> list[tuple[str, Any]]:
    """The items of a short container, or the fields of a plain object of the
    program's own (not a framework's, not a function, class or module) but
    those declared with ``Attr`` (``attrs``)."""
    if isinstance(obj, dict):
        return [(f"{path}[{k!r}]", v) for k, v in list(obj.items())] if len(obj) <= _LONGEST \
            else []
    if isinstance(obj, (list, tuple)):
        return [(f"{path}[{i}]", v) for i, v in enumerate(obj)] if len(obj) <= _LONGEST else []
    if isinstance(obj, types.FunctionType) and obj.__closure__ and \
            str(obj.__module__).split(".")[0] not in (*_OPAQUE, "resumecheck"):
        # (what a closure of the program's keeps: trial 154's rate counted in a
        # `nonlocal t` was named nowhere)
        return [(f"{path}.{name}", cell.cell_contents)
                for name, cell in zip(obj.__code__.co_freevars, obj.__closure__)
                if cell_filled(cell)]
    if isinstance(obj, (type, types.ModuleType, types.FunctionType, types.MethodType)):
        return []
    if type(obj).__module__.split(".")[0] in _OPAQUE:
        return []
    return [(f"{path}.{k}", v) for k, v in _fields(obj) if (id(obj), k) not in attrs]


def _tensors_of(obj: Any) -> list[torch.Tensor] | None:
    """The tensors an object holds as state (None: not a holder of tensors
    itself, a container or a plain object the walk looks into): a tensor (a
    view by its own values, one that holds its graph by its values), a module's
    parameters and buffers,
    an optimizer's state; no other torch object's (a loss scaler's scale is a
    quantity every step compares). Read, never asked for: no ``state_dict()``
    of an object the program did not declare is called (a loader's may start
    an iterator, which draws from the global stream, and the run would change)."""
    if isinstance(obj, torch.Tensor):
        # (a view counts, by its own values: a trial's list of unbind() views of a
        # restored tensor read as the list held otherwise than the run's tensors)
        # (trial 502: an LSTM's hidden state, kept from one step to the next with its
        # graph until the next step detached it, was never looked at, and a checkpoint
        # that lost it was named nothing)
        return [obj.detach()] if obj.numel() else []
    if isinstance(obj, torch.Generator):  # its state, read (a copy): drawn from, it changes
        return [obj.get_state()] if obj.device.type == "cpu" else []
    if isinstance(obj, _OTHER_GENERATORS):
        return [_generator_state_tensor(obj)]
    if isinstance(obj, torch.nn.Module):
        return [t.detach() for t in (*obj.parameters(), *obj.buffers()) if t.numel()]
    if isinstance(obj, torch.optim.Optimizer):
        return [v.detach() for s in obj.state.values() for v in s.values()
                if isinstance(v, torch.Tensor) and v.numel()]
    if isinstance(obj, SCHEDULER_TYPES) and type(obj).__module__.split(".")[0] in _OPAQUE:
        # (its counts, read: a trial's went unnamed; one of the program's own class is
        # walked as its other objects are, its fields beside torch's too: trial 887)
        return [_number_tensor(getattr(obj, k)) for k in _SCHEDULER_COUNTS
                if _is_number(getattr(obj, k, None))]
    if type(obj).__module__.split(".")[0] == "torch":
        return []
    return None


_SCHEDULER_COUNTS = ("last_epoch", "num_bad_epochs", "cooldown_counter", "best")
"""What a learning-rate scheduler counts, read as numbers (a plateau scheduler's
best and patience too): one the program keeps and declares nowhere (a trial's
LightningModule stepped one by hand) is named when the run changed them."""

_OTHER_GENERATORS = (np.random.Generator, np.random.RandomState, random.Random)
"""Random generators other than torch's a program may keep: a numpy Generator
(``default_rng``: ``RNGState`` registers one), a numpy RandomState, a
Python ``random.Random``."""


def _generator_state_tensor(gen: Any) -> torch.Tensor:
    """A numpy or Python generator's state as bytes in a tensor (digested, and
    compared with a registered generator's alike)."""
    if isinstance(gen, np.random.Generator):
        state: Any = gen.bit_generator.state
    elif isinstance(gen, np.random.RandomState):
        state = gen.get_state(legacy=False)
    else:
        state = gen.getstate()
    text = json.dumps(state, sort_keys=True, default=_plain_value)
    return torch.frombuffer(bytearray(text.encode()), dtype=torch.uint8)


def _plain_value(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return repr(value)


def _module_kept(model: torch.nn.Module, seen: set[int], attrs: set[tuple[int, str]]
                 ) -> dict[str, tuple[Any, list[torch.Tensor]]]:
    """Of an undeclared module the walk reaches, by path: the generators its
    layers keep (their own noise; added to ``seen``) and the numbers they keep
    outside its state_dict(), not in layers declared on their own (trial 493:
    a GAN's step counter on its LightningModule, whose networks were declared
    each and the module not, was never named)."""
    out: dict[str, tuple[Any, list[torch.Tensor]]] = {}
    for where, gen in _generators_in(model):
        if id(gen) not in seen:
            seen.add(id(gen))
            out[where] = (gen, [gen.get_state()])
    for where, value in _outside_state_dict(model, attrs, skip=seen):
        if isinstance(value, (int, float)) and _is_number(value):
            out.setdefault(where, (value, [_number_tensor(value)]))
    return out


def _outside_state_dict(model: torch.nn.Module, attrs: set[tuple[int, str]],
                        skip: set[int] | frozenset[int] = frozenset(),
                        ) -> list[tuple[str, int | float | torch.Tensor]]:
    """What a model's layers keep that its state_dict() leaves out, by path:
    public number attributes (sizes and rates that never change, and counters;
    not those declared with ``Attr``), tensor attributes (running statistics
    kept by hand) and buffers registered with ``persistent=False``; not in the
    layers in ``skip`` (by id: declared as components of their own)."""
    out: list[tuple[str, int | float | torch.Tensor]] = []
    for name, layer in model.named_modules():
        if name and id(layer) in skip:
            continue
        prefix = f"{name}." if name else ""
        for key, value in vars(layer).items():
            if isinstance(value, torch.Tensor) and value.numel():
                out.append((prefix + key, value))
            elif (_is_number(value) and not key.startswith("_") and key != "training"
                  and (id(layer), key) not in attrs):
                out.append((prefix + key, value))
        # (a set: in its own order in each interpreter; sorted, the report's is one)
        out += [(prefix + key, layer._buffers[key])
                for key in sorted(layer._non_persistent_buffers_set)
                if layer._buffers.get(key) is not None and layer._buffers[key].numel()]
    return out


_SETTING_TODO = (
    "the layer reads it at each call, and no buffer can hold it: set it again after the load "
    "from what the checkpoint keeps (the step or the counter the run changed it by), as the "
    "run set it")
"""What a number setting of one of torch's own layers that the run changed is
told (a trial's dropout schedule raised each Dropout's ``p``, and was told to
keep ``p`` in a buffer)."""


def _in_module(path: str, obj: Any, modules: set[str],
               components: Sequence[Component]) -> bool | str:
    """Whether ``path`` is in a declared module; where it is a number setting
    of one of torch's own layers, that layer's class (``_torch_setting``)."""
    inside = path.split(".")[0] in modules
    if inside and isinstance(obj, torch.Tensor) and _owner_layer(path, components, "torchmetrics"):
        return _METRIC_STATE
    return (inside and _is_number(obj) and _torch_setting(path, components)) or inside


_METRIC_STATE = "torchmetrics"
"""``_in_module`` of a tensor a torchmetrics metric in a declared module keeps
(its state, which the metric's state_dict() leaves out unless persistent)."""


def _owner_layer(path: str, components: Sequence[Component], package: str) -> Any:
    """The layer of a declared module whose attribute ``path`` names, where
    its class comes from ``package`` (None: none, or another's)."""
    name, _, rest = path.partition(".")
    module = next((c.obj for c in components if c.name == name), None)
    layer, _, _ = rest.rpartition(".")
    if not isinstance(module, torch.nn.Module):
        return None
    try:
        owner = module.get_submodule(layer)
    except (AttributeError, TypeError):
        return None
    return owner if type(owner).__module__.split(".")[0] == package else None


def _torch_setting(path: str, components: Sequence[Component]) -> str | None:
    """The class of one of torch's own layers (``torch.nn``) whose attribute
    ``path`` names, within a declared module (``params.encoder.dropout.p``:
    ``Dropout``); None: it is none."""
    owner = _owner_layer(path, components, "torch")
    return type(owner).__name__ if owner is not None \
        and type(owner).__module__.startswith("torch.nn.") else None


# (trial 859 read "register it ..., to check that it resumes" as a way to let the
# check see it, not as the fix of the checkpoint)
_LOOSE_TODO = (
    "kept in a declared module outside what its state_dict() returns (a plain tensor "
    "attribute, or a buffer registered with persistent=False): register it with "
    "register_buffer(name, tensor) (persistent), so that the module's state_dict(), and so "
    "a checkpoint of it, holds it, or declare it as a component, to check that it resumes")


_METRIC_TODO = (
    "a torchmetrics metric's state, which the metric leaves out of its state_dict() unless "
    "it is persistent: call {metric}.persistent(True) in the module after making it, for the "
    "checkpoint to hold it, to check that it resumes")


def _generators_in(model: torch.nn.Module) -> list[tuple[str, torch.Generator]]:
    """The torch generators a model's layers keep as attributes, by path."""
    return [(f"{name}.{key}" if name else key, value)
            for name, layer in model.named_modules()
            for key, value in vars(layer).items() if isinstance(value, torch.Generator)]


def _state_leaves(obj: Any) -> dict[str, Any]:
    """What a declared component's ``state_dict()`` returns, by each value's
    own key (``level`` of ``{"level": 2}`` and of ``{"stage": {"level": 2}}``),
    and each dict and list it holds by its key, under ``(key,)`` (empty where
    it raises)."""
    try:
        state = asked_state(obj)
    except Exception:  # (not ours to judge here: the capture says it)
        return {}
    out: dict[Any, Any] = {re.split(r"[.\[]", path)[-1].rstrip("]"): value
                           for path, value in flatten_state(state)}
    holders: list[Any] = [state]
    while holders:
        holder = holders.pop()
        for key, value in (holder.items() if isinstance(holder, Mapping) else ()):
            if isinstance(value, (Mapping, list, tuple)):
                out.setdefault((str(key),), value)
                holders.append(value)
    return out


def _held_by_name(path: str, obj: Any, components: Sequence[Component],
                  leaves: dict[str, dict[str, Any]]) -> bool:
    """Whether a declared component that keeps plain state (not a module, an
    optimizer or the streams, nor one of the program's own classes: a
    framework's ``hooks``, its callbacks' state)
    returns the field under its own name, equal (``params.seen_samples``,
    and the ``seen_samples`` a LightningModule's on_save_checkpoint adds):
    compared there, so not named beside it (a trial's report said `not
    compared: params.seen_samples` under the line that compared it in
    ``hooks``). ``leaves``: each component's, by name; those asked here are
    added (asked only where a field would be named: a framework's state is
    a checkpoint dumped)."""
    for c in components:
        if (_own_class(c.obj)  # (one of yours: said to keep it too, above, where it reaches it)
                or isinstance(c.obj, (torch.nn.Module, torch.optim.Optimizer, RNGState))):
            continue
        if c.name not in leaves:
            leaves[c.name] = _state_leaves(c.obj)
        if _in_its_state(path, obj, leaves[c.name]):
            return True
    return False


def _in_its_state(path: str, obj: Any, leaves: dict[Any, Any]) -> bool:
    """Whether a field of a declared component is what its ``state_dict()``
    returns under the field's own name (``curriculum.level`` and ``"level"``),
    equal: compared as that component's state, so not named (a trial's
    field that the component's load_state_dict() read under another key was
    called "not compared" beside the diagnosis that compared it)."""
    name = path.rsplit(".", 1)[-1]
    if isinstance(obj, (Mapping, list, tuple)):  # (trial 173: a best-k dict, returned with
        return _same_plain(obj, leaves.get((name,)))  # its step keys made strings)
    value = leaves.get(name)
    return value is not None and _same_plain(obj, value)


def _same_plain(a: Any, b: Any) -> bool:
    """Whether ``b`` is ``a`` as a state_dict() returns it: numbers and
    tensors equal, dicts by their keys as strings, lists item by item."""
    if isinstance(a, Mapping):
        theirs = {str(k): v for k, v in b.items()} if isinstance(b, Mapping) else None
        return (theirs is not None and len(theirs) == len(a)
                and all(str(k) in theirs and _same_plain(v, theirs[str(k)]) for k, v in a.items()))
    if isinstance(a, (list, tuple)):
        return (isinstance(b, (list, tuple)) and len(a) == len(b)
                and all(_same_plain(x, y) for x, y in zip(a, b)))
    if _is_number(a) and _is_number(b):
        return bool(a == b)
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return a.shape == b.shape and a.dtype == b.dtype and bool(
            torch.equal(a.detach().cpu(), b.detach().cpu()))
    return False


def _state_tensors(obj: Any) -> list[torch.Tensor]:
    """The tensors in what a declared component's ``state_dict()`` returns (at
    the end of the run, after its end capture asked for the same; none: it
    raises)."""
    if isinstance(obj, torch.nn.Module):  # (what it holds there: not its loose tensors)
        return [t.detach() for t in obj.state_dict(keep_vars=True).values()
                if isinstance(t, torch.Tensor) and t.numel()]
    state_dict = getattr(obj, "state_dict", None)
    if not callable(state_dict):
        return []
    try:
        state = state_dict()
    except Exception:  # (not ours to judge here: the capture says it)
        return []
    registered = ([_generator_state_tensor(g) for g in obj.generators.values()
                   if isinstance(g, _OTHER_GENERATORS)] if isinstance(obj, RNGState) else [])
    return registered + [
        v.detach() if isinstance(v, torch.Tensor) else _number_tensor(v)
        for _, v in flatten_state(state) if isinstance(v, torch.Tensor) or _is_number(v)]
