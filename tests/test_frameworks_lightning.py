"""PyTorch Lightning: lightning_target drives Trainer.fit one optimizer step at a
time and audits Lightning's own checkpoint (trainer.save_checkpoint from a
callback, Trainer.fit(ckpt_path=...)).

The targets live in tests/frameworks_loop_programs.py; the training script
is the example's (examples/frameworks/lightning_train.py).
"""

from __future__ import annotations

import importlib.util
import sys
import threading
from pathlib import Path

import pytest

# find_spec, not importorskip: importing lightning at collection cost every xdist
# worker seconds; the tests import it when they run.
INSTALLED = pytest.mark.skipif(importlib.util.find_spec("lightning") is None,
                               reason="lightning is not installed")

import resumecheck  # noqa: E402
from resumecheck import TargetError  # noqa: E402
from resumecheck.errors import StepError  # noqa: E402
from resumecheck.frameworks import lightning_target  # noqa: E402
from resumecheck.program import load_target  # noqa: E402
from resumecheck.report import DIVERGED, IDENTICAL  # noqa: E402
from resumecheck import pytest_plugin  # noqa: E402
from resumecheck.phrases import BETWEEN_STEPS, KEPT_ALREADY  # noqa: E402
from resumecheck.segments import SCRATCH_ENV  # noqa: E402
from resumecheck.trace import Tracer  # noqa: E402
from tests.framework_tables import check_table_rows, example, measured  # noqa: E402
from tests.frameworks_loop_programs import statement_lines  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PROGRAMS = Path(__file__).resolve().parent / "frameworks_loop_programs.py"
EXAMPLES = ROOT / "examples" / "frameworks"

pytestmark = [
    INSTALLED,
    pytest.mark.filterwarnings("ignore::UserWarning"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]


def spec(name: str) -> str:
    return f"{PROGRAMS}:{name}"


def train_module():
    return example("lightning_train")


def loop_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("resumecheck Lightning")]


def test_the_common_case_is_at_most_five_lines():
    assert statement_lines(PROGRAMS, "LIGHTNING_EXACT") <= 5
    assert statement_lines(EXAMPLES / "lightning_check.py", "DEFAULT") <= 5
    assert statement_lines(EXAMPLES / "lightning_check.py", "RECOMMENDED") <= 5


def test_each_step_is_traced_from_the_framework_owned_loop(tmp_path, monkeypatch):
    # a process-isolated segment's scratch goes where the check removes it, even after a kill
    monkeypatch.setenv(SCRATCH_ENV, str(tmp_path))
    built = load_target(spec("LIGHTNING_EXACT")).build({"seed": 0})
    assert [p.name.startswith("resumecheck-lightning-") for p in tmp_path.iterdir()] == [True]
    try:
        tracer = Tracer(built, None)
        records = []
        for step in range(1, 4):
            tracer.before_step(step)
            records.append(tracer.after_step(step, built.step(step), keep_tensors=False))
        tracer.close()
        assert built.program.trainer.global_step == 3
    finally:
        built.program.close()
    assert not loop_threads()
    # its epochs, from the training loader's length (5 batches), for the evidence and fuzzing
    assert built.boundaries()["steps_per_epoch"] == 5
    for record in records:
        assert not record.skipped  # the optimizer hook ran on Lightning's optimizer
        assert any(k.startswith("grad:net.") for k in record.digests)
        assert any(k.startswith("param:net.") for k in record.digests)
        assert "data" in record.digests and "loss" in record.digests
    # gradients are caught inside step(closure), after Lightning's backward: each differs
    grads = [r.digests["grad:net.0.weight"] for r in records]
    assert len(set(grads)) == 3
    lrs = [r.lr[0] for r in records]
    assert lrs == sorted(lrs) and lrs[0] < lrs[-1]  # the step-interval warm-up


def test_a_datamodules_epochs_are_the_fit_loops_count_of_batches(tmp_path, monkeypatch):
    """A trial's LightningDataModule: 'the program declares no epoch boundary
    before its last step', where the same loader, handed over by a function,
    has them."""
    monkeypatch.setenv(SCRATCH_ENV, str(tmp_path))
    built = load_target(spec("LIGHTNING_DATAMODULE")).build({"seed": 0})
    try:
        built.step(1)  # (the fit loop makes its loader as training starts)
        assert built.boundaries()["steps_per_epoch"] == 5
    finally:
        built.program.close()


def test_epochs_whose_accumulation_a_scheduler_changes_end_where_each_epochs_steps_do(
        tmp_path, monkeypatch):
    """A trial: with 1 batch a step, then 2 from epoch 2 on, the report said "the
    program's epochs end after steps 3, 6, 9, 12", from the last accumulation;
    with 5 batches an epoch they end after 5, 10, 13, 16 (a last short step)."""
    monkeypatch.setenv(SCRATCH_ENV, str(tmp_path))
    built = load_target(spec("LIGHTNING_ACCUMULATION_SCHEDULE")).build({"seed": 0})
    try:
        bounds = built.boundaries()
        assert bounds["steps_per_epoch"] is None
        assert bounds["epoch_boundaries"][:4] == [5, 10, 13, 16]
    finally:
        built.program.close()


def test_epochs_of_a_loader_made_again_each_epoch_end_where_the_loop_ended_them(
        tmp_path, monkeypatch):
    """Trial 775: a datamodule whose data grew each epoch, made again every
    epoch (reload_dataloaders_every_n_epochs=1), read "the program's epochs end
    after step 8", from the first loader's length, where they ended after 4,
    10 and 18; every resume point was then said to lie elsewhere than it did."""
    monkeypatch.setenv(SCRATCH_ENV, str(tmp_path))
    built = load_target(spec("LIGHTNING_GROWING_DATA")).build({"seed": 0})
    try:
        for step in range(1, 9):
            built.step(step)
        bounds = built.boundaries()
        assert bounds["steps_per_epoch"] is None
        assert bounds["epoch_boundaries"] == [2, 5], bounds
    finally:
        built.program.close()
    report = resumecheck.verify(spec("LIGHTNING_GROWING_DATA"), drop="none", noise_seeds=0,
                                check_determinism=False)
    assert ("a restart inside an epoch (every resume point here is an epoch's end, as the "
            "framework's loop ends them): --resume-at 6 checks one, resumecheck fuzz tries "
            "them all, until a schedule fails") in report.not_checked, report.not_checked


@pytest.mark.e2e
def test_what_the_modules_own_hooks_keep_is_the_hooks_component():
    """A trial's counter kept by on_save_checkpoint/on_load_checkpoint: the
    engine's own restore lost it, and every report of the correct program
    warned that the declared state was incomplete, its ablations inconclusive."""
    report = resumecheck.verify(spec("LIGHTNING_HOOKS"), drop=["hooks"], noise_seeds=0,
                                check_determinism=False)
    own, engine, hooks = report.runs
    assert (own.verdict, engine.verdict) == ("identical", "identical"), report.render()
    assert report.declared_state_complete is not False
    assert hooks.dropped == ["hooks"] and hooks.verdict == "diverged"
    assert hooks.first_divergent_quantity.startswith("loss")


@pytest.mark.e2e
def test_hooks_that_keep_the_state_for_configure_optimizers_are_restored_where_lightning_does():
    """Trial 508: a module's on_load_checkpoint kept a plateau's state for its
    configure_optimizers to apply, which Lightning's restore calls after the
    hook. The engine's own restore called the hook once the optimizers were
    made: its resume of the correct program departed, and the WARNING said the
    hooks' state did not come back."""
    report = resumecheck.verify(spec("LIGHTNING_HOOKS_STASHED"), drop=["hooks"],
                                noise_seeds=0, check_determinism=False)
    own, engine, hooks = report.runs
    assert (own.verdict, engine.verdict) == ("identical", "identical"), report.render()
    assert report.declared_state_complete is not False
    assert hooks.verdict == "diverged" and hooks.first_divergent_quantity.startswith(
        "learning rate"), report.render()


@pytest.mark.e2e
def test_under_manual_optimization_the_epochs_end_where_the_loop_was_seen_to_end_them():
    """Trial 529: a module stepping by hand every second batch read "the
    program's epochs end after step 8, by its steps_per_epoch", counted from
    its batches as if every batch stepped; they ended after 4, 8 and 12."""
    report = resumecheck.verify(spec("LIGHTNING_MANUAL"), drop="none", noise_seeds=0,
                                check_determinism=False)
    [line] = [n for n in report.not_checked if "an epoch ends" in n]
    assert "the program's epochs end after steps 3, 6, as the framework's loop ends them" \
        in line, line
    assert "steps_per_epoch" not in line


@pytest.mark.e2e
def test_batches_between_optimizer_steps_by_hand_are_said_not_checked():
    """Trial 875: a module summing 3 batches by hand, with a count of them its
    checkpoint lost, passed: every restart a check tries follows an optimizer
    step, where the count is 0. The report said nothing of it, and said the
    epochs end "after steps 3, 6", where they ended inside steps 4 and 7."""
    report = resumecheck.verify(spec("LIGHTNING_HAND_ACCUMULATING"), drop="none",
                                noise_seeds=0, check_determinism=False)
    [line] = [n for n in report.not_checked if n.startswith(BETWEEN_STEPS)]
    assert "stepped its optimizer once every 3 batches; an epoch ends inside steps 2, 4)" \
        in line, line
    assert "a checkpoint that loses it resumes alike at every point a check or fuzz tries" \
        in line
    ends = [n for n in report.not_checked if "epoch ends" in n and n is not line]
    assert not any("after steps 1, 3" in n or "after step 1," in n for n in ends), ends
    assert not any(n.startswith("a restart inside an epoch after the first") for n in ends)
    assert "not checked: " + BETWEEN_STEPS in "\n".join(
        pytest_plugin._unchecked_cells(report.to_json())), report.render()


@pytest.mark.e2e
def test_the_generator_a_sampler_of_your_own_leaves_out_of_its_state_dict_is_named():
    """Trial 883: a StatefulDataLoader over a sampler of the program's own,
    whose state_dict() kept its epoch and place but not the generator it
    shuffled each epoch from, read another epoch's order after a resume, and
    no line named the generator (samplers with a state_dict() were skipped).
    Its twin, which keeps the generator's state at the epoch's start, passes."""
    lost = resumecheck.verify(spec("LIGHTNING_SAMPLER_LOSES_GENERATOR"), drop="none",
                              noise_seeds=0, check_determinism=False)
    assert not lost.equivalent
    [line] = [u for u in lost.undeclared
              if u.startswith("train_dataloader.sampler (EpochShuffleSampler).generator ")]
    assert "a torch.Generator whose state the run changed" in line, line
    kept = resumecheck.verify(spec("LIGHTNING_SAMPLER_KEEPS_GENERATOR"), drop="none",
                              noise_seeds=0, check_determinism=False)
    assert kept.equivalent and not kept.undeclared, kept.render()


@pytest.mark.e2e
def test_a_callback_wrong_from_the_restarts_first_step_is_said_so_and_pointed_at():
    """Trial 894: an EMA callback whose state_dict() left out its count of
    updates read "the final state of callbacks differs", as if it went wrong at
    the end (a framework's components were not looked at after the restart's
    first step), and the headline sent the user to a diagnosis that named rng
    alone, where the `not compared` line named the count."""
    report = resumecheck.verify(spec("LIGHTNING_EMA_LOSES_COUNT"), drop="none",
                                noise_seeds=0, check_determinism=False)
    assert not report.equivalent
    assert "`callbacks` differed already after step 4, the first after the restore at 3" \
        in report.full_resume.explanation, report.full_resume.explanation
    headline = report.render().splitlines()[1]
    assert headline.endswith("(see the `not compared` lines)"), headline
    assert any(u.startswith("callbacks (EMA).updates ") for u in report.undeclared)


@pytest.mark.e2e
def test_a_field_a_loader_of_your_own_keeps_beside_its_state_dict_is_named():
    """Trial 511: a training loader of the program's own class, made by the
    datamodule's train_dataloader() and held by Lightning's fit loop, kept its
    epoch beside the position its state_dict() returned; the checkpoint lost
    it and no line named it."""
    lost = resumecheck.verify(spec("LIGHTNING_OWN_LOADER_FORGETS_EPOCH"), drop="none",
                              noise_seeds=0, check_determinism=False)
    assert not lost.equivalent
    [line] = [u for u in lost.undeclared if u.startswith("train_dataloader (Batches).epoch ")]
    assert "Lightning's checkpoint holds what your loader's state_dict() returns: return it " \
        "there and set it in its load_state_dict()" in line, line
    assert "your own resume held it otherwise right after Lightning's restore at step 7" in line
    assert not [u for u in lost.undeclared if ".yielded" in u], lost.undeclared
    kept = resumecheck.verify(spec("LIGHTNING_OWN_LOADER"), drop="none", noise_seeds=0,
                              check_determinism=False)
    assert kept.equivalent and not kept.undeclared, kept.render()


def test_a_loaders_generator_that_seeds_no_worker_is_no_part_of_rng():
    """Trial 681: a loader given a generator beside a sampler of the program's
    own draws from it only the base seed of workers it does not have; the
    adapter held it in `rng`, where a correct resume left it a draw off: a
    latent gap that failed ``--strict``, and the lead of a lost position's
    diagnosis. Lightning's own recount at the epoch's end is the one gap here."""
    report = resumecheck.verify(spec("LIGHTNING_SAMPLER_BESIDE_GENERATOR"), drop="none",
                                noise_seeds=0, check_determinism=False)
    full = report.full_resume
    assert report.equivalent and full.verdict == "identical", report.render()
    assert list(full.latent_parts()) == ["data_cursor"], full.latent_parts()
    assert [f.component for f in full.diagnosis] == ["data_cursor"], full.diagnosis


@pytest.mark.e2e
def test_a_field_the_hooks_save_but_do_not_set_back_is_blamed_on_them_not_called_not_compared():
    """A trial's on_load_checkpoint forgot the counter its on_save_checkpoint
    saved: the report compared it in `hooks` and also said `not compared:
    params.seen_samples` of the same counter."""
    report = resumecheck.verify(spec("LIGHTNING_HOOKS_LOAD_FORGETS"), drop="none",
                                noise_seeds=0, check_determinism=False)
    own = report.runs[0]
    assert own.verdict == "diverged"
    assert [f.component for f in own.diagnosis] == ["hooks"], report.render()
    assert not [u for u in report.undeclared if "seen" in u], report.undeclared
    assert "not compared" not in report.render()
    # (trial 539: the WARNING led with Lightning's restore, where the module's hook was it)
    assert "`hooks`: seen 0, expected 3: your LightningModule's on_load_checkpoint() does not " \
        "set it from what its on_save_checkpoint() added, or Lightning's restore" \
        in report.render(), report.render()


def test_capturing_the_hooks_calls_no_callbacks_on_save_checkpoint(tmp_path, monkeypatch):
    """A capture of the module's hooks asks Lightning for a checkpoint: a
    callback that counts the checkpoints written must not count it."""
    monkeypatch.setenv(SCRATCH_ENV, str(tmp_path))
    built = load_target(spec("LIGHTNING_HOOKS_SAVE_COUNTER")).build({"seed": 0})
    try:
        built.step(1)
        hooks = built.component("hooks").obj.state_dict()
        assert hooks == {"seen": 1}
        [counter] = [cb for cb in built.program.trainer.callbacks if hasattr(cb, "saves")]
        assert counter.saves == 0
    finally:
        built.program.close()


@pytest.mark.e2e
def test_a_hook_that_keeps_nothing_is_caught():
    report = resumecheck.verify(spec("LIGHTNING_HOOKS_FORGET"), drop="none", noise_seeds=0,
                                check_determinism=False)
    assert not report.equivalent
    [seen] = [u for u in report.undeclared if u.startswith("params.seen ")]
    # (trial 292: a framework target, which declares no component, was told to declare one)
    assert ("keep it in a buffer (register_buffer), or save it in your LightningModule's "
            "on_save_checkpoint() and set it in on_load_checkpoint(), so that Lightning's "
            "checkpoint holds it") in seen, seen
    assert "declare it as a component" not in seen


@pytest.mark.e2e
def test_a_module_made_anew_in_setup_is_restored_after_it_as_lightning_does():
    """A trial's correct module re-initialised a layer in setup(), which
    Lightning runs before its restore: the engine's restore came before it,
    its resume departed, and a WARNING said the module's load lost state."""
    report = resumecheck.verify(spec("LIGHTNING_SETUP_REINIT"), drop="none", noise_seeds=0,
                                check_determinism=False)
    own, engine = report.runs
    assert (own.verdict, engine.verdict) == ("identical", "identical"), report.render()
    assert report.incomplete_state_notice() is None


@pytest.mark.e2e
def test_a_module_made_anew_after_the_restore_is_said_to_be_changed_not_lossy():
    report = resumecheck.verify(spec("LIGHTNING_FIT_START_REINIT"), drop="none",
                                noise_seeds=0, check_determinism=False)
    assert not report.equivalent
    notice = report.incomplete_state_notice()
    assert notice.startswith("a declared component is changed between its restore and the "
                             "first step"), notice
    assert [f.component for f in report.runs[0].diagnosis][:1] == ["params"]


@pytest.mark.e2e
def test_state_its_hooks_load_back_and_on_train_start_sets_again_is_said_to_be_changed():
    """Trial 198: an environment its on_load_checkpoint restored and its
    on_train_start made anew read "a declared component does not load back its
    own state" and, in the diagnosis, "its load_state_dict() does not bring
    back what its state_dict() returned": the hooks' load is checked at once,
    as the callbacks' and the datamodule's are."""
    report = resumecheck.verify(spec("LIGHTNING_HOOKS_RESET_AT_TRAIN_START"), drop="none",
                                noise_seeds=0, check_determinism=False)
    assert not report.equivalent
    notice = report.incomplete_state_notice()
    assert notice.startswith("a declared component is changed between its restore and the "
                             "first step"), notice
    assert "on_train_start" in notice
    text = report.render()
    assert "does not bring back" not in text and "does not load back" not in text, text
    assert "(not judged: it is changed between the restore and the first step" in text, text


def test_timing_a_framework_target_by_default_times_what_its_loop_runs():
    """Two trials: `resumecheck timing` on a Lightning (and a Trainer) target
    of 12 steps failed by default, asking for 30 + 3 of its loop."""
    from resumecheck.timing import measure

    report = measure(spec("LIGHTNING_EXACT"), checkpoint_every=100)
    assert (report.steps, report.warmup) == (5, 3)  # its 8 steps, less the warm-up
    assert report.ranks[0]["steps"] == 5


def test_a_callback_whose_state_dict_cannot_run_at_the_build_is_still_a_component():
    """A trial's EMA made its weights in on_fit_start: its state_dict() raised
    at the build, where the adapter asked for it, and the reference failed
    ('Fix the program') although Lightning trains it."""
    from resumecheck.frameworks.lightning import _stateful_callbacks
    import lightning.pytorch as pl

    class LateEMA(pl.Callback):
        shadow = None

        def state_dict(self):
            return {k: v.clone() for k, v in self.shadow.items()}

    late = LateEMA()
    assert _stateful_callbacks([late]) == [late]


def test_a_callback_whose_state_dict_is_empty_is_neither_saved_nor_given_none():
    """As Lightning's checkpoint: no entry for a callback whose state_dict()
    returns None or {}; a trial's engine restore gave it None, and its
    load_state_dict() failed where Lightning's own resume ran."""
    from resumecheck.frameworks.lightning import _callbacks_state, _load_callbacks

    class Forgetful:
        state_key = "Forgetful"
        loaded: list = []

        def state_dict(self):
            return None

        def load_state_dict(self, state):
            self.loaded.append(state)

    class Keeps(Forgetful):
        state_key = "Keeps"

        def state_dict(self):
            return {"count": 3}

    callbacks = [Forgetful(), Keeps()]
    state = _callbacks_state(callbacks)
    assert state == {"Keeps": {"count": 3}}
    _load_callbacks(callbacks, {**state, "Forgetful": None})
    assert Forgetful.loaded == [{"count": 3}]  # (the list is the class's: only Keeps loaded)


@pytest.mark.e2e
def test_lightnings_own_resume_is_exact_and_the_engine_ablations_judge_each_component(capfd):
    import logging

    announcer = logging.getLogger("lightning.pytorch.utilities.rank_zero")
    level = announcer.level
    report = resumecheck.verify(spec("LIGHTNING_EXACT"), drop=["scheduler", "data_cursor"],
                                noise_seeds=0, check_determinism=False)
    # (a trial's stderr was flooded by Lightning's "Restoring states from the checkpoint
    # path at ...", one for each of the check's restores: off while the check runs)
    assert "Restoring states from the checkpoint" not in capfd.readouterr().err
    assert announcer.level == level
    own, engine, *ablations = report.runs
    assert own.checkpoint == "program" and own.verdict == IDENTICAL, own.explanation
    assert engine.checkpoint == "engine" and engine.verdict == IDENTICAL, engine.explanation
    by_drop = {tuple(r.dropped): r for r in ablations}
    assert by_drop[("scheduler",)].verdict == DIVERGED
    assert by_drop[("scheduler",)].first_divergent_quantity == "learning rate"
    assert by_drop[("data_cursor",)].verdict == DIVERGED
    assert by_drop[("data_cursor",)].first_divergent_quantity.startswith("data")
    assert not loop_threads()


@pytest.mark.e2e
def test_a_callback_that_drops_the_scheduler_state_is_blamed_on_the_scheduler():
    report = resumecheck.verify(spec("LIGHTNING_SCHEDULER_DROPPED"), drop="none",
                                noise_seeds=0, check_determinism=False)
    run = report.runs[0]
    assert run.checkpoint == "program" and run.verdict == DIVERGED
    assert [f.component for f in run.diagnosis] == ["scheduler"]
    assert "last_epoch 0, expected 3" in run.diagnosis[0].detail
    # the restored optimizer carries the step-3 lr; the fresh scheduler's next step resets it
    assert (run.first_divergent_step, run.first_divergent_quantity) == (5, "learning rate")


@pytest.mark.e2e
def test_a_mid_epoch_resume_of_a_plain_shuffled_loader_consumes_other_samples():
    run = measured("lightning_check.py:DEFAULT")  # the README table's run of the example
    assert run.verdict == DIVERGED
    assert (run.first_divergent_step, run.first_divergent_quantity) == (
        8, "data (the samples consumed)")
    assert "samples of step 8" in run.explanation


@pytest.mark.e2e
def test_a_checkpoint_at_an_epochs_last_batch_recounts_that_epoch_in_lightnings_counts_alone():
    """Lightning 2.6 restores a checkpoint saved in on_train_batch_end at the
    epoch's last batch (where ModelCheckpoint(every_n_train_steps) saves too)
    as if that epoch had ended and counts it again: every step matches, and
    only the fit loop's counts of epochs end otherwise, which no step read: a
    latent gap, said to be Lightning's own (trials 638, 646, 651: correct
    programs, resumed bit for bit twice over, failed on these counts alone)."""
    run = measured("lightning_check.py:EPOCH_END")  # the README table's run of the example
    assert run.verdict == IDENTICAL, run.explanation
    assert run.latent_gaps == ["data_cursor"]
    [finding] = run.diagnosis
    assert finding.component == "data_cursor" and finding.detail.startswith("epoch_progress.")
    assert finding.mark.startswith(" (latent: it changed no step here; Lightning's own counts of "
                                   "epochs, which no code of yours sets: its restore of a "
                                   "checkpoint taken at an epoch's last batch counts that "
                                   "epoch's end again"), finding.mark


@pytest.mark.process
@pytest.mark.e2e
def test_process_isolation_agrees():
    report = resumecheck.verify(spec("LIGHTNING_EXACT"), drop="none", noise_seeds=0,
                                check_determinism=False, isolation="process")
    assert [r.verdict for r in report.runs] == [IDENTICAL, IDENTICAL]


def _exploding_module():
    train = train_module()

    class Explodes(train.TinyClassifier):
        def training_step(self, batch, batch_idx):
            if self.trainer.global_step == 2:
                raise ValueError("boom in training_step")
            return super().training_step(batch, batch_idx)

    return Explodes()


def test_an_exception_in_the_loop_is_the_steps_failure_and_ends_the_thread():
    train = train_module()
    target = lightning_target(module=_exploding_module, data=train.loader, steps=6)
    built = target.build({"seed": 0})
    try:
        built.step(1)
        built.step(2)
        with pytest.raises(StepError) as info:
            built.step(3)
    finally:
        built.program.close()
    message = str(info.value)
    assert info.value.step == 3
    assert "Lightning's loop raised ValueError: boom in training_step" in message
    assert "in training_step" in message.split("innermost frames:")[1]
    assert not loop_threads()


def test_an_abandoned_program_is_collected_and_its_thread_ends():
    import gc

    train = train_module()
    built = lightning_target(module=train.TinyClassifier, data=train.loader, steps=4).build({})
    built.step(1)
    assert loop_threads()
    del built
    gc.collect()
    for thread in loop_threads():
        thread.join(timeout=10)
    assert not loop_threads()


def test_running_past_the_trainers_own_stop_says_so():
    train = train_module()
    built = lightning_target(module=train.TinyClassifier, data=train.loader, steps=2).build({})
    try:
        built.step(1)
        built.step(2)
        with pytest.raises(StepError) as info:
            built.step(3)
    finally:
        built.program.close()
    assert "ended after step 2" in str(info.value)
    assert "max_steps" in str(info.value)


@pytest.mark.e2e
def test_a_resume_whose_loop_stops_sooner_than_the_uninterrupted_run_is_not_told_fewer_steps():
    """Trial 368: resumed at an epoch's last batch under max_epochs, Lightning
    counted the epoch twice and its loop stopped an epoch early, where the
    uninterrupted run trained on; the advice was to check fewer steps, which
    would hide that the resume ends the training sooner."""
    from resumecheck.phrases import FEWER_STEPS

    report = resumecheck.verify(spec("LIGHTNING_MAX_EPOCHS"), drop="none", noise_seeds=0,
                                check_determinism=False)
    for run in report.runs:
        assert (run.verdict, run.first_divergent_step) == ("failed", 6)
        for text in (run.failure or "", run.explanation):
            assert FEWER_STEPS not in text and "--steps 5" not in text, text
            assert ("the uninterrupted run, with the same settings, trained step 6 and on: the "
                    "restart's loop stops sooner") in text, text
    # (at a point inside the epoch the loop counts it once, and the resume is exact)
    assert resumecheck.verify(spec("LIGHTNING_MAX_EPOCHS"), drop="none", resume_at=[3],
                              noise_seeds=0, check_determinism=False).equivalent


@pytest.mark.e2e
def test_a_dataset_that_counts_its_epochs_is_named_with_what_keeps_it():
    """Trial 368: a dataset that counted its own epochs in a hook, lost by
    every restart, was named nowhere (the Trainer's dataset was looked at,
    Lightning's not). What the line advises resumes; setting the epoch in
    on_train_epoch_start, as the trial did, comes too late."""
    def check(name: str, at: int = 7) -> resumecheck.Report:
        return resumecheck.verify(spec(name), drop="none", resume_at=[at], noise_seeds=0,
                                  check_determinism=False)

    report = check("DATASET_COUNTS_EPOCHS")
    [line] = report.undeclared
    assert line.startswith("train_dataloader.dataset (Noisy).epoch (int: 0 at the build, 2 at "
                           "the end"), line
    assert "give the dataset state_dict() and load_state_dict(), and load it with torchdata's " \
        "StatefulDataLoader" in line
    assert "not compared, and your checkpoint may lose it: `train_dataloader.dataset " \
        "(Noisy).epoch`" in report.full_resume.explanation
    # (the advice: the loader saves the dataset's state; every step matches)
    saved = check("DATASET_COUNTS_EPOCHS_SAVED")
    assert saved.undeclared == [] and saved.equivalent
    # (the hook: a resumed epoch's first batch reads the epoch as built)
    hooked = check("DATASET_EPOCH_FROM_LIGHTNING")
    assert (hooked.engine_resume.first_divergent_step,
            hooked.engine_resume.first_divergent_quantity) == (8, "data (the samples consumed)")


def test_a_missing_lightning_names_the_extra(monkeypatch):
    train = train_module()
    for name in [m for m in sys.modules if m == "lightning" or m.startswith("lightning.")]:
        monkeypatch.setitem(sys.modules, name, None)
    target = lightning_target(module=train.TinyClassifier, data=train.loader)
    with pytest.raises(TargetError) as info:
        target.build({})
    assert "resumecheck[lightning]" in str(info.value)


@pytest.mark.e2e
def test_the_readme_table_rows_are_what_the_examples_measure_now():
    """Verdicts and first divergences of the Lightning rows (the cause's wording may change)."""
    check_table_rows("Lightning")


@pytest.mark.e2e
def test_a_reseed_in_on_train_start_is_blamed_on_rng_and_the_engine_resume_is_exact():
    # the engine reads and overrides the streams after every on_train_start hook
    report = resumecheck.verify(spec("LIGHTNING_RESEED"), noise_seeds=0,
                                check_determinism=False)
    own, engine = report.runs[0], report.runs[1]
    assert own.checkpoint == "program" and own.verdict == DIVERGED, own.explanation
    assert engine.checkpoint == "engine" and engine.verdict == IDENTICAL, engine.explanation
    blamed = {f.component: f for f in own.diagnosis}
    assert "rng" in blamed, [(f.component, f.detail) for f in own.diagnosis]
    assert blamed["rng"].status == "confirmed", (blamed["rng"].status, blamed["rng"].detail)
    assert all(r.verdict != "inconclusive" for r in report.runs), report.render()
    # no declared component keeps the streams: the advice is to save them
    assert blamed["rng"].fix.startswith("Lightning's checkpoint holds no random stream"), \
        blamed["rng"].fix


@pytest.mark.e2e
def test_a_reseed_after_a_callback_restored_the_stream_is_not_told_to_save_it():
    """Trial 826: a callback of the program's own saved torch's stream and set it
    back, and the module seeded it again in on_train_start; the fix read "Lightning's
    checkpoint holds no random stream: save them ...", which the program did."""
    report = resumecheck.verify(spec("LIGHTNING_RESEED_KEPT"), drop="none", noise_seeds=0,
                                check_determinism=False)
    own = report.runs[0]
    assert own.verdict == DIVERGED, own.explanation
    rng = next(f for f in own.diagnosis if f.component == "rng")
    assert rng.status == "confirmed" and rng.fix.startswith(KEPT_ALREADY), rng.fix
    assert "`callbacks` holds the streams' state at step 3 as the uninterrupted run had it, " \
        "bit for bit (where your checkpoint keeps `callbacks`, it keeps them)" in rng.fix, rng.fix
    assert "on_train_start" in rng.fix and "holds no random stream" not in rng.fix, rng.fix
    line = next(x for x in report.render().splitlines() if x.startswith("diagnosis: rng"))
    assert "to keep it" not in line and f"(confirmed); {KEPT_ALREADY}: `callbacks`" in line, line


@pytest.mark.e2e
def test_a_stream_saved_in_a_hook_and_never_loaded_is_told_so_where_the_build_left_it():
    """Trial 856: where the restart's stream stood where the build left it, the rng
    line had no fix at all (at an earlier resume point, a count of draws behind, it
    said that `hooks` holds the stream and that nothing sets it back)."""
    report = resumecheck.verify(spec("LIGHTNING_STREAM_SAVED_NOT_LOADED"), drop="none",
                                noise_seeds=0, check_determinism=False)
    own = report.runs[0]
    assert "as the build left it" in own.explanation, own.explanation
    rng = next(f for f in own.diagnosis if f.component == "rng")
    assert rng.status == "confirmed" and rng.fix.startswith(
        f"{KEPT_ALREADY}: `hooks` holds the streams' state at step 3"), rng.fix


def test_a_checkpoint_plain_lightning_cannot_load_fails_as_in_plain_lightning():
    # Lightning's default resume loads weights_only: numpy's ndarray state is refused
    report = resumecheck.verify(spec("LIGHTNING_NUMPY_IN_CHECKPOINT"), drop="none",
                                noise_seeds=0, check_determinism=False)
    own = report.runs[0]
    assert own.checkpoint == "program" and own.verdict == "failed", own.verdict
    text = own.explanation
    assert "UnpicklingError" in text and "weights only load failed" in text.lower(), text
    # the framework's error once, with its innermost frames; none of resumecheck's own
    failure = report.render().split("failure: ", 1)[1].split("\nreproduce:")[0]
    assert failure.count("Weights only load failed") == 1, failure
    assert "_loop.py" not in failure and "\x1b[" not in failure, failure
    assert "in load" in failure.split("innermost frames:")[1]
    assert not loop_threads()


@pytest.mark.e2e
def test_a_stateful_callback_made_per_build_or_given_in_a_dict_resumes():
    """A trial: a callback instance with a counter in ``trainer={...}`` was one
    object every in-process build shared, so the second uninterrupted run
    differed though real launches agree (another trial's EarlyStopping
    stopped every later run early). Given as a function of no arguments the
    settings make it anew at each build, and a dict's callbacks are copied
    afresh for each, as a relaunched script makes them."""
    report = resumecheck.verify(spec("LIGHTNING_COUNTER_PER_BUILD"), drop="none",
                                noise_seeds=0)
    assert report.outcome == "EQUIVALENT", report.render()
    shared = resumecheck.verify(spec("LIGHTNING_COUNTER_SHARED"), drop="none", noise_seeds=0)
    assert shared.outcome == "EQUIVALENT", shared.render()
    assert shared.determinism.get("checked") is True


@pytest.mark.e2e
def test_a_callback_that_saves_its_state_is_a_component_and_one_that_does_not_is_named():
    """A trial: a callback whose state_dict() Lightning saves was left to the
    engine's restore, which diverged, so every ablation was inconclusive, and
    the `not compared` line asked for the state_dict() it had."""
    report = resumecheck.verify(spec("LIGHTNING_COUNTER_PER_BUILD"), noise_seeds=0,
                                check_determinism=False)
    own, engine, *ablations = report.runs
    assert own.verdict == IDENTICAL and engine.verdict == IDENTICAL, engine.explanation
    by_drop = {tuple(r.dropped): r for r in ablations}
    lost = by_drop[("callbacks",)]
    assert lost.verdict == DIVERGED, lost.explanation
    assert (lost.first_divergent_step, lost.first_divergent_quantity) == (5, "learning rate")
    assert report.undeclared == []

    report = resumecheck.verify(spec("LIGHTNING_COUNTER_NOT_SAVED"), drop="none",
                                noise_seeds=0, check_determinism=False)
    assert "callbacks" not in [r.dropped for r in report.runs]
    assert report.runs[0].verdict == DIVERGED
    assert [u.split(" (int")[0] for u in report.undeclared] == [
        "callbacks (ForgetsItsCount).count"]
    assert "(Lightning: its state_dict() and load_state_dict(), and the check compares it as " \
           "the component `callbacks`" in report.undeclared[0]
    assert "your checkpoint loses it" in report.undeclared[0]
    # one holder once in the WARNING (a trial's callback was listed once per field)
    assert "`callbacks (ForgetsItsCount).count`)" in report.render()


@pytest.mark.e2e
def test_a_loaders_own_generator_is_part_of_rng_and_its_loss_is_blamed_on_it():
    """A trial's loader had a generator of its own: the engine's resume could
    not put it back (no component held it), so the report said only that the
    declared components were incomplete. The adapter's ``rng`` holds a
    training loader's generator, as Accelerate's does: the engine's resume is
    exact and the program's own, which leaves the generator elsewhere, is
    blamed on it."""
    report = resumecheck.verify(spec("LIGHTNING_LOADER_GENERATOR"), drop="none", noise_seeds=0,
                                check_determinism=False)
    own, engine = report.runs[0], report.runs[1]
    assert engine.verdict == IDENTICAL, report.render()
    assert own.verdict == DIVERGED and own.first_divergent_step == 6
    assert [(f.component, f.confirmed) for f in own.diagnosis] == [("rng", True)]
    assert "generator 'loader' differs" in own.diagnosis[0].detail
    assert not report.undeclared
    # (trial 263: a confirmed rng of a Lightning program said nothing of what to do)
    assert own.diagnosis[0].fix.startswith(
        "Lightning's checkpoint holds no random stream: save them in "
        "on_save_checkpoint(checkpoint) of your LightningModule or a Callback"), \
        own.diagnosis[0].fix
    # (trial 531: a loader's own generator, set in on_load_checkpoint, came back elsewhere
    # at the next epoch; set once the iterator exists, it resumed)
    # (trial 591: torch's stream, which that iterator does not draw from, resumes set in
    # on_load_checkpoint, and was told to wait for on_train_batch_start)
    assert ("torch's stream, and a generator your steps alone draw from, can be set again in "
            "its on_load_checkpoint()") in own.diagnosis[0].fix
    assert ("that loader's generator must be set once the resumed epoch's iterator exists, in "
            "the first on_train_batch_start after the load") in own.diagnosis[0].fix


@pytest.mark.e2e
def test_a_callback_that_saves_a_time_is_no_false_alarm_and_its_gap_is_latent():
    """A callback's state is compared once it defines state_dict(): one that
    holds how long training ran (which no two runs share, and its load does
    not set) must not make a correct resume fail, nor the check stop."""
    report = resumecheck.verify(spec("LIGHTNING_TIMER"), drop="none", noise_seeds=0)
    assert report.equivalent, report.render()
    own = report.runs[0]
    assert own.verdict == IDENTICAL and own.latent_gaps == ["callbacks"]
    assert [f.component for f in own.diagnosis] == ["callbacks"]
    assert ".Timer.elapsed " in own.diagnosis[0].detail


@pytest.mark.e2e
def test_a_model_checkpoint_under_the_default_root_reloads_its_best_score_after_a_restart():
    """A relaunched script has the root of the run it resumes; each build here
    has its own, and Lightning reloaded no best score into the resumed run: a
    module that reads it, resumed correctly, was said to diverge."""
    report = resumecheck.verify(spec("LIGHTNING_READS_BEST"), drop="none", noise_seeds=0,
                                check_determinism=False)
    own = next(r for r in report.runs if r.checkpoint == "program")
    assert own.verdict == IDENTICAL, report.render()


def test_a_lost_attribute_beside_a_validation_is_a_cause_as_likely_as_it():
    """Trial 358: a loss weight the module kept as a plain attribute, lost, read
    second to the validation after the resume point, which changed nothing:
    the WARNING offers both, and the resume points that tell them apart."""
    report = resumecheck.verify(spec("LIGHTNING_WEIGHT_AND_VALIDATION"), drop="none",
                                noise_seeds=0, check_determinism=False)
    notice = report.incomplete_state_notice() or ""
    assert ("which either that explains, where the validation changes state the steps read "
            "(a scheduler stepped on its metric, an EarlyStopping count), or state the steps "
            "read that no component declares (the `not compared` lines name what the program "
            "keeps outside their states: `params.alpha`). Resume points where no validation "
            "follows tell the two apart") in notice, notice
    assert "that alone explains" not in notice


@pytest.mark.e2e
def test_a_resume_point_that_the_run_validated_after_is_said_to_skip_that_validation():
    """A trial: resumed where the uninterrupted run validated after the batch,
    a plateau scheduler stepped on the validation's loss departed, and the
    report blamed state the components leave out; Lightning does not validate
    again on such a resume, which the report now says."""
    from resumecheck.phrases import NOT_VALIDATED_AGAIN

    report = resumecheck.verify(spec("LIGHTNING_ON_PLATEAU"), drop="none", noise_seeds=0,
                                check_determinism=False)
    own = report.full_resume
    assert (own.verdict, own.first_divergent_quantity) == ("diverged", "learning rate")
    assert "the uninterrupted run validated after step 4, where this resume's checkpoint " \
        f"was written, at that batch's end: {NOT_VALIDATED_AGAIN}" in own.explanation
    notice = report.incomplete_state_notice() or ""
    assert notice.startswith("the framework's loop validated after the resume point"), notice
    assert "do not capture the program's state" not in report.render()
    # a resume point with no validation after it: every step matches (Lightning
    # saves no random stream, which the end state shows: a latent gap, whose draws
    # changed no step), and nothing is said of one
    other = resumecheck.verify(spec("LIGHTNING_ON_PLATEAU"), resume_at=(3,), drop="none",
                               noise_seeds=0, check_determinism=False).full_resume
    assert other.verdict == "identical" and other.latent_gaps == ["rng"], other.explanation
    assert NOT_VALIDATED_AGAIN not in other.explanation
    # (a trial: "your load() left it there", where the user wrote no load())
    assert "your load()" not in other.explanation
    assert [(f.component, f.status) for f in other.diagnosis] == [("rng", "latent")]


@pytest.mark.e2e
def test_a_plateau_count_one_behind_at_the_end_is_put_to_the_validation_skipped():
    """Trial 463: every step alike, the plateau scheduler one step behind at the
    end: the why guessed at a scheduler stepped per epoch and undeclared state,
    where the resume had skipped the validation after its checkpoint."""
    from resumecheck.phrases import NOT_VALIDATED_AGAIN

    own = resumecheck.verify(spec("LIGHTNING_ON_PLATEAU_PATIENT"), drop="none", noise_seeds=0,
                             check_determinism=False).full_resume
    assert own.verdict == "diverged" and "scheduler" in own.ended_otherwise, own.explanation
    assert own.first_divergent_quantity.startswith("state of"), own.explanation
    assert "the uninterrupted run validated after step 4, where this resume's checkpoint " \
        f"was written, at that batch's end: {NOT_VALIDATED_AGAIN}" in own.explanation
    assert "one step behind: " not in own.explanation, own.explanation


@pytest.mark.e2e
def test_a_deepcopy_of_the_module_loads_into_the_copy_not_the_module():
    """Trial 228: Lightning's StochasticWeightAveraging keeps a deepcopy of the
    module, and a resume loads the averaged weights into it; the copy kept the
    adapter's load_state_dict, bound to the module, and the averaged weights went
    into the module: `params: ... every entry differs (confirmed)` of a correct
    program whose weights Lightning restores exactly. (That callback is now
    refused, trial 545; a callback of yours that keeps such a copy, an EMA's,
    needs the copy to load into itself all the same.)"""
    import copy

    import torch

    from resumecheck.program import load_target

    module = load_target(spec("LIGHTNING_EXACT")).build({}).program.module
    twin = copy.deepcopy(module)
    state = {name: value + 1 for name, value in module.state_dict().items()}
    twin.load_state_dict(state)
    assert all(torch.equal(a, b) for a, b in zip(twin.state_dict().values(), state.values()))
    assert not any(torch.equal(a, b) for a, b in zip(module.state_dict().values(),
                                                     state.values()))


@pytest.mark.e2e
def test_a_plateau_step_the_loop_leaves_out_after_a_resume_is_offered_as_the_loops_doing():
    """Trial 224: Lightning left out the epoch-end step of a plateau scheduler
    after a resume inside that epoch, in the engine's restart too; the WARNING
    led with "a restart built with other settings than the run's", which the
    restart was not, and the engine's row said only that the components do not
    capture the program's state."""
    from resumecheck.phrases import LOOP_GOES_ON

    report = resumecheck.verify(spec("LIGHTNING_PLATEAU_PER_EPOCH"), drop="none",
                                noise_seeds=0, check_determinism=False)
    for run in (report.full_resume, report.engine_resume):
        assert (run.verdict, run.first_divergent_step, run.first_divergent_quantity) == \
            ("diverged", 11, "learning rate"), run.explanation
    engine = report.engine_resume.explanation
    assert ("the engine restored every declared component, through Lightning's restore as "
            "your own resume is, and the run departs all the same: the components do not "
            "capture the program's state (undeclared state, or state consumed after the "
            f"restore), or Lightning's {LOOP_GOES_ON}") in engine, engine
    notice = report.incomplete_state_notice() or ""
    assert notice.startswith("the declared components do not capture the program's state, or "
                             f"Lightning's {LOOP_GOES_ON}: the engine restored"), notice
    assert "both going on in Lightning's loop: after a resume a framework's loop may step a " \
        "scheduler otherwise" in notice
    assert "so a restart built with other settings than the run's departs" not in notice
    assert "Something the components do not declare may be lost" in notice
    # (trial 392: the test's row said "declared state incomplete" alone)
    from resumecheck.pytest_plugin import _summary_row

    row = _summary_row({"nodeid": "t.py::t", "target": "t", "report": report.to_json()})
    assert ("engine resume: DIVERGED (declared state incomplete, or the framework's "
            f"{LOOP_GOES_ON})") in row, row


@pytest.mark.e2e
def test_a_loader_that_skips_the_next_epoch_at_an_epochs_end_is_pointed_at_too():
    """Trial 137: a loader of the script's own, restored at an epoch's end,
    skipped the whole next epoch; the WARNING spoke only of Lightning's
    epoch counters and steered away from the bug."""
    report = resumecheck.verify(spec("LIGHTNING_SKIPS_AT_EPOCH_END"), drop="none",
                                noise_seeds=0, check_determinism=False)
    own = report.full_resume
    assert (own.verdict, own.first_divergent_step, own.first_divergent_quantity) == \
        (DIVERGED, 6, "data (the samples consumed)")
    notice = report.incomplete_state_notice() or ""
    assert "counts its end again" in notice
    loader = ("The samples differ: where your loader keeps its own position, a position at an "
              "epoch's end restored must start the next epoch whole")
    assert loader in notice, notice
    # (trial 209: pointed at the first divergence, which said no step's samples: nor here)
    assert own.divergence_detail.startswith("samples of step 6: max |Δ|")
    assert "see the first divergence" not in notice, notice
    # (trial 139: the loader came after Lightning's counts, which steered away from it)
    assert notice.index(loader) < notice.index("Right after the restore".lower()) \
        < notice.index("counts its end again"), notice
    # (trial 638: a correct program whose ModelCheckpoint wrote at epoch ends was told this)
    assert "where ModelCheckpoint(every_n_train_steps=...) writes; one of epochs (Lightning's " \
        "default) writes at the epoch's end instead, which the check does not try" in notice
    assert "where your run checkpoints only at epoch ends, this end state is not what your " \
        "resume meets." in notice, notice


@pytest.mark.e2e
def test_its_fix_restored_at_an_epochs_end_has_lightnings_counts_as_a_latent_gap():
    """Trial 137's fixed loader, restored at an epoch's last batch: every step
    matches, and the fit loop ends with its counts of epochs made ready and
    started one behind, which no step read: a latent gap (exit 0, --strict
    fails), said to be Lightning's own."""
    from resumecheck.report import latent_words

    report = resumecheck.verify(spec("LIGHTNING_WRAPS_AT_EPOCH_END"), drop="none",
                                noise_seeds=0, check_determinism=False)
    own = report.full_resume
    assert own.verdict == IDENTICAL and own.latent_gaps == ["data_cursor"], own.explanation
    assert report.equivalent and latent_words(report)  # (--strict fails on it)
    assert "Lightning's own counts of epochs, which no code of yours sets" in report.render()
    # (trial 706: "so a step there would differ" of a step at the next epoch's start that
    # matched; a second restart is what reads another epoch: the test below)
    assert ("reads one: it agrees again at the next epoch's start, and a second restart"
            in report.render())


@pytest.mark.e2e
def test_its_validation_loops_counts_at_an_epochs_end_are_part_of_that_latent_gap():
    """Trial 697: validated at each epoch's end and resumed at the second's, a
    correct program read NOT EQUIVALENT, every step alike, for the validation
    loop's counts of batches, which Lightning's restore does not reset before
    the next validation, beside its counts of epochs."""
    report = resumecheck.verify(spec("LIGHTNING_VALIDATED_AT_EPOCH_END"), drop="none",
                                noise_seeds=0, check_determinism=False)
    own = report.full_resume
    assert report.equivalent and own.verdict == IDENTICAL, report.render()
    # (and the torch stream, which the validation loader's iterators draw from)
    assert own.latent_gaps == ["data_cursor", "rng"], own.latent_gaps


@pytest.mark.e2e
def test_resumed_again_at_the_next_epochs_end_a_sampler_that_reads_the_counts_departs():
    """The latent gap above matters where a step reads it: resumed at 5 and
    again at 10, Lightning sets the sampler's epoch from its count of epochs,
    which the first restore left behind, and step 11 reads step 6's batch
    (trial 140's finding in plain Lightning)."""
    report = resumecheck.verify(spec("LIGHTNING_WRAPS_TWICE"), drop="none", noise_seeds=0,
                                check_determinism=False)
    own = report.full_resume
    assert (own.verdict, own.first_divergent_step, own.first_divergent_quantity) == (
        DIVERGED, 11, "data (the samples consumed)"), own.explanation
    assert "they are what the uninterrupted run read at step 6" in own.explanation


@pytest.mark.e2e
def test_an_average_the_module_updates_after_the_checkpoint_is_said_to_be_saved_behind():
    """Trial 706: an average of the weights in the module's buffers, updated in
    its own on_train_batch_end, after the callbacks' where the check's
    checkpoint is written: the correct program read NOT EQUIVALENT (true of a
    checkpoint at a batch's end) and the WARNING named Lightning's counts and
    code that runs after a restore, not the module's hook."""
    from resumecheck.phrases import MODULE_AFTER_SAVE

    report = resumecheck.verify(spec("LIGHTNING_AVERAGE_AFTER_SAVE"), drop="none",
                                noise_seeds=0, check_determinism=False)
    own = report.full_resume
    assert own.verdict == DIVERGED and own.first_divergent_quantity == "state of params", \
        own.explanation
    assert own.explanation.endswith(MODULE_AFTER_SAVE), own.explanation
    notice = report.incomplete_state_notice() or ""
    assert notice.startswith("your LightningModule overrides on_train_batch_end, which "
                             "Lightning runs after the check writes its checkpoint at a "
                             "batch's end"), notice
    plain = resumecheck.verify(spec("LIGHTNING_EXACT"), drop="none", noise_seeds=0,
                               check_determinism=False)
    assert MODULE_AFTER_SAVE not in plain.full_resume.explanation


@pytest.mark.e2e
def test_streams_a_module_sets_back_at_an_epochs_end_resume_as_the_uninterrupted_run():
    """Trial 727: a module that keeps torch's stream in its checkpoint hooks,
    beside a plain shuffled loader, resumed at an epoch's last batch bit for
    bit; the engine's restore set the stream after Lightning's setup had made
    the next epoch's iterator from it, so its own resume departed, every
    ablation was inconclusive, and the correct program read a latent gap in
    the stream it had set back (the look came after that iterator's draw)."""
    kept = resumecheck.verify(spec("LIGHTNING_STREAM_IN_HOOKS"), noise_seeds=0,
                              check_determinism=False, drop=["rng", "hooks"])
    own, engine = kept.full_resume, kept.engine_resume
    assert (own.verdict, engine.verdict) == (IDENTICAL, IDENTICAL), engine.explanation
    assert own.latent_gaps == engine.latent_gaps == ["data_cursor"], own.latent_gaps
    assert [f.component for f in own.diagnosis] == ["data_cursor"], own.diagnosis
    lost = resumecheck.verify(spec("LIGHTNING_STREAM_LOST_IN_HOOKS"), drop="none",
                              noise_seeds=0, check_determinism=False)
    assert lost.engine_resume.verdict == IDENTICAL, lost.engine_resume.explanation
    assert lost.full_resume.verdict == DIVERGED
    assert [(f.component, f.status) for f in lost.full_resume.diagnosis][:1] == [
        ("rng", "confirmed")], lost.full_resume.diagnosis


@pytest.mark.e2e
def test_a_generator_a_stateless_sampler_keeps_is_named_with_what_keeps_it():
    """Trial 737: torch's RandomSampler given a generator, under a
    StatefulDataLoader whose state_dict() holds the position alone: the
    restart read another epoch's order, and no line named the generator (the
    diagnosis named torch's stream, which the correct twin held alike)."""
    report = resumecheck.verify(spec("LIGHTNING_SAMPLER_OWN_GENERATOR"), drop="none",
                                noise_seeds=0, check_determinism=False)
    assert report.full_resume.first_divergent_quantity.startswith("data")
    [line] = [u for u in report.undeclared if u.startswith("train_dataloader.sampler.generator")]
    assert ("a generator a sampler of the training loader keeps, which the loader's "
            "state_dict() does not hold where the sampler keeps no state of its own (torch's "
            "RandomSampler)") in line, line
    assert "RNGState(" not in line
    # (trial 761: torchdata's RandomSampler keeps its generator in its state_dict())
    kept = resumecheck.verify(spec("LIGHTNING_STATEFUL_SAMPLER_GENERATOR"), drop="none",
                              noise_seeds=0, check_determinism=False)
    assert not [u for u in kept.undeclared if u.startswith("train_dataloader.sampler")], \
        kept.undeclared


@pytest.mark.e2e
def test_an_epoch_that_limit_train_batches_cuts_short_is_known():
    """Trial 756: with limit_train_batches, the report said the program does not
    say where its epochs end, and told it to give the target steps_per_epoch=,
    which a Lightning target does not take: Lightning's own count says it."""
    report = resumecheck.verify(spec("LIGHTNING_LIMITED_BATCHES"), drop="none",
                                noise_seeds=0, check_determinism=False)
    assert report.equivalent, report.render()
    said = " ".join(report.not_checked)
    assert "the program's epochs end after steps 3, 6" in said, said
    assert "steps_per_epoch=" not in said


@pytest.mark.e2e
def test_a_scheduler_the_module_steps_after_the_checkpoint_is_said_to_be_saved_behind():
    """Trial 130: a module that stepped its scheduler in its own
    on_train_batch_end (after the callbacks', where the checkpoint is written)
    resumed one scheduler step behind; the why named undeclared state and a
    schedule's own settings."""
    report = resumecheck.verify(spec("LIGHTNING_SCHEDULER_AFTER_SAVE"), drop="none",
                                noise_seeds=0, check_determinism=False)
    for run in (report.full_resume, report.engine_resume):
        assert (run.verdict, run.first_divergent_step, run.first_divergent_quantity) == \
            ("diverged", 4, "learning rate"), run.explanation
        assert ("in the uninterrupted run the learning rate changed after the checkpoint of "
                "step 3 was written and before the next step began") in run.explanation
        assert "a schedule's own settings" not in run.explanation
        assert "a sampler's epoch that set_epoch sets" not in run.explanation


@pytest.mark.e2e
def test_a_step_of_accumulated_batches_has_the_loss_its_module_computed():
    """Trial 615: Lightning divides a training_step's loss by the accumulation
    before on_train_batch_end; every loss figure of a run accumulating 4
    batches was a quarter of what the module computed."""
    report = resumecheck.verify(spec("LIGHTNING_LOSS_OF_THREE_ACCUMULATED"), drop="none",
                                noise_seeds=0, check_determinism=False)
    assert report.reference_loss == [3.0] * 4, report.reference_loss


@pytest.mark.e2e
def test_a_plateau_stepped_per_step_after_the_checkpoint_is_said_to_be_saved_behind():
    """Trial 605: a ReduceLROnPlateau of interval "step", which Lightning steps
    after on_train_batch_end, where the checkpoint is written: a correct
    program's resume lowers the rate at another step, and the WARNING named
    the epoch-end step of a scheduler stepped per epoch."""
    from resumecheck.verdict import PLATEAU_AFTER_SAVE

    report = resumecheck.verify(spec("LIGHTNING_PLATEAU_AFTER_SAVE"), drop="none",
                                noise_seeds=0, check_determinism=False)
    said = PLATEAU_AFTER_SAVE.format("step 2")
    for run in (report.full_resume, report.engine_resume):
        assert run.verdict == "diverged" and run.first_divergent_quantity == "learning rate"
        assert said in run.explanation, run.explanation
        assert "a schedule's own settings" not in run.explanation
    notice = report.incomplete_state_notice() or ""
    assert notice.startswith("a plateau scheduler (ReduceLROnPlateau) of interval \"step\" is "
                             "stepped by Lightning after on_train_batch_end"), notice
    assert "epoch-end step" not in notice and "a schedule's own settings" not in notice


@pytest.mark.e2e
def test_a_rate_a_callback_sets_as_each_batch_begins_is_no_change_after_the_checkpoint():
    """Trial 480: a callback that set the rate from a scale its state_dict() left
    out, as each batch began, read "the learning rate changed after the
    checkpoint ... and the restart does not change it again: a scheduler
    stepped there is saved one step behind"; the restart set it again, from
    the scale it lost."""
    report = resumecheck.verify(spec("LIGHTNING_SCALED_AT_BATCH_START"), drop="none",
                                noise_seeds=0, check_determinism=False)
    own = report.full_resume
    assert (own.verdict, own.first_divergent_step, own.first_divergent_quantity) == (
        "diverged", 4, "learning rate"), own.explanation
    assert "changed after the checkpoint" not in own.explanation, own.explanation
    [line] = [u for u in report.undeclared if u.startswith("callbacks (Scales).scale ")]
    # (trial 480: a Lightning program's line carried the HuggingFace Trainer's advice too)
    assert "(Lightning: its state_dict() and load_state_dict()" in line, line
    assert "ExportableState" not in line and "HuggingFace" not in line, line


@pytest.mark.e2e
def test_a_second_restart_at_an_epochs_last_batch_is_the_restores_doing_not_the_steps():
    """A trial: resumed at 3 and again at an epoch's last batch, Lightning's
    restore counted that epoch's end again; the WARNING said the steps after
    the first restart left the declared state otherwise. The run held it as
    the uninterrupted run did right before the second restore, and no step
    read what that restore changed: a latent gap, Lightning's own counts."""
    from resumecheck.phrases import RESTORE_CHANGED

    report = resumecheck.verify(spec("LIGHTNING_EXACT"), resume_at=(3, 5), drop="none",
                                noise_seeds=0, check_determinism=False)
    assert report.engine_resume.verdict == IDENTICAL
    [finding] = report.engine_resume.diagnosis
    assert (finding.component, finding.step) == ("data_cursor", 5)
    assert RESTORE_CHANGED in finding.detail
    assert "Lightning's own counts of epochs" in finding.mark
    assert report.incomplete_state_notice() is None


@pytest.mark.e2e
def test_a_model_checkpoint_of_the_run_is_allowed_and_a_callbacks_state_is_not_undeclared():
    """A trial: the run's own ModelCheckpoint stopped the check before any run
    (Lightning refuses one with checkpointing off, the adapter's default), and
    fields a callback's state_dict() returns were said to be held by none."""
    from resumecheck.program import load_target

    target = load_target(spec("LIGHTNING_PLATEAU"))
    built = target.build(dict(target.run_config))
    try:
        roots = dict(built.program.undeclared_roots())
        assert set(vars(roots["callbacks (Plateau)"])) == {"note"}
    finally:
        built.program.close()
    report = resumecheck.verify(spec("LIGHTNING_PLATEAU"), drop="none", noise_seeds=0,
                                check_determinism=False)
    assert report.equivalent, report.render()


@pytest.mark.e2e
def test_a_datamodules_own_state_is_the_datamodule_component():
    """A trial's LightningDataModule kept a curriculum's level in its
    state_dict(), which Lightning's checkpoint holds: the engine's own restore
    lost it, and the correct program's report warned that the declared state
    was incomplete, every ablation inconclusive."""
    report = resumecheck.verify(spec("LIGHTNING_DATAMODULE_STATE"), drop=["datamodule"],
                                noise_seeds=0, check_determinism=False)
    own, engine, datamodule = report.runs
    assert (own.verdict, engine.verdict) == (IDENTICAL, IDENTICAL), report.render()
    assert report.equivalent and report.declared_state_complete is not False
    assert report.undeclared == []
    assert datamodule.dropped == ["datamodule"] and datamodule.verdict == DIVERGED
    assert datamodule.first_divergent_quantity.startswith("data")


@pytest.mark.e2e
def test_a_datamodules_state_it_does_not_save_is_named():
    """Its twin has no state_dict(): the resume reads the easier data, and the
    level it keeps is named as what the checkpoint may lose."""
    report = resumecheck.verify(spec("LIGHTNING_DATAMODULE_STATE_FORGOTTEN"), drop="none",
                                noise_seeds=0, check_determinism=False)
    assert not report.equivalent and report.full_resume.verdict == DIVERGED
    (level,) = report.undeclared
    assert level.startswith("datamodule (Curriculum).level (int: 0 at the build, 1 at the end")
    assert "your checkpoint may lose it" in level
    # (trial 782: told to declare it as a component, which a Lightning target cannot)
    assert ("Lightning's checkpoint holds what your LightningDataModule's state_dict() "
            "returns: return it there and set it in its load_state_dict()") in level, level
    assert "declare it as a component" not in level, level
    warning = next(line for line in report.render().splitlines() if line.startswith("WARNING"))
    assert "the samples are those of the same place in another epoch" in warning
    assert "or state the data depends on: a curriculum's level;" in warning


@pytest.mark.e2e
def test_at_an_epochs_end_the_lost_level_leads_the_warning_not_lightnings_recount():
    """Trial 873: resumed at an epoch's end, Lightning's recount of it (in a correct
    resume too) led the WARNING as "a declared component does not load back its own
    state", and the row read "a load_state_dict() loses state"; the level no component
    declares, which made the run depart, came last."""
    from resumecheck.pytest_plugin import _engine_why
    from resumecheck.report import LOSSY_ONE

    report = resumecheck.verify(spec("LIGHTNING_DATAMODULE_FORGOTTEN_AT_EPOCH_END"),
                                drop="none", noise_seeds=0, check_determinism=False)
    warning = report.incomplete_state_notice() or ""
    assert not warning.startswith(LOSSY_ONE), warning
    assert warning.startswith("the declared components do not capture the program's state")
    assert "`datamodule (Counts).level`" in warning, warning
    assert " Beside it, `data_cursor`: epoch_progress." in warning, warning
    plain = report.to_json()
    engine = next(r for r in plain["runs"] if r["checkpoint"] == "engine" and not r["dropped"])
    assert _engine_why(engine, plain["runs"][0], True) != "a load_state_dict() loses state"


@pytest.mark.e2e
def test_a_datamodules_load_that_reads_a_renamed_key_is_named_before_lightnings_restore():
    """Trial 713: a datamodule whose load_state_dict() read a key its
    state_dict() had renamed read "Lightning's restore does not bring back what
    it saved" in the WARNING, which named the user's load only in the engine's
    row."""
    report = resumecheck.verify(spec("LIGHTNING_DATAMODULE_LOAD_RENAMED"), drop="none",
                                noise_seeds=0, check_determinism=False)
    notice = report.incomplete_state_notice() or ""
    assert ("`datamodule`: level 0, expected 1: your LightningDataModule's load_state_dict() "
            "does not set it from the state it is given back, or Lightning's restore") \
        in notice, notice
    # (trial 808: a count set from the restored start only as the next iterator is made)
    assert ("or it sets its place only when it next makes an iterator, as a StatefulDataLoader "
            "does: where the steps after the restore read the uninterrupted run's samples, "
            "that place came back)") in notice, notice


@pytest.mark.e2e
def test_a_checkpoint_of_the_weights_only_is_saved_as_the_runs_model_checkpoint_saves_it():
    """A trial's ModelCheckpoint(save_weights_only=True) wrote checkpoints its
    resume could not load; the check saved its own whole and passed."""
    report = resumecheck.verify(spec("LIGHTNING_WEIGHTS_ONLY"), drop="none", noise_seeds=0,
                                check_determinism=False)
    own = report.full_resume
    assert own.verdict == "failed" and not report.equivalent
    assert "checkpoint contains only the model" in own.failure


@pytest.mark.e2e
def test_a_scheduler_the_module_steps_by_hand_is_named_as_not_compared():
    """A trial's module kept its scheduler as an attribute and stepped it by
    hand: the WARNING named nothing, `not compared` neither."""
    report = resumecheck.verify(spec("LIGHTNING_MANUAL_SCHEDULER"), drop="none", noise_seeds=0,
                                check_determinism=False)
    assert not report.equivalent
    (line,) = report.undeclared
    assert line.startswith("params.sched (a LambdaLR whose counts the run changed")
    assert "return it from configure_optimizers()" in line
    assert "`params.sched`" in report.incomplete_state_notice()


def test_a_module_with_two_optimizers_is_refused_as_a_limit_of_the_adapter():
    """Trial 198: an actor-critic's two optimizers read "the uninterrupted
    reference run ... failed: RuntimeError ... Fix the program", with a
    traceback of the adapter's code: it is a limit of the adapter, said so,
    with what to do now."""
    with pytest.raises(TargetError) as info:
        resumecheck.verify(spec("LIGHTNING_TWO_OPTIMIZERS"), drop="none", noise_seeds=0,
                           check_determinism=False)
    text = str(info.value)
    assert text.startswith("target 'TwoOptimizers': configure_optimizers() returns 2 "
                           "optimizers, and resumecheck's Lightning adapter checks modules "
                           "with exactly one (a limit of resumecheck, not a fault of your "
                           "program, which it has not judged)"), text
    assert "Fix the program" not in text and "Traceback" not in text
    assert "a parameter group for each part" in text
    # (trial 399: a GAN's alternating updates cannot share one optimizer, and its
    # manual step cannot run without a Trainer)
    # (trial 571: the same step ran under Lightning Fabric's setup())
    assert "not a GAN's alternating updates" in text, text
    assert "need a Trainer or Lightning Fabric's setup(module, *optimizers)" in text, text
    assert "runs your module's step by hand" not in text
    # (trial 622: such a step checks its own save, not Lightning's checkpoint)
    assert "each network, optimizer and scheduler declared as a component" in text, text
    assert ("its save() and load() can be trainer.save_checkpoint(path) and a Trainer's "
            "fit(ckpt_path=path)") in text, text


def test_a_component_changed_after_its_load_beside_one_that_lost_state_is_said_apart():
    """Trial 209: an EMA callback its load gave back, set again in on_fit_start,
    beside a datamodule whose load lost state, read "declared components do not
    load back their own state" and, in its diagnosis, "its load_state_dict()
    does not bring back what its state_dict() returned"."""
    from resumecheck.phrases import CHANGED_AFTER_LOAD
    from resumecheck.report import Finding, RunResult, _lossy_notice

    ema = Finding("callbacks", f"EMA.shadow differs ({CHANGED_AFTER_LOAD})", step=6)
    data = Finding("datamodule", "gen differs", step=6)
    notice = _lossy_notice([data, ema], "differs from step 7 (loss)", "", "")
    assert notice.startswith("a declared component does not load back its own state: "), notice
    assert ("`datamodule`: gen differs: its load_state_dict() does not bring back what its "
            "state_dict() returned") in notice
    assert f"; and `callbacks`: EMA.shadow differs ({CHANGED_AFTER_LOAD})" in notice
    run = RunResult(dropped=[], resume_at=[6], verdict="diverged", checkpoint="program",
                    diagnosis=[data, ema])
    assert ema.mark_in(run, notice).startswith(
        " (not judged: it is changed between the restore and the first step")
    assert data.mark_in(run, notice).startswith(
        " (not judged: its load_state_dict() does not bring back")
    # (a later trial: Lightning's StochasticWeightAveraging emptied the schedulers at fit
    # start, and "its load_state_dict()" was read as a load of the user's)
    scheduler = Finding("scheduler", "last_epoch 0, expected 6", step=6)
    said = _lossy_notice([scheduler], "differs from step 7 (loss)", "", "",
                         framework="Lightning")
    assert ("`scheduler`: last_epoch 0, expected 6: Lightning's restore does not bring back "
            "what it saved (or a callback, the framework's or yours, set it anew or emptied it "
            "around the restore") in said
    assert "its load_state_dict()" not in said
    # (trial 713: a datamodule's own load is named first, as a callback's is)
    said = _lossy_notice([data], "differs from step 7 (loss)", "", "", framework="Lightning")
    assert ("`datamodule`: gen differs: your LightningDataModule's load_state_dict() does not "
            "set it from the state it is given back, or Lightning's restore does not bring back "
            "what it saved") in said
    assert data.mark_in(run, said).startswith(" (not judged: the restore does not bring it back")
    # (a later trial: the own resume's finding, in its own words, beside the WARNING's
    # of the engine's, which said the callback was changed after its load)
    own_ema = Finding("callbacks", "EMA.shadow differs", step=6)
    assert own_ema.mark_in(run, notice).startswith(
        " (not judged: it is changed between the restore and the first step")


@pytest.mark.e2e
def test_a_validation_after_the_next_steps_first_micro_batch_is_not_said_to_be_skipped():
    """Trial 239: accumulating, Lightning validated after the first micro-batch of
    the step after the checkpoint's, which a resume from that checkpoint runs
    again, and validates again; the report said "a resume from it does not
    validate again". Without accumulation the step validated after is named."""
    from resumecheck.program import load_target

    def validated(name, steps):
        built = load_target(spec(name)).build({})
        try:
            for step in range(1, steps + 1):
                built.step(step)
            return built.program.validates_after
        finally:
            built.program.close()

    assert validated("LIGHTNING_ON_PLATEAU_ACCUMULATING", 3) == []
    assert validated("LIGHTNING_ON_PLATEAU", 3) == [2]


@pytest.mark.e2e
def test_state_drifted_before_a_second_restart_is_not_said_to_change_after_its_load():
    """Trial 240: a callback's mean, drifted since the first restore lost its
    count, was put in at the second restart and given back by its load; the
    WARNING said "something that ran between the restore and the first step
    changed it". The run held it otherwise already before that restore."""
    from resumecheck.phrases import CHANGED_AFTER_LOAD
    from resumecheck.verdict import HELD_OTHERWISE_BEFORE

    report = resumecheck.verify(spec("LIGHTNING_AVERAGE_LOSES_COUNT"), drop="none",
                                noise_seeds=0, check_determinism=False)
    later = [f for f in report.engine_resume.diagnosis if f.component == "callbacks"
             and f.step == 6]
    assert later and HELD_OTHERWISE_BEFORE in later[0].detail, report.engine_resume.diagnosis
    assert CHANGED_AFTER_LOAD not in later[0].detail
    assert CHANGED_AFTER_LOAD not in (report.incomplete_state_notice() or "")


@pytest.mark.e2e
def test_a_resume_that_fails_for_a_validation_not_run_again_says_so():
    """Trial 249: resumed at an epoch's end, Lightning ran that end again without
    validating, and EarlyStopping raised for its missing metric; the row said
    only that a step failed."""
    from resumecheck.phrases import NOT_VALIDATED_AGAIN

    own = resumecheck.verify(spec("LIGHTNING_EARLY_STOPPING"), drop="none", noise_seeds=0,
                             check_determinism=False).full_resume
    assert own.verdict == "failed" and "EarlyStopping" in (own.failure or ""), own.explanation
    assert (f"the uninterrupted run validated after step 5, where this resume's checkpoint was "
            f"written, at that batch's end: {NOT_VALIDATED_AGAIN}") in own.explanation
    assert "and what reads its metric there finds none" in own.explanation


@pytest.mark.e2e
def test_a_plain_training_loader_read_again_from_its_epochs_start_is_said_why():
    """Trial 267: a Lightning program with a plain DataLoader, resumed inside an
    epoch, read the epoch again from its start, and the report named undeclared
    state; Lightning itself says only that the loader is not resumable."""
    report = resumecheck.verify(spec("LIGHTNING_PLAIN_LOADER"), drop="none", noise_seeds=0,
                                check_determinism=False)
    own = report.runs[0]
    assert own.verdict == DIVERGED and own.first_divergent_step == 4
    assert "the first of its epoch: the restart reads the epoch again" in own.explanation
    assert ("Lightning restores a training loader's place in its epoch only where the loader "
            "keeps one (state_dict() and load_state_dict(): torchdata's StatefulDataLoader), "
            "and yours is a DataLoader: a resume inside an epoch reads that epoch again from "
            "its start") in own.explanation, own.explanation
    # (a later trial's datamodule put its sampler's place back itself, and a copy that lost
    # it read this as a claim about every plain loader)
    # (trial 681: its place was put back by a callback, which the WARNING did not name)
    assert ("unless code of yours puts the place back (a callback's or a datamodule's "
            "load_state_dict() that sets its sampler's position") in own.explanation
    assert "came back as saved, yet the samples differ" not in own.explanation


def test_a_lightning_target_takes_what_is_not_state_as_a_target_does():
    """Trial 282: the `not compared` line's advice, Target(not_state=...), was no
    argument of the framework targets; one path given alone is one path."""
    from resumecheck.frameworks.lightning import lightning_target

    def made() -> None:
        return None

    target = lightning_target(module=made, data=made, not_state="params.seen")
    assert target.not_state == ("params.seen",)
    target = lightning_target(module=made, data=made, not_state=["params.seen", "params.t"])
    assert target.not_state == ("params.seen", "params.t")


@pytest.mark.e2e
def test_a_callback_whose_load_reads_another_key_is_told_its_own_load_first():
    """Trial 407: a callback's load_state_dict() read a key its state_dict()
    had renamed; the WARNING led with "Lightning's restore does not bring back
    what it saved", where Lightning had handed the saved state back."""
    report = resumecheck.verify(spec("LIGHTNING_COUNTER_KEY_RENAMED"), drop="none",
                                noise_seeds=0, check_determinism=False)
    assert report.runs[0].verdict == DIVERGED
    notice = report.incomplete_state_notice() or ""
    assert ("HalvesTheLrAfterFour.count 0, expected 3: a callback's load_state_dict() does not "
            "set it from the state it is given back, or Lightning's restore does not bring back "
            "what it saved (or a callback") in notice, notice


@pytest.mark.e2e
def test_a_model_checkpoint_subclass_of_the_users_is_compared_without_each_builds_root():
    """Trial 411: a ModelCheckpoint subclass (the user's own class, so its state
    is compared) wrote under the check's root, which each build has of its own;
    its best_model_path and dirpath "differed", and a correct program was NOT
    EQUIVALENT, its callback said to lose its state."""
    report = resumecheck.verify(spec("LIGHTNING_OWN_MODEL_CHECKPOINT"), drop=["callbacks"],
                                noise_seeds=0, check_determinism=False)
    assert report.equivalent, report.render()
    engine = report.engine_resume
    assert engine is not None and engine.verdict == IDENTICAL, engine.explanation
    assert ["callbacks"] in [r.dropped for r in report.runs]  # (its state is compared)
    for run in report.runs[:2]:  # (the own resume and the engine's: nothing of it differs)
        assert run.latent_gaps == [] and run.diagnosis == [], (run.latent_gaps, run.diagnosis)


@pytest.mark.e2e
def test_a_loader_whose_load_reads_another_key_is_told_its_own_load_first():
    """Trial 411: a loader's load_state_dict() left out a field its state_dict()
    saved; the WARNING led with Lightning's restore and named no loader."""
    report = resumecheck.verify(spec("LIGHTNING_LOADER_KEY_RENAMED"), drop="none",
                                noise_seeds=0, check_determinism=False)
    assert report.runs[0].first_divergent_step == 4
    notice = report.incomplete_state_notice() or ""
    assert ("`data_cursor`: state_dict.combined_loader[0].read 0, expected 3: your loader's "
            "load_state_dict() does not set it from the state it is given back, or Lightning's "
            "restore does not bring back what it saved") in notice, notice


def test_lightnings_weight_averaging_is_refused_as_a_limit_not_judged():
    """Trial 545: StochasticWeightAveraging keeps an averaged model, counts and
    an SWALR scheduler that Lightning restores after the fit starts, which the
    adapter does not follow: a checkpoint that dropped them was not caught, and
    the correct twin's scheduler read as lost. Refused, as what it is."""
    with pytest.raises(resumecheck.TargetError) as info:
        resumecheck.verify(spec("LIGHTNING_SWA"), drop="none", noise_seeds=0,
                           check_determinism=False)
    text = str(info.value)
    assert "Lightning's StochasticWeightAveraging" in text
    assert "a limit of resumecheck, not a fault of your program, which it has not judged" in text



def test_the_streams_advice_follows_whether_the_training_loader_has_a_generator():
    """Trial 591: a loader with a generator of its own draws nothing from torch's
    stream as Lightning makes its iterator; its correct twin, which set the stream
    in on_load_checkpoint, was told to wait for on_train_batch_start."""
    from types import SimpleNamespace

    import torch

    from resumecheck.frameworks.lightning import _rng_advice

    plain = _rng_advice([SimpleNamespace(generator=None)])
    assert "in the first on_train_batch_start after the load" in plain
    assert "it draws its seed from the torch stream" in plain
    # (trial 615: set as advised, a resume at an epoch's last batch departed)
    assert plain.endswith("A checkpoint of an epoch's last batch is another case: there the "
                          "uninterrupted run too makes the next epoch's iterator after the "
                          "save, so streams set at that batch may stand behind it "
                          "(--resume-at an epoch's end checks it)")
    assert _rng_advice([]) == plain  # (no loader made yet: the general advice)
    own = _rng_advice([SimpleNamespace(generator=torch.Generator())])
    assert "torch's stream, and a generator your steps alone draw from, can be set again " \
        "in its on_load_checkpoint()" in own
    assert "it draws its seed from the torch stream" not in own


@pytest.mark.e2e
def test_a_lightning_targets_header_says_its_adapter_seeds_the_build():
    """Trial 629: "the program's own seed (0)" of a script that seeds 42, where
    the check ran its Lightning target's seed_everything(0)."""
    from resumecheck.schema import validate

    report = resumecheck.verify(spec("LIGHTNING_LOSS_OF_THREE_ACCUMULATED"), drop="none",
                                noise_seeds=0, check_determinism=False)
    assert report.seed_text == ("seed 0, the target's (its adapter seeds the build with it "
                                "before your code runs; a seed your code sets itself comes "
                                "after it: --seed sets the adapter's)")
    document = report.to_json()
    validate(document)
    assert document["noise"]["seeded_by"].startswith("the adapter (lightning.seed_everything")


@pytest.mark.e2e
def test_at_an_epochs_end_a_save_right_after_lightnings_restore_is_not_tried():
    """Trial 653: a correct program with a callback that keeps the streams,
    resumed at an epoch's end, every step alike, was told that a save right
    after the restore loses `callbacks`: that save counts the epoch's end
    once more, Lightning's own doing (FRAMEWORKS.md), not a loss of state."""
    report = resumecheck.verify(f"{EXAMPLES / 'lightning_check.py'}:RNG_CALLBACK",
                                resume_at=(5,), drop="none", noise_seeds=0,
                                check_determinism=False)
    own = report.full_resume
    assert own.verdict == IDENTICAL and not own.lost_on_resave(), own.explanation
    assert report.equivalent
    # (trial 727: the callback's streams, looked at after Lightning's setup had drawn the
    # next epoch's iterator from them, read as a latent gap of a correct program)
    assert own.latent_gaps == ["data_cursor"], own.latent_gaps


@pytest.mark.e2e
def test_where_the_run_checkpoints_at_epoch_ends_the_own_resume_says_that_is_not_checked():
    """Trial 665: a default ModelCheckpoint's resume, at an epoch's end,
    departed from the second step after it; the check's own checkpoint, at the
    epoch's last batch, resumed bit for bit, and nothing said the run's own
    kind of checkpoint was not what ran."""
    from resumecheck.frameworks.lightning import SAVED_AT_BATCH_END

    default = measured("lightning_check.py:EPOCH_END")  # (no ModelCheckpoint of steps)
    assert default.explanation.endswith(SAVED_AT_BATCH_END), default.explanation
    steps = resumecheck.verify(spec("LIGHTNING_OWN_MODEL_CHECKPOINT"), drop="none",
                               noise_seeds=0, check_determinism=False).full_resume
    assert SAVED_AT_BATCH_END not in steps.explanation, steps.explanation


def test_beside_a_component_changed_after_its_load_lightnings_recount_does_not_lead():
    """Trial 768: an EMA callback set again in on_fit_start, resumed at an
    epoch's last batch. Without ablations the WARNING led with Lightning's
    recount of the epoch's end (in a correct resume too: no lead) as "a
    declared component does not load back its own state"; an unread stream
    restored otherwise read "not judged: it is changed between the restore and
    the first step", of the callback's cause; and the plugin's row said "a
    load_state_dict() loses state"."""
    from resumecheck.phrases import CHANGED_AFTER_LOAD
    from resumecheck.pytest_plugin import _engine_why
    from resumecheck.report import CHANGED_ONE, Finding, RunResult, _lossy_notice, lossy_first

    ema = Finding("callbacks", f"EMA.shadow differs ({CHANGED_AFTER_LOAD})", step=16)
    recount = Finding("data_cursor", "epoch_progress.current.completed 2, expected 1", step=16)
    stream = Finding("rng", "torch CPU stream differs from the uninterrupted run's at step 16",
                     step=16)
    notice = _lossy_notice([recount, ema], "ends otherwise in the state of callbacks (every "
                           "step matches)", "", "", framework="Lightning")
    assert notice.startswith(f"{CHANGED_ONE}: "), notice
    assert (f"At the first step after the restore, `callbacks`: EMA.shadow differs "
            f"({CHANGED_AFTER_LOAD}); beside it, `data_cursor`: epoch_progress.current.completed "
            "2, expected 1 (not judged: Lightning's counts of epochs") in notice, notice
    run = RunResult(dropped=[], resume_at=[16], verdict="diverged", checkpoint="program",
                    diagnosis=[stream, ema, recount],
                    first_divergent_quantity="state of callbacks at the end")
    assert stream.mark_in(run, notice) == (
        " (not judged: the engine's own full resume ends otherwise too, for the cause the "
        "WARNING names; it changed no step here)")
    assert ema.mark_in(run, notice).startswith(
        " (not judged: it is changed between the restore and the first step")
    assert [f.component for f in lossy_first(run.diagnosis, notice)] == [
        "callbacks", "rng", "data_cursor"]
    as_json = [{"component": f.component, "detail": f.detail, "basis": "reference",
                "step": 16} for f in (recount, ema)]
    engine = {"diagnosis": as_json, "resume_at": [16], "verdict": "diverged",
              "explanation": ""}
    assert _engine_why(engine, {"explanation": ""}) == (
        "a restored component changed before the first step")


def test_a_passing_report_of_a_run_that_checkpoints_at_epoch_ends_says_so_with_its_caveats():
    """Trial 774: its ModelCheckpoint(save_last=True) wrote at epoch ends only,
    and a relaunch from it departed; the report read EQUIVALENT and said so
    only deep in the own resume's why, and the plugin's summary not at all."""
    from resumecheck.environment import fingerprint
    from resumecheck.phrases import EPOCH_END_UNCHECKED, SAVED_AT_BATCH_END
    from resumecheck.report import Report, RunResult, caveats

    def report(explanation: str) -> Report:
        runs = [RunResult(dropped=[], resume_at=[6], verdict=IDENTICAL, checkpoint=checkpoint,
                          explanation=explanation, reproduce="r")
                for checkpoint in ("program", "engine")]
        return Report(target="t.py:T", steps=18, resume_at=[6], seed=0, isolation="process",
                      tolerance={"mode": "bitwise", "rtol": None, "atol": None},
                      determinism={"checked": False}, noise={"seeds": [], "band": None},
                      environment=fingerprint(1), runs=runs)

    at_epoch_ends = report(f"every step after the restart matches bit for bit{SAVED_AT_BATCH_END}")
    assert EPOCH_END_UNCHECKED in caveats(at_epoch_ends)
    assert EPOCH_END_UNCHECKED in at_epoch_ends.render()
    assert EPOCH_END_UNCHECKED in at_epoch_ends.to_json()["caveats"]
    assert EPOCH_END_UNCHECKED.startswith(
        "not checked: a resume from a checkpoint written at an epoch's end")
    assert EPOCH_END_UNCHECKED not in caveats(report("every step after the restart matches"))
