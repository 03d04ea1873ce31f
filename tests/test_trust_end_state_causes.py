"""Where only the end state differs, a rerun that leaves fewer components
ending otherwise helps: a best loss put right at its restore is confirmed as
a cause beside a generator that still ends otherwise (trial 181: "differs, not
the cause") (fixtures/trust/best_beside_reseeded.py)."""

from __future__ import annotations

from resumecheck import verify
from resumecheck.report import CONFIRMED, DIVERGED
from resumecheck.verdict import Comparison, rerun_helps

FAST = {"noise_seeds": 0, "drop": "none", "check_determinism": False}


def test_a_best_loss_lost_beside_a_generator_that_ends_otherwise_is_confirmed():
    report = verify("fixtures.trust.best_beside_reseeded:LOSES_BEST", **FAST)
    own = report.full_resume
    assert own.verdict == DIVERGED and own.ended_otherwise == ["best_val", "eval_rng"]
    status = {f.component: f.status for f in own.diagnosis}
    assert status["best_val"] == CONFIRMED, own.diagnosis
    assert status["eval_rng"] != CONFIRMED
    assert "put right in a rerun, none of what differs" not in own.explanation


def test_an_end_state_rerun_helps_when_fewer_components_end_otherwise():
    ran = (12, "state:best_val")
    fewer = Comparison(first=(12, "state:eval_rng"), ended_otherwise=["eval_rng"])
    same = Comparison(first=(12, "state:best_val"), ended_otherwise=["best_val", "eval_rng"])
    other = Comparison(first=(12, "state:eval_rng"), ended_otherwise=["eval_rng", "optimizer"])
    assert rerun_helps(fewer, ran, ["best_val", "eval_rng"])
    assert not rerun_helps(same, ran, ["best_val", "eval_rng"])
    assert not rerun_helps(other, ran, ["best_val", "eval_rng"])
    assert not rerun_helps(fewer, ran)  # (not told what the run ends otherwise in: as before)
    assert rerun_helps(Comparison(), ran, ["best_val"])
