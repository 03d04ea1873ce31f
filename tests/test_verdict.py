"""The verdict on hand-built records: no program runs, only tiny tensors and files.

Each test builds the reference's and a resumed run's step records (digests
per quantity) and state files as the runner writes them, and asks
``resumecheck.verdict`` to judge.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from resumecheck import verdict
from resumecheck.compare import Tolerance
from resumecheck.errors import UnknownComponent
from resumecheck.report import Finding, RunResult
from resumecheck.capture import CHECKPOINT_FORMAT
from resumecheck.segments import SegmentResult
from resumecheck.trace import StepRecord

NAMES = ["params", "rng", "global_step"]
LOSS = [2.0, 1.8, 1.6, 1.5, 1.4, 1.3]


def _state(path: Path, **components: object) -> str:
    torch.save({"format": CHECKPOINT_FORMAT, "components": components}, path)
    return str(path)


def _records(start: int, stop: int, loss: list[float] = LOSS, **changed: dict[int, str]) -> list:
    """Records of steps start+1..stop; ``changed[quantity] = {step: digest}``
    replaces the reference's digest of that quantity at that step."""
    out = []
    for step in range(start + 1, stop + 1):
        digests = {"loss": f"loss{step}", "grad:w": f"g{step}", "param:w": f"p{step}"}
        for key, at in changed.items():
            if step in at:
                digests[key.replace("_", ":")] = at[step]
        out.append(StepRecord(step=step, loss=loss[step - 1], digests=digests))
    return out


@pytest.fixture
def files(tmp_path):
    """The reference's state at step 2 (its capture) and at the end (step 6)."""
    w2, w6 = torch.tensor([1.0, 2.0]), torch.tensor([0.5, 1.5])
    return {
        "at2": _state(tmp_path / "ref2.pt", params={"w": w2}, rng={"s": 7}, global_step={"v": 2}),
        "end": _state(tmp_path / "ref6.pt", params={"w": w6}, rng={"s": 7}, global_step={"v": 6}),
        "dir": tmp_path,
    }


def _reference(files, tolerance=None, noise=(), tensors=None):
    seg = SegmentResult(records=_records(0, 6), names=NAMES, captures={2: files["at2"]},
                        end_state=files["end"])
    return verdict.Reference(seg, tolerance or Tolerance.bitwise(), tensors, noise)


def _run(files, records, end=None, restored=None, error=None, dropped=()):
    """A resumed run from step 2 to 6 with these records and end state."""
    end = end or files["end"]
    seg = SegmentResult(records=records, names=NAMES, captures={}, end_state=end,
                        restored_state=restored, error=error, error_step=4 if error else None,
                        error_stage="step" if error else None)
    result = RunResult(dropped=list(dropped), resume_at=[2], verdict="identical")
    return result, [(2, seg)]


def _judged(ref, result, segments):
    cmp = verdict.judge(ref, result, segments)
    verdict.settle_findings(ref, result, {})
    return verdict.conclude(ref, result, cmp, segments)


def test_identical_run_says_so(files):
    ref = _reference(files)
    result = _judged(ref, *_run(files, _records(2, 6)))
    assert result.verdict == "identical" and result.first_divergent_step is None
    assert result.max_abs_loss_diff == 0.0
    assert result.explanation.startswith("resumes bit for bit")


def test_first_divergence_is_the_first_quantity_of_the_first_differing_step(files):
    ref = _reference(files)
    records = _records(2, 6, param_w={4: "x4", 5: "x5"}, grad_w={4: "y4"})
    result = _judged(ref, *_run(files, records))
    # no full tensors were kept: a differing digest is beyond any tolerance
    assert result.verdict == "diverged"
    assert (result.first_divergent_step, result.first_divergent_quantity) == (4, "gradient of w")
    assert result.explanation.startswith("gradient of w differs from step 4")
    assert result.trajectory is not None


def test_close_within_tolerance_and_diverged_beyond_it(files):
    ref_w = torch.tensor([1.0, 2.0])
    tensors = {3: {"param:w": ref_w}}
    dir3 = files["dir"] / "run"
    dir3.mkdir()
    torch.save({"param:w": ref_w + 1e-7}, dir3 / "step_3.pt")
    records = _records(2, 6, param_w={3: "near"})
    for tolerance, expected in ((Tolerance.close(1e-5, 1e-5), "close"),
                                (Tolerance.close(1e-9, 1e-9), "diverged")):
        ref = _reference(files, tolerance, tensors=tensors.get)
        result, segments = _run(files, records)
        segments[0][1].tensor_dir = str(dir3)
        result = _judged(ref, result, segments)
        assert result.verdict == expected
        assert result.max_abs_diff == pytest.approx(1.19e-7, rel=0.1)
    assert result.first_divergent_quantity == "parameter w"
    close = _judged(_reference(files, Tolerance.close(1e-5, 1e-5), tensors=tensors.get),
                    *_run(files, records))
    # without the run's tensors the difference cannot be measured: not close
    assert close.verdict == "diverged"


def _loss_run(files, ref_loss: float, run_loss: float, tolerance: Tolerance):
    """A run whose loss alone differs at step 3, each loss kept as the tracer
    keeps a Python float: a float64 tensor."""
    tensors = {3: {"loss": torch.tensor(ref_loss, dtype=torch.float64)}}
    run_dir = files["dir"] / "loss"
    run_dir.mkdir(exist_ok=True)
    torch.save({"loss": torch.tensor(run_loss, dtype=torch.float64)}, run_dir / "step_3.pt")
    records = _records(2, 6)
    records[0].digests["loss"] = "other"  # (step 3)
    result, segments = _run(files, records)
    segments[0][1].tensor_dir = str(run_dir)
    return _judged(_reference(files, tolerance, tensors=tensors.get), result, segments)


def test_a_loss_returned_as_the_item_of_a_float32_is_measured_as_a_float32(files):
    """Trial 398: ``loss.item()`` of a float32 loss, 59,678 float32 ULPs apart,
    was "over a million ULP" (counted in float64), and ``--tolerance close``
    held such a loss to a float64's tolerance."""
    ref32 = torch.tensor(3.8211656, dtype=torch.float32)
    far = _loss_run(files, ref32.item(), torch.tensor(3.8353939).item(), Tolerance.bitwise())
    assert far.max_ulp_diff == 59678 and far.largest_in["ulp"] == "loss"
    near = torch.nextafter(torch.nextafter(ref32, torch.tensor(4.0)), torch.tensor(4.0))
    close = _loss_run(files, ref32.item(), near.item(), Tolerance.close())
    assert (close.verdict, close.max_ulp_diff) == ("close", 2)  # float64's rtol: beyond
    # a loss computed in float64 is measured as one
    own64 = _loss_run(files, 3.8211656, 3.8211656 + 1e-12, Tolerance.bitwise())
    assert own64.max_ulp_diff == pytest.approx(1e-12 / 2**-51, rel=0.01)  # (float64 ULPs)


def test_a_failed_segment_is_failed_with_its_stage(files):
    ref = _reference(files)
    result = _judged(ref, *_run(files, _records(2, 3), error="RuntimeError: boom\nmore"))
    assert result.verdict == "failed" and result.failure.startswith("RuntimeError: boom")
    assert result.first_divergent_step == 4
    assert result.explanation == "a step failed: RuntimeError: boom"
    # (a launch of ranks held up twice before any of the program ran: not a step's)
    result, segments = _run(files, [], error="rank 1 did not join the process group within 60 s")
    segments[0][1].error_stage, segments[0][1].error_step = "rendezvous", None
    result = _judged(ref, result, segments)
    assert result.explanation == ("launching the ranks failed: rank 1 did not join the process "
                                  "group within 60 s"), result.explanation


def test_a_framework_loop_that_stops_early_without_its_step_count_says_why(files):
    """A trial was told to give its Trainer target more steps, which it had:
    the ablation had dropped global_step, from which the loop counts its stop."""
    ref = _reference(files)
    ended = "step 4: the HuggingFace Trainer's loop ended after step 3: its own stop came first"
    result = _judged(ref, *_run(files, _records(2, 3), error=ended, dropped=["global_step"]))
    assert result.verdict == "failed"
    assert result.explanation.endswith(
        "; here that follows from dropping global_step: the framework counts where its loop "
        "stops from it, so a restart without it stops elsewhere (not a matter of the "
        "target's steps)"), result.explanation
    kept = _judged(ref, *_run(files, _records(2, 3), error=ended, dropped=["params"]))
    assert "dropping global_step" not in kept.explanation


def test_plausible_and_gross_against_the_band():
    curves = [[1.0, 1.0, 1.0, 1.0], [1.0, 1.1, 1.2, 1.0], [1.0, 0.95, 1.0, 1.0]]
    # every pair of runs: the widest gap is 0.2 (step 3); at step 2 alone, 0.15
    assert verdict.band(curves, [2, 3, 4]) == pytest.approx(0.2)
    assert verdict.band(curves, [4]) == 0.0
    inside = RunResult(dropped=["rng"], resume_at=[1], verdict="diverged")
    verdict.plausibility(inside, {1: 5.0, 2: 0.1, 3: 0.05}, curves)
    assert inside.plausible is True and inside.noise_ratio == pytest.approx(0.5)
    # (trials 602, 603: beyond the seeds' spread at the same step: step 2's is 0.15)
    assert inside.beyond_at == []
    edge = RunResult(dropped=["rng"], resume_at=[1], verdict="diverged")
    verdict.plausibility(edge, {2: 0.18, 3: 0.05, 4: 0.01}, curves)
    assert edge.plausible is True and edge.beyond_at == [2, 4]  # (step 4's spread: 0)
    gross = RunResult(dropped=["rng"], resume_at=[1], verdict="diverged")
    verdict.plausibility(gross, {2: 0.5}, curves)  # the band over step 2 only
    assert gross.plausible is False and gross.noise_ratio == pytest.approx(0.5 / 0.15)
    alone = RunResult(dropped=["rng"], resume_at=[1], verdict="diverged")
    verdict.plausibility(alone, {2: 0.5}, curves[:1])  # no other seed: nothing said
    assert alone.plausible is None and alone.noise_ratio is None


def test_a_diverged_run_names_its_plausibility(files):
    noise = [[x + 0.5 for x in LOSS]]
    ref = _reference(files, noise=noise)
    loss = [*LOSS[:3], LOSS[3] + 0.1, LOSS[4], LOSS[5]]
    result = _judged(ref, *_run(files, _records(2, 6, loss=loss, loss_={4: "other"})))
    assert result.plausible is True
    assert "plausible but different" in result.explanation
    assert verdict.noise_summary(ref, 2, [1], 0, "seed")["band"] == pytest.approx(0.5)


def test_an_unused_component_restored_wrongly_is_a_latent_gap(files):
    ref = _reference(files)
    # rng is the same at 2 and 6 in the reference (nothing drew from it): a
    # run that ends with another rng state follows the same trajectory
    end = _state(files["dir"] / "run6.pt", params={"w": torch.tensor([0.5, 1.5])},
                 rng={"s": 99}, global_step={"v": 6})
    result = _judged(ref, *_run(files, _records(2, 6), end=end))
    assert result.verdict == "identical" and result.latent_gaps == ["rng"]
    # (only its end differs here: no restored state says it was restored wrongly)
    # (trial 820: "where that run did not change it" of a stream that run drew from too)
    assert ("latent gap: rng ending otherwise than in the uninterrupted run (right after the "
            "restore, or changed after it otherwise than that run changed it), in state that "
            "changed no step") in result.explanation


def test_a_changed_component_that_differs_at_the_end_diverges(files):
    ref = _reference(files)
    end = _state(files["dir"] / "run6.pt", params={"w": torch.tensor([0.5, 1.5])},
                 rng={"s": 7}, global_step={"v": 5})
    result = _judged(ref, *_run(files, _records(2, 6), end=end))
    assert result.verdict == "diverged" and result.first_divergent_step == 6
    assert result.first_divergent_quantity == "state of global_step"
    assert result.explanation.startswith("the final state of global_step differs (every step's")


def test_restored_state_is_diagnosed_and_later_points_are_after_divergence(files):
    ref = _reference(files)
    wrong = _state(files["dir"] / "r2.pt", params={"w": torch.tensor([1.0, 2.0])},
                   rng={"s": 7}, global_step={"v": 0})
    saved4 = _state(files["dir"] / "s4.pt", params={"w": torch.tensor([9.0, 9.0])},
                    rng={"s": 7}, global_step={"v": 4})
    bad4 = _state(files["dir"] / "r4.pt", params={"w": torch.tensor([9.0, 9.0])},
                  rng={"s": 1}, global_step={"v": 4})
    first = SegmentResult(records=_records(2, 4, loss_={3: "x"}), names=NAMES, captures={},
                          end_state=saved4, restored_state=wrong)
    second = SegmentResult(records=_records(4, 6), names=NAMES, captures={},
                           end_state=files["end"], restored_state=bad4)
    segments = [(2, first), (4, second)]
    findings = verdict.diagnose(ref, [], segments)
    assert [(f.component, f.step, f.basis, f.status) for f in findings] == [
        ("global_step", 2, "reference", None), ("rng", 4, "saved", "after_divergence")]
    assert verdict.diagnose(ref, ["global_step"], segments)[0].component == "rng"


def test_confirmation_bookkeeping(files):
    ref = _reference(files)
    result = RunResult(dropped=[], resume_at=[2, 4], verdict="diverged", first_divergent_step=3,
                       checkpoint="program")
    result.diagnosis = [Finding("global_step", "d", step=2), Finding("config", "c", step=2),
                        Finding("rng", "r", step=4, status="after_divergence")]
    own0 = SegmentResult(records=[], names=NAMES, captures={}, end_state=None,
                         program_checkpoint="ck2")
    segments = [(0, own0), (2, own0)]
    assert verdict.departure(result) == 2
    assert verdict.confirmation_tries(ref, result, segments, "program") == {
        0: (2, "ck2"), 1: (2, "ck2")}
    assert verdict.confirmation_tries(ref, result, segments, "engine") == {}
    assert verdict.rerun_helps(verdict.Comparison(first=(5, "loss")), (3, "loss"))
    assert not verdict.rerun_helps(verdict.Comparison(first=(3, "loss")), (3, "loss"))
    # the same step, a quantity computed later: a scheduler put right leaves a
    # fresh optimizer's parameters differing where the learning rate differed first
    assert verdict.rerun_helps(verdict.Comparison(first=(3, "param:fc.weight")), (3, "lr"))
    assert not verdict.rerun_helps(verdict.Comparison(first=(3, "lr")), (3, "param:fc.weight"))
    assert verdict.rerun_helps(verdict.Comparison(first=(3, "loss[rank 1]")), (3, "data[rank 1]"))
    verdict.settle_findings(ref, result, {0: True, 1: False})
    statuses = [(f.component, f.status, f.confirmed) for f in result.diagnosis]
    # a rerun that does not help config is no evidence: settings are read at build too
    assert statuses == [("global_step", "confirmed", True), ("config", None, None),
                        ("rng", "after_divergence", None)]
    assert "global_step (confirmed)" in verdict.explain(result, None)


def test_a_scheduler_whose_rerun_left_the_rate_departing_names_another_left_untried(files):
    """Trial 842: two schedulers lost; the first, put right alone, left the
    other's rate departing, and its line offered only a scheduler made anew.
    Another component that differs there, which no rerun tried, is named first;
    one a rerun tried too is not."""
    ref = _reference(files)

    def settled(outcomes: dict) -> RunResult:
        result = RunResult(dropped=[], resume_at=[2], verdict="diverged", first_divergent_step=3,
                           first_divergent_key="lr", checkpoint="program")
        result.diagnosis = [Finding("scheduler", "last_epoch 0, expected 2", step=2),
                            Finding("scheduler_d", "last_epoch 0, expected 2", step=2)]
        verdict.settle_findings(ref, result, outcomes)
        return result

    first = settled({0: False}).diagnosis[0].detail
    assert ("which is no evidence against it: `scheduler_d`, which differs here too and no rerun "
            "put right, may set a rate as well; or the scheduler that steps may not be the one "
            "restored") in first, first
    both = settled({0: False, 1: False}).diagnosis
    assert "no evidence against it: the scheduler that steps" in both[0].detail, both[0].detail


def test_findings_of_a_run_that_never_departs_are_latent(files):
    ref = _reference(files)
    ref.segment.boundaries = {"epoch_boundaries": [ref.steps + 2]}
    result = RunResult(dropped=[], resume_at=[2], verdict="identical")
    result.diagnosis = [Finding("sampler_epoch", "epoch 0, expected 1", step=2)]
    verdict.settle_findings(ref, result, {})
    assert result.diagnosis[0].status == "latent" and result.latent_gaps == ["sampler_epoch"]
    assert result.diagnosis[0].matters_from == ref.steps + 3
    assert verdict.latent_text(result).startswith(
        f"; latent gap: sampler_epoch (next read at step {ref.steps + 3})")
    assert (") restored otherwise than the uninterrupted run had it, in state that changed no "
            "step") in verdict.latent_text(result)
    # (a trial: "from step 13" where step 13 had run, and matched)
    ref.segment.boundaries = {"epoch_boundaries": [ref.steps - 1]}
    result = RunResult(dropped=[], resume_at=[2], verdict="identical")
    result.diagnosis = [Finding("sampler_epoch", "epoch 0, expected 1", step=2)]
    verdict.settle_findings(ref, result, {})
    assert result.diagnosis[0].status == "latent" and result.diagnosis[0].matters_from is None
    assert verdict.latent_text(result).startswith(
        "; latent gap: sampler_epoch restored otherwise than the uninterrupted run had it")


def test_a_latent_position_that_a_save_right_after_the_load_keeps_alike_is_put_back(files):
    ref = _reference(files)
    ref.segment.boundaries = {"epoch_boundaries": [2]}

    def judged(first, k=2):
        result = RunResult(dropped=[], resume_at=[k], verdict="identical",
                           latent_gaps=["data_cursor", "best"])
        result.diagnosis = [Finding("data_cursor", "0, expected 8", step=k, status="latent"),
                            Finding("best", "inf, expected 0.5", step=k, status="latent")]
        verdict.settle_resaved(ref, result, [0, 1], verdict.Comparison(first=first))
        return result

    alike = judged(None)  # (a position at an epoch's end has two forms; a best loss does not)
    assert [f.status for f in alike.diagnosis] == ["put_back", "latent"]
    assert alike.latent_gaps == ["best"]
    assert "the end of one epoch and the start of the next are one position" in \
        alike.diagnosis[0].detail
    assert "or a wrong value this run's steps happen to set right" in alike.diagnosis[1].detail
    mid = judged(None, k=1)  # (not an epoch's end)
    assert [f.status for f in mid.diagnosis] == ["latent", "latent"]
    lost = judged((3, "data"))  # (that departure makes the resume not equivalent)
    assert [f.status for f in lost.diagnosis] == ["lost_on_resave", "lost_on_resave"]
    assert lost.latent_gaps == [] and lost.lost_on_resave() == ["data_cursor", "best"]
    assert verdict.explain(lost, None).startswith(
        "every step after the restart matches bit for bit, but your save() right after your "
        "load(), and a restart from that checkpoint, depart from the uninterrupted run: what "
        "a checkpoint written right after a restore, before any step, loses is among "
        "data_cursor, best")
    assert "depart from the uninterrupted run at step 3, in data" in lost.diagnosis[0].detail
    failed = RunResult(dropped=[], resume_at=[2], verdict="identical", latent_gaps=["x"])
    failed.diagnosis = [Finding("x", "1, expected 2", step=2, status="latent")]
    verdict.settle_resaved(ref, failed, [0], None)
    assert failed.diagnosis[0].status == "latent"


def test_ablations_are_inconclusive_when_the_engine_full_resume_differs():
    full = RunResult(dropped=[], resume_at=[2], verdict="diverged", first_divergent_step=3,
                     first_divergent_quantity="loss")
    same = RunResult(dropped=["rng"], resume_at=[2], verdict="diverged", plausible=True)
    other = RunResult(dropped=["params"], resume_at=[2], verdict="identical", blind_spot=True)
    failed = RunResult(dropped=["config"], resume_at=[2], verdict="failed")
    ablations = [(same, ["t"]), (other, ["u"]), (failed, ["t"])]
    verdict.judge_ablations(full, ["t"], ablations, Tolerance.bitwise())
    assert [r.verdict for r, _ in ablations] == ["inconclusive", "inconclusive", "failed"]
    assert same.same_as_full_resume and not other.same_as_full_resume
    assert same.plausible is None and not other.blind_spot
    assert "already differs from step 3 (loss)" in same.explanation
    assert "identical to the full resume's divergence" in same.explanation
    # (a trial: one undeclared generator changed step 14, and a scheduler dropped
    # from step 9 read inconclusive): an ablation that departs first is evidence
    late = RunResult(dropped=[], resume_at=[8], verdict="diverged", first_divergent_step=14,
                     first_divergent_quantity="data")
    early = RunResult(dropped=["scheduler"], resume_at=[8], verdict="diverged",
                      first_divergent_step=9, first_divergent_quantity="lr", plausible=True,
                      noise_ratio=0.4)
    along = RunResult(dropped=["rng"], resume_at=[8], verdict="diverged",
                      first_divergent_step=14, first_divergent_quantity="data")
    elsewhere = RunResult(dropped=["params"], resume_at=[4, 8], verdict="diverged",
                          first_divergent_step=5, first_divergent_quantity="loss")
    verdict.judge_ablations(late, [], [(early, []), (along, []), (elsewhere, [])],
                            Tolerance.bitwise())
    assert [r.verdict for r in (early, along, elsewhere)] == [
        "diverged", "inconclusive", "inconclusive"]
    assert early.exercised and early.plausible is None and early.noise_ratio is None
    assert ("before the engine's full resume of every declared component departs (step 14, "
            "data (the samples consumed)), and the two differ only in restoring scheduler: "
            "it matters here") in early.explanation
    # (a trial: an optimizer dropped, its learning rate differing at step 8, where
    # the full resume's loss first differs, read inconclusive): within one step, a
    # quantity computed before the full resume's first is before it too
    at_loss = RunResult(dropped=[], resume_at=[7], verdict="diverged", first_divergent_step=8,
                        first_divergent_quantity="loss", first_divergent_key="loss")
    rate = RunResult(dropped=["optimizer"], resume_at=[7], verdict="diverged",
                     first_divergent_step=8, first_divergent_quantity="learning rate",
                     first_divergent_key="lr")
    grads = RunResult(dropped=["rng"], resume_at=[7], verdict="diverged", first_divergent_step=8,
                      first_divergent_quantity="gradient fc.weight",
                      first_divergent_key="grad:fc.weight")
    verdict.judge_ablations(at_loss, [], [(rate, []), (grads, [])], Tolerance.bitwise())
    assert (rate.verdict, grads.verdict) == ("diverged", "inconclusive")
    # (trial 635: "before" of the same step read as a claim about when things happen)
    assert "; this is at the step where the engine's full resume of every declared component " \
           "departs (step 8, loss, where that step's learning rate is still the uninterrupted " \
           "run's), and the two differ only " \
           "in restoring optimizer: it matters here" in rate.explanation
    fine = RunResult(dropped=["rng"], resume_at=[2], verdict="diverged")
    verdict.judge_ablations(RunResult(dropped=[], resume_at=[2], verdict="identical"), [],
                            [(fine, [])], Tolerance.bitwise())
    assert fine.verdict == "diverged"


def test_explanations():
    blind = RunResult(dropped=["rng"], resume_at=[3, 5], verdict="identical", blind_spot=True)
    assert verdict.explain(blind, None).startswith("blind spot: dropping rng changed no step after k=3,5")
    close = RunResult(dropped=[], resume_at=[3], verdict="close", max_abs_diff=2e-7)
    assert verdict.explain(close, (4, "grad:fc.weight")) == (
        "within tolerance; first bitwise difference at step 4 (gradient of fc.weight), "
        "max |Δ| 2e-07")
    engine = RunResult(dropped=[], resume_at=[3], verdict="diverged", checkpoint="engine",
                       first_divergent_step=4, first_divergent_quantity="loss",
                       plausible=False, noise_ratio=3.0)
    text = verdict.explain(engine, None, own_checkpoint=True)
    assert "they do not capture the program's state" in text
    assert text.endswith("leaves the seed-to-seed band (measured over the steps after the "
                         "restart at 3, the loss differing by at most 3x the band's width): gross")
    # (a trial: "leaves the band from step 13 on" of a loss identical at 13 and 14)
    engine.leaves_band_at = 6
    assert verdict.explain(engine, None, own_checkpoint=True).endswith(
        "leaves the seed-to-seed band at step 6 (measured over the steps after the restart at "
        "3, the loss differing by at most 3x the band's width): gross")
    # (a trial: one divergence read gross at one resume point and plausible at another;
    # the band is each run's own, over the steps after its first restart)
    quiet = RunResult(dropped=["scheduler"], resume_at=[9, 12], verdict="diverged",
                      first_divergent_step=11, first_divergent_quantity="lr",
                      plausible=True, noise_ratio=0.5, max_abs_loss_diff=0.01)
    assert verdict.explain(quiet, None).endswith(
        "loss stays within seed-to-seed noise over the steps after the restart at 9 (within the "
        "widest spread of the seeds' runs at any of those steps, not at each): plausible but "
        "different")
    # (seven trials read "plausible" of a model's weights dropped as reassurance)
    quiet.dropped = ["params"]
    assert verdict.explain(quiet, None).endswith(
        "not at each; the band is between runs of other seeds, whose weights start "
        "elsewhere too: a model whose weights start anew at the resume point may stay within "
        "it): plausible but different")
    assert "do not capture" not in verdict.explain(engine, None, own_checkpoint=False)
    # (trials 187, 194: "gross" of a loss 1.01-1.04x the band read as a large departure)
    engine.noise_ratio = 1.02
    edge = verdict.explain(engine, None, own_checkpoint=True)
    assert edge.endswith("the loss differing by at most 1.02x the band's width): gross, but only "
                         "just: a band measured from a few "
                         "runs is rough (more --noise-seeds make it steadier), and a difference "
                         "this close to it may read as noise on a loss curve")
    assert verdict.quantity_name("data") == "data (the samples consumed)"
    assert verdict.quantity_name("weird") == "weird"
    # (trial 572: a SAM wrapper whose own state holds no momentum read "such as momentum";
    # trial 731: an Adagrad, which has none, read "momentum" of its lost sums)
    # (trial 220: a dropped optimizer whose learning rate departs first read without a word
    # of why the rate is the optimizer's; a dropped scheduler needs none)
    def rate_first(dropped):
        return RunResult(dropped=[dropped], resume_at=[8], verdict="diverged",
                         first_divergent_step=9, first_divergent_quantity="learning rate",
                         first_divergent_key="lr")
    assert verdict.explain(rate_first("optimizer"), None).startswith(
        "learning rate differs from step 9 (the optimizer's param_groups hold the learning rate "
        "a scheduler sets, beside its per-parameter state (whatever its state_dict() holds: "
        "Adam's moments, SGD's momentum buffers, Adagrad's sums and steps), lost with it: "
        "dropped, the restart steps with the rate its build gave it, or "
        "another component's restore: one that makes the optimizer anew)")
    assert "param_groups" not in verdict.explain(rate_first("scheduler"), None)


def test_a_resume_whose_load_differs_only_in_what_changes_nothing_points_at_undeclared_state():
    """A trial: a loader's iterator kept its workers' seeds across the load, and
    the only finding was a latent stream (Python's, never drawn from): the why
    named that latent gap and no lead. Where every finding changes nothing
    there, it points at undeclared state as where nothing differs at all."""
    def own(*diagnosis: Finding, at: tuple[int, ...] = (11,), departed: int = 0) -> str:
        run = RunResult(dropped=[], resume_at=list(at), verdict="diverged", checkpoint="program",
                        first_divergent_step=departed or at[0] + 1,
                        first_divergent_quantity="loss",
                        diagnosis=list(diagnosis))
        return verdict.explain(run, None, own_checkpoint=True)

    lead = ("what it leaves different is state you did not declare (a sampler's epoch that "
            "set_epoch sets, an iterator's position, its workers' seeds or how far their streams "
            "have drawn")
    assert (f"; no declared component's state (what it saves) differs right after your "
            f"load(): {lead}") in own()
    latent = Finding("rng", "Python random stream differs", step=11, status="latent")
    said = own(latent)
    assert ("; what differs in the declared components right after your load() changes "
            f"no step here: {lead}") in said, said
    cause = Finding("rng", "torch CPU stream differs", step=11, status="confirmed")
    assert lead not in own(cause) and lead not in own(latent, cause)
    # (trial 458 read it as said of a second load, after the run had departed)
    assert ("differs right after your load() at 3, nor, against what your save() wrote there "
            f"once the run had departed, at 11: {lead}") in own(at=(3, 11))
    assert f"differs right after your load(): {lead}" in own(at=(3, 11), departed=12)
    # (trial 468: a finding at 11, after the departure, left the why with no lead at all)
    after = Finding("data_cursor", "batches 16, expected 4", step=11, status="after_divergence")
    assert ("differs right after your load() at 3, the restore the run departed after: "
            f"{lead}") in own(after, at=(3, 11))


def test_drop_sets():
    assert verdict.drop_sets("all", NAMES) == [[], ["params"], ["rng"], ["global_step"]]
    assert verdict.drop_sets("none", NAMES) == [[]]
    assert verdict.drop_sets("rng", NAMES) == [[], ["rng"]]
    # groups keep declaration order; repeats collapse
    assert verdict.drop_sets([{"global_step", "params"}, "rng", ["params", "global_step"]],
                             NAMES) == [[], ["params", "global_step"], ["rng"]]
    with pytest.raises(UnknownComponent, match="lr_schedule"):
        verdict.drop_sets(["lr_schedule"], NAMES)


def test_findings_that_help_only_together_are_each_confirmed_when_each_is_needed():
    """When no finding helps put right alone, all are put right together; each
    whose leaving out undoes that is a cause (a stream lost on every rank),
    the others are not."""
    from types import SimpleNamespace

    from resumecheck.engine import _Confirmations

    causes = {"rng[rank 0]", "rng[rank 1]"}
    tried = []

    class Stub(_Confirmations):
        def _helps(self, components, k, checkpoint, result, work, tag, diverged_at):
            tried.append(sorted(components))
            return causes <= set(components)

    confirm = Stub.__new__(Stub)
    names = ["rng[rank 0]", "rng[rank 1]", "scheduler"]
    result = SimpleNamespace(diagnosis=[SimpleNamespace(component=n) for n in names])
    tries = dict.fromkeys(range(3), (4, "ckpt"))
    outcomes = confirm._joint_causes(result, tries, dict.fromkeys(range(3), False), "w", (5, "loss"))
    assert outcomes == {0: True, 1: True, 2: False}
    assert tried[0] == sorted(names)  # together first, then each left out
    # one helped alone: the others are tried behind it (_later_causes), not here
    assert confirm._joint_causes(result, tries, {0: True, 1: False, 2: False}, "w", None) == {}
    # together it does not help either: none is a cause
    causes.add("config")
    assert confirm._joint_causes(result, tries, dict.fromkeys(range(3), False), "w", None) == {}


def test_a_state_differing_only_in_a_counter_has_no_figures_not_zeros():
    """A trial: a scheduler whose end state differed only in ``last_epoch``
    (16 against 8), its float ``best`` alike, gave max_abs_diff 0.0 for a
    diverged run: the equal entry's zeros stood for the difference. A counter
    has no magnitude here, so there is none: null, as for an int ``Attr``."""
    ref = {"best": 0.7527, "last_epoch": 16, "mode": "min"}
    run = {"best": 0.7527, "last_epoch": 8, "mode": "min"}
    d = verdict.state_difference(ref, run, Tolerance.bitwise())
    assert not d.within_tolerance
    assert (d.max_abs, d.max_rel, d.max_ulp) == (None, None, None)
    # a float that differs still gives its figures, the equal ones none
    d = verdict.state_difference({**ref, "best": 0.5}, run, Tolerance.bitwise())
    assert d.max_abs == pytest.approx(0.2527) and not d.within_tolerance
    assert verdict.state_difference(ref, dict(ref), Tolerance.bitwise()).within_tolerance


def test_of_several_tensors_that_differ_the_one_that_differs_most_is_named():
    """A trial: an EMA's ``0.bias`` (first by name) was named, max |Δ| 0.00355,
    while its ``0.weight`` differed by 0.0040."""
    from resumecheck.state_diff import describe_difference

    ref = {"0.bias": torch.zeros(4), "0.weight": torch.zeros(3, 3), "_count": 3}
    new = {"0.bias": torch.full((4,), 0.00355), "0.weight": torch.full((3, 3), 0.004),
           "_count": 2}
    assert describe_difference("ema", ref, new, 8) == (
        "0.weight differs, max |Δ| 0.004 (and 2 more entries of its state_dict() differ)")


def test_integer_tensors_that_differ_say_how_many_entries_and_where():
    """A trial: mined negatives, a tensor of indices its load() mined again,
    read "negatives: differs" and no more."""
    from resumecheck.state_diff import describe_difference

    ref, new = torch.arange(8), torch.tensor([0, 5, 2, 3, 9, 5, 6, 7])
    assert describe_difference("negatives", ref, new, 6) == (
        "2 of 8 values differ, first at position 1: 5 vs 1 in the reference")
    assert describe_difference("pool", {"ids": ref}, {"ids": ref[:6]}, 6) == (
        "ids: 6 values, 8 in the reference")


def test_of_several_parameters_that_differ_the_largest_is_named_and_the_rest_counted(files):
    """A trial: every parameter differed at the step and the first by name was
    named ('parameter 0.bias'), as if it alone did."""
    ref_t = {n: torch.tensor([1.0, 2.0]) for n in ("param:a", "param:b", "param:c")}
    run_dir = files["dir"] / "run"
    run_dir.mkdir()
    torch.save({"param:a": ref_t["param:a"] + 1e-3, "param:b": ref_t["param:b"] + 0.5,
                "param:c": ref_t["param:c"] + 1e-2}, run_dir / "step_3.pt")

    def records(changed: bool) -> list:
        return [StepRecord(step=s, loss=LOSS[s - 1], digests={
            "loss": f"loss{s}", **{k: f"{k}{s}{'x' if changed and s == 3 else ''}"
                                   for k in ref_t}}) for s in range(3, 7)]

    seg = SegmentResult(records=[*_records(0, 2), *records(False)],
                        names=NAMES, captures={2: files["at2"]}, end_state=files["end"])
    ref = verdict.Reference(seg, Tolerance.bitwise(), {3: ref_t}.get, ())
    result, segments = _run(files, records(True))
    segments[0][1].tensor_dir = str(run_dir)
    result = _judged(ref, result, segments)
    assert (result.first_divergent_step, result.first_divergent_quantity) == (
        3, "parameter b (the largest of 3 parameters that differ)")
    assert result.explanation.startswith(
        "parameter b (the largest of 3 parameters that differ) differs from step 3")


def test_the_other_ranks_and_tensors_that_differ_with_the_first_are_counted():
    """A trial: every rank's data differed at the step, and only rank 0 was named."""
    assert verdict._others("data[rank 0]", ["data[rank 1]"]) == " (and on rank 1 at this step)"
    assert verdict._others("param:w[rank 0]", ["param:b[rank 0]", "param:w[rank 1]",
                                               "param:b[rank 1]"]) == \
        " (the largest of 2 parameters that differ) (and on rank 1 at this step)"
    # (trial 412 read "1 more rank" as a count to work out: the ranks are named)
    many = [f"loss[rank {r}]" for r in range(1, 8)]
    assert verdict._others("loss[rank 0]", many) == \
        " (and on ranks 1, 2, 3 and 4 more at this step)"
    assert verdict._others("loss[rank 3]", ["loss[rank 0]", "loss[rank 1]"]) == \
        " (and on ranks 0 and 1 at this step)"
    assert verdict._others("loss", []) == ""


def test_stream_lines_say_not_the_cause_no_more_once_the_findings_are_unjudged():
    """A trial: a stream line read '(loader_rng, which holds it, differs but is
    not the cause: see the diagnosis)' where the diagnosis said '(not judged:
    the declared components are incomplete, see the WARNING)'."""
    from dataclasses import replace

    from resumecheck.report import StreamOffset

    def judged() -> RunResult:
        run = RunResult(dropped=[], resume_at=[7], verdict="diverged", first_divergent_step=8,
                        first_divergent_quantity="loss", checkpoint="program",
                        explanation="diverged from step 8 (loss); restored state differs in "
                                    "loader_rng (differs; put right alone, the run departs "
                                    "no later)")
        run.diagnosis = [Finding("loader_rng", "generator `loader`: 1 draw ahead", step=7,
                                 status="not_cause", confirmed=False)]
        run.stream_offsets = [replace(offset, detail=offset.detail + note)]
        return run

    offset = StreamOffset(stream="generator loader", step=8, draws=1, unit="int64 draws",
                          detail="generator `loader` is 1 draw ahead at the start of step 8")
    note = (" (loader_rng, which holds it, differs, and put right alone, the run departs no "
            "later: see the diagnosis)")
    own = judged()
    verdict.unjudge_when_incomplete(own, RunResult(dropped=[], resume_at=[7],
                                                   verdict="diverged", checkpoint="engine"))
    assert own.diagnosis[0].status is None and own.engine_departs  # (fuzz's shrink reads it)
    assert [o.detail for o in own.stream_offsets] == [offset.detail]
    assert "restored state differs in loader_rng;" in own.explanation
    assert own.explanation.endswith("; generator `loader` is 1 draw ahead at the start of step 8")
    # an engine full resume that matches leaves the judged note alone
    kept = judged()
    verdict.unjudge_when_incomplete(kept, RunResult(dropped=[], resume_at=[7],
                                                    verdict="identical"))
    assert kept.stream_offsets[0].detail == offset.detail + note and not kept.engine_departs


def test_a_finding_says_which_restore_it_was_found_at_when_the_run_has_several():
    """A trial: with --resume-at 4,12, `scheduler: best inf, expected ...` did
    not say which restore it was (the JSON's `step` did)."""
    finding = Finding("scheduler", "best inf, expected 0.74", step=4)
    twice = RunResult(dropped=[], resume_at=[4, 12], verdict="diverged")
    once = RunResult(dropped=[], resume_at=[4], verdict="diverged")
    assert finding.label_in(twice) == "scheduler (restored at 4)"
    assert finding.label_in(once) == "scheduler"
    # (a trial: a cursor restored wrongly at 7 that changes no step until after
    # the restart at 10, whose save carried it on, read as a contradiction)
    later = RunResult(dropped=[], resume_at=[7, 10], verdict="diverged", first_divergent_step=11)
    assert Finding("data_cursor", "0, expected 2", step=7).label_in(later) == \
        "data_cursor (restored at 7; the steps first differ after the restart at 10)"
    sooner = RunResult(dropped=[], resume_at=[7, 10], verdict="diverged", first_divergent_step=8)
    assert Finding("data_cursor", "0, expected 2", step=7).label_in(sooner) == \
        "data_cursor (restored at 7)"


def test_a_single_value_among_the_other_differing_entries_is_said():
    """A trial: a Lookahead wrapper's lost step counter was hidden among "4
    more entries" behind its slow weights."""
    from resumecheck.state_diff import describe_difference

    ref = {"slow": [torch.zeros(3), torch.ones(3)], "la_steps": 8, "_private": 1}
    got = {"slow": [torch.zeros(3), torch.full((3,), 2.0)], "la_steps": 0, "_private": 2}
    text = describe_difference("lookahead", ref, got, 8)
    assert text == ("slow[1] differs, max |Δ| 1 (and 2 more entries of its state_dict() "
                    "differ, among them la_steps 0, expected 8)")
    # one more entry, said: not "among them" (a trial's plateau scheduler)
    ref = {"best": 2.8, "last_epoch": 5}
    got = {"best": float("inf"), "last_epoch": 0}
    assert describe_difference("scheduler", ref, got, 8) == (
        "best inf, expected 2.8 (and 1 more entry of its state_dict() differs: "
        "last_epoch 0, expected 5)")


def test_a_whole_state_dict_lost_counts_its_own_dotted_keys():
    """Trial 168: a copy of the best model's state_dict() (10 entries,
    `enc.weight_ih_l0` ...), lost by the load, read "expected 3 entries (dec,
    enc, head)": its keys' dots taken for nesting."""
    import torch

    from resumecheck.state_diff import describe_difference

    keys = ["enc.weight_ih_l0", "enc.weight_hh_l0", "enc.bias_ih_l0", "dec.weight", "head.bias"]
    ref = {"value": {k: torch.ones(2) for k in keys}}
    assert describe_difference("best_model_state", ref, {"value": {}}, 7) == (
        "its state empty, expected 5 entries (dec.weight, enc.bias_ih_l0, enc.weight_hh_l0, ...)")


def test_a_whole_holder_lost_is_named_as_the_holder_not_its_first_leaf():
    """A trial: a streaming dataset's load emptied its dict of per-worker
    states, and the diagnosis read `workers.0.buffer missing, expected '[]'`
    (as if an empty buffer went missing). The holder that is empty or gone
    is named, with what it held; a leaf missing beside others that came
    back is still named itself."""
    from resumecheck.state_diff import describe_difference

    ref = {"epoch": 1, "workers": {0: {"buffer": [], "pos": 3}, 1: {"buffer": [4, 5], "pos": 1}}}
    assert describe_difference("data_cursor", ref, {"epoch": 1, "workers": {}}, 7) == \
        "workers empty, expected 2 entries (0, 1)"
    assert describe_difference("data_cursor", ref, {"epoch": 1}, 7) == \
        "workers missing, expected 2 entries (0, 1)"
    gone = {"epoch": 1, "workers": {0: {"buffer": [], "pos": 3}}}
    assert describe_difference("data_cursor", ref, gone, 7) == \
        "workers.1 missing, expected 2 entries (buffer, pos)"
    shorter = {"epoch": 1, "workers": {0: {"buffer": [], "pos": 3}, 1: {"buffer": [4], "pos": 1}}}
    assert describe_difference("data_cursor", ref, shorter, 7) == \
        "workers.1.buffer[1] missing, expected 5"
    assert describe_difference("order", {"seen": [1, 2, 3], "n": 2}, {"seen": [], "n": 3}, 7) \
        == "n 3, expected 2 (and 1 more entry of its state_dict() differs)"
    # (a trial read a shuffle buffer's "([0], [1], [2], ...)" as what it held: a list's
    # numbers are said, other entries by their index)
    assert describe_difference("order", {"seen": [6, 124, 92, 7]}, {"seen": []}, 7) == \
        "seen empty, expected 4 entries (6, 124, 92, ...)"
    assert describe_difference("order", {"seen": [{"a": 1}, {"a": 2}]}, {"seen": []}, 7) == \
        "seen empty, expected 2 entries ([0], [1])"


def test_an_optimizer_whose_learning_rate_alone_differs_points_at_a_scheduler():
    """A trial: a scheduler stepped once more after the load showed as the
    optimizer restored wrongly (confirmed) and the scheduler as not the
    cause; the optimizer's line now says that only its learning rate
    differs, which a scheduler sets. With its momentum lost too, it does not."""
    import torch

    from resumecheck.state_diff import LEARNING_RATE_ONLY, MOMENTUM_TOO, describe_difference

    model = torch.nn.Linear(2, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model(torch.ones(1, 2)).sum().backward()
    opt.step()
    meta = {"optimizer_params": ["weight", "bias"]}
    reference = opt.state_dict()
    moved = {**reference, "param_groups": [{**reference["param_groups"][0], "lr": 0.05}]}
    said = describe_difference("optimizer", reference, moved, 4, meta, meta)
    assert said == "param_groups[0].lr 0.05, expected 0.1" + LEARNING_RATE_ONLY, said
    # (a trial: OneCycleLR cycles the momentum too: its extra step read as the
    # optimizer's betas restored wrongly)
    cycled = {**reference, "param_groups": [
        {**reference["param_groups"][0], "lr": 0.05, "momentum": 0.85}]}
    said = describe_difference("optimizer", reference, cycled, 4, meta, meta)
    assert said.endswith(MOMENTUM_TOO) and "param_groups[0].lr 0.05" in said, said
    # (trial 841: a OneCycleLR made after the optimizer's load was not among the causes)
    assert ("one made there (its constructor sets the cycle's first rate and momentum: make it "
            "before the optimizer's state is loaded)") in said, said
    adam = torch.optim.Adam(model.parameters(), lr=0.1)
    adam.step()
    before = adam.state_dict()
    group = before["param_groups"][0]
    after = {**before, "param_groups": [{**group, "lr": 0.2, "betas": (0.86, group["betas"][1])}]}
    assert describe_difference("optimizer", before, after, 4, meta, meta).endswith(MOMENTUM_TOO)
    only_momentum = {**reference, "param_groups": [{**reference["param_groups"][0],
                                                    "momentum": 0.5}]}
    said = describe_difference("optimizer", reference, only_momentum, 4, meta, meta)
    assert MOMENTUM_TOO not in said and LEARNING_RATE_ONLY not in said
    fresh = {**moved, "state": {}}
    said = describe_difference("optimizer", reference, fresh, 4, meta, meta)
    assert LEARNING_RATE_ONLY not in said
    # (a trial: a fresh optimizer's first divergence was the learning rate, which its
    # line did not mention)
    assert said == ("no per-parameter state (fresh), expected the state at step 4; its "
                    "learning rate too: param_groups[0].lr 0.05, expected 0.1, which a "
                    "scheduler sets: a fresh optimizer has the rate of a fresh start"), said


def test_a_value_computed_in_floating_point_is_shown_with_the_digits_that_tell_it_apart():
    """A trial: a rate computed as 0.9 * 0.0025 read ``0.0022500000000000003``.
    A long float is shown with the fewest digits (6 at least) that still tell
    it from the expected value; values apart only in their last digits stay whole."""
    from resumecheck.state_diff import describe_difference

    def rated(lr: float) -> dict:
        return {"state": {}, "param_groups": [{"lr": lr, "params": [0]}]}

    meta = {"optimizer_params": ["weight"]}
    said = describe_difference("optimizer", rated(0.0025), rated(0.9 * 0.0025), 4, meta, meta)
    assert said.startswith("param_groups[0].lr 0.00225, expected 0.0025"), said
    said = describe_difference("optimizer", rated(0.3), rated(0.1 + 0.2), 4, meta, meta)
    assert said.startswith("param_groups[0].lr 0.30000000000000004, expected 0.3"), said
    said = describe_difference("optimizer", rated(1 / 3), rated(1 / 3 + 1e-12), 4, meta, meta)
    assert said.startswith("param_groups[0].lr 0.333333333334, expected 0.333333333333"), said


def test_a_step_the_optimizer_skipped_is_not_said_to_leave_a_parameter_without_gradient():
    """A trial: a loss scaler of the program's own skipped a step in the
    uninterrupted run; the first difference, a gradient the resumed run had,
    read "that parameter got no gradient there". Gradients are recorded as
    the optimizer steps: a step without any says the optimizer did not step."""
    from resumecheck.trace import StepRecord
    from resumecheck.verdict import _why_no_gradient

    skipped = StepRecord(step=10, loss=0.5, digests={"loss": "a", "skipped": "True"},
                         skipped=True)
    unstepped = StepRecord(step=10, loss=0.5, digests={"loss": "a", "param:w": "b"})
    frozen = StepRecord(step=10, loss=0.5, digests={"loss": "a", "grad:w": "c"})
    assert _why_no_gradient(skipped) == "its optimizer did not step"
    assert _why_no_gradient(unstepped) == "its optimizer did not step"
    assert _why_no_gradient(frozen) == "that parameter got no gradient"
    # (trial 290: it stepped, its learning rate read, and no parameter of its had a gradient)
    elsewhere = StepRecord(step=10, loss=0.5, digests={"loss": "a", "param:w": "b"}, lr=[0.1])
    assert _why_no_gradient(elsewhere) == (
        "its optimizer stepped with no gradient on any parameter it holds: the loss reaches "
        "other tensors, such as parameters a load() made anew")


def test_a_finding_left_unjudged_beside_a_judged_one_says_so_in_the_why():
    """A trial read "restored state differs in rng, data_cursor (confirmed)" as
    both confirmed, where rng was not judged (its diagnosis line said so)."""
    both = [Finding("rng", "r", step=4), Finding("data_cursor", "d", step=4, status="confirmed")]
    assert verdict._differs_clause(both) == (
        "; restored state differs in rng (not judged), data_cursor (confirmed)")
    alone = [Finding("rng", "r", step=4), Finding("data_cursor", "d", step=4)]
    assert verdict._differs_clause(alone) == "; restored state differs in rng, data_cursor"


def test_a_gross_run_says_the_first_step_beyond_the_band():
    """A trial's lost scheduler: the loss matched at steps 13 and 14 and left
    the band at 18; the report read "leaves the band from step 13 on"."""
    run = RunResult(dropped=["scheduler"], resume_at=[12], verdict="diverged")
    deltas = {12: 0.0, 13: 0.0, 14: 0.0, 15: 0.61, 16: 1.35, 17: 2.13, 18: 2.67, 19: 8.04}
    reference = [1.0] * 20
    other = [1.0 + (2.66 if s == 16 else 0.0) for s in range(1, 21)]
    verdict.plausibility(run, deltas, [reference, other])
    assert run.plausible is False and run.leaves_band_at == 18
    assert abs(run.noise_ratio - 8.04 / 2.66) < 1e-9
    quiet = RunResult(dropped=["rng"], resume_at=[12], verdict="diverged")
    verdict.plausibility(quiet, {13: 0.5, 16: 1.0}, [reference, other])
    assert quiet.plausible is True and quiet.leaves_band_at is None


def test_a_module_whose_every_entry_differs_after_the_load_reads_as_one_nothing_came_back_to():
    """Trial 145: a torch.compile'd model's state (keys `_orig_mod.*`) loaded with
    strict=False into the plain model loads nothing; the finding said only that
    "15 more entries" differed."""
    from resumecheck.state_diff import describe_difference

    torch.manual_seed(0)
    trained, fresh = torch.nn.Linear(3, 2).state_dict(), torch.nn.Linear(3, 2).state_dict()
    text = describe_difference("params", trained, fresh, 5)
    assert text is not None and text.endswith(
        "; every entry differs, as where none of it came back (a checkpoint that does not keep "
        "it, or a load that does not put it into this object; a load_state_dict(strict=False) "
        "whose keys do not match loads none: a `_orig_mod.` prefix torch.compile adds, a "
        "`module.` prefix DDP adds; or it was made again after the load, from other state: an "
        "EMA copied from the loaded weights)")
    at_the_end = describe_difference("params", trained, fresh, 5, after_load=False)
    assert at_the_end is not None and "came back" not in at_the_end  # (trial 148: a drop's end)
    # (trial 204: an LSTM's carried hidden state, a tuple, was offered a compiled model's
    # key prefixes and an EMA)
    hidden = describe_difference("hidden", {"value[0]": torch.ones(2), "value[1]": torch.ones(2)},
                                 {"value[0]": torch.zeros(2), "value[1]": torch.zeros(2)}, 5)
    assert hidden is not None and hidden.endswith(
        "; every entry differs, as where none of it came back (a checkpoint that does not keep "
        "it, a load that does not put it into this object, or it was made again after the "
        "load)"), hidden
    half = {**fresh, "bias": trained["bias"]}  # (one entry came back)
    text = describe_difference("params", trained, half, 5)
    assert text is not None and "none came back" not in text


def test_a_long_string_that_differs_is_told_by_where_not_printed_whole():
    """Trial 147: a sampler's generator kept as base64 text made a diagnosis
    line of 13,562 characters."""
    from resumecheck.state_diff import describe_difference

    saved, loaded = "QUJD" * 1000, "QUJD" * 2 + "WFla" + "QUJD" * 997
    text = describe_difference("data_cursor", {"generator": saved, "pos": 3},
                               {"generator": loaded, "pos": 3}, 5)
    assert text == ("generator a string that differs from the expected one from its character 9 "
                    "(both of 4000 characters)")  # (counted from 1: trial 148)
    text = describe_difference("data_cursor", {"name": "a"}, {"name": "b"}, 5)
    assert text == "name 'b', expected 'a'"  # (short ones are shown)


def test_a_component_whose_state_came_back_empty_says_so():
    """Trial 155: an emptied gradient store read "blocks missing, expected 2
    entries (0, 1) (and 5 more entries of its state_dict() differ)"."""
    from resumecheck.state_diff import describe_difference

    kept = {f"blocks.{i}.w": torch.ones(2) for i in range(3)} | {"out.b": torch.ones(1)}
    assert describe_difference("grads", kept, {}, 8) == (
        "its state_dict() is empty after the load, expected 4 entries (blocks.0.w, blocks.1.w, "
        "blocks.2.w, out.b)")
    assert describe_difference("grads", {"only": torch.ones(1)}, {}, 8) is not None


def test_a_count_one_behind_under_a_framework_offers_its_own_restore_first():
    """Trial 193: a Lightning scheduler stepped per epoch, one step behind after a
    resume inside an epoch, was offered only causes in the user's code."""
    from resumecheck.report import Finding, RunResult
    from resumecheck.state_diff import describe_difference
    from resumecheck.verdict import in_its_words

    detail = describe_difference("scheduler", {"last_epoch": 5}, {"last_epoch": 4}, 7)
    assert detail is not None and "one step behind: a checkpoint saved before the step's " \
        "scheduler.step(), or a load that steps it one time fewer" in detail
    result = RunResult(dropped=[], resume_at=[7], verdict="diverged",
                       diagnosis=[Finding("scheduler", detail, step=7)])
    in_its_words(result, {"restored_by": "Lightning's restore"})
    said = ("one step behind: Lightning's restore, which after a resume may step a scheduler "
            "stepped per epoch one time fewer, or a checkpoint saved before the step's "
            "scheduler.step(), or a load")
    assert said in result.diagnosis[0].detail
    # (trial 224: put in its words when judged and again in the report, it read twice)
    in_its_words(result, {"restored_by": "Lightning's restore"})
    assert result.diagnosis[0].detail.count("Lightning's restore") == 1
    assert said in result.diagnosis[0].detail
    plain = RunResult(dropped=[], resume_at=[7], verdict="diverged",
                      diagnosis=[Finding("scheduler", detail, step=7)])
    in_its_words(plain, {})
    assert plain.diagnosis[0].detail == detail


def test_a_frameworks_loop_is_offered_beside_a_schedules_settings_and_a_programs_code():
    """Trials 224, 246: under Lightning, whose loop left out a plateau step after
    a resume, the own resume's why offered only a schedule's settings and the
    WARNING only the program's code after a restore."""
    from resumecheck.report import Report, RunResult
    from resumecheck.verdict import _RATE_FIRST, in_its_words
    from resumecheck.phrases import FRAMEWORK_RESUME
    from resumecheck.environment import fingerprint

    words = {"restored_by": "Lightning's restore",
             "loop_note": f"{FRAMEWORK_RESUME}, through Lightning's own resume from ..."}
    run = RunResult(dropped=[], resume_at=[3], verdict="diverged",
                    explanation=f"learning rate differs from step 6{_RATE_FIRST}")
    in_its_words(run, words)
    assert ("so does code of yours that sets the rate from a count it keeps; or Lightning's "
            "loop, which after a resume may step a scheduler otherwise than the uninterrupted "
            "run") in run.explanation, run.explanation
    assert "your load()" not in run.explanation
    # a resume whose every step matched, ending otherwise in its scheduler
    def ends_otherwise(checkpoint: str, explanation: str) -> RunResult:
        return RunResult(dropped=[], resume_at=[8], verdict="diverged", checkpoint=checkpoint,
                         first_divergent_quantity="state of scheduler", reproduce="r",
                         explanation=explanation)

    report = Report(target="t.py:T", steps=12, resume_at=[8], seed=0, isolation="inprocess",
                    tolerance={"mode": "bitwise", "rtol": None, "atol": None},
                    determinism={"checked": False}, noise={"seeds": [], "band": None},
                    environment=fingerprint(1),
                    runs=[ends_otherwise("program", words["loop_note"]),
                          ends_otherwise("engine", "the final state of scheduler differs")])
    notice = report.incomplete_state_notice() or ""
    assert ("a position counted from the restart), or Lightning's loop, which runs the engine's "
            "restart too, goes on otherwise after a restore") in notice, notice


def test_a_finding_beside_a_known_cause_is_not_said_to_be_of_incomplete_components():
    """Trial 244: beside a WARNING that named the Trainer's fetch before its
    restore, every finding read "(not judged: the declared components are
    incomplete, see the WARNING)", which that WARNING does not say."""
    from resumecheck.environment import fingerprint
    from resumecheck.phrases import FETCHED_BEFORE_RESTORE
    from resumecheck.report import Finding, Report, RunResult

    def run(checkpoint: str, explanation: str, diagnosis=()) -> RunResult:
        return RunResult(dropped=[], resume_at=[3], verdict="diverged", checkpoint=checkpoint,
                         first_divergent_step=4, first_divergent_quantity="data (the model's "
                         "inputs)", reproduce="r", explanation=explanation,
                         diagnosis=list(diagnosis))

    own = run("program", f"data differs from step 4; its batches were {FETCHED_BEFORE_RESTORE}",
              [Finding("scheduler", "last_epoch 0, expected 3", step=3)])
    report = Report(target="t.py:T", steps=8, resume_at=[3], seed=0, isolation="inprocess",
                    tolerance={"mode": "bitwise", "rtol": None, "atol": None},
                    determinism={"checked": False}, noise={"seeds": [], "band": None},
                    environment=fingerprint(1), runs=[own, run("engine", "data differs")])
    notice = report.incomplete_state_notice() or ""
    assert notice.startswith("the first resumed step's batches were fetched"), notice
    mark = own.diagnosis[0].mark_in(own, notice)
    assert mark == (" (not judged: the engine's own full resume departs too, for the cause the "
                    "WARNING names)"), mark


def test_a_generator_set_again_before_the_departure_is_not_said_maybe_lost():
    """Trial 251: a loader's generator the load seeded again from the epoch,
    which the first step's new iterator drew level, read "your checkpoint may
    lose it" beside the real cause; a number set alike by the next step is said so."""
    from resumecheck.report import RunResult
    from resumecheck.verdict import _set_again_before_departing

    run = RunResult(dropped=[], resume_at=[3], verdict="diverged", first_divergent_step=6,
                    first_divergent_quantity="data (the samples consumed)")
    reference = {3: {"p": ["a"]}, 4: {"p": ["b"]}}
    own = {3: {"p": ["x"]}, 4: {"p": ["b"]}}
    counter = "p (int: 0 at the build, 2 at the end, changed during the run)"
    generator = "p (a torch.Generator whose state the run changed, drawn from or seeded again)"
    said = _set_again_before_departing("p", counter, run, reference, own, ())
    assert said is not None and "your checkpoint may lose it" in said
    assert _set_again_before_departing("p", generator, run, reference, own, ()) is None


def test_a_frameworks_rng_advice_is_given_only_where_the_restore_left_the_stream():
    """Trial 273: a Lightning program whose callback saved the streams, which a
    loader's new iterator then drew from after the restore, was told to save
    the streams; the advice is for a stream the restore left where a fresh
    launch left it (trial 263)."""
    from resumecheck.report import StreamOffset

    advice = {"rng": "save them"}

    def run(detail: str) -> RunResult:
        result = RunResult(dropped=[], resume_at=[7], verdict="diverged", diagnosis=[
            Finding("rng", "torch CPU stream differs", status="confirmed")])
        result.stream_offsets = [StreamOffset("torch", 8, -1, "draws", detail)]
        return result

    left = run("torch CPU stream is 1 draw behind ...: Lightning's restore left it there: it "
               "did not restore it (where a fresh launch, the build and the rest of the restore "
               "left it stands)")
    verdict.give_fixes(left, advice)
    assert left.diagnosis[0].fix == "save them"
    drew = run("torch CPU stream is 2 int64 draws ahead ...: it drew from it after setting it "
               "(data set up again, an epoch replayed)")
    verdict.give_fixes(drew, advice)
    assert not drew.diagnosis[0].fix


def test_a_stream_the_program_set_right_itself_beside_another_cause_is_a_note():
    """Trial 291: beside a lost scheduler, "diagnosis: rng[rank 0]: generator
    'loader' differs ..., which the program set right itself during step 7
    (differs; put right alone, the run departs no later)" read as a second
    lost component; the passing twin said it as a note."""
    from resumecheck.report import Finding, RunResult

    righted = Finding("rng", "generator 'loader' differs from the uninterrupted run's at step 6, "
                      "which the program set right itself during step 7", step=6,
                      status="not_cause", confirmed=False)
    other = Finding("rng", "generator 'loader' differs from the uninterrupted run's at step 6",
                    step=6, status="not_cause", confirmed=False)
    run = RunResult(dropped=[], resume_at=[6], verdict="diverged", first_divergent_step=9,
                    first_divergent_quantity="learning rate", checkpoint="program",
                    diagnosis=[righted, other])
    assert righted.put_back() and not other.put_back()
    assert righted.line_in(run, None).endswith(
        "during step 7 (put back by the program during that step: setting it right sooner "
        "changes nothing)")
    assert other.line_in(run, None).endswith("(differs; put right alone, the run departs no "
                                             "later)")
    # (trial 402: no rerun judged it, the declared state being incomplete, and it was the
    # failure's only `diagnosis:`; set right by the program, it is a note all the same)
    unjudged = Finding("rng", righted.detail, step=6)
    assert unjudged.put_back() and not Finding("rng", other.detail, step=6).put_back()


def test_a_plausible_run_close_to_the_band_says_what_the_band_is():
    """A trial: a loss 0.9x the band's width was beyond the seeds' spread at
    several steps, and "stays within seed-to-seed noise" read as at every one;
    the band is the widest spread at any step. Far inside it, nothing is added."""
    from resumecheck.verdict import ULP_APART, _noise_clause

    run = RunResult(dropped=[], resume_at=[7], verdict="diverged", plausible=True,
                    noise_ratio=0.9, max_abs_loss_diff=14.9)
    assert _noise_clause(run).endswith(
        "(within the widest spread of the seeds' runs at any of those steps, not at each): "
        "plausible but different (the loss differing by at most 0.90x that spread: close to it, "
        "a band measured from a few runs is rough)")
    # (trial 427: 0.52x the band, beyond the seeds' spread at 5 of 10 steps)
    run.noise_ratio = 0.3
    assert _noise_clause(run).endswith(
        "(within the widest spread of the seeds' runs at any of those steps, not at each): "
        "plausible but different")
    # (trials 602, 603: the loss twice the seeds' at the steps right after the restart)
    run.beyond_at = [8, 9]
    assert _noise_clause(run).endswith(
        "plausible but different; beyond the seeds' spread at the same step at steps 8 and 9: "
        "a loss curve read step by step beside another seed's may show it")
    run.beyond_at = [8, 9, 11, 12, 14]
    assert "at steps 8, 9, 11 and 2 more: a loss curve" in _noise_clause(run)


def test_not_the_cause_of_a_run_whose_steps_all_matched_says_it_ends_otherwise():
    """A trial: "(differs; put right alone, the run departs no later)" of a run
    that never departed, its end state alone otherwise."""
    from resumecheck.report import NOT_CAUSE

    finding = Finding("hooks", "torch_rng differs", step=9, status=NOT_CAUSE)
    ends = RunResult(dropped=[], resume_at=[9], verdict="diverged", checkpoint="program",
                     first_divergent_step=16, first_divergent_quantity="state of rng at the end")
    assert finding.mark_in(ends, None) == (
        " (differs; put right alone, the run ends otherwise as before)")
    departs = RunResult(dropped=[], resume_at=[9], verdict="diverged", checkpoint="program",
                        first_divergent_step=10, first_divergent_quantity="loss")
    assert finding.mark_in(departs, None) == (
        " (differs; put right alone, the run departs no later)")


def test_the_why_of_a_run_whose_steps_all_matched_says_it_ends_otherwise_too():
    """Trial 387: the why said "(differs; put right alone, the run departs as
    before)" of a scheduler in a run whose steps all matched, beside its
    diagnosis line that said it ends otherwise as before."""
    from resumecheck.report import ENDS_AS_BEFORE, NOT_CAUSE
    from resumecheck.verdict import _differs_clause

    found = [Finding("scheduler", "best 0.5, expected 0.6", step=11, status=NOT_CAUSE)]
    assert _differs_clause(found, ends_only=True) == (
        f"; restored state differs in scheduler{ENDS_AS_BEFORE}")
    assert _differs_clause(found).endswith("(differs; put right alone, the run departs no "
                                           "later)")


def test_a_figure_rounded_to_a_whole_number_keeps_its_zeros():
    """A trial read `1` in the max |Δloss| column of 1.0045 as exact."""
    from resumecheck.report import three_figures

    assert [three_figures(v) for v in (1.0045104, 1.0, 12.0, 0.0243, 100.4, 1234.5)] == [
        "1.00", "1", "12", "0.0243", "100.4", "1.23e+03"]


def test_a_stream_the_program_set_right_in_the_step_leaves_the_position_lead():
    """Trial 367: a loop that restored its counter and skipped no batch read
    its epoch again; a loader generator the program set right itself in that
    step was the only finding, and the lead on the position that came back
    as saved was left out."""
    from types import SimpleNamespace

    from resumecheck.verdict import _restored_position

    ref = SimpleNamespace(segment=SimpleNamespace(names=["params", "rng", "data_cursor"]))
    righted = Finding("rng", "generator 'loader' differs from the uninterrupted run's at step 11, "
                      "which the program set right itself during step 12; not judged: ...",
                      step=11)
    run = RunResult(dropped=[], resume_at=[11], verdict="diverged", checkpoint="program",
                    first_divergent_step=12, first_divergent_key="data", diagnosis=[righted])
    assert _restored_position(ref, run) == "`data_cursor`"
    lost = Finding("sampler_epoch", "epoch 0, expected 1", step=11)
    run.diagnosis = [righted, lost]
    assert _restored_position(ref, run) is None  # (a lost epoch is its own lead)


def test_an_engine_resume_says_which_components_came_back_and_which_were_changed_after():
    """Trial 433: restored at an epoch's end, Lightning's fit-loop counts did not
    come back and a callback that its load gave back was reset in on_train_start;
    the why said neither had come back as its state_dict() gave it."""
    from resumecheck.phrases import CHANGED_AFTER_LOAD
    from resumecheck.verdict import _lossy_text

    lost = Finding("data_cursor", "epoch_progress.current.ready 1, expected 2", step=8,
                   status="not_judged")
    reset = Finding("callbacks", f"Ramp.count 0, expected 8: {CHANGED_AFTER_LOAD}", step=8,
                    status="not_judged")
    assert _lossy_text([lost, reset]) == (
        "; the engine restored every declared component through its own load_state_dict(), "
        "and `data_cursor` did not come back as its state_dict() gave it; `callbacks`, which "
        "its load gave back, was changed before the first step")
    assert _lossy_text([reset]) == (
        "; the engine restored every declared component, and `callbacks`, which its load gave "
        "back, was changed before the first step")
    assert _lossy_text([lost]).endswith("and `data_cursor` did not come back as its "
                                        "state_dict() gave it")


def test_a_position_alike_on_every_rank_wherever_looked_at_is_said_so():
    """Trial 536: a DistributedSampler(drop_last=True) dealt both ranks as many
    batches; alike at the resume point and at the end, the line sent the
    reader to fuzz for a point where the ranks differ, which none is."""
    import types

    from resumecheck.verdict import alike_on_ranks

    def reference(digests: dict[str, dict[str, str]]) -> types.SimpleNamespace:
        segment = types.SimpleNamespace(
            names=["params", "data_cursor[rank 0]", "data_cursor[rank 1]"],
            captures={12: "at12"}, end_state="end")
        return types.SimpleNamespace(segment=segment,
                                     component_digest=lambda path, name: digests[path][name])

    same = {"data_cursor[rank 0]": "a", "data_cursor[rank 1]": "a"}
    never = alike_on_ranks(reference({"at12": same, "end": same}), [12])
    assert never is not None and never.startswith(
        "`data_cursor` at 12 held the same state on every rank, as at every point the "
        "uninterrupted run's state was looked at (its end too): where the ranks' states never "
        "differ (a sampler that deals each rank as many batches)"), never
    apart = {"data_cursor[rank 0]": "a", "data_cursor[rank 1]": "b"}
    once = alike_on_ranks(reference({"at12": same, "end": apart}), [12])
    assert once is not None and once.startswith(
        "`data_cursor` at 12 held the same state on every rank: a checkpoint that keeps one "
        "rank's copy for every rank resumes all the same there"), once
    assert alike_on_ranks(reference({"at12": apart, "end": apart}), [12]) is None


def test_an_ablation_judged_before_the_full_resume_departs_says_its_loss_figure_counts_both():
    """Trial 543: `drop optimizer` departed in the learning rate at the step
    where the engine's full resume departed in the loss (a lost callback's
    weight); its max |Δloss| cell, 0.838, was that callback's effect."""
    from resumecheck.report import RunResult
    from resumecheck.verdict import _before_full_resume

    engine = RunResult(dropped=[], resume_at=[5], verdict="diverged", checkpoint="engine",
                       first_divergent_step=6, first_divergent_quantity="loss",
                       first_divergent_key="loss", max_abs_loss_diff=0.838)
    dropped = RunResult(dropped=["optimizer"], resume_at=[5], verdict="diverged",
                        checkpoint="engine", first_divergent_step=6,
                        first_divergent_quantity="learning rate", first_divergent_key="lr",
                        max_abs_loss_diff=0.838, explanation="learning rate differs from step 6")
    _before_full_resume(dropped, engine)
    assert dropped.explanation.endswith(
        "changes the run too, and its max |Δloss|, 0.838, counts that too"), dropped.explanation


def test_parameters_that_differ_under_several_modules_say_which_modules():
    """Trial 550: "the largest of 8 parameters that differ" of a student with 4,
    the other 4 its declared teacher's, whose names showed nowhere."""
    from resumecheck.verdict import _others

    assert _others("param:params.0.weight", ["param:params.2.bias", "param:teacher.0.weight"]) \
        == " (the largest of 3 parameters that differ, in modules `params` and `teacher`)"
    assert _others("param:params.0.weight", ["param:params.2.bias"]) \
        == " (the largest of 2 parameters that differ)"


def test_a_parameter_that_differs_first_says_where_the_rate_and_the_loss_do():
    """Trial 546: an EMA's weights differed from step 9, its evaluation cut the
    rate at 17, and the loss departed at 18; "9 parameter ema..." beside a loss
    figure read as a loss that differed at 9."""
    from resumecheck.report import RunResult
    from resumecheck.trajectory import Trajectory
    from resumecheck.verdict import _loss_after_state

    run = RunResult(dropped=[], resume_at=[8], verdict="diverged", checkpoint="program",
                    first_divergent_step=9, first_divergent_key="param:ema.module.0.weight",
                    first_divergent_quantity="parameter ema.module.0.weight",
                    trajectory=Trajectory(first_step=9, differs={
                        "param": list(range(9, 33)), "lr": list(range(17, 33)),
                        "loss": list(range(18, 33))}))
    assert _loss_after_state(run) == " (the learning rate from step 17 and the loss from step 18)"
    run.trajectory.differs["loss"] = list(range(9, 33))
    assert _loss_after_state(run) == ""


def test_a_lists_items_are_one_entry_of_the_state_dict_counted():
    """Trial 620: a LambdaLR of two groups read "(and 3 more entries ...)" where
    two of its keys differ: `_last_lr`'s two items were counted apart."""
    from resumecheck.state_diff import describe_difference

    def state(epoch: int) -> dict:
        return {"base_lrs": [0.1, 0.1], "last_epoch": epoch, "_step_count": epoch + 1,
                "_last_lr": [0.01 * epoch, 0.02 * epoch], "lr_lambdas": [None, None]}

    said = describe_difference("scheduler", state(8), state(0), 8) or ""
    assert said.startswith("last_epoch 0, expected 8 (and 2 more entries of its state_dict() "
                           "differ"), said


def test_a_silent_run_apart_by_rounding_alone_says_so():
    """Trial 623: a rate 1 ULP apart at two steps, nothing else apart, read
    "silent but different" beside a footer on averages of weights."""
    from resumecheck.trajectory import Trajectory
    from resumecheck.verdict import ULP_APART, _noise_clause

    run = RunResult(dropped=["swa_scheduler"], resume_at=[18], verdict="diverged",
                    plausible=True, max_abs_loss_diff=0.0, max_ulp_diff=1.0,
                    first_divergent_step=21)
    # (trial 830: "rounding" read as noise, of a rate a lost SWALR computed otherwise)
    assert _noise_clause(run) == ("; nothing in the training loss shows it (where it departs, "
                                  f"by at most 1 ULP: {ULP_APART}): silent but different")
    assert ULP_APART.endswith("as lost state may compute it: not noise")
    # (trial 800: read as of the loss, which was bitwise equal)
    run.trajectory = Trajectory(first_step=19, loss=[0.5, 0.4], differs={"lr": [21, 22]})
    assert ("(where it departs, its learning rate alone is apart by at most 1 ULP, every "
            "step's loss, gradients and parameters matching bit for bit: "
            f"{ULP_APART})") in _noise_clause(run)
    run.trajectory.differs["param"] = [21]
    assert f"(where it departs, by at most 1 ULP: {ULP_APART})" in _noise_clause(run)
    run.max_ulp_diff = 1e6
    assert _noise_clause(run) == "; nothing in the training loss shows it: silent but different"


def test_a_silent_run_whose_steps_match_again_says_which_differ():
    """Trial 811: a GradScaler made anew in the load, resumed at 1: its scale
    apart at steps 5, 9 and 13 only, every step from 14 on alike, read
    "silent but different" beside a legend of runs that end otherwise."""
    from resumecheck.trajectory import Trajectory
    from resumecheck.verdict import ULP_APART, _noise_clause

    run = RunResult(dropped=[], resume_at=[1], verdict="diverged", plausible=True,
                    max_abs_loss_diff=0.0, max_ulp_diff=9e15, first_divergent_step=5,
                    trajectory=Trajectory(first_step=2, loss=[0.5] * 39,
                                          differs={"scale": [5, 9, 13]}))
    assert _noise_clause(run) == (
        "; nothing in the training loss shows it: silent but different (of the steps after the "
        "restart, steps 5, 9 and 13 differ; every step from 14 on matches again, though the "
        "state the run ends with is not compared where a step departed: it may still hand on "
        "other state)")
    run.trajectory.differs["scale"].append(40)  # (the last step: it does not match again)
    assert _noise_clause(run) == "; nothing in the training loss shows it: silent but different"


def test_steps_within_the_tolerance_are_said_to_differ_in_their_last_bits_only():
    """Trial 864: under --tolerance close, a lost SWALR's rate 1 ULP apart at steps 33
    and 34 read "steps 33 and 34 differ" and "where it departs" beside "every step's
    loss, gradients and parameters match": the run departs only in its end state."""
    from resumecheck.trajectory import Trajectory
    from resumecheck.verdict import ULP_APART, _noise_clause

    run = RunResult(dropped=[], resume_at=[28], verdict="diverged", plausible=True,
                    max_abs_loss_diff=0.0, max_ulp_diff=1.0, first_divergent_step=40,
                    first_divergent_quantity="state of swa_scheduler at the end",
                    trajectory=Trajectory(first_step=29, loss=[0.5] * 12,
                                          differs={"lr": [33, 34]}))
    assert _noise_clause(run) == (
        "; nothing in the training loss shows it (where its steps differ, its learning rate "
        "alone is apart by at most 1 ULP, every step's loss, gradients and parameters matching "
        f"bit for bit: {ULP_APART}): silent but different (of the steps after "
        "the restart, steps 33 and 34 differ in their last bits, within the tolerance; every "
        "step from 35 on matches bit for bit again)")


def test_a_run_whose_data_departs_first_says_its_learning_rate_differs_too():
    """Trial 738: a step counter dropped read only as other samples, where its
    warm-up rate differed from the same step."""
    from resumecheck.trajectory import Trajectory

    run = RunResult(dropped=["global_step"], resume_at=[8], verdict="diverged",
                    first_divergent_step=9, first_divergent_quantity="data (the samples consumed)",
                    first_divergent_key="data",
                    trajectory=Trajectory(first_step=9, loss=[1.0, 1.0],
                                          differs={"data": [9, 10], "lr": [9, 10]}))
    said = verdict.explain(run, None)
    assert said.startswith("data (the samples consumed) differs from step 9; the learning rate "
                           "differs too, from step 9"), said
    run.trajectory = Trajectory(first_step=9, loss=[1.0, 1.0], differs={"data": [9, 10]})
    assert "learning rate" not in verdict.explain(run, None)


def test_a_lightning_target_silent_on_its_epochs_is_not_told_of_parameters_it_does_not_take():
    """Trial 756: a Lightning target was told to give steps_per_epoch=, which
    lightning_target does not take (a Trainer target does)."""
    import types

    def said(restored_by: str | None) -> str:
        ref = types.SimpleNamespace(segment=types.SimpleNamespace(
            boundaries={"restored_by": restored_by} if restored_by else {}))
        return verdict.epochs_unsaid(ref) or ""

    lightning = said("Lightning's restore")
    assert "Lightning's count of an epoch's batches was not there to read" in lightning
    assert "steps_per_epoch" not in lightning
    assert "the target's steps_per_epoch=" in said("the HuggingFace Trainer's restore")
    assert "(steps_per_epoch, or epoch_boundaries = []" in said(None)


def test_a_run_whose_loss_departs_first_says_its_samples_differ_too_from_a_later_step():
    """Trial 751: a lost stream read as dropout's drift alone ("5 loss ... plausible"),
    where the next epoch's order it drew differed from step 7."""
    from resumecheck.trajectory import Trajectory

    run = RunResult(dropped=[], resume_at=[4], verdict="diverged", first_divergent_step=5,
                    first_divergent_quantity="loss", first_divergent_key="loss",
                    trajectory=Trajectory(first_step=5, loss=[1.0] * 4,
                                          differs={"loss": [5, 6, 7, 8], "data": [7, 8]}))
    assert "; the samples read differ too, from step 7" in verdict.explain(run, None)


def test_a_run_whose_loss_scale_departs_first_says_when_its_loss_does():
    """Trial 760: "13 loss scale" read as the loss departing at 13, where it
    matched until a skip moved, at 31."""
    from resumecheck.trajectory import Trajectory

    run = RunResult(dropped=[], resume_at=[12], verdict="diverged", first_divergent_step=13,
                    first_divergent_quantity="loss scale", first_divergent_key="scale",
                    trajectory=Trajectory(first_step=13, loss=[1.0] * 20,
                                          differs={"scale": list(range(13, 33)),
                                                   "loss": [31, 32]}))
    said = verdict.explain(run, None)
    assert said.startswith("loss scale differs from step 13; the loss differs from step 31"), said


def test_an_ablation_that_ends_otherwise_in_its_own_component_alone_says_so():
    """Trial 768: `drop rng`, whose own stream alone ended otherwise beside a
    full resume that ended otherwise in a callback, read "the two differ only
    in restoring rng: it matters here", where every step matched without it."""
    from resumecheck.verdict import _ends_otherwise_beyond

    def ended(dropped, *names):
        return RunResult(dropped=dropped, resume_at=[16], verdict="diverged",
                         first_divergent_quantity=f"state of {names[0]} at the end",
                         ended_otherwise=list(names))

    full = ended([], "callbacks")
    own = ended(["rng"], "rng", "callbacks")
    assert _ends_otherwise_beyond(own, full)
    assert own.explanation.endswith(
        "the two differ only in restoring rng: it matters here, to its own end state alone "
        "(every step matched without it)"), own.explanation
    other = ended(["global_step"], "scheduler", "callbacks")
    assert _ends_otherwise_beyond(other, full)
    assert other.explanation.endswith("restoring global_step: it matters here"), other.explanation


def test_a_path_held_otherwise_after_the_two_looks_says_they_are_the_looks():
    """Trial 780: "held it otherwise right after your load() at step 10 and after
    step 11, before it departed from the uninterrupted run at step 14" read as if
    it were alike after steps 12 and 13, which the check does not look at."""
    from resumecheck.verdict import _held_otherwise_text

    def run(departed):
        return RunResult(dropped=[], resume_at=[10], verdict="diverged", checkpoint="program",
                         first_divergent_step=departed, first_divergent_quantity="loss")

    late = _held_otherwise_text(run(14), 10, [10], lost=True, ends_only=False)
    assert ("right after your load() at step 10 and after step 11 (where the check looks at "
            "it), before it departed from the uninterrupted run at step 14") in late, late
    next_but_one = _held_otherwise_text(run(12), 10, [10], lost=True, ends_only=False)
    assert "after step 11, before it departed" in next_but_one, next_but_one


def test_findings_confirmed_only_together_say_with_which():
    """Trial 795: a stream one draw off, harmless in the correct twin's resume,
    read "(confirmed)" beside a frozen layer, where the reruns had put the two
    right only together: each now says so."""
    from resumecheck.report import Finding
    from resumecheck.verdict import note_together

    run = RunResult(dropped=[], resume_at=[8], verdict="diverged", checkpoint="program",
                    diagnosis=[Finding("params", "frozen", step=8, status="confirmed"),
                               Finding("rng", "stream", step=8, status="confirmed"),
                               Finding("scheduler", "count", step=8, status="not_cause")])
    note_together(run, ["params", "rng"])
    assert [f.detail for f in run.diagnosis] == [
        "frozen (put right only together with `rng`: neither alone changed the departure)",
        "stream (put right only together with `params`: neither alone changed the departure)",
        "count"]
    alone = RunResult(dropped=[], resume_at=[8], verdict="diverged", checkpoint="program",
                      diagnosis=[Finding("params", "frozen", step=8, status="confirmed")])
    note_together(alone, ["params"])
    assert alone.diagnosis[0].detail == "frozen"


def test_a_plateau_schedulers_count_of_calls_is_named_after_what_sets_its_rate():
    """Trial 786: a ReduceLROnPlateau restored otherwise was named by its
    `last_epoch`, which sets no rate, before `best` and `num_bad_epochs`."""
    from resumecheck.state_diff import describe_difference

    def state(calls: int, best: float, bad: int) -> dict:
        return {"factor": 0.1, "min_lrs": [0], "patience": 2, "cooldown": 0, "eps": 1e-08,
                "last_epoch": calls, "_last_lr": [0.1], "mode_worse": float("inf"),
                "mode": "min", "threshold": 1e-4, "threshold_mode": "rel", "best": best,
                "cooldown_counter": 0, "num_bad_epochs": bad}

    said = describe_difference("scheduler", state(40, 0.5, 2), state(0, 0.4, 1), 40) or ""
    assert said.startswith("best 0.4, expected 0.5"), said
    assert "last_epoch 0, expected 40" in said, said
    # (by name alone, last_epoch comes before num_bad_epochs)
    said = describe_difference("scheduler", state(40, 0.5, 2), state(0, 0.5, 1), 40) or ""
    assert said.startswith("num_bad_epochs 1, expected 2"), said
    said = describe_difference("scheduler", state(40, 0.5, 2), state(0, 0.5, 2), 40) or ""
    assert said.startswith("last_epoch 0, expected 40"), said  # (alone, it is named)


def test_a_rate_named_first_beside_a_loss_of_the_same_step_says_it_cannot_explain_it():
    """Trial 814: a learning rate computed from the step's own gradients (LARS
    by hand) was the first divergence, where that step's loss differed too,
    which the rate cannot explain; a rate ahead of a loss alike says when the
    loss first differs (trial 503)."""
    from resumecheck.trajectory import Trajectory
    from resumecheck.verdict import _loss_after_rate

    run = RunResult(dropped=["rng"], resume_at=[9], verdict="diverged", first_divergent_step=10,
                    first_divergent_quantity="learning rate",
                    trajectory=Trajectory(first_step=10, loss=[0.5] * 5,
                                          differs={"lr": [10, 11], "loss": [10, 11]}))
    assert _loss_after_rate(run) == (
        " (its loss differs too: where the step computes its loss before its optimizer steps, "
        "as most do, this rate cannot explain it, and what that loss reads differs from the "
        "start of the step)")
    # (trial 821: a GAN's second loss, computed after the first optimizer's step)
    run.first_divergent_quantity = "learning rate of `optimizer_d`"
    assert _loss_after_rate(run) == ""
    run.first_divergent_quantity = "learning rate"
    run.trajectory.differs["loss"] = [11]
    assert _loss_after_rate(run).startswith(" (its loss is alike: ")


def test_a_schedulers_count_of_calls_alone_is_no_difference_unless_a_count_is_0():
    """``call_order_only``: ``_step_count`` feeds torch's call-order warning, except
    that a count of 0 makes CosineAnnealingLR's next rate its closed form."""
    from resumecheck.verdict import call_order_only

    run = {"last_epoch": 5, "base_lrs": [0.1], "_step_count": 6, "_last_lr": [0.05]}
    assert call_order_only(run, {**run, "_step_count": 1})
    assert not call_order_only(run, run)  # (nothing differs)
    assert not call_order_only(run, {**run, "_step_count": 0})
    assert not call_order_only(run, {**run, "_step_count": 1, "last_epoch": 4})
    assert not call_order_only(run, {**run, "_step_count": 1, "_last_lr": [0.04]})


def test_a_clause_of_the_first_restore_is_said_before_a_later_restores_part():
    """Trial 858: "...; at the restore at 13: ...: at an epoch's end, ... one
    position" read as said of 13, a restore inside an epoch; the clause was of
    the first restore, at an epoch's end."""
    from resumecheck.verdict import _at_first_restore

    detail = "shuffle differs; at the restore at 13: shuffle differs"
    assert _at_first_restore(detail, ": at an epoch's end, one position") == (
        "shuffle differs: at an epoch's end, one position; at the restore at 13: shuffle differs")
    assert _at_first_restore("0, expected 8", ": at an epoch's end") == \
        "0, expected 8: at an epoch's end"


def test_a_list_whose_last_items_are_gone_says_how_many():
    """Trial 869: a replay buffer 15 transitions short read "items[32] missing,
    expected 5 entries (...) (and 1 more entry of its state_dict() differs)": a
    transition's fields counted, not the transitions lost."""
    from resumecheck.state_diff import describe_difference

    def item(i: int) -> tuple:
        return (torch.zeros(3), i % 3, -0.05, False)

    said = describe_difference("replay_buffer", {"items": [item(i) for i in range(47)]},
                               {"items": [item(i) for i in range(32)]}, 15)
    assert said == "items: 32 entries, expected 47 (the last 15 missing, from items[32] on)"
    said = describe_difference("replay_buffer", {"items": [1.0, 2.0, 3.0]},
                               {"items": [1.0]}, 15)
    assert said == "items: 1 entry, expected 3 (the last 2 missing, from items[1] on)"
    # (nothing came back: the whole list, as before)
    assert describe_difference("replay_buffer", {"items": [1.0, 2.0]}, {"items": []}, 15) \
        == "items empty, expected 2 entries (1, 2)"


def test_a_stateful_loaders_position_read_as_0_after_its_load_says_it_may_be_held():
    """Trial 876: Accelerate's load_state restored a StatefulDataLoader's place, held
    for its next iterator while the program read the epoch's rest through
    skip_first_batches; "_num_yielded 0, expected 3" read as a place the checkpoint
    lost. Judged findings, and other entries, keep their words."""
    from resumecheck.report import Finding
    from resumecheck.verdict import _held_waiting

    found = Finding("data_cursor", "_num_yielded 0, expected 3 (and 1 more entry ...)", step=11)
    [said] = _held_waiting([found])
    assert said.detail.endswith("(a StatefulDataLoader's state_dict() reads position 0 right "
                                "after its load_state_dict(), until it is next iterated: the "
                                "position its load put in may be held for its next iterator, "
                                "which a loop that reads the epoch's rest through another "
                                "loader, skip_first_batches, leaves for the next epoch)")
    other = Finding("data_cursor", "batch 0, expected 3", step=11)
    assert _held_waiting([other]) == [other]


def test_a_messages_first_line_keeps_the_short_facts_after_its_colon():
    """Trial 886: Accelerate's error was cut after "Found checkpoints: 1", leaving
    out "Registered objects: 0", the one clue that an object was registered too late."""
    from resumecheck.phrases import first_line

    said = first_line("RuntimeError: Number of custom checkpoints in folder f does not match the "
                      "number of registered objects:\nFound checkpoints: 1\nRegistered objects: "
                      "0\nShould have the same number of registered objects as checkpoints, "
                      "so that each object is loaded from its own file.")
    assert said.endswith("registered objects: Found checkpoints: 1; Registered objects: 0"), said
    assert first_line("plain\nsecond") == "plain"
