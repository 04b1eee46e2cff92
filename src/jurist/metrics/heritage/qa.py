"""Question answering metrics: ROUGE, faithfulness to the context, factual accuracy of claims.

Text is compared as lowercased word tokens (``\\w+``, Unicode-aware, so Dutch ``één`` and
``café`` are words; the ``rouge_score`` package keeps only ``[a-z0-9]``). Nothing here
needs a model: semantic similarity and LLM-judged relevance are out of scope for
``metrics/`` (an answer-relevance score from an embedding model can be supplied to the
heritage task instead).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from jurist.sentences import split_sentences

__all__ = [
    "factual_accuracy",
    "faithfulness",
    "qa_example_score",
    "rouge_l",
    "rouge_n",
    "rouge_scores",
    "words",
]

_WORD = re.compile(r"\w+")
_SPACE = re.compile(r"\s+")
_EDGE_PUNCT = ".,;:!?\"'()[]“”‘’"


def words(text: str) -> list[str]:
    """Lowercased word tokens.

    >>> words("Het Rijksmuseum (1800).")
    ['het', 'rijksmuseum', '1800']
    """
    return _WORD.findall(text.lower())


def _f(overlap: int, pred_len: int, ref_len: int) -> dict[str, float]:
    precision = overlap / pred_len if pred_len else 0.0
    recall = overlap / ref_len if ref_len else 0.0
    f = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "fmeasure": f}


def rouge_n(prediction: str, reference: str, n: int = 1) -> dict[str, float]:
    """ROUGE-N: clipped n-gram overlap.

    ``overlap = Σ_g min(count_pred(g), count_ref(g))`` over n-grams ``g``;
    ``P = overlap / #ngrams(pred)``, ``R = overlap / #ngrams(ref)``, ``F = 2PR/(P+R)``.

    >>> rouge_n("opgericht in 1800", "werd opgericht in 1800", 2)["fmeasure"]
    0.8
    """
    pred, ref = words(prediction), words(reference)
    pred_grams = Counter(tuple(pred[i : i + n]) for i in range(len(pred) - n + 1))
    ref_grams = Counter(tuple(ref[i : i + n]) for i in range(len(ref) - n + 1))
    overlap = sum((pred_grams & ref_grams).values())
    return _f(overlap, sum(pred_grams.values()), sum(ref_grams.values()))


def _lcs(a: Sequence[str], b: Sequence[str]) -> int:
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0]
        for j, y in enumerate(b):
            current.append(previous[j] + 1 if x == y else max(previous[j + 1], current[j]))
        previous = current
    return previous[-1]


def rouge_l(prediction: str, reference: str) -> dict[str, float]:
    """ROUGE-L: longest common subsequence of the word sequences.

    ``P = LCS / |pred|``, ``R = LCS / |ref|``, ``F = 2PR/(P+R)``.
    """
    pred, ref = words(prediction), words(reference)
    return _f(_lcs(pred, ref), len(pred), len(ref))


def rouge_scores(prediction: str, reference: str) -> dict[str, float]:
    """F-measures of ROUGE-1, ROUGE-2 and ROUGE-L (the framework's ``rouge1/rouge2/rougeL``)."""
    return {
        "rouge1": rouge_n(prediction, reference, 1)["fmeasure"],
        "rouge2": rouge_n(prediction, reference, 2)["fmeasure"],
        "rougeL": rouge_l(prediction, reference)["fmeasure"],
    }


def qa_example_score(answer: str, gold_answer: str) -> float:
    """ROUGE-L F of one answer against its gold answer: the per-example target for a QA program."""
    return rouge_l(answer, gold_answer)["fmeasure"]


def _content_words(sentence: str, min_word_chars: int) -> list[str]:
    return [w for w in words(sentence) if len(w) >= min_word_chars or w.isdigit()]


def faithfulness(
    answer: str, context: str, *, min_word_chars: int = 5, min_supported_fraction: float | None = None
) -> float | None:
    """The share of the answer's sentences that are grounded in the context (lexically).

    A sentence's *content words* are its words of at least ``min_word_chars`` characters
    (the framework's "longer than 4") and its numbers of any length (years are the facts
    most worth checking). With ``min_supported_fraction=None`` (the framework's rule) a
    sentence is supported if at least one content word occurs in the context; with a
    fraction ``f``, if at least ``f`` of its content words do (``1.0``: all of them).
    ``faithfulness = supported sentences / sentences with content words``.

    Words are matched as whole tokens (the sample matched substrings, so ``"museum"``
    was found inside ``"museumkaart"``); sentences come from :func:`jurist.sentences.split_sentences`
    (the sample split on ``". "``). A sentence without content words states nothing to
    check and is left out; ``None`` when no sentence has content words.
    """
    vocabulary = set(words(context))
    checked = supported = 0
    for sentence in split_sentences(answer):
        content = _content_words(sentence, min_word_chars)
        if not content:
            continue
        checked += 1
        found = sum(w in vocabulary for w in content)
        if min_supported_fraction is None:
            supported += found > 0
        else:
            supported += found / len(content) >= min_supported_fraction
    return supported / checked if checked else None


def _normalise(text: str) -> str:
    return _SPACE.sub(" ", text.lower()).strip().strip(_EDGE_PUNCT).strip()


def factual_accuracy(
    generated_claims: Iterable[str | Mapping[str, Any]], gold_facts: Iterable[str | Mapping[str, Any]]
) -> dict[str, Any]:
    """The share of verifiable claims found in the gold facts.

    A claim is a string or ``{"claim": ..., "verifiable": bool}`` (strings are verifiable);
    a gold fact a string or ``{"fact": ...}``. A verifiable claim is correct if its
    normalised text (lowercase, collapsed spaces, edge punctuation stripped) is contained
    in some normalised gold fact, as in the framework (an empty claim is incorrect).
    ``factual_accuracy = correct /
    (correct + incorrect)`` (0.0 when there is no verifiable claim).
    """
    claims = [{"claim": c, "verifiable": True} if isinstance(c, str) else dict(c) for c in generated_claims]
    facts = [_normalise(f if isinstance(f, str) else str(f["fact"])) for f in gold_facts]
    verifiable = [c for c in claims if c.get("verifiable", True)]
    normalised = [_normalise(str(c["claim"])) for c in verifiable]
    correct = sum(bool(claim) and any(claim in fact for fact in facts) for claim in normalised)
    incorrect = len(verifiable) - correct
    return {
        "factual_accuracy": correct / len(verifiable) if verifiable else 0.0,
        "correct_claims": correct,
        "incorrect_claims": incorrect,
        "unverifiable_claims": len(claims) - len(verifiable),
        "total_claims": len(claims),
    }
