"""A scheduler whose state sets nothing a step reads (stepped with an explicit
epoch) is a blind spot with the learning rate changing all the same: its
explanation and the advice of ``assert_components_exercised`` say so,
instead of asking for a learning rate that changes after the resume point."""

from __future__ import annotations

import pytest

from resumecheck import ComponentsNotExercised, assert_components_exercised, verify
from resumecheck.errors import SCHEDULER_BY_EPOCH, SCHEDULER_IDLE, SCHEDULER_UNREAD

SPEC = "fixtures.trust.scheduler_by_epoch:"
FAST = {"noise_seeds": 0, "check_determinism": False}


def test_a_scheduler_stepped_by_epoch_is_said_to_set_nothing_a_step_reads():
    report = verify(SPEC + "BY_EPOCH", drop=["scheduler"], **FAST)
    [spot] = report.blind_spots
    assert spot.explanation.endswith(SCHEDULER_UNREAD + SCHEDULER_BY_EPOCH), spot.explanation
    with pytest.raises(ComponentsNotExercised) as caught:
        assert_components_exercised(SPEC + "BY_EPOCH", drop=["scheduler"], **FAST)
    said = str(caught.value)
    assert "\nscheduler: the learning rate changes after the resume point without its " \
           "state (a scheduler stepped with an explicit epoch, step(epoch), or one the " \
           "program sets anew before what it holds matters, a new fold's or stage's): what " \
           "it holds sets nothing a step reads here, so losing it changes nothing" in said, said
    # (trial 845: "cannot catch their bugs", "nothing ... can exercise them", of a scheduler
    # whose construction after the load the same check caught through the optimizer's rate,
    # and no word of what to do where the program means it so)
    assert "changes nothing (a scheduler made or stepped wrongly still shows in the " \
        "optimizer's rate); where your program means it so, leave it out of the components " \
        "this test asserts (the marker's drop=[...])" in said, said
    assert "so this check cannot show a checkpoint that loses their state; what would " \
        "exercise each is said below" in said, said
    assert "catch their bugs" not in said and "nothing the program does here" not in said
    assert "a learning rate that changes after the resume point for scheduler" not in said


def test_a_scheduler_whose_rate_stays_put_gets_the_advice_to_make_it_change():
    report = verify(SPEC + "FLAT", drop=["scheduler"], **FAST)
    [spot] = report.blind_spots
    assert SCHEDULER_UNREAD not in spot.explanation
    # (trial 211: a component the run left alone after the resume point is told so, and
    # where a resume point shows it, rather than how a program could exercise it)
    with pytest.raises(ComponentsNotExercised,
                       match="scheduler: no step after the resume point read it, and the "
                             "uninterrupted run did not change it after there: the run changes "
                             "it only before; a resume point before its last change shows it"):
        assert_components_exercised(SPEC + "FLAT", drop=["scheduler"], **FAST)


def test_a_scheduler_another_one_took_over_from_is_said_to_be_stepped_no_more():
    """A trial: a cosine schedule that SWA's SWALR took over before the resume
    point was said to be "stepped with an explicit epoch"."""
    report = verify(SPEC + "TAKEN_OVER", drop=["scheduler", "swa_scheduler"], **FAST)
    [spot] = report.blind_spots
    assert spot.dropped == ["scheduler"]
    assert spot.explanation.endswith(SCHEDULER_UNREAD + SCHEDULER_IDLE), spot.explanation
    with pytest.raises(ComponentsNotExercised) as caught:
        assert_components_exercised(SPEC + "TAKEN_OVER", drop=["scheduler"], **FAST)
    said = str(caught.value)
    assert "\nscheduler: the learning rate changes after the resume point, but the " \
           "uninterrupted run no longer steps it there (it ends as it was at the resume " \
           "point): choose a resume point before its last step" in said, said
    assert "step(epoch)" not in said
    # (trial 375: not "nothing the program does here can exercise them" above that advice)
    assert "dropping these from the engine's restore changed nothing, so this check cannot " \
        "show a checkpoint that loses their state; what would exercise each is said below" \
        in said, said
