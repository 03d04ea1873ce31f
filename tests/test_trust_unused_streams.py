"""Streams an RNGState holds but the program never draws from (``RNGState({...})``
and ``RNGState()`` hold Python's random and numpy's global stream by default):
a restart that leaves them elsewhere is no divergence, and never the cause
blamed for another component's loss (a trial's false alarm: a correct script
was NOT EQUIVALENT, and a forgotten scheduler was "not the cause"). Drawn in
no step of the run, they are no latent gap either (trial 170: "latent gap:
rng ... another resume point may show it" on every report of a correct
program, and a LatentGapWarning on every test); drawn before the resume point
only, they are one."""

from __future__ import annotations

import pytest

from resumecheck import verify
from resumecheck.report import DIVERGED

SPEC = "fixtures.trust.unused_streams:"


@pytest.mark.parametrize("isolation", ["inprocess", pytest.param("process", marks=[
    pytest.mark.process, pytest.mark.e2e])])
def test_streams_it_never_draws_from_are_no_divergence_and_no_gap(isolation):
    report = verify(SPEC + "CORRECT", isolation=isolation, noise_seeds=0,
                    drop="none" if isolation == "process" else "rng")
    assert report.outcome == "EQUIVALENT", report.render()
    assert report.full_resume.latent_gaps == [] and report.full_resume.diagnosis == []
    assert "latent" not in report.render()
    if isolation == "inprocess":  # (its batch generator and torch's stream are used)
        [dropped] = [r for r in report.runs if r.dropped == ["rng"]]
        assert dropped.verdict == DIVERGED


@pytest.mark.parametrize("name, component, step", [
    ("FORGETS_SCHEDULER", "scheduler", 8), ("FORGETS_GENERATOR", "rng", 5)])
def test_what_the_load_loses_is_blamed_and_confirmed(name, component, step):
    full = verify(SPEC + name, noise_seeds=0, drop="none").full_resume
    assert full.verdict == DIVERGED and full.first_divergent_step == step
    confirmed = [f.component for f in full.diagnosis if f.status == "confirmed"]
    assert confirmed == [component], [(f.component, f.status) for f in full.diagnosis]
    if component == "scheduler":  # rng differs only in streams no step drew from:
        # not what made the run depart, and nothing the run resumes with
        assert [(f.component, f.status) for f in full.diagnosis] == [("scheduler", "confirmed")]
        assert full.latent_gaps == []
    if component == "rng":  # the lost stream alone: no step drew from the others at all
        # (trial 188: "(and numpy global stream, which ...)" read as part of the bug)
        assert full.diagnosis[0].detail == (
            "generator 'batches' differs from the uninterrupted run's at step 4")
        # (the unused streams, not restored, are elsewhere: no line of their own)
        assert [o.stream for o in full.stream_offsets] == ["generator batches"]


def test_with_two_resume_points_an_unused_stream_is_not_offered_as_a_cause():
    """A trial: with a second restart ending the segment after the first, the
    streams neither run drew from (the diagnosis calls them latent) were still
    offered as a cause ("not within ... words: another seed, a stream not
    restored"): the segment's steps before the divergence show that the run
    did not draw from them."""
    from dataclasses import replace

    from fixtures.trust import unused_streams

    target = replace(unused_streams.FORGETS_SCHEDULER, resume_at=(2, 5), steps=12)
    full = verify(target, noise_seeds=0, drop="none").full_resume
    assert full.first_divergent_step == 7
    assert [(f.component, f.status) for f in full.diagnosis] == [("scheduler", "confirmed")]
    assert full.stream_offsets == []


class _DrawsEarlyOnly:
    """Draws from Python's stream in its first two steps only (a warm-up's
    jitter), and its checkpoint keeps no stream: drawn before the resume
    point and not after, a latent gap (drawn in no step at all, none)."""

    def __init__(self, settings: dict) -> None:
        import random

        from tests import programs

        self.inner = programs.OwnCheckpoint(settings)
        random.seed(settings.get("seed", 0))

    def components(self) -> dict:
        return self.inner.components()

    def train_step(self):
        import random

        if self.inner.step < 2:
            random.random()
        return self.inner.train_step()

    def save(self, path: str) -> None:
        self.inner.save(path)

    def load(self, path: str) -> None:
        self.inner.load(path)


def test_a_stream_drawn_before_the_resume_point_only_is_still_a_latent_gap():
    from resumecheck import Target

    full = verify(Target(factory=_DrawsEarlyOnly, steps=8, resume_at=(4,)), drop="none",
                  noise_seeds=0).full_resume
    assert full.verdict == "identical" and full.latent_gaps == ["rng"], full.explanation
    [finding] = full.diagnosis
    # (numpy's stream, drawn by no step at all, is left out: trial 188)
    assert finding.detail == ("Python random stream differs from the uninterrupted run's at "
                              "step 4, which the uninterrupted run held the same from it to "
                              "its end"), finding.detail
