"""Targets of the Lightning and HuggingFace Trainer tests (imported by spec, so
process-isolated restarts can import them in a fresh interpreter).

Each target is the README's common case, at most five lines; the training
scripts are the examples' (examples/frameworks/*_train.py).
"""

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "frameworks"
sys.path.insert(0, str(EXAMPLES))

from resumecheck.frameworks import lightning_target, trainer_target  # noqa: E402

# -- Lightning ----------------------------------------------------------------


def lightning_train():
    import lightning_train
    return lightning_train


# the common case: a module and its data -> a target (the README's five lines)
LIGHTNING_EXACT = lightning_target(
    module=lambda: lightning_train().TinyClassifier(dropout=0.0),
    data=lambda: lightning_train().stateful_loader(), steps=8, resume_at=(3,))

# trial 267: a plain DataLoader, which Lightning cannot put back inside an epoch
LIGHTNING_PLAIN_LOADER = lightning_target(
    module=lambda: lightning_train().TinyClassifier(dropout=0.0),
    data=lambda: lightning_train().loader(), steps=8, resume_at=(3,))


# trial 368: max_epochs bounds the run; resumed at the first epoch's last batch,
# Lightning counts that epoch twice and its loop stops an epoch early
LIGHTNING_MAX_EPOCHS = lightning_target(
    module=lambda: lightning_train().TinyClassifier(dropout=0.0),
    data=lambda: lightning_train().stateful_loader(), trainer=lambda: {"max_epochs": 2},
    steps=10, resume_at=(5,))


def _noisy_by_epoch(counts_itself: bool, saved: bool = False):
    """Trial 368: a dataset whose noise follows its epoch, which a hook sets at
    each epoch's start: counted by the dataset itself (``counts_itself``: a
    restart counts from 0, and no checkpoint holds it) or taken from the
    epoch Lightning restores."""
    import torch
    from torchdata.stateful_dataloader import StatefulDataLoader

    class Noisy(torch.utils.data.Dataset):
        def __init__(self) -> None:
            self.rows, self.epoch = lightning_train().rows(), 0

        def __len__(self) -> int:
            return len(self.rows)

        def __getitem__(self, i: int):
            x, y = self.rows[i]
            g = torch.Generator().manual_seed(self.epoch * 1000 + i)
            return x + 0.1 * torch.randn(x.shape, generator=g), y

    class SavedNoisy(Noisy):
        def state_dict(self) -> dict:
            return {"epoch": self.epoch}

        def load_state_dict(self, state: dict) -> None:
            self.epoch = state["epoch"]

    class Module(lightning_train().TinyClassifier):
        def on_train_epoch_start(self) -> None:
            data = self.trainer.train_dataloader.dataset
            data.epoch = data.epoch + 1 if counts_itself else self.current_epoch

    return lightning_target(module=lambda: Module(dropout=0.0),
                            data=lambda: StatefulDataLoader(SavedNoisy() if saved else Noisy(),
                                                            batch_size=8, shuffle=True),
                            steps=9, resume_at=(7,))


DATASET_COUNTS_EPOCHS = _noisy_by_epoch(True)
DATASET_EPOCH_FROM_LIGHTNING = _noisy_by_epoch(False)
DATASET_COUNTS_EPOCHS_SAVED = _noisy_by_epoch(True, saved=True)


def _scheduler_dropped():
    return lightning_target(
        module=lambda: lightning_train().TinyClassifier(dropout=0.0),
        data=lambda: lightning_train().stateful_loader(), steps=8, resume_at=(3,),
        trainer={"callbacks": [lightning_train().DropSchedulerState()]})


def _reseeding_module():
    """A user's module that calls seed_everything in on_train_start: after a
    resume it reseeds the streams Lightning does not restore."""
    import lightning.pytorch as pl

    class Reseeds(lightning_train().TinyClassifier):
        def on_train_start(self):
            pl.seed_everything(42, verbose=False)

    return Reseeds(dropout=0.2)


def _stream_saved_not_loaded():
    """Trial 856: a module that writes torch's stream into Lightning's checkpoint in
    on_save_checkpoint and has no on_load_checkpoint. Its steps draw enough that the
    restart's stream, three steps in, is told where the build left it, not a count
    of draws behind."""
    import torch

    class SavesTheStream(lightning_train().TinyClassifier):
        def on_save_checkpoint(self, checkpoint):
            checkpoint["torch_rng"] = torch.get_rng_state()

        def training_step(self, batch, batch_idx):
            torch.rand(8192)  # (an augmentation's draws)
            return super().training_step(batch, batch_idx)

    return SavesTheStream(dropout=0.2)


LIGHTNING_STREAM_SAVED_NOT_LOADED = lightning_target(
    module=_stream_saved_not_loaded, data=lambda: lightning_train().stateful_loader(),
    steps=8, resume_at=(3,))


LIGHTNING_RESEED = lightning_target(
    module=_reseeding_module, data=lambda: lightning_train().stateful_loader(), steps=8,
    resume_at=(3,))


def _torch_stream_callback():
    """A callback of the user's that keeps torch's stream in Lightning's checkpoint."""
    import lightning.pytorch as pl

    class TorchStream(pl.Callback):
        def state_dict(self):
            return {"torch": torch.get_rng_state()}

        def load_state_dict(self, state):
            torch.set_rng_state(state["torch"])

    import torch

    return TorchStream()


def _reseed_kept():
    return lightning_target(
        module=_reseeding_module, data=lambda: lightning_train().stateful_loader(), steps=8,
        resume_at=(3,), trainer={"callbacks": [_torch_stream_callback()]})


def _numpy_state_callback():
    """A callback that puts numpy's global state, as numpy returns it (an
    ndarray), into Lightning's checkpoint."""
    import lightning.pytorch as pl
    import numpy as np

    class NumpyState(pl.Callback):
        def state_dict(self):
            return {"numpy": np.random.get_state()}

        def load_state_dict(self, state):
            np.random.set_state(state["numpy"])

    return NumpyState()


def _numpy_in_checkpoint():
    return lightning_target(
        module=lambda: lightning_train().TinyClassifier(dropout=0.0),
        data=lambda: lightning_train().stateful_loader(), steps=8, resume_at=(3,),
        trainer={"callbacks": [_numpy_state_callback()]})


def _counting_callback(saves: bool = True, reads: str = "count"):
    """A callback that keeps state (a batch counter that halves the learning rate
    after four batches) and saves it in Lightning's checkpoint (``saves``; else
    it defines no state_dict(), and Lightning's checkpoint has nothing of it).
    Its load reads the key ``reads``, where it finds one (trial 407: a key
    renamed on the save's side alone)."""
    import lightning.pytorch as pl

    class ForgetsItsCount(pl.Callback):
        def __init__(self):
            self.count = 0

        def on_train_batch_start(self, trainer, module, batch, batch_idx):
            self.count += 1
            if self.count == 5:
                for group in trainer.optimizers[0].param_groups:
                    group["lr"] *= 0.5

    if not saves:
        return ForgetsItsCount()

    class HalvesTheLrAfterFour(ForgetsItsCount):
        def state_dict(self):
            return {"count": self.count}

        def load_state_dict(self, state):
            self.count = state.get(reads, self.count)

    return HalvesTheLrAfterFour()


def _own_model_checkpoint():
    """A ModelCheckpoint subclass of the user's own, saving every other step
    under the check's root (trial 411: its paths, each build's own root, read
    as a callback that lost its state, on a correct program)."""
    import lightning.pytorch as pl

    class StepCheckpoint(pl.callbacks.ModelCheckpoint):
        """Not Lightning's class: its state is compared as the user's."""

    return lightning_target(
        module=lambda: lightning_train().TinyClassifier(dropout=0.0),
        data=lambda: lightning_train().stateful_loader(), steps=8, resume_at=(3,),
        trainer=lambda: {"callbacks": [StepCheckpoint(every_n_train_steps=2, save_top_k=-1)]})


def _counting_callback_target(per_build: bool, saves: bool = True, reads: str = "count"):
    settings = lambda: {"callbacks": [_counting_callback(saves, reads)]}  # noqa: E731
    return lightning_target(
        module=lambda: lightning_train().TinyClassifier(dropout=0.0),
        data=lambda: lightning_train().stateful_loader(), steps=8, resume_at=(3,),
        trainer=settings if per_build else settings())


def _plateau_callbacks():
    """A callback of the user's own whose state_dict() returns its best loss and
    patience count (and not a note it keeps for display), beside the run's own
    ModelCheckpoint (a trial: Lightning refused a ModelCheckpoint with the
    adapter's checkpointing off, and fields the callback's state_dict()
    returned were said to be held by no declared component)."""
    import lightning.pytorch as pl

    class Plateau(pl.Callback):
        def __init__(self):
            self.best, self.wait, self.note = float("inf"), 0, ""

        def on_train_batch_end(self, trainer, module, outputs, batch, batch_idx):
            loss = float(outputs["loss"]) if isinstance(outputs, dict) else float(outputs)
            self.best, self.wait = (loss, 0) if loss < self.best else (self.best, self.wait + 1)
            self.note = f"best {self.best:.3f}"

        def state_dict(self):
            return {"best": self.best, "wait": self.wait}

        def load_state_dict(self, state):
            self.best, self.wait = state["best"], state["wait"]

    return [Plateau(), pl.callbacks.ModelCheckpoint(every_n_train_steps=4)]


def _averaging_callback():
    """A running mean of the loss whose state_dict() keeps the mean but not its
    count (trial 240's ExportableState): restored at 3, the count starts again,
    the mean drifts from the uninterrupted run's, and a second restart puts in
    the drifted mean, which its load gives back."""
    import lightning.pytorch as pl

    class Average(pl.Callback):
        def __init__(self):
            self.average, self.count = 0.0, 0

        def on_train_batch_end(self, trainer, module, outputs, batch, batch_idx):
            loss = float(outputs["loss"]) if isinstance(outputs, dict) else float(outputs)
            self.count += 1
            self.average += (loss - self.average) / self.count

        def state_dict(self):
            return {"average": self.average}

        def load_state_dict(self, state):
            self.average = state["average"]

    return [Average()]


LIGHTNING_AVERAGE_LOSES_COUNT = lightning_target(
    module=lambda: lightning_train().TinyClassifier(dropout=0.0),
    data=lambda: lightning_train().stateful_loader(), steps=8, resume_at=(3, 6),
    trainer=lambda: {"callbacks": _averaging_callback()})


def _ema_callback():
    """Trial 894's: an average of the weights whose decay warms up with its count
    of updates; its state_dict() keeps the average, not the count."""
    import lightning.pytorch as pl
    import torch

    class EMA(pl.Callback):
        def __init__(self):
            self.shadow, self.updates = None, 0

        @property
        def state_key(self):  # (as a module-level class's: its qualified name is <locals>)
            return "EMA"

        def on_train_batch_end(self, trainer, module, outputs, batch, batch_idx):
            decay = min(0.999, (1 + self.updates) / (10 + self.updates))
            self.updates += 1
            with torch.no_grad():
                weights = {k: v.detach().clone() for k, v in module.state_dict().items()}
                self.shadow = weights if self.shadow is None else {
                    k: decay * self.shadow[k] + (1 - decay) * v for k, v in weights.items()}

        def state_dict(self):
            return {"shadow": self.shadow}

        def load_state_dict(self, state):
            self.shadow = state["shadow"]

    return [EMA()]


LIGHTNING_EMA_LOSES_COUNT = lightning_target(
    module=lambda: lightning_train().TinyClassifier(dropout=0.0),
    data=lambda: lightning_train().stateful_loader(), steps=8, resume_at=(3,),
    trainer=lambda: {"callbacks": _ema_callback()})


LIGHTNING_PLATEAU = lightning_target(
    module=lambda: lightning_train().TinyClassifier(dropout=0.0),
    data=lambda: lightning_train().stateful_loader(), steps=8, resume_at=(3,),
    trainer=lambda: {"callbacks": _plateau_callbacks()})


def _reads_best_score():
    """A module that halves its rate once the run's ModelCheckpoint (no folder
    of its own: under the default root) has a best score (a re-check: each
    build had its own root, Lightning reloaded no best score into a resumed
    run, and a correct resume was said to diverge at the learning rate)."""
    import lightning.pytorch as pl
    import torch.nn.functional as F

    class ReadsBest(lightning_train().TinyClassifier):
        def training_step(self, batch, batch_idx):
            x, y = batch
            loss = F.cross_entropy(self.net(x), y)
            self.log("train_loss", loss)
            return loss

        def on_train_batch_start(self, batch, batch_idx):
            best = self.trainer.checkpoint_callback.best_model_score
            for group in self.trainer.optimizers[0].param_groups:
                group["lr"] = 1e-2 if best is None else 5e-3

    return lightning_target(
        module=lambda: ReadsBest(dropout=0.0), data=lambda: lightning_train().stateful_loader(),
        steps=6, resume_at=(3,), trainer=lambda: {"callbacks": [pl.callbacks.ModelCheckpoint(
            monitor="train_loss", save_top_k=2, every_n_train_steps=2)]})


def _validated_on_a_plateau(accumulate: int = 1, early_stopping: bool = False,
                            weighted: bool = False, patience: int = 0, plain: bool = False):
    """Validation every 2 batches, its loss stepping a ReduceLROnPlateau (a
    trial's shape): a resume from a checkpoint written at the end of a batch
    that the uninterrupted run validated after does not validate again.
    ``accumulate``: optimizer steps of that many batches (trial 239: validated
    after 3 batches, the first of step 2's 2, a resume from step 1's checkpoint
    runs that batch, and validates, again). ``early_stopping``: validation at each
    epoch's end only, an EarlyStopping on its loss (trial 249: resumed at an epoch's
    end, Lightning ran the epoch's end again without validating, and EarlyStopping
    found no metric). ``weighted``: no plateau, and a loss weight the module keeps as
    a plain attribute, in no checkpoint (trial 358: the WARNING put the departure to
    the validation, which changed nothing, and the lost weight second). ``patience``:
    the plateau's; a large one never cuts the rate, so only its count ends one step
    behind (trial 463: the why gave general guesses, not the validation skipped).
    ``plain``: no plateau, validated at each epoch's end, resumed at the second's
    (trial 697: the validation loop's counts of batches ended otherwise, every
    step alike)."""
    import lightning.pytorch as pl
    import torch
    import torch.nn.functional as F

    train = lightning_train()

    class Validates(train.TinyClassifier):
        def validation_step(self, batch, batch_idx):
            x, y = batch
            self.log("val_loss", F.cross_entropy(self.net(x), y))

    class OnPlateau(Validates):
        def configure_optimizers(self):
            optimizer = torch.optim.AdamW(self.parameters(), lr=1e-2)
            plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, factor=0.5,
                                                                 patience=patience,
                                                                 threshold=1.0)
            return {"optimizer": optimizer, "lr_scheduler": {
                "scheduler": plateau, "monitor": "val_loss", "interval": "step",
                "frequency": 2}}

    class Data(pl.LightningDataModule):
        def train_dataloader(self):
            return train.stateful_loader()

        def val_dataloader(self):
            return torch.utils.data.DataLoader(train.rows(), batch_size=20)

    class Weighted(Validates):
        alpha = 1.0

        def training_step(self, batch, batch_idx):
            self.alpha = 0.5 * self.alpha + 0.25
            return super().training_step(batch, batch_idx) * self.alpha

    if plain:
        return lightning_target(module=lambda: Validates(dropout=0.0), data=Data, steps=15,
                                resume_at=(10,), trainer={"val_check_interval": 5})
    if weighted:
        return lightning_target(module=lambda: Weighted(dropout=0.0), data=Data, steps=8,
                                resume_at=(4,), trainer={"val_check_interval": 2})
    if early_stopping:
        import lightning.pytorch as pl_

        return lightning_target(
            module=lambda: Validates(dropout=0.0), data=Data, steps=8, resume_at=(5,),
            trainer=lambda: {"callbacks": [pl_.callbacks.EarlyStopping(monitor="val_loss",
                                                                       patience=3)]})
    if accumulate > 1:  # (validated, no plateau: its metric would come after its step)
        return lightning_target(module=lambda: Validates(dropout=0.0), data=Data, steps=6,
                                resume_at=(1,), trainer={"val_check_interval": 3,
                                                         "accumulate_grad_batches": accumulate})
    return lightning_target(module=lambda: OnPlateau(dropout=0.0), data=Data, steps=8,
                            resume_at=(4,), trainer={"val_check_interval": 2})


def _plateau_per_epoch():
    """Trial 224's shape: a ReduceLROnPlateau stepped per epoch on the loss of
    a validation at each epoch's end; resumed inside the second epoch,
    Lightning's loop leaves out that epoch's plateau step (in the engine's
    restart too), and the rate departs at the third epoch's first step, 11."""
    import lightning.pytorch as pl
    import torch
    import torch.nn.functional as F

    train = lightning_train()

    class OnPlateau(train.TinyClassifier):
        def validation_step(self, batch, batch_idx):
            x, y = batch
            self.log("val_loss", F.cross_entropy(self.net(x), y))

        def configure_optimizers(self):
            optimizer = torch.optim.AdamW(self.parameters(), lr=1e-2)
            plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, factor=0.5,
                                                                 patience=0, threshold=1.0)
            return {"optimizer": optimizer, "lr_scheduler": {
                "scheduler": plateau, "monitor": "val_loss", "interval": "epoch"}}

    class Data(pl.LightningDataModule):
        def train_dataloader(self):
            return train.stateful_loader()

        def val_dataloader(self):
            return torch.utils.data.DataLoader(train.rows(), batch_size=20)

    return lightning_target(module=lambda: OnPlateau(dropout=0.0), data=Data, steps=12,
                            resume_at=(7,))


def _weights_averaged():
    """Lightning's StochasticWeightAveraging from the second epoch (trial 228): it
    keeps a deepcopy of the module, whose load_state_dict() of the averaged
    weights at a resume must go into the copy, not the module."""
    import torch
    from lightning.pytorch.callbacks import StochasticWeightAveraging

    train = lightning_train()

    class Cosine(train.TinyClassifier):
        def configure_optimizers(self):
            optimizer = torch.optim.SGD(self.parameters(), lr=0.05, momentum=0.9)
            return {"optimizer": optimizer,
                    "lr_scheduler": torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, 10)}

    return lightning_target(
        module=lambda: Cosine(dropout=0.0), data=lambda: train.stateful_loader(), steps=9,
        resume_at=(7,), trainer=lambda: {"callbacks": [
            StochasticWeightAveraging(swa_lrs=0.01, swa_epoch_start=1)]})


def _scheduler_stepped_after_the_save():
    """Trial 130's module: it steps its scheduler in its own on_train_batch_end,
    which Lightning calls after the callbacks' (the checkpoint is written
    there): every checkpoint holds the scheduler one step behind."""
    train = lightning_train()

    class StepsItsOwn(train.TinyClassifier):
        def on_train_batch_end(self, outputs, batch, batch_idx):
            self.lr_schedulers().step()

    return lightning_target(module=lambda: StepsItsOwn(dropout=0.0),
                            data=lambda: train.stateful_loader(), steps=8, resume_at=(3,))


def _average_updated_after_the_save():
    """Trial 706's module: an average of its weights kept in buffers of its own
    (saved with its state_dict) and updated in its own on_train_batch_end, which
    Lightning calls after the callbacks', where a checkpoint at a batch's end is
    written: every such checkpoint holds the average one update behind."""
    import torch

    train = lightning_train()

    class Averages(train.TinyClassifier):
        def __init__(self):
            super().__init__(dropout=0.0)
            for i, p in enumerate(self.net.parameters()):
                self.register_buffer(f"avg_{i}", p.detach().clone())

        def on_train_batch_end(self, outputs, batch, batch_idx):
            with torch.no_grad():
                for i, p in enumerate(self.net.parameters()):
                    getattr(self, f"avg_{i}").mul_(0.9).add_(p.detach(), alpha=0.1)

    return lightning_target(module=Averages, data=lambda: train.stateful_loader(), steps=8,
                            resume_at=(3,))


def _streams_in_module_hooks(kept: bool):
    """Trial 727's module: its on_save_checkpoint keeps torch's stream, which
    its on_load_checkpoint sets back (``kept``; else its checkpoint loses it),
    beside a plain shuffled loader, which draws the next epoch's order from that
    stream, and dropout; resumed at an epoch's last batch."""
    import torch

    train = lightning_train()

    class KeepsStream(train.TinyClassifier):
        def on_save_checkpoint(self, checkpoint):
            checkpoint["torch_rng"] = torch.get_rng_state()

        def on_load_checkpoint(self, checkpoint):
            if kept:
                torch.set_rng_state(checkpoint["torch_rng"])

    return lightning_target(module=KeepsStream, data=train.loader, steps=8, resume_at=(5,))


def _stateless_sampler_with_a_generator():
    """Trial 737's loader: a StatefulDataLoader over torch's RandomSampler given
    a generator of its own, which keeps no state: the loader's state_dict()
    holds the position alone, and a restart draws the order from the build's
    generator."""
    import torch
    from torchdata.stateful_dataloader import StatefulDataLoader

    rows = lightning_train().rows()
    sampler = torch.utils.data.RandomSampler(rows, generator=torch.Generator().manual_seed(3))
    return StatefulDataLoader(rows, batch_size=8, sampler=sampler)


def _stateful_sampler_with_a_generator():
    """Trial 761's loader: torchdata's RandomSampler, whose state_dict() keeps
    its generator, under a StatefulDataLoader: nothing to name."""
    import torch
    from torchdata.stateful_dataloader import StatefulDataLoader
    from torchdata.stateful_dataloader.sampler import RandomSampler

    rows = lightning_train().rows()
    sampler = RandomSampler(rows, generator=torch.Generator().manual_seed(3))
    return StatefulDataLoader(rows, batch_size=8, sampler=sampler)


def _plateau_stepped_after_the_save():
    """Trial 605's module: a ReduceLROnPlateau of interval "step" on the training
    loss, which Lightning steps after on_train_batch_end, where a step's
    checkpoint is written: every checkpoint holds its counts one update
    behind, and the restart lowers the rate at another step."""
    import torch
    import torch.nn.functional as F

    train = lightning_train()

    class Plateau(train.TinyClassifier):
        def training_step(self, batch, batch_idx):
            x, y = batch
            loss = F.cross_entropy(self.net(x), y)
            self.log("train_loss", loss)
            return loss

        def configure_optimizers(self):
            optimizer = torch.optim.SGD(self.parameters(), lr=0.5)
            plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(
                optimizer, factor=0.5, patience=1, threshold=10.0)  # (never a better loss)
            return {"optimizer": optimizer, "lr_scheduler": {
                "scheduler": plateau, "interval": "step", "monitor": "train_loss"}}

    return lightning_target(module=lambda: Plateau(dropout=0.0),
                            data=lambda: train.stateful_loader(), steps=8, resume_at=(2,))


def _a_loss_of_three(accumulate: int):
    """Every batch's loss is 3 (its gradient 0), accumulating ``accumulate``
    batches to a step: each step's loss is 3 whatever Lightning divides it by."""
    train = lightning_train()

    class Three(train.TinyClassifier):
        def training_step(self, batch, batch_idx):
            x, _ = batch
            return self.net(x).sum() * 0.0 + 3.0

    return lightning_target(module=lambda: Three(dropout=0.0), data=train.loader, steps=4,
                            resume_at=(2,), trainer={"accumulate_grad_batches": accumulate})


def _rate_scaled_as_each_batch_begins():
    """Trial 480's callback: as each batch begins it sets every group's rate to
    its scale times the rate it found, the scale halved every second step; its
    state_dict() keeps a count and leaves the scale out, so a restart sets the
    rate again, from a scale of 1 (not a change after the checkpoint that the
    restart misses)."""
    import lightning.pytorch as pl

    class Scales(pl.Callback):
        def __init__(self):
            self.seen, self.scale = 0, 1.0

        def on_train_batch_start(self, trainer, module, batch, batch_idx):
            for group in trainer.optimizers[0].param_groups:
                group["lr"] = 0.1 * self.scale

        def on_train_batch_end(self, trainer, module, outputs, batch, batch_idx):
            self.seen += 1
            if self.seen % 2 == 0:
                self.scale /= 2

        def state_dict(self):
            return {"seen": self.seen}

        def load_state_dict(self, state):
            self.seen = state["seen"]

    train = lightning_train()
    return lightning_target(module=lambda: train.TinyClassifier(dropout=0.0),
                            data=lambda: train.stateful_loader(), steps=8, resume_at=(3,),
                            trainer=lambda: {"callbacks": [Scales()]})


def _loader_skipping_at_an_epochs_end(wraps: bool = False, renamed: bool = False,
                                      twice: bool = False):
    """Trial 137's loader: it keeps its own position (batches read in the
    epoch) over a sampler whose order comes from the epoch Lightning sets,
    and restored at an epoch's end skips that many batches of the next
    epoch, the whole of it: the restart reads the epoch after (``wraps``: its
    fix, a position at the epoch's end starts the next epoch whole; ``renamed``:
    its load reads a key its save renamed, resumed inside an epoch, trial 411;
    ``twice``: the fix resumed at two epochs' ends, where the second restart's
    set_epoch reads Lightning's count of epochs, which the first left behind)."""
    import torch

    train = lightning_train()

    class ByEpoch(torch.utils.data.Sampler):
        def __init__(self, n):
            self.n, self.epoch = n, 0

        def set_epoch(self, epoch):  # (Lightning calls it as each epoch starts)
            self.epoch = epoch

        def __len__(self):
            return self.n

        def __iter__(self):
            return iter(torch.randperm(self.n, generator=torch.Generator().manual_seed(
                self.epoch)).tolist())

    class Skips(torch.utils.data.DataLoader):
        def __init__(self):
            rows = train.rows()
            # (a generator of its own: the iterator's base seed draws from it, not from
            # the global stream, which Lightning's checkpoint does not hold)
            super().__init__(rows, batch_size=8, sampler=ByEpoch(len(rows)),
                             generator=torch.Generator().manual_seed(0))
            self.read, self.skip = 0, 0

        def __iter__(self):
            skip, self.skip, self.read = self.skip, 0, self.skip
            for i, batch in enumerate(super().__iter__()):
                if i >= skip:
                    self.read += 1
                    yield batch

        def state_dict(self):
            return {"read": self.read}

        def load_state_dict(self, state):
            self.read = self.skip = state.get("position" if renamed else "read", 0)
            # (the bug: at an epoch's end, 5 of 5)
            if wraps and self.skip >= len(self):
                self.skip = 0

    import lightning.pytorch as pl

    class Data(pl.LightningDataModule):  # (as the trial's: the loader made in the hook)
        def train_dataloader(self):
            return Skips()

    return lightning_target(module=lambda: train.TinyClassifier(dropout=0.0), data=Data,
                            steps=13 if twice else 8,
                            resume_at=(5, 10) if twice else (3 if renamed else 5,))


def _timing_callback():
    """A callback that saves how long training has run: state no two runs share."""
    import time

    import lightning.pytorch as pl

    class Timer(pl.Callback):
        def __init__(self):
            self.began = time.perf_counter()
            self.steps = 0

        def on_train_batch_end(self, trainer, module, outputs, batch, batch_idx):
            self.steps += 1

        def state_dict(self):
            return {"elapsed": time.perf_counter() - self.began, "steps": self.steps}

        def load_state_dict(self, state):
            self.steps = state["steps"]

    return lightning_target(
        module=lambda: lightning_train().TinyClassifier(dropout=0.0),
        data=lambda: lightning_train().stateful_loader(), steps=8, resume_at=(3,),
        trainer=lambda: {"callbacks": [Timer()]})


def _loader_with_its_own_generator():
    """A StatefulDataLoader given a generator of its own, as a user seeds one
    shuffle apart from the global streams. Lightning's resume leaves that
    generator where torchdata puts it back, not where the run had it: the next
    epoch's order differs (a real relaunch reads other samples at step 6 too)."""
    from torchdata.stateful_dataloader import StatefulDataLoader

    return StatefulDataLoader(lightning_train().rows(), batch_size=8, shuffle=True,
                              generator=__import__("torch").Generator().manual_seed(0))


LIGHTNING_LOADER_GENERATOR = lightning_target(
    module=lambda: lightning_train().TinyClassifier(dropout=0.0),
    data=_loader_with_its_own_generator, steps=8, resume_at=(3,))


def _own_sampler_beside_a_generator():
    """Trial 681's loader: a sampler of the program's own, whose order each epoch
    comes from its epoch (Lightning calls set_epoch), and a generator given to
    the loader, which then draws from it nothing but the base seed of workers it
    does not have."""
    import torch

    rows = lightning_train().rows()

    class EpochOrder(torch.utils.data.Sampler):
        def __init__(self):
            self.epoch = 0

        def set_epoch(self, epoch):
            self.epoch = epoch

        def __len__(self):
            return len(rows)

        def __iter__(self):
            yield from torch.randperm(len(rows), generator=torch.Generator().manual_seed(
                self.epoch)).tolist()

    return torch.utils.data.DataLoader(rows, batch_size=8, sampler=EpochOrder(),
                                       generator=torch.Generator().manual_seed(0))


LIGHTNING_SAMPLER_BESIDE_GENERATOR = lightning_target(
    module=lambda: lightning_train().TinyClassifier(dropout=0.0),
    data=_own_sampler_beside_a_generator, steps=8, resume_at=(5,))


# Targets whose trainer settings hold a Lightning callback are built on first use
# (PEP 562): importing this module at collection must not import Lightning.
_BUILT_ON_FIRST_USE = {
    "LIGHTNING_SCHEDULER_DROPPED": _scheduler_dropped,
    "LIGHTNING_NUMPY_IN_CHECKPOINT": _numpy_in_checkpoint,
    "LIGHTNING_RESEED_KEPT": _reseed_kept,
    "LIGHTNING_COUNTER_SHARED": lambda: _counting_callback_target(per_build=False),
    "LIGHTNING_COUNTER_PER_BUILD": lambda: _counting_callback_target(per_build=True),
    "LIGHTNING_TIMER": _timing_callback,
    "LIGHTNING_READS_BEST": _reads_best_score,
    "LIGHTNING_ON_PLATEAU": _validated_on_a_plateau,
    "LIGHTNING_ON_PLATEAU_PATIENT": lambda: _validated_on_a_plateau(patience=100),
    "LIGHTNING_ON_PLATEAU_ACCUMULATING": lambda: _validated_on_a_plateau(accumulate=2),
    "LIGHTNING_EARLY_STOPPING": lambda: _validated_on_a_plateau(early_stopping=True),
    "LIGHTNING_VALIDATED_AT_EPOCH_END": lambda: _validated_on_a_plateau(plain=True),
    "LIGHTNING_AVERAGE_AFTER_SAVE": _average_updated_after_the_save,
    "LIGHTNING_STATEFUL_SAMPLER_GENERATOR": lambda: lightning_target(
        module=lambda: lightning_train().TinyClassifier(dropout=0.0),
        data=_stateful_sampler_with_a_generator, steps=8, resume_at=(3,)),
    # (trial 756: limit_train_batches, an epoch of 3 of the loader's 5 batches)
    "LIGHTNING_LIMITED_BATCHES": lambda: lightning_target(
        module=lambda: lightning_train().TinyClassifier(dropout=0.0),
        data=lambda: lightning_train().stateful_loader(), trainer={"limit_train_batches": 3},
        steps=8, resume_at=(4,)),
    "LIGHTNING_SAMPLER_OWN_GENERATOR": lambda: lightning_target(
        module=lambda: lightning_train().TinyClassifier(dropout=0.0),
        data=_stateless_sampler_with_a_generator, steps=8, resume_at=(7,)),
    "LIGHTNING_STREAM_IN_HOOKS": lambda: _streams_in_module_hooks(True),
    "LIGHTNING_STREAM_LOST_IN_HOOKS": lambda: _streams_in_module_hooks(False),
    "LIGHTNING_WEIGHT_AND_VALIDATION": lambda: _validated_on_a_plateau(weighted=True),
    "LIGHTNING_PLATEAU_PER_EPOCH": _plateau_per_epoch,
    "LIGHTNING_SWA": _weights_averaged,
    "LIGHTNING_SCHEDULER_AFTER_SAVE": _scheduler_stepped_after_the_save,
    "LIGHTNING_SCALED_AT_BATCH_START": _rate_scaled_as_each_batch_begins,
    "LIGHTNING_PLATEAU_AFTER_SAVE": _plateau_stepped_after_the_save,
    "LIGHTNING_LOSS_OF_THREE_ACCUMULATED": lambda: _a_loss_of_three(accumulate=2),
    "LIGHTNING_SKIPS_AT_EPOCH_END": _loader_skipping_at_an_epochs_end,
    "LIGHTNING_WRAPS_AT_EPOCH_END": lambda: _loader_skipping_at_an_epochs_end(wraps=True),
    "LIGHTNING_WRAPS_TWICE": lambda: _loader_skipping_at_an_epochs_end(wraps=True, twice=True),
    "LIGHTNING_LOADER_KEY_RENAMED": lambda: _loader_skipping_at_an_epochs_end(renamed=True),
    "LIGHTNING_COUNTER_NOT_SAVED": lambda: _counting_callback_target(per_build=True,
                                                                     saves=False),
    "LIGHTNING_OWN_MODEL_CHECKPOINT": _own_model_checkpoint,
    "LIGHTNING_COUNTER_KEY_RENAMED": lambda: _counting_callback_target(per_build=True,
                                                                       reads="seen"),
}


def __getattr__(name):
    if name not in _BUILT_ON_FIRST_USE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    target = globals()[name] = _BUILT_ON_FIRST_USE[name]()
    return target

# -- the HuggingFace Trainer ----------------------------------------------------


def transformers_train():
    import transformers_train
    return transformers_train


TRAINER_DEFAULT = trainer_target(lambda args: transformers_train().make_trainer(args),
                                 args={"per_device_train_batch_size": 8, "learning_rate": 1e-2,
                                       "warmup_steps": 4}, steps=8, resume_at=(3,))
TRAINER_GIVEN_EPOCHS = trainer_target(lambda args: transformers_train().make_trainer(args),
                                      args={"per_device_train_batch_size": 8,
                                            "learning_rate": 1e-2, "warmup_steps": 4},
                                      steps=8, resume_at=(3,), steps_per_epoch=5)
"""TRAINER_DEFAULT given a steps_per_epoch of its own (trial 880)."""
TRAINER_NO_TQDM = trainer_target(lambda args: transformers_train().make_trainer(args),
                                 args={"per_device_train_batch_size": 8, "learning_rate": 1e-2,
                                       "warmup_steps": 4, "disable_tqdm": True,
                                       "logging_steps": 1}, steps=4, resume_at=(2,))
"""Trial 400: ``disable_tqdm=True`` in the run's own arguments, as scripts
often set it: the Trainer's printer of logs printed every log of every run."""
TRAINER_MODEL_ONLY = trainer_target(lambda args: transformers_train().make_trainer(args),
                                    args={"per_device_train_batch_size": 8, "learning_rate": 1e-2,
                                          "warmup_steps": 4, "save_only_model": True},
                                    steps=6, resume_at=(3,))
"""Trial 423: checkpoints "kept small" with ``save_only_model=True``, which the
Trainer then resumes from without its optimizer, scheduler and streams."""


def _with_dropped_scheduler(args):
    trainer = transformers_train().make_trainer(args)
    trainer.add_callback(transformers_train().DropSchedulerState())
    return trainer


TRAINER_SCHEDULER_DROPPED = trainer_target(
    _with_dropped_scheduler, args={"per_device_train_batch_size": 8, "learning_rate": 1e-2,
                                   "warmup_steps": 4}, steps=8, resume_at=(3,))


def _with_dropped_rng(args):
    """A seeded omission: a callback deletes rng_state.pth after each save (the
    model's dropout then draws other masks after a resume)."""
    import os

    from transformers import TrainerCallback

    class DropRngState(TrainerCallback):
        def on_save(self, args, state, control, **kwargs):
            path = os.path.join(args.output_dir, f"checkpoint-{state.global_step}",
                                "rng_state.pth")
            if os.path.exists(path):
                os.remove(path)

    trainer = transformers_train().make_trainer(args)
    trainer.add_callback(DropRngState())
    return trainer


TRAINER_RNG_DROPPED = trainer_target(
    _with_dropped_rng, args={"per_device_train_batch_size": 8, "learning_rate": 1e-2,
                             "warmup_steps": 4}, steps=8, resume_at=(3,))


def _with_exportable_counter(args):
    """A callback of the user's own that halves the learning rate after four
    steps and exports its count (``ExportableState``), as the Trainer's
    checkpoints support; the Trainer restores it only where the arguments ask
    (``restore_callback_states_from_checkpoint``)."""
    from transformers import TrainerCallback
    from transformers.trainer_callback import ExportableState

    class HalvesTheLr(TrainerCallback, ExportableState):
        def __init__(self):
            self.count = 0

        def on_step_begin(self, args, state, control, optimizer=None, **kwargs):
            self.count += 1
            if self.count == 5 and optimizer is not None:
                for group in optimizer.param_groups:
                    group["lr"] *= 0.5

        def state(self):
            return {"args": {}, "attributes": {"count": self.count}}

    trainer = transformers_train().make_trainer(args)
    trainer.add_callback(HalvesTheLr())
    return trainer


def _streaming(args):
    """The example's tokens streamed by an IterableDataset that shuffles each
    epoch from the epoch the Trainer sets, with no length (trial 363): the
    Trainer cannot tell where an epoch ends, and a resume after the first
    epoch's end skips batches counted from the first epoch's start."""
    import torch
    from transformers import Trainer

    train = transformers_train()

    class Stream(torch.utils.data.IterableDataset):
        def __init__(self):
            self.rows, self.epoch = train.Tokens(), 0

        def set_epoch(self, epoch):
            self.epoch = epoch

        def __iter__(self):
            g = torch.Generator().manual_seed(self.epoch)
            return (self.rows[i] for i in torch.randperm(len(self.rows), generator=g).tolist())

    return Trainer(model=train.GPT2LMHeadModel(train.CONFIG), args=args, train_dataset=Stream())


_COUNTER_ARGS = {"per_device_train_batch_size": 8, "learning_rate": 1e-2, "warmup_steps": 4}
TRAINER_CALLBACK_RESTORED = trainer_target(
    _with_exportable_counter, args={**_COUNTER_ARGS,
                                    "restore_callback_states_from_checkpoint": True},
    steps=8, resume_at=(3,))
TRAINER_CALLBACK_NOT_RESTORED = trainer_target(_with_exportable_counter, args=_COUNTER_ARGS,
                                               steps=8, resume_at=(3,))


def _with_log_counter(resets_on_train_begin: bool):
    """A callback of the user's own that counts the Trainer's logs (every step:
    ``logging_steps=1``) and exports its count; where it sets the count to 0
    in ``on_train_begin``, which the Trainer calls after its own restore of
    the callbacks' states, a resumed run loses it (a trial's hard bug: only
    the callback's end differs)."""
    def make(args):
        from transformers import TrainerCallback
        from transformers.trainer_callback import ExportableState

        class CountsLogs(TrainerCallback, ExportableState):
            def __init__(self):
                self.logs = 0

            def on_train_begin(self, args, state, control, **kwargs):
                if resets_on_train_begin:
                    self.logs = 0

            def on_log(self, args, state, control, logs=None, **kwargs):
                self.logs += 1

            def state(self):
                return {"args": {}, "attributes": {"logs": self.logs}}

        trainer = transformers_train().make_trainer(args)
        trainer.add_callback(CountsLogs())
        return trainer

    return make


_LOG_ARGS = {**_COUNTER_ARGS, "logging_steps": 1, "seed": 3,
             "restore_callback_states_from_checkpoint": True}
TRAINER_LOG_COUNTER = trainer_target(_with_log_counter(False), args=_LOG_ARGS, steps=8,
                                     resume_at=(3,))
TRAINER_LOG_COUNTER_RESET = trainer_target(_with_log_counter(True), args=_LOG_ARGS, steps=8,
                                           resume_at=(3,))


def _with_evaluation(args):
    """The example's Trainer with an evaluation set, evaluated every second
    step (a trial: every resume point right after an evaluation read a false
    divergence, the step after it recorded with the evaluation's losses, and
    the model said to be left in eval mode by training)."""
    from transformers import Trainer

    train = transformers_train()
    return Trainer(model=train.GPT2LMHeadModel(train.CONFIG), args=args,
                   train_dataset=train.Tokens(), eval_dataset=train.Tokens())


TRAINER_EVALUATES = trainer_target(
    _with_evaluation, args={**_COUNTER_ARGS, "eval_strategy": "steps", "eval_steps": 2,
                            "logging_steps": 1, "gradient_accumulation_steps": 2,
                            "per_device_train_batch_size": 4},
    steps=8, resume_at=(4,))

# trial 376: the best model loaded back at the end of train(), which a check does not run
TRAINER_BEST_AT_END = trainer_target(
    _with_evaluation, args={**_COUNTER_ARGS, "eval_strategy": "steps", "eval_steps": 2,
                            "save_strategy": "steps", "save_steps": 2,
                            "load_best_model_at_end": True, "metric_for_best_model": "eval_loss",
                            "per_device_train_batch_size": 4},
    steps=8, resume_at=(4,))


def _with_step_count_reset(args):
    """A seeded omission: a callback writes global_step 0 into every checkpoint's
    trainer_state.json (the resumed run skips no batches and restarts its count)."""
    import json
    import os

    from transformers import TrainerCallback

    class ResetsTheStep(TrainerCallback):
        def on_save(self, args, state, control, **kwargs):
            path = os.path.join(args.output_dir, f"checkpoint-{state.global_step}",
                                "trainer_state.json")
            if os.path.exists(path):
                with open(path) as f:
                    saved = json.load(f)
                saved["global_step"], saved["epoch"] = 0, 0.0
                with open(path, "w") as f:
                    json.dump(saved, f)

    trainer = transformers_train().make_trainer(args)
    trainer.add_callback(ResetsTheStep())
    return trainer


TRAINER_STEP_RESET = trainer_target(_with_step_count_reset, args=_COUNTER_ARGS, steps=8,
                                    resume_at=(3,))


def _with_freezing_callback(args):
    """A callback that freezes the token embeddings after two steps, exports
    that it did, and freezes them again in on_train_begin after a resume."""
    from transformers import TrainerCallback
    from transformers.trainer_callback import ExportableState

    class FreezesEmbeddings(TrainerCallback, ExportableState):
        def __init__(self):
            self.frozen = False

        def _freeze(self, model):
            model.transformer.wte.weight.requires_grad_(False)

        def on_train_begin(self, args, state, control, model=None, **kwargs):
            if self.frozen and model is not None:
                self._freeze(model)

        def on_step_end(self, args, state, control, model=None, **kwargs):
            if state.global_step == 2 and model is not None:
                self.frozen = True
                self._freeze(model)

        def state(self):
            return {"args": {}, "attributes": {"frozen": self.frozen}}

    trainer = transformers_train().make_trainer(args)
    trainer.add_callback(FreezesEmbeddings())
    return trainer


TRAINER_FREEZES_AGAIN = trainer_target(
    _with_freezing_callback, args={**_COUNTER_ARGS, "restore_callback_states_from_checkpoint": True},
    steps=6, resume_at=(3,))


class MaskingCollator:
    """A data collator of the user's own that masks tokens with a numpy
    Generator it keeps: the Trainer's checkpoint does not hold it."""

    def __init__(self):
        import numpy as np

        self.rng = np.random.default_rng(1234)

    def __call__(self, features):
        import torch

        ids = torch.stack([f["input_ids"] for f in features])
        mask = torch.from_numpy(self.rng.random(tuple(ids.shape)) < 0.15)
        return {"input_ids": ids.masked_fill(mask, 3), "labels": ids}


class ScratchMaskingCollator(MaskingCollator):
    """Trial 400: beside its generator, a list of the batch's first tokens,
    made anew at every call (scratch, not state)."""

    def __call__(self, features):
        self.firsts = [int(f["input_ids"][0]) for f in features]
        return super().__call__(features)


def _with_collator(collator: type):
    def make(args):
        from transformers import Trainer

        train = transformers_train()
        return Trainer(model=train.GPT2LMHeadModel(train.CONFIG), args=args,
                       train_dataset=train.Tokens(), data_collator=collator())

    return make


_COLLATOR_ARGS = {"per_device_train_batch_size": 8, "learning_rate": 1e-2, "warmup_steps": 4}
TRAINER_COLLATOR_GENERATOR = trainer_target(_with_collator(MaskingCollator), args=_COLLATOR_ARGS,
                                            steps=8, resume_at=(3,))
TRAINER_SCRATCH_COLLATOR = trainer_target(_with_collator(ScratchMaskingCollator),
                                          args=_COLLATOR_ARGS, steps=8, resume_at=(3,))


class OwnWarmup:
    """A scheduler of the user's own class (not torch's), given to the Trainer
    in ``optimizers=``: a linear warm-up by its own step count, which its
    state_dict() leaves out unless ``keeps_count`` (trial 655)."""

    keeps_count = False

    def __init__(self, optimizer, warmup=4):
        self.optimizer, self.warmup, self.step_count = optimizer, warmup, 0
        self.base = [g["lr"] for g in optimizer.param_groups]
        self._apply()

    def _apply(self):
        for g, base in zip(self.optimizer.param_groups, self.base):
            g["lr"] = base * min(1.0, (self.step_count + 1) / self.warmup)

    def step(self):
        self.step_count += 1
        self._apply()

    def get_last_lr(self):
        return [g["lr"] for g in self.optimizer.param_groups]

    def state_dict(self):
        return {"warmup": self.warmup, **({"step_count": self.step_count}
                                          if self.keeps_count else {})}

    def load_state_dict(self, state):
        self.warmup = state["warmup"]
        if self.keeps_count:
            self.step_count = state["step_count"]
            self._apply()


class OwnWarmupKept(OwnWarmup):
    keeps_count = True


def _with_own_scheduler(kind):
    def make(args):
        import torch
        from transformers import GPT2LMHeadModel, Trainer

        train = transformers_train()
        model = GPT2LMHeadModel(train.CONFIG)
        optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)
        return Trainer(model=model, args=args, train_dataset=train.Tokens(),
                       optimizers=(optimizer, kind(optimizer)))
    return make


def _cycle_counting_scheduler(optimizer):
    """Trial 887: a subclass of torch's LRScheduler of the user's own, with a
    restart count its state_dict() leaves out (the peak halves at each restart)."""
    import torch

    class HalvingRestarts(torch.optim.lr_scheduler.LRScheduler):
        def __init__(self, optimizer, every=2):
            self.every, self.cycle = every, 0
            super().__init__(optimizer)

        def get_lr(self):
            at = self.last_epoch % self.every
            if at == 0 and self.last_epoch > 0:
                self.cycle += 1
            return [base * 0.5 ** self.cycle * (1 - at / (self.every + 1))
                    for base in self.base_lrs]

        def state_dict(self):
            return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "cycle")}

    return HalvingRestarts(optimizer)


TRAINER_OWN_LR_SCHEDULER = trainer_target(_with_own_scheduler(_cycle_counting_scheduler),
                                          args=_COLLATOR_ARGS, steps=6, resume_at=(3,))
TRAINER_OWN_SCHEDULER = trainer_target(_with_own_scheduler(OwnWarmup), args=_COLLATOR_ARGS,
                                       steps=6, resume_at=(3,))
TRAINER_OWN_SCHEDULER_KEPT = trainer_target(_with_own_scheduler(OwnWarmupKept),
                                            args=_COLLATOR_ARGS, steps=6, resume_at=(3,))


class EpochMaskingCollator:
    """Trial 443: masks drawn from a generator seeded by the epoch and the
    batch's tokens; a callback tells it the epoch (5 steps an epoch here)."""

    def __init__(self):
        self.epoch = 0

    def __call__(self, features):
        import torch

        ids = torch.stack([f["input_ids"] for f in features])
        seed = self.epoch * 1000 + int(ids.sum())
        mask = torch.rand(ids.shape, generator=torch.Generator().manual_seed(seed)) < 0.15
        return {"input_ids": ids.masked_fill(mask, 3), "labels": ids}


def _with_epoch_collator(counts_itself: bool):
    def make(args):
        from transformers import Trainer, TrainerCallback

        collator = EpochMaskingCollator()

        class TellsTheEpoch(TrainerCallback):
            if counts_itself:  # (the bug: a count a restart begins at 0 again)
                def on_epoch_end(self, args, state, control, **kwargs):
                    collator.epoch += 1
            else:  # (its twin: from the state the Trainer restores, before the first fetch)
                def on_epoch_begin(self, args, state, control, **kwargs):
                    collator.epoch = int(state.epoch)

        train = transformers_train()
        return Trainer(model=train.GPT2LMHeadModel(train.CONFIG), args=args,
                       train_dataset=train.Tokens(), data_collator=collator,
                       callbacks=[TellsTheEpoch()])

    return make


TRAINER_COLLATOR_EPOCH_COUNTED = trainer_target(_with_epoch_collator(True), args=_COLLATOR_ARGS,
                                                steps=9, resume_at=(7,))
TRAINER_COLLATOR_EPOCH_TOLD = trainer_target(_with_epoch_collator(False), args=_COLLATOR_ARGS,
                                             steps=9, resume_at=(7,))


def _with_masking_dataset(args):
    """Trial 260: a dataset of the user's own masks tokens in ``__getitem__``
    with a torch Generator it keeps, which the Trainer's checkpoint does not hold."""
    import torch
    from transformers import Trainer

    train = transformers_train()

    class MaskedTokens(train.Tokens):
        def __init__(self):
            super().__init__()
            self.gen = torch.Generator().manual_seed(99)
            self.served = 0  # (a count the dataset keeps: a ramp would read it)

        def __getitem__(self, i):
            self.served += 1
            ids = self.ids[i]
            mask = torch.rand(ids.shape, generator=self.gen) < 0.15
            return {"input_ids": ids.masked_fill(mask, 3), "labels": ids}

    return Trainer(model=train.GPT2LMHeadModel(train.CONFIG), args=args,
                   train_dataset=MaskedTokens())


TRAINER_DATASET_GENERATOR = trainer_target(
    _with_masking_dataset, args={"per_device_train_batch_size": 8, "learning_rate": 1e-2,
                                 "warmup_steps": 4}, steps=8, resume_at=(3,))


def _datamodule():
    """The same loader, handed over by a LightningDataModule (a trial's
    datamodule had no epoch boundaries: only a loader's length was read)."""
    import lightning.pytorch as pl

    class Data(pl.LightningDataModule):
        def train_dataloader(self):
            return lightning_train().stateful_loader()

    return Data()


LIGHTNING_DATAMODULE = lightning_target(
    module=lambda: lightning_train().TinyClassifier(dropout=0.0), data=_datamodule, steps=8,
    resume_at=(3,))


def _curriculum(saves: bool, loads: bool = True):
    """A LightningDataModule whose loader grows harder with a level a callback
    raises at each epoch's end (loaders made again every epoch): its
    ``state_dict()`` keeps the level in Lightning's checkpoint (``saves``), or
    it has none, as a datamodule written without resuming in mind; unless ``loads``,
    its load reads a key the save renamed (trial 713), and sets the level to 0."""
    import lightning.pytorch as pl
    from torch.utils.data import TensorDataset
    from torchdata.stateful_dataloader import StatefulDataLoader

    class Curriculum(pl.LightningDataModule):
        def __init__(self):
            super().__init__()
            self.level = 0

        def train_dataloader(self):
            x, y = lightning_train().rows().tensors
            return StatefulDataLoader(TensorDataset(x * (1 + self.level), y), batch_size=8)

    class SavedCurriculum(Curriculum):
        def state_dict(self):
            return {"level": self.level}

        def load_state_dict(self, state):
            self.level = state["level"] if loads else state.get("difficulty", 0)

    return SavedCurriculum() if saves else Curriculum()


class RaiseLevel:
    """Raises the datamodule's level at each training epoch's end."""

    def __new__(cls):
        import lightning.pytorch as pl

        class Raise(pl.Callback):
            def on_train_epoch_end(self, trainer, module):
                trainer.datamodule.level += 1

        return Raise()


def _curriculum_target(saves: bool, loads: bool = True):
    return lightning_target(
        module=lambda: lightning_train().TinyClassifier(dropout=0.0),
        data=lambda: _curriculum(saves, loads), steps=8, resume_at=(7,),
        trainer=lambda: {"reload_dataloaders_every_n_epochs": 1, "callbacks": [RaiseLevel()]})


LIGHTNING_DATAMODULE_STATE = _curriculum_target(saves=True)
"""A datamodule whose state_dict() keeps what its loaders read: it resumes."""
LIGHTNING_DATAMODULE_STATE_FORGOTTEN = _curriculum_target(saves=False)
"""Its state_dict() leaves the level out: a resume reads the easier data."""
LIGHTNING_DATAMODULE_LOAD_RENAMED = _curriculum_target(saves=True, loads=False)
"""Its load_state_dict() reads a key its state_dict() renamed (trial 713)."""
def _counting_curriculum():
    """A datamodule that counts its level in train_dataloader(), made again every
    epoch, and keeps it in a plain attribute, no state_dict() (trial 873)."""
    import lightning.pytorch as pl
    from torch.utils.data import DataLoader, TensorDataset

    class Counts(pl.LightningDataModule):
        def __init__(self):
            super().__init__()
            self.level = 0

        def train_dataloader(self):
            x, y = lightning_train().rows().tensors
            self.level += 1
            return DataLoader(TensorDataset(x * self.level, y), batch_size=8)

    return Counts()


LIGHTNING_DATAMODULE_FORGOTTEN_AT_EPOCH_END = lightning_target(
    module=lambda: lightning_train().TinyClassifier(dropout=0.0),
    data=_counting_curriculum, steps=12, resume_at=(10,),
    trainer=lambda: {"reload_dataloaders_every_n_epochs": 1})
"""The level left out, resumed at an epoch's end, where Lightning's recount of that
end differs in a correct resume too (trial 873)."""


def _growing():
    """Trial 775: a LightningDataModule whose training data grows each epoch
    (16 rows, then 24, then 32, in batches of 8), its loader made again every
    epoch: the epochs end after steps 2, 5 and 9, not every 2 steps."""
    import lightning.pytorch as pl
    from torch.utils.data import DataLoader, TensorDataset

    class Growing(pl.LightningDataModule):
        def train_dataloader(self):
            x, y = lightning_train().rows().tensors
            rows = 16 + 8 * self.trainer.current_epoch
            return DataLoader(TensorDataset(x[:rows], y[:rows]), batch_size=8)

    return Growing()


LIGHTNING_GROWING_DATA = lightning_target(
    module=lambda: lightning_train().TinyClassifier(dropout=0.0), data=_growing, steps=9,
    resume_at=(5,), trainer=lambda: {"reload_dataloaders_every_n_epochs": 1})


def _counting_module(keeps: bool, loads: bool = True, resets: bool = False):
    """A module whose input noise ramps with a count of the batches it has
    seen, kept in Lightning's checkpoint by its own hooks (``keeps``), or not;
    set back from it (``loads``), or forgotten there; set to 0 again in
    on_train_start, after Lightning's restore (``resets``)."""
    base = lightning_train().TinyClassifier

    class Counting(base):
        def on_train_start(self):
            if resets:
                self.seen = 0

        def __init__(self):
            super().__init__(dropout=0.0)
            self.seen = 0

        def training_step(self, batch, batch_idx):
            x, y = batch
            self.seen += 1
            return super().training_step((x * (1 + 0.05 * self.seen), y), batch_idx)

        def on_save_checkpoint(self, checkpoint):
            if keeps:
                checkpoint["seen"] = self.seen

        def on_load_checkpoint(self, checkpoint):
            if loads:
                self.seen = checkpoint.get("seen", 0)

    return Counting()


def _save_counter():
    """A callback that counts the checkpoints Lightning writes, and keeps the count."""
    import lightning.pytorch as pl

    class SaveCounter(pl.Callback):
        def __init__(self):
            self.saves = 0

        def on_save_checkpoint(self, trainer, pl_module, checkpoint):
            self.saves += 1

        def state_dict(self):
            return {"saves": self.saves}

        def load_state_dict(self, state):
            self.saves = state["saves"]

    return SaveCounter()


def _stashing_module():
    """A module that steps a ReduceLROnPlateau of its own by hand (not returned
    from configure_optimizers) and keeps its state through its own hooks:
    on_load_checkpoint holds it for configure_optimizers, which Lightning's
    restore calls after that hook (trial 508's; the engine's own restore called
    the hook once the optimizer was made, and the plateau read as lost)."""
    import torch

    base = lightning_train().TinyClassifier

    class Stashing(base):
        def __init__(self):
            super().__init__(dropout=0.0)
            self._stashed = None

        def configure_optimizers(self):
            optimizer = torch.optim.SGD(self.parameters(), lr=0.1)
            self.plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, patience=0)
            if self._stashed is not None:
                self.plateau.load_state_dict(self._stashed)
            return optimizer

        def training_step(self, batch, batch_idx):
            loss = super().training_step(batch, batch_idx)
            self.plateau.step(loss.item())
            return loss

        def on_save_checkpoint(self, checkpoint):
            checkpoint["plateau"] = self.plateau.state_dict()

        def on_load_checkpoint(self, checkpoint):
            self._stashed = checkpoint["plateau"]

    return Stashing()


LIGHTNING_HOOKS_STASHED = lightning_target(
    module=_stashing_module, data=lambda: lightning_train().stateful_loader(), steps=8,
    resume_at=(3,))

def _own_loader(keeps_epoch: bool):
    """A datamodule whose training loader is a class of the program's own: shuffled
    batches, a new order each epoch, resumable inside one through its state_dict(),
    which Lightning keeps in its checkpoint; unless ``keeps_epoch``, that state leaves
    the epoch out (trial 511's: no line named it)."""
    import lightning.pytorch as pl
    import torch

    rows = lightning_train().rows()

    class Batches:
        def __init__(self):
            self.epoch, self.yielded = 0, 0

        def __len__(self):
            return len(rows) // 8

        def __iter__(self):
            if self.yielded >= len(self):  # (the last epoch was read whole: the next)
                self.epoch, self.yielded = self.epoch + 1, 0
            order = torch.randperm(len(rows), generator=torch.Generator().manual_seed(self.epoch))
            while self.yielded < len(self):
                at = order[self.yielded * 8:(self.yielded + 1) * 8]
                self.yielded += 1
                yield rows[at]

        def state_dict(self):
            return {"yielded": self.yielded, **({"epoch": self.epoch} if keeps_epoch else {})}

        def load_state_dict(self, state):
            self.yielded, self.epoch = state["yielded"], state.get("epoch", 0)

    class Data(pl.LightningDataModule):
        def train_dataloader(self):
            return Batches()

    return Data()


def _manual_module():
    """A module under manual optimization that steps its optimizer every second
    batch and at an epoch's last (trial 529 stepped by hand every 2 batches: the
    epochs' ends were read from the batches per epoch, as if every batch stepped)."""
    import torch

    base = lightning_train().TinyClassifier

    class Manual(base):
        def __init__(self):
            super().__init__(dropout=0.0)
            self.automatic_optimization = False

        def training_step(self, batch, batch_idx):
            optimizer = self.optimizers()
            loss = super().training_step(batch, batch_idx)
            self.manual_backward(loss / 2)
            if batch_idx % 2 == 1 or batch_idx == self.trainer.num_training_batches - 1:
                optimizer.step()
                optimizer.zero_grad()
            return loss

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)

    return Manual()


LIGHTNING_MANUAL = lightning_target(module=_manual_module,
                                    data=lambda: lightning_train().stateful_loader(),
                                    steps=8, resume_at=(2,))



def _generator_sampler_loader(keeps_generator: bool):
    """Trial 883's shape: a StatefulDataLoader over a sampler of the program's
    own that shuffles each epoch from its own generator; its state_dict()
    keeps the epoch and the place in it, and the generator's state only where
    ``keeps_generator``."""
    import torch
    from torchdata.stateful_dataloader import StatefulDataLoader

    class EpochShuffleSampler(torch.utils.data.Sampler):
        def __init__(self, n):
            self.n, self.epoch, self.yielded, self._start = n, 0, 0, 0
            self.generator = torch.Generator().manual_seed(7)
            self.at_epoch_start = self.generator.get_state()  # (the order's, kept to resume)

        def set_epoch(self, epoch):
            self.epoch = epoch

        def __len__(self):
            return self.n

        def __iter__(self):
            start, self._start = self._start, 0
            self.at_epoch_start = self.generator.get_state()
            order = torch.randperm(self.n, generator=self.generator).tolist()
            self.yielded = start
            for i in order[start:]:
                self.yielded += 1
                yield i

        def state_dict(self):
            state = {"epoch": self.epoch, "yielded": self.yielded}
            return {**state, "order": self.at_epoch_start} if keeps_generator else state

        def load_state_dict(self, state):
            self.epoch, self._start = state["epoch"], state["yielded"]
            self.yielded = self._start  # (a save right after the load writes it again)
            if "order" in state:
                self.at_epoch_start = state["order"]
                self.generator.set_state(state["order"])

    rows = lightning_train().rows()
    return StatefulDataLoader(rows, batch_size=8, sampler=EpochShuffleSampler(len(rows)))


LIGHTNING_SAMPLER_LOSES_GENERATOR = lightning_target(
    module=lambda: lightning_train().TinyClassifier(dropout=0.0),
    data=lambda: _generator_sampler_loader(False), steps=12, resume_at=(7,))
LIGHTNING_SAMPLER_KEEPS_GENERATOR = lightning_target(
    module=lambda: lightning_train().TinyClassifier(dropout=0.0),
    data=lambda: _generator_sampler_loader(True), steps=12, resume_at=(7,))

def _hand_accumulating_module():
    """Trial 875's shape: manual optimization summing 3 batches' gradients by
    hand, with a count of them the checkpoint does not hold (5 batches an
    epoch: the epochs end inside steps 2 and 4, and right after step 5)."""
    import torch

    base = lightning_train().TinyClassifier

    class HandAccumulating(base):
        def __init__(self):
            super().__init__(dropout=0.0)
            self.automatic_optimization = False
            self.micro = 0

        def training_step(self, batch, batch_idx):
            optimizer = self.optimizers()
            loss = super().training_step(batch, batch_idx)
            self.manual_backward(loss / 3)
            self.micro += 1
            if self.micro == 3:
                optimizer.step()
                optimizer.zero_grad()
                self.micro = 0
            return loss

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)

    return HandAccumulating()


LIGHTNING_HAND_ACCUMULATING = lightning_target(
    module=_hand_accumulating_module, data=lambda: lightning_train().stateful_loader(),
    steps=6, resume_at=(3,))


LIGHTNING_OWN_LOADER = lightning_target(
    module=lambda: lightning_train().TinyClassifier(dropout=0.0),
    data=lambda: _own_loader(True), steps=12, resume_at=(7,))
LIGHTNING_OWN_LOADER_FORGETS_EPOCH = lightning_target(
    module=lambda: lightning_train().TinyClassifier(dropout=0.0),
    data=lambda: _own_loader(False), steps=12, resume_at=(7,))


# a trial's counter kept by on_save_checkpoint: the engine's own resume lost it
LIGHTNING_HOOKS = lightning_target(
    module=lambda: _counting_module(True), data=lambda: lightning_train().stateful_loader(),
    steps=8, resume_at=(3,))
# a trial's: saved by on_save_checkpoint, never set back by on_load_checkpoint
LIGHTNING_HOOKS_LOAD_FORGETS = lightning_target(
    module=lambda: _counting_module(True, loads=False),
    data=lambda: lightning_train().stateful_loader(), steps=8, resume_at=(3,))
# trial 198's: saved and loaded back by its hooks, then set again in on_train_start
LIGHTNING_HOOKS_RESET_AT_TRAIN_START = lightning_target(
    module=lambda: _counting_module(True, resets=True),
    data=lambda: lightning_train().stateful_loader(), steps=8, resume_at=(3,))
LIGHTNING_HOOKS_FORGET = lightning_target(
    module=lambda: _counting_module(False), data=lambda: lightning_train().stateful_loader(),
    steps=8, resume_at=(3,))


def _reinit_module(hook: str):
    """A module that makes its last layer anew in ``hook``: in ``setup`` (which
    Lightning runs before its restore: correct), or in ``on_fit_start`` (after
    it: the restored weights are lost)."""
    import torch

    base = lightning_train().TinyClassifier

    class Reinit(base):
        def __init__(self):
            super().__init__(dropout=0.0)

        def _anew(self, *args, **kwargs):
            torch.nn.init.normal_(self.net[-1].weight)

    setattr(Reinit, hook, Reinit._anew)
    return Reinit()


LIGHTNING_SETUP_REINIT = lightning_target(
    module=lambda: _reinit_module("setup"), data=lambda: lightning_train().stateful_loader(),
    steps=8, resume_at=(3,))
LIGHTNING_FIT_START_REINIT = lightning_target(
    module=lambda: _reinit_module("on_fit_start"),
    data=lambda: lightning_train().stateful_loader(), steps=8, resume_at=(3,))


# -- helpers of the tests ----------------------------------------------------


def statement_lines(path: Path, name: str) -> int:
    tree = ast.parse(path.read_text())
    node = next(n for n in tree.body if isinstance(n, ast.Assign)
                and any(getattr(t, "id", None) == name for t in n.targets))
    assert node.end_lineno is not None
    return node.end_lineno - node.lineno + 1
# the hooks' capture must not call the callbacks' on_save_checkpoint
LIGHTNING_HOOKS_SAVE_COUNTER = lightning_target(
    module=lambda: _counting_module(True), data=lambda: lightning_train().stateful_loader(),
    steps=8, resume_at=(3,), trainer=lambda: {"callbacks": [_save_counter()]})


def _weights_only_checkpoints():
    import lightning.pytorch as pl

    return {"callbacks": [pl.callbacks.ModelCheckpoint(save_weights_only=True,
                                                       every_n_train_steps=2)]}


LIGHTNING_WEIGHTS_ONLY = lightning_target(
    module=lambda: lightning_train().TinyClassifier(dropout=0.0),
    data=lambda: lightning_train().stateful_loader(), steps=8, resume_at=(3,),
    trainer=_weights_only_checkpoints)
"""A ModelCheckpoint that saves the weights only: its checkpoints cannot resume."""


def _manual_scheduler_module():
    """A module that steps a scheduler of its own by hand, not returned from
    configure_optimizers(): Lightning's checkpoint does not hold it."""
    import torch

    base = lightning_train().TinyClassifier

    class ManualScheduler(base):
        def configure_optimizers(self):
            optimizer = torch.optim.AdamW(self.parameters(), lr=1e-2)
            self.sched = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: 1.0 / (1 + s))
            return optimizer

        def on_train_batch_end(self, outputs, batch, batch_idx):
            self.sched.step()

    return ManualScheduler(dropout=0.0)


LIGHTNING_MANUAL_SCHEDULER = lightning_target(
    module=_manual_scheduler_module, data=lambda: lightning_train().stateful_loader(), steps=8,
    resume_at=(3,))


def _two_optimizers_module():
    """A module with manual optimization and two optimizers (an actor-critic's,
    a GAN's), which the adapter does not check yet (trial 198)."""
    import torch

    base = lightning_train().TinyClassifier

    class TwoOptimizers(base):
        def __init__(self) -> None:
            super().__init__(dropout=0.0)
            self.automatic_optimization = False

        def training_step(self, batch, batch_idx):
            first, second = self.optimizers()
            loss = super().training_step(batch, batch_idx)
            first.zero_grad()
            second.zero_grad()
            self.manual_backward(loss)
            first.step()
            second.step()
            return loss

        def configure_optimizers(self):
            params = list(self.parameters())
            return [torch.optim.SGD(params[:1], lr=1e-2), torch.optim.SGD(params[1:], lr=1e-2)]

    return TwoOptimizers()


LIGHTNING_TWO_OPTIMIZERS = lightning_target(
    module=_two_optimizers_module, data=lambda: lightning_train().stateful_loader(), steps=4,
    resume_at=(2,))


def _counting_subclass(args):
    """A Trainer subclass that scales its loss by a count of the batches it
    has seen, a field of its own the Trainer's checkpoint does not hold."""
    from transformers import Trainer

    class Counting(Trainer):
        def __init__(self, *a, **kw):
            super().__init__(*a, **kw)
            self.seen = 0

        def compute_loss(self, model, inputs, *a, **kw):
            self.seen += 1
            loss = super().compute_loss(model, inputs, *a, **kw)
            return loss * (1.0 + 0.01 * self.seen)

    train = transformers_train()
    return Counting(model=train.GPT2LMHeadModel(train.CONFIG), args=args,
                    train_dataset=train.Tokens())


TRAINER_SUBCLASS_COUNTER = trainer_target(_counting_subclass, args=_COUNTER_ARGS, steps=6,
                                          resume_at=(3,))


def _seq2seq(args):
    """A ``Seq2SeqTrainer``, which reads ``generation_config`` of its arguments
    as it is built (trial 528)."""
    from transformers import Seq2SeqTrainer
    train = transformers_train()
    return Seq2SeqTrainer(model=train.GPT2LMHeadModel(train.CONFIG), args=args,
                          train_dataset=train.Tokens())


def _seq2seq_target(**kw):
    return trainer_target(_seq2seq, args=_COUNTER_ARGS, steps=4, resume_at=(2,), **kw)


_BUILT_ON_FIRST_USE.update({
    "TRAINER_SEQ2SEQ_PLAIN_ARGS": lambda: _seq2seq_target(),
    "TRAINER_SEQ2SEQ": lambda: _seq2seq_target(args_class=__import__(
        "transformers").Seq2SeqTrainingArguments),
})


_ACCUMULATES = {**_COUNTER_ARGS, "gradient_accumulation_steps": 2,
                "per_device_train_batch_size": 4, "logging_steps": 1}
TRAINER_ACCUMULATES = trainer_target(lambda args: transformers_train().make_trainer(args),
                                     args=_ACCUMULATES, steps=6, resume_at=(3,))
"""Two micro-batches a step, on a model that divides its loss by the step's
token count (GPT-2 takes ``num_items_in_batch``): the Trainer logs the sum of
the micro-batches' losses (trial 142: the check's was half of it)."""


def _with_plain_counter(args):
    """A callback of the user's own, not an ExportableState, that counts the
    steps it has seen (trial 142's loss average): the Trainer's checkpoint
    does not hold it, and nothing it counts changes the training."""
    from transformers import TrainerCallback

    class CountsSteps(TrainerCallback):
        def __init__(self):
            self.count = 0

        def on_step_end(self, args, state, control, **kwargs):
            self.count += 1

    trainer = transformers_train().make_trainer(args)
    trainer.add_callback(CountsSteps())
    return trainer


TRAINER_PLAIN_COUNTER = trainer_target(_with_plain_counter, args=_COUNTER_ARGS, steps=6,
                                       resume_at=(3,))
TRAINER_COUNTER_NOT_STATE = trainer_target(_with_plain_counter, args=_COUNTER_ARGS, steps=6,
                                           resume_at=(3,),
                                           not_state=("callbacks (CountsSteps).count",))


def _global_masking_collator(features):
    """Masks tokens with draws from torch's global stream (as transformers'
    own DataCollatorForLanguageModeling does)."""
    import torch

    ids = torch.stack([f["input_ids"] for f in features])
    return {"input_ids": ids.masked_fill(torch.rand(ids.shape) < 0.15, 3), "labels": ids}


def _with_global_masking_collator(args):
    from transformers import Trainer

    train = transformers_train()
    return Trainer(model=train.GPT2LMHeadModel(train.CONFIG), args=args,
                   train_dataset=train.Tokens(), data_collator=_global_masking_collator)


TRAINER_COLLATOR_GLOBAL = trainer_target(
    _with_global_masking_collator, args={"per_device_train_batch_size": 8,
                                         "learning_rate": 1e-2, "warmup_steps": 4},
    steps=8, resume_at=(3,))
"""Trial 142: the Trainer fetches a resumed step's batches before it restores
its random streams, so a collator drawing from torch's global stream masks the
first resumed step's batch from the stream as the restart left it."""

def _with_endless_global_tokens(args):
    import torch
    from transformers import Trainer

    class EndlessTokens(torch.utils.data.IterableDataset):
        """No length, no epochs: each sample drawn from torch's global stream."""

        def __iter__(self):
            while True:
                ids = torch.randint(0, 64, (8,))
                yield {"input_ids": ids, "labels": ids}

    train = transformers_train()
    return Trainer(model=train.GPT2LMHeadModel(train.CONFIG), args=args,
                   train_dataset=EndlessTokens())


TRAINER_ENDLESS_GLOBAL = trainer_target(
    _with_endless_global_tokens, args={"per_device_train_batch_size": 8,
                                       "learning_rate": 1e-2, "warmup_steps": 4},
    steps=6, resume_at=(3,))
"""Trial 292: an IterableDataset without a length that draws from torch's global
stream, which the Trainer fetches before it restores: data of no known epochs."""

TRAINER_GROUP_BY_LENGTH = trainer_target(
    lambda args: transformers_train().make_trainer(args),
    args={"per_device_train_batch_size": 8, "learning_rate": 1e-2, "warmup_steps": 4,
          "train_sampling_strategy": "group_by_length"},
    steps=10, resume_at=(7,))
"""Trial 229: the Trainer's LengthGroupedSampler shuffles from torch's global
stream as each epoch's iterator is made, which a resume inside an epoch makes
before it restores that stream: resumed at 7, in the second of its epochs of
5 steps, it reads other samples from step 8; at 3, in the first, it resumes."""


def _with_early_stopping(args):
    """The Trainer's own ``EarlyStoppingCallback``, evaluating every 2 steps,
    with a threshold no evaluation meets: its patience counter climbs with each
    one, and a patience no run reaches. The Trainer's checkpoints hold the
    counter (the callback is an ``ExportableState``), and its resume puts it
    back only where the arguments ask (a trial: a resume without the flag
    trained on past where the uninterrupted run stopped, and the check,
    which left the Trainer's own callbacks out, passed it)."""
    from transformers import EarlyStoppingCallback, Trainer

    train = transformers_train()
    trainer = Trainer(model=train.GPT2LMHeadModel(train.CONFIG), args=args,
                      train_dataset=train.Tokens(), eval_dataset=train.Tokens())
    trainer.add_callback(EarlyStoppingCallback(early_stopping_patience=100,
                                               early_stopping_threshold=10.0))
    return trainer


_EARLY_ARGS = {**_COUNTER_ARGS, "eval_strategy": "steps", "eval_steps": 2,
               "save_strategy": "steps", "save_steps": 2, "load_best_model_at_end": True,
               "metric_for_best_model": "eval_loss"}
TRAINER_EARLY_STOPPING_RESTORED = trainer_target(
    _with_early_stopping, args={**_EARLY_ARGS, "restore_callback_states_from_checkpoint": True},
    steps=8, resume_at=(5,))
TRAINER_EARLY_STOPPING_NOT_RESTORED = trainer_target(_with_early_stopping, args=_EARLY_ARGS,
                                                     steps=8, resume_at=(5,))


def _with_epoch_level(exported: bool):
    """Trial 759: a curriculum callback (an ``ExportableState``) that raises its
    level in ``on_epoch_begin``, once an epoch (a resume enters its epoch again:
    no raise then), and scales each step's learning rate by it. At an epoch's
    end the Trainer's resume runs that hook before its first step, where the
    uninterrupted run ran it after its checkpoint. ``exported=False``: its
    ``state()`` leaves the level out (the bug: a resume inside an epoch departs)."""

    def make(args):
        from transformers.trainer_callback import ExportableState, TrainerCallback

        class RaisesLevel(TrainerCallback, ExportableState):
            def __init__(self):
                self.level, self.current_epoch = 0, 0

            def on_epoch_begin(self, args, state, control, **kwargs):
                epoch = int(state.epoch or 0)
                if epoch != self.current_epoch:
                    self.current_epoch, self.level = epoch, self.level + 1

            def on_step_begin(self, args, state, control, optimizer=None, **kwargs):
                for group in optimizer.param_groups:
                    group["lr"] /= 1 + self.level

            def state(self):
                attributes = {"current_epoch": self.current_epoch}
                if exported:
                    attributes["level"] = self.level
                return {"args": {}, "attributes": attributes}

        trainer = transformers_train().make_trainer(args)
        trainer.add_callback(RaisesLevel())
        return trainer

    return make


_LEVEL_ARGS = {**_COUNTER_ARGS, "restore_callback_states_from_checkpoint": True}
TRAINER_EPOCH_LEVEL = trainer_target(_with_epoch_level(True), args=_LEVEL_ARGS, steps=8,
                                     resume_at=(5,))
TRAINER_EPOCH_LEVEL_LOST = trainer_target(_with_epoch_level(False), args=_LEVEL_ARGS, steps=8,
                                          resume_at=(7,))


def _accumulation_schedule():
    """One batch a step in the first two epochs, two from epoch 2 on (a trial's
    GradientAccumulationScheduler, whose epochs were said to end by the last
    accumulation throughout)."""
    import lightning.pytorch as pl

    return {"callbacks": [pl.callbacks.GradientAccumulationScheduler({0: 1, 2: 2})]}


LIGHTNING_ACCUMULATION_SCHEDULE = lightning_target(
    module=lambda: lightning_train().TinyClassifier(dropout=0.0),
    data=lambda: lightning_train().stateful_loader(), steps=16, resume_at=(3,),
    trainer=_accumulation_schedule)

TRAINER_STREAMING = trainer_target(_streaming, args={"per_device_train_batch_size": 8,
                                                     "learning_rate": 1e-2}, steps=9,
                                   resume_at=(7,))


def _own_sampler(args):
    """Trial 607's Trainer subclass: its own _get_train_sampler(), in order."""
    from torch.utils.data import SequentialSampler
    from transformers import Trainer

    train = transformers_train()

    class OwnSampler(Trainer):
        def _get_train_sampler(self, *args, **kwargs):
            return SequentialSampler(self.train_dataset)

    return OwnSampler(model=train.GPT2LMHeadModel(train.CONFIG), args=args,
                      train_dataset=train.Tokens())


TRAINER_OWN_SAMPLER = trainer_target(_own_sampler, args={"per_device_train_batch_size": 8,
                                                         "learning_rate": 1e-2}, steps=6,
                                     resume_at=(3,))
# (trial 547: an endless stream says it has no epochs, as a program of its own can)
TRAINER_STREAMING_NO_EPOCHS = trainer_target(
    _streaming, args={"per_device_train_batch_size": 8, "learning_rate": 1e-2}, steps=9,
    resume_at=(7,), epoch_boundaries=[])


def _with_seeded_masking(args):
    """transformers' own masking collator given a seed (trial 816): it masks
    from a generator of its own, which the Trainer's checkpoint does not hold."""
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from transformers import DataCollatorForLanguageModeling, PreTrainedTokenizerFast, Trainer

    train = transformers_train()
    vocab = {**{f"t{i}": i for i in range(64) if i not in (0, 3)}, "[MASK]": 3, "[PAD]": 0}
    tokens = PreTrainedTokenizerFast(tokenizer_object=Tokenizer(WordLevel(vocab, unk_token="t1")),
                                     mask_token="[MASK]", pad_token="[PAD]")
    return Trainer(model=train.GPT2LMHeadModel(train.CONFIG), args=args,
                   train_dataset=train.Tokens(),
                   data_collator=DataCollatorForLanguageModeling(tokens, mlm_probability=0.15,
                                                                 seed=7))


TRAINER_SEEDED_MASKING = trainer_target(_with_seeded_masking, args=_COLLATOR_ARGS, steps=8,
                                        resume_at=(3,))
