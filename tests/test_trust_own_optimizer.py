"""An optimizer class of the program's own (trial 151: a LARS-like subclass of
torch's Optimizer in a MoCo trainer). torch wraps such a class's ``step`` the
first time one is built, once per interpreter; every in-process check of such
a program was refused as if the program had changed module state. And state
it keeps beside torch's fields, which its state_dict() leaves out, was lost by
every restart and blamed on nothing (fixtures/trust/own_optimizer.py)."""

from __future__ import annotations

import pytest

from fixtures.trust import own_optimizer
from resumecheck import verify

pytestmark = pytest.mark.e2e

FAST = {"drop": "none", "noise_seeds": 0}


def _as_a_new_interpreter_has_them() -> None:
    """torch's step hook taken off both classes, as before their first build."""
    for cls in (own_optimizer.LARSKeepsOutside, own_optimizer.LARS):
        step = vars(cls).get("step")
        if getattr(step, "hooked", False):
            if cls is own_optimizer.LARS:
                cls.step = step.__wrapped__
            else:
                delattr(cls, "step")


def test_torchs_hook_on_its_step_is_not_module_state_and_its_resume_is_judged():
    _as_a_new_interpreter_has_them()  # (the class's step rebound by its first build)
    report = verify("fixtures.trust.own_optimizer:CORRECT", **FAST)
    assert report.equivalent and report.undeclared == [], report.render()
    assert getattr(own_optimizer.LARS.step, "hooked", False)  # (torch's hook did run)


def test_a_field_it_keeps_beside_torchs_is_named_on_the_optimizer():
    # (the subclass built first: torch puts the wrapper on it, a new attribute)
    _as_a_new_interpreter_has_them()
    report = verify("fixtures.trust.own_optimizer:KEEPS_OUTSIDE", **FAST)
    assert not report.equivalent
    assert "step" in vars(own_optimizer.LARSKeepsOutside)
    [line] = report.undeclared
    assert line.startswith("optimizer._trust_ema (dict: 2 tensors, 2 values, changed during the "
                           "run; a field of the declared component optimizer (LARSKeepsOutside) "
                           "that the engine's restore of it does not set back"), line
    assert "`optimizer._trust_ema`" in (report.incomplete_state_notice() or "")
    # (trial 156: the JSON did not carry the WARNING's sentence)
    assert report.to_json()["warnings"] == [report.incomplete_state_notice()]
