"""Running statistics a declared model keeps outside its state_dict(): plain
tensor attributes, or buffers registered with persistent=False. A trial: the
checkpoint lost them, the report named nothing, and its WARNING offered a
DataLoader iterator as the example (fixtures/trust/running_stats.py)."""

from __future__ import annotations

import pytest

from resumecheck import verify

SPEC = "fixtures.trust.running_stats:"


@pytest.mark.parametrize("name", ["ATTRIBUTES", "NOT_PERSISTENT"])
def test_statistics_outside_the_models_state_are_named_with_what_to_do(name):
    report = verify(SPEC + name, drop="none", noise_seeds=0)
    assert not report.equivalent and report.declared_state_complete is False
    named = {what.split(" (", 1)[0]: what for what in report.undeclared}
    assert set(named) == {"params.0.count", "params.0.mean", "params.0.m2"}
    assert ("kept in a declared module outside what its state_dict() returns"
            in named["params.0.mean"])
    assert "register_buffer(name, tensor) (persistent)" in named["params.0.mean"]
    notice = report.incomplete_state_notice()
    assert "the `not compared` lines name what the program keeps outside their states" in notice
    assert "`params.0.mean`" in notice


def test_persistent_buffers_are_compared_and_nothing_is_named():
    report = verify(SPEC + "PERSISTENT", drop="none", noise_seeds=0)
    assert report.equivalent and report.declared_state_complete
    assert report.undeclared == []
