"""Heritage figures per sub-task (the summary's numbers) and the custodian-type label export."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from figure_checks import by_title, check_figures
from jurist.datasets.heritage.gold import load_heritage_gold
from jurist.errors import ConfigError
from jurist.judges.config import load_config
from jurist.jury.loop import run_judgment
from jurist.tasks import get_task
from support import run_cli


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory):
    task = get_task("heritage")
    options = task.options()
    out = tmp_path_factory.mktemp("heritage-figures") / "run"
    return (
        task,
        options,
        run_judgment(task, "sample:heritage", out, load_config(None), options, progress=False),
    )


def test_every_sub_task_is_plotted_from_the_summary(judged) -> None:
    task, options, run = judged
    figures = by_title(check_figures(task.figures(run.scores, options)))
    assert list(figures) == [
        "Entities per type (strict match)",
        "Entities: strict and partial match",
        "Custodian type: judge vs gold",
        "Custodian type agreement",
        "Entity linking",
        "Retrieval",
        "Question answering",
        "Targets of the evaluation framework",
    ]
    summary = run.summary
    per_type = summary["ner"]["strict"]["per_type"]
    bars = {bar["label"]: bar["value"] for bar in figures["Entities per type (strict match)"].data["bars"]}
    assert bars == {f"{t} {m}": per_type[t][m] for t in per_type for m in ("precision", "recall", "f1")}

    confusion = figures["Custodian type: judge vs gold"].data
    classification = summary["classification"]
    assert confusion["labels"] == classification["labels"]
    assert confusion["matrix"] == classification["confusion_matrix"]
    items = run.items.dropna(subset=["gold_type"])
    assert sum(map(sum, confusion["matrix"])) == classification["n"] == len(items)
    counted = Counter(zip(items["gold_type"], items["pred_type"], strict=True))
    labels = confusion["labels"]
    assert {
        (labels[g], labels[p]): n for g, row in enumerate(confusion["matrix"]) for p, n in enumerate(row) if n
    } == counted

    linking = {bar["label"]: bar["value"] for bar in figures["Entity linking"].data["bars"]}
    assert (linking["Hits@1"], linking["MRR"], linking["NIL f1"]) == (
        summary["linking"]["hits@1"],
        summary["linking"]["mrr"],
        summary["linking"]["nil"]["nil_f1"],
    )
    retrieval = {bar["label"]: bar["value"] for bar in figures["Retrieval"].data["bars"]}
    assert (
        retrieval["NDCG@10"] == summary["retrieval"]["ndcg@10"]
        and retrieval["MRR"] == summary["retrieval"]["mrr"]
    )

    gates = figures["Targets of the evaluation framework"].data["gates"]
    measured = [row for row in summary["targets"] if row["value"] is not None]
    assert [(g["value"], g["threshold"], g["passed"]) for g in gates] == [
        (row["value"], row["target"], row["status"] == "pass") for row in measured
    ]


def test_review_of_the_full_run_and_of_a_sub_task(judged) -> None:
    task, options, run = judged
    review = task.review(options)
    assert (review.verdict, review.gold, review.agrees, review.label) == (
        "pred_type",
        "gold_type",
        "type_agrees",
        None,
    )
    assert all(
        column in run.items for column in (review.verdict, review.gold, review.agrees, *review.columns)
    )
    typed = run.items.dropna(subset=["gold_type"])
    assert (typed["type_agrees"] == (typed["gold_type"] == typed["pred_type"])).all()
    ner = get_task("heritage-ner")
    assert ner.review(ner.options()).verdict is None and "label" not in ner.verbs
    with pytest.raises(ConfigError, match="cannot export labels"):
        ner.gold_rows(load_heritage_gold("sample:heritage"), {}, ner.options())


def test_custodian_type_labels_export_to_a_gold_file_calibrate_reads(judged, tmp_path: Path) -> None:
    _, _, run = judged
    task = get_task("heritage-classification")
    options = task.options()
    assert task.review(options).label.choices == tuple("GLAMORCUBESFIXPHDNT")
    dataset = task.read("sample:heritage", options)
    first, second = dataset.entries[0], dataset.entries[1]
    labels = {first.id: "A", second.id: second.custodian_type}
    rows = task.gold_rows(dataset, labels, options)
    assert len(rows) == len(dataset.entries)
    assert rows[0]["type_classification"] == {"primary_type": "A", "secondary_types": [], "rationale": ""}
    assert rows[1] == second.model_dump(mode="json")  # the same type: the entry is unchanged
    gold_file = tmp_path / "gold.jsonl"
    gold_file.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    back = load_heritage_gold(gold_file)
    final = {entry.id: entry.custodian_type for entry in back.entries}
    assert final == {entry.id: labels.get(entry.id, entry.custodian_type) for entry in dataset.entries}
    out = tmp_path / "cal"
    args = [
        "calibrate",
        "heritage-classification",
        "--gold",
        str(gold_file),
        "--out",
        str(out),
        "--resamples",
        "50",
    ]
    assert run_cli(args) == 0
    leaderboard = pd.read_csv(out / "leaderboard.csv")
    predicted = run.items.set_index("id")["pred_type"]  # the baseline's types do not depend on gold
    expected = sum(predicted[key] == value for key, value in final.items()) / len(final)
    assert leaderboard.loc[0, "items"] == len(final)
    assert leaderboard.loc[0, "accuracy"] == pytest.approx(expected)
    with pytest.raises(ConfigError, match="item 'nope'"):
        task.gold_rows(dataset, {"nope": "A"}, options)
    with pytest.raises(ConfigError, match="must be one of"):
        task.gold_rows(dataset, {first.id: "Z"}, options)
