"""A counter of its own picks which of two optimizers steps (trial 882: a GAN's
two time-scale updates); lost, a restart steps the discriminator where the
generator should. The first divergence read "learning rate of `optimizer_d`:
0.002, expected 0.001" (the generator's rate), told of a scheduler the program
does not have, and said one run's loss did not reach the other's parameters."""

from __future__ import annotations

from resumecheck import verify


def _check(name: str):
    from fixtures.trust import alternating_optimizers
    return verify(getattr(alternating_optimizers, name), drop="none", noise_seeds=0,
                  check_determinism=False)


def test_another_optimizer_stepping_is_said_so():
    own = _check("LOSES_TICK").full_resume
    assert (own.first_divergent_step, own.first_divergent_quantity) == (
        6, "learning rate (another optimizer stepped)"), own.explanation
    detail = own.divergence_detail or ""
    assert detail.startswith(
        "the optimizer that stepped at step 6: this run stepped `optimizer_d` (0.002) where the "
        "uninterrupted run stepped `optimizer` (0.001) (the rates are theirs; what differs is "
        "which stepped"), detail
    assert "expected 0.001" not in detail and "a part of the model one used" not in detail
    assert "(the gradients each run's optimizer stepped: another optimizer stepped in each)" \
        in detail, detail
    assert "a scheduler's step() or code of yours" not in own.explanation, own.explanation


def test_its_twin_that_keeps_the_counter_resumes():
    assert _check("CORRECT").outcome == "EQUIVALENT"
