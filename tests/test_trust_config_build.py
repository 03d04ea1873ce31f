"""An engine restart that fails as the program is built again (from the
settings a declared ``config`` component brings back) is said to be that,
not lost undeclared state; and what only that restart could show held by a
declared component is not said to be held by none."""

from __future__ import annotations

from fixtures.trust import config_extra_key
from resumecheck import verify
from resumecheck.report import OWN_EQUIVALENT
from resumecheck.pytest_plugin import _summary_row


def test_a_restart_the_factory_refuses_to_build_is_named_as_such_and_claims_nothing_else():
    report = verify(config_extra_key.TARGET, noise_seeds=0)
    assert report.full_resume.verdict == "identical" and report.equivalent
    engine = report.engine_resume
    assert engine.verdict == "failed" and engine.explanation.startswith(
        "building the restarted program failed: ")
    notice = report.incomplete_state_notice()
    assert notice.startswith(OWN_EQUIVALENT), notice  # (trial 832: it leads)
    notice = notice.removeprefix(OWN_EQUIVALENT + " ")
    assert notice.startswith("The engine's own restart fails before anything is restored, as "
                             "the program is built again: "), notice
    assert "got multiple values for keyword argument 'variant'" in notice
    assert "The runs that drop `config` build: a restart is built from the settings" in notice
    assert "Something the components do not declare is lost" not in notice
    # the cursor reads the epoch and the position where the trainer keeps them:
    # only the engine's own full resume (it failed) would show it brings them back
    assert [u.split(" ")[0] for u in report.undeclared] == ["epoch", "pos"]
    for line in report.undeclared:
        assert "held by no declared component" not in line, line
        assert ("whether a declared component holds it is not known (the engine's own full "
                "resume failed: that resume shows what the declared state brings back); if "
                "none does, declare it as a component") in line, line
    row = _summary_row({"nodeid": "test_x", "target": "t", "report": report.to_json()})
    assert "engine resume: FAILED (its build failed)" in row, row
    # the one ablation that builds is not judged, and says why in words that fit
    # (a trial: "already differs (it failed)")
    (drop_config,) = [r for r in report.runs if r.dropped == ["config"]]
    assert drop_config.verdict == "inconclusive"
    assert drop_config.explanation == (
        "inconclusive: the engine's full resume of every declared component failed, so "
        "dropping config is not judged: there is no full resume to hold it against"), \
        drop_config.explanation



def test_only_lines_of_numbers_are_hedged():
    """Numbers are held by no equal value, so only they need the evidence of
    a restart; a tensor is held by its storage or values, a generator by
    itself: their lines stand."""
    from resumecheck.undeclared import not_known_if_held

    why = "the engine's own full resume failed"
    hedge = f"; whether a declared component holds it is not known ({why}: "
    number = ("best (float: inf at the build, 0.5 at the end, changed during the run; held by no "
              "declared component: declare it as a component to check that it resumes)")
    numbers = ("order (list: 48 numbers, that the run changed and no declared component "
               "holds: declare it as a component to check that it resumes)")
    tensors = ("ema (Sequential: 4 tensors, 49 values, that the run changed and no declared "
               "component holds: declare it as a component to check that it resumes)")
    generator = ("gen (a torch.Generator whose state the run changed, drawn from or seeded "
                 "again, and no declared component holds: register it, RNGState({'name': "
                 "generator}), to check that it resumes)")
    for line in (number, numbers):
        hedged = not_known_if_held(line, why)
        assert hedge in hedged and "no declared component" not in hedged, hedged
        assert hedged.endswith("if none does, declare it as a component to check that it "
                               "resumes)"), hedged
    assert not_known_if_held(numbers, why).startswith(
        "order (list: 48 numbers, that the run changed; whether")
    for line in (tensors, generator):
        assert not_known_if_held(line, why) == line


def test_ablations_that_failed_do_not_pass_as_exercised():
    """A trial: `rng: failed` in the summary row, and assert_components_exercised passed."""
    import pytest

    import resumecheck

    with pytest.raises(resumecheck.ComponentsNotExercised) as info:
        resumecheck.assert_components_exercised(config_extra_key.TARGET, noise_seeds=0)
    assert info.value.failed == ["params", "optimizer", "rng", "data_cursor", "global_step"]
    said = str(info.value)
    assert said.startswith("cannot tell whether params, optimizer, rng, data_cursor, global_step "
                           "are exercised in fixtures.trust.config_extra_key:TARGET: the runs "
                           "that drop them failed (building the restarted program failed: "), said
