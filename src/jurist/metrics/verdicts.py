"""Agreement of categorical verdicts with gold: one label, several labels, or true/false.

Every statistic here is a function of *summed per-item counts* (one-hot confusion cells,
or per-label true/false positive and false negative counts), so it takes a stack of count
rows of shape ``(..., k)`` and returns one value per row. That makes each statistic fit
:func:`jurist.metrics.gold_agreement.bootstrap_ci`, which resamples items and sums their
count rows, with no Python loop over resamples.

A ratio whose denominator is 0 is NaN (undefined), never 0 or 1.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np

from jurist.metrics._arrays import as_array, label_codes, ratio, scalar
from jurist.metrics.count_codes import CountCodes, count_rows

__all__ = [
    "accuracy_from_confusion",
    "binary_codes",
    "binary_counts",
    "binary_f1_from_counts",
    "confusion_cells",
    "confusion_codes",
    "label_indices",
    "macro_f1_from_confusion",
    "multilabel_cells",
    "multilabel_codes",
    "multilabel_exact_match",
    "multilabel_macro_f1",
    "multilabel_micro_f1",
    "multilabel_per_label",
]


def label_indices(
    values: Sequence[Hashable] | np.ndarray, labels: Sequence[Hashable] | np.ndarray
) -> np.ndarray:
    """The position of each value in ``labels``.

    Raises:
        ValueError: A value is not one of ``labels``.
    """
    array = as_array(values)
    codes = label_codes(array, labels)
    if (codes < 0).any():
        first = array[int(np.argmax(codes < 0))]
        raise ValueError(f"label {scalar(first)!r} is not in labels {as_array(labels).tolist()!r}")
    return codes


def confusion_cells(
    gold: Sequence[Hashable] | np.ndarray,
    predicted: Sequence[Hashable] | np.ndarray,
    labels: Sequence[Hashable] | np.ndarray,
) -> np.ndarray:
    """One row per item: its cell of the ``k × k`` confusion matrix, one-hot and flattened.

    Row ``i`` has a 1 in column ``g·k + p`` where ``g`` and ``p`` are the positions of
    ``gold[i]`` and ``predicted[i]`` in ``labels``; summing the rows and reshaping to
    ``(k, k)`` gives the confusion matrix ``M[g, p]``.
    """
    if len(gold) != len(predicted):
        raise ValueError(f"gold and predicted differ in length: {len(gold)} != {len(predicted)}")
    k = len(labels)
    cells = np.zeros((len(gold), k * k))
    if len(gold):
        cells[np.arange(len(gold)), label_indices(gold, labels) * k + label_indices(predicted, labels)] = 1.0
    return cells


def confusion_codes(
    gold: Sequence[Hashable] | np.ndarray,
    predicted: Sequence[Hashable] | np.ndarray,
    labels: Sequence[Hashable] | np.ndarray,
) -> CountCodes:
    """:func:`confusion_cells` as one code per item, ``g·k + p`` of ``k·k`` cells (8 bytes
    an item instead of ``8·k²``; the same bootstrap, see :mod:`jurist.metrics.count_codes`).

    Raises:
        ValueError: The lengths differ, or a value is not one of ``labels``.
    """
    if len(gold) != len(predicted):
        raise ValueError(f"gold and predicted differ in length: {len(gold)} != {len(predicted)}")
    k = len(labels)
    if not len(gold):
        return CountCodes(np.zeros(0, dtype=np.intp), k * k)
    return CountCodes(label_indices(gold, labels) * k + label_indices(predicted, labels), k * k)


def _as_matrices(counts: np.ndarray) -> np.ndarray:
    data = np.asarray(counts, dtype=np.float64)
    k = int(round(np.sqrt(data.shape[-1])))
    if k * k != data.shape[-1]:
        raise ValueError(f"confusion cells must have k·k columns, got {data.shape[-1]}")
    return data.reshape(*data.shape[:-1], k, k)


def accuracy_from_confusion(counts: np.ndarray) -> np.ndarray:
    """Accuracy of summed confusion cells: ``Σ_k M[k, k] / Σ M`` (NaN with no item).

    Args:
        counts: Flattened ``k × k`` confusion matrices, shape ``(..., k·k)``.
    """
    matrix = _as_matrices(counts)
    return ratio(np.trace(matrix, axis1=-2, axis2=-1), matrix.sum(axis=(-2, -1)))


def macro_f1_from_confusion(counts: np.ndarray) -> np.ndarray:
    """Macro-averaged F1 of summed confusion cells.

    For each class ``c``: ``tp = M[c, c]``, ``fp = Σ_g M[g, c] − tp``, ``fn = Σ_p M[c, p] − tp``
    and ``F1_c = 2·tp / (2·tp + fp + fn)``. The macro F1 is the mean of ``F1_c`` over the
    classes that occur in the gold labels or the predictions (``2·tp + fp + fn > 0``),
    as scikit-learn's ``f1_score(average="macro")`` computes it over the labels present.

    Args:
        counts: Flattened ``k × k`` confusion matrices, shape ``(..., k·k)``.
    """
    matrix = _as_matrices(counts)
    tp = np.diagonal(matrix, axis1=-2, axis2=-1)
    denominator = matrix.sum(axis=-1) + matrix.sum(axis=-2)  # 2·tp + fp + fn
    f1 = ratio(2.0 * tp, denominator)
    present = denominator > 0
    with np.errstate(invalid="ignore"):
        return np.where(present.any(axis=-1), np.nansum(f1, axis=-1) / present.sum(axis=-1), np.nan)


def binary_counts(gold: Sequence[bool] | np.ndarray, predicted: Sequence[bool] | np.ndarray) -> np.ndarray:
    """One row per item: ``[tp, fp, fn, tn]`` one-hot, with ``True`` the positive class."""
    g = np.asarray(gold, dtype=bool)
    p = np.asarray(predicted, dtype=bool)
    if g.shape != p.shape:
        raise ValueError(f"gold and predicted differ in length: {g.size} != {p.size}")
    return np.stack([g & p, ~g & p, g & ~p, ~g & ~p], axis=-1).astype(np.float64)


def binary_codes(gold: Sequence[bool] | np.ndarray, predicted: Sequence[bool] | np.ndarray) -> CountCodes:
    """:func:`binary_counts` as one code per item: 0 tp, 1 fp, 2 fn, 3 tn."""
    g = np.asarray(gold, dtype=bool)
    p = np.asarray(predicted, dtype=bool)
    if g.shape != p.shape:
        raise ValueError(f"gold and predicted differ in length: {g.size} != {p.size}")
    return CountCodes(np.where(p, np.where(g, 0, 1), np.where(g, 2, 3)), 4)


def binary_f1_from_counts(counts: np.ndarray) -> np.ndarray:
    """F1 of the positive class from summed ``[tp, fp, fn, tn]`` rows.

    ``F1 = 2·tp / (2·tp + fp + fn)``; NaN when nothing is positive in gold or prediction.
    """
    data = np.asarray(counts, dtype=np.float64)
    tp, fp, fn = data[..., 0], data[..., 1], data[..., 2]
    return ratio(2.0 * tp, 2.0 * tp + fp + fn)


def multilabel_cells(gold: np.ndarray, predicted: np.ndarray) -> np.ndarray:
    """Per-item counts of a multi-label judgment: ``[tp_1..tp_L, fp_1..fp_L, fn_1..fn_L, exact, 1]``.

    Args:
        gold: Indicator matrix ``(n, L)``: item ``i`` has gold label ``l``.
        predicted: Indicator matrix ``(n, L)`` of the judge's labels.

    Returns:
        An ``(n, 3L + 2)`` array; column ``3L`` is 1 when the item's label sets are equal,
        the last column counts the item.
    """
    return _multilabel_rows(gold, predicted).astype(np.float64)


def _multilabel_rows(gold: np.ndarray, predicted: np.ndarray) -> np.ndarray:
    """The boolean rows of :func:`multilabel_cells`."""
    g = np.asarray(gold, dtype=bool)
    p = np.asarray(predicted, dtype=bool)
    if g.shape != p.shape:
        raise ValueError(f"gold and predicted shapes differ: {g.shape} != {p.shape}")
    exact = (g == p).all(axis=1, keepdims=True)
    ones = np.ones((g.shape[0], 1), dtype=bool)
    return np.concatenate([g & p, ~g & p, g & ~p, exact, ones], axis=1)


def multilabel_codes(gold: np.ndarray, predicted: np.ndarray) -> CountCodes:
    """:func:`multilabel_cells` as one code per item into the distinct rows that occur."""
    return count_rows(_multilabel_rows(gold, predicted).astype(np.int8))


def _split(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    data = np.asarray(counts, dtype=np.float64)
    size = (data.shape[-1] - 2) // 3
    if 3 * size + 2 != data.shape[-1]:
        raise ValueError("multi-label counts must have 3L + 2 columns; build them with multilabel_cells")
    return (
        data[..., :size],
        data[..., size : 2 * size],
        data[..., 2 * size : 3 * size],
        data[..., -2],
        data[..., -1],
    )


def multilabel_per_label(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Precision, recall and F1 of each label from summed :func:`multilabel_cells` rows.

    ``P_l = tp_l / (tp_l + fp_l)``, ``R_l = tp_l / (tp_l + fn_l)``,
    ``F1_l = 2·tp_l / (2·tp_l + fp_l + fn_l)``; each NaN where its denominator is 0.

    Returns:
        Three arrays of shape ``(..., L)``.
    """
    tp, fp, fn, _, _ = _split(counts)
    return ratio(tp, tp + fp), ratio(tp, tp + fn), ratio(2.0 * tp, 2.0 * tp + fp + fn)


def multilabel_micro_f1(counts: np.ndarray) -> np.ndarray:
    """Micro F1: ``2·Σtp / (2·Σtp + Σfp + Σfn)`` with the sums over labels."""
    tp, fp, fn, _, _ = _split(counts)
    total_tp = tp.sum(axis=-1)
    return ratio(2.0 * total_tp, 2.0 * total_tp + fp.sum(axis=-1) + fn.sum(axis=-1))


def multilabel_macro_f1(counts: np.ndarray) -> np.ndarray:
    """Macro F1: the mean of ``F1_l`` over the labels used by gold or judge (``2·tp + fp + fn > 0``)."""
    tp, fp, fn, _, _ = _split(counts)
    denominator = 2.0 * tp + fp + fn
    f1 = ratio(2.0 * tp, denominator)
    present = denominator > 0
    with np.errstate(invalid="ignore"):
        return np.where(present.any(axis=-1), np.nansum(f1, axis=-1) / present.sum(axis=-1), np.nan)


def multilabel_exact_match(counts: np.ndarray) -> np.ndarray:
    """Exact-match ratio (subset accuracy): ``#{i : gold set_i = judged set_i} / n``."""
    _, _, _, exact, items = _split(counts)
    return ratio(exact, items)
