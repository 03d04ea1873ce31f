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
