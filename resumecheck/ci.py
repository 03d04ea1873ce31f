"""CI integration: GitHub Actions' job summary.

A front-end helper shared by the CLI (``--step-summary``) and the pytest
plugin (``--resumecheck-step-summary``): GitHub Actions renders the Markdown
appended to the file ``$GITHUB_STEP_SUMMARY`` names on the run's page.
"""

from __future__ import annotations

import os
import stat

__all__ = ["append_step_summary", "step_summary_problem"]


def step_summary_problem() -> str | None:
    """Before any work: why the file $GITHUB_STEP_SUMMARY names cannot take the
    summary (a directory, a missing directory, a parent that is a file), in
    words; None: it can, or the variable is unset (said when appending)."""
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if not path:
        return None
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        parent = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(parent):
            return (f"GITHUB_STEP_SUMMARY={path}: the directory {parent} does not exist"
                    if not os.path.exists(parent) else
                    f"GITHUB_STEP_SUMMARY={path}: {parent} is not a directory")
        return None
    except OSError as exc:
        return f"GITHUB_STEP_SUMMARY={path}: {exc.strerror or exc}"
    if stat.S_ISDIR(mode):
        return f"GITHUB_STEP_SUMMARY={path} is a directory, not a file to append to"
    return None


def append_step_summary(markdown: str, option: str = "--step-summary") -> str | None:
    """Append ``markdown`` to the file $GITHUB_STEP_SUMMARY names. Returns None
    when appended, else why not, in words that begin with ``option`` (the
    variable is unset, the file cannot be written): the caller says it, and
    the verdict, the report and the exit status stand."""
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if not path:
        return (f"{option}: GITHUB_STEP_SUMMARY is not set (not on GitHub Actions?): "
                "nothing appended")
    try:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(markdown.rstrip("\n") + "\n\n")
    except OSError as exc:
        return (f"{option}: cannot append to GITHUB_STEP_SUMMARY={path}: "
                f"{exc.strerror or exc}; the job summary was not written (the result "
                "above stands)")
    return None
