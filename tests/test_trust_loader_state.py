"""A data loader's state put in after the program made its iterator may not
reach that iterator: a rerun that puts it right and changes nothing is no
evidence that it is not the cause (fixtures/trust/loader_state_early.py)."""

from __future__ import annotations

import pytest

from resumecheck import verify

SPEC = "fixtures.trust.loader_state_early:"


@pytest.mark.parametrize("isolation", ["inprocess",
                                       pytest.param("process", marks=pytest.mark.process)])
def test_a_position_saved_too_early_is_not_called_not_the_cause(isolation):
    """A trial: `data_cursor (differs, not the cause)` while the position the
    checkpoint saved was the whole bug; the put-right went into the loader,
    and the program went on with the iterator its load() had made."""
    report = verify(SPEC + "BUGGY", drop="none", noise_seeds=0, isolation=isolation)
    own, engine = report.runs
    assert own.checkpoint == "program" and own.verdict == "diverged"
    assert own.first_divergent_step == 4
    [finding] = own.diagnosis
    assert finding.component == "data_cursor" and finding.status is None
    assert "put right alone, the run departs no later" not in own.explanation
    assert ("not judged: putting `data_cursor` right after your load() left the run departing "
            "where it did, but your program goes on with `it`, an iterator it had made from that "
            "loader before"
            ) in finding.detail
    assert engine.checkpoint == "engine" and engine.verdict == "identical"


def test_its_twin_resumes_and_nothing_is_said_of_iterators():
    report = verify(SPEC + "CORRECT", drop="none", noise_seeds=0)
    assert report.equivalent and report.declared_state_complete
    assert all("iterator" not in run.explanation for run in report.runs)


def test_an_iterator_made_at_the_build_is_named_where_the_engines_resume_diverges():
    """The program's own resume is right; the engine's cannot be: it restores
    the loader after the build, and the program goes on with the iterator it
    made as it was built. Said, with what to do."""
    report = verify(SPEC + "ITERATOR_AT_BUILD", drop="none", noise_seeds=0)
    own, engine = report.runs
    assert report.equivalent and own.verdict == "identical"
    assert engine.verdict == "diverged" and report.declared_state_complete is False
    assert ("the engine put the state of `data_cursor` into its loader after the build, but "
            "your program goes on with `it`, an iterator it had made from that loader before"
            ) in engine.explanation
    assert "make the iterator once the loader's state is loaded" in engine.explanation


def _real_resume_losses(factory, steps: int, k: int, tmp_path) -> tuple[list[float], list[float]]:
    """The uninterrupted run's losses and a real resume's: save at ``k``, a new
    program loads it and runs on (the fixture seeds as it is built)."""
    def run(program, n: int) -> list[float]:
        return [float(program.train_step().detach()) for _ in range(n)]

    reference = run(factory({}), steps)
    first = factory({})
    head = run(first, k)
    first.save(str(tmp_path / "ckpt.pt"))
    resumed = factory({})
    resumed.load(str(tmp_path / "ckpt.pt"))
    return reference, head + run(resumed, steps - k)


def test_asking_a_loader_for_its_state_after_the_load_does_not_move_the_resumed_run(tmp_path):
    """A trial: a loader asked for its state right after the program's load()
    (to compare it with the reference's) made an iterator and drew its base
    seed there; the resumed run went on one draw off the real resume (max
    |Δloss| 0.0784 printed, 0.0803 real) and the draw was blamed on the
    program ("between your load and the first step")."""
    from fixtures.trust.loader_state_early import IteratorBeforeItsState

    reference, resumed = _real_resume_losses(IteratorBeforeItsState, 8, 3, tmp_path)
    real = max(abs(a - b) for a, b in zip(reference, resumed))
    report = verify(SPEC + "ITERATOR_BEFORE_ITS_STATE", drop="none", noise_seeds=0)
    own = report.runs[0]
    assert own.checkpoint == "program" and own.verdict == "diverged"
    assert own.max_abs_loss_diff == pytest.approx(real, rel=1e-6) and real > 0.1
    assert "between your load and the first step" not in own.explanation


def test_among_ranks_the_state_is_asked_for_in_place(tmp_path):
    """A fork asking every component for its state would call an FSDP
    model's state_dict(), a collective the other ranks never join."""
    import torch.distributed as dist

    from fixtures.trust.loader_state_early import Trainer
    from resumecheck.capture import asks_apart
    from resumecheck.program import BuiltProgram

    built = BuiltProgram.wrap("loader", Trainer({}))
    assert asks_apart(built)
    dist.init_process_group("gloo", init_method=f"file://{tmp_path / 'rendezvous'}",
                            rank=0, world_size=1)
    try:
        assert not asks_apart(built)
    finally:
        dist.destroy_process_group()


def test_a_generator_a_made_iterator_drew_its_order_from_is_not_called_not_the_cause():
    """Trial 226: a loader's generator saved after the epoch's shuffle read
    `rng: generator 'loader' differs ... (differs, not the cause)`: the rerun put
    it right after a load() that had already made the epoch's iterator from it,
    and the order that iterator drew stayed
    (fixtures/trust/generator_saved_after_shuffle.py)."""
    spec = "fixtures.trust.generator_saved_after_shuffle:"
    report = verify(spec + "SAVES_AFTER_SHUFFLE", drop="none", noise_seeds=0)
    own = report.full_resume
    assert (own.verdict, own.first_divergent_step) == ("diverged", 6)
    findings = {f.component: f for f in own.diagnosis}
    assert findings["data_cursor"].status == "confirmed"
    rng = findings["rng"]
    assert rng.status is None and rng.confirmed is None, rng
    assert rng.detail.endswith(
        "; not judged: putting `rng` right after your load() left the run departing where it "
        "did, but your program goes on with `it`, an iterator it had made before from a "
        "loader whose sampler draws from that generator: the order it drew then stays; check what your save() stores "
        "for it, and when your load() makes the iterator"), rng.detail
    assert "put right alone, the run departs no later" not in report.render()
    assert verify(spec + "SAVES_EPOCH_START", drop="none", noise_seeds=0).equivalent


def test_a_global_stream_beside_that_generator_is_judged_by_its_rerun():
    """Trial 688: beside a sampler's own generator that came back right, the
    torch stream a loader's iterator drew its base seed from after the load
    read "not judged: ... check what your save() stores for it", and a count
    the save lost was the cause: the iterator made before drew nothing of its
    order from that stream, so the rerun that put it right is evidence."""
    report = verify("fixtures.trust.generator_saved_after_shuffle:LOSES_COUNT", drop="none",
                    noise_seeds=0, check_determinism=False)
    findings = {f.component: f for f in report.full_resume.diagnosis}
    assert findings["seen"].status == "confirmed", findings
    rng = findings["rng"]
    assert rng.detail.startswith("torch CPU stream differs"), rng.detail
    assert (rng.status, rng.confirmed) == ("not_cause", False), rng
    assert "check what your save() stores" not in rng.detail


def test_a_generator_state_lost_at_the_first_epochs_end_is_no_position_in_another_form():
    """Trial 692: a position whose save() left out the shuffle generator's state
    at the epoch's start, resumed at the first epoch's end, where a fresh
    build's generator held what it lost, read "one position in another form"
    (a note, no gap); at a later epoch's end the resume departs."""
    spec = "fixtures.trust.generator_saved_after_shuffle:LOSES_EPOCH_START"
    fast = {"drop": "none", "noise_seeds": 0, "check_determinism": False}
    report = verify(spec, **fast)
    [finding] = report.full_resume.diagnosis
    assert finding.detail.startswith("gen missing, expected tensor[5056]"), finding.detail
    assert finding.status == "latent" and report.full_resume.latent_gaps == ["data_cursor"]
    assert "one position" not in finding.detail, finding.detail
    later = verify(spec, steps=20, resume_at=[16], **fast)
    assert later.full_resume.verdict == "diverged", later.render()


def test_a_sampler_epoch_a_made_iterator_drew_its_order_from_is_not_called_not_the_cause():
    """Trial 241: a load() that made the epoch's iterator over the script's own
    sampler before setting its epoch read `sampler_epoch: 0, expected 1 (differs,
    not the cause)`; its put-right came after the iterator had drawn its order
    (fixtures/trust/epoch_not_set_in_load.py)."""
    spec = "fixtures.trust.epoch_not_set_in_load:"
    own = verify(spec + "FORGETS_THE_EPOCH", drop="none", noise_seeds=0).full_resume
    assert (own.verdict, own.first_divergent_step) == ("diverged", 9)
    [finding] = own.diagnosis
    assert (finding.component, finding.status) == ("sampler_epoch", None), finding
    assert finding.detail == (
        "0, expected 1; not judged: putting `sampler_epoch` right after your load() left the "
        "run departing where it did, but your program goes on with `it`, an iterator it had "
        "made before over "
        "that sampler: the order it drew then stays; check that your load() sets the "
        "sampler's epoch before it makes the iterator")
    assert verify(spec + "SETS_THE_EPOCH", drop="none", noise_seeds=0).equivalent


def test_a_sampler_epoch_lost_at_an_epochs_end_is_no_position_in_another_form():
    """Trial 739: a sampler's epoch the checkpoint lost, 0 where 1 was expected
    at an epoch's end, which the loop set again as the next epoch began, read
    "one position in another form" (put back): it is behind, not the next
    epoch's, and stays a latent gap (fixtures/trust/epoch_not_set_in_load.py)."""
    own = verify("fixtures.trust.epoch_not_set_in_load:FORGETS_THE_EPOCH", steps=18,
                 resume_at=[12], drop="none", noise_seeds=0,
                 check_determinism=False).full_resume
    assert own.verdict == "identical", own.explanation
    [finding] = own.diagnosis
    assert (finding.component, finding.status) == ("sampler_epoch", "latent"), finding
    assert "one position" not in finding.detail and own.latent_gaps == ["sampler_epoch"]


def test_pythons_stream_right_after_the_restore_is_read_as_the_program_left_it():
    """Trial 819: the state right after a restore is asked for in a fork of the
    process where a loader is declared, and Python seeds its stream anew in a
    forked child: a correct program that keeps Python's stream read "rng:
    Python random stream differs" (a latent gap, which fails --strict)."""
    from fixtures.trust import loader_state_early

    report = verify(loader_state_early.ALL_STREAMS, drop="none", noise_seeds=0,
                    check_determinism=False)
    assert report.equivalent, report.render()
    for run in report.runs:
        assert run.diagnosis == [] and run.latent_gaps == [], run
