"""A parameter of a declared module that no optimizer steps (an average of
the weights) is said to be one where the first divergence names it
(fixtures/trust/ema_module_lost.py; trial 601)."""

from __future__ import annotations

from resumecheck import verify
from resumecheck.report import DIVERGED

from fixtures.trust import ema_module_lost

SPEC = "fixtures.trust.ema_module_lost:"
FAST = {"noise_seeds": 0, "drop": "none", "check_determinism": False}


def test_a_lost_ema_module_is_named_as_no_optimizer_steps_it():
    own = verify(SPEC + "BUGGY", **FAST).runs[0]
    assert own.verdict == DIVERGED
    assert [f.component for f in own.diagnosis] == ["ema"]
    assert own.first_divergent_quantity == (
        "parameter ema.module.weight (of `ema`, a module no optimizer steps) "
        "(the largest of 2 parameters that differ)"), own.first_divergent_quantity


def test_its_twin_resumes_and_only_the_module_no_optimizer_steps_is_listed():
    assert verify(SPEC + "KEEPS_EMA", **FAST).equivalent
    built = ema_module_lost.BUGGY.build({})
    assert built.boundaries()["unstepped_modules"] == ["ema"]  # (not `params`, which trains)
