"""RGB's figures (the paper's tables as plots, with Wilson intervals) and the Rej*/ED* label export."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from rgb_support import DATA_DIR, run_suite

from figure_checks import by_title, check_figures
from jurist.errors import ConfigError
from jurist.judges.config import load_config
from jurist.jury.loop import run_judgment
from jurist.metrics.gold_agreement import wilson_interval
from jurist.tasks import get_task
from jurist.tasks.rgb.task import suite_scores
from support import run_cli


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory):
    return run_suite(DATA_DIR, tmp_path_factory.mktemp("rgb-figures") / "out", chart=False)


def test_suite_figures_are_the_papers_tables(suite) -> None:
    task = get_task("rgb")
    options = task.options()
    figures = by_title(check_figures(task.figures(suite_scores(suite), options)))
    assert [f.kind for f in figures.values()] == ["lines", "bars", "bars"]
    tables = suite.summary["tables"]
    series = {s["name"]: s for s in figures["Accuracy against noise rate"].data["series"]}
    assert list(series) == ["zh noise robustness", "zh information integration"]
    for name, section in (
        ("zh noise robustness", "noise_robustness"),
        ("zh information integration", "integration"),
    ):
        table = tables[section]["zh"]
        assert series[name]["x"] == [float(rate) for rate in table]
        assert series[name]["y"] == list(table.values())
    runs = {
        (r["setting"]["set"], r["setting"]["noise_rate"]): r
        for r in suite.summary["runs"]
        if r["setting"]["language"] == "zh"
    }
    noisy = runs[("noise", 0.4)]
    index = series["zh noise robustness"]["x"].index(0.4)
    low, high = wilson_interval(noisy["tt"], noisy["nums"])
    assert (series["zh noise robustness"]["low"][index], series["zh noise robustness"]["high"][index]) == (
        low,
        high,
    )

    rejection = {bar["label"]: bar["value"] for bar in figures["Negative rejection"].data["bars"]}
    assert rejection == {
        "zh Rej": tables["negative_rejection"]["zh"]["rej"],
        "zh Rej*": tables["negative_rejection"]["zh"]["rej_star"],
    }
    counterfactual = {bar["label"]: bar["value"] for bar in figures["Counterfactual robustness"].data["bars"]}
    for language in ("en", "zh"):
        table = tables["counterfactual"][language]
        for label, key in (("Acc", "acc"), ("Acc_doc", "acc_doc"), ("ED", "ed"), ("ED*", "ed_star")):
            assert counterfactual[f"{language} {label}"] == table[key]
        # CR is correct_tt / fact_tt: no bar when nothing was detected (RGB writes 0 then).
        assert (f"{language} CR" in counterfactual) == bool(
            next(
                r
                for r in suite.summary["runs"]
                if r["setting"]["set"] == "counterfactual" and r["setting"]["language"] == language
            )["fact_tt"]
        )


def test_prediction_files_plot_accuracy_by_noise_rate(suite) -> None:
    task = get_task("rgb")
    options = task.options()
    scores = task.score(suite.out_dir, options)
    (figure,) = check_figures(task.figures(scores, options))
    series = {s["name"]: s for s in figure.data["series"]}
    noise = series["zh_refine_baseline_temp0.0_passage5_correct0.0"]
    by_rate = {float(r["noise_rate"]): r for r in scores.summary if "zh_refine" in r["file"]}
    assert noise["x"] == sorted(by_rate) and noise["y"] == [by_rate[x]["all_rate"] for x in noise["x"]]
    assert sum(len(s["x"]) for s in series.values()) == len(scores.summary)


@pytest.fixture(scope="module", params=["rgb-rejection", "rgb-error-detection"])
def judged(request, tmp_path_factory: pytest.TempPathFactory):
    task = get_task(request.param)
    options = task.options()
    out = tmp_path_factory.mktemp(request.param) / "run"
    return (
        task,
        options,
        run_judgment(task, "sample:rgb-judgments", out, load_config(None), options),
    )


def test_judgment_review_and_confusion_match_the_summary(judged) -> None:
    task, options, run = judged
    review = task.review(options)
    label = review.verdict
    assert review.gold == f"gold_{label}" and review.agrees == "agrees" and review.label.kind == "bool"
    (confusion,) = check_figures(task.figures(run.scores, options))
    counts = run.summary["agreement"]["confusion"]
    assert confusion.data["labels"] == ["true", "false"]
    assert confusion.data["matrix"] == [[counts["tp"], counts["fn"]], [counts["fp"], counts["tn"]]]
    items = run.items
    labelled = items[items[review.gold].notna()]
    assert (labelled["agrees"] == (labelled[label] == labelled[review.gold])).all()
    exported = pd.read_parquet(run.run_dir / "items.parquet")
    assert {review.gold, "agrees"} <= set(exported.columns)


def test_judgment_labels_export_to_a_gold_file_calibrate_reads(judged, tmp_path: Path) -> None:
    task, options, run = judged
    label = task.review(options).verdict
    dataset = task.read("sample:rgb-judgments", options)
    first, second = (str(row.id) for row in dataset.rows[:2])
    flipped = {first: not dataset.rows[0].label(label), second: not dataset.rows[1].label(label)}
    rows = task.gold_rows(
        dataset, {first: "yes" if flipped[first] else "no", second: flipped[second]}, options
    )
    final = {row["id"]: row[label] for row in rows}
    assert (final[first], final[second]) == (flipped[first], flipped[second])
    gold_file = tmp_path / "gold.jsonl"
    gold_file.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    out = tmp_path / "cal"
    assert (
        run_cli(["calibrate", task.name, "--gold", str(gold_file), "--out", str(out), "--resamples", "50"])
        == 0
    )
    leaderboard = pd.read_csv(out / "leaderboard.csv")
    verdicts = run.items.set_index("id")[label]
    expected = sum(bool(verdicts[key]) == value for key, value in final.items()) / len(final)
    assert leaderboard.loc[0, "items"] == len(final)
    assert leaderboard.loc[0, "accuracy"] == pytest.approx(expected)
    with pytest.raises(ConfigError, match="yes or no"):
        task.gold_rows(dataset, {first: "maybe"}, options)
