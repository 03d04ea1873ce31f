"""A restored component that differs is "not the cause" only on evidence:
not when it causes a later divergence hidden behind the first one, and not
when the declared components are incomplete, so that putting its declared
state right proves nothing (fixtures/trust/hidden_causes.py)."""

from __future__ import annotations

from resumecheck import verify
from resumecheck.report import CONFIRMED, DIVERGED, NOT_CAUSE

SPEC = "fixtures.trust.hidden_causes:"


def _statuses(name: str, reports: list | None = None):
    report = verify(SPEC + name, noise_seeds=0, drop="none")
    if reports is not None:
        reports.append(report)
    full = report.full_resume
    return full, {f.component: f.status for f in full.diagnosis}


def test_a_cause_hidden_behind_the_first_one_is_confirmed_too():
    full, statuses = _statuses("REBUILDS_SCHEDULER")
    assert full.verdict == DIVERGED and full.first_divergent_step == 3
    assert statuses == {"optimizer": CONFIRMED, "scheduler": CONFIRMED}
    assert verify(SPEC + "CORRECT", noise_seeds=0, drop="none").outcome == "EQUIVALENT"


def test_with_incomplete_declared_state_nothing_is_called_not_the_cause():
    reports: list = []
    full, statuses = _statuses("FORGETS_FLAG", reports)
    assert full.verdict == DIVERGED and full.first_divergent_step == 6
    assert statuses == {"unfrozen": None}
    # unmarked, a finding would read as the cause: the report says it was not judged
    assert ("diagnosis: unfrozen: False, expected True (not judged: the declared components "
            "are incomplete, see the WARNING)") in reports[0].render()
    assert NOT_CAUSE not in statuses.values()
    assert "put right alone, the run departs no later" not in full.explanation
    twin = verify(SPEC + "FREEZE_CORRECT", noise_seeds=0, drop="none")
    assert twin.outcome == "EQUIVALENT"  # (the WARNING stands: the engine's own resume departs)
    assert twin.incomplete_state_notice() is not None
