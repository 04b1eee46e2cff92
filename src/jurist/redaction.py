"""Redaction of API keys and key-shaped text from everything jurist writes.

A provider may echo the API key back: in an error body (``Incorrect API key provided:
...``, a proxy that repeats the request headers) or even in an answer. Whatever jurist
writes (results and raw replies, error messages, run exports, reports, calibration
outputs, optimization artifacts, the response cache, log records, the CLI's error lines)
goes through :func:`redact` or :func:`redact_value` first, at a few choke points: the
result store, :class:`jurist.judges.judge.JudgeFailure`, the response cache's writes,
:mod:`jurist.atomic`, the export writer, the artifact writer, ``jurist.cli.main`` and a
log-record factory (:func:`install_log_redaction`).

What is redacted, and what takes its place:

- **configured keys**, replaced with :data:`REDACTED`: every value given to
  :func:`register_secret` (jurist registers the key of each LM it builds, read from the
  variable a config's ``api_key_env`` names, and the credentials of an ``api_base`` URL),
  and the value of every environment variable whose name says it holds a secret (it ends in
  ``_API_KEY``, ``_APIKEY``, ``_KEY``, ``_TOKEN``, ``_SECRET``, ``_PASSWORD``, ...; the
  provider variables LiteLLM reads, such as ``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY`` and
  ``HF_TOKEN``, all do), when the value has at least :data:`MIN_SECRET_LENGTH` characters;
- **credentials by their place**, replaced with :data:`REDACTED` (what names them is kept):
  the user-info of any URL (``https://user:password@host/`` becomes
  ``https://[REDACTED]@host/``; a user name alone counts, as it may be a token), the token
  after ``Bearer``/``Basic``, the value of an ``Authorization`` header, and the value of an
  assignment such as ``api_key=...``, ``"api_key": "..."``, ``x-api-key: ...``,
  ``access_token=...``, ``password: ...``;
- **key-shaped text**, replaced with ``[REDACTED:<hash>]`` (see :func:`shape_token`):
  ``sk-...`` (OpenAI, Anthropic's ``sk-ant-...``) and other providers' key prefixes
  (``gsk_``, ``hf_``, ``xai-``, ``AIza``, ``AKIA``, ``ghp_``, ...).

The rule for ids (and any other text that is joined on): redaction never makes two
distinct key-shaped strings one. A key-shaped string is replaced by a token that carries
the first 16 hex digits of its SHA-256, the same in every file and every process, so a
key-shaped item id (``sk-test-...``) stays distinct from every other id and joins its
rows across ``results.jsonl``, ``items.csv``/``items.parquet``, the report, the viewer and
``labels.jsonl`` (``jurist labels export`` maps it back to the data's own id). The hash of
a provider key reveals nothing usable (the key has far more entropy than 64 bits). A
configured secret and a credential found by its place are never hashed (a password may
be short enough to guess from a hash): they become the bare :data:`REDACTED`, so the
configured key used as an id is written nowhere, not even as a hash.

A redacted model answer may mean something else than the answer did (a judge's
explanation that quoted the key now quotes ``[REDACTED]``); it is still stored, parsed and
scored as redacted, and a cached answer is served redacted on a re-run. The redaction
never touches quotes or backslashes, so redacted JSON text stays valid JSON.

A writer that joins texts it redacted one at a time (the HTML report) checks what it
composes with :func:`finds` (whether :func:`redact` would change a text),
:func:`secret_in` (whether a configured secret occurs in it: one search per secret) and
:func:`names_setting` (whether a text names a setting whose value a joined text could show).
The run store writes the texts of a served finished verdict (redacted when the verdict
was written) once :func:`secret_finder` finds no secret configured since in them.

This module imports nothing heavy and nothing of jurist, so every layer may use it (the
pure ``jurist.metrics`` do not: they write nothing).
"""

from __future__ import annotations

import contextlib
import copy
import functools
import hashlib
import json
import logging
import os
import re
import threading
import traceback
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar

__all__ = [
    "MIN_SECRET_LENGTH",
    "REDACTED",
    "TEXT_SUFFIXES",
    "RedactingFilter",
    "environment_secrets",
    "finds",
    "install_log_redaction",
    "names_setting",
    "redact",
    "redact_file",
    "redact_secrets",
    "redact_value",
    "redacting_once",
    "register_secret",
    "secret_finder",
    "secret_in",
    "shape_token",
]

REDACTED = "[REDACTED]"
"""What a secret is replaced with."""

MIN_SECRET_LENGTH = 8
"""Shorter values of secret-named variables are not redacted (they would match everywhere)."""

TEXT_SUFFIXES = frozenset(
    {".csv", ".tsv", ".json", ".jsonl", ".md", ".txt", ".yaml", ".yml", ".html", ".log"}
)
"""File suffixes :func:`redact_file` (and :mod:`jurist.atomic`) treat as text."""

T = TypeVar("T")

_SECRET_NAME = re.compile(
    r"(?:^|_)(?:API_?KEY|KEY|KEY_ID|TOKEN|SECRET|SECRET_KEY|ACCESS_KEY|PASSWORD|PASSWD|CREDENTIALS?)$",
    re.IGNORECASE,
)

_registered: set[str] = set()
_registered_lock = threading.Lock()

# Characters of a token (a key, a bearer token); never quotes or backslashes, so a
# replacement inside JSON text leaves it valid JSON. A token has a digit, or is long.
_TOKEN_CHARS = r"A-Za-z0-9._~+/=\-"
_TOKEN = rf"(?:(?=[{_TOKEN_CHARS}]*\d)[{_TOKEN_CHARS}]{{8,}}|[{_TOKEN_CHARS}]{{20,}})"
_ASSIGNED_VALUE = r"(?!\[REDACTED\])[^\s\"'\\,;}&)\]\[<>]{8,}"
_ASSIGN = r"[\"']?\s*[:=]\s*[\"']?"


def _word(first: str, rest: str, *, ignore_case: bool = True) -> list[str]:
    """Branches matching a word that no letter or digit precedes (``OPENAI_API_KEY=`` counts
    as ``API_KEY=``): its first character literal (either case), the rest a regex.

    Every branch of the pattern starts with a literal character, so the regex engine skips
    ahead to candidate characters (about 10x faster on long text than a leading ``\\b`` or
    a case-insensitive group)."""
    firsts = sorted({first.lower(), first.upper()}) if ignore_case else [first]
    tail = f"(?i:{rest})" if ignore_case else rest
    return [f"{re.escape(char)}(?<![A-Za-z0-9]{re.escape(char)}){tail}" for char in firsts]


_ASSIGNED_NAMES = [  # key-like settings whose assigned value is redacted: (first letter, rest)
    ("a", r"pi[_-]?key"),
    ("x", r"-api[_-]?key"),
    ("a", r"ccess[_-]?token"),
    ("a", r"uth[_-]?token"),
    ("r", r"efresh[_-]?token"),
    ("s", r"ession[_-]?token"),
    ("b", r"earer[_-]?token"),
    ("s", r"ecret[_-]?(?:access[_-]?)?key"),
    ("c", r"lient[_-]?secret"),
    ("p", r"assw(?:or)?d"),
]

_PLACED_BRANCHES = [
    # An Authorization header's value (any scheme, or none).
    *(
        f"{branch}{_ASSIGN}(?:(?i:bearer|basic|token|bot)\\s+)?{_TOKEN}"
        for branch in _word("a", "uthorization")
    ),
    # A token after an HTTP auth scheme.
    *(
        f"{branch}\\s+{_TOKEN}"
        for name in ("Bearer", "Basic")
        for branch in _word(name[0], name[1:], ignore_case=False)
    ),
    # An assignment of a key-like setting: api_key=..., "api_key": "...", x-api-key: ...
    *(
        f"{branch}{_ASSIGN}{_ASSIGNED_VALUE}"
        for first, rest in _ASSIGNED_NAMES
        for branch in _word(first, rest)
    ),
    # The user-info of a URL: what lies between "://" and the last "@" before the path,
    # query or fragment (a password may hold an unencoded "@": the greedy run backs off to
    # the last one). It stops at a quote or backslash, so JSON text stays valid JSON. The
    # branch starts at the "/" after the ":" (a "/" is rarer in text than a ":").
    "/(?<=:/)/[^\\s/?#\"'\\\\<>]+(?=@)",
]
"""Credentials found by their place (a header, a setting, a URL): replaced by :data:`REDACTED`."""

_PREFIX_BRANCHES = [
    # Key prefixes of providers: OpenAI/Anthropic, Groq, Hugging Face, xAI, Replicate,
    # Perplexity, Google, AWS, GitHub.
    *(
        f"{branch}(?=[A-Za-z0-9_\\-]*\\d)[A-Za-z0-9_\\-]{{10,}}"
        for branch in _word("s", "k-", ignore_case=False)
    ),
    *(
        f"{branch}[A-Za-z0-9]{{20,}}"
        for prefix in ("gsk_", "hf_", "xai-", "r8_", "pplx-")
        for branch in _word(prefix[0], re.escape(prefix[1:]), ignore_case=False)
    ),
    *(f"{branch}[0-9A-Za-z_\\-]{{30,}}" for branch in _word("A", "Iza", ignore_case=False)),
    *(f"{branch}[0-9A-Z]{{16}}\\b" for branch in _word("A", "(?:KIA|SIA)", ignore_case=False)),
    *(f"{branch}[A-Za-z0-9_]{{30,}}" for branch in _word("g", "(?:h[pousr]_|ithub_pat_)", ignore_case=False)),
]
"""Key-shaped text (a provider's key prefix): replaced by a hashed token (:func:`shape_token`)."""

_SHAPE_BRANCHES = [*_PLACED_BRANCHES, *_PREFIX_BRANCHES]
_PREFIXED = re.compile("|".join(_PREFIX_BRANCHES))

# The part of a match that is kept (the header or setting name, the auth scheme).
_KEEP = re.compile(
    r"(?i:authorization" + _ASSIGN + r"(?:(?:bearer|basic|token|bot)\s+)?"
    r"|(?:bearer|basic)\s+"
    r"|(?:" + "|".join(first + rest for first, rest in _ASSIGNED_NAMES) + ")" + _ASSIGN + ")"
)


def register_secret(value: str | None) -> None:
    """Redact ``value`` from now on in this process (e.g. a key read from a config's variable).

    Values shorter than :data:`MIN_SECRET_LENGTH` characters are ignored.
    """
    if value and len(value.strip()) >= MIN_SECRET_LENGTH:
        with _registered_lock:
            _registered.add(value.strip())


def environment_secrets(environ: Mapping[str, str] | None = None) -> list[str]:
    """Values of the environment variables whose names say they hold a secret.

    A name counts when it ends in ``_API_KEY``, ``_APIKEY``, ``_KEY``, ``_KEY_ID``,
    ``_TOKEN``, ``_SECRET``, ``_SECRET_KEY``, ``_ACCESS_KEY``, ``_PASSWORD``, ``_PASSWD`` or
    ``_CREDENTIALS`` (or is one of those words); values shorter than
    :data:`MIN_SECRET_LENGTH` characters are left out.
    """
    source = os.environ if environ is None else environ
    found = []
    for name, value in list(source.items()):
        value = value.strip()
        if len(value) >= MIN_SECRET_LENGTH and _SECRET_NAME.search(name):
            found.append(value)
    return found


def shape_token(text: str) -> str:
    """What key-shaped ``text`` is replaced with: ``[REDACTED:`` and the first 16 hex digits
    of the SHA-256 of its UTF-8 bytes, then ``]``. The same text gives the same token in every
    file and process; two distinct texts give two distinct tokens (a collision of the 64-bit
    hashes becomes likely only past about four billion distinct key-shaped strings)."""
    digest = hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest()[:16]
    return f"[REDACTED:{digest}]"


class _Redaction:
    """The compiled pattern of one set of configured secrets, and its replacement."""

    __slots__ = ("pattern", "secrets")

    def __init__(self, secrets: tuple[str, ...]) -> None:
        alternatives = [re.escape(secret) for secret in secrets]  # longest first (sorted by the caller)
        self.pattern = re.compile("|".join([*alternatives, *_SHAPE_BRANCHES]))
        self.secrets = frozenset(secrets)

    def sub(self, text: str) -> str:
        return self.pattern.sub(self._replace, text)

    def finds(self, text: str) -> bool:
        """Whether anything in ``text`` would be redacted (a scan that builds no new text)."""
        return self.pattern.search(text) is not None

    def _replace(self, match: re.Match[str]) -> str:
        text = match.group(0)
        if text in self.secrets:
            return REDACTED  # a configured secret: never hashed (it may be short enough to guess)
        if text.startswith("//"):
            return "//" + REDACTED  # a URL's user-info; the "@" and the host stay
        kept = _KEEP.match(text)
        if kept is not None and kept.end() < len(text):
            return kept.group(0) + REDACTED  # a header's or a setting's value
        if _PREFIXED.fullmatch(text):
            return shape_token(text)  # key-shaped: distinct texts stay distinct
        return REDACTED


@functools.lru_cache(maxsize=64)
def _compile(secrets: tuple[str, ...]) -> _Redaction:
    return _Redaction(secrets)


_environment_seen: tuple[int, tuple[str, ...]] | None = None


def _current_environment_secrets() -> tuple[str, ...]:
    """:func:`environment_secrets` of ``os.environ``, scanned again only when it changed."""
    global _environment_seen
    data = getattr(os.environ, "_data", None)  # CPython's raw mapping: hashing it is cheap
    if not isinstance(data, dict):
        return tuple(environment_secrets())
    state = hash(tuple(data.items()))
    seen = _environment_seen
    if seen is not None and seen[0] == state:
        return seen[1]
    found = tuple(environment_secrets())
    _environment_seen = (state, found)
    return found


def _configured() -> set[str]:
    """The configured secrets: registered, and those of secret-named environment variables."""
    with _registered_lock:
        known = set(_registered)
    known.update(_current_environment_secrets())
    return known


def _pattern(extra: Iterable[str | None] = ()) -> _Redaction:
    known = _configured()
    known.update(value.strip() for value in extra if value and len(value.strip()) >= MIN_SECRET_LENGTH)
    return _compile(tuple(sorted(known, key=lambda secret: (-len(secret), secret))))


class _Once:
    """What :func:`redacting_once` keeps for its thread: the secrets' pattern, read once, and
    the texts found clean under it (at most :data:`_CLEAN_CHARACTERS` characters of them)."""

    __slots__ = ("characters", "clean", "pattern")

    def __init__(self, pattern: _Redaction) -> None:
        self.pattern = pattern
        self.clean: set[str] = set()
        self.characters = 0

    def remember(self, texts: Iterable[str]) -> None:
        for text in texts:
            if self.characters + len(text) > _CLEAN_CHARACTERS:
                if len(text) > _CLEAN_CHARACTERS // 8:
                    continue  # a long text is not kept
                self.clean.clear()  # start over
                self.characters = 0
            self.clean.add(text)
            self.characters += len(text)


_CLEAN_CHARACTERS = 1 << 20
"""How much text a :func:`redacting_once` context remembers as clean (then it starts over):
a bound on the memory it holds, whatever it redacts."""

_once = threading.local()


@contextlib.contextmanager
def redacting_once() -> Iterator[None]:
    """Redact what this thread writes in the context with the secrets known when it began,
    and scan each distinct text once: a text :func:`redact` or :func:`redact_value` found
    clean is not scanned again in the context (a reply that goes to the response cache, the
    verdict cache and the run's store is scanned once, not three times). What is redacted
    is what it would be outside the context, as long as no secret is configured meanwhile
    (a call given ``extra`` secrets is redacted as outside it). Contexts nest (the outermost
    one holds).
    """
    if getattr(_once, "active", None) is not None:
        yield
        return
    _once.active = _Once(_pattern())
    try:
        yield
    finally:
        _once.active = None


def _in_context(extra: Iterable[str | None]) -> tuple[_Redaction, _Once | None]:
    """The pattern to redact with, and the :func:`redacting_once` context that holds it (none
    when ``extra`` names secrets: those are redacted as outside the context)."""
    given = tuple(extra)
    active: _Once | None = getattr(_once, "active", None)
    if active is not None and not given:
        return active.pattern, active
    return _pattern(given), None


def redact(text: str, *, extra: Iterable[str | None] = ()) -> str:
    """``text`` with every configured key, credential and key-shaped string replaced (see the
    module's docstring: :data:`REDACTED`, or a hashed token for key-shaped text).

    Args:
        text: Any text (an error message, a raw reply, JSON, CSV, Markdown).
        extra: More secret values to redact (e.g. a key not read from the environment).
    """
    if not text:
        return text
    return _redact_text(text, *_in_context(extra))


def _redact_text(text: str, pattern: _Redaction, active: _Once | None) -> str:
    if active is None:
        return pattern.sub(text)
    if text in active.clean:
        return text
    new = pattern.sub(text)
    if new == text:
        active.remember((text,))
    return new


def finds(text: str) -> bool:
    """Whether :func:`redact` would change ``text``: one scan that builds no new text."""
    return bool(text) and _in_context(())[0].finds(text)


def secret_in(text: str) -> bool:
    """Whether a configured secret (a value given to :func:`register_secret`, or that of a
    secret-named environment variable; inside :func:`redacting_once`, those known when it
    began) occurs in ``text``: one substring search per secret, nothing found by its shape
    or place."""
    return any(secret in text for secret in _in_context(())[0].secrets)


def secret_finder() -> Callable[[str], bool]:
    """A test of whether a configured secret (as :func:`secret_in` knows them now) occurs in a
    text, or in JSON text as ``json.dumps`` writes a string holding it (its quotes,
    backslashes and control characters escaped; non-ASCII characters escaped or not): one
    substring search per form of each secret, nothing found by its shape or place."""
    forms = _json_forms(_in_context(())[0].secrets)
    return lambda text: any(form in text for form in forms)


@functools.lru_cache(maxsize=64)
def _json_forms(secrets: frozenset[str]) -> tuple[str, ...]:
    forms = dict.fromkeys(sorted(secrets))
    for secret in secrets:
        for ascii_only in (False, True):
            forms[json.dumps(secret, ensure_ascii=ascii_only)[1:-1]] = None
    return tuple(forms)


_SETTING_NAME = re.compile(
    "(?i:authorization|" + "|".join(first + rest for first, rest in _ASSIGNED_NAMES) + ")"
)


def names_setting(text: str) -> bool:
    """Whether ``text`` holds, in any case, the name of a header or setting whose assigned
    value :func:`redact` replaces (``authorization``, ``api_key``, ``password``, ...).

    Redaction of texts one at a time misses such a value when a text is only its name and
    the value is joined to it later (a JSON key and its value): a writer that composes
    texts redacted one at a time checks the names it joins with this."""
    return _SETTING_NAME.search(text) is not None


@functools.lru_cache(maxsize=64)
def _secrets_only(secrets: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(re.escape(secret) for secret in secrets))  # longest first


def redact_secrets(text: str) -> str:
    """``text`` with only the configured secrets replaced by :data:`REDACTED`: the values given
    to :func:`register_secret` and those of secret-named environment variables, nothing found
    by its shape or place.

    It is what a run's ``results.sqlite`` keeps of an item id (the key its items are resumed
    and joined by, so a key-shaped id is kept as the data has it): the configured key, used
    as an id, is never written there either.
    """
    if not text:
        return text
    active: _Once | None = getattr(_once, "active", None)
    known = active.pattern.secrets if active is not None else _configured()
    present = sorted(
        (secret for secret in known if secret in text), key=lambda secret: (-len(secret), secret)
    )
    if not present:
        return text
    return _secrets_only(tuple(present)).sub(REDACTED, text)


def _redact_walk(value: Any, pattern: _Redaction, depth: int, seen: set[int]) -> tuple[Any, bool]:
    """``(redacted value, changed)``; unchanged parts are the original objects."""
    if isinstance(value, str):
        new = pattern.sub(value)
        return (new, True) if new != value else (value, False)
    if value is None or isinstance(value, bool | int | float | complex):
        return value, False
    if isinstance(value, bytes | bytearray):
        text = bytes(value).decode("utf-8", errors="surrogateescape")
        new_text = pattern.sub(text)
        if new_text == text:
            return value, False
        data = new_text.encode("utf-8", errors="surrogateescape")
        return (bytearray(data) if isinstance(value, bytearray) else data), True
    if depth > 64 or id(value) in seen:
        return value, False
    seen.add(id(value))
    try:
        if type(value) is dict:
            changed = False
            result: dict[Any, Any] = {}
            for key, item in value.items():
                new_key, key_changed = _redact_walk(key, pattern, depth + 1, seen)
                new_item, item_changed = _redact_walk(item, pattern, depth + 1, seen)
                result[new_key] = new_item
                changed = changed or key_changed or item_changed
            return (result, True) if changed else (value, False)
        if type(value) in (list, tuple, set, frozenset):
            items = [_redact_walk(item, pattern, depth + 1, seen) for item in value]
            if not any(changed for _, changed in items):
                return value, False
            return type(value)(item for item, _ in items), True
        return _redact_object(value, pattern, depth, seen)
    finally:
        seen.discard(id(value))


def _redact_object(value: Any, pattern: _Redaction, depth: int, seen: set[int]) -> tuple[Any, bool]:
    """An object's attributes (a pydantic model, a dataclass, a response object), or a
    mapping or sequence of another type, redacted into a copy when any of them changes."""
    attributes = getattr(value, "__dict__", None)
    if isinstance(attributes, dict):
        changes = {}
        for name, item in attributes.items():
            new_item, changed = _redact_walk(item, pattern, depth + 1, seen)
            if changed:
                changes[name] = new_item
        extra = getattr(value, "__pydantic_extra__", None)
        new_extra, extra_changed = (
            _redact_walk(extra, pattern, depth + 1, seen) if isinstance(extra, dict) else (None, False)
        )
        if not changes and not extra_changed:
            return value, False
        try:
            duplicate = copy.copy(value)
            duplicate.__dict__.update(changes)  # bypasses validation and frozen models, on purpose
            if extra_changed:
                object.__setattr__(duplicate, "__pydantic_extra__", new_extra)
        except Exception:
            return value, False  # an object that cannot be copied is left as it is
        return duplicate, True
    if isinstance(value, Mapping):
        as_dict, changed = _redact_walk(dict(value), pattern, depth, seen)
        return (as_dict, True) if changed else (value, False)
    return value, False


def _collect_texts(value: Any, texts: list[str], depth: int, path: set[int]) -> None:
    """Append to ``texts`` every text :func:`_redact_walk` would redact in ``value``, walking
    it as that function walks it: strings, bytes (as UTF-8 text), dict keys and values, list,
    tuple and set items, other mappings, and the attributes of objects (a pydantic model's
    fields and extra fields); not past depth 64 nor into a cycle."""
    if isinstance(value, str):
        texts.append(value)
        return
    if value is None or isinstance(value, bool | int | float | complex):
        return
    if isinstance(value, bytes | bytearray):
        texts.append(bytes(value).decode("utf-8", errors="surrogateescape"))
        return
    if depth > 64 or id(value) in path:
        return
    path.add(id(value))
    try:
        if type(value) is dict:
            for key, item in value.items():
                _collect_texts(key, texts, depth + 1, path)
                _collect_texts(item, texts, depth + 1, path)
        elif type(value) in (list, tuple, set, frozenset):
            for item in value:
                _collect_texts(item, texts, depth + 1, path)
        else:
            attributes = getattr(value, "__dict__", None)
            if isinstance(attributes, dict):
                for item in attributes.values():
                    _collect_texts(item, texts, depth + 1, path)
                extra = getattr(value, "__pydantic_extra__", None)
                if isinstance(extra, dict):
                    _collect_texts(extra, texts, depth + 1, path)
            elif isinstance(value, Mapping):
                _collect_texts(dict(value), texts, depth, path)
    finally:
        path.discard(id(value))


def redact_value(value: T, *, extra: Iterable[str | None] = ()) -> T:
    """``value`` with every string in it redacted (see :func:`redact`).

    Strings, bytes, dicts, lists, tuples and sets are walked, and so are the attributes of
    objects (pydantic models such as LiteLLM's ``ModelResponse``, dataclasses). The value is
    returned unchanged (the same object) when nothing in it is secret; otherwise a copy is
    returned and ``value`` itself is never modified.

    The common case costs one scan: every text in ``value`` is joined with line breaks and
    scanned at once. When nothing matches, nothing in ``value`` is secret (a pattern that
    matches inside one text matches inside the joined text, and none is anchored to a text's
    start or end) and ``value`` is returned without a second walk; otherwise each text is
    redacted on its own.
    """
    pattern, active = _in_context(extra)
    if isinstance(value, str):
        return _redact_text(value, pattern, active) if value else value  # type: ignore[return-value]
    texts: list[str] = []
    _collect_texts(value, texts, 0, set())
    if active is not None:
        texts = [text for text in texts if text not in active.clean]
    if not texts:
        return value
    if not pattern.finds(texts[0] if len(texts) == 1 else "\n".join(texts)):
        if active is not None:
            active.remember(texts)
        return value
    new, _changed = _redact_walk(value, pattern, 0, set())
    return new  # type: ignore[no-any-return]


def redact_file(path: str | Path) -> bool:
    """Redact a UTF-8 text file in place (not atomically: meant for a temporary file).

    Returns:
        Whether the file changed. A file that is not UTF-8 text is left alone.
    """
    file = Path(path)
    try:
        with open(file, encoding="utf-8", newline="") as handle:  # line ends kept as they are
            text = handle.read()
    except (OSError, UnicodeDecodeError):
        return False
    new = redact(text)
    if new == text:
        return False
    with open(file, "w", encoding="utf-8", newline="") as handle:
        handle.write(new)
    return True


def _redact_record(record: logging.LogRecord) -> None:
    """Redact a log record's message, exception text and stack text in place."""
    if getattr(record, "_jurist_redacted", False):
        return
    record._jurist_redacted = True
    pattern = _pattern()
    try:
        message = record.getMessage()
    except Exception:
        message = None
    if message is not None:
        redacted = pattern.sub(message)
        if redacted != message:
            record.msg, record.args = redacted, None
    if record.exc_info and record.exc_info[1] is not None and not record.exc_text:
        text = "".join(traceback.format_exception(*record.exc_info)).rstrip("\n")
        redacted = pattern.sub(text)
        if redacted != text:
            record.exc_text = redacted  # formatters print exc_text instead of formatting exc_info
    elif record.exc_text:
        record.exc_text = pattern.sub(record.exc_text)
    if record.stack_info:
        record.stack_info = pattern.sub(record.stack_info)


class RedactingFilter(logging.Filter):
    """A logging filter that redacts each record it sees (and never drops one).

    Add it to a handler to redact what that handler writes. :func:`install_log_redaction`
    redacts every record when it is made, whichever logger or handler it goes to.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        _redact_record(record)
        return True


_install_lock = threading.Lock()
_installed = False


def install_log_redaction() -> None:
    """Redact every log record and warning of this process when it is made (idempotent).

    Log records are redacted by wrapping the log-record factory, so records of every logger
    (jurist's, DSPy's, LiteLLM's, httpx's, asyncio's) are redacted whatever handler
    receives them; a logger filter would miss records that propagate from child loggers.
    Warnings are redacted by wrapping :func:`warnings.formatwarning`.
    """
    global _installed
    with _install_lock:
        if _installed:
            return
        previous_factory = logging.getLogRecordFactory()

        def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
            record = previous_factory(*args, **kwargs)
            with contextlib.suppress(Exception):  # redaction must never break logging
                _redact_record(record)
            return record

        logging.setLogRecordFactory(factory)
        previous_format = warnings.formatwarning

        def formatwarning(
            message: Warning | str,
            category: type[Warning],
            filename: str,
            lineno: int,
            line: str | None = None,
        ) -> str:
            return redact(previous_format(message, category, filename, lineno, line))

        warnings.formatwarning = formatwarning
        _installed = True
