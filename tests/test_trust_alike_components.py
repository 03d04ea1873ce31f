"""Two declared components the uninterrupted run held equal at the resume
point, and apart at its end, are said: a load() that makes one from the other
resumes alike there (trial 612: a DQN's target network, resumed right after a
sync, passed a load that copied it from the online network)."""

from __future__ import annotations

import copy

import torch

from resumecheck import Attr, RNGState, StepOutput, Target, verify


class _Dqn:
    """Syncs its target network every 3 steps; its load copies the target
    from the online network, which is right only just after a sync."""

    def __init__(self, settings: dict) -> None:
        torch.manual_seed(0)
        self.q = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))
        self.target = copy.deepcopy(self.q)
        self.opt = torch.optim.SGD(self.q.parameters(), lr=0.1)
        self.x = torch.randn(16, 3)
        self.step = 0

    def components(self) -> dict:
        return {"params": self.q, "target_net": self.target, "optimizer": self.opt,
                "rng": RNGState(streams=["torch"]), "global_step": Attr(self, "step")}

    def train_step(self) -> StepOutput:
        with torch.no_grad():
            goal = self.target(self.x).max(1).values * 0.9 + 0.1
        loss = ((self.q(self.x).max(1).values - goal) ** 2).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.step += 1
        if self.step % 3 == 0:
            self.target.load_state_dict(self.q.state_dict())
        return StepOutput(loss=loss, samples=torch.arange(16))

    def save(self, path: str) -> None:
        torch.save({"q": self.q.state_dict(), "o": self.opt.state_dict(), "s": self.step}, path)

    def load(self, path: str) -> None:
        state = torch.load(path)
        self.q.load_state_dict(state["q"])
        self.target.load_state_dict(state["q"])  # (right only just after a sync)
        self.opt.load_state_dict(state["o"])
        self.step = state["s"]


def test_components_held_equal_at_the_resume_point_are_said_unchecked_there():
    report = verify(Target(factory=_Dqn, steps=5, resume_at=(3,)), drop="none",
                    noise_seeds=0, check_determinism=False)
    assert report.equivalent, report.render()
    assert ("`target_net` held what `params` held, tensor for tensor, at step 3, and otherwise "
            "at the end: a load() that makes one from the other (a target network copied from "
            "the online one) resumes alike here whatever the checkpoint keeps of it; a resume "
            "point where they differ shows whether it comes back (resumecheck fuzz tries "
            "them)") in report.not_checked, report.not_checked
    elsewhere = verify(Target(factory=_Dqn, steps=5, resume_at=(4,)), drop="none",
                       noise_seeds=0, check_determinism=False)
    assert not elsewhere.equivalent
    assert not any("tensor for tensor" in line for line in elsewhere.not_checked)


def test_components_equal_at_the_end_too_are_said_where_they_were_apart():
    """Trial 787: a DQN whose target network is synced at every tenth step,
    its last step among them, resumed at a sync: a load that copied the target
    from the online network passed, and nothing was said (equal at the end
    too, the pair was not named); they were apart right after the next step."""
    report = verify(Target(factory=_Dqn, steps=6, resume_at=(3,)), drop="none",
                    noise_seeds=0, check_determinism=False)
    assert report.equivalent, report.render()
    assert ("`target_net` held what `params` held, tensor for tensor, at step 3, and otherwise "
            "after step 4: a load() that makes one") in " ".join(report.not_checked), \
        report.not_checked
