"""What each page of ``jurist view`` shows, as template data, with no web framework.

:class:`Viewer` serves one folder of runs. Each method reads the run directories as they
are on disk now (a run still being judged shows its latest state) and returns the name of
a template and its values; :mod:`jurist.view.app` renders them and maps errors to HTTP
statuses (:class:`~jurist.errors.RunDirectoryError` → 404, :class:`ValueError` and
:class:`~jurist.errors.InputError` → 400).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from jurist.errors import InputError, JuristError, RunDirectoryError
from jurist.report.figures import Figure, figures_from_json
from jurist.report.review import LabelSpec, Review
from jurist.view.compare import Comparison, compare_tables, headline_deltas, outcome_filter
from jurist.view.labels import LabelStore, default_who, gold_jsonl, gold_rows_of_run
from jurist.view.runs import (
    FIGURES_FILE,
    ITEMS_FILE,
    MANIFEST,
    RunRecord,
    find_runs,
    history_figure,
    read_json,
    resolve_run,
    run_record,
    run_review,
)
from jurist.view.table import Condition, ItemTable, Page, TableCache

__all__ = ["PAGE_SIZES", "Page", "Viewer"]

PAGE_SIZES = (25, 50, 100, 200)
"""The page sizes offered; any size from 1 to 500 is accepted."""

MAX_PAGE = 500
DEFAULT_PAGE = 50
DEFAULT_BELOW = 0.6
"""The confidence under which the queue lists an item, when none is given."""

REFRESH_SECONDS = 5
"""How often a page of a run that is still being judged reloads itself."""

_USAGE_COLUMNS = ("latency_s", "calls", "cache_hits", "prompt_tokens", "completion_tokens", "cost")
_MAX_AUTO_COLUMNS = 10

T = TypeVar("T")


class _Memo:
    """Results kept while their inputs are unchanged (the key carries the files' signatures)."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._values: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable, compute: Callable[[], T]) -> T:
        with self._lock:
            if key in self._values:
                self._values.move_to_end(key)
                return self._values[key]  # type: ignore[no-any-return]
        value = compute()
        with self._lock:
            self._values[key] = value
            while len(self._values) > self._size:
                self._values.popitem(last=False)
        return value


def _signature(path: Path) -> tuple[int, int] | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return (stat.st_mtime_ns, stat.st_size)


@dataclass(frozen=True)
class RunView:
    """A run as a page sees it: its directory, history entry, review columns and item table."""

    id: str
    path: Path
    record: RunRecord
    review: Review
    table: ItemTable | None

    @property
    def running(self) -> bool:
        return self.record.status == "running"

    def require_table(self) -> ItemTable:
        if self.table is None:
            raise InputError(
                f"the run has no {ITEMS_FILE} yet (it is written when the run is scored)", path=self.path
            )
        return self.table


def page_size(value: int | None) -> int:
    """A page size within 1..:data:`MAX_PAGE` (default :data:`DEFAULT_PAGE`)."""
    return DEFAULT_PAGE if value is None else max(1, min(MAX_PAGE, int(value)))


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


class Viewer:
    """The pages of one folder of runs.

    Args:
        root: The folder; every run directory under it (at any depth) is served, nothing
            outside it.
    """

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        if not self.root.is_dir():
            raise InputError("not a folder of runs", path=root)
        self.tables = TableCache()
        self._figures = _Memo(16)
        self._comparisons = _Memo(8)

    # ------------------------------------------------------------------ runs

    def run(self, identifier: str) -> RunView:
        """The run with this id.

        Raises:
            RunDirectoryError: No run has this id under the folder (or it resolves outside).
        """
        path = resolve_run(self.root, identifier)
        record = run_record(self.root, path)
        if record is None:
            raise RunDirectoryError(f"no run {identifier!r} in the served folder")
        items = path / ITEMS_FILE
        try:
            table = self.tables.get(items) if items.is_file() else None
        except (OSError, pa.ArrowInvalid) as exc:
            raise InputError(f"the item table cannot be read ({exc})", path=items) from None
        return RunView(id=record.id, path=path, record=record, review=run_review(path), table=table)

    def history(self, task: str | None = None, metric: str | None = None) -> dict[str, Any]:
        """The run history: every run (of ``task``, when given), newest first, and the plot of
        ``metric`` over time per judge."""
        runs = find_runs(self.root)
        tasks = sorted({record.task for record in runs})
        shown = [record for record in runs if not task or record.task == task]
        metrics = sorted({name for record in shown for name in record.metrics})
        chosen = metric if metric in metrics else _preferred_metric(metrics)
        figure = None
        if chosen:
            points = tuple((r.id, r.created, r.judge, r.metrics.get(chosen)) for r in shown)
            figure = self._svg(("history", chosen, points), lambda: history_figure(shown, chosen))
        columns = _headline_columns(shown)
        return {
            "runs": shown,
            "tasks": tasks,
            "task": task or "",
            "metrics": metrics,
            "metric": chosen,
            "figure": figure,
            "columns": columns,
            "total": len(runs),
        }

    def _svg(self, key: Hashable, figure: Callable[[], Figure]) -> str:
        from jurist.report.plots import figure_svg

        return self._figures.get(key, lambda: figure_svg(figure(), id_prefix="history-"))

    def figures(self, view: RunView) -> list[dict[str, Any]]:
        """The run's figures (``figures.json``) drawn as SVG, redrawn only when the file changes."""
        path = view.path / FIGURES_FILE
        signature = _signature(path)
        if signature is None:
            return []

        def draw() -> list[dict[str, Any]]:
            from jurist.report.plots import figure_svg

            found = read_json(path)
            try:
                figures = figures_from_json(found) if isinstance(found, list) else []
            except (KeyError, TypeError, ValueError):
                figures = []
            return [
                {"figure": figure, "svg": figure_svg(figure, id_prefix=f"fig{index}-")}
                for index, figure in enumerate(figures, start=1)
            ]

        return self._figures.get((str(path), signature), draw)  # type: ignore[no-any-return]

    # ------------------------------------------------------------------ the run page

    def run_page(
        self,
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

        view = self.run(identifier)
        summary = read_json(view.path / "summary.json")
        manifest = read_json(view.path / MANIFEST) or {}
        report_md = None
        report_path = view.path / "report.md"
        if report_path.is_file():
            report_md = report_path.read_text(encoding="utf-8", errors="replace")
        context: dict[str, Any] = {
            "view": view,
            "run": view.record,
            "manifest": manifest,
            "summary_rows": summary_rows(summary) if summary is not None else [],
            "figures": self.figures(view),
            "report_md": report_md,
            "has_report_html": (view.path / "report.html").is_file(),
            "refresh": REFRESH_SECONDS if view.running else None,
            "others": [r for r in find_runs(self.root) if r.task == view.record.task and r.id != view.id],
            "labels": len(LabelStore(view.path).latest()) if view.review.label else 0,
        }
        if view.table is None:
            return {**context, "page": None, "columns": [], "query": {}}
        columns = shown_columns(view.table, view.review)
        where = self._show_filter(view, show, below)
        if sort is not None and sort not in view.table.types:
            raise ValueError(f"the item table has no column {sort!r} to sort by")
        page = view.table.page(
            columns,
            offset=offset,
            limit=page_size(limit),
            where=where,
            search=search,
            search_columns=_search_columns(view.review),
            sort=sort,
            descending=descending,
        )
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
        }

    def _show_filter(self, view: RunView, show: str, below: float | None) -> list[Condition]:
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

    # ------------------------------------------------------------------ the item page

    def item_page(self, identifier: str, item_id: str) -> dict[str, Any]:
        """One item in full: its row of the items table, everything the run store recorded
        (messages, replies, parsed verdict, rationale, tokens, cost, latency, attempts, cache
        hits, program), and its labels."""
        from jurist.runner import RESULTS_DB, ResultStore

        view = self.run(identifier)
        row: dict[str, Any] | None = None
        if view.table is not None:
            position = view.table.position_of(item_id)
            if position is not None:
                row = view.table.rows([position], view.table.columns)[0]
        detail = None
        store_note = None
        database = view.path / RESULTS_DB
        if database.is_file():
            try:
                with ResultStore(database) as store:
                    detail = store.item_detail(item_id)
            except JuristError as exc:
                store_note = str(exc)
        if detail is None and row is None:
            raise RunDirectoryError(f"run {view.id!r} has no item {item_id!r}")
        config = _mapping(_mapping(read_json(view.path / MANIFEST)).get("config"))
        calls_note = None
        if detail is not None:
            if detail.calls is None:
                calls_note = "no messages recorded: this run was written before jurist recorded prompts"
            elif not detail.calls:
                calls_note = (
                    "baseline judge: no prompt (an offline rule-based judge calls no model)"
                    if config.get("model") in (None, "baseline")
                    else "no LM calls recorded for this item"
                )
        history = [record for record in LabelStore(view.path).records() if record.item == item_id]
        return {
            "view": view,
            "run": view.record,
            "item_id": item_id,
            "row": row,
            "detail": detail,
            "store_note": store_note,
            "calls_note": calls_note,
            "review": view.review,
            "label_history": history,
            "current": history[-1] if history else None,
            "current_value": label_text(history[-1].label) if history else "",
            "who": default_who(),
            "control": label_control(view.review.label),
            "refresh": REFRESH_SECONDS if view.running else None,
        }

    # ------------------------------------------------------------------ compare

    def comparison(self, a: RunView, b: RunView) -> Comparison:
        """The two runs compared (kept while both tables are unchanged)."""
        table_a, table_b = a.require_table(), b.require_table()
        key = (str(table_a.path), table_a.signature, str(table_b.path), table_b.signature)
        return self._comparisons.get(key, lambda: compare_tables(table_a, a.review, table_b, b.review))

    def compare_page(
        self,
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
        a = self.run(first)
        candidates = [r for r in find_runs(self.root) if r.id != a.id]
        context: dict[str, Any] = {"a": a, "candidates": candidates, "b": None}
        if not second:
            return context
        b = self.run(second)
        comparison = self.comparison(a, b)
        if outcome is not None and outcome not in comparison.counts:
            raise ValueError(f"outcome must be one of {', '.join(comparison.counts)}; got {outcome!r}")
        positions_a, positions_b, outcomes = outcome_filter(comparison, outcome)
        size = page_size(limit)
        total = len(positions_a)
        start = min(max(0, offset), max(0, (total - 1) // size * size)) if total else 0
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

    # ------------------------------------------------------------------ the queue

    def queue_page(
        self,
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
        view = self.run(identifier)
        table = view.require_table()
        review = view.review
        if why is None:
            why = "with" if other else "gold" if review.agrees else "unsure" if review.confidence else "gold"
        other_view: RunView | None = None
        other_positions: np.ndarray | None = None
        if why == "with":
            if not other:
                raise ValueError("choose the run whose verdicts to compare with")
            other_view = self.run(other)
            comparison = self.comparison(view, other_view)
            positions, other_positions = comparison.positions_a, comparison.positions_b
        elif why == "gold":
            if not review.agrees:
                raise ValueError("this run has no agreement with gold: choose another queue")
            positions = table.select(where=[(review.agrees, "==", False)])
        elif why == "unsure":
            if not review.confidence:
                raise ValueError("this run's judge gives no confidence: choose another queue")
            positions = table.select(
                where=[(review.confidence, "<", DEFAULT_BELOW if below is None else below)]
            )
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
        start = min(max(0, offset), max(0, (total - 1) // size * size)) if total else 0
        window = positions[start : start + size]
        columns = [c for c in ("id", review.verdict, review.gold, review.confidence, *review.columns) if c]
        rows = table.rows(window, list(dict.fromkeys(columns)))
        if other_view is not None and other_positions is not None and other_view.table is not None:
            verdict = other_view.review.verdict or ""
            for row, found in zip(
                rows, other_view.table.rows(other_positions[start : start + size], [verdict]), strict=True
            ):
                row["__other"] = found.get(verdict)
        for row in rows:
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
            "others": [r for r in find_runs(self.root) if r.task == view.record.task and r.id != view.id],
            "unlabelled": unlabelled,
            "page": page,
            "columns": [c for c in dict.fromkeys(columns) if c in table.types],
            "control": label_control(review.label),
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

    # ------------------------------------------------------------------ labels

    def set_label(self, identifier: str, item_id: str, label: str, who: str | None) -> dict[str, Any]:
        """Check and record a person's label for one item; return the saved record.

        Raises:
            RunDirectoryError: No such run, or the run has no such item.
            ValueError: The run's items take no label, or the label is not one they take.
        """
        view = self.run(identifier)
        spec = view.review.label
        if spec is None:
            raise ValueError(f"the items of task {view.record.task!r} take no label")
        table = view.require_table()
        if table.position_of(item_id) is None:
            raise RunDirectoryError(f"run {view.id!r} has no item {item_id!r}")
        record = LabelStore(view.path).append(item_id, label, who, spec=spec)
        return record.to_json()

    def gold_file(self, identifier: str) -> tuple[str, int, int]:
        """The run's gold file (JSON Lines) with its labels, the rows, and the labelled items."""
        view = self.run(identifier)
        rows, labelled = gold_rows_of_run(view.path)
        return gold_jsonl(rows), len(rows), labelled


def _in_set(values: pa.Array, members: Sequence[str]) -> np.ndarray:
    text = values if pa.types.is_large_string(values.type) else pc.cast(values, pa.large_string())
    found = pc.is_in(text, value_set=pa.array(list(members), type=pa.large_string()))
    return np.asarray(pc.fill_null(found, False).to_numpy(zero_copy_only=False), dtype=bool)


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _search_columns(review: Review) -> list[str]:
    return ["id", review.verdict] if review.verdict else ["id"]


_PREFERRED = ("accuracy", "agreement.accuracy", "agreement.kappa", "kappa", "mae", "agreement.mae")


def _preferred_metric(metrics: Sequence[str]) -> str | None:
    """The metric plotted when none is chosen: accuracy or kappa where a run has it."""
    for name in _PREFERRED:
        if name in metrics:
            return name
    return metrics[0] if metrics else None


def _headline_columns(runs: Sequence[RunRecord], most: int = 6) -> list[str]:
    """The headline figures shown as columns: those most runs have, in their first order."""
    counts: dict[str, int] = {}
    for record in runs:
        for name in record.metrics:
            counts[name] = counts.get(name, 0) + 1
    order = sorted(
        counts, key=lambda name: (-counts[name], _PREFERRED.index(name) if name in _PREFERRED else 99)
    )
    return order[:most]
