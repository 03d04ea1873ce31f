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


def test_a_passing_rows_line_on_a_later_epoch_keeps_what_the_framework_is_known_to_do_there():
    """Trial 827: the row of a Trainer whose group_by_length sampler reads other
    samples at every resume inside a later epoch read as a neutral gap: the
    clause `run` gives on it was cut off."""
    from resumecheck.pytest_plugin import _unchecked_cells

    known = ("the Trainer's LengthGroupedSampler (group_by_length) draws each epoch's order "
             "from torch's global stream before the framework's restore brings that stream "
             "back, so a resume there reads other samples")
    line = ("a restart inside an epoch after the first (every resume point here is inside the "
            "first epoch, which ends after step 6): --resume-at 7 checks one, resumecheck fuzz "
            f"tries them all; there {known}")
    [cell] = _unchecked_cells({"not_checked": [line], "resume_at": [4]})
    assert cell == ("not checked: a restart inside an epoch after the first (resume_at=[4, 7], "
                    "adding 7, in the test's mark.resumecheck or its call, checks one); there "
                    + known), cell
    [plain] = _unchecked_cells({"not_checked": [line.split("; there ")[0]], "resume_at": [4]})
    assert plain.endswith("resume_at=[4, 7], adding 7, in the test's mark.resumecheck or its "
                          "call, checks one)"), plain


def test_an_engine_resume_that_departs_with_every_component_back_offers_a_restore_short_of_it():
    """Trial 831: a position's load_state_dict() skipped its epoch's read batches
    without reading them (the loader's workers then drew afresh); the row read
    "declared state incomplete" alone, which the WARNING offers beside it."""
    from resumecheck.phrases import NOT_WHAT_IT_MAKES
    from resumecheck.pytest_plugin import _engine_why

    run = {"verdict": "diverged", "resume_at": [7], "diagnosis": [], "first_divergent_step": 8,
           "first_divergent_quantity": "loss", "explanation": "loss differs from step 8",
           "stream_offsets": []}
    why = _engine_why(run, {"explanation": "resumes bit for bit"})
    assert why == f"declared state incomplete, or {NOT_WHAT_IT_MAKES}", why
    assert NOT_WHAT_IT_MAKES == ("a load_state_dict() that brings back state but not what it "
                                 "makes")


def test_a_confirmed_optimizer_whose_rate_alone_differs_is_named_by_its_rate():
    """Trial 837: a scheduler made in the load after the optimizer's state set its
    rate; the row read "confirmed: optimizer", and the user looked at how the
    optimizer is saved."""
    from resumecheck.pytest_plugin import _confirmed_text
    from resumecheck.state_diff import LEARNING_RATE_ONLY

    rate = {"component": "optimizer", "status": "confirmed",
            "detail": f"param_groups[0].lr 0.0003, expected 0.003{LEARNING_RATE_ONLY}"}
    assert _confirmed_text({"diagnosis": [rate]}) == (
        " (confirmed: optimizer's learning rate, which a scheduler sets)")
    moments = {**rate, "detail": "state.0.exp_avg differs"}
    assert _confirmed_text({"diagnosis": [moments]}) == " (confirmed: optimizer)"
    # (trial 841: a OneCycleLR made after the load reset the rate and the betas too)
    from resumecheck.state_diff import MOMENTUM_TOO
    cycled = {**rate, "detail": f"param_groups[0].lr 0.00012, expected 0.0025{MOMENTUM_TOO}"}
    assert _confirmed_text({"diagnosis": [cycled]}) == (
        " (confirmed: optimizer's learning rate and momentum, which a scheduler sets)")
