"""The offline pairwise judge: picks a SubEval option from word overlap, without an LLM.

It returns the same :class:`~jurist.signatures.pairwise.PairwiseChoice` as the LLM judge
and, like it, sees only the question, guidance, reference answer and the two responses.

1. **Target.** The reference answer when there is one; otherwise the question followed
   by the evaluating guidance.
2. **Content words.** Lowercased runs of letters or digits, minus English stopwords and
   single letters (kept as counts, for the cosine below).
3. **Scores of a response R.** ``coverage(R) = |W(R) ∩ W(T)| / |W(T)|``, the share of the
   target's distinct content words that R contains, and ``cosine(R)``, the cosine
   similarity of R's and the target's content-word counts. Responses are ranked by
   coverage, then by cosine.
4. **Choice.**

   - 2 options: the higher-ranked response (A or B). An exact tie chooses A, so that the
     two orders of a tied comparison come out inconsistent, which is what it is.
   - 3 options: C when both coverages reach ``good_min_coverage`` and differ by at most
     ``tie_margin``; otherwise as with 2 options.
   - 4 options: a response is *good* when its coverage reaches ``good_min_coverage``:
     C if both are good, D if neither, else A or B for the good one.

The rule is symmetric: swapping the responses swaps A and B (except for exact ties in
the 2- and 3-option cases), so its consistency is high by construction. It sees words,
not quality: longer responses cover more words, and a fluent wrong answer scores like a
right one. On LLMBar it is close to chance (see the README); it is a floor and a way to
run every command offline, not a judge to trust. Coverage scales differ between
datasets (a long question dilutes it), so ``good_min_coverage`` matters only for 3 and 4
options and has no universal value.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

from jurist.signatures.pairwise import PairwiseChoice, PairwiseInputs, option_letters

__all__ = ["GOOD_MIN_COVERAGE", "TIE_MARGIN", "PairwiseBaseline", "ResponseScore", "content_word_counts"]

GOOD_MIN_COVERAGE = 0.3
"""A response is "good" (3 and 4 options) if it holds at least this share of the target's
distinct content words."""

TIE_MARGIN = 0.05
"""With 3 options, two good responses whose coverages differ by at most this are a tie (C)."""

_TOKEN = re.compile(r"[^\W_]+")
_STOPWORD_TEXT = """
    a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing done down during each either few
    for from further had has have having he her here hers herself him himself his how however i
    if in into is it its itself just least less may me might more most much must my myself
    neither no nor not now of off on once only or other our ours ourselves out over own per same
    shall she should so some such than that the their theirs them themselves then there these
    they this those through thus to too under until up upon us very via was we were what when
    where whether which while who whom whose why will with within without would yet you your
    yours yourself yourselves please
    """
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def content_word_counts(text: str) -> Counter[str]:
    """The content words of a text with their counts.

    Examples:
        >>> sorted(content_word_counts("The cat sat on the mat; the cat slept.").items())
        [('cat', 2), ('mat', 1), ('sat', 1), ('slept', 1)]
    """
    words = (token for token in _TOKEN.findall(text.lower()) if token not in _STOPWORDS)
    return Counter(word for word in words if len(word) > 1 or word.isdigit())


@dataclass(frozen=True)
class ResponseScore:
    """How close one response is to the target.

    Attributes:
        coverage: Share of the target's distinct content words found in the response.
        cosine: Cosine similarity of the content-word counts.
    """

    coverage: float
    cosine: float


def _score(response: Counter[str], target: Counter[str]) -> ResponseScore:
    if not target:
        return ResponseScore(0.0, 0.0)
    shared = response.keys() & target.keys()
    coverage = len(shared) / len(target)
    norm = math.sqrt(sum(v * v for v in response.values())) * math.sqrt(sum(v * v for v in target.values()))
    cosine = sum(response[w] * target[w] for w in shared) / norm if norm else 0.0
    return ResponseScore(coverage, cosine)


class PairwiseBaseline:
    """Rule-based pairwise judge from word overlap with the reference (or the question).

    Args:
        good_min_coverage: See :data:`GOOD_MIN_COVERAGE`.
        tie_margin: See :data:`TIE_MARGIN`.

    Examples:
        >>> judge = PairwiseBaseline()
        >>> judge(
        ...     question="Name the capital of France.",
        ...     response_1="Paris is the capital of France.",
        ...     response_2="I like trains.",
        ... ).choice
        'A'
    """

    def __init__(self, good_min_coverage: float = GOOD_MIN_COVERAGE, tie_margin: float = TIE_MARGIN) -> None:
        self.good_min_coverage = good_min_coverage
        self.tie_margin = tie_margin

    def scores(self, inputs: PairwiseInputs) -> tuple[ResponseScore, ResponseScore, str]:
        """Both responses' scores and what they were compared with (``"reference answer"`` or
        ``"question and guidance"``)."""
        if inputs.reference_answer.strip():
            target, against = content_word_counts(inputs.reference_answer), "reference answer"
        else:
            target, against = (
                content_word_counts(f"{inputs.question}\n{inputs.evaluating_guidance}"),
                "question and guidance",
            )
        return (
            _score(content_word_counts(inputs.response_1), target),
            _score(content_word_counts(inputs.response_2), target),
            against,
        )

    def __call__(self, *, num_options: int = 2, **inputs: str) -> PairwiseChoice:
        """Judge one ordered comparison given as the keyword fields of :class:`PairwiseInputs`
        (see the module docstring for the rule).

        Raises:
            ValueError: If ``num_options`` is not 2, 3 or 4.
        """
        return self.judge(PairwiseInputs(**inputs), num_options)

    def judge(self, inputs: PairwiseInputs, num_options: int = 2) -> PairwiseChoice:
        """Judge one ordered comparison (see the module docstring for the rule).

        Raises:
            ValueError: If ``num_options`` is not 2, 3 or 4.
        """
        option_letters(num_options)
        first, second, against = self.scores(inputs)
        good_1 = first.coverage >= self.good_min_coverage
        good_2 = second.coverage >= self.good_min_coverage
        ranked = (first.coverage, first.cosine) >= (second.coverage, second.cosine)
        if num_options == 4:
            choice = "C" if good_1 and good_2 else "D" if not (good_1 or good_2) else "A" if good_1 else "B"
        elif (
            num_options == 3
            and good_1
            and good_2
            and abs(first.coverage - second.coverage) <= self.tie_margin
        ):
            choice = "C"
        else:
            choice = "A" if ranked else "B"
        reason = "\n".join(
            [
                f"1. Response 1 covers {first.coverage:.0%} of the content words of the {against} "
                f"(cosine similarity {first.cosine:.3f}).",
                f"2. Response 2 covers {second.coverage:.0%} of them "
                f"(cosine similarity {second.cosine:.3f}).",
                "3. Offline word-overlap baseline: higher coverage, then higher cosine, is better; "
                f"a response is good at coverage >= {self.good_min_coverage:.0%}.",
            ]
        )
        return PairwiseChoice(choice=choice, reason=reason)  # type: ignore[arg-type]
