"""The LLM path end to end through a real HTTP server on 127.0.0.1 (LiteLLM or DSPy's client)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from jurist.runner import RESULTS_DB, ResultStore
from jurist.testing import Fault, OpenAICompatibleServer, last_user_message
from support import ragbench_answer, ragbench_rows, ragbench_run, write_jsonl


def _results(run_dir: Path) -> dict[str, dict]:
    with ResultStore(run_dir / RESULTS_DB) as store:
        return {result.id: result.model_dump() for result in store.iter_results()}


@pytest.mark.parametrize("engine", ["auto", "litellm"])
def test_batch_then_rerun_makes_no_requests(engine, server, llm_config, tmp_path):
    config = llm_config.model_copy(update={"engine": engine})
    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(12))
    run = ragbench_run(data, tmp_path / "run", config)
    assert run.summary["ok"] == 12 and run.summary["failed"] == 0
    assert server.requests == 12
    assert run.summary["usage"]["calls"] == 12
    # The responder adds one key naming no sentence to every answer: dropped and counted.
    assert run.summary["dropped_keys"] == 12

    server.reset_count()
    again = ragbench_run(data, tmp_path / "run", config)
    assert server.requests == 0
    assert again.summary["ok"] == 12
    assert _results(tmp_path / "run").keys() == {f"item-{i}" for i in range(12)}

    # A new run directory with the same config is answered from the response cache.
    fresh = ragbench_run(data, tmp_path / "run2", config)
    assert server.requests == 0
    assert fresh.summary["usage"]["cache_hits"] == 12
    assert fresh.items.sort_values("id")["context_relevance"].tolist() == (
        run.items.sort_values("id")["context_relevance"].tolist()
    )


@pytest.mark.parametrize("engine", ["auto", "litellm"])
def test_rate_limits_and_server_errors_are_retried(engine, server, llm_config, tmp_path):
    config = llm_config.model_copy(update={"engine": engine, "concurrency": 1})
    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(5))
    server.inject(Fault.rate_limit(0.05), Fault.server_error(), Fault.rate_limit(0.05), Fault.server_error())
    run = ragbench_run(data, tmp_path / "run", config)
    assert run.summary["ok"] == 5
    assert server.requests == 5 + 4


def test_timeout_is_retried(server, llm_config, tmp_path):
    config = llm_config.model_copy(update={"timeout": 0.5, "concurrency": 1})
    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(2))
    server.inject(Fault.slow(1.5))
    run = ragbench_run(data, tmp_path / "run", config)
    assert run.summary["ok"] == 2
    assert server.requests == 3


def test_malformed_answer_becomes_failed_item_with_raw_text(llm_config, tmp_path):
    def responder(body):
        if "fact number 3?" in last_user_message(body):
            return "I refuse to use your format."
        return ragbench_answer(body)

    with OpenAICompatibleServer(responder) as srv:
        config = llm_config.model_copy(update={"api_base": srv.base_url})
        data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(6))
        run = ragbench_run(data, tmp_path / "run", config)
        assert run.summary["ok"] == 5
        assert run.summary["failed"] == 1
        assert run.summary["failed_ids"] == ["item-3"]
        failed = _results(tmp_path / "run")["item-3"]
        assert failed["status"] == "failed"
        assert failed["error_type"] == "unparseable_output"
        assert failed["output"] is None
        assert "I refuse to use your format." in failed["raw"]
        # Asked again past the cache: one first try plus parse_retries more.
        assert failed["attempts"] == config.parse_retries + 1
        # The failed item is not scored: no TRACe value is computed for it.
        row = run.items.set_index("id").loc["item-3"]
        assert row["status"] == "failed"
        assert run.summary["trace"]["context_relevance"]["n"] == 5
        report = (tmp_path / "run" / "report.md").read_text()
        assert "item-3" in report and "unparseable_output" in report

        # Re-running keeps the failure (no new requests) unless asked to retry it.
        srv.reset_count()
        ragbench_run(data, tmp_path / "run", config)
        assert srv.requests == 0


def test_provider_refusal_of_one_item_is_recorded_not_raised(server, llm_config, tmp_path):
    # A 400 (bad request) is about the item, not the config: it is recorded and the batch goes on.
    config = llm_config.model_copy(update={"concurrency": 1})
    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(3))
    server.inject(Fault(status=400))
    run = ragbench_run(data, tmp_path / "run", config)
    assert run.summary["ok"] == 2 and run.summary["failed"] == 1
    failed = run.items[run.items["status"] == "failed"].iloc[0]
    assert "InvalidRequest" in failed["error_type"]
    # A failed item is judged again on request.
    again = ragbench_run(data, tmp_path / "run", config, retry_failed=True)
    assert again.summary["ok"] == 3


def test_killed_run_resumes_to_the_same_results(llm_config, tmp_path):
    rows = ragbench_rows(60)
    data = write_jsonl(tmp_path / "in.jsonl", rows)
    with OpenAICompatibleServer(ragbench_answer, latency=0.05) as srv:
        out = tmp_path / "killed"
        command = [
            sys.executable,
            "-m",
            "jurist",
            "judge",
            "ragbench",
            str(data),
            "--out",
            str(out),
            "--model",
            llm_config.model,
            "--api-base",
            srv.base_url,
            "--cache-dir",
            str(tmp_path / "cache-a"),
            "--concurrency",
            "2",
            "--set",
            f"api_key_env={llm_config.api_key_env}",
            "--no-progress",
        ]
        process = subprocess.Popen(
            command, env=os.environ.copy(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        db = out / RESULTS_DB
        deadline = time.monotonic() + 60
        done = 0
        while time.monotonic() < deadline and process.poll() is None:
            if db.exists():
                try:
                    with sqlite3.connect(db) as connection:
                        done = connection.execute("SELECT COUNT(*) FROM results").fetchone()[0]
                except sqlite3.OperationalError:
                    done = 0
                if done >= 15:
                    break
            time.sleep(0.02)
        assert process.poll() is None, process.stderr.read().decode() if process.stderr else ""
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
        before = len(_results(out))
        assert 15 <= before < 60

        srv.reset_count()
        resumed = subprocess.run(command, env=os.environ.copy(), capture_output=True, text=True, timeout=120)
        assert resumed.returncode == 0, resumed.stderr
        # Only the unfinished items were asked again.
        assert srv.requests <= 60 - before

    final = _results(out)
    assert len(final) == 60
    with sqlite3.connect(out / RESULTS_DB) as connection:
        assert connection.execute("SELECT COUNT(*) FROM results").fetchone()[0] == 60
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "finished"
    assert manifest["counts"] == {"ok": 60, "failed": 0}

    # The same results as an uninterrupted run.
    with OpenAICompatibleServer(ragbench_answer) as srv:
        config = llm_config.model_copy(update={"api_base": srv.base_url, "cache_dir": tmp_path / "cache-b"})
        ragbench_run(data, tmp_path / "clean", config)
    clean = _results(tmp_path / "clean")
    assert {key: value["output"] for key, value in final.items()} == {
        key: value["output"] for key, value in clean.items()
    }
