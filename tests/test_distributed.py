"""Many ranks: segments run as N ranks under torch's elastic launcher.

The first tests need no launch (names, what each rank restores, merging
captures); the rest start real ranks (gloo, CPU, two ranks) and are marked
``distributed``: each launch costs an interpreter and ``import torch`` per
rank and one for the launcher.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from resumecheck.distributed import (
    check_nproc, launched_world_size, merge_captures, rank_file, rank_name, split_rank_name,
)
from resumecheck.errors import CheckpointError, InvalidArgument
from resumecheck.runner import CHECKPOINT_FORMAT, Restore, load_checkpoint

ROOT = Path(__file__).resolve().parent.parent


def test_rank_names_round_trip():
    assert rank_name("rng", 1) == "rng[rank 1]"
    assert split_rank_name("rng[rank 12]") == ("rng", 12)
    assert split_rank_name("grad:fc.weight[rank 0]") == ("grad:fc.weight", 0)
    assert split_rank_name("params") == ("params", None)


@pytest.mark.parametrize("bad", [0, -1, True, 1.5, "2"])
def test_nproc_must_be_a_positive_int(bad):
    with pytest.raises(InvalidArgument, match="nproc"):
        check_nproc(bad)
    check_nproc(None)
    check_nproc(2)


def test_torchrun_environment_is_recognised():
    assert launched_world_size({}) is None
    assert launched_world_size({"RANK": "1", "WORLD_SIZE": "2"}) is None  # not torchrun's
    env = {"TORCHELASTIC_RUN_ID": "x", "RANK": "1", "WORLD_SIZE": "2"}
    assert launched_world_size(env) == (1, 2)


def _capture(path: Path, rank: int, rng: int, params: float) -> str:
    torch.save({"format": CHECKPOINT_FORMAT, "rank": rank, "world_size": 2, "meta": {},
                "components": {"params": {"w": torch.tensor([params])},
                               "rng": {"torch": torch.tensor([rng])},
                               "global_step": {"value": 3}}}, path)
    return str(path)


def test_merged_capture_names_per_rank_state_and_keeps_replicated_state_once(tmp_path):
    files = [_capture(tmp_path / "a.rank0.pt", 0, 10, 1.0),
             _capture(tmp_path / "a.rank1.pt", 1, 11, 1.0)]
    merged = load_checkpoint(merge_captures(files, str(tmp_path / "a.pt")))
    comps = merged["components"]
    assert set(comps) == {"params", "rng[rank 0]", "rng[rank 1]", "global_step"}
    assert comps["rng[rank 1]"]["torch"].item() == 11
    assert comps["params"]["w"].item() == 1.0  # equal on every rank: kept once
    assert merged["world_size"] == 2
    assert rank_file(str(tmp_path / "a.pt"), 1) == str(Path(files[1]).resolve())


def test_state_that_differs_between_ranks_is_kept_per_rank(tmp_path):
    files = [_capture(tmp_path / "b.rank0.pt", 0, 10, 1.0),
             _capture(tmp_path / "b.rank1.pt", 1, 11, 2.0)]  # a shard each
    comps = load_checkpoint(merge_captures(files, str(tmp_path / "b.pt")))["components"]
    assert comps["params"]["[rank 1]"]["w"].item() == 2.0


def test_each_rank_restores_its_own_file_and_drops_only_what_names_it(tmp_path):
    from resumecheck.distributed import _rank_restore  # the translation under test

    files = [_capture(tmp_path / "c.rank0.pt", 0, 10, 1.0),
             _capture(tmp_path / "c.rank1.pt", 1, 11, 1.0)]
    merged = merge_captures(files, str(tmp_path / "c.pt"))
    restore = Restore(path=merged, drop=["rng[rank 1]", "global_step"])
    r0, r1 = _rank_restore(restore, 0, 2), _rank_restore(restore, 1, 2)
    assert (r0.path, r0.drop) == (str(Path(files[0]).resolve()), ["global_step"])
    assert (r1.path, r1.drop) == (str(Path(files[1]).resolve()), ["rng", "global_step"])
    own = Restore(path="/shared/dir", source="program", override_path=merged,
                  override=["rng[rank 0]"])
    assert _rank_restore(own, 0, 2).override == ["rng"]
    assert _rank_restore(own, 1, 2).override == []
    assert _rank_restore(own, 1, 2).path == "/shared/dir"  # one directory for every rank


def test_a_capture_of_fewer_ranks_says_which_rank_has_no_state(tmp_path):
    merged = merge_captures([_capture(tmp_path / "d.rank0.pt", 0, 10, 1.0)],
                            str(tmp_path / "d.pt"))
    with pytest.raises(CheckpointError, match="rank 1 has none of its own"):
        rank_file(merged, 1)
