import io
import pickle
import random

import numpy as np
import pytest
import torch

from resumecheck import Attr, InvalidArgument, RNGState, UnknownComponent, Value
from resumecheck.components import Component, reseed_global_streams, validate_drop


def _roundtrip(state):
    buffer = io.BytesIO()
    torch.save(state, buffer)
    buffer.seek(0)
    return torch.load(buffer, weights_only=True)


def _draw(gens):
    return (random.random(), float(np.random.rand()), torch.rand(1).item(),
            torch.rand(1, generator=gens["t"]).item(), float(gens["n"].random()))


def test_rng_state_restores_every_stream_through_weights_only_load():
    gens = {"t": torch.Generator().manual_seed(3), "n": np.random.default_rng(4)}
    rng = RNGState(gens)
    reseed_global_streams(11)
    np.random.randn()  # leave a cached gaussian in numpy's legacy state
    saved = _roundtrip(rng.state_dict())
    expected = _draw(gens)
    reseed_global_streams(99)
    gens["t"].manual_seed(0)
    gens["n"] = np.random.default_rng(0)
    rng.generators["n"] = gens["n"]
    rng.load_state_dict(saved)
    assert _draw(gens) == expected


def test_reseed_moves_every_global_stream():
    reseed_global_streams(1)
    a = (random.random(), np.random.rand(), torch.rand(1).item())
    reseed_global_streams(2)
    b = (random.random(), np.random.rand(), torch.rand(1).item())
    assert all(x != y for x, y in zip(a, b))


def test_reseeding_and_launch_streams_seed_torch_as_manual_seed_does():
    """The engine seeds torch's CPU generator alone where no accelerator is
    there (torch.manual_seed's per-device work costs milliseconds a call): the
    stream is the one torch.manual_seed would leave."""
    from resumecheck.components import launch_global_streams

    for seed_streams, seed in ((lambda: reseed_global_streams(12345), 12345),
                               (launch_global_streams, 67280421310721)):
        seed_streams()
        ours = torch.get_rng_state()
        torch.manual_seed(seed)
        assert torch.equal(ours, torch.get_rng_state())


def test_value_and_attr_capture_and_restore():
    v = Value(3)
    state = v.state_dict()
    v.value = 10
    v.load_state_dict(state)
    assert v.value == 3

    class Loop:
        step = 5
        cfg = (1, 2)

    loop = Loop()
    step = Attr(loop, "step")
    cfg = Attr(loop, "cfg", to_state=list, from_state=tuple)
    saved = _roundtrip({"s": step.state_dict(), "c": cfg.state_dict()})
    loop.step, loop.cfg = 0, (0,)
    step.load_state_dict(saved["s"])
    cfg.load_state_dict(saved["c"])
    assert (loop.step, loop.cfg) == (5, (1, 2))
    with pytest.raises(AttributeError, match="no attribute 'epoch'"):
        Attr(loop, "epoch")


def test_validate_drop_names_the_known_components():
    assert validate_drop(["rng"], ["params", "rng"]) == {"rng"}
    with pytest.raises(UnknownComponent) as info:
        validate_drop(["rgn"], ["params", "rng"])
    assert info.value.component == "rgn"
    assert "params, rng" in str(info.value)
    assert isinstance(info.value, InvalidArgument)


def test_errors_pickle_with_their_data():
    err = pickle.loads(pickle.dumps(UnknownComponent("x", ["a", "b"])))
    assert err.component == "x" and err.known == ("a", "b")
    assert "a, b" in str(err)


def test_component_of_refuses_objects_without_state_dict():
    with pytest.raises(TypeError, match="state_dict"):
        Component.of("ema", object())

    class SaveOnly:  # (state_dict() but no load: it cannot be restored)
        def state_dict(self):
            return {}
        load_state_dict = None

    with pytest.raises(TypeError, match="state_dict"):
        Component.of("ema", SaveOnly())
    assert Component.of("rng", RNGState()).per_rank
    assert not Component.of("global_step", Value(0)).per_rank


def test_rng_state_given_stream_names_or_a_bare_generator_says_how_to_declare_them():
    """A trial wrote ``RNGState(["python"])`` for the streams: a bare ValueError of
    ``dict()`` ("dictionary update sequence element #0 has length 6")."""
    with pytest.raises(TypeError, match=r"not a list: to choose which global streams it "
                                        r"holds, say streams=\['python'\]"):
        RNGState(["python"])
    with pytest.raises(TypeError, match=r"not a Generator: RNGState\(\{'sampler': generator\}\)"):
        RNGState(torch.Generator())
    assert RNGState(streams=["python"]).streams == ("python",)


def test_rng_state_given_a_legacy_random_state_says_how_to_declare_it():
    """Trial 191: a numpy RandomState failed the reference run, told to fix the program."""
    with pytest.raises(TypeError, match=r"RNGState\(\{'task': RandomState\}\): RNGState holds "
                                        r"torch Generators and numpy Generators"):
        RNGState({"task": np.random.RandomState(0)}, streams=())
