"""RAGBench/TRACe outputs and scores: what one judged item records, and what a run sums to.

An item's output is the judge's sentence labels plus the TRACe scores computed from them
(token-weighted as the paper defines them, and by sentence count). A run's summary is the
mean of each score over the items that were judged, and, given gold labels, agreement:
hallucination AUROC, adherence accuracy and RMSE of the TRACe scores.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd

from jurist.datasets.ragbench import RagbenchRow, load_ragbench
from jurist.datasets.samples import resolve_input
from jurist.metrics.agreement import auroc, rmse
from jurist.metrics.trace import Weighting, trace_scores_for_sentences
from jurist.programs.ragbench import clean_labels, keyed_inputs
from jurist.programs.ragbench_baseline import RagbenchBaseline
from jurist.schemas import ItemResult
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


def _mean(series: pd.Series) -> dict[str, Any]:
    values = pd.to_numeric(series, errors="coerce").dropna()
    return {"mean": float(values.mean()) if len(values) else None, "n": int(len(values))}


def gold_table(gold_path: str | Path) -> pd.DataFrame:
    rows = [
        {
            "id": row.id,
            "gold_supported": row.adherence_score,
            "gold_relevance": row.relevance_score,
            "gold_utilization": row.utilization_score,
            "gold_completeness": row.completeness_score,
        }
        for row in load_ragbench(resolve_input(gold_path))
    ]
    return pd.DataFrame(
        rows, columns=["id", "gold_supported", "gold_relevance", "gold_utilization", "gold_completeness"]
    )


def _none_if_nan(value: float | None) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


def agreement(items: pd.DataFrame, gold: pd.DataFrame) -> dict[str, Any]:
    ok = items[items["status"] == "ok"]
    joined = ok.merge(gold, on="id", how="inner")
    result: dict[str, Any] = {"gold_items": int(len(gold)), "matched": int(len(joined))}
    labeled = joined.dropna(subset=["gold_supported", "adherence_fraction"])
    if len(labeled):
        hallucinated = [not bool(value) for value in labeled["gold_supported"]]
        score = [1.0 - float(value) for value in labeled["adherence_fraction"]]
        result["hallucination_auroc"] = auroc(hallucinated, score)
        predicted = labeled["adherence"].astype(bool)
        result["adherence_accuracy"] = float((predicted == labeled["gold_supported"].astype(bool)).mean())
        result["labeled_items"] = int(len(labeled))
        result["gold_hallucinated"] = int(sum(hallucinated))
    for metric, gold_column in (
        ("context_relevance", "gold_relevance"),
        ("context_utilization", "gold_utilization"),
        ("completeness", "gold_completeness"),
    ):
        if joined[gold_column].notna().any():
            pred = [_none_if_nan(v) for v in joined[metric]]
            truth = [_none_if_nan(v) for v in joined[gold_column]]
            result[f"rmse_{metric}"] = rmse(pred, truth)
    return result


def summarize(items: pd.DataFrame, gold: str | Path | None) -> dict[str, Any]:
    """TRACe means over the judged items, key counts, latency, and agreement with ``gold``."""
    ok = items[items["status"] == "ok"]
    summary: dict[str, Any] = {"trace": {}, "trace_by_sentences": {}}
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
    if gold is not None:
        summary["agreement"] = agreement(items, gold_table(gold)) if len(ok) else {}
    return summary
