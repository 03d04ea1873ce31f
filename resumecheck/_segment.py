"""``python -m resumecheck._segment SPEC OUT``: run one segment in a fresh interpreter."""

import os
import sys

# Resolve modules as the parent did: its sys.path after this interpreter's own
# (transport.SYS_PATH_ENV; read before anything else is imported).
for _entry in os.environ.get("RESUMECHECK_SYS_PATH", "").split(os.pathsep):
    if _entry and _entry not in sys.path:
        sys.path.append(_entry)

from resumecheck.heap import collector_off  # noqa: E402

with collector_off(freeze=True):  # (torch's import makes no garbage: no collection need walk it)
    from resumecheck.runner import run_here
    from resumecheck.transport import subprocess_main

if __name__ == "__main__":
    sys.exit(subprocess_main(sys.argv[1], sys.argv[2], run_here))
