"""Every run checkpoints at the resume points, as the run a resume is compared
with did: a save() that moves state the continuation reads is judged against
the run that saved (fixtures/trust/save_side_effects.py; a trial: the
reference never called save(), so a correct program whose save() validates
was blamed, and one whose save() draws after saving its stream passed)."""

from __future__ import annotations

import pytest

from fixtures.trust import save_side_effects as fx
from resumecheck import verify
from resumecheck.errors import SaveMovesState
from resumecheck.fuzz import fuzz


@pytest.mark.parametrize("target", [fx.CORRECT, fx.VALIDATES], ids=["correct", "validates"])
def test_a_save_that_moves_the_stream_before_saving_it_resumes(target):
    report = verify(target, noise_seeds=0)
    assert report.equivalent, report.render("table")
    assert report.full_resume.checkpoint == "program"
    assert report.engine_resume.verdict == "identical"
    drop_rng = next(r for r in report.runs if r.dropped == ["rng"])
    assert drop_rng.verdict == "diverged"  # (the stream is read: the check can see it)


def test_a_save_that_draws_after_saving_the_stream_is_caught_and_blamed_on_it():
    report = verify(fx.SAMPLES_AFTER, drop="none", noise_seeds=0)
    own = report.full_resume
    assert own.verdict == "diverged" and own.first_divergent_step == 5, report.render("table")
    assert [(f.component, f.status) for f in own.diagnosis] == [("rng", "confirmed")]
    assert report.engine_resume.verdict == "identical"


def test_the_why_says_what_the_save_changed():
    report = verify(fx.SAMPLES_AFTER, drop="none", noise_seeds=0)
    assert "your save() changes state that training reads (at step 4: rng)" in \
        report.full_resume.explanation, report.full_resume.explanation
    report = verify(fx.LEAVES_EVAL, drop="none", noise_seeds=0)
    assert "your save() changes state that training reads (at step 4: params (its modules' " \
           "train/eval modes))" in report.full_resume.explanation
    # (a trial: the diagnosis said training set the mode and sent the fix to load())
    [modes] = [f for f in report.full_resume.diagnosis if f.component == "params"]
    assert "where your save() at step 4 set that mode" in modes.detail
    assert "the save is what to fix, not the load" in modes.detail
    assert "while it trained" not in modes.detail
    assert "your save()" not in verify(fx.CORRECT, drop="none", noise_seeds=0).full_resume \
        .explanation


def test_fuzzing_refuses_a_program_whose_save_changes_what_training_reads():
    with pytest.raises(SaveMovesState) as caught:
        fuzz(fx.SAMPLES_AFTER, max_examples=2, budget=30)
    assert caught.value.step == 8 and caught.value.moved == ["rng"]  # (asked at its end)
    assert "--resume-at 4" in (caught.value.reproduce or "")
    assert fuzz(fx.CORRECT, max_examples=2, budget=30).failure is None
