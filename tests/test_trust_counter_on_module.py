"""A counter kept on an ``nn.Module`` that is not declared, while its layers
are (a GAN's networks declared each, the module that holds them and its
generator-step counter not): named as not compared, and where the
program's own checkpoint loses it, said so. A trial's Lightning GAN, wrapped
as the refusal of its two optimizers advised, passed a checkpoint that lost
the counter with no word of it (``undeclared._held``,
``fixtures/trust/counter_on_module.py``)."""

from __future__ import annotations

from resumecheck import verify

SPEC = "fixtures.trust.counter_on_module:"


def test_a_counter_on_an_undeclared_module_is_named_and_its_loss_said():
    lost = verify(SPEC + "FORGETS_COUNT", drop="none", noise_seeds=0)
    assert lost.render().splitlines()[1] == (
        "full resume: EQUIVALENT in what is compared; not compared, and your own resume ends "
        "otherwise with: `gan.d_steps` (see below)")
    [line] = [w for w in lost.undeclared if w.startswith("gan.d_steps ")]
    assert "your own resume (save/load) ends with it otherwise than the uninterrupted run did: " \
        "your checkpoint loses it" in line, line
    assert not verify(SPEC + "FORGETS_COUNT", drop="none", noise_seeds=0,
                      resume_at=[3]).equivalent


def test_its_twin_is_told_only_that_it_is_not_compared():
    kept = verify(SPEC + "CORRECT", drop="none", noise_seeds=0)
    assert kept.equivalent
    [line] = [w for w in kept.undeclared if w.startswith("gan.d_steps ")]
    assert line.endswith("your own resume ends with it as the uninterrupted run did"), line
    # (the sizes its layers keep, which never change, are not named)
    assert not any("in_features" in w for w in kept.undeclared), kept.undeclared
