"""The summary of a panel's votes per labelled key (:class:`~jurist.jury.ballots.LabelBallot`):
how the items' votes went, and agreement among the members per label kind.

Per label kind, agreement is computed on one row per key of every item (a document sentence's
``relevant`` label, say) and one column per member, with
:func:`~jurist.jury.agreement.agreement_figures`; its intervals resample items, each with all
its keys.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from jurist.jury.agreement import agreement_figures, member_pairs
from jurist.jury.ballots import LabelBallot

__all__ = ["label_figures", "label_votes"]


def _distinct(row: Sequence[Any]) -> int:
    return len({(type(vote).__name__, vote) for vote in row if vote is not None})


def label_votes(ballots: Sequence[LabelBallot], members: int) -> dict[str, Any]:
    """How the items' votes went: items whose every key was unanimous (every member voting),
    with a split key, with a key decided by member order, answered by only some members, and
    by none."""
    split = [bool(ballot.split()) for ballot in ballots]
    return {
        "items": len(ballots),
        "unanimous": sum(
            len(ballot.voters) == members and not is_split
            for ballot, is_split in zip(ballots, split, strict=True)
        ),
        "split": sum(split),
        "decided_by_order": sum(any(ballot.ties.values()) for ballot in ballots),
        "partial": sum(0 < len(ballot.voters) < members for ballot in ballots),
        "no_votes": sum(not ballot.voters for ballot in ballots),
        "unit": "item",
    }


def label_figures(
    ballots: Sequence[LabelBallot], kinds: Sequence[str], names: Sequence[str], agreement: str
) -> dict[str, Any]:
    """Per label kind: ``keys`` (voted on), ``unanimous`` (every member, one label), ``split``,
    ``decided_by_order``, the agreement among members under ``agreement`` (``agreement`` or
    ``self_consistency``; :func:`~jurist.jury.agreement.agreement_figures` over keys, intervals
    resampling items) and ``pairs`` (:func:`~jurist.jury.agreement.member_pairs` over keys)."""
    found: dict[str, Any] = {}
    for kind in kinds:
        matrix: list[list[Any]] = []
        groups: list[str] = []
        tied = 0
        for ballot in ballots:
            for votes in ballot.labels.get(kind, {}).values():
                matrix.append(list(votes))
                groups.append(ballot.id)
            tied += len(ballot.ties.get(kind, []))
        distinct = [_distinct(row) for row in matrix]
        found[kind] = {
            "keys": len(matrix),
            "unanimous": sum(
                d == 1 and all(vote is not None for vote in row)
                for row, d in zip(matrix, distinct, strict=True)
            ),
            "split": sum(d > 1 for d in distinct),
            "decided_by_order": tied,
            agreement: agreement_figures(matrix, groups=groups),
            "pairs": member_pairs(matrix, names),
        }
    return found
