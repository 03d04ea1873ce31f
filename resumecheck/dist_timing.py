"""``resumecheck timing --nproc N``: where a step's time goes on every rank.

The program runs on N ranks launched through ``torch.distributed.run``; each
rank times its own steps with ``timing.measure`` (its phases, the engine's
checkpoint, and a barrier after every step: the time a rank idles there is
what it waits for the slowest rank). The report holds every rank's figures and
shows, per phase, the smallest and largest over the ranks.

The rank side is ``python -m resumecheck.dist_timing SPEC.json`` under the
launcher.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from resumecheck.dist_baseline import LAUNCH_TIMEOUT, launch, run_rank
from resumecheck.interrupt import scratch_directory
from resumecheck.errors import InvalidArgument, TargetError

__all__ = ["measure_ranks", "rank_main"]


def measure_ranks(target_spec: str, *, nproc: int, steps: int, warmup: int,
                  checkpoint_every: int, seed: int | None, threads: int,
                  config: dict[str, Any], timeout: float | None = None) -> Any:
    """Time ``target_spec`` on ``nproc`` ranks: a ``TimingReport`` with one entry per rank."""
    from resumecheck.environment import fingerprint
    from resumecheck.timing import TimingReport

    if not isinstance(nproc, int) or isinstance(nproc, bool) or nproc < 1:
        raise InvalidArgument("nproc", nproc, "expected an int >= 1")
    spec = {"target": target_spec, "config": config, "seed": seed, "steps": steps,
            "warmup": warmup, "checkpoint_every": checkpoint_every, "threads": threads}
    with scratch_directory("resumecheck-dist-timing-") as tmp:
        ranks, failed = launch(nproc, "resumecheck.dist_timing", spec, Path(tmp), "timing",
                               timeout or LAUNCH_TIMEOUT)
    if failed is not None:
        raise TargetError(target_spec, failed, "Fix the program so that it trains on "
                          f"{nproc} ranks (try `resumecheck baseline {target_spec} --nproc "
                          f"{nproc}`)")
    rows = sorted((r["summary"] for r in ranks), key=lambda row: row["rank"])
    return TimingReport(target=target_spec, steps=steps, warmup=warmup,
                        checkpoint_every=checkpoint_every, ranks=rows,
                        environment=fingerprint(threads),
                        checkpoint=ranks[0].get("checkpoint", "engine"),
                        save_untimed=bool(ranks[0].get("save_untimed")))


def _rank(spec: dict[str, Any]) -> dict[str, Any]:
    from resumecheck.program import load_target
    from resumecheck.timing import measure

    report = measure(load_target(spec["target"]), steps=spec["steps"], warmup=spec["warmup"],
                     checkpoint_every=spec["checkpoint_every"], seed=spec["seed"],
                     threads=spec["threads"])
    return {"summary": report.ranks[0], "checkpoint": report.checkpoint,
            "save_untimed": report.save_untimed}


def rank_main(spec_path: str) -> int:
    """One rank of ``timing --nproc``."""
    return run_rank(spec_path, _rank)


if __name__ == "__main__":
    sys.exit(rank_main(sys.argv[1]))
