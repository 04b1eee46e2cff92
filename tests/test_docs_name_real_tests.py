"""Every test the docs name exists: the fault matrix of docs/reliability.md is a promise per row.

A doc names tests as `` `tests/path.py::test_name` ``, and further tests of the same file as
`` `::test_other` `` after it; a parametrized id's ``[...]`` is left out. Each named file must
exist and define each named test function (at module level or in a test class).
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "docs" / "reliability.md", ROOT / "docs" / "scale.md"]
_NAME = re.compile(r"`(tests/[\w/]+\.py)?((?:::[A-Za-z_]\w*)*)(?:\[[^`]*\])?`")


@cache
def _tests_in(path: Path) -> frozenset[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.ClassDef):
            names.add(node.name)
            names.update(
                f"{node.name}::{item.name}" for item in node.body if isinstance(item, ast.FunctionDef)
            )
    return frozenset(names)


def named_tests(text: str) -> list[tuple[str, str | None]]:
    """``(file, test)`` for every test a Markdown text names (``test`` ``None``: a whole file).

    Examples:
        >>> named_tests("`tests/a.py::test_x`, `::test_y[1]` and `tests/b.py`")
        [('tests/a.py', 'test_x'), ('tests/a.py', 'test_y'), ('tests/b.py', None)]
    """
    found: list[tuple[str, str | None]] = []
    current: str | None = None
    for match in _NAME.finditer(text):
        path, tail = match.group(1), match.group(2).lstrip(":")
        if path is None and not tail:
            continue
        if path is not None:
            current = path
        if current is None:
            continue
        found.append((current, tail or None))
    return found


@pytest.mark.parametrize("doc", DOCS, ids=lambda path: path.name)
def test_every_test_a_doc_names_exists(doc: Path) -> None:
    named = named_tests(doc.read_text(encoding="utf-8"))
    assert named, f"{doc.name} names no test"
    missing = []
    for path, test in named:
        file = ROOT / path
        if not file.is_file():
            missing.append(path)
        elif test is not None and test not in _tests_in(file):
            missing.append(f"{path}::{test}")
    assert not missing, f"{doc.name} names tests that do not exist: {missing}"


def test_the_fault_matrix_names_a_test_on_every_row() -> None:
    text = (ROOT / "docs" / "reliability.md").read_text(encoding="utf-8")
    matrix = text[text.index("## The fault matrix") :]
    rows = [
        line for line in matrix.splitlines() if line.startswith("| ") and not line.startswith("| fault |")
    ]
    assert len(rows) > 40
    without = [row[:80] for row in rows if "`tests/" not in row.rsplit(" | ", 1)[-1]]
    assert not without, f"fault-matrix rows without a test: {without}"
