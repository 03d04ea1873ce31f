"""An image-style classifier with random augmentation and torchdata's StatefulDataLoader.

A *user's* script: small 8x8 grey "images" (generated, so nothing is
downloaded), a convolutional net, SGD with momentum and a cosine schedule,
random flips and shifts drawn from torch's global stream in the dataset,
and a StatefulDataLoader whose state_dict() carries the position within the
epoch and whose own generator decides each epoch's shuffle.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import Dataset
from torchdata.stateful_dataloader import StatefulDataLoader


@dataclass
class Config:
    seed: int = 0
    n_images: int = 48
    batch_size: int = 8
    lr: float = 0.05
    momentum: float = 0.9
    total_steps: int = 40
    flip_p: float = 0.5
    max_shift: int = 1


class Shapes(Dataset):
    """Four classes of 8x8 patterns plus noise; augmented on every read."""

    def __init__(self, cfg: Config) -> None:
        g = torch.Generator().manual_seed(2024)
        self.labels = torch.arange(cfg.n_images) % 4
        base = torch.zeros(4, 8, 8)
        base[0, 2:6, 2:6] = 1  # square
        base[1, :, 3:5] = 1  # vertical bar
        base[2, 3:5, :] = 1  # horizontal bar
        base[3] = torch.eye(8)  # diagonal
        self.images = base[self.labels] + 0.3 * torch.randn(cfg.n_images, 8, 8, generator=g)
        self.cfg = cfg

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, i: int):
        img = self.images[i]
        if torch.rand(()) < self.cfg.flip_p:  # random horizontal flip
            img = img.flip(-1)
        shift = int(torch.randint(-self.cfg.max_shift, self.cfg.max_shift + 1, ()))
        img = torch.roll(img, shifts=shift, dims=0)  # random vertical shift
        return img.unsqueeze(0), self.labels[i], i


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(1, 6, 3, padding=1)
        self.drop = nn.Dropout(0.2)
        self.fc = nn.Linear(6 * 4 * 4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.max_pool2d(F.relu(self.conv(x)), 2)
        return self.fc(self.drop(x.flatten(1)))


class Trainer:
    def __init__(self, cfg: Config) -> None:
        torch.manual_seed(cfg.seed)
        self.cfg = cfg
        self.model = Net()
        self.opt = torch.optim.SGD(self.model.parameters(), lr=cfg.lr, momentum=cfg.momentum)
        self.sched = torch.optim.lr_scheduler.CosineAnnealingLR(self.opt, T_max=cfg.total_steps)
        self.loader_gen = torch.Generator().manual_seed(cfg.seed)
        self.loader = StatefulDataLoader(
            Shapes(cfg), batch_size=cfg.batch_size, shuffle=True, generator=self.loader_gen
        )
        self.batches = None  # the live iterator; created on first use
        self.step = 0
        self.epoch = 0

    def next_batch(self):
        if self.batches is None:
            self.batches = iter(self.loader)
        try:
            return next(self.batches)
        except StopIteration:
            self.epoch += 1
            self.batches = iter(self.loader)
            return next(self.batches)

    def train_step(self) -> tuple[float, torch.Tensor]:
        self.model.train()
        x, y, idx = self.next_batch()
        loss = F.cross_entropy(self.model(x), y)
        loss.backward()
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)
        self.sched.step()
        self.step += 1
        return loss.item(), idx

    def save(self, path: str) -> None:
        torch.save(
            {
                "model": self.model.state_dict(),
                "opt": self.opt.state_dict(),
                "sched": self.sched.state_dict(),
                "loader": self.loader.state_dict(),
                "loader_gen": self.loader_gen.get_state(),
                "torch_rng": torch.get_rng_state(),
                "step": self.step,
                "epoch": self.epoch,
            },
            path,
        )

    def load(self, path: str) -> None:
        ckpt = torch.load(path, weights_only=True)
        self.model.load_state_dict(ckpt["model"])
        self.opt.load_state_dict(ckpt["opt"])
        self.sched.load_state_dict(ckpt["sched"])
        self.loader.load_state_dict(ckpt["loader"])
        # Create the iterator now, before the streams are restored: creating it
        # draws a base seed from the loader's generator, which would shift
        # every later epoch's shuffle by one draw.
        self.batches = iter(self.loader)
        self.step, self.epoch = ckpt["step"], ckpt["epoch"]
        self.loader_gen.set_state(ckpt["loader_gen"])
        torch.set_rng_state(ckpt["torch_rng"])
