"""A list of the run's losses the program keeps is said to be a log of the
loss (trial 570: a Trainer subclass's `step_losses` led the list of what the
checkpoint may lose, before the callback's lost dropout level that was the
cause, and read as state the correct twin lost; ``undeclared._loss_log``)."""

from __future__ import annotations

import torch

from resumecheck import Attr, RNGState, StepOutput, Target, verify
from resumecheck.phrases import LOSS_LOG


class _Logs:
    """Keeps every step's loss in a list, and a warm-up level outside any
    declared component; ``loses_level`` leaves the level out of its checkpoint."""

    loses_level = False

    def __init__(self, settings: dict) -> None:
        torch.manual_seed(0)
        self.model = torch.nn.Linear(4, 1)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.losses: list[float] = []
        self.level = 0.5
        self.step = 0

    def components(self) -> dict:
        return {"params": self.model, "optimizer": self.opt, "rng": RNGState(streams=["torch"]),
                "global_step": Attr(self, "step")}

    def train_step(self) -> StepOutput:
        x = torch.randn(8, 4)
        loss = ((self.model(x) * self.level) ** 2).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.level += 0.1
        self.step += 1
        self.losses.append(loss.item())
        return StepOutput(loss=loss)

    def save(self, path: str) -> None:
        torch.save({"m": self.model.state_dict(), "o": self.opt.state_dict(),
                    "rng": torch.get_rng_state(), "step": self.step, "level": self.level},
                   path)

    def load(self, path: str) -> None:
        state = torch.load(path)
        self.model.load_state_dict(state["m"])
        self.opt.load_state_dict(state["o"])
        torch.set_rng_state(state["rng"])
        self.step = state["step"]
        self.level = 0.5 if self.loses_level else state["level"]


class _LosesLevel(_Logs):
    loses_level = True


def test_a_list_of_the_runs_losses_is_said_to_be_a_log_and_comes_last():
    kept = verify(Target(factory=_Logs, steps=6, resume_at=(3,)), drop="none", noise_seeds=0)
    [line] = [w for w in kept.undeclared if w.startswith("losses ")]
    assert ("its 6 numbers are the run's losses of steps 1 to 6, in order: " + LOSS_LOG) in line
    lost = verify(Target(factory=_LosesLevel, steps=6, resume_at=(3,)), drop="none",
                  noise_seeds=0)
    why = lost.full_resume.explanation
    assert "your checkpoint may lose it: `level`, `losses`" in why, why
    assert "`level`, `losses`" in lost.render().split("WARNING", 1)[1].split("\n", 1)[0]


def test_a_list_of_other_numbers_is_no_log_of_the_loss():
    class Rates(_Logs):
        def train_step(self) -> StepOutput:
            out = super().train_step()
            self.losses[-1] = self.opt.param_groups[0]["lr"] * self.step
            return out

    report = verify(Target(factory=Rates, steps=6, resume_at=(3,)), drop="none",
                    noise_seeds=0)
    [line] = [w for w in report.undeclared if w.startswith("losses ")]
    assert LOSS_LOG not in line


class _LosesMomentum(_Logs):
    """Its load() leaves the optimizer's momentum out, besides the log."""

    def __init__(self, settings: dict) -> None:
        super().__init__(settings)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1, momentum=0.9)

    def load(self, path: str) -> None:
        state = torch.load(path)
        self.model.load_state_dict(state["m"])
        torch.set_rng_state(state["rng"])
        self.step, self.level = state["step"], state["level"]


def test_a_lost_log_beside_a_confirmed_cause_is_said_apart_from_it():
    """Trial 580: "; not compared, and your checkpoint loses it: `state.last_val`"
    right after the confirmed cause read as a second cause."""
    own = verify(Target(factory=_LosesMomentum, steps=6, resume_at=(3,)), drop="none",
                 noise_seeds=0).full_resume
    assert [(f.component, f.status) for f in own.diagnosis] == [("optimizer", "confirmed")]
    assert "; apart from that, not compared, and your checkpoint may lose it: `losses`" in \
        own.explanation, own.explanation
