"""A component the full resume departs on is not also said to resume alike
where a checkpoint loses it (trial 182: "not checked at this resume point: of
rng, torch ... a checkpoint that loses it resumes alike here" under NOT
EQUIVALENT, confirmed on that stream) (fixtures/trust/iterator_in_load.py)."""

from __future__ import annotations

from resumecheck import verify
from resumecheck.report import CONFIRMED, DIVERGED

FAST = {"noise_seeds": 0, "drop": "none", "check_determinism": False}


def test_the_stream_the_full_resume_departs_on_is_not_said_to_resume_alike():
    report = verify("fixtures.trust.iterator_in_load:LOADS_AHEAD", **FAST)
    own = report.full_resume
    assert own.verdict == DIVERGED and own.first_divergent_step == 5
    assert [(f.component, f.status) for f in own.diagnosis] == [("rng", CONFIRMED)]
    as_built = [line for line in report.not_checked if "as the run's build made" in line]
    assert not any(line.startswith("`rng`") for line in as_built), as_built
    # (the rest still is: the epoch's order, held as built at 3, which no row drops)
    assert any(line.startswith("`order`") for line in as_built), as_built
