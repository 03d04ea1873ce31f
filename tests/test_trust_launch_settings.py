"""A run launched with settings its restart is built without, whose own resume
departs with no lead in the declared state, says so
(fixtures/trust/launch_settings.py; a trial: nothing was named)."""

from __future__ import annotations

from fixtures.trust import launch_settings
from resumecheck import verify


def test_settings_the_restart_is_built_without_are_named_in_the_why():
    report = verify(launch_settings.BUILT_FROM_DEFAULTS, drop="none", noise_seeds=0)
    own = report.full_resume
    assert own.checkpoint == "program" and own.verdict == "diverged", report.render("table")
    assert "the run was launched with dropout=0.5, and its restart is built from the " \
           "program's defaults" in own.explanation, own.explanation
    assert "the engine's restart, built with the settings its capture holds, resumes; and " \
           "built with them, your own resume resumes" in own.explanation, own.explanation
    # (a trial: the settings came last, after a sampler's epoch, an iterator and the streams)
    assert own.explanation.index("the run was launched with") < own.explanation.index(
        "state you did not declare"), own.explanation
    assert report.engine_resume.verdict == "identical"
    assert report.to_json()["launched_with"] == {"dropout": 0.5}


def test_a_launcher_that_passes_the_settings_again_resumes():
    report = verify(launch_settings.PASSED_AGAIN, drop="none", noise_seeds=0)
    assert report.equivalent, report.render("table")
    assert report.to_json()["launched_with"] == {}


def test_a_restart_that_cannot_load_without_the_launch_settings_names_them():
    report = verify(launch_settings.SIZED, drop="none", noise_seeds=0)
    own = report.full_resume
    assert own.verdict == "failed" and own.explanation.startswith("restoring the checkpoint")
    assert "the run was launched with hidden=12, and its restart is built from the " \
           "program's defaults" in own.explanation, own.explanation


def test_settings_are_not_offered_where_a_restart_built_with_them_departs_as_well():
    """A trial: a load() that built the program again from its saved settings
    was told that its restart keeps the defaults'; the cause was a replay
    buffer restored without its maxlen. Built with the launch settings, that
    resume departs step for step as before: the settings are not named."""
    from fixtures.trust import replay_buffer

    report = verify(replay_buffer.OWN_MAXLEN_LOST, drop="none", noise_seeds=0)
    own = report.full_resume
    assert own.checkpoint == "program" and own.verdict == "diverged", report.render("table")
    assert "launched with" not in own.explanation, own.explanation
    # (the buffer's maxlen, which none of its items holds, is named on its component)
    assert [(f.component, f.status) for f in own.diagnosis] == [("buffer", "confirmed")]
    assert own.diagnosis[0].detail.startswith("a deque of maxlen None after the load, 24 at "
                                              "step 4 in the uninterrupted run")
    assert report.engine_resume.verdict == "identical"
    assert verify(replay_buffer.OWN, drop="none", noise_seeds=0).equivalent


class _SettingsDeclared:
    """Settings declared as a dict (a restart is built from them), and a data
    position kept outside every declared component: the engine's full resume
    departs, and not for the settings."""

    def __init__(self, config: dict) -> None:
        import torch

        self.settings = {"lr": 0.05, **config}
        torch.manual_seed(0)
        self.model = torch.nn.Linear(3, 1)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=self.settings["lr"])
        self.x, self.y = torch.randn(32, 3), torch.randn(32, 1)
        self.position = 0

    def components(self) -> dict:
        from resumecheck import Attr

        return {"params": self.model, "optimizer": self.opt, "config": Attr(self, "settings")}

    def train_step(self):
        batch = slice(self.position, self.position + 4)
        loss = (self.model(self.x[batch]) - self.y[batch]).pow(2).mean()
        loss.backward()
        self.opt.step()
        self.opt.zero_grad()
        self.position = (self.position + 4) % 32
        return loss.detach()


def test_the_warning_offers_no_settings_that_a_declared_config_brings_back():
    """A trial: a WARNING offered the launch settings as a cause ("unless a
    declared `config` component carries the settings back") beside a declared
    settings dict, from which the engine builds its restarts."""
    from resumecheck import Target

    report = verify(Target(factory=_SettingsDeclared, run_config={"lr": 0.01}, steps=6,
                           resume_at=(3,)), drop="none", noise_seeds=0)
    notice = report.incomplete_state_notice()
    assert notice and "the declared components do not capture" in notice, notice
    assert "the run's settings" not in notice, notice
    assert report.to_json()["launch_settings_matter"] is False


def test_a_config_blind_spot_of_restarts_built_with_the_run_settings_says_so():
    """Trial 302: restarts built with the run's own settings (restart_config="run",
    settings other than the defaults) had config's blind spot told "the run's
    settings are those a fresh build starts from (your factory's defaults): give
    the check other settings, Target(run_config=...)", which it had."""
    import dataclasses

    import pytest

    from resumecheck import assert_components_exercised, tiny
    from resumecheck.errors import CONFIG_AS_BUILT, CONFIG_RESTARTED, ComponentsNotExercised

    target = dataclasses.replace(tiny.TARGET, run_config={"label_smoothing": 0.2},
                                 restart_config="run", spec=None)
    fast = {"noise_seeds": 0, "check_determinism": False}
    [spot] = [r for r in verify(target, drop=["config"], **fast).runs if r.dropped]
    assert spot.blind_spot and CONFIG_RESTARTED in spot.explanation
    assert CONFIG_AS_BUILT not in spot.explanation
    with pytest.raises(ComponentsNotExercised) as caught:
        assert_components_exercised(target, components=["config"], **fast)
    assert CONFIG_RESTARTED in str(caught.value) and CONFIG_AS_BUILT not in str(caught.value)
    # built from the defaults, a run of the defaults is told to take other settings
    defaults = dataclasses.replace(tiny.TARGET, run_config={}, spec=None)
    [plain] = [r for r in verify(defaults, drop=["config"], **fast).runs if r.dropped]
    assert plain.blind_spot and CONFIG_AS_BUILT in plain.explanation
