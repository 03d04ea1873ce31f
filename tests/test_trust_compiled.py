"""Trial 145: a model trained through torch.compile, checked in-process.

torch.compile traces the check's forward pre-hook with the model's forward;
the hook called a cached function, and torch warned, on every compiled run,
of "silent incorrectness" with a line of resumecheck's own code."""

from __future__ import annotations

import torch

from resumecheck import verify


def test_a_compiled_models_inputs_are_read_without_torch_warning_of_the_checks_own_code(
        monkeypatch):
    import torch._dynamo.utils

    warned: list[str] = []
    monkeypatch.setattr(torch._dynamo.utils, "warn_once",
                        lambda message, *args, **kwargs: warned.append(str(message)))
    report = verify("fixtures.trust.compiled:CORRECT", drop="none", noise_seeds=0)
    assert report.equivalent, report.render()
    # the inputs, read through the hook: a restart that draws others shows them first
    lost = verify("fixtures.trust.compiled:NO_STREAMS", noise_seeds=0)
    assert lost.full_resume.first_divergent_quantity == "data (the model's inputs)"
    assert [m for m in warned if "trace.py" in m or "resumecheck" in m] == []
    torch._dynamo.reset()
