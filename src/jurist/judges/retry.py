"""Retries of transient provider failures, and recognition of the failures no retry can fix.

Rate limits, server errors, timeouts and transport errors are retried with capped
exponential backoff that honours Retry-After. Invalid requests and context-length errors
are not retried (the item is recorded as failed). A *fatal* provider problem
(:func:`provider_problem`: wrong key, no permission, unknown model, unknown provider,
missing key, quota or billing exhausted, a bad or unreachable ``api_base``, a failed TLS
handshake) is never retried either: it would fail the same way for every item, so the
judge stops the whole run with one :class:`jurist.errors.FatalProviderError`.

jurist may not import LiteLLM (an import-linter contract), so errors are recognised by the
classes DSPy raises (``dspy.utils.exceptions``), by the names of the classes in the chain
of causes (LiteLLM's and the OpenAI SDK's ``AuthenticationError``, ``NotFoundError``, ...),
by HTTP status codes, by the providers' structured error codes (``insufficient_quota``,
``billing_hard_limit_reached``, ...; never by the prose of a provider's answer), by the
refusals LiteLLM and lm15 give a model string whose provider they do not know, and by the
standard library's ``ConnectionRefusedError``, ``socket.gaierror`` and ``ssl.SSLError``.
"""

from __future__ import annotations

import random
import re
import socket
import ssl
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from dspy.utils.exceptions import (
    LMAuthError,
    LMConfigurationError,
    LMNotConfiguredError,
    LMUnsupportedModelError,
    is_retryable_lm_error,
)
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt

ProblemKind = Literal[
    "auth",
    "permission",
    "model",
    "provider",
    "billing",
    "missing_key",
    "bad_url",
    "unreachable",
    "tls",
    "logprobs",
]

NOT_SENT: frozenset[ProblemKind] = frozenset({"missing_key", "bad_url", "unreachable", "tls", "provider"})
"""The fatal problems raised before a request was sent (they are not provider calls)."""

_AUTH_NAMES = {"AuthenticationError", "AuthError", "LMAuthError"}
_PERMISSION_NAMES = {"PermissionDeniedError"}
_MODEL_NAMES = {"NotFoundError", "UnsupportedModelError", "LMUnsupportedModelError"}
_MISSING_KEY_NAMES = {"MissingCredentialError", "LMNotConfiguredError"}
_BAD_URL_NAMES = {
    "InvalidURL",
    "InvalidUrlClientError",
    "UnsupportedProtocol",
    "MissingSchema",
    "InvalidSchema",
}
_BILLING_NAMES = {"BillingError", "LMBillingError", "BudgetExceededError"}
_BILLING_CODES = {
    "insufficient_quota",  # OpenAI (HTTP 429), and OpenAI-compatible servers
    "billing_hard_limit_reached",  # OpenAI: the account's spending limit
    "billing_not_active",  # OpenAI: no payment method
    "billing_error",  # Anthropic
    "exceeded_current_quota_error",  # Moonshot
    "insufficient_balance",
    "1113",  # Z.AI: insufficient balance (HTTP 429)
}
_CONNECT_NAMES = {
    "ConnectError",
    "ConnectTimeout",
    "PoolTimeout",
    "ClientConnectorError",
    "ConnectionTimeoutError",
}
"""Errors of the connection's set-up (httpx, lm15's transport, aiohttp): connecting failed or
timed out, or no pooled connection came free, so nothing was sent yet."""
_UNKNOWN_PROVIDER_NAMES = {"UnknownModelError"}
"""lm15's refusal of a model string it cannot route to a provider (nothing is sent)."""
_UNKNOWN_PROVIDER_TEXT = re.compile(r"(?:litellm\.BadRequestError: )?LLM Provider NOT provided\b")
"""How LiteLLM's refusal of a model string whose provider prefix it does not know begins: it
is raised on the client before anything is sent, as a 400 of its own. Matched only at the
start of a message, so a provider's error that quotes such words is not mistaken for it."""
_MISSING_KEY_TEXT = re.compile(
    r"missing credentials|no api key found|api_key client option must be set|api key is required", re.I
)
_BAD_URL_TEXT = re.compile(
    r"url missing scheme|unsupported protocol|invalid url|request url is missing", re.I
)


@dataclass(frozen=True)
class ProviderProblem:
    """A provider failure that no retry can fix, and what kind it is.

    Attributes:
        kind: ``auth`` (401), ``permission`` (403), ``model`` (404 / unknown model),
            ``provider`` (the model string's provider prefix is unknown), ``billing`` (quota or
            credit used up, billing limit reached: 402, or a billing code such as
            ``insufficient_quota`` even on a 429), ``missing_key``, ``bad_url`` (not a URL,
            or its host does not resolve), ``unreachable`` (connection refused), ``tls``
            (the TLS handshake failed, e.g. ``https://`` to a plain-HTTP server), ``logprobs``
            (a request that asked for log-probabilities was refused for them:
            :func:`refused_logprobs`).
        detail: The first line of the most specific error message in the chain.
    """

    kind: ProblemKind
    detail: str


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _names(exc: BaseException) -> set[str]:
    return {cls.__name__ for cls in type(exc).__mro__}


def _status(exc: BaseException) -> int | None:
    for attribute in ("status_code", "status"):
        value = getattr(exc, attribute, None)
        if isinstance(value, int) and 100 <= value < 600:
            return value
    return None


def _codes(exc: BaseException) -> set[str]:
    """The structured error codes ``exc`` carries: DSPy's and lm15's ``provider_code``, the
    OpenAI SDK's ``code`` and ``type``, and those of the error object in its ``body``."""
    found: set[str] = set()
    sources: list[object] = [exc]
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        sources.append(body)
        if isinstance(body.get("error"), dict):
            sources.append(body["error"])
    for source in sources:
        for attribute in ("provider_code", "code", "type"):
            value = source.get(attribute) if isinstance(source, dict) else getattr(source, attribute, None)
            if isinstance(value, str | int) and not isinstance(value, bool):
                found.add(str(value))
    return found


def _tls_handshake_failed(chain: list[BaseException]) -> bool:
    """Whether the connection failed in its TLS handshake: an ``ssl.SSLError`` (not a closed
    or reset connection) raised while the connection was being set up, or a certificate the
    client refused."""
    errors = [
        link
        for link in chain
        if isinstance(link, ssl.SSLError) and not isinstance(link, ssl.SSLEOFError | ssl.SSLZeroReturnError)
    ]
    if not errors:
        return False
    if any(isinstance(link, ssl.SSLCertVerificationError) for link in errors):
        return True
    return any(_names(link) & _CONNECT_NAMES for link in chain)


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def provider_problem(exc: BaseException) -> ProviderProblem | None:
    """The fatal provider problem ``exc`` shows, or ``None`` for any other failure.

    The whole chain of causes is searched, so the same problem is recognised from DSPy's
    built-in client and from LiteLLM (whose 403 arrives as a generic ``APIError`` wrapping
    the OpenAI SDK's ``PermissionDeniedError``, and whose connection errors arrive as a
    500 wrapping the socket's ``ConnectionRefusedError``). Timeouts, rate limits, server
    errors and invalid requests are not fatal; a 429 is a rate limit unless its error code
    says the quota or credit is used up (``insufficient_quota``, ...).
    """
    chain = list(_chain(exc))
    statuses = {status for link in chain if (status := _status(link)) is not None}
    names: set[str] = set()
    for link in chain:
        names |= _names(link)
    # Words are read only where no provider answered with a 4xx status: a 400 whose message
    # mentions "invalid url" (say, of an image) is the item's problem, not the config's.
    answered = any(400 <= status < 500 for status in statuses)
    texts = [] if answered else [str(link) for link in chain]

    def detail(*wanted: type[BaseException] | str) -> str:
        for link in reversed(chain):
            if any(isinstance(link, w) if isinstance(w, type) else w in _names(link) for w in wanted):
                return _first_line(link)
        return _first_line(exc)

    if (
        isinstance(exc, LMNotConfiguredError)
        or names & _MISSING_KEY_NAMES
        or any(_MISSING_KEY_TEXT.search(text) for text in texts)
    ):
        return ProviderProblem("missing_key", detail(*_MISSING_KEY_NAMES, "OpenAIError"))
    if any(isinstance(link, ConnectionRefusedError) for link in chain):
        return ProviderProblem("unreachable", detail(ConnectionRefusedError))
    if any(isinstance(link, socket.gaierror) for link in chain):
        return ProviderProblem("bad_url", detail(socket.gaierror))
    if _tls_handshake_failed(chain):
        return ProviderProblem("tls", detail(ssl.SSLError))
    if names & _BAD_URL_NAMES or any(_BAD_URL_TEXT.search(text) for text in texts):
        return ProviderProblem("bad_url", detail(*_BAD_URL_NAMES))
    if names & _UNKNOWN_PROVIDER_NAMES or any(_UNKNOWN_PROVIDER_TEXT.match(str(link)) for link in chain):
        return ProviderProblem("provider", detail(*_UNKNOWN_PROVIDER_NAMES, "BadRequestError"))
    codes: set[str] = set()
    for link in chain:
        codes |= _codes(link)
    if 402 in statuses or names & _BILLING_NAMES or codes & _BILLING_CODES:
        return ProviderProblem("billing", detail(*_BILLING_NAMES, "RateLimitError", "BadRequestError"))
    if 403 in statuses or names & _PERMISSION_NAMES:
        return ProviderProblem("permission", detail(*_PERMISSION_NAMES, "AuthError"))
    if 401 in statuses or isinstance(exc, LMAuthError) or names & _AUTH_NAMES:
        return ProviderProblem("auth", detail(*_AUTH_NAMES))
    if 404 in statuses or isinstance(exc, LMUnsupportedModelError) or names & _MODEL_NAMES:
        return ProviderProblem("model", detail(*_MODEL_NAMES, "InvalidRequestError"))
    return None


_LOGPROBS_TEXT = re.compile(r"log[-_ ]?prob", re.I)
_REFUSED_PARAMETER_NAMES = {"UnsupportedParamsError", "BadRequestError", "LMBadRequestError"}


def refused_logprobs(exc: BaseException) -> ProviderProblem | None:
    """For a call that asked for log-probabilities: the refusal of that parameter ``exc``
    shows, or ``None``.

    A refusal is an invalid-request answer (HTTP 400 or 422, or the client's own refusal of
    a parameter the provider does not take, such as LiteLLM's ``UnsupportedParamsError``)
    whose error names the parameter (its ``param``, or its message mentions log-probs).
    Retrying the same request cannot help, so the run stops at the first such answer.
    """
    chain = list(_chain(exc))
    refused = any(_status(link) in (400, 422) or _names(link) & _REFUSED_PARAMETER_NAMES for link in chain)
    if not refused:
        return None
    for link in reversed(chain):
        body = getattr(link, "body", None)
        error = body.get("error") if isinstance(body, dict) and isinstance(body.get("error"), dict) else body
        param = error.get("param") if isinstance(error, dict) else getattr(link, "param", None)
        if (isinstance(param, str) and _LOGPROBS_TEXT.search(param)) or _LOGPROBS_TEXT.search(str(link)):
            return ProviderProblem("logprobs", _first_line(link))
    return None


def reached_provider(exc: BaseException) -> bool:
    """Whether a failed call was sent to the provider (it then counts as a provider call).

    Calls refused before anything was sent are not: a missing key or other configuration
    error, a URL that is not one, a host that does not resolve, a refused connection, a
    failed TLS handshake, a model string whose provider is unknown (:data:`NOT_SENT`), and a
    connection that could not be made (a connect timeout: retried, but not counted).
    Everything else (rate limits, server errors, read timeouts, refusals such as 401) was.
    """
    if isinstance(exc, LMConfigurationError | TypeError | ValueError):
        return False
    chain = list(_chain(exc))
    if any(_names(link) & _CONNECT_NAMES for link in chain):
        return False
    problem = provider_problem(exc)
    return problem is None or problem.kind not in NOT_SENT


def is_rate_limit(exc: BaseException) -> bool:
    """Whether ``exc`` (or an exception it was raised from) is the provider's 429 rate limit."""
    for link in _chain(exc):
        if _status(link) == 429 or any("RateLimit" in name for name in _names(link)):
            return True
    return False


def retry_after_seconds(exc: BaseException) -> float | None:
    """The server's Retry-After hint carried by ``exc`` or any exception it was raised from.

    DSPy's built-in client puts it on the error; under LiteLLM it is only on the original
    exception's HTTP response, so the chain of causes is searched too.
    """
    for current in _chain(exc):
        hint = getattr(current, "retry_after", None)
        if isinstance(hint, int | float) and hint >= 0:
            return float(hint)
        response = getattr(current, "response", None)
        headers = getattr(response, "headers", None)
        if headers is not None:
            try:
                value = headers.get("retry-after")
            except Exception:
                value = None
            if value is not None:
                try:
                    return max(0.0, float(value))
                except (TypeError, ValueError):
                    pass
    return None


def is_transient(exc: BaseException) -> bool:
    """True for failures worth retrying: rate limit, server error, timeout, transport.

    A fatal problem (:func:`provider_problem`) is never transient, even where DSPy would
    retry it (LiteLLM reports a refused connection as a server error).
    """
    if provider_problem(exc) is not None:
        return False
    if isinstance(exc, Exception) and is_retryable_lm_error(exc):
        return True
    # LiteLLM's own exceptions, when they reach us unwrapped.
    status = getattr(exc, "status_code", None)
    return isinstance(status, int) and (status == 429 or status >= 500)


class BackoffWait:
    """Wait ``min(cap, base * 2**n)`` with jitter, or the Retry-After hint capped at ``cap``."""

    def __init__(self, *, base: float = 1.0, cap: float = 30.0) -> None:
        self.base = base
        self.cap = cap

    def __call__(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        hint = retry_after_seconds(exc) if exc is not None else None
        if hint is not None:
            return min(hint, self.cap)
        exponential = self.base * 2 ** (state.attempt_number - 1)
        return min(self.cap, exponential * random.uniform(0.5, 1.0))


def provider_retrying(num_retries: int, *, cap: float, base: float = 1.0, **kwargs: Any) -> AsyncRetrying:
    """A tenacity controller for async calls: ``num_retries`` retries of transient failures."""
    return AsyncRetrying(
        retry=retry_if_exception(is_transient),
        stop=stop_after_attempt(num_retries + 1),
        wait=BackoffWait(base=base, cap=cap),
        reraise=True,
        **kwargs,
    )
