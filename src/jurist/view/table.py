"""A run's per-item table (``items.parquet``), read one page at a time.

A run may hold 100,000 items and more, so a page never loads the table: :class:`ItemTable`
reads the file's footer once, then

- a page in file order reads only the row groups that hold its rows, and only the columns
  shown;
- a filter, a text search or a sort reads only the columns it needs (one column each,
  kept in memory while the file is unchanged), computes the positions of the matching rows
  in order, and then reads the page's rows as above.

How much a page costs therefore depends on the file's row groups: a file written as one
row group makes every page read that group's shown columns in full.

:class:`TableCache` keeps the tables of recently viewed runs open and opens a file again
when it changes on disk (a run that is still being judged is scored again and rewritten).
"""

from __future__ import annotations

import math
import os
import threading
from collections import OrderedDict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from jurist.view.files import open_no_follow

__all__ = ["Condition", "ItemTable", "Page", "TableCache", "page_start"]

Operator = Literal["==", "!=", "<", "<=", ">", ">=", "in"]
Condition = tuple[str, Operator, Any]
"""A filter on one column: ``(column, operator, value)``; ``in`` takes a tuple of values.
A row whose cell is missing never matches."""

_COMPARE = {
    "==": pc.equal,
    "!=": pc.not_equal,
    "<": pc.less,
    "<=": pc.less_equal,
    ">": pc.greater,
    ">=": pc.greater_equal,
}

_CACHED_COLUMNS = 16
_CACHED_SELECTIONS = 32


@dataclass(frozen=True)
class Page:
    """One page of rows.

    Attributes:
        rows: The rows of the page (column -> value), in order.
        positions: Each row's position in the file (0-based).
        total: Rows matching the query (all rows when nothing filters).
        offset: The position of the page's first row among the matching rows.
        limit: The most rows a page holds.
        row_count: Rows in the file.
    """

    rows: list[dict[str, Any]]
    positions: list[int]
    total: int
    offset: int
    limit: int
    row_count: int

    @property
    def next_offset(self) -> int | None:
        """Where the next page starts, or ``None`` on the last page."""
        following = self.offset + self.limit
        return following if following < self.total else None

    @property
    def previous_offset(self) -> int | None:
        """Where the previous page starts, or ``None`` on the first page."""
        return max(0, self.offset - self.limit) if self.offset > 0 else None

    @property
    def last_offset(self) -> int:
        """Where the last page starts."""
        return max(0, (self.total - 1) // self.limit * self.limit) if self.total else 0


class ItemTable:
    """The per-item table of one run, read page by page (see the module's docstring).

    Args:
        path: The ``items.parquet`` file.

    The file is opened once, without following a symbolic link, and read through that one
    descriptor (:func:`jurist.view.files.open_no_follow`).

    Raises:
        OSError: The file cannot be read.
        LinkedFileError: It is a symbolic link or not a regular file.
        pyarrow.ArrowInvalid: It is not a Parquet file.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._source = os.fdopen(open_no_follow(path), "rb")
        try:
            stat = os.fstat(self._source.fileno())
            self.signature = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
            self._file = pq.ParquetFile(self._source)
        except BaseException:
            self._source.close()
            raise
        metadata = self._file.metadata
        self.row_count = int(metadata.num_rows)
        counts = [metadata.row_group(i).num_rows for i in range(metadata.num_row_groups)]
        self._starts = np.concatenate([[0], np.cumsum(counts, dtype=np.int64)]).astype(np.int64)
        schema = self._file.schema_arrow
        self.columns: list[str] = list(schema.names)
        self.types: dict[str, pa.DataType] = {name: schema.field(name).type for name in schema.names}
        self._lock = threading.RLock()
        self._cached_columns: OrderedDict[str, pa.Array] = OrderedDict()
        self._selections: OrderedDict[Hashable, np.ndarray] = OrderedDict()

    @property
    def row_groups(self) -> int:
        """Row groups in the file."""
        return len(self._starts) - 1

    def close(self) -> None:
        self._file.close()
        self._source.close()

    # ------------------------------------------------------------------ reading

    def column(self, name: str) -> pa.Array:
        """One whole column (read once, then kept while the file is unchanged).

        Raises:
            KeyError: The table has no such column.
        """
        if name not in self.types:
            raise KeyError(name)
        with self._lock:
            found = self._cached_columns.get(name)
            if found is not None:
                self._cached_columns.move_to_end(name)
                return found
            array = self._file.read(columns=[name], use_threads=False).column(0).combine_chunks()
            self._cached_columns[name] = array
            if len(self._cached_columns) > _CACHED_COLUMNS:
                self._cached_columns.popitem(last=False)
            return array

    def rows(self, positions: Sequence[int] | np.ndarray, columns: Sequence[str]) -> list[dict[str, Any]]:
        """The rows at ``positions`` (in that order), with only ``columns``; each row group that
        holds one of them is read once."""
        wanted = np.asarray(positions, dtype=np.int64)
        if not len(wanted):
            return []
        names = [name for name in columns if name in self.types]
        groups = np.searchsorted(self._starts, wanted, side="right") - 1
        found: list[dict[str, Any]] = [{} for _ in range(len(wanted))]
        with self._lock:
            for group in np.unique(groups):
                where = np.nonzero(groups == group)[0]
                table = self._file.read_row_group(int(group), columns=names, use_threads=False)
                local = pa.array(wanted[where] - self._starts[group])
                for index, row in zip(where, table.take(local).to_pylist(), strict=True):
                    found[int(index)] = row
        return found

    def position_of(self, item_id: str) -> int | None:
        """The position of the row whose ``id`` is ``item_id``, or ``None``."""
        if "id" not in self.types:
            return None
        ids = self.column("id")
        index = pc.index(ids, pa.scalar(item_id, type=ids.type)).as_py()
        return None if index is None or index < 0 else int(index)

    # ------------------------------------------------------------------ selecting

    def select(
        self,
        *,
        where: Sequence[Condition] = (),
        search: str = "",
        search_columns: Sequence[str] = ("id",),
        search_ids: frozenset[str] = frozenset(),
        sort: str | None = None,
        descending: bool = False,
    ) -> np.ndarray:
        """The positions of the rows that match, in order (file order unless ``sort``).

        Args:
            where: Conditions every row must meet (:data:`Condition`).
            search: Text that ``id`` or another of ``search_columns`` must contain (any case).
            search_columns: The columns ``search`` looks in (missing ones are skipped).
            search_ids: Ids of rows that match ``search`` besides (text found elsewhere,
                e.g. in the judged inputs the run store keeps).
            sort: Order by this column (missing cells last; ties keep file order).
            descending: Largest first.

        Raises:
            ValueError: A condition names an unknown column or compares it with a value of
                another kind (the message names both).
        """
        key = (
            tuple((c, o, _hashable(v)) for c, o, v in where),
            search,
            tuple(search_columns),
            search_ids,
            sort,
            descending,
        )
        with self._lock:
            cached = self._selections.get(key)
            if cached is not None:
                self._selections.move_to_end(key)
                return cached
        mask = np.ones(self.row_count, dtype=bool)
        for condition in where:
            mask &= self._matches(condition)
        if search:
            mask &= self._search(search, search_columns, search_ids)
        positions = np.nonzero(mask)[0].astype(np.int64)
        if sort is not None:
            positions = self._sorted(positions, sort, descending)
        positions.setflags(write=False)
        with self._lock:
            self._selections[key] = positions
            if len(self._selections) > _CACHED_SELECTIONS:
                self._selections.popitem(last=False)
        return positions

    def page(
        self,
        columns: Sequence[str],
        *,
        offset: int = 0,
        limit: int = 50,
        where: Sequence[Condition] = (),
        search: str = "",
        search_columns: Sequence[str] = ("id",),
        search_ids: frozenset[str] = frozenset(),
        sort: str | None = None,
        descending: bool = False,
    ) -> Page:
        """The page of matching rows from ``offset`` (see :meth:`select`), with ``columns``.

        An ``offset`` past the end gives the last page.
        """
        limit = max(1, int(limit))
        if not where and not search and sort is None:
            total = self.row_count
            offset = page_start(offset, total, limit)
            positions = np.arange(offset, min(total, offset + limit), dtype=np.int64)
        else:
            matching = self.select(
                where=where,
                search=search,
                search_columns=search_columns,
                search_ids=search_ids,
                sort=sort,
                descending=descending,
            )
            total = len(matching)
            offset = page_start(offset, total, limit)
            positions = matching[offset : offset + limit]
        return Page(
            rows=self.rows(positions, columns),
            positions=[int(p) for p in positions],
            total=total,
            offset=offset,
            limit=limit,
            row_count=self.row_count,
        )

    def _column_or_error(self, name: str) -> pa.Array:
        try:
            return self.column(name)
        except KeyError:
            raise ValueError(f"the item table has no column {name!r}") from None

    def _matches(self, condition: Condition) -> np.ndarray:
        name, operator, value = condition
        array = self._column_or_error(name)
        if pa.types.is_null(array.type):
            return np.zeros(self.row_count, dtype=bool)
        try:
            if operator == "in":
                values = list(value)
                if not values:
                    return np.zeros(self.row_count, dtype=bool)
                result = pc.is_in(array, value_set=pa.array(values))
            else:
                result = _COMPARE[operator](array, pa.scalar(value))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
            raise ValueError(
                f"column {name!r} ({array.type}) cannot be compared with {value!r}: {exc}"
            ) from None
        return _true(result)

    def _search(self, text: str, columns: Sequence[str], ids: frozenset[str] = frozenset()) -> np.ndarray:
        found = np.zeros(self.row_count, dtype=bool)
        if ids and "id" in self.types:
            column = self.column("id")
            text_type = column.type if pa.types.is_large_string(column.type) else pa.string()
            if not pa.types.is_string(column.type) and not pa.types.is_large_string(column.type):
                column = pc.cast(column, pa.string())
            found |= _true(pc.is_in(column, value_set=pa.array(sorted(ids), type=text_type)))
        for name in columns:
            if name not in self.types:
                continue
            array = self.column(name)
            if pa.types.is_null(array.type):
                continue
            if not (pa.types.is_string(array.type) or pa.types.is_large_string(array.type)):
                try:
                    array = pc.cast(array, pa.large_string())
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                    continue
            found |= _true(pc.match_substring(array, text, ignore_case=True))
        return found

    def _sorted(self, positions: np.ndarray, name: str, descending: bool) -> np.ndarray:
        array = self._column_or_error(name)
        if pa.types.is_null(array.type) or not len(positions):
            return positions
        values = array.take(pa.array(positions))
        order = pc.array_sort_indices(
            values, order="descending" if descending else "ascending", null_placement="at_end"
        )
        return positions[order.to_numpy()]


def _true(result: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A boolean Arrow result as a NumPy mask, missing as ``False``."""
    return np.asarray(pc.fill_null(result, False).to_numpy(zero_copy_only=False), dtype=bool)


def page_start(offset: int, total: int, limit: int) -> int:
    """``offset`` as a page start within ``total`` rows (past the end: the last page)."""
    if total <= 0:
        return 0
    offset = max(0, int(offset))
    return min(offset, (total - 1) // limit * limit)


def _hashable(value: Any) -> Hashable:
    if isinstance(value, list | tuple | set | frozenset):
        return tuple(value)
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    return value  # type: ignore[no-any-return]


class TableCache:
    """Open :class:`ItemTable` s of recently viewed runs, opened again when their file changes.

    Args:
        size: How many tables are kept open.
    """

    def __init__(self, size: int = 8) -> None:
        self._size = size
        self._tables: OrderedDict[Path, ItemTable] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, path: Path) -> ItemTable:
        """The table in ``path`` as it is on disk now.

        Raises:
            FileNotFoundError: There is no such file.
            LinkedFileError: It is a symbolic link or not a regular file.
        """
        stat = path.lstat()
        signature = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
        with self._lock:
            found = self._tables.get(path)
            if found is not None and found.signature == signature:
                self._tables.move_to_end(path)
                return found
        table = ItemTable(path)
        with self._lock:
            # A table dropped here may still serve a request in another thread: it is closed
            # when the last reference to it goes, never under a reader.
            self._tables.pop(path, None)
            self._tables[path] = table
            while len(self._tables) > self._size:
                self._tables.popitem(last=False)
        return table
