"""Every declared module is traced step by step, not only the ``params`` model
(fixtures/trust/two_models.py: a GAN whose checkpoint forgets the
discriminator's optimizer)."""

from __future__ import annotations

from resumecheck import verify

SPEC = "fixtures.trust.two_models:"


def test_a_second_models_divergence_is_found_at_its_first_step():
    """A trial: the discriminator's parameters differed from step 9, the report
    said the loss at step 10, with nothing saying the discriminator was not
    traced step by step."""
    report = verify(SPEC + "BUGGY", drop="none", noise_seeds=0)
    own = report.full_resume
    assert own.verdict == "diverged"
    assert own.first_divergent_step == 5  # (resumed at 4; the loss differs from step 6)
    assert own.first_divergent_quantity.startswith("parameter discriminator."), \
        own.first_divergent_quantity
    assert [(f.component, f.status) for f in own.diagnosis] == [("optimizer_d", "confirmed")]
    assert report.untraced == []
    twin = verify(SPEC + "CORRECT", drop="none", noise_seeds=0)
    assert twin.equivalent and twin.full_resume.verdict == "identical"
