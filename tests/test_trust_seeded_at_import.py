"""A script that seeds at module level resumes as its real restarts do: each
run starts from the streams its import left (``Target.import_streams``), not
from the engine's own, and a stream it forgets to restore is still caught."""

from __future__ import annotations

import pytest

from resumecheck import verify
from resumecheck.program import load_target
from resumecheck.report import DIVERGED

SPEC = "fixtures.trust.seeded_at_import:"


def test_the_streams_its_import_seeded_are_noted_with_the_target():
    target = load_target(SPEC + "CORRECT")
    assert set(target.import_streams) == {"numpy", "torch"}  # (Python's random: untouched)


@pytest.mark.parametrize("isolation", ["inprocess", pytest.param("process", marks=[
    pytest.mark.process, pytest.mark.e2e])])
def test_a_script_seeded_at_import_resumes_bit_for_bit(isolation):
    report = verify(SPEC + "CORRECT", isolation=isolation, drop="none", noise_seeds=0)
    assert report.equivalent, report.render()


def test_a_stream_seeded_at_import_and_not_restored_is_still_caught():
    report = verify(SPEC + "FORGETS_NUMPY", drop="none", noise_seeds=0)
    own = report.full_resume
    assert own is not None and own.verdict == DIVERGED and own.first_divergent_step == 5
    assert [f.component for f in own.diagnosis] == ["rng"]
    assert own.diagnosis[0].status == "confirmed"


def test_a_stream_an_import_only_draws_from_is_left_to_the_engine():
    # (a library's import may draw from an unseeded stream: no two launches agree on it)
    target = load_target("fixtures.trust.draws_at_import:TARGET")
    assert list(target.import_streams) == ["torch"]  # seeded; Python's random only drawn from


def test_a_seed_that_leaves_a_stream_where_it_was_is_noted_all_the_same(tmp_path):
    # (in one interpreter, after a check whose runs seeded numpy with 0, the
    # module's np.random.seed(0) changes nothing, and was once missed)
    from pathlib import Path

    from resumecheck.components import launch_global_streams

    copy = tmp_path / "seeded_copy.py"
    copy.write_text((Path(__file__).parents[1] / "fixtures/trust/seeded_at_import.py").read_text())
    launch_global_streams()
    target = load_target(f"{copy}:CORRECT")
    assert set(target.import_streams) == {"numpy", "torch"}
    report = verify(target, isolation="inprocess", drop="none", noise_seeds=0)
    assert report.equivalent, report.render()
