"""A component whose load_state_dict() does not bring back what its
state_dict() returned (a trial's data position read back from the wrong key):
the confirmation rerun, which restores it through that same method, is no
evidence either way, so the blame is not called "not the cause", and the
warning names the component and its load instead of undeclared state."""

from __future__ import annotations

from resumecheck import verify
from resumecheck.assertions import describe_failure
from resumecheck.pytest_plugin import _summary_row
from resumecheck.report import DIVERGED


def test_a_component_that_cannot_load_its_own_state_is_named_not_cleared():
    report = verify("fixtures.trust.lossy_component:TARGET", noise_seeds=0, drop="none")
    full = report.full_resume
    assert full.verdict == DIVERGED and full.first_divergent_step == 6
    [finding] = full.diagnosis
    assert (finding.component, finding.detail) == ("data_cursor", "batch_in_epoch 0, expected 5")
    assert finding.status is None and finding.confirmed is not False  # not judged: no evidence
    notice = report.incomplete_state_notice() or ""
    assert "`data_cursor`: batch_in_epoch 0, expected 5: its load_state_dict() does not " \
           "bring back what its state_dict() returned" in notice
    # (trial 437: the state_dict() may be what loses it, leaving out what the load needs)
    assert "(or its state_dict() leaves out what that load needs, or something between " \
           "the restore and the first step changed it)" in notice
    assert notice.startswith("a declared component does not load back its own state: "), notice
    assert "put right alone, the run departs no later" not in report.render()
    # its field is its state's, under its own name: compared, so never "not compared"
    # (a trial's curriculum level was both, beside the diagnosis that compared it)
    assert report.undeclared == []
    # (a trial: the engine's resume said "undeclared state, or state consumed after
    # the restore", and the plugin's summary "declared state incomplete")
    engine = next(r for r in report.runs if r.checkpoint == "engine" and not r.dropped)
    assert ("the engine restored every declared component through its own load_state_dict(), "
            "and `data_cursor` did not come back as its state_dict() gave it") \
        in engine.explanation, engine.explanation
    assert "undeclared state" not in engine.explanation
    row = _summary_row({"nodeid": "t", "target": "x", "report": report.to_json()})
    assert "engine resume: DIVERGED (a load_state_dict() loses state)" in row, row
    # (the figures of a failure are maxima over every quantity where it departs,
    # each its own, the end state not among them: said so)
    failure = describe_failure(report)
    assert "where it departs (every quantity compared that differs at step 6 or before" \
        in failure and ": the largest |Δ| " in failure
    # (a trial: the diagnosis said "not judged: the declared components are incomplete,
    # see the WARNING" beside a WARNING on a lossy load, and a pytest failure had no
    # WARNING label at all)
    mark = ("data_cursor: batch_in_epoch 0, expected 5 (not judged: its load_state_dict() does "
            "not bring back what its state_dict() returned, so a rerun that puts the "
            "uninterrupted run's state in loses it alike; see the WARNING)")
    assert f"diagnosis: {mark}" in report.render()
    assert f"    diagnosis: {mark}" in failure
    assert "\n  WARNING: a declared component does not load back its own state: " in failure


def test_the_component_that_does_not_load_back_leads_the_diagnosis():
    """Trials 529, 539: a stream the checkpoint does not keep, declared first,
    led the diagnosis, not judged, before the component the WARNING names as
    not loading back its own state (a red herring read first)."""
    report = verify("fixtures.trust.lossy_component:ALSO_LOSES_THE_STREAM", noise_seeds=0,
                    drop="none")
    assert [f.component for f in report.full_resume.diagnosis] == ["rng", "data_cursor"]
    said = [line for line in report.render().splitlines() if line.startswith("diagnosis: ")]
    assert [line.split(":", 2)[1].strip() for line in said] == ["data_cursor", "rng"], said
    failure = describe_failure(report)
    assert failure.index("diagnosis: data_cursor") < failure.index("diagnosis: rng"), failure



def test_a_position_its_load_applies_at_the_next_read_is_no_lossy_load_where_it_mattered():
    """Trial 687: a StatefulDataLoader's position, which its load applies when
    it next makes an iterator, was otherwise right after the engine's restore,
    and the WARNING led with "a declared component does not load back its own
    state", where the steps read from the restored position (dropping it
    departs at the first step) and a count the save lost made the resume
    depart, later (fixtures/trust/lazy_position.py)."""
    report = verify("fixtures.trust.lazy_position:LOSES_COUNT", noise_seeds=0,
                    check_determinism=False)
    engine = next(r for r in report.runs if r.checkpoint == "engine" and not r.dropped)
    assert engine.first_divergent_step == 7, report.render()
    dropped = next(r for r in report.runs if r.dropped == ["data_cursor"])
    assert (dropped.verdict, dropped.first_divergent_step) == ("diverged", 4)
    [position] = [f for f in engine.diagnosis if f.component == "data_cursor"]
    assert "yet its restore carried state the steps read: dropping it departs at step 4, " \
        "before this resume does" in position.detail, position.detail
    assert engine.lossy_loads() == []
    assert "did not come back" not in engine.explanation, engine.explanation
    warning = report.incomplete_state_notice() or ""
    assert warning.startswith("the declared components do not capture the program's state"), \
        warning
    assert "`seen`" in warning and "load back" not in warning, warning
