"""A SAM optimizer of the program's own, whose base optimizer steps in its
stead (fixtures/trust/sam.py, trial 478: "no torch optimizer was found")."""

from __future__ import annotations

from resumecheck import verify

SPEC = "fixtures.trust.sam:"
FAST = {"noise_seeds": 0, "check_determinism": False}


def test_the_base_optimizer_a_declared_one_steps_in_its_stead_is_traced():
    report = verify(SPEC + "CORRECT", drop=["scheduler"], **FAST)
    assert report.equivalent and report.untraced == [], report.untraced
    [dropped] = [r for r in report.runs if r.dropped]
    assert (dropped.first_divergent_step, dropped.first_divergent_quantity) == (
        7, "learning rate"), dropped.explanation
    assert "learning rate of step 7: 0.05, expected 0.025" in dropped.explanation


def test_a_sam_whose_state_leaves_out_its_bases_momentum_is_caught_and_pointed_at():
    report = verify(SPEC + "LOSES_MOMENTUM", drop="none", **FAST)
    assert not report.equivalent and report.untraced == []
    assert report.full_resume.first_divergent_step == 5
    assert any(line.startswith("optimizer.base_optimizer (SGD: ") for line in report.undeclared), \
        report.undeclared


def test_an_optimizer_traced_that_never_stepped_is_not_said_to_be_missing():
    """Trial 478: "no torch optimizer was found" of a declared one that never
    stepped itself."""
    from resumecheck.trace import StepRecord
    from resumecheck.verdict import untraced

    def records(skipped: bool) -> list[StepRecord]:
        return [StepRecord(step=1, loss=0.5, digests={"param:w": "d", "data": "d"}, lr=None,
                           skipped=skipped)]

    [never] = untraced(records(True))
    assert never.startswith("gradients and learning rate: the torch optimizer traced did not "
                            "step in any step"), never
    [none] = untraced(records(False))
    assert "no torch optimizer was found" in none
