"""The tracer sees gradients as the optimizer does and records skipped fp16 steps."""

import torch

from resumecheck.program import BuiltProgram
from resumecheck.tiny import build
from resumecheck.trace import Tracer, hooks_hidden, load_step_tensors


def test_skipped_steps_and_unscaled_gradients(tmp_path):
    built = BuiltProgram.wrap("tiny", build({"label_smoothing": 0.1}))
    program = built.program
    tracer = Tracer(built, tmp_path)
    seen = []
    for step in range(1, 9):
        tracer.before_step()
        scale_before = program.scaler.get_scale()
        record = tracer.after_step(step, built.step(step), keep_tensors=True)
        seen.append((record, scale_before, program.scaler.get_scale()))
    tracer.close()
    skipped = [r for r, before, after in seen if r.skipped]
    assert skipped, "the tiny program's scale must overflow within 8 steps"
    for record, before, after in seen:
        assert record.scale == before
        # a skipped step backs the scale off; a taken one never does
        assert (after < before) == record.skipped
        assert (record.lr is None) == record.skipped
    taken = next(r for r, _, _ in seen if not r.skipped)
    tensors = load_step_tensors(tmp_path, taken.step)
    assert tensors is not None
    grad = tensors["grad:fc1.weight"]
    # unscaled: magnitudes of a real gradient, not multiplied by a 2**17 scale
    assert 0 < grad.abs().max().item() < 100
    assert {"loss", "data", "scale", "lr", "param:fc1.weight"} <= set(tensors)


def test_a_skipped_step_is_named_after_the_loss_and_gradients_that_decide_it():
    """A trial: with dropout drawn from other streams, 'skipped step' was named
    as the first divergence of a step whose loss already differed; the
    scaler skips a step because of its gradients, so it comes after them."""
    from resumecheck.trace import StepRecord, first_difference

    ref = StepRecord(step=6, loss=1.3555, digests={
        "scale": "a", "lr": "b", "loss": "c", "grad:w": "d", "skipped": "False", "param:w": "e"})
    run = StepRecord(step=6, loss=1.3774, digests={
        "scale": "a", "lr": "b", "loss": "C", "grad:w": "D", "skipped": "True", "param:w": "e"})
    assert first_difference([ref], [run]) == (6, "loss")
    only_skip = StepRecord(step=6, loss=1.3555, digests={**ref.digests, "skipped": "True"})
    assert first_difference([ref], [only_skip]) == (6, "skipped")


def test_a_skipped_steps_missing_learning_rate_is_not_a_learning_rate_that_differs():
    """The re-check of that trial: the skipped step's optimizer read no learning
    rate, and 'learning rate' was named instead of the loss."""
    from resumecheck.trace import StepRecord, first_difference

    ref = StepRecord(step=6, loss=1.3555, digests={
        "scale": "a", "lr": "b", "loss": "c", "grad:w": "d", "skipped": "False", "param:w": "e"})
    run = StepRecord(step=6, loss=1.3774, skipped=True, digests={
        "scale": "a", "loss": "C", "grad:w": "D", "skipped": "True", "param:w": "e"})
    assert first_difference([ref], [run]) == (6, "loss")
    both = StepRecord(step=6, loss=1.3555, skipped=True, digests={
        k: v for k, v in ref.digests.items() if k != "lr"} | {"skipped": "True"})
    assert first_difference([ref], [both]) == (6, "skipped")


def test_a_loss_returned_as_a_python_float_is_kept_as_the_float64_it_is(tmp_path):
    """A trial: the trajectory's losses were the program's, rounded to float32
    (a sum of micro-batches' `loss.item()` is a Python float)."""
    from resumecheck.program import StepOutput

    built = BuiltProgram.wrap("tiny", build({}))
    tracer = Tracer(built, tmp_path)
    tracer.before_step()
    built.step(1)
    loss = 0.1 + 2 ** -40  # (not a float32)
    record = tracer.after_step(1, StepOutput(loss=loss), keep_tensors=True)
    tracer.close()
    assert record.loss == loss
    assert load_step_tensors(tmp_path, 1)["loss"].dtype == torch.float64


def test_a_save_that_pickles_the_whole_model_and_optimizer_passes_without_the_checks_hooks():
    """A trial: a notebook's correct `torch.save(model)` raised "cannot pickle
    'weakref.ReferenceType' object" on the check's forward pre-hook, and the
    check failed the program, blaming its save. The hooks are off while the
    program saves, in no saved file, and back in their order after."""
    import resumecheck
    from fixtures.trust import whole_model_saved

    whole_model_saved.HOOKS_LOADED.clear()
    report = resumecheck.verify("fixtures.trust.whole_model_saved:TARGET", drop="none",
                                noise_seeds=0, check_determinism=False)
    assert report.equivalent, report.render()
    assert whole_model_saved.HOOKS_LOADED and set(whole_model_saved.HOOKS_LOADED) == {0}

    model = torch.nn.Linear(2, 2)
    first = model.register_forward_pre_hook(lambda *args: None)
    built = BuiltProgram.wrap("one", _OneModel(model))
    tracer = Tracer(built, None)
    last = model.register_forward_pre_hook(lambda *args: None)
    order = list(model._forward_pre_hooks)
    with hooks_hidden(tracer):
        assert list(model._forward_pre_hooks) == [first.id, last.id]
    assert list(model._forward_pre_hooks) == order  # (the check's in its place again)
    tracer.close()


class _OneModel:
    def __init__(self, model: torch.nn.Module) -> None:
        self.model = model
        self.opt = torch.optim.SGD(model.parameters(), lr=0.1)

    def components(self) -> dict:
        return {"params": self.model, "optimizer": self.opt}

    def train_step(self):
        return None


def test_a_model_the_program_makes_anew_is_traced_where_it_is_now():
    """A trial: a correct k-fold trainer that makes a new model each fold, given
    a `model` attribute as the report advised, was failed: the uninterrupted
    run traced the first fold's model throughout, the restart the fold it
    resumed in ("gradient of ?"). Its twin, whose load loses the momentum,
    is blamed on the optimizer."""
    import resumecheck

    spec = "fixtures.trust.model_made_anew:"
    report = resumecheck.verify(spec + "TARGET", drop="none", noise_seeds=0)
    assert report.equivalent and report.engine_resume.verdict == "identical", report.render()
    own = resumecheck.verify(spec + "BUGGY", drop="none", noise_seeds=0).full_resume
    assert own.verdict == "diverged" and own.first_divergent_step == 7
    assert [(f.component, f.status) for f in own.diagnosis] == [("optimizer", "confirmed")]
    # (and where a fold's objects are fresh at the resume point, its scheduler, which a
    # component returns, is not said held by none: a trial's `Through` was)
    fresh = resumecheck.verify(spec + "AT_A_FOLDS_START", drop="none", noise_seeds=0)
    [line] = [u for u in fresh.undeclared if u.startswith("state.scheduler ")]
    assert line.startswith("state.scheduler (a MultiStepLR whose counts the run changed; "
                           "whether a declared component's state_dict() returns it cannot be "
                           "seen at a resume point where it is as a fresh build holds it;"), line
