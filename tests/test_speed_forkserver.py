"""One warm server forks several segments side by side, each a fresh start.

A server per hash seed serves every segment that asks for it, at once when
the check runs them side by side (``jobs``): the two children below finish
only if they run at the same time, and neither sees the other's module state
or shares its random stream.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from resumecheck import forkserver, forkshare

pytestmark = [pytest.mark.e2e, pytest.mark.process,
              pytest.mark.skipif(not forkserver.available(), reason="no fork on this platform")]

ROOT = Path(__file__).resolve().parent.parent


def _env() -> dict[str, str]:
    """The environment of segments that ask for no hash seed: served by the
    server every process-mode check of this worker uses (started once)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONHASHSEED"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    return env


def test_one_server_runs_segments_side_by_side_each_fresh(tmp_path):
    env = _env()
    first = forkserver.spawn("fixtures.warm.rendezvous", [str(tmp_path), "a", "b"], env,
                             cwd=str(ROOT), output_dir=str(tmp_path))
    second = forkserver.spawn("fixtures.warm.rendezvous", [str(tmp_path), "b", "a"], env,
                              cwd=str(ROOT), output_dir=str(tmp_path))
    assert first.pid != second.pid
    for child in (first, second):
        _, err = child.communicate(timeout=120)
        assert child.returncode == 0, f"the sibling never ran beside it: {err}"
    a, b = (json.loads((tmp_path / name).read_text()) for name in "ab")
    assert not a["module_state_seen"] and not b["module_state_seen"]
    assert a["torch_initial_seed"] != b["torch_initial_seed"]


def test_a_server_that_dies_takes_its_children_and_is_replaced(tmp_path, monkeypatch):
    monkeypatch.delenv(forkshare.SHARE_ENV, raising=False)  # servers of this process's own
    env = {**_env(), forkserver.WARM_UP_ENV: "0"}  # (two cold servers: no warm-up step)
    waiting = forkserver.spawn("fixtures.warm.rendezvous", [str(tmp_path), "c", "never"], env,
                               cwd=str(ROOT), output_dir=str(tmp_path))
    forkserver.shutdown()  # every server goes, and the child in flight with it
    waiting.wait(timeout=60)
    assert waiting.returncode != 0
    again = forkserver.spawn("fixtures.warm.rendezvous", [str(tmp_path), "d", "d"], env,
                             cwd=str(ROOT), output_dir=str(tmp_path))
    _, err = again.communicate(timeout=120)
    assert again.returncode == 0, err  # a new server, started on demand


def test_a_server_still_importing_torch_is_stopped_at_once():
    """An interrupt right after a check starts closes servers that are still
    importing torch (they read their closed input only once serving): each is
    killed after half a second, not awaited for the seconds its start takes."""
    import time

    server = forkserver._Server("77", _env())  # a hash seed no test uses: a cold start
    started = time.monotonic()
    server.close(wait=True)
    assert time.monotonic() - started < 2.0  # (its imports alone take ~2 s or more here)
    assert server.proc.poll() is not None
