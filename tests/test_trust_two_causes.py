"""A finding that changes the resumed run when put right, while the run still
departs where it did for something else, is not called "not the cause"
(fixtures/trust/two_causes.py; a trial: a stream one draw ahead beside a
loader's workers seeded from it read "rng differs, not the cause")."""

from __future__ import annotations

from fixtures.trust import two_causes
from resumecheck import verify


def _own(target):
    report = verify(target, drop="none", noise_seeds=0)
    return report, report.full_resume


def test_a_finding_that_matters_beside_another_cause_says_so_and_is_not_cleared():
    report, own = _own(two_causes.TWO_CAUSES)
    assert own.checkpoint == "program" and own.verdict == "diverged"
    assert own.first_divergent_step == 5
    assert report.engine_resume.verdict == "identical"  # (the declared state is complete)
    (rng,) = own.diagnosis
    assert rng.component == "rng" and rng.status is None and rng.confirmed is None
    assert rng.detail.endswith(
        "; putting it right alone changes the run, which still departs at step 5: it matters, "
        "and something else differs too (another finding, or state no component declares)"
    ), rng.detail
    for line in own.stream_offsets:
        assert "put right alone, the run departs no later" not in line.detail, line.detail
    assert "put right alone, the run departs no later" not in report.render("table")


def test_restarted_again_after_it_departed_the_rerun_is_not_said_to_show_that_it_matters():
    """A trial: a loader generator the program set right in the step after its
    restore at 3 was said to matter, restarted again at 10: the rerun put the
    uninterrupted run's state in at 10 too, which the departed run did not
    hold there, and the change may come from there alone."""
    report = verify(two_causes.TWO_CAUSES, drop="none", noise_seeds=0, resume_at=[4, 7])
    (rng,) = report.full_resume.diagnosis
    assert rng.status is None and "it matters, and" not in rng.detail
    assert rng.detail.endswith(
        "; putting it right alone changes the run, which still departs at step 5: the rerun put "
        "the uninterrupted run's state in at the later restart at step 7 too, which this run, "
        "departed from step 5, did not hold there, so the change may come from there alone: "
        "whether it matters here is not shown"), rng.detail


def test_the_same_lost_stream_alone_is_confirmed_and_the_correct_load_resumes():
    _, own = _own(two_causes.STREAM_ONLY)
    assert [(f.component, f.status) for f in own.diagnosis] == [("rng", "confirmed")]
    report, own = _own(two_causes.CORRECT)
    assert report.equivalent and own.verdict == "identical", report.render("table")


def test_causes_found_only_together_are_put_right_before_the_others_are_tried_again():
    """Trial 160: a load that kept the weights and the step alone; the first
    resumed step's samples came right only with the data position and the
    epoch put right together, and the optimizer's lost momentum, which
    changes what those two leave, read "differs, not the cause". What the
    joint causes leave is tried as what one confirmed cause leaves is
    (``fixtures/trust/weights_and_step_only.py``)."""
    from resumecheck.report import CONFIRMED

    spec = "fixtures.trust.weights_and_step_only:"
    own = verify(spec + "WEIGHTS_AND_STEP", drop="none", noise_seeds=0).full_resume
    assert own is not None and own.first_divergent_step == 7
    assert {f.component: f.status for f in own.diagnosis} == {
        "optimizer": CONFIRMED, "data_cursor": CONFIRMED, "sampler_epoch": CONFIRMED}
    assert verify(spec + "CORRECT", drop="none", noise_seeds=0).equivalent
