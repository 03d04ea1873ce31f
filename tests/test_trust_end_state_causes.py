"""Where only the end state differs, a rerun that leaves fewer components
ending otherwise helps: a best loss put right at its restore is confirmed as
a cause beside another that still ends otherwise (trial 181: "differs, not
the cause"); a stream the run held right before its last restore is judged
from that restore (fixtures/trust/best_beside_reseeded.py)."""

from __future__ import annotations

from resumecheck import verify
from resumecheck.report import CONFIRMED, DIVERGED, LATENT, RunResult
from resumecheck.verdict import Comparison, rerun_helps

FAST = {"noise_seeds": 0, "drop": "none", "check_determinism": False}


def test_a_best_loss_lost_beside_a_generator_that_ends_otherwise_is_confirmed():
    report = verify("fixtures.trust.best_beside_reseeded:LOSES_BEST", **FAST)
    own = report.full_resume
    assert own.verdict == DIVERGED and own.ended_otherwise == ["best_val", "evals"]
    status = {f.component: f.status for f in own.diagnosis}
    assert status["best_val"] == status["evals"] == CONFIRMED, own.diagnosis
    assert "put right in a rerun, none of what differs" not in own.explanation
    # the generator, seeded again before each draw: a latent gap at the restore at 10,
    # as where 10 is the only restart (trial 181: that passed, and 1,10 failed on it)
    assert status["eval_rng"] == LATENT and "eval_rng" in own.latent_gaps
    alone = verify("fixtures.trust.best_beside_reseeded:LOSES_BEST", resume_at=[10], **FAST)
    assert alone.equivalent and "eval_rng" in alone.full_resume.latent_gaps


def test_an_end_state_rerun_helps_when_fewer_components_end_otherwise():
    ran = (12, "state:best_val")
    run = RunResult(dropped=[], resume_at=[1, 10], verdict=DIVERGED, first_divergent_step=12,
                    first_divergent_key="state:best_val", ended_otherwise=["best_val", "eval_rng"])
    fewer = Comparison(first=(12, "state:eval_rng"), ended_otherwise=["eval_rng"])
    same = Comparison(first=(12, "state:best_val"), ended_otherwise=["best_val", "eval_rng"])
    other = Comparison(first=(12, "state:eval_rng"), ended_otherwise=["eval_rng", "optimizer"])
    assert rerun_helps(fewer, ran, run)
    assert not rerun_helps(same, ran, run)
    assert not rerun_helps(other, ran, run)
    assert not rerun_helps(fewer, ran)  # (not told what the run ends otherwise in: as before)
    # (a divergence left by causes already put right is not the run's own: as before)
    assert not rerun_helps(fewer, (12, "state:optimizer"), run)
    assert rerun_helps(Comparison(), ran, run)


def test_a_stream_set_again_after_the_restore_is_a_blind_spot_said_as_a_stream():
    """Trials 180, 181: a generator's blind spot read "(a best loss that a later
    evaluation beats, a value recomputed from other state)"."""
    report = verify("fixtures.trust.best_beside_reseeded:LOSES_BEST", resume_at=[7],
                    drop=["eval_rng"], noise_seeds=0, check_determinism=False)
    [dropped] = [r for r in report.runs if r.dropped == ["eval_rng"]]
    assert dropped.blind_spot, dropped.explanation
    assert dropped.explanation.endswith(
        "as the uninterrupted run does: the program set it again before any step's loss, "
        "gradients or parameters showed it (a generator seeded again before the draws a step "
        "reads: a sampler that seeds it each epoch)")
    # (trial 682: its blind spot's lines gave the advice of a component never read too)
    from resumecheck.errors import ComponentsNotExercised

    lines = str(ComponentsNotExercised(report, ["eval_rng"])).splitlines()
    assert "what would exercise each is said below" in lines[1], lines
    assert "for a component of your own" not in "\n".join(lines), lines
    assert any(line.startswith("eval_rng: right after the restore it differed, and the program "
                               "set it again") for line in lines), lines
