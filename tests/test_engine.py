"""End-to-end runs of the engine on the built-in program and small test doubles."""

from dataclasses import replace

import pytest
import torch

import resumecheck
from resumecheck import InvalidArgument, Tolerance, UnknownComponent, verify
from resumecheck.tiny import RESUME_AT, TARGET, TARGET_BF16

from tests import programs

pytestmark = pytest.mark.e2e


def _verdicts(report):
    return {",".join(r.dropped) or "none": r.verdict for r in report.runs}


@pytest.fixture(scope="module")
def tiny_report():
    return verify(TARGET)


def test_builtin_full_resume_identical_and_every_ablation_diverges(tiny_report):
    report = tiny_report
    assert report.equivalent
    assert report.full_resume.verdict == "identical"
    dropped = [r for r in report.runs if r.dropped]
    assert [r.dropped[0] for r in dropped] == list(resumecheck.STANDARD_COMPONENTS)
    for run in dropped:
        assert run.verdict == "diverged", run
        assert run.first_divergent_step >= RESUME_AT
        assert run.plausible is not None and not run.blind_spot
        assert run.explanation
    assert report.environment["threads"] == 1
    assert report.environment["torch"].startswith("2.")


def test_first_divergent_quantity_names_the_cause(tiny_report):
    by = {r.dropped[0]: r for r in tiny_report.runs if r.dropped}
    assert by["scaler"].first_divergent_quantity == "loss scale"
    assert by["data_cursor"].first_divergent_quantity.startswith("data")
    assert by["sampler_epoch"].first_divergent_quantity.startswith("data")
    assert by["scheduler"].first_divergent_quantity == "learning rate"


def test_plausibility_is_judged_against_seed_noise(tiny_report):
    band = tiny_report.noise["band"]
    assert band > 0 and tiny_report.noise["seeds"] == [1, 2]
    for run in tiny_report.runs:
        if run.verdict == "diverged":
            assert run.plausible == (run.max_abs_loss_diff <= band)
            assert run.noise_ratio == pytest.approx(run.max_abs_loss_diff / band)
    # (trials 161-174 read "plausible" beside a lost component as harmless)
    labels = {r.noise_label for r in tiny_report.runs if r.verdict == "diverged"}
    said = ("noise: plausible (of a row marked so): the loss stays within the widest spread "
            "between runs with different seeds, the uninterrupted run among them (at any of "
            "those steps, not at each; another seed changes all "
            "that the program draws from it: its weights, and its data where the seed makes "
            "them), so its loss curve alone would hardly tell it from another seed's run; that "
            "run's continuation differs all the same")
    beyond = any(r.beyond_at for r in tiny_report.runs if r.noise_label == "plausible")
    if beyond:  # (trials 602, 603: a loss beyond the seeds' spread at the same step)
        said += (" (where its why names steps beyond the seeds' spread at the same step, read "
                 "step by step it may)")
    assert "plausible" in labels and said in tiny_report.render().splitlines()
    assert ("silent" in labels) == any(line.startswith("noise: silent (of a row marked so): ")
                                       for line in tiny_report.render().splitlines())


def test_bf16_variant_has_no_scaler_and_every_ablation_diverges():
    report = verify(TARGET_BF16, noise_seeds=0)
    assert report.equivalent
    names = [r.dropped[0] for r in report.runs if r.dropped]
    assert "scaler" not in names and len(names) == 8
    assert all(r.verdict == "diverged" for r in report.runs if r.dropped)


def test_blind_spot_is_reported_not_called_safe():
    # The linear program never draws random numbers: dropping rng changes nothing.
    report = verify(programs.LINEAR, drop=["rng"], noise_seeds=0)
    rng = report.runs[1]
    assert rng.dropped == ["rng"]
    assert rng.verdict == "identical" and rng.blind_spot
    assert "blind spot" in rng.explanation and "not evidence" in rng.explanation
    assert rng.noise_label == "blind spot"


def test_forgotten_rng_restore_is_caught_in_process():
    # Noisy never seeds the global stream; its own checkpoint forgets it. Only
    # the reseed before the restart keeps the first half's stream from hiding it.
    report = verify(programs.NOISY_FORGETS_RNG, drop="none", isolation="inprocess", noise_seeds=0)
    full = report.full_resume
    assert not report.equivalent
    assert full.checkpoint == "program"
    assert full.first_divergent_step == 5
    assert [f.component for f in full.diagnosis] == ["rng"]
    assert "torch CPU stream" in full.diagnosis[0].detail


def test_tolerance_mode_accepts_one_ulp_that_bitwise_rejects():
    target = programs.own_target("ulp")
    bitwise = verify(target, drop="none", noise_seeds=0)
    assert bitwise.full_resume.verdict == "diverged"
    assert bitwise.full_resume.max_ulp_diff >= 1
    close = verify(target, drop="none", noise_seeds=0, tolerance=Tolerance.close())
    assert close.full_resume.verdict == "close"
    assert close.equivalent and not bitwise.equivalent
    strict = verify(target, drop="none", noise_seeds=0, tolerance=Tolerance.close(rtol=0, atol=0))
    assert strict.full_resume.verdict == "diverged"


@pytest.mark.parametrize(
    ("mode", "stage"),
    [("load-raises", "restoring the checkpoint"), ("save-raises", "saving the checkpoint"),
     ("boom-after-resume", "a step")],
)
def test_failures_inside_a_run_are_failed_verdicts_with_the_reason(mode, stage):
    report = verify(programs.own_target(mode), drop="none", noise_seeds=0)
    full = report.full_resume
    assert full.verdict == "failed" and not report.equivalent
    assert full.explanation.startswith(f"{stage} failed: ")
    assert full.failure and full.failure.splitlines()[0] in full.explanation


def test_reference_failure_is_an_error_that_names_the_step():
    target = resumecheck.Target(factory=programs.linear, run_config={"mode": "nan"}, steps=6)
    with pytest.raises(resumecheck.ReferenceFailed, match="step 3: the loss is nan"):
        verify(target, noise_seeds=0)
    target = resumecheck.Target(factory=programs.linear, run_config={"mode": "vector"}, steps=6)
    with pytest.raises(resumecheck.ReferenceFailed, match=r"shape \(3,\)"):
        verify(target, noise_seeds=0)


def test_bad_arguments_raise_invalid_argument_naming_them():
    with pytest.raises(InvalidArgument, match="resume_at=16"):
        verify(TARGET, resume_at=16)
    with pytest.raises(InvalidArgument, match="resume_at=0"):
        verify(TARGET, resume_at=[0])
    with pytest.raises(InvalidArgument, match="steps=1"):
        verify(TARGET, steps=1)
    with pytest.raises(UnknownComponent, match="known|declares"):
        verify(programs.LINEAR, drop=["ema"], noise_seeds=0)


def test_multiple_resume_points_chain_restarts():
    report = verify(TARGET, resume_at=[5, 11], drop=["scheduler"], noise_seeds=0)
    assert report.equivalent
    assert report.runs[1].verdict == "diverged"
    assert report.runs[1].first_divergent_step > 5


def test_latent_gap_is_a_warning_not_a_divergence():
    # Its own checkpoint skips the random streams, which no step draws from: no
    # state of the run, no gap (trial 170: "latent gap: rng" on a correct program)
    report = verify(programs.own_target("ok"), drop="none", noise_seeds=0)
    full = report.full_resume
    assert report.equivalent and full.verdict == "identical"
    assert full.diagnosis == [] and full.latent_gaps == []
    # Its checkpoint forgets an epoch counter read only when the next epoch starts
    report = verify(programs.EPOCH_READ_AT_BOUNDARY, drop="none", noise_seeds=0)
    full = report.full_resume
    assert report.equivalent and full.verdict == "identical"
    assert [(f.component, f.confirmed) for f in full.diagnosis] == [("sampler_epoch", False)]
    assert full.latent_gaps == ["sampler_epoch"]
    assert "latent gap: sampler_epoch" in full.explanation
    # (a trial: "it matters once it leads elsewhere" gave no hint of how to see it)
    assert full.explanation.endswith("it matters once it leads elsewhere: another resume "
                                     "point, or a second restart after this one, may show it "
                                     "(--resume-at K,K2; resumecheck fuzz tries many schedules)")


def test_a_latent_gap_is_in_the_headline_and_fails_strict(capsys):
    """Trial 473: a loss scaler's growth count its load lost, which changed no
    step at that point, read "full resume: EQUIVALENT", exit 0, under --strict
    too; only the diagnosis said it."""
    from resumecheck.cli import main

    fast = ["--drop", "none", "--noise-seeds", "0", "--no-determinism-check"]
    assert main(["run", "tests.programs:EPOCH_READ_AT_BOUNDARY", *fast]) == 0
    said = capsys.readouterr()
    assert ("full resume: EQUIVALENT; latent gap: sampler_epoch restored otherwise than the "
            "uninterrupted run had it, in state that changed no step here (see the "
            "diagnosis)") in said.out, said.out
    assert main(["run", "tests.programs:EPOCH_READ_AT_BOUNDARY", *fast, "--strict"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("resumecheck: --strict: latent gap: sampler_epoch restored "
                          "otherwise"), err
    assert err.rstrip().endswith("--strict"), err  # (the command that shows it again)
    assert main(["run", "fixtures.trust.deque_maxlen:CORRECT", *fast, "--strict"]) == 0


def test_asserting_an_equivalent_resume_with_a_latent_gap_warns_naming_it():
    # (a trial: in pytest such a resume passed as "full resume: ok" and said nothing more)
    from resumecheck.assertions import assert_resume_equivalent
    from resumecheck.errors import LatentGapWarning

    with pytest.warns(LatentGapWarning, match="equivalent at 5, but it leaves sampler_epoch "
                      r"\(next read at step 9\) otherwise") as caught:
        report = assert_resume_equivalent(programs.EPOCH_READ_AT_BOUNDARY, noise_seeds=0,
                                          drop="none")
    warning = caught[0].message
    assert warning.gaps == ["sampler_epoch (next read at step 9)"]
    assert warning.reproduce == report.full_resume.reproduce
    assert caught[0].filename == __file__  # (it points at the test's own line)


def test_the_latent_gap_warning_of_an_exercised_check_points_at_the_test_too():
    # (a trial: from assert_components_exercised it pointed at the plugin's own line)
    from resumecheck.assertions import assert_components_exercised
    from resumecheck.errors import LatentGapWarning

    with pytest.warns(LatentGapWarning) as caught:
        assert_components_exercised(programs.EPOCH_READ_AT_BOUNDARY, components=["params"],
                                    noise_seeds=0, check_determinism=False)
    assert caught[0].filename == __file__


def test_latent_sampler_epoch_gap_says_when_it_would_matter():
    # Its checkpoint forgets the epoch counter, which is read only when the next
    # epoch starts (step 9); resumed at 5 and ending at 7, nothing reads it yet.
    report = verify(programs.EPOCH_READ_AT_BOUNDARY, drop="none", noise_seeds=0)
    full = report.full_resume
    assert full.verdict == "identical" and report.equivalent
    assert full.latent_gaps == ["sampler_epoch"]  # (nor the streams, which no step draws from)
    finding = next(f for f in full.diagnosis if f.component == "sampler_epoch")
    assert (finding.confirmed, finding.matters_from, finding.detail) == (False, 9, "0, expected 1")
    assert "latent gap: sampler_epoch (next read at step 9)" in full.explanation
    longer = verify(programs.EPOCH_READ_AT_BOUNDARY, steps=10, drop="none", noise_seeds=0)
    assert longer.full_resume.verdict == "diverged"
    assert longer.full_resume.first_divergent_step == 9


def test_verify_gives_the_caller_its_random_streams_back():
    import torch

    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    verify(programs.LINEAR, drop="none", noise_seeds=1)
    assert torch.equal(torch.rand(3), expected)


def test_a_failures_figures_each_say_which_quantity_they_are_the_largest_of():
    # (a trial: "|Δ| 0.395, relative 639" beside sample indices said of nothing
    # what it measured)
    from resumecheck.assertions import describe_failure

    from fixtures.bugs import cases

    buggy = next(c[3] for c in cases() if c[0] == "class01_scheduler_not_saved")
    report = verify(buggy, drop="none", noise_seeds=0, check_determinism=False)
    full = report.full_resume
    assert full.verdict == "diverged" and set(full.largest_in) == {"abs", "rel", "ulp"}
    assert all(full.largest_in.values()), full.largest_in
    text = describe_failure(report)
    # (trials 441, 442: "relative 41.3 in parameter w" read as w changed 41-fold)
    assert full.max_rel_diff > 1
    assert (f"): the largest |Δ| {full.max_abs_diff:.3g} in {full.largest_in['abs']}; the "
            f"largest relative {full.max_rel_diff:.3g} in {full.largest_in['rel']} (of one "
            f"value: one near 0 makes it large); the largest in ULP ") in text, text
    assert report.to_json()["runs"][0]["largest_in"] == full.largest_in
    # (trial 537: "relative 31 in loss scale (of one value: one near 0 makes it large)",
    # 1048576 against 32768: one number, which no value near 0 made large)
    from resumecheck.assertions import _describe_run
    from resumecheck.report import RunResult

    scale = RunResult(dropped=[], resume_at=[8], verdict="diverged", checkpoint="program",
                      first_divergent_step=9, first_divergent_quantity="loss scale",
                      max_abs_loss_diff=0.132, max_abs_diff=1015808.0, max_rel_diff=31.0,
                      max_ulp_diff=2.0, largest_in=dict.fromkeys(("abs", "rel", "ulp"),
                                                                 "loss scale"))
    text = "\n".join(_describe_run(scale, "full resume", None))
    assert "the largest relative 31 in loss scale; the largest in ULP" in text, text
    # (trial 539: a stream's state ending otherwise read "a counter, a setting, a flag")
    stream = RunResult(dropped=[], resume_at=[6], verdict="diverged", checkpoint="program",
                       first_divergent_step=16, first_divergent_quantity="state of rng",
                       first_divergent_key="state:rng", max_abs_loss_diff=0.0)
    text = "\n".join(_describe_run(stream, "full resume", None))
    assert "no |Δ| is measured (a random stream's state, a counter" in text, text


def test_a_blind_spot_whose_state_is_the_builds_at_the_resume_point_says_so():
    """A trial: a loss scaler's growth tracker, back at 0 at the resume point as
    a fresh build has it, was a blind spot told to 'make the program exercise
    it' (a scale that changes after the resume point), which it did already."""
    from resumecheck.errors import ComponentsNotExercised

    report = verify(programs.CYCLING_SCALE, drop=["scaler"], noise_seeds=0,
                    check_determinism=False)
    run = report.runs[-1]
    assert run.blind_spot
    assert run.explanation == (
        "blind spot: dropping scaler changed no step after k=6: at step 6 the uninterrupted run's "
        "scaler is what the restore that drops it leaves (state_dict() bit for bit: a fresh "
        "build's state): dropping it puts in "
        "that same state, however the program uses it; a resume point where it has moved from "
        "there shows the difference, unless another component puts it back or the program sets "
        "it again before a step reads it; not evidence that it is saved")
    message = str(ComponentsNotExercised(report, ["scaler"]))
    assert ("scaler: at the resume point its state is what the restore that drops it leaves "
            "(a fresh build's), bit for bit") in message
    assert "a loss scale that changes" not in message
    moved = verify(programs.CYCLING_SCALE, drop=["scaler"], resume_at=[5], noise_seeds=0,
                   check_determinism=False).runs[-1]
    assert moved.verdict == "diverged" and not moved.blind_spot


class _RateByHand:
    """Plain SGD (no state of its own) whose rate the step sets from the step."""

    def __init__(self, config: dict) -> None:
        torch.manual_seed(0)
        self.model = torch.nn.Linear(3, 1)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.step = 0

    def components(self) -> dict:
        return {"params": self.model, "optimizer": self.opt,
                "global_step": resumecheck.Attr(self, "step")}

    def train_step(self) -> float:
        for group in self.opt.param_groups:
            group["lr"] = 0.1 / (1 + self.step)
        loss = torch.nn.functional.mse_loss(self.model(programs.X), programs.Y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.step += 1
        return loss.item()


def test_a_dropped_optimizer_whose_rate_the_step_sets_again_gets_no_load_causes():
    """Trial 225: a dropped SGD optimizer, whose rate the step sets by hand, was
    a blind spot told "only its learning rate differs, which a scheduler sets:
    one stepped in or after your load() ... (see its own line)": no scheduler,
    no load; dropping it is why it differed."""
    run = verify(resumecheck.Target(factory=_RateByHand, steps=6, resume_at=(3,)),
                 drop=["optimizer"], noise_seeds=0, check_determinism=False).runs[-1]
    assert run.blind_spot, run.explanation
    assert "right after a restore it differed (optimizer at the restore at 3: " \
        "param_groups[0].lr 0.1, expected 0.0333333), and the run ends with it as the " \
        "uninterrupted run does" in run.explanation, run.explanation
    assert "scheduler" not in run.explanation and "your load()" not in run.explanation


def test_blind_spots_say_what_would_exercise_each():
    """Trials: a config equal to the factory's defaults was told to choose a
    resume point where it has moved (it never moves), under a lead saying
    nothing could exercise it; a best loss that the next evaluation set again
    was told only that the program does not exercise it."""
    from resumecheck.errors import ComponentsNotExercised

    report = verify(programs.BEST_SO_FAR, drop=["config", "best"], noise_seeds=0,
                    check_determinism=False)
    config, best = report.runs[1:]
    assert config.blind_spot and best.blind_spot
    assert ("at step 4 and at the end the uninterrupted run's config is what the restore that "
            "drops it leaves") in config.explanation
    assert ("training does not change it here, so no resume point shows it lost; the run's "
            "settings are those a fresh build starts from") in config.explanation
    assert "a resume point where it has moved" not in config.explanation
    assert ("right after a restore it differed (best at the restore at 4: 1e+09, expected 0."
            ) in best.explanation
    assert ("the run ends with it as the uninterrupted run does: the program set it again "
            "before any step's loss, gradients or parameters showed it") in best.explanation
    message = str(ComponentsNotExercised(report, ["config"]))
    assert "what would exercise each is said below" in message
    assert "nothing the program does here" not in message
    assert "Target(run_config={...})" in message and "choose a resume point" not in message
    message = str(ComponentsNotExercised(report, ["config", "best"]))
    assert "best: right after the restore it differed, and the program set it again" in message
    # (trial 797: read at a step where other state masked it, as the why says)
    assert "or a step read it where other state masked it" in message, message
    # (a trial: a fresh build's at the first of two resume points, moved at the second,
    # and said so of the first alone, "a resume point where it has moved shows it")
    two = verify(replace(programs.BEST_SO_FAR, resume_at=(2, 4)), drop=["best"], noise_seeds=0,
                 check_determinism=False).runs[-1]
    assert two.blind_spot and "fresh build" not in two.explanation
    assert "right after a restore it differed (best at the restore at 4: 1e+09" in two.explanation
    # settings other than the defaults, which nothing reads: it ends otherwise, not "set again"
    # (a trial: told to use settings other than the defaults, which it did already)
    masked = verify(programs.BEST_SO_FAR_OTHER_LR, drop=["config"], noise_seeds=0,
                    check_determinism=False)
    other = masked.runs[-1]
    assert other.blind_spot and "what the restore that drops it leaves" not in other.explanation
    assert "set it again" not in other.explanation
    assert other.explanation.endswith(
        "the run's settings are not a fresh build's, and dropping them changed nothing: what "
        "the steps read of them comes back through other restored state (an optimizer's or a "
        "scheduler's learning rate), or is not read after the resume point (at the restore at "
        "4: lr 0.05, expected 0.01)")
    # (trial 490: the row read `identical` and its cell only "changed no step", while the
    # config ended otherwise: the cell says it)
    assert other.explanation.startswith(
        "blind spot: dropping config changed no step after k=4, but the run ends with config "
        "otherwise; "), other.explanation
    message = str(ComponentsNotExercised(masked, ["config"]))
    assert "config: the run's settings are not a fresh build's" in message
    assert "run settings other than the defaults" not in message


def test_draws_of_a_step_that_branches_on_lost_state_name_that_state():
    """A trial: a step counter restored one ahead brought an evaluation
    forward, and the stream line read its draws as a second bug (a randperm,
    a loader's iterator). The streams the program never uses differ already
    at the first step: the search looks one step on."""
    own = verify(programs.EARLY_EVAL, drop="none", noise_seeds=0,
                 check_determinism=False).full_resume
    assert [(f.component, f.status) for f in own.diagnosis if f.status == "confirmed"] == [
        ("global_step", "confirmed")]
    [torch_line] = own.stream_offsets
    assert (torch_line.stream, torch_line.step, torch_line.draws) == ("torch", 8, 8)
    # (trial 225: the lead first, before the draws a step may make; trial 568: a lead a rerun
    # confirmed is offered alone, with no causes of the draws' own beside it)
    assert torch_line.detail.endswith(
        ": step 7 read state that differs right after the restore (global_step, which a rerun "
        "confirmed as the run's cause), and a step that reads it otherwise draws otherwise: "
        "these draws follow from it"), torch_line.detail


def test_draws_of_an_ablation_that_branches_on_its_dropped_state_name_it():
    """A trial: `drop replay` said that "something drew from the Python random
    stream during step 11 more than the uninterrupted run did", a draw that
    only followed from the dropped buffer, as if it were a second source."""
    dropped = verify(programs.EARLY_EVAL, drop=["global_step"], resume_at=[7], noise_seeds=0,
                     check_determinism=False).runs[-1]
    [torch_line] = dropped.stream_offsets
    assert (torch_line.stream, torch_line.step, torch_line.draws) == ("torch", 9, -8)
    assert ": step 8 read state that differs right after the restore (global_step), and a " \
        "step that reads it otherwise may draw otherwise; or step 8, the first after the " \
        "restore, drew" in torch_line.detail, torch_line.detail


def test_a_component_lost_at_two_restores_says_how_it_differs_at_each():
    """A trial: a scheduler lost at both restores was described at the first
    only (0, expected 6: harmless there), not at the second (0, expected 22),
    after which the run departed."""
    own = verify(programs.LATE_DECAY, drop="none", noise_seeds=0,
                 check_determinism=False).full_resume
    assert (own.verdict, own.first_divergent_step) == ("diverged", 7)
    [counter] = [f for f in own.diagnosis if f.component == "decay_counter"]
    assert counter.detail == "0, expected 2; at the restore at 5: 0, expected 5"
    assert counter.label_in(own) == \
        "decay_counter (restored at 2; the steps first differ after the restart at 5)"


def test_a_component_lost_again_after_the_run_departed_says_so_against_what_it_saved():
    """Trial 380: a step counter lost at the first restore and again at the
    second, after which the run had departed, was said at the first only.
    There the reference's state is no measure; what the run itself saved is."""
    from fixtures.bugs.class18_global_step import BUGGY, CORRECT

    own = verify(BUGGY, steps=16, resume_at=[4, 10], drop="none", noise_seeds=0,
                 check_determinism=False).full_resume
    assert (own.verdict, own.first_divergent_step) == ("diverged", 5)
    [step] = own.diagnosis
    assert step.detail == \
        "0, expected 4; at the restore at 10, against what this run saved there: 0, expected 6"
    assert verify(CORRECT, steps=16, resume_at=[4, 10], drop="none", noise_seeds=0,
                  check_determinism=False).equivalent
    # (trial 397: a stream there "differs from the uninterrupted run's", which was not
    # what it was compared with; streams no step draws from are left out, as at the first)
    from fixtures.bugs.class05_rng_not_saved import BUGGY as LOSES_RNG

    own = verify(LOSES_RNG, steps=16, resume_at=[4, 10], drop="none", noise_seeds=0,
                 check_determinism=False).full_resume
    [rng] = own.diagnosis
    assert rng.detail == ("torch CPU stream differs from the uninterrupted run's at step 4; at "
                          "the restore at 10, against what this run saved there: torch CPU "
                          "stream differs"), rng.detail


class _CyclingPointer:
    """A queue pointer that steps 0, 1, 2, 3, 0, ...: at step 4 and at step 8
    it is back where a fresh build starts it."""

    def __init__(self, settings):
        import torch

        torch.manual_seed(0)
        self.model = torch.nn.Linear(2, 1)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.x = torch.randn(16, 2)
        self.ptr = 0

    def components(self):
        return {"params": self.model, "optimizer": self.opt,
                "queue_ptr": resumecheck.Attr(self, "ptr")}

    def train_step(self):
        loss = self.model(self.x[self.ptr * 4:self.ptr * 4 + 4]).pow(2).mean()
        loss.backward()
        self.opt.step()
        self.opt.zero_grad()
        self.ptr = (self.ptr + 1) % 4
        return loss.detach()


def test_a_blind_spot_back_at_its_start_at_the_end_is_not_said_never_to_change():
    """Trial 151: a queue pointer that cycled back to its start at the resume
    point and at the end was told "training does not change it here, so no
    resume point shows it lost"; resumed at 5, its loss shows at once."""
    from resumecheck.errors import ComponentsNotExercised

    target = resumecheck.Target(factory=_CyclingPointer, steps=8, resume_at=(4,))
    report = verify(target, drop=["queue_ptr"], noise_seeds=0, check_determinism=False)
    dropped = report.runs[-1]
    assert dropped.blind_spot
    # (trial 499: the harmless reading came first, and an accumulation buffer was told to be
    # left out of its test)
    assert ("either the run changes it and comes back to it between (a position that cycles, "
            "gradients accumulated and emptied at each cycle's end), and a resume point where "
            "it has moved shows it (resumecheck fuzz tries them), or training does not change "
            "it here, and no resume point shows it lost") in dropped.explanation
    message = str(ComponentsNotExercised(report, ["queue_ptr"]))
    assert ("it is so at the end too: either it changes and comes back between (a position "
            "that cycles, gradients accumulated and emptied at each cycle's end)") in message
    assert "so no resume point shows it lost" not in message
    # (trial 198: an agent drawing only from its own generators was told to make the
    # program change the global streams)
    assert "make the program change it" not in message
    assert "leave it out of the components this test asserts: the marker's drop=[...]" in message
    moved = verify(target, drop=["queue_ptr"], resume_at=5, noise_seeds=0,
                   check_determinism=False)
    assert moved.runs[-1].verdict == "diverged"


class _NoDraws(_CyclingPointer):
    """The pointer beside a declared ``RNGState`` whose streams no step draws from."""

    def components(self):
        return {**super().components(), "rng": resumecheck.RNGState()}


def test_a_blind_spot_of_streams_no_step_draws_from_is_not_sent_to_fuzz():
    """Trial 716: an RNGState whose stream no step read (augmentation drawn in
    loader workers) was told "either the run changes it and comes back to it
    between ..., and a resume point where it has moved shows it (resumecheck
    fuzz tries them)": its state was the same before every step."""
    from resumecheck.errors import NEVER_DRAWN, ComponentsNotExercised

    target = resumecheck.Target(factory=_NoDraws, steps=6, resume_at=(3,))
    report = verify(target, drop=["rng"], noise_seeds=0, check_determinism=False)
    dropped = report.runs[-1]
    assert dropped.blind_spot and dropped.dropped == ["rng"]
    assert f"{NEVER_DRAWN}, so no resume point shows it lost" in dropped.explanation
    assert "fuzz" not in dropped.explanation and "comes back" not in dropped.explanation
    message = str(ComponentsNotExercised(report, ["rng"]))
    assert f"rng: {NEVER_DRAWN}, so no resume point shows it lost" in message, message
    # (trial 853: told to add augmentation, which its loader's workers drew, in streams of
    # their own)
    assert "(dropout, augmentation) in the main process exercises it (a loader's workers draw " \
        "from streams of their own" in message, message
    assert "fuzz" not in message and "changes it only before" not in message
    # (a pointer that cycles back is still told that it may have moved between)
    cycling = verify(resumecheck.Target(factory=_CyclingPointer, steps=8, resume_at=(4,)),
                     drop=["queue_ptr"], noise_seeds=0, check_determinism=False)
    assert NEVER_DRAWN not in cycling.runs[-1].explanation


def test_a_run_restarted_twice_is_measured_against_the_band_after_the_restart_it_departs_at():
    """Trial 160: restarted at 6 and 20 and departing at 21, a run read "within
    seed-to-seed noise from step 7 on", over fourteen steps it matched in."""
    from resumecheck.report import RunResult
    from resumecheck.verdict import band, band_from, plausibility

    curves = [[1.0] * 6 + [1.0, 1.0, 1.0, 1.0], [1.0] * 6 + [3.0, 1.0, 1.0, 1.0]]
    run = RunResult(dropped=[], resume_at=[6, 8], verdict="diverged", first_divergent_step=9)
    assert band_from(run) == 8
    deltas = {7: 0.0, 8: 0.0, 9: 0.5, 10: 0.5}
    plausibility(run, deltas, curves)
    assert band(curves, [9, 10]) == 0.0  # (the first restart's steps held the spread: 2.0)
    assert run.plausible is False and run.leaves_band_at == 9
    once = RunResult(dropped=[], resume_at=[6], verdict="diverged", first_divergent_step=9)
    plausibility(once, deltas, curves)
    assert once.plausible is True  # (one restart: measured from it, as before)


def test_a_run_that_departs_at_its_last_step_after_the_loss_is_not_called_silent():
    """Trial 161: a learning rate 4.6x off at the last step, which no loss could
    read, was `silent` ("nothing in the training loss shows it")."""
    from resumecheck.report import RunResult
    from resumecheck.trajectory import Trajectory
    from resumecheck.verdict import _noise_clause, plausibility

    curves = [[1.0] * 8, [1.5] * 8]
    deltas = {5: 0.0, 6: 0.0, 7: 0.0, 8: 0.0}

    def run(step: int) -> RunResult:
        return RunResult(dropped=["scheduler"], resume_at=[4], verdict="diverged",
                         first_divergent_step=step, first_divergent_key="lr",
                         max_abs_loss_diff=0.0,
                         trajectory=Trajectory(first_step=5, loss=[1.0] * 4))

    last = run(8)
    plausibility(last, deltas, curves)
    assert last.plausible is None and last.noise_label == "-"
    assert _noise_clause(last).startswith(
        "; no loss can show it: the run ends at step 8, where it departs")
    earlier = run(7)  # (a parameter off at 7 that step 8's loss does not read: silent)
    plausibility(earlier, deltas, curves)
    assert earlier.noise_label == "silent"


class _DrawsEarlyOnly:
    """Draws from torch's stream in its first two steps only (trial 211: dead
    codes restarted from random draws at step 4, none after the resume point)."""

    def __init__(self, settings: dict) -> None:
        torch.manual_seed(0)
        self.model = torch.nn.Linear(3, 1)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.step = 0

    def components(self) -> dict:
        return {"params": self.model, "optimizer": self.optimizer,
                "rng": resumecheck.RNGState(streams=["torch"]),
                "global_step": resumecheck.Attr(self, "step")}

    def train_step(self):
        self.step += 1
        x = torch.rand(4, 3) if self.step <= 2 else torch.ones(4, 3)
        loss = self.model(x).pow(2).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.detach()


def test_a_blind_spot_the_run_left_alone_after_the_resume_point_is_told_so_not_dropout():
    """Trial 211: a stream drawn from before the resume point and not after it
    was told "make the program exercise them (dropout or augmentation for rng)"."""
    from resumecheck.errors import ComponentsNotExercised

    target = resumecheck.Target(factory=_DrawsEarlyOnly, steps=6, resume_at=(4,))
    report = verify(target, drop=["rng"], noise_seeds=0, check_determinism=False)
    assert report.runs[-1].blind_spot
    message = str(ComponentsNotExercised(report, ["rng"]))
    assert "dropout or augmentation" not in message, message
    assert ("rng: no step after the resume point read it, and the uninterrupted run did not "
            "change it after there: the run changes it only before; a resume point before its "
            "last change shows it") in message, message


def test_draws_of_a_step_are_not_put_to_a_scheduler_or_an_optimizer_that_differs():
    """A trial: Lightning's StochasticWeightAveraging left the schedulers empty
    after the restore, and a new loader's draw was put to them ("step 11 read
    state that differs right after the restore (scheduler)"): a step reads a
    learning rate or a moment only after its forward, and draws no otherwise."""
    from resumecheck.evidence import _branch_note
    from resumecheck.report import DIVERGED, Finding, RunResult, StreamOffset

    def run(*lost: str) -> RunResult:
        result = RunResult(dropped=[], resume_at=[10], verdict=DIVERGED, checkpoint="engine",
                           first_divergent_step=11,
                           first_divergent_quantity="data (the samples consumed)",
                           diagnosis=[Finding(component=c, detail="differs", step=10)
                                      for c in lost])
        result.stream_offsets = [StreamOffset(stream="torch", step=12, draws=1, unit="draw",
                                              detail="torch CPU stream is 1 draw ahead: or a "
                                              "loader drew")]
        _branch_note(result)
        return result

    assert run("scheduler", "optimizer").stream_offsets[0].detail == (
        "torch CPU stream is 1 draw ahead: or a loader drew")
    assert "right after the restore (global_step), and a step" in run(
        "scheduler", "global_step").stream_offsets[0].detail


def test_a_gross_run_names_the_steps_beyond_the_seeds_spread_before_it_leaves_the_band():
    """Trial 733: "leaves the seed-to-seed band at step 17" read as steps 13-16
    within the seeds' noise, where each was 2-3x their spread at that step."""
    from resumecheck.report import RunResult
    from resumecheck.verdict import explain, plausibility

    curves = [[1.0] * 12 + [1.0, 1.0, 1.0, 1.0, 1.0],
              [1.0] * 12 + [1.05, 1.07, 1.1, 1.1, 1.3]]
    run = RunResult(dropped=["optimizer"], resume_at=[12], verdict="diverged",
                    first_divergent_step=13, first_divergent_quantity="loss",
                    first_divergent_key="loss", max_abs_loss_diff=0.6)
    plausibility(run, {13: 0.15, 14: 0.2, 15: 0.25, 16: 0.29, 17: 0.6}, curves)
    assert run.plausible is False and run.leaves_band_at == 17
    assert run.beyond_at == [13, 14, 15, 16]
    assert explain(run, None).endswith(
        "gross; before that, beyond the seeds' spread at the same step at steps 13, 14, 15 "
        "and 16"), explain(run, None)
