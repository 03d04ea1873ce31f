"""The program protocol: how a training program plugs into the engine.

A program is built by a factory from a settings mapping, runs one optimizer
step per ``train_step()`` call (gradient-accumulation micro-steps included)
and declares its state components::

    class MyProgram:
        def components(self):            # name -> Stateful, in restore order
            return {"params": self.model, "optimizer": self.opt, ...}

        def train_step(self):            # one optimizer step
            ...
            return StepOutput(loss=loss, samples=batch_indices)

        # optional: the program's own checkpoint code, the thing under audit
        def save(self, path): ...
        def load(self, path): ...

        # optional: where interruptions are most likely to hurt
        steps_per_epoch = 6                # optimizer steps per epoch (6.5: 13
                                           # batches, accumulation 2)
        epoch_boundaries = [6, 13]         # or: the steps after which a new
                                           # epoch is first read (any spacing)
        accum_steps = 2                    # micro-batches per optimizer step

        # optional (framework adapters): what makes the checkpoint hold a
        # component where a setting of the framework decides it
        def checkpoint_advice(self): return {"ema": "register it: ..."}

    def build(config: dict) -> MyProgram: ...

An empty settings mapping means the program's defaults; that is how a restart
is built, as real restarts are started: the run's own settings come back only
through the ``config`` component.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import difflib
import importlib
import importlib.util
import math
import os
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

import torch

from resumecheck import module_state
from resumecheck.components import (
    IMPORT_STREAMS,
    Component,
    RNGState,
    drawn_streams,
    seeded_streams,
    seeds_called,
)
from resumecheck.errors import MissingFramework, StepError, TargetError
from resumecheck.phrases import a_type, accelerate_scheduler_todo
from resumecheck.streams import stream_label

__all__ = [
    "BUILTIN_SPEC",
    "Program",
    "StepOutput",
    "Target",
    "declared_names",
    "declares_no_epochs",
    "epoch_boundaries",
    "load_target",
    "next_epoch_start",
    "replaced_objects",
]

BUILTIN_SPEC = "resumecheck.tiny:TARGET"


@runtime_checkable
class Program(Protocol):
    """What the engine needs of a training program."""

    def components(self) -> Mapping[str, Any]: ...

    def train_step(self) -> Any: ...


@dataclass(frozen=True, slots=True)
class StepOutput:
    """What one ``train_step()`` may return: its loss and the samples it consumed."""

    loss: torch.Tensor | float
    samples: torch.Tensor | None = None


def _read_as_dict(config: Mapping[str, Any], factory: Any) -> str:
    """The hint of a factory that read its settings as something else (trial
    166: ``build(args)`` reading ``args.seed`` of an argparse namespace)."""
    return ("A target's factory is called with one argument, a dict of settings (here "
            f"{dict(config)!r}), and returns your program (an object with components() and "
            "train_step()): read the settings as a dict (settings.get('seed', 0)), or point "
            "the target at a small function that builds your program from them"
            + _framework_hint(getattr(factory, "__globals__", {})))


_TRAINERS = "docs/FRAMEWORKS.md, 'Training with Lightning or the HuggingFace Trainer'"
_FRAMEWORK_TARGETS = {
    "transformers": ("a HuggingFace Trainer", "resumecheck.frameworks.trainer_target", _TRAINERS),
    "lightning": ("a Lightning Trainer", "resumecheck.frameworks.lightning_target", _TRAINERS),
    "pytorch_lightning": ("a Lightning Trainer", "resumecheck.frameworks.lightning_target",
                          _TRAINERS),
    "accelerate": ("an Accelerate loop", "resumecheck.frameworks.accelerate_program",
                   "docs/FRAMEWORKS.md, 'Training with HuggingFace Accelerate'"),
}


def _framework_hint(names: Mapping[str, Any]) -> str:
    """Where what the factory's module imported is a framework's (trial 210:
    a function that builds a HuggingFace Trainer, given as the target, was
    not told of trainer_target): the framework's target, as docs/FRAMEWORKS.md shows it."""
    for name, value in names.items():
        package = getattr(value, "__module__", None) or getattr(value, "__name__", "") or name
        said = _FRAMEWORK_TARGETS.get(str(package).split(".")[0])
        if said:
            return f". If it builds {said[0]}, give {said[1]}(...) as the target ({said[2]})"
    return ""


_REPLACEABLE = (torch.nn.Module, torch.optim.Optimizer, torch.optim.lr_scheduler.LRScheduler,
                torch.optim.lr_scheduler.ReduceLROnPlateau, torch.amp.GradScaler)
"""What a program may replace while it trains, and ``replaced_objects`` looks at."""


def _same_tensors(new: Any, held: Any) -> bool:
    """Two modules that hold the very same parameters and buffers."""
    if not (isinstance(new, torch.nn.Module) and isinstance(held, torch.nn.Module)):
        return False

    def ids(m: torch.nn.Module) -> list[int]:
        return [id(t) for t in (*m.parameters(), *m.buffers())]

    return ids(new) == ids(held)


_RANKS_GIVEN = ("--nproc N on the command line (nproc=N to verify(), or to the pytest marker: "
                "@pytest.mark.resumecheck(nproc=N))")
"""Where the number of ranks is given (trial 536: a pytest user was sent to the
command line's flag alone)."""

_NO_RANKS = ("It starts torch.distributed from the environment a launcher sets (RANK, "
             "WORLD_SIZE, MASTER_ADDR), and this run has none: give the number of ranks, "
             f"{_RANKS_GIVEN}, and the check launches them")
"""What a factory that needs a launcher's environment is told (trial 284: a DDP
program run without --nproc read "Fix the factory")."""


_NO_GROUP_RAISED = "Default process group has not been initialized"
_NO_GROUP = ("It uses torch.distributed's default process group, and this run has none: give "
             f"the number of ranks, {_RANKS_GIVEN}, and the check launches "
             "them as torch's launcher does")
"""What a factory that asks a process group nobody started is told (trial 393: a DDP
program run without --nproc read "Fix the factory")."""


def _wants_ranks(exc: BaseException) -> bool:
    """Whether a factory's failure is torch.distributed finding no launcher's
    environment (``environment variable RANK expected, but not set``)."""
    text = str(exc)
    return "RANK" not in os.environ and ("env://" in text or any(
        f"environment variable {name} expected" in text
        for name in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")))


_MISSING_PACKAGE = (
    "A package your program needs is missing or too old in this environment (the error "
    "says which): install it, or, for a framework target, the extra that brings it "
    "(pip install 'resumecheck[accelerate]', '[lightning]' or '[transformers]')")
"""The advice for a factory that raised ImportError (a trial: transformers'
Trainer, without accelerate installed, was told to fix the factory)."""


@dataclass(frozen=True, kw_only=True)
class Target:
    """A training program to check: its factory and the settings of the run.

    ``run_config`` is what the run was launched with (the reference and the
    first half of every resumed run use it); a restart gets the program's
    defaults unless ``restart_config="run"`` says the program's launcher
    always passes the original settings again.
    """

    factory: Callable[[dict[str, Any]], Any]
    """Builds a program from a settings mapping ({} means the defaults)."""
    run_config: Mapping[str, Any] = field(default_factory=dict)
    """The settings the run was launched with."""
    restart_config: Literal["default", "run"] = "default"
    """What a restart is built from before the checkpoint is restored."""
    spec: str | None = None
    """How to import this target (``module:attr`` or ``file.py:attr``)."""
    seed_key: str = "seed"
    """The setting that holds the run's seed: ``--seed`` sets it, and the noise
    runs vary it from the program's default (plausibility)."""
    steps: int = 20
    """Default number of optimizer steps N for a check."""
    resume_at: tuple[int, ...] = ()
    """Default resume points (empty: N // 2)."""
    not_state: Sequence[str] = ()
    """Paths of what the program keeps that is no training state (a log of
    losses, a timer), as the report names them (``history``,
    ``state.history``), each covering what is under it: left out of what is
    not compared (``Report.undeclared``), so neither named nor warned of
    (trial 163: a CI job kept its own list of such lines to ignore). One path
    given alone, a string, is that one path."""
    drawn_at_import: tuple[str, ...] = field(default=(), compare=False, repr=False)
    """Set by ``load_target``: the global streams (``numpy``, ``torch``) the
    program's module drew from without seeding them as it was imported (a data
    order made at import): a new interpreter draws otherwise, which restarts
    in one interpreter share (``components.drawn_streams``)."""
    import_streams: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    """Set by ``load_target``: the global streams the program's module seeded
    when it was imported (a module-level ``torch.manual_seed(0)``), as they
    were right after. Each run starts from them, as a real launch or restart
    of the script would, instead of the engine's own fixed streams."""
    preload: tuple[str, ...] = ()
    """Modules of a framework the program trains with (``lightning.pytorch``,
    ``transformers.trainer``): with process isolation the warm server imports
    them once, before it forks each segment, instead of every segment
    importing them again. Never the program's own module: a segment still
    imports that fresh, after them (so a setting the module makes before it
    imports the framework, for the framework to read at import, is not seen:
    leave this empty for such a program)."""

    def __post_init__(self) -> None:
        if not callable(self.factory):
            raise TypeError(f"factory must be callable, got {type(self.factory).__name__}")
        if self.restart_config not in ("default", "run"):
            raise ValueError(
                f"restart_config={self.restart_config!r}: expected 'default' or 'run'"
            )
        # (one path given alone is one path, not its characters: trial 282's was)
        object.__setattr__(self, "not_state", (self.not_state,) if isinstance(
            self.not_state, str) else tuple(self.not_state))

    @property
    def name(self) -> str:
        return self.spec or str(getattr(self.factory, "__qualname__", repr(self.factory)))

    def launch_config(self, seed: int | None = None) -> dict[str, Any]:
        """The settings a run is launched with: ``run_config``, plus
        ``seed_key: seed`` only when a seed is asked for (None: the program's
        own settings, its default seed included, unchanged)."""
        config = dict(self.run_config)
        if seed is not None:
            config[self.seed_key] = seed
        return config

    def build(self, config: Mapping[str, Any]) -> BuiltProgram:
        """Call the factory and check that what it returns is a program."""
        try:
            program = self.factory(dict(config))
        except MissingFramework as exc:
            raise TargetError(self.name, exc.problem, exc.hint) from exc
        except TargetError:  # (an adapter's own words: a limit of resumecheck's, trial 415)
            raise
        except Exception as exc:
            if self._seed_rejected(config):
                raise TargetError(
                    self.name,
                    f"the program rejected the seed setting {self.seed_key}="
                    f"{config[self.seed_key]!r} ({type(exc).__name__}: {exc})",
                    "Choose a seed it accepts (--seed); with its own settings it builds fine",
                ) from exc
            raise TargetError(
                self.name,
                f"the factory raised {module_state.raised(exc)}",
                _MISSING_PACKAGE if isinstance(exc, ImportError) else
                _read_as_dict(config, self.factory) if "'dict' object" in str(exc) else
                _NO_RANKS if _wants_ranks(exc) else
                _NO_GROUP if _NO_GROUP_RAISED in str(exc) and "RANK" not in os.environ else
                "Fix the factory so that it builds a program from these settings: "
                f"{dict(config)!r}",
            ) from exc
        return BuiltProgram.wrap(self.name, program)

    def _seed_rejected(self, config: Mapping[str, Any]) -> bool:
        """A failed build whose settings are the run's own but for the seed, and
        the run's own settings build: the seed is what the program rejected."""
        key = self.seed_key
        own = dict(self.run_config)
        if key not in config or (key in own and own[key] is config[key]):
            return False
        try:
            if {k: v for k, v in config.items() if k != key} != {
                k: v for k, v in own.items() if k != key
            }:
                return False
            self.factory(own)
        except Exception:
            return False
        return True


def _shared_streams(a: Any, b: Any) -> str:
    """The random streams two declared ``RNGState`` both hold, in words ('' when none)."""
    if not (isinstance(a, RNGState) and isinstance(b, RNGState)):
        return ""
    both = [f"the {stream_label(s)}" for s in a.streams if s in b.streams]
    ids = {id(g) for g in b.generators.values()}
    both += [f"generator {n!r}" for n, g in a.generators.items() if id(g) in ids]
    return ", ".join(both[:-1]) + f" and {both[-1]}" if len(both) > 1 else "".join(both)


def _declared_twice(components: list[Component]) -> str | None:
    """Two components holding the same object, or a model holding another
    (a submodule declared beside its model), in words; None: none."""
    for i, a in enumerate(components):
        for b in components[i + 1:]:
            if a.obj is b.obj:
                return f"components {a.name!r} and {b.name!r} are the same object"
            shared = _shared_streams(a.obj, b.obj)
            if shared:
                return (f"components {a.name!r} and {b.name!r} both hold {shared} (an "
                        "RNGState holds the global streams unless streams=() says otherwise: "
                        "RNGState({'aug': generator}, streams=()) holds that generator alone)")
    modules = [(c.name, c.obj) for c in components if isinstance(c.obj, torch.nn.Module)]
    for outer, model in modules:
        inside = {id(m) for m in model.modules()} - {id(model)}
        for inner, part in modules:
            if id(part) in inside:
                return f"component {inner!r} is a submodule of component {outer!r}"
    return None


def _unstepped_modules(components: Sequence[Component]) -> list[str]:
    """The declared modules none of whose parameters a declared optimizer
    steps (an average of the weights, a target network), where any optimizer
    is declared."""
    stepped = {id(p) for c in components if isinstance(c.obj, torch.optim.Optimizer)
               for group in c.obj.param_groups for p in group["params"]}
    return [c.name for c in components if stepped and isinstance(c.obj, torch.nn.Module)
            and any(True for _ in c.obj.parameters())
            and not any(id(p) in stepped for p in c.obj.parameters())]


def _unkept_by_accelerate(program: Any, components: list[Component],
                          checkpoint: str | None = None) -> dict[str, str]:
    """A program of your own that keeps an Accelerate ``Accelerator`` (as an
    attribute, or one of a namespace it keeps) and declares a scheduler that
    accelerator did not prepare: its ``save_state()`` does not hold it (trial
    532: a confirmed finding, and no word of the one call behind it, which an
    Accelerate target is told); and an object of its own that it did not
    register (``register_for_checkpointing``). ``checkpoint``: the program's
    own, once its load has read it: where it holds none of the files
    ``save_state()`` writes, the save went around it, and the advice is to
    write the state in save() (trial 684: told to register a generator its
    save() never wrote, in a checkpoint that save_state() did not write)."""
    held = list(getattr(program, "__dict__", {}).values())
    held += [v for h in list(held) if not isinstance(h, (torch.nn.Module, torch.Tensor))
             and type(h).__module__.split(".", 1)[0] not in ("torch", "accelerate")
             for v in getattr(h, "__dict__", {}).values()]
    accelerators = [h for h in held if type(h).__name__ == "Accelerator"
                    and type(h).__module__.startswith("accelerate")]
    if not accelerators:
        return {}
    registered = {id(o) for a in accelerators for o in getattr(a, "_custom_objects", ())}
    kept = set().union(*(accelerate_kept(a) for a in accelerators))
    # (trial 584: a curriculum object of its own, never registered, was confirmed lost,
    # and nothing named the one call that keeps it)
    # (trial 664: a position its save() wrote itself, which its load() then set wrongly,
    # was told only to register it)
    # (trial 747: "from what it wrote" of a count its save() never wrote; and the call
    # named the component, not an object of the program's)
    own = {c.name: ("where your save() keeps it through Accelerate's save_state(), that holds "
                    "an object of your own only when it was registered: accelerator."
                    f"register_for_checkpointing(obj), of the object you declare as "
                    f"`{c.name}`; where your save() writes it itself, check that it writes "
                    "it, and what your load() sets it to from what it wrote")
           for c in components if _own_stateful(c.obj) and id(c.obj) not in registered}
    unkept = {**own, **{c.name: accelerate_scheduler_todo(c.name) for c in components
                        if isinstance(c.obj, _SCHEDULERS) and id(c.obj) not in kept}}
    if checkpoint is not None and _through_save_state(checkpoint) is False:
        return {name: (f"the checkpoint your load() read holds no {_SAVE_STATE_MARK} file, "
                       "which Accelerate's save_state() always writes: your save() keeps "
                       f"nothing there through save_state(), so check that it writes `{name}`'s "
                       "state and that load() sets it back from what it wrote")
                for name in unkept}
    return unkept


_SAVE_STATE_MARK = "random_states_<rank>.pkl"


def _through_save_state(checkpoint: str) -> bool | None:
    """Whether the program's checkpoint at ``checkpoint`` (a file or directory,
    or files that begin with its name) holds what Accelerate's ``save_state()``
    writes on every call (its streams, ``random_states_<rank>.pkl``); None
    where nothing is there to look at."""
    places = [Path(checkpoint), *Path(checkpoint).parent.glob(Path(checkpoint).name + "?*")]
    places = [p for p in places if p.exists()]
    if not places:
        return None
    for place in places:
        if place.is_dir():
            for _, _, files in os.walk(place):
                if any(f.startswith("random_states_") and f.endswith(".pkl") for f in files):
                    return True
    return False


def accelerate_kept(accelerator: Any) -> set[int]:
    """The ids of what an Accelerator's ``save_state()`` holds beside the
    prepared model and optimizer: the objects registered for checkpointing,
    and each prepared scheduler, wrapper and wrapped (trial 616: a scheduler
    registered, not prepared, is kept too)."""
    prepared = list(getattr(accelerator, "_schedulers", ()))
    return ({id(o) for o in getattr(accelerator, "_custom_objects", ())}
            | {id(o) for o in prepared} | {id(getattr(o, "scheduler", o)) for o in prepared})


def _own_stateful(obj: Any) -> bool:
    """An object of the program's own class with ``state_dict()`` and
    ``load_state_dict()`` (not torch's, nor resumecheck's own components)."""
    root = type(obj).__module__.split(".", 1)[0]
    return (root not in ("torch", "accelerate", "resumecheck", "torchdata", "builtins")
            and callable(getattr(obj, "state_dict", None))
            and callable(getattr(obj, "load_state_dict", None))
            and not isinstance(obj, torch.nn.Module))


_SCHEDULERS = (torch.optim.lr_scheduler.LRScheduler, torch.optim.lr_scheduler.ReduceLROnPlateau)


class BuiltProgram:
    """A program and its validated component list, as the engine drives it."""

    def __init__(self, target_name: str, program: Any, components: list[Component]):
        self.target_name = target_name
        self.program = program
        self.components = components
        self._loaders_found: list[str] | None = None
        self.modes_set: dict[str, list[str]] = {}  # (restore._set_modes: what it set over)

    @classmethod
    def wrap(cls, target_name: str, program: Any) -> BuiltProgram:
        if isinstance(program, type):  # (a trial: `make(name)` returned its Program class,
            # which has components() and train_step() unbound: a traceback followed)
            raise TargetError(
                target_name, f"the factory returned the class {program.__name__}, not a "
                "program made from it",
                f"Name the class itself as the target, or return {program.__name__}(settings) "
                "from the factory")
        if not isinstance(program, Program):
            raise TargetError(
                target_name,
                f"the factory returned {a_type(type(program).__name__)}, not a program",
                "A program needs components() returning a name -> Stateful mapping "
                "and train_step() running one optimizer step"
                + _framework_hint({type(program).__name__: program}),
            )
        declared = program.components()
        if not isinstance(declared, Mapping) or not declared:
            raise TargetError(
                target_name,
                "components() returned no name -> Stateful mapping",
                "Return a dict such as {'params': model, 'optimizer': opt}",
            )
        try:
            components = [Component.of(str(n), obj) for n, obj in declared.items()]
        except TypeError as exc:
            raise TargetError(target_name, str(exc), "Fix components()") from exc
        twice = _declared_twice(components)
        if twice:
            raise TargetError(
                target_name,
                f"{twice}: dropping one, the other still restores it, so each would look "
                "unused (a blind spot) though the program needs it",
                "Declare each piece of state once in components()",
            )
        return cls(target_name, program, components)

    def close(self) -> None:
        """Let a program that runs its own loop in a thread end it (the frameworks'
        loop programs have ``close()``): a segment never leaves a thread behind."""
        close = getattr(self.program, "close", None)
        if callable(close):
            close()

    def refresh(self) -> None:
        """Re-read components(): a program's load() may have replaced objects."""
        fresh = BuiltProgram.wrap(self.target_name, self.program)
        self.components = fresh.components

    def advice(self, checkpoint: str | None = None) -> dict[str, str]:
        """Per component, what makes the program's checkpoint hold it, where a
        setting of a framework decides that (``checkpoint_advice()``, which the
        framework adapters define: a Trainer that restores callbacks only when
        asked, an Accelerator that saves only the objects registered with it)."""
        advise = getattr(self.program, "checkpoint_advice", None)
        given = advise() if callable(advise) else None
        if not isinstance(given, Mapping):
            return _unkept_by_accelerate(self.program, self.components, checkpoint)
        return {str(k): v for k, v in given.items() if isinstance(v, str) and v}

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.components)

    def component(self, name: str) -> Component | None:
        for comp in self.components:
            if comp.name == name:
                return comp
        return None

    def _text(self, name: str) -> str | None:
        """The program's attribute ``name`` where it is a string that says
        something (None otherwise: absent, empty, or not a string)."""
        value = getattr(self.program, name, None)
        return value if isinstance(value, str) and value else None

    def boundaries(self) -> dict[str, Any]:
        """Where the program's schedule has edges, if it says: ``steps_per_epoch``
        (a whole or fractional number of optimizer steps), ``epoch_boundaries``
        (a list of steps), ``accum_steps``. Fuzzing aims interruptions at them."""
        per_epoch = getattr(self.program, "steps_per_epoch", None)
        accum = getattr(self.program, "accum_steps", None)
        edges = _steps_listed(getattr(self.program, "epoch_boundaries", None))
        validates = getattr(self.program, "validates_after", None)
        moved = getattr(self.program, "rate_moved_after", None)
        plateaus = getattr(self.program, "plateau_moved_after", None)
        drawn = getattr(self.program, "draws_before_restore", None)
        early = getattr(self.program, "run_before_restored_look", ())
        inside = _steps_listed(getattr(self.program, "epoch_ends_inside", None)) or []
        text = self._text
        return {
            # (a framework's sampler that shuffles from a global stream before its restore)
            "order_before_restore": text("order_before_restore"),
            # (an adapter that seeds the global streams before it builds the program)
            "seeded_by": text("seeded_by"),
            # (where the loop that runs is an adapter's, not the script's: said
            # with the program's own resume, whose row reads "own save/load")
            "loop_note": text("loop_note"),
            # (a framework's restore and save, named where a report would say
            # "your load()" and "your save()")
            "restored_by": text("restored_by"), "saved_by": text("saved_by"),
            "declared_per_epoch": _declared_per_epoch(self.program),
            # (where a framework's loop validates after a step: its resume does not again)
            "validates_after": _steps_in(validates),
            # (a framework's setting, or loader, that makes its resume read its epoch again)
            "data_not_skipped": text("data_not_skipped"),
            "data_not_resumable": text("data_not_resumable"),
            "data_lengthless": text("data_lengthless"),  # (a framework's: its skip is blind)
            "epochs_unread": text("epochs_unread"),  # (why a framework's epochs went unread)
            "after_last_step": text("after_last_step"),  # (what a framework's loop does then)
            # (global streams a framework's loop draws from before it restores them)
            "draws_before_restore": [d for d in drawn if isinstance(d, str)]
            if isinstance(drawn, (list, tuple)) else [],
            # (where a framework's loop changed the rate after its checkpoint hook)
            "rate_moved_after": _steps_in(moved),
            # (a plateau scheduler's counts, its rate with them or not, moved there: trial 605)
            "plateau_moved_after": _steps_in(plateaus),
            "steps_per_epoch": per_epoch if _positive_number(per_epoch) else None,
            "accum_steps": accum if isinstance(accum, int) and not isinstance(accum, bool)
            and accum > 0 else None,
            "epoch_boundaries": edges,
            # (a framework loop's seen ends that fell between the batches of a step: 875)
            "epoch_ends_inside": [b for b in inside if b in (edges or ())],
            "between_steps": text("between_steps"),  # (what a restart there cannot show)
            # (what a framework's restore runs on the first resumed batch before
            # the state right after it can be looked at: the Trainer's collator)
            "run_before_restored_look": [p for p in early if isinstance(p, str)]
            if isinstance(early, (list, tuple)) else [],
            # (a trial: samples drawn by a loader's own generator, and the why led
            # with torch's stream, which dropout draws from)
            "loader_generators": self._loader_generators(),
            # (trial 601: `parameter ema.module.3.weight` read as a weight training updates)
            "unstepped_modules": _unstepped_modules(self.components),
        }

    def _loader_generators(self) -> list[str]:
        """The streams (``generator NAME``) of the registered generators that a
        data loader the program holds shuffles or samples with, found within a
        few attributes of the program and its components."""
        if self._loaders_found is None:
            named = {id(gen): f"generator {name}" for comp in self.components
                     if isinstance(comp.obj, RNGState) for name, gen in comp.obj.generators.items()}
            self._loaders_found = sorted({named[id(g)] for g in _loader_generator_objects(
                [self.program, *(c.obj for c in self.components)]) if id(g) in named})
        return self._loaders_found

    @property
    def has_own_checkpoint(self) -> bool:
        return callable(getattr(self.program, "save", None)) and callable(
            getattr(self.program, "load", None)
        )

    def step(self, step: int) -> StepOutput:
        """Run one optimizer step and check what it returned."""
        out = self.program.train_step()
        # (trial 881: a StepOutput whose loss was None read "returned a NoneType")
        what = "returned a StepOutput whose loss is" if isinstance(out, StepOutput) else "returned"
        if not isinstance(out, StepOutput):
            out = StepOutput(loss=out)
        value = _loss_value(out.loss, step, what)
        if not math.isfinite(value):
            raise StepError(step, f"the loss is {value}; a check needs finite losses")
        if out.samples is not None and not isinstance(out.samples, torch.Tensor):
            try:  # (trial 191: samples=[("reg", [...]), ...], a bare ValueError of torch's)
                # (made a tensor once, here: the trace reads it as it is)
                return StepOutput(loss=out.loss, samples=torch.as_tensor(out.samples))
            except (TypeError, ValueError, RuntimeError) as exc:
                raise StepError(
                    step, f"train_step() returned samples torch cannot make a tensor of "
                    f"({exc}): give StepOutput(samples=...) the indices of the samples the step "
                    "read (a tensor, or a list of numbers, nested as a batch's rows are), not "
                    "names or mixed values") from None
        return out


def declared_names(target: Target, config: Mapping[str, Any]) -> tuple[str, ...]:
    """The component names a program declares, from one build and no step (the
    caller's random streams are given back): what a drop list is checked
    against before any run."""
    from resumecheck.components import preserved_global_streams

    with preserved_global_streams():
        return target.build(config).names


def _loader_generator_objects(roots: list[Any], depth: int = 3) -> list[Any]:
    """The generators of the data loaders reachable from ``roots`` through at
    most ``depth`` attributes, lists or dicts (a module's submodules are not
    entered: a model holds no loader)."""
    found: list[Any] = []
    seen: set[int] = set()
    level = list(roots)
    for _ in range(depth + 1):
        nxt: list[Any] = []
        for obj in level:
            if id(obj) in seen or obj is None or isinstance(obj, (str, bytes, int, float,
                                                                   torch.Tensor)):
                continue
            seen.add(id(obj))
            if isinstance(obj, torch.utils.data.DataLoader):
                sampler = getattr(obj, "sampler", None)
                batches = getattr(obj, "batch_sampler", None)
                found += [g for g in (obj.generator, getattr(sampler, "generator", None),
                                      getattr(getattr(batches, "sampler", None), "generator",
                                              None)) if g is not None]
                continue
            if isinstance(obj, torch.nn.Module):
                continue
            if isinstance(obj, Mapping):
                nxt += list(obj.values())[:64]
            elif isinstance(obj, (list, tuple)):
                nxt += list(obj)[:64]
            else:
                nxt += list(getattr(obj, "__dict__", {}).values())[:64]
        level = nxt
    return found


def _steps_in(steps: Any) -> list[int]:
    """The positive whole steps of an adapter's list, sorted, once each."""
    if not isinstance(steps, (list, tuple, set)):
        return []
    return sorted({v for v in steps if isinstance(v, int) and not isinstance(v, bool) and v > 0})


def _positive_number(value: Any) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value) and value > 0)


def _steps_listed(value: Any) -> list[int] | None:
    """A program's list of steps, sorted (None where it is not a list or a
    tuple of positive whole numbers)."""
    if isinstance(value, (list, tuple)) and all(
            isinstance(e, int) and not isinstance(e, bool) and e > 0 for e in value):
        return sorted(set(value))
    return None


def declares_no_epochs(boundaries: Mapping[str, Any]) -> bool:
    """The program says its data has no epochs: ``epoch_boundaries = []``, and no
    ``steps_per_epoch``."""
    return boundaries.get("epoch_boundaries") == [] and not boundaries.get("steps_per_epoch")


def epoch_boundaries(boundaries: Mapping[str, Any], steps: int) -> list[int]:
    """The steps in ``1..steps-1`` after which a new epoch is first read.

    A declared ``epoch_boundaries`` list is taken as it is. From
    ``steps_per_epoch`` (which may be fractional: 13 batches with
    accumulation 2 is 6.5 optimizer steps), epoch e begins inside step
    ``floor(e * steps_per_epoch) + 1``, so the boundary is the step before it.
    """
    declared = boundaries.get("epoch_boundaries")
    if declared:
        return [b for b in declared if 1 <= b <= steps - 1]
    return list(dict.fromkeys(edge for edge, _ in _counted_ends(boundaries, steps)))


def ends_inside(boundaries: Mapping[str, Any], steps: int) -> set[int]:
    """Of ``epoch_boundaries``, those whose epoch ends inside the step after
    it (a fractional ``steps_per_epoch``: at 10/3, epochs 1, 2 and 4 end
    inside steps 4, 7 and 14, epoch 3 right after step 10; a framework's loop
    seen to end an epoch between the batches of one step)."""
    if boundaries.get("epoch_boundaries"):
        return {b for b in boundaries.get("epoch_ends_inside") or [] if 1 <= b <= steps - 1}
    return {edge for edge, inside in _counted_ends(boundaries, steps) if inside}


def _counted_ends(boundaries: Mapping[str, Any], steps: int) -> list[tuple[int, bool]]:
    """From ``steps_per_epoch``, each epoch's boundary in ``1..steps-1`` (epoch
    e begins inside step ``floor(e * steps_per_epoch) + 1``) and whether the
    epoch ends inside the step after it; none where it is not given."""
    per_epoch = boundaries.get("steps_per_epoch")
    if per_epoch is None or not _positive_number(per_epoch):
        return []
    ends: list[tuple[int, bool]] = []
    epoch = 1
    while (edge := math.floor(epoch * per_epoch + 1e-9)) <= steps - 1:
        if edge >= 1:
            ends.append((edge, epoch * per_epoch - edge > 1e-9))
        epoch += 1
    return ends


def next_epoch_start(boundaries: Mapping[str, Any], k: int) -> int | None:
    """The first step after ``k`` that reads a new epoch, within the run or
    beyond it (None: the program does not say where its epochs end)."""
    declared = boundaries.get("epoch_boundaries")
    per_epoch = boundaries.get("steps_per_epoch")
    if not declared and per_epoch is not None and _positive_number(per_epoch):
        horizon = k + 2 + math.ceil(per_epoch)
        declared = epoch_boundaries({"steps_per_epoch": per_epoch}, horizon)
    # (a boundary at k itself: the step after the restore reads the new epoch)
    later = [b for b in declared or [] if b >= k]
    return later[0] + 1 if later else None


def load_target(spec: str | None) -> Target:
    """Resolve ``module:attr`` or ``path/to/file.py:attr`` (None: the built-in)."""
    spec = spec or BUILTIN_SPEC
    where, sep, attr = spec.rpartition(":")
    if not sep or not where or not attr:
        place = where if sep else spec  # (`train.py`, `train.py:`, `:TARGET`)
        held = _targets_in(place) if place else []
        maybe = [name.rstrip("?") for name in held if name.endswith("?")]
        raise TargetError(
            spec,
            "not of the form module:attr or path/to/file.py:attr" + (
                f" ({place} binds {', '.join(maybe[:8])} at its top level)" if maybe else
                f" ({place} holds {_names(held)})" if held else ""),
            f"Name the target after a colon: {place}:{(maybe or held)[0]}" if held else
            "Name the factory after a colon, e.g. mytrain:build or train.py:build",
        )
    module = _import(spec, where)
    streams = _SET_AT_IMPORT.get(module.__name__, {})
    drawn = _DRAWN_AT_IMPORT.get(module.__name__, ())
    obj: Any = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            # (trial 164: the targets the file does hold were not said)
            held = [name for name, value in vars(module).items() if isinstance(value, Target)]
            raise TargetError(
                spec,
                f"{where} has no attribute {attr!r}" + (
                    f" (it holds {_names(held)})" if held and obj is module else ""),
                # (trial 421: "the program factory" beside a Target it held)
                "Check the name after the colon; it must name a resumecheck.Target or the "
                "program's factory",
            ) from None
    if isinstance(obj, Target):
        # (a copy: the module's own Target keeps no streams, and never a spec it lacks)
        return obj if obj.spec == spec and not streams and not drawn else \
            replace(obj, spec=spec, import_streams=streams, drawn_at_import=drawn)
    if not callable(obj) or isinstance(obj, type) and not hasattr(obj, "train_step"):
        # (trial 160: "Config is a type" read as "a class is no factory", where a
        # program class is one)
        what = (f"a class with no train_step() method" if isinstance(obj, type)
                else a_type(type(obj).__name__))
        raise TargetError(
            spec,
            f"{attr} is {what}, not a program factory",
            "Point at a program class (one whose instances have components() and "
            "train_step(), made from a settings dict), a function that takes a settings "
            "dict and returns such a program, or a resumecheck.Target",
        )
    return Target(factory=obj, spec=spec, import_streams=streams, drawn_at_import=drawn)


def _targets_in(where: str) -> list[str]:
    """The names a module or file binds at its top level to a ``Target(...)``
    call, read from its source (trial 168: a target given as `check.py`,
    without a colon, was not told what it holds); where none, the names in
    capitals it binds to another call, each marked ``?``. Not imported: a
    script without a ``__main__`` guard would train. None where it cannot be read."""
    try:
        if where.endswith(".py") or "/" in where or "\\" in where:
            source = Path(where).read_text()
        else:
            _importable_from_cwd()  # (as the import would be: trial 254's `check` was not found)
            found = importlib.util.find_spec(where)
            origin = found.origin if found is not None else None
            source = Path(origin).read_text() if origin and origin.endswith(".py") else ""
        tree = ast.parse(source)
    except (OSError, ValueError, SyntaxError, ImportError):
        return []
    assigned = [(target.id, node.value) for node in tree.body if isinstance(node, ast.Assign)
                for target in node.targets if isinstance(target, ast.Name)]
    named = [name for name, value in assigned
             if isinstance(value, ast.Call) and _called(value.func) == "Target"]
    # (trial 171: a wrapper of its own, `TARGET = make_target(train)`: read, never
    # run, the names in capitals it binds to a call are what it may mean; trial 255:
    # not a setting, `WORD_DROPOUT = float(os.environ.get(...))`)
    return named or [f"{name}?" for name, value in assigned
                     if name.isupper() and isinstance(value, ast.Call)
                     and _called(value.func) not in _NOT_A_FACTORY]


_NOT_A_FACTORY = frozenset(name for name in dir(builtins) if not name[0].isupper()) | {
    "get", "getenv", "environ", "Path", "getLogger", "device", "dtype", "tensor", "Generator"}
"""Calls whose value is no target: a setting read at import (``float(...)``,
``os.environ.get(...)``), a path, a logger, a tensor."""


def _called(func: ast.expr) -> str:
    """The name a call calls: ``Target`` of ``Target(...)`` and ``resumecheck.Target(...)``."""
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _names(held: list[str]) -> str:
    return f"the target{'s' if len(held) > 1 else ''} {', '.join(held[:8])}" + (
        " ..." if len(held) > 8 else "")


_SET_AT_IMPORT: dict[str, dict[str, Any]] = {}
"""Per module this interpreter imported for a target: the streams its import
seeded, as it left them (``Target.import_streams``)."""

_DRAWN_AT_IMPORT: dict[str, tuple[str, ...]] = {}
"""Per module this interpreter imported for a target: the streams its import
drew from unseeded (``Target.drawn_at_import``)."""


def _exec_noting_streams(name: str, run: Callable[[], Any]) -> Any:
    """Import a program's module through ``run``, noting which global streams
    its import seeded and their state after it (a stream only drawn from, by
    the module or a library it imports, is left out: no two launches agree on it)."""
    before = RNGState(streams=IMPORT_STREAMS).state_dict()
    with seeds_called() as seeded:
        out = run()
    after = RNGState(streams=IMPORT_STREAMS).state_dict()
    streams = seeded_streams(after, seeded)
    if streams:
        _SET_AT_IMPORT[name] = streams
    drawn = drawn_streams(before, after, seeded)
    if drawn:  # (trial 142: a data order drawn at import passed every in-process check)
        _DRAWN_AT_IMPORT[name] = tuple(drawn)
    if name in sys.modules:  # what its modules hold as imported (see module_state)
        module_state.note_import(sys.modules[name])
    return out


def _shadowed_siblings(directory: Path) -> dict[str, Any]:
    """Take out of sys.modules the modules that files in ``directory`` shadow."""
    shadowed = {}
    for sibling in directory.glob("*.py"):
        loaded = sys.modules.get(sibling.stem)
        origin = getattr(loaded, "__file__", None)
        if loaded is not None and origin and Path(origin).resolve().parent != directory:
            shadowed[sibling.stem] = sys.modules.pop(sibling.stem)
    return shadowed


def _importable_from_cwd() -> None:
    """Let module:attr targets import from the current directory, as they do
    under ``python -m resumecheck`` (the console script's sys.path starts with
    its own bin directory instead). Appended, after the standard library and
    installed packages, so a random.py in the cwd cannot replace the real one."""
    cwd = os.getcwd()
    if "" not in sys.path and not any(os.path.abspath(p) == cwd for p in sys.path if p):
        sys.path.append(cwd)


def _not_found(spec: str, where: str, exc: ModuleNotFoundError) -> TargetError:
    """A module is missing: a framework's extra, one the target imports, or the target."""
    missing = (exc.name or "").split(".")[0]
    if missing in MissingFramework.EXTRAS:
        need = MissingFramework(missing, f"importing {where}")
        return TargetError(spec, need.problem, need.hint)
    home = _home_of(missing, where)
    if home is not None:  # a package of the user's own, beside the file's folders
        return TargetError(
            spec, f"{where} imports {missing}, which is not installed, but is a package in "
            f"{home}: a file target puts its own directory on the module path, not that one "
            "(as `python path/to/file.py` would not)",
            ("Give the target as a module, " if home == Path.cwd() else
             f"Run from {home} with the target as a module, ")
            + f"{_as_module(where, home)}:{spec.rpartition(':')[2]}, or set PYTHONPATH={home}",
        )
    beside = _beside_module(missing, where)
    if beside is not None:  # a module target's sibling file, as its own folder holds it
        return TargetError(
            spec, f"{where} imports {missing}, which is not installed, but is a module beside "
            f"it in {beside}: a module target does not put its own folder on the module path "
            "(as `python -m` would not)",
            f"Give the target as a file, {_shown_path(beside / Path(_file_of(where)).name)}:"
            f"{spec.rpartition(':')[2]} (its folder goes on the path, as when you run the "
            f"script), or set PYTHONPATH={beside}",
        )
    if exc.name and exc.name != where and not where.startswith(exc.name + "."):
        # the target was found; something it imports is not installed
        return TargetError(
            spec, f"{where} imports {exc.name}, which is not installed in this Python "
            f"({sys.executable})",
            # (trial 164: a misspelt module of the program's own read as a package to install)
            f"Install it here (pip install {missing}, if that is its package's name), or "
            "run the check with the Python your program trains with; or, if it is a module of "
            f"your own, check its name: no {missing}.py or {missing}/ is beside the target or "
            "on the module path",
        )
    return TargetError(
        spec,
        f"cannot import {where}: {exc}",
        "Run from the directory that holds it, install it, or give a file path "
        "(path/to/train.py:build)",
    )


def _home_of(missing: str, where: str) -> Path | None:
    """For a file target: the current directory or a folder above the file
    that holds ``missing`` as a package or module (None: none does)."""
    if not missing or not (where.endswith(".py") or "/" in where or "\\" in where):
        return None
    path = Path(where).resolve()
    for folder in (Path.cwd(), *path.parents):
        if (folder / missing / "__init__.py").is_file() or (folder / f"{missing}.py").is_file():
            return folder
    return None


def _file_of(module: str) -> str:
    """Where a module's source is ("": not found, or not a file)."""
    try:
        found = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return ""
    return found.origin if found is not None and found.has_location and found.origin else ""


def _beside_module(missing: str, where: str) -> Path | None:
    """For a module target: its folder, when that holds ``missing`` as a module
    or package (None: it does not, or the target is a file)."""
    if not missing or where.endswith(".py") or "/" in where or "\\" in where:
        return None
    origin = _file_of(where)
    if not origin:
        return None
    folder = Path(origin).resolve().parent
    if (folder / f"{missing}.py").is_file() or (folder / missing / "__init__.py").is_file():
        return folder
    return None


def _shown_path(path: Path) -> str:
    """``path`` relative to the current directory when it is below it."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _as_module(where: str, home: Path) -> str:
    """``pkg/check.py`` under ``home`` as ``pkg.check``."""
    try:
        rel = Path(where).resolve().relative_to(home.resolve())
    except ValueError:
        return where
    return ".".join(rel.with_suffix("").parts)


def _import(spec: str, where: str):
    try:
        if where.endswith(".py") or "/" in where or "\\" in where:
            path = Path(where).resolve()
            if not path.is_file():
                raise TargetError(
                    spec, f"no such file: {path}",
                    f"A file path in a target is read from the current directory ({Path.cwd()}): "
                    "give it relative to where you run resumecheck (or pytest), or absolute",
                )
            name = "_resumecheck_target_" + str(abs(hash(str(path))))
            if name in sys.modules:
                return sys.modules[name]
            module_spec = importlib.util.spec_from_file_location(name, path)
            assert module_spec is not None and module_spec.loader is not None
            module = importlib.util.module_from_spec(module_spec)
            sys.modules[name] = module
            # Modules beside the file win over same-named ones imported from
            # elsewhere (two targets that both `import train`), as they would
            # when the file is run as a script from its own directory.
            shadowed = _shadowed_siblings(path.parent)
            sys.path.insert(0, str(path.parent))
            try:
                loader = module_spec.loader
                _exec_noting_streams(name, lambda: loader.exec_module(module))
            except BaseException:
                del sys.modules[name]
                raise
            finally:
                sys.path.remove(str(path.parent))
                sys.modules.update(shadowed)
            # A script run as `python train.py` keeps its directory on the module
            # path while it trains: a sibling imported inside a step or the
            # factory is found (appended: other targets' siblings keep their place).
            if str(path.parent) not in sys.path:
                sys.path.append(str(path.parent))
            return module
        _importable_from_cwd()
        if where in sys.modules:
            return sys.modules[where]
        return _exec_noting_streams(where, lambda: importlib.import_module(where))
    except TargetError:
        raise
    except ModuleNotFoundError as exc:
        raise _not_found(spec, where, exc) from exc
    except Exception as exc:
        raise TargetError(
            spec,
            f"importing {where} raised {type(exc).__name__}: {exc}",
            _target_argument_hint(exc)
            or "Fix the error in that module; importing it must not fail",
        ) from exc


_PROGRAM_ATTRIBUTES = ("steps_per_epoch", "epoch_boundaries")
"""What a program says of itself as an attribute, not a ``Target`` setting."""


def _target_argument_hint(exc: Exception) -> str | None:
    """What to do where the module called ``Target(...)`` with a setting it
    has not (a trial passed ``steps_per_epoch=8``, and was told only to fix
    its module); None: it did not."""
    found = re.search(r"Target\.__init__\(\) got an unexpected keyword argument '(\w+)'",
                      str(exc)) if isinstance(exc, TypeError) else None
    if found is None:
        return None
    name = found.group(1)
    if name in _PROGRAM_ATTRIBUTES:
        return (f"{name} is an attribute of your program (the object the factory returns, "
                f"`self.{name} = ...`, or of its class), not a Target setting")
    settings = ", ".join(f.name for f in dataclasses.fields(Target) if f.repr)
    close = difflib.get_close_matches(name, settings.split(", "), n=1)
    return (f"Target has no setting {name!r}" + (f" (did you mean {close[0]!r}?)" if close else "")
            + f"; its settings are {settings}")


def _declared_per_epoch(program: Any) -> bool:
    """Whether a framework target was given its steps per epoch, not reading them
    from the framework's data and batch settings (trial 880: the report credited
    the framework with the program's own)."""
    return getattr(program, "declared_steps_per_epoch", None) is not None


def _loss_value(loss: Any, step: int, what: str) -> float:
    """The loss a step returned, as a float; what a check cannot use is refused
    (``what``: how the message says it was returned)."""
    if isinstance(loss, torch.Tensor):
        if loss.numel() != 1:
            raise StepError(
                step,
                f"train_step() returned a loss of shape {tuple(loss.shape)}; "
                "return a scalar (reduce it with .mean() or .sum())",
            )
        return float(loss.detach().float().item())
    if isinstance(loss, (int, float)) and not isinstance(loss, bool):
        return float(loss)
    raise StepError(
        step,
        f"train_step() {what} {'None' if loss is None else a_type(type(loss).__name__)}; "
        "return the loss (a scalar tensor or float) or a resumecheck.StepOutput of it",
    )


def replaced_objects(built: BuiltProgram) -> list[str]:
    """The declared modules, optimizers, schedulers and loss scalers that
    ``components()`` now gives other objects for than those ``built`` holds
    (a new optimizer for a new phase: trial 293's correct program was compared
    against the first one's state and read NOT EQUIVALENT). A module of the
    same parameters and buffers is the same (a ModuleList made at each call).
    Framework targets make theirs themselves: not asked."""
    if getattr(built.program, "framework", None):
        return []
    try:
        now = built.program.components()
    except Exception:  # (the step's own failure shows elsewhere, if any)
        return []
    if not isinstance(now, Mapping):
        return []
    return [c.name for c in built.components
            if isinstance(c.obj, _REPLACEABLE) and (new := now.get(c.name)) is not None
            and new is not c.obj and not _same_tensors(new, c.obj)]
