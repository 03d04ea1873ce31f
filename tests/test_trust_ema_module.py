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


def test_an_average_whose_checkpoint_loses_only_its_count_says_how_much_the_load_lost():
    """Trial 693: an undeclared average whose checkpoint kept the weights and
    lost the count of updates read "your checkpoint loses it" of the whole
    module: the line now says that right after the load one of its three
    tensors differed, and all three at the end."""
    report = verify(SPEC + "COUNT_LOST", **FAST)
    assert report.equivalent
    [line] = [u for u in report.undeclared if u.startswith("ema (")]
    assert ("ends with it otherwise than the uninterrupted run did (right after your load() at "
            "step 3, 1 of the 3 tensors it holds differed, the others as the uninterrupted run "
            "held them; at the end, 3 of them differ): your checkpoint loses it") in line, line
