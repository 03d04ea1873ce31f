"""A weights EMA whose state_dict() leaves its update count out, resumed
twice (fixtures/trust/ema_count_left_out.py; trial 68's Accelerate EMA)."""

from __future__ import annotations

from resumecheck import verify
from resumecheck.report import DIVERGED, LOSSY_ONE, PUT_BACK

SPEC = "fixtures.trust.ema_count_left_out:"
FAST = {"noise_seeds": 0, "drop": "none", "check_determinism": False}


def test_the_lost_count_is_named_and_the_second_restore_is_not_called_lossy():
    report = verify(SPEC + "LOSES_COUNT", **FAST)
    own, engine = report.full_resume, report.engine_resume
    assert (own.verdict, own.first_divergent_quantity) == (DIVERGED, "state of ema")
    # no noise runs, yet a loss that never differs is within any band: silent
    assert own.noise_label == "silent" and own.plausible is True
    # the engine restored at 9 what its own run had, drifted since 3: no lossy load
    assert engine.lossy_loads() == []
    notice = report.incomplete_state_notice() or ""
    assert not notice.startswith(LOSSY_ONE), notice
    assert "name what the program keeps outside their states: `ema.num_updates`)" in notice
    assert [u.split(" (")[0] for u in report.undeclared] == ["ema.num_updates"]
    # (trial 175: the drifted EMA read at 9 "as where none of it came back", with a
    # load's causes that do not apply: the run held it otherwise before that load)
    [ema] = [f for f in own.diagnosis if f.component == "ema"]
    assert ema.step == 9 and "none of it came back" not in ema.detail
    assert ("; the run held it otherwise already right before this restore: the steps since "
            "the last one made it so, not this load") in ema.detail
    # (trial 175: the test's row named the lost count's effects, not the count)
    from resumecheck.pytest_plugin import _summary_row

    row = _summary_row({"nodeid": "t.py::t", "target": "t", "report": report.to_json()})
    assert row.endswith("| not compared, a field its component's state_dict() leaves out: "
                        "ema.num_updates"), row
    # (trial 870: wrong from the restart's first step, said to differ at the end alone)
    for run in (own, engine):
        assert ("; `ema` differed already after step 4, the first after the restore at 3 "
                "(declared state is compared there and at the end, not at every step: what "
                "reads it in between may have differed)") in run.explanation, run.explanation
        assert "after step 10" not in run.explanation  # (said once, where it first differed)
    # every step matched, only the end state differs: said so, not "the steps differ"
    text = report.render()
    assert "note: rng (restored at 3; only the end state differs, after the restart " \
           "at 9): generator 'shuffle' differs" in text
    # the generator the program seeds again each epoch was put back: no lead
    [stream] = [f for f in own.diagnosis if f.component == "rng"]
    assert stream.status == PUT_BACK
    assert "another seed, a stream not restored" not in own.explanation
    assert own.stream_offsets[0].detail.endswith(
        "(rng, which holds it, differs right after the restore and was put back by the "
        "program: see its note)")


def test_its_twin_that_keeps_the_count_resumes():
    report = verify(SPEC + "KEEPS_COUNT", **FAST)
    assert report.equivalent, report.render()
    assert report.undeclared == []
