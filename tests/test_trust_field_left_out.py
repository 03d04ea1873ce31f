"""A field that a declared component of the program's own leaves out of its
state_dict() is named, and the fields its state does hold, or that it makes
again from that state, are not (fixtures/trust/field_left_out.py)."""

from __future__ import annotations

from resumecheck import verify
from resumecheck.report import DIVERGED, IDENTICAL
from resumecheck.undeclared import not_known_if_held

SPEC = "fixtures.trust.field_left_out:"
FAST = {"noise_seeds": 0, "drop": "none", "check_determinism": False}


def test_the_field_its_state_dict_leaves_out_is_named_and_the_epoch_it_keeps_is_not():
    report = verify(SPEC + "LEFT_OUT", **FAST)
    assert report.full_resume.verdict == DIVERGED
    assert report.full_resume.first_divergent_step == 6
    assert [line.split(" (")[0] for line in report.undeclared] == ["data_cursor.batch_in_epoch"]
    line = report.undeclared[0]
    assert line.startswith("data_cursor.batch_in_epoch (int: 0 at the build, 4 at the end, "
                           "changed during the run; a field of the declared component "
                           "data_cursor (Position) that the engine's restore of it does not "
                           "set back: its state_dict() leaves it out"), line
    assert "your own resume held it otherwise right after your load() at step 5" in line
    text = report.render()
    assert "name what the program keeps outside their states: `data_cursor.batch_in_epoch`)" in text
    # (a trial: the why of the resume that lost it named only a stream the program set
    # right; trial 152: the note came last, after a list of samplers and iterators)
    assert report.full_resume.explanation.startswith(
        "data (the samples consumed) differs from step 6; not compared, and your checkpoint may "
        "lose it: `data_cursor.batch_in_epoch` (see `not compared`)"), \
        report.full_resume.explanation
    assert "a sampler's epoch that set_epoch sets" not in report.full_resume.explanation
    # (trial 602: the guesses of a position saved where the run was not followed the
    # field its state_dict() left out, in both full resumes' why)
    for run in (report.full_resume, report.engine_resume):
        assert run is not None
        assert ("the declared data position `data_cursor` came back as its state_dict() "
                "returns it, without `data_cursor.batch_in_epoch`, which that state leaves "
                "out: the likeliest cause of the samples that differ") in run.explanation, \
            run.explanation
        assert "saved where the run was not" not in run.explanation


def test_what_a_departed_restart_ends_with_otherwise_is_not_named_when_its_restore_set_it():
    """A trial (per-worker states filed under the wrong worker): a field that
    the component's load_state_dict() sets from its state was named "not set
    back", from the end of an engine restart that had departed. Only what the
    restart held otherwise right after its restore (or after a step before it
    departed) is named: here the position, which the state records late."""
    report = verify(SPEC + "MISFILED", **FAST)
    engine = report.engine_resume
    assert engine is not None and engine.verdict == DIVERGED
    assert engine.first_divergent_step == 6
    assert [line.split(" (")[0] for line in report.undeclared] == ["data_cursor.batch_in_epoch"]
    text = report.render()
    assert "name what the program keeps outside their states: `data_cursor.batch_in_epoch`)" in text
    assert "slots" not in text
    # (trial 147: the WARNING led with guesses of a position saved where the run was
    # not, and named the sampler's own field left out of its state last)
    notice = report.incomplete_state_notice()
    assert notice is not None
    lead = ("The declared data position keeps fields its state does not bring back "
            "(`data_cursor.batch_in_epoch`: see the `not compared` lines): the likeliest cause "
            "here. What the state_dict() of `data_cursor` returns came back as saved, without "
            "them.")
    assert lead in notice, notice
    # (trial 365 read the position said to come back as saved, with other causes, as
    # contradicting the fields it lost)
    assert "`data_cursor` came back as saved, yet" not in notice


def test_a_field_left_out_that_the_resume_point_finds_as_built_is_named_and_says_so():
    """Trial 136: an epoch counter left out of a stream's state_dict(), resumed
    in the first epoch, where the run still holds it as built: the restart's
    epoch is right there whatever the checkpoint keeps, the run passed, and
    nothing named the field; resumed in the next epoch it departed."""
    report = verify(SPEC + "EPOCH_LEFT_OUT", **FAST)
    assert report.equivalent and report.full_resume.verdict == IDENTICAL
    [line] = [u for u in report.undeclared if u.startswith("data_cursor.epoch ")]
    assert "its state_dict() leaves it out" in line, line
    # (trial 147: said of a sampler whose state does hold what its load sets it back
    # from; at a resume point that finds it as built, it cannot be seen either way)
    assert ("whether restoring the component sets it back cannot be seen at a resume "
            "point where it is as a fresh build holds it; if it does not, its state_dict() "
            "leaves it out") in line, line
    assert "that the engine's restore of it does not set back" not in line
    assert ("named at this resume point: at step 5 the uninterrupted run held it as a fresh "
            "build does, so a restart holds it alike there whatever the checkpoint keeps; a "
            "resume point after the run changes it shows whether it comes back") in line, line
    later = verify(SPEC + "EPOCH_LEFT_OUT", resume_at=10, **FAST)
    assert later.full_resume.verdict == DIVERGED
    [line] = [u for u in later.undeclared if u.startswith("data_cursor.epoch ")]
    assert "your own resume held it otherwise right after your load() at step 10" in line, line
    assert "as a fresh build does" not in line


def test_a_list_the_load_leaves_empty_is_said_held_otherwise_right_after_the_load():
    """Trial 136: a shuffle buffer left out of the state was empty right after
    the load (the reference's held 63 entries), and its line said only that
    the resume's end "says nothing of your checkpoint": an empty list was not
    looked at, as if nothing were held there."""
    report = verify(SPEC + "BUFFER_LEFT_OUT", **FAST)
    assert report.full_resume.verdict == DIVERGED and report.full_resume.first_divergent_step == 6
    [line] = [u for u in report.undeclared if u.startswith("data_cursor.buffer ")]
    assert "your own resume held it otherwise right after your load() at step 5" in line, line
    assert "`data_cursor.buffer`" in report.full_resume.explanation


def test_its_twin_that_keeps_the_field_under_another_key_names_nothing():
    report = verify(SPEC + "RENAMED", **FAST)
    assert report.equivalent and report.full_resume.verdict == IDENTICAL
    assert report.undeclared == []


def test_where_no_restore_shows_what_the_state_brings_back_the_line_hedges():
    line = ("pos.n (int: 0 at the build, 4 at the end, changed during the run; a field of the "
            "declared component pos (P) that the engine's restore of it does not set back: its "
            "state_dict() leaves it out, or ...)")
    hedged = not_known_if_held(line, "the engine's own full resume failed")
    assert "does not set back" not in hedged
    assert ("a field of the declared component pos (P); whether restoring the component sets "
            "it back is not known (the engine's own full resume failed: ") in hedged
    assert "if it does not, its state_dict() leaves it out" in hedged


def test_with_two_restarts_the_field_is_judged_at_the_one_before_the_departure():
    """A trial: with --resume-at 4,16 a lost field read "says nothing of your
    checkpoint" (the first restore, long before the departure, was looked
    at); and a field right by chance at the first restart (an epoch's start)
    was taken as set back."""
    report = verify(SPEC + "LEFT_OUT", **{**FAST, "resume_at": [8, 10]})
    assert report.full_resume.first_divergent_step == 11
    [line] = report.undeclared
    assert line.startswith("data_cursor.batch_in_epoch (int:"), line
    assert line.endswith("; your own resume held it otherwise right after your load() at step "
                         "10, and departed from the uninterrupted run at the next step: your "
                         "checkpoint may lose it, unless the step sets it anew before reading "
                         "it (a value each step overwrites, not one it updates from what it "
                         "held, as a running average or a count) (or it is not state, a log, "
                         "a timer: name it in "
        "Target(not_state=...))"), line


def test_a_stream_the_program_set_right_in_its_first_step_is_no_lead_of_the_why():
    """A trial: the only lead in a why was "restored state differs in rng", a
    loader's generator that the program itself seeded again in the first step
    after the load (which matched); the cause was a field a component left out."""
    from resumecheck.report import CONFIRMED, Finding
    from resumecheck.state_diff import righted_only
    from resumecheck.verdict import _differs_clause

    righted = Finding("rng", "generator 'loader' differs from the uninterrupted run's at step "
                      "8, which the program set right itself during step 9 (and torch CPU "
                      "stream, which the uninterrupted run held the same from step 8 to its "
                      "end)", step=8)
    other = Finding("rng", "torch CPU stream differs from the uninterrupted run's at step 8 "
                    "(and generator 'loader', which the program set right itself during "
                    "step 9)", step=8)
    assert righted_only(righted.detail) and not righted_only(other.detail)
    assert _differs_clause([righted]) == ""
    assert _differs_clause([righted, Finding("scheduler", "last_epoch 0, expected 8")]) == \
        "; restored state differs in scheduler"
    assert _differs_clause([other]) == "; restored state differs in rng"
    from dataclasses import replace
    assert _differs_clause([replace(righted, status=CONFIRMED)]) == \
        "; restored state differs in rng (confirmed)"



def test_the_warning_does_not_list_what_the_resume_point_found_as_built():
    """Trial 148: the WARNING's list of what the program keeps outside the
    declared state named a sampler's fields that its own `not compared` lines
    said a restart holds alike there whatever the checkpoint keeps."""
    from resumecheck.phrases import AS_BUILT_AT_RESUME
    from resumecheck.report import _uncompared_clause

    lines = ["data_cursor.generator (a torch.Generator ...); "
             + AS_BUILT_AT_RESUME.format(at="step 1"),
             "Python's random stream (the stream your program draws from ...)"]
    assert _uncompared_clause(lines, True) == (
        " (the `not compared` lines name what the program keeps outside their states: "
        "`Python's random stream`)")
    assert _uncompared_clause(lines[:1], True) == ""
