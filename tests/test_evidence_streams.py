"""Issue 13 §5: name what happens to the random streams after the restore."""

import json
from typing import Any
import random

import numpy as np
import pytest
import torch

from resumecheck import RNGState, verify
from resumecheck.assertions import describe_failure
from resumecheck.program import Target
from resumecheck.streams import MAX_DRAWS, draw_offset, search_reach, stream_states
from resumecheck.trace import StepRecord, Tracer

from fixtures.evidence import loader_after_load

ISOLATIONS = ["inprocess", pytest.param("process", marks=pytest.mark.process)]


def _states_around(draw):
    """Stream states before and after ``draw()`` runs once."""
    gen = np.random.default_rng(3)
    rng = RNGState({"aug": gen, "loader": torch.Generator().manual_seed(4)})
    torch.manual_seed(1), random.seed(1), np.random.seed(1)
    before = stream_states([rng])
    draw(gen, rng.generators["loader"])
    return before, stream_states([rng])


@pytest.mark.parametrize(("key", "draw", "expected", "unit"), [
    ("torch", lambda g, t: torch.empty((), dtype=torch.int64).random_(), 1, "draws"),
    ("torch", lambda g, t: [iter(torch.utils.data.DataLoader(range(4))) for _ in range(3)], 3,
     "draws"),
    ("python", lambda g, t: random.random(), 2, "32-bit words"),
    ("numpy", lambda g, t: np.random.randint(0, 10), 1, "32-bit words"),
    ("generator aug", lambda g, t: g.integers(0, 2**40), 1, "raw outputs"),
    # (trial 592: small integers drawn 32 bits at a time keep a half word, which no raw
    # output walk changes: 48 raw outputs behind read "not within 64")
    ("generator aug", lambda g, t: g.integers(0, 8, size=95), 48, "raw outputs"),
    ("generator loader", lambda g, t: iter(torch.utils.data.DataLoader(range(4), generator=t)),
     1, "draws"),
    # (a trial: a randperm after the restore was called "not an offset": one word
    # per value, which no whole number of int64 draws reaches)
    ("torch", lambda g, t: torch.randperm(48), 47, "32-bit words"),
    ("generator loader", lambda g, t: torch.rand(3, generator=t), 3, "32-bit words"),
])
def test_offset_search_counts_draws_forward_and_back(key, draw, expected, unit):
    before, after = _states_around(draw)
    assert draw_offset(key, before[key], after[key]) == (expected, unit)
    assert draw_offset(key, after[key], before[key]) == (-expected, unit)
    assert draw_offset(key, before[key], before[key])[0] is None


def test_a_numpy_state_that_keeps_a_normal_for_the_next_draw_is_found_by_its_words():
    """A trial: numpy's stream, seeded anew, 814 words behind a reference that
    kept a normal value from its last `np.random.beta`, was "not within 4096
    32-bit words" of it: the kept normal is no word."""
    np.random.seed(3)
    fresh = stream_states([RNGState(streams=("numpy",))])["numpy"]
    np.random.random(200)
    np.random.normal()  # (two doubles drawn, one normal kept for the next call)
    kept = stream_states([RNGState(streams=("numpy",))])["numpy"]
    assert kept["has_gauss"] != fresh["has_gauss"]
    assert draw_offset("numpy", kept, fresh) == (-408, "32-bit words")  # (400 and a normal)


def test_offset_search_is_bounded_and_leaves_the_streams_alone():
    before, _ = _states_around(lambda g, t: None)
    state = torch.get_rng_state()
    reach = search_reach("torch", "32-bit words", before["torch"])
    assert reach == 4096 and search_reach("torch", "draws", before["torch"]) == MAX_DRAWS
    near, far = torch.Generator(), torch.Generator()
    near.set_state(before["torch"])
    far.set_state(before["torch"])
    torch.empty(reach - 1, dtype=torch.int32).random_(generator=near)  # (an epoch's shuffle)
    assert draw_offset("torch", before["torch"], near.get_state()) == (reach - 1, "32-bit words")
    torch.empty(reach + 1, dtype=torch.int32).random_(generator=far)
    assert draw_offset("torch", before["torch"], far.get_state()) == (None, "draws")
    other = torch.Generator().manual_seed(99).get_state()
    assert draw_offset("torch", before["torch"], other) == (None, "draws")
    assert torch.equal(torch.get_rng_state(), state)


@pytest.mark.parametrize("stream", ["numpy", "python"])
@pytest.mark.parametrize("drawn_before", [0, 600, 623, 624, 1000])
@pytest.mark.parametrize("words", [1, 81, 624, 4096])
def test_mersenne_offsets_are_found_from_the_word_position_across_regenerations(
        stream, drawn_before, words):
    """Python's and numpy's global streams (both MT19937) are searched where
    their word position says the other state can be, then checked whole:
    also when the words between regenerate the keys (the position wraps past
    624), and as far as 4096 words (a trial: a load that restored Python's
    stream and then shuffled an epoch again, 81 words, was "not within 64"); a
    stream of another seed at the same position, or one beyond the reach, is
    no offset."""
    draw = ((lambda n: np.random.bytes(4 * n)) if stream == "numpy"
            else (lambda n: random.getrandbits(32 * n)))

    def seeded(seed: int, n: int) -> Any:
        np.random.seed(seed)
        random.seed(seed)
        if n:  # (np.random.bytes(0) draws a word all the same)
            draw(n)
        return stream_states([RNGState(streams=(stream,))])[stream]

    before, after = seeded(5, drawn_before), seeded(5, drawn_before + words)
    assert search_reach(stream, "32-bit words") == 4096
    assert draw_offset(stream, before, after) == (words, "32-bit words")
    assert draw_offset(stream, after, before) == (-words, "32-bit words")
    other = seeded(6, drawn_before + words)  # (the same position, other keys)
    assert draw_offset(stream, before, other)[0] is None
    assert draw_offset(stream, before, seeded(5, drawn_before + 4097))[0] is None


def test_recording_the_streams_draws_nothing():
    built = Target(factory=loader_after_load.CORRECT.factory).build({})
    tracer = Tracer(built, None)
    before = torch.get_rng_state()
    tracer.before_step(1)
    assert torch.equal(torch.get_rng_state(), before)
    assert set(tracer._streams) == {"torch"}  # the declared stream only
    tracer.close()


@pytest.mark.e2e
@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_iterator_created_after_the_load_is_one_torch_draw_ahead(isolation):
    report = verify(loader_after_load.BUGGY, drop="none", isolation=isolation, noise_seeds=0,
                    check_determinism=isolation == "inprocess")
    full = report.full_resume
    assert full.verdict == "diverged" and full.first_divergent_step == 8
    [offset] = full.stream_offsets
    assert (offset.stream, offset.step, offset.draws, offset.unit) == ("torch", 8, 1, "draws")
    # (its load() sets the stream, then makes the iterator: nothing draws after it)
    cause = "or drew from it after setting it (a DataLoader iterator created there after it " \
            "draws its base seed: one draw)"
    for text in (full.explanation, report.render("table"), describe_failure(report)):
        assert "torch CPU stream is 1 draw ahead" in text
        assert "and was so right after the load (nothing drew in between)" in text
        assert cause in text
    plain = json.loads(report.render("json"))["runs"][0]["stream_offsets"]
    assert plain == [{"stream": "torch", "step": 8, "draws": 1, "unit": "draws",
                      "detail": offset.detail}]


@pytest.mark.e2e
@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_correct_twin_has_no_stream_finding(isolation):
    report = verify(loader_after_load.CORRECT, drop="none", isolation=isolation, noise_seeds=0,
                    check_determinism=isolation == "inprocess")
    assert report.equivalent, report.render()
    assert report.full_resume.stream_offsets == []


@pytest.mark.e2e
def test_iterator_created_on_the_first_step_shows_at_the_next_step():
    report = verify(loader_after_load.BUGGY_LAZY, drop="none", noise_seeds=0)
    full = report.full_resume
    [offset] = full.stream_offsets
    assert (offset.stream, offset.step, offset.draws) == ("torch", 9, 1)
    assert "during step 8 more than the uninterrupted run did" in offset.detail


@pytest.mark.e2e
def test_a_stream_not_restored_is_named_so():
    """Dropped, the torch stream of a program that seeds it at its build is
    where the uninterrupted run's was many words before (found by its word
    position), and said to be left there by a restore that did not restore it."""
    report = verify(loader_after_load.CORRECT, drop=["rng"], noise_seeds=0,
                    check_determinism=False)
    [dropped] = [r for r in report.runs if r.dropped == ["rng"]]
    assert dropped.verdict in ("diverged", "inconclusive")
    [offset] = dropped.stream_offsets
    assert offset.draws is not None and offset.draws < -2 * MAX_DRAWS, offset
    assert offset.unit == "32-bit words"
    # (a trial: the engine's own ablation was offered the causes of a program's
    # load(), which cannot be: the engine restores exactly what it does not drop)
    assert offset.detail.endswith("the engine's restore, which drops rng here, left it there: "
                                  "it does not restore it (where a fresh launch, the build and "
                                  "the rest of the restore left it stands)"), offset.detail


def test_a_load_that_seeds_the_stream_again_is_said_so_with_its_seed():
    """A trial: a load that seeds the stream again was never called so; then
    (trial 277) it was one of four causes, or "not within 64 draws of it:
    another seed, ...", where the stream is where seeding it leaves it."""
    report = verify("fixtures.bugs.class06_rng_clobbered:BUGGY", drop="none", noise_seeds=0,
                    check_determinism=False)
    [offset] = report.full_resume.stream_offsets
    assert offset.detail == (
        "torch CPU stream at the start of step 10, the first after the restore at 9, is 3313 "
        "32-bit words behind the reference's: where seeding it with 0 (torch.manual_seed(0)) "
        "leaves it: it was seeded again after the restore (a seed call in your load() (or code "
        "it calls: a build that seeds) or after it), so the restart draws from a newly seeded "
        "stream, not the run's")
    # a load that restores nothing, its build drawing after the seed: not called seeded again
    [lost] = verify("fixtures.bugs.class05_rng_not_saved:BUGGY", drop="none", noise_seeds=0,
                    check_determinism=False).full_resume.stream_offsets
    assert "it did not restore it" in lost.detail and "seeding it with" not in lost.detail
    # (trial 505: a load() that drew from the stream before it restored the others left it
    # elsewhere than the build did, and read "where a fresh launch and the build left it")
    assert "(where a fresh launch, the build and the rest of the restore left it stands)" \
        in lost.detail, lost.detail


class _SeedsInLoad:
    """Each step draws far more than the search reaches (a GAN's noise), and
    load() seeds Python's and torch's streams again, then draws a little."""

    def __init__(self, config: dict) -> None:
        torch.manual_seed(3)
        random.seed(3)
        self.model = torch.nn.Linear(4, 1)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.01)
        self.rng = RNGState()

    def components(self) -> dict:
        return {"params": self.model, "optimizer": self.opt, "rng": self.rng}

    def train_step(self):
        from resumecheck import StepOutput

        noise = torch.randn(5000, 4)
        loss = self.model(noise[:8] * (1 + random.random())).pow(2).mean()
        loss.backward()
        self.opt.step()
        self.opt.zero_grad()
        return StepOutput(loss=loss.detach())

    def save(self, path: str) -> None:
        torch.save({"m": self.model.state_dict(), "o": self.opt.state_dict(),
                    "r": self.rng.state_dict()}, path)

    def load(self, path: str) -> None:
        state = torch.load(path, weights_only=False)
        self.model.load_state_dict(state["m"])
        self.opt.load_state_dict(state["o"])
        self.rng.load_state_dict(state["r"])
        torch.manual_seed(3)  # the bug
        random.seed(3)
        torch.rand(2)


def test_a_stream_seeded_again_far_from_the_reference_is_said_so_and_how_far_past_the_seed():
    """Trial 277: the stream, too far from the reference's to be found, read
    only "not within 64 draws (nor 4096 32-bit words) of it: another seed, a
    stream not restored, or one moved further than that"."""
    run = verify(Target(factory=_SeedsInLoad, steps=6, resume_at=(3,)), drop="none",
                 noise_seeds=0, check_determinism=False).full_resume
    details = {o.stream: o.detail for o in run.stream_offsets}
    assert details["torch"] == (
        "torch CPU stream at the start of step 4, the first after the restore at 3, is 1 draw "
        "past where seeding it with 3 (torch.manual_seed(3)) leaves it: it was seeded "
        "again after the restore (a seed call in your load() (or code it calls: a build that "
        "seeds) or after it), so the restart draws from a newly seeded stream, not the run's")
    # the build drew nothing from Python's stream after seeding it, so where a step began
    # it is a stream not restored as much as one seeded again; but the load set it to
    # the run's state, so it was seeded again (trial 434: "left it there: it did not
    # restore it, or ..." of a load that set the stream and then built, which seeded it)
    assert details["python"] == (
        "Python random stream at the start of step 4, the first after the restore at 3, is 6 "
        "32-bit words behind the reference's: where seeding it with 3 (random.seed(3)) leaves "
        "it: it "
        "was seeded again after the restore (a seed call in your load() (or code it calls: a "
        "build that seeds) or after it), so the restart draws from a newly seeded stream, not "
        "the run's"), details["python"]


def test_a_stream_of_another_seed_is_not_called_an_offset():
    before, _ = _states_around(lambda g, t: None)
    other = torch.Generator().manual_seed(12345)
    torch.empty(700, dtype=torch.int32).random_(generator=other)
    assert draw_offset("torch", before["torch"], other.get_state()) == (None, "draws")


def _segment(tmp_path, name, states_by_step):
    """A SegmentResult whose records carry these stream states at each step's start."""
    from resumecheck.segments import SegmentResult
    from resumecheck.streams import stream_digests
    from resumecheck.trace import StepRecord

    folder = tmp_path / name
    folder.mkdir()
    records = []
    for step, states in states_by_step.items():
        torch.save(states, folder / f"streams_{step}.pt")
        records.append(StepRecord(step=step, loss=0.0, streams=stream_digests(states)))
    return SegmentResult(records=records, names=[], captures={}, end_state=None,
                         tensor_dir=str(folder))


def _torch_state(draws):
    g = torch.Generator().manual_seed(7)
    for _ in range(draws):
        torch.empty((), dtype=torch.int64).random_(generator=g)
    return {"torch": g.get_state()}


_FOUR_WORDS = ("4 32-bit words (2 int64 draws, as a shuffled loader's seeds, or 4 values of draws "
               "that take a word each, as randint over a small range)")
"""How two int64 draws are said (trial 600: 4 randint values over a small range read as
"2 int64 draws", a kind the program did not make)."""


@pytest.mark.parametrize(("resumed", "step", "draws", "words"), [
    ({4: 3, 5: 6}, 4, 1, "1 draw ahead of the reference's at the start of step 4, the first "
                         "after the restore at 3: something drew from the torch stream between"),
    ({4: 2, 5: 7}, 5, 2, _FOUR_WORDS + " ahead of the reference's at the start of step 5 "
                         "(step 4, the "
                         "first after the restore at 3, started level): something drew from the "
                         "torch stream during step 4 more than the uninterrupted run did"),
    ({4: 0, 5: 3}, 4, -2, _FOUR_WORDS + " behind the reference's at the start of step 4"),
])
def test_stream_offsets_after_a_restore(tmp_path, resumed, step, draws, words):
    from resumecheck.evidence import stream_offsets

    reference = _segment(tmp_path, "ref", {s: _torch_state(n) for s, n in
                                           {1: 0, 2: 0, 3: 1, 4: 2, 5: 5}.items()})
    run = _segment(tmp_path, "run", {s: _torch_state(n) for s, n in resumed.items()})
    [offset] = stream_offsets(reference, [(3, run)])
    assert (offset.stream, offset.step, offset.draws) == ("torch", step, draws)
    assert words in offset.detail
    assert stream_offsets(reference, [(3, run)], until=3) == []  # a restore after the divergence


def test_every_stream_that_differs_is_named_in_the_words_not_only_the_first():
    """A trial: the data came from Python's random.sample, and the words named
    only torch's stream (the JSON had both)."""
    from resumecheck import verify

    report = verify(noise_seeds=0, drop="rng", check_determinism=False)
    [dropped] = [r for r in report.runs if r.dropped == ["rng"]]
    assert [o.stream for o in dropped.stream_offsets] == ["torch", "numpy", "python"]
    assert dropped.explanation.endswith(
        "numpy global stream differs at the start of step 9 too; "
        "Python random stream differs at the start of step 9 too")


@pytest.mark.e2e
def test_putting_one_component_right_draws_nothing_from_the_programs_streams():
    """A trial: the rerun that put the data cursor right built its iterator
    again, drawing a base seed from the torch stream the program's load had
    set right; putting rng right too undid that draw, and rng was called a
    confirmed cause. The stream detail said something drew between the load
    and the first step; the load itself left the generator ahead."""
    from fixtures.trust import override_draws

    report = verify(override_draws.BUGGY, drop="none", noise_seeds=0)
    own = report.full_resume
    assert own.verdict == "diverged" and own.first_divergent_step == 5
    status = {f.component: f.status for f in own.diagnosis}
    # (rng, the generator the iterator the load made drew from, put right after that
    # load changes nothing, which is no evidence: not judged, trial 226)
    assert status == {"data_cursor": "confirmed", "rng": None}, own.explanation
    assert "an iterator it had made before from a loader whose sampler draws from that " \
        "generator" in own.diagnosis[1].detail
    [offset] = own.stream_offsets
    assert offset.stream == "generator sampler" and offset.draws > 0
    assert "and was so right after the load (nothing drew in between)" in offset.detail
    assert "between your load and the first step" not in offset.detail
    assert verify(override_draws.CORRECT, drop="none", noise_seeds=0).equivalent


def test_a_stream_the_load_sets_back_is_said_to_be_left_there_by_the_load():
    """A trial: a stream the load set to an earlier state was said first to be
    "not restored and seeded again"; nothing drew between the load and the
    first step, and the report now says the load left it there."""
    from fixtures.trust import stream_saved_early

    own = verify(stream_saved_early.BUGGY, drop="none", noise_seeds=0).full_resume
    assert own.verdict == "diverged" and own.first_divergent_step == 4
    [offset] = own.stream_offsets
    assert (offset.stream, offset.step) == ("torch", 4) and offset.draws < 0
    assert "behind the reference's at the start of step 4" in offset.detail
    assert "and was so right after the load (nothing drew in between): your load() left it " \
           "there" in offset.detail
    assert verify(stream_saved_early.CORRECT, drop="none", noise_seeds=0).equivalent


def test_an_engine_restore_that_drops_the_streams_is_named_as_what_left_them():
    """A run of the engine's own restore is not said to be left so by "your
    load()": dropping `rng`, the build's seeding stands (Python's stream 32
    words behind, numpy's 512: both found by their word position)."""
    from resumecheck.tiny import TARGET

    report = verify(TARGET, drop=["rng"], noise_seeds=0, check_determinism=False)
    [run] = [r for r in report.runs if r.dropped == ["rng"]]
    lines = {o.stream: (o.draws, o.detail) for o in run.stream_offsets}
    assert lines["python"][0] == -32 and lines["numpy"][0] == -512, lines
    for draws, detail in (lines["python"], lines["numpy"]):
        assert "the engine's restore, which drops rng here, left it there: it does not " \
               "restore it (where a fresh launch, the build and the rest of the restore left it " \
               "stands)" in detail, detail
        assert "your load()" not in detail


def test_a_count_of_words_that_one_shuffled_iterator_draws_is_put_together(tmp_path):
    """A trial: 97 words ahead were told "a count no whole number of int64
    draws makes", and not that one new iterator of a loader shuffling 96
    items draws exactly that: 2 words for its base seed, 95 for its shuffle."""
    from resumecheck.evidence import stream_offsets

    def state(iterators):
        g = torch.Generator().manual_seed(7)
        for _ in range(iterators):
            torch.empty((), dtype=torch.int64).random_(generator=g)  # the base seed
            torch.randperm(96, generator=g)  # the shuffle
        return {"torch": g.get_state()}

    reference = _segment(tmp_path, "ref", {s: state(n) for s, n in {3: 0, 4: 0, 5: 0}.items()})
    run = _segment(tmp_path, "run", {4: state(0), 5: state(1)})
    [offset] = stream_offsets(reference, [(3, run)])
    assert (offset.draws, offset.unit) == (97, "32-bit words"), offset
    assert ("(97 words are, for one, a randperm of 98 items, or, where a DataLoader draws from "
            "it, one new iterator of a shuffled loader over 96 items: 2 for its base seed, 95 "
            "for its shuffle); within a step the count is what the two runs drew apart, net: "
            "it may be the difference of larger draws (a RandomSampler draws one more shuffle, "
            "n - 1 words, as an epoch's indices run out, which one of the runs may not have "
            "reached)") in offset.detail, offset.detail  # (trial 162: a net of two draws)
    assert "a count no whole number of int64 draws" in offset.detail  # (97 is odd)


def test_an_even_count_of_words_beyond_a_loaders_seeds_is_said_in_words(tmp_path):
    """A trial: a dataset shuffling with its own generator (no DataLoader) drew
    two randperms of 32 items, 62 words, and was told "31 int64 draws (62
    32-bit words)": the words come first, and the loader is one reading only."""
    from resumecheck.evidence import stream_offsets

    def state(chunks):
        g = torch.Generator().manual_seed(7)
        for _ in range(chunks):
            torch.randperm(32, generator=g)
        return {"generator data": g.get_state()}

    reference = _segment(tmp_path, "ref", {s: state(0) for s in (3, 4, 5)})
    run = _segment(tmp_path, "run", {4: state(0), 5: state(2)})
    [offset] = stream_offsets(reference, [(3, run)])
    assert (offset.draws, offset.unit) == (31, "draws"), offset
    assert ("is 62 32-bit words (62 values of draws that take a word each, as torch.rand, randn "
            "(of 16 values or more) and randint over a range under 2**28 do, or 31 values of "
            "draws that take two, as dropout's masks and full int64 draws do) "
            "ahead of the reference's") in offset.detail, offset.detail
    assert "no whole number of int64 draws" not in offset.detail  # (62 is even)
    assert "a shuffle's randperm of n items n - 1 (62 words are, for one, a randperm of 63 " \
        "items, a weighted sampler's 31 draws with replacement (torch.multinomial), or, where " \
        "a DataLoader draws from it," in offset.detail, offset.detail


def test_draws_that_follow_a_batch_of_another_size_are_put_to_the_data():
    """A trial (a streaming loader's resume read 7 samples against 8): the
    torch stream's lag after the first resumed step was put to an iterator,
    eval mode or a skipped branch, none of which the program had. Where that
    step read a batch of another size, its dropout drew for that many
    samples: the lag is said to follow from the data."""
    report = verify("fixtures.evidence.batch_size_draws:SKIPS_A_BATCH", noise_seeds=0,
                    drop="none", check_determinism=False)
    own = report.full_resume
    assert own.verdict == "diverged" and own.first_divergent_step == 2
    [offset] = own.stream_offsets
    assert offset.detail.startswith(
        "torch CPU stream is 128 32-bit words (128 values of draws that take a word each, as "
        "torch.rand, randn (of 16 values or more) and randint over a range under 2**28 do, or "
        "64 values of draws that take two, as dropout's masks and full int64 draws do) behind "
        "the reference's at the start of step 3: "
        "step 2, the first after the restore, read 4 samples, 8 in the uninterrupted run, and "
        "drew 128 32-bit words (128 values of draws that take a word each, as torch.rand, randn "
        "(of 16 values or more) and randint over a range under 2**28 do, or 64 values of draws "
        "that take two, as dropout's masks and full int64 draws do) less: "
        "what a step draws "
        "follows what it reads (dropout's masks and augmentation per sample; a sampler's "
        "reshuffle where the step reads into a new epoch)"), offset.detail
    assert "eval mode" not in offset.detail and "iterator" not in offset.detail
    assert [f.component for f in own.diagnosis] == ["data_cursor"]
    assert verify("fixtures.evidence.batch_size_draws:CORRECT", noise_seeds=0, drop="none",
                  check_determinism=False).equivalent


class _NoiseNotRestored:
    """A numpy generator declared with RNGState, drawn from every step, that
    the program's own load() leaves as the build made it."""

    def __init__(self, settings):
        torch.manual_seed(0)
        self.model = torch.nn.Linear(3, 1)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.noise = np.random.default_rng(7)
        self.x = torch.randn(8, 3)

    def components(self):
        return {"params": self.model, "optimizer": self.opt,
                "rng": RNGState({"noise": self.noise}, streams=())}

    def train_step(self):
        jitter = torch.from_numpy(self.noise.normal(0.0, 0.1, size=(8, 3))).float()
        loss = self.model(self.x + jitter).pow(2).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()

    def save(self, path):
        torch.save({"model": self.model.state_dict(), "opt": self.opt.state_dict()}, path)

    def load(self, path):
        state = torch.load(path)
        self.model.load_state_dict(state["model"])
        self.opt.load_state_dict(state["opt"])


def test_a_stream_left_as_the_build_made_it_is_said_to_be_where_the_run_began():
    """Trial 160: a numpy generator left at its build state read only "not
    within 64 raw outputs of it: another seed, a stream not restored, or ...";
    its digest is the uninterrupted run's at the start of step 1."""
    report = verify(Target(factory=_NoiseNotRestored, steps=6, resume_at=(3,)), drop="none",
                    noise_seeds=0)
    own = report.full_resume
    assert own is not None and own.first_divergent_step == 4
    [offset] = [o for o in own.stream_offsets if o.stream == "generator noise"]
    assert offset.draws is None
    assert offset.detail == (
        "generator `noise` at the start of step 4, the first after the restore at 3, is where "
        "the uninterrupted run's was at the start of step 1, as the build left it: the restart "
        "draws from it as made (or seeded) anew, and it was not restored, or was made or seeded "
        "again after the restore")


def test_a_stream_the_load_set_right_and_then_drew_from_says_so():
    """Trial 159: a load() that set torch's stream and then fast-forwarded its
    data iterator, whose augmentation drew, read "another seed, a stream not
    restored, or one moved further"; the load's set is seen now
    (``fixtures/trust/stream_set_then_drawn.py``)."""
    spec = "fixtures.trust.stream_set_then_drawn:"
    own = verify(spec + "SET_THEN_DRAWN", drop="none", noise_seeds=0).full_resume
    assert own is not None and own.first_divergent_step == 6
    [offset] = [o for o in own.stream_offsets if o.stream == "torch"]
    assert offset.draws is None  # (too far for the search: the skipped samples' normals)
    assert offset.detail == (
        "torch CPU stream differs from the reference's at the start of step 6, the first after "
        "the restore at 5, though your load() set it to the uninterrupted run's state at step 5: "
        "something moved it after that, in load(), after the set: it was so right after the load "
        "(a draw: a model or module built or initialized after the set; an iterator made again "
        "and fast-forwarded through the batches the run had read, whose augmentation draws; a "
        "forward pass to warm up; or a seed call): set the "
        "stream last in "
        "load(), after everything that draws or seeds")
    assert verify(spec + "CORRECT", drop="none", noise_seeds=0).equivalent
    import torch  # (the setters are torch's own again)
    assert torch.set_rng_state.__module__ == "torch.random" and not hasattr(
        torch.set_rng_state, "__wrapped__")


def test_words_drawn_offer_a_batch_a_prefetching_loader_made_ahead():
    """Trial 194: 16 words, the flips of a batch Accelerate's loader had made
    ahead and made again after the load, read only as "a randperm of 17 items,
    or ... a shuffled loader over 15 items", which the program did not have."""
    from resumecheck.evidence import _words_cause

    said = _words_cause("torch", "between the load and the first step", 16)
    assert ("most draws take one word per value (torch.rand, the augmentation of a batch a "
            "prefetching loader made ahead and makes again after the load), dropout's masks "
            "and draws with replacement two") in said  # (trial 401: a dropout mask takes two)
    # (trial 740: an agent's Categorical.sample() over 4 actions takes 8 words, measured)
    assert ("a draw of one sample (Categorical.sample(), torch.multinomial of one) two per "
            "category") in said
    probs = torch.tensor([0.1, 0.2, 0.3, 0.4])
    torch.manual_seed(0)
    before = torch.get_rng_state()
    torch.distributions.Categorical(probs=probs).sample()
    drew = torch.get_rng_state()
    torch.set_rng_state(before)
    torch.empty(8, dtype=torch.int32).random_()  # (8 words, one each)
    assert torch.equal(torch.get_rng_state(), drew)


class _GrowingSequences:
    """Sequences that grow a token a step (a curriculum whose length no
    component declares), with dropout over every token: a restart reads
    shorter ones, and draws fewer masks (trial 201: 2816 words ahead read as
    the cause of the data the draws followed)."""

    def __init__(self, settings: dict) -> None:
        torch.manual_seed(0)
        self.model = torch.nn.Embedding(64, 2)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.length = 3

    def components(self) -> dict:
        from resumecheck import RNGState

        return {"params": self.model, "optimizer": self.optimizer, "rng": RNGState()}

    def train_step(self):
        from resumecheck import StepOutput

        batch = torch.arange(4 * self.length).reshape(4, self.length) % 64
        self.length += 1
        out = torch.nn.functional.dropout(self.model(batch), 0.5)
        loss = out.pow(2).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return StepOutput(loss=loss.item(), samples=batch)


def test_draws_in_a_step_whose_data_differs_are_not_said_to_be_only_their_cause():
    from resumecheck import Target

    report = verify(Target(factory=_GrowingSequences, steps=5, resume_at=(2,)), drop="none",
                    noise_seeds=0, check_determinism=False)
    engine = report.full_resume
    assert engine.first_divergent_step == 3
    assert engine.first_divergent_quantity.startswith("data")
    [offset] = engine.stream_offsets
    assert offset.step == 4 and offset.draws and offset.draws < 0, offset
    assert offset.detail.endswith(
        "(step 3 read other data too: other data may draw otherwise, a batch of longer "
        "sequences more dropout, as much as a draw may make other data, a shuffle drawn "
        "anew: the first divergence says which data)"), offset.detail


def test_the_table_row_points_at_the_streams_line_instead_of_repeating_it():
    """Trials 288, 292: the same long stream paragraph in the row's why and
    again as the `streams:` line below; the JSON keeps the why whole."""
    report = verify("fixtures.bugs.class05_rng_not_saved:BUGGY", drop="none", noise_seeds=0,
                    check_determinism=False)
    [offset] = report.full_resume.stream_offsets
    head = offset.detail.split(": ", 1)[0]
    assert offset.detail in report.full_resume.explanation
    for fmt in ("table", "markdown"):
        text = report.render(fmt)
        # (the row, and in the text table the whole why below it)
        rows = [line for line in text.splitlines() if "own save/load" in line]
        assert any(f"{head} (see streams: below)" in row for row in rows)
        assert not any(offset.detail in row for row in rows)
        assert offset.detail in text  # (the streams line, whole)


def test_a_stream_the_restore_set_nowhere_past_the_builds_seed_is_not_said_seeded_after_it():
    """A trial's Trainer seeded torch's stream in its constructor, and its
    checkpoint held no random state: the stream, a draw past that seed, was
    said to be "seeded again after the restore (a seed call after it)", and
    the user looked for a seed call there was not. Trial 596: a seed in a
    callback's on_train_begin, before the Trainer's restore, stood too."""
    report = verify("fixtures.trust.seeded_last_at_build:NO_RANDOM_STATE", drop="none",
                    noise_seeds=0, check_determinism=False)
    [offset] = report.full_resume.stream_offsets
    assert offset.detail.endswith(
        _FOUR_WORDS + " past where seeding it with 42 (torch.manual_seed(42)) "
        "leaves it: the restore set it nowhere (the checkpoint holds no state of it, or the "
        "restore does not set it), so a seed as the program is built or starts training "
        "stands (a callback's on_train_begin, before the restore), or a seed call after the "
        "restore set it so: the restart draws from a newly seeded stream, not the run's"), \
        offset.detail
    assert "it was seeded again after the restore" not in offset.detail


def test_the_words_per_value_the_counts_say_are_this_torchs():
    """Trial 401: the words were said to be a dropout mask's, one per value,
    where torch's CPU bernoulli_ draws a double (two words) for each; what the
    counts say of torch.rand, randn and dropout holds on the torch installed."""
    def after(draw) -> torch.Tensor:
        torch.manual_seed(0)
        draw()
        return torch.get_rng_state()

    dropout = torch.nn.Dropout(0.2).train()
    assert torch.equal(after(lambda: dropout(torch.ones(8))), after(lambda: torch.rand(16)))
    assert torch.equal(after(lambda: torch.randn(32)), after(lambda: torch.rand(32)))
    assert torch.equal(after(lambda: torch.randint(0, 100, (5,))), after(lambda: torch.rand(5)))


def test_streams_are_level_only_where_every_restore_starts_its_step_as_the_reference(tmp_path):
    """Trials 402, 404: where every recorded stream came back level, the
    WARNING no longer offers a loader's draw after the load as a cause."""
    from resumecheck.evidence import streams_level

    reference = _segment(tmp_path, "ref", {s: _torch_state(s) for s in range(1, 9)})
    level = _segment(tmp_path, "level", {4: _torch_state(4), 5: _torch_state(5)})
    ahead = _segment(tmp_path, "ahead", {7: _torch_state(8), 8: _torch_state(9)})
    unrecorded = _segment(tmp_path, "unrecorded", {})
    unrecorded.records = [StepRecord(step=4, loss=0.0), StepRecord(step=5, loss=0.0)]
    assert streams_level(reference, [(3, level)], until=5)
    assert not streams_level(reference, [(3, level), (6, ahead)], until=None)
    # a restore at or after the departure only carries it
    assert streams_level(reference, [(3, level), (6, ahead)], until=6)
    assert not streams_level(reference, [(3, unrecorded)], until=5)
    assert not streams_level(reference, [], until=None)


@pytest.mark.parametrize("k", [1, 3])
def test_a_load_that_sets_the_stream_and_then_builds_is_said_seeded_after_the_set(k):
    """Trial 434: a DDPM's load() set torch's stream, then built its model,
    which seeded the stream and drew the weights. Found behind the
    reference's (resumed at 1 it is exactly one step behind), the stream read
    "your load() left it there: it did not restore it, or seeded it again
    after restoring it (a seed call after the load), or ...": four guesses,
    one of them pointing after the load, for a seed call inside it."""
    own = verify("fixtures.trust.set_before_build:TARGET", resume_at=[k], drop="none",
                 noise_seeds=0, check_determinism=False).full_resume
    [offset] = own.stream_offsets
    # (trial 825: the seed was in the build the load called, not in load() itself)
    assert "past where seeding it with 0 (torch.manual_seed(0)) leaves it: it was seeded again " \
        "after the restore (a seed call in your load() (or code it calls: a build that seeds) " \
        "or after it)" in offset.detail, offset.detail
    assert "left it there" not in offset.detail


def test_an_even_count_of_words_may_be_dropout_over_a_larger_batch():
    """Trial 442: 2306 words were a loader's base seed and dropout over 1152 more
    values of a larger graph batch, and read as a shuffle it did not have."""
    from resumecheck.evidence import _cause

    said = _cause("torch", "during step 14", "32-bit words", 2306)
    assert ("(2306 words are, for one, a randperm of 2307 items, dropout's masks over 1153 more "
            "values (a larger batch), a weighted sampler's 1153 draws with replacement "
            "(torch.multinomial), or, where a DataLoader draws from it,") in said, said
    # (trial 598: 192 words, a WeightedRandomSampler's 96 draws with replacement, read as
    # a randperm of 193 items or a loader over 191 that the program did not have)
    gen = torch.Generator().manual_seed(0)
    before = gen.get_state()
    torch.multinomial(torch.rand(96), 96, replacement=True, generator=gen)
    moved = torch.Generator().set_state(before)
    torch.rand(192, generator=moved)
    assert torch.equal(moved.get_state(), gen.get_state())  # (two words a draw, torch 2.13)
    assert "a weighted sampler's 96 draws with replacement (torch.multinomial)" in \
        _cause("generator `sampler`", "during step 11", "32-bit words", 192)
    assert "dropout's masks over" not in _cause("torch", "during step 14", "32-bit words", 97)


def test_two_draws_ahead_are_not_put_to_a_loader_alone():
    """Trial 481: 4 words were 4 small randint draws (dead codes a lost buffer
    made more of), and the cause named first was a loader's base seed, of a
    loader with a generator of its own, which leaves the global stream alone."""
    from resumecheck.evidence import _cause

    said = _cause("torch", "during step 11", "draws", 2)
    assert said.startswith("something drew from the torch stream during step 11: a DataLoader "
                           "iterator created after the load, of a loader without a generator "
                           "of its own, draws its base seed"), said
    assert ("; or draws of one word a value (torch.rand, randint over a small range) that a step "
            "makes more of after the restart, reading state that differs") in said, said


def test_an_epochs_first_samples_read_at_the_next_epochs_first_step_name_that_epoch_again():
    """Trial 747: a position lost at an epoch's end read that epoch again from its
    start, and was told of another epoch's order, set_epoch and a generator first."""
    import types

    from resumecheck.evidence import EPOCH_BEFORE_AGAIN, OTHER_EPOCH, _epoch_before, _in_its_epoch

    reference = types.SimpleNamespace(boundaries={"steps_per_epoch": 5})
    assert _epoch_before(reference, 11, 6)  # (epochs 6-10, 11-15)
    assert not _epoch_before(reference, 11, 1) and not _epoch_before(reference, 12, 7)
    said = _in_its_epoch("; they are ...", "same place", 6, 11, reference)
    assert said == f"; they are ..., the first of the epoch before: {EPOCH_BEFORE_AGAIN}"
    assert EPOCH_BEFORE_AGAIN.startswith("the restart reads the epoch that had just ended again "
                                         "from its start (a position at the epoch's end not kept")
    assert _in_its_epoch("; x", "same place", 7, 12) == f"; x, {OTHER_EPOCH}"


def test_an_epoch_read_again_after_a_restart_inside_it_whose_steps_matched_is_said_of_its_order():
    """Trials 805, 812, 818: resumed at 1, steps 2 to 6 matched and step 7 read
    epoch 1's first samples again; the why led with "a position at the epoch's
    end not kept", which those matching steps rule out (a shuffle generator
    was lost). Resumed at the epoch's end, both stay offered."""
    from resumecheck.evidence import EPOCH_BEFORE_AGAIN, EPOCH_BEFORE_ORDER
    from resumecheck.report import RunResult
    from resumecheck.verdict import place_came_back

    def run(k: int) -> RunResult:
        why = f"data differs from step 7; they are ..., the first of the epoch before: " \
              f"{EPOCH_BEFORE_AGAIN}"
        return RunResult(dropped=[], resume_at=[k], verdict="diverged", first_divergent_step=7,
                         explanation=why, divergence_detail=why)

    inside = run(1)
    place_came_back(inside)
    for text in (inside.explanation, inside.divergence_detail):
        assert EPOCH_BEFORE_ORDER in text and "a position at the epoch's end" not in text
    assert EPOCH_BEFORE_ORDER.startswith("the restart reads the next epoch in the order of the "
                                         "epoch that had just ended")
    at_end = run(6)
    place_came_back(at_end)
    assert EPOCH_BEFORE_AGAIN in at_end.explanation and EPOCH_BEFORE_AGAIN in \
        (at_end.divergence_detail or "")
