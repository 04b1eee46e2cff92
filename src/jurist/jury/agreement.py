"""What a panel's summary reports about its members: how much they agree with each other, how
often each agrees with gold, and each one's headline figures.

Agreement among members is computed on the votes, one row per item and one column per member
(``None`` where a member failed): pairwise percent agreement, Fleiss' κ and Krippendorff's α
(nominal for labels and yes/no; interval for numeric scores, with the mean within-item standard
deviation), each with a percentile-bootstrap interval that resamples items
(:func:`jurist.metrics.gold_agreement.bootstrap_ci`). Only items with at least two votes count.
When the rows are keys of items (one row per labelled sentence, say), the interval resamples
the items, each with all its keys (``groups``): the rows of one item are not independent.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from jurist.jury.aggregate import is_number
from jurist.metrics import annotators
from jurist.metrics.gold_agreement import wilson_interval
from jurist.report.review import Review
from jurist.tasks.calibration_rows import bootstrap

__all__ = ["SETTINGS", "agreement_figures", "gold_rate", "headline", "member_pairs"]

SETTINGS: dict[str, Any] = {"n_resamples": 1000, "confidence": 0.95, "seed": 0}
"""Bootstrap settings of every interval a panel reports."""

_SKIPPED = {"run", "failed_ids", "failure_kinds", "task", "members", "pairs", "aggregated", "weights"}


def _with_interval(
    name: str, cells: np.ndarray, statistic: Callable[[np.ndarray], np.ndarray], settings: dict[str, Any]
) -> dict[str, float]:
    point, low, high = bootstrap(cells, statistic, settings)
    return {name: point, f"{name}_low": low, f"{name}_high": high}


def _grouped(cells: np.ndarray, groups: Sequence[Hashable]) -> np.ndarray:
    """``cells`` (one row per kept row) summed per group, groups in first-seen order."""
    order: dict[Hashable, int] = {}
    for group in groups:
        order.setdefault(group, len(order))
    summed = np.zeros((len(order), cells.shape[1]))
    np.add.at(summed, [order[group] for group in groups], cells)
    return summed


def agreement_figures(
    matrix: Sequence[Sequence[Any]],
    settings: Mapping[str, Any] | None = None,
    groups: Sequence[Hashable] | None = None,
) -> dict[str, Any]:
    """Agreement among the members of a panel, from its vote matrix (items × members).

    Args:
        matrix: One row of votes per item (or per key of an item), one column per member.
        settings: Bootstrap settings over :data:`SETTINGS`.
        groups: Per row, the unit the bootstrap resamples (e.g. the item a key belongs to);
            default: each row. The point values do not depend on it (every statistic is of
            counts summed over rows).

    Returns:
        ``scale`` (``nominal``, or ``interval`` when every vote is a number), ``items`` (with
        two votes or more), ``pairwise_agreement``, ``fleiss_kappa`` and ``krippendorff_alpha``
        (of the scale), each with ``_low``/``_high``; for the interval scale also
        ``mean_item_sd`` with its interval; with ``groups``, ``groups``: how many groups those
        rows belong to. Fleiss' κ and the pairwise agreement treat every distinct vote as a
        category on either scale.
    """
    chosen = {**SETTINGS, **(settings or {})}
    votes = [[vote for vote in row] for row in matrix]
    present = [vote for row in votes for vote in row if vote is not None]
    interval = bool(present) and all(is_number(vote) for vote in present)
    keyed = [[None if vote is None else (type(vote).__name__, vote) for vote in row] for row in votes]
    nominal = annotators.nominal_cells(keyed)
    figures: dict[str, Any] = {"scale": "interval" if interval else "nominal", "items": int(len(nominal))}
    kept: list[Hashable] | None = None
    if groups is not None:
        # The rows the cells keep: those with two votes or more, as annotators counts them.
        kept = [g for g, row in zip(groups, votes, strict=True) if sum(v is not None for v in row) >= 2]
        nominal = _grouped(nominal, kept)
        figures["groups"] = int(len(nominal))
    figures.update(
        _with_interval("pairwise_agreement", nominal, annotators.pairwise_agreement_from_cells, chosen)
    )
    figures.update(_with_interval("fleiss_kappa", nominal, annotators.fleiss_kappa_from_cells, chosen))
    if interval:
        cells = annotators.interval_cells(
            [[float(v) if v is not None else None for v in row] for row in votes]
        )
        if kept is not None:
            cells = _grouped(cells, kept)
        figures.update(
            _with_interval(
                "krippendorff_alpha", cells, annotators.krippendorff_alpha_interval_from_cells, chosen
            )
        )
        figures.update(_with_interval("mean_item_sd", cells, annotators.mean_item_sd_from_cells, chosen))
    else:
        figures.update(
            _with_interval(
                "krippendorff_alpha", nominal, annotators.krippendorff_alpha_nominal_from_cells, chosen
            )
        )
    figures.update(n_resamples=chosen["n_resamples"], confidence=chosen["confidence"])
    return figures


def member_pairs(matrix: Sequence[Sequence[Any]], names: Sequence[str]) -> list[dict[str, Any]]:
    """Each pair of members: on how many items both voted (``n``) and the share they voted alike."""
    pairs = []
    for (i, first), (j, second) in itertools.combinations(enumerate(names), 2):
        both = [(row[i], row[j]) for row in matrix if row[i] is not None and row[j] is not None]
        same = sum(
            type(a) is type(b) and a == b  # True == 1 in Python: a bool and a number differ
            for a, b in both
        )
        pairs.append(
            {"a": first, "b": second, "n": len(both), "agreement": same / len(both) if both else math.nan}
        )
    return pairs


def gold_rate(items: pd.DataFrame, review: Review, confidence: float = 0.95) -> dict[str, float] | None:
    """How often a run's verdict agrees with gold: the share of true values in the review's
    ``agrees`` column over answered items, with its Wilson interval; ``None`` without one."""
    column = review.agrees
    if column is None or column not in items:
        return None
    answered = items[items["status"] == "ok"] if "status" in items else items
    values = [
        bool(v) for v in answered[column] if v is not None and not (isinstance(v, float) and math.isnan(v))
    ]
    if not values:
        return None
    agreed = sum(values)
    low, high = wilson_interval(agreed, len(values), confidence)
    return {"rate": agreed / len(values), "low": low, "high": high, "n": len(values)}


def headline(summary: Any, prefix: str = "") -> dict[str, float]:
    """The numeric figures of a run's summary as ``dotted.name -> value`` (counts, usage and
    the task's own figures with their ``_low``/``_high`` intervals); lists, texts, the run's
    identity and the ids of failed items are left out."""
    found: dict[str, float] = {}
    if not isinstance(summary, Mapping):
        return found
    for key, value in summary.items():
        if key in _SKIPPED:
            continue
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            found.update(headline(value, f"{name}."))
        elif isinstance(value, int | float) and not isinstance(value, bool):
            found[name] = float(value)
    return found
