"""Many ranks through the engine: the built-in distributed program and the
class 9 fixtures, checked by ``verify(..., nproc=2)`` as ``resumecheck run
--nproc 2`` checks them.

Every check here launches two ranks (gloo, CPU) several times: a check with
per-rank ablations costs about a minute on two shared cores. To stay within
budget: 4 steps with a resume at 2 (the first step after the restart already
shows a per-rank loss), no noise runs (the noise band is not under test) and no
determinism rerun (tests/test_dist_programs.py shows the programs are
deterministic at two ranks), and only the per-rank components dropped.
"""

from __future__ import annotations

import importlib

import pytest

from fixtures.bugs import DIST_MODULES as CLASS9

pytestmark = [pytest.mark.distributed, pytest.mark.e2e]

FAST = {"noise_seeds": 0, "check_determinism": False, "nproc": 2}
PER_RANK = [[f"{c}[rank {r}]"] for c in ("rng", "data_cursor") for r in (0, 1)]
SHOWS = {"rng": "loss on rank {r}", "data_cursor": "data (the samples consumed) on rank {r}"}


def _by_label(report):
    return {(tuple(r.dropped), r.checkpoint): r for r in report.runs}


@pytest.mark.parametrize("target", ["resumecheck.tiny_dist:DDP", "resumecheck.tiny_dist:FSDP"])
def test_built_in_program_resumes_on_two_ranks_and_each_ranks_state_is_needed(target):
    from resumecheck.engine import verify

    report = verify(target, steps=4, resume_at=2, drop=PER_RANK, **FAST)
    runs = _by_label(report)
    assert report.equivalent and report.nproc == 2
    # (trial 412: the JSON said "inprocess" of restarts that were launches of ranks)
    assert report.to_json()["isolation"] == "process"
    assert runs[((), "program")].verdict == "identical"  # its own dcp + per-rank checkpoint
    assert runs[((), "engine")].verdict == "identical"
    for (name,) in PER_RANK:
        run = runs[((name,), "engine")]
        component, rank = name.split("[rank ")
        assert run.verdict == "diverged", name
        assert run.first_divergent_step == 3, name  # the first step after the restart
        # blamed on the rank whose state was dropped, not on the other one
        assert run.first_divergent_quantity == SHOWS[component].format(r=rank.rstrip("]")), name
        if component == "data_cursor":  # (a trial: no detail of the samples under --nproc)
            assert run.divergence_detail.startswith(
                f"step 3 on rank {rank.rstrip(']')}: "), run.divergence_detail
            assert "samples differ" in run.divergence_detail, run.divergence_detail
    # (a trial: rank 0's position saved for every rank passed where the ranks' positions
    # were alike at the resume point, and nothing said that this could not be seen)
    [alike] = [w for w in report.not_checked if "on every rank" in w]
    assert alike.startswith("`data_cursor` at 2 held the same state on every rank")
    assert "`rng`" not in alike  # (seeded per rank: the ranks' differ)
    assert "not checked at this resume point: `data_cursor` at 2" in report.render()
    # (trial 144: the loss figures, the mean over ranks, were read as the largest rank's)
    header = next(line for line in report.render().splitlines() if line.startswith("run  "))
    assert "  max |Δ mean loss|  " in header


@pytest.mark.parametrize("module", CLASS9)
def test_class9_bug_is_caught_on_its_rank_and_its_twin_passes(module):
    from resumecheck.engine import verify

    fixture = importlib.import_module(f"fixtures.bugs.{module}")
    lost = f"{fixture.COMPONENT}[rank {fixture.RANK}]"
    report = verify(f"fixtures.bugs.{module}:BUGGY", drop="none", **FAST)
    own = _by_label(report)[((), "program")]
    assert not report.equivalent
    assert own.verdict == "diverged"
    assert own.first_divergent_quantity == f"loss on rank {fixture.RANK}"
    assert [(f.component, f.status) for f in own.diagnosis] == [(lost, "confirmed")]
    assert _by_label(report)[((), "engine")].verdict == "identical"  # the engine's own resume
    if module == "class09_rank0_rng_everywhere":  # (a trial: 'not within 64 draws', no more)
        assert own.stream_offsets[0].detail.startswith(
            "torch CPU stream of rank 1 is rank 0's stream in the reference at the start of "
            "step"), own.stream_offsets
        assert "rank 1 restored rank 0's state" in own.explanation
    # (a trial: the pytest failure said "inprocess restarts" of ranks)
    from resumecheck.assertions import describe_failure

    assert "bitwise, restarts as new launches of 2 ranks (torch's launcher) (torch" \
        in describe_failure(report).splitlines()[0], describe_failure(report).splitlines()[0]
    # (trial 405: "max |Δloss|" of the mean over ranks, where the table says so)
    assert "    reference vs resumed: max |Δ mean loss| " in describe_failure(report)

    twin = verify(f"fixtures.bugs.{module}:CORRECT", drop="none", **FAST)
    assert twin.equivalent
    assert [r.verdict for r in twin.runs] == ["identical", "identical"]
    # every rank is a new interpreter, in-process too (a trial read "inprocess restarts")
    assert ", restarts as new launches of 2 ranks (torch's launcher), " in twin.render()


def test_a_stream_lost_on_every_rank_is_confirmed_on_every_rank():
    """A trial: when every rank forgot to restore its stream, each rank's
    finding was "(differs, not the cause)": putting one rank's right leaves the
    other rank diverging at the same step. Put right together, the divergence
    goes; left out, each one brings it back."""
    from resumecheck.engine import verify

    report = verify("fixtures.dist.ddp:RNG_LOST_ON_EVERY_RANK", drop="none", **FAST)
    own = _by_label(report)[((), "program")]
    assert own.verdict == "diverged" and own.first_divergent_step == 3
    status = {f.component: f.status for f in own.diagnosis}
    assert status == {"rng[rank 0]": "confirmed", "rng[rank 1]": "confirmed"}, own.explanation


def test_a_position_restored_from_another_rank_says_whose_it_is():
    """Trial 141: rank 0's data position loaded on every rank was blamed on
    rank 1 with its numbers (`2, expected 48`), and nothing said they were rank
    0's, where for the random streams the report says whose they are."""
    from resumecheck.engine import verify

    report = verify("fixtures.dist.ddp:RANK_ZERO_POSITION", drop="none", **FAST)
    own = _by_label(report)[((), "program")]
    assert own.verdict == "diverged", own.explanation
    [finding] = [f for f in own.diagnosis if f.component == "data_cursor[rank 1]"]
    assert finding.detail.endswith("(rank 0's state there: one rank's copy saved, or loaded, "
                                   "for every rank)"), finding.detail
    assert not any("rank 1's state there" in f.detail for f in own.diagnosis)


def test_a_save_rank_zero_writes_inside_the_shared_directory_resumes():
    """Trial 242: a checkpoint rank 0 writes inside save(path)'s directory, then a
    barrier. The saves the run makes without resuming from them gave each rank a
    path of its own, which did not exist: rank 0's write failed before the barrier
    and the other ranks waited there until the timeout, and the report blamed the
    program for hanging. They get the one directory the ranks share."""
    from resumecheck.engine import verify

    report = verify("fixtures.dist_userprog:RANK_ZERO_WRITES", drop="none", timeout=60, **FAST)
    assert report.equivalent, report.render()


def test_a_zero_redundancy_optimizer_declared_as_it_is_is_captured_and_resumes():
    """Trial 258: a ZeroRedundancyOptimizer declared as the optimizer failed the
    check's first capture (its state_dict() answers only where it was
    consolidated), and the user was told to fix the program. Its state is
    gathered onto every rank: the resume is judged, and a lost one is caught."""
    from resumecheck.engine import verify

    report = verify("fixtures.dist_userprog:ZERO", drop=["optimizer"], timeout=60, **FAST)
    assert report.equivalent, report.render()
    (dropped,) = [r for r in report.runs if r.dropped == ["optimizer"]]
    assert dropped.verdict == "diverged", report.render()


def test_a_ranks_stream_left_as_built_is_not_said_to_be_seeded_again_after_the_restore():
    """Trial 512: rank 1's stream, never saved, stood where its build's seed
    and the draws since left it; the report said it was seeded again after
    the restore, by a seed call in a load() that had none (whether a restore
    sets a rank's stream is not followed)."""
    from resumecheck.engine import verify

    report = verify("fixtures.trust.rank_stream_unsaved:BUGGY", drop="none", **FAST)
    own = _by_label(report)[((), "program")]
    assert ("rng[rank 1]", "confirmed") in [(f.component, f.status) for f in own.diagnosis]
    [rank1] = [o for o in own.stream_offsets if o.stream == "torch[rank 1]"]
    assert "past where seeding it with 2 (torch.manual_seed(2)) leaves it: the restore did " \
        "not set it (the checkpoint holds no state of it on this rank, or the restore does " \
        "not set it), so a seed as the program is built stands with what drew since, or a " \
        "seed call in your load() (or code it calls: a build that seeds) or after it set it " \
        "so" in rank1.detail, rank1.detail
    assert "it was seeded again after the restore" not in rank1.detail
