"""Comparison: bitwise through digests, or within tolerance on full tensors.

Differences are measured as max absolute, max relative and max ULP distance
(units in the last place), so a report can say *how* different, not only
that a digest changed.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import torch
import xxhash

__all__ = [
    "Difference",
    "Tolerance",
    "compare_values",
    "describe_entries",
    "digest",
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
    for path, leaf in flatten_state(value):
        h.update(path.encode())
        _update(h, leaf)
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
    if isinstance(leaf, torch.Tensor):
        layout = _layout(leaf)
        t = local_tensor(leaf).detach().cpu().contiguous()
        h.update(f"T{t.dtype}{tuple(t.shape)}{layout}".encode())
        h.update(t.reshape(-1).view(torch.uint8).numpy())  # the bytes, not a copy
    else:
        h.update(f"{type(leaf).__name__}:{leaf!r}".encode())


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
    if a.numel() != b.numel():
        return f"{b.numel()} {noun}, {a.numel()} in the reference"
    differ = (a != b).nonzero().reshape(-1)
    if not differ.numel():
        return f"the same {a.numel()} {noun}"
    first = int(differ[0])
    return (f"{differ.numel()} of {a.numel()} {noun} differ, first at position {first}: "
            f"{b[first].item()} vs {a[first].item()} in the reference")


def _compare_tensors(ref: torch.Tensor, new: torch.Tensor, tolerance: Tolerance) -> Difference:
    ref = ref.detach().cpu()
    new = new.detach().cpu()
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
    bits_equal = torch.equal(ref.reshape(-1).view(torch.uint8), new.reshape(-1).view(torch.uint8)) \
        if ref.numel() else True
    if bits_equal:
        return Difference(True, 0.0, 0.0, 0.0)
    if tolerance.bitwise_only and ref.dtype == torch.float32:
        extremes = _float32_extremes(ref, new)
        if extremes is not None:
            max_abs, max_rel = extremes
            return Difference(False, max_abs, max_rel, _max_ulp(ref, new, finite=True),
                              f"max |Δ| {max_abs:.3g}")
    r64, n64 = ref.to(torch.float64), new.to(torch.float64)
    delta = None
    if not ref.is_complex():
        # The common case, in few passes: the largest |Δ| is finite exactly when
        # neither side holds a NaN or an infinity (either makes a Δ NaN or
        # infinite; a finite overflow of float64 takes the general path, which
        # gives it the same figures).
        delta = torch.sub(r64, n64).abs_()
        max_abs = delta.max().item()
        if not math.isfinite(max_abs):
            delta = None
    if delta is not None:
        rel = r64.abs()  # (a new tensor: for float64, r64 is the caller's tensor)
        rel = torch.div(delta, rel, out=rel).nan_to_num_(nan=0.0, posinf=math.inf)  # 0/0: none
        max_rel = rel.max().item()
        del rel
        max_ulp = _max_ulp(ref, new, finite=True)
    else:
        both_nan = torch.isnan(r64) & torch.isnan(n64)
        delta = torch.where(both_nan, torch.zeros_like(r64), (r64 - n64).abs())
        delta = torch.nan_to_num(delta, nan=math.inf)
        max_abs = delta.max().item() if delta.numel() else 0.0
        denom = r64.abs()
        rel = torch.where(denom > 0, delta / denom, torch.where(delta > 0, math.inf, 0.0))
        max_rel = rel.max().item() if rel.numel() else 0.0
        max_ulp = _max_ulp(ref, new)
    if tolerance.bitwise_only:
        within = False
    else:
        rtol, atol = tolerance.for_dtype(ref.dtype)
        within = bool((delta <= atol + rtol * n64.abs()).all().item())
    return Difference(within, max_abs, max_rel, max_ulp, f"max |Δ| {max_abs:.3g}")


# Below this, float32 arithmetic loses relative precision (subnormals): the
# float64 pass decides. The margin is far wider than two float32 roundings.
_FLOAT32_FLOOR = 2.0 ** -100
_FLOAT32_MARGIN = 1e-4


def _float32_extremes(ref: torch.Tensor, new: torch.Tensor) -> tuple[float, float] | None:
    """Max |Δ| and max relative Δ of two float32 tensors exactly as the float64
    pass computes them, with float64 only where the maxima can be.

    Rounding is monotonic, so the element whose exact |Δ| is largest is among
    those whose float32 |Δ| (and relative Δ, within two roundings) is within a
    hair of the float32 maximum; those few are computed in float64. None (take
    the float64 pass): a NaN or infinity on either side, an overflow, or
    maxima too small for float32's relative precision.
    """
    delta = torch.sub(ref, new).abs_()
    top = delta.max().item()
    if not _FLOAT32_FLOOR <= top < math.inf:  # (False for NaN)
        return None
    rel = torch.div(delta, ref.abs()).nan_to_num_(nan=0.0, posinf=math.inf)
    best = rel.max().item()
    if not _FLOAT32_FLOOR <= best < math.inf:
        return None
    near_abs = delta >= top * (1 - _FLOAT32_MARGIN)
    near_rel = rel >= best * (1 - _FLOAT32_MARGIN)
    r64, n64 = ref[near_abs].to(torch.float64), new[near_abs].to(torch.float64)
    max_abs = torch.sub(r64, n64).abs_().max().item()
    r64, n64 = ref[near_rel].to(torch.float64), new[near_rel].to(torch.float64)
    d64 = torch.sub(r64, n64).abs_()
    max_rel = torch.div(d64, r64.abs()).nan_to_num_(nan=0.0, posinf=math.inf).max().item()
    return max_abs, max_rel


_INT_VIEW = {
    torch.float16: torch.int16,
    torch.bfloat16: torch.int16,
    torch.float32: torch.int32,
    torch.float64: torch.int64,
}


def _max_ulp(ref: torch.Tensor, new: torch.Tensor, finite: bool = False) -> float | None:
    """Max distance in representable values (ULPs) between two float tensors
    (``finite``: the caller knows both hold no NaN or infinity)."""
    int_dtype = _INT_VIEW.get(ref.dtype)
    if int_dtype is None or not ref.numel():
        return None
    if not finite and not (bool(torch.isfinite(ref).all()) and bool(torch.isfinite(new).all())):
        return math.inf
    a, b = ref.contiguous().view(int_dtype), new.contiguous().view(int_dtype)
    # Float bits are sign and magnitude: where the signs agree, the distance is
    # the difference of the bits (no overflow in their own width); where they
    # differ, it is the sum of the magnitudes (+0 and -0: 0), taken in int64.
    apart = torch.bitwise_xor(a, b).lt(0)
    if not bool(apart.any()):  # the common case: one pass fewer
        return float(torch.sub(a, b).abs_().max().item())
    same_sign = torch.sub(a, b).masked_fill_(apart, 0).abs_().max().item()
    magnitude = torch.iinfo(int_dtype).max
    across = (a[apart].to(torch.int64).bitwise_and_(magnitude)
              .add_(b[apart].to(torch.int64).bitwise_and_(magnitude)).abs_().max().item())
    return float(max(same_sign, across))


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
