"""The framework tables' measurements (docs/FRAMEWORKS.md), for the tests that read them
(a module of its own: the cache below is test state, and a check of a program
whose modules reach it would see it change between checks, as module state)."""

import functools
import importlib
import re
import sys

from tests.frameworks_loop_programs import EXAMPLES, ROOT


def example(name: str):
    """A module of examples/frameworks, imported from there."""
    sys.path.insert(0, str(EXAMPLES))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(EXAMPLES))


def _make_table():
    return example("make_table")


@functools.cache
def measured(target: str):
    """The table's measurement of one example target (``make_table.measure``,
    no noise seed): the full resume's RunResult, made once per process and read by
    the table's test and by the tests that assert more of the same run (read only)."""
    return _make_table().measure(target, noise_seeds=0)


def check_table_rows(framework: str) -> None:
    make_table = _make_table()
    readme = (ROOT / "docs" / "FRAMEWORKS.md").read_text()
    rows = [r for r in make_table.ROWS if r[0] == framework]
    assert rows
    for name, setting, target in rows:
        line = next(ln for ln in readme.splitlines() if ln.startswith(f"| {name} | {setting} |"))
        measured_row = make_table.columns(name, setting, measured(target))
        assert line.split(" | ")[2:4] == measured_row[2:4], (setting, line)
        # the cause too (a trial found six causes stale), but for the noise clause:
        # the table is measured with a noise run, this check without
        shown = _without_noise(line.split(" | ", 4)[4].removesuffix(" |"))
        assert shown == _without_noise(measured_row[4]), (setting, shown, measured_row[4])


def _without_noise(cause: str) -> str:
    return re.sub(r"; loss (stays within|leaves) (the )?seed-to-seed [^;]*", "", cause)
