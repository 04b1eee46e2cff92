"""What every ``jurist`` command promises: the exit-code table, strict ``--json``, help that
wraps to the terminal, ``--out`` as the run directory, ``score`` reading what ``judge`` wrote,
and exports that a failure mid-write never leaves half written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from jurist.errors import ExitCode
from jurist.testing import Fault, OpenAICompatibleServer
from support import ragbench_rows, run_cli, write_jsonl

ROOT = Path(__file__).resolve().parents[2]
GATES = ROOT / "tests" / "data" / "gates"
YAML_TASK = ROOT / "examples" / "context-faithfulness"


def _llm_args(base_url: str, cache: Path) -> list[str]:
    return [
        "--model",
        "openai/loopback-judge",
        "--api-base",
        base_url,
        "--cache-dir",
        str(cache),
        "--set",
        "api_key_env=JURIST_TEST_API_KEY",
        "--set",
        "parse_retries=0",
        "--set",
        "retry_max_wait=0.1",
    ]


def _pairs(path: Path, count: int = 3) -> Path:
    rows = [
        {
            "id": f"p{i}",
            "question": f"Question {i}?",
            "response_1": f"Short {i}.",
            "response_2": f"A longer answer {i}.",
            "label": "2",
        }
        for i in range(count)
    ]
    return write_jsonl(path, rows)


# ---------------------------------------------------------------------- the exit-code table


def test_table_values_are_the_documented_ones() -> None:
    assert {code.name: int(code) for code in ExitCode} == {
        "OK": 0,
        "GATE_FAILED": 1,
        "BAD_INPUT": 2,
        "FAILED_ITEMS": 3,
        "RUN_LOCKED": 4,
        "FATAL_PROVIDER": 5,
        "TRACKING_FAILED": 6,
        "COST_LIMIT": 7,
        "INTERNAL": 70,
        "INTERRUPTED": 130,
        "TERMINATED": 143,
    }
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    reliability = (ROOT / "docs" / "reliability.md").read_text(encoding="utf-8")
    assert "docs/reliability.md#exit-codes" in readme
    for code in ExitCode:
        assert f"| {int(code)} |" in reliability, code


def test_exit_0_ok_and_2_bad_input_and_usage(tmp_path: Path, capsys) -> None:
    data = write_jsonl(tmp_path / "rows.jsonl", ragbench_rows(3))
    assert run_cli(["judge", "ragbench", str(data), "--out", str(tmp_path / "run"), "--no-progress"]) == 0
    assert run_cli(["score", "ragbench", str(tmp_path / "run")]) == 0
    assert run_cli(["tasks"]) == 0 and run_cli(["tasks", "show", "ragbench"]) == 0
    assert run_cli(["prompt", "ragbench", str(data)]) == 0
    capsys.readouterr()
    assert run_cli(["judge", "ragbench", str(tmp_path / "none.jsonl"), "--out", str(tmp_path / "r2")]) == 2
    assert run_cli(["judge", "no-such-task", str(data)]) == 2
    assert run_cli(["judge", "ragbench", str(data), "--out", str(tmp_path / "r3"), "--bogus", "1"]) == 2
    assert run_cli(["tasks", "show", "no-such-task"]) == 2
    assert run_cli(["optimize", "gates", "--train", str(data), "--dev", str(data), "--out", "x.json"]) == 2
    assert run_cli(["nonsense-command"]) == 2


def test_exit_1_when_a_gate_is_not_met(tmp_path: Path, capsys) -> None:
    assert run_cli(
        ["gate", str(GATES / "qaset.json"), str(GATES / "trace.sample.jsonl"), "--precision-min", "1"]
    ) in (
        0,
        1,
    )
    code = run_cli(
        [
            "gate",
            str(GATES / "qaset.json"),
            str(GATES / "trace.sample.jsonl"),
            "--compliance-min",
            "1",
            "--precision-min",
            "1",
            "--citation-hit-rate-min",
            "1",
            "--fail-on-na",
        ]
    )
    assert code == ExitCode.GATE_FAILED
    data = write_jsonl(tmp_path / "gold.jsonl", ragbench_rows(6))
    args = ["calibrate", "ragbench", "--gold", str(data), "--out", str(tmp_path / "cal"), "--resamples", "0"]
    assert run_cli([*args, "--min-accuracy", "1.01"]) == ExitCode.GATE_FAILED
    assert "gate failed" in capsys.readouterr().err
    assert run_cli(args) == ExitCode.OK


def test_exit_3_when_items_failed_for_judge_and_score(tmp_path: Path, capsys) -> None:
    # Pairwise runs count and list their failed items as every task does.
    pairs = _pairs(tmp_path / "pairs.jsonl")
    with OpenAICompatibleServer("I cannot decide between them.") as srv:
        args = ["judge", "pairwise", str(pairs), "--out", str(tmp_path / "run"), "--no-progress"]
        assert run_cli([*args, *_llm_args(srv.base_url, tmp_path / "cache")]) == ExitCode.FAILED_ITEMS
    assert "6 item(s) failed" in capsys.readouterr().err
    summary = json.loads((tmp_path / "run" / "summary.json").read_text(encoding="utf-8"))
    assert summary["items"] == 6 and summary["ok"] == 0 and summary["failed"] == 6
    assert sorted(summary["failed_ids"]) == sorted(f"p{i}|{o}" for i in range(3) for o in ("12", "21"))
    assert sum(summary["failure_kinds"].values()) == 6
    assert run_cli(["score", "pairwise", str(tmp_path / "run"), "--json"]) == ExitCode.FAILED_ITEMS
    scored = json.loads(capsys.readouterr().out)
    assert scored["failed"] == 6 and scored["failed_ids"] == summary["failed_ids"]


def test_exit_4_when_another_process_holds_the_run(tmp_path: Path, capsys) -> None:
    data = write_jsonl(tmp_path / "rows.jsonl", ragbench_rows(2))
    run = tmp_path / "run"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(
                f"""
                import sys, time
                from jurist.runner.lock import run_lock
                with run_lock({str(run)!r}):
                    print("held", flush=True)
                    sys.stdin.read()
                """
            ),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        assert run_cli(["judge", "ragbench", str(data), "--out", str(run), "--no-progress"]) == 4
        assert capsys.readouterr().err.startswith("error: ")
        assert not (run / "results.sqlite").exists()
    finally:
        holder.communicate("", timeout=30)


def test_exit_5_when_the_provider_refuses_every_call(tmp_path: Path, capsys) -> None:
    data = write_jsonl(tmp_path / "rows.jsonl", ragbench_rows(3))
    with OpenAICompatibleServer("unused") as srv:
        srv.fail_always(Fault.unauthorized())
        args = ["judge", "ragbench", str(data), "--out", str(tmp_path / "run"), "--no-progress"]
        assert run_cli([*args, *_llm_args(srv.base_url, tmp_path / "cache")]) == ExitCode.FATAL_PROVIDER
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "Traceback" not in err


def test_exit_130_on_ctrl_c_says_the_same_command_resumes(tmp_path: Path, capsys, monkeypatch) -> None:
    from jurist.tasks.ragbench.task import RagbenchTask

    def interrupted(*_args: object, **_kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(RagbenchTask, "read", interrupted)
    data = write_jsonl(tmp_path / "rows.jsonl", ragbench_rows(2))
    assert run_cli(["judge", "ragbench", str(data), "--out", str(tmp_path / "run")]) == 130
    assert "run the same command again to resume" in capsys.readouterr().err


def test_an_unexpected_error_is_one_line_with_the_internal_code(tmp_path: Path, capsys, monkeypatch) -> None:
    from jurist.tasks.ragbench.task import RagbenchTask

    def broken(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(RagbenchTask, "read", broken)
    data = write_jsonl(tmp_path / "rows.jsonl", ragbench_rows(2))
    code = run_cli(["judge", "ragbench", str(data), "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err
    assert code == ExitCode.INTERNAL == 70
    assert err.startswith("error: internal error: RuntimeError: a bug") and "Traceback" not in err


def test_exit_codes_from_a_real_process(tmp_path: Path) -> None:
    env = {**os.environ, "COLUMNS": "200"}
    data = write_jsonl(tmp_path / "rows.jsonl", ragbench_rows(2))
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"\xff\xfe\n")
    for args, code in (
        (["judge", "ragbench", str(data), "--out", str(tmp_path / "run"), "--no-progress"], 0),
        (["judge", "ragbench", str(bad), "--out", str(tmp_path / "run2")], 2),
        (["gate", str(tmp_path), str(GATES / "trace.sample.jsonl")], 2),
    ):
        done = subprocess.run(
            [sys.executable, "-m", "jurist", *args], capture_output=True, text=True, timeout=120, env=env
        )
        assert done.returncode == code, done.stderr
        if code:
            assert "Traceback" not in done.stderr and done.stderr.startswith("error: "), done.stderr


# ---------------------------------------------------------------------- output


def test_json_output_is_strict_json_with_null_for_nan(tmp_path: Path, capsys) -> None:
    # One gold label only: AUROC cannot be computed (NaN inside); --json prints null.
    rows = [{**row, "adherence_score": True} for row in ragbench_rows(3)]
    data = write_jsonl(tmp_path / "rows.jsonl", rows)
    assert run_cli(["judge", "ragbench", str(data), "--out", str(tmp_path / "run"), "--no-progress"]) == 0
    capsys.readouterr()
    assert run_cli(["score", "ragbench", str(tmp_path / "run"), "--gold", str(data), "--json"]) == 0
    text = capsys.readouterr().out

    def refuse(constant: str) -> None:
        raise AssertionError(f"not JSON: {constant}")

    summary = json.loads(text, parse_constant=refuse)
    assert None in _leaves(summary)
    json.loads((tmp_path / "run" / "summary.json").read_text(encoding="utf-8"), parse_constant=refuse)
    for args in (
        ["tasks", "--json"],
        ["tasks", "show", "pairwise", "--json"],
        ["prompt", "ragbench", str(data), "--json"],
    ):
        assert run_cli(args) == 0
        json.loads(capsys.readouterr().out, parse_constant=refuse)


def _leaves(value: object) -> list[object]:
    if isinstance(value, dict):
        return [leaf for item in value.values() for leaf in _leaves(item)]
    if isinstance(value, list):
        return [leaf for item in value for leaf in _leaves(item)]
    return [value]


def test_help_wraps_to_the_terminal_width() -> None:
    env = {**os.environ, "COLUMNS": "200", "TERM": "dumb"}
    done = subprocess.run(
        [sys.executable, "-m", "jurist", "judge", "--help"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0
    widest = max(len(line.rstrip()) for line in done.stdout.splitlines())
    assert widest > 100, done.stdout
    # The first docstring line is printed whole, not cut at 80 columns.
    assert (
        "Judge every row of DATA with TASK's judge into a run directory: jurist judge TASK DATA --out DIR."
        in (done.stdout)
    )


# ---------------------------------------------------------------------- --out and score


def _headline(summary: object, keys: tuple[str, ...]) -> dict[str, object]:
    assert isinstance(summary, dict)
    return {key: summary.get(key) for key in keys}


@pytest.mark.parametrize(
    ("task", "data", "extra", "keys"),
    [
        ("ragbench", "sample:ragbench", [], ("items", "ok", "failed", "trace", "agreement")),
        ("pairwise", "sample:pairs", ["--resamples", "0"], ("items", "ok", "failed", "agreement")),
        ("pairwise-gold", "sample:pairs", ["--resamples", "0"], ("agreement", "by_label")),
        ("rgb-rejection", "sample:rgb-judgments", [], ("items", "ok", "failed")),
        ("heritage", "sample:heritage", [], ("items", "ok", "failed", "headline")),
        (str(YAML_TASK / "task.yaml"), str(YAML_TASK / "rows.jsonl"), [], ("items", "ok", "failed")),
        (
            "gates",
            str(GATES / "trace.sample.jsonl"),
            ["--gold", str(GATES / "qaset.json")],
            ("items", "gate"),
        ),
    ],
)
def test_score_reads_what_judge_wrote(
    task: str, data: str, extra: list[str], keys: tuple[str, ...], tmp_path: Path, capsys
) -> None:
    out = tmp_path / "run"
    assert run_cli(["judge", task, data, "--out", str(out), "--no-progress", *extra]) == 0
    capsys.readouterr()
    written = json.loads((out / "summary.json").read_text(encoding="utf-8"))  # --out is the run itself
    score_extra = [arg for arg in extra if arg != "--gold" and not arg.endswith("qaset.json")]
    assert run_cli(["score", task, str(out), "--json", *score_extra]) == 0
    scored = json.loads(capsys.readouterr().out)
    assert _headline(scored, keys) == _headline(written, keys)
    assert any(value is not None for value in _headline(scored, keys).values())


def test_rgb_run_out_is_the_run_directory_and_score_reads_it(tmp_path: Path, capsys) -> None:
    out = tmp_path / "rgb"
    args = ["rgb", "run", "--data-dir", "sample:rgb", "--out", str(out), "--limit", "2", "--no-progress"]
    assert run_cli([*args, "--sets", "counterfactual", "--languages", "en", "--no-chart"]) == 0
    written = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    capsys.readouterr()
    assert run_cli(["score", "rgb", str(out), "--json"]) == 0
    scored = json.loads(capsys.readouterr().out)
    entries = scored if isinstance(scored, list) else [scored]
    assert [e["all_rate"] for e in entries] == [run["all_rate"] for run in written["runs"]]


# ---------------------------------------------------------------------- atomic exports


def test_a_failure_mid_export_leaves_the_previous_files(tmp_path: Path, capsys, monkeypatch) -> None:
    data = write_jsonl(tmp_path / "rows.jsonl", ragbench_rows(3))
    run = tmp_path / "run"
    assert run_cli(["judge", "ragbench", str(data), "--out", str(run), "--no-progress"]) == 0
    exports = ("results.jsonl", "items.csv", "items.parquet", "summary.json", "report.md")
    before = {name: (run / name).read_bytes() for name in exports}

    import pyarrow as pa
    import pyarrow.parquet as pq

    real_write_table = pq.ParquetWriter.write_table

    def half_then_fail(self: pq.ParquetWriter, table: pa.Table, *args: object, **kwargs: object) -> None:
        real_write_table(self, table.slice(0, 1), *args, **kwargs)  # part of the table is on disk ...
        raise OSError(28, "No space left on device")  # ... and then the disk is full

    monkeypatch.setattr(pq.ParquetWriter, "write_table", half_then_fail)
    assert run_cli(["score", "ragbench", str(run)]) == 0  # score without writing: unaffected
    from jurist import score

    with pytest.raises(OSError, match="No space"):
        score("ragbench", run, write=True)
    assert {name: (run / name).read_bytes() for name in exports} == before
    assert not [p.name for p in run.iterdir() if ".tmp" in p.name]


def test_atomic_write_keeps_the_old_file_when_the_writer_fails(tmp_path: Path) -> None:
    from jurist.atomic import atomic_write, atomic_writer

    target = tmp_path / "report.md"
    target.write_text("old", encoding="utf-8")
    with pytest.raises(RuntimeError), atomic_writer(target) as handle:
        handle.write("new, half")
        raise RuntimeError("killed")
    assert target.read_text(encoding="utf-8") == "old"

    def failing(path: Path) -> None:
        path.write_text("partial", encoding="utf-8")
        raise OSError("disk full")

    with pytest.raises(OSError):
        atomic_write(target, failing)
    assert target.read_text(encoding="utf-8") == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.md"]
    atomic_write(target, lambda path: path.write_text("new", encoding="utf-8"))
    assert target.read_text(encoding="utf-8") == "new"
