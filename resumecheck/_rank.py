"""``python -m resumecheck._rank SPEC OUT``: one rank of a distributed segment,
started by torch's elastic launcher (RANK, WORLD_SIZE and the rendezvous in
its environment). ``{rank}`` in SPEC and OUT is this rank's number."""

import os
import sys

# Resolve modules as the parent did (see resumecheck._segment).
for _entry in os.environ.get("RESUMECHECK_SYS_PATH", "").split(os.pathsep):
    if _entry and _entry not in sys.path:
        sys.path.append(_entry)

from resumecheck.heap import collector_off  # noqa: E402

with collector_off(freeze=True):  # (as in resumecheck._segment)
    from resumecheck.distributed import rank_main

if __name__ == "__main__":
    sys.exit(rank_main(sys.argv[1], sys.argv[2]))
