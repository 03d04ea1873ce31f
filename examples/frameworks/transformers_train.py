"""A small HuggingFace Trainer script: what a user has before resumecheck.

A one-layer GPT-2 built from a config (nothing is downloaded), trained on
40 in-memory sequences of 8 tokens in shuffled batches of 8 (5 steps per
epoch) with the Trainer's defaults (AdamW, linear schedule with warm-up,
dropout 0.1).
"""

import torch
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainerCallback

CONFIG = GPT2Config(n_layer=1, n_head=2, n_embd=16, vocab_size=64, n_positions=16,
                    bos_token_id=0, eos_token_id=0)


class Tokens(torch.utils.data.Dataset):
    def __init__(self):
        self.ids = torch.randint(0, 64, (40, 8), generator=torch.Generator().manual_seed(1234))

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "labels": self.ids[i]}


def make_trainer(args):
    return Trainer(model=GPT2LMHeadModel(CONFIG), args=args, train_dataset=Tokens())


ARGS = {"per_device_train_batch_size": 8, "learning_rate": 1e-2, "warmup_steps": 4}


class DropSchedulerState(TrainerCallback):
    """A seeded omission: scheduler.pt is removed from every checkpoint."""

    def on_save(self, args, state, control, **kwargs):
        import os
        path = os.path.join(args.output_dir, f"checkpoint-{state.global_step}", "scheduler.pt")
        if os.path.exists(path):
            os.remove(path)
