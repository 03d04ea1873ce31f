"""Sparse gradients are digested and compared as the dense tensors they stand
for (fixtures/trust/sparse_embedding.py), and a fault of the check's own
tracing inside a step is said to be the check's, never the program's."""

from __future__ import annotations

import pytest

from resumecheck import ReferenceFailed, verify
from resumecheck import trace
from resumecheck.report import DIVERGED

SPEC = "fixtures.trust.sparse_embedding:"


def test_a_sparse_embedding_trained_with_sparse_adam_resumes():
    report = verify(SPEC + "CORRECT", noise_seeds=0)
    assert report.equivalent, report.render()
    dropped = {tuple(r.dropped): r for r in report.runs if r.dropped}
    assert dropped[("sparse_opt",)].verdict == DIVERGED  # (exercised: its moments matter)


def test_its_twin_that_saves_no_sparse_optimizer_is_caught_and_blamed():
    own = verify(SPEC + "SPARSE_OPT_LOST", drop="none", noise_seeds=0).full_resume
    assert own.verdict == DIVERGED
    assert own.first_divergent_quantity == "parameter embedding.weight"
    assert [(f.component, f.status) for f in own.diagnosis] == [("sparse_opt", "confirmed")]


def test_a_fault_of_the_checks_own_tracing_is_not_blamed_on_the_program(monkeypatch):
    """A trial: a sparse gradient's digest raised inside the check's optimizer
    hook, and the check told the user to fix a correct program."""
    def broken(value):
        raise RuntimeError("no digest of this")

    monkeypatch.setattr(trace, "digest", broken)
    with pytest.raises(ReferenceFailed) as raised:
        verify(SPEC + "CORRECT", drop="none", noise_seeds=0)
    message = str(raised.value)
    assert "resumecheck's own tracing (the optimizer's step pre-hook) raised RuntimeError: " \
           "no digest of this (at resumecheck/trace.py:" in message, message
    assert "a fault of resumecheck, not of your program's code" in message
    assert "Fix the program" not in message
