"""A run's results read back in dataset order, however its items were judged and whenever they finished."""

from __future__ import annotations

import sqlite3

import pytest

from jurist.errors import RunDirectoryError
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


def test_rows_recorded_without_a_position_follow_the_others_in_finishing_order(tmp_path):
    with ResultStore(tmp_path / RESULTS_DB, judge_fingerprint="f") as store:
        store.put_many([_result("z"), _result("y")])  # positions unknown
        store.put_many([_result("b"), _result("a")], [1, 0])
        assert [result.id for result in store.iter_results()] == ["a", "b", "z", "y"]
        # A row judged again with its position takes its place.
        store.put(_result("y"), 2)
        assert store.item_ids() == ["a", "b", "y", "z"]


def test_a_file_without_positions_is_refused_and_left_as_it_is(tmp_path):
    db = tmp_path / RESULTS_DB
    with sqlite3.connect(db) as connection:  # the first layout: no judge, calls, program or position
        connection.execute(
            "CREATE TABLE results (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, "
            "status TEXT NOT NULL, output TEXT, error TEXT, error_type TEXT, raw TEXT NOT NULL, "
            "attempts INTEGER NOT NULL, latency_s REAL NOT NULL, usage TEXT NOT NULL)"
        )
        connection.execute(
            "INSERT INTO results (id, status, output, raw, attempts, latency_s, usage) "
            "VALUES ('z', 'ok', '{}', '[]', 1, 0.0, ?)",
            (Usage().model_dump_json(),),
        )
    before = db.read_bytes()
    for read_only in (False, True):
        with pytest.raises(RunDirectoryError, match="an older jurist \\(no version in its manifest\\)"):
            ResultStore(db, read_only=read_only)
    assert db.read_bytes() == before
