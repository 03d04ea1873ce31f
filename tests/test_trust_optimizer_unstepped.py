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
    assert "a parameter group it stepped is not in this run's optimizers" in \
        (_rates(ref, rec, 8, None) or "")


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
