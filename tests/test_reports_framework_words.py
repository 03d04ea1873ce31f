"""A framework target's own resume is the framework's restore and save: its
report names them where a program of your own would read "your load()" and
"your save()" (``verdict.in_its_words``; a trial wrote no load() and was told
"your load() left it there")."""

from __future__ import annotations

from resumecheck.report import Finding, RunResult
from resumecheck.verdict import in_its_words, reworded_lines

LIGHTNING = {"restored_by": "Lightning's restore", "saved_by": "Lightning's checkpoint save"}


def _run() -> RunResult:
    return RunResult(
        dropped=[], resume_at=[4], verdict="diverged", checkpoint="program",
        explanation="loss differs from step 5; no declared component differs right after "
                    "your load(): what it leaves different is state you did not declare",
        divergence_detail="what your save() wrote",
        diagnosis=[Finding("scheduler", "not judged: putting `scheduler` right after your load() "
                           "changed nothing", fix="see what your save() stores")])


def test_a_framework_targets_texts_name_its_restore_and_save():
    run = _run()
    in_its_words(run, LIGHTNING)
    # (the adapter declares a framework target's components, not the user: a trial)
    assert run.explanation.endswith("right after Lightning's restore: what it leaves different "
                                    "is state no declared component holds")
    assert run.divergence_detail == "what Lightning's checkpoint save wrote"
    assert run.diagnosis[0].detail.startswith(
        "not judged: putting `scheduler` right after Lightning's restore")
    assert run.diagnosis[0].fix == "see what Lightning's checkpoint save stores"
    assert reworded_lines(["x; your own resume held it otherwise right after your load() at "
                           "step 4"], LIGHTNING) == [
        "x; your own resume held it otherwise right after Lightning's restore at step 4"]


def test_a_program_of_your_own_keeps_your_load():
    run = _run()
    in_its_words(run, {"restored_by": None, "saved_by": None})
    assert run == _run()


def test_timings_header_names_a_frameworks_save():
    """A trial: `resumecheck timing` of an Accelerate loop said `(your save())`."""
    from resumecheck.timing import TimingReport

    def header(saved_by=None):
        report = object.__new__(TimingReport)  # (only the header's words: no measured ranks)
        report.checkpoint, report.saved_by = "program", saved_by
        return report._checkpointed_by()

    assert header(saved_by="Accelerate's save_state()") == "Accelerate's save_state()"
    assert header() == "your save()"


def test_a_framework_targets_lost_uncompared_state_may_be_set_anew_after_its_restore():
    """Trial 648: a Trainer callback's on_train_begin reset counters its
    checkpoint held; the line said only that the checkpoint loses them."""
    from resumecheck.verdict import CHECKPOINT_LOSES, NOT_STATE

    line = (f"not compared: cb.seen (int); your own resume (save/load) ends with it otherwise "
            f"than the uninterrupted run did: {CHECKPOINT_LOSES}, {NOT_STATE}")
    [framework] = reworded_lines([line], LIGHTNING)
    theirs = NOT_STATE.replace("Target(not_state=...)", "the target's not_state=...")
    assert (f": {CHECKPOINT_LOSES}, or a hook that runs after the restore sets it anew (a "
            f"callback's on_train_begin, on_fit_start or on_train_start), {theirs}"
            ) in framework, framework
    [own] = reworded_lines([line], {})
    assert own == line


def test_a_framework_targets_not_state_is_the_targets_own():
    """Trial 678: a trainer_target's user was told to name a log in
    Target(not_state=...), where the argument is the target function's."""
    line = ("not compared: trainer.loss_log (list); unless it is not state (a log, a timer: "
            "name it in Target(not_state=...))")
    [framework] = reworded_lines([line], LIGHTNING)
    assert "name it in the target's not_state=...)" in framework, framework
    assert reworded_lines([line], {}) == [line]
