"""Judging a few rows: the first N (``--limit``) or a seeded random sample of N (``--sample``).

A :class:`Selection` picks among a dataset's **units**, not its items: a task whose verdict
is derived from several items (a comparison asked in both orders,
:meth:`jurist.tasks.Task.panel_verdicts`) keeps a unit's items together; for other tasks each
item is its own unit. The judging loop (:func:`jurist.tasks._contract.run_judgment`) applies
it for every task, juror, repeat and cascade stage, and records it in the run's manifest
(``dataset.selection``), so a run directory is resumed only with the same selection.

Also here: the count of blank judged inputs (an input whose text is empty or only
whitespace), which the judging loop records and warns about.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from jurist.errors import ConfigError

if TYPE_CHECKING:
    from pydantic import BaseModel

    from jurist.runner import Item
    from jurist.tasks._unit_verdicts import UnitVerdicts


class _Units(Protocol):
    """What a selection needs of a task (:meth:`jurist.tasks.Task.panel_verdicts`)."""

    def panel_verdicts(self, options: BaseModel) -> UnitVerdicts | None: ...


__all__ = ["SELECTED", "Selection", "blank_inputs", "blank_warning", "judged_description", "selection_of"]

SELECTED = "selection"
"""The key of the manifest's ``dataset`` (and of a scored table's ``attrs``) that records a selection."""


@dataclass(frozen=True)
class Selection:
    """Which rows of the data a run judges: the first ``limit`` units, or ``sample`` units
    drawn at random with ``seed`` (the same seed draws the same units of the same data)."""

    limit: int | None = None
    sample: int | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        if self.limit is not None and self.sample is not None:
            raise ConfigError("give --limit or --sample, not both", field="limit")
        for name in ("limit", "sample"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ConfigError(f"must be a whole number of rows, 1 or more (got {value!r})", field=name)

    def record(self) -> dict[str, int]:
        """What the manifest records: ``{"limit": N}`` or ``{"sample": N, "seed": S}``."""
        if self.limit is not None:
            return {"limit": self.limit}
        return {"sample": int(self.sample or 0), "seed": self.seed}

    def choose(self, task: _Units, dataset: Any, options: BaseModel, items: Sequence[Item]) -> list[Item]:
        """The selected items, in the data's order: whole units (see the module docstring)."""
        rule = task.panel_verdicts(options)
        units: list[tuple[str, ...]]
        if rule is None:
            units = [(item.id,) for item in items]
        else:
            present = {item.id for item in items}
            units = [ids for ids in rule.units(dataset).values() if not present.isdisjoint(ids)]
        if self.limit is not None:
            chosen = units[: self.limit]
        else:
            count = min(int(self.sample or 0), len(units))
            picked = sorted(random.Random(self.seed).sample(range(len(units)), count))
            chosen = [units[index] for index in picked]
        wanted = {item_id for unit in chosen for item_id in unit}
        return [item for item in items if item.id in wanted]


def selection_of(
    limit: int | None = None, sample: int | None = None, seed: int | None = None
) -> Selection | None:
    """The selection the options ``limit``, ``sample`` and ``seed`` ask for (``None``: every row).

    Raises:
        ConfigError: Both ``limit`` and ``sample``, ``seed`` without ``sample``, or a count below 1.
    """
    if seed is not None and sample is None:
        raise ConfigError("--seed draws a --sample; give --sample N too", field="seed")
    if limit is None and sample is None:
        return None
    return Selection(limit=limit, sample=sample, seed=0 if seed is None else seed)


def _blank(value: Any) -> bool:
    return isinstance(value, str) and not value.strip()


def blank_inputs(items: Iterable[Item], optional: Collection[str] = ()) -> dict[str, int]:
    """Input field -> how many of ``items`` have a blank value for it (empty or only
    whitespace text); fields without a blank value, and ``optional`` fields (blank by design,
    :attr:`jurist.tasks.Task.optional_inputs`), are left out."""
    counts: dict[str, int] = {}
    for item in items:
        if not item.record_inputs:
            continue
        for name, value in item.inputs.items():
            if name not in optional and _blank(value):
                counts[name] = counts.get(name, 0) + 1
    return dict(sorted(counts.items()))


def blank_warning(counts: Mapping[str, int]) -> str | None:
    """The one line that warns of blank inputs: ``warning: 3 items have a blank 'answer'``."""
    if not counts:
        return None
    parts = [
        f"{count} item{'' if count == 1 else 's'} {'has' if count == 1 else 'have'} a blank {name!r}"
        for name, count in counts.items()
    ]
    return "warning: " + "; ".join(parts) + " (judged as given)"


def judged_description(
    description: Mapping[str, Any],
    items: Iterable[Item],
    select: Selection | None,
    optional: Collection[str] = (),
) -> dict[str, Any]:
    """A dataset's description (``describe()``) as a run of ``items`` records it: with the
    ``selection`` that picked them (if any) and the count of their blank inputs (if any;
    ``optional`` fields, blank by design, not counted)."""
    described = dict(description)
    if select is not None:
        described[SELECTED] = select.record()
    blanks = blank_inputs(items, optional)
    if blanks:
        described["blank_inputs"] = blanks
    return described
