"""Small training programs used as test doubles.

Each is a few lines of deterministic training with exactly the behaviour a
test needs: no randomness (so an RNG ablation is a blind spot), a load that
forgets something, a load that nudges weights by one ULP, a step that fails.
"""

from __future__ import annotations

import random

import torch

from resumecheck import Attr, RNGState, StepOutput, Target

X = torch.linspace(-1, 1, 24).reshape(8, 3)
Y = X @ torch.tensor([[0.5], [-1.0], [2.0]])


class Linear:
    """Full-batch linear regression with SGD + momentum: no randomness at all."""

    def __init__(self, config: dict) -> None:
        torch.manual_seed(config.get("seed", 0))
        self.model = torch.nn.Linear(3, 1)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.05, momentum=0.9)
        self.step = 0
        self.mode = config.get("mode", "ok")

    def components(self):
        return {
            "params": self.model,
            "optimizer": self.opt,
            "rng": RNGState(),
            "global_step": Attr(self, "step"),
        }

    def train_step(self):
        if self.mode == "nan" and self.step == 2:
            return torch.tensor(float("nan"))
        if self.mode == "vector":
            return torch.ones(3)
        if self.mode == "none-loss":  # (trial 881: a wrapper's last loss, None after a restart)
            return StepOutput(loss=None)
        if self.mode == "named-samples":  # (trial 191: tasks and indices, mixed)
            return StepOutput(loss=1.0, samples=[("reg", [1, 2]), ("cls", [3, 4])])
        if self.mode == "boom-after-resume" and self.resumed and self.step >= 5:
            raise RuntimeError("boom")
        if self.mode == "nan-after-resume" and self.resumed:
            return torch.tensor(float("inf"))
        loss = torch.nn.functional.mse_loss(self.model(X), Y)
        loss.backward()
        self.opt.step()
        self.opt.zero_grad()
        self.step += 1
        return StepOutput(loss=loss.detach(), samples=torch.arange(8))

    resumed = False


class OwnCheckpoint(Linear):
    """Linear with its own save/load; ``mode`` picks the flaw in load."""

    def save(self, path: str) -> None:
        if self.mode == "save-raises":
            raise OSError("disk full")
        if self.mode == "saves-nothing":  # (written elsewhere: a path of its own)
            return
        if self.mode == "beside":  # (a file of its own name beside the path, as a user's save may)
            path += ".pt"
        torch.save({"model": self.model.state_dict(), "opt": self.opt.state_dict(),
                    "step": self.step}, path)
        if self.mode == "truncated":  # the disk filled up mid-write
            with open(path, "r+b") as fh:
                fh.truncate(100)

    def load(self, path: str) -> None:
        if self.mode == "load-raises":
            raise KeyError("model.weight")
        if self.mode == "beside":  # read back, then a load_state_dict that refuses it
            torch.load(path + ".pt", weights_only=True)
            raise ValueError("loaded state dict has a different number of parameter groups")
        ckpt = torch.load(path, weights_only=True)
        self.model.load_state_dict(ckpt["model"])
        self.opt.load_state_dict(ckpt["opt"])
        self.step = ckpt["step"]
        self.resumed = True
        if self.mode == "ulp":
            with torch.no_grad():  # one unit in the last place: close, not identical
                self.model.weight.copy_(torch.nextafter(self.model.weight, torch.tensor(9.0)))
        if self.mode == "lr-blows-up":  # a learning rate overridden at resume: it diverges
            for group in self.opt.param_groups:
                group["lr"] = 1e6


class Noisy:
    """Draws from torch's global stream every step and never seeds on build."""

    def __init__(self, config: dict) -> None:
        g = torch.Generator().manual_seed(config.get("seed", 0))
        self.w = torch.nn.Parameter(torch.randn(3, 1, generator=g))
        self.opt = torch.optim.SGD([self.w], lr=0.1)

    def components(self):
        return {"params": _Params(self), "optimizer": self.opt, "rng": RNGState()}

    def train_step(self):
        noise = torch.randn(8, 3) * 0.1  # augmentation from the global stream
        loss = torch.nn.functional.mse_loss((X + noise) @ self.w, Y)
        loss.backward()
        self.opt.step()
        self.opt.zero_grad()
        _ = random.random()
        return loss.detach()


class _Params:
    def __init__(self, owner: Noisy) -> None:
        self.owner = owner

    def state_dict(self):
        return {"w": self.owner.w.detach().clone()}

    def load_state_dict(self, state):
        with torch.no_grad():
            self.owner.w.copy_(state["w"])


class NoisyForgetsRNG(Noisy):
    """Its own checkpoint saves the weights and the optimizer, not the streams."""

    def save(self, path: str) -> None:
        torch.save({"w": self.w.detach(), "opt": self.opt.state_dict()}, path)

    def load(self, path: str) -> None:
        ckpt = torch.load(path, weights_only=True)
        with torch.no_grad():
            self.w.copy_(ckpt["w"])
        self.opt.load_state_dict(ckpt["opt"])


class EpochReadAtBoundary(Linear):
    """Shuffled mini-batches; the epoch counter is read only when an epoch starts.

    The current epoch's order travels with the position (data_cursor); the
    program's own checkpoint forgets the epoch counter (sampler_epoch).
    """

    steps_per_epoch = 4

    def __init__(self, config: dict) -> None:
        super().__init__(config)
        self.epoch, self.pos, self.order = 0, 0, self._order(0)

    @staticmethod
    def _order(epoch: int) -> list:
        return torch.randperm(8, generator=torch.Generator().manual_seed(epoch)).tolist()

    def components(self):
        return {**super().components(), "sampler_epoch": Attr(self, "epoch"),
                "data_cursor": Attr(self, "pos"), "order": Attr(self, "order")}

    def train_step(self):
        if self.pos == 8:  # a new epoch: the only place the counter is read
            self.epoch, self.pos = self.epoch + 1, 0
            self.order = self._order(self.epoch)
        idx = torch.tensor(self.order[self.pos:self.pos + 2])
        self.pos += 2
        loss = torch.nn.functional.mse_loss(self.model(X[idx]), Y[idx])
        loss.backward()
        self.opt.step()
        self.opt.zero_grad()
        self.step += 1
        return StepOutput(loss=loss.detach(), samples=idx)

    def save(self, path: str) -> None:
        torch.save({"model": self.model.state_dict(), "opt": self.opt.state_dict(),
                    "step": self.step, "pos": self.pos, "order": self.order}, path)

    def load(self, path: str) -> None:
        ckpt = torch.load(path, weights_only=True)
        self.model.load_state_dict(ckpt["model"])
        self.opt.load_state_dict(ckpt["opt"])
        self.step, self.pos, self.order = ckpt["step"], ckpt["pos"], ckpt["order"]


class _Rows(torch.utils.data.Dataset):
    """X's rows; a row read after a resume raises (in the loader's worker)."""

    def __init__(self) -> None:
        self.resumed = False

    def __len__(self) -> int:
        return len(X)

    def __getitem__(self, i: int):
        if self.resumed:
            raise CorruptRow(f"row {i} is corrupt\n(shard 3 of 8)")
        return X[i].tolist(), Y[i].tolist()


class CorruptRow(ValueError):
    """A program's own exception class (its module's name comes with it)."""


def _as_lists(rows: list) -> list:
    """(plain lists from the worker: no tensor crosses processes)"""
    return rows


class WorkerRaises(OwnCheckpoint):
    """OwnCheckpoint whose batches come from a DataLoader with one worker
    process, started at the first step (after the load, in a resumed run);
    after a resume, the worker raises on the first row it reads. (One
    iterator for the run: an iterator a step, each forking a worker while
    the last one's threads end, hung now and then.)"""

    def __init__(self, config: dict) -> None:
        super().__init__(config)
        self.rows = _Rows()
        self.loader = torch.utils.data.DataLoader(self.rows, batch_size=8, num_workers=1,
                                                  sampler=list(range(8)) * 8,
                                                  collate_fn=_as_lists)
        self.batches = None

    def load(self, path: str) -> None:
        super().load(path)
        self.rows.resumed = True

    def train_step(self):
        if self.batches is None:
            self.batches = iter(self.loader)
        rows = next(self.batches)
        x, y = torch.tensor([r[0] for r in rows]), torch.tensor([r[1] for r in rows])
        loss = torch.nn.functional.mse_loss(self.model(x), y)
        loss.backward()
        self.opt.step()
        self.opt.zero_grad()
        self.step += 1
        return StepOutput(loss=loss.detach(), samples=torch.arange(8))


def linear(config: dict) -> Linear:
    return Linear(config)


def own(config: dict) -> OwnCheckpoint:
    return OwnCheckpoint(config)


LINEAR = Target(factory=linear, steps=8, resume_at=(4,), spec="tests.programs:LINEAR")
NOISY = Target(factory=Noisy, steps=8, resume_at=(4,), spec="tests.programs:NOISY")
NOISY_FORGETS_RNG = Target(
    factory=NoisyForgetsRNG, steps=8, resume_at=(4,), spec="tests.programs:NOISY_FORGETS_RNG"
)


def own_target(mode: str) -> Target:
    return Target(factory=own, run_config={"mode": mode}, restart_config="run",
                  steps=8, resume_at=(4,))


OWN_SAVE_RAISES = own_target("save-raises")
OWN_LOAD_RAISES = own_target("load-raises")
OWN_TRUNCATED = own_target("truncated")
OWN_NAN_AFTER_RESUME = own_target("nan-after-resume")
OWN_LR_BLOWS_UP = own_target("lr-blows-up")
OWN_SAVES_NOTHING = own_target("saves-nothing")
OWN_SAVES_BESIDE = own_target("beside")
WORKER_RAISES = Target(factory=WorkerRaises, restart_config="run", steps=4, resume_at=(2,))
NAN_LOSS = Target(factory=linear, run_config={"mode": "nan"}, steps=6)
VECTOR_LOSS = Target(factory=linear, run_config={"mode": "vector"}, steps=6)
NAMED_SAMPLES = Target(factory=linear, run_config={"mode": "named-samples"}, steps=6)
NONE_LOSS = Target(factory=linear, run_config={"mode": "none-loss"}, steps=6)


def not_a_program(config: dict) -> object:
    return object()


def returns_its_class(config: dict) -> object:  # (a trial: `make(name)` gave its class)
    return Linear


def factory_raises(config: dict) -> object:
    raise RuntimeError("no GPU found")


def build_from_args(args: object) -> object:  # (trial 166: a script's build(args))
    return Linear(args.lr)  # type: ignore[attr-defined]


EPOCH_READ_AT_BOUNDARY = Target(factory=EpochReadAtBoundary, steps=7, resume_at=(5,),
                                spec="tests.programs:EPOCH_READ_AT_BOUNDARY")
NOT_A_FACTORY = 42


class Settings:  # (a settings class, no program: trial 160 pointed the target at one)
    lr = 0.1


class DeclaredTwice(Linear):
    """The model declared under two names (a trial: each was called a blind spot)."""

    def components(self):
        return {**super().components(), "model": self.model}


class SubmoduleBeside(Linear):
    """A model and a part of it, each declared."""

    def __init__(self, config: dict) -> None:
        super().__init__(config)
        self.model = torch.nn.Sequential(torch.nn.Linear(3, 1))

    def components(self):
        return {**super().components(), "head": self.model[0]}


class StreamsTwice(Linear):
    """An RNGState for a generator of its own, declared with the global streams it
    holds by default beside 'rng' (a trial: dropping 'rng' was a blind spot)."""

    def __init__(self, config: dict) -> None:
        super().__init__(config)
        self.aug = torch.Generator().manual_seed(3)

    def components(self):
        return {**super().components(), "aug_rng": RNGState({"aug": self.aug})}


DECLARED_TWICE = Target(factory=DeclaredTwice, steps=6, resume_at=(3,))
STREAMS_TWICE = Target(factory=StreamsTwice, steps=6, resume_at=(3,))
SUBMODULE_BESIDE = Target(factory=SubmoduleBeside, steps=6, resume_at=(3,))


class CyclingScale(Linear):
    """A loss scale that grows every third step and starts over, as a loss
    scaler's growth tracker does: after steps 3, 6, ... the tracker is back at
    0, the value a fresh build starts with."""

    def __init__(self, config: dict) -> None:
        super().__init__(config)
        self.tracker = 0

    def components(self):
        return {**super().components(), "scaler": Attr(self, "tracker")}

    def train_step(self):
        for group in self.opt.param_groups:
            group["lr"] = 0.05 * (1 + self.tracker)
        out = super().train_step()
        self.tracker = (self.tracker + 1) % 3
        return out


CYCLING_SCALE = Target(factory=CyclingScale, steps=8, resume_at=(6,))


class LateDecay(OwnCheckpoint):
    """A learning rate that decays from step 6 on, by a counter of its own
    (``decays``) that the checkpoint forgets: lost at a restore before step 6 it
    changes nothing there; lost again later, it does."""

    def __init__(self, config: dict) -> None:
        super().__init__(config)
        self.decays = 0

    def components(self):
        return {**super().components(), "decay_counter": Attr(self, "decays")}

    def train_step(self):
        self.decays += 1
        for group in self.opt.param_groups:
            group["lr"] = 0.05 * (0.5 if self.decays > 6 else 1.0)
        return super().train_step()


LATE_DECAY = Target(factory=LateDecay, steps=10, resume_at=(2, 5))


class EarlyEval(Linear):
    """Noisy inputs from torch's global stream, and an evaluation every third
    step that draws its batch from it too; the checkpoint keeps the stream, but
    the load puts the step counter one ahead, so the restart's first step
    ends with an evaluation where the uninterrupted run does not (a trial: those draws read
    as a second bug beside the confirmed step counter)."""

    def train_step(self):
        noisy = X + 0.01 * torch.randn(8, 3)
        loss = torch.nn.functional.mse_loss(self.model(noisy), Y)
        loss.backward()
        self.opt.step()
        self.opt.zero_grad()
        self.step += 1
        if self.step % 3 == 2:
            with torch.no_grad():
                batch = torch.randint(0, 8, (16,))
                self.val = torch.nn.functional.mse_loss(self.model(X[batch]), Y[batch]).item()
        return loss.detach()

    def save(self, path: str) -> None:
        torch.save({"model": self.model.state_dict(), "opt": self.opt.state_dict(),
                    "step": self.step, "rng": torch.get_rng_state()}, path)

    def load(self, path: str) -> None:
        ckpt = torch.load(path, weights_only=True)
        self.model.load_state_dict(ckpt["model"])
        self.opt.load_state_dict(ckpt["opt"])
        torch.set_rng_state(ckpt["rng"])
        self.step = ckpt["step"] + 1


EARLY_EVAL = Target(factory=EarlyEval, steps=10, resume_at=(6,))


class BestSoFar(Linear):
    """Settings kept in a declared ``config`` (equal to the factory's defaults
    unless the run gives others, as a user's target often does) and a best loss
    that an evaluation every third step sets again (the first evaluation after
    a restart beats a lost one). Neither is read by a step: both blind spots,
    for different reasons (a trial was told to choose another resume point for
    both)."""

    def __init__(self, config: dict) -> None:
        super().__init__(config)
        self.settings = {"lr": config.get("lr", 0.05)}
        self.best = 1e9

    def components(self):
        return {**super().components(), "config": Attr(self, "settings"),
                "best": Attr(self, "best")}

    def train_step(self):
        out = super().train_step()
        if self.step % 3 == 0:
            self.best = min(self.best, out.loss.item())
        return out


BEST_SO_FAR = Target(factory=BestSoFar, steps=8, resume_at=(4,))

class EvalByStep(BestSoFar):
    """BestSoFar whose best loss is declared before its step count: the
    evaluation every third step reads the count, so a restart that loses it
    evaluates at other steps, and ends with another best (a trial: `drop
    global_step` named only that best, by the order the program declared)."""

    def components(self):
        return {"best": Attr(self, "best"), **Linear.components(self)}


EVAL_BY_STEP = Target(factory=EvalByStep, steps=8, resume_at=(4,))
BEST_SO_FAR_OTHER_LR = Target(factory=BestSoFar, steps=8, resume_at=(4,),
                              run_config={"lr": 0.01})


class SetOrdered(Linear):
    """An optimizer over twelve parameters listed by iterating a set of their
    names: an order that follows PYTHONHASHSEED (a twelve-name set comes out in
    the model's order about once in 479 million seeds); ``SORTED`` lists the
    same set sorted."""

    def __init__(self, config: dict) -> None:
        super().__init__(config)
        self.model = torch.nn.Sequential(*[torch.nn.Linear(3, 3) for _ in range(5)],
                                         torch.nn.Linear(3, 1))
        by_name = dict(self.model.named_parameters())
        names = set(by_name)
        order = sorted(names) if config.get("sorted") else list(names)
        self.opt = torch.optim.SGD([by_name[n] for n in order], lr=0.05, momentum=0.9)


SET_ORDERED = Target(factory=SetOrdered, steps=6, resume_at=(3,), spec="tests.programs:SET_ORDERED")
SET_SORTED = Target(factory=SetOrdered, steps=6, resume_at=(3,), run_config={"sorted": True},
                    spec="tests.programs:SET_SORTED")


class SnapshotPosition(Linear):
    """Reads one row per step at a position it keeps, and saves the position
    it snapshotted as the last step ended (a prefetching loader's pattern). Its
    load() sets the position; ``mode`` "forgets-snapshot" leaves the snapshot
    as built, so a save right after a load writes position 0: every step after
    one restart matches, a restart from that save replays the data."""

    def __init__(self, config: dict) -> None:
        super().__init__(config)
        self.pos = self.snapshot = 0

    def components(self):
        return {**super().components(), "data_cursor": Attr(self, "pos")}

    def train_step(self):
        row = self.pos % 8
        loss = torch.nn.functional.mse_loss(self.model(X[row:row + 1]), Y[row:row + 1])
        loss.backward()
        self.opt.step()
        self.opt.zero_grad()
        self.step += 1
        self.pos += 1
        self.snapshot = self.pos
        return StepOutput(loss=loss.detach(), samples=torch.tensor([row]))

    def save(self, path: str) -> None:
        torch.save({"model": self.model.state_dict(), "opt": self.opt.state_dict(),
                    "step": self.step, "pos": self.snapshot}, path)

    def load(self, path: str) -> None:
        ckpt = torch.load(path, weights_only=True)
        self.model.load_state_dict(ckpt["model"])
        self.opt.load_state_dict(ckpt["opt"])
        self.step, self.pos = ckpt["step"], ckpt["pos"]
        if self.mode != "forgets-snapshot":
            self.snapshot = ckpt["pos"]


SNAPSHOT = Target(factory=SnapshotPosition, steps=8, resume_at=(4,))
SNAPSHOT_FORGOTTEN = Target(factory=SnapshotPosition, steps=8, resume_at=(4,),
                            run_config={"mode": "forgets-snapshot"}, restart_config="run")


class _Copied:
    """Tensors restored in place (a component of the program's own, no module)."""

    def __init__(self, tensors: list) -> None:
        self.tensors = tensors

    def state_dict(self) -> dict:
        return {str(i): t.detach().clone() for i, t in enumerate(self.tensors)}

    def load_state_dict(self, state: dict) -> None:
        with torch.no_grad():
            for i, t in enumerate(self.tensors):
                t.copy_(state[str(i)])


class TwoOptimizers:
    """Two bare weight tensors (no module), each stepped by its own optimizer,
    declared under names of the program's own (a GAN's critic and generator:
    a trial read "gradient of group0.param4", and could not tell whose)."""

    def __init__(self, config: dict) -> None:
        torch.manual_seed(0)
        self.a = torch.nn.Parameter(torch.randn(3, 1))
        self.b = torch.nn.Parameter(torch.randn(3, 1))
        self.opt_a = torch.optim.Adam([self.a], lr=0.1)
        self.opt_b = torch.optim.Adam([self.b], lr=0.1)

    def components(self) -> dict:
        return {"weights": _Copied([self.a, self.b]), "opt_a": self.opt_a, "opt_b": self.opt_b}

    def train_step(self) -> torch.Tensor:
        loss = ((X @ self.a - Y) ** 2).mean() + ((X @ self.b + Y) ** 2).mean()
        self.opt_a.zero_grad()
        self.opt_b.zero_grad()
        loss.backward()
        self.opt_a.step()
        self.opt_b.step()
        return loss


TWO_OPTIMIZERS = Target(factory=TwoOptimizers, steps=6, resume_at=(3,))


class _Restored:
    """Tells its program that the engine restored it (a component of its own)."""

    def __init__(self, program: "WarnsWhenItsCountIsLost") -> None:
        self.program = program

    def state_dict(self) -> dict:
        return {"restorable": True}

    def load_state_dict(self, state: dict) -> None:
        self.program.restored = True


class WarnsWhenItsCountIsLost(Linear):
    """Warns (a library's UserWarning, as torch's scheduler-order one) where a
    restore leaves its step count at 0: only a run that drops it does."""

    def __init__(self, config: dict) -> None:
        super().__init__(config)
        self.restored = False

    def components(self):
        return {**super().components(), "marker": _Restored(self)}

    def train_step(self):
        if self.restored and self.step == 0:
            import warnings

            warnings.warn("the step count began again", UserWarning, stacklevel=1)
        return super().train_step()


WARNS_WHEN_ITS_COUNT_IS_LOST = Target(factory=WarnsWhenItsCountIsLost, steps=6, resume_at=(3,),
                                      spec="tests.programs:WARNS_WHEN_ITS_COUNT_IS_LOST")


class WarnsInEveryRun(Linear):
    """Warns at the first step each interpreter runs (trial 537: torch's
    scheduler-order warning, given once in every segment's interpreter)."""

    def train_step(self):
        import warnings

        warnings.warn("a warning every run gives", UserWarning, stacklevel=1)
        return super().train_step()


WARNS_IN_EVERY_RUN = Target(factory=WarnsInEveryRun, steps=6, resume_at=(3,),
                            spec="tests.programs:WARNS_IN_EVERY_RUN")
