"""Assertions for test suites: the engine's verdict as a readable failure.

``assert_resume_equivalent(target, ...)`` fails with a diff that reads like a
diff: which run diverged, from which step and in which quantity, by how
much, the diagnosis, the blind spots, and the exact command that reproduces
it. ``assert_components_exercised`` fails when dropping a listed component
changes nothing: a test that can no longer see that component's bugs.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from typing import Any

from resumecheck.engine import verify
from resumecheck.errors import (
    ComponentsNotExercised, DrawnAtImportWarning, LatentGapWarning, LostStateWarning,
    ResumeNotEquivalent, SideFilesWarning,
)
from resumecheck.phrases import (
    CANNOT_RESTORE_WITHOUT, first_line, lost_through_framework, lost_uncompared, side_files,
)
from resumecheck.program import Target
from resumecheck.components import split_rank_name
from resumecheck.report import FAILED, Report, RunResult, lossy_first, three_figures

__all__ = [
    "ComponentsNotExercised",
    "ResumeNotEquivalent",
    "assert_components_exercised",
    "assert_resume_equivalent",
    "components_to_drop",
    "describe_failure",
    "require_equivalent",
    "require_exercised",
]


def require_equivalent(report: Report, _depth: int = 0) -> Report:
    """Raise ResumeNotEquivalent unless the report's full resume is equivalent;
    warn (``LatentGapWarning``) when it is, with a latent gap, at the caller's
    caller (``_depth`` more frames out: a caller of this module's own)."""
    __tracebackhide__ = True
    if not report.equivalent:
        raise ResumeNotEquivalent(report, describe_failure(report))
    full = report.full_resume
    if full is not None and full.latent_gaps:  # (a pass that hides a known gap says so)
        warnings.warn(LatentGapWarning(report.target, list(full.latent_parts().values()),
                                       list(full.resume_at), full.reproduce),
                      stacklevel=3 + _depth)
    lost = lost_uncompared(report.undeclared)
    if full is not None and lost:  # (so does one whose own resume ends without some state)
        warnings.warn(LostStateWarning(report.target, lost, full.reproduce,
                                       not lost_through_framework(report.undeclared)),
                      stacklevel=3 + _depth)
    if full is not None and report.drawn_at_import and report.isolation == "inprocess" \
            and not report.nproc:  # (and one whose module drew at import: trial 143)
        warnings.warn(DrawnAtImportWarning(report.target, list(report.drawn_at_import),
                                           full.reproduce), stacklevel=3 + _depth)
    beside = side_files(full.side_files) if full is not None else None
    if full is not None and beside:  # (and one whose save() keeps state beside its checkpoint)
        warnings.warn(SideFilesWarning(report.target, beside, full.reproduce),
                      stacklevel=3 + _depth)
    return report


def require_exercised(report: Report) -> Report:
    """Also raise ComponentsNotExercised, naming them, if any ablation is a
    blind spot, inconclusive or failed before it departed (none passes: nothing
    showed them exercised)."""
    __tracebackhide__ = True
    # (a trial: its warning pointed at the plugin's line, not the test's)
    require_equivalent(report, _depth=1)
    blind = [",".join(r.dropped) for r in report.blind_spots]
    unknown = [",".join(r.dropped) for r in report.inconclusive]
    # (a trial: an ablation that failed passed as exercised: nothing showed it; trial 270:
    # one that had departed bit for bit before it failed was told "cannot tell": it is)
    # (trial 281: one whose drop alone failed the restore is needed: exercised)
    failed = [",".join(r.dropped) for r in report.runs if r.dropped and r.verdict == FAILED
              and r.first_divergent_step is None
              and CANNOT_RESTORE_WITHOUT not in r.explanation]
    if blind or unknown or failed:
        raise ComponentsNotExercised(report, blind, unknown, failed)
    return report


def components_to_drop(components: Iterable[str] | str | None) -> list[str] | str:
    """``verify``'s drop argument for an exercised-components check (None: all)."""
    if components is None or components == "all":
        return "all"
    return [components] if isinstance(components, str) else list(components)


def assert_resume_equivalent(target: Target | str | None = None, **options: Any) -> Report:
    """Fail unless the full-state resume of ``target`` is equivalent; return the report.

    ``options`` are ``verify()``'s (steps, resume_at, drop, isolation,
    tolerance, seed, noise_seeds, threads); ``drop`` defaults to ``"none"``
    here: only the full resume decides.
    """
    __tracebackhide__ = True
    options.setdefault("drop", "none")
    return require_equivalent(verify(target, **options))


def assert_components_exercised(
    target: Target | str | None = None,
    components: Iterable[str] | None = None,
    **options: Any,
) -> Report:
    """Fail, naming them, if dropping any of ``components`` (default: all) changes
    nothing; ``drop=`` names them as ``components=`` does. A resume that is not
    equivalent fails first, as ``assert_resume_equivalent`` fails it (trials 506
    and 509 read that failure beside a summary of every component exercised)."""
    __tracebackhide__ = True
    given = options.pop("drop", None)
    options["drop"] = components_to_drop(components if components is not None else given)
    return require_exercised(verify(target, **options))


def describe_failure(report: Report) -> str:
    """A failed check as a diff: reference vs resumed, evidence, how to reproduce."""
    said = ("resume could not be judged (inconclusive)" if report.outcome == "INCONCLUSIVE"
            else "resume is not equivalent")
    lines = [
        f"{said}: {report.target}, {report.steps} steps, resume at "
        f"{','.join(map(str, report.resume_at))}, {report.tolerance_text}, "
        f"{report.restarts_text} (torch {report.environment.get('torch')}, "
        f"{report.environment.get('threads')} thread(s))"
    ]
    incomplete = report.incomplete_state_notice()
    for notice in (incomplete, report.unseeded_notice(), report.set_order):
        if notice:  # (as the command line prints them: a diagnosis says "see the WARNING")
            lines.append(f"  WARNING: {notice}")
    for run in report.runs:
        if run.verdict in ("identical", "close") and not run.dropped \
                and not run.lost_on_resave():
            continue
        if run.dropped and run.verdict in ("diverged", "inconclusive"):
            continue  # the component doing its job; or nothing to judge (said above)
        lines.extend(_describe_run(run, report.label_of(run), incomplete, bool(report.nproc)))
    blind = [",".join(r.dropped) for r in report.blind_spots]
    if blind:
        lines.append(f"  blind spots (dropping changed nothing): {', '.join(blind)}")
    # what the check could not compare (often what the WARNING is about)
    lines.extend(f"  not compared: {what}" for what in report.undeclared)
    return "\n".join(lines)


def _figures_where(run: RunResult) -> str:
    """Which differences a diverged run's figures are the largest of."""
    step = run.first_divergent_step
    if (run.first_divergent_quantity or "").startswith("state of"):  # no step departed
        return (f"over every quantity that differs, in the steps and in the end state "
                f"(step {step})")
    compared = run.trajectory.compared if run.trajectory is not None else []
    # (trial 594: its augmented inputs, the first to differ, were no quantity compared)
    unseen = ("; a step that returns its samples has its model inputs, what an augmentation "
              "makes of them, not compared" if "data" in compared and "inputs" not in compared
              else "")
    return (f"where it departs (every quantity compared that differs at step {step} or "
            f"before{unseen})")


def _one_number(quantity: str) -> bool:
    """Whether a quantity in words (``RunResult.largest_in``) is one number a
    step has (its loss, loss scale or learning rate), not a tensor's many."""
    return quantity.split(" on rank ", 1)[0] in ("loss", "loss scale", "learning rate")


def _describe_run(run: RunResult, label: str, incomplete: str | None,
                  ranks: bool = False) -> list[str]:
    # (trial 565: "identical" under "resume is not equivalent" read as a false alarm)
    lines = [f"  {label}: {run.verdict}"
             + (", but a save right after the load departs" if run.lost_on_resave() else "")]
    if run.failure:
        lines.append(f"    failure: {first_line(run.failure)}")
    if run.first_divergent_step is not None and run.verdict == "diverged":
        what = run.first_divergent_quantity or ""
        # (trial 165: "step 16, state of best_acc" of state wrong from the restore
        # at 8 on, which every step left unread: compared at the end only)
        where = (f"{what} at the end (after step {run.first_divergent_step}: every step "
                 "matched)" if what.startswith("state of")
                 else f"step {run.first_divergent_step}, {what}")
        lines.append(f"    first divergence: {where}")
        # (a trial: "relative 639" beside sample indices said of nothing what it measured)
        of = {figure: f" in {what}" for figure, what in run.largest_in.items()}
        # (trial 515: the gradient of a bias before a BatchNorm, 0 but for rounding, read
        # as the run's largest change)
        # (trial 730 read the rounding as the cause of embedding rows that only the resumed
        # run's predicted tokens gave a gradient: it is one case)
        relative = ("inf (a value exactly 0 in the reference is not 0 here: a gradient only "
                    "this run gives, say, or one 0 but for rounding, the gradient of a bias "
                    "before a normalisation)"
                    if run.max_rel_diff == float("inf") else _g(run.max_rel_diff))
        if run.max_rel_diff is not None and 1 < run.max_rel_diff < float("inf") \
                and not _one_number(run.largest_in.get("rel", "")):
            # (trials 441, 442: "relative 41.3 in parameter w" read as w changed 41-fold;
            # trial 537: not of a loss scale, 32768 against 1048576, which is one number)
            of["rel"] = of.get("rel", "") + " (of one value: one near 0 makes it large)"
        if of.get("abs", "").startswith(" in state of"):
            # (trial 582: a count 5 against 12 beside "the largest |Δ| 0.0882", its mean's)
            of["abs"] += " (of its floating-point entries: a count is compared exactly)"
        ulp = run.max_ulp_diff
        ulps = (f"over a million{of.get('ulp', '')} (far beyond rounding)"
                if ulp is not None and ulp > 1e6 else f"{_g(ulp)}{of.get('ulp', '')}")
        # (trial 447 read "each its own largest" three times: three maxima, each named)
        figures = (f"{_figures_where(run)}: the largest |Δ| {_g(run.max_abs_diff)}"
                   f"{of.get('abs', '')}; the largest relative {relative}{of.get('rel', '')}; "
                   f"the largest in ULP {ulps}"
                   if run.max_abs_diff is not None else _unmeasured(run))
        lines.append(
            # (trial 405: on many ranks it is the mean loss's, as the table's column says)
            f"    reference vs resumed: max |Δ{' mean' if ranks else ''} loss| "
            f"{_g(run.max_abs_loss_diff)}; {figures}"
        )
    # (trial 138: a note read "diagnosis:" here, as the CLI's not)
    for finding in lossy_first(run.diagnosis, incomplete):
        label = "note" if finding.put_back() else "diagnosis"
        lines.append(f"    {label}: {finding.line_in(run, incomplete)}")
    lines.append(f"    why: {run.explanation}")
    lines.append(f"    reproduce: {run.reproduce}")
    return lines


def _unmeasured(run: RunResult) -> str:
    """Why a departed run has no |Δ| figures: what differs holds no floats, or
    (a learning rate, a loss, a tensor) its values at that step were not kept
    for comparison, only their digests (a trial's learning rate on two ranks
    was said to hold no floating-point values)."""
    kind = split_rank_name(run.first_divergent_key or "")[0].split(":", 1)[0]
    if kind == "lr" and "learning rate of step " in run.explanation:
        # (trial 141: the rates were shown nowhere)
        return "no |Δ| figures are measured for a learning rate: the rates are in the why"
    if kind in _FLOAT_KINDS:
        return ("its values at that step were not kept for comparison, only their digests, "
                "so no |Δ| is measured there")
    return ("what differs holds no floating-point values, so no |Δ| is measured "
            "(a random stream's state, a counter, a setting, a flag)")


_FLOAT_KINDS = ("lr", "scale", "loss", "grad", "param", "inputs")
"""The trace's quantities that hold floating-point values (``data`` may not)."""


def _g(value: float | None) -> str:
    return "-" if value is None else three_figures(value)
