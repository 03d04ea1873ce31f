"""Counts kept outside the declared components, lost by the load and reset
alike at an epoch's end, are not said to end otherwise
(fixtures/trust/counts_reset_at_epoch_end.py; trial 742)."""

from __future__ import annotations

from resumecheck import verify


def test_counts_the_load_lost_and_an_epochs_end_reset_are_said_to_end_alike():
    report = verify("fixtures.trust.counts_reset_at_epoch_end:BUGGY", drop="none",
                    noise_seeds=0, check_determinism=False)
    own = report.full_resume
    assert own.steps_match() and own.first_divergent_quantity == "state of seen", \
        own.first_divergent_quantity
    [line] = [u for u in report.undeclared if u.startswith("hits (")]
    assert ("your own resume held it otherwise right after your load() at step 2 and after "
            "step 3, and ends with it as the uninterrupted run did, a later step setting it "
            "again, every step matching: your checkpoint loses it") in line, line
    assert "ends with it otherwise" not in line
