"""An equivalent report of a program resumed through its own checkpoint says
that the script's own resume code did not run (trial 141: a seed set again in
the script's main, after its load, passed `run`, the test and fuzz; a real
restart through that main departed)."""

from __future__ import annotations

from resumecheck import verify
from resumecheck.report import RESUME_CODE_UNCHECKED


def test_a_pass_through_the_programs_own_checkpoint_says_what_did_not_run():
    report = verify("fixtures.trust.side_file:TARGET", drop="none", noise_seeds=0,
                    check_determinism=False)
    assert report.equivalent and report.full_resume.checkpoint == "program"
    assert RESUME_CODE_UNCHECKED in report.render().splitlines()
    # and in the JSON (trial 143: a CI job reading it never saw the caveat)
    assert RESUME_CODE_UNCHECKED in report.to_json()["caveats"]
    assert "a seed or a position set after the load in its main" \
        in RESUME_CODE_UNCHECKED


def test_a_pass_without_a_checkpoint_of_its_own_and_a_failure_do_not_say_it():
    engine_only = verify("resumecheck.tiny:TARGET", drop="none", noise_seeds=0,
                         check_determinism=False, steps=6, resume_at=(3,))
    assert engine_only.full_resume.checkpoint == "engine"
    assert RESUME_CODE_UNCHECKED not in engine_only.render()
    failing = verify("fixtures.bugs.class01_scheduler_not_saved:BUGGY", drop="none",
                     noise_seeds=0, check_determinism=False)
    assert not failing.equivalent and RESUME_CODE_UNCHECKED not in failing.render()
