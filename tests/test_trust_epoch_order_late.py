"""A generator read as each epoch starts, lost by the checkpoint, resumed in
the run's last epoch (trial 818): a latent gap, which no step after the
restart reads; the report says that the next epoch starts beyond the run and
how many steps run through it, and those steps show it."""

import pytest

from resumecheck import verify

from fixtures.trust import epoch_order_late

pytestmark = pytest.mark.e2e

QUICK = {"drop": "none", "noise_seeds": 0, "check_determinism": False}


def test_a_gap_read_at_the_next_epochs_start_beyond_the_run_says_how_to_reach_it():
    report = verify(epoch_order_late.LOST, **QUICK)
    assert report.equivalent and report.runs[0].latent_gaps == ["shuffler"], report.render()
    assert ("the next epoch's start (step 13), beyond the run's last step (12): the latent gap "
            "in `shuffler` may be state read as an epoch starts (a sampler's generator, an "
            "epoch's order), which no step after the restart reads here; --steps 14 runs "
            "through it") in report.not_checked, report.not_checked
    longer = verify(epoch_order_late.LOST_LONGER, **QUICK)
    assert not longer.equivalent and longer.runs[0].first_divergent_step == 13
    assert not any("beyond the run's last step" in line for line in longer.not_checked)
