"""How a diagnosis line is marked in a report."""

from __future__ import annotations


def test_a_stream_finding_of_a_failed_run_is_marked_not_judged():
    # (a trial: beside an out-of-memory failure, an unmarked "diagnosis: rng: generator
    # 'loader' differs" read as the cause; the program set it right in its next step)
    from resumecheck.report import Finding, RunResult

    failed = RunResult(dropped=[], resume_at=[9], verdict="failed", checkpoint="program")
    stream = Finding("rng", "generator 'loader' differs from the uninterrupted run's at step 9")
    assert stream.mark_in(failed, None) == (
        " (not judged: the run failed before any step could show whether it matters)")
    order = Finding("optimizer", "lists its parameters in another order than the run that "
                    "saved it")  # (a cause a load or a step may fail on: no such mark)
    assert order.mark_in(failed, None) == ""
    diverged = RunResult(dropped=[], resume_at=[9], verdict="diverged", checkpoint="program")
    # (a departed run: not the failure's words; no rerun decided it, and it says so)
    assert stream.mark_in(diverged, None) == " (not judged)"
