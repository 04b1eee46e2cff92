"""Every example task runs offline through its baseline: judge, score and calibrate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jurist import verbs
from jurist.tasks.declarative import load_task_file

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CASES = {
    "mt-bench-grader": "answers.jsonl",
    "context-faithfulness": "rows.jsonl",
    "llmbar-pairwise": "pairs.json",
    "heritage-custodian-type": "texts.csv",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_example_runs_offline(name, tmp_path):
    task_file = EXAMPLES / name / "task.yaml"
    data = EXAMPLES / name / CASES[name]
    task = load_task_file(task_file)
    run = verbs.judge(task_file, data, out=tmp_path / "run", progress=False)
    rows = task.read(data, task.options()).rows
    assert 10 <= len(rows) <= 30
    assert run.summary["failed"] == 0
    assert run.summary["items"] == len(rows) * (2 if task.spec.kind == "pairwise" else 1)
    summary = json.loads((tmp_path / "run" / "summary.json").read_text(), parse_constant=pytest.fail)
    assert summary["gold"]["scored"] == len(rows)
    assert (tmp_path / "run" / "report.md").read_text().startswith(f"# {name}")
    again = verbs.score(task_file, tmp_path / "run", gold=data)
    assert again.summary["agreement"] == run.summary["agreement"]
    calibration = verbs.calibrate(task_file, [data], out=tmp_path / "cal", n_resamples=200)
    row = calibration.leaderboard.iloc[0]
    assert row["judge"] == "baseline" and row["items"] == len(rows) and row["failed"] == 0
    assert (tmp_path / "cal" / "leaderboard.md").is_file()


def _hand_scored(name: str) -> tuple[list, list]:
    """(gold, baseline verdict) per row, computed here from the rules by hand."""
    task = load_task_file(EXAMPLES / name / "task.yaml")
    rows = task.read(EXAMPLES / name / CASES[name], task.options()).rows
    judge = task.baseline(task.options()).function
    return [r.gold for r in rows], [judge(**r.inputs)["verdict"] for r in rows]


def test_mt_bench_figures_by_hand(tmp_path):
    gold, judged = _hand_scored("mt-bench-grader")
    run = verbs.judge(
        EXAMPLES / "mt-bench-grader" / "task.yaml",
        EXAMPLES / "mt-bench-grader" / "answers.jsonl",
        out=tmp_path / "run",
        progress=False,
    )
    figures = run.summary["agreement"]
    n = len(gold)
    assert figures["mae"] == pytest.approx(sum(abs(g - j) for g, j in zip(gold, judged, strict=True)) / n)
    assert figures["exact_agreement"] == pytest.approx(
        sum(g == j for g, j in zip(gold, judged, strict=True)) / n
    )
    assert figures["within_1"] == pytest.approx(
        sum(abs(g - j) <= 1 for g, j in zip(gold, judged, strict=True)) / n
    )
    assert figures["mae_low"] <= figures["mae"] <= figures["mae_high"]


def test_heritage_accuracy_by_hand(tmp_path):
    gold, judged = _hand_scored("heritage-custodian-type")
    run = verbs.judge(
        EXAMPLES / "heritage-custodian-type" / "task.yaml",
        EXAMPLES / "heritage-custodian-type" / "texts.csv",
        out=tmp_path / "run",
        progress=False,
    )
    assert run.summary["agreement"]["accuracy"] == pytest.approx(
        sum(g == j for g, j in zip(gold, judged, strict=True)) / len(gold)
    )
    assert sum(map(sum, run.summary["agreement"]["confusion"]["matrix"])) == len(gold)


def test_llmbar_pairwise_orders_and_length_bias(tmp_path):
    task_file = EXAMPLES / "llmbar-pairwise" / "task.yaml"
    data = EXAMPLES / "llmbar-pairwise" / "pairs.json"
    run = verbs.judge(task_file, data, out=tmp_path / "run", progress=False)
    pairs = verbs.score(task_file, tmp_path / "run", gold=data).extra["pairs"]
    # The baseline's default 'shorter' picks the shorter output in both orders: consistent
    # except for the one pair of equal length (answered A, i.e. by position, both times).
    equal = pairs[pairs["length_a"] == pairs["length_b"]]
    assert len(equal) == 1 and equal.iloc[0]["verdict"] == "tie"
    figures = run.summary["pairs"]
    assert figures["consistency"] == pytest.approx((len(pairs) - 1) / len(pairs))
    assert figures["longer_win_rate"] == 0.0
    assert set(run["order"]) == {"AB", "BA"}
    assert run["id"].str.endswith(("|AB", "|BA")).all()
