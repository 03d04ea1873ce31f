"""The restore rules: what a restart is built from and how state goes back in.

A restart is built from the run's settings as its checkpoint holds them
(unless ``config`` is dropped), then restored through the program's own
``load()`` or from the engine's capture minus the dropped components, the
random streams last.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import torch

from resumecheck.capture import capture_meta, load_checkpoint
from resumecheck.compare import digest, flatten_state
from resumecheck.components import (
    CONFIG,
    OPTIMIZER,
    RNG,
    Attr,
    Component,
    RNGState,
    Value,
    asked_state,
    preserved_global_streams,
    settle_component,
)
from resumecheck.errors import CheckpointError
from resumecheck.module_state import raised
from resumecheck.program import BuiltProgram
from resumecheck.segments import Restore
from resumecheck.state_diff import reorder_optimizer_state
from resumecheck.undeclared import iterators_over

__all__ = ["among_ranks", "build_settings", "engine_capture", "program_save", "restore_state"]

def engine_capture(restore: Restore | None) -> dict[str, Any] | None:
    """The engine capture a restart restores from, read once (None otherwise)."""
    if restore is None or restore.source != "engine":
        return None
    return load_checkpoint(restore.path)


def build_settings(
    config: dict[str, Any], restore: Restore | None, capture: dict[str, Any] | None
) -> dict[str, Any]:
    """The settings a restart is built from.

    A real resume reads the run's settings from the checkpoint before it
    builds anything (nanoGPT's model_args, OLMo's config.yaml), so settings
    baked in at build time come back too. When the engine restores the
    ``config`` component and its state is a settings mapping, the restart is
    built from it; when config is dropped, from the program's defaults.
    """
    if restore is None or capture is None or CONFIG in restore.drop:
        return config
    state = capture["components"].get(CONFIG)
    if isinstance(state, dict) and set(state) == {"value"}:
        state = state["value"]
    return dict(state) if isinstance(state, dict) else config



def restore_state(built: BuiltProgram, restore: Restore, capture: dict[str, Any] | None,
                  made_anew: dict[str, list[str]] | None = None,
                  moved: dict[str, str] | None = None) -> dict[str, list[str]]:
    """Restore a fresh program: through its own load(), or from the engine's
    ``capture`` (already read) minus the dropped components; into
    ``made_anew``, the random states whose generators another component's
    load made anew in the engine's restore (``_generators_made_anew``); into
    ``moved``, the components a later one's load changed (``_Watch``).

    Returns the data loaders the engine put state into while the program kept
    an iterator it had made from them (component name -> where the program
    keeps it; ``iterators_over``): that state may not reach the iterator the
    program goes on with (a StatefulDataLoader's reaches only the next one)."""
    if restore.source == "program":
        try:
            built.program.load(restore.path)
        except Exception as exc:
            problem = f"the program's load() raised {raised(exc)}"
            damage = _damaged(restore.path)
            if _nothing_saved(restore.path):
                # (a trial's save() wrote from a thread after it returned: told it
                # "wrote nothing there", it waited in its wrapper, which hid the bug)
                problem += ("; nothing is at that path: the program's save() wrote nothing "
                            "there by the time it returned (it must write to the path it is "
                            "given; one that writes later, from a thread or another process, "
                            "must finish before it returns, or copy what it saves first: a "
                            "write from the live tensors while training goes on saves a later "
                            "step's state, which this check cannot see)")
            elif damage:
                problem = f"the checkpoint its save() wrote is truncated or corrupted ({damage}); {problem}"
            raise CheckpointError("load", _capture_name(restore.path), problem) from exc
        if restore.override_path is not None:
            return _put_right_after_load(built, restore)
        return {}
    assert capture is not None
    states = capture["components"]
    if restore.override_path is not None:
        states = {**states, **_overrides(built, restore)}
    missing = [c.name for c in built.components
               if c.name not in restore.drop and c.name not in states]
    if missing:
        raise CheckpointError(
            "load", restore.path, f"component {missing[0]!r} is missing from the capture"
        )
    kept = {n: v for n, v in states.items() if n not in restore.drop}
    unreached = _iterators_made(built, kept)
    _load_states(built, kept, restore.path, made_anew=made_anew, moved=moved)
    # (a program that sets modes on purpose, batch norm frozen after some
    # steps, has them as it had them; a dropped module keeps its build's)
    _set_modes(built, kept, capture.get("meta"))
    return unreached


def _put_right_after_load(built: BuiltProgram, restore: Restore) -> dict[str, list[str]]:
    """After the program's load(), put ``restore.override`` right from
    another capture (a rerun's); returns as ``restore_state``."""
    assert restore.override_path is not None
    built.refresh()  # load() may have replaced objects
    overrides = _overrides(built, restore)
    # Putting a component right must not draw from the global streams
    # the program's load() left (a data position that builds its
    # iterator again draws a base seed): that draw is the check's,
    # not the program's, and putting rng right too would undo it.
    unreached = _iterators_made(built, overrides, generators=True)
    sets_streams = any(_is_streams(c) for c in built.components if c.name in overrides)
    with contextlib.nullcontext() if sets_streams else preserved_global_streams():
        _load_states(built, overrides, restore.override_path, settle=False)
        set_to = torch.get_rng_state()
    if not sets_streams and any(torch.equal(set_to, held)
                                for held in _generator_states(overrides)):
        # (trial 856: a callback's state that holds torch's stream, put right,
        # set it, and giving the stream back undid that: the rerun could not
        # confirm the one component whose load the program never ran)
        torch.set_rng_state(set_to)
    _set_modes(built, overrides, load_checkpoint(restore.override_path,
                                                 read_only=True).get("meta"))
    return unreached


def _generator_states(states: dict[str, Any]) -> list[torch.Tensor]:
    """The leaves of ``states`` shaped as a torch CPU generator's state: a
    component's load that sets torch's stream to one of them sets it on
    purpose (a callback's or a helper's copy of the stream), not by a draw."""
    size = torch.get_rng_state().numel()
    return [leaf for _, leaf in flatten_state(states) if isinstance(leaf, torch.Tensor)
            and leaf.dtype == torch.uint8 and leaf.numel() == size]


def _iterators_made(built: BuiltProgram, states: dict[str, Any],
                    generators: bool = False) -> dict[str, list[str]]:
    """The program's iterators over the declared data loaders about to get
    ``states`` (``generators``: and over loaders whose samplers draw from a
    declared generator, or are a declared ``Attr``'s object, about to get its
    state: a rerun's, which puts it right after the program's load() made them)."""
    return iterators_over(built.program, {
        c.name: c.obj for c in built.components
        if c.name in states and (generators or not isinstance(c.obj, (RNGState, Attr)))})


def _load_states(built: BuiltProgram, states: dict[str, Any], path: str,
                 settle: bool = True, made_anew: dict[str, list[str]] | None = None,
                 moved: dict[str, str] | None = None) -> None:
    """Load ``states`` into the declared components of those names; with
    ``settle`` (a restore, not a rerun's override after the program's load())
    settle the others even where the random state is not restored; into
    ``made_anew``, what ``_generators_made_anew`` finds; into ``moved``, what
    ``_Watch`` finds."""
    # RNG goes last, and the other components are settled before it: some
    # build what they need lazily and draw a seed when they do (a
    # StatefulDataLoader creates its iterator on the first state_dict() or
    # iter()). Settled first, they draw before the streams are set, as a
    # correct resume must (docs/HONEST-CHECKS.md: a DataLoader shifts the RNG by one draw);
    # a loader's iterator is kept only where making it drew from a global stream
    # (``settle_component``): one that draws nothing global is the program's to
    # make, after what it sets first (a sampler's epoch).
    # At a restore, settling is done whether or not rng is restored: among ranks a state_dict()
    # may be a collective (FSDP gathers the parameters), and a component dropped
    # on one rank only (rng[rank 0]) must not leave the other ranks waiting in
    # it; and the modes and frozen parameters are set after it (``_set_modes``),
    # so what a framework builds lazily over the trainable parameters (the
    # Trainer's optimizer) is built over the build's, as a fresh run's is (a
    # trial: `drop rng` failed to load the optimizer of a run that had frozen layers).
    # An override after the program's load() settles only where it sets rng (or
    # among ranks): asking a loader for its state there would draw a seed the
    # program's own resume does not.
    # (trial 581: an RNGState of another name, a collate function's generator, was
    # restored before the data position whose load replays batches through it)
    others = [c for c in built.components if not _is_streams(c)]
    held = _generators_held(built) if made_anew is not None else {}
    # (not a framework's program: asking its components starts its loop, ``leaf_digests``)
    watch = _Watch(moved) if moved is not None and not hasattr(built.program, "loaded_back") \
        else None
    for comp in others:
        _load_one(comp, states, path)
        if held and comp.name in states:
            _generators_made_anew(built, held, comp.name, made_anew)
        if watch is not None and comp.name in states:
            watch.loaded(comp)
    if watch is not None:
        watch.done()
    if settle or any(_is_streams(c) for c in built.components if c.name in states) \
            or among_ranks():
        for comp in others:
            settle_component(comp.obj)
    for comp in built.components:
        if _is_streams(comp):
            _load_one(comp, states, path)


class _Watch:
    """In the engine's restore, the small states of the plain components
    already loaded (an ``Attr``, a ``Value``: a generator, a weights tensor, a
    count; asking a loader or a framework's object for its state there may
    make an iterator or draw), digested right after their own load and
    again once every other component is loaded: one that changed is recorded
    with the components loaded after it (trials 891, 896: a data position
    whose load made the epoch's iterator again drew from a generator declared
    and restored before it, and the report said that the generator's
    load_state_dict() does not bring back what its state_dict() returned).
    Twice per component and restore, not after each load: the sweep's fixed
    cost is a target."""

    LIMIT = 1 << 16
    """The most values a watched state holds (a tensor's elements, each other leaf one)."""

    def __init__(self, into: dict[str, str]) -> None:
        self.into = into
        self.order: list[str] = []
        self.seen: dict[str, tuple[Any, str]] = {}

    def loaded(self, comp: Component) -> None:
        self.order.append(comp.name)
        if isinstance(comp.obj, (Attr, Value)):
            now = self._digest(comp.obj)
            if now is not None:
                self.seen[comp.name] = (comp.obj, now)

    def done(self) -> None:
        for name, (obj, was) in self.seen.items():
            later = self.order[self.order.index(name) + 1:]
            if later and self._digest(obj) not in (None, was):
                self.into.setdefault(name, ", ".join(f"`{n}`" for n in later))

    def _digest(self, obj: Any) -> str | None:
        """The state's digest (None: too large, or it cannot be asked here)."""
        try:
            state = asked_state(obj)
        except Exception:
            return None
        leaves = flatten_state(state)
        size = sum(v.numel() if isinstance(v, torch.Tensor) else 1 for _, v in leaves)
        return digest(state) if size <= self.LIMIT else None


def _generators_held(built: BuiltProgram) -> dict[str, dict[str, int]]:
    """Which generator objects each declared random state holds, by name."""
    return {c.name: {n: id(g) for n, g in c.obj.generators.items()}
            for c in built.components if isinstance(c.obj, RNGState) and c.obj.generators}


def _generators_made_anew(built: BuiltProgram, held: dict[str, dict[str, int]], maker: str,
                          into: dict[str, list[str]] | None) -> None:
    """After the load of ``maker``: the random states whose generators
    ``components()`` now gives as other objects than those ``held`` at the
    build, which the engine's restore of random state, last, sets (trial 862:
    a data position whose load built its dataset again, with a new shuffle
    generator, read "a declared component does not load back its own state")."""
    try:
        now = built.program.components()
    except Exception:  # (the restore's own failure shows elsewhere, if any)
        return
    for name, gens in held.items():
        obj = now.get(name) if isinstance(now, Mapping) else None
        new = obj.generators if isinstance(obj, RNGState) else {}
        anew = [g for g, ident in gens.items() if g in new and id(new[g]) != ident]
        if anew and into is not None and name not in into:
            into[name] = [maker, *anew]


def _is_streams(comp: Any) -> bool:
    """Whether a declared component is random state (``rng``, or any
    ``RNGState``): restored after every other one."""
    return comp.name == RNG or isinstance(comp.obj, RNGState)


def _load_one(comp: Component, states: dict[str, Any], path: str) -> None:
    if comp.name not in states:
        return
    try:
        comp.obj.load_state_dict(states[comp.name])
    except Exception as exc:
        raise CheckpointError(
            "load",
            _capture_name(path),
            f"{comp.name}.load_state_dict raised {type(exc).__name__}: {exc}"
            + _groups_advice(comp.obj, exc),
        ) from exc


def _capture_name(path: str) -> str:
    """A checkpoint a restore read, in words: a file in the check's scratch
    directory is gone once the check ends, so its step, not its path (another
    path as it is)."""
    engine = re.search(r"capture(\d+)\.pt$", path)
    if engine:
        return f"the engine's capture at step {engine.group(1)}"
    own = re.search(r"\.program(\d+)$", path)
    if own:
        return (f"the checkpoint your save() wrote at step {own.group(1)}, given a path in "
                "the check's scratch directory")
    return path


def _groups_advice(obj: Any, exc: Exception) -> str:
    """What to do when an optimizer refuses a state with other parameter groups."""
    if not isinstance(obj, torch.optim.Optimizer) or "parameter group" not in str(exc):
        return ""
    return ("; the program changes its optimizer's parameter groups while it trains "
            "(add_param_group: layers unfrozen mid-run, say), and a fresh build has the first "
            "ones only: a restore must add the groups again before the optimizer's "
            "load_state_dict(): the program's own load() can, and the engine's restore where "
            "a component declared before the optimizer adds them in its load_state_dict() "
            "(the engine restores them in the order components() gives them, random streams "
            "last)")


def _nothing_saved(path: str) -> bool:
    """Whether the program's save() wrote nothing for ``path``: nothing there
    (or an empty directory), nor beside it under a longer name (a save that
    writes ``path + ".pt"``, which its load() reads back, wrote something)."""
    if os.path.isdir(path):
        return not os.listdir(path)
    if os.path.exists(path):
        return False
    parent, name = os.path.split(path)
    try:
        return not any(n.startswith(name) for n in os.listdir(parent or "."))
    except OSError:
        return True


def _set_modes(built: BuiltProgram, names: Iterable[str], meta: dict[str, Any] | None) -> None:
    """Put the declared modules ``names`` (those that are modules) in the modes
    a capture recorded, module by module, and freeze the parameters it
    recorded frozen: a module's state_dict() leaves its train or eval mode and
    its parameters' requires_grad out, and putting it right is putting those
    right too."""
    evals = (meta or {}).get("eval_modules") or {}
    frozen = (meta or {}).get("frozen_params") or {}
    for comp in built.components:
        if comp.name not in names or not isinstance(comp.obj, torch.nn.Module):
            continue
        # (what the program held otherwise, by what the uninterrupted run had: modes_set)
        changed: dict[str, list[str]] = {}
        if comp.name in evals:
            off = set(evals[comp.name])
            for path, module in comp.obj.named_modules():
                if module.training == (path in off):
                    changed.setdefault("in eval mode" if path in off else "in train mode",
                                       []).append(path or "(the module)")
                module.training = path not in off
        if comp.name in frozen:  # (and which parameters are frozen: requires_grad)
            still = set(frozen[comp.name])
            for path, param in comp.obj.named_parameters():
                if param.requires_grad == (path in still):
                    changed.setdefault("frozen" if path in still else "trainable",
                                       []).append(path)
                param.requires_grad_(path not in still)
        if changed:
            built.modes_set[comp.name] = [_held_otherwise(comp.name, there, paths)
                                          for there, paths in changed.items()]


_OTHERWISE = {"frozen": "trainable", "trainable": "frozen", "in eval mode": "in train mode",
              "in train mode": "in eval mode"}


def _held_otherwise(name: str, there: str, paths: list[str]) -> str:
    """What the engine's restore set otherwise than the program held it, in
    words (of two parameters of ``params``, the engine froze: "... of ``params``
    trainable (frozen in the uninterrupted run)")."""
    shown = ", ".join(f"`{p}`" for p in paths[:3]) + (
        f" and {len(paths) - 3} more" if len(paths) > 3 else "")
    return f"{shown} of `{name}` {_OTHERWISE[there]} ({there} in the uninterrupted run)"


def among_ranks() -> bool:
    """This process is one rank of several (a process group is up)."""
    import torch.distributed as dist

    return dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1


def _overrides(built: BuiltProgram, restore: Restore) -> dict[str, Any]:
    """States of ``restore.override`` taken from another capture.

    Optimizer state is moved by parameter name: the other capture may list
    the parameters in another order (that is what class-16 bugs do).
    """
    assert restore.override_path is not None
    other = load_checkpoint(restore.override_path)
    states = {n: other["components"][n] for n in restore.override if n in other["components"]}
    if OPTIMIZER in states:
        ours = capture_meta(built).get("optimizer_params")
        theirs = other.get("meta", {}).get("optimizer_params")
        if ours and theirs:
            states[OPTIMIZER] = reorder_optimizer_state(states[OPTIMIZER], theirs, ours)
    return states


def _damaged(path: str) -> str | None:
    """Why a torch checkpoint file cannot be read at all (None: it reads, or is no file)."""
    if not Path(path).is_file():
        return None
    try:
        torch.load(path, weights_only=True, map_location="cpu")
    except Exception as exc:
        text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if "weights_only" in text or "Unsupported global" in text:
            return None  # readable, only not as plain data
        return text
    return None


def program_save(built: BuiltProgram, path: str, step: int) -> None:
    try:
        built.program.save(path)
    except Exception as exc:
        why = f"the program's save() at step {step} raised {raised(exc)}"
        if os.path.isdir(path) and (isinstance(exc, IsADirectoryError)
                                    or "Is a directory" in str(exc)):
            why += (" (on many ranks, save(path) and load(path) get one directory that every "
                    "rank shares: write the files inside it, os.path.join(path, ...))")
        raise CheckpointError("save", path, why, by_program=True) from exc

