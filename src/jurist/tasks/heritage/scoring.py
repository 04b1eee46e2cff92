"""Scoring of a heritage run: every metric of the heritage evaluation framework, and its targets.

:class:`HeritagePass` is one pass over the recorded results of a run (no model is called):
the heritage task's scoring parts (its ``item_row``, ``summarize`` and ``extras``) hand
each scored text to one scorer per sub-task (:mod:`~jurist.tasks.heritage.scorers`), which
compute per-text figures and the corpus metrics with the pure functions of
:mod:`jurist.metrics.heritage` (``ner`` and its siblings). The framework's target table
gives pass/fail per row. :func:`~jurist.tasks.heritage.rescoring.score_heritage` is the task's
score with settings that are no option of the task (a similarity function for QA relevance,
the K of the metrics).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from jurist.datasets.heritage.conll import TagDecoding
from jurist.datasets.heritage.gold import HeritageGold, load_heritage_gold, retrieval_qrels
from jurist.errors import InputError
from jurist.metrics.heritage.retrieval import EmptyQueries
from jurist.schemas import ItemResult, Usage
from jurist.signatures.heritage import HeritageOutput
from jurist.tasks._contract import Scores
from jurist.tasks.heritage.scorers import (
    ClassificationScorer,
    LinkingScorer,
    NerScorer,
    QAScorer,
    RetrievalScorer,
)

__all__ = ["TARGETS", "HeritagePass", "HeritageScores", "target_rows", "target_table"]

TARGETS: tuple[tuple[str, str, str, float, float], ...] = (
    ("NER (strict)", "F1", "ner_strict_f1", 0.85, 0.92),
    ("NER (partial)", "F1", "ner_partial_f1", 0.90, 0.95),
    ("Type Classification", "Accuracy", "type_accuracy", 0.80, 0.85),
    ("Type Classification", "Macro-F1", "type_macro_f1", 0.75, 0.80),
    ("Entity Linking", "Hits@1", "linking_hits@1", 0.70, 0.75),
    ("Entity Linking", "MRR", "linking_mrr", 0.75, 0.82),
    ("NIL Detection", "F1", "nil_f1", 0.65, 0.72),
    ("Retrieval", "NDCG@10", "retrieval_ndcg@10", 0.60, 0.68),
    ("Retrieval", "MRR", "retrieval_mrr", 0.55, 0.62),
    ("QA Faithfulness", "Score", "qa_faithfulness", 0.80, 0.85),
    ("QA Relevance", "Score", "qa_relevance", 0.75, 0.82),
)
"""The framework's target table: (task, metric, summary key, target, state of the art)."""


@dataclass
class HeritageScores(Scores):
    """Scores of a heritage run.

    Attributes:
        items: One row per judged text (status, per-text metrics, failure details).
        summary: Every corpus-level metric (as in ``summary.json``).
        report: The Markdown report (``report.md``).
        mentions: One row per linked mention (gold id, top candidate, NIL decisions).
        targets: The framework's target table with value, target and pass/fail per row.
    """

    mentions: pd.DataFrame = field(default_factory=pd.DataFrame)
    targets: pd.DataFrame = field(default_factory=pd.DataFrame)


def target_rows(metrics: Mapping[str, float | None]) -> list[dict[str, Any]]:
    """The framework's target table as records: the run's value and pass/fail per target.

    ``status`` is ``pass`` (value ≥ target), ``fail``, or ``not measured`` (no value, e.g.
    QA relevance without a similarity function, or a task that was not run).
    """
    rows = []
    for task, metric, key, target, sota in TARGETS:
        value = metrics.get(key)
        status = "not measured" if value is None else ("pass" if value >= target else "fail")
        rows.append(
            {
                "task": task,
                "metric": metric,
                "key": key,
                "value": value,
                "target": target,
                "state_of_art": sota,
                "status": status,
            }
        )
    return rows


def target_table(metrics: Mapping[str, float | None]) -> pd.DataFrame:
    """:func:`target_rows` as a DataFrame."""
    return pd.DataFrame(target_rows(metrics))


class HeritagePass:
    """One pass over a heritage run's results: each text scored into its item row by the
    sub-task scorers (:meth:`row`), then the corpus metrics and the target table of what
    they collected (:meth:`summary`), and the mention table (:meth:`mentions`).

    Args:
        run: The run directory or ``results.jsonl`` scored (named in errors).
        manifest: The run's manifest (``{}`` for a results file on its own).
        gold: The heritage gold file (default: the one the run was made from).
        tags: How a token-tag gold file is decoded (default: as the run recorded, else lenient).
        k_values: K of linking Hits@K.
        retrieval_k: K of NDCG/P/R@K.
        similarity: Optional ``f(question, answer) -> [0, 1]`` for QA relevance.
        empty_queries: Retrieval queries without a relevant document: ``zero`` or ``drop``.

    Raises:
        InputError: No gold file given and none recorded in the run, or a bad gold file.
    """

    def __init__(
        self,
        run: Path,
        manifest: Mapping[str, Any],
        gold: str | Path | None = None,
        *,
        tags: TagDecoding | None = None,
        k_values: Sequence[int] = (1, 5, 10),
        retrieval_k: Sequence[int] = (5, 10, 20),
        similarity: Callable[[str, str], float] | None = None,
        empty_queries: EmptyQueries = "zero",
    ) -> None:
        dataset = manifest.get("dataset") or {}
        gold_path = gold or dataset.get("path")
        if gold_path is None:
            raise InputError("no gold file given and none recorded in the run", path=run, field="gold")
        recorded_tags = dataset.get("tags")
        if tags is None and recorded_tags:
            tags = TagDecoding(recorded_tags["mode"], recorded_tags.get("scheme"))
        self.gold: HeritageGold = load_heritage_gold(gold_path, tags=tags)
        self.by_id = self.gold.by_id()
        recorded = dataset.get("heritage") or {}
        self.ner = NerScorer(recorded.get("labels"), self.gold.tags.describe() if self.gold.tags else None)
        self.classification = ClassificationScorer()
        self.linking = LinkingScorer(k_values)
        self.qa = QAScorer(similarity)
        self.retrieval = RetrievalScorer(retrieval_qrels(self.gold.entries), retrieval_k, empty_queries)
        self.usage = Usage()
        self.headline: dict[str, float | None] = {}
        """The headline figures of the last :meth:`summary` (the target table's values)."""

    def row(self, result: ItemResult) -> dict[str, Any]:
        """The item row of one recorded result: status and usage, whether its text is in the
        gold, and each sub-task's per-text figures when it was judged."""
        self.usage = self.usage.add(result.usage)
        row = result.table_row()
        entry = self.by_id.get(result.id)
        row["in_gold"] = entry is not None
        if result.status == "ok" and entry is not None:
            output = HeritageOutput.model_validate(result.output)
            # In the order of the items' columns.
            for scorer in (self.ner, self.classification, self.linking, self.qa, self.retrieval):
                scorer.add(entry, output, row)
        return row

    def summary(self, items: pd.DataFrame) -> dict[str, Any]:
        """The figures of the rows made (``items``, their table): the gold texts not judged,
        the results not in gold, usage, the gold file, each scored sub-task's metrics, the
        headline figures and the target table."""
        ok = items[items["status"] == "ok"]
        judged_ids = set(items["id"])
        in_gold = items.get("in_gold", pd.Series(dtype=bool)).fillna(True).astype(bool)
        summary: dict[str, Any] = {
            "missing": len([e for e in self.gold.entries if e.id not in judged_ids]),
            "not_in_gold": int((~in_gold).sum()),
            "usage": self.usage.model_dump(),
            "gold": {"path": str(self.gold.path), "sha256": self.gold.sha256, "entries": len(self.gold)},
        }
        headline: dict[str, float | None] = {}
        parts = (
            ("ner", self.ner.summarize(ok)),
            ("classification", self.classification.summarize()),
            ("linking", self.linking.summarize()),
            ("retrieval", self.retrieval.summarize()),
            ("qa", self.qa.summarize()),
        )
        for name, (part, figures) in parts:
            if part is not None:
                summary[name] = part
                headline.update(figures)
        summary["headline"] = headline
        summary["targets"] = target_rows(headline)
        self.headline = headline
        return summary

    def mentions(self) -> pd.DataFrame:
        """One row per linked gold mention (``mentions.csv``)."""
        return pd.DataFrame(self.linking.mention_rows)
