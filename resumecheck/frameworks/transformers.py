"""The HuggingFace ``Trainer``: a target from a function that returns a
``Trainer``, resumed with ``trainer.train(resume_from_checkpoint=...)``::

    from resumecheck.frameworks import trainer_target

    TARGET = trainer_target(
        lambda args: Trainer(model=GPT2LMHeadModel(CONFIG), args=args, train_dataset=DATA),
        args={"per_device_train_batch_size": 4, "learning_rate": 1e-3}, steps=12)

The adapter builds the ``TrainingArguments`` (``args`` overrides its
defaults: a private output directory, ``max_steps`` = the check's steps,
``seed`` = the run's seed, CPU, no automatic saves, no reports; the run's
logging as its arguments say, its log lines not printed) and seeds with
``transformers.set_seed`` before calling the function, so the model is
initialized as ``model_init`` would.

The checkpoint under audit is the Trainer's own: a step ends once its
``_maybe_log_save_evaluate`` has run (its logging, evaluation and the run's
own saves, after ``on_step_end`` and the scheduler's update); at a step the
engine asks for, the adapter calls the Trainer's save routine, which writes
``checkpoint-N/`` (model, ``optimizer.pt``, ``scheduler.pt``,
``rng_state.pth``, ``trainer_state.json``), and the callbacks' ``on_save``,
as the Trainer does, and moves the folder to the engine's path. The
restart resumes with ``train(resume_from_checkpoint=path)``.
Components: ``params`` (the model), ``optimizer``, ``scheduler``,
``global_step`` (``TrainerState``'s ``global_step`` and ``epoch``: the
Trainer derives the data position, the batches to skip, from them) and
``rng`` (the global streams). ``global_step`` can be restored into a
running loop only through the Trainer's checkpoint: ``train()`` computes
the epochs and batches to skip once, before its first step.

transformers is imported only when a target is built.
"""

from __future__ import annotations

import contextlib
import copy
import inspect
import logging
import os
import re
import shutil
import tempfile
import types
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import torch

from resumecheck.components import GLOBAL_STEP, OPTIMIZER, PARAMS, RNG, SCHEDULER, RNGState
from resumecheck.errors import InvalidArgument, TargetError
from resumecheck.frameworks import require
from resumecheck.frameworks._loop import (
    CALLBACKS, LiveState, LoopProgram, LoopRecord, fields_beside, run_pending,
    user_callbacks, user_dataset, user_object,
)
from resumecheck.phrases import AFTER_LAST_STEP, STREAMS_NOT_KEPT
from resumecheck.program import Target
from resumecheck.segments import scratch_dir

__all__ = ["TrainerProgram", "trainer_target"]


def trainer_target(
    make_trainer: Callable[[Any], Any],
    *,
    args: Mapping[str, Any] | None = None,
    steps: int = 12,
    resume_at: Sequence[int] = (),
    seed: int = 0,
    not_state: Sequence[str] = (),
    steps_per_epoch: float | None = None,
    args_class: type | None = None,
    epoch_boundaries: Sequence[int] | None = None,
) -> Target:
    """A resumecheck target for ``make_trainer(training_arguments) -> Trainer``.

    ``args`` holds ``TrainingArguments`` keyword arguments (they override the
    adapter's defaults). The model's inputs are compared by content. A restart
    is built from the same settings, as a relaunched script would be.
    ``not_state``: as ``Target``'s, paths of what the run keeps that is not
    state (a logging callback's counter), as the report's lines name them.
    ``steps_per_epoch``: optimizer steps per epoch, where the Trainer does not
    make its loader itself (a subclass's ``get_train_dataloader``: a trial's
    bucketing sampler) and so cannot be read; else read from its dataset.
    ``epoch_boundaries``: the steps after which an epoch ends, where the
    data says none (``[]``: an endless stream has no epochs; trial 547 was told
    to say so, which only a program of its own could).
    ``args_class``: the arguments' class, where the Trainer needs more than
    ``TrainingArguments`` (``Seq2SeqTrainingArguments`` for a
    ``Seq2SeqTrainer``, or a subclass of your own); default ``TrainingArguments``.
    """
    if not callable(make_trainer):
        raise InvalidArgument("make_trainer", make_trainer,
                              "expected a function of the TrainingArguments returning a Trainer")
    overrides = dict(args or {})
    # (a seed in the arguments is the run's: the report names it and the noise
    # runs vary it; a trial's args seed=17 was reported as 0, and no noise band)
    seed = int(overrides.pop("seed", seed))

    _check_options(steps_per_epoch, epoch_boundaries, args_class)

    def build(config: dict[str, Any]) -> TrainerProgram:
        program = TrainerProgram(make_trainer, args=overrides, args_class=args_class,
                                 seed=int(config.get("seed", seed)), max_steps=steps)
        program.declared_steps_per_epoch = steps_per_epoch
        if epoch_boundaries is not None:
            program.epoch_boundaries = list(epoch_boundaries)
        return program

    return Target(factory=build, run_config={"seed": seed}, restart_config="run",
                  steps=steps, resume_at=tuple(resume_at), preload=("transformers.trainer",),
                  not_state=not_state)


def _check_options(steps_per_epoch: Any, epoch_boundaries: Any, args_class: Any) -> None:
    """``trainer_target``'s optional arguments, each what it must be."""
    if steps_per_epoch is not None and not (isinstance(steps_per_epoch, (int, float))
                                            and steps_per_epoch > 0):
        raise InvalidArgument("steps_per_epoch", steps_per_epoch, "expected a number > 0")
    if epoch_boundaries is not None and not (
            isinstance(epoch_boundaries, (list, tuple)) and all(
                isinstance(e, int) and not isinstance(e, bool) and e > 0
                for e in epoch_boundaries)):
        raise InvalidArgument("epoch_boundaries", epoch_boundaries,
                              "expected a list of steps > 0 ([] where the data has no epochs)")
    if args_class is not None and not isinstance(args_class, type):
        raise InvalidArgument("args_class", args_class,
                              "expected a class such as transformers.Seq2SeqTrainingArguments")


def _make(make_trainer: Callable[[Any], Any], args_class: type,
          options: dict[str, Any]) -> Any:
    """``make_trainer`` of the arguments built from ``options``; where it reads a
    field those arguments lack, the class to give (trial 528: a
    ``Seq2SeqTrainer`` read ``generation_config`` of a plain
    ``TrainingArguments``, and the error said to fix a factory that was right)."""
    arguments = args_class(**options)
    try:
        return make_trainer(arguments)
    except AttributeError as exc:
        lacks = f"'{args_class.__name__}' object has no attribute"
        if lacks not in str(exc):
            raise
        raise TargetError(
            "trainer_target", f"your make_trainer (or the Trainer it builds) read a field the "
            f"adapter's arguments lack: {exc} (the adapter builds a {args_class.__name__} from "
            "args and gives it to make_trainer)",
            "Give trainer_target the arguments' class your Trainer needs, args_class="
            "transformers.Seq2SeqTrainingArguments for a Seq2SeqTrainer (or a subclass of "
            "your own)") from exc


class TrainerProgram(LoopProgram):
    """``Trainer.train`` driven one optimizer step at a time (see the module's docstring)."""

    framework = "the HuggingFace Trainer"
    seeded_by = "the adapter (transformers.set_seed(seed) before it calls your make_trainer)"
    """(a report's words: the baseline's seeding check passes through it; trial 221's
    script built its model before its Trainer seeded, unseeded)"""
    run_before_restored_look = ("data_collator", "train_dataset")
    """A resumed Trainer is parked, mid-epoch, once it has fetched the first
    resumed batch (``_park_after_rng_restore``): its collator and dataset have
    run on it, so what they hold then is not what the restore left (a trial's
    collator generator, which its checkpoint kept, was said to be lost)."""

    def __init__(self, make_trainer: Callable[[Any], Any], *, args: Mapping[str, Any],
                 seed: int, max_steps: int, args_class: type | None = None) -> None:
        super().__init__()
        tf = require("transformers", "resumecheck.frameworks.transformers")
        self._root = tempfile.TemporaryDirectory(prefix="resumecheck-trainer-", dir=scratch_dir())
        # (the run's own logging stays as its arguments have it: a trial's callback,
        # which counted logs, was never called where the adapter turned logging off)
        options: dict[str, Any] = {
            "output_dir": self._root.name, "max_steps": max_steps, "seed": seed,
            "save_strategy": "no", "report_to": "none",
            "disable_tqdm": True, "use_cpu": True, "dataloader_num_workers": 0,
        }
        options.update(args)
        tf.set_seed(int(options["seed"]))
        self.trainer = _make(make_trainer, args_class or tf.TrainingArguments, options)
        if not isinstance(self.trainer, tf.Trainer):
            raise InvalidArgument("make_trainer", make_trainer,
                                  f"it returned a {type(self.trainer).__name__}, not a Trainer")
        # (trial 400: a run's own disable_tqdm=True, which scripts often set, brought in
        # the Trainer's printer of logs: 172 lines a check; only bars asked for stay)
        self._quiet = bool(args.get("disable_tqdm", True))
        if self._quiet:
            _quiet_printer(self.trainer)
        self._driver = _Driver(self._channel, self.pending)
        self.trainer.add_callback(self._driver)
        _drive(self.trainer, self._driver)
        self.kept_before_hooks = self._driver.kept  # (_keep_before_epoch_begin)
        self.saved_where = _own_checkpoint_code(self.trainer, tf.Trainer)
        self.model = self.trainer.model
        self._engine_folder: str | None = None

    def live(self) -> None:
        """Start the loop; after the engine restored its own capture, through
        a checkpoint folder of the Trainer's format holding the model and
        that ``TrainerState`` (the optimizer and scheduler are loaded into the
        live objects before the first step)."""
        if not self._started:
            # your callbacks' states: set before train(), whichever checkpoint it resumes
            # from (the Trainer's own restore of them, where the run asks for it, comes
            # later and replaces them; where it does not, what is set here stands)
            run_pending(self.pending, "before_train")
        if not self._started and "checkpoint" in self.pending:
            run_pending(self.pending, "checkpoint")
            folder = os.path.join(self._root.name, "engine-restore")
            with _bars_off(self._quiet):
                self.trainer.save_model(folder)
            state, args = self.trainer.state, self.trainer.args
            state.train_batch_size = args.per_device_train_batch_size * max(1, args.n_gpu)
            # the callbacks' states as the engine restored them (the Trainer's own restore,
            # where the run asks for it, builds its callbacks again from these)
            state.stateful_callbacks.update(_callback_states(_exportable(self.trainer)))
            # the run's own cadences, as the Trainer's checkpoints hold them (else its resume
            # warns that the check's folder disagrees with the run's settings: a trial)
            for name in ("logging_steps", "eval_steps", "save_steps"):
                value = getattr(args, name, None)
                if isinstance(value, int) and value >= 1 and hasattr(state, name):
                    setattr(state, name, value)
            state.save_to_json(os.path.join(folder, "trainer_state.json"))
            self._resume_from = self._engine_folder = folder
        super().live()

    def _runner(self) -> Callable[[str | None], None]:
        trainer, driver, quiet = self.trainer, self._driver, self._quiet

        def run(resume_from: str | None) -> None:
            driver.resuming = resume_from is not None
            with _bars_off(quiet), _best_folder_unsaid():
                trainer.train(resume_from_checkpoint=resume_from)

        return run

    def _save(self, path: str) -> Any:
        """The Trainer's own save routine where the loop is parked (after a step's
        logging, evaluation and saves, or right after the restore): it writes
        ``checkpoint-N/`` and calls the callbacks' ``on_save``, as its
        ``_maybe_log_save_evaluate`` does; the folder goes to ``path``."""
        trainer = self.trainer
        trainer._save_checkpoint(trainer.model_wrapped, trial=None)
        trainer.control = trainer.callback_handler.on_save(trainer.args, trainer.state,
                                                           trainer.control)
        _move_checkpoint(trainer.args.output_dir, trainer.state.global_step, path)
        return None

    @property
    def data_not_skipped(self) -> str | None:
        """Where the Trainer's resume does not skip the batches its epoch has
        consumed, the setting that says so (``BuiltProgram.boundaries``)."""
        return "ignore_data_skip=True" if getattr(self.trainer.args, "ignore_data_skip",
                                                  False) is True else None

    @property
    def after_last_step(self) -> str | None:
        """What train() does after its last step, which a check does not run
        (``BuiltProgram.boundaries``; trial 376's best model, loaded at the end)."""
        return _BEST_AT_END if getattr(self.trainer.args, "load_best_model_at_end", False) \
            is True else None

    @property
    def data_lengthless(self) -> str | None:
        """The training dataset, where it has no length (``BuiltProgram.boundaries``)."""
        return _lengthless(getattr(self.trainer, "train_dataset", None))

    @property
    def order_before_restore(self) -> str | None:
        """The Trainer's sampler, where it shuffles each epoch from torch's
        global stream as the epoch's iterator is made (``group_by_length``:
        a ``LengthGroupedSampler`` with no generator of its own): a Trainer
        resumed inside an epoch makes that iterator before it restores the
        streams, so an epoch after the first is drawn in another order (trial
        229: the report blamed the collator's generator, which the other
        samples moved). None: the Trainer's own sampler does not."""
        tf = require("transformers", "resumecheck.frameworks.transformers")
        args = self.trainer.args
        grouped = (getattr(args, "train_sampling_strategy", None) == "group_by_length"
                   or getattr(args, "group_by_length", False) is True)
        own = type(self.trainer)._get_train_sampler is tf.Trainer._get_train_sampler
        return ("the Trainer's LengthGroupedSampler (group_by_length)"
                if grouped and own else None)

    @property
    def draws_before_restore(self) -> list[str]:
        """The global streams the Trainer's fetch of a step's batches drew from
        (a data collator or dataset that draws): a resumed Trainer fetches its
        first step's batches before it restores its streams, so that fetch
        draws from them as the restart left them (``BuiltProgram.boundaries``)."""
        return sorted(self._driver.fetch_draws)

    @property
    def epochs_unread(self) -> str | None:
        """Why the Trainer's epochs were not read (``_epochs_unread``)."""
        known = self.steps_per_epoch is not None or self.epoch_boundaries is not None
        return None if known else _epochs_unread(self.trainer)

    declared_steps_per_epoch: float | None = None
    """``trainer_target(steps_per_epoch=...)`` (None: read from the Trainer)."""
    epoch_boundaries: list[int] | None = None
    """``trainer_target(epoch_boundaries=...)`` (None: not said)."""

    @property
    def steps_per_epoch(self) -> float | None:
        """The declared steps per epoch, else the Trainer's (``_steps_per_epoch``)."""
        if self.declared_steps_per_epoch is not None:
            return self.declared_steps_per_epoch
        return _steps_per_epoch(self.trainer)

    def components(self) -> dict[str, Any]:
        trainer = self.trainer
        components = {
            PARAMS: self.model,
            OPTIMIZER: LiveState(self, lambda: trainer.optimizer, name=OPTIMIZER),
            SCHEDULER: LiveState(self, lambda: trainer.lr_scheduler, name=SCHEDULER),
            GLOBAL_STEP: LiveState(self, lambda: trainer.state, dump=_progress, load=_set_progress,
                                   stage="checkpoint", name=GLOBAL_STEP),
            RNG: _TrainerStreams(self),
        }
        if _exportable(trainer):  # (set before train(): the callbacks' on_train_begin sees it)
            components[CALLBACKS] = LiveState(self, lambda: _exportable(trainer),
                                              dump=_callback_states, load=_set_callback_states,
                                              stage="before_train", verify_as=CALLBACKS,
                                              name=CALLBACKS)
        return components

    def checkpoint_advice(self) -> dict[str, str]:
        """What a setting of the run's keeps out of the Trainer's checkpoints (``_advice``)."""
        return _advice(self.trainer, self._resume_from)

    def undeclared_roots(self) -> list[tuple[str, Any]]:
        """Your own callbacks, data collator, training dataset and scheduler (one of
        your own class, given in ``optimizers=``): state they keep
        is named when no component holds it (a trial's collator masked with a
        generator of its own)."""
        exportable = {id(cb) for cb in _exportable(self.trainer)}
        roots = [(path, _not_exported(cb) if id(cb) in exportable else cb)
                 for path, cb in user_callbacks(self.trainer.callback_handler.callbacks)]
        # (trial 260: a generator the dataset masked with in __getitem__ went unnamed)
        # (first: state a callback reaches through them is named by them, trial 260's
        # dataset attribute set by one callback was named through another)
        # (trial 655: a scheduler of its own, passed in optimizers=, whose state_dict()
        # left out its step count)
        return [*_collator_roots(getattr(self.trainer, "data_collator", None)),
                *user_dataset("train_dataset", getattr(self.trainer, "train_dataset", None)),
                *user_dataset("lr_scheduler", getattr(self.trainer, "lr_scheduler", None)),
                *roots, *_subclass_fields(self.trainer)]

    def close(self) -> None:
        super().close()
        self._root.cleanup()


def _collator_roots(collator: Any) -> list[tuple[str, Any]]:
    """A data collator of the program's own class (``user_object``); or
    transformers' own given a ``seed``, which masks from a generator of its own
    that the Trainer's checkpoint does not hold (trial 816:
    DataCollatorForLanguageModeling(seed=...), its generator unnamed), as
    ``data_collator (ItsClass).generator`` (transformers' objects are not walked
    into; the generator is made at its first call, and looked at from then on)."""
    generator = getattr(collator, "generator", None)
    if generator is None or getattr(collator, "seed", None) is None \
            or not type(collator).__module__.startswith("transformers."):
        return user_object("data_collator", collator)
    return [(f"data_collator ({type(collator).__name__}).generator", generator)]


def _epochs_unread(trainer: Any) -> str | None:
    """Why the Trainer's epochs were not read, where a subclass of yours makes
    its own sampler or loader (trial 607 was told its program "does not say"
    where they end); None otherwise (``BuiltProgram.boundaries``)."""
    tf = require("transformers", "resumecheck.frameworks.transformers")
    made = [f"{name}()" for name in ("_get_train_sampler", "get_train_dataloader")
            if getattr(type(trainer), name) is not getattr(tf.Trainer, name)]
    return (f"your Trainer subclass makes its own {' and '.join(made)}, whose length the "
            "check does not read: making it may draw") if made else None


def _steps_per_epoch(trainer: Any) -> int | None:
    """Optimizer steps per epoch, as the Trainer counts them (batches of its
    own train DataLoader, ``gradient_accumulation_steps`` to a step, a last
    short one counting), where its dataset has a length and the Trainer
    makes its loader and sampler itself (a trial: fuzz was told the program
    declares no epoch boundaries); None otherwise. Read without making the
    loader, which would draw."""
    tf = require("transformers", "resumecheck.frameworks.transformers")
    args = trainer.args
    dataset = getattr(trainer, "train_dataset", None)
    own = all(getattr(type(trainer), name) is getattr(tf.Trainer, name)
              for name in ("get_train_dataloader", "_get_train_sampler"))
    if (not own or dataset is None or isinstance(dataset, torch.utils.data.IterableDataset)
            or getattr(args, "auto_find_batch_size", False)
            or not isinstance(args.train_batch_size, int) or args.train_batch_size < 1):
        return None
    try:
        samples = len(dataset)
    except TypeError:
        return None
    batches = (samples // args.train_batch_size if args.dataloader_drop_last
               else -(-samples // args.train_batch_size))
    accumulate = max(int(args.gradient_accumulation_steps), 1)
    return max(batches // accumulate + int(batches % accumulate > 0), 1) if batches else None


def _subclass_fields(trainer: Any) -> list[tuple[str, Any]]:
    """The attributes a Trainer subclass of yours sets itself (``self.NAME =``
    in its own methods), the Trainer's own left out: state it keeps is named
    when no component holds it (a trial's subclass counted its micro-batches,
    and nothing named the counter)."""
    names: set[str] = set()
    for cls in type(trainer).__mro__:
        if cls.__module__.split(".")[0] in ("transformers", "builtins", "resumecheck"):
            continue
        try:
            source = inspect.getsource(cls)
        except (OSError, TypeError):
            continue
        names |= set(re.findall(r"\bself\.([A-Za-z_]\w*)\s*(?:[-+*/]?=)(?!=)", source))
    return [(f"trainer.{name}", getattr(trainer, name)) for name in sorted(names)
            if name in vars(trainer)]


class _TrainerStreams(RNGState):
    """The global streams. Loaded before the loop has started (the engine's
    restore, or an override after ``load()``), they wait for the point where
    the Trainer's own resume restores ``rng_state.pth`` (see ``_Driver``):
    ``train()`` reseeds with ``set_seed`` first, so anything set earlier is
    lost."""

    def __init__(self, program: TrainerProgram) -> None:
        super().__init__()
        self._program = program

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if self._program._started:
            super().load_state_dict(state)
        else:
            self._program.pending.setdefault("started", []).append(
                lambda: RNGState.load_state_dict(self, state))


def _exportable(trainer: Any) -> list[Any]:
    """Your own callbacks whose state the Trainer's checkpoints hold (``ExportableState``),
    as the Trainer holds them now (its own restore puts new ones in)."""
    tf = require("transformers", "resumecheck.frameworks.transformers")
    exportable = getattr(tf.trainer_callback, "ExportableState", None)
    if exportable is None:
        return []
    # (a trial: the Trainer's own EarlyStoppingCallback, exportable, was left out, and its
    # patience counter, which a resume without the flag below loses, went unchecked)
    return [cb for _, cb in user_callbacks(trainer.callback_handler.callbacks, keep=exportable)
            if isinstance(cb, exportable)]


def _not_exported(callback: Any) -> types.SimpleNamespace:
    """What an ``ExportableState`` callback keeps beyond the attributes its
    ``state()`` exports (those are compared as the component ``callbacks``)."""
    try:
        exported = (callback.state() or {}).get("attributes") or {}
    except Exception:  # (a state() that fails: the capture says it; look at everything)
        exported = {}
    return fields_beside(callback, exported)


def _callback_states(callbacks: list[Any]) -> dict[str, Any]:
    """Each callback's ``state()``, by class, as ``trainer_state.json`` holds them."""
    out: dict[str, Any] = {}
    for callback in callbacks:
        name, state = type(callback).__name__, callback.state()
        if name in out:
            out[name] = [*(out[name] if isinstance(out[name], list) else [out[name]]), state]
        else:
            out[name] = state
    return out


def _set_callback_states(callbacks: list[Any], saved: dict[str, Any]) -> None:
    """Set each callback's saved attributes, as the Trainer's own restore does."""
    seen: dict[str, int] = {}
    for callback in callbacks:
        name = type(callback).__name__
        data = saved.get(name)
        if isinstance(data, list):
            data = data[seen.get(name, 0)] if seen.get(name, 0) < len(data) else None
        seen[name] = seen.get(name, 0) + 1
        for attribute, value in ((data or {}).get("attributes") or {}).items():
            setattr(callback, attribute, value)


_BEST = ("best_metric", "best_global_step")
"""What the Trainer's state keeps of its best evaluation, where it has one: its
checkpoints hold it, and its EarlyStoppingCallback counts its patience from it
(a trial: the engine's restart, without it, reset a patience counter)."""


def _progress(state: Any) -> dict[str, Any]:
    return {"global_step": int(state.global_step), "epoch": float(state.epoch or 0.0),
            **{name: getattr(state, name) for name in _BEST
               if getattr(state, name, None) is not None}}


def _set_progress(state: Any, saved: dict[str, Any]) -> None:
    state.global_step = int(saved["global_step"])
    state.epoch = float(saved["epoch"])
    for name in _BEST:
        if hasattr(state, name):
            setattr(state, name, saved.get(name))


def _record_losses(trainer: Any, losses: list[torch.Tensor]) -> None:
    """Keep the loss each ``training_step`` returns (one per micro-batch) for
    the step's record: the Trainer sums them into the loss it logs for the
    step. Not an evaluation's (a trial: the step after an evaluation was
    recorded with the evaluation's losses, and a resume right after it, which
    runs no evaluation, differed). Their sum is the logged loss whether
    ``compute_loss`` divided by the step's token count (``num_items_in_batch``)
    or ``training_step`` divided by the accumulation steps (trial 142: the mean
    of ``compute_loss``'s, half the logged loss at two micro-batches)."""
    training_step = trainer.training_step

    def recorded(*args: Any, **kwargs: Any) -> Any:
        out = training_step(*args, **kwargs)
        losses.append(out.detach().float().reshape(()))
        return out

    trainer.training_step = recorded


def _lengthless(dataset: Any) -> str | None:
    """``dataset`` in words where it has no length (an ``IterableDataset`` that
    streams): the Trainer cannot tell where its epochs end, and its resume
    skips ``global_step × gradient_accumulation_steps`` batches from the first
    epoch's start (trial 363: past that epoch's end, the resume read another
    epoch's batches, and the report blamed the dataset's epoch counter)."""
    if dataset is None:
        return None
    try:
        len(dataset)
    except TypeError:
        return f"your train_dataset ({type(dataset).__name__}) has no length"
    return None


def _advice(trainer: Any, resumed_from: str | None) -> dict[str, str]:
    """Your ``ExportableState`` callbacks, where the run does not ask the
    Trainer to restore them: its checkpoints hold their state, which its
    resume leaves unused unless asked (a trial's confirmed finding did not
    say so); and the optimizer, scheduler and streams where the run saves
    the model alone (trial 423: ``save_only_model=True``, three confirmed
    findings, and no word of the one setting behind them)."""
    args = trainer.args
    advice = {}
    own = _own_methods(trainer, require("transformers", "resumecheck.frameworks.transformers"
                                        ).Trainer)
    if getattr(args, "save_only_model", False) is True and own:
        # (trial 802: a subclass that saved and loaded them itself was told that
        # save_only_model=False keeps them, which did not fix its lost scheduler)
        advice = dict.fromkeys((OPTIMIZER, SCHEDULER, RNG), (
            "TrainingArguments(save_only_model=True) writes the model alone into each "
            "checkpoint (no optimizer.pt, scheduler.pt or rng_state.pth), and your Trainer "
            f"subclass's own {_methods_said(own)} save and restore the rest: check that they "
            "keep it"))
    elif getattr(args, "save_only_model", False) is True:
        advice = dict.fromkeys((OPTIMIZER, SCHEDULER, RNG), (
            "TrainingArguments(save_only_model=True) writes the model alone into each "
            "checkpoint: the Trainer's resume finds no optimizer, scheduler or random-stream "
            "state there (its optimizer.pt, scheduler.pt and rng_state.pth); "
            "save_only_model=False keeps them"))
    elif resumed_from and not os.path.exists(os.path.join(resumed_from, "rng_state.pth")):
        # (trial 516: a callback deleted it after each save; the confirmed finding
        # said nothing of the file the Trainer keeps the streams in)
        advice[RNG] = ("the checkpoint the Trainer resumed from holds no rng_state.pth, "
                       f"{STREAMS_NOT_KEPT} and its resume reads them: "
                       "keep that file (something removed it after the save, or your own "
                       "save left it out)")
    if _exportable(trainer) and not getattr(args, "restore_callback_states_from_checkpoint",
                                            True):
        # (trial 530: so restored, a callback that added to the logs in on_log ran after
        # the printer, and its figure left every printed log line)
        advice[CALLBACKS] = ("the Trainer's checkpoints hold your callbacks' state, but its "
                             "resume puts it back only with TrainingArguments("
                             "restore_callback_states_from_checkpoint=True) (which makes each "
                             "anew and adds it after the printer and the loggers: what one "
                             "adds to the logs in on_log is then printed and reported no more)")
    return advice


def _move_checkpoint(output_dir: str, step: int, path: str) -> None:
    shutil.move(os.path.join(output_dir, f"checkpoint-{step}"), path)


_CHECKPOINT_METHODS = (
    "_save_checkpoint", "_save", "_save_optimizer_and_scheduler", "_save_rng_state",
    "_save_scaler", "_load_from_checkpoint", "_load_optimizer_and_scheduler",
    "_load_rng_state", "_load_scaler", "_load_callback_state")
"""The Trainer's methods its save and resume call, which a subclass may override."""


def _own_methods(trainer: Any, base: type) -> list[str]:
    """The Trainer's save and restore methods (``_CHECKPOINT_METHODS``) that the
    trainer's class, a subclass of ``base``, overrides."""
    return [name for name in _CHECKPOINT_METHODS
            if getattr(type(trainer), name, None) is not getattr(base, name, None)]


def _methods_said(names: list[str]) -> str:
    """``_save_checkpoint(), _load_rng_state()``."""
    return ", ".join(f"{name}()" for name in names)


def _own_checkpoint_code(trainer: Any, base: type) -> str:
    """What the own resume's row adds where a Trainer subclass of the user's
    overrides the Trainer's save or restore: that code ran (trial 769: its
    `_load_optimizer_and_scheduler`, where the bug lay, read as "your script's
    own resume code ... did not run")."""
    own = _own_methods(trainer, base)
    if not own:
        return ""
    return (f"; your Trainer subclass's own {_methods_said(own)}, which the Trainer's save "
            "and resume call, did run, and are checked")


def _drive(trainer: Any, driver: Any) -> None:
    """The adapter's hooks in the Trainer, beside its callback (``_Driver``)."""
    _park_after_rng_restore(trainer, driver)
    _park_after_log_save_evaluate(trainer, driver)
    _keep_before_epoch_begin(trainer, driver)
    _record_losses(trainer, driver.losses)
    _watch_fetch_draws(trainer, driver)


def _park_after_rng_restore(trainer: Any, driver: Any) -> None:
    """Park a resumed loop right after the Trainer restores ``rng_state.pth``:
    mid-epoch that is after it fetched the first resumed step's batch and just
    before its compute; at an epoch's start, before the epoch's iterator draws
    its shuffle. Only there is the restored state the one the step uses."""
    load_rng_state = trainer._load_rng_state

    def restored(*args: Any, **kwargs: Any) -> Any:
        out = load_rng_state(*args, **kwargs)
        driver.start(None)
        return out

    trainer._load_rng_state = restored


def _keep_before_epoch_begin(trainer: Any, driver: Any) -> None:
    """Keep the components' states where a resumed Trainer is about to call its
    first epoch's ``on_epoch_begin``: at a resume at an epoch's start, the
    uninterrupted run called the callbacks there only after its checkpoint
    (trial 759: a correct curriculum callback that raised its level there read
    a latent gap, and failed ``--strict``). A fetch before the park (a resume
    inside the epoch, which the uninterrupted run had begun before its
    checkpoint) drops them (``_watch_fetch_draws``). Components whose load
    still waits for the park (the engine's optimizer and scheduler) are not
    restored yet: not kept."""
    handler = trainer.callback_handler
    on_epoch_begin = handler.on_epoch_begin

    def keeping(*args: Any, **kwargs: Any) -> Any:
        if driver.resuming and not driver.started and not driver.kept:
            dumps: dict[str, Callable[[], Any]] = {
                GLOBAL_STEP: lambda: _progress(trainer.state),
                CALLBACKS: lambda: _callback_states(_exportable(trainer))}
            if "started" not in driver.pending:
                dumps[OPTIMIZER] = trainer.optimizer.state_dict
                dumps[SCHEDULER] = trainer.lr_scheduler.state_dict
            driver.kept.update((name, copy.deepcopy(dump())) for name, dump in dumps.items())
        return on_epoch_begin(*args, **kwargs)

    handler.on_epoch_begin = keeping


def _watch_fetch_draws(trainer: Any, driver: Any) -> None:
    """Note which global streams (``torch``, ``numpy``) the Trainer's fetch of
    a step's batches draws from, other than an epoch's first fetch (where the
    sampler may draw its shuffle's seed): its data collator's or dataset's
    draws. A resumed Trainer makes that fetch before it restores
    ``rng_state.pth`` (trial 142: a collator masking with torch's global
    stream departed at the first resumed step, and nothing said why). A fetch
    before the park drops what ``_keep_before_epoch_begin`` kept."""
    import weakref

    import numpy as np

    fetch, streams = trainer.get_batch_samples, driver.fetch_draws
    last: list[Any] = [None]

    def fetched(epoch_iterator: Any, *args: Any, **kwargs: Any) -> Any:
        if not driver.started:
            driver.kept.clear()  # (inside an epoch the uninterrupted run had begun)
        torch_before, numpy_before = torch.get_rng_state(), _numpy_position(np)
        out = fetch(epoch_iterator, *args, **kwargs)
        same_epoch = last[0] is not None and last[0]() is epoch_iterator
        if same_epoch and not torch.equal(torch_before, torch.get_rng_state()):
            streams.add("torch")
        if same_epoch and numpy_before != _numpy_position(np):
            streams.add("numpy")
        try:
            last[0] = weakref.ref(epoch_iterator)
        except TypeError:  # (an iterator without weak references: not watched)
            last[0] = None
        return out

    trainer.get_batch_samples = fetched


def _numpy_position(np: Any) -> tuple[int, bytes]:
    """numpy's global stream, where it stands (its position and its words)."""
    state: Any = np.random.get_state(legacy=True)
    return int(state[2]), state[1].tobytes()


_BEST_AT_END = (
    f"{AFTER_LAST_STEP} (load_best_model_at_end=True: it loads the best "
    "checkpoint back): a check stops at its last step, and its restarts keep no folder of "
    "the run's earlier checkpoints (a resumed Trainer sets best_model_checkpoint to None "
    "there), so the weights a resumed job ends with are not compared")
"""A ``Report.not_checked`` line of a Trainer target that loads its best model at the end."""

_BEST_GONE = "recorded in the resumed state does not exist anymore"


class _BestGone(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return _BEST_GONE not in record.getMessage()


@contextlib.contextmanager
def _best_folder_unsaid() -> Iterator[None]:
    """The Trainer's warning that the best checkpoint its resumed state
    records does not exist anymore, off while a check's loop runs: every
    restart here has a folder of its own, so it is said of every resumed run
    (a trial's fuzz printed it about 130 times); ``_BEST_AT_END`` says what
    that leaves unchecked."""
    logger, quiet = logging.getLogger("transformers.trainer"), _BestGone()
    logger.addFilter(quiet)
    try:
        yield
    finally:
        logger.removeFilter(quiet)


@contextlib.contextmanager
def _bars_off(quiet: bool) -> Iterator[None]:
    """transformers' own progress bars off while the check trains and saves
    (where the run's arguments leave ``disable_tqdm`` to the adapter): each
    save of a model prints "Writing model shards", and a check saves at every
    resume point of every run (a trial's fuzz printed 591 of them)."""
    log = require("transformers", "resumecheck.frameworks.transformers").utils.logging
    was = quiet and log.is_progress_bar_enabled()
    if was:
        log.disable_progress_bar()
    try:
        yield
    finally:
        if was:
            log.enable_progress_bar()


def _quiet_printer(trainer: Any) -> None:
    """The ``PrinterCallback`` the adapter's ``disable_tqdm`` brings in prints
    every log to stdout, before the report (a trial: 200 dicts): in its place,
    one that changes the logs as it does (it drops ``total_flos``, which the
    callbacks after it then do not see) and prints nothing."""
    tf = require("transformers", "resumecheck.frameworks.transformers")
    printer = tf.trainer_callback.PrinterCallback
    if not any(type(cb) is printer for cb in trainer.callback_handler.callbacks):
        return

    base: Any = tf.TrainerCallback

    class QuietPrinter(base):  # type: ignore[misc]
        def on_log(self, args: Any, state: Any, control: Any, logs: Any = None,
                   **kwargs: Any) -> None:
            if logs is not None:
                logs.pop("total_flos", None)

    trainer.callback_handler.remove_callback(printer)
    trainer.add_callback(QuietPrinter())


def _park_after_log_save_evaluate(trainer: Any, driver: Any) -> None:
    """Park the loop once an optimizer step's ``_maybe_log_save_evaluate`` has
    run: the step's logging, evaluation and the saves of the run's own
    settings belong to that step, as a real save at that step would hold them
    (a trial: a callback's ``on_log``, run after the step's end, was counted
    as a change the check's save made, and the end state missed the last
    step's log). The call at an epoch's end, with no step before it since the
    last park, parks nothing."""
    log_save_evaluate = trainer._maybe_log_save_evaluate

    def then_park(*args: Any, **kwargs: Any) -> Any:
        modes = [(m, m.training) for m in trainer.model.modules()]
        out = log_save_evaluate(*args, **kwargs)
        if driver.record is not None:
            # the modes the step trained in, which an evaluation left in eval mode
            # (the next training_step sets them again; a real checkpoint holds
            # none: a trial's resume right after an evaluation was told that a
            # load must set eval mode again)
            for module, mode in modes:
                module.training = mode
        driver.after_step(trainer.control)
        return out

    trainer._maybe_log_save_evaluate = then_park


def _Driver(channel: Any, pending: dict[str, Any]) -> Any:
    """The adapter's callback: parks the loop before its first step, where the
    Trainer's restore is complete (``on_train_begin`` for a fresh run; for a
    resumed one after the Trainer's rng restore, see
    ``_park_after_rng_restore``, else at the first ``on_step_begin``), and
    after each optimizer step (``on_step_end``: the scheduler has stepped)
    once its logging, evaluation and saves have run
    (``_park_after_log_save_evaluate``)."""
    base: Any = require("transformers", "resumecheck.frameworks.transformers").TrainerCallback

    class Driver(base):  # type: ignore[misc]
        def __init__(self) -> None:
            self.losses: list[torch.Tensor] = []
            self.fetch_draws: set[str] = set()  # (_watch_fetch_draws)
            self.record: LoopRecord | None = None  # (the step ended, not yet parked)
            self.parked_at = ""
            self.control: Any = None
            self.resuming = False
            self.state: Any = None
            self.started = False
            self.pending = pending
            self.kept: dict[str, Any] = {}  # (_keep_before_epoch_begin)

        def _park(self, where: str, control: Any, payload: Any = None) -> None:
            self.parked_at, self.control = where, control
            channel.park(where, payload)

        def start(self, control: Any) -> None:
            if self.started:
                return
            self.started = True
            run_pending(pending, "started")
            self._park("started", control if control is not None else self.control,
                       int(self.state.global_step))

        def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            self.state, self.control, self.started = state, control, False
            if not self.resuming:
                self.start(control)

        def on_step_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            self.start(control)  # a resume that restored no rng (ignore_data_skip)

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            losses, self.losses[:] = list(self.losses), []
            self.record = LoopRecord(step=state.global_step,
                                     loss=torch.stack(losses).sum() if losses else float("nan"))

        def after_step(self, control: Any) -> None:
            if self.record is not None:
                record, self.record = self.record, None
                self._park("step", control, record)

    return Driver()
