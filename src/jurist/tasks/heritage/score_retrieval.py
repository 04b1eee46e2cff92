"""Scoring of the heritage BM25 retrieval for the gold questions: per text and over the corpus."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from jurist.datasets.heritage import HeritageGoldEntry
from jurist.metrics.heritage.retrieval import (
    EmptyQueries,
    ndcg_at_k,
    retrieval_metrics,
    retrieval_source_analysis,
)
from jurist.signatures.heritage import HeritageOutput
from jurist.tasks.heritage._stats import mean_present

__all__ = ["RetrievalScorer"]


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
