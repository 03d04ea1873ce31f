"""When the declared components do not capture the program's state (issue 13, section 3).

Every report holds the engine's own full resume. When it is not equivalent,
the report says so first, and an ablation is evidence only where it departs
before that resume does (the two differ only in its restore); the others are
``inconclusive``, counted neither as exercised nor as a blind spot.
"""

import json

import pytest

import resumecheck
from resumecheck import verify

from fixtures.trust import lazy_loader

pytestmark = pytest.mark.e2e

ISOLATION = ["inprocess", pytest.param("process", marks=pytest.mark.process)]


@pytest.mark.parametrize("isolation", ISOLATION)
def test_an_iterator_created_after_the_restore_is_said_first_and_judges_only_earlier_ablations(
        isolation):
    drop = "all" if isolation == "inprocess" else ["rng", "global_step"]
    report = verify(lazy_loader.BUGGY, drop=drop, noise_seeds=0, isolation=isolation)
    engine = report.engine_resume
    assert engine is not None and engine is not report.full_resume
    assert (engine.checkpoint, engine.verdict) == ("engine", "diverged")
    assert report.declared_state_complete is False and not report.equivalent
    # nothing declared differs after the load: the why says where to look (a
    # trial: a loader left at epoch 0 by a load was "diverged" with no word on why)
    own = report.full_resume
    assert own.checkpoint == "program" and own.diagnosis == []
    # (trial 195: the list of undeclared state it may be came before the draw found;
    # trial 408: the iterator is made in the first step, after the streams started level)
    assert ("no declared component's state (what it saves) differs right after your load(): "
            "what it leaves different "
            "is state you did not declare, or the first step after the load drew from a random "
            "stream (found below) more than the uninterrupted run's;") in own.explanation

    lines = report.render("table").splitlines()
    assert lines[1] == "full resume: NOT EQUIVALENT"
    # (a trial read the draw as a component missing from the declarations: the
    # WARNING opens with the draw, names the stream, and says what to change)
    assert lines[2].startswith("WARNING: the restart draws from a random stream where the "
                               "uninterrupted run does not")
    assert f"differs from step {engine.first_divergent_step} (loss)" in lines[2]
    assert "torch CPU stream is 1 draw ahead" in lines[2]
    assert "make the iterator the restart needs before the streams are restored" in lines[2]
    # (trial 234: the advice of a generator of its own did nothing under Accelerate, whose
    # prepared IterableDataset loader drops it)
    assert ("a DataLoader with a generator of its own leaves the global stream alone, unless a "
            "framework replaces it: Accelerate prepares a loader over an IterableDataset as a "
            "dispatcher without its generator, unless its DataLoaderConfiguration says "
            "dispatch_batches=False") in lines[2]  # (trial 415: the fix the advice lacked)
    assert "draws 2 there" not in lines[2]  # (one draw: the base seed only)
    # dropped, the data position departs at step 5 in the samples, before the loss,
    # where the full resume departs: the two differ only in that restore, so it is
    # judged (a trial); every other ablation departs at the loss, as that resume does
    earlier = [r for r in report.runs if r.dropped == ["data_cursor"]]
    if isolation == "inprocess":
        assert lines[2].endswith("Ablations that depart before it (at an earlier step, or at "
                                 "the same step in what the step computes first: its data "
                                 "before its loss) are judged (the two runs differ only in "
                                 "that component's restore); the others are inconclusive.")
        assert [(r.verdict, r.first_divergent_key) for r in earlier] == [("diverged", "inputs:0")]
        assert ("departs (step 5, loss, where that step's data (the model's inputs) is still "
                "the uninterrupted run's), and the two differ "
                "only in restoring data_cursor: it matters here") in earlier[0].explanation
        # the draw is the full resume's own, not the dropped cursor's (a trial: each
        # such row named its draw with "step 5 read state that differs ...: data_cursor")
        assert ("the torch CPU stream is off as in the engine's full "
                "resume (see the WARNING): not this drop's doing") in earlier[0].explanation
        assert "1 draw ahead" not in earlier[0].explanation
        assert "read state that differs" not in earlier[0].stream_offsets[0].detail
        assert earlier[0].stream_offsets[0].detail.endswith("(as in the engine's full resume)")
    else:
        assert lines[2].endswith("Ablations cannot be judged: inconclusive.")

    ablations = [r for r in report.runs if r.dropped and r.dropped != ["data_cursor"]]
    assert {r.dropped[0] for r in ablations} >= {"rng", "global_step"}
    for run in ablations:
        assert run.verdict == "inconclusive", run
        assert not run.blind_spot and not run.exercised and run.plausible is None
        assert "inconclusive" in run.explanation
    assert report.blind_spots == [] and len(report.inconclusive) == len(ablations)
    by = {r.dropped[0]: r for r in ablations}
    # nothing reads the step counter: that row is the full resume's own divergence
    assert by["global_step"].same_as_full_resume
    assert "not evidence that the component matters" in by["global_step"].explanation
    assert not by["rng"].same_as_full_resume

    data = json.loads(report.render("json"))
    assert data["declared_state_complete"] is False
    assert [r["checkpoint"] for r in data["runs"][:2]] == ["program", "engine"]
    assert [r["verdict"] for r in data["runs"][2:] if r["dropped"] != ["data_cursor"]] == [
        "inconclusive"] * len(ablations)


def test_the_twin_with_its_own_generator_is_complete_and_its_ablations_are_judged():
    report = verify(lazy_loader.CORRECT, drop=["rng", "data_cursor"], noise_seeds=0)
    assert report.equivalent and report.declared_state_complete is True
    assert report.engine_resume.verdict == "identical"
    assert "WARNING" not in report.render()
    assert [(r.dropped, r.verdict) for r in report.runs if r.dropped] == [
        (["rng"], "diverged"), (["data_cursor"], "diverged")]
    assert all(r.exercised for r in report.runs if r.dropped)


def test_assert_components_exercised_neither_passes_nor_calls_them_blind_spots():
    # Its own load settles the iterator before the restore: its own resume is
    # right, the engine's is not, so no ablation shows anything.
    report = verify(lazy_loader.SETTLED, drop=["rng"], noise_seeds=0)
    assert report.equivalent and report.declared_state_complete is False
    with pytest.raises(resumecheck.ComponentsNotExercised) as info:
        resumecheck.assert_components_exercised(lazy_loader.SETTLED, ["rng"], noise_seeds=0)
    err = info.value
    assert err.components == [] and err.inconclusive == ["rng"]
    assert "cannot tell whether rng is exercised" in str(err)  # (trial 817: "rng are")
    assert "blind spots" not in str(err)


def test_the_pytest_summary_never_prints_ok_for_an_inconclusive_ablation(
        torch_dynamo_imported, pytester):
    pytester.makepyfile(test_lazy='''
import pytest


@pytest.mark.resumecheck(drop=["rng", "global_step"], noise_seeds=0)
def test_exercised(resumecheck):
    resumecheck.assert_components_exercised("fixtures.trust.lazy_loader:SETTLED")
''')
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")  # the summary's wording
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "*cannot tell whether rng, global_step are exercised*",
        "*test_lazy.py::test_exercised  fixtures.trust.lazy_loader:SETTLED  full resume: ok | "
        "engine resume: DIVERGED (it draws from a random stream after the restore more than "
        "the uninterrupted run) | rng: inconclusive | "
        "global_step: inconclusive",
    ])
    assert ": ok | rng" not in result.stdout.str()
    # (trial 415: "declared state incomplete" of a draw, where every component came back)
    assert "declared state incomplete" not in result.stdout.str()


def test_without_ablations_the_warning_does_not_speak_of_them():
    """A trial read "Ablations cannot be judged: inconclusive" under `--drop
    none`, which runs no ablation."""
    report = verify(lazy_loader.BUGGY, drop="none", noise_seeds=0, check_determinism=False)
    notice = report.incomplete_state_notice()
    assert notice.startswith("the restart draws from a random stream"), notice
    assert "Ablation" not in notice and "Ablation" not in report.render("table")


def test_a_shuffled_loader_made_after_the_restore_is_told_to_replay_the_epochs_order():
    """A trial: told "give the DataLoader a generator of its own, or create its
    iterator before the streams are restored", a shuffled loader did both and
    still read another order: its restart must replay the epoch's order."""
    report = verify(lazy_loader.SHUFFLED, drop="none", noise_seeds=0, check_determinism=False)
    [offset] = report.engine_resume.stream_offsets
    assert (offset.stream, offset.draws, offset.unit) == ("torch", 2, "draws")
    notice = report.incomplete_state_notice()
    assert "a shuffled DataLoader without a generator draws 2 there, its base seed and its " \
           "shuffle's seed" in notice, notice
    assert "its generator set back to its state at the epoch's start" in notice
    # (a trial with Lightning: nothing said what to do where the framework makes the iterator;
    # trial 408: under Accelerate a loop's own skip_first_batches over a loader reseeded each
    # epoch puts the order back, with no stateful loader)
    assert "where a framework makes the iterator (Lightning's Trainer), only a loader whose " \
           "state the framework's checkpoint keeps (torchdata's StatefulDataLoader)" in notice


def test_launch_settings_that_change_nothing_are_not_offered_as_a_cause():
    """A trial: launched with seed=0, the default, a lazily made loader's
    WARNING also offered "or the run's settings: it was launched with seed=0".
    Built with them, the engine's restart departs step for step alike: they
    are not named."""
    from dataclasses import replace

    target = replace(lazy_loader.BUGGY, run_config={"seed": 0})
    report = verify(target, drop="none", noise_seeds=0, check_determinism=False)
    assert report.launched_with == {"seed": 0}
    assert report.launch_settings_matter is False
    notice = report.incomplete_state_notice()
    assert "launched with" not in notice, notice
    assert "launched with" not in report.full_resume.explanation
    assert json.loads(report.render("json"))["launch_settings_matter"] is False


def test_a_seed_a_restart_gets_again_is_not_offered_as_a_cause():
    """A trial: a target with restart_config="run", checked with --seed 0, was
    told "or the run's settings: it was launched with --seed 0, and a restart is
    built from the program's defaults", which that target's restarts are not."""
    from dataclasses import replace

    target = replace(lazy_loader.BUGGY, restart_config="run")
    report = verify(target, drop="none", noise_seeds=0, check_determinism=False, seed=0)
    assert report.launched_with == {}
    notice = report.incomplete_state_notice()
    assert notice and "launched with" not in notice, notice


class _KeepsWhatItDoesNotDeclare:
    """Its own save/load keeps a counter its components do not declare."""

    def __init__(self, settings: dict) -> None:
        import torch

        torch.manual_seed(0)
        self.model = torch.nn.Linear(3, 1)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.x, self.y = torch.randn(8, 3), torch.randn(8, 1)
        self.k = 0

    def components(self) -> dict:
        return {"params": self.model, "optimizer": self.opt}

    def train_step(self):
        import torch

        self.k += 1
        loss = torch.nn.functional.mse_loss(self.model(self.x * self.k), self.y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()

    def save(self, path: str) -> None:
        import torch

        torch.save({"m": self.model.state_dict(), "o": self.opt.state_dict(), "k": self.k}, path)

    def load(self, path: str) -> None:
        import torch

        state = torch.load(path)
        self.model.load_state_dict(state["m"])
        self.opt.load_state_dict(state["o"])
        self.k = state["k"]


def test_the_warning_says_so_where_your_own_resume_is_equivalent():
    """A trial's correct Trainer program read the WARNING on the declared
    components, under 'full resume: EQUIVALENT', as its own checkpoint's fault."""
    from resumecheck import Target, verify

    report = verify(Target(factory=_KeepsWhatItDoesNotDeclare, steps=6, resume_at=(3,)),
                    noise_seeds=0, check_determinism=False)
    assert report.equivalent and report.runs[0].verdict == "identical"
    notice = report.incomplete_state_notice()
    # (trial 832: said at the end of a long WARNING, its advice read as the program's fix)
    assert notice is not None and notice.startswith(
        "Your own resume is equivalent: your checkpoint and your load() bring back what the "
        "declared components miss; this concerns the engine's own restart of them, which "
        "ablations use. "), notice
    assert " That restart builds the program and loads each component's state_dict(), and no " \
        "more: what your load() does besides (" in notice and notice.endswith(
            "belongs in a declared component's load_state_dict() (the data position's, for an "
            "iterator) for it to do the same."), notice


def test_an_epochs_kept_generator_state_left_undeclared_is_named_and_declared_it_resumes():
    """A trial's loader replayed the epoch's order from a generator state it
    kept; left undeclared, the engine's restart read another order, and the
    WARNING led with a position saved where the run was not."""
    from fixtures.trust import epoch_replay

    report = verify(epoch_replay.UNDECLARED, drop="none", noise_seeds=0)
    assert report.equivalent and report.declared_state_complete is False
    assert [u.split(" (")[0] for u in report.undeclared] == ["epoch_gen_state"]
    warning = report.incomplete_state_notice()
    assert "what the loader reads depends on state no component declares" in warning
    assert "`epoch_gen_state`" in warning
    declared = verify(epoch_replay.DECLARED, drop="none", noise_seeds=0)
    assert declared.equivalent and declared.declared_state_complete is True


def test_a_generator_the_program_seeds_again_is_not_offered_as_lost_and_the_load_is_named():
    """Trial 202: a load() that seeds the loader's generator by the epoch and
    skips a new iterator to where the run was passed its own resume; the
    engine's restart, which loads the components' state and no more, read the
    epoch from its start, and the WARNING, the why and the test's row offered
    the generator, seeded again as each iterator is made, as the state the
    checkpoint may lose. Held otherwise right after the restore but as the
    uninterrupted run held it after the next step, it was set again by the
    program before it could show: not named. The WARNING says what that
    restart does not do."""
    report = verify("fixtures.trust.skipped_in_load:TARGET", drop="none", noise_seeds=0,
                    check_determinism=False)
    own, engine = report.runs
    assert report.equivalent and own.verdict == "identical" and engine.verdict == "diverged"
    assert report.undeclared == [], report.undeclared
    notice = report.incomplete_state_notice()
    assert "state.gen" not in notice
    assert ("That restart builds the program and loads each component's state_dict(), and no "
            "more: what your load() does besides (a loader's iterator it skips to where the run "
            "was, a generator it seeds again) belongs in a declared component's "
            "load_state_dict()") in notice, notice


@pytest.mark.parametrize("resume_at", [8, 6])
def test_the_readmes_cursor_for_a_plain_loader_resumes_the_engines_restart_and_is_exercised(
        resume_at):
    """Trials 196, 199, 200 and 202 each wrote a data position for a plain
    DataLoader, the README showing none (202's skipped only in load(), which
    the engine's restart does not run). The README's pattern, as written
    there: the engine's restart resumes with it (mid-epoch and at an epoch's
    end), and dropping it departs."""
    report = verify("fixtures.trust.cursor_pattern:TARGET", resume_at=resume_at,
                    drop=["data_cursor"], noise_seeds=0, check_determinism=False)
    own, engine, dropped = report.runs
    assert (own.verdict, engine.verdict) == ("identical", "identical"), report.render()
    assert dropped.verdict == "diverged" and not dropped.blind_spot, report.render()


def test_an_optimizer_the_program_makes_anew_is_traced_through_and_its_twin_is_caught():
    """Trial 216: a correct program that made its optimizer anew as its
    embedding grew failed, exit 1 (`gradient of emb.weight ... (none in the
    uninterrupted run: its optimizer did not step there)`): the steps were
    traced through the optimizer hooked at the build, which stopped stepping.
    The program's ``optimizer`` attribute is followed at each step."""
    report = verify("fixtures.trust.optimizer_made_anew:CORRECT", drop="none", noise_seeds=0)
    assert report.equivalent, report.render()
    assert all(run.verdict == "identical" for run in report.runs), report.render()
    assert not any("learning rate" in line for line in report.untraced), report.untraced
    twin = verify("fixtures.trust.optimizer_made_anew:LOADS_BEFORE_IT_GROWS", drop="none",
                  noise_seeds=0)
    assert not twin.equivalent
    assert [(f.component, f.status) for f in twin.full_resume.diagnosis] == [
        ("optimizer", "confirmed")], twin.render()


def test_a_batch_made_ahead_and_augmented_again_after_the_load_is_said_drawn_during_the_step():
    """Trial 408: Accelerate's loader made a batch ahead, its dataset's
    augmentation drawn before the save and again after the load. The stream
    was level at the first step after the load; the own resume's why said
    something drew "between the load and the first step", and the WARNING
    advised making the iterator before the streams are restored, and that
    under Accelerate only a stateful loader can put an epoch's order back."""
    from fixtures.trust import prefetched_augment

    report = verify(prefetched_augment.AHEAD, drop="none", noise_seeds=0,
                    check_determinism=False)
    own = report.full_resume
    assert own.first_divergent_step == 4 and own.checkpoint == "program"
    [offset] = own.stream_offsets
    assert (offset.stream, offset.step, offset.draws) == ("python", 5, 8), offset
    assert "(step 4, the first after the restore at 3, started level)" in offset.detail
    assert ("or the first step after the load drew from a random stream (found below) more "
            "than the uninterrupted run's;") in own.explanation, own.explanation
    assert "between the load and the first step" not in own.explanation
    assert ("where a loader makes a batch ahead of the step (Accelerate's prepared loader "
            "does), it drew that batch's augmentation before the save") in offset.detail
    notice = report.incomplete_state_notice() or ""
    assert notice.startswith("the restart draws from a random stream where the uninterrupted "
                             "run does not"), notice
    assert ("an augmentation drawn as the batch is made (in the dataset or its collate_fn) is "
            "drawn before the save for the batch the restart makes again after the load: draw "
            "it in the training step") in notice, notice
    assert "make the iterator the restart needs" not in notice
    assert "(Lightning, Accelerate)" not in notice
