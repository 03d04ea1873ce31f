"""A resumed epoch's place applied again at the next epoch's start (trial 876:
a StatefulDataLoader's restored place, held for its next iterator while the loop
read the epoch's rest through skip_first_batches). The why said "the new
epoch's inputs differ, in their order" of an order shifted by the place."""

from __future__ import annotations

from resumecheck import verify


def _check(name: str):
    from fixtures.trust import place_applied_twice
    return verify(getattr(place_applied_twice, name), drop="none", noise_seeds=0,
                  check_determinism=False)


def test_a_new_epoch_that_starts_into_the_same_order_is_said_so():
    own = _check("SKIPS_TWICE").full_resume
    assert own.first_divergent_step == 9, own.explanation
    assert ("; step 9 is the first to read a new epoch, and it starts 1 step into that epoch's "
            "order (step 9 read what the uninterrupted run read at step 10)") in own.explanation
    assert "the new epoch's order differs" not in own.explanation, own.explanation
    assert "the new epoch's order is" not in own.explanation, own.explanation


def test_its_twin_that_clears_the_skip_resumes():
    assert _check("CORRECT").outcome == "EQUIVALENT"
