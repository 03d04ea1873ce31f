"""Elastic resume: checkpointed at N ranks, restarted at M != N.

The program's own checkpoint is the only one that can cross a change of world
size: its sharded state goes through ``torch.distributed.checkpoint``, which
reshards the model and optimizer for the ranks that load it, and its
``load()`` decides what each new rank takes of the per-rank state. The
engine's captures are per rank and are not resharded, so an elastic check has
no ablations.

The reference stays the uninterrupted run at N ranks. The continuation at M
ranks is compared with it within a tolerance, never bit for bit: the gradient
sync adds the ranks' contributions in another order. What is compared:

* every step's loss after the restart (the mean over the ranks, which is the
  global batch's loss when the program keeps the global batch);
* the end state of every component held alike on every rank (parameters,
  optimizer, scheduler, counters, settings), leaf by leaf.

Per-rank state (``PER_RANK``: the random streams, the data position) cannot
map one to one: at fewer ranks, the streams of the ranks that are gone have no
rank to go to; at more ranks, the new ranks have none of their own in the
checkpoint. The streams are listed per rank (``RunResult.unmapped``). The data
position is listed by what it means: when every step after the restart reads
the reference's global batch (the samples of all ranks together, from the
steps' recorded ``samples``), it mapped and is not listed; otherwise it is
listed once, with the first step whose global batch differs.

What decides, beyond the tolerance:

* the state of every component held alike on every rank right after the
  program's ``load()`` at M ranks, against the reference's at the resume point
  (the engine's capture there): nothing has been drawn or read since the load,
  so no stream or data position can have moved it. A component restored
  otherwise is lost state: ``diverged``, named in the diagnosis (within the
  tolerance it is a latent gap, a warning);
* else, while per-rank state could not be mapped, ``inconclusive``: the ranks
  now draw other streams (and may read other samples), so the difference is no
  evidence of lost state;
* else ``diverged``. Within the tolerance, ``close``: the unmapped state did
  not move the continuation.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from resumecheck.capture import load_checkpoint
from resumecheck.compare import Difference, Tolerance, compare_values, flatten_state
from resumecheck.components import DATA_CURSOR, RNG, SAMPLER_EPOCH, split_rank_name
from resumecheck.evidence import epoch_place, steps_apart, telling
from resumecheck.report import (
    CLOSE, DIVERGED, FAILED, IDENTICAL, INCONCLUSIVE, Finding, RunResult,
)
from resumecheck.segments import SegmentResult
from resumecheck.state_diff import describe_difference
from resumecheck.trace import load_step_samples

__all__ = [
    "global_batches_differ", "judge_elastic", "restored_differences", "unmapped_state",
]

DATA = "data"
"""The tracer's name for the samples a step read (``StepOutput.samples``)."""


def unmapped_state(names: Sequence[str], n: int, m: int,
                   data_from: int | None | bool = None) -> list[str]:
    """The per-rank state of a run at ``n`` ranks that a restart at ``m`` ranks
    cannot take one to one, in words, by what it means.

    Random streams are listed per rank: those of ranks that are gone, or of new
    ranks. The data position is listed by what the continuation read
    (``data_from``): ``False``, every step after the restart read the
    reference's global batch (the samples of all ranks together), so the
    position mapped and is not listed; a step, the first whose global batch
    differs, listed once; ``None`` (no samples recorded), listed per rank."""
    bases = sorted({base for base, r in map(split_rank_name, names) if r is not None})
    out = []
    for base in bases:
        if base == DATA_CURSOR and data_from is not None:
            if data_from is not False:
                out.append(f"{base}: the continuation reads another global batch than the "
                           f"reference from step {data_from} (the samples of all ranks "
                           "together differ)")
            continue
        if m < n:
            out += [f"{base}[rank {r}]: no rank {r} at {m} rank(s); its state is restored "
                    "on no rank" for r in range(m, n)]
        else:
            out += [f"{base}[rank {r}]: rank {r} is new at {m} ranks; the checkpoint of "
                    f"{n} rank(s) holds no state of its own for it" for r in range(n, m)]
    return out


def judge_elastic(reference: SegmentResult, result: RunResult,
                  segments: list[tuple[int, SegmentResult]], tolerance: Tolerance,
                  n: int, m: int) -> None:
    """Set the verdict of an elastic resume: ``result`` is its full resume through
    the program's own checkpoint, ``segments`` its first half at ``n`` ranks and
    its restarts at ``m``."""
    k = result.resume_at[0]
    for start, seg in segments:
        if seg.error is not None:
            result.unmapped = unmapped_state(reference.names, n, m)
            result.verdict = FAILED
            result.first_divergent_step = seg.error_step
            where = "the first half" if start == 0 else f"the restart at {m} rank(s)"
            result.failure = seg.error
            result.explanation = f"{where} failed: {seg.error}"
            return
    restarts = [seg for start, seg in segments if start >= k]
    data_from = global_batches_differ(reference, restarts)
    result.unmapped = unmapped_state(reference.names, n, m, data_from)
    elsewhere = (_read_elsewhere(reference, restarts, data_from, m)
                 if type(data_from) is int else None)
    found = restored_differences(reference, restarts[0] if restarts else None, k, tolerance)
    result.diagnosis = found or []
    records = [r for seg in restarts for r in seg.records]
    worst, first, max_loss = _compare_losses(reference, records, tolerance)
    compared, held_per_rank = [], []
    end = segments[-1][1].end_state
    if reference.end_state and end:
        ref_state = load_checkpoint(reference.end_state)["components"]
        run_state = load_checkpoint(end)["components"]
        for name in ref_state:
            if split_rank_name(name)[1] is not None:
                continue  # per-rank: listed in unmapped, or not comparable across sizes
            a, b = ref_state[name], run_state.get(name)
            if _per_rank(a) or _per_rank(b):
                held_per_rank.append(name)  # sharded: shards differ with the world size
                continue
            compared.append(name)
            diff = _state_difference(a, b, tolerance)
            worst = diff.worse(worst)
            if not diff.within_tolerance and first is None:
                first = (_last_step(records, k), f"{name} (end state): {diff.summary}")
    result.max_abs_loss_diff = max_loss
    if worst is not None:
        result.max_abs_diff, result.max_rel_diff = worst.max_abs, worst.max_rel
        result.max_ulp_diff = worst.max_ulp
    what = (f"every step's loss (mean over ranks) after step {k} and the end state of "
            f"{', '.join(compared) or 'no component'}")
    if held_per_rank:
        what += f" (not compared, held per rank: {', '.join(held_per_rank)})"
    _conclude(result, worst, first, what, tolerance, n, m, restore_compared=found is not None,
              not_compared=held_per_rank, elsewhere=elsewhere,
              samples=bool(reference.records) and any(
                  split_rank_name(key)[0] == DATA for key in reference.records[0].digests))


def global_batches_differ(reference: SegmentResult,
                          restarts: list[SegmentResult]) -> int | None | bool:
    """The first step after the restart whose global batch (the samples every
    rank read, together) differs from the reference's; ``False``: none differs;
    ``None``: the samples are not recorded on both sides (a step returns no
    ``samples``, or its tensors were not kept)."""
    if not reference.tensor_dir or not restarts:
        return None
    for seg in restarts:
        if not seg.tensor_dir:
            return None
        for rec in seg.records:
            want = _global_batch(reference.tensor_dir, rec.step)
            got = _global_batch(seg.tensor_dir, rec.step)
            if want is None or got is None:
                return None
            if not torch.equal(want, got):
                return rec.step
    return False


def _read_elsewhere(reference: SegmentResult, restarts: list[SegmentResult], step: int,
                    m: int) -> Finding | None:
    """Where the continuation's global batch at ``step`` (the first that differs)
    is, bit for bit, the one the reference read at another step: a finding on
    the data position. Streams that could not be mapped do not make ranks read
    the run's own batch of another step; a data position (or an epoch's order)
    mapped to another point does (trials 104 and 105: a position saved as each
    rank's batch count re-read the last global batch before the restart, and
    the resume was only inconclusive). None where no other step's batch is it,
    or where the batch is too small, or repeats values, for a match to mean
    anything."""
    seg = next((s for s in restarts if s.tensor_dir and any(r.step == step for r in s.records)),
               None)
    read = _global_batch(seg.tensor_dir, step) if seg is not None and seg.tensor_dir else None
    if read is None or not telling(read, least=4) or not reference.tensor_dir:
        return None
    for j in sorted((r.step for r in reference.records if r.step != step),
                    key=lambda j: (abs(j - step), j)):  # (nearest first: files read lazily)
        other = _global_batch(reference.tensor_dir, j)
        if other is not None and other.shape == read.shape and torch.equal(other, read):
            said = (f"the continuation's global batch at step {step} is the one the "
                    f"uninterrupted run read at step {j} ({steps_apart(j, step)})")
            if epoch_place(reference, step, j) == "same place" and SAMPLER_EPOCH in \
                    reference.names:  # (a trial's lost epoch was blamed on the position)
                return Finding(SAMPLER_EPOCH, f"{said}, at the same place in another epoch: "
                               f"the epoch's order is another epoch's at {m} rank(s)",
                               step=step - 1)
            return Finding(DATA_CURSOR, f"{said}: the data position (or the epoch's order) "
                           f"maps to another point at {m} rank(s)", step=step - 1)
    return None


def _global_batch(tensor_dir: str, step: int) -> torch.Tensor | None:
    """The samples of one step over every rank, sorted (None: not recorded).
    Where every rank reports the very same samples, the program reports the
    global batch on each rank: it is taken once (a trial's correct elastic
    resume, each rank's ``samples`` the global batch, was said to read
    another global batch at one rank)."""
    tensors = load_step_samples(Path(tensor_dir), step)
    if tensors is None:
        return None
    parts = [t.reshape(-1) for key, t in tensors.items() if split_rank_name(key)[0] == DATA]
    if not parts:
        return None
    if len(parts) > 1 and all(torch.equal(parts[0], p) for p in parts[1:]):
        parts = parts[:1]
    return torch.cat(parts).sort().values


def restored_differences(reference: SegmentResult, restart: SegmentResult | None, k: int,
                         tolerance: Tolerance) -> list[Finding] | None:
    """The components held alike on every rank whose state right after the
    program's load() at the new number of ranks differs, beyond the tolerance,
    from the reference's at step ``k``: their state does not depend on the
    ranks' streams or data positions (nothing has been drawn or read since the
    load), so what differs was not restored. Per-rank and sharded state is
    left out (it is not comparable across world sizes). None: nothing to
    compare (no capture of the reference at ``k``, or of the restart's load)."""
    if restart is None or restart.restored_state is None or k not in reference.captures:
        return None
    ref_file = load_checkpoint(reference.captures[k])
    run_file = load_checkpoint(restart.restored_state)
    expected, restored = ref_file["components"], run_file["components"]
    findings = []
    for name, want in expected.items():
        got = restored.get(name)
        if split_rank_name(name)[1] is not None:
            continue
        if _per_rank(want) or _per_rank(got):  # sharded: its leaves every rank holds alike
            detail = _alike_leaves_differ(want, got, tolerance)
            if detail is not None:
                findings.append(Finding(name, detail, step=k))
            continue
        if got is not None and _state_difference(want, got, tolerance).within_tolerance:
            continue
        detail = describe_difference(name, want, got, k, ref_file.get("meta"),
                                     run_file.get("meta"))
        findings.append(Finding(name, detail or "differs after the restore", step=k))
    return findings


def _alike_leaves_differ(want: Any, got: Any, tolerance: Tolerance) -> str | None:
    """How the leaves of a sharded or per-rank state that every rank of the
    reference holds alike and that are no shard (an optimizer's learning rate
    and step counts, not its DTensor moments) differ after the load; None when
    they match. A tensor whose shape changed with the world size is a shard
    and is left out, and so is a leaf the restored state does not have (a
    load through DCP can leave out an option that is None)."""
    if got is None:
        return "missing after the restore"
    alike = _alike(want)
    restored = dict(flatten_state(next(iter(got.values())) if _per_rank(got) else got))
    for path, value in alike.items():
        if path not in restored:
            continue  # (the structure can vary with the load path: DCP leaves out None options)
        new = restored[path]
        if isinstance(value, torch.Tensor) and isinstance(new, torch.Tensor) \
                and value.shape != new.shape:
            continue
        diff = compare_values(value, new, tolerance)
        if not diff.within_tolerance:
            shown = (f"{new!r}, expected {value!r}" if not isinstance(value, torch.Tensor)
                     else diff.summary)
            return f"{path} {shown} (leaves every rank holds alike; its shards are not compared)"
    return None


def _alike(state: Any) -> dict[str, Any]:
    """The leaves every rank holds alike, no DTensor among them."""
    ranks = [dict(flatten_state(s)) for s in (state.values() if _per_rank(state) else [state])]
    out = {}
    for path, value in ranks[0].items():
        if getattr(value, "placements", None) is not None:
            continue  # a DTensor: a shard
        if all(path in r and compare_values(value, r[path], Tolerance.bitwise()).within_tolerance
               for r in ranks[1:]):
            out[path] = value
    return out


def _compare_losses(reference: SegmentResult, records: list[Any], tolerance: Tolerance,
                    ) -> tuple[Difference | None, tuple[int, str] | None, float]:
    """Every step's loss against the reference's: the worst difference, the first
    step beyond the tolerance, the largest |Δloss|."""
    ref_records = {r.step: r for r in reference.records}
    worst: Difference | None = None
    first: tuple[int, str] | None = None
    max_loss = 0.0
    for rec in records:
        want = ref_records.get(rec.step)
        if want is None:
            continue
        diff = compare_values(torch.tensor(want.loss, dtype=torch.float32),
                              torch.tensor(rec.loss, dtype=torch.float32), tolerance)
        max_loss = max(max_loss, abs(rec.loss - want.loss))
        worst = diff.worse(worst)
        if not diff.within_tolerance and first is None:
            first = (rec.step, "loss")
    return worst, first, max_loss


def _conclude(result: RunResult, worst: Difference | None, first: tuple[int, str] | None,
              what: str, tolerance: Tolerance, n: int, m: int, *,
              restore_compared: bool = False, not_compared: Sequence[str] = (),
              elsewhere: Finding | None = None, samples: bool = False) -> None:
    lost = "; ".join(result.unmapped) or "none"
    missed = "; ".join(f"{f.component}: {f.detail}" for f in result.diagnosis)
    if first is None:
        # (the loss as float32 can tie where its float64 value differs)
        exact = (worst is None or (worst.max_abs or 0.0) == 0.0) \
            and not result.max_abs_loss_diff
        result.verdict = IDENTICAL if exact else CLOSE
        result.explanation = (
            f"restarted at {m} rank(s) from a checkpoint of {n}: {what} match the "
            f"uninterrupted run at {n} within {tolerance.describe()}; per-rank state "
            f"not mapped: {lost}")
        if result.diagnosis:
            result.latent_gaps = [f"{f.component}: {f.detail}" for f in result.diagnosis]
            result.explanation += f"; restored wrongly but unused here: {missed}"
        return
    result.first_divergent_step, result.first_divergent_quantity = first
    # (the trace's key: the loss, or a component's end state, "NAME (end state): ...")
    result.first_divergent_key = ("loss" if first[1] == "loss"
                                  else "state:" + first[1].partition(" (end state)")[0])
    beyond = (f"restarted at {m} rank(s) from a checkpoint of {n}: {first[1]} leaves "
              f"{tolerance.describe()} at step {first[0]} "
              f"(max |Δloss| {result.max_abs_loss_diff or 0.0:.3g})")
    if result.diagnosis:
        names = ", ".join(f.component for f in result.diagnosis)
        result.verdict = DIVERGED
        result.explanation = (
            f"{beyond}; the program's load() at {m} rank(s) did not restore {names} "
            f"({missed}). That is state held alike on every rank, compared right after the "
            "load and before any step: no random stream or data position has moved it, so "
            f"the per-rank state that could not be mapped ({lost}) does not explain it")
        result.explanation += _no_measure(result, first[0], names, n, m)
    elif elsewhere is not None:
        result.verdict, result.diagnosis = DIVERGED, [elsewhere]
        result.explanation = f"{beyond}; {elsewhere.detail}. {_ELSEWHERE_WHY.format(m)}"
    elif result.unmapped:
        restored = ""
        if restore_compared:
            restored = (" Every component held alike on every rank was restored as the "
                        f"reference had it at step {result.resume_at[0]}.")
        if not_compared:
            restored += (f" Of {', '.join(not_compared)} (sharded or held per rank: not "
                         "comparable across world sizes) only the leaves every rank holds "
                         "alike were compared, so a load that got their shards wrong is "
                         "not ruled out.")
        result.verdict = INCONCLUSIVE
        result.explanation = f"{beyond}; {_not_judged(result, lost, n, m)}{restored} " \
            f"{_SAMPLES_JUDGED if samples else _JUDGED_WHERE}{_batch_lead(result.unmapped)}"
    else:
        result.verdict = DIVERGED
        result.explanation = f"{beyond}; {what} were compared"


def _no_measure(result: RunResult, step: int, names: str, n: int, m: int) -> str:
    """Where per-rank state could not be mapped, why a resume diverged on
    replicated state does not owe its loss's departure to it (a trial read
    the loss's departure as the scheduler's doing; '' where all mapped)."""
    if not result.unmapped:
        return ""
    return (f"; the loss's departure at step {step} is no measure of it: at {m} rank(s) the "
            f"ranks {_unmapped_means(result.unmapped)} than at {n}, which alone changes the "
            f"loss; the verdict rests on {names} differing right after the load")


_ELSEWHERE_WHY = (
    "Per-rank streams that could not be mapped do not make the ranks read the run's own "
    "batch of another step: the data position restored at {} rank(s) does (saved per rank "
    "where it must be global, or mapped wrongly by the load())")
"""Why a continuation that read another step's global batch is diverged, not inconclusive."""


def _not_judged(result: RunResult, lost: str, n: int, m: int) -> str:
    """Why an elastic resume beyond the tolerance is not judged: what the per-rank
    state that could not be mapped may make the ranks do otherwise."""
    return (f"per-rank state could not be mapped ({lost}): at {m} rank(s) the ranks may "
            f"{_unmapped_means(result.unmapped)} than at {n}, so the difference alone is no "
            "evidence of lost state and the engine cannot judge this resume.")


_JUDGED_WHERE = (
    "Where each step returns its samples (StepOutput(samples=...)), the global batch every "
    "step reads is compared, and another one than the uninterrupted run's is judged, "
    "diverged, whatever the streams; a program that declares no per-rank state at all is "
    "judged whole: beyond the tolerance it is diverged")
"""What an inconclusive elastic resume says is judged (trial 464: a program with no
dropout, told its ranks drew other streams, declared no per-rank stream and was
still not judged: its steps returned no samples to compare)."""


_SAMPLES_JUDGED = (
    "The samples each step returned were compared, the global batch of every step: one that "
    "is, bit for bit, the uninterrupted run's batch of another step is judged, diverged (a "
    "data position restored wrongly); another is not, since at another number of ranks the "
    "state that could not be mapped may deal the samples otherwise; a program that declares "
    "no per-rank state at all is judged whole: beyond the tolerance it is diverged")
"""``_JUDGED_WHERE`` of a program whose steps return their samples (trial 482, whose
did, was told to return them)."""


def _unmapped_means(unmapped: list[str]) -> str:
    """What the per-rank state that could not be mapped makes the ranks do
    otherwise: only what its kinds say (a trial's program, which declared no
    stream, was told its ranks drew other random streams)."""
    bases = {split_rank_name(u.split(":", 1)[0])[0] for u in unmapped}
    said = (["draw other random streams"] if RNG in bases else []) + (
        ["read other samples"] if DATA_CURSOR in bases else []) + (
        ["hold other per-rank state"] if bases - {RNG, DATA_CURSOR} else [])
    return " and ".join(said)


def _batch_lead(unmapped: list[str]) -> str:
    """Where the continuation read another global batch: for a program meant to
    keep it at every number of ranks, that is where to look (a trial's data
    position, saved as each rank's batch count, skipped other samples at one
    rank, and the report offered no lead)."""
    read = next((u for u in unmapped if u.startswith(f"{DATA_CURSOR}: the continuation reads "
                                                     "another global batch")), None)
    if read is None:
        return ""
    step = read.split(" from step ", 1)[1].split(" ", 1)[0]
    return (f"; if your program means to keep the global batch at every number of ranks, the "
            f"other global batch it read from step {step} points at its data position "
            "(saved per rank where it must be global, or mapped wrongly by its load())")


def _last_step(records: list[Any], k: int) -> int:
    """The last step of the continuation (its end state's step)."""
    return records[-1].step if records else k


def _per_rank(state: Any) -> bool:
    """A merged capture keeps state that differs between ranks as ``{"[rank r]": ...}``."""
    return isinstance(state, dict) and bool(state) and all(
        isinstance(key, str) and key.startswith("[rank ") for key in state)


def _state_difference(a: Any, b: Any, tolerance: Tolerance) -> Difference:
    """Leaf by leaf: the largest differences, and the first leaf beyond the
    tolerance in words (a leaf on one side only differs)."""
    left, right = dict(flatten_state(a)), dict(flatten_state(b))
    if set(left) != set(right):
        missing = sorted(set(left) ^ set(right))
        return Difference(False, summary=f"entries {missing[:3]} on one side only")
    worst: Difference | None = None
    failing = ""
    for path, leaf in left.items():
        diff = compare_values(leaf, right[path], tolerance)
        worst = diff.worse(worst)
        if not diff.within_tolerance and not failing:
            failing = f"{path}: {diff.summary}" if path else diff.summary
    if worst is None:
        return Difference(True, 0.0, 0.0, 0.0)
    return Difference(worst.within_tolerance, worst.max_abs, worst.max_rel, worst.max_ulp,
                      failing)
