"""What a jury (or ``--repeats``) of a YAML pairwise task votes on: each member's verdict per
row after the swap rule.

A row of a pairwise YAML task is judged in both orders, two runner items ``ID|AB`` (as
given) and ``ID|BA`` (responses exchanged). A member's verdict on the row is the task's own
combined verdict (:func:`jurist.metrics.preference.combined_verdict` of the two orders'
winners): ``A`` or ``B`` when both orders name the same response, ``tie`` when they differ
or both say tie (a judge that always picks the first position gives ``tie``), and none when
an order failed. A vote without a winner gives ``tie``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from jurist.metrics import preference
from jurist.tasks._unit_verdicts import UnitVerdicts
from jurist.tasks.declarative.data import DeclarativeDataset

__all__ = ["PairRowVerdicts"]

_ORDERS = ("AB", "BA")


class PairRowVerdicts(UnitVerdicts):
    """Per data row, the verdict (``A``, ``B`` or ``tie``) of both orders' answers."""

    unit_name = "pair"
    no_decision = "tie"

    def units(self, dataset: DeclarativeDataset) -> dict[str, tuple[str, ...]]:
        """Each row's two orders, ``ID|AB`` then ``ID|BA``."""
        return {row.id: tuple(f"{row.id}|{order}" for order in _ORDERS) for row in dataset.rows}

    def verdict(self, outputs: Sequence[Mapping[str, Any] | None]) -> Any:
        """``A``, ``B`` or ``tie`` from the answers in the given and the swapped order, or
        ``None`` when either has none.

        Examples:
            >>> rows = PairRowVerdicts()
            >>> [rows.verdict([{"verdict": a}, {"verdict": b}]) for a, b in ("AB", "AA", "BA")]
            ['A', 'tie', 'B']
            >>> rows.verdict([{"verdict": "tie"}, {"verdict": "tie"}]), rows.verdict([{"verdict": "A"}, None])
            ('tie', None)
        """
        winners = []
        for output, order in zip(outputs, _ORDERS, strict=True):
            choice = output.get("verdict") if output else None
            winners.append(preference.winner(choice, order) if isinstance(choice, str) else None)
        return preference.combined_verdict(winners[0], winners[1])
