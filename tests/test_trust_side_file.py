"""Files a program's save() writes, or its load() reads, outside the checkpoint
path it is given are named with its own resume (a trial's step counter kept
in a file beside the checkpoint made its reports change with --jobs)."""

from __future__ import annotations

import os
import shutil
import tempfile

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


@pytest.mark.parametrize("isolation", ["inprocess", pytest.param("process",
                                                                 marks=pytest.mark.process)])
def test_the_data_a_load_reads_again_is_input_and_not_named(isolation):
    """Trial 426: a nanoGPT-style load() built the model again from the saved
    settings, which read the training text; every report of the correct
    program said to keep that text in the checkpoint. Nothing writes it while
    the check runs: it is the run's input, not state beside the checkpoint."""
    report = verify("fixtures.trust.data_read_on_load:TARGET", drop="none", noise_seeds=0,
                    check_determinism=False, isolation=isolation)
    own = report.runs[0]
    assert own.checkpoint == "program" and own.verdict == "identical", own.explanation
    assert own.side_files == {} and "corpus.txt" not in report.render()


def test_a_file_read_is_named_only_if_it_changed_since_the_check_began(tmp_path):
    import time

    from resumecheck.side_files import changed_since

    began = time.time()
    written, gone = str(tmp_path / "step.txt"), str(tmp_path / "removed.txt")
    with open(written, "w") as fh:
        fh.write("3")
    files = [os.__file__, written, gone]  # (the standard library: installed long before)
    assert changed_since(files, began) == [written, gone]
    assert changed_since(files, None) == files


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


def test_the_installed_packages_listed_during_a_load_name_no_file(tmp_path, monkeypatch):
    """Trial 399: Lightning asked ``importlib.metadata`` for versions during its
    restore, which opens every ``sys.path`` entry that is no directory as a zip
    archive; the marker an editable install puts there
    (``__editable__.NAME.finder.__path_hook__``) was named as a file the load
    read, in every report of a correct program."""
    import importlib.metadata

    from resumecheck.side_files import outside

    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend("__editable__.mine-0.1.finder.__path_hook__")
    (tmp_path / "side.txt").write_text("3")
    with outside(str(tmp_path / "ckpt"), writes=False) as read:
        list(importlib.metadata.distributions())
        (tmp_path / "side.txt").read_text()
    assert read == [str(tmp_path / "side.txt")]


@pytest.mark.skipif(not os.path.isdir("/dev/shm"), reason="no /dev/shm here")
def test_a_file_kept_in_shared_memory_is_named_and_a_device_is_not(tmp_path):
    """A TMPDIR in /dev/shm hid every file a program kept beside its checkpoint:
    /dev was left out whole, as devices are."""
    from resumecheck.side_files import outside

    shared = tempfile.mkdtemp(dir="/dev/shm")
    try:
        with outside(str(tmp_path / "ckpt"), writes=True) as written:
            with open(os.path.join(shared, "step.txt"), "w") as fh:
                fh.write("3")
            with open(os.devnull, "w") as fh:
                fh.write("3")
    finally:
        shutil.rmtree(shared)
    assert written == [os.path.join(shared, "step.txt")]


def test_a_save_through_a_temporary_file_moved_into_place_names_nothing(tmp_path):
    """An atomic save (write path.tmp, then os.replace it onto path) leaves
    nothing beside the checkpoint: nothing is named."""
    import os

    import torch

    from resumecheck import Target

    from fixtures.trust.side_file import Trainer

    class Atomic(Trainer):
        def save(self, path):
            with open(path + ".tmp", "wb") as f:  # (a Python open(): the hook sees it)
                torch.save({"model": self.model.state_dict(),
                            "optimizer": self.optimizer.state_dict(), "step": self.step}, f)
            os.replace(path + ".tmp", path)

        def load(self, path):
            state = torch.load(path)
            self.model.load_state_dict(state["model"])
            self.optimizer.load_state_dict(state["optimizer"])
            self.step = state["step"]

    report = verify(Target(factory=Atomic, steps=8, resume_at=(4,)), drop="none", noise_seeds=0,
                    check_determinism=False)
    assert report.equivalent and "outside the checkpoint path" not in report.render()


def test_a_file_a_load_writes_from_its_checkpoint_and_reads_back_names_nothing(tmp_path):
    """Trial 462: a load() that wrote the checkpoint's main part to a file beside it,
    read it back and removed it was told it read state kept outside the
    checkpoint. A file read after the load itself wrote it is its own scratch;
    one read before it is rewritten still is named."""
    import os

    import torch

    from resumecheck import Target
    from resumecheck.side_files import outside

    from fixtures.trust.side_file import Trainer

    class Unpacks(Trainer):
        def save(self, path):
            torch.save({"main": {"model": self.model.state_dict(),
                                 "optimizer": self.optimizer.state_dict(), "step": self.step}},
                       path)

        def load(self, path):
            tmp = path + ".main"
            with open(tmp, "wb") as f:  # (a Python open(): the hook sees it)
                torch.save(torch.load(path)["main"], f)
            with open(tmp, "rb") as f:
                state = torch.load(f)
            os.remove(tmp)
            self.model.load_state_dict(state["model"])
            self.optimizer.load_state_dict(state["optimizer"])
            self.step = state["step"]

    report = verify(Target(factory=Unpacks, steps=8, resume_at=(4,)), drop="none",
                    noise_seeds=0, check_determinism=False)
    assert report.equivalent and "outside the checkpoint path" not in report.render()
    # (read first, then written back: still a file the load read)
    beside = tmp_path / "step.txt"
    beside.write_text("3")
    with outside(str(tmp_path / "ckpt"), writes=False) as read:
        beside.read_text()
        beside.write_text("4")
        beside.read_text()
    assert read == [str(beside)]


def test_a_pass_with_state_beside_the_checkpoint_warns_in_a_test_and_its_row_says_so():
    """Trial 138: a step count kept in progress.json passed `run`, the pytest
    test and fuzz; only the report's why named the file, and a resume from an
    earlier checkpoint departed."""
    from resumecheck.assertions import require_equivalent
    from resumecheck.errors import SideFilesWarning
    from resumecheck.pytest_plugin import _summary_row

    report = verify("fixtures.trust.side_file:TARGET", drop="none", noise_seeds=0,
                    check_determinism=False)
    # what a reader takes them from: the run's own field, not the words of its why
    document = report.to_json()
    own = document["runs"][report.runs.index(report.full_resume)]
    assert own["side_files"] == {"save": ["`step.txt` (beside the checkpoint)"],
                                 "load": ["`step.txt` (beside the checkpoint)"]}, own
    assert all(r["side_files"] == {} for r in document["runs"] if r is not own)
    own["explanation"] = "reworded"  # (a row words the field: the why is not parsed)
    with pytest.warns(SideFilesWarning) as caught:
        require_equivalent(report)
    said = str(caught[0].message)
    assert "the resume is equivalent, but your save() wrote `step.txt` (beside the " \
        "checkpoint) and your load() read `step.txt` (beside the checkpoint) outside the " \
        "checkpoint path it was given" in said, said
    row = _summary_row({"nodeid": "t.py::t", "target": "t", "report": document})
    assert row.endswith("| your save() wrote `step.txt` (beside the checkpoint) and your "
                        "load() read `step.txt` (beside the checkpoint) outside its "
                        "checkpoint"), row


def test_a_fuzz_search_that_finds_nothing_says_the_files_beside_the_checkpoint():
    """Trial 139: fuzz passed trial 138's step count kept in progress.json
    ("no failing schedule in 100 examples"), saying nothing of the file that
    `run` and the test name: no schedule it draws resumes from an earlier
    checkpoint once a later save has written the file."""
    import json

    from resumecheck.fuzz import fuzz

    result = fuzz("fixtures.trust.side_file:TARGET", max_examples=3, budget=120)
    assert not result.found
    assert result.side_files is not None and "`step.txt`" in result.side_files
    assert "`step.txt` (beside the checkpoint) outside the checkpoint path it was given: a " \
        "resume from an earlier checkpoint reads what a later save wrote there" \
        in result.summary(), result.summary()
    assert json.loads(result.render("json"))["side_files"] == result.side_files


def test_a_load_of_the_latest_in_its_folder_resumed_twice_is_not_said_to_lose_state():
    """Trial 548: a load() that read the latest checkpoint of its run's folder,
    correct at each of two restarts, was NOT EQUIVALENT: the rerun that saves
    right after the first load met the later save of the same schedule in
    that folder, and five components read as lost on a second resume."""
    report = verify("fixtures.trust.latest_in_folder:TARGET", drop="none", noise_seeds=0)
    assert report.equivalent, report.render()
    assert not report.full_resume.lost_on_resave()
    assert "your load() read" in report.full_resume.explanation
    # (and what to do says which checkpoint to read: the one at the path it is given)
    assert "keep that state in the checkpoint, and have load() read the checkpoint at the " \
        "path it is given (not the latest of a folder)" in report.full_resume.explanation
