"""Pairwise runs are scored by the contract's one ``score``: a comparison's two orders are one
unit, the run's table is the record table (:attr:`Task.unit_table`), SubEval's files are the
task's own export files (also written to ``--out``), and the options come from what the run
recorded."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pandas as pd
import pytest

import jurist
from jurist.errors import ExitCode
from jurist.tasks import Task, get_task
from jurist.tasks._registry import BUILTIN
from support import run_cli

DATA = Path(__file__).resolve().parents[1] / "data"
SUBEVAL = DATA / "devbench-subeval" / "examples" / "DevBench_projects_example.xlsx"
LLMBAR = DATA / "llmbar" / "natural_sample.json"
TWO_MODELS = {"reference_model": "gpt-3.5-turbo-1106", "compare": ["gpt-3.5-turbo-1106", "gpt-4-0613"]}


def test_no_built_in_task_overrides_a_step_of_the_pipeline() -> None:
    for name in BUILTIN:
        cls = type(get_task(name))
        assert cls.score is Task.score, name
        assert cls.make_judge is Task.make_judge, name
        assert not hasattr(cls, "judge"), name


def _figures(summary: dict) -> dict:
    return {key: value for key, value in summary.items() if key not in ("run", "usage")}


def test_a_subeval_run_scores_alike_from_its_data_and_from_its_record_table(tmp_path: Path) -> None:
    data = tmp_path / "table.xlsx"
    shutil.copy(SUBEVAL, data)
    out = tmp_path / "run"
    judged = jurist.judge("pairwise", data, out=out, options={"resamples": 20, **TWO_MODELS}, progress=False)
    # Scored without options: the reference and compared models are the run's recorded ones.
    from_data = jurist.score("pairwise", out, options={"resamples": 20})
    assert _figures(from_data.summary) == _figures(judged.summary)
    assert from_data.summary["reference_model"] == "gpt-3.5-turbo-1106"
    # One row per comparison, exact matches included; the counts are the judged items.
    summary = from_data.summary
    assert len(from_data.items) == summary["comparisons"] == summary["items"] + summary["exact_matches"]
    assert "- Records: `" + str(out / "record_baseline_2.tsv") + "`" in from_data.report
    data.unlink()
    from_table = jurist.score("pairwise", out, options={"resamples": 20})
    assert _figures(from_table.summary) == _figures(judged.summary)
    pd.testing.assert_frame_equal(
        from_table.items.drop(columns=["line"]), from_data.items.drop(columns=["line"]), check_dtype=False
    )


def test_score_out_writes_subevals_files_and_leaves_the_run_as_it_was(tmp_path: Path, capsys) -> None:
    out = tmp_path / "run"
    jurist.judge("pairwise", SUBEVAL, out=out, options={"resamples": 0, **TWO_MODELS}, progress=False)
    before = {path.name: path.stat().st_mtime_ns for path in out.iterdir()}
    tables = tmp_path / "tables"
    assert run_cli(["score", "pairwise", str(out), "--out", str(tables), "--resamples", "0"]) == 0
    written = {path.name for path in tables.iterdir()}
    assert {
        "log.txt",
        "summary.md",
        "win_rates.csv",
        "record_baseline_2.tsv",
        "record_baseline_2.xlsx",
    } <= written
    assert (tables / "log.txt").read_text(encoding="utf-8") == (out / "log.txt").read_text(encoding="utf-8")
    assert {path.name: path.stat().st_mtime_ns for path in out.iterdir()} == before


def test_a_pairwise_gold_run_is_scored_with_the_options_it_was_judged_with(tmp_path: Path, capsys) -> None:
    out = tmp_path / "gold"
    args = [
        "judge",
        "pairwise-gold",
        str(LLMBAR),
        "--out",
        str(out),
        "--num-options",
        "3",
        "--resamples",
        "0",
    ]
    assert run_cli([*args, "--no-progress"]) == 0
    judged = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    capsys.readouterr()
    assert run_cli(["score", "pairwise-gold", str(out), "--resamples", "0", "--json"]) == 0
    scored = json.loads(capsys.readouterr().out)
    assert scored["num_options"] == judged["num_options"] == 3
    assert scored["agreement"] == judged["agreement"]


def test_a_pairs_run_whose_data_is_gone_names_the_file(tmp_path: Path, capsys) -> None:
    data = tmp_path / "pairs.json"
    shutil.copy(LLMBAR, data)
    out = tmp_path / "run"
    jurist.judge("pairwise", data, out=out, options={"resamples": 0}, progress=False)
    data.unlink()
    capsys.readouterr()
    assert run_cli(["score", "pairwise", str(out)]) == ExitCode.BAD_INPUT
    assert "pairs.json: file not found" in capsys.readouterr().err
    assert run_cli(["score", "pairwise", str(out), "--gold", str(LLMBAR), "--resamples", "0"]) == 0


def test_a_subeval_run_is_written_without_the_xlsx_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = tmp_path / "table.jsonl"
    pd.read_excel(SUBEVAL).to_json(table, orient="records", lines=True)
    monkeypatch.setitem(sys.modules, "openpyxl", None)  # as after `pip install jurist`
    out = tmp_path / "run"
    assert (
        run_cli(["judge", "pairwise", str(table), "--out", str(out), "--resamples", "0", "--no-progress"])
        == 0
    )
    assert (out / "record_baseline_2.tsv").is_file() and (out / "record_baseline_2.parquet").is_file()
    assert not list(out.glob("*.xlsx"))
    assert (out / "log.txt").is_file() and (out / "items.csv").is_file()
