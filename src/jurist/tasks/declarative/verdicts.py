"""Verdict values of a YAML task: validating what a judge answers and reading gold values.

A judge's verdict is validated, never repaired: an out-of-range score, a label outside the
set or a confidence outside [0, 1] raises ``ValueError`` (the runner asks again once and
then records the item as failed with the raw answer). The one normalisation is a label
written with only a different letter case or spacing (``Billing`` for ``billing``): it is
the listed label, and :func:`normalised_verdict` says what the judge wrote, so the item
records it and the summary counts it (``normalised_verdicts``). Gold values are read more
leniently, because data files spell them in many ways (``"yes"``, ``1``, ``"true"`` for a
boolean).
"""

from __future__ import annotations

import json
import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from jurist.judges.literals import listed_label
from jurist.safe_load import loads_json, quote

__all__ = [
    "Kind",
    "OutputSpec",
    "check_confidence",
    "check_verdict",
    "normalised_verdict",
    "parse_gold",
    "read_gold_value",
    "verdict_text",
]

Kind = Literal["label", "labels", "score", "bool", "pairwise"]
"""The output kinds of a YAML task."""


class OutputSpec(BaseModel):
    """What the judge answers: the ``output`` key of a task file (``docs/tasks.md``)."""

    model_config = ConfigDict(extra="forbid")

    kind: Kind
    range: tuple[int, int] | None = None
    labels: list[str] | None = None
    confidence: bool = False
    allow_tie: bool = False
    reasoning: bool = True


_TRUE = {"true", "yes", "1", "t", "y"}
_FALSE = {"false", "no", "0", "f", "n"}
_PAIRWISE_GOLD = {"a": "A", "b": "B", "tie": "tie", "1": "A", "2": "B", "0": "tie"}


def _shown(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 4] + "...'"


def normalised_verdict(output: OutputSpec, value: Any) -> tuple[Any, str | None]:
    """``(verdict, given)``: a label (or each label of a list) written with only a different
    letter case or spacing than a listed one, as the listed label, and what the judge wrote
    (``None`` when nothing was normalised). Anything else is returned as it is, for
    :func:`check_verdict` to accept or refuse.

    A label the adapter already normalised (a :class:`~jurist.judges.literals.NormalisedLabel`)
    brings what the judge wrote with it.
    """
    if output.kind in ("label", "pairwise"):
        given = getattr(value, "given", None)
        if isinstance(value, str) and isinstance(given, str):
            return str(value), given
        return value, None
    if output.kind == "labels" and isinstance(value, list | tuple):
        labels = output.labels or []
        mapped = [
            (listed_label(item, labels) or item) if isinstance(item, str) and item not in labels else item
            for item in value
        ]
        if mapped != list(value):
            return mapped, json.dumps(list(value), ensure_ascii=False)
    return value, None


def check_verdict(output: OutputSpec, value: Any) -> Any:
    """The verdict ``value`` if it is valid for ``output`` (labels kind: sorted as declared).

    Raises:
        ValueError: Wrong type, score out of range, unknown label, or ``tie`` not allowed.
    """
    kind = output.kind
    if kind == "score":
        low, high = output.range or (0, 0)
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"expected an integer score from {low} to {high}, got {value!r}")
        if not low <= value <= high:
            raise ValueError(f"score {value} is outside the range [{low}, {high}]")
        return value
    if kind == "label":
        labels = output.labels or []
        if not isinstance(value, str) or value not in labels:
            raise ValueError(f"{_shown(value)} is not one of {', '.join(labels)}")
        return value
    if kind == "labels":
        labels = output.labels or []
        if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
            raise ValueError(f"expected a list of labels from {', '.join(labels)}, got {value!r}")
        unknown = [v for v in value if v not in labels]
        if unknown:
            raise ValueError(f"{_shown(unknown[0])} is not one of {', '.join(labels)}")
        return [label for label in labels if label in value]
    if kind == "bool":
        if not isinstance(value, bool):
            raise ValueError(f"expected true or false, got {value!r}")
        return value
    allowed = ("A", "B", "tie") if output.allow_tie else ("A", "B")
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"{_shown(value)} is not one of {', '.join(allowed)}")
    return value


def check_confidence(value: Any) -> float:
    """A probability in [0, 1].

    Raises:
        ValueError: Not a number, NaN, or outside [0, 1].
    """
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        raise ValueError(f"expected a confidence between 0 and 1, got {value!r}")
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"confidence {value} is outside [0, 1]")
    return float(value)


def _missing(value: Any) -> bool:
    return (
        value is None
        or (isinstance(value, float) and math.isnan(value))
        or (isinstance(value, str) and not value.strip())
    )


def parse_gold(output: OutputSpec, value: Any) -> Any:
    """A gold cell as a verdict value, or ``None`` when the cell is empty.

    Accepted spellings: score: a number (``7``, ``"7"``, ``7.5``) in the range; label: the
    label's text; labels: a list, a JSON list, or a comma-separated string; bool:
    ``true/false``, ``yes/no``, ``1/0``; pairwise: ``A``/``B``/``tie`` or ``1``/``2``/``0``
    (1 = response_a is better, 2 = response_b, 0 = tie).

    Raises:
        ValueError: The value is not a valid gold verdict (with what was expected).
    """
    if _missing(value):
        return None
    kind = output.kind
    if kind == "score":
        low, high = output.range or (0, 0)
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"expected a number from {low} to {high}, got {quote(value)}") from None
        if isinstance(value, bool) or math.isnan(number) or not low <= number <= high:
            raise ValueError(f"expected a number from {low} to {high}, got {quote(value)}")
        return int(number) if number.is_integer() else number
    if kind == "label":
        return check_verdict(output, str(value).strip() if not isinstance(value, str) else value.strip())
    if kind == "labels":
        return check_verdict(output, _gold_labels(value))
    if kind == "bool":
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text.endswith(".0"):
            text = text[:-2]
        if text in _TRUE | _FALSE:
            return text in _TRUE
        raise ValueError(f"expected true/false (or yes/no, 1/0), got {quote(value)}")
    text = str(value).strip()
    text = text[:-2] if text.endswith(".0") else text
    choice = _PAIRWISE_GOLD.get(text.lower())
    if choice is None:
        raise ValueError(f"expected A, B or tie (or 1, 2, 0), got {quote(value)}")
    return choice


def _gold_labels(value: Any) -> list[str]:
    """A labels gold cell as its list of labels: a list, a JSON list or comma-separated text."""
    items: Any = value
    if hasattr(items, "tolist"):
        items = items.tolist()
    if isinstance(items, str):
        text = items.strip()
        items = (
            loads_json(text) if text.startswith("[") else [p.strip() for p in text.split(",") if p.strip()]
        )
    if not isinstance(items, list):
        raise ValueError(f"expected a list of labels, got {quote(value)}")
    return [str(item).strip() for item in items]


def read_gold_value(output: OutputSpec, value: Any) -> tuple[Any, str | None]:
    """``(gold, given)``: a gold cell as :func:`parse_gold` reads it, except that a label (or
    each label of a list) written with only a different letter case or surrounding space than
    a listed one is the listed label, and ``given`` is the cell as written (``None`` when
    nothing was normalised), so the reading is counted, never silent.

    Raises:
        ValueError: As :func:`parse_gold`.
    """
    if output.kind not in ("label", "labels") or _missing(value):
        return parse_gold(output, value), None
    labels = output.labels or []
    try:
        return parse_gold(output, value), None
    except ValueError:
        if output.kind == "label":
            listed = listed_label(str(value), labels)
            if listed is None:
                raise
            return listed, str(value)
        mapped = [
            item if item in labels else (listed_label(item, labels) or item) for item in _gold_labels(value)
        ]
        return check_verdict(output, mapped), str(value)


def verdict_text(value: Any) -> str:
    """A verdict as one string, for label tables (``true``, ``7``, ``a|b`` for label sets)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "|".join(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
