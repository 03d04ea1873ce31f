"""The HuggingFace Trainer: trainer_target drives Trainer.train one optimizer
step at a time and audits the Trainer's own checkpoint (``checkpoint-N/``
written on ``control.should_save``, ``train(resume_from_checkpoint=...)``).

The targets live in tests/frameworks_loop_programs.py; the training script
is the example's (examples/frameworks/transformers_train.py): a one-layer
GPT-2 from a config, nothing downloaded.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import threading
from pathlib import Path

import pytest

# find_spec, not importorskip: importing transformers at collection cost every xdist
# worker seconds; the tests import it when they run.
INSTALLED = pytest.mark.skipif(importlib.util.find_spec("transformers") is None,
                               reason="transformers is not installed")

import resumecheck  # noqa: E402
from resumecheck import TargetError  # noqa: E402
from resumecheck.program import load_target  # noqa: E402
from resumecheck.phrases import CHANGED_NO_STEP  # noqa: E402
from resumecheck.report import DIVERGED, IDENTICAL  # noqa: E402
from resumecheck.segments import SCRATCH_ENV  # noqa: E402
from resumecheck.trace import Tracer  # noqa: E402
from tests.framework_tables import check_table_rows  # noqa: E402
from tests.frameworks_loop_programs import statement_lines  # noqa: E402

PROGRAMS = Path(__file__).resolve().parent / "frameworks_loop_programs.py"
EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "frameworks"

pytestmark = [
    INSTALLED,
    pytest.mark.filterwarnings("ignore::UserWarning"),
    pytest.mark.filterwarnings("ignore::FutureWarning"),
]


def spec(name: str) -> str:
    return f"{PROGRAMS}:{name}"


def loop_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("resumecheck the HuggingFace")]


def test_the_common_case_is_at_most_five_lines():
    assert statement_lines(PROGRAMS, "TRAINER_DEFAULT") <= 5
    assert statement_lines(EXAMPLES / "transformers_check.py", "DEFAULT") <= 5


def test_each_step_is_traced_and_a_save_writes_the_trainers_checkpoint(tmp_path, monkeypatch):
    scratch = tmp_path / "scratch"  # a process-isolated segment's: the check removes it
    scratch.mkdir()
    monkeypatch.setenv(SCRATCH_ENV, str(scratch))
    built = load_target(spec("TRAINER_DEFAULT")).build({"seed": 0})
    assert [p.name.startswith("resumecheck-trainer-") for p in scratch.iterdir()] == [True]
    try:
        tracer = Tracer(built, None)
        records = []
        for step in range(1, 3):
            tracer.before_step(step)
            records.append(tracer.after_step(step, built.step(step), keep_tensors=False))
        built.program.save(str(tmp_path / "ckpt"))
        tracer.before_step(3)
        records.append(tracer.after_step(3, built.step(3), keep_tensors=False))
        tracer.close()
        assert built.program.trainer.state.global_step == 3
    finally:
        built.program.close()
    assert not loop_threads()
    for record in records:
        assert not record.skipped
        assert any(k.startswith("grad:transformer.") for k in record.digests)
        assert any(k.startswith("inputs:") for k in record.digests)  # the model's forward
    assert [r.lr[0] for r in records] == sorted(r.lr[0] for r in records)  # the warm-up
    saved = set(os.listdir(tmp_path / "ckpt"))
    assert {"optimizer.pt", "scheduler.pt", "rng_state.pth", "trainer_state.json"} <= saved
    assert '"global_step": 2' in (tmp_path / "ckpt" / "trainer_state.json").read_text()


@pytest.mark.e2e
def test_the_trainers_own_resume_is_exact_with_no_latent_gap_and_the_ablations_judge_each_component():
    report = resumecheck.verify(spec("TRAINER_DEFAULT"), drop=["scheduler", "global_step"],
                                noise_seeds=0, check_determinism=False)
    own, engine, *ablations = report.runs
    assert own.checkpoint == "program" and own.verdict == IDENTICAL, own.explanation
    # the correct Trainer program: no finding and no latent RNG gap
    assert not own.diagnosis, [(f.component, f.detail) for f in own.diagnosis]
    assert not own.latent_gaps, own.latent_gaps
    assert "latent" not in report.render()
    assert engine.checkpoint == "engine" and engine.verdict == IDENTICAL, engine.explanation
    by_drop = {tuple(r.dropped): r for r in ablations}
    assert by_drop[("scheduler",)].verdict == DIVERGED
    assert by_drop[("scheduler",)].first_divergent_quantity == "learning rate"
    # without TrainerState's global step the Trainer skips no batch: other data
    assert by_drop[("global_step",)].first_divergent_quantity == "data (the model's inputs)"
    assert not loop_threads()


@pytest.mark.e2e
def test_removing_scheduler_pt_after_save_is_blamed_on_the_scheduler():
    report = resumecheck.verify(spec("TRAINER_SCHEDULER_DROPPED"), drop="none",
                                noise_seeds=0, check_determinism=False)
    run = report.runs[0]
    assert run.checkpoint == "program" and run.verdict == DIVERGED
    blamed = {f.component: f.detail for f in run.diagnosis}
    assert "last_epoch 0, expected 3" in blamed["scheduler"]
    # The Trainer loads optimizer.pt only when scheduler.pt is there too: the
    # optimizer's moments are lost with it, and the report says so.
    assert "fresh" in blamed["optimizer"]
    assert (run.first_divergent_step, run.first_divergent_quantity) == (4, "learning rate")


@pytest.mark.process
@pytest.mark.e2e
def test_process_isolation_agrees():
    report = resumecheck.verify(spec("TRAINER_DEFAULT"), drop="none", noise_seeds=0,
                                check_determinism=False, isolation="process")
    assert [r.verdict for r in report.runs] == [IDENTICAL, IDENTICAL]


def test_a_missing_transformers_names_the_extra(monkeypatch):
    target = load_target(spec("TRAINER_DEFAULT"))
    for name in [m for m in sys.modules if m == "transformers" or m.startswith("transformers.")]:
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(TargetError) as info:
        target.build({})
    assert "resumecheck[transformers]" in str(info.value)


@pytest.mark.e2e
def test_the_readme_table_rows_are_what_the_examples_measure_now():
    """Verdicts and first divergences of the HF Trainer rows (the cause's wording may change)."""
    check_table_rows("HF Trainer")


@pytest.mark.e2e
def test_deleting_rng_state_pth_after_save_is_blamed_on_rng_and_confirmed():
    # The Trainer reseeds in train() and restores rng_state.pth only inside its
    # loop: the restored state is read, and overridden, where the step uses it.
    report = resumecheck.verify(spec("TRAINER_RNG_DROPPED"), drop="none",
                                noise_seeds=0, check_determinism=False)
    run = report.runs[0]
    assert run.checkpoint == "program" and run.verdict == DIVERGED, run.explanation
    assert run.first_divergent_step == 4
    blamed = {f.component: f for f in run.diagnosis}
    assert set(blamed) == {"rng"}, [(f.component, f.detail) for f in run.diagnosis]
    assert blamed["rng"].status == "confirmed", (blamed["rng"].status, blamed["rng"].detail)
    # (trial 516: no word of the file the Trainer keeps the streams in)
    assert "no rng_state.pth" in blamed["rng"].fix and "keep that file" in blamed["rng"].fix
    assert "; to keep it: the checkpoint the Trainer resumed from holds no rng_state.pth" \
        in report.render()


@pytest.mark.e2e
def test_transformers_own_collator_given_a_seed_has_its_generator_named():
    """Trial 816: DataCollatorForLanguageModeling(seed=...) masks from a generator
    of its own, which the Trainer's checkpoint does not hold; the report named
    no such state and pointed at samplers and iterators."""
    report = resumecheck.verify(f"{PROGRAMS}:TRAINER_SEEDED_MASKING", drop="none",
                                noise_seeds=0, check_determinism=False)
    assert report.runs[0].verdict == DIVERGED
    [line] = report.undeclared
    assert line.startswith(
        "data_collator (DataCollatorForLanguageModeling).generator (a torch.Generator whose "
        "state the run changed, drawn from or seeded again, and no declared component holds: "
        "transformers' data collator, given a seed, draws from a generator of its own, which "
        "the Trainer's checkpoint does not hold (it keeps torch's streams): leave its seed "
        "unset for it to draw from torch's stream, which the checkpoint keeps)"), line


@pytest.mark.e2e
def test_a_generator_in_the_users_data_collator_is_named_with_what_to_do():
    """A trial: a collator masking with its own numpy Generator, which the
    Trainer's checkpoint does not hold, made the resume depart, and the
    report pointed at a correct callback instead of it."""
    report = resumecheck.verify(f"{PROGRAMS}:TRAINER_COLLATOR_GENERATOR", drop="none",
                                noise_seeds=0, check_determinism=False)
    assert report.runs[0].verdict == DIVERGED
    [line] = [u for u in report.undeclared if u.startswith("data_collator.rng ")]
    assert line.startswith("data_collator.rng (a numpy Generator whose state the run changed, "
                           "drawn from or seeded again, and no declared component holds: the "
                           "framework's checkpoint does not hold it unless your code saves "
                           "it there"), line
    assert "RNGState" not in line  # (a Trainer target declares nothing more)
    # (trial 142: the own resume's why listed samplers, iterators and counters)
    why = report.full_resume.explanation
    assert why.startswith("data (the model's inputs) differs from step 4; a random generator "
                          "the run drew from and no declared component holds: "
                          "`data_collator.rng` (see `not compared`)"), why
    assert "a sampler's epoch that set_epoch sets" not in why
    # (trial 636: resumed at 1, the collator's generator, looked at after the first
    # resumed batch's draw, read alike and was named nowhere)
    first = resumecheck.verify(f"{PROGRAMS}:TRAINER_COLLATOR_GENERATOR", drop="none",
                               noise_seeds=0, check_determinism=False, resume_at=1)
    assert first.runs[0].verdict == DIVERGED
    assert any(u.startswith("data_collator.rng ") for u in first.undeclared), first.undeclared


@pytest.mark.e2e
def test_log_lines_are_not_printed_where_the_runs_arguments_disable_the_bars(capfd):
    report = resumecheck.verify(f"{PROGRAMS}:TRAINER_NO_TQDM", drop="none", noise_seeds=0,
                                check_determinism=False)
    assert report.equivalent
    out, err = capfd.readouterr()
    assert "'loss'" not in out + err and "Writing model shards" not in err, (out, err)


@pytest.mark.e2e
def test_a_collators_scratch_made_anew_for_each_batch_is_not_named():
    """Trial 400: a collator's list of the batch's indices, made at every call,
    was said to be held otherwise from right after the restore, where the
    resumed Trainer had already collated its first batch: the only suspect
    named, pointing away from the cause. Beside it, the collator's generator,
    which the checkpoint loses, is still named."""
    report = resumecheck.verify(f"{PROGRAMS}:TRAINER_SCRATCH_COLLATOR", drop="none",
                                noise_seeds=0, check_determinism=False)
    assert report.runs[0].verdict == DIVERGED
    assert [u.split(" ", 1)[0] for u in report.undeclared] == ["data_collator.rng"], \
        report.undeclared


@pytest.mark.e2e
def test_a_generator_its_own_dataset_keeps_is_named():
    """Trial 260: a dataset of the user's own masked tokens in __getitem__ with a
    generator it kept; the Trainer target named nothing (its dataset was not
    looked at)."""
    report = resumecheck.verify(f"{PROGRAMS}:TRAINER_DATASET_GENERATOR", drop="none",
                                noise_seeds=0, check_determinism=False)
    assert report.runs[0].verdict == DIVERGED
    [line] = [u for u in report.undeclared if u.startswith("train_dataset (MaskedTokens).gen ")]
    assert "the framework's checkpoint does not hold it unless your code saves it there" in line
    assert "`train_dataset (MaskedTokens).gen`" in report.full_resume.explanation
    # (a number it keeps: told what a Trainer target can do, not to declare it)
    [count] = [u for u in report.undeclared if u.startswith("train_dataset (MaskedTokens).served")]
    assert "the Trainer's checkpoint holds nothing of your dataset" in count, count
    # (trial 272: told to set it again in a callback's on_step_begin, too late for the
    # batches the Trainer fetches ahead)
    assert "comes too late for them" in count and "ExportableState" not in count, count


@pytest.mark.e2e
def test_an_exportable_callback_is_the_component_callbacks_and_its_lost_state_is_blamed():
    """A trial: a correct ExportableState callback made the engine's resume
    depart (every ablation inconclusive), and a resume that did not restore
    it (restore_callback_states_from_checkpoint left False) was not blamed."""
    report = resumecheck.verify(f"{PROGRAMS}:TRAINER_CALLBACK_RESTORED", drop=["callbacks"],
                                noise_seeds=0, check_determinism=False)
    own, engine, dropped = report.runs
    assert own.verdict == IDENTICAL and engine.verdict == IDENTICAL, engine.explanation
    assert (dropped.verdict, dropped.first_divergent_step, dropped.first_divergent_quantity) \
        == (DIVERGED, 5, "learning rate")
    assert report.undeclared == []  # (its exported count is compared, not "not compared")

    report = resumecheck.verify(f"{PROGRAMS}:TRAINER_CALLBACK_NOT_RESTORED", drop="none",
                                noise_seeds=0, check_determinism=False)
    own = report.runs[0]
    assert own.verdict == DIVERGED and report.engine_resume.verdict == IDENTICAL
    assert [(f.component, f.status) for f in own.diagnosis] == [("callbacks", "confirmed")]
    assert "HalvesTheLr.attributes.count 0, expected 3" in own.diagnosis[0].detail
    # (a trial: the confirmed finding did not say what makes the Trainer put it back)
    assert "restore_callback_states_from_checkpoint=True" in own.diagnosis[0].fix
    # (trial 530: so restored, a callback that added to the logs ran after the printer)
    assert "adds it after the printer and the loggers" in own.diagnosis[0].fix
    assert "to keep it: the Trainer's checkpoints hold your callbacks' state" in report.render()


@pytest.mark.e2e
def test_the_trainers_own_early_stopping_counter_is_compared_and_its_lost_restore_blamed(capfd):
    """A trial: EarlyStoppingCallback's patience counter, which a resume without
    restore_callback_states_from_checkpoint resets (a real relaunch trained on
    past where the uninterrupted run stopped), was left out with the Trainer's
    own callbacks, and the check passed. Its twin, which asks for the restore,
    resumes with no WARNING: the engine's restart puts back the best metric
    the counter is counted from."""
    report = resumecheck.verify(f"{PROGRAMS}:TRAINER_EARLY_STOPPING_NOT_RESTORED", drop="none",
                                noise_seeds=0, check_determinism=False)
    own = report.runs[0]
    assert own.verdict == DIVERGED and report.engine_resume.verdict == IDENTICAL
    assert [(f.component, f.status) for f in own.diagnosis] == [("callbacks", "confirmed")]
    assert ("EarlyStoppingCallback.attributes.early_stopping_patience_counter 0, expected 1"
            in own.diagnosis[0].detail)
    assert "restore_callback_states_from_checkpoint=True" in own.diagnosis[0].fix
    twin = resumecheck.verify(f"{PROGRAMS}:TRAINER_EARLY_STOPPING_RESTORED", drop="none",
                              noise_seeds=0, check_determinism=False)
    assert twin.equivalent and twin.engine_resume.verdict == IDENTICAL
    assert twin.incomplete_state_notice() is None
    # (a trial's fuzz printed 591 bars of "Writing model shards", one for each save of the
    # model: off while the check trains and saves, on again after it)
    assert "Writing model shards" not in capfd.readouterr().err
    import transformers

    assert transformers.utils.logging.is_progress_bar_enabled()


@pytest.mark.e2e
def test_a_checkpoint_whose_step_count_is_reset_is_blamed_on_global_step_confirmed():
    """The rerun that puts global_step right goes through the user's own
    checkpoint (checked when the callbacks got a restore stage of their own)."""
    report = resumecheck.verify(f"{PROGRAMS}:TRAINER_STEP_RESET", drop="none", noise_seeds=0,
                                check_determinism=False)
    own = report.runs[0]
    assert own.verdict == DIVERGED and own.first_divergent_step == 4
    assert [(f.component, f.status) for f in own.diagnosis] == [("global_step", "confirmed")]


@pytest.mark.e2e
def test_layers_a_callback_freezes_again_in_on_train_begin_are_no_latent_gap():
    """A trial: the modes and frozen parameters of the state right after the
    load were read before the Trainer's loop had restored the checkpoint and
    run on_train_begin, and a correct resume read "latent gap: params".
    And the engine's restore froze the layers before the Trainer built its
    optimizer over the trainable parameters, so `drop rng` failed to load the
    optimizer's state (a parameter group of another size)."""
    report = resumecheck.verify(f"{PROGRAMS}:TRAINER_FREEZES_AGAIN", drop=["rng"],
                                noise_seeds=0, check_determinism=False)
    own, engine, dropped = report.runs
    assert report.equivalent and own.verdict == IDENTICAL and engine.verdict == IDENTICAL
    assert own.latent_gaps == [] and own.diagnosis == [], own.explanation
    assert dropped.verdict == DIVERGED, dropped.failure


@pytest.mark.e2e
def test_a_callback_that_counts_logs_resumes_and_one_that_resets_in_on_train_begin_is_caught():
    """A trial: the adapter turned the Trainer's logging off, so a callback
    that counted logs never moved and its bug (a count set to 0 in
    on_train_begin, after the Trainer's restore) passed; with logging on, the
    step's log ran after the step's end and was said to be a change the
    check's save made, and the end state missed the last step's log. And a
    seed in the arguments was reported as the adapter's 0."""
    report = resumecheck.verify(f"{PROGRAMS}:TRAINER_LOG_COUNTER", drop="none", noise_seeds=0,
                                check_determinism=False)
    own = report.full_resume
    assert report.equivalent and own.verdict == IDENTICAL, own.explanation
    assert "save() changes state" not in own.explanation
    assert "seed 3, the target's (its adapter seeds the build with it" in report.render()

    report = resumecheck.verify(f"{PROGRAMS}:TRAINER_LOG_COUNTER_RESET", drop="none",
                                noise_seeds=0, check_determinism=False)
    own = report.full_resume
    assert not report.equivalent and own.verdict == DIVERGED
    assert own.first_divergent_quantity == "state of callbacks"
    # (every step's log counted, the last one's too: 8 steps, 8 logs)
    assert own.divergence_detail == ("callbacks at the end: CountsLogs.attributes.logs 5, "
                                     "expected 8")
    assert [(f.component, f.detail) for f in own.diagnosis] == [
        ("callbacks", "CountsLogs.attributes.logs 0, expected 3")]
    # (trials: "a declared component does not load back its own state", where the
    # adapter's load gave it back and the callback's on_train_begin reset it)
    notice = report.incomplete_state_notice()
    assert notice.startswith("a declared component is changed between its restore and the "
                             "first step"), notice
    assert "does not load back" not in notice and "does not bring back" not in notice
    assert "which its load gave back, was changed before the first step" in \
        report.engine_resume.explanation
    assert "(not judged: it is changed between the restore and the first step" in \
        report.render()


@pytest.mark.e2e
def test_a_resume_right_after_an_evaluation_is_exact():
    """A trial: at every resume point right after an evaluation, a correct run
    read NOT EQUIVALENT (the next step's recorded loss held the evaluation's
    losses, and the engine's capture saw the model in eval mode)."""
    report = resumecheck.verify(f"{PROGRAMS}:TRAINER_EVALUATES", drop="none", noise_seeds=0,
                                check_determinism=False)
    own = report.full_resume
    assert report.equivalent and own.verdict == IDENTICAL, report.render()
    assert own.diagnosis == []


@pytest.mark.e2e
def test_the_best_model_loaded_at_the_end_is_said_unchecked_and_its_lost_folder_unsaid(capfd):
    """Trial 376: with load_best_model_at_end, an equivalent report said every
    declared component matched, where the weights the job ends with (the best
    checkpoint, loaded after the last step) are not what a check compares; and
    every restart warned that the best checkpoint no longer exists (each has a
    folder of its own), about 130 times in one fuzz."""
    from resumecheck.phrases import AFTER_LAST_STEP
    from resumecheck.pytest_plugin import _summary_row

    report = resumecheck.verify(f"{PROGRAMS}:TRAINER_BEST_AT_END", drop="none", noise_seeds=0,
                                check_determinism=False)
    assert report.equivalent, report.render()
    [line] = [w for w in report.not_checked if w.startswith(AFTER_LAST_STEP)]
    assert "load_best_model_at_end=True" in line and "are not compared" in line
    row = _summary_row({"nodeid": "t.py::t", "target": "t", "report": report.to_json()})
    assert f"not checked: {AFTER_LAST_STEP} (load_best_model_at_end=True)" in row, row
    assert "does not exist anymore" not in "".join(capfd.readouterr())
    # (a Trainer that does not load its best model has no such line)
    plain = resumecheck.verify(f"{PROGRAMS}:TRAINER_EVALUATES", drop="none", noise_seeds=0,
                               check_determinism=False)
    assert not any(w.startswith(AFTER_LAST_STEP) for w in plain.not_checked)


def test_the_trainers_epochs_are_declared_where_it_makes_its_own_loader():
    """A trial: fuzz said a Trainer target declares no epoch boundaries, where
    the Trainer counts 5 optimizer steps an epoch (40 sequences in batches of
    8; 10 batches of 4 with 2 accumulated)."""
    from transformers import Trainer

    for name in ("TRAINER_DEFAULT", "TRAINER_EVALUATES"):
        target = load_target(spec(name))
        built = target.build(dict(target.run_config))
        try:
            assert built.boundaries()["steps_per_epoch"] == 5, name
        finally:
            built.program.close()

    class OwnLoader(Trainer):
        def get_train_dataloader(self):  # (its own loader: its length is not the Trainer's)
            return super().get_train_dataloader()

    target = load_target(spec("TRAINER_DEFAULT"))
    built = target.build(dict(target.run_config))
    try:
        built.program.trainer.__class__ = OwnLoader
        assert built.program.steps_per_epoch is None
    finally:
        built.program.close()
    # (a trial's subclass made its own bucketing loader, and it could not say where its
    # epochs end: trainer_target takes them)
    from resumecheck.frameworks import trainer_target
    from tests.frameworks_loop_programs import transformers_train

    declared = trainer_target(transformers_train().make_trainer, args=transformers_train().ARGS,
                              steps=8, steps_per_epoch=4)
    built = declared.build(dict(declared.run_config))
    try:
        built.program.trainer.__class__ = OwnLoader
        assert built.boundaries()["steps_per_epoch"] == 4
    finally:
        built.program.close()
    from resumecheck.errors import InvalidArgument

    with pytest.raises(InvalidArgument, match="steps_per_epoch"):
        trainer_target(transformers_train().make_trainer, steps_per_epoch=0)


def test_the_own_resume_says_the_resume_that_ran_is_the_checks():
    """A trial's script picked the wrong checkpoint when relaunched (sorted by
    name); its row, 'own save/load', read 'resumes bit for bit'."""
    from tests.framework_tables import measured

    run = measured("transformers_check.py:DEFAULT")
    assert run.explanation.endswith(
        "; the resume that ran is the check's, through the HuggingFace Trainer's own resume "
        "from the checkpoint its save wrote: your script's own resume code (which checkpoint "
        "it picks, the arguments it builds for the relaunch) did not run, and is not checked "
        "here")


@pytest.mark.e2e
def test_a_field_of_a_trainer_subclass_is_named_as_not_compared():
    """A trial's Trainer subclass counted its batches: caught, and nothing
    named the counter ('a counter in your module' pointed elsewhere)."""
    report = resumecheck.verify(f"{PROGRAMS}:TRAINER_SUBCLASS_COUNTER", drop="none",
                                noise_seeds=0, check_determinism=False)
    assert not report.equivalent
    (seen,) = report.undeclared
    assert seen.startswith("trainer.seen (int: 0 at the build, ")
    # (trial 417: a subclass that saves it beside the Trainer's files in its own)
    assert "a field your Trainer subclass sets, which the Trainer's checkpoint does not hold " \
        "unless your code saves it there: " in seen
    # (trial 673: its own _save_checkpoint() wrote it, its load read a renamed key, and the
    # line sent it to a callback)
    assert "where your subclass's own _save_checkpoint() writes it, check that its " \
        "_load_from_checkpoint() sets it back from what was written; else derive it from " \
        "state.global_step, or keep it in a callback" in seen, seen
    # (trial 849: its subclass held the callback it counted in, which the restore replaced)
    assert "must find the new one in trainer.callback_handler.callbacks, as must your " \
        "subclass)" in seen, seen


@pytest.mark.e2e
def test_more_steps_than_the_target_has_is_not_called_the_programs_fault():
    """A trial's --steps 24 on a 12-step trainer_target was told to fix its
    program so that it trains without a restart."""
    with pytest.raises(resumecheck.ReferenceFailed) as info:
        resumecheck.verify(f"{PROGRAMS}:TRAINER_SUBCLASS_COUNTER", steps=8, resume_at=[4],
                           drop="none", noise_seeds=0, check_determinism=False)
    text = str(info.value)
    assert "at least as many steps as the check runs" in text
    assert "Fix the program" not in text


def test_a_resume_told_to_ignore_the_data_skip_says_so_first():
    """A trial: the `ignore_data_skip=True` row opened with state no component
    declares, then a stream the new iterator drew; the setting that made the
    resume read its epoch again was named nowhere."""
    from tests.framework_tables import measured

    run = measured("transformers_check.py:IGNORE_DATA_SKIP")  # the README table's run
    assert run.explanation.startswith(
        "data (the model's inputs) differs from step 8; the resume was told "
        "`ignore_data_skip=True`: it does not skip the batches the run had already read in its "
        "epoch"), run.explanation
    assert "a sampler's epoch that set_epoch sets" not in run.explanation
    # (trial 139: the inputs a step called the model with, matched with another step's,
    # are placed in their epoch as samples are)
    assert "they are what the uninterrupted run called it with at step 6 (2 steps earlier), " \
        "the first of its epoch: the restart reads the epoch again from its start" \
        in run.explanation, run.explanation
    default = measured("transformers_check.py:DEFAULT")
    assert "ignore_data_skip" not in default.explanation


def test_the_warning_of_a_resume_told_to_ignore_the_data_skip_opens_with_the_setting():
    """Trial 142: the WARNING opened with a stream the new iterator drew and
    advice on making iterators, which a Trainer user cannot act on."""
    report = resumecheck.verify(str(EXAMPLES / "transformers_check.py") + ":IGNORE_DATA_SKIP",
                                drop="none", noise_seeds=0, check_determinism=False)
    notice = report.incomplete_state_notice() or ""
    assert notice.startswith(
        "the resume was told `ignore_data_skip=True`: it does not skip the batches the run had "
        "already read in its epoch and reads that epoch again from its start, in your own "
        "resume and in the engine's"), notice
    # (trial 143: the stream the new iterator drew, put after it, read as a second cause)
    assert "draws from a random stream" not in notice and "Besides" not in notice, notice
    # (trial 443: the cause here first, before the general ones)
    assert all("started level): here, the epoch read again from its start, as "
               "`ignore_data_skip=True` asks (see the why); in general, " in o.detail
               for o in report.full_resume.stream_offsets), report.full_resume.stream_offsets


def test_a_steps_loss_is_the_loss_the_trainer_logs_at_two_micro_batches(tmp_path):
    """Trial 142: at gradient_accumulation_steps=2 every loss the check printed
    (the reference's, each max |Δloss|) was half the loss the Trainer logs:
    it took the micro-batches' mean where the Trainer sums them."""
    from transformers import TrainingArguments, set_seed

    import transformers_train
    from tests.frameworks_loop_programs import _ACCUMULATES

    set_seed(0)  # (as the check builds it: the model's initial weights)
    args = TrainingArguments(output_dir=str(tmp_path), max_steps=6, seed=0, report_to=[],
                             save_strategy="no", use_cpu=True, **_ACCUMULATES)
    trainer = transformers_train.make_trainer(args)
    trainer.train()
    logged = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
    report = resumecheck.verify(spec("TRAINER_ACCUMULATES"), drop="none", noise_seeds=0,
                                check_determinism=False)
    assert len(logged) == 6 and report.reference_loss == pytest.approx(logged, rel=1e-6), \
        (report.reference_loss, logged)


def test_baseline_says_its_gradient_checks_are_not_for_a_framework_target():
    """Trial 142: each skipped gradient check told the Trainer user what "the
    program must offer" (tiny_batch, batch_loss), which trainer_target cannot."""
    from resumecheck.baseline import check_baseline

    report = check_baseline(str(EXAMPLES / "transformers_check.py") + ":DEFAULT", steps=3)
    skipped = [c for c in report.checks if c.status == "skipped"]
    assert skipped and all(c.detail.startswith(
        "not run for a target trained with the HuggingFace Trainer: these checks call the "
        "program's tiny_batch(size) and batch_loss(model, batch), which a framework target "
        "does not offer") for c in skipped), report.render()
    assert "must offer" not in report.render()
    # (trial 221: the adapter's seed was credited to a script that built its model unseeded)
    [seeding] = [c for c in report.checks if c.name == "seeding"]
    assert seeding.status == "passed" and seeding.detail.endswith(
        "identical: the adapter (transformers.set_seed(seed) before it calls your "
        "make_trainer) seeds them, so this says nothing of your script's own seeding: a script "
        "that builds its model or draws before its framework seeds must seed first itself"), \
        seeding.detail


@pytest.mark.e2e
def test_state_a_plain_callback_loses_is_said_of_the_trainers_resume_not_your_save_load():
    """Trial 142: a Trainer target's not-compared line said "your own resume
    (save/load)", where the user wrote neither; the test still warns of it."""
    from resumecheck.assertions import require_equivalent
    from resumecheck.errors import LostStateWarning
    from resumecheck.phrases import lost_uncompared

    report = resumecheck.verify(f"{PROGRAMS}:TRAINER_PLAIN_COUNTER", drop="none",
                                noise_seeds=0, check_determinism=False)
    [line] = [u for u in report.undeclared if u.startswith("callbacks (CountsSteps).count ")]
    assert "; your own resume (through the HuggingFace Trainer's restore) ends with it " \
        "otherwise than the uninterrupted run did" in line, line
    assert "save/load" not in line
    # (trial 400 followed the ExportableState advice, and its Trainer restored nothing)
    assert "only with restore_callback_states_from_checkpoint=True" in line, line
    # (trial 477: its collator read the callback it was built with; the restore made a new one)
    assert "code that holds the old object, a collator that reads it, must find the new one in " \
        "trainer.callback_handler.callbacks" in line, line
    assert "state.epoch or state.global_step" in line, line
    # (trial 843: the ExportableState advice, given first, failed its resume: the Trainer makes
    # the callback anew from state()'s args, and its callback was made with a dataset)
    assert line.index("state.epoch or state.global_step") < line.index("ExportableState"), line
    assert "made with the keyword arguments among its state()'s `args` (saved as JSON: a " \
        "callback made with a dataset or a model cannot be made so)" in line, line
    assert "Lightning" not in line, line  # (trial 480: the other framework's advice too)
    assert lost_uncompared(report.undeclared) == ["callbacks (CountsSteps).count"]
    with pytest.warns(LostStateWarning) as warned:
        require_equivalent(report)
    # (trial 507: the warning told a Trainer target to declare a component, which it cannot)
    said = str(warned[0].message)
    assert "declare it as a component" not in said and "Target(" not in said, said
    assert "say so, the target's not_state=...): every step after the restart matched all " \
        f"the same: {CHANGED_NO_STEP}; the report's `not compared` line says how to keep it " \
        "in the checkpoint the framework writes; the whole report: " in said, said
    # (trial 282: the line's advice, Target(not_state=...), was no argument of trainer_target)
    quiet = resumecheck.verify(f"{PROGRAMS}:TRAINER_COUNTER_NOT_STATE", drop="none",
                               noise_seeds=0, check_determinism=False)
    assert quiet.equivalent and quiet.undeclared == []


@pytest.mark.e2e
def test_a_collator_drawing_from_torchs_stream_is_told_the_trainer_fetches_before_it_restores():
    """Trial 142: the Trainer fetches (and collates) a resumed step's batches
    before it restores rng_state.pth, so a collator masking with torch's
    global stream departs at the first step after a mid-epoch resume; the
    report spoke of samplers, iterators and counters instead."""
    report = resumecheck.verify(f"{PROGRAMS}:TRAINER_COLLATOR_GLOBAL", drop="none",
                                noise_seeds=0, check_determinism=False)
    own = report.full_resume
    assert (own.verdict, own.first_divergent_step) == (DIVERGED, 4), own.explanation
    assert own.explanation.startswith(
        "data (the model's inputs) differs from step 4; its batches were fetched before its "
        "random streams were restored: your data collator (or dataset) draws from torch's "
        "global stream as a step's batches are fetched, and the HuggingFace Trainer's restore "
        "puts that stream back only after it fetched step 4's"), own.explanation
    assert "a sampler's epoch that set_epoch sets" not in own.explanation
    # (trial 400 followed "a generator your checkpoint keeps": saved a batch ahead)
    assert "(draw from a generator seeded again from the batch itself, the epoch and the " \
        "sample's index: one your checkpoint keeps is saved after the loader collated the " \
        "next batch, a batch ahead)" in own.explanation, own.explanation
    notice = report.incomplete_state_notice() or ""
    assert notice.startswith("the first resumed step's batches were fetched before its random "
                             "streams were restored"), notice
    assert "do not capture the program's state" not in notice, notice  # (trial 143)
    # (trial 304: the plugin's row read "declared state incomplete" beside that WARNING)
    from resumecheck.pytest_plugin import _summary_row

    row = _summary_row({"nodeid": "t", "target": "x", "report": report.to_json()})
    assert "engine resume: DIVERGED (its batches were fetched before its random streams were " \
        "restored)" in row, row
    assert own.stream_offsets and all(
        "): here, the batches fetched before the restore drew from it (see the why); in "
        "general, " in o.detail for o in own.stream_offsets), own.stream_offsets
    # at an epoch's start the Trainer restores the streams before it fetches: it resumes
    at_epoch_start = resumecheck.verify(f"{PROGRAMS}:TRAINER_COLLATOR_GLOBAL", resume_at=(5,),
                                        drop="none", noise_seeds=0, check_determinism=False)
    assert at_epoch_start.equivalent, at_epoch_start.render()
    # (trial 304: such a pass said nothing of the collator's draws a restart inside skips)
    [inside] = [n for n in at_epoch_start.not_checked if "restart inside an epoch" in n]
    assert inside.endswith("; there the framework fetches a step's batches before it restores "
                           "the streams, and your data collator (or dataset) draws from torch's "
                           "global stream as they are fetched"), inside
    # the example's collator draws nothing: nothing is said of it
    default = resumecheck.verify(f"{PROGRAMS}:TRAINER_DEFAULT", drop="none", noise_seeds=0,
                                 check_determinism=False)
    assert "fetched before" not in default.render()
    # (trial 292: an endless IterableDataset, no epochs known, was told of samplers)
    endless = resumecheck.verify(f"{PROGRAMS}:TRAINER_ENDLESS_GLOBAL", drop="none",
                                 noise_seeds=0, check_determinism=False).full_resume
    assert endless.explanation.startswith(
        "data (the model's inputs) differs from step 4; its batches were fetched before its "
        "random streams were restored"), endless.explanation


@pytest.mark.e2e
def test_a_length_grouped_sampler_is_told_to_draw_its_order_before_the_restore():
    """Trial 229: group_by_length's sampler shuffles from torch's global stream
    as the Trainer makes an epoch's iterator, before a resume inside an epoch
    restores that stream; the report blamed the collator's generator, which the
    other samples had moved, and the WARNING guessed the reverse order."""
    from resumecheck.phrases import ORDER_BEFORE_RESTORE

    report = resumecheck.verify(f"{PROGRAMS}:TRAINER_GROUP_BY_LENGTH", drop="none",
                                noise_seeds=0, check_determinism=False)
    own = report.full_resume
    assert (own.verdict, own.first_divergent_step) == (DIVERGED, 8), own.explanation
    assert own.explanation.startswith(
        f"data (the model's inputs) differs from step 8; {ORDER_BEFORE_RESTORE}: the Trainer's "
        "LengthGroupedSampler (group_by_length) shuffles from torch's global stream as an "
        "epoch's iterator is made"), own.explanation
    notice = report.incomplete_state_notice() or ""
    assert notice.startswith("the resumed epoch's order was drawn before the random streams "
                             "were restored"), notice
    assert "a DataLoader iterator created after the load" not in notice
    # in the first epoch, the stream it shuffles from is the fresh launch's in both runs
    first = resumecheck.verify(f"{PROGRAMS}:TRAINER_GROUP_BY_LENGTH", resume_at=(3,),
                               drop="none", noise_seeds=0, check_determinism=False)
    assert first.equivalent
    # (trial 683: that pass's line on a later epoch read as a general hint)
    [later] = [line for line in first.not_checked if "inside an epoch after the first" in line]
    assert later.endswith("; there the Trainer's LengthGroupedSampler (group_by_length) draws "
                          "each epoch's order from torch's global stream before the framework's "
                          "restore brings that stream back, so a resume there reads other "
                          "samples"), later


def test_a_function_that_builds_a_trainer_given_as_the_target_is_told_of_trainer_target(
        tmp_path):
    """Trial 210 pointed `resumecheck run` at its own `make_trainer(args)`: the
    error said what a factory is, and not that trainer_target is the way for
    a Trainer; nor where the factory returns one."""

    script = tmp_path / "train.py"
    script.write_text(
        "import transformers\n\n\n"
        "def make_trainer(args):\n"
        "    return args.seed\n\n\n"
        "def built(settings):\n"
        "    return transformers.Trainer.__new__(transformers.Trainer)\n")
    for name, said in [("make_trainer", "the factory raised AttributeError"),
                       ("built", "the factory returned a Trainer, not a program")]:
        with pytest.raises(TargetError) as info:
            load_target(f"{script}:{name}").build({})
        assert said in str(info.value), str(info.value)
        assert str(info.value).endswith(
            "If it builds a HuggingFace Trainer, give resumecheck.frameworks.trainer_target(...) "
            "as the target (docs/FRAMEWORKS.md, 'Training with Lightning or the HuggingFace "
            "Trainer')"), \
            str(info.value)


@pytest.mark.e2e
def test_a_fuzz_pass_says_the_resume_that_ran_is_the_checks():
    """Trial 260: `run` says in its row that the resume that ran is the
    Trainer's, not the script's; a pass of fuzz, which prints no row, said
    nothing of it."""
    from resumecheck.fuzz import fuzz

    result = fuzz(f"{PROGRAMS}:TRAINER_DEFAULT", max_examples=2)
    assert not result.found
    assert ("not checked: the resume that ran is the check's, through the HuggingFace "
            "Trainer's own resume") in result.render(), result.render()


def test_a_streaming_dataset_with_no_length_is_said_to_leave_the_trainer_blind_to_epochs():
    """Trial 363: past its first epoch, a Trainer's resume over a streaming
    dataset read another epoch's batches (it skips batches counted from the
    first epoch's start), and the report blamed the dataset's epoch counter,
    which the Trainer sets itself."""
    from resumecheck.phrases import SKIPS_BLIND

    report = resumecheck.verify(spec("TRAINER_STREAMING"), drop="none", noise_seeds=0,
                                check_determinism=False)
    own = report.full_resume
    assert own.verdict == DIVERGED and own.first_divergent_step == 8
    assert (f"your train_dataset (Stream) has no length, so the HuggingFace Trainer "
            f"{SKIPS_BLIND}: its resume skips global_step × gradient_accumulation_steps "
            "batches from the first epoch's start") in own.explanation, own.explanation
    assert (report.incomplete_state_notice() or "").startswith(
        f"the training data has no length, so the framework {SKIPS_BLIND}")
    # (trial 547: told of attributes only a program of its own has; the target takes them)
    assert any("does not say where its epochs end (the target's steps_per_epoch=, or "
               "epoch_boundaries=[] where its data has no epochs)" in line
               for line in report.not_checked), report.not_checked


def test_a_trainer_subclass_with_its_own_sampler_is_said_to_keep_its_epochs_unread():
    """Trial 607: a subclass's own _get_train_sampler() left the epochs unread,
    and the report said the program does not say where they end."""
    report = resumecheck.verify(spec("TRAINER_OWN_SAMPLER"), drop="none", noise_seeds=0,
                                check_determinism=False)
    assert any("where its epochs end is not known (your Trainer subclass makes its own "
               "_get_train_sampler(), whose length the check does not read: making it may "
               "draw: give the target steps_per_epoch=, or epoch_boundaries=[] where its data "
               "has no epochs)" in line for line in report.not_checked), \
        report.not_checked


def test_a_trainer_target_says_its_data_has_no_epochs(tmp_path, monkeypatch):
    from resumecheck.errors import InvalidArgument

    monkeypatch.setenv(SCRATCH_ENV, str(tmp_path))
    built = load_target(spec("TRAINER_STREAMING_NO_EPOCHS")).build({"seed": 0})
    try:
        assert built.boundaries()["epoch_boundaries"] == []
    finally:
        built.program.close()
    with pytest.raises(InvalidArgument, match="epoch_boundaries"):
        resumecheck.frameworks.trainer_target(lambda args: None, epoch_boundaries=[0])


def test_right_after_a_trainers_restore_the_collators_scratch_is_taken_as_the_runs():
    """Trial 400 again: where the resumed Trainer's look right after its restore
    came before its collator made its per-batch list at all, the list was
    missing there and read as held otherwise; a generator the collator keeps
    is still looked at as the restart held it."""
    from resumecheck.engine import _held_after_restarts
    from resumecheck.report import RunResult
    from resumecheck.segments import SegmentResult

    reference = SegmentResult(
        records=[], names=[], captures={}, end_state=None,
        boundaries={"run_before_restored_look": ["data_collator"]},
        held_after={3: {"data_collator._idx": ["ref"], "data_collator.rng": ["ref-rng"]}},
        undeclared={"data_collator.rng": "data_collator.rng (a numpy Generator whose state "
                                         "the run changed, ...)"})
    engine_run = RunResult(dropped=[], resume_at=[3], verdict="diverged", first_divergent_step=4)
    after = {3: {"data_collator.rng": ["restart-rng"], "model.x": ["m"]}, 4: {}}
    kept = _held_after_restarts(engine_run, after, reference)
    assert kept[3] == {"data_collator._idx": ["ref"], "data_collator.rng": ["restart-rng"],
                       "model.x": ["m"]}, kept


@pytest.mark.e2e
def test_checkpoints_of_the_model_alone_name_the_setting_on_what_they_lose():
    """Trial 423: save_only_model=True; three confirmed findings (optimizer,
    scheduler, rng) and no word of the one setting behind them."""
    report = resumecheck.verify(spec("TRAINER_MODEL_ONLY"), drop="none", noise_seeds=0,
                                check_determinism=False)
    assert not report.equivalent
    fixes = {f.component: f.fix for f in report.full_resume.diagnosis if f.status == "confirmed"}
    assert fixes.get("optimizer", "").startswith(
        "TrainingArguments(save_only_model=True) writes the model alone into each checkpoint"), \
        report.full_resume.diagnosis
    assert "save_only_model=False keeps them" in fixes["optimizer"]
    assert "to keep it: TrainingArguments(save_only_model=True)" in report.render()


@pytest.mark.e2e
def test_a_collators_epoch_a_callback_counts_itself_is_named_where_a_resume_shows_it():
    """Trial 443: a collator's epoch, counted by a callback at each epoch's end,
    begins at 0 again after a restart. Where the uninterrupted run held it alike
    before and after the first resumed step, the restart's look right after the
    restore holds no scratch of that step: it was never named there, and the
    report said a later resume point would show it."""
    report = resumecheck.verify(spec("TRAINER_COLLATOR_EPOCH_COUNTED"), drop="none",
                                noise_seeds=0, check_determinism=False)
    assert report.runs[0].verdict == DIVERGED and report.runs[0].first_divergent_step == 8
    [line] = [u for u in report.undeclared if u.startswith("data_collator.epoch ")]
    assert "your own resume held it otherwise right after the HuggingFace Trainer's restore at " \
        "step 7, and departed from the uninterrupted run at the next step" in line, line
    # (a Trainer target has no way to declare it: what it can do instead)
    assert ("the Trainer's checkpoint holds nothing of your collator: make what it depends on a "
            "function of state the Trainer restores (for what changes by epoch, set in a "
            "callback's on_epoch_begin from int(state.epoch) (resumed inside an epoch, the "
            "Trainer restores state.epoch as a fraction") in line, line  # (trial 823: round())
    # (trial 843: "1.67" read as its run's own figure; it is an example)
    assert "as a fraction: two thirds into the second epoch 1.67, where" in line, line
    twin = resumecheck.verify(spec("TRAINER_COLLATOR_EPOCH_TOLD"), drop="none", noise_seeds=0,
                              check_determinism=False)
    assert twin.equivalent, twin.render()


@pytest.mark.e2e
def test_a_seq2seq_trainer_is_told_of_args_class_and_checks_with_it():
    """Trial 528: a ``Seq2SeqTrainer`` read ``generation_config`` of the plain
    ``TrainingArguments`` the adapter built, and the error said to fix a
    factory that was right; the adapter now takes the arguments' class."""
    with pytest.raises(TargetError) as info:
        resumecheck.verify(spec("TRAINER_SEQ2SEQ_PLAIN_ARGS"), drop="none", noise_seeds=0,
                           check_determinism=False)
    text = str(info.value)
    assert "generation_config" in text
    assert "args_class=transformers.Seq2SeqTrainingArguments" in text
    assert "Fix the factory" not in text
    report = resumecheck.verify(spec("TRAINER_SEQ2SEQ"), drop="none", noise_seeds=0,
                                check_determinism=False)
    assert report.equivalent, report.render()


@pytest.mark.e2e
def test_epochs_the_adapter_reads_are_not_said_to_be_the_programs_steps_per_epoch():
    """Trial 563: "by its steps_per_epoch" of a Trainer target that declared
    none: the adapter read them from the dataset and the batch settings."""
    report = resumecheck.verify(spec("TRAINER_DEFAULT"), drop="none", noise_seeds=0,
                                check_determinism=False)
    [ends] = [w for w in report.not_checked if w.startswith("a restart where an epoch ends")]
    assert "by the steps per epoch the framework's data and batch settings give" in ends, ends
    assert "by its steps_per_epoch" not in ends
    # (trial 880: given steps_per_epoch, the target was said to read them from the framework)
    given = resumecheck.verify(spec("TRAINER_GIVEN_EPOCHS"), drop="none", noise_seeds=0,
                               check_determinism=False)
    [ends] = [w for w in given.not_checked if w.startswith("a restart where an epoch ends")]
    assert "by its steps_per_epoch" in ends and "the framework's data" not in ends, ends


@pytest.mark.e2e
def test_a_scheduler_of_your_own_that_leaves_its_count_out_is_named():
    """Trial 655: a scheduler of the user's own class, given in optimizers=,
    whose state_dict() left out its step count; nothing named it, and the
    WARNING spoke of undeclared state and settings."""
    report = resumecheck.verify(spec("TRAINER_OWN_SCHEDULER"), drop="none", noise_seeds=0,
                                check_determinism=False)
    assert not report.equivalent
    [count] = [line for line in report.undeclared if ".step_count" in line]
    assert count.startswith("lr_scheduler (OwnWarmup).step_count (int: 0 at the build, 6 at "
                            "the end, changed during the run; held by no declared component: a "
                            "field of your scheduler that its state_dict() leaves out, which "
                            "the Trainer's checkpoint saves and restores: return it there and "
                            "set it in its load_state_dict())"), count
    kept = resumecheck.verify(spec("TRAINER_OWN_SCHEDULER_KEPT"), drop="none", noise_seeds=0,
                              check_determinism=False)
    assert kept.equivalent and not kept.undeclared, kept.render()
    # (trial 887: a subclass of torch's LRScheduler, whose own fields were never read, only
    # a torch scheduler's counts)
    report = resumecheck.verify(spec("TRAINER_OWN_LR_SCHEDULER"), drop="none", noise_seeds=0,
                                check_determinism=False)
    [cycle] = [line for line in report.undeclared if ".cycle" in line]
    assert cycle.startswith("lr_scheduler (HalvingRestarts).cycle (int: 0 at the build"), cycle
    assert "a field of your scheduler that its state_dict() leaves out" in cycle, cycle


@pytest.mark.e2e
def test_a_callbacks_epoch_begin_after_an_epoch_end_resume_is_no_latent_gap():
    """Trial 759: a correct curriculum callback that raises its level in
    ``on_epoch_begin`` read a latent gap at an epoch's end (``--strict``
    failed): the Trainer's resume runs that hook before its first step, and
    the look right after the restore came after it, where the uninterrupted
    run's checkpoint came before. Its twin that leaves the level out of its
    state departs inside an epoch, and the level is named as what no
    component holds."""
    report = resumecheck.verify(f"{PROGRAMS}:TRAINER_EPOCH_LEVEL", drop="none",
                                noise_seeds=0, check_determinism=False)
    own, engine = report.runs
    assert (own.verdict, engine.verdict) == (IDENTICAL, IDENTICAL), report.render()
    assert own.latent_gaps == [] and engine.latent_gaps == [], report.render()

    buggy = resumecheck.verify(f"{PROGRAMS}:TRAINER_EPOCH_LEVEL_LOST", drop="none",
                               noise_seeds=0, check_determinism=False)
    assert buggy.runs[0].verdict == DIVERGED, buggy.render()
    named = [u.split(" ", 2)[:2] for u in buggy.undeclared]
    assert named == [["callbacks", "(RaisesLevel).level"]], buggy.undeclared


def test_a_trainer_subclass_that_overrides_the_save_or_restore_is_said_to_have_run():
    """Trial 769: a Trainer subclass whose _load_optimizer_and_scheduler() left
    the scheduler out (the bug) read, in the own resume's row, "your script's
    own resume code ... did not run, and is not checked here"."""
    from transformers import Trainer

    from resumecheck.frameworks.transformers import _own_checkpoint_code

    class Own(Trainer):
        def _save_optimizer_and_scheduler(self, output_dir):
            return super()._save_optimizer_and_scheduler(output_dir)

        def _load_optimizer_and_scheduler(self, checkpoint):
            return super()._load_optimizer_and_scheduler(checkpoint)

    said = _own_checkpoint_code(Own.__new__(Own), Trainer)
    assert said == ("; your Trainer subclass's own _save_optimizer_and_scheduler(), "
                    "_load_optimizer_and_scheduler(), which the Trainer's save and resume call, "
                    "did run, and are checked"), said
    assert _own_checkpoint_code(Trainer.__new__(Trainer), Trainer) == ""


def test_save_only_model_beside_a_subclass_that_saves_the_rest_is_told_to_check_its_code():
    """Trial 802: save_only_model=True, and a Trainer subclass that saved and
    loaded the optimizer, scheduler and streams itself, but lost the scheduler,
    was told "save_only_model=False keeps them", which changed nothing."""
    from types import SimpleNamespace

    from transformers import Trainer

    from resumecheck.components import SCHEDULER
    from resumecheck.frameworks.transformers import _advice

    class Own(Trainer):
        def _load_optimizer_and_scheduler(self, checkpoint):
            return super()._load_optimizer_and_scheduler(checkpoint)

    def trainer(cls):
        made = cls.__new__(cls)
        made.args = SimpleNamespace(save_only_model=True,
                                    restore_callback_states_from_checkpoint=True)
        made.callback_handler = SimpleNamespace(callbacks=[])
        return made

    own = _advice(trainer(Own), None)[SCHEDULER]
    assert ("your Trainer subclass's own _load_optimizer_and_scheduler() save and restore the "
            "rest: check that they keep it") in own, own
    assert "save_only_model=False keeps them" not in own
    assert "save_only_model=False keeps them" in _advice(trainer(Trainer), None)[SCHEDULER]
