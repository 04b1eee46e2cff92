"""Finished verdicts, read back without asking DSPy to format the prompt or parse the answer.

The response cache (:class:`jurist.judges.lm.JuristCache`) keeps a model's raw answers; a
re-run still has DSPy's adapter format every prompt and parse every cached answer, and the
task validate it. :class:`VerdictCache` keeps, beside it in the judge's ``cache_dir``
(``verdicts.sqlite``), what an accepted judgment gave: the validated output, and the LM calls
of the attempt that gave it (their messages and replies). A judge in a batch run serves an
item from it before it calls its program (:meth:`jurist.judges.judge.LLMJudge.judge`).

The key (:func:`verdict_key`) holds everything that decides a verdict:

- the judge's fingerprint: its config's answer fields (model, temperature, max tokens,
  ``api_base``, adapter, compiled program's path) and its program's state (instructions,
  demos: a re-optimized program is another key);
- the LM's model and settings as DSPy sends them, ``rollout_id`` included (the server salt
  and the repeat salt, so repeats and servers never share verdicts), credentials excluded;
- the task's scope, set by the task when it builds the judge (its name, version, options
  and the source of its ``postprocess``: another reading of the answer is another key);
- the versions of jurist and DSPy (another adapter formats other prompts);
- the item's inputs.

Only accepted judgments are stored (a failed item is judged again, as ``--retry-failed``
promises), and only inside the runner (which hands the writes to its writer thread, in
batches). A served verdict counts as the response cache's hits would: one cache hit per
call of the accepted attempt, no provider call, no tokens, no cost; its calls are recorded
with their messages and replies, ``cache_hit`` set. An entry that cannot be read back (not
JSON, another layout, fields of the wrong type, a message text that does not match its
hash, a damaged file) is a miss and is deleted; it is never trusted.

An entry is redacted when it is written (:mod:`jurist.redaction`), each message text kept
once under the SHA-256 of its redacted text. A served verdict says so: its judgment is
marked with :class:`~jurist.schemas.CachedTexts` (:func:`~jurist.schemas.mark_cached`), and
the run store writes its texts as they are, under the same hashes, after a search for the
secrets configured in the writing process (one found: the row is redacted in full).

A judge's *card* (:class:`JudgeCard`, table ``judges``) keeps what the key needs of the
judge itself (its fingerprint and the key's judge part, :func:`verdict_prefix`), found
by what built the judge (:func:`card_key`): the task's class, name, version and options, the
judge config, the repeat, the versions of Python, jurist and DSPy, the size and modification
time of every file of jurist's package (as Python's bytecode cache checks a source) and of
the files the task names (a YAML task's file and its examples). A run whose every item is
served then builds neither the program nor the LM, and imports neither DSPy nor LiteLLM
(:meth:`jurist.judges.judge.LLMJudge.deferred`). A card is written each time a judge is
built with its program; another code or config gives another card key (a miss).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Container, Iterable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

from jurist.redaction import redact, redact_value
from jurist.schemas import CachedTexts, LMCall, Message, Usage

logger = logging.getLogger(__name__)

VERDICTS_DB = "verdicts.sqlite"
"""The file of a judge's ``cache_dir`` that holds finished verdicts."""

LAYOUT = 1
"""The layout of a stored entry; an entry of another layout is a miss."""

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS verdicts (key TEXT PRIMARY KEY, entry TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS messages (sha256 TEXT PRIMARY KEY, content TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS judges (key TEXT PRIMARY KEY, entry TEXT NOT NULL);"
)

_KNOWN_TEXTS = 4096
"""Message texts a cache remembers by hash (then it starts over): the system message every
item shares is read and written once, not once per item."""


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


def verdict_prefix(fingerprint: str, model: str, settings: Mapping[str, Any], scope: str) -> bytes:
    """The part of every key that is the same for all items of one judge (see the module)."""
    kept = {
        name: value for name, value in settings.items() if name not in ("api_key", "api_base", "base_url")
    }
    head = {
        "fingerprint": fingerprint,
        "model": model,
        "settings": kept,
        "scope": scope,
        "jurist": _version("jurist"),
        "dspy": _version("dspy"),
        "layout": LAYOUT,
    }
    return json.dumps(head, sort_keys=True, default=str).encode("utf-8") + b"\n"


def verdict_key(prefix: bytes, inputs: Mapping[str, Any]) -> str | None:
    """The key of an item's verdict, or ``None`` when its inputs cannot be written as JSON."""
    try:
        text = json.dumps(inputs, sort_keys=True, ensure_ascii=False)
    except (TypeError, ValueError):
        return None
    return hashlib.sha256(prefix + text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class JudgeCard:
    """What the verdict key needs of a judge: its fingerprint and the key's judge part."""

    fingerprint: str
    prefix: bytes


def _file_state(path: Path) -> list[Any]:
    try:
        found = path.stat()
    except OSError:
        return [str(path), None]
    return [str(path), found.st_size, found.st_mtime_ns]


@cache
def _package_state() -> str:
    """A digest of the path, size and modification time of every file of jurist's package."""
    root = Path(__file__).resolve().parents[1]
    found = []
    for folder, folders, files in os.walk(root):
        folders[:] = sorted(name for name in folders if name != "__pycache__")
        for name in sorted(files):
            path = Path(folder, name)
            found.append(_file_state(path)[1:] + [str(path.relative_to(root))])
    return hashlib.sha256(json.dumps(found).encode("utf-8")).hexdigest()


def card_key(identity: Mapping[str, Any], files: Iterable[Path] = ()) -> str:
    """The key of a judge's :class:`JudgeCard`: ``identity`` (JSON-ready: what built the
    judge, see the module) with the versions of Python, jurist and DSPy, the state of
    jurist's package files and of ``files`` (path, size, modification time)."""
    head = {
        "identity": identity,
        "python": sys.version,
        "jurist": _version("jurist"),
        "dspy": _version("dspy"),
        "package": _package_state(),
        "files": [_file_state(Path(path)) for path in files],
        "layout": LAYOUT,
    }
    return hashlib.sha256(json.dumps(head, sort_keys=True, default=str).encode("utf-8")).hexdigest()


class Served:
    """A verdict read back: the output, the raw replies, the calls that gave them, and what
    the cache vouches for about their texts (:class:`~jurist.schemas.CachedTexts`: redacted
    when written, each message under the SHA-256 of its text), which holds them all."""

    __slots__ = ("texts",)

    def __init__(self, texts: CachedTexts) -> None:
        self.texts = texts

    @property
    def output(self) -> dict[str, Any]:
        return self.texts.output

    @property
    def raw(self) -> list[str]:
        return self.texts.raw

    @property
    def calls(self) -> list[LMCall]:
        return self.texts.calls

    @property
    def usage(self) -> Usage:
        """What serving it costs: one cache hit per call, as the response cache counts them."""
        return Usage(cache_hits=max(len(self.calls), 1))


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def encode(
    output: dict[str, Any], calls: list[LMCall], known: Container[str] = ()
) -> tuple[str, dict[str, str]]:
    """The stored form of an accepted judgment (redacted): its output and its calls' replies
    and messages, each message as its role and the SHA-256 of its redacted text; and those
    texts by hash, but for those whose hash is in ``known`` (stored already: the system
    message every item shares is written once, not once per item)."""
    texts: dict[str, str] = {}
    stored = []
    for call in calls:
        messages = []
        for message in call.messages:
            clean = redact(message.content)
            digest = _digest(clean)
            if digest not in known:
                texts[digest] = clean
            messages.append([message.role, digest])
        stored.append({"messages": messages, "replies": call.replies})
    entry = {"layout": LAYOUT, "output": output, "calls": stored}
    return json.dumps(redact_value(entry), ensure_ascii=False), texts


def decode(text: Any, message: Callable[[str], str | None]) -> Served | None:
    """The verdict of a stored entry, its message texts found by ``message`` (by hash), or
    ``None`` when it is not an entry this layout wrote or a text is missing."""
    try:
        entry = json.loads(text)
    except (TypeError, ValueError):
        return None
    if type(entry) is not dict or entry.get("layout") != LAYOUT:
        return None
    output, stored = entry.get("output"), entry.get("calls")
    if type(output) is not dict or type(stored) is not list:
        return None
    calls: list[LMCall] = []
    raw: list[str] = []
    texts: list[list[tuple[str, str, str]]] = []
    for call in stored:
        if type(call) is not dict:
            return None
        pairs, replies = call.get("messages"), call.get("replies")
        if type(pairs) is not list or type(replies) is not list:
            return None
        if not all(type(reply) is str for reply in replies):
            return None
        messages, found = [], []
        for pair in pairs:
            if type(pair) is not list or len(pair) != 2:
                return None
            role, digest = pair
            if type(role) is not str or type(digest) is not str:
                return None
            content = message(digest)
            if content is None:
                return None
            messages.append(Message(role=role, content=content))
            found.append((role, digest, content))
        calls.append(LMCall(messages=messages, replies=replies, cache_hit=True))
        texts.append(found)
        raw.extend(replies)
    return Served(CachedTexts(output, raw, calls, texts))


class VerdictCache:
    """The finished verdicts of one ``cache_dir`` (``verdicts.sqlite``), shared by every judge
    of the process that uses it (:func:`verdict_cache`) and by other processes (WAL journal).

    Reads may come from any thread; writes come from the runner's writer thread, in batches
    (:func:`writing_verdicts_together`). Each thread has its own connection. A file that cannot be
    opened or read is skipped (a miss, logged once): the cache is an optimisation.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()
        self._broken = False
        self._texts: dict[str, str] = {}
        """Message texts by hash, as read or written (bounded by :data:`_KNOWN_TEXTS`)."""

    def _connection(self) -> sqlite3.Connection | None:
        if self._broken:
            return None
        db: sqlite3.Connection | None = getattr(self._local, "db", None)
        if db is None:
            try:
                db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=30)
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")
                db.executescript(_SCHEMA)
            except sqlite3.Error as exc:
                self._skip(exc)
                return None
            self._local.db = db
        return db

    def _skip(self, exc: BaseException) -> None:
        if not self._broken:
            logger.warning("the verdict cache %s cannot be used (%s); skipping it", self.path, exc)
        self._broken = True

    def read(self, key: str) -> Served | None:
        """The verdict stored under ``key``, or ``None``; an entry that does not read back is deleted."""
        db = self._connection()
        if db is None:
            return None
        try:
            row = db.execute("SELECT entry FROM verdicts WHERE key = ?", (key,)).fetchone()
        except sqlite3.Error as exc:
            self._skip(exc)
            return None
        if row is None:
            return None
        served = decode(row[0], lambda digest: self._text(db, digest))
        if served is None:
            self.evict(key)
        return served

    def _text(self, db: sqlite3.Connection, digest: str) -> str | None:
        """The message text stored under ``digest`` (checked against it), or ``None``."""
        found = self._texts.get(digest)
        if found is not None:
            return found
        try:
            row = db.execute("SELECT content FROM messages WHERE sha256 = ?", (digest,)).fetchone()
        except sqlite3.Error:
            return None
        if row is None or not isinstance(row[0], str) or _digest(row[0]) != digest:
            return None
        self._remember(digest, row[0])
        return str(row[0])

    def _remember(self, digest: str, text: str) -> None:
        if len(self._texts) >= _KNOWN_TEXTS:
            self._texts.clear()
        self._texts[digest] = text

    def write(self, key: str, output: dict[str, Any], calls: list[LMCall]) -> None:
        """Store an accepted judgment's ``output`` and ``calls`` (see :func:`encode`) under ``key``
        (in this thread's batch inside :func:`writing_verdicts_together`)."""
        db = self._connection()
        if db is None:
            return
        self._join_batch(db)
        try:
            entry, texts = encode(output, calls, self._texts)
            for digest, text in texts.items():
                db.execute("INSERT OR REPLACE INTO messages (sha256, content) VALUES (?, ?)", (digest, text))
                self._remember(digest, text)
            db.execute("INSERT OR REPLACE INTO verdicts (key, entry) VALUES (?, ?)", (key, entry))
        except (sqlite3.Error, TypeError, ValueError) as exc:
            logger.debug("could not write a verdict to %s: %s", self.path, exc)

    def read_card(self, key: str) -> JudgeCard | None:
        """The judge card stored under ``key`` (:func:`card_key`), or ``None``."""
        db = self._connection()
        if db is None:
            return None
        try:
            row = db.execute("SELECT entry FROM judges WHERE key = ?", (key,)).fetchone()
            entry = json.loads(row[0]) if row is not None else None
        except (sqlite3.Error, TypeError, ValueError):
            return None
        if not isinstance(entry, dict) or entry.get("layout") != LAYOUT:
            return None
        fingerprint, prefix = entry.get("fingerprint"), entry.get("prefix")
        if not isinstance(fingerprint, str) or not isinstance(prefix, str):
            return None
        return JudgeCard(fingerprint, prefix.encode("utf-8"))

    def write_card(self, key: str, card: JudgeCard) -> None:
        """Store ``card`` under ``key`` (a failed write is logged and skipped)."""
        db = self._connection()
        if db is None:
            return
        entry = {"layout": LAYOUT, "fingerprint": card.fingerprint, "prefix": card.prefix.decode("utf-8")}
        try:
            db.execute("INSERT OR REPLACE INTO judges (key, entry) VALUES (?, ?)", (key, json.dumps(entry)))
        except sqlite3.Error as exc:
            logger.debug("could not write a judge card to %s: %s", self.path, exc)

    def evict(self, key: str) -> None:
        """Delete the entry under ``key``."""
        db = self._connection()
        if db is not None:
            with suppress(sqlite3.Error):
                db.execute("DELETE FROM verdicts WHERE key = ?", (key,))

    def _join_batch(self, db: sqlite3.Connection) -> None:
        """Begin this cache's transaction of the thread's batch, on its first write in the batch
        (inside :func:`writing_verdicts_together`; otherwise each write is its own)."""
        batch: list[tuple[VerdictCache, sqlite3.Connection]] | None = getattr(_batching, "caches", None)
        if batch is None or any(cache is self for cache, _ in batch):
            return
        if self._begin(db):
            batch.append((self, db))

    def _begin(self, db: sqlite3.Connection) -> bool:
        """Begin a transaction of this thread's writes; ``False`` when one is open or none begins."""
        if db.in_transaction:
            return False
        try:
            db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            logger.debug("could not begin a batch of verdict writes: %s", exc)
            return False
        return True

    def _commit(self, db: sqlite3.Connection) -> None:
        if not db.in_transaction:
            return
        try:
            db.execute("COMMIT")
        except sqlite3.Error as exc:
            logger.debug("could not commit a batch of verdict writes: %s", exc)
            with suppress(sqlite3.Error):
                db.execute("ROLLBACK")


_OPEN_CACHES = 32
"""Cache directories whose verdict caches the process keeps open (the most recently used):
one that falls out is closed once no judge holds it, and opened again when asked for."""

_caches: OrderedDict[Path, VerdictCache] = OrderedDict()
_caches_lock = threading.Lock()


def verdict_cache(cache_dir: Path) -> VerdictCache:
    """The process's :class:`VerdictCache` of ``cache_dir`` (one per directory; of the
    :data:`_OPEN_CACHES` most recently used, so a long-lived process keeps few files open)."""
    path = (Path(cache_dir).expanduser().resolve()) / VERDICTS_DB
    with _caches_lock:
        found = _caches.get(path)
        if found is None:
            found = _caches[path] = VerdictCache(path)
            while len(_caches) > _OPEN_CACHES:
                _caches.popitem(last=False)
        else:
            _caches.move_to_end(path)
        return found


_batching = threading.local()
"""This thread's batch of verdict writes: the caches written in it, with their connections."""


@contextmanager
def writing_verdicts_together() -> Iterator[None]:
    """This thread's verdict writes in the context are one transaction per cache they go to,
    committed when it ends. Only a cache written in it is opened or locked (a process may
    know many cache directories); a context inside another belongs to the outer one."""
    if getattr(_batching, "caches", None) is not None:
        yield
        return
    batch: list[tuple[VerdictCache, sqlite3.Connection]] = []
    _batching.caches = batch
    try:
        yield
    finally:
        _batching.caches = None
        for cache, db in batch:
            cache._commit(db)
