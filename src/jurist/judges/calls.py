"""One LM call of a judge on the caller's event loop, built from DSPy's own parts.

DSPy 3.4 runs an async LM call (``dspy.LM.acall``) through ``dspy.clients.execution``. For
every call it hands work to worker threads (preparing the request, reading the cache,
routing to the provider's client, pricing, writing the cache, and, in the adapter, the
model's capabilities), builds an lm15 router three times to decide the engine and the
capabilities again, and looks the model's price up in a table of thousands of models (a
full scan, twice, for a model the table does not know). In a batch every call has the same
LM settings, so all of that gives the same answer every time; measured on two cores it cost
ten times the CPU of the HTTP client itself, and each thread hop adds latency.

:func:`acomplete` makes the same call on the caller's loop, with DSPy's building blocks:

- the request is prepared by DSPy (``prepare``: the same messages, settings and checks);
- the cache key is DSPy's (``PreparedCall.key`` hashed by the cache's ``cache_key``), so an
  entry written by either path is read by the other; a hit is read by that key and its
  outputs are taken from the stored record without rebuilding the provider's response;
- the engine is chosen as DSPy chooses it (``select_backend``, then lm15's offline plan for
  ``engine="auto"``); the choice is remembered per LM settings, and the native client per
  event loop in the LM's own engine store; errors are translated at the same boundary
  (``error_boundary``), so retries and fatal-error recognition see DSPy's error classes;
- the price is DSPy's estimate (``estimate_cost``), except that a model the price table does
  not know is looked up once per process, not twice per call;
- the answer is offered to the cache as DSPy stores it (the same record, the same key), so a
  judge can hold it back until it parsed (:class:`jurist.judges.lm.JuristCache`);
- the call is reported to the LM's ``update_history`` (which feeds jurist's usage meter)
  with its messages, outputs, usage and cost;
- a request that goes to the provider (not a cache hit) takes its turn under the LM's rate
  limits and adaptive in-flight cap (``rate_limits``, :mod:`jurist.judges.limits`).

:func:`covered` says which calls take this path. Others (callbacks, streaming, custom
engines, several candidates, explicit lm15 requests, DSPy's own retries, text or Responses
models, providers declared with ``dspy.lm15.register_provider``) go through DSPy unchanged.
The capabilities the adapters ask for are remembered the same way
(:func:`known_capabilities`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import copy
import functools
import os
import threading
from typing import Any

import dspy
from dspy.clients import execution as dspy_execution
from dspy.clients.backend_selection import CLIENT_KEYS, BackendSelection, select_backend
from dspy.clients.call_result import CACHE_FORMAT, CallResult, attributes
from dspy.clients.capabilities import Capabilities, capabilities
from dspy.clients.costs import estimate_cost
from dspy.clients.engines.litellm_engine import AsyncLiteLLMEngine
from dspy.clients.engines.lm15_engine import AsyncLM15Engine, LM15Engine, timeouts_for
from dspy.clients.errors import error_boundary
from dspy.clients.model_metadata import model_info
from dspy.dsp.utils.settings import settings
from dspy.lm15 import LM15Error, Request, RouterConfig, StreamAssemblyError, UnsupportedFeatureError
from dspy.utils.exceptions import LMUnsupportedFeatureError

from jurist.judges.limits import prompt_estimate

__all__ = ["acomplete", "cached_outputs", "covered", "known_capabilities"]

_ENGINES = ("auto", "lm15", "litellm")
# Reentrant: a lookup that finished before its done-callback was added runs that callback at
# once, in the thread that holds the lock (see known_capabilities).
_memo_lock = threading.RLock()
_selections: dict[tuple[Any, ...], BackendSelection] = {}
_capabilities: dict[tuple[Any, ...], Capabilities] = {}
_routes: dict[tuple[Any, ...], Any] = {}
_priced: dict[tuple[Any, ...], bool] = {}
_plans: dict[tuple[Any, ...], bool] = {}
_MEMO_LIMIT = 4096
"""Entries per memo before it starts over (a process judging with a few LMs keeps a few)."""


def _remember(memo: dict[tuple[Any, ...], Any], key: tuple[Any, ...], value: Any) -> None:
    with _memo_lock:
        if len(memo) >= _MEMO_LIMIT:
            memo.clear()
        memo[key] = value


def covered(lm: Any, prompt: Any, messages: Any, kwargs: dict[str, Any]) -> bool:
    """Whether :func:`acomplete` makes this call exactly as DSPy would (else DSPy makes it).

    Covered: a chat call with messages or a prompt, one candidate, no DSPy retries, on the
    ``auto``, ``lm15`` or ``litellm`` engine, with no callbacks, no stream listener, no
    provider-side prompt cache, and a model no provider declaration speaks for.
    """
    if not isinstance(getattr(lm, "_engine_spec", None), str) or lm._engine_spec not in _ENGINES:
        return False
    providers: tuple[Any, ...] = getattr(lm, "_providers", ())
    if getattr(lm, "_async_engine_spec", None) is not None or providers:
        return False
    if lm.model_type != "chat" or lm.num_retries or lm.callbacks:
        return False
    if settings.get("callbacks") or settings.send_stream is not None:
        return False
    if "request" in kwargs or isinstance(prompt, Request) or (prompt is None and messages is None):
        return False
    if kwargs.get("n", lm.kwargs.get("n")) not in (None, 1) or kwargs.get("num_generations") is not None:
        return False
    return kwargs.get("prompt_cache", lm.kwargs.get("prompt_cache")) is None


def _clients(lm: Any, options: dict[str, Any] | None) -> dict[str, Any]:
    clients = {key: value for key, value in lm.kwargs.items() if key in CLIENT_KEYS}
    clients.update({key: value for key, value in (options or {}).items() if key in CLIENT_KEYS})
    return clients


def _settings_key(lm: Any, clients: dict[str, Any]) -> tuple[Any, ...] | None:
    """What DSPy's engine selection reads, as a hashable key (``None`` if it cannot be one)."""
    prefix = lm.model.split("/", 1)[0].upper()
    environment = tuple(
        os.environ.get(name) for name in (f"{prefix}_API_BASE", f"{prefix}_BASE_URL", "XAI_API_KEY")
    )
    key = (lm.model, lm.model_type, lm._engine_spec, tuple(sorted(clients.items())), environment)
    try:
        hash(key)
    except TypeError:
        return None
    return key


def _selection(lm: Any, options: dict[str, Any], key: tuple[Any, ...] | None) -> BackendSelection:
    """DSPy's backend selection for these settings (``key``, from :func:`_settings_key`),
    remembered: it builds an lm15 router."""
    if key is None:
        return select_backend(lm, options)
    found = _selections.get(key)
    if found is None:
        found = select_backend(lm, options)
        _remember(_selections, key, found)
    return found


async def known_capabilities(lm: Any, options: dict[str, Any]) -> Capabilities | None:
    """The model's capabilities as DSPy's adapters read them, remembered per LM settings.

    Returns ``None`` for an LM :func:`covered` does not describe (DSPy then resolves them
    itself). The first lookup for some settings runs once in a worker thread, as DSPy runs it
    (it may read LiteLLM's tables), however many calls ask for it at the same time; later
    ones are a dictionary lookup.
    """
    if not covered(lm, None, [], {}):
        return None
    key = _settings_key(lm, _clients(lm, options))
    if key is None:
        return None
    found = _capabilities.get(key)
    if found is not None:
        return found
    with _memo_lock:
        pending = _pending_capabilities.get(key)
        if pending is None:
            pending = _lookups().submit(contextvars.copy_context().run, _lookup_capabilities, lm, options)
            _pending_capabilities[key] = pending
            pending.add_done_callback(functools.partial(_remember_capabilities, key))
    # Shielded: a caller that is cancelled does not cancel the lookup the others wait for.
    return await asyncio.shield(asyncio.wrap_future(pending))


_pending_capabilities: dict[tuple[Any, ...], concurrent.futures.Future[Capabilities]] = {}
_lookup_pool: concurrent.futures.ThreadPoolExecutor | None = None


def _lookups() -> concurrent.futures.ThreadPoolExecutor:
    global _lookup_pool
    if _lookup_pool is None:
        _lookup_pool = concurrent.futures.ThreadPoolExecutor(max_workers=2, thread_name_prefix="jurist-lm")
    return _lookup_pool


def _lookup_capabilities(lm: Any, options: dict[str, Any]) -> Capabilities:
    from dspy.clients.capabilities import planning_scope

    with planning_scope(lm, options):
        return capabilities(lm)


def _remember_capabilities(key: tuple[Any, ...], done: concurrent.futures.Future[Capabilities]) -> None:
    if not done.cancelled() and done.exception() is None:
        _remember(_capabilities, key, done.result())
    with _memo_lock:
        _pending_capabilities.pop(key, None)


def _route(lm: Any) -> Any:
    """lm15's offline routing of the LM's model string (what DSPy's pricing resolves)."""
    key = (lm.model, lm.model_type)
    found = _routes.get(key)
    if found is None:
        found = LM15Engine(RouterConfig(env={}), model_type=lm.model_type).resolve(lm.model)
        _remember(_routes, key, found)
    return found


def _native_backend(lm: Any, resolution: Any, clients: dict[str, Any]) -> AsyncLM15Engine:
    """The LM's native engine for this event loop, from (or into) the LM's own engine store,
    under the key DSPy uses, so ``lm.aclose()`` closes it as it closes DSPy's."""
    loop = asyncio.get_running_loop()
    timeouts = timeouts_for(clients.get("timeout"))
    key = (
        loop,
        lm.model,
        lm.model_type,
        timeouts,
        tuple(
            sorted(
                (name, value if isinstance(value, str | int | float | type(None)) else id(value))
                for name, value in clients.items()
                if name != "timeout"
            )
        ),
    )
    with lm._engine_lock:
        backend: AsyncLM15Engine | None = lm._engine_store.get(key)
        if backend is None:
            lm._reap_closed_loops()
            provider = resolution.provider
            url = clients.get("api_base") or clients.get("base_url")
            config = RouterConfig(
                api_keys={provider: clients["api_key"]} if "api_key" in clients else None,
                base_urls={provider: url} if url else None,
                timeouts=timeouts,
            )
            backend = AsyncLM15Engine(config, model_type=lm.model_type)
            lm._engine_store[key] = backend
    return backend


def _plan_allows(backend: AsyncLM15Engine, request: Request, settings: tuple[Any, ...] | None) -> bool:
    """Whether lm15's offline plan carries ``request`` natively (``auto`` falls back to
    LiteLLM when it does not). The plan depends on the LM settings (``settings``, the key of
    :func:`_settings_key`), the request's generation settings and the kinds of its message
    parts, not on their text, so its answer is remembered per (settings, request shape)."""
    if settings is None:
        return _plans_natively(backend, request)
    messages = request.messages
    shape = (
        settings,
        repr(request.config),
        request.system is None,
        tuple((message.role, tuple(type(part).__name__ for part in message.parts)) for message in messages),
        bool(request.tools),
    )
    known = _plans.get(shape)
    if known is None:
        known = _plans_natively(backend, request)
        _remember(_plans, shape, known)
    return known


def _plans_natively(backend: AsyncLM15Engine, request: Request) -> bool:
    try:
        backend.plan(request)
    except UnsupportedFeatureError:
        return False
    return True


class _NativeClient:
    """The native engine's send, without its hop to a worker thread for routing (the routing
    is a dictionary lookup once the provider's client exists)."""

    def __init__(self, backend: AsyncLM15Engine) -> None:
        self.backend = backend

    async def complete(self, request: Request) -> Any:
        client, routed = self.backend._target(request)
        return await client.complete(routed)


def _engine(lm: Any, call: Any) -> tuple[Any, Request | None, str | None]:
    """``(engine, canonical request or None, pricing provider)`` as DSPy's ``_select_engine``
    picks them for a call :func:`covered` lets through."""
    spec = lm._engine_spec
    settings = _settings_key(lm, _clients(lm, call.legacy))
    selection = _selection(lm, call.legacy, settings)
    native, resolution, clients = selection.native, selection.resolution, selection.clients
    canonical = None
    if native:
        try:
            canonical = dspy_execution._canonical(call, compat=resolution.compat)
        except (LM15Error, TypeError, ValueError) as exc:
            if spec == "lm15":
                if isinstance(exc, UnsupportedFeatureError):
                    raise
                raise LMUnsupportedFeatureError(str(exc), model=lm.model) from exc
            native = False
    if native and canonical is not None:
        backend = _native_backend(lm, resolution, clients)
        if spec != "auto" or _plan_allows(backend, canonical, settings):
            return _NativeClient(backend), canonical, resolution.provider
    call.legacy.pop("prompt_cache", None)
    return AsyncLiteLLMEngine(model_type=lm.model_type, **clients), None, None


def _price_keys(provider: str, model: str) -> bool:
    """Whether the price table has any price for ``model`` under ``provider`` (remembered: for
    a model it does not know, the lookup scans the whole table)."""
    key = (provider, model)
    found = _priced.get(key)
    if found is None:
        found = any("cost" in name for name in model_info(provider, model))
        _remember(_priced, key, found)
    return found


def _price(lm: Any, result: CallResult, response: Any, provider: str | None, request: Request) -> None:
    """DSPy's advisory price of an answer (``_price_result``), without the price-table scan
    for a model that has no price: the estimate of an answer with tokens is then unknown,
    so it is set so at once (an answer without tokens is priced by DSPy as usual)."""
    wire_model = _route(lm).model if provider is not None else request.model
    usage = response.usage
    if (
        provider is not None
        and (usage.input_tokens or usage.output_tokens)
        and not _price_keys(provider, response.model)
        and not _price_keys(provider, wire_model)
    ):
        result.cost = None
        result.cost_details = {"kind": "unknown", "reason": "a billed token dimension has no known rate"}
        return
    try:
        result.cost, result.cost_details = estimate_cost(
            response, provider=provider, requested_model=wire_model, request=request
        )
    except Warning:
        raise
    except Exception:
        result.cost = None
        result.cost_details = {"kind": "unknown", "reason": "pricing metadata could not be interpreted"}


async def _send(lm: Any, call: Any) -> CallResult:
    """One provider call, as ``aexecute`` makes it when there is no cache hit (one attempt)."""
    with error_boundary(lm.model):
        backend, request, provider = _engine(lm, call)
    results: list[CallResult] = []
    state = dspy_execution._Attempt()
    try:
        with error_boundary(lm.model, provider=provider, unexpected=True):
            if request is None:
                progress: dict[str, Any] = {"emitted": False}
                try:
                    with settings.context(_lm_stream_progress=progress):
                        outcome = await backend.complete_legacy(
                            lm,
                            copy.deepcopy(call.legacy),
                            prompt=call.prompt,
                            messages=call.messages,
                            call_kwargs=call.kwargs,
                        )
                        dspy_execution._accept_legacy(state, outcome)
                finally:
                    dspy_execution._legacy_done(state, results, progress)
            else:
                try:
                    response = await backend.complete(request)
                except StreamAssemblyError as exc:
                    dspy_execution._retain_response_usage(state, results, exc.partial, provider)
                    raise
                dspy_execution._accept_response(lm, call, state, results, response, provider, request)
        if request is not None:
            assert state.result is not None
            _price(lm, state.result, state.response, provider, request)
        return results[0]
    except BaseException as exc:
        dspy_execution._hint_responses_api(lm, exc)
        dspy_execution._account_failed_call(lm, results, exc)
        raise


def _from_record(lm: Any, call: Any, record: Any) -> CallResult:
    """A cache hit's result: the stored outputs (and price), no rebuilt provider response."""
    if isinstance(record, dict) and record.get("_dspy_format") == CACHE_FORMAT:
        return CallResult(
            outputs=attributes(record["outputs"]),
            cost=record.get("cost"),
            response_model=record.get("response_model"),
            cache_hit=True,
        )
    result = CallResult.legacy(lm, record, kwargs=call.legacy)
    result.cache_hit = True
    result.usage = {}
    return result


def cached_outputs(lm: Any, prompt: Any, messages: Any, kwargs: dict[str, Any]) -> list[Any] | None:
    """The outputs the response cache holds for this call (as :func:`acomplete` would serve
    them), or ``None``; reads only: nothing is sent, written or noted."""
    call = dspy_execution.prepare(lm, prompt, messages, kwargs, asynchronous=True)
    if not call.cache:
        return None
    request = call.key(lm, True)
    cache = dspy.cache
    if callable(getattr(cache, "key_of", None)):
        key = cache.key_of(request)
        record = cache.read(key) if key is not None else None
    else:
        record = cache.get(request, dspy_execution.IGNORED_CACHE_KEYS)
    return None if record is None else list(_from_record(lm, call, record).outputs)


async def acomplete(lm: Any, prompt: Any, messages: Any, kwargs: dict[str, Any]) -> list[Any]:
    """Make one LM call that :func:`covered` accepts; return DSPy's outputs for it.

    Raises:
        Exception: What DSPy raises for the same call (its ``LMError`` classes for provider
            failures, ``ValueError``/``TypeError`` for a request it refuses).
    """
    call = dspy_execution.prepare(lm, prompt, messages, kwargs, asynchronous=True)
    cache = dspy.cache
    # jurist's cache (jurist.judges.lm.JuristCache) is read and written by key; any other
    # cache configured in DSPy is used through DSPy's own get/put.
    keyed = callable(getattr(cache, "key_of", None))
    key: str | None = None
    result: CallResult | None = None
    if call.cache:
        request = call.key(lm, True)
        if keyed:
            key = cache.key_of(request)
            record = cache.read(key) if key is not None else None
        else:
            record = cache.get(request, dspy_execution.IGNORED_CACHE_KEYS)
        if record is not None:
            result = _from_record(lm, call, record)
            if key is not None:
                cache.note_served(key)
    if result is None:
        limits = getattr(lm, "rate_limits", None)
        if limits is None:
            result = await _send(lm, call)
        else:  # rpm, tpm and the adaptive in-flight cap (jurist.judges.limits): provider requests only
            async with limits.request(prompt_estimate(call.messages, call.prompt)) as turn:
                result = await _send(lm, call)
                turn.usage(result.usage)
        if call.cache:
            record = result.dump() if result.responses or result.raw is None else result.raw
            if not keyed:
                cache.put(call.key(lm, True), record, dspy_execution.IGNORED_CACHE_KEYS)
            elif key is not None:
                cache.offer(key, record)
        if settings.usage_tracker:
            settings.usage_tracker.add_usage(lm.model, result.usage)
    lm.update_history(
        {
            "prompt": call.prompt,
            "messages": call.messages,
            "outputs": result.outputs,
            "usage": result.usage,
            "cost": result.cost,
            "model": lm.model,
            "response_model": result.response_model,
        }
    )
    return result.outputs
