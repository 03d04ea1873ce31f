"""The component names of a distributed check, known before any step is paid for.

A distributed program builds only inside its ranks (its factory needs the
process group), so a ``drop`` list cannot be checked against what it declares
by building it here. Two cheap checks run before the reference instead:

* the rank suffix, from the names alone: ``rng[rank 5]`` at ``nproc=2`` has
  no rank 5; a per-rank component (``components.PER_RANK``) is dropped for one
  rank at a time (``rng[rank 0]``); a suffix on a component that is not per
  rank, or a malformed one on one that is (``rng[1]``), is a typo;
* the base names, from one build of the program in a fresh interpreter that
  is a world of one rank (gloo, an in-memory store: no launcher, no port) and
  takes no step: its declared names, each per-rank one expanded for the
  ``nproc`` ranks, as the check's merged results will name them.

When that build fails (a program that needs two ranks to build, say), the
names are checked after the reference's first launch, as before: the check
itself reports why the program does not build, if it does not.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence

from resumecheck import forkserver
from resumecheck.components import PER_RANK, rank_name, split_rank_name
from resumecheck.distributed import LAUNCHER_PRELOAD, launch_env
from resumecheck.errors import InvalidArgument
from resumecheck.segments import PHASE_TIMEOUT, SegmentSpec
from resumecheck.settings import DropSpec
from resumecheck.transport import SYS_PATH_ENV

__all__ = ["check_rank_suffixes", "declared_rank_names", "main", "rank_names"]

_ONE_RANK = {"RANK": "0", "WORLD_SIZE": "1", "LOCAL_RANK": "0", "LOCAL_WORLD_SIZE": "1",
             "GROUP_RANK": "0", "GROUP_WORLD_SIZE": "1", "ROLE_RANK": "0",
             "ROLE_WORLD_SIZE": "1"}
"""What a world of one rank sees (a user's torchrun environment is replaced)."""


def rank_names(declared: Sequence[str], nproc: int) -> list[str]:
    """The names a check at ``nproc`` ranks gives the declared components:
    ``rng[rank 0]`` .. ``rng[rank N-1]`` for a per-rank one, the name for the rest."""
    out: list[str] = []
    for name in declared:
        out += [rank_name(name, r) for r in range(nproc)] if name in PER_RANK else [name]
    return out


def check_rank_suffixes(drop: DropSpec, nproc: int) -> None:
    """Refuse, from the names alone, a rank suffix that no check at ``nproc``
    ranks can have (``InvalidArgument`` naming the name and what to type)."""
    if isinstance(drop, str):
        drop = [drop] if drop not in ("all", "none") else []
    for item in drop:
        for name in [item] if isinstance(item, str) else item:
            _check_one(name, nproc)


def _check_one(name: str, nproc: int) -> None:
    base, rank = split_rank_name(name)
    ranks = f"0..{nproc - 1}" if nproc > 1 else "0"
    if rank is None and "[" in name and name.split("[", 1)[0] in PER_RANK:
        raise InvalidArgument("drop", name, f"not a component name: a rank is written "
                              f"NAME[rank R] with R in {ranks} (e.g. "
                              f"{rank_name(base.split('[', 1)[0], 0)!r})")
    if rank is None and name in PER_RANK:
        each = ", ".join(repr(rank_name(name, r)) for r in range(nproc))
        raise InvalidArgument("drop", name, f"{name!r} is held per rank at nproc={nproc}: "
                              f"drop it for one rank at a time: {each}")
    if rank is None:
        return
    if base not in PER_RANK:
        raise InvalidArgument("drop", name, f"{base!r} is not held per rank (only "
                              f"{', '.join(sorted(PER_RANK))} are): drop {base!r}, "
                              "without a rank")
    if rank >= nproc:
        raise InvalidArgument("drop", name, f"there is no rank {rank} at nproc={nproc} (ranks "
                              f"{ranks}): drop {rank_name(base, min(rank, nproc - 1))!r}, "
                              f"or run with --nproc {rank + 1}")


def declared_rank_names(target_spec: str, config: dict, nproc: int, threads: int = 1,
                        timeout: float = PHASE_TIMEOUT) -> list[str] | None:
    """The names a check at ``nproc`` ranks will give the program's components,
    from one build in a fresh (warm-forked) interpreter as a world of one rank (no step).
    None: that build did not succeed (it is left to the check to say why)."""
    env = launch_env(SegmentSpec(target_spec=target_spec, config={}, start=0, stop=0,
                                 workdir="", name="names", threads=threads))
    env.update(_ONE_RANK)
    # forked from the launchers' warm server (torch's distributed modules loaded),
    # a fresh interpreter where warm starts are off
    try:
        proc = forkserver.spawn("resumecheck.dist_names", [target_spec, json.dumps(config)],
                                env, preload=LAUNCHER_PRELOAD)
    except OSError:
        return None
    try:
        stdout, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return None
    if proc.returncode != 0:
        return None
    try:
        declared = json.loads(stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None
    return rank_names(declared, nproc)


def main(argv: Sequence[str]) -> int:
    """In the fresh interpreter: build TARGET with CONFIG (JSON) as the one rank
    of a gloo world and print its declared names as JSON (exit 1 when it fails)."""
    for entry in os.environ.get(SYS_PATH_ENV, "").split(os.pathsep):
        if entry and entry not in sys.path:
            sys.path.append(entry)
    import torch.distributed as dist

    from resumecheck.program import declared_names, load_target

    spec, config = argv[0], json.loads(argv[1])
    try:
        dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
        names = declared_names(load_target(spec), config)
    except Exception as exc:  # the check's own launch says why, with the rank's error
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()
    print(json.dumps(list(names)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
