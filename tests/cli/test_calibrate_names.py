"""Names that are true: a score task's leaderboard calls its weighted kappa QWK and its
accuracy exact agreement (Markdown, HTML table and figure titles), and tokens and cost per
judgment say they are what was paid, beside the share of calls answered from the cache."""

from __future__ import annotations

from pathlib import Path

from tests.support import run_cli

from jurist.report.calibrate import cached_share

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_score_task_leaderboard_names_qwk_and_exact_agreement(tmp_path, capsys):
    task = str(EXAMPLES / "support-answers" / "task.yaml")
    gold = str(EXAMPLES / "support-answers" / "answers.csv")
    out = tmp_path / "cal"
    assert (
        run_cli(["calibrate", task, "--gold", gold, "-c", "baseline", "--out", str(out), "--no-progress"])
        == 0
    )
    printed = capsys.readouterr().out
    header = next(line for line in printed.splitlines() if line.startswith("| dataset | judge | model"))
    assert "| exact agreement | QWK |" in header and "kappa" not in header and "| accuracy |" not in header
    assert "| paid tokens/judgment | cached | paid cost/judgment |" in header
    assert "| MAE | Spearman ρ |" in printed
    html = (out / "leaderboard.html").read_text(encoding="utf-8")
    assert "QWK (quadratic-weighted kappa) against gold" in html and "Exact agreement with gold" in html
    assert "Cohen" not in html
    assert ">paid tokens/judgment<" in html and ">cached<" in html


def test_label_task_keeps_cohens_kappa(tmp_path, capsys):
    task = str(EXAMPLES / "heritage-custodian-type" / "task.yaml")
    gold = str(EXAMPLES / "heritage-custodian-type" / "texts.csv")
    out = tmp_path / "cal"
    assert (
        run_cli(["calibrate", task, "--gold", gold, "-c", "baseline", "--out", str(out), "--no-progress"])
        == 0
    )
    assert "| accuracy | kappa |" in capsys.readouterr().out
    assert "Cohen's kappa against gold" in (out / "leaderboard.html").read_text(encoding="utf-8")


def test_cached_share_counts_calls_answered_from_the_cache():
    assert cached_share({"calls": 1, "cache_hits": 3}) == "75% (3 of 4)"
    assert cached_share({"calls": 0, "cache_hits": 0}) == "n/a"
