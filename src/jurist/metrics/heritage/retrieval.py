"""Retrieval metrics: NDCG@K with graded relevance, P@K, R@K, MRR, and retrieval source analysis.

A query is a ranked list of retrieved doc ids and its relevance judgments (*qrels*):
``{doc_id: grade}`` with grades 0-3, or a list of relevant ids (grade 1 each).

Differences from the framework's sample code, on purpose:

- **The ideal DCG comes from the judgments, not from the retrieved list.** The sample
  sorted the relevances of the *retrieved* results to get the ideal ranking, so a system
  that retrieved no relevant document but ranked what it found well scored high, and
  missing relevant documents cost nothing. Here ``IDCG@K`` ranks all judged documents of
  the query by grade, as trec_eval does.
- NDCG uses the graded judgments; P@K, R@K and MRR use binary relevance
  (grade ≥ ``min_relevance``). The sample turned relevance binary before NDCG too.
- A query without any relevant document (judged, but no grade ≥ ``min_relevance``) is
  counted and scores 0 on P@K, R@K and MRR (the sample scored its recall as 1.0), and its
  NDCG is computed from its grades as for any query (0 when all are 0). This is the
  convention of ir-measures (its default pipeline, pytrec_eval over trec_eval's measure
  code): a query with judgments is evaluated, whatever they are; a query with no
  judgments at all is not. ``empty_queries="drop"`` leaves such queries out of every mean
  instead (the convention of evaluating only queries with something to find). Either way
  their number is returned as ``queries_without_relevant``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

EmptyQueries = Literal["zero", "drop"]

__all__ = [
    "EmptyQueries",
    "dcg",
    "ndcg_at_k",
    "qrels_of",
    "retrieval_example_ndcg",
    "retrieval_metrics",
    "retrieval_source_analysis",
]


def qrels_of(judgments: Mapping[str, float] | Iterable[str]) -> dict[str, float]:
    """Judgments as ``{doc_id: grade}``; a plain list of ids gives each grade 1."""
    if isinstance(judgments, Mapping):
        return {str(doc): float(grade) for doc, grade in judgments.items()}
    return {str(doc): 1.0 for doc in judgments}


def _unique(doc_ids: Iterable[Any]) -> list[str]:
    seen: dict[str, None] = {}
    for doc in doc_ids:
        seen.setdefault(str(doc["doc_id"] if isinstance(doc, Mapping) else doc), None)
    return list(seen)


def dcg(grades: Sequence[float], k: int) -> float:
    """Discounted cumulative gain of the first ``k`` grades.

    ``DCG@K = Σ_{i=1..K} (2^{rel_i} - 1) / log2(i + 1)``.

    >>> round(dcg([3, 2], 2), 4)
    8.8928
    """
    return sum((2.0**grade - 1.0) / math.log2(rank + 2) for rank, grade in enumerate(grades[:k]))


def ndcg_at_k(
    ranked_doc_ids: Sequence[Any], qrels: Mapping[str, float] | Iterable[str], k: int = 10
) -> float:
    """NDCG@K of one ranking against graded judgments.

    ``NDCG@K = DCG@K(ranking) / DCG@K(ideal)``, where the ranking's grades come from
    ``qrels`` (unjudged documents: 0) and the ideal ranking lists all judged grades in
    descending order (:func:`dcg` for the gain and discount). 0.0 when the ideal DCG is 0.
    A document retrieved twice counts once, at its first position.
    """
    judged = qrels_of(qrels)
    grades = [judged.get(doc, 0.0) for doc in _unique(ranked_doc_ids)]
    ideal = dcg(sorted(judged.values(), reverse=True), k)
    return dcg(grades, k) / ideal if ideal > 0 else 0.0


def retrieval_example_ndcg(
    ranked_doc_ids: Sequence[Any], qrels: Mapping[str, float] | Iterable[str], k: int = 10
) -> float:
    """NDCG@K of one query: the per-example target for optimizing a retriever or reranker."""
    return ndcg_at_k(ranked_doc_ids, qrels, k)


def retrieval_metrics(
    queries: Iterable[Mapping[str, Any]],
    k_values: Sequence[int] = (5, 10, 20),
    *,
    min_relevance: float = 1.0,
    empty_queries: EmptyQueries = "zero",
) -> dict[str, Any]:
    """Mean NDCG@K, P@K, R@K and MRR over queries.

    Each query is ``{"results": [doc ids or {"doc_id": ...}], "qrels": {doc: grade}}``
    (or ``"gold_relevant": [doc ids]``), results best first. With ``Rel`` the documents
    of grade ≥ ``min_relevance`` and ``r_i`` the ``i``-th retrieved document:

    - ``P@K = |{i ≤ K : r_i ∈ Rel}| / K`` (a list shorter than K is padded with misses);
    - ``R@K = |{i ≤ K : r_i ∈ Rel}| / |Rel|`` (0 when ``Rel`` is empty);
    - ``MRR = 1 / min{i : r_i ∈ Rel}`` (0 when none is retrieved);
    - ``NDCG@K`` as :func:`ndcg_at_k` on the graded judgments.

    Every figure is the mean over the queries; a query with ``|Rel| = 0`` is counted with
    the values above (``empty_queries="zero"``, ir-measures' convention; see the module
    docstring) or left out (``"drop"``).

    Returns:
        ``ndcg@K``, ``precision@K``, ``recall@K`` per K, ``mrr``, ``queries`` (averaged
        over), ``queries_without_relevant`` (how many had ``|Rel| = 0``, counted or not)
        and ``empty_queries`` (the policy).
    """
    if empty_queries not in ("zero", "drop"):
        raise ValueError(f"empty_queries must be 'zero' or 'drop', got {empty_queries!r}")
    values: dict[str, list[float]] = {f"ndcg@{k}": [] for k in k_values}
    values.update({f"precision@{k}": [] for k in k_values})
    values.update({f"recall@{k}": [] for k in k_values})
    values["mrr"] = []
    without = 0
    for query in queries:
        judged = qrels_of(query["qrels"] if "qrels" in query else query.get("gold_relevant", []))
        relevant = {doc for doc, grade in judged.items() if grade >= min_relevance}
        if not relevant:
            without += 1
            if empty_queries == "drop":
                continue
        ranking = _unique(query.get("results", []))
        hits = [doc in relevant for doc in ranking]
        first = next((i for i, hit in enumerate(hits) if hit), None)
        values["mrr"].append(1.0 / (first + 1) if first is not None else 0.0)
        for k in k_values:
            found = sum(hits[:k])
            values[f"ndcg@{k}"].append(ndcg_at_k(ranking, judged, k))
            values[f"precision@{k}"].append(found / k)
            values[f"recall@{k}"].append(found / len(relevant) if relevant else 0.0)
    result: dict[str, Any] = {
        name: (sum(series) / len(series) if series else None) for name, series in values.items()
    }
    result["queries"] = len(values["mrr"])
    result["queries_without_relevant"] = without
    result["empty_queries"] = empty_queries
    return result


def retrieval_source_analysis(
    query_results: Iterable[Mapping[str, Any]], *, depth: int = 10, top_n: int = 5
) -> dict[str, Any]:
    """Which retrieval sources (BM25, knowledge base, dense, ...) fill the top of the rankings.

    Over the first ``depth`` results of every query: ``source_distribution[s]`` = results
    from source ``s``; ``top1_by_source[s]`` = share of queries whose first result is from
    ``s``; ``top5_by_source[s]`` = share of the filled top-``top_n`` slots held by ``s``
    (the sample divided by ``queries × 5`` even when fewer results were returned).
    """
    counts: Counter[str] = Counter()
    top1: Counter[str] = Counter()
    top_slots: Counter[str] = Counter()
    queries = 0
    for query in query_results:
        queries += 1
        for rank, result in enumerate(list(query.get("results", []))[:depth]):
            source = str(result.get("source", "unknown"))
            counts[source] += 1
            if rank == 0:
                top1[source] += 1
            if rank < top_n:
                top_slots[source] += 1
    filled = sum(top_slots.values())
    return {
        "queries": queries,
        "source_distribution": dict(counts),
        "top1_by_source": {s: c / queries for s, c in top1.items()} if queries else {},
        f"top{top_n}_by_source": {s: c / filled for s, c in top_slots.items()} if filled else {},
    }
