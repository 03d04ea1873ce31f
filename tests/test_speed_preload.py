"""A framework's modules are imported once by the warm server, not by every
process-isolated segment: the target declares them (``Target.preload``), the
engine hands them to each segment, the server holds them before it forks."""

from __future__ import annotations

import json
import os
import sys

import pytest

from resumecheck import forkserver, verify
from resumecheck.frameworks import lightning_target, trainer_target
from resumecheck.program import load_target
from resumecheck.report import IDENTICAL

PRELOADING = "fixtures/warm/preloading.py:TARGET"
FRAMEWORK = ("fixtures.warm.framework",)


def test_the_framework_adapters_declare_their_framework_and_a_loaded_target_keeps_it():
    assert lightning_target(module=lambda: None, data=lambda: None).preload == (
        "lightning.pytorch",)
    assert trainer_target(lambda args: None).preload == ("transformers.trainer",)
    target = load_target(PRELOADING)  # (a target loaded from a spec is a copy: the field stays)
    assert target.preload == FRAMEWORK and target.spec == PRELOADING


@pytest.mark.process
def test_each_segment_forks_from_a_server_that_holds_the_framework(monkeypatch):
    if not forkserver.available():
        pytest.skip("no warm servers here (no fork, or RESUMECHECK_WARM=0)")
    asked: list[tuple[str, tuple[str, ...]]] = []
    spawn = forkserver.spawn

    def spy(module, args, env, *rest, **kw):
        asked.append((module, tuple(kw.get("preload", ()))))
        return spawn(module, args, env, *rest, **kw)

    monkeypatch.setattr(forkserver, "spawn", spy)
    report = verify(PRELOADING, isolation="process", drop="none", noise_seeds=0,
                    check_determinism=False)
    assert [r.verdict for r in report.runs] == [IDENTICAL]
    assert asked and all(p == FRAMEWORK for m, p in asked if m == "resumecheck._segment")

    env = {**os.environ, "PYTHONHASHSEED": "1", "PYTHONPATH": os.getcwd()}
    child = spawn("fixtures.warm.preload_probe", [], env, preload=FRAMEWORK)
    out, _ = child.communicate(timeout=120)
    assert json.loads(out.strip().splitlines()[-1]) == {
        "held": True, "imported_here": False, "user_module": False}


def test_on_a_machine_with_a_gpu_every_preload_is_left_to_the_child(monkeypatch):
    launcher = ("torch.distributed.checkpoint", "torch.distributed.fsdp")
    monkeypatch.setattr(forkserver, "gpu_device", lambda: True)
    assert forkserver._fork_safe(launcher + FRAMEWORK) == ()  # (tests/test_gpu.py: on a GPU)
    monkeypatch.setattr(forkserver, "gpu_device", lambda: False)
    assert forkserver._fork_safe(launcher + FRAMEWORK) == launcher + FRAMEWORK


def test_a_preload_that_fails_to_import_only_costs_speed():
    import torch

    stream = torch.get_rng_state()
    forkserver._preload("fixtures.warm.no_such_framework,fixtures.warm.broken_framework,"
                        "fixtures.warm.framework")  # (raises nothing: the child imports them)
    assert "fixtures.warm.framework" in sys.modules
    assert "fixtures.warm.broken_framework" not in sys.modules
    assert torch.equal(torch.get_rng_state(), stream)  # its draw is put back

