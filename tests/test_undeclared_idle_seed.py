"""A loader's own generator that seeds no worker, where a framework holds the
loader (a Lightning datamodule's generator given to the DataLoader its
train_dataloader() makes): said to be what it is, not a state the
checkpoint loses. Trial 519's correct program read "your checkpoint loses it"
of it (``undeclared._live_loader_seeds``; the loader a program's own
attribute holds: ``tests/test_trust_undeclared.py``)."""

from __future__ import annotations

import torch
from torch.utils.data import DataLoader, RandomSampler, SequentialSampler, TensorDataset

from resumecheck import undeclared
from resumecheck.phrases import IDLE_SEED, REGISTER_GENERATOR, lost_uncompared

PATH = "datamodule (Data).loader_gen"


class _Framework:
    def __init__(self, loader: DataLoader) -> None:
        self.loader = loader

    def live_loaders(self) -> list[DataLoader]:
        return [self.loader]


def _said(loader: DataLoader, gen: torch.Generator) -> str:
    line = (f"{PATH} (a torch.Generator whose state the run changed, drawn from or seeded "
            f"again, and no declared component holds: {REGISTER_GENERATOR}); your own resume "
            "(through Lightning's restore) ends with it otherwise than the uninterrupted run "
            "did: your checkpoint loses it, unless it is not state (a log, a timer)")
    return undeclared._idle_seeds_said({PATH: line}, _Framework(loader), {PATH: (gen, [])})[PATH]


def test_a_framework_loaders_generator_that_seeds_no_worker_is_said_so():
    data = TensorDataset(torch.arange(8.0))
    gen = torch.Generator().manual_seed(0)
    line = _said(DataLoader(data, batch_size=2, sampler=SequentialSampler(data),
                            generator=gen), gen)
    assert IDLE_SEED in line and REGISTER_GENERATOR not in line, line
    assert f"name it in the target's not_state=('{PATH}',) to say so" in line, line
    assert lost_uncompared([f"not compared: {line}"]) == []  # (no warning, no --strict failure)


def test_one_that_shuffles_or_seeds_workers_is_left_as_it_was():
    data = TensorDataset(torch.arange(8.0))
    gen = torch.Generator().manual_seed(0)
    shuffled = DataLoader(data, batch_size=2, sampler=RandomSampler(data, generator=gen),
                          generator=gen)
    assert REGISTER_GENERATOR in _said(shuffled, gen)
    workers = DataLoader(data, batch_size=2, num_workers=2, generator=gen)
    assert REGISTER_GENERATOR in _said(workers, gen)
    other = torch.Generator().manual_seed(1)
    assert REGISTER_GENERATOR in _said(DataLoader(data, generator=other), gen)


def test_it_is_no_lead_of_a_departure():
    """Trial 519: beside a lost warm-up count, the why and the WARNING listed the
    idle generator first as what the checkpoint may lose."""
    from resumecheck import verdict
    from resumecheck.report import RunResult, _may_explain

    data = TensorDataset(torch.arange(8.0))
    gen = torch.Generator().manual_seed(0)
    idle = _said(DataLoader(data, batch_size=2, sampler=SequentialSampler(data),
                            generator=gen), gen)
    idle = idle.replace("ends with it otherwise than the uninterrupted run did: your "
                        "checkpoint loses it", "held it otherwise right after Lightning's "
                        "restore at step 4, and departed from the uninterrupted run at the "
                        "next step: your checkpoint may lose it")
    count = ("params.warmup_step (int: 0 at the build, 20 at the end, ...); your own resume "
             "held it otherwise right after Lightning's restore at step 4, and departed from "
             "the uninterrupted run at the next step: your checkpoint may lose it, unless ...")
    assert _may_explain([idle, count]) == [count]
    own = RunResult(dropped=[], resume_at=[4], verdict="diverged", first_divergent_step=5,
                    checkpoint="program",
                    first_divergent_quantity="learning rate",
                    explanation="learning rate differs from step 5")
    verdict.note_lost_uncompared(own, [idle, count])
    assert "your checkpoint may lose it: `params.warmup_step` (see" in own.explanation, \
        own.explanation
    assert PATH not in own.explanation


def test_a_lost_field_leads_an_unjudged_finding_of_the_departed_resume():
    """Trial 599: a Lightning stream one draw behind, left unjudged (the engine's
    own resume departed too) and alike on the correct twin, led the why as
    "restored state differs in rng" before the callback's epoch that its
    checkpoint lost; a confirmed cause still leads (trial 580)."""
    from resumecheck import verdict
    from resumecheck.report import CONFIRMED, Finding, RunResult

    lost = ("callbacks (Buckets).epoch (int: 0 at the build, 2 at the end, ...); your own "
            "resume held it otherwise right after Lightning's restore at step 11, and departed "
            "from the uninterrupted run at the next step: your checkpoint may lose it, unless "
            "the program sets it again as it steps")

    def own(status: str | None) -> RunResult:
        return RunResult(
            dropped=[], resume_at=[11], verdict="diverged", first_divergent_step=12,
            checkpoint="program", first_divergent_quantity="data (the samples consumed)",
            diagnosis=[Finding("rng", "torch CPU stream differs", 11, status=status)],
            explanation="data (the samples consumed) differs from step 12; restored state "
                        "differs in rng; loss leaves the seed-to-seed band at step 18")

    unjudged = own(None)
    verdict.note_lost_uncompared(unjudged, [lost])
    assert unjudged.explanation.startswith(
        "data (the samples consumed) differs from step 12; not compared, and your checkpoint "
        "may lose it: `callbacks (Buckets).epoch` (see `not compared`); restored state differs "
        "in rng;"), unjudged.explanation
    confirmed = own(CONFIRMED)
    verdict.note_lost_uncompared(confirmed, [lost])
    assert confirmed.explanation.endswith(
        "; apart from that, not compared, and your checkpoint may lose it: "
        "`callbacks (Buckets).epoch` (see `not compared`)"), confirmed.explanation


def test_what_the_checkpoint_may_lose_comes_after_what_qualifies_the_step():
    """Trial 611: "differs from step 11; not compared, ... (see `not compared`)
    (the loss from step 12)" read the loss's step as said of `run.loss_ema`."""
    from resumecheck import verdict
    from resumecheck.report import RunResult

    lost = ("run.loss_ema (float: ...); your own resume held it otherwise right after your "
            "load() at step 10, and departed from the uninterrupted run at the next step: your "
            "checkpoint may lose it, unless the program sets it again as it steps")
    own = RunResult(dropped=[], resume_at=[10], verdict="diverged", first_divergent_step=11,
                    checkpoint="program", first_divergent_quantity="gradient of 0.bias",
                    explanation="gradient of 0.bias differs from step 11 (the loss from step "
                                "12); no declared component's state differs")
    verdict.note_lost_uncompared(own, [lost])
    assert own.explanation.startswith(
        "gradient of 0.bias differs from step 11 (the loss from step 12); not compared, and "
        "your checkpoint may lose it: `run.loss_ema` (see `not compared`)"), own.explanation
