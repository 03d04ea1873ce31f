"""A target given as a file (``path/to/train.py:TARGET``) runs as the script
would: a module beside it that the program imports only while it builds or
trains is found (a trial's script, `import helper` inside train_step, was
refused: "No module named 'helper'")."""

from __future__ import annotations

import pytest

from resumecheck import verify

_HELPER = "SCALE = 0.5\n"

_TRAIN = '''
import torch

import resumecheck
from resumecheck import Attr


class Script:
    def __init__(self, settings):
        import rc_lazy_sibling as helper  # (imported when the program is built)

        torch.manual_seed(0)
        self.model = torch.nn.Linear(3, 1)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=helper.SCALE * 0.1)
        self.x, self.y = torch.randn(8, 3), torch.randn(8, 1)
        self.step = 0

    def components(self):
        return {"params": self.model, "optimizer": self.opt, "global_step": Attr(self, "step")}

    def train_step(self):
        import rc_lazy_sibling as helper  # (and again inside a step)

        loss = torch.nn.functional.mse_loss(self.model(self.x) * helper.SCALE, self.y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.step += 1
        return loss.item()


TARGET = resumecheck.Target(factory=Script, steps=6, resume_at=(3,))
'''


@pytest.mark.parametrize("isolation", ["inprocess", pytest.param("process", marks=pytest.mark.process)])
def test_a_sibling_the_program_imports_while_it_trains_is_found(tmp_path, isolation):
    project = tmp_path / f"lazy_{isolation}"
    project.mkdir()
    (project / "rc_lazy_sibling.py").write_text(_HELPER)
    (project / "train.py").write_text(_TRAIN)
    report = verify(f"{project / 'train.py'}:TARGET", drop="none", noise_seeds=0,
                    isolation=isolation)
    assert report.equivalent, report.render()


def test_a_save_that_writes_onto_the_shared_directory_is_told_where_to_write(tmp_path):
    # (a trial: under --nproc, a save() written for one process, torch.save(..., path),
    # failed with "Is a directory" and no word on what path is there)
    import types

    import torch

    from resumecheck.errors import CheckpointError
    from resumecheck.restore import program_save

    shared = tmp_path / "checkpoint"
    shared.mkdir()
    built = types.SimpleNamespace(program=types.SimpleNamespace(
        save=lambda path: torch.save({"step": 1}, path)))
    with pytest.raises(CheckpointError) as info:
        program_save(built, str(shared), 7)  # type: ignore[arg-type]
    assert "save() at step 7 raised" in str(info.value)
    assert "get one directory that every rank shares: write the files inside it" in str(info.value)
