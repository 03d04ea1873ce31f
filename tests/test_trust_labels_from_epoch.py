"""A value the program's load() makes from a declared component it restored
otherwise (trial 874: label noise drawn from the epoch, the epoch worked out
one ahead at an epoch's end) read "apart from that, ... your checkpoint may
lose it", as a second loss; saving the labels changed nothing."""

from __future__ import annotations

from resumecheck import verify


def _check(name: str):
    from fixtures.trust import labels_from_epoch
    return verify(getattr(labels_from_epoch, name), drop="none", noise_seeds=0,
                  check_determinism=False)


def test_a_value_made_from_the_confirmed_cause_is_offered_as_made_from_it():
    report = _check("EPOCH_FROM_STEP")
    own = report.full_resume
    assert [(f.component, f.status) for f in own.diagnosis] == [("data_cursor", "confirmed")]
    [line] = [u for u in report.undeclared if u.startswith("labels ")]
    assert ("(it departed from the uninterrupted run at the next step, which data_cursor, "
            "confirmed, explains): your checkpoint may lose it, or your load() makes it from "
            "data_cursor, which it restored otherwise, unless") in line, line
    assert ("apart from that, not compared, and your checkpoint may lose it, or it follows "
            "from the confirmed cause: `labels`") in own.explanation, own.explanation


def test_its_twin_that_loads_the_saved_epoch_resumes():
    assert _check("CORRECT").outcome == "EQUIVALENT"
