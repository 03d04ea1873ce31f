"""Settings a relaunch's defaults override, which the load builds a schedule
from: a rerun that sets them right after the load is no evidence, and the
report says why, or that leaving them out alone departs alike
(fixtures/trust/config_overridden.py; trial 643)."""

from __future__ import annotations

from resumecheck import verify
from resumecheck.report import DIVERGED

SPEC = "fixtures.trust.config_overridden:"
FAST = {"noise_seeds": 0, "check_determinism": False}


def test_without_ablations_the_unjudged_settings_say_why():
    report = verify(SPEC + "BUGGY", drop="none", **FAST)
    own = report.full_resume
    assert own.verdict == DIVERGED
    assert [f.component for f in own.diagnosis] == ["config"]
    assert ("diagnosis: config: lr 0.01, expected 0.003 (and 1 more entry of its state_dict() "
            "differs: warmup 2, expected 6); not judged: put right after your load(), the run "
            "departs all the same, which is no evidence against it: what your build or load() "
            "made from the settings, a schedule's function or a layer's size, stays as it was "
            "made\n") in report.render(), report.render()


def test_left_out_alone_alike_the_settings_are_the_likely_cause():
    own = verify(SPEC + "BUGGY", drop=["config"], **FAST).full_resume
    assert [(f.component, f.status) for f in own.diagnosis] == [("config", "likely")], \
        own.diagnosis
    assert "the engine's resume without `config` alone departs as yours does" in own.explanation


def test_its_twin_that_merges_only_the_flags_given_resumes():
    assert verify(SPEC + "KEEPS_SETTINGS", drop="none", **FAST).equivalent
