"""What a jury (or ``--repeats``) of the pairwise task votes on: each member's verdict per pair
after the swap rule.

A pair is one comparison asked in both orders, two runner items: ``ID|12`` and ``ID|21`` for a
pairs file, the two orders' ``cmp_index`` for a SubEval table (the unit is named by the first
order's). A member's verdict on the pair is the task's own two-order verdict
(:func:`jurist.metrics.pairwise.subeval.pair_verdicts`): the choices mapped back to the original
numbering, ``1`` or ``2`` when both orders agree, ``tie`` when they pick a tie option in both
orders or disagree (a judge that always picks the first slot gives ``tie``), and none when an
order failed. A vote without a winner gives ``tie``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from jurist.metrics.pairwise.subeval import pair_verdicts
from jurist.tasks._unit_verdicts import UnitVerdicts
from jurist.tasks.pairwise.gold import ORDERS
from jurist.tasks.pairwise.run import PairwiseData

__all__ = ["SwapVerdicts"]


class SwapVerdicts(UnitVerdicts):
    """Per pair, the verdict (``1``, ``2`` or ``tie``) of both orders' choices by the swap rule."""

    unit_name = "pair"
    no_decision = "tie"

    def units(self, dataset: PairwiseData) -> dict[str, tuple[str, ...]]:
        """Each pair's two judged orders (a SubEval comparison of identical answers is not judged)."""
        judged = {item.id for item in dataset.items}
        if dataset.kind == "pairs":
            ids = [str(pair_id) for pair_id in dataset.frame["id"]]
            found = {pair_id: tuple(f"{pair_id}|{order}" for order in ORDERS) for pair_id in ids}
        else:
            frame = dataset.frame
            first = frame[frame["order"] == 1]
            second = frame[frame["order"] == 2].set_index(["index", "A", "B"])["cmp_index"]
            found = {
                str(row.cmp_index): (str(row.cmp_index), str(second[(row.index, row.B, row.A)]))
                for row in first.itertuples(index=False)
            }
        return {unit: items for unit, items in found.items() if all(item in judged for item in items)}

    def verdict(self, outputs: Sequence[Mapping[str, Any] | None]) -> Any:
        """``1``, ``2`` or ``tie`` from the choices of the original and the swapped order (in
        that order), or ``None`` when either has none.

        Examples:
            >>> swap = SwapVerdicts()
            >>> [swap.verdict([{"choice": a}, {"choice": b}]) for a, b in ("AB", "BA", "AA", "CC")]
            ['1', '2', 'tie', 'tie']
            >>> swap.verdict([{"choice": "A"}, None]) is None
            True
        """
        first, second = (output.get("choice") if output else None for output in outputs)
        judged = pair_verdicts(pd.DataFrame({"choice_12": [first], "choice_21": [second]}, dtype=object))
        verdict = judged["verdict"].iloc[0]
        return verdict if isinstance(verdict, str) else None
