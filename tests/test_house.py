"""The house stays livable: short functions and classes, no private cross-module imports,
and the phase markers at the bottom of the house.

These read the source with ``ast`` (no import, no torch): they run in well under a second.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "resumecheck"

MAX_FUNCTION_LINES = 60
MAX_CLASS_LINES = 200


def _sources(*folders: Path) -> Iterator[tuple[Path, ast.Module]]:
    for folder in folders:
        for path in sorted(folder.rglob("*.py")):
            yield path, ast.parse(path.read_text(), filename=str(path))


def _where(path: Path, node: ast.AST) -> str:
    return f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', '?')}"


def oversized(path: Path, tree: ast.Module) -> list[str]:
    """``file:line name length`` of each function over 60 lines and class over 200."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            limit = MAX_FUNCTION_LINES
        elif isinstance(node, ast.ClassDef):
            limit = MAX_CLASS_LINES
        else:
            continue
        length = (node.end_lineno or node.lineno) - node.lineno + 1
        if length > limit:
            found.append(f"{_where(path, node)} {node.name} {length} lines (limit {limit})")
    return found


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_imports(path: Path, tree: ast.Module) -> list[str]:
    """Each private name of another resumecheck module that ``path`` uses:
    ``from resumecheck.x import _y``, or ``import resumecheck.x`` (as any name)
    then ``x._y``."""
    found = []
    modules: dict[str, str] = {}  # local name -> resumecheck module it stands for
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("resumecheck"):
            for alias in node.names:
                if _private(alias.name):
                    found.append(f"{_where(path, node)} from {node.module} import {alias.name}")
                else:
                    modules[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "resumecheck":
                    local = alias.asname or alias.name
                    modules[local] = alias.name
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            dotted = ast.unparse(node.value)
            if dotted in modules or dotted.split(".")[0] == "resumecheck":
                found.append(f"{_where(path, node)} {dotted}.{node.attr}")
    return found


def test_no_function_over_60_lines_and_no_class_over_200():
    offenders = [o for path, tree in _sources(PACKAGE) for o in oversized(path, tree)]
    assert not offenders, "too long; split them:\n" + "\n".join(offenders)


def test_no_module_uses_another_modules_private_names():
    offenders = [o for path, tree in _sources(PACKAGE, ROOT / "benchmarks")
                 for o in private_imports(path, tree)]
    assert not offenders, "private names used across modules:\n" + "\n".join(offenders)


def test_the_phase_markers_import_nothing_of_the_house():
    tree = ast.parse((PACKAGE / "phases.py").read_text())
    imported = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    imported += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert not [m for m in imported if m.split(".")[0] in ("resumecheck", "torch")], imported


def test_the_builtin_program_imports_no_engine_or_runs_module():
    tree = ast.parse((PACKAGE / "tiny.py").read_text())
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    ours = {m for m in imported if m and m.startswith("resumecheck")}
    assert ours <= {"resumecheck.components", "resumecheck.program", "resumecheck.phases"}, ours


# The checks themselves must be able to fail: each finds the offender it is shown.

def _parsed(text: str) -> tuple[Path, ast.Module]:
    return PACKAGE / "example.py", ast.parse(text)


def test_the_length_check_names_file_line_name_and_length():
    long_function = "def f():\n" + "    x = 1\n" * 60
    assert oversized(*_parsed(long_function)) == [
        "resumecheck/example.py:1 f 61 lines (limit 60)"]
    assert oversized(*_parsed("def f():\n" + "    x = 1\n" * 59)) == []
    long_class = "class C:\n" + "    x = 1\n" * 200
    assert oversized(*_parsed(long_class)) == ["resumecheck/example.py:1 C 201 lines (limit 200)"]


def test_the_private_import_check_finds_both_shapes():
    assert private_imports(*_parsed("from resumecheck.engine import _Check\n")) == [
        "resumecheck/example.py:1 from resumecheck.engine import _Check"]
    assert private_imports(*_parsed("import resumecheck.runner as r\nr._run_here()\n")) == [
        "resumecheck/example.py:2 r._run_here"]
    assert private_imports(*_parsed("from resumecheck import runner\nrunner._kill()\n")) == [
        "resumecheck/example.py:2 runner._kill"]
    assert private_imports(*_parsed("import resumecheck.runner\nresumecheck.runner._x\n")) == [
        "resumecheck/example.py:2 resumecheck.runner._x"]
    clean = "import os\nfrom resumecheck.runner import run_segment\nos._exit(0)\nself._x = 1\n"
    assert private_imports(*_parsed(clean)) == []


def test_the_architecture_page_names_every_module():
    page = (ROOT / "docs" / "ARCHITECTURE.md").read_text()
    unnamed = [str(p.relative_to(ROOT)) for p in sorted(PACKAGE.rglob("*.py"))
               if p.name != "__init__.py" and p.name not in page]
    assert not unnamed, "docs/ARCHITECTURE.md does not place: " + ", ".join(unnamed)
