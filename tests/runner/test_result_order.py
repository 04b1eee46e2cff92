"""A run's results read back in dataset order, however its items were judged and whenever they finished."""

from __future__ import annotations

import sqlite3

from jurist.runner import RESULTS_DB, ResultStore
from jurist.schemas import ItemResult, Usage


def _result(item_id: str) -> ItemResult:
    return ItemResult(
        id=item_id, status="ok", output={"v": item_id}, raw=[], attempts=1, latency_s=0.0, usage=Usage()
    )


def test_results_read_in_dataset_order_not_finishing_order(tmp_path):
    with ResultStore(tmp_path / RESULTS_DB, judge_fingerprint="f") as store:
        # Finished in the order 2, 0, 3, 1 (two batches, as several workers would send them).
        store.put_many([_result("c"), _result("a")], [2, 0])
        store.put_many([_result("d"), _result("b")], [3, 1])
        assert [result.id for result in store.iter_results()] == ["a", "b", "c", "d"]
        assert store.item_ids() == ["a", "b", "c", "d"]
        assert store.item_ids(limit=2) == ["a", "b"]


def test_rows_of_an_older_file_keep_their_finishing_order_after_the_others(tmp_path):
    db = tmp_path / RESULTS_DB
    with sqlite3.connect(db) as connection:  # a file written before positions were recorded
        connection.execute(
            "CREATE TABLE results (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, "
            "status TEXT NOT NULL, output TEXT, error TEXT, error_type TEXT, raw TEXT NOT NULL, "
            "attempts INTEGER NOT NULL, latency_s REAL NOT NULL, usage TEXT NOT NULL)"
        )
        for item_id in ("z", "y"):
            connection.execute(
                "INSERT INTO results (id, status, output, raw, attempts, latency_s, usage) "
                "VALUES (?, 'ok', '{}', '[]', 1, 0.0, ?)",
                (item_id, Usage().model_dump_json()),
            )
    with ResultStore(db) as reader:  # a reader leaves the file as it is
        assert reader.item_ids() == ["z", "y"]
    with sqlite3.connect(db) as connection:
        assert "pos" not in {row[1] for row in connection.execute("PRAGMA table_info(results)")}
    with ResultStore(db, judge_fingerprint="f") as writer:
        writer.put_many([_result("b"), _result("a")], [1, 0])
        assert [result.id for result in writer.iter_results()] == ["a", "b", "z", "y"]
        # An old row judged again gets its position.
        writer.put(_result("y"), 2)
        assert writer.item_ids() == ["a", "b", "y", "z"]
