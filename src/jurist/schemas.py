"""Record types shared by the runner, reports and tasks."""

from __future__ import annotations

from typing import Any, Literal

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
