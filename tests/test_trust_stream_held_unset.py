"""A helper object that keeps torch's stream in the checkpoint, whose load
the program never runs (trial 856: a Lightning module's on_save_checkpoint
wrote the stream and no on_load_checkpoint read it back). Putting that
component right sets the stream, and the check's rerun must keep what it
set: the rerun undid it, so the one component at fault read "which a rerun
cannot confirm" and "put right alone, the run departs no later"."""

from __future__ import annotations

from resumecheck import verify


def _check(name: str):
    from fixtures.trust import held_unset
    return verify(getattr(held_unset, name), drop="none", noise_seeds=0,
                  check_determinism=False)


def test_the_component_whose_load_sets_the_stream_is_confirmed_by_its_rerun():
    own = _check("NEVER_SET").full_resume
    assert (own.verdict, own.first_divergent_step) == ("diverged", 5), own.explanation
    (finding,) = own.diagnosis
    assert (finding.component, finding.status) == ("extras", "confirmed"), finding.detail
    assert finding.detail.startswith("torch_rng differs (a torch generator's state"), \
        finding.detail
    assert "cannot confirm" not in own.explanation, own.explanation


def test_beside_the_stream_declared_as_rng_both_are_confirmed():
    own = _check("DECLARED").full_resume
    assert {f.component: f.status for f in own.diagnosis} == {
        "extras": "confirmed", "rng": "confirmed"}, own.explanation


def test_its_twin_that_loads_the_stream_resumes():
    assert _check("CORRECT").outcome == "EQUIVALENT"
