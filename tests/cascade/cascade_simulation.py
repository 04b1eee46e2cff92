"""Simulated judges for the cascade tests: loopback servers whose every answer is known.

Each claim says in its text whether it is true (``GOLD=true``), whether it is easy or hard
(``KIND=hard``), and, for some, which rule of the task's offline baseline fires
(``RULE=yes`` / ``RULE=no``). The *small* judge is right with confidence 0.95 on easy claims
and wrong with confidence 0.5 on hard ones; the *large* judge is always right with confidence
0.99. Both are served under priced model names, so LiteLLM's offline price map gives each
call a real cost, which the tests recompute from the token counts the server reported.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path
from typing import Any

from jurist.testing import OpenAICompatibleServer
from support import prompt_sections, write_jsonl

SMALL_MODEL = "openai/gpt-4o-mini"
LARGE_MODEL = "openai/gpt-4o"

TASK = """\
name: claim-checker
instructions: Say whether the claim is true, and how likely it is to be true.
inputs: [claim]
output:
  kind: bool
  reasoning: false
  confidence: true
gold: gold
baseline:
  rules:
    - {pattern: "RULE=yes", value: true, confidence: 0.99}
    - {pattern: "RULE=no", value: false, confidence: 0.01}
  default: false
"""

LABEL_TASK = """\
name: topic-labeller
instructions: Give the claim's topic.
inputs: [claim]
output:
  kind: label
  labels: [science, history]
gold: topic
"""

_GOLD = re.compile(r"GOLD=(\w+)")


def write_task(folder: Path, text: str = TASK, name: str = "claims") -> Path:
    path = folder / f"{name}.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def claim_rows(
    count: int, *, rules: bool = False, garbled: frozenset[int] = frozenset()
) -> list[dict[str, Any]]:
    """Claims: every fourth is hard, two in three are true; with ``rules``, every fifth says
    ``RULE=yes`` and every fifth after it ``RULE=no`` (matching its gold); the ``garbled`` ones
    get an unparseable reply from the small judge."""
    rows = []
    for i in range(count):
        gold = bool(i % 3)
        text = f"Claim number {i}. GOLD={'true' if gold else 'false'} KIND={'hard' if i % 4 == 0 else 'easy'}"
        if rules and i % 5 in (0, 1):
            text += " RULE=yes" if gold else " RULE=no"
        if i in garbled:
            text += " GARBLE"
        rows.append({"id": f"c{i}", "claim": text, "gold": gold, "topic": "science"})
    return rows


def write_claims(
    folder: Path, count: int, *, rules: bool = False, garbled: frozenset[int] = frozenset()
) -> Path:
    return write_jsonl(folder / "claims.jsonl", claim_rows(count, rules=rules, garbled=garbled))


def is_hard(text: str) -> bool:
    return "KIND=hard" in text


def rule_fires(text: str) -> bool:
    return "RULE=" in text


def answer(verdict: bool, confidence_true: float) -> str:
    """A ChatAdapter reply: the verdict and the probability that it is true."""
    return (
        f"[[ ## verdict ## ]]\n{'true' if verdict else 'false'}\n\n"
        f"[[ ## confidence ## ]]\n{confidence_true}\n\n[[ ## completed ## ]]"
    )


def gold_of(text: str) -> bool:
    return _GOLD.search(text).group(1) == "true"  # type: ignore[union-attr]


def small_says(text: str) -> tuple[bool, float]:
    """The small judge's verdict and its confidence in it."""
    gold = gold_of(text)
    return (not gold, 0.5) if is_hard(text) else (gold, 0.95)


def small(body: dict[str, Any]) -> str:
    text = prompt_sections(body)["claim"]
    if "GARBLE" in text:
        return "I would rather not say."
    verdict, sure = small_says(text)
    return answer(verdict, sure if verdict else round(1 - sure, 2))


def large(body: dict[str, Any]) -> str:
    gold = gold_of(prompt_sections(body)["claim"])
    return answer(gold, 0.99 if gold else 0.01)


def start(responder: Any) -> OpenAICompatibleServer:
    return OpenAICompatibleServer(responder).start()


def judge_line(name: str, model: str, server: OpenAICompatibleServer, cache: Path, **extra: Any) -> str:
    """One inline stage (or juror) with a judge config for a loopback server and the test key."""
    fields = {
        "name": name,
        "model": model,
        "api_base": server.base_url,
        "api_key_env": "JURIST_TEST_API_KEY",
        "cache_dir": str(cache),
        "concurrency": 8,
        "retry_max_wait": 0.2,
        "timeout": 5,
        **extra,
    }
    inner = ", ".join(
        f'{key}: "{value}"' if isinstance(value, str) else f"{key}: {value}" for key, value in fields.items()
    )
    return "    - {" + inner + "}"


def write_cascade(path: Path, lines: list[str], target: float | None = None) -> Path:
    text = "cascade:\n  stages:\n" + "\n".join(lines) + "\n"
    if target is not None:
        text += f"  target_agreement: {target}\n"
    path.write_text(text, encoding="utf-8")
    return path


def call_costs(server: OpenAICompatibleServer, model: str) -> dict[str, float]:
    """Claim text -> the cost of the server's answer to it, from the token counts the server
    reported (a quarter of the characters sent and returned) and LiteLLM's offline prices."""
    import litellm

    price = litellm.model_cost[model.removeprefix("openai/")]
    costs: dict[str, float] = {}
    for body in server.bodies:
        sent = sum(len(str(m.get("content", ""))) for m in body.get("messages", []))
        reply = server.responder(body)
        prompt_tokens, completion_tokens = max(1, sent // 4), max(1, len(reply) // 4)
        text = prompt_sections(body)["claim"]
        costs[text] = costs.get(text, 0.0) + (
            prompt_tokens * price["input_cost_per_token"] + completion_tokens * price["output_cost_per_token"]
        )
    return costs
