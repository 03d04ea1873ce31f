"""PyTorch Lightning: a target from a ``LightningModule`` factory, its data and
``Trainer`` settings, resumed with ``Trainer.fit(ckpt_path=...)``::

    from resumecheck.frameworks import lightning_target

    TARGET = lightning_target(module=TinyModule, data=make_loader,
                              trainer={"max_epochs": 3}, steps=12)

``module()`` builds the ``LightningModule``; ``data()`` returns a
``LightningDataModule``, a training ``DataLoader`` or a list of them. Each
build seeds with ``lightning.seed_everything(settings["seed"])``, as a
Lightning script does before it builds anything, then builds a ``Trainer``
from the settings (defaults: CPU, one device, ``max_steps`` = the check's
steps, no logger, no automatic checkpoints, no progress bar).

The checkpoint under audit is Lightning's own: ``trainer.save_checkpoint``
written from ``Callback.on_train_batch_end`` (where ``ModelCheckpoint``
writes its step checkpoints too, after the step's scheduler update), and
the restart resumes with ``Trainer.fit(ckpt_path=...)``. The components the
engine captures are the live objects: ``params`` (the module), ``optimizer``
(Lightning's one optimizer), ``scheduler`` (every configured scheduler),
``data_cursor`` (the fit loop's progress counters: epoch, batches and
optimizer steps, and a stateful loader's state when it has one), ``rng``
(the global streams, which Lightning's checkpoint does not hold, and the
generator of a training DataLoader given as ``data``), where your module
overrides ``on_save_checkpoint``, ``hooks`` (what it adds to the checkpoint,
given back to its ``on_load_checkpoint``), where your ``LightningDataModule``
defines ``state_dict()``, ``datamodule`` (what it returns) and, where
your own callbacks define ``state_dict()``, ``callbacks`` (their states, as
Lightning's checkpoint holds them). The fit
loop's counters can be restored into a running loop only through Lightning's
checkpoint: the engine's own restart puts them into the live loop before its
first step, which Lightning does not promise to honour, so when that restart
is not equivalent the engine says its ablations are inconclusive.

Lightning is imported only when a target is built.
"""

from __future__ import annotations

import contextlib
import copy
import logging
import os
import tempfile
import types
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import torch

from resumecheck.compare import digest
from resumecheck.components import DATA_CURSOR, OPTIMIZER, PARAMS, RNG, SCHEDULER, RNGState
from resumecheck.errors import InvalidArgument, TargetError
from resumecheck.frameworks import require
from resumecheck.frameworks._loop import (
    CALLBACKS, LiveState, LoopProgram, LoopRecord, batch_fingerprint, fields_beside,
    run_pending, user_callbacks, user_dataset,
)
from resumecheck.phrases import (
    LIGHTNING_DATASET, LIGHTNING_LOADER, MODULE_AFTER_SAVE, SAVED_AT_BATCH_END, between_steps_line,
)
from resumecheck.program import Target
from resumecheck.segments import scratch_dir
from resumecheck.undeclared import seeds_no_worker

__all__ = ["SAVED_AT_BATCH_END", "LightningProgram", "lightning_target"]


def lightning_target(
    *,
    module: Callable[[], Any],
    data: Callable[[], Any],
    trainer: Mapping[str, Any] | Callable[[], Mapping[str, Any]] | None = None,
    steps: int = 12,
    resume_at: Sequence[int] = (),
    seed: int = 0,
    samples: Callable[[Any], Any] | None = None,
    not_state: Sequence[str] = (),
) -> Target:
    """A resumecheck target for a Lightning module and its data.

    ``trainer`` holds ``lightning.Trainer`` keyword arguments (they override
    the adapter's defaults), or is a function that returns them, called at
    every build. A mapping's objects (callback instances) are copied for
    every build from what they were when the target was made, as a relaunched
    script makes them anew (what cannot be copied is shared by every build in
    one interpreter: a function is then the way). ``samples(batch)`` says
    which samples a batch holds; without it the batch's tensors are compared
    by content. A restart is built from the same settings, as a relaunched
    script would be. ``not_state``: as ``Target``'s, paths of what the run
    keeps that is not state (a logging counter), as the report's lines name them.
    """
    for name, value in (("module", module), ("data", data)):
        if not callable(value):
            raise InvalidArgument(name, value, "expected a function that builds it (no arguments)")
    if samples is not None and not callable(samples):
        raise InvalidArgument("samples", samples, "expected a function of one batch")
    if trainer is not None and not (callable(trainer) or isinstance(trainer, Mapping)):
        raise InvalidArgument("trainer", trainer, "expected Trainer arguments (a dict), or a "
                              "function (no arguments) that returns them")
    settings = trainer if callable(trainer) else dict(trainer or {})
    # Given as a dict, the settings' objects (callbacks: an EarlyStopping's wait
    # count) are copied afresh for every build from what they were here, as a
    # relaunched script makes them anew; shared, an in-process build went on from
    # what the one before left (a trial: every run stopped early, at the check's
    # third step). Objects that cannot be copied stay shared.
    pristine = None if callable(settings) else _copyable(settings)

    def build(config: dict[str, Any]) -> LightningProgram:
        options = dict(settings() if callable(settings) else
                       copy.deepcopy(pristine) if pristine is not None else settings)
        return LightningProgram(module=module, data=data, trainer=options,
                                seed=int(config.get("seed", seed)),
                                max_steps=int(config.get("max_steps", steps)), samples=samples)

    return Target(factory=build, run_config={"seed": seed}, restart_config="run",
                  steps=steps, resume_at=tuple(resume_at), preload=("lightning.pytorch",),
                  not_state=not_state)


def _copyable(settings: dict[str, Any]) -> dict[str, Any] | None:
    """A copy of ``settings`` as they are now (None: they cannot be copied)."""
    try:
        return copy.deepcopy(settings)
    except Exception:  # (a strategy holding a process group, a lock: kept as given)
        return None


class LightningProgram(LoopProgram):
    """``Trainer.fit`` driven one optimizer step at a time (see the module's docstring)."""

    framework = "Lightning"
    seeded_by = "the adapter (lightning.seed_everything(seed) before it builds your module)"
    """(a report's words: the baseline's seeding check passes through it)"""

    def __init__(self, *, module: Callable[[], Any], data: Callable[[], Any],
                 trainer: Mapping[str, Any], seed: int, max_steps: int,
                 samples: Callable[[Any], Any] | None = None) -> None:
        super().__init__()
        pl = require("lightning.pytorch", "resumecheck.frameworks.lightning")
        pl.seed_everything(seed, verbose=False)
        self.module = module()
        if not isinstance(self.module, pl.LightningModule):
            raise InvalidArgument("module", self.module,
                                  "the module factory must return a lightning LightningModule")
        self.data = data()
        _module_loads_again_at_fit_start(self)
        _restores_before_optimizers(self)
        self._root = tempfile.TemporaryDirectory(prefix=_ROOT_PREFIX, dir=scratch_dir())
        options = _options(pl, trainer, max_steps, self._root.name)
        driver = self._driver = _Driver(self._channel, self.pending, samples)
        # (its look at the rates as the next batch begins goes first: trial 480's callback
        # set the rate in its own on_train_batch_start, which a restart runs too, and the
        # report said that the rate changed after the checkpoint where the restart did not)
        options["callbacks"] = [_RatesWatch(driver), *_callbacks(options, self.module), driver]
        with _announcer_quiet():  # (the hardware, announced on every Trainer: each restart)
            self.trainer = pl.Trainer(**options)
        _park_after_train_start(self.trainer, self._channel, self.pending)
        _streams_kept_at_setup(self)
        self.saved_where = _saved_where(self.trainer) + _changed_after_save(self.module)
        for callback in self.trainer.checkpoint_callbacks:
            _same_root_on_load(callback, self._root.name)

    def _runner(self) -> Callable[[str | None], None]:
        pl = require("lightning.pytorch", "resumecheck.frameworks.lightning")
        trainer, module, data = self.trainer, self.module, self.data
        where = "datamodule" if isinstance(data, pl.LightningDataModule) else "train_dataloaders"

        def run(resume_from: str | None) -> None:
            # Lightning's default loading, as the user's own resume does (no weights_only)
            with _announcer_quiet():  # ("Restoring states from the checkpoint path at ...")
                trainer.fit(module, ckpt_path=resume_from, **{where: data})

        return run

    def _save(self, path: str) -> None:
        # as the run's own ModelCheckpoint writes it: a trial's save_weights_only=True
        # made checkpoints its resume could not load, and the check saved them whole
        only = any(getattr(cb, "save_weights_only", False) for cb in
                   self.trainer.checkpoint_callbacks)
        self.trainer.save_checkpoint(path, weights_only=only)

    @property
    def data_not_resumable(self) -> str | None:
        """The training loader, in words, where it keeps no place in its epoch
        that Lightning's checkpoint could hold (no ``state_dict()``): a resume
        inside an epoch reads that epoch again from its start (trial 267's plain
        DataLoader; Lightning says only that it is "not resumable"). None where
        it is stateful, or not known."""
        loader = getattr(self.trainer, "train_dataloader", None)
        if loader is None and isinstance(self.data, torch.utils.data.DataLoader):
            loader = self.data
        if not isinstance(loader, torch.utils.data.DataLoader):
            return None
        stateful = callable(getattr(loader, "state_dict", None)) and \
            callable(getattr(loader, "load_state_dict", None))
        return None if stateful else f"a {type(loader).__name__}"

    @property
    def steps_per_epoch(self) -> int | None:
        """Optimizer steps per epoch where the data tells (one training
        DataLoader with a length, every batch of it trained: Lightning steps
        at an epoch's end too, accumulating or not; for a datamodule or a
        loader function, the fit loop's count of batches once it has made the
        loader); None otherwise, and where the accumulation changes by epoch
        (``epoch_boundaries`` says where they end then)."""
        accumulate = getattr(self.trainer, "accumulate_grad_batches", None)
        batches = self._batches()
        if (batches is None or _accumulation_schedule(self.trainer) is not None
                or not isinstance(accumulate, int) or accumulate < 1 or self._seen_ends):
            return None
        return -(-batches // accumulate)

    @property
    def _seen_ends(self) -> bool:
        """Whether the epochs end where the loop was seen to end them: under manual
        optimization (trial 529 stepped every second batch by hand: epochs of 8
        steps read for 4), and where the loop makes its loader again every few
        epochs, its length free to change (trial 775's grew: 8 steps read for 4, 6, 8)."""
        reloads = getattr(self.trainer, "reload_dataloaders_every_n_epochs", 0)
        return getattr(self.module, "automatic_optimization", True) is False or (
            isinstance(reloads, int) and reloads > 0)

    @property
    def epoch_boundaries(self) -> list[int] | None:
        """Where the epochs end, where a ``GradientAccumulationScheduler``
        changes the accumulation by epoch (a trial's accumulated 1 batch, then 2
        from epoch 2: the report said "the epochs end after steps 3, 6, 9, 12",
        from the last accumulation, where they end after 6, 12 and 15); None
        otherwise (``steps_per_epoch`` says it)."""
        schedule, batches = _accumulation_schedule(self.trainer), self._batches()
        if self._seen_ends:
            return sorted(set(self._driver.epoch_ends)) or None
        if schedule is None or batches is None:
            return None
        ends: list[int] = []
        last = getattr(self.trainer, "max_steps", -1)
        while not ends or ends[-1] < (last if isinstance(last, int) and last > 0 else 1000):
            epoch = len(ends)
            accumulate = schedule[max(k for k in schedule if k <= epoch)]
            ends.append((ends[-1] if ends else 0) + -(-batches // max(accumulate, 1)))
        return ends

    @property
    def epoch_ends_inside(self) -> list[int]:
        """Of ``epoch_boundaries``, those whose epoch ends inside the step after
        it (manual optimization: the loop was seen to end an epoch between the
        batches of one optimizer step)."""
        return sorted(self._driver.ends_inside) if self._seen_ends else []

    @property
    def between_steps(self) -> str | None:
        """What a check cannot show where the loop ran several batches per
        optimizer step by hand (``_between_steps``; ``BuiltProgram.boundaries``)."""
        return _between_steps(self)

    def _batches(self) -> int | None:
        """The batches of an epoch where the data tells (see ``steps_per_epoch``)."""
        return _batches_of(self.trainer, self.data)

    @property
    def rate_moved_after(self) -> list[int]:
        """The steps after whose checkpoint hook the fit loop changed a learning
        rate before the next batch began (see ``BuiltProgram.boundaries``)."""
        return sorted(self._driver.moved.rates)

    @property
    def plateau_moved_after(self) -> list[int]:
        """The steps after whose checkpoint hook the fit loop stepped a plateau
        scheduler before the next batch began."""
        return sorted(self._driver.moved.plateaus)

    @property
    def validates_after(self) -> list[int]:
        """The steps after which the fit loop has run a validation so far: a
        resume from a checkpoint written at such a step's batch end does not
        run it again (see ``BuiltProgram.boundaries``)."""
        return sorted(self._driver.validated)

    def components(self) -> dict[str, Any]:
        trainer = self.trainer
        components = {
            PARAMS: self.module,
            OPTIMIZER: LiveState(self, lambda: _one_optimizer(trainer)),
            SCHEDULER: LiveState(self, lambda: trainer.lr_scheduler_configs,
                                 dump=_schedulers_state, load=_load_schedulers),
            DATA_CURSOR: LiveState(self, lambda: trainer.fit_loop, stage="setup"),
            RNG: _LightningStreams(self, _loader_generators(self.data)),
        }
        if _saves_own_state(self.module):  # (loaded where Lightning's restore calls it)
            components[HOOKS] = _hooks_component(self, trainer)
        datamodule = _stateful_datamodule(self.data)
        if datamodule is not None:  # (restored where Lightning restores it: after setup)
            components[DATAMODULE] = LiveState(self, lambda: datamodule, dump=_datamodule_state,
                                               load=_load_datamodule, stage="setup",
                                               verify_as=DATAMODULE)
        stateful = _stateful_callbacks(trainer.callbacks)
        if stateful:  # (restored where Lightning restores them: after the setup hooks)
            root = self._root.name  # (a build's own: captured as _ROOT_MARK, trial 411)
            components[CALLBACKS] = LiveState(
                self, lambda: stateful,
                dump=lambda c: _moved(_callbacks_state(c), root, _ROOT_MARK),
                load=lambda c, state: _load_callbacks(c, _moved(state, _ROOT_MARK, root)),
                stage="setup", verify_as=CALLBACKS)
        return components

    def checkpoint_advice(self) -> dict[str, str]:
        """What makes Lightning's checkpoint hold the random streams: it holds
        none of them (a trial's confirmed `rng` said nothing of what to do)."""
        return {RNG: _rng_advice(self.live_loaders())}

    def live_loaders(self) -> list[Any]:
        """The training loaders the fit loop holds (made by your ``train_dataloader()``)."""
        return _train_loaders(self.trainer)

    def undeclared_roots(self) -> list[tuple[str, Any]]:
        """Your callbacks (of one whose ``state_dict()`` Lightning keeps, the
        ``callbacks`` component, what that leaves out), datamodule, dataset and
        training loaders: state they keep is named where no component holds it."""
        stateful = {id(cb) for cb in _stateful_callbacks(self.trainer.callbacks)}
        return [*_datamodule_roots(self.data), *_dataset_roots(self.data),
                *_loader_roots(self.trainer),
                *[(path, _not_in_state(cb) if id(cb) in stateful else cb)
                  for path, cb in user_callbacks(self.trainer.callbacks)]]

    def close(self) -> None:
        super().close()
        self._root.cleanup()


_ROOT_PREFIX = "resumecheck-lightning-"
_ROOT_MARK = "<the build's root>"
"""What the engine's capture of the callbacks holds for the folder each build
has of its own: a ModelCheckpoint subclass of the user's, whose paths lie
under it, compared across builds, read as a callback that lost its state
(trial 411: best_model_path and dirpath, each build's root, 'differed')."""


def _options(pl: Any, trainer: Mapping[str, Any], max_steps: int, root: str
             ) -> dict[str, Any]:
    """The Trainer's arguments: the adapter's defaults, then the target's."""
    options: dict[str, Any] = {
        "accelerator": "cpu", "devices": 1, "max_steps": max_steps, "logger": False,
        "enable_checkpointing": False, "enable_progress_bar": False,
        "enable_model_summary": False, "num_sanity_val_steps": 0, "default_root_dir": root,
    }
    options.update(trainer)
    if "enable_checkpointing" not in trainer and any(
            isinstance(cb, pl.callbacks.ModelCheckpoint)
            for cb in _as_list(options.get("callbacks"))):
        # the run's own ModelCheckpoint: Lightning refuses it with checkpointing
        # off (a trial's real callbacks stopped the check before any run)
        options["enable_checkpointing"] = True
    return options


def _between_steps(program: LightningProgram) -> str | None:
    """Where manual optimization ran several training batches per optimizer
    step, what a check that restarts only after an optimizer step cannot show,
    in words (trial 875: a count of batches kept by hand was 0 at every restart
    the check tried, and a checkpoint that lost it passed, where the run's own
    ModelCheckpoint wrote one at an epoch's end, inside a step)."""
    counts = program._driver.batches_per_step
    if getattr(program.module, "automatic_optimization", True) is not False or \
            max(counts, default=1) < 2:
        return None
    every = (f"once every {max(counts)} batches" if len(counts) == 1
             else f"once every {min(counts)} to {max(counts)} batches")
    inside = program.epoch_ends_inside
    ends = (f"; an epoch ends inside step{'s' if len(inside) > 1 else ''} "
            + ", ".join(str(b + 1) for b in inside[:4]) + (" ..." if len(inside) > 4 else "")
            if inside else "")
    return between_steps_line(every, ends)


def _same_root_on_load(callback: Any, root: str) -> None:
    """Let a ``ModelCheckpoint`` whose folder is the adapter's default root
    reload its best scores and paths from a checkpoint of another build. A
    relaunched script has the same root as the run it resumes; each build here
    has its own, and Lightning reloads none of ``best_model_score``,
    ``best_k_models`` and the rest when the folder changed (a module that read
    ``best_model_score`` saw None after every restart: a false alarm)."""
    load = callback.load_state_dict

    def load_state_dict(state: dict[str, Any]) -> None:
        saved, here = state.get("dirpath"), callback.dirpath
        was = os.path.dirname(os.path.normpath(saved)) if isinstance(saved, str) else ""
        if isinstance(here, str) and os.path.basename(was).startswith(_ROOT_PREFIX) \
                and os.path.commonpath([here, root]) == root and saved != here:
            state = _moved(state, was, root)
        load(state)

    callback.load_state_dict = load_state_dict


def _moved(state: Any, old: str, new: str) -> Any:
    """``state`` with every path under ``old`` put under ``new`` (keys too)."""
    if isinstance(state, str) and (state == old or state.startswith(old + os.sep)):
        return new + state[len(old):]
    if isinstance(state, dict):
        return {_moved(k, old, new): _moved(v, old, new) for k, v in state.items()}
    return state


class _LightningStreams(RNGState):
    """The global streams. Loaded before the loop has started (the engine's
    restore, or an override after ``load()``), they are set at once, so the
    data loaders Lightning iterates in its setup draw from them as in a
    resumed script, and whatever the ``on_train_start`` hooks then do to the
    streams (a user's ``seed_everything`` there) is undone: the first
    resumed step draws from the state that was loaded."""

    def __init__(self, program: LightningProgram,
                 generators: Mapping[str, torch.Generator] | None = None) -> None:
        super().__init__(generators)
        self._program = program

    def load_state_dict(self, state: dict[str, Any]) -> None:
        super().load_state_dict(state)
        program = self._program
        if not program._started:
            program.pending.setdefault("before_train_start", []).append(_keep_streams(program))
        else:
            _iterate_anew_at_epoch_end(program)


def _iterate_anew_at_epoch_end(program: LightningProgram) -> None:
    """Where the loop had started (the engine's restore reads the live state
    first, which runs Lightning's setup) and resumes at an epoch's end: make
    the training loaders' iterators again, from the streams just set.
    Lightning's restart makes them in its setup, before its first step; the
    uninterrupted run made that epoch's after the checkpoint, from the
    streams it held there, as a resume whose restore sets them before that
    setup does (trial 727: a module's on_load_checkpoint that set torch's
    stream resumed bit for bit; the engine's restore set it after the
    iterator had drawn its base seed, read its samples otherwise, and every
    ablation was inconclusive). Not inside an epoch, where the uninterrupted
    run's iterator is made before the checkpoint and a restart's draw must
    come before the restore too; nor where the next epoch's iterator is not
    the setup's (``_next_epoch_from_setup``)."""
    trainer = program.trainer
    loop = trainer.fit_loop
    fetcher = getattr(loop, "_data_fetcher", None)
    epoch = loop.epoch_loop  # (a checkpoint at the epoch's last batch: the check's)
    at_end = getattr(loop, "restarted_on_epoch_end", False) \
        or getattr(loop, "resumed_on_epoch_end", False) \
        or (getattr(epoch, "restarted_on_train_batch_end", False)
            and epoch.batch_progress.is_last_batch)
    if fetcher is None or not at_end or not _next_epoch_from_setup(trainer):
        return
    program.streams_at_restore = RNGState().state_dict()  # (what the look right after shows)
    iter(fetcher)


def _next_epoch_from_setup(trainer: Any) -> bool:
    """Whether, resumed at an epoch's end, the next epoch reads the iterators
    Lightning's setup made: plain loaders, where making one starts an epoch.
    Not a loader that keeps its position (a StatefulDataLoader's iterator
    there resumes its ended epoch, and the next epoch's is made later, as in
    the uninterrupted run), nor one over persistent workers (made once)."""
    return not any(callable(getattr(dl, "load_state_dict", None))
                   or getattr(dl, "persistent_workers", False) for dl in _train_loaders(trainer))


def _streams_kept_at_setup(program: LightningProgram) -> None:
    """Keep the global streams as a restart's restore left them, right before
    the fit loop's setup makes the training iterators from them, where the
    checkpoint was written at an epoch's last batch: the uninterrupted run
    made the next epoch's after that checkpoint, so the look at the state
    right after the restore sees them as they were before that draw
    (``LoopProgram.restored_look``; trial 727: a module's on_load_checkpoint
    that set torch's stream back, whose resume matched bit for bit, read a
    latent gap in it and a stream the program "set right itself"). Only where
    something set them since the build (a restore, a hook of the user's): a
    restart that sets none draws from the build's streams there, and the look
    sees them after that draw, as the uninterrupted run held them after its own."""
    loop = program.trainer.fit_loop
    setup_data = loop.setup_data
    built = digest(RNGState().state_dict())
    held = weakref.ref(program)  # (the loop's thread ends once the program is collected)

    def setup() -> None:
        program = held()
        first = program is not None and program.streams_at_restore is None \
            and loop.restarting and loop.epoch_loop.batch_progress.is_last_batch
        now = RNGState().state_dict() if first else None
        setup_data()
        if program is not None and now is not None and digest(now) != built \
                and _next_epoch_from_setup(loop.trainer):
            program.streams_at_restore = now

    loop.setup_data = setup


def _loader_generators(data: Any) -> dict[str, torch.Generator]:
    """The generators of the training loaders given as ``data`` (a DataLoader
    or a list of them; a LightningDataModule makes its loaders inside the
    fit): a loader's generator orders its shuffle, and Lightning's checkpoint
    holds it only through a stateful loader's state. Named as Accelerate's
    adapter names its loader's: ``loader`` (``loader0``, ``loader1``, ... for a list).
    Not one that draws nothing but the base seed of workers its loader does not
    have, as Accelerate's adapter leaves it out (trial 681: beside a sampler of
    its own, it ended a draw otherwise after a correct resume, a latent gap
    that failed ``--strict``, and led a lost position's diagnosis)."""
    loaders = list(data) if isinstance(data, (list, tuple)) else [data]
    found = {}
    for i, loader in enumerate(loaders):
        generator = getattr(loader, "generator", None)
        if isinstance(loader, torch.utils.data.DataLoader) \
                and isinstance(generator, torch.Generator) \
                and not seeds_no_worker(loader, generator):
            found["loader" if len(loaders) == 1 else f"loader{i}"] = generator
    return found


def _keep_streams(program: LightningProgram) -> Callable[[], None]:
    """Capture the streams (before the ``on_train_start`` hooks) and queue
    their restore for after them."""

    def keep() -> None:
        streams = RNGState()
        saved = streams.state_dict()
        program.pending.setdefault("started", []).insert(
            0, lambda: streams.load_state_dict(saved))

    return keep


def _saved_where(trainer: Any) -> str:
    """Where the check's save is not where the run's own checkpoints are
    written: a run whose ModelCheckpoint (or Lightning's default one) writes
    at epoch ends, where the check writes at a batch's end (trial 665: its
    default ModelCheckpoint's resume departed from the second step after it,
    where the check's, at the batch's end, resumed bit for bit, and the report
    said EQUIVALENT). '' where one of the run's writes on steps or on time."""
    pl = require("lightning.pytorch", "resumecheck.frameworks.lightning")
    if any(getattr(cb, "_every_n_train_steps", 0) or getattr(cb, "_train_time_interval", None)
           for cb in trainer.callbacks if isinstance(cb, pl.callbacks.ModelCheckpoint)):
        return ""
    return SAVED_AT_BATCH_END


def _changed_after_save(module: Any) -> str:
    """Where the module overrides ``on_train_batch_end``, which Lightning calls
    after the callbacks' (trial 706: an average of the weights kept in the
    module's buffers and updated there was one update behind in the check's
    checkpoint; the correct program read NOT EQUIVALENT, and the WARNING
    named Lightning's counts and code that runs after a restore)."""
    pl = require("lightning.pytorch", "resumecheck.frameworks.lightning")
    if type(module).on_train_batch_end is pl.LightningModule.on_train_batch_end:
        return ""
    return MODULE_AFTER_SAVE


def _park_after_train_start(trainer: Any, channel: Any, pending: dict[str, Any]) -> None:
    """Park the loop before its first step at the end of the fit loop's
    ``on_run_start``: after Lightning restored the checkpoint and built the
    optimizers, and after every ``on_train_start`` hook (the callbacks', the
    module's and the strategy's), so the engine reads and overrides the
    state the first step really uses."""
    fit_loop = trainer.fit_loop
    on_run_start = fit_loop.on_run_start

    def started() -> None:
        run_pending(pending, "before_train_start")
        on_run_start()
        run_pending(pending, "started")
        channel.park("started", int(trainer.global_step))

    fit_loop.on_run_start = started


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _callbacks(options: Mapping[str, Any], module: Any) -> list[Any]:
    """The run's own callbacks in the trainer's settings ``options``; Lightning's
    ``StochasticWeightAveraging`` among them is refused as a limit of this
    adapter (trial 545: its state, an averaged model, counts and an SWALR
    scheduler it makes at an epoch's start, is restored by Lightning after the
    fit starts, where the check does not follow it: a checkpoint that dropped
    it was not caught, and the correct twin's scheduler read as lost)."""
    pl = require("lightning.pytorch", "resumecheck.frameworks.lightning")
    callbacks = _as_list(options.get("callbacks"))
    if any(isinstance(cb, pl.callbacks.StochasticWeightAveraging) for cb in callbacks):
        raise TargetError(
            type(module).__name__, "the trainer's callbacks include Lightning's "
            "StochasticWeightAveraging, whose state (its averaged model, its counts, and the "
            "SWALR scheduler it puts in place of yours) resumecheck's Lightning adapter does "
            "not follow yet (a limit of resumecheck, not a fault of your program, which it "
            "has not judged)",
            "To check the rest of the training now, give the check's trainer settings without "
            "it; or check the averaging through a plain target of your own (README, 'Checking "
            "your own program') that keeps torch.optim.swa_utils' AveragedModel and SWALR and "
            "declares each as a component")
    return callbacks


def _one_optimizer(trainer: Any) -> Any:
    """The module's one optimizer; several are refused as what they are: a
    limit of this adapter, not a fault of the program (trial 198: an
    actor-critic's two optimizers read "the reference run failed ... Fix the
    program", with a traceback)."""
    optimizers = trainer.optimizers
    if len(optimizers) != 1:
        module = type(trainer.lightning_module).__name__
        # (Lightning steps several optimizers only by hand, automatic_optimization off;
        # trial 399: a GAN's alternating updates, whose self.optimizers() and
        # manual_backward() need a Trainer, were told to run the module's step by hand;
        # trial 571: they ran under Fabric's setup(), and "need a Trainer" was false)
        advice = (
            "To check it now, give one optimizer a parameter group for each part where their "
            "settings allow and your step steps the parts together (not a GAN's alternating "
            "updates; each group keeps its own learning rate), or check the training through "
            "a plain target of your own (a class with components(), train_step(), save() and "
            "load(); README, 'Checking your own program') whose train_step() makes the "
            "updates your training_step() makes, each network, optimizer and scheduler "
            "declared as a component of its own (self.optimizers() and manual_backward() "
            "need a Trainer or Lightning Fabric's setup(module, *optimizers); else call each "
            "optimizer and backward() directly). Such a target checks what its own save() "
            "and load() keep, not Lightning's checkpoint: to check that, its save() and "
            "load() can be trainer.save_checkpoint(path) and a Trainer's fit(ckpt_path=path), "
            "with a callback that parks the fit after each batch (a scheduler your module "
            "keeps and configure_optimizers() does not return is in no Lightning checkpoint)")
        raise TargetError(
            module, f"configure_optimizers() returns {len(optimizers)} optimizers, and "
            "resumecheck's Lightning adapter checks modules with exactly one (a limit of "
            "resumecheck, not a fault of your program, which it has not judged)", advice)
    return optimizers[0]


def _schedulers_state(configs: Any) -> dict[str, Any]:
    return {str(i): config.scheduler.state_dict() for i, config in enumerate(configs)}


def _load_schedulers(configs: Any, state: dict[str, Any]) -> None:
    for i, config in enumerate(configs):
        if str(i) in state:
            config.scheduler.load_state_dict(state[str(i)])


def _not_in_state(callback: Any) -> types.SimpleNamespace:
    """The attributes of a stateful callback that its ``state_dict()`` does not
    return, which the ``callbacks`` component compares already."""
    try:
        state = callback.state_dict() or {}
    except Exception:  # (a state_dict() that fails: the capture says it; look at everything)
        state = {}
    return fields_beside(callback, state)


FIT_START = "fit_start"
"""The stage after the module's ``setup()`` (and ``configure_model``), where
Lightning's restore puts the module's state back and calls its
``on_load_checkpoint``: the callbacks' ``on_fit_start``, which Lightning calls
right after that restore, before the module's own ``on_fit_start``."""


def _module_loads_again_at_fit_start(program: LightningProgram) -> None:
    """The engine restores ``params`` into a fresh build before its loop runs;
    Lightning's own restore loads the module after its ``setup()``, which may
    make layers anew (a trial's correct module re-initialised its head there:
    the engine's resume departed, and a WARNING said its load_state_dict()
    lost state). A load before the loop starts is made again at ``FIT_START``."""
    module = program.module
    owner = weakref.ref(program)  # (the loop's thread holds the module: not the program)

    # Bound to the module, so that a deepcopy of it (SWA's averaged model, an EMA's
    # copy) gets it bound to the copy, whose loads are the copy's own: unbound, a
    # closure over this module's load, the callback's load of its average went into
    # the module itself, and a correct program's weights read as lost (trial 228).
    def loads(self: Any, state_dict: Any, *args: Any, **kwargs: Any) -> Any:
        out = type(self).load_state_dict(self, state_dict, *args, **kwargs)
        built = owner()
        if built is not None and self is module and not built._started:
            # (Lightning's own restore comes once the loop has started)
            built.pending.setdefault(FIT_START, []).append(
                lambda: again(state_dict, *args, **kwargs))
        return out

    def again(state_dict: Any, *args: Any, **kwargs: Any) -> None:
        type(module).load_state_dict(module, state_dict, *args, **kwargs)
        # (checked at once: where it differs right after the restore, a hook that
        # ran before the first step changed it, not the module's load)
        built = owner()
        if built is not None and digest(module.state_dict()) == digest(state_dict):
            built.loaded_back.add(PARAMS)

    module.load_state_dict = types.MethodType(loads, module)


BEFORE_OPTIMIZERS = "configure_optimizers"
"""The stage right before the module's ``configure_optimizers()``, where
Lightning's restore calls the module's ``on_load_checkpoint`` (after its
``setup()`` and ``configure_model()``; its strategy makes the optimizers
after the restore, unless it restores after its setup)."""


def _hooks_stage(trainer: Any) -> str:
    """Where the engine's restore calls the module's ``on_load_checkpoint``:
    where Lightning's does (trial 508: a hook that kept the state for
    ``configure_optimizers`` to apply was called after it, and the engine's own
    resume of a correct program read its plateau as lost)."""
    after = getattr(trainer.strategy, "restore_checkpoint_after_setup", False)
    return FIT_START if after else BEFORE_OPTIMIZERS


def _hooks_component(program: LightningProgram, trainer: Any) -> LiveState:
    """The ``hooks`` component: loaded where Lightning's restore calls the
    module's ``on_load_checkpoint``, read back once the optimizers are made."""
    stage = _hooks_stage(trainer)
    return LiveState(program, lambda: trainer, dump=_hooks_state, load=_load_hooks, stage=stage,
                     verify_as=HOOKS, verify_stage=FIT_START if stage != FIT_START else None)


def _restores_before_optimizers(program: LightningProgram) -> None:
    """Runs what is queued for ``BEFORE_OPTIMIZERS`` as Lightning's strategy asks
    the module for its optimizers (``on_fit_start`` runs what is left, where
    none were asked for)."""
    module = program.module
    pending = program.pending
    pl = require("lightning.pytorch", "resumecheck.frameworks.lightning")
    if type(module).configure_optimizers is pl.LightningModule.configure_optimizers:
        return  # (none of its own: Lightning's check that it has one stands)

    def configure_optimizers(self: Any) -> Any:
        run_pending(pending, BEFORE_OPTIMIZERS)
        return type(self).configure_optimizers(self)

    module.configure_optimizers = types.MethodType(configure_optimizers, module)


HOOKS = "hooks"
"""The component of what a module's ``on_save_checkpoint()`` adds to Lightning's
checkpoint (a trial's counter kept so; the engine's own restore lost it, and
every report of the correct program warned that the declared state was incomplete)."""


def _saves_own_state(module: Any) -> bool:
    """Whether the module's class overrides ``on_save_checkpoint``."""
    pl = require("lightning.pytorch", "resumecheck.frameworks.lightning")
    return type(module).on_save_checkpoint is not pl.LightningModule.on_save_checkpoint


def _dump(trainer: Any) -> dict[str, Any]:
    """Lightning's checkpoint of the trainer as it is, without the module's own
    ``on_save_checkpoint`` (what it adds is asked for apart) and without the
    callbacks (a capture must not call their ``on_save_checkpoint``, which a
    callback that counts its saves would count)."""
    module, callbacks = trainer.lightning_module, trainer.callbacks
    module.on_save_checkpoint = lambda checkpoint: None  # (Lightning calls it by name)
    trainer.callbacks = []
    try:
        return dict(trainer._checkpoint_connector.dump_checkpoint(weights_only=False))
    finally:
        trainer.callbacks = callbacks
        del module.on_save_checkpoint


def _hooks_state(trainer: Any) -> dict[str, Any]:
    """What the module's ``on_save_checkpoint`` adds to Lightning's checkpoint
    (the keys it puts beside Lightning's own; plain data only, as Lightning's
    resume loads it with ``weights_only``)."""
    base = _dump(trainer)
    checkpoint = dict(base)
    trainer.lightning_module.on_save_checkpoint(checkpoint)
    added = {k: v for k, v in checkpoint.items() if k not in base}
    return {k: v for k, v in added.items() if _plain(v)}


def _load_hooks(trainer: Any, state: dict[str, Any]) -> None:
    """The module's ``on_load_checkpoint`` given Lightning's checkpoint of the
    fresh build with the saved additions in it, as Lightning's restore gives
    it the whole checkpoint (what the hook changes of Lightning's own entries
    there, the engine restores through the other components)."""
    trainer.lightning_module.on_load_checkpoint({**_dump(trainer), **copy.deepcopy(state)})


def _stateful_callbacks(callbacks: Any) -> list[Any]:
    """Your own callbacks that keep state through Lightning's checkpoint: those
    whose class defines ``state_dict()`` (Lightning saves each one's under its
    ``state_key`` and gives it back to its ``load_state_dict()``)."""
    pl = require("lightning.pytorch", "resumecheck.frameworks.lightning")
    return [callback for _, callback in user_callbacks(callbacks)
            if type(callback).state_dict is not pl.Callback.state_dict
            and _plain_at_build(callback)]


def _plain_at_build(callback: Any) -> bool:
    """``_plain`` of a callback's state as it is at the build; one whose
    ``state_dict()`` cannot run yet (a trial's EMA made its weights in
    ``on_fit_start``, and Lightning asks for it only at a save) is taken, and
    asked again where the check captures it."""
    try:
        return _plain(callback.state_dict())
    except Exception:
        return True


def _plain(state: Any) -> bool:
    """Whether a callback's state (as it is at the build) is plain data, which
    ``torch.load(weights_only=True)`` loads, as Lightning's resume does: one
    that is not (numpy's own state) fails that resume, which the check then
    reports, and is left out of the engine's captures, which would refuse it."""
    if isinstance(state, dict):
        return all(_plain(v) for v in state.values())
    if isinstance(state, (list, tuple)):
        return all(_plain(v) for v in state)
    # (by type: numpy's float64 is a float, and weights_only refuses it)
    return isinstance(state, torch.Tensor) or type(state) in (int, float, bool, str, bytes,
                                                              type(None))


def _callbacks_state(callbacks: list[Any]) -> dict[str, Any]:
    """Each callback's state as Lightning's checkpoint holds it: only those
    whose ``state_dict()`` is not empty (Lightning keeps no entry for one
    that returns None or ``{}``)."""
    return {callback.state_key: state for callback in callbacks
            if (state := callback.state_dict())}


def _load_callbacks(callbacks: list[Any], state: dict[str, Any]) -> None:
    """As Lightning's restore: only a callback whose entry is there and not
    empty is given it (a trial's state_dict() that returned None was given
    None by the engine's restore, which Lightning never does, and failed)."""
    for callback in callbacks:
        if state.get(callback.state_key):
            callback.load_state_dict(state[callback.state_key])


DATAMODULE = "datamodule"
"""The component of a ``LightningDataModule`` whose class defines
``state_dict()``: Lightning's checkpoint holds what it returns (under the
class's name) and gives it back to its ``load_state_dict()`` as it restores
the module and the callbacks (a trial's datamodule kept its curriculum's level
there; the engine's own restore lost it, and the correct program's report
warned that the declared state was incomplete)."""


def _stateful_datamodule(data: Any) -> Any:
    """``data`` where it is a LightningDataModule whose class defines
    ``state_dict()`` with plain data in it at the build (else None)."""
    pl = require("lightning.pytorch", "resumecheck.frameworks.lightning")
    if not isinstance(data, pl.LightningDataModule) \
            or type(data).state_dict is pl.LightningDataModule.state_dict:
        return None
    return data if _plain_at_build(data) else None


def _datamodule_state(datamodule: Any) -> dict[str, Any]:
    """What Lightning's checkpoint holds of the datamodule (nothing where its
    ``state_dict()`` is empty: Lightning then keeps no entry)."""
    return dict(datamodule.state_dict() or {})


def _load_datamodule(datamodule: Any, state: dict[str, Any]) -> None:
    """As Lightning's restore: given only a state that is not empty."""
    if state:
        datamodule.load_state_dict(copy.deepcopy(state))


def _datamodule_roots(data: Any) -> list[tuple[str, Any]]:
    """The datamodule's own attributes (not Lightning's, nor what its
    ``state_dict()`` returns, which the ``datamodule`` component compares),
    to be looked at like the program's own: a level it keeps and its state
    leaves out is named."""
    pl = require("lightning.pytorch", "resumecheck.frameworks.lightning")
    if not isinstance(data, pl.LightningDataModule):
        return []
    try:  # (the base class's is empty)
        state = data.state_dict() or {}
    except Exception:  # (a state_dict() that fails: the capture says it)
        state = {}
    lightning_own = set(vars(pl.LightningDataModule()))
    fields = {k: v for k, v in vars(fields_beside(data, state)).items() if k not in lightning_own}
    return [(f"datamodule ({type(data).__name__})", types.SimpleNamespace(**fields))]


def _batches_of(trainer: Any, data: Any) -> int | None:
    """The batches of an epoch where the data tells (``LightningProgram._batches``)."""
    loader = data[0] if isinstance(data, (list, tuple)) and len(data) == 1 else data
    if getattr(trainer, "limit_train_batches", None) != 1.0 \
            or not isinstance(loader, torch.utils.data.DataLoader):
        # (a datamodule, or a loader function: the fit loop's count, once it
        # has made the loader; a trial's datamodule had no epoch boundaries;
        # trial 756: limit_train_batches, which that count applies)
        batches = getattr(trainer, "num_training_batches", None)
        if not isinstance(batches, int) or isinstance(batches, bool):
            return None
        return batches if batches > 0 else None
    try:
        return len(loader) or None
    except TypeError:  # (an iterable dataset without a length)
        return None


def _rng_advice(loaders: list[Any]) -> str:
    """``LightningProgram.checkpoint_advice`` of the random streams, by whether
    the training loaders each have a generator of their own (the runner reads
    the advice again at a segment's end, once the fit loop made them)."""
    if loaders and all(getattr(loader, "generator", None) is not None for loader in loaders):
        # (trial 591: a loader with a generator of its own draws nothing from torch's
        # stream as Lightning makes its iterator: on_load_checkpoint, its correct twin,
        # was told to wait for on_train_batch_start)
        return ("Lightning's checkpoint holds no random stream: save them in "
                "on_save_checkpoint(checkpoint) of your LightningModule or a Callback "
                "(torch.get_rng_state(), and each generator's get_state() your steps or "
                "loaders draw from); torch's stream, and a generator your steps alone draw "
                "from, can be set again in its on_load_checkpoint(): your training loader has "
                "a generator of its own, which the iterator Lightning makes after the load "
                "draws from, not torch's stream; that loader's generator must be set once the "
                "resumed epoch's iterator exists, in the first on_train_batch_start after the "
                "load")
    # (trial 392: set in on_load_checkpoint, the resumed loader's new iterator drew its
    # seed from the stream just restored; trial 531: a generator given to a
    # StatefulDataLoader then, as the advice said, came back elsewhere at the next epoch;
    # trial 615: set as advised, a resume at an epoch's last batch departed)
    return ("Lightning's checkpoint holds no random stream: save them in your "
            "LightningModule's on_save_checkpoint(checkpoint) (torch.get_rng_state(), "
            "and each generator's get_state() your steps or loaders draw from) and set "
            "them again once the resumed epoch's loader iterator exists, in the first "
            "on_train_batch_start after the load, with no seed after it (a "
            "seed_everything in on_train_start undoes it): Lightning makes that "
            "iterator after on_load_checkpoint, and it draws its seed from the torch "
            "stream, which set before it then runs ahead of the run's; a checkpoint "
            "saved before that batch keeps what is still to be set, not the streams "
            "as they are then. A checkpoint of an epoch's last batch is another case: "
            "there the uninterrupted run too makes the next epoch's iterator after the "
            "save, so streams set at that batch may stand behind it (--resume-at an "
            "epoch's end checks it)")


def _train_loaders(trainer: Any) -> list[Any]:
    """The training loaders Lightning's fit loop holds (none before it made them)."""
    combined = getattr(getattr(trainer, "fit_loop", None), "_combined_loader", None)
    return list(getattr(combined, "flattened", None) or [])


_LIBRARIES = ("torch", "torchdata", "lightning", "pytorch_lightning")


def _loader_roots(trainer: Any) -> list[tuple[str, Any]]:
    """The training loaders of the program's own class that Lightning's fit
    loop holds (made by its ``train_dataloader()``): what their
    ``state_dict()`` leaves out, which Lightning's checkpoint then lacks
    (trial 511: a loader kept its epoch beside the position its state_dict()
    returned, and no line named it). Not a library's loader (torch's,
    torchdata's): its own fields are no state of the program's."""
    out: list[tuple[str, Any]] = _sampler_generators(trainer) + _own_samplers(trainer)
    for loader in _train_loaders(trainer):
        if type(loader).__module__.split(".")[0] in _LIBRARIES:
            continue
        out.append((f"{LIGHTNING_LOADER} ({type(loader).__name__})",
                    fields_beside(loader, _own_state(loader))))
    return out


def _own_state(obj: Any) -> dict[str, Any]:
    """What ``obj.state_dict()`` returns (empty where it has none, or it fails:
    then every field is looked at)."""
    try:
        state = obj.state_dict() if callable(getattr(obj, "state_dict", None)) else {}
    except Exception:
        state = {}
    return dict(state) if isinstance(state, Mapping) else {}


def _own_samplers(trainer: Any) -> list[tuple[str, Any]]:
    """The samplers of the program's own class with a ``state_dict()`` of their
    own, which a StatefulDataLoader's state holds, in the training loaders:
    the fields it leaves out (trial 883: a sampler kept its epoch and place,
    not the generator it shuffled each epoch from, and no line named it)."""
    out: list[tuple[str, Any]] = []
    seen: set[int] = set()
    for loader in _train_loaders(trainer):
        batches = getattr(loader, "batch_sampler", None)
        for where, sampler in (("sampler", getattr(loader, "sampler", None)),
                               ("batch_sampler", batches),
                               ("batch_sampler.sampler", getattr(batches, "sampler", None))):
            if sampler is None or not callable(getattr(sampler, "state_dict", None)) or \
                    type(sampler).__module__.split(".")[0] in _LIBRARIES or \
                    not hasattr(sampler, "__dict__") or id(sampler) in seen:
                continue
            seen.add(id(sampler))
            out.append((f"{LIGHTNING_LOADER}.{where} ({type(sampler).__name__})",
                        fields_beside(sampler, _own_state(sampler))))
    return out


def _sampler_generators(trainer: Any) -> list[tuple[str, Any]]:
    """The generators the samplers of the training loaders keep (torch's
    ``RandomSampler(generator=...)``, a library's object, whose fields are
    otherwise not looked at): a loader's ``state_dict()`` holds a stateless
    sampler's position alone, so a restart draws its order from the build's
    generator (trial 737: a StatefulDataLoader over such a sampler read
    another epoch's order after a resume, and no line named the generator)."""
    out: list[tuple[str, Any]] = []
    seen: set[int] = set()
    for loader in _train_loaders(trainer):
        batches = getattr(loader, "batch_sampler", None)
        for where, sampler in (("sampler", getattr(loader, "sampler", None)),
                               ("batch_sampler.sampler", getattr(batches, "sampler", None))):
            generator = getattr(sampler, "generator", None)
            # (not a sampler with a state of its own: torchdata's RandomSampler keeps its
            # generator in its iterator's state_dict(), which its loader's holds; trial 761
            # was told to use the one it used)
            if isinstance(generator, torch.Generator) and id(sampler) not in seen \
                    and not callable(getattr(sampler, "state_dict", None)) \
                    and not type(sampler).__module__.startswith("torchdata."):
                seen.add(id(sampler))
                out.append((f"{LIGHTNING_LOADER}.{where}",
                            types.SimpleNamespace(generator=generator)))
    return out


def _dataset_roots(data: Any) -> list[tuple[str, Any]]:
    """The training loader's dataset, where the target's data is a loader (or a
    list of one) and the dataset is the program's own: an epoch it counts
    itself, which no checkpoint holds, is named (trial 368: a dataset that
    counted its epochs in a hook went unnamed; the Trainer's is looked at)."""
    loader = data[0] if isinstance(data, (list, tuple)) and len(data) == 1 else data
    if not isinstance(loader, torch.utils.data.DataLoader):
        return []
    return user_dataset(LIGHTNING_DATASET, loader.dataset)


def _driver_base() -> type:
    pl = require("lightning.pytorch", "resumecheck.frameworks.lightning")
    return pl.Callback  # type: ignore[no-any-return]


def _loop_record(step: int, losses: list[torch.Tensor], picked: list[torch.Tensor]
                 ) -> LoopRecord:
    """One optimizer step's record: its batches' mean loss and their samples."""
    return LoopRecord(step=step, loss=torch.stack(losses).mean() if losses else float("nan"),
                      samples=torch.cat([p.double() for p in picked]) if picked else None)


def _Driver(channel: Any, pending: dict[str, Any], samples: Callable[[Any], Any] | None) -> Any:
    """The adapter's callback: parks the loop before its first step and after
    each optimizer step (in ``on_train_batch_end``: Lightning has stepped the
    step-interval schedulers by then, and ``ModelCheckpoint`` saves there)."""

    class Driver(_driver_base()):  # type: ignore[misc]
        def __init__(self) -> None:
            self.losses: list[torch.Tensor] = []
            self.samples: list[torch.Tensor] = []
            self.reported = -1
            self.validated: set[int] = set()
            """The optimizer steps right after whose last batch the fit loop validated
            (accumulating, trial 239's ran after the next step's first micro-batch)."""
            self.moved = _AfterPark()
            self._stepped = False  # (the last training batch ended an optimizer step)
            self.epoch_ends: list[int] = []  # (the steps after which an epoch ended)
            self.ends_inside: set[int] = set()
            """Of ``epoch_ends``, those after which the epoch's last batches began the
            next optimizer step (trial 875 stepped by hand every 3 batches: its epochs
            ended inside steps 4 and 7, read "after steps 3, 6")."""
            self.batches_per_step: set[int] = set()  # (the training batches of each step)

        def on_validation_end(self, trainer: Any, pl_module: Any) -> None:
            if not trainer.sanity_checking and self._stepped:
                self.validated.add(int(trainer.global_step))

        def setup(self, trainer: Any, pl_module: Any, stage: str) -> None:
            run_pending(pending, "setup")  # before Lightning's restore and its fit loop

        def on_train_epoch_end(self, trainer: Any, pl_module: Any) -> None:
            self.epoch_ends.append(int(trainer.global_step))
            if self.samples:  # (batches since the last optimizer step)
                self.ends_inside.add(int(trainer.global_step))

        def on_fit_start(self, trainer: Any, pl_module: Any) -> None:
            run_pending(pending, BEFORE_OPTIMIZERS)  # (none were asked for: at the latest)
            run_pending(pending, FIT_START)  # right after Lightning's restore of the module

        def on_train_start(self, trainer: Any, pl_module: Any) -> None:
            self.reported = trainer.global_step  # parked after every hook: see above

        def on_train_batch_end(self, trainer: Any, pl_module: Any, outputs: Any,
                               batch: Any, batch_idx: int) -> None:
            loss = outputs["loss"] if isinstance(outputs, Mapping) else outputs
            if isinstance(loss, torch.Tensor):
                self.losses.append(loss.detach().float().reshape(()) * _divided_by(trainer))
            picked = samples(batch) if samples is not None else batch_fingerprint(batch)
            self.samples.append(torch.as_tensor(picked).reshape(-1))
            self._stepped = trainer.global_step != self.reported
            if not self._stepped:
                return  # accumulating: no optimizer step yet
            self.reported = trainer.global_step
            self.batches_per_step.add(len(self.samples))
            losses, self.losses = self.losses, []
            picked, self.samples = self.samples, []
            record = _loop_record(int(trainer.global_step), losses, picked)
            self.moved.park(int(trainer.global_step), trainer)
            channel.park("step", record)

    return Driver()


class _AfterPark:
    """What the fit loop changes after the adapter parks it at a step's end
    (its checkpoint hook) and before the next batch begins."""

    def __init__(self) -> None:
        self.rates: set[int] = set()
        """The optimizer steps after whose park the learning rates changed (the
        module's on_train_batch_end, an epoch-end step)."""
        self.plateaus: set[int] = set()
        """The optimizer steps after whose park a plateau scheduler's counts
        changed (Lightning steps one of interval "step" after
        on_train_batch_end: trial 605)."""
        self._parked: tuple[int, list[float], list[str]] | None = None

    def park(self, step: int, trainer: Any) -> None:
        self._parked = (step, _rates(trainer), _plateaus(trainer))

    def before_the_batch(self, trainer: Any) -> None:  # (before any callback's)
        if self._parked is None:
            return
        step, rates, plateaus = self._parked
        if _rates(trainer) != rates:
            self.rates.add(step)
        if _plateaus(trainer) != plateaus:
            self.plateaus.add(step)
        self._parked = None


def _RatesWatch(driver: Any) -> Any:
    """A callback first in the list, so that what the program's callbacks set
    as a batch begins (and set again after a restart) is not taken for a
    change made after the checkpoint."""

    class RatesWatch(_driver_base()):  # type: ignore[misc]
        def on_train_batch_start(self, trainer: Any, pl_module: Any, batch: Any,
                                 batch_idx: int) -> None:
            driver.moved.before_the_batch(trainer)

    return RatesWatch()


def _rates(trainer: Any) -> list[float]:
    """Every optimizer's learning rates, group by group."""
    return [float(group["lr"]) for optimizer in trainer.optimizers
            for group in optimizer.param_groups]


def _divided_by(trainer: Any) -> int:
    """What Lightning divided a training_step's loss by before it reached
    on_train_batch_end: the accumulation, under automatic optimization (trial
    615: every loss figure of a run accumulating 4 batches was a quarter of
    the one its module computed)."""
    accumulate = getattr(trainer, "accumulate_grad_batches", 1)
    automatic = getattr(trainer.lightning_module, "automatic_optimization", True) is not False
    return accumulate if automatic and isinstance(accumulate, int) and accumulate > 1 else 1


def _plateaus(trainer: Any) -> list[str]:
    """Every ReduceLROnPlateau's counts, in words (the best value, the bad
    epochs, the cooldown, its count of steps)."""
    return [repr([getattr(config.scheduler, name, None) for name in
                  ("best", "num_bad_epochs", "cooldown_counter", "last_epoch")])
            for config in getattr(trainer, "lr_scheduler_configs", None) or []
            if getattr(config, "reduce_on_plateau", False)]


def _accumulation_schedule(trainer: Any) -> dict[int, int] | None:
    """A ``GradientAccumulationScheduler``'s accumulation by epoch, where the
    run has one (None: the accumulation is the same in every epoch)."""
    for callback in getattr(trainer, "callbacks", None) or []:
        scheduling = getattr(callback, "scheduling", None)
        if type(callback).__name__ == "GradientAccumulationScheduler" and isinstance(
                scheduling, dict) and 0 in scheduling:
            return {int(k): int(v) for k, v in scheduling.items()}
    return None


@contextlib.contextmanager
def _announcer_quiet() -> Iterator[None]:
    """Lightning's own INFO lines off while the check builds and runs a Trainer,
    on again after: it announces the hardware on every Trainer and each restore
    of a checkpoint, once per restart here (a trial's stderr and pytest capture
    were flooded with "Restoring states from the checkpoint path at ...")."""
    announcer = logging.getLogger("lightning.pytorch.utilities.rank_zero")
    level = announcer.level
    announcer.setLevel(logging.WARNING)
    try:
        yield
    finally:
        announcer.setLevel(level)
