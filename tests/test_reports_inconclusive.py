"""A full resume the engine cannot judge is said to be inconclusive everywhere
it is reported, never "NOT EQUIVALENT": the headline, the Markdown summary, the
pytest failure, the session table and the CLI's exit status (5)."""

from __future__ import annotations

import pytest

from resumecheck import cli
from resumecheck.assertions import describe_failure, require_equivalent
from resumecheck.environment import fingerprint
from resumecheck.errors import ResumeNotEquivalent
from resumecheck.pytest_plugin import session_markdown
from resumecheck.report import (
    DIVERGED, IDENTICAL, INCONCLUSIVE, OWN_EQUIVALENT, Report, RunResult,
)

WHY = "per-rank state could not be mapped (rng[rank 1])"


def _report(verdict: str) -> Report:
    full = RunResult(dropped=[], resume_at=[4], verdict=verdict, checkpoint="program",
                     nproc=1, explanation=WHY, reproduce="resumecheck run t.py:T")
    return Report(target="t.py:T", steps=8, resume_at=[4], seed=0, isolation="process",
                  tolerance={"mode": "close", "rtol": None, "atol": None},
                  determinism={"checked": False}, noise={"seeds": [], "band": None},
                  environment=fingerprint(1), runs=[full], nproc=2)


@pytest.mark.parametrize("verdict, outcome", [
    (INCONCLUSIVE, "INCONCLUSIVE"), (DIVERGED, "NOT EQUIVALENT"), (IDENTICAL, "EQUIVALENT"),
])
def test_the_headline_says_what_the_evidence_decided(verdict, outcome):
    report = _report(verdict)
    assert report.outcome == outcome
    assert f"full resume: {outcome}\n" in report.render("table")
    assert report.render("markdown").startswith(f"### resumecheck: full resume {outcome} — ")


def test_an_inconclusive_resume_fails_an_assertion_without_calling_it_not_equivalent():
    report = _report(INCONCLUSIVE)
    text = describe_failure(report)
    assert text.startswith("resume could not be judged (inconclusive): t.py:T")
    assert "not equivalent" not in text
    with pytest.raises(ResumeNotEquivalent):  # nothing proved equivalent: the test fails
        require_equivalent(report)


def test_the_session_summary_counts_inconclusive_checks_apart():
    entries = [{"nodeid": f"t::{v}", "report": _report(v).to_json()}
               for v in (INCONCLUSIVE, DIVERGED, IDENTICAL)]
    text = session_markdown(entries)
    assert text.startswith("### resumecheck: 3 check(s), 1 NOT equivalent, 1 inconclusive")
    row = next(line for line in text.splitlines() if line.startswith("| `t::inconclusive`"))
    assert "**inconclusive**" in row and "NOT equivalent" not in row


@pytest.mark.parametrize("verdict, code", [(INCONCLUSIVE, 5), (DIVERGED, 1), (IDENTICAL, 0)])
def test_the_cli_exit_status_tells_inconclusive_from_not_equivalent(
        verdict, code, monkeypatch, capsys):
    import resumecheck.engine

    monkeypatch.setattr(resumecheck.engine, "run_check",
                        lambda *args, **kwargs: _report(verdict))
    assert cli.main(["run", "resumecheck.tiny:TARGET"]) == code
    captured = capsys.readouterr()
    assert f"full resume: {_report(verdict).outcome}" in captured.out
    if verdict == INCONCLUSIVE:
        assert "NOT" not in captured.out + captured.err


def test_the_session_summary_says_when_the_declared_state_is_incomplete():
    engine = RunResult(dropped=[], resume_at=[4], verdict=DIVERGED, checkpoint="engine",
                       first_divergent_step=5, first_divergent_quantity="loss")
    ablation = RunResult(dropped=["rng"], resume_at=[4], verdict=INCONCLUSIVE)
    blind = RunResult(dropped=["sampler_epoch"], resume_at=[4], verdict=IDENTICAL,
                      blind_spot=True)
    report = _report(DIVERGED)
    report.tolerance = {"mode": "bitwise", "rtol": None, "atol": None}
    report.runs += [engine, ablation, blind]
    assert report.declared_state_complete is False  # (what the terminal's WARNING says)
    text = session_markdown([{"nodeid": "t::incomplete", "report": report.to_json()}])
    row = text.splitlines()[-1]
    assert "declared state incomplete: ablations not judged" in row
    assert row.endswith("| sampler_epoch; inconclusive: rng |")


def test_a_long_reason_under_the_plot_is_wrapped_whole_words_never_cut_off():
    pytest.importorskip("matplotlib")
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from resumecheck.plot import divergence_figure

    why = ("the declared components do not capture the program's state, so dropping rng "
           "shows nothing that can be told apart from what is lost anyway; " * 4).strip()
    report = _report(IDENTICAL)
    report.runs.append(RunResult(dropped=["rng"], resume_at=[4], verdict=INCONCLUSIVE,
                                 explanation=why))
    fig = divergence_figure(report)
    notes = next(t for t in fig.texts if t.get_gid() == "notes")
    lines = notes.get_text().splitlines()
    assert lines[0].startswith("inconclusive: drop rng: the declared components")
    assert "dropping rng shows nothing that" in " ".join(line.strip() for line in lines)
    said = " ".join(lines).split()
    assert set(said) <= set(f"inconclusive: drop rng: {why} ...".split())  # whole words only
    assert said[-1] == "..."  # (cut short, and says so: the report holds it whole)
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    box = notes.get_window_extent(canvas.get_renderer())
    assert box.x0 >= 0 and box.x1 <= fig.bbox.width and box.y0 >= 0


@pytest.mark.parametrize("undeclared", [[], ["epoch_gen_state (Tensor: 1 tensor, 5056 values, "
                                             "that the run changed and no declared component "
                                             "holds: declare it ...)"]])
def test_a_restart_that_draws_is_not_said_lost_however_complete_where_state_is_undeclared(
        undeclared):
    """A trial: the engine's restart set its loader's generator from an
    epoch's kept state that no component declared, and drew where the
    uninterrupted run did not; the WARNING said the draw sent the run elsewhere
    "however complete the checkpoint", while declaring that state made the
    engine's restart exact. With state named as not compared, it says the draw
    may come from there."""
    from resumecheck.report import StreamOffset

    own = RunResult(dropped=[], resume_at=[8], verdict=IDENTICAL, checkpoint="program")
    drawn = StreamOffset(stream="generator loader", step=10, draws=49, unit="32-bit words",
                         detail="generator `loader` is 49 32-bit words ahead of the "
                                "reference's at the start of step 10")
    engine = RunResult(dropped=[], resume_at=[8], verdict=DIVERGED, checkpoint="engine",
                       first_divergent_step=9, first_divergent_key="data",
                       first_divergent_quantity="data (the samples consumed)",
                       stream_offsets=[drawn])
    report = Report(target="t.py:T", steps=18, resume_at=[8], seed=0, isolation="inprocess",
                    tolerance={"mode": "bitwise", "rtol": None, "atol": None},
                    determinism={"checked": False},
                    noise={"seeds": [], "band": None}, environment=fingerprint(1),
                    runs=[own, engine], undeclared=undeclared)
    warning = next(line for line in report.render("table").splitlines()
                   if line.startswith("WARNING"))
    assert warning.startswith(f"WARNING: {OWN_EQUIVALENT} The restart draws from a random "
                              "stream where the uninterrupted run does not")
    if undeclared:
        assert ("It may draw so from state no component declares (the `not compared` lines "
                "name what the program keeps outside their states: `epoch_gen_state`)") in warning
        assert ("otherwise a draw the uninterrupted run does not make sends the continuation "
                "elsewhere however complete the checkpoint") in warning
    else:
        assert ". A draw the uninterrupted run does not make sends the continuation elsewhere "\
               "however complete the checkpoint" in warning
    # (trial 266: a base seed no worker read was not the cause; said where it is not)
    assert ("however complete the checkpoint, where a step reads what the stream gives after "
            "it (dropout, an augmentation, a shuffle; a DataLoader's base seed that no worker "
            "reads changes nothing, and then what departs is elsewhere)") in warning


@pytest.mark.parametrize("quantity", ["learning rate", "loss"])
def test_a_warning_whose_engine_resume_departs_first_in_the_rate_names_the_schedules_settings(
        quantity):
    """Trial 142: a warm-up length changed for the resumed Trainer's run read
    only as lost state ("Something the components do not declare is lost")."""
    def run(checkpoint: str) -> RunResult:
        return RunResult(dropped=[], resume_at=[4], verdict=DIVERGED, checkpoint=checkpoint,
                         first_divergent_step=5, first_divergent_quantity=quantity,
                         first_divergent_key="lr" if quantity == "learning rate" else "loss",
                         explanation=f"{quantity} differs from step 5", reproduce="r")

    report = Report(target="t.py:T", steps=8, resume_at=[4], seed=0, isolation="inprocess",
                    tolerance={"mode": "bitwise", "rtol": None, "atol": None},
                    determinism={"checked": False}, noise={"seeds": [], "band": None},
                    environment=fingerprint(1), runs=[run("program"), run("engine")])
    notice = report.incomplete_state_notice() or ""
    # (trial 641: no launch settings, so the restart is built as the run was: its rate
    # followed a count of the program's own, and "other settings" could not be the cause)
    alike = ("The learning rate is the first to differ, in a restart built with the run's own "
             "settings: what sets the rate reads state the components do not hold (a count of "
             "yours that the rate follows, a scheduler made anew from other state), or a "
             "schedule's own settings (a warm-up length, a LambdaLR's function and what it "
             "reads), in no state_dict(), come out otherwise in the restart's build. Something "
             "the components do not declare may be lost")
    assert (alike in notice) == (quantity == "learning rate"), notice
    report.launched_with = {"warmup": 6}
    notice = report.incomplete_state_notice() or ""
    settings = ("The learning rate is the first to differ: a schedule's own settings (a warm-up "
                "length, a LambdaLR's function and what it reads) are in no state_dict(), so a "
                "restart built with other settings than the run's departs however complete the "
                "checkpoint. Something the components do not declare may be lost")
    assert (settings in notice) == (quantity == "learning rate"), notice
    assert notice.startswith("the declared components do not capture the program's state: "
                             f"the engine restored every one of them and the run still differs "
                             f"from step 5 ({quantity})."), notice


def test_an_engine_restore_that_lacks_a_file_of_the_programs_own_says_why():
    """Trials 648, 666: a Trainer subclass's load read a file its own save
    wrote beside the Trainer's, which the engine's checkpoint lacks; the
    WARNING read like a second fault in the load."""
    from resumecheck.phrases import FRAMEWORK_RESUME, RESTORING

    failure = ("checkpoint load failed (/tmp/t/engine-restore): the HuggingFace Trainer's loop "
               "raised FileNotFoundError: [Errno 2] No such file or directory: "
               "'/tmp/t/engine-restore/extra_state.json'")
    own = RunResult(dropped=[], resume_at=[4], verdict=IDENTICAL, checkpoint="program",
                    explanation="resumes bit for bit", reproduce="r")
    engine = RunResult(dropped=[], resume_at=[4], verdict="failed", checkpoint="engine",
                       explanation=f"{RESTORING} failed: {failure}", failure=failure,
                       reproduce="r")
    report = Report(target="t.py:T", steps=8, resume_at=[4], seed=0, isolation="inprocess",
                    tolerance={"mode": "bitwise", "rtol": None, "atol": None},
                    determinism={"checked": False}, noise={"seeds": [], "band": None},
                    environment=fingerprint(1), runs=[own, engine])
    notice = report.incomplete_state_notice() or ""
    # (trial 707: a Trainer target, which declares no component of the user's, was told to)
    # (trial 802: the callback first read as the way, impractical for an optimizer's tensors)
    assert ("extra_state.json'. The engine's checkpoint holds what the declared components "
            "hold; your load reads a file beside them that only your own save writes: keep "
            "what it holds in a TrainerCallback that is an ExportableState (restored with "
            "restore_callback_states_from_checkpoint=True), which the target declares as "
            "`callbacks`, for the engine's restart and the ablations to run as your own "
            "resume does") in notice, notice
    # (trial 802: "your checkpoint keeps what the declared components miss", which they did not)
    beside = ("Your own resume is equivalent; the engine's restart, which ablations use, stopped "
              "for want of that file alone, which says nothing of state the declared components "
              "miss.")
    assert notice.endswith(beside) and "declared components miss;" not in notice, notice
    own.explanation = f"resumes bit for bit ({FRAMEWORK_RESUME}, through the Trainer's own resume)"
    notice = report.incomplete_state_notice() or ""
    assert notice.endswith(beside) and "keeps what the declared" not in notice, notice
    engine.failure = failure.replace("the HuggingFace Trainer's loop raised", "load() raised")
    engine.explanation = f"{RESTORING} failed: {engine.failure}"
    assert "your own save writes: declare what it holds as a component, for the engine's " \
        "restart and the ablations to run" in (report.incomplete_state_notice() or "")
    # (trial 893: the other way offered, a load that goes on without the file, helped nothing)
    assert "a load made to go on without the file lets them run, but without what it holds" \
        in (report.incomplete_state_notice() or "")


def test_an_ablation_that_resumes_alike_names_the_restore_that_departs():
    """Trial 671: the engine's restore of a loader's generator came after
    Lightning made the epoch's iterator; leaving `rng` out resumed bit for bit,
    and the WARNING blamed the fit loop's counts."""
    def run(dropped: list[str], verdict: str, step: int | None,
            checkpoint: str = "engine") -> RunResult:
        return RunResult(dropped=dropped, resume_at=[10], verdict=verdict, checkpoint=checkpoint,
                         first_divergent_step=step,
                         first_divergent_quantity=None if step is None else
                         "data (the samples consumed)", explanation="e", reproduce="r")

    report = Report(target="t.py:T", steps=20, resume_at=[10], seed=0, isolation="inprocess",
                    tolerance={"mode": "bitwise", "rtol": None, "atol": None},
                    determinism={"checked": False}, noise={"seeds": [], "band": None},
                    environment=fingerprint(1),
                    runs=[run([], IDENTICAL, None, "program"), run([], DIVERGED, 11),
                          run(["params"], INCONCLUSIVE, 11), run(["rng"], INCONCLUSIVE, None)])
    notice = report.incomplete_state_notice() or ""
    # (trial 677: said last, after a WARNING that opened on the fit loop's counts: it leads,
    # after what says the program's own resume is equivalent, trial 832)
    assert notice.startswith(OWN_EQUIVALENT), notice
    notice = notice.removeprefix(OWN_EQUIVALENT + " ")
    assert notice.startswith("Left out of the engine's restore, `rng` resumes as the "
                             "uninterrupted run, every step and the end alike: the engine's "
                             "own restore of it is what departs: put in after what reads it "
                             "(an iterator the framework made before, from a generator it "
                             "holds), or what its state_dict() saves is not where the run was "
                             "(a position counted early or late), where a fresh build's holds "
                             "the right place here (an epoch's start). "), notice
