"""A dropped random state that ends otherwise only in global streams no step
after the resume point draws from (trial 877: an RNGState of a loader's
generator, with Python's and numpy's streams by default) read "the run ends with
rng otherwise ...: another resume point may show it"; none can."""

from __future__ import annotations

from resumecheck import verify


def test_idle_global_streams_apart_at_the_end_are_not_said_to_show_elsewhere():
    from fixtures.trust import idle_global_streams

    report = verify(idle_global_streams.TARGET, noise_seeds=0, check_determinism=False)
    assert report.outcome == "EQUIVALENT"
    [row] = [r for r in report.runs if r.dropped == ["rng"]]
    assert row.verdict == "identical" and row.blind_spot, row.explanation
    assert "ends with rng otherwise" not in row.explanation, row.explanation
    assert "another resume point may show it" not in row.explanation, row.explanation
