"""The built-in distributed program: the tiny classifier, trained by N ranks.

Read it top to bottom, like ``tiny.py``. It is built in every rank after the
process group exists (``resumecheck run resumecheck.tiny_dist:DDP --nproc 2``,
or under ``torchrun``), and it exercises what many ranks add to a resume:

* a gradient synchronization: DDP's all-reduce (``mode="ddp"``) or FSDP2's
  reduce-scatter of sharded parameters (``mode="fsdp"``, ``fully_shard``),
  skipped on the micro-batches of an accumulation that are not the last
  (``no_sync`` / ``set_requires_gradient_sync(False)``);
* a ``DistributedSampler`` with epochs: each rank reads its own shard of a new
  shuffle every epoch (sampler_epoch, and a per-rank data_cursor);
* per-rank random streams: dropout and augmentation draw from streams seeded
  differently on every rank (rng, per rank);
* its own checkpoint: model and optimizer through ``torch.distributed.checkpoint``
  (sharded under FSDP), the scheduler, counters and settings beside them, and
  each rank's own state in ``path/rank{r}.pt``.

Its components give the engine full (unsharded) tensors, the same on every
rank, so captures compare across ranks and modes; its own ``save``/``load``
is the thing under audit. Float32 by default; the ``*_FP16`` targets autocast
to float16 with a loss scaler whose scale overflows and moves (scaler; under
FSDP a ``ShardedGradScaler``, which agrees over the ranks on whether a step
overflowed), the ``*_BF16`` targets autocast to bfloat16 without one.
"""

from __future__ import annotations

import os
import random
from contextlib import nullcontext
from dataclasses import asdict, dataclass, fields
from typing import Any

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.utils.data import TensorDataset
from torch.utils.data.distributed import DistributedSampler

from resumecheck.components import RNGState, Value
from resumecheck.program import StepOutput, Target
from resumecheck.phases import (
    BACKWARD, DATA_WAIT, FORWARD, GRAD_SYNC, OPTIMIZER_STEP, phase,
)

__all__ = [
    "DDP", "DDP_BF16", "DDP_ELASTIC", "DDP_FP16", "ELASTIC_CONFIG", "FSDP", "FSDP_BF16",
    "FSDP_ELASTIC", "FSDP_FP16", "RESUME_AT", "RUN_CONFIG", "ReplicatedState", "STEPS",
    "TinyDistConfig", "TinyDistProgram", "build", "build_ddp", "build_fsdp", "load_elastic",
]

MODES = ("ddp", "fsdp")
PRECISIONS = ("fp32", "fp16", "bf16")


@dataclass(kw_only=True, slots=True)
class TinyDistConfig:
    """Settings of the distributed tiny program; the defaults are what a restart starts from."""

    seed: int = 0
    """Seeds the initialisation (alike on every rank), the shuffle and, offset by
    the rank, each rank's dropout and augmentation streams."""
    mode: str = "ddp"
    """'ddp' (DistributedDataParallel: all-reduce) or 'fsdp' (FSDP2 fully_shard:
    reduce-scatter, sharded parameters and optimizer state)."""
    precision: str = "fp32"
    """'fp32'; 'fp16' (autocast with a loss scaler: scaler) or 'bf16' (autocast, no scaler)."""
    init_scale: float = 2.0**17
    """fp16: high enough that early steps overflow and the scale moves (scaler)."""
    growth_interval: int = 2
    """fp16: overflow-free steps before the scale doubles."""
    n_samples: int = 64
    """Size of the generated dataset; at 2 ranks, 4 optimizer steps make one epoch."""
    n_features: int = 16
    """Inputs per sample."""
    n_classes: int = 4
    """Classes of the generated labels."""
    hidden: int = 32
    """Width of the hidden layer."""
    dropout: float = 0.2
    """Dropout draws from this rank's torch stream every step (rng, per rank)."""
    micro_batch: int = 4
    """Samples per micro-batch on each rank."""
    accum_steps: int = 2
    """Micro-batches per optimizer step on each rank (gradient accumulation)."""
    lr: float = 3e-3
    """AdamW's peak learning rate (optimizer)."""
    weight_decay: float = 0.01
    """AdamW's decoupled weight decay."""
    warmup_steps: int = 3
    """Steps of linear warm-up (scheduler)."""
    decay_steps: int = 24
    """Steps of linear decay after the warm-up (scheduler)."""
    flip_prob: float = 0.5
    """Chance that augmentation mirrors a micro-batch (python stream, per rank)."""
    keep_prob: float = 0.9
    """Share of features augmentation keeps (numpy stream, per rank)."""
    aug_noise: float = 0.3
    """Largest standard deviation of the augmentation noise (torch stream, per rank)."""
    aug_warmup_steps: int = 20
    """Augmentation noise ramps up with the global step (global_step)."""
    label_smoothing: float = 0.0
    """Nothing but the config component restores this (config)."""

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"mode={self.mode!r}: expected 'ddp' or 'fsdp'")
        if self.precision not in PRECISIONS:
            raise ValueError(f"precision={self.precision!r}: expected one of {PRECISIONS}")


# As in tiny.py: the run is launched with a setting a restart from defaults
# would lose unless the checkpoint carries the config.
RUN_CONFIG = {"label_smoothing": 0.1}
STEPS = 8
RESUME_AT = 5  # at 2 ranks: epoch 1, one step in (after an epoch boundary, mid-epoch)
FULL = None  # StateDictOptions(full_state_dict=True), made on first use


def _full_options() -> Any:
    global FULL
    if FULL is None:
        from torch.distributed.checkpoint.state_dict import StateDictOptions

        FULL = StateDictOptions(full_state_dict=True)
    return FULL


def make_dataset(cfg: TinyDistConfig) -> tuple[torch.Tensor, torch.Tensor]:
    """A fixed, generated dataset: the same on every rank, for every seed and restart."""
    g = torch.Generator().manual_seed(1234)
    x = torch.randn(cfg.n_samples, cfg.n_features, generator=g)
    w = torch.randn(cfg.n_features, cfg.n_classes, generator=g)
    return x.to(torch.get_default_dtype()), (x @ w).argmax(dim=1)


def lr_lambda(cfg: TinyDistConfig):
    """Linear warm-up, then linear decay (the scheduler's multiplier per step)."""

    def factor(step: int) -> float:
        if step < cfg.warmup_steps:
            return (step + 1) / cfg.warmup_steps
        return max(0.1, 1.0 - (step - cfg.warmup_steps) / cfg.decay_steps)

    return factor


def aug_at(cfg: TinyDistConfig, step: int) -> float:
    """Augmentation noise strength at a global step (reads global_step)."""
    return cfg.aug_noise * min(1.0, (step + 1) / cfg.aug_warmup_steps)


def stream_seed(cfg: TinyDistConfig, rank: int) -> int:
    """Each rank's own seed for dropout and augmentation: ranks must not share masks."""
    return cfg.seed * 1000 + 1 + rank


def timed_allreduce(group, bucket):  # type: ignore[no-untyped-def]
    """DDP's all-reduce of one bucket of gradients (averaged over the ranks), waited
    for inside backward so that `resumecheck timing` can show the gradient sync
    (this gives up overlapping it with the rest of backward). No annotations: DDP
    checks that a hook's ``bucket`` is annotated as ``dist.GradBucket`` or not at all."""
    from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook

    with phase(GRAD_SYNC):
        future = allreduce_hook(group, bucket)
        future.wait()
    return future


class TinyModel(nn.Module):
    def __init__(self, cfg: TinyDistConfig) -> None:
        super().__init__()
        self.fc1 = nn.Linear(cfg.n_features, cfg.hidden)
        self.drop = nn.Dropout(cfg.dropout)
        self.fc2 = nn.Linear(cfg.hidden, cfg.n_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.drop(F.gelu(self.fc1(x))))


class FullModelState:
    """The parameters as full tensors on every rank (gathered under FSDP).

    ``state_dict`` and ``load_state_dict`` are collectives: every rank calls them."""

    def __init__(self, model: nn.Module) -> None:
        self.model = model

    def state_dict(self) -> dict[str, Any]:
        from torch.distributed.checkpoint.state_dict import get_model_state_dict

        return get_model_state_dict(self.model, options=_full_options())

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        from torch.distributed.checkpoint.state_dict import set_model_state_dict

        set_model_state_dict(self.model, state_dict, options=_full_options())


class FullOptimizerState:
    """The optimizer's state as full tensors keyed by parameter name, on every rank.

    ``optimizer`` is the torch optimizer that steps (the tracer hooks it)."""

    def __init__(self, model: nn.Module, optimizer: torch.optim.Optimizer) -> None:
        self.model = model
        self.optimizer = optimizer

    def state_dict(self) -> dict[str, Any]:
        from torch.distributed.checkpoint.state_dict import get_optimizer_state_dict

        return get_optimizer_state_dict(self.model, self.optimizer, options=_full_options())

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        from torch.distributed.checkpoint.state_dict import set_optimizer_state_dict

        set_optimizer_state_dict(self.model, self.optimizer, state_dict, options=_full_options())


class ReplicatedState:
    """What every rank holds alike beside the model: one copy in the dcp checkpoint."""

    def __init__(self, program: TinyDistProgram) -> None:
        self.program = program

    def state_dict(self) -> dict[str, Any]:
        p = self.program
        return {"scheduler": p.scheduler.state_dict(), "scaler": p.scaler.state_dict(),
                "epoch": p.epoch.value, "global_step": p.global_step.value,
                "config": dict(p.config.value), "batch_ranks": p.batch_ranks,
                "saved_by": p.world_size}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        p = self.program
        p.config.value = dict(state_dict["config"])
        p.scheduler.load_state_dict(state_dict["scheduler"])  # after the optimizer's state
        if state_dict.get("scaler"):  # fp16 only: a disabled scaler's state is empty
            p.scaler.load_state_dict(state_dict["scaler"])
        p.epoch.value = state_dict["epoch"]
        p.global_step.value = state_dict["global_step"]
        p.batch_ranks = int(state_dict["batch_ranks"])
        p.saved_by = int(state_dict["saved_by"])


class TinyDistProgram:
    def __init__(self, cfg: TinyDistConfig) -> None:
        if not dist.is_available() or not dist.is_initialized():
            raise RuntimeError(
                "the distributed tiny program needs a process group: run it with "
                "`resumecheck run resumecheck.tiny_dist:DDP --nproc 2` or under torchrun "
                "(torch.distributed.init_process_group must have been called)"
            )
        self.rank, self.world_size = dist.get_rank(), dist.get_world_size()
        # global batch: micro_batch * accum_steps * batch_ranks, kept by an elastic resume
        self.batch_ranks = self.saved_by = self.world_size  # saved_by: the last load's writers
        per_step = self.world_size * cfg.micro_batch * cfg.accum_steps
        if cfg.n_samples % per_step:
            raise ValueError(
                f"n_samples={cfg.n_samples} is not a multiple of world_size * micro_batch * "
                f"accum_steps = {per_step}: choose settings whose epochs end on a step"
            )
        self.config = Value(asdict(cfg))  # config: the settings, read every step
        self.x, self.y = make_dataset(cfg)
        torch.manual_seed(cfg.seed)  # the same initialisation on every rank
        module = TinyModel(cfg)  # params
        self.model: nn.Module
        if cfg.mode == "ddp":
            from torch.nn.parallel import DistributedDataParallel

            self.model = DistributedDataParallel(module)  # all-reduce of gradients
            self.model.register_comm_hook(None, timed_allreduce)  # marks it for timing
        else:
            from torch.distributed.fsdp import fully_shard

            fully_shard(module.fc1)  # each layer's parameters sharded over the ranks
            fully_shard(module.fc2)
            fully_shard(module)  # reduce-scatter of gradients
            self.model = module
        seed = stream_seed(cfg, self.rank)  # rng: each rank its own streams
        seed_streams(seed)
        self.optimizer = torch.optim.AdamW(  # optimizer (sharded under FSDP)
            self.model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay
        )
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(  # scheduler: warm-up then decay
            self.optimizer, lr_lambda(cfg)
        )
        self.fp16 = cfg.precision == "fp16"
        self.scaler = _scaler(cfg)  # scaler (fp16): loss scale and growth tracker
        self.sampler: DistributedSampler = DistributedSampler(  # each rank its own shard
            TensorDataset(self.x, self.y), num_replicas=self.world_size, rank=self.rank,
            shuffle=True, seed=cfg.seed,
        )
        self.epoch = Value(0)  # sampler_epoch: a new shuffle every epoch
        self.cursor = Value(0)  # data_cursor (per rank): micro-batches of this rank's shard read
        self.global_step = Value(0)  # global_step: read by aug_at()
        self.rng = RNGState(streams=("python", "numpy", "torch"))  # rng (per rank)
        self.params = FullModelState(self.model)
        self.optimizer_state = FullOptimizerState(self.model, self.optimizer)
        self.replicated = ReplicatedState(self)

    @property
    def cfg(self) -> TinyDistConfig:
        return TinyDistConfig(**self.config.value)

    @property
    def steps_per_epoch(self) -> int:  # tells fuzzing where the epoch boundaries are
        cfg = self.cfg
        return cfg.n_samples // (self.batch_ranks * cfg.micro_batch * cfg.accum_steps)

    @property
    def accum_steps(self) -> int:
        return _accum_here(self, self.cfg)

    def components(self) -> dict[str, Any]:
        comps = {
            "params": self.params,  # full tensors, alike on every rank
            "optimizer": self.optimizer_state,
            "scheduler": self.scheduler,  # after the optimizer: restore order matters
            "scaler": self.scaler,
            "rng": self.rng,  # per rank
            "data_cursor": self.cursor,  # per rank
            "sampler_epoch": self.epoch,
            "global_step": self.global_step,
            "config": self.config,
        }
        if not self.fp16:
            del comps["scaler"]  # fp32 and bf16 need no loss scaling
        return comps

    def next_batch(self, cfg: TinyDistConfig) -> torch.Tensor:
        """This rank's next micro-batch of sample indices (data_cursor, sampler_epoch)."""
        per_epoch = len(self.sampler) // cfg.micro_batch
        if self.cursor.value == per_epoch:  # epoch boundary
            self.epoch.value += 1
            self.cursor.value = 0
        self.sampler.set_epoch(self.epoch.value)
        order = list(self.sampler)  # this rank's shard of the epoch's shuffle
        start = self.cursor.value * cfg.micro_batch
        self.cursor.value += 1
        return torch.tensor(order[start : start + cfg.micro_batch])

    def augment(self, x: torch.Tensor, cfg: TinyDistConfig) -> torch.Tensor:
        """Random augmentation from this rank's three global streams (rng, per rank)."""
        if random.random() < cfg.flip_prob:  # python stream: a flip
            x = x.flip(-1)
        keep = torch.from_numpy(np.random.rand(cfg.n_features) < cfg.keep_prob)  # numpy stream
        noise = torch.randn_like(x) * aug_at(cfg, self.global_step.value)  # torch stream
        return (x + noise) * keep

    def _sync_gradients(self, sync: bool) -> None:
        """FSDP2's switch for accumulation; DDP uses the no_sync() context instead."""
        setter = getattr(self.model, "set_requires_gradient_sync", None)
        if setter is not None:
            setter(sync)

    def train_step(self) -> StepOutput:
        cfg = self.cfg
        self.model.train()
        total, seen = torch.zeros(()), []
        accum = _accum_here(self, cfg)
        for micro in range(accum):  # gradient accumulation
            last = micro == accum - 1
            with phase(DATA_WAIT):
                idx = self.next_batch(cfg)
                seen.append(idx)
                x, y = self.augment(self.x[idx], cfg), self.y[idx]
            self._sync_gradients(last)  # FSDP: reduce-scatter only on the last micro-batch
            no_sync = getattr(self.model, "no_sync", None)  # DDP: all-reduce only on the last
            with no_sync() if no_sync is not None and not last else nullcontext():
                with phase(FORWARD):
                    loss = self._loss(x, y, cfg) / accum
                with phase(BACKWARD):
                    self.scaler.scale(loss).backward()  # the sync runs inside, on the last
            total += loss.detach().float()
        with phase(OPTIMIZER_STEP):
            self.scaler.step(self.optimizer)  # fp16: skipped when the gradients overflowed
            self.scaler.update()
            self.optimizer.zero_grad(set_to_none=True)
            self.scheduler.step()
            self.global_step.value += 1
        return StepOutput(loss=total, samples=torch.cat(seen))  # this rank's loss and samples

    def _loss(self, x: torch.Tensor, y: torch.Tensor, cfg: TinyDistConfig) -> torch.Tensor:
        if cfg.precision == "fp32":
            logits = self.model(x)  # dropout inside (rng, per rank)
        else:
            dtype = torch.float16 if self.fp16 else torch.bfloat16
            with torch.autocast("cpu", dtype=dtype):
                logits = self.model(x).float()
        return F.cross_entropy(logits, y, label_smoothing=cfg.label_smoothing)

    # -- the program's own checkpoint: every rank calls both ------------------
    def save(self, path: str) -> None:
        """Model and optimizer (sharded under FSDP) and the replicated state through
        dcp into the directory ``path``; this rank's own state in ``path/rank{r}.pt``."""
        import torch.distributed.checkpoint as dcp
        from torch.distributed.checkpoint.state_dict import get_state_dict

        model_state, optim_state = get_state_dict(self.model, self.optimizer)
        dcp.save({"model": model_state, "optim": optim_state, "train": self.replicated},
                 checkpoint_id=path)
        own = {"rng": self.rng.state_dict(), "data_cursor": self.cursor.value}
        torch.save(own, os.path.join(path, f"rank{self.rank}.pt"))
        dist.barrier()  # every rank's file is written before anyone goes on

    def load(self, path: str) -> None:
        import torch.distributed.checkpoint as dcp
        from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict

        model_state, optim_state = get_state_dict(self.model, self.optimizer)
        dcp.load({"model": model_state, "optim": optim_state, "train": self.replicated},
                 checkpoint_id=path)  # in place; "train" through ReplicatedState
        set_state_dict(self.model, self.optimizer, model_state_dict=model_state,
                       optim_state_dict=optim_state)
        if self.saved_by != self.world_size:  # written by another number of ranks
            return load_elastic(self, path)
        own = torch.load(os.path.join(path, f"rank{self.rank}.pt"), weights_only=True)
        self.rng.load_state_dict(own["rng"])
        self.cursor.value = own["data_cursor"]

    # -- for `resumecheck baseline`: a tiny deterministic batch and its loss --
    def tiny_batch(self, size: int) -> tuple[torch.Tensor, torch.Tensor]:
        """The first ``size`` samples of the dataset, unaugmented (the global batch)."""
        return self.x[:size], self.y[:size]

    def batch_loss(self, model: nn.Module, batch: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        """The training loss of ``model`` on ``batch`` (mean reduction)."""
        x, y = batch
        return F.cross_entropy(model(x), y, label_smoothing=self.cfg.label_smoothing)

    def equivalence_config(self, world_size: int, nproc: int) -> dict[str, Any]:
        """Settings that train at ``world_size`` ranks on the same global batches as at
        ``nproc``: accumulation scaled, no dropout or augmentation (they draw per rank),
        float32 (an fp16 loss-scale schedule skips steps: no tolerance can judge that)."""
        cfg = self.cfg
        accum, rest = divmod(cfg.accum_steps * nproc, world_size)
        if rest:
            raise ValueError(f"accum_steps={cfg.accum_steps} * {nproc} ranks does not "
                             f"divide over {world_size} ranks")
        return {"accum_steps": accum, "dropout": 0.0, "flip_prob": 0.0, "keep_prob": 1.0,
                "aug_noise": 0.0, "precision": "fp32"}


def _accum_here(p: TinyDistProgram, cfg: TinyDistConfig) -> int:
    """Micro-batches per step on this rank: the global batch's, scaled from the
    number of ranks it was set for (``batch_ranks``) to the ranks there are now."""
    return cfg.accum_steps * p.batch_ranks // p.world_size


def load_elastic(p: TinyDistProgram, path: str) -> None:
    """A checkpoint of another number of ranks (DCP has resharded the model and
    optimizer). The global batch stays (``_accum_here``); the data position is
    mapped through the samples every rank read together this epoch (rank 0's
    cursor: every rank reads as many); a rank that was there keeps its own
    streams, a new rank keeps the streams its seed gave it. What cannot map:
    the streams of ranks that are gone, and a new rank's own streams."""
    cfg, n, m = p.cfg, p.saved_by, p.world_size
    if (cfg.accum_steps * p.batch_ranks) % m:
        raise ValueError(
            f"elastic resume at {m} ranks: the global batch of accum_steps="
            f"{cfg.accum_steps} x {p.batch_ranks} ranks does not divide over {m} ranks")
    first = torch.load(os.path.join(path, "rank0.pt"), weights_only=True)
    read = first["data_cursor"] * n  # micro-batches read by all ranks this epoch
    if read % m:
        raise ValueError(
            f"elastic resume at {m} ranks: {read} micro-batches read this epoch by "
            f"{n} ranks do not divide over {m} ranks")
    p.cursor.value = read // m
    own_file = os.path.join(path, f"rank{p.rank}.pt")
    if os.path.exists(own_file):
        p.rng.load_state_dict(torch.load(own_file, weights_only=True)["rng"])


def seed_streams(seed: int) -> None:
    """Seed the three global streams this rank draws from (dropout, augmentation)."""
    torch.manual_seed(seed)
    random.seed(seed)
    np.random.seed(seed)


def _scaler(cfg: TinyDistConfig) -> Any:
    """The fp16 loss scaler: under FSDP each rank sees only its shard of the gradients,
    so the sharded scaler all-reduces whether any shard overflowed."""
    kwargs: dict[str, Any] = {"init_scale": cfg.init_scale, "growth_interval": cfg.growth_interval,
              "enabled": cfg.precision == "fp16"}
    if cfg.mode == "fsdp":
        from torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler

        return ShardedGradScaler("cpu", **kwargs)
    return torch.amp.GradScaler("cpu", **kwargs)


def build(config: dict[str, Any]) -> TinyDistProgram:
    """The factory: settings in, program out ({} gives the defaults)."""
    known = {f.name for f in fields(TinyDistConfig)}
    unknown = sorted(set(config) - known)
    if unknown:
        raise ValueError(f"unknown settings {unknown}; known: {sorted(known)}")
    return TinyDistProgram(TinyDistConfig(**config))


def build_ddp(config: dict[str, Any]) -> TinyDistProgram:
    """DistributedDataParallel: replicated parameters, gradients all-reduced."""
    return build({"mode": "ddp", **config})


def build_fsdp(config: dict[str, Any]) -> TinyDistProgram:
    """FSDP2 ``fully_shard``: sharded parameters and optimizer state, gradients
    reduce-scattered."""
    return build({"mode": "fsdp", **config})


DDP = Target(
    factory=build_ddp, run_config=RUN_CONFIG, steps=STEPS, resume_at=(RESUME_AT,),
    spec="resumecheck.tiny_dist:DDP",
)
FSDP = Target(
    factory=build_fsdp, run_config=RUN_CONFIG, steps=STEPS, resume_at=(RESUME_AT,),
    spec="resumecheck.tiny_dist:FSDP",
)
# fp16: the scale overflows at steps 4, 9 and 11 of the run; a scaler the
# restart forgets lags by a step and meets those overflows elsewhere (scaler).
STEPS_FP16 = 12
DDP_FP16 = Target(
    factory=lambda config: build_ddp({"precision": "fp16", **config}), run_config=RUN_CONFIG,
    steps=STEPS_FP16, resume_at=(RESUME_AT,), spec="resumecheck.tiny_dist:DDP_FP16",
)
FSDP_FP16 = Target(
    factory=lambda config: build_fsdp({"precision": "fp16", **config}), run_config=RUN_CONFIG,
    steps=STEPS_FP16, resume_at=(RESUME_AT,), spec="resumecheck.tiny_dist:FSDP_FP16",
)
DDP_BF16 = Target(
    factory=lambda config: build_ddp({"precision": "bf16", **config}), run_config=RUN_CONFIG,
    steps=STEPS, resume_at=(RESUME_AT,), spec="resumecheck.tiny_dist:DDP_BF16",
)
FSDP_BF16 = Target(
    factory=lambda config: build_fsdp({"precision": "bf16", **config}), run_config=RUN_CONFIG,
    steps=STEPS, resume_at=(RESUME_AT,), spec="resumecheck.tiny_dist:FSDP_BF16",
)
# An elastic resume (``--nproc N --resume-nproc M``) can only be judged on a
# continuation that does not depend on per-rank streams: no dropout, no
# augmentation (the streams are still drawn, and their values unused). The restart
# is built with the run's settings, so its model has no dropout either.
ELASTIC_CONFIG = {**RUN_CONFIG, "dropout": 0.0, "flip_prob": 0.0, "keep_prob": 1.0,
                  "aug_noise": 0.0}
DDP_ELASTIC = Target(
    factory=build_ddp, run_config=ELASTIC_CONFIG, restart_config="run", steps=STEPS,
    resume_at=(RESUME_AT,), spec="resumecheck.tiny_dist:DDP_ELASTIC",
)
# The same under FSDP2: the parameters and AdamW's state are sharded, and DCP
# reshards them from the checkpoint's shards to the ranks that load it.
FSDP_ELASTIC = Target(
    factory=build_fsdp, run_config=ELASTIC_CONFIG, restart_config="run", steps=STEPS,
    resume_at=(RESUME_AT,), spec="resumecheck.tiny_dist:FSDP_ELASTIC",
)
