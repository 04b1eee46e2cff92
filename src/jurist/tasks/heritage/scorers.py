"""The per-sub-task scorers of the heritage run: the glue between its gold, its outputs and the
formulas of :mod:`jurist.metrics.heritage`.

Each scorer collects what one sub-task needs while :mod:`~jurist.tasks.heritage.scoring` walks
the scored texts (``add``: one text's per-item figures into its row) and then gives the corpus
metrics (``summarize``: ``(summary[sub-task], headline figures)``, ``(None, {})`` when nothing
of that sub-task was scored): :class:`NerScorer` (entity extraction), :class:`ClassificationScorer`
(custodian type), :class:`LinkingScorer` (entity linking), :class:`RetrievalScorer` (BM25
retrieval for the gold questions) and :class:`QAScorer` (question answering).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd

from jurist.datasets.heritage.gold import HeritageGoldEntry, linking_gold
from jurist.metrics.heritage.classification import (
    hierarchical_type_metrics,
    secondary_type_metrics,
    type_classification_metrics,
    type_confusion_analysis,
)
from jurist.metrics.heritage.linking import (
    linking_accuracy,
    linking_example_score,
    mean_reciprocal_rank,
    nil_detection_metrics,
)
from jurist.metrics.heritage.ner import (
    corpus_entity_level_metrics,
    corpus_token_level_metrics,
    entity_example_f1,
    nervaluate_metrics,
    type_distribution_analysis,
)
from jurist.metrics.heritage.qa import factual_accuracy, faithfulness, rouge_scores
from jurist.metrics.heritage.retrieval import (
    EmptyQueries,
    ndcg_at_k,
    retrieval_metrics,
    retrieval_source_analysis,
)
from jurist.signatures.heritage import HeritageOutput, QAAnswer

__all__ = [
    "ClassificationScorer",
    "LinkingScorer",
    "NerScorer",
    "QAScorer",
    "RetrievalScorer",
    "mean_present",
    "score_answers",
]

Span = tuple[int, int, str]
Similarity = Callable[[str, str], float]


def mean_present(values: Sequence[float | None]) -> float | None:
    """The mean of the values that are not ``None`` (``None`` when there are none)."""
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


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


class RetrievalScorer:
    """Collects rankings of judged queries; :meth:`summarize` gives NDCG/P/R@K and MRR.

    Args:
        qrels: ``{query_id: {doc_id: grade}}`` (:func:`~jurist.datasets.heritage.retrieval_qrels`).
        retrieval_k: K of NDCG/P/R@K.
        empty_queries: Queries without a relevant document: ``zero`` (counted, ir-measures'
            convention) or ``drop`` (left out); see
            :func:`~jurist.metrics.heritage.retrieval.retrieval_metrics`.
    """

    def __init__(
        self,
        qrels: Mapping[str, dict[str, int]],
        retrieval_k: Sequence[int] = (5, 10, 20),
        empty_queries: EmptyQueries = "zero",
    ) -> None:
        self.qrels = qrels
        self.retrieval_k = retrieval_k
        self.empty_queries = empty_queries
        self.queries: list[dict[str, Any]] = []

    def add(self, entry: HeritageGoldEntry, output: HeritageOutput, row: dict[str, Any]) -> None:
        """Score one text's rankings into ``row`` (mean NDCG@10 of its judged queries)."""
        if "retrieval" not in output.tasks:
            return
        ndcgs = []
        for retrieved in output.retrieval:
            judged = self.qrels.get(retrieved.id)
            if judged is None:
                continue
            ranking = [r.model_dump() for r in retrieved.results]
            self.queries.append({"id": retrieved.id, "results": ranking, "qrels": judged})
            ndcgs.append(ndcg_at_k([r["doc_id"] for r in ranking], judged, 10))
        row["retrieval_ndcg@10"] = mean_present(ndcgs)

    def summarize(self) -> tuple[dict[str, Any] | None, dict[str, float | None]]:
        """``(summary["retrieval"], headline figures)``; ``(None, {})`` when no query was judged."""
        if not self.queries:
            return None, {}
        metrics = retrieval_metrics(self.queries, self.retrieval_k, empty_queries=self.empty_queries)
        summary = {**metrics, "sources": retrieval_source_analysis(self.queries)}
        return summary, {"retrieval_ndcg@10": metrics.get("ndcg@10"), "retrieval_mrr": metrics.get("mrr")}


def score_answers(
    entry: HeritageGoldEntry, answers: Sequence[QAAnswer], similarity: Similarity | None
) -> list[dict[str, Any]]:
    """One row per answer: its gold pair (``None`` for an unknown question id), ROUGE-1/2/L,
    faithfulness to the text (and strict), relevance (with ``similarity``), ungrounded quotes."""
    pairs = {f"{entry.id}#q{i}": pair for i, pair in enumerate(entry.qa_pairs)}
    rows: list[dict[str, Any]] = []
    for answer in answers:
        pair = pairs.get(answer.id)
        if pair is None:
            rows.append({"pair": None, "rouge1": None, "rouge2": None, "rougeL": None, "faithfulness": None,
                         "faithfulness_strict": None, "relevance": None, "ungrounded": 0})  # fmt: skip
            continue
        rouge = rouge_scores(answer.answer, pair.answer)
        rows.append(
            {
                "pair": pair,
                **rouge,
                "faithfulness": faithfulness(answer.answer, entry.text),
                "faithfulness_strict": faithfulness(answer.answer, entry.text, min_supported_fraction=1.0),
                "relevance": similarity(answer.question, answer.answer) if similarity else None,
                "ungrounded": len(answer.ungrounded_facts),
            }
        )
    return rows


class QAScorer:
    """Collects scored answers; :meth:`summarize` gives ROUGE, faithfulness, factual accuracy.

    Args:
        similarity: Optional ``f(question, answer) -> [0, 1]`` for QA relevance (else not measured).
    """

    def __init__(self, similarity: Similarity | None = None) -> None:
        self.similarity = similarity
        self.answers: list[dict[str, Any]] = []
        self.claims: list[str] = []
        self.facts_correct = 0
        self.facts_total = 0

    def add(self, entry: HeritageGoldEntry, output: HeritageOutput, row: dict[str, Any]) -> None:
        """Score one text's answers into ``row`` (mean ROUGE-L and faithfulness)."""
        if "qa" not in output.tasks:
            return
        qa_rows = score_answers(entry, output.answers, self.similarity)
        self.answers += qa_rows
        for answer, qa_row in zip(output.answers, qa_rows, strict=True):
            pair = qa_row["pair"]
            if pair is None:
                continue
            facts = factual_accuracy(answer.supporting_facts, pair.supporting_facts)
            self.facts_correct += facts["correct_claims"]
            self.facts_total += facts["correct_claims"] + facts["incorrect_claims"]
            self.claims += answer.supporting_facts
        row["qa_rougeL"] = mean_present([r["rougeL"] for r in qa_rows])
        row["qa_faithfulness"] = mean_present([r["faithfulness"] for r in qa_rows])

    def summarize(self) -> tuple[dict[str, Any] | None, dict[str, float | None]]:
        """``(summary["qa"], headline figures)``; ``(None, {})`` when no text's answers were scored."""
        if not self.answers:
            return None, {}
        scored = [r for r in self.answers if r["pair"] is not None]
        summary = {
            "answers": len(scored),
            "rouge1": mean_present([r["rouge1"] for r in scored]),
            "rouge2": mean_present([r["rouge2"] for r in scored]),
            "rougeL": mean_present([r["rougeL"] for r in scored]),
            "faithfulness": mean_present([r["faithfulness"] for r in scored]),
            "faithfulness_strict": mean_present([r["faithfulness_strict"] for r in scored]),
            "relevance": mean_present([r["relevance"] for r in scored]),
            "factual_accuracy": self.facts_correct / self.facts_total if self.facts_total else None,
            "supporting_facts": len(self.claims),
            "ungrounded_facts": sum(r["ungrounded"] for r in scored),
        }
        return summary, {"qa_faithfulness": summary["faithfulness"], "qa_relevance": summary["relevance"]}
