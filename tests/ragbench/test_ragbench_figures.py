"""RAGBench's review columns and figures on the bundled sample: the numbers are the summary's."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import mean_squared_error, roc_auc_score
from sklearn.metrics import roc_curve as sk_roc_curve

from figure_checks import by_title, check_figures
from jurist.datasets.samples import sample_path
from jurist.errors import ConfigError
from jurist.judges.config import load_config
from jurist.jury.loop import run_judgment
from jurist.tasks import get_task

TRACE = ("context_relevance", "context_utilization", "completeness", "adherence_fraction")
GOLD_SCORES = {
    "358": (0.5, 0.4, 0.9),
    "1172": (0.2, 0.1, 0.5),
    "518": (0.6, 0.3, 0.7),
    "1432": (0.1, 0.05, 0.4),
}


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory):
    """The sample judged by the baseline, four rows with gold TRACe scores (test values)."""
    base = tmp_path_factory.mktemp("ragbench-figures")
    rows = [json.loads(line) for line in sample_path("ragbench").read_text(encoding="utf-8").splitlines()]
    for row in rows:
        if row["id"] in GOLD_SCORES:
            row["relevance_score"], row["utilization_score"], row["completeness_score"] = GOLD_SCORES[
                row["id"]
            ]
    data = base / "rows.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    task = get_task("ragbench")
    options = task.options()
    run = run_judgment(task, data, base / "run", load_config(None), options, progress=False)
    return task, options, run, rows


def test_review_columns_are_in_the_items_table(judged) -> None:
    task, options, run, rows = judged
    review = task.review(options)
    assert (review.verdict, review.gold, review.agrees, review.label) == (
        "adherence",
        "gold_supported",
        "adherence_agrees",
        None,
    )
    items = run.items.set_index("id")
    for column in (review.verdict, review.gold, review.agrees, *review.columns):
        assert column in items
    gold = {row["id"]: row["adherence_score"] for row in rows}
    assert items["gold_supported"].to_dict() == gold
    assert items["adherence_agrees"].to_dict() == {
        key: bool(items.loc[key, "adherence"]) == gold[key] for key in gold
    }
    # The exported table has the gold columns too.
    exported = pd.read_parquet(run.run_dir / "items.parquet")
    assert {"gold_supported", "gold_relevance", "adherence_agrees"} <= set(exported.columns)


def test_figures_match_the_summary_and_the_items(judged) -> None:
    task, options, run, rows = judged
    figures = by_title(check_figures(task.figures(run.scores, options)))
    assert [f.kind for f in figures.values()] == ["confusion", *["histogram"] * 4, "roc", "scatter"]
    items = run.items
    ok = items[items["status"] == "ok"]

    confusion = figures["adherence: judge vs gold"].data
    assert confusion["labels"] == ["true", "false"]
    counted = Counter(
        (("true" if g else "false"), ("true" if v else "false"))
        for g, v in zip(ok["gold_supported"], ok["adherence"], strict=True)
    )
    matrix = confusion["matrix"]
    assert {
        (a, b): matrix[i][j] for i, a in enumerate(["true", "false"]) for j, b in enumerate(["true", "false"])
    } == {key: counted.get(key, 0) for key in [(a, b) for a in ["true", "false"] for b in ["true", "false"]]}
    assert sum(map(sum, matrix)) == run.summary["agreement"]["labeled_items"] == len(rows)
    accuracy = (matrix[0][0] + matrix[1][1]) / len(rows)
    assert accuracy == pytest.approx(run.summary["agreement"]["adherence_accuracy"])

    for metric in TRACE:
        (histogram, *gold) = figures[
            next(t for t in figures if figures[t].data.get("xlabel") == metric)
        ].data["series"]
        assert histogram["values"] == pytest.approx(ok[metric].dropna().astype(float).tolist())
        assert len(histogram["values"]) == run.summary["trace"][metric]["n"]

    (curve,) = figures["Hallucination detection (ROC)"].data["curves"]
    hallucinated = ~ok["gold_supported"].astype(bool)
    score = 1.0 - ok["adherence_fraction"].astype(float)
    assert curve["auc"] == pytest.approx(run.summary["agreement"]["hallucination_auroc"], abs=1e-12)
    assert curve["auc"] == pytest.approx(roc_auc_score(hallucinated, score), abs=1e-12)
    fpr, tpr, _ = sk_roc_curve(hallucinated, score)
    assert curve["fpr"] == pytest.approx(fpr.tolist()) and curve["tpr"] == pytest.approx(tpr.tolist())


def test_scatter_of_trace_scores_against_gold_has_the_rmse_rows(judged) -> None:
    task, options, run, _ = judged
    scatter = by_title(task.figures(run.scores, options))["TRACe scores: judge against gold"]
    agreement = run.summary["agreement"]
    for series, (metric, index) in zip(
        scatter.data["series"],
        [("context_relevance", 0), ("context_utilization", 1), ("completeness", 2)],
        strict=True,
    ):
        assert series["name"] == metric and len(series["x"]) == agreement[f"rmse_{metric}_items"] == 4
        assert sorted(series["x"]) == sorted(gold[index] for gold in GOLD_SCORES.values())
        rmse = np.sqrt(mean_squared_error(series["x"], series["y"]))
        assert rmse == pytest.approx(agreement[f"rmse_{metric}"])
        assert f"RMSE {rmse:.3f}" in scatter.caption


def test_no_gold_file_and_no_label_export(judged) -> None:
    task, options, run, _ = judged
    scored = task.score(run.run_dir / "results.jsonl", options)  # no manifest beside it: no gold
    assert "gold_supported" not in scored.items
    figures = check_figures(task.figures(scored, options))
    assert [f.kind for f in figures] == ["bars", *["histogram"] * 4]  # no confusion, ROC or scatter
    verdicts = {bar["label"]: bar["value"] for bar in figures[0].data["bars"]}
    assert verdicts == {
        "true": int(run.items["adherence"].sum()),
        "false": int((~run.items["adherence"]).sum()),
    }
    assert "label" not in task.verbs
    with pytest.raises(ConfigError, match="cannot export labels"):
        task.gold_rows(task.read(sample_path("ragbench"), options), {"358": True}, options)
