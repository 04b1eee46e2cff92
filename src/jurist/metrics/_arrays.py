"""Array plumbing shared by the arrays-in metrics: labels to integer codes without Python loops.

Labels keep Python's equality: ``1 == 1.0 == True`` match, ``"1"`` and ``1`` do not. A list
that mixes strings with other values therefore becomes an object array (NumPy would turn
``[1, "1"]`` into two equal strings), and arrays of different kinds are compared as objects.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "DRAWS_PER_CHUNK",
    "as_array",
    "confusion_counts",
    "joint_codes",
    "label_codes",
    "ratio",
    "scalar",
    "values_equal",
]

_NUMERIC = "biuf"
_SMALL_INTEGERS = "biu"
#: Largest span of integer labels coded by a lookup table instead of a search.
_MAX_SPAN = 1 << 16
DRAWS_PER_CHUNK = 1 << 20
"""Random draws a bootstrap holds at once (8 MiB of weights or indices): with ``n`` items it
draws ``DRAWS_PER_CHUNK // n`` resamples at a time, the same draws as all at once, so its
memory does not grow with ``n × n_resamples``."""


def as_array(values: Sequence[Any] | np.ndarray) -> np.ndarray:
    """``values`` as a 1-D array whose elements compare as the original values do."""
    if isinstance(values, np.ndarray):
        return values.ravel()
    if isinstance(values, pd.Series | pd.Index):
        return np.asarray(values.to_numpy()).ravel()
    items = values if isinstance(values, list) else list(values)
    try:
        array = np.asarray(items)
    except ValueError:  # ragged nested sequences
        array = np.empty(0)
    if array.ndim != 1 or len(array) != len(items):
        array = np.empty(len(items), dtype=object)
        array[:] = items
        return array
    if array.dtype.kind in "US" and not all(isinstance(item, str | bytes) for item in items):
        array = np.empty(len(items), dtype=object)
        array[:] = items
    return array


def ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """``numerator / denominator`` element-wise, NaN where the denominator is not positive.

    A rate with nothing to count is undefined (NaN), never 0 or 1; no warning is raised for
    the masked cells.
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, numerator / np.where(denominator > 0, denominator, 1.0), np.nan)


def scalar(value: Any) -> Any:
    """A NumPy scalar as the Python value it stands for (for error messages)."""
    return value.item() if isinstance(value, np.generic) else value


def _comparable(first: np.ndarray, second: np.ndarray) -> bool:
    """Whether NumPy's element comparison of the two arrays is Python's equality."""
    kinds = first.dtype.kind + second.dtype.kind
    return all(kind in _NUMERIC for kind in kinds) or kinds in ("UU", "SS")


def _as_objects(array: np.ndarray) -> np.ndarray:
    return array if array.dtype == object else array.astype(object)


def values_equal(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Element-wise ``first[i] == second[i]`` with Python's equality."""
    if _comparable(first, second):
        return np.asarray(first == second, dtype=bool)
    return np.asarray(_as_objects(first) == _as_objects(second), dtype=bool)


def _small_integers(*arrays: np.ndarray) -> bool:
    return all(a.dtype.kind in _SMALL_INTEGERS and (a.dtype.kind != "u" or a.itemsize < 8) for a in arrays)


def label_codes(values: np.ndarray, labels: Sequence[Hashable] | np.ndarray) -> np.ndarray:
    """Position of each value in ``labels`` (the last one if a label repeats), or −1 if absent."""
    axis = as_array(labels)
    missing = np.full(values.shape, -1, dtype=np.int64)
    if axis.size == 0 or values.size == 0:
        return missing
    if not _comparable(values, axis):
        position = {label: i for i, label in enumerate(axis.tolist())}
        return np.fromiter((position.get(v, -1) for v in values.tolist()), dtype=np.int64, count=values.size)
    if _small_integers(values, axis):
        low, high = int(axis.min()), int(axis.max())
        if high - low < _MAX_SPAN:
            table = np.full(high - low + 1, -1, dtype=np.int64)
            shifted = axis.astype(np.int64) - low
            # Fancy assignment with repeated indices is unordered: write the last occurrence only.
            _, last = np.unique(shifted[::-1], return_index=True)
            keep = axis.size - 1 - last
            table[shifted[keep]] = keep
            offsets = values.astype(np.int64) - low
            inside = (offsets >= 0) & (offsets <= high - low)
            return np.where(inside, table.take(offsets, mode="clip"), -1)
    order = np.argsort(axis, kind="stable")
    ordered = axis[order]
    last = np.ones(ordered.size, dtype=bool)
    last[:-1] = ordered[1:] != ordered[:-1]
    distinct, index = ordered[last], order[last]
    slot = np.searchsorted(distinct, values)
    return np.where(distinct.take(slot, mode="clip") == values, index.take(slot, mode="clip"), -1)


def joint_codes(first: np.ndarray, second: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Codes ``0 … k−1`` of both arrays over a common label set of size ``k``.

    The set holds every value of either array, possibly with values of neither in between
    (a span of small integers): a label no item carries adds an empty row and column to a
    confusion matrix and changes none of its statistics.
    """
    if first.size + second.size == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), 0
    if _small_integers(first, second):
        present = [a for a in (first, second) if a.size]
        low = min(int(a.min()) for a in present)
        high = max(int(a.max()) for a in present)
        if high - low < 2048:
            return first.astype(np.int64) - low, second.astype(np.int64) - low, high - low + 1
    both = np.concatenate([first, second]) if _comparable(first, second) else None
    if both is not None and both.dtype.kind in _NUMERIC:
        distinct, codes = np.unique(both, return_inverse=True)
        size = distinct.size
    else:
        objects = np.concatenate([_as_objects(first), _as_objects(second)])
        codes, uniques = pd.factorize(objects, use_na_sentinel=False)
        size = len(uniques)
    codes = np.asarray(codes, dtype=np.int64).ravel()
    return codes[: first.size], codes[first.size :], int(size)


def confusion_counts(first: np.ndarray, second: np.ndarray, k: int) -> np.ndarray:
    """``M[a, b]`` = number of items with code ``a`` in ``first`` and ``b`` in ``second``."""
    return np.bincount(first * k + second, minlength=k * k).reshape(k, k).astype(np.int64, copy=False)
