"""Rows given in memory (a pandas DataFrame, or a list of dicts) as the JSONL every task reads.

The verbs take data as a file: rows given in memory are written as JSONL, one row a line,
and read back by the task's own reader, so they are checked exactly as a file's rows are
(:mod:`jurist.verbs._data` says where the file goes). A DataFrame's columns are written in
their order and its index is left out (``frame.reset_index()`` keeps it as a column). Each
value is written as JSON that reads back as what the task reads:

- text, whole numbers, floats and booleans as they are (numpy's scalars as Python's);
- a missing value (``None``, ``NaN``, ``pd.NA``, ``pd.NaT``) as ``null``, as a blank cell
  of a CSV file is read;
- a date or time (``pd.Timestamp``, ``numpy.datetime64``, ``datetime``, ``date``, ``time``)
  as ISO 8601 text (``2024-01-02T03:04:05``);
- lists, tuples and numpy arrays as lists, dicts as objects, their values alike;
- bytes as the UTF-8 text they hold.

Anything else (a set, a ``Decimal``, an infinite float, a key that is not text, bytes or
text that is not UTF-8, a list element that is not a dict) is a
:class:`~jurist.errors.RowError` naming the row (its 0-based position) and the field. Data
with no row is an :class:`~jurist.errors.InputError`.

The same rows give the same bytes (keys in their order, no spaces, non-ASCII characters as
they are), so the SHA-256 of the text names the rows: a run judged from them is resumed when
they are given again.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping, Sequence
from datetime import date, datetime, time
from typing import Any, TypeAlias

import numpy as np
import pandas as pd

from jurist.errors import InputError, RowError

__all__ = ["InMemory", "given_as", "is_in_memory", "rows_jsonl"]

InMemory: TypeAlias = pd.DataFrame | Sequence[Mapping[str, Any]]
"""Rows in memory: a DataFrame, or a list (any sequence) of dicts (any mappings)."""


class _Unwritable(Exception):
    """A value that has no JSON form a task could read (the reason, for the row's error)."""


def is_in_memory(data: object) -> bool:
    """Whether ``data`` is rows in memory rather than a path (text, ``Path``, ``sample:NAME``)."""
    return isinstance(data, pd.DataFrame) or (
        isinstance(data, Sequence) and not isinstance(data, str | bytes | bytearray)
    )


def given_as(data: InMemory) -> str:
    """``"DataFrame"`` or ``"list"``: how rows were given, as errors and manifests name it."""
    return "DataFrame" if isinstance(data, pd.DataFrame) else "list"


def _frame_records(frame: pd.DataFrame) -> Iterator[dict[Any, Any]]:
    columns = list(frame.columns)
    seen: set[Any] = set()
    for column in columns:
        if not isinstance(column, str):
            raise RowError(
                f"a column name that is not text ({column!r}); rename it",
                given="DataFrame",
                field=str(column),
            )
        if column in seen:
            raise RowError("two columns have this name; rename one", given="DataFrame", field=column)
        seen.add(column)
    for values in frame.itertuples(index=False, name=None):
        yield dict(zip(columns, values, strict=True))


def _list_records(rows: Sequence[Any]) -> Iterator[Mapping[Any, Any]]:
    for index, record in enumerate(rows):
        if not isinstance(record, Mapping):
            raise RowError(
                f"not a dict (got {type(record).__name__}); give one dict per row", given="list", row=index
            )
        yield record


def _inside(at: str) -> str:
    """Where a value is inside its field (``" at ['k'][1]"``), or nothing for the field itself."""
    return f" at {at}" if at else ""


def _plain(value: Any, at: str = "") -> Any:
    """``value`` as JSON-ready data (see the module docstring).

    Raises:
        _Unwritable: It has no JSON form; the reason says where (``at``) inside the field.
    """
    if value is None or value is pd.NA or value is pd.NaT or isinstance(value, bool):
        return None if value is pd.NA or value is pd.NaT else value
    if isinstance(value, str):
        return str(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if math.isnan(value):
            return None
        if math.isinf(value):
            raise _Unwritable(f"an infinite number{_inside(at)} has no JSON form")
        return float(value)
    if isinstance(value, np.datetime64):
        return None if np.isnat(value) else pd.Timestamp(value).isoformat()
    if isinstance(value, np.bool_ | np.integer | np.floating | np.str_):
        return _plain(value.item(), at)
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, Mapping):
        plain: dict[str, Any] = {}
        for key, inner in value.items():
            if not isinstance(key, str):
                raise _Unwritable(f"a key that is not text ({key!r}){_inside(at)}")
            plain[key] = _plain(inner, f"{at}[{key!r}]")
        return plain
    if isinstance(value, list | tuple | np.ndarray):
        return [_plain(inner, f"{at}[{i}]") for i, inner in enumerate(value)]
    if isinstance(value, bytes | bytearray):
        try:
            return bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            raise _Unwritable(f"bytes{_inside(at)} that are not UTF-8 text; decode them first") from None
    raise _Unwritable(
        f"a value of type {type(value).__name__}{_inside(at)} has no JSON form; "
        "convert it first (e.g. to text)"
    )


def _line(record: Mapping[Any, Any], given: str, row: int) -> bytes:
    plain: dict[str, Any] = {}
    for key, value in record.items():
        if not isinstance(key, str):
            raise RowError(f"a key that is not text ({key!r})", given=given, row=row, field=str(key))
        try:
            plain[key] = _plain(value)
        except _Unwritable as exc:
            raise RowError(str(exc), given=given, row=row, field=key) from None
        except RecursionError:
            raise RowError("nested too deeply to write as JSON", given=given, row=row, field=key) from None
    text = json.dumps(plain, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        field = next(key for key, value in plain.items() if not _encodes(value))
        raise RowError(
            "text that is not valid Unicode (a lone surrogate)", given=given, row=row, field=field
        ) from None


def _encodes(value: Any) -> bool:
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def rows_jsonl(data: InMemory) -> tuple[bytes, int]:
    """The JSONL text of rows given in memory, and how many rows it holds.

    Raises:
        RowError: A row or a value cannot be written (named by its 0-based row and field).
        InputError: There is no row.
    """
    given = given_as(data)
    records = _frame_records(data) if isinstance(data, pd.DataFrame) else _list_records(data)
    lines = [_line(record, given, row) for row, record in enumerate(records)]
    if not lines:
        what = "the DataFrame" if given == "DataFrame" else "the list"
        raise InputError(f"{what} holds no rows; give at least one", field="data")
    return b"\n".join(lines) + b"\n", len(lines)
