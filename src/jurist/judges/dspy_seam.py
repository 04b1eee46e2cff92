"""The one seam between jurist and DSPy's private parts: a fast LM call path, checked against
the DSPy release it was written for, and DSPy's public call otherwise.

Every private DSPy name jurist uses (functions of ``dspy.clients.execution`` and its
neighbours, the private attributes of a ``dspy.LM``) is imported or read here and nowhere
else in jurist. :data:`PRIVATE_NAMES` lists them with the call shape relied on; a test pins
them against the installed DSPy.

**Which path.** :func:`fast_path` decides once per process. The fast path is taken when the
installed DSPy is of the release series it was written for (:data:`WRITTEN_FOR`, 3.4.x)
and every name of :data:`PRIVATE_NAMES` exists with its call shape, unless the environment
variable ``JURIST_DSPY_FAST_PATH`` is ``0``. Otherwise no private name is used, every call
goes through DSPy's public ``dspy.LM.acall`` (:class:`jurist.judges.lm.JudgeLM` makes it),
and, unless the variable asked for it, one warning line names the installed and the
expected version.

On DSPy's public path the same things hold: the same prompts, replies and verdicts; the
same response-cache entries (DSPy reads and writes them through ``dspy.cache``, which is
jurist's :class:`jurist.judges.lm.JuristCache`, so unparsed answers are still held back and
bad ones evicted); usage from the history entry DSPy reports for each call to
``update_history`` (provider calls, cache hits, exact tokens and DSPy's cost estimate);
recorded LM calls; DSPy's error classes, so provider retries and fatal provider errors are
recognised as before; parse retries (a new ``rollout_id``). What it cannot give:

- a dry run does not read the response cache (DSPy has no public read-only lookup), so it
  counts every call as sent, an upper bound, and says so (:mod:`jurist.judges.estimate`);
- the model's price per token is unknown (:func:`price_info` reads DSPy's private price
  table), so a dry run's cost is unknown and a cost limit is refused;
- with ``rpm`` or ``tpm`` set, a call takes its rate-limit turn before DSPy reads the cache,
  so cached answers are paced like requests;
- each call costs DSPy's worker-thread hops (below).

**The fast path.** DSPy 3.4 runs an async LM call (``dspy.LM.acall``) through
``dspy.clients.execution``. For every call it hands work to worker threads (preparing the
request, reading the cache, routing to the provider's client, pricing, writing the cache,
and, in the adapter, the model's capabilities), builds an lm15 router three times to decide
the engine and the capabilities again, and looks the model's price up in a table of
thousands of models (a full scan, twice, for a model the table does not know). In a batch
every call has the same LM settings, so all of that gives the same answer every time;
measured on two cores it cost ten times the CPU of the HTTP client itself, and each thread
hop adds latency.

:func:`acomplete` makes the same call on the caller's loop, with DSPy's building blocks:

- the request is prepared by DSPy (``prepare``: the same messages, settings and checks);
- the cache key is DSPy's (``PreparedCall.key`` hashed by the cache's ``cache_key``), so an
  entry written by either path is read by the other; a hit is read by that key and its
  outputs are taken from the stored record without rebuilding the provider's response;
- the engine is chosen as DSPy chooses it (``select_backend``, then lm15's offline plan for
  ``engine="auto"``); the choice is remembered per LM settings, and the native client per
  event loop in the LM's own engine store; errors are translated at the same boundary
  (``error_boundary``), so retries and fatal-error recognition see DSPy's error classes;
- a native client built while the environment names no proxy (``HTTP_PROXY``,
  ``HTTPS_PROXY``, ``ALL_PROXY``) connects directly for its life instead of having lm15 read
  the environment again on every request; with a proxy set, lm15 routes each request as usual;
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
(:func:`with_known_capabilities`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import copy
import functools
import importlib
import inspect
import logging
import os
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.request import getproxies

import dspy

from jurist.judges.limits import prompt_estimate

# What the fast path uses: the private names (checked by fast_path() before any is used; see
# PRIVATE_NAMES), and the public ones only it needs, so that a DSPy without them still imports.
try:
    from dspy.clients import execution as dspy_execution
    from dspy.clients.backend_selection import CLIENT_KEYS, BackendSelection, select_backend
    from dspy.clients.call_result import CACHE_FORMAT, CallResult, attributes
    from dspy.clients.capabilities import Capabilities, _planning, capabilities, planning_scope
    from dspy.clients.costs import estimate_cost
    from dspy.clients.disk_serialization import DeserializationError
    from dspy.clients.engines.litellm_engine import AsyncLiteLLMEngine
    from dspy.clients.engines.lm15_engine import AsyncLM15Engine, LM15Engine, timeouts_for
    from dspy.clients.errors import error_boundary
    from dspy.clients.model_metadata import model_info
    from dspy.lm15 import LM15Error, Request, RouterConfig, StreamAssemblyError, UnsupportedFeatureError
    from dspy.utils.exceptions import LMUnsupportedFeatureError
except ImportError as exc:  # another DSPy: fast_path() says so and nothing below is used
    _import_problem: str | None = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
else:
    _import_problem = None

__all__ = [
    "FAST_PATH_VARIABLE",
    "LM_INSTANCE",
    "PRIVATE_NAMES",
    "WRITTEN_FOR",
    "DeserializationError",
    "PrivateName",
    "Shape",
    "acomplete",
    "cached_outputs",
    "covered",
    "fast_path",
    "installed_version",
    "name_problem",
    "price_info",
    "public_reason",
    "recheck",
    "route",
    "with_known_capabilities",
]

logger = logging.getLogger(__name__)
settings = dspy.settings

WRITTEN_FOR = "3.4"
"""The DSPy release series (major.minor) the fast path was written for."""
FAST_PATH_VARIABLE = "JURIST_DSPY_FAST_PATH"
"""Set to ``0``, every LM call goes through DSPy's public call (no private name is used)."""


@dataclass(frozen=True)
class Shape:
    """How the fast path calls a private callable.

    Attributes:
        positional: The parameters it passes by position, in order (``self`` first for a
            method looked up on its class).
        keywords: The parameters it passes by name (or, for a data class, the fields it reads).
        var_keywords: It passes other keywords, so the callable must take ``**kwargs``.
        called: It calls the callable, so no parameter outside these may lack a default
            (``False`` for a data class whose fields are only read).
    """

    positional: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    var_keywords: bool = False
    called: bool = True

    def __str__(self) -> str:
        parts = [*self.positional]
        if self.keywords:
            parts += ["*", *self.keywords]
        if self.var_keywords:
            parts.append("**kwargs")
        return f"({', '.join(parts)})"


LM_INSTANCE = "dspy.LM()"
"""The owner of a name read on an instance of ``dspy.LM`` rather than imported."""


@dataclass(frozen=True)
class PrivateName:
    """One private DSPy name the fast path uses.

    Attributes:
        owner: The module it is imported from, or :data:`LM_INSTANCE`.
        name: Its (dotted) name in the owner.
        shape: How it is called, for a callable; ``None`` for a value or a class used as such.
    """

    owner: str
    name: str
    shape: Shape | None = None

    def __str__(self) -> str:
        return f"{self.owner}.{self.name}"


_EXECUTION = "dspy.clients.execution"
_LM15_ENGINE = "dspy.clients.engines.lm15_engine"
_LITELLM_ENGINE = "dspy.clients.engines.litellm_engine"
_CALL_RESULT = "dspy.clients.call_result"
_CAPABILITIES = "dspy.clients.capabilities"
_LM15_ROUTER = "dspy._vendor.lm15.router"
_LM15_TRANSPORTS = "dspy._vendor.lm15.transports"

PRIVATE_NAMES: tuple[PrivateName, ...] = (
    PrivateName(_EXECUTION, "prepare", Shape(("lm", "prompt", "messages", "kwargs"), ("asynchronous",))),
    PrivateName(
        _EXECUTION, "PreparedCall", Shape((), ("prompt", "messages", "legacy", "cache"), called=False)
    ),
    PrivateName(_EXECUTION, "PreparedCall.key", Shape(("self", "lm", "asynchronous"))),
    PrivateName(_EXECUTION, "IGNORED_CACHE_KEYS"),
    PrivateName(_EXECUTION, "_canonical", Shape(("call",), ("compat",))),
    PrivateName(_EXECUTION, "_Attempt", Shape((), ("response", "result"))),
    PrivateName(_EXECUTION, "_accept_legacy", Shape(("state", "result"))),
    PrivateName(_EXECUTION, "_legacy_done", Shape(("state", "results", "progress"))),
    PrivateName(_EXECUTION, "_retain_response_usage", Shape(("state", "results", "response", "provider"))),
    PrivateName(
        _EXECUTION,
        "_accept_response",
        Shape(("lm", "call", "state", "results", "response", "provider", "request")),
    ),
    PrivateName(_EXECUTION, "_hint_responses_api", Shape(("lm", "exc"))),
    PrivateName(_EXECUTION, "_account_failed_call", Shape(("lm", "results", "primary"))),
    PrivateName("dspy.clients.backend_selection", "CLIENT_KEYS"),
    PrivateName("dspy.clients.backend_selection", "select_backend", Shape(("lm", "options"))),
    PrivateName(
        "dspy.clients.backend_selection",
        "BackendSelection",
        Shape((), ("native", "resolution", "clients"), called=False),
    ),
    PrivateName(_CALL_RESULT, "CACHE_FORMAT"),
    PrivateName(
        _CALL_RESULT,
        "CallResult",
        Shape(
            (),
            ("outputs", "usage", "cost", "raw", "response_model", "cache_hit", "responses", "cost_details"),
        ),
    ),
    PrivateName(_CALL_RESULT, "CallResult.dump", Shape(("self",))),
    PrivateName(_CALL_RESULT, "CallResult.legacy", Shape(("lm", "raw"), ("kwargs",))),
    PrivateName(_CALL_RESULT, "attributes", Shape(("obj",))),
    PrivateName(_CAPABILITIES, "Capabilities"),
    PrivateName(_CAPABILITIES, "_planning"),
    PrivateName(_CAPABILITIES, "capabilities", Shape(("lm",))),
    PrivateName(_CAPABILITIES, "planning_scope", Shape(("lm", "options"))),
    PrivateName(
        "dspy.clients.costs",
        "estimate_cost",
        Shape(("response",), ("provider", "requested_model", "request")),
    ),
    PrivateName("dspy.clients.disk_serialization", "DeserializationError"),
    PrivateName(_LITELLM_ENGINE, "AsyncLiteLLMEngine", Shape((), ("model_type",), var_keywords=True)),
    PrivateName(
        _LITELLM_ENGINE,
        "AsyncLiteLLMEngine.complete_legacy",
        Shape(("self", "lm", "request"), var_keywords=True),
    ),
    PrivateName(_LM15_ENGINE, "AsyncLM15Engine", Shape(("config",), ("model_type",))),
    PrivateName(_LM15_ENGINE, "AsyncLM15Engine._target", Shape(("self", "request"))),
    PrivateName(_LM15_ENGINE, "AsyncLM15Engine.plan", Shape(("self", "request"))),
    PrivateName(_LM15_ENGINE, "LM15Engine", Shape(("config",), ("model_type",))),
    PrivateName(_LM15_ENGINE, "LM15Engine.resolve", Shape(("self", "model"))),
    PrivateName(_LM15_ENGINE, "timeouts_for", Shape(("timeout",))),
    PrivateName(_LM15_ROUTER, "AsyncLMRouter._shared_transport", Shape(("self",))),
    PrivateName(_LM15_TRANSPORTS, "StdlibAsyncTransport", Shape((), ("trust_env",))),
    PrivateName("dspy.clients.errors", "error_boundary", Shape(("model",), ("provider", "unexpected"))),
    PrivateName("dspy.clients.model_metadata", "model_info", Shape(("provider", "model"))),
    PrivateName(LM_INSTANCE, "_engine_spec"),
    PrivateName(LM_INSTANCE, "_async_engine_spec"),
    PrivateName(LM_INSTANCE, "_providers"),
    PrivateName(LM_INSTANCE, "_engine_store"),
    PrivateName(LM_INSTANCE, "_engine_lock"),
    PrivateName(LM_INSTANCE, "_reap_closed_loops", Shape()),
)
"""Every private DSPy name the fast path uses, with the call shape it relies on."""


def installed_version() -> str:
    """The installed DSPy's version (``dspy.__version__``)."""
    return str(getattr(dspy, "__version__", "unknown"))


def _series(version: str) -> str:
    return ".".join(version.split(".")[:2])


def _resolve(name: PrivateName) -> Any:
    """The object ``name`` stands for in the installed DSPy.

    Raises:
        ImportError: Its module does not exist.
        AttributeError: The module or the LM has no such name.
    """
    owner: Any
    if name.owner == LM_INSTANCE:
        owner = dspy.LM("openai/jurist-seam-check", cache=False)
    else:
        owner = importlib.import_module(name.owner)
    for part in name.name.split("."):
        owner = getattr(owner, part)
    return owner


def _shape_problem(found: Any, shape: Shape) -> str | None:
    """How the signature of ``found`` differs from ``shape``, in words, or ``None``."""
    try:
        signature = inspect.signature(found)
    except (TypeError, ValueError):
        return "has no signature to check"
    parameters = list(signature.parameters.values())
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    by_name = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    wrong = [
        name
        for index, name in enumerate(shape.positional)
        if index >= len(parameters)
        or parameters[index].name != name
        or parameters[index].kind not in positional
    ]
    wrong += [
        name
        for name in shape.keywords
        if name not in signature.parameters or signature.parameters[name].kind not in by_name
    ]
    if shape.var_keywords and not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        wrong.append("**kwargs")
    if shape.called:
        wrong += [
            f"{p.name} (required)"
            for p in parameters[len(shape.positional) :]
            if p.default is inspect.Parameter.empty
            and p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
            and p.name not in shape.keywords
        ]
    if not wrong:
        return None
    return f"is {signature}, not {shape} (differs at {', '.join(wrong)})"


def name_problem(name: PrivateName) -> str | None:
    """What is wrong with ``name`` in the installed DSPy (missing, or another call shape), as
    one phrase starting with the name, or ``None`` when it is as the fast path uses it."""
    try:
        found = _resolve(name)
    except (ImportError, AttributeError) as exc:
        return f"{name} is missing ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})"
    if name.shape is None:
        return None
    problem = _shape_problem(found, name.shape)
    return None if problem is None else f"{name} {problem}"


def public_reason() -> str | None:
    """Why LM calls go through DSPy's public call (one line naming the installed and the
    expected DSPy), or ``None`` when the fast path can be taken. Reads the environment,
    imports and signatures: :func:`fast_path` asks once and remembers."""
    if os.environ.get(FAST_PATH_VARIABLE, "").strip() == "0":
        return f"{FAST_PATH_VARIABLE}=0 is set"
    installed = installed_version()
    expected = f"DSPy {WRITTEN_FOR}.x"
    if _series(installed) != WRITTEN_FOR:
        return f"DSPy {installed} is installed, but jurist's fast call path was written for {expected}"
    if _import_problem is not None:
        return f"DSPy {installed} is installed ({expected} expected), but {_import_problem}"
    for name in PRIVATE_NAMES:
        problem = name_problem(name)
        if problem is not None:
            return f"DSPy {installed} is installed ({expected} expected), but {problem}"
    return None


_decision_lock = threading.Lock()
_fast: bool | None = None


def fast_path() -> bool:
    """Whether LM calls take the fast path (see the module docstring); decided at the first
    call of the process, when a DSPy other than the expected one is warned about once."""
    decided = _fast
    return decided if decided is not None else _decide()


def _decide() -> bool:
    global _fast
    with _decision_lock:
        if _fast is None:
            reason = public_reason()
            if reason is not None:
                log = logger.info if reason.startswith(FAST_PATH_VARIABLE) else logger.warning
                log("%s: LM calls go through DSPy's public call (slower; see docs/reliability.md)", reason)
            _fast = reason is None
        return _fast


def recheck() -> None:
    """Forget the decision of :func:`fast_path`: the next call decides (and warns) again."""
    global _fast
    with _decision_lock:
        _fast = None


T = TypeVar("T")


async def with_known_capabilities(lm: Any, options: dict[str, Any], call: Callable[[], Awaitable[T]]) -> T:
    """``await call()`` (an adapter's DSPy call for ``lm`` with ``options``) with the model's
    capabilities already known to DSPy's adapters on the fast path.

    DSPy opens a capability-planning scope for (``lm``, ``options``) and resolves the model's
    capabilities in a worker thread on every call. The scope opened here is the one DSPy's
    adapters reuse (same LM, same options object), filled with the capabilities remembered
    per LM settings (:func:`known_capabilities`), so DSPy resolves nothing. On DSPy's public
    path it is ``await call()``.
    """
    if not fast_path():
        return await call()
    with planning_scope(lm, options):
        scope = _planning.get()
        if scope is not None and scope.value is None:
            scope.value = await known_capabilities(lm, options)
        return await call()


def route(lm: Any) -> Any | None:
    """lm15's offline routing of ``lm``'s model string (``.provider``, ``.model``), as DSPy
    resolves it to price an answer; ``None`` on DSPy's public path.

    Raises:
        Exception: What lm15 raises for a model string it cannot route.
    """
    return _route(lm) if fast_path() else None


def price_info(provider: str, model: str) -> dict[str, Any]:
    """What DSPy's offline price table holds for ``model`` under ``provider`` (``{}`` for a
    model it does not know, and on DSPy's public path, where the table is not read)."""
    if not fast_path():
        return {}
    return dict(model_info(provider, model))


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
    provider-side prompt cache, and a model no provider declaration speaks for; never on
    DSPy's public path (:func:`fast_path`).
    """
    if not fast_path():
        return False
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
            _route_directly_without_proxy(backend)
            lm._engine_store[key] = backend
    return backend


def _route_directly_without_proxy(backend: AsyncLM15Engine) -> None:
    """Spare a new native engine's transport lm15's proxy lookup on every request when the
    environment names no proxy now: its connections then go direct for its life, as lm15
    would route each of them. The environment is read once per native engine (one per LM
    settings and event loop), not per request; with a proxy variable set, lm15 resolves the
    route per request as usual (``NO_PROXY`` included)."""
    if getproxies():
        return
    transport = backend.router._shared_transport()
    if getattr(transport, "_trust_env", None) is True:
        transport._trust_env = False


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
    them), or ``None``; reads only: nothing is sent, written or noted. Only on the fast path
    (:func:`fast_path`): DSPy's public call has no read-only lookup."""
    call = dspy_execution.prepare(lm, prompt, messages, kwargs, asynchronous=True)
    if not call.cache:
        return None
    request = call.key(lm, True)
    cache = dspy.cache
    if callable(getattr(cache, "key_of", None)):
        key = cache.key_of(request, dspy_execution.IGNORED_CACHE_KEYS)
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
            key = cache.key_of(request, dspy_execution.IGNORED_CACHE_KEYS)
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
