"""HuggingFace Accelerate: prepared objects as components, accelerate_program, and
what Accelerate's own resume path really does with each data-loader setting.

The examples live in examples/frameworks/ (accelerate_train.py is the user's
script, accelerate_check.py wraps it). These tests assert what the framework
does (which samples a resumed epoch consumes, what the streams hold after
load_state), not the wording of today's explanations.
"""

from __future__ import annotations

import importlib.util
import ast
import inspect
import pickle
import random
import re
import sys
from functools import partial
from pathlib import Path

import pytest

# find_spec, not importorskip: importing accelerate at collection cost every xdist
# worker seconds; the tests import it when they run.
INSTALLED = pytest.mark.skipif(importlib.util.find_spec("accelerate") is None,
                               reason="accelerate is not installed")

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import resumecheck  # noqa: E402
from resumecheck import RNGState, Target, TargetError  # noqa: E402
from resumecheck.components import reseed_global_streams  # noqa: E402
from resumecheck.program import BuiltProgram, load_target  # noqa: E402
from resumecheck.report import DIVERGED, FAILED, IDENTICAL  # noqa: E402
from resumecheck.trace import Tracer  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CHECK = ROOT / "examples" / "frameworks" / "accelerate_check.py"
K = 7  # the examples resume after step 7: mid-way through the second epoch (5 batches each)

pytestmark = [INSTALLED, pytest.mark.filterwarnings("ignore:'set_vital' is deprecated")]


def spec(name: str) -> str:
    return f"{CHECK}:{name}"


def example_module():
    """The check file's module (and, through it, the user's script)."""
    return inspect.getmodule(load_target(spec("PLAIN")).factory)


def full_resume(name: str, **kw):
    if not kw:  # the README table's run of this example: measured once, shared
        # (imported here: the targets of this module must not reach the cache,
        # which a check would see change as module state)
        from tests.framework_tables import measured

        return measured(f"{CHECK.name}:{name}")
    kw.setdefault("noise_seeds", 0)
    kw.setdefault("check_determinism", False)
    report = resumecheck.verify(spec(name), drop="none", **kw)
    # the adapter's own bookkeeping (its stream lookahead) is no state of the user's
    assert report.undeclared == [], report.undeclared
    return report.runs[0]


# -- the objects accelerator.prepare returns --------------------------------


class ReadmeStyle:
    """A user's program that declares what prepare() returned, as it is."""

    def __init__(self, settings):
        train = example_module().train
        self.acc, self.model, self.opt, self.loader, self.sched = train.setup(
            loader="stateful", **settings)
        self.batches = None

    def components(self):
        return {"params": self.model, "optimizer": self.opt, "scheduler": self.sched,
                "data_cursor": self.loader, "rng": RNGState(streams=["torch"])}

    def train_step(self):
        if self.batches is None:
            self.batches = iter(self.loader)
        try:
            x, y = next(self.batches)
        except StopIteration:
            self.batches = iter(self.loader)
            x, y = next(self.batches)
        loss = F.cross_entropy(self.model(x), y)
        self.acc.backward(loss)
        self.opt.step()
        self.sched.step()
        self.opt.zero_grad()
        return loss


def test_the_tracer_sees_the_real_optimizer_under_AcceleratedOptimizer():
    built = BuiltProgram.wrap("readme", ReadmeStyle({}))
    assert type(built.program.opt).__name__ == "AcceleratedOptimizer"
    tracer = Tracer(built, None)
    try:
        records = []
        for step in range(1, 4):
            tracer.before_step()
            records.append(tracer.after_step(step, built.step(step), keep_tensors=False))
    finally:
        tracer.close()
    for record in records:
        assert not record.skipped  # the pre-hook ran: it is on the real optimizer
        assert any(key.startswith("grad:") for key in record.digests)
    lrs = [r.lr[0] for r in records]
    assert lrs == sorted(lrs) and lrs[0] < lrs[-1]  # the warm-up, as the optimizer saw it


def test_prepared_optimizer_scheduler_and_stateful_loader_work_as_components():
    target = Target(factory=ReadmeStyle, steps=8, resume_at=(3,))
    report = resumecheck.verify(target, drop=["optimizer", "scheduler"], noise_seeds=0,
                                check_determinism=False)
    runs = {tuple(r.dropped): r for r in report.runs}
    assert all(r.verdict != FAILED for r in report.runs), [r.failure for r in report.runs]
    # Each is captured and restored through its wrapper, without a failure. The
    # full resume of this hand-written loop diverges for another reason (its
    # own iter() after the restore draws from the restored stream), so the
    # engine says the declared state is incomplete and judges no ablation.
    assert report.runs[0].verdict == DIVERGED
    assert report.declared_state_complete is False
    assert runs[("scheduler",)].verdict == "inconclusive"
    assert runs[("optimizer",)].verdict == "inconclusive"


class PlainLoaderAsCursor(ReadmeStyle):
    def __init__(self, settings):
        train = example_module().train
        self.acc, self.model, self.opt, self.loader, self.sched = train.setup(
            loader="plain", **settings)
        self.batches = None


def test_a_plain_prepared_loader_declared_as_data_cursor_gets_a_clear_message():
    with pytest.raises(TargetError) as info:
        resumecheck.verify(Target(factory=PlainLoaderAsCursor, steps=4), noise_seeds=0)
    message = str(info.value)
    assert "DataLoaderShard prepared by Accelerate" in message
    assert "keeps no position" in message
    assert "use_stateful_dataloader=True" in message and "accelerate_program" in message


# -- accelerate_program -----------------------------------------------------


def test_the_readme_snippet_is_the_example_and_takes_at_most_ten_lines():
    source = inspect.getsource(example_module().build)
    assert len(source.strip().splitlines()) <= 10
    for page in (ROOT / "README.md", ROOT / "docs" / "FRAMEWORKS.md"):
        blocks = re.findall(r"```python\n(.*?)```", page.read_text(), flags=re.S)
        snippet = next(b for b in blocks if "accelerate_program(" in b)
        assert source.strip() in snippet, page
        ast.parse(snippet)


class EngineOnly:
    """The same program without save/load: the full resume uses the engine's capture."""

    def __init__(self, settings, name):
        self.inner = load_target(spec(name)).factory(settings)

    def components(self):
        return self.inner.components()

    def train_step(self):
        return self.inner.train_step()


@pytest.mark.e2e
@pytest.mark.parametrize("name", ["PLAIN", "SEEDABLE", "STATEFUL", "PLAIN_OWN_GENERATOR"])
def test_the_engine_capture_is_complete_mid_epoch_and_at_epoch_ends(name):
    example = load_target(spec(name))
    target = Target(factory=partial(EngineOnly, name=name), run_config=example.run_config,
                    restart_config="run", steps=12)
    report = resumecheck.verify(target, resume_at=[3, 5, 7, 10], drop="none",
                                noise_seeds=0, check_determinism=False)
    assert report.runs[0].checkpoint == "engine"
    assert report.runs[0].verdict == IDENTICAL, report.runs[0].explanation


class NoisyRows(torch.utils.data.Dataset):
    """The example's data, augmented with noise from torch's global stream on every read."""

    def __init__(self):
        self.base = example_module().train.dataset()

    def __len__(self):
        return len(self.base)

    def __getitem__(self, i):
        x, y = self.base[i]
        return x + 0.1 * torch.randn(8), y


class OwnNoiseRows(NoisyRows):
    """Trial 382: noise from a generator the dataset keeps, which no checkpoint holds."""

    def __init__(self):
        super().__init__()
        self.rng, self.reads = torch.Generator().manual_seed(1), 0
        self.flip = random.Random(2)

    def __getitem__(self, i):
        x, y = self.base[i]
        self.reads += 1
        sign = -1.0 if self.flip.random() < 0.1 else 1.0
        return sign * x + 0.1 * torch.randn(8, generator=self.rng), y


def _plain_program(accelerator, model, optimizer, loader):
    """The objects prepared, and the example's loss stepped plainly: a builder's tail."""
    from resumecheck.frameworks.accelerate import accelerate_program

    train = example_module().train
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)

    def step(batch):
        loss = train.loss_of(model, batch)
        accelerator.backward(loss)
        optimizer.step(); optimizer.zero_grad()  # noqa: E702
        return loss
    return accelerate_program(accelerator, model=model, optimizer=optimizer, loader=loader,
                              step=step)


def _build_augmenting(settings, own_save_load=True, dataset=NoisyRows):
    from accelerate import Accelerator, DataLoaderConfiguration
    from accelerate.utils import set_seed

    set_seed(settings.get("seed", 0))
    accelerator = Accelerator(
        cpu=True, dataloader_config=DataLoaderConfiguration(use_seedable_sampler=True))
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = torch.utils.data.DataLoader(dataset(), batch_size=8, shuffle=True,
                                         generator=torch.Generator().manual_seed(0))
    program = _plain_program(accelerator, model, optimizer, loader)
    return program if own_save_load else _NoSaveLoad(program)


@pytest.mark.e2e
def test_a_generator_the_dataset_keeps_is_named_with_what_keeps_it():
    """Trial 382: a dataset's own generator, lost by every restart, was named
    nowhere; the WARNING guessed at positions and curricula."""
    own = Target(factory=partial(_build_augmenting, dataset=OwnNoiseRows), steps=10,
                 resume_at=(K,))
    report = resumecheck.verify(own, drop="none", noise_seeds=0, check_determinism=False)
    assert not report.equivalent
    [line] = [u for u in report.undeclared if u.startswith("loader.dataset (OwnNoiseRows).rng")]
    assert "a torch.Generator whose state the run changed" in line, line
    assert "`loader.dataset (OwnNoiseRows).rng`" in report.full_resume.explanation
    [count] = [u for u in report.undeclared if u.startswith("loader.dataset (OwnNoiseRows).reads")]
    assert "Accelerate's checkpoint holds nothing of your dataset unless it is registered: give " \
        "the dataset state_dict() and load_state_dict() and pass it to " \
        "accelerator.register_for_checkpointing" in count, count
    # (trial 394: a random.Random of the dataset's was given the advice for numbers)
    [flip] = [u for u in report.undeclared if u.startswith("loader.dataset (OwnNoiseRows).flip")]
    assert "a random.Random whose state the run changed" in flip, flip
    assert "draw from a generator seeded again from the step or the sample's index" in flip, flip


class _NoSaveLoad:
    def __init__(self, inner):
        self.inner = inner

    def components(self):
        return self.inner.components()

    def train_step(self):
        return self.inner.train_step()


@pytest.mark.e2e
def test_a_dataset_that_augments_from_the_global_stream():
    """The batch a prepared loader fetches ahead is augmented before the checkpoint:
    the engine's capture keeps the streams it was made from; Accelerate's does not."""
    engine = Target(factory=partial(_build_augmenting, own_save_load=False), steps=12)
    run = resumecheck.verify(engine, resume_at=[3, 5, 7, 10], drop="none", noise_seeds=0,
                             check_determinism=False).runs[0]
    assert run.verdict == IDENTICAL, run.explanation
    own = Target(factory=_build_augmenting, steps=12, resume_at=(K,))
    run = resumecheck.verify(own, drop="none", noise_seeds=0, check_determinism=False).runs[0]
    assert run.verdict == DIVERGED
    assert (run.first_divergent_step, run.first_divergent_quantity) == (
        K + 1, "data (the samples consumed)")
    assert any(f.component == "data_cursor" and f.confirmed for f in run.diagnosis)


def _run_and_resume(loader: str, steps_after: int = 3, **setup):
    """Train K steps with accelerate_program, save_state, restart, load_state,
    train on; return (reference half, resumed half) as lists of (x rows, loss),
    and the torch stream at the checkpoint / right after load_state."""
    from resumecheck.frameworks.accelerate import accelerate_program

    train = example_module().train

    def build():
        accelerator, model, optimizer, dl, scheduler = train.setup(loader=loader, **setup)

        def step(batch):
            loss = train.loss_of(model, batch)
            accelerator.backward(loss)
            optimizer.step(); scheduler.step(); optimizer.zero_grad()  # noqa: E702
            return loss
        return accelerate_program(accelerator, model=model, optimizer=optimizer, loader=dl,
                                  scheduler=scheduler, step=step, samples=lambda b: b[0])

    def run(program, n):
        return [(out.samples, float(out.loss.detach())) for out in
                (program.train_step() for _ in range(n))]

    import tempfile

    with tempfile.TemporaryDirectory() as path:
        first = build()
        before = run(first, K)
        first.save(path)
        at_checkpoint = torch.get_rng_state()
        reference = before + run(first, steps_after)
        reseed_global_streams(12345)
        second = build()
        second.load(path)
        after_load = torch.get_rng_state()
        resumed = before + run(second, steps_after)
    return reference, resumed, at_checkpoint, after_load


def _epoch_rows(trajectory, epoch, per_epoch=5):
    rows = torch.cat([s for s, _ in trajectory[epoch * per_epoch:(epoch + 1) * per_epoch]])
    return {tuple(r.tolist()) for r in rows}, len(rows)


@pytest.mark.e2e
def test_plain_shuffled_loader_resumes_into_a_new_permutation():
    reference, resumed, _, _ = _run_and_resume("plain")
    distinct, total = _epoch_rows(reference, 1)
    assert len(distinct) == total == 40  # an epoch sees every sample once
    distinct, total = _epoch_rows(resumed, 1)
    assert len(distinct) < total  # skip_first_batches skipped into another order: repeats
    run = full_resume("PLAIN")
    assert run.verdict == DIVERGED
    assert (run.first_divergent_step, run.first_divergent_quantity) == (
        K + 1, "data (the samples consumed)")
    assert any(f.component == "data_cursor" and f.confirmed for f in run.diagnosis)


@pytest.mark.e2e
def test_seedable_sampler_replays_the_data_but_dropout_draws_shifted_streams():
    reference, resumed, at_checkpoint, after_load = _run_and_resume("seedable")
    assert torch.equal(at_checkpoint, after_load)  # load_state restores the stream exactly
    for (ref_x, ref_loss), (x, loss) in zip(reference[K:], resumed[K:]):
        assert torch.equal(ref_x, x)  # the same samples, in the same order
    assert reference[K][1] != resumed[K][1]  # ... yet the first resumed loss differs
    run = full_resume("SEEDABLE")
    assert run.verdict == DIVERGED
    assert run.first_divergent_step == K + 1
    assert run.first_divergent_quantity == "loss"


@pytest.mark.e2e
def test_seedable_sampler_without_dropout_changes_no_step():
    reference, resumed, _, _ = _run_and_resume("seedable", dropout=0.0)
    assert [loss for _, loss in reference] == [loss for _, loss in resumed]
    run = full_resume("SEEDABLE_NO_DROPOUT")
    # every step matches; only the end state of the streams is one draw on
    assert run.first_divergent_step in (None, 12)
    assert run.first_divergent_quantity in (None, "state of rng")


@pytest.mark.e2e
def test_seedable_sampler_with_the_loaders_own_generator_resumes_bit_for_bit():
    run = full_resume("SEEDABLE_OWN_GENERATOR")
    assert run.verdict == IDENTICAL
    # Accelerate does not save the loader's generator; the sampler reseeds it each epoch
    assert any(f.component == "rng" and "loader" in f.detail for f in run.diagnosis)


def test_a_pass_says_in_the_sessions_row_that_its_own_loop_did_not_run():
    """Trial 138: the README's Accelerate wrapper passed a loop that forgot
    set_epoch on resume (and one that forgot skip_first_batches): the loop
    that ran is resumecheck's, which the CLI's why says and the pytest row
    did not."""
    from resumecheck.pytest_plugin import _beside_cells

    run = full_resume("SEEDABLE_OWN_GENERATOR")  # (a pass)
    report = {"undeclared": [], "runs": [{"dropped": [], "checkpoint": "program",
                                          "explanation": run.explanation}]}
    assert _beside_cells(report) == [
        "the loop that ran is resumecheck's: your own resume code is not checked"]


def test_a_pass_is_not_told_of_its_save_and_load_where_the_loop_that_ran_is_resumecheck_s():
    """Trial 179: `not checked: ... a restart here saves through your save()` of an
    Accelerate program, which has none; its row says what ran instead."""
    from resumecheck.report import RESUME_CODE_UNCHECKED

    report = resumecheck.verify(spec("SEEDABLE_OWN_GENERATOR"), drop="none", noise_seeds=0,
                                check_determinism=False)
    assert report.equivalent and "the loop that ran is resumecheck's" in \
        report.full_resume.explanation
    assert RESUME_CODE_UNCHECKED not in report.to_json()["caveats"]
    # (trial 446: a skip off by one in its own load() passed, said at the why's end alone)
    assert ("full resume: EQUIVALENT (the resume that ran is resumecheck's loop around your "
            "step, through the framework's save and load: your script's own resume code, what "
            "it skips with skip_first_batches, did not run; see the why)\n") in report.render()
    # (trial 865: a failure read as of the script's own checkpoint, which kept in a file of
    # its own what Accelerate's save_state() lost)
    failed = resumecheck.verify(spec("STATEFUL"), drop="none", noise_seeds=0,
                                check_determinism=False)
    assert ("full resume: NOT EQUIVALENT (the resume that ran is resumecheck's loop around "
            "your step, through the framework's save and load alone: what your script's own "
            "resume code keeps besides, in files of its own, did not come back here; see the "
            "why)\n") in failed.render(), failed.render()


def test_setting_steps_per_epoch_says_the_adapter_counts_its_epochs_itself():
    """Trial 179: set as for a program of one's own, "has no setter"."""
    program = load_target(spec("SEEDABLE_OWN_GENERATOR")).factory({})
    with pytest.raises(AttributeError, match=r"steps_per_epoch=5: accelerate_program counts "
                                             r"its epochs itself, \d+ optimizer steps each"):
        program.steps_per_epoch = 5


def test_the_loops_own_counters_are_not_named_at_a_resume_point_in_the_first_epoch():
    """Trial 179: `not compared: epoch (int: 0 at the build, 2 at the end, ...)` of a
    program that keeps no epoch: the adapter's loop counts it, and saves it itself."""
    report = resumecheck.verify(spec("SEEDABLE_OWN_GENERATOR"), resume_at=[2], drop="none",
                                noise_seeds=0, check_determinism=False)
    assert report.equivalent and report.undeclared == []


@pytest.mark.e2e
def test_stateful_dataloader_saves_counters_only_and_reports_position_zero_after_load(tmp_path):
    program = load_target(spec("STATEFUL")).factory({"loader": "stateful"})
    for _ in range(K):
        program.train_step()
    program.save(str(tmp_path))
    saved = torch.load(tmp_path / "dl_state_dict.bin", weights_only=False)
    assert saved["_num_yielded"] == K - 5  # batches into the second epoch
    assert saved["_index_sampler_state"] is None and saved["_sampler_iter_state"] is None
    fresh = load_target(spec("STATEFUL")).factory({"loader": "stateful"})
    fresh.load(str(tmp_path))
    assert fresh.loader.state_dict()["_num_yielded"] == 0  # stale until iterated

    reference, resumed, _, _ = _run_and_resume("stateful")
    distinct, total = _epoch_rows(resumed, 1)
    assert len(distinct) < total  # fast-forwarded through a freshly drawn permutation
    run = full_resume("STATEFUL")
    assert run.verdict == DIVERGED
    assert run.first_divergent_quantity == "data (the samples consumed)"
    assert any(f.component == "data_cursor" for f in run.diagnosis)


@pytest.mark.process
@pytest.mark.e2e
def test_process_isolation_agrees_on_the_recommended_setting():
    run = full_resume("SEEDABLE_OWN_GENERATOR", isolation="process")
    assert run.verdict == IDENTICAL


# -- an omission in the user's Accelerate setup, and its twin -----------------


def _build_with_scheduler(settings, prepare_scheduler, accumulation=1):
    from accelerate import Accelerator, DataLoaderConfiguration
    from accelerate.utils import set_seed

    from resumecheck.frameworks.accelerate import accelerate_program

    train = example_module().train
    set_seed(settings.get("seed", 0))
    accelerator = Accelerator(
        cpu=True, dataloader_config=DataLoaderConfiguration(use_seedable_sampler=True),
        gradient_accumulation_steps=accumulation)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(),
                                torch.nn.Dropout(0.3), torch.nn.Linear(16, 4))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    loader = torch.utils.data.DataLoader(train.dataset(), batch_size=8, shuffle=True,
                                         generator=torch.Generator().manual_seed(0))
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    # the bug: a scheduler never handed to prepare() is not in save_state's checkpoint
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / 10))
    if prepare_scheduler:
        scheduler = accelerator.prepare(scheduler)

    def step(batch):
        with accelerator.accumulate(model):
            loss = train.loss_of(model, batch)
            accelerator.backward(loss)
            optimizer.step(); scheduler.step(); optimizer.zero_grad()  # noqa: E702
        return loss
    return accelerate_program(accelerator, model=model, optimizer=optimizer, loader=loader,
                              scheduler=scheduler, step=step)


@pytest.mark.e2e
def test_a_scheduler_left_out_of_prepare_is_blamed_and_its_twin_passes():
    def check(prepared):
        target = Target(factory=partial(_build_with_scheduler, prepare_scheduler=prepared),
                        steps=12, resume_at=(K,))
        return resumecheck.verify(target, drop="none", noise_seeds=0).runs[0]

    buggy = check(False)
    assert buggy.verdict == DIVERGED
    assert buggy.first_divergent_quantity == "learning rate"
    assert [f.component for f in buggy.diagnosis if f.confirmed] == ["scheduler"]
    # the loader's generator, which the sampler reseeds, differs but is not the cause:
    # its stream line says so, and the explanation does not chase it (a trial)
    assert [(f.component, f.status) for f in buggy.diagnosis if not f.confirmed] == [
        ("rng", "not_cause")]
    # (a trial: a stream the program sets right itself in the first step is no
    # evidence, and its line told the user the load did not restore it)
    assert buggy.stream_offsets == []
    assert buggy.diagnosis[1].detail == ("generator 'loader' differs from the uninterrupted "
                                         "run's at step 7, which the program set right itself "
                                         "during step 8")
    assert "generator `loader`" not in buggy.explanation
    assert "scheduler = accelerator.prepare(scheduler)" in buggy.diagnosis[0].fix
    twin = check(True)
    assert twin.verdict == IDENTICAL
    assert not any(f.component == "scheduler" for f in twin.diagnosis)


class _Average:
    """A running average of the weights, kept by the user's step (evaluation reads it)."""

    def __init__(self, model):
        self.shadow = [p.detach().clone() for p in model.parameters()]
        self.updates = 0

    def update(self, model):
        self.updates += 1
        with torch.no_grad():
            for s, p in zip(self.shadow, model.parameters()):
                s.mul_(0.9).add_(p.detach(), alpha=0.1)

    def state_dict(self):
        return {"shadow": [s.clone() for s in self.shadow], "updates": self.updates}

    def load_state_dict(self, state):
        self.shadow = [s.clone() for s in state["shadow"]]
        self.updates = state["updates"]


def _with_average(settings, register):
    train = example_module().train
    accelerator, model, optimizer, loader, scheduler = train.setup(
        loader="seedable", own_generator=True, **settings)
    average = _Average(model)
    if register:
        accelerator.register_for_checkpointing(average)

    def step(batch):
        loss = train.loss_of(model, batch)
        accelerator.backward(loss)
        optimizer.step(); scheduler.step(); optimizer.zero_grad()  # noqa: E702
        average.update(model)
        return loss
    return resumecheck.frameworks.accelerate.accelerate_program(
        accelerator, model=model, optimizer=optimizer, scheduler=scheduler, loader=loader,
        step=step, extra={"average": average})


@pytest.mark.e2e
def test_an_extra_component_not_registered_is_blamed_with_how_to_register_it():
    """A trial: an EMA left out of register_for_checkpointing was confirmed, and
    nothing said what keeps it in Accelerate's checkpoint; registered, it resumes."""
    import resumecheck.frameworks.accelerate  # noqa: F401

    def own(register):
        target = Target(factory=partial(_with_average, register=register), steps=10,
                        resume_at=(K,))
        return resumecheck.verify(target, drop="none", noise_seeds=0,
                                  check_determinism=False).runs[0]

    lost = own(False)
    assert lost.verdict == DIVERGED
    # (the loader's generator, which the seedable sampler sets back itself, is put back)
    assert [(f.component, f.status) for f in lost.diagnosis] == [
        ("rng", "put_back"), ("average", "confirmed")]
    assert lost.diagnosis[0].fix == ""
    assert lost.diagnosis[1].fix.startswith(
        "Accelerate's save_state() holds only what is registered with it: "
        "accelerator.register_for_checkpointing(average)")
    kept = own(True)
    assert kept.verdict == IDENTICAL
    assert [f.component for f in kept.diagnosis] == ["rng"]


def test_a_declared_generator_is_not_to_be_registered_itself_but_saved_by_its_owner():
    """A trial declared its augmenter's generator as an RNGState, as the README
    shows; the augmenter was registered but saved only its seed, and the fix
    said to register the RNGState, which is the check's declaration."""
    import types

    import torch

    from resumecheck.components import RNGState
    from resumecheck.frameworks.accelerate import _unsaved

    class Augment:
        def __init__(self):
            self.gen = torch.Generator().manual_seed(1)

    aug, other = Augment(), torch.Generator()
    accelerator = types.SimpleNamespace(_custom_objects=[aug], _schedulers=[])
    advice = _unsaved(accelerator, {"aug": aug, "aug_rng": RNGState({"aug": aug.gen}, streams=()),
                                    "noise": RNGState({"n": other}, streams=())}, None)
    assert set(advice) == {"aug_rng", "noise"}
    assert "register_for_checkpointing(aug_rng)" not in advice["aug_rng"]
    assert ("your registered Augment keeps it, and its state_dict() must return the generator's "
            "get_state()") in advice["aug_rng"]
    assert advice["noise"].startswith("Accelerate's save_state() holds a generator only through "
                                      "an object registered with it: register the object that "
                                      "keeps it")


def test_an_attr_of_a_registered_object_is_to_be_saved_by_that_object():
    """A trial declared its step as Attr(progress, "step") in `extra`; its
    Progress was registered but its state_dict() left the step out, and the fix
    said to register "global_step", a name of the check's declaration only."""
    import types

    from resumecheck.components import Attr
    from resumecheck.frameworks.accelerate import _unsaved

    class Progress:
        def __init__(self):
            self.step = 0

    progress, loose = Progress(), Progress()
    accelerator = types.SimpleNamespace(_custom_objects=[progress], _schedulers=[])
    advice = _unsaved(accelerator, {"global_step": Attr(progress, "step"),
                                    "other": Attr(loose, "step")}, None)
    assert "register_for_checkpointing(global_step)" not in advice["global_step"]
    assert advice["global_step"] == (
        "Accelerate's save_state() holds `step` only through the object registered with it: "
        "your registered Progress keeps it, and its state_dict() must return `step` and its "
        "load_state_dict() set it back")
    # (trial 865 read "register the object that keeps `step` (a State)" as "register your
    # State", which had neither method)
    assert advice["other"].startswith(
        "Accelerate's save_state() holds only what is registered with it: register an object "
        "of yours whose state_dict() returns `step` of your Progress and whose "
        "load_state_dict() sets it back there (your Progress has no state_dict() of its own "
        "to register)"), advice["other"]

    class Kept(Progress):
        def state_dict(self):
            return {"step": self.step}

        def load_state_dict(self, state):
            self.step = state["step"]

    kept = Kept()
    advice = _unsaved(accelerator, {"other": Attr(kept, "step")}, None)
    assert advice["other"].startswith(
        "Accelerate's save_state() holds only what is registered with it: register the object "
        "that keeps `step` (your Kept), whose state_dict() must return it"), advice["other"]


@pytest.mark.e2e
def test_gradient_accumulation_resumes_at_optimizer_steps_and_epoch_ends():
    """Two micro-batches per optimizer step, five batches per epoch: Accelerate
    steps after batches 2, 4 and 5 (the end of the epoch syncs), 3 steps an epoch."""
    target = Target(factory=partial(_build_with_scheduler, prepare_scheduler=True,
                                    accumulation=2), steps=8)
    program = target.build({}).program
    assert program.steps_per_epoch == 3
    consumed = []
    for _ in range(4):
        before = program.epoch * 5 + program.batch
        program.train_step()
        consumed.append(program.epoch * 5 + program.batch - before)
    assert consumed == [2, 2, 1, 2]
    report = resumecheck.verify(target, resume_at=[2, 3, 5], drop="none", noise_seeds=0,
                                check_determinism=False)
    assert report.runs[0].verdict == IDENTICAL, report.runs[0].explanation


def _build_with_project_naming(settings, project_dir):
    from accelerate import Accelerator, DataLoaderConfiguration
    from accelerate.utils import ProjectConfiguration, set_seed

    train = example_module().train
    set_seed(settings.get("seed", 0))
    accelerator = Accelerator(
        cpu=True, dataloader_config=DataLoaderConfiguration(use_seedable_sampler=True),
        project_config=ProjectConfiguration(project_dir=str(project_dir),
                                            automatic_checkpoint_naming=True, total_limit=1))
    model = torch.nn.Linear(8, 4)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = torch.utils.data.DataLoader(train.dataset(), batch_size=8, shuffle=True,
                                         generator=torch.Generator().manual_seed(0))
    return _plain_program(accelerator, model, optimizer, loader)


@pytest.mark.e2e
def test_automatic_checkpoint_naming_saves_at_the_engines_path(tmp_path):
    target = Target(factory=partial(_build_with_project_naming, project_dir=tmp_path),
                    steps=8, resume_at=(3,))
    run = resumecheck.verify(target, drop="none", noise_seeds=0,
                             check_determinism=False).runs[0]
    assert run.verdict == IDENTICAL, run.explanation
    assert not (tmp_path / "checkpoints").exists()  # the user's checkpoints are left alone


# -- dependencies ------------------------------------------------------------


def test_importing_resumecheck_its_cli_plugin_and_adapters_never_imports_a_framework(tmp_path):
    """In a fresh process (forked from a warm server, which imported torch and
    no framework): importing resumecheck and every adapter brings in none."""
    import os

    from resumecheck import forkserver

    if not forkserver.available():
        pytest.skip("no fork on this platform")
    root = Path(__file__).resolve().parents[1]
    proc = forkserver.spawn("fixtures.warm.no_framework_imports", [], dict(os.environ),
                            cwd=str(root), output_dir=str(tmp_path))
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err


def test_a_target_that_needs_a_missing_framework_names_the_extra(tmp_path, monkeypatch, capsys):
    from resumecheck.cli import main
    from resumecheck.errors import MissingFramework
    from resumecheck.frameworks import require

    monkeypatch.setitem(sys.modules, "accelerate", None)  # as if it were not installed
    script = tmp_path / "needs_accelerate.py"
    script.write_text("import accelerate\n\ndef build(settings):\n    return None\n")
    with pytest.raises(TargetError) as info:
        load_target(f"{script}:build")
    assert "pip install 'resumecheck[accelerate]'" in str(info.value)
    assert main(["run", f"{script}:build"]) == 2
    assert "resumecheck[accelerate]" in capsys.readouterr().err
    with pytest.raises(MissingFramework) as missing:
        require("accelerate", "resumecheck.frameworks.accelerate")
    err = pickle.loads(pickle.dumps(missing.value))
    assert (err.module, err.extra) == ("accelerate", "accelerate")
    assert str(err) == str(missing.value)


@pytest.mark.e2e
def test_the_readme_table_is_what_the_examples_measure_now():
    """Verdicts and first divergences; the cause's wording may change with the engine."""
    from tests.framework_tables import check_table_rows

    check_table_rows("Accelerate")  # tests/test_frameworks_{lightning,transformers}.py check theirs


def _own_loop(settings, loader="seedable", head=False, **options):
    """The example's setup with a loader generator of its own, in a loop of the
    given ``accelerate_program`` options; ``head``: the loop's head seeds that
    generator again at each epoch's start (trial 408's loop)."""
    train = example_module().train
    accelerator, model, optimizer, loader, scheduler = train.setup(
        loader=loader, own_generator=True, **settings)
    generator = loader.base_dataloader.generator  # (the script's own, given to its DataLoader)

    def step(batch):
        loss = train.loss_of(model, batch)
        accelerator.backward(loss)
        optimizer.step(); scheduler.step(); optimizer.zero_grad()  # noqa: E702
        return loss
    if head:
        options["epoch_start"] = lambda epoch: generator.manual_seed(100 + epoch)
    return resumecheck.frameworks.accelerate.accelerate_program(
        accelerator, model=model, optimizer=optimizer, scheduler=scheduler, loader=loader,
        step=step, **options)


def _loop_without_set_epoch(settings):
    """The recommended loader, in a loop declared not to call loader.set_epoch()."""
    return _own_loop(settings, set_epoch=False)


@pytest.mark.e2e
def test_a_loop_without_set_epoch_is_checked_as_it_is_and_does_not_resume():
    """A trial: the recommended setting resumed bit for bit in the check's loop,
    which calls set_epoch(), and not in the trial's own loop, which did not."""
    import resumecheck.frameworks.accelerate  # noqa: F401

    report = resumecheck.verify(Target(factory=_loop_without_set_epoch, steps=12, resume_at=(K,)),
                                drop="none", noise_seeds=0, check_determinism=False)
    own = report.runs[0]
    assert own.verdict == DIVERGED, own.explanation
    assert (own.first_divergent_step, own.first_divergent_quantity) == (
        K + 1, "data (the samples consumed)")
    # (a trial: nothing named the loader's own epoch count, which no checkpoint holds)
    [line] = [u for u in report.undeclared if u.startswith("loader (Accelerate).iteration (")]
    assert "call loader.set_epoch(epoch) at each epoch's start" in line, line
    assert "keeps it too" not in line  # (an int equal by chance to a component's field)
    assert "`loader (Accelerate).iteration`" in own.explanation, own.explanation
    assert full_resume("SEEDABLE_OWN_GENERATOR").verdict == IDENTICAL  # with set_epoch()


def test_the_own_resume_says_the_loop_that_ran_is_the_checks_not_the_scripts():
    """A trial's forgotten skip_first_batches passed through accelerate_program,
    whose 'own save/load' row read as a check of its script's resume code."""
    from tests.framework_tables import measured

    run = measured("accelerate_check.py:SEEDABLE_OWN_GENERATOR")
    assert run.verdict == "identical"
    assert run.explanation.endswith(
        "; the loop that ran is resumecheck's, around your step function: your script's own "
        "resume code (where it restarts, what it skips with skip_first_batches, counters it "
        "keeps outside the objects registered with Accelerate) did not run, and is not checked "
        "here: wrap your own loop, save and load as a program to check it")


def _reseeded_each_epoch(settings):
    """A plain shuffled loader whose generator the loop's head seeds each epoch."""
    return _own_loop(settings, "plain", head=True)


@pytest.mark.e2e
def test_a_loop_head_that_seeds_the_loaders_generator_each_epoch_runs_and_resumes():
    """Trial 408: a correct loop seeded its loader's generator at each epoch's
    start; the check's loop does not run the loop's head, and reported the
    generator Accelerate does not save as lost (as it is, without the head).
    Given as epoch_start, the head runs where the loop runs it."""
    import resumecheck.frameworks.accelerate  # noqa: F401

    report = resumecheck.verify(Target(factory=_reseeded_each_epoch, steps=12, resume_at=(K,)),
                                drop="none", noise_seeds=0, check_determinism=False)
    assert report.equivalent, report.render()
    # without the head, the lost order says what keeps it (the README table's run)
    cursor = {f.component: f for f in full_resume("PLAIN_OWN_GENERATOR").diagnosis}["data_cursor"]
    assert cursor.status == "confirmed" and "accelerate_program(..., epoch_start=lambda epoch: " \
        "generator.manual_seed(seed + epoch))" in cursor.fix, cursor
    assert not {f.component: f for f in full_resume("PLAIN").diagnosis}["data_cursor"].fix
    accelerator, model, optimizer, loader, _ = example_module().train.setup()
    with pytest.raises(resumecheck.InvalidArgument, match="epoch_start"):
        resumecheck.frameworks.accelerate.accelerate_program(
            accelerator, model=model, optimizer=optimizer, loader=loader, step=lambda b: 0,
            epoch_start=3)


def _over_an_iterable(settings):
    """accelerate_program given the loader prepare() returned over an IterableDataset."""
    from accelerate import Accelerator

    class Stream(torch.utils.data.IterableDataset):
        def __iter__(self):
            while True:
                yield torch.randn(4)

    accelerator = Accelerator(cpu=True)
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer, loader = accelerator.prepare(
        model, optimizer, torch.utils.data.DataLoader(Stream(), batch_size=2))
    return resumecheck.frameworks.accelerate.accelerate_program(
        accelerator, model=model, optimizer=optimizer, loader=loader,
        step=lambda batch: model(batch).mean())


def test_a_loader_over_an_iterable_dataset_is_refused_as_a_limit_not_a_fault():
    """Trial 415: the loader prepare() returned over an IterableDataset was refused
    with "Fix the factory so that it builds a program from these settings"."""
    import resumecheck.frameworks.accelerate  # noqa: F401

    with pytest.raises(TargetError) as info:
        resumecheck.verify(Target(factory=_over_an_iterable, steps=2, resume_at=(1,)),
                           drop="none", noise_seeds=0, check_determinism=False)
    said = str(info.value)
    assert "a limit of resumecheck, not a fault of your program" in said, said
    assert "Fix the factory" not in said and "wrap your own loop, save and load" in said, said


class _EpochSampler(torch.utils.data.Sampler):
    """A sampler of the program's own: each epoch's order from its epoch number."""

    def __init__(self, n: int) -> None:
        self.n, self.epoch = n, 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def __len__(self) -> int:
        return self.n

    def __iter__(self):
        g = torch.Generator().manual_seed(100 + self.epoch)
        return iter(torch.randperm(self.n, generator=g).tolist())


def _build_with_own_sampler(settings):
    from accelerate import Accelerator
    from accelerate.utils import set_seed

    train = example_module().train
    set_seed(settings.get("seed", 0))
    accelerator = Accelerator(cpu=True)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(),
                                torch.nn.Dropout(0.3), torch.nn.Linear(16, 4))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    data = train.dataset()
    # (its own generator serves the base seed of workers it does not have)
    loader = torch.utils.data.DataLoader(data, batch_size=8, sampler=_EpochSampler(len(data)),
                                         generator=torch.Generator().manual_seed(0))
    return _plain_program(accelerator, model, optimizer, loader)


@pytest.mark.e2e
def test_a_sampler_of_your_own_and_a_loader_generator_that_seeds_no_worker_resume():
    """Trial 525: a correct program whose sampler seeds each epoch's order from
    its epoch read NOT EQUIVALENT: the loader's own generator, which only
    draws the base seed of workers it does not have, ended a draw behind, and
    the data position was said to hold an epoch shuffle drawn from torch's
    global stream, which that sampler never draws from."""
    report = resumecheck.verify(Target(factory=_build_with_own_sampler, steps=10,
                                       resume_at=(7,)),
                                drop="none", noise_seeds=0, check_determinism=False)
    assert report.equivalent, report.render()
    own = report.runs[0]
    assert own.verdict == IDENTICAL, report.render()
    assert not any("global stream" in f.detail for f in own.diagnosis), own.diagnosis


def test_a_program_of_your_own_is_told_to_prepare_the_scheduler_its_accelerator_does_not_save():
    """Trial 532: a program of its own with an Accelerator whose save_state()
    did not hold a scheduler left out of prepare(): confirmed, with no word of
    the call that keeps it, which an accelerate_program target is told."""
    fast = {"drop": "none", "noise_seeds": 0, "check_determinism": False}
    own = resumecheck.verify("fixtures.trust.accelerate_unprepared:UNPREPARED", **fast)
    [finding] = own.full_resume.diagnosis
    assert (finding.component, finding.status) == ("scheduler", "confirmed"), finding
    # (trial 616: registering it keeps it too, and preparing one changes its steps)
    assert finding.fix == ("Accelerate's save_state() holds a scheduler only when it was "
                           "registered or prepared: accelerator.register_for_checkpointing("
                           "scheduler) (or scheduler = accelerator.prepare(scheduler), which "
                           "then steps it once per process at each step() unless "
                           "split_batches=True)")
    twin = resumecheck.verify("fixtures.trust.accelerate_unprepared:PREPARED", **fast)
    assert twin.equivalent, twin.render()
    from fixtures.trust.accelerate_unprepared import Program, RegisteredScheduler
    from resumecheck.components import Component
    from resumecheck.program import _unkept_by_accelerate

    def unkept(program: Program) -> dict:
        declared = [Component(n, o) for n, o in program.components().items()]
        return _unkept_by_accelerate(program, declared)

    assert "scheduler" not in unkept(RegisteredScheduler({}))
    assert "scheduler" in unkept(Program({}))
    kept = resumecheck.verify("fixtures.trust.accelerate_unprepared:REGISTERED", **fast)
    assert kept.equivalent, kept.render()
    # (trial 584: a level of its own in an object it did not register)
    lost = resumecheck.verify("fixtures.trust.accelerate_unprepared:UNREGISTERED", **fast)
    [finding] = lost.full_resume.diagnosis
    assert (finding.component, finding.status) == ("curriculum", "confirmed"), finding
    # (trial 664: a position its save() wrote itself was told only to register it)
    assert finding.fix == ("where your save() keeps it through Accelerate's save_state(), that "
                           "holds an object of your own only when it was registered: "
                           "accelerator.register_for_checkpointing(obj), of the object you "
                           "declare as `curriculum`; where your save() writes it itself, check "
                           "that it writes it, and what your load() sets it to from what it "
                           "wrote")
    # (trial 684: a save() of its own around save_state(), told to register what it lost)
    around = resumecheck.verify("fixtures.trust.accelerate_unprepared:OWN_SAVE", **fast)
    fixes = {f.component: f.fix for f in around.full_resume.diagnosis}
    assert sorted(fixes) == ["curriculum", "scheduler"], around.render()
    for name, fix in fixes.items():
        assert fix == ("the checkpoint your load() read holds no random_states_<rank>.pkl file, "
                       "which Accelerate's save_state() always writes: your save() keeps nothing "
                       "there through save_state(), so check that it writes "
                       f"`{name}`'s state and that load() sets it back from what it wrote"), fix


def test_a_level_the_load_works_out_one_ahead_is_told_to_check_how_before_registering_it():
    """Trial 844: a position its load() worked out from the step count, one
    batch ahead, was told "to keep it: ... register_for_checkpointing", which
    the trial did, and nothing changed. Set to neither the saved value nor the
    build's, the load set it: how comes first."""
    report = resumecheck.verify("fixtures.trust.accelerate_unprepared:WORKED_OUT", drop="none",
                                noise_seeds=0, check_determinism=False)
    own = report.full_resume
    [finding] = own.diagnosis
    assert (finding.component, finding.status) == ("curriculum", "confirmed"), finding
    assert finding.fix.startswith(
        "your load() sets it, to neither what the run held when it saved nor what a fresh "
        "build holds: check how it works the value out (from what your save() wrote, or "
        "from other state: a count of steps) before whether your checkpoint keeps it; where "
        "it does not keep it: where your save() keeps it through Accelerate's save_state()"), \
        finding.fix
    line = finding.line_in(own, None)
    assert "to keep it:" not in line and line.startswith("curriculum: level 2, expected 1"), line
    # (one left as built is still told how to keep it)
    lost = resumecheck.verify("fixtures.trust.accelerate_unprepared:UNREGISTERED", drop="none",
                              noise_seeds=0, check_determinism=False).full_resume
    assert lost.diagnosis[0].line_in(lost, None).startswith(
        "curriculum: level 0, expected 1 (confirmed); to keep it: where your save()")
