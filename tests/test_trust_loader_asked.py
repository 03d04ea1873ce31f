"""Trial 144: asking a StatefulDataLoader for its state must not change the run.

Right after its ``load_state_dict()`` (and before its first batch) a
StatefulDataLoader's ``state_dict()`` makes its next iterator there and then,
and the loop's next ``iter()`` takes that one: made before the loop set the
sampler's epoch, it reads the epoch the sampler held then. A correct DDP
trainer that sets the epoch just before its ``iter()`` resumed bit for bit
under torchrun, and the check said NOT EQUIVALENT from the second epoch on:
its capture of the restored state, and the engine's restore, had asked.
"""

from __future__ import annotations

import pytest
import torch
from torch.utils.data import DistributedSampler, TensorDataset

from resumecheck import RNGState
from resumecheck.components import asked_state, settle_component

pytest.importorskip("torchdata")
from torchdata.stateful_dataloader import StatefulDataLoader  # noqa: E402


def _loader(generator: bool = True) -> tuple[StatefulDataLoader, DistributedSampler]:
    data = TensorDataset(torch.arange(16))
    sampler = DistributedSampler(data, num_replicas=1, rank=0, shuffle=True, seed=0)
    own = torch.Generator().manual_seed(0) if generator else None
    return StatefulDataLoader(data, batch_size=4, sampler=sampler, generator=own), sampler


def _saved_in_the_second_epoch() -> tuple[dict, list[list[int]]]:
    """A loader's state one batch into its second epoch, and the batches after it."""
    loader, sampler = _loader()
    sampler.set_epoch(0)
    list(loader)
    sampler.set_epoch(1)
    batches = iter(loader)
    next(batches)
    return loader.state_dict(), [b[0].tolist() for b in batches]


def _rest_after(ask) -> list[list[int]]:
    """What a restarted loop reads: the loader gets its state, ``ask`` looks at
    it, then the loop sets the epoch and makes its iterator."""
    state, _ = _saved_in_the_second_epoch()
    loader, sampler = _loader()
    loader.load_state_dict(state)
    ask(loader)
    sampler.set_epoch(1)
    return [b[0].tolist() for b in loader]


def test_asked_right_after_its_load_a_loader_reads_on_as_if_nobody_asked():
    state, rest = _saved_in_the_second_epoch()
    assert _rest_after(lambda loader: None) == rest  # the program alone resumes exactly
    assert _rest_after(lambda loader: loader.state_dict()) != rest  # asked plainly: another order
    loader, _ = _loader()
    loader.load_state_dict(state)
    streams, own = torch.get_rng_state(), loader.generator.get_state()
    assert asked_state(loader)["_num_yielded"] == 1  # the state it was given
    assert loader._iterator is None and loader.next_iter_state == state
    assert torch.equal(torch.get_rng_state(), streams)
    assert torch.equal(loader.generator.get_state(), own)  # (the base seed's draw: undone)
    assert _rest_after(asked_state) == rest


def test_a_restore_makes_the_next_iterator_only_where_making_it_draws_from_a_restored_stream():
    """The engine's restore settles what components make lazily before it sets
    the random streams, so that their draws come first, as in a correct resume."""
    state, rest = _saved_in_the_second_epoch()
    own, _ = _loader()  # its base seed comes from its own, undeclared generator
    own.load_state_dict(state)
    settle_component(own)
    assert own._iterator is None  # left to the loop, after its set_epoch
    plain, _ = _loader(generator=False)  # its base seed comes from torch's global stream
    plain.load_state_dict(state)
    settle_component(plain)
    assert plain._iterator is not None
    declared, _ = _loader()
    RNGState({"loader": declared.generator}, streams=())  # its generator is a declared stream
    declared.load_state_dict(state)
    settle_component(declared)
    assert declared._iterator is not None


@pytest.mark.e2e
@pytest.mark.distributed
def test_a_ddp_loop_that_sets_the_epoch_before_its_iterator_resumes_and_its_twin_is_caught():
    from resumecheck.engine import verify

    fast = {"drop": "none", "noise_seeds": 0, "check_determinism": False, "nproc": 2}
    report = verify("fixtures.dist.stateful_loader:CORRECT", **fast)
    assert report.equivalent, report.render()
    assert [(r.checkpoint, r.verdict) for r in report.runs] == [
        ("program", "identical"), ("engine", "identical")]
    report = verify("fixtures.dist.stateful_loader:LOADER_STATE_LOST", **fast)
    own = {r.checkpoint: r for r in report.runs}["program"]
    assert own.verdict == "diverged" and own.first_divergent_step == 7
    assert [(f.component, f.status) for f in own.diagnosis] == [
        ("data_cursor[rank 0]", "confirmed"), ("data_cursor[rank 1]", "confirmed")]
