"""A data loader's state put in after the program made its iterator may not
reach that iterator: a rerun that puts it right and changes nothing is no
evidence that it is not the cause (fixtures/trust/loader_state_early.py)."""

from __future__ import annotations

import pytest

from resumecheck import verify

SPEC = "fixtures.trust.loader_state_early:"


@pytest.mark.parametrize("isolation", ["inprocess",
                                       pytest.param("process", marks=pytest.mark.process)])
def test_a_position_saved_too_early_is_not_called_not_the_cause(isolation):
    """A trial: `data_cursor (differs, not the cause)` while the position the
    checkpoint saved was the whole bug; the put-right went into the loader,
    and the program went on with the iterator its load() had made."""
    report = verify(SPEC + "BUGGY", drop="none", noise_seeds=0, isolation=isolation)
    own, engine = report.runs
    assert own.checkpoint == "program" and own.verdict == "diverged"
    assert own.first_divergent_step == 4
    [finding] = own.diagnosis
    assert finding.component == "data_cursor" and finding.status is None
    assert "not the cause" not in own.explanation
    assert ("not judged: putting `data_cursor` right after your load() changed nothing, but "
            "your program goes on with `it`, an iterator it had made from that loader before"
            ) in finding.detail
    assert engine.checkpoint == "engine" and engine.verdict == "identical"


def test_its_twin_resumes_and_nothing_is_said_of_iterators():
    report = verify(SPEC + "CORRECT", drop="none", noise_seeds=0)
    assert report.equivalent and report.declared_state_complete
    assert all("iterator" not in run.explanation for run in report.runs)


def test_an_iterator_made_at_the_build_is_named_where_the_engines_resume_diverges():
    """The program's own resume is right; the engine's cannot be: it restores
    the loader after the build, and the program goes on with the iterator it
    made as it was built. Said, with what to do."""
    report = verify(SPEC + "ITERATOR_AT_BUILD", drop="none", noise_seeds=0)
    own, engine = report.runs
    assert report.equivalent and own.verdict == "identical"
    assert engine.verdict == "diverged" and report.declared_state_complete is False
    assert ("the engine put the state of `data_cursor` into its loader after the build, but "
            "your program goes on with `it`, an iterator it had made from that loader before"
            ) in engine.explanation
    assert "make the iterator once the loader's state is loaded" in engine.explanation
