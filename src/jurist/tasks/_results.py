"""What a scored run is: the per-item table, the summary, the report, and how they are written.

:class:`Scores` is what a task's ``score`` hook returns, :class:`JudgeRun` what its
``judge`` hook returns, and :class:`JudgedItems` what ``jurist.judge`` gives a user (the
per-item DataFrame that also knows its run). The helpers count items, read a run's
manifest and write the exports atomically, for every task alike.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from jurist.atomic import atomic_write, atomic_write_text, atomic_writer
from jurist.redaction import redact, redact_value
from jurist.report.jsonout import dumps, json_ready
from jurist.schemas import ItemResult

__all__ = [
    "JudgeRun",
    "JudgedItems",
    "Scores",
    "atomic_write_text",
    "json_ready",
    "run_counts",
    "run_info",
    "strict_json",
    "write_exports",
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


@dataclass
class JudgeRun:
    """A finished ``judge`` call: its run directory, and the scores of what it holds."""

    run_dir: Path
    scores: Scores

    @property
    def items(self) -> pd.DataFrame:
        return self.scores.items

    @property
    def summary(self) -> Any:
        return self.scores.summary


class JudgedItems(pd.DataFrame):
    """What ``jurist.judge`` returns: the per-item table of a run, one row per item, which
    also knows its run directory, summary, report and any task-specific extras."""

    _metadata = ["run_dir", "summary", "report", "extra"]  # noqa: RUF012 - pandas' subclass protocol

    @property
    def _constructor(self) -> type[JudgedItems]:
        return JudgedItems

    @property
    def scores(self) -> Scores:
        """The same run as :class:`Scores` (what the task hooks take)."""
        return Scores(items=pd.DataFrame(self), summary=self.summary, report=self.report, extra=self.extra)

    @classmethod
    def of(cls, run: JudgeRun) -> JudgedItems:
        """The table of a finished run, with its run directory, summary, report and extras."""
        frame = cls(run.scores.items)
        frame.run_dir = run.run_dir
        frame.summary = run.scores.summary
        frame.report = run.scores.report
        frame.extra = run.scores.extra
        return frame


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
    """``{"run": {...}}`` from a run directory's manifest (judge, model, dataset, status), or ``{}``."""
    from jurist.runner import MANIFEST

    manifest_path = path / MANIFEST
    if not (path.is_dir() and manifest_path.is_file()):
        return {}
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    run = {key: manifest.get(key) for key in ("judge", "judge_fingerprint", "dataset", "status")}
    run["model"] = manifest.get("config", {}).get("model")
    return {"run": run}


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


def write_exports(run_dir: Path, scores: Scores, results: Iterator[ItemResult]) -> None:
    """Write a scored run's exports into its directory, each through a temporary file.

    Everything is redacted (:mod:`jurist.redaction`): results, the per-item table (also in
    Parquet, which cannot be redacted after writing), the summary and the report.
    """
    with atomic_writer(run_dir / "results.jsonl") as handle:
        for result in results:
            handle.write(redact(result.model_dump_json()) + "\n")
    table = _redacted_table(scores.items)
    atomic_write(run_dir / "items.csv", lambda tmp: table.to_csv(tmp, index=False))
    flat = table.copy()
    for column in flat.columns:
        if flat[column].map(lambda v: isinstance(v, list | dict)).any():
            flat[column] = flat[column].map(lambda v: json.dumps(v, default=str) if v is not None else None)
    atomic_write(
        run_dir / "items.parquet",
        lambda tmp: flat.to_parquet(tmp, index=False, row_group_size=PARQUET_ROW_GROUP),
    )
    atomic_write_text(run_dir / "summary.json", strict_json(redact_value(scores.summary)))
    atomic_write_text(run_dir / "report.md", scores.report)
