"""CI integration: GitHub Actions' job summary.

A front-end helper shared by the CLI (``--step-summary``) and the pytest
plugin (``--resumecheck-step-summary``): GitHub Actions renders the Markdown
appended to the file ``$GITHUB_STEP_SUMMARY`` names on the run's page.
"""

from __future__ import annotations

import os
import sys

__all__ = ["append_step_summary"]


def append_step_summary(markdown: str) -> str | None:
    """Append ``markdown`` to the file $GITHUB_STEP_SUMMARY names; its path, or
    None when the variable is unset (a note on stderr says so)."""
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if not path:
        print("resumecheck: --step-summary: GITHUB_STEP_SUMMARY is not set (not on GitHub "
              "Actions?): nothing appended", file=sys.stderr)
        return None
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(markdown.rstrip("\n") + "\n\n")
    return path
