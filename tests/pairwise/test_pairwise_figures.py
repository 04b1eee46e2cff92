"""Pairwise review columns, figures and label export: pairs runs, SubEval records, pairwise-gold."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from figure_checks import by_title, check_figures
from jurist.errors import ConfigError
from jurist.judges.config import load_config
from jurist.jury.loop import run_judgment
from jurist.metrics.gold_agreement import wilson_interval
from jurist.tasks import get_task
from jurist.tasks.pairwise.bias import pair_bias
from support import run_cli

DATA = Path(__file__).resolve().parents[1] / "data"
RECORD = DATA / "devbench-subeval" / "derived" / "record_gpt-4-1106-preview_2.tsv"


@pytest.fixture(scope="module")
def pairs_run(tmp_path_factory: pytest.TempPathFactory):
    task = get_task("pairwise")
    options = task.options({"resamples": 200})
    out = tmp_path_factory.mktemp("pairwise-figures") / "run"
    return task, options, run_judgment(task, "sample:pairs", out, load_config(None), options, progress=False)


def test_pairs_run_review_and_confusion(pairs_run) -> None:
    task, options, run = pairs_run
    review = task.review(options)
    assert (review.verdict, review.gold, review.agrees) == ("verdict", "gold", "agrees")
    assert review.label is not None and review.label.choices == ("1", "2", "tie")
    items = run.items
    assert (items["agrees"] == (items["verdict"] == items["gold"])).all()
    figures = by_title(check_figures(task.figures(run.scores, options)))
    assert [f.kind for f in figures.values()] == ["confusion", "bars", "bars"]
    confusion = figures["verdict: judge vs gold"].data
    assert confusion["labels"] == ["1", "2", "tie"]
    counted = Counter(zip(items["gold"], items["verdict"], strict=True))
    labels = confusion["labels"]
    assert {
        (labels[g], labels[p]): n for g, row in enumerate(confusion["matrix"]) for p, n in enumerate(row) if n
    } == counted
    agreement = run.summary["agreement"][-1]
    assert sum(map(sum, confusion["matrix"])) == agreement["pairs"] == 50
    assert np.trace(confusion["matrix"]) / 50 == pytest.approx(agreement["accuracy"])


def test_pairs_run_agreement_and_bias_bars(pairs_run) -> None:
    task, options, run = pairs_run
    figures = by_title(task.figures(run.scores, options))
    agreement = run.summary["agreement"][-1]
    bars = {bar["label"]: bar for bar in figures["Agreement with gold"].data["bars"]}
    for name in ("accuracy", "order_accuracy", "kappa"):
        assert (bars[name]["value"], bars[name]["low"], bars[name]["high"]) == (
            agreement[name],
            agreement[f"{name}_low"],
            agreement[f"{name}_high"],
        )
    bias = {bar["label"]: bar for bar in figures["Consistency, position and length bias"].data["bars"]}
    assert bias["consistency"]["value"] == agreement["consistency_rate"]
    assert (bias["consistency"]["low"], bias["consistency"]["high"]) == pytest.approx(
        wilson_interval(agreement["consistent"], agreement["complete"])
    )
    choices = [*run.items["choice_12"], *run.items["choice_21"]]
    decisive = [c for c in choices if c in ("A", "B")]
    assert bias["first position picked"]["value"] == pytest.approx(decisive.count("A") / len(decisive))
    expected = pair_bias(run.items, {"n_resamples": 200, "confidence": 0.95, "seed": 0})
    assert bias["longer picked (judge)"]["value"] == expected["longer_win_rate"]
    assert bias["longer preferred (gold)"]["value"] == expected["gold_longer_rate"]


def test_subeval_records_give_win_rates_and_biases() -> None:
    task = get_task("pairwise")
    options = task.options({"resamples": 100})
    scores = task.score(RECORD, options)
    figures = by_title(check_figures(task.figures(scores, options)))
    assert [f.kind for f in figures.values()] == ["bars", "bars", "bars"]
    overall = [row for row in scores.summary["win_rates_with_ties"] if row["metric"] == "Overall"]
    bars = figures["Win rates (ties count half)"].data["bars"]
    assert len(bars) == len(overall) > 0
    for bar, row in zip(bars, overall, strict=True):
        assert bar["label"] == f"{row['model']} vs {row['opponent']}" and bar["group"] == row["model"]
        assert (bar["value"], bar["low"], bar["high"]) == (
            row["win_rate_with_tie"],
            row["win_rate_with_tie_low"],
            row["win_rate_with_tie_high"],
        )
    bias = {bar["label"]: bar for bar in figures["Consistency, position and length bias"].data["bars"]}
    assert bias["consistency"]["value"] == scores.summary["consistency_rate"]
    assert bias["longer picked"]["value"] == scores.summary["length_bias"]
    lengths = scores.extra["scores"].length_stats
    length_bars = next(f for title, f in figures.items() if title.startswith("Mean response length"))
    assert [bar["value"] for bar in length_bars.data["bars"]] == lengths["mean"].tolist()
    # SubEval records carry no gold: nothing to label.
    assert task.review(options).verdict not in scores.items


def _write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_pairs_labels_export_to_a_gold_file_calibrate_reads(pairs_run, tmp_path: Path) -> None:
    task, options, run = pairs_run
    dataset = task.read("sample:pairs", options)
    pairs = dataset.frame.set_index("id")
    chosen = {"1": "2", "2|21": "tie", "3": "1"}  # a pair id, or one order of it
    rows = task.gold_rows(dataset, chosen, options)
    assert len(rows) == len(pairs)
    final = {row["id"]: row["label"] for row in rows}
    assert (final["1"], final["2"], final["3"]) == ("2", "tie", "1")
    assert all(final[key] == pairs.loc[key, "label"] for key in final if key not in ("1", "2", "3"))
    assert rows[0]["question"] == pairs.loc[rows[0]["id"], "question"]
    gold_file = _write_jsonl(tmp_path / "gold.jsonl", rows)
    out = tmp_path / "cal"
    assert (
        run_cli(["calibrate", "pairwise", "--gold", str(gold_file), "--out", str(out), "--resamples", "50"])
        == 0
    )
    leaderboard = pd.read_csv(out / "leaderboard.csv")
    verdicts = run.items.set_index("id")["verdict"]  # the baseline's verdicts do not depend on gold
    expected = sum(verdicts[key] == label for key, label in final.items()) / len(final)
    assert leaderboard.loc[0, "items"] == len(final)
    assert leaderboard.loc[0, "accuracy"] == pytest.approx(expected)


def test_pairwise_gold_task_reads_labels_and_draws_the_pairs_figures(tmp_path: Path) -> None:
    task = get_task("pairwise-gold")
    options = task.options({"resamples": 100})
    assert "label" in task.verbs
    scores = run_judgment(
        task, "sample:pairs", tmp_path / "run", load_config(None), options, progress=False
    ).scores
    kinds = [f.kind for f in check_figures(task.figures(scores, options))]
    assert kinds == ["confusion", "bars", "bars"]
    dataset = task.read("sample:pairs", options)
    rows = task.gold_rows(dataset, {"4": "tie"}, options)
    assert {row["id"]: row["label"] for row in rows}["4"] == "tie"
    with pytest.raises(ConfigError, match="one of 1, 2, tie"):
        task.gold_rows(dataset, {"4": "A"}, options)
    with pytest.raises(ConfigError, match="two labels"):
        task.gold_rows(dataset, {"4|12": "1", "4|21": "2"}, options)


def test_a_subeval_table_has_no_gold_to_export() -> None:
    task = get_task("pairwise")
    options = task.options()
    dataset = task.read(DATA / "devbench-subeval" / "examples" / "DevBench_projects_example.xlsx", options)
    with pytest.raises(ConfigError, match="SubEval table has no gold"):
        task.gold_rows(dataset, {}, options)
