"""Finished items are written by one thread and committed in batches: at the latest after a number
of items or a time, and when the run ends; a write that fails stops the run; the event loop does
no disk write for the response cache; nothing stays frozen for the garbage collector."""

from __future__ import annotations

import gc
import json
import sqlite3
import time
from pathlib import Path

import pytest

from jurist.errors import RunDirectoryError
from jurist.judges.cache_context import deferring_cache_writes
from jurist.judges.lm import metering
from jurist.runner import RESULTS_DB, Item, ResultStore, run_items
from jurist.runner.store import ResultWriter
from jurist.schemas import ItemResult
from support import ragbench_rows, ragbench_run, write_jsonl


def _result(index: int) -> ItemResult:
    return ItemResult(id=f"item-{index}", status="ok", output={"n": index}, raw=[f"answer {index}"])


def _committed(db: Path) -> int:
    """Rows another process would see now."""
    with sqlite3.connect(db) as connection:
        return int(connection.execute("SELECT COUNT(*) FROM results").fetchone()[0])


def _eventually(check: object, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():  # type: ignore[operator]
            return True
        time.sleep(0.01)
    return False


def test_rows_are_committed_once_a_batch_is_full(tmp_path):
    db = tmp_path / RESULTS_DB
    with ResultStore(db, judge_fingerprint="f") as store:
        writer = ResultWriter(store, batch_items=3, batch_seconds=60)
        writer.submit(_result(0))
        writer.submit(_result(1))
        time.sleep(0.3)
        assert _committed(db) == 0
        writer.submit(_result(2))
        assert _eventually(lambda: _committed(db) == 3)
        writer.close()


def test_rows_are_committed_within_the_time_limit(tmp_path):
    db = tmp_path / RESULTS_DB
    with ResultStore(db, judge_fingerprint="f") as store:
        writer = ResultWriter(store, batch_items=1000, batch_seconds=0.1)
        start = time.monotonic()
        writer.submit(_result(0))
        assert _eventually(lambda: _committed(db) == 1)
        assert time.monotonic() - start < 2.0
        writer.close()


def test_closing_commits_every_submitted_row_and_runs_its_writes_first(tmp_path):
    db = tmp_path / RESULTS_DB
    done: list[int] = []
    with ResultStore(db, judge_fingerprint="f") as store:
        writer = ResultWriter(store, batch_items=1000, batch_seconds=60)
        for index in range(5):
            writer.submit(_result(index), [lambda index=index: done.append(index)])
        writer.close()
        assert writer.error is None
    assert _committed(db) == 5 and done == [0, 1, 2, 3, 4]


def test_a_failed_write_stops_the_run_and_keeps_what_was_committed(tmp_path, monkeypatch):
    # The disk fails after the first transaction (where SQLite would raise, the store says so).
    original = ResultStore._write_rows
    batches = 0

    def failing(self: ResultStore, rows: list, batch: object) -> None:
        nonlocal batches
        batches += 1
        if batches > 1:
            raise RunDirectoryError(f"cannot use {self.path}: disk I/O error")
        original(self, rows, batch)  # type: ignore[arg-type]

    class Slow:
        name = "slow"

        def fingerprint(self) -> str:
            return "slow"

        async def judge(self, inputs: dict) -> object:
            import asyncio

            from jurist.judges.judge import Judgment

            await asyncio.sleep(0.01)
            return Judgment(output={"n": inputs["n"]})

    monkeypatch.setattr(ResultStore, "_write_rows", failing)
    items = [Item(id=f"item-{n}", inputs={"n": n}) for n in range(200)]
    out = tmp_path / "run"
    with pytest.raises(RunDirectoryError, match="disk I/O error"):
        run_items(
            items, Slow(), out, task="t", dataset={"sha256": "d"}, config={}, concurrency=4, progress=False
        )
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "stopped" and "disk I/O error" in manifest["stopped_by"]
    assert 0 < _committed(out / RESULTS_DB) < 200


def test_cache_writes_are_handed_to_the_caller_inside_the_deferring_context(tmp_path):
    from jurist.judges.lm import JuristCache

    cache = JuristCache(enable_disk_cache=True, enable_memory_cache=False, disk_cache_dir=str(tmp_path))
    with deferring_cache_writes() as writes, metering(hold_cache_writes=True) as meter:
        meter.begin_attempt()
        cache.offer("key", {"answer": 1})
        meter.commit_cache()
    assert cache.read("key") is None and len(writes) == 1  # not written: handed over
    writes[0]()
    assert cache.read("key") == {"answer": 1}


def test_a_run_leaves_nothing_frozen_for_the_garbage_collector(server, llm_config, tmp_path):
    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(4))
    ragbench_run(data, tmp_path / "run", llm_config)
    assert gc.get_freeze_count() == 0


def test_cache_writes_made_together_are_all_stored(tmp_path):
    from jurist.judges.lm import JuristCache

    cache = JuristCache(enable_disk_cache=True, enable_memory_cache=False, disk_cache_dir=str(tmp_path))
    with cache.writing_together():
        for index in range(40):
            cache.write(f"key-{index}", {"answer": index})
        assert cache.read("key-3") == {"answer": 3}  # the writing thread sees its own writes
    other = JuristCache(enable_disk_cache=True, enable_memory_cache=False, disk_cache_dir=str(tmp_path))
    assert [other.read(f"key-{index}") for index in range(40)] == [{"answer": index} for index in range(40)]
