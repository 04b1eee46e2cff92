"""RAGBench/TRACe outputs and scores: what one judged item records, and what a run sums to.

An item's output is the judge's sentence labels plus the TRACe scores computed from them
(token-weighted as the paper defines them, and by sentence count). A run's summary is the
mean of each score over the items that were judged, and, given gold labels, agreement:
hallucination AUROC, adherence accuracy and RMSE of the TRACe scores. Every row left out of a
figure is counted with its reason (``excluded``), and the gold sentence keys that were read
under another spelling are counted (``gold_sentence_keys``).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from jurist.datasets.ragbench import RagbenchDataset, RagbenchRow, load_ragbench
from jurist.datasets.samples import resolve_input
from jurist.metrics.agreement import auroc, rmse
from jurist.metrics.trace import Weighting, trace_scores_for_sentences
from jurist.programs.ragbench.baseline import RagbenchBaseline
from jurist.schemas import ItemResult
from jurist.sentences import keyed_inputs
from jurist.tasks._read_once import DATASET, read_once

if TYPE_CHECKING:
    from jurist.signatures.ragbench import RagbenchLabels

TASK = "ragbench"
TRACE_METRICS = ("context_relevance", "context_utilization", "completeness", "adherence_fraction")


def ragbench_output(labels: RagbenchLabels, inputs: dict[str, Any]) -> dict[str, Any]:
    """The recorded output of one item: the labels, the keyed sentences and the TRACe scores.

    Scores are given token-weighted (the paper's definition) and by sentence count
    (``*_by_sentences``). Unlabeled response sentences count as not fully supported.
    """
    docs, resp = keyed_inputs(
        inputs["documents"],
        inputs["response"],
        inputs.get("document_sentences"),
        inputs.get("response_sentences"),
    )
    supported = {
        item.response_sentence_key: item.fully_supported for item in labels.sentence_support_information
    }
    flags = [supported.get(sentence.key, False) for sentence in resp]
    scores: dict[str, Any] = {}
    weightings: tuple[tuple[Weighting, str], ...] = (("tokens", ""), ("sentences", "_by_sentences"))
    for weighting, suffix in weightings:
        trace = trace_scores_for_sentences(
            docs,
            labels.all_relevant_sentence_keys,
            labels.all_utilized_sentence_keys,
            flags,
            weighting=weighting,
        )
        for name in ("context_relevance", "context_utilization", "completeness"):
            scores[name + suffix] = getattr(trace, name)
        if weighting == "tokens":
            scores["adherence"] = trace.adherence
            scores["adherence_fraction"] = trace.adherence_fraction
    return {
        **labels.model_dump(mode="json"),
        "document_sentences": [[s.key, s.text] for s in docs],
        "response_sentences": [[s.key, s.text] for s in resp],
        "scores": scores,
    }


def ragbench_inputs(row: RagbenchRow) -> dict[str, Any]:
    """A row's judge inputs, with its keyed sentences computed once (or taken from the row)."""
    inputs = row.judge_inputs()
    if "document_sentences" not in inputs:
        docs, resp = keyed_inputs(row.documents, row.response)
        inputs["document_sentences"] = [[s.key, s.text] for s in docs]
        inputs["response_sentences"] = [[s.key, s.text] for s in resp]
    return inputs


def baseline_output(**inputs: Any) -> dict[str, Any]:
    docs, resp = keyed_inputs(
        inputs["documents"],
        inputs["response"],
        inputs.get("document_sentences"),
        inputs.get("response_sentences"),
    )
    labels = RagbenchBaseline().label(
        question=inputs["question"], doc_sentences=docs, response_sentences=resp
    )
    return ragbench_output(labels, inputs)


def llm_postprocess(prediction: Any, inputs: dict[str, Any]) -> dict[str, Any]:
    docs, resp = keyed_inputs(
        inputs["documents"],
        inputs["response"],
        inputs.get("document_sentences"),
        inputs.get("response_sentences"),
    )
    from jurist.programs.ragbench.program import clean_labels

    return ragbench_output(clean_labels(prediction, docs, resp), inputs)


def item_row(result: ItemResult) -> dict[str, Any]:
    row = result.table_row()
    output = result.output or {}
    row.update(output.get("scores", {}))
    if output:
        row["overall_supported"] = output.get("overall_supported")
        row["relevant_keys"] = len(output.get("all_relevant_sentence_keys", []))
        row["utilized_keys"] = len(output.get("all_utilized_sentence_keys", []))
        row["dropped_keys"] = len(output.get("dropped_keys", []))
        row["unlabeled_response_sentences"] = len(output.get("unlabeled_response_keys", []))
        row["response_sentences"] = len(output.get("response_sentences", []))
        row["document_sentences"] = len(output.get("document_sentences", []))
    return row


# Why a row is left out of a figure. Each row left out of a figure is counted under the first
# reason that applies, in this order.
NOT_JUDGED = "gold row not in the run"
NO_GOLD_ROW = "item has no gold row"
FAILED = "judge failed on the item"
NO_GOLD_LABEL = "gold label missing (adherence_score)"
UNDEFINED = "judge's value undefined (zero denominator)"

GOLD_SCORES = (
    ("context_relevance", "gold_relevance", "relevance_score"),
    ("context_utilization", "gold_utilization", "utilization_score"),
    ("completeness", "gold_completeness", "completeness_score"),
)
"""TRACe score, its gold column in :func:`gold_table`, and RAGBench's gold field."""


def _mean(series: pd.Series) -> dict[str, Any]:
    values = pd.to_numeric(series, errors="coerce").dropna()
    return {"mean": float(values.mean()) if len(values) else None, "n": int(len(values))}


def _missing(frame: pd.DataFrame, column: str) -> pd.Series:
    """True where ``column`` has no value (also when the column is absent)."""
    if column not in frame:
        return pd.Series(True, index=frame.index)
    return frame[column].isna()


def _reasons(frame: pd.DataFrame, checks: list[tuple[str, pd.Series]]) -> tuple[pd.Series, dict[str, int]]:
    """Rows kept, and per reason the number of rows left out: each row is counted under the
    first check that is true for it."""
    left_out = pd.Series(False, index=frame.index)
    counts: dict[str, int] = {}
    for reason, condition in checks:
        hit = condition.fillna(False).astype(bool) & ~left_out
        if hit.any():
            counts[reason] = int(hit.sum())
        left_out |= hit
    return ~left_out, counts


def gold_data(gold_path: str | Path) -> tuple[pd.DataFrame, RagbenchDataset]:
    """The gold labels of a RAGBench file as a table (one row per id), and the file itself;
    read once inside :func:`~jurist.tasks._read_once.reading_once`, and not at all when the
    scoring holds the file's dataset (the judging loop's: kind ``"dataset"``)."""
    return read_once("ragbench gold", gold_path, lambda: _gold_data(gold_path))


def _gold_data(gold_path: str | Path) -> tuple[pd.DataFrame, RagbenchDataset]:
    path = resolve_input(gold_path)
    dataset = read_once(DATASET, path, lambda: load_ragbench(path))  # the task's `read`
    rows = [
        {
            "id": row.id,
            "gold_supported": row.adherence_score,
            "gold_relevance": row.relevance_score,
            "gold_utilization": row.utilization_score,
            "gold_completeness": row.completeness_score,
        }
        for row in dataset
    ]
    columns = ["id", "gold_supported", "gold_relevance", "gold_utilization", "gold_completeness"]
    return pd.DataFrame(rows, columns=columns), dataset


def gold_table(gold_path: str | Path) -> pd.DataFrame:
    """The gold labels of a RAGBench file as a table (one row per id)."""
    return gold_data(gold_path)[0]


def _numbers(series: pd.Series) -> list[float | None]:
    values = pd.to_numeric(series, errors="coerce")
    return [None if math.isnan(value) else float(value) for value in values]


def agreement(items: pd.DataFrame, gold: pd.DataFrame) -> dict[str, Any]:
    """Agreement of a run's items with gold labels, and the rows each figure leaves out.

    Rows are the union of the gold rows and the run's items (joined on ``id``). Figures:

    - ``hallucination_auroc``: AUROC of ``1 − adherence_fraction`` against gold
      ``hallucinated = not adherence_score`` (:func:`jurist.metrics.agreement.auroc`);
      ``adherence_accuracy`` = share of rows where the judge's adherence equals the gold label;
      both over ``labeled_items`` rows.
    - ``rmse_<score>``: ``sqrt(mean((judge − gold)²))`` of each TRACe score against RAGBench's
      ``relevance_score`` / ``utilization_score`` / ``completeness_score``, over
      ``rmse_<score>_items`` rows.

    A row is left out of a figure for the first reason that applies: the gold row was not
    judged (not in the run), the item has no gold row, the judge failed on the item, the gold
    label or score is missing, or the judge's value is undefined (a zero denominator, e.g.
    completeness with nothing relevant). RAGBench's own evaluation drops rows with a missing
    gold label (AUROC) or an undefined prediction (RMSE) the same way, without counting them;
    here ``excluded[figure]`` counts the rows per reason.
    """
    # A table that already holds gold columns (a scored run's items.parquet) is joined afresh.
    own = [c for c in items.columns if c == "id" or c not in gold.columns]
    table = items[own].reindex(columns=[*own, *(c for c in _ITEM_COLUMNS if c not in own)])
    joined = table.merge(gold, on="id", how="outer", indicator=True)
    ok = joined["status"] == "ok"
    common = [
        (NOT_JUDGED, joined["_merge"] == "right_only"),
        (NO_GOLD_ROW, joined["_merge"] == "left_only"),
        (FAILED, ~ok),
    ]
    result: dict[str, Any] = {
        "gold_items": int(len(gold)),
        "matched": int((ok & (joined["_merge"] == "both")).sum()),
    }
    excluded: dict[str, dict[str, int]] = {}
    kept, excluded["hallucination_auroc"] = _reasons(
        joined,
        [
            *common,
            (NO_GOLD_LABEL, _missing(joined, "gold_supported")),
            (UNDEFINED, _missing(joined, "adherence_fraction")),
        ],
    )
    labeled = joined[kept]
    result["labeled_items"] = int(len(labeled))
    if len(labeled):
        hallucinated = [not bool(value) for value in labeled["gold_supported"]]
        score = [1.0 - float(value) for value in labeled["adherence_fraction"]]
        result["hallucination_auroc"] = auroc(hallucinated, score)
        predicted = labeled["adherence"].astype(bool)
        result["adherence_accuracy"] = float((predicted == labeled["gold_supported"].astype(bool)).mean())
        result["gold_hallucinated"] = int(sum(hallucinated))
    excluded["adherence_accuracy"] = dict(excluded["hallucination_auroc"])
    for metric, gold_column, field in GOLD_SCORES:
        name = f"rmse_{metric}"
        kept, excluded[name] = _reasons(
            joined,
            [
                *common,
                (f"gold score missing ({field})", _missing(joined, gold_column)),
                (UNDEFINED, _missing(joined, metric)),
            ],
        )
        rows = joined[kept]
        result[f"{name}_items"] = int(len(rows))
        if len(rows):
            result[name] = rmse(_numbers(rows[metric]), _numbers(rows[gold_column]))
    result["excluded"] = {name: counts for name, counts in excluded.items() if counts}
    return result


_ITEM_COLUMNS = ("status", "adherence", "adherence_fraction", *(name for name, _, _ in GOLD_SCORES))


def key_fixes_summary(dataset: RagbenchDataset) -> dict[str, Any]:
    """How many gold sentence keys of ``dataset`` were read under another spelling."""
    return {
        "keys": dataset.gold_keys,
        "normalised": len(dataset.key_fixes),
        "rows": len({fix.id for fix in dataset.key_fixes}),
        "fixes": [fix.as_dict() for fix in dataset.key_fixes],
    }


def summarize(items: pd.DataFrame, gold: str | Path | None) -> dict[str, Any]:
    """TRACe means over the judged items, key counts, latency, and agreement with ``gold``.

    ``excluded`` counts, for every TRACe mean and every agreement figure, the rows left out
    of it and why (see :func:`agreement`); a TRACe mean leaves out failed items and items
    whose value is undefined (a zero denominator). With ``gold``, ``gold_sentence_keys``
    says how many of its sentence keys were normalised on reading
    (:func:`jurist.sentences.normalise_key`).
    """
    ok = items[items["status"] == "ok"]
    failed = items["status"] != "ok"
    summary: dict[str, Any] = {"trace": {}, "trace_by_sentences": {}}
    excluded: dict[str, dict[str, int]] = {}
    if len(ok):
        for name in TRACE_METRICS:
            summary["trace"][name] = _mean(ok[name])
            if name != "adherence_fraction":
                summary["trace_by_sentences"][name] = _mean(ok[name + "_by_sentences"])
        summary["trace"]["adherence"] = _mean(ok["adherence"].astype(float))
        summary["dropped_keys"] = int(ok["dropped_keys"].sum())
        summary["unlabeled_response_sentences"] = int(ok["unlabeled_response_sentences"].sum())
        latency = ok["latency_s"]
        summary["latency_s"] = {
            "mean": float(latency.mean()),
            "p50": float(latency.quantile(0.5)),
            "p95": float(latency.quantile(0.95)),
        }
    for name in (*TRACE_METRICS, "adherence"):
        _, counts = _reasons(items, [(FAILED, failed), (UNDEFINED, _missing(items, name))])
        if counts:
            excluded[name] = counts
    summary["excluded"] = excluded
    if gold is not None:
        gold_frame, dataset = gold_data(gold)
        summary["gold_sentence_keys"] = key_fixes_summary(dataset)
        summary["agreement"] = agreement(items, gold_frame)
    return summary
