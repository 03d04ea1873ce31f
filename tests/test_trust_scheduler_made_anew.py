"""A scheduler made anew by the load, stepping on a count of its own, is not
cleared as "not the cause" (fixtures/trust/scheduler_made_anew.py)."""

from __future__ import annotations

import pytest

from resumecheck import verify
from resumecheck.report import DIVERGED, NOT_CAUSE

pytestmark = pytest.mark.filterwarnings("ignore:Detected call of `lr_scheduler.step()`")


def test_a_scheduler_whose_state_put_right_still_departs_in_the_rate_is_not_cleared():
    """Trial 138: its load made the scheduler again, unprepared, stepping every
    micro-batch; a rerun with the scheduler's state put right still departed,
    and the diagnosis read `scheduler ... (differs, not the cause)`."""
    report = verify("fixtures.trust.scheduler_made_anew:MADE_ANEW", drop="none",
                    noise_seeds=0, check_determinism=False)
    own = report.full_resume
    assert (own.verdict, own.first_divergent_quantity) == (DIVERGED, "learning rate")
    found = {f.component: f for f in own.diagnosis}
    assert {"scheduler", "optimizer"} <= set(found)
    for name in ("scheduler", "optimizer"):
        assert found[name].status != NOT_CAUSE, found[name]
        assert "not judged: put right in a rerun, the learning rate still departs, which is " \
            "no evidence against it" in found[name].detail
    assert "put right alone, the run departs no later" not in report.render()
