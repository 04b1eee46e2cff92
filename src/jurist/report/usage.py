"""Tokens and cost of a judged run, per judge, as ``jurist judge`` prints them.

Read from a run's summary (``summary.json``): its ``usage`` (the whole run), and for a
panel each member's (``jury.members[].usage`` / ``repeats.members[].usage``), for a
cascade each stage's (``cascade.stages[].usage``). A cost is ``unknown`` when tokens were
billed by a model without a price; answers served from the cache cost nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["usage_lines", "usage_text"]


def usage_text(usage: Mapping[str, Any]) -> str:
    """``1,234 prompt + 567 completion tokens, $0.0012`` for one usage mapping."""
    prompt = int(usage.get("prompt_tokens") or 0)
    completion = int(usage.get("completion_tokens") or 0)
    cost = usage.get("cost")
    if cost is None:
        money = "cost unknown (no price for the model)" if prompt or completion else "$0"
    else:
        money = f"${float(cost):,.4f}"
    return f"{prompt:,} prompt + {completion:,} completion tokens, {money}"


def _parts(summary: Mapping[str, Any]) -> tuple[str, list[Mapping[str, Any]]]:
    for key, word in (("jury", "juror"), ("repeats", "repeat")):
        section = summary.get(key)
        if isinstance(section, Mapping) and isinstance(section.get("members"), list):
            return word, list(section["members"])
    section = summary.get("cascade")
    if isinstance(section, Mapping) and isinstance(section.get("stages"), list):
        return "stage", list(section["stages"])
    return "", []


def usage_lines(summary: Any, now: Any = None) -> list[str]:
    """The run's tokens and cost, then each juror's, repeat's or stage's (one line each); none
    for a run that asked no model (the offline baseline).

    ``now`` is what this ``judge`` call did (the runner's summary, with its ``usage`` and
    ``skipped``): when it found items judged before, the line says what this call spent
    first, then the whole run's figures, so a finished run judged again reads ``usage now: 0
    prompt + 0 completion tokens, $0``."""
    if not isinstance(summary, Mapping) or not isinstance(summary.get("usage"), Mapping):
        return []
    total: Mapping[str, Any] = summary["usage"]
    word, parts = _parts(summary)
    if not parts and not total.get("calls") and not total.get("cache_hits"):
        return []  # no model was asked (the offline baseline): nothing was spent
    whole = (
        f"{usage_text(total)} ({int(total.get('calls') or 0)} provider calls, "
        f"{int(total.get('cache_hits') or 0)} cache hits)"
    )
    if now is not None and bool(getattr(now, "skipped", None)):
        spent = now.usage.model_dump()
        lines = [f"usage now: {usage_text(spent)}; the whole run: {whole}"]
    else:
        lines = [f"usage: {whole}"]
    for part in parts:
        usage = part.get("usage")
        if isinstance(usage, Mapping):
            lines.append(f"  {word} {part.get('name')} ({part.get('model')}): {usage_text(usage)}")
    return lines
