"""Warm launches: ranks forked by torch's launcher start as new interpreters do.

With warm starts on (the default where ``fork`` exists), a distributed
segment's launcher is forked from the warm server and torch's elastic
launcher forks each rank from it (``start_method="fork"``). A rank that kept
anything of its launcher would weaken exactly what many ranks must show: a
rank that continued the launcher's random stream would share it with its
siblings and hide ranks seeded alike (class 9). So each rank is compared with
the ranks of a cold launch (``RESUMECHECK_WARM=0``: every rank a new
interpreter), which is also the one launch here that takes that path.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from resumecheck import forkserver
from resumecheck.distributed import LAUNCHER_PRELOAD
from resumecheck.segments import SegmentSpec
from resumecheck.transport import child_env

pytestmark = [pytest.mark.distributed, pytest.mark.e2e]

ROOT = Path(__file__).resolve().parent.parent


def _launch_probe(tmp_path: Path, name: str) -> list[dict]:
    """Both ranks' start state, launched as a distributed segment is."""
    # hash seed 1 (not the default 2) and the launchers' preload: the server the
    # engine's reference launches fork from, so a check that ran before shares it
    spec = SegmentSpec(target_spec=None, config={}, start=1, stop=0, workdir=str(tmp_path),
                       name=name, hash_seed=1)
    env = child_env(spec)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    out = tmp_path / f"{name}.rank{{rank}}.json"
    log = tmp_path / f"{name}.launch.log"
    log.touch()
    proc = forkserver.spawn(
        "resumecheck._launch",
        ["2", str(tmp_path / f"{name}.failures.json"), str(tmp_path / f"{name}.logs"),
         "-m", "fixtures.dist.start_state", str(out)],
        env, cwd=str(ROOT), log=str(log), preload=LAUNCHER_PRELOAD)
    assert proc.wait(timeout=300) == 0, log.read_text()
    return [json.loads(Path(str(out).format(rank=r)).read_text()) for r in (0, 1)]


@pytest.mark.skipif(not forkserver.available(), reason="no fork on this platform")
def test_forked_ranks_start_as_new_interpreters_and_each_draws_new_entropy(
        tmp_path, monkeypatch):
    first = _launch_probe(tmp_path, "first")
    second = _launch_probe(tmp_path, "second")
    monkeypatch.setenv("RESUMECHECK_WARM", "0")  # the launcher and each rank a new interpreter
    cold = _launch_probe(tmp_path, "cold")
    for rank in (0, 1):
        new = cold[rank]
        assert new["session_leader"] and new["stdin"] == "/dev/null"  # torch's own launcher
        for warm in (first[rank], second[rank]):
            assert warm["session_leader"]  # killed by its group, apart from the launcher's
            assert warm["stdin"] == "/dev/null"
            assert warm["handlers"] == new["handlers"]  # none of the launcher's handlers
            assert warm["user_modules"] == [] == new["user_modules"]
            assert warm["hash"] == new["hash"]  # the hash seed asked for
            assert (warm["sys_path"], warm["cwd"]) == (new["sys_path"], new["cwd"])
    # every rank of every launch draws its own streams, as new interpreters do:
    # none continues the launcher's (the siblings would share it) or an earlier launch's
    ranks = [*first, *second, *cold]
    for stream in ("torch_initial_seed", "torch_state", "python_random", "numpy_random"):
        assert len({r[stream] for r in ranks}) == len(ranks), stream
    assert len({r["pid"] for r in ranks}) == len(ranks)
