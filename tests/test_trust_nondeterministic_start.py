"""A run whose replayed first half already differs before its first restart is
``inconclusive``, never ``diverged``: no save or restore had happened yet."""

from __future__ import annotations

from resumecheck import Tolerance, verify
from resumecheck.report import INCONCLUSIVE

NOISY = "fixtures/trust/noisy_start.py:TARGET"


def test_a_difference_before_the_first_restart_is_not_blamed_on_the_checkpoint():
    report = verify(NOISY, tolerance=Tolerance.close(), drop="none", noise_seeds=0)
    own = report.full_resume
    assert own is not None and own.checkpoint == "program"
    assert own.verdict == INCONCLUSIVE and report.outcome == "INCONCLUSIVE"
    assert own.first_divergent_step is not None and own.first_divergent_step <= 5
    assert own.explanation.startswith("inconclusive: ")
    assert "before the first restart at 5" in own.explanation
    # its inputs differ (the data a step reads is compared as is): no tolerance would judge it
    assert own.first_divergent_quantity.startswith("data") and "--rtol" not in own.explanation
    assert not own.diagnosis or all(f.status != "confirmed" for f in own.diagnosis)
    assert "NOT EQUIVALENT" not in report.render("table")



class _Builds:
    """Each build shifts the inputs by 1e-7 more than the last (the count of
    builds is kept in a file under TMPDIR, outside the program): two runs differ
    by little more than rounding."""

    def __init__(self, settings: dict) -> None:
        import os
        from pathlib import Path

        import torch

        count = Path(os.environ["TMPDIR"]) / "builds.txt"
        built = int(count.read_text()) + 1 if count.exists() else 1
        count.write_text(str(built))
        shift = 1e-7 * built
        torch.manual_seed(0)
        self.model = torch.nn.Linear(4, 1)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.05)
        self.x, self.y = torch.randn(8, 4) + shift, torch.randn(8, 1)

    def components(self) -> dict:
        return {"params": self.model, "optimizer": self.opt}

    def train_step(self) -> float:
        import torch

        loss = torch.nn.functional.mse_loss(self.model(self.x), self.y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()


def test_bitwise_refusal_offers_a_tolerance_only_where_rounding_may_be_all(tmp_path, monkeypatch):
    import pytest

    monkeypatch.setenv("TMPDIR", str(tmp_path))

    from resumecheck import Target
    from resumecheck.errors import NondeterministicBaseline

    with pytest.raises(NondeterministicBaseline) as info:
        verify(Target(factory=_Builds, steps=4, resume_at=(2,)), drop="none", noise_seeds=0)
    assert info.value.tolerance_may_help
    assert "or judge within tolerance with --tolerance close" in str(info.value)
