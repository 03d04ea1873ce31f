"""Warm fresh interpreters: fork a child per segment from a server that has
already imported torch.

A process-isolated segment must start as a fresh interpreter would: none of
the user's modules imported, every global random stream where a new process
finds it, nothing left over from an earlier segment. Starting one costs about
two seconds of ``import torch``; most of a process-mode check was spent there.

A *fork server* pays that once. It is a fresh interpreter that imports torch,
numpy and resumecheck's core (no user code, no random draws) and then waits.
For each segment it forks a child that

* starts a process group of its own (so a timeout or a signal can end the
  child and anything it started) and dies with the server;
* takes the environment, working directory and module search path the
  segment asked for, as a new interpreter would compute them;
* draws new entropy for Python's ``random``, numpy's global stream and
  torch's default generator, as a new interpreter seeds each of them from the
  OS (a forked child would otherwise share the server's);
* runs the segment and exits without running the server's exit handlers.

A rank that torch's launcher forks from a warm launcher (resumecheck.distributed)
becomes fresh the same way, through the same helper (``become_fresh``).

The hash seed (``PYTHONHASHSEED``) is fixed when an interpreter starts, so
there is one server per hash seed asked for (and per ``preload``: the
distributed launchers' servers also import torch's distributed modules);
each forks any number of children side by side. The server never runs a segment itself: every child
forks from the same pristine state.

``spawn()`` returns a handle with the parts of ``subprocess.Popen`` the
runner uses (``pid``, ``communicate(timeout=)``, ``poll``, ``wait``,
``kill``, ``send_signal``). Set ``RESUMECHECK_WARM=0`` to start a plain new
interpreter per segment instead; platforms without ``fork`` always do.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import json
import os
import queue
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from resumecheck import forkshare
from resumecheck.heap import collector_off

__all__ = ["available", "become_fresh", "prestart", "shutdown", "spawn"]

_ENTRY = "resumecheck.forkserver"
_PRELOAD_ENV = "RESUMECHECK_SERVER_PRELOAD"  # the server's own: never a child's
WARM_UP_ENV = "RESUMECHECK_WARM_UP"
"""``0``: a process's own servers skip their warm-up step (each segment then
pays the first step's imports itself, about a second of CPU): for servers that
fork one or two segments, where the warm-up costs more than it saves. A
share's servers always warm up: they serve every process of the share, and
the first process's environment must not decide for all the others."""

# The hash seed of segments that ask for none (see _Pool).
NO_HASH_SEED = "2"


def available() -> bool:
    """Whether segments start from a warm server (POSIX fork, not switched off)."""
    return hasattr(os, "fork") and os.environ.get("RESUMECHECK_WARM", "1") != "0"


def spawn(module: str, args: Sequence[str], env: Mapping[str, str], cwd: str | None = None,
          output_dir: str | None = None, log: str | None = None,
          preload: Sequence[str] = ()) -> Any:
    """Start ``python -m module *args`` with ``env``: forked from a warm server
    when available, else a new interpreter; either way in a process group of
    its own, with no standard input. Output goes to the file ``log`` (stdout
    and stderr together) when given; otherwise ``communicate()`` returns it
    (a forked child's goes through two files in ``output_dir``, removed when
    read). ``preload``: more modules that the server imports before it
    forks, in a server of their own: torch's (the distributed launcher's:
    ``torch.distributed``'s launcher, checkpoint, FSDP and DDP, which every
    rank would import again) or a framework's that a target declares (never
    a user's own module). A framework's are left out on a machine with a GPU:
    its import might start CUDA, which a forked child could not use."""
    if not available():
        return _Plain(module, args, env, cwd, log)
    server = _pool().take(env.get("PYTHONHASHSEED"), env, _fork_safe(preload))
    try:
        return server.fork(module, list(args), dict(env), cwd or os.getcwd(), output_dir, log)
    except _ServerGone:
        _pool().discard(server)
        return _Plain(module, args, env, cwd, log)


def _fork_safe(preload: Sequence[str]) -> tuple[str, ...]:
    """The preloads a server may import before it forks: all of them where no
    GPU device exists, none where one does (an import that asks torch.cuda
    about devices, as a framework's or torch's distributed modules may, leaves
    a forked child unable to use CUDA; each child then imports them itself)."""
    return () if gpu_device() else tuple(preload)


def gpu_device() -> bool:
    """Whether this machine shows a GPU device (NVIDIA's or ROCm's driver)."""
    return os.path.exists("/dev/nvidiactl") or os.path.exists("/dev/kfd")


def prestart(hash_seeds: Sequence[str | None], env: Mapping[str, str] | None = None,
             preload: Sequence[str] = ()) -> None:
    """Start the server for each of these hash seeds now, side by side, so that
    the first segment of each does not wait for its ``import torch`` alone
    (None: the seed of segments that ask for none; ``preload`` as for
    ``spawn``). One server forks any number of segments at once. A no-op
    where warm start is off."""
    if not available():
        return
    pool = _pool()
    for seed in dict.fromkeys(hash_seeds):
        pool.take(seed, env if env is not None else os.environ, tuple(preload))


def shutdown(wait: bool = True) -> None:
    """Stop every server (their in-flight children die with them). ``wait``
    False, for an interrupted check about to exit: each server of this
    process's own is killed and none waited for (one still importing torch
    would otherwise live on for seconds); a share's servers are only left."""
    global _POOL
    if _POOL is not None:
        _POOL.close(wait)
        _POOL = None


# -- the client side ------------------------------------------------------------


class _ServerGone(Exception):
    pass


class _Plain(subprocess.Popen):  # type: ignore[type-arg]
    """A new interpreter, for platforms without fork or when warm start is off."""

    def __init__(self, module: str, args: Sequence[str], env: Mapping[str, str],
                 cwd: str | None, log: str | None) -> None:
        out: Any = subprocess.PIPE
        if log is not None:
            out = open(log, "wb")  # noqa: SIM115 (the child holds it; closed below)
        try:
            super().__init__(
                [sys.executable, "-m", module, *args], env=dict(env), cwd=cwd,
                stdin=subprocess.DEVNULL, stdout=out,
                stderr=subprocess.STDOUT if log is not None else subprocess.PIPE,
                text=log is None, start_new_session=True,
            )
        finally:
            if log is not None:
                out.close()


class _Child:
    """A segment forked by a server; the Popen subset the runner needs."""

    def __init__(self, server: _Server, request_id: int, pid: int, out: str | None,
                 err: str | None) -> None:
        self._server = server
        self._id = request_id
        self.pid = pid
        self._out, self._err = out, err
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self._server.result(self._id, block=False)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            self.returncode = self._server.result(self._id, block=True, timeout=timeout)
            if self.returncode is None:
                raise subprocess.TimeoutExpired(f"segment {self.pid}", timeout or 0)
        return self.returncode

    def communicate(self, timeout: float | None = None) -> tuple[str, str]:
        self.wait(timeout)
        if self._out is None or self._err is None:  # the output went to the caller's log
            return "", ""
        return _read_and_remove(self._out), _read_and_remove(self._err)

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            try:
                os.killpg(self.pid, sig)
            except (ProcessLookupError, PermissionError):
                pass

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def _read_and_remove(path: str) -> str:
    try:
        return Path(path).read_text(errors="replace")
    except OSError:
        return ""
    finally:
        Path(path).unlink(missing_ok=True)


class _Server:
    """One warm interpreter; forks any number of children side by side.

    Each request carries an id; the server answers it twice (the child's pid
    when forked, its exit status when it ends), and this side hands each
    answer to the waiting child's own queue."""

    def __init__(self, hash_seed: str, env: Mapping[str, str],
                 preload: tuple[str, ...] = ()) -> None:
        self.hash_seed = hash_seed
        self.key: tuple[str, tuple[str, ...], str] = (hash_seed, preload, "")
        self.proc: subprocess.Popen[str] | None = None
        self._lock = threading.Lock()
        self._waiting: dict[int, queue.Queue[dict[str, Any] | None]] = {}
        self._next_id = 0
        self._gone = False
        self._requests, replies = self._open(env, preload)
        threading.Thread(target=self._read, args=(replies,), daemon=True).start()

    def _open(self, env: Mapping[str, str], preload: tuple[str, ...]) -> tuple[IO[str], IO[str]]:
        """Start the server; where requests go and replies come from."""
        server_env = dict(env)
        server_env["PYTHONHASHSEED"] = self.hash_seed
        server_env[_PRELOAD_ENV] = ",".join(preload)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", _ENTRY], env=server_env, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1,
            start_new_session=True, cwd=forkshare.SERVER_CWD,
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        return self.proc.stdin, self.proc.stdout

    def _read(self, replies: IO[str]) -> None:
        for line in replies:
            try:
                reply = json.loads(line)
                with self._lock:
                    waiting = self._waiting.get(int(reply["id"]))
            except (ValueError, KeyError, TypeError):
                continue
            if waiting is not None:
                waiting.put(reply)
        with self._lock:  # the server is gone: so is every child in flight
            self._gone = True
            for waiting in self._waiting.values():
                waiting.put(None)

    def alive(self) -> bool:
        return not self._gone and (self.proc is None or self.proc.poll() is None)

    def fork(self, module: str, args: list[str], env: dict[str, str], cwd: str,
             output_dir: str | None, log: str | None = None) -> _Child:
        if log is not None:
            out = err = log
        else:
            fd, out = tempfile.mkstemp(prefix="segment-", suffix=".out", dir=output_dir)
            os.close(fd)
            fd, err = tempfile.mkstemp(prefix="segment-", suffix=".err", dir=output_dir)
            os.close(fd)
        replies: queue.Queue[dict[str, Any] | None] = queue.Queue()
        with self._lock:
            request_id = self._next_id
            self._next_id += 1
            self._waiting[request_id] = replies
            gone = self._gone
        request = {"id": request_id, "module": module, "args": args, "env": env, "cwd": cwd,
                   "stdout": out, "stderr": err}
        try:
            if gone:
                raise _ServerGone()
            with self._lock:  # one request per line, whichever thread writes
                self._requests.write(json.dumps(request) + "\n")
                self._requests.flush()
            reply = replies.get(timeout=120)
            if reply is None:
                raise _ServerGone()
        except (OSError, ValueError, queue.Empty, _ServerGone):
            with self._lock:
                self._waiting.pop(request_id, None)
            if log is None:
                Path(out).unlink(missing_ok=True)
                Path(err).unlink(missing_ok=True)
            raise _ServerGone() from None
        if log is not None:
            return _Child(self, request_id, int(reply["pid"]), None, None)
        return _Child(self, request_id, int(reply["pid"]), out, err)

    def result(self, request_id: int, block: bool, timeout: float | None = None) -> int | None:
        """The exit status of a child (None: still running)."""
        with self._lock:
            replies = self._waiting.get(request_id)
        if replies is None:
            return -int(signal.SIGKILL)
        try:
            reply = replies.get(timeout=timeout) if block else replies.get_nowait()
        except queue.Empty:
            return None
        with self._lock:
            self._waiting.pop(request_id, None)
        if reply is None:  # the server, and with it the child, died
            _pool().discard(self)
            return -int(signal.SIGKILL)
        return int(reply["returncode"])

    def close(self, wait: bool = True) -> None:
        try:
            with self._lock:
                self._requests.close()
        except OSError:
            pass
        if self.proc is None:
            return
        if not wait:
            with contextlib.suppress(OSError):
                self.proc.kill()  # (its children die with it: PR_SET_PDEATHSIG)
            return
        try:  # a serving server ends within milliseconds of its input closing; one
            # still importing torch would only see it when done: killed instead
            # (its children, if any, die with it), so an interrupt ends promptly
            self.proc.wait(timeout=0.5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class _SharedServer(_Server):
    """A server of the share this process uses (``forkshare``), reached
    through its socket; closing the connection ends only this process's
    children there."""

    def __init__(self, hash_seed: str, env: Mapping[str, str], preload: tuple[str, ...],
                 directory: str) -> None:
        self._directory = directory
        super().__init__(hash_seed, env, preload)

    def _open(self, env: Mapping[str, str], preload: tuple[str, ...]) -> tuple[IO[str], IO[str]]:
        self._sock = forkshare.connect(self._directory, self.hash_seed, preload, env, _ENTRY,
                                       _PRELOAD_ENV)
        return (self._sock.makefile("w", encoding="utf-8"),
                self._sock.makefile("r", encoding="utf-8"))

    def close(self, wait: bool = True) -> None:
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)  # the server sees us go at once
        super().close(wait)
        self._sock.close()


class _Pool:
    """One server per hash seed (and preload), started on first use (or by
    ``prestart``): the share's where this process uses one, else its own."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._servers: dict[tuple[str, tuple[str, ...], str], _Server] = {}
        # A segment that asks for no hash seed gets one no program would
        # pick on purpose, the same every time (so verdicts do not depend on
        # the order runs start in) and other than the reference's (1).
        self._random_seed = NO_HASH_SEED

    def _key(self, hash_seed: str | None) -> str:
        return hash_seed if hash_seed not in (None, "", "random") else self._random_seed

    def take(self, hash_seed: str | None, env: Mapping[str, str],
             preload: tuple[str, ...] = ()) -> _Server:
        """The live server for this hash seed (and preload), started if there is none."""
        share = forkshare.shared_directory()
        key = (self._key(hash_seed), preload, share or "")
        with self._lock:
            server = self._servers.get(key)
            if server is None or not server.alive():
                server = self._servers[key] = _start_server(key[0], env, preload, share)
                server.key = key
            return server

    def discard(self, server: _Server) -> None:
        with self._lock:
            if self._servers.get(server.key) is server:
                del self._servers[server.key]
        server.close()

    def close(self, wait: bool = True) -> None:
        with self._lock:
            servers, self._servers = list(self._servers.values()), {}
        for server in servers:
            server.close(wait)


def _start_server(hash_seed: str, env: Mapping[str, str], preload: tuple[str, ...],
                  share: str | None) -> _Server:
    if share is not None:
        try:
            return _SharedServer(hash_seed, env, preload, share)
        except OSError:  # the share cannot serve: a server of this process's own
            pass
    return _Server(hash_seed, env, preload)


_POOL: _Pool | None = None
_POOL_LOCK = threading.Lock()


def _pool() -> _Pool:
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = _Pool()
            atexit.register(shutdown)
        return _POOL


# -- the server side ------------------------------------------------------------


def _die_with_parent() -> None:
    """Ask Linux to kill this process when its parent exits (best effort)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _fresh_sys_path(cwd: str, env: Mapping[str, str], base: list[str]) -> list[str]:
    """The module search path ``python -m`` would start with in ``cwd``:
    the directory first, then PYTHONPATH, then the interpreter's own. As
    ``site`` does at startup, PYTHONPATH's entries are made absolute and
    each is kept once."""
    extra = list(dict.fromkeys(os.path.abspath(os.path.join(cwd, p))
                               for p in env.get("PYTHONPATH", "").split(os.pathsep) if p))
    path = [*([] if env.get("PYTHONSAFEPATH") else [cwd]), *extra]
    return path + [p for p in base if p not in path]


def _child(request: dict[str, Any], base_path: list[str], server_fds: list[int]) -> None:
    """In the forked child: become the fresh interpreter the segment asked for."""
    os.setpgid(0, 0)
    for fd in server_fds:  # the server's clients are none of the child's business
        with contextlib.suppress(OSError):
            os.close(fd)
    _die_with_parent()
    fd = os.open(request["stdout"], os.O_WRONLY | os.O_TRUNC)
    os.dup2(fd, 1)
    if request["stderr"] != request["stdout"]:
        os.close(fd)
        fd = os.open(request["stderr"], os.O_WRONLY | os.O_TRUNC)
    os.dup2(fd, 2)
    os.close(fd)
    os.environ.clear()
    os.environ.update(request["env"])
    if "RESUMECHECK_PARENT_PID" in os.environ:  # the child watches whoever forked it
        os.environ["RESUMECHECK_PARENT_PID"] = str(os.getppid())
    os.chdir(request["cwd"])
    sys.path[:] = _fresh_sys_path(request["cwd"], request["env"], base_path)
    become_fresh(new_session=False)  # (its own process group is set above)
    os._exit(run_module(request["module"], request["args"]))


# What a new interpreter starts with where it is not SIG_DFL.
_FRESH_HANDLERS: dict[int, Any] = {int(signal.SIGINT): signal.default_int_handler}
for _name in ("SIGPIPE", "SIGXFSZ"):  # Python ignores these at startup
    if hasattr(signal, _name):
        _FRESH_HANDLERS[int(getattr(signal, _name))] = signal.SIG_IGN


def become_fresh(*, new_session: bool) -> None:
    """In a process just forked from a warm one (a fork server's segment, a
    rank that torch's launcher forked): become what a new interpreter would be.

    * ``new_session``: lead a session (and process group) of its own, so
      that killing it by group reaches it and whatever it starts, and a kill
      of the forking process's group does not;
    * standard input from ``/dev/null`` (never the forking process's input);
    * every signal handler as a new interpreter has it (a launcher's or a
      server's own handlers stay behind);
    * new entropy in Python's ``random``, numpy's global stream and torch's
      default generator, as a new interpreter seeds each of them from the OS
      (a forked child would otherwise continue its parent's streams, and two
      children would share one);
    * the temporary directory found again from the environment the caller
      set (``tempfile`` keeps the one the warm process found first, which is
      another segment's ``TMPDIR`` when theirs differ).

    The caller sets the environment, working directory and ``sys.path`` it
    needs first; nothing here imports a module that the forking process has
    not imported (torch and numpy are already loaded in every warm process).
    """
    if new_session:
        os.setsid()
    stdin = os.open(os.devnull, os.O_RDONLY)
    os.dup2(stdin, 0)
    os.close(stdin)
    # the parent's sys.stdin may be locked by one of its threads: a new one
    sys.stdin = open(0, closefd=False)  # noqa: SIM115
    for sig in signal.valid_signals():
        fresh = _FRESH_HANDLERS.get(int(sig), signal.SIG_DFL)
        try:
            if signal.getsignal(sig) not in (fresh, None):  # None: not set from Python
                signal.signal(sig, fresh)
        except (OSError, ValueError, RuntimeError):  # SIGKILL, SIGSTOP and the like
            pass
    import random

    import numpy as np

    import torch

    random.seed()
    np.random.seed()
    torch.seed()
    tempfile.tempdir = None


def run_module(module: str, args: Sequence[str]) -> int:
    """Run ``python -m module *args`` in this (fresh) process; its exit status.
    An exception escaping the module is printed, as the interpreter would."""
    import runpy

    sys.argv = [module, *args]
    code = 0
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
    return code


def _warm_up() -> None:
    """Train one throwaway step so torch imports what it imports lazily.

    The first optimizer step, scheduler, loss scaler, DataLoader and
    ``torch.save`` of a new interpreter pull in some 800 more modules
    (torch._dynamo, sympy, ...): over a second per segment. Doing it once
    here leaves every child with those modules loaded and nothing else
    changed: torch's global stream is put back as it was (each child reseeds
    it anyway) and one thread is used (no OpenMP pool exists to be forked).
    Not on a machine with a GPU device (see ``_serve``).
    """
    import io

    import torch

    state, threads = torch.get_rng_state(), torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Dropout(0.1))
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 1.0)
        scaler = torch.amp.GradScaler("cpu")
        data = torch.utils.data.TensorDataset(torch.zeros(4, 4))
        for (x,) in torch.utils.data.DataLoader(data, batch_size=2, shuffle=True):
            with torch.autocast("cpu", dtype=torch.bfloat16):
                loss = model(x).float().pow(2).mean()
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            sched.step()
            opt.zero_grad()
        buffer = io.BytesIO()
        torch.save({"opt": opt.state_dict(), "model": model.state_dict()}, buffer)
        buffer.seek(0)
        torch.load(buffer, weights_only=True)
    except Exception:  # a warm-up that fails only costs speed
        pass
    finally:
        torch.set_rng_state(state)
        torch.set_num_threads(threads)


def _preload(modules: str) -> None:
    """Import the modules a spawn asked its server to hold (torch's own, or a
    framework's), with torch's stream put back should an import draw from it."""
    if not modules:
        return
    import importlib

    import torch

    state = torch.get_rng_state()
    try:
        for name in modules.split(","):
            try:
                importlib.import_module(name)
            except Exception:  # a preload that fails only costs speed: the child imports it
                pass
    finally:
        torch.set_rng_state(state)


def _prepare(warm_up: bool) -> list[str]:
    """Import what every segment imports anyway (nothing of the user's, no
    random draws) and warm up (if ``warm_up``); the module path a child builds on.

    The garbage collector is off meanwhile: the imports create hundreds of
    thousands of objects that stay alive, and each of the collections they
    would set off walks all of those made so far (a tenth of the server's
    start). It is on again before any child is forked, as in a new interpreter."""
    with collector_off():
        import numpy  # noqa: F401
        import torch  # noqa: F401

        import resumecheck.runner  # noqa: F401  (and the transport, capture, restore rules)

        _preload(os.environ.pop(_PRELOAD_ENV, ""))
        if warm_up and not gpu_device():
            # (On a GPU machine a training step here would leave autograd's device
            # threads and CUDA's state behind: a forked child could then neither run
            # backward nor use CUDA. Each child pays the first step's imports.)
            _warm_up()
    own = {p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p}
    return [p for p in sys.path if p not in ("", os.getcwd()) and p not in own]


class _Hub:
    """The server's clients: each one's requests in, replies out, and whose
    each running child is (a client that goes takes its children with it).

    A child closes every descriptor in ``fds`` (the clients', the listener)
    right after the fork; no lock is needed there, the child is one thread."""

    def __init__(self) -> None:
        self.lines: queue.Queue[tuple[int, str]] = queue.Queue()
        self.fds: set[int] = set()
        self._lock = threading.Lock()
        self._children: dict[int, int] = {}  # pid -> its client's descriptor
        self._gone: set[int] = set()  # clients that left while children of theirs ran

    def serve_client(self, fd: int, requests: IO[str] | None = None,
                     on_gone: Any = None) -> None:
        """Read a client's requests in a thread of their own; when it goes,
        kill its children (and call ``on_gone``)."""
        self.fds.add(fd)

        def read() -> None:
            with requests if requests is not None else open(fd, closefd=False) as lines:
                for line in lines:
                    self.lines.put((fd, line))
            self.client_gone(fd)
            if on_gone is not None:
                on_gone()

        threading.Thread(target=read, daemon=True).start()

    def reply(self, fd: int, message: dict[str, Any]) -> None:
        # One os.write per line: atomic for lines this short, whichever thread writes.
        try:
            os.write(fd, (json.dumps(message) + "\n").encode())
        except OSError:  # the client is gone
            pass

    def forked(self, fd: int, request_id: int, pid: int) -> None:
        with self._lock:
            self._children[pid] = fd
        self.reply(fd, {"id": request_id, "pid": pid})
        threading.Thread(target=self._wait_for, args=(fd, request_id, pid), daemon=True).start()

    def _wait_for(self, fd: int, request_id: int, pid: int) -> None:
        _, status = os.waitpid(pid, 0)
        with self._lock:
            self._children.pop(pid, None)
        self.reply(fd, {"id": request_id, "returncode": os.waitstatus_to_exitcode(status)})
        self._close_if_done(fd)

    def client_gone(self, fd: int) -> None:
        with self._lock:
            self._gone.add(fd)
            pids = [pid for pid, owner in self._children.items() if owner == fd]
        _kill_groups(pids)
        self._close_if_done(fd)

    def _close_if_done(self, fd: int) -> None:
        # A client's descriptor is closed only once none of its children can
        # still be answered: its number, reused, must not carry a reply to another.
        with self._lock:
            if fd not in self._gone or fd in self._children.values():
                return
            self._gone.discard(fd)
            self.fds.discard(fd)
        os.close(fd)

    def end(self) -> None:
        """Kill every child still running and leave."""
        with self._lock:
            pids = list(self._children)
        _kill_groups(pids)
        os._exit(0)


def _kill_groups(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass


def _fork_children(hub: _Hub, base_path: list[str], stop: Any = None) -> None:
    """Fork a child per request, in this (the main) thread only: the other
    threads only read requests and wait for children, and PR_SET_PDEATHSIG
    follows the thread that forked. A shared server (``stop`` given) also
    stops when told, and forks servers for preloads (``serve``).

    What the server holds now (torch's modules, ~400,000 objects) is frozen
    first (``gc.freeze``, as Python advises before forking without exec): no
    child's garbage collection walks it again (a full collection costs a
    new interpreter 0.2 s after torch's import, and a framework's loop asks
    for one), nor writes to its pages, which stay shared. None of it becomes
    garbage: a child sees the same objects a fresh interpreter would hold."""
    gc.freeze()
    while True:
        fd, line = hub.lines.get()
        request = json.loads(line or "{}")
        if stop is not None and request.get("stop"):
            stop()
        if stop is not None and "serve" in request:
            _fork_server(hub, fd, request, base_path)
        if "module" not in request:
            continue
        pid = os.fork()
        if pid == 0:
            _child(request, base_path, list(hub.fds))
        try:
            os.setpgid(pid, pid)  # also here: a kill right after the fork must reach the group
        except OSError:
            pass
        hub.forked(fd, request["id"], pid)


def _fork_server(hub: _Hub, fd: int, request: dict[str, Any], base_path: list[str]) -> None:
    """Fork the share's server for a preload from this warm one (same hash
    seed): it imports only the preload, not torch again. It listens before
    the fork, so the client that asked can connect once answered; it is
    nobody's segment (no client's going ends it) and dies with this server."""
    listener = forkshare.listen(request["serve"])
    pid = os.fork()
    if pid == 0:
        for inherited in list(hub.fds):
            with contextlib.suppress(OSError):
                os.close(inherited)
        _die_with_parent()
        # import the preload as a server started by the client would: its
        # environment, directory and module path
        os.environ.clear()
        os.environ.update(request["env"])
        os.chdir(request["cwd"])
        sys.path[:] = _fresh_sys_path(request["cwd"], request["env"], base_path)
        with collector_off():
            _preload(",".join(request["preload"]))
        sys.path[:] = base_path
        _serve_listener(listener, request["serve"], base_path)
    listener.close()
    threading.Thread(target=os.waitpid, args=(pid, 0), daemon=True).start()
    hub.reply(fd, {"id": request.get("id", 0), "pid": pid})


def _serve(requests: IO[str], replies_fd: int) -> None:
    """A server of its own client: requests on stdin, replies on ``replies_fd``.
    The client closes our stdin when it is done, or dies: either way, the
    segments in flight end with us."""
    base_path = _prepare(warm_up=os.environ.get(WARM_UP_ENV, "1") != "0")
    hub = _Hub()
    hub.serve_client(replies_fd, requests, on_gone=hub.end)
    _fork_children(hub, base_path)


def _serve_shared(path: str, owner: int) -> None:
    """A server of a share (``forkshare``): any number of clients connect at
    ``path``; it ends when the share's owner does (or is told to stop)."""
    listener = forkshare.listen(path)
    print("listening", flush=True)  # the starting client waits for this line only
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.close(devnull)
    _serve_listener(listener, path, None, owner)


def _serve_listener(listener: socket.socket, path: str, base_path: list[str] | None,
                    owner: int | None = None) -> None:
    """Accept clients at ``path`` (at once: their requests wait while this
    server prepares, when ``base_path`` is None) and serve them."""
    ours = os.stat(path).st_ino
    hub = _Hub()
    hub.fds.add(listener.fileno())

    def end() -> None:
        with contextlib.suppress(OSError):  # (unless another server's took its place)
            if os.stat(path).st_ino == ours:
                os.unlink(path)
        hub.end()

    def accept() -> None:
        while True:
            conn, _ = listener.accept()
            hub.serve_client(conn.detach())

    def owner_gone() -> None:  # nobody uses the share any more: its directory goes too
        shutil.rmtree(os.path.dirname(path), ignore_errors=True)
        hub.end()

    if owner is not None:
        threading.Thread(target=forkshare.watch_owner, args=(owner, owner_gone),
                         daemon=True).start()
    threading.Thread(target=accept, daemon=True).start()
    _fork_children(hub, _prepare(warm_up=True) if base_path is None else base_path, stop=end)


def main() -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the client decides; the group gets ^C too
    if sys.argv[1:2] == ["--listen"]:
        if os.fork() > 0:  # a share's server is nobody's child (no zombie of it anywhere)
            os._exit(0)
        _serve_shared(sys.argv[2], int(sys.argv[3]))
        return 0
    replies_fd = os.dup(1)  # the replies; fd 1 itself is each child's own output
    _serve(sys.stdin, replies_fd)
    return 0


if __name__ == "__main__":
    sys.exit(main())
