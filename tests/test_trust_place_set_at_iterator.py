"""Trial 833: a datamodule's sampler that set its place when its next iterator
was made, its shuffle generator left out of its state, was said not to load back
its own state (the WARNING, the engine's row, the plugin's row); its place came
back, and the steps after the restore read it in another epoch's order."""

from __future__ import annotations

from resumecheck import verify
from resumecheck.phrases import PLACE_CAME_BACK
from resumecheck.pytest_plugin import _engine_why

FAST = {"drop": "none", "noise_seeds": 0, "check_determinism": False}


def test_a_place_set_at_the_next_iterator_is_said_to_come_back_and_the_order_not():
    from fixtures.trust import place_set_at_iterator as m

    report = verify(m.BUGGY, **FAST)
    own, engine = report.full_resume, report.engine_resume
    assert (own.verdict, own.first_divergent_step) == ("diverged", 7), own.explanation
    notice = report.incomplete_state_notice() or ""
    assert notice.startswith("a declared data position came back at its place, in another "
                             "epoch's order: the engine restored every declared component "
                             "and the run still differs from step 7"), notice
    assert "Right after the restore, `data_cursor`: pos 0, expected 8, as a load that sets its " \
        "place only when it next makes an iterator leaves it" in notice, notice
    assert "does not load back its own state" not in notice, notice
    assert "`data_cursor` differed right after the restore but came back at its place" \
        in engine.explanation and "did not come back" not in engine.explanation, \
        engine.explanation
    assert _engine_why(engine.to_json(), own.to_json()) == PLACE_CAME_BACK
    correct = verify(m.CORRECT, **FAST)
    assert correct.equivalent and not correct.full_resume.latent_gaps, correct.render()
