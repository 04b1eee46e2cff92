"""`jurist score pairwise` reproduces the DevBench SubEval run's log and tables exactly."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

import jurist.cli.verbs  # noqa: F401  (registers `score pairwise`)
from jurist.cli import app
from jurist.tasks.pairwise import token_counter
from jurist.tasks.pairwise.report import subeval_log, write_pairwise_scores
from jurist.verbs import score

RUN = (
    Path(__file__).parents[1]
    / "data"
    / "devbench-subeval"
    / "output"
    / "DevBench_projects_example_infer_input_2680_record0_gpt-4-1106-preview_2"
)
RECORD = RUN / "record_gpt-4-1106-preview_2.tsv"


@pytest.fixture(scope="module")
def scores():  # type: ignore[no-untyped-def]
    return score("pairwise", RECORD).extra["scores"]


def test_lengths_are_counted_in_subeval_tokens() -> None:
    # SubEval counts cl100k_base tokens; the vocabulary ships with LiteLLM, so no download.
    assert token_counter()[1] == "cl100k_base tokens"


def test_log_is_reproduced_line_for_line(scores) -> None:  # type: ignore[no-untyped-def]
    assert scores.reference_model == "gpt-3.5-turbo-1106" and scores.reference_inferred
    assert (scores.judge, scores.num_options) == ("gpt-4-1106-preview", 2)
    assert subeval_log(scores) == (RUN / "log.txt").read_text(encoding="utf-8")


def test_written_files_match_the_run(scores, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    write_pairwise_scores(scores, tmp_path)
    assert (tmp_path / "log.txt").read_bytes() == (RUN / "log.txt").read_bytes()
    assert (tmp_path / "length_stats.csv").read_bytes() == (RUN / "length_stats.csv").read_bytes()
    for name in ("win+bothgood.xlsx", "win+halfdraw.xlsx"):
        expected, written = pd.read_excel(RUN / name), pd.read_excel(tmp_path / name)
        pd.testing.assert_frame_equal(written, expected)
        assert list(written.columns) == [
            "model",
            "Overall-lang",
            "EN",
            "uml_class",
            "uml_class-faithfulness",
            "uml_class-general",
        ]
    new = pd.read_csv(tmp_path / "win_rate_with_tie.csv")
    assert dict(zip(new["Metric;Model"], new["WinRateWithTie"], strict=True)) == {
        "faithfulness;gpt-3.5-turbo-1106;gpt-4-0125-preview": 0.0,
        "faithfulness;gpt-4-0125-preview;gpt-3.5-turbo-1106": 1.0,
        "general;gpt-3.5-turbo-1106;gpt-4-0125-preview": 0.0,
        "general;gpt-4-0125-preview;gpt-3.5-turbo-1106": 1.0,
    }
    assert not (tmp_path / "inconsistent_cmp.tsv").exists()  # every judgement is consistent
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    for figure in ("| comparisons (both orders counted) | 8 |", "| choice extracted | 8 / 8 (100.00%) |"):
        assert figure in summary


def test_cli_reproduces_the_run(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["score", "pairwise", str(RECORD), "--out", str(tmp_path), "--resamples", "50"]
    )
    assert result.exit_code == 0, result.output
    assert "# Pairwise scores: gpt-4-1106-preview" in result.output
    assert (tmp_path / "log.txt").read_text(encoding="utf-8") == (RUN / "log.txt").read_text(encoding="utf-8")
