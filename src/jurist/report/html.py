"""The self-contained HTML report of a run: one file that opens from disk with no network.

:func:`render_run_html` reads a run directory (``manifest.json``, ``summary.json``,
``figures.json``, ``review.json``, ``items.parquet`` or ``items.csv``, ``report.md``, and
the recorded prompts and replies in ``results.sqlite``) and returns one HTML page:

- a header saying what judged what (task, judge, model, compiled program, dataset,
  counts, usage and cost, when);
- the summary's figures as a table (numeric leaves, with their intervals where the summary
  has ``x_low``/``x_high`` or ``low``/``high``);
- every figure as inline SVG (:func:`jurist.report.plots.figure_svg`) with its caption,
  read from the figure cache when it was drawn before (:mod:`jurist.report.svg_cache`);
- the per-item table (the :class:`~jurist.report.review.Review` columns: verdict, gold,
  agreement, confidence), sortable and filterable by text, status and agreement; a click
  on a row shows the item's messages and raw replies;
- the Markdown report, as preformatted text.

CSS and JavaScript are inline and hand-written; the page loads nothing (its
Content-Security-Policy forbids any fetch). Judged text is hostile: the template escapes
every value, and the embedded JSON escapes ``<``, ``>`` and ``&`` so no text can close its
``<script>`` element. Every message text is embedded once, by hash (the system message
all items share appears once).

:func:`write_run_views` writes ``figures.json``, ``review.json`` and ``report.html`` after a
run is scored, atomically and redacted.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import hashlib
import json
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import repeat
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jurist.atomic import atomic_path, atomic_write_text
from jurist.redaction import redact_value
from jurist.report.figures import Figure, figures_from_json, figures_to_json
from jurist.report.inputs import input_text, snippet
from jurist.report.jsonout import dumps
from jurist.report.review import Review

if TYPE_CHECKING:  # pandas and numpy are imported where used: the CLI reads MAX_ITEMS without them
    import jinja2
    import pandas as pd
    from markupsafe import Markup

__all__ = [
    "FIGURES_JSON",
    "MAX_ITEMS",
    "REPORT_HTML",
    "REVIEW_JSON",
    "figure_blocks",
    "render_run_html",
    "render_template",
    "script_json",
    "summary_rows",
    "write_run_views",
]

FIGURES_JSON = "figures.json"
REVIEW_JSON = "review.json"
REPORT_HTML = "report.html"
MAX_ITEMS = 2000
"""Items embedded in a report by default (``jurist view`` pages all of them)."""

InputsLookup = Callable[[Sequence[str]], Mapping[str, Mapping[str, Any]]]
"""The judged inputs of items whose store row records none (an older run): ids -> inputs."""

_MANIFEST = "manifest.json"
_SUMMARY = "summary.json"
_REPORT_MD = "report.md"
_TEXT_KEY = "__judged_text__"
"""The key of the judged-text column of the item table (no column of a table has it)."""
_SHOWN_IN_HEADER = {"items", "ok", "failed", "failed_ids", "failure_kinds", "usage", "run", "task"}
_VALUE_KEYS = ("value", "mean", "rate", "estimate", "point")
_MAX_SUMMARY_ROWS = 400
_CELL_LIMIT = 200
_USAGE_COLUMNS = (
    "attempts",
    "latency_s",
    "calls",
    "cache_hits",
    "prompt_tokens",
    "completion_tokens",
    "cost",
)


# ---------------------------------------------------------------------- templates


@functools.lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    import jinja2

    return jinja2.Environment(
        loader=jinja2.PackageLoader("jurist.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render_template(name: str, **context: Any) -> str:
    """Render one of the report templates (``src/jurist/report/templates``), autoescaped;
    ``version`` (jurist's, for the page's footer) is set unless given."""
    context.setdefault("version", _version())
    return _environment().get_template(name).render(**context)


def script_json(value: Any) -> Markup:
    """``value`` as JSON safe inside ``<script type="application/json">``.

    ``<``, ``>`` and ``&`` are written as ``\\u003c``, ``\\u003e`` and ``\\u0026`` (the same
    JSON to a parser), so no judged text, e.g. ``</script><script>...``, can end the element
    or open a comment in it.
    """
    return _script_markup(dumps(value, indent=None, ensure_ascii=False))


def _script_markup(text: str) -> Markup:
    """JSON text made safe inside ``<script type="application/json">`` (see :func:`script_json`)."""
    from markupsafe import Markup

    return Markup(_script_text(text))  # escaped for the script-data context


def _script_text(text: str) -> str:
    """:func:`_script_markup` as plain text: each character it replaces is replaced alone, so
    the parts of a JSON text may be made safe one by one and joined."""
    for raw, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(raw, escaped)
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


class _NotPlain(Exception):
    """A value that JSON text does not parse to (see :func:`_loaded_json`)."""


def _not_plain(value: Any) -> Any:
    raise _NotPlain


_PLAIN_JSON = json.JSONEncoder(ensure_ascii=False, allow_nan=False, default=_not_plain)
"""``json.dumps(value, ensure_ascii=False, allow_nan=False, default=_not_plain)``, built once."""


def _loaded_json(value: Any) -> str:
    """``dumps(value, indent=None, ensure_ascii=False)`` of a value whose dict keys are all
    text: one call to the encoder when the value holds only what JSON text parses to and no
    NaN or infinity (the strict JSON is then the same); otherwise :func:`dumps` itself.

    Either way a value's text is made of its parts' texts (:func:`dumps` replaces NaN and
    other objects leaf by leaf): a dict's text is its items' texts joined as the encoder
    joins them, whichever of the two wrote each."""
    try:
        return _PLAIN_JSON.encode(value)
    except (_NotPlain, ValueError):
        return dumps(value, indent=None, ensure_ascii=False)


# ---------------------------------------------------------------------- values


def _missing(value: Any) -> bool:
    import pandas as pd

    if value is None:
        return True
    kind = type(value)
    if kind is str or kind is int or kind is bool:
        return False
    if kind is float:
        return math.isnan(value)
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def _fmt(value: Any) -> str:
    """A number or value as the report shows it: 3 decimals, thousands grouped, ``n/a``."""
    if _missing(value):
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if value == int(value) and abs(value) < 1e15:
            return f"{int(value):,}"
        return f"{value:.3f}" if abs(value) >= 0.001 else f"{value:.2e}"
    return str(value)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _with_interval(value: Any, low: Any, high: Any) -> str:
    if _missing(value):
        return "n/a"
    if _missing(low) or _missing(high):
        return _fmt(value)
    return f"{_fmt(value)} [{_fmt(low)}, {_fmt(high)}]"


def summary_rows(summary: Any) -> list[tuple[str, str]]:
    """The numeric figures of a summary as ``(dotted name, shown value)``, intervals joined.

    A number ``x`` with siblings ``x_low`` and ``x_high`` shows as ``x [low, high]`` (the
    siblings are not listed apart); so does a mapping with ``low`` and ``high`` and one of
    ``value``/``mean``/``rate``/``estimate``/``point``. Counts, usage and the run's identity
    (shown in the report's header), lists and text are left out. A list of summaries (a
    task that scores several files) is listed one after the other, each under its index.
    """
    rows: list[tuple[str, str]] = []
    if isinstance(summary, list):
        for index, entry in enumerate(summary):
            if isinstance(entry, Mapping):
                name = entry.get("file") or entry.get("name") or entry.get("path") or str(index)
                rows += [(f"{name}: {key}", value) for key, value in summary_rows(entry)]
        return rows[:_MAX_SUMMARY_ROWS]
    if isinstance(summary, Mapping):
        top = {k: v for k, v in summary.items() if k not in _SHOWN_IN_HEADER}
        _walk("", top, rows)
    return rows[:_MAX_SUMMARY_ROWS]


def _walk(prefix: str, mapping: Mapping[str, Any], rows: list[tuple[str, str]]) -> None:
    keys = set(mapping)
    for key, value in mapping.items():
        name = f"{prefix}.{key}" if prefix else str(key)
        text_key = str(key)
        if text_key.endswith(("_low", "_high")) and text_key.rsplit("_", 1)[0] in keys:
            continue
        if isinstance(value, Mapping):
            point = next((k for k in _VALUE_KEYS if k in value), None)
            if point is not None and "low" in value and "high" in value:
                rows.append((f"{name}.{point}", _with_interval(value[point], value["low"], value["high"])))
                rest = {k: v for k, v in value.items() if k not in {point, "low", "high"}}
                _walk(name, rest, rows)
            else:
                _walk(name, value, rows)
        elif _is_number(value) or value is None:
            rows.append((name, _with_interval(value, mapping.get(f"{key}_low"), mapping.get(f"{key}_high"))))


def _money(value: Any) -> str:
    return "unknown" if _missing(value) else f"${float(value):.5f}"


# ---------------------------------------------------------------------- reading a run


def _read_json(path: Path) -> Any:
    """A JSON file of the run, or ``None`` when it is missing or unreadable."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _read_items(run_dir: Path) -> pd.DataFrame | None:
    import pandas as pd

    parquet, csv = run_dir / "items.parquet", run_dir / "items.csv"
    try:
        if parquet.is_file():
            return pd.read_parquet(parquet)
        if csv.is_file():
            return pd.read_csv(csv, dtype={"id": str})
    except (OSError, ValueError, ImportError):
        return None
    return None


@dataclass(frozen=True)
class _Column:
    key: str
    label: str
    numeric: bool


def _columns(items: pd.DataFrame, review: Review) -> list[_Column]:
    """The table's columns: id, status, the review's columns, error (all columns without a review)."""
    import pandas as pd

    chosen: list[tuple[str, str]] = []
    named = [
        (review.verdict, "verdict"),
        (review.gold, "gold"),
        (review.agrees, "agrees"),
        (review.confidence, "confidence"),
    ]
    if any(column for column, _ in named) or review.columns:
        chosen = [(column, label) for column, label in named if column]
        chosen += [(column, column) for column in review.columns]
        chosen = [("id", "id"), ("status", "status"), *chosen, ("error", "error")]
    else:
        rest = [c for c in items.columns if c not in {"id", "status", "error", "error_type", *_USAGE_COLUMNS}]
        chosen = [("id", "id"), ("status", "status"), *((c, c) for c in rest), ("error", "error")]
    seen: set[str] = set()
    columns = []
    for key, label in chosen:
        if key in items.columns and key not in seen:
            seen.add(key)
            values = items[key]
            numeric = pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)
            columns.append(_Column(key, label, bool(numeric)))
    return columns


def _cell(value: Any, numeric: bool) -> dict[str, str]:
    """One table cell: the text shown (cut to a length), the full text when cut, and for a
    number its sort key."""
    if type(value) is str:  # most cells of text: what the steps below make of it, sooner
        shown = value if len(value) <= _CELL_LIMIT else value[: _CELL_LIMIT - 1] + "…"
        return {"text": shown, "sort": "", "full": value if shown != value else ""}
    import numpy as np

    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, list | dict | tuple):
        text = json.dumps(value, ensure_ascii=False, default=str)
    elif _missing(value):
        return {"text": "", "sort": "", "full": ""}
    elif isinstance(value, bool):
        text = "yes" if value else "no"
    else:
        text = _fmt(value)
    shown = text if len(text) <= _CELL_LIMIT else text[: _CELL_LIMIT - 1] + "…"
    sort = ""
    if numeric and _is_number(value) and math.isfinite(value):
        sort = repr(float(value))
    return {"text": shown, "sort": sort, "full": text if shown != text else ""}


def _row_html(row: Mapping[str, Any], columns: Sequence[_Column]) -> Markup:
    """One ``<tr>`` of the item table, every value escaped as the template would.

    Built here rather than by a loop in the template: the rows are most of the page, and
    Jinja's attribute lookups per cell made them several times slower.
    """
    from markupsafe import Markup

    cells = "".join(_cell_html(cell, column) for column, cell in zip(columns, row["cells"], strict=True))
    return Markup(f"{_row_opening(row['id'], row['status'], row['agrees'])}{cells}</tr>")  # escaped


def _row_opening(item_id: str, status: str, agrees: str) -> str:
    """A row's ``<tr ...>`` tag, its values escaped."""
    from markupsafe import escape

    start, end = _opening_parts(status, agrees)
    return f"{start}{escape(item_id)}{end}"


@functools.lru_cache(maxsize=64)
def _opening_parts(status: str, agrees: str) -> tuple[str, str]:
    """A row's ``<tr ...>`` tag before and after its id, for a status and an agreement."""
    from markupsafe import escape

    status_text = escape(status)
    disagrees = " disagrees" if agrees == "false" else ""
    return (
        f'<tr class="item status-{status_text}{disagrees}" tabindex="0" aria-expanded="false" data-id="',
        f'" data-status="{status_text}" data-agrees="{escape(agrees or "na")}">',
    )


def _cell_html(cell: Mapping[str, str], column: _Column) -> str:
    """One ``<td>`` of the item table (a :func:`_cell`), its values escaped."""
    from markupsafe import escape

    start = '<td class="num"' if column.numeric else '<td class="text"' if column.key == _TEXT_KEY else "<td"
    sort = f' data-sort="{escape(cell["sort"])}"' if cell["sort"] else ""
    title = f' title="{escape(cell["full"])}"' if cell["full"] else ""
    return f"{start}{sort}{title}>{escape(cell['text'])}</td>"


_UNCACHED_COLUMNS = frozenset({"id", _TEXT_KEY})
"""Columns whose every value differs (the id, the judged text): their cells are not kept."""


class _Rows:
    """The item table's rows as :func:`_row_html` writes them, each cell written once per
    distinct value of its column (most columns hold a few values: a verdict, a status, a
    count) and reused after. ``parts`` joined are the rows; ``fresh`` holds each distinct part
    once (each from a ``<`` to a ``>``): redaction finds nothing in the rows when it finds
    nothing in those (see :func:`_redacted_page`).

    Values of the same plain type that compare equal share a cell (a float's sign is part of
    its key, as ``-0.0`` sorts apart from ``0.0``, and every NaN is one key); any other value's
    cell is written each time."""

    __slots__ = ("_caches", "_columns", "count", "fresh", "parts")

    def __init__(self, columns: Sequence[_Column]) -> None:
        self._columns = list(columns)
        self._caches: list[dict[tuple[Any, ...], str] | None] = [
            None if column.key in _UNCACHED_COLUMNS else {} for column in columns
        ]
        self.parts: list[str] = []
        self.fresh: list[str] = []
        self.count = 0

    def add(self, item_id: str, status: str, agrees: str, values: Iterable[Any]) -> None:
        """One row: its id, status and agreement, and its values in the columns' order."""
        opening = _row_opening(item_id, status, agrees)
        parts, fresh = self.parts, self.fresh
        parts.append(opening)
        fresh.append(opening)
        for column, cache, value in zip(self._columns, self._caches, values, strict=True):
            key: tuple[Any, ...] | None = None
            if cache is not None:
                kind = type(value)
                if kind is float:
                    key = (kind, value, math.copysign(1.0, value)) if value == value else (kind, None)
                elif kind is str or kind is int or kind is bool or value is None:
                    key = (kind, value)
            html = None if cache is None or key is None else cache.get(key)
            if html is None:
                html = _cell_html(_cell(value, column.numeric), column)
                fresh.append(html)
                if cache is not None and key is not None:
                    cache[key] = html
            parts.append(html)
        parts.append("</tr>\n")
        self.count += 1


def _column_values(shown: pd.DataFrame, keys: Iterable[str]) -> dict[str, list[Any]]:
    """Each of these columns of the shown items (those the table has) as a list of the values
    ``shown.to_dict(orient="records")`` gives its rows. A column of numbers or booleans is
    read as a whole (``tolist``: the same Python numbers); the other columns as records of
    themselves only (a column's values are the same whichever other columns are converted
    with it)."""
    wanted = [key for key in dict.fromkeys(keys) if key in shown.columns]
    if not shown.columns.is_unique:
        records = shown.to_dict(orient="records")
        return {key: [record.get(key) for record in records] for key in wanted}
    import numpy as np

    values: dict[str, list[Any]] = {}
    rest = []
    for key in wanted:
        dtype = shown[key].dtype
        if isinstance(dtype, np.dtype) and dtype.kind in "biuf":
            values[key] = shown[key].tolist()
        else:
            rest.append(key)
    if rest:
        records = shown[rest].to_dict(orient="records")
        values.update((key, [record[key] for record in records]) for key in rest)
    return values


def _agrees(value: Any) -> str:
    if _missing(value) or isinstance(value, list | dict):
        return ""
    if isinstance(value, str):
        lowered = value.strip().lower()
        return (
            "true" if lowered in {"true", "yes", "1"} else "false" if lowered in {"false", "no", "0"} else ""
        )
    return "true" if bool(value) else "false"


@dataclass
class _Details:
    """What :func:`_details` read: the items' judged inputs and calls (texts by hash) as the
    page's data holds them (parts of JSON text made safe for the page's script element, see
    :func:`_data_part`), per item its inputs (``[name, hash]`` pairs), the texts by hash (each
    once), a note when the store cannot be read, and what the page's redaction needs
    (:func:`_redacted_page`): the texts it composes that the store did not redact when it
    wrote them (each once), and whether an output names a setting (see
    :func:`jurist.redaction.names_setting`)."""

    items: list[str] = field(default_factory=list)
    inputs: dict[str, list[list[str]]] = field(default_factory=dict)
    messages: dict[str, str] = field(default_factory=dict)
    note: str | None = None
    composed: dict[str, None] = field(default_factory=dict)
    names_setting: bool = False
    rows_fresh: str | None = None
    """The distinct parts of the item rows (each from a ``<`` to a ``>``), once each: what
    redaction would find in the rows it finds in these (see :class:`_Rows`)."""


def _details(run_dir: Path, ids: Sequence[str], inputs_of: InputsLookup | None = None) -> _Details:
    """The recorded inputs, prompts and replies of ``ids`` (see :class:`_Details`). Items whose
    row records no inputs get them from ``inputs_of``, when given."""
    import sqlite3

    from jurist.errors import RunDirectoryError
    from jurist.runner.store import RESULTS_DB, ResultStore

    found = _Details()
    db = run_dir / RESULTS_DB
    if not db.is_file():
        found.note = f"no {RESULTS_DB} in the run directory: prompts and replies are not shown"
        return found
    details: dict[str, dict[str, Any]] = {}
    composed = found.composed
    ref = _TextRefs(found.messages)
    plain_keys: set[str] = set()
    try:
        with ResultStore(db) as store:
            for record in store.item_records(ids):
                calls = record.calls
                if calls is not None:
                    for call in calls:  # the record's own dicts: their messages become refs
                        refs = []
                        for role, text in call["messages"]:
                            composed[role] = None
                            refs.append([role, ref(text)])
                        call["messages"] = refs
                details[record.id] = {
                    "inputs": record.inputs,
                    "status": record.status,
                    "output": record.output,
                    "rationale": record.rationale,
                    "error": record.error,
                    "error_type": record.error_type,
                    "raw": record.raw,
                    "attempts": record.attempts,
                    "calls": calls,
                }
                composed[record.id] = composed[record.status] = None
                composed[record.rationale or ""] = composed[record.error_type or ""] = None
                if record.output and not found.names_setting:
                    found.names_setting = _names_setting(record.output, plain_keys)
    except (RunDirectoryError, OSError, sqlite3.Error) as exc:
        found.note = f"the run store cannot be read ({exc}): prompts and replies are not shown"
        return found
    missing = [item_id for item_id in ids if item_id in details and details[item_id]["inputs"] is None]
    looked_up: set[str] = set()
    if missing and inputs_of is not None:
        lookup = inputs_of(missing)
        for item_id in missing:
            details[item_id]["inputs"] = lookup.get(item_id)
            looked_up.add(item_id)
    batch: dict[str, Any] = {}
    for item_id, detail in details.items():
        if detail["inputs"] is not None:
            refs = []
            for name, value in detail["inputs"].items():
                text = input_text(value)
                composed[name] = None
                if item_id in looked_up:
                    composed[text] = None  # read from the data, not from the store
                refs.append([name, ref(text)])
            detail["inputs"] = found.inputs[item_id] = refs
        batch[item_id] = detail
        if len(batch) == _BATCH:
            found.items.append(_data_part(batch))
            batch = {}
    if batch:
        found.items.append(_data_part(batch))
    return found


_BATCH = 256
"""Items whose details are written to the page's data in one call of the encoder."""


def _data_part(details: Mapping[str, Any]) -> str:
    """The items of ``details`` (a dict of some items' details) as the page's data writes them,
    made safe for its script element, without the braces of their dict."""
    return _script_text(_loaded_json(details))[1:-1]


def _page_data(read: _Details, model: str | None) -> str:
    """The page's data, ``{"details": ..., "messages": ..., "model": ...}``, as
    ``_script_markup(_loaded_json(...))`` writes it, from the texts of its parts (a dict's
    text is its items' texts joined by ``", "`` in braces)."""
    parts = ['{"details": {']
    for part in read.items:
        parts += (part, ", ")
    if read.items:
        parts.pop()
    messages = _script_text(_loaded_json(read.messages))
    parts += ('}, "messages": ', messages, ', "model": ', _script_text(_loaded_json(model)), "}")
    return "".join(parts)  # one copy of the data's texts


def _names_setting(value: Any, plain: set[str]) -> bool:
    """Whether a key of ``value`` (dicts and lists, at any depth) names a setting; ``plain``
    holds the keys found not to (every output of a run has the same few)."""
    kind = type(value)
    if kind is dict:
        for key, item in value.items():
            if key not in plain:
                from jurist.redaction import names_setting

                if names_setting(str(key)):
                    return True
                plain.add(key)
            if item and type(item) in _NESTED and _names_setting(item, plain):
                return True
        return False
    if kind in _NESTED:
        for item in value:  # a loop, not any(): most lists are short
            if item and type(item) in _NESTED and _names_setting(item, plain):
                return True
    return False


_NESTED = (dict, list, tuple)


class _TextRefs:
    """:func:`_text_ref` into one ``texts``, each distinct text hashed once (the system message
    every item shares is hashed once, not once per item)."""

    __slots__ = ("_known", "_texts")

    def __init__(self, texts: dict[str, str]) -> None:
        self._texts = texts
        self._known: dict[str, str] = {}

    def __call__(self, text: str) -> str:
        digest = self._known.get(text)
        if digest is None:
            digest = self._known[text] = _text_ref(text, self._texts)
        return digest


def _text_ref(text: str, texts: dict[str, str]) -> str:
    """The key under which ``text`` is kept once in ``texts`` (a prefix of its SHA-256)."""
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    texts.setdefault(digest, text)
    return digest


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _header(manifest: Mapping[str, Any], summary: Any, run_dir: Path) -> list[tuple[str, str]]:
    """The facts the report opens with: what judged what, counts, usage, when."""
    config, dataset = _mapping(manifest.get("config")), _mapping(manifest.get("dataset"))
    counts, manifest_counts = _mapping(summary), _mapping(manifest.get("counts"))
    usage = _mapping(counts.get("usage")) or _mapping(manifest.get("usage"))
    versions = _mapping(manifest.get("versions"))
    program = manifest.get("program") or config.get("program")
    ok = counts.get("ok", manifest_counts.get("ok"))
    failed = counts.get("failed", manifest_counts.get("failed"))
    total = counts.get("items", (ok or 0) + (failed or 0) if ok is not None or failed is not None else None)
    if isinstance(program, Mapping):
        program_text = f"{program.get('path')} (sha256 {str(program.get('sha256', ''))[:12]})"
    else:
        program_text = str(program) if program else "none (the task's own program)"
    dataset_text = str(dataset.get("path") or "")
    if dataset.get("sha256"):
        dataset_text += f" (sha256 {str(dataset['sha256'])[:12]})"
    rows = [
        ("task", str(manifest.get("task") or counts.get("task") or "")),
        ("run", run_dir.name),
        ("judge", str(manifest.get("judge") or "")),
        ("model", str(config.get("model") or "")),
        ("fingerprint", str(manifest.get("judge_fingerprint") or "")),
        ("program", program_text),
        ("dataset", dataset_text),
        ("items", f"{_fmt(total)}: {_fmt(ok)} scored, {_fmt(failed)} failed"),
        (
            "usage",
            f"{_fmt(usage.get('calls', 0))} provider calls, {_fmt(usage.get('cache_hits', 0))} cache hits, "
            f"{_fmt(usage.get('prompt_tokens', 0))} prompt + {_fmt(usage.get('completion_tokens', 0))} "
            f"completion tokens, cost {_money(usage.get('cost'))}",
        ),
        ("status", _status_text(str(manifest.get("status") or ""), ok, failed)),
        ("created", str(manifest.get("created_at") or "")),
        ("finished", str(manifest.get("finished_at") or "")),
        ("jurist", str(versions.get("jurist") or "")),
    ]
    return [(name, value) for name, value in rows if value]


def _status_text(status: str, ok: Any, failed: Any) -> str:
    """The run's status as the page says it: a finished run none of whose items got a verdict
    is ``finished: all items failed``, one with some failed ``finished: N failed``."""
    if status == "finished" and isinstance(failed, int) and failed:
        return "finished: all items failed" if not ok else f"finished: {failed} failed"
    return status


# ---------------------------------------------------------------------- the page


def figure_blocks(figures: Iterable[Figure], *, figure_cache: Path | None = None) -> list[dict[str, Any]]:
    """Each figure drawn as inline SVG, with an anchor (``figure-N``) and ids unique in the page;
    a figure drawn before is read from the figure cache of the folder ``figure_cache``
    (:mod:`jurist.report.svg_cache`), if given."""
    from markupsafe import Markup

    from jurist.report.svg_cache import figure_svgs

    figures = list(figures)
    prefixes = [f"fig{index}-" for index in range(1, len(figures) + 1)]
    svgs = figure_svgs(figures, prefixes, figure_cache)
    # figure_svg's output is matplotlib's SVG, whose text it escapes: safe markup.
    return [
        {"anchor": f"figure-{index}", "figure": figure, "svg": Markup(svg)}
        for index, (figure, svg) in enumerate(zip(figures, svgs, strict=True), start=1)
    ]


def render_run_html(
    run_dir: Path,
    *,
    max_items: int = MAX_ITEMS,
    figures: Sequence[Figure] | None = None,
    review: Review | None = None,
    items: pd.DataFrame | None = None,
    summary: Any = None,
    inputs: InputsLookup | None = None,
    figure_cache: Path | None = None,
) -> str:
    """The HTML report of the run in ``run_dir``, as one self-contained page.

    Reads only the run directory's files. Any of ``figures``, ``review``, ``items`` and
    ``summary`` given is used in place of its file (``figures.json``, ``review.json``,
    ``items.parquet``, ``summary.json``), e.g. when an older run has none.

    Args:
        run_dir: A run directory (from ``jurist judge --out``).
        max_items: Embed at most this many items (the first ones in the table); the page
            says how many of how many are shown.
        figures: The figures to draw instead of ``figures.json``.
        review: The review columns instead of ``review.json``.
        items: The per-item table instead of ``items.parquet`` / ``items.csv``.
        summary: The summary instead of ``summary.json``.
        inputs: The judged inputs of items whose store row records none (an older run),
            e.g. read again from the run's data; without it such items show none.
        figure_cache: The folder of the figure cache (:mod:`jurist.report.svg_cache`) that
            serves figures drawn before and keeps new drawings; ``None``: every figure is drawn.

    Raises:
        RunDirectoryError: ``run_dir`` is not a directory.
    """
    import pandas as pd
    from markupsafe import Markup

    from jurist.errors import RunDirectoryError

    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise RunDirectoryError(f"{run_dir}: not a run directory")
    manifest = _read_json(run_dir / _MANIFEST)
    manifest = manifest if isinstance(manifest, dict) else {}
    if summary is None:
        summary = _read_json(run_dir / _SUMMARY)
    notes: list[str] = []
    if figures is None:
        found = _read_json(run_dir / FIGURES_JSON)
        figures = figures_from_json(found) if isinstance(found, list) else []
        if found is None:
            notes.append(f"no {FIGURES_JSON}: `jurist report RUN` computes the figures of an older run")
    if review is None:
        found = _read_json(run_dir / REVIEW_JSON)
        review = Review.from_json(found) if isinstance(found, dict) else Review()
    if items is None:
        items = _read_items(run_dir)
    table = items if items is not None else pd.DataFrame(columns=["id", "status"])
    if "id" not in table.columns:
        table = table.assign(id=[str(i) for i in range(len(table))])
    shown = table.head(max(0, max_items))
    columns = _columns(table, review)
    ids = [str(value) for value in shown["id"]]
    with _collector_paused():  # tens of thousands of small dicts and lists, none in a cycle
        read = _details(run_dir, ids, inputs)
        messages = read.messages
        if any(read.inputs.values()):
            columns.insert(1, _Column(_TEXT_KEY, "judged text", False))
        keys = [column.key for column in columns if column.key != _TEXT_KEY]
        values = _column_values(shown, [*keys, "status", *([review.agrees] if review.agrees else [])])
        values[_TEXT_KEY] = [
            snippet({name: messages[digest] for name, digest in read.inputs.get(item_id) or []})
            for item_id in ids
        ]
        unknown = [None] * len(ids)
        rows = _Rows(columns)
        statuses: set[str] = set()
        lists = [values.get(column.key, unknown) for column in columns]
        cells = zip(*lists, strict=True) if lists else repeat((), len(ids))
        agreements = values.get(review.agrees or "", unknown)
        for item_id, status_value, agreement, row_values in zip(
            ids, values.get("status", unknown), agreements, cells, strict=True
        ):
            status = str(status_value or "")
            statuses.add(status)
            rows.add(item_id, status, _agrees(agreement) if review.agrees else "", row_values)
        rows_html = "".join(rows.parts)
        read.rows_fresh = "".join(rows.fresh)
    report_md = None
    if (run_dir / _REPORT_MD).is_file():
        report_md = (run_dir / _REPORT_MD).read_text(encoding="utf-8", errors="replace")
    task = str(manifest.get("task") or (summary.get("task") if isinstance(summary, Mapping) else "") or "")
    # Every dict key in the data is text (item ids, field names, hashes): see _loaded_json.
    data = _page_data(read, _model(manifest))
    read.composed[_model(manifest) or ""] = None
    context = {
        "title": f"{task or 'run'} · {run_dir.name}",
        "task": task,
        "header": _header(manifest, summary, run_dir),
        "summary": summary_rows(summary),
        "figures": figure_blocks(figures, figure_cache=figure_cache),
        "columns": columns,
        "shown": rows.count,
        "total": len(table),
        "has_items": items is not None,
        "agreement": bool(review.agrees and review.agrees in table.columns),
        "statuses": sorted(status for status in statuses if status),
        "store_note": read.note,
        "notes": notes,
        "report_md": report_md,
        "run_name": run_dir.name,
        "run_path": str(run_dir),
    }

    def page(rows_html: str, data: str) -> str:
        return render_template("run.html", rows_html=Markup(rows_html), data=Markup(data), **context)

    return _redacted_page(page, rows_html, data, read)


_ROWS_MARK = "<\x00jurist-rows\x00>"
_DATA_MARK = "<\x00jurist-data\x00>"
"""Where the item rows and the page's data go in the page as first rendered (each an element
of its own, as the rows are, and bounded by ``<`` and ``>``, as the data is)."""


def _redacted_page(page: Callable[[str, str], str], rows_html: str, data: str, read: _Details) -> str:
    """``page(rows_html, data)`` (the page with its item rows and its script data), as
    :func:`jurist.redaction.redact` of the whole page gives it, scanning less of it.

    What redaction finds by shape or place never spans a ``<`` or ``>``, so the page redacts
    part by part: the frame (the page with marks where the rows and the data go) is scanned as
    it is, and the rows by their distinct parts (``read.rows_fresh``: a cell that many rows
    share is scanned once; the rows are redacted as they are when anything is found). The
    data (most of the page) is texts the run store redacted when it wrote them (messages,
    inputs, replies, outputs, errors), which are not scanned again, joined with texts this
    page composes (ids, statuses, rationales, roles, names, and any input read from the
    data): those are scanned, each once, in the form the page writes them. A page in which a
    configured secret of this process occurs, a composed text would be redacted, or an output
    key names a setting (whose value the joined JSON shows beside it) is redacted whole, as
    before."""
    from jurist.redaction import finds, redact, secret_in

    frame = page(_ROWS_MARK, _DATA_MARK)
    head, _, rest = frame.partition(_ROWS_MARK)
    middle, _, tail = rest.partition(_DATA_MARK)
    if frame.count(_ROWS_MARK) != 1 or frame.count(_DATA_MARK) != 1 or _DATA_MARK not in rest:
        return redact(page(rows_html, data))  # a mark in a figure's SVG: never, but not trusted
    whole = "".join((head, rows_html, middle, data, tail))
    if read.names_setting or secret_in(whole) or finds(_script_text(_loaded_json(list(read.composed)))):
        return redact(whole)
    clean_frame = redact(frame)
    clean_rows = read.rows_fresh is not None and not finds(read.rows_fresh)
    if clean_rows and clean_frame == frame:
        return whole  # nothing to redact
    head, _, rest = clean_frame.partition(_ROWS_MARK)
    middle, _, tail = rest.partition(_DATA_MARK)
    return "".join((head, rows_html if clean_rows else redact(rows_html), middle, data, tail))


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector in the context (as it was after). Reading a
    run's items makes many small objects, none in a cycle; each collection they set off walks
    every object of the process (pandas, the judge, the figures), which cost more than
    reading them."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _model(manifest: Mapping[str, Any]) -> str | None:
    config = manifest.get("config")
    return str(config.get("model")) if isinstance(config, Mapping) and config.get("model") else None


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("jurist")
    except PackageNotFoundError:
        return "unknown"


def write_run_views(
    run_dir: Path,
    *,
    figures: Sequence[Figure],
    review: Review,
    items: pd.DataFrame,
    summary: dict[str, Any],
    inputs: InputsLookup | None = None,
    figure_cache: Path | None = None,
) -> Path:
    """Write a scored run's ``figures.json``, ``review.json`` and ``report.html`` into ``run_dir``.

    The report takes values, never a task: the figures and review columns (what a task's
    ``figures`` and ``review`` give; a confidence column no item fills is dropped from the
    review), and the per-item table and summary, which stand in for files the run directory
    does not hold. The page is :func:`render_run_html` of the
    run directory. Each file is written atomically and redacted, under the run directory's
    lock. ``figure_cache`` is the folder of the figure cache the page's figures are served
    from and kept in (:mod:`jurist.report.svg_cache`; ``None``: drawn, not kept).

    Returns:
        The path of ``report.html``.
    """
    from jurist.runner.lock import run_lock

    run_dir = Path(run_dir)
    figures = list(figures)
    if review.confidence is not None and not (
        review.confidence in items and bool(items[review.confidence].notna().any())
    ):
        # A confidence column no item fills (a YAML judge that states none and was not
        # weighed): the report and the viewer show no confidence column or queue.
        review = replace(review, confidence=None)
    with run_lock(run_dir):
        atomic_write_text(run_dir / FIGURES_JSON, dumps(redact_value(figures_to_json(figures))))
        atomic_write_text(run_dir / REVIEW_JSON, dumps(review.to_json()))
        has_items = (run_dir / "items.parquet").is_file() or (run_dir / "items.csv").is_file()
        page = render_run_html(
            run_dir,
            figures=figures,
            review=review,
            items=None if has_items else items,
            summary=None if (run_dir / _SUMMARY).is_file() else summary,
            inputs=inputs,
            figure_cache=figure_cache,
        )
        path = run_dir / REPORT_HTML
        with atomic_path(path, redacted=True) as tmp:  # render_run_html redacted the page
            tmp.write_text(page, encoding="utf-8")
    return path
