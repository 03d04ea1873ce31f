"""The chunked judging pass gives every figure the plain float64 pass gives.

``compare_values`` computes max |Δ|, max relative Δ, max ULP and
within-tolerance chunk by chunk in numpy (float64 arithmetic, ULPs from the
bits without overflow), and Python floats in Python's own float64. Each
figure must equal the straightforward definition below, computed over whole
tensors in float64 as the report has always defined it: on random data with
every awkward value (NaN, infinities, -0.0, subnormals, sign flips, values
that differ only in one chunk of many), in bitwise and tolerance mode.
"""

from __future__ import annotations

import math
import os

import pytest
import torch

from resumecheck.compare import Tolerance, compare_values

_INT = {torch.float16: torch.int16, torch.bfloat16: torch.int16, torch.float32: torch.int32,
        torch.float64: torch.int64}
_CHUNK = 1 << 15  # (compare's chunk: the sizes below straddle it)


def _ordered(t: torch.Tensor) -> list[int] | torch.Tensor:
    """Float bits as integers in the floats' order (-m for a negative of
    magnitude m): in int64 for floats of 32 bits or fewer (every distance of
    two such keys fits it), in Python's integers for float64."""
    bits = _INT[t.dtype]
    magnitude = torch.iinfo(bits).max
    raw = t.contiguous().view(bits).reshape(-1)
    if bits != torch.int64:
        wide = raw.to(torch.int64)
        return torch.where(wide >= 0, wide, -(wide & magnitude))
    return [b if b >= 0 else -(b & magnitude) for b in raw.tolist()]


def _max_distance(a: list[int] | torch.Tensor, b: list[int] | torch.Tensor) -> int:
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return int((a - b).abs().max()) if a.numel() else 0
    return max(abs(x - y) for x, y in zip(a, b))


def _plain(ref: torch.Tensor, new: torch.Tensor, tolerance: Tolerance,
           ulp: float | None = None) -> tuple:
    """(within, max |Δ|, max rel, max ULP) the long way: float64 over whole
    tensors; NaN against NaN is no difference, any other NaN an infinite one;
    a non-finite value on either side is infinitely many ULPs (ULPs of finite
    values exactly, in Python's integers)."""
    r64, n64 = ref.double().reshape(-1), new.double().reshape(-1)
    both_nan = r64.isnan() & n64.isnan()
    delta = torch.where(both_nan, 0.0, (r64 - n64).abs()).nan_to_num(nan=math.inf,
                                                                      posinf=math.inf)
    rel = torch.where(r64.abs() > 0, delta / r64.abs(), torch.where(delta > 0, math.inf, 0.0))
    finite = bool(ref.isfinite().all()) and bool(new.isfinite().all())
    if ulp is None and finite:
        ulp = float(_max_distance(_ordered(ref), _ordered(new)))
    elif ulp is None:
        ulp = math.inf
    within = False
    if not tolerance.bitwise_only:
        rtol, atol = tolerance.for_dtype(ref.dtype)
        close = ((r64.isfinite() & n64.isfinite() & (delta <= atol + rtol * n64.abs()))
                 | (r64 == n64) | both_nan)  # (as torch.isclose: inf only close to itself)
        within = bool(close.all())
    return within, delta.max().item(), rel.max().item(), ulp


def _figures(d) -> tuple:
    """A Difference's figures, NaN as a string (a NaN figure must stay NaN)."""
    return tuple("nan" if isinstance(x, float) and math.isnan(x) else x
                 for x in (d.within_tolerance, d.max_abs, d.max_rel, d.max_ulp))


def _same(got, expected: tuple) -> bool:
    return _figures(got) == tuple("nan" if isinstance(x, float) and math.isnan(x) else x
                                  for x in expected)


def _pair(dtype: torch.dtype, g: torch.Generator, trial: int) -> tuple[torch.Tensor, torch.Tensor]:
    size = [1, 5, 300, 2 * _CHUNK + 17][trial % 4]
    reach = min(int(math.log10(torch.finfo(dtype).max)) - 1, 30)
    scale = 10.0 ** int(torch.randint(-reach, reach, (1,), generator=g))
    a = (torch.randn(size, dtype=torch.float64, generator=g) * scale).to(dtype)
    b = a.clone()
    if size > _CHUNK and trial % 3 == 0:  # only the last chunk differs
        part = slice(_CHUNK + 5, size)
    else:
        part = slice(0, size)
    eps = [1e-6, 1e-3, 1.0][trial % 3]
    noise = torch.randn(b[part].shape, dtype=torch.float64, generator=g)
    b[part] = (b[part].double() * (1 + eps * noise)).to(dtype)
    pick = torch.randint(0, size, (3,), generator=g)
    if trial % 5 == 1:  # sign flips
        b[torch.rand(size, generator=g) < 0.2] *= -1
    if trial % 6 == 2:  # zeros and -0.0 on either side, a subnormal
        a[pick[0]], b[pick[1]], a[pick[2]] = 0.0, -0.0, torch.finfo(dtype).tiny / 8
    if trial % 7 == 3:  # NaN, infinity
        b[pick[0]] = [math.nan, math.inf, -math.inf][trial % 3]
        a[pick[1]] = math.nan
        b[pick[1]] = math.nan
    if trial % 11 == 4:  # -0.0 against 0.0 only
        a, b = torch.zeros_like(a), torch.full_like(b, -0.0)
    return a, b


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64])
def test_chunked_figures_equal_the_plain_float64_definition(dtype):
    g = torch.Generator().manual_seed(11)
    checked = 0
    for trial in range(44):
        a, b = _pair(dtype, g, trial)
        before = (a.clone(), b.clone())
        same = torch.equal(a.view(_INT[dtype]), b.view(_INT[dtype]))
        ulp = None if same else _plain(a, b, Tolerance.bitwise())[3]
        for tolerance in (Tolerance.bitwise(), Tolerance.close(), Tolerance.close(1e-2, 1e-6)):
            got = compare_values(a, b, tolerance)
            if same:
                assert got.within_tolerance and got.max_abs == 0.0
                continue
            expected = _plain(a, b, tolerance, ulp)
            assert _same(got, expected), (dtype, trial, tolerance, _figures(got), expected)
            checked += 1
        assert torch.equal(a.view(_INT[dtype]), before[0].view(_INT[dtype]))  # inputs untouched
        assert torch.equal(b.view(_INT[dtype]), before[1].view(_INT[dtype]))
    assert checked > 80


def test_a_tolerance_can_fail_in_a_later_chunk_only():
    a = torch.ones(3 * _CHUNK)
    b = a.clone()
    b[-1] = 1.1
    assert not compare_values(a, b, Tolerance.close()).within_tolerance
    b[-1] = 1.0 + 1e-7
    assert compare_values(a, b, Tolerance.close()).within_tolerance


def test_float64_ulps_across_zero_are_counted_exactly():
    # 3.0 and -3.0 are 2 * bits(3.0) apart: beyond int64, where a plain
    # int64 subtraction wraps round
    three = torch.tensor([3.0], dtype=torch.float64).view(torch.int64).item()
    for a, b in [(3.0, -3.0), (torch.tensor([-3.0], dtype=torch.float64),
                               torch.tensor([3.0], dtype=torch.float64))]:
        assert compare_values(a, b, Tolerance.bitwise()).max_ulp == float(2 * three)


def test_python_floats_give_the_figures_of_their_float64_tensors():
    g = torch.Generator().manual_seed(5)
    values = [0.0, -0.0, 1.0, -1.0, 3.0, -3.0, 5e-324, -5e-324, 1e-310, 1.7e308, -1.7e308,
              math.inf, -math.inf, math.nan, 0.1, 0.2]
    values += (torch.randn(24, dtype=torch.float64, generator=g)
               * 10.0 ** torch.randint(-300, 300, (24,), generator=g)).tolist()
    for a in values:
        for b in values[:20] + [a * (1 + 1e-15), -a]:
            for tolerance in (Tolerance.bitwise(), Tolerance.close(1e-3, 1e-9)):
                got = compare_values(a, b, tolerance)
                ta = torch.tensor([a], dtype=torch.float64)
                tb = torch.tensor([b], dtype=torch.float64)
                if torch.equal(ta.view(torch.int64), tb.view(torch.int64)):
                    assert got.within_tolerance and got.max_ulp == 0.0
                    continue
                assert _same(got, _plain(ta, tb, tolerance)), (a, b, tolerance)
                assert got.summary == f"max |Δ| {got.max_abs:.3g}"


def test_negative_zero_against_zero_differs_by_nothing_but_its_bits():
    got = compare_values(torch.zeros(4), torch.full((4,), -0.0), Tolerance.bitwise())
    assert not got.within_tolerance
    assert (got.max_abs, got.max_rel, got.max_ulp) == (0.0, 0.0, 0.0)


def test_judging_reads_a_kept_capture_without_copying_it_and_restores_still_get_copies(tmp_path):
    from resumecheck.capture import load_checkpoint, save_capture
    from resumecheck.compare import digest
    from resumecheck.program import BuiltProgram
    from resumecheck.tiny import build

    built = BuiltProgram.wrap("tiny", build({}))
    built.step(1)
    path = str(tmp_path / "capture.pt")
    save_capture(built, path)
    on_disk = torch.load(path, weights_only=True)
    judged = load_checkpoint(path, read_only=True)
    again = load_checkpoint(path, read_only=True)
    weight = judged["components"]["params"]["fc1.weight"]
    assert again["components"]["params"]["fc1.weight"] is weight  # no copy
    assert digest(judged) == digest(on_disk)
    restored = load_checkpoint(path)  # a restore trains on what it gets: its own copy
    assert restored["components"]["params"]["fc1.weight"].data_ptr() != weight.data_ptr()
    restored["components"]["params"]["fc1.weight"].add_(1.0)
    built.step(2)  # nor does the live program move what was captured
    assert digest(load_checkpoint(path, read_only=True)) == digest(on_disk)


def test_a_run_that_differs_late_is_judged_on_the_reference_s_spare_steps_without_a_replay(
        monkeypatch):
    from resumecheck import engine, verify
    from resumecheck.tiny import TARGET

    # dropping the scheduler first differs at step 10 (resumed at 8): its kept
    # step is past the one the reference keeps after its capture
    replays: list[int] = []
    replay = engine._ReferenceTensors._replay

    def counted(self, step, ref_dir):
        replays.append(step)
        return replay(self, step, ref_dir)

    monkeypatch.setattr(engine._ReferenceTensors, "_replay", counted)
    once = {"drop": ["scheduler"], "noise_seeds": 0, "check_determinism": False}
    spared = verify(TARGET, **once).runs[-1]
    assert replays == []
    monkeypatch.setattr(engine, "_SPARE_TENSOR_BYTES", 0)  # as before: replayed
    replayed = verify(TARGET, **once).runs[-1]
    assert replays == [10]
    assert spared.dropped == replayed.dropped == ["scheduler"]
    assert spared.to_json() == replayed.to_json()
    assert spared.first_divergent_step == 10 and spared.max_ulp_diff > 0


def test_the_reference_keeps_spare_steps_only_within_their_bytes(tmp_path, monkeypatch):
    from pathlib import Path

    from resumecheck import engine
    from resumecheck.engine import Checker
    from resumecheck.program import load_target
    from resumecheck.settings import Settings

    target = load_target("resumecheck.tiny:TARGET")
    settings = Settings(steps=16, resume_at=[4], seed=0, check_determinism=False)
    one_step = 2 * 4 * sum(p.numel() for p in target.build({}).program.model.parameters())
    monkeypatch.setattr(engine, "_SPARE_TENSOR_BYTES", 2 * one_step)
    ref = Checker(target, settings.for_target(target), str(tmp_path / "a")).segment
    kept = sorted(int(name.split("_")[1].split(".")[0]) for name in
                  {p.name for p in Path(ref.tensor_dir).glob("step_*.pt")} | set(ref.kept)
                  if name.startswith("step_"))
    assert kept == [5, 6, 7]  # one kept, two spare: the bytes run out


def test_a_restored_state_judged_here_stays_in_memory_only_when_its_structure_loaded_back(
        tmp_path, monkeypatch):
    import shutil

    from resumecheck import capture as captures
    from resumecheck.capture import capture, load_checkpoint, save_capture
    from resumecheck.compare import digest
    from resumecheck.errors import CheckpointError
    from resumecheck.program import BuiltProgram
    from resumecheck.tiny import build

    monkeypatch.setattr(captures, "_LOADED_SHAPES", set())  # (none loaded back in this test)
    fresh = BuiltProgram.wrap("tiny", build({"label_smoothing": 0.2}))  # no optimizer state yet
    odd = str(tmp_path / "fresh.restored.pt")
    save_capture(fresh, odd, verify=False, unwritten=True)
    assert os.path.exists(odd)  # a structure never loaded back: written (and checkable)
    built = BuiltProgram.wrap("tiny", build({"label_smoothing": 0.2}))
    built.step(1)
    save_capture(built, str(tmp_path / "first.pt"))  # written and loaded back
    run = tmp_path / "run"
    run.mkdir()
    kept = str(run / "drop-none-8.restored.pt")
    save_capture(built, kept, verify=False, unwritten=True)
    assert not os.path.exists(kept)
    expected = digest(capture(built)["components"])
    built.step(2)  # the live program moves on; what was kept does not
    assert digest(load_checkpoint(kept, read_only=True)["components"]) == expected
    shutil.rmtree(run)  # the run's directory goes: so does what it kept
    save_capture(built, str(tmp_path / "later.pt"))
    with pytest.raises(CheckpointError, match="does not exist"):
        load_checkpoint(kept)


def test_an_in_process_reference_keeps_its_end_state_in_memory_and_its_captures_on_disk(
        tmp_path):
    from resumecheck.capture import load_checkpoint
    from resumecheck.engine import Checker
    from resumecheck.program import load_target
    from resumecheck.settings import Settings

    target = load_target("resumecheck.tiny:TARGET")
    settings = Settings(steps=12, resume_at=[8], seed=0, check_determinism=False)
    ref = Checker(target, settings.for_target(target), str(tmp_path)).segment
    assert os.path.exists(ref.captures[8])  # restarts (any isolation) read it
    assert ref.end_state and not os.path.exists(ref.end_state)  # only judging reads it
    assert set(load_checkpoint(ref.end_state, read_only=True)["components"]) == set(ref.names)


@pytest.mark.parametrize("tolerance", ["bitwise", "close"])
def test_a_departed_runs_figures_are_its_departures_not_a_later_resume_points(tolerance):
    """A trial: with two resume points, the figures of a run that departed
    after the first were the larger ones at the second (180x larger), and
    within a tolerance they were the maxima over every later step, while the
    failure said they were where it departs. The figures of the run resumed
    at 4 and 12 are those of the run resumed at 4 only: both are the same run
    up to its departure."""
    from resumecheck import Tolerance, verify
    from resumecheck.tiny import TARGET

    once = {"drop": ["scheduler"], "noise_seeds": 0, "check_determinism": False,
            "tolerance": getattr(Tolerance, tolerance)()}
    [one] = [r for r in verify(TARGET, resume_at=[4], **once).runs if r.dropped]
    [two] = [r for r in verify(TARGET, resume_at=[4, 12], **once).runs if r.dropped]
    assert one.first_divergent_step == two.first_divergent_step < 12
    assert (two.max_abs_diff, two.max_rel_diff, two.max_ulp_diff) == \
        (one.max_abs_diff, one.max_rel_diff, one.max_ulp_diff)
