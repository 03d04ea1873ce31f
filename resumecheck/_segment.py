"""``python -m resumecheck._segment SPEC OUT``: run one segment in a fresh interpreter."""

import sys

from resumecheck.runner import _subprocess_main

if __name__ == "__main__":
    sys.exit(_subprocess_main(sys.argv[1], sys.argv[2]))
