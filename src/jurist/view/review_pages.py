"""The pages where people review a judge: two runs compared, the queue of items to label, and
the labels they set (recorded one at a time, exported as a gold file).

Each page function reads the served folder through a :class:`~jurist.view.viewer.Viewer`
and returns the values of its template (``compare.html``, ``queue.html``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from jurist.errors import RunDirectoryError
from jurist.report.review import LabelSpec
from jurist.view.compare import headline_deltas, outcome_filter
from jurist.view.labels import LabelStore, default_who, gold_jsonl, gold_rows_of_run
from jurist.view.runs import find_runs
from jurist.view.table import Page, page_start
from jurist.view.viewer import DEFAULT_BELOW, DEFAULT_PAGE, RunView, Viewer, page_size

__all__ = ["compare_page", "gold_file", "label_control", "label_text", "queue_page", "set_label"]


def label_control(spec: LabelSpec | None) -> dict[str, Any] | None:
    """The form control of a label: ``select`` with options, or a ``number`` input."""
    if spec is None:
        return None
    if spec.kind == "choice":
        return {"kind": "select", "options": [(choice, choice) for choice in spec.choices]}
    if spec.kind == "bool":
        return {"kind": "select", "options": [("yes", "true"), ("no", "false")]}
    return {
        "kind": "number",
        "min": spec.low,
        "max": spec.high,
        "step": "1" if spec.integer else "any",
    }


def label_text(value: Any) -> str:
    """A stored label as the form shows it (``true`` for yes, numbers as written)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def compare_page(
    viewer: Viewer,
    first: str,
    second: str | None,
    *,
    outcome: str | None = None,
    offset: int = 0,
    limit: int | None = None,
) -> dict[str, Any]:
    """Two runs item by item: counts, paired figures with intervals and tests, headline
    deltas, and one page of the items whose verdicts differ (``outcome``: which run
    agrees with gold)."""
    a = viewer.run(first)
    others = [r for r in find_runs(viewer.root) if r.id != a.id]
    # Runs of A's task first (newest first), the first of them preselected.
    candidates = [r for r in others if r.task == a.record.task] + [
        r for r in others if r.task != a.record.task
    ]
    context: dict[str, Any] = {"a": a, "candidates": candidates, "b": None}
    if not second:
        return context
    b = viewer.run(second)
    comparison = viewer.comparison(a, b)
    if outcome is not None and outcome not in comparison.counts:
        raise ValueError(f"outcome must be one of {', '.join(comparison.counts)}; got {outcome!r}")
    positions_a, positions_b, outcomes = outcome_filter(comparison, outcome)
    size = page_size(limit)
    total = len(positions_a)
    start = page_start(offset, total, size)
    table_a, table_b = a.require_table(), b.require_table()
    columns_a = [c for c in ("id", a.review.verdict, a.review.gold, a.review.confidence) if c]
    columns_b = [c for c in (b.review.verdict, b.review.confidence) if c]
    rows_a = table_a.rows(positions_a[start : start + size], columns_a)
    rows_b = table_b.rows(positions_b[start : start + size], columns_b)
    rows = [
        {
            "id": row_a.get("id"),
            "verdict_a": row_a.get(a.review.verdict or ""),
            "verdict_b": row_b.get(b.review.verdict or ""),
            "gold": row_a.get(a.review.gold) if a.review.gold else None,
            "outcome": found,
        }
        for row_a, row_b, found in zip(rows_a, rows_b, outcomes[start : start + size], strict=True)
    ]
    page = Page(
        rows=rows,
        positions=[int(p) for p in positions_a[start : start + size]],
        total=total,
        offset=start,
        limit=size,
        row_count=comparison.differing,
    )
    return {
        **context,
        "b": b,
        "comparison": comparison,
        "outcome": outcome,
        "page": page,
        "headlines": headline_deltas(a.record.metrics, b.record.metrics),
        "query": {
            "a": a.id,
            "b": b.id,
            "outcome": outcome,
            "limit": size if size != DEFAULT_PAGE else None,
        },
    }


def queue_page(
    viewer: Viewer,
    identifier: str,
    *,
    why: str | None = None,
    below: float | None = None,
    other: str | None = None,
    unlabelled: bool = False,
    offset: int = 0,
    limit: int | None = None,
) -> dict[str, Any]:
    """Items that need a person's label: where the judge disagrees with gold (``why=gold``),
    where its confidence is below ``below`` (``why=unsure``), or where another run's
    verdict differs (``other``); with ``unlabelled``, only items nobody labelled yet."""
    view = viewer.run(identifier)
    table = view.require_table()
    review = view.review
    if why is None:
        why = "with" if other else "gold" if review.agrees else "unsure" if review.confidence else "gold"
    other_view: RunView | None = None
    other_positions: np.ndarray | None = None
    if why == "with":
        if not other:
            raise ValueError("choose the run whose verdicts to compare with")
        other_view = viewer.run(other)
        comparison = viewer.comparison(view, other_view)
        positions, other_positions = comparison.positions_a, comparison.positions_b
    elif why == "gold":
        if not review.agrees:
            raise ValueError("this run has no agreement with gold: choose another queue")
        positions = table.select(where=[(review.agrees, "==", False)])
    elif why == "unsure":
        if not review.confidence:
            raise ValueError("this run's judge gives no confidence: choose another queue")
        positions = table.select(where=[(review.confidence, "<", DEFAULT_BELOW if below is None else below)])
    else:
        raise ValueError(f"the queue is gold, unsure or with; got {why!r}")
    store = LabelStore(view.path)
    latest = store.latest()
    if unlabelled and latest:
        keep = ~_in_set(table.column("id").take(pa.array(positions)), list(latest))
        positions = positions[keep]
        if other_positions is not None:
            other_positions = other_positions[keep]
    size = page_size(limit)
    total = len(positions)
    start = page_start(offset, total, size)
    window = positions[start : start + size]
    columns = [c for c in ("id", review.verdict, review.gold, review.confidence, *review.columns) if c]
    rows = table.rows(window, list(dict.fromkeys(columns)))
    if other_view is not None and other_positions is not None and other_view.table is not None:
        verdict = other_view.review.verdict or ""
        for row, found in zip(
            rows, other_view.table.rows(other_positions[start : start + size], [verdict]), strict=True
        ):
            row["__other"] = found.get(verdict)
    inputs = viewer.inputs(view)
    texts = inputs.of(str(row.get("id")) for row in rows)
    for row in rows:
        row["__inputs"] = texts.get(str(row.get("id")))
        record = latest.get(str(row.get("id")))
        row["__label"] = record
        row["__value"] = label_text(record.label) if record is not None else ""
    page = Page(
        rows=rows,
        positions=[int(p) for p in window],
        total=total,
        offset=start,
        limit=size,
        row_count=table.row_count,
    )
    return {
        "view": view,
        "run": view.record,
        "review": review,
        "why": why,
        "below": DEFAULT_BELOW if below is None else below,
        "other": other_view,
        "others": viewer.other_runs(view),
        "unlabelled": unlabelled,
        "page": page,
        "columns": [c for c in dict.fromkeys(columns) if c in table.types],
        "control": label_control(review.label),
        "inputs_note": inputs.note,
        "labelled": len(latest),
        "who": default_who(),
        "query": {
            "run": view.id,
            "why": why,
            "below": below if why == "unsure" else None,
            "with": other_view.id if other_view else None,
            "unlabelled": "1" if unlabelled else None,
            "limit": size if size != DEFAULT_PAGE else None,
        },
    }


def set_label(viewer: Viewer, identifier: str, item_id: str, label: str, who: str | None) -> dict[str, Any]:
    """Check and record a person's label for one item; return the saved record.

    Raises:
        RunDirectoryError: No such run, or the run has no such item.
        ValueError: The run's items take no label, or the label is not one they take.
    """
    view = viewer.run(identifier)
    spec = view.review.label
    if spec is None:
        raise ValueError(f"the items of task {view.record.task!r} take no label")
    table = view.require_table()
    if table.position_of(item_id) is None:
        raise RunDirectoryError(f"run {view.id!r} has no item {item_id!r}")
    record = LabelStore(view.path).append(item_id, label, who, spec=spec)
    return record.to_json()


def gold_file(viewer: Viewer, identifier: str) -> tuple[str, int, int]:
    """The run's gold file (JSON Lines) with its labels, the rows, and the labelled items."""
    view = viewer.run(identifier)
    rows, labelled = gold_rows_of_run(view.path)
    return gold_jsonl(rows), len(rows), labelled


def _in_set(values: pa.Array, members: Sequence[str]) -> np.ndarray:
    text = values if pa.types.is_large_string(values.type) else pc.cast(values, pa.large_string())
    found = pc.is_in(text, value_set=pa.array(list(members), type=pa.large_string()))
    return np.asarray(pc.fill_null(found, False).to_numpy(zero_copy_only=False), dtype=bool)
