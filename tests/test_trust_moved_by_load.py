"""A component that came back from its own load and that a later component's
load changed before the first step is said so, not to lose its state in its
own load (fixtures/trust/generator_drawn_by_later_load.py)."""

from __future__ import annotations

from resumecheck import verify
from resumecheck.report import LOSSY_ONE, MOVED_ONE

SPEC = "fixtures.trust.generator_drawn_by_later_load:"
FAST = {"noise_seeds": 0, "drop": "none", "check_determinism": False}


def test_a_generator_a_later_load_draws_from_is_said_changed_by_that_load():
    """Trial 891: a generator declared before the data position whose load drew
    the epoch's order again from it read "`sampler_rng` ...: its
    load_state_dict() does not bring back what its state_dict() returned"; its
    own load had brought it back, and the position's load moved it on."""
    report = verify(SPEC + "DECLARED_AS_IT_IS", **FAST)
    assert not report.equivalent
    notice = report.incomplete_state_notice() or ""
    assert notice.startswith(MOVED_ONE), notice
    assert LOSSY_ONE not in notice
    assert "which the load of a component restored after it then changed: `data_cursor`" \
        in notice
    assert "declare the state as it was before that draw" in notice
    [finding] = [f for f in report.full_resume.diagnosis if f.component == "shuffle"]
    assert "`data_cursor`" in finding.detail


def test_the_state_kept_at_the_epoch_s_start_resumes():
    """Its twin declares the generator's state at the epoch's start, which the
    position's load then replays to where the run had it: nothing is said."""
    report = verify(SPEC + "DECLARED_AT_EPOCH_START", **FAST)
    assert report.equivalent and not report.full_resume.diagnosis


def test_a_position_whose_load_reads_weights_declared_after_it_is_offered_the_order():
    """Trial 896: a data position declared before the sampling weights its load
    drew the epoch's order from (fixtures/trust/weights_read_before_restored.py):
    the WARNING listed causes without the order the engine restores them in,
    which was the one; declared the other way round, the engine resumes."""
    report = verify("fixtures.trust.weights_read_before_restored:POSITION_FIRST", **FAST)
    notice = report.incomplete_state_notice() or ""
    assert "or reads another declared component that the engine restores after it, in the " \
        "order components() gives them" in notice, notice
    assert report.equivalent  # (the program's own save/load restores the weights first)
    fixed = verify("fixtures.trust.weights_read_before_restored:WEIGHTS_FIRST", **FAST)
    assert fixed.equivalent and fixed.incomplete_state_notice() is None
