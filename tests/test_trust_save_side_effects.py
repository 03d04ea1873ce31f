"""Every run checkpoints at the resume points, as the run a resume is compared
with did: a save() that moves state the continuation reads is judged against
the run that saved (fixtures/trust/save_side_effects.py; a trial: the
reference never called save(), so a correct program whose save() validates
was blamed, and one whose save() draws after saving its stream passed)."""

from __future__ import annotations

import pytest

from fixtures.trust import save_side_effects as fx
from resumecheck import verify


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
