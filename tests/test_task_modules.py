"""A task's modules in the kind folders import no other task's modules there.

The import-linter contract "Task packages are independent" covers ``jurist.tasks.<name>``;
this covers the task-named modules of ``programs/``, ``signatures/``, ``datasets/`` and
``metrics/`` (a module's task is read from its name), which that contract cannot see. What
two tasks share lives in a task-neutral module (``programs/_lexical.py``, ``metrics/_arrays.py``).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "jurist"
KINDS = ("programs", "signatures", "datasets", "metrics")
# Module name prefix -> the task that owns it; a module no prefix matches is task-neutral.
OWNERS = {
    "ragbench": "ragbench",
    "pairwise": "pairwise",
    "alpaca_eval": "pairwise",
    "rgb": "rgb",
    "gates": "gates",
    "heritage": "heritage",
}


def _owner(relative: str) -> str | None:
    """The task owning a module given by its dotted name inside its kind folder."""
    head = relative.split(".")[0]
    return next((task for prefix, task in OWNERS.items() if head.startswith(prefix)), None)


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


@pytest.mark.parametrize("kind", KINDS)
def test_no_task_module_imports_another_tasks_module_of_its_kind(kind: str) -> None:
    folder = SRC / kind
    crossings = []
    for path in sorted(folder.rglob("*.py")):
        relative = ".".join(path.relative_to(folder).with_suffix("").parts)
        owner = _owner(relative)
        if owner is None:
            continue
        for name in sorted(_imports(path)):
            prefix = f"jurist.{kind}."
            if name.startswith(prefix) and _owner(name[len(prefix) :]) not in (None, owner):
                crossings.append(f"{kind}/{relative} ({owner}) imports {name}")
    assert crossings == []


def test_a_neutral_module_is_not_read_as_a_task() -> None:
    assert _owner("_lexical") is None
    assert _owner("ragbench_baseline") == "ragbench"
    assert _owner("heritage.linking") == "heritage"
