"""Scoring of the heritage custodian type classification: per text and over the corpus."""

from __future__ import annotations

from typing import Any

from jurist.datasets.heritage import HeritageGoldEntry
from jurist.metrics.heritage.classification import (
    hierarchical_type_metrics,
    secondary_type_metrics,
    type_classification_metrics,
    type_confusion_analysis,
)
from jurist.signatures.heritage import HeritageOutput

__all__ = ["ClassificationScorer"]


class ClassificationScorer:
    """Collects gold and predicted custodian types; :meth:`summarize` gives the corpus metrics."""

    def __init__(self) -> None:
        self.y_true: list[str] = []
        self.y_pred: list[str] = []
        self.sec_true: list[list[str]] = []
        self.sec_pred: list[list[str]] = []

    def add(self, entry: HeritageGoldEntry, output: HeritageOutput, row: dict[str, Any]) -> None:
        """Score one text's type into ``row`` (gold, predicted, correct as 1.0/0.0 and as
        ``type_agrees``); texts without gold are skipped."""
        if "classification" not in output.tasks or not output.classification or not entry.type_classification:
            return
        self.y_true.append(entry.type_classification.primary_type)
        self.y_pred.append(output.classification.primary_type)
        self.sec_true.append(list(entry.type_classification.secondary_types))
        self.sec_pred.append(list(output.classification.secondary_types))
        row["gold_type"] = self.y_true[-1]
        row["pred_type"] = self.y_pred[-1]
        row["type_correct"] = float(self.y_true[-1] == self.y_pred[-1])
        row["type_agrees"] = self.y_true[-1] == self.y_pred[-1]

    def summarize(self) -> tuple[dict[str, Any] | None, dict[str, float | None]]:
        """``(summary["classification"], headline figures)``; ``(None, {})`` when no type was scored."""
        if not self.y_true:
            return None, {}
        metrics = type_classification_metrics(self.y_true, self.y_pred)
        summary = {
            **metrics,
            "confusions": type_confusion_analysis(self.y_true, self.y_pred),
            "hierarchy": hierarchical_type_metrics(self.y_true, self.y_pred),
            "secondary_types": secondary_type_metrics(self.sec_true, self.sec_pred),
        }
        return summary, {"type_accuracy": metrics["accuracy"], "type_macro_f1": metrics["macro_f1"]}
