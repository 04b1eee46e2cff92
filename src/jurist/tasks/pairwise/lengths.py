"""How the pairwise task measures a response's length: SubEval's ``cl100k_base`` tokens, else words.

No download is ever attempted: the tokenizer is used only when tiktoken and its
vocabulary file are already on this machine (tiktoken's cache, or the copy bundled with
LiteLLM, found without importing LiteLLM).
"""

from __future__ import annotations

from collections.abc import Callable

from jurist.judges.tokens import offline_encoding

__all__ = ["token_counter", "word_count"]


def word_count(text: str) -> int:
    """Whitespace-separated words of ``text``."""
    return len(text.split())


def token_counter() -> tuple[Callable[[str], int], str]:
    """How response lengths are measured, and the unit's name.

    SubEval counts ``cl100k_base`` tokens (tiktoken). That encoding is used when tiktoken
    and its vocabulary file are on this machine (tiktoken's cache, or the copy bundled
    with LiteLLM) — no download is attempted. Otherwise lengths are whitespace-separated
    words, and the unit says so.
    """
    count = offline_encoding("cl100k_base")
    if count is not None:
        return count, "cl100k_base tokens"
    return word_count, "words"
