"""Labels people set on a run's items, and the gold file they become.

Labels are kept in ``labels.jsonl`` in the run directory, one JSON object per line:
``{"item": ID, "label": VALUE, "who": NAME, "when": ISO-8601}``. The file is only ever
appended to, so every change stays on record; the latest line of an item is its label.
The file is read and appended to without following a symbolic link (:mod:`jurist.view.files`):
a ``labels.jsonl`` that is a link (to a file outside the run, or anywhere) is refused with
:class:`~jurist.view.files.LinkedFileError`, never written through.
A label is checked against the task's :class:`~jurist.report.review.LabelSpec` before it
is written, and stored as the value it stands for (``true``, ``3``, ``"relevant"``).

:func:`export_gold` turns the labels into the gold file ``jurist calibrate TASK --gold
FILE`` and ``jurist optimize`` read: the task that judged the run reads the run's data
again and writes its rows with the labels in place of the data's own gold
(:meth:`jurist.Task.gold_rows`).
"""

from __future__ import annotations

import getpass
import json
import os
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from jurist.errors import ConfigError, InputError
from jurist.redaction import redact, redact_value
from jurist.report.review import LabelSpec
from jurist.view.files import open_no_follow, read_text

__all__ = [
    "LABELS_FILE",
    "Label",
    "LabelStore",
    "default_who",
    "export_gold",
    "gold_jsonl",
    "label_spec_of_run",
]

LABELS_FILE = "labels.jsonl"
"""The file of a run directory that holds the labels people set."""

MAX_WHO = 100
"""The longest name a label may carry."""

_append_lock = threading.Lock()


@dataclass(frozen=True)
class Label:
    """One label a person set on one item.

    Attributes:
        item: The item's id.
        label: The label, as the gold value it stands for.
        who: The name of the person who set it.
        when: When it was set (ISO 8601, UTC).
    """

    item: str
    label: Any
    who: str
    when: str

    def to_json(self) -> dict[str, Any]:
        return {"item": self.item, "label": self.label, "who": self.who, "when": self.when}


def default_who() -> str:
    """The name a label carries when none is given: the operating system's user name."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


def _who(value: str | None) -> str:
    text = " ".join((value or "").split())
    if not text:
        return default_who()
    if len(text) > MAX_WHO:
        raise ValueError(f"the name is longer than {MAX_WHO} characters")
    return redact(text)


class LabelStore:
    """The labels of one run directory (``labels.jsonl``).

    Args:
        run_dir: The run directory.
    """

    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / LABELS_FILE

    def append(
        self, item: str, label: Any, who: str | None = None, *, spec: LabelSpec | None = None
    ) -> Label:
        """Record ``label`` for ``item`` (checked by ``spec`` when given) and return the record.

        The line is written with one ``write`` call on a file opened for appending and
        synced to disk, so concurrent writers never interleave within a line.

        Raises:
            ValueError: The label is not one ``spec`` accepts, or the name is too long (the
                message says what is accepted).
            LinkedFileError: ``labels.jsonl`` is a symbolic link or not a regular file
                (nothing is written).
        """
        value = spec.parse(label) if spec is not None else label
        record = Label(
            item=str(item),
            label=value,
            who=_who(who),
            when=datetime.now(UTC).isoformat(timespec="seconds"),
        )
        line = json.dumps(redact_value(record.to_json()), ensure_ascii=False, allow_nan=False) + "\n"
        data = line.encode("utf-8")
        with _append_lock:
            descriptor = open_no_follow(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(descriptor, data)
                os.fsync(descriptor)
            finally:
                os.close(descriptor)
        return record

    def records(self) -> Iterator[Label]:
        """Every label ever set, oldest first.

        Raises:
            InputError: A line is not a label record (the message names the file and line).
            LinkedFileError: ``labels.jsonl`` is a symbolic link or not a regular file.
        """
        try:
            descriptor = open_no_follow(self.path)
        except FileNotFoundError:
            return
        with open(descriptor, encoding="utf-8") as handle:
            for number, text in enumerate(handle, start=1):
                if not text.strip():
                    continue
                try:
                    found = json.loads(text)
                except ValueError as exc:
                    raise InputError(f"not JSON ({exc})", path=self.path, line=number) from None
                if not isinstance(found, Mapping) or "item" not in found or "label" not in found:
                    raise InputError("a label record needs 'item' and 'label'", path=self.path, line=number)
                yield Label(
                    item=str(found["item"]),
                    label=found["label"],
                    who=str(found.get("who") or ""),
                    when=str(found.get("when") or ""),
                )

    def latest(self) -> dict[str, Label]:
        """The label of each labelled item: the last one set."""
        return {record.item: record for record in self.records()}


def label_spec_of_run(run_dir: Path) -> tuple[Any, Any, LabelSpec]:
    """The task that judged the run, its options, and the label a person may set.

    Raises:
        RunDirectoryError: ``run_dir`` is not a run directory.
        ConfigError: The task is not known any more, or its items take no label.
    """
    from jurist.tasks import run_task

    task, options = run_task(run_dir)
    spec = task.review(options).label
    if spec is None:
        raise ConfigError(f"task {task.name!r} takes no labels on its items", field="task")
    return task, options, spec


def gold_rows_of_run(run_dir: Path) -> tuple[list[dict[str, Any]], int]:
    """The gold rows of the run's data with the labels set on it, and how many labels there are.

    Each label is checked again by the task's label (a label written by hand into
    ``labels.jsonl`` that the task does not accept is an error naming the item).

    Raises:
        InputError: The run's data file is gone or unreadable, or a label is invalid.
        ConfigError: The task cannot export labels as gold.
    """
    from jurist.runner import MANIFEST

    task, options, spec = label_spec_of_run(run_dir)
    labels: dict[str, Any] = {}
    store = LabelStore(run_dir)
    for item, record in store.latest().items():
        try:
            labels[item] = spec.parse(record.label)
        except ValueError as exc:
            raise InputError(f"item {item!r}: {exc}", path=store.path) from None
    manifest = json.loads(read_text(run_dir / MANIFEST))
    dataset = manifest.get("dataset") if isinstance(manifest.get("dataset"), Mapping) else {}
    data_path = dataset.get("path")
    if not data_path:
        raise InputError("the run's manifest names no data file", path=run_dir / MANIFEST, field="dataset")
    if not Path(data_path).is_file():
        raise InputError(
            "the data this run judged is no longer there; put it back to export labels", path=data_path
        )
    data = task.read(data_path, options)
    rows = task.gold_rows(data, _by_data_id(labels, task, data, options), options)
    return [redact_value(row) for row in rows], len(labels)


def _by_data_id(labels: dict[str, Any], task: Any, data: Any, options: Any) -> dict[str, Any]:
    """``labels`` keyed by the ids the data itself holds.

    A run's files show an id the redaction changes (a key-shaped id, ``sk-...``) as its
    redacted form (``[REDACTED:<hash>]``, :func:`jurist.redaction.shape_token`), so a label
    is set under that form; it is moved here to the item whose id redacts to it, which the
    task's gold rows join on. The data's items are read only when a label has such an id.
    """
    if not any("[REDACTED" in item for item in labels):
        return labels
    shown: dict[str, str] = {}
    for item in task.items(data, options):
        raw = str(item.id)
        public = redact(raw)
        if public != raw:
            shown.setdefault(public, raw)
    return {shown.get(item, item): value for item, value in labels.items()}


def gold_jsonl(rows: list[dict[str, Any]]) -> str:
    """Gold rows as JSON Lines (one object per line, strict JSON)."""
    from jurist.report.jsonout import dumps

    return "".join(dumps(row, indent=None, ensure_ascii=False) + "\n" for row in rows)


def export_gold(run_dir: Path, out: Path) -> tuple[int, int]:
    """Write the run's gold file (JSON Lines) to ``out``, atomically.

    Returns:
        The rows written and the labelled items among them.
    """
    from jurist.atomic import atomic_write_text

    rows, labelled = gold_rows_of_run(run_dir)
    atomic_write_text(out, gold_jsonl(rows))
    return len(rows), labelled
