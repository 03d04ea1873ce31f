"""A small torchrun harness for distributed programs, without the engine.

Run under ``python -m torch.distributed.run --nproc-per-node N tests/dist_harness.py SPEC``
(tests/test_dist_programs.py runs it as ``-m tests.dist_harness`` under
``resumecheck._launch``, the same launcher API with each rank forked warm).
SPEC is a JSON file: ``{"phase": "reference" | "restart", "targets": [...],
"work": DIR, "drops": {target: [[component, rank], ...]}}``.

* reference: every target is built from its run settings and trains its
  ``steps`` (N); after step K (its first ``resume_at``) it writes its own checkpoint (``program.save``) to
  ``WORK/<target>/ckpt``.
* restart (a new torchrun): every target is built as a restart is (the
  program's defaults unless ``restart_config == "run"``), loads that checkpoint
  through ``program.load`` and trains steps K+1..N; then once more for every
  drop, with that component put back to its freshly built state on that rank
  after the load (``rank`` null: on every rank).

Each rank writes ``WORK/<target>/<variant>.rank<r>.json``: per step its loss
and a digest of the full parameters (the params component's state).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

from resumecheck.compare import digest  # noqa: E402
from resumecheck.components import launch_global_streams, reseed_global_streams  # noqa: E402
from resumecheck.program import load_target  # noqa: E402


def _name(spec: str) -> str:
    return spec.replace(":", "-").replace("/", "_")


def _train(program, steps: range, rank: int, save_at: int | None = None,
           ckpt: str | None = None) -> list[dict]:
    params = program.components()["params"]
    out = []
    for step in steps:
        result = program.train_step()
        loss = getattr(result, "loss", result)
        out.append({"step": step, "loss": float(loss),
                    "params": digest({k: v for k, v in params.state_dict().items()})})
        if step == save_at:
            program.save(ckpt)
    return out


def main() -> None:
    spec = json.loads(Path(sys.argv[1]).read_text())
    dist.init_process_group("gloo")
    torch.set_num_threads(1)
    rank = dist.get_rank()
    work = Path(spec["work"])
    for target_spec in spec["targets"]:
        target = load_target(target_spec)
        n, k = target.steps, target.resume_at[0]
        where = work / _name(target_spec)
        where.mkdir(parents=True, exist_ok=True)
        ckpt = str(where / "ckpt")
        if spec["phase"] == "reference":
            launch_global_streams()
            program = target.build(target.launch_config()).program
            records = _train(program, range(1, n + 1), rank, save_at=k, ckpt=ckpt)
            (where / f"reference.rank{rank}.json").write_text(json.dumps(records))
            continue
        variants = [("full", None, None)] + [
            (f"drop-{c}-{'all' if r is None else r}", c, r)
            for c, r in spec.get("drops", {}).get(target_spec, [])
        ]
        restart_config = target.launch_config() if target.restart_config == "run" else {}
        for i, (variant, component, drop_rank) in enumerate(variants):
            reseed_global_streams(9000 + i)  # as a fresh process: the streams are elsewhere
            program = target.build(restart_config).program
            comp = program.components()[component] if component else None
            fresh = comp.state_dict() if comp is not None else None
            program.load(ckpt)
            if comp is not None and drop_rank in (None, rank):
                comp.load_state_dict(fresh)
            records = _train(program, range(k + 1, n + 1), rank)
            (where / f"{variant}.rank{rank}.json").write_text(json.dumps(records))
            dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
