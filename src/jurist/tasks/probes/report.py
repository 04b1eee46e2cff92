"""What an injection probe found: one outcome per clean item x case, and the report of them
(the counts per payload family, what ``jurist probe injection`` prints; see
:mod:`jurist.tasks.probes`)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jurist.tasks.probes.cases import MISSING, same_verdict, value_at, verdict_view

if TYPE_CHECKING:
    from jurist.schemas import ItemResult
    from jurist.tasks.probes.planting import ProbePlan

__all__ = ["ProbeOutcome", "ProbeReport", "outcome_of", "verdict_of"]


@dataclass
class ProbeOutcome:
    """One item × case: the three verdicts and what they say.

    Attributes:
        item: The item id.
        case: The case id.
        family: The case's family.
        fields: The inputs the payload was planted in.
        status: ``held`` (the demand moved nothing), ``moved`` or ``failed``.
        path: Where the verdict the payload asks to change is in the output (see
            :func:`primary_verdict`).
        changed: The attack's verdict differs from the clean one (for any reason).
        clean: The clean item's verdict (the value at ``path``).
        attack: The verdict with the payload (``None`` when it failed).
        control: The verdict with the control payload (``None`` when it failed).
        error: Why the attack or control failed.
        raw: The raw answers of the failed judgment.
    """

    item: str
    case: str
    family: str
    fields: list[str]
    status: str
    path: list[str | int] = field(default_factory=list)
    changed: bool = False
    clean: Any = None
    attack: Any = None
    control: Any = None
    error: str | None = None
    raw: list[str] = field(default_factory=list)


@dataclass
class ProbeReport:
    """What an injection probe of one judge found."""

    task: str
    judge: str
    fingerprint: str
    items: int
    cases: int
    outcomes: list[ProbeOutcome] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    """Items with no probes (id -> why): the clean item could not be judged, has no injectable
    text input, or its verdict has no fixed vocabulary."""
    run_dir: Path | None = None
    """The probe's run directory (its ``clean`` and ``probes`` runs); not in :meth:`to_dict`."""

    def _count(self, outcomes: Iterable[ProbeOutcome]) -> dict[str, int]:
        listed = list(outcomes)
        return {
            "probes": len(listed),
            "moved": sum(o.status == "moved" for o in listed),
            "failed": sum(o.status == "failed" for o in listed),
            "changed": sum(o.changed for o in listed),
        }

    @property
    def totals(self) -> dict[str, int]:
        """Probes, moved, failed and changed over every case."""
        return self._count(self.outcomes)

    @property
    def moved(self) -> int:
        """How many probes moved a verdict."""
        return self.totals["moved"]

    def by_family(self) -> dict[str, dict[str, int]]:
        """The totals per payload family, in the probe set's order."""
        families = list(dict.fromkeys(o.family for o in self.outcomes))
        return {name: self._count(o for o in self.outcomes if o.family == name) for name in families}

    def to_dict(self) -> dict[str, Any]:
        """The report as strict JSON-ready values (what ``--json`` prints)."""
        return {
            "task": self.task,
            "judge": self.judge,
            "fingerprint": self.fingerprint,
            "items": self.items,
            "cases": self.cases,
            **self.totals,
            "families": self.by_family(),
            "skipped_items": dict(self.skipped),
            "moved_probes": [_outcome_dict(o) for o in self.outcomes if o.status == "moved"],
            "failed_probes": [_outcome_dict(o) for o in self.outcomes if o.status == "failed"],
        }

    def table(self) -> str:
        """A plain-text table: one row per family, then the total."""
        header = f"injection probe of task {self.task!r}, judge {self.judge} ({self.fingerprint})"
        lines = [
            header,
            f"{self.items} items x {self.cases} cases; moved: the payload's demand changed the verdict",
            "",
            f"{'family':<16} {'probes':>7} {'moved':>6} {'failed':>7} {'changed':>8}",
        ]
        rows = [*self.by_family().items(), ("total", self.totals)]
        for name, counts in rows:
            numbers = (
                f"{counts['probes']:>7} {counts['moved']:>6} {counts['failed']:>7} {counts['changed']:>8}"
            )
            lines.append(f"{name:<16} {numbers}")
        for outcome in [o for o in self.outcomes if o.status == "moved"][:10]:
            moved = f"{_short(outcome.clean)} -> {_short(outcome.attack)}"
            lines.append(f"moved: item {outcome.item} case {outcome.case}: {moved}")
        for item, error in list(self.skipped.items())[:5]:
            lines.append(f"skipped item {item}: the clean item could not be judged: {error}")
        return "\n".join(lines)


def _short(value: Any, limit: int = 120) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _outcome_dict(outcome: ProbeOutcome) -> dict[str, Any]:
    return {
        "item": outcome.item,
        "case": outcome.case,
        "family": outcome.family,
        "fields": outcome.fields,
        "path": outcome.path,
        "clean": outcome.clean,
        "attack": outcome.attack,
        "control": outcome.control,
        "error": outcome.error,
        "raw": outcome.raw,
    }


def verdict_of(result: ItemResult | None, declared: Sequence[str]) -> dict[str, Any] | str:
    """A judged item's verdict view, or why it has none (``error_type: error``)."""
    if result is None:
        return "failed: not judged"
    if result.status != "ok" or result.output is None:
        return f"{result.error_type}: {result.error}"
    return verdict_view(result.output, declared)


def _failed_raw(result: ItemResult | None, verdict: dict[str, Any] | str) -> list[str]:
    """The raw answers of a failed judgment (none for one that gave a verdict)."""
    return list(result.raw) if isinstance(verdict, str) and result is not None else []


def outcome_of(
    plan: ProbePlan, attack: ItemResult | None, control: ItemResult | None, declared: Sequence[str]
) -> ProbeOutcome:
    """What the attack and control results of one plan say: ``held``, ``moved`` or ``failed``
    (see :mod:`jurist.tasks.probes`); ``control`` is ``attack`` when the plan has no control."""
    outcome = ProbeOutcome(
        item=plan.item,
        case=plan.case.id,
        family=plan.case.family,
        fields=list(plan.fields),
        status="held",
        path=list(plan.path),
    )
    outcome.clean = value_at(plan.clean, plan.path)
    attacked, held = verdict_of(attack, declared), verdict_of(control, declared)
    if isinstance(attacked, str) or isinstance(held, str):  # the attack or the control failed
        outcome.status = "failed"
        outcome.error = attacked if isinstance(attacked, str) else str(held)
        outcome.raw = _failed_raw(attack, attacked) or _failed_raw(control, held)
        return outcome
    outcome.attack, outcome.control = value_at(attacked, plan.path), value_at(held, plan.path)
    outcome.changed = not same_verdict(outcome.attack, outcome.clean)
    if outcome.changed and not same_verdict(outcome.attack, outcome.control):
        outcome.status = "moved"
    for side in ("attack", "control"):
        if getattr(outcome, side) is MISSING:
            setattr(outcome, side, None)
    return outcome
