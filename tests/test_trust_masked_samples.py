"""Trial 150: a mask drawn in a DataLoader's workers (whose streams start anew
with every iterator) changed a few tokens of the same sequences after a
restart, and the lead said first that the declared position may have been
saved where the run was not (fixtures/trust/masked_samples.py)."""

from __future__ import annotations

import pytest

from fixtures.trust import masked_samples
from resumecheck import verify
from resumecheck.phrases import POSITION_TRANSFORMED

pytestmark = pytest.mark.e2e

FAST = {"drop": "none", "noise_seeds": 0}


def test_the_same_samples_made_otherwise_lead_with_a_stream_not_the_position():
    report = verify(masked_samples.LOSES_MASK_STREAM, **FAST)
    engine = report.runs[-1]
    assert engine.verdict == "diverged" and engine.first_divergent_step == 5
    said = POSITION_TRANSFORMED.format("`data_cursor`", "24 of 128 differ")
    assert said in engine.explanation, engine.explanation
    assert "counted one batch early or late" not in engine.explanation
    notice = report.incomplete_state_notice() or ""
    assert said[0].upper() + said[1:] in notice
    assert notice.startswith("the restart makes its samples otherwise though every declared "
                             "component came back")
    assert any(line.startswith("masking (a torch.Generator") for line in report.undeclared)
    assert verify(masked_samples.KEEPS_MASK_STREAM, **FAST).equivalent
