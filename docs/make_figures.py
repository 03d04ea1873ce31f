"""Draw the figures the README shows: ``python docs/make_figures.py``.

docs/img/divergence.png: a seeded bug (class 3 of the bug list, a GradScaler
re-created after load, in fixtures/bugs/) checked with three ablations. The
full resume diverges at the first step after the restart in the loss scale;
dropping the data cursor leaves the seed-to-seed band; dropping rng stays
inside it (plausible but different); dropping the sampler epoch before the
first epoch boundary changes nothing (a blind spot).

It is the same figure as

    resumecheck run fixtures.bugs.class03_scaler_recreated:BUGGY --resume-at 4 \\
        --drop rng --drop data_cursor --drop sampler_epoch --plot docs/img/divergence.png
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from resumecheck.engine import verify  # noqa: E402
from resumecheck.plot import save_plot  # noqa: E402


def main() -> None:
    report = verify(
        "fixtures.bugs.class03_scaler_recreated:BUGGY", resume_at=[4],
        drop=["rng", "data_cursor", "sampler_epoch"], noise_seeds=2,
    )
    path = save_plot(report, ROOT / "docs" / "img" / "divergence.png")
    print(f"wrote {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
