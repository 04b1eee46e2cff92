"""Sentence splitting and the sentence keys a RAGBench judge sees.

A RAGBench/TRACe judge labels *sentences*, so documents and responses are split into
sentences and every sentence gets a short key:

- document ``i`` (0-based) gets keys ``f"{i}{key_letters(j)}"`` for its ``j``-th sentence:
  ``0a``, ``0b``, ..., ``1a``, ...;
- the response gets keys ``key_letters(j)``: ``a``, ``b``, ...

Key letters use **bijective base-26**, the scheme of spreadsheet columns: the indices
0..25 are ``a``..``z``; then two letters follow, ``aa`` (26), ``ab`` (27), ..., ``az`` (51),
``ba`` (52), ..., ``zz`` (701); then three letters, ``aaa`` (702), and so on. There is no
zero digit, so every index has exactly one key and no key is a prefix-padded copy of
another (``a`` and ``aa`` are different sentences). Long documents therefore keep unique
keys past their 26th sentence; a document key is always digits followed by letters, so
``12ab`` is sentence 27 of document 12 and cannot be confused with another key.

Sentence splitting is rule-based and uses only the standard library (see
:func:`split_sentences`). Lengths used for TRACe weighting come from :func:`token_count`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = [
    "KeyedSentence",
    "format_keyed",
    "keyed_inputs",
    "key_documents",
    "key_letters",
    "key_response",
    "normalise_key",
    "split_sentences",
    "token_count",
]

# A run of terminators, optionally followed by closing quotes/brackets, that is followed by
# whitespace or the end of the line. "3.5" and "e.g.," never match: no whitespace follows.
_BOUNDARY = re.compile(r"[.!?]+[\"'\u201d\u2019)\]]*(?=\s|$)")

# Words ending in "." that do not end a sentence, whatever follows (lowercase).
_ABBREVIATIONS = frozenset(
    {
        "al.",
        "approx.",
        "ca.",
        "capt.",
        "cf.",
        "co.",
        "col.",
        "corp.",
        "dept.",
        "dr.",
        "e.g.",
        "eq.",
        "eqs.",
        "est.",
        "fig.",
        "figs.",
        "gen.",
        "gov.",
        "i.e.",
        "inc.",
        "jr.",
        "lt.",
        "ltd.",
        "mr.",
        "mrs.",
        "ms.",
        "mt.",
        "ph.d.",
        "pp.",
        "prof.",
        "ref.",
        "refs.",
        "rev.",
        "sr.",
        "st.",
        "suppl.",
        "univ.",
        "viz.",
        "vol.",
        "vols.",
        "vs.",
        "wt.",
    }
)

# Abbreviations that end a sentence only if the next word starts with an uppercase letter.
_SOMETIMES_FINAL = frozenset({"etc."})

# Abbreviations that do not end a sentence when a number follows ("No. 5", "Sep. 1").
_BEFORE_NUMBER = frozenset(
    {
        "no.",
        "nos.",
        "jan.",
        "feb.",
        "mar.",
        "apr.",
        "jun.",
        "jul.",
        "aug.",
        "sep.",
        "sept.",
        "oct.",
        "nov.",
        "dec.",
    }
)

_OPENERS = "([{\"'\u201c\u2018"
_DOTTED_ACRONYM = re.compile(r"(?:[^\W\d_]\.){2,}")  # u.s., u.k., a.m.
_INITIAL = re.compile(r"[^\W\d_]\.")  # J. (any single letter)
_ENUMERATOR = re.compile(r"\(?\d{1,3}\.")  # "1." opening a numbered line
_ALNUM = re.compile(r"[^\W_]")


def _is_boundary(line: str, start: int, match: re.Match[str]) -> bool:
    """Decide whether the terminator run ``match`` ends the sentence that began at ``start``."""
    if match.group().rstrip("\"'\u201d\u2019)]") != ".":
        return True  # "!", "?", "..." and mixed runs always end a sentence
    word_start = line.rfind(" ", start, match.start()) + 1
    word_start = max(word_start, line.rfind("\t", start, match.start()) + 1, start)
    word = (line[word_start : match.start()] + ".").lstrip(_OPENERS).lower()
    following = line[match.end() :].lstrip()
    next_char = following[:1]
    if word in _ABBREVIATIONS or _DOTTED_ACRONYM.fullmatch(word) or _INITIAL.fullmatch(word):
        return False
    if word in _SOMETIMES_FINAL:
        return not next_char or next_char.isupper()
    if word in _BEFORE_NUMBER and next_char.isdigit():
        return False
    return not _ENUMERATOR.fullmatch(line[start : match.start() + 1].strip())


def _split_line(line: str) -> list[str]:
    """Split one line (no line breaks) into sentences."""
    pieces: list[str] = []
    start = 0
    for match in _BOUNDARY.finditer(line):
        if _is_boundary(line, start, match):
            pieces.append(line[start : match.end()].strip())
            start = match.end()
    pieces.append(line[start:].strip())
    sentences: list[str] = []
    for piece in pieces:
        if not piece:
            continue
        if sentences and not _ALNUM.search(piece):
            sentences[-1] = f"{sentences[-1]} {piece}"  # stray punctuation joins the sentence before
        else:
            sentences.append(piece)
    return sentences


def split_sentences(text: str) -> list[str]:
    """Split text into sentences.

    Rules, in order:

    - A line break always ends a sentence, so a RAGBench ``"Title: ..."`` line is its own
      sentence and the ``"Passage: ..."`` line starts a new one.
    - Within a line, a sentence ends at ``.``, ``!`` or ``?`` (or a run of them, optionally
      followed by closing quotes or brackets) that is followed by whitespace or the end of
      the line. Decimals (``3.5``) and inner dots (``e.g.,``) are therefore never split.
    - A single ``.`` does not end a sentence after a known abbreviation (``e.g.``, ``i.e.``,
      ``et al.``, ``Dr.``, ``Fig.``, ``vs.``, ...), a dotted acronym (``U.S.``), a single-letter
      initial (``J.``), ``No.``/a month (``Sep.``) followed by a number, ``etc.`` followed by a lowercase
      word, or a line-opening enumerator (``1.``).
    - Pieces are stripped of surrounding whitespace; empty pieces are dropped, and a piece
      with no letter or digit (stray punctuation) is joined to the sentence before it.

    Args:
        text: Any text; may be empty.

    Returns:
        The sentences in order, each non-empty; ``[]`` for blank text.

    Examples:
        >>> split_sentences("Dr. Smith et al. measured 3.5 mg. It worked!")
        ['Dr. Smith et al. measured 3.5 mg.', 'It worked!']
        >>> split_sentences("Title: A study\\nPassage: First one. Second one.")
        ['Title: A study', 'Passage: First one.', 'Second one.']
    """
    sentences: list[str] = []
    for line in text.splitlines():
        sentences.extend(_split_line(line))
    return sentences


def key_letters(index: int) -> str:
    """Return the letter key of a 0-based sentence index in bijective base-26.

    ``0 -> 'a'``, ``25 -> 'z'``, ``26 -> 'aa'``, ``51 -> 'az'``, ``52 -> 'ba'``,
    ``701 -> 'zz'``, ``702 -> 'aaa'`` (spreadsheet-column style; see the module docstring).

    Args:
        index: The 0-based position of the sentence.

    Returns:
        The key letters, lowercase.

    Raises:
        ValueError: If ``index`` is negative.

    Examples:
        >>> [key_letters(i) for i in (0, 25, 26, 27, 52)]
        ['a', 'z', 'aa', 'ab', 'ba']
    """
    if index < 0:
        raise ValueError(f"a sentence index must be >= 0, got {index}")
    letters: list[str] = []
    n = index + 1
    while n > 0:
        n, remainder = divmod(n - 1, 26)
        letters.append(chr(ord("a") + remainder))
    return "".join(reversed(letters))


@dataclass(frozen=True)
class KeyedSentence:
    """One sentence and the key the judge uses for it.

    Attributes:
        key: ``"0a"``-style for a document sentence, ``"a"``-style for a response sentence.
        text: The sentence text, stripped.
    """

    key: str
    text: str


def key_documents(documents: Sequence[str]) -> list[KeyedSentence]:
    """Split each document into sentences keyed ``0a, 0b, ..., 1a, ...``.

    Document ``i`` (0-based, in the given order) keys its ``j``-th sentence
    ``f"{i}{key_letters(j)}"``. A document with no sentences contributes no keys, but the
    next document still gets its own index.

    Args:
        documents: The retrieved documents, in order.

    Returns:
        All document sentences, document by document.
    """
    return [
        KeyedSentence(f"{i}{key_letters(j)}", sentence)
        for i, document in enumerate(documents)
        for j, sentence in enumerate(split_sentences(document))
    ]


def key_response(response: str) -> list[KeyedSentence]:
    """Split a response into sentences keyed ``a, b, c, ...`` (see :func:`key_letters`).

    Args:
        response: The response under evaluation.

    Returns:
        The response sentences in order.
    """
    return [KeyedSentence(key_letters(j), sentence) for j, sentence in enumerate(split_sentences(response))]


_KEY_TRIM = " \t\r\n\"'`()[]{}<>.,;:!?"


def keyed_inputs(
    documents: Sequence[str],
    response: str,
    document_sentences: Sequence[Sequence[str]] | None = None,
    response_sentences: Sequence[Sequence[str]] | None = None,
) -> tuple[list[KeyedSentence], list[KeyedSentence]]:
    """The keyed document and response sentences of one item (of a RAGBench judge's inputs).

    Given ``[key, text]`` lists (RAGBench's ``documents_sentences``/``response_sentences``)
    they are used as they are; otherwise the texts are split and keyed.
    """
    if document_sentences is not None and response_sentences is not None:
        docs = [KeyedSentence(str(key), str(text)) for key, text in document_sentences]
        resp = [KeyedSentence(str(key), str(text)) for key, text in response_sentences]
        return docs, resp
    return key_documents(documents), key_response(response)


def normalise_key(key: str) -> str:
    """Return the canonical spelling of a sentence key as written in a label file.

    RAGBench's gold labels occasionally spell a key the way the annotator saw it in the
    prompt, ``"0b."`` (the keyed sentences are rendered as ``"0b. <text>"``, see
    :func:`format_keyed`), or with stray whitespace, quotes, brackets or capitals. The
    canonical key is the input with surrounding whitespace, quotes, brackets and the
    punctuation ``. , ; : ! ?`` removed from both ends, then lowercased:

        ``normalise_key(k) = lower(strip(k, whitespace ∪ quotes ∪ brackets ∪ ".,;:!?"))``

    Inner characters are kept, so ``"0b"`` and ``"0 b"`` stay different keys. The result
    may be empty (``"."``); callers decide whether that is an error.

    Args:
        key: A key as written, e.g. ``" 0B. "``.

    Returns:
        The canonical key, e.g. ``"0b"``.

    Examples:
        >>> [normalise_key(k) for k in ("0b.", " 1C ", "'2a',", "(b)", "12ab")]
        ['0b', '1c', '2a', 'b', '12ab']
    """
    return key.strip(_KEY_TRIM).lower()


def format_keyed(sentences: Iterable[KeyedSentence]) -> str:
    """Render keyed sentences one per line as ``"<key>. <text>"``, as the LLM judge sees them.

    Args:
        sentences: Keyed sentences, e.g. from :func:`key_documents`.

    Returns:
        The lines joined by ``"\\n"``; ``""`` for no sentences.

    Examples:
        >>> format_keyed([KeyedSentence("0a", "Title: X"), KeyedSentence("0b", "It is.")])
        '0a. Title: X\\n0b. It is.'
    """
    return "\n".join(f"{sentence.key}. {sentence.text}" for sentence in sentences)


def token_count(text: str) -> int:
    """Count the tokens of a text: maximal runs of non-whitespace characters.

    Punctuation attached to a word is part of that word's token (``"mg."`` is one token); a
    free-standing mark (the ``"."`` in ``"host ."``) is a token of its own. This is the
    length TRACe metrics use for token weighting: cheap, deterministic and independent of
    any model's tokenizer.

    Args:
        text: Any text.

    Returns:
        The number of whitespace-separated tokens; 0 for blank text.

    Examples:
        >>> token_count("It is 3.5 mg.")
        4
    """
    return len(text.split())
