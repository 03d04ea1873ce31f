"""State the program keeps that no declared component holds is named, not
silently left out of "every component's state match"
(fixtures/trust/undeclared_ema.py; resumecheck/undeclared.py)."""

from __future__ import annotations

import pytest
import torch

from resumecheck import StepOutput, Target, verify
from resumecheck.assertions import describe_failure
from resumecheck.phrases import READ_BY_NO_STEP, lost_uncompared
from resumecheck.report import DIVERGED, IDENTICAL, OWN_EQUIVALENT

SPEC = "fixtures.trust.undeclared_ema:"
FAST = {"noise_seeds": 0, "drop": "none", "check_determinism": False}


def test_an_undeclared_ema_that_training_changes_is_named_as_not_compared():
    report = verify(SPEC + "UNDECLARED", **FAST)
    assert report.full_resume.verdict == IDENTICAL  # (nothing compared differs: true)
    assert len(report.undeclared) == 1, report.undeclared
    assert report.undeclared[0].startswith("ema (Sequential: 4 tensors, 49 values, that "
                                           "the run changed and no declared component holds")
    text = report.render()
    assert "not compared: ema (Sequential" in text
    assert "every declared component's state match" in text
    # data, the last batch (a trial saw it named) and a frozen copy: not state
    assert "teacher" not in text and "'x'" not in text and "last" not in text
    assert "**Not compared:** ema (Sequential" in report.render("markdown")
    assert report.to_json()["undeclared"] == report.undeclared
    # a trial: a failing test's message left it out, though it names the cause
    assert "\n  not compared: ema (Sequential" in describe_failure(report)


def test_declared_the_lost_ema_is_a_state_difference_and_nothing_is_left_out():
    report = verify(SPEC + "DECLARED", **FAST)
    own = report.full_resume
    assert report.undeclared == []
    # (a declared module is traced every step: its parameters differ from the first)
    assert own.verdict == DIVERGED and own.first_divergent_step == 5, own.explanation
    assert own.first_divergent_quantity.startswith("parameter ema."), own.explanation
    assert [f.component for f in own.diagnosis] == ["ema"]


def test_state_in_plain_objects_is_found_one_entry_per_holder():
    """An EMA kept as a dict of tensors in a plain object, in the program's
    ``types.SimpleNamespace`` (the shape of the README's own char-LM example),
    is found, named once for its dict (a trial: not named at all)."""
    report = verify(SPEC + "NAMESPACE", **FAST)
    assert report.equivalent
    # (its counter too: equal to the step, which an Attr declares, but not it)
    assert [u.split(" (")[0] for u in report.undeclared] == ["ema", "state.updates",
                                                             "state.ema.shadow"]
    assert report.undeclared[2].startswith("state.ema.shadow (dict: 4 tensors, 49 values")
    assert report.undeclared[1].startswith("state.updates (int: 0 at the build, 8 at the end")


def test_a_memory_bank_handed_to_the_model_is_state_and_the_last_batch_is_not():
    """Tensors where the last step's samples or the model's inputs live are the
    last batch (data), unless their storage was there at the build: a bank the
    program changes in place and hands the model every step is state."""
    report = verify(SPEC + "MEMORY_BANK", **FAST)
    assert [u.split(" (")[0] for u in report.undeclared] == ["bank"], report.undeclared


def test_a_generator_a_declared_model_keeps_is_named_when_nothing_holds_it():
    # (a trial: a Trainer model's own noise generator, forgotten by the
    # checkpoint: caught, but nothing named what was lost)
    from fixtures.trust import model_generator

    report = verify(model_generator.BUGGY, drop="none", noise_seeds=0)
    assert not report.equivalent
    assert report.undeclared == [
        "params.0.generator (a torch.Generator whose state the run changed, drawn from or "
        "seeded again, and no declared component holds: register it, "
        "RNGState({'name': generator}) (among the generators of the RNGState you declare, or "
        "beside it with streams=(): another holds the global streams too), to check that it "
        "resumes); your own resume held it "
        "otherwise right after your load() at step 3, and departed from the uninterrupted run "
        "at the next step: your checkpoint may lose it, unless the step sets it anew before "
        "reading it (a value each step overwrites, not one it updates from what it held, as a "
        "running average or a count) (or it is not state, a log, a timer: name it in "
        "Target(not_state=...))"]
    twin = verify(model_generator.CORRECT, drop="none", noise_seeds=0)
    assert twin.equivalent and twin.undeclared == []


class _Holder:
    """A user's callback or the objects a step function keeps: an EMA's shadow."""

    def __init__(self) -> None:
        import torch

        self.shadow = {"w": torch.zeros(3)}


def test_state_of_an_adapters_user_code_is_named_with_what_to_do():
    """A trial: an EMA kept in a Lightning or Trainer callback, or in an
    Accelerate step function's closure, was lost by the checkpoint and the
    check said EQUIVALENT with no 'not compared' line (the walk does not go
    into a framework's objects or into an adapter's)."""
    import torch

    from resumecheck.components import Component
    from resumecheck.undeclared import UndeclaredWatch

    model = torch.nn.Linear(3, 1)
    callback, kept = _Holder(), _Holder()

    class Adapter:  # an adapter of this package: its own fields are not walked
        def __init__(self) -> None:
            self.model, self.trainer = model, object()

        def undeclared_roots(self):
            return [("callbacks (EMACallback)", callback), ("step.extras", {"ema": kept})]

    Adapter.__module__ = "resumecheck.frameworks.example"
    program = Adapter()
    components = [Component.of("params", model)]
    watch = UndeclaredWatch(program, components)
    callback.shadow["w"] += 1
    kept.shadow["w"] += 1
    found = list(watch.found(program, components).values())
    assert len(found) == 2, found
    assert found[0].startswith("callbacks (EMACallback).shadow (dict: 1 tensor, 3 values")
    assert "make the callback save and restore it with the checkpoint" in found[0]
    assert found[1].startswith("step.extras['ema'].shadow (dict: 1 tensor, 3 values")
    assert found[1].endswith("declare it as a component to check that it resumes)")


NUMBERS = "fixtures.trust.undeclared_numbers:"


def test_early_stoppings_numbers_that_a_restart_loses_are_named():
    """A best loss, a patience counter and a count of evaluations, plain Python
    numbers that training changes: forgotten by the checkpoint, nothing
    compared differs, so the report names them (a trial's early-stopping
    state went unnamed: only tensors were looked for)."""
    report = verify(NUMBERS + "WORSENS", **FAST)
    assert report.full_resume.verdict == IDENTICAL
    named = {u.split(" (")[0]: u for u in report.undeclared}
    assert list(named) == ["best_loss", "bad_evals", "history"], report.undeclared
    assert named["best_loss"].startswith("best_loss (float: inf at the build, 0.5")
    assert "at the end, changed during the run; held by no declared component: declare it" \
        in named["best_loss"]
    assert named["history"].startswith("history (dict: 1 number, that the run changed")
    assert "not compared: best_loss (float: inf at the build" in report.render()


@pytest.mark.parametrize("isolation", ["inprocess",
                                       pytest.param("process", marks=pytest.mark.process)])
def test_what_a_restart_brings_back_is_not_named(isolation):
    """Named is what a restart that restores every declared component (the
    engine's own full resume) does not bring back: an epoch the program sets
    from the declared step is brought back (a trial: a sampler's epoch, set
    from the declared one, was named); the count of evaluations is not (nor
    is a learning rate that never changes named: not state). Nor is a best
    loss that later evaluations find again by the end: after the restart's
    first step it held another than the uninterrupted run did there (a trial
    called it ROUGH that such a loss went unnamed, as it did when only the
    end was compared)."""
    report = verify(NUMBERS + "FORGETS", **FAST, isolation=isolation)
    assert [u.split(" (")[0] for u in report.undeclared] == ["best_loss", "history"], \
        report.undeclared


def test_numbers_declared_or_read_by_a_component_are_not_named():
    declared = verify(NUMBERS + "DECLARED", **FAST)
    assert "best_loss" not in " ".join(declared.undeclared)
    assert [(f.component, f.status) for f in declared.full_resume.diagnosis] == \
        [("best", "latent")]
    # (a save right after the load was tried: alike here, which does not clear it)
    assert "or a wrong value this run's steps happen to set right" in \
        declared.full_resume.diagnosis[0].detail
    # the program's own component reads them from the trainer: compared, by value
    assert verify(NUMBERS + "HELD", **FAST).undeclared == []


def test_a_counter_a_declared_model_keeps_outside_its_state_dict_is_named():
    report = verify(NUMBERS + "IN_THE_MODEL", **FAST)
    assert report.undeclared == [
        "params.calls (int: 0 at the build, 8 at the end, changed during the run; an attribute "
        "of a declared module, which its state_dict() leaves out: keep it in a buffer "
        "(register_buffer), or declare it as a component of its own (Attr(the module, its "
        "name)), to check that it resumes); "
        "your own resume (save/load) ends with it otherwise than the uninterrupted run did: "
        "your checkpoint loses it, unless it is not state (a log, a timer: name it in "
        "Target(not_state=...))" + READ_BY_NO_STEP]


def test_an_undeclared_ema_the_checkpoint_loses_is_said_to_end_otherwise_in_the_own_resume():
    """A trial: an EMA the checkpoint lost passed as EQUIVALENT (exit 0), its
    `not compared` line the same as its correct twin's, and the pytest
    summary said `full resume: ok`. The program's own resume is digested at
    its end: the EMA ends there otherwise than in the uninterrupted run."""
    report = verify(SPEC + "UNDECLARED", **FAST)
    assert report.equivalent  # (what is compared resumes: still true)
    [line] = report.undeclared
    assert line.endswith("; your own resume (save/load) ends with it otherwise than the "
                         "uninterrupted run did: your checkpoint loses it, unless it is not "
                         "state (a log, a timer: name it in Target(not_state=...))"
                         + READ_BY_NO_STEP)
    # (trials 735, 744: a log named with advice on how to save it, its steps alike)
    assert READ_BY_NO_STEP.startswith("; every step after the restart matched all the same: "
                                       "what differs in it changed no step here")
    assert lost_uncompared(report.undeclared) == ["ema"]
    headline = report.render().splitlines()[1]
    assert headline == ("full resume: EQUIVALENT in what is compared; not compared, and your "
                        "own resume ends otherwise with: `ema` (see below)")
    assert "ends otherwise with: `ema`" in report.render("markdown").splitlines()[0]
    # (trial 162: a CI job had to search the prose of `undeclared` for it)
    assert report.to_json()["ends_otherwise_uncompared"] == ["ema"]
    # (trial 161: the own resume's row read "resumes bit for bit" and no more)
    assert report.full_resume.explanation.endswith(
        "every declared component's state match; not compared, and it ends otherwise with: "
        "`ema` (see `not compared`)")


def test_the_line_that_says_where_the_report_went_keeps_what_the_verdict_covers(tmp_path,
                                                                                capsys):
    """Trial 159: `--output` printed "full resume: EQUIVALENT; report written to
    ..." where the report read "EQUIVALENT in what is compared; not compared,
    and your own resume ends otherwise with ..."."""
    from resumecheck.cli import main

    out = tmp_path / "r.txt"
    assert main(["run", SPEC + "UNDECLARED", "--drop", "none", "--noise-seeds", "0",
                 "--output", str(out)]) == 0
    assert capsys.readouterr().out == (
        "resumecheck run: full resume: EQUIVALENT in what is compared; not compared, and your "
        f"own resume ends otherwise with: `ema`; report written to {out}\n")


def test_asserting_such_a_resume_passes_and_warns_naming_what_it_ends_without():
    """A trial: the test passed with no warning where the command's report said
    the checkpoint loses state (only the plugin's summary row said so)."""
    from resumecheck.assertions import assert_resume_equivalent
    from resumecheck.errors import LostStateWarning

    with pytest.warns(LostStateWarning, match="your own resume ends otherwise than the "
                      "uninterrupted run with ema, which no declared component's state "
                      "holds") as caught:
        assert_resume_equivalent(SPEC + "UNDECLARED", **FAST)
    assert caught[0].filename == __file__  # (at the test's line)
    assert caught[0].message.paths == ["ema"]


def test_an_undeclared_ema_the_checkpoint_keeps_is_said_to_end_as_the_uninterrupted_run():
    report = verify(SPEC + "SAVES_IT", **FAST)
    assert report.equivalent and lost_uncompared(report.undeclared) == []
    [line] = report.undeclared
    assert line.endswith("; your own resume ends with it as the uninterrupted run did")
    assert report.render().splitlines()[1] == "full resume: EQUIVALENT"


def test_a_list_the_checkpoint_keeps_that_ends_otherwise_from_a_lost_ema_is_not_said_lost():
    """A trial: evaluations of an undeclared EMA, saved and loaded, ended
    otherwise because the EMA was lost, and were said lost by the checkpoint
    that kept them. Right after the load they were the uninterrupted run's."""
    report = verify(SPEC + "EMA_EVALS", **FAST)
    lines = {line.split(" (")[0]: line for line in report.undeclared}
    assert set(lines) == {"ema", "evals"}, report.undeclared
    assert lines["ema"].endswith("your checkpoint loses it, unless it is not state (a log, "
                                 "a timer: name it in Target(not_state=...))" + READ_BY_NO_STEP)
    assert lines["evals"].endswith(
        "; your own resume (save/load) ends with it otherwise than the uninterrupted run did, "
        "though it held it as that run did right after your load() at step 4, so the load is "
        "not what lost it: the steps since made it otherwise, from other state they read that "
        "is not compared")
    # (both end otherwise, which the headline says; the evals' line says why)
    assert sorted(lost_uncompared(report.undeclared)) == ["ema", "evals"]
    # its twin whose load() starts the list empty: lost by the checkpoint
    twin = verify(SPEC + "EVALS_LOST", **FAST)
    [evals] = [line for line in twin.undeclared if line.startswith("evals (")]
    assert evals.endswith("than the uninterrupted run did: your checkpoint loses it, unless it "
                          "is not state (a log, a timer: name it in Target(not_state=...))"
                          + READ_BY_NO_STEP), evals


def test_fuzz_names_what_is_not_compared_as_run_does():
    """A trial (a GAN's EMA left out of the checkpoint and undeclared): `run`
    named it, ending otherwise in the program's own resume; `fuzz` said only
    `no failing schedule`, with no line and nothing in its JSON. Where no
    schedule fails, fuzz words what `run --drop none` would at the default
    resume point; its twin that saves the EMA is named as ending alike."""
    from resumecheck.fuzz import fuzz

    lost = fuzz(SPEC + "UNDECLARED", max_examples=3)
    assert not lost.found
    assert lost.undeclared == verify(SPEC + "UNDECLARED", **FAST).undeclared
    assert lost.to_json()["undeclared"] == lost.undeclared
    text = lost.render().splitlines()
    assert text[1].endswith("; not compared, and your own resume ends otherwise with: `ema` "
                            "(see below)")
    assert text[2].startswith("not compared: ema (") and "your checkpoint loses it" in text[2]
    kept = fuzz(SPEC + "SAVES_IT", max_examples=3)
    [line] = kept.undeclared
    assert line.endswith("; your own resume ends with it as the uninterrupted run did")
    assert "ends otherwise" not in kept.render()


def test_state_four_levels_down_is_named():
    """A trial: a Lookahead wrapper's slow weights (`state.opt.slow[0][j]`)
    were past the walk's depth; only its step counter was named."""
    report = verify(SPEC + "DEEPER", **FAST)
    named = [u.split(" (")[0] for u in report.undeclared]
    assert "state.opt.slow[0]" in named and "state.opt.steps" in named, named


def test_what_the_own_resume_ends_without_is_said():
    from resumecheck.verdict import own_resume_ends

    lines = own_resume_ends({"log[3]": "log[3] (tuple: 2 numbers, ...)"},
                            {"log[3]": ["d1"]}, {"other": ["d2"]})
    assert lines == ["log[3] (tuple: 2 numbers, ...); your own resume (save/load) ends without "
                     "it (nothing there made it again): your checkpoint loses it, unless it is "
                     "not state (a log, a timer, a cache the program fills again when it needs "
                     "it: name it in Target(not_state=...))"]
    assert lost_uncompared(lines) == ["log[3]"]  # (the headline, the WARNING and the row say it)
    assert own_resume_ends({"x": "x (...)"}, {"x": ["d"]}, None) == ["x (...)"]


def test_a_departed_own_resume_says_nothing_of_what_its_checkpoint_keeps():
    """A trial: a lost generator made the run depart at step 9, and the EMA
    and the loss log, saved and restored right, were "your checkpoint loses it"."""
    from resumecheck.report import RunResult
    from resumecheck.verdict import own_resume_ends

    departed = RunResult(dropped=[], resume_at=[8], verdict="diverged", first_divergent_step=9)
    [line] = own_resume_ends({"state.ema": "state.ema (dict: ...)"}, {"state.ema": ["a"]},
                             {"state.ema": ["b"]}, departed)
    assert line.endswith("; your own resume ends with it otherwise, but that says nothing of "
                         "your checkpoint: the resume had departed from the uninterrupted run "
                         "at step 9")
    assert lost_uncompared([line]) == []
    # (trial 192: a log's entry a run that departed at 8 never made, of a checkpoint that
    # kept the log, read "ends without it ...: your checkpoint loses it")
    [line] = own_resume_ends({"log[3]": "log[3] (tuple: ...)"}, {"log[3]": ["a"]},
                             {"log[0]": ["b"]}, departed)
    assert line.endswith("; your own resume ends without it, but that says nothing of your "
                         "checkpoint: the resume had departed from the uninterrupted run at "
                         "step 9")
    assert lost_uncompared([line]) == []
    kept = RunResult(dropped=[], resume_at=[8], verdict="identical")
    [line] = own_resume_ends({"state.ema": "state.ema (dict: ...)"}, {"state.ema": ["a"]},
                             {"state.ema": ["b"]}, kept)
    assert lost_uncompared([line]) == ["state.ema"]


def test_a_callbacks_class_is_part_of_the_path_its_lines_name():
    """A trial: two fields of one callback were both listed as `callbacks[0]`."""
    from resumecheck.phrases import uncompared_path

    line = ("callbacks (Clip).ema_norm (float: 0.0 at the build, 1.5 at the end, changed "
            "during the run; ...)")
    assert uncompared_path(line) == "callbacks (Clip).ema_norm"
    assert uncompared_path("callbacks (EMA#2).shadow['w'] (Tensor: 1 tensor, ...)") == \
        "callbacks (EMA#2).shadow['w']"
    assert uncompared_path("state.ema (AveragedModel: 4 tensors, ...)") == "state.ema"
    assert lost_uncompared([line + "; your own resume (save/load) ends with it otherwise "
                            "than the uninterrupted run did: ..."]) == [
        "callbacks (Clip).ema_norm"]


def test_your_callbacks_are_named_by_class_wherever_the_framework_puts_them():
    """A trial: the Trainer's own restore puts a callback back at the end of its
    list, and a path by place named another callback in the resumed run."""
    from resumecheck.frameworks._loop import user_callbacks

    class EMA:
        pass

    class Clip:
        pass

    first, second, clip = EMA(), EMA(), Clip()
    assert user_callbacks([first, clip, second]) == [
        ("callbacks (EMA#1)", first), ("callbacks (Clip)", clip), ("callbacks (EMA#2)", second)]
    assert user_callbacks([clip, first, second])[0] == ("callbacks (Clip)", clip)


def test_a_number_equal_to_one_in_a_components_state_is_not_taken_as_held():
    """A trial: an EMA's update count, lost by the checkpoint, went unnamed
    because a declared component of the program's own held an equal value."""
    report = verify(NUMBERS + "COINCIDENT", **FAST)
    assert [u.split(" (")[0] for u in report.undeclared] == ["ema_updates"], report.undeclared


def test_a_counter_set_back_by_the_end_is_named_from_where_the_restart_held_it_otherwise():
    """A trial: a patience counter, 1 at the resume point and 0 again at the
    end, looked unchanged during the run; the engine's own full resume, which
    lost it, cut the learning rate at another step, and the WARNING named
    everything but it. Changed is what changed after any step looked at (the
    resume point, the step after), and a restart that departed is compared
    with the uninterrupted run right after its restore too."""
    report = verify("fixtures.trust.patience_reset:UNDECLARED", drop="none", noise_seeds=0)
    assert report.engine_resume.verdict == "diverged"
    assert [u.split(" (")[0] for u in report.undeclared] == [
        "early.best_loss", "early.bad_evals", "early.cuts"], report.undeclared
    assert report.undeclared[1].startswith(
        "early.bad_evals (int: 0 at the build, 1 after step 9, 0 at the end, changed during "
        "the run; held by no declared component: declare it as a component")
    notice = report.incomplete_state_notice()
    assert "`early.bad_evals`" in notice
    # (a trial read "Ablations cannot be judged" under --drop none, which runs none)
    notice = notice.removeprefix(OWN_EQUIVALENT + " ")
    assert notice.startswith("The declared components do not capture") and "Ablation" not in notice
    declared = verify("fixtures.trust.patience_reset:DECLARED", drop="none", noise_seeds=0)
    assert declared.equivalent and declared.undeclared == []
    assert declared.engine_resume.verdict == "identical"


def test_numpy_and_python_generators_the_program_keeps_are_named_until_declared():
    """A trial: a numpy Generator kept by the program was never named; once
    everything else was declared the WARNING named nothing. A numpy Generator
    (registrable with RNGState) and a random.Random are looked at as a torch
    Generator is: by their state."""
    report = verify("fixtures.trust.other_generators:UNDECLARED", **FAST)
    assert report.undeclared == [
        "noise (a numpy Generator whose state the run changed, drawn from or seeded again, "
        "and no declared component holds: register it, RNGState({'name': generator}) (among "
        "the generators of the RNGState you declare, or beside it with streams=(): another "
        "holds the global streams too), to check that it resumes)",
        "order (a random.Random whose state the run changed, drawn from or seeded again, and "
        "no declared component holds: declare it as a component to check that it resumes)"]
    assert "`noise`, `order`" in report.incomplete_state_notice()
    declared = verify("fixtures.trust.other_generators:DECLARED", **FAST)
    assert declared.equivalent and declared.undeclared == []
    # a framework's target cannot declare one: told to keep it in the framework's
    # checkpoint (trial 256: a Lightning datamodule's generator was told to register it)
    from resumecheck.verdict import reworded_lines

    (said,) = reworded_lines(report.undeclared[:1], {"restored_by": "Lightning's restore"})
    assert "RNGState" not in said and said.endswith(
        "and no declared component holds: keep its state in the checkpoint Lightning "
        "writes, through your own code that it calls (your LightningModule's "
        "on_save_checkpoint() and on_load_checkpoint(), or your datamodule's state_dict() "
        "and load_state_dict()), so that its restore puts it back)"), said


def test_what_the_programs_own_load_lost_is_said_from_before_its_resume_departed():
    """A trial: a counter the checkpoint lost read "your own resume ends with
    it otherwise, but that says nothing of your checkpoint: the resume had
    departed". Held otherwise right after the load and after the next step,
    both before the departure, it is said to be lost by the checkpoint; what
    only follows from it (the count of cuts, right after the load) is not."""
    report = verify("fixtures.trust.patience_reset:FORGETS_PATIENCE", drop="none",
                    noise_seeds=0)
    assert report.full_resume.verdict == "diverged"
    assert report.full_resume.first_divergent_step == 11
    lines = {u.split(" (")[0]: u for u in report.undeclared}
    assert lines["early.bad_evals"].endswith(
        "; your own resume held it otherwise right after your load() at step 9 and after step "
        "10, before it departed from the uninterrupted run at step 11: your checkpoint loses "
        "it, unless it is not state (a log, a timer: name it in Target(not_state=...))"), \
        lines["early.bad_evals"]
    assert lines["early.cuts"].endswith("that says nothing of your checkpoint: the resume "
                                        "had departed from the uninterrupted run at step 11")


def test_a_counter_lost_and_set_alike_by_the_next_step_before_the_departure_may_be_lost():
    """Trial 221: a plateau callback lost its best loss and its patience
    counter; the next step set the counter to 0 in both runs (an improvement
    over the lost best; the uninterrupted run's cut), and its line read only
    "your own resume ends with it as the uninterrupted run did". Held
    otherwise right after the load, it may be lost, and the why says so,
    after what the checkpoint loses."""
    report = verify("fixtures.trust.patience_reset:FORGETS_BOOKKEEPING", drop="none",
                    noise_seeds=0)
    own = report.full_resume
    assert (own.verdict, own.first_divergent_step) == ("diverged", 11)
    lines = {u.split(" (")[0]: u for u in report.undeclared}
    assert lines["early.bad_evals"].endswith(
        "; your own resume held it otherwise right after your load() at step 9, and as the "
        "uninterrupted run after step 10, before it departed from the uninterrupted run at step "
        "11: your checkpoint may lose it, unless the program sets it again as it steps (or it "
        "is not state, a log, a timer: name it in Target(not_state=...)); it ends with it as "
        "the uninterrupted run did"), lines["early.bad_evals"]
    assert lines["early.best_loss"].endswith("your checkpoint loses it, unless it is not state "
                                             "(a log, a timer: name it in Target(not_state=...))")
    assert own.explanation.startswith("learning rate differs from step 11 ("), own.explanation
    # (trials 791, 796: the why said "loses it" alone, where the line says "unless ...")
    assert ("the loss differs from step 12); not compared, and your checkpoint loses it, "
            "unless it is not state: `early.best_loss` (see `not compared`); not compared, and "
            "your checkpoint may lose it: `early.bad_evals` (see `not compared`); no declared "
            "component's") in \
        own.explanation, own.explanation


def test_a_replay_buffer_in_a_deque_is_named_as_one_holder_until_declared():
    report = verify("fixtures.trust.replay_buffer:UNDECLARED", **FAST)
    assert report.undeclared == [
        "buffer (deque: 64 items, 320 values, that the run changed and no declared "
        "component holds: declare it as a component to check that it resumes)"]
    assert "`buffer`" in report.incomplete_state_notice()
    declared = verify("fixtures.trust.replay_buffer:DECLARED", **FAST)
    assert declared.equivalent and declared.undeclared == []


def test_what_the_programs_own_load_lost_is_said_when_it_departs_at_the_next_step():
    """Departed at the very step after the load, the resume is seen once
    before it departed: right after the load. A line whose state it held
    otherwise there says the checkpoint may lose it; one it held as the
    uninterrupted run did keeps "says nothing of your checkpoint"."""
    report = verify("fixtures.trust.annealed_temperature:FORGETS", **FAST)
    assert report.full_resume.first_divergent_step == 5
    [line] = report.undeclared
    assert line.startswith("temperature (float: 4.0 at the build, 1.0 at the end")
    assert line.endswith(
        "; your own resume held it otherwise right after your load() at step 4, and departed "
        "from the uninterrupted run at the next step: your checkpoint may lose it, unless the "
        "step sets it anew before reading it (a value each step overwrites, not one it updates "
        "from what it held, as a running average or a count) (or it is not state, a log, a "
        "timer: name it in Target(not_state=...))"), line
    correct = verify("fixtures.trust.annealed_temperature:CORRECT", **FAST)
    assert correct.equivalent
    assert correct.undeclared[0].endswith(
        "; your own resume ends with it as the uninterrupted run did")
    # (trial 444: the WARNING told of a loader's iterator and a generator, not of the
    # value the load put back and its own `not compared` line named)
    assert ("what your load() does besides (putting back `temperature`, which the `not "
            "compared` lines name: declare it as a component; or a loader's iterator it skips "
            "to where the run was, a generator it seeds again) belongs in a declared "
            "component's load_state_dict()") in correct.incomplete_state_notice()


def test_state_a_later_step_set_again_is_not_said_to_be_put_back_by_the_load():
    """Trial 579: an episode's position, which the first step after the restart
    set again, was named among what the load() put back (hand-built lines)."""
    from resumecheck.phrases import SET_ALIKE_LATER
    from resumecheck.report import RunResult, _own_equivalent

    lines = ["baseline (float: 0.0 at the build, 0.7 at the end, changed during the run; "
             "held by no declared component: declare it as a component to check that it "
             "resumes); your own resume ends with it as the uninterrupted run did",
             "env.pos (int: None or not set at the build, 6 at the end, changed during the "
             "run; held by no declared component: declare it as a component to check that it "
             "resumes); named at this resume point: the engine's own restart, which restores "
             "every declared component, ends with it as the uninterrupted run does, but held "
             f"it otherwise from right after its restore at step 8 on, {SET_ALIKE_LATER}; "
             "your own resume ends with it as the uninterrupted run did"]
    said = "".join(_own_equivalent(RunResult(dropped=[], resume_at=[8], verdict="identical"),
                                   lines))
    assert "(putting back `baseline`, which the `not compared` lines name" in said, said


def test_a_run_that_failed_is_not_said_to_have_departed():
    # a trial: a run that raised (or hung) read "before it departed from the
    # uninterrupted run at step 20"
    from resumecheck.report import RunResult
    from resumecheck.verdict import own_resume_ends

    def said(verdict, k_plus_one_otherwise, departed_first=False):
        run = RunResult(dropped=[], resume_at=[9], verdict=verdict, checkpoint="program",
                        first_divergent_step=12,
                        first_divergent_key="loss" if departed_first else None)
        ref_after = {9: {"count": ["a"]}, 10: {"count": ["b"]}}
        own_after = {9: {"count": ["x"]},
                     10: {"count": ["y" if k_plus_one_otherwise else "b"]}}
        (line,) = own_resume_ends({"count": "count (an int)"}, {"count": ["c"]},
                                  {"count": ["d"]}, run, ref_after, own_after)
        return line

    assert "before it failed at step 12: your checkpoint loses it" in said("failed", True)
    assert "before it departed from the uninterrupted run at step 12" in said("diverged", True)
    assert "departed" not in said("failed", True)
    # (a trial: a run that departed at 18, then raised at 20, read "failed at the next step")
    assert "before it departed from the uninterrupted run at step 12" in said(
        "failed", True, departed_first=True)


class _ShufflingPosition:
    """A data position of the script's own whose order comes from a generator
    its state_dict() leaves out."""

    def __init__(self) -> None:
        self.gen = torch.Generator().manual_seed(0)
        self.epoch, self.pos, self.order = 0, 0, None

    def state_dict(self) -> dict:
        return {"epoch": self.epoch, "pos": self.pos}

    def load_state_dict(self, state: dict) -> None:
        self.epoch, self.pos = state["epoch"], state["pos"]

    def next_indices(self) -> torch.Tensor:
        if self.order is None or self.pos == 4:
            if self.order is not None:
                self.epoch, self.pos = self.epoch + 1, 0
            self.order = torch.randperm(16, generator=self.gen)
        self.pos += 1
        return self.order[4 * (self.pos - 1):4 * self.pos]


class _ShufflingScript:
    def __init__(self, settings: dict) -> None:
        torch.manual_seed(0)
        self.model = torch.nn.Linear(3, 1)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.x, self.y = torch.randn(16, 3), torch.randn(16, 1)
        self.data = _ShufflingPosition()

    def components(self) -> dict:
        return {"params": self.model, "optimizer": self.opt, "data_cursor": self.data}

    def train_step(self) -> StepOutput:
        idx = self.data.next_indices()
        loss = torch.nn.functional.mse_loss(self.model(self.x[idx]), self.y[idx])
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return StepOutput(loss=loss.item(), samples=idx)


def test_a_generator_field_left_out_of_a_components_state_is_named_as_a_generator():
    """A trial read `data_cursor.gen (Generator: 1 tensor, 5056 values, ...)`:
    the bytes of its state, not a tensor of the program's."""
    report = verify(Target(factory=_ShufflingScript, steps=10, resume_at=(6,)), **FAST)
    [line] = [u for u in report.undeclared if u.startswith("data_cursor.gen ")]
    assert line.startswith("data_cursor.gen (a torch.Generator whose state the run changed; "
                           "a field of the declared component data_cursor (_ShufflingPosition)")


class _RandomShufflingPosition(_ShufflingPosition):
    """The same, its order drawn by a Python ``random.Random``."""

    def __init__(self) -> None:
        super().__init__()
        import random

        self.gen = random.Random(0)  # type: ignore[assignment]

    def next_indices(self) -> torch.Tensor:
        if self.order is None or self.pos == 4:
            if self.order is not None:
                self.epoch, self.pos = self.epoch + 1, 0
            self.order = torch.tensor(self.gen.sample(range(16), 16))
        self.pos += 1
        return self.order[4 * (self.pos - 1):4 * self.pos]


class _RandomShufflingScript(_ShufflingScript):
    def __init__(self, settings: dict) -> None:
        super().__init__(settings)
        self.data = _RandomShufflingPosition()


def test_a_python_random_field_left_out_of_a_components_state_is_named_as_one():
    """A trial read `data_cursor.rng (Random: 1 tensor, 7350 values, ...)`."""
    report = verify(Target(factory=_RandomShufflingScript, steps=10, resume_at=(6,)), **FAST)
    [line] = [u for u in report.undeclared if u.startswith("data_cursor.gen ")]
    assert line.startswith("data_cursor.gen (a random.Random whose state the run changed; "
                           "a field of the declared component data_cursor "
                           "(_RandomShufflingPosition)"), line


class _EpochStartPosition(_ShufflingPosition):
    """Keeps the generator the script made, and saves its state at the epoch's
    start, not as it is now (its load forgets to set the generator from it)."""

    def __init__(self, gen: torch.Generator) -> None:
        super().__init__()
        self.gen, self.start = gen, gen.get_state()

    def state_dict(self) -> dict:
        return {**super().state_dict(), "start": self.start.clone()}

    def load_state_dict(self, state: dict) -> None:
        super().load_state_dict(state)
        self.start = state["start"]  # (and forgets to set the generator from it)

    def next_indices(self) -> torch.Tensor:
        if self.order is None or self.pos == 4:
            self.start = self.gen.get_state()
        return super().next_indices()


class _SharedGeneratorScript(_ShufflingScript):
    def __init__(self, settings: dict) -> None:
        super().__init__(settings)
        self.loader_gen = torch.Generator().manual_seed(0)
        self.data = _EpochStartPosition(self.loader_gen)


def test_a_generator_the_script_and_a_declared_position_both_keep_is_not_said_held_by_none():
    """A trial: a loader's generator that the declared data position keeps,
    saving its state at the epoch's start, read "no declared component holds"."""
    report = verify(Target(factory=_SharedGeneratorScript, steps=10, resume_at=(6,)), **FAST)
    [line] = [u for u in report.undeclared if u.startswith("loader_gen ")]
    assert ("and the declared component data_cursor (_EpochStartPosition) keeps it too, as "
            "data_cursor.gen, but returns no state equal to it from its state_dict(): it may "
            "keep it another way (a state it sets it from again), which is not compared") in line
    assert "no declared component holds" not in line


class _LastEval(_ShufflingScript):
    """Keeps its last evaluation's loss (None after a restart), undeclared,
    set again every third step."""

    def __init__(self, settings: dict) -> None:
        super().__init__(settings)
        self.last_eval: float | None = None

    def train_step(self) -> StepOutput:
        out = super().train_step()
        if self.data.pos % 3 == 0:
            self.last_eval = float(out.loss)
        return out


def test_a_line_named_at_one_resume_point_only_says_why():
    """A trial: a `not compared` line came and went with the resume point. Where
    the engine's restart ends with it alike, the line says after which step that
    restart held it otherwise; where its first step sets it again, none is named."""
    def named(k: int) -> list[str]:
        return [u for u in verify(Target(factory=_LastEval, steps=10, resume_at=(k,)),
                                  **FAST).undeclared if u.startswith("last_eval ")]

    [line] = named(3)
    assert line.endswith("; named at this resume point: the engine's own restart, which "
                         "restores every declared component, ends with it as the uninterrupted "
                         "run does, but held it otherwise from after step 4 (the first after "
                         "the restore at 3, where it is first looked at) on, until a later "
                         "step set it alike"), line
    assert named(2) == []


class _LastEvalSaved(_LastEval):
    """_LastEval with a save() and a load() of its own that keep the last evaluation."""

    def save(self, path: str) -> None:
        torch.save({"model": self.model.state_dict(), "opt": self.opt.state_dict(),
                    "data": self.data.state_dict(), "last_eval": self.last_eval}, path)

    def load(self, path: str) -> None:
        state = torch.load(path)
        self.model.load_state_dict(state["model"])
        self.opt.load_state_dict(state["opt"])
        self.data.load_state_dict(state["data"])
        self.last_eval = state["last_eval"]


def test_a_line_named_at_one_resume_point_says_that_the_programs_own_load_puts_it_back():
    """Trial 506: a best loss named because the engine's restart held it
    otherwise for a while read only "your own resume ends with it as the
    uninterrupted run did", which that restart, without it, did too: the
    user could not tell whether the checkpoint kept it."""
    report = verify(Target(factory=_LastEvalSaved, steps=10, resume_at=(3,)), **FAST)
    assert report.equivalent
    [line] = [u for u in report.undeclared if u.startswith("last_eval ")]
    assert line.endswith("until a later step set it alike; your own resume held it as the "
                         "uninterrupted run did right after your load() at step 3, and ends "
                         "with it so: your load() puts it back"), line


class _LastEvalSavedPositionLost(_LastEvalSaved):
    """_LastEvalSaved whose load() leaves the data position as built: the resume departs."""

    def load(self, path: str) -> None:
        state = torch.load(path)
        self.model.load_state_dict(state["model"])
        self.opt.load_state_dict(state["opt"])
        self.last_eval = state["last_eval"]


def test_a_value_the_load_puts_back_in_a_resume_that_departs_for_another_cause_says_so():
    """Trial 846: a best loss its load() put back read "held by no declared
    component ... your own resume ends with it otherwise, but that says nothing
    of your checkpoint" beside a lost stream; the user read it as lost too."""
    report = verify(Target(factory=_LastEvalSavedPositionLost, steps=10, resume_at=(3,)),
                    **FAST)
    assert report.full_resume.verdict == "diverged"
    [line] = [u for u in report.undeclared if u.startswith("last_eval ")]
    assert ("; your own resume held it as the uninterrupted run did right after your load() at "
            "step 3: your load() puts it back; it ends with it otherwise, but that says nothing "
            "of your checkpoint: the resume had departed") in line, line


def test_fuzz_names_the_resume_point_its_not_compared_lines_were_seen_at():
    """Trial 137: under a search of many schedules, fuzz's `not compared` lines
    (looked at, at the default resume point, as `run` does) read "named at
    this resume point" without saying which point."""
    from resumecheck.phrases import RESTART_HELD_OTHERWISE, at_the_point

    line = f"t.best_val (float: ...); {RESTART_HELD_OTHERWISE} after step 13"
    [said] = at_the_point([line], [12])
    assert said == ("t.best_val (float: ...); named at the default resume point (12): the "
                    "engine's own restart, which restores every declared component, ends with "
                    "it as the uninterrupted run does, but held it otherwise after step 13")
    assert at_the_point(["ema (Sequential: ...)"], [12]) == ["ema (Sequential: ...)"]


def test_items_of_one_list_said_alike_are_one_line():
    """A trial: a shuffle buffer of fifteen tuples, left out of its component's
    state, printed fifteen near-identical 500-character lines."""
    from resumecheck.phrases import merge_items, uncompared_path

    said = "(tuple: 1 number, changed during the run; a field of the declared component ...)"
    lines = [f"data_cursor.buffer[{i}] {said}" for i in range(15)]
    lines += ["best (float: inf at the build, 0.5 at the end, ...)",
              "queue[0] (Tensor: 4 values, ...)", "queue[1] (Tensor: 8 values, ...)",
              "pool[0] (int: 1)", "pool[2] (int: 1)", "pool[5] (int: 1)",
              "pair[0] (float: 0.5 at the end)", "pair[1] (float: 0.5 at the end)"]
    merged = merge_items(lines)
    assert merged == [
        "data_cursor.buffer[0..14] (each of these 15 items: tuple: 1 number, changed during "
        "the run; a field of the declared component ...)",
        "best (float: inf at the build, 0.5 at the end, ...)",
        "queue[0] (Tensor: 4 values, ...)", "queue[1] (Tensor: 8 values, ...)",
        "pool[0,2,5] (each of these 3 items: int: 1)",
        "pair[0,1] (each of these 2 items: float: 0.5 at the end)"]
    assert uncompared_path(merged[0]) == "data_cursor.buffer[0..14]"


_SAMPLES = torch.linspace(-1, 1, 96).reshape(32, 3)


class _Buffered:
    """A data stream of the program's own class whose buffer of (sample,
    label) pairs its state_dict() leaves out; the sample a view of the data."""

    def __init__(self) -> None:
        self.pos, self.buffer = 0, []

    def next(self) -> tuple[torch.Tensor, int]:
        while len(self.buffer) < 4:
            self.buffer.append((_SAMPLES[self.pos % 32], self.pos % 5))
            self.pos += 1
        return self.buffer.pop(0)

    def state_dict(self) -> dict:
        return {"pos": self.pos}

    def load_state_dict(self, state: dict) -> None:
        self.pos = state["pos"]


class _TupleBuffer:
    def __init__(self, config: dict) -> None:
        torch.manual_seed(0)
        self.model = torch.nn.Linear(3, 1)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.data = _Buffered()

    def components(self) -> dict:
        return {"params": self.model, "optimizer": self.opt, "data": self.data}

    def train_step(self) -> StepOutput:
        x, y = self.data.next()
        loss = (self.model(x) - y).pow(2).mean()
        loss.backward()
        self.opt.step()
        self.opt.zero_grad()
        return StepOutput(loss=loss.detach())


def test_a_holder_of_more_entries_than_it_names_says_how_many_it_has():
    """A trial read `tuple: 1 number` as the whole tuple, a (sample, label)
    pair whose sample is a view of the data (not state, not counted)."""
    report = verify(Target(factory=_TupleBuffer, steps=8, resume_at=(4,)), **FAST)
    [line] = report.undeclared
    assert line.startswith("data.buffer[0..2] (each of these 3 items: tuple: 1 number (of its "
                           "2 entries; the other is left out here: no tensor or number (or a "
                           "view of other data), unchanged since the build, or equal to "
                           "what a declared component holds), changed "
                           "during the run; a field of the declared "
                           "component data (_Buffered)"), line


class _Position:
    """A data position of the script's own that keeps the whole training state
    (a back-reference) and returns only the position from its state_dict()."""

    def __init__(self, st) -> None:
        self.st = st

    def state_dict(self) -> dict:
        return {"pos": self.st.pos}

    def load_state_dict(self, state: dict) -> None:
        self.st.pos = state["pos"]


class _HistoryScript:
    """A training state namespace with a metrics history (a dict of three
    numbers per step) that only the script's own bookkeeping reads."""

    def __init__(self, settings: dict) -> None:
        import types

        torch.manual_seed(0)
        self.model = torch.nn.Linear(3, 1)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.x, self.y = torch.randn(16, 3), torch.randn(16, 1)
        self.st = types.SimpleNamespace(pos=0, history=[])
        self.position = _Position(self.st)

    def components(self) -> dict:
        return {"params": self.model, "optimizer": self.opt, "data_cursor": self.position}

    def train_step(self) -> StepOutput:
        idx = torch.arange(self.st.pos, self.st.pos + 4)
        loss = torch.nn.functional.mse_loss(self.model(self.x[idx]), self.y[idx])
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.st.pos = (self.st.pos + 4) % 16
        self.st.history.append({"loss": loss.item(), "pos": self.st.pos, "n": 1})
        return StepOutput(loss=loss.item(), samples=idx)


def test_a_history_a_declared_component_only_refers_back_to_is_one_line_held_by_none():
    """A trial: seventeen `not compared` lines, one per entry of a metrics
    history, each saying the declared data position "keeps it too, as
    data_cursor.st.history[0]", where the position only kept a reference to
    the whole training state."""
    report = verify(Target(factory=_HistoryScript, steps=8, resume_at=(4,)), **FAST)
    lines = [u for u in report.render().splitlines() if u.startswith("not compared: st.history")]
    assert len(lines) == 1, report.render()
    assert lines[0].startswith("not compared: st.history[0..7] (each of these 8 items: dict: 3 "
                               "numbers, that the run changed and no declared component holds")
    assert "keeps it too" not in lines[0]


class _TaskEpochs:
    """Trial 379: a data position that keeps the whole training state and
    returns a copy of its dict of epochs per task (``returns``); the run reads
    one task's data, whose epoch is still 0 at the resume point."""

    def __init__(self, settings: dict) -> None:
        import types

        torch.manual_seed(0)
        self.model = torch.nn.Linear(3, 1)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.x, self.y = torch.randn(16, 3), torch.randn(16, 1)
        self.st = types.SimpleNamespace(pos={"a": 0, "b": 0}, epochs={"a": 0, "b": 0})
        returns = settings.get("returns", True)

        class Position:
            def state_dict(inner) -> dict:
                return {"pos": dict(self.st.pos),
                        **({"epochs": dict(self.st.epochs)} if returns else {})}

            def load_state_dict(inner, state: dict) -> None:
                self.st.pos.update(state["pos"])
                self.st.epochs.update(state.get("epochs", {}))

        self.position = Position()
        self.position.st = self.st  # (a back-reference to the whole state, as the trial's)

    def components(self) -> dict:
        return {"params": self.model, "optimizer": self.opt, "data_cursor": self.position}

    def train_step(self) -> StepOutput:
        task = "a" if self.st.pos["a"] < 12 or self.st.epochs["a"] else "b"
        at = self.st.pos[task]
        idx = torch.arange(at, at + 4)
        loss = torch.nn.functional.mse_loss(self.model(self.x[idx]), self.y[idx])
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.st.pos[task] = (at + 4) % 16
        self.st.epochs[task] += self.st.pos[task] == 0
        return StepOutput(loss=loss.item(), samples=idx)


def test_a_dict_a_declared_components_state_returns_equal_is_not_said_held_by_none():
    """Trial 379: a dict of epochs per task, returned whole by the data
    position that keeps the training state, was said to be held by no
    declared component at a resume point where one entry was still as built."""
    def lines(returns: bool) -> list[str]:
        report = verify(Target(factory=_TaskEpochs, run_config={"returns": returns},
                               restart_config="run", steps=8, resume_at=(2,)), **FAST)
        return [u for u in report.undeclared if u.startswith("st.epochs")]

    assert lines(True) == []
    [lost] = lines(False)
    assert "no declared component holds" in lost, lost


def test_items_said_alike_but_for_their_own_index_are_one_line():
    from resumecheck.phrases import merge_items

    lines = [f"buf[{i}] (int: 1; kept as pos.buf[{i}], a field)" for i in range(4)]
    assert merge_items(lines) == ["buf[0..3] (each of these 4 items: int: 1; kept as "
                                  "pos.buf[*], a field)"]


def test_a_small_int_is_never_kept_too_by_a_component_that_holds_an_equal_one():
    """A trial: the loader's epoch count, 2, was said to be kept too by a
    declared clip as its `warmup`, 2: small ints are one object in Python,
    and sharing one says nothing."""
    from resumecheck.components import Component
    from resumecheck.undeclared import _fields_of_own

    class Clip:
        def __init__(self):
            self.warmup, self.history = 2, [torch.zeros(2)]

        def state_dict(self):
            return {"warmup": self.warmup}

        def load_state_dict(self, state):
            self.warmup = state["warmup"]

    class Program:
        def __init__(self):
            self.clip, self.count = Clip(), 2

    program = Program()
    kept = _fields_of_own(program, [Component("clip", program.clip)])
    assert id(2) not in kept and id(program.count) not in kept
    assert kept[id(program.clip.history)] == "clip.history"  # (an object it keeps: named)


class _Progress:
    def __init__(self):
        self.batch = 0


class _Cursor:
    """A data position of the user's own that reads the loop's progress."""

    def __init__(self, run):
        self.run = run

    def state_dict(self):
        return {"batch": self.run.progress.batch}

    def load_state_dict(self, state):
        self.run.progress.batch = state["batch"]


def test_a_number_a_declared_component_of_yours_reaches_is_not_said_held_by_none():
    """A trial's data position returned its loop's progress.batch from its
    state_dict(); the number's line said no declared component held it."""
    import types

    from resumecheck.components import Component
    from resumecheck.undeclared import UndeclaredWatch

    program = types.SimpleNamespace(run=types.SimpleNamespace(progress=_Progress()))
    components = [Component("data_cursor", _Cursor(program.run))]
    watch = UndeclaredWatch(program, components)
    program.run.progress.batch = 8
    # (trial 149: returned under its name and equal, it is compared there: no line,
    # where one on every report said the check could not tell)
    assert watch.found(program, components) == {}

    class _Stale(_Cursor):  # (returns a `batch`, but not this number)
        def state_dict(self):
            return {"batch": 0}

    program = types.SimpleNamespace(run=types.SimpleNamespace(progress=_Progress()))
    components = [Component("data_cursor", _Stale(program.run))]
    watch = UndeclaredWatch(program, components)
    program.run.progress.batch = 8
    (line,) = watch.found(program, components).values()
    assert line == (
        "run.progress.batch (int: 0 at the build, 8 at the end, changed during the run; the "
        "declared component data_cursor (_Stale) keeps it too, as "
        "data_cursor.run.progress.batch, and its state_dict() returns a `batch`, but not this "
        "number (0 at the end): it may keep it another way (a state it sets it from again), "
        "which is not compared)")


class _KeepsAScheduler:
    """A loop that steps a scheduler it does not declare (``declares``: it does)."""

    declares = False

    def __init__(self, settings):
        import torch

        torch.manual_seed(0)
        self.x, self.y = torch.randn(32, 4), torch.randn(32, 1)
        self.model = torch.nn.Linear(4, 1)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.sched = torch.optim.lr_scheduler.StepLR(self.optimizer, 3, 0.5)
        self.step = 0

    def components(self):
        from resumecheck import Attr

        out = {"params": self.model, "optimizer": self.optimizer,
               "global_step": Attr(self, "step")}
        if self.declares:
            out["scheduler"] = self.sched
        return out

    def train_step(self):
        import torch

        from resumecheck import StepOutput

        i = torch.arange(self.step * 4, self.step * 4 + 4) % 32
        loss = torch.nn.functional.mse_loss(self.model(self.x[i]), self.y[i])
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        self.sched.step()
        self.step += 1
        return StepOutput(loss=loss.item(), samples=i)


class _DeclaresTheScheduler(_KeepsAScheduler):
    declares = True


def test_a_scheduler_the_program_steps_and_declares_nowhere_is_named():
    """A trial's LightningModule stepped a scheduler by hand that Lightning's
    checkpoint did not hold: the WARNING named nothing, nor did `not compared`."""
    target = Target(factory=_KeepsAScheduler, steps=8, resume_at=(4,))
    report = verify(target, drop="none", noise_seeds=0)
    assert report.undeclared == [
        "sched (a StepLR whose counts the run changed, and no declared component holds: declare "
        "it as a component, and save and load its state_dict() with the checkpoint, to check "
        "that it resumes)"]
    declared = verify(Target(factory=_DeclaresTheScheduler, steps=8, resume_at=(4,)),
                      drop="none", noise_seeds=0)
    assert declared.equivalent and declared.undeclared == []


def test_a_dropped_best_that_ends_otherwise_is_not_said_to_change_nothing():
    # (a trial: a best loss dropped after the last evaluation ended 1e9, expected
    # 3.16, and the row and the blind spots line said dropping it changed nothing)
    report = verify(NUMBERS + "DECLARED", steps=9, resume_at=8, drop="best", noise_seeds=0)
    row = next(r for r in report.runs if r.dropped == ["best"])
    assert row.blind_spot and "changed nothing" not in row.explanation
    assert row.explanation.startswith("blind spot: dropping best changed no step after k=8")
    assert "the run ends with best otherwise than the uninterrupted run" in row.explanation
    assert ("dropping it from the engine's restore changed no step after the restart at 8"
            in report.render())
    # (trial 527: "changed no step here" named no step; two restarts are both named)
    two = verify(NUMBERS + "DECLARED", steps=10, resume_at=[2, 8], drop="best", noise_seeds=0)
    assert ("blind spot: best (dropping it from the engine's restore changed no step after "
            "the restarts at 2 and 8: not proof that it is saved)") in two.render()


def test_a_latent_gap_the_run_ends_with_says_so():
    # (three trials: a best loss restored as inf after the last evaluation, which the run
    # ended with, was "latent: changes nothing here")
    report = verify(NUMBERS + "DECLARED", steps=9, resume_at=8, drop="none", noise_seeds=0)
    own = report.runs[0]
    assert own.latent_gaps == own.latent_ended == ["best"]
    assert ("the run ends with best otherwise than the uninterrupted run, which hands a later "
            "step or a later restart the wrong state") in own.explanation
    assert "changes nothing" not in report.render()
    # a gap the run does not end with is not said to (the next evaluation set it again)
    earlier = verify(NUMBERS + "DECLARED", drop="none", noise_seeds=0).runs[0]
    assert earlier.latent_ended == [] and "the run ends with best" not in earlier.explanation


def test_an_undeclared_value_beside_a_confirmed_cause_is_not_read_as_what_made_the_run_depart():
    """Trial 145: beside a stream its load seeds again (rng, confirmed), a
    count no component declares was "held otherwise right after your load()
    at step 8, and departed ... at the next step", which read as the cause."""
    report = verify("fixtures.trust.counter_beside_reseed:BUGGY", drop="none", noise_seeds=0)
    assert [(f.component, f.status) for f in report.full_resume.diagnosis] == [
        ("rng", "confirmed")]
    (line,) = report.undeclared
    assert line.startswith("evaluations (int: ")
    assert ("your own resume held it otherwise right after your load() at step 4 (it departed "
            "from the uninterrupted run at the next step, which rng, confirmed, explains): your "
            "checkpoint may lose it") in line


class _CounterBesideBatchNorm:
    """A step counter the checkpoint drops, beside a batch norm whose
    num_batches_tracked counts the same steps."""

    def __init__(self, settings):
        torch.manual_seed(0)
        self.model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4),
                                         torch.nn.Linear(4, 1))
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.x = torch.randn(8, 3)
        self.updates = 0

    def components(self):
        return {"params": self.model, "optimizer": self.opt}

    def train_step(self):
        self.updates += 1
        warm = min(1.0, self.updates / 4)
        loss = self.model(self.x).pow(2).mean() * warm
        loss.backward()
        self.opt.step()
        self.opt.zero_grad()
        return loss.detach()


def test_a_counter_equal_to_a_batch_norms_count_is_still_named():
    """Trial 152: a step counter at 16, lost by the checkpoint, passed for the
    batch norm's num_batches_tracked, 16 (a number is never held by an equal
    value), and the departure was blamed on nothing."""
    target = Target(factory=_CounterBesideBatchNorm, steps=6, resume_at=(2,))
    report = verify(target, **FAST)
    assert not report.equivalent
    [line] = report.undeclared
    assert line.startswith("updates (int: 0 at the build, 6 at the end, changed during the run"), \
        line


def test_a_python_generator_the_run_advanced_is_named_and_one_over_a_loader_is_not():
    """Trial 153: a loss-weight ramp kept in a generator, made anew by every
    restart, was named nowhere (fixtures/trust/generator_ramp.py). A generator
    that loops over a DataLoader is not named: where it is shows in the samples."""
    from fixtures.trust import generator_ramp

    report = verify(generator_ramp.RAMP_LOST, **FAST)
    assert not report.equivalent and report.full_resume.first_divergent_step == 4
    [line] = report.undeclared
    assert line.startswith("ramp (a Python generator, ramp() of generator_ramp.py, that the run "
                           "advanced: how far it ran is in no checkpoint and cannot be compared"), \
        line
    assert "ends with it as the uninterrupted run did" not in line  # (nothing to compare)
    assert "`ramp`" in (report.incomplete_state_notice() or "")
    # (trial 154: named in the WARNING and the line, not in the why nor a test's row)
    assert report.full_resume.explanation.startswith(
        "loss differs from step 4; not compared, and your checkpoint may lose it: `ramp` (see "
        "`not compared`)"), report.full_resume.explanation
    from resumecheck.pytest_plugin import _summary_row

    row = _summary_row({"nodeid": "t", "target": "x", "report": report.to_json()})
    assert "not compared, a generator's position, which no checkpoint of yours holds: ramp" in row


def _schedule(base: float):
    t = 0

    def next_lr() -> float:
        nonlocal t
        t += 1
        return base * min(1.0, t / 4)

    return next_lr


class _RateInAClosure:
    """The rate counted in a closure's `nonlocal t`, which no checkpoint holds."""

    def __init__(self, settings):
        torch.manual_seed(0)
        self.model = torch.nn.Linear(3, 1)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.x = torch.randn(8, 3)
        self.next_lr = _schedule(0.1)

    def components(self):
        return {"params": self.model, "optimizer": self.opt}

    def train_step(self):
        for group in self.opt.param_groups:
            group["lr"] = self.next_lr()
        loss = self.model(self.x).pow(2).mean()
        loss.backward()
        self.opt.step()
        self.opt.zero_grad()
        return loss.detach()

    def save(self, path):
        torch.save({"model": self.model.state_dict(), "opt": self.opt.state_dict()}, path)

    def load(self, path):
        state = torch.load(path)
        self.model.load_state_dict(state["model"])
        self.opt.load_state_dict(state["opt"])


def test_a_number_a_closure_of_the_program_keeps_is_named():
    """Trial 154: a learning rate counted in a closure's `nonlocal t` departed
    after every restart, and nothing named where the count was kept; trial
    156: the WARNING led with a schedule's settings, and the test's row said
    nothing of it."""
    report = verify(Target(factory=_RateInAClosure, steps=6, resume_at=(2,)), **FAST)
    assert not report.equivalent
    [line] = report.undeclared
    assert line.startswith("next_lr.t (int: 0 at the build, 6 at the end, changed during the "
                           "run"), line
    notice = report.incomplete_state_notice() or ""
    assert "`next_lr.t`" in notice and "a schedule's own settings" not in notice, notice
    from resumecheck.pytest_plugin import _summary_row

    row = _summary_row({"nodeid": "t", "target": "x", "report": report.to_json()})
    assert "not compared, your checkpoint may lose it: next_lr.t" in row, row


class _WarmupInAChain:
    """A loss weight warmed up by a chain of repeats, and data read through
    `itertools.cycle(loader)` (its position shows in the samples)."""

    def __init__(self, settings):
        import itertools

        torch.manual_seed(0)
        data = torch.utils.data.TensorDataset(torch.randn(16, 3))
        self.batches = itertools.cycle(torch.utils.data.DataLoader(data, batch_size=4))
        self.model = torch.nn.Linear(3, 1)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.weight = itertools.chain(itertools.repeat(0.5, 3), itertools.repeat(1.0))

    def components(self):
        return {"params": self.model, "optimizer": self.opt}

    def train_step(self):
        (x,) = next(self.batches)
        loss = self.model(x).pow(2).mean() * next(self.weight)
        loss.backward()
        self.opt.step()
        self.opt.zero_grad()
        return StepOutput(loss=loss.detach(), samples=x)


def test_an_itertools_iterator_the_program_keeps_is_named_and_one_over_a_loader_is_not():
    """Trial 154: a warm-up kept in `itertools.chain(repeat(...), repeat(...))`,
    made anew by every restart, was named nowhere."""
    report = verify(Target(factory=_WarmupInAChain, steps=6, resume_at=(2,)), **FAST)
    assert not report.equivalent
    assert [line.split(" (")[0] for line in report.undeclared] == ["weight"]
    assert report.undeclared[0].startswith(
        "weight (an itertools.chain iterator: how far it ran is in no checkpoint and cannot be "
        "compared; a restart makes it anew from its start")


def test_a_generator_the_own_resume_brought_back_does_not_lead_its_why():
    """Trial 160: a numpy generator the program saved and restored itself
    (its `not compared` line: "your own resume ends with it as the
    uninterrupted run did") led the why as "a random generator the run drew
    from", before the epoch counter the checkpoint lost."""
    report = verify("fixtures.trust.restored_generator_beside:EPOCH_LOST", **FAST)
    own = report.full_resume
    assert own is not None and own.first_divergent_step == 7
    assert any(u.startswith("noise (a numpy Generator") and u.endswith(
        "your own resume ends with it as the uninterrupted run did") for u in report.undeclared)
    assert "`noise`" not in own.explanation
    assert own.explanation.startswith(
        "data (the samples consumed) differs from step 7; not compared, and your checkpoint may "
        "lose it: `epoch` (see `not compared`)")


class _LogsValidation:
    """A validation loss every third step, appended to a list the checkpoint
    does not keep: a resume at 4 ends with the entries from 6 on only."""

    def __init__(self, settings):
        torch.manual_seed(0)
        self.model = torch.nn.Linear(3, 1)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.x, self.val = torch.randn(8, 3), torch.randn(8, 3)
        self.step, self.history = 0, []

    def components(self):
        from resumecheck import Attr

        return {"params": self.model, "optimizer": self.opt, "global_step": Attr(self, "step")}

    def train_step(self):
        loss = self.model(self.x).pow(2).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.step += 1
        if self.step % 3 == 0:
            with torch.no_grad():
                self.history.append((self.step, self.model(self.val).pow(2).mean().item()))
        return StepOutput(loss=loss.item())

    def save(self, path):
        torch.save({"model": self.model.state_dict(), "opt": self.opt.state_dict(),
                    "step": self.step}, path)

    def load(self, path):
        state = torch.load(path)
        self.model.load_state_dict(state["model"])
        self.opt.load_state_dict(state["opt"])
        self.step = state["step"]


def test_a_list_that_lost_its_first_entries_is_said_so_not_compared_item_by_item():
    """Trial 159: a log that lost its first entry, the later ones made again,
    read as `history[0..4]` ending otherwise and `history[5]` missing."""
    report = verify(Target(factory=_LogsValidation, steps=12, resume_at=(4,)), **FAST)
    [line] = [u for u in report.undeclared if u.startswith("history")]
    assert line.startswith("history (a list of 4 items; [0]: tuple: ")
    assert line.endswith(
        "; your own resume (save/load) ends with it otherwise than the uninterrupted run did: "
        "with 3 of its 4 items, each the uninterrupted run's, in its order, and without the item "
        "at [0] (the others sit at other indices): your checkpoint loses it, unless it is not "
        "state (a log, a timer: name it in Target(not_state=...))")
    assert lost_uncompared(report.undeclared) == ["history"]


class _LogsAndLosesTheScheduler(_LogsValidation):
    """The log as above, and an ExponentialLR its checkpoint loses: the rate
    comes back with the optimizer, so every step matches and only the
    scheduler's count ends otherwise."""

    def __init__(self, settings):
        super().__init__(settings)
        self.sched = torch.optim.lr_scheduler.ExponentialLR(self.opt, gamma=0.9)

    def components(self):
        return {**super().components(), "scheduler": self.sched}

    def train_step(self):
        out = super().train_step()
        self.sched.step()
        return out


def test_a_shifted_list_is_said_so_in_a_resume_whose_every_step_matched():
    """Trial 236: beside a lost scheduler that changed no step, a log that lost
    its first entry read item by item, `history[2] ... ends without it (nothing
    there made it again)`, where the resume held that item at another index."""
    report = verify(Target(factory=_LogsAndLosesTheScheduler, steps=12, resume_at=(4,)), **FAST)
    own = report.full_resume
    assert own.verdict == "diverged" and own.first_divergent_quantity.startswith(
        "state of scheduler"), own.explanation
    [line] = [u for u in report.undeclared if u.startswith("history")]
    assert line.startswith("history (a list of 4 items; [0]: tuple: "), line
    assert "without the item at [0] (the others sit at other indices)" in line
    assert "nothing there made it again" not in report.render()


class _StopsEarly(_LogsValidation):
    """An early stop's flag, a bool set once the validation loss has not
    improved for two checks, and not saved: a restart starts it False."""

    def __init__(self, settings):
        super().__init__(settings)
        self.should_stop = False

    def train_step(self):
        out = super().train_step()
        if self.step == 10:  # (once: as a patience running out does)
            self.should_stop = True
        return out


def test_a_flag_the_run_sets_and_the_checkpoint_loses_is_named():
    """Trial 161: an early stop's bool `should_stop`, True at the uninterrupted
    run's end, was named nowhere; the same flag as an int was."""
    report = verify(Target(factory=_StopsEarly, steps=12, resume_at=(11,)), **FAST)
    [line] = [u for u in report.undeclared if u.startswith("should_stop")]
    assert line.startswith("should_stop (bool: False at the build, True at the end, changed "
                           "during the run; held by no declared component")


def test_what_the_target_says_is_no_state_is_neither_named_nor_warned_of():
    """Trial 163: a loss log the checkpoint does not keep was named, and warned
    of (LostStateWarning), on every pass; the CI job kept its own list of lines
    to ignore. ``Target(not_state=...)`` says it once."""
    import warnings

    from resumecheck.assertions import assert_resume_equivalent

    logged = Target(factory=_LogsValidation, steps=12, resume_at=(4,))
    assert lost_uncompared(verify(logged, **FAST).undeclared) == ["history"]
    told = Target(factory=_LogsValidation, steps=12, resume_at=(4,), not_state=("history",))
    report = verify(told, **FAST)
    assert report.equivalent and not any(u.startswith("history") for u in report.undeclared)
    assert report.to_json()["ends_otherwise_uncompared"] == []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_resume_equivalent(told, **FAST)
    # (trial 164: a path the report does not name left the line as it was, unsaid)
    from resumecheck.errors import NotStateUnmatchedWarning

    misspelt = Target(factory=_LogsValidation, steps=12, resume_at=(4,), not_state=("histor",))
    with pytest.warns(NotStateUnmatchedWarning) as caught:
        report = verify(misspelt, **FAST)
    assert lost_uncompared(report.undeclared) == ["history"]
    assert str(caught[0].message).endswith(
        "not_state names `histor`, which no `not compared` line is of, so it leaves nothing "
        "out; the report names `history`: give the path as the `not compared` line begins")
    # (trial 172: a letter dropped inside the name was told of no path near it)
    typo = Target(factory=_LogsValidation, steps=12, resume_at=(4,), not_state=("histroy",))
    with pytest.warns(NotStateUnmatchedWarning) as caught:
        verify(typo, **FAST)
    assert "the report names `history`" in str(caught[0].message)


def test_a_list_that_lost_its_first_entries_says_where_the_others_are():
    """Trial 164: "without the items at [0], [1], [2], [3], [4], [5] ..." of a
    log holding the uninterrupted run's later items at its first indices."""
    report = verify(Target(factory=_LogsValidation, steps=12, resume_at=(7,)), **FAST)
    [line] = [u for u in report.undeclared if u.startswith("history")]
    assert ("with 2 of its 4 items, each the uninterrupted run's, in its order, and without the "
            "items at [0..1]: it holds the uninterrupted run's [2..3] at [0..1]: your checkpoint "
            "loses them") in line
    # (trial 465: "(the others sit at other indices)" there said nothing the line had not)
    assert "sit at other indices" not in line


def test_a_generator_made_anew_from_a_declared_count_is_not_named_and_one_from_its_start_is():
    """Trial 194: a generator of batches made anew after each load from a declared
    cursor read "how far it ran is in no checkpoint", though its position came
    back through the cursor. Where the generator stands is read from its frame
    (the numbers and tensors among its locals): a restart that ends with it where
    the uninterrupted run ended brings it back; its twin, made anew from its
    start after a load, is still named."""
    from fixtures.trust import generator_from_cursor as g

    report = verify(g.CORRECT, **FAST)
    assert report.equivalent and report.undeclared == [], report.render()
    lost = verify(g.RAMP_FROM_START, **FAST)
    assert not lost.equivalent and lost.full_resume.first_divergent_step == 4
    [line] = lost.undeclared
    assert line.startswith("weights (a Python generator, ramp() of generator_from_cursor.py, "
                           "that the run advanced"), line


class _LongCache:
    """Trial 208's cache: the items the step scored highest, by id, for 80 ids
    (longer than a container the walk looks into item by item), read by the
    next step; a dataset beside it as a long list of tensors, unchanged."""

    def __init__(self, settings: dict) -> None:
        torch.manual_seed(0)
        self.data = [torch.randn(3) for _ in range(200)]
        self.model = torch.nn.Linear(3, 1)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.cache: dict[int, list[int]] = {}
        self.step = 0

    def components(self) -> dict:
        return {"params": self.model, "optimizer": self.optimizer}

    def train_step(self):
        ids = [(self.step * 16 + i) % 80 for i in range(16)]
        x = torch.stack([self.data[i] + 0.01 * len(self.cache.get(i, [])) for i in ids])
        loss = self.model(x).pow(2).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        for i in ids:
            self.cache[i] = [i, i + 1]
        self.step += 1
        return StepOutput(loss=loss.item())


def test_a_long_cache_no_component_holds_is_named_and_a_long_dataset_is_not():
    report = verify(Target(factory=_LongCache, steps=8, resume_at=(5,)), **FAST)
    assert not report.equivalent
    lines = {u.split(" (")[0]: u for u in report.undeclared}
    assert lines["cache"].startswith("cache (dict: 80 entries, 240 numbers in all, that the run "
                                     "changed and no declared component holds"), lines
    assert "data" not in lines and "`cache`" in report.incomplete_state_notice()


class _CountsCalls:
    """A component whose load forgets a count nothing reads."""

    def __init__(self) -> None:
        self.calls = 0

    def state_dict(self) -> dict:
        return {"calls": self.calls}

    def load_state_dict(self, state: dict) -> None:
        pass


class _LossyBesideALostCounter:
    """A declared component whose load loses a harmless count, and a counter
    no component declares, which weighs the loss and the checkpoint loses."""

    def __init__(self, settings):
        torch.manual_seed(0)
        self.model = torch.nn.Linear(3, 1)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.x = torch.randn(8, 3)
        self.counts, self.seen = _CountsCalls(), 0

    def components(self):
        return {"params": self.model, "optimizer": self.opt, "counts": self.counts}

    def train_step(self):
        self.counts.calls += 1
        self.seen += 1
        loss = self.model(self.x).pow(2).mean() * min(1.0, self.seen / 4)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return StepOutput(loss=loss.item())

    def save(self, path):
        torch.save({"model": self.model.state_dict(), "opt": self.opt.state_dict()}, path)

    def load(self, path):
        state = torch.load(path)
        self.model.load_state_dict(state["model"])
        self.opt.load_state_dict(state["opt"])


def test_a_lossy_load_beside_undeclared_state_names_both_in_the_warning():
    """Trial 239: a loader count every restore resets, harmless, was the WARNING's
    only lead ("a declared component does not load back its own state"), beside
    an undeclared counter the `not compared` lines named as lost."""
    from resumecheck.report import LOSSY_ONE

    report = verify(Target(factory=_LossyBesideALostCounter, steps=6, resume_at=(2,)), **FAST)
    notice = report.incomplete_state_notice() or ""
    assert notice.startswith(LOSSY_ONE), notice
    assert ("Something the components do not declare may be lost as well (the `not compared` "
            "lines name what the program keeps outside their states: `seen`).") in notice, notice


def test_a_dropout_schedule_left_out_is_one_line_that_says_to_set_it_again_not_to_buffer_it():
    """A trial's callback raised every Dropout's p at a step: eight lines of
    600 characters, one per layer, each telling it to keep p in a buffer,
    which a float that torch's Dropout reads at each call cannot be."""
    forgets = verify("fixtures.trust.dropout_schedule:FORGETS", **FAST)
    assert forgets.full_resume.verdict == DIVERGED
    (line,) = forgets.undeclared
    assert line.startswith("params.*.p (2 alike: params.1.p, params.4.p; each float: 0.1 at "
                           "the build, 0.3 at the end, changed during the run; a setting of "
                           "torch's Dropout, which its state_dict() leaves out: the layer "
                           "reads it at each call, and no buffer can hold it: set it again "
                           "after the load"), line
    assert "register_buffer" not in line
    assert "`params.*.p`" in forgets.full_resume.explanation
    # its twin sets it again in its load(): its own resume is bit for bit
    assert verify("fixtures.trust.dropout_schedule:CORRECT", **FAST).full_resume.verdict \
        == IDENTICAL


def test_attributes_of_one_name_said_alike_are_one_line_with_their_paths_as_a_pattern():
    from resumecheck.phrases import merge_alike, path_pattern

    rest = " (float: 0.1 at the build, 0.3 at the end, changed during the run; ...)"
    lines = [f"params.bert.{where}.dropout.p{rest}" for where in
             ("embeddings", "encoder.layer.0.attention", "encoder.layer.1.output")]
    other = "params.bert.pooler.scale (float: 1.0 at the build, 2.0 at the end, ...)"
    assert merge_alike([lines[0], other, *lines[1:]]) == [
        "params.bert.*.dropout.p (3 alike: params.bert.embeddings.dropout.p, "
        "params.bert.encoder.layer.0.attention.dropout.p, ...; each float: 0.1 at the build, "
        "0.3 at the end, changed during the run; ...)", other]
    # said otherwise, or of another name, each keeps its own line
    unlike = [lines[0], lines[1].replace("0.3", "0.5"), "state.epoch (int: 0 at the build)"]
    assert merge_alike(unlike) == unlike
    # a path of one name, no holder before it, is not taken for one of the group
    assert merge_alike(["p" + rest, *lines[:2]])[0] == "p" + rest
    assert path_pattern(["a.x.p", "a.y.z.p"]) == "a.*.p"
    assert path_pattern(["x.p", "y.p"]) == "*.p"


def test_a_list_given_back_as_views_of_one_restored_tensor_is_not_named():
    """A trial's data position kept its bootstrap indices stacked and gave them
    back as unbind() views: the restart's list held views, which the check did
    not look at, and the list was named as held otherwise and held by no
    declared component, though every value came back."""
    report = verify("fixtures.trust.list_of_views:BOOTSTRAP", **FAST)
    assert report.equivalent
    assert not any(line.startswith("boot ") for line in report.undeclared), report.undeclared


def test_schedulers_a_component_of_ones_own_returns_the_state_dict_of_are_not_named():
    """A trial's ensemble declared its three schedulers through a component of
    its own returning each one's state_dict(); at a resume point where they
    were as built, each was said to be one the component "returns no state
    equal to", and the user was told to declare it again."""
    report = verify("fixtures.trust.many_schedulers:ENSEMBLE", **FAST)
    assert report.equivalent
    assert not any(line.startswith("state.scheds") for line in report.undeclared), \
        report.undeclared


def test_a_stream_made_anew_from_a_kept_count_comes_after_the_buffer_its_load_lost():
    """Trial 404: a stream's generator, made anew by the load from a saved
    record count, ended further on only because the load lost the shuffle
    buffer; the why and the test's row led with the generator as state "kept
    where no checkpoint of yours holds it", and its line said a restart makes
    it anew "from its start"."""
    from resumecheck.pytest_plugin import _summary_row

    from fixtures.trust import stream_buffer

    assert verify(stream_buffer.CORRECT, **FAST).undeclared == []
    report = verify(stream_buffer.LOSES_BUFFER, **FAST)
    why = report.full_resume.explanation
    assert why.startswith("data (the model's inputs) differs from step 4; not compared, and "
                          "your checkpoint may lose it: `data_cursor.buffer`, "
                          "`data_cursor._source` (see `not compared`)"), why
    [line] = [u for u in report.undeclared if u.startswith("data_cursor._source ")]
    assert "a restart makes it anew, from its start unless your load() makes it from a " \
        "position a component keeps" in line, line
    # (trials 402, 404: the random stream the dropout draws from comes back level)
    notice = report.incomplete_state_notice() or ""
    assert "a DataLoader iterator created after the load" not in notice, notice
    # (trial 421: said of the streams the check records, not of an undeclared generator)
    assert ("or state is consumed between the restore and the first step (not a declared "
            "random stream: each was the uninterrupted run's at the start of that step), ") \
        in notice, notice
    # (trial 486: a position's load that skipped what its epoch read without reading it)
    assert ("or a component's load_state_dict() brings back its state but not what it makes "
            "(an iterator it makes anew that skips the batches its epoch read without reading "
            "them: loader workers then draw their augmentations from the start), or reads "
            "another declared component") in notice, notice
    assert report.full_resume.streams_level
    row = _summary_row({"nodeid": "t", "target": "x", "report": report.to_json()})
    assert row.index("your checkpoint may lose it: data_cursor.buffer") < row.index(
        "a generator's position, which no checkpoint of yours holds: data_cursor._source"), row


class _IdleLoaderSeed:
    """A loader of the program's own class without workers, its order from a
    sequential sampler, and a generator of its own that each iter() draws the
    workers' base seed from; its load() makes the iterator again (one more
    draw) and skips ahead."""

    def __init__(self, settings: dict) -> None:
        from torch.utils.data import DataLoader, SequentialSampler, TensorDataset

        class Loader(DataLoader):  # (trial 424's ResumableLoader: the program's own)
            pass

        torch.manual_seed(0)
        data = TensorDataset(torch.randn(16, 3), torch.randn(16, 1))
        self.loader = Loader(data, batch_size=4, sampler=SequentialSampler(data),
                             generator=torch.Generator().manual_seed(5))
        self.model = torch.nn.Linear(3, 1)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.step = 0
        self.batches = iter(self.loader)

    def components(self) -> dict:
        from resumecheck import Attr

        return {"params": self.model, "optimizer": self.opt, "global_step": Attr(self, "step")}

    def train_step(self):
        from resumecheck import StepOutput

        try:
            x, y = next(self.batches)
        except StopIteration:
            self.batches = iter(self.loader)
            x, y = next(self.batches)
        loss = torch.nn.functional.mse_loss(self.model(x), y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.step += 1
        return StepOutput(loss=loss.detach())

    def save(self, path: str) -> None:
        torch.save({"model": self.model.state_dict(), "opt": self.opt.state_dict(),
                    "step": self.step}, path)

    def load(self, path: str) -> None:
        state = torch.load(path, weights_only=True)
        self.model.load_state_dict(state["model"])
        self.opt.load_state_dict(state["opt"])
        self.step = state["step"]
        self.batches = iter(self.loader)
        for _ in range(self.step % 4):
            next(self.batches)


def test_a_loaders_generator_that_seeds_no_worker_is_not_advised_into_a_false_alarm():
    """Trial 424: a loader without workers, whose sampler draws from a generator
    of its own, kept its own generator only for the workers' base seed; the
    line advised registering it, and the correct program then failed."""
    from resumecheck import Target

    report = verify(Target(factory=_IdleLoaderSeed, steps=8, resume_at=(2,)), **FAST)
    assert report.equivalent, report.render()
    [line] = [u for u in report.undeclared if u.startswith("loader.generator ")]
    assert "it is the generator of the DataLoader `loader`, which has no workers and whose " \
        "sampler does not draw from it: each iter() draws from it the workers' base seed " \
        "alone, which nothing then reads" in line, line
    assert "Target(not_state=('loader.generator',))" in line
    assert "register it, RNGState" not in line
    # (nor is it what the headline, --strict and the plugin count as lost by the checkpoint)
    assert report.to_json()["ends_otherwise_uncompared"] == []
    assert report.render().splitlines()[1] == "full resume: EQUIVALENT"


def test_a_deque_an_own_component_returns_under_another_name_is_compared_there():
    """Trial 431: a DQN's replay buffer, a deque its declared component of the
    program's own returned as ``{"items": list(buffer)}``, was named `not
    compared`, "no declared component holds", and listed among the WARNING's
    suspects, wherever the engine's restart departed for another reason."""
    from resumecheck import undeclared
    from resumecheck.program import load_target

    built = load_target("fixtures.trust.replay_items:TARGET").build({})
    for step in range(1, 5):
        built.step(step)
    tr = built.program.tr
    assert undeclared._reached_by_own("tr.buffer", tr.buffer, built.program,
                                      built.components) == ""
    # one item alike is a coincidence, not the same state
    assert not undeclared._returned_whole([tr.buffer[0]], {"items": [tr.buffer[0]]})


def test_held_otherwise_after_the_load_and_alike_after_the_step_it_departed_at_is_no_lead():
    """Trial 448: a sampler's `started` flag, which its load sets to False and its
    first step to True, read "your checkpoint may lose it" beside a departure (a
    position saved one batch short) it had no part in: the step it departed at
    set it as the uninterrupted run held it."""
    from resumecheck.verdict import _lost_at

    reference = {8: {"started": ["on"]}, 9: {"started": ["on"]}}
    set_again = {8: {"started": ["off"]}, 9: {"started": ["on"]}}
    assert _lost_at("started", 8, 9, reference, set_again) is None
    still_off = {8: {"started": ["off"]}, 9: {"started": ["off"]}}
    assert _lost_at("started", 8, 9, reference, still_off) is False
    # (trial 517: not held at all after the load, an environment's state that the reset
    # beginning every step sets, read "may lose it" beside the lost normaliser)
    unset = {8: {}, 9: {"started": ["on"]}}
    assert _lost_at("started", 8, 9, reference, unset) is None
    assert _lost_at("started", 8, 9, reference, {8: {}, 9: {"started": ["off"]}}) is False
    # (trial 526: a number None after the load and after the next step, where the
    # uninterrupted run held one: lost, as one held otherwise is; it read as ending alike)
    held = {8: {"last": ["0.58"]}, 9: {"last": ["0.58"]}}
    assert _lost_at("last", 8, 10 ** 9, held, {8: {}, 9: {}}) is True
    assert _lost_at("last", 8, 10 ** 9, held, {8: {}, 9: {"last": ["0.58"]}}) is None


def test_a_generator_and_order_a_position_makes_again_are_not_said_held_by_none_as_built():
    """Trial 537: a position whose load_state_dict() seeds the epoch's generator
    and draws its order again; resumed inside the first epoch, where both are
    as a fresh build holds them, they were said held by no declared component,
    and to be registered; resumed later, they are not named at all."""
    spec = "fixtures.trust.order_from_epoch:"
    early = verify(spec + "IN_THE_FIRST_EPOCH", drop="none", noise_seeds=0)
    assert early.equivalent, early.render()
    lines = {u.split(" ", 1)[0]: u for u in early.undeclared}
    assert "s.gen" in lines, early.undeclared
    for line in lines.values():
        assert "and no declared component holds:" not in line, line
        assert ("; no declared component holds it, and whether one's restore makes it again (a "
                "load_state_dict() that seeds it, or makes it anew, from what it returns) "
                "cannot be seen at a resume point where it is as a fresh build holds it; if "
                "none does, ") in line, line
    assert verify(spec + "LATER", drop="none", noise_seeds=0).undeclared == []
