"""``fuzz --strict``: where no schedule fails, what fails ``run --strict`` at the
default resume point fails fuzz too (trials 646, 661, 668: an early stopper's
lost counters, named in `not compared` lines alone, exited 0, and fuzz had no
``--strict``)."""

from __future__ import annotations

import argparse
import shlex

from resumecheck.cli import main

from tests.test_trial_findings import _BestLossLostAndBeaten

LOST = "fixtures.trust.lost_caches:TUPLES"
SEARCH = ["--max-examples", "3"]


def test_fuzz_strict_fails_where_the_own_resume_ends_otherwise_and_says_how_to_see_it(capsys):
    assert main(["fuzz", LOST, *SEARCH]) == 0
    capsys.readouterr()
    assert main(["fuzz", LOST, *SEARCH, "--strict"]) == 1
    err = capsys.readouterr().err
    assert ("--strict: your own resume ends otherwise with matrices[...] (4 entries), "
            "samples[...] (4 entries), which no declared component's state holds: exit 1") in err
    command = err.rstrip().rsplit("; reproduce: ", 1)[1]
    assert command.startswith(f"resumecheck run {LOST} --steps 8 --resume-at 4 --drop none"), err
    assert main(shlex.split(command)[1:]) == 1  # (it shows the same again)
    assert "ends otherwise with matrices[...]" in capsys.readouterr().err
    assert main(["fuzz", "fixtures.trust.deque_maxlen:CORRECT", *SEARCH, "--strict"]) == 0
    assert "--strict" not in capsys.readouterr().err


def test_fuzz_strict_fails_a_latent_gap_and_cannot_pass_what_it_did_not_look_at(capsys):
    from resumecheck import Target
    from resumecheck.cli import _strict_fuzz
    from resumecheck.fuzz import fuzz

    found = fuzz(Target(factory=_BestLossLostAndBeaten, steps=6, resume_at=(3,)),
                 max_examples=3)
    strict = argparse.Namespace(strict=True)
    assert _strict_fuzz(argparse.Namespace(strict=False), found) is None
    assert _strict_fuzz(strict, found) == 1
    err = capsys.readouterr().err
    assert "--strict: latent gap at the default resume point: best: exit 1" in err
    assert "reproduce" not in err  # (an in-memory target: no command names it)
    found.undeclared = None  # (the time budget ran out before the look)
    assert _strict_fuzz(strict, found) == 5
    assert "was not looked at" in capsys.readouterr().err
