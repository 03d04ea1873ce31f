"""The built-in tiny program: a small classifier that exercises all nine components.

Read it top to bottom. Every line that touches resumable state says which
component it exercises, because that is what the program is for: if a
checkpoint forgets any one of the nine, this program's continuation changes.

    resumecheck run                      # this program, 16 steps, resume at 8
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass, fields

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import TensorDataset
from torch.utils.data.distributed import DistributedSampler

from resumecheck.components import RNGState, Value
from resumecheck.program import StepOutput, Target
from resumecheck.phases import BACKWARD, DATA_WAIT, FORWARD, HOST_TO_DEVICE, OPTIMIZER_STEP, phase

__all__ = [
    "RESUME_AT", "RUN_CONFIG", "STEPS", "TARGET", "TARGET_BF16",
    "TinyConfig", "TinyProgram", "build", "build_bf16",
]


@dataclass(kw_only=True, slots=True)
class TinyConfig:
    """Settings of the tiny program; the defaults are what a restart starts from."""

    seed: int = 0
    """Seeds the model's initialisation, dropout, augmentation and the shuffle."""
    precision: str = "fp16"
    """'fp16' (autocast with a GradScaler) or 'bf16' (autocast, no scaler)."""
    n_samples: int = 48
    """Size of the generated dataset: 6 optimizer steps make one epoch."""
    n_features: int = 16
    """Inputs per sample (a row of 16 "pixels" that augmentation may flip)."""
    n_classes: int = 4
    """Classes of the generated labels."""
    hidden: int = 32
    """Width of the hidden layer."""
    dropout: float = 0.2
    """Dropout draws from the torch stream every step (rng)."""
    micro_batch: int = 4
    """Samples per micro-batch."""
    accum_steps: int = 2
    """Micro-batches per optimizer step (gradient accumulation)."""
    lr: float = 3e-3
    """AdamW's peak learning rate (optimizer)."""
    weight_decay: float = 0.01
    """AdamW's decoupled weight decay."""
    warmup_steps: int = 4
    """Steps of linear warm-up (scheduler)."""
    decay_steps: int = 24
    """Steps of linear decay after the warm-up (scheduler)."""
    init_scale: float = 2.0**17
    """High enough that early steps overflow in fp16 and the scale moves (scaler)."""
    growth_interval: int = 2
    """Overflow-free steps before the scale doubles: it moves within a few steps."""
    aug_noise: float = 0.3
    """Largest standard deviation of the augmentation noise."""
    aug_warmup_steps: int = 20
    """Augmentation noise ramps up with the global step (global_step)."""
    label_smoothing: float = 0.0
    """Nothing but the config component restores this (config)."""

    def __post_init__(self) -> None:
        if self.precision not in ("fp16", "bf16"):
            raise ValueError(f"precision={self.precision!r}: expected 'fp16' or 'bf16'")
        if self.n_samples % (self.micro_batch * self.accum_steps):
            raise ValueError("n_samples must be a multiple of micro_batch * accum_steps")


# The run is launched with a setting that differs from the defaults, as real
# runs are (`train.py --label-smoothing 0.1`). A restart built from defaults
# gets it back only if the checkpoint carries the config.
RUN_CONFIG = {"label_smoothing": 0.1}
STEPS = 16
RESUME_AT = 8  # epoch 1, two steps in: after an epoch boundary and mid-epoch
DEVICE = "cpu"


def make_dataset(cfg: TinyConfig) -> tuple[torch.Tensor, torch.Tensor]:
    """A fixed, generated dataset: the same for every seed and every restart."""
    g = torch.Generator().manual_seed(1234)
    x = torch.randn(cfg.n_samples, cfg.n_features, generator=g)
    w = torch.randn(cfg.n_features, cfg.n_classes, generator=g)
    return x, (x @ w).argmax(dim=1)


def lr_lambda(cfg: TinyConfig):
    """Linear warm-up, then linear decay (the scheduler's multiplier per step)."""

    def factor(step: int) -> float:
        if step < cfg.warmup_steps:
            return (step + 1) / cfg.warmup_steps
        return max(0.1, 1.0 - (step - cfg.warmup_steps) / cfg.decay_steps)

    return factor


def aug_at(cfg: TinyConfig, step: int) -> float:
    """Augmentation noise strength at a global step (reads global_step)."""
    return cfg.aug_noise * min(1.0, (step + 1) / cfg.aug_warmup_steps)


class TinyModel(nn.Module):
    def __init__(self, cfg: TinyConfig) -> None:
        super().__init__()
        self.fc1 = nn.Linear(cfg.n_features, cfg.hidden)
        self.drop = nn.Dropout(cfg.dropout)
        self.fc2 = nn.Linear(cfg.hidden, cfg.n_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.drop(F.gelu(self.fc1(x))))


class TinyProgram:
    def __init__(self, cfg: TinyConfig) -> None:
        torch.manual_seed(cfg.seed)  # like nanoGPT: every start seeds (rng must undo it)
        random.seed(cfg.seed)
        np.random.seed(cfg.seed)
        self.config = Value(asdict(cfg))  # config: the settings, read every step
        self.x, self.y = make_dataset(cfg)
        self.model = TinyModel(cfg)  # params
        self.optimizer = torch.optim.AdamW(  # optimizer: AdamW moments and step counts
            self.model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay
        )
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(  # scheduler: warm-up then decay
            self.optimizer, lr_lambda(cfg)
        )
        self.fp16 = cfg.precision == "fp16"
        self.scaler = torch.amp.GradScaler(  # scaler: fp16 loss scale and growth tracker
            "cpu", init_scale=cfg.init_scale, growth_interval=cfg.growth_interval,
            enabled=self.fp16,
        )
        self.sampler: DistributedSampler = DistributedSampler(  # sampler_epoch: a new shuffle every epoch
            TensorDataset(self.x, self.y), num_replicas=1, rank=0, shuffle=True, seed=cfg.seed
        )
        self.epoch = Value(0)  # sampler_epoch
        self.cursor = Value(0)  # data_cursor: micro-batches consumed in this epoch
        self.global_step = Value(0)  # global_step: read by aug_at()
        self.rng = RNGState()  # rng: python, numpy and torch global streams

    @property
    def cfg(self) -> TinyConfig:
        return TinyConfig(**self.config.value)

    @property
    def steps_per_epoch(self) -> int:  # tells fuzzing where the epoch boundaries are
        cfg = self.cfg
        return cfg.n_samples // (cfg.micro_batch * cfg.accum_steps)

    @property
    def accum_steps(self) -> int:
        return self.cfg.accum_steps

    def components(self) -> dict:
        comps = {
            "params": self.model,
            "optimizer": self.optimizer,
            "scheduler": self.scheduler,  # after the optimizer: restore order matters
            "scaler": self.scaler,
            "rng": self.rng,
            "data_cursor": self.cursor,
            "sampler_epoch": self.epoch,
            "global_step": self.global_step,
            "config": self.config,
        }
        if not self.fp16:
            del comps["scaler"]  # bf16 needs no loss scaling
        return comps

    def next_batch(self, cfg: TinyConfig) -> torch.Tensor:
        """The next micro-batch of sample indices (data_cursor, sampler_epoch)."""
        per_epoch = cfg.n_samples // cfg.micro_batch
        if self.cursor.value == per_epoch:  # epoch boundary
            self.epoch.value += 1
            self.cursor.value = 0
        self.sampler.set_epoch(self.epoch.value)
        order = list(self.sampler)
        start = self.cursor.value * cfg.micro_batch
        self.cursor.value += 1
        return torch.tensor(order[start : start + cfg.micro_batch])

    def augment(self, x: torch.Tensor, cfg: TinyConfig) -> torch.Tensor:
        """Random augmentation from all three global streams (rng)."""
        if random.random() < 0.5:  # python stream: a flip
            x = x.flip(-1)
        keep = torch.from_numpy(np.random.rand(cfg.n_features) > 0.1)  # numpy stream
        noise = torch.randn_like(x) * aug_at(cfg, self.global_step.value)  # torch stream
        return (x + noise) * keep

    def train_step(self) -> StepOutput:
        cfg = self.cfg
        dtype = torch.float16 if self.fp16 else torch.bfloat16
        self.model.train()
        total, seen = torch.zeros(()), []
        for _ in range(cfg.accum_steps):  # gradient accumulation
            with phase(DATA_WAIT):
                idx = self.next_batch(cfg)
                seen.append(idx)
                x = self.augment(self.x[idx], cfg)
                y = self.y[idx]
            with phase(HOST_TO_DEVICE):
                x, y = x.to(DEVICE), y.to(DEVICE)  # a no-op on the CPU, timed all the same
            with phase(FORWARD), torch.autocast("cpu", dtype=dtype):
                logits = self.model(x)  # dropout inside (rng)
                loss = F.cross_entropy(
                    logits.float(), y, label_smoothing=cfg.label_smoothing
                ) / cfg.accum_steps
            with phase(BACKWARD):
                self.scaler.scale(loss).backward()
                total += loss.detach()
        with phase(OPTIMIZER_STEP):
            self.scaler.step(self.optimizer)  # skipped when the scaled gradients overflowed
            self.scaler.update()
            self.optimizer.zero_grad(set_to_none=True)
            self.scheduler.step()
            self.global_step.value += 1
        return StepOutput(loss=total, samples=torch.cat(seen))

    # -- for `resumecheck baseline`: a tiny deterministic batch and its loss --
    def tiny_batch(self, size: int) -> tuple[torch.Tensor, torch.Tensor]:
        """The first ``size`` samples, unaugmented."""
        return self.x[:size], self.y[:size]

    def batch_loss(self, model: nn.Module, batch: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        """The training loss of ``model`` on ``batch``, without autocast (mean reduction)."""
        x, y = batch
        return F.cross_entropy(model(x), y, label_smoothing=self.cfg.label_smoothing)


def build(config: dict) -> TinyProgram:
    """The factory: settings in, program out ({} gives the defaults)."""
    known = {f.name for f in fields(TinyConfig)}
    unknown = sorted(set(config) - known)
    if unknown:
        raise ValueError(f"unknown settings {unknown}; known: {sorted(known)}")
    return TinyProgram(TinyConfig(**config))


def build_bf16(config: dict) -> TinyProgram:
    """The bf16 variant: autocast to bfloat16, no loss scaler (8 components)."""
    return build({"precision": "bf16", **config})


TARGET = Target(
    factory=build, run_config=RUN_CONFIG, steps=STEPS, resume_at=(RESUME_AT,),
    spec="resumecheck.tiny:TARGET",
)
TARGET_BF16 = Target(
    factory=build_bf16, run_config=RUN_CONFIG, steps=STEPS, resume_at=(RESUME_AT,),
    spec="resumecheck.tiny:TARGET_BF16",
)
