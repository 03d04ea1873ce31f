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
    assert "counted early or late" not in engine.explanation
    notice = report.incomplete_state_notice() or ""
    assert said[0].upper() + said[1:] in notice
    assert notice.startswith("the restart makes its samples otherwise though every declared "
                             "component came back")
    assert any(line.startswith("masking (a torch.Generator") for line in report.undeclared)
    assert verify(masked_samples.KEEPS_MASK_STREAM, **FAST).equivalent


def test_other_indices_read_for_half_a_batch_are_not_said_to_be_the_same_samples_made_otherwise():
    """Trial 259: two loaders zipped, the shorter cycled, the restore skipping the
    longer one's batches only: half of each batch's indices differ, and the lead
    said the same samples were made otherwise, by an augmentation the program
    does not have. Each index is a sample: one that differs is another sample."""
    report = verify("fixtures.trust.two_loaders:SKIPS_ONE", **FAST)
    engine = report.runs[-1]
    assert engine.verdict == "diverged" and engine.first_divergent_step == 6
    assert "8 of 16 samples differ" in (engine.divergence_detail or "")
    assert "made otherwise" not in engine.explanation, engine.explanation
    assert ("a resumed loop that does not act on it as saved (skips none of the batches it "
            "already read, too few or too many, or makes its iterator without it)") \
        in engine.explanation
    # (the plugin's row read "declared state incomplete": every declared one came back)
    from resumecheck.pytest_plugin import _summary_row

    row = _summary_row({"nodeid": "t", "target": "x", "report": report.to_json()})
    assert "engine resume: DIVERGED (every declared component came back; it reads other " \
        "samples)" in row, row
    assert verify("fixtures.trust.two_loaders:CORRECT", **FAST).equivalent
