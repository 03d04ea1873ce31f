"""On a GPU (skipped without one): a CUDA program resumes bit for bit in both
restart modes, a load that forgets the CUDA stream is caught and blamed on
``rng``, a process-isolated segment forked from a warm server can use CUDA,
a framework's modules are not preloaded into a server that forks CUDA
programs, one rank runs under NCCL, and timing records CUDA events."""

from __future__ import annotations

import pytest
import torch

from resumecheck import verify
from resumecheck.report import DIVERGED

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(),
                                                  reason="needs a CUDA device")]

SPEC = "fixtures.gpu.cuda_prog:"
MODES = ["inprocess", pytest.param("process", marks=pytest.mark.process)]


@pytest.mark.parametrize("isolation", MODES)
def test_a_cuda_program_resumes_bit_for_bit(isolation):
    report = verify(SPEC + "CORRECT", isolation=isolation, noise_seeds=0)
    assert report.outcome == "EQUIVALENT", report.render()
    assert report.determinism.get("seeded") is True
    assert report.environment["cuda"], report.environment
    dropped = {r.dropped[0]: r.verdict for r in report.runs if len(r.dropped) == 1}
    assert dropped["rng"] == DIVERGED  # (dropout draws from the CUDA stream)


@pytest.mark.parametrize("isolation", MODES)
def test_a_load_that_forgets_the_cuda_stream_is_caught_and_blamed_on_rng(isolation):
    report = verify(SPEC + "FORGETS_CUDA_RNG", isolation=isolation, drop="none", noise_seeds=0)
    full = report.full_resume
    assert full.verdict == DIVERGED and full.first_divergent_step == 5, report.render()
    assert [f.component for f in full.diagnosis] == ["rng"], report.render()
    assert full.diagnosis[0].confirmed


def test_nothing_is_preloaded_into_a_server_on_a_gpu_machine():
    from resumecheck import forkserver

    assert forkserver._fork_safe(("lightning.pytorch", "torch.distributed.checkpoint")) == ()


def test_a_drop_list_with_nproc_is_checked_by_a_one_rank_build_that_can_use_cuda():
    report = verify(SPEC + "CORRECT", nproc=1, drop="rng[rank 0]", noise_seeds=0,
                    check_determinism=False)
    assert [r.dropped for r in report.runs if r.dropped] == [["rng[rank 0]"]], report.render()


def test_one_rank_under_nccl():
    report = verify(SPEC + "CORRECT", nproc=1, drop="none", noise_seeds=0)
    assert report.outcome == "EQUIVALENT", report.render()


def test_timing_records_cuda_events():
    from resumecheck.timing import measure

    report = measure(SPEC + "CORRECT", steps=8, warmup=2)
    [rank] = report.ranks
    assert rank["clock"] == "cuda events", rank
    for name in ("host_to_device", "forward", "backward", "optimizer"):
        assert rank["phases"][name]["calls"] == 8 and rank["phases"][name]["total_s"] > 0, name
