"""The sweep's cheaper judging gives the figures the plain float64 pass gives.

``compare_values`` takes shortcuts (float32 maxima found in float32 and
finished in float64, ULPs from the bits' own width, no separate finite
check); each figure must equal the straightforward computation below, on
tensors with every awkward value: NaN, infinities, signed zeros, subnormals,
opposite signs, overflow.
"""

from __future__ import annotations

import math

import pytest
import torch

from resumecheck.compare import Tolerance, compare_values
from resumecheck.components import RNGState, python_state_from_plain

_INT = {torch.float16: torch.int16, torch.bfloat16: torch.int16, torch.float32: torch.int32,
        torch.float64: torch.int64}


def _plain_figures(ref: torch.Tensor, new: torch.Tensor) -> tuple[float, float, float]:
    """Max |Δ|, max relative Δ and max ULP, the long way (finite values)."""
    r64, n64 = ref.to(torch.float64), new.to(torch.float64)
    delta = (r64 - n64).abs()
    rel = torch.where(r64.abs() > 0, delta / r64.abs(),
                      torch.where(delta > 0, math.inf, 0.0))
    bits = _INT[ref.dtype]
    top = torch.iinfo(bits).min

    def ordered(t: torch.Tensor) -> torch.Tensor:
        b = t.contiguous().view(bits).to(torch.int64)
        return torch.where(b < 0, top - b, b)

    # in Python's integers: two float64 keys of opposite signs are further apart than int64 holds
    ulp = max(abs(x - y) for x, y in zip(ordered(ref).tolist(), ordered(new).tolist()))
    return delta.max().item(), rel.max().item(), float(ulp)


def _pairs(dtype: torch.dtype, seed: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    g = torch.Generator().manual_seed(seed)
    reach = min(int(math.log10(torch.finfo(dtype).max)) - 1, 38)  # finite values only
    pairs = []
    for trial in range(120):
        size = [1, 3, 64, 2000][trial % 4]
        scale = 10.0 ** int(torch.randint(-reach, reach, (1,), generator=g)) if trial % 7 else 1e-40
        a = (torch.randn(size, dtype=torch.float64, generator=g) * scale).to(dtype)
        b = a.clone()
        eps = [1e-7, 1e-6, 1e-3, 1.0][trial % 4]
        changed = torch.rand(size, generator=g) < [0.5, 0.01, 1.0][trial % 3]
        noise = torch.randn(int(changed.sum()), dtype=torch.float64, generator=g)
        b[changed] = (b[changed].double() * (1 + eps * noise)).to(dtype)
        if trial % 4 == 1:  # opposite signs
            b[torch.rand(size, generator=g) < 0.3] *= -1
        if trial % 5 == 2:  # zeros on one side
            a[torch.rand(size, generator=g) < 0.3] = 0.0
        if trial % 9 == 0:  # -0.0 against +0.0 and a subnormal
            a, b = torch.full_like(a, -0.0), torch.zeros_like(b)
            b[0] = torch.finfo(dtype).tiny / 4
        pairs.append((a, b))
    return pairs


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64])
def test_finite_figures_equal_the_float64_pass(dtype):
    checked = 0
    for a, b in _pairs(dtype, seed=7):
        before = (a.clone(), b.clone())
        got = compare_values(a, b, Tolerance.bitwise())
        assert torch.equal(a, before[0]) and torch.equal(b, before[1])  # inputs untouched
        if torch.equal(a.view(_INT[dtype]), b.view(_INT[dtype])):
            assert got.within_tolerance and got.max_abs == 0.0
            continue
        assert (got.max_abs, got.max_rel, got.max_ulp) == _plain_figures(a, b)
        checked += 1
    assert checked > 60


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, 3e38])
def test_non_finite_and_overflowing_values_keep_their_figures(bad):
    a = torch.tensor([1.0, -2.0, 3.0], dtype=torch.float32)
    b = a.clone()
    b[1] = bad
    if bad == 3e38:  # finite, but |Δ| in float32 overflows: float64 decides
        a[1] = -3e38
    got = compare_values(a, b, Tolerance.bitwise())
    assert not got.within_tolerance
    if bad == 3e38:
        assert (got.max_abs, got.max_rel, got.max_ulp) == _plain_figures(a, b)
        assert got.max_abs == pytest.approx(6e38, rel=1e-6)
    else:  # the float64 pass: an unbounded difference (NaN counts as infinite)
        assert got.max_abs >= torch.finfo(torch.float64).max and got.max_ulp == math.inf


def test_python_stream_round_trips_as_a_tensor_and_from_the_old_list_form():
    import random

    rng = RNGState(streams=("python",))
    random.seed(11)
    state = rng.state_dict()["python"]
    assert isinstance(state["internal"], torch.Tensor) and state["internal"].numel() == 625
    expected = random.random()
    random.seed(12)
    rng.load_state_dict({"python": state})
    assert random.random() == expected
    old_form = {**state, "internal": state["internal"].tolist()}  # as older captures hold it
    assert python_state_from_plain(old_form) == python_state_from_plain(state)
