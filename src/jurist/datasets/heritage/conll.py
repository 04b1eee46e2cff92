"""Token-tag files (CoNLL columns, BIO / IOB1 / IOB2 / IOBES / BILOU) and their decoding into spans.

A token-tag file has one token per line: the token in the first column, its tag in the
last (columns separated by tabs or spaces; the columns between, e.g. CoNLL-2003's POS and
chunk tags, are ignored). A blank line ends a sentence; ``-DOCSTART-`` lines start a new
document and are skipped::

    -DOCSTART- -X- -X- O

    Het O
    Rijksmuseum B-GRP.HER.MUS
    Amsterdam I-GRP.HER.MUS

A tag is ``O`` or ``P-TYPE`` with a prefix ``P`` among ``B I E S L U`` (the type may itself
contain ``-``: everything after the first ``-``).

Tags become entities the way seqeval decodes them, with the same two choices:

- ``lenient`` (seqeval's default, ``get_entities``, conlleval's rules): every tag sequence
  gives entities; an ``I-`` after ``O`` or after another type starts an entity, a change of
  type ends one. Any scheme is read this way (IOB1, IOB2, IOBES; BILOU's ``L-``/``U-`` are
  read as ``E-``/``S-``, which seqeval's lenient decoder does not know).
- ``strict`` (seqeval's ``mode="strict"`` with a ``scheme``, its ``Entities`` class): only
  chunks that are well formed in the scheme are entities; e.g. in IOB2 an ``I-`` without a
  ``B-`` before it is no entity, in IOBES a ``B-`` not closed by ``E-`` is none. The scheme
  is given (``IOB1``, ``IOB2``, ``IOBES``, ``BILOU``) or detected from the prefixes in the
  file after seqeval's ``auto_detect`` (IOB2, IOBES or BILOU; IOB1 is never detected).

Entity spans are ``(start, end, type)`` over token positions, ``end`` exclusive. For the
heritage gold, a sentence becomes one text: its tokens joined by single spaces, with the
spans mapped to character offsets (:func:`token_tag_records`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from jurist.errors import InputError

__all__ = [
    "TAG_FILE_SUFFIXES",
    "TagDecoding",
    "TagMode",
    "TagScheme",
    "TaggedSentence",
    "decode_lenient",
    "decode_strict",
    "decode_tags",
    "detect_scheme",
    "is_token_tag_file",
    "read_token_tags",
    "sentence_text",
    "token_tag_records",
]

TagMode = Literal["lenient", "strict"]
TagScheme = Literal["IOB1", "IOB2", "IOBES", "BILOU"]
TokenSpan = tuple[int, int, str]

TAG_FILE_SUFFIXES = (".conll", ".bio", ".iob", ".iob1", ".iob2", ".iobes", ".bilou")
"""File name endings read as token-tag files (case-insensitive)."""

_PREFIXES = frozenset("BIESLUO")
_SCHEME_PREFIXES: dict[str, frozenset[str]] = {
    "IOB1": frozenset("IOB"),
    "IOB2": frozenset("IOB"),
    "IOBES": frozenset("IOBES"),
    "BILOU": frozenset("BILOU"),
}


@dataclass(frozen=True)
class TagDecoding:
    """How tags become entities: ``lenient`` or ``strict`` (with a scheme, or detected)."""

    mode: TagMode = "lenient"
    scheme: TagScheme | None = None

    def __post_init__(self) -> None:
        if self.mode not in get_args(TagMode):
            raise ValueError(f"tag mode must be 'lenient' or 'strict', got {self.mode!r}")
        if self.scheme is not None and self.scheme not in get_args(TagScheme):
            raise ValueError(
                f"tag scheme must be one of {', '.join(get_args(TagScheme))}, got {self.scheme!r}"
            )

    def describe(self) -> dict[str, Any]:
        """``{"mode", "scheme"}`` for a run manifest."""
        return {"mode": self.mode, "scheme": self.scheme}


@dataclass(frozen=True)
class TaggedSentence:
    """One sentence of a token-tag file: tokens, tags, and the file line of each token."""

    tokens: tuple[str, ...]
    tags: tuple[str, ...]
    lines: tuple[int, ...]
    document: int

    @property
    def line(self) -> int:
        """The line of the sentence's first token."""
        return self.lines[0]


def is_token_tag_file(path: str | Path) -> bool:
    """True when the file name ends in one of :data:`TAG_FILE_SUFFIXES`."""
    return str(path).lower().endswith(TAG_FILE_SUFFIXES)


def _split_tag(tag: str) -> tuple[str, str]:
    """``(prefix, type)`` of a tag; ``("O", "")`` for ``O``."""
    if tag == "O":
        return "O", ""
    return tag[0], tag[2:] if len(tag) > 2 and tag[1] == "-" else ""


def read_token_tags(path: str | Path) -> list[TaggedSentence]:
    """The sentences of a token-tag file (see the module docstring), checked line by line.

    Raises:
        InputError: A line has fewer than two columns, or a tag is not ``O`` or
            ``P-TYPE`` with ``P`` in ``B I E S L U`` (names the file, line and field ``tag``).
    """
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text ({exc.reason})", path=file) from None
    sentences: list[TaggedSentence] = []
    tokens: list[str] = []
    tags: list[str] = []
    lines: list[int] = []
    document = 0

    def close() -> None:
        if tokens:
            sentences.append(TaggedSentence(tuple(tokens), tuple(tags), tuple(lines), document))
            tokens.clear()
            tags.clear()
            lines.clear()

    for number, raw in enumerate(text.splitlines(), start=1):
        columns = raw.split()
        if not columns:
            close()
            continue
        if columns[0] == "-DOCSTART-":
            close()
            document += 1
            continue
        if len(columns) < 2:
            raise InputError(
                f"expected a token and a tag separated by whitespace, got {raw.strip()!r}",
                path=file,
                line=number,
                field="tag",
            )
        tag = columns[-1]
        prefix, label = _split_tag(tag)
        if prefix not in _PREFIXES or (prefix != "O" and not label):
            raise InputError(
                f"tag {tag!r} is not O or PREFIX-TYPE with a prefix among B, I, E, S, L, U",
                path=file,
                line=number,
                field="tag",
            )
        tokens.append(columns[0])
        tags.append(tag)
        lines.append(number)
    close()
    return sentences


def decode_lenient(tags: Sequence[str]) -> list[TokenSpan]:
    """Entities of a tag sequence by seqeval's default (lenient) rules, ``end`` exclusive.

    Going left to right with the previous prefix ``p`` and type ``t'`` (``O`` before the
    first tag) and the current prefix ``c`` and type ``t``: the open entity *ends before*
    the current tag when ``p ∈ {E, S}``, or ``p ∈ {B, I}`` and ``c ∈ {B, S, O}``, or
    ``p ≠ O`` and ``t ≠ t'``; an entity *starts at* the current tag when ``c ∈ {B, S}``, or
    ``p ∈ {E, S, O}`` and ``c ∈ {I, E}``, or ``c ≠ O`` and ``t ≠ t'``. ``L``/``U`` are read as
    ``E``/``S``.

    >>> decode_lenient(["I-ORG", "I-ORG", "O", "B-LOC", "I-PER"])
    [(0, 2, 'ORG'), (3, 4, 'LOC'), (4, 5, 'PER')]
    """
    spans: list[TokenSpan] = []
    prev_prefix, prev_type = "O", ""
    begin = 0
    for index, tag in enumerate([*tags, "O"]):
        prefix, label = _split_tag(tag)
        prefix = {"L": "E", "U": "S"}.get(prefix, prefix)
        type_changed = label != prev_type
        ends = (
            prev_prefix in "ES"
            or (prev_prefix in "BI" and prefix in "BSO")
            or (prev_prefix != "O" and type_changed)
        )
        if ends:
            spans.append((begin, index, prev_type))
        starts = (
            prefix in "BS" or (prev_prefix in "ESO" and prefix in "IE") or (prefix != "O" and type_changed)
        )
        if starts:
            begin = index
        prev_prefix, prev_type = prefix, label
    return spans


# A transition rule: (previous prefixes, current prefixes, type condition) where the type
# condition is "=" (same type), "!" (another type) or "*" (either). These are the
# well-formedness rules of each scheme as seqeval's strict mode states them.
_Rule = tuple[str, str, str]
_ANY = "BIESLUO"
_STRICT_RULES: dict[str, dict[str, tuple[_Rule, ...]]] = {
    "IOB1": {
        "start": (("O", "I", "*"), ("I", "I", "!"), ("B", "I", "*"), ("IB", "B", "=")),
        "inside": (("BI", "I", "="),),
        "end": (("I", "I", "!"), ("IB", "O", "*"), ("I", "B", "*"), ("B", "I", "!"), ("B", "B", "=")),
    },
    "IOB2": {
        "start": ((_ANY, "B", "*"),),
        "inside": (("BI", "I", "="),),
        "end": (("IB", "O", "*"), ("IB", "I", "!"), ("IB", "B", "*")),
    },
    "IOBES": {
        "start": ((_ANY, "BS", "*"),),
        "inside": (("BI", "IE", "="),),
        "end": (("SE", _ANY, "*"),),
    },
    "BILOU": {
        "start": ((_ANY, "BU", "*"),),
        "inside": (("BI", "IL", "="),),
        "end": (("UL", _ANY, "*"),),
    },
}


def _matches(rules: Iterable[_Rule], prev: tuple[str, str], cur: tuple[str, str]) -> bool:
    for prev_prefixes, cur_prefixes, condition in rules:
        if prev[0] in prev_prefixes and cur[0] in cur_prefixes:
            same = prev[1] == cur[1]
            if condition == "*" or (condition == "=") == same:
                return True
    return False


def decode_strict(tags: Sequence[str], scheme: TagScheme) -> list[TokenSpan]:
    """Entities of a tag sequence by seqeval's strict mode for ``scheme``, ``end`` exclusive.

    Left to right, a tag that may *start* a chunk after the previous tag opens one; it
    extends over the following tags that may be *inside* it (same type, continuing
    prefixes); it is an entity only if the tag after its last one may *end* it (the
    sequence is closed by an ``O``). Otherwise its tags are no entity and reading goes on
    after them. The start/inside/end rules per scheme are those of seqeval's ``IOB1``,
    ``IOB2``, ``IOBES`` and ``BILOU`` classes; e.g. IOB2 starts only at ``B-``, IOBES keeps a
    chunk only if it closes with ``E-`` (or is one ``S-``).

    Raises:
        ValueError: A tag's prefix is not allowed in the scheme (e.g. ``E-`` in IOB2).

    >>> decode_strict(["I-ORG", "B-LOC", "I-LOC", "I-PER"], "IOB2")
    [(1, 3, 'LOC')]
    """
    rules = _STRICT_RULES[scheme]
    allowed = _SCHEME_PREFIXES[scheme]
    seq = [_split_tag(tag) for tag in tags] + [("O", "")]
    for tag, (prefix, _) in zip(tags, seq, strict=False):
        if prefix not in allowed:
            raise ValueError(
                f"tag {tag!r} has a prefix {scheme} does not allow ({', '.join(sorted(allowed))})"
            )
    spans: list[TokenSpan] = []
    prev = ("O", "")
    i = 0
    while i < len(seq):
        cur = seq[i]
        if _matches(rules["start"], prev, cur):
            j, last = i + 1, cur
            while j < len(seq) and _matches(rules["inside"], last, seq[j]):
                last = seq[j]
                j += 1
            if j < len(seq) and _matches(rules["end"], seq[j - 1], seq[j]):
                spans.append((i, j, cur[1]))
            i = j
        else:
            i += 1
        prev = seq[i - 1]
    return spans


def detect_scheme(sequences: Iterable[Sequence[str]]) -> TagScheme:
    """The scheme of tag sequences from the prefixes they use, after seqeval's ``auto_detect``.

    With ``U`` the prefixes used besides ``O``: IOB2 when ``B ∈ U ⊆ {B, I}``; IOBES when
    ``{B, E} ⊆ U ⊆ {B, I, E, S}`` or ``U = {S}``; BILOU when ``{B, L} ⊆ U ⊆ {B, I, L, U}`` or
    ``U = {U}``. (seqeval also detects IOE2, which jurist does not read, and refuses ``S``
    or ``U`` alone when ``O`` is present too.)

    Raises:
        ValueError: Another combination (e.g. only ``I``/``O``: IOB1, which must be named).
    """
    found = {_split_tag(tag)[0] for sequence in sequences for tag in sequence}
    used = found - {"O"}
    if "B" in used and used <= set("BI"):
        return "IOB2"
    if ({"B", "E"} <= used and used <= set("BIES")) or used == {"S"}:
        return "IOBES"
    if ({"B", "L"} <= used and used <= set("BILU")) or used == {"U"}:
        return "BILOU"
    prefixes = ", ".join(sorted(found)) or "none"
    raise ValueError(
        f"cannot detect the tag scheme from the prefixes {prefixes}; name it (IOB1, IOB2, IOBES or BILOU)"
    )


def decode_tags(
    tags: Sequence[str], decoding: TagDecoding, scheme: TagScheme | None = None
) -> list[TokenSpan]:
    """Entities of one tag sequence by ``decoding`` (``scheme`` overrides ``decoding.scheme``).

    Raises:
        ValueError: Strict decoding without a scheme, or a prefix the scheme does not allow.
    """
    if decoding.mode == "lenient":
        return decode_lenient(tags)
    chosen = scheme or decoding.scheme
    if chosen is None:
        raise ValueError("strict decoding needs a tag scheme")
    return decode_strict(tags, chosen)


def sentence_text(tokens: Sequence[str]) -> tuple[str, list[tuple[int, int]]]:
    """The text of a sentence (tokens joined by single spaces) and each token's character span.

    >>> sentence_text(["Het", "Rijksmuseum", "."])
    ('Het Rijksmuseum .', [(0, 3), (4, 15), (16, 17)])
    """
    offsets: list[tuple[int, int]] = []
    position = 0
    for token in tokens:
        offsets.append((position, position + len(token)))
        position += len(token) + 1
    return " ".join(tokens), offsets


def _scheme_for(sentences: Sequence[TaggedSentence], decoding: TagDecoding, file: Path) -> TagScheme | None:
    if decoding.mode == "lenient":
        return None
    if decoding.scheme is not None:
        allowed = _SCHEME_PREFIXES[decoding.scheme]
        for sentence in sentences:
            for tag, line in zip(sentence.tags, sentence.lines, strict=True):
                if _split_tag(tag)[0] not in allowed:
                    raise InputError(
                        f"tag {tag!r} has a prefix the scheme {decoding.scheme} does not allow "
                        f"({', '.join(sorted(allowed))})",
                        path=file,
                        line=line,
                        field="tag",
                    )
        return decoding.scheme
    try:
        return detect_scheme(sentence.tags for sentence in sentences)
    except ValueError as exc:
        raise InputError(str(exc), path=file, field="tag_scheme") from None


def token_tag_records(
    path: str | Path, decoding: TagDecoding | None = None
) -> tuple[list[tuple[int, dict[str, Any]]], TagDecoding]:
    """Heritage gold records of a token-tag file: one per sentence, with its entity spans.

    Sentence ``n`` (from 1, over the whole file) becomes ``{"id": "s{n}", "text": tokens
    joined by spaces, "ner_annotations": [{"text", "type", "start", "end"}], "metadata":
    {"document": d, "line": first line, "tokens": count}}``, with character offsets.

    Returns:
        ``[(line of the sentence's first token, record)]`` and the decoding used (with the
        detected scheme filled in for strict decoding).

    Raises:
        InputError: A bad line or tag (:func:`read_token_tags`), a prefix the scheme does not
            allow, or a scheme that cannot be detected.
    """
    file = Path(path)
    decoding = decoding or TagDecoding()
    sentences = read_token_tags(file)
    scheme = _scheme_for(sentences, decoding, file)
    used = TagDecoding(decoding.mode, scheme)
    records: list[tuple[int, dict[str, Any]]] = []
    for number, sentence in enumerate(sentences, start=1):
        text, offsets = sentence_text(sentence.tokens)
        annotations = []
        for start, end, label in decode_tags(sentence.tags, used):
            char_start, char_end = offsets[start][0], offsets[end - 1][1]
            annotations.append(
                {"text": text[char_start:char_end], "type": label, "start": char_start, "end": char_end}
            )
        records.append(
            (
                sentence.line,
                {
                    "id": f"s{number}",
                    "text": text,
                    "ner_annotations": annotations,
                    "metadata": {
                        "document": sentence.document,
                        "line": sentence.line,
                        "tokens": len(sentence.tokens),
                    },
                },
            )
        )
    return records, used
