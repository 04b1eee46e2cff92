import json
from pathlib import Path

import pytest

from support import ragbench_rows, run_cli, write_jsonl


def test_judge_sample_with_baseline_then_score(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    out = tmp_path / "run"
    assert run_cli(["judge", "ragbench", "sample:ragbench", "--out", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "60 items: 60 scored, 0 failed" in printed
    assert "hallucination AUROC vs gold" in printed
    for name in (
        "manifest.json",
        "results.sqlite",
        "results.jsonl",
        "items.csv",
        "items.parquet",
        "summary.json",
        "report.md",
    ):
        assert (out / name).is_file(), name
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["config"]["model"] == "baseline"
    assert set(manifest["versions"]) >= {"jurist", "dspy", "litellm", "python"}
    assert manifest["dataset"]["items"] == 60 and len(manifest["dataset"]["sha256"]) == 64
    summary = json.loads((out / "summary.json").read_text())
    assert summary["ok"] == 60
    assert 0.5 < summary["agreement"]["hallucination_auroc"] <= 1.0

    assert (
        run_cli(["score", "ragbench", str(out / "results.jsonl"), "--gold", "sample:ragbench", "--json"]) == 0
    )
    rescored = json.loads(capsys.readouterr().out)
    assert rescored["agreement"]["hallucination_auroc"] == summary["agreement"]["hallucination_auroc"]
    assert rescored["trace"] == summary["trace"]

    assert run_cli(["score", "ragbench", str(out)]) == 0
    assert "# RAGBench / TRACe run" in capsys.readouterr().out


def test_bad_input_exits_2_naming_file_line_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    rows = ragbench_rows(3)
    rows[2]["response"] = ["not", "text"]
    data = write_jsonl(tmp_path / "bad.jsonl", rows)
    code = run_cli(["judge", "ragbench", str(data), "--out", str(tmp_path / "run"), "--no-progress"])
    assert code == 2
    error = capsys.readouterr().err
    assert "bad.jsonl, line 3, field 'response'" in error
    assert not (tmp_path / "run" / "results.sqlite").exists()


def test_bad_config_field_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    config = tmp_path / "judge.yaml"
    config.write_text("model: openai/x\nadapter: xml\n")
    code = run_cli(["judge", "ragbench", "sample:ragbench", "--out", str(tmp_path / "r"), "-c", str(config)])
    assert code == 2
    assert "judge.yaml, line 2, field 'adapter'" in capsys.readouterr().err


def test_run_directory_of_another_dataset_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    out = tmp_path / "run"
    data = write_jsonl(tmp_path / "a.jsonl", ragbench_rows(2))
    assert run_cli(["judge", "ragbench", str(data), "--out", str(out), "--no-progress"]) == 0
    other = write_jsonl(tmp_path / "b.jsonl", ragbench_rows(3))
    assert run_cli(["judge", "ragbench", str(other), "--out", str(out), "--no-progress"]) == 2
    assert "another dataset sha256" in capsys.readouterr().err


def test_model_override_reaches_the_loopback_server(server, tmp_path: Path, capsys):
    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(3))
    args = [
        "judge",
        "ragbench",
        str(data),
        "--out",
        str(tmp_path / "run"),
        "--no-progress",
        "--model",
        "openai/loopback-judge",
        "--api-base",
        server.base_url,
        "--cache-dir",
        str(tmp_path / "cache"),
        "--set",
        "api_key_env=JURIST_TEST_API_KEY",
    ]
    assert run_cli(args) == 0
    assert server.requests == 3
    assert "3 provider calls" in capsys.readouterr().out
    # The key never reaches the run directory or the response cache.
    written = [*(tmp_path / "run").iterdir(), *(tmp_path / "cache").rglob("*")]
    assert any(file.is_file() and file.parent.name != "run" for file in written)
    for file in written:
        if file.is_file():
            assert b"loopback-test-key" not in file.read_bytes(), file


def test_config_baseline_names_the_offline_judge_for_judge_as_for_calibrate(tmp_path: Path, capsys):
    """`-c baseline` is the offline judge in `jurist judge` (as in `jurist calibrate`); a file
    called `baseline` in the working folder would still be read as a config."""
    data = write_jsonl(tmp_path / "rows.jsonl", ragbench_rows(3))
    out = tmp_path / "run"
    assert (
        run_cli(["judge", "ragbench", str(data), "-c", "baseline", "--out", str(out), "--no-progress"]) == 0
    )
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["judge"] == "baseline"
    assert "3 items: 3 scored, 0 failed" in capsys.readouterr().out
