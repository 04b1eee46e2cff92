"""Scoring of the heritage entity extraction: per text and over the corpus."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from jurist.datasets.heritage import HeritageGoldEntry
from jurist.metrics.heritage.ner import (
    corpus_entity_level_metrics,
    corpus_token_level_metrics,
    entity_example_f1,
    nervaluate_metrics,
    type_distribution_analysis,
)
from jurist.signatures.heritage import HeritageOutput

__all__ = ["NerScorer"]

Span = tuple[int, int, str]


class NerScorer:
    """Collects the entities of scored texts; :meth:`summarize` gives the corpus metrics.

    Args:
        labels: The entity types of the run (``None``: the types found in gold and predictions).
        tags: How a token-tag gold file was decoded (``{"mode", "scheme"}``), shown in the report.
    """

    def __init__(self, labels: Sequence[str] | None = None, tags: dict[str, Any] | None = None) -> None:
        self.labels = labels
        self.tags = tags
        self.docs: list[tuple[str, list[Span], list[Span]]] = []
        self.all_pred: list[Span] = []
        self.all_gold: list[Span] = []

    def add(self, entry: HeritageGoldEntry, output: HeritageOutput, row: dict[str, Any]) -> None:
        """Score one text's entities into ``row`` (strict and partial F1, counts)."""
        if "ner" not in output.tasks:
            return
        self.add_spans(entry, [(e.start, e.end, e.type) for e in output.entities], row)
        row["flagged_entities"] = len(output.flagged_entities)
        row["reanchored_entities"] = sum(e.anchoring == "re-anchored" for e in output.entities)

    def add_spans(self, entry: HeritageGoldEntry, pred: list[Span], row: dict[str, Any]) -> None:
        """Score one text's predicted ``(start, end, type)`` spans into ``row``."""
        self.docs.append((entry.text, entry.spans(), pred))
        self.all_pred += pred
        self.all_gold += entry.spans()
        row["ner_strict_f1"] = entity_example_f1(entry.spans(), pred)
        row["ner_partial_f1"] = entity_example_f1(entry.spans(), pred, match_type="partial")
        row["entities"] = len(pred)

    def summarize(self, ok: pd.DataFrame) -> tuple[dict[str, Any] | None, dict[str, float | None]]:
        """``(summary["ner"], headline figures)``; ``(None, {})`` when no text was scored.

        Args:
            ok: The per-item rows of the scored texts (for the flagged and re-anchored counts).
        """
        if not self.docs:
            return None, {}
        strict = corpus_entity_level_metrics(self.docs, "strict", labels=self.labels)
        partial = corpus_entity_level_metrics(self.docs, "partial", labels=self.labels)
        summary = {
            "texts": len(self.docs),
            "strict": strict,
            "partial": partial,
            "token": corpus_token_level_metrics(self.docs, labels=self.labels),
            "nervaluate": nervaluate_metrics(self.docs, labels=self.labels),
            "type_distribution": type_distribution_analysis(self.all_pred, self.all_gold),
            "flagged_entities": int(ok.get("flagged_entities", pd.Series(dtype=float)).fillna(0).sum()),
            "reanchored_entities": int(ok.get("reanchored_entities", pd.Series(dtype=float)).fillna(0).sum()),
        }
        if self.tags is not None:
            summary["tags"] = self.tags
        return summary, {"ner_strict_f1": strict["f1"], "ner_partial_f1": partial["f1"]}
