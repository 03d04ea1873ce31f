"""Verdicts: how a resumed run compares with the reference, in words. Runs nothing.

Everything here reads what runs produced (``SegmentResult``s of step
records and state files) and decides: the first divergence and the verdict
(identical, close, diverged, failed, inconclusive), plausibility against the
seed-to-seed noise band, the diagnosis of restored state and its latent
gaps, the bookkeeping of a blame's confirmation (the engine runs the rerun
and asks ``settle_findings`` to judge it), and the explanation sentence.
The engine (``engine.py``) runs the programs and calls in here.
"""

from __future__ import annotations

import math
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import torch

from resumecheck.compare import Difference, Tolerance, compare_values, digest, flatten_state
from resumecheck.components import (
    CONFIG, DATA_CURSOR, GLOBAL_STEP, OPTIMIZER, PARAMS, RNG, SAMPLER_EPOCH, SCHEDULER,
    RNGState, split_rank_name,
    validate_drop,
)
from resumecheck.errors import (
    CONFIG_AS_BUILT, CONFIG_MASKED, CONFIG_RESTARTED, LEFT_ALONE, NEVER_DRAWN,
    SCHEDULER_BY_EPOCH, HOLDS_NOTHING, SCHEDULER_IDLE, SCHEDULER_UNREAD, SET_AGAIN, as_built_text,
)
from resumecheck.evidence import (
    EPOCH_AGAIN, EPOCH_BEFORE_AGAIN, EPOCH_BEFORE_ORDER, SAMPLES_STAND_FOR_DATA, annotate,
    cleared_streams, not_stepped, offsets_shared_with, set_right_during, stepped_otherwise,
    unclear_streams,
)
from resumecheck.program import ends_inside, epoch_boundaries, next_epoch_start
from resumecheck.phrases import (
    ADAPTER_LEFT_OUT, AS_THE_BUILD_MADE, BUILDING, CANNOT_RESTORE_WITHOUT, CAUSE_YET_BLIND,
    CHANGED_AFTER_LOAD, CHECKPOINT_LOSES, CHECKPOINT_MAY_LOSE, FETCHED_BEFORE_RESTORE, LOSS_LOG,
    FRAMEWORK_RESUME, IDLE_SEED, LEFT_OUT_ALIKE, LEFT_OUT_ALIKE_MARK, OWN_THROUGH, READ_BY_NO_STEP,
    RESTART_HELD_OTHERWISE, UNCOMPARED_SEE,
    AS_A_BUILD_HOLDS, FRESH_BUILD_HOLDS, GENERATOR_CHANGED, GENERATOR_POSITION, GRADS_SUMMED,
    LEFT_UNRESTORED, MADE_ANEW, MOVED_BY_LATER_LOAD, NO_LONGER_USED,
    NONE_DIFFERS, NOT_STEPPED_MODULE, ONE_POSITION, RATE_SET_SOONER, STREAMS_NOT_KEPT,
    KEPT_ALREADY, SET_BY_LOAD, UNLESS_NOT_STATE, frozen_only, unless_not_state,
    FEWER_STEPS, LOOP_ENDED, SET_BY_EPOCH,
    LOOP_GOES_ON, MODULE_ATTR_TODO, MODULE_LEVEL, NOT_DECLARED, NOT_RESUMABLE,
    CAME_BACK_READ, MODES_PUT_BACK, NOT_VALIDATED_AGAIN,
    OLDER_CHECKPOINT, ORDER_BEFORE_RESTORE, OUTSIDE_THE_CHECKPOINT, OWN_RESUME_ENDS_OTHERWISE,
    OWN_RESUME_ENDS_WITHOUT, POSITION_NEW_EPOCH, POSITION_UNUSED, PUT_BACK_HOLDS,
    POSITION_FIELDS_LEFT, NOT_SET_BACK, REGISTER_GENERATOR,
    RESTORE_CHANGED, RESTORING, SKIPS_BLIND,
    SET_AGAIN_LATER, STOPPED, UNDECLARED_LEAD, UNHELD_POSITION, changed_after_load, first_line,
    first_few, framework_generator,
    framework_module_todo, framework_name,
    global_streams, lost_uncompared, paths_said, side_files, uncompared_path, under_roots,
    position_named, undeclared_lead, unused_position,
    RATE_ALONE,
)
from resumecheck.report import (
    AFTER_DIVERGENCE, CLOSE, CONFIRMED, DIVERGED, ENDS_AS_BEFORE, FAILED, IDENTICAL,
    INCONCLUSIVE, LATENT, LIKELY,
    LOST_ON_RESAVE, NOT_CAUSE, PUT_BACK, Finding, FindingStatus, RunResult, confirmed_causes,
    PLATEAU_MARK, is_fit_loop_recount, resave_loses, settings_text,
)
from resumecheck.capture import load_checkpoint
from resumecheck.segments import SegmentResult
from resumecheck.settings import DropSpec
from resumecheck.state_diff import (
    DETACHED, LEARNING_RATE_ONLY, MOMENTUM_TOO, NONE_CAME_BACK, NONE_CAME_BACK_PLAIN, REORDERED,
    SCHEDULER_AHEAD, SCHEDULER_LOST,
    SAVED_BEFORE_STEP,
    describe_difference, differing_leaves, is_private, leaf_label, righted_only, unread_only,
)
from resumecheck.streams import is_stream_detail, is_stream_state, stream_digests, stream_items
from resumecheck.trace import (
    QUANTITY_ORDER, StepRecord, differing_quantities, first_difference, load_step_tensors,
)
from resumecheck.trajectory import Trajectory, quantity_kind

__all__ = [
    "Comparison", "Reference", "Segments", "alike_on_ranks", "band", "compare_run", "conclude",
    "confirmation_tries", "epoch_ends_untried", "later_epoch_untried", "mid_epoch_untried",
    "diagnose", "drop_sets", "explain", "give_fixes", "in_its_words", "judge", "judge_ablations",
    "latent_text", "launch_settings_failed", "launch_settings_suspected", "lost_after_resave",
    "noise_summary", "note_the_loop", "plausibility", "quantity_name", "resave_findings",
    "next_epoch_beyond", "place_came_back", "positions_alike_in_ablations",
    "positions_in_other_form",
    "rates_set_sooner",
    "resumes", "reworded_lines", "settle_findings", "settle_resaved", "side_files_text",
    "unjudge_when_incomplete",
]

Segments = Sequence[tuple[int, SegmentResult]]
"""A run's segments, each with the step it started from."""

TensorSource = Callable[[int], "dict[str, torch.Tensor] | None"]


_CACHED_STEPS = 8
"""How many steps of the reference's full tensors stay in memory."""


class Reference:
    """The uninterrupted reference as the verdict reads it: its step records by
    step, its state files (loaded once: they never change), its full tensors
    per step (``tensors``: the engine replays steps it did not keep) and the
    loss curves of the runs with other seeds (``noise``)."""

    def __init__(self, segment: SegmentResult, tolerance: Tolerance,
                 tensors: TensorSource | None = None,
                 noise: Sequence[Sequence[float]] = ()) -> None:
        self.segment = segment
        self.tolerance = tolerance
        self.steps = segment.records[-1].step if segment.records else 0
        self.by_step = {r.step: r for r in segment.records}
        self.noise = [list(curve) for curve in noise]
        self._tensors = tensors
        self._files: dict[str, dict[str, Any]] = {}
        self._digests: dict[tuple[str, str], str] = {}
        self._used: dict[tuple[str, str], set[str] | None] = {}
        self._never: dict[str, set[str]] = {}
        self._steps: OrderedDict[int, dict[str, torch.Tensor] | None] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def loss(self) -> list[float]:
        return [r.loss for r in self.segment.records]

    def file(self, path: str) -> dict[str, Any]:
        """A state file of the reference (a capture or its end state), loaded once."""
        if path not in self._files:
            self._files[path] = load_checkpoint(path, read_only=True)
        return self._files[path]

    def component_digest(self, path: str, name: str) -> str:
        """The digest of one component's state in a state file, computed once."""
        key = (path, name)
        if key not in self._digests:
            self._digests[key] = digest(self.file(path)["components"][name])
        return self._digests[key]

    def streams_used_after(self, path: str, name: str) -> set[str] | None:
        """Of the stream component ``name`` (an ``RNGState``), the streams
        (``stream_items`` keys) the reference drew from between the state file
        ``path`` (a capture at a resume point) and its end, computed once (None:
        not a stream component). Every one when its state at ``path`` is not known."""
        key = (path, name)
        if key not in self._used:
            at_end: Any = (self.file(self.segment.end_state)["components"].get(name)
                           if self.segment.end_state else None)
            at = self.file(path)["components"].get(name)
            used: set[str] | None = None
            if is_stream_state(at_end):
                used = _moved(at, at_end) if is_stream_state(at) else set(stream_items(at_end))
            self._used[key] = used
        return self._used[key]

    def streams_never_drawn(self, name: str) -> set[str]:
        """Of the stream component ``name``, the streams (``stream_items`` keys)
        the reference never drew from in any step: one digest at the start of
        every step and at the end (trial 170: Python's and numpy's streams,
        declared by a default ``RNGState`` and left out of a checkpoint, read
        "latent gap: rng ... another resume point may show it" on a correct
        program that never draws from them). Computed once per component."""
        if name not in self._never:
            records = [r for r in self.segment.records if r.streams]
            end: Any = (self.file(self.segment.end_state)["components"].get(name)
                        if self.segment.end_state and records else None)
            self._never[name] = {
                key for key, value in stream_digests(stream_items(end)).items()
                if all(r.streams.get(key) == value for r in records)
            } if is_stream_state(end) else set()
        return self._never[name]

    def tensors(self, step: int) -> dict[str, torch.Tensor] | None:
        """The reference's full tensors at ``step``; the last few read stay in
        memory (every resumed run compares the same steps after its restart)."""
        with self._lock:  # (runs may be judged from several threads)
            if step in self._steps:
                self._steps.move_to_end(step)
                return self._steps[step]
            tensors = self._read_tensors(step)
            self._steps[step] = tensors
            if len(self._steps) > _CACHED_STEPS:
                self._steps.popitem(last=False)
            return tensors

    def _read_tensors(self, step: int) -> dict[str, torch.Tensor] | None:
        if self._tensors is not None:
            return self._tensors(step)
        if self.segment.tensor_dir is None:
            return None
        return load_step_tensors(Path(self.segment.tensor_dir), step, self.segment.kept)


@dataclass
class Comparison:
    """How a run's steps and end state compare with the reference's."""

    first: tuple[int, str] | None = None
    """The first (step, quantity) beyond tolerance: of several tensors of one kind
    (parameters, gradients) beyond it at that step, the one that differs most."""
    first_also: list[str] = field(default_factory=list)
    """The other keys of ``first``'s kind beyond tolerance at its step (other
    tensors, other ranks)."""
    first_bitwise: tuple[int, str] | None = None
    worst: Difference | None = None
    largest: dict[str, tuple[float, str]] = field(default_factory=dict)
    """For each of ``worst``'s figures (``abs``, ``rel``, ``ulp``): its value and
    the key it is the largest of."""
    rel_infinite: list[str] = field(default_factory=list)
    """Every key whose relative difference is infinite (a value 0 in the reference
    differs): of several, ``largest``'s ``rel`` is only the first (trial 454 read
    the one named as the one that differs most)."""
    loss_deltas: dict[int, float] = field(default_factory=dict)
    ended_otherwise: list[str] = field(default_factory=list)
    """Where no step departs, the components that end beyond the tolerance."""
    end_digests: dict[str, str] = field(default_factory=dict)
    """Where no step departs, the digest of each component that ends otherwise."""

    def add(self, key: str, diff: Difference) -> None:
        """Count ``key``'s difference into the worst, noting whose each figure is."""
        self.worst = diff.worse(self.worst)
        for figure, value in (("abs", diff.max_abs), ("rel", diff.max_rel),
                              ("ulp", diff.max_ulp)):
            if value is not None and (figure not in self.largest
                                      or value > self.largest[figure][0]):
                self.largest[figure] = (value, key)
        if diff.max_rel == float("inf") and key not in self.rel_infinite:
            self.rel_infinite.append(key)

    def largest_in_words(self) -> dict[str, str]:
        """Whose each figure is, in words (``RunResult.largest_in``); an infinite
        relative figure held by several says how many more hold it."""
        out = {figure: quantity_name(key) for figure, (_, key) in self.largest.items()}
        more = len(self.rel_infinite) - 1
        if more > 0 and "rel" in out:
            out["rel"] += f" and in {more} more quantit{'y' if more == 1 else 'ies'} alike"
        return out


# -- comparing -------------------------------------------------------------

def compare_run(ref: Reference, first_k: int, dropped: Sequence[str], segments: Segments,
                latent: list[str], ended_there: SegmentResult | None = None,
                varying: dict[str, set[str]] | None = None) -> Comparison:
    """Compare a run's steps and end state with the reference's: the first
    difference beyond tolerance, the first bitwise one, the worst, and
    |Δloss| per step. The worst is taken over the steps up to the first that
    departs beyond the tolerance, that one included: the departure where it
    begins. Only when no step departs is the end state compared too;
    ``latent`` then collects latent gaps (see ``end_state_differences``);
    ``ended_there``: of a rerun of one segment, the segment of the run it
    reruns that ended where it starts (its last restore's); ``varying``:
    ``build_varying``'s, where the caller has it."""
    out = Comparison()
    for _, seg in segments:
        for rec in seg.records:
            expected = ref.by_step[rec.step]
            out.loss_deltas[rec.step] = abs(rec.loss - expected.loss)
            keys = differing_quantities(expected, rec)
            if not keys:
                continue
            out.first_bitwise = out.first_bitwise or (rec.step, keys[0])
            if out.first is not None:
                continue  # (the figures are the departure's: this step is past it)
            diffs = tensor_differences(ref, seg, rec.step, keys)
            for key in keys:
                out.add(key, diffs.get(key, Difference(False)))
            beyond = _skip_first([k for k in keys
                                  if not diffs.get(k, Difference(False)).within_tolerance], diffs,
                                 _stopped_from(ref, rec.step))
            if beyond:
                out.first, out.first_also = _most_of_first_kind(rec.step, beyond, diffs)
    if out.first is not None:
        # Departed: the figures are the departure where it begins. Later steps
        # (a later resume point's, every step within a tolerance) and the end
        # state differ in everything it trained since, by amounts the loss
        # curve says better (at 1M parameters the end state's cost 0.1 s a sweep).
        return out
    last = _last_restore(segments) or (
        (segments[-1][0], ended_there) if ended_there is not None and segments else None)
    ends = end_state_differences(ref, first_k, dropped, segments[-1][1], latent,
                                 out.end_digests, last,
                                 build_varying(ref, segments) if varying is None else varying)
    # a dropped component's own end first (a trial: `drop global_step` named
    # the plateau it moved, and not the step count it ended with), then the
    # others beyond the tolerance beside it
    ends.sort(key=lambda item: item[0] not in dropped)
    for name, diff in ends:
        out.add(f"state:{name}", diff)
        out.first_bitwise = out.first_bitwise or (ref.steps, f"state:{name}")
        if not diff.within_tolerance:
            out.ended_otherwise.append(name)
            if out.first is None:
                out.first = (ref.steps, f"state:{name}")
            else:
                out.first_also.append(f"state:{name}")
    return out


_ONE_SIDE = "in one run only"
"""How a quantity one run has and the other lacks at a step is told apart
(``tensor_differences``): of the first kind that differs, it is named first."""


def _skip_first(beyond: list[str], diffs: dict[str, Difference],
                stopped: bool = False) -> list[str]:
    """``beyond`` with a skipped step first where the first kind that differs is
    gradients one run alone has, and whether the step was skipped differs too:
    one run's optimizer did not step there, so it traced none (trial 851: a loss
    scale of the program's own, lost, stepped the step the uninterrupted run
    skipped on an overflow, and "gradient of 0.bias (4 gradients one run
    lacks ...)" led); or where the uninterrupted run stepped none from that
    step on (``stopped``: trial 881, an early stop the checkpoint lost read "31
    data (the samples consumed)", at a step the uninterrupted run did not take)."""
    if "skipped" in beyond and stopped:
        return ["skipped", *(k for k in beyond if k != "skipped")]
    if "skipped" not in beyond or not beyond or quantity_kind(beyond[0]) != "grad":
        return beyond
    grads = [k for k in beyond if quantity_kind(k) == "grad"]
    if not all(k in diffs and diffs[k].summary == _ONE_SIDE for k in grads):
        return beyond
    return ["skipped", *(k for k in beyond if k != "skipped")]


def _stopped_from(ref: Reference, step: int) -> bool:
    """Whether the uninterrupted run stepped no optimizer at ``step`` nor after it."""
    later = [r for r in ref.segment.records if r.step >= step]
    return bool(later) and all(r.skipped for r in later)


def _most_of_first_kind(step: int, beyond: list[str],
                        diffs: dict[str, Difference]) -> tuple[tuple[int, str], list[str]]:
    """Of the first kind beyond tolerance at ``step`` (``beyond`` in the order a
    step produces them), the key that differs most, and the others of that
    kind beyond it too (a trial: every parameter differed and the first by
    name was named, as if it alone did)."""
    same = [k for k in beyond if quantity_kind(k) == quantity_kind(beyond[0])]
    size: dict[str, float] = {}
    for k in same:
        measured = diffs[k].max_abs if k in diffs else None
        # (trial 304: embeddings that got no gradient after the restore, beside every
        # other gradient rescaled by the clipping, read "gradient of classifier.bias")
        one_side = k in diffs and diffs[k].summary == _ONE_SIDE
        size[k] = math.inf if one_side else -1.0 if measured is None else measured
    pick = max(same, key=size.__getitem__)
    return (step, pick), [k for k in same if k != pick]


def tensor_differences(ref: Reference, seg: SegmentResult, step: int,
                       keys: list[str]) -> dict[str, Difference]:
    """The differences of ``keys`` at ``step``, from both runs' full tensors
    (``missing`` where either was not kept)."""
    run_t = (load_step_tensors(Path(seg.tensor_dir), step, seg.kept)
             if seg.tensor_dir else None)
    ref_t = ref.tensors(step) if run_t is not None else None
    out = {}
    for key in keys:
        if ref_t is not None and run_t is not None and (key in ref_t) != (key in run_t):
            out[key] = Difference(False, summary=_ONE_SIDE)  # (a gradient one run lacks)
            continue
        if ref_t is None or run_t is None or key not in ref_t or key not in run_t:
            out[key] = Difference(False, summary="missing")
            continue
        out[key] = compare_values(*_loss_as_computed(key, ref_t[key], run_t[key]), ref.tolerance)
    return out


def _loss_as_computed(key: str, a: Any, b: Any) -> tuple[Any, Any]:
    """A loss the program returned as a Python float (kept as a float64),
    compared as a float32 where both values are float32 numbers: the
    ``loss.item()`` of a float32 tensor. (Trial 398: 59,678 float32 ULPs read
    "over a million ULP", and ``--tolerance close`` held such a loss to a
    float64's tolerance where its gradients had a float32's.)"""
    if split_rank_name(key)[0] != "loss" or not all(
            isinstance(t, torch.Tensor) and t.dtype == torch.float64 and t.numel() == 1
            for t in (a, b)):
        return a, b
    a32, b32 = a.float(), b.float()
    if torch.equal(a32.double(), a) and torch.equal(b32.double(), b):
        return a32, b32
    return a, b


def _last_restore(segments: Segments) -> tuple[int, SegmentResult] | None:
    """The last restore of a run, and the segment that ended there (None: a
    run of one segment; of one restart through the program's own save/load,
    that segment is its first half, which holds what the reference did)."""
    if len(segments) < 2:
        return None
    return segments[-1][0], segments[-2][1]


def end_state_differences(
    ref: Reference, first_k: int, dropped: Sequence[str], last: SegmentResult,
    latent: list[str] | None, ends: dict[str, str] | None = None,
    last_restore: tuple[int, SegmentResult] | None = None,
    varying: dict[str, set[str]] | None = None) -> list[tuple[str, Difference]]:
    """Components whose state at the end differs from the reference's
    (``ends``, where given, gets the digest each ends with). While the
    trajectory is identical, a component the reference never changed after
    the resume point (an unused stream, a setting nothing reads) is a latent
    gap, in ``latent`` (None: diverged already, every difference counts). The resume point
    is the schedule's first: a component lost at a first restart, set right by the steps
    that read it, and lost again at a last one that no step reading it follows, counts
    (the steps between changed it in the uninterrupted run):
    two restarts show what one after its last use cannot (trial 146: judged from the last
    restart, fuzz no longer found a best loss lost by the load). A stream may be judged
    from the last restore (``_stream_basis``); build-varying leaves, at the restores."""
    assert ref.segment.end_state and last.end_state
    ref_end = ref.file(ref.segment.end_state)["components"]
    run_end = load_checkpoint(last.end_state, read_only=True)["components"]
    out = []
    for name in ref.segment.names:
        if name not in run_end:
            out.append((name, Difference(False, summary="missing")))
            continue
        ref_digest = ref.component_digest(ref.segment.end_state, name)
        run_digest = digest(run_end[name])
        if ref_digest == run_digest:
            continue
        if ends is not None:
            ends[name] = run_digest
        at_k = ref.segment.captures[first_k]
        ref_state, run_state = ref_end[name], run_end[name]
        if call_order_only(ref_state, run_state) or _apart_by_build_only(
                (varying or {}).get(name), ref_state, run_state):
            continue
        if latent is not None and _never_drawn_only(ref, name, ref_state, run_state, last,
                                                    last.restored_state):
            continue  # (streams no step drew from, in either run: no state of this run)
        if latent is not None and ref.component_digest(at_k, name) == ref_digest \
                and _left_as_restored(last, name, run_digest):
            if name not in dropped:
                latent.append(name)
            continue
        if latent is not None and is_stream_state(ref_state) and is_stream_state(run_state):
            judged = _streams_judged(ref, name, (at_k, last_restore), dropped,
                                     ref_state, run_state)
            if judged is None:
                if name not in dropped:
                    latent.append(name)
                continue
            ref_state, run_state = judged
        if latent is not None and (_private_only(ref_state, run_state, ref.tolerance)
                                   or _fit_loop_counts_only(ref, name, ref_state, run_state)):
            # Only private entries differ (a scheduler's _step_count, which only
            # torch's call-order warning reads) while every step matched: unused here.
            if name not in dropped:
                latent.append(name)
            continue
        out.append((name, state_difference(ref_state, run_state, ref.tolerance)))
    return out


def _streams_judged(ref: Reference, name: str,
                    basis: tuple[str, tuple[int, SegmentResult] | None],
                    dropped: Sequence[str], ref_state: Any, run_state: Any
                    ) -> tuple[Any, Any] | None:
    """Of a random-state component that ends otherwise while every step
    matched (``end_state_differences``): None where that is a latent gap,
    else the states of the streams that count. Not dropped, it is one: what
    its streams drew changed no step (trials 508, 539, 555, 577, 587: a
    framework that keeps no stream, every step bit for bit, its stream a draw
    off at the end that no step's result read, was NOT EQUIVALENT, and led a
    real bug's diagnosis). Dropped, stream by stream: one the reference never
    drew from after the resume point (Python's random in a program that only
    uses torch) is latent; another counts."""
    if name not in dropped:
        return None
    used = ref.streams_used_after(_stream_basis(ref, name, *basis), name) or set()
    if not _moved(ref_state, run_state) & used:
        return None
    ref_used, run_used = ({k: v for k, v in stream_items(state).items() if k in used}
                          for state in (ref_state, run_state))
    return ref_used, run_used


def _stream_basis(ref: Reference, name: str, at_k: str,
                  last_restore: tuple[int, SegmentResult] | None) -> str:
    """The capture whose stream states a stream component's end is judged
    from (``end_state_differences``): the last restore's (``last_restore``:
    its point, and the segment that ended there), where the run held it as
    the reference did right before that restore; else ``at_k``. No step
    reads a stream's state but by drawing, so one the reference never drew
    from after that restore is a latent gap there, as with one restart
    (trial 181: an evaluation's generator, seeded again before each draw and
    left out of the checkpoint, passed resumed at 20 and failed at 1 and 20)."""
    if last_restore is None:
        return at_k
    k, before = last_restore
    there = ref.segment.captures.get(k)
    if there is None or not before.end_state:
        return at_k
    held = load_checkpoint(before.end_state, read_only=True)["components"].get(name)
    return there if held is not None and digest(held) == ref.component_digest(there, name) \
        else at_k


def _left_as_restored(last: SegmentResult, name: str, end_digest: str) -> bool:
    """Whether the run's steps after its last restore left component ``name``
    as that restore set it (True where the restored state was not kept). A
    component the uninterrupted run leaves alone after the resume point is
    unused there only if the resumed run leaves it alone too: a best held-out
    loss restored as infinity is set again by the next evaluation, which reads
    it, and the run ends with another best (a trial's was called a latent gap,
    and dropped, a blind spot)."""
    if not last.restored_state:
        return True
    restored = load_checkpoint(last.restored_state, read_only=True)["components"]
    return name not in restored or digest(restored[name]) == end_digest


def _private_only(ref: Any, run: Any, tolerance: Tolerance) -> bool:
    """Whether every leaf in which two states differ is a private entry."""
    differing = differing_leaves(dict(flatten_state(ref)), dict(flatten_state(run)), tolerance)
    return bool(differing) and all(is_private(path) for path, _ in differing)


_CALL_ORDER = ("_step_count", "_get_lr_called_within_step")
"""Entries of torch's schedulers' state_dict() that only its call-order warning
reads (``_step_count``, where it is not 0: a count of 0 makes CosineAnnealingLR's
next rate its closed form, a few ULPs from the one it steps to)."""


def call_order_only(ref: Any, run: Any) -> bool:
    """Whether two states of a scheduler differ only in ``_CALL_ORDER`` entries,
    neither count 0: a difference no rate, and no resume point, shows (trial 829:
    a LambdaLR made anew in the load with last_epoch=, its count of step() calls
    at 1, read as a latent gap, and --strict failed a checkpoint that resumed
    bit for bit)."""
    if not isinstance(ref, dict) or not isinstance(run, dict):
        return False
    differing = differing_leaves(dict(flatten_state(ref)), dict(flatten_state(run)))
    counts = [state.get("_step_count") for state in (ref, run)]
    return bool(differing) and all(path in _CALL_ORDER for path, _ in differing) \
        and all(isinstance(c, int) and c != 0 for c in counts)


def _fit_loop_counts_only(ref: Reference, name: str, ref_state: Any, run_state: Any) -> bool:
    """Whether a Lightning target's fit-loop progress differs only in its
    counts of epochs (``epoch_progress``), every step alike: Lightning's own
    recount of an epoch's end around a restore, which no code of the user's
    sets and which no step here read (a sampler's set_epoch reads one at an
    epoch's start, and a step then differs). Trials 638, 646 and 651: correct
    programs, resumed bit for bit twice over in their own relaunches, failed
    on these counts alone."""
    if name != DATA_CURSOR or "Lightning" not in str(ref.segment.boundaries.get("restored_by")):
        return False
    differing = differing_leaves(dict(flatten_state(ref_state)), dict(flatten_state(run_state)),
                                 ref.tolerance)
    # (trial 697: resumed at an epoch's end, its validation loop's counts of batches
    # ended otherwise too, validated every 4 steps; the correct twin read NOT EQUIVALENT)
    return bool(differing) and all(
        path.startswith("epoch_progress.") or path.startswith(_VALIDATION_COUNTS)
        for path, _ in differing)


_VALIDATION_COUNTS = "epoch_loop.val_loop.batch_progress."
"""Where a Lightning fit loop's state holds its validation loop's counts of batches."""


def _unused_streams(ref: Reference, path: str, name: str) -> set[str] | None:
    """Of a stream component, the streams the reference never drew from after
    the capture ``path`` (None: not a stream component)."""
    used = ref.streams_used_after(path, name)
    if used is None or not ref.segment.end_state:
        return None
    return set(stream_items(ref.file(ref.segment.end_state)["components"][name])) - used


def _moved(a: dict[str, Any], b: dict[str, Any]) -> set[str]:
    """The streams (``stream_items`` keys) whose states differ between two states."""
    a_items, b_items = stream_items(a), stream_items(b)
    return {key for key in a_items.keys() | b_items.keys()
            if key not in a_items or key not in b_items
            or digest(a_items[key]) != digest(b_items[key])}


def state_difference(ref: Any, run: Any, tolerance: Tolerance) -> Difference:
    """The worst difference between two components' states, leaf by leaf."""
    ref_leaves = dict(flatten_state(ref))
    run_leaves = dict(flatten_state(run))
    worst: Difference | None = None
    for path in ref_leaves.keys() | run_leaves.keys():
        if path not in ref_leaves or path not in run_leaves:
            return Difference(False, summary=f"{path} missing")
        a, b = ref_leaves[path], run_leaves[path]
        d = compare_values(a, b, tolerance)
        if d.within_tolerance and not d.max_abs:
            continue  # the same: its zeros are no figure of how the states differ
        if not _is_float(a):  # stream states, counters: no meaningful magnitude
            d = Difference(d.within_tolerance, summary=d.summary)
        worst = d.worse(worst)
    return worst or Difference(True)


def _is_float(value: Any) -> bool:
    if isinstance(value, torch.Tensor):
        return value.is_floating_point()
    return isinstance(value, float)


# -- judging one run -------------------------------------------------------

_STAGES = {"restore": RESTORING, "save": "saving the checkpoint", "build": BUILDING,
           "step": "a step", "trace": "resumecheck's own tracing",
           "capture": "capturing state", "process": "a fresh interpreter",
           "rendezvous": "launching the ranks"}


def judge(ref: Reference, result: RunResult, segments: Segments) -> Comparison | None:
    """Give ``result`` (its dropped components and schedule set) its diagnosis,
    verdict, first divergence, differences and plausibility. Returns the
    comparison (None: the run failed, and its verdict says so); the
    explanation comes with ``conclude`` once findings are confirmed."""
    varying = build_varying(ref, segments)
    result.diagnosis = diagnose(ref, result.dropped, segments, varying)
    result.by_build = sorted(
        f"`{leaf_label(path, ref.segment.built_leaves[name])}` of `{name}`"
        for name, paths in varying.items() for path in paths)
    # (a run that failed keeps the steps it completed: a trial found them null)
    result.trajectory = Trajectory.compare(
        [r for _, seg in segments for r in seg.records], ref.by_step)
    failed = next((s for _, s in segments if s.error is not None), None)
    if failed is not None:
        _failed_run(ref, result, segments, failed)
        return None
    before = set(result.latent_gaps)
    cmp = compare_run(ref, result.resume_at[0], result.dropped, segments, result.latent_gaps,
                      varying=varying)
    # (found at the end: each ends otherwise; a trial read "changes nothing here" of a
    # best loss restored as inf, which the run ended with)
    result.latent_ended = [c for c in result.latent_gaps if c not in before]
    if cmp.worst is not None:
        result.max_abs_diff, result.max_rel_diff, result.max_ulp_diff = (
            cmp.worst.max_abs, cmp.worst.max_rel, cmp.worst.max_ulp)
        result.largest_in = cmp.largest_in_words()
    after = [d for s, d in cmp.loss_deltas.items() if s > result.resume_at[0]]
    result.max_abs_loss_diff = max(after, default=0.0)
    result.verdict = IDENTICAL
    result.ended_otherwise = list(cmp.ended_otherwise)
    if cmp.first is not None:
        result.verdict = DIVERGED
        result.first_divergent_step, quantity = cmp.first
        result.first_divergent_quantity = (
            _calls_counted(ref, segments, result.first_divergent_step, quantity)
            or _steps_counted(ref, segments, result.first_divergent_step, quantity)
            or quantity_name(quantity) + _unstepped(ref, quantity)) + (_whose_rate(
            ref, segments, result.first_divergent_step, quantity) + _others(
            quantity, cmp.first_also, _one_sided(ref, segments, result.first_divergent_step,
                                                 [quantity, *cmp.first_also]))
            + _absent(ref, segments, result.first_divergent_step, quantity))
        result.first_divergent_key = quantity
        if result.first_divergent_step <= result.resume_at[0]:
            # Its first half, replayed from step 0, already differs: no save or
            # restore has happened yet, so nothing can be blamed on them.
            result.verdict = INCONCLUSIVE
            return cmp
        plausibility(result, cmp.loss_deltas, [ref.loss, *ref.noise])
    elif cmp.first_bitwise is not None:
        result.verdict = CLOSE
    else:
        _held_otherwise_between(ref, result, segments, varying)
    return cmp


def _leaves_apart(ref: Reference, seg: SegmentResult, k: int) -> dict[str, list[str]]:
    """Each declared component's leaves that ``seg``, restarted at ``k``, held
    otherwise than the reference after step ``k + 1`` (``leaves_after``; a leaf
    one side lacks is not counted)."""
    mine, theirs = seg.leaves_after.get(k + 1, {}), ref.segment.leaves_after.get(k + 1, {})
    return {name: [leaf for leaf, d in leaves.items()
                   if mine.get(name, {}).get(leaf) not in (None, d)]
            for name, leaves in theirs.items() if name in mine}


def _stream_leaves(leaves: Mapping[str, str]) -> bool:
    """Whether a component's leaves, by their paths, are an ``RNGState``'s."""
    keys = {*RNGState.STREAMS, "generators"}
    return bool(leaves) and all(re.split(r"[.\[]", path, 1)[0] in keys for path in leaves)


def _held_otherwise_between(ref: Reference, result: RunResult, segments: Segments,
                            varying: dict[str, set[str]]) -> None:
    """Of a full resume whose every step and end state match: the declared
    components it held otherwise than the uninterrupted run after the
    restart's first step, where the check looks at them, made latent gaps
    (``RunResult.latent_between``): a checkpoint written there holds them
    otherwise (trial 892: a position counted from the restart was wrong until
    the epoch's end, and the report said every declared component matched).
    Not private entries, nor leaves a build makes otherwise (as at the end)."""
    if result.dropped:
        return
    for k, seg in segments:
        if k not in result.resume_at:
            continue
        theirs = ref.segment.leaves_after.get(k + 1, {})
        for name, apart in _leaves_apart(ref, seg, k).items():
            paths = [leaf for leaf in apart
                     if not is_private(leaf) and leaf not in varying.get(name, ())]
            # (random streams are judged by what draws from them: ``_streams_judged``)
            if not paths or name in result.latent_gaps or name in result.latent_between \
                    or _stream_leaves(theirs[name]):
                continue
            shown = ", ".join(f"`{p}`" for p in paths[:3]) + (
                f" and {len(paths) - 3} more" if len(paths) > 3 else "")
            result.latent_gaps.append(name)
            result.latent_between[name] = (
                f"`{name}` ({shown}) differed after step {k + 1}, the first after the restore "
                f"at {k}, from the uninterrupted run's there, and was alike again at the end: "
                f"a checkpoint written after step {k + 1} holds it otherwise, and a restart "
                f"from it may depart (--resume-at {k},{k + 1} checks one: a second restart "
                "right after the first resumed step)")


def _data_read_alike(ref: Reference, segments: Segments) -> bool:
    """Whether a run read in every step the values the uninterrupted run read
    there (the model's inputs, or samples of floating-point values, by
    digest), where it traced any: then no loader's worker stream moved what
    it reads (trial 534: a load() that replayed every batch through
    persistent workers was told the next shuffle moves, where the run
    departed in its loss alone). Sample indices alike are no such evidence:
    an augmentation drawn in a worker changes the values, not the index."""
    seen = False
    for _, seg in segments:
        for mine in seg.records:
            theirs = ref.by_step.get(mine.step)
            for key, digest in mine.digests.items():
                if key.startswith("inputs:") or (split_rank_name(key)[0] == "data"
                                                 and key not in mine.exact):
                    seen = True
                    if theirs is None or theirs.digests.get(key) != digest:
                        return False
    return seen


def _records_at(ref: Reference, segments: Segments, step: int
                ) -> tuple[StepRecord | None, StepRecord | None]:
    """A run's record of ``step`` and the uninterrupted run's (None: not recorded)."""
    mine = next((r for _, seg in segments for r in seg.records if r.step == step), None)
    return mine, ref.by_step.get(step)


_OTHER_STEPPED = " (another optimizer stepped)"


def _whose_rate(ref: Reference, segments: Segments, step: int, key: str) -> str:
    """Where several declared optimizers step: which one's learning rate
    differs first at ``step`` (`` of `opt_d```), '' otherwise (a trial's GAN
    read "learning rate" where its discriminator's scheduler was lost)."""
    if key != "lr" or step not in ref.by_step:
        return ""
    run, theirs = _records_at(ref, segments, step)
    want = (theirs.lr if theirs is not None else None) or []
    if run is None or not run.lr_of or not run.lr or len(run.lr) != len(want):
        return ""
    if theirs is not None and stepped_otherwise(theirs, run):
        # (trial 882: another optimizer stepped, its own rate alike, read as a rate that
        # differs "of `optimizer_d`")
        return _OTHER_STEPPED
    first = next((i for i, (a, b) in enumerate(zip(run.lr, want)) if a != b), None)
    return "" if first is None or first >= len(run.lr_of) else f" of `{run.lr_of[first]}`"


def _failed_run(ref: Reference, result: RunResult, segments: Segments,
                failed: SegmentResult) -> None:
    """A run that failed: its verdict, failure, step and explanation."""
    result.verdict = FAILED
    result.failure = failed.error
    result.first_divergent_step = failed.error_step
    result.explanation = (
        f"{STOPPED}: {first_line(failed.error or '')}"
        "; if the program is merely slower than that, give it a longer --timeout"
        if failed.timed_out else
        f"{_STAGES.get(failed.error_stage or '', 'the run')} failed: "
        f"{first_line(failed.error or '')}")
    if GLOBAL_STEP in result.dropped and LOOP_ENDED in (failed.error or ""):
        # (a trial was told to give its target more steps, which it had)
        result.explanation += (
            "; here that follows from dropping global_step: the framework counts where "
            "its loop stops from it, so a restart without it stops elsewhere (not a "
            "matter of the target's steps)")
    elif LOOP_ENDED in (failed.error or "") and failed.error_step in ref.by_step:
        _ended_sooner(result, failed.error_step)
    departed = _departed_before(ref, result.resume_at[0], segments, failed.error_step)
    if departed is not None:  # (a loss that grew to inf from a wrong learning rate)
        step, key = departed
        result.first_divergent_step = step
        result.first_divergent_quantity, result.first_divergent_key = quantity_name(key), key
        result.explanation += (f"; before that, it had departed from the reference bit for "
                               f"bit from step {step} ({quantity_name(key)})")


def _ended_sooner(result: RunResult, step: int) -> None:
    """A framework's loop that stopped before ``step``, which the uninterrupted
    run trained with the same settings: the resume ends the training sooner,
    and fewer steps would hide it (trial 368: Lightning resumed at an epoch's
    last batch counted that epoch twice and stopped an epoch early; the advice
    was to check fewer steps)."""
    said = (f"; the uninterrupted run, with the same settings, trained step {step} and on: "
            "the restart's loop stops sooner, counting where it stops from what the restore "
            "gave it (an epoch counted twice, a step count lost), so resuming here ends the "
            "training early (a difference of the resume, not of the target's steps)")

    def cut(text: str) -> str:
        return text.split(FEWER_STEPS)[0].rstrip(".") + said if FEWER_STEPS in text else text

    result.failure = cut(result.failure) if result.failure else result.failure
    result.explanation = cut(result.explanation)


def _departed_before(ref: Reference, first_k: int, segments: Segments,
                     failed_at: int | None) -> tuple[int, str] | None:
    """The first step after the resume point at which a failed run's records
    differ bit for bit from the reference's, before the step that failed."""
    run = [rec for _, seg in segments for rec in seg.records
           if first_k < rec.step and (failed_at is None or rec.step < failed_at)
           and rec.step in ref.by_step]
    return first_difference([ref.by_step[rec.step] for rec in run], run)


def _as_built(ref: Reference, result: RunResult,
              segments: Segments) -> tuple[list[str], dict[str, tuple[int, str]]]:
    """Of the components a blind spot dropped, those whose state the engine's
    restore left (a fresh build's) is the reference's at every resume point,
    bit for bit: dropping them could change nothing there, whatever the
    program does with them (a loss scaler whose scale and growth tracker are
    the build's again at that step); and, of the others, where and how each
    first differed right after a restore (the run matched all the same; a
    trial's best loss was a fresh build's at the first of two resume points,
    and was said so alone)."""
    built, apart = set(result.dropped), {}
    restores = 0
    for k, seg in segments:
        capture = ref.segment.captures.get(k)
        if not seg.restored_state or capture is None:
            continue
        try:
            restored = load_checkpoint(seg.restored_state, read_only=True)["components"]
        except Exception:  # (no evidence either way)
            return [], {}
        restores += 1
        for name in result.dropped:
            if name not in restored:
                built.discard(name)
            elif digest(restored[name]) != ref.component_digest(capture, name):
                built.discard(name)
                detail = describe_difference(name, ref.file(capture)["components"].get(name),
                                             restored[name], k)
                if detail and name not in apart:
                    apart[name] = (k, detail)
    if not restores:
        return [], {}
    return [n for n in result.dropped if n in built], apart


def fields_as_built(ref: Reference, result: RunResult, segments: Segments) -> dict[str, str]:
    """Of a diverged ablation of one component, its fields that the engine's
    restore, which left them as a fresh build makes them (or as another
    declared component puts them back), left as the uninterrupted run held
    them at the resume point, and that the run changes
    later: a checkpoint that loses them resumes alike at this point (trial
    159: a patience counter at 0 there, beside a best loss that made the
    ablation diverge, passed a load that lost it; the test's row read
    `early_stop: ok`). The component -> that in words, for
    ``Report.not_checked``; empty: there are none, or every field is so (the
    component's row says that)."""
    found = _fields_as_built(ref, result, segments)
    return {} if found is None else {result.dropped[0]: found}


def _fields_as_built(ref: Reference, result: RunResult, segments: Segments) -> str | None:
    if len(result.dropped) != 1 or result.verdict != DIVERGED or not ref.segment.end_state:
        return None
    name = result.dropped[0]
    # (trials 165, 166: with restarts at 3 and 10, a field the restart at 10
    # checks was said unchecked, of 3 alone: a field is so only at every one)
    points = [(k, seg.restored_state) for k, seg in segments
              if seg.restored_state and k in ref.segment.captures]
    seen = _as_built_at(ref, name, points)
    if seen is None:
        return None
    at_points, alike, at_end = seen
    at_k = at_points[0]
    moved = {key for key, _ in differing_leaves(at_k, at_end)}
    # (trial 268: an episode's step count, 20 at the resume point and at the end, 18
    # between, was left unsaid where its component's row diverged on other fields)
    after = {key: k + 1 for k, _ in points for key in alike if key in at_k
             and ref.segment.leaves_after.get(k + 1, {}).get(name, {}).get(key)
             not in (None, digest(at_k[key]))}
    later = [key for key in at_k if key in alike and key in at_end
             and (key in moved or key in after) and not _written_only(key)]
    if not later or len(alike) == len(at_k):
        return None
    one = len(later) == 1
    # (one wording with a build's: trial 190 read "a tensor of 5056 values there, a tensor
    # of 5056 values at the end" as alike)
    shown = "; ".join(f"`{leaf_label(key, at_k) or name}` "
                      f"({_values_then(key, points, at_points, at_end, after.get(key))})"
                      for key in later[:3]) + (
        f"; and {len(later) - 3} more" if len(later) > 3 else "")
    it = "it" if one else "them"
    head = (f"of `{name}`, {shown} {'is' if one else 'are'} at "
            f"{steps_text([k for k, _ in points])} as the restore without `{name}` leaves {it}")
    built = ref.segment.built_leaves.get(name)
    # (trial 476: restarted at 6 and 15, fields a fresh build's at 6 and another
    # component's at 15 were said to be a fresh build's at both)
    held = None if not built else (
        "put back" if all(key in built and built[key] != digest(there[key])
                          for key in later for there in at_points)
        else "built" if all(key in built and built[key] == digest(there[key])
                            for key in later for there in at_points)
        else None)
    return _as_built_words(head, name, one, held)


def _stream_leaf(key: str) -> bool:
    """Whether a leaf of a flattened state is a random stream's (an
    ``RNGState``'s: ``torch``, ``python[1]``, ``generators.loader``)."""
    return re.split(r"[.\[]", key, maxsplit=1)[0] in (*RNGState.STREAMS, "generators")


def _whole_streams(alike: set[str], keys: Iterable[str]) -> set[str]:
    """``alike`` less the fields of each random stream some other field of
    which (among ``keys``) is not alike: a generator's state is saved whole
    or not at all, so a field of it held as built beside others that moved
    (numpy's cached half word, ``has_uint32`` and ``uinteger``, beside its
    ``state``) is no field a checkpoint loses alone (trial 491: named in every
    report)."""
    moved = {_stream_root(key) for key in keys if _stream_leaf(key) and key not in alike}
    return {key for key in alike if not (_stream_leaf(key) and _stream_root(key) in moved)}


_SCHEDULER_WRITTEN = ("_last_lr", "_step_count", "_get_lr_called_within_step", "_is_initial")
"""Entries of torch's schedulers' state_dict() that each step() writes and no
training reads (``_step_count`` feeds a call-order warning only)."""


def _written_only(key: str) -> bool:
    """Whether a state_dict() leaf is one of torch's schedulers' written-only
    entries, which no resume point can show lost (trial 502: ReduceLROnPlateau's
    `_last_lr[0]` was named as a field a checkpoint may lose, "a resume point
    where it has changed checks it")."""
    return re.split(r"[.\[]", key, maxsplit=1)[0] in _SCHEDULER_WRITTEN


def _stream_root(key: str) -> str:
    """The stream a leaf of an ``RNGState`` belongs to (``generators.loader``
    of ``generators.loader.state.inc``; ``python`` of ``python[1]``)."""
    parts = re.split(r"[.\[]", key, maxsplit=2)
    return ".".join(parts[:2]) if parts[0] == "generators" else parts[0]


def _values_then(key: str, points: list[tuple[int, str]], at_points: list[dict[str, Any]],
                 at_end: dict[str, Any], after: int | None) -> str:
    """A field's values at the resume points and at the end, in words: one
    value where every point held it alike (``0 there, 4 at the end``), else
    each point's (trial 476: "1 there" of a phase that was 2 at the second)."""
    if _stream_leaf(key):  # (trial 479: "a tensor of 5056 values" of a generator's state)
        held = {digest(there[key]) for there in at_points}
        if len(held) > 1:
            return (f"another state at each of {steps_text([k for k, _ in points])}, another "
                    "at the end")
        if digest(at_end[key]) in held:
            return f"its state there and at the end, another after step {after}"
        return "its state there, another at the end"
    if len({digest(there[key]) for there in at_points}) == 1:
        return _built_then(at_points[0][key], at_end[key], after)
    return ", ".join(f"{_leaf_text(there[key])} at step {k}"
                     for (k, _), there in zip(points, at_points)) + \
        f", {_leaf_text(at_end[key])} at the end"


def _as_built_words(head: str, name: str, one: bool, held: str | None) -> str:
    """The rest of a ``fields_as_built`` line after ``head``: ``held`` says whether
    the build's own digests show the fields a fresh build's (``"built"``), not
    (``"put back"``), or neither (None: mixed, or not known, a framework's)."""
    has, it = ("it has", "it") if one else ("they have", "them")
    # (trial 455: "a checkpoint that loses them resumes alike here" of an EMA callback's
    # step, which its on_train_start set again only because its shadow was gone too; a
    # checkpoint that lost the step alone departed)
    tail = (f"the row of `{name}` is no check of {'this one' if one else 'these'} (other "
            f"fields of `{name}` differ there and made it diverge): a checkpoint that loses "
            f"{it} may resume alike here")
    if held == "put back":
        # (a trial's position component seeded the loader's generator again from its
        # epoch, and the line left the reader to guess which of two cases it was)
        # (trial 413: "a checkpoint that loses them resumes alike here" of a generator its
        # sampler's state held too, where a checkpoint that lost it from both departed)
        tail = tail.replace(f"loses {it} may", f"loses {it} from `{name}` alone may", 1)
        # (trial 455: an EMA callback's step, set again by its on_train_start only
        # because its average was dropped too: no other component put it back)
        return (f"{head} {PUT_BACK_HOLDS} {it}: another declared component puts "
                f"{it} back, or your program sets {it} again where the rest of `{name}` is "
                f"missing), and the run changes {it} later: {tail}; where another component "
                f"puts {it} back, that component keeps {it} here; either way the row that "
                # (trial 857 read it as said of the resume point, where the full resume
                # through the program's own checkpoint caught the lost generator)
                f"drops `{name}` cannot check {it} at this resume point (the full resume's "
                f"rows compare {it} as restored)")
    if held == "built":
        # (trial 450: hedged between a build's and another component's where the build's
        # own digests said which)
        return (f"{head} {AS_A_BUILD_HOLDS} {it}), and the run changes {it} later: {tail}; a "
                f"resume point where {has} changed checks {it} (resumecheck fuzz tries them)")
    # (trial 163: a loader's generator that a declared position puts back to its
    # epoch's start was said to be a fresh build's, and a later point to check it)
    # (trial 519: "a checkpoint that loses it may resume alike here ... that component
    # keeps it" of a stream Lightning's `rng` component puts back in the engine's restore
    # alone: the program's own checkpoint kept it in its hooks, and its own resume at
    # that point departed where a variant lost it)
    nocheck = tail.split(": a checkpoint that loses", 1)[0]
    return (f"{head} {FRESH_BUILD_HOLDS} {it} later: {nocheck}; where that is a fresh "
            f"build's, a checkpoint that loses {it} may resume alike here, and a resume point "
            f"where {has} changed checks {it} (resumecheck fuzz tries them); where another "
            f"declared component puts {it} back in the engine's restore, your own resume "
            f"shows whether your checkpoint keeps {it}")


def _as_built_at(ref: Reference, name: str, points: list[tuple[int, str]]
                 ) -> tuple[list[dict[str, Any]], set[str], dict[str, Any]] | None:
    """Of component ``name``: its leaves at each resume point, those the
    restore without it left as the reference held them at every point, and
    its leaves at the reference's end (None: not known at some point)."""
    if not points:
        return None
    try:
        ended = ref.file(ref.segment.end_state or "")["components"].get(name)
        seen = []
        for k, restored_state in points:
            restored = load_checkpoint(restored_state, read_only=True)["components"]
            held = ref.file(ref.segment.captures[k])["components"].get(name)
            if name not in restored or held is None:
                return None
            seen.append((dict(flatten_state(held)), dict(flatten_state(restored[name]))))
    except Exception:  # (no evidence either way)
        return None
    if ended is None:
        return None
    alike = set(seen[0][0])
    for at_k, built in seen:
        alike -= {key for key, _ in differing_leaves(at_k, built)}
    at_points = [at_k for at_k, _ in seen]
    return at_points, _whole_streams(alike, at_points[0]), dict(flatten_state(ended))


def alike_components(ref: Reference, points: Sequence[int]) -> list[str]:
    """Pairs of declared components the uninterrupted run held equal, tensor
    for tensor and key for key, at every resume point, and apart at its end
    or after the step after one,
    each in a sentence: a load() that makes one from the other resumes alike
    there whatever the checkpoint keeps of it (trial 612: a DQN's target
    network, resumed right after a sync, passed a load that copied it from the
    online network; a row read `diverged` of it all the same)."""
    try:
        files = [ref.segment.captures[k] for k in points] + [ref.segment.end_state or ""]
        held = [ref.file(path)["components"] for path in files]
    except Exception:  # (no evidence either way)
        return []
    names = [n for n in held[0] if all(n in h for h in held) and _tensors_only(held[0][n])]

    def alike(path: str, one: str, other: str) -> bool:
        return ref.component_digest(path, one) == ref.component_digest(path, other)

    def apart(one: str, other: str) -> str | None:
        """Where the run held them otherwise: at its end, or right after the step
        after a resume point (trial 787: a target network synced at every tenth
        step, the last one among them, was said nothing of)."""
        if not alike(files[-1], one, other):
            return "at the end"
        for k in points:
            after = ref.segment.leaves_after.get(k + 1, {})
            if one in after and other in after and after[one] != after[other]:
                return f"after step {k + 1}"
        return None

    found = [(one, other, apart(one, other)) for i, one in enumerate(names)
             for other in names[i + 1:] if all(alike(path, one, other) for path in files[:-1])]
    return [f"`{other}` held what `{one}` held, tensor for tensor, at "
            f"{steps_text(list(points))}, and otherwise {where}: a load() that makes one "
            "from the other (a target network copied from the online one) resumes alike here "
            "whatever the checkpoint keeps of it; a resume point where they differ shows "
            "whether it comes back (resumecheck fuzz tries them)"
            for one, other, where in found if where is not None]


def _tensors_only(state: Any) -> bool:
    """Whether a state holds tensors only, each of more than one value (two
    such states alike are no coincidence of small numbers)."""
    leaves = [leaf for _, leaf in flatten_state(state)]
    return bool(leaves) and all(isinstance(t, torch.Tensor) and t.numel() > 1 for t in leaves)


def as_built_untried(ref: Reference, points: Sequence[int], alone: set[str],
                     full_failed: bool = False) -> list[str]:
    """Of the declared components no run drops alone (not in ``alone``: a
    check with ``drop="none"``, the pytest plugin's), each whose state, or
    some fields of it, the uninterrupted run held at every resume point as
    its build made them, and changes later: a checkpoint that loses them
    resumes alike here (trials 161, 165: a patience counter at 0, a shuffle
    generator before its first epoch, passed with `full resume: ok` and
    nothing said). From the reference's digests right after its build
    (``SegmentResult.built_leaves``); one line each, for ``Report.not_checked``."""
    built = ref.segment.built_leaves
    captures = [ref.segment.captures.get(k) for k in points]
    if not built or not ref.segment.end_state or None in captures:
        return []
    try:
        held = [ref.file(path or "")["components"] for path in captures]
        ended = ref.file(ref.segment.end_state)["components"]
    except Exception:  # (no evidence either way)
        return []
    out = []
    for name, leaves in built.items():
        if name in alone or name not in ended or any(name not in h for h in held):
            continue
        at = [dict(flatten_state(h[name])) for h in held]
        at_end = dict(flatten_state(ended[name]))
        alike = [key for key in at[0] if key in leaves and all(
            key in at_k and digest(at_k[key]) == leaves[key] for at_k in at)]
        whole = _whole_streams(set(alike), at[0])
        alike = [key for key in alike if key in whole]
        moved = {key for key, _ in differing_leaves(at[0], at_end)}
        # (trial 170: a queue's pointer, 0 at the resume point and again at the end,
        # cycled between: the step after each resume point shows it move)
        after = {key: k + 1 for k in points for key in alike
                 if ref.segment.leaves_after.get(k + 1, {}).get(name, {}).get(key)
                 not in (None, leaves[key])}
        later = [key for key in alike if key in at_end and (key in moved or key in after)
                 and not _written_only(key)]
        if later:
            out.append(_as_built_line(name, later, len(alike) == len(at[0]), at[0], at_end,
                                      points, after, full_failed))
    return out


def _as_built_line(name: str, later: list[str], whole: bool, at_k: dict[str, Any],
                   at_end: dict[str, Any], points: Sequence[int],
                   after: dict[str, int], full_failed: bool = False) -> str:
    one = whole or len(later) == 1
    values = [(f"`{leaf_label(key, at_k) or name}`",
               _built_then(at_k[key], at_end[key], after.get(key))) for key in later[:3]]
    if whole and [label for label, _ in values] == [f"`{name}`"]:  # (its one value)
        values = [("", values[0][1])]
    more = f"; and {len(later) - 3} more" if len(later) > 3 else ""
    it = "it" if one else "them"
    head = (f"`{name}` ({'; '.join(f'{k} {v}'.lstrip() for k, v in values)}{more}) is"
            if whole else
            f"of `{name}`, {'; '.join(f'{k} ({v})' for k, v in values)}{more} "
            f"{'is' if one else 'are'}")
    # (trial 462: "the full resume checks those" beside a full resume that failed)
    # (trial 745 read "differ there" without what they differ from)
    others = "" if whole else (f" (other fields of `{name}` differ there from what the "
                               "build made: the full resume "
                               + ("failed, and checked none of them)" if full_failed
                                  else "checks those)"))
    # (trial 372: a warm-restart scheduler's cycle length, stepped with fractional
    # epochs, was said to be checked at a later point: step(epoch) sets it anew)
    # (trial 396: said of ReduceLROnPlateau's num_bad_epochs, which step(epoch) leaves)
    by_epoch = {"last_epoch"} if "num_bad_epochs" in at_k else {"last_epoch", "T_cur", "T_i"}
    # (trial 845 read "... from that epoch (resumecheck fuzz tries them)" as fuzz closing it)
    unless = (f", unless the program steps `{name}` with an explicit epoch, {SET_BY_EPOCH} "
              f"{it} from that epoch: then none does" if "last_epoch" in at_k
              and by_epoch & set(later) else "")
    return (f"{head} at {steps_text(points)} {AS_THE_BUILD_MADE} {it}, and the run changes {it} "
            # (trial 819: "resumes alike here" of an epoch count a load left as built, where
            # a loader's position it read with had rolled into the next epoch, and departed)
            f"later: a checkpoint that loses {it} gives {it} back here as the run held {it}, "
            f"where a restart builds {it} so{others}; a resume point where "
            f"{'it has' if one else 'they have'} changed checks {it} (resumecheck fuzz tries "
            f"them){unless}")


def _built_then(at_k: Any, at_end: Any, after: int | None) -> str:
    """A value found as built at the resume point, and how it moved: ``0 there, 4
    at the end``; of a tensor, ``a tensor of 8 values there, other values at the
    end`` (trial 177 read "a tensor of 8 values there, a tensor of 8 values at the
    end" as alike)."""
    there = f"{_leaf_text(at_k)} there"
    if digest(at_k) == digest(at_end):
        return f"{there} and at the end, another value after step {after}"
    if isinstance(at_k, torch.Tensor) and at_k.numel() > 1:
        return f"{there}, other values at the end"
    end = _leaf_text(at_end)
    if f"{end} there" == there:  # (two floats alike to six figures: in full)
        there, end = f"{_leaf_text(at_k, full=True)} there", _leaf_text(at_end, full=True)
    return f"{there}, {end} at the end"


def _leaf_text(value: Any, full: bool = False) -> str:
    """A value in a line: a float to six figures (trial 372 read 2.0480000000000005)."""
    if isinstance(value, torch.Tensor):
        if value.numel() != 1:
            return f"a tensor of {value.numel()} values"
        value = value.item()
    text = f"{value:.6g}" if isinstance(value, float) and not full else repr(value)
    return text if len(text) <= 24 else text[:21] + "..."


def _ended_alike(ref: Reference, segments: Segments, names: Iterable[str]) -> set[str]:
    """Of ``names``, the components the run ends with as the reference does, bit
    for bit (none when either end state is unknown; a dropped one that the
    reference never changed after the resume point is not compared at the end:
    ``end_state_differences``)."""
    return {name for name, alike in _ends_compared(ref, segments, names).items() if alike}


def _ends_compared(ref: Reference, segments: Segments, names: Iterable[str]) -> dict[str, bool]:
    """Of ``names``, each component the run's end state holds: whether it ends
    as the reference does, bit for bit (empty when either end is unknown)."""
    last = segments[-1][1] if segments else None
    if last is None or not last.end_state or not ref.segment.end_state:
        return {}
    run_end = load_checkpoint(last.end_state, read_only=True)["components"]
    return {name: digest(run_end[name]) == ref.component_digest(ref.segment.end_state, name)
            for name in names if name in run_end}


def _ends_otherwise(ref: Reference, segments: Segments, result: RunResult) -> str:
    """A blind spot's explanation, where a dropped component still ends
    otherwise than the uninterrupted run's (no step after the restart read
    it, and the reference did not change it after there): said (a trial: a
    best loss dropped at the last evaluation ended 1e9, expected 3.16, and
    the row said that dropping it changed nothing)."""
    ended = _ends_compared(ref, segments, result.dropped)
    said = {CONFIG: CONFIG_MASKED, SCHEDULER: SCHEDULER_UNREAD}  # (their own words on it)
    apart = [n for n in result.dropped if ended.get(n) is False]
    # (trial 490: `drop config  identical`, its seed 1234 at the end for 7, said only in
    # the why below the table: the row's first clause, its cell, says it now)
    head = f" changed no step after k={','.join(map(str, result.resume_at))}"
    explanation = result.explanation.replace(
        head, f"{head}, but the run ends with {', '.join(apart)} otherwise", 1) \
        if apart else result.explanation
    otherwise = [n for n in apart if not (n in said and said[n] in explanation)]
    if not otherwise:
        return explanation
    k = min(k for k, _ in segments) if segments else None
    return explanation + "".join(
        f"; the run ends with {name} otherwise than the uninterrupted run ("
        f"{_unread_because(ref, segments, name, k)}): another resume point may show it"
        for name in otherwise)


def _unread_because(ref: Reference, segments: Segments, name: str, k: int | None) -> str:
    """Why a component a run ends with otherwise changed no step, in words
    (``end_state_differences`` counted it latent): the uninterrupted run left
    it alone after the resume point, or only private entries differ (trial
    167: a loss scaler's growth tracker, which the uninterrupted run moved
    from 5 to 16, was said unchanged); else only that no step read it."""
    text = "it changed no step after the restart here"
    capture = ref.segment.captures.get(k) if k is not None else None
    if capture is None or not ref.segment.end_state:
        return text
    if ref.component_digest(capture, name) == ref.component_digest(ref.segment.end_state, name):
        return f"{text}, and {LEFT_ALONE}"
    try:
        ref_end = ref.file(ref.segment.end_state)["components"][name]
        last = segments[-1][1].end_state or ""
        run_end = load_checkpoint(last, read_only=True)["components"][name]
    except Exception:  # (no more to say)
        return text
    apart = [path for path, _ in differing_leaves(dict(flatten_state(ref_end)),
                                                  dict(flatten_state(run_end)))]
    if apart and all(is_private(path) for path in apart):
        shown = ", ".join(f"`{p}`" for p in apart[:3]) + (" ..." if len(apart) > 3 else "")
        # (trial 418: "which no step here read" of a GradScaler's growth tracker, which
        # every update() reads and counts on; it moves the scale only after 2000 steps)
        return (f"only private entries of it differ, {shown}: state its class keeps for itself, "
                "which changed no step here")
    return text


def _alike_bases(ref: Reference, path: str) -> list[str]:
    """The per-rank components whose state in the capture at ``path`` is one
    on every rank, in declaration order."""
    by_base: dict[str, set[str]] = {}
    for name in ref.segment.names:
        base, rank = split_rank_name(name)
        if rank is not None:
            by_base.setdefault(base, set()).add(ref.component_digest(path, name))
    return [base for base, digests in by_base.items() if len(digests) == 1]


def alike_on_ranks(ref: Reference, points: Sequence[int]) -> str | None:
    """Many ranks: the per-rank components that held one state on every rank
    at a resume point, in a sentence (None: none did). There a checkpoint
    that keeps one rank's copy for every rank (a position saved from rank 0
    alone) resumes all the same, so the check cannot see it (a trial's was
    EQUIVALENT at the default point, and failed at another)."""
    found: list[str] = []
    for k in points:
        path = ref.segment.captures.get(k)
        if path is None:
            continue
        found += [f"`{base}` at {k}" for base in _alike_bases(ref, path)]
    if not found:
        return None
    # (trial 536: a DistributedSampler(drop_last=True) dealt both ranks as many batches,
    # alike at every point looked at, and was sent to fuzz for a point where they differ)
    looked = [p for p in (*ref.segment.captures.values(), ref.segment.end_state) if p]
    named = {part.split("`")[1] for part in found}
    if all(named <= set(_alike_bases(ref, p)) for p in looked):
        return (f"{', '.join(found)} held the same state on every rank, as at every point "
                "the uninterrupted run's state was looked at (its end too): where the ranks' "
                "states never differ (a sampler that deals each rank as many batches), a "
                "checkpoint that keeps one rank's copy for every rank resumes every rank as "
                "its own would, and cannot be told apart from one that keeps each rank's; "
                "where they differ at other steps, a resume point there checks it "
                "(resumecheck fuzz --nproc N tries many)")
    return (f"{', '.join(found)} held the same state on every rank: a checkpoint that keeps one "
            "rank's copy for every rank resumes all the same there; a resume point where the "
            "ranks' states differ checks it, if the run has one (resumecheck fuzz --nproc N "
            "tries many; where they never differ, a sampler that deals each rank as many "
            "batches, one rank's copy resumes every rank as its own would)")


def _declared_ends(boundaries: dict[str, Any], whose: str = "it") -> str:
    """Whose a list of epoch ends is: the program's declaration, or a framework
    loop's (trial 529: a Lightning module under manual optimization, whose ends
    the loop was seen to reach, read "as it declares them")."""
    return ("as the framework's loop ends them" if boundaries.get("restored_by")
            else f"as {whose} declares them (epoch_boundaries)")


def epoch_ends_untried(ref: Reference, points: Sequence[int], steps: int) -> str | None:
    """Where the program says where its epochs end and no resume point is an
    epoch's end, in a sentence (None: one is, or the ends are not known). A
    checkpoint that loses state only there (a position reset at an epoch's
    end, an epoch counted one ahead) resumes at the points tried (a trial's
    passed at 10 and fuzz found it at 15 in four seconds). A whole number of
    steps an epoch ends it after step b; a fraction ends it inside step b + 1,
    where both b and b + 1 are restarts around its end (a trial: 10.33 steps an
    epoch; another: 15, where 16 is already inside the next epoch)."""
    ends = epoch_boundaries(ref.segment.boundaries, steps)
    inside = ends_inside(ref.segment.boundaries, steps)
    near = {k for b in ends for k in ((b, b + 1) if b in inside else (b,))}
    if not ends or near & set(points):
        return None
    # (a trial: at 10/3 steps an epoch, "inside steps 4, 7, 11, 14" of an epoch that
    # ends right after step 10)
    parts = []
    for shown_as, listed in (("inside", [b + 1 for b in ends if b in inside]),
                             ("after", [b for b in ends if b not in inside])):
        if listed:
            parts.append(f"{shown_as} step{'s' if len(listed) > 1 else ''} "
                         + ", ".join(map(str, listed[:4])) + (" ..." if len(listed) > 4 else ""))
    # (trial 150: a declared list was said of as the program's fact; trial 451: so was a
    # fractional steps_per_epoch, which another seed's data made false)
    # (trial 563: "by its steps_per_epoch" of a Trainer target that declared none, the
    # adapter reading it from the dataset and the batch settings)
    # (trial 880: the framework credited with a steps_per_epoch the target was given)
    per_epoch = ("by the steps per epoch the framework's data and batch settings give"
                 if ref.segment.boundaries.get("restored_by")
                 and not ref.segment.boundaries.get("declared_per_epoch")
                 else "by its steps_per_epoch")
    if ref.segment.boundaries.get("epoch_boundaries"):  # (trial 875: a loop's, seen inside)
        per_epoch = _declared_ends(ref.segment.boundaries)
    where = (f"an epoch ends {' and '.join(parts)}, {per_epoch}" if inside else
             f"the program's epochs end {parts[0]}, "
             + (_declared_ends(ref.segment.boundaries) if ref.segment.boundaries.get(
                 "epoch_boundaries") else per_epoch))
    # (trial 451: "10 or 11" around an end inside step 11, where one ended right after 21)
    exact = [b for b in ends if b not in inside]
    # (trial 722: "--resume-at 5" of the first epoch's end, where a lost generator's state
    # was still a fresh build's; resumed at 7, the next end, 10, showed it)
    later = [b for b in exact if b > min(points)] if points else []
    try_at = f"{(later or exact)[0]}" if exact else f"{ends[0]} or {ends[0] + 1}"
    return (f"a restart where an epoch ends ({where}): --resume-at {try_at} checks one, "
            "resumecheck fuzz tries them all, until a schedule fails")


def epochs_unsaid(ref: Reference) -> str | None:
    """Where the program does not say where its epochs end (no steps_per_epoch,
    no epoch_boundaries, not even an empty one), in a sentence: no resume point
    is known to be an epoch's end or inside a later epoch (a trial's Trainer
    over a streaming dataset passed at the default point and departed at every
    point after its first epoch; fuzz said so, run did not)."""
    bounds = ref.segment.boundaries
    if bounds.get("steps_per_epoch") is not None or bounds.get("epoch_boundaries") is not None:
        return None
    # (trial 547: a Trainer target was told of attributes a program of its own has)
    framework = str(bounds.get("restored_by") or "")
    # (trial 756: a Lightning target, which takes neither, was told to give steps_per_epoch=)
    how = ("Lightning's count of an epoch's batches was not there to read: a training loader "
           "without a length" if framework.startswith("Lightning") else
           "the target's steps_per_epoch=, or epoch_boundaries=[] where its data has no epochs"
           if framework else "steps_per_epoch, or epoch_boundaries = [] where its data has no "
           "epochs")
    # (trial 607: a Trainer subclass's own sampler, read as a program silent on its epochs)
    unread = bounds.get("epochs_unread")
    said = (f"where its epochs end is not known ({unread}: give the target steps_per_epoch=, "
            "or epoch_boundaries=[] where its data has no epochs)" if unread else
            f"the program does not say where its epochs end ({how})")
    return (f"an epoch's end, or a restart inside a later epoch: {said}, so no resume point "
            "here is known to be either, where a data position most often goes wrong; "
            "resumecheck fuzz aims at them once it knows")


def later_epoch_untried(ref: Reference, points: Sequence[int], steps: int) -> str | None:
    """Where the program says where its epochs end (whole epochs of steps), the
    run goes past the first, and every resume point is in the first epoch, in a
    sentence (None otherwise). What a resume puts back only from the second
    epoch on (a shuffle generator's state at an epoch's start, a sampler's
    epoch, a curriculum raised each epoch) restarts alike in the first (trial
    229: resumed at 7 and at 12, the first epoch's end, a Trainer that
    shuffled each epoch from an unrestored stream passed; fuzz found 13)."""
    ends = epoch_boundaries(ref.segment.boundaries, steps)
    if not ends or _ends_inside_steps(ref) or not points:
        return None
    # (trial 452: resumed at 7 and at 16, the first epoch's end, nothing said that no
    # restart inside a later one was tried; all at ends is ``mid_epoch_untried``'s)
    if any(k > ends[0] and k not in ends for k in points) or all(k in ends for k in points):
        return None
    inside = ends[0] + 1
    if inside >= steps or (len(ends) > 1 and inside >= ends[1]):
        return None
    or_at_end = "" if max(points) < ends[0] else ", or at an epoch's end"
    # (trial 683: a Trainer's group_by_length passed at 4, and every resume inside a later
    # epoch departs; the adapter knew its sampler, and the line read as a general hint)
    sampler = ref.segment.boundaries.get("order_before_restore")
    known = (f"; there {sampler} draws each epoch's order from torch's global stream before "
             "the framework's restore brings that stream back, so a resume there reads other "
             "samples" if sampler else "")
    # (trial 875: a loop's first epoch seen to end inside the step after)
    first = (f"inside step {ends[0] + 1}" if ends[0] in ends_inside(ref.segment.boundaries, steps)
             else f"after step {ends[0]}")
    return (f"a restart inside an epoch after the first (every resume point here is inside the "
            f"first epoch, which ends {first}{or_at_end}): --resume-at {inside} "
            f"checks one, resumecheck fuzz tries them all, until a schedule fails{known}")


def _ends_inside_steps(ref: Reference) -> bool:
    """Whether the program's epochs end inside steps (a fractional
    ``steps_per_epoch``, no ``epoch_boundaries`` of its own)."""
    per_epoch = ref.segment.boundaries.get("steps_per_epoch")
    return per_epoch is not None and not ref.segment.boundaries.get("epoch_boundaries") \
        and float(per_epoch) != int(per_epoch)


def mid_epoch_untried(ref: Reference, points: Sequence[int], steps: int) -> str | None:
    """Where the program says where its epochs end (whole epochs of steps) and
    every resume point is an epoch's end, in a sentence (None: one is not, or
    the ends are not known). A checkpoint that loses state only inside an
    epoch (the sampler's epoch a mid-epoch restart reshuffles by) resumes at an
    epoch's end (trial 139: a forgotten set_epoch passed at 6, an epoch's end,
    with nothing said of restarts inside an epoch)."""
    # (trial 875: a loop's epoch ending inside the step after a seen end is not ended there)
    ends = set(epoch_boundaries(ref.segment.boundaries, steps)) - ends_inside(
        ref.segment.boundaries, steps)
    if _ends_inside_steps(ref):  # (trial 401: 13 steps, 4 epochs of 3.25, said nothing)
        per_epoch = float(ref.segment.boundaries["steps_per_epoch"])
        ends = {k for k in range(1, steps) if abs(k / per_epoch - round(k / per_epoch)) < 1e-9}
    if not ends or not set(points) <= ends:
        return None
    inside = [k for k in range(1, steps) if k not in ends]
    if not inside:
        return None
    near = min(inside, key=lambda k: (abs(k - min(points)), -k))  # (the one after, on a tie)
    # (trial 775: a Lightning loop's seen ends read "as the program declares them")
    said = (_declared_ends(ref.segment.boundaries, "the program")
            if ref.segment.boundaries.get("epoch_boundaries")
            else "by the program's steps_per_epoch")
    # (trial 149: said as fact of a declared boundary one step before the epoch's real end)
    drawn = ref.segment.boundaries.get("draws_before_restore") or []
    # (trial 304: a collator drawing from torch's stream passed at an epoch's end, where
    # the Trainer restores the streams before it fetches, with nothing said of it)
    fetched = (f"; there the framework fetches a step's batches before it restores the "
               f"streams, and your data collator (or dataset) draws from "
               f"{global_streams(drawn)} as they are fetched" if drawn else "")
    return (f"a restart inside an epoch (every resume point here is an epoch's end, {said}): "
            f"--resume-at {near} checks one, resumecheck fuzz tries them all, until a schedule "
            f"fails{fetched}")


def mid_cycle_untried(ref: Reference, points: Sequence[int]) -> str | None:
    """Where some steps of the uninterrupted run stepped no optimizer (the
    micro-batches of gradient accumulation) and every resume point follows a
    step that did, in a sentence (None: one does not, or none are so). A
    checkpoint that loses what a cycle accumulates resumes at a cycle's end
    (trial 499: a position worked out from the optimizer step, wrong only
    inside a cycle, passed at 8, a cycle's end, with nothing said of it)."""
    records = ref.segment.records
    scales = {r.step: r.scale for r in records}
    # (stepped no optimizer, and no loss scaler skipped it: its scale is not lowered after)
    # (trials 611, 612: a step a loss-spike guard skipped, its gradients cleared, and the
    # steps before learning began, with no backward, read as an accumulation cycle)
    # (trial 606: a loss scaler's skip at the last step, whose lowered scale no later step
    # shows, was offered as --resume-at 40 of 40 steps, which is no resume point)
    last = max(scales, default=0)
    idle = [r.step for r in records if r.skipped and r.grads_left is not False
            and r.step < last and not (
                r.scale is not None and (scales.get(r.step + 1) or r.scale) < r.scale)]
    stepped = {r.step for r in records if r.lr is not None}
    if not idle or not set(points) <= stepped:
        return None
    near = min(idle, key=lambda k: (abs(k - min(points)), -k))
    # (trial 762: a PPO agent's rollout steps, which step no optimizer, read as no
    # accumulation of its own)
    return ("a restart between optimizer steps (inside a gradient accumulation cycle, or "
            "after a step that steps none, collecting a rollout, say; every resume point here "
            f"follows a step that stepped the optimizer; step {near} stepped none): "
            f"--resume-at {near} checks one")


def _set_again_text(ref: Reference, apart: dict[str, tuple[int, str]]) -> str:
    """A blind spot whose dropped state differed right after a restore (a
    trial: a best loss lost at the restore, which the next evaluation set as
    the uninterrupted run had it, read only "does not exercise it here");
    of random streams, with what sets a stream again (trials 180, 181: a best
    loss given as the example of a generator)."""
    # (trial 225: a dropped optimizer's rate was given a load's causes, "a scheduler ...
    # (see its own line)", in a program with no scheduler: dropping it is the cause)
    held = "; ".join(f"{name} at the restore at {k}: "
                     f"{detail.replace(LEARNING_RATE_ONLY, '').replace(MOMENTUM_TOO, '')}"
                     for name, (k, detail) in apart.items())
    streams = [is_stream_state(ref.file(ref.segment.captures[k])["components"].get(name))
               for name, (k, _) in apart.items()]
    examples = ([] if all(streams) else
                ["a best loss that a later evaluation beats, a value recomputed from other "
                 "state"]) + (["a generator seeded again before the draws a step reads: a "
                               "sampler that seeds it each epoch"] if any(streams) else [])
    return (f"; right after a restore it differed ({held}), and the run ends with "
            f"{'it' if len(apart) == 1 else 'them'} as the uninterrupted run does: {SET_AGAIN} "
            f"({'; '.join(examples)})")


def _unmoved(ref: Reference, names: list[str], points: Sequence[int]) -> bool:
    """Every one of ``names`` ends the reference as it was at the capture at
    each of ``points``."""
    end = ref.segment.end_state
    captures = [ref.segment.captures.get(k) for k in points]
    if not end or not names or not all(captures):
        return False
    return all(ref.component_digest(end, n) == ref.component_digest(c, n)
               for n in names for c in captures if c)


def _rate_moves_after(ref: Reference, k: int) -> bool:
    """Whether the reference's learning rate changes after step ``k``."""
    rates = [ref.by_step[s].lr for s in sorted(ref.by_step) if s >= k]
    return len({tuple(r) for r in rates if r is not None}) > 1


def _ends_as_at(ref: Reference, name: str, k: int) -> bool:
    """Whether the reference ends with component ``name`` as it held it at
    its capture at step ``k`` (nothing changed it after there)."""
    captures, end = ref.segment.captures, ref.segment.end_state
    return (k in captures and end is not None
            and ref.component_digest(captures[k], name) == ref.component_digest(end, name))


def _as_built_explanation(ref: Reference, result: RunResult, built: list[str],
                          still: bool) -> str:
    """A blind spot's why where the dropped components ``built`` are, at the
    resume points, what the restore that drops them leaves."""
    ks = list(result.resume_at)
    if built == result.dropped and all(_holds_nothing(ref, n) for n in built):
        # (trial 263: a scheduler Lightning was never given)
        # (trial 387: an LSTM's carried state, empty at a pass's end where it resumed, was
        # said empty "at every point of the run": only these points are looked at)
        return (f"blind spot: {', '.join(built)} {HOLDS_NOTHING}: its state is empty there "
                "(a framework given no scheduler, an empty list; or state the run empties at "
                "those points, a carried state reset at a pass's end), so no checkpoint taken "
                "there can lose it; a resume point where it holds state checks it")
    if built == result.dropped:  # (then that is why, not "does not exercise it")
        points = ",".join(map(str, ks))  # (all of them, as explain says)
        others, what = _same_stream_held(ref, built, ks), "random state"
        if not others:  # (trial 478: a SAM optimizer whose state holds its base's, both declared)
            others, what = _same_state_held(ref, built, ks), "state (the same tensors)"
        if others:
            return (f"blind spot: dropping {built[0]} changed no step after k={points}: "
                    f"{' and '.join(f'`{o}`' for o in others)} also hold"
                    f"{'s' if len(others) == 1 else ''} its {what} there, bit for bit, "
                    "and its restore puts it back, so dropping it alone shows nothing at any "
                    f"resume point: --drop {','.join([*built, *others])} checks them together; "
                    "not evidence that it is saved")
        return (f"blind spot: dropping {', '.join(built)} changed no step after k={points}: "
                f"{as_built_text(built, ks, still, _held_as(ref, built, ks))}; not evidence "
                "that it is saved")
    return f"{result.explanation}; {as_built_text(built, ks, still, _held_as(ref, built, ks))}"


def _undrawn_text(ref: Reference, result: RunResult) -> str | None:
    """A blind spot's why where the dropped components are random streams no
    step drew from (``_never_drawn``); None where they are not."""
    if not _never_drawn(ref, result.dropped):
        return None
    one = len(result.dropped) == 1
    return (f"blind spot: dropping {', '.join(result.dropped)} changed no step after "
            f"k={','.join(map(str, result.resume_at))}: {NEVER_DRAWN}, so no resume point "
            f"shows {'it' if one else 'them'} lost; not evidence that "
            f"{'it is' if one else 'they are'} saved")


def _never_drawn(ref: Reference, names: list[str]) -> bool:
    """Whether each of ``names`` is a random stream component none of whose
    streams the reference drew from in any step (``streams_never_drawn``):
    dropping it changes no step at any resume point, whatever state a
    restart leaves its streams in (trial 716: an RNGState whose stream no
    step read, its augmentation drawn in loader workers, was sent to fuzz;
    in-process, where a restart moves every stream elsewhere, told "the run
    changes it only before", which it never did)."""
    end = ref.segment.end_state
    if not end:
        return False
    for name in names:
        state = ref.file(end)["components"].get(name)
        if not is_stream_state(state) or not stream_items(state) \
                or ref.streams_never_drawn(name) != set(stream_items(state)):
            return False
    return True


def _held_as(ref: Reference, names: list[str], ks: list[int]) -> str | None:
    """Whether the reference held ``names`` at every point of ``ks`` as its
    build made them (``"built"``), or held none of them so at any
    (``"put back"``), by the build's own digests; None: mixed, or not known."""
    kinds = set()
    for name in names:
        leaves = ref.segment.built_leaves.get(name)
        for k in ks:
            capture = ref.segment.captures.get(k)
            if not leaves or capture is None:
                return None
            try:
                held = dict(flatten_state(ref.file(capture)["components"][name]))
            except Exception:  # (not known)
                return None
            kinds.add("built" if held.keys() == leaves.keys() and all(
                digest(value) == leaves[key] for key, value in held.items()) else "put back")
    return kinds.pop() if len(kinds) == 1 else None


def _same_stream_held(ref: Reference, built: list[str], ks: list[int]) -> list[str]:
    """Where one component was dropped: the other declared components that hold,
    at every resume point, a random stream's state it holds too, or it holds
    theirs, bit for bit (trial 403: a module's hooks that saved and restored
    torch's stream beside an RNGState, each putting it back where the other
    was dropped, were told "a resume point where it has moved shows it")."""
    def holders(components: dict[str, Any], name: str) -> list[str] | None:
        streams = {c: [v for v in stream_items(state).values() if isinstance(v, torch.Tensor)]
                   for c, state in components.items() if is_stream_state(state)}
        # (only leaves the size of a stream's state are digested: not a model's weights)
        sizes = {v.numel() for held in streams.values() for v in held}
        if not sizes:
            return None
        leaves = {c: {digest(leaf) for _, leaf in flatten_state(state)
                      if isinstance(leaf, torch.Tensor) and leaf.numel() in sizes}
                  for c, state in components.items()}
        mine = {digest(v) for v in streams.get(name, [])}
        return [c for c in components if c != name
                and (mine & leaves[c] or {digest(v) for v in streams.get(c, [])} & leaves[name])]
    return _held_at_every_point(ref, built, ks, holders)


def _same_state_held(ref: Reference, built: list[str], ks: list[int]) -> list[str]:
    """Where one component was dropped: the other declared components whose
    state holds, at every resume point, every tensor of its state bit for bit,
    or whose every tensor its state holds (a SAM optimizer whose state_dict()
    returns its base optimizer's, the base declared too: each one's restore
    puts the other back). Only tensors of two values or more that are not all
    one value count (two zeroed buffers are alike by chance)."""
    def holders(components: dict[str, Any], name: str) -> list[str] | None:
        held = {c: {digest(leaf) for _, leaf in flatten_state(state)
                    if isinstance(leaf, torch.Tensor) and leaf.numel() > 1
                    and bool((leaf != leaf.reshape(-1)[0]).any())}
                for c, state in components.items()}
        mine = held.get(name) or set()
        if mine <= set((ref.segment.built_leaves.get(name) or {}).values()):
            return None  # (a fresh build's there: nothing had to put it back)
        return [c for c, theirs in held.items() if c != name and theirs
                and (mine <= theirs or theirs <= mine)]
    return _held_at_every_point(ref, built, ks, holders)


def _held_at_every_point(ref: Reference, built: list[str], ks: list[int],
                         holders: Callable[[dict[str, Any], str], list[str] | None]
                         ) -> list[str]:
    """The components ``holders`` finds holding the one dropped component's
    state at every resume point (empty: more than one dropped, or none there)."""
    if len(built) != 1:
        return []
    out = list[str]()
    for k in ks:
        path = ref.segment.captures.get(k)
        there = None if path is None else holders(ref.file(path)["components"], built[0])
        if there is None:
            return []
        out = there if k == ks[0] else [c for c in out if c in there]
    return out


def _also_held_text(ref: Reference, result: RunResult, built: list[str]) -> str:
    """A blind spot whose dropped streams differed at the restore in part (a
    generator set again later): the other declared components that hold the
    rest of its random state bit for bit (trial 455: a Lightning callback that
    saved torch's stream, which dropout draws from, was left out of a why
    that spoke only of the loader's generator the program seeded again)."""
    if built or len(result.dropped) != 1:
        return ""
    others = _same_stream_held(ref, result.dropped, list(result.resume_at))
    if not others:
        return ""
    return (f"; and {' and '.join(f'`{o}`' for o in others)} also hold"
            f"{'s' if len(others) == 1 else ''} part of its random state there, bit for bit, "
            f"and its restore puts it back: --drop {','.join([*result.dropped, *others])} "
            "checks them together")


def _holds_nothing(ref: Reference, name: str) -> bool:
    """Whether component ``name``'s state is empty (no leaf) at every capture
    and at the end of the reference."""
    paths = [*ref.segment.captures.values(), ref.segment.end_state or ""]
    try:
        states = [ref.file(path)["components"].get(name, 0) if path else 0 for path in paths]
    except Exception:  # (no evidence either way)
        return False
    return all(_empty(state) for state in states)


def _empty(state: Any) -> bool:
    """A container holding no leaf (``[]``, ``{"value": []}``)."""
    if isinstance(state, dict):
        return all(_empty(v) for v in state.values())
    return isinstance(state, (list, tuple)) and all(_empty(v) for v in state)


def _blind_spot_words(ref: Reference, result: RunResult, segments: Segments) -> None:
    """``conclude``'s words on a dropped component's restart (a blind spot's
    why, and what an ablation set anew or masked)."""
    built, apart = _as_built(ref, result, segments) if result.blind_spot else ([], {})
    still = _unmoved(ref, built, list(result.resume_at))
    alike = _ended_alike(ref, segments, apart)
    again = {n: d for n, d in apart.items() if n in alike}
    if again and SCHEDULER_UNREAD not in result.explanation:
        result.explanation += _set_again_text(ref, again)
        result.explanation += _also_held_text(ref, result, built)
    if CONFIG in apart and CONFIG not in again:  # (a trial: told to use other settings)
        result.explanation += f"; {CONFIG_MASKED} (at the restore at {apart[CONFIG][0]}: " \
            f"{apart[CONFIG][1]})"
    undrawn = _undrawn_text(ref, result) if result.blind_spot else None
    if undrawn:
        result.explanation = undrawn
    elif built:
        result.explanation = _as_built_explanation(ref, result, built, still)
    if result.blind_spot and NEVER_DRAWN not in result.explanation:
        result.explanation = _ends_otherwise(ref, segments, result)


def conclude(ref: Reference, result: RunResult, cmp: Comparison | None,
             segments: Segments) -> RunResult:
    """The last words on a judged run: blind spot, explanation, stream offsets
    and the data in words."""
    if cmp is None:  # failed: its explanation is the failure
        return result
    if result.verdict == INCONCLUSIVE:  # (judge: it differs before its first restart)
        result.explanation = before_restart_text(result)
        return result
    result.blind_spot = bool(result.dropped) and result.verdict in (IDENTICAL, CLOSE)
    result.explanation = explain(result, cmp.first_bitwise,
                                 own_checkpoint=ref.segment.has_own_checkpoint,
                                 position=_restored_position(ref, result))
    result.explanation = _skipped_before_rate(ref, result)
    if result.blind_spot and SCHEDULER in result.dropped and _rate_moves_after(
            ref, result.resume_at[0]):
        result.explanation += SCHEDULER_UNREAD + (
            SCHEDULER_IDLE if _ends_as_at(ref, SCHEDULER, result.resume_at[-1])
            else SCHEDULER_BY_EPOCH)
    _blind_spot_words(ref, result, segments)
    if not result.dropped and result.verdict == DIVERGED:
        new_epoch = _new_epoch_text(ref, result)
        said = unused_position(result.explanation) if new_epoch else None
        names = position_named(said) if said is not None else None
        if said is not None and names is not None:
            result.explanation = result.explanation.replace(
                said, POSITION_NEW_EPOCH.format(names), 1)
        result.explanation += new_epoch
    if (not result.dropped and result.verdict == DIVERGED and ref.segment.unrestorable
            and not _data_read_alike(ref, segments)):
        # (trial 212: beside a lost scheduler the diagnosis named, persistent workers
        # read as a cause of a departure inside their first epoch)
        result.explanation += ("; besides what the diagnosis names, state no checkpoint can "
                               "hold (which may have no part in this departure): "
                               if result.diagnosis else "; state no checkpoint can hold: "
                               ) + "; ".join(ref.segment.unrestorable)
    if not result.dropped and result.verdict == DIVERGED and result.checkpoint == "engine":
        unreached = {n: where for _, seg in segments for n, where in seg.unreached.items()}
        result.explanation += "".join(f"; {_made_before_text(n, w)}" for n, w in unreached.items())
    if result.checkpoint == "program" and not result.dropped:
        result.side_files = {kind: files for kind in ("save", "load") if (files := list(
            dict.fromkeys(f for _, seg in segments for f in seg.side_files.get(kind, ()))))}
        result.explanation += side_files_text(result.side_files)
    result.explanation += _differed_after_restart(ref, result, segments)
    annotate(result, ref.segment, segments)
    _new_epoch_ahead(ref, result)
    _draw_first(result)
    return result


def _new_epoch_ahead(ref: Reference, r: RunResult) -> None:
    """Where ``_new_epoch_text`` said the new epoch's order differs, and the first
    divergence reads what the uninterrupted run read a few steps later in that
    same epoch: the epoch starts at another place of the same order (trial 876:
    a loader's restored place, held for its next iterator while the resumed
    epoch's rest was read through skip_first_batches, was applied again at the
    next epoch's start; "the new epoch's inputs differ, in their order")."""
    step = r.first_divergent_step
    said = f"; step {step} is the first to read a new epoch"
    start = r.explanation.find(said)
    ahead = re.search(r"(?:read|called it with) at step (\d+) \((\d+) steps? later\)",
                      r.divergence_detail or "")
    if start < 0 or ahead is None or step is None:
        return
    later = int(ahead.group(1))
    if later >= (next_epoch_start(ref.segment.boundaries, step) or later):
        return  # (not within the same epoch: said as it is)
    steps = f"{ahead.group(2)} step{'' if ahead.group(2) == '1' else 's'}"
    # (the position's lead, "the new epoch's order is", says what this no longer does)
    r.explanation = r.explanation.replace(
        "the position is not what differs, the new epoch's order is (see below)",
        "where the new epoch starts differs (see below)", 1)
    start = r.explanation.find(said)
    end = r.explanation.find("; ", start + 2)
    r.explanation = r.explanation[:start] + (
        f"{said}, and it starts {steps} into that epoch's order (step {step} "
        f"read what the uninterrupted run read at step {later}): a place applied again at "
        "the epoch's start, as a loader's restored place held for its next iterator while "
        "the rest of the resumed epoch was read through another loader "
        "(skip_first_batches), or batches skipped twice"
    ) + (r.explanation[end:] if end >= 0 else "")


def _differed_after_restart(ref: Reference, result: RunResult, segments: Segments) -> str:
    """Of a run whose steps all match and that ends otherwise in declared
    components: those that differed already after the first step after a
    restart, where the check looks at them as it does at the end (trial 870: an
    EMA wrong from the restart's first step read "the final state of ema differs
    (every step's loss, gradients and parameters match)", as if it went wrong at
    the end)."""
    if not result.steps_match():
        return ""
    said: list[str] = []
    named: set[str] = set()
    for k, seg in segments:
        if k not in result.resume_at:
            continue
        apart = _leaves_apart(ref, seg, k)
        early = [name for name in result.ended_otherwise if apart.get(name) and name not in named]
        if early and k + 1 < (result.first_divergent_step or 0):
            named.update(early)
            said.append(f"{', '.join(f'`{n}`' for n in early)} differed already after step "
                        f"{k + 1}, the first after the restore at {k}")
    return ("; " + "; ".join(said) + " (declared state is compared there and at the end, not "
            "at every step: what reads it in between may have differed)") if said else ""


def _draw_first(result: RunResult) -> None:
    """An own resume with no lead in the declared state, and a stream found
    drawn from more right after the load: the why says the draw found, below,
    in place of the list of undeclared state it may also be (trial 195: a
    loader's iterator made after the load read that list first and the draw
    that explained it last)."""
    lead = UNDECLARED_LEAD + _UNDECLARED_EXAMPLES
    drawn = [o.step for o in result.stream_offsets if o.draws and o.draws > 0]
    if result.checkpoint == "program" and lead in result.explanation and drawn:
        # (trial 408: a stream level at the first step, drawn more during it, read
        # "between the load and the first step")
        between = any(step - 1 in result.resume_at for step in drawn)
        result.explanation = result.explanation.replace(
            lead, UNDECLARED_LEAD + (_DRAWN if between else _DRAWN_DURING), 1)


_DRAWN = (", or something drew from a random stream (found below) between the load and the "
          "first step")
_DRAWN_DURING = (", or the first step after the load drew from a random stream (found below) "
                 "more than the uninterrupted run's")


def side_files_text(files: dict[str, list[str]]) -> str:
    """What the program's own save() wrote and load() read outside the
    checkpoint path it was given (a run's ``side_files``), in words ('' where
    nothing): a restart reads what was written there last (a trial's save()
    kept its step counter in a file of its own, and its reports changed with
    --jobs)."""
    said = side_files(files)
    if said is None:
        return ""
    # (trial 548: Accelerate's automatic naming kept the state in a checkpoint, and its
    # load_state() read the latest of the folder, not the one the load was given)
    given = (", and have load() read the checkpoint at the path it is given (not the latest "
             "of a folder)" if files.get("load") else "")
    return (f"; {said}, {OUTSIDE_THE_CHECKPOINT}: a restart reads what was "
            "written there last (by this run, a later save, or another run beside it), not what "
            f"the checkpoint saved: keep that state in the checkpoint{given}")


# -- the noise band --------------------------------------------------------

def band(curves: Sequence[Sequence[float]], steps: Sequence[int]) -> float:
    """The largest loss difference between any two honest runs (the reference
    and the other seeds, every pair) over ``steps``: with M seeds that is
    M(M+1)/2 pairs, a steadier estimate of the spread than M."""
    return max(
        (abs(a[s - 1] - b[s - 1]) for i, a in enumerate(curves) for b in curves[i + 1:]
         for s in steps),
        default=0.0,
    )


def plausibility(result: RunResult, loss_deltas: dict[int, float],
                 curves: Sequence[Sequence[float]]) -> None:
    """Plausible: every |Δloss| after the restart stays within the seed-to-seed band.

    ``curves``: the reference's loss per step, then each other seed's. The
    band is how far apart two honest runs of this program drift; a lost
    component whose continuation stays inside it is the silent,
    plausible-but-different kind. With no other seed nothing is said, but
    of a run whose loss does not differ at all after the restart, which any
    band holds (a trial's lost EMA counter read "-" without a seed, and
    "silent" with one).
    """
    after = [s for s in loss_deltas if s > band_from(result)]
    if _at_the_last_step(result) and not any(loss_deltas[s] for s in after):
        return  # (not judged: no loss reads it; ``_noise_clause`` says so)
    if len(curves) < 2:
        if after and not any(loss_deltas[s] for s in after):
            result.plausible, result.noise_ratio = True, 0.0
        return
    width = band(curves, after)
    worst = max((loss_deltas[s] for s in after), default=0.0)
    result.noise_ratio = worst / width if width > 0 else (math.inf if worst > 0 else 0.0)
    result.plausible = result.noise_ratio <= 1.0
    result.leaves_band_at = None if result.plausible else min(
        s for s in after if loss_deltas[s] > width)
    # (trials 602, 603: a loss twice the seeds' at the steps right after the restart read
    # "plausible", the band being the widest spread at any step, here at the last)
    # (trial 733: a gross row's "leaves the band at step 17" read as steps 13-16 within the
    # seeds' noise, where each was 2-3x their spread at that step)
    result.beyond_at = [s for s in after if loss_deltas[s] > band(curves, [s]) and (
        result.leaves_band_at is None or s < result.leaves_band_at)]


def noise_summary(ref: Reference, first_k: int, seeds: Sequence[int], base_seed: int | None,
                  seed_key: str, unmoved: Sequence[int] = (), asked: int = 1,
                  failed: Sequence[tuple[int, str, int | None]] = ()) -> dict[str, Any]:
    """The report's ``noise`` entry: the seeds that ran, the band after ``first_k``.
    ``unmoved``: the other seeds that ran, when each trained exactly as the
    reference; ``asked``: how many noise runs the settings asked for;
    ``failed``: the noise runs that did not run to the end (seed, error, step)."""
    if not ref.noise:
        out: dict[str, Any] = {"seeds": [], "band": None, "base_seed": base_seed}
        if failed:
            out["why"] = _noise_failed_text(failed, seed_key)
        elif not asked:
            out["why"] = "no noise runs were asked for (--noise-seeds 0)"
        elif unmoved:
            out["why"] = (
                f"the runs with {seed_key} = {', '.join(map(str, unmoved))} trained exactly "
                f"as the reference: the program's {seed_key!r} setting changes nothing it "
                "draws (a seed fixed in the code?), so they say nothing of seed-to-seed noise"
            )
        elif base_seed is None:
            out["why"] = (
                f"the program's seed is unknown (no --seed, no {seed_key!r} "
                "in run_config or in a declared config component), so no other seed "
                "could be chosen for noise runs: a default seed in your factory's code is "
                f"not seen; put it in the settings, Target(run_config={{{seed_key!r}: 0, ...}}), "
                "or give --seed"
            )
        return out
    after = [r.step for r in ref.segment.records if r.step > first_k]
    out = {
        "seeds": list(seeds),
        "base_seed": base_seed,
        "band": band([ref.loss, *ref.noise], after),
        "steps": [after[0], after[-1]] if after else [],
    }
    if failed:
        out["why"] = _noise_failed_text(failed, seed_key) + " (the band is of the others)"
    return out


def _noise_failed_text(failed: Sequence[tuple[int, str, int | None]], seed_key: str) -> str:
    """Why noise runs are missing: each that did not run to the end, and the
    first line of why (trial 463: EarlyStopping stopped both before the last
    step, and the noise column read `-` with nothing said)."""
    by_error: dict[str, list[int]] = {}
    for seed, error, step in failed:  # (the step is in the error's words: "step 6: ...")
        said_error = _error_head(error) or (f"at step {step}" if step else "failed")
        by_error.setdefault(said_error, []).append(seed)
    said = "; ".join(f"{seed_key} = {', '.join(map(str, seeds))}: {error}"
                     for error, seeds in by_error.items())
    return (f"the noise run{'s' if len(failed) > 1 else ''} with another seed did not run to "
            f"the end ({said}): a program that stops on its own (early stopping) stops "
            "another seed's run at another step")


def _error_head(error: str, most: int = 240) -> str:
    """An error's first line up to its first clause's end (what it advises
    after ``; `` is the failing run's, not another seed's), cut at a word
    where still longer (trial 646: "..., or, w" ended a report's line)."""
    head = first_line(error).split("; ", 1)[0]
    if len(head) <= most:
        return head
    return head[:most].rsplit(" ", 1)[0] + " ..."


# -- the diagnosis and its confirmation ------------------------------------

def diagnose(ref: Reference, dropped: Sequence[str], segments: Segments,
             varying: dict[str, set[str]] | None = None) -> list[Finding]:
    """Compare each restored component with the state it should have had: up to
    the first resume point after which the run differs, the reference's state
    there (of a leaf each build makes otherwise, what the run held when it
    saved: ``build_varying``); after it, what the run itself had when it saved
    (``basis="saved"``: the reference's state is no longer what a correct
    checkpoint would restore, so differences from it are consequences, status
    ``after_divergence``). Not streams no step drew from. ``varying``: that,
    where the caller has it already."""
    findings: list[Finding] = []
    seen: set[str] = set()
    differed = False
    varying = build_varying(ref, segments) if varying is None else varying
    modes_end_alike: list[set[str]] = []
    previous: SegmentResult | None = None
    for k, seg in segments:
        differed = differed or any(differing_quantities(ref.by_step[r.step], r)
                                   for _, s in segments for r in s.records if r.step <= k)
        given: str | None = None
        basis: Literal["reference", "saved"] = "reference"
        status: Literal["after_divergence"] | None = None
        if differed and previous is not None and previous.end_state:
            given, basis, status = previous.end_state, "saved", AFTER_DIVERGENCE
        elif k in ref.segment.captures:
            given = ref.segment.captures[k]
        prev, previous = previous, seg
        if seg.restored_state is None or given is None or (differed and prev is None):
            continue
        expected = (ref.file(given) if basis == "reference"
                    else load_checkpoint(given, read_only=True))
        run = load_checkpoint(seg.restored_state, read_only=True)
        for name in ref.segment.names:
            if name in seen:  # (named at an earlier restore)
                _again_at(findings, ref, seg, name, k, (expected, run), basis, given)
            if name in dropped or name in seen:
                continue
            want, got = expected["components"].get(name), run["components"].get(name)
            held = _held_when_saved(varying.get(name), prev, name) if basis == "reference" else {}
            if (kept := _judged_states(ref, name, _with_leaves(want, held), got, seg)) is None:
                continue  # (trial 184: after a divergence too, idle streams are no finding)
            unused = _unused(ref, basis, given, name)
            detail = _restore_detail(ref, name, k, (expected, run), kept, (basis, given, unused),
                                     (prev, seg), lambda: _modes_end_alike(ref, segments,
                                                                           modes_end_alike))
            if detail is not None:
                findings.append(Finding(name, detail + _held_text(held, kept)
                                        + _made_anew_text(seg, name)
                                        + _moved_by_load_text(seg, name), step=k,
                                        basis=basis, status=status or _idle_streams_only(
                                            *kept, unused, seg, name)))
                seen.add(name)
    return _held_waiting(_no_absent_scheduler(findings))


_WAITING = re.compile(r"(?:^|\.)_num_yielded 0, expected [1-9]")


def _held_waiting(findings: list[Finding]) -> list[Finding]:
    """A StatefulDataLoader's position read as 0 right after a load says that its
    state_dict() reads so until it is next iterated, whatever its load put in
    (trial 876: a position Accelerate's load_state restored, held for the next
    iterator while the program read the epoch's rest through skip_first_batches,
    which applied it again at the next epoch, read as a position the checkpoint
    lost)."""
    return [replace(f, detail=f.detail + _WAITING_TEXT)
            if f.status is None and _WAITING.search(f.detail) else f for f in findings]


_WAITING_TEXT = (" (a StatefulDataLoader's state_dict() reads position 0 right after its "
                 "load_state_dict(), until it is next iterated: the position its load put in "
                 "may be held for its next iterator, which a loop that reads the epoch's rest "
                 "through another loader, skip_first_batches, leaves for the next epoch)")


def _made_anew_text(seg: SegmentResult, name: str) -> str:
    """Of a random state whose generators another component's load made anew
    in the engine's restore (``SegmentResult.made_anew``), what the engine then
    set ('' where none did). Trial 862: a data position whose load built its
    dataset again, with a new shuffle generator, read "does not load back its
    own state" of the random state, which had set the old one."""
    if name not in seg.made_anew:
        return ""
    maker, *made = seg.made_anew[name]
    its = "s" if len(made) > 1 else ""
    return (f"; in the engine's restore, `{maker}`'s load_state_dict() made generator{its} "
            f"{' and '.join(repr(g) for g in made)} anew, and the engine, which restores "
            f"random state last, set the saved state into the one{its} `{name}` held at the "
            f"build, {NO_LONGER_USED}")


def _moved_by_load_text(seg: SegmentResult, name: str) -> str:
    """Of a component that came back from its own load in the engine's restore
    and that a later component's load changed before the first step
    (``SegmentResult.moved_by_load``), which one ('' where none did)."""
    if name not in seg.moved_by_load:
        return ""
    return (f"; in the engine's restore its own load_state_dict() brought it back as its "
            f"state_dict() gave it, {MOVED_BY_LATER_LOAD}: {seg.moved_by_load[name]} (a load "
            "that draws from it, or makes an iterator from it)")


def _unused(ref: Reference, basis: str, given: str, name: str) -> set[str] | None:
    """``_unused_streams`` of a finding against the reference's state (None: against
    what the run saved)."""
    return _unused_streams(ref, given, name) if basis == "reference" else None


def _modes_end_alike(ref: Reference, segments: Segments, cache: list[set[str]]) -> set[str]:
    """``end_modes_alike``, computed once per diagnosis (``cache``)."""
    if not cache:
        cache.append(end_modes_alike(ref, segments))
    return cache[0]


def _restore_detail(ref: Reference, name: str, k: int,
                    files: tuple[dict[str, Any], dict[str, Any]], kept: tuple[Any, Any],
                    given: tuple[str, str, set[str] | None],
                    around: tuple[SegmentResult | None, SegmentResult],
                    modes_alike: Callable[[], set[str]]) -> str | None:
    """A restored component's finding at ``k``, in words (None: none): how
    ``kept`` (its expected and restored states) differ, its modes and what
    lies outside its state; against the reference, what the restore says too.
    ``files``: the expected and restored captures; ``given``: the basis, the
    expected capture's path and the streams unused after it (``_unused``);
    ``around``: the segments before and of the restore."""
    (expected, run), (want, got), (basis, path, unused), (prev, seg) = files, kept, given, around
    detail = None if basis == "reference" and _restored_as_captured(
        ref, path, name, got, expected.get("meta"), run.get("meta"),
    ) else describe_difference(name, want, got, k, expected.get("meta"),
                               run.get("meta"), unused=unused,
                               set_right=_set_right(ref, seg, k, name, unused))
    modes = _modes_differ(name, expected.get("meta"), run.get("meta"), k)
    if modes and detail is not None and name in modes_alike():
        modes = ""  # (beside state that differs, no cause of its own: the program sets
        # the mode before it matters)
    for other in (modes, *_outside_state(name, expected.get("meta"), run.get("meta"), k)):
        if other:
            detail = f"{detail}; {other}" if detail else other
    if detail is None:
        return None
    if basis != "reference":
        return _as_saved(detail, k, "from what it saved")
    like = _restored_like(ref, name, want, got, run["components"])
    detail = _of_the_restore(ref, name, got, k, run.get("meta"), prev, detail)
    if like.startswith(_HOLDS_WHAT):  # (trial 850: causes that do not apply led the line)
        detail = detail.replace(NONE_CAME_BACK, _EVERY_ENTRY).replace(NONE_CAME_BACK_PLAIN,
                                                                       _EVERY_ENTRY)
    return detail + _another_ranks(name, got, expected["components"]) + like


_HOLDS_WHAT = "; it holds what `"
"""How ``_restored_like`` begins where the state is another component's, bit for bit."""

_EVERY_ENTRY = "; every entry differs"
"""``NONE_CAME_BACK`` without its causes, where the state is another component's."""


def build_varying(ref: Reference, segments: Segments) -> dict[str, set[str]]:
    """Of a run through the program's own save/load, each declared component's
    leaves its first half's build made otherwise than the reference's build
    (``SegmentResult.built_leaves``): what a build takes from outside the
    seed (a temporary directory, the clock, a process id). The uninterrupted
    run's value there is no measure of what a restart should hold; what the
    run itself held when it saved is (trial 835: a directory made per build,
    which the load brought back as the first half had it, read "latent gap:
    config" and failed ``--strict``)."""
    if not segments or segments[0][0] != 0 or not segments[0][1].built_leaves:
        return {}
    first = segments[0][1].built_leaves
    out = {}
    for name, leaves in ref.segment.built_leaves.items():
        mine = first.get(name, {})
        apart = {path for path, d in leaves.items() if path in mine and mine[path] != d}
        if apart:
            out[name] = apart
    return out


def _apart_by_build_only(paths: set[str] | None, want: Any, got: Any) -> bool:
    """Whether two states of a component differ only in leaves each build makes
    otherwise (``paths``: ``build_varying``)."""
    if not paths:
        return False
    theirs = {path: leaf for path, leaf in flatten_state(got) if path in paths}
    return digest(_with_leaves(want, theirs)) == digest(got)


def _by_build_text(leaves: list[str]) -> str:
    """The clause of a resume judged equivalent on leaves each build makes
    otherwise (``RunResult.by_build``)."""
    if not leaves:
        return ""
    named = ", ".join(leaves)
    return (f" ({named}, which each build makes otherwise, as the run held "
            f"{'it' if len(leaves) == 1 else 'them'} when it saved: the uninterrupted run's "
            "own build made another)")


def _held_when_saved(paths: set[str] | None, before: SegmentResult | None,
                     name: str) -> dict[str, Any]:
    """Of component ``name``'s leaves ``paths`` (``build_varying``), what the
    run held when it saved: the segment ``before`` the restore, at its end."""
    if not paths or before is None or not before.end_state:
        return {}
    state = load_checkpoint(before.end_state, read_only=True)["components"].get(name)
    return {path: leaf for path, leaf in flatten_state(state) if path in paths}


def _with_leaves(state: Any, leaves: dict[str, Any], prefix: str = "") -> Any:
    """``state`` with the leaves at ``leaves``' paths (``flatten_state``'s) set
    to their values; the containers on the way copied, nothing else."""
    if not leaves:
        return state
    if isinstance(state, Mapping) and state:
        return {key: _with_leaves(value, leaves, f"{prefix}.{key}" if prefix else str(key))
                for key, value in state.items()}
    if isinstance(state, (list, tuple)) and state:
        items = [_with_leaves(item, leaves, f"{prefix}[{i}]") for i, item in enumerate(state)]
        return items if isinstance(state, list) else tuple(items)
    return leaves.get(prefix, state)


def _held_text(held: dict[str, Any], kept: tuple[Any, Any]) -> str:
    """A finding's clause where it compared leaves each build makes otherwise
    (``build_varying``) with what the run held when it saved, which are among
    those that differ."""
    got = dict(flatten_state(kept[1]))
    lost = [path for path, leaf in held.items()
            if not compare_values(leaf, got.get(path), Tolerance.bitwise()).within_tolerance]
    if not lost:
        return ""
    named = ", ".join(f"`{leaf_label(path, got)}`" for path in lost)
    return (f" ({named}: each build makes {'it' if len(lost) == 1 else 'them'} otherwise, so "
            "compared with what the run held when it saved, not with the uninterrupted "
            "run's)")


def _restored_like(ref: Reference, name: str, want: Any, got: Any,
                   restored: dict[str, Any]) -> str:
    """What a finding's restored state is like: another declared component's,
    bit for bit (trials 754, 764: a teacher the load copied from the student
    after restoring it was offered a checkpoint that does not keep it first);
    else a fresh build's (``_as_built_entries``)."""
    # (weights, not counts alike by chance; nor a rank's copy of its own component, which
    # ``_another_ranks`` says)
    if isinstance(got, dict) and not is_stream_state(got) and any(
            _is_weight(v) for _, v in flatten_state(got)):
        mine, base = digest(got), split_rank_name(name)[0]
        like = [other for other, state in restored.items()
                if split_rank_name(other)[0] != base and isinstance(state, dict)
                and state.keys() == got.keys() and digest(state) == mine]
        if like:
            return (f"{_HOLDS_WHAT}{like[0]}` holds there, bit for bit: your load() copies it "
                    f"from `{like[0]}` after restoring it (or your save() saves one for the other)")
    return _as_built_entries(ref, name, want, got)


def _as_built_entries(ref: Reference, name: str, want: Any, got: Any) -> str:
    """Where every tensor entry that differs right after the restore is as a
    fresh build made it (trial 752: a checkpoint of named_parameters() alone
    lost spectral_norm's power-iteration vectors, and the line named one of
    four without saying they were the build's)."""
    built = ref.segment.built_leaves.get(name)
    if not built or want is None or got is None or is_stream_state(want):
        return ""
    try:
        mine, theirs = dict(flatten_state(got)), dict(flatten_state(want))
    except Exception:  # (not known)
        return ""
    apart = [key for key in theirs if key in mine and digest(mine[key]) != digest(theirs[key])]
    # (not counts alone, a position's other form, nor a generator's bytes, said otherwise)
    if set(mine) != set(theirs) or not any(_is_weight(mine[key]) for key in apart) \
            or not all(built.get(key) == digest(mine[key]) for key in apart):
        return ""
    return ("; each entry that differs is as a fresh build makes it: your checkpoint leaves "
            f"{'it' if len(apart) == 1 else 'them'} out, or your load does not set "
            f"{'it' if len(apart) == 1 else 'them'}")


def _is_weight(value: Any) -> bool:
    """A floating tensor of more than one value: weights, not a count alike by
    chance (``_restored_like``, ``_as_built_entries``)."""
    return isinstance(value, torch.Tensor) and value.numel() > 1 and value.is_floating_point()


def _no_absent_scheduler(findings: list[Finding]) -> list[Finding]:
    """``findings`` without the cause "a scheduler ... (see its own line)" where no
    scheduler has a line (trial 471: its state came back; the reader looked for one),
    and with the one scheduler that stands a step ahead as the cause of a rate
    that alone differs (``_rate_of_a_scheduler_ahead``)."""
    if any(SCHEDULER in split_rank_name(f.component)[0] for f in findings):
        return _rate_of_a_scheduler_ahead(findings)
    return [replace(f, detail=f.detail.replace(SCHEDULER_LOST, "")) for f in findings]


def _rate_of_a_scheduler_ahead(findings: list[Finding]) -> list[Finding]:
    """Where one scheduler came back a step ahead at a restore, an optimizer's
    rate that alone differs there is said to follow from it, not offered the
    general causes (trial 829: a LambdaLR made in the load with last_epoch= the
    step reached; the optimizer's line said to make the scheduler before the
    optimizer's state is loaded, which gave back the first step's rate and left
    the schedule a step ahead)."""
    ahead = [f for f in findings if SCHEDULER_AHEAD in f.detail
             and SCHEDULER in split_rank_name(f.component)[0]]
    if len(ahead) != 1:
        return findings
    cause = LEARNING_RATE_ONLY.removesuffix(SCHEDULER_LOST)
    said = (f"{RATE_ALONE}`{ahead[0].component}` sets, and that "
            "one came back a step ahead (see its line): the rate follows from it; put the "
            "scheduler right (load its state, or make it with last_epoch= the step before "
            "the one reached) and the rate comes back with it (making the scheduler before the "
            "optimizer's state is loaded puts back the first step's rate alone, and leaves the "
            "schedule a step ahead)")
    return [replace(f, detail=f.detail.replace(LEARNING_RATE_ONLY, said).replace(cause, said))
            if f.step == ahead[0].step and cause in f.detail else f for f in findings]


def _another_ranks(name: str, got: Any, expected: dict[str, Any]) -> str:
    """`` (rank 0's state there: ...)`` where a per-rank component came back
    as another rank's at the resume point (trial 141: rank 0's data position
    restored on every rank was blamed on rank 1 with its numbers, and nothing
    said whose they were)."""
    base, rank = split_rank_name(name)
    if rank is None or got is None:
        return ""
    mine = digest(got)
    for other, state in expected.items():
        other_base, other_rank = split_rank_name(other)
        if other_base == base and other_rank not in (None, rank) and digest(state) == mine:
            return (f" (rank {other_rank}'s state there: one rank's copy saved, or loaded, "
                    "for every rank)")
    return ""


def _of_the_restore(ref: Reference, name: str, got: Any, k: int, meta: dict[str, Any] | None,
                    before: SegmentResult | None, detail: str) -> str:
    """``detail``, a finding against the reference's state, with what it says
    of the restore too: the earlier weights a model's are, a framework's load
    that had given it back (``meta``: the restored state's, ``loaded_back``),
    and, at a later restart, how the run held it right before it (``before``:
    the segment that ended there): as the reference did, so the restore
    changed it; or otherwise already, so no cause of a load that loses it
    applies (trial 175: an EMA whose update count the first restore lost
    drifted, and read at the second "as where none of it came back")."""
    held = _held_alike_before(ref, name, k, before)
    if held is False:
        detail = detail.replace(NONE_CAME_BACK, f"; {HELD_OTHERWISE_BEFORE}").replace(
            NONE_CAME_BACK_PLAIN, f"; {HELD_OTHERWISE_BEFORE}")
    loaded_back = name in (meta or {}).get("loaded_back", [])
    # (trial 240: a callback's average, drifted since the first restore, its load giving
    # back what the run held, read "something that ran ... changed it" at the second)
    changed = (f" ({CHANGED_AFTER_LOAD})" if loaded_back and held is not False else
               f"; {HELD_OTHERWISE_BEFORE}" if loaded_back and HELD_OTHERWISE_BEFORE not in detail
               else "")
    return (detail + (_earlier_weights(ref, got, k) if name == PARAMS else "") + changed
            + (f"; {RESTORE_CHANGED}" if held else ""))


HELD_OTHERWISE_BEFORE = ("the run held it otherwise already right before this restore: the "
                         "steps since the last one made it so, not this load")
"""How a finding at a later restart says the difference came before it."""


def _held_alike_before(ref: Reference, name: str, k: int,
                       before: SegmentResult | None) -> bool | None:
    """Whether the segment that ended at restart ``k`` held component ``name``
    there as the reference did at ``k`` (a trial: Lightning, restored at an
    epoch's last batch, counted its end again at a second restart, and the
    steps after the first were said to leave it otherwise); None: not known
    (no such segment, or it did not hold it)."""
    if before is None or not before.restored_state or not before.end_state \
            or k not in ref.segment.captures:  # (a run's first half is no restart)
        return None
    held = load_checkpoint(before.end_state, read_only=True)
    want = ref.file(ref.segment.captures[k])
    if name not in held["components"]:
        return None
    return describe_difference(
        name, want["components"].get(name), held["components"][name], k, want.get("meta"),
        held.get("meta")) is None


def _again_at(findings: list[Finding], ref: Reference, seg: SegmentResult, name: str, k: int,
              states: tuple[dict[str, Any], dict[str, Any]], basis: str, given: str) -> None:
    """A component named at an earlier restore that differs again at the
    restore at ``k`` (``states``: the state it should have had there, and the
    run's): its finding says how there too. Every step before it matching,
    against the reference's state (a trial's scheduler, lost at both restores,
    showed its harmless first difference only, 0 for 6, where the second, 0
    for 22, made the run depart); after the run departed, against what the
    run itself saved there (``basis="saved"``; trial 380: a step counter lost
    again at the second restore was not said)."""
    expected, run = states
    kept = _never_drawn_left_out(ref, name, expected["components"].get(name),
                                 run["components"].get(name), seg)
    if kept is None:
        return
    unused = _unused_streams(ref, ref.segment.captures.get(k, given), name)
    detail = describe_difference(name, *kept, k, expected.get("meta"), run.get("meta"),
                                 unused=unused)
    if detail is None:
        return
    # (trial 397: "against what this run saved there: ... differs from the
    # uninterrupted run's" named both)
    said = (f", against what this run saved there: {_as_saved(detail, k, '')}"
            if basis == "saved" else f": {detail}")
    for i, finding in enumerate(findings):
        if finding.component == name and "; at the restore at " not in finding.detail:
            findings[i] = replace(finding, detail=f"{finding.detail}; at the restore at {k}{said}")


def _as_saved(detail: str, k: int, words: str) -> str:
    """A difference from what the run itself saved at ``k`` (the saved basis),
    where ``describe_difference`` speaks of the uninterrupted run's state:
    ``words`` instead (a random stream's "from the uninterrupted run's at step
    8")."""
    return detail.replace(f" from the uninterrupted run's at step {k}",
                          f" {words} at step {k}" if words else "")


def _set_right(ref: Reference, seg: SegmentResult, k: int, name: str,
               unused: set[str] | None) -> set[str]:
    """Of the stream component ``name`` (``unused`` not None), the streams
    (``stream_items`` keys) the program set right itself during step ``k + 1``
    (``evidence.set_right_during``)."""
    if unused is None:
        return set()
    rank = split_rank_name(name)[1]
    return {base for base, of in map(split_rank_name, set_right_during(ref.segment, seg, k))
            if of == rank}


def _restored_as_captured(ref: Reference, given: str, name: str, got: Any,
                          want_meta: dict[str, Any] | None,
                          got_meta: dict[str, Any] | None) -> bool:
    """Whether a restored component is bit for bit the reference's capture of
    it, its optimizer's parameters listed alike (then ``describe_difference``
    finds nothing): one digest against the capture's, computed once, where
    comparing leaf by leaf costs three times as much (every component of
    every restart is asked)."""
    def listing(meta: dict[str, Any] | None) -> tuple[Any, Any]:
        return (meta or {}).get("optimizer_params"), (meta or {}).get("optimizer_params_of")

    captured = ref.file(given)["components"]
    # (a restored capture keeps the capture's own object for a large component
    # restored bit for bit, see capture._keep_unwritten: that one is not digested again)
    return (got is not None and name in captured
            and listing(want_meta) == listing(got_meta)
            and (got is captured[name] or ref.component_digest(given, name) == digest(got)))


_MODE_TEXTS = ("left in eval mode after the load", "in train mode after the load",
               "in other modes after the load")
"""How a finding about a module's modes begins (``_modes_differ``)."""


def _modes_differ(name: str, expected: dict[str, Any] | None, restored: dict[str, Any] | None,
                  k: int) -> str:
    """How the modules of a declared module differ in mode (train or eval)
    right after the restore from the reference's at ``k`` ('' when alike, or
    not known: a capture from before modes were recorded)."""
    want = ((expected or {}).get("eval_modules") or {}).get(name)
    got = ((restored or {}).get("eval_modules") or {}).get(name)
    if want is None or got is None or set(want) == set(got):
        return ""
    to_eval, to_train = set(got) - set(want), set(want) - set(got)
    if to_eval and not to_train:
        return (f"{_MODE_TEXTS[0]} ({_modules(to_eval)}), in train mode at step "
                f"{k} in the uninterrupted run: dropout and batch norm, where it has them, act "
                # (trial 773: a build that froze a stage in eval mode, which the load left)
                "otherwise (a load() that calls .eval(), evaluates, or keeps the mode its build "
                "set, must call .train() after)")
    if to_train and not to_eval:
        return (f"{_MODE_TEXTS[1]} ({_modules(to_train)}), in eval mode at step {k} "
                f"in the uninterrupted run, {_MODES_WHILE_TRAINING}")
    return (f"{_MODE_TEXTS[2]} than at step {k} in the uninterrupted run: eval "
            f"mode for {_modules(to_eval)}, train mode for {_modules(to_train)}")


def _outside_state(name: str, expected: dict[str, Any] | None,
                   restored: dict[str, Any] | None, k: int) -> list[str]:
    """How a restored component differs from the reference's at ``k`` in what
    no state_dict() holds: frozen parameters, the optimizer a scheduler steps,
    a deque's maxlen (each '' when alike)."""
    return [_frozen_differ(name, expected, restored, k),
            _steps_other_optimizer(name, expected, restored, k),
            _maxlen_differs(name, expected, restored, k)]


def _frozen_differ(name: str, expected: dict[str, Any] | None,
                   restored: dict[str, Any] | None, k: int) -> str:
    """Which parameters of a declared module a restore left frozen, or left
    trainable, against the reference at ``k`` ('' when alike or not known)."""
    want = ((expected or {}).get("frozen_params") or {}).get(name)
    got = ((restored or {}).get("frozen_params") or {}).get(name)
    if want is None or got is None or set(want) == set(got):
        return ""
    frozen, thawed = sorted(set(got) - set(want)), sorted(set(want) - set(got))
    told = []
    if frozen:
        told.append(f"{_params(frozen)} left frozen after the load (requires_grad False), "
                    f"trainable at step {k} in the uninterrupted run: they get no gradient "
                    "where it had one")  # (trial 384: not "do not train", of embeddings its
    if thawed:  # optimizer, built while they were frozen, never held in either run)
        told.append(f"{_params(thawed)} trainable after the load, frozen at step {k} in the "
                    "uninterrupted run: they get a gradient where it had none")
    return "; ".join(told) + f": {_FROZEN_TEXT}{_SET_AGAIN_BY}"


def _meta_apart(key: str, name: str, expected: dict[str, Any] | None,
                restored: dict[str, Any] | None) -> tuple[Any, Any] | None:
    """A component's entry under ``key`` in the reference's capture meta and in
    the restored one, where both have it and they differ (None otherwise)."""
    want = (expected or {}).get(key) or {}
    got = (restored or {}).get(key) or {}
    if name not in want or name not in got or want[name] == got[name]:
        return None
    return want[name], got[name]


def _steps_other_optimizer(name: str, expected: dict[str, Any] | None,
                           restored: dict[str, Any] | None, k: int) -> str:
    """Where a declared scheduler steps another optimizer after the restore
    than it did at ``k`` in the reference ('' when alike or not known)."""
    pair = _meta_apart("steps_optimizer", name, expected, restored)
    if pair is None:
        return ""
    want, got = pair
    now = "an optimizer no component declares" if got is None else f"`{got}`"
    then = "one no component declares" if want is None else f"the declared `{want}`"
    # (trial 840 read "..., the declared `optimizer` at step 15 in the uninterrupted run"
    # as ambiguous: which one steps which, when)
    return (f"steps {now} after the load, where at step {k} the uninterrupted run's stepped "
            f"{then}: "
            f"{_REBOUND_TEXT}, so a load() that makes the optimizer again must make the "
            "scheduler again over it (or load into the optimizer it has)")


def _maxlen_differs(name: str, expected: dict[str, Any] | None,
                    restored: dict[str, Any] | None, k: int) -> str:
    """Where a declared attribute holds a deque whose maxlen the restore left
    otherwise than the reference's at ``k`` ('' when alike or not known)."""
    pair = _meta_apart("deque_maxlen", name, expected, restored)
    held = _meta_apart("held_deque_maxlen", name, expected, restored)
    if pair is not None:
        want, got = pair
        head = f"a deque of maxlen {got} after the load"
    elif held is not None and held[0][0] == held[1][0]:  # (a trial's memory queue)
        (path, want), (_, got) = held
        head = (f"the deque whose items its state lists (its `.{path}`) has maxlen {got} "
                "after the load")
    else:
        return ""
    return (f"{head}, {want} at step {k} "
            "in the uninterrupted run: a deque's maxlen is in none of its items, so a load() "
            "that makes it again must give it the same maxlen (deque(items, maxlen=...))")


_REBOUND_TEXT = "a scheduler keeps the optimizer it was made with"
"""How a finding about a scheduler bound to another optimizer says why."""

_FROZEN_TEXT = "requires_grad is not in a state_dict()"
"""How a finding about frozen parameters says why (``_frozen_differ``)."""


def _params(names: list[str]) -> str:
    first = ", ".join(f"`{n}`" for n in names[:2])
    more = f" and {len(names) - 2} more" if len(names) > 2 else ""
    return f"parameter{'s' if len(names) > 1 else ''} {first}{more}"


def _modules(paths: set[str]) -> str:
    """Modules of a declared one, by path ('' is the module itself), in words."""
    subs = sorted(p for p in paths if p)
    listed = ", ".join(f"`{p}`" for p in subs[:3]) + (", ..." if len(subs) > 3 else "")
    if "" in paths:
        return f"the module{f' and {len(subs)} of its submodules' if subs else ''}"
    return (f"its submodule {listed}" if len(subs) == 1
            else f"{len(subs)} of its submodules: {listed}")


def _earlier_weights(ref: Reference, state: Any, k: int) -> str:
    """When restored weights are, bit for bit, the reference's after an
    earlier step than the resume point ``k``: so said (a load that picked an
    older checkpoint, which a loop that runs on from its restored step would
    train again, where the check runs on from ``k``); else ''."""
    if not isinstance(state, dict):
        return ""
    mine = {f"param:{name}": digest(t) for name, t in state.items()
            if isinstance(t, torch.Tensor)}
    # (beside other declared modules, the model's keys carry its name: trace._traced_models)
    mine |= {f"param:{PARAMS}.{key.removeprefix('param:')}": d for key, d in mine.items()}
    for step in range(k - 1, 0, -1):
        theirs = {key: d for key, d in ref.by_step[step].digests.items()
                  if key.startswith("param:") and key in mine}
        if theirs and all(mine[key] == d for key, d in theirs.items()):
            return (f" (the reference's weights after step {step}, {k - step} step"
                    f"{'' if k - step == 1 else 's'} before the resume point: "
                    f"{OLDER_CHECKPOINT}; a loop that runs on from the step it restored would "
                    "repeat those steps, the check runs on from the resume point)")
    return ""


_OLDER_STEP = re.compile(r"the reference's weights after step (\d+), \d+ steps? before the "
                         "resume point: " + re.escape(OLDER_CHECKPOINT))


def _older_checkpoint_text(r: RunResult) -> str:
    """The run's first words where its load restored an older checkpoint (the
    confirmed weights are the reference's after an earlier step): every other
    finding follows from that (a trial: five confirmed components read as
    five bugs; the loop replayed the steps and ended as the uninterrupted run)."""
    # (trial 157: with the weights not confirmed, the data position and epoch that
    # put the first step right were read as the bugs; the weights still say it)
    for f in r.diagnosis:
        found = _OLDER_STEP.search(f.detail) if f.component == PARAMS else None
        if found is not None:
            return (f"{OLDER_CHECKPOINT}, the uninterrupted run's state after step "
                    f"{found.group(1)} at step {f.step or r.resume_at[0]} (its weights are, bit "
                    "for bit): what differs follows from that, and a loop that runs on from the "
                    "step it restored repeats the steps between, where the check runs on from "
                    "the resume point; ")
    return ""


def streams_put_back(ref: Reference, segments: Segments) -> set[str]:
    """The random-state components whose state at the end of the run is the
    reference's, bit for bit. One that differed right after a restore was
    moved since, by draws or by the program setting it: the program put it
    back itself (a sampler that replays its epoch's shuffle from the epoch's
    start). Not said of other state: one that a step overwrites without
    reading it ends equal too, yet a save before that step would keep the
    wrong state (a latent gap)."""
    if not ref.segment.end_state:
        return set()
    at_end = ref.file(ref.segment.end_state)["components"]
    return _ended_alike(ref, segments, [name for name in ref.segment.names
                                      if is_stream_state(at_end.get(name))])


def modes_put_back(ref: Reference, result: RunResult, segments: Segments) -> set[str]:
    """The declared modules whose only finding is their train/eval mode after
    a restore, and whose modes at the end of the run are the reference's: the
    program sets the mode itself before it matters (an EMA put in eval mode
    for every evaluation), so the load owes it nothing. With them, those whose
    frozen parameters the program sets itself (``note_frozen_set_again`` said
    so), frozen at the end as in the reference."""
    only_modes = {f.component for f in result.diagnosis
                  if f.detail.startswith(_MODE_TEXTS) and _FROZEN_TEXT not in f.detail}
    frozen = {f.component for f in result.diagnosis if _FROZEN_SET_AGAIN in f.detail}
    return ((only_modes & end_modes_alike(ref, segments) if only_modes else set())
            | (frozen & end_modes_alike(ref, segments, "frozen_params") if frozen else set()))


def note_frozen_set_again(ref: Reference, result: RunResult, segments: Segments) -> None:
    """Findings whose only difference is which parameters of a module are
    frozen after a restore, where the first step after it gave a gradient to
    the same parameters as the reference's did: the program sets
    requires_grad itself before the step's backward (trial 407: a callback
    that freezes by a count in on_train_batch_start), so the load owes it
    nothing, and a rerun that sets it is evidence (no longer ``frozen_in``).
    Their words say so (``frozen_set_again_text``); ``modes_put_back`` puts
    them back where their frozen parameters at the end are the reference's."""
    restored = dict(segments)
    ref_by_step = {r.step: r for r in ref.segment.records}
    again = set()
    for f in result.diagnosis:
        seg = restored.get(f.step) if f.step is not None else None
        if not frozen_only(f.detail) or seg is None or f.step is None:
            continue
        first = next((r for r in seg.records if r.step == f.step + 1), None)
        there = ref_by_step.get(f.step + 1)
        if first is None or there is None or first.skipped or there.skipped:
            continue
        grads = [{k for k in r.digests if quantity_kind(k) == "grad"} for r in (first, there)]
        if grads[0] and grads[0] == grads[1]:
            again.add(f.component)
    result.diagnosis = [replace(f, detail=frozen_set_again_text(f.detail, f.step or 0))
                        if f.component in again and frozen_only(f.detail) else f
                        for f in result.diagnosis]


def frozen_set_again_text(detail: str, step: int) -> str:
    """A ``_frozen_differ`` finding of a module the program freezes itself
    (``note_frozen_set_again``), without the consequences it did not have."""
    head = re.sub(r": they get (no )?a gradient where it had (one|none)", "", detail)
    return head.replace(
        f": {_FROZEN_TEXT}{_SET_AGAIN_BY}",
        f": {_FROZEN_SET_AGAIN}: step {step + 1}, the first after the restore, gave a gradient "
        "to the same parameters as in the uninterrupted run", 1)


_FROZEN_SET_AGAIN = "the program sets requires_grad again itself"

_SET_AGAIN_BY = (", so a load() must set it again (under a framework's restore, the code of "
                 "yours that freezes or unfreezes them, by the framework's own step count)")
"""(trial 494: "a load() must" of a Trainer program with no load(), whose callback froze
by a count of its own)"""


def end_modes_alike(ref: Reference, segments: Segments, key: str = "eval_modules") -> set[str]:
    """The declared modules in the reference's train/eval modes at the end of
    the run (none when either end is unknown); ``key="frozen_params"``: with
    the reference's frozen parameters."""
    last = segments[-1][1] if segments else None
    if last is None or not last.end_state or not ref.segment.end_state:
        return set()
    run_end = (load_checkpoint(last.end_state, read_only=True).get("meta") or {})
    ref_end = (ref.file(ref.segment.end_state).get("meta") or {})
    run_modes, ref_modes = (m.get(key) or {} for m in (run_end, ref_end))
    return {name for name in run_modes if name in ref_modes
            and set(run_modes[name]) == set(ref_modes[name])}


def _never_drawn_only(ref: Reference, name: str, want: Any, got: Any,
                      seg: SegmentResult, other: str | None = None) -> bool:
    """Whether a random-state component differs (``got`` from ``want``) only in
    streams that no step of the uninterrupted run drew from, and that the
    resumed run's segment ``seg`` never moved between its restore and its end
    (``other``: compared with ``got`` instead of the end; ``got`` is then the
    end): not state this run resumes with, said of no run
    (``Reference.streams_never_drawn``)."""
    never = ref.streams_never_drawn(name) if is_stream_state(got) else set()
    moved = _moved(want, got) if never and is_stream_state(want) else set()
    beside = seg.end_state if other is None else other
    if not moved or not moved <= never or not beside:
        return False
    there = load_checkpoint(beside, read_only=True)["components"].get(name)
    return is_stream_state(there) and not _moved(got, there) & moved


def _judged_states(ref: Reference, name: str, want: Any, got: Any,
                   seg: SegmentResult) -> tuple[Any, Any] | None:
    """``_never_drawn_left_out``; None too where a scheduler's states differ in
    its count of calls alone (``call_order_only``)."""
    return None if call_order_only(want, got) else _never_drawn_left_out(ref, name, want,
                                                                         got, seg)


def _never_drawn_left_out(ref: Reference, name: str, want: Any, got: Any,
                          seg: SegmentResult) -> tuple[Any, Any] | None:
    """Of a random-state component, both states without the streams no step
    of the uninterrupted run drew from and the resumed run's segment ``seg``
    never moved (trial 188: "(and numpy global stream, which the
    uninterrupted run held the same ...)" beside the lost Python stream of a
    program that never uses numpy, read as part of the bug); None where they
    differ in such streams only: no finding (``_never_drawn_only``, with the
    segment's end read once)."""
    never = ref.streams_never_drawn(name) if is_stream_state(got) else set()
    if not never or not is_stream_state(want) or not seg.end_state:
        return want, got
    there = load_checkpoint(seg.end_state, read_only=True)["components"].get(name)
    idle = never - _moved(got, there) if is_stream_state(there) else set()
    moved = _moved(want, got)
    if moved and moved <= idle:
        return None
    return (want, got) if not idle else (_without_streams(want, idle), _without_streams(got, idle))


def _without_streams(state: dict[str, Any], keys: set[str]) -> dict[str, Any]:
    """An ``RNGState``'s state without the streams ``keys`` (``stream_items`` keys)."""
    out = {key: value for key, value in state.items() if key not in keys}
    out["generators"] = {name: value for name, value in state.get("generators", {}).items()
                         if f"generator {name}" not in keys}
    return out


def _idle_streams_only(want: Any, got: Any, unused: set[str] | None,
                       seg: SegmentResult, name: str) -> FindingStatus | None:
    """``latent`` for a random-state component ``name`` whose only differing
    streams neither run drew from after the resume point: the reference's
    never moved after it (``unused``), and the resumed run's stands at the end
    of the segment ``seg`` that restored it: they cannot be what made the run
    depart, whatever else differs. A run may draw where the reference did not
    (a loader's iterator made after the load draws its epoch's order from its
    generator): then its stream is not idle, and the reruns judge."""
    if not unused or not (is_stream_state(want) and is_stream_state(got)):
        return None
    ended: Any = (load_checkpoint(seg.end_state, read_only=True)["components"].get(name)
                  if seg.end_state else None)
    if not is_stream_state(ended):
        return None
    moved = _moved(want, got)
    return LATENT if moved and moved <= unused and not (_moved(got, ended) & moved) else None


def steps_match(result: RunResult) -> bool:
    """Every step of a diverged run matched: only its end state differs."""
    return result.steps_match()


def departure(result: RunResult) -> int | None:
    """The resume point after which the run departs from the reference (None:
    it never does, or it failed)."""
    if result.verdict != DIVERGED or result.first_divergent_step is None:
        return None
    return max((k for k in result.resume_at if k < result.first_divergent_step),
               default=result.resume_at[0])


def confirmation_tries(ref: Reference, result: RunResult, segments: Segments,
                       source: str) -> dict[int, tuple[int, str]]:
    """The findings that a rerun must decide, by their index in the diagnosis:
    each with its resume point and the program's checkpoint there. Only
    findings at or before the departure, through the program's own
    save/load (the engine's own restore is the experiment itself), where
    the reference has a capture to put in."""
    at = departure(result)
    if at is None or source != "program":
        return {}
    checkpoints = {k: prev.program_checkpoint
                   for (_, prev), (k, _) in zip(segments, segments[1:])}
    tries = {}
    for i, finding in enumerate(result.diagnosis):
        k = finding.step
        if (finding.status in (AFTER_DIVERGENCE, LATENT) or k is None or k > at
                or k not in ref.segment.captures or not checkpoints.get(k)
                or finding.detail.startswith(DETACHED)):  # (no state attaches it)
            continue
        again = _differs_again_at(finding.detail)
        if again is not None and k < again <= at and again in ref.segment.captures \
                and checkpoints.get(again):
            # (trial 416: a position in its other form at an epoch's end, restored at 8,
            # lost for real at 12, where the run departs: put right from 8 on, with the
            # epoch it is one position with left as the load set it, it read another
            # place at once, and only the two together, from 8, were said to help)
            k = again
        tries[i] = (k, checkpoints[k] or "")
    return tries


def _differs_again_at(detail: str) -> int | None:
    """The later restore at which a finding's component differs again
    (``_again_at`` adds it to the finding), before the run departs there."""
    found = re.search(r"; at the restore at (\d+): ", detail)
    return int(found.group(1)) if found else None


def rerun_helps(cmp: Comparison, diverged_at: tuple[int, str] | None,
                run: RunResult | None = None) -> bool:
    """A rerun with one component put right helps when its divergence goes away
    or starts later than the run's own (``diverged_at``: its first step and
    quantity): at a later step, or at the same step in a quantity computed
    after the run's first one (data, loss scale, lr, loss, gradients,
    parameters: a scheduler put right leaves a fresh optimizer's parameters
    differing where the learning rate differed first). Where only the end
    state differs, in the run (``run``, where ``diverged_at`` is its own
    first divergence) and in the rerun, when the rerun ends otherwise in
    fewer components
    (trial 181: a best loss, put right at its second restore, ended as the
    uninterrupted run's, and was "not the cause" beside a generator that
    still ended otherwise)."""
    if cmp.first is None:
        return True
    if diverged_at is None:
        return False
    ended = run.ended_otherwise if run is not None and diverged_at == (
        run.first_divergent_step, run.first_divergent_key) else []
    if ended and cmp.first[0] == diverged_at[0] and all(
            key.startswith("state:") for key in (cmp.first[1], diverged_at[1])):
        return set(cmp.ended_otherwise) < set(ended)
    return _position(cmp.first) > _position(diverged_at)


def _position(first: tuple[int, str]) -> tuple[int, int]:
    step, key = first
    head = split_rank_name(key)[0].split(":", 1)[0]
    return step, QUANTITY_ORDER.index(head) if head in QUANTITY_ORDER else len(QUANTITY_ORDER)


_REACHES = "(a StatefulDataLoader's reaches only the next iterator it makes)"


def rerun_evidence(result: RunResult, outcomes: Mapping[int, bool],
                   unreached: Mapping[str, Any]) -> dict[int, bool | None]:
    """Each finding's rerun (``outcomes``: finding index -> it helped) as the
    evidence ``settle_findings`` takes: None where one that did not help may
    not have reached the component (an iterator made before it, ``unreached``;
    frozen parameters, ``frozen_in``; a scheduler bound to another optimizer,
    ``rebound_in``)."""
    return {i: None if not helped and (result.diagnosis[i].component in unreached
                                       or frozen_in(result.diagnosis[i])
                                       or rebound_in(result.diagnosis[i]))
            else helped for i, helped in outcomes.items()}


def frozen_in(finding: Finding) -> bool:
    """A finding of parameters frozen otherwise after the load, whose rerun is
    no evidence when it did not help: the rerun sets ``requires_grad`` where
    the engine puts state in, which may come before or after the program (or
    its framework) builds its optimizer over the trainable parameters, or
    sets them again itself (a trial's Trainer callback that freezes layers
    was called "not the cause" of its own resume's departure)."""
    return _FROZEN_TEXT in finding.detail


def rebound_in(finding: Finding) -> bool:
    """A finding of a scheduler that steps another optimizer after the load:
    a rerun that puts the reference's state in leaves it stepping that one,
    so a rerun that did not help is no evidence."""
    return _REBOUND_TEXT in finding.detail


_FROZEN_RERUN = (
    "; not judged: setting requires_grad as the uninterrupted run had it, where the check "
    "puts state in after your load(), left the run departing where it did, but that may not "
    "be where your program "
    "(or its framework) builds the optimizer over the trainable parameters or freezes them "
    "itself")


def _rate_made_anew(result: RunResult, finding: Finding) -> bool:
    """Whether a rerun that put ``finding`` right is no evidence against it: a
    scheduler or an optimizer that differs right after the load, in a run whose
    learning rate is the first thing to differ. Its state put in, the object
    that steps may still not be the one restored (a scheduler made anew after
    the load, not prepared as the saved one was, steps on a count of its own:
    trial 138's, stepping every micro-batch, was called "not the cause")."""
    return (split_rank_name(finding.component)[0] in (SCHEDULER, OPTIMIZER)
            and split_rank_name(result.first_divergent_key or "")[0] == "lr")


def _settings_unjudged(finding: Finding, outcome: bool | None) -> Finding:
    """A finding left as it is; of settings whose rerun changed nothing, saying
    why that is no evidence (trial 643 read a bare "not judged")."""
    if finding.component == CONFIG and outcome is False:
        return replace(finding, detail=finding.detail + _CONFIG_RERUN)
    return finding


_CONFIG_RERUN = ("; not judged: put right after your load(), the run departs all the same, "
                 "which is no evidence against it: what your build or load() made from the "
                 "settings, a schedule's function or a layer's size, stays as it was made")

_RATE_RERUN = ("; not judged: put right in a rerun, the learning rate still departs, which "
               "is no evidence against it: the scheduler that steps may not be the one "
               "restored (one made anew after your load(), or not prepared or wrapped as the "
               "saved one was, steps on a count of its own)")

def _rate_rerun_text(result: RunResult, finding: Finding, outcomes: dict[int, bool | None],
                     ) -> str:
    """A finding's detail with ``_RATE_RERUN``; where others differ after the load too,
    which no rerun put right (not in ``outcomes``), first that one of them may
    set a rate as well (trial 842: a GAN's two schedulers, both lost; the first,
    put right alone, left the other's rate departing, and the line sent the
    user looking for a scheduler made anew)."""
    others = list(dict.fromkeys(
        f"`{f.component}`" for j, f in enumerate(result.diagnosis)
        if j not in outcomes and f.component != finding.component
        and f.status not in (LATENT, PUT_BACK, AFTER_DIVERGENCE) and f.step == finding.step))
    if not others:
        return finding.detail + _RATE_RERUN
    return finding.detail + _RATE_RERUN.replace(
        "against it: the scheduler", f"against it: {', '.join(others)}, which differ"
        f"{'s' if len(others) == 1 else ''} here too and no rerun put right, may set a rate "
        "as well; or the scheduler", 1)


_REBOUND_RERUN = ("; not judged: putting the uninterrupted run's state in does not change "
                  "which optimizer a scheduler steps")


def _global_streams_only(finding: Finding) -> bool:
    """A random state's finding whose differing streams are global ones alone:
    an iterator the program made before a rerun put it right draws its order
    from a generator of the program's own in the same component (what
    ``iterators_over`` finds), not from these, so that rerun is evidence (trial
    688: the torch stream, which a loader's iterator drew its base seed from,
    was told "check what your save() stores" beside a sampler's own generator)."""
    return is_stream_detail(finding.detail) \
        and "generator '" not in finding.detail.split(" differ", 1)[0]


def _unreached_text(component: str, where: list[str], stream: bool = False) -> str:
    """Why a data loader's rerun is no evidence (``settle_findings``); or a
    random state's (``stream``), whose generator such an iterator drew from;
    or a sampler's epoch, over whose sampler it was made."""
    # (trial 410: "changed nothing" of a rerun that put a later epoch's order right)
    head = (f"; not judged: putting `{component}` right after your load() left the run "
            f"departing where it did, but your program goes on with {_iterators(where)}, an "
            "iterator it had made ")
    if component == SAMPLER_EPOCH and not stream:  # (trial 241: "not the cause" of the cause)
        return (f"{head}before over that sampler: the order it drew then stays; check that "
                "your load() sets the sampler's epoch before it makes the iterator")
    if stream:  # (trial 226: "(differs, not the cause)" of the cause)
        return (f"{head}before from a loader whose sampler draws from that generator: the "
                "order it drew then stays; check what your save() stores for it, and when "
                "your load() makes the iterator")
    return (f"{head}from that loader before, which a loader's new state may not reach "
            f"{_REACHES}; check what your save() stores for it")


def _made_before_text(component: str, where: list[str]) -> str:
    """Why the engine's own restore of a data loader may not have taken (``conclude``)."""
    return (f"the engine put the state of `{component}` into its loader after the build, but "
            f"your program goes on with {_iterators(where)}, an iterator it had made from that "
            f"loader before, which the state may not reach {_REACHES}: make the iterator once "
            "the loader's state is loaded (when the first batch is needed)")


def _iterators(where: list[str]) -> str:
    return ", ".join(f"`{p}`" for p in where) or "an iterator"


def own_resume_ends(named: dict[str, str], reference: dict[str, list[str]],
                    own: dict[str, list[str]] | None,
                    run: RunResult | None = None,
                    reference_after: dict[int, dict[str, list[str]]] | None = None,
                    own_after: dict[int, dict[str, list[str]]] | None = None,
                    early: Sequence[str] = (),
                    built: dict[str, list[str]] | None = None) -> list[str]:
    """What is not compared (path -> it in words), each saying how the program's
    own full resume ends with it (``own``: digests of what that resume held
    at its end; None: no such resume, or not digested): as the uninterrupted
    run ended (its checkpoint keeps it, or the program sets it again), or
    otherwise: its checkpoint loses it, unless it is not state (a log). Not
    where that resume (``run``) departed from the uninterrupted run: then
    what it ends with follows from the departure, whatever its checkpoint held;
    unless it held it otherwise right after its load() (``*_after``: step ->
    digests; ``_lost_by_the_load``), and after the next step where that came
    before the departure. ``early``: see ``_lost_by_the_load``; ``built``: the
    digests right after the reference's build."""
    departed = run is not None and run.verdict not in (IDENTICAL, CLOSE)
    # (a trial: every step alike, a scheduler ended otherwise: not "departed at step 24")
    ends_only = run is not None and steps_match(run)
    out = []
    shifted = (_shifted_lists(named, reference, own)  # (trial 236: so where every step
               if own and (ends_only or not departed) else {})  # matched, not item by item)
    for path, text in named.items():
        item = _ITEM.match(path)
        if item is not None and item.group(1) in shifted:
            continue  # (said once, of the list: ``_shifted_lists``)
        if GRADS_SUMMED in text and run is not None and run.verdict in (IDENTICAL, CLOSE):
            out.append(text + _GRADS_PUT_BACK)  # (its steps alike: it had them)
            continue
        lost = _lost_by_the_load(path, run, reference_after, own_after, early) \
            if departed and run is not None else None
        k = _restore_before(run) if run is not None else None
        if lost is not None and run is not None and k is not None:
            text += _held_otherwise_at(path, run, (k, lost, ends_only), bool(
                own and path in reference and own.get(path) == reference[path]),
                (reference_after, own_after, built))
        elif own and path in own and path in reference and own[path] == reference[path]:
            text += _ends_alike_text(path, text, run, reference_after, own_after, early)
        elif own and path in reference and departed and not ends_only:
            text += _says_nothing(run, path in own, (path, text, reference_after, own_after))
        elif own and path not in own and path in reference:  # (an entry a log made, say)
            # (trial 178: a cache of tuples the load lost read as nothing lost)
            text += f"; {OWN_RESUME_ENDS_WITHOUT}: {CHECKPOINT_LOSES}, {NOT_STATE_OR_CACHE}" \
                + _read_by_no_step(run)
        elif own and path in own and path in reference and run is not None and \
                _held_alike_after_loads(path, run, reference_after, own_after):
            said = _NOT_LOST_BY_THE_LOAD.format(steps=steps_text(run.resume_at))
            read = _differed_before(run, None)
            if read:  # (a trial: the state they read was a declared, confirmed counter)
                said = said.removesuffix(_UNCOMPARED_SOURCE) + (
                    f"from state they read: {', '.join(c for c, _ in read)}, which differed "
                    "right after the load (see the diagnosis), or other state that is not "
                    "compared")
            text += said
        elif own and path in own and path in reference:
            text += _otherwise_text(path, text, run, own, reference, reference_after, own_after)
        out.append(text)
    return out + list(shifted.values())


_GRADS_PUT_BACK = ("; your own resume, alike at every step, had them as the uninterrupted run "
                   "did: your load() sets them again (declared as a component, they would be "
                   "compared, and the engine's restarts would hold them too)")
"""What a line of gradients summed across a resume point adds where the program's own
resume matched at every step (trial 522: its correct twin read "a restart starts it
empty ... save them with the checkpoint, set them in load()", which it did)."""


def _otherwise_text(path: str, text: str, run: RunResult | None, own: dict[str, list[str]],
                    reference: dict[str, list[str]],
                    reference_after: dict[int, dict[str, list[str]]] | None,
                    own_after: dict[int, dict[str, list[str]]] | None) -> str:
    """What ``own_resume_ends`` says of what the program's own resume ends
    with otherwise than the uninterrupted run did."""
    part = _part_lost(path, text, run, own[path], reference[path], reference_after, own_after)
    return (f"; {OWN_RESUME_ENDS_OTHERWISE} than the uninterrupted run did{part}: "
            f"{CHECKPOINT_LOSES}, {NOT_STATE}" + _read_by_no_step(run))


def _read_by_no_step(run: RunResult | None) -> str:
    """``READ_BY_NO_STEP`` where the program's own resume matched at every step."""
    return READ_BY_NO_STEP if run is not None and run.verdict in (IDENTICAL, CLOSE) else ""


def _part_lost(path: str, text: str, run: RunResult | None,
               own_end: list[str], reference_end: list[str],
               reference_after: dict[int, dict[str, list[str]]] | None,
               own_after: dict[int, dict[str, list[str]]] | None) -> str:
    """Where right after the (first) load only some of what ``path`` holds
    differed, how many (trial 693: an average of the weights whose checkpoint
    kept the weights and lost only the count of updates read "your checkpoint
    loses it" of the whole module; the next update made the weights differ too)."""
    if run is None or not run.resume_at:
        return ""
    k = run.resume_at[0]
    mine = (own_after or {}).get(k, {}).get(path)
    there = (reference_after or {}).get(k, {}).get(path)
    if mine is None or there is None or len(mine) != len(there) or len(there) < 2:
        return ""
    apart = sum(a != b for a, b in zip(mine, there))
    if not 0 < apart < len(there):
        return ""
    kind = "tensors and numbers" if " number" in text.split(" that the run changed")[0] \
        else "tensors"
    alike = len(there) - apart
    end = (sum(a != b for a, b in zip(own_end, reference_end))
           if len(own_end) == len(reference_end) == len(there) else None)
    later = (f"; at the end, {end} of them differ" if end is not None and end != apart else "")
    return (f" (right after your load() at step {k}, {apart} of the {len(there)} {kind} it "
            f"holds differed, the other{'' if alike == 1 else 's'} as the uninterrupted run "
            f"held {'it' if alike == 1 else 'them'}{later})")


_ITEM = re.compile(r"^(.*)\[(\d+)\]$")
"""The path of a list's item, ``state.history[3]``: the list's path and the index."""


def _says_nothing(run: RunResult | None, held: bool,
                  line: tuple[str, str, Any, Any] | None = None) -> str:
    """What a departed own resume ends with (``held``: otherwise; else without
    it) says nothing of its checkpoint (trial 192: a log's entry a run that
    departed never made, of a checkpoint that kept the log, read "ends without
    it ...: your checkpoint loses it"). ``line``: the path, its text and the
    runs' digests after each step (``own_resume_ends``): where the engine's
    restart held it otherwise (not as a build makes it) and the program's own
    resume held it as the uninterrupted run did right after each load(), that
    is said first (trial 846: a best loss its load put back read as lost)."""
    back = line is not None and run is not None and RESTART_HELD_OTHERWISE in line[1] \
        and _held_alike_after_loads(line[0], run, line[2], line[3])
    step = run.first_divergent_step if run is not None else None
    went = _went(run) if run is not None else "departed from the uninterrupted run"
    first = (f"; your own resume held it as the uninterrupted run did right after your load() "
             f"at {steps_text(run.resume_at)}: your load() puts it back; it"
             if back and run is not None else "; your own resume")
    return (f"{first} ends {'with it otherwise' if held else 'without it'}, but that "
            f"says nothing of your checkpoint: the resume had {went}"
            + (f" at step {step}" if step is not None else ""))


def _healed_text(path: str, run: RunResult | None,
                 reference_after: dict[int, dict[str, list[str]]] | None,
                 own_after: dict[int, dict[str, list[str]]] | None) -> str | None:
    """Of what the program's own resume ends with as the uninterrupted run did:
    that it held it otherwise right after its load() and after the next step,
    a later step setting it again (trial 180: a callback's best loss left out
    of its state_dict(), which the next evaluation beat, read "your own resume
    ends with it as the uninterrupted run did"). None: not so, or not seen."""
    if run is None or run.verdict not in (IDENTICAL, CLOSE):
        return None
    never = 10 ** 9  # (it never departed: each restore's next step is seen)
    lost = [k for k in run.resume_at if _lost_at(path, k, never, reference_after, own_after)]
    if not lost:
        return None
    # (trial 385: a generator seeded again at each epoch's start, which a checkpoint need
    # not hold, was told only "unless it is not state")
    return (f"; your own resume held it otherwise right after your load() at step {lost[0]} "
            f"and after step {lost[0] + 1}, and ends with it as the uninterrupted run did, "
            f"{SET_AGAIN_LATER}: {CHECKPOINT_LOSES}, which no step here showed, {NOT_STATE}, "
            "or the program always sets it anew before a step reads it (a generator seeded "
            "again at each epoch's start)")


def _shifted_lists(named: dict[str, str], reference: dict[str, list[str]],
                   own: dict[str, list[str]]) -> dict[str, str]:
    """Lists whose items are named one by one (``history[0]`` ... ) where the
    program's own resume ends with fewer items, each one of the uninterrupted
    run's, in its order: items went missing, and the others sit at other
    indices (trial 159: a log that lost its first entry read as five items
    ending otherwise and a sixth missing). The list's path -> one line on it."""
    items: dict[str, dict[int, str]] = {}
    for path in named:
        found = _ITEM.match(path)
        if found is not None:
            items.setdefault(found.group(1), {})[int(found.group(2))] = path
    out = {}
    for base, paths in items.items():
        ref = _sequence(base, reference)
        mine = _sequence(base, own)
        if ref is None or mine is None or not mine or len(mine) >= len(ref):
            continue
        kept, j = [], 0
        for i, digests in enumerate(ref):
            if j < len(mine) and mine[j] == digests:
                kept.append(i)
                j += 1
        if j < len(mine) or 0 not in paths:
            continue  # (not the run's items in its order: said item by item)
        missing = [i for i in range(len(ref)) if i not in kept]
        one = len(missing) == 1
        which = ", ".join(f"[{i}]" for i in missing[:6]) + (" ..." if len(missing) > 6 else "")
        prefix = len(missing) > 1 and missing == list(range(len(missing)))
        # (trial 465: "the others sit at other indices" beside a line that said where they
        # sit, or of items that sat where they had)
        shifted = ("" if prefix or all(i == j for j, i in enumerate(kept))
                   else " (the others sit at other indices)")
        if prefix:
            # (trial 164: "without the items at [0], [1], [2], [3], [4], [5] ..." of a log
            # that holds the uninterrupted run's [8..15] at [0..7])
            which = (f"[0..{len(missing) - 1}]: it holds the uninterrupted run's "
                     f"[{len(missing)}..{len(ref) - 1}] at [0..{len(mine) - 1}]")
        head = named[paths[0]].replace(f"{base}[0] (", f"{base} (a list of {len(ref)} items; "
                                       "[0]: ", 1)
        out[base] = (f"{head}; {OWN_RESUME_ENDS_OTHERWISE} than the uninterrupted run did: with "
                     f"{len(mine)} of its {len(ref)} items, each the uninterrupted run's, in its "
                     f"order, and without the item{'' if one else 's'} at {which}{shifted}: "
                     f"{CHECKPOINT_LOSES if one else CHECKPOINT_LOSES[:-2] + 'them'}, "
                     f"{NOT_STATE}")
    return out


def _sequence(base: str, held: dict[str, list[str]]) -> list[list[str]] | None:
    """The digests of ``base``'s items ``[0]``, ``[1]``, ... as ``held`` has
    them, in order (None: it has none, or not from [0] on without a gap)."""
    found = {int(m.group(2)): digests for path, digests in held.items()
             if (m := _ITEM.match(path)) is not None and m.group(1) == base}
    if not found or sorted(found) != list(range(len(found))):
        return None
    return [found[i] for i in range(len(found))]


NOT_STATE = f"{UNLESS_NOT_STATE} (a log, a timer: name it in Target(not_state=...))"
NOT_STATE_OR_CACHE = (f"{UNLESS_NOT_STATE} (a log, a timer, a cache the program fills again "
                      "when it needs it: name it in Target(not_state=...))")
"""``NOT_STATE`` of an entry the own resume ends without, which a cache may
miss harmlessly (a graph's adjacency, made again the same from its seed)."""
"""How a ``Report.undeclared`` entry that a checkpoint loses says it may be no
state, and what to do then (trial 164: the line did not say how)."""


# (a trial: a list of evaluations of an undeclared EMA, saved and loaded, ended
# otherwise because the EMA it is computed from was lost, and was said lost by
# the checkpoint that kept it)
_NOT_LOST_BY_THE_LOAD = (
    f"; {OWN_RESUME_ENDS_OTHERWISE} than the uninterrupted run did, though it held it as that "
    "run did right after your load() at {steps}, so the load is not what lost it: the steps "
    "since made it otherwise, from other state they read that is not compared")
_UNCOMPARED_SOURCE = "from other state they read that is not compared"


def _held_otherwise_at(path: str, run: RunResult, how: tuple[int, bool, bool],
                       ends_alike: bool,
                       held: tuple[dict[int, dict[str, list[str]]] | None,
                                   dict[int, dict[str, list[str]]] | None,
                                   dict[str, list[str]] | None]) -> str:
    """``_held_otherwise_text`` of ``path``, held otherwise right after the
    load at ``k`` (``how``: k, lost, every step matching), at each restore where
    it was, and whether the load set it to neither the saved value nor a build's
    (``held``: the reference's and the own resume's digests after each step,
    and the build's)."""
    (k, lost, ends_only), (reference_after, own_after, built) = how, held
    # (a trial: a counter lost at both restores of 6,11 was named at 11 only)
    at = [j for j in run.resume_at if j == k or _lost_at(
        path, j, run.first_divergent_step, reference_after, own_after)]
    # (trial 874: what the load set, to neither the saved value nor a build's)
    set_by_load = (own_after or {}).get(k, {}).get(path) not in (None, (built or {}).get(path))
    return _held_otherwise_text(run, k, at, lost, ends_only, ends_alike, set_by_load)


def _held_otherwise_text(run: RunResult, k: int, at: list[int], lost: bool,
                         ends_only: bool, ends_alike: bool = False,
                         set_by_load: bool = False) -> str:
    """What a path the program's own resume held otherwise right after its
    load() at ``k`` (and at each of ``at``) says of its checkpoint (``lost``:
    after the next step too; ``ends_only``: every step matched; ``ends_alike``:
    it ends with it as the uninterrupted run did, trial 742: a metric's counts
    that an epoch's end reset were said to end otherwise; ``set_by_load``: the
    load left it as neither the saved value nor a build's)."""
    earlier = _differed_before(run, min(at))
    if earlier:
        return _saved_otherwise_text(earlier, min(at))
    went = _went(run)
    if lost and ends_only:
        ends = (f"ends with it as the uninterrupted run did, {SET_AGAIN_LATER}" if ends_alike
                else "ends with it otherwise")
        return (f"; your own resume held it otherwise right after your load() at "
                f"{steps_text(at)} and after {steps_text([j + 1 for j in at])}, and {ends}, "
                f"every step matching: {CHECKPOINT_LOSES}, {NOT_STATE}")
    if lost:
        # (trial 780: "after step 11, before it departed at step 14" read as alike at 12, 13)
        looked = (" (where the check looks at it)" if run.first_divergent_step is not None
                  and run.first_divergent_step > k + 2 else "")
        return (f"; your own resume held it otherwise right after your load() at step {k} and "
                f"after step {k + 1}{looked}, before it {went} at step "
                f"{run.first_divergent_step}: {CHECKPOINT_LOSES}, {NOT_STATE}")
    confirmed = sorted({f.component for f in run.diagnosis if f.status == CONFIRMED})
    # (trial 145: said beside a stream re-seeded, "and departed" read as the cause)
    departed = (f" (it {went} at the next step, which {', '.join(confirmed)}, confirmed, "
                "explains)" if confirmed else f", and {went} at the next step")
    # (trial 874: labels a load made from an epoch it restored otherwise read as a second
    # loss, whose fix, saving them, changed nothing)
    makers = sorted({f.component for f in run.diagnosis if f.status == CONFIRMED
                     and f.component != RNG and not is_stream_detail(f.detail)}
                    if set_by_load else ())
    follows = (f"{_MADE_FROM}{', '.join(makers)}, which it restored otherwise"
               if makers else "")
    # (trial 859: a running average the steps update read as exempt, "sets it again")
    return (f"; your own resume held it otherwise right after your load() at step {k}"
            f"{departed}: {CHECKPOINT_MAY_LOSE}{follows}, unless the step sets it anew before "
            "reading "
            "it (a value each step overwrites, not one it updates from what it held, as a "
            "running average or a count) (or it is not state, a log, a timer: name it in "
            "Target(not_state=...))")


def _differed_before(run: RunResult, k: int | None) -> list[tuple[str, int]]:
    """The declared components the program's own resume (``run``) restored
    otherwise at a restore before step ``k`` (every restore: None), each
    with the restore, where the finding counts as a lead (not latent, not
    put back, not found not the cause)."""
    quiet = (LATENT, PUT_BACK, NOT_CAUSE, AFTER_DIVERGENCE, LOST_ON_RESAVE)
    # (a trial: a stream the program set right itself in the step after the
    # restore, read by no step while it differed, was offered as what the steps read)
    return list(dict.fromkeys(
        (f.component, f.step) for f in run.diagnosis
        if f.step is not None and (k is None or f.step < k) and f.status not in quiet
        and not righted_only(f.detail) and not unread_only(f.detail)))


def _saved_otherwise_text(earlier: list[tuple[str, int]], k: int) -> str:
    """Why a path held otherwise right after the load at ``k`` says nothing of
    the checkpoint: declared state restored otherwise at an earlier restore,
    which the steps since read, may have made it otherwise before the save at
    ``k`` (a trial: a log of evaluations that a step counter restored one
    ahead at 4 had shifted was said lost by the checkpoint at 10, which kept
    it as the run had it)."""
    said = ", ".join(f"{c} (at the restore at {j})" for c, j in earlier)
    return (f"; your own resume held it otherwise right after your load() at step {k}, but "
            f"declared state differed after an earlier restore, which the steps since read: "
            f"{said}: what your save() kept at step {k} may have been otherwise already, so "
            "this says nothing of your checkpoint (see the diagnosis)")


def _ends_alike_text(path: str, text: str, run: RunResult | None,
                     reference_after: dict[int, dict[str, list[str]]] | None,
                     own_after: dict[int, dict[str, list[str]]] | None,
                     early: Sequence[str]) -> str:
    """What a `not compared` line adds where the program's own resume ends with
    it as the uninterrupted run did (``own_resume_ends``)."""
    return (_healed_text(path, run, reference_after, own_after)
            or _set_again_before_departing(path, text, run, reference_after, own_after, early)
            or _put_back_by_the_load(path, text, run, reference_after, own_after)
            or f"; {OWN_ENDS_ALIKE}")


def _put_back_by_the_load(path: str, text: str, run: RunResult | None,
                          reference_after: dict[int, dict[str, list[str]]] | None,
                          own_after: dict[int, dict[str, list[str]]] | None) -> str | None:
    """Of what is named because the engine's restart held it otherwise for a
    while (``RESTART_HELD_OTHERWISE``), where the program's own resume held it
    as the uninterrupted run did right after each load() and ends with it so:
    its load() puts it back (trial 506: a best loss read "your own resume ends
    with it as the uninterrupted run did" beside a restart that lost it and
    ended alike all the same, and the user could not tell whether the
    checkpoint kept it). None: not so, or not seen."""
    if run is None or RESTART_HELD_OTHERWISE not in text or not _held_alike_after_loads(
            path, run, reference_after, own_after):
        return None
    return (f"; your own resume held it as the uninterrupted run did right after your load() "
            f"at {steps_text(run.resume_at)}, and ends with it so: your load() puts it back")


def _held_alike_after_loads(path: str, run: RunResult,
                            reference_after: dict[int, dict[str, list[str]]] | None,
                            own_after: dict[int, dict[str, list[str]]] | None) -> bool:
    """Whether the program's own resume (``run``) held ``path`` as the
    uninterrupted run did right after each of its load()s (both digested there)."""
    mine, there = own_after or {}, reference_after or {}
    return bool(run.resume_at) and all(
        path in mine.get(k, {}) and mine[k][path] == there.get(k, {}).get(path)
        for k in run.resume_at)


# (trial 831: a position's load_state_dict() that skipped its epoch's read batches without
# reading them: the workers' streams started over, and the row said only the two others)
_NOT_CAPTURED = ("; the engine restored every declared component: they do not capture the "
                 "program's state (undeclared state, state consumed after the restore, or a "
                 "load_state_dict() that brings back its state but not what it makes from it: "
                 "an iterator that skips the batches its epoch read without reading them)")
_NOT_CAPTURED_SAID = re.compile(
    f"{re.escape(_NOT_CAPTURED)}|{re.escape(_NOT_CAPTURED.split(':')[0])}, through [^;]*?"
    f"{re.escape(LOOP_GOES_ON)}")
"""``_NOT_CAPTURED``, or as a framework target words it (``_its_words``)."""


_END_ONLY_GUESSES = re.compile(
    r"; (one step behind: |0, as a fresh scheduler has it: |(no declared component's state "
    r"\(what it saves\) differs|what differs in the declared components) right after )[^;]*")
"""The general causes a why offers for a scheduler one step behind at the end,
with every step alike (``state_diff``'s, ``evidence._end_only_lead``'s)."""


def note_validation_not_run_again(own: RunResult, validated_after: Sequence[int]) -> None:
    """Where the uninterrupted run's framework loop validated after a step at
    which the program's own resume restarts, and that resume departs: say that
    a resume from a checkpoint written at that batch's end does not validate
    again (a trial's plateau scheduler, stepped by the validation's metric,
    was one step behind, and the why named undeclared state)."""
    at = [k for k in own.resume_at if k in set(validated_after)]
    # (only a run that departs in a step: a trial's end-state-only stream read it; or
    # that fails, trial 249: an EarlyStopping at the epoch's end found no metric; or
    # whose end differs in a scheduler, trial 463's plateau one step behind)
    failed = own.verdict == FAILED
    scheduler_ends = own.verdict == DIVERGED and any(
        SCHEDULER in split_rank_name(name)[0] for name in own.ended_otherwise)
    if at and (failed or scheduler_ends or own.verdict == DIVERGED and not steps_match(own)):
        if scheduler_ends and steps_match(own):  # (the cause found: not the general guesses)
            own.explanation = _END_ONLY_GUESSES.sub("", own.explanation)
        own.explanation = _NOT_CAPTURED_SAID.sub("", own.explanation) + (
            f"; the uninterrupted run validated after {steps_text(at)}, where this resume's "
            f"checkpoint was written, at that batch's end: {NOT_VALIDATED_AGAIN}, so what the "
            "validation changes (a scheduler stepped on a validation metric, an EarlyStopping "
            "count, a best score) differs from there"
            + (", and what reads its metric there finds none (EarlyStopping, a plateau "
               "scheduler: `... conditioned on metric ... which is not available`)"
               if failed else "")
            + "; a checkpoint written after the validation, or a resume point without one, "
            "does not")


def note_rate_moved_after_save(run: RunResult, moved_after: Sequence[int],
                               plateau_after: Sequence[int] = ()) -> None:
    """Where the uninterrupted run's learning rate changed after the step at
    which a resume's checkpoint was written and before the next step began
    (a framework loop's code after its checkpoint hook: a LightningModule's
    own on_train_batch_end runs after the callbacks', ModelCheckpoint's
    save among them), and that resume's rate is the first thing to differ:
    say so, in place of the leads that name undeclared state (trial 130's
    module stepped its scheduler there; the why named undeclared state and
    a schedule's own settings). ``plateau_after``: where a plateau scheduler's
    counts moved there, its rate with them or not (trial 605: Lightning steps one of
    interval "step" after on_train_batch_end, and the WARNING named the
    epoch-end step of a scheduler stepped per epoch)."""
    plateau = [k for k in run.resume_at if k in set(plateau_after)]
    at = [k for k in run.resume_at if k in set(moved_after) and k not in plateau]
    if not ((at or plateau) and run.verdict == DIVERGED and not steps_match(run)
            and split_rank_name(run.first_divergent_key or "")[0] == "lr"):
        return
    text = _without_undeclared_leads(_NOT_CAPTURED_SAID.sub("", run.explanation))
    noise = min((i for i in (text.find(m) for m in _NOISE_MARKS) if i >= 0), default=len(text))
    if not at:
        run.explanation = text[:noise] + PLATEAU_AFTER_SAVE.format(steps_text(plateau)) \
            + text[noise:]
        return
    run.explanation = text[:noise] + (
        f"; in the uninterrupted run the learning rate changed after the checkpoint of "
        f"{steps_text(at)} was written and before the next step began (code that runs after "
        "the checkpoint is written: a LightningModule's own on_train_batch_end runs after the "
        "callbacks', where the checkpoint is saved), and the restart does not change it again: "
        "a scheduler stepped there is saved one step behind; step it where the checkpoint sees "
        "it (the scheduler's own interval, or a callback's on_train_batch_end placed before "
        "the checkpoint's)") + text[noise:]


PLATEAU_AFTER_SAVE = (
    f"; in the uninterrupted run {PLATEAU_MARK}, "
    "and lowered the rate where that step was its last bad one, after the checkpoint of {} was "
    "written and before the next step began (Lightning steps "
    "one of interval \"step\" after on_train_batch_end, where a step's checkpoint is written: "
    "ModelCheckpoint's, and the engine's restarts too), and the restart does not count it "
    "again: saved one update behind, it lowers the rate at another step, whatever the "
    "checkpoint keeps; checkpoints at an epoch's end, or the plateau stepped by code of "
    "yours before the checkpoint is written, resume without that lag")
"""How a resume's why says a plateau scheduler was saved one update behind
(``note_rate_moved_after_save``); ``{}``: the resume points."""


def note_data_not_skipped(own: RunResult, setting: str | None) -> None:
    """Where the framework's resume was told not to skip the batches its epoch
    had consumed (``setting``: the Trainer's ``ignore_data_skip=True``) and the
    program's own resume differs first in its data: say so, in place of the
    leads that name undeclared state (a trial's Trainer row opened with those,
    then the stream the new iterator drew)."""
    key = split_rank_name(own.first_divergent_key or "")[0].split(":")[0]
    if not (setting and own.checkpoint == "program" and not own.dropped
            and own.verdict == DIVERGED and key in ("data", "inputs")):
        return
    own.explanation = _without_undeclared_leads(own.explanation).replace(
        f"differs from step {own.first_divergent_step}",
        f"differs from step {own.first_divergent_step}; the resume was told `{setting}`: it "
        "does not skip the batches the run had already read in its epoch, and reads that "
        "epoch again from its start (leave it out to resume where the run was)", 1)
    # (trial 143: the streams' lines offered advice on making iterators)
    own.stream_offsets = [replace(o, detail=_here_first(
        o.detail, f"the epoch read again from its start, as `{setting}` asks"))
        for o in own.stream_offsets]


def note_data_not_resumable(own: RunResult, loader: str | None, framework: str | None) -> None:
    """Where the framework's training loader keeps no place in its epoch
    (``loader``: ``a DataLoader``, ``BuiltProgram.boundaries``) and a full
    resume (the program's own, or the engine's: both go through the
    framework's restore) reads its epoch again from its start: say why (trial
    267: a Lightning program with a plain DataLoader was told of undeclared state)."""
    if not (loader and framework and not own.dropped
            and own.verdict == DIVERGED and EPOCH_AGAIN in (own.divergence_detail or "")):
        return
    name = framework_name(framework)
    said = unused_position(own.explanation)  # (the fit loop's counters came back: no lead)
    text = own.explanation.replace(f"; {said}", "", 1) if said else own.explanation
    own.explanation = _without_undeclared_leads(text) + (
        f"; {name} {NOT_RESUMABLE} (state_dict() and load_state_dict(): torchdata's "
        f"StatefulDataLoader), and yours is {loader}: a resume inside an epoch reads that "
        f"epoch again from its start ({name} warns that it is not resumable), unless code of "
        "yours puts the place back (a callback's or a datamodule's load_state_dict() that sets "
        "its sampler's position: then what it keeps is what to look at)")


def note_lengthless(run: RunResult, dataset: str | None, framework: str | None) -> None:
    """Where the framework's training data has no length (``dataset``:
    ``TrainerProgram.data_lengthless``) and a full resume departs in its data:
    say why, in place of the leads that name undeclared state (trial 363: past
    its first epoch a Trainer's resume over a streaming dataset read another
    epoch's batches, and the report blamed the dataset's epoch counter)."""
    key = split_rank_name(run.first_divergent_key or "")[0].split(":")[0]
    if not (dataset and framework and not run.dropped and run.verdict == DIVERGED
            and key in ("data", "inputs")):
        return
    name = framework_name(framework)
    run.explanation = _without_undeclared_leads(run.explanation) + (
        f"; {dataset}, so {name} {SKIPS_BLIND}: its resume skips global_step × "
        "gradient_accumulation_steps batches from the first epoch's start, which after the "
        "first epoch's end is not where the run was (a dataset that streams must put its own "
        "place back: it is given its epoch through set_epoch, not the batches read in it)")


def note_order_before_restore(own: RunResult, sampler: str | None, restored_by: str | None,
                              per_epoch: float | None) -> None:
    """Where the framework's sampler shuffles each epoch from torch's global
    stream as it makes the epoch's iterator, which a resumed framework makes
    before it restores that stream (``sampler``: the Trainer's
    ``order_before_restore``), and the program's own resume, restored inside
    an epoch after the first, departs in its data at the first step after the
    restore: say so, in place of the leads that name undeclared state (trial
    229: a collator's generator, reseeded from the batch, was blamed)."""
    k = own.resume_at[0] if own.resume_at else None
    if not (sampler and per_epoch and own.checkpoint == "program" and not own.dropped
            and k is not None and (k / per_epoch) % 1 != 0 and k > per_epoch
            and own.verdict == DIVERGED and own.first_divergent_step == k + 1
            and (own.first_divergent_quantity or "").startswith("data")):
        return
    own.explanation = _without_undeclared_leads(own.explanation).replace(
        f"differs from step {k + 1}",
        f"differs from step {k + 1}; {ORDER_BEFORE_RESTORE}: {sampler} shuffles from torch's "
        f"global stream as an epoch's iterator is made, and {restored_by or 'the restore'} "
        "makes the resumed epoch's iterator before it puts that stream back, so an epoch "
        "after the first is shuffled from the stream as the restart left it, not as the "
        "uninterrupted run had it when that epoch began: it reads other samples (resume at "
        "an epoch's end, where the streams come back first, or shuffle with a sampler seeded "
        "by the epoch)", 1)


def note_draws_before_restore(own: RunResult, streams: Sequence[str],
                              restored_by: str | None, per_epoch: float | None) -> None:
    """Where the framework fetches a resumed step's batches before it restores
    the global streams its data collator or dataset draws from (``streams``:
    the Trainer's ``draws_before_restore``; it does so resuming inside an
    epoch, ``per_epoch`` steps to one) and the program's own resume departs at
    the first step after the restore: say so, in place of the leads that name
    undeclared state (trial 142: a collator masking with torch's stream was
    told of samplers, iterators and counters). Data of no known epochs (an
    endless IterableDataset, trial 292) is inside one wherever it resumes,
    where its first difference is what the batches hold."""
    k = own.resume_at[0] if own.resume_at else None
    inside = (k / per_epoch) % 1 != 0 if per_epoch and k is not None else (
        per_epoch is None and split_rank_name(own.first_divergent_key or "")[0].startswith(
            ("data", "inputs")))
    if not (streams and inside and own.checkpoint == "program" and not own.dropped
            and k is not None and own.verdict == DIVERGED and own.first_divergent_step == k + 1):
        return
    own.explanation = _without_undeclared_leads(own.explanation).replace(
        f"differs from step {k + 1}",
        f"differs from step {k + 1}; its batches were {FETCHED_BEFORE_RESTORE}: your data "
        f"collator (or dataset) draws from {global_streams(streams)} as a step's batches are "
        f"fetched, and {restored_by or 'the restore'} puts that stream back only after it "
        f"fetched step {k + 1}'s, so they are drawn from the stream as the restart left it, "
        # (trial 400 kept a collator's generator in its checkpoint, saved a batch ahead of
        # the step as the loader collates ahead, and resumed otherwise all the same)
        "not as the checkpoint saved it (draw from a generator seeded again from the batch "
        "itself, the epoch and the sample's index: one your checkpoint keeps is saved after the "
        "loader collated the next batch, a batch ahead)", 1)
    # (trial 143: the streams' lines still offered a dropout layer and a branch)
    own.stream_offsets = [replace(o, detail=_here_first(
        o.detail, "the batches fetched before the restore drew from it"))
        for o in own.stream_offsets]


def _here_first(detail: str, here: str) -> str:
    """A stream line's ``detail`` with what the why found to be the cause here
    put before the general causes (trial 443 read a dropout layer left in eval
    mode and a loader set back to an epoch's start before it, at the line's end)."""
    at = detail.find("): ", max(0, detail.find(" at the start of step ")))
    if at < 0:
        return f"{detail} (here: {here}, see the why)"
    return f"{detail[:at + 1]}: here, {here} (see the why); in general, {detail[at + 3:]}"


_UNDECLARED_LEADS = (
    re.compile(r": what it leaves different is [^;]*?(between the load and the first step|"
               r"more than the uninterrupted run's)"),
    re.compile(r"; the learning rate is the first to differ: .*?a count it keeps(; or [^;]*?'s "
               r"loop, which after a resume may step a scheduler otherwise than the "
               r"uninterrupted run \([^)]*\))?"),
)
"""The leads a departed resume's why gives where no declared component differs
(``UNDECLARED_LEAD``, ``_RATE_FIRST``), in whichever words the restore took."""


def _without_undeclared_leads(text: str) -> str:
    """A why without ``_UNDECLARED_LEADS``, where a note names the cause instead."""
    for leads in _UNDECLARED_LEADS:
        text = leads.sub("", text)
    return text

_NOISE_MARKS = ("; loss stays within", "; loss leaves", "; nothing in the training loss")


def note_confirmed_blind_spots(runs: list[RunResult]) -> None:
    """A blind spot (an ablation that changed no step) whose dropped component
    is confirmed as the cause of the full resume's departure says so: dropping
    it leaves a fresh build's state, which matched here; the full resume's
    restore gave it otherwise."""
    confirmed = confirmed_causes(next((r for r in runs if not r.dropped), None))
    for run in runs:
        caused = [c for c in run.dropped if c in confirmed]
        if run.blind_spot and caused:
            # (trial 414: "leaves a fresh build's" of a generator that another declared
            # component put back, where a fresh build held it otherwise)
            run.explanation += (f"; {CAUSE_YET_BLIND}: dropping {', '.join(caused)} from the "
                                "engine's restore leaves it as a fresh build makes it, or as "
                                "another declared component puts it back, which this run held "
                                "as the uninterrupted run did")


def note_lost_uncompared(own: RunResult, undeclared: list[str]) -> None:
    """Where the program's own full resume diverged and what is not compared
    shows its checkpoint losing state, say so in that resume's why (a trial:
    a field a component's state_dict() left out was named only in the
    WARNING and its line below, while the why read "restored state differs
    in rng", a stream the program had set right itself)."""
    if own.checkpoint != "program":
        return
    ended = lost_uncompared(undeclared)
    if own.verdict in (IDENTICAL, CLOSE) and ended:
        # (trial 161: "resumes bit for bit: every step ... match" in the row of a resume
        # whose headline said that its checkpoint likely loses state)
        own.explanation += ("; not compared, and it ends otherwise with: "
                            + paths_said(ended) + f" {UNCOMPARED_SEE}")
    if own.verdict != DIVERGED:
        return
    at = f"differs from step {own.first_divergent_step}"
    # (trial 154: a module counter and a generator, named in the WARNING, not in the why)
    notes: list[str] = []
    said: set[str] = set()  # (each path once, by the first that fits)
    # (trial 404: a stream's generator, made anew from a saved count and ending
    # elsewhere for a buffer the load lost, led before the buffer: a position last)
    for phrase, marks in ((CHECKPOINT_LOSES, (f": {CHECKPOINT_LOSES}",)),
                          (_UNHELD, (f": {MODULE_LEVEL}",)),
                          (_GRADS_UNHELD, (GRADS_SUMMED,)),
                          (CHECKPOINT_MAY_LOSE, (f": {CHECKPOINT_MAY_LOSE}",)),
                          (UNHELD_POSITION, (GENERATOR_POSITION,))):
        # (trial 519: a loader's generator that seeds no worker, which changes no step,
        # was listed first as what the checkpoint may lose, beside a lost warm-up count)
        # (trial 570: a log of the loss led, before the callback's lost level: last)
        lost = [p for what in sorted(undeclared, key=lambda what: LOSS_LOG in what)
                if any(mark in what for mark in marks)
                and IDLE_SEED not in what and (p := uncompared_path(what)) not in said]
        said.update(lost)
        unless = unless_not_state(undeclared, lost) if phrase == CHECKPOINT_LOSES else ""
        if lost and phrase == CHECKPOINT_MAY_LOSE and all(
                _MADE_FROM in what for what in undeclared
                if uncompared_path(what) in lost):
            unless = ", or it follows from the confirmed cause"
        if lost:
            notes.append(f"not compared, and {phrase}{unless}: {paths_said(lost)} "
                         f"{UNCOMPARED_SEE}")
    note = "; ".join(notes)
    if note:  # (trial 542: a lead found, the clause for a run with none goes)
        own.explanation = own.explanation.replace(SAMPLES_STAND_FOR_DATA, "")
    if note and not own.diagnosis and at in own.explanation:
        # (trial 152: the note came last, after a list of samplers and iterators)
        own.explanation = _said_after(_without_undeclared_leads(own.explanation), at, note)
    elif note and at in own.explanation and not any(
            f.status in (CONFIRMED, LIKELY) for f in own.diagnosis):
        # (trial 599: a stream one draw behind, unjudged, which the correct twin had too,
        # led "restored state differs in rng" before the callback's lost epoch)
        own.explanation = _said_after(own.explanation, at, note)
    elif note:  # (trial 580: after a confirmed cause, a lost log read as a second cause)
        besides = any(f.status == CONFIRMED for f in own.diagnosis)
        own.explanation += f"; {'apart from that, ' if besides else ''}{note}"
    _note_drawn(own, undeclared)


def _said_after(text: str, at: str, note: str) -> str:
    """``text`` with ``; note`` after its first ``at`` and the parentheses that
    follow it, which qualify it (trial 611: "differs from step 11; not
    compared, ... (see `not compared`) (the loss from step 12)" read the loss's
    step as said of what was not compared)."""
    start = text.find(at)
    if start < 0:
        return text
    end = start + len(at)
    while text.startswith(" (", end):
        depth, i = 0, end + 1
        for i in range(end + 1, len(text)):
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            if depth == 0:
                break
        if depth:
            break
        end = i + 1
    return f"{text[:end]}; {note}{text[end:]}"


def _note_drawn(own: RunResult, undeclared: list[str]) -> None:
    """A departed own resume with no lead: a random generator the run drew
    from and no declared component holds leads its why."""
    # (trial 160: a generator the own resume ended with as the uninterrupted run did,
    # restored by the program, led the why before the epoch it lost)
    drawn = [uncompared_path(what) for what in undeclared
             if _UNHELD_GENERATOR.search(what) and OWN_ENDS_ALIKE not in what]
    if drawn and not own.diagnosis and ORDER_BEFORE_RESTORE not in own.explanation:
        # (trial 142: a collator's own torch.Generator, named in `not compared`, left the
        # why listing samplers, iterators and counters)
        listed = ", ".join(f"`{p}`" for p in drawn)
        own.explanation = _without_undeclared_leads(own.explanation).replace(
            f"differs from step {own.first_divergent_step}",
            f"differs from step {own.first_divergent_step}; a random generator the run drew "
            f"from and no declared component holds: {listed} (see `not compared`)", 1)


def _engine_undeclared(runs: Sequence[RunResult], undeclared: list[str]) -> None:
    """Where the engine's own full resume departs and the `not compared` lines
    name state the program keeps outside its components, its why points at
    them in place of the guess that the model's inputs, not compared, differ
    (``SAMPLES_STAND_FOR_DATA``; trial 597: a scheduled-sampling counter no
    component declared, named in the WARNING, and the why sent the user to
    take `samples` out of a StepOutput whose inputs were the samples)."""
    named = [uncompared_path(what) for what in undeclared
             if IDLE_SEED not in what and LOSS_LOG not in what]
    for run in runs:
        if run.checkpoint == "engine" and not run.dropped and named \
                and SAMPLES_STAND_FOR_DATA in run.explanation:
            run.explanation = run.explanation.replace(
                SAMPLES_STAND_FOR_DATA, f"; what no declared component holds: "
                f"{paths_said(named[:3])}{' and more' if len(named) > 3 else ''} (see "
                "`not compared`)")


def note_uncompared_leads(runs: Sequence[RunResult], undeclared: list[str]) -> None:
    """The full resumes' whys, where the `not compared` lines (``undeclared``)
    hold their likelier cause: ``_position_fields``, ``_engine_undeclared``."""
    _position_fields(runs, undeclared)
    _engine_undeclared(runs, undeclared)


def _position_fields(runs: Sequence[RunResult], undeclared: list[str]) -> None:
    """Where the declared data position's own fields are not set back by its
    restore (its state_dict() leaves them out), a full resume's why says its
    state came back without them, the likeliest cause, in place of the guesses
    of ``POSITION_UNUSED`` (trial 602: a shuffle buffer's generator left out
    was followed by "a position saved where the run was not", which was
    exact). The program's own resume, where its why names them as lost."""
    fields = [uncompared_path(what) for what in undeclared if NOT_SET_BACK in what]
    for run in runs:
        said = unused_position(run.explanation) if not run.dropped else None
        names = position_named(said) if said is not None else None
        if said is None or names is None or run.verdict != DIVERGED:
            continue
        own = [p for p in fields if f"`{p.split('.')[0]}`" in names
               and (run.checkpoint == "engine" or f"`{p}`" in run.explanation)]
        if own:
            run.explanation = run.explanation.replace(
                said, POSITION_FIELDS_LEFT.format(names, paths_said(own)), 1)


OWN_ENDS_ALIKE = "your own resume ends with it as the uninterrupted run did"
"""How a ``Report.undeclared`` entry says the program's own resume ends with it
alike (``own_resume_ends``)."""

_UNHELD = "it is kept where no checkpoint of yours holds it"
"""How a departed own resume's why names module-level state (``note_lost_uncompared``)."""
_GRADS_UNHELD = ("no state_dict() holds them (a parameter's .grad): they come back only where "
                 "your save() writes them and your load() sets them")
"""The same of summed gradients (trial 868: a checkpoint that held them, whose load
emptied them, read "kept where no checkpoint of yours holds it")."""

_UNHELD_GENERATOR = re.compile(rf"\((?:a torch|a numpy) Generator {GENERATOR_CHANGED}")
"""How a ``Report.undeclared`` entry opens for a generator no component holds."""


def steps_text(steps: Sequence[int]) -> str:
    """``step 6``, ``steps 6 and 11``, ``steps 3, 6 and 11``."""
    if len(steps) == 1:
        return f"step {steps[0]}"
    return f"steps {', '.join(map(str, steps[:-1]))} and {steps[-1]}"


def _went(run: RunResult) -> str:
    """How a resume that did not match ended, in words: a run that raised or
    hung without departing first ``failed`` (a trial read "departed" of both)."""
    if run.verdict == FAILED and not run.first_divergent_key:
        return "failed"
    return "departed from the uninterrupted run"


def _restore_before(run: RunResult) -> int | None:
    """The last restore before a run departed (a trial's second restore, right
    before the departure, was read as its first, long before it)."""
    departed = run.first_divergent_step
    if departed is None:
        return None
    return max((k for k in run.resume_at if k < departed), default=None)


def _lost_by_the_load(path: str, run: RunResult,
                      reference_after: dict[int, dict[str, list[str]]] | None,
                      own_after: dict[int, dict[str, list[str]]] | None,
                      early: Sequence[str] = ()) -> bool | None:
    """Whether the program's own resume (``run``) held ``path`` otherwise
    than the uninterrupted run did right after its load() (None: not, or not
    known) and, when its first step came before it departed, after that step
    too (True; False: it departed at that step, so only the load is seen).
    Not held at all right after the load counts only where it is held
    otherwise after that step.
    What the program sets again as it steps (a sampler's epoch) is right
    after that step; what follows from other lost state (a stage computed
    from a lost counter) was right after the load. Seen otherwise only right
    after the load, a path under one of ``early`` is no evidence: None (paths a
    framework runs on the first resumed batch before the state right after its
    restore is looked at, ``BuiltProgram.boundaries``)."""
    k = _restore_before(run)
    lost = _lost_at(path, k, run.first_divergent_step, reference_after, own_after)
    if lost is False and under_roots(path, early) and not steady_across(
            path, k, reference_after, own_after):
        return None
    return lost


def steady_across(path: str, k: int | None,
                  reference_after: dict[int, dict[str, list[str]]] | None,
                  after: dict[int, dict[str, list[str]]] | None) -> bool:
    """Whether the uninterrupted run held ``path`` alike right after step ``k``
    and after step k + 1, and a restart's look right after its restore at ``k``
    (``after``) found it: held otherwise there, it is no scratch that the first
    resumed batch remade before the look (trial 443: a collator's epoch, taken
    as the run's and never named, where its loss was the cause)."""
    ref, looked = (reference_after or {}), (after or {}).get(k or 0, {})
    return (k is not None and path in looked and path in ref.get(k, {})
            and ref.get(k + 1, {}).get(path) == ref[k][path])


def _lost_at(path: str, k: int | None, departed: int | None,
             reference_after: dict[int, dict[str, list[str]]] | None,
             own_after: dict[int, dict[str, list[str]]] | None) -> bool | None:
    """``_lost_by_the_load`` at the restore at ``k`` of a run that departed
    at step ``departed`` (its end, where only its end state differs)."""
    if departed is None or k is None:
        return None

    def otherwise(step: int, held: bool = True) -> bool:
        return _otherwise_at(path, step, reference_after, own_after, held)

    if otherwise(k):
        if k + 1 < departed:  # (held alike after that step: set again, not lost)
            return True if otherwise(k + 1) else None
        if _alike_at(path, k + 1, reference_after, own_after):
            # (trial 448: a sampler's `started` flag, which its load sets to False and its
            # first step to True, read "may lose it" beside a departure it had no part in:
            # held alike after the step it departed at, that step set it again)
            return None
        return False
    # Not held at all right after the load (a trial: an optimizer the load
    # left without state holds nothing to digest): so is what a step makes
    # later (the last batch), so only where it differs after that step too;
    # where the run departs at that very step, only the load is seen, as above
    # (trial 178: a cache entry the load lost, made again by drawing, read
    # "says nothing of your checkpoint")
    if otherwise(k, held=False):
        if k + 1 < departed:  # (trial 526: a number None after the load and the next step)
            return True if otherwise(k + 1, held=False) else None
        # (trial 517: an environment's state, unset after the load and set by the reset
        # that begins every step, read "may lose it" before the lost normaliser)
        return None if _alike_at(path, k + 1, reference_after, own_after) else False
    return None


def _alike_at(path: str, step: int, reference_after: dict[int, dict[str, list[str]]] | None,
              own_after: dict[int, dict[str, list[str]]] | None) -> bool:
    """Whether the program's own resume held ``path`` after ``step`` as the
    uninterrupted run did (both hold it there)."""
    mine, there = (own_after or {}).get(step, {}), (reference_after or {}).get(step, {})
    return path in mine and path in there and mine[path] == there[path]


def _otherwise_at(path: str, step: int,
                  reference_after: dict[int, dict[str, list[str]]] | None,
                  own_after: dict[int, dict[str, list[str]]] | None, held: bool = True) -> bool:
    """Whether the program's own resume held ``path`` otherwise than the
    uninterrupted run after ``step`` (``held``: it holds it there at all)."""
    if step not in (own_after or {}):
        return False
    mine = (own_after or {})[step]
    there = (reference_after or {}).get(step, {})
    return path in there and (path in mine or not held) and mine.get(path) != there[path]


def _set_again_before_departing(
        path: str, text: str, run: RunResult | None,
        reference_after: dict[int, dict[str, list[str]]] | None,
        own_after: dict[int, dict[str, list[str]]] | None, early: Sequence[str]) -> str | None:
    """Of what a departed own resume ends with as the uninterrupted run did:
    that it held it otherwise right after its load() and alike after the next
    step, before it departed (trial 221: a plateau callback's patience counter,
    lost with its best loss, which the next step set to 0 in both runs, read
    only "ends with it as the uninterrupted run did"). None: not so, not seen,
    or a path a framework runs on before its restore is looked at (``early``); nor
    a random generator (``text``, its line: trial 251's, seeded again from the
    epoch by the load and drawn by the first step's new iterator, read "may lose
    it" beside the real cause)."""
    if GENERATOR_CHANGED in text:
        return None
    departed = run.first_divergent_step if run is not None else None
    k = _restore_before(run) if run is not None else None
    if run is None or departed is None or k is None or k + 1 >= departed or under_roots(
            path, early):
        return None
    if not _otherwise_at(path, k, reference_after, own_after) or _otherwise_at(
            path, k + 1, reference_after, own_after):
        return None
    return (f"; your own resume held it otherwise right after your load() at step {k}, and as "
            f"the uninterrupted run after step {k + 1}, before it {_went(run)} at step "
            f"{departed}: {CHECKPOINT_MAY_LOSE}, unless the program sets it again as it steps "
            "(or it is not state, a log, a timer: name it in Target(not_state=...)); it ends "
            "with it as the uninterrupted run did")


def settle_findings(ref: Reference, result: RunResult, outcomes: dict[int, bool | None],
                    put_back: set[str] | frozenset[str] = frozenset(),
                    unreached: dict[str, list[str]] | None = None,
                    moved: set[int] | frozenset[int] = frozenset(),
                    next_draws: dict[str, int] | None = None) -> None:
    """Give each finding a status: is the difference the cause?

    Those the run never departs after are ``latent`` (with the step from
    which they would matter, when the program's boundaries tell, or for
    random state the reference's draws: ``next_draws``), unless the program
    put them back itself (``put_back``: random state that ends as the
    reference's, ``streams_put_back``; a mode, ``modes_put_back``, even where
    the run departs, if its rerun changed nothing): no gap. A scheduler's or
    an optimizer's rerun where the rate departs first is no evidence. Those
    tried by a rerun (``outcomes``: finding index -> the rerun helped) are
    ``confirmed`` or ``not_cause``; but settings (``config``) are read at
    build too, so a rerun that does not help them is no evidence either
    way: not judged. Nor is a data loader whose rerun did not help when the
    program kept an iterator it had made from it before it was put right
    (``outcomes`` None; ``unreached``: where the program keeps it): the
    state put in may not have reached that iterator; the finding says so.
    A finding of random state whose rerun did not help but changed the run
    all the same (``moved``: its steps differ from the run's own; nothing was
    confirmed) is not "not the cause": it matters, beside something else that
    differs too (not judged; the finding says so). The rest keep their status."""
    if result.verdict == FAILED:
        return
    never_departs = departure(result) is None
    # (every step matched, only the end state differs: random state that ends as the
    # reference's was put back all the same; a trial's replayed loader generator)
    put_back_too = never_departs or steps_match(result)
    judged = []
    for i, finding in enumerate(result.diagnosis):
        if finding.status == AFTER_DIVERGENCE:
            judged.append(finding)
        elif finding.component in put_back and (put_back_too or outcomes.get(i) is False):
            judged.append(_put_back(ref, finding))
        elif never_departs:
            judged.append(replace(finding, status=LATENT, confirmed=False,
                                  matters_from=matters_from(ref, finding, next_draws or {})))
        elif finding.status == LATENT:  # (streams the reference never drew from: diagnose)
            judged.append(replace(finding, confirmed=False))
        elif outcomes.get(i, False) is None and not _global_streams_only(finding):  # (says why)
            judged.append(replace(finding, detail=finding.detail + (
                _FROZEN_RERUN if frozen_in(finding) else _REBOUND_RERUN if rebound_in(finding)
                else _unreached_text(
                    finding.component, (unreached or {}).get(finding.component, []),
                    is_stream_detail(finding.detail)))))
        elif i in moved:  # (never one that helped: see _Confirmations.settle)
            judged.append(replace(finding, detail=_matters_with_others(result, finding)))
        elif i in outcomes and not outcomes[i] and _rate_made_anew(result, finding):
            judged.append(replace(finding, detail=_rate_rerun_text(result, finding, outcomes)))
        elif i in outcomes and (outcomes[i] or finding.component != CONFIG):
            judged.append(replace(finding, status=CONFIRMED if outcomes[i] else NOT_CAUSE,
                                  confirmed=bool(outcomes[i])))
        else:
            judged.append(_settings_unjudged(finding, outcomes.get(i)))
    result.diagnosis = _causes_first(_epoch_end_positions(ref, judged))
    result.latent_gaps += list(dict.fromkeys(
        f.component for f in judged if f.status == LATENT and f.component not in result.latent_gaps))


def positions_in_other_form(ref: Reference, result: RunResult, segments: Segments) -> set[str]:
    """Of an engine's resume (not the program's own, whose save right after its
    load settles it: ``settle_resaved``) whose steps all match: the data
    positions found otherwise right after a restore at an epoch's end, in
    counts alone and no epoch behind, that the run ends with as the reference
    does: a declared position whose own load_state_dict() works the place out
    in its other form (trial 810: the engine's row read "latent gap:
    data_cursor", where the own resume's note said one position)."""
    if result.checkpoint == "program" or not (departure(result) is None
                                              or steps_match(result)):
        return set()
    ends = set(epoch_boundaries(ref.segment.boundaries, ref.steps))
    found = {f.component for f in result.diagnosis if _other_form(f, ends)}
    return _ended_alike(ref, segments, found) if found else set()


def _other_form(f: Finding, ends: set[int]) -> bool:
    """Whether ``f`` may be a data position in its other form: found at an
    epoch's end (``ends``), in counts alone, no epoch behind (``settle_resaved``,
    ``positions_in_other_form``)."""
    return (f.step in ends and split_rank_name(f.component)[0] in (DATA_CURSOR, SAMPLER_EPOCH)
            and _counts_alone(f.detail) and not _epoch_behind(f.component, f.detail))


def _put_back(ref: Reference, finding: Finding) -> Finding:
    """A finding the program put back itself; of random state it set right
    during the step after a restore at an epoch's end, saying that a program
    that seeds a stream anew as each epoch starts puts it back whatever the
    checkpoint held, so whether it holds it shows inside an epoch (trial 656:
    a sampler's generator its checkpoint lost, reseeded at the epoch's start,
    read as put back, and --strict passed)."""
    k, detail = finding.step, finding.detail
    if _other_form(finding, set(epoch_boundaries(ref.segment.boundaries, ref.steps))) \
            and ONE_POSITION not in detail and not is_stream_detail(detail):
        detail = _at_first_restore(detail, f": at an epoch's end, {ONE_POSITION}")
    elif k is not None and righted_only(detail) \
            and k in epoch_boundaries(ref.segment.boundaries, ref.steps):
        # (trial 659: said as a fact of a program that seeds nothing per epoch)
        # (trial 858: "--resume-at 9 shows it" beside a restore at 13, inside an epoch)
        inside = [j for j in map(int, re.findall(r"; at the restore at (\d+)", detail))
                  if j not in epoch_boundaries(ref.segment.boundaries, ref.steps)]
        detail = _at_first_restore(detail, (
            "; at an epoch's end: if your program seeds it anew as each epoch starts, that puts "
            "it back whatever its checkpoint held, and a restart inside an epoch "
            + (f"shows whether the checkpoint holds it: the one at {inside[0]} here"
               if inside else f"(--resume-at {k + 1}) shows whether the checkpoint holds it")))
    return replace(finding, status=PUT_BACK, confirmed=False, detail=detail)


def _at_first_restore(detail: str, clause: str) -> str:
    """``detail`` with ``clause``, which is of the first restore, said right after
    that restore's part, before a later restore's (trial 858: "at the restore at
    13: ...: at an epoch's end, ... one position" read as said of 13, inside an
    epoch)."""
    head, sep, rest = detail.partition("; at the restore at ")
    return head + clause + sep + rest


def resave_findings(ref: Reference, result: RunResult, segments: Segments,
                    is_random: Callable[[Finding], bool]) -> list[int]:
    """The latent findings of a run that never departs that a save right after
    the program's load() can settle (``settle_resaved``): of a component that
    ends as the reference's, bit for bit (one whose end differs in entries
    nothing reads stays a gap: a timer, a private counter); not random state
    (its latency rests on draws, see ``_idle_streams_only``), nor one with a
    known step beyond the run where it would matter, which no rerun reaches."""
    if departure(result) is not None or any(
            f.status == LATENT and is_fit_loop_recount(f) for f in result.diagnosis):
        # (trial 653: at a Lightning epoch's end a save right after the restore counts
        # that epoch's end once more, Lightning's own doing, which a resave would blame
        # on another component; FRAMEWORKS.md says so)
        return []
    candidates = [i for i, f in enumerate(result.diagnosis)
                  if f.status == LATENT and f.step is not None and f.matters_from is None
                  and not is_random(f)]
    alike = _ended_alike(ref, segments, {result.diagnosis[i].component for i in candidates})
    return [i for i in candidates if result.diagnosis[i].component in alike]


_RESAVED_ALIKE = ("your save() right after your load(), and a restart from that checkpoint, "
                  "continue as the uninterrupted run too")
_ONE_POSITION = f": at an epoch's end, {ONE_POSITION}, and {_RESAVED_ALIKE}"
_RATE_SOONER = f": {RATE_SET_SOONER}, and {_RESAVED_ALIKE}"
_ALIKE_HERE = (f"; {_RESAVED_ALIKE}: the same state in another form, or a wrong value this "
               "run's steps happen to set right (a best loss that a later evaluation beats); "
               "other resume points may tell")


_MAY_BE_ONE_POSITION = (": at an epoch's end, the end of one epoch and the start of the next "
                        "may be one position in two forms")
_PART_OF_IT = (": of what differs, only part may be wrong (a place within the epoch, where "
               "the epoch is right in the other form)")
_MORE_ENTRIES = " more entr"  # (state_diff's "(and 1 more entry of its state_dict() differs")


def _causes_first(findings: list[Finding]) -> list[Finding]:
    """``findings``, those a rerun showed are not the cause after the others,
    and a Lightning target's counts of epochs last of all, which its restore of a
    checkpoint taken at an epoch's last batch recounts in a correct resume too
    (trial 659: listed first, before the lost stream; trial 708: a position in
    two forms at an epoch's end, not the cause, listed before the confirmed one)."""
    return sorted(findings, key=lambda f: (is_fit_loop_recount(f), f.status == NOT_CAUSE))


def _epoch_end_positions(ref: Reference, findings: list[Finding]) -> list[Finding]:
    """``findings``, where a data position that is not the cause, found otherwise
    at an epoch's end, says that it may be the same position in another form
    there (trial 395: a failing report listed "batch 0, expected 8" as a
    diagnosis beside the cause, where the report of a resume that passes says
    it is one position)."""
    if not any(f.status == NOT_CAUSE or _differs_again_at(f.detail) or _MORE_ENTRIES in f.detail
               for f in findings):
        return findings
    ends = set(epoch_boundaries(ref.segment.boundaries, ref.steps))
    out = []
    for f in findings:
        if f.step not in ends or _MAY_BE_ONE_POSITION in f.detail or not _positional(f) \
                or "epoch_progress." in f.detail:  # (Lightning's counts: said apart)
            out.append(f)
        elif f.status == NOT_CAUSE:
            out.append(replace(f, detail=f.detail + _MAY_BE_ONE_POSITION))
        elif _differs_again_at(f.detail):  # (trial 416: its first restore's, beside a later one)
            head, sep, rest = f.detail.partition("; at the restore at ")
            out.append(replace(f, detail=head + _MAY_BE_ONE_POSITION + sep + rest))
        elif f.status == CONFIRMED and _MORE_ENTRIES in f.detail:
            # (trial 427: "epoch 1, expected 0 (and 1 more entry ...: seen 1, expected 13)"
            # led with the epoch, which was right in its other form; the count was wrong)
            out.append(replace(f, detail=f.detail + _MAY_BE_ONE_POSITION + _PART_OF_IT))
        elif f.status is None and _MORE_ENTRIES in f.detail:
            # (trial 448: a datamodule's load made {epoch 1, done 6} the next epoch's start,
            # and the WARNING said Lightning's restore did not bring back what it saved)
            out.append(replace(f, detail=f.detail + _MAY_BE_ONE_POSITION))
        else:
            out.append(f)
    return out


def _positional(f: Finding) -> bool:
    """Whether a finding may be of a data position: the data position's or a
    sampler's epoch, or a component of which an epoch and more differ; not
    one whose generators alone differ (trial 498: the two forms of a position
    were offered of a position component's shuffle generators, its epoch and
    batch alike)."""
    if "generator's state" in f.detail and ", expected" not in f.detail.split(" (", 1)[0]:
        return False
    return split_rank_name(f.component)[0] in (DATA_CURSOR, SAMPLER_EPOCH) or bool(
        _MORE_ENTRIES in f.detail and re.search(r"\bepoch\w* [^,;]+, expected", f.detail))


_FIT_LOOP_RESAVED = (
    " (Lightning's own fit-loop progress: restored at an epoch's last batch, it counts that "
    "epoch's end at once, and a checkpoint written before the next batch, then restored, "
    "counts it a second time: current_epoch one ahead from there; no code of yours sets it)")
"""(trial 137: a correct program's epoch-end resume read "loses `data_cursor` on a second
resume", its fuzz always found it; a real Lightning resume from a checkpoint saved in
on_train_start after such a restore ends with current_epoch one ahead, checked by hand)"""


def rates_set_sooner(ref: Reference, result: RunResult, segments: Segments) -> set[int]:
    """The findings of ``result`` (indices) of an optimizer whose learning rates
    alone differ right after a restore, where those rates are the ones the
    uninterrupted run's next step stepped with (trial 798: a load() that sets
    the rate of the epoch its next step belongs to; at an epoch's end that is
    the next epoch's, which the uninterrupted run sets at that step's start).
    ``settle_resaved`` puts them back where a save right after the load
    resumes alike too; a rate no step of the uninterrupted run stepped with
    again (a scheduler stepped once more in the load, read at no later step)
    is not one."""
    restored = {k: seg.restored_state for k, seg in segments if seg.restored_state}
    out = set()
    for i, f in enumerate(result.diagnosis):
        path = restored.get(f.step) if f.step is not None else None
        if path is None or LEARNING_RATE_ONLY.removesuffix(SCHEDULER_LOST) not in f.detail:
            continue
        state = load_checkpoint(path, read_only=True)["components"].get(f.component)
        groups = state.get("param_groups") if isinstance(state, dict) else None
        nxt = next((r for r in ref.segment.records if r.step == (f.step or 0) + 1), None)
        if not isinstance(groups, list) or nxt is None or not nxt.lr:
            continue
        rates = [rate for rate, whose in zip(nxt.lr, nxt.lr_of or [f.component] * len(nxt.lr))
                 if whose == f.component]
        if rates and rates == [g.get("lr") for g in groups if isinstance(g, dict)]:
            out.add(i)
    return out


def settle_resaved(ref: Reference, result: RunResult, found: list[int],
                   cmp: Comparison | None, sooner: set[int] | frozenset[int] = frozenset()
                   ) -> None:
    """Judge the latent findings ``found`` (indices: ``resave_findings``) by a
    rerun of the run's schedule that also saves right after each load they
    were found at and restarts from that checkpoint (``cmp``: it against the
    reference; None: it failed, nothing is judged). One that departs is the
    gap's evidence, and the finding says where. One that never departs either
    is put back where the finding is a data position restored at an epoch's
    end, which has two forms (a trial's loop that works its position out from
    the step: epoch 1, position 0, where the uninterrupted run had epoch 0,
    position 8, about to roll over); elsewhere the finding stays a gap and
    says what the rerun showed (a best loss the load forgets ends right when
    the next evaluation beats it)."""
    if cmp is None or not found:
        return
    ends = set(epoch_boundaries(ref.segment.boundaries, ref.steps))
    settled = []
    for i, finding in enumerate(result.diagnosis):
        if i not in found:
            settled.append(finding)
        elif cmp.first is not None:
            step, key = cmp.first
            settled.append(replace(finding, status=LOST_ON_RESAVE, detail=finding.detail + (
                f"; your save() right after your load() at step {finding.step}, and a restart "
                f"from that checkpoint, depart from the uninterrupted run at step {step}, in "
                f"{quantity_name(key)}: a save before the state is set right loses it")
                + (_FIT_LOOP_RESAVED if "epoch_progress." in finding.detail else "")))
        elif i in sooner:  # (the rate's causes are no longer offered: none is one)
            cause = LEARNING_RATE_ONLY.removesuffix(SCHEDULER_LOST)
            detail = finding.detail.replace(LEARNING_RATE_ONLY, cause).replace(cause, "")
            settled.append(replace(finding, status=PUT_BACK, detail=detail + _RATE_SOONER))
        elif _other_form(finding, ends):
            settled.append(replace(finding, status=PUT_BACK,
                                   detail=_at_first_restore(finding.detail, _ONE_POSITION)))
        else:
            settled.append(replace(finding, detail=finding.detail + _ALIKE_HERE))
    result.diagnosis = settled
    gone = {f.component for f in settled if f.status in (PUT_BACK, LOST_ON_RESAVE)}
    result.latent_gaps = [c for c in result.latent_gaps if c not in gone]
    result.latent_ended = [c for c in result.latent_ended if c not in gone]


def _counts_alone(detail: str) -> bool:
    """Whether what differs of a data position is counts alone (an epoch, a
    batch), which a position at an epoch's end may hold in two forms: not a
    tensor, a generator's state, nor an entry the load left out (trial 692: a
    shuffle generator's state, missing after the load, was "one position in
    another form" at the first epoch's end, where a fresh build's generator
    happened to hold it; at a later epoch's end the resume departed)."""
    return not any(mark in detail for mark in ("tensor[", "generator's state", " missing,"))


def _epoch_behind(component: str, detail: str) -> bool:
    """Whether a data position's epoch is behind the one expected (a sampler's
    epoch, or an entry named for an epoch): lost, not the position's other
    form, in which an epoch's end is the next epoch's start (trial 739: a
    sampler's epoch the checkpoint lost, 0 where 1 was expected, read as the
    position in another form; the loop set it again as the next epoch began)."""
    pairs = (_COUNTS.findall(detail) if split_rank_name(component)[0] == SAMPLER_EPOCH
             else _EPOCH_COUNTS.findall(detail))
    return any(int(now) < int(was) for now, was in pairs)


_COUNTS = re.compile(r"(-?\d+), expected (-?\d+)\b")
"""A count and the count expected, as a finding's detail gives them (``epoch 2, expected 1``)."""
_EPOCH_COUNTS = re.compile(r"epoch\w* (-?\d+), expected (-?\d+)\b")
"""The same, of an entry named for an epoch."""


def lost_after_resave(ref: Reference, result: RunResult, again: Segments,
                      departs: tuple[int, str]) -> None:
    """The components that differ right after a restart from the program's
    save() made right after its load() (``again``: that restart), and not
    right after the first load, where such a rerun departs at ``departs``:
    lost on a second resume (``LOST_ON_RESAVE``). None found: nothing said."""
    step, key = departs
    known = {f.component for f in result.diagnosis}  # (judged at the first load already)
    result.diagnosis = result.diagnosis + [
        replace(f, status=LOST_ON_RESAVE, confirmed=False, detail=(
            f"{f.detail} right after a restart from your save() made right after your load() "
            f"at step {f.step}; that restart departs from the uninterrupted run at step {step}, "
            f"in {quantity_name(key)}: a save right after the load does not keep it"))
        for f in diagnose(ref, [], again) if f.basis == "reference" and f.component not in known]


def give_fixes(result: RunResult, advice: dict[str, str], ref: Reference | None = None,
               segments: Segments = ()) -> None:
    """Each finding of the program's own resume that its checkpoint loses
    (confirmed, or a latent gap) gets what makes that checkpoint hold the
    component, where a framework's setting decides it (``advice``:
    ``BuiltProgram.advice``; a Trainer restores callbacks only when asked).
    Of the random streams, where another declared component of the
    ``ref``erence holds them at that resume point, the checkpoint keeps them
    already, and what is said is what undoes them (``_streams_held_text``);
    of one the load set otherwise, how it sets it first (``_set_otherwise``)."""
    # (trial 273: a Lightning program whose callback saved the streams, which a loader's
    # new iterator then drew from, was told to save them: said only where the restore
    # left a stream where a fresh launch left it)
    # (trial 856: a stream that stood where the build left it, a later resume point's
    # form of one left unrestored, got no fix where the first point's got one)
    unrestored = RNG in advice and STREAMS_NOT_KEPT in advice[RNG] or any(
        LEFT_UNRESTORED in o.detail or MADE_ANEW in o.detail for o in result.stream_offsets)
    result.diagnosis = [
        replace(f, fix=_streams_held_text(ref, f) or (
            f"{SET_BY_LOAD}: {_WORKED_OUT}{advice[f.component]}"
            if _set_otherwise(ref, segments, f) else advice[f.component]))
        if f.component in advice and f.status in (CONFIRMED, LATENT)
        and (f.component != RNG or unrestored) else f
        for f in result.diagnosis]


_MADE_FROM = ", or your load() makes it from "
"""How a `not compared` line says that the load may make it from a confirmed
component it restored otherwise (the why reads it back)."""


_WORKED_OUT = ("check how it works the value out (from what your save() wrote, or from other "
               "state: a count of steps) before whether your checkpoint keeps it; where it "
               "does not keep it: ")


def _set_otherwise(ref: Reference | None, segments: Segments, finding: Finding) -> bool:
    """Whether a finding's component (not random state) came back from the
    program's load with every entry that differs from the uninterrupted run's
    otherwise than a fresh build holds it too: the load set it, to another
    value (trial 844: a position worked out from the step count, one batch
    ahead, was told to register it for checkpointing, which changed nothing)."""
    restored = next((seg.restored_state for k, seg in segments if k == finding.step), None)
    built = ref.segment.built_leaves.get(finding.component) if ref is not None else None
    if ref is None or not built or restored is None or finding.step not in ref.segment.captures \
            or finding.basis != "reference" or finding.component == RNG:
        return False
    want = ref.file(ref.segment.captures[finding.step])["components"].get(finding.component)
    got = load_checkpoint(restored, read_only=True)["components"].get(finding.component)
    if want is None or got is None or is_stream_state(want):
        return False
    theirs, mine = dict(flatten_state(want)), dict(flatten_state(got))
    apart = [path for path in theirs if path in mine and digest(mine[path]) != digest(theirs[path])]
    return set(theirs) == set(mine) and bool(apart) and all(
        built.get(path) not in (None, digest(mine[path])) for path in apart)


def _streams_held_text(ref: Reference | None, finding: Finding) -> str:
    """Of a stream finding at a resume point where other declared components
    hold the streams' state as the uninterrupted run had it there, bit for bit
    (a Lightning callback of the program's own that saves torch's stream):
    that the checkpoint holds them, and what then makes the restart draw
    otherwise ('' where none holds them, or not a stream finding). Trial 826:
    a module that seeded torch's stream in on_train_start, after Lightning's
    restore had set it from the program's own callback, was told that
    Lightning's checkpoint holds no random stream and to save it, which the
    program did; done again, nothing changed."""
    if ref is None or finding.component != RNG or finding.step is None:
        return ""
    others = _same_stream_held(ref, [RNG], [finding.step])
    if not others:
        return ""
    said = " and ".join(f"`{o}`" for o in others)
    its = "it keeps" if len(others) == 1 else "they keep"
    return (f"{KEPT_ALREADY}: {said} hold{'s' if len(others) == 1 else ''} the streams' "
            f"state at step {finding.step} as the uninterrupted run had it, bit for bit (where "
            f"your checkpoint keeps {said}, {its} them); so the restart draws otherwise because "
            "that state is not set back "
            "where the restart draws (a load of it that does not run, or sets another), or "
            "because code after the load seeds the stream again (a seed call after the "
            "restore: in a framework, one in a hook it runs after restoring the checkpoint, "
            "as Lightning's on_fit_start and on_train_start; seed there only where no "
            "checkpoint is loaded)")


def _matters_with_others(result: RunResult, finding: Finding) -> str:
    """Of a finding that changes the run when put right, yet leaves it
    departing where it did (``settle_findings``): a trial's lost stream beside
    a loader's workers seeded from it read "differs, not the cause". Where the
    schedule restarts again after the run departed, the rerun put the
    uninterrupted run's state in there too, which the departed run did not
    hold: the change may come from there alone (a trial's loader generator,
    set right by the program in the step after its restore at 3, was said to
    matter, restarted again at 10)."""
    step = result.first_divergent_step
    later = [k for k in result.resume_at if step is not None and k >= step
             and (finding.step is None or k > finding.step)]
    if later:
        return finding.detail + (
            f"{_MATTERS_WITH_OTHERS} {step}: the rerun put the uninterrupted run's state in at "
            f"the later restart at {steps_text(later)} too, which this run, departed from step "
            f"{step}, did not hold there, so the change may come from there alone: whether it "
            "matters here is not shown")
    return finding.detail + (f"{_MATTERS_WITH_OTHERS} {step}: it matters, and something "
                             "else differs too (another finding, or state no component declares)")


_MATTERS_WITH_OTHERS = "; putting it right alone changes the run, which still departs at step"


TOGETHER = "put right only together with {}: neither alone changed the departure"
"""What a finding confirmed jointly says (``note_together``)."""


def note_together(result: RunResult, names: Sequence[str]) -> None:
    """Of findings confirmed only together (``_Confirmations._joint_causes``),
    each says with which (trial 795: a stream one draw off, which the correct
    twin's resume showed changed nothing, read "(confirmed)" beside a frozen
    layer, where the reruns had put the two right only together)."""
    if len(names) < 2:
        return
    def together(f: Finding) -> str:
        return TOGETHER.format(paths_said([n for n in names if n != f.component]))

    result.diagnosis = [replace(f, detail=f"{f.detail} ({together(f)})")
                        if f.component in names and f.status == CONFIRMED else f
                        for f in result.diagnosis]


def put_right_by_engine(own: RunResult, engine_full: RunResult, alike: bool) -> None:
    """Where the engine's own full resume departs step for step as the program's
    own does (``alike``: their trajectories match), the one finding of the own
    resume that the engine's restore put right (the engine's differs in none
    of it) changed nothing there: put right with the rest, the run departs no
    later, so it is not the cause (``unjudge_when_incomplete`` had left it
    unjudged; trial 782: a stream one draw off, read by no step, was the only
    `diagnosis:` line beside a position no component held). Of a random stream
    alone. Listed last."""
    if (not alike or own.verdict != DIVERGED or engine_full.verdict != DIVERGED
            or len(own.resume_at) != 1 or own.steps_match()):
        return
    differed = {f.component for f in engine_full.diagnosis}
    righted = [f for f in own.diagnosis if f.component not in differed]
    # (a random stream only: setting its state is the whole of its restore, where a flag
    # restored through Attr may stand for what it switched, which the engine's restore
    # leaves: tests/test_trust_hidden_causes.py)
    if len(righted) != 1 or righted[0].status is not None or not is_stream_detail(
            righted[0].detail):
        return
    own.diagnosis = [f for f in own.diagnosis if f is not righted[0]] + [
        replace(righted[0], status=NOT_CAUSE, confirmed=False)]


def unjudge_when_incomplete(own: RunResult, engine_full: RunResult) -> None:
    """When the engine's own full resume departs, the declared components do
    not capture the program's state: one whose ``load_state_dict()`` does not
    bring back what its ``state_dict()`` gave, or one that stands for more
    than it holds (a flag restored through ``Attr`` while what it switched,
    ``requires_grad``, is not). A rerun that puts the reference's declared
    state in is then no evidence that a component does not matter, so no
    finding of the program's own full resume is "not the cause", nor said to
    matter beside something else: not judged."""
    if engine_full.verdict in (IDENTICAL, CLOSE, FAILED):
        return
    own.engine_departs = True
    ends = own.steps_match()
    before, cleared = _differs_clause(own.diagnosis, ends), cleared_streams(own)
    own.diagnosis = [replace(f, status=None, confirmed=None) if f.status == NOT_CAUSE else
                     replace(f, detail=f.detail.split(_MATTERS_WITH_OTHERS)[0])
                     for f in own.diagnosis]  # (nor that it matters beside something else)
    if before:
        own.explanation = own.explanation.replace(before, _differs_clause(own.diagnosis, ends),
                                                  1)
    # (the no-cause clause goes with the marks: a rerun that could not put the
    # component right, its load losing it, says nothing of it; in whatever words
    # the framework's were put in)
    start = own.explanation.find(_NO_CAUSE_LEAD)
    if start >= 0:
        end = own.explanation.find("; ", start + len(_NO_CAUSE_LEAD))
        own.explanation = own.explanation[:start] + (
            own.explanation[end:] if end >= 0 else "")
    unclear_streams(own, cleared)  # (its stream lines said "not the cause" too)


def _new_epoch_text(ref: Reference, r: RunResult) -> str:
    """Where a full resume's data first differs at the first step of a new
    epoch after the restore (the first step that reads one: with a fractional
    steps_per_epoch, one that straddles the boundary), every step before it
    matched: the lead is the new epoch's order, not the position in the
    resumed one (a trial's correct
    Lightning program, resumed mid-epoch, read another order from the next
    epoch on, and nothing said where to look). Not where the diagnosis
    confirms a cause: a curriculum lost at the restore that first changes the
    inputs where an epoch begins was read as another order beside it (trial
    222)."""
    step = r.first_divergent_step
    if not (r.first_divergent_quantity or "").startswith("data") or step is None:
        return ""
    if any(f.status == CONFIRMED for f in r.diagnosis):
        return ""
    k = _restore_before(r)
    if k is None or step <= k + 1 or step != next_epoch_start(ref.segment.boundaries, k):
        return ""
    order = ("(a sampler's or a loader's generator, or the epoch the sampler is set to, is not "
             "where the uninterrupted run had it when that epoch began)")
    if "inputs" in (r.first_divergent_quantity or ""):
        # (trial 477: the model's inputs, not samples; the same samples in the same order,
        # cut to another length by a curriculum its checkpoint lost, read "order differs")
        return (f"; step {step} is the first to read a new epoch, and every step from the "
                f"restore at {k} until then read what the uninterrupted run read: the new "
                f"epoch's inputs differ, in their order {order}, or in what makes them from "
                "the samples (state a collator or a dataset reads: a curriculum's length)")
    return (f"; step {step} is the first to read a new epoch, and every step from the restore at "
            f"{k} until then read what the uninterrupted run read: the new epoch's order "
            f"differs {order}")


def next_epoch_beyond(ref: Reference, points: Sequence[int], runs: Sequence[RunResult]
                      ) -> str | None:
    """Where a full resume leaves a latent gap and the next epoch after the last
    resume point starts beyond the run: that a component read as an epoch
    starts is read by no step here, and how many steps show it (trial 818: a
    sampler's generator lost at 20 of 24 steps, epochs of 6, read "a component
    unused, only entries nothing reads", and --steps 26 showed it at 25)."""
    gaps = [name for r in runs if not r.dropped for name in r.latent_gaps]
    start = next_epoch_start(ref.segment.boundaries, max(points)) if points else None
    if not gaps or start is None or start <= ref.steps:
        return None
    names = ", ".join(f"`{name}`" for name in dict.fromkeys(gaps))
    return (f"the next epoch's start (step {start}), beyond the run's last step ({ref.steps}): "
            f"the latent gap in {names} may be state read as an epoch starts (a sampler's "
            f"generator, an epoch's order), which no step after the restart reads here; "
            f"--steps {start + 1} runs through it")


def matters_from(ref: Reference, finding: Finding, next_draws: dict[str, int]) -> int | None:
    """For a latent gap: the step that next reads it, from which it may matter, when
    the program's declared boundaries tell (the sampler epoch is read at the
    next epoch boundary) or, for random state, the reference's draws
    (``next_draws``); only beyond the run: a step the run reached, and
    matched, disproves it (a trial read "from step 13" where 13 had matched)."""
    when = next_draws.get(finding.component)
    if finding.component == SAMPLER_EPOCH:
        when = next_epoch_start(ref.segment.boundaries, finding.step or 0)
    return when if when is not None and when > ref.steps else None


def resumes(run: RunResult, tolerance: Tolerance) -> bool:
    """``run`` continues like the reference under ``tolerance`` (``close``
    counts only where the tolerance is not bitwise)."""
    return run.verdict == IDENTICAL or (run.verdict == CLOSE and not tolerance.bitwise_only)


def modes_set_over(engine_full: RunResult, ablations: Sequence[RunResult]) -> None:
    """An ablation that resumes alike, whose restart the engine's restore of the
    declared modules put back in modes or frozen parameters that the program,
    without the dropped component, held otherwise (and the engine's full resume
    did not need to): no blind spot, the dropped component is what sets them
    (trial 699: a callback that froze layers, dropped, left them trainable,
    and the engine's restore of `params` froze them again: "blind spot", and a
    correct program failed its test)."""
    for run in ablations:
        put_back = [what for what in run.modes_set if what not in engine_full.modes_set]
        if not run.blind_spot or not put_back:
            continue
        run.blind_spot = False
        dropped = ", ".join(f"`{name}`" for name in run.dropped)
        run.explanation = (
            f"{MODES_PUT_BACK}; without {dropped}, the program held "
            f"{'; '.join(put_back)} right after the restore, and the engine's restore of the "
            "declared modules put them back as that run had them (a module's state_dict() "
            f"leaves its mode and its parameters' requires_grad out): {dropped} sets them, and "
            "a resume that loses it trains otherwise; no step here can show it")


def judge_ablations(engine_full: RunResult, engine_trajectory: list[Any],
                    ablations: Sequence[tuple[RunResult, list[Any]]],
                    tolerance: Tolerance) -> None:
    """When the engine's own full resume is not equivalent, the declared
    components do not capture the program's state: an ablation is evidence
    only where it departs before that resume does (the two runs differ in
    that one restore alone, and the full resume still matched there), or,
    where neither departs in a step, ends otherwise in a component that resume
    ends as the reference does. Mark the others ``inconclusive`` (a failed one
    stays failed: that is a fact), and say when one's trajectory (its steps'
    digests, and how it ends where no step departs) is the full resume's own
    divergence, step for step."""
    if resumes(engine_full, tolerance):
        return
    where = (f"already {engine_full.where_it_differs()}" if engine_full.verdict == DIVERGED
             else "failed" if engine_full.verdict == FAILED else f"is {engine_full.verdict}")
    for run, trajectory in ablations:
        if run.verdict == FAILED:
            continue
        if _departs_first(run, engine_full):
            _before_full_resume(run, engine_full)
            _came_back(engine_full, run)
            continue
        if _ends_otherwise_beyond(run, engine_full):
            continue
        run.verdict = INCONCLUSIVE
        run.blind_spot = False
        run.plausible = None
        run.noise_ratio = None
        run.same_as_full_resume = (
            engine_full.verdict == DIVERGED and trajectory == engine_trajectory)
        # (trials 485, 486: "shows nothing about it" of runs whose losses differed from
        # that resume's: what they differ by is not judged, not nothing)
        text = (f"inconclusive: the engine's full resume of every declared component "
                f"{where}, so dropping {', '.join(run.dropped)} is not judged: "
                + ("what it changes cannot be told apart from what that resume lacks"
                   if engine_full.verdict == DIVERGED else
                   "there is no full resume to hold it against"))
        if run.same_as_full_resume:
            text += ("; its trajectory is identical to the full resume's divergence: "
                     "not evidence that the component matters")
        run.explanation = text


def positions_alike_in_ablations(engine_full: RunResult, ablations: Sequence[RunResult]) -> None:
    """An ablation's finding of a component it did not drop, found as the
    engine's full resume found it and put back there as one position in its
    other form (``positions_in_other_form``): put back here too, and no longer
    in the row's why (trial 810: every ablation read "restored state differs in
    data_cursor" beside what it dropped)."""
    def head(f: Finding) -> tuple[str, int | None, str]:
        return f.component, f.step, f.detail.split(": at an epoch's end", 1)[0]

    put = {head(f): f for f in engine_full.diagnosis
           if f.status == PUT_BACK and ONE_POSITION in f.detail}
    _latent_alike_unsaid(engine_full, ablations, head)
    for run in ablations if put else ():
        hits = {i: put[head(f)] for i, f in enumerate(run.diagnosis) if head(f) in put
                and f.status != CONFIRMED and split_rank_name(f.component)[0] not in run.dropped}
        if not hits:
            continue
        before, latent = _differs_clause(run.diagnosis, run.steps_match(), run), latent_text(run)
        for i, settled in hits.items():
            run.diagnosis[i] = replace(run.diagnosis[i], status=PUT_BACK, confirmed=False,
                                       detail=settled.detail)
        gone = {settled.component for settled in hits.values()}
        run.latent_gaps = [c for c in run.latent_gaps if c not in gone]
        for old, new in ((before, _differs_clause(run.diagnosis, run.steps_match(), run)),
                         (latent, latent_text(run))):
            if old:
                run.explanation = run.explanation.replace(old, new, 1)


def _latent_alike_unsaid(engine_full: RunResult, ablations: Sequence[RunResult],
                         head: Callable[[Finding], tuple[str, int | None, str]]) -> None:
    """An ablation's finding of a component it did not drop, found as the
    engine's full resume found it and judged latent there (it changed no step
    of that resume): no longer in the row's why, where it read as a part of
    what the drop changed (trial 848: every ablation read "restored state
    differs in data_cursor", a stale snapshot the full resume called a latent
    gap). The finding stays in the row's diagnosis."""
    idle = {head(f) for f in engine_full.diagnosis if f.status == LATENT}
    for run in ablations if idle and engine_full.verdict == IDENTICAL else ():
        kept = [f for f in run.diagnosis if head(f) not in idle or f.status == CONFIRMED
                or split_rank_name(f.component)[0] in run.dropped]
        if len(kept) < len(run.diagnosis):
            before = _differs_clause(run.diagnosis, run.steps_match(), run)
            if before:
                run.explanation = run.explanation.replace(
                    before, _differs_clause(kept, run.steps_match(), run), 1)


def _came_back(engine_full: RunResult, run: RunResult) -> None:
    """A declared component otherwise right after the engine's restore (a
    lossy load) whose drop departs before that resume does: its restore carried
    what those steps read, so the finding says so and is no lossy load, and
    the resume's why no longer says it did not come back (trial 687: a
    StatefulDataLoader's position, which its load applies when it next makes
    an iterator, read "does not load back its own state" in the WARNING, where
    a callback's lost sum made that resume depart)."""
    lossy = engine_full.lossy_loads(read_alike=True)
    if len(run.dropped) != 1 or run.dropped[0] not in {f.component for f in lossy}:
        return
    said = _lossy_text(engine_full.lossy_loads())
    engine_full.diagnosis = [replace(f, detail=(
        f"{f.detail}; {CAME_BACK_READ}: dropping it departs at step {run.first_divergent_step}, "
        "before this resume does (a load that sets a loader's state when it next makes an "
        "iterator, as torchdata's StatefulDataLoader does, shows it so right after the "
        "restore; one that brings back part of its state, the rest)"))
        if f in lossy and f.component == run.dropped[0] else f
        for f in engine_full.diagnosis]
    left = engine_full.lossy_loads()
    engine_full.explanation = engine_full.explanation.replace(
        said, _lossy_text(left) if left else "", 1)


def _departs_first(run: RunResult, engine_full: RunResult) -> bool:
    """``run`` departs from the reference before the engine's full resume of
    the same schedule does: in an earlier step (a trial: a scheduler dropped
    from step 9 read inconclusive because an undeclared generator changed step
    14), or in the same step in a quantity computed before that resume's first
    one (data, loss scale, learning rate, loss, gradients, parameters), as a
    confirmation rerun counts it (a trial: an optimizer dropped, its learning
    rate differing at step 8 where the full resume's loss first differs at 8,
    read inconclusive)."""
    full_step, step = engine_full.first_divergent_step, run.first_divergent_step
    if not (engine_full.verdict == DIVERGED and run.verdict == DIVERGED
            and run.resume_at == engine_full.resume_at and full_step is not None
            and step is not None
            and not (run.first_divergent_quantity or "").startswith("state")):
        return False
    if step != full_step:
        return step < full_step
    if run.first_divergent_key is None or engine_full.first_divergent_key is None:
        return False
    return (_position((step, run.first_divergent_key))
            < _position((full_step, engine_full.first_divergent_key)))


def _ends_otherwise_beyond(run: RunResult, engine_full: RunResult) -> bool:
    """Where neither ``run`` nor the engine's full resume departs in a step and
    both end otherwise, whether ``run`` also ends otherwise in a component
    the full resume ends as the reference does: the two differ only in that
    restore, so it matters there; diverged stands, and its why says so (a
    trial: `drop global_step`, which ended with 12 for 24, read inconclusive
    with "its trajectory is identical to the full resume's divergence")."""
    if not (steps_match(run) and steps_match(engine_full)
            and run.resume_at == engine_full.resume_at):
        return False
    beyond = [name for name in run.ended_otherwise if name not in engine_full.ended_otherwise]
    if not beyond:
        return False
    # (trial 768: `drop rng`, whose stream alone ended otherwise, read "it matters here")
    own = set(beyond) <= set(run.dropped)
    run.explanation += (
        f"; the engine's full resume of every declared component ends otherwise too, in "
        f"{', '.join(engine_full.ended_otherwise)}, but not in {', '.join(beyond)}, and the "
        f"two differ only in restoring {', '.join(run.dropped)}: it matters here"
        + (", to its own end state alone (every step matched without it)" if own else ""))
    return True


def _before_full_resume(run: RunResult, engine_full: RunResult) -> None:
    """Diverged stands; the noise band is not judged: from the full resume's
    departure on, state no component declares changes the run too. Where that
    resume departs in no step (it only ends otherwise), the band stands too."""
    if steps_match(engine_full):  # (a trial read "departs (step 24, state of ...)" as a step)
        run.explanation += (
            f"; the engine's full resume of every declared component departs in no step (it "
            f"ends otherwise in the {engine_full.first_divergent_quantity}), and the two "
            f"differ only in restoring {', '.join(run.dropped)}: it matters here")
        return
    offsets_shared_with(run, engine_full)
    said = _noise_clause(run)  # (its own words otherwise stand: the data, the streams)
    # (trial 507: "loss, which that step computes later" of a learning rate, which
    # the step's optimizer reads after its loss: what holds is that the full resume
    # differs there in the loss, not yet in the rate)
    later = (f", where that step's {quantity_name(run.first_divergent_key or '')} is still the "
             "uninterrupted run's" if run.first_divergent_step == engine_full.first_divergent_step
             else "")
    # (trial 635: "before" of the same step read as a claim about when things happen)
    when = ("at the step where the engine's full resume of every declared component departs"
            if later else "before the engine's full resume of every declared component departs")
    run.explanation = (run.explanation.replace(said, "", 1) if said else run.explanation) + (
        f"; this is {when} "
        f"(step {engine_full.first_divergent_step}, "
        f"{quantity_name(engine_full.first_divergent_quantity or '')}{later}), "
        f"and the two differ only in restoring {', '.join(run.dropped)}: it matters here. "
        "Whether the change is plausible or gross is not judged: from that step what makes "
        "the engine's full resume depart (see the WARNING) changes the run too"
        # (trial 543: the lost callback's 0.838 read as what dropping the optimizer did)
        + (f", and its max |Δloss|, {run.max_abs_loss_diff:.3g}, counts that too"
           if run.max_abs_loss_diff else ""))
    run.plausible = run.noise_ratio = None


# -- words -----------------------------------------------------------------

def explain(r: RunResult, first_bitwise: tuple[int, str] | None, *,
            own_checkpoint: bool = False, position: str | None = None) -> str:
    """The ``why`` sentence of a judged run. ``own_checkpoint``: the program has
    its own save/load, so the engine's full resume is a second opinion;
    ``position``: a declared data position that came back as saved, where the
    data is what departs first (``_restored_position``)."""
    what = "dropping " + ", ".join(r.dropped) if r.dropped else "the full resume"
    k = ",".join(map(str, r.resume_at))
    if r.verdict == IDENTICAL and not r.dropped:
        if r.lost_on_resave():  # (a trial: "resumes bit for bit" beside it)
            return ("every step after the restart matches bit for bit, but your save() right "
                    "after your load(), and a restart from that checkpoint, depart from the "
                    f"uninterrupted run: {resave_loses(r.lost_on_resave())} (see the "
                    "diagnosis)" + latent_text(r))
        if r.latent_gaps:
            return "every step after the restart matches bit for bit" + latent_text(r)
        return ("resumes bit for bit: every step after the restart and every declared "
                "component's state match" + _by_build_text(r.by_build))
    if r.blind_spot:
        return (
            f"blind spot: {what} changed no step after k={k}; this program does not exercise "
            "it here (or other state masks it); not evidence that it is saved"
        )
    if r.verdict == CLOSE:
        step, key = first_bitwise or (None, "")
        return (
            f"within tolerance; first bitwise difference at step {step} "
            f"({quantity_name(key)}), max |Δ| {r.max_abs_diff:.3g}"
        )
    return _divergence_text(r, own_checkpoint, position)


def _restored_position(ref: Reference, r: RunResult) -> str | None:
    """A full resume whose first departure is the data a step reads while the
    declared data position came back as saved (no finding on any declared
    component right after the load, but latent ones): the component's name
    (a trial's loop, which restored its position and never skipped the
    batches it had read, was told only of state it did not declare). None
    otherwise."""
    if r.dropped or r.verdict != DIVERGED or \
            split_rank_name(r.first_divergent_key or "")[0] != "data":
        return None
    declared = [n for n in ref.segment.names if split_rank_name(n)[0] == DATA_CURSOR]
    # (a lead only where nothing declared is: a lost sampler epoch is its own; a stream the
    # program set right itself in that step is not: trial 367's loop skipped no batch)
    if any(f.status not in (LATENT, PUT_BACK) and not righted_only(f.detail)
           for f in r.diagnosis):
        return None
    # (a trial: only rank 0's was named where every rank's came back alike)
    return ", ".join(f"`{name}`" for name in declared) if declared else None


def place_came_back(result: RunResult) -> None:
    """Where a run read an epoch's first samples again at the next epoch's first
    step, after a restart inside the epoch whose later steps read as the
    uninterrupted run did: the position came back, so the texts say the order
    (trials 805, 812, 818: "a position at the epoch's end not kept" first, of a
    restart at 1 whose steps 2 to 6 matched and whose shuffle generator was lost)."""
    step = result.first_divergent_step
    before = [k for k in result.resume_at if step is not None and k < step]
    if step is None or not before or step - 1 == max(before):
        return
    result.explanation = result.explanation.replace(EPOCH_BEFORE_AGAIN, EPOCH_BEFORE_ORDER)
    if result.divergence_detail is not None:
        result.divergence_detail = result.divergence_detail.replace(EPOCH_BEFORE_AGAIN,
                                                                    EPOCH_BEFORE_ORDER)


def position_read_in_place(result: RunResult) -> None:
    """Where the engine's full resume found only data positions otherwise right
    after its restore and the steps after it read their place in another
    epoch's order, its why says the place came back (trial 833: a datamodule
    that set its place when it next made an iterator read "did not come back as
    its state_dict() gave it"; its shuffle generator, left out, was the cause)."""
    if result.dropped or result.checkpoint != "engine" or not result.place_came_back():
        return
    lossy = result.lossy_loads()
    result.explanation = result.explanation.replace(_lossy_text(lossy), (
        "; the engine restored every declared component through its own load_state_dict(), "
        f"and {', '.join(f'`{f.component}`' for f in lossy)} differed right after the "
        "restore but came back at its place, which the steps after read in another epoch's "
        "order (a load that sets its place when it next makes an iterator)"), 1)


def in_its_words(result: RunResult, boundaries: Mapping[str, Any]) -> None:
    """A framework target's resume in its own words: where the program's own
    resume is the framework's restore and save (``restored_by``, ``saved_by``
    of ``BuiltProgram.boundaries``), ``result``'s texts name them instead of
    "your load()" and "your save()" (a trial wrote no load() and was told
    "your load() left it there")."""
    words = _its_words(boundaries)
    if not any(words.values()):
        return
    result.explanation = _reworded(result.explanation, words)
    if result.divergence_detail is not None:
        result.divergence_detail = _reworded(result.divergence_detail, words)
    result.diagnosis = [replace(f, detail=_reworded(f.detail, words), fix=_reworded(f.fix, words))
                        for f in result.diagnosis]


def reworded_lines(lines: list[str], boundaries: Mapping[str, Any]) -> list[str]:
    """``in_its_words`` for lines of the report (what is not compared)."""
    words = _its_words(boundaries)
    return [_reworded(line, words) for line in lines]


def note_the_loop(result: RunResult, boundaries: Mapping[str, Any]) -> None:
    """Where the loop that ran is an adapter's around the user's step
    (``loop_note`` of ``BuiltProgram.boundaries``), the program's own full
    resume says so: its row reads "own save/load", and a trial took an
    identical one for a check of its script's resume code, which never ran
    (a forgotten skip_first_batches passed)."""
    note = boundaries.get("loop_note")
    if note and result.checkpoint == "program" and not result.dropped \
            and note not in result.explanation:
        result.explanation += f"; {note}"


def _its_words(boundaries: Mapping[str, Any]) -> dict[str, str | None]:
    """What a program of your own is told, and what a framework target says
    instead (its components are the adapter's declaration, not the user's: a
    trial was told of "state you did not declare", having declared nothing)."""
    framework = boundaries.get("restored_by")
    # (trials 221, 224: the engine's restart goes through the framework's restore and
    # loop too, which Lightning's skipped epoch-end scheduler step departed; its row
    # said only that the components do not capture the program's state)
    loop = (f"{_NOT_CAPTURED.split(':')[0]}, through {framework} as your own resume is, "
            "and the run departs all the same: the components do not capture the program's "
            "state (undeclared state, or state consumed after the restore), or "
            f"{framework_name(framework)}'s {LOOP_GOES_ON}"
            ) if framework and FRAMEWORK_RESUME in (boundaries.get("loop_note") or "") else None
    rate = (f"{_RATE_FIRST}; or {framework_name(str(framework))}'s loop, "
            "which after a resume may step a scheduler otherwise than the uninterrupted run "
            "(Lightning may leave out the epoch-end step of one stepped per epoch or on a "
            "validation metric)") if loop else None
    # (trial 142: a Trainer target's not-compared line spoke of its "own resume (save/load)")
    # (in order: the rate's clause holds "your load()", reworded after it)
    return {_RATE_FIRST: rate, "your load()": framework, _NOT_CAPTURED: loop,
            "your save()": boundaries.get("saved_by"),
            NOT_DECLARED: ADAPTER_LEFT_OUT if framework else None,
            "your own resume (save/load)": f"{OWN_THROUGH}{framework})"
            if framework else None,
            # (trial 648: a callback's on_train_begin reset counters the checkpoint held)
            f"{CHECKPOINT_LOSES}, {NOT_STATE}": f"{CHECKPOINT_LOSES}, or a hook that runs "
            "after the restore sets it anew (a callback's on_train_begin, on_fit_start or "
            f"on_train_start), {NOT_STATE}" if framework else None,
            # (trial 678: a trainer_target's user was pointed at Target; after the
            # entry above, whose words hold it)
            "name it in Target(not_state=...)": "name it in the target's not_state=..."
            if framework else None,
            # (trial 193: a Lightning scheduler stepped per epoch, one behind after a resume
            # inside an epoch, was offered only causes in the user's code)
            # (trial 224: after a resume at an epoch's end too, not only inside one)
            REGISTER_GENERATOR: framework_generator(framework) if framework else None,
            MODULE_ATTR_TODO: framework_module_todo(framework) if framework else None,
            SAVED_BEFORE_STEP: f"{framework}, which after a resume may step a scheduler "
            f"stepped per epoch one time fewer, or {SAVED_BEFORE_STEP}"
            if framework else None}


def _reworded(text: str, words: Mapping[str, str | None]) -> str:
    """``text`` with each phrase said in the framework's words; what is in
    them already stays as it is (a run is put in its words when judged and
    again in the report: trial 224 read a framework's clause twice over)."""
    for said, meant in words.items():
        if meant:
            text = meant.join(part.replace(said, meant) for part in text.split(meant))
    return text


def _skipped_before_rate(ref: Reference, r: RunResult) -> str:
    """``r``'s explanation, saying which steps between its last restore and a
    learning rate that first differs the loss scaler skipped (a trial asked
    why a scheduler lost at 10 showed at 13: step 12 overflowed in both runs,
    and a skipped step reads no learning rate; a skip in one run only would
    be the first difference itself; a later trial read it as a difference hidden
    there, where the schedule had not changed: whether one was is not seen); or,
    where it is the second step after the restore, that the first stepped with
    the rate restored."""
    step, q = r.first_divergent_step, r.first_divergent_quantity or ""
    if step is None or not q.startswith("learning rate") or q.endswith(_OTHER_STEPPED):
        return r.explanation  # (trial 882: no rate differs where another optimizer steps)
    k = max((j for j in r.resume_at if j < step), default=None)
    said = f"{q} differs from step {step}"
    if k is None or said not in r.explanation:
        return r.explanation
    records = [rec for rec in ref.segment.records if k < rec.step < step and rec.skipped]
    if not records and step == k + 2 and OPTIMIZER not in r.dropped:
        # (trial 281: "why step 11 and not 10?" of a scheduler lost at 9)
        return r.explanation.replace(said, (
            f"{said} (step {k + 1}, the first after the restart, stepped with the rate the "
            "optimizer's state holds; what sets the next, a scheduler's step() or code of "
            "yours, set it otherwise)"), 1)
    if not records:
        return r.explanation
    steps, one = steps_text([rec.step for rec in records]), len(records) == 1
    # (a trial: micro-batches of gradient accumulation, with no loss scaler,
    # were said to be steps "the loss scaler skipped")
    it, micro = ("it", "a micro-batch") if one else ("them", "micro-batches")
    if _scale_fell_after(ref.segment.records, records):  # (trial 441: it was, and said so)
        why = (f"the loss scaler skipped {it} on an overflow: the scale fell after "
               f"{'it' if one else 'each'}")
    elif any(rec.scale is not None for rec in records):
        why = (f"the loss scaler skipped {it}, or {'it is' if one else 'they are'} {micro} of "
               "gradient accumulation")
    else:
        why = (f"{micro} of gradient accumulation, or {'a step' if one else 'steps'} the "
               "program skips")
    return r.explanation.replace(said, (
        f"{said} ({steps}, after the restart, stepped no optimizer in either run ({why}): a "
        "step whose optimizer does not step reads no learning rate, so whether the rate "
        f"already differed there is not seen)"), 1)


def _scale_fell_after(records: Sequence[Any], skipped: Sequence[Any]) -> bool:
    """Each of the ``skipped`` steps' loss scale is larger than the next step's:
    the scaler found an overflow there and skipped the optimizer's step."""
    scale = {rec.step: rec.scale for rec in records}
    return all(rec.scale is not None and scale.get(rec.step + 1) is not None
               and scale[rec.step + 1] < rec.scale for rec in skipped)


def before_restart_text(r: RunResult) -> str:
    """Why a run that differs before its first restart is not judged."""
    q = r.first_divergent_quantity or ""
    wider = ("" if q.startswith("data") else  # (the data a step reads is compared as is)
             "; a wider --rtol/--atol may judge it")
    return (
        f"inconclusive: {q} differs from step {r.first_divergent_step}, before the first "
        f"restart at {r.resume_at[0]}: the run's first half, replayed from step 0, does not "
        "reproduce the reference within the tolerance, so the program is not deterministic "
        "enough to judge this resume (no save or restore had happened yet). `resumecheck "
        f"baseline` shows what differs first{wider}"
    )


def _loss_after_rate(r: RunResult) -> str:
    """Where the learning rate differs first and that step's loss is alike,
    the step the loss first differs at (trial 503: a user comparing loss
    curves looked for a difference at the rate's step, and found none)."""
    t, step = r.trajectory, r.first_divergent_step
    if not (r.first_divergent_quantity or "").startswith("learning rate") or t is None \
            or step is None:
        return ""
    if step in t.differs.get("loss", []):
        # (trial 814: a rate computed from the step's own gradients, LARS by hand, named
        # first where the loss of that step differed too, which the rate cannot explain;
        # trial 821: not of one of several optimizers, a GAN's G loss computed after D's step)
        return (" (its loss differs too: where the step computes its loss before its "
                "optimizer steps, as most do, this rate cannot explain it, and what that loss "
                "reads differs from the start of the step)"
                if r.first_divergent_quantity == "learning rate" else "")
    later = _first_after(t, "loss", step)
    return (f" (its loss is alike: a step computes its loss before its optimizer steps with "
            f"the rate; the loss differs from step {later})" if later else "")


def _first_after(t: Trajectory, kind: str, step: int) -> int | None:
    """The first step after ``step`` at which ``kind`` differs (None: none)."""
    return next((s for s in t.differs.get(kind, []) if s > step), None)


def _loss_after_state(r: RunResult) -> str:
    """Where a parameter or gradient differs first (an average of the weights
    kept as a module) and the loss only later: where the rate and the loss do
    (trial 546: an EMA's weights differed from step 9, its evaluation cut the
    rate at 16, and the loss departed at 18; "9 parameter ..." beside a loss
    figure read as a loss that differed at 9)."""
    t, step = r.trajectory, r.first_divergent_step
    if quantity_kind(r.first_divergent_key or "") not in ("param", "grad") or t is None \
            or step is None or step in t.differs.get("loss", []):
        return ""
    said = [f"{name} from step {later}" for kind, name in (("lr", "the learning rate"),
                                                            ("loss", "the loss"))
            if (later := _first_after(t, kind, step))]
    return f" ({' and '.join(said)})" if said else ""


def _divergence_text(r: RunResult, own_checkpoint: bool, position: str | None = None) -> str:
    q = r.first_divergent_quantity or ""
    text = (f"{_older_checkpoint_text(r)}{q} differs from step {r.first_divergent_step}"
            + _loss_after_rate(r) + _loss_after_state(r))
    if q.startswith("state of"):
        text = f"the final {q} differs"
        if not r.max_abs_loss_diff:
            text += _ALL_STEPS_MATCH
        if PARAMS in r.ended_otherwise:  # (its parameters matched at every step)
            # (trial 189: BatchNorm's running statistics a checkpoint lost, which an
            # evaluation read before the end, read as nothing wrong before it)
            text += ("; of params, what differs at the end is its buffers, which no step "
                     "compares: an evaluation that reads them (BatchNorm's running statistics "
                     "in eval mode) may have differed before the end")
    if not r.dropped and r.checkpoint == "engine" and own_checkpoint:
        if any(f.detail.startswith(REORDERED) for f in r.diagnosis):
            text += ("; the engine restored every declared component, into an optimizer "
                     "built over its parameters in another order")
        elif r.lossy_loads():
            text += _lossy_text(r.lossy_loads())
        elif later := r.later_restore_otherwise():
            text += (f"; the engine restored every declared component at {r.resume_at[0]}, and "
                     f"what its run held at {later[0].step} differs in "
                     f"{', '.join(dict.fromkeys(f'`{f.component}`' for f in later))}: the "
                     "steps after a restart leave declared state otherwise")
        elif q.startswith("state of"):  # (a trial: a position counted from the restart)
            text += ("; the engine restored every declared component and every step after it "
                     "matched: the steps after a restart leave declared state otherwise (state "
                     "no component declares that they read, or the program's own code after "
                     "a restart)")
        else:
            text += _NOT_CAPTURED
    text += _optimizers_rate(r) + _differs_clause(r.diagnosis, r.steps_match(), r) \
        + _no_cause_found(r)
    idle = [f for f in r.diagnosis if f.status in (LATENT, PUT_BACK)]
    # (trial 468: resumed at 3 and 10, departed after 3; only a finding at 10, after the
    # departure, and no lead at all: that one is a consequence, not what departed)
    later = [f for f in r.diagnosis if f.status == AFTER_DIVERGENCE]
    if not r.dropped and r.checkpoint == "program" and len(idle) + len(later) == len(
            r.diagnosis) and r.verdict == DIVERGED:
        # (a trial: a lost worker seed left only a latent stream, and no lead at all)
        # (where only the end state differs, evidence.annotate says it, once it
        # knows whether a stream explains it)
        if not q.startswith("state of"):
            if position is not None:  # (a trial read them last, after undeclared state)
                text, position = text + "; " + POSITION_UNUSED.format(position), None
            text += (NONE_DIFFERS + _at_each_load(r) if not idle
                     else "; what differs in the declared components right after your load() "
                     "changes no step here")
            # (a trial: a replay buffer rebuilt without its maxlen matched every declared state)
            text += UNDECLARED_LEAD + _UNDECLARED_EXAMPLES
        if split_rank_name(r.first_divergent_key or "")[0] == "lr":
            text += _RATE_FIRST
    if position is not None:
        text += "; " + POSITION_UNUSED.format(position)
    text += latent_text(r)
    return text + _noise_clause(r)


def _at_each_load(r: RunResult) -> str:
    """Of a schedule of several restarts, where ``NONE_DIFFERS`` was looked at:
    at the first against the uninterrupted run, at the later ones against what
    the run saved there (trial 458 read it as said of a second load whose state
    differed from the uninterrupted run's, the run having departed before)."""
    departed = r.first_divergent_step
    after = [k for k in r.resume_at if departed is not None and k >= departed]
    if len(r.resume_at) < 2 or not after:
        return ""
    before = ", ".join(str(k) for k in r.resume_at if k not in after)
    if any(f.status == AFTER_DIVERGENCE for f in r.diagnosis):  # (those differ: see them)
        return f" at {before}, the restore the run departed after"
    return (f" at {before}, nor, against what your save() wrote there once the run had "
            f"departed, at {', '.join(map(str, after))}")


def _lossy_text(lossy: list[Finding]) -> str:
    """What the engine's full resume says of declared components that did not
    come back as saved: those a load gave back and something changed before the
    first step (a trial: a callback reset in on_train_begin), and those whose
    own load_state_dict() did not bring them back (a trial: a sampler that lost
    its position). Trial 433: a callback of the first kind, beside a position of
    the second, was said not to have come back."""
    changed = [f"`{f.component}`" for f in lossy if changed_after_load(f.detail)]
    # (trial 862: a random state set into a generator another load had made anew)
    stale = [f"`{f.component}`" for f in lossy if NO_LONGER_USED in f.detail]
    # (trial 891: a generator a later component's load drew from, after its own load)
    moved = [f"`{f.component}`" for f in lossy if MOVED_BY_LATER_LOAD in f.detail]
    lost = [f"`{f.component}`" for f in lossy if not changed_after_load(f.detail)
            and NO_LONGER_USED not in f.detail and MOVED_BY_LATER_LOAD not in f.detail]
    gave = (f"{', '.join(changed)}, which {'its load' if len(changed) == 1 else 'their loads'} "
            f"gave back, {'was' if len(changed) == 1 else 'were'} changed before the first step")
    went = (f"{', '.join(stale)} went into generators {NO_LONGER_USED}, which another "
            "component's load made anew (see the WARNING)")
    if moved and not stale and not lost and not changed:
        return (f"; the engine restored every declared component, and {', '.join(moved)}, "
                f"which {'its' if len(moved) == 1 else 'their'} own load gave back, "
                f"{'was' if len(moved) == 1 else 'were'} changed by a later component's load "
                "(see the WARNING)")
    if stale and not lost and not changed:
        return f"; the engine restored every declared component, and {went}"
    if not lost:
        return f"; the engine restored every declared component, and {gave}"
    its = "its state_dict() gave it" if len(lost) == 1 else "their state_dict() gave them"
    return ("; the engine restored every declared component through its own "
            f"load_state_dict(), and {', '.join(lost)} did not come back as {its}"
            + (f"; {gave}" if changed else ""))


def _optimizers_rate(r: RunResult) -> str:
    """Where a dropped optimizer departs first in the learning rate, why the
    rate is the optimizer's (trial 220: a new user looked for momentum buffers
    in a row that named only the rate); where the model's inputs depart first
    and a random stream is the cause (dropped, or confirmed), that they hold
    what a step draws too (two trials' diffusion noise and input masks read
    as a data loader's fault)."""
    first = split_rank_name(r.first_divergent_key or "")[0]
    # (trial 476: a scheduler's restore made the next phase's optimizer, whose rate
    # the restart stepped with, not the build's)
    if r.dropped == [OPTIMIZER] and first == "lr":
        # (trial 479: read as if the optimizer carried the rate alone; trial 572: a SAM
        # wrapper whose state holds no momentum read "such as momentum")
        return (" (the optimizer's param_groups hold the learning rate a scheduler sets, "
                "beside its per-parameter state (whatever its state_dict() holds: Adam's moments, "
                "SGD's momentum buffers, Adagrad's sums and steps), "
                "lost with it: dropped, the restart steps with the rate its build gave it, or "
                "another component's restore: one that makes the optimizer anew)")
    if first.startswith("inputs:") and (RNG in r.dropped or any(
            f.status == CONFIRMED and is_stream_detail(f.detail) for f in r.diagnosis)):
        return (" (the model's inputs are its batch and what a step draws into it, noise or "
                "masks: a random stream that differs makes them differ too)")
    return _also_differs(r, first)


def _also_differs(r: RunResult, first: str) -> str:
    """Where the data departs first, that the learning rate differs too (trial
    738: a step counter dropped read only as other samples, where its warm-up
    rate differed from the same step); where something else departs first,
    that the samples read differ too, from a later step (trial 751: a lost
    stream, read as dropout's drift alone, drew the next epoch's order)."""
    differs = r.trajectory.differs if r.trajectory is not None else {}
    data = first == "data" or first.startswith("inputs:")
    if data and differs.get("lr"):
        return f"; the learning rate differs too, from step {min(differs['lr'])}"
    if first == "scale" and differs.get("loss"):  # (trial 760: 13 loss scale, the loss at 31)
        return f"; the loss differs from step {min(differs['loss'])}"
    if not data and first and differs.get("data"):
        return f"; the samples read differ too, from step {min(differs['data'])}"
    return ""


def _at_the_last_step(r: RunResult) -> bool:
    """A run that departs in the last step, in a quantity a step computes after
    its loss (a learning rate, a gradient, a parameter): no loss reads it."""
    last = r.trajectory.steps[-1] if r.trajectory is not None and r.trajectory.loss else None
    return (r.verdict == DIVERGED and r.first_divergent_step is not None
            and r.first_divergent_step == last and not r.steps_match()
            and split_rank_name(r.first_divergent_key or "")[0] != "loss")


def _apart_by_rounding(r: RunResult) -> str:
    """What a silent run's ULP figure is of: the one kind of quantity that
    differs, in words (trial 800: "by at most 1 ULP" of a row whose loss was
    bitwise equal, its learning rate 1 ULP apart, read as of the loss)."""
    kinds = [k for k, steps in (r.trajectory.differs if r.trajectory else {}).items() if steps]
    if kinds in (["lr"], ["scale"]):
        return f"its {quantity_name(kinds[0])} alone is apart "
    if len(kinds) == 1 and kinds[0] not in ("grad", "param"):
        return f"its {quantity_name(kinds[0])} is apart "
    return ""


def _matches_again(r: RunResult) -> str:
    """Of a silent run whose steps match again before its last one: which steps
    differ, and from when they match (trial 811: a loss scale apart at steps
    5, 9 and 13 only, every step from 14 on alike, read as a run that ends
    otherwise); said of the steps, not of the end state, which a run that
    departs does not compare."""
    t = r.trajectory
    apart = sorted({s for steps in (t.differs.values() if t else ()) for s in steps})
    if t is None or not apart or not t.loss or apart[-1] >= t.first_step + len(t.loss) - 1:
        return ""
    if r.steps_match():  # (trial 864: "differ" beside "every step ... match", --tolerance close)
        return (f" (of the steps after the restart, {_few_steps(apart)} differ in their last "
                f"bits, within the tolerance; every step from {apart[-1] + 1} on matches bit "
                "for bit again)")
    # (trial 890: a scaler's growth count a step behind to the end read as recovered)
    return (f" (of the steps after the restart, {_few_steps(apart)} differ; every step from "
            f"{apart[-1] + 1} on matches again, though the state the run ends with is not "
            "compared where a step departed: it may still hand on other state)")


def _scale_alone(r: RunResult) -> str:
    """Of a silent run whose steps differ in the loss scale alone, that the
    weights match (trial 890: a GradScaler made anew after the load, under
    bf16, read as a run whose weights departed; they matched for 700 steps)."""
    t = r.trajectory
    if t is None or set(t.differs) != {"scale"} or not {"loss", "grad", "param"} <= set(
            t.compared):
        return ""
    return ("; only the loss scale differs: every step's loss, gradients and parameters "
            "match bit for bit (a loss scale reaches the weights through a step it skips, "
            "on inf or NaN gradients, and no step here was skipped otherwise; a run whose "
            "gradients overflow may skip one)")


ULP_APART = ("the last bits of a value computed otherwise, as the same value reached another "
             "way rounds, and as lost state may compute it: not noise")
"""What a silent run's why says of a difference of a few ULP."""


def _noise_clause(r: RunResult) -> str:
    """What the seed-to-seed band says of a diverged run ('' when not judged)."""
    if r.plausible is None and not r.max_abs_loss_diff and _at_the_last_step(r):
        # (trial 161: a learning rate 4.6x off at the last step read "silent")
        return (f"; no loss can show it: the run ends at step {r.first_divergent_step}, where "
                "it departs, before a later step's loss reads what differs (more --steps show "
                "whether it matters): plausible or gross is not judged")
    if r.plausible is True and not r.max_abs_loss_diff:
        # (trial 166: an EMA's own evaluation loss differed, and "nothing in the loss")
        # (trial 182: "plausible" in the why of a row the noise column calls silent)
        # (trial 623: a rate 1 ULP apart at two steps, nothing else apart, read as an
        # average of the weights that differed)
        ulp = r.max_ulp_diff
        # (trial 830: "rounding" read as noise, of a rate a lost SWALR computed otherwise)
        where = "where its steps differ" if r.steps_match() else "where it departs"
        apart = _apart_by_rounding(r)
        # (trial 864: the weights, bit for bit alike, went unsaid)
        alike = (", every step's loss, gradients and parameters matching bit for bit"
                 if " alone " in apart else "")
        rounding = (f" ({where}, {apart}by at most {ulp:g} ULP{alike}: "
                    f"{ULP_APART})" if ulp is not None and 0 < ulp <= 4 else "")
        return (f"; nothing in the training loss shows it{rounding}: silent but different"
                + _matches_again(r) + _scale_alone(r))
    if r.plausible is True:
        # (seven trials read "plausible" of a model's weights dropped as reassurance)
        # (trial 485: "this early" of a resume at step 27 of 30)
        anew = ("; the band is between runs of other seeds, whose weights start elsewhere "
                "too: a model whose weights start anew at the resume point may stay within it"
                if PARAMS in r.dropped else "")
        close = (r.noise_ratio or 0.0) >= _NEAR_THE_EDGE
        # (a trial's loss, 0.9x the band, was beyond the seeds' spread at several steps:
        # "stays within" read as at every step, where the band is its widest one; trial
        # 427's, 0.52x the band, was beyond it at 5 of 10 steps: the band is said always)
        return (f"; loss stays within seed-to-seed noise {_band_steps(r)} (within the widest "
                f"spread of the seeds' runs at any of those steps, not at each{anew}): plausible "
                "but different" + (f" (the loss differing by at most {r.noise_ratio:.2f}x that "
                                   "spread: close to it, a band measured from a few runs is "
                                   "rough)" if close else "") + _beyond_at(r))
    if r.plausible is False:
        at = "" if r.leaves_band_at is None else f" at step {r.leaves_band_at}"
        # (a trial read "leaves the band from step 13 on" of a loss identical at 13 and 14
        # that left the band at 18: the steps the band is measured over come apart)
        return (f"; loss leaves the seed-to-seed band{at} (the band, measured "
                f"{_band_steps(r)}, is 0): gross" if r.noise_ratio == math.inf else
                # (trials 303, 305: "at most 1.34x it" read as a riddle: what of what)
                f"; loss leaves the seed-to-seed band{at} (measured {_band_steps(r)}, the loss "
                f"differing by at most {_beyond_one(r.noise_ratio or 0.0)}x the band's width): "
                "gross"
                + (_ONLY_JUST if (r.noise_ratio or 0.0) < _JUST_BEYOND else "")
                + _beyond_before(r))
    return ""


_NEAR_THE_EDGE = 0.75
"""A plausible run's largest loss difference from this many times the band's
width on is said to be close to it."""

_JUST_BEYOND = 1.25
"""A gross run's largest loss difference below this many times the band is said
to be only just beyond it (trials 187, 194 read "gross" of 1.01-1.04x the band
as a large departure)."""

_ONLY_JUST = (", but only just: a band measured from a few runs is rough (more "
              "--noise-seeds make it steadier), and a difference this close to it may "
              "read as noise on a loss curve")


def _beyond_one(ratio: float) -> str:
    """A ratio above 1 in as few digits as show that it is (a trial read "(1x):
    gross" of 1.0005 as a contradiction)."""
    for digits in range(3, 8):
        shown = f"{ratio:.{digits}g}"
        if ratio <= 1 or float(shown) > 1:
            return shown
    return f"{ratio:.8g}"


def _beyond_at(r: RunResult) -> str:
    """Of a plausible run, the steps where its loss differs by more than the
    seeds' runs differ at that same step ('' where none)."""
    if not r.beyond_at:
        return ""
    return (f"; beyond the seeds' spread at the same step at {_few_steps(r.beyond_at)}: a loss "
            "curve read "
            "step by step beside another seed's may show it")


def _beyond_before(r: RunResult) -> str:
    """Of a gross run, the steps before it leaves the band where its loss
    already differs by more than the seeds' runs differ at that same step."""
    if not r.beyond_at:
        return ""
    return f"; before that, beyond the seeds' spread at the same step at {_few_steps(r.beyond_at)}"


def _few_steps(steps: list[int]) -> str:
    """``steps 13, 14 and 15``, or the first three of more and how many besides."""
    return (steps_text(steps) if len(steps) <= 4 else
            "steps " + first_few([str(s) for s in steps], 3))


def _band_steps(r: RunResult) -> str:
    """The steps the band is measured over (a trial: one divergence read gross at one
    resume point and plausible at another, with nothing saying the band is each run's own;
    trials 195, 197: "learning rate differs from step 10; ... noise from step 9 on" read as
    two steps that contradict each other: the band's are the restart's)."""
    return f"over the steps after the restart at {band_from(r)}"


def band_from(result: RunResult) -> int:
    """The restart after which a run's loss is measured against the band: the
    last before it departs (trial 160: restarted at 6 and 20 and departing at
    21, it read "within seed-to-seed noise from step 7 on", over fourteen
    steps it matched in), else its first."""
    departed = result.first_divergent_step
    if departed is None:
        return result.resume_at[0]
    return max((k for k in result.resume_at if k < departed), default=result.resume_at[0])


_UNDECLARED_EXAMPLES = (
    " (a sampler's epoch that set_epoch sets, an iterator's position, its workers' seeds or "
    "how far their streams have drawn, a counter in your module, a setting of a declared "
    "object that its state leaves out: a deque's maxlen), or something drew from a stream or "
    "changed state between the load and the first step")

_RATE_FIRST = (
    "; the learning rate is the first to differ: a schedule's own settings are in no "
    "state_dict() (a LambdaLR's function and what it reads, such as a warm-up length; the "
    "totals given to a scheduler's constructor). A scheduler that the build or your load() "
    "makes from other settings than the run's sets another rate once it steps, even with "
    "its state restored; so does code of yours that sets the rate from a count it keeps"
)
"""(a trial: a load() that made the scheduler from the default settings' warm-up, in a run
launched with another, was told only of samplers, iterators and counters)"""

def launch_settings_suspected(own: RunResult, engine: RunResult, launched: dict[str, Any],
                              config_declared: bool) -> bool:
    """Whether the program's own full resume departs with no lead in the
    declared state, launched with settings its restart is built without,
    where the engine's restart does not show them harmless (it resumes with
    no declared ``config`` to carry them back): the settings may be the cause."""
    idle = all(f.status in (LATENT, PUT_BACK) for f in own.diagnosis)
    return bool(launched) and own.verdict == DIVERGED and idle and not (
        engine.verdict == IDENTICAL and not config_declared)  # (built from the defaults, resumes)


def launch_settings_failed(own: RunResult, launched: dict[str, Any]) -> bool:
    """Whether the program's own full resume, launched with settings its
    restart is built without, failed (building or loading its restart, or in
    a step after it: trial 444's loader, built from the defaults, was skipped
    past its end): the settings may be the cause."""
    return bool(launched) and own.verdict == FAILED


def note_launch_settings(own: RunResult, engine: RunResult, launched: dict[str, Any],
                         config_declared: bool, own_matter: bool | None = None) -> None:
    """A run through the program's own save/load that departs with no lead in
    the declared state, launched with settings its restart is built without:
    say so (a trial: a dropout rate given at launch, its layer built from the
    default at the restart, the config restored after the build; nothing named).
    ``own_matter``: whether that resume, its restarts built with the launch
    settings, resumes (True), departs as before (False: nothing is said), or
    was not tried or is mixed (None)."""
    if launch_settings_failed(own, launched):
        # (a trial: a layer size given at launch, the restart built with the default
        # one, its load failing on the shapes: nothing named the setting. Another:
        # told so where its load failed as well with them)
        in_a_step = not own.explanation.startswith((BUILDING, RESTORING))
        if own_matter is False or (in_a_step and not own_matter):  # (a step: where shown)
            return
        own.explanation += (
            f"; the run was launched with {settings_text(launched)}, and its restart is built "
            "from the program's defaults: "
            + ("what the build makes from a setting (a loader's batch size), which the load "
               "does not make again, is the default's there: built with them, the restart "
               "resumes" if in_a_step else "a setting the build or the load needs "
               + ("is missing there: built with them, the restart loads and resumes"
                  if own_matter else "may be missing there"))
            + ". If your launcher passes them again, say so: Target(restart_config=\"run\")")
        return
    if own_matter is False or not launch_settings_suspected(own, engine, launched,
                                                            config_declared):
        return
    engine_too = ("; the engine's restart, built with the settings its capture holds, "
                  "resumes" if engine.verdict == IDENTICAL else "")
    if own_matter:
        engine_too += "; and built with them, your own resume resumes"
    said = (
        f"the run was launched with {settings_text(launched)}, and its restart is built "
        "from the program's defaults: a setting the build reads (a dropout rate, a layer's "
        "size, a seed for the data order) stays the default's (a load() that restores the "
        f"settings comes after the build, too late for it){engine_too}. Build the restart "
        "from the saved settings, "
        "or, if your launcher passes them again and your load() makes nothing again from "
        "other settings (a scheduler from the defaults' warm-up), say so: "
        "Target(restart_config=\"run\")")
    lead = undeclared_lead(own.explanation)
    if lead is not None:
        # (a trial: a dropout rate given at launch was named after a sampler's
        # epoch, an iterator and the streams, as the last of the causes)
        own.explanation = own.explanation.replace(
            lead, f": {said}; else, what it leaves different is {NOT_DECLARED}", 1)
    else:
        own.explanation += f"; {said}"


def note_config_dropped(runs: Sequence[RunResult], launched: dict[str, Any]) -> None:
    """An ablation of ``config`` that departs says what it dropped: its
    restart is built from the program's defaults, not the settings the run
    was launched with (trial 262: the row said only that the loss differs)."""
    if not launched:
        return
    for r in runs:
        if r.dropped == [CONFIG] and r.verdict == DIVERGED:
            r.explanation += ("; without `config` the restart is built from the program's "
                              "defaults, not the run's launch settings "
                              f"({settings_text(launched)})")


def note_ablations(runs: list[RunResult], launched: dict[str, Any],
                   restarted_with: dict[str, Any]) -> None:
    """What the report says of its ablations once every run is judged
    (``restarted_with``: the launch settings each restart is built with,
    restart_config="run"; empty where it is built from the defaults)."""
    note_confirmed_blind_spots(runs)
    note_config_dropped(runs, launched)
    note_needed_to_restore(runs)
    if restarted_with:
        for r in runs:
            if r.dropped == [CONFIG] and CONFIG_AS_BUILT in r.explanation:
                r.explanation = r.explanation.replace(CONFIG_AS_BUILT, CONFIG_RESTARTED)


def note_needed_to_restore(runs: Sequence[RunResult]) -> None:
    """An ablation whose restore failed, where the engine's full resume
    restored the same capture: without what it dropped the checkpoint cannot
    be restored (trial 281: a component that adds the optimizer's unfrozen
    groups before the optimizer's load read only as a failed row, and
    ``assert_components_exercised`` could not tell)."""
    full = next((r for r in runs if r.checkpoint == "engine" and not r.dropped), None)
    if full is None or full.verdict == FAILED:
        return
    for r in runs:
        if r.dropped and r.verdict == FAILED and r.explanation.startswith(f"{RESTORING} failed"):
            names = ", ".join(f"`{n}`" for n in r.dropped)
            r.explanation += (f"; the engine's full resume, which restores {names} too, restored "
                              f"this capture: without {names} {CANNOT_RESTORE_WITHOUT}, so the "
                              "program needs it")


def note_engine_lacks_settings(engine: RunResult, launched: dict[str, Any]) -> None:
    """The engine's full resume departs, and built with the launch settings it
    resumes (the WARNING says so): its why says that, not that the declared
    components do not capture the program's state (a trial: `--seed 3`, the
    WARNING naming the settings and the row the components)."""
    engine.explanation = _NOT_CAPTURED_SAID.sub(
        "; the engine restored every declared component, and its restart is built from "
        f"the program's defaults, not with the run's launch settings ({settings_text(launched)}): "
        "built with them, it resumes (see the WARNING)", engine.explanation, count=1)


def note_engine_resumes(own: RunResult, engine: RunResult) -> None:
    """The program's own full resume departs with no lead in the declared state
    (no declared component differs right after its load()), where the engine's
    restart, which puts that same state into a fresh build, resumes: what
    differs lies outside the declared state, and the load() leaves it so (a
    trial: a replay buffer restored without its maxlen; the why listed the
    usual causes of undeclared state without saying why the engine resumed)."""
    lead = undeclared_lead(own.explanation)
    if engine.verdict in (IDENTICAL, CLOSE) and lead is not None:
        own.explanation = own.explanation.replace(
            lead, "; the engine's restart, which puts that same declared state into "
            f"a fresh build, resumes: what differs is {NOT_DECLARED} that your "
            "load() leaves otherwise", 1)


def note_dropped_alike(own: RunResult, trajectory: list[Any],
                       ablations: Sequence[tuple[RunResult, list[Any]]]) -> None:
    """A finding of the program's own full resume that a rerun put right after
    its load() to no change (``NOT_CAUSE``), where the engine's resume without
    that component alone departs as the program's own does, step for step
    (``trajectory``: the own resume's; each ablation's beside it): said in the
    finding and in the why (trial 510: its load() made the epoch's order from
    the epoch before the rerun could set it, and the report said only that,
    put right alone, the run departs no later)."""
    if own.verdict != DIVERGED:
        return
    alike = {run.dropped[0] for run, seen in ablations
             if len(run.dropped) == 1 and run.verdict == DIVERGED and seen == trajectory}
    # (trial 643: settings, whose rerun is no evidence either way, read a bare "not judged")
    found = [f for f in own.diagnosis if f.component in alike and (
        f.status == NOT_CAUSE or (f.status is None and f.component == CONFIG))]
    if not found:
        return
    before = _differs_clause(own.diagnosis, own.steps_match())
    own.diagnosis = [replace(f, detail=f.detail.removesuffix(_CONFIG_RERUN) + LEFT_OUT_ALIKE,
                             status=LIKELY, confirmed=False)
                     if f in found else f for f in own.diagnosis]
    if before:
        own.explanation = own.explanation.replace(
            before, _differs_clause(own.diagnosis, own.steps_match()), 1)
    # (trial 559: led by three causes that were none, the one that was came after "but")
    # (a position that drives nothing, the iterator the load makes reading from the epoch's
    # start, departs so too: fixtures/trust/position_unused.py)
    # (trial 675: an epoch its save() never wrote was told to set it in load())
    said = (f"; the engine's resume without {', '.join(f'`{f.component}`' for f in found)} "
            "alone departs as yours does, step for step: the likely cause, which your load() "
            "reads before a rerun can put it right after it (an order or an iterator it makes "
            "from it), or which nothing reads where it matters (a declared position that does "
            "not drive the iterator your load() makes again from the epoch's start); check "
            "that your save() writes it and that your load() sets it from what was written "
            "before what reads it, and have what it decides follow it")
    start = own.explanation.find(_NO_CAUSE_LEAD)
    end = own.explanation.find("; ", start + len(_NO_CAUSE_LEAD)) if start >= 0 else -1
    own.explanation = (own.explanation + said if start < 0 else
                       own.explanation[:start] + said if end < 0 else
                       own.explanation[:start] + said + own.explanation[end:])


def note_save_moves(own: RunResult, moved: dict[int, list[str]]) -> None:
    """The program's own save() changed state training reads where the
    reference saved: say so in its own resume's why (a trial: a save() that
    left the model in eval mode was read as a load() that must set the mode)."""
    said = [f"at step {k}: {', '.join(moved[k])}" for k in own.resume_at if moved.get(k)]
    _modes_set_by_save(own, moved)
    if said:
        own.explanation += (
            f"; your save() changes state that training reads ({'; '.join(said)}): the run "
            "that saved goes on from what it left, and the resume is compared with that run "
            "(if the save should leave nothing changed, that is a bug of the save)")


_MODES_WHILE_TRAINING = (
    "which set that mode while it trained (frozen batch norm, an average of the weights kept "
    "for evaluation): a module's mode is not in its state_dict(): a load() sets it again, or "
    "the program does before it uses the module")
"""Why a module is in eval mode in the uninterrupted run, where training set it."""


def _modes_set_by_save(own: RunResult, moved: dict[int, list[str]]) -> None:
    """A module in eval mode in the uninterrupted run because its save() set
    it there: the finding says so, not that training did and a load() must
    (a trial's save() measured accuracy in eval mode and never switched
    back; the diagnosis, confirmed, sent the fix to load())."""
    for i, f in enumerate(own.diagnosis):
        k = f.step if f.step is not None else (own.resume_at[0] if own.resume_at else None)
        by_save = f"{f.component} (its modules' train/eval modes)" in moved.get(k or -1, [])
        if by_save and _MODES_WHILE_TRAINING in f.detail:
            own.diagnosis[i] = replace(f, detail=f.detail.replace(
                _MODES_WHILE_TRAINING, f"where your save() at step {k} set that mode (see the "
                "why): if the save should leave the modes as they were, the save is what to "
                "fix, not the load"))


def _differs_clause(diagnosis: Sequence[Finding], ends_only: bool = False,
                    run: RunResult | None = None) -> str:
    """The explanation's clause on restored state, each finding with its mark
    (``ends_only``: the run's steps all matched, and only its end differs;
    ``run``: the run, where an ablation's later restores are said as saved)."""
    if not diagnosis:
        return ""
    # (a trial read "rng, data_cursor (confirmed)" as both confirmed: rng was not judged)
    # (a trial: streams the program set right itself in its first step, which
    # matched, were the only lead of a why whose cause a component left out)
    leads = [f for f in diagnosis if f.status == CONFIRMED
             or (not righted_only(f.detail) and f.status != PUT_BACK)]
    if not leads:
        return ""
    unjudged = " (not judged)" if any(f.mark for f in leads) else ""
    # (trial 387: "the run departs as before" of a run whose steps all matched, where
    # its diagnosis line said it ends otherwise as before)
    return "; restored state differs in " + ", ".join(
        _what_differs(f) + _saved_after_a_drop(run, f)
        + (ENDS_AS_BEFORE if ends_only and f.status == NOT_CAUSE else LEFT_OUT_ALIKE_MARK
           if f.status == LIKELY else f.mark or unjudged)
        for f in leads)


def _saved_after_a_drop(run: RunResult | None, finding: Finding) -> str:
    """Of an ablation restarted more than once, a component it did not drop
    found otherwise at a later restore: the engine restored it as this run
    saved it there, after its first restart left the dropped ones out (trial
    420: `drop global_step` read "restored state differs in early_stopping",
    a best step recorded from the counter dropped at the first restart, as if
    early_stopping had a part in it)."""
    if run is None or not run.dropped or run.checkpoint != "engine" or finding.step is None \
            or len(run.resume_at) < 2 or finding.step <= run.resume_at[0] \
            or split_rank_name(finding.component)[0] in run.dropped:
        return ""
    return (f" (as this run saved it at {finding.step}, after its restart at "
            f"{run.resume_at[0]} without {', '.join(run.dropped)})")


def _no_cause_found(r: RunResult) -> str:
    """Where every declared component that differs after the load was put
    right in a rerun and none changed where the run departs: what that
    leaves (a trial's load() made its loader's iterator anew, from the
    epoch's start; its declared position, put right, drove nothing, and the
    report named no cause at all)."""
    judged = [f for f in r.diagnosis if f.status not in (LATENT, PUT_BACK)]
    if r.verdict != DIVERGED or not judged or any(f.status != NOT_CAUSE for f in judged):
        return ""
    # (trial 139: "none of it" read as dangling where the why named no component first)
    named = ", ".join(dict.fromkeys(f"`{f.component}`" for f in judged))
    return (_NO_CAUSE_LEAD + f" ({named}) changes where the run departs: the program may not "
            "read it where it matters (a declared "
            "position that does not drive the iterator your load() makes again from the "
            "epoch's start), something may draw "
            "from a stream between the load and the first step, or what your load() leaves "
            f"different is {NOT_DECLARED} as well")


_NO_CAUSE_LEAD = "; put right in a rerun, none of what differs right after the load"
"""How ``_no_cause_found`` opens (it holds no other semicolon: it is cut there)."""


def _what_differs(finding: Finding) -> str:
    """A finding's component, or its modes where they alone differ (a trial
    read `ema (differs, not the cause)` as its checkpointed weights suspect,
    where only its train/eval mode after the load differed)."""
    only_modes = finding.detail.startswith(_MODE_TEXTS) and _FROZEN_TEXT not in finding.detail
    if only_modes:
        return f"the train/eval mode of {finding.component}"
    # (trial 494: "restored state differs in params (confirmed)" of weights restored bit for
    # bit, embeddings left frozen: read as weights not restored)
    if frozen_only(finding.detail):
        return f"which parameters of {finding.component} train (requires_grad)"
    # (trial 840: "restored state differs in optimizer" of one whose state came back bit
    # for bit, left stepping the tensors of a model the load replaced)
    if finding.detail.startswith(DETACHED):
        return f"which tensors {finding.component} steps"
    return (f"which optimizer {finding.component} steps"
            if finding.detail.startswith("steps ") and _REBOUND_TEXT in finding.detail
            else finding.component)


def latent_text(r: RunResult) -> str:
    """The latent-gap clause of an explanation (empty: none)."""
    if not r.latent_gaps:
        return ""
    restored = {f.component for f in r.diagnosis}  # (else found at the end only)
    parts = r.latent_parts()
    wrong = [part for name, part in parts.items() if name in restored]
    between = [part for name, part in parts.items()
               if name not in restored and name in r.latent_between]
    moved = [part for name, part in parts.items()
             if name not in restored and name not in r.latent_between]
    # (a trial read "restored wrongly" of streams its program never draws from
    # as a defect of a correct program)
    what = [f"{', '.join(wrong)} restored otherwise than the uninterrupted run had it"] \
        if wrong else []
    what += [f"{', '.join(between)} held otherwise after the restart's first step ("
             + "; ".join(r.latent_between[name] for name in r.latent_between) + ")"
             ] if between else []
    what += [f"{', '.join(moved)} ending otherwise than in the uninterrupted run (right after "
             "the restore, or changed after it otherwise than that run changed it)"] if moved else []
    ended = [name for name in r.latent_ended if name in parts]
    ends = (f"; the run ends with {', '.join(ended)} otherwise than the uninterrupted run, "
            "which hands a later step or a later restart the wrong state" if ended else "")
    return (
        f"; latent gap: {'; '.join(what)}, in state that changed no step after the restart "
        "here (a component unused, only entries nothing reads, or read where its wrong value "
        "changed no step: what else it did there, a file it wrote, is not compared)"
        f"{ends}; it matters once it leads elsewhere: another resume point, "
        "or a second restart after this one, may show it (--resume-at K,K2; resumecheck fuzz "
        "tries many schedules)"  # (a trial: 'it matters once' gave no hint of how to see it)
    )


def _absent(ref: Reference, segments: Segments, step: int, key: str) -> str:
    """`` (none in the resumed run)`` for a gradient one side does not have at
    ``step``: a parameter without one did not train (frozen, or unused), which
    "differs" would hide."""
    if quantity_kind(key) != "grad":
        return ""
    mine, theirs = _records_at(ref, segments, step)
    if mine is None or theirs is None:
        return ""
    if key in theirs.digests and key not in mine.digests:
        return " (none in the resumed run: " + _why_no_gradient(mine) + ")"
    if key in mine.digests and key not in theirs.digests:
        return " (none in the uninterrupted run: " + _why_no_gradient(theirs) + " there)"
    return ""


def _unstepped(ref: Reference, key: str) -> str:
    """`` (of `ema`, a module no optimizer steps)`` for a parameter of
    such a module (trial 601: `parameter ema.module.3.weight` of an average of
    the weights read as a weight that training updates)."""
    base = split_rank_name(key)[0]
    if quantity_kind(base) != "param":
        return ""
    head = base.split(":", 1)[1].split(".", 1)[0]
    if head not in (ref.segment.boundaries.get("unstepped_modules") or ()):
        return ""
    return f" (of `{head}`, {NOT_STEPPED_MODULE})"


def _steps_counted(ref: Reference, segments: Segments, step: int, key: str) -> str | None:
    """The first divergence where the learning rates differ only in how many a
    step read, each one the same (trial 389: a discriminator stepped twice in
    a regularized step, decided by a step counter off by one, read as a
    learning rate that differs, where no rate ever changed): the number of
    optimizer steps."""
    if split_rank_name(key)[0] != "lr":
        return None
    mine, theirs = _records_at(ref, segments, step)
    if mine is None or theirs is None or not mine.lr or not theirs.lr \
            or len(mine.lr) == len(theirs.lr):
        return None
    counted = (f"number of optimizer steps ({len(mine.lr)} learning rate"
               f"{'' if len(mine.lr) == 1 else 's'} read, {len(theirs.lr)} in the uninterrupted "
               "run")
    if set(mine.lr) == set(theirs.lr):
        return f"{counted}, each alike)"
    gone = not_stepped(theirs, mine)  # (trial 493: a GAN's generator, unstepped)
    return f"{counted}; {gone} did not step)" if gone else None


def _calls_counted(ref: Reference, segments: Segments, step: int, key: str) -> str | None:
    """The first divergence where a step called the model fewer (or more)
    times than the uninterrupted run's step (``key``, an input only one side
    has, is the first that differs): the number of calls, not the data (trial
    159: a validation made every third step, by a step counter dropped, read
    as `data (the model's inputs)`); with whether the inputs both made agree
    (trial 431: "the first one agrees" of an agent that acted in one run and
    explored in the other, where none agreed)."""
    base, rank = split_rank_name(key)
    if not base.startswith("inputs:"):
        return None
    mine, theirs = _records_at(ref, segments, step)
    if mine is None or theirs is None or (key in mine.digests) == (key in theirs.digests):
        return None

    def inputs(record: StepRecord) -> list[str]:
        return [k for k in record.digests
                if split_rank_name(k)[0].startswith("inputs:") and split_rank_name(k)[1] == rank]

    here, there = len(inputs(mine)), len(inputs(theirs))
    both = min(here, there)
    if not both:
        said = f": {'this run' if not here else 'the uninterrupted run'} did not call it at all"
    elif any(mine.digests[k] != theirs.digests[k] for k in inputs(mine) if k in theirs.digests):
        said = "; the inputs both made differ too"  # (trial 489: only the count was said)
    else:
        said = "; the first one agrees" if both == 1 else f"; the first {both} agree"
    if mine.lr and theirs.lr and list(mine.lr) != list(theirs.lr):
        said += "; its learning rate differs too"  # (trial 489: L-BFGS's line search)
    on = '' if rank is None else f' on rank {rank}'
    if mine.calls and mine.calls == theirs.calls:  # (trial 502: one call each, one without
        # the hidden state a restart lost, read as "number of model calls")
        return (f"model inputs{on} ({here} tensor{'' if here == 1 else 's'}, {there} in the "
                f"uninterrupted run, in {mine.calls} call{'' if mine.calls == 1 else 's'} "
                f"each{said})")
    if mine.calls and theirs.calls:  # (trial 543: "number of model calls (2 input
        # tensors, 6 ...)" of 1 call against 3, counted in tensors only)
        tensors = ("" if (here, there) == (mine.calls, theirs.calls) else
                   f"; {here} input tensor{'' if here == 1 else 's'}, {there} there")
        return (f"number of model calls{on} ({mine.calls} call"
                f"{'' if mine.calls == 1 else 's'}, {theirs.calls} in the uninterrupted run"
                f"{tensors}{said})")
    return (f"number of model calls{on} ({here} input "
            f"tensor{'' if here == 1 else 's'}, {there} in the uninterrupted run{said})")


def _why_no_gradient(record: StepRecord) -> str:
    """Why a step's record holds no gradient of a parameter: gradients are
    recorded as the optimizer steps, so a step that did not step it (a loss
    scaler that skipped it) records none at all (a trial: a skipped step
    read as a parameter that "got no gradient"); one that stepped with no
    gradient at all says so (trial 290: parameters a load() made anew, which the
    model used and the optimizer, built over the first ones, did not, read
    "its optimizer did not step")."""
    if not any(quantity_kind(key) == "grad" for key in record.digests) and not record.skipped \
            and record.lr is not None:
        return ("its optimizer stepped with no gradient on any parameter it holds: the loss "
                "reaches other tensors, such as parameters a load() made anew")
    if record.skipped or not any(quantity_kind(key) == "grad" for key in record.digests):
        return "its optimizer did not step"
    return "that parameter got no gradient"


def _one_sided(ref: Reference, segments: Segments, step: int, keys: list[str]) -> int:
    """How many of ``keys`` (gradients) one run has at ``step`` and the other
    does not, where the first of them is so; 0 otherwise."""
    mine, theirs = _records_at(ref, segments, step)
    if mine is None or theirs is None or quantity_kind(keys[0]) != "grad":
        return 0
    lacking = [k for k in keys if (k in mine.digests) != (k in theirs.digests)]
    return len(lacking) if keys[0] in lacking else 0


def _others(key: str, also: list[str], lacking: int = 0) -> str:
    """`` (the largest of 4 parameters that differ)``, `` (and on rank 0 at this step)``,
    `` (and of plateau)``: the others of the first quantity's kind that differ
    at its step too (the end state's: the other components that end otherwise).
    ``lacking``: how many of them one run has no gradient of, the first among
    them (trial 494: "the largest of 41" of one of 5 gradients the resumed run
    lacked, each ranked first, the other 36 rescaled by clipping)."""
    if key.startswith("state:"):  # (the end state: the other components that end otherwise)
        others = [k.removeprefix("state:") for k in also if k.startswith("state:")]
        return f" (and of {', '.join(others)})" if others else ""
    base, rank = split_rank_name(key)
    kind = {"param": "parameter", "grad": "gradient"}.get(quantity_kind(key))
    names = {split_rank_name(k)[0] for k in also} - {base}
    ranks = {split_rank_name(k)[1] for k in also} - {rank, None}
    # (trial 550: "the largest of 8 parameters" of a student with 4 named, the other 4 its
    # declared teacher's, which no name showed)
    paths = [n.split(":", 1)[-1] for n in names | {base}]
    heads = sorted({p.split(".", 1)[0] for p in paths})
    under = (f", in modules {', '.join(f'`{h}`' for h in heads[:-1])} and `{heads[-1]}`"
             if all("." in p for p in paths) and 1 < len(heads) <= 3 else "")
    out = (f" (the largest of {len(names) + 1} {kind}s that differ{under})" if names and kind
           else "")
    if names and kind and lacking:
        of = "" if lacking == len(names) + 1 else f", of {len(names) + 1} that differ"
        # (trial 840 read "one of 4 gradients one run lacks" of all 4 as a partial loss)
        out = (f" ({lacking} {kind}s one run lacks, this one among them{of})" if lacking > 1
               else f" (the one {kind} one run lacks{of})")
    if ranks:
        # (trial 405 read the rank named, the one that differs most, as where it began;
        # trial 412 read "1 more rank" as a count to work out: the ranks are named)
        listed = [str(r) for r in sorted(r for r in ranks if r is not None)]
        said = (" and ".join(listed) if len(listed) <= 3
                else f"{', '.join(listed[:3])} and {len(listed) - 3} more")
        out += f" (and on rank{'s' if len(listed) > 1 else ''} {said} at this step)"
    return out


def quantity_name(key: str) -> str:
    """A digest key (``grad:fc.weight``) in words (``gradient of fc.weight``)."""
    key, rank = split_rank_name(key)  # a quantity of one rank of many
    if rank is not None:
        return f"{quantity_name(key)} on rank {rank}"
    head, _, name = key.partition(":")
    return {
        "data": "data (the samples consumed)",
        "inputs": "data (the model's inputs)",
        "lr": "learning rate",
        "scale": "loss scale",
        "loss": "loss",
        "skipped": "skipped step",
        "grad": f"gradient of {name}",
        "param": f"parameter {name}",
        "state": f"state of {name}",
        "init": "the initial parameters, at build",
    }.get(head, key)


def drop_sets(drop: DropSpec, names: Sequence[str]) -> list[list[str]]:
    """The runs a ``drop`` asks for, each a list of dropped names in declaration
    order; the full resume (nothing dropped) first. Unknown names raise."""
    if isinstance(drop, str):
        if drop == "all":
            return [[]] + [[n] for n in names]
        if drop == "none":
            return [[]]
        drop = [drop]
    sets: list[list[str]] = [[]]
    for item in drop:
        group = [item] if isinstance(item, str) else list(item)
        checked = validate_drop(group, names)
        ordered = [n for n in names if n in checked]
        if ordered and ordered not in sets:
            sets.append(ordered)
    return sets


def note_untraced(runs: Sequence[RunResult], records: Sequence[StepRecord],
                  unhooked: str | None = None) -> list[str]:
    """What the reference's steps could not trace (``untraced``); where that is
    their parameters and gradients, a run whose end state alone differs says
    only its loss matched at every step (a trial: "every step's loss,
    gradients and parameters match" beside "not traced: parameters and
    gradients")."""
    untraced_lines = untraced(records, unhooked)
    lacking = next((said for line in untraced_lines for what, said in (
        ("parameters and gradients", " (every step's loss matches; its parameters and "
                                     "gradients were not traced)"),
        ("gradients and", " (every step's loss and parameters match; its gradients were not "
                          "traced)"),
        ("parameters:", " (every step's loss and gradients match; its parameters were "
                        "compared at the end only)")) if line.startswith(what)), None)
    if lacking is None:
        return untraced_lines
    for run in runs:
        run.explanation = run.explanation.replace(_ALL_STEPS_MATCH, lacking)
    return untraced_lines


_ALL_STEPS_MATCH = " (every step's loss, gradients and parameters match)"


def _inputs_untraced(keys: set[str], records: Sequence[StepRecord],
                     unhooked: str | None) -> list[str]:
    """``untraced``'s line on the model's inputs, where they were not traced."""
    if unhooked and not any(key == "data" for key in keys):
        # (trial 484: a scripted model was refused as the program's failure; traced
        # without its inputs, the container line would have told it to declare the model)
        return [f"the model's inputs: the model is {unhooked}, and no step returned its "
                "samples, so data that differs shows first in the loss (return them, "
                "StepOutput(samples=...))"]
    if unhooked or not any(key.startswith("param:") for key in keys) or any(
            key == "data" or key.startswith("inputs:") for key in keys):
        return []
    if any(rec.calls for rec in records):
        # (trial 579: a policy called with a Python int state, which it made a tensor itself,
        # was said to be called in no step)
        return ["the model's inputs: the module traced as the model was called with no "
                "tensor (a number, or another object it makes its tensors from), and no step "
                "returned its samples, so data that differs shows first in the loss (return "
                "them, StepOutput(samples=...))"]
    # (trial 219: a GAN's generator and discriminator declared as one
    # nn.ModuleDict, which no step calls, read `9 loss` where the data differed)
    return ["the model's inputs: the module traced as the model (the `params` component, or "
            "the program's `model` attribute) was called in no step (a container such as an "
            "nn.ModuleDict is not; its members are), and no step returned its samples, so data "
            "that differs shows first in the loss (return them, StepOutput(samples=...), or "
            "declare as `params` the module the step calls with its data and the others as "
            "components of their own)"]


def untraced(records: Sequence[StepRecord], unhooked: str | None = None) -> list[str]:
    """What the reference's steps could not trace, each with why and what to
    declare (empty when parameters, gradients and the learning rate were traced;
    ``unhooked``: why the model's inputs could not be, its kind taking no hooks)."""
    if not records:
        return []
    keys = {split_rank_name(key)[0] for rec in records for key in rec.digests}  # (trial 258)
    out = []
    if not any(key.startswith(("param:", "grad:")) for key in keys):
        # (trial 617: parameters in a dict of tensors, with an Adam written by hand, were
        # told to give the program a `model` attribute, which it had no module for)
        out.append("parameters and gradients: no torch.nn.Module was found as the `params` "
                   "component or the program's `model` attribute, so a divergence shows "
                   "first in the loss, a step after it begins (give the program a `model` "
                   "attribute that is the nn.Module holding them; parameters kept outside "
                   "any, in a dict of tensors, cannot be traced)")
    if any(key.startswith("grad:") for key in keys) and not any(
            key.startswith("param:") for key in keys):
        # (trial 472: parameters in a plain dict, its optimizer declared: gradients were
        # traced, parameters were not, and a run said "every step's ... parameters match")
        out.append("parameters: no torch.nn.Module was found as the `params` component or the "
                   "program's `model` attribute (the gradients are traced through the declared "
                   "optimizer), so parameters are compared at the end of a run only, not at "
                   "every step (hold them in an nn.Module, or give the program a `model` "
                   "attribute that is one)")
    out += _inputs_untraced(keys, records, unhooked)
    if all(rec.lr is None for rec in records):
        # (trial 399: a GAN's two optimizers held by one object of the program's own;
        # its parameters traced, no gradient was, and this line named the rate alone)
        grads = (any(key.startswith("param:") for key in keys)
                 and not any(key.startswith("grad:") for key in keys))
        # (trial 478: said of a declared SAM optimizer, whose base stepped in its stead)
        out.append(f"{'gradients and ' if grads else ''}learning rate: " + (
            "the torch optimizer traced did not step in any step (a loss scaler that skipped "
            "every one, or an optimizer that another one steps in its stead: give the program "
            "an `optimizer` attribute that is the one that steps)"
            if all(rec.skipped for rec in records) else
            "no torch optimizer was found as a declared component or the program's "
            "`optimizer` attribute (give the program an `optimizer` attribute, or declare "
            "each optimizer as a component of its own: a GAN's two, say; an update written "
            "by hand, with no torch.optim.Optimizer, cannot be traced, and a rate that "
            "differs shows first in what that step's update changes)"))
    return out
