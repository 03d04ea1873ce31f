"""A user's HuggingFace Accelerate training script (the thing under audit).

A small classifier with dropout, SGD with momentum and a warm-up schedule,
a shuffled DataLoader, all prepared by an Accelerator. ``loader`` picks the
data-loader setting: ``plain`` (Accelerate's defaults),
``seedable`` (``DataLoaderConfiguration(use_seedable_sampler=True)``) or
``stateful`` (``DataLoaderConfiguration(use_stateful_dataloader=True)``).
``main()`` is the loop as Accelerate's documentation writes it: resume with
``load_state`` and ``skip_first_batches``.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from accelerate import Accelerator, DataLoaderConfiguration
from accelerate.utils import set_seed
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

SETTINGS = {
    "plain": DataLoaderConfiguration(),
    "seedable": DataLoaderConfiguration(use_seedable_sampler=True),
    "stateful": DataLoaderConfiguration(use_stateful_dataloader=True),
}


def dataset(n: int = 40) -> TensorDataset:
    g = torch.Generator().manual_seed(1234)  # fixed data, independent of the run's seed
    x = torch.randn(n, 8, generator=g)
    y = (x[:, :4].sum(1) > 0).long() + 2 * (x[:, 4:].sum(1) > 0).long()
    return TensorDataset(x, y)


def setup(seed: int = 0, loader: str = "plain", lr: float = 0.1, dropout: float = 0.3,
          batch_size: int = 8, own_generator: bool = False):
    """Everything up to accelerator.prepare, as the user's script has it.

    ``own_generator`` gives the DataLoader its own ``torch.Generator``: its
    iterator then draws its base seed from that, not from torch's global stream.
    """
    set_seed(seed)
    accelerator = Accelerator(cpu=True, dataloader_config=SETTINGS[loader])
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Dropout(dropout), nn.Linear(16, 4))
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / 10))
    generator = torch.Generator().manual_seed(seed) if own_generator else None
    train_loader = DataLoader(dataset(), batch_size=batch_size, shuffle=True, generator=generator)
    model, optimizer, train_loader, scheduler = accelerator.prepare(
        model, optimizer, train_loader, scheduler
    )
    return accelerator, model, optimizer, train_loader, scheduler


def loss_of(model: nn.Module, batch) -> torch.Tensor:
    x, y = batch
    return F.cross_entropy(model(x), y)


def main(epochs: int = 3, resume_from: str | None = None, resume_step: int = 0) -> None:
    """The loop itself, resumed the way Accelerate's documentation does it."""
    accelerator, model, optimizer, train_loader, scheduler = setup()
    start_epoch, skip = 0, 0
    if resume_from:
        accelerator.load_state(resume_from)
        start_epoch, skip = divmod(resume_step, len(train_loader))
    for epoch in range(start_epoch, epochs):
        model.train()
        # the prepared loader counts its epochs itself, from 0 in every new process:
        # after a resume, without this the next epoch reads another epoch's order
        train_loader.set_epoch(epoch)
        active = train_loader
        if epoch == start_epoch and skip:
            active = accelerator.skip_first_batches(train_loader, skip)
        for batch in active:
            loss = loss_of(model, batch)
            accelerator.backward(loss)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()


if __name__ == "__main__":
    main()
