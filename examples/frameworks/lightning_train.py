"""A small Lightning training script: what a user has before resumecheck.

A two-layer classifier with dropout, AdamW and a step-interval warm-up,
trained on 40 in-memory rows in shuffled batches of 8 (5 steps per epoch).
``RandomStateCheckpoint`` is the addition users make first: Lightning's
checkpoint holds no random stream, so this callback saves them and puts
them back when Lightning restores the callbacks. It is not enough: the
resumed epoch's new loader iterator draws its seed after that, so dropout
still departs (the README's Lightning rows; resumecheck names `rng`).
"""

import random

import lightning.pytorch as pl
import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class TinyClassifier(pl.LightningModule):
    def __init__(self, dropout=0.2):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(),
                                       torch.nn.Dropout(dropout), torch.nn.Linear(16, 4))

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.cross_entropy(self.net(x), y)

    def configure_optimizers(self):
        optimizer = torch.optim.AdamW(self.parameters(), lr=1e-2)
        warmup = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / 10))
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": warmup, "interval": "step"}}


def rows():
    g = torch.Generator().manual_seed(1234)  # the data itself is fixed
    return TensorDataset(torch.randn(40, 8, generator=g), torch.randint(0, 4, (40,), generator=g))


def loader():
    return DataLoader(rows(), batch_size=8, shuffle=True)


def stateful_loader():
    """torchdata's StatefulDataLoader: Lightning saves its position in the fit loop's state."""
    from torchdata.stateful_dataloader import StatefulDataLoader

    return StatefulDataLoader(rows(), batch_size=8, shuffle=True)


class RandomStateCheckpoint(pl.Callback):
    """Save the global random streams in Lightning's checkpoint and restore them."""

    # Plain tensors, ints and strings: Lightning's resume (fit(ckpt_path=...))
    # loads with torch.load(weights_only=True), which refuses numpy's ndarray.
    def state_dict(self):
        kind, keys, pos, has_gauss, cached = np.random.get_state()
        return {"torch": torch.get_rng_state(), "python": random.getstate(),
                "numpy": (kind, torch.from_numpy(keys.astype(np.int64)), pos, has_gauss, cached)}

    def load_state_dict(self, state):
        torch.set_rng_state(state["torch"])
        random.setstate(state["python"])
        kind, keys, pos, has_gauss, cached = state["numpy"]
        np.random.set_state((kind, keys.numpy().astype(np.uint32), pos, has_gauss, cached))


class DropSchedulerState(pl.Callback):
    """A seeded omission: the scheduler's state never reaches the checkpoint."""

    def on_save_checkpoint(self, trainer, pl_module, checkpoint):
        checkpoint["lr_schedulers"] = []
