"""Float32 figures from a float32 pass equal the float64 definition.

In bitwise mode ``compare_values`` computes a float32 pair's max |Δ| and max
relative Δ in float32 and again in float64 only on the entries that can hold
a maximum (``compare._Figures32``). These cases aim at what that could get
wrong: many entries tied or nearly tied for the largest Δ, the largest entry
in a later chunk than a near-tie, a Δ or a quotient beyond float32's range
(finite in float64), a zero reference against a nonzero value, subnormals.
Each is checked against the plain float64 definition of the other judging
tests (``tests/test_speed_judging.py``).
"""

from __future__ import annotations

import math

import torch

from resumecheck.compare import Tolerance, compare_values
from tests.test_speed_judging import _CHUNK, _plain, _same

BITWISE = Tolerance.bitwise()


def _check(a: torch.Tensor, b: torch.Tensor) -> None:
    got = compare_values(a, b, BITWISE)
    assert _same(got, _plain(a, b, BITWISE)), (got, _plain(a, b, BITWISE))


def test_ties_and_near_ties_for_the_largest_difference_across_chunks():
    g = torch.Generator().manual_seed(3)
    size = 3 * _CHUNK + 5
    for scale in (1e-3, 1.0, 1e20, 1e-30):
        a = (torch.rand(size, generator=g, dtype=torch.float64) + 1.0).float() * scale
        # b = a * (1 + 1e-3) rounded: every relative Δ within float32 rounding of 1e-3
        b = (a.double() * (1 + 1e-3)).float()
        _check(a, b)
        b[-1] = (a[-1].double() * (1 + 1.0000001e-3)).float()  # the largest in the last chunk
        _check(a, b)
        c = a.clone()
        c[::3] = a[::3] + a[::3] * 1e-2  # many entries tied for |Δ|
        _check(a, c)


def test_a_difference_or_quotient_beyond_float32_range_is_still_exact():
    big = torch.finfo(torch.float32).max
    tiny = torch.finfo(torch.float32).tiny / 1024  # a subnormal
    a = torch.tensor([big, 1.0, tiny, 2.0] * (_CHUNK // 2))
    b = torch.tensor([-big, 1.5, 1.0, 2.0] * (_CHUNK // 2))
    _check(a, b)  # |Δ| 2*max overflows float32
    _check(b, a)
    a = torch.tensor([1.0, tiny, 2.0] * _CHUNK)
    b = torch.tensor([1.5, 1.0, 2.0] * _CHUNK)
    _check(a, b)  # |Δ| fits, |Δ|/tiny overflows float32


def test_a_zero_reference_against_a_nonzero_value_is_infinitely_relative():
    a = torch.zeros(2 * _CHUNK)
    b = a.clone()
    b[_CHUNK + 7] = 1e-30
    got = compare_values(a, b, BITWISE)
    assert got.max_rel == math.inf
    _check(a, b)
    b[3] = -0.0  # and -0.0 against 0.0 adds nothing
    _check(a, b)


def test_random_float32_pairs_at_every_magnitude():
    g = torch.Generator().manual_seed(8)
    for trial in range(30):
        size = [7, _CHUNK - 1, 2 * _CHUNK + 3][trial % 3]
        exponent = torch.randint(-44, 38, (size,), generator=g).double()
        a = (torch.randn(size, generator=g, dtype=torch.float64) * 10.0 ** exponent).float()
        b = a.clone()
        pick = torch.rand(size, generator=g) < [1.0, 0.01, 0.3][trial % 3]
        b[pick] = (a[pick].double() * (1 + torch.randn(int(pick.sum()), generator=g,
                                                       dtype=torch.float64) * 1e-4)).float()
        if trial % 4 == 1:
            b[torch.rand(size, generator=g) < 0.1] *= -1
        _check(a, b)
