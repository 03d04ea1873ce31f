"""A component whose load freezes layers is no blind spot where the engine's
restore of the module freezes them again (trial 699: a Trainer callback that
froze and thawed layers, dropped, left them trainable; the engine's restore of
`params` froze them as captured, every step matched, and the correct
program's test failed: "blind spots ...: callbacks") (fixtures/trust/freeze_flag.py)."""

from __future__ import annotations

from resumecheck import verify
from resumecheck.assertions import require_exercised
from resumecheck.phrases import MODES_PUT_BACK
from resumecheck.pytest_plugin import _summary_row


def test_a_flag_whose_load_freezes_layers_the_engine_freezes_again_is_exercised():
    report = verify("fixtures.trust.freeze_flag:TARGET", drop=["freezer"], noise_seeds=0,
                    check_determinism=False)
    [dropped] = [r for r in report.runs if r.dropped == ["freezer"]]
    assert dropped.verdict == "identical" and not dropped.blind_spot, dropped.explanation
    assert dropped.explanation.startswith(
        f"{MODES_PUT_BACK}; without `freezer`, the program held `0.weight`, `0.bias` of "
        "`params` trainable (frozen in the uninterrupted run) right after the restore"), \
        dropped.explanation
    require_exercised(report)  # (no blind spot: it raised ComponentsNotExercised)
    row = _summary_row({"nodeid": "t", "target": "x", "report": report.to_json()})
    assert "freezer: exercised: without it the program holds parameters' requires_grad" in row
    assert report.blind_spots == [] and "blind spot:" not in report.render()
