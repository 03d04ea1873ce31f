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
    assert ("after step 5, components() gives other objects for `optimizer` (SGD) than at the "
            "build: the program replaces them as it trains") in said, said
    assert "passes state_dict() and load_state_dict() through to the program's current one" \
        in said


def test_a_component_that_stands_in_for_the_current_optimizer_resumes():
    report = verify(SPEC + "STANDS_IN", drop=["optimizer"], **FAST)
    assert report.equivalent and report.full_resume.verdict == "identical"
    [dropped] = [r for r in report.runs if r.dropped]
    assert dropped.verdict == "diverged"


def test_a_module_made_at_each_call_over_the_same_layers_is_no_replacement():
    assert verify(SPEC + "FRESH_WRAPPER", drop="none", **FAST).equivalent
