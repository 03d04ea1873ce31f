"""Issue 13 §5: name what happens to the random streams after the restore."""

import json
import random

import numpy as np
import pytest
import torch

from resumecheck import RNGState, verify
from resumecheck.assertions import describe_failure
from resumecheck.program import Target
from resumecheck.streams import MAX_DRAWS, draw_offset, stream_states
from resumecheck.trace import Tracer

from fixtures.evidence import loader_after_load

ISOLATIONS = ["inprocess", pytest.param("process", marks=pytest.mark.process)]


def _states_around(draw):
    """Stream states before and after ``draw()`` runs once."""
    gen = np.random.default_rng(3)
    rng = RNGState({"aug": gen, "loader": torch.Generator().manual_seed(4)})
    torch.manual_seed(1), random.seed(1), np.random.seed(1)
    before = stream_states([rng])
    draw(gen, rng.generators["loader"])
    return before, stream_states([rng])


@pytest.mark.parametrize(("key", "draw", "expected", "unit"), [
    ("torch", lambda g, t: torch.empty((), dtype=torch.int64).random_(), 1, "draws"),
    ("torch", lambda g, t: [iter(torch.utils.data.DataLoader(range(4))) for _ in range(3)], 3,
     "draws"),
    ("python", lambda g, t: random.random(), 2, "32-bit words"),
    ("numpy", lambda g, t: np.random.randint(0, 10), 1, "32-bit words"),
    ("generator aug", lambda g, t: g.integers(0, 2**40), 1, "raw outputs"),
    ("generator loader", lambda g, t: iter(torch.utils.data.DataLoader(range(4), generator=t)),
     1, "draws"),
])
def test_offset_search_counts_draws_forward_and_back(key, draw, expected, unit):
    before, after = _states_around(draw)
    assert draw_offset(key, before[key], after[key]) == (expected, unit)
    assert draw_offset(key, after[key], before[key]) == (-expected, unit)
    assert draw_offset(key, before[key], before[key]) == (None, unit)


def test_offset_search_is_bounded_and_leaves_the_streams_alone():
    before, _ = _states_around(lambda g, t: None)
    state = torch.get_rng_state()
    far = torch.Generator()
    far.set_state(before["torch"])
    torch.empty(MAX_DRAWS + 1, dtype=torch.int64).random_(generator=far)
    for _ in range(MAX_DRAWS + 1):
        torch.empty((), dtype=torch.int64).random_(generator=far)
    assert draw_offset("torch", before["torch"], far.get_state()) == (None, "draws")
    other = torch.Generator().manual_seed(99).get_state()
    assert draw_offset("torch", before["torch"], other) == (None, "draws")
    assert torch.equal(torch.get_rng_state(), state)


def test_recording_the_streams_draws_nothing():
    built = Target(factory=loader_after_load.CORRECT.factory).build({})
    tracer = Tracer(built, None)
    before = torch.get_rng_state()
    tracer.before_step(1)
    assert torch.equal(torch.get_rng_state(), before)
    assert set(tracer._streams) == {"torch"}  # the declared stream only
    tracer.close()


@pytest.mark.e2e
@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_iterator_created_after_the_load_is_one_torch_draw_ahead(isolation):
    report = verify(loader_after_load.BUGGY, drop="none", isolation=isolation, noise_seeds=0,
                    check_determinism=isolation == "inprocess")
    full = report.full_resume
    assert full.verdict == "diverged" and full.first_divergent_step == 8
    [offset] = full.stream_offsets
    assert (offset.stream, offset.step, offset.draws, offset.unit) == ("torch", 8, 1, "draws")
    cause = "a DataLoader iterator created after the load draws its base seed"
    for text in (full.explanation, report.render("table"), describe_failure(report)):
        assert "torch CPU stream is 1 draw ahead" in text
        assert "between your load and the first step" in text and cause in text
    plain = json.loads(report.render("json"))["runs"][0]["stream_offsets"]
    assert plain == [{"stream": "torch", "step": 8, "draws": 1, "unit": "draws",
                      "detail": offset.detail}]


@pytest.mark.e2e
@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_correct_twin_has_no_stream_finding(isolation):
    report = verify(loader_after_load.CORRECT, drop="none", isolation=isolation, noise_seeds=0,
                    check_determinism=isolation == "inprocess")
    assert report.equivalent, report.render()
    assert report.full_resume.stream_offsets == []


@pytest.mark.e2e
def test_iterator_created_on_the_first_step_shows_at_the_next_step():
    report = verify(loader_after_load.BUGGY_LAZY, drop="none", noise_seeds=0)
    full = report.full_resume
    [offset] = full.stream_offsets
    assert (offset.stream, offset.step, offset.draws) == ("torch", 9, 1)
    assert "during step 8 more than the uninterrupted run did" in offset.detail


@pytest.mark.e2e
def test_a_stream_not_restored_is_not_called_an_offset():
    report = verify(loader_after_load.CORRECT, drop=["rng"], noise_seeds=0,
                    check_determinism=False)
    [dropped] = [r for r in report.runs if r.dropped == ["rng"]]
    assert dropped.verdict in ("diverged", "inconclusive")
    [offset] = dropped.stream_offsets
    assert offset.draws is None and f"not within {MAX_DRAWS} draws" in offset.detail


def _segment(tmp_path, name, states_by_step):
    """A SegmentResult whose records carry these stream states at each step's start."""
    from resumecheck.segments import SegmentResult
    from resumecheck.streams import stream_digests
    from resumecheck.trace import StepRecord

    folder = tmp_path / name
    folder.mkdir()
    records = []
    for step, states in states_by_step.items():
        torch.save(states, folder / f"streams_{step}.pt")
        records.append(StepRecord(step=step, loss=0.0, streams=stream_digests(states)))
    return SegmentResult(records=records, names=[], captures={}, end_state=None,
                         tensor_dir=str(folder))


def _torch_state(draws):
    g = torch.Generator().manual_seed(7)
    for _ in range(draws):
        torch.empty((), dtype=torch.int64).random_(generator=g)
    return {"torch": g.get_state()}


@pytest.mark.parametrize(("resumed", "step", "draws", "words"), [
    ({4: 3, 5: 6}, 4, 1, "1 draw ahead of the reference's at the start of step 4, the first "
                         "after the restore at 3: something drew from the torch stream between"),
    ({4: 2, 5: 7}, 5, 2, "2 draws ahead of the reference's at the start of step 5 (step 4, the "
                         "first after the restore at 3, started level): something drew from the "
                         "torch stream during step 4 more than the uninterrupted run did"),
    ({4: 0, 5: 3}, 4, -2, "2 draws behind the reference's at the start of step 4"),
])
def test_stream_offsets_after_a_restore(tmp_path, resumed, step, draws, words):
    from resumecheck.evidence import stream_offsets

    reference = _segment(tmp_path, "ref", {s: _torch_state(n) for s, n in
                                           {1: 0, 2: 0, 3: 1, 4: 2, 5: 5}.items()})
    run = _segment(tmp_path, "run", {s: _torch_state(n) for s, n in resumed.items()})
    [offset] = stream_offsets(reference, [(3, run)])
    assert (offset.stream, offset.step, offset.draws) == ("torch", step, draws)
    assert words in offset.detail
    assert stream_offsets(reference, [(3, run)], until=3) == []  # a restore after the divergence


def test_every_stream_that_differs_is_named_in_the_words_not_only_the_first():
    """A trial: the data came from Python's random.sample, and the words named
    only torch's stream (the JSON had both)."""
    from resumecheck import verify

    report = verify(noise_seeds=0, drop="rng", check_determinism=False)
    [dropped] = [r for r in report.runs if r.dropped == ["rng"]]
    assert [o.stream for o in dropped.stream_offsets] == ["torch", "numpy", "python"]
    assert dropped.explanation.endswith(
        "numpy global stream differs at the start of step 9 too; "
        "Python random stream differs at the start of step 9 too")
