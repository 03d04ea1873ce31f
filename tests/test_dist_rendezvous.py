"""The launcher's rendezvous: what torch's does, without the costs one node does not need.

Torch's rendezvous names each event it records after its caller through
``inspect.stack()`` (which searches every loaded module for every frame: over
half a second per launch in a launcher forked from the warm server) and sleeps
a random 0 to 0.3 s before joining. ``resumecheck._launch`` gives the same
names through ``sys._getframe`` and leaves the random sleep out; a retry's
fixed back-off stays.
"""

from __future__ import annotations

import time

import pytest

rdzv = pytest.importorskip("torch.distributed.elastic.rendezvous.dynamic_rendezvous")


class _Handler:
    """Calls the name finder as torch's ``_record`` does, one frame below the
    method whose name the event carries."""

    def _record(self) -> str:
        return rdzv.get_method_name()

    def next_rendezvous(self) -> str:
        return self._record()


def test_events_keep_their_names_and_only_the_random_join_delay_goes(monkeypatch):
    from resumecheck._launch import _quicker_rendezvous

    # put torch's own functions back after the test, whatever it did to them
    monkeypatch.setattr(rdzv, "get_method_name", rdzv.get_method_name)
    monkeypatch.setattr(rdzv, "_delay", rdzv._delay)
    torch_says = _Handler().next_rendezvous()
    assert torch_says == "next_rendezvous"
    assert rdzv.get_method_name(depth=10_000) == "no_method_name"

    _quicker_rendezvous()
    assert _Handler().next_rendezvous() == torch_says
    assert rdzv.get_method_name(depth=10_000) == "no_method_name"
    slept: list[float] = []
    monkeypatch.setattr(time, "sleep", slept.append)
    rdzv._delay(seconds=(0, 0.3))  # the join's random spread: left out
    rdzv._delay(seconds=1)  # a retry's back-off: kept
    assert slept == [1]
