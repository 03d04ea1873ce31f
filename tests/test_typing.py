"""The package type-checks cleanly, with the pinned mypy of the test extras."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.e2e
def test_mypy_is_clean():
    if shutil.which("mypy") is None and subprocess.run(
        [sys.executable, "-c", "import mypy"], capture_output=True
    ).returncode:
        pytest.fail("mypy is not installed: install the test extras (pip install -e '.[test]')")
    # Incremental: mypy's own cache (.mypy_cache, not committed) rechecks only
    # what changed since the last run; a fresh checkout pays the full check once.
    result = subprocess.run(
        [sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
