"""Elastic resume: checkpointed at N ranks, restarted at M != N
(``--nproc N --resume-nproc M``). The first tests need no launch; the rest
start real ranks (three launches each: the reference, the first half, the
restart at M) on 4 steps with a restart at 2."""

from __future__ import annotations

import pytest

from resumecheck.compare import Tolerance
from resumecheck.elastic import judge_elastic, unmapped_state
from resumecheck.errors import InvalidArgument
from resumecheck.report import RunResult
from resumecheck.segments import SegmentResult
from resumecheck.settings import Settings
from resumecheck.trace import StepRecord

NAMES = ["params", "rng[rank 0]", "rng[rank 1]", "data_cursor[rank 0]", "data_cursor[rank 1]"]


@pytest.mark.parametrize(("fields", "says"), [
    ({"resume_nproc": 1}, "give nproc too"),
    ({"nproc": 2, "resume_nproc": 2}, "equals nproc=2"),
    ({"nproc": 2, "resume_nproc": 0}, "expected an int >= 1"),
    ({"nproc": 2, "resume_nproc": 1, "drop": ["rng[rank 1]"]}, "full resume"),
])
def test_resume_nproc_is_validated_with_the_settings(fields, says):
    with pytest.raises(InvalidArgument, match="resume_nproc") as info:
        Settings(**fields)
    assert says in str(info.value)
    Settings(nproc=2, resume_nproc=1, drop="none")


def test_per_rank_state_that_cannot_map_is_named_both_ways():
    assert unmapped_state(NAMES, 2, 1) == [
        "data_cursor[rank 1]: no rank 1 at 1 rank(s); its state is restored on no rank",
        "rng[rank 1]: no rank 1 at 1 rank(s); its state is restored on no rank",
    ]
    grown = unmapped_state(["params", "rng[rank 0]"], 1, 2)
    assert grown == ["rng[rank 1]: rank 1 is new at 2 ranks; the checkpoint of 1 rank(s) "
                     "holds no state of its own for it"]
    assert unmapped_state(["params"], 2, 1) == []


def _seg(losses, start, names=("params",)):
    records = [StepRecord(step=start + i + 1, loss=x, digests={}) for i, x in enumerate(losses)]
    return SegmentResult(records=records, names=list(names), captures={}, end_state=None)


def _judge(ref_names, continuation):
    ref = _seg([1.0, 0.9, 0.8, 0.7], 0, ref_names)
    result = RunResult(dropped=[], resume_at=[2], verdict="inconclusive", checkpoint="program",
                       nproc=1)
    judge_elastic(ref, result, [(0, _seg([1.0, 0.9], 0)), (2, _seg(continuation, 2))],
                  Tolerance.close(), 2, 1)
    return result


def test_a_continuation_beyond_the_tolerance_diverges_when_every_state_maps():
    close = _judge(["params"], [0.8 + 1e-7, 0.7])
    assert close.verdict == "close" and close.unmapped == []
    far = _judge(["params"], [0.8, 0.71])
    assert far.verdict == "diverged"
    assert (far.first_divergent_step, far.first_divergent_quantity) == (4, "loss")
    assert far.max_abs_loss_diff == pytest.approx(0.01)


def test_a_continuation_beyond_the_tolerance_is_inconclusive_when_per_rank_state_was_lost():
    result = _judge(NAMES, [0.8, 0.71])
    assert result.verdict == "inconclusive"
    assert "rng[rank 1]: no rank 1 at 1 rank(s)" in result.explanation
    assert "cannot judge" in result.explanation


# -- real launches ---------------------------------------------------------------------

FAST = {"noise_seeds": 0, "check_determinism": False, "steps": 4, "resume_at": 2,
        "drop": "none"}


def _elastic(target, n, m):
    from resumecheck.engine import verify

    report = verify(target, nproc=n, resume_nproc=m, **FAST)
    assert [(r.checkpoint, r.nproc) for r in report.runs] == [("program", m)]  # no ablations
    assert report.tolerance["mode"] == "close"  # never bit for bit across world sizes
    assert f"--nproc {n} --resume-nproc {m}" in report.runs[0].reproduce
    return report, report.runs[0]


@pytest.mark.e2e
@pytest.mark.distributed
@pytest.mark.parametrize(("n", "m", "unmapped"), [
    (2, 1, "rng[rank 1]: no rank 1 at 1 rank(s)"),
    (1, 2, "rng[rank 1]: rank 1 is new at 2 ranks"),
])
def test_elastic_resume_keeps_the_global_batch_and_continues_within_tolerance(n, m, unmapped):
    report, run = _elastic("resumecheck.tiny_dist:DDP_ELASTIC", n, m)
    assert run.verdict == "close" and report.equivalent  # not bitwise: the sync adds in
    assert run.max_abs_loss_diff < 1e-5 and 0 < run.max_abs_diff < 1e-5  # another order
    assert any(u.startswith(unmapped) for u in run.unmapped)
    assert "params, optimizer" in run.explanation


@pytest.mark.e2e
@pytest.mark.distributed
def test_elastic_resume_with_per_rank_dropout_is_inconclusive_not_diverged():
    report, run = _elastic("resumecheck.tiny_dist:DDP", 2, 1)
    assert run.verdict == "inconclusive" and not report.equivalent
    assert run.first_divergent_step == 3
    assert "rng[rank 1]: no rank 1 at 1 rank(s)" in run.explanation
