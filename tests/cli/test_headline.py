"""The headline on the console: ``jurist judge`` prints the task's headline agreement with its
interval on one line, ``jurist score`` a compact table that starts with it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from tests.support import run_cli

from jurist.report.console import Headline, compact_table, number, with_interval

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
INTERVAL = r"-?\d\.\d{3} \[-?\d\.\d{3}, -?\d\.\d{3}\]"

CASES = {
    # example: (data file, the headline figures judge prints)
    "support-answers": ("answers.csv", ["QWK", "MAE"]),
    "heritage-custodian-type": ("texts.csv", ["accuracy", "κ"]),
    "context-faithfulness": ("rows.jsonl", ["accuracy", "AUROC"]),
    "llmbar-pairwise": ("pairs.json", ["agreement", "consistency"]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_judge_prints_the_headline_of_each_output_kind(name, tmp_path, capsys):
    data, figures = CASES[name]
    task = str(EXAMPLES / name / "task.yaml")
    out = tmp_path / "run"
    assert run_cli(["judge", task, str(EXAMPLES / name / data), "--out", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out.splitlines()
    line = next(line for line in printed if line.startswith("agreement with gold: "))
    pattern = " · ".join(f"{re.escape(figure)} {INTERVAL}" for figure in figures)
    assert re.fullmatch(f"agreement with gold: {pattern}", line), line


def test_score_prints_a_compact_table_headline_first(tmp_path, capsys):
    task = str(EXAMPLES / "support-answers" / "task.yaml")
    data = str(EXAMPLES / "support-answers" / "answers.csv")
    out = tmp_path / "run"
    assert run_cli(["judge", task, data, "--out", str(out), "--no-progress"]) == 0
    capsys.readouterr()
    assert run_cli(["score", task, str(out), "--gold", data]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[:2] == ["support-answers", "headline:"]
    assert re.fullmatch(r"  QWK +0\.893 \[0\.800, 0\.946\]", lines[2])
    assert re.fullmatch(r"  MAE +0\.438 \[0\.188, 0\.688\]", lines[3])
    text = "\n".join(lines)
    # One cell for a value and its interval, readable names, no Markdown, no empty rows.
    assert re.search(r"\n  Spearman ρ +0\.885 \[0\.728, 0\.953\]\n", text)
    assert "qwk_low" not in text and "|" not in text and "failed ids" not in text
    assert "cost" not in text  # no price known: no row
    assert all(line.split() for line in lines)
    assert sum(line.lstrip().startswith("QWK") for line in lines) == 1


def test_score_json_is_unchanged(tmp_path, capsys):
    task = str(EXAMPLES / "support-answers" / "task.yaml")
    data = str(EXAMPLES / "support-answers" / "answers.csv")
    out = tmp_path / "run"
    assert run_cli(["judge", task, data, "--out", str(out), "--no-progress"]) == 0
    capsys.readouterr()
    assert run_cli(["score", task, str(out), "--gold", data, "--json"]) == 0
    printed = capsys.readouterr().out
    assert '"qwk_low": 0.8' in printed and '"agreement": {' in printed


def test_numbers_drop_float_noise_and_negative_zero():
    assert number(-2e-17) == "0.000"
    assert number(-0.0004) == "0.000"
    assert with_interval(0.5, -2e-17, 1.0000000000000002) == "0.500 [0.000, 1.000]"
    assert with_interval(0.5, None, 0.9) == "0.500"
    assert number(float("nan")) == "n/a"


def test_compact_table_merges_intervals_and_leaves_out_empty_figures():
    summary = {
        "items": 3,
        "failed_ids": [],
        "usage": {"calls": 2, "cost": None},
        "agreement": {"kappa": 0.25, "kappa_low": -0.1, "kappa_high": 0.6, "accuracy": 0.5},
        "empty": {},
    }
    text = compact_table("t", summary, [Headline.of(summary["agreement"], "accuracy")])
    assert text.splitlines() == [
        "t",
        "headline:",
        "  accuracy  0.500",
        "items       3",
        "usage:",
        "  calls     2",
        "agreement:",
        "  κ         0.250 [-0.100, 0.600]",
    ]


def test_pairwise_judge_prints_agreement_and_consistency_first_and_no_blank_warning(tmp_path, capsys):
    """The built-in pairwise task's headline: accuracy and κ against gold with their
    intervals, and consistency; its optional inputs (reference answer, guidance) left blank
    by design are not warned about."""
    out = tmp_path / "pairs"
    assert run_cli(["judge", "pairwise", "sample:pairs", "--out", str(out), "--no-progress"]) == 0
    captured = capsys.readouterr()
    first = captured.out.splitlines()[0]
    assert first.startswith("agreement with gold: accuracy 0.520 [") and "consistency 0.900" in first
    assert "blank" not in captured.err
