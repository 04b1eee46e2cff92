"""Counting a chat request's tokens the way OpenAI-style providers bill them, offline.

The count uses tiktoken with the encoding of the model (``o200k_base`` for the GPT-4o,
4.1, 5 and o-series families, ``cl100k_base`` for GPT-4 and 3.5; tiktoken's own table),
and OpenAI's chat framing: 3 tokens per message, plus the role's and the content's tokens,
plus 3 that prime the reply. A model tiktoken does not know (Claude, Llama, Qwen, ...) is
counted with ``cl100k_base`` and the count says it is approximate: those providers use
their own tokenizers.

No download is ever attempted: an encoding is used only when its vocabulary file is
already on this machine (tiktoken's cache, or the copy bundled with LiteLLM, found without
importing LiteLLM). Without one, a count falls back to characters / 4 and says so.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import tempfile
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

__all__ = ["Tokenizer", "offline_encoding", "tokenizer_for"]

_PER_MESSAGE = 3
"""Tokens OpenAI's chat format adds around each message."""
_REPLY_PRIMING = 3
"""Tokens OpenAI's chat format adds to prime the assistant's reply."""
_URL = "https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"
_environment_lock = threading.Lock()


@dataclass(frozen=True)
class Tokenizer:
    """How a model's tokens are counted here.

    Attributes:
        name: The encoding (``o200k_base``, ``cl100k_base``) or ``chars/4``.
        exact: Whether it is the model's own encoding (else an approximation).
        encode: Counts the tokens of a text.
    """

    name: str
    exact: bool
    encode: Callable[[str], int]

    def count_messages(self, messages: Iterable[dict[str, Any]]) -> int:
        """The prompt tokens of a chat request's messages, with OpenAI's framing."""
        total = _REPLY_PRIMING
        for message in messages:
            total += _PER_MESSAGE + self.encode(str(message.get("role") or ""))
            total += self.encode(_content_text(message.get("content")))
            if message.get("name"):
                total += 1 + self.encode(str(message["name"]))
        return total


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") if isinstance(part, dict) else str(part) for part in content)
    return "" if content is None else str(content)


def _cache_dirs() -> list[Path]:
    dirs = [os.environ.get("TIKTOKEN_CACHE_DIR"), os.environ.get("DATA_GYM_CACHE_DIR")]
    found = [Path(d) for d in dirs if d]
    found.append(Path(tempfile.gettempdir()) / "data-gym-cache")
    spec = importlib.util.find_spec("litellm")  # locates the package without importing it
    if spec is not None and spec.submodule_search_locations:
        for location in spec.submodule_search_locations:
            found.append(Path(location) / "litellm_core_utils" / "tokenizers")
    return found


@lru_cache(maxsize=8)
def offline_encoding(name: str) -> Callable[[str], int] | None:
    """A token counter of tiktoken's encoding ``name`` (``cl100k_base``, ``o200k_base``) read
    from a vocabulary file already on disk (tiktoken's cache, or LiteLLM's bundled copy), or
    ``None`` when tiktoken or the file is missing; nothing is downloaded."""
    try:
        import tiktoken
    except ImportError:
        return None
    cache_key = hashlib.sha1(_URL.format(name=name).encode()).hexdigest()
    for folder in _cache_dirs():
        if not (folder / cache_key).is_file():
            continue
        # tiktoken reads its cache directory from the environment; point it at the folder
        # that holds the file for this one load, so nothing is fetched.
        with _environment_lock:
            saved = os.environ.get("TIKTOKEN_CACHE_DIR")
            os.environ["TIKTOKEN_CACHE_DIR"] = str(folder)
            try:
                encoding = tiktoken.get_encoding(name)
            except Exception:
                continue
            finally:
                if saved is None:
                    os.environ.pop("TIKTOKEN_CACHE_DIR", None)
                else:
                    os.environ["TIKTOKEN_CACHE_DIR"] = saved
        return lambda text: len(encoding.encode(text, disallowed_special=()))
    return None


def _encoding_name(model: str) -> tuple[str, bool]:
    """The tiktoken encoding of ``model`` (a LiteLLM model string) and whether it is its own."""
    name = model.rsplit("/", 1)[-1]
    try:
        from tiktoken.model import encoding_name_for_model

        return encoding_name_for_model(name), True
    except (ImportError, KeyError):
        return "cl100k_base", False


def tokenizer_for(model: str) -> Tokenizer:
    """How to count the tokens of ``model``'s requests and answers (see the module docstring)."""
    name, exact = _encoding_name(model)
    encode = offline_encoding(name)
    if encode is None:
        return Tokenizer(name="chars/4", exact=False, encode=lambda text: len(text) // 4)
    return Tokenizer(name=name, exact=exact, encode=encode)
