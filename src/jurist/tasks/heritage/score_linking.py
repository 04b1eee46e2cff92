"""Scoring of the heritage entity linking: per mention, per text and over the corpus."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from jurist.datasets.heritage import HeritageGoldEntry, linking_gold
from jurist.metrics.heritage.linking import (
    linking_accuracy,
    linking_example_score,
    mean_reciprocal_rank,
    nil_detection_metrics,
)
from jurist.signatures.heritage import HeritageOutput
from jurist.tasks.heritage._stats import mean_present

__all__ = ["LinkingScorer"]


class LinkingScorer:
    """Collects link decisions against the gold mentions; :meth:`summarize` gives Hits@K, MRR, NIL F1.

    Args:
        k_values: K of Hits@K.
    """

    def __init__(self, k_values: Sequence[int] = (1, 5, 10)) -> None:
        self.k_values = k_values
        self.preds: list[dict[str, Any]] = []
        self.gold: list[dict[str, Any]] = []
        self.mention_rows: list[dict[str, Any]] = []
        """One row per scored gold mention (the ``mentions.csv`` table)."""

    def add(self, entry: HeritageGoldEntry, output: HeritageOutput, row: dict[str, Any]) -> None:
        """Score one text's link decisions into ``row`` (mean reciprocal rank) and the mention rows."""
        if "linking" not in output.tasks:
            return
        gold_links = {g.id: g for g in linking_gold([entry])}
        scores_here = []
        for decision in output.links:
            ranked = [c.kb_id for c in decision.candidates]
            self.preds.append({"id": decision.id, "candidates": ranked, "nil": decision.nil})
            g = gold_links.get(decision.id)
            if g is None:
                continue
            score = linking_example_score(g.gold_kb_id, ranked, decision.nil)
            scores_here.append(score)
            top = decision.candidates[0] if decision.candidates else None
            self.mention_rows.append(
                {
                    "id": decision.id,
                    "entry_id": entry.id,
                    "mention": decision.mention,
                    "gold_kb_id": g.gold_kb_id,
                    "top_kb_id": top.kb_id if top else None,
                    "top_label": top.label if top else None,
                    "top_score": top.score if top else None,
                    "predicted_nil": decision.nil,
                    "score": score,
                }
            )
        self.gold += [{"id": g.id, "gold_kb_id": g.gold_kb_id} for g in gold_links.values()]
        row["linking_score"] = mean_present(scores_here)

    def summarize(self) -> tuple[dict[str, Any] | None, dict[str, float | None]]:
        """``(summary["linking"], headline figures)``; ``(None, {})`` when no gold mention was scored."""
        if not self.gold:
            return None, {}
        hits = linking_accuracy(self.preds, self.gold, self.k_values)
        nil = nil_detection_metrics(self.preds, self.gold)
        mrr = mean_reciprocal_rank(self.preds, self.gold)
        summary = {**hits, "mrr": mrr, "nil": nil, "mentions": len(self.gold)}
        return summary, {"linking_hits@1": hits.get("hits@1"), "linking_mrr": mrr, "nil_f1": nil["nil_f1"]}
