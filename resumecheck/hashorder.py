"""The order a ``set`` of strings iterates in under a given ``PYTHONHASHSEED``.

A program that builds its optimizer's parameter groups by iterating a set of
parameter names lists them in an order that follows the interpreter's hash
seed; a restart in a new interpreter (a new hash seed) gives the state its
checkpoint saved by position to other parameters. The check restarts fresh
interpreters under fixed hash seeds, and a set ordered alike under two of
them hides the bug. This module computes, without starting an interpreter,
how CPython (3.11, 64-bit, its default SipHash-1-3 string hash) orders a set
of strings under a hash seed, so the check can pick a restart's hash seed
under which the optimizer's groups, were they sets, would be ordered
otherwise. A model of CPython's internals: checked against real interpreters
(tests/test_hashorder.py); where it is wrong, the check only loses the
choice, never a verdict.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = ["set_order", "str_hash", "telling_seed"]

_MASK = (1 << 64) - 1
_LINEAR_PROBES = 9
_PERTURB_SHIFT = 5


def _secret(seed: int) -> tuple[int, int]:
    """SipHash's two keys as ``PYTHONHASHSEED=seed`` sets them (CPython's lcg)."""
    if seed == 0:
        return 0, 0
    x, out = seed, bytearray()
    for _ in range(16):
        x = (x * 214013 + 2531011) & 0xFFFFFFFF
        out.append((x >> 16) & 0xFF)
    return int.from_bytes(out[:8], "little"), int.from_bytes(out[8:16], "little")


def _rotl(x: int, b: int) -> int:
    return ((x << b) | (x >> (64 - b))) & _MASK


def _round(v0: int, v1: int, v2: int, v3: int) -> tuple[int, int, int, int]:
    v0 = (v0 + v1) & _MASK
    v2 = (v2 + v3) & _MASK
    v1 = _rotl(v1, 13) ^ v0
    v3 = _rotl(v3, 16) ^ v2
    v0 = _rotl(v0, 32)
    v2 = (v2 + v1) & _MASK
    v0 = (v0 + v3) & _MASK
    v1 = _rotl(v1, 17) ^ v2
    v3 = _rotl(v3, 21) ^ v0
    v2 = _rotl(v2, 32)
    return v0, v1, v2, v3


def _siphash13(k0: int, k1: int, data: bytes) -> int:
    v0, v1 = k0 ^ 0x736F6D6570736575, k1 ^ 0x646F72616E646F6D
    v2, v3 = k0 ^ 0x6C7967656E657261, k1 ^ 0x7465646279746573
    whole = len(data) - len(data) % 8
    for at in range(0, whole, 8):
        m = int.from_bytes(data[at:at + 8], "little")
        v3 ^= m
        v0, v1, v2, v3 = _round(v0, v1, v2, v3)
        v0 ^= m
    b = ((len(data) & 0xFF) << 56) | int.from_bytes(data[whole:], "little")
    v3 ^= b
    v0, v1, v2, v3 = _round(v0, v1, v2, v3)
    v0 ^= b
    v2 ^= 0xFF
    for _ in range(3):
        v0, v1, v2, v3 = _round(v0, v1, v2, v3)
    return v0 ^ v1 ^ v2 ^ v3


def str_hash(s: str, seed: int) -> int:
    """``hash(s)`` in an interpreter started with ``PYTHONHASHSEED=seed``."""
    if not s:
        return 0
    top = max(map(ord, s))
    data = (s.encode("latin-1") if top < 0x100 else
            s.encode("utf-16-le") if top < 0x10000 else s.encode("utf-32-le"))
    h = _siphash13(*_secret(seed), data)
    h = h - (1 << 64) if h >= 1 << 63 else h
    return -2 if h == -1 else h


def set_order(names: Iterable[str], seed: int) -> list[str]:
    """The order ``list(set_of_names)`` gives under ``PYTHONHASHSEED=seed``, the
    set built by adding ``names`` one by one (a comprehension, ``set(list)``)."""
    mask, fill = 7, 0
    entries: list[tuple[str, int] | None] = [None] * 8
    for name in dict.fromkeys(names):
        h = str_hash(name, seed)
        _insert(entries, mask, name, h)
        fill += 1
        if fill * 5 >= mask * 3:  # (grow: to 4x the entries, the next power of two above)
            size = 8
            while size <= fill * 4:
                size <<= 1
            old = [e for e in entries if e is not None]
            entries, mask = [None] * size, size - 1
            for key, kh in old:
                _insert(entries, mask, key, kh)
    return [e[0] for e in entries if e is not None]


def _insert(table: list[tuple[str, int] | None], mask: int, key: str, h: int) -> None:
    """CPython's probe sequence: a few linear probes, then a perturbed jump."""
    perturb = h & _MASK
    i = perturb & mask
    while True:
        if table[i] is None:
            table[i] = (key, h)
            return
        if i + _LINEAR_PROBES <= mask:
            for j in range(1, _LINEAR_PROBES + 1):
                if table[i + j] is None:
                    table[i + j] = (key, h)
                    return
        perturb >>= _PERTURB_SHIFT
        i = (i * 5 + 1 + perturb) & mask


def telling_seed(groups: Sequence[Sequence[str]], first: int, candidates: Iterable[int]) -> int | None:
    """Of ``candidates``, the hash seed under which the most groups of two or
    more names (each in the order the program likely added them: the model's),
    were each a set, would iterate otherwise than under ``first``
    (every one, where a seed does; the first such seed): whichever group a
    program builds from a set then shows. None: no group has two names, or
    no seed orders any otherwise."""
    named = [list(dict.fromkeys(g)) for g in groups if len(set(g)) > 1]
    if not named:
        return None
    before = [set_order(g, first) for g in named]

    def otherwise(g: list[str], b: list[str], seed: int) -> bool:
        # where two names share a slot, the order they were added in decides:
        # otherwise whichever order the program added them in
        return set_order(g, seed) != b and set_order(g[::-1], seed) != b

    best, flipped = None, 0
    for seed in candidates:
        if seed == first:
            continue
        n = sum(otherwise(g, b, seed) for g, b in zip(named, before))
        if n > flipped:
            best, flipped = seed, n
        if flipped == len(named):
            break
    return best
