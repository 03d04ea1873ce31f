"""Warm servers shared by every process of one session (opt-in).

A fork server (``forkserver.py``) belongs to the process that started it:
each ``resumecheck`` command, and each worker of a ``pytest -n`` session,
starts its own and pays their ``import torch`` again. A *share* lets every
process that sees ``RESUMECHECK_WARM_SHARE=DIR`` in its environment fork its
segments from one set of servers kept in ``DIR``: one per hash seed and
preload (and interpreter), started by the first process that needs it and
reached through a Unix socket there.

What a segment sees is the same: it is forked from a server that imported
torch and nothing of the user's, and becomes fresh as before. Only the
servers' owner differs: a server serves each connected process apart (the
children a process asked for are killed when that process goes, however it
goes: a crash, ``SIGKILL``), and ends when the process that made the share
ends (``share()``; or ``unshare()``). Without the variable nothing changes.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path

__all__ = ["SERVER_CWD", "SHARE_ENV", "connect", "listen", "share", "shared_directory", "unshare",
           "watch_owner"]

SHARE_ENV = "RESUMECHECK_WARM_SHARE"
"""The directory of the shared servers; unset: each process starts its own."""

_OWNER_FILE = "owner"
_MAX_SOCKET_PATH = 100  # sun_path holds 108 bytes on Linux, 104 on macOS



SERVER_CWD = str(Path(__file__).resolve().parent.parent)
"""Where every warm server starts, shared or not: ``python -m`` puts its
directory first on the module path, so the one that holds this package, never
the caller's (a random.py there would shadow the standard library in the
server, and in every child forked from it). Each child takes its segment's
own directory."""

def share() -> str:
    """Make a share owned by this process and name it in ``os.environ``, so
    that this process and every process it starts from now on use it; its
    servers end with this process (or at ``unshare()``). An existing share
    (the variable already set) is kept as it is. Returns the directory."""
    existing = shared_directory()
    if existing is not None:
        return existing
    directory = tempfile.mkdtemp(prefix="rc-warm-", dir="/tmp" if os.path.isdir("/tmp") else None)
    Path(directory, _OWNER_FILE).write_text(str(os.getpid()))
    os.environ[SHARE_ENV] = directory
    return directory


def unshare() -> None:
    """End a share this process made: every server stops (with any child
    still running) and the directory goes; the variable is unset."""
    directory = shared_directory()
    if directory is None or _owner(directory) != os.getpid():
        return
    os.environ.pop(SHARE_ENV, None)
    for path in Path(directory).glob("*.sock"):
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.connect(str(path))
                sock.sendall(b'{"stop": true}\n')
        except OSError:
            pass
    shutil.rmtree(directory, ignore_errors=True)


def shared_directory() -> str | None:
    """The share this process uses (from its environment), or None."""
    directory = os.environ.get(SHARE_ENV)
    if not directory or not os.path.isdir(directory):
        return None
    return directory


def _owner(directory: str) -> int | None:
    try:
        return int(Path(directory, _OWNER_FILE).read_text())
    except (OSError, ValueError):
        return None


def connect(directory: str, hash_seed: str, preload: tuple[str, ...],
            env: Mapping[str, str], entry: str, preload_env: str) -> socket.socket:
    """A connection to the share's server for this hash seed and preload,
    started when none is serving: ``python -m entry --listen`` without a
    preload, else forked from the one without (which then imports only the
    preload). One process at a time decides (a lock file per server).
    OSError when the share cannot serve (the caller then starts a server of
    its own)."""
    owner = _owner(directory)
    if owner is None:
        raise OSError(f"{directory} is not a share of warm servers")
    digest = hashlib.sha256("\0".join([sys.executable, str(Path(__file__).parent),
                                       *preload]).encode()).hexdigest()[:12]
    path = os.path.join(directory, f"{hash_seed}-{digest}.sock")
    if len(path) > _MAX_SOCKET_PATH:
        raise OSError(f"socket path too long: {path}")
    with open(os.path.join(directory, f"{hash_seed}-{digest}.lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            return _connect(path)
        except OSError:
            pass
        if preload:  # forked from the warm server of this hash seed: no second import of torch
            with connect(directory, hash_seed, (), env, entry, preload_env) as plain:
                plain.sendall(json.dumps({"serve": path, "preload": list(preload),
                                          "env": dict(env), "cwd": os.getcwd()}).encode() + b"\n")
                with plain.makefile("r", encoding="utf-8") as replies:
                    if not replies.readline():
                        raise OSError(f"the shared server for hash seed {hash_seed} is gone")
            return _connect(path)
        server_env = dict(env)
        server_env["PYTHONHASHSEED"] = hash_seed
        server_env[preload_env] = ",".join(preload)
        server_env.pop(SHARE_ENV, None)
        server = subprocess.Popen(
            [sys.executable, "-m", entry, "--listen", path, str(owner)], env=server_env,
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, start_new_session=True, cwd=SERVER_CWD,
        )
        assert server.stdout is not None
        with server.stdout:  # it says so once it listens (before it imports torch)
            ready = server.stdout.readline()
        server.wait()  # (it forks the server itself and leaves at once)
        if not ready:
            raise OSError(f"the shared server for hash seed {hash_seed} did not start")
        return _connect(path)


def _connect(path: str) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
    except OSError:
        sock.close()
        raise
    return sock


def listen(path: str) -> socket.socket:
    """The server's side: listen at ``path`` (made under a temporary name and
    renamed, so a client never finds a socket that does not accept yet)."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    temporary = f"{path}.{os.getpid()}"
    listener.bind(temporary)
    listener.listen(64)
    os.replace(temporary, path)
    return listener


def watch_owner(owner: int, on_end: Callable[[], None]) -> None:
    """Call ``on_end`` once the share's owner has ended (blocks until then):
    a process descriptor where Linux gives one, else a look every second."""
    try:
        fd = os.pidfd_open(owner)
    except ProcessLookupError:
        on_end()
        return
    except (OSError, AttributeError):
        fd = None
    if fd is not None:
        select.select([fd], [], [])
    else:
        while _running(owner):
            time.sleep(1.0)
    on_end()


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
