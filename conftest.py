"""Root conftest: the seeded-bug fixtures and examples import from the repository."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import torch
from hypothesis import settings

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

# Bitwise reproducibility holds only at a fixed thread count.
torch.set_num_threads(1)

settings.register_profile("dev", max_examples=20, deadline=None)
if not os.environ.get("CI"):
    settings.load_profile("dev")
