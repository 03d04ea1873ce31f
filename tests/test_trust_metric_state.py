"""A torchmetrics metric's counts, which its state_dict() leaves out, are
named with what keeps them (fixtures/trust/metric_not_persistent.py; trial 742)."""

from __future__ import annotations

import pytest

from resumecheck import verify

pytest.importorskip("torchmetrics")


def test_a_metrics_counts_are_told_to_be_made_persistent():
    report = verify("fixtures.trust.metric_not_persistent:TARGET", drop="none",
                    noise_seeds=0, check_determinism=False)
    lines = [u for u in report.undeclared if u.startswith("params.accuracy.")]
    assert lines, report.undeclared
    for line in lines:
        assert ("a torchmetrics metric's state, which the metric leaves out of its state_dict() "
                "unless it is persistent: call self.accuracy.persistent(True) in the module "
                "after making it") in line, line
        assert "register_buffer" not in line
