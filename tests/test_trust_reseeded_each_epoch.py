"""A generator the program seeds anew as each epoch starts, which its
checkpoint does not keep: put back at an epoch's end, and the note says where
the loss shows (fixtures/trust/reseeded_each_epoch.py; trial 656)."""

from __future__ import annotations

from resumecheck import verify
from resumecheck.report import DIVERGED, PUT_BACK

SPEC = "fixtures.trust.reseeded_each_epoch:"
FAST = {"noise_seeds": 0, "drop": "none", "check_determinism": False}


def test_put_back_at_an_epochs_end_says_a_restart_inside_an_epoch_shows_it():
    report = verify(SPEC + "AT_EPOCH_END", **FAST)
    [finding] = report.full_resume.diagnosis
    assert (finding.component, finding.status) == ("rng", PUT_BACK)
    assert finding.detail.endswith(
        "which the program set right itself during step 5; at an epoch's end: if your program "
        "seeds it anew as each epoch starts, that puts it back whatever its checkpoint held, "
        "and a restart inside an epoch (--resume-at 5) shows whether the checkpoint holds "
        "it"), finding.detail


def test_a_restart_inside_the_epoch_shows_the_checkpoint_loses_it():
    own = verify(SPEC + "INSIDE", **FAST).full_resume
    assert (own.verdict, own.first_divergent_step) == (DIVERGED, 7), own.explanation
    assert [(f.component, f.status) for f in own.diagnosis] == [("rng", "confirmed")]
