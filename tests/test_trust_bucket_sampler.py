"""A position of the program's own whose state_dict() keeps its generator
after the epoch's shuffle (trial 190): the full resume departs on it, and no
line says that a checkpoint that loses its fields resumes alike at the resume
point; its correct twin is told so (fixtures/trust/bucket_sampler.py)."""

from __future__ import annotations

from resumecheck import verify

SPEC = "fixtures.trust.bucket_sampler:"
QUICK = {"noise_seeds": 0, "check_determinism": False}


def test_the_fields_of_a_position_the_full_resume_departs_on_are_not_said_to_resume_alike():
    lost = verify(SPEC + "SAVES_AFTER_SHUFFLE", **QUICK)
    assert not lost.equivalent
    assert [f.component for f in lost.full_resume.diagnosis] == ["data_cursor"]
    assert not any(line.startswith("of `data_cursor`") for line in lost.not_checked), \
        lost.not_checked
    kept = verify(SPEC + "CORRECT", **QUICK)
    assert kept.equivalent
    [said] = [line for line in kept.not_checked if line.startswith("of `data_cursor`")]
    assert "are at step 2 as the restore without `data_cursor` leaves them" in said
    # (trial 190 read "a tensor of 5056 values there, a tensor of 5056 values at the end"
    # as alike: worded as a build's line words it)
    assert "`start` (a tensor of 5056 values there, other values at the end)" in said


class _Shuffled(__import__("torch").utils.data.Sampler):
    """A sampler of the program's own whose position its state_dict() keeps."""

    def __init__(self, n: int) -> None:
        import torch

        self.n, self.pos = n, 0
        self.generator = torch.Generator().manual_seed(0)
        self.order = torch.randperm(n, generator=self.generator).tolist()

    def __iter__(self):
        while True:
            if self.pos == self.n:
                self.pos = 0
            self.pos += 1
            yield self.order[self.pos - 1]

    def state_dict(self) -> dict:
        return {"pos": self.pos}

    def load_state_dict(self, state: dict) -> None:
        self.pos = state["pos"]


class _ReadsThroughIter:
    """Keeps ``iter(sampler)``, a generator of the sampler's own ``__iter__``."""

    def __init__(self, settings: dict) -> None:
        import torch

        torch.manual_seed(0)
        self.x, self.y = torch.randn(6, 3), torch.randn(6, 1)
        self.model = torch.nn.Linear(3, 1)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.sampler = _Shuffled(6)
        self.batches = iter(self.sampler)

    def components(self) -> dict:
        return {"params": self.model, "optimizer": self.opt, "data_cursor": self.sampler}

    def train_step(self):
        import torch

        from resumecheck import StepOutput

        i = next(self.batches)
        loss = torch.nn.functional.mse_loss(self.model(self.x[i]), self.y[i])
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return StepOutput(loss=loss.item(), samples=[i])


def test_a_generator_of_a_samplers_own_iter_is_not_named():
    """Trial 190: `state.batches`, iter() of a bucket sampler whose position its
    state_dict() keeps, read "kept where no checkpoint of yours holds it"."""
    from resumecheck import Target

    report = verify(Target(factory=_ReadsThroughIter, steps=8, resume_at=(3,)), drop="none",
                    **QUICK)
    assert report.equivalent and report.undeclared == [], report.undeclared
