"""One writer per run directory: a second process is refused with exit code 4 and touches nothing;
the lock dies with its process."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from jurist.errors import ExitCode, RunLockedError
from jurist.runner import RESULTS_DB, ResultStore, run_lock
from jurist.testing import OpenAICompatibleServer
from support import ragbench_answer, ragbench_rows, run_cli, write_jsonl


def _recorded(db: Path) -> int:
    try:
        with sqlite3.connect(db) as connection:
            return connection.execute("SELECT COUNT(*) FROM results").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def test_a_second_process_on_the_same_run_directory_is_refused(llm_config, tmp_path, capsys):
    items = 30
    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(items))
    out = tmp_path / "run"
    with OpenAICompatibleServer(ragbench_answer, latency=0.2) as srv:
        options = [
            "--model",
            llm_config.model,
            "--api-base",
            srv.base_url,
            "--cache-dir",
            str(tmp_path / "cache"),
            "--concurrency",
            "2",
            "--set",
            f"api_key_env={llm_config.api_key_env}",
            "--no-progress",
        ]
        command = [
            sys.executable,
            "-m",
            "jurist",
            "judge",
            "ragbench",
            str(data),
            "--out",
            str(out),
            *options,
        ]
        first = subprocess.Popen(
            command, env=os.environ.copy(), stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        try:
            deadline = time.monotonic() + 60
            while _recorded(out / RESULTS_DB) < 2 and time.monotonic() < deadline and first.poll() is None:
                time.sleep(0.02)
            assert first.poll() is None, "the first run ended before the second could try"
            manifest = (out / "manifest.json").read_bytes()
            listing = sorted(path.name for path in out.iterdir())

            code = run_cli(["judge", "ragbench", str(data), "--out", str(out), *options])

            assert first.poll() is None  # still running: the comparisons below are fair
            assert code == ExitCode.RUN_LOCKED == 4
            err = capsys.readouterr().err.strip().splitlines()
            assert len(err) == 1 and err[0].startswith("error: ")
            assert str(out) in err[0] and "locked by process" in err[0] and "another --out" in err[0]
            # The second process touched nothing: same manifest, no new file.
            assert (out / "manifest.json").read_bytes() == manifest
            assert sorted(path.name for path in out.iterdir()) == listing
            stdout, stderr = first.communicate(timeout=120)
        finally:
            if first.poll() is None:
                first.kill()
        assert first.returncode == 0, stderr.decode()
        # Every item was asked once, by the first process only.
        assert srv.requests == items

    with ResultStore(out / RESULTS_DB) as store:
        results = list(store.iter_results())
    assert len(results) == items and all(result.status == "ok" for result in results)
    finished = json.loads((out / "manifest.json").read_text())
    assert finished["status"] == "finished" and finished["counts"] == {"ok": items, "failed": 0}


def test_the_lock_is_released_when_its_process_is_killed(tmp_path):
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(
                f"""
                import time
                from jurist.runner import run_lock
                with run_lock({str(tmp_path / "run")!r}):
                    print("held", flush=True)
                    time.sleep(60)
                """
            ),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(RunLockedError, match=f"process {holder.pid}"), run_lock(tmp_path / "run"):
            pass
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=10)
    with run_lock(tmp_path / "run") as path:  # a killed holder blocks nobody
        assert path == tmp_path / "run"


def test_the_lock_is_reentrant_in_its_thread_and_refuses_other_threads(tmp_path):
    refused: list[BaseException] = []

    def other_thread() -> None:
        try:
            with run_lock(tmp_path):
                pass
        except RunLockedError as exc:
            refused.append(exc)

    with run_lock(tmp_path), run_lock(tmp_path):  # a command may hold it around run_items
        thread = threading.Thread(target=other_thread)
        thread.start()
        thread.join()
    assert len(refused) == 1
    with run_lock(tmp_path):  # released after the outer block
        pass
