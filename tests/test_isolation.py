"""Process isolation (fresh interpreters) gives the same verdicts as in-process."""

import pytest

from resumecheck import TargetError, verify
from resumecheck.tiny import TARGET

from tests import programs

pytestmark = [pytest.mark.e2e, pytest.mark.process]


def test_builtin_same_verdicts_in_both_modes():
    inproc = verify(TARGET, noise_seeds=0)
    proc = verify(TARGET, isolation="process", noise_seeds=0)
    key = lambda r: [(x.dropped, x.verdict, x.first_divergent_step, x.first_divergent_quantity)
                     for x in r.runs]
    assert key(proc) == key(inproc)
    assert proc.equivalent and proc.isolation == "process"
    assert all(r.verdict == "diverged" for r in proc.runs if r.dropped)


def test_in_memory_target_cannot_restart_in_a_fresh_interpreter():
    target = programs.own_target("ok")  # built from a function object, no spec
    with pytest.raises(TargetError, match="process isolation needs"):
        verify(target, isolation="process", noise_seeds=0)
