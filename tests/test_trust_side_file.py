"""Files a program's save() writes, or its load() reads, outside the checkpoint
path it is given are named with its own resume (a trial's step counter kept
in a file beside the checkpoint made its reports change with --jobs)."""

from __future__ import annotations

import pytest

from resumecheck import verify

pytestmark = pytest.mark.e2e

SAID = ("; your save() wrote `step.txt` (beside the checkpoint) and your load() read "
        "`step.txt` (beside the checkpoint), outside the checkpoint path it was given: a restart "
        "reads what was written there last (by this run, a later save, or another run beside "
        "it), not what the checkpoint saved: keep that state in the checkpoint")


@pytest.mark.parametrize("isolation", ["inprocess", pytest.param("process",
                                                                 marks=pytest.mark.process)])
def test_a_counter_kept_beside_the_checkpoint_is_named(isolation):
    report = verify("fixtures.trust.side_file:TARGET", drop="none", noise_seeds=0,
                    check_determinism=False, isolation=isolation)
    own, engine = report.runs
    assert own.verdict == "identical" and SAID in own.explanation
    assert "step.txt" not in engine.explanation  # (the engine's restart calls neither)


def test_files_read_by_torch_itself_and_the_checkpoint_are_not_named(tmp_path):
    import torch

    from resumecheck.side_files import outside

    checkpoint = tmp_path / "ckpt"
    with outside(str(checkpoint), writes=True) as written:
        torch.save({"a": torch.ones(2)}, checkpoint)
        (tmp_path / "side.txt").write_text("3")
    with outside(str(checkpoint), writes=False) as read:
        torch.load(checkpoint)
        (tmp_path / "side.txt").read_text()
    assert written == [str(tmp_path / "side.txt")] and read == [str(tmp_path / "side.txt")]
