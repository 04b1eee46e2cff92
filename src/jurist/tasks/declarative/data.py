"""Reading a YAML task's data: rows with the judge's inputs, ids, and gold verdicts.

Any file :func:`jurist.datasets.io.iter_records` reads (JSONL, JSON, CSV, TSV, Parquet,
XLSX) or a bundled ``sample:NAME``. A row's id is its ``id`` column (the task's ``id``
key, or ``id`` when present), else its 1-based position in the file.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from jurist.datasets.io import iter_records, normalise_id, sha256_file
from jurist.datasets.samples import resolve_input
from jurist.errors import InputError
from jurist.runner import Item
from jurist.safe_load import QUOTE_LIMIT, clip, quote
from jurist.tasks.declarative.baseline import word_count
from jurist.tasks.declarative.spec import TaskFile
from jurist.tasks.declarative.verdicts import read_gold_value

__all__ = [
    "DeclarativeDataset",
    "GoldColumns",
    "Row",
    "input_text",
    "pair_items",
    "positions_of",
    "read_gold",
    "read_gold_columns",
    "read_rows",
    "rows_from_records",
]

ORDERS = ("AB", "BA")


@dataclass(frozen=True)
class Row:
    """One data row: its id, where it is in the file, the judge's inputs and its gold verdict."""

    id: str
    line: int
    inputs: dict[str, str]
    gold: Any = None
    gold_given: str | None = None
    """The gold cell as written when it was read as a listed label written with another
    letter case or surrounding space (``None`` otherwise)."""


@dataclass(frozen=True)
class DeclarativeDataset:
    """The validated rows of one data file of a YAML task."""

    path: Path
    rows: list[Row]
    pairwise: bool = False

    def describe(self) -> dict[str, Any]:
        """``{"path", "sha256", "items"}`` (a pairwise row is two items, one per order)."""
        return {
            "path": str(self.path),
            "sha256": sha256_file(self.path),
            "items": len(self.rows) * (2 if self.pairwise else 1),
        }


def input_text(value: Any) -> str:
    """A cell as the text a judge reads: text as is, a list of texts joined by blank lines,
    anything else as JSON."""
    if isinstance(value, str):
        return value
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, list) and all(isinstance(part, str) for part in value):
        return "\n\n".join(value)
    return json.dumps(value, ensure_ascii=False, default=str)


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and value != value)


def _id_column(spec: TaskFile, first: dict[str, Any] | None) -> str | None:
    if spec.id is not None:
        return spec.id
    return "id" if first is not None and "id" in first else None


def rows_from_records(
    spec: TaskFile,
    records: Iterator[tuple[int, dict[str, Any]]] | list[tuple[int, dict[str, Any]]],
    path: str | Path,
    *,
    need_gold: bool = False,
    need_inputs: bool = True,
    gold: bool = True,
    keep_inputs: bool = True,
) -> list[Row]:
    """Validate records into rows.

    Args:
        spec: The task.
        records: ``(line, record)`` pairs.
        path: The file, for messages.
        need_gold: Raise on a row without a gold verdict (few-shot examples).
        need_inputs: Raise on a missing input column (else the row keeps the inputs it has).
        gold: Read the task's gold column (``False``: judge without gold, ``--no-gold``).
        keep_inputs: Keep each row's inputs (``False``: only ids and gold are kept, for
            scoring against gold without holding the judged texts a second time).

    Raises:
        InputError: A missing input column or id, or a duplicate id (naming file, line and
            field); bad gold values (all of them at once, the first one's line named); or a
            gold column the task names that no row has (the message lists the columns).
    """
    return list(
        _rows(
            spec,
            records,
            path,
            need_gold=need_gold,
            need_inputs=need_inputs,
            gold=gold,
            keep_inputs=keep_inputs,
        )
    )


def _rows(
    spec: TaskFile,
    records: Iterator[tuple[int, dict[str, Any]]] | list[tuple[int, dict[str, Any]]],
    path: str | Path,
    *,
    need_gold: bool,
    need_inputs: bool,
    gold: bool,
    keep_inputs: bool,
) -> Iterator[Row]:
    """:func:`rows_from_records` one row at a time (its errors raised once every row is read)."""
    seen: dict[str, int] = {}
    id_column: str | None = None
    gold_column = spec.gold if gold else None
    gold_seen = False
    columns: dict[str, None] = {}
    bad_gold: list[tuple[int, str]] = []
    count = 0
    for position, (line, record) in enumerate(records, start=1):
        if position == 1:
            id_column = _id_column(spec, record)
        if gold_column is not None and not gold_seen:
            gold_seen = gold_column in record
            columns.update(dict.fromkeys(record))
        inputs: dict[str, str] = {}
        for name, column in spec.columns.items():
            value = record[column] if column in record else record.get(name)
            if _missing(value):
                if not need_inputs:
                    continue
                raise InputError(
                    "missing input column" if column not in record else "empty input value",
                    path=path,
                    line=line,
                    field=column,
                )
            if keep_inputs:
                inputs[name] = input_text(value)
        if id_column is None:
            row_id = str(position)
        else:
            raw_id = record.get(id_column)
            if _missing(raw_id) or str(raw_id).strip() == "":
                raise InputError("missing id", path=path, line=line, field=id_column)
            row_id = str(int(raw_id)) if isinstance(raw_id, float) and raw_id.is_integer() else str(raw_id)
            row_id = normalise_id(row_id)
        if row_id in seen:
            raise InputError(
                f"id {quote(row_id)} also occurs on line {seen[row_id]}",
                path=path,
                line=line,
                field=id_column or "id",
            )
        seen[row_id] = line
        value, given = None, None
        if gold_column is not None:
            try:
                value, given = read_gold_value(spec.output, record.get(gold_column))
            except ValueError as exc:  # the message quotes the cell: at most a few hundred characters
                bad_gold.append((line, clip(str(exc), 2 * QUOTE_LIMIT)))
                continue
            if value is None and need_gold:
                raise InputError("an example needs a gold verdict", path=path, line=line, field=gold_column)
        count += 1
        yield Row(id=row_id, line=line, inputs=inputs, gold=value, gold_given=given)
    if gold_column is not None and count and not gold_seen and not bad_gold:
        raise InputError(
            f"no row has the gold column {quote(gold_column)} that the task names; the data's columns: "
            f"{', '.join(columns)}. Fix 'gold:' in the task file, or judge without gold: --no-gold",
            path=path,
            field=gold_column,
        )
    if bad_gold:
        raise _bad_gold_error(bad_gold, path, gold_column or "gold")


def _bad_gold_error(bad: list[tuple[int, str]], path: str | Path, column: str, shown: int = 5) -> InputError:
    """One error for every bad gold value of a file: the first one's line and message, then
    how many more and on which lines (a few with their messages)."""
    (line, message), rest = bad[0], bad[1:]
    if rest:
        listed = "; ".join(f"line {other}: {text}" for other, text in rest[:shown])
        more = f"; and {len(rest) - shown} more" if len(rest) > shown else ""
        message = f"{message} ({len(bad)} rows have a bad gold value; also {listed}{more})"
    return InputError(clip(message, 4 * QUOTE_LIMIT), path=path, line=line, field=column)


def read_rows(spec: TaskFile, path: str | Path, *, gold: bool = True) -> DeclarativeDataset:
    """Read and validate a data file (``sample:NAME`` allowed); ``gold=False`` ignores the
    task's gold column.

    Raises:
        InputError: See :func:`rows_from_records`; or the file holds no row.
    """
    file = resolve_input(path)
    rows = rows_from_records(spec, iter_records(file), file, gold=gold)
    if not rows:
        raise InputError("the data file holds no row", path=file)
    return DeclarativeDataset(path=file, rows=rows, pairwise=spec.kind == "pairwise")


def read_gold(
    spec: TaskFile, path: str | Path, *, every_row: bool = False, inputs: bool = True
) -> dict[str, Row]:
    """The rows of a gold file that carry a gold verdict, by id (``every_row``: all rows).

    A gold file needs the id and gold columns; input columns are kept where present (with
    ``inputs=False`` not at all: scoring needs only ids and gold, and the judged texts
    would be held a second time beside the per-item table).
    """
    file = resolve_input(path)
    rows = rows_from_records(spec, iter_records(file), file, need_inputs=False, keep_inputs=inputs)
    return {row.id: row for row in rows if every_row or row.gold is not None}


@dataclass(frozen=True)
class GoldColumns:
    """A gold file's rows as columns, in file order, with no object per row: what scoring
    needs (ids and gold verdicts; pairwise, the responses' lengths), not the judged texts.

    Attributes:
        ids: The rows' ids (an object array of strings, unique).
        values: Each row's gold verdict, ``None`` where it has none (an object array).
        normalised: Whether each row's gold was read as a listed label written with another
            letter case or surrounding space (``Row.gold_given`` set).
        lengths: Pairwise only: the words of ``response_a`` and ``response_b`` per row
            (``(rows, 2)``, −1 where a row lacks either response); else ``None``.
    """

    ids: np.ndarray
    values: np.ndarray
    normalised: np.ndarray
    lengths: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.ids)

    def take(self, rows: np.ndarray) -> GoldColumns:
        """The rows at ``rows`` (positions, or a boolean mask), in that order."""
        lengths = self.lengths[rows] if self.lengths is not None else None
        return GoldColumns(self.ids[rows], self.values[rows], self.normalised[rows], lengths)

    def labelled(self) -> GoldColumns:
        """The rows that carry a gold verdict."""
        return self.take(np.fromiter((v is not None for v in self.values), dtype=bool, count=len(self)))

    def positions(self, keys: Any) -> np.ndarray:
        """The row of each key (its position in :attr:`ids`), −1 for a key no row has."""
        return positions_of(self.ids, keys)


def positions_of(haystack: Any, keys: Any) -> np.ndarray:
    """The position in ``haystack`` of each of ``keys``, −1 where absent; a value that occurs
    more than once in ``haystack`` is found at its last occurrence (as a dict built from it)."""
    index = pd.Index(haystack)
    if index.is_unique:
        return np.asarray(index.get_indexer(pd.Index(keys)), dtype=np.intp)
    last = np.flatnonzero(~index.duplicated(keep="last"))
    found = index[last].get_indexer(pd.Index(keys))
    return np.where(found >= 0, last[found], -1).astype(np.intp)


def read_gold_columns(spec: TaskFile, path: str | Path) -> GoldColumns:
    """Every row of a gold file as :class:`GoldColumns` (:func:`read_gold` with ``every_row``,
    validated the same way), holding ids and gold verdicts, not the judged texts.

    Raises:
        InputError: As :func:`rows_from_records`.
    """
    file = resolve_input(path)
    pairwise = spec.kind == "pairwise"
    labels = {label: label for label in spec.output.labels or []}
    ids: list[str] = []
    values: list[Any] = []
    normalised: list[bool] = []
    lengths: list[tuple[int, int]] = []
    for row in _rows(
        spec,
        iter_records(file),
        file,
        need_gold=False,
        need_inputs=False,
        gold=True,
        keep_inputs=pairwise,
    ):
        ids.append(row.id)
        # A label is held as the task's own string: one object for every row that has it.
        values.append(labels.get(row.gold, row.gold) if isinstance(row.gold, str) else row.gold)
        normalised.append(row.gold_given is not None)
        if pairwise:
            a, b = row.inputs.get("response_a"), row.inputs.get("response_b")
            lengths.append((word_count(a), word_count(b)) if a is not None and b is not None else (-1, -1))
    return GoldColumns(
        ids=_objects(ids),
        values=_objects(values),
        normalised=np.asarray(normalised, dtype=bool),
        lengths=np.asarray(lengths, dtype=np.int64).reshape(-1, 2) if pairwise else None,
    )


def _objects(values: list[Any]) -> np.ndarray:
    """``values`` as a 1-D object array (lists stay elements, never a second axis)."""
    array = np.empty(len(values), dtype=object)
    array[:] = values
    return array


def swapped(inputs: dict[str, str]) -> dict[str, str]:
    """Pairwise inputs with response_a and response_b exchanged."""
    return {**inputs, "response_a": inputs["response_b"], "response_b": inputs["response_a"]}


def pair_items(row: Row) -> list[Item]:
    """The two items of a pairwise row: ``{id}|AB`` as given, ``{id}|BA`` swapped.

    Each item's inputs carry its ``order``, which the program ignores and the output keeps.
    """
    return [
        Item(f"{row.id}|AB", {**row.inputs, "order": "AB"}),
        Item(f"{row.id}|BA", {**swapped(row.inputs), "order": "BA"}),
    ]


def split_item_id(item_id: str) -> tuple[str, str | None]:
    """``("7", "BA")`` for ``"7|BA"``; ``(item_id, None)`` for an id without an order."""
    base, sep, order = item_id.rpartition("|")
    return (base, order) if sep and order in ORDERS else (item_id, None)
