"""A verdict derived from several items' outputs: what a panel votes on when a task's verdict
is not one output field.

Most tasks give one verdict per item, an output field, and a jury or ``--repeats`` votes on it.
Some judge one thing through several items and derive the verdict from their outputs together:
a comparison asked in both orders gives one verdict by a swap rule. Such a task returns a
:class:`UnitVerdicts` from :meth:`jurist.tasks.Task.panel_verdicts`; a panel then votes per
**unit** (a group of items) on each member's derived verdict, and a vote without a winner gives
the task's :attr:`~UnitVerdicts.no_decision` verdict.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["UnitVerdicts"]


class UnitVerdicts(ABC):
    """How a task's verdict is derived per unit of items from their outputs.

    Attributes:
        unit_name: What one unit is called in reports (``pair``).
        no_decision: The verdict of a unit whose vote has no winner (a tie for the most votes,
            or no majority); it must be a verdict :meth:`verdict` can give.
    """

    unit_name: str = "unit"
    no_decision: Any = None

    @abstractmethod
    def units(self, dataset: Any) -> dict[str, tuple[str, ...]]:
        """Unit id -> the ids of its items, in the order :meth:`verdict` takes their outputs,
        for the dataset the task read: each of the task's items in exactly one unit."""

    @abstractmethod
    def verdict(self, outputs: Sequence[Mapping[str, Any] | None]) -> Any:
        """The unit's verdict from its items' outputs (``None`` for an item without one), or
        ``None`` when those outputs give none (an item failed)."""
