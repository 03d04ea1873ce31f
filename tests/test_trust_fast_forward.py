"""Steps after a restart that leave declared state otherwise: the engine's own
resume through two restarts says so, not that the components are incomplete
(fixtures/trust/fast_forward_resets.py)."""

from __future__ import annotations

from resumecheck import verify
from resumecheck.report import LATER_OTHERWISE

SPEC = "fixtures.trust.fast_forward_resets:"
FAST = {"noise_seeds": 0, "drop": "none", "check_determinism": False}


def test_a_fast_forward_that_resets_the_position_is_said_to_leave_declared_state_otherwise():
    """A trial: a loop's fast-forward after a restart reset its declared
    counter; the second restart read the epoch from too early, and the report
    said the declared components did not capture the program's state, which
    they did (one restart anywhere resumed bit for bit)."""
    report = verify(SPEC + "BUGGY", **FAST)
    run = report.full_resume
    assert (run.verdict, run.first_divergent_step) == ("diverged", 7)
    notice = report.incomplete_state_notice() or ""
    assert notice.startswith(
        f"{LATER_OTHERWISE}: the engine restored every declared component at 3, every step "
        "after it matched the uninterrupted run's, and what its run held at its next restart "
        "differs (`data_cursor` at 6: 3, expected 6)"), notice
    assert "do not capture the program's state" not in notice
    assert "a fast-forward that resets a counter" in notice
    assert verify(SPEC + "BUGGY", **{**FAST, "resume_at": (3,)}).equivalent  # one restart
    assert verify(SPEC + "CORRECT", **FAST).equivalent


def test_the_plugin_row_says_the_same_of_the_engines_resume():
    from resumecheck.pytest_plugin import _later_otherwise

    runs = verify(SPEC + "BUGGY", **FAST).to_json()["runs"]
    assert _later_otherwise(runs[0])
    lossy = verify("fixtures.trust.lossy_component:TARGET", **FAST).to_json()["runs"]
    assert not any(_later_otherwise(r) for r in lossy)  # (a lossy load at the first restore)
    assert not _later_otherwise(verify(SPEC + "CORRECT", **FAST).to_json()["runs"][0])


def test_one_restart_whose_steps_all_match_and_whose_end_differs_says_the_same():
    """A trial: one restart late in an epoch, every step alike, the position
    ending short; the WARNING said the declared components did not capture the
    program's state and named a red herring, where the position came back
    right and the fast-forward miscounted after it."""
    report = verify(SPEC + "BUGGY", **{**FAST, "resume_at": (10,)})
    run = report.full_resume
    assert (run.verdict, run.first_divergent_quantity) == ("diverged", "state of data_cursor")
    notice = report.incomplete_state_notice() or ""
    assert notice.startswith(
        f"{LATER_OTHERWISE}: the engine restored every declared component at 10, every step "
        "after it matched the uninterrupted run's, and the run still ends otherwise in the "
        "state of data_cursor"), notice
    assert "a position counted from the restart" in notice
    assert "do not capture the program's state" not in notice
    # (trial 718: "no component declares" of a field a declared component's state left out)
    assert "those steps read state no declared component's state holds" in notice, notice
    from resumecheck.pytest_plugin import _later_otherwise

    assert _later_otherwise(report.to_json()["runs"][0])


def test_one_restart_whose_position_is_wrong_until_the_epochs_end_is_a_latent_gap():
    """Trial 892: a position counted from the restart, wrong after every step
    until the epoch's end, where it came back: one restart read "resumes bit for
    bit: every step after the restart and every declared component's state
    match", and --strict passed; a second restart after the first resumed step
    departs. What the check sees after the restart's first step now makes it a
    latent gap, with the schedule that shows it."""
    report = verify(SPEC + "BUGGY", **{**FAST, "resume_at": (3,)})
    assert report.equivalent
    full = report.full_resume
    assert full.latent_gaps == ["data_cursor"], full.latent_gaps
    assert "latent gap: data_cursor held otherwise after the restart's first step, alike " \
        "again at the end, in state that changed no step here (see below)" in report.render()
    assert "`data_cursor` (`value`) differed after step 4, the first after the restore at 3" \
        in full.explanation, full.explanation
    assert "--resume-at 3,4 checks one" in full.explanation
    assert "every declared component's state match" not in report.render()
    assert not verify(SPEC + "BUGGY", **{**FAST, "resume_at": (3, 4)}).equivalent  # (as said)
    assert not verify(SPEC + "CORRECT", **{**FAST, "resume_at": (3,)}).full_resume.latent_gaps
