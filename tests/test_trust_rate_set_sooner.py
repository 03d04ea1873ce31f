"""A load() that sets the learning rate of the epoch its next step belongs
to (trial 798): resumed at an epoch's end, it sets the next epoch's rate at
once, where the uninterrupted run sets it as that step starts. Every step
reads the same rate; the rate right after the load is the one the next step
stepped with: no gap, and --strict passes. A rate that no step stepped with,
overwritten as the next epoch starts, stays a latent gap."""

import json

import pytest

from resumecheck import verify
from resumecheck.cli import main

from fixtures.trust import epoch_rate_at_load

pytestmark = pytest.mark.e2e

QUICK = {"drop": "none", "noise_seeds": 0, "check_determinism": False}


def test_the_next_steps_rate_set_sooner_is_no_gap_and_strict_passes(capsys):
    report = verify(epoch_rate_at_load.CORRECT, **QUICK)
    own = report.runs[0]
    assert report.equivalent and own.latent_gaps == [], report.render()
    assert [(f.component, f.status) for f in own.diagnosis] == [("optimizer", "put_back")]
    text = report.render()
    assert ("note: optimizer: param_groups[0].lr 0.05, expected 0.1: the rate the uninterrupted "
            "run's next step stepped with, set sooner") in text
    assert "(the same rate, set sooner: every later step matches" in text
    assert "which a scheduler sets" not in text and "latent gap" not in text
    assert main(["run", "fixtures.trust.epoch_rate_at_load:CORRECT", "--drop", "none",
                 "--noise-seeds", "0", "--strict", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["equivalent"] is True


def test_a_rate_no_step_steps_with_stays_a_latent_gap_and_strict_fails():
    report = verify(epoch_rate_at_load.OVERWRITTEN, **QUICK)
    own = report.runs[0]
    assert own.latent_gaps == ["optimizer"], report.render()
    assert [f.status for f in own.diagnosis] == ["latent"]
    assert "set sooner" not in report.render()
    assert main(["run", "fixtures.trust.epoch_rate_at_load:OVERWRITTEN", "--drop", "none",
                 "--noise-seeds", "0", "--strict"]) == 1


def test_its_buggy_twin_inside_an_epoch_is_caught_and_the_optimizer_blamed():
    report = verify(epoch_rate_at_load.BUGGY, resume_at=6, **QUICK)
    own = report.runs[0]
    assert not report.equivalent
    assert (own.first_divergent_step, own.first_divergent_quantity) == (7, "learning rate")
    assert [(f.component, f.status) for f in own.diagnosis] == [("optimizer", "confirmed")]
