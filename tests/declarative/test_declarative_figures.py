"""A YAML task's review columns, figures and label export, on the bundled examples.

The figures carry the summary's numbers; the exported gold file is what ``jurist calibrate
TASK --gold FILE`` and ``jurist optimize`` read, with people's labels in the gold column.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from figure_checks import by_title, check_figures
from jurist.errors import ConfigError, InputError
from jurist.judges.config import load_config
from jurist.jury.loop import run_judgment
from jurist.report.jsonout import dumps
from jurist.report.review import LabelSpec
from jurist.tasks.declarative import load_task_file
from support import run_cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CASES = {
    "mt-bench-grader": "answers.jsonl",
    "context-faithfulness": "rows.jsonl",
    "llmbar-pairwise": "pairs.json",
    "heritage-custodian-type": "texts.csv",
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple]:
    """Every example judged by its offline baseline."""
    base = tmp_path_factory.mktemp("declarative-figures")
    found = {}
    for name, data in CASES.items():
        task = load_task_file(EXAMPLES / name / "task.yaml")
        options = task.options()
        run = run_judgment(
            task, EXAMPLES / name / data, base / name, load_config(None), options, progress=False
        )
        found[name] = (task, options, run)
    return found


def test_review_follows_the_output_kind(runs) -> None:
    expected = {
        # Every kind but a set of labels has a confidence: stated, or weighed (logprobs: true).
        "mt-bench-grader": ("verdict", LabelSpec("score", low=1, high=10), "confidence"),
        "context-faithfulness": ("verdict", LabelSpec("bool"), "confidence"),
        "llmbar-pairwise": ("winner", LabelSpec("choice", ("A", "B", "tie")), "confidence"),
        "heritage-custodian-type": (
            "verdict",
            LabelSpec("choice", tuple("GLAMORCUBESFIXPHDNT")),
            "confidence",
        ),
    }
    for name, (task, options, run) in runs.items():
        review = task.review(options)
        assert (review.verdict, review.label, review.confidence) == expected[name], name
        assert (review.gold, review.agrees) == ("gold", "correct")
        for column in (review.verdict, review.gold, review.agrees, *review.columns):
            assert column in run.items, (name, column)
        answered = run.items[run.items["status"] == "ok"]
        if name == "llmbar-pairwise":
            assert (answered["correct"] == (answered["winner"] == answered["gold"])).all()
        else:
            assert (answered["correct"] == (answered["verdict"] == answered["gold"])).all()


def test_label_task_confusion_is_the_summarys(runs) -> None:
    task, options, run = runs["heritage-custodian-type"]
    figures = by_title(check_figures(task.figures(run.scores, options)))
    assert list(figures) == ["verdict: judge vs gold", "Agreement with gold"]
    confusion = run.summary["agreement"]["confusion"]
    assert figures["verdict: judge vs gold"].data["labels"] == confusion["labels"]
    assert figures["verdict: judge vs gold"].data["matrix"] == confusion["matrix"]
    bars = {bar["label"]: bar for bar in figures["Agreement with gold"].data["bars"]}
    for name in ("accuracy", "kappa", "macro_f1"):
        agreement = run.summary["agreement"]
        assert (bars[name]["value"], bars[name]["low"], bars[name]["high"]) == (
            agreement[name],
            agreement[f"{name}_low"],
            agreement[f"{name}_high"],
        )


def test_bool_task_with_confidence_has_roc_and_reliability(runs) -> None:
    task, options, run = runs["context-faithfulness"]
    figures = by_title(check_figures(task.figures(run.scores, options)))
    assert [f.kind for f in figures.values()] == ["confusion", "roc", "reliability", "bars"]
    assert figures["verdict: judge vs gold"].data["matrix"] == run.summary["agreement"]["confusion"]["matrix"]
    (curve,) = figures["ROC of the judge's confidence"].data["curves"]
    assert curve["auc"] == pytest.approx(run.summary["agreement"]["auroc"])
    bins = figures["Reliability of the judge's confidence"].data["bins"]
    assert sum(b["n"] for b in bins) == run.summary["gold"]["scored"]
    bars = {bar["label"]: bar["value"] for bar in figures["Agreement with gold"].data["bars"]}
    assert bars["auroc"] == run.summary["agreement"]["auroc"]


def test_score_task_shows_distributions_and_the_qwk_context(runs) -> None:
    task, options, run = runs["mt-bench-grader"]
    figures = by_title(check_figures(task.figures(run.scores, options)))
    assert [f.kind for f in figures.values()] == ["histogram", "scatter", "bars", "confusion"]
    scored = run.items[run.items["status"] == "ok"]
    judge, gold = figures["Scores: judge and gold"].data["series"]
    assert judge["values"] == scored["verdict"].astype(float).tolist()
    assert gold["values"] == scored["gold"].astype(float).tolist()
    confusion = figures["Scores: judge vs gold"].data
    assert confusion["labels"] == [str(v) for v in range(1, 11)]
    matrix = confusion["matrix"]
    assert sum(map(sum, matrix)) == run.summary["gold"]["scored"] == len(scored)
    for g, v in zip(scored["gold"], scored["verdict"], strict=True):
        assert matrix[int(g) - 1][int(v) - 1] > 0
    exact = sum(matrix[i][i] for i in range(10)) / len(scored)
    bars = {bar["label"]: bar["value"] for bar in figures["Agreement with gold scores"].data["bars"]}
    agreement = run.summary["agreement"]
    assert bars["exact"] == pytest.approx(exact) == pytest.approx(agreement["exact_agreement"])
    assert (bars["QWK"], bars["Spearman"], bars["Kendall τ"]) == (
        agreement["qwk"],
        agreement["spearman"],
        agreement["kendall_tau"],
    )
    assert f"MAE {agreement['mae']:.3f}" in figures["Agreement with gold scores"].caption


def test_pairwise_task_shows_rows_win_rates_and_biases(runs) -> None:
    task, options, run = runs["llmbar-pairwise"]
    figures = by_title(check_figures(task.figures(run.scores, options)))
    assert list(figures) == [
        "Row verdicts: judge vs gold",
        "Agreement with gold",
        "Win rates",
        "Consistency, position and length bias",
    ]
    summary = run.summary
    assert (
        figures["Row verdicts: judge vs gold"].data["matrix"] == summary["agreement"]["confusion"]["matrix"]
    )
    pairs = run.scores.extra["pairs"]
    complete = pairs[pairs["verdict"].notna()]
    wins = {bar["label"]: bar for bar in figures["Win rates"].data["bars"]}
    for choice in ("A", "B", "tie"):
        assert wins[choice]["value"] == summary["pairs"][f"win_rate_{choice}"]
        assert wins[choice]["value"] == pytest.approx((complete["verdict"] == choice).mean())
        assert wins[choice]["low"] <= wins[choice]["value"] <= wins[choice]["high"]
    bias = {
        bar["label"]: bar["value"] for bar in figures["Consistency, position and length bias"].data["bars"]
    }
    assert bias["consistency"] == summary["pairs"]["consistency"]
    assert bias["first position picked"] == summary["pairs"]["position_1_rate"]
    assert bias["longer picked (judge)"] == summary["pairs"]["longer_win_rate"]
    assert bias["longer preferred (gold)"] == summary["pairs"]["gold_longer_rate"]


# ---------------------------------------------------------------------- label export


def _write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(dumps(row, indent=None) + "\n" for row in rows), encoding="utf-8")
    return path


def _baseline_verdicts(task, rows) -> dict[str, object]:
    judge = task.baseline(task.options()).function
    return {row.id: judge(**row.inputs)["verdict"] for row in rows}


def test_exported_labels_are_what_calibrate_and_optimize_read(runs, tmp_path: Path) -> None:
    task, options, _ = runs["context-faithfulness"]
    data = EXAMPLES / "context-faithfulness" / "rows.jsonl"
    dataset = task.read(data, options)
    flipped = {row.id: not row.gold for row in dataset.rows[:3]}
    labels = {key: ("yes" if value else "no") for key, value in flipped.items()}
    rows = task.gold_rows(dataset, labels, options)
    gold_file = _write_jsonl(tmp_path / "gold.jsonl", rows)
    # Every row kept, people's labels winning, every other column as it was.
    originals = [json.loads(line) for line in data.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == len(originals)
    for original, row in zip(originals, rows, strict=True):
        expected = flipped.get(original["id"], original["adherence_score"])
        assert row == {**original, "adherence_score": expected}
    # calibrate reads the file as gold: accuracy by hand from the labels and the baseline's verdicts.
    verdicts = _baseline_verdicts(task, dataset.rows)
    final = {row.id: flipped.get(row.id, row.gold) for row in dataset.rows}
    expected_accuracy = sum(verdicts[key] == final[key] for key in final) / len(final)
    task_file = str(EXAMPLES / "context-faithfulness" / "task.yaml")
    out = tmp_path / "cal"
    assert (
        run_cli(["calibrate", task_file, "--gold", str(gold_file), "--out", str(out), "--resamples", "50"])
        == 0
    )
    leaderboard = pd.read_csv(out / "leaderboard.csv")
    assert leaderboard.loc[0, "items"] == len(final)
    assert leaderboard.loc[0, "accuracy"] == pytest.approx(expected_accuracy)
    # optimize reads the same gold.
    examples = task.gold_examples(gold_file, options)
    assert {example.example_id: example.gold for example in examples} == final


def test_data_without_gold_exports_the_labelled_rows_with_their_ids(tmp_path: Path) -> None:
    task = load_task_file(EXAMPLES / "heritage-custodian-type" / "task.yaml")
    options = task.options()
    source = pd.read_csv(EXAMPLES / "heritage-custodian-type" / "texts.csv")
    unlabelled = tmp_path / "texts.csv"
    source.drop(columns=["custodian_type", "id"]).to_csv(unlabelled, index=False)
    spec = task.spec.model_copy(update={"id": None})
    positional = type(task)(spec, EXAMPLES / "heritage-custodian-type" / "task.yaml")
    with pytest.raises(InputError, match="no row has the gold column 'custodian_type'"):
        positional.read(unlabelled, options)
    dataset = positional.read(unlabelled, task.options({"no_gold": True}))  # --no-gold
    assert [row.id for row in dataset.rows[:3]] == ["1", "2", "3"] and dataset.rows[0].gold is None
    rows = positional.gold_rows(dataset, {"2": "M", "5": "L"}, options)
    assert [(row["id"], row["custodian_type"], row["text"]) for row in rows] == [
        ("2", "M", source.loc[1, "text"]),
        ("5", "L", source.loc[4, "text"]),
    ]
    # Read back: the rows keep the ids they were labelled under.
    back = positional.read(_write_jsonl(tmp_path / "gold.jsonl", rows), options)
    assert [(row.id, row.gold) for row in back.rows] == [("2", "M"), ("5", "L")]


def test_pairwise_labels_by_order_and_bad_labels(runs) -> None:
    task, options, _ = runs["llmbar-pairwise"]
    dataset = task.read(EXAMPLES / "llmbar-pairwise" / "pairs.json", options)
    first, second = dataset.rows[0].id, dataset.rows[1].id
    rows = task.gold_rows(dataset, {f"{first}|AB": "tie", f"{first}|BA": "tie", second: "B"}, options)
    by_id = {row["id"]: row for row in rows}
    assert len(rows) == len(dataset.rows)
    assert by_id[first]["label"] == "tie" and by_id[second]["label"] == "B"
    with pytest.raises(ConfigError, match="two labels"):
        task.gold_rows(dataset, {f"{first}|AB": "A", f"{first}|BA": "B"}, options)
    with pytest.raises(ConfigError, match="item 'nope'"):
        task.gold_rows(dataset, {"nope": "A"}, options)
    with pytest.raises(ConfigError, match=f"item '{second}'.*A, B or tie"):
        task.gold_rows(dataset, {second: "C"}, options)


def test_a_task_without_gold_cannot_export(tmp_path: Path) -> None:
    task = load_task_file(EXAMPLES / "mt-bench-grader" / "task.yaml")
    blind = type(task)(task.spec.model_copy(update={"gold": None}), tmp_path / "task.yaml")
    dataset = blind.read(EXAMPLES / "mt-bench-grader" / "answers.jsonl", blind.options())
    assert blind.review(blind.options()).label is None
    with pytest.raises(ConfigError, match="names no 'gold' column"):
        blind.gold_rows(dataset, {"1": 5}, blind.options())
