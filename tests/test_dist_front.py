"""Issue 10, the front ends: the elastic option in ``fuzz`` and the marker, and
``--drop`` typos with ``--nproc`` found before any step is paid for.

The first tests launch nothing (a launch here would fail them); the ones
marked ``distributed`` run two ranks.
"""

from __future__ import annotations

import pytest

import resumecheck.distributed
from resumecheck import verify
from resumecheck.cli import main
from resumecheck.dist_names import check_rank_suffixes, declared_rank_names, rank_names
from resumecheck.errors import InvalidArgument, UnknownComponent
from resumecheck.fuzz import fuzz, run_fuzz
from resumecheck.reproduce import reproduce_command
from resumecheck.settings import Settings

from fixtures import dist_elastic_front as elastic
from fixtures import dist_loader_after_load as loader

LOADER = "fixtures.dist_loader_after_load:CORRECT"


@pytest.fixture
def no_launch(monkeypatch):
    """Fail the test if any segment is launched: what it checks must come first."""
    def launched(spec, *args, **kwargs):
        raise AssertionError(f"a segment was launched ({spec.name}) before the error")
    monkeypatch.setattr(resumecheck.distributed, "run_ranks", launched)


# -- 1. fuzz and the marker take resume_nproc --------------------------------

@pytest.mark.parametrize(("fields", "says"), [
    ({"resume_nproc": 1}, "give nproc too"),
    ({"nproc": 2, "resume_nproc": 2}, "equals nproc=2"),
])
def test_fuzz_validates_resume_nproc_as_run_does(no_launch, fields, says):
    with pytest.raises(InvalidArgument, match=says) as info:
        fuzz(elastic.CORRECT, **fields)
    assert info.value.name == "resume_nproc"


def test_the_fuzz_command_validates_resume_nproc_before_any_run(no_launch, capsys):
    code = main(["fuzz", elastic.CORRECT.spec, "--resume-nproc", "1"])
    err = capsys.readouterr().err
    assert code == 2 and "--resume-nproc 1" in err and "--nproc N --resume-nproc M" in err


def test_the_marker_takes_resume_nproc_and_validates_it(torch_dynamo_imported, pytester):
    pytester.makepyfile(test_elastic='''
import pytest

@pytest.mark.resumecheck(resume_nproc=1)
def test_without_nproc(resumecheck):
    resumecheck.assert_resume_equivalent("fixtures.dist_elastic_front:CORRECT")
''')
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--strict-markers")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*resume_nproc=1*give nproc too*"])
    result.stdout.no_fnmatch_line("*unknown argument*")


def test_an_elastic_reproduce_command_carries_both_rank_counts():
    from resumecheck.compare import Tolerance

    cmd = reproduce_command("run", elastic.BUGGY.spec, steps=4, seed=None, threads=1,
                            isolation="inprocess", resume_at=[1], drop=[],
                            tolerance=Tolerance.close(), nproc=2, resume_nproc=1)
    assert "--resume-at 1 --drop none" in cmd and "--nproc 2 --resume-nproc 1" in cmd
    assert "--tolerance close" in cmd
    # every segment under --nproc is a new launch: an --isolation there would say
    # in-process restarts where there are none
    assert "--isolation" not in cmd


def test_inconclusive_elastic_examples_are_said_not_reported_as_failures():
    from resumecheck.environment import fingerprint
    from resumecheck.fuzz import FuzzResult

    result = FuzzResult(target="t", steps=8, seed=None, max_interruptions=1, examples=2,
                        distinct_schedules=2, nproc=2, resume_nproc=1,
                        environment=fingerprint(1), reference_loss=[1.0] * 8,
                        inconclusive=[[5], [3]], inconclusive_why="per-rank state could not "
                        "be mapped (rng[rank 1]: no rank 1 at 1 rank(s))")
    assert not result.found
    # (a trial: every example inconclusive, and the search passed, exit 0)
    assert result.summary().startswith("inconclusive: no failing schedule in 2 examples tried")
    assert ("2 of them inconclusive, not judged (resume at 5 and 3): per-rank state could "
            "not be mapped (rng[rank 1]") in result.summary()
    # (a trial: fuzz's header said "inprocess restarts" of ranks; the ranks are said once)
    assert ("the program's own seed, runs of 2 ranks, restarts as new launches of 1 rank "
            "(torch's launcher); torch") in result.render().splitlines()[0]
    assert "every restart at" not in result.render().splitlines()[0]
    assert result.to_json()["inconclusive"] == [[5], [3]]
    # (trial 412: the JSON said "inprocess" of restarts that were launches of ranks)
    assert result.to_json()["isolation"] == "process"
    # each schedule said once: four examples of three schedules are not "and more"
    again = FuzzResult(target="t", steps=8, seed=None, max_interruptions=1, examples=4,
                       distinct_schedules=3, inconclusive=[[8], [5], [8], [3]],
                       inconclusive_why="why")
    assert "4 of them inconclusive, not judged (resume at 8 and 5 and 3): why" in again.summary()


def test_a_fuzz_that_could_not_judge_every_example_exits_5_not_0(no_launch, monkeypatch, capsys):
    """A trial's elastic data position was wrong, every example inconclusive,
    and `fuzz` exited 0: a green build on a real bug."""
    import resumecheck.fuzz as fuzz_module
    from resumecheck.environment import fingerprint
    from resumecheck.fuzz import FuzzResult

    def searched(inconclusive: list[list[int]]):
        def run(*args, **kwargs):
            return FuzzResult(target=elastic.CORRECT.spec, steps=8, seed=None,
                              max_interruptions=1, examples=2, distinct_schedules=2, nproc=2,
                              resume_nproc=1, environment=fingerprint(1),
                              reference_loss=[1.0] * 8, inconclusive=inconclusive,
                              inconclusive_why="per-rank state could not be mapped")
        return run

    argv = ["fuzz", elastic.CORRECT.spec, "--nproc", "2", "--resume-nproc", "1", "--quiet"]
    monkeypatch.setattr(fuzz_module, "run_fuzz", searched([[5], [3]]))
    assert main(argv) == 5
    assert capsys.readouterr().out.splitlines()[1].startswith("inconclusive: no failing schedule")
    monkeypatch.setattr(fuzz_module, "run_fuzz", searched([]))
    assert main(argv) == 0


# -- 2. a --drop typo with --nproc, before the reference ---------------------

@pytest.mark.parametrize(("drop", "says"), [
    ("rng[rank 5]", "there is no rank 5 at nproc=2 (ranks 0..1): drop 'rng[rank 1]'"),
    ("rng", "'rng' is held per rank at nproc=2: drop it for one rank at a time: "
            "'rng[rank 0]', 'rng[rank 1]'"),
    ("optimizer[rank 0]", "'optimizer' is not held per rank"),
    ("rng[1]", "a rank is written NAME[rank R] with R in 0..1"),
])
def test_a_rank_suffix_is_checked_from_the_names_alone(drop, says):
    with pytest.raises(InvalidArgument, match="drop") as info:
        check_rank_suffixes([drop, "optimizer"], 2)
    assert says in str(info.value) and info.value.value == drop
    check_rank_suffixes(["rng[rank 1]", ["data_cursor[rank 0]", "params"]], 2)
    check_rank_suffixes(["ema[0]"], 2)  # a program's own name: checked against its build


@pytest.mark.e2e
def test_the_names_of_the_ranks_come_from_a_build_as_one_rank():
    assert rank_names(["params", "rng", "data_cursor"], 2) == [
        "params", "rng[rank 0]", "rng[rank 1]", "data_cursor[rank 0]", "data_cursor[rank 1]"]
    assert declared_rank_names(LOADER, {}, 2) == [
        "params", "optimizer", "rng[rank 0]", "rng[rank 1]", "data_cursor[rank 0]",
        "data_cursor[rank 1]", "sampler_epoch", "global_step"]
    assert declared_rank_names("fixtures.dist_loader_after_load:NO_SUCH", {}, 2) is None


@pytest.mark.e2e
def test_verify_names_a_typo_and_what_exists_before_any_launch(no_launch):
    with pytest.raises(UnknownComponent) as info:
        verify(LOADER, nproc=2, drop=["optimzer"], noise_seeds=0)
    assert info.value.component == "optimzer"
    assert "rng[rank 1]" in info.value.known and "optimizer" in info.value.known
    with pytest.raises(InvalidArgument, match="no rank 2 at nproc=2"):
        verify(loader.BUGGY, nproc=2, drop=["rng[rank 2]"], noise_seeds=0)


@pytest.mark.e2e
@pytest.mark.parametrize(("drop", "says"), [
    ("sampler_epok", "unknown component 'sampler_epok' (did you mean 'sampler_epoch'?); this "
                     "program declares: params, optimizer, rng[rank 0], rng[rank 1]"),
    ("data_cursor[rank 3]", "no rank 3 at nproc=2"),
])
def test_the_cli_refuses_a_typo_with_nproc_before_any_launch(no_launch, capsys, drop, says):
    code = main(["run", LOADER, "--nproc", "2", "--drop", drop, "--noise-seeds", "0"])
    err = capsys.readouterr().err
    assert code == 2 and says in err, err


# -- 1, end to end: an elastic resume fuzzed ---------------------------------

FAST = {"check_determinism": False, "drop": "none", "noise_seeds": 0}
# The budget bounds the search, a run in progress included: under a loaded
# machine one two-rank example can outlast fuzz's default 60 s.


@pytest.mark.e2e
@pytest.mark.distributed
def test_fuzzing_an_elastic_resume_finds_the_forgotten_optimizer_and_says_how_to_rerun():
    result = run_fuzz(elastic.BUGGY, Settings(nproc=2, resume_nproc=1, **FAST),
                      max_examples=1, max_interruptions=1, budget=1200)
    assert result.found and (result.nproc, result.resume_nproc) == (2, 1)
    run = result.failure
    assert run.verdict == "diverged" and run.resume_at == [1]
    assert "restarted at 1 rank(s) from a checkpoint of 2" in run.explanation
    assert "--resume-at 1 --drop none" in run.reproduce
    assert "--nproc 2 --resume-nproc 1" in run.reproduce
    assert "runs of 2 ranks, restarts as new launches of 1 rank (torch's launcher)" in \
        result.render().splitlines()[0]


@pytest.mark.e2e
@pytest.mark.distributed
def test_fuzzing_its_correct_twin_finds_nothing():
    result = run_fuzz(elastic.CORRECT, Settings(nproc=2, resume_nproc=1, **FAST),
                      max_examples=1, max_interruptions=1, budget=1200)
    assert not result.found and result.examples >= 1 and not result.inconclusive, result.render()


@pytest.mark.e2e
@pytest.mark.distributed
def test_at_two_ranks_a_number_a_component_of_its_own_sets_back_is_not_named():
    """A trial: at 2 ranks, an epoch count the program keeps in a plain int,
    set back by the load of its own sampler-epoch component, was named `not
    compared ... held by no declared component` on every report: the ranks'
    merged result carried what was not compared, not what showed a restart
    bringing it back (fixtures/dist/ddp.py:KEEPS_ITS_EPOCH)."""
    report = verify("fixtures.dist.ddp:KEEPS_ITS_EPOCH", nproc=2, **FAST)
    assert report.equivalent, report.render()
    assert report.undeclared == [], report.undeclared
