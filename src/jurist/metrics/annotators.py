"""Agreement among several annotators who labelled the same items (human–human agreement).

Ratings are one list of labels per item (``None`` for a missing vote); an item needs at least
two votes to say anything about agreement and is left out otherwise. Labels are nominal.

- :func:`majority_label`: the label most annotators chose, or ``None`` when the top count is shared.
- :func:`pairwise_agreement`: ``Σ_i a_i / Σ_i n_i (n_i − 1)``, where ``a_i`` counts the ordered
  pairs of distinct annotators of item ``i`` who chose the same label.
- :func:`fleiss_kappa`: Fleiss' κ, with the per-item agreement for a varying number of votes.
- :func:`krippendorff_alpha_nominal`: Krippendorff's α for nominal data (missing votes allowed).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence

__all__ = [
    "annotator_agreement",
    "fleiss_kappa",
    "judge_annotator_agreement",
    "krippendorff_alpha_nominal",
    "majority_label",
    "pairwise_agreement",
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
