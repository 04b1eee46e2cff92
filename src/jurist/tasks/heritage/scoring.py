"""Scoring of a heritage run: every metric of the heritage evaluation framework, and its targets.

:func:`score_heritage` reads the recorded results of a run (no model is called) and hands
each scored text to one scorer per sub-task (:mod:`~jurist.tasks.heritage.scorers`), which
compute per-text figures and the corpus metrics with the pure functions of
:mod:`jurist.metrics.heritage` (``ner`` and its siblings). The framework's target table
gives pass/fail per row.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import pandas as pd

from jurist.atomic import atomic_write, atomic_write_text, atomic_writer
from jurist.datasets.heritage.conll import TagDecoding
from jurist.datasets.heritage.gold import HeritageGold, load_heritage_gold, retrieval_qrels
from jurist.errors import InputError
from jurist.metrics.heritage.retrieval import EmptyQueries
from jurist.report.jsonout import dumps
from jurist.runner import MANIFEST, iter_run_results
from jurist.schemas import Usage
from jurist.signatures.heritage import HeritageOutput
from jurist.tasks._contract import Scores
from jurist.tasks.heritage.report import render_report, write_report
from jurist.tasks.heritage.scorers import (
    ClassificationScorer,
    LinkingScorer,
    NerScorer,
    QAScorer,
    RetrievalScorer,
)

__all__ = ["TARGETS", "HeritageScores", "read_manifest", "score_heritage", "target_rows", "target_table"]

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


def read_manifest(path: Path) -> dict[str, Any]:
    """The manifest of a run directory (or of the directory holding a ``results.jsonl``), or ``{}``."""
    file = path / MANIFEST if path.is_dir() else path.parent / MANIFEST
    return json.loads(file.read_text(encoding="utf-8")) if file.is_file() else {}


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

    Failed items are counted and listed, never scored; gold texts without a result are
    counted as ``missing``. Gold comes from ``gold`` or the path recorded in the run.

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
    path = Path(results)
    manifest = read_manifest(path)
    gold_path = gold or (manifest.get("dataset") or {}).get("path")
    if gold_path is None:
        raise InputError("no gold file given and none recorded in the run", path=path, field="gold")
    recorded_tags = (manifest.get("dataset") or {}).get("tags")
    if tags is None and recorded_tags:
        tags = TagDecoding(recorded_tags["mode"], recorded_tags.get("scheme"))
    gold_set: HeritageGold = load_heritage_gold(gold_path, tags=tags)
    by_id = gold_set.by_id()
    recorded = (manifest.get("dataset") or {}).get("heritage") or {}
    ner = NerScorer(recorded.get("labels"), gold_set.tags.describe() if gold_set.tags else None)
    classification = ClassificationScorer()
    linking = LinkingScorer(k_values)
    qa = QAScorer(similarity)
    retrieval = RetrievalScorer(retrieval_qrels(gold_set.entries), retrieval_k, empty_queries)
    scorers = (ner, classification, linking, qa, retrieval)  # in the order of the items' columns

    rows: list[dict[str, Any]] = []
    usage = Usage()
    with contextlib.ExitStack() as stack:
        exporting = write and path.is_dir()
        export = stack.enter_context(atomic_writer(path / "results.jsonl")) if exporting else None
        for result in iter_run_results(path):
            usage = usage.add(result.usage)
            if export is not None:
                export.write(result.model_dump_json() + "\n")
            row = result.table_row()
            entry = by_id.get(result.id)
            row["in_gold"] = entry is not None
            if result.status == "ok" and entry is not None:
                output = HeritageOutput.model_validate(result.output)
                for scorer in scorers:
                    scorer.add(entry, output, row)
            rows.append(row)

    items = pd.DataFrame(rows) if rows else pd.DataFrame(columns=["id", "status", "error_type", "error"])
    mentions = pd.DataFrame(linking.mention_rows)
    ok = items[items["status"] == "ok"]
    failed = items[items["status"] == "failed"]
    judged_ids = set(items["id"])
    summary: dict[str, Any] = {
        "task": "heritage",
        "items": int(len(items)),
        "ok": int(len(ok)),
        "failed": int(len(failed)),
        "failed_ids": failed["id"].tolist()[:100],
        "failure_kinds": failed["error_type"].value_counts().to_dict() if len(failed) else {},
        "missing": len([e for e in gold_set.entries if e.id not in judged_ids]),
        "not_in_gold": int((~items.get("in_gold", pd.Series(dtype=bool)).fillna(True).astype(bool)).sum()),
        "usage": usage.model_dump(),
        "gold": {"path": str(gold_set.path), "sha256": gold_set.sha256, "entries": len(gold_set)},
    }
    headline: dict[str, float | None] = {}
    parts = (
        ("ner", ner.summarize(ok)),
        ("classification", classification.summarize()),
        ("linking", linking.summarize()),
        ("retrieval", retrieval.summarize()),
        ("qa", qa.summarize()),
    )
    for name, (part, figures) in parts:
        if part is not None:
            summary[name] = part
            headline.update(figures)
    summary["headline"] = headline
    summary["targets"] = target_rows(headline)
    targets = pd.DataFrame(summary["targets"])
    if manifest:
        summary["run"] = {key: manifest.get(key) for key in ("judge", "judge_fingerprint", "status")}
        summary["run"]["model"] = (manifest.get("config") or {}).get("model")
        summary["run"]["setup"] = recorded
    report = render_report(summary, failed)
    if write and path.is_dir():
        for name, frame in (("items.csv", items), ("mentions.csv", mentions), ("targets.csv", targets)):
            atomic_write(path / name, partial(frame.to_csv, index=False))
        atomic_write(path / "items.parquet", partial(items.to_parquet, index=False, row_group_size=10_000))
        atomic_write_text(path / "summary.json", dumps(summary))
        write_report(path / "report.md", summary, failed)
    return HeritageScores(items=items, summary=summary, report=report, mentions=mentions, targets=targets)
