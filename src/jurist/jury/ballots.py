"""What each member of a panel voted, and what the panel's run records per item from it.

A **ballot** is one vote of the panel: on an item, when the task's verdict is an output field,
or on a unit of items, when the task derives its verdict from several items' outputs
(:meth:`jurist.tasks.Task.panel_verdicts`, e.g. a comparison asked in both orders). Each
member's vote on a unit is the task's verdict of that member's outputs for the unit's items; a
member with no verdict there (an item failed) casts no vote.

On a unit, a vote without a winner (:attr:`Decision.tie <jurist.jury.aggregate.Decision>`)
gives the task's ``no_decision`` verdict instead of the first voter's. The panel's run keeps,
for each item of the unit, the output of a member whose verdict is the panel's (the earliest in
panel order); when no member voted for it (e.g. a tie between ``1`` and ``2``), the first mix of
the voters' outputs, item by item in panel order, whose derived verdict is the panel's (for a
comparison: one voter's first order with another's swapped order). Each item records whose
output it holds (``source``), so the task scores the panel's verdicts with its own metrics.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from jurist.jury.aggregate import Vote, decide
from jurist.jury.derived_run import Outcome
from jurist.jury.panel import Panel
from jurist.schemas import ItemResult, Usage
from jurist.tasks._item_labels import ItemLabels
from jurist.tasks._unit_verdicts import UnitVerdicts

__all__ = ["Ballot", "LabelBallot", "PanelOutcome", "item_outcome", "labelled_outcome", "unit_outcomes"]

Results = Mapping[str, Mapping[str, ItemResult]]
"""Member name -> item id -> its recorded result."""
Outputs = list[dict[str, Any] | None]
"""One member's outputs for a unit's items (``None``: the item failed)."""


@dataclass
class PanelOutcome(Outcome):
    """What the panel's run records for one item (a failed item: no member voted)."""

    error_type: ClassVar[str] = "no_votes"


@dataclass(frozen=True)
class Ballot:
    """One vote of the panel.

    Attributes:
        id: The item's id, or the unit's.
        votes: Member -> its verdict (``None``: it failed), in panel order.
        tie: No verdict won: member order decided it, or (on a unit) the task's ``no_decision``.
    """

    id: str
    votes: dict[str, Any]
    tie: bool


@dataclass(frozen=True)
class _Spent:
    raw: list[str]
    usage: Usage
    attempts: int
    latency_s: float


def _spent(item_id: str, panel: Panel, results: Results) -> _Spent:
    """The raw answers, usage and attempts of every member on an item, and the slowest latency."""
    raw: list[str] = []
    usage, attempts, latency = Usage(), 0, 0.0
    for member in panel.members:
        result = results[member.name].get(item_id)
        if result is not None:
            usage = usage.add(result.usage)
            raw += result.raw
            attempts += result.attempts
            latency = max(latency, result.latency_s)
    return _Spent(raw, usage, attempts, latency)


def _made(item_id: str, output: dict[str, Any] | None, error: str | None, spent: _Spent) -> PanelOutcome:
    return PanelOutcome(item_id, output, error, spent.raw, spent.usage, spent.attempts, spent.latency_s)


def _nobody(panel: Panel, errors: Sequence[str]) -> str:
    return f"every {panel.member_word} failed on this item ({'; '.join(errors)})"


def _record(panel: Panel, ballot: Ballot, voters: int, source: str) -> dict[str, Any]:
    return {
        "aggregate": panel.aggregate,
        "votes": ballot.votes,
        "voters": voters,
        "source": source,
        "tie": ballot.tie,
    }


def _why(result: ItemResult | None) -> str:
    if result is None:
        return "not judged"
    return result.error or "no verdict"


def item_outcome(item_id: str, panel: Panel, verdict: str, results: Results) -> tuple[PanelOutcome, Ballot]:
    """The panel's vote on one item's ``verdict`` output field, and what its run records."""
    spent = _spent(item_id, panel, results)
    votes: list[Vote] = []
    errors = []
    for member in panel.members:
        result = results[member.name].get(item_id)
        value = (result.output or {}).get(verdict) if result is not None and result.status == "ok" else None
        if value is None:
            errors.append(f"{member.name}: {_why(result)}")
        else:
            votes.append(Vote(member.name, value, member.weight))
    cast = {vote.member: vote.value for vote in votes}
    by_member = {member.name: cast.get(member.name) for member in panel.members}
    if not votes:
        return _made(item_id, None, _nobody(panel, errors), spent), Ballot(item_id, by_member, False)
    decision = decide(votes, panel.aggregate)
    ballot = Ballot(item_id, by_member, decision.tie)
    source = results[decision.source][item_id]
    assert source.output is not None
    output = {**source.output, verdict: decision.verdict}
    output[panel.kind] = _record(panel, ballot, len(votes), decision.source)
    return _made(item_id, output, None, spent), ballot


def _outputs(member: str, item_ids: Sequence[str], results: Results) -> Outputs:
    found = [results[member].get(item_id) for item_id in item_ids]
    return [r.output if r is not None and r.status == "ok" else None for r in found]


def _sources(
    verdict: Any, votes: Sequence[Vote], outputs: Mapping[str, Outputs], rule: UnitVerdicts
) -> tuple[str, ...] | None:
    """Whose output each item of the unit keeps so that the unit's verdict is ``verdict``."""
    size = len(next(iter(outputs.values())))
    for vote in votes:
        if type(vote.value) is type(verdict) and vote.value == verdict:
            return (vote.member,) * size
    voters = [vote.member for vote in votes]
    for mix in itertools.product(voters, repeat=size):
        mixed = [outputs[member][index] for index, member in enumerate(mix)]
        if rule.verdict(mixed) == verdict:
            return mix
    return None


def unit_outcomes(
    unit_id: str, item_ids: Sequence[str], panel: Panel, rule: UnitVerdicts, results: Results
) -> tuple[list[PanelOutcome], Ballot]:
    """The panel's vote on one unit of items (each member's verdict derived by ``rule``), and what
    its run records for each of the unit's items."""
    spent = {item_id: _spent(item_id, panel, results) for item_id in item_ids}
    votes: list[Vote] = []
    outputs: dict[str, Outputs] = {}
    errors = []
    for member in panel.members:
        found = _outputs(member.name, item_ids, results)
        value = rule.verdict(found)
        if value is None:
            failed = [item for item, output in zip(item_ids, found, strict=True) if output is None]
            errors.append(
                f"{member.name}: {_why(results[member.name].get(failed[0])) if failed else 'no verdict'}"
            )
            continue
        votes.append(Vote(member.name, value, member.weight))
        outputs[member.name] = found
    cast = {vote.member: vote.value for vote in votes}
    ballot = Ballot(unit_id, {member.name: cast.get(member.name) for member in panel.members}, False)
    if not votes:
        message = _nobody(panel, errors)
        return [_made(item_id, None, message, spent[item_id]) for item_id in item_ids], ballot
    decision = decide(votes, panel.aggregate)
    ballot = Ballot(unit_id, ballot.votes, decision.tie)
    verdict = rule.no_decision if decision.tie else decision.verdict
    sources = _sources(verdict, votes, outputs, rule)
    if sources is None:
        message = f"the {panel.member_word}s' answers cannot give {verdict!r}, the verdict of a tied vote"
        return [_made(item_id, None, message, spent[item_id]) for item_id in item_ids], ballot
    outcomes = []
    for index, (item_id, source) in enumerate(zip(item_ids, sources, strict=True)):
        output = dict(outputs[source][index] or {})
        record = _record(panel, ballot, len(votes), source)
        output[panel.kind] = {**record, "unit": unit_id, "verdict": verdict}
        outcomes.append(_made(item_id, output, None, spent[item_id]))
    return outcomes, ballot


@dataclass(frozen=True)
class LabelBallot:
    """The panel's votes on one item whose output holds many labels
    (:meth:`jurist.tasks.Task.panel_labels`): one vote per key of each label kind.

    Attributes:
        id: The item's id.
        voters: The members that answered the item, in panel order.
        labels: Label kind -> key -> each member's label in panel order (``None``: no vote).
        ties: Label kind -> the keys member order decided (no majority, or a tie for the most).
    """

    id: str
    voters: tuple[str, ...]
    labels: dict[str, dict[str, list[Any]]]
    ties: dict[str, list[str]]

    def split(self) -> dict[str, dict[str, list[Any]]]:
        """The votes of the keys the voters did not label alike (label kind -> key -> votes)."""
        found: dict[str, dict[str, list[Any]]] = {}
        for kind, keys in self.labels.items():
            for key, votes in keys.items():
                if len({(type(v).__name__, v) for v in votes if v is not None}) > 1:
                    found.setdefault(kind, {})[key] = votes
        return found


def labelled_outcome(
    item_id: str, inputs: Mapping[str, Any], panel: Panel, rule: ItemLabels, results: Results
) -> tuple[PanelOutcome, LabelBallot]:
    """The panel's vote on each labelled key of one item (each member's labels read by
    ``rule``), and what its run records: the task's output composed from the voted labels, with
    the votes per key under the panel's kind (``members``, ``voters``, ``labels``: kind -> key ->
    votes in member order, ``ties``: kind -> keys member order decided, ``aggregate``)."""
    spent = _spent(item_id, panel, results)
    answered: dict[str, dict[str, Any]] = {}
    errors = []
    for member in panel.members:
        result = results[member.name].get(item_id)
        if result is not None and result.status == "ok" and result.output is not None:
            answered[member.name] = result.output
        else:
            errors.append(f"{member.name}: {_why(result)}")
    voters = tuple(answered)
    if not answered:
        return _made(item_id, None, _nobody(panel, errors), spent), LabelBallot(item_id, voters, {}, {})
    given = {name: rule.labels(inputs, output) for name, output in answered.items()}
    votes: dict[str, dict[str, list[Any]]] = {}
    voted: dict[str, dict[str, Any]] = {}
    ties: dict[str, list[str]] = {}
    for kind in rule.kinds:
        votes[kind], voted[kind], ties[kind] = {}, {}, []
        keys: list[str] = []
        for labels in given.values():
            keys += [key for key in labels.get(kind, {}) if key not in keys]
        for key in keys:
            row = [given[m.name].get(kind, {}).get(key) if m.name in given else None for m in panel.members]
            cast = [
                Vote(m.name, v, m.weight) for m, v in zip(panel.members, row, strict=True) if v is not None
            ]
            votes[kind][key] = row
            if not cast:
                continue
            decision = decide(cast, panel.aggregate)
            voted[kind][key] = decision.verdict
            if decision.tie:
                ties[kind].append(key)
    ballot = LabelBallot(item_id, voters, votes, ties)
    output = rule.compose(inputs, voted, list(answered.values()))
    output[panel.kind] = {
        "aggregate": panel.aggregate,
        "members": [member.name for member in panel.members],
        "voters": len(voters),
        "labels": votes,
        "ties": {kind: keys for kind, keys in ties.items() if keys},
    }
    return _made(item_id, output, None, spent), ballot
