"""The engine's own files, made cheap without changing what they hold: step
tensors in a flat pickle-free file, and captures read once per process (each
reader gets its own copy, a changed file is read again)."""

from __future__ import annotations

import os
import time

import pytest
import torch

from resumecheck.capture import load_checkpoint, save_capture
from resumecheck.compare import digest
from resumecheck.errors import CheckpointError
from resumecheck.program import BuiltProgram
from resumecheck.tiny import build
from resumecheck.trace import load_step_tensors, save_step_tensors


def _every_kind() -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(3)
    return {
        "loss": torch.tensor(0.25),
        "data": torch.arange(12).reshape(3, 4),
        "flags": torch.tensor([True, False, True]),
        "half": torch.randn(5, 3, generator=g).half(),
        "bf16": torch.randn(7, generator=g).bfloat16(),
        "double": torch.randn(2, 2, generator=g, dtype=torch.float64),
        "complex": torch.randn(3, generator=g, dtype=torch.complex64),
        "byte": torch.tensor(200, dtype=torch.uint8),
        "empty": torch.empty(0, 3),
        "transposed": torch.randn(4, 6, generator=g).t(),
        "nan": torch.tensor([float("nan"), -0.0, float("inf")]),
    }


def test_step_files_give_back_every_dtype_and_shape_bit_for_bit(tmp_path):
    tensors = _every_kind()
    save_step_tensors(tensors, tmp_path / "step_1.pt")
    back = load_step_tensors(tmp_path, 1)
    assert back is not None and list(back) == list(tensors)
    for key, t in tensors.items():
        assert back[key].dtype == t.dtype and back[key].shape == t.shape, key
        assert digest(back[key]) == digest(t), key
    assert load_step_tensors(tmp_path, 2) is None
    # each in a storage of its own: a Generator reads its state from the storage's start
    for t in back.values():
        assert t.storage_offset() == 0 and t.untyped_storage().nbytes() == t.numel() * t.element_size()
    state = torch.Generator().manual_seed(7).get_state()
    save_step_tensors({"rng": state}, tmp_path / "step_5.pt")
    g = torch.Generator()
    g.set_state(load_step_tensors(tmp_path, 5)["rng"])  # type: ignore[index]
    assert torch.equal(g.get_state(), state)


def test_step_files_are_no_pickle_and_never_alias_the_live_tensors(tmp_path):
    live = {"param:w": torch.ones(4)}
    save_step_tensors(live, tmp_path / "step_3.pt")
    live["param:w"].add_(1)  # training goes on
    back = load_step_tensors(tmp_path, 3)
    assert back is not None and back["param:w"].tolist() == [1.0] * 4
    head = (tmp_path / "step_3.pt").read_bytes()[:32]
    assert head.startswith(b"resumecheck.steps/1") and b"PK" not in head[:2]
    with pytest.raises(Exception):  # noqa: B017 - torch.load refuses it, whatever its words
        torch.load(tmp_path / "step_3.pt", weights_only=True)


def test_a_truncated_step_file_is_an_error_not_zeros(tmp_path):
    save_step_tensors({"param:w": torch.ones(1000)}, tmp_path / "step_1.pt")
    path = tmp_path / "step_1.pt"
    path.write_bytes(path.read_bytes()[:-100])
    with pytest.raises(EOFError, match="truncated"):
        load_step_tensors(tmp_path, 1)


def test_step_files_written_by_torch_save_still_read(tmp_path):
    torch.save({"loss": torch.tensor(1.5)}, tmp_path / "step_4.pt")
    back = load_step_tensors(tmp_path, 4)
    assert back is not None and back["loss"].item() == 1.5


def _built() -> BuiltProgram:
    built = BuiltProgram.wrap("tiny", build({"label_smoothing": 0.1}))
    for step in range(1, 4):
        built.step(step)
    return built


def test_a_capture_read_again_is_a_fresh_copy_of_what_the_file_holds(tmp_path):
    built = _built()
    path = str(tmp_path / "capture.pt")
    save_capture(built, path)
    on_disk = torch.load(path, weights_only=True)
    first = load_checkpoint(path)
    assert digest(first) == digest(on_disk)
    first["components"]["params"]["fc1.weight"].add_(1.0)  # a restore trains on it
    first["components"]["data_cursor"]["value"] = 99
    second = load_checkpoint(path)
    assert digest(second) == digest(on_disk)
    assert (second["components"]["params"]["fc1.weight"].data_ptr()
            != first["components"]["params"]["fc1.weight"].data_ptr())
    live = built.program.model.fc1.weight
    assert second["components"]["params"]["fc1.weight"].data_ptr() != live.data_ptr()
    built.step(4)  # the program trains on: what was captured does not move
    assert digest(load_checkpoint(path)) == digest(on_disk)


def test_a_capture_rewritten_or_damaged_is_read_again(tmp_path):
    built = _built()
    path = str(tmp_path / "capture.pt")
    save_capture(built, path)
    before = digest(load_checkpoint(path))
    built.step(4)
    time.sleep(0.01)
    save_capture(built, path)  # the same path, other state
    after = load_checkpoint(path)
    assert digest(after) == digest(torch.load(path, weights_only=True)) != before
    with open(path, "r+b") as f:
        f.truncate(os.path.getsize(path) // 2)
    with pytest.raises(CheckpointError, match="truncated or corrupted"):
        load_checkpoint(path)


class _Streams:
    """A program whose only state is its random streams, two of them its own."""

    def __init__(self) -> None:
        import numpy as np

        from resumecheck.components import RNGState

        self.rng = RNGState({"shuffle": torch.Generator().manual_seed(3),
                             "augment": np.random.default_rng(5)})

    def components(self) -> dict:
        return {"rng": self.rng}

    def train_step(self):  # pragma: no cover - never stepped here
        raise AssertionError


def test_stream_states_go_flat_and_come_back_as_they_were(tmp_path):
    from resumecheck.streams import draw_offset, stream_states
    from resumecheck.trace import Tracer, load_stream_states

    program = _Streams()
    tracer = Tracer(BuiltProgram.wrap("streams", program), tmp_path,
                    stream_states_at=frozenset({1}))
    tracer.before_step(1)
    tracer.close()
    expected = stream_states([program.rng])
    back = load_stream_states(tmp_path, 1)
    assert back is not None and digest(back) == digest(expected)
    assert (tmp_path / "streams_1.pt").read_bytes().startswith(b"resumecheck.steps/1")
    # a PCG64 state holds integers wider than 64 bits: they come back exact
    assert back["generator augment"] == expected["generator augment"]
    # the offset search works on them: a stream one draw ahead is found as one
    gen = torch.Generator()
    gen.set_state(back["generator shuffle"])
    torch.empty((), dtype=torch.int64).random_(generator=gen)
    assert draw_offset("generator shuffle", back["generator shuffle"], gen.get_state())[0] == 1
    with torch.random.fork_rng():
        torch.set_rng_state(back["torch"])
        torch.empty((), dtype=torch.int64).random_()
        assert draw_offset("torch", back["torch"], torch.get_rng_state())[0] == 1
