"""Per-item count rows held as one integer code per item, for the bootstrap.

Most agreement statistics are functions of summed per-item count rows that are one-hot (an
item falls in one cell of a confusion matrix, one score of a ROC table) or take one of a few
distinct forms (a multi-label item's true/false positive and false negative counts).
:class:`CountCodes` keeps such rows as a code per item into a small table of distinct rows
instead of an ``n × k`` float matrix: 8 bytes per item, whatever ``k``.

Summing the rows of a resample is then a sum of the resample's weights per code, and the
sums are the same numbers as the dense matrix gives (integer counts, exact in float64), so
:func:`jurist.metrics.gold_agreement.bootstrap_cis` gives the same intervals, bit for bit,
from either form.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

__all__ = ["CountCodes", "count_rows", "summed_rows"]


@dataclass(frozen=True)
class CountCodes:
    """Count rows by code: item ``i``'s row is ``rows[codes[i]]``, or, without ``rows``, the
    one-hot row of ``width`` columns with a 1 in column ``codes[i]``.

    Args:
        codes: One non-negative integer per item.
        width: Columns of a row (one-hot: the number of cells).
        rows: ``(k, width)`` integer counts of each code, or ``None`` for one-hot rows.
    """

    codes: np.ndarray
    width: int
    rows: np.ndarray | None = None

    def __post_init__(self) -> None:
        codes = np.asarray(self.codes, dtype=np.intp).reshape(-1)
        limit = self.width if self.rows is None else len(self.rows)
        if codes.size and (codes.min() < 0 or codes.max() >= limit):
            raise ValueError(f"codes must lie in [0, {limit}), got {codes.min()} to {codes.max()}")
        if self.rows is not None and np.asarray(self.rows).shape[-1] != self.width:
            raise ValueError(f"rows must have {self.width} columns, got shape {np.asarray(self.rows).shape}")
        object.__setattr__(self, "codes", codes)

    def __len__(self) -> int:
        return int(self.codes.size)

    @property
    def shape(self) -> tuple[int, int]:
        """``(items, width)``: the shape of the dense matrix these codes stand for."""
        return (len(self), self.width)

    def grouped(self, weights: np.ndarray) -> np.ndarray:
        """Sum of each row of ``weights`` (``(resamples, items)`` integers) per code:
        ``(resamples, codes)`` integers, 0 for a code no item has."""
        size = self.width if self.rows is None else len(self.rows)
        order, present, starts = self._groups
        sums = np.zeros((weights.shape[0], size), dtype=weights.dtype)
        if present.size:
            sums[:, present] = np.add.reduceat(weights[:, order], starts, axis=1)
        return sums

    @cached_property
    def _groups(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The items in code order, the codes present and where each one's items start."""
        order = np.argsort(self.codes, kind="stable")
        present, starts = np.unique(self.codes[order], return_index=True)
        return order, present, starts

    def resampled(self, weights: np.ndarray) -> np.ndarray:
        """``weights @ dense`` as float64 (``(resamples, width)``): each resample's summed rows."""
        grouped = self.grouped(weights)
        if self.rows is None:
            return grouped.astype(np.float64)
        return grouped.astype(np.float64) @ np.asarray(self.rows, dtype=np.float64)

    def totals(self) -> np.ndarray:
        """The summed rows of every item, shape ``(1, width)`` (float64)."""
        return self.resampled(np.ones((1, len(self)), dtype=np.int64))

    def dense(self) -> np.ndarray:
        """The ``(items, width)`` float64 matrix these codes stand for."""
        if self.rows is None:
            matrix = np.zeros((len(self), self.width))
            matrix[np.arange(len(self)), self.codes] = 1.0
            return matrix
        return np.asarray(self.rows, dtype=np.float64)[self.codes]


def count_rows(matrix: np.ndarray) -> CountCodes:
    """The distinct rows of an integer count ``matrix`` and each item's code among them."""
    data = np.asarray(matrix)
    if data.ndim != 2:
        raise ValueError("counts must be a 2-D array: one row per item")
    if data.shape[0] == 0:
        return CountCodes(np.zeros(0, dtype=np.intp), data.shape[1], np.zeros((0, data.shape[1])))
    rows, codes = np.unique(data, axis=0, return_inverse=True)
    return CountCodes(codes.reshape(-1), data.shape[1], rows)


def summed_rows(counts: np.ndarray | CountCodes) -> np.ndarray:
    """The sum of every item's count row, shape ``(1, width)``, from either form."""
    if isinstance(counts, CountCodes):
        return counts.totals()
    return np.asarray(counts).sum(axis=0, keepdims=True)
