"""``python -m resumecheck``: the same as the ``resumecheck`` command."""

from resumecheck.cli import entrypoint

if __name__ == "__main__":
    entrypoint()
