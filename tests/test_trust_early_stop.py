"""An early stop whose patience the checkpoint lost (trial 881): the restart
trains on where the uninterrupted run had stopped. Its first divergence read
"31 data (the samples consumed)", and the skip it names "a loss scale's overflow,
or a step the program skips", at a step the uninterrupted run did not take."""

from __future__ import annotations

from resumecheck import verify


def _check(name: str):
    from fixtures.trust import early_stop
    return verify(getattr(early_stop, name), drop="none", noise_seeds=0,
                  check_determinism=False)


def test_a_restart_that_trains_on_after_the_stop_is_said_so():
    own = _check("LOSES_PATIENCE").full_resume
    assert own.first_divergent_step == 9, own.explanation
    assert (own.divergence_detail or "").startswith(
        "step 9: the uninterrupted run stepped no optimizer from there to its end (it had "
        "stopped training: an early stop, or a schedule's end, that the restart does not know "
        "of), where this run stepped on"), own.divergence_detail
    assert "loss scale's overflow" not in (own.divergence_detail or "")


def test_its_twin_that_keeps_the_patience_resumes():
    assert _check("CORRECT").outcome == "EQUIVALENT"
