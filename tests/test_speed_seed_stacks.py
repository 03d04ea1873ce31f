"""A seed a program gives torch under the check costs what it costs outside it.

``torch.manual_seed`` also seeds each accelerator backend (CUDA, XPU, MTIA);
one whose device has not started queues the seed with the caller's whole
formatted stack, to name the line should the device fail to start. Under a
check's deep stack that was about a millisecond per seed, paid at every build
of every restart. Where a backend has no device here, the check has it record
the innermost frames only while a segment runs, and puts it back after.
"""

from __future__ import annotations

import traceback

import pytest
import torch

from resumecheck import verify
from resumecheck.components import short_device_seed_stacks
from resumecheck.tiny import TARGET

pytestmark = pytest.mark.skipif(torch.cuda.is_available(),
                                reason="a backend with a device keeps its stacks")


def _queued_cuda_seed_stack() -> list[str]:
    return torch.cuda._lazy_seed_tracker.manual_seed_all_cb[1]


def _seed_deep_down(depth: int, seed: int) -> None:
    if depth:
        return _seed_deep_down(depth - 1, seed)
    torch.manual_seed(seed)


def test_a_seed_for_a_missing_device_keeps_its_innermost_frames_and_still_seeds():
    _seed_deep_down(40, 3)
    whole = _queued_cuda_seed_stack()
    expected = torch.rand(4)
    with short_device_seed_stacks():
        _seed_deep_down(40, 3)
        short = _queued_cuda_seed_stack()
        drawn = torch.rand(4)
    assert len(whole) > 40 and len(short) == 8
    assert any("_seed_deep_down" in frame for frame in short)  # the program's line is named
    assert torch.equal(drawn, expected)  # the CPU stream is seeded as before
    assert torch.cuda.traceback is traceback and torch.xpu.traceback is traceback


def test_the_built_in_programs_seed_under_a_check_is_queued_short_and_torch_is_put_back():
    verify(TARGET, steps=3, resume_at=[2], drop="none", noise_seeds=0,
           check_determinism=False)
    assert len(_queued_cuda_seed_stack()) == 8  # (the last build's torch.manual_seed)
    assert torch.cuda.traceback is traceback and torch.mtia.traceback is traceback
    torch.manual_seed(0)  # outside a check: torch as it was
    assert len(_queued_cuda_seed_stack()) > 8
