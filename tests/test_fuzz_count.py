"""``max_examples`` is the number of schedules tried, the default one included."""

from __future__ import annotations

import fixtures.bugs.class15_second_resume_stale_cursor as c15
from resumecheck.fuzz import fuzz


def test_one_example_is_the_default_schedule_alone():
    result = fuzz(c15.CORRECT, max_examples=1, budget=60)
    assert result.examples == result.distinct_schedules == 1
    assert not result.found and not result.budget_exhausted
    # (its schedule, 4,8, resumes inside the second epoch: no line on a later one)
    assert not any("inside an epoch after the first" in c for c in result.caveats)


def test_a_pass_whose_examples_all_resumed_in_the_first_epoch_says_a_later_one_is_unchecked():
    """Trial 827: 6 examples passed a Trainer whose sampler reads other samples at
    every resume inside a later epoch; ``run`` at the default point said so, fuzz
    did not. Epochs of 5 steps here; the one example resumes at 2."""
    from fixtures.userprog import Trainer, target_of

    result = fuzz(target_of(Trainer, "fixtures.userprog:Trainer", resume_at=(2,)),
                  max_examples=1, budget=60)
    assert not result.found and result.examples == 1
    [line] = [c for c in result.caveats if "inside an epoch after the first" in c]
    assert line == ("not checked: a restart inside an epoch after the first (every example "
                    "resumed inside the first epoch, which ends after step 5): --resume-at 6 "
                    "checks one, more examples (--max-examples, --budget) reach them"), line
    assert line in result.render() and line in result.to_json()["caveats"]


def test_the_examples_end_at_the_first_failure_and_hypothesis_shrink_is_not_counted():
    # (a trial: "found in 17 examples" with --max-examples 10: hypothesis's own
    # shrink calls were counted as examples of the search)
    from fixtures.bugs import class14_epoch_boundary as c14

    result = fuzz(c14.BUGGY_DEFAULT_K, max_examples=10)
    assert result.found and result.failure.resume_at == [5]
    assert 1 <= result.examples <= 10
    assert result.distinct_schedules <= result.examples


def test_a_shrink_keeps_only_schedules_that_fail_as_the_failure_found_did():
    """A trial: a failure blamed on the optimizer's rate, found at 7, was
    shrunk to 2, where another cause (a validation its framework does not run
    again) failed, and the report lost the bug. A schedule counts as failing
    alike where it blames one of the components the failure blamed."""
    from resumecheck.fuzz import _alike
    from resumecheck.report import Finding, RunResult

    def run(*findings: Finding) -> RunResult:
        return RunResult(dropped=[], resume_at=[2], verdict="diverged", checkpoint="program",
                         diagnosis=list(findings))

    found = run(Finding("optimizer", "lr", status="confirmed"),
                Finding("rng", "set right", status="not_cause"))
    assert not _alike(run(Finding("scheduler", "last_epoch", status="confirmed")), found)
    assert not _alike(run(Finding("rng", "x", status="confirmed")), found)  # (not blamed there)
    assert _alike(run(Finding("optimizer", "lr"), Finding("scheduler", "s")), found)
    assert _alike(run(), run())  # (nothing blamed: any failure)
    assert _alike(run(Finding("scheduler", "s", status="confirmed")), run())
    # (trial 600: at 1, where the engine's own resume departed too, the component found
    # confirmed at 8 was left unjudged; the cause there was the framework's, and the
    # correct twin failed so too: not alike)
    unjudged = run(Finding("optimizer", "lr"))
    unjudged.engine_departs = True
    assert not _alike(unjudged, found)
    assert _alike(unjudged, run(Finding("optimizer", "lr")))  # (nothing confirmed there)
    assert "engine_departs" not in unjudged.to_json()


def test_a_failure_shrunk_from_the_first_schedule_that_failed_says_which():
    """Trial 200 read "minimal failing schedule: resume at 1, found after 1
    example tried" beside a program whose default resume point is 9, and could
    not tell where 1 came from."""
    result = fuzz("fixtures.bugs.class11_cursor_dropped:BUGGY", max_examples=5, budget=60)
    assert result.failure.resume_at == [1] and result.shrunk_from == [9]
    assert result.summary().startswith(
        "minimal failing schedule: resume at 1 (shrunk from resume at 9, the first to fail, "
        "by schedules of its own, not counted among the examples), found after 1 example "
        "tried"), result.summary()
    assert result.to_json()["shrunk_from"] == [9]
    # (trial 299: each epoch boundary is tried right after the default schedule, before
    # any drawn: 8 examples tried had never resumed at its one boundary, where it failed)
    drawn = fuzz("fixtures.bugs.class14_epoch_boundary:BUGGY_DEFAULT_K", max_examples=10)
    assert (drawn.failure.resume_at, drawn.shrunk_from, drawn.examples) == ([5], None, 2)


def test_a_failure_silent_in_the_loss_says_what_the_first_to_fail_showed():
    """Trial 473: a loss scaler's lost growth count shrank to a schedule where
    only the scale differed, and read as cosmetic; trial 469's first failing
    schedule had departed in the loss, which the summary did not say."""
    from resumecheck.fuzz import FuzzResult
    from resumecheck.report import RunResult

    def failed_at(k: int, loss: float) -> RunResult:
        return RunResult(dropped=[], resume_at=[k], verdict="diverged", checkpoint="program",
                         max_abs_loss_diff=loss)

    result = FuzzResult(target="t", steps=8, seed=0, max_interruptions=1, examples=2,
                        distinct_schedules=2, failure=failed_at(1, 0.0), minimal=True,
                        shrunk_from=[6], shrunk_from_loss_diff=0.25)
    assert result.summary().endswith(
        "; no step's loss differs at this schedule, where the first to fail, resume at 6, "
        "changed it by up to 0.25: the search keeps the smallest failing schedule, not the one "
        "that shows most, and at other resume points the same fault may change the training "
        "(resumecheck run --resume-at K checks one)"), result.summary()
    # (trial 601: where the first to fail changed no loss either, not "may change the
    # training ... shows one", as if a resume point that does had been seen)
    result.shrunk_from_loss_diff = 0.0
    assert result.summary().endswith(
        "; no step's loss differs at this schedule, nor at the first to fail, resume at 6: "
        "the state it loses may reach no step's loss, or reach one only from a resume point "
        "not tried (resumecheck run --resume-at K checks one)"), result.summary()
    # (trial 530: where no failing schedule tried changed a loss, not "may change the
    # training" as if another had)
    result.failing_losses = [0.0, 0.0, 0.0]
    assert result.summary().endswith(
        "; no step's loss differs at this schedule, nor at any of the 3 failing schedules "
        "tried: the state it loses may reach no step's loss, or reach one only from a resume "
        "point not tried (resumecheck run --resume-at K checks one)"), result.summary()
    # (trial 822: an EMA's lost count, which only evaluation reads, pointed at other points)
    assert result.failure is not None
    result.failure.first_divergent_quantity = ("parameter ema.module.w (of `ema`, a module no "
                                               "optimizer steps)")
    assert result.summary().endswith(
        "; no step's loss differs at this schedule, nor at any of the 3 failing schedules "
        "tried: what differs is a module no optimizer steps, which no training step's loss "
        "reads (an average of the weights): what uses it, an evaluation, shows it, which the "
        "check does not compare"), result.summary()
    result.failure.first_divergent_quantity = None
    result.failing_losses = [0.0, 0.25]
    assert "the same fault may change the training" in result.summary()
    result.failure = failed_at(1, 0.5)
    assert "no step's loss differs" not in result.summary()
    # through a search: a plateau scheduler whose state alone its load loses
    found = fuzz("fixtures.trust.end_state_only:BUGGY", max_examples=3, budget=60)
    assert found.failure is not None and found.failure.max_abs_loss_diff == 0
    assert "; no step's loss differs at this schedule" in found.summary(), found.summary()
    assert found.to_json()["shrunk_from_loss_diff"] == (0.0 if found.shrunk_from else None)


def test_a_failure_shrunk_from_another_says_what_the_first_to_fail_found_where_it_differs():
    """Trial 546: shrunk to resume at 1, where an EMA made again from the loaded
    weights equals the lost one, only its counter was named; at 16, the first to
    fail, every averaged weight was: fixing the counter alone fails there."""
    from resumecheck.fuzz import FuzzResult, _other_findings
    from resumecheck.report import Finding, RunResult

    def failed(k: int, *findings: Finding) -> RunResult:
        return RunResult(dropped=[], resume_at=[k], verdict="diverged", checkpoint="program",
                         first_divergent_step=k + 1, first_divergent_quantity="loss",
                         max_abs_loss_diff=0.1, diagnosis=list(findings))

    counter = Finding("ema", "n_averaged 0, expected 1", step=1, status="confirmed")
    weights = Finding("ema", "module.0.weight differs, max |Δ| 0.522", step=16,
                      status="confirmed")
    first, final = failed(16, weights), failed(1, counter)
    assert _other_findings(first, final) == [
        "ema: module.0.weight differs, max |Δ| 0.522 (confirmed)"]
    assert _other_findings(failed(16, counter), final) == []
    result = FuzzResult(target="t", steps=32, seed=0, max_interruptions=1, examples=1,
                        distinct_schedules=1, failure=final, minimal=True, shrunk_from=[16],
                        shrunk_from_loss_diff=0.1,
                        shrunk_from_diagnosis=_other_findings(first, final))
    assert ("\n  at the first to fail, resume at 16: ema: module.0.weight differs, max |Δ| "
            "0.522 (confirmed)\n") in result.render(), result.render()
    # (trial 894: a stream not judged at the first to fail read, bare, as the cause)
    stream = Finding("rng", "torch CPU stream differs from the uninterrupted run's at step 10",
                     step=10)
    assert _other_findings(failed(10, stream), final) == [
        "rng: torch CPU stream differs from the uninterrupted run's at step 10 (not judged)"]


def test_a_failure_whose_only_leads_are_unjudged_streams_beside_lost_uncompared_state_shrinks():
    """Trial 801: a scheduler the module kept itself, lost, found at 6 beside a
    torch stream one draw off (not judged); the shrink stopped at 5, where the
    stream still differed, and said that 1 to 4, failing for the same lost
    scheduler, failed otherwise. With the stream no lead, an earlier schedule
    that departs fails as it does; without the `not compared` clause, as before."""
    from resumecheck.fuzz import _alike
    from resumecheck.report import Finding, RunResult

    def run(step, diagnosis, explanation=""):
        return RunResult(dropped=[], resume_at=[step - 2], verdict="diverged",
                         checkpoint="program", first_divergent_step=step,
                         first_divergent_quantity="learning rate", first_divergent_key="lr",
                         diagnosis=diagnosis, explanation=explanation)

    stream = Finding("rng", "torch CPU stream differs from the uninterrupted run's at step 6",
                     step=6)
    lost = ("learning rate differs from step 7; not compared, and your checkpoint loses it: "
            "`params.sched` (see `not compared`); restored state differs in rng")
    found = run(7, [stream], lost)
    earlier = run(3, [])
    assert _alike(earlier, found)
    assert not _alike(earlier, run(7, [stream], "learning rate differs from step 7"))
    from dataclasses import replace

    put_right = replace(stream, status="not_cause")  # (as fuzz's own run marks it)
    assert _alike(earlier, run(7, [put_right], lost))
    # (while fuzz shrinks, a schedule's why has no `not compared` clause yet: the engine's
    # own full resume, departing too, says the declared components miss state)
    departs = run(7, [stream], "learning rate differs from step 7")
    departs.engine_departs = True
    assert _alike(earlier, departs)
    assert not _alike(earlier, run(7, [replace(stream, status="confirmed")], lost))


def test_the_first_two_epoch_ends_are_tried_together_where_a_schedule_may_restart_twice():
    """Trial 815: a correct Lightning program whose second restart at an epoch's
    end read the epoch before's order (Lightning recounts the first's end) passed
    fuzz's 100 examples, none of which restarted at both ends."""
    import types

    from resumecheck.fuzz import _explicit_schedules

    twice, once = (types.SimpleNamespace(max_interruptions=n) for n in (2, 1))
    assert _explicit_schedules([5], [8, 16], 24, 100, twice) == [[5], [8], [16], [8, 16]]
    assert _explicit_schedules([5], [8, 16], 24, 100, once) == [[5], [8], [16]]
    assert _explicit_schedules([8], [8], 24, 100, twice) == [[8]]  # (one end: no pair)
    assert _explicit_schedules([5], [8, 16], 24, 2, twice) == [[5], [8]]  # (within the examples)
