"""How the pairwise task measures a response's length: SubEval's ``cl100k_base`` tokens, else words.

No download is ever attempted: the tokenizer is used only when tiktoken and its
vocabulary file are already on this machine (tiktoken's cache, or the copy bundled with
LiteLLM, found without importing LiteLLM).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import tempfile
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

__all__ = ["token_counter", "word_count"]

_CL100K_FILE = "9b5ad71b2ce5302211f9c61530b329a4922fc6a4"  # sha1 of the cl100k_base URL: tiktoken's cache key
_CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
_CL100K_PATTERN = "|".join(  # tiktoken's cl100k_base split pattern
    [
        r"""'(?i:[sdmt]|ll|ve|re)""",
        r"""[^\r\n\p{L}\p{N}]?+\p{L}++""",
        r"""\p{N}{1,3}+""",
        r""" ?[^\s\p{L}\p{N}]++[\r\n]*+""",
        r"""\s++$""",
        r"""\s*[\r\n]""",
        r"""\s+(?!\S)""",
        r"""\s""",
    ]
)


def _cache_dirs() -> list[Path]:
    dirs = [os.environ.get("TIKTOKEN_CACHE_DIR"), os.environ.get("DATA_GYM_CACHE_DIR")]
    found = [Path(d) for d in dirs if d]
    found.append(Path(tempfile.gettempdir()) / "data-gym-cache")
    spec = importlib.util.find_spec("litellm")  # locates the package without importing it
    if spec is not None and spec.submodule_search_locations:
        for location in spec.submodule_search_locations:
            found.append(Path(location) / "litellm_core_utils" / "tokenizers")
    return found


@lru_cache(maxsize=1)
def _cl100k() -> Callable[[str], int] | None:
    try:
        import tiktoken
        from tiktoken.load import load_tiktoken_bpe
    except ImportError:
        return None
    for folder in _cache_dirs():
        file = folder / _CL100K_FILE
        if not file.is_file():
            continue
        data = file.read_bytes()
        if hashlib.sha256(data).hexdigest() != _CL100K_SHA256:
            continue
        encoding = tiktoken.Encoding(
            name="cl100k_base",
            pat_str=_CL100K_PATTERN,
            mergeable_ranks=load_tiktoken_bpe(str(file), expected_hash=_CL100K_SHA256),
            special_tokens={
                "<|endoftext|>": 100257,
                "<|fim_prefix|>": 100258,
                "<|fim_middle|>": 100259,
                "<|fim_suffix|>": 100260,
                "<|endofprompt|>": 100276,
            },
        )
        return lambda text: len(encoding.encode(text, disallowed_special=()))
    return None


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
    count = _cl100k()
    if count is not None:
        return count, "cl100k_base tokens"
    return word_count, "words"
