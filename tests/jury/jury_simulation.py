"""Simulated jurors for the jury tests: loopback servers that answer a YAML task's items.

A *juror* server is right with probability ``p`` on each item, independently of the other
jurors: it decides from a random number seeded by its own seed and the item's text, so the
test computes every answer it will give (:func:`juror_says`). A *noisy* server is right with
probability ``p`` on each request, drawing from one seeded generator, and logs every answer it
gave per item (:attr:`NoisyJudge.given`), so repeats are checked against what it said.
"""

from __future__ import annotations

import random
import re
import textwrap
import threading
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from support import CLAIMS_TASK, prompt_sections, write_jsonl

BOOL_TASK = CLAIMS_TASK

SCORE_TASK = """\
name: answer-grader
instructions: Grade the answer from 1 to 5.
inputs: [answer]
output:
  kind: score
  range: [1, 5]
  reasoning: false
gold: grade
"""

PAIR_TASK = """\
name: pair-picker
instructions: Pick the better response.
inputs: [question, response_a, response_b]
output:
  kind: pairwise
gold: label
"""

_GOLD = re.compile(r"GOLD=(\w+)")


def task_file(folder: Path, text: str, name: str) -> Path:
    path = folder / f"{name}.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def claim_rows(count: int) -> list[dict[str, Any]]:
    """Claims whose gold is in their text (``GOLD=true``); about two in three are true."""
    return [
        {
            "id": f"c{i}",
            "claim": f"Claim number {i}. GOLD={'true' if i % 3 else 'false'}",
            "gold": bool(i % 3),
        }
        for i in range(count)
    ]


def write_claims(folder: Path, count: int) -> Path:
    return write_jsonl(folder / "claims.jsonl", claim_rows(count))


def answer(fields: dict[str, str]) -> str:
    """A ChatAdapter reply with ``fields``."""
    return "\n\n".join(f"[[ ## {k} ## ]]\n{v}" for k, v in fields.items()) + "\n\n[[ ## completed ## ]]"


def juror_says(seed: str, p: float, text: str) -> bool:
    """What a juror with accuracy ``p`` answers on a claim (its gold is in the text)."""
    gold = _GOLD.search(text).group(1) == "true"  # type: ignore[union-attr]
    return gold if random.Random(f"{seed}|{text}").random() < p else not gold


class Juror:
    """A simulated juror's replies: right with probability ``p`` per item; ``garbage`` item
    texts (a substring) get an unparseable reply."""

    def __init__(self, seed: str, p: float) -> None:
        self.seed = seed
        self.p = p
        self.garbage: set[str] = set()

    def __call__(self, body: dict[str, Any]) -> str:
        text = prompt_sections(body).get("claim", "")
        if any(marker in text for marker in self.garbage):
            return "I would rather not say."
        return answer({"verdict": "true" if juror_says(self.seed, self.p, text) else "false"})


class NoisyJudge:
    """A judge that is right with probability ``p`` on each request, logging what it said."""

    def __init__(self, p: float, seed: int = 7) -> None:
        self.p = p
        self.random = random.Random(seed)
        self.lock = threading.Lock()
        self.given: dict[str, list[bool]] = defaultdict(list)

    def __call__(self, body: dict[str, Any]) -> str:
        text = prompt_sections(body).get("claim", "")
        gold = _GOLD.search(text).group(1) == "true"  # type: ignore[union-attr]
        with self.lock:
            said = gold if self.random.random() < self.p else not gold
            self.given[text].append(said)
        return answer({"verdict": "true" if said else "false"})


def grader_says(seed: str, text: str) -> int:
    """The score (1 to 5) a simulated grader gives an answer."""
    return random.Random(f"{seed}|{text}").randint(1, 5)


class Grader:
    def __init__(self, seed: str) -> None:
        self.seed = seed

    def __call__(self, body: dict[str, Any]) -> str:
        return answer({"verdict": str(grader_says(self.seed, prompt_sections(body).get("answer", "")))})


def juror_line(name: str, base_url: str, cache: Path, **extra: Any) -> str:
    """One inline juror of a jury file, for a loopback server with the test key."""
    fields = {
        "name": name,
        "model": f"openai/{name}",
        "api_base": base_url,
        "api_key_env": "JURIST_TEST_API_KEY",
        "cache_dir": str(cache),
        "concurrency": 8,
        "retry_max_wait": 0.2,
        "timeout": 5,
        **extra,
    }
    inner = ", ".join(
        f"{key}: {value!r}" if isinstance(value, str) else f"{key}: {value}" for key, value in fields.items()
    )
    return "    - {" + inner.replace("'", '"') + "}"


def write_jury(path: Path, lines: Sequence[str], aggregate: str = "majority") -> Path:
    path.write_text(
        f"jury:\n  aggregate: {aggregate}\n  jurors:\n" + "\n".join(lines) + "\n", encoding="utf-8"
    )
    return path


def fleiss_kappa(votes: Sequence[Sequence[Any]]) -> float:
    """Fleiss' κ of complete votes (every item the same number of raters), by the textbook formula."""
    raters = len(votes[0])
    categories = sorted({vote for row in votes for vote in row}, key=str)
    counts = [Counter(row) for row in votes]
    p_bar = sum(
        (sum(c[k] ** 2 for k in categories) - raters) / (raters * (raters - 1)) for c in counts
    ) / len(votes)
    p_e = sum((sum(c[k] for c in counts) / (len(votes) * raters)) ** 2 for k in categories)
    return (p_bar - p_e) / (1 - p_e)


def pairwise_agreement(votes: Sequence[Sequence[Any]]) -> float:
    """The share of agreeing pairs of raters over all items' pairs (every item fully rated)."""
    agreeing = total = 0
    for row in votes:
        for i in range(len(row)):
            for j in range(i + 1, len(row)):
                agreeing += row[i] == row[j]
                total += 1
    return agreeing / total
