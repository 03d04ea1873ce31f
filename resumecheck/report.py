"""Reports: the verdict of every run, as data, JSON, a table or Markdown.

The JSON form is versioned (``schema``) and documented in docs/REPORT.md.
Other tools rely on at least: ``schema``, ``equivalent``, ``environment`` and
``runs``; each run has ``dropped``, ``resume_at``, ``verdict``,
``first_divergent_step``, ``plausible`` and ``explanation``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

from resumecheck.components import CALLBACKS, DATA_CURSOR, split_rank_name
from resumecheck.errors import LONGER_BOUND
from resumecheck.phrases import (
    ADAPTER_LOOP, AS_BUILT_MARK, BUILDING, CHANGED_AFTER_LOAD, CHECKPOINT_LOSES,
    CHECKPOINT_MAY_LOSE, FETCHED_BEFORE_RESTORE, IDLE_SEED, LEFT_OUT_ALIKE, LEFT_OUT_ALIKE_MARK,
    KEPT_ALREADY, LOSS_LOG, MOVED_BY_LATER_LOAD, NOT_RESUMABLE, NO_LONGER_USED, SET_BY_LOAD,
    FRAMEWORK_RESUME, HASH_ORDER, HASH_ORDER_UNCHECKED, LOOP_GOES_ON, ORDER_BEFORE_RESTORE,
    NOT_VALIDATED_AGAIN, ONE_POSITION, POSITION_TRANSFORMED, RATE_SET_SOONER, READ_BEFORE,
    REORDERED,
    CAME_BACK_READ, MODULE_AFTER_SAVE, RESTORE_CHANGED, RESTORING,
    POSITION_UNUSED, SET_ALIKE_LATER, SKIPS_BLIND, STARTED_LEVEL, STOPPED, SAVED_AT_BATCH_END,
    EPOCH_END_UNCHECKED,
    changed_after_load, drawn_at_import_text, first_line, framework_name, global_streams,
    lost_uncompared,
    paths_said,
    set_again_uncompared, uncompared_path,
    unused_position,
    SAME_PLACE,
    is_place_finding, place_read_alike,
)
from resumecheck.state_diff import righted_only
from resumecheck.streams import is_stream_detail, unseeded_text
from resumecheck.trajectory import Trajectory

__all__ = [
    "AFTER_DIVERGENCE",
    "CLOSE",
    "CONFIRMED",
    "DIVERGED",
    "ENDS_AS_BEFORE",
    "FAILED",
    "IDENTICAL",
    "INCONCLUSIVE",
    "LATENT",
    "LOST_ON_RESAVE",
    "LIKELY",
    "NOT_CAUSE",
    "RESUME_CODE_UNCHECKED",
    "SCHEMA",
    "Finding",
    "outcome_text",
    "Report",
    "RunResult",
    "StreamOffset",
    "caveats",
    "unseeded_notice",
]

SCHEMA = "resumecheck.report/1"

# How the WARNING on components whose load_state_dict() loses what their
# state_dict() gave opens (one, several).
LOSSY_ONE = "a declared component does not load back its own state"
LOSSY_MANY = "declared components do not load back their own state"
STALE_ONE = "a declared random state went into a generator the run no longer uses"
MOVED_ONE = "a declared component's own load brought it back, and a later one's changed it"
LATER_OTHERWISE = ("the steps after a restart leave declared state otherwise than the "
                   "uninterrupted run's")
"""The incomplete-state notice's opening where the engine's own resume through
several restarts matched every step until a later restart, whose declared
state (what the run itself held there) differs (``RunResult.later_restore_otherwise``)."""
CHANGED_ONE = "a declared component is changed between its restore and the first step"
"""The incomplete-state notice's opening where a framework's component, which
its own load gave back, differs right after the restore (``CHANGED_AFTER_LOAD``)."""


Verdict = Literal["identical", "close", "diverged", "failed", "inconclusive"]
IDENTICAL: Literal["identical"] = "identical"
CLOSE: Literal["close"] = "close"
DIVERGED: Literal["diverged"] = "diverged"
FAILED: Literal["failed"] = "failed"
INCONCLUSIVE: Literal["inconclusive"] = "inconclusive"
"""An ablation when the engine's own full resume is not equivalent: the
declared components do not capture the program's state, so what dropping one
does is no evidence either way (neither exercised nor a blind spot)."""

# What a diagnosis finding turned out to be (Finding.status).
FindingStatus = Literal["confirmed", "not_cause", "latent", "after_divergence", "put_back",
                        "lost_on_resave", "likely"]
CONFIRMED: Literal["confirmed"] = "confirmed"
"""Setting only this component to the reference's state removes the divergence or moves it later."""
NOT_CAUSE: Literal["not_cause"] = "not_cause"
"""It differs, but setting it to the reference's state changes nothing: not the cause."""
LATENT: Literal["latent"] = "latent"
"""It differs, and the run never departs from the reference after it: unused here."""
AFTER_DIVERGENCE: Literal["after_divergence"] = "after_divergence"
"""Found at a resume point after the run had already diverged; compared with
what the run saved there, not with the reference, and not blamed."""
PUT_BACK: Literal["put_back"] = "put_back"
"""Random state that differs right after the load, but the program puts it
back itself (a sampler that replays its epoch's shuffle from the epoch's
start): the run never departs and the component ends as the reference's did.
No gap, latent or not."""

LOST_ON_RESAVE: Literal["lost_on_resave"] = "lost_on_resave"
"""It differs right after the program's load() and changes no step of this
schedule, but the program's save() right after that load(), and a restart from
that checkpoint, depart from the reference: the checkpoint loses it on a second
resume. The full resume is then not equivalent."""

LIKELY: Literal["likely"] = "likely"
"""Put right in a rerun after the program's load() it changes nothing, but the
engine's resume without it alone departs as the program's own does, step for
step: the likely cause, which the load() reads before such a rerun can set it
(trial 559: `not_cause` in the JSON of the one cause, a sampler's epoch its
load() set the loader from; ``verdict.note_dropped_alike``)."""

ENDS_AS_BEFORE = " (differs; put right alone, the run ends otherwise as before)"
"""The mark of a finding not the cause, in a run whose steps all matched."""

_MARKS = {
    CONFIRMED: "confirmed",
    # (trials 265, 280, 283, 284 read "differs, not the cause" as cleared, where a rerun
    # that sets it after the load can come after the program read it: what was seen)
    NOT_CAUSE: "differs; put right alone, the run departs no later",
    LATENT: "latent: it changed no step here",
    AFTER_DIVERGENCE: "after the run had diverged: compared with what it saved, not blamed",
    PUT_BACK: ("put back by the program: every later step matches, and it ends as in the "
               "uninterrupted run"),
    LOST_ON_RESAVE: "lost on a second resume: a save right after the load departs",
}


@dataclass(frozen=True, slots=True)
class Finding:
    """One piece of evidence: which component, and what is wrong with it."""

    component: str
    detail: str
    step: int | None = None
    """The resume point after which the restored state differed."""
    confirmed: bool | None = None
    """Setting only this component to the reference's state removed the
    divergence or moved it later (None: not tried, e.g. for the engine's own
    checkpoint)."""
    matters_from: int | None = None
    """For a latent gap: the step from which it would change the run, when known."""
    status: FindingStatus | None = None
    """``confirmed``, ``not_cause``, ``latent``, ``after_divergence`` or ``put_back``
    (None: not judged)."""
    basis: Literal["reference", "saved"] = "reference"
    """What the restored state was compared with: the reference's state at
    ``step``, or (once the run had diverged) what the run saved there."""
    fix: str = ""
    """What makes the program's checkpoint hold the component, where a
    framework's setting decides that (a confirmed finding of the program's
    own resume: a Trainer that restores callbacks only when asked)."""

    @property
    def mark(self) -> str:
        """The status in words, in parentheses (empty when not judged)."""
        if self.status == LATENT and is_fit_loop_recount(self):
            return _FIT_LOOP_LATENT  # (trials 638, 646, 651)
        return f" ({_MARKS[self.status]})" if self.status in _MARKS else ""

    def label_in(self, run: RunResult) -> str:
        """The component, and the restore it was found at when ``run`` has
        several (``scheduler (restored at 4)``)."""
        if len(run.resume_at) > 1 and self.step is not None:
            # (a trial: a cursor restored wrongly at 7, carried on by the save at
            # 10, read as a "confirmed" restore that left steps 8-10 alike)
            first = run.first_divergent_step
            later = [k for k in run.resume_at
                     if first is not None and self.step < k < first]
            # (a trial: "the steps first differ" where only the end state did)
            after = ("" if not later else
                     f"; only the end state differs, after the restart at {later[-1]}"
                     if (run.first_divergent_quantity or "").startswith("state of") else
                     f"; the steps first differ after the restart at {later[-1]}")
            return f"{self.component} (restored at {self.step}{after})"
        return self.component

    def put_back(self) -> bool:
        """Put back by the program itself: a note, not a diagnosis (where the run
        departs, one set right during the step after the restore, which a rerun
        that puts it right sooner does not change, is so too; and one no rerun
        judged, where the declared state is incomplete: trial 402's loader
        generator, set right by the program, was the failure's only diagnosis)."""
        return self.status == PUT_BACK or (
            self.status in (NOT_CAUSE, None) and righted_only(self.detail))

    def line_in(self, run: RunResult, incomplete: str | None) -> str:
        """The finding as a report's diagnosis line prints it for ``run``."""
        lead = "" if self.fix.startswith((KEPT_ALREADY, SET_BY_LOAD)) else "to keep it: "
        fix = f"; {lead}{self.fix}" if self.fix else ""
        return f"{self.label_in(run)}: {self.detail}{self.mark_in(run, incomplete)}{fix}"

    def mark_in(self, run: RunResult, incomplete: str | None) -> str:
        """The mark as a report prints it for ``run``: where the declared
        components are incomplete (``incomplete``: the report's WARNING on
        them), a finding of the program's own resume left unjudged says why,
        in the WARNING's terms, lest it read as the cause."""
        settled = self._settled_mark(run)
        if settled is not None:
            return settled
        if self.status is None and not self.mark and is_fit_loop_recount(self):
            return _FIT_LOOP_UNJUDGED  # (trial 659: listed first, before the lost stream)
        if self.mark or not incomplete or run.checkpoint != "program":
            # (a trial read a bare "config: seed 0, expected 3" beside marked lines)
            return self.mark or (" (not judged)" if self.status is None and not run.dropped
                                 and run.verdict == DIVERGED and "not judged" not in self.detail
                                 and run.checkpoint == "program" else "")
        its = incomplete.split(f"`{self.component}`: ", 1)[-1].split("; and `", 1)[0]
        named = f"`{self.component}`: " in incomplete
        if incomplete.startswith(CHANGED_ONE) and not named and not (
                CHANGED_AFTER_LOAD in self.detail):
            # (trial 768: a stream restored otherwise, read by no step, was "changed
            # between the restore and the first step" of the callback the WARNING named)
            alike = run.steps_match()
            return (" (not judged: the engine's own full resume "
                    f"{'ends otherwise' if alike else 'departs'} too, for the cause the "
                    f"WARNING names{'; it changed no step here' if alike else ''})")
        if incomplete.startswith(CHANGED_ONE) or CHANGED_AFTER_LOAD in self.detail or (
                named and CHANGED_AFTER_LOAD in its):
            # (a trial: an EMA callback set again in on_fit_start, which the WARNING said
            # of the engine's restore, was "not judged: its load ... does not bring back")
            # (trial 209: beside a load that lost state, a callback set again in
            # on_fit_start read "its load_state_dict() does not bring back ...")
            return (" (not judged: it is changed between the restore and the first step, so a "
                    "rerun that puts the uninterrupted run's state in loses it alike; see the "
                    "WARNING)")
        if REORDERED in incomplete:  # (a trial read "incomplete" of a set-ordered optimizer)
            return (" (not judged: a restart builds the optimizer over its parameters in "
                    "another order, see the WARNING)")
        if incomplete.startswith(LATER_OTHERWISE):
            return (" (not judged: the steps after a restart leave declared state otherwise, "
                    "see the WARNING)")
        if not incomplete.startswith((LOSSY_ONE, LOSSY_MANY, _NOT_CAPTURED_OPENER)):
            # (trial 244: "the declared components are incomplete" beside a WARNING that
            # named the framework's fetch before its restore, which no component holds)
            return (" (not judged: the engine's own full resume departs too, for the cause "
                    "the WARNING names)")
        if not incomplete.startswith((LOSSY_ONE, LOSSY_MANY)):
            return " (not judged: the declared components are incomplete, see the WARNING)"
        if f"`{self.component}`: " in incomplete:  # (a trial read "incomplete" of a lossy load)
            return (" (not judged: its load_state_dict() does not bring back what its "
                    "state_dict() returned, so a rerun that puts the uninterrupted run's state "
                    "in loses it alike; see the WARNING)" if _FRAMEWORK_LOSSY not in incomplete
                    else " (not judged: the restore does not bring it back, so a rerun that "
                    "puts the uninterrupted run's state in loses it alike; see the WARNING)")
        return " (not judged: a declared component does not load back its own state, see the " \
               "WARNING)"

    def _settled_mark(self, run: RunResult) -> str | None:
        """The mark where the finding's status and detail settle it, whatever
        the WARNING says (None: ``mark_in`` goes on)."""
        if not self.mark and run.verdict == FAILED and is_stream_detail(self.detail):
            # (a trial: beside an out-of-memory failure, a generator the program sets
            # right in its next step read as the cause)
            return " (not judged: the run failed before any step could show whether it matters)"
        if self.status == NOT_CAUSE and righted_only(self.detail):
            # (trial 291: "which the program set right itself during step 7 (differs; put
            # right alone, the run departs as before)" read as a second lost component)
            return (" (put back by the program during that step: setting it right sooner "
                    "changes nothing)")
        if self.status == LIKELY:
            # (trial 510: an epoch its load() read before the rerun set it, read as no cause)
            return LEFT_OUT_ALIKE_MARK
        if self.status == NOT_CAUSE and run.steps_match():  # (a trial: "departs as before"
            return ENDS_AS_BEFORE  # of a run whose steps all matched)
        if self.status == PUT_BACK and ONE_POSITION in self.detail:
            # (trial 416: "put back by the program" of a position no step changed)
            return (" (one position in another form: every later step matches, and it ends as "
                    "in the uninterrupted run)")
        if self.status == PUT_BACK and RATE_SET_SOONER in self.detail:
            # (trial 798: nothing was put back; the load set the next step's rate sooner)
            return (" (the same rate, set sooner: every later step matches, and it ends as in "
                    "the uninterrupted run)")
        if self.status == PUT_BACK and run.first_divergent_step is not None:
            # (where the run departs all the same: its rerun, set right, changed nothing)
            return (" (put back by the program: setting it right changes nothing, and it ends "
                    "as in the uninterrupted run)")
        return None


@dataclass(frozen=True, slots=True)
class StreamOffset:
    """A random stream that differs from the reference's at the start of a step
    right after a restore, and by how many draws it is ahead or behind."""

    stream: str
    """``torch``, ``python``, ``numpy``, ``cuda``, or ``generator NAME`` (a registered one)."""
    step: int
    """The step at whose start the stream differs."""
    draws: int | None
    """Ahead (> 0) or behind (< 0) by this many ``unit``; None: not within the search."""
    unit: str
    """One ``draws`` is one int64 draw, as a DataLoader draws its base seed;
    ``32-bit words`` of the Mersenne Twister for Python random and numpy."""
    detail: str = ""
    """The finding in words, with the usual cause."""


@dataclass(kw_only=True)
class RunResult:
    """One resumed run compared with the reference."""

    dropped: list[str]
    """Components the restart did not restore (empty: the full resume)."""
    resume_at: list[int]
    """Steps after which the run was checkpointed and restarted."""
    verdict: Verdict
    checkpoint: Literal["engine", "program"] = "engine"
    """Whose checkpoint the restart used: the engine's capture or the program's save/load."""
    first_divergent_step: int | None = None
    first_divergent_quantity: str | None = None
    """The first quantity that differs, in words (``parameter fc2.weight (the
    largest of 6 parameters that differ)``)."""
    first_divergent_key: str | None = None
    """The same as the trace keys it (``data``, ``inputs``, ``scale``, ``lr``, ``loss``,
    ``grad:NAME``, ``param:NAME``, ``skipped``, ``state:COMPONENT`` (the final
    state), with ``[rank R]`` for one rank of many; None: nothing differs)."""
    max_abs_loss_diff: float | None = None
    max_abs_diff: float | None = None
    max_rel_diff: float | None = None
    max_ulp_diff: float | None = None
    largest_in: dict[str, str] = field(default_factory=dict)
    """The quantity, in words, that each of ``max_abs_diff`` (``abs``),
    ``max_rel_diff`` (``rel``) and ``max_ulp_diff`` (``ulp``) is the largest of."""
    plausible: bool | None = None
    """Diverged, but the loss stays within seed-to-seed noise (True) or leaves it (False)."""
    noise_ratio: float | None = None
    """Largest |Δloss| divided by the seed-to-seed spread at that step."""
    leaves_band_at: int | None = None
    """Gross (``plausible`` False): the first step whose |Δloss| is beyond the
    seed-to-seed band (the band is measured from the step after the restart on: the
    last restart before the run departs, ``verdict.band_from``)."""
    side_files: dict[str, list[str]] = field(default_factory=dict)
    """The program's own resume (``checkpoint`` ``program``): the files its
    save() wrote (``save``) and its load() read (``load``) outside the
    checkpoint path it was given; a restart reads what was written there last,
    not what the checkpoint saved. Empty elsewhere."""
    blind_spot: bool = False
    """Something was dropped and nothing changed: this program does not exercise it here."""
    same_as_full_resume: bool = False
    """An inconclusive ablation whose trajectory is step for step the engine's
    full resume's: its divergence is the full resume's, not this component's."""
    explanation: str = ""
    failure: str | None = None
    diagnosis: list[Finding] = field(default_factory=list)
    """Components whose restored state differs from the reference's at the resume point."""
    latent_gaps: list[str] = field(default_factory=list)
    """Components restored wrongly that the continuation never used (a warning)."""
    latent_ended: list[str] = field(default_factory=list)
    """Of ``latent_gaps``, those the run ends with otherwise than the reference
    (no step after the restart read them; the state it hands on differs)."""
    ended_otherwise: list[str] = field(default_factory=list)
    """Where no step departs: the components whose state at the end differs
    from the reference's beyond the tolerance (the first named first)."""
    reproduce: str = ""
    stream_offsets: list[StreamOffset] = field(default_factory=list)
    """Random streams that differ at the start of the first steps after a restore."""
    streams_level: bool | None = None
    """Every random stream the run records was the reference's at the start of
    the first step after each restore before it departed: nothing drew from
    them in between (False where not recorded, or where one differs; None
    where not looked at, a run that matched or failed: trial 460 read False
    of a run whose streams matched)."""
    divergence_detail: str | None = None
    """The first divergent quantity in words, when a count says more than a
    magnitude ("3 of 16 samples differ, first at position 5: 17 vs 42 in the reference")."""
    nproc: int | None = None
    """Ranks of the restarts when they differ from the check's ``nproc`` (an
    elastic resume, ``resume_nproc``); None: as many as the check's."""
    unmapped: list[str] = field(default_factory=list)
    """Elastic resume: per-rank state that has no rank to go to at the new number
    of ranks, or new ranks with no state of their own in the checkpoint."""
    trajectory: Trajectory | None = None
    """The run step by step: its loss and where each kind of quantity differs
    from the reference (None: the run failed before it was compared)."""
    beyond_at: list[int] = field(default_factory=list)
    """Of a plausible run, the steps whose |Δloss| exceeds the seeds' spread at
    that same step (the band is the widest spread at any step); of a gross one,
    those before it leaves the band; not in the JSON."""
    modes_set: list[str] = field(default_factory=list)
    """What the engine's restores set of the declared modules' modes and frozen
    parameters otherwise than the program held them, in words (``SegmentResult.
    modes_set``); not in the JSON."""
    by_build: list[str] = field(default_factory=list)
    """Of the program's own resume, the declared leaves (```scratch` of `config```)
    each build makes otherwise, compared with what the run held when it saved
    rather than with the uninterrupted run's (``verdict.build_varying``); not
    in the JSON."""
    latent_between: dict[str, str] = field(default_factory=dict)
    """Of ``latent_gaps``, those held otherwise after the restart's first step, in words."""
    engine_departs: bool = False
    """The program's own resume: the engine's own full resume of its schedule
    departs too, so its findings are not judged (``verdict.unjudge_when_incomplete``);
    not in the JSON, whose report holds that resume's row."""

    @property
    def label(self) -> str:
        if self.nproc is not None:
            return (f"elastic resume (own save/load, restarted at {self.nproc} "
                    f"rank{'' if self.nproc == 1 else 's'})")
        if self.dropped:
            return "drop " + ",".join(self.dropped)
        return "full resume (own save/load)" if self.checkpoint == "program" else "full resume"

    @property
    def exercised(self) -> bool:
        """Dropping the components changed the run: they are exercised here."""
        return bool(self.dropped) and self.verdict == DIVERGED

    def where_it_differs(self) -> str:
        """Where a diverged run first differs, in words: ``differs from step 9
        (loss)``, or, where no step departs, ``ends otherwise in the state of
        scheduler (every step matches)`` (a trial read "differs from step 24
        (state of scheduler)" as a step)."""
        quantity = self.first_divergent_quantity or ""
        if quantity.startswith("state of"):
            return f"ends otherwise in the {quantity} (every step matches)"
        return f"differs from step {self.first_divergent_step} ({quantity})"

    def lossy_loads(self, read_alike: bool = False) -> list[Finding]:
        """Of the engine's own resume: the components that differ right after
        its first restore, which put the reference's own state in through their
        load_state_dict(); they do not load back what their state_dict() gave.
        Not at a later restart, which puts in what the run itself had there: a
        difference from the reference then was carried from before (a trial's
        EMA that lost its update count at the first restart drifted, and was
        called lossy at the second), unless the run held it as the reference
        did right before that restart (``RESTORE_CHANGED``). Nor a data position
        whose steps read alike (``place_read_alike``), but with ``read_alike``."""
        return [f for f in self.diagnosis if f.basis == "reference" and (
            f.step == self.resume_at[0] or RESTORE_CHANGED in f.detail)
            and CAME_BACK_READ not in f.detail
            and (read_alike or not _read_alike(self, f))]

    def place_came_back(self) -> bool:
        """Of the engine's own resume: only data positions are ``lossy_loads``,
        none changed after its load, and the steps after the restore read their
        place in another epoch's order, so the place came back whatever their
        state said right after the restore (trial 833)."""
        lossy = self.lossy_loads()
        return bool(lossy) and SAME_PLACE in (self.divergence_detail or "") and all(
            _place_as_loaded(f) for f in lossy)

    def steps_match(self) -> bool:
        """Every step of this diverged run matched: only its end state differs."""
        return self.verdict == DIVERGED and (self.first_divergent_quantity or "").startswith(
            "state of")

    def later_restore_otherwise(self) -> list[Finding]:
        """Of the engine's own resume through several restarts: the components
        that differ from the reference's at a later restart, which put in what
        the run itself held there, every step before it matching, where none
        differed at the first (``lossy_loads``): the run's steps after a restart
        left declared state otherwise, by code that runs only after a restore
        or by state no component declares that those steps read."""
        if len(self.resume_at) < 2 or self.lossy_loads():
            return []
        return [f for f in self.diagnosis
                if f.basis == "reference" and f.step in self.resume_at[1:]
                and (self.first_divergent_step is None or self.first_divergent_step > f.step)]

    def lost_on_resave(self) -> list[str]:
        """The components that a save right after the program's load() loses: a
        restart from that checkpoint departs (``LOST_ON_RESAVE``)."""
        return list(dict.fromkeys(f.component for f in self.diagnosis
                                  if f.status == LOST_ON_RESAVE))

    def latent_parts(self) -> dict[str, str]:
        """Each latent gap, by name, in words: with the step that next reads it,
        where that is known (``sampler_epoch (next read at step 9)``): the step
        from which it may change the run (trial 224: "rng (from step 21)" of a
        stream a loader next drew from there, whose draw changed nothing)."""
        when = {f.component: f.matters_from for f in self.diagnosis if f.matters_from}
        return {name: f"{name} (next read at step {when[name]})" if name in when else name
                for name in self.latent_gaps}

    @property
    def noise_label(self) -> str:
        if self.verdict in (FAILED, INCONCLUSIVE):
            return "-"
        if self.blind_spot:
            return "blind spot"
        if self.plausible is None:
            return "-"
        if self.plausible and not self.max_abs_loss_diff:
            # (two trials read "plausible" beside a loss that does not differ)
            return "silent"
        return "plausible" if self.plausible else "gross"

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["diagnosis"] = [asdict(f) for f in self.diagnosis]
        data["stream_offsets"] = [asdict(s) for s in self.stream_offsets]
        data["trajectory"] = self.trajectory.to_json() if self.trajectory else None
        # (trial 453: `plausible` true beside a table's `silent`: the table's word too)
        data["noise"] = None if self.noise_label == "-" else self.noise_label
        del data["engine_departs"], data["beyond_at"], data["modes_set"], data["by_build"]
        del data["latent_between"]
        return _finite(data)


def _read_alike(run: RunResult, f: Finding) -> bool:
    """``phrases.place_read_alike`` of ``run``'s finding ``f``, by its trajectory."""
    t = run.trajectory
    return t is not None and place_read_alike(f.component, f.detail, f.step == run.resume_at[0],
                                              t.compared, t.differs)


def _place_as_loaded(f: Finding) -> bool:
    """A data position's finding, as its load left it (nothing changed it after)."""
    return is_place_finding(f.component, f.detail) and not changed_after_load(f.detail)


def seed_text(asked: int | None, base: int | None | str, seeded_by: str | None = None) -> str:
    """The header's seed: ``asked`` with ``--seed`` (what was asked: a factory
    that ignores its settings still trains with its own), else the program's
    own, ``base`` (its settings' or its config's; None: not known; ``"?"``: not
    looked at); ``seeded_by``: a framework target's adapter, which seeds the
    build itself (trial 629 read "the program's own seed (0)" of a Lightning
    script that seeds 42, where the check ran its target's 0)."""
    if asked is not None:
        return f"seed {asked} asked of the program"
    if seeded_by and isinstance(base, int):
        # (trials 639, 648: a factory that seeds too read "not your script's own code")
        return (f"seed {base}, the target's (its adapter seeds the build with it before your "
                "code runs; a seed your code sets itself comes after it: --seed sets the "
                "adapter's)")
    if base == "?":
        return "the program's own seed"
    # (trials read "(unknown)" of a seed written in the script as a failure to find it)
    return (f"the program's own seed ({base})" if base is not None else
            "the program's own seed (not a setting the check can read)")


@dataclass(kw_only=True)
class Report:
    """Everything one check found, with what is needed to reproduce it."""

    target: str
    steps: int
    resume_at: list[int]
    seed: int | None
    """The seed asked for (None: the program's own settings)."""
    isolation: str
    tolerance: dict[str, Any]
    environment: dict[str, Any]
    runs: list[RunResult]
    noise: dict[str, Any] = field(default_factory=dict)
    """Seed-to-seed loss spread: the seeds used and the band per step."""
    determinism: dict[str, Any] = field(default_factory=dict)
    """Whether a second uninterrupted run matched the reference bit for bit."""
    reference_loss: list[float] = field(default_factory=list)
    """The reference's loss at steps 1..N."""
    seed_losses: list[list[float]] = field(default_factory=list)
    """The loss at steps 1..N of each run with another seed (``noise["seeds"]``)."""
    nproc: int | None = None
    """Ranks each run had under torch's launcher (None: one process)."""
    untraced: list[str] = field(default_factory=list)
    """Quantities no step could trace, each with why and what to declare: a
    divergence then shows first in a later quantity (the loss, a step late)."""
    undeclared: list[str] = field(default_factory=list)
    """Tensors the program holds that the run changed and no declared
    component holds, each in words: not compared, so a checkpoint that loses
    them shows only when they change a step."""
    launched_with: dict[str, Any] = field(default_factory=dict)
    """The settings the run was launched with (``Target.run_config``, and the
    seed asked for) where a restart is built from the program's defaults
    instead; empty when a restart gets them again or there are none."""
    launch_settings_matter: bool | None = None
    """Where the engine's full resume departs and the restarts are built
    without ``launched_with``: True, built with them it resumes (they are
    what it lacks); False, built with them it departs step for step alike
    (they are not); None: not asked, or neither."""
    set_order: str | None = None
    """In-process: the WARNING that a declared optimizer lists parameters in the
    order a set of their names iterates in this interpreter (None: none does)."""
    drawn_at_import: list[str] = field(default_factory=list)
    """The global streams (``numpy``, ``torch``) the program's module drew from
    without a seed as it was imported (a data order made at import): restarts
    in one interpreter share what it drew; a new interpreter draws otherwise."""
    build_settings: list[str] = field(default_factory=list)
    """What the program's build set of the process-wide settings (torch's
    switches and its compiler's config), in words: every restart
    here builds it so before its load(); a script whose own resume path
    builds otherwise must set them there too (trial 145)."""
    not_checked: list[str] = field(default_factory=list)
    """What the resume points tried cannot show, each in a sentence: a restart
    at an epoch's end where none was one (``verdict.epoch_ends_untried``), a
    per-rank component alike on every rank (``verdict.alike_on_ranks``)."""
    schema: str = SCHEMA

    @property
    def full_resume(self) -> RunResult | None:
        return next((r for r in self.runs if not r.dropped), None)

    @property
    def outcome(self) -> str:
        """The full resume in words: ``EQUIVALENT``, ``NOT EQUIVALENT``, or
        ``INCONCLUSIVE`` when the evidence could not decide (an elastic resume
        whose per-rank state cannot be mapped, a run that differs before its
        first restart): never called not equivalent."""
        if self.equivalent:
            return "EQUIVALENT"
        full = self.full_resume
        return "INCONCLUSIVE" if full is not None and full.verdict == INCONCLUSIVE \
            else "NOT EQUIVALENT"

    @property
    def equivalent(self) -> bool:
        """The full-state resume continues like the reference, under the tolerance,
        and a save right after its load() loses nothing (``LOST_ON_RESAVE``)."""
        full = self.full_resume
        return (full is not None and full.verdict in _passing(self.tolerance)
                and not full.lost_on_resave())

    @property
    def engine_resume(self) -> RunResult | None:
        """The engine's own full resume: every declared component restored by the engine."""
        return next((r for r in self.runs if not r.dropped and r.checkpoint == "engine"), None)

    @property
    def declared_state_complete(self) -> bool | None:
        """The engine's own full resume is equivalent: the declared components
        capture the program's state (None: no such run)."""
        engine = self.engine_resume
        return None if engine is None else engine.verdict in _passing(self.tolerance)

    def unseeded_notice(self) -> str | None:
        """The sentence a report carries when two launches of the program differ
        (it draws from a global stream it never seeds; None: it does not, or
        the determinism rerun did not run)."""
        return unseeded_notice(self.determinism)

    def incomplete_state_notice(self, lines_shown: bool = True) -> str | None:
        """The plain sentence a report opens with when the declared components
        do not capture the program's state (None: they do). ``lines_shown``:
        the report's `not compared` lines are printed beside it (fuzz prints
        none: the sentence names what they would)."""
        return _state_notice(self, lines_shown)

    def label_of(self, run: RunResult) -> str:
        """A run's label in this report: the engine's full resume beside the
        program's own save/load one is ``full resume (engine)``."""
        if not run.dropped and run.checkpoint == "engine" and run is not self.full_resume:
            return "full resume (engine)"
        return run.label

    @property
    def blind_spots(self) -> list[RunResult]:
        return [r for r in self.runs if r.blind_spot]

    @property
    def inconclusive(self) -> list[RunResult]:
        return [r for r in self.runs if r.verdict == INCONCLUSIVE]

    def to_json(self) -> dict[str, Any]:
        return _finite({
            "schema": self.schema,
            "equivalent": self.equivalent,
            "target": self.target,
            "steps": self.steps,
            "resume_at": self.resume_at,
            "seed": self.seed,
            "launched_with": dict(self.launched_with),
            "launch_settings_matter": self.launch_settings_matter,
            "set_order": self.set_order,
            "drawn_at_import": list(self.drawn_at_import),
            "build_settings": list(self.build_settings),
            "caveats": caveats(self),
            # (trial 156: the WARNING's sentence was in the text only)
            "warnings": [w for w in (self.incomplete_state_notice(), self.unseeded_notice(),
                                     self.set_order) if w],
            "not_checked": list(self.not_checked),
            "isolation": isolation_made(self.isolation, self.nproc),
            "tolerance": self.tolerance,
            "environment": self.environment,
            "noise": self.noise,
            "determinism": self.determinism,
            "reference_loss": list(self.reference_loss),
            "seed_losses": [list(losses) for losses in self.seed_losses],
            "nproc": self.nproc,
            "declared_state_complete": self.declared_state_complete,
            "untraced": list(self.untraced),
            "undeclared": list(self.undeclared),
            "ends_otherwise_uncompared": lost_uncompared(self.undeclared),
            "runs": [r.to_json() for r in self.runs],
        })

    def render(self, fmt: Literal["table", "json", "markdown"] = "table") -> str:
        if fmt == "json":
            return json.dumps(self.to_json(), indent=2)
        if fmt == "markdown":
            return _markdown(self)
        return _table(self)

    @property
    def restarts_text(self) -> str:
        """How restarts run: ``inprocess restarts``, or, for a distributed check,
        where every rank is a new interpreter whatever the isolation, ``restarts
        as new launches of 2 ranks (torch's launcher)``."""
        elastic = next((r.nproc for r in self.runs if r.nproc is not None), None)
        return restarts_text(self.isolation, self.nproc, elastic)

    @property
    def seed_text(self) -> str:
        # (a report built without its noise summary does not know the program's own)
        return seed_text(self.seed, self.noise.get("base_seed", "?"), self.noise.get("seeded_by"))

    @property
    def tolerance_text(self) -> str:
        t = self.tolerance
        if t.get("mode") == "bitwise":
            return "bitwise"
        if t.get("rtol") is None:
            return "within torch.testing tolerances"
        return f"within rtol={t['rtol']:g} atol={t['atol']:g}"


# The renderings of a Report: a text table and GitHub-flavoured Markdown.


def _rows(report: Report) -> list[list[str]]:
    rows = []
    for r in report.runs:
        where = "-"
        if r.first_divergent_step is not None:
            # a failed run has a step (where it failed) but no quantity
            what = r.first_divergent_quantity or ("(failed)" if r.verdict == FAILED else "")
            where = f"{r.first_divergent_step} {what}".rstrip()
            if what.startswith("state of "):  # (compared at the end: not a step that went wrong)
                where = f"{what} at the end"
        # (a trial: the headline NOT EQUIVALENT above a row that read "identical")
        shown = "identical, lost on resave" if r.verdict == IDENTICAL and r.lost_on_resave() \
            else r.verdict
        rows.append([
            report.label_of(r), shown, where,
            _num(r.max_abs_loss_diff), r.noise_label, _why_in_row(report, r),
        ])
    return rows


def _why_in_row(report: Report, r: RunResult) -> str:
    """A run's why as its row shows it: where the report's ``streams:`` lines
    below say a stream's finding whole (the full resume's), the row keeps its
    first clause and points there (trials 288, 292: the same long paragraph in
    the row and below it)."""
    why = r.explanation
    if r is not report.full_resume:
        return why
    for s in r.stream_offsets:
        head = s.detail.split(": ", 1)[0]
        if head != s.detail and s.detail in why:
            why = why.replace(s.detail, f"{head} (see streams: below)", 1)
    return why


def unseeded_notice(determinism: dict[str, Any]) -> str | None:
    """The warning for a check's ``determinism`` record when two launches of the
    program differ, from unseeded streams or by the hash seed alone (None: they
    do not, or no rerun was made)."""
    order = determinism.get("hash_order")
    if order:  # (trial 783: a vocabulary numbered by iterating a set)
        where = f"from step {order['step']} ({order['quantity']})"
        return (f"two launches of this program differ {where}, between interpreters with "
                f"different PYTHONHASHSEEDs only (a third under the reference's matched it): "
                f"it depends on {HASH_ORDER}, so a relaunch, under another hash seed, makes "
                "what that order decides otherwise; each restart here runs under another hash "
                "seed than the run it resumes, as a relaunch does, so the verdict holds for a "
                "relaunch: what your checkpoint keeps of that order resumes alike, what your "
                "load makes again from it, or a step computes anew in it, departs. Two real "
                "runs of the program will not match from their start: build it in an order "
                "that follows no hash seed (sorted())")
    found = determinism.get("unseeded")
    if not found:
        return None
    return unseeded_text(list(found["streams"]), found["step"], found["quantity"])


_HEADER = ["run", "verdict", "first divergence", "max |Δloss|", "noise", "why"]


def _header(report: Report) -> list[str]:
    """The table's header; under many ranks the loss figures are of the mean
    over the ranks, and the column says so (trial 144: read as the largest
    rank's, which differed twice as much)."""
    if not report.nproc:
        return _HEADER
    return [*_HEADER[:3], "max |Δ mean loss|", *_HEADER[4:]]


def outcome_text(report: Report) -> str:
    """``Report.outcome`` as the headline words it, saying, for an equivalent resume, what is not
    compared that it ends with otherwise (the verdict covers what is compared)."""
    lost = lost_uncompared(report.undeclared)
    full = report.full_resume
    resaved = full.lost_on_resave() if full is not None else []
    if resaved and full is not None and full.verdict != DIVERGED:
        # (in the words the run's why was put in: a framework's save and restore,
        # where a trial's Lightning headline said "your save()")
        tail = ", and a restart from that checkpoint"
        saved = (full.explanation.partition("but ")[2].partition(tail)[0]
                 if tail in full.explanation else "") or "your save() right after your load()"
        return (f"{report.outcome}: every step after the restart matches, but {saved}{tail}, "
                f"depart from the uninterrupted run: "
                f"{resave_loses([f'`{c}`' for c in resaved])} (see the diagnosis)")
    if full is not None and full.steps_match() and full.ended_otherwise:
        return f"{report.outcome}: {_ends_otherwise_words(full, report.undeclared)}"
    again = set_again_uncompared(report.undeclared)
    text, gaps = outcome_text_of(report, lost, again), latent_words(report)
    if gaps:  # (trial 473: a scaler's growth count lost read "EQUIVALENT" and nothing more)
        below = text.endswith(" (see below)")
        # (trial 892: "(see the diagnosis)" where no line of it names the gap)
        found = full is not None and any(f.component in full.latent_gaps for f in full.diagnosis)
        text = (text.removesuffix(" (see below)") + f"; {gaps} ("
                + ("see the diagnosis" + (" and below)" if below else ")") if found
                   else "see below)"))
    return text


def _ends_otherwise_words(full: RunResult, undeclared: Sequence[str]) -> str:
    """The headline of a full resume whose every step matched and whose end
    state differs (trials 539, 555 read a bare NOT EQUIVALENT as a false alarm;
    a random stream so is a latent gap since: ``verdict._streams_judged``),
    pointing where its cause is said: the diagnosis, or, where no finding
    names those components and the `not compared` lines name fields of them,
    those lines (trial 627: "(see the diagnosis)" beside none printed)."""
    ended = full.ended_otherwise
    names = ", ".join(f"`{name}`" for name in ended)
    found = {f.component for f in full.diagnosis if not f.put_back()}
    # (trial 894: `callbacks (EMA).num_updates`, a field of a framework's component)
    fields = any(line.startswith((f"{name}.", f"{name} (")) for name in ended
                 for line in undeclared)
    # (trial 894: "(see the diagnosis)" where none was printed, at another resume point)
    see = ("the diagnosis" if set(ended) & found or (not fields and full.diagnosis)
           else "the `not compared` lines" if fields else "its why below")
    return (f"every step after the restart matches, but the run ends with {names} otherwise "
            "than the uninterrupted run: silent here, not harmless: a later step, or a "
            f"restart after it, that reads it may differ (see {see})")


def latent_words(report: Report) -> str:
    """Of an equivalent resume whose full resume restored declared state
    otherwise, in what changed no step: the headline's words (empty: none)."""
    full = report.full_resume
    if not report.equivalent or full is None or not full.latent_gaps:
        return ""
    restored = [name for name in full.latent_gaps if name not in full.latent_between]
    between = [name for name in full.latent_gaps if name in full.latent_between]
    parts = [f"{', '.join(restored)} restored otherwise than the uninterrupted run had "
             f"{'it' if len(restored) == 1 else 'them'}"] if restored else []
    # (trial 892: a position wrong from the restart's first step to the epoch's end)
    parts += [f"{', '.join(between)} held otherwise after the restart's first step, alike "
              "again at the end"] if between else []
    return f"latent gap: {'; '.join(parts)}, in state that changed no step here"


def outcome_text_of(report: Report, lost: list[str], again: list[str]) -> str:
    """``outcome_text`` but for the latent gaps."""
    full = report.full_resume
    if not report.equivalent or not lost and not again:
        if report.equivalent and full is not None and ADAPTER_LOOP in full.explanation:
            # (trial 446: a skip_first_batches off by one in the script's own load() read
            # EQUIVALENT, exit 0, through the adapter; said at the end of the why alone)
            return (f"{report.outcome} (the resume that ran is resumecheck's loop around your "
                    "step, through the framework's save and load: your script's own resume "
                    "code, what it skips with skip_first_batches, did not run; see the why)")
        if full is not None and full.verdict != FAILED and ADAPTER_LOOP in full.explanation:
            # (trial 865: a count its script kept in a file of its own, lost from what
            # Accelerate saves, read as a fault of the script's checkpoint)
            return (f"{report.outcome} (the resume that ran is resumecheck's loop around your "
                    "step, through the framework's save and load alone: what your script's "
                    "own resume code keeps besides, in files of its own, did not come back "
                    "here; see the why)")
        return report.outcome
    # (trial 180: a callback's best loss its checkpoint lost, set again by a later step)
    held = (f"held otherwise after its load, a later step setting it again: "
            f"{paths_said(again)}" if again else "")
    return (f"{report.outcome} in what is compared; not compared, and your own resume "
            + (f"ends otherwise with: {paths_said(lost)}" + ("; " if held else "") if lost
               else "") + f"{held} (see below)")


_AFTER_SAVE_LEAD = (
    "your LightningModule overrides on_train_batch_end, which Lightning runs after the check "
    "writes its checkpoint at a batch's end (see the own resume's why): state it changes "
    "there, if it changes any, is not in that checkpoint, and a restart from it ends "
    "otherwise in that state. Besides, ")


def _file_beside(failure: str) -> str:
    """Where the engine's restore failed on a file the program's own save writes
    beside the checkpoint, what lets it run (trials 648, 666: a Trainer subclass's
    load read a file its own save wrote beside the Trainer's, which the engine's
    checkpoint, of the declared components, lacks; trial 707: a Trainer target,
    which declares the Trainer's state alone, was told to declare a component)."""
    if "FileNotFoundError" not in failure or "engine-restore" not in failure:
        return ""
    keep = ("keep what it holds in a TrainerCallback that is an ExportableState (restored "
            "with restore_callback_states_from_checkpoint=True), which the target declares "
            "as `callbacks`" if "the HuggingFace Trainer's" in failure
            else "declare what it holds as a component")
    # (trial 802: the callback came first, impractical for an optimizer's tensors)
    # (trial 893: a load made to go on without the file let the restart run, departing
    # without what the file held, every ablation still unjudged, and would hide a real
    # resume that lost it)
    return (" The engine's checkpoint holds what the declared components hold; your load reads "
            f"a file beside them that only your own save writes: {keep}, for the engine's "
            "restart and the ablations to run as your own resume does (a load made to go on "
            "without the file lets them run, but without what it holds: they depart, and a "
            "real resume that lost the file would go on silently).")


def _failed_beside(engine: RunResult | None) -> bool:
    """Whether the engine's restore failed on a file only the program's own save
    writes (``_file_beside``)."""
    return engine is not None and engine.verdict == FAILED \
        and bool(_file_beside(first_line(engine.failure or "")))


_OWN_EQUIVALENT_BESIDE = (
    " Your own resume is equivalent; the engine's restart, which ablations use, stopped for "
    "want of that file alone, which says nothing of state the declared components miss.")
"""(trial 802: "your checkpoint keeps what the declared components miss", where they
missed nothing and the engine's restart read a file of the program's own save)"""


def _incomplete_state_notice(report: Report, lines_shown: bool) -> str | None:
    """``Report.incomplete_state_notice``."""
    engine = report.engine_resume
    if engine is None or report.declared_state_complete is not False:
        return None
    # (a trial read of ablations under --drop none, and in fuzz, which run none)
    ablated = any(r.dropped for r in report.runs)
    if engine.verdict == FAILED and engine.explanation.startswith(RESTORING):
        failure = first_line(engine.failure or "")
        return ("the engine's own restore of the declared components into a fresh build "
                f"fails: {failure}.{_file_beside(failure)}"
                + (" The ablations restore the same way, so they cannot be judged: "
                   "inconclusive (or failed)." if ablated else ""))
    if engine.verdict == FAILED and engine.explanation.startswith(BUILDING):
        return _build_fails_notice(report.runs, engine, ablated)
    if engine.verdict == FAILED and engine.explanation.startswith(STOPPED):
        # (a trial: a --timeout set too small read as declared state incomplete)
        return (f"the engine's own full resume was {STOPPED}: "
                f"{first_line(engine.failure or '')}. A run stopped so says nothing "
                "of whether the declared components capture the program's state. "
                f"{LONGER_BOUND[0].upper()}{LONGER_BOUND[1:]}; if it hangs there after a "
                "restart, that is the finding."
                + (" Ablations cannot be judged: inconclusive." if ablated else ""))
    where = (f"fails: {first_line(engine.failure or '')}" if engine.verdict == FAILED
             else engine.where_it_differs())
    ablations = " Ablations cannot be judged: inconclusive." if ablated else ""
    if any(r.dropped and r.verdict == DIVERGED for r in report.runs):
        # (trial 853: "before it" of rows departing at the same step read as false)
        ablations = (" Ablations that depart before it (at an earlier step, or at the same "
                     "step in what the step computes first: its data before its loss) are "
                     "judged (the two runs differ only in that component's restore); the "
                     "others are inconclusive."
                     if not (engine.first_divergent_quantity or "").startswith("state of") else
                     " Ablations that depart in a step, or end otherwise in a component it "
                     "ends as the uninterrupted run does, are judged (the two runs differ "
                     "only in that component's restore); the others are inconclusive.")
    if report.launch_settings_matter:
        return _settings_lacking_notice(_launch_text(report.seed, report.launched_with),
                                        where, ablations)
    settings = ("" if report.launch_settings_matter is False  # (built with them: alike)
                else _settings_clause(report.seed, report.launched_with))
    own = report.full_resume
    loop = re.search(rf"{FRAMEWORK_RESUME}, through (.+?)'s own resume",
                     own.explanation if own is not None else "")
    # (trial 706: an average updated there, one update behind, read as Lightning's counts)
    after = _AFTER_SAVE_LEAD if own is not None and MODULE_AFTER_SAVE in own.explanation else ""
    return after + _incomplete_notice(engine, where, settings, ablations,
                              _uncompared_clause(report.undeclared, lines_shown),
                              [uncompared_path(line) for line in _may_explain(report.undeclared)],
                              loop.group(1) if loop else None,
                              [(uncompared_path(line), CHECKPOINT_LOSES in line)
                               for line in report.undeclared
                               if CHECKPOINT_LOSES in line or CHECKPOINT_MAY_LOSE in line],
                              own is not None and own.checkpoint == "program"
                              and own.verdict in (IDENTICAL, CLOSE))


def _passing(tolerance: dict[str, Any]) -> set[str]:
    """The verdicts of a run that resumes under the report's tolerance."""
    return {IDENTICAL} if tolerance.get("mode") == "bitwise" else {IDENTICAL, CLOSE}


def resave_loses(names: list[str]) -> str:
    """What a save right after the program's load() loses, in words: one
    component that differed there, or one or more of several (the rerun that
    departs saved them all: which of them it loses, it does not tell)."""
    # (a trial read "on a second resume" as any: its own second resume, with steps
    # between, resumed; only a checkpoint written before any step departs)
    # (trial 839: every save until its loop set the position again lost it, and "before any
    # step" read as a rare case to dismiss; only the save right after the load was tried)
    later = " (a later one, before your code sets it again, may too)"
    if len(names) == 1:
        return (f"a checkpoint written right after a restore, before any step, loses "
                f"{names[0]}{later}")
    return ("what a checkpoint written right after a restore, before any step, loses is among "
            f"{', '.join(names)}{later}")


def _headline(report: Report) -> str:
    env = report.environment
    return (
        f"resumecheck: {report.target}, {report.steps} steps, resume at "
        f"{','.join(map(str, report.resume_at))}, {report.seed_text}, "
        f"{report.restarts_text}, {report.tolerance_text}; torch {env.get('torch')}, "
        f"{env.get('threads')} thread(s), {env.get('device')}\n"
        f"full resume: {outcome_text(report)}"
    )


_PLAUSIBLE = (  # (trial 430: beyond the seeds' spread at 6 of 13 steps, read as within it)
    # (trials 439, 441, 442, 444: the seed made their data too, and "a loss curve would
    # hardly show it" read stronger than a band of runs on other data says)
    # (trial 591: the band is between any two of those runs, the uninterrupted run's too)
    "noise: plausible (of a row marked so): the loss stays within the widest spread between "
    "runs with different seeds, the uninterrupted run among them (at any of those steps, not "
    "at each; another seed changes all that the "
    "program draws from it: its weights, and its data where the seed makes them), so its loss "
    "curve alone would hardly tell it from another seed's run; that run's continuation "
    "differs all the same")


def _drop_rows_line(report: Report) -> str:
    """What the drop rows are, under a table with one that diverged (a trial
    read seven `diverged` rows under an EQUIVALENT headline as failures; trial
    419 read "needs it" of a step counter only the end state showed lost;
    trial 496 asked, of restarts at 7 and 29, whether a row drops it at both)."""
    every = " at every restart of the schedule" if len(report.resume_at) > 1 else ""
    # (trial 533: `drop hard_cache failed`, a step that raised without it, read as a fault)
    failed = ("; `failed` there, that the run without it raised or stopped (its why says "
              "where), as a program that needs it may" if any(
                  r.dropped and r.verdict == FAILED for r in report.runs) else "")
    return ("drop rows: ablations, each leaving a component out of the engine's restore on "
            f"purpose{every}: `diverged` there shows that losing it changes this run (its "
            f"steps, or, in a row marked silent, only what no loss shows), not a failure{failed}; "
            "the full resume rows and the headline judge your checkpoint")


def lossy_first(diagnosis: list[Finding], incomplete: str | None) -> list[Finding]:
    """The findings in the order a report prints them: those the WARNING names
    as not loading back their own state, or changed before the first step,
    first (trials 529, 539: a stream the
    framework's checkpoint holds none of led, not judged, before them)."""
    # (trial 768: the same of a callback the WARNING names as changed before the first
    # step, after which an unread stream had led)
    lossy = [f for f in diagnosis if incomplete and incomplete.startswith(
        (LOSSY_ONE, LOSSY_MANY, CHANGED_ONE, STALE_ONE, MOVED_ONE))
        and f"`{f.component}`: " in incomplete
        and not is_fit_loop_recount(f)]
    # (trial 659: Lightning's recount of an epoch's end, lossy in a correct resume too, led)
    return lossy + [f for f in diagnosis if f not in lossy]


def _footer(report: Report) -> list[str]:
    lines = []
    full = report.full_resume
    if full is not None:
        incomplete = report.incomplete_state_notice()
        for f in lossy_first(full.diagnosis, incomplete):
            # (trials: a "diagnosis:" of a generator the program put back itself read
            # as a problem in a passing report, and as the cause in a failing one)
            label = "note" if f.put_back() else "diagnosis"
            lines.append(f"{label}: {f.line_in(full, incomplete)}")
        if full.divergence_detail:
            lines.append(f"first divergence: {full.divergence_detail}")
        for s in full.stream_offsets:
            lines.append(f"streams: {s.detail}")
        if full.failure:
            lines.append(f"failure: {full.failure}")
        if full.verdict != IDENTICAL or full.lost_on_resave():  # (a trial: missing there)
            lines.append(f"reproduce: {full.reproduce}")
    if any(r.dropped and r.verdict in (DIVERGED, FAILED) for r in report.runs):
        lines.append(_drop_rows_line(report))
    lines += _noise_lines(report)
    lines += caveats(report)
    if report.outcome == "NOT EQUIVALENT" and full is not None and full.checkpoint == "program":
        # (trials 696, 703: a failing report left out the caveats its twin's gave, unsaid)
        lines.append(_CAVEATS_LEFT_OUT if report.isolation == "inprocess" and not report.nproc
                     else _CAVEATS_LEFT_OUT.replace(_IN_PROCESS_CAVEAT, ""))
    # (trials: rank 0's position saved for all, and a position reset at an epoch's end,
    # both EQUIVALENT at the point tried, with nothing said)
    lines += [_not_checked_line(what) for what in report.not_checked]
    spots = report.blind_spots
    if spots:
        names = ", ".join(",".join(r.dropped) for r in spots)
        # (trial 157: a vocabulary confirmed as the cause above, and a blind spot here)
        confirmed = confirmed_causes(report.full_resume)
        caused = [c for r in spots for c in r.dropped if c in confirmed]
        one = len(spots) == 1 and len(spots[0].dropped) == 1  # (trial 235: "config (... them")
        lines.append(
            f"blind spot{'' if one else 's'}: {names} (dropping {'it' if one else 'them'} from "
            f"the engine's restore changed no step after {_restarts_at(report.resume_at)}: "
            "not proof that "
            f"{'it is' if one else 'they are'} saved"
            + (f"; yet {', '.join(caused)}, confirmed above: the full resume's restore gives "
               "it otherwise, where what a drop leaves (a fresh build's, or what another "
               "declared component puts back) holds it as the run did"
               if caused else "")
            + ")")
    return lines


def _noise_lines(report: Report) -> list[str]:
    """The footer's lines on the seed-to-seed band: how it was measured, and
    what each label of the noise column means."""
    lines = []
    why = report.noise.get("why")
    if why and report.noise.get("band") is not None:  # (some noise runs failed: trial 463)
        lines.append(f"noise: measured from fewer runs than asked: {why}")
    elif why and any(r.verdict == DIVERGED for r in report.runs):  # ("-" in the noise column)
        lines.append(f"noise: not measured: {why}")
    labels = {r.noise_label for r in report.runs if r.verdict == DIVERGED}
    if "plausible" in labels:
        # (trials 161, 162, 164, 171, 174 read "plausible" beside a lost component as harmless)
        # (trial 179: under an EQUIVALENT headline, read as said of the user's own resume)
        # (trials 602, 603: twice the seeds' loss right after the restart, beyond their
        # spread at those steps, read "would hardly tell it" against what a curve showed)
        beyond = any(r.beyond_at for r in report.runs if r.noise_label == "plausible")
        lines.append(_PLAUSIBLE + (" (where its why names steps beyond the seeds' spread at "
                                   "the same step, read step by step it may)" if beyond else ""))
    if "silent" in labels:  # (trial 175: it differs not at all; trial 176: nor does training)
        # (trial 497: an EMA dropped, its weights apart at every step from the restart on,
        # read as a row where only the end differed)
        # (trial 811: a loss scale apart at three steps, the run alike after them, read as
        # a run that ends otherwise)
        lines.append("noise: silent (of a row marked so): the training loss does not differ "
                     "at all; something else does, which its why names: a quantity of a step "
                     "(a loss scale, a learning rate, a gradient, a parameter), what the run "
                     "ends with, or state its steps keep that reaches no loss (an average of "
                     "the weights)")
    return lines


def _restarts_at(points: list[int]) -> str:
    """``the restart at 8``, ``the restarts at 4 and 8`` (trial 527: a blind spot
    "changed no step here" named no step)."""
    if len(points) == 1:
        return f"the restart at {points[0]}"
    return f"the restarts at {', '.join(map(str, points[:-1]))} and {points[-1]}"


def _table(report: Report) -> str:
    rows = [_header(report), *_rows(report)]
    whole = []  # (each run cut in its row, and its why whole)
    for row in rows[1:]:
        cell = _cell(row[-1])
        if cell != row[-1]:
            whole.append((row[0], row[-1]))
        row[-1] = cell
    widths = [max(len(row[i]) for row in rows) for i in range(len(_HEADER) - 1)]
    lines = [_headline(report), ""]
    notices = [report.incomplete_state_notice(), report.unseeded_notice(), report.set_order]
    lines[1:1] = [f"WARNING: {notice}" for notice in notices if notice]
    lines[-1:-1] = [f"not traced: {what}" for what in report.untraced]
    lines[-1:-1] = [f"not compared: {what}" for what in report.undeclared]
    for n, row in enumerate(rows):
        cells = [c.ljust(w) for c, w in zip(row[:-1], widths)] + [row[-1]]
        lines.append("  ".join(cells).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths) + "  ---")
    if whole:  # (every trial: why cells of 600-1900 characters made the table unreadable)
        lines += [""] + [f"why, {label}: {why}" for label, why in whole]
    footer = _footer(report)
    return "\n".join(lines + ([""] + footer if footer else [])) + "\n"


_CELL = 100
"""A why cell of the text table holds at most about this many characters; a
longer why is given whole below the table."""

_BELOW = " (why below)"


def _cell(why: str) -> str:
    """A run's why as the text table's cell shows it: whole where it is short,
    else its first clause (up to the first "; " outside parentheses), itself
    cut at a word where it is still long, and a pointer to the whole below."""
    if len(why) <= _CELL:
        return why
    depth, end = 0, len(why)
    for i, c in enumerate(why):
        depth += (c == "(") - (c == ")")
        if depth == 0 and why.startswith("; ", i):
            end = i
            break
    head = why[:end]
    if len(head) > _CELL:
        head = head[:_CELL].rsplit(" ", 1)[0].rstrip(",;:(") + " ..."
    return head + _BELOW


def _markdown(report: Report) -> str:
    """GitHub-flavoured Markdown, ready for a CI job summary: a heading with
    the verdict, the settings, the table, then diagnosis and how to reproduce."""
    env = report.environment
    lines = [
        f"### resumecheck: full resume {outcome_text(report)} — `{report.target}`", "",
        f"{report.steps} steps, resume at {','.join(map(str, report.resume_at))}, "
        f"{report.seed_text}, {report.restarts_text}, "
        f"{report.tolerance_text}; torch "
        f"{env.get('torch')}, {env.get('threads')} thread(s), {env.get('device')}", "",
    ]
    for notice in (report.incomplete_state_notice(), report.unseeded_notice(), report.set_order):
        if notice:
            lines += [f"**Warning:** {notice}", ""]
    for what in report.undeclared:
        lines += [f"**Not compared:** {_md_cell(what)}", ""]
    lines.append("| " + " | ".join(_md_cell(c) for c in _header(report)) + " |")
    lines.append("|" + "---|" * len(_HEADER))
    for row in _rows(report):
        lines.append("| " + " | ".join(_md_cell(c) for c in row) + " |")
    footer = _footer(report)
    if footer:
        lines.append("")
        for line in footer:
            head, _, rest = line.partition(": ")
            rest = f"`{rest}`" if head == "reproduce" else _md_cell(rest)
            lines.append(f"- **{head}**: {rest}")
    return "\n".join(lines) + "\n"


def _md_cell(text: str) -> str:
    """Text in a Markdown table cell: pipes escaped, no line breaks."""
    return text.replace("|", "\\|").replace("\n", " ")


def _num(value: float | None) -> str:
    if value is None:
        return "-"
    if value == 0:
        return "0"
    return three_figures(value)


def three_figures(value: float) -> str:
    """``value`` to three significant figures, its trailing zeros kept where
    it is not that whole number (a trial read `1` of 1.0045 as exact)."""
    text = f"{value:.3g}"
    if "." not in text and "e" not in text and "n" not in text and float(text) != value:
        kept = f"{value:#.3g}"
        return f"{value:.4g}" if kept.endswith(".") else kept  # (100.4, not "100.")
    return text


def _finite(value: Any) -> Any:
    """JSON has no inf/nan: write them as strings."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def _after_restart_notice(engine: RunResult, where: str, named: str, ending: str,
                          framework: str | None = None) -> str | None:
    """The notice where the engine's resume departs for what its restarts do,
    not for what the components leave out: a framework's validation a resume
    does not run again, or steps after a first restart that leave declared
    state otherwise at a later one (None: neither). ``framework``: whose own
    loop runs the restarts (trial 246: Lightning's left out a plateau step,
    and the notice offered only the program's code)."""
    if NOT_VALIDATED_AGAIN in engine.explanation:  # (a trial read undeclared state into it)
        head = ("the framework's loop validated after the resume point, and a resume from a "
                "checkpoint written at that batch's end does not validate again: the engine's "
                f"own resume, through the framework's restore, {where} as well")
        if named:  # (a trial's lost attribute, named, read as second to a harmless validation)
            return (f"{head}, which either that explains, where the validation changes state "
                    "the steps read (a scheduler stepped on its metric, an EarlyStopping "
                    f"count), or state the steps read that no component declares{named}. "
                    "Resume points where no validation follows tell the two apart"
                    f"{ending}")
        return (f"{head}, which that alone explains where the validation changes state the "
                "steps read (a scheduler stepped on its metric, an EarlyStopping count). Resume "
                "points where no validation follows show whether the declared components "
                f"capture the rest{ending}")
    later = engine.later_restore_otherwise()
    if not later and not engine.steps_match():
        return None
    # (a trial: a fast-forward that reset a declared counter after every restart)
    code = ("code of the program that runs only after a restore changes declared state as it "
            "steps (a fast-forward that resets a counter, a position counted from the restart)")
    if framework:
        code += (f", or {framework}'s loop, which runs the engine's restart too, goes on "
                 "otherwise after a restore (Lightning may leave out the epoch-end step of a "
                 "scheduler stepped per epoch or on a validation metric, for the epoch the "
                 "resume began in)")
    # (trial 718: "no component declares" of a declared EMA's count its state_dict() left out)
    unheld = f"those steps read state no declared component's state holds{named}"
    causes = f"{unheld}, or {code}" if named else f"{code}, or {unheld}"
    if not later:  # (a trial: one restart, every step alike, a position ending one short)
        points = ",".join(map(str, engine.resume_at))
        return (f"{LATER_OTHERWISE}: the engine restored every declared component at {points}, "
                "every step after it matched the uninterrupted run's, and the run still "
                f"{where}. Either {causes}{ending}")
    listed = "; ".join(f"`{f.component}` at {f.step}: {f.detail}" for f in later)
    return (f"{LATER_OTHERWISE}: the engine restored every declared component at "
            f"{engine.resume_at[0]}, every step after it matched the uninterrupted run's, and "
            f"what its run held at its next restart differs ({listed}); the run then {where}. "
            f"Either {causes}{ending}")


def _not_checked_line(what: str) -> str:
    """A ``Report.not_checked`` entry as its line. One on a component's fields
    names the component before the colon (trial 539: "not checked at this
    resume point: of `data_cursor`, `epoch_progress...` (...); ... are at step 6
    as ..." was hard to read)."""
    of = re.match(r"of (`[^`]+`), ", what)
    if of is None:
        return f"not checked at this resume point: {what}"
    return f"not checked at this resume point, of {of.group(1)}: {what[of.end():]}"


def confirmed_causes(run: RunResult | None) -> set[str]:
    """The components a run's diagnosis confirmed as its cause (none: no run)."""
    return {f.component for f in run.diagnosis if f.status == CONFIRMED} if run else set()


def caveats(report: Report) -> list[str]:
    """What the report cannot see, said on its last lines and in its JSON
    (``caveats``; trial 143: a CI job reading the JSON never saw them)."""
    lines = []
    full = report.full_resume
    if report.drawn_at_import and report.isolation == "inprocess" and not report.nproc:
        # (trial 142: a data order drawn at import, never seeded, passed run, the test
        # and fuzz in-process; a real restart read other samples)
        lines.append(f"not checked in-process: {drawn_at_import_text(report.drawn_at_import)}")
    elif report.drawn_at_import and report.outcome != "EQUIVALENT":
        # (trial 143: judged within tolerance in fresh interpreters, the report blamed
        # undeclared state and never named the draw)
        lines.append("note: as your module is imported it draws from "
                     f"{global_streams(report.drawn_at_import)} without a seed, which each "
                     "new interpreter draws otherwise: a likely "
                     "cause of what differs here; seed it before that draw")
    if (report.isolation == "inprocess" and report.outcome == "EQUIVALENT"
            and not report.set_order and not report.nproc):
        # (a trial: a vocabulary numbered by iterating a set passed in-process, no word)
        # (trial 143: said of every program, it read as a finding about this one)
        lines.append(HASH_ORDER_UNCHECKED)
    if report.outcome == "EQUIVALENT" and full is not None and full.checkpoint == "program":
        if report.build_settings:
            # (trial 145: a compiler setting made only where the script started from
            # scratch passed every door; its real resume path never set it)
            lines.append(build_settings_text(report.build_settings))
        # (trial 141: a seed set again in the script's main, after its load, passed:
        # the restart here never runs that code; trial 179: said "your save()" of an
        # Accelerate loop, whose row says what ran instead)
        if not any(note in full.explanation for note in (ADAPTER_LOOP, FRAMEWORK_RESUME)):
            lines.append(RESUME_CODE_UNCHECKED)
        if SAVED_AT_BATCH_END in full.explanation:  # (trial 774: said only deep in the why)
            lines.append(EPOCH_END_UNCHECKED)
    return lines


def _known_cause(report: Report, own: RunResult | None) -> str | None:
    """The WARNING's sentence where what departs the engine's own resume is
    known and no declared state is lost: a framework's setting, a framework's
    fetch before its restore, a draw at the module's import in fresh
    interpreters (None: not known)."""
    told = re.search(r"the resume was told `([^`]+)`", own.explanation) if own else None
    if told is not None:
        return (f"the resume was told `{told.group(1)}`: it does not skip the batches the run "
                "had already read in its epoch and reads that epoch again from its start, in "
                "your own resume and in the engine's, which goes through the same restore "
                "(leave the setting out to resume where the run was).")
    if own is not None and ORDER_BEFORE_RESTORE in own.explanation:
        return ("the resumed epoch's order was drawn before the random streams were restored: "
                "the framework's sampler shuffles from torch's global stream as it makes the "
                "epoch's iterator, which the framework's restore makes before it puts that "
                "stream back, in your own resume and in the engine's, which goes through the "
                "same restore (see the own resume's row).")
    if own is not None and FETCHED_BEFORE_RESTORE in own.explanation:
        return (f"the first resumed step's batches were {FETCHED_BEFORE_RESTORE}: your data "
                "collator (or dataset) draws from a global stream as batches are fetched, and "
                "the framework's restore of that stream comes after the fetch, in your own "
                "resume and in the engine's, which goes through the same restore (see the own "
                "resume's row).")
    if own is not None and SKIPS_BLIND in own.explanation:
        return (f"the training data has no length, so the framework {SKIPS_BLIND}: its resume "
                "skips batches counted from the first epoch's start, which after that epoch's "
                "end is not where the run was, in your own resume and in the engine's, which "
                "goes through the same restore (see the own resume's row).")
    if own is not None and PLATEAU_MARK in own.explanation:
        # (trial 605: the WARNING named the epoch-end step of a scheduler stepped per epoch)
        return ("a plateau scheduler (ReduceLROnPlateau) of interval \"step\" is stepped by "
                "Lightning after on_train_batch_end, where a step's checkpoint is written: "
                "every checkpoint holds it one update behind, in your own resume and in the "
                "engine's, which goes through the same restore (see the own resume's row).")
    if report.drawn_at_import and report.isolation == "process":
        return ("as your module is imported it draws from "
                f"{global_streams(report.drawn_at_import)} without a seed, and every "
                "restart here is a new interpreter that imports it again and "
                "draws otherwise: the runs differ however complete the checkpoint (seed it "
                "before that draw).")
    return None


PLATEAU_MARK = "a plateau scheduler (ReduceLROnPlateau) counted another step"
"""How a resume's why opens its note that Lightning stepped a plateau scheduler
after the checkpoint was written (``verdict.PLATEAU_AFTER_SAVE``)."""


def build_settings_text(settings: list[str]) -> str:
    """The line on settings the program's build sets (``Report.build_settings``)."""
    named = "; ".join(settings[:3]) + (f"; and {len(settings) - 3} more" if len(settings) > 3
                                       else "")
    return ("not checked: your build sets process-wide settings, which each restart here sets "
            f"again as it builds the program before your load() ({named}); a resume path of "
            "your script that builds otherwise (from the checkpoint's settings) must set them "
            "too")


_IN_PROCESS_CAVEAT = "; in-process, an order that follows the hash seed"
_CAVEATS_LEFT_OUT = (
    "not listed beside a failure: what a passing report says it cannot see (your script's "
    f"own resume code, which the restarts here do not run{_IN_PROCESS_CAVEAT}): once this "
    "resumes, its report names them")
"""The line a failing report of a program with its own save/load ends with
(a passing one lists them: ``caveats``)."""

RESUME_CODE_UNCHECKED = (
    "not checked: your script's own resume code (which checkpoint it picks; a seed or a "
    "position set after the load in its main), nor saves your loop makes inside a step "
    "(before its scheduler steps): each restart here calls your save() between steps with a "
    "path of its own, builds the program and calls load() with that save's path, so what a "
    "resume needs must be in save() and load() (or the framework's restore); a load() that "
    "picks the latest of several checkpoints, or a save() that deletes old ones, meets only "
    "the checkpoints the schedule writes, one per resume point")
"""The last line of an equivalent report whose program resumed through its own
checkpoint: the script's own resume code is not what runs, nor its loop's own
saves (trial 157: a periodic save made before the scheduler stepped passed;
trial 456: a load() that picked the latest checkpoint of a directory, and a
save() that kept the last three, were never given more than one)."""


def is_fit_loop_recount(finding: Finding) -> bool:
    """Whether ``finding`` is of a Lightning target's fit-loop progress, its
    counts of epochs first (``epoch_progress``)."""
    return finding.component == DATA_CURSOR and finding.detail.startswith("epoch_progress.")


_FIT_LOOP_UNJUDGED = (
    " (not judged: Lightning's counts of epochs, which its restore of a checkpoint taken at "
    "an epoch's last batch counts once more in a correct resume too: of itself no lead)")

_FIT_LOOP_LATENT = (
    " (latent: it changed no step here; Lightning's own counts of epochs, which no code of "
    "yours sets: its restore of a checkpoint taken at an epoch's last batch counts that "
    "epoch's end again, and its counts of epochs made ready and started stay behind; a "
    "sampler's set_epoch, which Lightning calls at an epoch's start, reads one: it agrees "
    "again at the next epoch's start, and a second restart, from a checkpoint written after "
    "this one at another epoch's end, reads another epoch's order; the check "
    "writes its checkpoint at the epoch's last batch, where a "
    "ModelCheckpoint of steps writes: one of epochs, Lightning's default, writes at the "
    "epoch's end, and Lightning resumes from it with these counts alike, its steps not "
    "checked here)")
"""A Lightning target's fit-loop counts of epochs that alone end otherwise,
every step alike (``verdict._fit_loop_counts_only``; trial 706: "so a step there
would differ" of a step at an epoch's start that matched)."""


_FIT_LOOP_NOTE = (
    " That component is the Lightning target's own, its fit loop's progress: Lightning "
    "restores a checkpoint taken at an epoch's last batch as if the epoch had ended and counts "
    "its end again, which your own resume from such a checkpoint does too; its counts of the "
    "epochs it then makes ready and starts stay one behind (no code of yours sets them), and "
    "a later restart from a checkpoint written after that at another epoch's end may read its "
    "data elsewhere (a loader whose epoch follows those counts; one that keeps its own does "
    "not), and a loader it makes again each epoch "
    "(reload_dataloaders_every_n_epochs) may not be made again for the next epoch, which then "
    "reads the loader of the epoch before, or, made again with another length, counts the "
    "ended epoch's batches as read of it and ends it early; a resume point inside an epoch "
    "checks the rest. "
    "The check writes its checkpoint there, in on_train_batch_end of the epoch's last batch, "
    "where ModelCheckpoint(every_n_train_steps=...) writes; one of epochs (Lightning's "
    "default) writes at the epoch's end instead, which the check does not try, and Lightning "
    "resumes from that one with these counts as the uninterrupted run's (its steps are not "
    "checked here: a trial's departed): where your run checkpoints only at epoch ends, this "
    "end state is not what your resume meets.")
"""(trials 137-140: a correct program's resume at an epoch's end ended with those counts
behind; restarted again at the next epoch's end, plain Lightning read step 7's batch at 13;
trial 233: a curriculum's loader, reloaded each epoch, was not reloaded after such a resume;
trial 775: one that grew was, and its next epoch ended after 2 of its 8 batches;
trial 243: a loader that kept its own epoch read its data alike, "reads" was too strong;
trial 638: a correct program whose ModelCheckpoint wrote at epoch ends was told so, where its
own relaunch, and the check's own resume parked at the epoch's end, ended alike)"""


_FRAMEWORK_LOSSY = "'s restore does not bring back what it saved"
"""How a framework target's lossy component is said (``_lossy_notice``)."""


_SET_AT_ITERATOR = (
    ", or it sets its place only when it next makes an iterator, as a StatefulDataLoader "
    "does: where the steps after the restore read the uninterrupted run's samples, that "
    "place came back")
"""(trial 808: a datamodule whose count was set from its restored start when its next
iterator was made read "does not load back its own state", where its data matched)"""


def _place_back_notice(lossy: list[Finding], where: str, ending: str) -> str:
    """The WARNING where ``RunResult.place_came_back`` (trial 833: a datamodule whose sampler set
    its place when its next iterator was made, its shuffle generator left out of its
    state, was said not to load back its own state; its place came back, its order not)."""
    listed = "; ".join(f"`{f.component}`: {f.detail}" for f in lossy)
    return (f"a declared data position came back at its place, in another epoch's order: the "
            f"engine restored every declared component and the run still {where}, reading the "
            f"same place of another epoch. Right after the restore, {listed}, as a load that "
            "sets its place only when it next makes an iterator leaves it (a StatefulDataLoader "
            "does): the place came back; what makes the epoch's order did not (a shuffle "
            "generator's state, a sampler's epoch, that its state_dict() leaves out or its "
            f"load does not set){ending}")


def _positions(lossy: list[Finding]) -> bool:
    """Whether a data position is among ``lossy`` (a datamodule's, a loader's)."""
    return any(split_rank_name(f.component)[0] in ("datamodule", DATA_CURSOR) for f in lossy)


def _own_loads_first(lossy: list[Finding]) -> str:
    """Where a callback's state, or a training loader's in the framework's loop
    state, came back otherwise, its own load first (trial 407: a callback's
    load_state_dict() read a key its state_dict() had renamed; trial 411: a
    loader's load lost a field; the WARNING led with the framework's restore)."""
    names = [split_rank_name(f.component)[0] for f in lossy]
    owners = [who for who, there in (
        ("a callback's", CALLBACKS in names),
        # (trial 713: a datamodule's load read a renamed key; the WARNING led with Lightning)
        ("your LightningDataModule's", "datamodule" in names),
        ("your loader's", any(n == DATA_CURSOR and "combined_loader" in f.detail
                              for n, f in zip(names, lossy)))) if there]
    # (trial 539: a LightningModule's on_save_checkpoint() added a running norm that no
    # on_load_checkpoint() read back; the WARNING led with Lightning's restore)
    hooks = ("your LightningModule's on_load_checkpoint() does not set it from what its "
             "on_save_checkpoint() added, or " if "hooks" in names else "")
    return hooks + (f"{' or '.join(owners)} load_state_dict() does not set it from the state "
                    "it is given back, or " if owners else "")


def _loop_rate(where: str, framework: str | None) -> str:
    """Where a framework target's engine restart departs first in the learning
    rate, beside a component that does not load back its own state: the
    framework's loop may step a scheduler otherwise after a restore, which no
    checkpoint puts right (trial 669: a plateau stepped on a validation metric,
    left out by Lightning at the epoch's end after a resume, departed the
    correct twin alike, and the WARNING tied the departure to the lost state)."""
    if framework is None or "(learning rate)" not in where:
        return ""
    return (f" The learning rate is the first to differ: {framework_name(framework)}'s loop "
            "may also step a "
            "scheduler otherwise after a restore than in the uninterrupted run (Lightning may "
            "leave out the epoch-end step of a scheduler stepped per epoch or on a validation "
            "metric, at the end of the epoch the resume began in; and, resumed from a "
            # (trial 749: BackboneFinetuning's backbone group, whose rate it sets there)
            "checkpoint at an epoch's last batch, it does not run the next epoch's "
            "on_train_epoch_start hooks, where a callback may set a group's rate: "
            "BackboneFinetuning's), which no checkpoint puts right: the lost state may matter "
            "only later.")


def _restore_departs(runs: Sequence[RunResult]) -> str:
    """Where the engine's full resume departs and leaving one component out of
    its restore resumes as the uninterrupted run, every step and the end
    alike: the engine's own restore of that component is what departs (trial
    671: a loader's generator put in after Lightning had made the epoch's
    iterator; the WARNING blamed the fit loop's counts, and the one ablation
    that showed it read as not judged)."""
    alike = [r.dropped[0] for r in runs if len(r.dropped) == 1 and r.verdict == INCONCLUSIVE
             and r.first_divergent_quantity is None and not r.failure]
    if not alike:
        return ""
    named = ", ".join(f"`{name}`" for name in alike)
    one = len(alike) == 1
    # (trial 815: a datamodule's position saved one batch behind, whose fresh build's
    # held the right place at an epoch's end, was said put in too late, of a generator)
    return (f"Left out of the engine's restore, {named} {'resumes' if one else 'each resume'} "
            "as the uninterrupted run, every step and the end alike: the engine's own restore "
            f"of {'it' if one else 'them'} is what departs: put in after what reads "
            f"{'it' if one else 'them'} (an iterator the framework made before, from a "
            f"generator it holds), or what {'its' if one else 'their'} state_dict() saves is "
            "not where the run was (a position counted early or late), where a fresh build's "
            "holds the right place here (an epoch's start).")


def _samples_clause(where: str, own_alike: bool, read_elsewhere: bool) -> str:
    """The WARNING's sentence on the samples, where the engine's restart departs
    in them beside Lightning's fit-loop progress (``_lossy_notice``)."""
    if "(the samples consumed)" not in where:
        return ""
    if own_alike:  # (trials 638, 651: a plain shuffled loader, told to start the epoch whole)
        return (" The samples differ in this restart alone: your own resume, through "
                "Lightning's restore, reads them as the uninterrupted run does, where the "
                "engine's puts the fit loop's progress into the live loop before its first "
                "step, which Lightning does not promise to honour. Besides,")
    # (trial 137: a loader of its own restored its position at the epoch's end and skipped
    # the whole next epoch; the notice spoke of Lightning's counters; trial 139: it still
    # named them first; trials 651, 659: a plain shuffled loader, its stream lost, read this)
    return (" The samples differ: where your loader keeps its own position, a position at an "
            "epoch's end restored must start the next epoch whole, not skip that many batches "
            "of it" + (" (see the first divergence: which step's samples the restart reads)"
                       if read_elsewhere else "")
            + "; where it keeps none, its shuffle draws the next epoch's order from a stream, "
            "which the restore may not have brought back (see the diagnosis). Besides,")


def _lossy_notice(lossy: list[Finding], where: str, settings: str, ablations: str,
                  read_elsewhere: bool = False, framework: str | None = None,
                  own_alike: bool = False) -> str:
    """The incomplete-state notice where declared components differ right after
    the engine restored them from their own capture (``lossy``): their load
    does not bring back what their state_dict() gave, or, where it did (the
    adapter checks it at once), something changed them before the first step.
    ``read_elsewhere``: the first divergence says which step's samples the
    restart reads (trial 209: pointed at, where it did not). ``framework``: a
    framework target's, whose restore, not a load of the user's, brought it back."""
    ending = f"{settings}.{ablations}"
    changed = [f for f in lossy if changed_after_load(f.detail)]
    # (trial 768: beside a callback set again in on_fit_start, Lightning's recount of an
    # epoch's end, in a correct resume too, led the WARNING, where without ablations
    # the callback led alone)
    recounts = [f for f in lossy if f not in changed and is_fit_loop_recount(f)]
    if changed and len(changed) + len(recounts) == len(lossy):
        listed = "; ".join(f"`{f.component}`: {f.detail}" for f in changed)
        beside = "".join(f"; beside it, `{f.component}`: {f.detail}{_FIT_LOOP_UNJUDGED}"
                         for f in recounts)
        return (f"{CHANGED_ONE}: the engine restored every declared component and the run "
                # (trial 433: "Right after the restore, count 0, expected 7", which
                # came back as 7 there and was 0 at the first step)
                f"still {where}. At the first step after the restore, {listed}{beside}{ending}")
    if lossy and all(NO_LONGER_USED in f.detail for f in lossy):
        return _stale_notice(lossy, where, ending)
    if lossy and all(MOVED_BY_LATER_LOAD in f.detail for f in lossy):
        return _moved_notice(lossy, where, ending)
    # (trial 209: a callback its load gave back, set again in on_fit_start, was
    # said, beside a datamodule that lost state, not to load back its own)
    lossy = [f for f in lossy if f not in changed]
    listed = "; ".join(f"`{f.component}`: {f.detail}" for f in lossy)
    besides = "".join(f"; and `{f.component}`: {f.detail}" for f in changed)
    which = LOSSY_ONE if len(lossy) == 1 else LOSSY_MANY
    # (trials: the correct Lightning program resumed at an epoch's last batch was
    # told that "a declared component", which it never declared, loses its state)
    fit_loop = _FIT_LOOP_NOTE if any("epoch_progress." in f.detail for f in lossy) else ""
    if fit_loop and all("epoch_progress." in f.detail for f in lossy):
        # (trial 233 read "a declared component" as its own code's fault)
        which += " (Lightning's own fit-loop progress, which the Lightning target declares)"
    samples = _samples_clause(where, own_alike, read_elsewhere) if fit_loop else ""
    return (  # (a re-check: it opened with "do not capture the program's state")
        f"{which}: the engine restored every declared component and the run still "
        f"{where}.{samples} {'r' if samples else 'R'}ight after the restore, {listed}: "
        # (trial 437: a sampler's state_dict() saved its generator after the epoch's draw,
        # and its load drew the order again from it: the state left out lost it, not the load)
        + ("its load_state_dict() does not bring back what its state_dict() returned (or "
           "its state_dict() leaves out what that load needs, or something between the "
           "restore and the first step changed it)" if framework is None
           # (a trial: Lightning's StochasticWeightAveraging empties the schedulers at fit
           # start; the user read "its load_state_dict()" as a load of theirs)
           else f"{_own_loads_first(lossy)}{framework}{_FRAMEWORK_LOSSY} (or "
           "a callback, the framework's or yours, set it anew or emptied it around the "
           "restore, or something between the restore and the first step changed it"
           f"{_SET_AT_ITERATOR if _positions(lossy) else ''})")
        + f"{besides}{settings}.{fit_loop}{_loop_rate(where, framework)}{ablations}"
    )


def _moved_notice(lossy: list[Finding], where: str, ending: str) -> str:
    """The incomplete-state notice where every declared component that differs
    right after the engine's restore came back from its own load and a later
    component's load changed it (trial 891: a generator declared before the data
    position whose load drew the epoch's order from it read "its load_state_dict()
    does not bring back what its state_dict() returned")."""
    listed = "; ".join(f"`{f.component}`: {f.detail}" for f in lossy)
    return (f"{MOVED_ONE}: the engine restored every declared component and the run still "
            f"{where}. Right after the restore, {listed}. The engine loads the components in "
            "the order components() gives them, random state last, and a load that draws from "
            "a component restored before it (a data position that draws the epoch's order "
            "again from a generator) moves it on: where that draw replays one the "
            "uninterrupted run made (the epoch's shuffle), declare the state as it was before "
            "that draw (a generator's state at the epoch's start, kept then), so that the "
            "replay brings it where the run had it; otherwise declare it after the component "
            f"whose load reads it{ending}")


def _stale_notice(lossy: list[Finding], where: str, ending: str) -> str:
    """The incomplete-state notice where every declared component that differs
    right after the engine's restore is a random state set into generators
    another component's load had made anew (trial 862)."""
    listed = "; ".join(f"`{f.component}`: {f.detail}" for f in lossy)
    return (f"{STALE_ONE}: the engine restored every declared component and the run "
            f"still {where}. Right after the restore, {listed}. Have that load keep the "
            "generator object (hand the one it holds to what it builds again, or set the "
            "state into it); where the load brings the generator's state back itself "
            "(replaying the stream through it), it is no state to declare apart: leave "
            f"it out of the random state{ending}")


def _recount_beside(lossy: list[Finding], lost: Sequence[tuple[str, bool]],
                    ablations: str) -> tuple[list[Finding], str]:
    """Where Lightning's recount of an epoch's end is all that differs right after
    the engine's restore, and the program's own resume showed its checkpoint
    losing state no component declares (``lost``): no lossy load leads, and the
    recount is said beside (trial 873: it led the WARNING as "a declared component
    does not load back its own state", in a correct resume too, where a
    datamodule's level was lost). Else ``lossy`` and ``ablations`` as given."""
    if not lost or not lossy or not all(is_fit_loop_recount(f) for f in lossy):
        return lossy, ablations
    return [], "".join(f" Beside it, `{f.component}`: {f.detail}{_FIT_LOOP_UNJUDGED}."
                       for f in lossy) + ablations


def _incomplete_notice(engine: RunResult, where: str, settings: str, ablations: str,
                       named: str, paths: Sequence[str] = (), framework: str | None = None,
                       lost: Sequence[tuple[str, bool]] = (), own_alike: bool = False) -> str:
    """The incomplete-state notice once the engine's resume ran and departed
    (``where``): a component that does not load back its own state, a draw
    the restart makes, or state the components do not hold. ``settings``:
    the clause on the launch settings; ``ablations``: the sentence on them
    (empty where none ran); ``named``: the `not compared` clause; ``lost``:
    what of it the program's own resume showed its checkpoint losing (or
    maybe losing: False), each with whether it is shown; ``own_alike``: that
    resume continued as the uninterrupted run."""
    lossy, ablations = _recount_beside(engine.lossy_loads(), lost, ablations)
    ending = f"{settings}.{ablations}"
    reordered = [f for f in lossy if f.detail.startswith(REORDERED)]
    if reordered:
        return _reordered_notice(where, reordered, ablations)
    if lossy:
        # (trial 239: a loader count a restore always resets, harmless in its correct
        # twin, was the WARNING's only lead beside a lost counter the lines named)
        besides = (f" Something the components do not declare may be lost as well{named}."
                   if named else "")
        if engine.place_came_back():
            return _place_back_notice(lossy, where, f"{settings}.{besides}{ablations}")
        return _lossy_notice(lossy, where, settings, besides + ablations,
                             READ_BEFORE in (engine.divergence_detail or ""), framework,
                             own_alike)
    after_restart = _after_restart_notice(engine, where, named, ending, framework)
    if after_restart is not None:
        return after_restart
    drawn = next((o for o in engine.stream_offsets if o.draws and o.draws > 0), None)
    if drawn is not None:
        return _drawn_notice(_with_ranks_alike(drawn, engine.stream_offsets), where, named,
                             ending, lost, _read_a_later_epoch(engine, drawn))
    loader = re.search(rf"; ([^;]+ {re.escape(NOT_RESUMABLE)}[^;]*)", engine.explanation)
    if loader is not None:  # (trial 267: a framework's plain training loader)
        return (f"the restart reads its epoch again from its start: the engine restored every "
                f"declared component and the run still {where}, and "
                f"{loader.group(1)}{ending}")
    opener, position = _position_sentences(engine.explanation, paths)
    # (the framework's loop, where the engine's row offers it: `verdict._its_words`)
    loop = framework if framework and LOOP_GOES_ON in engine.explanation else None
    if loop is not None and opener == _NOT_CAPTURED_OPENER:
        opener += f", or {loop}'s {LOOP_GOES_ON}"
    rate = _rate_lead(engine, settings, loop, named)
    consumed = ("not a declared random stream: each was the uninterrupted run's at the start "
                "of that step" if _level_at_first(engine) else "a DataLoader iterator created "
                "after the load draws from the restored random stream")
    # (trial 486: a position component whose load skipped the epoch's read batches without
    # reading them; the loader's workers drew their augmentations afresh, and nothing was
    # undeclared nor consumed before the first step)
    return (
        f"{opener}: the engine restored every one of them and the run still "
        f"{where}.{position}{rate} Something the components "
        f"do not declare {'may be' if rate or loop else 'is'} lost{named}, or state is consumed "
        f"between the restore and the first step ({consumed}), or a component's "
        f"load_state_dict() {_LOAD_MISSES}{ending}"
    )


_LOAD_MISSES = (
    "brings back its state but not what it makes (an iterator it makes anew that skips the "
    "batches its epoch read without reading them: loader workers then draw their "
    "augmentations from the start), or reads another declared component that the engine "
    "restores after it, in the order components() gives them (a data position that makes its "
    "iterator again from sampler weights declared after it: declare what a load reads "
    "before it)")
"""(trial 486; trial 896: weights read before the engine put them back)"""


def _rate_lead(engine: RunResult, settings: str, loop: str | None, named: str) -> str:
    """The WARNING's sentence where the engine's restart departs first in the
    learning rate (none before a count the `not compared` lines name: trial 156)."""
    if not (engine.first_divergent_quantity or "").startswith("learning rate") or named:
        return ""
    if loop is not None:
        return _rate_in_the_loop(loop)
    return _RATE_SETTINGS if settings else _RATE_ALIKE_SETTINGS


def _level_at_first(engine: RunResult) -> bool:
    """Whether every declared stream was the uninterrupted run's at the start
    of the first step after the restore (trials 402, 404: an iterator made
    after the load was offered where every stream was level; trial 421: "not a
    random stream" beside an undeclared generator one draw ahead; trial 500:
    offered where the first step began level and drew one draw fewer)."""
    return bool(engine.streams_level) or (
        len(engine.resume_at) == 1 and bool(engine.stream_offsets)
        and all(o.step > engine.resume_at[0] + 1 for o in engine.stream_offsets))


def _position_sentences(explanation: str, paths: Sequence[str]) -> tuple[str, str]:
    """How the WARNING opens, by whether the why says that a declared data
    position came back as saved (``POSITION_UNUSED``; a trial read "do not
    capture the program's state" as its declarations incomplete, where its
    loop ignored a position that came back; trial 150, the same samples masked
    otherwise, as "other samples"), and its sentences on it: led by the
    position's own fields that its state does not bring back, where the `not
    compared` lines name them (``paths``; trial 147: a sampler's generator,
    left out of its state_dict(), was named only after guesses of a position
    saved where the run was not)."""
    unused = unused_position(explanation)
    if not unused:
        return _NOT_CAPTURED_OPENER, ""
    made = POSITION_TRANSFORMED.split("{}")[1].split("(")[0] in explanation
    opener = (f"the restart {'makes its samples otherwise' if made else 'reads other samples'} "
              "though every declared component came back")
    position = f" {unused[0].upper()}{unused[1:]}."
    head = unused.split(" came back")[0]  # (the position's names)
    own = [p for p in paths if "." in p and f"`{p.split('.')[0]}`" in head]
    if own:  # (trial 365 read "came back as saved" after it as contradicting it: its
        # state_dict() came back, without them; the guesses of other causes go)
        listed = ", ".join(f"`{p}`" for p in own[:3])
        names = head.removeprefix(POSITION_UNUSED.split("{}")[0])
        position = (f" The declared data position keeps fields its state does not bring back "
                    f"({listed}: see the `not compared` lines): the likeliest cause here. What "
                    f"the state_dict() of {names} returns came back as saved, without them.")
    return opener, position


_NOT_CAPTURED_OPENER = "the declared components do not capture the program's state"


def _rate_in_the_loop(framework: str) -> str:
    """``_RATE_SETTINGS`` where the engine's restart, like the program's own
    resume, goes on in ``framework``'s loop (trial 224: Lightning left out the
    epoch-end step of a plateau scheduler after a resume inside that epoch, and
    the WARNING gave settings the restart shares as the lead)."""
    return (f" The learning rate is the first to differ, in the engine's restart as in your "
            f"own resume, both going on in {framework}'s loop: after a resume a framework's "
            "loop may step a scheduler otherwise than in the uninterrupted run (Lightning may "
            "leave out the epoch-end step of a scheduler stepped per epoch or on a validation "
            "metric, at the end of the epoch the resume began in), which no checkpoint puts "
            "right; or a schedule's own settings (a warm-up length, a LambdaLR's function and "
            "what it reads), in no state_dict(), differ between the run and the restart.")


_RATE_SETTINGS = (" The learning rate is the first to differ: a schedule's own settings (a "
                  "warm-up length, a LambdaLR's function and what it reads) are in no "
                  "state_dict(), so a restart built with other settings than the run's departs "
                  "however complete the checkpoint.")
"""(trial 142: a warm-up length changed for the resumed run read as lost state)"""

_RATE_ALIKE_SETTINGS = (" The learning rate is the first to differ, in a restart built with "
                        "the run's own settings: what sets the rate reads state the components "
                        "do not hold (a count of yours that the rate follows, a scheduler made "
                        "anew from other state), or a schedule's own settings (a warm-up "
                        "length, a LambdaLR's function and what it reads), in no state_dict(), "
                        "come out otherwise in the restart's build.")
"""``_RATE_SETTINGS`` where the restart is built as the run was (no launch
settings, or known alike): trial 641's rate followed a token count its
not_state left out, and the WARNING led with settings that could not differ."""


def _state_notice(report: Report, lines_shown: bool) -> str | None:
    """``Report.incomplete_state_notice``: its known cause first, where there is
    one; where the program's own resume is equivalent, opened with that."""
    notice = _incomplete_state_notice(report, lines_shown)
    own = report.full_resume
    cause = _known_cause(report, own) if notice is not None else None
    if notice is not None and cause is not None:
        # (trials 142, 143: the WARNING led with undeclared state or a stream drawn,
        # then, put after the cause, read as a second cause that is not there)
        ablations = notice[notice.find(" Ablations "):] if " Ablations " in notice else ""
        notice = cause + ablations
    lead = ""
    if notice is not None and own is not None and own.checkpoint == "program" \
            and own.verdict in (IDENTICAL, CLOSE) and not own.lost_on_resave():
        # (a trial: a correct Trainer program read the WARNING as its own fault; trial
        # 832: said at the end of a long WARNING whose advice read as the program's fix)
        if _failed_beside(report.engine_resume):
            notice += _OWN_EQUIVALENT_BESIDE
        else:
            lead, rest = _own_equivalent(own, report.undeclared)
            notice += rest
    engine = report.engine_resume  # (one that failed to build or restore: not this)
    departs = _restore_departs(report.runs) if engine and engine.verdict == DIVERGED else ""
    if notice is None:
        return None
    # (trial 677: said last, after a WARNING that opened on the fit loop's counts)
    if departs:  # (a sentence of its own after that one)
        notice = notice[:1].upper() + notice[1:]
    body = " ".join(filter(None, (departs, notice)))
    return f"{lead} {body[:1].upper()}{body[1:]}" if lead else body


def _own_equivalent(own: RunResult, undeclared: Sequence[str] = ()) -> tuple[str, str]:
    """What the WARNING opens with, and what it adds at its end, where the
    program's own resume is equivalent and the engine's is not (a trial: a
    correct Trainer program read the WARNING as its own fault): what brings
    back what the components miss, and, of a program of your own, what that
    restart does not do (trial 202: a load() that skipped a new iterator to
    the run's place in its epoch, which no component's load_state_dict() did;
    trial 206: "your checkpoint keeps" where the load() made the position again)."""
    if any(note in own.explanation for note in (ADAPTER_LOOP, FRAMEWORK_RESUME)):
        return OWN_EQUIVALENT_FRAMEWORK, ""
    # (trial 579: an episode's position, which a step set again, read as put back by the load)
    named = list(dict.fromkeys(uncompared_path(what) for what in _may_explain(list(undeclared))
                               if SET_ALIKE_LATER not in what))
    # (trial 444: the load put back a ratio the `not compared` line named, and was told
    # of a loader's iterator and a generator alone)
    put_back = (f"putting back {', '.join(f'`{p}`' for p in named[:4])}"
                f"{' and more' if len(named) > 4 else ''}, which the `not compared` lines name: "
                "declare it as a component; or " if named else "")
    return OWN_EQUIVALENT, (
            " That restart builds the program and loads each component's "
            f"state_dict(), and no more: what your load() does besides ({put_back}a loader's "
            "iterator it skips to where the run was, a generator it seeds again) belongs in a "
            "declared component's load_state_dict() (the data position's, for an iterator) for "
            "it to do the same.")


OWN_EQUIVALENT = ("Your own resume is equivalent: your checkpoint and your load() bring back "
                  "what the declared components miss; this concerns the engine's own restart of "
                  "them, which ablations use.")
"""How the WARNING opens where the program's own resume is equivalent (``_own_equivalent``)."""
OWN_EQUIVALENT_FRAMEWORK = ("Your own resume is equivalent: your checkpoint keeps what the "
                            "declared components miss; this concerns the engine's own restart "
                            "of them, which ablations use.")
"""``OWN_EQUIVALENT`` of a framework's resume, which no load() of the program's runs."""


def _with_ranks_alike(drawn: StreamOffset, offsets: Sequence[StreamOffset]) -> StreamOffset:
    """``drawn``, its words naming the other ranks whose same stream is as far
    off at the same step (a trial: the WARNING said "the torch CPU stream of
    rank 0" where the table and the stream lines said both ranks)."""
    stream, rank = split_rank_name(drawn.stream)
    if rank is None:
        return drawn
    alike = [other for o in offsets if o is not drawn and (o.step, o.draws, o.unit) == (
        drawn.step, drawn.draws, drawn.unit) for base, other in [split_rank_name(o.stream)]
        if base == stream and other is not None]
    mark = f"of rank {rank} "
    if not alike or mark not in drawn.detail:
        return drawn
    ranks = f"rank{'s' if len(alike) > 1 else ''} {', '.join(map(str, sorted(alike)))}"
    return replace(drawn, detail=drawn.detail.replace(mark, f"{mark}(and of {ranks}, alike) ", 1))


def _read_a_later_epoch(engine: RunResult, drawn: StreamOffset) -> str:
    """Where the step that drew more is the one whose samples are a later
    epoch's first, that the draw may follow from them ('' otherwise: a trial's
    loop skipped past its epoch's end and began the next, whose new iterator
    drew, and the WARNING put the draw first)."""
    if (engine.first_divergent_step != drawn.step - 1
            or "the first of a later epoch" not in (engine.divergence_detail or "")):
        return ""
    return (f"Step {drawn.step - 1} read a later epoch's first samples (see the first "
            "divergence), and a new epoch's iterator draws its base seed as it is made: the "
            "draw may follow from what the restart reads, not cause it. ")


def _drawn_notice(drawn: StreamOffset, where: str, named: str, ending: str,
                  lost: Sequence[tuple[str, bool]] = (), follows: str = "") -> str:
    """The incomplete-state notice where the restart draws from a stream
    where the uninterrupted run does not (``drawn``); ``lost``: state the
    program's own resume showed its checkpoint losing, which may be why;
    ``follows``: what the draw may follow from (``_read_a_later_epoch``)."""
    # (a trial: a loader's iterator made lazily after the load read as a
    # component missing from the declarations, not as the draw it is)
    restored = (f"the engine restored every declared component and the run still {where}, "
                f"and the {drawn.detail}. {follows}")
    lead = ("the restart draws from a random stream where the uninterrupted run does not: "
            f"{restored}")
    if lost:
        # (trial 261: EMA counts of a codebook left out of the checkpoint made more codes
        # look dead after a restart, each restarted by a randint draw; the WARNING led
        # with loaders and prefetching)
        listed = ", ".join(f"`{p}`" for p in list(dict.fromkeys(p for p, _ in lost))[:4])
        loses = "loses" if all(shown for _, shown in lost) else "may lose"
        lead = ("the restart draws from a random stream where the uninterrupted run does not, "
                f"and your checkpoint {loses} {listed} (see `not compared`): where what a step "
                "draws depends on that state (how many codes or samples it draws anew, a "
                "branch taken by chance), a restart that lost it draws otherwise; "
                + ("keep it in the checkpoint first" if loses == "loses" else
                   # (a trial was told to keep first a logged validation loss no step read)
                   "where a step reads it (not a value kept only to be logged), keep it in "
                   "the checkpoint first") + f". {restored[0].upper()}{restored[1:]}")
        # (trial 481: "however complete the checkpoint" and "have the program draw alike"
        # followed the advice to keep the lost state, which alone made it resume)
        return (f"{lead}Where the restart draws otherwise with it kept, a draw the "
                f"uninterrupted run does not make sends the continuation elsewhere{_WHERE_READ}: "
                f"have the program draw alike with and without a restart"
                f"{_draw_advice(drawn)}{ending}")
    if named:
        # (a trial: the restart set its loader's generator from an epoch's saved
        # state that no component declared; "however complete the checkpoint" was
        # not so: declared, the engine's restart drew as the run did)
        return (
            f"{lead}It may draw so from state no component declares{named}: where the "
            "restart sets the stream from it (an epoch's generator state kept to replay "
            "the shuffle), declare it and the engine's restart may draw as the run did; "
            "otherwise a draw the uninterrupted run does not make sends the continuation "
            f"elsewhere however complete the checkpoint{_WHERE_READ}: have the program draw "
            f"alike with and without a restart{_draw_advice(drawn)}{ending}")
    return (
        f"{lead}A draw the uninterrupted run does not make sends the continuation elsewhere "
        f"however complete the checkpoint{_WHERE_READ}: have the program draw alike with and "
        f"without a restart{_draw_advice(drawn)}. Something the components do not declare "
        f"may be lost as well{named}{ending}"
    )


_WHERE_READ = (", where a step reads what the stream gives after it (dropout, an "
               "augmentation, a shuffle; a DataLoader's base seed that no worker reads changes "
               "nothing, and then what departs is elsewhere)")
"""(trial 266: a loader's base seed no worker read was the WARNING's cause of
a shard order a restore had swapped)"""


def _draw_advice(drawn: StreamOffset) -> str:
    """What to change for a restart that draws more than the uninterrupted
    run. (A trial followed "give the DataLoader a generator of its own, or
    create its iterator before the streams are restored" on a shuffled
    loader, and neither resumed: a new iterator also draws a new order.)"""
    if STARTED_LEVEL in drawn.detail and split_rank_name(drawn.stream)[0] in ("python", "numpy"):
        # (trial 408: drawn during the first step, from a stream no iterator's seed draws)
        return (": where a loader makes a batch ahead of the step (Accelerate's prepared "
                "loader fetches one ahead), an augmentation drawn as the batch is made (in the "
                "dataset or its collate_fn) is drawn before the save for the batch the restart "
                "makes again after the load: draw it in the training step, or from a generator "
                "seeded from the sample's index and the epoch")
    shuffle = ("; a shuffled DataLoader without a generator draws 2 there, its base seed and "
               "its shuffle's seed" if drawn.unit == "draws" and drawn.draws == 2 else "")
    return (f"{shuffle}: make the iterator the restart needs before the streams are restored "
            "(a DataLoader with a generator of its own leaves the global stream alone, unless "
            "a framework replaces it: Accelerate prepares a loader over an IterableDataset as a "
            "dispatcher without its generator, unless its DataLoaderConfiguration says "
            "dispatch_batches=False; a lazy iterator draws at its first batch, in the first "
            "step), and "
            "where it shuffles, make it replay the epoch's order: its generator set back to "
            "its state at the epoch's start (saved with the checkpoint, or seeded again each "
            "epoch) before the iterator is made, then the batches already used skipped; where a "
            "framework makes the iterator (Lightning's Trainer), only a loader whose state "
            "the framework's checkpoint keeps (torchdata's StatefulDataLoader) can put the "
            "epoch's order and position back")


def _may_explain(undeclared: list[str]) -> list[str]:
    """The `not compared` lines that may explain a departure: not those of what
    a restart holds alike at this resume point whatever the checkpoint keeps
    (trial 148: the WARNING listed a sampler's fields its own lines said so of), nor
    of a loader's generator that seeds no worker, which changes no step (trial 519)."""
    may = [what for what in undeclared if AS_BUILT_MARK not in what and IDLE_SEED not in what]
    # (trial 570: a log of the loss came first, before the callback's lost level)
    return sorted(may, key=lambda what: LOSS_LOG in what)


def _uncompared_clause(undeclared: list[str], lines_shown: bool) -> str:
    """`` (the `not compared` lines name ...: `ema`)`` of the WARNING (empty
    when nothing is named); ``lines_shown``: those lines are printed beside it."""
    undeclared = _may_explain(undeclared)
    if not undeclared:  # (each line: "path (what it is ...)")
        return ""
    # (one holder once: a trial's callback was listed once per attribute)
    paths = list(dict.fromkeys(uncompared_path(what) for what in undeclared))
    listed = (", ".join(f"`{p}`" for p in paths[:4])
              + (f" and {len(paths) - 4} more" if len(paths) > 4 else ""))
    if lines_shown:
        return (" (the `not compared` lines name what the program keeps outside their states: "
                f"{listed})")
    # (a trial: "no declared component holds" beside "a field of the declared component")
    return (f" (the program keeps outside what the declared components' states hold: {listed}; "
            "`resumecheck run` of the failing schedule (its reproduce command) lists them as "
            "`not compared`, with what to do)")


def isolation_made(isolation: str, nproc: int | None) -> str:
    """How restarts were made, as a report's JSON says it: on many ranks every
    restart is a new launch of its ranks, each a new interpreter, whatever
    ``--isolation`` asked (trial 412 read ``"inprocess"`` of such a run)."""
    return "process" if nproc else isolation


def restarts_text(isolation: str, nproc: int | None, resume_nproc: int | None = None) -> str:
    """How restarts run, in words: ``inprocess restarts``, or, for a check on
    ranks, where every rank is a new interpreter whatever the isolation,
    ``restarts as new launches of 2 ranks (torch's launcher)``. (A trial:
    fuzz's header and the pytest failure said "inprocess restarts" of ranks.)"""
    if nproc is None:
        return f"{isolation} restarts"
    if resume_nproc is not None:  # (a trial: the header named the checkpoint's ranks)
        return (f"runs of {nproc} rank{'' if nproc == 1 else 's'}, restarts as new launches "
                f"of {resume_nproc} "
                f"rank{'' if resume_nproc == 1 else 's'} (torch's launcher)")
    return f"restarts as new launches of {nproc} ranks (torch's launcher)"


def _launch_text(seed: int | None, launched_with: dict[str, Any]) -> str:
    """How the run was launched, in words: ``--seed 3``, ``dropout=0.4, seed=0``."""
    return (f"--seed {seed}" if seed is not None and len(launched_with) <= 1
            else settings_text(launched_with))


def _settings_lacking_notice(launch: str, where: str, ablations: str) -> str:
    """The incomplete-state notice where the engine's full resume, built with
    the launch settings instead of the defaults, resumes."""
    return ("the restart lacks the run's settings: it is built from the program's defaults, "
            f"and the run was launched with {launch}. The engine restored every declared "
            f"component and the run still {where}; built with those settings instead, it "
            "resumes. Have a restart get them back: declare a `config` component that holds "
            "them, or, if your launcher passes them again, say so: "
            f"Target(restart_config=\"run\").{ablations}")


def _settings_clause(seed: int | None, launched_with: dict[str, Any]) -> str:
    """The incomplete-state notice's clause on the run's launch settings ('' without,
    or where a restart gets them again: a trial's target with restart_config="run"
    was told its --seed might be what the restart lacks)."""
    if not launched_with:
        return ""
    launch = _launch_text(seed, launched_with)
    return (f", or the run's settings: it was launched with {launch}, and a restart is "
            "built from the program's defaults unless a declared `config` component "
            "carries the settings back")


def settings_text(settings: dict[str, Any]) -> str:
    """Launch settings in words: ``dropout=0.4, clip=0.2``."""
    return ", ".join(f"{key}={value!r}" for key, value in settings.items())


def _reordered_notice(where: str, reordered: list[Finding], ablations: str) -> str:
    """Not a checkpoint that loses state: a restart builds the optimizer over
    its parameters in another order, and every restore by position (the
    engine's, the program's own) gives the state to other ones. ``ablations``:
    the sentence on them (empty where none ran)."""
    named = "; ".join(f"`{f.component}` {f.detail}" for f in reordered)
    return (f"the engine restored every declared component and the run still {where}: "
            f"right after the restore, {named}. A real restart builds it so too, so every "
            f"resume of this program is affected, whatever its checkpoint holds.{ablations}")


def _build_fails_notice(runs: list[RunResult], engine: RunResult, ablated: bool) -> str:
    """The engine's own restart fails as the program is built again (the
    reference built it): most often from the settings a declared
    ``config`` component brought back, which the factory will not take."""
    built_without_config = [
        r for r in runs if "config" in r.dropped
        and not (r.verdict == FAILED and r.explanation.startswith(BUILDING))]
    settings = (
        " The runs that drop `config` build: a restart is built from the settings the "
        "declared `config` component brings back (a real resume reads its settings from "
        "the checkpoint before it builds anything), so the factory must take the settings "
        "that component's state gives." if built_without_config else
        " (A restart is built from the settings a declared `config` component brings "
        "back, where there is one: the factory must take them.)")
    return ("the engine's own restart fails before anything is restored, as the program is "
            f"built again: {first_line(engine.failure or '')}.{settings}"
            + (" The ablations restart the same way, so they cannot be judged: inconclusive "
               "(or failed)." if ablated else ""))

