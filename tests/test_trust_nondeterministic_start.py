"""A run whose replayed first half already differs before its first restart is
``inconclusive``, never ``diverged``: no save or restore had happened yet."""

from __future__ import annotations

from resumecheck import Tolerance, verify
from resumecheck.report import INCONCLUSIVE

NOISY = "fixtures/trust/noisy_start.py:TARGET"


def test_a_difference_before_the_first_restart_is_not_blamed_on_the_checkpoint():
    report = verify(NOISY, tolerance=Tolerance.close(), drop="none", noise_seeds=0)
    own = report.full_resume
    assert own is not None and own.checkpoint == "program"
    assert own.verdict == INCONCLUSIVE and report.outcome == "INCONCLUSIVE"
    assert own.first_divergent_step is not None and own.first_divergent_step <= 5
    assert own.explanation.startswith("inconclusive: ")
    assert "before the first restart at 5" in own.explanation
    # its inputs differ (the data a step reads is compared as is): no tolerance would judge it
    assert own.first_divergent_quantity.startswith("data") and "--rtol" not in own.explanation
    assert not own.diagnosis or all(f.status != "confirmed" for f in own.diagnosis)
    assert "NOT EQUIVALENT" not in report.render("table")
