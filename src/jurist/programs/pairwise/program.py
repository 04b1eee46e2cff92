"""The LLM pairwise judge: one ordered comparison in, a choice among 2, 3 or 4 options out.

The judge sees the question, the evaluating guidance, the reference answer and the two
responses, never the names of the models that wrote them. The runner asks every
comparison in both orders; an answer whose choice is not one of the options is asked
again past the cache and, if it still is not, recorded as not extracted.
"""

from __future__ import annotations

from typing import Any

import dspy

from jurist.judges.judge import OutputError
from jurist.signatures.pairwise import PairwiseChoice, PairwiseInputs, option_letters, pairwise_signature


class PairwiseJudgeProgram(dspy.Module):
    """Chooses between Response 1 and Response 2 with the signature for ``num_options``."""

    def __init__(self, num_options: int = 2) -> None:
        super().__init__()
        self.num_options = num_options
        self.choose = dspy.Predict(pairwise_signature(num_options))

    def forward(self, **inputs: str) -> dspy.Prediction:
        """Judge one ordered comparison given as the keyword fields of :class:`PairwiseInputs`."""
        return self.choose(**PairwiseInputs(**inputs).as_inputs())

    async def aforward(self, **inputs: str) -> dspy.Prediction:
        """:meth:`forward` without blocking the event loop."""
        return await self.choose.acall(**PairwiseInputs(**inputs).as_inputs())


def choice_from_prediction(prediction: Any, num_options: int) -> PairwiseChoice:
    """The validated choice of a prediction.

    Raises:
        OutputError: The choice is missing or not one of the options' letters.
    """
    letters = option_letters(num_options)
    choice = str(getattr(prediction, "choice", "") or "").strip().upper().rstrip(".")
    if choice not in letters:
        raise OutputError(f"choice {choice!r} is not one of {', '.join(letters)}")
    return PairwiseChoice(choice=choice, reason=str(getattr(prediction, "reason", "") or ""))  # type: ignore[arg-type]
