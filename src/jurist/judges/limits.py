"""Rate limits per model, and concurrency that backs off when the provider says 429.

Every request a judge sends to a provider passes one :class:`ModelLimits`, shared by every
LM of this process with the same ``model`` and ``api_base`` (a provider's limits are per
model and account, not per judge). It holds:

- **rpm** (``JudgeConfig.rpm``): requests are *sent* at least ``60 / rpm`` seconds apart,
  so any window of ``T`` seconds holds at most ``T * rpm / 60 + 1`` of them (the ``+ 1`` is
  the only burst).
- **tpm** (``JudgeConfig.tpm``): the tokens of the requests sent in the last 60 seconds
  stay within ``tpm``. A request reserves its prompt's estimate (characters / 4) before it
  is sent; when it is answered, the reservation becomes the prompt and completion tokens
  the provider reported. A request larger than ``tpm`` on its own is sent once the window
  is empty.
- **adaptive concurrency** (always on): when the provider answers 429 (rate limit), the
  number of requests allowed in flight for the model halves (from the number in flight
  then; never below 1); it grows back by one after as many successes in a row as it
  allows, and once it reaches the config's ``concurrency`` the cap is lifted. A 429 from a
  request sent before the last halving does not halve again.

Retries (:mod:`jurist.judges.retry`) are requests too: each attempt waits for its turn,
and the wait between attempts is spent outside the in-flight count. Answers served from
the response cache pass none of this. A call that jurist does not make itself (one that
:func:`jurist.judges.dspy_seam.covered` leaves to DSPy, and every synchronous call) is limited
by rpm and tpm around the whole call, so a cached answer there also takes a turn; the
adaptive concurrency applies to asynchronous calls only.

Limits hold per process: a run spread over N processes gives each ``rpm / N`` and
``tpm / N`` (:mod:`jurist.runner.scale`).
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Generator, Iterator
from contextlib import asynccontextmanager, contextmanager, suppress
from typing import Any, Literal

from jurist.judges.config import JudgeConfig

__all__ = ["ModelLimits", "TokenTally", "limits_for", "prompt_estimate"]

WINDOW_S = 60.0
"""The window of ``tpm`` (and the minute of ``rpm``), in seconds."""

Outcome = Literal["ok", "rate_limited", "failed"]


def prompt_estimate(messages: Any, prompt: Any = None) -> int:
    """Tokens reserved for a request before it is sent: its text's characters / 4 (at least 1)."""
    if not messages:
        return max(1, len(str(prompt or "")) // 4)
    chars = 0
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else message
        chars += len(content) if isinstance(content, str) else len(str(content or ""))
    return max(1, chars // 4)


class _RequestSpacing:
    """Sends at most ``per_minute`` requests a minute, each at least ``60 / per_minute`` s after the last."""

    def __init__(self, per_minute: int) -> None:
        self.per_minute = per_minute
        self.interval = WINDOW_S / per_minute
        self._next = 0.0
        self._last = -math.inf
        self._lock = threading.Lock()

    def reserve(self) -> float:
        """Take the next sending slot; return the seconds to wait for it."""
        with self._lock:
            now = time.monotonic()
            slot = max(now, self._next)
            self._next = slot + self.interval
            return slot - now

    def depart(self) -> float:
        """Mark a request that waited for its slot as sent now, or return the seconds it must
        still wait: requests whose waits ended late together (a busy process wakes them at
        once) still leave ``interval`` apart. A late departure moves the later slots on."""
        with self._lock:
            now = time.monotonic()
            wait = self._last + self.interval - now
            if wait > 0:
                return wait
            self._last = now
            self._next = max(self._next, now + self.interval)
            return 0.0


class TokenTally:
    """One request's tokens in the ``tpm`` window: reserved when sent, settled when answered."""

    def __init__(self, sent: float, tokens: int) -> None:
        self.sent = sent
        self.tokens = tokens


class _TokenWindow:
    """Keeps the tokens of the requests sent in the last 60 s within ``per_minute``."""

    def __init__(self, per_minute: int) -> None:
        self.per_minute = per_minute
        self._entries: deque[TokenTally] = deque()
        self._total = 0
        self._lock = threading.Lock()

    def reserve(self, tokens: int) -> tuple[TokenTally | None, float]:
        """Reserve ``tokens`` now, or say how long to wait before asking again."""
        with self._lock:
            now = time.monotonic()
            while self._entries and self._entries[0].sent <= now - WINDOW_S:
                self._total -= self._entries.popleft().tokens
            if not self._entries or self._total + tokens <= self.per_minute:
                entry = TokenTally(now, tokens)
                self._entries.append(entry)
                self._total += tokens
                return entry, 0.0
            remaining = self._total
            for entry in self._entries:
                remaining -= entry.tokens
                if remaining + tokens <= self.per_minute:
                    return None, entry.sent + WINDOW_S - now
            return None, self._entries[-1].sent + WINDOW_S - now

    def settle(self, entry: TokenTally, tokens: int) -> None:
        """Replace a reservation with the tokens the provider reported."""
        with self._lock:
            if entry in self._entries:
                self._total += tokens - entry.tokens
            entry.tokens = tokens


class _InFlightGate:
    """The adaptive cap on requests in flight (see the module docstring). Waiters on any
    event loop or thread are woken through their own loop, so one gate serves them all."""

    def __init__(self, ceiling: int) -> None:
        self.ceiling = ceiling
        self.cap: int | None = None
        self.in_flight = 0
        self._successes = 0
        self._epoch = 0
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []
        self._lock = threading.Lock()

    async def enter(self) -> int:
        """Wait for room under the cap; return the epoch the request was sent in."""
        while True:
            with self._lock:
                if self.cap is None or self.in_flight < self.cap:
                    self.in_flight += 1
                    return self._epoch
                loop = asyncio.get_running_loop()
                waiter: asyncio.Future[None] = loop.create_future()
                self._waiters.append((loop, waiter))
            try:
                await waiter
            finally:
                with self._lock:
                    if (loop, waiter) in self._waiters:
                        self._waiters.remove((loop, waiter))

    def leave(self, epoch: int, outcome: Outcome) -> None:
        """Count a finished request: halve the cap on a 429, grow it after successes."""
        with self._lock:
            self.in_flight -= 1
            if outcome == "rate_limited" and epoch == self._epoch:
                allowed = self.cap if self.cap is not None else self.in_flight + 1
                self.cap = max(1, allowed // 2)
                self._epoch += 1
                self._successes = 0
            elif outcome == "ok" and self.cap is not None:
                self._successes += 1
                if self._successes >= self.cap:
                    self._successes = 0
                    self.cap += 1
                    if self.cap >= self.ceiling:
                        self.cap = None
            waiters, self._waiters = self._waiters, []
        for loop, waiter in waiters:
            with suppress(RuntimeError):  # that loop is closed: nobody waits there any more
                loop.call_soon_threadsafe(_wake, waiter)


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


class ModelLimits:
    """The rate limits and the adaptive in-flight cap of one model (see the module docstring).

    Get it with :func:`limits_for`; it is shared by reference (copies of an LM share it).
    """

    def __init__(self, ceiling: int) -> None:
        self.spacing: _RequestSpacing | None = None
        self.tokens: _TokenWindow | None = None
        self.gate = _InFlightGate(ceiling)

    def __deepcopy__(self, memo: dict[int, Any]) -> ModelLimits:
        return self  # one per model and process, whatever copies a program makes

    def configure(self, rpm: int | None, tpm: int | None, ceiling: int) -> None:
        """Apply a config's limits (the last config built for the model wins)."""
        if rpm is None:
            self.spacing = None
        elif self.spacing is None or self.spacing.per_minute != rpm:
            self.spacing = _RequestSpacing(rpm)
        if tpm is None:
            self.tokens = None
        elif self.tokens is None or self.tokens.per_minute != tpm:
            self.tokens = _TokenWindow(tpm)
        self.gate.ceiling = ceiling

    def _waits(self, estimate: int) -> Generator[float, None, TokenTally | None]:
        """The waits before a request may be sent (tpm first, then rpm), then its tpm entry:
        one policy for the asynchronous and the threaded caller, which do the sleeping."""
        entry = None
        if self.tokens is not None:
            while True:
                entry, wait = self.tokens.reserve(estimate)
                if entry is not None:
                    break
                yield wait
        if self.spacing is not None:
            wait = self.spacing.reserve()
            if wait > 0:
                yield wait
            while (wait := self.spacing.depart()) > 0:
                yield wait
        return entry

    async def _turn(self, estimate: int) -> TokenTally | None:
        waits = self._waits(estimate)
        while True:
            try:
                await asyncio.sleep(next(waits))
            except StopIteration as done:
                return done.value

    @asynccontextmanager
    async def request(self, estimate: int, *, adaptive: bool = True) -> AsyncIterator[_Settle]:
        """Hold one provider request's turn (asynchronously) while the body sends it.

        Args:
            estimate: The prompt tokens to reserve against ``tpm``.
            adaptive: Count the request against the adaptive in-flight cap.

        The body reports the provider's token counts through the yielded object; a
        :func:`jurist.judges.retry.is_rate_limit` error leaving the body halves the cap.
        """
        from jurist.judges.retry import is_rate_limit

        epoch = await self.gate.enter() if adaptive else None
        outcome: Outcome = "failed"
        try:
            settle = _Settle(self.tokens, await self._turn(estimate))
            try:
                yield settle
            except BaseException as exc:
                outcome = "rate_limited" if is_rate_limit(exc) else "failed"
                raise
            outcome = "ok"
        finally:
            if epoch is not None:
                self.gate.leave(epoch, outcome)

    @contextmanager
    def request_sync(self, estimate: int) -> Iterator[_Settle]:
        """Hold one request's rpm and tpm turn in a thread (no adaptive cap)."""
        waits = self._waits(estimate)
        while True:
            try:
                time.sleep(next(waits))
            except StopIteration as done:
                entry = done.value
                break
        yield _Settle(self.tokens, entry)


class _Settle:
    """What a request's body reports back: the tokens the provider counted."""

    def __init__(self, window: _TokenWindow | None, entry: TokenTally | None) -> None:
        self._window = window
        self._entry = entry

    def usage(self, usage: Any) -> None:
        """Settle the ``tpm`` reservation with a usage mapping (``prompt_tokens``, ``completion_tokens``)."""
        if self._window is None or self._entry is None or not isinstance(usage, dict):
            return
        tokens = int(usage.get("prompt_tokens") or 0) + int(usage.get("completion_tokens") or 0)
        if tokens:
            self._window.settle(self._entry, tokens)


_registry: dict[tuple[str, str | None], ModelLimits] = {}
_registry_lock = threading.Lock()


def limits_for(config: JudgeConfig) -> ModelLimits:
    """The limits of ``config``'s model and ``api_base`` in this process, set to its rpm, tpm
    and concurrency."""
    key = (config.model, config.api_base_url.rstrip("/") if config.api_base_url else None)
    with _registry_lock:
        limits = _registry.get(key)
        if limits is None:
            limits = _registry[key] = ModelLimits(config.concurrency)
        limits.configure(config.rpm, config.tpm, config.concurrency)
    return limits
