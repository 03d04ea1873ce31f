"""A value each build takes from outside the seed (a directory made per
build) is judged against what the run held when it saved, not against the
uninterrupted run's own build's (trial 835: a correct checkpoint read
"latent gap: config" and failed --strict)."""

from __future__ import annotations

import pytest

from resumecheck import verify
from resumecheck.cli import main


def _check(name: str):
    from fixtures.trust import dir_per_build
    return verify(getattr(dir_per_build, name), drop="none", noise_seeds=0,
                  check_determinism=False)


def test_a_directory_made_per_build_that_the_load_brings_back_is_no_gap():
    report = _check("TARGET")
    own = report.full_resume
    assert report.outcome == "EQUIVALENT"
    assert own.checkpoint == "program" and own.latent_gaps == [] and own.diagnosis == []
    assert own.by_build == ["`scratch` of `config`"]
    assert "(`scratch` of `config`, which each build makes otherwise, as the run held it " \
        "when it saved" in own.explanation


def test_its_twin_that_keeps_its_own_builds_directory_is_a_latent_gap_said_so():
    own = _check("OWN_DIR").full_resume
    assert own.latent_gaps == ["config"]
    (finding,) = own.diagnosis
    assert finding.component == "config" and finding.status == "latent"
    assert "(`scratch`: each build makes it otherwise, so compared with what the run held " \
        "when it saved, not with the uninterrupted run's)" in finding.detail


def test_beside_a_real_gap_the_directory_is_not_named():
    report = _check("FORGETS_STEP")
    own = report.full_resume
    assert report.outcome == "NOT EQUIVALENT"
    assert [(f.component, f.status) for f in own.diagnosis] == [("global_step", "confirmed")]
    assert own.latent_gaps == []


def test_strict_passes_the_correct_program(capsys: pytest.CaptureFixture[str]):
    code = main(["run", "fixtures.trust.dir_per_build:TARGET", "--drop", "none",
                 "--noise-seeds", "0", "--strict"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "latent gap" not in out


def test_a_step_count_lost_alone_says_a_relaunch_may_train_another_number_of_steps():
    """Trials 839, 840, 841, 844: `drop global_step` read "silent but different",
    where their loops stopped on that count: lost, a relaunch trains longer, or
    a schedule's bound fails. The check runs a fixed number of steps; its why
    says so."""
    from fixtures.trust import dir_per_build

    report = verify(dir_per_build.FORGETS_STEP, drop=["global_step"], noise_seeds=2,
                    check_determinism=False)
    for run in report.runs[:1] + report.runs[2:]:
        assert run.explanation.endswith(
            "global_step at the end: 6, expected 12 (the check runs as many steps after the "
            "restart as the uninterrupted run did: where your loop's length or a schedule's "
            "bound reads this count, while step < total_steps, a relaunch that loses it trains "
            "another number of steps, or fails)"), run.explanation
