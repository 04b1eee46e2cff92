"""One column of the per-item table, gathered a value at a time and held compactly.

:class:`Column` keeps the values of the last :data:`CHUNK` rows as a list; each full chunk
whose values all have one plain type (``float``, ``int`` within int64, ``bool``, ``str``,
with ``None`` among floats or texts) is stored as an array of that type (8 bytes a number,
not a Python object each), any other chunk as its list. :meth:`Column.values` gives what
``pd.DataFrame`` builds the column from: when every chunk has one type (and pandas infers
the same dtype for their union as for each), the arrays joined; otherwise the original
values again, for pandas to infer the dtype from all of them as it would from one list.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

CHUNK = 4096
"""Rows of a column gathered as Python objects before they are stored as an array."""

_INT64 = (-(2**63), 2**63 - 1)


@dataclass
class _Chunk:
    """A stored chunk: its ``kind`` (``float``, ``int``, ``bool``, ``str`` or ``raw``), its
    values (an array, or the list itself when ``raw``) and where it held ``None``."""

    kind: str
    values: Any
    nones: np.ndarray | None = None

    def objects(self) -> list[Any]:
        """The chunk's values as they came (``None`` where ``None`` was)."""
        if self.kind == "raw":
            return list(self.values)
        values = self.values.tolist() if isinstance(self.values, np.ndarray) else list(self.values)
        if self.nones is not None:
            for position in np.flatnonzero(self.nones):
                values[position] = None
        return values


def _kind(values: list[Any]) -> str:
    """The one plain type of ``values`` (``None`` allowed among floats and texts), or ``raw``."""
    kinds = {type(value) for value in values}
    nones = type(None) in kinds
    kinds.discard(type(None))
    if len(kinds) != 1:
        return "raw"
    kind = kinds.pop()
    if kind is float or kind is str:
        return kind.__name__
    if nones:
        return "raw"
    if kind is bool:
        return "bool"
    if kind is int and _INT64[0] <= min(values) and max(values) <= _INT64[1]:
        return "int"
    return "raw"


def _stored(values: list[Any]) -> _Chunk:
    """``values`` as a stored chunk (an array when they have one plain type)."""
    kind = _kind(values)
    if kind == "raw":
        return _Chunk("raw", values)
    nones = None
    if kind in ("float", "str") and any(value is None for value in values):
        nones = np.fromiter((value is None for value in values), dtype=bool, count=len(values))
    if kind == "str":
        try:
            text = pd.array(values, dtype="str")
        except (UnicodeError, ValueError):  # e.g. a lone surrogate Arrow cannot hold
            return _Chunk("raw", values)
        return _Chunk("str", text, nones)
    dtype = {"float": np.float64, "int": np.int64, "bool": np.bool_}[kind]
    return _Chunk(kind, np.array([np.nan if v is None else v for v in values], dtype=dtype), nones)


class Column:
    """The values of one column, in row order, held as compact chunks where they allow it."""

    def __init__(self, missing: int) -> None:
        """A column first seen after ``missing`` rows that lacked it (NaN there, as pandas has)."""
        self._chunks: list[_Chunk] = []
        self._pending: list[Any] = []
        self._length = 0
        if missing:
            self._chunks.append(_Chunk("float", np.full(missing, np.nan)))
            self._length = missing

    def __len__(self) -> int:
        return self._length

    def append(self, value: Any) -> None:
        self._pending.append(value)
        self._length += 1
        if len(self._pending) >= CHUNK:
            self._chunks.append(_stored(self._pending))
            self._pending = []

    def values(self) -> Any:
        """What ``pd.DataFrame`` builds this column from, the same column as from one list."""
        chunks = self._chunks
        if self._pending:
            chunks = [*chunks, _stored(self._pending)]
        self._chunks, self._pending = [], []
        kinds = {chunk.kind for chunk in chunks}
        kind = kinds.pop() if len(kinds) == 1 else "raw"
        if kind in ("float", "int", "bool"):
            return np.concatenate([chunk.values for chunk in chunks])
        if kind == "str":
            return pd.concat([pd.Series(chunk.values) for chunk in chunks], ignore_index=True).array
        objects: list[Any] = []
        for chunk in chunks:
            objects.extend(chunk.objects())
        return objects
