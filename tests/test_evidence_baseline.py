"""Issue 13 §7: the baseline names what makes two runs differ, initial state first."""

import pickle

import pytest

from resumecheck import NondeterministicBaseline, verify
from resumecheck.baseline import check_baseline
from resumecheck.cli import main

pytestmark = pytest.mark.e2e

CAUSES = "fixtures.evidence.nondeterministic_causes"


def _determinism(target):
    return {c.name: c for c in check_baseline(target).checks}["determinism"]


@pytest.mark.parametrize(("target", "cause"), [
    ("fixtures.nondeterministic:UNSEEDED",
     "initial parameters differ: the seed depends on the clock, or is missing"),
    (f"{CAUSES}:AUG_UNSEEDED", "numpy Generator `aug` differs at build"),
    (f"{CAUSES}:TORCH_CLOCK", "the torch CPU stream differs at build"),
    (f"{CAUSES}:HIDDEN_STREAM", "two new builds start alike (parameters and every declared "
                                "stream), so the difference arises inside step 1 (loss)"),
])
def test_baseline_names_what_differs_first(target, cause):
    det = _determinism(target)
    assert det.status == "failed"
    assert det.figures["cause"].startswith(cause)
    assert cause in det.detail
    assert "a different torch thread count" not in det.detail  # not the list of every cause


def test_twin_is_deterministic():
    assert _determinism(f"{CAUSES}:SEEDED").status == "passed"


def test_run_and_fuzz_refuse_with_the_cause(capsys):
    with pytest.raises(NondeterministicBaseline) as info:
        verify(f"{CAUSES}:AUG_UNSEEDED", drop="none", noise_seeds=0)
    err = info.value
    assert err.cause.startswith("numpy Generator `aug` differs at build")
    assert "What differs first: numpy Generator `aug` differs at build" in str(err)
    again = pickle.loads(pickle.dumps(err))
    assert again.cause == err.cause and str(again) == str(err)
    assert main(["run", f"{CAUSES}:TORCH_CLOCK", "--noise-seeds", "0"]) == 3
    assert "the torch CPU stream differs at build" in capsys.readouterr().err
    assert main(["fuzz", f"{CAUSES}:TORCH_CLOCK", "--quiet"]) == 3
    assert "the torch CPU stream differs at build" in capsys.readouterr().err
