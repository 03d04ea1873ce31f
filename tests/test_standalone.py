"""The project stands alone: nothing it ships cites a file outside the repository."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# A path that climbs out of the checkout, or the names of notes that live outside it.
_OUTSIDE = re.compile(r"\.\./shared|(?<![\w-])shared/(PITFALLS|BUG-CLASSES|STYLE)|\bPITFALLS\b")


def _tracked_text_files() -> list[Path]:
    try:
        out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):  # a source tree without git
        out = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*") if p.is_file()]
    return [ROOT / p for p in out if p.endswith((".py", ".md", ".toml", ".ini", ".txt", ".cfg"))
            and ".venv" not in p]


def test_no_file_cites_anything_outside_the_repository():
    offenders = []
    for path in _tracked_text_files():
        if path == Path(__file__).resolve():
            continue
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if _OUTSIDE.search(line):
                offenders.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not offenders, "cites files outside the repository:\n" + "\n".join(offenders)


def test_the_pages_the_code_refers_to_exist():
    for page in ("docs/BUG-CLASSES.md", "docs/HONEST-CHECKS.md", "docs/ARCHITECTURE.md"):
        assert (ROOT / page).is_file(), page
