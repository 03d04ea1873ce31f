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


def test_two_declared_optimizers_whose_states_hold_the_same_tensors_say_so_of_each():
    """Trial 478: the SAM and its base both declared, each one's restore put the
    other back, and each row read a blind spot whose state "a resume point
    where it has moved from there shows"; none does, dropped alone."""
    report = verify(SPEC + "DECLARES_BOTH", drop=["optimizer", "base_optimizer"], **FAST)
    rows = {r.dropped[0]: r for r in report.runs if r.dropped}
    for name, other in (("optimizer", "base_optimizer"), ("base_optimizer", "optimizer")):
        assert rows[name].blind_spot, rows[name].explanation
        assert (f"`{other}` also holds its state (the same tensors) there, bit for bit, and its "
                f"restore puts it back, so dropping it alone shows nothing at any resume point: "
                f"--drop {name},{other} checks them together") in rows[name].explanation, \
            rows[name].explanation
    assert not verify(SPEC + "DECLARES_BOTH", drop=[("optimizer", "base_optimizer")],
                      **FAST).runs[-1].blind_spot


def test_the_check_leaves_no_hook_on_every_optimizer_behind():
    """The hook that follows an optimizer made or stepped in another's stead is
    on every optimizer of the interpreter: a check removes it, whatever its end."""
    from torch.optim.optimizer import _global_optimizer_pre_hooks

    before = dict(_global_optimizer_pre_hooks)
    verify(SPEC + "CORRECT", drop="none", **FAST)
    verify(SPEC + "LOSES_MOMENTUM", drop="none", **FAST)
    assert dict(_global_optimizer_pre_hooks) == before


def test_an_ablation_past_a_departed_full_resume_is_not_judged_and_says_so():
    """Trials 485, 486: "shows nothing about it" of ablations whose losses
    differed from the engine's full resume; what they differ by is not judged."""
    report = verify(SPEC + "LOSES_MOMENTUM", drop=["global_step"], **FAST)
    [dropped] = [r for r in report.runs if r.dropped]
    assert dropped.verdict == "inconclusive"
    assert dropped.explanation.startswith(
        "inconclusive: the engine's full resume of every declared component already differs "
        "from step 5"), dropped.explanation
    assert ", so dropping global_step is not judged: what it changes cannot be told apart from "\
        "what that resume lacks" in dropped.explanation, dropped.explanation
