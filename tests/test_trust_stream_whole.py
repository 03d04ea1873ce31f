"""A generator's state is saved whole or not at all. A trial's numpy
Generator, drawn from at every step, held its cached half word
(``has_uint32``) as its build left it at the resume point, and every report
named that one field as one a checkpoint may lose and still resume alike
(``verdict._whole_streams``, ``fixtures/trust/half_word_cached.py``)."""

from __future__ import annotations

from resumecheck import verify
from resumecheck.pytest_plugin import _summary_row

SPEC = "fixtures.trust.half_word_cached:TARGET"


def _said(report) -> str:
    row = _summary_row({"nodeid": "t.py::t", "target": "t", "report": report.to_json()})
    return "\n".join([*report.not_checked, report.render(), row])


def test_the_cached_word_of_a_generator_that_moved_is_not_named_under_either_drop():
    for drop in ("all", "none"):
        report = verify(SPEC, drop=drop, noise_seeds=0)
        assert report.equivalent, drop
        said = _said(report)
        assert "uinteger" not in said and "has_uint32" not in said, (drop, said)
    # (the order a fresh build draws is still named so: only a stream's fields are one)
    assert any(line.startswith("`data_cursor` (a tensor of 24 values there")
               for line in report.not_checked), report.not_checked


def test_a_checkpoint_that_loses_the_generator_is_still_caught():
    report = verify(SPEC, drop=["rng"], noise_seeds=0)
    [row] = [r for r in report.runs if r.dropped == ["rng"]]
    assert row.verdict == "diverged", row


def test_a_schedulers_written_only_entries_are_no_field_a_checkpoint_may_lose():
    """Trial 502: ReduceLROnPlateau's `_last_lr[0]`, which each step() writes and
    nothing reads, was named as a field a checkpoint may lose, "a resume point
    where it has changed checks it"; none can (``verdict._written_only``)."""
    from resumecheck.verdict import _written_only

    assert _written_only("_last_lr[0]") and _written_only("_step_count")
    assert not _written_only("best") and not _written_only("num_bad_epochs")
    assert not _written_only("last_epoch") and not _written_only("generators.loader.state")
