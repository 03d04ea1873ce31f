"""A character-level language model, trained nanoGPT-style.

This is a *user's* script, written without resumecheck in mind: a config
dataclass, `build`, `train_step`, `save` and `load` (which, like nanoGPT,
builds the model from the checkpoint's config). `check.py` beside it
wraps these four functions for resumecheck in a dozen lines.

Unlike nanoGPT's own checkpoint, `save` here also writes torch's RNG state:
nanoGPT re-seeds on start, so its batches and dropout masks after a resume
differ from the run that never stopped (bug class 5). Remove "rng" from
`save` and `resumecheck run examples/charlm/check.py:TARGET` names it.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import nn

TEXT = (
    "It was the best of times, it was the worst of times, it was the age of wisdom, "
    "it was the age of foolishness, it was the epoch of belief, it was the epoch of "
    "incredulity, it was the season of Light, it was the season of Darkness, it was "
    "the spring of hope, it was the winter of despair, we had everything before us, "
    "we had nothing before us, we were all going direct to Heaven, we were all going "
    "direct the other way."
)


@dataclass
class Config:
    seed: int = 1337
    block_size: int = 16
    batch_size: int = 8
    n_embd: int = 32
    n_head: int = 2
    dropout: float = 0.1
    learning_rate: float = 3e-3
    min_lr: float = 3e-4
    warmup_iters: int = 4
    lr_decay_iters: int = 40
    gradient_accumulation_steps: int = 2
    grad_clip: float = 1.0
    weight_decay: float = 0.1


class Block(nn.Module):
    def __init__(self, cfg: Config) -> None:
        super().__init__()
        self.ln1 = nn.LayerNorm(cfg.n_embd)
        self.attn = nn.MultiheadAttention(cfg.n_embd, cfg.n_head, dropout=cfg.dropout, batch_first=True)
        self.ln2 = nn.LayerNorm(cfg.n_embd)
        self.mlp = nn.Sequential(
            nn.Linear(cfg.n_embd, 4 * cfg.n_embd), nn.GELU(),
            nn.Linear(4 * cfg.n_embd, cfg.n_embd), nn.Dropout(cfg.dropout),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        t = x.size(1)
        mask = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
        h = self.ln1(x)
        x = x + self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


class TinyGPT(nn.Module):
    def __init__(self, cfg: Config, vocab_size: int) -> None:
        super().__init__()
        self.tok = nn.Embedding(vocab_size, cfg.n_embd)
        self.pos = nn.Embedding(cfg.block_size, cfg.n_embd)
        self.drop = nn.Dropout(cfg.dropout)
        self.block = Block(cfg)
        self.ln_f = nn.LayerNorm(cfg.n_embd)
        self.head = nn.Linear(cfg.n_embd, vocab_size, bias=False)

    def forward(self, idx: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        pos = torch.arange(idx.size(1))
        x = self.drop(self.tok(idx) + self.pos(pos))
        logits = self.head(self.ln_f(self.block(x)))
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


@dataclass
class State:
    cfg: Config
    data: torch.Tensor
    model: TinyGPT
    optimizer: torch.optim.Optimizer
    iter_num: int = 0


def get_lr(it: int, cfg: Config) -> float:
    """nanoGPT's schedule: linear warm-up, cosine decay to min_lr (reads iter_num)."""
    if it < cfg.warmup_iters:
        return cfg.learning_rate * (it + 1) / (cfg.warmup_iters + 1)
    if it > cfg.lr_decay_iters:
        return cfg.min_lr
    ratio = (it - cfg.warmup_iters) / (cfg.lr_decay_iters - cfg.warmup_iters)
    return cfg.min_lr + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (cfg.learning_rate - cfg.min_lr)


def get_batch(state: State) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Random windows of the text, drawn from torch's global stream like nanoGPT."""
    cfg, data = state.cfg, state.data
    ix = torch.randint(len(data) - cfg.block_size, (cfg.batch_size,))
    x = torch.stack([data[i : i + cfg.block_size] for i in ix])
    y = torch.stack([data[i + 1 : i + 1 + cfg.block_size] for i in ix])
    return x, y, ix


def build(cfg: Config) -> State:
    torch.manual_seed(cfg.seed)
    vocab = sorted(set(TEXT))
    data = torch.tensor([vocab.index(c) for c in TEXT])
    model = TinyGPT(cfg, len(vocab))
    optimizer = torch.optim.AdamW(
        model.parameters(), lr=cfg.learning_rate, weight_decay=cfg.weight_decay, betas=(0.9, 0.95)
    )
    return State(cfg, data, model, optimizer)


def train_step(state: State) -> tuple[float, torch.Tensor]:
    """One optimizer step over gradient_accumulation_steps micro-batches."""
    cfg = state.cfg
    lr = get_lr(state.iter_num, cfg)
    for group in state.optimizer.param_groups:
        group["lr"] = lr
    state.model.train()
    total, seen = 0.0, []
    for _ in range(cfg.gradient_accumulation_steps):
        x, y, ix = get_batch(state)
        loss = state.model(x, y) / cfg.gradient_accumulation_steps
        loss.backward()
        total += loss.item()
        seen.append(ix)
    torch.nn.utils.clip_grad_norm_(state.model.parameters(), cfg.grad_clip)
    state.optimizer.step()
    state.optimizer.zero_grad(set_to_none=True)
    state.iter_num += 1
    return total, torch.cat(seen)


def save(state: State, path: str) -> None:
    torch.save(
        {
            "model": state.model.state_dict(),
            "optimizer": state.optimizer.state_dict(),
            "config": asdict(state.cfg),
            "iter_num": state.iter_num,
            "rng": torch.get_rng_state(),  # nanoGPT omits this
        },
        path,
    )


def load(path: str) -> State:
    """Resume like nanoGPT: build from the checkpoint's config, then load the state.

    Building first from today's defaults and loading the config afterwards
    would leave settings baked in at build time (the dropout rate inside the
    modules) at their defaults: resumecheck reports exactly that as a
    divergence with no component to blame.
    """
    ckpt = torch.load(path, weights_only=True)
    state = build(Config(**ckpt["config"]))
    state.model.load_state_dict(ckpt["model"])
    state.optimizer.load_state_dict(ckpt["optimizer"])
    state.iter_num = ckpt["iter_num"]
    if "rng" in ckpt:
        torch.set_rng_state(ckpt["rng"])  # last: build() seeded the stream
    return state
