"""The offline RAGBench judge: lexical TRACe labels without an LLM.

It produces the same :class:`~jurist.signatures.ragbench.RagbenchLabels` as the LLM judge,
over the same sentence keys (:mod:`jurist.sentences`), from word overlap alone:

1. Every sentence is reduced to its *content words*: lowercased word and number tokens,
   minus English stopwords and single letters, with a light plural fold
   (``studies -> study``, ``counts -> count``).
2. **Support.** For response sentence ``r`` and document sentence ``d``,
   ``overlap(r, d) = |C(r) ∩ C(d)| / |C(r)|``, the share of ``r``'s content words found in
   ``d``. Document sentences with ``overlap >= SUPPORT_MIN_OVERLAP`` support ``r``.
   ``coverage(r)`` is the share of ``C(r)`` found in the union of its supporting sentences;
   ``r`` is fully supported iff ``coverage(r) >= FULL_SUPPORT_MIN_COVERAGE``. A sentence
   with no content words (e.g. "Sure!") states nothing and counts as fully supported.
3. **Overall support** is True iff every response sentence is fully supported.
4. **Utilized** keys are the union of all supporting keys.
5. **Relevant** keys are the document sentences holding at least
   ``RELEVANCE_MIN_QUESTION_OVERLAP`` of the question's content words, plus every
   utilized sentence: a sentence the response drew on to answer the question is taken
   as relevant to it, so utilized ⊆ relevant and completeness is utilized / relevant length.

The thresholds are module constants and constructor arguments. The rule is deterministic
and linear in (document sentences × response sentences); it sees no meaning, only words,
so paraphrases read as unsupported and copied-but-wrong combinations as supported. On
500 RAGBench covidqa rows (covidqa/train) its hallucination AUROC (score: 1 − adherence
fraction) is about 0.63: a floor for LLM judges to beat, not a judge to trust.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from jurist.programs._lexical import content_words
from jurist.sentences import KeyedSentence, key_documents, key_response

if TYPE_CHECKING:
    from jurist.signatures.ragbench import RagbenchLabels, SentenceSupport

__all__ = [
    "FULL_SUPPORT_MIN_COVERAGE",
    "RELEVANCE_MIN_QUESTION_OVERLAP",
    "SUPPORT_MIN_OVERLAP",
    "RagbenchBaseline",
]

SUPPORT_MIN_OVERLAP = 0.3
"""A document sentence supports a response sentence if it holds at least this share of the
response sentence's content words. Low on purpose: a response sentence often merges facts
from several document sentences, each of which holds only part of its words."""

FULL_SUPPORT_MIN_COVERAGE = 0.7
"""A response sentence is fully supported if its supporting sentences together hold at least
this share of its content words; the rest is room for connectives, hedges ("suggesting",
"additionally") and light paraphrase, which a lexical rule cannot verify."""

RELEVANCE_MIN_QUESTION_OVERLAP = 0.5
"""A document sentence is relevant if it holds at least half of the question's content words."""


@dataclass(frozen=True)
class _Support:
    """How one response sentence is supported."""

    keys: list[str]
    coverage: float
    best_key: str | None
    best_overlap: float
    n_words: int


def _percent(value: float) -> str:
    return f"{round(100 * value)}%"


class RagbenchBaseline:
    """Rule-based TRACe labeler: lexical overlap between response, question and documents.

    Args:
        support_min_overlap: See :data:`SUPPORT_MIN_OVERLAP`.
        full_support_min_coverage: See :data:`FULL_SUPPORT_MIN_COVERAGE`.
        relevance_min_question_overlap: See :data:`RELEVANCE_MIN_QUESTION_OVERLAP`.

    Examples:
        >>> judge = RagbenchBaseline()
        >>> labels = judge(question="Where is Paris?", documents=["Paris is in France."],
        ...                response="Paris is in France.")
        >>> labels.overall_supported, labels.all_utilized_sentence_keys
        (True, ['0a'])
    """

    def __init__(
        self,
        *,
        support_min_overlap: float = SUPPORT_MIN_OVERLAP,
        full_support_min_coverage: float = FULL_SUPPORT_MIN_COVERAGE,
        relevance_min_question_overlap: float = RELEVANCE_MIN_QUESTION_OVERLAP,
    ) -> None:
        self.support_min_overlap = support_min_overlap
        self.full_support_min_coverage = full_support_min_coverage
        self.relevance_min_question_overlap = relevance_min_question_overlap

    def _support(self, words: frozenset[str], doc_words: dict[str, frozenset[str]]) -> _Support:
        """Find the document sentences supporting one response sentence."""
        if not words:
            return _Support(keys=[], coverage=1.0, best_key=None, best_overlap=0.0, n_words=0)
        keys: list[str] = []
        covered: set[str] = set()
        best_key: str | None = None
        best_overlap = 0.0
        for key, candidate in doc_words.items():
            shared = words & candidate
            overlap = len(shared) / len(words)
            if overlap > best_overlap:
                best_key, best_overlap = key, overlap
            if overlap >= self.support_min_overlap:
                keys.append(key)
                covered |= shared
        return _Support(keys, len(covered) / len(words), best_key, best_overlap, len(words))

    def _sentence_label(self, sentence: KeyedSentence, support: _Support) -> SentenceSupport:
        """Turn a support finding into the judge's per-sentence label and explanation."""
        from jurist.signatures.ragbench import SentenceSupport  # imports DSPy: not at start-up

        fully = support.coverage >= self.full_support_min_coverage
        if support.n_words == 0:
            explanation = "States no content words; counted as supported."
        elif support.keys:
            verdict = "fully supported" if fully else "not fully supported"
            explanation = (
                f"{_percent(support.coverage)} of its {support.n_words} content words are in "
                f"{', '.join(support.keys)}; {verdict} "
                f"(needs {_percent(self.full_support_min_coverage)})."
            )
        else:
            best = (
                f" (best: {support.best_key}, {_percent(support.best_overlap)})" if support.best_key else ""
            )
            explanation = (
                f"No document sentence holds {_percent(self.support_min_overlap)} of its "
                f"{support.n_words} content words{best}; not supported."
            )
        return SentenceSupport(
            response_sentence_key=sentence.key,
            explanation=explanation,
            supporting_sentence_keys=support.keys,
            fully_supported=fully,
        )

    def __call__(self, *, question: str, documents: list[str], response: str) -> RagbenchLabels:
        """Label one item from raw texts, keyed as the LLM judge would see them.

        Args:
            question: The question the response answers.
            documents: The retrieved documents, in order (document ``i`` gets keys ``{i}a``, ``{i}b``, ...).
            response: The response to judge.

        Returns:
            The TRACe labels over :func:`jurist.sentences.key_documents` /
            :func:`jurist.sentences.key_response` keys; ``dropped_keys`` is always empty.
        """
        return self.label(
            question=question,
            doc_sentences=key_documents(documents),
            response_sentences=key_response(response),
        )

    def label(
        self,
        *,
        question: str,
        doc_sentences: Sequence[KeyedSentence],
        response_sentences: Sequence[KeyedSentence],
    ) -> RagbenchLabels:
        """Label one item whose sentences are already keyed (e.g. RAGBench's own sentence lists).

        Args:
            question: The question the response answers.
            doc_sentences: The keyed document sentences, in document order.
            response_sentences: The keyed response sentences, in order.

        Returns:
            The TRACe labels over the given keys: one support label per response sentence,
            relevant and utilized keys in document-sentence order, ``dropped_keys`` empty.
        """
        from jurist.signatures.ragbench import RagbenchLabels  # imports DSPy: not at start-up

        doc_words = {sentence.key: content_words(sentence.text) for sentence in doc_sentences}

        labels: list[SentenceSupport] = []
        utilized: set[str] = set()
        for sentence in response_sentences:
            support = self._support(content_words(sentence.text), doc_words)
            labels.append(self._sentence_label(sentence, support))
            utilized.update(support.keys)

        question_words = content_words(question)
        on_question = {
            key
            for key, words in doc_words.items()
            if question_words
            and len(question_words & words) / len(question_words) >= self.relevance_min_question_overlap
        }
        order = list(dict.fromkeys(sentence.key for sentence in doc_sentences))
        relevant_keys = [key for key in order if key in on_question or key in utilized]
        utilized_keys = [key for key in order if key in utilized]
        n_supported = sum(label.fully_supported for label in labels)
        unsupported = [label.response_sentence_key for label in labels if not label.fully_supported]

        relevance_explanation = (
            f"{len(on_question)} of {len(order)} document sentences hold at least "
            f"{_percent(self.relevance_min_question_overlap)} of the question's "
            f"{len(question_words)} content words; {len(utilized - on_question)} more count as "
            f"relevant because the response uses them."
        )
        overall_explanation = f"{n_supported} of {len(labels)} response sentences are fully supported" + (
            f"; not supported: {', '.join(unsupported)}." if unsupported else "."
        )
        return RagbenchLabels(
            relevance_explanation=relevance_explanation,
            all_relevant_sentence_keys=relevant_keys,
            overall_supported_explanation=overall_explanation,
            overall_supported=not unsupported,
            sentence_support_information=labels,
            all_utilized_sentence_keys=utilized_keys,
            dropped_keys=[],
        )
