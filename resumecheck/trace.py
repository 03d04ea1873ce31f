"""Per-step traces: what each optimizer step consumed and produced.

For every step the tracer records the loss, which samples the step consumed
(a digest of them), the learning rate and loss scale the step used, each
parameter's gradient as the optimizer saw it (after unscaling, before the
update, caught by an optimizer step pre-hook), whether the step was skipped
(an fp16 overflow: the hook never ran) and each parameter after the update.
At the start of every step it records a digest of every declared random
stream (``StepRecord.streams``, compared only to explain a divergence, see
``resumecheck.streams``). When a step returns no ``samples``, a forward
pre-hook on the model fingerprints what the step fed it (every forward of
the step, accumulation micro-batches included): the ``inputs`` quantity, so a
data-order bug shows as data at the step it happens.

Records keep digests and scalars only, so memory stays flat however long the
run; full tensors of the steps worth comparing go to one file per step on
disk, read back one step at a time by the comparison (a run judged in the
process that ran it keeps them in memory instead, up to ``KEPT_IN_MEMORY``).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import json
import weakref
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch
from torch.optim.optimizer import register_optimizer_step_pre_hook

from resumecheck.compare import digest, float64_digest, local_tensor
from resumecheck.components import OPTIMIZER, PARAMS, SCALER, split_rank_name
from resumecheck.errors import ResumecheckError, TargetError, TracingFailed
from resumecheck.module_state import own_line
from resumecheck.phrases import ordinal
from resumecheck.streams import declared_streams, stream_digests, stream_states

if TYPE_CHECKING:
    from resumecheck.program import BuiltProgram, StepOutput

__all__ = [
    "KEPT_IN_MEMORY", "QUANTITY_ORDER", "StepRecord", "Tracer", "differing_quantities",
    "first_difference", "hooks_hidden", "load_step_file", "load_step_tensors", "load_stream_states",
    "model_unhooked", "save_step_file", "save_step_tensors", "unwrap_optimizer",
]

# Within a step, quantities are compared in the order they are produced, so
# the first difference names the cause rather than a consequence.
QUANTITY_ORDER = ("data", "inputs", "scale", "lr", "loss", "grad", "skipped", "param")


@dataclass(slots=True)
class StepRecord:
    """Digests and scalars of one optimizer step (no full tensors)."""

    step: int
    loss: float
    digests: dict[str, str] = field(default_factory=dict)
    lr: list[float] | None = None
    scale: float | None = None
    skipped: bool = False
    streams: dict[str, str] = field(default_factory=dict)
    """A digest of every declared random stream at the start of the step."""
    inputs: dict[str, str] = field(default_factory=dict)
    """What each ``inputs:`` quantity was in the model's calls, in words
    (`attention_mask` in its 2nd call of 4); none for a single input."""
    lr_of: list[str] = field(default_factory=list)
    """Whose each of ``lr`` is, by optimizer component (``opt_d``), where more
    than one declared optimizer stepped; empty otherwise."""
    lr_call: list[int] = field(default_factory=list)
    """Which step() of its optimizer in this step each of ``lr`` is read at
    (0: its first), where one stepped more than once; empty otherwise."""
    exact: list[str] = field(default_factory=list)
    """The ``data`` and ``inputs:`` quantities that hold no floating-point
    values (sample indices, token ids): they cannot differ by rounding."""
    calls: int = 0
    """How many times the step called the model (0: not counted, where the
    step returned its samples, or where ranks called it unlike)."""
    grads_left: bool | None = None
    """Of a step that stepped no optimizer: whether a parameter of the
    optimizers still held a gradient at its end, for the next step to add to
    (a micro-batch of gradient accumulation), or none (a step skipped, its
    gradients cleared, or no backward yet); None: not looked at."""

    def to_plain(self) -> dict[str, Any]:
        return {"step": self.step, "loss": self.loss, "digests": dict(self.digests),
                "lr": self.lr, "scale": self.scale, "skipped": self.skipped,
                "streams": dict(self.streams), "inputs": dict(self.inputs),
                "lr_of": list(self.lr_of), "lr_call": list(self.lr_call),
                "exact": list(self.exact), "calls": self.calls, "grads_left": self.grads_left}

    @classmethod
    def from_plain(cls, plain: dict[str, Any]) -> StepRecord:
        return cls(**plain)


def _grads_left(optimizers: Sequence[torch.optim.Optimizer]) -> bool | None:
    """Whether a parameter of ``optimizers`` holds a nonzero gradient
    (``StepRecord.grads_left``; None where it cannot be told)."""
    try:
        return any(p.grad is not None and bool(local_tensor(p.grad.detach()).ne(0).any())
                   for opt in optimizers for group in opt.param_groups
                   for p in group["params"] if isinstance(p, torch.Tensor))
    except Exception:  # (a notice's evidence never fails a check)
        return None


def _exact(tensors: dict[str, torch.Tensor]) -> list[str]:
    """Of a step's loss, samples and model inputs (nothing else yet), the
    samples and inputs with no floating-point values (``StepRecord.exact``)."""
    return [key for key, t in tensors.items()
            if key != "loss" and not (t.is_floating_point() or t.is_complex())]


def _own(hook: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A hook of the check's that runs inside the program's step: what it
    raises is ``TracingFailed``, the check's fault, not the program's (a
    try, not a context manager: this is every step's path)."""
    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except ResumecheckError:
                raise
            except Exception as exc:
                raise TracingFailed(hook, f"{type(exc).__name__}: {exc}", own_line(exc)) from exc
        return run
    return wrap


class Tracer:
    """Hooks into a built program and records every step it runs."""

    def __init__(self, built: BuiltProgram, tensor_dir: Path | None,
                 stream_states_at: frozenset[int] = frozenset(),
                 stream_digests_at: frozenset[int] | None = None,
                 kept: dict[str, Any] | None = None) -> None:
        self.tensor_dir = tensor_dir
        self._files = _StepFiles(tensor_dir, kept)
        self.stream_states_at = stream_states_at
        """Steps at whose start the full stream states go to disk (for the offset search)."""
        self.stream_digests_at = stream_digests_at
        """Steps at whose start the streams' digests are recorded (None: every step)."""
        self._rngs = declared_streams(built.components)
        self._streams: dict[str, str] = {}
        self._inputs: list[torch.Tensor] = []
        self._input_names: list[tuple[int, str]] = []  # (the call, the argument) of each
        self._calls = 0
        self.last_data: list[torch.Tensor] = []
        """The latest step's data: its samples and what the model was called with."""
        self.records: list[StepRecord] = []
        self._model = _find(built, PARAMS, torch.nn.Module, "model")
        self._models = _traced_models(built, self._model)
        declared_optimizer = _find(built, OPTIMIZER, object, "optimizer")
        self._optimizers = _optimizers(built, declared_optimizer)
        self._scaler = _find(built, SCALER, torch.amp.GradScaler, "scaler")
        if self._scaler is None:
            # Accelerate keeps its GradScaler on the optimizer wrapper
            scaler = getattr(declared_optimizer, "scaler", None)
            self._scaler = scaler if isinstance(scaler, torch.amp.GradScaler) else None
        self._built = weakref.ref(built)  # (no longer alive than the segment keeps it)
        self._adoptable = _adoptable(self._built, lambda: self._optimizers)
        self._steps = _OptimizerSteps(self._optimizers, self._param_names(), self._wants_copy,
                                      _optimizer_names(built), self._adoptable)
        self._step: int | None = None
        self.copy_grads_at: Callable[[int], bool] | None = None
        """Whether a step's tensors may be kept (None: every step's may)."""
        self.keep_samples = False
        """Keep every step's samples where its full tensors are not kept
        (``SegmentSpec.keep_samples``)."""
        self.reference_digests: list[dict[str, str]] | None = None
        """The reference's digests per step (a gradient equal to its own there is not copied)."""
        self._scale: float | None = None
        self._input_handle: Any = None
        self._labels: dict[int, tuple[str, ...]] = {}
        if self._model is not None:
            _hook_model(self, self._model)

    def step_bytes(self) -> int:
        """About what one step's full tensors take on disk: every parameter
        and its gradient (this rank's shards)."""
        return 2 * sum(local_tensor(p).numel() * p.element_size()
                       for _, model in self._models for p in model.parameters())

    def close(self) -> None:
        self._steps.close()
        if self._input_handle is not None:
            self._input_handle.remove()
            self._input_handle = None
        self._inputs = []

    @_own("the model's forward pre-hook")
    def _on_forward(self, module: torch.nn.Module, args: Any, kwargs: Any) -> None:
        """Keep a reference to every tensor the model is called with (no copy,
        no hash, no draw: a step that returns its samples pays nothing more);
        after the step, the tensors of a step without samples are the
        ``inputs`` quantity."""
        self._calls += 1
        call = self._calls
        named = self._labels.get(len(args))
        if named is None:  # (more arguments than worked out: rare)
            named = _forward_labels(type(module), len(args))  # type: ignore[arg-type]
        if not kwargs and all(type(a) is torch.Tensor for a in args):  # (the common call)
            self._inputs.extend(a.detach() for a in args)
            self._input_names.extend((call, name) for name in named)
            return
        for name, leaf in _named_tensors(args, kwargs, named):
            self._inputs.append(leaf.detach())
            self._input_names.append((call, name))

    def _param_names(self) -> dict[int, str]:
        """Each parameter's name in the keys: the model's own, another declared
        module's under its component's name, else its place in its optimizer,
        under that optimizer's component name where there are several (a
        trial's GAN read "group0.param4" and could not tell whose)."""
        names: dict[int, str] = {}
        for prefix, model in self._models:
            for name, p in model.named_parameters():
                names.setdefault(id(p), f"{prefix}{name}")
        built = self._built()
        declared = (_optimizer_names(built) if built is not None and len(self._optimizers) > 1
                    else {})
        for o, optimizer in enumerate(self._optimizers):
            whose = (f"{declared[id(optimizer)]}." if id(optimizer) in declared
                     else "" if o == 0 else f"optimizer{o}.")
            for g, group in enumerate(optimizer.param_groups):
                for i, p in enumerate(group["params"]):
                    names.setdefault(id(p), f"{whose}group{g}.param{i}")
        return names

    def _wants_copy(self, key: str, value: str) -> bool:
        """Whether a gradient (its key and digest) is copied for judging: a step
        whose tensors may be kept, and not the reference's own there."""
        step, ref = self._step, self.reference_digests
        if step is not None and self.copy_grads_at is not None and not self.copy_grads_at(step):
            return False
        expected = ref[step - 1] if ref is not None and step is not None and \
            0 < step <= len(ref) else None
        return expected is None or expected.get(key) != value

    def before_step(self, step: int | None = None) -> None:
        self._step = step
        _follow_model(self)
        self._optimizers, self._steps = _hooked_now(self._built(), self._optimizers, self._steps,
                                                    self._param_names, self._wants_copy,
                                                    self._adoptable)
        self._inputs, self._input_names, self._calls, self._streams = [], [], 0, {}
        keep = step in self.stream_states_at and self.tensor_dir is not None
        digests = self.stream_digests_at is None or step in self.stream_digests_at
        if keep or digests:
            states = stream_states(self._rngs)
            if digests:
                self._streams = stream_digests(states)
            if keep:
                self._files.keep(f"streams_{step}.pt", states, 0)
        # the loss scale this step's backward passes will use
        enabled = self._scaler is not None and self._scaler.is_enabled()
        self._scale = float(self._scaler.get_scale()) if enabled else None

    def after_step(
        self, step: int, out: StepOutput, keep_tensors: bool | Callable[[StepRecord], bool]
    ) -> StepRecord:
        """Record the step; write its full tensors to disk if ``keep_tensors``
        says so (a predicate sees the record, digests included, first)."""
        tensors: dict[str, torch.Tensor] = {}
        # (a loss returned as a Python float is a float64: kept so, not rounded to float32)
        loss = (out.loss.detach() if isinstance(out.loss, torch.Tensor)
                else torch.tensor(float(out.loss), dtype=torch.float64))
        tensors["loss"] = loss if loss.dim() == 0 else loss.reshape(())
        if out.samples is not None:
            tensors["data"] = torch.as_tensor(out.samples).detach()
        else:
            for i, t in enumerate(self._inputs):
                tensors[f"inputs:{i}"] = t
        exact = _exact(tensors)  # (before the parameters and gradients join them)
        lr = self._steps.lr()
        skipped = bool(self._optimizers) and lr is None  # (no optimizer stepped)
        copied = self._steps.copies()  # (the gradients judging may read)
        digests = {key: digest(t) for key, t in tensors.items()}
        # the scale and the rates: digested as the float64 tensors a kept step
        # holds (made only then: two tensors a step were a tenth of the tracing)
        scalars = {"scale": self._scale, "lr": lr}
        for name, number in scalars.items():
            if number is not None:
                digests[name] = float64_digest(number)
        for key, value in self._steps.digests().items():  # (digested at the pre-hook)
            digests[key] = value
            if key in copied:
                tensors[key] = copied[key]
        for prefix, model in self._models:
            for name, p in model.named_parameters():
                key = f"param:{prefix}{name}"
                tensors[key] = local_tensor(p.detach())  # this rank's shard
                digests[key] = digest(tensors[key])
        record = StepRecord(
            step=step, loss=float(tensors["loss"].item()), digests=digests, lr=lr,
            scale=self._scale, skipped=skipped, streams=self._streams,
            inputs={} if out.samples is not None else _input_words(self._input_names, self._calls),
            lr_of=self._steps.lr_of() if lr is not None else [], exact=exact,
            lr_call=self._steps.lr_call() if lr is not None else [],
            calls=0 if out.samples is not None else self._calls,
            grads_left=_grads_left(self._optimizers) if skipped else None,
        )
        self.last_data = [*self._inputs, *([tensors["data"]] if "data" in tensors else [])]
        self._inputs, self._input_names = [], []
        record.digests["skipped"] = str(skipped)
        self.records.append(record)
        keep = keep_tensors(record) if callable(keep_tensors) else keep_tensors
        if keep and self.tensor_dir is not None:
            for name, number in scalars.items():
                if number is not None:
                    tensors[name] = torch.tensor(number, dtype=torch.float64)
            self._keep(step, tensors, set(copied))
        elif self.keep_samples and "data" in tensors and self.tensor_dir is not None:
            data = tensors["data"].detach().to("cpu", copy=True)
            self._files.keep(f"samples_{step}.pt", {"data": data},
                             data.numel() * data.element_size())
        return record

    def _keep(self, step: int, tensors: dict[str, torch.Tensor], owned: set[str]) -> None:
        """Keep a step's full tensors (``owned``: copies already)."""
        size = sum(t.numel() * t.element_size() for t in tensors.values())
        if self._files.in_memory(size):  # (on the CPU, as in a file: no device memory held)
            tensors = {k: t.cpu() if k in owned
                       else local_tensor(t).detach().to("cpu", copy=True)
                       for k, t in tensors.items()}
        self._files.keep(f"step_{step}.pt", tensors, size)


class _OptimizerSteps:
    """What every optimizer step of one training step read: its learning rates
    and its gradients as the update uses them, caught by a step pre-hook on
    each optimizer the program declares, in the order they step (a GAN's
    discriminator twice, then its generator: a trial's scheduler of the first
    was lost and the learning rate never showed, only the last step's was
    kept). A parameter stepped again in one training step is keyed ``@2``, ...
    ``wants_copy(key, digest)``: whether to keep a copy of that gradient."""

    def __init__(self, optimizers: list[torch.optim.Optimizer], names: dict[int, str],
                 wants_copy: Callable[[str, str], bool],
                 optimizer_names: dict[int, str] | None = None,
                 adopt: Callable[[torch.optim.Optimizer], bool] | None = None) -> None:
        self._names, self._wants_copy = names, wants_copy
        self._optimizer_names = optimizer_names or {}
        self._several = len(set(self._optimizer_names.values())) > 1  # (whose rate: worth saying)
        self._handles = [hook for o in optimizers for hook in (
            o.register_step_pre_hook(self._on_step), o.register_step_post_hook(self._stepped))]
        # An optimizer made inside a step and stepped there (a phase's new one) is
        # hooked only from the next step on: until then, one that ``adopt`` takes
        # for the program's is followed through every optimizer's hook (trial 476:
        # the step that made it read "its optimizer did not step there")
        self._hooked = {id(o) for o in optimizers}
        self._adopt, self._adopted = adopt, set[int]()
        self._any = (register_optimizer_step_pre_hook(self._on_any_step)
                     if adopt is not None else None)
        self.reset()

    def _on_any_step(self, optimizer: torch.optim.Optimizer, args: Any, kwargs: Any) -> Any:
        if id(optimizer) in self._hooked:
            return None
        if id(optimizer) not in self._adopted:
            if self._open or self._adopt is None or not self._adopt(optimizer):
                return None  # (stepped inside a hooked one's step: that one records it)
            self._adopted.add(id(optimizer))
            self._handles.append(optimizer.register_step_post_hook(self._stepped))
        return self._on_step(optimizer, args, kwargs)

    def reset(self) -> None:
        # per optimizer in its step(): its call's place, and how deep (a
        # subclass's step() that calls its parent's runs the hooks twice: one call)
        self._open: dict[int, tuple[int, int]] = {}
        # (one per step() call, None until its gradients are recorded: a closure
        # that never runs records none, as a step a loss scaler skipped)
        self._calls: list[tuple[list[float], dict[str, str], dict[str, torch.Tensor]] | None] = []
        self._who: dict[int, str] = {}  # (each call's optimizer, by its component's name)

    def _done(self) -> list[tuple[list[float], dict[str, str], dict[str, torch.Tensor]]]:
        return [call for call in self._calls if call is not None]

    def digests(self) -> dict[str, str]:
        """Every gradient's digest, by its key (``grad:NAME``, ``grad:NAME@2``)."""
        return {k: v for _, digests, _ in self._done() for k, v in digests.items()}

    def copies(self) -> dict[str, torch.Tensor]:
        """The copies of the gradients the judging may read, by their keys."""
        return {k: v for _, _, copies in self._done() for k, v in copies.items()}

    @property
    def handles(self) -> list[Any]:
        """The hooks on the optimizers (``Tracer.hooks_hidden``)."""
        return list(self._handles)

    def close(self) -> None:
        for handle in (*self._handles, *([self._any] if self._any is not None else [])):
            handle.remove()
        self._handles, self._any = [], None

    def lr(self) -> list[float] | None:
        """Every step's learning rates, in order (None: no optimizer stepped)."""
        done = self._done()
        return [rate for rates, _, _ in done for rate in rates] if done else None

    def lr_of(self) -> list[str]:
        """Whose each of ``lr()``'s rates is (the optimizer's component name);
        empty where one optimizer is declared, or one that stepped is not a
        declared component. Of a step where one of several stepped, its name
        alone (trial 571: which of two Adams at one rate did not step)."""
        if not self._several:
            return []
        who = [(self._who.get(i, ""), len(call[0])) for i, call in enumerate(self._calls)
               if call is not None]
        names = [name for name, n in who for _ in range(n)]
        return names if all(names) else []

    def lr_call(self) -> list[int]:
        """Which step() of its optimizer each of ``lr()``'s rates was read at
        (``StepRecord.lr_call``; trial 184: a discriminator's two updates a
        step read as its "group 0" and "group 1", where it has one)."""
        calls: Counter[str] = Counter()
        out: list[int] = []
        for i, call in enumerate(self._calls):
            if call is not None:
                who = self._who.get(i, "")
                out += [calls[who]] * len(call[0])
                calls[who] += 1
        return out if any(out) else []

    def _on_step(self, optimizer: torch.optim.Optimizer, args: Any, kwargs: Any) -> Any:
        # The hook's args are step()'s own, the optimizer first: (optimizer,
        # closure) for step(closure)
        first = 1 if args and args[0] is optimizer else 0
        closure = kwargs.get("closure", args[first] if len(args) > first else None)
        call, depth = self._open.get(id(optimizer), (len(self._calls), 0))
        if depth == 0:
            self._calls.append(None)
        self._open[id(optimizer)] = (call, depth + 1)
        if callable(closure):
            # step(closure): the gradients exist only once step() has run the
            # closure (LBFGS, Lightning's automatic optimization): record them
            # after each call (the last one's, for an optimizer that calls it
            # again), never the previous step's left on the parameters
            def traced() -> Any:
                loss = closure()
                self._record(optimizer, call)
                return loss

            if "closure" in kwargs:
                return args, {**kwargs, "closure": traced}
            return (*args[:first], traced, *args[first + 1:]), kwargs
        self._record(optimizer, call)
        return None

    def _stepped(self, optimizer: torch.optim.Optimizer, args: Any, kwargs: Any) -> None:
        call, depth = self._open.pop(id(optimizer), (0, 1))
        if depth > 1:
            self._open[id(optimizer)] = (call, depth - 1)

    @_own("the optimizer's step pre-hook")
    def _record(self, optimizer: torch.optim.Optimizer, call: int) -> None:
        """The gradients as the update will use them: each one's digest, and a
        copy of those the judging may read. The rest are never read, so
        whatever the program does to them afterwards (zeroes them in place,
        an optimizer that changes them) cannot matter."""
        earlier = {key for done in self._calls[:call] if done is not None for key in done[1]}
        rates, digests, copies = [float(g["lr"]) for g in optimizer.param_groups], {}, {}
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    key = f"grad:{self._names.get(id(p), '?')}"
                    again = 2
                    while key in earlier or key in digests:
                        key = f"{key.split('@')[0]}@{again}"
                        again += 1
                    grad = local_tensor(p.grad.detach())
                    digests[key] = value = digest(grad)
                    if self._wants_copy(key, value):
                        copies[key] = grad.clone()
        self._calls[call] = (rates, digests, copies)
        self._who[call] = self._optimizer_names.get(id(optimizer), "")


def _optimizer_names(built: BuiltProgram) -> dict[int, str]:
    """Each declared torch optimizer (under its wrappers), by id: its component's name."""
    out: dict[int, str] = {}
    for name, optimizer in _declared_optimizers(built):
        out.setdefault(id(optimizer), name)
    return out


def _declared_optimizers(built: BuiltProgram) -> Iterator[tuple[str, torch.optim.Optimizer]]:
    """The declared components that are torch optimizers, under their wrappers
    (torch optimizers only: no framework's live proxy is asked)."""
    for comp in built.components:
        optimizer = (unwrap_optimizer(comp.obj) if isinstance(comp.obj, torch.optim.Optimizer)
                     else None)
        if optimizer is not None:
            yield comp.name, optimizer


def _follow_model(tracer: Tracer) -> None:
    """Trace the model the program holds now, where it made a new one since
    (a fold's, through a ``model`` attribute): its inputs and its parameters'
    names, as ``_hooked_now`` follows the optimizer (a trial's correct k-fold
    trainer, given a `model` property as the report advised, was failed: the
    uninterrupted run traced the first fold's model throughout, the restart
    the fold it resumed in, "gradient of ?")."""
    built = tracer._built()
    now = None if built is None else _find(built, PARAMS, torch.nn.Module, "model")
    if built is None or now is None or now is tracer._model:
        return
    if tracer._input_handle is not None:
        tracer._input_handle.remove()
    tracer._model, tracer._models = now, _traced_models(built, now)
    _hook_model(tracer, now)
    tracer._steps.close()  # (its parameters' names are the new model's)
    tracer._optimizers = _optimizers(built, _find(built, OPTIMIZER, object, "optimizer"))
    tracer._steps = _OptimizerSteps(tracer._optimizers, tracer._param_names(),
                                    tracer._wants_copy, _optimizer_names(built),
                                    tracer._adoptable)


def _hook_model(tracer: Tracer, model: torch.nn.Module) -> None:
    """The forward pre-hook that records ``model``'s inputs, and its forward's
    argument names, worked out here: the hook reads them from a plain dict.
    Inside a model torch.compile traces, the hook is traced too, and a call to
    a cached function there made torch warn about silent incorrectness in
    resumecheck's own code (trial 145)."""
    if isinstance(model, torch.jit.ScriptModule):  # (takes no Python hooks: trial 484)
        tracer._labels, tracer._input_handle = {}, None
        return
    model_type: Any = type(model)
    tracer._labels = {n: _forward_labels(model_type, n) for n in range(9)}
    tracer._input_handle = model.register_forward_pre_hook(tracer._on_forward, with_kwargs=True)


def model_unhooked(tracer: Tracer) -> str | None:
    """Why the model's inputs could not be traced, where its kind takes no
    hooks (None: they could, or there is no model)."""
    if isinstance(tracer._model, torch.jit.ScriptModule):
        return "a TorchScript module (torch.jit.script), which takes no Python hooks"
    return None


def _adoptable(built: Callable[[], BuiltProgram | None],
               hooked: Callable[[], list[torch.optim.Optimizer]]
               ) -> Callable[[torch.optim.Optimizer], bool]:
    """Whether an optimizer no hook follows, stepping, is the one the
    program's ``optimizer`` attribute holds now (made during this step), or
    one that a hooked optimizer holds as an attribute and steps in its stead
    (trial 478: a SAM optimizer's ``base_optimizer``, stepped by its own
    ``second_step()``; the SAM itself never stepped, and the report said that
    no optimizer was found)."""
    def adopt(optimizer: torch.optim.Optimizer) -> bool:
        program = built()
        if program is not None and \
                unwrap_optimizer(getattr(program.program, "optimizer", None)) is optimizer:
            return True
        return any(value is optimizer for o in hooked() for value in vars(o).values())
    return adopt


def _hooked_now(built: BuiltProgram | None, optimizers: list[torch.optim.Optimizer],
                steps: _OptimizerSteps, names: Callable[[], dict[int, str]],
                wants_copy: Callable[[str, str], bool],
                adopt: Callable[[torch.optim.Optimizer], bool] | None = None
                ) -> tuple[list[torch.optim.Optimizer], _OptimizerSteps]:
    """The optimizers a step is traced through, its records reset: those hooked
    so far, unless the program's ``optimizer`` attribute now holds one they do
    not include, made anew since (trial 216: an optimizer made again as the
    embedding grew left the first one hooked, which no longer stepped; every
    later step of the uninterrupted run read "no gradient", the restart's,
    hooked after its load, did, and a correct resume failed)."""
    now = None if built is None else unwrap_optimizer(getattr(built.program, "optimizer", None))
    if built is None or now is None or any(now is o for o in optimizers):
        steps.reset()
        return optimizers, steps
    steps.close()
    found = _optimizers(built, _find(built, OPTIMIZER, object, "optimizer"))
    if all(now is not o for o in found):  # (a declared optimizer the program replaced)
        found.insert(0, now)
    return found, _OptimizerSteps(found, names(), wants_copy, _optimizer_names(built), adopt)


def _optimizers(built: BuiltProgram, declared: Any) -> list[torch.optim.Optimizer]:
    """The torch optimizers the steps are traced through: the ``optimizer``
    component's (or the program's ``optimizer`` attribute's) first, then every
    other declared component that is one (a GAN's two), under its wrappers."""
    first = unwrap_optimizer(declared)
    if first is None:  # a component that wraps it: the program's attribute
        first = unwrap_optimizer(getattr(built.program, "optimizer", None))
    out = [first] if first is not None else []
    for _, optimizer in _declared_optimizers(built):
        if all(optimizer is not o for o in out):
            out.append(optimizer)
    for optimizer in out:
        if not hasattr(optimizer, "_optimizer_step_pre_hooks"):
            raise _unhooked(built, optimizer)
    return out


def _unhooked(built: BuiltProgram, optimizer: torch.optim.Optimizer) -> TargetError:
    """An optimizer of a class of the program's own that subclasses torch's
    Optimizer without calling its ``__init__`` (trial 860: a Lookahead read
    "a fault of resumecheck ... report it", with nothing to do about it)."""
    kind = type(optimizer).__name__
    return TargetError(
        built.target_name,
        f"its optimizer ({kind}) subclasses torch.optim.Optimizer but its __init__ does not "
        "call Optimizer.__init__, so it lacks the step hooks that __init__ sets up, through "
        "which the check reads each step's learning rate and gradients (torch's own hooks "
        "and profiler need them too)",
        f"Call super().__init__(params, defaults) in {kind}.__init__ (a wrapper passes the "
        "inner optimizer's param_groups and defaults, as timm's Lookahead does), or give it "
        "no Optimizer base class and declare it as a component whose state_dict() and "
        "load_state_dict() pass its state through")


class _StepFiles:
    """Where a tracer keeps its steps' files: in memory (``kept``: file name ->
    what it holds; a run that this process judges) while they add up to
    ``KEPT_IN_MEMORY`` bytes, else in ``tensor_dir`` (made with its first file)."""

    def __init__(self, tensor_dir: Path | None, kept: dict[str, Any] | None) -> None:
        self.tensor_dir, self.kept, self.bytes = tensor_dir, kept, 0

    def in_memory(self, size: int) -> bool:
        return self.kept is not None and self.bytes + size <= KEPT_IN_MEMORY

    def keep(self, name: str, value: Any, size: int) -> None:
        """Keep one file (in memory, ``value`` holds copies already)."""
        if self.kept is not None and self.in_memory(size):  # (kept: for mypy)
            self.kept[name] = value
            self.bytes += size
            return
        assert self.tensor_dir is not None
        self.tensor_dir.mkdir(parents=True, exist_ok=True)
        if name.startswith("step_"):
            save_step_tensors(value, self.tensor_dir / name)
        else:
            save_step_file(value, self.tensor_dir / name)


def differing_quantities(reference: StepRecord, run: StepRecord) -> list[str]:
    """The quantities whose digests differ, in the order a step produces them."""
    if reference.digests == run.digests:  # (most steps judged: one comparison in C)
        return []
    keys = set(reference.digests) | set(run.digests)
    # A skipped step's optimizer read no learning rate: one side without it is
    # the skip (named as such), not a learning rate that differs.
    def no_lr(r: StepRecord) -> bool:
        return r.skipped and not any(split_rank_name(k)[0] == "lr" for k in r.digests)

    unread = ({k for k in keys if split_rank_name(k)[0] == "lr"}
              if no_lr(reference) or no_lr(run) else set())
    return sorted(
        (k for k in keys - unread if reference.digests.get(k) != run.digests.get(k)),
        key=_order_key,
    )


def first_difference(first: list[StepRecord], second: list[StepRecord]) -> tuple[int, str] | None:
    """The first step, and the first quantity there, where two traces differ."""
    for a, b in zip(first, second):
        keys = differing_quantities(a, b)
        if keys:
            return a.step, keys[0]
    if len(first) != len(second):
        return min(len(first), len(second)) + 1, "number of steps"
    return None


def _order_key(key: str) -> tuple[int, str]:
    head = key.split(":", 1)[0].split("[rank ", 1)[0]  # loss[rank 1]: a rank's loss
    return (QUANTITY_ORDER.index(head) if head in QUANTITY_ORDER else len(QUANTITY_ORDER), key)


def unwrap_optimizer(obj: Any) -> torch.optim.Optimizer | None:
    """The torch optimizer that really steps, under any framework wrappers.

    Accelerate's ``AcceleratedOptimizer`` subclasses ``torch.optim.Optimizer``
    without running its constructor: hooks registered on it never fire (and
    registering fails). The real optimizer is its ``.optimizer`` (Lightning's
    ``LightningOptimizer`` keeps it in ``._optimizer``).
    """
    for _ in range(8):  # wrappers of wrappers, never a cycle
        inner = getattr(obj, "optimizer", None)
        if inner is None:
            inner = getattr(obj, "_optimizer", None)
        if not isinstance(inner, torch.optim.Optimizer) or inner is obj:
            break
        obj = inner
    return obj if isinstance(obj, torch.optim.Optimizer) else None


def _traced_models(built: BuiltProgram,
                   model: torch.nn.Module | None) -> list[tuple[str, torch.nn.Module]]:
    """The modules whose parameters every step digests, each with its keys'
    prefix: the model (none), then each other declared module, by its
    component's name (a GAN's discriminator: ``param:discriminator.0.weight``;
    compared only at the end, it was found a step late, by the loss)."""
    out = [("", model)] if model is not None else []
    seen = {id(model)}
    for c in built.components:
        if isinstance(c.obj, torch.nn.Module) and id(c.obj) not in seen:
            seen.add(id(c.obj))
            out.append((f"{c.name}.", c.obj))
    if len(out) > 1 and model is not None:
        # beside other modules the model's names are prefixed too (a trial: a
        # GAN's generator and discriminator both have a `0.bias`, and
        # `parameter 0.bias` did not say which)
        own = next((c.name for c in built.components if c.obj is model), None)
        if own is not None:
            out[0] = (f"{own}.", model)
    return out


def _find(built: BuiltProgram, name: str, kind: type, attr: str) -> Any:
    comp = built.component(name)
    if comp is not None and isinstance(comp.obj, kind):
        return comp.obj
    obj = getattr(built.program, attr, None)
    return obj if isinstance(obj, kind) else None


def _positional_names(module: torch.nn.Module, n: int) -> list[str]:
    """The names of a forward's first ``n`` positional arguments, as its
    signature gives them (`idx`; a trial read "input 1" of a forward that
    takes one), else ``input i``."""
    return list(_forward_labels(type(module), n))  # type: ignore[arg-type]


@functools.lru_cache(maxsize=256)
def _forward_labels(cls: type, n: int) -> tuple[str, ...]:
    """``_positional_names`` of a module class (once per class and count: the
    hook runs at every forward)."""
    try:
        params = list(inspect.signature(cls.forward).parameters.values())  # type: ignore
    except Exception:  # (a forward without a signature: a builtin; one that raises)
        params = []
    names = [p.name for p in params[1:]
             if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return tuple(f"`{names[i]}`" if i < len(names) else f"input {i + 1}" for i in range(n))


def _named_tensors(args: tuple[Any, ...], kwargs: dict[str, Any],
                   positional: Sequence[str] = ()) -> list[tuple[str, torch.Tensor]]:
    """The tensors of one forward call, each named as the caller passed it
    (`attention_mask`; positional ones by the forward's own names, ``positional``,
    else input 1; `input_ids` at `['input_ids']`), in argument order, a dict's
    keys sorted."""
    named: list[tuple[str, torch.Tensor]] = []

    def walk(value: Any, name: str, keyword: bool, path: str) -> None:
        if isinstance(value, torch.Tensor):
            named.append((f"`{name}{path}`" if keyword else
                          f"{name} at `{path}`" if path else name, value))
        elif isinstance(value, dict):
            for key in sorted(value, key=str):
                walk(value[key], name, keyword, f"{path}[{key!r}]")
        elif isinstance(value, (list, tuple)):
            for i, item in enumerate(value):
                walk(item, name, keyword, f"{path}[{i}]")

    for i, arg in enumerate(args):
        walk(arg, positional[i] if i < len(positional) else f"input {i + 1}", False, "")
    for key in sorted(kwargs, key=str):
        walk(kwargs[key], key, True, "")
    return named


def _input_words(names: list[tuple[int, str]], calls: int) -> dict[str, str]:
    """Each ``inputs:`` key's argument in words, with its call where the step
    called the model more than once (micro-batches); none for one input."""
    if len(names) <= 1:
        return {}
    return {f"inputs:{i}": name if calls <= 1 else f"{name} in its {ordinal(call)} call of {calls}"
            for i, (call, name) in enumerate(names)}


KEPT_IN_MEMORY = 96 << 20
"""Bytes of kept steps one traced segment holds in memory (``Tracer.kept``)
before it writes the rest to files."""


def load_stream_states(tensor_dir: Path, step: int,
                       kept: Mapping[str, Any] | None = None) -> dict[str, Any] | None:
    """The full stream states saved at the start of ``step`` (None: not saved);
    ``kept``: the segment's files kept in memory (see ``Tracer.kept``)."""
    return _kept_or_file(tensor_dir, f"streams_{step}.pt", kept)  # type: ignore[no-any-return]


def load_step_tensors(tensor_dir: Path, step: int,
                      kept: Mapping[str, Any] | None = None) -> dict[str, torch.Tensor] | None:
    """The full tensors kept for ``step`` (None: not kept); ``kept``: the
    segment's files kept in memory (see ``Tracer.kept``)."""
    return _kept_or_file(tensor_dir, f"step_{step}.pt", kept)  # type: ignore[no-any-return]


def load_step_samples(tensor_dir: Path, step: int) -> dict[str, torch.Tensor] | None:
    """The samples kept for ``step``: from its full tensors, or, where those
    were not kept, from its samples file (``Tracer.keep_samples``)."""
    return load_step_tensors(tensor_dir, step) or _kept_or_file(  # type: ignore[no-any-return]
        tensor_dir, f"samples_{step}.pt", None)


def _kept_or_file(tensor_dir: Path, name: str, kept: Mapping[str, Any] | None) -> Any:
    """A step file's contents: from memory when the segment kept it there (the
    kept value itself: callers only read it), else from ``tensor_dir``."""
    if kept and name in kept:
        return kept[name]
    return load_step_file(tensor_dir / name)


def load_step_file(path: Path) -> Any:
    """What one of the engine's step files holds (None: no such file)."""
    if not path.exists():
        return None
    with open(path, "rb") as f:
        if f.read(len(_STEP_MAGIC)) == _STEP_MAGIC:
            return _read_flat(f)
    return torch.load(path, weights_only=True)


# The engine's own step files: every traced tensor of a step (or the stream
# states at its start), flat. Not a pickle: a JSON header (the structure,
# and per tensor its dtype, shape, offset and length) and the tensors' raw
# bytes, read back as views of one buffer. Reading one costs microseconds per
# tensor where torch.load(weights_only=True) runs its safe unpickler in
# Python; nothing in the file can run code. A value the format does not hold
# is torch.save'd; the reader tells the two apart by this magic.
_STEP_MAGIC = b"resumecheck.steps/1\n"
_ALIGN = 64  # every tensor's bytes start at a multiple of this (any dtype's alignment)


class _NotFlat(Exception):
    """A value the flat format does not hold (the file is torch.save'd instead)."""


def save_step_tensors(tensors: dict[str, torch.Tensor], path: Path) -> None:
    """Write a step's tensors (copies: the file never aliases live state)."""
    save_step_file({k: local_tensor(v).detach().cpu() for k, v in tensors.items()}, path)


def save_step_file(value: Any, path: Path) -> None:
    """Write plain data (dicts with string keys, lists, numbers, strings,
    None, dense CPU tensors) flat; anything else with torch.save."""
    chunks: list[torch.Tensor] = []
    try:
        tree = _encode(value, chunks)
    except _NotFlat:
        torch.save(_compact(value), path)
        return
    index: list[dict[str, Any]] = []
    raws, offsets, offset = [], [], 0
    for t in chunks:
        raw = t.contiguous().reshape(-1).view(torch.uint8)
        index.append({"dtype": str(t.dtype).removeprefix("torch."), "shape": list(t.shape),
                      "offset": offset, "nbytes": raw.numel()})
        raws.append(raw)
        offsets.append(offset)
        offset += -(-raw.numel() // _ALIGN) * _ALIGN
    head = json.dumps({"tensors": index, "tree": tree}).encode()
    start = -(-(len(_STEP_MAGIC) + 8 + len(head)) // _ALIGN) * _ALIGN
    with open(path, "wb") as f:
        f.write(_STEP_MAGIC)
        f.write(len(head).to_bytes(8, "little"))
        f.write(head)
        for at, raw in zip(offsets, raws):
            f.seek(start + at)
            f.write(raw.numpy().data)
        f.truncate(start + offset)


def _compact(value: Any) -> Any:
    """Tensors copied (torch.save writes a view's whole storage), containers rebuilt."""
    if isinstance(value, torch.Tensor):
        return value.clone()
    if isinstance(value, dict):
        return {k: _compact(v) for k, v in value.items()}
    return value


def _encode(value: Any, chunks: list[torch.Tensor]) -> Any:
    kind = type(value)
    if kind is torch.Tensor:
        if not _flat_ok(value):
            raise _NotFlat
        chunks.append(value)
        return {"T": len(chunks) - 1}
    if kind is dict:
        if not all(type(k) is str for k in value):
            raise _NotFlat
        return {"D": {k: _encode(v, chunks) for k, v in value.items()}}
    if kind is list:
        return {"L": [_encode(v, chunks) for v in value]}
    if value is None or kind in (bool, int, float, str):
        return value
    raise _NotFlat


def _decode(tree: Any, tensors: list[torch.Tensor]) -> Any:
    if isinstance(tree, dict):
        if "T" in tree:
            return tensors[tree["T"]]
        if "D" in tree:
            return {k: _decode(v, tensors) for k, v in tree["D"].items()}
        return [_decode(v, tensors) for v in tree["L"]]
    return tree


def _read_flat(f: Any) -> Any:
    size = int.from_bytes(f.read(8), "little")
    head = json.loads(f.read(size))
    start = -(-(len(_STEP_MAGIC) + 8 + size) // _ALIGN) * _ALIGN
    tensors = []
    for e in head["tensors"]:
        dtype = getattr(torch, e["dtype"])
        if not isinstance(dtype, torch.dtype):
            raise ValueError(f"{f.name}: unknown dtype {e['dtype']!r}")
        # each tensor in a storage of its own, read straight into it: some
        # consumers read a storage from its start (Generator.set_state)
        t = torch.empty(e["shape"], dtype=dtype)
        if e["nbytes"]:
            f.seek(start + e["offset"])
            if f.readinto(t.reshape(-1).view(torch.uint8).numpy().data) != e["nbytes"]:
                raise EOFError(f"{f.name}: truncated step file")
        tensors.append(t)
    return _decode(head["tree"], tensors)


def _flat_ok(t: torch.Tensor) -> bool:
    """A tensor whose raw bytes say all of it: dense, on the CPU, not quantized."""
    return (type(t) is torch.Tensor and t.layout == torch.strided and not t.is_quantized
            and t.device.type == "cpu" and not t.is_conj() and not t.is_neg())


def hooks_hidden(tracer: Tracer | None) -> contextlib.AbstractContextManager[None]:
    """The check's hooks off the model and the optimizers while the program
    saves, each put back in its place after: a save that pickles the whole
    object (``torch.save(model)``, as notebooks do) must neither fail on them
    nor carry them into the checkpoint (a trial's correct save raised "cannot
    pickle 'weakref.ReferenceType' object", blamed on its line). None: no
    tracer yet, nothing to hide."""
    if tracer is None:
        return contextlib.nullcontext()
    return _hidden([h for h in (tracer._input_handle, *tracer._steps.handles) if h is not None])


@contextlib.contextmanager
def _hidden(handles: Sequence[Any]) -> Iterator[None]:
    """Each hook of ``handles`` out of the dicts that hold it (torch's
    ``RemovableHandle``: its hooks dict and the extra ones, a forward pre-hook's
    with-kwargs flag), and back after, at its place in their order."""
    taken: list[tuple[Any, Any, list[Any], Any]] = []
    for handle in handles:
        refs = [getattr(handle, "hooks_dict_ref", None), *getattr(handle, "extra_dict_ref", ())]
        for ref in refs:
            held = ref() if callable(ref) else None
            if isinstance(held, dict) and handle.id in held:
                taken.append((held, handle.id, list(held), held.pop(handle.id)))
    try:
        yield
    finally:
        for held, key, order, value in reversed(taken):
            held[key] = value
            if hasattr(held, "move_to_end"):  # (an OrderedDict: the hooks run in its order)
                for later in order[order.index(key) + 1:] + [k for k in held if k not in order]:
                    if later in held:
                        held.move_to_end(later)
