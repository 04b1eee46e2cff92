"""Reading SubEval's ``Choice: X`` records: the two rules, and what SubEval's rule misread.

A judge that answers in free text (as SubEval's judges did) is read by
:func:`extract_choice`: the ``Choice: X`` (or ``选择：X``) of the text's verdict part, the
text before its first ``Reason:`` (or ``理由：``), as SubEval writes its records. Unlike
SubEval, which takes the first ``Choice:`` anywhere, a choice quoted in the reasons (e.g.
from a judged response that says "Choice: A") is never taken, and a verdict part with two
different choices is ambiguous. A text with no single choice is *not extracted*
(``choice=None``).

The letter itself is read by one of two rules (:data:`CHOICE_RULES`):

- ``subeval`` (the default): SubEval's published rule, the character right after
  ``Choice: `` when it is one of A-D, even when it begins a longer word, so
  ``Choice: Definitely A`` reads D and ``Choice: Both are good, so C`` reads B. Reproducing
  SubEval's figures needs this rule; :func:`read_choice` says when it read such a letter.
- ``strict``: a standalone option letter only, optionally after ``(``, ``[``, ``*`` or a
  quote (``Choice: A``, ``Choice: (B)``, ``Choice: A.``, ``Choice: **C**``); a letter
  followed by another letter or digit, or by an apostrophe or hyphen and one, begins a
  word and is not extracted.

Scores keep SubEval's rule by default, to reproduce SubEval's figures, but never silently:
:func:`read_choices` reads every answer by both rules and returns the choices of the rule in
use, those of the other rule, and a :class:`ChoiceReadings` that lists every extraction whose
letter begins a longer word and every answer the two rules read differently. Pure text
functions: no DSPy, no model.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

__all__ = [
    "CHOICE_RULES",
    "Choice",
    "ChoiceReading",
    "ChoiceReadings",
    "ChoiceRule",
    "LetterInWord",
    "extract_choice",
    "option_letters",
    "other_rule",
    "read_choice",
    "read_choices",
]

Choice = Literal["A", "B", "C", "D"]
"""An option letter; which letters are valid depends on the number of options."""

ChoiceRule = Literal["subeval", "strict"]
"""How the letter after ``Choice: `` is read (see the module docstring)."""

CHOICE_RULES: tuple[ChoiceRule, ...] = ("subeval", "strict")
"""The rules, the default (SubEval's published rule) first."""

_MARKER = r"(?:选择：|Choice: )"
_WORD_GOES_ON = r"(?:[A-Za-z0-9\u00C0-\u024F]|['’-][A-Za-z0-9\u00C0-\u024F])"
_CHOICE_PATTERN = re.compile(_MARKER + r"([ABCD])")
_STRICT_PATTERN = re.compile(_MARKER + r"[(\[*\"'“‘]*([ABCD])(?!" + _WORD_GOES_ON + ")")
_WORD_GOES_ON_AT = re.compile(_WORD_GOES_ON)
_PATTERNS: dict[str, re.Pattern[str]] = {"subeval": _CHOICE_PATTERN, "strict": _STRICT_PATTERN}
AFTER_LIMIT = 60
"""Characters of the text after ``Choice: `` that :class:`ChoiceReading` keeps."""
_REASON_MARKER = re.compile(r"理由：|Reason:")


def option_letters(num_options: int) -> tuple[str, ...]:
    """The valid option letters for 2, 3 or 4 options.

    Raises:
        ValueError: If ``num_options`` is not 2, 3 or 4.

    Examples:
        >>> option_letters(3)
        ('A', 'B', 'C')
    """
    if num_options not in (2, 3, 4):
        raise ValueError(f"num_options must be 2, 3 or 4, got {num_options!r}")
    return get_args(Choice)[:num_options]


def _verdict_matches(text: str, pattern: re.Pattern[str]) -> list[re.Match[str]]:
    """The ``pattern`` matches of the verdict part (see :func:`extract_choice`); ``[]`` if none."""
    reason = _REASON_MARKER.search(text)
    found = list(pattern.finditer(text[: reason.start()] if reason else text))
    if not found and reason:
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        if not lines or not pattern.match(lines[-1]):
            return []
        found = list(pattern.finditer(text))
    return found


def _one_letter(found: list[re.Match[str]], num_options: int) -> Choice | None:
    letters = {match.group(1) for match in found}
    if len(letters) != 1:
        return None
    letter = letters.pop()
    if letter not in option_letters(num_options):
        return None
    return letter  # type: ignore[return-value]


def extract_choice(text: object, num_options: int = 4, rule: ChoiceRule = "subeval") -> Choice | None:
    """The judge's choice in a raw answer: the one ``Choice: X`` of its verdict part.

    The verdict part is the text before the first ``Reason:`` (or ``理由：``); when it holds
    no choice, an answer that gives its reasons first must end with its ``Choice: X`` line,
    and the verdict part is the whole text. The letters
    after ``Choice: `` (or ``选择：``) found there must all be the same: two different
    letters are an ambiguous verdict. ``None`` means "not extracted": no such marker, an
    ambiguous one, a non-string value (e.g. a missing cell), or a letter beyond the
    ``num_options`` valid ones (SubEval itself accepts any of A-D, which is the default
    ``num_options=4``). ``rule`` says how a letter is read (see the module docstring):
    ``subeval`` takes the first character after the marker when it is A-D, ``strict`` only
    a standalone letter.

    Examples:
        >>> extract_choice("Choice: B\\nReason: 1. shorter")
        'B'
        >>> extract_choice("Choice: B\\nReason: Response 1 ends with 'Choice: A'.")
        'B'
        >>> extract_choice("Response 1 says Choice: A, but Choice: B") is None
        True
        >>> extract_choice("I prefer the first one.") is None
        True
        >>> extract_choice("Choice: C", num_options=2) is None
        True
        >>> extract_choice("Choice: Definitely A"), extract_choice("Choice: Definitely A", rule="strict")
        ('D', None)
        >>> extract_choice("Choice: (B)", rule="strict")
        'B'
    """
    if not isinstance(text, str):
        return None
    return _one_letter(_verdict_matches(text, _PATTERNS[rule]), num_options)


@dataclass(frozen=True)
class ChoiceReading:
    """One answer read by both rules.

    Attributes:
        subeval: The choice by SubEval's published rule (``None``: not extracted).
        strict: The choice by the strict rule.
        letter_in_word: SubEval's rule extracted a choice and a letter it read there begins
            a longer word (``Choice: Definitely A`` read as D).
        after: For such a reading, the line after ``Choice: `` of the first letter that
            begins a word, cut to :data:`AFTER_LIMIT` characters (``…`` marks a cut); else ``""``.
    """

    subeval: Choice | None
    strict: Choice | None
    letter_in_word: bool = False
    after: str = ""

    def choice(self, rule: ChoiceRule) -> Choice | None:
        """The choice by ``rule``."""
        return self.subeval if rule == "subeval" else self.strict


def read_choice(text: object, num_options: int = 4) -> ChoiceReading:
    """Read an answer by both rules and say whether SubEval's rule read a letter that begins a word.

    Examples:
        >>> read_choice("Choice: Both are good, so C")
        ChoiceReading(subeval='B', strict=None, letter_in_word=True, after='Both are good, so C')
        >>> read_choice("Choice: A.\\nReason: clear")
        ChoiceReading(subeval='A', strict='A', letter_in_word=False, after='')
    """
    if not isinstance(text, str):
        return ChoiceReading(None, None)
    found = _verdict_matches(text, _CHOICE_PATTERN)
    subeval = _one_letter(found, num_options)
    strict = _one_letter(_verdict_matches(text, _STRICT_PATTERN), num_options)
    in_word = [match for match in found if _WORD_GOES_ON_AT.match(text, match.end(1))]
    if subeval is None or not in_word:
        return ChoiceReading(subeval, strict)
    line = text[in_word[0].start(1) :].split("\n", 1)[0].strip()
    after = line if len(line) <= AFTER_LIMIT else line[: AFTER_LIMIT - 1] + "…"
    return ChoiceReading(subeval, strict, letter_in_word=True, after=after)


RULE_NAMES: dict[str, str] = {"subeval": "SubEval's rule", "strict": "strict reading"}
"""How reports name the rules."""


def other_rule(rule: ChoiceRule) -> ChoiceRule:
    """The rule that is not ``rule``.

    Examples:
        >>> other_rule("subeval")
        'strict'
    """
    return CHOICE_RULES[1 - CHOICE_RULES.index(rule)]


@dataclass(frozen=True)
class LetterInWord:
    """An answer whose choice SubEval's rule read from a letter that begins a longer word.

    Attributes:
        id: The record (``cmp_index``; a pair's order ``{id}|12`` or ``{id}|21``).
        line: Where the record is in its file (``None`` when unknown).
        subeval: The choice SubEval's rule read.
        strict: The strict reading (``None``: not extracted).
        after: The text after ``Choice:``, cut short.
    """

    id: str
    line: int | None
    subeval: Choice
    strict: Choice | None
    after: str

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready: ``id``, ``line``, ``subeval``, ``strict``, ``after_choice``."""
        return {
            "id": self.id,
            "line": self.line,
            "subeval": self.subeval,
            "strict": self.strict,
            "after_choice": self.after,
        }


@dataclass(frozen=True)
class ChoiceReadings:
    """How a set of answers was read.

    Attributes:
        rule: The rule the scores use.
        read: Answers read from text (0 when the choices were given, not read).
        letter_in_word: Every extraction of SubEval's rule whose letter begins a longer word.
        differ: The ids of the answers the two rules read differently (a choice against
            another choice or none).
    """

    rule: ChoiceRule = "subeval"
    read: int = 0
    letter_in_word: tuple[LetterInWord, ...] = ()
    differ: tuple[str, ...] = ()

    @property
    def other(self) -> ChoiceRule:
        """The rule the scores do not use."""
        return other_rule(self.rule)

    def summary(self) -> dict[str, Any]:
        """JSON-ready fields for a run's summary (``--json``).

        ``choice_rule``; ``letter_in_word`` (count) and ``letter_in_word_records`` (the
        list, see :meth:`LetterInWord.as_dict`); ``readings_differ`` (how many answers the
        two rules read differently).
        """
        return {
            "choice_rule": self.rule,
            "letter_in_word": len(self.letter_in_word),
            "letter_in_word_records": [entry.as_dict() for entry in self.letter_in_word],
            "readings_differ": len(self.differ),
        }


def read_choices(
    ids: Sequence[str],
    texts: Sequence[object],
    num_options: int,
    rule: ChoiceRule = "subeval",
    *,
    lines: Sequence[int | None] | None = None,
    skip: Sequence[bool] | None = None,
) -> tuple[list[Choice | None], list[Choice | None], ChoiceReadings]:
    """Read every answer by both rules.

    Args:
        ids: The answers' ids, one per text.
        texts: The judges' raw answers (a value that is not text reads as no choice).
        num_options: 2, 3 or 4: a letter beyond them is not extracted.
        rule: The rule the scores use.
        lines: Where each answer is in its file, for the list.
        skip: Answers not to read (e.g. exact matches, which are not judged): no choice.

    Returns:
        The choices by ``rule``, the choices by the other rule, and the readings.
    """
    used: list[Choice | None] = []
    others: list[Choice | None] = []
    flagged: list[LetterInWord] = []
    differ: list[str] = []
    read = 0
    for position, (item, text) in enumerate(zip(ids, texts, strict=True)):
        if skip is not None and skip[position]:
            used.append(None)
            others.append(None)
            continue
        read += 1
        reading = read_choice(text, num_options)
        used.append(reading.choice(rule))
        others.append(reading.choice(other_rule(rule)))
        if reading.subeval != reading.strict:
            differ.append(str(item))
        if reading.letter_in_word and reading.subeval is not None:
            line = lines[position] if lines is not None else None
            flagged.append(LetterInWord(str(item), line, reading.subeval, reading.strict, reading.after))
    return used, others, ChoiceReadings(rule, read, tuple(flagged), tuple(differ))
