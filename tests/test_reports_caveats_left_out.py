"""A failing report says that it leaves out the caveats a passing one gives
(trials 696, 703: the correct twin's report named the script's own resume code
and the hash order as unchecked, the failing one said nothing of them)."""

from __future__ import annotations

from resumecheck import verify
from resumecheck.report import RESUME_CODE_UNCHECKED

SPEC = "fixtures.bugs.class01_scheduler_not_saved:"
FAST = {"drop": "none", "noise_seeds": 0, "check_determinism": False}


def test_a_failing_report_says_it_leaves_the_caveats_out_and_a_passing_one_gives_them():
    failing = verify(SPEC + "BUGGY", **FAST).render().splitlines()
    assert RESUME_CODE_UNCHECKED not in failing
    assert ("not listed beside a failure: what a passing report says it cannot see (your "
            "script's own resume code, which the restarts here do not run; in-process, an "
            "order that follows the hash seed): once this resumes, its report names them"
            ) in failing
    passing = verify(SPEC + "CORRECT", **FAST).render().splitlines()
    assert RESUME_CODE_UNCHECKED in passing
    assert not any(line.startswith("not listed beside a failure") for line in passing)


def test_in_fresh_interpreters_it_leaves_the_hash_order_out_of_that_line():
    """Trial 719: the line named the in-process hash order under --isolation process."""
    failing = verify(SPEC + "BUGGY", isolation="process", **FAST).render().splitlines()
    assert ("not listed beside a failure: what a passing report says it cannot see (your "
            "script's own resume code, which the restarts here do not run): once this resumes, "
            "its report names them") in failing
