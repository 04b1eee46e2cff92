"""Record types shared by the runner, reports and tasks."""

from __future__ import annotations

from typing import Any, Literal, TypeVar

from pydantic import BaseModel, Field


class Usage(BaseModel):
    """LM usage of one item or one run.

    ``calls`` counts LM calls that reached the provider, ``cache_hits`` those answered from
    the disk or memory cache; tokens and cost are summed over provider calls only.
    """

    calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None

    def add(self, other: Usage) -> Usage:
        """Return the sum of two usages; cost stays ``None`` only if both are unknown."""
        cost = None if self.cost is None and other.cost is None else (self.cost or 0.0) + (other.cost or 0.0)
        return Usage(
            calls=self.calls + other.calls,
            cache_hits=self.cache_hits + other.cache_hits,
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            cost=cost,
        )


class Message(BaseModel):
    """One chat message sent to the judge model."""

    role: str
    content: str


class LMCall(BaseModel):
    """One LM call made while judging an item: what was sent, what came back, what it cost.

    Attributes:
        attempt: The judge's parse attempt the call belongs to (1 for the first; a reply that
            did not parse is asked again as attempt 2, ...).
        messages: The rendered messages sent (system, user, and assistant turns of few-shot
            demos), in order.
        replies: The raw text of each answer this call returned (none for a failed call).
        cache_hit: Whether the answer came from the response cache (no provider request).
        prompt_tokens: Prompt tokens the provider reported (0 for a cache hit).
        completion_tokens: Completion tokens the provider reported (0 for a cache hit).
        cost: The call's cost in USD, where the provider's price is known.
        latency_s: Seconds from the call to its answer (or its failure), where measured.
        error: For a call that raised (a 429, a 500, a timeout, ...): what it raised.
    """

    attempt: int = 1
    messages: list[Message] = Field(default_factory=list)
    replies: list[str] = Field(default_factory=list)
    cache_hit: bool = False
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None
    latency_s: float | None = None
    error: str | None = None


ItemStatus = Literal["ok", "failed"]


class ItemResult(BaseModel):
    """What the runner records for one finished item.

    A failed item keeps its error and the raw LM text it could not use; it has no output
    and is never scored.
    """

    id: str
    status: ItemStatus
    output: dict[str, Any] | None = None
    error: str | None = None
    error_type: str | None = None
    raw: list[str] = Field(default_factory=list)
    attempts: int = 1
    latency_s: float = 0.0
    usage: Usage = Field(default_factory=Usage)
    calls: list[LMCall] | None = Field(default=None, exclude=True)
    """Every LM call of the item with its messages (``[]`` for a judge that calls no model,
    ``None`` when not known). Kept in the run store only, never in ``results.jsonl``: read
    it back with :meth:`jurist.runner.ResultStore.item_detail`."""

    def table_row(self) -> dict[str, Any]:
        """The item's status, error and usage as flat columns, for per-item tables."""
        return {
            "id": self.id,
            "status": self.status,
            "error_type": self.error_type,
            "error": self.error,
            "attempts": self.attempts,
            "latency_s": self.latency_s,
            "calls": self.usage.calls,
            "cache_hits": self.usage.cache_hits,
            "prompt_tokens": self.usage.prompt_tokens,
            "completion_tokens": self.usage.completion_tokens,
            "cost": self.usage.cost,
        }


class CachedTexts:
    """What the finished-verdict cache (:mod:`jurist.judges.verdicts`) vouches for about the
    texts of a verdict it served: they were redacted when the verdict was written, and each
    message's text is kept under the SHA-256 of that text.

    It is kept beside a judgment or result (:func:`mark_cached`), never in it: not a field,
    so it is neither validated, dumped nor compared, and a result read from data, a file or
    a JSON line carries none. It names the very ``output``, ``raw`` and ``calls`` objects it
    was made for, and :func:`cached_texts` finds it only while the model holds those same
    objects: a copy with any of them replaced is redacted in full by the run store.

    Attributes:
        output: The served output.
        raw: The served raw replies.
        calls: The served calls.
        messages: For each call, its messages as ``(role, sha256, text)``.
    """

    __slots__ = ("calls", "messages", "output", "raw")

    def __init__(
        self,
        output: dict[str, Any],
        raw: list[str],
        calls: list[LMCall],
        messages: list[list[tuple[str, str, str]]],
    ) -> None:
        self.output = output
        self.raw = raw
        self.calls = calls
        self.messages = messages


_CACHED = "_jurist_cached_texts"
"""The attribute (outside the model's fields) that holds a model's :class:`CachedTexts`."""

M = TypeVar("M", bound=BaseModel)


def mark_cached(model: M, texts: CachedTexts) -> M:
    """``model`` (a judgment or an :class:`ItemResult` holding ``texts``' objects), marked as
    served with ``texts`` (see :class:`CachedTexts`)."""
    object.__setattr__(model, _CACHED, texts)  # beside the fields: not validated, dumped or compared
    return model


def cached_texts(model: BaseModel) -> CachedTexts | None:
    """The :class:`CachedTexts` ``model`` was marked with, while its ``output``, ``raw`` and
    ``calls`` are still the objects they name; otherwise ``None``."""
    found = model.__dict__.get(_CACHED)
    if not isinstance(found, CachedTexts):
        return None
    held = (getattr(model, "output", None), getattr(model, "raw", None), getattr(model, "calls", None))
    if held[0] is not found.output or held[1] is not found.raw or held[2] is not found.calls:
        return None
    return found


RATIONALE_FIELDS = ("rationale", "reasoning", "reason", "explanation")
"""Output fields that hold a judge's rationale (also any field ending in ``_explanation``,
``_reasoning`` or ``_rationale``)."""


def rationale_of(output: dict[str, Any] | None) -> str | None:
    """The rationale in a judge's output: the text of its rationale field(s), or ``None``.

    One field gives its text; several give one ``name: text`` line each, in output order.
    """
    if not output:
        return None
    found = [
        (name, value)
        for name, value in output.items()
        if isinstance(value, str)
        and value.strip()
        and (name in RATIONALE_FIELDS or name.endswith(("_explanation", "_reasoning", "_rationale")))
    ]
    if not found:
        return None
    if len(found) == 1:
        return found[0][1]
    return "\n".join(f"{name}: {value}" for name, value in found)


class ItemDetail(BaseModel):
    """One recorded item in full: everything the run store holds about its judgment.

    Attributes:
        id: The item's id.
        status: ``"ok"`` or ``"failed"``.
        output: The parsed, validated verdict (``None`` for a failed item).
        rationale: The rationale field(s) of the output, where it has any.
        error: Why a failed item failed.
        error_type: The kind of failure (``unparseable_output``, an exception's name).
        raw: Every raw answer of the item, in the order they came.
        attempts: Parse attempts made.
        latency_s: Seconds the item took.
        usage: The item's LM usage (calls, cache hits, tokens, cost).
        judge_fingerprint: The fingerprint of the judge that made the row.
        program: The compiled program that judged (``{"path": ..., "sha256": ...}``), or
            ``None`` when none was used.
        calls: Every LM call with its messages and replies; ``[]`` for a judge that calls no
            model (a baseline); ``None`` for a row recorded without its calls.
        inputs: The judged inputs (field -> value: the question, answer, context...), or
            ``None`` when the row does not record them (written before jurist recorded
            them, or by a jury's derived run).
    """

    id: str
    status: ItemStatus
    output: dict[str, Any] | None = None
    rationale: str | None = None
    error: str | None = None
    error_type: str | None = None
    raw: list[str] = Field(default_factory=list)
    attempts: int = 1
    latency_s: float = 0.0
    usage: Usage = Field(default_factory=Usage)
    judge_fingerprint: str | None = None
    program: dict[str, str] | None = None
    calls: list[LMCall] | None = None
    inputs: dict[str, Any] | None = None
