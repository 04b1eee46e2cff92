"""The durable record of a run: one SQLite row per finished item.

Each finished item is committed as soon as it completes (WAL journal), so a process killed
at any moment keeps every item it had finished, and a resumed run skips them. Item ids
are the primary key: an item can never be recorded twice.

Every row carries the fingerprint of the judge that produced it (column
``judge_fingerprint``; files written before the column existed get it added, with ``NULL``
for their old rows), so the runner can refuse to mix two judges' results in one directory.

Every row is redacted before it is written (:mod:`jurist.redaction`): an API key the
provider echoed into an error, a raw reply or the parsed output never reaches the file.

A damaged file (not a database, truncated, malformed) is never read past the damage: it
raises :class:`jurist.errors.RunDirectoryError`, whose message names the file and says how
to recover, instead of a traceback.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from jurist.errors import InputError, RunDirectoryError
from jurist.redaction import redact, redact_value
from jurist.schemas import ItemResult, Usage

RESULTS_DB = "results.sqlite"
"""The file of a run directory that holds its finished items."""

RESULTS_JSONL = "results.jsonl"
"""The export of every recorded item, written next to ``results.sqlite`` after scoring."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS results (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    status TEXT NOT NULL,
    output TEXT,
    error TEXT,
    error_type TEXT,
    raw TEXT NOT NULL,
    attempts INTEGER NOT NULL,
    latency_s REAL NOT NULL,
    usage TEXT NOT NULL,
    judge_fingerprint TEXT
)
"""

_DAMAGE = re.compile(r"malformed|not a database|corrupt|disk image", re.I)

T = TypeVar("T")


def damaged_store_error(path: Path, reason: str) -> RunDirectoryError:
    """The error for a ``results.sqlite`` that cannot be read, with the way to recover."""
    export = path.parent / RESULTS_JSONL
    kept = (
        f"; {export} still holds the results exported before (`jurist score` reads it)"
        if export.is_file()
        else ""
    )
    return RunDirectoryError(
        f"{path} is damaged ({reason}): move it aside (mv {path} {path}.damaged) and run the same "
        f"command again to judge the items anew (answers in the response cache cost nothing){kept}"
    )


class ResultStore:
    """Finished items of one run, in ``results.sqlite`` inside the run directory.

    Args:
        path: The database file; created if missing.
        judge_fingerprint: The fingerprint of the judge whose results are written; stored with
            every row :meth:`put` writes. Readers leave it ``None``.

    Raises:
        RunDirectoryError: The file is damaged (not a database, truncated, malformed); the
            message names it and says how to recover.
    """

    def __init__(self, path: Path, *, judge_fingerprint: str | None = None) -> None:
        self.path = path
        self.judge_fingerprint = judge_fingerprint
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        try:
            self._guard(self._open)
        except BaseException:
            self._db.close()
            raise

    def _open(self) -> None:
        self._db.execute("PRAGMA journal_mode=WAL")
        # NORMAL is durable against a killed process (the OS keeps the WAL); FULL adds power loss.
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(_SCHEMA)
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(results)")}
        self._has_fingerprint = "judge_fingerprint" in columns
        if not self._has_fingerprint and self.judge_fingerprint is not None:
            # Migration of a run directory written before rows carried their judge.
            self._db.execute("ALTER TABLE results ADD COLUMN judge_fingerprint TEXT")
            self._has_fingerprint = True
        # Reads every page of an index: a truncated or overwritten file fails here, mostly. (The
        # file is never opened other than through SQLite: closing another descriptor of it would
        # drop this process's SQLite locks, and another process could then delete a live WAL.)
        self._db.execute("SELECT COUNT(*) FROM results").fetchone()

    def _guard(self, action: Callable[[], T]) -> T:
        try:
            return action()
        except sqlite3.DatabaseError as exc:
            text = str(exc)
            if isinstance(exc, sqlite3.OperationalError) and not _DAMAGE.search(text):
                # Not damage: a read-only location, a full disk, a lock held outside jurist.
                raise RunDirectoryError(f"cannot use {self.path}: {text}") from None
            raise damaged_store_error(self.path, text) from None

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> ResultStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def status(self, item_id: str) -> str | None:
        """``'ok'``, ``'failed'`` or ``None`` if the item is not recorded."""
        row = self._guard(
            lambda: self._db.execute("SELECT status FROM results WHERE id = ?", (item_id,)).fetchone()
        )
        return row[0] if row else None

    def put(self, result: ItemResult) -> None:
        """Record a finished item (with this store's judge fingerprint), replacing an earlier
        failed attempt of the same item. Its error, raw answers and output are redacted first."""
        output = redact_value(result.output)
        values: tuple[Any, ...] = (
            result.id,
            result.status,
            json.dumps(output, ensure_ascii=False) if output is not None else None,
            redact(result.error) if result.error else result.error,
            result.error_type,
            json.dumps(redact_value(result.raw), ensure_ascii=False),
            result.attempts,
            result.latency_s,
            result.usage.model_dump_json(),
            self.judge_fingerprint,
        )
        self._guard(
            lambda: self._db.execute(
                "INSERT INTO results (id, status, output, error, error_type, raw, attempts, latency_s, "
                "usage, judge_fingerprint) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT(id) DO UPDATE SET status=excluded.status, output=excluded.output, "
                "error=excluded.error, error_type=excluded.error_type, raw=excluded.raw, "
                "attempts=excluded.attempts, latency_s=excluded.latency_s, usage=excluded.usage, "
                "judge_fingerprint=excluded.judge_fingerprint",
                values,
            )
        )

    def counts(self) -> dict[str, int]:
        """Recorded items per status, e.g. ``{"ok": 10, "failed": 2}``."""
        rows = self._guard(
            lambda: self._db.execute("SELECT status, COUNT(*) FROM results GROUP BY status").fetchall()
        )
        return {status: count for status, count in rows}

    def fingerprints(self) -> set[str | None]:
        """The judge fingerprints of the recorded rows (``None`` for rows older than the column)."""
        if not self._has_fingerprint:
            return {None} if self.counts() else set()
        rows = self._guard(
            lambda: self._db.execute("SELECT DISTINCT judge_fingerprint FROM results").fetchall()
        )
        return {row[0] for row in rows}

    def total_usage(self) -> Usage:
        """The sum of every recorded item's usage."""

        def read() -> Usage:
            total = Usage()
            for (usage,) in self._db.execute("SELECT usage FROM results"):
                total = total.add(Usage.model_validate_json(usage))
            return total

        return self._guard(read)

    def iter_results(self, batch_size: int = 1000) -> Iterator[ItemResult]:
        """Every recorded item in the order they finished, read in batches (bounded memory)."""
        cursor = self._guard(
            lambda: self._db.execute(
                "SELECT id, status, output, error, error_type, raw, attempts, latency_s, usage "
                "FROM results ORDER BY seq"
            )
        )
        while rows := self._guard(lambda: cursor.fetchmany(batch_size)):
            for item_id, status, output, error, error_type, raw, attempts, latency, usage in rows:
                yield ItemResult(
                    id=item_id,
                    status=status,
                    output=json.loads(output) if output is not None else None,
                    error=error,
                    error_type=error_type,
                    raw=json.loads(raw),
                    attempts=attempts,
                    latency_s=latency,
                    usage=Usage.model_validate_json(usage),
                )


def iter_run_results(path: str | Path) -> Iterator[ItemResult]:
    """Every recorded item of a run directory, or of the ``results.jsonl`` exported from one.

    Raises:
        InputError: ``path`` is neither, or a line of the JSONL file is not a result record
            (named by its line number).
        RunDirectoryError: The run directory's ``results.sqlite`` is damaged (the message says
            how to recover).
    """
    location = Path(path)
    if location.is_dir():
        db = location / RESULTS_DB
        if not db.is_file():
            raise InputError("not a run directory (no results.sqlite)", path=location)
        with ResultStore(db) as store:
            yield from store.iter_results()
        return
    if location.suffix.lower() != ".jsonl":
        raise InputError("results must be a run directory or its results.jsonl", path=location)
    with open(location, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                yield ItemResult.model_validate_json(line)
            except ValueError as exc:
                reason = str(exc).splitlines()[0]
                raise InputError(f"not a result record: {reason}", path=location, line=number) from None
