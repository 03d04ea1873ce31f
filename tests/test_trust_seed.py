"""The harness changes no setting the user did not ask for (issue 13, section 2).

``fixtures/trust/seeded_at_build.py`` wraps a user's script exactly as the
README shows; its settings seed everything at build (default seed 7).
"""

import pytest

from resumecheck import verify
from resumecheck.baseline import check_baseline
from resumecheck.cli import main

from fixtures.trust import lazy_loader, seeded_at_build

pytestmark = pytest.mark.e2e

ISOLATION = ["inprocess", pytest.param("process", marks=pytest.mark.process)]


@pytest.mark.parametrize("seed", [None, 3], ids=["no-seed", "seed-3"])
@pytest.mark.parametrize("isolation", ISOLATION)
def test_readme_wrapped_program_seeded_at_build_is_equivalent_with_and_without_seed(isolation, seed):
    report = verify(seeded_at_build.TARGET, drop="none", noise_seeds=0, isolation=isolation, seed=seed)
    assert report.equivalent, report.render()
    full = report.full_resume
    assert full.checkpoint == "program" and full.verdict == "identical"
    assert full.diagnosis == [] and full.latent_gaps == []
    assert report.seed == seed and report.declared_state_complete
    assert ("--seed" in full.reproduce) == (seed is not None)


@pytest.mark.parametrize("isolation", ISOLATION)
def test_without_seed_a_checkpoint_without_settings_is_no_false_alarm(isolation):
    report = verify(seeded_at_build.WITHOUT_SETTINGS, drop="none", noise_seeds=0, isolation=isolation)
    assert report.equivalent, report.render()
    assert report.full_resume.diagnosis == []


def test_an_asked_for_seed_reaches_a_restart_only_through_the_checkpoint():
    # The run is launched with seed 3; a restart built from the defaults gets
    # seed 7 back, as a real relaunch without the flag would: a true finding.
    report = verify(seeded_at_build.WITHOUT_SETTINGS, drop="none", noise_seeds=0, seed=3)
    full = report.full_resume
    assert not report.equivalent
    assert full.first_divergent_quantity == "data (the samples consumed)"
    [config] = full.diagnosis
    assert config.component == "config" and config.detail.startswith("seed 7, expected 3")
    # set after the load, the settings cannot undo what the build made of them, and the
    # finding says so (trial 643)
    assert config.status is None
    assert config.detail.endswith("; not judged: put right after your load(), the run departs "
                                  "all the same, which is no evidence against it: what your "
                                  "build or load() made from the settings, a schedule's "
                                  "function or a layer's size, stays as it was made")


def test_noise_runs_vary_the_seed_from_the_one_the_run_uses():
    own = verify(seeded_at_build.TARGET, drop="none", noise_seeds=2)
    assert own.noise["base_seed"] == 7 and own.noise["seeds"] == [8, 9]
    assert own.noise["band"] > 0
    assert "the program's own seed (7), " in own.render().splitlines()[0]  # (from its settings)
    asked = verify(seeded_at_build.TARGET, drop="none", noise_seeds=1, seed=3)
    assert asked.noise["base_seed"] == 3 and asked.noise["seeds"] == [4]


def test_no_noise_runs_when_the_programs_seed_cannot_be_known():
    report = verify(lazy_loader.CORRECT, drop="none", noise_seeds=2)
    assert report.noise["seeds"] == [] and report.noise["band"] is None
    assert "seed is unknown" in report.noise["why"]
    # (a trial: a default seed in the factory's code was not seen, and nothing said how)
    assert "put it in the settings, Target(run_config={'seed': 0, ...}), or give --seed" in \
        report.noise["why"]
    assert report.full_resume.plausible is None
    assert "noise: not measured" not in report.render()  # (nothing diverged: no noise to weigh)
    # a run that diverged shows "-" in the noise column: the table says why (a
    # trial found the reason only in the JSON)
    ablated = verify(lazy_loader.CORRECT, drop=["optimizer"], noise_seeds=2)
    assert any(r.verdict == "diverged" and r.noise_label == "-" for r in ablated.runs)
    assert "noise: not measured: the program's seed is unknown" in ablated.render()
    # (a trial: the header's "the program's own seed" read as if the seed were known)
    # (later trials read "(unknown)" of a seed written in their script as one not found)
    assert "the program's own seed (not a setting the check can read), " in \
        ablated.render().splitlines()[0]


def test_with_no_noise_runs_asked_for_the_footer_says_so_not_another_reason():
    # (a trial: --noise-seeds 0 printed "the program's seed is unknown")
    ablated = verify(lazy_loader.CORRECT, drop=["optimizer"], noise_seeds=0)
    assert "noise: not measured: no noise runs were asked for (--noise-seeds 0)" in \
        ablated.render()
    assert "seed is unknown" not in ablated.render()


class _FixedSeed:
    """Seeds with a constant whatever its settings say (a trial's script): its
    ``seed`` setting changes nothing."""

    def __init__(self, settings: dict) -> None:
        import torch

        torch.manual_seed(0)
        self.model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Dropout(0.2),
                                         torch.nn.Linear(8, 1))
        self.opt = torch.optim.Adam(self.model.parameters(), lr=0.05)
        self.x, self.y = torch.randn(16, 4), torch.randn(16, 1)

    def components(self) -> dict:
        from resumecheck import RNGState

        return {"params": self.model, "optimizer": self.opt, "rng": RNGState(streams=["torch"])}

    def train_step(self) -> float:
        import torch

        loss = torch.nn.functional.mse_loss(self.model(self.x), self.y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()


def test_noise_runs_that_train_exactly_as_the_reference_give_no_band_and_no_gross():
    # (a trial: band 0, so every difference was "gross (infx)")
    from resumecheck import Target

    target = Target(factory=_FixedSeed, run_config={"seed": 0}, steps=8, resume_at=(4,))
    report = verify(target, drop=["optimizer"], noise_seeds=2)
    assert report.noise["seeds"] == [] and report.noise["band"] is None
    assert report.noise["why"].startswith("the runs with seed = 1, 2 trained exactly as the "
                                          "reference: the program's 'seed' setting changes nothing")
    dropped = next(r for r in report.runs if r.dropped == ["optimizer"])
    assert dropped.verdict == "diverged" and dropped.plausible is None
    assert "gross" not in report.render() and "noise: not measured: the runs with seed" in \
        report.render()


def test_cli_and_baseline_leave_the_seed_alone_unless_asked(capsys):
    assert main(["run", "fixtures.trust.seeded_at_build:TARGET", "--drop", "none",
                 "--noise-seeds", "0"]) == 0
    out = capsys.readouterr().out
    assert "the program's own seed" in out
    assert main(["run", "fixtures.trust.seeded_at_build:TARGET", "--drop", "none",
                 "--noise-seeds", "0", "--seed", "3"]) == 0
    # (what was asked: a trial's factory ignored its settings and trained with seed 0)
    assert "seed 3 asked of the program" in capsys.readouterr().out
    assert check_baseline(seeded_at_build.WITHOUT_SETTINGS, steps=4).passed
