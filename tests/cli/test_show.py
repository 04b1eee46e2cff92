"""``jurist show RUN ITEM``: one judged item in full, from a run judged through the loopback server."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from jurist.errors import ExitCode
from jurist.runner import RESULTS_DB
from jurist.testing import OpenAICompatibleServer
from support import loopback_config, ragbench_rows, ragbench_run, run_cli, write_jsonl


def _strict(text: str) -> object:
    def refuse(constant: str) -> None:
        raise ValueError(f"not strict JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


@pytest.fixture
def llm_run(server, llm_config, tmp_path: Path) -> Path:
    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(3))
    ragbench_run(data, tmp_path / "run", llm_config)
    return tmp_path / "run"


def test_show_prints_the_messages_in_full_and_exits_0(llm_run, server, capsys):
    (user,) = [
        m["content"]
        for body in server.bodies
        for m in body["messages"]
        if m["role"] == "user" and "fact number 1?" in m["content"]
    ]
    system = server.bodies[0]["messages"][0]["content"]

    assert run_cli(["show", str(llm_run), "item-1"]) == 0
    printed = capsys.readouterr().out
    assert "item-1 · ok" in printed and "openai/loopback-judge" in printed
    assert user in printed and system in printed  # full texts, never cut or wrapped
    assert "call 1 · attempt 1" in printed and "provider" in printed and "completion tokens" in printed
    assert "rationale" in printed and "The first sentence is relevant." in printed
    assert '"overall_supported": false' in printed  # the verdict as JSON
    assert "raw replies (1)" in printed and "[[ ## completed ## ]]" in printed


def test_show_json_is_strict_and_holds_the_calls(llm_run, server, capsys):
    assert run_cli(["show", str(llm_run), "item-0", "--json"]) == 0
    record = _strict(capsys.readouterr().out)
    assert isinstance(record, dict)
    assert record["id"] == "item-0" and record["status"] == "ok" and record["note"] is None
    assert record["run"]["task"] == "ragbench" and record["run"]["model"] == "openai/loopback-judge"
    (call,) = record["calls"]
    assert call["cache_hit"] is False and call["replies"] == record["raw"]
    assert call["messages"] in [body["messages"] for body in server.bodies]
    assert record["usage"]["calls"] == 1 and record["output"]["overall_supported"] is False


def test_an_unknown_item_is_one_line_exit_2_listing_known_ids(llm_run, capsys):
    assert run_cli(["show", str(llm_run), "no-such-item"]) == ExitCode.BAD_INPUT
    error = capsys.readouterr().err.strip()
    assert error.count("\n") == 0 and error.startswith("error: ")
    assert "no-such-item" in error and "'item-0'" in error


def test_a_directory_that_is_not_a_run_is_exit_2(tmp_path, capsys):
    assert run_cli(["show", str(tmp_path), "item-0"]) == ExitCode.BAD_INPUT
    error = capsys.readouterr().err.strip()
    assert error.count("\n") == 0 and "not a run directory" in error
    assert run_cli(["show", str(tmp_path / "missing"), "item-0"]) == ExitCode.BAD_INPUT


def test_an_item_recorded_without_its_calls_still_shows(llm_run, capsys):
    with sqlite3.connect(llm_run / RESULTS_DB) as db:
        db.execute("UPDATE results SET calls = NULL WHERE id = 'item-2'")

    assert run_cli(["show", str(llm_run), "item-2"]) == 0
    printed = capsys.readouterr().out
    assert "item-2 · ok" in printed and "no messages recorded" in printed and "raw replies (1)" in printed
    assert run_cli(["show", str(llm_run), "item-2", "--json"]) == 0
    record = _strict(capsys.readouterr().out)
    assert isinstance(record, dict) and record["calls"] is None
    assert "recorded without its LM calls" in record["note"]


def test_a_run_in_an_older_layout_is_exit_2_naming_the_version_that_wrote_it(llm_run, capsys):
    manifest = json.loads((llm_run / "manifest.json").read_text())
    manifest["versions"]["jurist"] = "0.0.9"
    (llm_run / "manifest.json").write_text(json.dumps(manifest))
    with sqlite3.connect(llm_run / RESULTS_DB) as db:  # the layout before calls were recorded
        db.execute("ALTER TABLE results DROP COLUMN calls")
        db.execute("ALTER TABLE results DROP COLUMN program")
        db.execute("DROP TABLE messages")

    assert run_cli(["show", str(llm_run), "item-2"]) == ExitCode.BAD_INPUT
    error = capsys.readouterr().err.strip()
    assert error.count("\n") == 0 and error.startswith("error: ")
    assert "written by jurist 0.0.9" in error and "no column 'calls'" in error and "--out" in error


def test_a_baseline_item_says_it_has_no_prompt(tmp_path, capsys):
    out = tmp_path / "run"
    assert run_cli(["judge", "ragbench", "sample:ragbench", "--out", str(out), "--no-progress"]) == 0
    capsys.readouterr()
    with sqlite3.connect(out / RESULTS_DB) as db:
        (first,) = db.execute("SELECT id FROM results ORDER BY seq LIMIT 1").fetchone()

    assert run_cli(["show", str(out), first]) == 0
    assert "baseline judge: no prompt" in capsys.readouterr().out


def test_a_failed_item_shows_its_error_messages_and_raw(tmp_path, capsys):
    with OpenAICompatibleServer("not a verdict at all") as server:
        config = loopback_config(server.base_url, tmp_path / "cache").model_copy(update={"parse_retries": 0})
        data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(1))
        ragbench_run(data, tmp_path / "run", config)

    assert run_cli(["show", str(tmp_path / "run"), "item-0"]) == 0
    printed = capsys.readouterr().out
    assert "item-0 · failed" in printed and "unparseable_output" in printed
    assert "no verdict" in printed and "not a verdict at all" in printed
    assert "What is fact number 0?" in printed  # the prompt of the failed call


TONE_TASK = (
    "name: tone\ninstructions: Say the tone.\ninputs: [text]\noutput: {kind: label, labels: [calm, angry]}\n"
    'baseline: {rules: [{pattern: "!", value: angry}], default: calm}\n'
)


def test_show_prints_the_judged_text_of_a_baseline_run_and_of_an_older_one(tmp_path: Path, capsys):
    import jurist

    task = tmp_path / "task.yaml"
    task.write_text(TONE_TASK, encoding="utf-8")
    data = write_jsonl(
        tmp_path / "rows.jsonl", [{"id": "x1", "text": "Fine, thanks."}, {"id": "x2", "text": "No!"}]
    )
    run = tmp_path / "run"
    jurist.judge(task, data, out=run, progress=False)
    capsys.readouterr()

    assert run_cli(["show", str(run), "x2"]) == 0
    printed = capsys.readouterr().out
    assert "judged text" in printed and "No!" in printed
    assert printed.index("No!") < printed.index("verdict")  # the text before the verdict and calls
    assert run_cli(["show", str(run), "x2", "--json"]) == 0
    assert _strict(capsys.readouterr().out)["inputs"] == {"text": "No!"}

    # A run written before jurist recorded inputs: read again from its (unchanged) data file.
    with sqlite3.connect(run / RESULTS_DB) as db:
        db.execute("UPDATE results SET inputs = NULL")
    assert run_cli(["show", str(run), "x1"]) == 0
    assert "Fine, thanks." in capsys.readouterr().out
    # Its data changed since: nothing is shown as if it were the judged text.
    write_jsonl(data, [{"id": "x1", "text": "Something else."}, {"id": "x2", "text": "No!"}])
    assert run_cli(["show", str(run), "x1"]) == 0
    printed = capsys.readouterr().out
    assert "Something else." not in printed and "not recorded in this run" in printed
