"""The engine's own seeding of torch's global stream (every restart, every
run from step 0) leaves it where ``torch.manual_seed`` would, without
torch's queued accelerator seeds where this torch has no accelerator."""

from __future__ import annotations

import torch

from resumecheck import components


def test_reseeding_moves_torch_s_stream_where_manual_seed_would(monkeypatch):
    for cpu_only in (True, False):
        monkeypatch.setattr(components, "_cpu_only_torch", lambda: cpu_only)
        components.reseed_global_streams(1234)
        ours = torch.rand(4)
        torch.manual_seed(1234)
        assert torch.equal(ours, torch.rand(4))
        components.launch_global_streams()
        launched = torch.get_rng_state()
        components.launch_global_streams(["torch"])
        assert not torch.equal(launched, torch.get_rng_state())


def test_a_cpu_build_is_told_apart_from_one_with_a_device_backend(monkeypatch):
    if torch.version.cuda is None and torch.version.hip is None:
        assert components._cpu_only_torch() or torch.backends.mps.is_built()
    monkeypatch.setattr(torch._C, "_get_privateuse1_backend_name", lambda: "npu")
    assert not components._cpu_only_torch()  # a custom device: torch.manual_seed seeds it
