"""Issue 13 §7: fractional epochs and declared epoch boundaries."""

from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis.errors import InvalidArgument

from resumecheck import verify
from resumecheck.phrases import AS_THE_BUILD_MADE
from resumecheck.program import ends_inside, epoch_boundaries, next_epoch_start
from resumecheck.strategies import interruption_schedules, special_points
from resumecheck.verdict import epoch_ends_untried

from fixtures.evidence import fractional_epochs


def _epochs(report):
    """What the report says its resume points leave unchecked, of epochs (the
    state they find as built is said beside: tests/test_trust_fields_as_built.py)."""
    return [w for w in report.not_checked if AS_THE_BUILD_MADE not in w]

def test_fractional_epochs_put_the_boundary_before_the_step_that_reads_the_new_epoch():
    # 13 batches, accumulation 2: epochs begin inside steps 7, 14, 20
    assert epoch_boundaries({"steps_per_epoch": 6.5}, 20) == [6, 13, 19]
    assert epoch_boundaries({"steps_per_epoch": 5}, 16) == [5, 10, 15]
    assert epoch_boundaries({"epoch_boundaries": [3, 9, 30]}, 16) == [3, 9]
    assert next_epoch_start({"steps_per_epoch": 6.5}, 8) == 14
    # (a restore at an epoch's end: the very next step reads the new epoch; a
    # trial's latent gap said "from step 13" after a restore at 8, 4 steps an epoch)
    assert next_epoch_start({"steps_per_epoch": 8}, 8) == 9
    assert next_epoch_start({"steps_per_epoch": 8}, 9) == 17
    assert next_epoch_start({"epoch_boundaries": [6, 13]}, 13) == 14
    assert next_epoch_start({"epoch_boundaries": [6, 13]}, 14) is None
    assert next_epoch_start({}, 3) is None


def test_special_points_aim_at_the_real_boundaries():
    assert special_points(20, 6.5) == [1, 5, 6, 7, 12, 13, 14, 18, 19]
    assert special_points(16, epoch_boundaries=[3, 11]) == [1, 2, 3, 4, 10, 11, 12, 15]
    assert special_points(16, 5) == [1, 4, 5, 6, 9, 10, 11, 14, 15]  # unchanged for whole epochs


@given(interruption_schedules(steps=16, max_interruptions=1, steps_per_epoch=6.5))
def test_fractional_schedules_stay_in_range(schedule):
    assert len(schedule) == 1 and 1 <= schedule[0] <= 15


@pytest.mark.parametrize("kw", [{"steps_per_epoch": 0}, {"steps_per_epoch": -6.5},
                                {"steps_per_epoch": "6"}, {"epoch_boundaries": [0, 4]}])
def test_bad_epoch_settings_raise(kw):
    with pytest.raises(InvalidArgument):
        interruption_schedules(steps=10, **kw).example()


def test_a_program_declares_fractional_or_listed_boundaries():
    for target, expected in ((fractional_epochs.FORGETS_EPOCH, 6.5),
                             (fractional_epochs.FORGETS_EPOCH_DECLARED, None)):
        built = target.build({})
        assert built.boundaries()["steps_per_epoch"] == expected
    declared = fractional_epochs.FORGETS_EPOCH_DECLARED.build({}).boundaries()
    assert declared["epoch_boundaries"] == [6, 13, 19]


@pytest.mark.e2e
@pytest.mark.parametrize(("name", "isolation"), [
    ("FORGETS_EPOCH", "inprocess"), ("FORGETS_EPOCH_DECLARED", "inprocess"),
    pytest.param("FORGETS_EPOCH", "process", marks=pytest.mark.process),
])
def test_latent_epoch_gap_says_when_the_next_epoch_is_read(name, isolation):
    target = getattr(fractional_epochs, name)
    report = verify(target, drop="none", isolation=isolation, noise_seeds=0,
                    check_determinism=isolation == "inprocess")
    full = report.full_resume
    assert full.verdict == "identical" and full.latent_gaps == ["sampler_epoch"]
    [finding] = full.diagnosis
    assert (finding.component, finding.confirmed, finding.matters_from) == (
        "sampler_epoch", False, 14)
    assert "sampler_epoch (next read at step 14)" in full.explanation
    if isolation == "process":
        return  # the longer run below shows nothing more in a fresh interpreter
    longer = verify(target, steps=16, drop="none", noise_seeds=0, check_determinism=False)
    assert longer.full_resume.verdict == "diverged"
    assert longer.full_resume.first_divergent_step == 14


@pytest.mark.e2e
def test_fuzz_aims_at_the_fractional_boundaries():
    from resumecheck.fuzz import fuzz

    result = fuzz(fractional_epochs.FORGETS_EPOCH, steps=16, max_examples=25, budget=60)
    assert result.boundaries == [6, 13]
    assert result.found
    # shrunk to the earliest special point that still fails: the first resume
    # after epoch 1 began inside step 7 (a whole-number 6 would also aim at 6, 12)
    assert result.failure.resume_at == [7]


def test_a_report_without_a_restart_near_an_epochs_end_names_the_step_that_reads_the_next():
    # (a trial: "the program's epochs end after step 10" of 10.33 steps an epoch,
    # whose first epoch ends inside step 11; here 6.5 in 12 steps: one ends inside 7)
    report = verify(fractional_epochs.CORRECT, drop="none", noise_seeds=0)  # (resumed at 8)
    assert _epochs(report) == [
        "a restart where an epoch ends (an epoch ends inside step 7, by its steps_per_epoch): "
        "--resume-at 6 or 7 checks one, resumecheck fuzz tries them all, until a schedule "
        "fails"]
    for k in (6, 7):  # (the step before the boundary, or the one that straddles it)
        assert _epochs(verify(fractional_epochs.CORRECT, resume_at=k, drop="none",
                              noise_seeds=0)) == []
    # (trial 401: resumed only where a fractional epoch ends exactly, 13 = 2 x 6.5, the
    # report said nothing of restarts inside an epoch, as the README says it does)
    assert _epochs(verify(fractional_epochs.CORRECT, steps=15, resume_at=13, drop="none",
                          noise_seeds=0)) == [
        "a restart inside an epoch (every resume point here is an epoch's end, by the "
        "program's steps_per_epoch): --resume-at 14 checks one, resumecheck fuzz tries them "
        "all, until a schedule fails"]


def test_with_whole_epochs_only_the_step_an_epoch_ends_after_counts():
    # (a trial: told "--resume-at 15 or 16" of 15 steps an epoch, where 16 is already
    # inside the next epoch and a bug only an epoch's end shows passes there)
    at_end = verify("resumecheck.tiny:TARGET", resume_at=6, drop="none", noise_seeds=0)
    assert _epochs(at_end) == [  # (trial 139: a restart inside an epoch is not checked)
        "a restart inside an epoch (every resume point here is an epoch's end, by the program's "
        "steps_per_epoch): "
        "--resume-at 7 checks one, resumecheck fuzz tries them all, until a schedule fails"]
    both = verify("resumecheck.tiny:TARGET", resume_at=(6, 9), drop="none", noise_seeds=0)
    assert _epochs(both) == []
    # (trial 149: a declared list was said of as fact, one step before the real end)
    import types

    from resumecheck.verdict import mid_epoch_untried

    ref = types.SimpleNamespace(segment=types.SimpleNamespace(
        boundaries={"epoch_boundaries": [6], "steps_per_epoch": None}))
    assert mid_epoch_untried(ref, [6], 12) == (  # type: ignore[arg-type]
        "a restart inside an epoch (every resume point here is an epoch's end, as the program "
        "declares them (epoch_boundaries)): --resume-at 7 checks one, resumecheck fuzz tries "
        "them all, until a schedule fails")
    after = verify("resumecheck.tiny:TARGET", resume_at=7, drop="none", noise_seeds=0)
    assert _epochs(after) == [
        "a restart where an epoch ends (the program's epochs end after steps 6, 12, by its "
        "steps_per_epoch): "  # (trial 722: the first end after the point, not before it)
        "--resume-at 12 checks one, resumecheck fuzz tries them all, until a schedule "
        "fails"]


def test_resume_points_all_inside_the_first_epoch_say_a_later_epoch_is_not_checked():
    """Trial 229: resumed at 7, inside the first epoch, and at 12, its end, a
    Trainer that shuffled each epoch from an unrestored stream passed, and
    nothing said that no resume inside a later epoch was tried (fuzz found 13)."""
    from resumecheck.tiny import TARGET

    line = ("a restart inside an epoch after the first (every resume point here is inside the "
            "first epoch, which ends after step 6): --resume-at 7 checks one, resumecheck fuzz "
            "tries them all, until a schedule fails")
    fast = {"drop": "none", "noise_seeds": 0, "check_determinism": False}
    assert line in verify(TARGET, resume_at=(3,), **fast).not_checked
    # at the first epoch's end, or inside the second, nothing is said of it
    for k in (6, 8):
        assert not any("after the first" in w for w in verify(TARGET, resume_at=(k,),
                                                               **fast).not_checked)
    # (trial 452: one point inside the first epoch and one at its end tried no later epoch)
    assert ("a restart inside an epoch after the first (every resume point here is inside the "
            "first epoch, which ends after step 6, or at an epoch's end): --resume-at 7 checks "
            "one, resumecheck fuzz tries them all, until a schedule fails") in verify(
                TARGET, resume_at=(3, 6), **fast).not_checked
    assert not any("after the first" in w for w in verify(TARGET, resume_at=(3, 8),
                                                           **fast).not_checked)


def test_an_epoch_that_ends_with_a_step_at_a_fractional_rate_is_said_to_end_after_it():
    """A trial: at 10/3 steps an epoch, epochs 1, 2 and 4 end inside steps 4, 7
    and 14, but epoch 3 ends with step 10's last batch; the report said "an
    epoch ends inside steps 4, 7, 11, 14"."""
    bounds = {"steps_per_epoch": 10 / 3}
    assert epoch_boundaries(bounds, 16) == [3, 6, 10, 13]
    assert ends_inside(bounds, 16) == {3, 6, 13}
    ref = SimpleNamespace(segment=SimpleNamespace(boundaries=bounds))
    assert epoch_ends_untried(ref, [8], 16) == (
        # (trial 451: the one that ends right after a step is the one to try)
        "a restart where an epoch ends (an epoch ends inside steps 4, 7, 14 and after step "
        "10, by its steps_per_epoch): --resume-at 10 checks one, resumecheck fuzz tries them "
        "all, until a schedule fails")
    assert epoch_ends_untried(ref, [10], 16) is None  # (a restart right at its end)
    assert ends_inside({"steps_per_epoch": 5}, 16) == set()
    assert ends_inside({"steps_per_epoch": 6.5, "epoch_boundaries": [6, 13]}, 16) == set()


def test_samples_that_recur_are_placed_in_the_epochs_before_the_nearest_step():
    """Two trials: a restart reading its unshuffled epoch again from the start
    was said to read ahead into the next epoch (the nearer match); another's,
    reading a batch at its place in the last epoch's order, was said to read
    its epoch again, where that batch happened to begin the next."""
    spec = "fixtures.evidence.recurring_batches:"
    report = verify(spec + "IN_ORDER", drop=["data_cursor"], noise_seeds=0,
                    check_determinism=False)
    [run] = [r for r in report.runs if r.dropped == ["data_cursor"]]
    assert "read at step 1 (6 steps earlier), the first of its epoch" in run.divergence_detail
    assert "reads ahead" not in run.divergence_detail
    assert run.divergence_detail.endswith(
        "(they are also what it read at step 9, the first of another epoch: samples that "
        "recur match more than one step)"), run.divergence_detail
    report = verify(spec + "ROTATED", drop=["epoch"], noise_seeds=0, check_determinism=False)
    [run] = [r for r in report.runs if r.dropped == ["epoch"]]
    assert "read at step 2 (8 steps earlier), at the same place of another epoch" in \
        run.divergence_detail
    assert "the first of its epoch: the restart reads the epoch again" not in run.divergence_detail
    assert run.divergence_detail.endswith("(they are also what it read at step 9, the first "
                                          "of its epoch: samples that recur match more than "
                                          "one step)"), run.divergence_detail


def test_a_place_in_fractional_epochs_is_measured_in_steps_not_counted_from_a_boundary():
    """Trial 401: 3.25 steps an epoch; a restart at 6 whose step 7 read again
    what step 1 read (the run's very start) was told it read "the same place of
    another epoch", counting whole steps from the step in which each epoch
    began (epoch 1 begins a quarter into step 4)."""
    from resumecheck.evidence import epoch_place
    from resumecheck.segments import SegmentResult

    def place(per_epoch, step, at):
        reference = SegmentResult(records=[], names=[], captures={}, end_state=None,
                                  boundaries={"steps_per_epoch": per_epoch})
        return epoch_place(reference, step, at)

    assert place(3.25, 7, 1) == "another epoch's start"
    assert place(3.25, 14, 1) == "same place"  # (13 steps: four epochs to the batch)
    assert place(3.25, 8, 5) is None  # (a quarter of a step apart in their epochs)
    assert place(3.0, 7, 1) == "same place" and place(3.0, 8, 7) == "epoch start"


def test_data_that_first_differs_where_a_new_epoch_begins_does_not_lead_with_the_position():
    """Trial 451: a new epoch, begun inside a step, read other samples from an
    unsaved shuffle generator; every step before it matched, yet the why led
    with "a position saved where the run was not (counted one batch early or
    late)" before it said the new epoch's order differs."""
    report = verify(fractional_epochs.OWN_SHUFFLE, drop="none", noise_seeds=0,
                    check_determinism=False)
    why = report.full_resume.explanation
    assert report.full_resume.first_divergent_step == 14
    assert ("the declared data position `data_cursor` came back as saved, and every step read "
            "what the uninterrupted run read until a new epoch began: the position is not what "
            "differs, the new epoch's order is (see below)") in why, why
    assert "counted early or late" not in why
    assert "step 14 is the first to read a new epoch" in why
