"""An optimizer made again in load() over the same parameters in another
order holds, bit for bit, the state that was saved, on the wrong parameters
(fixtures/trust/optimizer_order.py): the diagnosis names it, though a digest
of its state alone would call it restored as captured."""

from __future__ import annotations

from fixtures.trust import optimizer_order
from resumecheck import verify


def test_an_optimizer_state_on_swapped_parameters_is_blamed_and_the_correct_load_passes():
    report = verify(optimizer_order.SWAPPED, drop="none", noise_seeds=0)
    own = report.full_resume
    assert own.checkpoint == "program" and own.verdict == "diverged"
    assert own.first_divergent_step == 5
    assert [(f.component, f.status) for f in own.diagnosis] == [("optimizer", "confirmed")]
    assert "'2.weight', expected '0.weight'" in own.diagnosis[0].detail
    assert report.engine_resume.verdict == "identical"
    assert verify(optimizer_order.CORRECT, drop="none", noise_seeds=0).equivalent
