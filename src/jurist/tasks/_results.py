"""What a scored run is: the per-item table, the summary, the report, and how they are written.

:class:`Scores` is what a task's ``score`` hook returns, :class:`JudgeRun` what its
``judge`` hook returns, and :class:`JudgedItems` what ``jurist.judge`` gives a user (the
per-item DataFrame that also knows its run). The helpers build the per-item table column by
column (:func:`items_table`), count items, read a run's manifest and write the exports
atomically, for every task alike.

The exports are written as a stream: ``results.jsonl`` a record at a time from the run
store, ``items.csv`` and ``items.parquet`` a chunk of :data:`PARQUET_ROW_GROUP` rows at a
time (each chunk redacted, its list and dict cells JSON-encoded for Parquet, then written),
so writing them holds one chunk beyond the per-item table, never a copy of the table.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from jurist.atomic import atomic_path, atomic_write_text
from jurist.redaction import redact, redact_value, redacting_once
from jurist.report.console import Headline, with_interval
from jurist.report.jsonout import dumps, json_ready
from jurist.schemas import ItemResult
from jurist.tasks._columns import Column

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "JudgeRun",
    "JudgedItems",
    "Scores",
    "atomic_write_text",
    "items_table",
    "json_ready",
    "run_counts",
    "run_info",
    "strict_json",
    "write_exports",
    "write_files",
]


@dataclass
class Scores:
    """A scored run: one row per item (or per judged unit), the summary, and where it was written.

    Attributes:
        items: The per-item table (``id``, ``status``, the verdict, the per-item metrics, ...).
        summary: JSON-ready aggregate figures (``summary.json``): a mapping, or for a task
            that scores several files at once a list of them (RGB prediction files).
        report: The Markdown report (``report.md``).
        extra: Task-specific objects a Python caller may want (e.g. pairwise agreement tables).
    """

    items: pd.DataFrame
    summary: Any
    report: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    headline: list[Headline] = field(default_factory=list)
    """The task's headline figures (:meth:`jurist.Task.headline`), set by the verbs."""

    def __repr__(self) -> str:
        return f"<Scores {_counts_text(self.summary)}{_headline_text(self.headline)}>"

    def _repr_html_(self) -> str:
        """Jupyter's display: the headline figures and the counts, as a small table."""
        return _html_card("Scores", self.summary, self.headline)


@dataclass
class JudgeRun:
    """A finished ``judge`` call: its run directory, the scores of what it holds, and what this
    call did (``now``: the runner's :class:`~jurist.runner.RunSummary` of items judged and
    skipped and the calls made; ``None`` when not known, e.g. for a jury)."""

    run_dir: Path
    scores: Scores
    now: Any = None

    @property
    def items(self) -> pd.DataFrame:
        return self.scores.items

    @property
    def summary(self) -> Any:
        return self.scores.summary


class JudgedItems(pd.DataFrame):
    """What ``jurist.judge`` returns: the per-item table of a run, one row per item, which
    also knows its run directory, summary, report and any task-specific extras."""

    _metadata = ["run_dir", "summary", "report", "extra", "headline"]  # noqa: RUF012 - pandas' subclass protocol

    @property
    def _constructor(self) -> type[JudgedItems]:
        return JudgedItems

    @property
    def scores(self) -> Scores:
        """The same run as :class:`Scores` (what the task hooks take)."""
        return Scores(
            items=pd.DataFrame(self),
            summary=self.summary,
            report=self.report,
            extra=self.extra,
            headline=list(getattr(self, "headline", None) or []),
        )

    def _repr_html_(self) -> str | None:
        """Jupyter's display: the run's headline and counts above the table's own display."""
        table = super()._repr_html_()
        if getattr(self, "summary", None) is None:
            return table
        card = _html_card("JudgedItems", self.summary, getattr(self, "headline", None) or [])
        return card + (table or "")

    @classmethod
    def of(cls, run: JudgeRun) -> JudgedItems:
        """The table of a finished run, with its run directory, summary, report and extras."""
        frame = cls(run.scores.items)
        frame.run_dir = run.run_dir
        frame.summary = run.scores.summary
        frame.report = run.scores.report
        frame.extra = run.scores.extra
        frame.headline = run.scores.headline
        return frame


def _counts_text(summary: Any) -> str:
    """``support-answers: 16 items, 16 scored, 0 failed`` of a summary (a list: its files)."""
    if not isinstance(summary, dict):
        return f"{len(summary)} scored files" if isinstance(summary, list) else ""
    task = summary.get("task")
    counts = (
        f"{summary.get('items', 0)} items, {summary.get('ok', 0)} scored, {summary.get('failed', 0)} failed"
    )
    return f"{task}: {counts}" if task else counts


def _headline_text(headline: list[Headline]) -> str:
    return "".join(f" · {figure.text()}" for figure in headline)


def _html_card(kind: str, summary: Any, headline: list[Headline]) -> str:
    """A small HTML table: what is shown (the task and counts), then each headline figure."""
    from html import escape

    title = f"{escape(kind)} {escape(_counts_text(summary))}"
    rows = [f"<tr><th colspan='2' style='text-align:left'>{title}</th></tr>"]
    rows += [
        f"<tr><td>{escape(figure.name)}</td><td style='text-align:left'>"
        f"{escape(with_interval(figure.value, figure.low, figure.high))}</td></tr>"
        for figure in headline
    ]
    return "<table>" + "".join(rows) + "</table>"


PARQUET_ROW_GROUP = 10_000
"""Rows per row group of ``items.parquet``: a viewer reads one page's group, not the file."""


def strict_json(value: Any, *, indent: int | None = 2, ensure_ascii: bool = True) -> str:
    """``value`` as strict JSON (``null``, never ``NaN``): :func:`jurist.report.jsonout.dumps`."""
    return dumps(value, indent=indent, ensure_ascii=ensure_ascii)


def run_counts(items: pd.DataFrame) -> dict[str, Any]:
    """Items, ok, failed (with ids and kinds) and usage of a per-item table."""
    status = items["status"] if "status" in items else pd.Series(dtype=object)
    failed = items[status == "failed"]
    usage: dict[str, Any] = {}
    for column in ("calls", "cache_hits", "prompt_tokens", "completion_tokens"):
        usage[column] = int(pd.to_numeric(items[column]).sum()) if column in items else 0
    if "cost" in items and items["cost"].notna().any():
        usage["cost"] = float(pd.to_numeric(items["cost"]).sum())
    else:
        usage["cost"] = None
    return {
        "items": int(len(items)),
        "ok": int((status == "ok").sum()),
        "failed": int(len(failed)),
        "failed_ids": [str(i) for i in failed["id"].tolist()[:100]] if len(failed) else [],
        "failure_kinds": failed["error_type"].value_counts().to_dict() if len(failed) else {},
        "usage": usage,
    }


def run_info(path: Path) -> dict[str, Any]:
    """``{"run": {...}}`` from the manifest of a run directory, or of the folder holding a
    ``results.jsonl`` exported from one (judge, model, dataset, status), or ``{}``."""
    from jurist.tasks._recorded_run import run_manifest

    manifest = run_manifest(path)
    if not manifest:
        return {}
    run = {key: manifest.get(key) for key in ("judge", "judge_fingerprint", "dataset", "status")}
    run["model"] = manifest.get("config", {}).get("model")
    return {"run": run}


def run_data_file(path: Path) -> Path | None:
    """The data file a run directory's manifest names (``dataset.path``), or ``None`` (no run
    directory, no manifest, or one that names no file)."""
    from jurist.tasks._recorded_run import run_manifest

    if not path.is_dir():
        return None
    try:
        dataset = run_manifest(path).get("dataset")
    except ValueError:
        return None
    found = dataset.get("path") if isinstance(dataset, dict) else None
    return Path(found) if isinstance(found, str) else None


def items_table(rows: Iterable[dict[str, Any]]) -> pd.DataFrame:
    """The per-item table of ``rows``, built column by column as they come.

    The same frame as ``pd.DataFrame(list(rows))`` (columns in order of first appearance,
    NaN where a row lacks a column, each column's dtype inferred from all its values),
    without holding every row's dict at once, nor every value as a Python object: each
    column keeps its values in chunks stored as arrays where they have one plain type
    (:class:`jurist.tasks._columns.Column`).
    """
    columns: dict[str, Column] = {}
    count = 0
    for row in rows:
        for key, value in row.items():
            column = columns.get(key)
            if column is None:
                column = columns[key] = Column(missing=count)
            column.append(value)
        count += 1
        if len(row) < len(columns):
            for column in columns.values():
                if len(column) < count:
                    column.append(np.nan)
    if not columns:
        return pd.DataFrame(index=pd.RangeIndex(count))
    return pd.DataFrame({key: column.values() for key, column in columns.items()})


def _redacted_table(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with every text (and list or dict) cell redacted; the same frame if none changes."""
    result = table
    for column in table.columns:
        values = table[column]
        if values.dtype == object or pd.api.types.is_string_dtype(values.dtype):
            redacted = values.map(redact_value)
            if any(new is not old for new, old in zip(redacted, values, strict=True)):
                if result is table:
                    result = table.copy()
                result[column] = redacted
    return result


def _nested_columns(table: pd.DataFrame) -> list[str]:
    """The columns holding a list or dict in some row (Parquet gets them as JSON text)."""
    return [
        column
        for column in table.columns
        if table[column].dtype == object and any(isinstance(v, list | dict) for v in table[column])
    ]


def _json_encoded(chunk: pd.DataFrame, nested: list[str]) -> pd.DataFrame:
    """``chunk`` with each cell of the ``nested`` columns as JSON text (``None`` stays ``None``)."""
    if not nested:
        return chunk
    flat = chunk.copy()
    for column in nested:
        flat[column] = flat[column].map(lambda v: json.dumps(v, default=str) if v is not None else None)
    return flat


def _parquet_schema(table: pd.DataFrame, nested: list[str]) -> pa.Schema:
    """The Arrow schema ``to_parquet`` of the whole redacted table would write (types inferred
    from every row, with the pandas metadata), found without converting the table.

    JSON-encoded columns and object columns of text are text as pandas makes it when it maps
    a column (redaction maps every text column: its ``str`` dtype where pandas has one), other
    object columns are typed from their values, typed columns from their dtype.
    """
    import pyarrow as pa

    mapped = pd.DataFrame({"text": pd.Series(["text"], dtype=object).map(str)})
    text = pa.Schema.from_pandas(mapped, preserve_index=False).field(0).type
    fields, texts = [], []
    for column in table.columns:
        values = table[column]
        if column in nested:
            kind = text
        elif values.dtype == object:
            kind = pa.infer_type(values.to_numpy(), from_pandas=True)
            kind = text if kind == pa.string() else kind
        else:
            kind = pa.Schema.from_pandas(values.iloc[:0].to_frame(), preserve_index=False).field(0).type
        if kind == text and values.dtype == object:
            texts.append(column)
        fields.append(pa.field(str(column), kind))
    head = table.iloc[:0].astype(dict.fromkeys(texts, mapped["text"].dtype))
    return pa.Table.from_pandas(head, schema=pa.schema(fields), preserve_index=False).schema


def write_exports(run_dir: Path, scores: Scores, results: Iterator[ItemResult]) -> None:
    """Write a scored run's exports into its directory, each through a temporary file.

    Everything is redacted (:mod:`jurist.redaction`): results (a record at a time), the
    per-item table (a chunk at a time, also in Parquet, which cannot be redacted after
    writing), the summary and the report. ``items.csv`` and ``items.parquet`` hold the same
    rows as ``scores.items.to_csv`` and ``to_parquet`` of the redacted table would, in row
    groups of :data:`PARQUET_ROW_GROUP`, but are written a row group at a time.
    """
    with redacting_once():  # the secrets are read once, not once per cell
        _write_exports(run_dir, scores, results)


def _write_exports(run_dir: Path, scores: Scores, results: Iterator[ItemResult]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    with (
        atomic_path(run_dir / "results.jsonl", redacted=True) as tmp,
        open(tmp, "w", encoding="utf-8") as handle,
    ):
        for result in results:
            handle.write(redact(result.model_dump_json()) + "\n")
    table = scores.items
    nested = _nested_columns(table)
    schema = _parquet_schema(table, nested)
    with (
        atomic_path(run_dir / "items.csv", redacted=True) as csv_tmp,
        open(csv_tmp, "w", encoding="utf-8", newline="") as csv,
        atomic_path(run_dir / "items.parquet") as parquet_tmp,
        pq.ParquetWriter(parquet_tmp, schema, compression="snappy") as parquet,
    ):
        for start in range(0, max(len(table), 1), PARQUET_ROW_GROUP):
            chunk = _redacted_table(table.iloc[start : start + PARQUET_ROW_GROUP])
            csv.write(redact(chunk.to_csv(index=False, header=start == 0)))
            flat = pa.Table.from_pandas(_json_encoded(chunk, nested), schema=schema, preserve_index=False)
            parquet.write_table(flat, row_group_size=PARQUET_ROW_GROUP)
    atomic_write_text(run_dir / "summary.json", strict_json(redact_value(scores.summary)))
    atomic_write_text(run_dir / "report.md", scores.report)


TABLE_FORMATS = (".csv", ".tsv", ".parquet", ".xlsx")
"""The suffixes a task's own export table may have (:func:`write_files`)."""


def write_files(folder: Path, files: Mapping[str, pd.DataFrame | str]) -> None:
    """Write a task's own export files (:meth:`jurist.Task.export_files`) into ``folder`` (a
    run directory, beside the standard exports; made if missing), each through a temporary
    file and redacted like ``items.csv``: a table in the format its name's suffix says (CSV
    and TSV without the index, TSV with every cell quoted; an ``.xlsx`` file is skipped when
    openpyxl is not installed), a text as it is.

    Raises:
        ValueError: A name is not a plain file name (it would leave ``folder``), or a table's
            suffix is none of :data:`TABLE_FORMATS`.
    """
    for name, value in files.items():
        if Path(name).name != name or name in ("", ".", ".."):
            raise ValueError(f"an export file's name must be a plain file name, got {name!r}")
        if isinstance(value, pd.DataFrame) and Path(name).suffix not in TABLE_FORMATS:
            raise ValueError(f"an export table's name must end in {', '.join(TABLE_FORMATS)}, got {name!r}")
    folder.mkdir(parents=True, exist_ok=True)
    with redacting_once():
        for name, value in files.items():
            path = folder / name
            if isinstance(value, str):
                atomic_write_text(path, value)
            elif not (path.suffix == ".xlsx" and not _has_openpyxl()):
                _write_table(path, _redacted_table(value))


def _write_table(path: Path, table: pd.DataFrame) -> None:
    with atomic_path(path, redacted=True) as tmp:
        if path.suffix == ".csv":
            table.to_csv(tmp, index=False, encoding="utf-8")
        elif path.suffix == ".tsv":
            table.to_csv(tmp, sep="\t", index=False, encoding="utf-8", quoting=csv.QUOTE_ALL)
        elif path.suffix == ".parquet":
            table.to_parquet(tmp, index=False)
        else:
            table.to_excel(tmp, index=False)


def _has_openpyxl() -> bool:
    try:
        import openpyxl  # noqa: F401
    except ImportError:
        return False
    return True
