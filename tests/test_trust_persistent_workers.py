"""A DataLoader with persistent workers that augment in the worker: state no
checkpoint can hold, named where the run diverges
(fixtures/trust/persistent_workers.py)."""

from __future__ import annotations

from resumecheck import verify

SPEC = "fixtures.trust.persistent_workers:"


def test_persistent_workers_drawing_in_the_dataset_are_named_as_the_cause(capfd):
    """A trial: the run diverged (rightly), and the only lead was a generator
    that did not matter; the workers' own streams were never mentioned."""
    report = verify(SPEC + "NOISY", drop="none", noise_seeds=0)
    assert not report.equivalent
    for run in report.runs:  # the program's own resume, and the engine's
        assert run.verdict == "diverged" and run.first_divergent_step == 5
        assert ("state no checkpoint can hold: the DataLoader `loader` keeps its 2 worker "
                "processes from epoch to epoch (persistent_workers=True)") in run.explanation
        # (trial 247: said as fact of a dataset whose draws resumed, seeded per sample)
        assert ("a random stream its dataset draws from in them (augmentation) carries on "
                "across epochs in the uninterrupted run and starts anew after a restart, and "
                "no checkpoint holds it; a dataset that draws from none, or from a generator "
                "it seeds again from the epoch and the sample's index, resumes all the "
                "same, and so does a load() that reads again, through the workers, every "
                "batch the run read before the save") in run.explanation  # (trial 421's)
    # (forked side-by-side runs inherit an earlier run's live iterator: its
    # finalizer must not run there and shut down workers that are not theirs)
    assert "can only test a child process" not in capfd.readouterr().err


def test_seeded_by_epoch_and_index_it_resumes_and_nothing_is_said_of_the_workers():
    report = verify(SPEC + "SEEDED", drop="none", noise_seeds=0)
    assert report.equivalent
    assert all("worker" not in run.explanation for run in report.runs)
    # the first epoch's iterator after the restart draws a base seed that the
    # persistent one of the uninterrupted run did not: the stream ends a draw
    # on, no step reads it (not "restored wrongly": the load restored it)
    assert report.full_resume.latent_gaps == ["rng"]
    assert "rng ending otherwise than in the uninterrupted run" in report.full_resume.explanation


def test_beside_a_cause_the_diagnosis_names_the_workers_are_said_as_no_more_than_a_caveat():
    """Trial 212: beside a lost scheduler the diagnosis confirmed, the workers'
    clause read as a second cause of a departure inside their first epoch."""
    report = verify(SPEC + "NOISY_FORGETS_THE_MODEL", drop="none", noise_seeds=0)
    own = report.full_resume
    assert own.verdict == "diverged" and [f.component for f in own.diagnosis] == ["params"]
    assert ("; besides what the diagnosis names, state no checkpoint can hold (which may have "
            "no part in this departure): the DataLoader `loader` keeps its 2 worker processes"
            ) in own.explanation, own.explanation


def test_where_every_step_read_the_uninterrupted_runs_data_the_workers_are_not_said():
    """Trial 534: a load() that replayed every batch through persistent workers,
    whose run departed in its loss alone (a lost stream), was told that the
    next shuffle moves: every sample it read was the uninterrupted run's."""
    report = verify(SPEC + "FORGETS_THE_MODEL_INPUTS_TRACED", drop="none", noise_seeds=0)
    own = report.full_resume
    assert own.verdict == "diverged" and [f.component for f in own.diagnosis] == ["params"]
    assert "worker" not in own.explanation, own.explanation
    # (sample indices alike are no such evidence: the values drawn in a worker may differ)
    indices = verify(SPEC + "FORGETS_THE_MODEL", drop="none", noise_seeds=0).full_resume
    assert "state no checkpoint can hold (which may have no part in this departure): the " \
        "DataLoader `loader` keeps its 2 worker processes" in indices.explanation


def test_a_restarts_new_iterator_that_draws_its_base_seed_again_is_said_and_its_fix_resumes():
    """Trial 324: a shuffle generator seeded again at each epoch's start, used
    by a loader with persistent workers. The restart's new iterator drew the
    workers' base seed from it, which the uninterrupted run's reused iterator
    did not: the next shuffle moved, and the report told only to register the
    generator. Made once as the program is built, the iterator resumes."""
    report = verify(SPEC + "DRAWS_AGAIN", drop="none", noise_seeds=0)
    own = report.full_resume
    assert own.verdict == "diverged" and own.first_divergent_step == 7
    assert ("and it makes its iterator once: the uninterrupted run draws the workers' base "
            "seed (from the loader's generator, else torch's stream) in its first epoch only, "
            "where a restart's new iterator draws it again") in own.explanation
    assert "iter(loader)), before the load, keeps the draws alike" in own.explanation
    assert verify(SPEC + "ITER_AT_BUILD", drop="none", noise_seeds=0).equivalent


def test_a_finished_programs_loader_workers_are_shut_down_before_the_next_is_built(capfd):
    """A trial: a program whose position component referred back to it (a
    cycle) kept a mid-epoch iterator with two workers after each run; freed
    inside the next program's forked worker, its __del__ printed "AssertionError:
    can only test a child process" a dozen times, which read as the check
    crashing. It is freed before the next build, where its workers are its own."""
    import multiprocessing

    before = {child.pid for child in multiprocessing.active_children()}
    report = verify("fixtures.trust.worker_loader_cycle:TARGET", noise_seeds=0,
                    check_determinism=False)
    assert report.equivalent
    # (no finished program's workers are left waiting for the collector)
    assert [c.pid for c in multiprocessing.active_children() if c.pid not in before] == []
    err = capfd.readouterr().err
    assert "can only test a child process" not in err and "Exception ignored" not in err
