"""``python -m resumecheck._launch NPROC FAILURES LOGS ARGS...``: run ``python ARGS``
as NPROC ranks through torch's elastic launcher (what ``torchrun --standalone
--nproc-per-node NPROC`` does), and write the ranks that failed to FAILURES
as JSON (rank -> exit code, pid, message, whether it failed first) when
any did.

When ARGS is ``-m MODULE ...`` and warm starts are on (``forkserver.available``,
``RESUMECHECK_WARM`` not ``0``), the ranks are forked from this launcher, which
has imported torch already: what ``torchrun --start-method fork`` does, with a
function as the entrypoint. Each forked rank first becomes what a new
interpreter would be (``forkserver.become_fresh``: a session of its own, new
entropy in every global stream, standard input from ``/dev/null``, default
signal handlers), then runs MODULE as ``python -m`` would. This launcher
imports nothing of the user's, never touches torch's or numpy's streams and
runs no parallel region (no OpenMP pool to fork); each rank reseeds
Python's ``random`` anyway. Two costs of torch's rendezvous that one node does
not need are left out (``_quicker_rendezvous``).
Otherwise every rank is a new interpreter, ``python ARGS``.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
import uuid


def _watch_parent() -> None:
    """Exit when resumecheck is gone (even killed by SIGKILL): the ranks, which
    watch this process, then exit too, so no launch outlives its check."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(70)

    threading.Thread(target=watch, name="resumecheck-parent-watch", daemon=True).start()


def forked_rank(module: str, *args: str) -> None:
    """The entrypoint of a rank forked by torch's launcher: a fresh process
    that runs ``python -m module *args``; its exit status is the rank's."""
    from resumecheck.forkserver import become_fresh, run_module

    become_fresh(new_session=True)
    code = run_module(module, args)
    if code != 0:
        sys.exit(code)  # torch's launcher reports it as this rank's failure


def _quicker_rendezvous() -> None:
    """Two costs of torch's rendezvous that a one-node launch does not need.

    * It names every event it records after its caller with
      ``inspect.stack()``, which reads the source of every frame and searches
      ``sys.modules`` for each one (even when no event handler is set): in a
      launcher forked from the warm server, which holds thousands of modules,
      over half a second per launch. ``sys._getframe`` gives the same name.
    * It sleeps a random 0 to 0.3 s before joining, to spread many nodes'
      joins over time; here one node joins.

    Both are module attributes of ``dynamic_rendezvous``; a torch that lacks
    them is left as it is (the launch is then only slower)."""
    try:
        from torch.distributed.elastic.rendezvous import dynamic_rendezvous as rdzv
    except ImportError:
        return
    if callable(getattr(rdzv, "get_method_name", None)):
        def get_method_name(depth: int = 2) -> str:
            try:  # frame 0 is this function, as inspect.stack()[0] is
                return sys._getframe(depth).f_code.co_name
            except ValueError:
                return "no_method_name"

        rdzv.get_method_name = get_method_name
    delay = getattr(rdzv, "_delay", None)
    if callable(delay):
        def _delay(seconds: float | tuple[float, float]) -> None:
            if not isinstance(seconds, tuple):  # a retry's back-off: kept
                delay(seconds)

        rdzv._delay = _delay


def main(argv: list[str]) -> int:
    nproc, failures_path, logs, *args = argv
    _watch_parent()
    _quicker_rendezvous()
    from torch.distributed.elastic.multiprocessing import DefaultLogsSpecs
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError
    from torch.distributed.launcher.api import LaunchConfig, elastic_launch

    from resumecheck.forkserver import available, gpu_device

    # (Not on a GPU machine: torch's launcher asks torch.cuda about devices, and
    # a rank forked after that cannot use CUDA.)
    fork = available() and not gpu_device() and len(args) >= 2 and args[0] == "-m"
    config = LaunchConfig(
        min_nodes=1, max_nodes=1, nproc_per_node=int(nproc), run_id=str(uuid.uuid4()),
        rdzv_backend="c10d", rdzv_endpoint="localhost:0", max_restarts=0,
        # how often the launcher looks at its ranks: a launch ends this late at
        # worst after its last rank (each look is a poll and a store read)
        monitor_interval=0.05, logs_specs=DefaultLogsSpecs(log_dir=logs),
        start_method="fork" if fork else "spawn",
    )
    try:
        if fork:
            elastic_launch(config, forked_rank)(*args[1:])
        else:
            elastic_launch(config, sys.executable)(*args)
    except ChildFailedError as exc:
        # keyed by global rank; the first observed failure is the cause, the
        # others are mostly the ranks the launcher stopped because of it
        root, _ = exc.get_first_failure()
        failures = {
            str(rank): {"exitcode": f.exitcode, "pid": f.pid, "message": f.message,
                        "timestamp": f.timestamp, "first": rank == root}
            for rank, f in exc.failures.items()
        }
        with open(failures_path, "w") as out:
            json.dump(failures, out)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
