"""A new interpreter imports torch with the garbage collector off, and leaves
what the import made out of every later collection (``heap.collector_off``):
none of it ever becomes garbage, and each full collection would walk it all
again, during the import and during the check that follows.

Each case runs in an interpreter of its own: a freeze lasts for the process.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap


def _python(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_what_is_made_inside_is_frozen_and_the_collector_is_on_again():
    out = _python("""
        import gc
        from resumecheck.heap import collector_off

        before = gc.get_freeze_count()
        with collector_off(freeze=True):
            made = [[i] for i in range(50_000)]
            print(gc.isenabled())
        print(gc.get_freeze_count() - before >= 50_000, gc.isenabled())

        with collector_off():  # not asked to freeze: nothing more is frozen
            more = [[i] for i in range(50_000)]
        frozen = gc.get_freeze_count()
        print(gc.get_freeze_count() == frozen, gc.isenabled())
    """)
    assert out.split() == ["False", "True", "True", "True", "True"]


def test_a_failed_import_freezes_nothing_and_a_collector_already_off_stays_off():
    out = _python("""
        import gc
        from resumecheck.heap import collector_off

        before = gc.get_freeze_count()
        try:
            with collector_off(freeze=True):
                made = [[i] for i in range(10_000)]
                raise ImportError("no torch here")
        except ImportError:
            pass
        print(gc.get_freeze_count() == before, gc.isenabled())

        gc.disable()
        with collector_off(freeze=True):  # (nested in one that is off: untouched)
            made = [[i] for i in range(10_000)]
        print(gc.get_freeze_count() == before, gc.isenabled())
    """)
    assert out.split() == ["True", "True", "True", "False"]


def test_the_command_imports_torch_with_the_collector_off_and_freezes_it():
    """The command's first import of torch (here one that then stops at a usage
    error, before any check) leaves torch's objects frozen and the collector on."""
    out = _python("""
        import gc
        from resumecheck.cli import main

        code = main(["run", "resumecheck.tiny:TARGET", "--steps", "2", "--resume-at", "7"])
        print(code, "torch" in __import__("sys").modules, gc.get_freeze_count() > 100_000,
              gc.isenabled())
    """)
    assert out.splitlines()[-1].split() == ["2", "True", "True", "True"]


def test_timing_leaves_the_collector_as_the_programs_own_script_has_it():
    """`timing` measures the step as the program's own script runs it: torch's
    objects stay where a collection walks them (here it stops at a usage error,
    after its first import of torch)."""
    out = _python("""
        import gc
        from resumecheck.cli import main

        code = main(["timing", "resumecheck.tiny:TARGET", "--steps", "1", "--threads", "0"])
        print(code, "torch" in __import__("sys").modules, gc.get_freeze_count(), gc.isenabled())
    """)
    assert out.splitlines()[-1].split() == ["2", "True", "0", "True"]
