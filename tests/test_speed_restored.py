"""An in-process restart's restored state (which only the diagnosis reads)
keeps, uncopied, each component equal to the engine capture it came from,
and a copy of every other one, which later training cannot move; a state
too small for that to matter is copied whole."""

from __future__ import annotations

import pytest

from resumecheck import capture
from resumecheck.capture import load_checkpoint, save_capture
from resumecheck.compare import digest
from resumecheck.program import BuiltProgram
from resumecheck.restore import restore_state
from resumecheck.segments import Restore
from resumecheck.tiny import build


@pytest.mark.parametrize("large", [True, False], ids=["large", "small"])
def test_a_restored_state_shares_what_equals_its_capture_and_copies_the_rest(tmp_path,
                                                                            monkeypatch, large):
    if large:  # (the built-in program's state is below the size where sharing starts)
        monkeypatch.setattr(capture, "_SHARED_FROM_BYTES", 0)
    first = BuiltProgram.wrap("tiny", build({}))
    first.step(1)
    source = str(tmp_path / "reference.capture1.pt")
    save_capture(first, source)  # loads back: its structure is known to load
    restart = BuiltProgram.wrap("tiny", build({}))
    restore_state(restart, Restore(path=source, drop=["params"]), load_checkpoint(source))
    restart.refresh()
    restored = str(tmp_path / "run.restored.pt")
    save_capture(restart, restored, verify=False, unwritten=True, restored_from=source)
    kept = load_checkpoint(restored, read_only=True)["components"]
    captured = load_checkpoint(source, read_only=True)["components"]
    if large:
        assert kept["optimizer"] is captured["optimizer"]  # equal to the capture: its own
    else:
        assert kept["optimizer"] is not captured["optimizer"]  # copied whole
        assert digest(kept["optimizer"]) == digest(captured["optimizer"])
    assert kept["params"] is not captured["params"]  # dropped: the fresh build's, copied
    assert digest(kept["params"]) != digest(captured["params"])
    fresh = digest(kept["params"])
    assert fresh == digest(restart.component("params").obj.state_dict())
    restart.step(2)  # training moves the live state, not what was kept
    assert digest(kept["params"]) == fresh
    assert digest(load_checkpoint(source, read_only=True)) == digest(
        {**load_checkpoint(source), "components": captured})
