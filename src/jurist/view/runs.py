"""The runs under one folder: found at any depth, described from their manifests and summaries.

A run directory is a folder holding a ``manifest.json`` with a ``task`` (what ``jurist judge
--out`` writes). A run's id is its path relative to the folder the viewer serves, with
``/`` between parts; :func:`resolve_run` turns an id back into the directory and refuses
anything that resolves outside that folder (``../``, an absolute path, a symbolic link
that leads out) and any run directory in which a file the viewer reads or writes is a
symbolic link (:data:`RUN_FILES`). Every file is read without following a link
(:mod:`jurist.view.files`). Nothing here writes into a run directory.
"""

from __future__ import annotations

import json
import math
import os
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from jurist.errors import JuristError, RunDirectoryError
from jurist.report.figures import Figure
from jurist.report.review import Review
from jurist.view.files import LinkedFileError, is_regular_file, read_bytes
from jurist.view.labels import LABELS_FILE

__all__ = [
    "FIGURES_FILE",
    "ITEMS_FILE",
    "MANIFEST",
    "REPORT_HTML_FILE",
    "REPORT_MD_FILE",
    "REVIEW_FILE",
    "RUN_FILES",
    "SUMMARY_FILE",
    "RunRecord",
    "file_signature",
    "find_runs",
    "HEADLINE",
    "HEADLINE_ORDER",
    "headline_metrics",
    "headline_of",
    "history_figure",
    "read_json",
    "resolve_run",
    "run_id",
    "run_record",
    "run_review",
]

MANIFEST = "manifest.json"
SUMMARY_FILE = "summary.json"
ITEMS_FILE = "items.parquet"
REVIEW_FILE = "review.json"
FIGURES_FILE = "figures.json"
REPORT_HTML_FILE = "report.html"
REPORT_MD_FILE = "report.md"
RESULTS_DB = "results.sqlite"

RUN_FILES = (
    MANIFEST,
    SUMMARY_FILE,
    REVIEW_FILE,
    FIGURES_FILE,
    ITEMS_FILE,
    REPORT_HTML_FILE,
    REPORT_MD_FILE,
    LABELS_FILE,
    RESULTS_DB,
    f"{RESULTS_DB}-wal",
    f"{RESULTS_DB}-shm",
    f"{RESULTS_DB}-journal",
)
"""The files of a run directory the viewer reads or writes: a run in which one of them is a
symbolic link is not served (:func:`resolve_run`)."""

_SKIPPED_SECTIONS = frozenset({"usage", "run", "latency_s", "failure_kinds", "gold"})
"""Summary sections that hold bookkeeping (usage, timings, the gold file's row counts), not
figures of how well the judge did."""

_HEADLINE_DEPTH = 3


def read_json(path: Path) -> Any:
    """The JSON document at ``path``, or ``None`` when it is missing, not JSON (a run that is
    being written, or a file of another tool), a symbolic link or not a regular file (never
    followed)."""
    try:
        return json.loads(read_bytes(path))
    except (OSError, ValueError, LinkedFileError):
        return None


def file_signature(path: Path) -> tuple[int, int] | None:
    """What tells a file's versions apart: its modification time and size (``None`` when it
    cannot be read); a symbolic link's own, never its target's."""
    try:
        stat = path.lstat()
    except OSError:
        return None
    return (stat.st_mtime_ns, stat.st_size)


class _FileCache:
    """Parsed JSON files, read again only when their size or modification time changes."""

    def __init__(self, size: int = 4096) -> None:
        self._size = size
        self._entries: dict[Path, tuple[tuple[int, int], Any]] = {}
        self._lock = threading.Lock()

    def get(self, path: Path) -> Any:
        signature = file_signature(path)
        if signature is None:
            return None
        with self._lock:
            found = self._entries.get(path)
            if found is not None and found[0] == signature:
                return found[1]
        value = read_json(path)
        with self._lock:
            if len(self._entries) >= self._size:
                self._entries.pop(next(iter(self._entries)))
            self._entries[path] = (signature, value)
        return value


_json_files = _FileCache()


def headline_metrics(summary: Any) -> dict[str, float]:
    """The figures of a run's ``summary.json`` worth a column in the run history.

    These are the finite non-integer numbers up to three levels deep (rates, means, errors,
    agreement: ``accuracy``, ``agreement.kappa``, ``trace.adherence.mean``), named by their
    dotted path. Left out: integers (counts such as ``items`` or ``verdicts.A``), the bounds of
    an interval (names ending in ``_low`` / ``_high``), and bookkeeping sections (``usage``,
    ``run``, ``latency_s``, ``failure_kinds``, ``gold``).
    """
    found: dict[str, float] = {}

    def walk(value: Any, path: tuple[str, ...]) -> None:
        if isinstance(value, Mapping):
            if len(path) >= _HEADLINE_DEPTH:
                return
            for key, inner in value.items():
                name = str(key)
                if not path and name in _SKIPPED_SECTIONS:
                    continue
                if name.endswith(("_low", "_high")):
                    continue
                walk(inner, (*path, name))
        elif isinstance(value, float) and math.isfinite(value) and path:
            found[".".join(path)] = value

    walk(summary if isinstance(summary, Mapping) else {}, ())
    return found


HEADLINE_ORDER = (
    "agreement.qwk",
    "agreement.hallucination_auroc",
    "agreement.accuracy",
    "agreement.agreement",
    "agreement.auroc",
    "agreement.kappa",
    "agreement.spearman",
    "accuracy",
    "kappa",
    "auroc",
    "agreement.mae",
    "mae",
)
"""The figures that head a run, in order of preference: agreement with gold as the task's
console line reports it (QWK for a score, AUROC for RAGBench's hallucination, accuracy for
labels), then plain figures of runs without gold."""


def headline_of(metrics: Mapping[str, float]) -> tuple[str, float] | None:
    """The headline figure of a run's :func:`headline_metrics` (see :data:`HEADLINE_ORDER`)."""
    for name in HEADLINE_ORDER:
        if name in metrics:
            return name, metrics[name]
    for name, value in metrics.items():
        return name, value
    return None


@dataclass
class RunRecord:
    """One run as the history lists it.

    Attributes:
        id: The run directory relative to the served folder (``/`` separated; ``.`` for the
            folder itself).
        path: The run directory.
        task: The task name.
        judge: The judge's name (the baseline's, or the config's).
        model: The model the config names (``baseline`` for the offline judge).
        program: The compiled program (``file (sha256 prefix)``), or ``""`` for the task's own.
        fingerprint: The judge's fingerprint (changes with the prompt, model and settings).
        dataset: The judged data's file name, and the path in full.
        created: When the run started (ISO 8601), ``""`` if unknown.
        status: ``running``, ``finished``, ``interrupted`` or ``stopped``.
        items: Items recorded (from ``summary.json``, else the manifest's counts).
        ok: Items with a verdict.
        failed: Items that failed.
        cost: The run's cost in USD, where the provider's price is known.
        metrics: The headline figures (:func:`headline_metrics`).
    """

    id: str
    path: Path
    task: str
    judge: str
    model: str
    program: str
    fingerprint: str
    dataset: str
    dataset_path: str
    created: str
    status: str
    items: int | None
    ok: int | None
    failed: int | None
    cost: float | None
    metrics: dict[str, float] = field(default_factory=dict)

    @property
    def state(self) -> str:
        """The status as a page shows it: ``all failed`` for a finished run none of whose
        items has a verdict, ``finished, N failed`` when some failed, else :attr:`status`."""
        if self.status == "finished" and self.failed:
            return "all failed" if not self.ok else f"finished, {self.failed} failed"
        return self.status

    @property
    def state_class(self) -> str:
        """The CSS class of :attr:`state`: ``status-failed``, ``status-partial`` or ``status-<status>``."""
        if self.status == "finished" and self.failed:
            return "status-failed" if not self.ok else "status-partial"
        return f"status-{self.status}"

    @property
    def headline(self) -> tuple[str, float] | None:
        """The run's headline figure (name, value): the first of :data:`HEADLINE_ORDER` its
        summary has, else its first figure; ``None`` when it has none."""
        return headline_of(self.metrics)

    @property
    def created_at(self) -> datetime | None:
        """:attr:`created` as a time, or ``None``."""
        try:
            return datetime.fromisoformat(self.created)
        except ValueError:
            return None


def run_id(root: Path, run_dir: Path) -> str:
    """The id of ``run_dir`` under ``root`` (its relative path, ``/`` separated)."""
    relative = run_dir.resolve().relative_to(root.resolve())
    return relative.as_posix() or "."


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _integer(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _program_text(program: Any) -> str:
    if isinstance(program, Mapping) and program.get("path"):
        digest = str(program.get("sha256") or "")[:12]
        name = Path(str(program["path"])).name
        return f"{name} ({digest})" if digest else name
    return str(program) if program else ""


def run_record(root: Path, run_dir: Path) -> RunRecord | None:
    """The history entry of the run in ``run_dir``, or ``None`` when its manifest is not a
    jurist run's (missing, not JSON, no ``task``)."""
    manifest = _json_files.get(run_dir / MANIFEST)
    if not isinstance(manifest, Mapping) or not manifest.get("task"):
        return None
    summary = _json_files.get(run_dir / SUMMARY_FILE)
    summary = summary if isinstance(summary, Mapping) else {}
    config, dataset, counts = (_mapping(manifest.get(key)) for key in ("config", "dataset", "counts"))
    usage = _mapping(summary.get("usage")) or _mapping(manifest.get("usage"))
    cost = usage.get("cost")
    ok, failed = _integer(summary.get("ok")), _integer(summary.get("failed"))
    if ok is None:
        ok, failed = _integer(counts.get("ok")), _integer(counts.get("failed"))
    items = _integer(summary.get("items"))
    if items is None and ok is not None and failed is not None:
        items = ok + failed
    data_path = str(dataset.get("path") or "")
    return RunRecord(
        id=run_id(root, run_dir),
        path=run_dir,
        task=str(manifest.get("task")),
        judge=str(manifest.get("judge") or ""),
        model=str(config.get("model") or ""),
        program=_program_text(manifest.get("program") or config.get("program")),
        fingerprint=str(manifest.get("judge_fingerprint") or ""),
        dataset=Path(data_path).name if data_path else "",
        dataset_path=data_path,
        created=str(manifest.get("created_at") or ""),
        status=str(manifest.get("status") or "unknown"),
        items=items,
        ok=ok,
        failed=failed,
        cost=float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None,
        metrics=headline_metrics(summary),
    )


def find_runs(root: Path) -> list[RunRecord]:
    """Every run directory under ``root`` (``root`` itself included), newest first.

    The walk follows no symbolic link and skips hidden folders (``.jurist_cache``, ``.git``),
    so a response cache beside the runs is never read.
    """
    root = root.resolve()
    found: list[RunRecord] = []
    for folder, folders, files in os.walk(root):
        folders[:] = sorted(name for name in folders if not name.startswith(".") and name != "__pycache__")
        if MANIFEST in files:
            record = run_record(root, Path(folder))
            if record is not None:
                found.append(record)
    found.sort(key=lambda record: (record.created, record.id), reverse=True)
    return found


def linked_files(run_dir: Path) -> list[str]:
    """The files of :data:`RUN_FILES` in ``run_dir`` that are symbolic links or not regular
    files (directories, FIFOs, devices)."""
    found = []
    for name in RUN_FILES:
        path = run_dir / name
        if os.path.lexists(path) and not is_regular_file(path):
            found.append(name)
    return found


def resolve_run(root: Path, identifier: str) -> Path:
    """The run directory whose id is ``identifier`` (a path relative to ``root``).

    Raises:
        RunDirectoryError: ``identifier`` is empty, absolute, resolves outside ``root`` (``..``,
            a symbolic link that leads out), or names no run directory.
        LinkedFileError: A file of the run the viewer reads or writes (:data:`RUN_FILES`) is a
            symbolic link or not a regular file: the run is not served.
    """
    base = root.resolve()
    text = identifier.strip()
    if not text or "\x00" in text or text.startswith(("/", "\\")) or (len(text) > 1 and text[1] == ":"):
        raise RunDirectoryError(f"no run {identifier!r} in the served folder")
    candidate = (base / text).resolve()
    if candidate != base and base not in candidate.parents:
        raise RunDirectoryError(f"no run {identifier!r} in the served folder")
    if not os.path.lexists(candidate / MANIFEST):
        raise RunDirectoryError(f"no run {identifier!r} in the served folder")
    linked = linked_files(candidate)
    if linked:
        what = (
            "is a symbolic link or not a regular file"
            if len(linked) == 1
            else "are links or not regular files"
        )
        raise LinkedFileError(
            f"run {identifier!r} is not served: {', '.join(linked)} {what}; jurist view follows no "
            "link in a run directory (replace it with a copy of the file)"
        )
    return candidate


_reviews: dict[Path, tuple[tuple[Any, ...], Review]] = {}
_reviews_lock = threading.Lock()


def run_review(run_dir: Path) -> Review:
    """Which per-item columns of the run people review: its ``review.json``, else what the task
    that judged it says (the task is looked up again), else nothing (:class:`Review` ``()``).

    The answer is kept until ``review.json`` or ``manifest.json`` changes.
    """
    key = (file_signature(run_dir / REVIEW_FILE), file_signature(run_dir / MANIFEST))
    with _reviews_lock:
        found = _reviews.get(run_dir)
        if found is not None and found[0] == key:
            return found[1]
    review = _read_review(run_dir)
    with _reviews_lock:
        if len(_reviews) > 1024:
            _reviews.clear()
        _reviews[run_dir] = (key, review)
    return review


def _read_review(run_dir: Path) -> Review:
    found = _json_files.get(run_dir / REVIEW_FILE)
    if isinstance(found, Mapping):
        try:
            return Review.from_json(found)
        except (KeyError, TypeError, ValueError):
            pass
    try:
        from jurist.tasks import run_task

        task, options = run_task(run_dir)
        return task.review(options)
    except (JuristError, OSError, ValueError):
        return Review()


HEADLINE = "headline"
"""The figure :func:`history_figure` plots for each run its own :attr:`RunRecord.headline`."""


def history_figure(runs: Iterable[RunRecord], metric: str, *, most: int = 30) -> Figure:
    """The runs' figures: with ``metric`` :data:`HEADLINE`, a bar per run (the ``most`` newest,
    oldest first) of its own headline figure, coloured by which figure it is; else ``metric``
    of each run over time, one line per judge.

    Over time, the x axis is the time since the first run, in hours when the runs span less
    than two days, else in days; runs without a start time or without the metric are left
    out. Either caption gives the values drawn.
    """
    listed = list(runs)
    if metric == HEADLINE:
        return _headline_bars(listed, most)
    points: dict[str, list[tuple[datetime, float]]] = {}
    for record in listed:
        value = record.metrics.get(metric)
        when = record.created_at
        if value is None or when is None:
            continue
        points.setdefault(record.judge or record.model or "judge", []).append((when, value))
    if not points:
        return Figure("lines", f"{metric} over time", {"series": []}, "No run has this figure.")
    times = [when for series in points.values() for when, _ in series]
    first = min(times)
    span_days = (max(times) - first).total_seconds() / 86400
    unit, scale = ("hours", 3600.0) if span_days < 2 else ("days", 86400.0)
    series = []
    latest = []
    for judge, found in sorted(points.items()):
        found.sort()
        series.append(
            {
                "name": judge,
                "x": [(when - first).total_seconds() / scale for when, _ in found],
                "y": [value for _, value in found],
            }
        )
        latest.append(f"{judge} {found[-1][1]:.3g}")
    return Figure(
        "lines",
        f"{metric} over time",
        {"series": series, "xlabel": f"{unit} since {first.isoformat(timespec='minutes')}", "ylabel": metric},
        "One point per run, one line per judge; latest: " + ", ".join(latest) + ".",
    )


def _headline_bars(runs: list[RunRecord], most: int) -> Figure:
    """A bar per run of its headline figure (see :func:`history_figure`)."""
    shown = [record for record in runs if record.headline is not None][:most]
    shown.reverse()  # oldest first, as time runs
    title = "Headline figure of each run"
    if not shown:
        return Figure("bars", title, {"bars": []}, "No run has a figure.")
    bars = []
    values = []
    for record in shown:
        name, value = record.headline or ("", 0.0)
        bars.append({"label": record.id, "value": value, "group": name.removeprefix("agreement.")})
        values.append(value)
    data: dict[str, Any] = {"bars": bars, "ylabel": "headline figure"}
    if all(0.0 <= value <= 1.0 for value in values):
        data["ylim"] = [0.0, 1.0]
    caption = "Each run's headline figure, oldest left: " + "; ".join(
        f"{bar['label']} {bar['group']} {bar['value']:.3g}" for bar in bars
    )
    return Figure("bars", title, data, caption + ".")
