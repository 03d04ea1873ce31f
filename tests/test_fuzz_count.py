"""``max_examples`` is the number of schedules tried, the default one included."""

from __future__ import annotations

import fixtures.bugs.class15_second_resume_stale_cursor as c15
from resumecheck.fuzz import fuzz


def test_one_example_is_the_default_schedule_alone():
    result = fuzz(c15.CORRECT, max_examples=1, budget=60)
    assert result.examples == result.distinct_schedules == 1
    assert not result.found and not result.budget_exhausted
