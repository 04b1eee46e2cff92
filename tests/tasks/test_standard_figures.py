"""The default figures of any task: what the review columns of a per-item table allow, and nothing else."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd
import pytest
from sklearn.calibration import calibration_curve
from sklearn.metrics import roc_auc_score

from figure_checks import by_title, check_figures
from jurist.report.review import LabelSpec, Review
from jurist.report.standard_figures import review_figures


def _labels_table() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    gold = rng.choice(["yes", "no", "maybe"], 60).tolist()
    verdict = [g if rng.random() < 0.7 else "no" for g in gold]
    status = ["ok"] * 60
    status[5] = status[17] = "failed"  # failed items are never counted
    gold[9] = None  # an item without gold is left out of the confusion
    table = pd.DataFrame(
        {"id": [str(i) for i in range(60)], "status": status, "verdict": verdict, "gold": gold}
    )
    table.loc[[5, 17], "verdict"] = None
    return table


def test_confusion_counts_the_answered_items_with_gold() -> None:
    items = _labels_table()
    review = Review(verdict="verdict", gold="gold", label=LabelSpec("choice", ("yes", "no", "maybe")))
    (figure,) = check_figures(review_figures(items, review))
    assert figure.kind == "confusion" and figure.data["labels"] == ["yes", "no", "maybe"]
    counted = items[(items["status"] == "ok") & items["gold"].notna()]
    expected = Counter(zip(counted["gold"], counted["verdict"], strict=True))
    labels = figure.data["labels"]
    matrix = figure.data["matrix"]
    assert sum(map(sum, matrix)) == len(counted) == 57
    assert {
        (labels[g], labels[p]): matrix[g][p] for g in range(3) for p in range(3) if matrix[g][p]
    } == expected
    assert f"{int(np.trace(matrix))} of 57" in figure.caption


def test_yes_no_with_confidence_gives_roc_and_reliability_against_gold() -> None:
    rng = np.random.default_rng(7)
    n = 300
    gold = rng.random(n) < 0.4
    confidence = np.clip(np.where(gold, 0.65, 0.35) + rng.normal(0, 0.2, n), 0, 1).round(2)
    items = pd.DataFrame(
        {
            "id": [f"i{k}" for k in range(n)],
            "status": "ok",
            "verdict": confidence >= 0.5,
            "gold": gold,
            "confidence": confidence,
        }
    )
    review = Review(verdict="verdict", gold="gold", confidence="confidence", label=LabelSpec("bool"))
    figures = by_title(check_figures(review_figures(items, review)))
    confusion = figures["verdict: judge vs gold"]
    assert confusion.data["labels"] == ["true", "false"]
    assert confusion.data["matrix"][0][0] == int(((confidence >= 0.5) & gold).sum())
    (curve,) = figures["ROC of the judge's confidence"].data["curves"]
    assert curve["auc"] == pytest.approx(roc_auc_score(gold, confidence), abs=1e-12)
    assert np.trapezoid(curve["tpr"], curve["fpr"]) == pytest.approx(curve["auc"], abs=1e-12)
    bins = figures["Reliability of the judge's confidence"].data["bins"]
    accuracy, mean_confidence = calibration_curve(gold, confidence, n_bins=10)
    assert [b["accuracy"] for b in bins] == pytest.approx(accuracy.tolist())
    assert [b["confidence"] for b in bins] == pytest.approx(mean_confidence.tolist())
    assert sum(b["n"] for b in bins) == n


def test_label_confidence_is_read_against_agreement() -> None:
    items = _labels_table()
    answered = items["status"] == "ok"
    items["agrees"] = [
        (v == g) if ok and pd.notna(g) else None
        for v, g, ok in zip(items["verdict"], items["gold"], answered, strict=True)
    ]
    items["confidence"] = np.linspace(0.2, 0.95, len(items))
    review = Review(verdict="verdict", gold="gold", agrees="agrees", confidence="confidence")
    figures = by_title(check_figures(review_figures(items, review)))
    kept = items[answered & items["agrees"].notna()]
    (curve,) = figures["ROC of the judge's confidence"].data["curves"]
    assert curve["auc"] == pytest.approx(roc_auc_score(kept["agrees"].astype(bool), kept["confidence"]))
    assert "57 items" in figures["ROC of the judge's confidence"].caption


def test_scores_give_histograms_and_a_scatter() -> None:
    items = pd.DataFrame(
        {"id": ["a", "b", "c", "d"], "status": ["ok", "ok", "failed", "ok"], "verdict": [3, 5, None, 1]}
    )
    items["gold"] = [4, 5, 2, None]
    review = Review(verdict="verdict", gold="gold", label=LabelSpec("score", low=1, high=5))
    figures = by_title(check_figures(review_figures(items, review)))
    histogram = figures["Scores: judge and gold"]
    assert [s["values"] for s in histogram.data["series"]] == [[3.0, 5.0], [4.0, 5.0]]
    assert histogram.data["bins"] == [0.5, 1.5, 2.5, 3.5, 4.5, 5.5]
    scatter = figures["Judge score against gold"].data["series"][0]
    assert (scatter["x"], scatter["y"]) == ([4.0, 5.0], [3.0, 5.0])


def test_verdicts_without_gold_are_counted_and_absent_columns_draw_nothing() -> None:
    items = pd.DataFrame({"id": ["a", "b", "c"], "status": ["ok", "ok", "ok"], "verdict": ["x", "y", "x"]})
    (figure,) = check_figures(review_figures(items, Review(verdict="verdict")))
    assert figure.kind == "bars" and {b["label"]: b["value"] for b in figure.data["bars"]} == {"x": 2, "y": 1}
    assert review_figures(items, Review()) == []
    assert review_figures(items, Review(verdict="missing", gold="gold", confidence="conf")) == []
    assert (
        review_figures(pd.DataFrame(columns=["id", "status"]), Review(verdict="verdict", gold="gold")) == []
    )
