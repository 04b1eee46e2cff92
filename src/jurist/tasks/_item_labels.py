"""An item's output as several labelled keys: what a panel votes on when one item carries many
labels.

Most tasks give one verdict per item, an output field, and a jury or ``--repeats`` votes on it
(one label kind, one key). Some label many things in one item: RAGBench labels every document
sentence relevant or not and utilized or not, and every response sentence supported or not,
and its scores (TRACe) follow from those labels. Such a task returns an :class:`ItemLabels`
from :meth:`jurist.tasks.Task.panel_labels`; a panel then votes per **key** of each **label
kind** (each document sentence's ``relevant`` label, each response sentence's ``supported``
label, ...), and the task composes the voted labels back into an output it scores as any other,
so its figures are recomputed from the voted labels by its own scoring.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["ItemLabels", "Labels"]

Labels = dict[str, dict[str, Any]]
"""Label kind -> key -> label (text, a bool or a finite number)."""


class ItemLabels(ABC):
    """How one item's output breaks into labelled keys, and how voted labels make an output.

    Attributes:
        kinds: The label kinds, in the order reports list them (``relevant``, ``supported``).
        numeric: The labels are numbers a ``mean`` or ``median`` may aggregate (else a panel
            takes the ``majority`` or ``plurality`` of each key).
    """

    kinds: tuple[str, ...] = ()
    numeric: bool = False

    @abstractmethod
    def labels(self, inputs: Mapping[str, Any], output: Mapping[str, Any]) -> Labels:
        """The labels of one answered item: for each of :attr:`kinds`, every key of the item
        (the universe of keys comes from the item's ``inputs``, so every member of a panel gives
        the same keys) -> the label ``output`` gives it."""

    @abstractmethod
    def compose(
        self, inputs: Mapping[str, Any], voted: Labels, outputs: Sequence[Mapping[str, Any]]
    ) -> dict[str, Any]:
        """The item's output holding the ``voted`` labels (a key no member labelled is absent),
        as the task records and scores an output. ``outputs`` are the outputs of the members who
        answered the item, in panel order, for what is not voted (explanations, say)."""
