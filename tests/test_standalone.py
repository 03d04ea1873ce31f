"""The project stands alone: nothing it ships cites a file outside the repository."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# A path that climbs out of the checkout, or the names of notes that live outside it.
_OUTSIDE = re.compile(r"\.\./shared|(?<![\w-])shared/(PITFALLS|BUG-CLASSES|STYLE)|\bPITFALLS\b")
# A page named the project's way (``docs/REPORT.md``, ``README.md``): it must be in the repository.
_PAGE = re.compile(r"(?<![\w./-])((?:[\w.-]+/)*[A-Z][A-Z0-9_-]*\.md)\b")


def _tracked_text_files() -> list[Path]:
    try:
        out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):  # a source tree without git
        out = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*") if p.is_file()]
    return [ROOT / p for p in out if p.endswith((".py", ".md", ".toml", ".ini", ".txt", ".cfg"))
            and ".venv" not in p]


def _cites_outside(line: str, here: Path = ROOT) -> bool:
    """The line names a file outside the repository: a path out of it, or a
    page (``NAME.md``) that is neither at the root, nor beside ``here``, nor under docs/."""
    if _OUTSIDE.search(line):
        return True
    return any(not any((base / page).is_file() for base in (ROOT, here, ROOT / "docs"))
               for page in _PAGE.findall(line))


def test_no_file_cites_anything_outside_the_repository():
    """Every line counts: code, comments, docstrings, docs and the README."""
    offenders = []
    for path in _tracked_text_files():
        if path == Path(__file__).resolve():
            continue
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if _cites_outside(line, path.parent):
                offenders.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not offenders, "cites files outside the repository:\n" + "\n".join(offenders)


def test_the_check_sees_comments_and_pages_that_are_not_here():
    assert _cites_outside("    x = 1  # the rule is in ../shared/PITFALLS.md")
    assert _cites_outside('"""Type-checks cleanly (STYLE.md)."""')
    assert _cites_outside("# see NOTES.md for why")
    assert not _cites_outside("# see docs/HONEST-CHECKS.md for why")
    assert not _cites_outside("write the summary to report.md")


def test_the_pages_the_code_refers_to_exist():
    for page in ("docs/BUG-CLASSES.md", "docs/HONEST-CHECKS.md", "docs/ARCHITECTURE.md"):
        assert (ROOT / page).is_file(), page
