"""Evidence in plain words: how a restored component differs from the reference.

"scheduler: last_epoch 0, expected 8"; "rng: torch CPU stream differs from
the stream at step 8"; "optimizer: exp_avg of `fc1.weight` differs, max |Δ|
3.1e-3"; "sampler_epoch: 0, expected 1".
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from typing import Any

import torch

from resumecheck.compare import Difference, Tolerance, compare_values, describe_entries, flatten_state
from resumecheck.components import OPTIMIZER, RNG, STRAY_STATE, rank_name, split_rank_name
from resumecheck.phrases import RATE_ALONE, RATE_AND_MOMENTUM, REORDERED, first_few
from resumecheck.streams import is_stream_state

__all__ = ["DETACHED", "LEARNING_RATE_ONLY", "MOMENTUM_TOO", "NONE_CAME_BACK", "SCHEDULER_LOST",
           "SCHEDULER_AHEAD",
           "NONE_CAME_BACK_PLAIN", "REORDERED", "SAVED_BEFORE_STEP", "FRESH_COUNT",
           "by_parameter_name", "describe_difference", "differing_leaves", "is_private",
           "leaf_label", "reorder_optimizer_state", "righted_only", "unread_only", "values_apart"]

_RNG_STREAMS = {
    "python": "Python random stream",
    "numpy": "numpy global stream",
    "torch": "torch CPU stream",
    "cuda": "torch CUDA stream",
}


def by_parameter_name(state: Any, names: list[str] | None) -> Any:
    """Key an optimizer state_dict by parameter name instead of position.

    ``Optimizer.load_state_dict`` matches by position, so two programs that
    list their parameters in different orders have positionally equal states
    that belong to different parameters. Compared by name, the swap shows.
    """
    if not names or not isinstance(state, dict) or "state" not in state:
        return state
    per_param = {
        names[int(i)] if str(i).isdigit() and int(i) < len(names) else str(i): v
        for i, v in state["state"].items()
    }
    groups = [
        {**g, "params": [names[i] if isinstance(i, int) and i < len(names) else i
                         for i in g.get("params", [])]}
        for g in state.get("param_groups", [])
    ]
    return {**state, "state": per_param, "param_groups": groups}


def reorder_optimizer_state(state: Any, from_names: list[str], to_names: list[str]) -> Any:
    """Move per-parameter optimizer state from one parameter order to another."""
    if sorted(from_names) != sorted(to_names) or "state" not in state:
        return state
    where = {name: i for i, name in enumerate(to_names)}
    moved = {
        where[from_names[int(i)]]: v for i, v in state["state"].items()
        if int(i) < len(from_names)
    }
    return {**state, "state": moved}


DETACHED = "steps tensors the model does not train with"
"""How an optimizer's finding begins when the restored optimizer holds other
parameters than the model's (``verdict`` leaves such a finding unjudged: no
state put into it can attach it to the model)."""

_UNNAMED = re.compile(r"group\d+\.param\d+")
"""``capture_meta``'s name for an optimizer parameter that is not the model's."""


def _detached(ref_meta: dict[str, Any] | None, restored_meta: dict[str, Any] | None) -> str | None:
    """An optimizer restored onto other tensors than the model's parameters,
    in words (None: as many of its parameters are the model's as in the reference)."""
    ref_names = (ref_meta or {}).get("optimizer_params") or []
    names = (restored_meta or {}).get("optimizer_params") or []
    stray = [n for n in names if _UNNAMED.fullmatch(n)]
    if len(stray) <= len([n for n in ref_names if _UNNAMED.fullmatch(n)]):
        return None
    return (f"{DETACHED}: {len(stray)} of its {len(names)} parameters are not the model's, "
            "so its steps leave the model as it is (an optimizer kept across a model rebuilt "
            "in load(), or made for other parameters); not judged by a rerun, which puts state "
            "in and cannot attach an optimizer to the model's tensors: this is read off the "
            "objects themselves")


def describe_difference(
    name: str,
    reference: Any,
    restored: Any,
    step: int,
    ref_meta: dict[str, Any] | None = None,
    restored_meta: dict[str, Any] | None = None,
    unused: set[str] | None = None,
    set_right: set[str] | None = None,
    after_load: bool = True,
    causes: bool = True,
) -> str | None:
    """One line on how ``restored`` differs from ``reference``, or None if equal.
    ``after_load``: ``restored`` is what a load left (not a run's end state:
    there a module whose every entry differs is not told of loads). ``causes``:
    a count one step apart gets its usual causes (not of a dropped component).
    ``unused``: of an ``rng`` component, the streams (``python``, ``generators/NAME``)
    the reference never drew from after ``step``, named apart; ``set_right``:
    those the program set right itself during the next step, apart too."""
    if reference is None:
        return None
    if restored is None or isinstance(restored, dict) and not restored and reference:
        return _empty_text(reference, restored, step, after_load)
    if _is_per_rank(reference) or _is_per_rank(restored):
        return _per_rank_difference(name, reference, restored, step, ref_meta, restored_meta,
                                    unused)
    misplaced = _misplaced(name, (reference, restored), ref_meta, restored_meta)
    if misplaced is not None:  # (its state, keyed by position, says nothing)
        return misplaced
    optimizer = _optimizer_names(name, ref_meta) is not None
    if optimizer:
        reference = by_parameter_name(reference, _optimizer_names(name, ref_meta))
        restored = by_parameter_name(restored, _optimizer_names(name, restored_meta))
    ref = dict(flatten_state(reference))
    new = dict(flatten_state(restored))
    differing = differing_leaves(ref, new)
    if not differing:
        return None
    # Public entries (last_epoch, scale) explain more than private ones (_last_lr),
    # an optimizer's per-parameter state more than its group listing, and of
    # tensors the one that differs most (a trial: an EMA's 0.bias, first by name,
    # was named while its 0.weight differed more).
    differing.sort(key=lambda item: (is_private(item[0]), item[0].startswith("param_groups"),
                                     _plateau_count(item[0], ref),
                                     -_spread(ref.get(item[0]), item[1])))
    if split_rank_name(name)[0] == RNG or is_stream_state(reference):  # (rng[rank 1] too)
        return _streams_text([p for p, _ in differing], step, unused or set(), set_right or set())
    path, how = differing[0]
    if optimizer and _is_empty_state(new) and not _is_empty_state(ref):
        return f"no per-parameter state (fresh), expected the state at step {step}" + \
            _fresh_rate(differing, ref, new)
    if not optimizer:  # (a trial: "workers.0.buffer missing, expected '[]'", all gone)
        differing = _holders_whole(differing, ref, new, dict(_containers(reference)))
        path, how = differing[0]
        if isinstance(how, _Whole):
            return how.text + _more(differing[1:], ref, new, optimizer)
    more = _more(differing[1:], ref, new, optimizer, head=path)
    text = _leaf_text(_label(path, optimizer, ref), how, ref[path] if path in ref else None,
                      new.get(path))
    return text.strip() + more + _causes_of(differing, ref, new, optimizer, causes, after_load)


def _plateau_count(path: str, ref: dict[str, Any]) -> bool:
    """Whether ``path`` is the ``last_epoch`` of a ReduceLROnPlateau, which counts
    its calls and sets no rate from them (trial 786: named before the best score
    and the count of bad epochs, which do set it)."""
    head, _, leaf = path.rpartition(".")
    return leaf == "last_epoch" and f"{head}.num_bad_epochs".lstrip(".") in ref


def _causes_of(differing: list[tuple[str, Any]], ref: dict[str, Any], new: dict[str, Any],
               optimizer: bool, causes: bool, after_load: bool) -> str:
    """What ``describe_difference`` adds after the difference: of an optimizer,
    what its groups schedule; else the causes of a count one step apart
    (``causes``) and, after a load, that none of the state came back."""
    if optimizer:
        return _scheduled_only(differing)
    return ((_step_apart(differing, ref, new, after_load) if causes else "")
            + (_none_came_back(differing, ref, new) if after_load else ""))


def _none_came_back(differing: list[tuple[str, Any]], ref: dict[str, Any],
                    new: dict[str, Any]) -> str:
    """Where every tensor of a module's state differs: that so it reads where
    none came back (trial 145: a torch.compile'd model's state, its keys
    prefixed `_orig_mod.`, loaded with strict=False into the plain model loaded
    nothing, and the report said only "15 more entries differ")."""
    if len(ref) < 2 or len(differing) != len(ref) or set(ref) != set(new) or not all(
            isinstance(v, torch.Tensor) for v in ref.values()):
        return ""
    # (trial 149: an averaged model the checkpoint never kept was offered only the
    # rarer causes)
    if not any("." in key or key in _MODULE_LEAVES for key in ref):
        # (trial 204: an LSTM's carried hidden state, a tuple, was offered a compiled
        # model's prefixes and an EMA)
        return NONE_CAME_BACK_PLAIN
    return NONE_CAME_BACK


_MODULE_LEAVES = frozenset({"weight", "bias"})
"""The keys of a module's state whose other keys have no dot (a bare layer's)."""

NONE_CAME_BACK_PLAIN = (
    "; every entry differs, as where none of it came back (a checkpoint that does not keep it, "
    "a load that does not put it into this object, or it was made again after the load)")
"""``NONE_CAME_BACK`` of state that is not a module's (a tuple of tensors a
program carries, its keys no layer's): a module's causes do not apply."""


NONE_CAME_BACK = (
    "; every entry differs, as where none of it came back (a checkpoint that does not keep it, "
    "or a load that does not put it into this object; a load_state_dict(strict=False) whose "
    "keys do not match loads none: a `_orig_mod.` prefix torch.compile adds, a `module.` prefix "
    "DDP adds; or it was made again after the load, from other state: an EMA copied from the "
    "loaded weights)")
"""How a module's state every entry of which differs right after a load says
so, with the causes that leave it so (``describe_difference``)."""


SAVED_BEFORE_STEP = "a checkpoint saved before the step's scheduler.step()"
"""The first cause a count one step behind is offered (a framework target's
words put its own restore first: ``verdict._its_words``)."""
FRESH_COUNT = "0, as a fresh scheduler has it"
"""How a scheduler at 0 where the run was at 1 is said (``_step_apart``)."""


def _empty_text(reference: Any, restored: Any, step: int, after_load: bool) -> str:
    """Of a component missing after the restore, or whose state_dict() came
    back empty (trial 155: "blocks missing (and 5 more entries ...)" of a
    gradient store emptied whole)."""
    if restored is None or not isinstance(reference, dict):
        return f"missing after the restore (the reference has it at step {step})"
    ref = [path for path, _ in flatten_state(reference)]
    where = "after the load" if after_load else "at the end"
    return f"its state_dict() is empty {where}, expected {len(ref)} entr" \
        f"{'y' if len(ref) == 1 else 'ies'} ({first_few(ref, 4)})"


def _leaf_text(label: str, how: Any, ref: Any, new: Any) -> str:
    """How one leaf differs, in words."""
    if how == "missing":
        return f"{label} missing, expected {_value(ref)}"
    if how == "unexpected":
        return f"{label} present, not in the reference"
    if isinstance(ref, torch.Tensor) != isinstance(new, torch.Tensor) and (
            ref is None or new is None):  # (a trial: a gradient None after the load)
        # (a trial: a generator's kept state None after the load read "differs")
        return (f"{label} None, expected {_tensor_words(ref)}" if new is None
                else f"{label} {_tensor_words(new)}, expected None")
    if isinstance(ref, torch.Tensor) and ref.dtype == torch.uint8:
        # a generator's byte state: no magnitude to report, but what it is (trial 484:
        # "gen differs" of a loader's generator, saved after it had drawn the epoch's order)
        return f"{label} differs" + (
            " (a torch generator's state: it has drawn otherwise, or been seeded otherwise, "
            "than the uninterrupted run's)" if ref.numel() == _CPU_GENERATOR_BYTES
            and not any(word in label for word in ("stream", "generator")) else "")
    if isinstance(ref, torch.Tensor) and isinstance(new, torch.Tensor) and ref.numel() > 1 \
            and not (ref.is_floating_point() or ref.is_complex()):
        # (a trial's mined negatives, indices, read "negatives: differs" and no more)
        entries = describe_entries(ref, new, "values")
        return f"{label}: {entries}" if label.strip() else entries
    if isinstance(ref, torch.Tensor) and ref.numel() > 1:
        size = getattr(how, "max_abs", None)
        return f"{label} differs" + (f", max |Δ| {size:.3g}" if size is not None else "")
    return f"{label} {values_apart(new, ref)}"


_CPU_GENERATOR_BYTES = 5056
"""The size of a torch CPU generator's state (``torch.Generator().get_state()``)."""


def _tensor_words(t: torch.Tensor) -> str:
    """``a tensor`` with its size: ``a tensor of 5056 values``."""
    return "a tensor" if t.numel() == 1 else f"a tensor of {t.numel()} values"


_LEARNING_RATE = re.compile(r"param_groups\[\d+\]\.lr")
_MOMENTUM = re.compile(r"param_groups\[\d+\]\.(momentum|betas\[0\])")
"""What a scheduler that cycles the momentum sets beside the rate (OneCycleLR,
CyclicLR: SGD's momentum, Adam's first beta)."""


class _Whole:
    """A dict or list of the reference that is empty or gone after the restore,
    in words (``workers empty, expected 2 entries (0, 1)``): one entry of the
    differing ones in place of every leaf it held."""

    def __init__(self, text: str) -> None:
        self.text = text


def _stray_text(reference: Any, restored: Any) -> str | None:
    """Of an optimizer whose live state holds entries under keys that are no
    parameter of it (``components.STRAY_STATE``) where the reference's did not,
    in words (None: not so)."""
    if not isinstance(restored, Mapping) or STRAY_STATE not in restored or (
            isinstance(reference, Mapping) and STRAY_STATE in reference):
        return None
    n = restored[STRAY_STATE]
    return (f"its live state holds {n} {'entry' if n == 1 else 'entries'} under keys that are "
            "no parameter of it, which its state_dict() packs onto the parameters it now has "
            "(so that state_dict() may read as saved): a load_state_dict() run before an "
            "add_param_group() (parameters unfrozen, a group added back) leaves the saved state "
            "there, and the parameters added after it step with none; add the groups first, "
            "then load")


def _holders_whole(differing: list[tuple[str, Any]], ref: dict[str, Any],
                   new: dict[str, Any], containers: dict[str, Any]) -> list[tuple[str, Any]]:
    """``differing`` with the leaves of each whole holder lost (``_Whole``)
    said as one entry, where its first leaf was; only where nothing of it came
    back. ``containers``: the reference's dicts and lists by path (``_containers``)."""
    out: list[tuple[str, Any]] = []
    taken: list[str] = []
    for path, how in differing:
        if any(_inside(path, holder) for holder in taken):
            continue
        cut = _list_cut(path, (ref, new), containers, [p for p, _ in differing]) \
            if how == "missing" else None
        if cut is not None:
            taken.append(cut[0])
            out.append(cut)
            continue
        whole = _whole_holder(path, how, ref, new, containers) \
            if how in ("missing", "unexpected") else None
        if whole is None:
            out.append((path, how))
        else:
            taken.append(whole[0])
            out.append(whole)
    return out


_INDEX = re.compile(r"\[(\d+)\]")


def _list_cut(path: str, leaves: tuple[dict[str, Any], dict[str, Any]],
              containers: dict[str, Any], differing: list[str]) -> tuple[str, _Whole] | None:
    """The list of the reference above ``path`` whose last items are gone
    after the restore (two or more: one is named itself, with its value),
    every one before them back as the reference's (``differing``: the paths
    that differ), in words: how many it holds, how many it
    should (trial 869: a replay buffer 15 transitions short
    read "items[32] missing, expected 5 entries (...) (and 1 more entry ...
    differs)", a transition's fields counted, not the missing transitions)."""
    ref, new = leaves
    for holder in _holders(path):
        found = _INDEX.match(path, len(holder))
        listed = containers.get(holder)
        if found is None or not isinstance(listed, (list, tuple)) or holder in ref:
            continue
        kept = {int(m.group(1)) for p in new if p.startswith(holder + "[")
                for m in [_INDEX.match(p, len(holder))] if m is not None}
        n, m = len(listed), len(kept)
        apart = {int(found_at.group(1)) for p in differing if p.startswith(holder + "[")
                 for found_at in [_INDEX.match(p, len(holder))] if found_at is not None}
        back = not any(i < m for i in apart)
        if m and kept == set(range(m)) and n - m > 1 and int(found.group(1)) >= m and back:
            label = _label(holder, False, ref) or "its state"
            return holder, _Whole(f"{label}: {m} {'entry' if m == 1 else 'entries'}, expected "
                                  f"{n} (the last {n - m} missing, from {holder}[{m}] on)")
    return None


def _inside(path: str, holder: str) -> bool:
    """Whether a flattened ``path`` is ``holder`` or below it."""
    return path == holder or path.startswith((holder + ".", holder + "["))


def _whole_holder(path: str, how: Any, ref: dict[str, Any], new: dict[str, Any],
                  containers: dict[str, Any]) -> tuple[str, _Whole] | None:
    """The outermost dict or list above ``path`` that the reference holds
    entries in and that nothing of came back (gone, or empty), in words. Only
    the reference's own dicts and lists, with their own entries: a model's
    state_dict() keys hold dots, which a path does not tell from nesting
    (trial 168: 10 entries, `enc.weight_ih_l0` ..., read as 3, dec, enc, head)."""
    for holder in _holders(path):
        if holder in ref or holder not in containers or any(
                _inside(p, holder) and p != holder for p in new):
            continue  # (a leaf of the reference, a dotted key's part, or something came back)
        children = _entries(containers[holder])
        if not children:
            continue
        shown = ", ".join(_entry_shown(holder, c, ref) for c in children[:3]) + (
            ", ..." if len(children) > 3 else "")
        n = len(children)
        state = "empty" if new.get(holder) in ("{}", "[]") else "missing"
        return holder, _Whole(f"{_label(holder, False, ref) or 'its state'} {state}, expected {n} "
                              f"{'entry' if n == 1 else 'entries'} ({shown})")
    return None


def _containers(value: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """(path, value) of every dict and list in a nested state, each at the
    path ``compare.flatten_state`` puts before its leaves."""
    if isinstance(value, Mapping):
        yield prefix, value
        for key in sorted(value, key=str):
            yield from _containers(value[key], f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(value, (list, tuple)):
        yield prefix, value
        for i, item in enumerate(value):
            yield from _containers(item, f"{prefix}[{i}]")


def _entries(container: Any) -> list[str]:
    """A dict's keys (in ``flatten_state``'s order) or a list's indices, as a
    path below it names them."""
    if isinstance(container, Mapping):
        return [str(key) for key in sorted(container, key=str)]
    return [f"[{i}]" for i in range(len(container))]


def _entry_shown(holder: str, child: str, ref: dict[str, Any]) -> str:
    """An entry of a holder lost whole, in words: a dict's key; a list's
    number itself, where the entry is one (a trial read a shuffle buffer's
    ``([0], [1], [2], ...)`` as what it held), else its index."""
    value = ref.get(holder + child) if child.startswith("[") else None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return child
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def _holders(path: str) -> list[str]:
    """The dicts and lists above ``path``, outermost first: ``workers``,
    ``workers.0`` of ``workers.0.buffer[1]``."""
    cuts = [i for i, c in enumerate(path) if c in ".[" and i > 0]
    return [path[:i] for i in cuts]


def _step_apart(differing: list[tuple[str, Any]], ref: dict[str, Any],
                new: dict[str, Any], after_load: bool = True) -> str:
    """Of a scheduler (a ``last_epoch`` among the differing leaves), a count
    one step behind or ahead of the reference's, in words (a trial's
    checkpoint taken before the step's scheduler.step() was pointed only at
    its load). ``after_load``: right after a load (else at the end: trial 854)."""
    paths = [p for p, _ in differing if p.rsplit(".", 1)[-1] == "last_epoch"]
    apart = {new.get(p) - ref[p] for p in paths if isinstance(ref.get(p), int)
             and isinstance(new.get(p), int)}
    if apart == {-1}:
        # (trial 138: a scheduler made anew by the load, at 0 where the run was at 1,
        # read as one saved a step early)
        # (trial 377: at a resume point after the first step, a scheduler thrown away in
        # the load and made anew was offered that last, after a framework's restore)
        fresh = all(new.get(p) == 0 for p in paths)
        behind = f"{SAVED_BEFORE_STEP}, or a load that steps it one time fewer"
        # (trials 514, 532: fuzz shrank a scheduler the checkpoint never held to a resume
        # at 1, where "one step behind" led; a later resume point read "0, expected 8";
        # trial 580: "right after step 1" of a resume after step 3, its scheduler stepped
        # every third step)
        return (f"; {FRESH_COUNT}: one the load does not restore, or one made anew after "
                "it (at this resume point, where the uninterrupted run's scheduler had "
                f"stepped once, one a step behind reads the same, {behind}, which a later "
                "resume point tells apart)" if fresh
                # (trial 854: at the end, a scheduler the checkpoint never held, whose
                # uninterrupted run had stepped once by the resume point, read only so)
                else f"; one step behind: {behind}" + ("" if after_load else (
                    ", or one the load does not restore where the uninterrupted run's had "
                    "stepped once by the resume point (a later resume point tells them apart)")))
    if apart == {1}:
        return SCHEDULER_AHEAD
    return ""


SCHEDULER_AHEAD = ("; one step ahead: stepped once more in or after the load (a scheduler made "
                   "there with last_epoch= steps once as it is made), or saved after it")
"""Said of a scheduler restored one step ahead (``verdict._rate_of_a_scheduler_ahead``
reads it)."""


def _scheduled_only(differing: list[tuple[str, Any]]) -> str:
    """Of an optimizer's differing entries, when all are what a scheduler sets,
    that in words ('' otherwise)."""
    paths = [p for p, _ in differing]
    if not all(_LEARNING_RATE.fullmatch(p) or _MOMENTUM.fullmatch(p) for p in paths):
        return ""
    if all(_LEARNING_RATE.fullmatch(p) for p in paths):
        return LEARNING_RATE_ONLY
    return MOMENTUM_TOO if any(_LEARNING_RATE.fullmatch(p) for p in paths) else ""


def _fresh_rate(differing: list[tuple[str, Any]], ref: dict[str, Any],
                new: dict[str, Any]) -> str:
    """Of a fresh optimizer, its learning rate where it differs too (a trial:
    the first divergence was the rate, which the line did not mention)."""
    rates = [p for p, how in differing
             if _LEARNING_RATE.fullmatch(p) and how not in ("missing", "unexpected")]
    if not rates:
        return ""
    return (f"; its learning rate too: {_label(rates[0], True)} "
            f"{values_apart(new[rates[0]], ref[rates[0]])}, which a scheduler sets: a fresh "
            "optimizer has the rate of a fresh start")

SCHEDULER_LOST = ("; or a scheduler whose own state the checkpoint does not hold goes on "
                  "from a fresh start (see its own line)")
"""The cause ``LEARNING_RATE_ONLY`` ends with, which the diagnosis leaves out where
no scheduler has a line of its own (``verdict._no_absent_scheduler``)."""

LEARNING_RATE_ONLY = (
    f"{RATE_ALONE}a scheduler sets: one stepped in or after "
    "your load(), one made there (a scheduler's constructor sets the rate: make it before "
    "the optimizer's state is loaded), or a rate set there by hand, leaves it so; or the "
    "checkpoint was saved before the step's scheduler.step()" + SCHEDULER_LOST)
"""Said of an optimizer whose state after the load differs in its learning rate
alone (a trial: an extra scheduler step after the load showed as the optimizer
restored wrongly, and the scheduler as not the cause)."""

MOMENTUM_TOO = (
    # (trial 841: a OneCycleLR made after the optimizer's load, which sets the cycle's first
    # rate and momentum, was not among the causes)
    f"{RATE_AND_MOMENTUM}a scheduler that cycles the momentum sets (OneCycleLR, CyclicLR): "
    "one stepped in or after your load(), one made there (its constructor sets the cycle's "
    "first rate and momentum: make it before the optimizer's state is loaded), or values "
    "set there by hand, leave them so; or the checkpoint was saved before the step's "
    "scheduler.step()")
"""Said of an optimizer whose state after the load differs in its learning rate
and momentum alone (a trial: OneCycleLR stepped once more after the load showed
as the optimizer's betas restored wrongly)."""


def _more(others: list[tuple[str, Any]], ref: dict[str, Any], new: dict[str, Any],
          optimizer: bool, head: str | None = None) -> str:
    """`` (and 4 more entries of its state_dict() differ, ...)``: with up to two
    public single values among them, said (a trial: a Lookahead's lost step
    counter was among "4 more entries", its slow weights named first). Items
    of the list ``head`` (the entry named first) is an item of are counted as
    its items (trial 724: "value[0] ... (and 1 more entry ..., among them
    value[1] ...; value[2] ...)" of one list of 12 items, 24 expected)."""
    if not others:
        return ""
    group = _item_of(head) if head is not None else None
    items = [o for o in others if group is not None and _item_of(o[0]) == group != head]
    if items:
        rest = [o for o in others if o not in items]
        tail = _more(rest, ref, new, optimizer)
        tail = f", {tail[2:-1]}" if tail else ""
        return f" (and {len(items)} more of its items differ{tail})"
    said = [f"{_label(path, optimizer, ref)} {values_apart(new[path], ref[path])}"
            for path, how in others
            if how not in ("missing", "unexpected") and not isinstance(how, _Whole)
            and not is_private(path)
            and not (isinstance(ref[path], torch.Tensor) and ref[path].numel() != 1)][:2]
    # (trial 620: a LambdaLR's `_last_lr` of two groups counted as two entries: a list's
    # items are one entry)
    n = len({_item_of(path) for path, _ in others})
    return (f" (and {n} more {'entry' if n == 1 else 'entries'} of its state_dict() "
            f"{'differs' if n == 1 else 'differ'}"
            + (f"{': ' if len(said) == n else ', among them '}{'; '.join(said)}" if said else "")
            + ")")


def _item_of(path: str) -> str:
    """The entry a leaf path is an item of (``value`` of ``value[3]``), or itself."""
    return re.sub(r"(\[\d+\])+$", "", path)


def _spread(value: Any, how: Any) -> float:
    """How much a tensor of many values differs (max |Δ|); 0 for anything else,
    which keeps its place."""
    if isinstance(value, torch.Tensor) and value.numel() > 1 and isinstance(how, Difference) \
            and how.max_abs is not None and math.isfinite(how.max_abs):
        return how.max_abs
    return 0.0


def differing_leaves(ref: dict[str, Any], new: dict[str, Any],
                     tolerance: Tolerance | None = None) -> list[tuple[str, Any]]:
    """The leaves of two flattened states that differ (bit for bit, or beyond
    ``tolerance``): (path, "missing" | "unexpected" | the Difference)."""
    differing: list[tuple[str, Any]] = []
    for path in list(ref) + [p for p in new if p not in ref]:
        if path not in new:
            differing.append((path, "missing"))
        elif path not in ref:
            differing.append((path, "unexpected"))
        else:
            d = compare_values(ref[path], new[path], tolerance or Tolerance.bitwise())
            if not d.within_tolerance:
                differing.append((path, d))
    return differing


def _is_per_rank(state: Any) -> bool:
    """A sharded component's state as the merged capture of many ranks holds
    it: ``{"[rank 0]": ..., "[rank 1]": ...}`` (``distributed.merge_captures``)."""
    return isinstance(state, dict) and bool(state) and set(state) == set(_rank_keys(len(state)))


def _rank_keys(n: int) -> list[str]:
    return [rank_name("", r) for r in range(n)]


def _per_rank_difference(name: str, reference: Any, restored: Any,
                         step: int, ref_meta: dict[str, Any] | None,
                         restored_meta: dict[str, Any] | None,
                         unused: set[str] | None) -> str | None:
    """A sharded component rank by rank: the first rank's difference in words,
    as one rank's state is described (the same ranking of entries), and how many
    other ranks differ. One side may be held once, replicated (every rank's
    alike: a fresh optimizer after a load that forgot it), the other rank by rank."""
    keys = _rank_keys(len(reference if _is_per_rank(reference) else restored))
    reference, restored = ({key: state[key] if _is_per_rank(state) else state for key in keys}
                           for state in (reference, restored))
    differing = [(key, text) for key in keys
                 if (text := describe_difference(name, reference[key], restored.get(key), step,
                                                 ref_meta, restored_meta, unused))]
    if not differing:
        return None
    key, text = differing[0]
    others = len(differing) - 1
    more = f" (and {others} more rank{'s' if others > 1 else ''} differ{'' if others > 1 else 's'})"
    return f"{key} {text}" + (more if others else "")


def is_private(path: str) -> bool:
    """Whether a state_dict() path goes through a private entry (``_step_count``)."""
    return any(part.startswith("_") for part in path.replace("[", ".").split("."))


def _is_empty_state(leaves: dict[str, Any]) -> bool:
    return leaves.get("state") == "{}"


def _streams_text(paths: list[str], step: int, unused: set[str],
                  set_right: set[str] | None = None) -> str:
    """The differing streams of an ``rng`` component, those used after ``step``
    first, then those the program set right itself, then those never drawn from."""
    idle = {_rng_stream(p) for p in paths if _stream_key(p) in unused}
    righted = {_rng_stream(p) for p in paths if _stream_key(p) in (set_right or ())} - idle
    streams = sorted({_rng_stream(p) for p in paths} - idle - righted)
    # (names, why): "{}" in a why is the step it speaks of, "it" where the head names it
    notes = [(sorted(names), why) for names, why in (
        (righted, f"{_RIGHTED} {step + 1}"),
        (idle, _UNREAD + " {} to its end")) if names]
    named, rest = (streams, notes) if streams else (notes[0][0], notes[1:])
    # (trial 165 read "differs from the stream at step 8" as vague: whose stream)
    head = (f"{', '.join(named)} differ{'s' if len(named) == 1 else ''} from the "
            f"uninterrupted run's at step {step}"
            + ("" if streams else ", " + notes[0][1].format("it")))
    return head + "".join(f" (and {', '.join(names)}, {why.format(f'step {step}')})"
                          for names, why in rest)


_RIGHTED = "which the program set right itself during step"
_UNREAD = "which the uninterrupted run held the same from"
"""How a finding names streams the reference never changed after the restore
(trial 181: "never drew from after it" of a generator seeded again to the
same state before each draw: the run did draw from it)."""


def righted_only(detail: str) -> bool:
    """Whether a finding of random state says that every stream of it that
    differs was set right by the program itself during the first step after
    the restore (``_streams_text``'s head)."""
    head = detail.split("; ", 1)[0].split(" (and ", 1)[0]
    return re.search(r" from the uninterrupted run's at step \d+, " + _RIGHTED + r" \d+$",
                     head) is not None


def unread_only(detail: str) -> bool:
    """Whether a finding of random state says that no stream of it that
    differs was drawn from after the restore (``_streams_text``'s head)."""
    head = detail.split("; ", 1)[0].split(" (and ", 1)[0]
    return head.endswith(f", {_UNREAD} it to its end")


def _stream_key(path: str) -> str:
    """The stream a flattened path of an ``rng`` state is in, keyed as
    ``streams.stream_items`` keys it (``torch``, ``cuda:1``, ``generator NAME``)."""
    head = path.split(".", 1)[0].split("[", 1)[0]
    if head == "generators":
        return f"generator {path.split('.')[1]}"
    if head == "cuda" and path.startswith("cuda["):
        device = int(path[len("cuda["):].split("]", 1)[0])
        return "cuda" if device == 0 else f"cuda:{device}"
    return head


def _rng_stream(path: str) -> str:
    head = path.split(".", 1)[0].split("[", 1)[0]
    if head == "generators":
        return f"generator {path.split('.')[1]!r}"
    return _RNG_STREAMS.get(head, head)


def _misplaced(name: str, states: tuple[Any, Any], ref_meta: dict[str, Any] | None,
               restored_meta: dict[str, Any] | None) -> str | None:
    """An optimizer restored onto other tensors than the model's, or onto the
    reference's parameters at other positions, or whose live state keeps entries
    under no parameter (``_stray_text``), in words (None: none of them)."""
    reference, restored = states
    stray = _stray_text(reference, restored)
    if stray is not None:
        return stray
    detached = _detached(ref_meta, restored_meta) if name == OPTIMIZER else None
    if detached is not None or not _per_parameter(reference):
        return detached
    return _reordered(name, ref_meta, restored_meta)


def _per_parameter(state: Any) -> bool:
    """Whether a state is an optimizer's own (per-parameter state saved by
    position), not a scheduler's that names the optimizer it drives."""
    return isinstance(state, dict) and "state" in state and "param_groups" in state


def _reordered(name: str, ref_meta: dict[str, Any] | None,
               restored_meta: dict[str, Any] | None) -> str | None:
    """An optimizer whose parameters are the reference's at other positions,
    in words (None: listed alike, or not the same parameters)."""
    want, got = _optimizer_names(name, ref_meta), _optimizer_names(name, restored_meta)
    if not want or not got or want == got or sorted(want) != sorted(got):
        return None
    moved = [(i, g, w) for i, (g, w) in enumerate(zip(got, want)) if g != w]
    at, first, expected = moved[0]
    # (a trial: a load() that listed them sorted, where the build followed the model,
    # was told only of sets, and "or sorted names" as the fix)
    got_moved, want_moved = [g for _, g, _ in moved], [w for _, _, w in moved]
    sort = "" if len(moved) < 3 else (  # (two swapped are always sorted on one side)
        "Here the restart lists those by sorted name and the run that saved them does not: "
        "build both the same way. " if got_moved == sorted(got_moved) else
        "Here the run that saved them lists those by sorted name and the restart does not: "
        "build both the same way. " if want_moved == sorted(want_moved) else "")
    return (f"{REORDERED}: {len(moved)} of its {len(got)} parameters are at other positions "
            f"(position {at}: '{first}', expected '{expected}'), so the state saved by "
            f"position belongs to other parameters. {sort}The saving run and the restart must "
            "list them in one order. An order that changes from one interpreter to the next "
            "comes from iterating a set: of names, it follows "
            "PYTHONHASHSEED; of parameters or modules, their addresses: list the parameters in "
            "a fixed order (the model's named_parameters(), or sorted names), the same in the "
            "build and in load()")


def _optimizer_names(name: str, meta: dict[str, Any] | None) -> list[str] | None:
    """The parameter names of a declared optimizer's state, in its order (None:
    the component is no optimizer): the ``optimizer`` component's, or another's."""
    meta = meta or {}
    if name == OPTIMIZER:
        return meta.get("optimizer_params") or []
    return (meta.get("optimizer_params_of") or {}).get(name)


def _label(path: str, optimizer: bool, ref: dict[str, Any] | None = None) -> str:
    """A leaf's name in words; of a state that wraps one value (a ``Value`` or
    an ``Attr``: ``{"value": ...}``, told by ``ref``, the flattened state), the
    wrapper's key left out (a trial's tracker, whose state_dict() has a
    ``value`` entry beside others, read "differs:  0, expected 0.78")."""
    if optimizer and path.startswith("state."):
        param, _, rest = path.removeprefix("state.").rpartition(".")
        return f"{rest} of `{param}`"
    if path == "":
        return ""
    if ref is not None and _wraps_one_value(ref):
        return "" if path == "value" else path.removeprefix("value.")
    return path


def leaf_label(path: str, flat: dict[str, Any]) -> str:
    """A leaf of a component's flattened state (``flat``), named as the
    diagnosis names it (an ``Attr``'s ``value.`` left out)."""
    return _label(path, False, flat)


def _wraps_one_value(ref: dict[str, Any]) -> bool:
    """Whether a flattened state is ``{"value": ...}`` (a ``Value``, an ``Attr``)."""
    return bool(ref) and all(p == "value" or p.startswith(("value.", "value["))
                             for p in ref)


def _value(v: Any) -> str:
    if isinstance(v, torch.Tensor):
        return str(v.item()) if v.numel() == 1 else f"tensor{list(v.shape)}"
    return repr(v)


def values_apart(value: Any, expected: Any) -> str:
    """``VALUE, expected EXPECTED``; two floats with the fewest significant
    digits (6 at least) that still tell them apart, where either is long (a
    trial: a rate computed as 0.9 * 0.0025 read ``0.0022500000000000003``); as
    Python writes them where only their last digits differ."""
    a, b = (v.item() if isinstance(v, torch.Tensor) and v.numel() == 1 else v
            for v in (value, expected))
    if (type(a) is float and type(b) is float and math.isfinite(a) and math.isfinite(b)
            and max(len(repr(a)), len(repr(b))) > 12):
        for digits in range(6, 17):
            shown, wanted = f"{a:.{digits}g}", f"{b:.{digits}g}"
            if shown != wanted:
                return f"{shown}, expected {wanted}"
    if isinstance(a, (str, bytes)) and isinstance(b, (str, bytes)) and max(len(a), len(b)) > 64:
        return _long_apart(a, b)
    return f"{_value(value)}, expected {_value(expected)}"


def _long_apart(a: str | bytes, b: str | bytes) -> str:
    """Two long strings (a generator's state encoded as text) told apart by
    their lengths and where they first differ, not printed whole (trial 147:
    a diagnosis line of 13,562 characters, the component's name at its start)."""
    kind = "string" if isinstance(a, str) else "bytes"
    at = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b))) + 1
    sizes = (f"both of {len(a)} characters" if len(a) == len(b)
             else f"{len(a)} characters, expected {len(b)}")
    return f"a {kind} that differs from the expected one from its character {at} ({sizes})"
