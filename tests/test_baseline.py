"""Trust in the baseline: determinism and the tiny-batch gradient checks."""

import json

import pytest

from resumecheck import NondeterministicBaseline, Tolerance, verify
from resumecheck.baseline import check_baseline
from resumecheck.cli import main

pytestmark = pytest.mark.e2e


def _by_name(report):
    return {c.name: c for c in report.checks}


def test_builtin_program_is_trustworthy_with_figures():
    report = check_baseline()
    checks = _by_name(report)
    assert report.passed
    assert [c.status for c in report.checks] == ["passed"] * 6
    assert checks["seeding"].status == "passed"
    assert checks["gradients vs finite differences"].figures["max_abs_error"] < 1e-6
    assert checks["gradients vs finite differences"].figures["entries"] >= 8
    assert checks["gradient accumulation"].figures["max_abs_diff"] < 1e-10
    # (what it shows: the check's own split, not the program's accumulation loop; a trial)
    assert "not the program's own accumulation loop" in checks["gradient accumulation"].detail
    losses = checks["loss decreases"].figures["losses"]
    assert losses[-1] < losses[0]
    assert "the check's own Adam" in checks["loss decreases"].detail  # (not the program's)


def test_unseeded_program_is_flagged_with_the_first_differing_step():
    report = check_baseline("fixtures.nondeterministic:UNSEEDED")
    det = _by_name(report)["determinism"]
    assert not report.passed and det.status == "failed"
    assert det.figures == {"first_step": 1, "first_quantity": "data (the samples consumed)",
                           "cause": "initial parameters differ: the seed depends on the clock, "
                                    "or is missing"}
    assert "initial parameters differ" in det.detail


@pytest.mark.process
def test_set_order_dependence_shows_across_interpreters():
    inproc = check_baseline("fixtures.nondeterministic:SET_ORDER")
    assert inproc.passed  # one interpreter, one hash seed: invisible
    proc = check_baseline("fixtures.nondeterministic:SET_ORDER", isolation="process")
    det = _by_name(proc)["determinism"]
    assert det.status == "failed" and det.figures["first_step"] == 1
    assert "different PYTHONHASHSEEDs" in det.figures["cause"]


def test_run_refuses_a_nondeterministic_baseline_with_exit_3(capsys):
    code = main(["run", "fixtures.nondeterministic:UNSEEDED", "--noise-seeds", "0"])
    err = capsys.readouterr().err
    assert code == 3
    assert "two uninterrupted runs in this one interpreter differ from step 1" in err
    assert "Either the program is not deterministic, or one run leaves state" in err
    assert "Reproduce: resumecheck baseline fixtures.nondeterministic:UNSEEDED" in err
    assert main(["fuzz", "fixtures.nondeterministic:UNSEEDED", "--quiet"]) == 3


def test_tolerance_mode_judges_anyway_and_records_it():
    with pytest.raises(NondeterministicBaseline) as info:
        verify("fixtures.nondeterministic:UNSEEDED", noise_seeds=0, drop="none")
    assert info.value.step == 1
    report = verify("fixtures.nondeterministic:UNSEEDED", noise_seeds=0, drop="none",
                    tolerance=Tolerance.close())
    assert report.determinism["deterministic"] is False
    assert report.determinism["first_step"] == 1


def test_seeded_twin_passes_and_run_records_determinism():
    assert check_baseline("fixtures.nondeterministic:SEEDED").passed
    report = verify("fixtures.nondeterministic:SEEDED", noise_seeds=0, drop="none")
    assert report.determinism == {"checked": True, "deterministic": True, "seeded": True}


def test_wrong_backward_fails_the_gradient_check_naming_the_parameter():
    report = check_baseline("fixtures.wrong_backward:WRONG")
    grad = _by_name(report)["gradients vs finite differences"]
    assert not report.passed and grad.status == "failed"
    assert "head.weight" in grad.detail and grad.figures["worst_parameter"] == "head.weight"
    assert grad.detail.endswith("; the sampled entries of body.weight, body.bias agree")
    assert grad.figures["autograd"] == pytest.approx(2 * grad.figures["finite_difference"], rel=1e-4)
    assert check_baseline("fixtures.wrong_backward:RIGHT").passed


def test_a_float32_loss_skips_the_finite_differences_instead_of_blaming_the_backward():
    """A trial: `F.cross_entropy(logits.float(), y)` failed the float64 check
    as "a wrong backward?"; its backward is right (without the cast the two
    agree), the float32 loss makes central differences noise."""
    grad = _by_name(check_baseline("fixtures.wrong_backward:CASTS"))[
        "gradients vs finite differences"]
    assert grad.status == "skipped", grad.detail
    assert grad.detail.startswith("batch_loss returns a float32 loss for a float64 model")
    assert "wrong backward" not in grad.detail


def test_a_batch_loss_that_calls_model_train_is_held_in_eval_mode_and_says_so():
    """A trial: batch_loss called model.train() (as its training step did);
    with dropout on, the check blamed "a wrong backward?" and said "in eval
    mode", which it was not."""
    checks = _by_name(check_baseline("fixtures.wrong_backward:TRAINS_IN_LOSS"))
    assert [c.status for c in checks.values()][2:] == ["passed"] * 4, checks
    assert "batch_loss sets the model's train/eval mode (model.train()): held off" in (
        checks["finite loss"].detail)
    assert "wrong backward" not in checks["gradients vs finite differences"].detail


@pytest.mark.parametrize(("target", "status", "words"), [
    ("NO_GRAD", "passed", "batch_loss returns a loss without a gradient (it runs under "
                          "torch.no_grad()"),
    ("RAISES", "failed", "batch_loss(model, tiny_batch(8)) raised TypeError"),
])
def test_a_batch_loss_without_a_backward_skips_what_needs_one_and_keeps_what_passed(
        target, status, words):
    """A trial: a batch_loss under torch.no_grad() ended the command with
    "unexpected RuntimeError", and the checks that had passed were lost."""
    report = check_baseline(f"fixtures.wrong_backward:{target}")
    checks = list(report.checks)
    assert [c.status for c in checks[:2]] == ["passed", "passed"]  # (determinism, seeding)
    assert checks[2].status == status
    assert words in (checks[2].detail if status == "failed" else checks[3].detail)
    assert [c.status for c in checks[3:]] == ["skipped"] * 3


def test_programs_without_a_tiny_batch_skip_the_gradient_checks():
    report = check_baseline("fixtures.nondeterministic:SEEDED")
    statuses = [c.status for c in report.checks]
    assert statuses == ["passed", "passed", "skipped", "skipped", "skipped", "skipped"]
    assert "tiny_batch" in report.checks[2].detail


def test_cli_baseline_json_and_exit_codes(capsys):
    assert main(["baseline", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["schema"] == "resumecheck.baseline/1" and out["passed"] is True
    assert main(["baseline", "fixtures.wrong_backward:WRONG"]) == 1
    assert "NOT TRUSTWORTHY" in capsys.readouterr().out


def test_cli_baseline_to_a_file_says_the_verdict_as_the_report_does(tmp_path, capsys):
    # (a trial: "NOT trustworthy" on the terminal, "NOT TRUSTWORTHY" in the report)
    target = tmp_path / "b.json"
    assert main(["baseline", "fixtures.wrong_backward:WRONG", "--output", str(target)]) == 1
    assert capsys.readouterr().out == (
        f"resumecheck baseline: NOT TRUSTWORTHY; report written to {target}\n")


def test_accumulation_says_it_holds_in_eval_mode_and_how_far_batch_norm_training_is():
    check = _by_name(check_baseline("fixtures.trust.batch_norm:TARGET"))["gradient accumulation"]
    assert check.status == "passed"  # (in eval mode, as the check runs)
    assert "in eval mode" in check.detail
    assert "BatchNorm1d layers normalise each micro-batch" in check.detail
    assert check.figures["max_abs_diff"] < 1e-10
    assert check.figures["max_abs_diff_batch_norm_training"] > 1e-3
    plain = _by_name(check_baseline())["gradient accumulation"]  # (no batch norm: no clause)
    assert "max_abs_diff_batch_norm_training" not in plain.figures
