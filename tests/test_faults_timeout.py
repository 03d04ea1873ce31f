"""A step that hangs never hangs the check: it ends its run as `failed`
within the step timeout, in run, fuzz, verify() and the plugin; the fuzz
budget stops a run in progress; --noise-seeds has an upper limit."""

import json
import os
import signal
import sys
import tempfile
import threading
import time

import pytest

import resumecheck.engine as engine
from resumecheck import InvalidArgument, verify
from resumecheck.cli import main
from resumecheck.fuzz import fuzz
from resumecheck.settings import Settings

pytestmark = pytest.mark.e2e

HANGS = "fixtures.faults.programs:HANGS"
FAST = dict(drop="none", noise_seeds=0, check_determinism=False)


@pytest.fixture(autouse=True)
def _private_tmp(tmp_path, monkeypatch):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    yield
    assert [p.name for p in scratch.iterdir() if not p.name.startswith("torchinductor")] == []


def _sleep_line():
    import fixtures.faults.programs as programs
    with open(programs.__file__) as f:
        line = next(i for i, text in enumerate(f, 1) if "time.sleep(0.05)" in text)
    return f"{programs.__file__}:{line}"


_SLEEPS = _sleep_line()
"""Where the hung step sleeps (fixtures/faults/programs.py, ``Hangs``)."""


def _hung_run(report):
    (run,) = report.runs
    assert run.verdict == "failed"
    assert run.failure.startswith("step 5 took longer than")
    assert run.first_divergent_step == 5
    assert not report.equivalent
    return run


def test_verify_inprocess_a_hung_step_fails_its_run_within_the_timeout():
    began = time.monotonic()
    run = _hung_run(verify(HANGS, timeout=0.5, **FAST))
    assert time.monotonic() - began < 10
    assert "step 5 took longer than 0.5 s" in run.failure
    # (a trial: a --timeout set too small read as a failure of the program's)
    assert run.explanation.startswith("stopped by its time bound: step 5 took longer than "
                                      "0.5 s (the step timeout); it was at "), run.explanation
    assert run.explanation.endswith("give it a longer --timeout")
    # (a trial: a hung step did not say where it hung)
    assert f"; it was at {_SLEEPS}, in fault" in run.failure, run.failure


def test_a_load_that_hangs_is_stopped_at_its_phases_bound_and_says_which(monkeypatch):
    """Trial 435: with --timeout 5, a load() that hung ran for ten minutes, then
    read "stopped by the step timeout: restoring the checkpoint took longer
    than 600 s". A phase other than a step is bounded by the larger of
    --timeout and the phase bound (600 s; 2 s here), and now says so."""
    from fixtures.faults.programs import HANGS_IN_LOAD
    from resumecheck import segments

    HANGS_IN_LOAD.build({})  # (torch's lazy imports at a first build: not under the bound)
    monkeypatch.setattr(segments, "PHASE_TIMEOUT", 2.0)
    began = time.monotonic()
    report = verify("fixtures.faults.programs:HANGS_IN_LOAD", timeout=0.2, drop="none",
                    noise_seeds=0, check_determinism=False)
    assert time.monotonic() - began < 20
    own = report.full_resume
    assert own.verdict == "failed"
    assert own.explanation.startswith(
        "stopped by its time bound: restoring the checkpoint took longer than 2 s (its bound, "
        "the larger of --timeout and 2 s: --timeout alone bounds a step)"), own.explanation
    assert "step timeout" not in own.explanation


def test_verify_from_another_thread_is_bounded_too():
    out = {}
    worker = threading.Thread(target=lambda: out.update(report=verify(HANGS, timeout=0.5, **FAST)))
    worker.start()
    worker.join(60)
    assert not worker.is_alive(), "verify() hung in a thread"
    _hung_run(out["report"])


def test_the_default_timeout_scales_from_the_reference(monkeypatch):
    """Default: max(MIN_STEP_TIMEOUT, 20x the reference's slowest step). The
    rule is asserted against the reference this check measured: its steps are
    milliseconds, so the floor usually decides, but under load 20x the
    slowest can pass the floor, and then that must be the bound."""
    assert engine.MIN_STEP_TIMEOUT == 60
    monkeypatch.setattr(engine, "MIN_STEP_TIMEOUT", 0.4)
    references = []
    run_segment = engine.run_segment

    def spy(spec, *args, **kwargs):
        out = run_segment(spec, *args, **kwargs)
        if spec.name == "reference":
            references.append(out)
        return out

    monkeypatch.setattr(engine, "run_segment", spy)
    run = _hung_run(verify(HANGS, **FAST))
    (reference,) = references
    assert reference.slowest_step > 0
    bound = max(0.4, 20 * reference.slowest_step)
    assert run.failure.startswith(f"step 5 took longer than {bound:g} s"), run.failure


def test_timeout_zero_means_no_bound_and_bad_values_are_refused():
    for bad in (-1, float("nan"), float("inf"), "60", True):
        with pytest.raises(InvalidArgument, match="timeout="):
            verify(HANGS, timeout=bad, **FAST)
    healthy = verify("fixtures.faults.programs:HEALTHY", timeout=0, **FAST)
    assert healthy.equivalent


@pytest.mark.process
def test_cli_process_mode_kills_the_hung_interpreter(tmp_path, monkeypatch, capsys):
    # The CLI in this process (its own interpreter is not what is under test);
    # the hung segment is a fresh interpreter of its own, and is killed. Its
    # program has a SIGUSR1 handler of its own (a trial: the stack dump that
    # says where it hung was asked for on SIGUSR1, which called the program's
    # requeue hook instead and named no line).
    marker, requeued = tmp_path / "hanging.pid", tmp_path / "requeued"
    monkeypatch.setenv("FAULTS_MARKER", str(marker))
    monkeypatch.setenv("FAULTS_REQUEUED", str(requeued))
    began = time.monotonic()
    code = main(["run", "fixtures.faults.programs:HANGS_WITH_REQUEUE_HOOK", "--isolation",
                 "process", "--timeout", "0.5", "--drop", "none",
                 "--noise-seeds", "0", "--no-determinism-check", "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 1, err
    (run,) = json.loads(out)["runs"]
    assert run["verdict"] == "failed"
    assert run["failure"] == (f"step 5 took longer than 0.5 s (the step timeout); it was at "
                              f"{_SLEEPS}, in fault; its interpreter was killed")
    assert "Stack (most recent call first)" not in err  # (the dump that said where: not passed on)
    assert not requeued.exists(), "the program's own SIGUSR1 handler was called"
    hung = int(marker.read_text())
    assert hung != os.getpid()
    with pytest.raises(ProcessLookupError):
        os.killpg(hung, 0)
    assert time.monotonic() - began < 90


def test_cli_run_and_fuzz_with_a_tiny_timeout(capsys):
    code = main(["run", HANGS, "--timeout", "0.3", "--drop", "none", "--noise-seeds", "0",
                 "--no-determinism-check"])
    out, err = capsys.readouterr()
    assert code == 1 and "step 5 took longer than 0.3 s" in out
    code = main(["fuzz", HANGS, "--timeout", "0.3", "--quiet", "--max-examples", "5"])
    out, err = capsys.readouterr()
    assert code == 1
    assert "minimal failing schedule" in out and "failure: step 5 took longer than 0.3 s" in out


@pytest.mark.parametrize("isolation", ["inprocess", pytest.param("process",
                                                                 marks=pytest.mark.process)])
def test_a_step_longer_than_the_bound_stops_the_reference_in_either_isolation(isolation):
    """A trial: with a bound below every step, in-process stopped the
    reference every time, while fresh interpreters mostly went through: the
    parent timed a phase from when it read its start, and read several at
    once. A phase is now timed from the child's own clock readings."""
    from resumecheck import ReferenceFailed

    with pytest.raises(ReferenceFailed) as info:
        verify("fixtures.faults.programs:SLOW_STEPS", timeout=0.01, isolation=isolation, **FAST)
    assert info.value.timed_out and info.value.step == 1
    assert "step 1 took longer than 0.01 s (the step timeout)" in str(info.value)


def test_what_a_stopped_step_left_half_made_is_freed_without_a_traceback(capfd):
    """A trial: a step stopped inside a DataLoader iterator's constructor
    printed "Exception ignored in ... __del__ ... AttributeError" before the
    check's own error."""
    from resumecheck import ReferenceFailed

    hook = sys.unraisablehook
    with pytest.raises(ReferenceFailed, match="step 1 took longer than 0.2 s"):
        verify("fixtures.faults.programs:STOPS_IN_A_CONSTRUCTOR", timeout=0.2, **FAST)
    err = capfd.readouterr().err
    assert "Exception ignored" not in err and "Traceback" not in err, err
    assert sys.unraisablehook is hook  # (put back as the segment ends)
    # (outside a stopped segment such reports go where they always go)
    from fixtures.faults.programs import _HalfMade

    seen = []
    previous, sys.unraisablehook = sys.unraisablehook, seen.append
    try:
        half = object.__new__(_HalfMade)
        del half
    finally:
        sys.unraisablehook = previous
    assert len(seen) == 1 and isinstance(seen[0].exc_value, AttributeError)


def test_fuzz_budget_stops_a_run_in_progress():
    """No step timeout at all: only the budget can stop the hung example."""
    began = time.monotonic()
    result = fuzz(HANGS, budget=1.0, timeout=0, max_examples=5)
    took = time.monotonic() - began
    assert result.budget_exhausted and not result.found
    assert took < 30, f"fuzz ran {took:.1f} s with a 1 s budget"
    # (the look at what is not compared, after the search, is not made past the budget)
    assert result.undeclared is None and result.to_json()["undeclared"] is None
    # (trial 462: no example ended, so nothing was judged: inconclusive, not a pass)
    assert result.examples == 0 and result.inconclusive == [[3]]
    assert result.summary().startswith("inconclusive: no example ran to its end: the first, "
                                       "resume at 3, was stopped when the time budget (1 s) ran "
                                       "out"), result.summary()
    # (once: a trial read "the time budget ran out first" twice over)
    assert result.summary().count("time budget") == 1


def test_a_fuzz_pass_cut_short_still_says_what_no_run_checks():
    """Trial 253: a pass whose budget ran out before the default point's report
    said nothing of the script's own resume code, which `run` says it does not
    check; those caveats need no run."""
    from resumecheck.phrases import HASH_ORDER_UNCHECKED
    from resumecheck.report import RESUME_CODE_UNCHECKED

    result = fuzz("fixtures.userprog:TARGET", budget=0.2, max_examples=100)
    assert result.budget_exhausted and not result.found and result.undeclared is None
    assert result.caveats == [HASH_ORDER_UNCHECKED, RESUME_CODE_UNCHECKED], result.caveats
    lines = result.render().splitlines()
    assert lines[-2:] == [HASH_ORDER_UNCHECKED, RESUME_CODE_UNCHECKED], lines


def test_noise_seeds_has_an_upper_limit(capsys):
    assert engine.MAX_NOISE_SEEDS == 100
    code = main(["run", "--noise-seeds", "100000000"])
    err = capsys.readouterr().err
    assert code == 2 and "100 is the upper limit" in err
    with pytest.raises(InvalidArgument, match=r"noise_seeds=101: expected an int in 0\.\.100"):
        verify(HANGS, noise_seeds=101)


def test_process_runs_are_submitted_a_few_at_a_time(monkeypatch):
    """However many runs there are (--noise-seeds 100000000 once grew to 5.3 GB
    of queued work), only about the pool's width is submitted at once."""
    counts = {"submitted": 0, "done": 0, "most_outstanding": 0}
    lock = threading.Lock()

    def job(i):
        with lock:
            counts["done"] += 1
        return i

    real_submit = engine.ThreadPoolExecutor.submit

    def submit(self, fn, *args):
        with lock:
            counts["submitted"] += 1
            outstanding = counts["submitted"] - counts["done"]
            counts["most_outstanding"] = max(counts["most_outstanding"], outstanding)
        return real_submit(self, fn, *args)

    monkeypatch.setattr(engine.ThreadPoolExecutor, "submit", submit)
    jobs = Settings(isolation="process", jobs=4).jobs
    cancel = threading.Event()
    assert engine.parallel_map(job, iter(range(5000)), jobs, cancel) == list(range(5000))
    assert counts["most_outstanding"] <= 4 and not cancel.is_set()


def test_an_outer_interval_timer_survives_a_check():
    """A caller's own SIGALRM timer (pytest-timeout's, say) is put back afterwards."""
    fired = []
    previous = signal.signal(signal.SIGALRM, lambda *_: fired.append(True))
    try:
        signal.setitimer(signal.ITIMER_REAL, 30)
        _hung_run(verify(HANGS, timeout=0.3, **FAST))
        left, _ = signal.getitimer(signal.ITIMER_REAL)
        assert 0 < left < 30
        assert signal.getsignal(signal.SIGALRM) is not None and not fired
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_baseline_bounds_a_hung_determinism_run(capsys):
    code = main(["baseline", "fixtures.faults.programs:HANGS_ALWAYS", "--timeout", "0.3"])
    out = capsys.readouterr().out
    assert code == 1
    assert "an uninterrupted run failed: step 5 took longer than 0.3 s" in out
    assert "give it a longer bound (--timeout SECONDS; 0 turns it off)" in out


def test_a_reference_stopped_by_the_step_timeout_is_told_to_raise_it(capsys):
    """A trial: `--timeout 0.02` failed the reference with "Fix the program so
    that it trains without a restart first", where the bound was the user's."""
    code = main(["run", "fixtures.faults.programs:HANGS_ALWAYS", "--timeout", "0.3",
                 "--drop", "none", "--noise-seeds", "0"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "the uninterrupted reference run of fixtures.faults.programs:HANGS_ALWAYS was " \
           "stopped at step 5: step 5 took longer than 0.3 s (the step timeout)" in err
    assert "give it a longer bound (--timeout SECONDS" in err
    assert "Traceback" not in err


def test_a_program_with_its_own_sigalrm_handler_is_told_its_steps_are_not_bounded():
    """A re-check: a program whose SIGALRM watchdog took the signal hung the
    in-process check past its --timeout, with nothing said."""
    from resumecheck.errors import UnboundedStepsWarning

    before = signal.getsignal(signal.SIGALRM)
    with pytest.warns(UnboundedStepsWarning, match="installs a SIGALRM handler of its own"):
        report = verify("fixtures.faults.programs:ALARM_WATCHDOG", timeout=30, **FAST)
    assert report.equivalent  # judged as ever: only the bound is gone
    assert signal.getsignal(signal.SIGALRM) == before  # (put back when the runs end)
    signal.alarm(0)


def test_an_engine_resume_stopped_by_the_timeout_does_not_blame_the_declared_state():
    """A trial: with `--timeout 0.001`, a resumed run stopped at a step read
    "the declared components do not capture the program's state"."""
    report = verify(HANGS, timeout=0.3, noise_seeds=0, check_determinism=False,
                    drop=["global_step"])
    engine = report.engine_resume
    assert engine.verdict == "failed" and engine.explanation.startswith("stopped by its time")
    notice = report.incomplete_state_notice()
    assert notice.startswith("the engine's own full resume was stopped by its time bound: "
                             "step 5 took longer than 0.3 s"), notice
    assert "do not capture" not in notice and "give it a longer bound (--timeout" in notice
    assert notice.endswith("Ablations cannot be judged: inconclusive.")


def test_a_fuzz_search_whose_first_example_never_ends_is_inconclusive_not_a_pass():
    """Trial 462: a program that hung after every restart, under the default
    budget and step timeout (both 60 s), read "no failing schedule in 0 examples
    tried", exit 0: a green build on a hang."""
    from resumecheck.cli import main

    result = fuzz(HANGS, budget=0.5, max_examples=5)
    assert (result.examples, result.found, result.inconclusive) == (0, False, [[3]])
    assert result.summary() == (
        "inconclusive: no example ran to its end: the first, resume at 3, was stopped when the "
        "time budget (0.5 s) ran out, so nothing was judged; a step that hangs after a restart "
        f"shows as that (resumecheck run {HANGS} --resume-at 3 --timeout SECONDS says where it "
        "waits), and a program slower than the budget needs a larger --budget")
    assert main(["fuzz", HANGS, "--budget", "0.5", "--quiet"]) == 5
