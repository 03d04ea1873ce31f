"""Random streams, one at a time: per-step records and the draw-offset search.

The tracer records a digest of every declared random stream at the start of
every step (cheap: no draw, a hash of the state). When a resumed run departs
from the reference, the streams at the start of the first steps after the
restore are compared with the reference's; where one differs, a bounded
search on a copy of the stream state says by how many draws it is ahead or
behind:

* torch CPU stream and registered CPU ``torch.Generator``s: one draw is what
  a DataLoader draws its base seed with,
  ``torch.empty((), dtype=torch.int64).random_()``;
* Python ``random`` and numpy's global stream: one 32-bit word of the
  Mersenne Twister (``random.random()`` and ``np.random.rand()`` use two);
* a registered numpy ``Generator``: one raw output of its bit generator.

CUDA streams are compared but not searched (their Philox state is a counter
whose unit depends on the kernel that drew).

In a distributed run every rank records its own streams, named for the rank
(``torch[rank 1]``, as ``resumecheck.distributed`` merges them): each is
labelled and searched as the stream it names, on that rank.
"""

from __future__ import annotations

import contextlib
import functools

import random
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np
import torch
import xxhash

from resumecheck.components import (
    RNGState, python_state_from_plain, split_rank_name,
)

__all__ = [
    "MAX_DRAWS",
    "MT_REACH",
    "SEED_CALLS",
    "STEPS_AFTER_RESTORE",
    "declared_streams",
    "draw_offset",
    "initial_seed",
    "is_stream_detail",
    "streams_set",
    "is_stream_state",
    "search_reach",
    "stream_digests",
    "stream_label",
    "stream_items",
    "stream_states",
    "unseeded_text",
]

MAX_DRAWS = 64
"""How far forward and back the offset search looks."""

MT_REACH = 64
"""Streams of a Mersenne Twister (Python's and numpy's global streams, torch's
CPU generators) are searched this many times further in 32-bit words (4096:
an epoch's shuffle drawn again): their word position says where the other
state can be, so the search costs a few comparisons."""

STEPS_AFTER_RESTORE = 2
"""How many steps after a restore are searched: the first step's start shows a
draw between the load and the step; the second's, an extra draw during the
first step (an iterator created lazily on first use)."""

_LABELS = {
    "python": "Python random stream",
    "numpy": "numpy global stream",
    "torch": "torch CPU stream",
    "cuda": "torch CUDA stream",
}


SEED_CALLS = {"python": "random.seed", "numpy": "numpy.random.seed", "torch": "torch.manual_seed"}


def unseeded_text(streams: list[str], step: int, quantity: str) -> str:
    """Two launches of a program differ (a run started from other global streams
    departs at ``step`` in ``quantity``; ``streams``: the ones that alone make
    it depart, empty when none does alone): what that means, what to do."""
    if streams:
        names = " and ".join(f"the {_LABELS[s]}" for s in streams)
        calls = ", ".join(SEED_CALLS[s] for s in streams)
        drawn = (f"it draws from {names} without seeding "
                 f"{'it' if len(streams) == 1 else 'them'} ({calls})")
    else:
        drawn = ("it draws from the global random streams without seeding them (no one of "
                 "them alone makes the difference)")
    where = f"in {quantity}" if step == 0 else f"from step {step} ({quantity})"
    return (f"two launches of this program differ {where}: {drawn}, "
            "and a new interpreter seeds every global stream from entropy. Each run of this "
            "check starts from the same fixed streams, so the verdict still holds, but two "
            "real runs of the program will not match: seed every stream it draws from where "
            "the program is built")


def declared_streams(components: Iterable[Any]) -> list[RNGState]:
    """The RNGState objects among the declared components. Undeclared streams
    are not recorded: nothing restores them, and restarts move them on purpose."""
    return [c.obj for c in components if isinstance(c.obj, RNGState)]


def stream_states(sources: list[RNGState]) -> dict[str, Any]:
    """Every stream's state, keyed by stream (``generator NAME`` for registered
    generators); reading a state draws nothing."""
    out: dict[str, Any] = {}
    for rng in sources:
        out.update(stream_items(rng.state_dict()))
    return out


def stream_items(state: dict[str, Any]) -> dict[str, Any]:
    """An ``RNGState``'s state (as its ``state_dict()`` or a capture holds it),
    stream by stream, keyed as ``stream_states`` keys them: ``torch``,
    ``cuda`` and ``cuda:1``, ``generator NAME``."""
    out: dict[str, Any] = {}
    for key, value in state.items():
        if key == "generators":
            for name, gen_state in value.items():
                out[f"generator {name}"] = gen_state
        elif key == "cuda":
            for i, dev in enumerate(value):
                out["cuda" if i == 0 else f"cuda:{i}"] = dev
        else:
            out[key] = value
    return out


def is_stream_state(state: Any) -> bool:
    """Whether a component's state is an ``RNGState``'s."""
    keys = set(RNGState.STREAMS) | {"generators"}
    return (isinstance(state, dict) and isinstance(state.get("generators"), dict)
            and set(state) <= keys)


def stream_digests(states: dict[str, Any]) -> dict[str, str]:
    return {key: _digest(value) for key, value in states.items()}


def _digest(value: Any) -> str:
    h = xxhash.xxh3_128()  # (as compare.digest: only tells two runs' streams apart)
    _feed(h, value)
    return h.hexdigest()


def _feed(h: Any, value: Any) -> None:
    if isinstance(value, torch.Tensor):
        h.update(value.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy())
    elif isinstance(value, dict):
        for key in sorted(value, key=str):
            h.update(str(key).encode())
            _feed(h, value[key])
    else:
        h.update(repr(value).encode())


def is_stream_detail(detail: str) -> bool:
    """Whether a finding's words are of a random stream (they open with its label)."""
    return detail.startswith(("generator ", *(stream_label(s) for s in RNGState.STREAMS)))


def stream_label(key: str) -> str:
    """The stream in words; a rank's own stream (``torch[rank 1]``) says its rank."""
    base, rank = split_rank_name(key)
    if rank is not None:
        return f"{_base_label(base)} of rank {rank}"
    return _base_label(key)


def _base_label(key: str) -> str:
    if key.startswith("generator "):
        return f"generator `{key.removeprefix('generator ')}`"
    if key.startswith("cuda:"):
        return f"torch CUDA stream of device {key.removeprefix('cuda:')}"
    return _LABELS.get(key, key)


def draw_offset(key: str, reference: Any, other: Any, limit: int = MAX_DRAWS) -> tuple[int | None, str]:
    """By how many units ``other`` is ahead of (> 0) or behind (< 0) ``reference``.

    Searches ``limit`` units forward from each state on copies; the streams
    themselves are untouched. Returns (None, unit) when the states are not
    within ``limit`` units of each other (another seed, a lost restore) or the
    stream cannot be searched.
    """
    walkers = _walkers(split_rank_name(key)[0], reference)
    if not walkers:
        return None, "Philox offset" if key.startswith("cuda") else "draws"
    for walk, unit, scale in walkers:
        for sign, start, goal in ((1, reference, other), (-1, other, reference)):
            try:
                n = walk(start, goal, limit * scale)
            except Exception:  # a state of an unexpected shape: no search
                return None, walkers[0][1]
            if n is not None:
                return sign * n, unit
    return None, walkers[0][1]


Walk = Callable[[Any, Any, int], "int | None"]
"""Advance a live copy of a stream from one state a unit at a time: after
how many units (1 to the limit) it holds the other state, or None."""


def _walkers(key: str, sample: Any) -> list[tuple[Walk, str, int]]:
    """How a stream is searched, in order: (walk, unit, the limit's multiple)."""
    if key == "torch" or (key.startswith("generator ") and isinstance(sample, torch.Tensor)):
        # in int64 draws (a DataLoader's base seed is one), then in 32-bit words:
        # most draws take one word per value (a randperm of n items n - 1), which
        # an odd count of cannot be reached in int64 draws
        if _torch_position(sample) is not None and _torch_layout_known():  # (MT19937 too)
            return [(_torch_draws_walk, "draws", 1), (_torch_words_walk, "32-bit words", MT_REACH)]
        return [(_torch_walk(torch.int64), "draws", 1),
                (_torch_walk(torch.int32), "32-bit words", 2)]
    if key == "python":
        return [(_python_walk, "32-bit words", MT_REACH)]
    if key == "numpy":
        return [(_numpy_legacy_walk, "32-bit words", MT_REACH)]
    if key.startswith("generator ") and isinstance(sample, dict) and "bit_generator" in sample:
        return [(_bitgen_walk, "raw outputs", 1)]
    return []


# -- torch: one int64 draw (as DataLoader draws its base seed), or one word -----

def _torch_walk(dtype: torch.dtype) -> Walk:
    def walk(start: Any, goal: Any, limit: int) -> int | None:
        g = torch.Generator()
        g.set_state(start)
        for n in range(1, limit + 1):
            torch.empty((), dtype=dtype).random_(generator=g)
            if _tensor_same(g.get_state(), goal):
                return n
        return None

    return walk


_TORCH_CPU_STATE_BYTES = 5056
"""The size of a torch CPU generator's state; its word position is the
unsigned 64-bit integer at bytes 16-24 (0 right after seeding: the first
draw regenerates the words, as at the last position)."""


def _torch_position(state: Any) -> int | None:
    """A torch CPU generator state's word position (None: not such a state)."""
    if not isinstance(state, torch.Tensor) or state.dtype != torch.uint8 \
            or state.numel() != _TORCH_CPU_STATE_BYTES:
        return None
    position = int(state[16:24].clone().view(torch.int64).item())
    return position if 0 <= position <= _MT_WORDS else None


def initial_seed(state: Any) -> int | None:
    """The seed a torch CPU generator's ``state`` was last seeded with (its
    first eight bytes). None: no such state, or a torch that keeps it elsewhere."""
    if _torch_position(state) is None or not _torch_layout_known():
        return None
    return int(state[:8].clone().view(torch.int64).item())


@functools.lru_cache(maxsize=None)
def _torch_layout_known() -> bool:
    """Whether this torch keeps a CPU generator's word position where
    ``_torch_position`` reads it (seeded: 0; one draw later: 1; 624 draws: 624),
    and its seed where ``initial_seed`` reads it."""
    g = torch.Generator().manual_seed(1)
    seen = [_torch_position(g.get_state())]
    for n in (1, 623):
        torch.empty(n, dtype=torch.int32).random_(generator=g)
        seen.append(_torch_position(g.get_state()))
    seed = int(g.get_state()[:8].clone().view(torch.int64).item())  # (initial_seed reads it)
    return seen == [0, 1, _MT_WORDS] and seed == 1


def _torch_words_walk(start: Any, goal: Any, limit: int) -> int | None:
    """As numpy's: where the word position says the goal can be, a copy
    advanced there at once (one int32 draw takes one word) and compared whole."""
    at, wanted = _torch_position(start), _torch_position(goal)
    if at is None or wanted is None:
        return None
    for n in _mt_steps(at or _MT_WORDS, wanted, limit):
        g = torch.Generator()
        g.set_state(start)
        torch.empty(n, dtype=torch.int32).random_(generator=g)
        if _tensor_same(g.get_state(), goal):
            return n
    return None


def _torch_draws_walk(start: Any, goal: Any, limit: int) -> int | None:
    """In int64 draws (two words each: a DataLoader's base seed is one)."""
    words = _torch_words_walk(start, goal, 2 * limit)
    return words // 2 if words is not None and words % 2 == 0 else None


def _tensor_same(a: Any, b: Any) -> bool:
    return isinstance(b, torch.Tensor) and a.shape == b.shape and torch.equal(a, b)


# -- Python random: one 32-bit word ---------------------------------------------

def _python_walk(start: Any, goal: Any, limit: int) -> int | None:
    """As numpy's (both are MT19937): where the word position says the goal
    can be, a copy advanced there at once and compared whole."""
    begin, wanted = python_state_from_plain(start), python_state_from_plain(goal)
    if begin[2] != wanted[2]:  # (a cached normal value)
        return None
    for n in _mt_steps(begin[1][-1], wanted[1][-1], limit):
        r = random.Random()
        r.setstate(begin)
        r.getrandbits(32 * n)  # (n words: one call)
        if r.getstate() == wanted:
            return n
    return None


def search_reach(key: str, unit: str, sample: Any = None) -> int:
    """How far ``draw_offset`` searches ``key``'s stream (whose state
    ``sample`` is like), in ``unit``s."""
    walkers = _walkers(split_rank_name(key)[0], sample)
    return MAX_DRAWS * next((scale for _, u, scale in walkers if u == unit), 1)


# -- numpy's global (legacy) stream: one 32-bit word ----------------------------

def _numpy_legacy_walk(start: Any, goal: Any, limit: int) -> int | None:
    """Where the word position says the goal can be (a draw moves it one on;
    past the last word it wraps to 1 after regenerating the keys), then one
    copy of the stream advanced there and compared whole: the position is
    read from the state, never by stepping word by word. The normal value a
    draw of ``numpy.random.normal`` keeps for the next (``has_gauss``) is no
    word: two states a number of words apart may differ in it too (a trial's
    fresh stream, 814 words behind, was said "not within 4096 words")."""
    begin, wanted = int(start["pos"]), int(goal["pos"])
    keys = start["keys"].numpy().astype(np.uint32) if isinstance(start["keys"], torch.Tensor) \
        else np.asarray(start["keys"], dtype=np.uint32)
    for n in _mt_steps(begin, wanted, limit):
        bg = np.random.MT19937()
        bg.state = {"bit_generator": "MT19937", "state": {"key": keys, "pos": begin}}
        bg.random_raw(n)
        now = bg.state["state"]
        if (int(now["pos"]) == wanted
                and torch.equal(torch.from_numpy(np.asarray(now["key"], dtype=np.int64)),
                                goal["keys"])):
            return n
    return None


_MT_WORDS = 624  # words of MT19937's state: a draw at this position regenerates them first


def _mt_steps(pos: int, goal: int, limit: int) -> list[int]:
    """The numbers of 32-bit draws, 1 to ``limit``, after which MT19937's word
    position moves from ``pos`` to ``goal``: one draw moves it one on; one at
    the last position regenerates the words and leaves it at 1."""
    if not 1 <= goal <= _MT_WORDS:  # (0: only right after seeding, never after a draw)
        return []
    steps = [goal - pos] if goal > pos else []
    steps += range(_MT_WORDS - pos + goal, limit + 1, _MT_WORDS)  # (after a regeneration)
    return [n for n in steps if 1 <= n <= limit]


# -- a registered numpy Generator: one raw output of its bit generator ----------

def _bitgen_walk(start: Any, goal: Any, limit: int) -> int | None:
    """By the bit generator's own state alone: the half word a 32-bit draw
    keeps for the next (``has_uint32``, ``uinteger``) is no raw output, and
    walking by raw outputs never changes it (trial 592: a PCG64 48 outputs
    behind, its integers() drawn 32 bits at a time, read "not within 64")."""
    bg = getattr(np.random, start["bit_generator"])()
    bg.state = start

    def core(state: Any) -> str:
        return _digest(_plain(state.get("state", state)))

    wanted = core(goal)
    for n in range(1, limit + 1):
        bg.random_raw(1)
        if core(bg.state) == wanted:
            return n
    return None


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.integer):
        return int(value)
    return value


_SETTERS = (("torch", torch, "set_rng_state"), ("torch", torch.random, "set_rng_state"),
            ("numpy", np.random, "set_state"), ("python", random, "setstate"))
"""Where a program sets a global stream from a saved state: the stream, and
the module function (``torch.set_rng_state`` is ``torch.random``'s too)."""


@contextlib.contextmanager
def streams_set(into: dict[str, list[str]]) -> Iterator[None]:
    """While inside, note in ``into`` (stream -> digests, as ``stream_digests``
    gives them) each state a global stream is set to from a saved one
    (``torch.set_rng_state``, ``np.random.set_state``, ``random.setstate``):
    read back right after the set, in the form the per-step records digest.
    A program's load() that sets a stream and then draws from it (an iterator
    made again and fast-forwarded) leaves it elsewhere than it set it; this
    says where it set it."""
    saved = [(owner, name, getattr(owner, name)) for _, owner, name in _SETTERS]

    def watched(stream: str, real: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(real)
        def setting(*args: Any, **kwargs: Any) -> Any:
            out = real(*args, **kwargs)
            try:
                state = RNGState(streams=(stream,)).state_dict()[stream]
                into.setdefault(stream, []).append(stream_digests({stream: state})[stream])
            except Exception:  # (a notice never fails a check)
                pass
            return out
        return setting

    try:
        for (stream, owner, name), (_, _, real) in zip(_SETTERS, saved):
            setattr(owner, name, watched(stream, real))
        yield
    finally:
        for owner, name, real in saved:
            setattr(owner, name, real)
