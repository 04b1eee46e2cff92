"""The pages that browse runs: the run history, one run with its items, one item in full.

Each function reads the served folder through a :class:`~jurist.view.viewer.Viewer` and
returns the values of its template (``history.html``, ``run.html``, ``item.html``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from jurist.errors import JuristError, RunDirectoryError
from jurist.redaction import redact
from jurist.report.inputs import snippet
from jurist.report.review import Review
from jurist.view.files import is_regular_file, read_text
from jurist.view.labels import LabelStore, default_who
from jurist.view.review_pages import label_control, label_text
from jurist.view.runs import (
    HEADLINE,
    MANIFEST,
    REPORT_HTML_FILE,
    REPORT_MD_FILE,
    SUMMARY_FILE,
    RunRecord,
    find_runs,
    history_figure,
    read_json,
)
from jurist.view.table import Condition, ItemTable
from jurist.view.viewer import (
    DEFAULT_BELOW,
    DEFAULT_PAGE,
    PAGE_SIZES,
    REFRESH_SECONDS,
    RunView,
    Viewer,
    page_size,
)

__all__ = ["history_page", "item_page", "run_page", "shown_columns"]

_USAGE_COLUMNS = ("latency_s", "calls", "cache_hits", "prompt_tokens", "completion_tokens", "cost")
_MAX_AUTO_COLUMNS = 10
_PREFERRED = ("accuracy", "agreement.accuracy", "agreement.kappa", "kappa", "mae", "agreement.mae")


def shown_columns(table: ItemTable, review: Review) -> list[str]:
    """The columns of the items table: id, status, the review's columns, the error type; or
    the first columns of the table when the run says nothing about them."""
    named = [review.verdict, review.gold, review.agrees, review.confidence, *review.columns]
    picked = [name for name in named if name]
    if picked:
        wanted = ["id", "status", *picked, "error_type"]
    else:
        wanted = [name for name in table.columns if name not in _USAGE_COLUMNS][:_MAX_AUTO_COLUMNS]
    return [name for name in dict.fromkeys(wanted) if name in table.types]


def history_page(viewer: Viewer, task: str | None = None, metric: str | None = None) -> dict[str, Any]:
    """The run history: every run (of ``task``, when given), newest first, each with its
    headline figure; the plot of each run's headline figure (or of ``metric``) over time per
    judge; and the two newest runs of one task preselected to compare."""
    runs = find_runs(viewer.root)
    tasks = sorted({record.task for record in runs})
    shown = [record for record in runs if not task or record.task == task]
    metrics = sorted({name for record in shown for name in record.metrics})
    chosen = metric if metric in metrics else HEADLINE if metrics else None
    figure = None
    caption = None
    if chosen:
        points = tuple((r.id, r.created, r.judge, r.metrics.get(chosen), r.headline) for r in shown)
        drawn = history_figure(shown, chosen)
        caption = drawn.caption
        figure = viewer.history_svg(("history", chosen, points), lambda: drawn)
    headlines = {record.headline[0] for record in shown if record.headline}
    return {
        "runs": shown,
        "tasks": tasks,
        "task": task or "",
        "metrics": metrics,
        "metric": chosen,
        "headline": HEADLINE,
        "figure": figure,
        "caption": caption,
        "columns": [name for name in _headline_columns(shown, most=4) if name not in headlines][:2],
        "total": len(runs),
        "pair": _compare_pair(shown),
    }


def _compare_pair(runs: Sequence[RunRecord]) -> tuple[str, str] | None:
    """The two newest runs of one task (the newest run's task first), or ``None``."""
    by_task: dict[str, list[str]] = {}
    for record in runs:
        by_task.setdefault(record.task, []).append(record.id)
    for record in runs:
        found = by_task[record.task]
        if len(found) >= 2:
            return found[0], found[1]
    return None


def run_page(
    viewer: Viewer,
    identifier: str,
    *,
    offset: int = 0,
    limit: int | None = None,
    search: str = "",
    sort: str | None = None,
    descending: bool = False,
    show: str = "all",
    below: float | None = None,
) -> dict[str, Any]:
    """The run page: what judged what, the summary's figures, plots, the report, and one
    page of the items table (filtered by ``show``: ``all``, ``failed``, ``disagree`` with
    gold, ``unsure`` below a confidence; searched in id and verdict; sorted by a column)."""
    from jurist.report.html import summary_rows

    view = viewer.run(identifier)
    summary = read_json(view.path / SUMMARY_FILE)
    manifest = read_json(view.path / MANIFEST) or {}
    try:
        report_md: str | None = read_text(view.path / REPORT_MD_FILE)
    except FileNotFoundError:
        report_md = None
    context: dict[str, Any] = {
        "view": view,
        "run": view.record,
        "manifest": manifest,
        "summary_rows": summary_rows(summary) if summary is not None else [],
        "figures": viewer.figures(view),
        "report_md": report_md,
        "has_report_html": is_regular_file(view.path / REPORT_HTML_FILE),
        "refresh": REFRESH_SECONDS if view.running else None,
        "others": viewer.other_runs(view),
        "labels": len(LabelStore(view.path).latest()) if view.review.label else 0,
    }
    if view.table is None:
        return {**context, "page": None, "columns": [], "query": {}}
    columns = shown_columns(view.table, view.review)
    where = _show_filter(view, show, below)
    if sort is not None and sort not in view.table.types:
        raise ValueError(f"the item table has no column {sort!r} to sort by")
    inputs = viewer.inputs(view)
    page = view.table.page(
        columns,
        offset=offset,
        limit=page_size(limit),
        where=where,
        search=search,
        search_columns=_search_columns(view.review),
        search_ids=frozenset(inputs.search(search)) if search else frozenset(),
        sort=sort,
        descending=descending,
    )
    texts = inputs.of(str(row.get("id")) for row in page.rows)
    for row in page.rows:
        row["__text"] = snippet(texts.get(str(row.get("id"))))
    query = {
        "id": view.id,
        "q": search or None,
        "sort": sort,
        "desc": "1" if descending else None,
        "show": show if show != "all" else None,
        "below": below if show == "unsure" else None,
        "limit": page.limit if page.limit != DEFAULT_PAGE else None,
    }
    return {
        **context,
        "page": page,
        "columns": columns,
        "query": query,
        "search": search,
        "sort": sort,
        "descending": descending,
        "show": show,
        "below": below if below is not None else DEFAULT_BELOW,
        "page_sizes": sorted({*PAGE_SIZES, page.limit}),
        "has_text": bool(texts),
        "inputs_note": inputs.note if not texts and page.rows else None,
    }


def item_page(viewer: Viewer, identifier: str, item_id: str) -> dict[str, Any]:
    """One item in full: its row of the items table, everything the run store recorded
    (messages, replies, parsed verdict, rationale, tokens, cost, latency, attempts, cache
    hits, program), and its labels."""
    from jurist.runner import RESULTS_DB, ResultStore

    view = viewer.run(identifier)
    row: dict[str, Any] | None = None
    if view.table is not None:
        position = view.table.position_of(item_id)
        if position is not None:
            row = view.table.rows([position], view.table.columns)[0]
    detail = None
    store_note = None
    database = view.path / RESULTS_DB
    if os.path.lexists(database):
        try:
            with ResultStore(database, read_only=True) as store:
                detail = store.item_detail(item_id)
                if detail is None and "[REDACTED" in item_id:
                    detail = _detail_of_shown_id(store, item_id)
        except JuristError as exc:
            store_note = str(exc)
    if detail is None and row is None:
        raise RunDirectoryError(f"run {view.id!r} has no item {item_id!r}")
    config = _mapping(_mapping(read_json(view.path / MANIFEST)).get("config"))
    calls_note = None
    if detail is not None:
        if detail.calls is None:
            calls_note = "no messages recorded: the item was recorded without its LM calls"
        elif not detail.calls:
            calls_note = (
                "baseline judge: no prompt (an offline rule-based judge calls no model)"
                if config.get("model") in (None, "baseline")
                else "no LM calls recorded for this item"
            )
    history = [record for record in LabelStore(view.path).records() if record.item == item_id]
    inputs = viewer.inputs(view)
    shown_inputs = detail.inputs if detail is not None and detail.inputs is not None else None
    if shown_inputs is None:
        shown_inputs = inputs.of([item_id]).get(item_id)
    return {
        "view": view,
        "run": view.record,
        "item_id": item_id,
        "row": row,
        "detail": detail,
        "store_note": store_note,
        "calls_note": calls_note,
        "inputs": shown_inputs,
        "inputs_note": inputs.note if shown_inputs is None else None,
        "review": view.review,
        "label_history": history,
        "current": history[-1] if history else None,
        "current_value": label_text(history[-1].label) if history else "",
        "who": default_who(),
        "control": label_control(view.review.label),
        "refresh": REFRESH_SECONDS if view.running else None,
    }


def _detail_of_shown_id(store: Any, item_id: str) -> Any:
    """The recorded item whose id the redaction shows as ``item_id``, or ``None``.

    ``results.sqlite`` keeps each id as the data has it; the item table and every page show
    a key-shaped id redacted (``[REDACTED:<hash>]``, distinct per id), so such an item is
    found by redacting the recorded ids (read only for such an id)."""
    for recorded in store.item_ids():
        if recorded != item_id and redact(recorded) == item_id:
            return store.item_detail(recorded)
    return None


def _show_filter(view: RunView, show: str, below: float | None) -> list[Condition]:
    review = view.review
    if show == "all":
        return []
    if show == "failed":
        return [("status", "==", "failed")]
    if show == "disagree":
        if not review.agrees:
            raise ValueError("this run has no agreement with gold to filter by")
        return [(review.agrees, "==", False)]
    if show == "unsure":
        if not review.confidence:
            raise ValueError("this run's judge gives no confidence to filter by")
        return [(review.confidence, "<", DEFAULT_BELOW if below is None else float(below))]
    raise ValueError(f"show must be all, failed, disagree or unsure; got {show!r}")


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _search_columns(review: Review) -> list[str]:
    return ["id", review.verdict] if review.verdict else ["id"]


def _headline_columns(runs: Sequence[RunRecord], most: int = 6) -> list[str]:
    """The figures shown as columns: those most runs have, the preferred first; a verdict's
    distribution (``verdicts.mean``) is not a figure of the judge's quality and is left out."""
    counts: dict[str, int] = {}
    for record in runs:
        for name in record.metrics:
            if not name.startswith("verdicts."):
                counts[name] = counts.get(name, 0) + 1
    order = sorted(
        counts, key=lambda name: (-counts[name], _PREFERRED.index(name) if name in _PREFERRED else 99)
    )
    return order[:most]
