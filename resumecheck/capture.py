"""The engine's own checkpoint file: what a capture holds, and loading it safely.

A capture is ``{"format", "rank", "world_size", "meta", "components"}``,
written with ``torch.save`` and read with ``torch.load(weights_only=True)``,
so restored state never aliases live objects and an untrusted file cannot
run code. A capture whose state will not load that way is refused when it is
written, naming the component and the value.
"""

from __future__ import annotations

import collections
import re
from collections.abc import Iterator
from typing import Any

import torch

from resumecheck.components import OPTIMIZER, PARAMS, RNG
from resumecheck.errors import CheckpointError
from resumecheck.program import BuiltProgram
from resumecheck.trace import unwrap_optimizer

__all__ = ["CHECKPOINT_FORMAT", "capture", "capture_meta", "load_checkpoint", "save_capture"]

CHECKPOINT_FORMAT = "resumecheck.checkpoint/1"


def capture(built: BuiltProgram) -> dict[str, Any]:
    """The engine's own checkpoint of every declared component."""
    return {
        "format": CHECKPOINT_FORMAT,
        "rank": _rank_of_process(),
        "world_size": _world_size(),
        "meta": capture_meta(built),
        "components": _states(built),
    }


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
    states = {c.name: c.obj.state_dict() for c in first}
    return {c.name: states[c.name] for c in built.components}


def capture_meta(built: BuiltProgram) -> dict[str, Any]:
    """What comparisons need beside the state: the optimizer's parameter names."""
    opt = built.component(OPTIMIZER)
    optimizer = unwrap_optimizer(opt.obj) if opt is not None else None
    if optimizer is None:
        return {}
    model = built.component(PARAMS)
    names = {}
    if model is not None and isinstance(model.obj, torch.nn.Module):
        names = {id(p): n for n, p in model.obj.named_parameters()}
    return {
        "optimizer_params": [
            names.get(id(p), f"group{g}.param{i}")
            for g, group in enumerate(optimizer.param_groups)
            for i, p in enumerate(group["params"])
        ]
    }


def save_capture(built: BuiltProgram, path: str, verify: bool = True) -> None:
    """Write the engine's capture and prove that it loads with weights_only=True,
    naming the component and the value that would not.

    ``verify`` loads the file back (done for a program's first capture). Later
    captures are loaded back only when their state holds a kind of value not
    seen in a capture that loaded already: state can turn non-plain mid-run
    (a list that becomes a deque), and that must be named here, not found
    later as an unreadable file.
    """
    state = capture(built)
    try:
        torch.save(state, path)
    except Exception as exc:
        raise CheckpointError("save", path, f"torch.save failed: {exc}") from exc
    unfamiliar = _unfamiliar_types(state["components"])
    if not verify and not unfamiliar:
        return
    try:
        torch.load(path, weights_only=True)
    except Exception as exc:
        bad, where, kind = _unsafe_value(state["components"])
        raise CheckpointError(
            "load",
            path,
            f"component {bad!r} has state that torch.load(weights_only=True) refuses: "
            f"{where} is a {kind} ({_first_sentence(exc)}); make its state_dict() "
            "return tensors, numbers, strings, lists and dicts only",
        ) from exc
    _LOADABLE_TYPES.update(unfamiliar)


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


def _unfamiliar_types(components: dict[str, Any]) -> set[type]:
    return {
        type(v) for name, state in components.items() for _, v in _leaves(state, name)
        if type(v) not in _LOADABLE_TYPES
    }


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
                    return name, where, f"{kind.__module__}.{kind.__qualname__}"
            return name, "a value", "type it cannot load"
    return "?", "a value", "type it cannot load"


def load_checkpoint(path: str) -> dict[str, Any]:
    """Load an engine capture safely, with a clear error when it is damaged."""
    try:
        data = torch.load(path, weights_only=True)
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
    return data

