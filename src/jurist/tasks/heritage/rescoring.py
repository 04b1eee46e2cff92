"""The heritage task's scoring as Python functions: :func:`score_heritage` (the task's
:meth:`~jurist.Task.score` with settings that are no option of the task) and
:func:`compare_heritage` (paired significance tests of two runs)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pandas as pd

from jurist.datasets.heritage.conll import TagDecoding
from jurist.metrics.heritage.retrieval import EmptyQueries
from jurist.tasks._results import Scores
from jurist.tasks.heritage.compare import PER_ITEM_METRICS, paired_tests
from jurist.tasks.heritage.scoring import HeritageScores
from jurist.tasks.heritage.task import HeritageTask

__all__ = ["compare_heritage", "score_heritage"]


def score_heritage(
    results: str | Path,
    gold: str | Path | None = None,
    *,
    write: bool = False,
    k_values: Sequence[int] = (1, 5, 10),
    retrieval_k: Sequence[int] = (5, 10, 20),
    similarity: Callable[[str, str], float] | None = None,
    empty_queries: EmptyQueries = "zero",
    tags: TagDecoding | None = None,
) -> HeritageScores:
    """Score a heritage run (a run directory or its ``results.jsonl``); no model is called.

    The ``heritage`` task's score (what ``jurist score heritage RUN`` does), with the
    scoring's settings that are no option of the task: failed items are counted and listed,
    never scored; gold texts without a result are counted as ``missing``. Gold comes from
    ``gold`` or the path recorded in the run.

    Args:
        results: A run directory or a ``results.jsonl`` exported from one.
        gold: The heritage gold file (default: the one the run was made from).
        write: For a run directory, write ``results.jsonl``, ``items.csv`` and ``items.parquet``,
            ``mentions.csv``, ``targets.csv``, ``summary.json`` and ``report.md`` into it.
        k_values: K of linking Hits@K.
        retrieval_k: K of NDCG/P/R@K.
        similarity: Optional ``f(question, answer) -> [0, 1]`` (e.g. embedding cosine) for
            QA relevance; without it that target is "not measured".
        empty_queries: Retrieval queries without a relevant document: ``zero`` (counted,
            scoring 0 on P/R/MRR: ir-measures' convention) or ``drop`` (left out).
        tags: How a token-tag gold file is decoded (default: as the run recorded, else lenient).
    """
    task = HeritageTask()
    task.k_values, task.retrieval_k, task.similarity = tuple(k_values), tuple(retrieval_k), similarity
    decoding = {"tag_mode": tags.mode, "tag_scheme": tags.scheme} if tags is not None else {}
    options = task.options({"empty_queries": empty_queries, **decoding})
    scores = task.score(Path(results), options, gold=gold, write=write)
    return HeritageScores(
        items=scores.items,
        summary=scores.summary,
        report=scores.report,
        extra=scores.extra,
        headline=scores.headline,
        mentions=scores.extra["mentions"],
        targets=scores.extra["targets"],
    )


def compare_heritage(
    run_a: Scores | str | Path,
    run_b: Scores | str | Path,
    *,
    metrics: Sequence[str] = PER_ITEM_METRICS,
    alpha: float = 0.05,
    seed: int = 0,
) -> pd.DataFrame:
    """Paired significance tests of two runs (scored, or run directories scored here) on
    the texts both scored (:func:`~jurist.tasks.heritage.compare.paired_tests`)."""
    a = run_a if isinstance(run_a, Scores) else score_heritage(run_a)
    b = run_b if isinstance(run_b, Scores) else score_heritage(run_b)
    return paired_tests(a.items, b.items, metrics=metrics, alpha=alpha, seed=seed)
