"""Warm restarts: a segment forked from a warm server starts as a new interpreter would.

Process isolation exists to catch what only a real restart catches (a
forgotten random-stream restore, state kept in a module). The fork server
must not weaken it: each child has none of the user's modules, torch's
stream, Python's and numpy's freshly seeded from the OS as a new process
has them, the hash seed it asked for, and nothing from an earlier child.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from resumecheck import forkserver, verify

pytestmark = [pytest.mark.e2e, pytest.mark.process]

ROOT = Path(__file__).resolve().parent.parent


def _env(hash_seed: str, tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ, PYTHONHASHSEED=hash_seed, TMPDIR=str(tmp_path))
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    return env


# The hash seeds of a check's own servers (the reference's and everyone
# else's), so that this worker's process-mode tests start each server once.
HASH_SEED, OTHER_HASH_SEED = "1", forkserver.NO_HASH_SEED


def _forked_start(tmp_path: Path, name: str, hash_seed: str = HASH_SEED) -> dict:
    out = tmp_path / f"{name}.json"
    child = forkserver.spawn("fixtures.warm.start_state", [str(out)], _env(hash_seed, tmp_path),
                             cwd=str(ROOT), output_dir=str(tmp_path))
    _, err = child.communicate(timeout=120)
    assert child.returncode == 0, err
    return json.loads(out.read_text())


@pytest.mark.skipif(not forkserver.available(), reason="no fork on this platform")
def test_a_forked_segment_starts_like_a_new_interpreter(tmp_path):
    # servers not started for this test's TMPDIR (the first taker's environment
    # is a server's own)
    forkserver.prestart([HASH_SEED, OTHER_HASH_SEED], env=os.environ)
    plain_out = tmp_path / "plain.json"
    subprocess.run([sys.executable, "-m", "fixtures.warm.start_state", str(plain_out),
                    "--identity"], env=_env(HASH_SEED, tmp_path), cwd=ROOT, check=True,
                   timeout=120)
    plain = json.loads(plain_out.read_text())
    first = _forked_start(tmp_path, "first")
    second = _forked_start(tmp_path, "second")
    other_seed = _forked_start(tmp_path, "other", hash_seed=OTHER_HASH_SEED)
    assert plain["tempdir"] == str(tmp_path)
    for child in (first, second):
        assert child["user_modules"] == []  # nothing of the user's was imported before
        assert child["module_state_seen"] is False  # nor carried from the child before
        assert child["hash"] == plain["hash"]  # the hash seed asked for
        assert child["path0"] == plain["path0"]
        assert child["tempdir"] == plain["tempdir"]  # TMPDIR as the segment's environment says
    # new entropy per child in every global stream, as each new interpreter draws its own
    assert first["torch_initial_seed"] != second["torch_initial_seed"]
    assert first["torch_state"] != second["torch_state"]
    assert first["python_random"] != second["python_random"]
    assert first["numpy_random"] != second["numpy_random"]
    assert other_seed["hash"] != first["hash"]
    # the server's own objects (torch's modules) are frozen before it forks: no
    # child's garbage collection walks them (a new interpreter has none frozen)
    assert first["frozen"] > 100_000 and other_seed["frozen"] > 100_000
    if not forkserver.gpu_device():  # (no warm-up step there)
        # the servers trained their warm-up step, whichever process started
        # them (a test's own servers may skip it: never a share's)
        assert first["warm"] and second["warm"] and other_seed["warm"]


def test_state_kept_in_a_module_is_caught_only_by_a_real_restart():
    from fixtures.warm.module_state import BUGGY

    # one interpreter: the module still holds the position, so the in-process check
    # refuses to judge, naming it (its factory, made by a function, reaches the
    # module through its closure: trial 178), where it once passed the resume
    from resumecheck import ModuleStateChanged

    with pytest.raises(ModuleStateChanged) as refused:
        verify(BUGGY, drop="none", noise_seeds=0, check_determinism=False)
    assert refused.value.changed == ["fixtures.warm.module_state._STASH (0 -> 1 items)"]
    caught = verify(BUGGY, drop="none", isolation="process", noise_seeds=0,
                    check_determinism=False)
    full = caught.runs[0]
    assert full.verdict == "diverged"
    assert "data_cursor" in [f.component for f in full.diagnosis]


def test_a_forgotten_rng_restore_is_caught_with_warm_restarts():
    from fixtures.bugs.class05_rng_not_saved import BUGGY, CORRECT

    caught = verify(BUGGY, drop="none", isolation="process", noise_seeds=0,
                    check_determinism=False)
    assert caught.runs[0].verdict == "diverged"
    assert [f.component for f in caught.runs[0].diagnosis] == ["rng"]
    assert verify(CORRECT, drop="none", isolation="process", noise_seeds=0,
                  check_determinism=False).equivalent


def test_warm_start_can_be_switched_off(monkeypatch):
    monkeypatch.setenv("RESUMECHECK_WARM", "0")
    assert not forkserver.available()
