"""Two smaller mends from a trial's Lightning GAN (hand-built records and
states):

- a step where one of two declared optimizers did not step (its generator,
  stepped every second step by a counter the checkpoint lost) read "learning
  rate" and "a parameter group it stepped is not in this run's optimizers";
  it is the number of optimizer steps, and the one that did not step is
  named (``evidence.not_stepped``);
- a position component that returned its sampler's epoch nested, as
  ``loader.epoch``, beside an ``epoch`` of its own, was said to return "an
  `epoch`, but not this number" (``undeclared._named_alike``)."""

from __future__ import annotations

from types import SimpleNamespace

from resumecheck.evidence import _rates, not_stepped
from resumecheck.trace import StepRecord
from resumecheck.undeclared import _named_alike
from resumecheck.verdict import _steps_counted


def _records(run_lr: list[float], run_of: list[str]) -> tuple[StepRecord, StepRecord]:
    ref = StepRecord(8, 0.5, lr=[0.0016, 0.0018], lr_of=["opt_d", "opt_g"])
    return ref, StepRecord(8, 0.4, lr=run_lr, lr_of=run_of)


def test_the_optimizer_that_did_not_step_is_named():
    ref, rec = _records([0.0016], [])
    assert not_stepped(ref, rec) == "`opt_g`"
    assert _rates(ref, rec, 8, None) == (
        "learning rate of step 8: 1 rate (0.0016) where the uninterrupted run stepped 2 "
        "(0.0016, 0.0018): `opt_g` stepped in the uninterrupted run and not in this one (an "
        "optimizer that steps only at some steps, decided by state that differs here: a counter "
        "of steps)")
    counted = _steps_counted(SimpleNamespace(by_step={8: ref}),
                             [(7, SimpleNamespace(records=[rec]))], 8, "lr")
    assert counted == ("number of optimizer steps (1 learning rate read, 2 in the "
                       "uninterrupted run; `opt_g` did not step)")


def test_nothing_is_named_where_the_rates_do_not_tell_which():
    ref = StepRecord(8, 0.5, lr=[0.001, 0.001], lr_of=["opt_d", "opt_g"])
    rec = StepRecord(8, 0.4, lr=[0.001])
    assert not_stepped(ref, rec) == ""  # (both at one rate)
    ref, rec = _records([0.0017], [])
    assert not_stepped(ref, rec) == ""  # (a rate neither had: not a missing step)
    assert "a parameter group it stepped did not step in this run (one added with " \
        "add_param_group" in (_rates(ref, rec, 8, None) or "")


def test_of_two_optimizers_at_one_rate_the_one_the_step_did_not_read_is_named():
    """Trial 571: a GAN's two Adams at one rate, the generator's unstepped (a
    counter lost), read "a parameter group it stepped is not in this run's
    optimizers"; whose rate each read was is recorded where one of several
    steps (``trace``'s ``lr_of``)."""
    ref = StepRecord(8, 0.5, lr=[0.0002, 0.0002], lr_of=["opt_d", "opt_g"])
    rec = StepRecord(8, 0.4, lr=[0.0002], lr_of=["opt_d"])
    assert not_stepped(ref, rec) == "`opt_g`"
    assert "`opt_g` stepped in the uninterrupted run and not in this one" in \
        (_rates(ref, rec, 8, None) or "")
    # (a group of one read fewer rates, not a whole optimizer: none is named)
    ref = StepRecord(8, 0.5, lr=[0.1, 0.1, 0.2], lr_of=["opt_d", "opt_d", "opt_g"])
    assert not_stepped(ref, StepRecord(8, 0.4, lr=[0.1, 0.2], lr_of=["opt_d", "opt_g"])) == ""


def test_a_number_returned_nested_under_its_own_name_is_compared_there():
    state = {"epoch": 2, "loader": {"epoch": 1, "offset": 3}}
    assert _named_alike(1, state, "epoch")
    assert not _named_alike(5, state, "epoch")
    assert not _named_alike(3, state, "epoch")  # (`offset` holds 3: another name)


def test_a_position_whose_generators_alone_differ_is_not_offered_two_forms_of_one_position():
    """Trial 498: a position component that kept each loader's shuffle generator
    was told, at an epoch's end, that the end of one epoch and the start of the
    next may be one position in two forms, where its epoch and batch were alike
    and only the generators differed (``verdict._positional``)."""
    from resumecheck.report import Finding
    from resumecheck.verdict import _positional

    generators = Finding("data_cursor", "cls.gen differs (a torch generator's state: it has "
                         "drawn otherwise, or been seeded otherwise, than the uninterrupted "
                         "run's) (and 1 more entry of its state_dict() differs)", step=6)
    assert not _positional(generators)
    assert _positional(Finding("data_cursor", "batch 0, expected 8", step=6))
    assert _positional(Finding("data_cursor", "epoch 1, expected 0 (and 1 more entry of its "
                               "state_dict() differs: gen, a torch generator's state)", step=6))


def test_fields_as_built_are_said_only_of_a_row_still_diverged_once_judged():
    """Trial 500: "(other fields of `early_stopping` differ there and made it
    diverge)" of a row judged inconclusive after (its trajectory was the full
    resume's divergence): said only where the row still diverged
    (``engine._fields_as_built``)."""
    from resumecheck.engine import _fields_as_built
    from resumecheck.report import RunResult

    checker = SimpleNamespace(fields_as_built={"early_stopping": "of `early_stopping`, ...",
                                               "scheduler": "of `scheduler`, ..."})
    runs = [RunResult(dropped=[], resume_at=[13], verdict="diverged"),
            RunResult(dropped=["early_stopping"], resume_at=[13], verdict="inconclusive"),
            RunResult(dropped=["scheduler"], resume_at=[13], verdict="diverged")]
    assert _fields_as_built(checker, runs) == {"scheduler": "of `scheduler`, ..."}


def test_a_stream_level_at_the_first_step_rules_out_a_draw_before_it():
    """Trial 500: the WARNING offered "a DataLoader iterator created after the load
    draws from the restored random stream" where the first step after the
    restore began with every stream level, and drew one draw fewer
    (``report._incomplete_notice``)."""
    from resumecheck.report import RunResult, StreamOffset, _incomplete_notice

    def notice(step: int) -> str:
        engine = RunResult(dropped=[], resume_at=[16], verdict="diverged",
                           first_divergent_step=17, first_divergent_quantity="loss",
                           stream_offsets=[StreamOffset(stream="torch", step=step, draws=-1,
                                                        unit="draws", detail="behind")])
        return _incomplete_notice(engine, "differs from step 17 (loss)", "", "", "")

    assert "(not a declared random stream: each was the uninterrupted run's at the start of " \
        "that step)" in notice(18)
    assert "a DataLoader iterator created after the load draws" in notice(17)


class _Gan:
    """Two Adams at one rate; the generator steps at every second step, by a
    counter ``FORGETS`` loses on load (trial 571, smaller)."""

    forgets = False

    def __init__(self, settings: dict) -> None:
        import torch

        torch.manual_seed(0)
        self.gen, self.disc = torch.nn.Linear(2, 2), torch.nn.Linear(2, 1)
        self.opt_g = torch.optim.Adam(self.gen.parameters(), lr=2e-4)
        self.opt_d = torch.optim.Adam(self.disc.parameters(), lr=2e-4)
        self.d_updates = 0

    def components(self) -> dict:
        from resumecheck import Attr

        return {"params": self.gen, "disc": self.disc, "optimizer": self.opt_g,
                "opt_d": self.opt_d, "d_updates": Attr(self, "d_updates")}

    def train_step(self):
        import torch

        real, z = torch.randn(8, 2), torch.randn(8, 2)
        d_loss = self.disc(self.gen(z).detach()).mean() - self.disc(real).mean()
        self.opt_d.zero_grad()
        d_loss.backward()
        self.opt_d.step()
        self.d_updates += 1
        if self.d_updates % 2 == 0:
            g_loss = -self.disc(self.gen(z)).mean()
            self.opt_g.zero_grad()
            g_loss.backward()
            self.opt_g.step()
        return d_loss.item()

    def save(self, path: str) -> None:
        import torch

        torch.save({"g": self.gen.state_dict(), "d": self.disc.state_dict(),
                    "og": self.opt_g.state_dict(), "od": self.opt_d.state_dict(),
                    "n": self.d_updates, "rng": torch.get_rng_state()}, path)

    def load(self, path: str) -> None:
        import torch

        state = torch.load(path)
        self.gen.load_state_dict(state["g"])
        self.disc.load_state_dict(state["d"])
        self.opt_g.load_state_dict(state["og"])
        self.opt_d.load_state_dict(state["od"])
        self.d_updates = 0 if self.forgets else state["n"]
        torch.set_rng_state(state["rng"])


class _Forgets(_Gan):
    forgets = True


def test_a_resumed_step_that_skips_one_of_two_optimizers_at_one_rate_names_it():
    from resumecheck import Target, verify

    report = verify(Target(factory=_Forgets, steps=6, resume_at=(3,)), drop="none",
                    noise_seeds=0)
    own = report.full_resume
    assert own.first_divergent_step == 4
    assert ("`optimizer` stepped in the uninterrupted run and not in this one"
            in own.explanation), own.explanation
    assert "L-BFGS" not in own.explanation  # (the model calls its update skipped, said so)
