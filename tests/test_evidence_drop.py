"""Issue 13 §7: a typo in --drop / drop= is reported before any run."""

import pytest
import torch

from resumecheck import Target, UnknownComponent, verify
from resumecheck.cli import main

STEPS_RUN = []


class _MustNotTrain:
    """Declares its components; any step taken is recorded (and a test fails)."""

    def __init__(self, config):
        self.model = torch.nn.Linear(2, 1)

    def components(self):
        return {"params": self.model}

    def train_step(self):
        STEPS_RUN.append(1)
        return self.model(torch.ones(1, 2)).sum()


TARGET = Target(factory=_MustNotTrain, steps=4, resume_at=(2,),
                spec="tests.test_evidence_drop:TARGET")


@pytest.mark.parametrize("drop", [["parms"], "parms", [["params", "rngg"]]])
def test_unknown_drop_raises_before_the_reference_runs(drop):
    STEPS_RUN.clear()
    state = torch.get_rng_state()
    with pytest.raises(UnknownComponent) as info:
        verify(TARGET, drop=drop, noise_seeds=0)
    assert info.value.known == ("params",)
    assert STEPS_RUN == []
    assert torch.equal(torch.get_rng_state(), state)  # the one build gave the streams back


def test_cli_typo_exits_2_without_a_run(capsys):
    STEPS_RUN.clear()
    assert main(["run", "tests.test_evidence_drop:TARGET", "--drop", "parms"]) == 2
    err = capsys.readouterr().err
    assert ("unknown component 'parms' (did you mean 'params'?); this program declares: params"
            in err)
    assert STEPS_RUN == []
