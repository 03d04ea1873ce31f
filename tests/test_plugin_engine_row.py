"""The plugin's row on why the engine's own full resume departs."""

from __future__ import annotations


def test_an_engine_row_whose_lost_state_is_a_modules_hooks_names_on_load_checkpoint():
    """Trial 595: a LightningModule's on_load_checkpoint() that set nothing back
    read "engine resume: DIVERGED (a load_state_dict() loses state)" in the
    plugin's row (hand-built JSON)."""
    from resumecheck.pytest_plugin import _engine_why

    def run(component: str) -> dict:
        return {"verdict": "diverged", "resume_at": [7], "explanation": "",
                "diagnosis": [{"component": component, "basis": "reference", "step": 7,
                               "detail": "seen 0, expected 7"}]}

    own = {"explanation": ""}
    assert _engine_why(run("hooks"), own) == "its on_load_checkpoint() loses state"
    assert _engine_why(run("ema"), own) == "a load_state_dict() loses state"
