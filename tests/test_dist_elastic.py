"""Elastic resume: checkpointed at N ranks, restarted at M != N
(``--nproc N --resume-nproc M``). The first tests need no launch; the rest
start real ranks (three launches each: the reference, the first half, the
restart at M) on 4 steps with a restart at 2."""

from __future__ import annotations

import pytest

import torch

from resumecheck.capture import CHECKPOINT_FORMAT
from resumecheck.compare import Tolerance
from resumecheck.elastic import global_batches_differ, judge_elastic, unmapped_state
from resumecheck.errors import InvalidArgument
from resumecheck.report import RunResult
from resumecheck.segments import SegmentResult
from resumecheck.settings import Settings
from resumecheck.trace import StepRecord

NAMES = ["params", "rng[rank 0]", "rng[rank 1]", "data_cursor[rank 0]", "data_cursor[rank 1]"]


@pytest.mark.parametrize(("fields", "says"), [
    ({"resume_nproc": 1}, "give nproc too"),
    ({"nproc": 2, "resume_nproc": 2}, "equals nproc=2"),
    ({"nproc": 2, "resume_nproc": 0}, "expected an int >= 1"),
    ({"nproc": 2, "resume_nproc": 1, "drop": ["rng[rank 1]"]}, "full resume"),
])
def test_resume_nproc_is_validated_with_the_settings(fields, says):
    with pytest.raises(InvalidArgument, match="resume_nproc") as info:
        Settings(**fields)
    assert says in str(info.value)
    Settings(nproc=2, resume_nproc=1, drop="none")


def test_per_rank_state_that_cannot_map_is_named_both_ways():
    assert unmapped_state(NAMES, 2, 1) == [
        "data_cursor[rank 1]: no rank 1 at 1 rank(s); its state is restored on no rank",
        "rng[rank 1]: no rank 1 at 1 rank(s); its state is restored on no rank",
    ]
    grown = unmapped_state(["params", "rng[rank 0]"], 1, 2)
    assert grown == ["rng[rank 1]: rank 1 is new at 2 ranks; the checkpoint of 1 rank(s) "
                     "holds no state of its own for it"]
    assert unmapped_state(["params"], 2, 1) == []


def test_the_data_position_is_listed_by_what_the_continuation_read():
    """Per meaning, not per rank: a continuation that reads the reference's global
    batches mapped the position; one that does not is named once, with the step."""
    assert unmapped_state(NAMES, 2, 1, data_from=False) == [
        "rng[rank 1]: no rank 1 at 1 rank(s); its state is restored on no rank"]
    moved = unmapped_state(NAMES, 2, 1, data_from=4)
    assert moved[0] == ("data_cursor: the continuation reads another global batch than the "
                        "reference from step 4 (the samples of all ranks together differ)")
    assert len(moved) == 2 and moved[1].startswith("rng[rank 1]")


def _steps(tmp_path, name, batches):
    """A tensor directory: step -> the samples of each rank."""
    folder = tmp_path / name
    folder.mkdir()
    for step, ranks in batches.items():
        torch.save({f"data[rank {r}]": torch.tensor(s) for r, s in enumerate(ranks)},
                   folder / f"step_{step}.pt")
    return str(folder)


def test_global_batches_are_compared_over_all_ranks_together(tmp_path):
    ref = _seg([1.0, 0.9, 0.8, 0.7], 0)
    ref.tensor_dir = _steps(tmp_path, "ref", {3: [[1, 2], [3, 4]], 4: [[5, 6], [7, 8]]})
    same = _seg([0.8, 0.7], 2)
    same.tensor_dir = _steps(tmp_path, "same", {3: [[3, 1, 4, 2]], 4: [[5, 7, 6, 8]]})
    assert global_batches_differ(ref, [same]) is False
    other = _seg([0.8, 0.7], 2)
    other.tensor_dir = _steps(tmp_path, "other", {3: [[1, 2, 3, 4]], 4: [[1, 2, 3, 4]]})
    assert global_batches_differ(ref, [other]) == 4
    unrecorded = _seg([0.8, 0.7], 2)
    assert global_batches_differ(ref, [unrecorded]) is None
    # every rank reporting the global batch itself: taken once (a trial's correct
    # program was said to read another global batch at one rank)
    each = _seg([1.0, 0.9, 0.8, 0.7], 0)
    each.tensor_dir = _steps(tmp_path, "each", {3: [[1, 2, 3, 4], [1, 2, 3, 4]],
                                                4: [[5, 6, 7, 8], [5, 6, 7, 8]]})
    assert global_batches_differ(each, [same]) is False
    assert global_batches_differ(each, [other]) == 4


def test_another_steps_global_batch_is_blamed_on_the_position_or_on_the_epoch(tmp_path):
    """A batch the run read at another step: the data position; at the same
    place of another epoch, where the program says where its epochs end and
    declares sampler_epoch, the epoch (a trial's lost epoch was blamed on the
    position, and fuzz, shrinking, found no alike failure before it)."""
    from resumecheck.elastic import _read_elsewhere

    batches = {1: [[1, 2], [3, 4]], 2: [[5, 6], [7, 8]], 3: [[9, 10], [11, 12]],
               4: [[13, 14], [15, 16]]}
    ref = _seg([1.0, 0.9, 0.8, 0.7], 0, ("params", "sampler_epoch", "data_cursor[rank 0]"))
    ref.tensor_dir = _steps(tmp_path, "ref", batches)
    ref.boundaries = {"steps_per_epoch": 2}
    restart = _seg([0.8, 0.7], 2)
    restart.tensor_dir = _steps(tmp_path, "epoch", {3: [[1, 2, 3, 4]], 4: [[5, 6, 7, 8]]})
    found = _read_elsewhere(ref, [restart], 3, 1)
    assert found is not None and found.component == "sampler_epoch"
    assert found.detail == ("the continuation's global batch at step 3 is the one the "
                            "uninterrupted run read at step 1 (2 steps earlier), at the same "
                            "place in another epoch: the epoch's order is another epoch's at "
                            "1 rank(s)")
    again = _seg([0.8, 0.7], 2)
    again.tensor_dir = _steps(tmp_path, "again", {3: [[5, 6, 7, 8]], 4: [[9, 10, 11, 12]]})
    assert _read_elsewhere(ref, [again], 3, 1).component == "data_cursor"  # (step 2: a place)
    ref.boundaries = {}  # (no epochs said: the position, or the epoch's order)
    assert _read_elsewhere(ref, [restart], 3, 1).component == "data_cursor"


def _seg(losses, start, names=("params",)):
    records = [StepRecord(step=start + i + 1, loss=x, digests={}) for i, x in enumerate(losses)]
    return SegmentResult(records=records, names=list(names), captures={}, end_state=None)


def _capture(path, components):
    torch.save({"format": CHECKPOINT_FORMAT, "components": components, "meta": {}}, path)
    return str(path)


def _judge(ref_names, continuation, restored=None, tmp_path=None):
    """``restored``: the scheduler state the restart's load() gave (the reference's
    at step 2 is last_epoch 2)."""
    ref = _seg([1.0, 0.9, 0.8, 0.7], 0, ref_names)
    restart = _seg(continuation, 2)
    if restored is not None:
        sched = {"last_epoch": 2, "base_lrs": [0.1]}
        ref.captures = {2: _capture(tmp_path / "ref2.pt", {"scheduler": sched,
                                                            "rng[rank 1]": {"torch": 1}})}
        restart.restored_state = _capture(tmp_path / "restored.pt",
                                          {"scheduler": {**sched, **restored}})
    result = RunResult(dropped=[], resume_at=[2], verdict="inconclusive", checkpoint="program",
                       nproc=1)
    judge_elastic(ref, result, [(0, _seg([1.0, 0.9], 0)), (2, restart)],
                  Tolerance.close(), 2, 1)
    return result


def test_a_continuation_beyond_the_tolerance_diverges_when_every_state_maps():
    close = _judge(["params"], [0.8 + 1e-7, 0.7])
    assert close.verdict == "close" and close.unmapped == []
    far = _judge(["params"], [0.8, 0.71])
    assert far.verdict == "diverged"
    assert (far.first_divergent_step, far.first_divergent_quantity) == (4, "loss")
    assert far.max_abs_loss_diff == pytest.approx(0.01)


def test_a_continuation_beyond_the_tolerance_is_inconclusive_when_per_rank_state_was_lost():
    result = _judge(NAMES, [0.8, 0.71])
    assert result.verdict == "inconclusive"
    assert "rng[rank 1]: no rank 1 at 1 rank(s)" in result.explanation
    assert "cannot judge" in result.explanation


def test_mapped_state_the_load_did_not_restore_diverges_whatever_the_streams(tmp_path):
    """State held alike on every rank, compared right after the load: no stream
    or data position has touched it yet, so unmapped per-rank state is no excuse."""
    result = _judge(NAMES, [0.8, 0.71], restored={"last_epoch": 0}, tmp_path=tmp_path)
    assert result.verdict == "diverged"
    assert [(f.component, f.step) for f in result.diagnosis] == [("scheduler", 2)]
    assert "last_epoch 0, expected 2" in result.diagnosis[0].detail
    assert "did not restore scheduler" in result.explanation
    restored_alike = _judge(NAMES, [0.8, 0.71], restored={}, tmp_path=tmp_path)
    assert restored_alike.verdict == "inconclusive" and restored_alike.diagnosis == []
    assert "restored as the reference had it at step 2" in restored_alike.explanation
    unused = _judge(NAMES, [0.8, 0.7], restored={"last_epoch": 0}, tmp_path=tmp_path)
    assert unused.verdict == "identical"  # a latent gap: a warning, as in one process
    assert unused.latent_gaps == ["scheduler: " + result.diagnosis[0].detail]


# -- real launches ---------------------------------------------------------------------

FAST = {"noise_seeds": 0, "check_determinism": False, "steps": 4, "resume_at": 2,
        "drop": "none"}


def _elastic(target, n, m):
    from resumecheck.engine import verify

    report = verify(target, nproc=n, resume_nproc=m, **FAST)
    assert [(r.checkpoint, r.nproc) for r in report.runs] == [("program", m)]  # no ablations
    assert report.tolerance["mode"] == "close"  # never bit for bit across world sizes
    assert f"--nproc {n} --resume-nproc {m}" in report.runs[0].reproduce
    return report, report.runs[0]


@pytest.mark.e2e
@pytest.mark.distributed
@pytest.mark.parametrize("target", ["DDP_ELASTIC", "FSDP_ELASTIC"])
@pytest.mark.parametrize(("n", "m", "unmapped"), [
    (2, 1, "rng[rank 1]: no rank 1 at 1 rank(s)"),
    (1, 2, "rng[rank 1]: rank 1 is new at 2 ranks"),
])
def test_elastic_resume_keeps_the_global_batch_and_continues_within_tolerance(
        target, n, m, unmapped):
    """DDP (replicated) and FSDP2 (DCP reshards the parameters and AdamW's state)."""
    report, run = _elastic(f"resumecheck.tiny_dist:{target}", n, m)
    assert run.verdict == "close" and report.equivalent  # not bitwise: the sync adds in
    assert run.max_abs_loss_diff < 1e-5 and 0 < run.max_abs_diff < 1e-5  # another order
    assert [u for u in run.unmapped if u.startswith(unmapped)] == run.unmapped
    assert not any("data_cursor" in u for u in run.unmapped)  # the global batch continued
    assert "params, optimizer, scheduler" in run.explanation
    assert run.diagnosis == []


@pytest.mark.e2e
@pytest.mark.distributed
def test_elastic_resume_with_per_rank_dropout_is_inconclusive_not_diverged():
    report, run = _elastic("resumecheck.tiny_dist:DDP", 2, 1)
    assert run.verdict == "inconclusive" and not report.equivalent
    assert run.first_divergent_step == 3
    assert "rng[rank 1]: no rank 1 at 1 rank(s)" in run.explanation
    assert "restored as the reference had it at step 2" in run.explanation
    assert run.diagnosis == [] and not any("data_cursor" in u for u in run.unmapped)
    # (trial 482: steps that return their samples were told to return them)
    assert "The samples each step returned were compared" in run.explanation, run.explanation
    # (a trial: the header named the checkpoint's 2 ranks, the row '1 ranks')
    assert "runs of 2 ranks, restarts as new launches of 1 rank (torch's launcher)" in \
        report.render()
    assert run.label == "elastic resume (own save/load, restarted at 1 rank)"


# -- the seeded bug: a load that forgets the scheduler at another number of ranks --


@pytest.mark.e2e
@pytest.mark.distributed
@pytest.mark.parametrize(("target", "n", "m", "step"), [
    ("BUGGY", 2, 1, 4), ("BUGGY", 1, 2, 4), ("BUGGY_DROPOUT", 2, 1, 3),
])
def test_a_load_that_forgets_the_scheduler_when_resharded_is_diverged_on_it(
        target, n, m, step):
    """The streams of a gone (or new) rank could not be mapped, so the old verdict
    was inconclusive; the scheduler's state after the load is evidence on its own."""
    report, run = _elastic(f"fixtures.dist_elastic:{target}", n, m)
    assert run.verdict == "diverged" and not report.equivalent
    assert [(f.component, f.step) for f in run.diagnosis] == [("scheduler", 2)]
    assert "last_epoch 0, expected 2" in run.diagnosis[0].detail
    assert run.unmapped and "did not restore scheduler" in run.explanation
    # (a trial read the loss's departure as the scheduler's doing)
    assert run.explanation.endswith("which alone changes the loss; the verdict rests on "
                                    "scheduler differing right after the load")
    # no dropout: the restored lr steps once as it should, the warm-up's next lr
    # differs, and the end state shows it; with dropout the loss moves at once
    assert run.first_divergent_step == step


@pytest.mark.e2e
@pytest.mark.distributed
def test_its_twin_that_maps_the_scheduler_is_close():
    report, run = _elastic("fixtures.dist_elastic:CORRECT", 2, 1)
    assert run.verdict == "close" and report.equivalent
    assert run.diagnosis == [] and run.latent_gaps == []


@pytest.mark.e2e
@pytest.mark.distributed
def test_a_position_taken_per_rank_rereads_a_batch_and_is_diverged_on_it_despite_dropout():
    """Trials 104 and 105: a data position saved as each rank's count re-read
    the last global batch before the restart at fewer ranks, and the resume
    was only inconclusive (per-rank streams could not be mapped). Streams do
    not make ranks read the run's own batch of another step: diverged."""
    report, run = _elastic("fixtures.dist_elastic:POSITION_PER_RANK_DROPOUT", 2, 1)
    assert run.verdict == "diverged" and not report.equivalent
    assert [(f.component, f.step) for f in run.diagnosis] == [("data_cursor", 2)]
    assert run.diagnosis[0].detail == (
        "the continuation's global batch at step 3 is the one the uninterrupted run read at "
        "step 2 (1 step earlier): the data position (or the epoch's order) maps to another "
        "point at 1 rank(s)")
    assert "rng[rank 1]: no rank 1 at 1 rank(s)" in "; ".join(run.unmapped)


def _elastic_run(loss_diff: float, unmapped: list[str]) -> RunResult:
    result = RunResult(dropped=[], resume_at=[2], verdict="inconclusive", checkpoint="program")
    result.max_abs_loss_diff = loss_diff
    result.unmapped = unmapped
    return result


def test_a_loss_that_ties_in_float32_but_differs_is_close_not_identical():
    from resumecheck.elastic import _conclude

    result = _elastic_run(5.96e-8, [])
    _conclude(result, None, None, "every step's loss", Tolerance.close(), 2, 1)
    assert result.verdict == "close"
    exact = _elastic_run(0.0, [])
    _conclude(exact, None, None, "every step's loss", Tolerance.close(), 2, 1)
    assert exact.verdict == "identical"


def test_inconclusive_says_which_components_it_could_not_compare():
    from resumecheck.elastic import _conclude

    result = _elastic_run(0.031, ["rng[rank 1]: no rank 1 at 1 rank(s)"])
    _conclude(result, None, (7, "loss"), "every step's loss", Tolerance.close(), 2, 1,
              restore_compared=True, not_compared=["params", "optimizer"])
    assert result.verdict == "inconclusive"
    assert "Of params, optimizer (sharded or held per rank" in result.explanation
    assert "a load that got their shards wrong is not ruled out" in result.explanation


def test_inconclusive_says_only_what_the_unmapped_state_makes_the_ranks_do():
    """A trial's program declared no stream, and its data position, saved as
    each rank's batch count, skipped other samples at one rank: it was told its
    ranks drew other random streams, and offered no lead."""
    from resumecheck.elastic import _conclude

    batch = ("data_cursor: the continuation reads another global batch than the reference "
             "from step 5 (the samples of all ranks together differ)")
    result = _elastic_run(13.9, [batch])
    _conclude(result, None, (5, "loss"), "every step's loss", Tolerance.close(), 2, 1)
    assert result.verdict == "inconclusive"
    assert "at 1 rank(s) the ranks may read other samples than at 2, so" in result.explanation
    assert "random streams" not in result.explanation
    assert result.explanation.endswith(
        "; if your program means to keep the global batch at every number of ranks, the other "
        "global batch it read from step 5 points at its data position (saved per rank where "
        "it must be global, or mapped wrongly by its load())")
    streams = _elastic_run(0.031, ["rng[rank 1]: no rank 1 at 1 rank(s)"])
    _conclude(streams, None, (7, "loss"), "every step's loss", Tolerance.close(), 2, 1)
    assert "the ranks may draw other random streams than at 2, so" in streams.explanation
    # (trial 464: told to declare no per-rank stream, where returning samples was what judged)
    assert "Where each step returns its samples (StepOutput(samples=...)), the global batch " \
        "every step reads is compared" in streams.explanation
    assert "points at its data position" not in streams.explanation
    # (trial 482: its steps returned their samples, and it was told to return them)
    returned = _elastic_run(0.031, ["rng[rank 1]: no rank 1 at 1 rank(s)"])
    _conclude(returned, None, (7, "loss"), "every step's loss", Tolerance.close(), 2, 1,
              samples=True)
    assert "Where each step returns its samples" not in returned.explanation
    assert "The samples each step returned were compared, the global batch of every step: one " \
        "that is, bit for bit, the uninterrupted run's batch of another step is judged, " \
        "diverged" in returned.explanation, returned.explanation


def _sharded_optimizer(lr, steps, moments):
    """An FSDP2-style optimizer state per rank: its moments are each rank's own shard."""
    return {"state": {0: {"step": torch.tensor(float(steps)), "exp_avg": torch.tensor(m)}
                      for m in [moments]},
            "param_groups": [{"lr": lr, "params": [0]}]}


def test_a_sharded_optimizer_whose_load_lost_its_learning_rate_and_steps_is_named(tmp_path):
    """A sharded optimizer is not comparable across world sizes as a whole, but
    the leaves every rank holds alike (its learning rate, its step counts) are."""
    from resumecheck.elastic import restored_differences

    ref = _seg([1.0, 0.9, 0.8, 0.7], 0, ["optimizer"])
    ref.captures = {2: _capture(tmp_path / "ref2.pt", {"optimizer": {
        "[rank 0]": _sharded_optimizer(0.0025, 2, [0.1, 0.2]),
        "[rank 1]": _sharded_optimizer(0.0025, 2, [0.3, 0.4])}})}
    lost = _seg([0.8, 0.71], 2, ["optimizer"])
    lost.restored_state = _capture(tmp_path / "lost.pt", {"optimizer": {
        "state": {}, "param_groups": [{"lr": 0.01, "params": [0]}]}})
    found = restored_differences(ref, lost, 2, Tolerance.close())
    assert [f.component for f in found] == ["optimizer"]
    assert found[0].detail.startswith("param_groups[0].lr 0.01, expected 0.0025")
    restarted = _seg([0.8, 0.71], 2, ["optimizer"])  # the steps restarted from 0
    restarted.restored_state = _capture(tmp_path / "restarted.pt", {
        "optimizer": _sharded_optimizer(0.0025, 0, [0.1, 0.2, 0.3, 0.4])})
    steps = restored_differences(ref, restarted, 2, Tolerance.close())[0].detail
    assert steps.startswith("state.0.step "), steps
    fewer_keys = _seg([0.8, 0.71], 2, ["optimizer"])  # a load that leaves out a None option
    state = _sharded_optimizer(0.0025, 2, [0.1, 0.2, 0.3, 0.4])
    ref_state = _sharded_optimizer(0.0025, 2, [0.1, 0.2])
    ref_state["param_groups"][0]["foreach"] = None
    fewer_keys.restored_state = _capture(tmp_path / "fewer.pt", {"optimizer": state})
    ref.captures[2] = _capture(tmp_path / "ref2b.pt", {"optimizer": {
        "[rank 0]": ref_state, "[rank 1]": {**ref_state, "state": {0: {
            "step": torch.tensor(2.0), "exp_avg": torch.tensor([0.3, 0.4])}}}}})
    assert restored_differences(ref, fewer_keys, 2, Tolerance.close()) == []
    kept = _seg([0.8, 0.71], 2, ["optimizer"])
    kept.restored_state = _capture(tmp_path / "kept.pt", {
        "optimizer": _sharded_optimizer(0.0025, 2, [0.1, 0.2, 0.3, 0.4])})
    assert restored_differences(ref, kept, 2, Tolerance.close()) == []
    wrong_lr = _seg([0.8, 0.71], 2, ["optimizer"])
    wrong_lr.restored_state = _capture(tmp_path / "lr.pt", {
        "optimizer": _sharded_optimizer(0.01, 2, [0.1, 0.2, 0.3, 0.4])})
    detail = restored_differences(ref, wrong_lr, 2, Tolerance.close())[0].detail
    assert detail.startswith("param_groups[0].lr 0.01, expected 0.0025"), detail


def test_an_elastic_resume_built_without_the_runs_settings_says_so():
    """A trial: a restart built from the defaults (dropout 0.1) where the run
    had dropout 0.0 read only as unmapped random state."""
    from resumecheck.engine import elastic_settings_clause

    lost = RunResult(dropped=[], resume_at=[2], verdict="inconclusive", checkpoint="program",
                     nproc=1)
    said = elastic_settings_clause({"dropout": 0.0}, lost, ["params", "rng[rank 0]"])
    assert said.startswith("; the restarts are built from your factory's defaults, not the "
                           "settings the run was launched with (dropout=0.0)")
    assert 'Target(restart_config="run")' in said
    assert elastic_settings_clause({}, lost, ["params"]) == ""
    assert elastic_settings_clause({"dropout": 0.0}, lost, ["params", "config"]) == ""
    close = RunResult(dropped=[], resume_at=[2], verdict="close", checkpoint="program", nproc=1)
    assert elastic_settings_clause({"dropout": 0.0}, close, ["params"]) == ""
