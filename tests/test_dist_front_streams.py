"""Issue 10: the stream-offset evidence of one process, per rank for distributed runs.

A distributed run records every rank's streams as ``torch[rank r]``; each is
searched as the stream it names, and ranks off alike are said once.
"""

from __future__ import annotations

import pytest
import torch

from resumecheck import verify
from resumecheck.evidence import annotate, stream_offsets
from resumecheck.report import RunResult
from resumecheck.segments import SegmentResult
from resumecheck.streams import draw_offset, stream_digests, stream_label
from resumecheck.trace import StepRecord

from fixtures import dist_loader_after_load as loader


def _torch_state(draws: int, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    for _ in range(draws):
        torch.empty((), dtype=torch.int64).random_(generator=g)
    return g.get_state()


def _ranks_segment(tmp_path, name, draws_by_step):
    """A merged two-rank segment: rank r's torch stream, seeded 7 + r, drawn
    ``draws[r]`` times at each step's start (as ``distributed.merge`` keys them)."""
    folder = tmp_path / name
    folder.mkdir()
    records = []
    for step, draws in draws_by_step.items():
        states = {f"torch[rank {r}]": _torch_state(n, 7 + r) for r, n in enumerate(draws)}
        torch.save(states, folder / f"streams_{step}.pt")
        records.append(StepRecord(step=step, loss=0.0, streams=stream_digests(states)))
    return SegmentResult(records=records, names=[], captures={}, end_state=None,
                         tensor_dir=str(folder))


def test_a_ranks_stream_is_labelled_and_searched_as_the_stream_it_names():
    assert stream_label("torch[rank 1]") == "torch CPU stream of rank 1"
    assert stream_label("generator aug[rank 0]") == "generator `aug` of rank 0"
    before, after = _torch_state(0, 3), _torch_state(2, 3)
    assert draw_offset("torch[rank 1]", before, after) == (2, "draws")
    assert draw_offset("torch[rank 1]", after, before) == (-2, "draws")


def test_every_ranks_offset_is_found_and_ranks_off_alike_are_said_once(tmp_path):
    reference = _ranks_segment(tmp_path, "ref", {4: (2, 2), 5: (2, 2)})
    run = _ranks_segment(tmp_path, "run", {4: (3, 3), 5: (3, 3)})
    offsets = stream_offsets(reference, [(3, run)])
    assert [(o.stream, o.step, o.draws) for o in offsets] == [
        ("torch[rank 0]", 4, 1), ("torch[rank 1]", 4, 1)]
    assert offsets[1].detail.startswith("torch CPU stream of rank 1 is 1 draw ahead")
    assert "between your load and the first step" in offsets[1].detail
    result = RunResult(dropped=[], resume_at=[3], verdict="diverged", explanation="loss differs",
                       first_divergent_step=4)
    annotate(result, reference, [(3, run)])
    assert "torch CPU stream of ranks 0 and 1 (each) is 1 draw ahead" in result.explanation


def test_ranks_off_by_other_amounts_are_each_said(tmp_path):
    reference = _ranks_segment(tmp_path, "ref", {4: (2, 2), 5: (2, 2)})
    run = _ranks_segment(tmp_path, "run", {4: (2, 4), 5: (2, 4)})
    [offset] = stream_offsets(reference, [(3, run)])  # rank 0 started level
    assert (offset.stream, offset.draws) == ("torch[rank 1]", 2)
    result = RunResult(dropped=[], resume_at=[3], verdict="diverged", explanation="x",
                       first_divergent_step=4)
    annotate(result, reference, [(3, run)])
    assert ("torch CPU stream of rank 1 is 4 32-bit words (2 int64 draws, as a shuffled loader's "
            "seeds, or 4 values") in result.explanation
    assert "ranks" not in result.explanation


@pytest.mark.e2e
@pytest.mark.distributed
def test_a_distributed_loader_made_after_the_load_is_one_draw_ahead_on_every_rank():
    report = verify(loader.BUGGY, drop=["data_cursor[rank 0]"], noise_seeds=0,
                    check_determinism=False, nproc=2)
    full = report.full_resume
    assert full.verdict == "diverged" and full.first_divergent_step == loader.RESUME_AT + 1
    assert [(o.stream, o.step, o.draws, o.unit) for o in full.stream_offsets] == [
        (f"torch[rank {r}]", loader.RESUME_AT + 1, 1, "draws") for r in (0, 1)]
    text = report.render("table")
    assert "torch CPU stream of ranks 0 and 1 (each) is 1 draw ahead" in full.explanation
    assert "a DataLoader iterator created after the load, of a loader without a generator of " \
        "its own, draws its base seed" in text
    # the ablation departs first, in the data; the draw is the full resume's own,
    # said as such, not offered as the dropped cursor's doing (a trial)
    (cursor,) = [r for r in report.runs if r.dropped]
    assert cursor.verdict == "diverged", cursor.explanation
    assert ("the torch CPU stream (ranks 0 and 1) is off as in the engine's "
            "full resume (see the WARNING): not this drop's doing") in cursor.explanation
    assert "read state that differs right after the restore" not in cursor.explanation


@pytest.mark.e2e
@pytest.mark.distributed
def test_its_twin_that_makes_the_loader_before_the_restore_has_no_stream_finding():
    report = verify(loader.CORRECT, drop="none", noise_seeds=0, check_determinism=False, nproc=2)
    assert report.equivalent, report.render()
    assert report.full_resume.stream_offsets == []
