"""The durable record of a run: one SQLite row per finished item.

Finished items are written by one thread (:class:`ResultWriter`) and committed in small
batches (WAL journal): at the latest :data:`COMMIT_EVERY_ITEMS` items or
:data:`COMMIT_EVERY_SECONDS` seconds after an item finished, and when the run ends or is
interrupted. A process killed at any moment keeps every item committed before, and a
resumed run skips them. Item ids are the primary key: an item can never be recorded twice.

Every row carries the fingerprint of the judge that produced it (column
``judge_fingerprint``), so the runner can refuse to mix two judges' results in one directory.

Every row records the item's position in its dataset (column ``pos``), and reads return rows
in dataset order (rows recorded without a position after them, in the order they finished).
So a run's exports are in the same order however its items were judged (one process,
several, or Ray) and whatever order they finished in.

Every row also keeps the item's LM calls (column ``calls``: per call its parse attempt, the
messages sent, its replies, cache hit or not, tokens, cost, latency, error) and the
compiled program that judged it (column ``program``). The message texts are kept once
each, in the table ``messages`` keyed by the SHA-256 of the text; a call refers to them by
hash (``[role, sha256]`` per message) and to its replies by their index in the row's
``raw``. The system message and few-shot demos every item shares are stored once, so a
run grows by the per-item text only, not by the prompt's size times the items. Read an
item in full with :meth:`ResultStore.item_detail`.

Every row also keeps the item's judged inputs (column ``inputs``: the question, answer,
context... the judge was given), so pages show the judged text for a judge that sends no
prompt (a baseline) as for an LLM judge. Each input is kept like a message: its text once in
``messages`` (a list or number as its JSON text), the row referring to it by hash
(``{field: ["text" | "json", sha256]}``); a context many items share is stored once. Rows
written before the column existed, or by a run whose items are not the data's (a jury's
derived run), read back with no inputs (``None``). Read them with :meth:`ResultStore.item_inputs`.

Every row is redacted before it is written (:mod:`jurist.redaction`): an API key the
provider echoed into an error, a raw reply, the parsed output or a message (a key pasted
into the judged text) never reaches the file. A message is hashed after redaction. The
texts of a verdict the finished-verdict cache served (its output, replies and messages)
were redacted when the cache wrote them: a result that carries the cache's mark
(:func:`jurist.schemas.cached_texts`: only one the runner made of a served verdict, while
it holds the served objects) has them written as they are, messages under the cache's
hashes, once a search for every secret configured in this process (one substring search
per secret, its JSON-escaped forms included) finds none in them; one found, or any other
result, goes through the full redaction. Its id and inputs are redacted as any row's.

A damaged file (not a database, truncated, malformed) is never read past the damage: it
raises :class:`jurist.errors.RunDirectoryError`, whose message names the file and says how
to recover, instead of a traceback. So does a file in an older layout (one written before
a column or table above existed): it is not converted; the message names the jurist
version that wrote it (from the run's manifest) and says how to judge the run again.
"""

from __future__ import annotations

import collections
import functools
import hashlib
import json
import logging
import math
import os
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, TypeVar

from jurist.errors import InputError, RunDirectoryError
from jurist.redaction import redact, redact_secrets, redact_value, redacting_once, secret_finder
from jurist.schemas import (
    CachedTexts,
    ItemDetail,
    ItemResult,
    LMCall,
    Message,
    Usage,
    cached_texts,
    rationale_of,
)

RESULTS_DB = "results.sqlite"
"""The file of a run directory that holds its finished items."""

MANIFEST = "manifest.json"
"""The file of a run directory that describes the run (task, judge, data, versions, status)."""

RESULTS_JSONL = "results.jsonl"
"""The export of every recorded item, written next to ``results.sqlite`` after scoring."""

COMMIT_EVERY_ITEMS = 64
"""A :class:`ResultWriter` commits once this many finished items wait ..."""

COMMIT_EVERY_SECONDS = 0.2
"""... or once the oldest waiting item finished this many seconds ago, whichever comes first."""

YIELD_EVERY_SECONDS = 0.001
"""How long a :class:`ResultWriter` holds the interpreter lock at most between items."""

logger = logging.getLogger(__name__)

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
    judge_fingerprint TEXT,
    calls TEXT,
    program TEXT,
    pos INTEGER,
    inputs TEXT
)
"""

_ORDER_INDEX = "CREATE INDEX IF NOT EXISTS results_order ON results (pos IS NULL, pos, seq)"
_ORDER = "ORDER BY pos IS NULL, pos, seq"
"""Dataset order; rows recorded without a position last, in the order they finished."""

_COLUMNS = ("judge_fingerprint", "calls", "program", "pos")
"""The columns of ``results`` the first layout lacked, in the order later versions added them."""

_MESSAGES_SCHEMA = """
CREATE TABLE IF NOT EXISTS messages (
    sha256 TEXT PRIMARY KEY,
    content TEXT NOT NULL
)
"""

_CHUNK = 500
"""Ids (or hashes) read in one query (SQLite allows 999 parameters in older builds)."""

_LOOKUP_ROWS = 3
"""About how many rows of ``messages`` one scan reads in the time one lookup by hash takes:
texts wanted for at least a third of the table are read by scanning it."""

_DETAIL_COLUMNS = (
    "id, status, output, error, error_type, raw, attempts, latency_s, usage, judge_fingerprint, program"
)
"""The columns of a row :func:`_detail` reads (before its calls and inputs)."""

_RECORD_COLUMNS = "id, status, output, error, error_type, raw, attempts"
"""The columns of a row :func:`_record` reads (before its calls and inputs)."""

_KNOWN_HASHES = 4096
"""Message hashes a writer remembers as stored (then it starts over): the shared system
message is not offered to SQLite again for every item."""

_KNOWN_USAGES = 256
"""Distinct usages :meth:`ResultStore.total_usage` keeps parsed (then it starts over)."""

_DAMAGE = re.compile(r"malformed|not a database|corrupt|disk image", re.I)

T = TypeVar("T")


def _input_refs(inputs: Mapping[str, Any], batch: _Batch) -> str:
    """An item's inputs as the ``inputs`` column keeps them: per field, the kind of its text
    (``text``, or ``json`` for any other value) and the hash of its redacted text in ``batch``."""
    refs: dict[str, list[str]] = {}
    for name, value in inputs.items():
        if isinstance(value, str):
            refs[str(name)] = ["text", batch.stored(value)]
        else:
            text = json.dumps(redact_value(value), ensure_ascii=False, default=str)
            refs[str(name)] = ["json", batch.stored(text)]
    return json.dumps(refs, ensure_ascii=False)


def damaged_store_error(path: Path, reason: str) -> RunDirectoryError:
    """The error for a ``results.sqlite`` that cannot be read, with the way to recover: move it
    aside and judge again (whatever command met it: ``jurist score`` cannot recover a run, and
    a re-judge costs nothing for the items whose answers are in the response cache)."""
    return RunDirectoryError(
        f"{path} is damaged ({reason}): move it aside (mv {path} {path}.damaged), then run the "
        f"`jurist judge` command of this run again with --out {path.parent}: it judges the items "
        "anew, and answers in the response cache cost nothing"
    )


def old_layout_error(path: Path, missing: str, doing: str = "read") -> RunDirectoryError:
    """The error for a ``results.sqlite`` in a layout this jurist does not read (it lacks
    ``missing``): it names the jurist version that wrote the run, as its manifest records it,
    and says to judge the run again (answers in the response cache cost nothing)."""
    try:
        written = json.loads((path.parent / MANIFEST).read_text(encoding="utf-8"))["versions"]["jurist"]
    except (OSError, ValueError, KeyError, TypeError):
        written = None
    try:
        current = metadata.version("jurist")
    except metadata.PackageNotFoundError:
        current = "unknown"
    by = f"jurist {written}" if isinstance(written, str) else "an older jurist (no version in its manifest)"
    return RunDirectoryError(
        f"{path} was written by {by} in an older layout (no {missing}) that jurist {current} does not "
        f"{doing}: run the `jurist judge` command of this run again with a new --out directory (answers "
        "in the response cache cost nothing), or read this run with the jurist version that wrote it"
    )


class _Batch:
    """The texts of the rows written in one transaction: each distinct text is redacted (and,
    for a message, hashed) once per batch, however many items share it (the system message
    and the few-shot demos are in every item)."""

    def __init__(self) -> None:
        self.messages: dict[str, str] = {}
        """Redacted message texts by the SHA-256 of their redacted text."""
        self._clean: dict[str, str] = {}
        self._digests: dict[str, str] = {}
        self.secret_in = secret_finder()
        """Whether a secret configured now occurs in a text or JSON text (see :func:`secret_finder`)."""

    def clean(self, text: str) -> str:
        """``text`` redacted."""
        found = self._clean.get(text)
        if found is None:
            found = self._clean[text] = redact(text)
        return found

    def stored(self, text: str) -> str:
        """The digest under which ``text`` (redacted) is kept in ``messages``."""
        digest = self._digests.get(text)
        if digest is None:
            clean = self.clean(text)
            digest = self._digests[text] = hashlib.sha256(clean.encode("utf-8")).hexdigest()
            self.messages[digest] = clean
        return digest

    def vouched(self, digest: str, text: str) -> bool:
        """Keep ``text``, a message text the finished-verdict cache redacted when it wrote it,
        under ``digest`` (its SHA-256, as the cache keeps it); ``False`` (nothing kept) when a
        secret configured now occurs in it. Each text is checked once per batch."""
        if digest in self.messages:
            return True
        if self.secret_in(text):
            return False
        self.messages[digest] = text
        return True


class ResultStore:
    """Finished items of one run, in ``results.sqlite`` inside the run directory.

    Args:
        path: The database file; created if missing.
        judge_fingerprint: The fingerprint of the judge whose results are written; stored with
            every row :meth:`put` writes. Readers leave it ``None``.
        program: The compiled program that judges (``{"path": ..., "sha256": ...}``), stored
            with every row :meth:`put` writes; ``None`` when none is used.
        read_only: Open the file for reading only (``jurist view``): nothing is created or
            changed, and a ``path`` whose last part is a symbolic link is refused before
            anything is read (SQLite itself never follows a link for the ``-wal`` and
            ``-shm`` files).

    Raises:
        RunDirectoryError: The file is damaged (not a database, truncated, malformed); the
            message names it and says how to recover. With ``read_only``: it is missing, or
            a symbolic link.
    """

    def __init__(
        self,
        path: Path,
        *,
        judge_fingerprint: str | None = None,
        program: dict[str, str] | None = None,
        read_only: bool = False,
    ) -> None:
        self.path = path
        self.judge_fingerprint = None if read_only else judge_fingerprint
        self.program = json.dumps(program, sort_keys=True) if program else None
        self._known: set[str] = set()
        self._read_only = read_only
        if read_only:
            target = f"{Path(path).absolute().as_uri()}?mode=ro"
            self._db = self._guard(
                lambda: sqlite3.connect(target, uri=True, isolation_level=None, check_same_thread=False)
            )
        else:
            self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        try:
            if read_only:
                self._refuse_link()
            self._guard(self._open)
        except BaseException:
            self._db.close()
            raise

    def _refuse_link(self) -> None:
        """Refuse a file SQLite reached through a symbolic link: the path it opened (links
        resolved, read before any page of the file) is not the path asked for."""
        opened = self._guard(lambda: self._db.execute("PRAGMA database_list").fetchone())
        asked = os.path.join(os.path.realpath(os.path.dirname(os.path.abspath(self.path))), self.path.name)
        if opened is None or os.path.normcase(str(opened[2])) != os.path.normcase(asked):
            raise RunDirectoryError(
                f"{self.path} is a symbolic link; jurist does not follow links in a run directory"
            )

    def _open(self) -> None:
        self._check_layout()  # before anything is written: a refused file is left as it was
        if not self._read_only:
            self._db.execute("PRAGMA journal_mode=WAL")
            # NORMAL is durable against a killed process (the OS keeps the WAL); FULL adds power loss.
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(_SCHEMA)
            self._db.execute(_MESSAGES_SCHEMA)
            self._db.execute(_ORDER_INDEX)
        # A file without the ``inputs`` column (written before jurist recorded the judged
        # text) is read without it (the pages read the text from the run's data file).
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(results)")}
        self._has_inputs = "inputs" in columns
        self._has_messages = True
        # Reads every page of an index: a truncated or overwritten file fails here, mostly. (The
        # file is never opened other than through SQLite: closing another descriptor of it would
        # drop this process's SQLite locks, and another process could then delete a live WAL.)
        self._db.execute("SELECT COUNT(*) FROM results").fetchone()

    def _check_layout(self) -> None:
        """Refuse a file in an older layout (see :func:`old_layout_error`); nothing is changed.
        A file without a ``results`` table (a new one) passes."""
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(results)")}
        if not columns:
            return
        missing = [column for column in _COLUMNS if column not in columns]
        if missing:
            raise old_layout_error(self.path, f"column {missing[0]!r}")
        tables = self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
        if ("messages",) not in tables:
            raise old_layout_error(self.path, "table 'messages'")
        if "inputs" not in columns and not self._read_only:
            raise old_layout_error(self.path, "column 'inputs'", doing="write to")

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

    def statuses(self) -> dict[str, str]:
        """Every recorded item's status by id (``'ok'`` or ``'failed'``), read at once."""
        rows = self._guard(lambda: self._db.execute("SELECT id, status FROM results").fetchall())
        return {item_id: status for item_id, status in rows}

    def put(
        self, result: ItemResult, position: int | None = None, inputs: Mapping[str, Any] | None = None
    ) -> None:
        """Record a finished item (see :meth:`put_many`)."""
        self.put_many([result], [position], [inputs])

    def put_many(
        self,
        results: Iterable[ItemResult],
        positions: Iterable[int | None] | None = None,
        inputs: Iterable[Mapping[str, Any] | None] | None = None,
    ) -> None:
        """Record finished items in one transaction (with this store's judge fingerprint and
        program), each replacing an earlier failed attempt of the same item. Their errors, raw
        answers, outputs and messages are redacted first; each distinct message text is stored
        once.

        Args:
            results: The finished items.
            positions: Each item's position in its dataset (``None``: unknown; such rows are
                read after the others). Default: all unknown.
            inputs: Each item's judged inputs (``None``: not recorded). Default: none.
        """
        batch = _Batch()
        listed = list(results)
        places = list(positions) if positions is not None else [None] * len(listed)
        given = list(inputs) if inputs is not None else [None] * len(listed)
        self._write_rows(
            [
                self._row(result, batch, place, found)
                for result, place, found in zip(listed, places, given, strict=True)
            ],
            batch,
        )

    def _write_rows(self, rows: list[tuple[Any, ...]], batch: _Batch) -> None:
        """Write rows made by :meth:`_row` (their texts in ``batch``) in one transaction."""
        if not rows:
            return
        new = [(digest, text) for digest, text in batch.messages.items() if digest not in self._known]

        def write() -> None:
            self._db.execute("BEGIN")
            try:
                if new:
                    self._db.executemany(
                        "INSERT OR IGNORE INTO messages (sha256, content) VALUES (?, ?)", new
                    )
                self._db.executemany(
                    "INSERT INTO results (id, status, output, error, error_type, raw, attempts, "
                    "latency_s, usage, judge_fingerprint, calls, program, pos, inputs) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT(id) DO UPDATE SET status=excluded.status, output=excluded.output, "
                    "error=excluded.error, error_type=excluded.error_type, raw=excluded.raw, "
                    "attempts=excluded.attempts, latency_s=excluded.latency_s, usage=excluded.usage, "
                    "judge_fingerprint=excluded.judge_fingerprint, calls=excluded.calls, "
                    "program=excluded.program, pos=excluded.pos, "
                    "inputs=coalesce(excluded.inputs, results.inputs)",
                    rows,
                )
                self._db.execute("COMMIT")
            except BaseException:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise

        self._guard(write)
        if len(self._known) + len(new) > _KNOWN_HASHES:
            self._known.clear()
        self._known.update(digest for digest, _ in new)

    def _row(
        self,
        result: ItemResult,
        batch: _Batch,
        position: int | None = None,
        inputs: Mapping[str, Any] | None = None,
    ) -> tuple[Any, ...]:
        """One item's row as stored (redacted), its message and input texts collected in ``batch``.

        A verdict served by the finished-verdict cache (:func:`~jurist.schemas.cached_texts`)
        has its texts written as the cache redacted them, unless a secret configured now
        occurs in one of them (then it is redacted in full, as any other result)."""
        cached = cached_texts(result)
        if cached is not None and result.error is None:
            row = self._cached_row(result, cached, batch, position, inputs)
            if row is not None:
                return row
        output = redact_value(result.output)
        raw = [batch.clean(text) for text in result.raw]
        calls = (
            json.dumps([self._call_record(call, raw, batch) for call in result.calls], ensure_ascii=False)
            if result.calls is not None
            else None
        )
        return (
            redact_secrets(result.id),  # the data's own id (the join key), never a configured key
            result.status,
            json.dumps(output, ensure_ascii=False) if output is not None else None,
            batch.clean(result.error) if result.error else result.error,
            result.error_type,
            json.dumps(raw, ensure_ascii=False),
            result.attempts,
            result.latency_s,
            result.usage.model_dump_json(),
            self.judge_fingerprint,
            calls,
            self.program,
            position,
            _input_refs(inputs, batch) if inputs is not None else None,
        )

    def _cached_row(
        self,
        result: ItemResult,
        cached: CachedTexts,
        batch: _Batch,
        position: int | None,
        inputs: Mapping[str, Any] | None,
    ) -> tuple[Any, ...] | None:
        """The row of a served verdict, its texts as the cache redacted them (messages under the
        cache's hashes), or ``None`` when a secret configured now occurs in one of them, or a
        call holds an error (the caller then redacts the result in full)."""
        output = json.dumps(result.output, ensure_ascii=False)
        raw = json.dumps(result.raw, ensure_ascii=False)
        if batch.secret_in(output) or batch.secret_in(raw):
            return None
        records = []
        for call, messages in zip(cached.calls, cached.messages, strict=True):
            if call.error is not None:
                return None
            refs = []
            for role, digest, text in messages:
                if not batch.vouched(digest, text):
                    return None
                refs.append([role, digest])
            records.append(self._call_fields(call, refs, [cached.raw.index(reply) for reply in call.replies]))
        return (
            redact_secrets(result.id),
            result.status,
            output,
            None,
            result.error_type,
            raw,
            result.attempts,
            result.latency_s,
            result.usage.model_dump_json(),
            self.judge_fingerprint,
            json.dumps(records, ensure_ascii=False),
            self.program,
            position,
            _input_refs(inputs, batch) if inputs is not None else None,
        )

    @staticmethod
    def _call_record(call: LMCall, raw: list[str], batch: _Batch) -> dict[str, Any]:
        """One call as stored: messages as ``[role, sha256]`` (their redacted texts collected
        in ``batch``), replies as indices into the row's redacted ``raw`` (or, for a reply not
        among them, the hash of its text)."""
        refs = [[message.role, batch.stored(message.content)] for message in call.messages]
        replies: list[int | str] = []
        for reply in call.replies:
            text = batch.clean(reply)
            try:
                replies.append(raw.index(text))
            except ValueError:
                replies.append(batch.stored(reply))
        record = ResultStore._call_fields(call, refs, replies)
        if call.error:
            record["error"] = batch.clean(call.error)
        return record

    @staticmethod
    def _call_fields(
        call: LMCall, refs: list[list[str]], replies: list[int] | list[int | str]
    ) -> dict[str, Any]:
        """A call as stored, its messages as ``refs`` and replies as ``replies``, but for its error."""
        record: dict[str, Any] = {"attempt": call.attempt, "messages": refs, "replies": replies}
        record["cache_hit"] = call.cache_hit
        if call.prompt_tokens or call.completion_tokens:
            record["prompt_tokens"] = call.prompt_tokens
            record["completion_tokens"] = call.completion_tokens
        if call.cost is not None:
            record["cost"] = call.cost
        if call.latency_s is not None:
            record["latency_s"] = round(call.latency_s, 6)
        return record

    def counts(self) -> dict[str, int]:
        """Recorded items per status, e.g. ``{"ok": 10, "failed": 2}``."""
        rows = self._guard(
            lambda: self._db.execute("SELECT status, COUNT(*) FROM results GROUP BY status").fetchall()
        )
        return {status: count for status, count in rows}

    def fingerprints(self) -> set[str | None]:
        """The judge fingerprints of the recorded rows (``None`` for rows recorded without one)."""
        rows = self._guard(
            lambda: self._db.execute("SELECT DISTINCT judge_fingerprint FROM results").fetchall()
        )
        return {row[0] for row in rows}

    def total_usage(self) -> Usage:
        """The sum of every recorded item's usage."""

        def read() -> Usage:
            total = Usage()
            parsed: dict[str, Usage] = {}  # most rows share a few usages (a cache hit, ...)
            for (usage,) in self._db.execute("SELECT usage FROM results"):
                found = parsed.get(usage)
                if found is None:
                    if len(parsed) >= _KNOWN_USAGES:
                        parsed.clear()
                    found = parsed[usage] = Usage.model_validate_json(usage)
                total = total.add(found)
            return total

        return self._guard(read)

    def iter_results(self, batch_size: int = 1000) -> Iterator[ItemResult]:
        """Every recorded item in dataset order, read in batches (bounded memory)."""
        cursor = self._guard(
            lambda: self._db.execute(
                "SELECT id, status, output, error, error_type, raw, attempts, latency_s, usage "
                f"FROM results {_ORDER}"
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

    def item_ids(self, limit: int | None = None) -> list[str]:
        """Recorded item ids in dataset order (the first ``limit`` of them)."""
        query = f"SELECT id FROM results {_ORDER}" + (" LIMIT ?" if limit is not None else "")
        parameters: tuple[Any, ...] = (limit,) if limit is not None else ()
        rows = self._guard(lambda: self._db.execute(query, parameters).fetchall())
        return [row[0] for row in rows]

    def item_detail(self, item_id: str) -> ItemDetail | None:
        """Everything recorded about one item, its LM calls with their full messages included.

        Returns:
            The item in full, or ``None`` if no item has this id. Its ``calls`` is ``[]``
            for a judge that calls no model (a baseline), and ``None`` for a row recorded
            without its calls (an :class:`~jurist.schemas.ItemResult` whose ``calls`` is ``None``).

        Raises:
            RunDirectoryError: The file is damaged.
        """
        return next(self.item_details([item_id]), None)

    def item_details(self, item_ids: Iterable[str]) -> Iterator[ItemDetail]:
        """:meth:`item_detail` of each of these items that is recorded, in the order given (each
        id once), read with a few queries for all of them, not a few per item.

        Raises:
            RunDirectoryError: The file is damaged.
        """
        for row, calls, texts, inputs in self._detail_rows(item_ids, _DETAIL_COLUMNS):
            yield _detail(row, calls, texts, inputs)

    def item_records(self, item_ids: Iterable[str]) -> Iterator[ItemRecord]:
        """What a page shows of each of these items that is recorded (:class:`ItemRecord`), in
        the order given (each id once), read as :meth:`item_details` reads them, without the
        columns a page does not show.

        A row whose fields have the types the writer gives them is taken as it is, with no
        model built per item and call; any other row is read again in full as
        :meth:`item_details` reads it (and raises as it raises).

        Raises:
            RunDirectoryError: The file is damaged.
        """
        for row, calls, texts, inputs in self._detail_rows(item_ids, _RECORD_COLUMNS):
            record = _record(row, calls, texts, inputs)
            if record is None:
                (full,) = self._detail_rows([row[0]], _DETAIL_COLUMNS)
                record = _record_of(_detail(*full))
            yield record

    def _detail_rows(
        self, item_ids: Iterable[str], columns: str
    ) -> Iterator[tuple[tuple[Any, ...], list[dict[str, Any]] | None, dict[str, str], dict[str, Any] | None]]:
        """Each recorded row of these items (in the order given, each id once; its ``columns``,
        then its calls and inputs) with its stored calls, the texts they and its inputs refer
        to, and its inputs (``None``: not recorded). The rows are read first (one scan of the
        table when they are all of its rows, else by id in chunks), then every text they refer
        to at once (see :meth:`_message_texts`)."""
        wanted = list(dict.fromkeys(item_ids))
        if not wanted:
            return
        found = self._guard(functools.partial(self._rows_of, wanted, columns))
        calls: dict[str, list[dict[str, Any]]] = {}
        refs: dict[str, dict[str, Any]] = {}
        for item_id, row in found.items():
            if row[-2] is not None:
                calls[item_id] = _parsed(row[-2])
            if row[-1] is not None:
                refs[item_id] = _parsed(row[-1])
        hashes = _call_hashes(record for found_calls in calls.values() for record in found_calls)
        hashes.update(digest for ref in refs.values() for _, digest in ref.values())
        texts = self._message_texts(hashes)
        for item_id in wanted:
            if item_id in found:
                ref = refs.get(item_id)
                inputs = _resolve_inputs(ref, texts) if ref is not None else None
                yield found[item_id], calls.get(item_id), texts, inputs

    def _rows_of(self, wanted: list[str], columns: str) -> dict[str, tuple[Any, ...]]:
        """The rows of the ``wanted`` ids by id, each its ``columns``, then ``calls`` and
        ``inputs`` (``NULL`` in a file without the column)."""
        selected = f"{columns}, calls, " + ("inputs" if self._has_inputs else "NULL")
        if len(wanted) >= self._db.execute("SELECT COUNT(*) FROM results").fetchone()[0]:
            every = set(wanted)  # every row: one scan, no lookup per id
            rows = self._db.execute(f"SELECT {selected} FROM results").fetchall()
            return {row[0]: row for row in rows if row[0] in every}
        found: dict[str, tuple[Any, ...]] = {}
        for start in range(0, len(wanted), _CHUNK):
            chunk = wanted[start : start + _CHUNK]
            query = f"SELECT {selected} FROM results WHERE id IN ({', '.join('?' * len(chunk))})"
            found.update((row[0], row) for row in self._db.execute(query, chunk))
        return found

    def item_inputs(self, item_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        """The recorded judged inputs of these items (field -> value, in the judge's order).

        Items not recorded, or recorded without inputs (an older file, a jury's derived
        run), are left out.

        Raises:
            RunDirectoryError: The file is damaged.
        """
        wanted = list(dict.fromkeys(item_ids))
        if not wanted or not self._has_inputs:
            return {}

        def read() -> list[tuple[str, str]]:
            rows: list[tuple[str, str]] = []
            for start in range(0, len(wanted), _CHUNK):
                chunk = wanted[start : start + _CHUNK]
                marks = ", ".join("?" * len(chunk))
                query = f"SELECT id, inputs FROM results WHERE inputs IS NOT NULL AND id IN ({marks})"
                rows.extend(self._db.execute(query, chunk).fetchall())
            return rows

        refs = {item_id: json.loads(found) for item_id, found in self._guard(read)}
        texts = self._message_texts({digest for ref in refs.values() for _, digest in ref.values()})
        return {item_id: _resolve_inputs(refs[item_id], texts) for item_id in wanted if item_id in refs}

    def items_with_input(self, text: str) -> set[str] | None:
        """The ids of the items one of whose recorded inputs contains ``text`` (ASCII letters in
        any case), or ``None`` when no row records its inputs (nothing to search).

        Raises:
            RunDirectoryError: The file is damaged.
        """
        if not self._has_inputs or not self._has_messages:
            return None

        def read() -> tuple[bool, set[str], list[tuple[str, str]]]:
            recorded = self._db.execute("SELECT 1 FROM results WHERE inputs IS NOT NULL LIMIT 1").fetchone()
            if recorded is None:
                return False, set(), []
            pattern = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
            digests = {
                row[0]
                for row in self._db.execute(
                    "SELECT sha256 FROM messages WHERE content LIKE ? ESCAPE '\\'", (pattern,)
                )
            }
            if not digests:
                return True, digests, []
            rows = self._db.execute("SELECT id, inputs FROM results WHERE inputs IS NOT NULL").fetchall()
            return True, digests, rows

        recorded, digests, rows = self._guard(read)
        if not recorded:
            return None
        return {
            item_id
            for item_id, found in rows
            if any(digest in digests for _, digest in json.loads(found).values())
        }

    def _message_texts(self, hashes: set[str]) -> dict[str, str]:
        """The stored texts of these hashes, by hash: one scan of the table when they are a
        large share of it (see :data:`_LOOKUP_ROWS`), else looked up in chunks."""
        if not hashes:
            return {}

        def read() -> dict[str, str]:
            total = self._db.execute("SELECT COUNT(*) FROM messages").fetchone()[0]
            if len(hashes) * _LOOKUP_ROWS >= total:
                rows = self._db.execute("SELECT sha256, content FROM messages").fetchall()
                return {digest: content for digest, content in rows if digest in hashes}
            wanted = sorted(hashes)
            found: dict[str, str] = {}
            for start in range(0, len(wanted), _CHUNK):
                chunk = wanted[start : start + _CHUNK]
                marks = ", ".join("?" * len(chunk))
                query = f"SELECT sha256, content FROM messages WHERE sha256 IN ({marks})"
                found.update(self._db.execute(query, chunk).fetchall())
            return found

        return self._guard(read)


_DECODER = json.JSONDecoder()


def _parsed(text: str) -> Any:
    """``json.loads(text)``, without its checks around the value for a text that is one JSON
    value and nothing else (as the writer writes each column): read many times per item."""
    if type(text) is not str:
        return json.loads(text)
    try:
        value, end = _DECODER.raw_decode(text)
    except ValueError:
        return json.loads(text)  # raises as it raises
    return value if end == len(text) else json.loads(text)


_INPUT_MISSING = "[input not found in the run store]"
_MESSAGE_MISSING = "[message not found in the run store]"


def _resolve_inputs(ref: Mapping[str, Any], texts: Mapping[str, str]) -> dict[str, Any]:
    """A row's stored inputs (``{field: [kind, sha256]}``) as values: a ``text`` input its text,
    a ``json`` input its parsed JSON (its text when that does not parse)."""
    values: dict[str, Any] = {}
    for name, (kind, digest) in ref.items():
        text = texts.get(digest)
        if text is None:
            values[name] = _INPUT_MISSING
        elif kind == "json":
            try:
                values[name] = _parsed(text)
            except ValueError:
                values[name] = text
        else:
            values[name] = text
    return values


def _detail(
    row: tuple[Any, ...],
    calls: list[dict[str, Any]] | None,
    texts: Mapping[str, str],
    inputs: dict[str, Any] | None,
) -> ItemDetail:
    """A row of ``results`` (its :data:`_DETAIL_COLUMNS`, as :meth:`ResultStore._detail_rows`
    reads them) as an :class:`ItemDetail`."""
    item_id, status, output, error, error_type, raw, attempts, latency, usage, fingerprint, program = row[:11]
    parsed = json.loads(output) if output is not None else None
    raw_texts: list[str] = json.loads(raw)
    return ItemDetail(
        id=item_id,
        inputs=inputs,
        status=status,
        output=parsed,
        rationale=rationale_of(parsed),
        error=error,
        error_type=error_type,
        raw=raw_texts,
        attempts=attempts,
        latency_s=latency,
        usage=Usage.model_validate_json(usage),
        judge_fingerprint=fingerprint,
        program=json.loads(program) if program else None,
        calls=_resolve_calls(calls, raw_texts, texts) if calls is not None else None,
    )


@dataclass(frozen=True)
class ItemRecord:
    """One recorded item as a page shows it: the fields of :class:`~jurist.schemas.ItemDetail`
    a page shows (not its usage, latency, fingerprint or program), with each call as the JSON
    value ``LMCall.model_dump(mode="json")`` gives, its messages as ``[role, text]`` pairs
    (:meth:`ResultStore.item_records`)."""

    id: str
    status: str
    output: dict[str, Any] | None
    rationale: str | None
    error: str | None
    error_type: str | None
    raw: list[str]
    attempts: int
    calls: list[dict[str, Any]] | None
    inputs: dict[str, Any] | None


def _record_of(detail: ItemDetail) -> ItemRecord:
    """An :class:`ItemDetail` as the :class:`ItemRecord` a page shows."""
    calls = None
    if detail.calls is not None:
        calls = [
            {
                **call.model_dump(mode="json", exclude={"messages"}),
                "messages": [[message.role, message.content] for message in call.messages],
            }
            for call in detail.calls
        ]
    return ItemRecord(
        id=detail.id,
        status=detail.status,
        output=detail.output,
        rationale=detail.rationale,
        error=detail.error,
        error_type=detail.error_type,
        raw=detail.raw,
        attempts=detail.attempts,
        calls=calls,
        inputs=detail.inputs,
    )


def _text_or_none(value: Any) -> bool:
    return value is None or type(value) is str


def _number_or_none(value: Any) -> bool:
    return value is None or (type(value) is float and math.isfinite(value))


def _record(
    row: tuple[Any, ...],
    calls: list[dict[str, Any]] | None,
    texts: Mapping[str, str],
    inputs: dict[str, Any] | None,
) -> ItemRecord | None:
    """A row (its :data:`_RECORD_COLUMNS`) as the :class:`ItemRecord` that ``_record_of(_detail(...))``
    gives, built without models; ``None`` when a field has a type the writer does not give it
    (that row is then read through :func:`_detail`, which validates or raises)."""
    item_id, status, output, error, error_type, raw, attempts = row[:7]
    if status not in ("ok", "failed") or type(attempts) is not int:
        return None
    if not (_text_or_none(error) and _text_or_none(error_type)):
        return None
    parsed = _parsed(output) if output is not None else None
    raw_texts = _parsed(raw)
    if not (parsed is None or type(parsed) is dict) or type(raw_texts) is not list:
        return None
    if not all(type(text) is str for text in raw_texts):
        return None
    shown = None
    if calls is not None:
        shown = []
        for call in calls:
            made = _call_record(call, raw_texts, texts)
            if made is None:
                return None
            shown.append(made)
    return ItemRecord(
        id=item_id,
        status=status,
        output=parsed,
        rationale=rationale_of(parsed),
        error=error,
        error_type=error_type,
        raw=raw_texts,
        attempts=attempts,
        calls=shown,
        inputs=inputs,
    )


def _call_record(call: Any, raw: list[str], texts: Mapping[str, str]) -> dict[str, Any] | None:
    """A stored call as ``LMCall.model_dump(mode="json")`` gives it, its messages as
    ``[role, text]``; ``None`` when a field has another type than the writer gives it."""
    if type(call) is not dict:
        return None
    attempt = call.get("attempt", 1)
    prompt, completion = call.get("prompt_tokens", 0), call.get("completion_tokens", 0)
    cost, latency, error = call.get("cost"), call.get("latency_s"), call.get("error")
    pairs, replies = call.get("messages", []), call.get("replies", [])
    if not (type(attempt) is int and type(prompt) is int and type(completion) is int):
        return None
    if not (_number_or_none(cost) and _number_or_none(latency) and _text_or_none(error)):
        return None
    if type(pairs) is not list or type(replies) is not list:
        return None
    messages = []
    for pair in pairs:
        if type(pair) is not list or len(pair) != 2 or type(pair[0]) is not str:
            return None
        messages.append([pair[0], texts.get(pair[1], _MESSAGE_MISSING)])
    shown = []
    for reply in replies:
        if type(reply) is int:
            shown.append(raw[reply] if 0 <= reply < len(raw) else _MESSAGE_MISSING)
        elif type(reply) is str:
            shown.append(texts.get(reply, _MESSAGE_MISSING))
        else:
            return None
    return {
        "attempt": attempt,
        "replies": shown,
        "cache_hit": bool(call.get("cache_hit", False)),
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "cost": cost,
        "latency_s": latency,
        "error": error,
        "messages": messages,
    }


def _call_hashes(records: Iterable[dict[str, Any]]) -> set[str]:
    """The hashes of the texts stored calls refer to: their messages, and replies kept by hash."""
    hashes: set[str] = set()
    for record in records:
        hashes.update(digest for _, digest in record.get("messages", []))
        hashes.update(reply for reply in record.get("replies", []) if isinstance(reply, str))
    return hashes


def _resolve_calls(records: list[dict[str, Any]], raw: list[str], texts: Mapping[str, str]) -> list[LMCall]:
    """Stored calls as :class:`~jurist.schemas.LMCall` records, their texts found in ``texts``
    (by hash) and their replies in the row's ``raw`` (by index)."""
    missing = _MESSAGE_MISSING
    calls = []
    for record in records:
        replies = [
            (raw[reply] if 0 <= reply < len(raw) else missing)
            if isinstance(reply, int)
            else texts.get(reply, missing)
            for reply in record.get("replies", [])
        ]
        calls.append(
            LMCall(
                attempt=record.get("attempt", 1),
                messages=[
                    Message(role=role, content=texts.get(digest, missing))
                    for role, digest in record.get("messages", [])
                ],
                replies=replies,
                cache_hit=bool(record.get("cache_hit", False)),
                prompt_tokens=record.get("prompt_tokens", 0),
                completion_tokens=record.get("completion_tokens", 0),
                cost=record.get("cost"),
                latency_s=record.get("latency_s"),
                error=record.get("error"),
            )
        )
    return calls


_Waiting = tuple[ItemResult, list[Callable[[], None]], int | None, Mapping[str, Any] | None]
"""A finished item waiting for the writer: result, writes to make first, position, inputs."""


class ResultWriter:
    """The one thread that writes a run's finished items into its :class:`ResultStore`.

    The event loop hands each finished item over with :meth:`submit`: an append to a queue,
    with no thread hop and no future per item. The thread wakes once ``batch_items`` items
    wait, or ``batch_seconds`` after it last woke, takes every waiting item, makes each one's
    other writes first (the answers it put in the response cache), and records them all in
    one transaction; :meth:`close` writes what is left. So an item is committed at the latest
    about ``batch_seconds`` after it finished, and the thread wakes a few times a second
    instead of once per item (each wake-up passes the interpreter lock between threads).
    Between items it yields the lock at least every :data:`YIELD_EVERY_SECONDS`, so the
    event loop is not held up by a batch (and the lock does not change hands per item).

    The first write that fails (a damaged or read-only ``results.sqlite``, a full disk) is
    kept in :attr:`error` and nothing more is written; the runner raises it.

    Args:
        store: The run's store.
        batch_items: Commit once this many items wait.
        batch_seconds: Commit what waits at least this often.
        writing_together: A context the other writes of a batch are made in (e.g. one that
            makes them one transaction).
    """

    def __init__(
        self,
        store: ResultStore,
        *,
        batch_items: int = COMMIT_EVERY_ITEMS,
        batch_seconds: float = COMMIT_EVERY_SECONDS,
        writing_together: Callable[[], AbstractContextManager[Any]] = nullcontext,
    ) -> None:
        self.store = store
        self.writing_together = writing_together
        self.batch_items = batch_items
        self.batch_seconds = batch_seconds
        self.error: BaseException | None = None
        """The first failed write, or ``None``."""
        self._waiting: collections.deque[_Waiting] = collections.deque()
        self._wake = threading.Event()
        self._closing = False
        self._thread = threading.Thread(target=self._loop, name="jurist-store", daemon=True)
        self._thread.start()

    def submit(
        self,
        result: ItemResult,
        before: Iterable[Callable[[], None]] = (),
        position: int | None = None,
        inputs: Mapping[str, Any] | None = None,
    ) -> None:
        """Record ``result`` (the item at ``position`` in its dataset, judged on ``inputs``)
        soon; call each of ``before`` (in the writer thread) first."""
        self._waiting.append((result, list(before), position, inputs))
        if len(self._waiting) >= self.batch_items:
            self._wake.set()

    def close(self) -> None:
        """Write and commit everything submitted, then stop the thread."""
        self._closing = True
        self._wake.set()
        self._thread.join()

    def __enter__(self) -> ResultWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _loop(self) -> None:
        while True:
            self._wake.wait(timeout=self.batch_seconds)
            self._wake.clear()
            closing = self._closing  # read before taking the items: none submitted before it is missed
            taken = []
            while self._waiting:
                taken.append(self._waiting.popleft())
            if taken:
                self._write(taken)
            if closing:
                return

    def _write(self, taken: list[_Waiting]) -> None:
        if self.error is not None:
            return
        # A reply goes to the response cache, the verdict cache and the row: scanned once.
        with redacting_once():
            self._write_redacted(taken)

    def _write_redacted(self, taken: list[_Waiting]) -> None:
        writes = [write for _, before, _, _ in taken for write in before]
        if writes:
            with self.writing_together():
                for write in writes:
                    try:
                        write()
                    except Exception as exc:  # a cache write is an optimisation, never the run's end
                        logger.debug("could not write a response to the cache: %s", exc)
        batch = _Batch()
        rows = []
        try:
            yielded = time.perf_counter()
            for result, _, position, inputs in taken:
                rows.append(self.store._row(result, batch, position, inputs))
                if time.perf_counter() - yielded >= YIELD_EVERY_SECONDS:
                    time.sleep(0)  # let the event loop take the interpreter lock if it waits for it
                    yielded = time.perf_counter()
            self.store._write_rows(rows, batch)
        except BaseException as exc:
            self.error = exc


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
        raise InputError(f"results must be a run directory or its results.jsonl{_JUDGE_FIRST}", path=location)
    with open(location, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                yield ItemResult.model_validate_json(line)
            except ValueError as exc:
                reason = str(exc).splitlines()[0]
                hint = _JUDGE_FIRST if number == 1 else ""
                raise InputError(f"not a result record{hint}: {reason}", path=location, line=number) from None


_JUDGE_FIRST = " (data is judged first: jurist judge TASK DATA --out DIR, then scored from DIR)"
