"""The per-item table built in chunks is the frame pandas builds from all the rows at once."""

from __future__ import annotations

import math
import tracemalloc
from typing import Any

import numpy as np
import pandas as pd
import pytest

from jurist.tasks import _columns
from jurist.tasks._results import items_table


def _mixed_rows(count: int) -> list[dict[str, Any]]:
    """Columns whose values change type, or gain None or NaN, from one chunk to the next."""
    rows: list[dict[str, Any]] = []
    for i in range(count):
        row: dict[str, Any] = {"id": f"item-{i}", "floats": i / 3}
        row["float_none"] = None if i % 7 == 0 else i / 7
        row["int_then_float"] = i if i < count // 2 else i + 0.5
        row["int_then_none"] = i if i != count - 1 else None
        row["int_then_text"] = i if i < count - 2 else "text"
        row["bool_then_none"] = None if i == count // 3 else bool(i % 2)
        row["bool_and_int"] = True if i < 4 else 1
        row["text_none"] = None if i % 5 == 0 else f"t{i}"
        row["text_then_float"] = f"t{i}" if i < count - 3 else 2.5
        row["big_ints"] = 2**63 + i if i == count // 2 else i
        row["negative_and_big"] = -i if i < count - 1 else 2**64
        row["nested"] = [i, None] if i % 2 else {"k": i}
        row["all_none"] = None
        row["numpy_floats"] = np.float64(i) if i % 4 else float(i)
        row["nan_and_text"] = math.nan if i % 3 == 0 else "x"
        if i % 6 == 0:
            row["sometimes"] = i * 1.5  # NaN where a row lacks it
        if i >= count - 5:
            row["late"] = "late text"  # first seen after many chunks: NaN before
        if i % 2 == 0:
            row["every_other_text"] = "even"
        rows.append(row)
    return rows


def _assert_same_frame(rows: list[dict[str, Any]]) -> None:
    built, expected = items_table(iter(rows)), pd.DataFrame(rows)
    pd.testing.assert_frame_equal(built, expected, check_dtype=True, check_exact=True)
    assert list(built.columns) == list(expected.columns)
    for column in expected:  # None stays None, NaN stays NaN, 1 stays int, as pandas has them
        assert [type(v) for v in built[column]] == [type(v) for v in expected[column]], column


@pytest.mark.parametrize("chunk", [1, 3, 7, 64])
def test_chunked_columns_give_the_frame_of_all_rows(monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    monkeypatch.setattr(_columns, "CHUNK", chunk)
    _assert_same_frame(_mixed_rows(50))


def test_columns_of_one_type_per_chunk_give_the_frame_of_all_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_columns, "CHUNK", 4)
    rows = [
        {"f": float(i), "i": i, "b": i % 3 == 0, "s": f"s{i}", "fn": None if i == 5 else 0.5, "sn": None}
        for i in range(22)
    ]
    rows[9]["sn"] = "only text here"
    _assert_same_frame(rows)
    _assert_same_frame(rows[:3])  # fewer rows than a chunk
    surrogate = [{"s": "\ud800 lone surrogate"}, {"s": "ok"}] * 3  # pandas cannot build it either
    with pytest.raises(UnicodeEncodeError):
        pd.DataFrame(surrogate)
    with pytest.raises(UnicodeEncodeError):
        items_table(iter(surrogate))


def test_the_table_holds_numbers_as_arrays_not_as_python_objects() -> None:
    count = 40_000
    rows = ({"a": i / 3, "b": i / 5, "c": i / 7, "d": i / 9} for i in range(count))
    tracemalloc.start()
    try:
        table = items_table(rows)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert list(table.dtypes) == [np.float64] * 4 and table["c"].iloc[-1] == (count - 1) / 7
    # One list of Python floats per column would take 32 bytes a value (the float and its slot).
    assert peak < count * 4 * 32
