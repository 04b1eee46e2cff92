"""Verdicts weighted by the judge's own token probabilities (``logprobs: true`` in a config).

A provider asked for log-probabilities returns, for each token of the reply, its
log-probability and the most probable alternatives at that position
(``logprobs.content[].top_logprobs`` in OpenAI's chat-completions shape). When the tokens
of a verdict can be located in the reply, the alternatives at its first token say how
probable each allowed verdict was:

- **Locating the verdict.** The reply is the tokens' texts joined. The verdict's value
  starts after the field's marker of the chat adapter (``[[ ## verdict ## ]]`` and the
  white space after it) or after the field's key in a JSON answer (``"verdict":`` and an
  opening quote, if any). The marker or key must occur exactly once; the token where the
  value starts must hold nothing before it but white space and quotes.
- **Reading the alternatives.** Each alternative at that token (and the sampled token
  itself, when the provider did not list it) is stripped of white space and quotes and
  read as an allowed verdict: the one it equals (letter case aside), else the one it is
  the beginning of, when it begins exactly one. Alternatives that read as no verdict are
  dropped; several reading as the same verdict add up.
- **Renormalising.** ``p(v) = Σ exp(logprob)`` of the alternatives read as ``v``, divided
  by the sum over every allowed verdict.

The item is not weighted (it keeps its plain verdict, and :class:`Weighed` says why) when
the reply carries no log-probabilities, the verdict cannot be located, no alternative
reads as an allowed verdict, or the sampled token reads as another verdict than the parsed
one. A verdict whose allowed values share their first token (``partial`` and
``partially``) is told apart only where the beginning read is unique.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["VerdictValues", "Weighed", "reply_tokens", "weigh_verdict"]

_QUOTES_AND_SPACE = " \t\r\n\"'`"


@dataclass(frozen=True)
class VerdictValues:
    """The output field whose tokens are weighed, and the values it may take.

    Attributes:
        field: The output field (``verdict``).
        values: The allowed values as the judge writes them (``true``/``false``, the labels,
            the scores of a range, ``A``/``B``/``tie``), in the order reports list them.
    """

    field: str
    values: tuple[str, ...]


@dataclass(frozen=True)
class Weighed:
    """What the log-probabilities say of one verdict.

    Attributes:
        probabilities: Each allowed value's probability, renormalised over the allowed ones
            (``None`` when the item could not be weighted).
        reason: Why it could not be weighted (``None`` when it was).
    """

    probabilities: dict[str, float] | None
    reason: str | None = None


@dataclass(frozen=True)
class _Token:
    text: str
    logprob: float
    top: tuple[tuple[str, float], ...]


def _get(value: Any, name: str) -> Any:
    if isinstance(value, Mapping):
        return value.get(name)
    return getattr(value, name, None)


def reply_tokens(logprobs: Any) -> list[_Token] | None:
    """The tokens of a reply's ``logprobs`` (a mapping or object with ``content``), or
    ``None`` when it holds none."""
    content = _get(logprobs, "content") if logprobs is not None else None
    if not content:
        return None
    tokens = []
    for entry in content:
        text, logprob = _get(entry, "token"), _get(entry, "logprob")
        if not isinstance(text, str) or not isinstance(logprob, int | float):
            return None
        top = tuple(
            (str(_get(alt, "token")), float(_get(alt, "logprob")))
            for alt in (_get(entry, "top_logprobs") or ())
            if isinstance(_get(alt, "token"), str) and isinstance(_get(alt, "logprob"), int | float)
        )
        tokens.append(_Token(text, float(logprob), top))
    return tokens


def _value_starts(text: str, field: str) -> list[int]:
    """Where the field's value starts after each chat marker or JSON key of ``field``."""
    name = re.escape(field)
    found = []
    for pattern in (rf"\[\[ ## {name} ## \]\][ \t]*\r?\n?[ \t\r\n]*", rf"\"{name}\"\s*:\s*\"?"):
        found += [match.end() for match in re.finditer(pattern, text)]
    return found


def _token_at(tokens: Sequence[_Token], position: int) -> _Token | None:
    start = 0
    for token in tokens:
        end = start + len(token.text)
        if start <= position < end:
            return token if not token.text[: position - start].strip(_QUOTES_AND_SPACE) else None
        start = end
    return None


def _reading(token: str, values: Sequence[str]) -> str | None:
    """The allowed value an alternative token reads as, or ``None``."""
    text = token.strip(_QUOTES_AND_SPACE).lower()
    if not text:
        return None
    lowered = [value.lower() for value in values]
    if text in lowered:
        return values[lowered.index(text)]
    begun = [value for value, low in zip(values, lowered, strict=True) if low.startswith(text)]
    return begun[0] if len(begun) == 1 else None


def _alternatives(token: _Token) -> Iterator[tuple[str, float]]:
    yield from token.top
    if all(text != token.text for text, _ in token.top):
        yield token.text, token.logprob


def weigh_verdict(logprobs: Any, values: VerdictValues, verdict: str) -> Weighed:
    """The probabilities of ``values`` at the verdict's first token of a reply.

    Args:
        logprobs: The reply's log-probabilities as the provider returned them (``None`` when
            it returned none).
        values: The verdict field and its allowed values.
        verdict: The parsed verdict, as one of ``values.values``.
    """
    tokens = reply_tokens(logprobs)
    if tokens is None:
        return Weighed(None, "no log-probabilities in the answer")
    text = "".join(token.text for token in tokens)
    starts = _value_starts(text, values.field)
    if len(starts) != 1:
        return Weighed(None, f"the {values.field!r} field is not found exactly once in the answer")
    token = _token_at(tokens, starts[0])
    if token is None:
        return Weighed(None, f"no token starts the {values.field!r} value")
    if _reading(token.text, values.values) != verdict:
        return Weighed(None, "the verdict's first token does not tell the allowed values apart")
    mass = dict.fromkeys(values.values, 0.0)
    for alternative, logprob in _alternatives(token):
        value = _reading(alternative, values.values)
        if value is not None:
            mass[value] += math.exp(logprob)
    total = sum(mass.values())
    if total <= 0.0:
        return Weighed(None, "no alternative reads as an allowed value")
    return Weighed({value: weight / total for value, weight in mass.items()})
