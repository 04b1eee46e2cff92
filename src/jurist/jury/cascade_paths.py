"""Which stage of a cascade decides an item, and why the stages before it sent it on.

A stage is unsure of an item, and sends it to the next stage, when:

- it failed on the item (no verdict);
- a **baseline** stage: its output records that no rule fired (``rule`` is ``null``; a YAML
  task's rule judge records it, and a baseline that records no ``rule`` is never unsure);
- a **jury** stage: its jurors were not unanimous (a split vote, or a juror that failed; for a
  jury that voted per labelled key, a split on any key);
- a stage with ``escalate_below``: its confidence in the verdict is missing or below it.

The confidence in the verdict is the task's review confidence column; for a yes/no verdict that
column is the probability of *yes*, so the confidence in a *no* is one minus it. The last stage
answers whatever reaches it. Everything here reads recorded runs; nothing calls a model.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from jurist.jury.cascade_config import Cascade, Stage
from jurist.report.review import Review
from jurist.runner import iter_run_results
from jurist.schemas import ItemResult

__all__ = ["Step", "StageRecord", "certainty", "item_path", "stage_record", "unsure_reason"]


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def certainty(verdict: Any, confidence: Any) -> float | None:
    """The judge's confidence in its verdict: the confidence, or for a yes/no verdict (whose
    confidence is the probability of *yes*) one minus it when the verdict is *no*.

    Examples:
        >>> certainty(True, 0.9), round(certainty(False, 0.2), 3), certainty("b", 0.7), certainty(True, None)
        (0.9, 0.8, 0.7, None)
    """
    if _missing(confidence):
        return None
    value = float(confidence)
    return 1.0 - value if isinstance(verdict, bool | np.bool_) and not verdict else value


@dataclass
class StageRecord:
    """What one stage recorded: its results by item id and its scored per-item table.

    Attributes:
        run_dir: Its run directory.
        results: Item id -> its recorded result (outputs, usage, raw answers).
        rows: Item id -> its row of the task's per-item table (verdict, confidence, agreement).
    """

    run_dir: Path
    results: dict[str, ItemResult] = field(default_factory=dict)
    rows: dict[str, dict[str, Any]] = field(default_factory=dict)

    def verdict(self, item_id: str, review: Review) -> Any:
        row = self.rows.get(item_id) or {}
        return None if review.verdict is None else row.get(review.verdict)

    def certainty(self, item_id: str, review: Review) -> float | None:
        """The stage's confidence in its verdict on the item (see :func:`certainty`)."""
        row = self.rows.get(item_id) or {}
        if review.confidence is None:
            return None
        return certainty(self.verdict(item_id, review), row.get(review.confidence))

    def agrees(self, item_id: str, review: Review) -> bool | None:
        """Whether the stage's verdict on the item agrees with gold (``None``: unknown)."""
        row = self.rows.get(item_id) or {}
        value = row.get(review.agrees) if review.agrees is not None else None
        return None if _missing(value) else bool(value)


def stage_record(run_dir: Path, items: pd.DataFrame) -> StageRecord:
    """The record of a stage's run: its stored results and ``items``, its scored table."""
    results = {result.id: result for result in iter_run_results(run_dir)} if run_dir.is_dir() else {}
    rows: dict[str, dict[str, Any]] = {}
    if not items.empty and "id" in items:
        for row in items.to_dict(orient="records"):
            rows[str(row["id"])] = row
    return StageRecord(run_dir, results, rows)


def _labels_split(section: Mapping[str, Any]) -> str | None:
    """Why a jury that voted per labelled key is not unanimous, or ``None`` when it is."""
    members = list(section.get("members") or [])
    split: list[str] = []
    for kind, keys in (section.get("labels") or {}).items():
        for key, votes in keys.items():
            missing = [name for name, vote in zip(members, votes, strict=False) if vote is None]
            if missing:
                return f"juror {missing[0]} gave no verdict"
            if len({(type(vote).__name__, json_key(vote)) for vote in votes}) > 1:
                split.append(f"{kind} {key}")
    if not split:
        return None
    shown = ", ".join(split[:5]) + (f", … ({len(split)} keys)" if len(split) > 5 else "")
    return f"jurors disagree ({shown})"


def _jury_split(output: Mapping[str, Any]) -> str | None:
    """Why a jury's verdict is not unanimous, or ``None`` when it is."""
    section = output.get("jury")
    if isinstance(section, Mapping) and "labels" in section:
        return _labels_split(section)
    votes = section.get("votes") if isinstance(section, Mapping) else None
    if not isinstance(votes, Mapping) or not votes:
        return "no votes recorded"
    failed = [name for name, vote in votes.items() if vote is None]
    if failed:
        return f"juror {failed[0]} gave no verdict"
    if len({(type(vote).__name__, json_key(vote)) for vote in votes.values()}) > 1:
        return "jurors disagree (" + ", ".join(f"{name}: {vote}" for name, vote in votes.items()) + ")"
    return None


def json_key(value: Any) -> Any:
    """A hashable stand-in for a vote (a list or mapping verdict becomes its text)."""
    return value if isinstance(value, str | int | float | bool) or value is None else repr(value)


def unsure_reason(stage: Stage, record: StageRecord, item_id: str, review: Review) -> str | None:
    """Why ``stage`` (whose run is ``record``) sends the item on, or ``None`` when it decides it."""
    result = record.results.get(item_id)
    if result is None:
        return f"not judged by stage {stage.name}"
    if result.status != "ok" or result.output is None:
        return f"failed ({result.error_type or result.error or 'no verdict'})"
    if stage.kind == "jury":
        return _jury_split(result.output)
    if stage.kind == "baseline" and "rule" in result.output and result.output["rule"] is None:
        return "no rule fired"
    if stage.escalate_below is not None:
        found = record.certainty(item_id, review)
        if found is None:
            return "no confidence"
        if found < stage.escalate_below:
            return f"confidence {found:.3g} below {stage.escalate_below:g}"
    return None


@dataclass(frozen=True)
class Step:
    """One stage an item went through: the stage, and why it sent the item on (``None``: it
    decided the item)."""

    stage: str
    reason: str | None


def item_path(
    cascade: Cascade, records: Mapping[str, StageRecord], item_id: str, review: Review
) -> list[Step]:
    """The stages ``item_id`` goes through, in order; the last step's stage decides it.

    A stage without a record (never run because no item reached it) ends the path there.
    """
    path: list[Step] = []
    for index, stage in enumerate(cascade.stages):
        record = records.get(stage.name)
        if record is None:
            break
        if index == len(cascade.stages) - 1:
            path.append(Step(stage.name, None))
            break
        reason = unsure_reason(stage, record, item_id, review)
        path.append(Step(stage.name, reason))
        if reason is None:
            break
    return path
