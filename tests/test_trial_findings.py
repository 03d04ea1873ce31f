"""What a new user's trial found unclear, each held to the clearer wording."""

from __future__ import annotations

from typing import Any

import pytest

from resumecheck import TargetError, verify
from resumecheck.baseline import check_baseline
from resumecheck.fuzz import FuzzResult
from resumecheck.program import load_target

from tests import programs


class _SeedsAtBuild:
    """Seeds its data order at build from its settings; declares no `config`."""

    def __init__(self, config: dict) -> None:
        import torch

        g = torch.Generator().manual_seed(config.get("seed", 7))
        self.order = torch.randperm(64, generator=g)
        self.model = torch.nn.Linear(1, 1)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.step = 0

    def components(self):
        from resumecheck import Attr

        return {"params": self.model, "optimizer": self.opt, "global_step": Attr(self, "step")}

    def train_step(self):
        import torch

        from resumecheck import StepOutput

        idx = self.order[self.step * 4:(self.step + 1) * 4]
        x = idx.float().reshape(-1, 1) / 64
        loss = torch.nn.functional.mse_loss(self.model(x), 2 * x)
        loss.backward()
        self.opt.step()
        self.opt.zero_grad()
        self.step += 1
        return StepOutput(loss=loss.detach(), samples=idx)


@pytest.mark.e2e
def test_the_incomplete_state_notice_names_the_seed_the_restart_does_not_get():
    from resumecheck import Target

    target = Target(factory=_SeedsAtBuild, steps=8, resume_at=(4,))
    report = verify(target, seed=3, drop="none", noise_seeds=0, check_determinism=False)
    notice = report.incomplete_state_notice()
    assert notice is not None and "--seed 3" in notice and "`config`" in notice
    # built with the launch settings, the engine's restart resumes: said as a fact
    assert report.launch_settings_matter is True
    assert notice.startswith("the restart lacks the run's settings: it is built from the "
                             "program's defaults, and the run was launched with --seed 3"), notice
    # without --seed the program's own settings are used: the resume is exact
    assert verify(target, drop="none", noise_seeds=0, check_determinism=False).equivalent


class _SeedsAtBuildSaves(_SeedsAtBuild):
    """The same, with its own checkpoint of what it declares."""

    def save(self, path):
        import torch

        torch.save({"model": self.model.state_dict(), "opt": self.opt.state_dict(),
                    "step": self.step}, f"{path}/ckpt.pt")

    def load(self, path):
        import torch

        state = torch.load(f"{path}/ckpt.pt")
        self.model.load_state_dict(state["model"])
        self.opt.load_state_dict(state["opt"])
        self.step = state["step"]


def test_the_engines_row_names_the_launch_settings_the_warning_names():
    """Trial 251: beside the WARNING that the restart lacks the launch settings,
    the engine's row said the components do not capture the program's state."""
    from resumecheck import Target

    target = Target(factory=_SeedsAtBuildSaves, steps=8, resume_at=(4,))
    report = verify(target, seed=3, drop="none", noise_seeds=0, check_determinism=False)
    assert report.launch_settings_matter is True
    engine = next(r for r in report.runs if r.checkpoint == "engine")
    assert "do not capture" not in engine.explanation, engine.explanation
    assert ("the engine restored every declared component, and its restart is built from the "
            "program's defaults, not with the run's launch settings (seed=3): built with them, "
            "it resumes (see the WARNING)") in engine.explanation, engine.explanation


def test_a_baseline_pass_says_which_checks_it_rests_on():
    report = check_baseline("fixtures.nondeterministic:SEEDED", steps=3)
    if not any(c.status == "skipped" for c in report.checks):
        pytest.skip("this program offers every check")
    head = report.render().splitlines()[1]
    ran = sum(c.status == "passed" for c in report.checks)
    assert head.startswith(f"baseline: TRUSTWORTHY as far as checked (only {ran} of {len(report.checks)} checks "
                           "ran: determinism, seeding; skipped:"), head


def test_a_missing_target_file_says_where_it_was_looked_for(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(TargetError) as info:
        load_target("check.py:TARGET")
    assert str(tmp_path / "check.py") in str(info.value)
    assert "current directory" in str(info.value)


def test_a_module_name_without_a_colon_is_read_from_the_current_directory(tmp_path,
                                                                            monkeypatch):
    """Trial 254: `resumecheck run check` (a module in the current directory) got
    the generic hint, where `check.py` was told what it holds."""
    import sys

    (tmp_path / "rc_wrapper_254.py").write_text(
        "import resumecheck\nfrom resumecheck.tiny import build\n\n"
        "TARGET = resumecheck.Target(factory=build)\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    with pytest.raises(TargetError) as info:
        load_target("rc_wrapper_254")
    assert "(rc_wrapper_254 holds the target TARGET)" in str(info.value), info.value
    assert "Name the target after a colon: rc_wrapper_254:TARGET" in str(info.value)


def test_counts_read_as_english():
    one = FuzzResult(target="t", steps=8, seed=None, max_interruptions=2, examples=1,
                     distinct_schedules=1)
    assert "in 1 example tried (1 distinct schedule;" in one.summary()
    two = FuzzResult(target="t", steps=8, seed=None, max_interruptions=2, examples=2,
                     distinct_schedules=2)
    assert "in 2 examples tried (2 distinct schedules;" in two.summary()


def test_the_epoch_boundaries_a_fuzz_resumed_at_read_as_steps_not_a_count():
    """A trial read 'boundaries covered: 15' as fifteen boundaries."""
    def said(**kw):
        return FuzzResult(target="t", steps=16, seed=None, max_interruptions=2, examples=3,
                          distinct_schedules=3, **kw).summary()
    assert ("(3 distinct schedules; of the program's epoch boundaries, 5, 10 and 15, the "
            "examples tried resumed at 15)") in said(boundaries=[5, 10, 15], boundaries_covered=[15])
    assert "epoch boundaries, 5, 10 and 15, the examples tried resumed at 5 and 10)" in said(
        boundaries=[5, 10, 15], boundaries_covered=[5, 10])
    assert "epoch boundaries, 5, 10 and 15, no example tried resumed at any)" in said(
        boundaries=[5, 10, 15])
    # (trial 436: fuzz's boundary 4, where run said an epoch ends inside step 5)
    assert ("of the program's epoch boundaries, 3, 6 and 10 (an epoch ends inside the step after "
            "3 and 6), the examples tried resumed at 6)") in said(
        boundaries=[3, 6, 10], inside=[3, 6], boundaries_covered=[6])
    assert ("(3 distinct schedules; the program declares no epoch boundary before its last "
            "step)") in said(epochs_declared=True)
    # (a trial read that of a program that declares none as saying it declares later ones;
    # later ones read a comma, and brackets inside brackets, as one fact)
    assert ("(3 distinct schedules; the program does not say where its epochs end, so no "
            "schedule was aimed at one: steps_per_epoch or epoch_boundaries say it, and "
            "epoch_boundaries = [] that it has none)") in said()
    # (a trial: "resume at 20 (an epoch boundary)" beside "no example tried resumed at any")
    from resumecheck.report import RunResult

    found = RunResult(dropped=[], resume_at=[10], verdict="diverged", checkpoint="program")
    assert ("no example tried resumed at any, and the shrink of the failure reached 10)"
            in said(boundaries=[5, 10, 15], failure=found, minimal=True))
    # (trial 511: "no example tried resumed at any" beside "resuming at 6 fails otherwise")
    earlier = RunResult(dropped=[], resume_at=[7], verdict="diverged", checkpoint="program")
    assert ("no example tried resumed at any; the search for an earlier failure, after them, "
            "resumed at 5)"
            in said(boundaries=[5, 10, 15], failure=earlier, minimal=True,
                    failing_otherwise=[{"resume_at": [5], "how": "end state alone"},
                                       {"resume_at": [6], "how": "end state alone"}]))


def test_a_failing_schedule_at_an_epoch_boundary_says_so():
    """A trial read "they resumed at none" beside a minimal schedule resuming
    at a boundary as said of that schedule."""
    from resumecheck.report import RunResult

    def said(schedule):
        failure = RunResult(dropped=[], checkpoint="program", resume_at=schedule,
                            verdict="diverged")
        return FuzzResult(target="t", steps=12, seed=None, max_interruptions=2, examples=1,
                          distinct_schedules=1, boundaries=[6, 12], failure=failure,
                          minimal=True).summary()
    assert said([6]).startswith("minimal failing schedule: resume at 6 (an epoch boundary), "
                                "found after 1 example tried")
    assert said([3, 6]).startswith("minimal failing schedule: resume at 3,6 (6 is an epoch "
                                   "boundary), found")
    assert said([5]).startswith("minimal failing schedule: resume at 5, found")


def test_a_failing_schedules_lines_follow_it_and_what_is_not_compared_comes_after():
    """A trial found the not-compared lines between the minimal failing
    schedule and its own indented lines."""
    from resumecheck.report import RunResult

    failure = RunResult(dropped=[], checkpoint="program", resume_at=[4], verdict="diverged",
                        first_divergent_step=5, first_divergent_quantity="loss",
                        explanation="loss differs from step 5", reproduce="resumecheck run t")
    result = FuzzResult(target="t", steps=8, seed=None, max_interruptions=2, examples=1,
                        distinct_schedules=1, failure=failure, minimal=True,
                        undeclared=["log (list: 2 numbers, ...)"])
    lines = result.render().splitlines()
    assert lines[1].startswith("minimal failing schedule: resume at 4")
    assert [line.split(":")[0] for line in lines[2:]] == [
        "  full resume (own save/load)", "  why", "  reproduce", "not compared"]


def test_a_factory_missing_a_package_is_told_to_install_it_not_to_fix_the_factory():
    """A trial: transformers' Trainer without accelerate raised ImportError in
    the factory, and the check said "Fix the factory"."""
    from resumecheck import Target, TargetError

    def needs_a_package(config):
        raise ImportError("Using the `Trainer` requires accelerate>=1.1.0")

    with pytest.raises(TargetError) as info:
        Target(factory=needs_a_package, steps=2).build({})
    assert info.value.hint.startswith("A package your program needs is missing or too old")
    assert "Fix the factory" not in str(info.value)

    def fails(config):
        raise ValueError("bad width")

    with pytest.raises(TargetError) as info:
        Target(factory=fails, steps=2).build({})
    assert info.value.hint.startswith("Fix the factory")


def test_an_interrupted_timing_does_not_say_nothing_was_judged():
    from resumecheck.cli import _interrupted_message

    assert _interrupted_message(2, "timing").startswith(
        "interrupted by SIGINT: no timing was reported;")
    assert "nothing was judged" in _interrupted_message(2, "run")
    # a trial: a fuzz search that had run examples, and a check that had finished
    # and was waiting to write its report, were both "nothing was judged"
    assert "the search was stopped before it ended" in _interrupted_message(2, "fuzz")
    # (trial 462: what the search had run was not said)
    assert _interrupted_message(2, "fuzz", None, (7, "example 7: resume at 3,9: identical")) \
        .startswith("interrupted by SIGINT: the search was stopped before it ended, after 7 "
                    "examples (the last: example 7: resume at 3,9: identical): no result is "
                    "reported;")
    done = _interrupted_message(2, "run", "full resume: EQUIVALENT")
    assert "had finished (full resume: EQUIVALENT), but its report was not written" in done
    assert "nothing was judged" not in done


def test_a_note_after_a_message_gets_its_full_stop():
    """A trial: '...temporary files removed The report file ... from before.'"""
    from resumecheck.cli import _said

    assert _said("temporary files removed", " The report file r.txt was not written.") == \
        "temporary files removed. The report file r.txt was not written."
    assert _said("done.", " More.") == "done. More." and _said("done", "") == "done"


def test_an_infinite_relative_difference_says_why():
    """A trial: 'relative inf' told the reader nothing."""
    from resumecheck.assertions import _describe_run
    from resumecheck.report import RunResult

    run = RunResult(dropped=[], resume_at=[3], verdict="diverged", first_divergent_step=4,
                    first_divergent_quantity="parameter w", max_abs_diff=0.3,
                    max_rel_diff=float("inf"), max_ulp_diff=2e9, max_abs_loss_diff=0.1)
    said = "\n".join(_describe_run(run, "full resume", None))
    assert "the largest relative inf (a value exactly 0 in the reference is not 0 here: a " \
        "gradient only this run gives, say, or one 0 but for rounding, the gradient of a " \
        "bias before a normalisation)" in said
    # (a trial: '1.35e+16 ULP' for a learning rate told the reader nothing either)
    assert "the largest in ULP over a million (far beyond rounding)" in said


def test_the_blind_spot_advice_covers_config_and_the_scheduler():
    """A trial: a blind spot on config got advice for rng, sampler_epoch,
    data_cursor and global_step only."""
    from types import SimpleNamespace

    from resumecheck.errors import ComponentsNotExercised

    report = SimpleNamespace(target="t", resume_at=[3], runs=[])
    said = str(ComponentsNotExercised(report, ["config", "scheduler"]))
    assert "run settings other than the defaults a fresh build starts from for config" in said
    assert "a learning rate that changes after the resume point for scheduler" in said
    # only the components named (a trial: a counter of its own got advice for rng,
    # the sampler, the data cursor, ... and none for it)
    assert "for rng" not in said
    own = str(ComponentsNotExercised(report, ["bad_evals"]))
    assert ("make the program exercise them (a step after the resume point that reads what "
            "the checkpoint would lose, for a component of your own)") in own
    # (trial 243: a blind spot another component put back was told only to exercise it)
    assert ("or choose another resume point, unless another declared component puts the same "
            "state back (a callback that saves the random streams: dropping one of the two "
            "then changes nothing)") in own
    # (a trial: the printed command exited 0 where the test failed, and nothing said so)
    assert "exits 0" not in own  # (no run to reproduce here)
    # (trial 256: rng, as restored because the program's own hooks put it back, was told
    # only to choose a resume point where it has moved)
    from resumecheck.errors import as_built_text

    put_back = SimpleNamespace(blind_spot=True, verdict="identical", dropped=["rng"],
                               explanation=as_built_text(["rng"], [6]), reproduce="r")
    report.runs = [put_back]
    said = str(ComponentsNotExercised(report, ["rng"]))
    assert ("rng: at the resume point its state is what the restore that drops it leaves "
            "(a fresh build's, or one another component puts back), bit for bit: dropping it "
            "puts in the same state, however the program uses it; choose a resume point where "
            "it has moved, unless another declared component puts it back (then none shows "
            "it: leave it out of the components this test asserts, the marker's "
            "drop=[...])") in said, said
    blind = SimpleNamespace(blind_spot=True, verdict="identical", dropped=["config"],
                            explanation="blind spot", reproduce="resumecheck run t --drop config")
    report.runs = [blind]
    said = str(ComponentsNotExercised(report, ["config"]))
    assert said.endswith("  reproduce: resumecheck run t --drop config\n  (a blind spot is not a "
                         "failed resume: the command exits 0, and its report names it in its "
                         "`blind spot:` line, `blind spots:` of several)"), said


def test_a_rank_streams_difference_is_said_in_words_not_a_crash():
    """A trial: a 2-rank program whose load left Python's stream alone (never
    drawn from) stopped the check with 'unexpected TypeError: unsupported format
    string passed to NoneType.__format__': a rank's rng ('rng[rank 1]') was
    described as a tensor of no magnitude."""
    import random

    from resumecheck.components import RNGState
    from resumecheck.state_diff import describe_difference

    state = RNGState(streams=["python", "torch"])
    before = state.state_dict()
    random.random()
    after = state.state_dict()
    said = describe_difference("rng[rank 1]", before, after, 6, None, None, unused=set())
    assert said is not None and said.startswith("Python random stream differs from the "
                                                "uninterrupted run's at step 6"), said


def test_a_fuzz_failure_whose_end_state_alone_differs_says_so_as_run_does():
    """A trial read `diverged from step 20 (state of data_cursor)` as a step
    that differed; `run` says `state of data_cursor at the end`."""
    from resumecheck.report import RunResult

    end = RunResult(dropped=[], resume_at=[13], verdict="diverged", checkpoint="program",
                    first_divergent_step=20, first_divergent_quantity="state of data_cursor")
    text = FuzzResult(target="t", steps=20, seed=None, max_interruptions=2, examples=3,
                      distinct_schedules=3, failure=end).render()
    assert ("full resume (own save/load): diverged in the state of data_cursor at the end "
            "(no step departs)") in text
    assert "from step 20" not in text
    step = RunResult(dropped=[], resume_at=[13], verdict="diverged", checkpoint="program",
                     first_divergent_step=15, first_divergent_quantity="loss")
    assert "diverged from step 15 (loss)" in FuzzResult(
        target="t", steps=20, seed=None, max_interruptions=2, examples=3, distinct_schedules=3,
        failure=step).render()


def test_an_entry_named_value_keeps_its_name_where_the_state_is_no_wrapped_value():
    """A trial's loss tracker (state_dict() {"count": ..., "value": ...}) read
    "(and 1 more entry of its state_dict() differs:  0, expected 0.785996)":
    the key was left out as a Value's wrapper key is. A Value or an Attr
    ({"value": ...}) still reads without it."""
    from resumecheck.state_diff import describe_difference

    text = describe_difference("loss_tracker", {"count": 8, "value": 0.785996},
                               {"count": 0, "value": 0.0}, 4)
    assert text == ("count 0, expected 8 (and 1 more entry of its state_dict() differs: "
                    "value 0.0, expected 0.785996)")
    assert describe_difference("step", {"value": 4}, {"value": 0}, 4) == "0, expected 4"
    assert describe_difference("settings", {"value": {"lr": 0.1}}, {"value": {"lr": 0.2}},
                               4) == "lr 0.2, expected 0.1"


def test_a_departure_whose_values_were_not_kept_is_not_said_to_hold_no_floats():
    """A trial's pytest failure on two ranks: a learning rate that departed was
    said to be 'what differs holds no floating-point values', beside a
    measured |Δloss|: its values at that step were not kept, only digests."""
    from resumecheck.assertions import _describe_run
    from resumecheck.report import DIVERGED, RunResult

    def figures(key: str, quantity: str) -> str:
        run = RunResult(dropped=[], resume_at=[6], verdict=DIVERGED, first_divergent_step=8,
                        first_divergent_quantity=quantity, first_divergent_key=key,
                        max_abs_loss_diff=0.000655)
        return next(line for line in _describe_run(run, "full resume", None)
                    if "reference vs resumed" in line)

    lr = figures("lr[rank 0]", "learning rate on rank 0")
    assert "holds no floating-point values" not in lr
    assert "its values at that step were not kept for comparison, only their digests" in lr
    assert "holds no floating-point values" in figures("state:global_step",
                                                       "state of global_step")


def test_a_tensor_that_came_back_as_none_says_so():
    """A trial's accumulated gradients, None after a load that restarted the
    cycle: the diagnosis read 'grads.0.bias differs'."""
    import torch

    from resumecheck.state_diff import describe_difference

    grads = {"0.bias": torch.ones(3), "0.weight": torch.ones(3, 2)}
    text = describe_difference("accum", {"grads": grads, "micro": 2},
                               {"grads": {"0.bias": None, "0.weight": None}, "micro": 0}, 10)
    assert "grads.0.bias None, expected a tensor" in text, text
    back = describe_difference("accum", {"grads": {"0.bias": None}},
                               {"grads": {"0.bias": torch.ones(3)}}, 10)
    assert back == "grads.0.bias a tensor of 3 values, expected None", back
    # (a trial: a generator's kept state, None after the load, read "differs")
    kept = describe_difference("epoch_order", {"value": torch.zeros(5056, dtype=torch.uint8)},
                               {"value": None}, 8)
    assert kept.endswith("None, expected a tensor of 5056 values"), kept


def test_a_collator_the_trainer_ran_before_the_look_after_its_restore_is_no_evidence():
    """A trial's Trainer: a mid-epoch resume is looked at once the first
    resumed batch was fetched, the collator run on it; its generator, which
    the checkpoint kept, held otherwise there, and was said to be one 'your
    checkpoint may lose'. Paths the framework runs before that look
    (``early``) are no evidence there; others still are."""
    from resumecheck.phrases import CHECKPOINT_MAY_LOSE
    from resumecheck.report import DIVERGED, RunResult
    from resumecheck.verdict import own_resume_ends

    run = RunResult(dropped=[], resume_at=[4], verdict=DIVERGED, checkpoint="program",
                    first_divergent_step=5, first_divergent_quantity="loss",
                    first_divergent_key="loss")
    named = {"data_collator.gen": "data_collator.gen (a torch.Generator ...)",
             "params.micro_steps": "params.micro_steps (int ...)"}
    at_end = {"data_collator.gen": ["g8"], "params.micro_steps": ["16"]}
    ref_after = {4: {"data_collator.gen": ["g4"], "params.micro_steps": ["8"]}}
    own_after = {4: {"data_collator.gen": ["g5"], "params.micro_steps": ["0"]}}
    said = own_resume_ends(named, at_end, dict(at_end), run, ref_after, own_after,
                           early=("data_collator", "train_dataset"))
    collator, counter = sorted(said)
    assert CHECKPOINT_MAY_LOSE not in collator, collator
    assert collator.endswith("your own resume ends with it as the uninterrupted run did")
    assert CHECKPOINT_MAY_LOSE in counter
    without = own_resume_ends(named, at_end, dict(at_end), run, ref_after, own_after)
    assert all(CHECKPOINT_MAY_LOSE in line for line in without)


def test_the_headline_of_a_save_that_loses_state_is_in_the_frameworks_words():
    """A trial's Lightning report: the row said "Lightning's checkpoint save right
    after Lightning's restore", its headline "your save() right after your load()"."""
    from resumecheck import verify
    from resumecheck.report import outcome_text

    from fixtures.trust import stale_snapshot

    report = verify(stale_snapshot.STALE, drop="none", noise_seeds=0, check_determinism=False)
    own = report.full_resume
    assert own.lost_on_resave()
    assert "but your save() right after your load(), and a restart" in outcome_text(report)
    said = "Lightning's checkpoint save right after Lightning's restore"
    own.explanation = own.explanation.replace("your save() right after your load()", said)
    assert f"matches, but {said}, and a restart from that checkpoint" in outcome_text(report)


def test_a_failure_whose_first_line_ends_with_a_colon_says_the_next_line_too():
    """A trial's report cut torch's "Error(s) in loading state_dict for
    Classifier:" there, and said nothing of which keys."""
    from resumecheck.phrases import first_line

    text = ('Error(s) in loading state_dict for Classifier:\n\tUnexpected key(s) in '
            'state_dict: "head.0.weight".\nmore')
    assert first_line(text) == ('Error(s) in loading state_dict for Classifier: Unexpected '
                                'key(s) in state_dict: "head.0.weight".')
    assert first_line("one\ntwo") == "one" and first_line("") == ""


def test_a_scheduler_one_step_behind_or_ahead_says_so():
    """A trial's checkpoint taken before the step's scheduler.step() was
    pointed only at its load ('one stepped in or after your load()')."""
    from resumecheck.state_diff import describe_difference

    behind = describe_difference("scheduler", {"last_epoch": 12, "_step_count": 13},
                                 {"last_epoch": 11, "_step_count": 12}, 12)
    assert behind.endswith("; one step behind: a checkpoint saved before the step's "
                           "scheduler.step(), or a load that steps it one time fewer"), behind
    ahead = describe_difference("scheduler", {"last_epoch": 12}, {"last_epoch": 13}, 12)
    assert ahead.endswith("; one step ahead: stepped once more in or after the load (a "
                          "scheduler made there with last_epoch= steps once as it is made), or "
                          "saved after it"), ahead
    assert "one step" not in describe_difference("scheduler", {"last_epoch": 8},
                                                 {"last_epoch": 0}, 8)
    # (trial 138: a scheduler made anew by the load, 0 against 1, read as saved a step early)
    fresh = describe_difference("scheduler", {"last_epoch": 1}, {"last_epoch": 0}, 1)
    # (trials 514, 532: fuzz shrank a scheduler never restored to a resume at 1, where
    # "one step behind" led, though a later resume point read "0, expected 8")
    assert fresh.endswith("; 0, as a fresh scheduler has it: one the load does not restore, "
                          "or one made anew after it (at this resume point, where the "
                          "uninterrupted run's scheduler had stepped once, one a step behind "
                          "reads the same, a checkpoint saved before the step's "
                          "scheduler.step(), or a load that steps it one time fewer, which a "
                          "later resume point tells apart)"), fresh
    # (trial 580: its scheduler stepped every third step: not "right after step 1" at 3)
    assert "right after step" not in describe_difference(
        "scheduler", {"last_epoch": 1}, {"last_epoch": 0}, 3)
    assert "one step behind:" not in fresh


def test_fuzz_does_not_send_a_reader_of_its_own_output_to_fuzz():
    """Trial 149: under fuzz's search of later resume points, a `not compared`
    line found as built at the default point ended "(resumecheck fuzz tries them)"."""
    from resumecheck.phrases import AS_BUILT_AT_RESUME, at_the_point

    line = "data.epoch (int: 0 at the build, 2 at the end; " + AS_BUILT_AT_RESUME.format(at=8) + ")"
    assert "(resumecheck fuzz tries them)" in line
    (said,) = at_the_point([line], [8])
    assert said.startswith("data.epoch (int: 0 at the build, 2 at the end; named at the default "
                           "resume point (8): at 8 the uninterrupted run held it as a fresh build")
    assert "resumecheck fuzz tries them" not in said
    assert said.endswith("shows whether it comes back (the examples above resumed at later "
                         "points too: where a step they ran reads it, it came back; whether a "
                         "declared component holds it, `resumecheck run --resume-at` a later "
                         "point shows))")
    # (a later trial: a declared component's state_dict() held it at those points)
    assert "there, too, it is not compared" not in said


class _NoEpochs(programs.Linear):
    epoch_boundaries: list[int] = []  # (its data has no epochs: it says so)


def test_a_program_that_says_it_has_no_epochs_is_not_told_to_say_where_they_end():
    """Trial 164: a GAN drawing fresh noise every step has no epochs, and fuzz
    told it that it does not say where they end, with no way to say so."""
    from resumecheck import Target
    from resumecheck.fuzz import fuzz

    found = fuzz(Target(factory=_NoEpochs, steps=6, resume_at=(3,)), max_examples=2)
    assert found.epochs_declared and found.boundaries == []
    assert "; the program declares epoch_boundaries = []: it has no epochs)" in found.render()
    assert "does not say where its epochs end" not in found.render()


class _EpochKeptAside(programs.OwnCheckpoint):
    """An epoch counter kept outside the declared components, moved at step 4
    and set again by the load from the step; the load loses the optimizer."""

    def __init__(self, config: dict) -> None:
        super().__init__(config)
        self.epoch = 0

    def train_step(self):
        out = super().train_step()
        self.epoch = self.step // 4
        return out

    def load(self, path: str) -> None:
        momentum = self.opt.state_dict()
        super().load(path)
        self.opt.load_state_dict(momentum)  # (the bug: the optimizer's state as built)
        self.epoch = self.step // 4


def test_fuzz_says_its_failures_not_compared_lines_of_the_minimal_schedule():
    """Trial 223: under a failure fuzz found, a `not compared` line of the
    minimal schedule's run read "named at this resume point" and "(resumecheck
    fuzz tries them)" in fuzz's own output."""
    from resumecheck import Target
    from resumecheck.fuzz import fuzz

    found = fuzz(Target(factory=_EpochKeptAside, steps=8, resume_at=(2,)), max_examples=3)
    assert found.failure is not None and found.failure.resume_at == [1]
    [line] = [u for u in found.undeclared if u.startswith("epoch ")]
    assert "named at the minimal schedule's resume point (1): at step 1 the uninterrupted run " \
           "held it as a fresh build does" in line, line
    assert "fuzz tries them" not in line and "this resume point" not in line
    assert "comes back (`resumecheck run --resume-at` a later point checks it);" in line


class _BestLossLostAndBeaten(programs.OwnCheckpoint):
    """A best loss, declared, that the checkpoint loses: the loss falls every
    step, so the first step after any restore beats the lost best and sets it
    as the uninterrupted run had it. No schedule fails; every resume is latent."""

    def __init__(self, config: dict) -> None:
        super().__init__(config)
        self.best = float("inf")

    def components(self):
        from resumecheck import Attr

        return {**super().components(), "best": Attr(self, "best")}

    def train_step(self):
        out = super().train_step()
        self.best = min(self.best, float(out.loss))
        return out


def test_a_fuzz_pass_names_the_latent_gaps_of_the_default_resume_point():
    """Trial 248: best weights a resume lost, which no step within the run read,
    passed fuzz with nothing said, where `run` at the default point named the
    latent gap."""
    from resumecheck import Target
    from resumecheck.fuzz import fuzz

    found = fuzz(Target(factory=_BestLossLostAndBeaten, steps=6, resume_at=(3,)),
                 max_examples=3)
    assert not found.found and found.latent_gaps == ["best"], found.latent_gaps
    assert found.to_json()["latent_gaps"] == ["best"]
    assert ("latent gap at the default resume point: best: the resume leaves it otherwise "
            "than the uninterrupted run") in found.render()


class _EpochScheduler:
    """A scheduler stepped at each epoch's end (4 steps) that changes no rate
    within the run: a drop of it ends one step behind, every step alike."""

    def __init__(self, config: dict) -> None:
        import torch

        torch.manual_seed(0)
        self.model = torch.nn.Linear(2, 1)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.sched = torch.optim.lr_scheduler.StepLR(self.opt, step_size=100)
        self.step = 0

    def components(self):
        from resumecheck import Attr

        # (as Lightning's adapter declares its schedulers: a list of their states)
        return {"params": self.model, "optimizer": self.opt,
                "scheduler": Attr(self, "sched", to_state=lambda s: [s.state_dict()],
                                  from_state=lambda states: self._loaded(states[0])),
                "global_step": Attr(self, "step")}

    def _loaded(self, state):
        self.sched.load_state_dict(state)
        return self.sched

    def train_step(self):
        import torch

        from resumecheck import StepOutput

        loss = self.model(torch.ones(1, 2) * self.step).pow(2).sum()
        loss.backward()
        self.opt.step()
        self.opt.zero_grad()
        self.step += 1
        if self.step % 4 == 0:
            self.sched.step()
        return StepOutput(loss=loss.detach())


def test_a_dropped_components_end_is_not_given_the_causes_of_a_lost_one():
    """Trial 263: `drop scheduler` ending one step behind was offered a save
    before scheduler.step() and a framework's restore as causes: it was dropped."""
    from resumecheck import Target

    report = verify(Target(factory=_EpochScheduler, steps=8, resume_at=(4,)),
                    drop=["scheduler"], noise_seeds=0, check_determinism=False)
    (dropped,) = [r for r in report.runs if r.dropped == ["scheduler"]]
    assert dropped.first_divergent_quantity == "state of scheduler", report.render()
    assert dropped.divergence_detail.startswith(
        "scheduler at the end: value[0].last_epoch 1, expected 2"), dropped.divergence_detail
    assert "one step behind" not in dropped.explanation, dropped.explanation


class _NoSchedulers(_EpochScheduler):
    """Declares its schedulers as a list, as Lightning's adapter does, and has none."""

    def components(self):
        from resumecheck import Attr

        found = super().components()
        self.schedulers: list = []
        found["scheduler"] = Attr(self, "schedulers")
        return found


def test_a_blind_spot_on_a_component_that_holds_nothing_says_so():
    """Trial 263: a Lightning module that gave no scheduler to Lightning read
    `drop scheduler` as a blind spot "as a fresh build's state ... a position
    that cycles": the component's state was an empty list throughout."""
    from resumecheck import Target

    report = verify(Target(factory=_NoSchedulers, steps=8, resume_at=(4,)),
                    drop=["scheduler"], noise_seeds=0, check_determinism=False)
    (dropped,) = [r for r in report.runs if r.dropped == ["scheduler"]]
    assert dropped.blind_spot
    assert dropped.explanation.startswith(
        "blind spot: scheduler holds nothing at the resume point and at the end: its state is "
        "empty there"), \
        dropped.explanation
    # (trial 387: the test's failure gave such a component no line of its own)
    from resumecheck import ComponentsNotExercised, assert_components_exercised

    with pytest.raises(ComponentsNotExercised) as caught:
        assert_components_exercised(Target(factory=_NoSchedulers, steps=8, resume_at=(4,)),
                                    drop=["scheduler"], noise_seeds=0, check_determinism=False)
    said = str(caught.value)
    assert "\nscheduler: it holds nothing at the resume point and at the end: a resume point " \
        "where it holds state checks it" in said, said
    assert "what would exercise each is said below" in said, said


class _SamplesWithReplacement:
    """Draws each step's indices from torch's stream, with replacement, and
    says so: it has no epochs (``epoch_boundaries = []``)."""

    epoch_boundaries: list = []

    def __init__(self, config: dict) -> None:
        import torch

        torch.manual_seed(0)
        self.x = torch.randn(64, 2)
        self.model = torch.nn.Linear(2, 1)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)

    def components(self):
        from resumecheck import RNGState

        return {"params": self.model, "optimizer": self.opt, "rng": RNGState(streams=("torch",))}

    def train_step(self):
        import torch

        from resumecheck import StepOutput

        idx = torch.randint(0, 64, (8,))
        loss = self.model(self.x[idx]).pow(2).mean()
        loss.backward()
        self.opt.step()
        self.opt.zero_grad()
        return StepOutput(loss=loss.detach(), samples=idx)


def test_a_program_without_epochs_is_not_told_it_read_its_epoch_again():
    """Trial 271: a program that declared no epochs (epoch_boundaries=[]), its
    stream dropped, read "the first of its epoch: the restart reads the epoch
    again from its start"."""
    from resumecheck import Target

    report = verify(Target(factory=_SamplesWithReplacement, steps=8, resume_at=(4,)),
                    drop=["rng"], noise_seeds=0, check_determinism=False)
    (dropped,) = [r for r in report.runs if r.dropped == ["rng"]]
    assert "what the uninterrupted run read at step 1" in dropped.explanation, \
        dropped.explanation
    assert "the first of its epoch" not in dropped.explanation, dropped.explanation
    assert "or draws them from a random stream set back to where it was then" in \
        dropped.explanation
    # (it says it has no epochs: no line asks where they end)
    assert not any("does not say where its epochs end" in w for w in report.not_checked)


def test_a_program_that_does_not_say_where_its_epochs_end_is_told_what_that_leaves():
    """Trial 363: a Trainer over a streaming dataset passed at the default
    point and departed at every point after its first epoch; fuzz said it
    did not know where the epochs end, run said nothing."""
    report = verify("fixtures.trust.eval_by_step:TARGET", drop="none", noise_seeds=0,
                    check_determinism=False)
    assert report.equivalent
    assert ("an epoch's end, or a restart inside a later epoch: the program does not say where "
            "its epochs end (steps_per_epoch, or epoch_boundaries = [] where its data has no "
            "epochs), so no resume point here is known to be either") in report.not_checked[0]


class _BlowsUpWithoutItsSchedule:
    """A rate of 1.0 for two steps, then a tiny one; a restart without its
    scheduler steps at 1.0 again, departs, and its loss reaches inf."""

    def __init__(self, config: dict) -> None:
        import torch

        torch.manual_seed(0)
        self.model = torch.nn.Linear(1, 1)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=1.0)
        self.sched = torch.optim.lr_scheduler.LambdaLR(
            self.opt, lambda s: 1.0 if s < 2 else 1e-9)

    def components(self):
        return {"params": self.model, "optimizer": self.opt, "scheduler": self.sched}

    def train_step(self):
        import torch

        from resumecheck import StepOutput

        loss = (self.model(torch.full((1, 1), 1000.0)) - 1.0).pow(2).mean()
        loss.backward()
        self.opt.step()
        self.opt.zero_grad()
        self.sched.step()
        return StepOutput(loss=loss.detach())


def test_an_ablation_that_departed_before_it_failed_is_exercised():
    """Trial 270: dropping the scheduler departed at the next step and later
    reached an infinite loss; assert_components_exercised said it "cannot tell
    whether scheduler is exercised" beside "it had departed ... from step 8"."""
    import resumecheck
    from resumecheck import Target

    target = Target(factory=_BlowsUpWithoutItsSchedule, steps=12, resume_at=(4,))
    report = resumecheck.assert_components_exercised(target, drop=["scheduler"],
                                                      noise_seeds=0, check_determinism=False)
    (dropped,) = [r for r in report.runs if r.dropped == ["scheduler"]]
    assert dropped.verdict == "failed" and dropped.first_divergent_step == 6, \
        (dropped.verdict, dropped.first_divergent_step, dropped.explanation)


class _Scaled:
    """Reads a setting at build (a dropout rate, here a scale) and declares its
    settings as `config`."""

    def __init__(self, config: dict) -> None:
        import torch

        torch.manual_seed(0)
        self.settings = {"scale": 1.0, **config}
        self.model = torch.nn.Linear(2, 1)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)

    def components(self):
        from resumecheck import Attr

        return {"params": self.model, "optimizer": self.opt, "config": Attr(self, "settings")}

    def train_step(self):
        import torch

        from resumecheck import StepOutput

        loss = self.model(torch.ones(1, 2) * self.settings["scale"]).pow(2).sum()
        loss.backward()
        self.opt.step()
        self.opt.zero_grad()
        return StepOutput(loss=loss.detach())


def test_a_departing_config_ablation_names_the_settings_it_dropped():
    """Trial 262: `drop config` read only "loss differs from step 13"; the
    restart had been built with the default dropout, 0.2 for the run's 0.3."""
    from resumecheck import Target

    report = verify(Target(factory=_Scaled, steps=6, resume_at=(3,), run_config={"scale": 2.0}),
                    drop=["config"], noise_seeds=0, check_determinism=False)
    (dropped,) = [r for r in report.runs if r.dropped == ["config"]]
    assert dropped.verdict == "diverged", dropped.explanation
    assert dropped.explanation.endswith(
        "; without `config` the restart is built from the program's defaults, not the run's "
        "launch settings (scale=2.0)"), dropped.explanation


def test_a_diagnosis_line_left_unjudged_says_so():
    """A trial read "config: seed 0, expected 3" with no mark beside marked
    lines, and could not tell what it meant: a finding no rerun decided says
    it was not judged."""
    from resumecheck.report import DIVERGED, IDENTICAL, Finding, RunResult

    config = Finding("config", "seed 0, expected 3", step=20)
    own = RunResult(dropped=[], resume_at=[20], verdict=DIVERGED, checkpoint="program",
                    diagnosis=[config])
    assert config.line_in(own, None) == "config: seed 0, expected 3 (not judged)"
    said = Finding("rng", "generator 'loader' differs; not judged: putting `rng` right ...")
    assert said.mark_in(own, None) == ""  # (its own words say it)
    for other in (RunResult(dropped=["config"], resume_at=[20], verdict=DIVERGED,
                            checkpoint="program"),
                  RunResult(dropped=[], resume_at=[20], verdict=IDENTICAL, checkpoint="program"),
                  RunResult(dropped=[], resume_at=[20], verdict=DIVERGED)):
        assert config.mark_in(other, None) == ""


def test_a_parameter_no_module_names_is_named_by_its_optimizers_component_among_several():
    """A trial's two optimizers: a gradient read "group0.param4@5", and the
    user could not tell whose group 0 it was."""
    from resumecheck import verify

    dropped = verify("tests.programs:TWO_OPTIMIZERS", drop=["opt_b"], noise_seeds=0,
                     check_determinism=False).runs[-1]
    assert dropped.dropped == ["opt_b"] and dropped.verdict == "diverged"
    assert dropped.largest_in["abs"] == "gradient of opt_b.group0.param0", dropped.largest_in


def test_one_path_given_alone_as_what_is_not_state_is_one_path():
    """Every target takes `not_state="state.tokens"` as one path, as the framework
    targets did (a plain Target kept the string, and read its characters)."""
    from resumecheck import Target
    from resumecheck.frameworks.transformers import trainer_target

    assert Target(factory=dict, not_state="state.tokens").not_state == ("state.tokens",)
    assert Target(factory=dict, not_state=["a", "b"]).not_state == ("a", "b")
    assert trainer_target(lambda args: None, not_state="trainer.n").not_state == ("trainer.n",)


def test_an_infinite_relative_difference_held_by_several_says_so():
    """Trial 454: three gradients held values 0 in the reference that differed;
    the one named read as the one that differs most."""
    from resumecheck.compare import Difference
    from resumecheck.verdict import Comparison

    cmp = Comparison()
    for key, rel in (("grad:net.3.bias", float("inf")), ("grad:net.3.weight", float("inf")),
                     ("grad:net.0.weight", 0.5), ("grad:net.6.weight", float("inf")),
                     ("grad:net.3.bias", float("inf"))):  # (again at a later step)
        cmp.add(key, Difference(False, max_abs=0.1, max_rel=rel, max_ulp=1e9))
    assert cmp.largest_in_words()["rel"] == "gradient of net.3.bias and in 2 more quantities alike"
    one = Comparison()
    one.add("grad:b", Difference(False, max_abs=0.1, max_rel=float("inf"), max_ulp=1e9))
    one.add("grad:w", Difference(False, max_abs=0.2, max_rel=3.0, max_ulp=1e9))
    assert one.largest_in_words() == {"abs": "gradient of w", "rel": "gradient of b",
                                      "ulp": "gradient of b"}


def test_a_runs_json_says_the_noise_word_the_table_prints():
    """Trial 453: a row the table marked `silent` read `"plausible": true` in the JSON."""
    from resumecheck.report import RunResult

    def noise(**fields: Any) -> Any:
        return RunResult(dropped=["history"], resume_at=[32], **fields).to_json()["noise"]

    assert noise(verdict="diverged", plausible=True, max_abs_loss_diff=0.0) == "silent"
    assert noise(verdict="diverged", plausible=True, max_abs_loss_diff=0.1) == "plausible"
    assert noise(verdict="diverged", plausible=False, max_abs_loss_diff=0.9) == "gross"
    assert noise(verdict="identical", blind_spot=True) == "blind spot"
    assert noise(verdict="diverged") is None  # (no noise runs: the table's `-`)


def test_each_save_is_given_a_new_path_and_each_load_the_path_it_resumes_from():
    """Trial 456: the caveat said nothing of the paths a check gives save() and
    load(), so a load() that picks the latest checkpoint of a directory looked
    checked. The caveat now says each save() gets a new path of its own: held here."""
    import os

    from fixtures.userprog import Trainer, target_of

    paths: list[tuple[str, str, bool]] = []  # (not at module level: the check watches that)

    class Recorded(Trainer):
        def save(self, path: str) -> None:
            paths.append(("save", path, os.path.exists(path)))
            super().save(path)

        def load(self, path: str) -> None:
            paths.append(("load", path, os.path.exists(path)))
            super().load(path)

    report = verify(target_of(Recorded, "t", steps=8, resume_at=(3, 6)), drop="none", noise_seeds=0,
                    check_determinism=False)
    from resumecheck.report import RESUME_CODE_UNCHECKED
    assert report.equivalent and RESUME_CODE_UNCHECKED in report.render().splitlines()
    saves = [path for what, path, _ in paths if what == "save"]
    assert len(saves) >= 2 and len(set(saves)) == len(saves), paths
    assert not any(existed for what, _, existed in paths if what == "save"), paths
    assert all(path in saves for what, path, _ in paths if what == "load"), paths


def test_a_departure_in_the_loss_beside_matching_samples_says_the_inputs_were_not_compared():
    """Trial 458: noise the loader's workers drew anew after the restart changed
    the model's inputs; the step returned its samples, which matched, and the
    report said `loss` first without saying the inputs went uncompared."""
    from fixtures.trust import samples_hide_inputs as prog

    fast = {"drop": "none", "noise_seeds": 0, "check_determinism": False}
    own = verify(prog.SAMPLES, **fast).full_resume
    assert (own.verdict, own.first_divergent_key) == ("diverged", "loss")
    assert ("; the samples it consumed match: a step that returns its samples is judged by them, "
            "so what the model was called with (an augmentation of them, drawn in the dataset or "
            "in the loader's workers) goes unchecked; leave `samples` out of the StepOutput to "
            "compare the model's inputs instead") in own.explanation
    # (and what it promises holds: without samples the inputs depart first)
    inputs = verify(prog.INPUTS, **fast).full_resume
    assert inputs.first_divergent_key == "inputs:0" and "samples it consumed" not in \
        inputs.explanation
    # (trial 594: a test's failure said its figures were of "every quantity that differs",
    # where the augmented inputs, the first to differ, were not compared)
    from resumecheck.assertions import describe_failure

    said = "a step that returns its samples has its model inputs, what an augmentation makes"
    assert said in describe_failure(verify(prog.SAMPLES, **fast))
    assert said not in describe_failure(verify(prog.INPUTS, **fast))
    # (a cause found is not buried under it: a lost stream, confirmed)
    rng = verify("fixtures.bugs.class05_rng_not_saved:BUGGY", **fast).full_resume
    assert rng.first_divergent_key == "loss" and "samples it consumed" not in rng.explanation


def test_streams_level_is_null_where_not_looked_at():
    """Trial 460: `streams_level` false on a run whose streams matched bit for bit
    read as a stream that differed; it is looked at only for a run that departs."""
    report = verify("fixtures.bugs.class05_rng_not_saved:BUGGY", drop="none", noise_seeds=0,
                    check_determinism=False)
    own, engine = report.runs
    assert (own.verdict, engine.verdict) == ("diverged", "identical")
    assert own.streams_level is False and engine.streams_level is None
    assert report.to_json()["runs"][1]["streams_level"] is None


def test_noise_runs_that_stop_early_are_said_not_dropped_unsaid():
    """Trial 463: EarlyStopping ended the other seeds' runs before the last step;
    they were left out, and the noise column read `-` with nothing said."""
    spec = "fixtures.trust.stops_early:TARGET"
    both = verify(spec, drop=["global_step"], noise_seeds=2, seed=1, check_determinism=False)
    assert both.noise["band"] is None and both.noise["why"] == (
        "the noise runs with another seed did not run to the end (seed = 2, 3: step 6: "
        "train_step() raised StopIteration: early stopping: val_loss did not improve in 3 "
        f"evaluations (at {__import__('fixtures.trust.stops_early').trust.stops_early.__file__}"
        ":33, in train_step)): a program that stops on its own (early stopping) stops another "
        "seed's run at another step")
    assert f"noise: not measured: {both.noise['why']}" in both.render().splitlines()
    one = verify(spec, drop=["global_step"], noise_seeds=2, check_determinism=False)
    assert one.noise["seeds"] == [1] and one.noise["band"] is not None
    assert one.noise["why"].startswith("the noise run with another seed did not run to the end "
                                       "(seed = 2: step 6:")
    assert one.noise["why"].endswith(" (the band is of the others)")
    assert any(line.startswith("noise: measured from fewer runs than asked: the noise run ")
               for line in one.render().splitlines())


def test_a_factory_that_hands_back_its_module_is_told_so_not_that_builds_start_alike():
    """Trial 466: a script keeping its model and optimizer at module level, its
    factory returning the imported module: in-process the second run started
    from the first's trained weights, and the refusal said "two new builds start
    alike ... the difference arises inside step 1"."""
    from resumecheck.errors import NondeterministicBaseline

    with pytest.raises(NondeterministicBaseline) as caught:
        verify("fixtures.trust.script_target:TARGET", drop="none", noise_seeds=0)
    said = str(caught.value)
    assert ("What differs first: a second build hands back the objects the first built "
            "(`params`, `optimizer`): your factory returns what it made before") in said, said
    assert "two new builds start alike" not in said
    # (what it advises holds: a factory that reloads the module builds anew)
    assert verify("fixtures.trust.script_target:RELOADED", drop="none", noise_seeds=0).equivalent


def test_parameters_untraced_beside_traced_gradients_are_said_and_not_claimed_to_match():
    """Trial 472: parameters in a plain dict and a declared Adam: gradients were
    traced, parameters were not, no `not traced` line said so, and a row read
    "every step's loss, gradients and parameters match"."""
    report = verify("fixtures.trust.dict_params:TARGET", drop=["global_step"], noise_seeds=0,
                    check_determinism=False)
    assert report.untraced == [
        "parameters: no torch.nn.Module was found as the `params` component or the program's "
        "`model` attribute (the gradients are traced through the declared optimizer), so "
        "parameters are compared at the end of a run only, not at every step (hold them in an "
        "nn.Module, or give the program a `model` attribute that is one)"]
    [dropped] = [r for r in report.runs if r.dropped]
    assert dropped.explanation.startswith(
        "the final state of global_step differs (every step's loss and gradients match; its "
        "parameters were compared at the end only)"), dropped.explanation


def test_the_stream_drawn_in_the_departing_step_is_told_first():
    """Trial 472: dropping `rng` at 7, the data generator, drawn only at epochs'
    starts, was told first of a departure in step 8's loss, which the dropout
    generator drawn in that step made."""
    report = verify("fixtures.trust.two_generators:TARGET", drop=["rng"], noise_seeds=0,
                    check_determinism=False)
    [dropped] = [r for r in report.runs if r.dropped]
    assert dropped.first_divergent_quantity == "loss"
    assert [o.stream for o in dropped.stream_offsets] == ["generator dropout", "generator data"]


def test_a_rate_set_by_a_scheduler_made_after_the_load_names_no_scheduler_line_that_is_not_there():
    """Trial 471: a scheduler constructed after the optimizer's load set the rate
    back to its warm-up start; the optimizer's finding ended "or a scheduler whose
    own state the checkpoint does not hold goes on from a fresh start (see its own
    line)", where the scheduler's state came back and no such line was printed."""
    import torch

    from fixtures.userprog import Trainer, target_of

    class SchedulerMadeAfterLoad(Trainer):
        def restore(self, ckpt: dict) -> None:
            super().restore(ckpt)
            sched = self.sched.state_dict()
            self.sched = torch.optim.lr_scheduler.LambdaLR(  # (its constructor steps once)
                self.opt, lambda s: min(1.0, (s + 1) / self.cfg.warmup))
            self.sched.load_state_dict(sched)

        def components(self) -> dict:
            return {**super().components(), "scheduler": self.sched}

    report = verify(target_of(SchedulerMadeAfterLoad, "t", resume_at=(3,)), drop="none",
                    noise_seeds=0, check_determinism=False)
    own = report.full_resume
    [finding] = [f for f in own.diagnosis if f.component == "optimizer"]
    assert "only its learning rate differs, which a scheduler sets" in finding.detail
    assert "see its own line" not in finding.detail
    assert not [f for f in own.diagnosis if f.component == "scheduler"]


def test_a_generators_state_in_a_component_of_the_programs_own_is_said_to_be_one():
    """Trial 484: "data_cursor: gen differs (confirmed)" gave no hint of what
    gen was; a uint8 tensor of a CPU generator's size is said to be one."""
    import torch

    from resumecheck.state_diff import describe_difference

    g = torch.Generator().manual_seed(1)
    before = g.get_state()
    torch.randperm(10, generator=g)
    said = describe_difference("data_cursor", {"gen": before, "epoch": 1},
                               {"gen": g.get_state(), "epoch": 1}, 8)
    assert said == ("gen differs (a torch generator's state: it has drawn otherwise, or been "
                    "seeded otherwise, than the uninterrupted run's)"), said
    mask = describe_difference("m", {"mask": torch.zeros(8, dtype=torch.uint8)},
                               {"mask": torch.ones(8, dtype=torch.uint8)}, 8)
    assert mask == "mask differs", mask  # (a byte mask is no generator)


def test_beside_a_lost_stream_that_augments_matching_indices_say_the_inputs_went_uncompared():
    """Trials 538, 541: augmentation (Python's random) and masking (a collator's
    generator) drawn from a stream the checkpoint lost; the step returned its
    sample indices, which matched, and `loss` first read as the data alike."""
    own = verify("fixtures.trust.augment_from_python:TARGET", drop="none",
                 noise_seeds=0).full_resume
    assert own.verdict == "diverged" and own.first_divergent_key == "loss"
    assert [f.component for f in own.diagnosis] == ["rng"]
    assert ("; the samples it returned match at step 5: the model's inputs, not compared where "
            "a step returns its samples, may differ all the same") in own.explanation



def test_a_framework_targets_matching_samples_are_not_told_to_leave_samples_out():
    """Trial 577: a Lightning target, which has no StepOutput of its own, was
    told to "leave `samples` out of the StepOutput" (hand-built records)."""
    from types import SimpleNamespace

    from resumecheck.evidence import SAMPLES_STAND_FOR_DATA, _samples_stand_for_data
    from resumecheck.report import RunResult

    record = SimpleNamespace(step=5, digests={"data": "d", "loss": "l"}, exact=[])
    run = RunResult(dropped=[], resume_at=[4], verdict="diverged", first_divergent_step=5,
                    first_divergent_quantity="loss", first_divergent_key="loss")
    own = SimpleNamespace(records=[record], boundaries={})
    assert _samples_stand_for_data(own, run) == SAMPLES_STAND_FOR_DATA
    framework = SimpleNamespace(records=[record],
                                boundaries={"restored_by": "Lightning's restore"})
    said = _samples_stand_for_data(framework, run)
    assert said.startswith("; the samples it consumed match") and "StepOutput" not in said
    assert said.endswith("the framework's adapter returns the samples of its batch, and no "
                         "setting of it compares the model's inputs instead")


def test_a_noise_run_stopped_by_the_framework_is_said_in_its_first_clause_whole():
    """Trial 646: a Lightning loop's stop, cut at 240 characters, ended the
    noise line with "..., or, w"; the advice after the first clause is the
    failing run's, not another seed's."""
    from resumecheck.verdict import _noise_failed_text

    stop = ("step 12: Lightning's loop ended after step 11: its own stop (max_steps, max_epochs, "
            "the end of the data, or a callback that stops it, early stopping) came first; give "
            "the target at least as many steps as the check runs, or, where it stopped, fewer")
    said = _noise_failed_text([(1, stop, 12), (2, "x " * 200, 7)], "seed")
    assert said == (
        "the noise runs with another seed did not run to the end (seed = 1: step 12: "
        "Lightning's loop ended after step 11: its own stop (max_steps, max_epochs, the end of "
        "the data, or a callback that stops it, early stopping) came first; seed = 2: "
        + "x " * 119 + "x ...): a program that stops on its own (early stopping) stops another "
        "seed's run at another step"), said


def test_the_items_of_the_list_named_first_are_counted_as_its_items():
    """Trial 724: a list of 12 losses where 24 were expected read "value[0] ...
    (and 1 more entry of its state_dict() differs, among them value[1] ...;
    value[2] ...)": one entry said, two listed, all of one list."""
    from resumecheck.state_diff import describe_difference

    ref = {"value": [float(i) for i in range(24)], "n": 3}
    said = describe_difference("history", ref, {"value": [i + 0.5 for i in range(12)], "n": 3}, 12)
    assert said == "value[0] 0.5, expected 0.0 (and 23 more of its items differ)", said
    said = describe_difference("history", ref, {"value": [i + 0.5 for i in range(24)], "n": 4}, 12)
    assert said.startswith("n 4, expected 3 (and 1 more entry of its state_dict() differs"), said


def test_a_scheduler_one_step_behind_at_the_end_may_be_one_the_load_does_not_restore():
    """Trial 854: a plateau scheduler the checkpoint never held, resumed where
    the uninterrupted run's had stepped once, ended one step behind and read
    only "a checkpoint saved before the step's scheduler.step(), or a load that
    steps it one time fewer" in fuzz's why; right after a load it would read 0."""
    from resumecheck.state_diff import describe_difference

    ended = describe_difference("scheduler", {"last_epoch": 5}, {"last_epoch": 4}, 40,
                                after_load=False)
    assert ended.endswith("a load that steps it one time fewer, or one the load does not "
                          "restore where the uninterrupted run's had stepped once by the resume "
                          "point (a later resume point tells them apart)"), ended
    loaded = describe_difference("scheduler", {"last_epoch": 5}, {"last_epoch": 4}, 8)
    assert "does not restore where" not in loaded, loaded
