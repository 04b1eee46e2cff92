"""Simulated pairwise jurors: loopback servers that answer a known choice per pair and order.

A pair's responses carry its id and their number (``P7 response 1 ...``), so a juror server
knows which pair it is asked and in which order. A juror prefers, per pair and order, response
1 or 2 (in the original numbering) from a seeded random number, and answers the letter of the
slot that response is shown in; a *position-biased* juror always answers ``A`` (its verdict
after the swap rule is a tie on every pair). :func:`prefers` gives every answer, so the tests
compute each juror's verdict, the jury's and its accuracy from the simulated answers alone.
"""

from __future__ import annotations

import random
import re
import threading
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from jury_simulation import answer

from support import prompt_sections, write_jsonl

_PAIR = re.compile(r"P(\d+) response ([12])")


def pair_rows(count: int) -> list[dict[str, Any]]:
    """Pairs with gold labels ``1``, ``2`` and (every fifth) ``tie``."""
    labels = ["1", "2", "1", "2", "tie"]
    return [
        {
            "id": f"p{i}",
            "question": f"Question {i}: which answer is better?",
            "response_1": f"P{i} response 1: an answer.",
            "response_2": f"P{i} response 2: another answer.",
            "label": labels[i % len(labels)],
        }
        for i in range(count)
    ]


def write_pairs(folder: Path, count: int) -> Path:
    return write_jsonl(folder / "pairs.jsonl", pair_rows(count))


def gold_of(pair: int) -> str:
    return pair_rows(pair + 1)[pair]["label"]


def prefers(seed: str, p: float, pair: int, order: str) -> str:
    """The response (``1`` or ``2``) a juror of accuracy ``p`` prefers on ``pair`` asked in ``order``.

    With probability ``p`` (drawn per pair) it prefers the gold response in both orders (a tie's
    gold: response 1); otherwise it prefers, per order, a response drawn at random.
    """
    gold = gold_of(pair)
    draw = random.Random(f"{seed}|{pair}")
    if draw.random() < p:
        return gold if gold != "tie" else "1"
    return random.Random(f"{seed}|{pair}|{order}").choice("12")


def says(seed: str, p: float, pair: int, order: str) -> str:
    """The letter a juror answers: the slot its preferred response is shown in; ``first``
    (``p`` below 0) always answers ``A``."""
    if p < 0:
        return "A"
    preferred = prefers(seed, p, pair, order)
    first = "1" if order == "12" else "2"
    return "A" if preferred == first else "B"


def verdict(first: str, second: str) -> str:
    """The swap rule, written out for the test: the choices of orders 12 and 21 -> 1, 2 or tie."""
    if (first, second) == ("A", "B"):
        return "1"
    if (first, second) == ("B", "A"):
        return "2"
    return "tie"


def juror_verdict(seed: str, p: float, pair: int) -> str:
    return verdict(says(seed, p, pair, "12"), says(seed, p, pair, "21"))


def majority(votes: Sequence[str]) -> str:
    """More than half of the votes, else ``tie``."""
    for value in dict.fromkeys(votes):
        if votes.count(value) * 2 > len(votes):
            return value
    return "tie"


class PairJuror:
    """A juror server's replies (``p`` below 0: always ``A``). With ``flips``, the k-th ask of
    an ordered comparison answers as juror ``flips[k]`` would (for repeats), and the replies
    are logged per pair and order."""

    def __init__(self, seed: str, p: float, flips: Sequence[tuple[str, float]] | None = None) -> None:
        self.seed = seed
        self.p = p
        self.flips = list(flips or [])
        self.lock = threading.Lock()
        self.asked: dict[tuple[int, str], int] = defaultdict(int)

    def __call__(self, body: dict[str, Any]) -> str:
        sections = prompt_sections(body)
        found = _PAIR.search(sections.get("response_1", ""))
        assert found is not None
        pair, order = int(found.group(1)), "12" if found.group(2) == "1" else "21"
        seed, p = self.seed, self.p
        if self.flips:
            with self.lock:
                seed, p = self.flips[self.asked[(pair, order)] % len(self.flips)]
                self.asked[(pair, order)] += 1
        return answer({"choice": says(seed, p, pair, order), "reason": "1. simulated"})
