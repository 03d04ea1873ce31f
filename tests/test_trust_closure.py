"""``optimizer.step(closure)``: the step's gradients are the closure's, not the
ones left on the parameters when ``step()`` is called (a trial's false alarm:
every correct closure script was NOT EQUIVALENT on a "gradient" that was the
previous step's in the reference and none after the restart)."""

from __future__ import annotations

import pytest

from resumecheck import verify
from resumecheck.report import DIVERGED

SPEC = "fixtures.trust.closure_step:"


@pytest.mark.parametrize("name", ["CORRECT", "LBFGS"])
def test_a_correct_closure_script_resumes_bit_for_bit(name):
    report = verify(SPEC + name, noise_seeds=0, drop="optimizer")
    assert report.outcome == "EQUIVALENT", report.render()
    [dropped] = [r for r in report.runs if r.dropped == ["optimizer"]]
    assert dropped.verdict == DIVERGED  # (momentum buffers, LBFGS's history: needed)


def test_a_closure_script_that_forgets_its_optimizer_is_blamed_on_it():
    full = verify(SPEC + "FORGETS_OPTIMIZER", noise_seeds=0, drop="none").full_resume
    assert full.verdict == DIVERGED and full.first_divergent_step == 5
    confirmed = [f.component for f in full.diagnosis if f.status == "confirmed"]
    assert confirmed == ["optimizer"], [(f.component, f.status) for f in full.diagnosis]
