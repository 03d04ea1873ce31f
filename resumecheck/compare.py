"""Comparison: bitwise through digests, or within tolerance on full tensors.

Differences are measured as max absolute, max relative and max ULP distance
(units in the last place), so a report can say *how* different, not only
that a digest changed.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import xxhash

__all__ = [
    "Difference",
    "Tolerance",
    "compare_values",
    "describe_entries",
    "digest",
    "float64_digest",
    "flatten_state",
    "local_tensor",
]

# torch.testing.assert_close defaults (rtol, atol) per dtype.
_DEFAULT_TOLERANCES: dict[torch.dtype, tuple[float, float]] = {
    torch.float16: (1e-3, 1e-5),
    torch.bfloat16: (1.6e-2, 1e-5),
    torch.float32: (1.3e-6, 1e-5),
    torch.float64: (1e-7, 1e-7),
    torch.complex64: (1.3e-6, 1e-5),
    torch.complex128: (1e-7, 1e-7),
}


@dataclass(frozen=True, slots=True)
class Tolerance:
    """How close is close enough: bitwise, or within rtol/atol.

    ``Tolerance.bitwise()`` demands identical bits. ``Tolerance.close()`` uses
    torch.testing's per-dtype defaults; ``rtol``/``atol`` override them.
    """

    bitwise_only: bool = True
    rtol: float | None = None
    atol: float | None = None

    @classmethod
    def bitwise(cls) -> Tolerance:
        return cls(True)

    @classmethod
    def close(cls, rtol: float | None = None, atol: float | None = None) -> Tolerance:
        if (rtol is None) != (atol is None):
            raise ValueError("give both rtol and atol, or neither (torch's defaults)")
        for name, value in (("rtol", rtol), ("atol", atol)):
            if value is not None and not (value >= 0 and math.isfinite(value)):
                raise ValueError(f"{name}={value!r}: must be a finite number >= 0")
        return cls(False, rtol, atol)

    def for_dtype(self, dtype: torch.dtype) -> tuple[float, float]:
        if self.rtol is not None and self.atol is not None:
            return self.rtol, self.atol
        return _DEFAULT_TOLERANCES.get(dtype, (0.0, 0.0))

    def describe(self) -> str:
        if self.bitwise_only:
            return "bitwise"
        if self.rtol is None:
            return "torch.testing defaults per dtype"
        return f"rtol={self.rtol:g}, atol={self.atol:g}"

    def to_json(self) -> dict[str, Any]:
        return {"mode": "bitwise" if self.bitwise_only else "close",
                "rtol": self.rtol, "atol": self.atol}


@dataclass(frozen=True, slots=True)
class Difference:
    """How two values differ: within tolerance or not, and by how much."""

    within_tolerance: bool
    max_abs: float | None = None
    max_rel: float | None = None
    max_ulp: float | None = None
    summary: str = ""

    def worse(self, other: Difference | None) -> Difference:
        if other is None:
            return self
        return Difference(
            self.within_tolerance and other.within_tolerance,
            _max(self.max_abs, other.max_abs),
            _max(self.max_rel, other.max_rel),
            _max(self.max_ulp, other.max_ulp),
            self.summary or other.summary,
        )


def digest(value: Any) -> str:
    """A short, stable fingerprint of a tensor or of a nested plain value.

    xxHash's XXH3 (128 bits): a digest only tells two runs of one check apart
    (nothing adversarial, never stored), and a cryptographic hash costs as
    much as a training step on a 1M-parameter model."""
    h = xxhash.xxh3_128()
    if isinstance(value, torch.Tensor):  # (flatten_state's one leaf, at path "")
        _update(h, value)
        return h.hexdigest()
    for path, leaf in flatten_state(value):
        h.update(path.encode())
        _update(h, leaf)
    return h.hexdigest()


def float64_digest(value: float | list[float]) -> str:
    """``digest`` of ``torch.tensor(value, dtype=torch.float64)`` (a number, or
    a flat list of them), without making the tensor: the same header and bytes."""
    values = np.asarray(value, dtype=np.float64)
    h = xxhash.xxh3_128()
    h.update(f"Ttorch.float64{values.shape}".encode())
    h.update(values.tobytes())
    return h.hexdigest()


def local_tensor(t: torch.Tensor) -> torch.Tensor:
    """This rank's own part of a tensor: the local shard of a DTensor (FSDP2's
    sharded parameters and gradients), the tensor itself otherwise.

    No collective: every rank digests its own shard, which the engine records
    per rank (``param:fc1.weight[rank 1]``). Two runs at the same number of
    ranks shard alike, so their shards are equal exactly when the full tensors
    are; a full tensor would cost an all-gather per tensor per step, inside
    hooks that every rank would have to reach in the same order."""
    to_local = getattr(t, "to_local", None)
    return to_local() if callable(to_local) else t


def _layout(t: torch.Tensor) -> str:
    """A DTensor's global shape and placements (two layouts of one shard must
    not digest alike); empty for a plain tensor."""
    placements = getattr(t, "placements", None)
    if placements is None:
        return ""
    return f"D{tuple(t.shape)}{tuple(str(p) for p in placements)}"


def _update(h: Any, leaf: Any) -> None:
    if (type(leaf) is torch.Tensor and leaf.is_cpu and leaf.layout is torch.strided
            and leaf.is_contiguous() and leaf.dtype in _NUMPY_DTYPES):
        # the common leaf, a plain tensor numpy can view, at a third of the
        # general path's cost (digested ten times a step); the same bytes fed
        key = (leaf.dtype, leaf.shape)
        head = _HEADS.get(key)
        if head is None:
            head = _HEADS[key] = f"T{leaf.dtype}{tuple(leaf.shape)}".encode()
        h.update(head)
        h.update((leaf.detach() if leaf.requires_grad else leaf).numpy())
    elif isinstance(leaf, torch.Tensor):
        layout = _layout(leaf)
        t = _strided(local_tensor(leaf).detach().cpu()).contiguous()
        h.update(f"T{t.dtype}{tuple(t.shape)}{layout}".encode())
        # the bytes, not a copy: numpy's view of them where numpy has the dtype
        # (a third of a small tensor's digest is the reshape and view to bytes)
        h.update(t.numpy() if t.dtype in _NUMPY_DTYPES else t.reshape(-1).view(torch.uint8).numpy())
    else:
        h.update(f"{type(leaf).__name__}:{leaf!r}".encode())


# A plain tensor's header by (dtype, shape): few distinct ones, read every step.
_HEADS: dict[tuple[torch.dtype, torch.Size], bytes] = {}

# Dtypes whose CPU tensors numpy views as they are (bool's bytes too).
_NUMPY_DTYPES = frozenset({
    torch.float64, torch.float32, torch.float16, torch.int64, torch.int32, torch.int16,
    torch.int8, torch.uint8, torch.bool, torch.complex64, torch.complex128})


def flatten_state(value: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Yield (path, leaf) pairs of a nested state in a stable order."""
    if isinstance(value, Mapping):
        if not value:
            yield prefix, "{}"
        for key in sorted(value, key=str):
            yield from flatten_state(value[key], f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(value, (list, tuple)):
        if not value:
            yield prefix, "[]"
        for i, item in enumerate(value):
            yield from flatten_state(item, f"{prefix}[{i}]")
    else:
        yield prefix, value


def compare_values(reference: Any, other: Any, tolerance: Tolerance) -> Difference:
    """Compare two leaves (tensors, numbers, anything with ==)."""
    if isinstance(reference, torch.Tensor) and isinstance(other, torch.Tensor):
        # A DTensor (FSDP2) is compared by its layout and this rank's shard: its
        # own ops would run a collective, and the judging side has no process group.
        if _layout(reference) != _layout(other):
            return Difference(False, summary=f"layout {_layout(other) or 'a plain tensor'}, "
                                             f"expected {_layout(reference) or 'a plain tensor'}")
        return _compare_tensors(local_tensor(reference), local_tensor(other), tolerance)
    if isinstance(reference, float) and isinstance(other, float):
        figures = _float_scalars(reference, other, tolerance)
        if figures is not None:
            return figures
        return _compare_tensors(
            torch.tensor(reference, dtype=torch.float64),
            torch.tensor(other, dtype=torch.float64),
            tolerance,
        )
    same = type(reference) is type(other) and reference == other
    if isinstance(reference, (int, float)) and isinstance(other, (int, float)) and not same:
        diff = abs(float(reference) - float(other))
        return Difference(False, diff, _rel(diff, float(reference)), None,
                          f"{other!r}, expected {reference!r}")
    return Difference(same, summary="" if same else f"{_short(other)}, expected {_short(reference)}")


def describe_entries(ref: torch.Tensor, new: torch.Tensor, noun: str = "entries") -> str:
    """How two integer tensors differ, entry by entry: "3 of 16 samples
    differ, first at position 5: 17 vs 42 in the reference"."""
    a, b = ref.detach().cpu().reshape(-1), new.detach().cpu().reshape(-1)
    if a.numel() != b.numel() and ref.dim() > 1 and ref.dim() == new.dim() \
            and noun == "samples":
        # (trial 625: "248 samples, 234 in the reference" of 8 padded sequences against 9)
        def values(t: torch.Tensor) -> str:
            return " × ".join(map(str, t.shape))
        return (f"{len(new)} {noun} ({values(new)} values), {len(ref)} in the reference "
                f"({values(ref)} values)")
    if a.numel() != b.numel() and ref.dim() > 1 and ref.dim() == new.dim():
        # (trial 201: "32 entries, 48 in the reference" of sequences 8 tokens long, not 12)
        return (f"{b.numel()} {noun}, {a.numel()} in the reference (shape "
                f"{list(new.shape)}, {list(ref.shape)} in the reference)")
    if a.numel() != b.numel():
        return f"{b.numel()} {noun}, {a.numel()} in the reference"
    differ = (a != b).nonzero().reshape(-1)
    if not differ.numel():
        return f"the same {a.numel()} {noun}"
    first = int(differ[0])
    return (f"{differ.numel()} of {a.numel()} {noun} differ, first at position {first}: "
            f"{b[first].item()} vs {a[first].item()} in the reference")


def _strided(t: torch.Tensor) -> torch.Tensor:
    """A sparse tensor (an ``Embedding(sparse=True)``'s gradient) as the dense
    one it stands for: two sparse tensors of one value may hold their entries
    in another order, or one entry in parts (a trial: ``.contiguous()`` on a
    sparse gradient raised inside the check, which blamed the program)."""
    return t if t.layout is torch.strided else t.to_dense()


def _compare_tensors(ref: torch.Tensor, new: torch.Tensor, tolerance: Tolerance) -> Difference:
    ref = _strided(ref.detach().cpu())
    new = _strided(new.detach().cpu())
    if ref.shape != new.shape or ref.dtype != new.dtype:
        return Difference(
            False,
            summary=f"{new.dtype}{list(new.shape)}, expected {ref.dtype}{list(ref.shape)}",
        )
    if not (ref.is_floating_point() or ref.is_complex()):
        if torch.equal(ref, new):
            return Difference(True, 0.0, 0.0, 0.0)
        # indices, token ids, counters: which entries differ, not a magnitude
        return Difference(False, summary=describe_entries(ref, new))
    if _bits_equal(ref, new):
        return Difference(True, 0.0, 0.0, 0.0)
    if ref.dtype in _BITS:
        figures = _float_figures(ref, new, tolerance)
        if figures is not None:
            return figures
    return _general_figures(ref, new, tolerance)


def _general_figures(ref: torch.Tensor, new: torch.Tensor, tolerance: Tolerance) -> Difference:
    """The figures in float64 over whole tensors, for what the chunked pass
    leaves: a NaN or an infinity on either side, a float64 overflow, complex."""
    r64, n64 = ref.to(torch.float64), new.to(torch.float64)
    both_nan = torch.isnan(r64) & torch.isnan(n64)
    delta = torch.where(both_nan, torch.zeros_like(r64), (r64 - n64).abs())
    delta = torch.nan_to_num(delta, nan=math.inf, posinf=math.inf)  # (an infinite Δ stays so)
    max_abs = delta.max().item() if delta.numel() else 0.0
    denom = r64.abs()
    rel = torch.where(denom > 0, delta / denom, torch.where(delta > 0, math.inf, 0.0))
    max_rel = rel.max().item() if rel.numel() else 0.0
    max_ulp = _max_ulp(ref, new)
    if tolerance.bitwise_only:
        within = False
    else:
        rtol, atol = tolerance.for_dtype(ref.dtype)
        # as torch.isclose: a NaN or an infinity is close only to itself (an
        # infinite |new| must not widen the bound to infinity)
        finite = torch.isfinite(r64) & torch.isfinite(n64)
        close = (finite & (delta <= atol + rtol * n64.abs())) | (r64 == n64) | both_nan
        within = bool(close.all().item())
    return Difference(within, max_abs, max_rel, max_ulp, f"max |Δ| {max_abs:.3g}")


# The float dtypes whose figures the chunked pass computes, and the integer
# type of their bits (read in numpy, whose unsigned arithmetic wraps as defined).
_BITS: dict[torch.dtype, torch.dtype] = {
    torch.float16: torch.int16,
    torch.bfloat16: torch.int16,
    torch.float32: torch.int32,
    torch.float64: torch.int64,
}
_UNSIGNED = {np.int16: np.uint16, np.int32: np.uint32, np.int64: np.uint64}

_CHUNK = 1 << 15
"""Elements per chunk of the float figures: a chunk's scratch buffers stay in
a core's cache, so only the first pass over a chunk reads memory, and no pass
allocates a whole tensor's worth (fresh large allocations cost page faults)."""


def _bits(t: torch.Tensor) -> np.ndarray:
    """A float tensor's bits as a flat numpy integer array (no copy when contiguous)."""
    return t.contiguous().view(_BITS[t.dtype]).numpy().reshape(-1)


def _bits_equal(ref: torch.Tensor, new: torch.Tensor) -> bool:
    """Whether two float tensors of one shape and dtype hold the same bits
    (a NaN equals a NaN of the same payload; -0.0 is not 0.0)."""
    if not ref.numel():
        return True
    if ref.dtype not in _BITS:  # complex: its bytes
        return torch.equal(ref.reshape(-1).view(torch.uint8), new.reshape(-1).view(torch.uint8))
    if ref.numel() <= _CHUNK:  # (torch.equal costs less per call, numpy per element)
        return torch.equal(ref.view(_BITS[ref.dtype]), new.view(_BITS[ref.dtype]))
    a, b = _bits(ref), _bits(new)
    # chunk by chunk: tensors that differ mostly differ in their first chunk
    return all(np.array_equal(a[at:at + _CHUNK], b[at:at + _CHUNK])
               for at in range(0, a.size, _CHUNK))


def _float_figures(ref: torch.Tensor, new: torch.Tensor,
                   tolerance: Tolerance) -> Difference | None:
    """Max |Δ|, max relative Δ, max ULP and within-tolerance of two float
    tensors whose bits differ, each exactly as the float64 pass over whole
    tensors gives it, in one sweep of cache-sized chunks. None: some Δ is not
    finite (a NaN or an infinity on either side, or a float64 overflow),
    which the general pass decides."""
    if ref.dtype == torch.float32 and tolerance.bitwise_only:
        fast = _float32_figures(ref, new)
        if fast is not None:
            return fast
    if ref.dtype == torch.bfloat16:  # numpy has no bfloat16: float32 holds it exactly
        ref_values, new_values = ref.float().numpy().reshape(-1), new.float().numpy().reshape(-1)
    else:
        ref_values = ref.contiguous().numpy().reshape(-1)
        new_values = new.contiguous().numpy().reshape(-1)
    ref_bits, new_bits = _bits(ref), _bits(new)
    size = ref_values.size
    chunk = min(size, _CHUNK)
    figures = _Figures(chunk, None if tolerance.bitwise_only else tolerance.for_dtype(ref.dtype))
    ulps = _Ulps(ref_bits.dtype, chunk)
    with np.errstate(all="ignore"):  # x/0 and 0/0 are meant; inf-inf ends the pass
        for at in range(0, size, chunk):
            if not figures.add(ref_values[at:at + chunk], new_values[at:at + chunk]):
                return None
            ulps.add(ref_bits[at:at + chunk], new_bits[at:at + chunk])
    return Difference(figures.within, figures.max_abs, figures.max_rel, ulps.max(),
                      f"max |Δ| {figures.max_abs:.3g}")


def _float32_figures(ref: torch.Tensor, new: torch.Tensor) -> Difference | None:
    """Max |Δ|, max relative Δ and max ULP of two float32 tensors whose bits
    differ, in bitwise mode: the same figures as the float64 pass, from a
    float32 pass and float64 on the few entries that can hold a maximum.
    None: a float32 Δ or quotient is not finite (NaN or infinity in the
    inputs, or beyond float32's range), which the float64 pass decides."""
    ref_values = ref.contiguous().numpy().reshape(-1)
    new_values = new.contiguous().numpy().reshape(-1)
    ref_bits, new_bits = _bits(ref), _bits(new)
    size = ref_values.size
    chunk = min(size, _CHUNK)
    figures = _Figures32(chunk)
    ulps = _Ulps(ref_bits.dtype, chunk)
    with np.errstate(all="ignore"):  # x/0 and 0/0 are meant
        for at in range(0, size, chunk):
            if not figures.add(ref_values[at:at + chunk], new_values[at:at + chunk]):
                return None
            ulps.add(ref_bits[at:at + chunk], new_bits[at:at + chunk])
    return Difference(False, figures.max_abs, figures.max_rel, ulps.max(),
                      f"max |Δ| {figures.max_abs:.3g}")


_SLACK = 1.0 - 2.0 ** -16
"""A float32 quotient of two float32 values (a Δ rounded to float32, then
divided) is within 2**-22 of its float64 counterpart, relatively, when
neither overflows: an entry whose float32 relative Δ is below the largest
float32 one by more than this factor cannot hold the largest float64 one."""


class _Figures32:
    """Max |Δ| and max relative Δ of float32 chunks, exactly as the float64
    pass gives them, from float32 arithmetic plus float64 on a few entries.

    |Δ|: rounding is monotone, so the entries whose float32 |Δ| is the
    chunk's largest hold its largest exact |Δ|, hence its largest float64
    |Δ|; those entries are computed again in float64. Relative Δ = |Δ|/|ref|:
    the float32 and float64 quotients differ by less than 2**-22 relatively
    (Δ of two float32 values is exact when subnormal, a nonzero quotient is
    at least 2**-25), so every entry within ``_SLACK`` of the largest float32
    quotient is computed again in float64. x/0 is infinite in both widths;
    a float32 overflow (|Δ| or a quotient beyond float32's range, finite in
    float64) ends the pass."""

    def __init__(self, chunk: int) -> None:
        self.delta = np.empty(chunk, np.float32)
        self.quotient = np.empty(chunk, np.float32)
        self.max_abs = self.max_rel = 0.0
        self.top32 = np.float32(0.0)

    def add(self, ref: np.ndarray, new: np.ndarray) -> bool:
        """Take one chunk in; False: a float32 Δ or quotient is not finite."""
        d = self.delta[:ref.size]
        np.subtract(ref, new, out=d)
        np.abs(d, out=d)
        top = d.max()
        if not top < math.inf:  # NaN or infinity in, or beyond float32
            return False
        if top > 0 and top >= self.top32:
            self.top32 = top
            at = np.flatnonzero(d == top)
            exact = np.abs(np.subtract(ref[at], new[at], dtype=np.float64))
            self.max_abs = max(self.max_abs, float(exact.max()))
        if self.max_rel == math.inf:
            return True
        q = np.divide(d, ref, out=self.quotient[:ref.size])
        np.abs(q, out=q)
        rel = float(np.fmax.reduce(q))  # (NaN: every entry 0/0)
        if rel == math.inf:
            if np.logical_and(ref == 0, d > 0).any():  # x/0: infinite in float64 too
                self.max_rel = math.inf
                return True
            return False  # a quotient beyond float32's range
        if rel >= self.max_rel * _SLACK:
            at = np.flatnonzero(q >= rel * _SLACK)
            r64 = ref[at].astype(np.float64)
            exact = np.abs(np.divide(np.abs(np.subtract(r64, new[at], dtype=np.float64)), r64))
            best = float(np.fmax.reduce(exact)) if exact.size else 0.0
            if best > self.max_rel:
                self.max_rel = best
        return True


class _Figures:
    """Max |Δ|, max relative Δ and within-tolerance, chunk by chunk.

    Computed in float64 as ``ref.to(torch.float64)`` gives it: numpy casts
    each chunk to float64 as it reads it, and float64 arithmetic rounds the
    same in either. The relative Δ is |Δ| / |ref|: x/0 is infinite, 0/0 is
    no difference (NaN, which ``fmax`` skips); within tolerance is
    |Δ| <= atol + rtol * |new|, as torch.testing has it."""

    def __init__(self, chunk: int, tolerance: tuple[float, float] | None) -> None:
        self.delta = np.empty(chunk, np.float64)
        self.bound = np.empty(chunk, np.float64) if tolerance is not None else None
        self.rtol, self.atol = tolerance or (0.0, 0.0)
        self.within = tolerance is not None
        self.max_abs = self.max_rel = 0.0

    def add(self, ref: np.ndarray, new: np.ndarray) -> bool:
        """Take one chunk in; False: a Δ is not finite."""
        d = self.delta[:ref.size]
        np.subtract(ref, new, out=d, dtype=np.float64)
        np.abs(d, out=d)
        top = float(d.max())
        if not top < math.inf:  # (NaN too)
            return False
        self.max_abs = max(self.max_abs, top)
        if self.bound is not None and self.within:
            bound = np.abs(new, out=self.bound[:new.size], dtype=np.float64)
            bound *= self.rtol
            bound += self.atol
            self.within = bool(np.less_equal(d, bound).all())
        np.divide(d, ref, out=d, dtype=np.float64)
        np.abs(d, out=d)
        rel = float(np.fmax.reduce(d))
        if rel > self.max_rel:  # (False for NaN: every Δ of this chunk 0/0)
            self.max_rel = rel
        return True


class _Ulps:
    """The largest distance in representable values between pairs of finite
    floats of one width, chunk by chunk, from their bits, without overflow.

    Float bits are sign and magnitude; ``key`` maps them to integers in the
    floats' order (-m for a negative of magnitude m, so -0 and +0 are both
    0), in their own width. The distance of two keys may not fit that width
    (opposite signs), but it is below 2**width: the larger key minus the
    smaller, taken unsigned, is exact."""

    def __init__(self, dtype: np.dtype, chunk: int) -> None:
        self.width = dtype.itemsize * 8
        self.magnitude = np.array(np.iinfo(dtype).max, dtype)
        self.unsigned = _UNSIGNED[dtype.type]
        self.a, self.b, self.sign = (np.empty(chunk, dtype) for _ in range(3))
        self.best = 0

    def key(self, bits: np.ndarray, out: np.ndarray) -> np.ndarray:
        sign = np.right_shift(bits, self.width - 1, out=self.sign[:bits.size])  # 0 or -1
        np.bitwise_and(sign, self.magnitude, out=out)
        np.bitwise_xor(out, bits, out=out)  # a negative: -m - 1
        return np.subtract(out, sign, out=out)

    def add(self, ref_bits: np.ndarray, new_bits: np.ndarray) -> None:
        a = self.key(ref_bits, self.a[:ref_bits.size])
        b = self.key(new_bits, self.b[:new_bits.size])
        high = np.maximum(a, b, out=self.sign[:a.size])
        np.minimum(a, b, out=a)
        apart = np.subtract(high.view(self.unsigned), a.view(self.unsigned),
                            out=high.view(self.unsigned))
        self.best = max(self.best, int(apart.max()))

    def max(self) -> float:
        return float(self.best)


def _max_ulp(ref: torch.Tensor, new: torch.Tensor) -> float | None:
    """Max distance in representable values (ULPs) between two float tensors
    (infinite where either holds a NaN or an infinity)."""
    if ref.dtype not in _BITS or not ref.numel():
        return None
    if not (bool(torch.isfinite(ref).all()) and bool(torch.isfinite(new).all())):
        return math.inf
    ref_bits, new_bits = _bits(ref), _bits(new)
    chunk = min(ref_bits.size, _CHUNK)
    ulps = _Ulps(ref_bits.dtype, chunk)
    for at in range(0, ref_bits.size, chunk):
        ulps.add(ref_bits[at:at + chunk], new_bits[at:at + chunk])
    return ulps.max()


def _float_scalars(ref: float, new: float, tolerance: Tolerance) -> Difference | None:
    """Two Python floats' figures as the float64 tensor pass gives them, in
    Python's own float64 arithmetic. None: a difference that is not finite
    (the tensor pass decides)."""
    ref_bits, new_bits = _float64_bits(ref), _float64_bits(new)
    if ref_bits == new_bits:
        return Difference(True, 0.0, 0.0, 0.0)
    delta = abs(ref - new)
    if not delta < math.inf:
        return None
    rel = delta / abs(ref) if ref else (math.inf if delta > 0 else 0.0)
    ulp = abs(_ordered(ref_bits) - _ordered(new_bits))
    within = False
    if not tolerance.bitwise_only:
        rtol, atol = tolerance.for_dtype(torch.float64)
        within = delta <= atol + rtol * abs(new)
    return Difference(within, delta, rel, float(ulp), f"max |Δ| {delta:.3g}")


def _float64_bits(x: float) -> int:
    return int.from_bytes(struct.pack("<d", x), "little", signed=True)


def _ordered(bits: int) -> int:
    """Float bits (sign and magnitude) as an integer in the floats' order
    (-m for a negative of magnitude m: -0.0 and 0.0 are both 0)."""
    return bits if bits >= 0 else -(bits & ((1 << 63) - 1))


def _rel(diff: float, ref: float) -> float | None:
    return diff / abs(ref) if ref else None


def _max(a: float | None, b: float | None) -> float | None:
    if a is None:
        return b
    if b is None:
        return a
    return max(a, b)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
