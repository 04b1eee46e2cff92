"""How people look at a task's judged items: which columns hold the verdict, the gold and the
agreement, and what label a person may give an item.

A task's ``review`` hook returns a :class:`Review`; the HTML report's item table, ``jurist
view`` (its item lists, run comparison and disagreement queue) and label export read it
instead of knowing the task. ``review.json`` in a run directory is it as JSON.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["LabelSpec", "Review"]


@dataclass(frozen=True)
class LabelSpec:
    """The label a person may give one item, saved as gold.

    Attributes:
        kind: ``choice`` (one of ``choices``), ``bool`` (yes/no), or ``score`` (a number in
            ``[low, high]``; whole numbers only when ``integer``).
        choices: The labels of a ``choice`` label.
        low: The smallest score.
        high: The largest score.
        integer: Scores are whole numbers.
    """

    kind: Literal["choice", "bool", "score"]
    choices: tuple[str, ...] = ()
    low: float | None = None
    high: float | None = None
    integer: bool = True

    def parse(self, value: Any) -> Any:
        """A person's label as the gold value it stands for.

        Raises:
            ValueError: Not a label of this kind (the message says what is accepted).
        """
        if self.kind == "choice":
            text = str(value).strip() if value is not None else ""
            if text not in self.choices:
                raise ValueError(f"label must be one of {', '.join(self.choices)}; got {value!r}")
            return text
        if self.kind == "bool":
            if isinstance(value, bool):
                return value
            text = str(value).strip().lower()
            if text in {"true", "yes", "1"}:
                return True
            if text in {"false", "no", "0"}:
                return False
            raise ValueError(f"label must be yes or no; got {value!r}")
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"label must be a number; got {value!r}") from None
        if not math.isfinite(number):
            raise ValueError(f"label must be a finite number; got {value!r}")
        if self.integer and number != int(number):
            raise ValueError(f"label must be a whole number; got {value!r}")
        if (self.low is not None and number < self.low) or (self.high is not None and number > self.high):
            raise ValueError(f"label must be in [{self.low:g}, {self.high:g}]; got {value!r}")
        return int(number) if self.integer else number

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "choices": list(self.choices),
            "low": self.low,
            "high": self.high,
            "integer": self.integer,
        }

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> LabelSpec:
        return cls(
            kind=value["kind"],
            choices=tuple(value.get("choices") or ()),
            low=value.get("low"),
            high=value.get("high"),
            integer=bool(value.get("integer", True)),
        )


@dataclass(frozen=True)
class Review:
    """The columns of a task's per-item table that people review.

    Every name is a column of the per-item table (``items.parquet``) or ``None`` when the
    task has no such column.

    Attributes:
        verdict: The judge's verdict.
        gold: The gold verdict (present when the judged data carries gold).
        agrees: A boolean column: the verdict agrees with the gold (missing when either is).
        confidence: The judge's confidence in its verdict, a probability in [0, 1].
        label: The label a person may set on an item (``None``: items cannot be labelled,
            e.g. when the gold is a structure rather than one value).
        columns: Further columns worth showing in item tables, in order.
    """

    verdict: str | None = None
    gold: str | None = None
    agrees: str | None = None
    confidence: str | None = None
    label: LabelSpec | None = None
    columns: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "gold": self.gold,
            "agrees": self.agrees,
            "confidence": self.confidence,
            "label": self.label.to_json() if self.label else None,
            "columns": list(self.columns),
        }

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> Review:
        label = value.get("label")
        return cls(
            verdict=value.get("verdict"),
            gold=value.get("gold"),
            agrees=value.get("agrees"),
            confidence=value.get("confidence"),
            label=LabelSpec.from_json(label) if label else None,
            columns=tuple(value.get("columns") or ()),
        )
