"""Gradients a step adds to across a resume point: state no checkpoint holds.

A program whose steps are micro-batches (it calls ``backward()`` every step
and the optimizer every few) keeps the gradients summed so far in each
parameter's ``.grad`` between its steps. A checkpoint holds a model's
``state_dict()`` and an optimizer's, neither of which holds ``.grad``, and the
engine's restore does not set it: a restart there starts the sum anew, and
the optimizer's next step sees part of it (trial 155: a diffusion trainer
saved in the middle of its accumulation cycle; the check said only that
something undeclared was lost).

A gradient left in ``.grad`` at a resume point is no evidence by itself: most
loops zero it before the next ``backward()`` (``zero_grad()`` at the top of a
step, or a GAN's other optimizer's), and a restart that starts it empty then
changes nothing. So ``GradCarry`` follows it, in the reference only and only
from a resume point to the first optimizer step that steps the parameter:
each ``backward()`` that adds to it is seen before it adds (a tensor hook:
the gradient held then is what it adds to), and the optimizer's step is seen
before it steps (a step pre-hook). A gradient emptied or zeroed on the way
is not carried; one still held, as it was or added to, at the optimizer's
step is what a restart at that resume point loses, and is named among what
is not compared. Parameters an optimizer of torch does not step (a hand-
written update) are never seen stepped, and not named.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from resumecheck.components import Component
from resumecheck.phrases import GRADS_SUMMED

__all__ = ["GradCarry"]

_CARRIED, _EMPTIED = "carried", "emptied"


class GradCarry:
    """Follows the gradients the parameters hold at each resume point of the
    reference (``points``; none: it follows nothing) to the optimizer's next
    step (``arm`` after every step, ``found`` at the end of the run)."""

    def __init__(self, components: Sequence[Component], points: Sequence[int]) -> None:
        self._points = set(points)
        self._names: dict[int, str] = {}
        self._optimizers: list[torch.optim.Optimizer] = []
        for c in components:
            if isinstance(c.obj, torch.nn.Module):
                for name, p in c.obj.named_parameters():
                    self._names.setdefault(id(p), f"{c.name}.{name}")
            elif isinstance(c.obj, torch.optim.Optimizer):
                self._optimizers.append(c.obj)
        self._state: dict[int, str] = {}
        self._handles: list[Any] = []
        self._at: int | None = None
        self.carried: dict[int, list[str]] = {}
        """Resume point -> the parameters whose gradient held there reached the
        optimizer's next step of them."""

    def arm(self, step: int) -> None:
        """After ``step`` (at a resume point, its save made): follow what the
        parameters hold. A notice never fails a check: on any error, nothing."""
        if step not in self._points or self._at is not None or not self._optimizers:
            return
        try:
            params = {id(p): p for opt in self._optimizers for group in opt.param_groups
                      for p in group["params"] if isinstance(p, torch.Tensor)}
            held = {key: p for key, p in params.items()
                    if p.requires_grad and _nonzero(p.grad)}
            if not held:
                return
            self._at, self._state = step, dict.fromkeys(held, _CARRIED)
            for key, p in held.items():
                self._handles.append(p.register_hook(self._adding(key, p)))
            for opt in self._optimizers:
                self._handles.append(opt.register_step_pre_hook(self._stepping))
        except Exception:
            self.disarm()

    def _adding(self, key: int, p: torch.Tensor) -> Any:
        def seen(grad: torch.Tensor) -> None:  # (before it is added to p.grad)
            if self._state.get(key) == _CARRIED and not _nonzero(p.grad):
                self._state[key] = _EMPTIED
        return seen

    def _stepping(self, opt: torch.optim.Optimizer, args: Any, kwargs: Any) -> None:
        if self._at is None:
            return
        for group in opt.param_groups:
            for p in group["params"]:
                state = self._state.pop(id(p), None)
                if state == _CARRIED and _nonzero(p.grad):
                    self.carried.setdefault(self._at, []).append(
                        self._names.get(id(p), f"a parameter of {type(opt).__name__}"))
        if not self._state:
            self.disarm()

    def disarm(self) -> None:
        """Remove every hook (the next resume point may arm again)."""
        for handle in self._handles:
            handle.remove()
        self._handles, self._state, self._at = [], {}, None

    def found(self) -> dict[str, str]:
        """The `not compared` lines: path -> words."""
        self.disarm()
        out = {}
        for at, names in sorted(self.carried.items()):
            owners = sorted({n.split(".")[0] for n in names})
            path = f"{owners[0]}.*.grad" if len(owners) == 1 else "*.grad"
            if path in out:
                continue
            shown = ", ".join(f"`{n}`" for n in names[:3]) + (
                f" and {len(names) - 3} more" if len(names) > 3 else "")
            out[path] = (
                f"{path} (the gradients {len(names)} parameter"
                f"{'' if len(names) == 1 else 's'} held at the end of step {at}, a resume "
                f"point, which later steps added to and the optimizer's next step used "
                f"({shown}): {GRADS_SUMMED} (an accumulation cycle "
                "that spans the program's steps); a model's and an optimizer's state_dict() "
                "do not hold a parameter's .grad, and a restart starts it empty: resume where "
                "the optimizer has just stepped and emptied them (the end of a cycle), or "
                "save them with the checkpoint, set them in load(), and declare them as a "
                "component (an object whose state_dict() returns them and whose "
                "load_state_dict() sets them), to check that it resumes)")
        return out


def _nonzero(grad: torch.Tensor | None) -> bool:
    """Whether ``grad`` holds a value other than 0 (of a DTensor, this rank's
    shard: a collective in a hook could pair otherwise on other ranks)."""
    if grad is None:
        return False
    local = grad.to_local() if hasattr(grad, "to_local") else grad
    return bool(local.detach().ne(0).any())
