"""How the votes of a panel (a jury's jurors, or one judge's repeats) make one verdict per item.

Votes come in the panel's order (the jury file's juror order; repeats 1, 2, ...); each has a
weight (1 unless the jury file gives ``weights``). Members that failed on the item cast no vote.

- ``majority``: the verdict with more than half of the (weighted) votes. Without one (a tie,
  or votes split among several verdicts) the first member in order who voted (with a weight
  above 0) decides, as a foreman would; the item records that member order decided it (``tie``).
- ``plurality``: the verdict with the most (weighted) votes; a tie for the most goes to the
  tied verdict of the earliest member who voted for one of them (``tie``).
- ``mean``: the (weighted) mean of numeric verdicts.
- ``median``: the (weighted) median of numeric verdicts: the smallest verdict whose cumulative
  weight reaches half the total, or the midpoint of two verdicts when it is exactly half
  (the usual median of an even number of equal-weight votes).

The item keeps the output of one member (``source``): one whose verdict is the panel's, or for
a mean or median the member whose verdict is closest to it (the earliest on a tie).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Decision", "Vote", "decide", "is_number", "is_one_value"]


@dataclass(frozen=True)
class Vote:
    """One member's verdict on one item, and the weight of its vote."""

    member: str
    value: Any
    weight: float = 1.0


@dataclass(frozen=True)
class Decision:
    """The panel's verdict on one item.

    Attributes:
        verdict: The panel's verdict.
        source: The member whose output the item keeps.
        tie: Member order decided it (no majority, or a tie for the most votes).
    """

    verdict: Any
    source: str
    tie: bool = False


def is_number(value: Any) -> bool:
    """A finite int or float verdict (a bool is a label, not a number)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def is_one_value(value: Any) -> bool:
    """A verdict one vote can hold: text, a bool or a finite number (not a list or a mapping)."""
    return isinstance(value, str | bool) or is_number(value)


def _key(vote: Vote) -> tuple[str, Any]:
    # True == 1 in Python: keep a bool and a number apart.
    return (type(vote.value).__name__, vote.value)


def _first_voter(votes: Sequence[Vote], keys: set[Any]) -> Vote:
    return next(vote for vote in votes if _key(vote) in keys)


def decide(votes: Sequence[Vote], aggregate: str) -> Decision:
    """The panel's verdict from the votes of the members that answered (in panel order).

    Raises:
        ValueError: No vote, an unknown aggregate, or a mean/median over a verdict that is not
            a number.

    Examples:
        >>> decide([Vote("a", "yes"), Vote("b", "no"), Vote("c", "no")], "majority")
        Decision(verdict='no', source='b', tie=False)
        >>> decide([Vote("a", "yes"), Vote("b", "no")], "majority")
        Decision(verdict='yes', source='a', tie=True)
        >>> split = [Vote("a", "x"), Vote("b", "y"), Vote("c", "y"), Vote("d", "z"), Vote("e", "z")]
        >>> decide(split, "plurality"), decide(split, "majority")
        (Decision(verdict='y', source='b', tie=True), Decision(verdict='x', source='a', tie=True))
        >>> decide([Vote("a", 1), Vote("b", 2), Vote("c", 4)], "mean")
        Decision(verdict=2.3333333333333335, source='b', tie=False)
        >>> decide([Vote("a", 1), Vote("b", 2), Vote("c", 4), Vote("d", 5)], "median")
        Decision(verdict=3.0, source='b', tie=False)
    """
    if not votes:
        raise ValueError("no member voted")
    if aggregate in ("mean", "median"):
        return _numeric(votes, aggregate)
    totals: dict[tuple[str, Any], float] = {}
    for vote in votes:
        totals[_key(vote)] = totals.get(_key(vote), 0.0) + vote.weight
    total = sum(totals.values())
    if aggregate == "majority":
        winner = [key for key, weight in totals.items() if weight > total / 2]
        if winner:
            chosen = _first_voter(votes, set(winner))
            return Decision(chosen.value, chosen.member)
        foreman = next((vote for vote in votes if vote.weight > 0), votes[0])
        return Decision(foreman.value, foreman.member, tie=True)
    if aggregate == "plurality":
        most = max(totals.values())
        leaders = {key for key, weight in totals.items() if math.isclose(weight, most)}
        chosen = _first_voter(votes, leaders)
        return Decision(chosen.value, chosen.member, tie=len(leaders) > 1)
    raise ValueError(f"unknown aggregate {aggregate!r}")


def _numeric(votes: Sequence[Vote], aggregate: str) -> Decision:
    for vote in votes:
        if not is_number(vote.value):
            raise ValueError(f"{aggregate} needs numeric verdicts; {vote.member} answered {vote.value!r}")
    weights = [vote.weight for vote in votes]
    if not any(weights):
        weights = [1.0] * len(votes)
    total = sum(weights)
    if aggregate == "mean":
        verdict = sum(w * float(v.value) for w, v in zip(weights, votes, strict=True)) / total
    else:
        ordered = sorted(zip((float(v.value) for v in votes), weights, strict=True))
        cumulative = 0.0
        verdict = ordered[-1][0]
        for index, (value, weight) in enumerate(ordered):
            cumulative += weight
            if math.isclose(cumulative, total / 2) and index + 1 < len(ordered):
                verdict = (value + ordered[index + 1][0]) / 2
                break
            if cumulative > total / 2:
                verdict = value
                break
    source = min(votes, key=lambda vote: abs(float(vote.value) - verdict))
    return Decision(verdict, source.member)
