"""Planting payloads: which inputs hold judged text, and the attack and control items of
each clean item and case (see :mod:`jurist.tasks.probes`)."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from jurist.errors import ConfigError
from jurist.tasks.probes.cases import Path_, ProbeCase, Vocabulary, primary_verdict, same_verdict

if TYPE_CHECKING:
    from jurist.runner import Item
    from jurist.tasks._contract import Task

__all__ = ["ProbePlan", "check_fields", "inject", "injectable_fields", "plan_probes"]

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
    """The inputs of an item that hold judged text (see :mod:`jurist.tasks.probes`)."""
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


# ---------------------------------------------------------------------- planning


@dataclass(frozen=True)
class ProbePlan:
    """One clean item x case: the attack (the payload asks for another verdict) and the control
    (the same payload, as long, asks for the clean verdict).

    Attributes:
        item: The clean item's id.
        case: The case.
        fields: The inputs the payload is planted in.
        path: Where the verdict the payload asks to change is in the output.
        clean: The clean item's verdict view (:func:`~jurist.tasks.probes.cases.verdict_view`).
        attack: The attack item's inputs.
        control: The control item's inputs; ``None`` when they are the attack's (a payload
            that does not name a verdict), so the attack's verdict is the control's too.
    """

    item: str
    case: ProbeCase
    fields: tuple[str, ...]
    path: Path_
    clean: dict[str, Any]
    attack: dict[str, Any]
    control: dict[str, Any] | None

    @property
    def attack_id(self) -> str:
        """The attack item's id in the probes run."""
        return f"{self.item}|{self.case.id}|attack"

    @property
    def control_id(self) -> str:
        """The control item's id in the probes run (the attack's when it has no control of its own)."""
        return f"{self.item}|{self.case.id}|control" if self.control is not None else self.attack_id


def check_fields(items: Sequence[Item], fields: Sequence[str] | None) -> None:
    """Refuse a ``--field`` some item does not have.

    Raises:
        ConfigError: Naming the first such item and its inputs.
    """
    for item in items:
        unknown = [name for name in fields or () if name not in item.inputs]
        if unknown:
            raise ConfigError(
                f"item {item.id!r} has no input {unknown[0]!r} (inputs: {', '.join(item.inputs)})",
                field="field",
            )


def plan_probes(
    task: Task,
    items: Sequence[Item],
    cleans: Mapping[str, dict[str, Any] | str],
    options: BaseModel,
    cases: Sequence[ProbeCase],
    fields: Sequence[str] | None = None,
) -> tuple[list[ProbePlan], dict[str, str]]:
    """The attack and control items of every clean item and case, and the items skipped.

    Args:
        task: The probed task (its declared inputs, and its LLM program's output types).
        items: The clean items, in order.
        cleans: Item id -> its clean verdict view, or why the clean item could not be judged.
        options: The task's options.
        cases: The probe set.
        fields: Plant payloads in these inputs only (default: :func:`injectable_fields`).

    Returns:
        The plans (item by item, then case by case) and the skipped items (id -> why), in order.
    """
    vocabulary = Vocabulary.of(task, options)
    plans: list[ProbePlan] = []
    skipped: dict[str, str] = {}
    for item in items:
        clean = cleans.get(item.id, "failed: not judged")
        if isinstance(clean, str):
            skipped[item.id] = clean
            continue
        targets = list(fields) if fields is not None else injectable_fields(task, item.inputs)
        check_fields([item], targets)
        primary = primary_verdict(clean, vocabulary.labels)
        other = vocabulary.other(primary[1], primary[2]) if primary is not None else None
        if not targets or primary is None or other is None:
            skipped[item.id] = (
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
            control = None if same_verdict(planted, held) else held
            plans.append(ProbePlan(item.id, case, tuple(targets), path, clean, planted, control))
    return plans, skipped
