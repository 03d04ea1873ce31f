"""A failed load names the launch settings only where they are the cause."""

from __future__ import annotations

import pytest

from resumecheck import verify

from fixtures.trust import launch_failed_load as prog

pytestmark = pytest.mark.e2e


def _own(target):
    report = verify(target, drop="none", noise_seeds=0, check_determinism=False)
    own = report.runs[0]
    assert own.checkpoint == "program" and own.verdict == "failed", report.render()
    return own.explanation


def test_a_load_that_fails_without_the_launch_settings_names_them_as_the_cause():
    why = _own(prog.WIDE)
    assert "the run was launched with width=8" in why
    assert "is missing there: built with them, the restart loads and resumes" in why


def test_a_load_that_fails_with_them_too_does_not_name_them():
    # (a trial: "launched with dropout=0.2 ... built from the program's defaults"
    # beside a load that raised whatever the settings, which equalled the defaults)
    why = _own(prog.LOAD_RAISES)
    assert "the checkpoint's format is not this version's" in why
    assert "launched with" not in why and "restart_config" not in why


def test_a_step_that_fails_without_the_launch_settings_names_them_where_they_put_it_right():
    """Trial 444: a DataLoader built from the defaults' batch size, skipped to a
    position past its end, raised in a step; nothing named the settings."""
    why = _own(prog.SMALL_BATCHES)
    assert why.startswith("a step failed: step 3: train_step() raised IndexError")
    assert ("; the run was launched with batch=2, and its restart is built from the program's "
            "defaults: what the build makes from a setting (a loader's batch size), which the "
            "load does not make again, is the default's there: built with them, the restart "
            "resumes.") in why


def test_a_step_that_fails_with_them_too_does_not_name_them():
    why = _own(prog.STEP_RAISES)
    assert why.startswith("a step failed: step 3: train_step() raised IndexError")
    assert "launched with" not in why and "restart_config" not in why
