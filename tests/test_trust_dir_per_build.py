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
