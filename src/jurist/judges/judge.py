"""Runnable judges: what the batch runner calls for one item.

A judge turns an item's inputs into a JSON-ready output dict, or raises
:class:`JudgeFailure` carrying the error and every raw answer it saw. Two kinds exist:

- :class:`LLMJudge` runs a DSPy program with a configured LM: transient provider failures
  are retried with capped backoff (:mod:`jurist.judges.retry`); an answer that cannot be
  parsed is asked again, bypassing the cache, ``parse_retries`` times, and an answer that
  parsed but holds an invalid verdict once at most (:data:`INVALID_ANSWERS`). A provider problem
  no retry can fix (wrong key, unknown model, unreachable server) raises
  :class:`jurist.errors.FatalProviderError`, which stops the whole run.
- :class:`BaselineJudge` runs an offline rule-based function; it never calls a model.

A failed item is never served from the cache: the answers of an attempt are written to the
response cache only once the attempt's answer was accepted, and an answer the cache served
that fails to parse is evicted and asked of the provider again. So ``--retry-failed``
always reaches the provider, and a later run into a new directory does not replay a bad
answer either.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import hashlib
import inspect
import json
import os
import tempfile
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from jurist.judges.cache_context import current_repeat, defer_cache_write, defers_cache_writes
from jurist.judges.config import JudgeConfig
from jurist.judges.verdicts import (
    VERDICTS_DB,
    JudgeCard,
    VerdictCache,
    card_key,
    verdict_cache,
    verdict_key,
    verdict_prefix,
)
from jurist.redaction import install_log_redaction, redact, register_secret
from jurist.schemas import LMCall, Usage, mark_cached

if TYPE_CHECKING:
    import dspy

    from jurist.judges.lm import JudgeLM, UsageMeter


class JudgeFailure(Exception):
    """A judgment that failed after every retry; the item is recorded as failed, not scored.

    Its message and raw answers are redacted (:func:`jurist.redaction.redact`): a provider
    may echo the API key into an error body or an answer.
    """

    def __init__(
        self,
        message: str,
        *,
        error_type: str,
        raw: list[str],
        usage: Usage,
        attempts: int,
        calls: list[LMCall] | None = None,
    ) -> None:
        super().__init__(redact(message))
        self.error_type = error_type
        self.raw = [redact(text) for text in raw]
        self.usage = usage
        self.attempts = attempts
        self.calls: list[LMCall] = list(calls or [])
        """Every LM call of the failed judgment, with its messages (redacted when stored)."""


class OutputError(ValueError):
    """The judge answered, but the answer does not make a valid output (treated like a parse error)."""


class Judgment(BaseModel):
    """A successful judgment: the output plus what it cost, and every LM call it made."""

    output: dict[str, Any]
    raw: list[str] = []
    usage: Usage = Usage()
    attempts: int = 1
    calls: list[LMCall] = []


class Judge(Protocol):
    """What the runner needs of a judge."""

    name: str

    def fingerprint(self) -> str:
        """A hash of what decides the answers (model settings, program state, rules)."""
        ...

    async def judge(self, inputs: dict[str, Any]) -> Judgment:
        """Judge one item; raise :class:`JudgeFailure` when it cannot."""
        ...


INVALID_ANSWERS = 2
"""Answers that parsed but hold an invalid verdict (an
:class:`~jurist.judges.adapters.InvalidVerdictError`, or a ``postprocess`` that refuses the
prediction) after which a judgment fails: such an answer is asked again once, not
``parse_retries`` times (a model that answers ``refunds`` for a list without it tends to
answer it again). An answer that does not parse at all is asked again ``parse_retries`` times."""

Postprocess = Callable[[Any, dict[str, Any]], BaseModel | dict[str, Any]]
"""Turns a program's prediction and the item's inputs into the validated output."""


T = TypeVar("T")


@dataclass
class Stopping:
    """What the judgments of one runner call share about stopping early (:func:`judging_in_run`).

    Attributes:
        finish_calls: Set by the runner when a fatal provider error stops the run, before it
            cancels the judgments in flight. A judgment cancelled then first lets its provider
            attempt in flight end (at most the LM's timeout; a request that may have reached
            the provider is answered, so whether it did is known), then stops without another
            call. Unset (Ctrl-C, any other stop), a cancelled attempt is cancelled at once.
        unrecorded: The usage of the judgments cancelled: calls that reached the provider
            but that no recorded item holds.
    """

    finish_calls: bool = False
    unrecorded: Usage = field(default_factory=Usage)

    async def attempt(self, work: Awaitable[T]) -> T:
        """Await ``work`` (one provider attempt); if cancelled meanwhile with
        :attr:`finish_calls` set, let it end before the cancellation goes on."""
        task = asyncio.ensure_future(work)
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            try:
                if self.finish_calls and not task.done():
                    await asyncio.wait({task})
            finally:  # cancelled again while waiting: cancel the attempt after all
                if not task.done():
                    task.cancel()
                elif not task.cancelled():
                    task.exception()  # read: the judgment stops anyway
            raise


_stopping: contextvars.ContextVar[Stopping | None] = contextvars.ContextVar("jurist_stopping", default=None)


@contextmanager
def judging_in_run(stopping: Stopping) -> Iterator[None]:
    """Judgments made in this context (thread or asyncio task) follow ``stopping`` and report
    to it when the run stops early (the runner shares one among a call's judgments)."""
    token = _stopping.set(stopping)
    try:
        yield
    finally:
        _stopping.reset(token)


@contextmanager
def _counted_if_cancelled(meter: UsageMeter) -> Iterator[None]:
    """Add the calls of a judgment that is cancelled to the run's :attr:`Stopping.unrecorded`."""
    try:
        yield
    except asyncio.CancelledError:
        stopping = _stopping.get()
        if stopping is not None:
            stopping.unrecorded = stopping.unrecorded.add(meter.usage())
        raise


def _as_dict(output: BaseModel | dict[str, Any]) -> dict[str, Any]:
    return output.model_dump(mode="json") if isinstance(output, BaseModel) else output


def _parse_error_text(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


class LLMJudge:
    """A DSPy program run with the LM a :class:`JudgeConfig` describes.

    Built with :meth:`deferred`, its program, LM and adapter are built when first needed:
    a batch run whose every item is served by the finished-verdict cache builds none of
    them and imports neither DSPy nor LiteLLM (see :meth:`deferred`).

    Args:
        program: The ``dspy.Module`` to call with the item's inputs as keyword arguments.
        config: The judge config (model, adapter, retries, ...).
        postprocess: Validates the prediction against the inputs and returns the output;
            raising ``OutputError``/``ValueError`` counts as an unparseable answer.
        name: The judge's name in reports.
    """

    _program: dspy.Module | None
    _adapter: Any

    def __init__(
        self,
        program: dspy.Module,
        config: JudgeConfig,
        postprocess: Postprocess,
        *,
        name: str | None = None,
    ) -> None:
        self._start(config, postprocess, name)
        self._program = program
        self._build_lm()
        self._adapter = self._make_adapter()

    def _start(self, config: JudgeConfig, postprocess: Postprocess, name: str | None) -> None:
        self.config = config
        self.postprocess = postprocess
        self.name = name or config.model
        self._program = None
        self._build_program: Callable[[], dspy.Module] | None = None
        self._scope_of: Callable[[dspy.Module], str] | None = None
        self._scope: str | None = None
        self._lm: JudgeLM | None = None
        self._repeat = current_repeat()
        self._adapter = None
        self._adapter_factory: Callable[[], Any] | None = None
        self._card: JudgeCard | None = None
        self._card_key: str | None = None
        self._card_kept = False
        self._verdicts: tuple[str, bytes, VerdictCache] | None = None
        self.weigh: Callable[[dict[str, Any], Any], dict[str, Any]] | None = None
        """With ``logprobs: true`` in the config: how the task weighs an accepted output by the
        reply's log-probabilities (the output, and the prediction's ``logprobs``, ``None`` when
        the provider returned none), giving the output to keep; ``None`` (the default) keeps
        outputs as ``postprocess`` gave them. The task's :meth:`~jurist.tasks.Task.weigh`, set
        by :meth:`~jurist.tasks.Task.make_judge` (:mod:`jurist.judges.logprobs`)."""

    @classmethod
    def deferred(
        cls,
        build: Callable[[], dspy.Module],
        config: JudgeConfig,
        postprocess: Postprocess,
        *,
        scope: Callable[[dspy.Module], str],
        identity: Mapping[str, Any] | None,
        files: Sequence[Path] = (),
        name: str | None = None,
    ) -> LLMJudge:
        """A judge of the program ``build()`` makes, whose finished verdicts are keyed with
        ``scope(program)`` (see :attr:`verdict_scope`).

        With ``identity`` (JSON-ready: what builds the program, e.g. the task's class, name,
        version and options; ``None``: not known well enough) and the response cache on, the
        judge's card (:class:`~jurist.judges.verdicts.JudgeCard`) is looked up in the cache
        directory under ``identity``, the config, the repeat, ``files`` and the state of
        jurist's package (:func:`~jurist.judges.verdicts.card_key`). Found, the program, LM
        and adapter are built when an item is not served a finished verdict (the first
        such item builds them and checks the card); otherwise now, as the constructor
        does, and the card is kept with the judge's first verdict of a batch run. A compiled
        program, an ``api_base`` with credentials, or a missing API key builds now too (a
        missing key is refused now, as always).
        """
        judge = cls.__new__(cls)
        judge._start(config, postprocess, name)
        judge._build_program = build
        judge._scope_of = scope
        key = os.environ.get(config.api_key_env) if config.api_key_env else None
        eligible = (
            config.cache
            and config.program is None
            and config.basic_auth is None
            and (not config.api_key_env or bool(key))
        )
        if identity is not None and eligible:
            judge._card_key = card_key(
                {**identity, "config": config.model_dump(mode="json"), "repeat": judge._repeat}, files
            )
            if _usable(Path(config.cache_dir).expanduser()):
                judge._card = verdict_cache(config.cache_dir).read_card(judge._card_key)
        if judge._card is None:
            judge._build()
            return judge
        install_log_redaction()  # as building the LM does
        if key:
            register_secret(key)
        return judge

    def _build(self) -> None:
        """Build the program, the LM and the adapter (a judge of :meth:`deferred`)."""
        if self._program is None and self._build_program is not None:
            self._program = self._build_program()
        if self._lm is None:
            self._build_lm()
        if self._adapter is None:
            self._adapter = self._make_adapter()
        card = self._card
        if card is not None:
            found = (self.fingerprint(), self._own_prefix(self.verdict_scope or ""))
            if found != (card.fingerprint, card.prefix):
                raise RuntimeError(
                    f"the judge card in {self.config.cache_dir} does not match the judge built now "
                    f"(fingerprint {card.fingerprint}, built {found[0]})"
                )

    def _build_lm(self) -> None:
        from jurist.judges.cache_context import repeat_salt
        from jurist.judges.lm import build_lm

        with repeat_salt(self._repeat):  # as when the judge was made
            self._lm = build_lm(self.config)

    def _make_adapter(self) -> Any:
        if self._adapter_factory is not None:
            return self._adapter_factory()
        from jurist.judges.adapters import make_adapter

        return make_adapter(self.config.adapter)

    @property
    def program(self) -> dspy.Module:
        """The program (built now if it is not yet)."""
        if self._program is None:
            self._build()
        assert self._program is not None
        return self._program

    @property
    def lm(self) -> JudgeLM:
        """The LM (built now, with the program, if it is not yet)."""
        if self._lm is None:
            self._build()
        assert self._lm is not None
        return self._lm

    @property
    def adapter(self) -> Any:
        """The DSPy adapter that formats prompts and parses answers (built now if it is not yet)."""
        if self._adapter is None:
            self._build()
        return self._adapter

    @adapter.setter
    def adapter(self, adapter: Any) -> None:
        self._adapter = adapter

    def use_adapter(self, make: Callable[[], Any]) -> None:
        """Use the adapter ``make()`` gives, made when the judge is built (now, if it is)."""
        self._adapter_factory = make
        if self._adapter is not None:
            self._adapter = make()

    @property
    def verdict_scope(self) -> str | None:
        """What the task adds to the key of a finished verdict (its name, version, options,
        how it reads an answer); ``None`` (the default) keeps no finished verdicts
        (:mod:`jurist.judges.verdicts`). Set by the task that builds the judge, or given
        to :meth:`deferred`."""
        if self._scope is None and self._scope_of is not None:
            self._scope = self._scope_of(self.program)
        return self._scope

    @verdict_scope.setter
    def verdict_scope(self, scope: str | None) -> None:
        self._scope = scope

    def fingerprint(self) -> str:
        card = self._card
        if card is not None and self._program is None:
            return card.fingerprint
        state = json.dumps(self.program.dump_state(), sort_keys=True, default=str)
        return hashlib.sha256(f"{self.config.fingerprint()}|{state}".encode()).hexdigest()[:16]

    def _own_prefix(self, scope: str) -> bytes:
        return verdict_prefix(self.fingerprint(), self.lm.model, self.lm.kwargs, scope)

    def _verdict_slot(self, inputs: dict[str, Any]) -> tuple[VerdictCache, str] | None:
        """Where this item's finished verdict is kept, or ``None`` when it is not: outside a
        batch run (the runner collects the cache writes), with the cache off, or without a
        :attr:`verdict_scope`."""
        if not self.config.cache or not defers_cache_writes():
            return None
        card = self._card if self._program is None else None
        marker = "" if card is not None else self.verdict_scope
        if marker is None:
            return None
        known = self._verdicts
        if known is None or known[0] != marker:
            prefix = card.prefix if card is not None else self._own_prefix(marker)
            known = self._verdicts = (marker, prefix, verdict_cache(self.config.cache_dir))
            self._keep_card(prefix, known[2])
        key = verdict_key(known[1], inputs)
        return None if key is None else (known[2], key)

    def _keep_card(self, prefix: bytes, cache: VerdictCache) -> None:
        """Hand the runner's writer this judge's card (once; a judge of :meth:`deferred` built
        now because it had none)."""
        if self._card_key is None or self._card is not None or self._card_kept:
            return
        self._card_kept = True
        card = JudgeCard(self.fingerprint(), prefix)
        defer_cache_write(functools.partial(cache.write_card, self._card_key, card))

    async def _call(self, lm: dspy.LM, inputs: dict[str, Any]) -> Any:
        import dspy

        from jurist.judges.retry import provider_retrying

        stopping = _stopping.get()
        async for attempt in provider_retrying(self.config.num_retries, cap=self.config.retry_max_wait):
            # trace=None: DSPy would otherwise keep every call's inputs and prediction (for
            # optimizers) in a global list of up to 10,000 entries.
            with attempt, dspy.context(lm=lm, adapter=self.adapter, trace=None):
                if stopping is None:
                    return await self.program.acall(**inputs)
                return await stopping.attempt(self.program.acall(**inputs))
        raise AssertionError("unreachable: tenacity re-raises the last error")

    async def judge(self, inputs: dict[str, Any]) -> Judgment:
        """Judge one item.

        In a batch run, an item whose verdict this judge gave before (the same key, see
        :mod:`jurist.judges.verdicts`) is served that verdict without calling the program;
        it counts one cache hit per call of the attempt that gave it, and its calls are
        recorded with ``cache_hit`` set; the judgment is marked with what the cache vouches for
        about its texts (:func:`jurist.schemas.cached_texts`: redacted when written), so the run
        store need not redact them again. An accepted verdict is kept for the next time.

        Each attempt's answers are held back from the response cache and written only when
        the answer parsed and passed ``postprocess``. An attempt whose answer came (even in
        part) from the cache and failed is not counted against ``parse_retries``: the cached
        entries are evicted and the same attempt is asked of the provider, once.

        Raises:
            JudgeFailure: The answer could not be parsed after every parse retry, or the
                provider failed after every retry, or the program failed.
            FatalProviderError: The provider refused in a way no retry can fix; its ``usage``
                holds the calls this judgment made.
        """
        slot = self._verdict_slot(inputs)
        if slot is not None:
            served = slot[0].read(slot[1])
            if served is not None:
                judgment = Judgment.model_construct(
                    output=served.output, raw=served.raw, usage=served.usage, attempts=1, calls=served.calls
                )
                return mark_cached(judgment, served.texts)
        from dspy.utils.exceptions import AdapterParseError

        from jurist.judges.adapters import InvalidVerdictError
        from jurist.judges.lm import fatal_provider_error, metering, with_rollout
        from jurist.judges.retry import provider_problem, refused_logprobs

        attempts = 0
        with metering(hold_cache_writes=True) as meter, _counted_if_cancelled(meter):
            parse_attempt = 0
            invalid_answers = 0
            asked_again = False
            while parse_attempt <= self.config.parse_retries:
                attempts += 1
                meter.begin_attempt()
                lm = with_rollout(self.lm, parse_attempt)
                try:
                    prediction = await self._call(lm, inputs)
                except AdapterParseError as exc:
                    last: BaseException = exc
                    invalid = isinstance(exc, InvalidVerdictError)
                except Exception as exc:  # provider failure after retries, or a program bug
                    problem = provider_problem(exc)
                    if problem is None and self.config.logprobs:
                        problem = refused_logprobs(exc)
                    if problem is not None:
                        fatal = fatal_provider_error(self.config, problem)
                        fatal.usage = meter.usage()  # the item is not recorded: the runner counts these
                        raise fatal from exc
                    raise self._failure(exc, meter, attempts) from exc
                else:
                    try:
                        output = _as_dict(self.postprocess(prediction, inputs))
                        if self.weigh is not None and self.config.logprobs:
                            output = self.weigh(output, getattr(prediction, "logprobs", None))
                    except (ValueError, ValidationError) as exc:  # OutputError is a ValueError
                        last, invalid = exc, True
                    else:
                        if slot is not None:
                            _keep_verdict(slot, output, meter)
                        if meter.held and not defers_cache_writes():
                            await asyncio.to_thread(meter.commit_cache)
                        else:
                            meter.commit_cache()  # nothing to write, or the runner's writer writes it
                        return Judgment(
                            output=output,
                            raw=meter.raw,
                            usage=meter.usage(),
                            attempts=attempts,
                            calls=meter.call_details,
                        )
                meter.drop_held()
                if meter.served and not asked_again:
                    # A cached answer that does not parse is no answer: evict it and ask the provider.
                    await asyncio.to_thread(meter.evict_served)
                    asked_again = True
                    continue
                if meter.served:
                    await asyncio.to_thread(meter.evict_served)
                parse_attempt += 1
                asked_again = False
                if invalid:
                    invalid_answers += 1
                    if invalid_answers >= INVALID_ANSWERS:
                        break
            raise self._failure(last, meter, attempts, parse=True, invalid=invalid) from last

    def _failure(
        self,
        exc: BaseException,
        meter: UsageMeter,
        attempts: int,
        *,
        parse: bool = False,
        invalid: bool = False,
    ) -> JudgeFailure:
        from jurist.judges.adapters import INVALID

        raw = list(meter.raw)
        lm_response = getattr(exc, "lm_response", None)
        if lm_response and str(lm_response) not in raw:
            raw.append(str(lm_response))
        kind = "unparseable_output" if parse else type(exc).__name__
        text = _parse_error_text(exc)
        if not parse:
            message = text
        elif invalid:  # the answer parsed; its verdict is not valid
            message = text if text.startswith(INVALID) else f"{INVALID}: {text}"
        else:
            message = f"answer could not be parsed: {text}"
        return JudgeFailure(
            message,
            error_type=kind,
            raw=raw,
            usage=meter.usage(),
            attempts=attempts,
            calls=meter.call_details,
        )


def _usable(cache_dir: Path) -> bool:
    """Whether ``cache_dir`` holds finished verdicts and takes new files (a directory that does
    not is refused when the LM is built, with the reason: the judge is built at once)."""
    if not (cache_dir / VERDICTS_DB).is_file():
        return False
    try:
        with tempfile.TemporaryFile(dir=cache_dir):
            return True
    except OSError:
        return False


def _keep_verdict(slot: tuple[VerdictCache, str], output: dict[str, Any], meter: UsageMeter) -> None:
    """Hand the runner's writer the write of an accepted verdict: its output and the calls of
    the attempt that gave it (encoded in the writer's thread, not on the event loop)."""
    cache, key = slot
    calls = [
        call for call in meter.call_details if call.attempt == max(meter.attempt, 1) and call.error is None
    ]

    defer_cache_write(functools.partial(cache.write, key, output, calls))


class BaselineJudge:
    """An offline rule-based judge: a function of the item's inputs, no model, no key.

    Args:
        function: Called with the item's inputs as keyword arguments; returns the output.
        name: The judge's name in reports.
        version: Bumped whenever the rules change, so old run directories are not resumed.
    """

    def __init__(
        self, function: Callable[..., BaseModel | dict[str, Any]], *, name: str, version: str
    ) -> None:
        self.function = function
        self.name = name
        self.version = version

    def fingerprint(self) -> str:
        source = ""
        target = self.function if inspect.isfunction(self.function) else type(self.function)
        try:
            source = inspect.getsource(target)
        except (OSError, TypeError):
            source = repr(target)
        return hashlib.sha256(f"{self.name}|{self.version}|{source}".encode()).hexdigest()[:16]

    async def judge(self, inputs: dict[str, Any]) -> Judgment:
        try:
            output = self.function(**inputs)
        except (ValueError, ValidationError) as exc:
            raise JudgeFailure(
                f"baseline could not judge this item: {exc}",
                error_type=type(exc).__name__,
                raw=[],
                usage=Usage(),
                attempts=1,
            ) from exc
        await asyncio.sleep(0)  # let the runner write finished items between rule-based judgments
        return Judgment(output=_as_dict(output))


def program_identity(judge: Judge) -> dict[str, str] | None:
    """The compiled program a judge runs: ``{"path": ..., "sha256": ...}`` of the artifact file
    its config names (``program``), or ``None`` when it runs no compiled program.

    The hash is of the artifact file's bytes (``"unreadable"`` if it cannot be read now), so
    two runs of the same path with a re-optimized artifact tell apart.
    """
    config = getattr(judge, "config", None)
    if not isinstance(config, JudgeConfig) or config.program is None:
        return None
    path = Path(config.program)
    try:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        digest = "unreadable"
    return {"path": str(path), "sha256": digest}


def effective_config(judge: Judge, given: JudgeConfig) -> JudgeConfig:
    """The config a judge really runs with: a compiled program brings the one it was
    compiled for (see :func:`jurist.optimization.load_judge_program`); otherwise ``given``."""
    config = getattr(judge, "config", None)
    return config if isinstance(config, JudgeConfig) else given
