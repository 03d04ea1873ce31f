"""Warm servers shared by the processes of one session (``RESUMECHECK_WARM_SHARE``).

Every process that sees the variable forks its segments from the one server
per hash seed kept in the share, instead of starting (and importing torch in)
its own. The share must keep what a server of one's own guarantees: each
process's children die with that process, whoever else still uses the server,
and nothing outlives the share's owner.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from resumecheck import forkserver, forkshare

pytestmark = [pytest.mark.e2e, pytest.mark.process,
              pytest.mark.skipif(not forkserver.available(), reason="no fork on this platform")]

ROOT = Path(__file__).resolve().parent.parent

OWNER = ("import sys; from resumecheck import forkshare; "
         "print(forkshare.share(), flush=True); sys.stdin.read()")
# A process of the share that forks a segment, says its pid, and waits to be killed.
CLIENT = ("import os, sys, time; from resumecheck import forkserver; "
          "child = forkserver.spawn('fixtures.warm.rendezvous', [sys.argv[1], 'b', 'never'], "
          "dict(os.environ), cwd=sys.argv[2], output_dir=sys.argv[1]); "
          "print(child.pid, flush=True); time.sleep(120)")


def _env(share: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONHASHSEED"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    env[forkshare.SHARE_ENV] = share
    return env


def _gone(pid: int, within: float = 10.0) -> bool:
    """No process ``pid`` runs (none, or one that ended and awaits its reaping)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                return True
        except (FileNotFoundError, ProcessLookupError):
            return True
        time.sleep(0.02)
    return False


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_processes_of_a_share_fork_from_one_server_each_keeping_its_own_children(
        tmp_path, monkeypatch):
    alone = {k: v for k, v in os.environ.items() if k != forkshare.SHARE_ENV}
    owner = subprocess.Popen([sys.executable, "-c", OWNER], stdin=subprocess.PIPE,  # a share
                             stdout=subprocess.PIPE, text=True, cwd=ROOT, env=alone)  # of its own
    client = None
    try:
        assert owner.stdout is not None
        share = owner.stdout.readline().strip()
        assert share != os.environ.get(forkshare.SHARE_ENV)
        env = _env(share)
        monkeypatch.setenv(forkshare.SHARE_ENV, share)  # this process joins the share
        mine = forkserver.spawn("fixtures.warm.rendezvous", [str(tmp_path), "a", "b"], env,
                                cwd=str(ROOT), output_dir=str(tmp_path))
        client = subprocess.Popen([sys.executable, "-c", CLIENT, str(tmp_path), str(ROOT)],
                                  env=env, stdout=subprocess.PIPE, text=True, cwd=ROOT)
        assert client.stdout is not None
        theirs = int(client.stdout.readline())
        _, err = mine.communicate(timeout=120)  # it met the other process's child:
        assert mine.returncode == 0, err  # side by side, from the same server
        server = _parent(theirs)
        assert server not in (os.getpid(), client.pid)  # the share's, not the client's
        a, b = (json.loads((tmp_path / name).read_text()) for name in "ab")
        assert a["torch_initial_seed"] != b["torch_initial_seed"]
        assert not a["module_state_seen"] and not b["module_state_seen"]

        waiting = forkserver.spawn("fixtures.warm.rendezvous", [str(tmp_path), "c", "never"],
                                   env, cwd=str(ROOT), output_dir=str(tmp_path))
        client.kill()  # a process killed outright takes its children, and only those
        assert _gone(theirs), "a child outlived the process it ran for"
        assert waiting.poll() is None

        owner.stdin.close()  # type: ignore[union-attr]  # the share's owner ends:
        owner.wait(timeout=60)
        waiting.wait(timeout=60)  # every server of the share ends, with its children
        assert waiting.returncode == -signal.SIGKILL
        assert _gone(server), "a server outlived the share's owner"
        assert not Path(share).exists()  # nor its directory
    finally:
        for proc in (owner, client):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()
        forkserver.shutdown()  # this process's connections to the share


def test_without_a_share_a_process_starts_servers_of_its_own(monkeypatch, tmp_path):
    monkeypatch.setenv(forkshare.SHARE_ENV, str(tmp_path / "no-such-share"))
    assert forkshare.shared_directory() is None
    monkeypatch.setenv(forkshare.SHARE_ENV, str(tmp_path))  # a directory, but no owner
    with pytest.raises(OSError, match="not a share"):
        forkshare.connect(str(tmp_path), "2", (), os.environ, "resumecheck.forkserver", "X")
