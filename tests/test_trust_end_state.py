"""A run whose every step matches and whose end state does not: the report
says how the state ends, gives figures only where something that differs
has a magnitude, and does not put the difference "within seed-to-seed
noise" when the loss never differed (``fixtures/trust/end_state_only.py``:
a ReduceLROnPlateau left out of the checkpoint, its patience never used up)."""

from __future__ import annotations

import pytest

from resumecheck import verify
from resumecheck.report import DIVERGED, IDENTICAL


def test_a_state_that_differs_only_at_the_end_is_described_there():
    report = verify("fixtures.trust.end_state_only:BUGGY", drop=["global_step"],
                    noise_seeds=2)
    own, _, dropped = report.runs
    assert own.verdict == DIVERGED and own.max_abs_loss_diff == 0
    assert (own.first_divergent_step, own.first_divergent_quantity) == (16, "state of scheduler")
    # how it ends, not only how it was right after the load (the diagnosis)
    assert own.divergence_detail.startswith("scheduler at the end: best 0.7417")
    assert "expected 0.6961" in own.divergence_detail
    assert own.max_abs_diff == pytest.approx(0.7417685 - 0.6961151, rel=1e-5)
    assert "nothing in the training loss shows it: silent but different" in own.explanation
    assert "seed-to-seed noise" not in own.explanation
    # a counter has no magnitude: no figures, not zeros
    assert dropped.dropped == ["global_step"] and dropped.verdict == DIVERGED
    assert dropped.divergence_detail == "global_step at the end: 8, expected 16"
    assert dropped.max_abs_diff is None and dropped.max_ulp_diff is None


def test_its_twin_that_saves_the_scheduler_resumes():
    report = verify("fixtures.trust.end_state_only:CORRECT", drop="none", noise_seeds=0)
    assert report.equivalent and report.full_resume.verdict == IDENTICAL


def test_a_dropped_component_that_ends_otherwise_is_named_before_what_it_moved():
    """A trial: `drop global_step` named `state of plateau at the end`, the
    best loss its evaluation schedule moved, and not the step count itself,
    because the program declared the plateau first."""
    from tests.programs import EVAL_BY_STEP

    report = verify(EVAL_BY_STEP, drop=["global_step"], noise_seeds=0)
    dropped = report.runs[-1]
    assert dropped.dropped == ["global_step"] and dropped.verdict == DIVERGED
    assert dropped.first_divergent_quantity == "state of global_step (and of best)"
    assert dropped.divergence_detail == "global_step at the end: 4, expected 8"
    assert "the final state of global_step (and of best) differs" in dropped.explanation
    assert "state of global_step (and of best) at the end" in report.render()


def test_an_undeclared_mean_that_only_moves_a_schedulers_end_is_named_as_lost():
    """A trial: a running mean a plateau scheduler was stepped with, left out of
    the checkpoint, changed only the scheduler's end. Its `not compared` line
    said that the resume "had departed at step 16" and that its end "says
    nothing of your checkpoint"; the why gave no lead; `drop global_step`,
    which ends with 8 for 16, read inconclusive, "its trajectory identical to
    the full resume's divergence"."""
    report = verify("fixtures.trust.end_state_only:RUNNING_MEAN_LOST", noise_seeds=0)
    assert not report.equivalent
    own, engine = report.full_resume, report.engine_resume
    assert own.ended_otherwise == ["scheduler"] and engine.ended_otherwise == ["scheduler"]
    [line] = report.undeclared
    assert line.startswith("mean (float: None or not set at the build, "), line  # (trial 402)
    assert line.endswith("; your own resume held it otherwise right after your load() at step 8 "
                         "and after step 9, and ends with it otherwise, every step matching: "
                         "your checkpoint loses it, unless it is not state (a log, a timer: name "
                         "it in Target(not_state=...))")
    assert ("no declared component's state (what it saves) differs right after your load(): "
            "what it leaves different "
            "is state you did not declare (a running mean a scheduler is stepped with"
            ) in own.explanation, own.explanation
    assert "the run still ends otherwise in the state of scheduler (every step matches)" \
        in report.incomplete_state_notice()
    by_dropped = {tuple(r.dropped): r for r in report.runs if r.dropped}
    step = by_dropped[("global_step",)]
    assert step.verdict == DIVERGED and step.ended_otherwise == ["global_step", "scheduler"]
    assert step.explanation.endswith(
        "the engine's full resume of every declared component ends otherwise too, in "
        "scheduler, but not in global_step, and the two differ only in restoring "
        "global_step: it matters here, to its own end state alone (every step matched "
        "without it)"), step.explanation
    params = by_dropped[("params",)]
    assert params.verdict == DIVERGED and params.explanation.endswith(
        "; the engine's full resume of every declared component departs in no step (it ends "
        "otherwise in the state of scheduler), and the two differ only in restoring params: "
        "it matters here"), params.explanation
    scheduler = by_dropped[("scheduler",)]
    # (it ends otherwise in the scheduler as the full resume does, but not alike:
    # a fresh scheduler's count, where the full resume restored it)
    assert scheduler.verdict == "inconclusive" and not scheduler.same_as_full_resume
    assert "identical" not in scheduler.explanation
    assert report.to_json()["runs"][0]["ended_otherwise"] == ["scheduler"]


def test_its_twin_that_saves_the_mean_resumes():
    report = verify("fixtures.trust.end_state_only:RUNNING_MEAN", noise_seeds=0)
    assert report.equivalent, report.render()
    assert report.full_resume.ended_otherwise == []


def test_state_lost_at_every_restore_is_named_at_each():
    """A trial: an EMA's update count lost at both restores of `6,11` was
    named at the second only."""
    report = verify("fixtures.trust.end_state_only:RUNNING_MEAN_LOST", noise_seeds=0,
                    drop="none", resume_at=[4, 10])
    [line] = report.undeclared
    assert "; your own resume held it otherwise right after your load() at steps 4 and 10 and " \
           "after steps 5 and 11, and ends with it otherwise, every step matching" in line, line


def test_state_the_first_step_sets_again_is_not_named_where_only_the_end_differs():
    """A trial: a collator's generator, seeded again for every batch, was named
    beside the lost state, its resume said to have "departed at the next step"
    where no step departed at all."""
    report = verify("fixtures.trust.end_state_only:RUNNING_MEAN_RESEEDED", noise_seeds=0,
                    drop="none")
    assert [line.split(" (")[0] for line in report.undeclared] == ["mean"], report.undeclared


def test_a_resume_that_ends_otherwise_alone_says_so_in_its_headline_and_row():
    """Trials 539, 555: a Lightning twin whose streams ended a draw off, every
    step alike, read as a false alarm under a bare NOT EQUIVALENT and DIVERGED.
    Trials 577, 587: said in words, it still failed a correct program, and led
    a real bug's diagnosis: a stream whose draws changed no step is a latent
    gap (``verdict.end_state_differences``), which --strict fails; state other
    than a stream that ends otherwise is NOT EQUIVALENT, and says so."""
    report = verify("fixtures.trust.stream_drawn_unread:TARGET", drop="none", noise_seeds=0)
    assert report.equivalent
    own = report.full_resume
    assert own.latent_gaps == ["rng"] and own.verdict == "identical"
    assert [(f.component, f.status) for f in own.diagnosis] == [("rng", "latent")]
    assert report.render().splitlines()[1] == (
        "full resume: EQUIVALENT; latent gap: rng restored otherwise than the uninterrupted "
        "run had it, in state that changed no step here (see the diagnosis)")
    assert "the run ends with rng otherwise than the uninterrupted run" in own.explanation
    # (left out on purpose, it still counts as that row's divergence)
    dropped = verify("fixtures.trust.stream_drawn_unread:TARGET", drop=["rng"],
                     noise_seeds=0).runs[-1]
    assert dropped.dropped == ["rng"] and dropped.verdict == "diverged"
    # (trial 564: of other state, "would differ" overclaimed: a count off by a whole
    # period of its scheduler never changed a step)
    other = verify("fixtures.trust.end_state_only:BUGGY", drop="none", noise_seeds=0)
    assert other.render().splitlines()[1].endswith(
        "silent here, not harmless: a later step, or a restart after it, that reads it may "
        "differ (see the diagnosis)"), other.render().splitlines()[1]

