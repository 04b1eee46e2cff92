"""`jurist score pairwise` and `jurist score pairwise-gold` through Typer's test runner."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from typer.testing import CliRunner

import jurist.cli.verbs  # noqa: F401  (registers the commands)
from jurist.cli import app
from jurist.errors import ExitCode, InputError
from support import run_cli

DATA = Path(__file__).parents[1] / "data"
RECORD = (
    DATA
    / "devbench-subeval"
    / "output"
    / "DevBench_projects_example_infer_input_2680_record0_gpt-4-1106-preview_2"
    / "record_gpt-4-1106-preview_2.tsv"
)


def test_score_pairwise_json() -> None:
    result = CliRunner().invoke(app, ["score", "pairwise", str(RECORD), "--json", "--resamples", "0"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert summary["extraction_rate"] == 1.0 and summary["consistency_rate"] == 1.0
    assert summary["reference_model"] == "gpt-3.5-turbo-1106"


def test_unknown_reference_model_is_an_input_error() -> None:
    result = CliRunner().invoke(app, ["score", "pairwise", str(RECORD), "--reference-model", "gpt-5"])
    assert isinstance(result.exception, InputError)
    assert result.exception.field == "reference_model"
    assert "gpt-5" in str(result.exception) and str(RECORD) in str(result.exception)


def test_missing_record_file_is_an_input_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["score", "pairwise", str(tmp_path / "nope.tsv")])
    assert isinstance(result.exception, InputError)


def test_score_pairwise_gold(tmp_path: Path) -> None:
    pairs = DATA / "llmbar" / "natural_sample.json"
    run = tmp_path / "run"
    judged = CliRunner().invoke(
        app, ["judge", "pairwise-gold", str(pairs), "--out", str(run), "--no-progress"]
    )
    assert judged.exit_code == 0, judged.output
    out = tmp_path / "tables"
    result = CliRunner().invoke(app, ["score", "pairwise-gold", str(run), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "# Agreement with gold labels: baseline (2 options, both orders)" in result.output
    agreement = pd.read_csv(out / "agreement.csv")
    assert list(agreement["dataset"]) == ["natural_sample"]
    assert {"accuracy", "accuracy_low", "accuracy_high", "kappa", "consistency_rate"} <= set(
        agreement.columns
    )
    pd.testing.assert_frame_equal(agreement, pd.read_csv(run / "agreement.csv"))
    assert (out / "agreement.md").is_file() and (out / "judged_pairs.csv").is_file()
    by_label = pd.read_csv(out / "agreement_by_label.csv")
    assert (by_label["rate_low"] <= by_label["rate"]).all() and (
        by_label["rate"] <= by_label["rate_high"]
    ).all()


def test_judge_then_score_the_run_directory(tmp_path: Path) -> None:
    pairs = DATA / "llmbar" / "natural_sample.json"
    judged = CliRunner().invoke(
        app, ["judge", "pairwise", str(pairs), "--out", str(tmp_path), "--no-progress", "--resamples", "50"]
    )
    assert judged.exit_code == 0, judged.output
    run_dir = tmp_path  # --out is the run directory, as for every task
    assert judged.output.rstrip("\n").endswith(
        f"run directory: {run_dir}\nhtml report: {run_dir / 'report.html'}"
    )
    # The run directory scores to the same report.
    for target in (run_dir,):
        scored = CliRunner().invoke(app, ["score", "pairwise", str(target), "--resamples", "50"])
        assert scored.exit_code == 0, scored.output
        assert scored.output.rstrip("\n") in judged.output
    summary = json.loads(
        CliRunner().invoke(app, ["score", "pairwise", str(run_dir), "--json", "--resamples", "0"]).output
    )
    assert summary["judge"] == "baseline" and summary["agreement"][-1]["pairs"] == 12


def test_pairs_files_are_judged_first_and_compared_side_by_side_by_calibrate(tmp_path: Path, capsys) -> None:
    pairs = DATA / "llmbar" / "natural_sample.json"
    assert run_cli(["score", "pairwise-gold", str(pairs)]) == ExitCode.BAD_INPUT
    assert "data is judged first: jurist judge TASK DATA --out DIR" in capsys.readouterr().err
    args = ["calibrate", "pairwise", "--gold", str(pairs), "--gold", "sample:pairs", "--out", str(tmp_path)]
    result = CliRunner().invoke(app, [*args, "--format", "csv"])
    assert result.exit_code == 0, result.output
    board = pd.read_csv(tmp_path / "leaderboard.csv")
    assert list(board["dataset"]) == ["natural_sample", "llmbar_natural_sample"]
    assert list(board["judge"]) == ["baseline", "baseline"] and list(board["items"]) == [12, 50]


def test_prompt_shows_both_orders_of_a_pair() -> None:
    result = CliRunner().invoke(
        app, ["prompt", "pairwise", str(DATA / "llmbar" / "natural_sample.json"), "--row", "1"]
    )
    assert result.exit_code == 0, result.output
    items = [line for line in result.output.splitlines() if line.startswith("=== item ")]
    assert len(items) == 2 and items[0].endswith("|12 ===") and items[1].endswith("|21 ===")
