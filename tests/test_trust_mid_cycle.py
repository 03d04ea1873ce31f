"""A check whose every resume point ends a gradient accumulation cycle says
that a restart inside one is not checked. A trial's data position, worked
out from the optimizer step on load, was wrong only inside a cycle and
passed at a cycle's end, with nothing said of it (``verdict.mid_cycle_untried``,
``fixtures/trust/accumulated_grads.py``)."""

from __future__ import annotations

from resumecheck import verify

SPEC = "fixtures.trust.accumulated_grads:"
LINE = ("a restart between optimizer steps (inside a gradient accumulation cycle, or after a "
        "step that steps none, collecting a rollout, say; every resume point here follows a "
        "step that stepped the optimizer; step 9 stepped none): --resume-at 9 checks one")


def test_every_resume_point_at_a_cycles_end_says_a_restart_inside_one_is_not_checked():
    report = verify(SPEC + "AT_CYCLE_END", drop="none", noise_seeds=0, check_determinism=False)
    assert LINE in report.not_checked, report.not_checked
    assert f"not checked at this resume point: {LINE}" in report.render()


def test_a_resume_point_inside_a_cycle_or_a_program_stepping_every_step_says_nothing():
    # (trials 611, 612: a step a guard skipped, its gradients cleared, and the steps before
    # learning began, with no backward: no cycle)
    for name in ("MID_CYCLE", "ZEROED_FIRST", "SKIPS_SPIKES", "LEARNS_LATER"):
        report = verify(SPEC + name, drop="none", noise_seeds=0, check_determinism=False)
        assert not any("accumulation cycle" in line for line in report.not_checked), name
    # (steps a loss scaler skipped, its scale lowered after them, are no cycle: the built-in
    # program's at 5 and 8)
    tiny = verify("resumecheck.tiny:TARGET", resume_at=6, drop="none", noise_seeds=0)
    assert not any("accumulation cycle" in line for line in tiny.not_checked), tiny.not_checked


def test_a_step_skipped_at_the_runs_last_step_is_no_resume_point_to_offer():
    """Trial 606: a loss scaler skipped the run's last step, whose lowered
    scale no later step shows; "--resume-at 40 checks one" of a 40-step run
    was offered, which is no resume point."""
    from types import SimpleNamespace

    from resumecheck.trace import StepRecord
    from resumecheck.verdict import mid_cycle_untried

    def record(step: int, stepped: bool) -> StepRecord:
        return StepRecord(step=step, loss=1.0, lr=[0.1] if stepped else None, scale=2.0 ** 16,
                          skipped=not stepped, grads_left=None if stepped else True)

    records = [record(step, step != 6) for step in range(1, 7)]
    ref = SimpleNamespace(segment=SimpleNamespace(records=records))
    assert mid_cycle_untried(ref, [3]) is None
    records[2] = record(3, False)  # (a step inside the run that stepped none: offered)
    assert mid_cycle_untried(ref, [2]) == (
        "a restart between optimizer steps (inside a gradient accumulation cycle, or after a "
        "step that steps none, collecting a rollout, say; every resume point here follows a "
        "step that stepped the optimizer; step 3 stepped none): --resume-at 3 checks one")
