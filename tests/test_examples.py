"""The examples/ scripts: users' own programs, wrapped in a dozen lines, audited.

Each runs under ``resumecheck run`` as shipped (equivalent), and again with an
omission injected into its checkpoint file (caught, and the right component
named).
"""

import json

import pytest
import torch

from resumecheck import Target, load_target, verify
from resumecheck.cli import main

pytestmark = pytest.mark.e2e

CHARLM = "examples/charlm/check.py:TARGET"
IMAGECLF = "examples/imageclf/check.py:TARGET"


def _omitting(spec: str, key: str, fresh_value=None) -> Target:
    """The same program whose save() loses one entry of its checkpoint."""
    target = load_target(spec)

    class Omitting(target.factory):
        def save(self, path):
            super().save(path)
            ckpt = torch.load(path, weights_only=True)
            if fresh_value is None:
                del ckpt[key]
            else:
                ckpt[key] = fresh_value()
            torch.save(ckpt, path)

    return Target(factory=Omitting, run_config=target.run_config,
                  steps=target.steps, resume_at=target.resume_at)


@pytest.mark.parametrize("spec", [CHARLM, IMAGECLF])
def test_example_is_equivalent_under_resumecheck_run(spec, capsys):
    code = main(["run", spec, "--format", "json", "--noise-seeds", "1"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0, report["runs"][0]
    full = report["runs"][0]
    assert full["checkpoint"] == "program" and full["verdict"] == "identical"
    assert full["diagnosis"] == []
    assert report["declared_state_complete"] is True  # the engine's own full resume too
    assert all(r["verdict"] == "diverged" for r in report["runs"] if r["dropped"])


def test_charlm_without_rng_in_its_checkpoint_is_caught():
    report = verify(_omitting(CHARLM, "rng"), drop="none", noise_seeds=0)
    full = report.full_resume
    assert not report.equivalent
    assert [(f.component, f.confirmed) for f in full.diagnosis] == [("rng", True)]
    assert ("torch CPU stream differs from the uninterrupted run's at step 5"
            in full.diagnosis[0].detail)
    assert full.first_divergent_quantity.startswith("data")  # get_batch draws the offsets


def test_imageclf_with_a_fresh_scheduler_in_its_checkpoint_is_caught():
    def fresh_scheduler_state():
        opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.05)
        return torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=40).state_dict()

    report = verify(_omitting(IMAGECLF, "sched", fresh_scheduler_state), drop="none", noise_seeds=0)
    full = report.full_resume
    assert not report.equivalent
    assert [f.component for f in full.diagnosis] == ["scheduler"]
    assert full.diagnosis[0].detail.startswith("last_epoch 0, expected 8")
