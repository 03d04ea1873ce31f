"""A lost epoch that the program's load() reads to make the epoch's order: a
rerun that puts it right after the load() comes too late and changes
nothing, but the engine's resume without it departs as the program's own
does, step for step. A trial's report said of it only that, put right alone,
the run departs no later (``verdict.note_dropped_alike``,
``fixtures/trust/epoch_read_in_load.py``)."""

from __future__ import annotations

from resumecheck import verify

SPEC = "fixtures.trust.epoch_read_in_load:"


def test_a_lost_epoch_read_in_load_is_said_to_be_the_likely_cause():
    report = verify(SPEC + "FORGETS_EPOCH", noise_seeds=0, drop=["sampler_epoch"])
    own = report.runs[0]
    assert not report.equivalent and own.verdict == "diverged"
    [epoch] = own.diagnosis
    # (trial 559: `not_cause` in the JSON of the one cause)
    assert epoch.component == "sampler_epoch" and epoch.status == "likely"
    assert not epoch.confirmed
    lines = report.render().splitlines()
    assert "diagnosis: sampler_epoch: 0, expected 1; left out alone of the engine's restore, " \
        "the run departs as your resume does, step for step (the likely cause, which a rerun " \
        "cannot confirm: your load() may read it before a rerun puts it right after the load, " \
        "and put right there the run departs no later)" in lines, \
        [x for x in lines if x.startswith("diagnosis")]
    assert "put right alone, the run departs no later" not in own.explanation
    # (trial 559: three causes that were none led, the one that was came after "but")
    assert "put right in a rerun, none of what differs" not in own.explanation
    assert "; the engine's resume without `sampler_epoch` alone departs as yours does, " \
        "step for step: the likely cause, which your load() reads before a rerun can put it " \
        "right after it" in own.explanation, own.explanation
    # (trial 675: an epoch its save() never wrote was told to set it in load())
    assert "; check that your save() writes it and that your load() sets it from what was " \
        "written before what reads it" in own.explanation, own.explanation
    from resumecheck.pytest_plugin import _summary_row
    row = _summary_row({"nodeid": "t.py::t", "target": "t", "report": report.to_json()})
    assert "full resume: DIVERGED (likely cause: sampler_epoch)" in row, row


def test_with_no_ablation_asked_for_and_under_fuzz_it_is_said_all_the_same():
    """Trial 549: under --drop none (fuzz, the plugin, the reproduce command)
    the ablation that shows it was not run, and the finding read only that,
    put right alone, the run departs no later."""
    from resumecheck.fuzz import fuzz

    own = verify(SPEC + "FORGETS_EPOCH", noise_seeds=0, drop="none").full_resume
    [epoch] = own.diagnosis
    assert epoch.detail.endswith("; left out alone of the engine's restore, the run departs "
                                 "as your resume does, step for step"), epoch.detail
    assert [r.dropped for r in verify(SPEC + "FORGETS_EPOCH", noise_seeds=0,
                                      drop="none").runs] == [[], []]  # (no row added)
    found = fuzz(SPEC + "FORGETS_EPOCH", max_examples=3, budget=60)
    assert found.failure is not None
    assert any("left out alone of the engine's restore" in f.detail
               for f in found.failure.diagnosis), found.summary()


def test_its_twin_resumes():
    assert verify(SPEC + "CORRECT", noise_seeds=0, drop=["sampler_epoch"]).equivalent
