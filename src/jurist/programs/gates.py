"""Judges of the optional claim check of ``jurist gate``: an LLM program and a lexical baseline."""

from __future__ import annotations

from typing import Any

import dspy

from jurist.judges.judge import OutputError
from jurist.programs._lexical import content_words
from jurist.signatures.gates import ClaimCheck, ClaimVerdict

CLAIM_MIN_COVERAGE = 0.6
"""The baseline says an answer states the claim when it holds at least this share of the
claim's content words (lowercased, stopwords dropped, plurals folded)."""


class ClaimJudge(dspy.Module):
    """Asks an LM whether an answer states the gold claim."""

    def __init__(self) -> None:
        super().__init__()
        self.check = dspy.Predict(ClaimCheck)

    def forward(self, question: str, gold_claim: str, answer: str) -> dspy.Prediction:
        return self.check(question=question, gold_claim=gold_claim, answer=answer)

    async def aforward(self, question: str, gold_claim: str, answer: str) -> dspy.Prediction:
        return await self.check.acall(question=question, gold_claim=gold_claim, answer=answer)


def verdict_from_prediction(prediction: Any, _inputs: dict[str, Any]) -> ClaimVerdict:
    """The validated verdict of a prediction.

    Raises:
        OutputError: ``states_claim`` is not a boolean.
    """
    value = getattr(prediction, "states_claim", None)
    if not isinstance(value, bool):
        raise OutputError(f"states_claim must be true or false, got {value!r}")
    return ClaimVerdict(states_claim=value, reason=str(getattr(prediction, "reason", "") or ""))


def claim_baseline(*, question: str, gold_claim: str, answer: str) -> ClaimVerdict:
    """Offline verdict: the answer holds at least :data:`CLAIM_MIN_COVERAGE` of the claim's content words."""
    claim = content_words(gold_claim)
    if not claim:
        return ClaimVerdict(states_claim=False, reason="the gold claim has no content words")
    found = claim & content_words(answer)
    coverage = len(found) / len(claim)
    return ClaimVerdict(
        states_claim=coverage >= CLAIM_MIN_COVERAGE,
        reason=f"{len(found)} of {len(claim)} content words of the claim are in the answer ({coverage:.0%})",
    )
