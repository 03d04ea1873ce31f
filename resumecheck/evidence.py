"""Evidence beyond the first divergent quantity, for a resumed run that departs.

* **Streams after the restore**: every declared random stream is recorded at
  the start of every step; the first steps after each restore are compared
  with the reference's, and a stream that differs is searched a bounded
  number of draws forward and back (``resumecheck.streams``), so the report
  says "torch CPU stream is 1 draw ahead at the start of step 10" and names
  the usual cause, instead of only "loss differs". In a distributed run each
  rank's streams are searched apart (``torch[rank 1]``); when several ranks
  are off alike, the explanation says so once for all of them.
* **Data in words**: when the first divergent quantity is the samples a step
  consumed (or the model's inputs) and they are integers, it reads as a count
  ("3 of 16 samples differ, first at position 5: 17 vs 42 in the
  reference"), not as a magnitude.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch

from resumecheck.compare import Tolerance, compare_values, describe_entries
from resumecheck.components import (
    OPTIMIZER, RNG, SCHEDULER, rank_name, seeded_state, split_rank_name,
)
from resumecheck.report import (
    AFTER_DIVERGENCE, CONFIRMED, DIVERGED, FAILED, IDENTICAL, LATENT, LOST_ON_RESAVE, NOT_CAUSE,
    PUT_BACK, RunResult, StreamOffset,
)
from resumecheck.phrases import (
    LEFT_UNRESTORED, MADE_ANEW, POSITION_OTHER_EPOCH, POSITION_TRANSFORMED, READ_BEFORE,
    NONE_DIFFERS, STARTED_LEVEL, UNDECLARED_LEAD, first_few, ordinal, position_named,
    unused_position,
    SAME_PLACE,
)
from resumecheck.program import declares_no_epochs, epoch_boundaries, next_epoch_start
from resumecheck.segments import SegmentResult
from resumecheck.capture import load_checkpoint
from resumecheck.state_diff import describe_difference, values_apart
from resumecheck.streams import (
    SEED_CALLS, STEPS_AFTER_RESTORE, draw_offset, initial_seed, is_stream_detail,
    is_stream_state, search_reach, stream_digests, stream_items, stream_label,
)
from resumecheck.trace import (
    StepRecord, differing_quantities, load_step_tensors, load_stream_states,
)
from resumecheck.trajectory import quantity_kind

__all__ = ["EPOCH_AGAIN", "OTHER_EPOCH", "annotate", "cleared_streams", "describe_data",
           "describe_end_state", "epoch_place", "not_stepped", "offsets_shared_with",
           "set_right_during", "stepped_otherwise", "steps_apart", "stream_offsets",
           "streams_level", "telling",
           "unclear_streams"]


_DROPPING = "which drops"
"""How the restorer of an engine ablation is named (``annotate``), which the
wording of its streams (``_detail``) recognizes: that restore sets no dropped
stream, so no cause of a program's load() applies."""


def annotate(result: RunResult, reference: SegmentResult,
             segments: Sequence[tuple[int, SegmentResult]]) -> None:
    """Add the stream offsets and the data in words to a judged run, and say
    the stream finding in its explanation."""
    if result.verdict in (IDENTICAL, FAILED):
        return
    result.stream_offsets = stream_offsets(
        reference, segments, result.first_divergent_step,
        restorer=(reference.boundaries.get("restored_by") or "your load()")
        if result.checkpoint == "program" else
        f"the engine's restore, {_DROPPING} {', '.join(result.dropped)} here,"
        if result.dropped else "the engine's restore")
    result.streams_level = not result.stream_offsets and streams_level(
        reference, segments, result.first_divergent_step)
    quantity = result.first_divergent_quantity or ""
    key = result.first_divergent_key or ""
    if split_rank_name(key)[0] == "data":  # the loader's own generator draws the samples: it leads
        loaders = set(reference.boundaries.get("loader_generators") or ())
        result.stream_offsets.sort(key=lambda o: split_rank_name(o.stream)[0] not in loaders)
    _branch_note(result)
    if quantity.startswith("state of ") and segments:
        name = key.removeprefix("state:") if key.startswith("state:") else \
            quantity.removeprefix("state of ")
        # (trial 263: a dropped scheduler one step behind at the end was offered a
        # framework's restore and a save before scheduler.step() as causes)
        result.divergence_detail = describe_end_state(reference, segments[-1][1], name,
                                                      causes=name not in result.dropped)
    elif result.first_divergent_step is not None:
        result.divergence_detail = describe_data(reference, segments, result.first_divergent_step,
                                                 result.first_divergent_key)
        lacking = _gradients_one_run_has(reference, segments, result)
        if lacking:
            result.divergence_detail = "; ".join(filter(None, (result.divergence_detail,
                                                               lacking)))
    if result.divergence_detail:
        result.explanation += f"; {result.divergence_detail}" + (
            _COUNT_ENDS if quantity.startswith("state of ") and not result.max_abs_loss_diff
            and _COUNT_AT_THE_END.match(result.divergence_detail) else "")
        _position_in_another_epoch(result)
        _position_kept_samples_changed(result)
    cleared, put = cleared_streams(result), cleared_streams(result, PUT_BACK)
    if result.stream_offsets and put:
        # (a trial: a loader's generator the program replays was offered as a lead)
        note = (f" ({put}, which holds it, differs right after the restore and was put back "
                "by the program: see its note)")
        result.stream_offsets = [replace(o, detail=o.detail + note) for o in result.stream_offsets]
    elif result.stream_offsets and cleared:
        # (a rerun with the stream put right changed nothing: said so on each line,
        # and the explanation, which names the finding, does not repeat them)
        note = _not_the_cause(cleared)
        result.stream_offsets = [replace(o, detail=o.detail + note) for o in result.stream_offsets]
    elif result.stream_offsets:
        result.explanation += _stream_clause(result.stream_offsets)
    result.explanation += _end_only_lead(result) + _samples_stand_for_data(reference, result)


_COUNT_AT_THE_END = re.compile(r"\S+ at the end: -?\d+, expected -?\d+$")
"""A run's divergence in a whole number alone at its end (a step count)."""

_COUNT_ENDS = (
    # (trials 839, 840, 841, 844: a step count that bounds the loop, lost, trains longer or
    # crashes a schedule in a real relaunch; "silent" read as harmless)
    " (the check runs as many steps after the restart as the uninterrupted run did: where "
    "your loop's length or a schedule's bound reads this count, while step < total_steps, "
    "a relaunch that loses it trains another number of steps, or fails)")
"""What a why adds where only a count at the end differs, its loss alike."""


def _samples_stand_for_data(reference: SegmentResult, result: RunResult) -> str:
    """Where a full resume first departs in what a step computes (its loss, a
    gradient, a parameter) with no lead (nothing declared differs that matters,
    no stream found), and the step returns its samples, which matched: the
    model's inputs were not compared (trial 458: noise its loader's workers
    drew anew after the restart changed the inputs, and the report, which said
    `loss` first, never said that the inputs were not looked at)."""
    key, step = result.first_divergent_key or "", result.first_divergent_step
    if result.dropped or result.verdict != DIVERGED \
            or quantity_kind(key) not in ("loss", "grad", "param"):
        return ""
    record = next((rec for rec in reference.records if rec.step == step), None)
    kinds = {quantity_kind(k) for k in record.digests} if record is not None else set()
    if "data" not in kinds or "inputs" in kinds:
        return ""
    if result.stream_offsets or any(f.status not in (LATENT, PUT_BACK)
                                    for f in result.diagnosis):
        # (trials 538, 541: beside a lost stream that augments or masks, `loss` first
        # read as data alike, where the samples returned were indices)
        # (a stream other than torch's global one, which dropout draws from: Python's,
        # numpy's, a generator of the program's)
        streams = any(split_rank_name(f.component)[0] == RNG
                      and not f.detail.startswith(("torch CPU", "torch CUDA", "CUDA"))
                      for f in result.diagnosis)
        exact = record is not None and any(quantity_kind(k) == "data" for k in record.exact)
        return (f"; the samples it returned match at step {step}: the model's inputs, not "
                "compared where a step returns its samples, may differ all the same (what a "
                "stream draws, an augmentation or a mask, changes them, not the indices)"
                if streams and exact else "")
    if reference.boundaries.get("restored_by"):  # (trial 577: a Lightning target has no
        # StepOutput of its own to leave `samples` out of)
        return SAMPLES_STAND_FOR_DATA.split("; leave `samples`", 1)[0] + (
            ": the framework's adapter returns the samples of its batch, and no "
            "setting of it compares the model's inputs instead")
    return SAMPLES_STAND_FOR_DATA


SAMPLES_STAND_FOR_DATA = (
    "; the samples it consumed match: a step that returns its samples is judged by them, so "
    "what the model was called with (an augmentation of them, drawn in the dataset or in the "
    "loader's workers) goes unchecked; leave `samples` out of the StepOutput to compare the "
    "model's inputs instead")
"""A why's clause where nothing leads but the model's inputs were not compared
(``_samples_stand_for_data``); a lead of uncompared lost state found later
takes it out (``verdict``; trial 542: said beside a carried hidden state)."""


def _rates(ref: StepRecord, rec: StepRecord, step: int, rank: int | None) -> str | None:
    """The learning rates of ``step`` that differ, against the uninterrupted
    run's (trial 141: a failing test said no |Δ| was measured for the rate and
    showed neither). A merged record of many ranks keeps rank 0's rates."""
    rates, expected = rec.lr, ref.lr
    if rank not in (None, 0) or not rates or not expected:
        return None
    where = f"step {step}" if rank is None else f"step {step} on rank {rank}"
    if len(rates) != len(expected):
        # (trial 457: a group added by add_param_group when a counter reached a step, the
        # counter dropped: "learning rate differs" of a head whose rate was alike)
        def listed(values: list[float]) -> str:
            return ", ".join(f"{v:.6g}" for v in values[:4]) + (" ..." if len(values) > 4 else "")

        gone = not_stepped(ref, rec)
        # (trial 493: a GAN's generator optimizer, stepped every second step by a counter
        # the checkpoint lost, read "a parameter group it stepped is not in this run's
        # optimizers")
        missing = (f"{gone} stepped in the uninterrupted run and not in this one "
                   f"({_STEPS_AT_SOME})" if gone else
                   "a parameter group it stepped did not step in this run (one added with "
                   f"add_param_group during the run, or {_STEPS_AT_SOME})"
                   if len(rates) < len(expected) else
                   "this run steps a parameter group that is not in its optimizers (one added "
                   "with add_param_group during the run, or an optimizer that steps in one run "
                   "only)")
        return (f"learning rate of {where}: {len(rates)} rate{'s' if len(rates) > 1 else ''} "
                f"({listed(rates)}) where the uninterrupted run stepped {len(expected)} "
                f"({listed(expected)}): {missing}")
    differ = [(i, a, b) for i, (a, b) in enumerate(zip(expected, rates)) if a != b]
    if not differ:
        return None
    other = _other_optimizer(ref, rec, where)
    if other:
        return other

    def named(i: int) -> str:
        several = len(set(rec.lr_of)) > 1 and i < len(rec.lr_of)
        calls = rec.lr_call if len(rec.lr_call) == len(rates) else [0] * len(rates)
        # (trial 176: "group 1 of `optimizer_heads`", its only group: counted among both
        # optimizers' groups; each optimizer's own from 0, and each of its step()s'
        # own from 0: trial 184's two discriminator updates read as two groups)
        owners = rec.lr_of if several else [""] * len(rates)
        group = sum(1 for j in range(i) if (owners[j], calls[j]) == (owners[i], calls[i]))
        owner = f" of `{rec.lr_of[i]}`" if several else ""
        call = f" at its {ordinal(calls[i] + 1)} step() this step" if any(calls) else ""
        return f"group {group}{owner}{call} " if len(rates) > 1 else ""

    # (trial 173: a warm-up's 0.003*6/6 read "0.003, expected 0.003": as many digits
    # as tell them apart, as a diagnosis says two values)
    shown = "; ".join(f"{named(i)}{values_apart(b, a)}" for i, a, b in differ[:3])
    # (trial 230: "and 5 more groups" of one group's rates at 8 step() calls a step)
    calls = rec.lr_call if len(rec.lr_call) == len(rates) else [0] * len(rates)
    later = min(calls[i] for i, _, _ in differ[3:]) > max(calls[i] for i, _, _ in differ[:3]) \
        if len(differ) > 3 else False
    kind = ((" group" if len(differ) == 4 else " groups") if not any(calls) else
            " at later step() calls this step" if later else
            " (other groups, or other step() calls this step)")
    more = f" and {len(differ) - 3} more{kind}" if len(differ) > 3 else ""
    return f"learning rate of {where}: {shown}{more}"


def stepped_otherwise(ref: StepRecord, rec: StepRecord) -> bool:
    """Whether a step read its learning rates of other declared optimizers than
    the uninterrupted run's step did, as many of them (whose each rate is, recorded
    in both): another optimizer stepped (trial 882)."""
    return (len(rec.lr_of) == len(rec.lr or []) == len(ref.lr or []) == len(ref.lr_of) > 0
            and rec.lr_of != ref.lr_of)


def _other_optimizer(ref: StepRecord, rec: StepRecord, where: str) -> str:
    """Where as many rates were read as in the uninterrupted run's step, but of
    other declared optimizers: which stepped in each run, in words ('' where
    the same ones did, or whose is not recorded). Trial 882: a GAN's lost counter
    stepped the discriminator where the generator should have, and read
    "learning rate of `optimizer_d`: 0.002, expected 0.001", the generator's."""
    mine, theirs = rec.lr_of, ref.lr_of
    if not stepped_otherwise(ref, rec):
        return ""

    def said(owners: list[str], rates: list[float]) -> str:
        named = dict.fromkeys(owners)
        return " and ".join(
            f"`{o}` ({', '.join(f'{r:.6g}' for r, w in zip(rates, owners) if w == o)})"
            for o in named)

    return (f"the optimizer that stepped at {where}: this run stepped {said(mine, rec.lr or [])} "
            f"where the uninterrupted run stepped {said(theirs, ref.lr or [])} (the rates are "
            f"theirs; what differs is which stepped: {_STEPS_AT_SOME})")


_STEPS_AT_SOME = ("an optimizer that steps only at some steps, decided by state that differs "
                  "here: a counter of steps")
"""Why a step read fewer learning rates than the uninterrupted run's (``_rates``,
``_calls_text``; trials 493, 571: a GAN's generator stepped every second step)."""


def not_stepped(ref: StepRecord, rec: StepRecord) -> str:
    """Of a step whose run read fewer learning rates than the uninterrupted
    run's, the declared optimizers (``StepRecord.lr_of``) whose rates all went
    unread while every rate read is one of the others': those that did not
    step, in words (`` `opt_g` ``); empty where that is not known (one
    optimizer, rates alike between them, or not so)."""
    owners, expected, rates = ref.lr_of, ref.lr or [], rec.lr or []
    if len(set(owners)) < 2 or len(owners) != len(expected) or not rates \
            or len(rates) >= len(expected):
        return ""
    if len(rec.lr_of) == len(rates):  # (whose each rate read is, where recorded)
        # (trial 571: two Adams at one rate, the generator's unstepped, read "a parameter
        # group it stepped is not in this run's optimizers")
        counts = {o: (owners.count(o), rec.lr_of.count(o)) for o in dict.fromkeys(owners)}
        if set(rec.lr_of) <= set(owners) and all(b in (0, a) for a, b in counts.values()):
            return " and ".join(f"`{o}`" for o, (_, b) in counts.items() if b == 0)
        return ""
    by_value: dict[float, set[str]] = {}
    for owner, value in zip(owners, expected):
        by_value.setdefault(value, set()).add(owner)
    if any(len(o) > 1 for o in by_value.values()) or not set(rates) <= set(by_value):
        return ""  # (two optimizers at one rate: which one stepped is not told)
    read = {owner for value in rates for owner in by_value[value]}
    gone = [o for o in dict.fromkeys(owners) if o not in read]
    if rec.lr_of and set(rec.lr_of) & set(gone):
        return ""
    return " and ".join(f"`{o}`" for o in gone)


def _position_in_another_epoch(result: RunResult) -> None:
    """Where the samples read are the reference's at the same place of another
    epoch, the lead on a declared position that came back as saved says that
    the epoch's order, not the position, differs."""
    said = unused_position(result.explanation)
    names = position_named(said) if said is not None else None
    if said is None or names is None or OTHER_EPOCH not in (result.divergence_detail or ""):
        return
    result.explanation = result.explanation.replace(said, POSITION_OTHER_EPOCH.format(names), 1)


def _gradients_one_run_has(reference: SegmentResult,
                           segments: Sequence[tuple[int, SegmentResult]],
                           result: RunResult) -> str:
    """Where both runs stepped at the first step that departs and some
    parameters have a gradient in one of them only, in words ('' otherwise;
    where the first quantity to differ is itself such a gradient, the first
    divergence says so already). Trial 610: stochastic depth dropped a block
    in one run and not the other, and no figure named its gradients, which
    no comparison of values can reach."""
    step = result.first_divergent_step
    if quantity_kind(result.first_divergent_key or "") == "grad":
        return ""
    if step is None or not 1 <= step <= len(reference.records):
        return ""
    _, mine = _record(segments, step)
    theirs = reference.records[step - 1]
    if mine is None:
        return ""
    if mine.skipped or theirs.skipped:
        return ""
    grads = [{k for k in rec.digests if quantity_kind(k) == "grad"} for rec in (mine, theirs)]
    # (trial 882: the gradients are read at the optimizer's step, of what it steps: where
    # another optimizer stepped, both losses reached every parameter)
    why = ("the gradients each run's optimizer stepped: another optimizer stepped in each"
           if stepped_otherwise(theirs, mine) else
           "parameters one run's loss reached and the other's did not: a part of the model "
           "one used, or one left frozen in the other")
    said = []
    for only, whose, other in ((grads[0] - grads[1], "the resumed run", "the uninterrupted"),
                               (grads[1] - grads[0], "the uninterrupted run", "the resumed")):
        if only:
            listed = first_few(sorted(f"`{k.split(':', 1)[1]}`" for k in only), 3)
            said.append(f"at step {step} {whose} has a gradient of {listed}, which {other} "
                        f"run's has none of ({why})")
    return "; ".join(said)


def _whole(t: torch.Tensor) -> bool:
    """Whether a float tensor holds whole numbers only, within int64's range
    (indices or token ids kept as floats)."""
    return bool(torch.isfinite(t).all()) and torch.equal(t, t.round()) and (
        not t.numel() or float(t.abs().max()) < 2.0**53)


_VALUES_APART = re.compile(r"\((\d+) of (\d+) values differ")


def _samples_apart(ref: torch.Tensor, run: torch.Tensor) -> str:
    """How a step's integer samples differ: by sample (a row), and where a
    sample holds several values (a sequence of token ids), by value too (trial
    199: "86 of 96 samples differ" of 16 sequences of 6 tokens)."""
    if ref.dim() < 2 or ref.shape != run.shape or not len(ref):
        return describe_entries(ref, run, "samples")
    rows = int((ref.reshape(len(ref), -1) != run.reshape(len(run), -1)).any(1).sum())
    if not rows:
        return f"the same {len(ref)} samples"
    # (trial 672: samples=[anchors, others] of 32 pairs read "2 of 2 samples differ")
    each = ref[0].numel()
    return (f"{rows} of {len(ref)} samples differ, counted by the first dimension of what the "
            f"step returned, {each} value{'s' if each > 1 else ''} each "
            f"({describe_entries(ref, run, 'values')})")


def _position_kept_samples_changed(result: RunResult) -> None:
    """Where fewer than half the values of the first departing step's samples
    differ (the same samples, made otherwise), the lead on a declared position
    that came back as saved says so, before a position saved elsewhere (which
    reads other samples throughout). Only of samples of several values each (a
    sequence of token ids): where each sample is one number (an index), one
    that differs is another sample read (trial 259: half the indices of a batch
    from two loaders, one of them restarted, were told of an augmentation)."""
    said = unused_position(result.explanation)
    apart = _VALUES_APART.search(result.divergence_detail or "")
    names = position_named(said) if said is not None else None
    if said is None or names is None or apart is None or 2 * int(apart[1]) >= int(apart[2]):
        return
    agree = f"{apart[1]} of {apart[2]} differ"
    result.explanation = result.explanation.replace(
        said, POSITION_TRANSFORMED.format(names, agree), 1)


def _end_only_lead(result: RunResult) -> str:
    """For the program's own full resume whose every step matched and whose
    end differs, with no lead in the declared state right after the load and
    no stream that explains it: where to look (a trial: a running mean a
    plateau scheduler was stepped with, left out of the checkpoint, ended
    only the scheduler otherwise, and nothing was named)."""
    if (result.dropped or result.checkpoint != "program" or result.stream_offsets
            or not (result.first_divergent_quantity or "").startswith("state of")):
        return ""
    if any(f.status not in (LATENT, PUT_BACK) for f in result.diagnosis):
        return ""
    return ((NONE_DIFFERS if not result.diagnosis else "; what differs in the declared "
             "components right after your load() changes nothing here")
            + f"{UNDECLARED_LEAD} (a running mean a scheduler is stepped with, a counter), or "
            "that changed between the load and the first step, or your program sets declared "
            "state otherwise after a restart (a position counted from the restart, not from the "
            "restored one)")


def _branch_note(result: RunResult) -> None:
    """A stream that started level at the first step after a restore and drew
    otherwise during it, in a run whose load left other state different: name
    that state as the likelier cause (a trial: a step counter restored one
    ahead brought an evaluation forward, whose draws read as a second bug)."""
    def leads(k: int) -> str:
        # (an ablation's dropped components differ right after its restore by
        # design: a trial read a replay buffer's dropped samples, drawn from a
        # smaller buffer, as a second source of draws)
        # (a trial: a step's draws were put to a scheduler that Lightning's SWA had
        # emptied; a learning rate or a moment makes a step draw no otherwise)
        return ", ".join(c for c in dict.fromkeys([*result.dropped, *(
            f.component for f in result.diagnosis if f.step in (k, None)
            and not _is_stream_finding(f) and f.status not in _NO_LEAD)])
            if split_rank_name(c)[0] not in _DRAW_NOTHING)

    noted = []
    confirmed = {f.component for f in result.diagnosis if f.status == CONFIRMED}
    data = (result.first_divergent_quantity or "").startswith("data")
    for o in result.stream_offsets:
        k = o.step - 2  # (the stream started level at step k + 1, after the restore at k)
        lead = leads(k) if o.draws and k in result.resume_at else ""
        # (trial 225: the lead came last, after a page of draws it may not be; a line
        # that puts the draws to the data says that first)
        if lead and _FOLLOWS_THE_DATA not in o.detail:
            head, causes = o.detail.split(": ", 1)
            # (trial 568: beside a position a rerun confirmed, whose other student drew
            # fewer dropout masks, the draws were offered three causes of their own)
            settled = not result.dropped and set(lead.split(", ")) <= confirmed
            o = replace(o, detail=f"{head}{_BRANCH_HEAD.format(k + 1)}{lead}"
                        + (_CONFIRMED_TAIL if settled else f"{_BRANCH_TAIL}{causes}"))
        elif o.draws and abs(o.draws) > 2 and k in result.resume_at and data \
                and result.first_divergent_step == k + 1:  # (more than a new iterator draws)
            # (trial 201: a batch of longer sequences drew dropout masks over more tokens,
            # and the draws read as the cause of the data they followed)
            o = replace(o, detail=o.detail + _DATA_FIRST.format(k + 1))
        noted.append(o)
    result.stream_offsets = noted


_DATA_FIRST = (" (step {} read other data too: other data may draw otherwise, a batch of "
               "longer sequences more dropout, as much as a draw may make other data, a "
               "shuffle drawn anew: the first divergence says which data)")


_DRAW_NOTHING = (SCHEDULER, OPTIMIZER)
"""Components whose state a step reads only after its forward and backward
(the rate and moments of the optimizer's step): no lead for its draws."""

_BRANCH_HEAD = ": step {} read state that differs right after the restore ("
_BRANCH_TAIL = "), and a step that reads it otherwise may draw otherwise; or "
_BRANCH_NOTE = re.compile(re.escape(_BRANCH_HEAD).replace(r"\{\}", r"\d+") + ".*?"
                          + re.escape(_BRANCH_TAIL))
"""The note ``_branch_note`` puts first in a stream's causes, and its pattern."""

_CONFIRMED_TAIL = (", which a rerun confirmed as the run's cause), and a step that reads it "
                   "otherwise draws otherwise: these draws follow from it")
"""Where every lead of a stream's draws is a confirmed cause: its causes are
not offered beside it."""

_NO_LEAD = (LATENT, PUT_BACK, NOT_CAUSE, AFTER_DIVERGENCE, LOST_ON_RESAVE)
"""Finding statuses that name no cause of a difference in the steps."""


def _is_stream_finding(finding: Any) -> bool:
    return is_stream_detail(finding.detail)


def unclear_streams(result: RunResult, cleared: str) -> None:
    """The random-state components ``cleared`` (``cleared_streams`` as it
    was) are no longer found not the cause (see ``verdict.unjudge_when_incomplete``):
    the stream lines lose the note that said so, and the explanation says
    the stream finding as for a run where none was judged."""
    note = _not_the_cause(cleared)
    if not cleared or not any(o.detail.endswith(note) for o in result.stream_offsets):
        return
    result.stream_offsets = [replace(o, detail=o.detail.removesuffix(note))
                             for o in result.stream_offsets]
    result.explanation += _stream_clause(result.stream_offsets)


def offsets_shared_with(run: RunResult, full: RunResult) -> None:
    """An ablation judged before the engine's full resume departs: the stream
    offsets that resume shows too (the same stream, step and draws) are its
    own, not the drop's; the explanation says so instead of saying each
    again with the usual causes (a trial: every ablation row of a program
    whose DataLoader is made after the load carried its draw, with "step 5
    read state that differs right after the restore: data_cursor")."""
    def key(o: StreamOffset) -> tuple[str, int, int | None, str]:
        return (o.stream, o.step, o.draws, o.unit)

    theirs = {key(o) for o in full.stream_offsets}
    shared = [o for o in run.stream_offsets if key(o) in theirs]
    if not shared:
        return
    said = _stream_clause(run.stream_offsets)
    if said not in run.explanation:  # (said otherwise: put back, or not the cause)
        return
    own = [o for o in run.stream_offsets if key(o) not in theirs]
    streams: dict[str, list[int]] = {}
    for o in shared:
        name, rank = split_rank_name(o.stream)
        streams.setdefault(stream_label(name), []).extend([] if rank is None else [rank])
    labels = " and ".join(label + (f" (rank{'s' if len(ranks) > 1 else ''} "
                                   f"{' and '.join(map(str, sorted(ranks)))})" if ranks else "")
                          for label, ranks in streams.items())
    # (trial 415: "off after the restore" of a stream level there, drawn during the step)
    note = (f"; the {labels} {'is' if len(streams) == 1 else 'are'} off as in the engine's "
            "full resume (see the WARNING): not this drop's doing")
    run.explanation = run.explanation.replace(said, (_stream_clause(own) if own else "") + note, 1)
    as_full = " (as in the engine's full resume)"
    run.stream_offsets = [replace(o, detail=_BRANCH_NOTE.sub(": ", o.detail) + as_full)
                          if key(o) in theirs else o for o in run.stream_offsets]


def _not_the_cause(cleared: str) -> str:
    return (f" ({cleared}, which holds it, differs, and put right alone, the run departs no "
            "later: see the diagnosis)")


def _stream_clause(offsets: list[StreamOffset]) -> str:
    return "; " + _first_finding(offsets) + _others(offsets)


def cleared_streams(result: RunResult, status: str = NOT_CAUSE) -> str:
    """The random-state components of the diagnosis, when a rerun found each
    one not the cause ('' when there is none, or one is not so judged);
    ``status`` ``put_back``: when the program put each one back."""
    streams = [f for f in result.diagnosis if _is_stream_finding(f)]
    if not streams or any(f.status != status for f in streams):
        return ""
    return " and ".join(dict.fromkeys(f.component for f in streams))


def _others(offsets: list[StreamOffset]) -> str:
    """The other streams that differ (not the first's, nor its other ranks'),
    named, so that the words do not blame one stream where another draws the
    data (Python's ``random.sample`` beside torch's dropout)."""
    first = split_rank_name(offsets[0].stream)[0]
    others: dict[str, int] = {}
    for o in offsets:
        if split_rank_name(o.stream)[0] != first:
            others.setdefault(stream_label(o.stream), o.step)
    if not others:
        return ""
    said = "; ".join(f"{label} differs at the start of step {step} too"
                     for label, step in others.items())
    return f"; {said}"


def _first_finding(offsets: list[StreamOffset]) -> str:
    """The first offset in words; when other ranks' same stream is off by as
    much at the same step, said once for all those ranks."""
    first = offsets[0]
    base, rank = split_rank_name(first.stream)
    if rank is None:
        return first.detail
    ranks = [r for o in offsets
             for b, r in [split_rank_name(o.stream)]
             if b == base and r is not None and (o.step, o.draws, o.unit)
             == (first.step, first.draws, first.unit)]
    if len(ranks) == 1:
        return first.detail
    alike = ", ".join(map(str, ranks[:-1])) + f" and {ranks[-1]}"
    return first.detail.replace(stream_label(first.stream),
                                f"{stream_label(base)} of ranks {alike} (each)", 1)


def stream_offsets(reference: SegmentResult, segments: Sequence[tuple[int, SegmentResult]],
                   until: int | None = None, restorer: str = "your load()") -> list[StreamOffset]:
    """The streams that differ at the start of the first steps after the
    earliest restore where any does (restores after ``until``, the first
    divergent step, are not looked at: they only carry the divergence).
    ``restorer``: what restored the run, in words (the program's load(), or
    the engine's restore)."""
    ref_by_step = {r.step: r for r in reference.records}
    for k, seg in segments:
        if k <= 0 or (until is not None and k >= until) or seg.error is not None:
            continue
        for rec in seg.records[:STEPS_AFTER_RESTORE]:
            ref = ref_by_step.get(rec.step)
            if ref is None:
                continue
            keys = sorted(set(ref.streams) | set(rec.streams), key=_stream_order)
            differing = [key for key in keys if ref.streams.get(key) != rec.streams.get(key)]
            # (trial 472: a data generator drawn only at epochs' starts was told first of a
            # departure in step 8's loss, which a dropout generator drawn in it made)
            after = ref_by_step.get(rec.step + 1)
            if after is not None and after.streams:
                differing.sort(key=lambda key: after.streams.get(key) == ref.streams.get(key))
            if differing and rec.step == k + 1:  # (what the program set right is no evidence)
                righted = set_right_during(reference, seg, k)
                differing = [key for key in differing if key not in righted]
            found = differing and _offsets(
                reference, seg, k, rec.step, differing,
                _unused_after(reference, k, until) & _unused_after(seg, k, until), restorer)
            if found:  # (else only streams neither run used differ: look one step on)
                return found
    return []


def streams_level(reference: SegmentResult, segments: Sequence[tuple[int, SegmentResult]],
                  until: int | None) -> bool:
    """Whether every random stream the runs record was the reference's at the
    start of the first step after each restore before ``until`` (the first
    divergent step): nothing drew from them between the restore and that
    step. False where a restore's first step records no streams."""
    ref = {r.step: r.streams for r in reference.records}
    firsts = [(k, next((r.streams for r in seg.records if r.step == k + 1), None))
              for k, seg in segments
              if k > 0 and (until is None or k < until) and seg.error is None]
    return bool(firsts) and all(first and first == ref.get(k + 1) for k, first in firsts)


def next_draw(reference: SegmentResult, seg: SegmentResult, k: int,
              boundaries: dict[str, Any]) -> int | None:
    """For random state that a restore at ``k`` left otherwise and that the
    run never read (a latent gap): the step from which it would change the
    run, where the reference's own draws tell. Every stream left otherwise
    (at the start of the first step after the restore) was drawn, up to
    ``k``, only during the first step of an epoch, and not since: a loader's
    generator that shuffles each epoch is next drawn at the next epoch's
    first step. None: any other pattern, or no declared epochs."""
    ref = {r.step: r.streams for r in reference.records if r.streams}
    first = next((r for r in seg.records if r.step == k + 1 and r.streams), None)
    if first is None or k + 1 not in ref:
        return None
    differing = [key for key in ref[k + 1] if first.streams.get(key) != ref[k + 1][key]]
    starts = {1} | {b + 1 for b in epoch_boundaries(boundaries, reference.records[-1].step)}
    for key in differing:
        drawn = [s for s in sorted(ref) if s + 1 in ref and ref[s + 1].get(key) != ref[s].get(key)]
        if not drawn or any(s > k or s not in starts for s in drawn):
            return None
    return next_epoch_start(boundaries, k) if differing else None


def set_right_during(reference: SegmentResult, seg: SegmentResult, k: int) -> set[str]:
    """The streams (as records key them) that differ from the reference's at
    the start of step ``k + 1``, the first after the restore at ``k``, and are
    the reference's again at the start of the next: the program set them
    right itself during that step (a loader that puts its generator back to
    the epoch's start to replay the epoch's shuffle; a trial's was named a
    cause beside the stream its load lost, and told its load did not restore it)."""
    ref = {r.step: r.streams for r in reference.records}
    run = {r.step: r.streams for r in seg.records}
    first, then = run.get(k + 1), run.get(k + 2)
    if not first or not then or not ref.get(k + 1) or not ref.get(k + 2):
        return set()
    return {key for key, value in first.items()
            if value != ref[k + 1].get(key) and then.get(key) == ref[k + 2].get(key)}


def _unused_after(seg: SegmentResult, k: int, until: int | None) -> set[str]:
    """The streams a run never drew from after the start of step ``k + 1`` (the
    same at the start of every later step; its last step is not seen, so a
    divergence there, ``until``, leaves every stream in; one after the
    segment, which a later restart ended, does not: a trial's stream that the
    diagnosis called latent was still offered as a cause)."""
    later = [r.streams for r in seg.records if r.step > k and r.streams]
    if until is None or len(later) < 2 or until == seg.records[-1].step:
        return set()
    return {key for key in later[0] if all(s.get(key) == later[0][key] for s in later[1:])}


def _stream_order(key: str) -> tuple[int, int, str]:
    """The torch stream first (a loader draws from it), rank by rank."""
    order = ("torch", "cuda", "numpy", "python")
    base, rank = split_rank_name(key)
    head = base.split(":", 1)[0]
    return (order.index(head) if head in order else len(order), rank or 0, key)


def _offsets(reference: SegmentResult, seg: SegmentResult, k: int, step: int,
             keys: list[str], idle: set[str], restorer: str = "your load()") -> list[StreamOffset]:
    """``idle``: streams neither run drew from after the restore. One of them
    that is merely shifted is evidence still (a draw between the load and the
    first step, an iterator's base seed); one that is elsewhere altogether
    (not restored, never used) is left out: it cannot have mattered."""
    ref_states = _states(reference, step)
    run_states = _states(seg, step)
    out = []
    for key in keys:
        ref, run = ref_states.get(key), run_states.get(key)
        if ref is None or run is None:
            draws, unit = None, "draws"
        else:
            draws, unit = draw_offset(key, ref, run)
        if draws is None and key in idle:
            continue
        if draws is None and step != k + 1:
            # The first step after the restore drew differently (another
            # setting, another path): a stream that is not merely shifted
            # there is a consequence of that step, not evidence of its own.
            continue
        restored_so = (draws is not None and step == k + 1 and _as_restored(seg, key, run))
        unsaved = ref is None or run is None
        detail = _detail(key, step, k, draws, unit, unsaved, restored_so, restorer,
                         sample=ref if ref is not None else run,
                         epochs=reference.boundaries.get("epoch_boundaries") != [])
        if draws and step == k + 2:  # (what the first step drew, its batch may tell)
            detail = _batch_told(reference, seg, k + 1, key, draws, unit) or detail
        # (found ahead, the lead already names a draw after the set; found behind, the
        # set was undone: trial 434's load set the stream, then built its model, which
        # seeded it, and read "left it there: it did not restore it, or ...")
        set_then = (_set_then_drawn(seg, key, ref, step, k,
                                    run is not None and _as_restored(seg, key, run))
                    if step == k + 1 and ref is not None and (draws is None or draws < 0)
                    else None)
        behind = (draws, unit) if draws is not None else None  # (how far, where found)
        seeded = (_seeded_anew(key, run, [run_states, ref_states], step, k, behind, restorer)
                  if set_then is not None else None)  # (set, then seeded: the seed says more)
        if set_then is not None:  # (its set state seen: which of the leads it is)
            detail = seeded or set_then
        elif draws is None and run is not None:  # another rank's stream? (class 9)
            detail = (_another_ranks(key, run, ref_states, step, k)
                      or (_dropped_then(reference, key, run, step, detail)
                          if _drops_its_stream(restorer, key)  # (said so: _not_found)
                          else _set_back(reference, seg, key, run, step, k)
                          or _seeded_anew(key, run, [run_states, ref_states], step, k,
                                          restorer=restorer, unset=_set_nowhere(seg, key)))
                      or detail)
        elif (draws is not None and draws < 0 and step == k + 1 and run is not None
              and not _drops_its_stream(restorer, key)
              and _set_back(reference, seg, key, run, step, k) is None):
            # (behind, and a seed's state with a few draws, where no step began:
            # sharper than the four causes of a stream behind)
            detail = _seeded_anew(key, run, [run_states, ref_states], step, k,
                                  (draws, unit), restorer, _set_nowhere(seg, key)) or detail
        out.append(StreamOffset(stream=key, step=step, draws=draws, unit=unit, detail=detail))
    return out


def _dropped_then(reference: SegmentResult, key: str, run: Any, step: int,
                  detail: str) -> str | None:
    """An ablation's stream, dropped and not found near the reference's: where
    the uninterrupted run held it so at an earlier step's start, ``detail``
    says which (trial 496: "not within 64 draws" of a stream that was, 5,120
    words back, where the run's was at the start of step 1, read as one
    unrelated). None: at none."""
    earlier = _held_then(reference, key, run, step)
    if earlier is None:
        return None
    return f"{detail}: it is where the uninterrupted run's was at the start of step {earlier}"


def _batch_told(reference: SegmentResult, seg: SegmentResult, step: int, key: str,
                draws: int, unit: str) -> str | None:
    """Where ``step``, the first after the restore, read a batch of another
    size than the uninterrupted run's and its stream drew otherwise: that in
    words, since what a step draws per sample (dropout's masks, augmentation)
    follows its batch (a trial: 7 samples against 8, and the draws were put to
    causes the program did not have). None where the batches are alike in
    size, or not kept."""
    sizes = []
    for run in (reference, seg):
        kept = load_step_tensors(Path(run.tensor_dir or ""), step, run.kept) or {}
        data = kept.get(next((name for name in kept if split_rank_name(name)[0] == "data"
                              and split_rank_name(name)[1] == split_rank_name(key)[1]), ""))
        if not isinstance(data, torch.Tensor):
            return None
        sizes.append(data.shape[0] if data.dim() else 1)
    if sizes[0] == sizes[1]:
        return None
    amount = _amount(key, abs(draws), unit)
    return (f"{stream_label(key)} is {amount} {'ahead of' if draws > 0 else 'behind'} the "
            f"reference's at the start of step {step + 1}: step {step}, the first after the "
            f"restore, read {sizes[1]} samples, {sizes[0]} in the uninterrupted run, and drew "
            f"{amount} {'more' if draws > 0 else 'less'}: {_FOLLOWS_THE_DATA} (dropout's "
            "masks and augmentation per sample; a sampler's reshuffle where the step reads "
            "into a new epoch), so the data it read otherwise explain these draws (see where "
            "the run first differs)")


_FOLLOWS_THE_DATA = "what a step draws follows what it reads"
"""How a stream's words put its draws to the data a step read otherwise (``_batch_told``)."""


def _another_ranks(key: str, run: Any, ref_states: dict[str, Any], step: int,
                   k: int) -> str | None:
    """A rank's stream that is, or is a few draws from, another rank's in the
    reference: it restored that rank's state (one rank's streams saved or
    loaded for every rank). None when it is no other rank's."""
    base, rank = split_rank_name(key)
    if rank is None:
        return None
    for other_key, state in ref_states.items():
        other_base, other = split_rank_name(other_key)
        if other_base != base or other is None or other == rank:
            continue
        same = stream_digests({"s": state}) == stream_digests({"s": run})
        draws, unit = (0, "draws") if same else draw_offset(key, state, run)
        if draws is None:
            continue
        off = "" if draws == 0 else (
            f", {abs(draws)} {_singular(unit) if abs(draws) == 1 else unit} "
            f"{'ahead' if draws > 0 else 'behind'}")
        return (f"{stream_label(key)} is rank {other}'s stream in the reference at the start "
                f"of step {step}{off}, the first after the restore at {k}: rank {rank} "
                f"restored rank {other}'s state (one rank's streams saved, or loaded, for "
                "every rank)")
    return None


def _set_then_drawn(seg: SegmentResult, key: str, ref: Any, step: int, k: int,
                    in_load: bool) -> str | None:
    """A global stream the program's own load() set to the uninterrupted run's
    state at the resume point, that differs all the same at the first step:
    something moved it after the set (trial 159: a load that set torch's
    stream, then made its data iterator again and fast-forwarded it through
    the batches read, whose augmentation drew; the report offered "another
    seed, a stream not restored"). ``in_load``: it was so right after the
    load already. None: the load set it to no such state."""
    base, rank = split_rank_name(key)
    if rank is not None or stream_digests({base: ref})[base] not in seg.streams_set.get(base, []):
        return None
    where = ("in load(), after the set: it was so right after the load" if in_load
             else "in load() or between it and the first step")
    return (f"{stream_label(key)} differs from the reference's at the start of step {step}, the "
            f"first after the restore at {k}, though your load() set it to the uninterrupted "
            f"run's state at step {k}: something moved it after "
            # (trial 430: a load that built its model from the saved settings after the set)
            f"that, {where} (a draw: a model or module built or "
            "initialized after the set; an iterator made again and fast-forwarded through the "
            "batches the run had read, whose augmentation draws; a forward pass to warm up"
            "; or a seed call): set the stream last "
            "in load(), after everything that draws or seeds")


def _set_back(reference: SegmentResult, seg: SegmentResult, key: str, run: Any, step: int,
              k: int) -> str | None:
    """A stream that is, bit for bit, where the uninterrupted run's was at the
    start of an earlier step (its digests are recorded at every step's start):
    set back there, or made again as the build left it (trial 160: a numpy
    generator reset to its build state read only "not within 64 raw outputs
    of it: another seed, ..."). None: at no earlier step's start."""
    earlier = _held_then(reference, key, run, step)
    if earlier is None:
        return None
    where = (f"{stream_label(key)} at the start of step {step}, the first after the restore at "
             f"{k}, is where the uninterrupted run's was at the start of step {earlier}")
    if earlier == 1:
        return (f"{where}, as the build left it" + (_set_during(reference, seg, key, step) or (
            f": {MADE_ANEW}, or was made or seeded again after the restore")))
    # (trials 592, 594: a stream the checkpoint never held, seeded again by the build and
    # moved by the load's replay of the batches its epoch had read, was said set back to
    # a state kept then or seeded from an epoch's number)
    return (f"{where} ({step - earlier} steps earlier): it was set back to a state kept then, "
            "or seeded again as it was then (a seed from an epoch's number, at another epoch), "
            "or not restored at all and moved on from where the build seeded it by draws the "
            "restore made (batches already read, replayed through what draws from it)")


def _held_then(reference: SegmentResult, key: str, run: Any, step: int) -> int | None:
    """The first earlier step at whose start the uninterrupted run's stream
    ``key`` was ``run``, bit for bit; None: at none."""
    found = stream_digests({key: run})[key]
    return next((r.step for r in reference.records
                 if r.step < step and r.streams.get(key) == found), None)


def _seeded_anew(key: str, run: Any, states: list[dict[str, Any]], step: int, k: int,
                 off: tuple[int, str] | None = None, restorer: str = "your load()",
                 unset: bool | None = False) -> str | None:
    """A stream that is where seeding it leaves it, or a few draws past that:
    seeded again after the restore (trial 277: a load() followed by
    ``torch.manual_seed(seed)`` read only "not within 64 draws of it: another
    seed, a stream not restored, ..."). The seeds tried are those the torch
    CPU streams of that rank were last seeded with (their state keeps it), in
    the restart and in the uninterrupted run; ``off``: the draws and unit it
    is from the reference's, where the search found it; ``unset``: the
    restore set that stream nowhere (a trial's Trainer seeds it as it is
    built, and its checkpoint held no state of it: "seeded again after the
    restore" sent the user after a seed call there was not); None: not known
    (a rank's stream, whose sets are not followed: trial 512's rank 1 never
    had its stream saved, and read "seeded again after the restore" of the
    build's seed and draws). None: not so."""
    base, rank = split_rank_name(key)
    torch_key = "torch" if rank is None else rank_name("torch", rank)
    seeds = list(dict.fromkeys(seed for seed in (initial_seed(s.get(torch_key)) for s in states)
                               if seed is not None))
    for seed in seeds:
        fresh = seeded_state(base, seed)
        if fresh is None:
            continue
        same = stream_digests({key: fresh}) == stream_digests({key: run})
        draws, unit = (0, "draws") if same else draw_offset(key, fresh, run)
        if draws is None or draws < 0:
            continue
        call = SEED_CALLS[base]
        past = "" if draws == 0 else f"{_amount(key, draws, unit)} past "
        # (trial 825: a load() that restored the stream, then called the build, which seeds)
        where = ("in your load() (or code it calls: a build that seeds) or after it"
                 if restorer == "your load()" else "after it")
        # (trial 596: a seed in on_train_begin, before the Trainer's restore, which found no
        # rng_state.pth, read as set "as the program is built" or "after the restore")
        how = (f"it was seeded again after the restore (a seed call {where})" if unset is False
               else "the restore set it nowhere (the checkpoint holds no state of it, or the "
               "restore does not set it), so a seed as the program is built or starts training "
               "stands (a callback's on_train_begin, before the restore), or a seed call after "
               "the restore set it so" if unset else
               "the restore did not set it (the checkpoint holds no state of it on this rank, "
               "or the restore does not set it), so a seed as the program is built stands with "
               f"what drew since, or a seed call {where} set it so")
        return (f"{_after_restore(key, step, k, off)}{past}where seeding it with {seed} "
                f"({call}({seed})) leaves it: {how}{', so' if unset is False else ':'} the "
                "restart draws from a newly seeded stream, not the run's")
    return None


def _set_nowhere(seg: SegmentResult, key: str) -> bool | None:
    """Whether the restore of ``seg`` set the global stream ``key`` nowhere
    (of one process's streams; None: a rank's, which are not followed)."""
    base, rank = split_rank_name(key)
    return None if rank is not None else not seg.streams_set.get(base)


def _after_restore(key: str, step: int, k: int, off: tuple[int, str] | None) -> str:
    """The opening of a stream's lead at the first step after a restore, with
    how far behind the reference's it is where the search found it."""
    behind = f"{_amount(key, -off[0], off[1])} behind the reference's: " if off else ""
    return (f"{stream_label(key)} at the start of step {step}, the first after the restore at "
            f"{k}, is {behind}")


def _set_during(reference: SegmentResult, seg: SegmentResult, key: str,
                step: int) -> str | None:
    """Of a stream as the build left it at the start of ``step``, the first
    after a restore: that at the next step's start it is the uninterrupted
    run's, or a few draws from it, so something set it during that step
    (trial 180: a Lightning callback that restores it as a batch starts, one
    draw behind, read "it was not restored"). None: not so."""
    ref, run = _states(reference, step + 1).get(key), _states(seg, step + 1).get(key)
    if ref is None or run is None:
        return None
    same = stream_digests({key: ref}) == stream_digests({key: run})
    draws, unit = (0, "draws") if same else draw_offset(key, ref, run)
    if draws is None:
        return None
    off = ("where the uninterrupted run's was" if draws == 0 else
           f"{_amount(key, abs(draws), unit)} {'ahead of' if draws > 0 else 'behind'} the "
           "uninterrupted run's")
    return (f"; at the start of step {step + 1} it is {off}: something set it during step "
            f"{step}, after the step began (a callback or hook that restores it as a batch "
            "starts)" + ("" if draws == 0 else ", off by what drew from it between the load "
                         "and that set (a data loader's new iterator draws its base seed) or "
                         "during the step"))


def _as_restored(seg: SegmentResult, key: str, state: Any) -> bool:
    """Whether the stream ``key`` holds ``state`` right after the run's restore
    too (a declared random-state component kept it there): nothing drew
    between the load and the first step."""
    if not seg.restored_state:
        return False
    try:
        components = load_checkpoint(seg.restored_state, read_only=True)["components"]
    except Exception:  # (no evidence either way)
        return False
    base, rank = split_rank_name(key)
    for name, value in components.items():
        if split_rank_name(name)[1] == rank and is_stream_state(value):
            restored = stream_items(value).get(base)
            if restored is not None:
                return stream_digests({base: restored}) == stream_digests({base: state})
    return False


def _states(seg: SegmentResult, step: int) -> dict[str, Any]:
    if not seg.tensor_dir:
        return {}
    return load_stream_states(Path(seg.tensor_dir), step, seg.kept) or {}


def _not_found(key: str, unit: str, sample: Any, unsaved: bool, dropped: bool,
               restorer: str) -> str:
    """Why a stream that differs is not found shifted from the reference's."""
    if unsaved:
        return "its state was not kept"
    reach = f"{search_reach(key, unit, sample)} {unit}"
    if unit == "draws" and _torch_stream(key):
        reach += f" (nor {search_reach(key, '32-bit words', sample)} 32-bit words)"
    if dropped:
        # (trial 141: an ablation that drops the stream's component on purpose read
        # the causes of a program's lost stream as a hint of a problem)
        # (trial 425: a position component's own load made an iterator, one draw)
        return (f"not within {reach} of it: this run does not restore it "
                f"({restorer.strip(',')}), and the restart draws from it as the build and "
                "the rest of the restore left it")
    return (f"not within {reach} of it: another seed, a stream not restored, or one moved "
            "further than that (or by normal values, which this search does not follow)")


def _drops_its_stream(restorer: str, key: str) -> bool:
    """Whether an ablation's restore (``the engine's restore, which drops
    rng[rank 0] here,``) leaves out a random-stream component of the stream's
    rank (one named for it: ``rng``, ``rng_state``)."""
    if _DROPPING not in restorer:
        return False
    rank = split_rank_name(key)[1]
    dropped = restorer.split(_DROPPING, 1)[1].removesuffix(" here,").split(", ")
    return any("rng" in split_rank_name(name.strip())[0] and split_rank_name(name.strip())[1]
               == rank for name in dropped)


def _detail(key: str, step: int, k: int, draws: int | None, unit: str, unsaved: bool,
            restored_so: bool = False, restorer: str = "your load()", sample: Any = None,
            epochs: bool = True) -> str:
    label = stream_label(key)
    first = step == k + 1
    where = (f"at the start of step {step}, the first after the restore at {k}" if first
             else f"at the start of step {step} (step {k + 1}, the first after the restore at {k}, "
             f"{STARTED_LEVEL})")
    if draws is None and key.startswith("cuda"):
        return (f"{label} differs from the reference's {where} (CUDA streams are compared, not "
                "searched: their Philox offset advances by amounts that depend on the kernel)")
    if draws is None:
        return f"{label} differs from the reference's {where}; " + _not_found(
            key, unit, sample, unsaved, not restored_so and _drops_its_stream(restorer, key),
            restorer)
    n = abs(draws)
    amount = _amount(key, n, unit)
    if restored_so and _DROPPING in restorer:
        # (a trial: the engine's own ablation was offered the four causes of a
        # program's load(); a stream it restored would be the reference's)
        return (f"{label} is {amount} {'ahead of' if draws > 0 else 'behind'} the reference's "
                f"{where}, and was so right after the load (nothing drew in between): "
                f"{restorer} left it there: it does not restore it (where a fresh launch, the "
                "build and the rest of the restore left it stands)")
    if draws > 0 and restored_so:
        seeded = unit == "draws" and n == 1 and _torch_stream(key)
        drew = ("a DataLoader iterator created there after it draws its base seed: one draw"
                if seeded else "data set up again, an epoch replayed")
        return (f"{label} is {amount} ahead of the reference's {where}, and was so right after "
                f"the load (nothing drew in between): {restorer} left it there: it set a later "
                "state than the uninterrupted run's at the save (one saved after a draw the "
                f"save should come before, such as the epoch's shuffle), or drew from it after "
                f"setting it ({drew})")
    if draws > 0:
        when = ("between your load and the first step" if first
                else f"during step {k + 1} more than the uninterrupted run did")
        return (f"{label} is {amount} ahead of the reference's {where}: "
                f"{_cause(key, when, unit, n)}")
    if first and restored_so:
        return (f"{label} is {amount} behind the reference's {where}, and was so right after "
                f"the load (nothing drew in between): {restorer} {LEFT_UNRESTORED} (where a "
                # (trial 505: a load() that replayed the epoch's draws before it set the
                # other streams read 576 words behind as "where the build left it", 864)
                "fresh launch, the build and the rest of the restore left it stands), or seeded it "
                "again after restoring it (a seed call after the load), or set an earlier "
                "state than the uninterrupted run's at the save (one saved before a draw the "
                # (trial 812: "set it back ... to replay its shuffle" read as a cause, where
                # replaying the epoch's order, and the batches read, was that program's fix)
                "run still made), or set it back after restoring it (to an epoch's start) "
                "and did not draw again what the run drew since")
    if first:
        why = (f"it is where the uninterrupted run's stream was {n} {unit} earlier: it was not "
               "restored and the restart seeded it again (a program that seeds at build puts "
               "its streams back near their start), or it was saved before a draw the run "
               "still made before its next step (an iterator or a warm-up that drew after the "
               "save), or the restart skips such a draw")
    else:
        why = _skipped(key, unit, amount, k, epochs)
    return f"{label} is {amount} behind the reference's {where}: {why}"


def _amount(key: str, n: int, unit: str) -> str:
    """``n`` ``unit`` of stream ``key``, in words."""
    if unit == "draws" and n > 1 and _torch_stream(key):
        # (a trial read "39 draws" as one shuffle of 40, which takes 39 words; another
        # read "31 int64 draws" as int64 draws, where two shuffles of 32 took 62 words:
        # beyond a loader's two seeds, the words come first)
        # (trial 161 read "16 32-bit words (8 int64 draws)" of 16 values randint drew, one
        # word each; trial 238: over a range of 2**28 or more, two each, torch 2.13's CPU;
        # two trials read "62 randint values" where rsample's normals drew them: floats too)
        # (trial 600: 4 words, a collate's 4 randint values over a small range, read as
        # "2 int64 draws" of a kind the program did not make)
        return (f"{2 * n} 32-bit words ({n} int64 draws, as a shuffled loader's seeds, or "
                f"{2 * n} values of draws that take a word each, as randint over a small range)"
                if n <= 2
                # (trial 401: a dropout mask was said to take a word per value; torch
                # 2.13's CPU bernoulli_ draws a double for each, and randn under 16 values too)
                else f"{2 * n} 32-bit words ({2 * n} values of draws that take a word each, as "
                f"torch.rand, randn (of 16 values or more) and randint over a range under "
                f"2**28 do, or {n} values of draws that take two, as dropout's masks and full "
                f"int64 draws do)")
    return f"{n} {_singular(unit) if n == 1 else unit}"


def _skipped(key: str, unit: str, amount: str, k: int, epochs: bool = True) -> str:
    """Why the restart's first step drew less than the uninterrupted run's.
    (A trial: a model left in eval mode draws no dropout masks, and this named
    only an iterator, in a program that made none.) ``epochs``: False where
    the program says it has none (``epoch_boundaries = []``): no loader's
    epoch is offered (trial 535, whose generator drew less for a shorter
    sequence, read of a loader's shuffle and a RandomSampler)."""
    skipped = ("values drawn element by element, as dropout's masks and torch.rand draw "
               "them: a dropout layer left in eval mode draws none, a branch that reads state "
               "the restart lacks skips its draws" if unit == "32-bit words" and _torch_stream(key)
               else "an iterator the uninterrupted run creates in that step already exists "
               "after the load; a dropout layer left in eval mode draws no masks; a branch "
               "that reads state the restart lacks skips its draws")
    # (a trial: a loader that set its generator back to the epoch's start, from
    # an epoch the restart lacked, was told only of draws skipped)
    if not epochs:
        return (f"step {k + 1}, the first after the restore, drew {amount} less than the "
                f"uninterrupted run's: a draw the restart skips ({skipped}), or the stream set "
                "back during that step (seeded again, from a position the restart lacks)")
    return (f"step {k + 1}, the first after the restore, drew {amount} less than the "
            f"uninterrupted run's: a draw the restart skips ({skipped}), or the stream set "
            "back during that step (a loader that puts its generator back to an epoch's "
            "start to replay the shuffle, from an epoch or position the restart lacks; a "
            "shuffle of n items takes n - 1 32-bit words), or an epoch's end the uninterrupted "
            "run's iterator ran into and the restart's did not (a RandomSampler draws one more "
            "shuffle, n - 1 words, as an epoch's indices run out: a restart that makes its "
            "iterator anew there skips it)")


def _torch_stream(key: str) -> bool:
    """A torch stream (a rank's too) or a registered generator: searched in int64
    draws, then in 32-bit words."""
    return split_rank_name(key)[0] == "torch" or key.startswith("generator ")


def _cause(key: str, when: str, unit: str = "draws", count: int = 0) -> str:
    """Why a stream is ``count`` ``unit`` ahead after ``when``, in words."""
    key = split_rank_name(key)[0]  # a rank's own stream: the same causes
    if _torch_stream(key) and (unit == "32-bit words" or count > 2):
        return _words_cause(key, when, count if unit == "32-bit words" else 2 * count,
                            masks_said=unit != "32-bit words")  # (``_amount`` said them)
    net = _net(when)
    if key == "torch":
        # (trial 481: 4 words were 4 small randint draws of a dead-code restart that a lost
        # buffer made more of; the loader named first had a generator of its own)
        return (f"something drew from the torch stream {when}: a DataLoader iterator created "
                "after the load, of a loader without a generator of its own, draws its base "
                "seed (a shuffled one its shuffle's seed too: 2 draws); a prefetching loader "
                "fetches ahead; or draws of one word a value (torch.rand, randint over a small "
                "range) that a step makes more of after the restart, reading state that "
                f"differs{net}")
    if key.startswith("generator "):
        return (f"something drew from {stream_label(key)} {when}: a DataLoader iterator "
                f"created after the load draws its base seed from its generator{net}")
    if key in ("python", "numpy"):
        # (trial 408: a dataset's augmentation of the batch Accelerate's loader made
        # ahead, drawn before the save and again after the load)
        ahead = ("; where a loader makes a batch ahead of the step (Accelerate's prepared "
                 "loader does), it drew that batch's augmentation before the save and draws it "
                 "again as it makes the batch after the load" if "during" in when else "")
        return (f"something drew from the {stream_label(key)} {when} (random.random() and "
                f"np.random.rand() use two words per number){ahead}")
    return f"something drew from it {when}"


def _words_cause(key: str, when: str, words: int, masks_said: bool = False) -> str:
    """A torch stream ``words`` 32-bit words ahead: more than a loader's seeds."""
    odd = (", a count no whole number of int64 draws (a DataLoader's base seed) makes"
           if words % 2 else "")
    # (a trial: 97 words is one new iterator of a loader shuffling 96 items, which
    # the words did not put together; another, whose dataset shuffled with its own
    # generator and had no DataLoader, was told only of the loader)
    # (trial 442: 2306 words were a loader's base seed and dropout over a batch with 1152
    # more values, and read as a shuffle the program did not have)
    # (trial 598: 192 words were a WeightedRandomSampler's 96 draws with replacement, two
    # words each, and read as a randperm of 193 or a loader over 191 items)
    masks = ("" if words % 2 else
             f" a weighted sampler's {words // 2} draws with replacement (torch.multinomial),"
             if masks_said else
             f" dropout's masks over {words // 2} more values (a larger batch), a weighted "
             f"sampler's {words // 2} draws with replacement (torch.multinomial),")
    shuffles = (f" ({words} words are, for one, a randperm of {words + 1} items,{masks} or, "
                "where a DataLoader draws from it, one new iterator of a shuffled loader over "
                f"{words - 1} items: 2 for its base seed, {words - 2} for its shuffle)"
                if words > 3 else "")
    # (trial 194: 16 words were the flips of a batch Accelerate's loader made ahead, and
    # read only as a randperm of 17 items or a loader over 15, which the program had not)
    return (f"something drew from {stream_label(key)} {when}{odd}: most draws take one word "
            f"per value (torch.rand, the augmentation of a batch a prefetching loader made "
            f"ahead and makes again after the load), dropout's masks and draws with "
            # (trial 740: 40 more actions of 4 from Categorical.sample(), 8 words each, read
            # as a weighted sampler's 160 draws)
            f"replacement two, a draw of one sample (Categorical.sample(), torch.multinomial "
            f"of one) two per category, a shuffle's randperm of n items n - 1{shuffles}"
            f"{_net(when)}")


def _net(when: str) -> str:
    """Within a step (not between the load and the first step), that a count
    is the net of what the two runs drew (``_NET``)."""
    return _NET if when.startswith("during") else ""


_NET = ("; within a step the count is what the two runs drew apart, net: it may be the "
        "difference of larger draws (a RandomSampler draws one more shuffle, n - 1 words, as "
        "an epoch's indices run out, which one of the runs may not have reached)")
"""(trial 162: a new iterator's base seed and shuffle, less the shuffle a RandomSampler
draws as its epoch runs out, netted 2 words, read as one base seed; 128 words, as one
iterator of a loader over 127 items where it held 64)"""


def _singular(unit: str) -> str:
    return {"draws": "draw", "32-bit words": "32-bit word", "raw outputs": "raw output"}.get(
        unit, unit)


def describe_end_state(reference: SegmentResult, last: SegmentResult, name: str,
                       causes: bool = True) -> str | None:
    """How component ``name`` ends, against the reference's end, in words: for
    a run whose steps all match and whose end state does not (a trial: "the
    final state of scheduler differs" named nothing, while the diagnosis
    described another entry, at the restore)."""
    if not (reference.end_state and last.end_state):
        return None
    ref = load_checkpoint(reference.end_state, read_only=True)
    run = load_checkpoint(last.end_state, read_only=True)
    detail = describe_difference(name, ref["components"].get(name),
                                 run["components"].get(name), len(reference.records),
                                 ref.get("meta"), run.get("meta"), after_load=False,
                                 causes=causes)
    return None if detail is None else f"{name} at the end: {detail}"


def _skipped_step(records: Sequence[StepRecord], step: int) -> str:
    """A skipped step one run stepped, in words (the uninterrupted run's
    ``records`` say which skipped it; trial 851: led by the gradients the
    skipping run has not), and where the uninterrupted run skipped every step
    from there on, that it had stopped (trial 881's early stop)."""
    by_reference = records[step - 1].skipped
    stopped = all(r.skipped for r in records[step - 1:])
    skipper, stepper = (("the uninterrupted run", "this run") if by_reference
                        else ("this run", "the uninterrupted run"))
    if by_reference and stopped:
        return (f"step {step}: the uninterrupted run stepped no optimizer from there to its "
                "end (it had stopped training: an early stop, or a schedule's end, that the "
                f"restart does not know of), where {stepper} stepped on: state that decides it "
                "(a patience count, a best score, a flag) differs")
    return (f"step {step}: {skipper} skipped its optimizer step (a loss scale's overflow, or a "
            f"step the program skips), which {stepper} stepped: gradients are traced as an "
            "optimizer steps, so the run that skipped has none there")


def describe_data(reference: SegmentResult, segments: Sequence[tuple[int, SegmentResult]],
                  step: int, key: str | None = None) -> str | None:
    """The samples (or the model's inputs) of ``step`` in words, when they are
    the first quantity that differs there; its learning rates, when they are.
    ``key``: the quantity the run's first divergence names, described first, the
    rest in their order (on many ranks, the rank the headline names: trial 449)."""
    seg, rec = _record(segments, step)
    if seg is None or rec is None or not 1 <= step <= len(reference.records):
        return None
    keys = sorted(differing_quantities(reference.records[step - 1], rec), key=lambda k: k != key)
    if keys and split_rank_name(keys[0])[0] == "lr":
        return _rates(reference.records[step - 1], rec, step, split_rank_name(keys[0])[1])
    if keys and keys[0] in ("scale", "skipped"):  # (trial 851: a skipped step)
        return (_scales(reference, segments, step) if keys[0] == "scale"
                else _skipped_step(reference.records, step))
    if not keys or split_rank_name(keys[0])[0].split(":", 1)[0] not in ("data", "inputs"):
        return None
    ref_t = load_step_tensors(Path(reference.tensor_dir or ""), step, reference.kept)
    run_t = load_step_tensors(Path(seg.tensor_dir or ""), step, seg.kept)
    if ref_t is None or run_t is None:
        return None
    base, rank = split_rank_name(keys[0])  # (many ranks: that rank's, counted on it)
    if base == "data":
        ref, run = ref_t.get(keys[0]), run_t.get(keys[0])
        if ref is None or run is None:
            return None
        where = f"step {step}" if rank is None else f"step {step} on rank {rank}"
        elsewhere = _read_elsewhere(reference, rec, keys[0], step, ref, run)
        if (ref.is_floating_point() or ref.is_complex()) and ref.numel() != run.numel():
            # (trial 179: "torch.float64[2048], expected torch.float64[1792]" of the
            # token ids of an Accelerate loop's micro-batches, fingerprinted as floats)
            return f"samples of {where}: {run.numel()} values, {ref.numel()} in the reference" \
                + elsewhere
        if ref.is_floating_point() and all(_whole(t) for t in (ref, run)):
            # (trial 402: a framework adapter's batch, its tensors' values as floats, of
            # token ids and labels read "max |Δ| 130")
            return (f"{where}: {describe_entries(ref.long(), run.long(), 'values of the batch')}"
                    + elsewhere)
        if ref.is_floating_point() or ref.is_complex():
            return (f"samples of {where}: {compare_values(ref, run, Tolerance.bitwise()).summary}"
                    + elsewhere)
        return f"{where}: {_samples_apart(ref, run)}{elsewhere}"
    ref_keys, run_keys = ([k for k in sorted(t, key=_input_index)
                           if k.startswith("inputs:") and split_rank_name(k)[1] == rank]
                          for t in (ref_t, run_t))
    ref_in, run_in = [ref_t[k] for k in ref_keys], [run_t[k] for k in run_keys]
    if len(ref_in) != len(run_in):
        return _calls_text(step, rec, reference.records[step - 1], ref_keys, run_keys,
                           ref_in, run_in)
    apart = [i for i, (a, b) in enumerate(zip(ref_in, run_in))
             if a.shape != b.shape or a.dtype != b.dtype or not torch.equal(a, b)]
    if not apart:
        return None
    # (trial 449: "max |Δ| 4.34" was rank 0's, beside a headline naming rank 1)
    on = "" if rank is None else f" on rank {rank}"
    first = apart[0]
    which, how = _input_apart(rec, run_keys, ref_in, run_in, first)
    return (f"the model's {which} in step {step}{on}: {how}"
            + _more_inputs_apart(rec, run_keys, ref_in, run_in, apart)
            + _inputs_elsewhere(reference, rec, rank, step, run_in))


def _input_apart(rec: Any, keys: list[str], ref_in: list[torch.Tensor],
                 run_in: list[torch.Tensor], i: int) -> tuple[str, str]:
    """``input `x` in its 2nd call of 2``, and how it differs."""
    a, b = ref_in[i], run_in[i]
    how = (compare_values(a, b, Tolerance.bitwise()).summary
           if a.is_floating_point() or a.is_complex() else describe_entries(a, b))
    return _input_words(rec, keys[i], i, len(ref_in)), how


def _more_inputs_apart(rec: Any, keys: list[str], ref_in: list[torch.Tensor],
                       run_in: list[torch.Tensor], apart: list[int]) -> str:
    """Where the first input that differs keeps its shape and a later one of
    the step does not, that one too (trial 477: a Trainer's
    `num_items_in_batch`, the label tokens it counts over every micro-batch,
    was named alone; a later call's `input_ids` were cut to another length)."""
    first = apart[0]
    if ref_in[first].shape != run_in[first].shape:
        return ""
    shaped = [i for i in apart[1:] if ref_in[i].shape != run_in[i].shape]
    if not shaped:
        return ""
    which, how = _input_apart(rec, keys, ref_in, run_in, shaped[0])
    return (f" (and {len(apart) - 1} more of the step's inputs, among them the model's "
            f"{which}: {how})")


def _inputs_elsewhere(reference: SegmentResult, rec: Any, rank: int | None, step: int,
                      read: list[torch.Tensor]) -> str:
    """Where every input tensor a run's step called the model with is, bit for
    bit, what the reference's step at another step did: that step, in words
    (a trial's Trainer, told to skip no data on resume, read the batches of
    the epoch's first steps again, and the report led with a stream). Only
    where a match means something (``telling``)."""
    if not read or not telling(read[0], least=2):
        return ""
    keys = [k for k in rec.digests if k.startswith("inputs:") and split_rank_name(k)[1] == rank]
    at, place, also = _matched_step(reference, step, [
        r.step for r in reference.records
        if r.step != step and keys and all(r.digests.get(k) == rec.digests[k] for k in keys)])
    if at is None:
        return ""
    said = f"; they are what the uninterrupted run called it with at step {at} " \
           f"({steps_apart(at, step)})"
    if place is not None:  # (trial 139: a language model's token batches, read as data)
        return _in_its_epoch(said, place, at, step, reference) + also
    # (a trial: a GAN's noise, drawn from a generator left at its build state, was
    # said to be data read at another position, and nothing else)
    return (f"{said}: {_own_data_elsewhere(reference)}, or makes them from a random stream set "
            "back to where it was then (noise from a generator left at its build state)")


def _read_elsewhere(reference: SegmentResult, rec: Any, key: str, step: int,
                    expected: torch.Tensor, read: torch.Tensor) -> str:
    """Where the samples a run read at ``step`` are, bit for bit, those the
    reference read at another step: that step, in words ('' where none is, or
    where the samples are too few or too alike for a match to mean anything:
    a batch of two labels matches another by chance). A trial's position,
    counted one batch late, replayed the last batch before the restart, and
    the report said only that 8 of 8 samples differed; another's, one sample
    late, read the reference's samples shifted by one: ``_shifted``)."""
    if not telling(read, least=2):
        return ""
    want = rec.digests.get(key)
    at, place, also = _matched_step(reference, step, [] if want is None else [
        r.step for r in reference.records if r.step != step and r.digests.get(key) == want])
    if at is None:
        return _shifted(expected, read)
    said = f"; they are {READ_BEFORE} step {at} ({steps_apart(at, step)})"
    if place is not None:
        return _in_its_epoch(said, place, at, step, reference) + also
    # (trial 145: a nanoGPT-style get_batch() draws its offsets from the global
    # stream, re-seeded after the load, and was told only of a position and an epoch)
    return (f"{said}: {_own_data_elsewhere(reference)}, or draws them from a random stream set "
            "back to where it was then (indices or offsets drawn at each step from a stream "
            "re-seeded or not restored)")


_PLACES = ("same place", "epoch start", "another epoch's start")


def _matched_step(reference: SegmentResult, step: int,
                  steps: list[int]) -> tuple[int | None, str | None, str]:
    """Of the reference's steps whose data a run's ``step`` read, the one to
    tell of, its ``epoch_place``, and the words for a match of another place
    ('' where none). A place in the epochs goes before nearness: the same
    place of another epoch, then the first step of its own, then another
    epoch's first (a trial's unshuffled epochs read alike: the restart, reading
    its epoch from the start, was said to read ahead into the next, the nearer
    match; another's batches, fixed and shuffled in their order, matched the
    epoch's first by chance, where the same place of the last epoch told
    why)."""
    placed = [(at, epoch_place(reference, step, at)) for at in steps]
    ranked = sorted(placed, key=lambda p: (
        _PLACES.index(p[1]) if p[1] in _PLACES else len(_PLACES), abs(p[0] - step), p[0]))
    if not ranked:
        return None, None, ""
    (at, place), other = ranked[0], [p for p in ranked[1:] if p[1] not in (None, ranked[0][1])]
    if not other:
        return at, place, ""
    words = {"same place": "the same place of another epoch", "epoch start": "the first of its "
             "epoch", "another epoch's start": "the first of another epoch"}[str(other[0][1])]
    return at, place, (f" (they are also what it read at step {other[0][0]}, {words}: "
                       "samples that recur match more than one step)")


def _in_its_epoch(said: str, place: str, at: int, step: int,
                  reference: SegmentResult | None = None) -> str:
    """Data read at step ``at`` of the ``reference`` where the run read
    ``step``'s, ``place`` (``epoch_place``) in words."""
    if place == "same place" and reference is not None and _epoch_before(reference, step, at):
        # (trial 747: a position lost at an epoch's end, which read that epoch again from
        # its start, was told of another epoch's order, set_epoch and a generator first)
        return f"{said}, the first of the epoch before: {EPOCH_BEFORE_AGAIN}"
    if place == "same place":
        return f"{said}, {OTHER_EPOCH}"
    if place == "epoch start":
        return f"{said}, the first of its epoch: {EPOCH_AGAIN}"
    # (a trial: a skip counted in samples ran ahead)
    # (trial 432: two loaders taken in turn by the step count, which the ablation
    # dropped: the step read the other loader, where it was, and no cause fitted)
    return (f"{said}, the first of a later epoch: the restart reads ahead, from that "
            "epoch's start (a loop that skips more batches than it read, or a position or "
            "an epoch that came back otherwise; or the step read another of its sources, "
            "picked by state that differs: a step count that takes two loaders in turn)"
            if at > step else
            f"{said}, the first of an earlier epoch: the restart reads from that epoch's "
            "start (a position and an epoch that came back otherwise, or were not kept)")


def _own_data_elsewhere(reference: SegmentResult) -> str:
    """What samples (or inputs) read at another step of the reference say (of
    another epoch's order only where the program may have epochs: trial 434's
    said it has none)."""
    return ("the restart reads the run's own data, at another position (or "
            + ("" if declares_no_epochs(reference.boundaries) else "in another epoch's order, or ")
            + "from another of its sources, picked by state that differs: a step count that "
            "takes two loaders in turn)")


OTHER_EPOCH = (f"{SAME_PLACE}: the restart reads this place of another "
               "epoch's data (the epoch it reads differs: its order, a sampler's epoch that "
               "set_epoch sets, or a shuffle generator's state, that the restart does not put "
               "back; a position or an epoch counted otherwise at an epoch's end; or state the "
               "data depends on: a curriculum's level)")
"""Samples read at the same place of another epoch of the reference (a trial's
forgotten set_epoch was told of a position saved where the run was not; trial
716, resumed inside an epoch, read an epoch's end as the first cause)."""
EPOCH_BEFORE_AGAIN = (
    "the restart reads the epoch that had just ended again from its start (a position at "
    "the epoch's end not kept, or one the loop does not skip to), or the next epoch in that "
    "epoch's order (its order, a sampler's epoch that set_epoch sets, or a shuffle "
    "generator's state, that the restart does not put back)")
"""Samples of an epoch's first step read at the next epoch's first step."""
EPOCH_BEFORE_ORDER = (
    "the restart reads the next epoch in the order of the epoch that had just ended (its "
    "order, a sampler's epoch that set_epoch sets, or a shuffle generator's state, that the "
    "restart does not put back; not a position: the steps from the restart to that epoch's "
    "start read as the uninterrupted run did)")
"""``EPOCH_BEFORE_AGAIN`` where the restart came before the ended epoch's last step
and every step after it up to that epoch's end matched (``verdict.place_came_back``)."""


def _epoch_before(reference: SegmentResult, step: int, at: int) -> bool:
    """Whether ``at`` and ``step`` are the first steps of their epochs, ``at``'s
    the epoch right before ``step``'s (where the program says where its epochs end)."""
    if at >= step:
        return False
    starts = [1, *(e + 1 for e in epoch_boundaries(reference.boundaries, step + 1))]
    return at in starts and step in starts and not any(at < s < step for s in starts)


EPOCH_AGAIN = ("the restart reads the epoch again from its start (a position that came back "
               "but that the loop does not skip to, or one not kept)")
"""Samples read at the first step of the run's epoch (``note_data_not_resumable`` reads it)."""


def epoch_place(reference: SegmentResult, step: int, at: int) -> str | None:
    """Where step ``at`` of the reference stands to ``step``, where the program
    says where its epochs end: ``same place`` (the same place of another
    epoch), ``epoch start`` (the first step of ``step``'s epoch, ``step`` not),
    ``another epoch's start`` (the first step of another epoch), or None
    (neither, or not known)."""
    per_epoch = reference.boundaries.get("steps_per_epoch")
    if isinstance(per_epoch, float) and not per_epoch.is_integer() and per_epoch > 0 \
            and not reference.boundaries.get("epoch_boundaries"):
        return _fractional_place(per_epoch, step, at)
    edges = [0, *epoch_boundaries(reference.boundaries, max(step, at) + 1)]
    # (known: both steps are in a first epoch longer than them; trial 271's program
    # declared no epochs at all, epoch_boundaries=[], sampling with replacement)
    known = reference.boundaries.get("steps_per_epoch") is not None or bool(
        reference.boundaries.get("epoch_boundaries"))
    if len(edges) < 2 and not known:
        return None
    first = [max(e for e in edges if e < s) for s in (step, at)]
    if first[0] != first[1] and step - first[0] == at - first[1]:
        return "same place"
    if at - first[1] == 1 and step - first[0] != 1:
        # (a trial: a fit loop's counters dropped, Lightning read the first epoch
        # from its start, and was told it read its own epoch again)
        return "epoch start" if first[0] == first[1] else "another epoch's start"
    return None


def _fractional_place(per_epoch: float, step: int, at: int) -> str | None:
    """``epoch_place`` where an epoch is ``per_epoch`` steps, not a whole number:
    each step's start measured in its epoch, in steps (trial 401: 3.25 steps an
    epoch; a restart at 6 that read again the run's first step was said to read
    "the same place of another epoch", counting whole steps from the step in
    which each epoch began)."""
    def where(s: int) -> tuple[int, float]:
        epoch = int((s - 1) / per_epoch + 1e-9)
        return epoch, (s - 1) - epoch * per_epoch

    (epoch, place), (its_epoch, its_place) = where(step), where(at)
    if epoch != its_epoch and abs(place - its_place) < 1e-9:
        return "same place"
    if abs(its_place) < 1e-9 and abs(place) >= 1e-9:
        return "epoch start" if epoch == its_epoch else "another epoch's start"
    return None


def telling(samples: torch.Tensor, least: int) -> bool:
    """Whether a match of ``samples`` with others means something: at least
    ``least`` values, and, of integers (indices, labels), at least four, none
    repeated (a batch of a few labels matches another by chance), or at
    least 16 with at least 8 distinct (a batch of token ids repeats tokens: a
    trial's language model read its epoch again, and no clue said so)."""
    if samples.numel() < least:
        return False
    if samples.is_floating_point() or samples.is_complex():
        return True
    distinct = samples.unique().numel()
    return (samples.numel() >= 4 and distinct == samples.numel()) or (
        samples.numel() >= 16 and distinct >= 8)


def steps_apart(at: int, step: int) -> str:
    """``3 steps earlier``: where step ``at`` is from ``step``."""
    n = abs(at - step)
    return f"{n} step{'s' if n > 1 else ''} {'earlier' if at < step else 'later'}"


def _shifted(expected: torch.Tensor, read: torch.Tensor) -> str:
    """Where the samples read are the reference's of the same step shifted by
    a few samples (at most half the batch; the batch's first dimension): how
    far, in words ('' where they are not, or where the samples are too few,
    or repeat, for a match to mean anything)."""
    n = read.shape[0] if read.dim() else 0
    if n < 4 or expected.shape != read.shape:
        return ""
    rows = read.reshape(n, -1)
    if not (read.is_floating_point() or read.is_complex()) and \
            rows.unique(dim=0).shape[0] < n:
        return ""
    for d in range(1, n // 2 + 1):
        for behind in (True, False):
            a, b = (read[d:], expected[:-d]) if behind else (read[:-d], expected[d:])
            if torch.equal(a, b):
                way = "earlier" if behind else "later"
                return (f"; they are the uninterrupted run's samples of that step shifted by "
                        f"{d}: the restart reads from {d} sample{'s' if d > 1 else ''} {way} "
                        "(a data position off: by as much where each position is one sample "
                        "read; or, where a step reads several batches, the same batches in "
                        "another order: micro-batches or tasks picked otherwise)")
    return ""


def _calls_text(step: int, rec: Any, ref_rec: Any, ref_keys: list[str], run_keys: list[str],
                ref_in: list[torch.Tensor], run_in: list[torch.Tensor]) -> str:
    """A step that called the model with more or fewer input tensors than the
    uninterrupted run's: whether the first ones, which both made, agree, and what the other
    side's extra calls were (trial 159: a validation every third step, decided
    by a step counter, read as other data)."""
    # (trial 213 read "called the model with 8 input tensors" as one call of 8 inputs)
    said = (f"step {step} called the model with {len(run_in)} input "
            f"tensor{'' if len(run_in) == 1 else 's'} over all its calls, {len(ref_in)} in the "
            "reference")
    # (trial 502: an LSTM called once in each run, without the hidden state a restart
    # had not brought back, read as a call made "only at some steps")
    alike = bool(getattr(rec, "calls", 0)) and rec.calls == getattr(ref_rec, "calls", 0)
    if alike:
        said = (f"step {step} called the model as often as the reference "
                f"({'once' if rec.calls == 1 else f'{rec.calls} times'}), with {len(run_in)} "
                f"input tensor{'' if len(run_in) == 1 else 's'} in all, {len(ref_in)} in the "
                "reference")
    common = min(len(ref_in), len(run_in))
    rate = _rate_apart(rec, ref_rec)
    # (trial 489: L-BFGS, restarted at its build's rate, called the model once more in its
    # line search, and the report guessed at an evaluation every few steps)
    led = (f"; this step's learning rate differs too ({rate}): an optimizer that calls the "
           "model inside its step (a line search's, L-BFGS's) calls it as often as its rate "
           "leads it") if rate else ""
    gone = not_stepped(ref_rec, rec) if rate else ""
    if gone:  # (trial 571: a GAN's generator left unstepped by a lost counter read as L-BFGS's)
        led = (f"; {gone} stepped in the uninterrupted run and not in this one, and the model "
               f"calls of its update with it ({_STEPS_AT_SOME})")
    apart = [i for i, (a, b) in enumerate(zip(ref_in[:common], run_in[:common]))
             if a.shape != b.shape or a.dtype != b.dtype or not torch.equal(a, b)]
    if apart:  # (trial 489: at k=1 the batch differed, and only the count was said)
        first = ("from the first one" if not apart[0] else
                 f"first at its {_input_words(rec, run_keys[apart[0]], apart[0], len(run_keys))}")
        return f"{said}; the inputs both made differ too, {first}: the data differ{led}"
    longer, keys, whose = ((ref_rec, ref_keys, "the reference's") if len(ref_in) > common
                           else (rec, run_keys, "this run's"))
    extra = [_input_words(longer, k, common + i, len(keys))
             for i, k in enumerate(keys[common:common + 3])]
    more = f" and {len(keys) - common - 3} more" if len(keys) - common > 3 else ""
    # (a trial: "the 0 both have agree bit for bit, so the data agree", of a step whose
    # exploration skipped its one call)
    # (trial 376: "the 2 both have agree" read as broken English)
    both = ("the first one agrees bit for bit, so the data agree" if common == 1 else
            f"the first {common} agree bit for bit, so the data agree" if common else
            f"{'this run' if not run_in else 'the reference'} did not call the model at all")
    made = (f"{whose} {', '.join(extra)}{more} {'was' if len(keys) - common == 1 else 'were'} "
            f"not {'passed' if alike else 'made'} on the other side")
    if led:
        return f"{said}; {both}: {made}{led}"
    if alike:
        return (f"{said}; {both}: {made} (an argument the step passes only where it holds one, "
                "a recurrent state carried from the step before that a restart which does not "
                "bring it back starts without, or one decided by a step counter or other "
                "state that differs here)")
    return (f"{said}; {both}: {made} (a call the step makes only at some steps, an evaluation "
            "every few steps, decided otherwise: by a step counter or other state that "
            "differs here)")


def _rate_apart(rec: Any, ref_rec: Any) -> str:
    """A step's learning rate where it differs from the uninterrupted run's
    step's, in words (``1.0, expected 0.25``); empty where it does not, or
    where either is not known."""
    mine, theirs = getattr(rec, "lr", None), getattr(ref_rec, "lr", None)
    if not mine or not theirs or list(mine) == list(theirs):
        return ""
    if len(mine) == len(theirs) == 1:
        return values_apart(mine[0], theirs[0])
    return f"{list(mine)}, expected {list(theirs)}"


def _input_words(rec: Any, key: str, i: int, count: int) -> str:
    """One of a step's model inputs in words: as the program passed it (its
    argument or keyword, and its call where the step called the model more
    than once), else by its place among the step's input tensors."""
    said = rec.inputs.get(key)
    if said:
        return said
    return f"input tensor {i + 1} of {count}" if count > 1 else "input"


def _input_index(key: str) -> int:
    tail = split_rank_name(key)[0].rpartition(":")[2]
    return int(tail) if tail.isdigit() else -1


def _scales(reference: SegmentResult, segments: Sequence[tuple[int, SegmentResult]],
            step: int) -> str | None:
    """The loss scale of ``step`` against the uninterrupted run's, and the
    steps from there on that one run's loss scaler skipped and the other's
    stepped (trial 606: a scale restored otherwise, whose run stepped the step
    the uninterrupted run skipped on an overflow, and nothing said so)."""
    _, rec = _record(segments, step)
    ref = reference.records[step - 1]
    if rec is None or rec.scale is None or ref.scale is None:
        return None
    said = f"loss scale of step {step}: {values_apart(rec.scale, ref.scale)}"
    mine = {r.step: r.skipped for _, seg in segments for r in seg.records if r.step >= step}
    theirs = {r.step: r.skipped for r in reference.records if r.step in mine}
    unlike = sorted(s for s in theirs if theirs[s] != mine[s])
    if not unlike:
        return said
    lost = [s for s in unlike if theirs[s]]
    gained = [s for s in unlike if not theirs[s]]
    parts = [f"the uninterrupted run's loss scaler skipped {_steps_words(lost)} on an overflow, "
             "which this run stepped" if lost else "",
             f"this run's skipped {_steps_words(gained)}, which the uninterrupted run stepped"
             if gained else ""]
    return f"{said}; " + "; ".join(filter(None, parts))


def _steps_words(steps: list[int]) -> str:
    return f"step{'s' if len(steps) > 1 else ''} {first_few([str(s) for s in steps], 4)}"


def _record(segments: Sequence[tuple[int, SegmentResult]], step: int) -> tuple[Any, Any]:
    for _, seg in reversed(segments):
        for rec in seg.records:
            if rec.step == step:
                return seg, rec
    return None, None
