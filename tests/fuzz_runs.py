"""Fuzzing sessions that several tests read, each made once per process.

A session is seconds of search; tests that assert different parts of the same
search (what it found and how it shrank, that its printed command reproduces
it, the figure of it) read one session instead of searching again. The
results are only read.
"""

from __future__ import annotations

import functools
import json
import shlex
from typing import Any

from resumecheck.cli import main
from resumecheck.fuzz import FuzzResult, fuzz

C14 = "fixtures.bugs.class14_epoch_boundary:BUGGY_DEFAULT_K"
C15 = "fixtures.bugs.class15_second_resume_stale_cursor:BUGGY_DEFAULT_K"


@functools.cache
def default_fuzz(spec: str) -> FuzzResult:
    """``fuzz(spec)`` with the default budget (max_examples, budget, seed)."""
    return fuzz(spec)


def run_printed(command: str, capsys: Any) -> tuple[int, dict[str, Any]]:
    """Run a printed `resumecheck run ...` command through the CLI: its exit
    status and JSON report."""
    capsys.readouterr()
    argv = shlex.split(command)
    assert argv[:2] == ["resumecheck", "run"]
    code = main([*argv[1:], "--noise-seeds", "0", "--format", "json"])
    return code, json.loads(capsys.readouterr().out)
