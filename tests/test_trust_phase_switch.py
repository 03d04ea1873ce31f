"""A program that replaces a declared object as it trains (a new optimizer
for a new phase): trial 293's correct program read NOT EQUIVALENT, its
optimizer's state compared against the first optimizer's
(fixtures/trust/phase_switch.py)."""

from __future__ import annotations

import pytest

from resumecheck import verify
from resumecheck.errors import TargetError

SPEC = "fixtures.trust.phase_switch:"
FAST = {"noise_seeds": 0, "check_determinism": False}


def test_a_program_that_replaces_its_optimizer_is_refused_saying_what_to_declare():
    with pytest.raises(TargetError) as caught:
        verify(SPEC + "REPLACES", drop="none", **FAST)
    said = str(caught.value)
    assert ("after step 5, components() gives other objects for `optimizer` (SGD at the "
            "build, AdamW now): the program replaces them as it trains") in said, said
    assert "passes state_dict() and load_state_dict() through to the program's current one" \
        in said


def test_a_component_that_stands_in_for_the_current_optimizer_resumes():
    report = verify(SPEC + "STANDS_IN", drop=["optimizer"], **FAST)
    assert report.equivalent and report.full_resume.verdict == "identical"
    [dropped] = [r for r in report.runs if r.dropped]
    assert dropped.verdict == "diverged"


def test_a_module_made_at_each_call_over_the_same_layers_is_no_replacement():
    assert verify(SPEC + "FRESH_WRAPPER", drop="none", **FAST).equivalent


def test_the_step_that_makes_and_steps_a_new_optimizer_is_traced():
    """Trial 476: the step that made the next phase's optimizer and stepped it
    was traced as one where no optimizer stepped, and a restart that stayed in
    the first phase read "gradient of 0.bias ... (none in the uninterrupted
    run: its optimizer did not step there)". Its rate is what differs first."""
    report = verify(SPEC + "OWN_POSITION", drop=["global_step"], resume_at=(2,), **FAST)
    assert report.equivalent
    [dropped] = [r for r in report.runs if r.dropped]
    assert (dropped.first_divergent_step, dropped.first_divergent_quantity) == (
        5, "learning rate"), dropped.explanation
    assert "learning rate of step 5: 0.1, expected 0.01" in dropped.explanation, \
        dropped.explanation


def test_fields_a_build_holds_at_one_restart_and_another_component_at_the_next_say_so():
    """Trial 476: restarted at 6 and 15, a scheduler's phase was read "1 there"
    and "as a fresh build makes them" at both, where at 15 it was 2, put back
    by the optimizer's component. Each point's value is said, and which of the
    two holds it is not claimed."""
    report = verify(SPEC + "WITH_SCHEDULERS", drop=["scheduler"], resume_at=(2, 6), **FAST)
    assert report.equivalent
    [line] = [n for n in report.not_checked if n.startswith("of `scheduler`")]
    assert line.startswith("of `scheduler`, `phase` (1 at step 2, 2 at step 6, 2 at the end)"), \
        line
    assert "(as a fresh build makes" not in line and "(not as a fresh build makes" not in line
    assert "(a fresh build's, what another declared component puts back" in line, line


def test_a_scheduler_the_next_phase_replaces_is_a_blind_spot_that_names_the_replacement():
    """Trial 476: a scheduler replaced at the step after the resume point read
    as one stepped with an explicit epoch, or rebuilt from its step."""
    report = verify(SPEC + "WITH_SCHEDULERS", drop=["scheduler"], resume_at=(3,), **FAST)
    [spot] = [r for r in report.runs if r.dropped]
    assert spot.verdict == "identical" and spot.explanation.startswith("blind spot"), spot
    assert spot.explanation.endswith(
        "or one it makes anew before what it holds matters: a new phase's, fold's or "
        "stage's)"), spot.explanation
