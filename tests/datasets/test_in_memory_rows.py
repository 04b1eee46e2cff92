"""Rows given in memory as JSONL: what each kind of value becomes, and the errors naming a row."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal

import numpy as np
import pandas as pd
import pytest

from jurist.datasets.in_memory import is_in_memory, rows_jsonl
from jurist.errors import InputError, RowError


def _lines(data) -> list[dict]:
    text, count = rows_jsonl(data)
    rows = [json.loads(line) for line in text.decode("utf-8").splitlines()]
    assert len(rows) == count
    return rows


def test_values_are_written_as_json_a_task_reads():
    frame = pd.DataFrame(
        {
            "id": [1, 2],
            "score": [1.5, np.nan],
            "when": pd.to_datetime(["2024-01-02", "2024-01-02 03:04:05.123456789"], format="ISO8601"),
            "docs": [["a", "b"], np.array(["c"])],
            "count": pd.array([3, None], dtype="Int64"),
            "text": ["x", None],
            "meta": [{"k": np.int64(4), "at": dt.date(2024, 5, 6)}, {"k": [np.float32(0.5), None]}],
            "flag": [np.bool_(True), False],
            "raw": [b"caf\xc3\xa9", "ok"],
            "nat": [pd.NaT, pd.Timestamp("2024-01-01T10:00:00+02:00")],
        }
    )
    assert _lines(frame) == [
        {
            "id": 1,
            "score": 1.5,
            "when": "2024-01-02T00:00:00",
            "docs": ["a", "b"],
            "count": 3,
            "text": "x",
            "meta": {"k": 4, "at": "2024-05-06"},
            "flag": True,
            "raw": "café",
            "nat": None,
        },
        {
            "id": 2,
            "score": None,
            "when": "2024-01-02T03:04:05.123456789",
            "docs": ["c"],
            "count": None,
            "text": None,
            "meta": {"k": [0.5, None]},
            "flag": False,
            "raw": "ok",
            "nat": "2024-01-01T10:00:00+02:00",
        },
    ]


def test_the_same_rows_give_the_same_bytes_a_frame_or_a_list_of_dicts():
    rows = [{"id": "a", "text": "é\nnew line", "n": 1}, {"id": "b", "text": "plain", "n": 2}]
    text, _ = rows_jsonl(pd.DataFrame(rows))
    assert text == rows_jsonl(rows)[0] == rows_jsonl(pd.DataFrame(rows))[0]
    assert text.count(b"\n") == 2 and "é".encode() in text  # one row a line, UTF-8 as is


def test_what_counts_as_rows_in_memory():
    assert is_in_memory(pd.DataFrame({"a": [1]})) and is_in_memory([{"a": 1}]) and is_in_memory(({"a": 1},))
    assert not is_in_memory("data.jsonl") and not is_in_memory(b"x")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            pd.DataFrame({"id": [1, 2], "tags": [{"a"}, {"b"}]}),
            r"DataFrame row 0, field 'tags': a value of type set",
        ),
        (
            pd.DataFrame({"id": [1, 2], "x": [1.0, float("inf")]}),
            r"DataFrame row 1, field 'x': an infinite number",
        ),
        (
            pd.DataFrame({"id": [1], "x": [Decimal("1.5")]}),
            r"DataFrame row 0, field 'x': a value of type Decimal",
        ),
        (pd.DataFrame({0: ["a"]}), r"DataFrame, field '0': a column name that is not text"),
        ([{"id": 1}, "text"], r"list item 1: not a dict \(got str\)"),
        (
            [{"id": 1}, {"id": 2, "m": {"k": [1, {2: 3}]}}],
            r"list item 1, field 'm': a key that is not text \(2\) at \['k'\]\[1\]",
        ),
        ([{"id": 1, "b": b"\xff"}], r"list item 0, field 'b': bytes that are not UTF-8"),
        ([{"id": 1, "t": "\ud800"}], r"list item 0, field 't': text that is not valid Unicode"),
    ],
)
def test_a_value_without_a_json_form_names_the_row_and_field(data, message):
    with pytest.raises(RowError, match=message) as caught:
        rows_jsonl(data)
    assert isinstance(caught.value, InputError)


def test_a_frame_with_two_columns_of_one_name_is_refused():
    frame = pd.DataFrame([[1, 2]], columns=["a", "a"])
    with pytest.raises(RowError, match="DataFrame, field 'a': two columns have this name"):
        rows_jsonl(frame)


@pytest.mark.parametrize(("data", "what"), [(pd.DataFrame({"id": []}), "DataFrame"), ([], "list")])
def test_no_rows_is_an_error(data, what):
    with pytest.raises(InputError, match=f"the {what} holds no rows"):
        rows_jsonl(data)
