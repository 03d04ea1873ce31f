"""The distributed programs, checked without the engine: two launches of torch's launcher.

The first launch trains every target N steps on two ranks and writes the
program's own checkpoint after step K; the second (new processes: a real
restart) loads it and trains K+1..N, once in full and once per per-rank
ablation (that rank's component put back to its freshly built state after the
load). Losses and full parameters are compared rank by rank.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from fixtures.bugs import DIST_MODULES as CLASS9

pytestmark = [pytest.mark.distributed, pytest.mark.e2e]

ROOT = Path(__file__).resolve().parents[1]
RANKS = (0, 1)

DDP, FSDP = "resumecheck.tiny_dist:DDP", "resumecheck.tiny_dist:FSDP"
FSDP_FP16, DDP_BF16 = "resumecheck.tiny_dist:FSDP_FP16", "resumecheck.tiny_dist:DDP_BF16"
USERPROG = "fixtures.dist_userprog:TARGET"
BUGGY = [f"fixtures.bugs.{m}:BUGGY" for m in CLASS9]
CORRECT = [f"fixtures.bugs.{m}:CORRECT" for m in CLASS9]
PER_RANK_DROPS = [[c, r] for c in ("rng", "data_cursor") for r in RANKS]
ABLATED = (DDP, FSDP, USERPROG)
TARGETS = [DDP, FSDP, FSDP_FP16, DDP_BF16, USERPROG, *BUGGY, *CORRECT]


def _torchrun(spec: dict, where: Path, name: str) -> None:
    """One launch of the harness on two ranks through torch's elastic launcher
    (``torchrun --standalone``'s API, as ``resumecheck._launch`` runs it: warm,
    each rank forked by torch's launcher and made fresh; tests/test_dist_launch.py
    shows such a rank starts as a new interpreter does)."""
    from resumecheck import forkserver
    from resumecheck.distributed import LAUNCHER_PRELOAD

    path = where / f"{name}.json"
    path.write_text(json.dumps(spec))
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
    log = where / f"{name}.log"
    log.touch()
    proc = forkserver.spawn(
        "resumecheck._launch",
        [str(len(RANKS)), str(where / f"{name}.failures.json"), str(where / f"{name}.logs"),
         "-m", "tests.dist_harness", str(path)],
        env, cwd=str(ROOT), log=str(log), preload=LAUNCHER_PRELOAD)
    try:
        code = proc.wait(timeout=600)
    finally:
        proc.kill()  # (a no-op once it has exited)
    assert code == 0, log.read_text()[-6000:]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    work = tmp_path_factory.mktemp("dist-programs")
    _torchrun({"phase": "reference", "targets": TARGETS, "work": str(work)}, work, "reference")
    _torchrun({"phase": "restart", "targets": TARGETS, "work": str(work),
               "drops": {**{t: PER_RANK_DROPS for t in ABLATED},
                         FSDP_FP16: [["scaler", None]]}}, work, "restart")

    def read(target: str, variant: str, rank: int) -> list[dict]:
        name = target.replace(":", "-").replace("/", "_")
        return json.loads((work / name / f"{variant}.rank{rank}.json").read_text())

    return read


def _k(target: str) -> int:
    from resumecheck.program import load_target

    return load_target(target).resume_at[0]


def _continuation(runs, target: str, variant: str, rank: int) -> tuple[list[dict], list[dict]]:
    return runs(target, variant, rank), runs(target, "reference", rank)[_k(target):]


@pytest.mark.parametrize("target", [DDP, FSDP, FSDP_FP16, DDP_BF16, USERPROG, *CORRECT])
def test_full_resume_through_the_programs_own_checkpoint_is_bitwise_identical_on_every_rank(
        runs, target):
    for rank in RANKS:
        got, want = _continuation(runs, target, "full", rank)
        assert len(got) == len(want) > 0
        assert [r["loss"] for r in got] == [r["loss"] for r in want], f"rank {rank}"
        assert [r["params"] for r in got] == [r["params"] for r in want], f"rank {rank}"


@pytest.mark.parametrize("target", [DDP, FSDP, USERPROG])
def test_ranks_read_their_own_shards_and_streams_and_agree_after_the_sync(runs, target):
    ref = {rank: runs(target, "reference", rank) for rank in RANKS}
    assert [r["params"] for r in ref[0]] == [r["params"] for r in ref[1]]
    differs = [a["loss"] != b["loss"] for a, b in zip(ref[0], ref[1])]
    assert all(differs), "every step, each rank's loss is its own"


def test_ddp_and_fsdp_train_alike(runs):
    # Same model, data and streams; the sync differs (all-reduce vs reduce-scatter).
    for rank in RANKS:
        ddp = [r["loss"] for r in runs(DDP, "reference", rank)]
        fsdp = [r["loss"] for r in runs(FSDP, "reference", rank)]
        assert fsdp == pytest.approx(ddp, rel=1e-5)


@pytest.mark.parametrize("target", ABLATED)
@pytest.mark.parametrize(("component", "dropped"), [tuple(d) for d in PER_RANK_DROPS])
def test_each_per_rank_state_left_out_changes_that_ranks_continuation(runs, target, component,
                                                                       dropped):
    variant = f"drop-{component}-{dropped}"
    for rank in RANKS:
        got, want = _continuation(runs, target, variant, rank)
        first_loss_same = got[0]["loss"] == want[0]["loss"]
        # Only the dropped rank's first step changes; the sync then carries it to
        # every rank's parameters.
        assert first_loss_same is (rank != dropped), f"rank {rank}"
        assert got[0]["params"] != want[0]["params"], f"rank {rank}"


def test_fp16_loss_scaler_left_out_changes_the_continuation_at_a_later_overflow(runs):
    # Power-of-two scales are exact: a forgotten scaler shows only where the
    # restored and the fresh scale meet an overflow differently (after step 8 here).
    for rank in RANKS:
        got, want = _continuation(runs, FSDP_FP16, "drop-scaler-all", rank)
        same = [g["loss"] == w["loss"] and g["params"] == w["params"] for g, w in zip(got, want)]
        assert same[0] and not same[-1], same


@pytest.mark.parametrize("module", CLASS9)
def test_class9_bug_changes_only_the_named_ranks_first_step(runs, module):
    import importlib

    fixture = importlib.import_module(f"fixtures.bugs.{module}")
    assert fixture.BUG_CLASS == 9 and fixture.COMPONENT == "rng"
    target = f"fixtures.bugs.{module}:BUGGY"
    for rank in RANKS:
        got, want = _continuation(runs, target, "full", rank)
        assert (got[0]["loss"] == want[0]["loss"]) is (rank != fixture.RANK), f"rank {rank}"
        assert got[-1]["params"] != want[-1]["params"]
    # The buggy program trains like its twin until the restart.
    assert runs(target, "reference", 0) == runs(f"fixtures.bugs.{module}:CORRECT", "reference", 0)
