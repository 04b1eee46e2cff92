"""Two-order preference judgments: swap consistency, position and length bias, win rates.

A preference row compares response A with response B and is judged twice: once as shown
(order ``AB``: A in the first position) and once swapped (order ``BA``). Each judgment
answers a *position*: ``"A"`` (the first shown), ``"B"`` (the second) or ``"tie"``.
:func:`winner` maps it back to the response it names. Per row:

- the two orders are *consistent* when they name the same winner (both ``tie`` included);
- the row's *verdict* is that winner when consistent, else ``tie`` (an inconsistent pair
  expresses no preference);

Each function below returns per-row count cells (one row per comparison, both orders in
one row, so bootstrap resamples keep the orders together) and the ratio of their sums.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = [
    "CHOICES",
    "combined_verdict",
    "consistency_cells",
    "length_cells",
    "position_cells",
    "ratio_of_sums",
    "winner",
]

CHOICES = ("A", "B", "tie")
"""What one judgment can answer, and what a row's verdict can be."""


def winner(choice: str | None, order: str) -> str | None:
    """The response a positional choice names: in order ``BA`` the first position is B.

    Examples:
        >>> winner("A", "AB"), winner("A", "BA"), winner("tie", "BA")
        ('A', 'B', 'tie')
    """
    if choice is None or choice == "tie" or order == "AB":
        return choice
    return {"A": "B", "B": "A"}[choice]


def combined_verdict(first: str | None, second: str | None) -> str | None:
    """The verdict of a row from the winners of its two orders; ``None`` if one is missing.

    Examples:
        >>> combined_verdict("A", "A"), combined_verdict("A", "B"), combined_verdict("A", None)
        ('A', 'tie', None)
    """
    if first is None or second is None:
        return None
    return first if first == second else "tie"


def ratio_of_sums(cells: np.ndarray) -> np.ndarray:
    """``Σ cells[:, 0] / Σ cells[:, 1]`` per stack of summed cells (shape ``(..., 2)``); NaN if 0."""
    data = np.asarray(cells, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(
            data[..., 1] > 0, data[..., 0] / np.where(data[..., 1] > 0, data[..., 1], 1.0), np.nan
        )


def consistency_cells(first: Sequence[str | None], second: Sequence[str | None]) -> np.ndarray:
    """Per row ``[consistent, complete]``; ``consistency = Σ consistent / Σ complete``.

    ``first`` and ``second`` are the winners (:func:`winner`) of the ``AB`` and ``BA``
    orders; a row with a missing order is not complete.
    """
    a = np.array([x is not None for x in first])
    b = np.array([x is not None for x in second])
    same = np.array([x == y for x, y in zip(first, second, strict=True)], dtype=bool)
    complete = a & b
    return np.stack([complete & same, complete], axis=-1).astype(np.float64).reshape(-1, 2)


def position_cells(first: Sequence[str | None], second: Sequence[str | None]) -> np.ndarray:
    """Per row ``[first-position picks, decisive answers]`` over both orders' *positional* choices.

    ``position_1_rate = Σ picks of "A" / Σ answers "A" or "B"``; an unbiased judge is near
    ½, and ``position_bias = |position_1_rate − ½|``.
    """
    both = list(zip(first, second, strict=True))
    return np.array(
        [[sum(c == "A" for c in pair), sum(c in ("A", "B") for c in pair)] for pair in both], dtype=np.float64
    ).reshape(-1, 2)


def length_cells(
    winners: Sequence[Sequence[str | None]], length_a: Sequence[int], length_b: Sequence[int]
) -> np.ndarray:
    """Per row ``[answers naming the longer response, decisive answers]`` when A and B differ in length.

    ``longer_win_rate = Σ longer picks / Σ decisive answers`` over every answer (both
    orders) naming A or B in a row whose responses differ in length. For gold labels
    (one answer per row), the same cells give ``gold_longer_rate``; the judge's
    ``length_bias = longer_win_rate − gold_longer_rate``.

    Args:
        winners: Per row, the winners it was given (e.g. both orders' winners, or the gold one).
        length_a: Length of response A per row.
        length_b: Length of response B per row.
    """
    rows = []
    for answers, la, lb in zip(winners, length_a, length_b, strict=True):
        if la == lb:
            rows.append([0.0, 0.0])
            continue
        longer = "A" if la > lb else "B"
        decisive = [w for w in answers if w in ("A", "B")]
        rows.append([float(sum(w == longer for w in decisive)), float(len(decisive))])
    return np.array(rows, dtype=np.float64).reshape(-1, 2)
