"""Gradients are copied only where the judging may read them, and the
figures stay what copying every gradient gives.

The tracer's optimizer pre-hook digests every gradient and copies one only
on a step whose tensors may be kept, and, in a resumed run, only when its
digest differs from the reference's. Two user-style programs whose gradients
change after the pre-hook saw them: one zeroes them in place at the end of
its step (``zero_grad(set_to_none=False)``), one has an optimizer that
scales them in place inside ``step()``. Their reports must equal, figure
for figure, the reports made when every gradient is copied.
"""

from __future__ import annotations

import torch

from resumecheck import RNGState, StepOutput, Target, trace, verify
from resumecheck.program import BuiltProgram

X = torch.linspace(-1, 1, 48).reshape(16, 3)
Y = (X @ torch.tensor([[0.5], [-1.0], [2.0]])).sin()


class HalvingSGD(torch.optim.SGD):
    """An optimizer that changes the gradients in place before it steps."""

    @torch.no_grad()
    def step(self, closure=None):  # type: ignore[no-untyped-def]
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.grad.mul_(0.5)
        return super().step(closure)


class Regression:
    """A small MLP with momentum; ``zero`` in place at the end of the step or
    ``halving`` gradients in the optimizer."""

    def __init__(self, config: dict) -> None:
        torch.manual_seed(config.get("seed", 0))
        self.model = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.Tanh(),
                                         torch.nn.Linear(8, 1))
        kind = HalvingSGD if config.get("mode") == "halving" else torch.optim.SGD
        self.opt = kind(self.model.parameters(), lr=0.05, momentum=0.9)
        self.mode = config.get("mode")

    def components(self):
        return {"params": self.model, "optimizer": self.opt, "rng": RNGState()}

    def train_step(self):
        if self.mode != "zero":
            self.opt.zero_grad()
        noisy = self.model(X + 0.01 * torch.randn_like(X))
        loss = torch.nn.functional.mse_loss(noisy, Y)
        loss.backward()
        self.opt.step()
        if self.mode == "zero":
            self.opt.zero_grad(set_to_none=False)  # the same gradient tensors, zeroed
        return StepOutput(loss=loss.detach(), samples=torch.arange(16))


def _report(mode: str):
    target = Target(factory=Regression, run_config={"mode": mode}, restart_config="run",
                    steps=8, resume_at=(4,))
    return verify(target, drop=["optimizer", "rng"], noise_seeds=0, check_determinism=False)


def _figures(report):
    return [(r.dropped, r.verdict, r.first_divergent_step, r.first_divergent_quantity,
             r.max_abs_diff, r.max_rel_diff, r.max_ulp_diff) for r in report.runs]


def _copy_every_gradient(monkeypatch):
    """The tracer as it was: a copy of every gradient of every step."""
    record = trace._OptimizerSteps._record

    def copying(self, optimizer, call):
        self._wants_copy = lambda key, value: True
        return record(self, optimizer, call)

    monkeypatch.setattr(trace._OptimizerSteps, "_record", copying)


def test_gradients_changed_in_place_after_the_pre_hook_give_the_same_figures(monkeypatch):
    for mode in ("zero", "halving"):
        fewer = _report(mode)
        diverged = [r for r in fewer.runs if r.verdict == "diverged"]
        assert diverged and all(r.max_abs_diff for r in diverged), mode
        # dropping rng: the noise differs from step 5, so do the gradients of
        # the kept steps, whose figures come from the copies
        assert [r.first_divergent_quantity for r in fewer.runs if r.dropped == ["rng"]] \
            == ["loss"], mode
        with monkeypatch.context() as m:
            _copy_every_gradient(m)
            every = _report(mode)
        assert _figures(fewer) == _figures(every), mode


def test_a_step_never_kept_copies_no_gradient_but_digests_each():
    built = BuiltProgram.wrap("regression", Regression({}))
    tracer = trace.Tracer(built, None)
    tracer.copy_grads_at = lambda step: step == 2
    for step in (1, 2):
        tracer.before_step(step)
        out = built.step(step)
        copies = tracer._steps.copies()
        record = tracer.after_step(step, out, False)
        grads = [k for k in record.digests if k.startswith("grad:")]
        assert len(grads) == 4
        assert sorted(copies) == ([] if step == 1 else sorted(grads))
    tracer.close()


def test_a_kept_gradient_is_the_one_its_digest_was_taken_from(tmp_path):
    from resumecheck.compare import digest

    for mode in ("zero", "halving"):
        built = BuiltProgram.wrap("regression", Regression({"mode": mode}))
        kept: dict = {}
        tracer = trace.Tracer(built, tmp_path, kept=kept)
        for step in (1, 2, 3):
            tracer.before_step(step)
            record = tracer.after_step(step, built.step(step), True)
            tensors = kept[f"step_{step}.pt"]
            grads = [k for k in record.digests if k.startswith("grad:")]
            assert len(grads) == 4 and all(k in tensors for k in grads)
            for key in grads:  # as the optimizer saw it, not as the step left it
                assert digest(tensors[key]) == record.digests[key], (mode, step, key)
        tracer.close()
