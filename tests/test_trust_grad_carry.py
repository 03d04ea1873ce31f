"""Gradients summed across the program's steps are state no checkpoint holds.

A trial's trainer called ``backward()`` every step and the optimizer every
few, and saved in the middle of a cycle: its resume differed, and the report
said only that something undeclared was lost. The reference now follows the
gradients the parameters hold at each resume point to the optimizer's next
step, and names them where they reach it; gradients emptied on the way (a
``zero_grad()`` before the next ``backward()``, a GAN's critic) are not named
(``resumecheck.grad_carry``, ``fixtures/trust/accumulated_grads.py``)."""

from __future__ import annotations

import torch

from resumecheck import verify
from resumecheck.grad_carry import GradCarry
from resumecheck.program import load_target

SPEC = "fixtures.trust.accumulated_grads:"


def _carried(name: str, at: int, steps: int) -> dict[int, list[str]]:
    """What ``GradCarry`` finds in the fixture's program armed after ``at``."""
    built = load_target(SPEC + name).build({})
    watch = GradCarry(built.components, [at])
    for step in range(1, steps + 1):
        built.step(step)
        watch.arm(step)
    watch.found()
    return watch.carried


def test_gradients_summed_across_the_resume_point_are_named_and_lead_the_why():
    report = verify(SPEC + "MID_CYCLE", drop="none", noise_seeds=0)
    assert report.outcome == "NOT EQUIVALENT"
    [line] = [u for u in report.undeclared if u.startswith("params.*.grad")]
    assert line.startswith(
        "params.*.grad (the gradients 4 parameters held at the end of step 6, a resume point, "
        "which later steps added to and the optimizer's next step used (`params.0.weight`, "
        "`params.0.bias`, `params.2.weight` and 1 more): gradients summed over more than one "
        "step")
    assert "resume where the optimizer has just stepped and emptied them" in line
    own = report.full_resume
    assert own is not None and own.checkpoint == "program"
    # (trial 611: after what qualifies the step, the loss's)
    # (trial 868: a checkpoint that held them, its load emptying them, read "kept where no
    # checkpoint of yours holds it")
    assert ("differs from step 8 (the loss from step 9); not compared, and no state_dict() "
            "holds them (a parameter's .grad): they come back only where your save() writes "
            "them and your load() sets them: `params.*.grad` (see `not compared`)") in \
        own.explanation, own.explanation
    notice = report.incomplete_state_notice()
    assert notice is not None and "`params.*.grad`" in notice


def test_the_same_program_resumed_where_the_optimizer_has_just_stepped_is_told_nothing():
    report = verify(SPEC + "AT_CYCLE_END", drop="none", noise_seeds=0)
    assert report.outcome == "EQUIVALENT"
    assert not any(".grad" in u for u in report.undeclared)


def test_gradients_a_declared_component_returns_and_sets_are_not_named():
    # (the reference does carry them: the engine's own resume shows them restored)
    assert _carried("SAVED", 6, 12) == {6: ["params.0.weight", "params.0.bias",
                                            "params.2.weight", "params.2.bias"]}
    report = verify(SPEC + "SAVED", drop="none", noise_seeds=0)
    assert report.outcome == "EQUIVALENT"
    assert not any(".grad" in u for u in report.undeclared)


def test_a_program_whose_own_checkpoint_keeps_them_undeclared_is_told_its_load_sets_them():
    """Trial 522: a correct twin that saved the gradients and set them in its
    load(), declaring no component of them, read "a restart starts it empty
    ... save them with the checkpoint, set them in load()", which it did."""
    report = verify(SPEC + "SAVED_UNDECLARED", drop="none", noise_seeds=0)
    assert report.equivalent
    [line] = [u for u in report.undeclared if ".grad" in u]
    assert line.endswith("; your own resume, alike at every step, had them as the "
                         "uninterrupted run did: your load() sets them again (declared as a "
                         "component, they would be compared, and the engine's restarts would "
                         "hold them too)"), line
    [lost] = [u for u in verify(SPEC + "MID_CYCLE", drop="none", noise_seeds=0).undeclared
              if ".grad" in u]
    assert "your load() sets them again" not in lost


def test_gradients_emptied_before_the_next_backward_are_not_carried():
    # both hold gradients at the resume point; each empties them before using them
    for name in ("ZEROED_FIRST", "GAN_ORDER"):
        built = load_target(SPEC + name).build({})
        for step in range(1, 5):
            built.step(step)
        assert any(p.grad is not None and bool(p.grad.ne(0).any())
                   for c in built.components if isinstance(c.obj, torch.nn.Module)
                   for p in c.obj.parameters()), name
        assert _carried(name, 4, 8) == {}, name
        report = verify(SPEC + name, drop="none", noise_seeds=0)
        assert report.outcome == "EQUIVALENT", name
        assert not any(".grad" in u for u in report.undeclared), name


def test_the_watch_leaves_no_hook_behind():
    built = load_target(SPEC + "MID_CYCLE").build({})
    watch = GradCarry(built.components, [6])
    for step in range(1, 7):
        built.step(step)
    watch.arm(6)
    params = list(built.program.model.parameters())
    assert all(p._backward_hooks for p in params)
    watch.found()  # (the run ended before the optimizer's step)
    assert not any(p._backward_hooks for p in params)
    assert not built.program.optimizer._optimizer_step_pre_hooks
