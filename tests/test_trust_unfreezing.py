"""Parameter groups added while training (progressive unfreezing): the
program's own resume is judged; the engine's restore into a fresh build
cannot rebuild the groups, and says why (fixtures/trust/unfreezing.py)."""

from __future__ import annotations

from resumecheck import verify
from resumecheck.report import OWN_EQUIVALENT


def test_the_engines_restore_names_the_added_groups_and_its_own_capture_not_a_gone_file():
    """A trial: `checkpoint load failed (/tmp/resumecheck-.../reference.capture8.pt):
    ... a different number of parameter groups`, a file gone once the check
    ended, and a WARNING that pointed at DataLoader iterators."""
    report = verify("fixtures.trust.unfreezing:CORRECT", drop="none", noise_seeds=0)
    own, engine = report.runs
    assert report.equivalent and own.verdict == "identical"
    assert engine.verdict == "failed"
    assert ("checkpoint load failed (the engine's capture at step 5): optimizer.load_state_dict "
            "raised ValueError") in engine.failure
    assert "/tmp" not in engine.failure and "capture5.pt" not in engine.failure
    assert ("the program changes its optimizer's parameter groups while it trains "
            "(add_param_group") in engine.failure
    notice = report.incomplete_state_notice().removeprefix(OWN_EQUIVALENT + " ")
    assert notice.startswith("The engine's own restore of the declared components into a "
                             "fresh build fails: ") and "add_param_group" in notice
    assert "DataLoader" not in notice  # (nothing undeclared is lost: a trial)
    # (trial 281: "which ... the engine's restore of the declared components cannot")
    assert ("the engine's restore where a component declared before the optimizer adds them "
            "in its load_state_dict()") in engine.failure


def test_a_component_that_unfreezes_before_the_optimizer_lets_the_engine_restore_and_is_needed():
    """Trial 281: declared before the optimizer, a component whose load adds the
    groups again makes the engine's full resume identical; its own drop fails
    the restore, which is what shows it needed (it read as a failed row, and
    assert_components_exercised could not tell)."""
    from resumecheck import assert_components_exercised
    from resumecheck.phrases import CANNOT_RESTORE_WITHOUT

    report = verify("fixtures.trust.unfreezing:WITH_FREEZE", drop=["freeze"], noise_seeds=0,
                    check_determinism=False)
    engine = report.engine_resume
    assert report.equivalent and engine is not None and engine.verdict == "identical"
    [dropped] = [r for r in report.runs if r.dropped]
    assert dropped.verdict == "failed"
    assert dropped.explanation.endswith(
        "; the engine's full resume, which restores `freeze` too, restored this capture: "
        f"without `freeze` {CANNOT_RESTORE_WITHOUT}, so the program needs it")
    assert_components_exercised("fixtures.trust.unfreezing:WITH_FREEZE", components=["freeze"],
                                noise_seeds=0, check_determinism=False)
    # (trial 457: the passing test's row read `freeze: failed`)
    from resumecheck.pytest_plugin import _summary_row
    row = _summary_row({"nodeid": "t.py::t", "target": "t", "report": report.to_json()})
    assert "freeze: exercised: the restore fails without it" in row, row


def test_parameters_a_load_leaves_frozen_are_named_and_confirmed():
    """A trial: a load that added the unfrozen layers' group again but left
    them frozen was "gradient of backbone.0.bias ... differs", and "no
    declared component differs right after your load()"."""
    report = verify("fixtures.trust.unfreezing:STAYS_FROZEN", drop="none", noise_seeds=0)
    own = report.runs[0]
    assert own.verdict == "diverged" and own.first_divergent_step == 6
    assert own.first_divergent_quantity.endswith(
        "(none in the resumed run: that parameter got no gradient)")
    [finding] = own.diagnosis
    assert finding.component == "params" and finding.status == "confirmed"
    # (trial 494: "a load() must" of a Trainer program with no load())
    assert finding.detail.endswith(
        "so a load() must set it again (under a framework's restore, the code of yours that "
        "freezes or unfreezes them, by the framework's own step count)"), finding.detail
    # (trial 494 read "restored state differs in params" as weights not restored)
    assert "restored state differs in which parameters of params train (requires_grad) " \
        "(confirmed)" in own.explanation, own.explanation
    assert finding.detail.startswith(
        "parameters `0.0.bias`, `0.0.weight` left frozen after the load (requires_grad False), "
        "trainable at step 5 in the uninterrupted run: they get no gradient where it had one")


def test_with_gradients_clipped_the_gradients_one_run_lacks_are_named_first():
    """Trial 304: every other gradient rescaled by the clipping, the first
    divergence named the largest of them, the head's bias, not the frozen
    layers that got none."""
    own = verify("fixtures.trust.unfreezing:CLIPPED_STAYS_FROZEN", drop="none",
                 noise_seeds=0, check_determinism=False).runs[0]
    assert own.verdict == "diverged" and own.first_divergent_step == 6
    assert own.first_divergent_quantity.startswith("gradient of 0.0."), \
        own.first_divergent_quantity
    # (trial 494: "the largest of 41 gradients" of one of 5 one run lacked, ranked first)
    assert own.first_divergent_quantity.endswith(
        " (2 gradients one run lacks, this one among them, of 4 that differ) (none in the "
        "resumed run: that parameter got no gradient)"), own.first_divergent_quantity


def test_a_frozen_finding_whose_rerun_did_not_help_is_not_judged_not_the_cause():
    """A trial: a Trainer callback that freezes the embeddings, whose state the
    resume did not restore, was "(differs, not the cause)" of the departure it
    caused: a rerun setting requires_grad after the load may come after the
    framework built its optimizer over the trainable parameters."""
    from resumecheck.report import Finding, RunResult
    from resumecheck.verdict import frozen_in, settle_findings

    finding = Finding("params", "`emb.weight` trainable after the load, frozen at step 6 in "
                      "the uninterrupted run: they get a gradient where it had none: "
                      "requires_grad is not in a state_dict(), so a load() must set it again "
                      "(under a framework's restore, the code of yours that freezes or "
                      "unfreezes them, by the framework's own step count)",
                      step=6)
    assert frozen_in(finding)
    run = RunResult(dropped=[], resume_at=[6], verdict="diverged", first_divergent_step=7,
                    first_divergent_quantity="loss", diagnosis=[finding])
    settle_findings(None, run, {0: None})  # type: ignore[arg-type]  (not read: it departed)
    [settled] = run.diagnosis
    assert settled.status is None and settled.confirmed is None
    assert settled.detail.endswith("; not judged: setting requires_grad as the uninterrupted run "
                                   "had it, where the check puts state in after your load(), "
                                   "left the run departing where it did, but that may not be "
                                   "where your program (or "
                                   "its framework) builds the optimizer over the trainable "
                                   "parameters or freezes them itself")


def test_frozen_flags_otherwise_after_the_engines_restore_are_said_changed_not_lossy():
    """Trial 388: a Trainer callback that froze layers in on_train_begin, after
    the engine's restore had set requires_grad as captured, read "a declared
    component does not load back its own state" and "`params` did not come
    back as its state_dict() gave it": the values had come back."""
    from resumecheck.phrases import frozen_only
    from resumecheck.report import CHANGED_ONE, LOSSY_ONE, Finding, _lossy_notice

    report = verify("fixtures.trust.unfreezing:STAYS_FROZEN", drop="none", noise_seeds=0)
    [finding] = report.runs[0].diagnosis
    assert frozen_only(finding.detail), finding.detail
    assert not frozen_only("fc.weight differs; parameters `a` left frozen after the load")
    frozen = Finding("params", finding.detail, step=5)
    notice = _lossy_notice([frozen], "differs from step 6 (loss)", "", "",
                           framework="the HuggingFace Trainer's restore")
    assert notice.startswith(CHANGED_ONE) and LOSSY_ONE not in notice, notice
    # (trial 433: "Right after the restore" of a value that came back and was changed after)
    assert "At the first step after the restore, `params`: " in notice, notice


def test_parameters_the_step_freezes_again_itself_are_a_note_not_a_load_to_mend():
    """Trial 407: a callback set requires_grad at each batch's start from a
    count its checkpoint kept. Every report said the parameters, trainable
    after the load, "get a gradient where it had none" and that "a load()
    must set it again", and the correct program had a latent gap in params:
    the first step after the load gave gradients to the same parameters."""
    from fixtures.trust import frozen_by_count

    report = verify(frozen_by_count.CORRECT, drop="none", noise_seeds=0,
                    check_determinism=False)
    own = report.full_resume
    assert report.equivalent and own.verdict == "identical" and own.latent_gaps == []
    [note] = own.diagnosis
    assert note.put_back() and note.status == "put_back", note
    assert note.detail == (
        "parameters `0.bias`, `0.weight` trainable after the load, frozen at step 3 in the "
        "uninterrupted run: the program sets requires_grad again itself: step 4, the first "
        "after the restore, gave a gradient to the same parameters as in the uninterrupted run")
    assert "latent gap" not in report.render("table")

    # the count lost, the run departs: the frozen parameters are no cause, and said so
    report = verify(frozen_by_count.LOSES_COUNT, drop="none", noise_seeds=0,
                    check_determinism=False)
    own = report.full_resume
    assert own.first_divergent_step == 4
    by = {f.component: f for f in own.diagnosis}
    assert by["global_step"].status == "confirmed"
    assert by["params"].status == "not_cause", by["params"]
    assert "a gradient where it had none" not in by["params"].detail
    assert "a load() must set it again" not in by["params"].detail


def test_a_step_that_steps_fewer_parameter_groups_says_so():
    """Trial 457: dropping the step count delayed an unfreeze keyed on it, and the
    row read "learning rate differs" with no figures, where the rate of the one
    group stepped was alike and the uninterrupted run stepped a second."""
    report = verify("fixtures.trust.unfreezing:OWN_CURSOR", drop=["global_step"], noise_seeds=0,
                    check_determinism=False)
    assert report.equivalent
    [dropped] = [r for r in report.runs if r.dropped]
    assert (dropped.verdict, dropped.first_divergent_step) == ("diverged", 4)
    assert dropped.divergence_detail == (
        "learning rate of step 4: 1 rate (0.01) where the uninterrupted run stepped 2 (0.01, "
        "0.001): a parameter group it stepped did not step in this run (one added with "
        "add_param_group during the run, or an optimizer that steps only at some steps, "
        "decided by state that differs here: a counter of steps); at step 4 the uninterrupted "
        "run has a gradient of `0.0.bias`, `0.0.weight`, which the resumed run's has none of "
        "(parameters one run's loss reached and the other's did not: a part of the model one "
        "used, or one left frozen in the other)")


def test_a_component_a_resumed_step_fails_without_is_exercised_and_its_row_says_so():
    """Trial 533: a hard-negative cache a fresh build does not have; without it
    the first resumed step raised, the exercised test passed, and its row read
    `hard_cache: failed`; the CLI's note on the drop rows said nothing of it."""
    from resumecheck import assert_components_exercised
    from resumecheck.pytest_plugin import _summary_row

    report = assert_components_exercised("fixtures.trust.needed_cache:TARGET",
                                         components=["cache"], noise_seeds=0,
                                         check_determinism=False)
    [dropped] = [r for r in report.runs if r.dropped]
    assert dropped.verdict == "failed" and dropped.first_divergent_step == 5
    row = _summary_row({"nodeid": "t.py::t", "target": "t", "report": report.to_json()})
    assert "cache: exercised: without it the run fails at step 5" in row, row
    assert "; `failed` there, that the run without it raised or stopped (its why says where), " \
        "as a program that needs it may;" in report.render()


def test_state_loaded_before_its_group_was_added_back_is_named_though_state_dict_reads_alike():
    """Trial 879: a load that loaded the optimizer before adding the unfrozen group
    back left the backbone's Adam state under the saved indices, which state_dict()
    packs onto the new group: every declared state read as restored, and the why
    sent the user to undeclared state."""
    report = verify("fixtures.trust.unfreezing:LOADS_BEFORE_ADDING", drop="none",
                    noise_seeds=0, check_determinism=False)
    own = report.full_resume
    assert own.verdict == "diverged", own.explanation
    [finding] = [f for f in own.diagnosis if f.component == "optimizer"]
    assert finding.status == "confirmed", finding
    assert finding.detail.startswith("its live state holds 2 entries under keys that are no "
                                     "parameter of it"), finding.detail
    assert "add the groups first, then load" in finding.detail
    assert "state you did not declare" not in own.explanation, own.explanation
    assert verify("fixtures.trust.unfreezing:WITH_FREEZE", drop="none", noise_seeds=0).equivalent
