"""A blind spot that ends otherwise says why no step read it, truly (trial
167: a GradScaler beside bfloat16 autocast, whose growth tracker the
uninterrupted run counted from 5 to 16, read "the uninterrupted run did not
change it after there")."""

from __future__ import annotations

import pytest

from resumecheck import verify

pytestmark = pytest.mark.e2e


def test_a_scaler_that_never_scales_ends_otherwise_in_a_private_entry_and_says_so():
    report = verify("fixtures.trust.scaler_at_full_precision:TARGET", drop=["scaler"],
                    noise_seeds=0)
    assert report.equivalent
    [dropped] = [r for r in report.runs if r.dropped == ["scaler"]]
    assert dropped.verdict == "identical" and dropped.blind_spot
    assert ("the run ends with scaler otherwise than the uninterrupted run (only private "
            "entries of it differ, `_growth_tracker`: state its class keeps for itself, which "
            "changed no step here)") in dropped.explanation
    assert "did not change it after there" not in dropped.explanation


def test_one_the_uninterrupted_run_left_alone_after_the_resume_point_still_says_that():
    from tests.test_trust_undeclared import NUMBERS  # (a best loss after its last evaluation)

    report = verify(NUMBERS + "DECLARED", steps=9, resume_at=8, drop="best", noise_seeds=0)
    [dropped] = [r for r in report.runs if r.dropped == ["best"]]
    assert dropped.blind_spot, dropped.explanation
    assert ("the run ends with best otherwise than the uninterrupted run (it changed no step "
            "after the restart here, and the uninterrupted run did not change it after there)"
            in dropped.explanation), dropped.explanation


class _State:
    def __init__(self) -> None:
        self.epoch, self.batch = 0, 0


class _Cursor:
    """The position, read from where the program keeps it (trial 167's)."""

    def __init__(self, trainer: _ReadsItsState) -> None:
        self.trainer = trainer

    def state_dict(self) -> dict:
        return {"epoch": self.trainer.state.epoch, "batch": self.trainer.state.batch}

    def load_state_dict(self, state: dict) -> None:
        self.trainer.state.epoch, self.trainer.state.batch = state["epoch"], state["batch"]


class _ReadsItsState:
    def __init__(self, settings: dict) -> None:
        import torch

        torch.manual_seed(0)
        self.x, self.y = torch.randn(12, 3), torch.randn(12, 1)
        self.model = torch.nn.Linear(3, 1)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.state = _State()

    def components(self) -> dict:
        return {"params": self.model, "optimizer": self.optimizer, "data_cursor": _Cursor(self)}

    def train_step(self):
        import torch

        from resumecheck import StepOutput

        at = self.state.batch * 4
        loss = torch.nn.functional.mse_loss(self.model(self.x[at:at + 4]), self.y[at:at + 4])
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        self.state.batch += 1
        if self.state.batch == 3:
            self.state.epoch, self.state.batch = self.state.epoch + 1, 0
        samples = torch.arange(at, at + 4) + 12 * self.state.epoch
        return StepOutput(loss=loss.item(), samples=samples)


def test_a_number_a_declared_state_dict_returns_is_not_said_held_by_none_where_unseen():
    """Trial 167: an epoch its declared position's state_dict() returns, read
    from where the program keeps it, and as built at the resume point (epoch
    0), read "held by no declared component: declare it as a component".
    Trial 196: a hedge, "whether a declared component's state_dict() returns
    it cannot be seen", read as "you forgot to save epoch": the position keeps
    the program itself, and returns the epoch under its name, equal, so it is
    compared there, and no line names it."""
    from resumecheck import Target

    report = verify(Target(factory=_ReadsItsState, steps=8, resume_at=(2,)), drop="none",
                    noise_seeds=0)
    assert report.equivalent
    assert not [w for w in report.undeclared if w.startswith("state.epoch ")], report.undeclared


class _BestK:
    """A checkpoint callback's best two scores by step (trial 173's), returned
    by its state_dict() with the step keys made strings, as a JSON-minded
    team writes it."""

    def __init__(self) -> None:
        self.best_k: dict[int, float] = {}

    def update(self, step: int, score: float) -> None:
        self.best_k[step] = score
        if len(self.best_k) > 2:
            del self.best_k[max(self.best_k, key=self.best_k.__getitem__)]

    def state_dict(self) -> dict:
        return {"best_k": {str(k): v for k, v in self.best_k.items()}}

    def load_state_dict(self, state: dict) -> None:
        self.best_k = {int(k): v for k, v in state["best_k"].items()}


class _KeepsBestK(_ReadsItsState):
    def __init__(self, settings: dict) -> None:
        super().__init__(settings)
        self.ckpt = _BestK()
        self.step = 0

    def components(self) -> dict:
        return {**super().components(), "ckpt": self.ckpt,
                "global_step": __import__("resumecheck").Attr(self, "step")}

    def train_step(self):
        out = super().train_step()
        self.step += 1
        if self.step % 3 == 0:
            self.ckpt.update(self.step, float(out.loss))
        return out


def test_a_dict_field_its_state_dict_returns_with_string_keys_is_not_named():
    """Trial 173: a correct callback's best-k dict, empty at the resume point,
    read "not compared: ckpt.best_k ... its state_dict() leaves it out"."""
    from resumecheck import Target

    report = verify(Target(factory=_KeepsBestK, steps=8, resume_at=(2,)), drop="none",
                    noise_seeds=0)
    assert report.equivalent
    assert not any(u.startswith("ckpt.best_k") for u in report.undeclared), report.undeclared


class _CachesDraws:
    """A cache of drawn tuples, filled lazily and never checkpointed (trial 178's
    neighbour cache): a restart finds it empty and draws again."""

    def __init__(self, settings: dict) -> None:
        import torch

        torch.manual_seed(0)
        self.model = torch.nn.Linear(2, 1)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.cache: dict[int, tuple] = {}
        self.step = 0

    def components(self) -> dict:
        from resumecheck import Attr, RNGState

        return {"params": self.model, "optimizer": self.opt,
                "rng": RNGState(streams=["torch"]), "global_step": Attr(self, "step")}

    def train_step(self):
        import torch

        from resumecheck import StepOutput

        key = self.step % 3
        if key not in self.cache:
            self.cache[key] = (torch.rand(4, 2),)
        loss = self.model(self.cache[key][0]).pow(2).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.step += 1
        return StepOutput(loss=loss.item(), samples=torch.tensor([key]))

    def save(self, path: str) -> None:
        import torch

        torch.save({"model": self.model.state_dict(), "opt": self.opt.state_dict(),
                    "rng": torch.get_rng_state(), "step": self.step}, path)

    def load(self, path: str) -> None:
        import torch

        state = torch.load(path)
        self.model.load_state_dict(state["model"])
        self.opt.load_state_dict(state["opt"])
        torch.set_rng_state(state["rng"])
        self.step = state["step"]


def test_a_cache_entry_the_load_lost_where_the_next_step_departs_may_be_lost_by_it():
    """Trial 178: the entry whose loss made the resume depart at the step right
    after the load read "ends with it otherwise, but that says nothing of your
    checkpoint"."""
    from resumecheck import Target

    report = verify(Target(factory=_CachesDraws, steps=8, resume_at=(3,)), drop="none",
                    noise_seeds=0)
    assert not report.equivalent and report.full_resume.first_divergent_step == 4
    [line] = [u for u in report.undeclared if u.startswith("cache[")]
    assert "says nothing of your checkpoint" not in line, line
    assert ("held it otherwise right after your load() at step 3, and departed from the "
            "uninterrupted run at the next step: your checkpoint may lose it") in line, line


class _CursorByGetter(_Cursor):
    """Trial 207's position: it reads its program through a getter, so that a
    load() that makes the state anew is read too."""

    def __init__(self, get) -> None:
        self.get = get

    @property
    def trainer(self):
        return self.get()


class _ReadsItsStateByGetter(_ReadsItsState):
    def components(self) -> dict:
        return {**super().components(), "data_cursor": _CursorByGetter(lambda: self)}


def test_a_number_a_declared_getter_component_returns_is_not_named():
    """Trial 207: a position holding `lambda: self.state` returned its epoch
    under its name, and the epoch was still named: `whether a declared
    component's state_dict() returns it cannot be seen`. What a function among
    the component's fields keeps in its closure is followed too."""
    from resumecheck import Target

    report = verify(Target(factory=_ReadsItsStateByGetter, steps=8, resume_at=(2,)),
                    drop="none", noise_seeds=0)
    assert report.equivalent
    assert not [w for w in report.undeclared if w.startswith("state.epoch ")], report.undeclared


class _Env:
    def __init__(self) -> None:
        self.pos, self.t = [0, 0], 0


class _EnvState:
    """Trial 213's: an environment's position, a list, returned equal."""

    def __init__(self, trainer) -> None:
        self.trainer = trainer

    def state_dict(self) -> dict:
        return {"pos": list(self.trainer.state.env.pos), "t": self.trainer.state.env.t}

    def load_state_dict(self, state: dict) -> None:
        self.trainer.state.env.pos, self.trainer.state.env.t = list(state["pos"]), state["t"]


class _WalksAnEnv(_ReadsItsState):
    def __init__(self, settings: dict) -> None:
        super().__init__(settings)
        self.state.env = _Env()

    def components(self) -> dict:
        return {**super().components(), "env": _EnvState(self)}

    def train_step(self):
        out = super().train_step()
        env = self.state.env
        env.t += 1
        env.pos = [0, 0] if env.t % 4 == 0 else [env.pos[0] + 1, env.pos[1]]
        return out


def test_a_list_a_declared_component_returns_equal_is_not_named():
    """Trial 213: an environment's position, a list its declared component
    returns under its name, read `not compared: state.env.pos (list: 2
    numbers ...; if none does, declare it as a component ...)` in fuzz's
    look at a resume point where it was as built."""
    from resumecheck import Target

    report = verify(Target(factory=_WalksAnEnv, steps=8, resume_at=(4,)), drop="none",
                    noise_seeds=0)
    assert report.equivalent
    assert not [w for w in report.undeclared if w.startswith("state.env.")], report.undeclared


class _Loaders:
    """Trial 217's position of two loaders, each's state nested under its name."""

    def __init__(self, trainer) -> None:
        self.trainer = trainer

    def state_dict(self) -> dict:
        s = self.trainer.state
        return {"lab": {"epoch": s.lab.epoch}, "unl": {"epoch": s.unl.epoch}}

    def load_state_dict(self, state: dict) -> None:
        s = self.trainer.state
        s.lab.epoch, s.unl.epoch = state["lab"]["epoch"], state["unl"]["epoch"]


class _TwoLoaders(_ReadsItsState):
    def __init__(self, settings: dict) -> None:
        super().__init__(settings)
        self.state.lab, self.state.unl = _State(), _State()

    def components(self) -> dict:
        return {**super().components(), "loaders": _Loaders(self)}

    def train_step(self):
        out = super().train_step()
        self.state.unl.epoch = self.state.epoch * 2
        return out


def test_a_number_a_declared_component_returns_nested_under_its_owners_name_is_not_named():
    """Trial 217: `state.unl.epoch`, returned as `{'unl': {'epoch': ...}}` by a
    position of two loaders, read `not compared ... declare it as a component`."""
    from resumecheck import Target

    report = verify(Target(factory=_TwoLoaders, steps=8, resume_at=(2,)), drop="none",
                    noise_seeds=0)
    assert report.equivalent
    assert not [w for w in report.undeclared if w.startswith("state.unl.")], report.undeclared


def test_a_number_as_built_beside_a_declared_field_of_a_like_name_says_so():
    """Two trials: a program's epochs by task, and its epoch's loss sum, as built
    at the resume point, beside a declared position that returns `a.epoch` and
    `loss_sum`: "if none does, declare it" read as the checkpoint missing them.
    The hedge names the fields of a like name that the report lists as built too."""
    from resumecheck.undeclared import alike_named

    built = {"data_cursor": "of `data_cursor`, `a.epoch` (0 there, 1 at the end); `b.epoch` "
                            "(0 there, 2 at the end); `loss_sum` (0.0 there, 1.5 at the end) are "
                            "at step 8 as the restore without `data_cursor` leaves them ..."}
    assert alike_named("state.epoch", built) == (
        " (`data_cursor` returns `a.epoch`, `b.epoch`, of a like name, as built there too: if "
        "that is this value, it holds it)")
    assert "`data_cursor` returns `loss_sum`, of a like name" in alike_named(
        "state.epoch_loss_sum", built)
    assert alike_named("state.level", built) == ""
    # (a trial's `batch_in_epoch` beside its position's `batch`, where nothing else is like)
    assert alike_named("state.batch_in_epoch", {"data_cursor": "of `data_cursor`, `batch` (0 "
                                                               "there, 1 at the end) is ..."}) \
        == (" (`data_cursor` returns `batch`, of a like name, as built there too: if that is "
            "this value, it holds it)")
    assert alike_named("state.batch_in_epoch", {"c": "of `c`, `batch_size` (8 there) ..."}) == ""


def test_without_ablations_the_hedge_names_the_fields_the_runs_build_made_too():
    """A trial's `--drop none` check named no `batch` of its position beside
    its loop's `batch_in_epoch`: the fields as built came from ablations only."""
    report = verify("fixtures.trust.reseeded_by_position:TARGET", resume_at=[4], drop="none",
                    noise_seeds=0)
    [line] = [u for u in report.undeclared if u.startswith("batch (")]
    assert "(`data_cursor` returns `batch`, of a like name, as built there too: if that is " \
        "this value, it holds it)" in line, line
    # (trial 374: the test's row said it unchecked, without the hedge)
    from resumecheck.pytest_plugin import _summary_row

    row = _summary_row({"nodeid": "t.py::t", "target": "t", "report": report.to_json()})
    assert ("not compared, as built at the resume point (one where the run has changed it "
            "shows it): batch (perhaps compared as `data_cursor`'s `batch`)") in row, row

