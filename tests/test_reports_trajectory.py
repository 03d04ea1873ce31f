"""Each run's steps in the report: the loss per step and where each quantity differs."""

from __future__ import annotations

import pytest

import fixtures.bugs.class10_sampler_epoch as c10
from resumecheck.engine import verify
from resumecheck.trace import QUANTITY_ORDER
from resumecheck.trajectory import QUANTITY_KINDS, Trajectory

pytestmark = pytest.mark.e2e


def test_kinds_are_the_traces_quantities_in_order():
    assert QUANTITY_KINDS == QUANTITY_ORDER


@pytest.fixture(scope="module")
def report():
    return verify(c10.BUGGY, drop=["rng", "scheduler"], noise_seeds=1)


def test_every_run_carries_its_steps_and_they_agree_with_the_verdict(report):
    k, n = report.resume_at[0], report.steps
    assert len(report.reference_loss) == n and len(report.seed_losses) == 1
    assert report.seed_losses[0] != report.reference_loss
    for run in report.runs:
        traj = run.trajectory
        assert traj is not None
        # ablations restart from the engine's capture: steps k+1..N;
        # the program's own save/load runs its first half too: steps 1..N
        assert traj.first_step == (1 if run.checkpoint == "program" else k + 1)
        assert traj.steps[-1] == n and len(traj.loss) == n - traj.first_step + 1
        assert set(traj.differs) <= set(QUANTITY_KINDS)
        if run.verdict == "identical":
            assert traj.differs == {}
            assert traj.loss == report.reference_loss[traj.first_step - 1:]
        if run.verdict == "diverged" and not run.first_divergent_quantity.startswith("state"):
            first = min(s for steps in traj.differs.values() for s in steps)
            assert first == run.first_divergent_step
            # the first divergent quantity is among those that differ at that step
            kind = next(k for k in QUANTITY_KINDS if first in traj.differs.get(k, []))
            assert run.first_divergent_quantity.startswith(
                {"data": "data", "scale": "loss scale", "skipped": "skipped", "lr": "learning",
                 "loss": "loss", "grad": "gradient", "param": "parameter"}[kind])
        for steps in traj.differs.values():
            assert steps == sorted(set(steps)) and all(traj.first_step <= s <= n for s in steps)
        # the loss the trajectory keeps is the loss the verdict judged
        deltas = [abs(a - report.reference_loss[s - 1]) for s, a in zip(traj.steps, traj.loss)
                  if s > k]
        assert max(deltas) == pytest.approx(run.max_abs_loss_diff)


def test_the_seeded_sampler_bug_differs_in_the_data_first(report):
    full = report.full_resume
    assert full.verdict == "diverged"
    assert full.trajectory.differs["data"][0] == full.first_divergent_step


def test_json_round_trip(report):
    for run in report.runs:
        data = run.to_json()["trajectory"]
        assert Trajectory.from_json(data) == run.trajectory
