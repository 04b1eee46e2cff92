"""Offline RGB programs: an extractive responder and keyword judges, no LLM, no key.

**Extractive responder** (:func:`extractive_answer`), a floor for models under test:

1. The passages are split into sentences (at ``. ! ?`` followed by a space, at ``。！？；``
   and at line breaks).
2. The question and each sentence are reduced to *terms*: for English, lower-cased words
   and numbers minus stopwords; for Chinese, character bigrams of CJK runs (a lone CJK
   character is its own term) plus words and numbers in other scripts.
3. ``score(s) = |T(q) ∩ T(s)| / |T(q)|``, the share of the question's terms in sentence
   ``s``. The answer is the best-scoring sentence (the first one on ties).
4. When no sentence reaches ``min_score`` (or there are no passages) the answer is RGB's
   rejection sentence for the language, the one RGB's prompt asks a model to write.

It never reports factual errors. It sees words, not meaning: it picks the sentence that
repeats the question, whether or not it holds the answer, and it rarely rejects at noise
rate 1, because RGB's noise passages are retrieved for the question and share its words.

**Keyword judges** (:func:`keyword_rejection`, :func:`keyword_error_detection`): the
tiered keyword lists of :mod:`jurist.metrics.rgb` (both languages), up to tier 2 by
default. They stand in for the Rej* and ED* LLM judges offline and are reported as
keyword judgments, never as RGB's ChatGPT-judged figures.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from jurist.metrics.rgb import detect_factual_error, detect_rejection
from jurist.programs.rgb.program import responder_output
from jurist.signatures.rgb import ErrorDetectionVerdict, RejectionVerdict

MIN_SCORE = 0.5
"""Default share of the question's terms a sentence must hold to be given as the answer."""

REJECTION_SENTENCES = {
    "en": "I can not answer the question because of the insufficient information in documents.",
    "zh": "文档信息不足，因此我无法基于提供的文档回答该问题。",
}
"""The sentence RGB's prompt asks for when the documents do not hold the answer."""

# fmt: off
_STOPWORDS = frozenset((
    "a", "an", "and", "are", "as", "at", "be", "by", "did", "do", "does", "for", "from", "had",
    "has", "have", "how", "in", "is", "it", "its", "of", "on", "or", "that", "the", "their",
    "this", "to", "was", "were", "what", "when", "where", "which", "who", "whom", "whose", "why",
    "will", "with", "during", "after", "before", "about", "into", "than", "then", "there", "these",
    "those", "been", "being", "can", "could", "would", "should", "may", "might", "shall", "much",
    "many", "most", "more", "some", "any", "each", "other", "such", "only", "own", "same", "so",
    "very", "just", "also", "not", "no", "nor",
))
# fmt: on
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？；])|\n+")
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_WORD = re.compile(r"[^\W_\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")


def split_sentences(text: str) -> list[str]:
    """The sentences of a passage (see the module docstring), stripped, empty ones dropped."""
    return [part.strip() for part in _SENTENCE_END.split(text) if part and part.strip()]


def terms(text: str, *, language: str) -> set[str]:
    """The terms of a text: see the module docstring."""
    lowered = text.lower()
    found: set[str] = set()
    if language == "zh":
        for run in _CJK_RUN.findall(lowered):
            found.update([run] if len(run) == 1 else (run[i : i + 2] for i in range(len(run) - 1)))
        found.update(_WORD.findall(lowered))
        return found
    return {word for word in _WORD.findall(lowered) if word not in _STOPWORDS}


def extractive_answer(query: str, docs: Sequence[str], *, language: str, min_score: float = MIN_SCORE) -> str:
    """The passage sentence that best matches the question, or RGB's rejection sentence.

    >>> extractive_answer("Where was Super Bowl 2021 held?",
    ...     ["Tickets are on sale. Super Bowl 2021 was held in Tampa, Florida."], language="en")
    'Super Bowl 2021 was held in Tampa, Florida.'
    >>> extractive_answer("Who won?", [], language="en")
    'I can not answer the question because of the insufficient information in documents.'
    """
    wanted = terms(query, language=language)
    best, best_score = None, -1.0
    if wanted:
        for doc in docs:
            for sentence in split_sentences(doc):
                score = len(wanted & terms(sentence, language=language)) / len(wanted)
                if score > best_score:
                    best, best_score = sentence, score
    if best is None or best_score < min_score:
        return REJECTION_SENTENCES.get(language, REJECTION_SENTENCES["en"])
    return best


class ExtractiveResponder:
    """The offline model under test: :func:`extractive_answer` labelled like a model's answer.

    Args:
        min_score: Share of the question's terms a sentence must hold (default :data:`MIN_SCORE`).
    """

    def __init__(self, min_score: float = MIN_SCORE) -> None:
        self.min_score = min_score

    def __call__(self, **inputs: Any) -> dict[str, Any]:
        text = extractive_answer(
            inputs["query"], inputs["docs"], language=inputs["language"], min_score=self.min_score
        )
        return responder_output(text, inputs)


def keyword_rejection(question: str, answer: str, *, max_tier: int = 2, **context: Any) -> RejectionVerdict:
    """Rej* offline: the answer rejects when a rejection keyword up to ``max_tier`` is in it."""
    match = detect_rejection(answer, max_tier=max_tier)
    reason = f"keyword {match.keyword!r} (tier {match.tier})" if match else "no rejection keyword"
    return RejectionVerdict(rejects=match is not None, reason=reason)


def keyword_error_detection(answer: str, *, max_tier: int = 2, **context: Any) -> ErrorDetectionVerdict:
    """ED* offline: the answer reports an error when an error keyword up to ``max_tier`` is in it."""
    match = detect_factual_error(answer, max_tier=max_tier)
    reason = f"keyword {match.keyword!r} (tier {match.tier})" if match else "no error keyword"
    return ErrorDetectionVerdict(detects_error=match is not None, reason=reason)
