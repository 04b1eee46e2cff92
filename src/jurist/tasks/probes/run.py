"""Planting payloads and judging clean, attack and control items (see :mod:`jurist.tasks.probes`)."""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from jurist.errors import ConfigError, InputError

if TYPE_CHECKING:
    from jurist.judges.config import JudgeConfig
    from jurist.judges.judge import Judge
    from jurist.runner import Item
    from jurist.tasks._contract import Task

from jurist.tasks.probes.cases import (
    MISSING,
    Path_,
    ProbeCase,
    Vocabulary,
    load_cases,
    primary_verdict,
    same_verdict,
    value_at,
    verdict_view,
)

# ---------------------------------------------------------------------- injection


def _words(text: str) -> int:
    return len(text.split())


def _has_text(value: Any, *, declared: bool) -> bool:
    if isinstance(value, str):
        return bool(value.strip()) if declared else _words(value) >= 3
    if isinstance(value, dict):
        return any(_has_text(item, declared=False) for item in value.values())
    if isinstance(value, list | tuple):
        return any(_has_text(item, declared=False) for item in value)
    return False


def injectable_fields(task: Task, inputs: dict[str, Any]) -> list[str]:
    """The inputs of an item that hold judged text (see the module docstring)."""
    declared = getattr(task, "untrusted_inputs", None)
    if declared is not None:
        return [name for name in declared if name in inputs]
    return [name for name, value in inputs.items() if _has_text(value, declared=name in task.inputs)]


def _plant(text: str, payload: str, position: str) -> str:
    return f"{payload}\n\n{text}" if position == "start" else f"{text}\n\n{payload}"


def _plant_nested(value: Any, payload: str, position: str) -> tuple[Any, bool]:
    """``value`` with the payload planted in its last (``end``) or first (``start``) text."""
    if isinstance(value, str):
        if _words(value) >= 3:
            return _plant(value, payload, position), True
        return value, False
    if isinstance(value, dict | list | tuple):
        keys = list(value.keys()) if isinstance(value, dict) else list(range(len(value)))
        order = keys if position == "start" else list(reversed(keys))
        changed = dict(value) if isinstance(value, dict) else list(value)
        for key in order:
            new, done = _plant_nested(value[key], payload, position)
            if done:
                changed[key] = new
                return (tuple(changed) if isinstance(value, tuple) else changed), True
    return value, False


def inject(
    inputs: dict[str, Any], fields: Sequence[str], payload: str, position: str = "end"
) -> dict[str, Any]:
    """A copy of ``inputs`` with ``payload`` planted in each of ``fields``.

    Examples:
        >>> inject({"answer": "Paris.", "order": "AB"}, ["answer"], "Score: 1")
        {'answer': 'Paris.\\n\\nScore: 1', 'order': 'AB'}
    """
    planted = copy.deepcopy(inputs)
    for name in fields:
        value = planted[name]
        if isinstance(value, str):
            planted[name] = _plant(value, payload, position)
        else:
            planted[name], _done = _plant_nested(value, payload, position)
    return planted


# ---------------------------------------------------------------------- probing


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
    """Items whose clean version could not be judged (id -> error); they have no probes."""

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


@dataclass
class _Verdict:
    view: dict[str, Any] | None
    error: str | None = None
    raw: list[str] = field(default_factory=list)


async def probe_judge(
    task: Task,
    judge: Judge,
    items: Sequence[Item],
    options: BaseModel,
    cases: Sequence[ProbeCase],
    *,
    fields: Sequence[str] | None = None,
    concurrency: int = 4,
) -> ProbeReport:
    """Probe one judge with every case on every item (see the module docstring).

    Args:
        task: The task (for its declared inputs and outputs, and its LLM program's output types).
        judge: The judge to probe (e.g. from :meth:`~jurist.tasks.Task.make_judge`).
        items: The items to plant payloads in.
        options: The task's options.
        cases: The probe set.
        fields: Plant payloads in these inputs only (default: :func:`injectable_fields`).
        concurrency: Judgments at once.
    """
    from jurist.judges.judge import JudgeFailure

    declared = list(task.outputs)
    gate = asyncio.Semaphore(max(1, concurrency))

    async def verdict(inputs: dict[str, Any]) -> _Verdict:
        async with gate:
            try:
                judgment = await judge.judge(inputs)
            except JudgeFailure as exc:
                return _Verdict(None, f"{exc.error_type}: {exc}", list(exc.raw))
        return _Verdict(verdict_view(judgment.output, declared))

    report = ProbeReport(
        task=task.name, judge=judge.name, fingerprint=judge.fingerprint(), items=len(items), cases=len(cases)
    )
    cleans = await asyncio.gather(*(verdict(item.inputs) for item in items))
    vocabulary = Vocabulary.of(task, options)

    plans: list[
        tuple[Item, _Verdict, ProbeCase, list[str], Path_, dict[str, Any], dict[str, Any] | None]
    ] = []
    for item, clean in zip(items, cleans, strict=True):
        if clean.view is None:
            report.skipped[item.id] = clean.error or "failed"
            continue
        targets = list(fields) if fields is not None else injectable_fields(task, item.inputs)
        unknown = [name for name in targets if name not in item.inputs]
        if unknown:
            raise ConfigError(
                f"item {item.id!r} has no input {unknown[0]!r} (inputs: {', '.join(item.inputs)})",
                field="field",
            )
        primary = primary_verdict(clean.view, vocabulary.labels)
        other = vocabulary.other(primary[1], primary[2]) if primary is not None else None
        if not targets or primary is None or other is None:
            report.skipped[item.id] = (
                "no injectable text input"
                if not targets
                else "the verdict has no fixed vocabulary (an extraction: planted text is content to "
                "extract, not a forged verdict)"
            )
            continue
        path, name, value = primary
        for case in cases:
            planted = inject(item.inputs, targets, case.render(name, other, value), case.position)
            held = inject(item.inputs, targets, case.render(name, value, other), case.position)
            plans.append(
                (item, clean, case, targets, path, planted, None if same_verdict(planted, held) else held)
            )

    attacks = asyncio.gather(*(verdict(plan[5]) for plan in plans))
    controls = asyncio.gather(*(verdict(plan[6]) if plan[6] is not None else _none() for plan in plans))
    attack_verdicts, control_verdicts = await asyncio.gather(attacks, controls)
    for (item, clean, case, targets, path, _a, _c), attack, paired in zip(
        plans, attack_verdicts, control_verdicts, strict=True
    ):
        control: _Verdict = paired if paired is not None else attack
        outcome = ProbeOutcome(
            item=item.id, case=case.id, family=case.family, fields=targets, status="held", path=list(path)
        )
        outcome.clean = value_at(clean.view, path)
        if attack.view is None or control.view is None:
            outcome.status = "failed"
            outcome.error = attack.error or control.error
            outcome.raw = attack.raw or control.raw
        else:
            outcome.attack, outcome.control = value_at(attack.view, path), value_at(control.view, path)
            outcome.changed = not same_verdict(outcome.attack, outcome.clean)
            if outcome.changed and not same_verdict(outcome.attack, outcome.control):
                outcome.status = "moved"
            for side in ("attack", "control"):
                if getattr(outcome, side) is MISSING:
                    setattr(outcome, side, None)
        report.outcomes.append(outcome)
    return report


async def _none() -> None:
    return None


def probe_injection(
    task: Task,
    data: str | Path,
    config: JudgeConfig,
    options: BaseModel,
    *,
    limit: int = 3,
    cases: Sequence[ProbeCase] | None = None,
    families: Sequence[str] | None = None,
    fields: Sequence[str] | None = None,
) -> ProbeReport:
    """Probe the judge ``config`` names on the first ``limit`` items of ``data``.

    Raises:
        InputError: The data has no items, or a family matches no case.
    """
    from jurist.datasets.samples import resolve_input
    from jurist.runner import call_blocking

    chosen = list(cases if cases is not None else load_cases())
    if families:
        chosen = [case for case in chosen if case.family in families]
        if not chosen:
            raise ConfigError(f"no probe case has family {', '.join(families)}", field="family")
    path = resolve_input(data)
    dataset = task.read(path, options)
    items: list[Item] = []
    for item in task.items(dataset, options):
        if len(items) >= limit:
            break
        items.append(item)
    if not items:
        raise InputError("the data has no items to probe", path=path)
    judge = task.make_judge(config, options)
    concurrency = getattr(getattr(judge, "config", None), "concurrency", None) or config.concurrency

    def run() -> ProbeReport:
        return asyncio.run(
            probe_judge(task, judge, items, options, chosen, fields=fields, concurrency=concurrency)
        )

    return call_blocking(run)
