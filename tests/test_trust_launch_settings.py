"""A run launched with settings its restart is built without, whose own resume
departs with no lead in the declared state, says so
(fixtures/trust/launch_settings.py; a trial: nothing was named)."""

from __future__ import annotations

from fixtures.trust import launch_settings
from resumecheck import verify


def test_settings_the_restart_is_built_without_are_named_in_the_why():
    report = verify(launch_settings.BUILT_FROM_DEFAULTS, drop="none", noise_seeds=0)
    own = report.full_resume
    assert own.checkpoint == "program" and own.verdict == "diverged", report.render("table")
    assert "the run was launched with dropout=0.5, and its restart is built from the " \
           "program's defaults" in own.explanation, own.explanation
    assert "the engine's restart, built with the settings its capture holds, resumes; and " \
           "built with them, your own resume resumes" in own.explanation, own.explanation
    # (a trial: the settings came last, after a sampler's epoch, an iterator and the streams)
    assert own.explanation.index("the run was launched with") < own.explanation.index(
        "state you did not declare"), own.explanation
    assert report.engine_resume.verdict == "identical"
    assert report.to_json()["launched_with"] == {"dropout": 0.5}


def test_a_launcher_that_passes_the_settings_again_resumes():
    report = verify(launch_settings.PASSED_AGAIN, drop="none", noise_seeds=0)
    assert report.equivalent, report.render("table")
    assert report.to_json()["launched_with"] == {}


def test_a_restart_that_cannot_load_without_the_launch_settings_names_them():
    report = verify(launch_settings.SIZED, drop="none", noise_seeds=0)
    own = report.full_resume
    assert own.verdict == "failed" and own.explanation.startswith("restoring the checkpoint")
    assert "the run was launched with hidden=12, and its restart is built from the " \
           "program's defaults" in own.explanation, own.explanation


def test_settings_are_not_offered_where_a_restart_built_with_them_departs_as_well():
    """A trial: a load() that built the program again from its saved settings
    was told that its restart keeps the defaults'; the cause was a replay
    buffer restored without its maxlen. Built with the launch settings, that
    resume departs step for step as before: the settings are not named."""
    from fixtures.trust import replay_buffer

    report = verify(replay_buffer.OWN_MAXLEN_LOST, drop="none", noise_seeds=0)
    own = report.full_resume
    assert own.checkpoint == "program" and own.verdict == "diverged", report.render("table")
    assert "launched with" not in own.explanation, own.explanation
    assert "a deque's maxlen" in own.explanation
    # (what the engine's resume shows: the same declared state into a fresh build resumes)
    assert ("no declared component differs right after your load(); the engine's restart, "
            "which puts that same declared state into a fresh build, resumes: what differs is "
            "state you did not declare that your load() leaves otherwise (") in own.explanation
    assert report.engine_resume.verdict == "identical"
    assert verify(replay_buffer.OWN, drop="none", noise_seeds=0).equivalent
