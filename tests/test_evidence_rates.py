"""A run that first differs in its learning rate shows the rates (trial 141:
a failing test said that no |Δ| was measured for the rate, and showed neither
the rate it trained at nor the one expected)."""

from __future__ import annotations

from resumecheck import verify
from resumecheck.assertions import describe_failure


def test_the_first_differing_rate_is_shown_with_the_one_expected():
    report = verify("fixtures.bugs.class01_scheduler_not_saved:BUGGY", drop="none",
                    noise_seeds=0, check_determinism=False)
    own = report.full_resume
    assert own.first_divergent_quantity == "learning rate"
    step = own.first_divergent_step
    assert own.divergence_detail.startswith(f"learning rate of step {step}: "), \
        own.divergence_detail
    got, _, expected = own.divergence_detail.split(": ", 1)[1].partition(", expected ")
    assert float(got) != float(expected), own.divergence_detail
    message = describe_failure(report)
    assert f"learning rate of step {step}: {got}, expected {expected}" in message


def test_where_no_figures_were_kept_the_failing_test_points_at_the_rates_in_the_why():
    """(at many ranks a rate's figures are not kept: the test said no |Δ| was
    measured, and nothing showed the rates)"""
    from resumecheck.assertions import _describe_run
    from resumecheck.report import DIVERGED, RunResult

    run = RunResult(dropped=[], resume_at=[5], verdict=DIVERGED, first_divergent_step=7,
                    first_divergent_quantity="learning rate on rank 0",
                    first_divergent_key="lr[rank 0]", max_abs_loss_diff=0.0137,
                    explanation="learning rate on rank 0 (and on 1 more rank) differs from step "
                    "7; learning rate of step 7 on rank 0: 0.002, expected 0.0015")
    line = next(x for x in _describe_run(run, "full resume", None) if "reference vs" in x)
    assert line.endswith("no |Δ| figures are measured for a learning rate: the rates are in "
                         "the why"), line


def test_an_ablation_that_drops_the_stream_says_so_not_the_causes_of_a_lost_one():
    """Trial 141: a passing report's `drop rng[rank k]` rows listed "another
    seed, a stream not restored, or one moved further" as if a problem was
    hinted at, where the run left the stream out on purpose."""
    report = verify("resumecheck.tiny:TARGET", drop=[["rng"]], noise_seeds=0,
                    check_determinism=False)
    [dropped] = [r for r in report.runs if r.dropped == ["rng"]]
    assert "this run does not restore it (the engine's restore, which drops rng here), and " \
        "the restart draws from it as the build and the rest of the restore left it" \
        in dropped.explanation, \
        dropped.explanation
    assert "another seed, a stream not restored" not in dropped.explanation
    # (trial 496 read "not within 64 draws" of a stream where the run's was at its start as
    # unrelated to it)
    [torch_stream] = [o for o in dropped.stream_offsets if o.stream == "torch"]
    assert torch_stream.detail.endswith(
        "the restart draws from it as the build and the rest of the restore left it: it is "
        "where the uninterrupted run's was at the start of step 1"), torch_stream.detail


def test_two_rates_one_rounding_apart_are_shown_with_the_digits_that_tell_them_apart():
    """Trial 173: a warm-up's 0.003 * 6 / 6 against a fresh Adam's 0.003 read
    "learning rate of step 10: 0.003, expected 0.003"."""
    from resumecheck.evidence import _rates
    from resumecheck.trace import StepRecord

    ref = StepRecord(step=10, loss=1.0, lr=[0.003 * 6 / 6])
    rec = StepRecord(step=10, loss=1.0, lr=[0.003])
    assert _rates(ref, rec, 10, None) == (
        "learning rate of step 10: 0.003, expected 0.0030000000000000005")
    rec = StepRecord(step=10, loss=1.0, lr=[0.0015])
    assert _rates(ref, rec, 10, None) == "learning rate of step 10: 0.0015, expected 0.003"


def test_a_rate_of_a_second_optimizer_is_named_by_its_own_group():
    """Trial 176: "group 1 of `optimizer_heads`" of that optimizer's only group,
    counted after the first optimizer's."""
    from resumecheck.evidence import _rates
    from resumecheck.trace import StepRecord

    mine = ["optimizer_trunk", "optimizer_heads"]
    ref = StepRecord(step=11, loss=1.0, lr=[0.001, 0.05], lr_of=mine)
    rec = StepRecord(step=11, loss=1.0, lr=[0.001, 0.1], lr_of=mine)
    assert _rates(ref, rec, 11, None) == (
        "learning rate of step 11: group 0 of `optimizer_heads` 0.1, expected 0.05")


def test_an_optimizer_stepped_twice_a_step_is_named_by_its_call_not_a_second_group():
    """Trial 184: a discriminator with one group, stepped twice a training step,
    read "group 0 of `optimizer_d` ...; group 1 of `optimizer_d` ..."."""
    from resumecheck.evidence import _rates
    from resumecheck.trace import StepRecord

    mine, calls = ["optimizer_d", "optimizer_d", "optimizer_g"], [0, 1, 0]
    ref = StepRecord(step=8, loss=1.0, lr=[0.002, 0.002, 0.01], lr_of=mine, lr_call=calls)
    rec = StepRecord(step=8, loss=1.0, lr=[0.004, 0.004, 0.01], lr_of=mine, lr_call=calls)
    assert _rates(ref, rec, 8, None) == (
        "learning rate of step 8: group 0 of `optimizer_d` at its 1st step() this step 0.004, "
        "expected 0.002; group 0 of `optimizer_d` at its 2nd step() this step 0.004, expected "
        "0.002")
    # one optimizer with two groups, each stepped once: its groups, as before
    ref = StepRecord(step=8, loss=1.0, lr=[0.002, 0.02])
    rec = StepRecord(step=8, loss=1.0, lr=[0.004, 0.02])
    assert _rates(ref, rec, 8, None) == "learning rate of step 8: group 0 0.004, expected 0.002"


def test_rates_left_unshown_are_counted_as_what_they_are():
    """Trial 230: one group stepped 8 times a training step (PPO's minibatch
    updates) read "... and 5 more groups"."""
    from resumecheck.evidence import _rates
    from resumecheck.trace import StepRecord

    ref = StepRecord(step=6, loss=1.0, lr=[0.0025] * 8, lr_call=list(range(8)))
    rec = StepRecord(step=6, loss=1.0, lr=[0.003] * 8, lr_call=list(range(8)))
    said = _rates(ref, rec, 6, None)
    assert said.startswith("learning rate of step 6: group 0 at its 1st step() this step 0.003, "
                           "expected 0.0025; group 0 at its 2nd step()"), said
    assert said.endswith("expected 0.0025 and 5 more at later step() calls this step"), said
    # two groups stepped twice: what is left is of both kinds
    ref = StepRecord(step=6, loss=1.0, lr=[0.1, 0.2] * 2, lr_call=[0, 0, 1, 1])
    rec = StepRecord(step=6, loss=1.0, lr=[0.3, 0.4] * 2, lr_call=[0, 0, 1, 1])
    assert _rates(ref, rec, 6, None).endswith(
        " and 1 more (other groups, or other step() calls this step)")
    # groups of one step() each: groups
    ref = StepRecord(step=6, loss=1.0, lr=[0.1, 0.2, 0.3, 0.4])
    rec = StepRecord(step=6, loss=1.0, lr=[0.5, 0.6, 0.7, 0.8])
    assert _rates(ref, rec, 6, None).endswith(" and 1 more group")


def test_the_trace_records_which_step_of_its_optimizer_each_rate_was_read_at():
    import torch

    from resumecheck.trace import _OptimizerSteps

    a, b = torch.nn.Linear(2, 1), torch.nn.Linear(2, 1)
    d = torch.optim.SGD(a.parameters(), lr=0.1)
    g = torch.optim.SGD([{"params": [b.weight]}, {"params": [b.bias], "lr": 0.2}], lr=0.1)
    steps = _OptimizerSteps([d, g], {}, lambda key, value: False, {id(d): "d", id(g): "g"})
    for optimizer, model in ((d, a), (d, a), (g, b)):
        model(torch.ones(1, 2)).sum().backward()
        optimizer.step()
    assert steps.lr() == [0.1, 0.1, 0.1, 0.2]
    assert (steps.lr_of(), steps.lr_call()) == (["d", "d", "g", "g"], [0, 1, 0, 0])


def test_a_rate_that_first_differs_a_step_after_the_restart_says_the_first_stepped_restored():
    """Trial 281: "why step 11 and not 10?" of a scheduler lost at 9: the first
    step after the restart steps with the rate the optimizer's state holds;
    a dropped optimizer's row says its own reason instead."""
    report = verify("fixtures.bugs.class01_scheduler_not_saved:BUGGY", resume_at=(8,),
                    drop=["optimizer", "scheduler"], noise_seeds=0, check_determinism=False)
    own, _, optimizer, scheduler = report.runs
    note = ("learning rate differs from step 10 (step 9, the first after the restart, stepped "
            "with the rate the optimizer's state holds; what sets the next, a scheduler's "
            "step() or code of yours, set it otherwise)")
    assert own.first_divergent_step == 10 and own.explanation.startswith(note), own.explanation
    assert scheduler.explanation.startswith(note), scheduler.explanation
    assert optimizer.first_divergent_step == 9
    assert "stepped with the rate the optimizer's state holds" not in optimizer.explanation


def test_rates_that_differ_in_number_alone_are_a_number_of_optimizer_steps():
    """Trial 389: a critic stepped twice at every other step, by a counter its
    load() set one past the saved one, read "learning rate" as what departed,
    where no rate ever changed (``fixtures/trust/lazy_regularization.py``)."""
    spec = "fixtures.trust.lazy_regularization:"
    run = verify(spec + "OFF_BY_ONE", drop="none", noise_seeds=0).full_resume
    assert (run.first_divergent_step, run.first_divergent_quantity) == (
        5, "number of optimizer steps (1 learning rate read, 2 in the uninterrupted run, each "
        "alike)")
    assert verify(spec + "CORRECT", drop="none", noise_seeds=0).equivalent
