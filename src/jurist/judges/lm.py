"""The one place where jurist builds a ``dspy.LM``, and where LM usage is counted.

Facts this module is built around (DSPy 3.4 / LiteLLM 1.106):

- DSPy's own retries have no cap on Retry-After and lose it under LiteLLM, so the LM is
  built with ``num_retries=0`` and :mod:`jurist.judges.retry` retries instead.
- DSPy's cache key ignores ``api_base``: two servers with the same model string would share
  entries. The key does include ``rollout_id`` (which is never sent to the provider), so
  jurist derives a *cache salt* from ``api_base`` and passes it as the rollout id; a retry
  after an unparseable answer adds the attempt number to the salt, so it bypasses the
  cached bad answer instead of repeating it.
- ``save_program=True`` would pickle the API key; jurist never uses it, and the key, read
  from the environment, never leaves the LM object.
- DSPy caches every answer, including one that cannot be parsed, so a re-run (or
  ``--retry-failed``) would replay the bad answer forever. jurist's cache
  (:class:`JuristCache`) lets a judge *hold* the writes of an attempt
  (:attr:`UsageMeter.hold_cache_writes`): they reach the cache only when the attempt's
  answer was accepted (:meth:`UsageMeter.commit_cache`), and are dropped otherwise. An
  answer the cache served that then fails to parse (written by an older jurist, or by code
  that did not hold its writes) is evicted (:meth:`UsageMeter.evict_served`).
- A provider may echo the API key back in an error or an answer. The key of every LM built
  here is registered with :mod:`jurist.redaction`, log records are redacted
  (:func:`jurist.redaction.install_log_redaction`), and :class:`JuristCache` redacts each
  answer before it is stored, so the key never reaches the disk cache (a re-run serves
  the redacted answer).
- DSPy reports only answered calls; a request that got a 429, a 500 or timed out is not in
  its usage. :class:`JudgeLM` counts those too, so ``Usage.calls`` is every request the
  provider received.
- Every call is also kept in detail on the meter (:attr:`UsageMeter.call_details`, one
  :class:`jurist.schemas.LMCall` each): the messages DSPy rendered (its history entry holds
  them, for answers from the cache too), the raw replies, cache hit or not, tokens, cost,
  latency and the parse attempt; a call that raised is kept with its messages and error.
  The runner stores them with the item (:mod:`jurist.runner.store`).
- A damaged shard of the disk cache (an SQLite file of DSPy's ``diskcache.FanoutCache``)
  would stop every judge at start-up. It is moved aside with a warning and rebuilt empty
  (:func:`configure_cache`); a read that hits damage later is a cache miss.
- Every LM built here carries its model's rate limits and adaptive in-flight cap
  (:attr:`JudgeLM.rate_limits`, :mod:`jurist.judges.limits`), shared by every LM of the
  process with the same model and ``api_base``.
- The batch runner makes no disk write on its event loop: inside
  :func:`deferring_cache_writes` the accepted answers' cache writes are handed to the
  caller (the runner's writer thread) instead of being made.
"""

from __future__ import annotations

import base64
import contextvars
import functools
import hashlib
import json
import logging
import os
import sqlite3
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager, nullcontext, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dspy
from dspy.clients import Cache

from jurist.errors import ConfigError, FatalProviderError
from jurist.judges import dspy_seam
from jurist.judges.cache_context import (
    REPEAT_SALT_STRIDE,
    batch_response_cache_writes,
    current_repeat,
    defer_cache_write,
)
from jurist.judges.config import LM15_USERINFO, JudgeConfig, Price
from jurist.judges.limits import ModelLimits, limits_for, prompt_estimate
from jurist.judges.retry import ProviderProblem, reached_provider
from jurist.redaction import install_log_redaction, redact, redact_value, register_secret
from jurist.schemas import LMCall, Message, Usage

logger = logging.getLogger(__name__)


@dataclass
class UsageMeter:
    """Counts the LM calls made while it is active (see :func:`metering`).

    ``calls`` is every request the provider received: answered ones, and failed ones that
    reached it (429, 500, timeout, 401, ...; see :func:`jurist.judges.retry.reached_provider`).
    ``failed_calls`` is the part of ``calls`` that failed. ``cache_hits`` are answers served
    from the cache; tokens and cost are summed over answered provider calls.

    With ``hold_cache_writes``, answers are not written to the response cache when they
    arrive but held until :meth:`commit_cache` (the attempt's answer was accepted) or dropped
    by :meth:`drop_held` (it was not): an unparseable answer never enters the cache.

    ``call_details`` keeps every call in detail (:class:`jurist.schemas.LMCall`: messages, replies,
    cache hit, tokens, cost, latency, the parse attempt it belongs to, the error of a call
    that raised); ``attempt`` is the current parse attempt (:meth:`begin_attempt`).
    """

    calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None
    raw: list[str] = field(default_factory=list)
    failed_calls: int = 0
    hold_cache_writes: bool = False
    held: list[tuple[JuristCache, str, Any, bool]] = field(default_factory=list)
    served: list[tuple[JuristCache, str]] = field(default_factory=list)
    call_details: list[LMCall] = field(default_factory=list)
    attempt: int = 0

    def record(
        self, entry: dict[str, Any], *, latency_s: float | None = None, price: Price | None = None
    ) -> None:
        """Count one finished LM call from its DSPy history entry, and keep it in detail.

        Args:
            entry: DSPy's history entry of the call (messages, outputs, usage, cost).
            latency_s: Seconds the call took, where measured.
            price: The judge config's price (``price:``); where given, the call costs its
                tokens at that price instead of DSPy's estimate from the price table.
        """
        usage = entry.get("usage") or {}
        prompt_tokens = completion_tokens = 0
        cost: float | None = None
        if usage:
            self.calls += 1
            prompt_tokens = int(usage.get("prompt_tokens") or 0)
            completion_tokens = int(usage.get("completion_tokens") or 0)
            self.prompt_tokens += prompt_tokens
            self.completion_tokens += completion_tokens
            if price is not None:
                cost = price.cost(prompt_tokens, completion_tokens)
                self.cost = (self.cost or 0.0) + cost
            elif entry.get("cost") is not None:
                cost = float(entry["cost"])
                self.cost = (self.cost or 0.0) + cost
        else:
            # DSPy reports cached answers with empty usage; their stored cost is not spent again.
            self.cache_hits += 1
        replies: list[str] = []
        for output in entry.get("outputs") or []:
            text = output.get("text") if isinstance(output, dict) else output
            if text is not None:
                replies.append(str(text))
        self.raw.extend(replies)
        self.call_details.append(
            LMCall(
                attempt=max(self.attempt, 1),
                messages=rendered_messages(entry.get("messages"), entry.get("prompt")),
                replies=replies,
                cache_hit=not usage,
                prompt_tokens=prompt_tokens,
                completion_tokens=completion_tokens,
                cost=cost,
                latency_s=latency_s,
            )
        )

    def record_failure(
        self, exc: BaseException, *, messages: Any = None, prompt: Any = None, latency_s: float | None = None
    ) -> None:
        """Count a call that raised, if the request reached the provider, and keep it in detail.

        Args:
            exc: What the call raised.
            messages: The messages the call was given.
            prompt: The prompt the call was given instead of messages, if any.
            latency_s: Seconds until it raised, where measured.
        """
        if reached_provider(exc):
            self.calls += 1
            self.failed_calls += 1
        first_line = (str(exc).strip().splitlines() or [""])[0]
        self.call_details.append(
            LMCall(
                attempt=max(self.attempt, 1),
                messages=rendered_messages(messages, prompt),
                latency_s=latency_s,
                error=f"{type(exc).__name__}: {first_line}" if first_line else type(exc).__name__,
            )
        )

    def usage(self) -> Usage:
        return Usage(
            calls=self.calls,
            cache_hits=self.cache_hits,
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            cost=self.cost,
        )

    def begin_attempt(self) -> None:
        """Start the next parse attempt: forget the held writes and served keys of the last one."""
        self.attempt += 1
        self.held.clear()
        self.served.clear()

    def commit_cache(self) -> None:
        """Write the held answers of an accepted attempt to the cache (blocking disk I/O), or,
        inside :func:`deferring_cache_writes`, hand the writes to its collector instead."""
        held, self.held = self.held, []
        self.served.clear()
        for cache, key, value, memory in held:
            defer_cache_write(functools.partial(cache.write, key, value, memory=memory))

    def drop_held(self) -> None:
        """Drop the held answers of an attempt whose answer was not accepted."""
        self.held.clear()

    def evict_served(self) -> int:
        """Delete the cache entries that served this attempt (blocking disk I/O); return how many."""
        served, self.served = self.served, []
        for cache, key in served:
            cache.evict(key)
        return len(served)


def rendered_messages(messages: Any, prompt: Any = None) -> list[Message]:
    """The chat messages of one LM call as :class:`jurist.schemas.Message` records.

    Content that is not text (a list of content parts, an image) is kept as its JSON. A call
    given a bare prompt instead of messages gives one user message.
    """
    if not messages:
        return [Message(role="user", content=str(prompt))] if prompt else []
    found = []
    for message in messages:
        if not isinstance(message, dict):
            found.append(Message(role="user", content=str(message)))
            continue
        content = message.get("content")
        text = (
            content
            if isinstance(content, str)
            else json.dumps(content, ensure_ascii=False, default=str)
            if content is not None
            else ""
        )
        found.append(Message(role=str(message.get("role") or ""), content=text))
    return found


_meter: contextvars.ContextVar[UsageMeter | None] = contextvars.ContextVar("jurist_usage_meter", default=None)
_call_start: contextvars.ContextVar[float | None] = contextvars.ContextVar("jurist_call_start", default=None)

Probe = Callable[["JudgeLM", Any, Any, dict[str, Any]], None]
"""Given an LM call instead of the provider: the LM, prompt, messages and keyword arguments."""
_probe: contextvars.ContextVar[Probe | None] = contextvars.ContextVar("jurist_probe", default=None)


@contextmanager
def probing(probe: Probe) -> Iterator[None]:
    """Hand every asynchronous call of a :class:`JudgeLM` in this context to ``probe`` before
    anything else happens (no cache read, no request); ``probe`` stops the program by
    raising (a ``BaseException`` passes DSPy's adapter fallbacks). Used to see what a judge
    would send (:mod:`jurist.judges.estimate`)."""
    token = _probe.set(probe)
    try:
        yield
    finally:
        _probe.reset(token)


@contextmanager
def metering(*, hold_cache_writes: bool = False) -> Iterator[UsageMeter]:
    """Attribute every LM call made in this context (thread or asyncio task) to a new meter.

    Args:
        hold_cache_writes: Hold the answers back from the response cache until the caller
            commits them (see :class:`UsageMeter`).
    """
    meter = UsageMeter(hold_cache_writes=hold_cache_writes)
    token = _meter.set(meter)
    try:
        yield meter
    finally:
        _meter.reset(token)


class JudgeLM(dspy.LM):
    """A ``dspy.LM`` that reports each call to the active :class:`UsageMeter`.

    It keeps no history of its own (DSPy's history would grow with every judged item); the
    raw text of each answer, the messages sent and the call's latency go to the meter, and
    from there into the item's result. A call that fails is counted too when its request
    reached the provider, so the meter's ``calls`` equal the requests the provider received.

    An async call is made on the caller's event loop by :mod:`jurist.judges.dspy_seam` (DSPy's
    own parts, without its worker-thread hops and per-call lookups) when that module covers
    it, and by DSPy's public ``acall`` otherwise; both read and write the same cache entries
    and report the call to :meth:`update_history`.
    """

    rate_limits: ModelLimits | None = None
    """The model's rate limits and adaptive in-flight cap (set by :func:`build_lm`)."""

    price: Price | None = None
    """The judge config's price per million tokens (set by :func:`build_lm`): the cost of
    each call, of ``--dry-run`` and of ``--max-cost`` (:mod:`jurist.judges.pricing`)."""

    def update_history(self, entry: dict[str, Any]) -> None:
        reported = _reported.get()
        if reported is not None:
            reported.append(entry)
        meter = _meter.get()
        if meter is not None:
            start = _call_start.get()
            latency = time.perf_counter() - start if start is not None else None
            meter.record(entry, latency_s=latency, price=self.price)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        token = _call_start.set(start)
        try:
            if self.rate_limits is None:
                return super().__call__(*args, **kwargs)
            prompt = kwargs.get("prompt", args[0] if args else None)
            with self.rate_limits.request_sync(prompt_estimate(kwargs.get("messages"), prompt)):
                return super().__call__(*args, **kwargs)
        except Exception as exc:
            _record_failure(exc, args, kwargs, start)
            raise
        finally:
            _call_start.reset(token)

    async def acall(self, prompt: Any = None, *, messages: Any = None, **kwargs: Any) -> Any:
        probe = _probe.get()
        if probe is not None:
            probe(self, prompt, messages, kwargs)
        start = time.perf_counter()
        token = _call_start.set(start)
        try:
            if dspy_seam.covered(self, prompt, messages, kwargs):
                return await dspy_seam.acomplete(self, prompt, messages, kwargs)
            return await self._public_acall(prompt, messages, kwargs)
        except Exception as exc:
            _record_failure(exc, (prompt,), {"messages": messages}, start)
            raise
        finally:
            _call_start.reset(token)

    async def _public_acall(self, prompt: Any, messages: Any, kwargs: dict[str, Any]) -> Any:
        """DSPy's public ``acall``, under the LM's rate limits (the ``tpm`` reservation settled
        with the tokens DSPy reports). DSPy reports the call to :meth:`update_history` even
        where its history is turned off (``disable_history``), so the meter sees every call."""
        reported: list[dict[str, Any]] = []
        token = _reported.set(reported)
        try:
            with dspy.context(disable_history=False) if settings_disable_history() else nullcontext():
                if self.rate_limits is None:
                    return await super().acall(prompt, messages=messages, **kwargs)
                async with self.rate_limits.request(prompt_estimate(messages, prompt)) as turn:
                    outputs = await super().acall(prompt, messages=messages, **kwargs)
                    if reported:
                        turn.usage(reported[-1].get("usage"))
                    return outputs
        finally:
            _reported.reset(token)


_reported: contextvars.ContextVar[list[dict[str, Any]] | None] = contextvars.ContextVar(
    "jurist_reported_calls", default=None
)
"""The history entries DSPy reports during one public call (:meth:`JudgeLM._public_acall`)."""


def settings_disable_history() -> bool:
    """Whether DSPy's history is turned off here (``dspy.configure(disable_history=True)``)."""
    return bool(dspy.settings.get("disable_history", False))


def _record_failure(exc: BaseException, args: tuple[Any, ...], kwargs: dict[str, Any], start: float) -> None:
    meter = _meter.get()
    if meter is not None:
        prompt = kwargs.get("prompt", args[0] if args else None)
        meter.record_failure(
            exc, messages=kwargs.get("messages"), prompt=prompt, latency_s=time.perf_counter() - start
        )


class JuristCache(Cache):
    """DSPy's response cache, with writes a judge can hold back and entries it can evict.

    Inside :func:`metering` with ``hold_cache_writes``, :meth:`put` keeps the answer on the
    meter instead of writing it; the judge commits it once the answer parsed. Every answer
    served to a metered call is noted on the meter, so the judge can evict it if it turns
    out not to parse. Without an active meter it behaves like DSPy's cache. A read that hits
    a damaged shard is logged once and treated as a miss. Every answer is redacted before it
    is stored (:func:`jurist.redaction.redact_value`): a key the provider echoed never
    reaches the disk.
    """

    _warned_damage = False

    def _warn_damage(self, exc: BaseException) -> None:
        if not self._warned_damage:
            self._warned_damage = True
            logger.warning("the response cache in %s is damaged (%s); skipping it", self.disk_cache_dir, exc)

    def get(self, request: dict[str, Any], ignored_args_for_cache_key: list[str] | None = None) -> Any:
        try:
            value = super().get(request, ignored_args_for_cache_key)
        except sqlite3.DatabaseError as exc:
            self._warn_damage(exc)
            return None
        meter = _meter.get()
        if value is not None and meter is not None:
            with suppress(Exception):
                meter.served.append((self, self.cache_key(request, ignored_args_for_cache_key)))
        return value

    def put(
        self,
        request: dict[str, Any],
        value: Any,
        ignored_args_for_cache_key: list[str] | None = None,
        enable_memory_cache: bool = True,
    ) -> None:
        meter = _meter.get()
        if meter is None or not meter.hold_cache_writes:
            super().put(request, redact_value(value), ignored_args_for_cache_key, enable_memory_cache)
            return
        try:
            key = self.cache_key(request, ignored_args_for_cache_key)
        except Exception:
            return  # DSPy skips values it cannot key, too
        meter.held.append((self, key, value, enable_memory_cache))

    def cache_key(self, request: dict[str, Any], ignored_args_for_cache_key: list[str] | None = None) -> str:
        """DSPy's key of ``request``, without an ``Authorization`` header among its
        ``extra_headers`` (the basic auth of an ``api_base``'s user-info, see
        :func:`_basic_auth`): credentials never enter the key, so a request keys as the same
        request made without them."""
        headers = request.get("extra_headers")
        if isinstance(headers, Mapping) and any(str(name).lower() == "authorization" for name in headers):
            kept = {name: value for name, value in headers.items() if str(name).lower() != "authorization"}
            request = {name: value for name, value in request.items() if name != "extra_headers"}
            if kept:
                request["extra_headers"] = kept
        return super().cache_key(request, ignored_args_for_cache_key)

    def key_of(self, request: dict[str, Any], ignored: list[str]) -> str | None:
        """The key DSPy stores ``request``'s answer under (the arguments ``ignored`` left out,
        as DSPy leaves out ``api_key``, ``api_base`` and ``base_url``), or ``None`` if it
        cannot be keyed."""
        try:
            return self.cache_key(request, ignored)
        except Exception:
            return None  # DSPy neither reads nor writes a request it cannot key

    def read(self, key: str) -> Any:
        """The stored answer under ``key`` as it was stored, or ``None``.

        A read that hits a damaged shard is logged once and is a miss; an entry that cannot
        be deserialised is deleted and is a miss (as DSPy does).
        """
        if self.enable_memory_cache:
            with self._lock:
                value = self.memory_cache.get(key)
            if value is not None:
                return value
        if not self.enable_disk_cache:
            return None
        from jurist.judges.dspy_seam import DeserializationError  # read only on the fast path

        try:
            return self.disk_cache.get(key)
        except DeserializationError:
            with suppress(Exception):
                self.disk_cache.delete(key)
            return None
        except sqlite3.DatabaseError as exc:
            self._warn_damage(exc)
            return None

    def note_served(self, key: str) -> None:
        """Note on the active meter that the entry under ``key`` served an answer (so a judge
        can evict it if the answer does not parse)."""
        meter = _meter.get()
        if meter is not None:
            meter.served.append((self, key))

    def offer(self, key: str, value: Any) -> None:
        """Store a new answer under ``key``: held on the active meter when it holds writes
        (see :class:`UsageMeter`), otherwise written now (redacted)."""
        meter = _meter.get()
        if meter is not None and meter.hold_cache_writes:
            meter.held.append((self, key, value, True))
        else:
            self.write(key, value)

    def write(self, key: str, value: Any, *, memory: bool = True) -> None:
        """Store ``value`` (redacted) under ``key`` (a key from :meth:`cache_key`)."""
        value = redact_value(value)
        if memory and self.enable_memory_cache:
            with self._lock:
                self.memory_cache[key] = value
        if self.enable_disk_cache:
            try:
                self.disk_cache.set(key, value)
            except Exception as exc:
                logger.debug("could not write a response to the disk cache: %s", exc)

    @contextmanager
    def writing_together(self) -> Iterator[None]:
        """Make the disk writes inside this context one transaction per shard instead of one
        each (about half the cost of a write). The shards are locked for the context's
        length; if they cannot be locked, each write is its own transaction as usual."""
        with ExitStack() as stack:
            if self.enable_disk_cache:
                try:
                    stack.enter_context(self.disk_cache.transact(retry=True))
                except Exception as exc:
                    logger.debug("could not lock the response cache for a batch of writes: %s", exc)
            yield

    def evict(self, key: str) -> None:
        """Delete the entry under ``key`` from memory and disk."""
        if self.enable_memory_cache:
            with self._lock:
                self.memory_cache.pop(key, None)
        if self.enable_disk_cache:
            try:
                self.disk_cache.delete(key)
            except Exception as exc:
                logger.debug("could not delete a response from the disk cache: %s", exc)


@contextmanager
def _response_cache_together() -> Iterator[None]:
    """This thread's writes to DSPy's response cache as one transaction, when it is jurist's."""
    cache = dspy.cache
    with cache.writing_together() if isinstance(cache, JuristCache) else nullcontext():
        yield


batch_response_cache_writes(_response_cache_together)

_cache_lock = threading.Lock()
_cache_dir_in_use: Path | None = None


def _shard_is_damaged(db: Path) -> str | None:
    try:
        connection = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        return str(exc)
    try:
        row = connection.execute("PRAGMA quick_check(1)").fetchone()
        return None if row and row[0] == "ok" else str(row[0] if row else "no answer")
    except sqlite3.Error as exc:
        return str(exc)
    finally:
        connection.close()


def repair_cache_dir(cache_dir: Path) -> list[Path]:
    """Move every damaged SQLite shard of the disk cache in ``cache_dir`` aside; return them.

    A shard is damaged when SQLite cannot open it or its quick check fails (a truncated or
    overwritten file). It is renamed to ``cache.db.damaged-<time>`` (with its ``-wal`` and
    ``-shm`` files removed) and a warning is logged; diskcache creates an empty shard in its
    place, so only that shard's answers are asked again.
    """
    moved: list[Path] = []
    for db in sorted(cache_dir.glob("**/cache.db")):
        reason = _shard_is_damaged(db)
        if reason is None:
            continue
        target = db.with_name(f"cache.db.damaged-{time.strftime('%Y%m%d-%H%M%S')}")
        try:
            db.replace(target)
        except OSError:
            continue
        for suffix in ("-wal", "-shm"):
            with suppress(OSError):
                db.with_name("cache.db" + suffix).unlink()
        logger.warning(
            "response cache shard %s is damaged (%s): moved it to %s and starting that shard empty",
            db,
            reason,
            target.name,
        )
        moved.append(target)
    return moved


def configure_cache(cache_dir: Path) -> None:
    """Point DSPy's response cache at ``cache_dir`` (disk only, a :class:`JuristCache`).

    Done once per directory and process. DSPy's in-memory layer keeps every response of the
    process (up to a million), so a long batch would grow without bound; the disk cache
    alone serves re-runs. A damaged shard is moved aside with a warning and rebuilt empty
    (:func:`repair_cache_dir`), and the run goes on.

    Raises:
        ConfigError: The cache directory cannot be created or opened even after repair.
    """
    global _cache_dir_in_use
    resolved = cache_dir.expanduser().resolve()
    with _cache_lock:
        if _cache_dir_in_use == resolved and isinstance(dspy.cache, JuristCache):
            return
        try:
            resolved.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(
                f"cannot create the cache directory: {exc.strerror or exc}", path=resolved
            ) from None
        cache = _open_cache(resolved)
        with getattr(dspy, "_cache_lock", threading.Lock()):
            dspy.cache = cache
        _cache_dir_in_use = resolved


def _os_reason(exc: OSError) -> str:
    """A system error's reason in words (``read-only file system``, ``permission denied``)."""
    return os.strerror(exc.errno).lower() if exc.errno else str(exc)


def _cannot_write_in(directory: Path) -> str | None:
    """Why no file can be made in ``directory`` (e.g. ``read-only file system``), or ``None``."""
    try:
        with tempfile.TemporaryFile(dir=directory):
            return None
    except OSError as exc:
        return _os_reason(exc)


def _cache_not_writable(directory: Path, reason: str) -> ConfigError:
    return ConfigError(
        f"the response cache cannot be written here ({reason}); give --cache-dir (or the config's "
        "cache_dir) a writable directory",
        path=directory,
        field="cache_dir",
    )


def _open_cache(directory: Path) -> JuristCache:
    from dspy.clients import DISK_CACHE_LIMIT

    def build() -> JuristCache:
        return JuristCache(
            enable_disk_cache=True,
            enable_memory_cache=False,
            disk_cache_dir=str(directory),
            disk_size_limit_bytes=DISK_CACHE_LIMIT,
        )

    try:
        return build()
    except OSError as exc:  # diskcache could not make a shard's directory
        raise _cache_not_writable(directory, _os_reason(exc)) from None
    except sqlite3.DatabaseError:
        # A read-only or full location is not damage: nothing is moved aside for it.
        reason = _cannot_write_in(directory)
        if reason is not None:
            raise _cache_not_writable(directory, reason) from None
        if not repair_cache_dir(directory):
            raise ConfigError(
                "the response cache cannot be opened; delete the directory (it only holds cached answers)",
                path=directory,
                field="cache_dir",
            ) from None
    try:
        return build()
    except sqlite3.DatabaseError as exc:
        raise ConfigError(
            f"the response cache cannot be opened ({exc}); "
            "delete the directory (it only holds cached answers)",
            path=directory,
            field="cache_dir",
        ) from None


def cache_salt(config: JudgeConfig) -> int:
    """The rollout id that keeps cache entries of different servers apart (0 without api_base).

    It is read from ``api_base`` without a user name and password
    (:attr:`JudgeConfig.api_base_url`): credentials never change the cache key."""
    if not config.api_base_url:
        return 0
    digest = hashlib.sha256(config.api_base_url.rstrip("/").encode()).digest()
    return int.from_bytes(digest[:6], "big") * 1000


_KEY_VARIABLES = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "azure": "AZURE_API_KEY",
    "mistral": "MISTRAL_API_KEY",
    "groq": "GROQ_API_KEY",
    "together_ai": "TOGETHERAI_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY",
    "cohere": "COHERE_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
    "fireworks_ai": "FIREWORKS_AI_API_KEY",
    "xai": "XAI_API_KEY",
}


def _provider(config: JudgeConfig) -> str:
    return config.model.split("/", 1)[0] if "/" in config.model else "openai"


def _key_variable(config: JudgeConfig) -> str:
    if config.api_key_env:
        return config.api_key_env
    return _KEY_VARIABLES.get(
        _provider(config), "the provider's API-key variable (or name one in api_key_env)"
    )


_WHAT = {
    "auth": "the provider refused the API key (authentication failed)",
    "permission": "the API key may not use this model (permission denied)",
    "model": "the provider does not know this model (not found)",
    "missing_key": "no API key is set",
    "bad_url": "the server address cannot be used",
    "unreachable": "nothing answers at the server address (connection refused)",
    "tls": "the TLS handshake with the server failed",
    "provider": "the model's provider is unknown (nothing was sent)",
    "billing": "the provider refused the account: quota or credit used up, or billing limit reached",
    "logprobs": "the provider refused to return log-probabilities (logprobs: true)",
}


def _redact(text: str, config: JudgeConfig) -> str:
    """``text`` without the configured API key or anything key-shaped (a provider may echo it)."""
    variables = {config.api_key_env, _KEY_VARIABLES.get(_provider(config))} - {None}
    return redact(text, extra=[os.environ.get(str(variable)) for variable in variables])


def fatal_provider_error(config: JudgeConfig, problem: ProviderProblem) -> FatalProviderError:
    """The one-line error that stops a run on a provider problem no retry can fix.

    It names the config file (:attr:`JudgeConfig.source`), the model, the provider (the
    model's prefix and ``api_base``) and what to do.
    """
    where = f"config {config.source}" if config.source else "config from the command line and defaults"
    server = _redact(config.api_base, config) if config.api_base else "the provider's default address"
    todo = {
        "auth": f"set {_key_variable(config)} to a valid key for {_provider(config)}",
        "permission": f"use a key allowed to call {config.model!r}, or check the model name",
        "model": f"check the model name {config.model!r} (and api_base: is it the server that serves it?)",
        "missing_key": f"set {_key_variable(config)} in the environment",
        "bad_url": "check api_base: it must be a reachable URL such as http://localhost:8000/v1",
        "unreachable": f"start the server at {server}, or check api_base",
        "tls": "check api_base: a server without TLS (most local servers) takes http://, not https://; "
        "one with TLS needs a certificate this machine trusts",
        "provider": f"check the provider prefix of {config.model!r}: one LiteLLM knows, such as openai/, "
        "anthropic/ or gemini/ (an OpenAI-compatible server takes openai/ and api_base)",
        "billing": "add credit or raise the spending limit in the provider's billing settings, or use "
        "another key; retrying will not help",
        "logprobs": "set logprobs: false, or use a model that returns them "
        f"(top_logprobs is {config.top_logprobs}; some providers allow fewer)",
    }[problem.kind]
    detail = _redact(problem.detail.replace("\n", " "), config)
    if len(detail) > 200:
        detail = detail[:197] + "..."
    return FatalProviderError(
        f"{_WHAT[problem.kind]}: model {config.model!r}, provider {_provider(config)} at {server} "
        f"({where}); {todo}. The run stopped; items already judged are kept. [{detail}]"
    )


def _api_key(config: JudgeConfig) -> str | None:
    if not config.api_key_env:
        return None
    key = os.environ.get(config.api_key_env)
    if not key:
        raise fatal_provider_error(
            config, ProviderProblem("missing_key", f"environment variable {config.api_key_env} is not set")
        )
    register_secret(key)  # redacted from everything jurist writes, whatever its variable's name
    return key


def _basic_auth(config: JudgeConfig) -> dict[str, Any]:
    """The LM keyword arguments that send :attr:`JudgeConfig.api_base`'s user name and password
    as HTTP basic auth (``extra_headers``, which DSPy hands to LiteLLM: the ``auto`` engine then
    uses LiteLLM), or nothing when it holds none. The header replaces the key's ``Bearer``
    header; the password and the header's token are registered for redaction. The header is
    no part of the response cache's key (:meth:`JuristCache.cache_key`).

    Raises:
        ConfigError: The config asks for the ``lm15`` engine, which cannot send the header.
    """
    credentials = config.basic_auth
    if credentials is None:
        return {}
    if config.engine == "lm15":
        raise ConfigError(LM15_USERINFO, path=config.source, field="api_base")
    user, password = credentials
    token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
    for secret in (password, token, f"{user}:{password}"):
        register_secret(secret)
    return {"extra_headers": {"Authorization": f"Basic {token}"}}


def build_lm(config: JudgeConfig) -> JudgeLM:
    """Build the LM a judge config describes.

    Raises:
        ConfigError: The config names the baseline judge (which has no LM), DSPy refuses
            the model string, or ``api_base`` holds a user name and password for the ``lm15``
            engine (which cannot send them).
        FatalProviderError: ``api_key_env`` names a variable that is not set (exit code 5,
            the same as a key the provider refuses).
    """
    if config.is_baseline:
        raise ConfigError("the baseline judge uses no LM", field="model")
    install_log_redaction()  # a provider may echo the key into a message DSPy or LiteLLM logs
    # rollout_id salts the cache key only; DSPy warns on every call that it does not change sampling.
    warnings.filterwarnings("ignore", message="rollout_id has no effect")
    key = _api_key(config)  # before anything is created on disk
    auth = _basic_auth(config)
    if config.cache:
        configure_cache(config.cache_dir)
    kwargs: dict[str, Any] = {"timeout": config.timeout}
    if config.api_base_url:
        kwargs["api_base"] = config.api_base_url  # requested without user-info: see _basic_auth
    kwargs.update(auth)
    if key:
        kwargs["api_key"] = key
    if config.logprobs:
        kwargs.update(logprobs=True, top_logprobs=config.top_logprobs)
    salt = cache_salt(config) + (current_repeat() - 1) * REPEAT_SALT_STRIDE
    if salt:
        kwargs["rollout_id"] = salt
    try:
        with warnings.catch_warnings():
            # rollout_id only salts the cache key here; DSPy warns that it does not change sampling.
            warnings.filterwarnings("ignore", message="rollout_id")
            lm = JudgeLM(
                config.model,
                temperature=config.temperature,
                max_tokens=config.max_tokens,
                cache=config.cache,
                num_retries=0,
                engine=config.engine,
                **kwargs,
            )
    except (ValueError, TypeError) as exc:
        raise ConfigError(str(exc), field="model") from None
    lm.rate_limits = limits_for(config)
    lm.price = config.price
    return lm


def with_rollout(lm: JudgeLM, attempt: int) -> JudgeLM:
    """A copy of ``lm`` whose cache entries differ for each parse attempt (attempt 0 is ``lm``)."""
    if attempt == 0:
        return lm
    salt = int(lm.kwargs.get("rollout_id") or 0) + attempt
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="rollout_id")
        return lm.copy(rollout_id=salt)
