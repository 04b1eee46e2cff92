"""The per-item table built column by column, and exports written a row group at a time,
equal what the whole table gives: same frame, same ``items.csv`` bytes, same Parquet table."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq
import pytest

from jurist.redaction import redact_value, shape_token
from jurist.tasks._results import PARQUET_ROW_GROUP, Scores, items_table, write_exports


def _key() -> str:
    return "sk-" + "stream3d" * 4  # key-shaped, built at run time


def _rows(count: int) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for i in range(count):
        row: dict[str, Any] = {"id": f"é-{i:05d}", "status": "failed" if i % 9 == 0 else "ok"}
        row["score"] = None if i % 5 == 0 else i / 7
        if i % 11 == 0:
            row["flag"] = bool(i % 2)
        if i % 13 == 0:
            row["note"] = 'naïve ✓, "quoted"\nsecond line'
        if i >= PARQUET_ROW_GROUP + 5:  # a nested column that has no list in the first chunk ...
            row["keys"] = [f"k{i}", i] if i % 3 else {"a": "ü", "b": [1, None]}
        elif i == 7:
            row["keys"] = "plain text"  # ... but text there, JSON-encoded like the rest
        if i in (PARQUET_ROW_GROUP - 1, PARQUET_ROW_GROUP, 2 * PARQUET_ROW_GROUP):
            row["note"] = f"the key {_key()} at a chunk boundary"
        rows.append(row)
    if count > PARQUET_ROW_GROUP + 10:
        rows[PARQUET_ROW_GROUP + 10]["keys"] = math.nan
    return rows


def test_items_table_equals_the_frame_of_all_rows() -> None:
    rows = [
        {"id": "a", "x": None, "flag": True, "n": 1},
        {"id": "b", "y": [1, 2], "flag": None, "n": 2.5},
        {"id": "c", "x": "text", "y": {"k": "v"}},
        {"id": "d", "x": math.nan, "n": None, "z": "ü"},
    ]
    built, expected = items_table(iter(rows)), pd.DataFrame(rows)
    pd.testing.assert_frame_equal(built, expected)
    for column in expected:  # None stays None and NaN stays NaN, as pandas builds them
        assert [type(v) for v in built[column]] == [type(v) for v in expected[column]]
    assert items_table(iter([])).empty
    assert items_table(iter([{}, {}])).shape == (2, 0)


def _whole_table_exports(table: pd.DataFrame, folder: Path) -> None:
    """``items.csv`` and ``items.parquet`` written from the whole redacted table at once."""
    redacted = table.copy()
    for column in redacted.columns:
        if redacted[column].dtype == object or pd.api.types.is_string_dtype(redacted[column].dtype):
            redacted[column] = redacted[column].map(redact_value)
    redacted.to_csv(folder / "items.csv", index=False)
    for column in redacted.columns:
        if redacted[column].map(lambda v: isinstance(v, list | dict)).any():
            redacted[column] = redacted[column].map(
                lambda v: json.dumps(v, default=str) if v is not None else None
            )
    redacted.to_parquet(folder / "items.parquet", index=False, row_group_size=PARQUET_ROW_GROUP)


def test_exports_written_a_chunk_at_a_time_equal_the_whole_table(tmp_path: Path) -> None:
    table = items_table(iter(_rows(2 * PARQUET_ROW_GROUP + 3)))
    streamed, whole = tmp_path / "streamed", tmp_path / "whole"
    streamed.mkdir()
    whole.mkdir()
    write_exports(streamed, Scores(items=table, summary={"items": len(table)}), iter([]))
    _whole_table_exports(table, whole)

    text = (streamed / "items.csv").read_text(encoding="utf-8")
    assert _key() not in text and text.count(shape_token(_key())) == 3
    assert (streamed / "items.csv").read_bytes() == (whole / "items.csv").read_bytes()
    written, expected = pq.read_table(streamed / "items.parquet"), pq.read_table(whole / "items.parquet")
    assert written.schema.equals(expected.schema, check_metadata=True)
    assert written.equals(expected)
    assert pq.ParquetFile(streamed / "items.parquet").num_row_groups == 3
    keys = written.column("keys").to_pylist()
    assert keys[7] == '"plain text"' and keys[PARQUET_ROW_GROUP + 10] == "NaN"
    assert json.loads(keys[PARQUET_ROW_GROUP + 5]) == {"a": "ü", "b": [1, None]}


@pytest.mark.parametrize("rows", [0, 3])
def test_small_and_empty_tables_export_like_the_whole_table(tmp_path: Path, rows: int) -> None:
    table = items_table(iter(_rows(rows))) if rows else pd.DataFrame(columns=["id", "status", "error"])
    streamed, whole = tmp_path / "streamed", tmp_path / "whole"
    streamed.mkdir()
    whole.mkdir()
    write_exports(streamed, Scores(items=table, summary={}), iter([]))
    _whole_table_exports(table, whole)
    assert (streamed / "items.csv").read_bytes() == (whole / "items.csv").read_bytes()
    assert pq.read_table(streamed / "items.parquet").equals(pq.read_table(whole / "items.parquet"))
