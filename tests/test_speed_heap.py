"""A check's steps reuse their memory as they do when they run alone.

Inside a sweep the copies the check keeps between steps made glibc trim the
top of its heap and grow it again, so the steps of a 1M-parameter program
touched fresh pages: 25,000 to 45,000 page faults in a short check (0.4 s),
measured, against none in most checks once ``heap.settle`` fixes the
thresholds (now and then one region of some 40 MiB is mapped again: the
fewer of two checks is counted). Counted in page faults, not seconds: the
count does not move with the machine's load.
"""

from __future__ import annotations

import resource
import sys

import pytest

from resumecheck import heap, tiny, verify
from resumecheck.program import Target

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="glibc's malloc thresholds")


def _faults() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def _wide(config: dict) -> tiny.TinyProgram:
    return tiny.build({"n_features": 256, "hidden": 4096, **config})  # 1.07M parameters


def test_a_check_is_settled_and_its_steps_touch_no_fresh_pages():
    target = Target(factory=_wide, run_config=tiny.RUN_CONFIG, steps=12, resume_at=(6,))
    settings = {"drop": ["rng"], "noise_seeds": 0, "check_determinism": False}
    verify(target, **settings)  # the heap grows to what the check needs
    assert heap.settle()  # (the check settled this process)
    counts = []
    for _ in range(2):
        before = _faults()
        assert verify(target, **settings).equivalent
        counts.append(_faults() - before)
    # unsettled: 25,000 or more in each (4 MiB blocks mapped afresh, step after step)
    assert min(counts) < 2000, f"{counts} page faults in checks that need none"
