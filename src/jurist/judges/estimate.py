"""What a judge would send for some items, counted without calling anything.

For each item the judge's program runs exactly as in a judgment (the same program, LM,
adapter and asynchronous path) up to its first LM call, which is stopped before anything
happens (:func:`jurist.judges.lm.probing`). That call's messages are counted with the
model's tokenizer (:mod:`jurist.judges.tokens`), and the response cache is read (never
written) under the key the real call would use: a cached call will cost nothing, and its
stored answer tells how long the model's answers are. On DSPy's public call path
(:func:`jurist.judges.dspy_seam.fast_path` is false) the cache cannot be read without
calling, so it is not read: each call's :attr:`CallEstimate.cache_read` is false and it
counts as sent.

A program that makes several LM calls per item is counted by its first call (every
built-in task makes one). A re-ask after an unparseable answer is not foreseen.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import dspy

from jurist.judges import dspy_seam
from jurist.judges.judge import LLMJudge
from jurist.judges.lm import JudgeLM, probing
from jurist.judges.tokens import Tokenizer

__all__ = ["CallEstimate", "first_calls", "output_fields"]


@dataclass(frozen=True)
class CallEstimate:
    """The first LM call of one item, as it would be made now.

    Attributes:
        prompt_tokens: The tokens of its messages.
        cached: Whether the response cache answers it (no provider call, no cost).
        completion_tokens: The tokens of the cached answer (``None`` when not cached).
        cache_read: Whether the cache was read (``False`` on DSPy's public call path, which
            has no read-only lookup: ``cached`` is then ``False`` whatever the cache holds).
    """

    prompt_tokens: int
    cached: bool
    completion_tokens: int | None = None
    cache_read: bool = True


class _Stopped(BaseException):
    """Stops a program at its first LM call (a BaseException, so DSPy's fallbacks let it through)."""

    def __init__(self, lm: JudgeLM, prompt: Any, messages: Any, kwargs: dict[str, Any]) -> None:
        super().__init__("stopped before the call")
        self.lm, self.prompt, self.messages, self.kwargs = lm, prompt, messages, kwargs


def _stop(lm: JudgeLM, prompt: Any, messages: Any, kwargs: dict[str, Any]) -> None:
    raise _Stopped(lm, prompt, messages, dict(kwargs))


def _text(output: Any) -> str:
    if isinstance(output, dict):
        return str(output.get("text") or "")
    return "" if output is None else str(output)


def _estimate(stopped: _Stopped, tokenizer: Tokenizer) -> CallEstimate:
    messages = stopped.messages or [{"role": "user", "content": str(stopped.prompt or "")}]
    prompt_tokens = tokenizer.count_messages(messages)
    if not dspy_seam.fast_path():
        return CallEstimate(prompt_tokens=prompt_tokens, cached=False, cache_read=False)
    outputs = dspy_seam.cached_outputs(stopped.lm, stopped.prompt, stopped.messages, stopped.kwargs)
    if not outputs:
        return CallEstimate(prompt_tokens=prompt_tokens, cached=False)
    return CallEstimate(
        prompt_tokens=prompt_tokens, cached=True, completion_tokens=tokenizer.encode(_text(outputs[0]))
    )


async def first_calls(
    judge: LLMJudge, inputs: Iterable[dict[str, Any]], tokenizer: Tokenizer
) -> list[CallEstimate | None]:
    """The first LM call of each item's inputs, counted and looked up in the cache.

    Returns one entry per item, in order: ``None`` for an item the program answered
    without calling a model.
    """
    found: list[CallEstimate | None] = []
    with probing(_stop):
        for item_inputs in inputs:
            with dspy.context(lm=judge.lm, adapter=judge.adapter, trace=None):
                try:
                    await judge.program.acall(**item_inputs)
                except _Stopped as stopped:
                    found.append(_estimate(stopped, tokenizer))
                    continue
            found.append(None)  # answered without a call
    return found


def output_fields(judge: LLMJudge) -> int:
    """How many output fields the judge's first predictor asks the model for (at least 1)."""
    for predictor in judge.program.predictors():
        signature = getattr(predictor, "signature", None)
        if signature is not None:
            return max(1, len(signature.output_fields))
    return 1
