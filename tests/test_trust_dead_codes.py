"""Trial 261: a VQ-VAE's codebook usage counts, a buffer registered with
persistent=False, were lost by its checkpoint; after a restart more codes
looked dead, and restarting them drew more from torch's stream. The WARNING
led with a DataLoader's base seed and prefetching, which the program did not
have; the lost counts, named in the `not compared` lines, are said first
(fixtures/trust/dead_codes.py)."""

from __future__ import annotations

from resumecheck import verify

FAST = {"drop": "none", "noise_seeds": 0}


def test_a_restart_that_draws_more_because_of_lost_state_names_that_state_first():
    report = verify("fixtures.trust.dead_codes:FORGETS_USAGE", **FAST)
    assert not report.equivalent
    assert any(line.startswith("params.usage (") for line in report.undeclared)
    notice = report.incomplete_state_notice() or ""
    assert notice.startswith(
        "the restart draws from a random stream where the uninterrupted run does not, and your "
        "checkpoint may lose `params.usage` (see `not compared`): where what a step draws "
        "depends on that state (how many codes or samples it draws anew, a branch taken by "
        "chance), a restart that lost it draws otherwise; where a step reads it (not a value "
        "kept only to be logged), keep it in the checkpoint first. "
        "The engine restored every declared component"), notice
    # (trial 481: after "keep it first", "however complete the checkpoint" read as if
    # keeping it could not help)
    assert "however complete the checkpoint" not in notice, notice
    assert "Where the restart draws otherwise with it kept, a draw the uninterrupted run does " \
        "not make sends the continuation elsewhere" in notice, notice
    assert verify("fixtures.trust.dead_codes:CORRECT", **FAST).equivalent


def test_what_a_checkpoint_only_may_lose_is_not_told_to_be_kept_first_whatever_it_is():
    """A later trial: a last validation loss kept only to be printed, which no
    step read, led the WARNING as what to keep in the checkpoint first; the
    cause was a loader's iterator made after the load."""
    from resumecheck.report import StreamOffset, _drawn_notice

    drawn = StreamOffset(stream="torch", step=6, draws=1, unit="draw", detail="torch CPU "
                         "stream is 1 draw ahead")
    may = _drawn_notice(drawn, "differs from step 6 (loss)", "", ".", [("state.last_val", False)])
    assert "may lose `state.last_val`" in may
    assert "; keep it in the checkpoint first" not in may
    assert "where a step reads it (not a value kept only to be logged), keep it" in may
    shown = _drawn_notice(drawn, "differs from step 6 (loss)", "", ".", [("state.ema", True)])
    assert "your checkpoint loses `state.ema`" in shown
    assert "draws otherwise; keep it in the checkpoint first." in shown


def test_a_draw_on_every_rank_is_said_of_every_rank_in_the_warning():
    """A trial on two ranks: the WARNING said "the torch CPU stream of rank 0 is
    1 draw ahead", where the table and the stream lines said both ranks."""
    from resumecheck.report import StreamOffset, _with_ranks_alike

    def offset(rank: int, draws: int = 1) -> StreamOffset:
        return StreamOffset(stream=f"torch[rank {rank}]", step=7, draws=draws, unit="draw",
                            detail=f"torch CPU stream of rank {rank} is {draws} draw ahead")

    both = [offset(0), offset(1)]
    assert _with_ranks_alike(both[0], both).detail == (
        "torch CPU stream of rank 0 (and of rank 1, alike) is 1 draw ahead")
    apart = [offset(0), offset(1, draws=2)]
    assert _with_ranks_alike(apart[0], apart) is apart[0]


def test_a_draw_in_the_step_that_read_a_later_epochs_first_samples_may_follow_from_them():
    """A trial's loop skipped past its epoch's end and began the next, whose new
    iterator drew its base seed: the WARNING put the draw first, as the cause."""
    from resumecheck.report import DIVERGED, RunResult, StreamOffset, _read_a_later_epoch

    drawn = StreamOffset(stream="torch", step=7, draws=1, unit="draw",
                         detail="torch CPU stream is 1 draw ahead")
    engine = RunResult(dropped=[], resume_at=[5], verdict=DIVERGED, first_divergent_step=6,
                       divergence_detail="step 6: 8 of 8 samples differ; they are what the "
                       "uninterrupted run read at step 9, the first of a later epoch: ...")
    assert _read_a_later_epoch(engine, drawn).startswith(
        "Step 6 read a later epoch's first samples (see the first divergence), and a new "
        "epoch's iterator draws its base seed as it is made: the draw may follow from what the "
        "restart reads, not cause it.")
    engine.divergence_detail = "step 6: 8 of 8 samples differ"  # (no later epoch read)
    assert _read_a_later_epoch(engine, drawn) == ""


def test_state_a_checkpoint_loses_is_named_in_the_session_row():
    """Trial 481: lost codebook statistics, named by `run` as "your checkpoint
    loses it", were in no cell of the plugin's row, which read "it draws from a
    random stream after the restore more than the uninterrupted run"."""
    from resumecheck.pytest_plugin import _uncompared_cells

    line = ("params.quantizer.cluster_size (Tensor: 1 tensor, 32 values, that the run changed "
            "...); your own resume held it otherwise right after your load() at step 10 and "
            "after step 11, before it departed from the uninterrupted run at step 12: your "
            "checkpoint loses it, unless it is not state (a log, a timer: name it in "
            "Target(not_state=...))")
    assert _uncompared_cells([line]) == [  # (trials 791, 796: as its line says it)
        "not compared, your checkpoint loses it, unless it is not state: "
        "params.quantizer.cluster_size"]
    plain = line.replace(", unless it is not state (a log, a timer: name it in "
                         "Target(not_state=...))", "")
    assert _uncompared_cells([plain]) == [
        "not compared, your checkpoint loses it: params.quantizer.cluster_size"]
    # (trial 485: a field its component's state_dict() leaves out was named twice)
    field = ("scheduler.restarts (int: 0 at the build, 2 at the end, changed during the run; a "
             "field of the declared component scheduler (Cosine) that the engine's restore of "
             "it does not set back: its state_dict() leaves it out ...); your own resume held "
             "it otherwise right after your load() at step 13 and after step 14, before it "
             "departed from the uninterrupted run at step 15: your checkpoint loses it")
    assert [c.split(":")[0] for c in _uncompared_cells([field])] == [
        "not compared, a field its component's state_dict() leaves out"]
