"""Blame causes, not consequences (issue 13, section 4), and the marks that say which.

A finding is made at the resume point after which the run departs from the
reference; it is confirmed only when setting that one component to the
reference's state removes the divergence or moves it later.
"""

import json
from dataclasses import replace

import pytest

from resumecheck import verify
from resumecheck.assertions import ResumeNotEquivalent, describe_failure, require_equivalent
from resumecheck.report import RunResult

from fixtures.trust import consequences, stale_snapshot

pytestmark = pytest.mark.e2e

ISOLATION = ["inprocess", pytest.param("process", marks=pytest.mark.process)]


_REPORTS = {}


def _full(target, isolation):
    """The check of a module-level target, made once per process (tests only read it)."""
    key = (id(target), isolation)
    if key not in _REPORTS:
        _REPORTS[key] = verify(target, drop="none", noise_seeds=0, isolation=isolation)
    report = _REPORTS[key]
    return report, report.full_resume


@pytest.mark.parametrize("isolation", ISOLATION)
def test_after_the_run_diverged_later_resume_points_are_not_blamed(isolation):
    report, full = _full(consequences.BUGGY, isolation)
    first, second = consequences.SCHEDULE
    assert full.verdict == "diverged" and first < full.first_divergent_step <= second
    # params, optimizer and rng differ from the reference at the second point,
    # but only because the run diverged: the checkpoint restores them as saved
    assert [(f.component, f.step, f.status, f.basis) for f in full.diagnosis] == [
        ("scheduler", first, "confirmed", "reference")]
    assert not any(f.confirmed for f in full.diagnosis if f.step == second)
    assert full.latent_gaps == []
    assert report.declared_state_complete


def test_twin_of_the_two_resume_program_is_equivalent():
    report, full = _full(consequences.CORRECT, "inprocess")
    assert report.equivalent and full.diagnosis == []


@pytest.mark.parametrize("isolation", ISOLATION)
def test_a_stale_snapshot_that_changes_no_sample_is_not_the_cause(isolation):
    report, full = _full(stale_snapshot.STALE_AND_RNG_LOST, isolation)
    assert full.verdict == "diverged"
    by = {f.component: f for f in full.diagnosis}
    assert set(by) == {"rng", "data_cursor"}
    assert (by["rng"].status, by["rng"].confirmed) == ("confirmed", True)
    # the loader reports position 0 right after its load, yet every sample is right
    assert (by["data_cursor"].status, by["data_cursor"].confirmed) == ("not_cause", False)
    assert "position 0" in by["data_cursor"].detail
    assert full.first_divergent_quantity != "data (the samples consumed)"
    assert "data_cursor (differs; put right alone, the run departs no later)" in full.explanation
    assert full.latent_gaps == []


def test_a_stale_snapshot_alone_changes_no_step_but_is_lost_on_a_second_resume():
    """Every step after the restart matches; a save right after the load keeps
    the stale position, and a restart from it departs. A trial read EQUIVALENT,
    exit 0, beside that departure: the checkpoint loses it on a second resume."""
    report, full = _full(stale_snapshot.STALE, "inprocess")
    assert not report.equivalent and report.outcome == "NOT EQUIVALENT"
    assert full.verdict == "identical"
    assert [(f.component, f.status, f.confirmed) for f in full.diagnosis] == [
        ("data_cursor", "lost_on_resave", False)]
    assert full.latent_gaps == [] and full.lost_on_resave() == ["data_cursor"]
    # (the evidence: a save right after the load keeps the stale position)
    assert "your save() right after your load() at step 9, and a restart from that " \
        "checkpoint, depart from the uninterrupted run at step 10" in full.diagnosis[0].detail
    assert full.explanation.startswith(
        "every step after the restart matches bit for bit, but your save() right after your "
        "load(), and a restart from that checkpoint, depart from the uninterrupted run: a "
        "checkpoint written right after a restore, before any step, loses data_cursor (a "
        "later one, before your code sets it again, may too)")  # (trial 839)
    text = report.render("table")
    assert ("full resume: NOT EQUIVALENT: every step after the restart matches, but your save() "
            "right after your load(), and a restart from that checkpoint, depart from the "
            "uninterrupted run: a checkpoint written right after a restore, before any step, "
            "loses `data_cursor` (a later one, before your code sets it again, may too) (see "
            "the diagnosis)") in text
    assert "full resume (own save/load): identical" in describe_failure(report)
    # (a trial: the table and Markdown printed no reproduce line for it)
    assert f"reproduce: {full.reproduce}" in text
    assert f"`{full.reproduce}`" in report.render("markdown")
    with pytest.raises(ResumeNotEquivalent):
        require_equivalent(report)
    from resumecheck.pytest_plugin import _markdown_cells, _summary_row

    entry = {"nodeid": "t", "target": "x", "report": report.to_json()}
    assert ("full resume: NOT EQUIVALENT (a save right after the load loses data_cursor)"
            in _summary_row(entry))
    assert _markdown_cells(entry)[2] == (
        "**NOT equivalent** (a save right after the load loses data_cursor)")


def test_a_position_worked_out_from_the_step_in_another_form_is_no_gap():
    """A trial's correct distributed loop kept its position as the step and
    worked it out at load in another form than its lazily rolled-over counters
    (epoch 2, position 0 for epoch 1, position 8): "latent gap ... (from step
    13)", where steps 9 to 16 had run, and matched. A save right after the load
    and a restart from it continue alike: put back, no gap; the twin that
    forgets the position is put back too at the epoch's end, and caught mid-epoch."""
    from fixtures.trust import position_from_step as fx

    for target in (fx.FROM_STEP, fx.EPOCH_ONLY):
        report = verify(target, drop="none", noise_seeds=0, check_determinism=False)
        own = report.full_resume
        assert report.equivalent and own.latent_gaps == [], report.render()
        assert [(f.component, f.status) for f in own.diagnosis] == [
            ("data_cursor", "put_back"), ("sampler_epoch", "put_back")]
        assert "the end of one epoch and the start of the next are one position" in \
            own.diagnosis[0].detail
        # (trial 416: "put back by the program" of a position no step changed)
        line = own.diagnosis[0].line_in(own, None)
        assert line.endswith("(one position in another form: every later step matches, and "
                             "it ends as in the uninterrupted run)"), line
        assert "put back by the program" not in line
    lost = verify(replace(fx.EPOCH_ONLY, resume_at=(6,)), drop="none", noise_seeds=0,
                  check_determinism=False).full_resume
    assert (lost.verdict, lost.first_divergent_step) == ("diverged", 7)
    assert [(f.component, f.status) for f in lost.diagnosis] == [("data_cursor", "confirmed")]


def test_a_position_its_own_component_restores_in_another_form_is_no_gap_of_the_engine():
    """Trial 810: a declared position whose load_state_dict() works the place out
    from the step gives the other form in the engine's restore too: the
    engine's row read "latent gap: data_cursor" and each ablation "restored
    state differs in data_cursor", where the own resume's note said one position."""
    from fixtures.trust import position_from_step as fx

    report = verify(fx.CURSOR_FROM_STEP, drop=["params", "rng"], noise_seeds=0,
                    check_determinism=False)
    own, engine, *drops = report.runs
    assert report.equivalent and engine.verdict == "identical", report.render()
    for run in (own, engine):
        assert run.latent_gaps == [] and [(f.component, f.status) for f in run.diagnosis] == [
            ("data_cursor", "put_back")], run
        assert "the end of one epoch and the start of the next are one position" in \
            run.diagnosis[0].detail
    assert "latent gap" not in engine.explanation, engine.explanation
    for run in drops:
        assert run.verdict == "diverged" and "data_cursor" not in run.explanation, run
    # (the loop's own position restored exactly by the engine: nothing to say of it)
    plain = verify(fx.FROM_STEP, drop="none", noise_seeds=0, check_determinism=False)
    assert plain.runs[1].diagnosis == []


def test_a_position_in_its_other_form_beside_the_cause_says_it_may_be_one_position():
    """Trial 395: a failing report listed the position, in its other form at
    an epoch's end, as a diagnosis beside the cause, where a passing report
    says the two forms are one position."""
    from fixtures.trust import position_from_step as fx

    own = verify(fx.LOSES_STREAM, drop="none", noise_seeds=0,
                 check_determinism=False).full_resume
    assert own.verdict == "diverged"
    said = {f.component: (f.status, f.detail) for f in own.diagnosis}
    assert said["rng"][0] == "confirmed"
    for name in ("data_cursor", "sampler_epoch"):
        assert said[name][0] == "not_cause" and said[name][1].endswith(
            ": at an epoch's end, the end of one epoch and the start of the next may be one "
            "position in two forms"), said[name]


def test_the_loader_that_reports_its_pending_state_is_equivalent():
    report, full = _full(stale_snapshot.CORRECT, "inprocess")
    assert report.equivalent and full.diagnosis == []


def test_table_markdown_and_json_mark_each_finding_as_the_json_does():
    report, _ = _full(stale_snapshot.STALE_AND_RNG_LOST, "inprocess")
    table = report.render("table")
    assert "diagnosis: rng: " in table
    lines = {line.split(":")[1].strip(): line for line in table.splitlines()
             if line.startswith("diagnosis: ")}
    assert lines["rng"].endswith("(confirmed)")
    assert lines["data_cursor"].endswith("(differs; put right alone, the run departs no later)")
    assert ("data_cursor: position 0, expected 8 (differs; put right alone, the run departs no "
            "later)") in report.render("markdown")
    data = json.loads(report.render("json"))
    statuses = {f["component"]: (f["status"], f["basis"]) for f in data["runs"][0]["diagnosis"]}
    assert statuses == {"rng": ("confirmed", "reference"), "data_cursor": ("not_cause", "reference")}
    latent = _full(stale_snapshot.STALE, "inprocess")[0].render("table")
    assert "diagnosis: data_cursor: position 0, expected 8; " in latent
    assert "at step 10, in data (the samples consumed): a save before the state is set right " \
        "loses it (lost on a second resume: a save right after the load departs)" in latent


def test_causes_that_help_only_together_behind_a_confirmed_one_are_confirmed():
    """A trial: a load that lost the weights, the stream and the step counter;
    the step counter, put right alone, moved the divergence and was confirmed,
    and the weights and the stream, each put right on top of it alone, were
    "differs, not the cause" (the other still departed). Together they are."""
    from fixtures.trust import three_lost

    report = verify(three_lost.BUGGY, drop="none", noise_seeds=0)
    own = report.full_resume
    assert own.verdict == "diverged" and own.first_divergent_step == 5
    status = {f.component: f.status for f in own.diagnosis}
    assert status == {"params": "confirmed", "rng": "confirmed",
                      "global_step": "confirmed"}, own.explanation
    assert verify(three_lost.CORRECT, drop="none", noise_seeds=0).equivalent


def test_causes_hidden_behind_causes_found_on_top_are_sought_again_until_none_is_left(
        monkeypatch):
    """A trial: a load that picked the older of two checkpoints restored every
    component of step 8 at step 10; the weights and the stream were
    confirmed, and the optimizer and the scheduler, each put right on top of
    those once, were "differs, not the cause": with the weights put right the
    optimizer's momentum shows, and with that put right the scheduler's.
    Each rerun is a segment of its own name (another trial: the second round
    reused the first's names, and in process mode the check crashed on the
    files of the first)."""
    from fixtures.trust import older_checkpoint
    from resumecheck import engine

    names = []
    run_segment = engine.run_segment

    def noting(spec, *args, **kwargs):
        names.append((spec.workdir, spec.name))
        return run_segment(spec, *args, **kwargs)

    monkeypatch.setattr(engine, "run_segment", noting)
    own = verify(older_checkpoint.BUGGY, drop="none", noise_seeds=0).full_resume
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)
    assert own.verdict == "diverged" and own.first_divergent_step == 11
    assert {f.component: f.status for f in own.diagnosis} == dict.fromkeys(
        ["params", "optimizer", "scheduler", "rng", "global_step"], "confirmed"), own.explanation
    # and what it was: the weights are the reference's of two steps before
    # (the trial's real loop ran on from the restored step and repeated them)
    assert ("(the reference's weights after step 8, 2 steps before the resume point: your "
            "load() restored an older checkpoint; a loop that runs on from the step it "
            "restored would repeat those steps") in own.diagnosis[0].detail
    # and the run's row says it first: every other finding follows from it
    # (a trial read five confirmed components as five bugs)
    assert own.explanation.startswith(
        "your load() restored an older checkpoint, the uninterrupted run's state after step 8 "
        "at step 10 (its weights are, bit for bit): what differs follows from that"), \
        own.explanation
    assert verify(older_checkpoint.CORRECT, drop="none", noise_seeds=0).equivalent


def _params_confirmed_alone(target, step: int) -> str:
    """The one finding of a full resume that diverges from ``step``: ``params``,
    confirmed; its detail (``target``: a program, or its full resume's result)."""
    own = (target if isinstance(target, RunResult)
           else verify(target, drop="none", noise_seeds=0).full_resume)
    assert own.verdict == "diverged" and own.first_divergent_step == step, own.explanation
    [finding] = own.diagnosis
    assert (finding.component, finding.status) == ("params", "confirmed")
    return finding.detail


def test_a_model_a_load_leaves_in_eval_mode_is_named_and_confirmed():
    """A trial: a load() that validated the restored model and forgot .train()
    was told "no declared component's state (what it saves) differs right after your load()", with
    hints toward the data pipeline (a module's mode is not in its state_dict())."""
    from fixtures.trust import eval_after_load

    own = verify(eval_after_load.BUGGY, drop="none", noise_seeds=0).full_resume
    assert _params_confirmed_alone(own, step=5).startswith(
        "left in eval mode after the load (the module and 4 of its submodules), in train mode "
        "at step 4 in the uninterrupted run: dropout and batch norm, where it has them, act "
        "otherwise (a load() that calls .eval(), evaluates, or keeps the mode its build set, "
        "must call .train() after)")
    # the why names what differs: the mode, not the weights (a trial read `ema (differs,
    # not the cause)` as its checkpointed weights suspect)
    assert "restored state differs in the train/eval mode of params (confirmed)" in \
        own.explanation
    # (a trial: the stream line named only an iterator, in a program that made none)
    # (trial 568: the mode a rerun confirmed, the draws it leaves out are put to it alone;
    # the diagnosis above says what eval mode does to dropout)
    [stream] = own.stream_offsets
    assert stream.detail.endswith(
        ": step 5 read state that differs right after the restore (params, which a rerun "
        "confirmed as the run's cause), and a step that reads it otherwise draws otherwise: "
        "these draws follow from it"), stream.detail
    assert verify(eval_after_load.CORRECT, drop="none", noise_seeds=0).equivalent


def test_modes_a_program_sets_while_it_trains_are_restored_by_the_engine_and_named_when_lost():
    """A trial: a program that freezes its batch norm after some steps, and
    whose load() freezes it again, got a WARNING that the declared components
    did not capture its state (the engine's own restore left the mode of a
    fresh build) and every ablation inconclusive; a load() that forgets the
    freeze was said to be "in another mode", without which or what to do."""
    from fixtures.trust import eval_after_load

    report = verify(eval_after_load.FROZEN, noise_seeds=0)
    assert report.equivalent and report.declared_state_complete, report.render()
    assert report.incomplete_state_notice() in ("", None)
    assert not any(r.verdict == "inconclusive" for r in report.runs)
    assert _params_confirmed_alone(eval_after_load.FORGETS_THE_FREEZE, step=6).startswith(
        "in train mode after the load (its submodule `1`), in eval mode at step 5 in the "
        "uninterrupted run, which set that mode while it trained")


def test_a_mode_the_program_sets_itself_before_it_matters_is_put_back_not_a_gap():
    """A trial: an EMA put in eval mode for each evaluation, saved and loaded
    right, was "latent gap: ema restored wrongly ... a load() must set it
    again": its mode after the load is a fresh build's, but the program sets
    it before it matters and it ends as in the uninterrupted run."""
    from fixtures.trust import eval_after_load

    report = verify(eval_after_load.EMA_IN_EVAL, drop="none", noise_seeds=0)
    own = report.full_resume
    assert report.equivalent and own.verdict == "identical"
    [finding] = own.diagnosis
    assert finding.component == "ema" and finding.status == "put_back"
    assert finding.detail.startswith("in train mode after the load")
    assert own.latent_gaps == [] and "latent gap" not in own.explanation


def test_beside_a_confirmed_cause_a_mode_the_program_puts_back_reads_as_where_it_resumes():
    """Trial 166: the EMA's mode, a note in a report that resumed, was "(differs,
    not the cause)" in the why of one whose load lost the step counter."""
    from fixtures.trust import eval_after_load

    report = verify(eval_after_load.EMA_AND_STEP_LOST, drop="none", noise_seeds=0)
    own = report.full_resume
    assert own.verdict == "diverged" and own.first_divergent_step == 4
    step, ema = sorted(own.diagnosis, key=lambda f: f.component != "global_step")
    assert (step.component, step.status) == ("global_step", "confirmed")
    assert (ema.component, ema.status) == ("ema", "put_back")
    assert "mode of ema" not in own.explanation
    assert "put right alone, the run departs no later" not in own.explanation
    assert ("\nnote: ema: in train mode after the load" in report.render())
    assert ema.mark_in(own, None) == (" (put back by the program: setting it right changes "
                                      "nothing, and it ends as in the uninterrupted run)")
    # (where the run resumes, the mark says that every later step matched)
    resumed = verify(eval_after_load.EMA_IN_EVAL, drop="none", noise_seeds=0).full_resume
    assert "every later step matches" in resumed.diagnosis[0].mark_in(resumed, None)


def test_beside_lost_state_a_mode_the_program_sets_itself_is_not_named():
    """A trial: `ema: n_averaged 0, expected 8; in train mode after the load
    ..., a load() must set it again (confirmed)`: the mode played no part
    (the program puts the EMA in eval mode for each evaluation)."""
    from fixtures.trust import eval_after_load

    own = verify(eval_after_load.EMA_FORGOTTEN, drop="none", noise_seeds=0).full_resume
    [finding] = own.diagnosis
    assert finding.component == "ema" and finding.status == "confirmed"
    assert "mode" not in finding.detail, finding.detail


def test_a_component_lost_at_every_restart_is_confirmed_by_putting_it_right_at_each():
    """A trial: a scheduler lost at both restarts of 3,6 (only its end state
    differs) was 'differs, not the cause': the rerun put it right at 3 and the
    program's load lost it again at 6."""
    from fixtures.bugs.class01_scheduler_not_saved import BUGGY_STEPPED_TWICE, CORRECT_STEPPED_TWICE

    own = verify(BUGGY_STEPPED_TWICE, drop="none", noise_seeds=0).full_resume
    assert own.verdict == "diverged", own
    [finding] = own.diagnosis
    assert (finding.component, finding.step, finding.status) == ("scheduler", 3, "confirmed")
    assert verify(CORRECT_STEPPED_TWICE, drop="none", noise_seeds=0).equivalent


def test_a_failure_that_differs_only_in_integers_says_no_magnitude_is_measured():
    """A trial: the pytest failure read '|Δ| -, relative -, - ULP'."""
    import resumecheck

    with pytest.raises(AssertionError) as info:
        resumecheck.assert_resume_equivalent(
            "fixtures.bugs.class01_scheduler_not_saved:BUGGY_STEPPED_TWICE", noise_seeds=0)
    said = str(info.value)
    assert "what differs holds no floating-point values, so no |Δ| is measured" in said, said
    assert "|Δ| -" not in said


def test_a_scheduler_made_again_in_load_is_named_with_what_to_change():
    """A trial: a load() that made its LambdaLR again after loading the
    optimizer was told "one stepped in or after your load()", stepped nothing,
    loaded the scheduler's state as well, and still diverged: a scheduler's
    constructor sets the rate. The advice names that, and following it resumes."""
    from fixtures.trust import scheduler_made_in_load

    own = verify(scheduler_made_in_load.BUGGY, drop="none", noise_seeds=0).full_resume
    [finding] = own.diagnosis
    assert (finding.component, finding.status) == ("optimizer", "confirmed")
    assert ("one made there (a scheduler's constructor sets the rate: make it before the "
            "optimizer's state is loaded)") in finding.detail, finding.detail
    assert verify(scheduler_made_in_load.CORRECT, drop="none", noise_seeds=0).equivalent


def test_a_scheduler_made_again_at_the_step_reached_is_said_to_be_a_step_ahead():
    """Trial 475: a load() that made its scheduler again with last_epoch= the
    step reached (its constructor steps once) read `scheduler: last_epoch 8,
    expected 7 (and 5 more entries ...)`, with no cause: a scheduler's state was
    read as a second optimizer's, whose causes are its groups' rates."""
    from fixtures.trust import scheduler_made_in_load

    own = verify(scheduler_made_in_load.MADE_AT_THE_STEP_REACHED, drop="none",
                 noise_seeds=0, check_determinism=False).full_resume
    found = {f.component: f for f in own.diagnosis}
    assert found["scheduler"].status == "confirmed", own.diagnosis
    assert found["scheduler"].detail.startswith("last_epoch 5, expected 4"), found["scheduler"]
    assert "; one step ahead: stepped once more in or after the load (a scheduler made there " \
        "with last_epoch= steps once as it is made)" in found["scheduler"].detail, \
        found["scheduler"].detail


def test_a_scheduler_left_stepping_the_optimizer_of_the_build_is_named():
    """A trial: a load() that made the optimizer again left the scheduler on
    the old one; every component's state came back alike, and the why blamed
    a schedule's settings. Which optimizer the scheduler steps is named."""
    from fixtures.trust import scheduler_made_in_load

    own = verify(scheduler_made_in_load.OPTIMIZER_MADE_AGAIN, drop="none",
                 noise_seeds=0).full_resume
    assert own.verdict == "diverged" and own.first_divergent_quantity == "learning rate"
    [finding] = own.diagnosis
    assert finding.component == "scheduler" and finding.status is None
    assert finding.detail.startswith(
        "steps an optimizer no component declares after the load, where at step 4 the "
        "uninterrupted run's stepped the declared `optimizer`: a scheduler keeps the optimizer "
        "it was made with"), \
        finding.detail
    assert "not judged: putting the uninterrupted run's state in does not change" in \
        finding.detail
    # (trial 840: "restored state differs in scheduler" of one whose state came back alike)
    assert "restored state differs in which optimizer scheduler steps" in own.explanation
    assert "a schedule's own settings" not in own.explanation


def test_a_deque_made_again_without_its_maxlen_is_named_on_its_component():
    """A trial: a load() that made the clip history's deque again without its
    maxlen diverged with no diagnosis at all; its items were alike right after
    the load, and it grew from the next step."""
    spec = "fixtures.trust.deque_maxlen:"
    own = verify(spec + "BUGGY", drop="none", noise_seeds=0).full_resume
    assert own.verdict == "diverged"
    assert [(f.component, f.status) for f in own.diagnosis] == [("clip_history", "confirmed")]
    assert own.diagnosis[0].detail.startswith(
        "a deque of maxlen None after the load, 3 at step 5 in the uninterrupted run"), \
        own.diagnosis[0].detail
    assert verify(spec + "CORRECT", drop="none", noise_seeds=0).equivalent


def test_a_deque_behind_a_component_of_the_programs_own_is_named_with_its_maxlen():
    """A trial: a memory queue whose component listed the deque's items in its
    state and whose load() made it again without its maxlen was told only of
    "a setting of a declared object that its state leaves out"."""
    spec = "fixtures.trust.deque_maxlen:"
    own = verify(spec + "OWN_BUGGY", drop="none", noise_seeds=0).full_resume
    assert [(f.component, f.status) for f in own.diagnosis] == [("clip_history", "confirmed")]
    assert own.diagnosis[0].detail.startswith(
        "the deque whose items its state lists (its `.program.norms`) has maxlen None after "
        "the load, 3 at step 5 in the uninterrupted run"), own.diagnosis[0].detail
    assert verify(spec + "OWN_CORRECT", drop="none", noise_seeds=0).equivalent


def test_a_run_whose_loss_never_differs_is_called_silent_not_plausible():
    """Two trials read "plausible" beside a max |Δloss| of 0: state nothing
    in training reads (an EMA of the weights), lost, changes only the end state."""
    import fixtures.bugs.class18_global_step as c18

    report = verify(c18.CORRECT, drop=["ema"], noise_seeds=2, check_determinism=False)
    [run] = [r for r in report.runs if r.dropped == ["ema"]]
    assert run.verdict == "diverged" and run.first_divergent_quantity.startswith("state of")
    assert run.plausible is True and not run.max_abs_loss_diff
    assert run.noise_label == "silent"
    row = next(line for line in report.render("table").splitlines()
               if line.startswith("drop ema"))
    assert " 0            silent  the final state of ema differs" in row, row
    # (trial 497: an EMA dropped, its weights apart at every step, read "only what it ends
    # with" of its row)
    lines = report.render().splitlines()
    # (trial 811: a loss scale apart at three steps, alike after them, read as ending otherwise)
    assert ("noise: silent (of a row marked so): the training loss does not differ at all; "
            "something else does, which its why names: a quantity of a step (a loss scale, a "
            "learning rate, a gradient, a parameter), what the run ends with, or state its steps "
            "keep that reaches no loss (an average of the weights)") in lines
    assert any("in a row marked silent, only what no loss shows), not a failure" in line
               for line in lines)


def test_a_rate_that_departs_first_with_every_component_alike_names_the_schedules_settings():
    """A trial: a load() made the scheduler from the default settings' warm-up,
    in a run launched with another and restarted with the launch settings;
    every declared component came back alike, and the why named only
    samplers, iterators and counters."""
    from fixtures.trust import scheduler_made_in_load

    own = verify(scheduler_made_in_load.DEFAULT_WARMUP, drop="none", noise_seeds=0,
                 check_determinism=False).full_resume
    assert own.verdict == "diverged" and own.first_divergent_key == "lr", own.explanation
    assert own.diagnosis == []
    assert ("; the learning rate is the first to differ: a schedule's own settings are in no "
            "state_dict() (a LambdaLR's function and what it reads, such as a warm-up length;"
            ) in own.explanation, own.explanation


def test_every_optimizer_step_of_a_two_optimizer_loop_is_traced():
    """A trial's GAN: its checkpoint lost the critic's scheduler, and the
    divergence showed first in the loss, with `not traced: learning rate ...
    give the program an optimizer attribute`: only one optimizer, under that
    name, was hooked, and only its last step of the training step kept."""
    from fixtures.trust import two_optimizers as fx

    lost = verify(fx.LOSES_CRITIC_SCHEDULER, drop="none", noise_seeds=0,
                  check_determinism=False)
    assert lost.untraced == []
    own = lost.full_resume
    # (a trial: "learning rate" did not say which of the two optimizers' it was)
    assert (own.first_divergent_step, own.first_divergent_quantity) == (
        5, "learning rate of `opt_c`")
    assert [(f.component, f.status) for f in own.diagnosis] == [("sched_c", "confirmed")]
    kept = verify(fx.KEEPS_IT, drop=["opt_c"], noise_seeds=0, check_determinism=False)
    assert kept.equivalent and kept.untraced == []
    # (the critic's gradients, stepped twice a training step, are both traced)
    assert kept.runs[-1].verdict == "diverged"


def test_a_parameter_stepped_twice_in_a_training_step_is_traced_at_each_step():
    from fixtures.trust import two_optimizers as fx
    from resumecheck import trace
    from resumecheck.program import BuiltProgram

    built = BuiltProgram.wrap("gan", fx.Loop({}))
    tracer = trace.Tracer(built, None)
    tracer.before_step(1)
    record = tracer.after_step(1, built.step(1), False)
    tracer.close()
    grads = sorted(k for k in record.digests if k.startswith("grad:"))
    assert "grad:critic.0.weight" in grads and "grad:critic.0.weight@2" in grads
    assert "grad:generator.0.weight" in grads and "grad:generator.0.weight@2" not in grads
    assert len(record.lr or []) == 3  # (the critic's two steps, the generator's one)
    assert record.lr_of == ["opt_c", "opt_c", "opt_g"]


def test_a_save_right_after_the_load_that_writes_a_stale_snapshot_is_caught():
    """A trial: a save() that writes the position snapshotted as the last step
    ended, which load() does not set, wrote position 0 right after a resume;
    every declared component was right after the load, so nothing showed, and
    every command said EQUIVALENT. The full resume is now tried once more with
    a save right after its load; its twin, whose load() sets the snapshot, resumes."""
    from tests import programs

    report = verify(programs.SNAPSHOT_FORGOTTEN, drop="none", noise_seeds=0,
                    check_determinism=False)
    full = report.full_resume
    assert not report.equivalent and full.verdict == "identical"
    assert full.lost_on_resave() == ["data_cursor"]
    [lost] = [f for f in full.diagnosis if f.status == "lost_on_resave"]
    assert lost.detail.startswith(
        "0, expected 4 right after a restart from your save() made right after your load() at "
        "step 4; that restart departs from the uninterrupted run at step 5, in data")
    assert [f.component for f in full.diagnosis] == ["data_cursor"]  # (streams no step draws)
    # (a trial: its row read "identical" under the headline's NOT EQUIVALENT)
    [row] = [line for line in report.render().splitlines()
             if line.startswith("full resume (own save/load)")]
    assert row.split("  ")[1].strip() == "identical, lost on resave"
    # (trial 565: the pytest failure's "identical" under "not equivalent" read as a false alarm)
    from resumecheck.assertions import describe_failure
    assert "  full resume (own save/load): identical, but a save right after the load " \
        "departs\n" in describe_failure(report), describe_failure(report)
    assert verify(programs.SNAPSHOT, drop="none", noise_seeds=0,
                  check_determinism=False).equivalent


def test_an_older_checkpoint_leads_the_why_and_the_row_even_where_the_weights_are_not_confirmed():
    """Trial 157: a load that picked the oldest kept checkpoint had its data
    position and epoch confirmed (they put the first departing step right)
    and its weights, the reference's of four steps before, "differs, not the
    cause": the row read `DIVERGED (confirmed: data_cursor, sampler_epoch)`."""
    from resumecheck.pytest_plugin import _confirmed_text
    from resumecheck.report import Finding
    from resumecheck.verdict import _older_checkpoint_text

    weights = Finding("params", "fc1.weight differs (the reference's weights after step 8, 4 "
                      "steps before the resume point: your load() restored an older checkpoint; "
                      "a loop that runs on ...)", step=12, status="not_cause")
    cursor = Finding("data_cursor", "8, expected 4", step=12, status="confirmed")
    own = RunResult(dropped=[], resume_at=[12], verdict="diverged", checkpoint="program",
                    diagnosis=[weights, cursor])
    lead = _older_checkpoint_text(own)
    assert lead.startswith("your load() restored an older checkpoint, the uninterrupted run's "
                           "state after step 8 at step 12"), lead
    own.explanation = lead + "data (the samples consumed) differs from step 13"
    assert _confirmed_text(own.to_json()) == " (your load() restored an older checkpoint)"


class _VocabReversedOnLoad:
    """A vocabulary built sorted; the load rebuilds it in reverse order."""

    words = ["alpha", "bravo", "charlie", "delta"]

    def __init__(self, settings):
        import torch

        torch.manual_seed(0)
        self.vocab = {w: i for i, w in enumerate(sorted(self.words))}
        self.embed = torch.nn.Embedding(4, 2)
        self.opt = torch.optim.SGD(self.embed.parameters(), lr=0.1)

    def components(self):
        from resumecheck import Attr

        return {"params": self.embed, "optimizer": self.opt, "vocab": Attr(self, "vocab")}

    def train_step(self):
        import torch

        ids = torch.tensor([self.vocab[w] for w in self.words[:2]])
        loss = self.embed(ids).pow(2).sum()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.detach()

    def save(self, path):
        import torch

        torch.save({"embed": self.embed.state_dict(), "opt": self.opt.state_dict()}, path)

    def load(self, path):
        import torch

        state = torch.load(path)
        self.embed.load_state_dict(state["embed"])
        self.opt.load_state_dict(state["opt"])
        self.vocab = {w: i for i, w in enumerate(sorted(self.words, reverse=True))}


def test_a_blind_spot_confirmed_as_the_full_resumes_cause_says_both():
    """Trial 157: a vocabulary confirmed as the cause of the own resume's
    departure was listed on the last line as a blind spot, as if nothing
    showed it."""
    from resumecheck import Target

    report = verify(Target(factory=_VocabReversedOnLoad, steps=4, resume_at=(2,)),
                    drop=["vocab"], noise_seeds=0)
    own, dropped = report.full_resume, report.runs[-1]
    assert own.verdict == "diverged" and dropped.blind_spot
    assert [(f.component, f.status) for f in own.diagnosis] == [("vocab", "confirmed")]
    assert ("blind spot: vocab (dropping it from the engine's restore changed no step after "
            "the restart at 2: "
            "not proof that it is saved; yet vocab, confirmed above: the full resume's "
            "restore gives it otherwise, where what a drop leaves (a fresh build's, or what "
            "another declared component puts back) holds it as the run did)") in report.render()
    # (trial 158: the row, the JSON and the test's row said only "blind spot"; trial 414:
    # what a drop leaves may be another component's, where a fresh build's differs)
    assert ("; yet the full resume departs on it (confirmed in its row): dropping vocab from the "
            "engine's restore leaves it as a fresh build makes it, or as another declared "
            "component puts it back") in dropped.explanation
    from resumecheck.pytest_plugin import _summary_row

    row = _summary_row({"nodeid": "t", "target": "x", "report": report.to_json()})
    assert "vocab: blind spot, yet confirmed in the full resume" in row, row


class _RecordsTheStep:
    """A tracker that records the step counter (an early stopping's best step),
    declared apart from it; the learning rate reads the counter only late."""

    def __init__(self, config: dict) -> None:
        from fixtures.hostile.programs import Config, Small

        self.inner = Small(Config(**config))
        self.last_step = 0

    def components(self) -> dict:
        from resumecheck import Attr

        return {**self.inner.components(), "tracker": Attr(self, "last_step")}

    def train_step(self):
        out = self.inner.train_step()
        self.last_step = self.inner.step
        return out


def test_an_ablations_later_restore_says_its_other_state_is_as_this_run_saved_it():
    """Trial 420: `drop global_step`, restarted at 15 and 28, read "restored
    state differs in early_stopping": a best step recorded from the counter the
    first restart dropped, which the engine restored at 28 as the run saved it."""
    from resumecheck import Target

    target = Target(factory=_RecordsTheStep, run_config={"lr_halves_at": 8}, steps=10,
                    resume_at=(3, 6), restart_config="run")
    report = verify(target, drop=["global_step"], noise_seeds=0, check_determinism=False)
    [run] = [r for r in report.runs if r.dropped == ["global_step"]]
    assert run.first_divergent_step == 8
    assert [(f.component, f.step) for f in run.diagnosis] == [("tracker", 6)]
    assert "; restored state differs in tracker (as this run saved it at 6, after its " \
        "restart at 3 without global_step)" in run.explanation, run.explanation


def test_a_position_in_its_other_form_at_a_first_restore_is_not_blamed_for_a_later_loss():
    """Trial 416: restarted at an epoch's end (4), where epoch 1, position 0 is
    epoch 0's end in another form, and again at 6, where the position is lost
    for real. The diagnosis confirmed the epoch, which only the first restore
    saw otherwise: put right from 4 on without the position, the run read
    another place at once, and the two together were said to be the cause."""
    from fixtures.trust import position_from_step as fx

    own = verify(fx.EPOCH_ONLY, resume_at=[4, 6], drop="none", noise_seeds=0,
                 check_determinism=False).full_resume
    assert own.first_divergent_step == 7
    by = {f.component: f for f in own.diagnosis}
    one_position = (": at an epoch's end, the end of one epoch and the start of the next may "
                    "be one position in two forms")
    assert by["data_cursor"].status == "confirmed"
    assert by["data_cursor"].detail == f"0, expected 8{one_position}; at the restore at 6: 0, " \
        "expected 4"
    assert by["sampler_epoch"].status == "not_cause"
    assert by["sampler_epoch"].detail == f"1, expected 0{one_position}"


def test_a_confirmed_position_at_an_epochs_end_says_only_part_of_it_may_be_wrong():
    """Trial 427: a load that counted one batch too many once an epoch had
    ended read "data_cursor: epoch 1, expected 0 (and 1 more entry ...: seen 1,
    expected 13) (confirmed)", leading with the epoch, which was right in the
    position's other form at an epoch's end; only the count was wrong."""
    from fixtures.trust import position_from_step as fx

    own = verify(fx.ONE_CURSOR_SKIPS_ONE, drop="none", noise_seeds=0,
                 check_determinism=False).full_resume
    [finding] = own.diagnosis
    assert (finding.component, finding.status) == ("data_cursor", "confirmed")
    assert finding.detail == (
        "epoch 2, expected 1 (and 1 more entry of its state_dict() differs: pos 2, expected 8)"
        ": at an epoch's end, the end of one epoch and the start of the next may be one "
        "position in two forms: of what differs, only part may be wrong (a place within the "
        "epoch, where the epoch is right in the other form)")
    # inside an epoch, a position is in one form only: nothing is added
    inside = verify(fx.ONE_CURSOR_SKIPS_ONE, resume_at=[10], drop="none", noise_seeds=0,
                    check_determinism=False).full_resume
    assert [f.detail for f in inside.diagnosis] == [
        "pos 6, expected 4"], inside.diagnosis


def test_a_scheduler_made_again_at_the_step_before_resumes_with_no_latent_gap():
    """Trial 829: a LambdaLR made in the load with last_epoch= the step before
    (the correct twin) resumed bit for bit, its count of step() calls at 1 where
    the run's was 5, which only torch's warning on the order of calls reads; it
    read "latent gap: scheduler", and --strict failed."""
    from fixtures.trust import scheduler_made_in_load

    report = verify(scheduler_made_in_load.MADE_AT_THE_STEP_BEFORE, drop="none",
                    noise_seeds=0, check_determinism=False)
    own = report.full_resume
    assert report.equivalent and own.verdict == "identical", report.render()
    assert not own.latent_gaps and not own.diagnosis, (own.latent_gaps, own.diagnosis)
    assert "latent" not in report.render()


def test_a_rate_set_by_a_scheduler_a_step_ahead_is_said_to_follow_from_it():
    """Trial 829: beside a scheduler made in the load with last_epoch= the step
    reached, the optimizer's rate line advised making the scheduler before the
    optimizer's state is loaded, which put back the first step's rate and left
    the schedule a step ahead."""
    from fixtures.trust import scheduler_made_in_load

    own = verify(scheduler_made_in_load.MADE_AT_THE_STEP_REACHED, drop="none",
                 noise_seeds=0, check_determinism=False).full_resume
    rate = next(f for f in own.diagnosis if f.component == "optimizer")
    assert "which `scheduler` sets, and that one came back a step ahead" in rate.detail, rate
    assert "make it before the optimizer's state is loaded" not in rate.detail, rate.detail
    assert "last_epoch= the step before the one reached" in rate.detail, rate.detail
