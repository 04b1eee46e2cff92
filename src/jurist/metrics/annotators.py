"""Agreement among several annotators who labelled the same items (human–human agreement).

Ratings are one list of labels per item (``None`` for a missing vote); an item needs at least
two votes to say anything about agreement and is left out otherwise. Labels are nominal.

- :func:`majority_label`: the label most annotators chose, or ``None`` when the top count is shared.
- :func:`pairwise_agreement`: ``Σ_i a_i / Σ_i n_i (n_i − 1)``, where ``a_i`` counts the ordered
  pairs of distinct annotators of item ``i`` who chose the same label.
- :func:`fleiss_kappa`: Fleiss' κ, with the per-item agreement for a varying number of votes.
- :func:`krippendorff_alpha_nominal`: Krippendorff's α for nominal data (missing votes allowed).
- :func:`krippendorff_alpha_interval`: Krippendorff's α for interval data (scores).
- :func:`mean_item_sd`: the mean within-item standard deviation of numeric votes.

Bootstrap intervals resample items: :func:`nominal_cells` and :func:`interval_cells` give one
row of additive per-item counts, and the ``*_from_cells`` statistics turn summed rows (one per
resample) into the statistics above, so
:func:`jurist.metrics.gold_agreement.bootstrap_ci` can resample them without a loop.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence

import numpy as np

from jurist.metrics._arrays import ratio

__all__ = [
    "annotator_agreement",
    "fleiss_kappa",
    "fleiss_kappa_from_cells",
    "interval_cells",
    "judge_annotator_agreement",
    "krippendorff_alpha_interval",
    "krippendorff_alpha_interval_from_cells",
    "krippendorff_alpha_nominal",
    "krippendorff_alpha_nominal_from_cells",
    "majority_label",
    "mean_item_sd",
    "mean_item_sd_from_cells",
    "nominal_cells",
    "pairwise_agreement",
    "pairwise_agreement_from_cells",
]

Ratings = Sequence[Sequence[Hashable | None]]


def _votes(ratings: Ratings) -> list[list[Hashable]]:
    """Each item's present votes, items with at least two of them."""
    items = [[vote for vote in item if vote is not None] for item in ratings]
    return [item for item in items if len(item) >= 2]


def majority_label(votes: Sequence[Hashable | None]) -> Hashable | None:
    """The label chosen most often; ``None`` when there is no vote or the top count is shared.

    Examples:
        >>> majority_label(["1", "1", "2"]), majority_label(["1", "2"]), majority_label(["tie", None])
        ('1', None, 'tie')
    """
    counts = Counter(vote for vote in votes if vote is not None).most_common()
    if not counts or (len(counts) > 1 and counts[0][1] == counts[1][1]):
        return None
    return counts[0][0]


def pairwise_agreement(ratings: Ratings) -> float:
    """Percent agreement over all pairs of annotators of the same item.

    ``agreement = Σ_i Σ_k n_ik (n_ik − 1) / Σ_i n_i (n_i − 1)``, where ``n_ik`` is the number of
    votes for label ``k`` on item ``i`` and ``n_i`` the item's votes. With the same number of
    votes per item this is Fleiss' ``P̄``. NaN when no item has two votes.

    Examples:
        >>> pairwise_agreement([["1", "1", "2"], ["2", "2", "2"]])
        0.6666666666666666
    """
    agreeing = total = 0
    for item in _votes(ratings):
        agreeing += sum(n * (n - 1) for n in Counter(item).values())
        total += len(item) * (len(item) - 1)
    return agreeing / total if total else float("nan")


def fleiss_kappa(ratings: Ratings) -> float:
    """Fleiss' κ for nominal labels.

    ``P_i = Σ_k n_ik (n_ik − 1) / (n_i (n_i − 1))``, ``P̄ = mean_i P_i``,
    ``p_k = Σ_i n_ik / Σ_i n_i``, ``P_e = Σ_k p_k²`` and ``κ = (P̄ − P_e) / (1 − P_e)``
    (Fleiss 1971; items with a varying number of votes use their own ``n_i``). NaN when no
    item has two votes or every vote is the same label (``P_e = 1``).

    Examples:
        >>> round(fleiss_kappa([["1", "1", "2"], ["2", "2", "2"], ["1", "1", "1"]]), 4)
        0.55
    """
    items = _votes(ratings)
    if not items:
        return float("nan")
    per_item = []
    totals: Counter[Hashable] = Counter()
    for item in items:
        counts = Counter(item)
        totals.update(counts)
        per_item.append(sum(n * (n - 1) for n in counts.values()) / (len(item) * (len(item) - 1)))
    votes = sum(totals.values())
    expected = sum((n / votes) ** 2 for n in totals.values())
    observed = sum(per_item) / len(per_item)
    return (observed - expected) / (1 - expected) if expected < 1 else float("nan")


def krippendorff_alpha_nominal(ratings: Ratings) -> float:
    """Krippendorff's α for nominal labels, from the coincidence matrix.

    Every item with ``m_i ≥ 2`` votes adds ``1 / (m_i − 1)`` to ``o_ck`` for each ordered pair of
    its votes (by different annotators) with labels ``c`` and ``k``. With ``n_c = Σ_k o_ck`` and
    ``n = Σ_c n_c``: ``D_o = Σ_{c≠k} o_ck`` and ``D_e = Σ_{c≠k} n_c n_k / (n − 1)``, and
    ``α = 1 − D_o / D_e`` (Krippendorff 2011). NaN when no item has two votes or every vote
    is the same label (``D_e = 0``).

    Examples:
        >>> round(krippendorff_alpha_nominal([["1", "1", "2"], ["2", "2", "2"], ["1", "1", "1"]]), 4)
        0.6
    """
    items = _votes(ratings)
    coincidence: dict[tuple[Hashable, Hashable], float] = {}
    for item in items:
        weight = 1.0 / (len(item) - 1)
        for i, first in enumerate(item):
            for j, second in enumerate(item):
                if i != j:
                    coincidence[(first, second)] = coincidence.get((first, second), 0.0) + weight
    marginals: dict[Hashable, float] = {}
    for (first, _second), value in coincidence.items():
        marginals[first] = marginals.get(first, 0.0) + value
    n = sum(marginals.values())
    if n <= 1:
        return float("nan")
    observed = sum(value for (c, k), value in coincidence.items() if c != k)
    expected = sum(marginals[c] * marginals[k] for c in marginals for k in marginals if c != k) / (n - 1)
    return 1.0 - observed / expected if expected > 0 else float("nan")


def _two_option(votes: Sequence[Hashable | None]) -> list[Hashable | None]:
    """Votes with the ties dropped (two-option agreement: ``"1"`` or ``"2"`` only)."""
    return [vote if vote in ("1", "2") else None for vote in votes]


def judge_annotator_agreement(ratings: Ratings, verdicts: Sequence[Hashable | None]) -> float:
    """How often the judge's verdict equals one annotator's vote, over all (item, vote) pairs.

    ``Σ_i #{votes of i equal to verdict_i} / Σ_i #{votes of i}`` over items with a verdict and at
    least two votes (the items :func:`pairwise_agreement` uses), so the two are read side by
    side: the judge against a single human, and a human against another human. NaN when empty.

    Examples:
        >>> judge_annotator_agreement([["1", "1", "2"], ["2", "2"]], ["1", "1"])
        0.4
    """
    agreeing = total = 0
    for votes, verdict in zip(ratings, verdicts, strict=True):
        present = [vote for vote in votes if vote is not None]
        if verdict is None or len(present) < 2:
            continue
        agreeing += sum(vote == verdict for vote in present)
        total += len(present)
    return agreeing / total if total else float("nan")


def annotator_agreement(
    ratings: Ratings, verdicts: Sequence[Hashable | None] | None = None
) -> dict[str, float | int]:
    """Human–human agreement (and judge–human, given verdicts) with three and two options.

    Three options: the labels ``"1"``, ``"2"``, ``"tie"`` as voted. Two options: tie votes
    dropped (and, for the judge, tie verdicts), so only decisive votes are compared.

    Returns:
        ``items`` (with at least two votes), ``annotators`` (the most votes on one item) and,
        for each suffix ``_3`` and ``_2``: ``items`` with two votes, ``pairwise_agreement``,
        ``fleiss_kappa``, ``krippendorff_alpha``, and with verdicts ``judge_annotator_agreement``.
    """
    row: dict[str, float | int] = {
        "annotators": max((sum(v is not None for v in votes) for votes in ratings), default=0),
    }
    for suffix, votes in (("_3", [list(v) for v in ratings]), ("_2", [_two_option(v) for v in ratings])):
        row[f"items{suffix}"] = len(_votes(votes))
        row[f"pairwise_agreement{suffix}"] = pairwise_agreement(votes)
        row[f"fleiss_kappa{suffix}"] = fleiss_kappa(votes)
        row[f"krippendorff_alpha{suffix}"] = krippendorff_alpha_nominal(votes)
        if verdicts is not None:
            judged = list(verdicts) if suffix == "_3" else _two_option(verdicts)
            row[f"judge_annotator_agreement{suffix}"] = judge_annotator_agreement(votes, judged)
    return row


# ---------------------------------------------------------------------- interval data and item cells


def _numeric_votes(ratings: Sequence[Sequence[float | None]]) -> list[list[float]]:
    """Each item's present numeric votes, items with at least two of them."""
    items = [[float(vote) for vote in item if vote is not None] for item in ratings]
    return [item for item in items if len(item) >= 2]


def nominal_cells(ratings: Ratings, labels: Sequence[Hashable] | None = None) -> np.ndarray:
    """One row of additive counts per item with at least two votes, for nominal agreement.

    Row ``i`` is ``[P_i, 1, a_i, t_i, d_i, n_i1, ..., n_iK]``: with ``n_ik`` the item's votes for
    label ``k`` and ``n_i`` its votes, ``a_i = Σ_k n_ik (n_ik − 1)`` (agreeing ordered pairs),
    ``t_i = n_i (n_i − 1)`` (all ordered pairs), ``P_i = a_i / t_i``, and
    ``d_i = (n_i² − Σ_k n_ik²) / (n_i − 1)`` (the item's off-diagonal share of Krippendorff's
    coincidence matrix). Summing rows (over all items, or over a bootstrap resample) gives what
    :func:`fleiss_kappa_from_cells`, :func:`pairwise_agreement_from_cells` and
    :func:`krippendorff_alpha_nominal_from_cells` need.

    Args:
        ratings: One list of votes per item (``None`` for a missing vote).
        labels: The label order of the ``n_ik`` columns (default: the labels seen, sorted as text).

    Examples:
        >>> nominal_cells([["1", "1", "2"], ["2", None]]).tolist()
        [[0.3333333333333333, 1.0, 2.0, 6.0, 2.0, 2.0, 1.0]]
    """
    items = _votes(ratings)
    order = list(labels) if labels is not None else sorted({v for item in items for v in item}, key=str)
    index = {label: k for k, label in enumerate(order)}
    cells = np.zeros((len(items), 5 + len(order)))
    for row, item in enumerate(items):
        counts = np.zeros(len(order))
        for vote in item:
            counts[index[vote]] += 1
        n = float(len(item))
        agreeing = float((counts * (counts - 1)).sum())
        cells[row, :5] = [
            agreeing / (n * (n - 1)),
            1.0,
            agreeing,
            n * (n - 1),
            (n * n - (counts**2).sum()) / (n - 1),
        ]
        cells[row, 5:] = counts
    return cells


def fleiss_kappa_from_cells(sums: np.ndarray) -> np.ndarray:
    """Fleiss' κ of summed :func:`nominal_cells` rows (the last axis; any leading axes).

    ``P̄ = Σ_i P_i / Σ_i 1``, ``p_k = Σ_i n_ik / Σ_i n_i``, ``P_e = Σ_k p_k²`` and
    ``κ = (P̄ − P_e) / (1 − P_e)``, as :func:`fleiss_kappa`; NaN where ``P_e = 1`` or no item.
    """
    sums = np.asarray(sums, dtype=float)
    observed = ratio(sums[..., 0], sums[..., 1])
    totals = sums[..., 5:]
    votes = totals.sum(axis=-1)
    shares = totals / np.where(votes > 0, votes, 1.0)[..., None]
    expected = (shares**2).sum(axis=-1)
    kappa = ratio(observed - expected, 1.0 - expected)
    return np.where((votes > 0) & (expected < 1.0 - 1e-12), kappa, np.nan)


def pairwise_agreement_from_cells(sums: np.ndarray) -> np.ndarray:
    """Pairwise percent agreement ``Σ_i a_i / Σ_i t_i`` of summed :func:`nominal_cells` rows."""
    sums = np.asarray(sums, dtype=float)
    return ratio(sums[..., 2], sums[..., 3])


def krippendorff_alpha_nominal_from_cells(sums: np.ndarray) -> np.ndarray:
    """Krippendorff's nominal α of summed :func:`nominal_cells` rows.

    With ``n_c = Σ_i n_ic`` and ``n = Σ_c n_c``: ``α = 1 − Σ_i d_i / ((n² − Σ_c n_c²) / (n − 1))``,
    as :func:`krippendorff_alpha_nominal`; NaN where every vote is one label or ``n ≤ 1``.
    """
    sums = np.asarray(sums, dtype=float)
    totals = sums[..., 5:]
    n = totals.sum(axis=-1)
    expected = ratio(n * n - (totals**2).sum(axis=-1), n - 1.0)
    alpha = 1.0 - ratio(sums[..., 4], expected)
    return np.where((n > 1) & (expected > 1e-12), alpha, np.nan)


def interval_cells(ratings: Sequence[Sequence[float | None]]) -> np.ndarray:
    """One row of additive sums per item with at least two numeric votes, for interval agreement.

    Row ``i`` is ``[d_i, m_i, s1_i, s2_i, sd_i, 1]``: the item's ``m_i`` votes ``x``, their sum
    ``s1_i = Σ x`` and sum of squares ``s2_i = Σ x²``, ``d_i = Σ_{u≠v} (x_u − x_v)² / (m_i − 1)``
    (over ordered pairs of its votes), and ``sd_i`` their sample standard deviation.

    Examples:
        >>> interval_cells([[1, 3, None], [2]]).tolist()
        [[8.0, 2.0, 4.0, 10.0, 1.4142135623730951, 1.0]]
    """
    items = _numeric_votes(ratings)
    cells = np.zeros((len(items), 6))
    for row, item in enumerate(items):
        values = np.asarray(item)
        m = float(len(values))
        sample_variance = float(values.var(ddof=1))
        cells[row] = [
            2.0 * m * sample_variance,
            m,
            values.sum(),
            (values**2).sum(),
            sample_variance**0.5,
            1.0,
        ]
    return cells


def krippendorff_alpha_interval_from_cells(sums: np.ndarray) -> np.ndarray:
    """Krippendorff's interval α of summed :func:`interval_cells` rows.

    With ``n = Σ_i m_i``, ``S1 = Σ_i s1_i`` and ``S2 = Σ_i s2_i``: the observed disagreement is
    ``D_o = Σ_i d_i / n`` and the expected one, over all ordered pairs of pairable votes,
    ``D_e = 2 (n S2 − S1²) / (n (n − 1))``; ``α = 1 − D_o / D_e`` (Krippendorff 2011, with the
    squared difference as the interval metric). NaN where every vote is the same number.
    """
    sums = np.asarray(sums, dtype=float)
    n = sums[..., 1]
    spread = 2.0 * (n * sums[..., 3] - sums[..., 2] ** 2)
    alpha = 1.0 - ratio((n - 1.0) * sums[..., 0], spread)
    return np.where((n > 1) & (spread > 1e-9 * np.maximum(1.0, n * sums[..., 3])), alpha, np.nan)


def mean_item_sd_from_cells(sums: np.ndarray) -> np.ndarray:
    """The mean within-item standard deviation ``Σ_i sd_i / Σ_i 1`` of summed :func:`interval_cells` rows."""
    sums = np.asarray(sums, dtype=float)
    return ratio(sums[..., 4], sums[..., 5])


def krippendorff_alpha_interval(ratings: Sequence[Sequence[float | None]]) -> float:
    """Krippendorff's α for interval data (numbers; missing votes allowed).

    ``α = 1 − D_o / D_e`` with ``δ(c, k) = (c − k)²``:
    ``D_o = (1/n) Σ_i Σ_{u≠v} (x_iu − x_iv)² / (m_i − 1)`` over the ordered pairs of each item's
    ``m_i ≥ 2`` votes, and ``D_e = (1 / (n (n − 1))) Σ_{u≠v} (x_u − x_v)²`` over all ordered
    pairs of the ``n`` pairable votes (Krippendorff 2011, "Computing Krippendorff's
    Alpha-Reliability"). NaN when no item has two votes or every vote is the same number.

    Examples:
        >>> round(krippendorff_alpha_interval([[1, 1, 2], [2, 2, 2], [1, 1, 1]]), 4)
        0.6
    """
    cells = interval_cells(ratings)
    if not len(cells):
        return float("nan")
    return float(krippendorff_alpha_interval_from_cells(cells.sum(axis=0)))


def mean_item_sd(ratings: Sequence[Sequence[float | None]]) -> float:
    """The mean, over items with at least two numeric votes, of their votes' sample standard
    deviation ``sqrt(Σ (x − x̄)² / (m_i − 1))``: how far one item's scores spread. NaN without items.

    Examples:
        >>> mean_item_sd([[1, 3], [2, 2, 2], [5]])
        0.7071067811865476
    """
    cells = interval_cells(ratings)
    return float(cells[:, 4].mean()) if len(cells) else float("nan")
