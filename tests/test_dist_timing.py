"""`resumecheck timing --nproc N`: every rank's phases, min and max over the ranks."""

from __future__ import annotations

import json

import pytest

from resumecheck import Target
from resumecheck.errors import InvalidArgument
from resumecheck.timing import PHASES, measure


def test_an_in_memory_target_cannot_be_timed_on_ranks():
    from resumecheck.tiny_dist import build_ddp

    with pytest.raises(InvalidArgument, match="module:attr"):
        measure(Target(factory=build_ddp), nproc=2)


@pytest.mark.distributed
@pytest.mark.e2e
def test_ddp_program_shows_gradient_sync_and_barrier_idle_per_rank():
    from resumecheck.schema import validate

    report = measure("resumecheck.tiny_dist:DDP", nproc=2, steps=4, warmup=1,
                     checkpoint_every=2)
    doc = report.to_json()
    validate(json.loads(json.dumps(doc)))
    assert [r["rank"] for r in doc["ranks"]] == [0, 1]
    for rank in doc["ranks"]:
        phases = rank["phases"]
        assert list(phases) == list(PHASES)
        assert phases["grad_sync"]["calls"] >= 4  # at least one bucket all-reduced per step
        assert phases["grad_sync"]["total_s"] > 0
        assert phases["barrier"]["calls"] == 4  # the engine's barrier after every step
        assert phases["checkpoint"]["calls"] == 2
        assert phases["forward"]["calls"] == 8  # two micro-batches a step
        # The sync runs inside backward: the time the phases cover counts it once.
        assert rank["phases_total_s"] <= rank["step_total_s"] * 1.001
    table = report.render()
    assert "2 ranks; step median min" in table and "total min" in table and "total max" in table
    rows = {line.split()[0]: line.split() for line in table.splitlines()[-3:-1]}
    assert set(rows) == {"0", "1"}  # gradient sync and the barrier, rank by rank
    # (a trial: both ranks' barrier time was called idle; beyond the least is the wait)
    at = {r: float(row[3]) for r, row in rows.items()}
    beyond = {r: float(row[5]) for r, row in rows.items()}
    assert min(beyond.values()) == 0.0
    assert all(beyond[r] == pytest.approx(at[r] - min(at.values()), abs=0.002) for r in rows)
    assert table.splitlines()[-1].startswith("(at barrier: the barrier's own round trip,")


def test_a_gradient_sync_never_entered_is_no_measured_zero_in_the_rank_rows():
    """A trial: the rank rows said 'grad_sync total 0.000 ms' where the table
    above said the phase was never entered."""
    import copy

    report = measure("resumecheck.tiny:TARGET", steps=2, warmup=1, checkpoint_every=2)
    one = report.ranks[0]
    assert one["phases"]["grad_sync"]["calls"] == 0
    report.ranks = [one, {**copy.deepcopy(one), "rank": 1}]
    rows = [line.split() for line in report.render().splitlines() if line[:2] in ("0 ", "1 ")]
    assert [row[:2] for row in rows] == [["0", "-"], ["1", "-"]]
