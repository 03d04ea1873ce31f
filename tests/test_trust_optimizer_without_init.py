"""An optimizer of the program's own class that subclasses torch's Optimizer
without calling its ``__init__`` is refused with what to change (trial 860: the
check said its own tracing had failed, "report it to resumecheck's maintainers")."""

from __future__ import annotations

from resumecheck.cli import main


def test_an_optimizer_that_skips_optimizer_init_is_refused_with_the_fix(capsys):
    assert main(["run", "fixtures/trust/optimizer_without_init.py:TARGET"]) == 2
    err = capsys.readouterr().err
    assert ("its optimizer (Lookahead) subclasses torch.optim.Optimizer but its __init__ does "
            "not call Optimizer.__init__") in err, err
    assert "Call super().__init__(params, defaults) in Lookahead.__init__" in err, err
    assert "maintainers" not in err and "Traceback" not in err, err
