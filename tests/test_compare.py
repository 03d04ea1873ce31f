import math

import pytest
import torch

from resumecheck import Tolerance
from resumecheck.compare import compare_values, digest, flatten_state, float64_digest


def test_digest_is_stable_and_sensitive_to_bits_dtype_and_shape():
    t = torch.arange(6, dtype=torch.float32)
    assert digest(t) == digest(t.clone())
    assert digest(t) != digest(t.reshape(2, 3))
    assert digest(t) != digest(t.double())
    t2 = t.clone()
    t2[3] = torch.nextafter(t2[3], torch.tensor(10.0))
    assert digest(t) != digest(t2)
    assert digest({"a": 1, "b": [t]}) == digest({"b": [t], "a": 1})


class _Marked(torch.Tensor):
    """A tensor subclass: digested by the general path, not the plain tensor's."""


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.int64,
                                   torch.uint8, torch.bool, torch.bfloat16])
def test_a_plain_tensor_digests_as_the_general_path_digests_it(dtype):
    # digests of one run are compared with another's: the fast path for plain
    # tensors must feed the hash exactly what the general path feeds it
    t = (torch.arange(12) % 5).to(dtype).reshape(3, 4)
    for value in (t, t[1:], t.t(), t.reshape(())[()] if t.numel() == 1 else t[0, 0]):
        assert digest(value) == digest(value.as_subclass(_Marked))
    p = torch.nn.Parameter(torch.randn(3, 4))  # (requires grad: never given numpy as it is)
    assert digest(p.detach()) == digest(p) == digest(p.detach().as_subclass(_Marked))
    assert digest(t) != digest(t.reshape(4, 3))


def test_flatten_state_orders_paths():
    paths = [p for p, _ in flatten_state({"b": [1, {"c": 2}], "a": {}})]
    assert paths == ["a", "b[0]", "b[1].c"]


def test_one_ulp_is_counted_as_one_ulp():
    a = torch.tensor([1.0, -2.0, 3.0])
    b = torch.nextafter(a, torch.tensor(100.0))
    d = compare_values(a, b, Tolerance.bitwise())
    assert not d.within_tolerance
    assert d.max_ulp == 1.0
    assert d.max_abs == pytest.approx(2.384185791015625e-07)


def test_ulps_across_zero():
    tiny = torch.tensor([1e-45])  # the smallest subnormal float32
    d = compare_values(tiny, -tiny, Tolerance.bitwise())
    assert d.max_ulp == 2.0


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64])
def test_ulps_in_other_dtypes(dtype):
    a = torch.tensor([1.0, 2.0], dtype=dtype)
    b = torch.nextafter(a, torch.tensor(9.0, dtype=dtype))
    b = torch.nextafter(b, torch.tensor(9.0, dtype=dtype))
    assert compare_values(a, b, Tolerance.bitwise()).max_ulp == 2.0


def test_tolerance_uses_torch_testing_defaults_per_dtype():
    a = torch.tensor([1.0])
    close = a + 1e-6  # within fp32 rtol 1.3e-6
    far = a + 1e-4
    assert compare_values(a, close, Tolerance.close()).within_tolerance
    assert not compare_values(a, far, Tolerance.close()).within_tolerance
    assert compare_values(a, far, Tolerance.close(rtol=1e-3, atol=0.0)).within_tolerance
    half = torch.tensor([1.0], dtype=torch.float16)
    assert compare_values(half, half + 0.0005, Tolerance.close()).within_tolerance


def test_identical_bits_are_within_any_tolerance_and_nan_matches_nan():
    t = torch.tensor([1.0, math.nan])
    assert compare_values(t, t.clone(), Tolerance.bitwise()).within_tolerance
    d = compare_values(t, torch.tensor([1.0, 2.0]), Tolerance.close())
    assert not d.within_tolerance and d.max_abs == math.inf


def test_non_tensors_and_shapes():
    assert compare_values(3, 3, Tolerance.bitwise()).within_tolerance
    d = compare_values(8, 0, Tolerance.bitwise())
    assert not d.within_tolerance and d.summary == "0, expected 8"
    d = compare_values(torch.zeros(2), torch.zeros(3), Tolerance.bitwise())
    assert not d.within_tolerance and "expected" in d.summary
    assert compare_values(torch.arange(3), torch.arange(3), Tolerance.bitwise()).within_tolerance


def test_tolerance_validation():
    with pytest.raises(ValueError, match="both"):
        Tolerance.close(rtol=1e-3)
    with pytest.raises(ValueError, match="rtol"):
        Tolerance.close(rtol=-1.0, atol=0.0)


def test_an_infinity_is_an_infinite_difference_and_never_within_tolerance():
    """A trial: a run whose parameters went to infinity read 'max |Δ| 1.8e+308'
    (nan_to_num turned the infinite Δ into the largest float), and under a close
    tolerance an infinity in the run was within it (rtol times an infinite |new|)."""
    import math

    ref, run = torch.tensor([1.0, 2.0]), torch.tensor([1.0, math.inf])
    for tolerance in (Tolerance.bitwise(), Tolerance.close()):
        d = compare_values(ref, run, tolerance)
        assert d.max_abs == math.inf and not d.within_tolerance
    assert compare_values(run, run.clone(), Tolerance.close()).within_tolerance  # inf == inf


@pytest.mark.parametrize("value", [0.5, 65536.0, [3e-3], [1e-3, 2.5e-4, 0.0], float("inf")])
def test_a_float64_digest_is_the_digest_of_the_tensor_a_kept_step_holds(value):
    """The tracer digests a step's loss scale and learning rates without making
    their tensors; a kept step holds the tensors, and both must digest alike."""
    assert float64_digest(value) == digest(torch.tensor(value, dtype=torch.float64))
    assert float64_digest(value) != digest(torch.tensor(value, dtype=torch.float32))
