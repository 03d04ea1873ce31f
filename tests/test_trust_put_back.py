"""Random state that differs right after a load, but that the program puts
back itself, is no gap; state a step overwrites without reading is one
(fixtures/trust/put_back.py)."""

from __future__ import annotations

from resumecheck import verify
from resumecheck.report import DIVERGED, IDENTICAL, LATENT, LOST_ON_RESAVE, PUT_BACK

SPEC = "fixtures.trust.put_back:"
FAST = {"noise_seeds": 0, "drop": "none", "check_determinism": False}


def test_a_generator_the_program_replays_from_the_epochs_start_is_put_back_not_latent():
    report = verify(SPEC + "GENERATOR", **FAST)
    own = report.full_resume
    assert own.checkpoint == "program" and own.verdict == IDENTICAL, own.explanation
    assert [(f.component, f.status) for f in own.diagnosis] == [("rng", PUT_BACK)]
    assert own.latent_gaps == []
    text = report.render()
    assert "latent" not in text and "unused after" not in text
    assert "diagnosis:" not in text  # (a note: nothing to diagnose in a passing report)
    assert ("note: rng: generator 'sampler' differs from the uninterrupted run's at step 7, "
            "which the program set right itself during step 8 (put back by the program: every "
            "later step matches, and it ends as in the uninterrupted run)") in text


def test_a_sampler_whose_state_dict_is_stale_after_the_load_is_lost_on_a_second_resume():
    """Every step matches; a save right after the load keeps the build's epoch
    start, and a restart from it departs: not equivalent (it was a latent gap)."""
    report = verify(SPEC + "SAMPLER", **FAST)
    own = report.full_resume
    assert own.verdict == IDENTICAL, own.explanation
    assert [(f.component, f.status) for f in own.diagnosis] == [("sampler", LOST_ON_RESAVE)]
    assert own.latent_gaps == [] and not report.equivalent


def test_a_stream_only_the_resumed_run_draws_from_is_never_latent():
    own = verify(SPEC + "FORGETS", **FAST).full_resume
    assert own.verdict == DIVERGED and own.first_divergent_step == 8, own.explanation
    assert own.first_divergent_quantity == "data (the samples consumed)"
    statuses = {f.component: f.status for f in own.diagnosis}
    assert "rng" in statuses and statuses["rng"] != LATENT, own.diagnosis
    assert own.latent_gaps == []


def test_a_generator_the_program_sets_right_beside_a_lost_stream_is_named_as_such():
    """A trial: in a run that departs, a loader generator the program replays
    from the epoch's start was named beside the lost stream, and its stream
    line said the load had not restored it."""
    own = verify(SPEC + "TORCH_LOST", **FAST).full_resume
    assert own.verdict == "diverged" and own.first_divergent_step == 8
    assert [f.component for f in own.diagnosis] == ["rng"]
    assert own.diagnosis[0].detail == (
        "torch CPU stream differs from the uninterrupted run's at step 7 (and generator "
        "'sampler', which the program set right itself during step 8)")
    assert [s.stream for s in own.stream_offsets] == ["torch"]


def test_a_failing_tests_message_calls_a_put_back_finding_a_note_as_the_report_does():
    """Trial 138: the pytest failure listed `diagnosis: rng: ... (put back by
    the program ...)` beside the real cause, where `resumecheck run` says `note:`."""
    from dataclasses import replace

    from resumecheck.assertions import describe_failure

    report = verify("fixtures.bugs.class01_scheduler_not_saved:BUGGY", **FAST)
    own = report.full_resume
    assert own.verdict == DIVERGED and own.diagnosis
    own.diagnosis.append(replace(own.diagnosis[0], component="rng", status=PUT_BACK,
                                 detail="generator 'loader' differs from the uninterrupted "
                                        "run's at step 8"))
    text = describe_failure(report)
    assert "    note: rng: generator 'loader' differs" in text, text
    assert "    diagnosis: rng:" not in text
    assert "    diagnosis: scheduler:" in text


def test_a_stream_two_components_hold_is_a_blind_spot_no_resume_point_shows_alone():
    """Trial 403: an RNGState beside hooks that saved and restored the same torch
    stream; each ablation was a blind spot told "a resume point where it has
    moved from there shows the difference", which none does while the other
    puts it back. Dropped together, the run departs."""
    from fixtures.trust import stream_twice

    report = verify(stream_twice.TARGET, drop=["rng", "hooks", ["rng", "hooks"]], noise_seeds=0,
                    check_determinism=False)
    runs = {tuple(r.dropped): r for r in report.runs}
    assert runs[("rng",)].explanation == (
        "blind spot: dropping rng changed no step after k=4: `hooks` also holds its random "
        "state there, bit for bit, and its restore puts it back, so dropping it alone shows "
        "nothing at any resume point: --drop rng,hooks checks them together; not evidence that "
        "it is saved"), runs[("rng",)].explanation
    assert "`rng` also holds" in runs[("hooks",)].explanation
    assert runs[("rng", "hooks")].verdict == "diverged"
    # (trial 857: the plugin's message told such a stream to add dropout, or to choose
    # another resume point, and said nothing of the component that holds it too)
    from resumecheck.errors import ComponentsNotExercised

    alone = verify(stream_twice.TARGET, drop=["rng", "hooks"], noise_seeds=0,
                   check_determinism=False)
    said = str(ComponentsNotExercised(alone, ["rng", "hooks"]))
    assert "\nrng: another declared component holds its random state there too, bit for bit, " \
        "and its restore puts it back: --drop rng,hooks checks them together" in said, said
    assert "dropout or augmentation" not in said and "make the program exercise" not in said, said


def test_a_blind_spot_set_again_in_part_names_the_component_that_holds_the_rest():
    """Trial 455: dropping `rng` of a Lightning program changed nothing because
    a callback saved torch's stream too; the why spoke only of the loader's
    generator, which the program seeded again, and not of the callback."""
    from fixtures.trust import stream_twice

    report = verify(stream_twice.RESEEDED_LOADER, drop=["rng"], noise_seeds=0,
                    check_determinism=False)
    [dropped] = [r for r in report.runs if r.dropped]
    assert dropped.blind_spot
    assert "generator 'loader' differs from the uninterrupted run's at step 4" \
        in dropped.explanation
    assert dropped.explanation.endswith(
        "; and `hooks` also holds part of its random state there, bit for bit, and its restore "
        "puts it back: --drop rng,hooks checks them together"), dropped.explanation
    # (the plain program, whose `rng` the hooks hold whole, keeps its own words)
    plain = verify(stream_twice.TARGET, drop=["rng"], noise_seeds=0, check_determinism=False)
    assert "part of its random state" not in plain.runs[-1].explanation
