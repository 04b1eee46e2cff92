"""The RGB programs that call an LM: the model under test, and the Rej* / ED* judges.

- :class:`RGBResponder` asks the model under test exactly what RGB asks it: RGB's system
  message and its instruction with the passages and the question filled in (no system
  message when there are no passages, as in RGB's closed-book runs). It calls the LM the
  judge wiring put in ``dspy.settings`` (:class:`~jurist.judges.judge.LLMJudge` sets it
  with ``dspy.context``), so the response cache, the retries and the usage meter apply.
- :class:`RejectionJudge` and :class:`ErrorDetectionJudge` run the signatures of
  :mod:`jurist.signatures.rgb`.

Every item's inputs carry context the program does not show the model (the gold answer,
the language, the noise rate); the postprocess functions use it to label the answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import dspy

from jurist.datasets.rgb.loader import RGBPrompt
from jurist.judges.judge import OutputError
from jurist.metrics.rgb import rgb_labels
from jurist.signatures.rgb import (
    ErrorDetectionJudgment,
    ErrorDetectionVerdict,
    RejectionJudgment,
    RejectionVerdict,
)


def _text_of(outputs: Any) -> str:
    """The text of the first completion returned by ``dspy.LM`` (a string or a dict)."""
    if not outputs:
        raise OutputError("the model returned no completion")
    first = outputs[0]
    text = first.get("text") if isinstance(first, dict) else first
    if text is None:
        raise OutputError("the model returned no text (e.g. only a tool call or a refusal)")
    return str(text)


class RGBResponder(dspy.Module):
    """The model under test, prompted as in RGB.

    Args:
        prompt: RGB's system message and instruction template for the item's language.
    """

    def __init__(self, prompt: RGBPrompt) -> None:
        super().__init__()
        self.prompt = prompt

    def messages(self, query: str, docs: Sequence[str]) -> list[dict[str, str]]:
        """The chat messages of one item: system + user, or only user without passages."""
        user = {"role": "user", "content": self.prompt.user_message(query, docs)}
        if not docs:
            return [user]
        return [{"role": "system", "content": self.prompt.system}, user]

    def _lm(self) -> dspy.LM:
        lm = dspy.settings.lm
        if lm is None:
            raise RuntimeError("no LM configured: run the responder through LLMJudge or dspy.context(lm=...)")
        return lm

    def forward(self, query: str, docs: Sequence[str], **context: Any) -> dspy.Prediction:
        """Answer one item; ``context`` (gold answer, language, ...) is not shown to the model."""
        return dspy.Prediction(prediction=_text_of(self._lm()(messages=self.messages(query, docs))))

    async def aforward(self, query: str, docs: Sequence[str], **context: Any) -> dspy.Prediction:
        """Async :meth:`forward`."""
        outputs = await self._lm().acall(messages=self.messages(query, docs))
        return dspy.Prediction(prediction=_text_of(outputs))

    def dump_state(self, json_mode: bool = True) -> dict[str, Any]:
        """The prompts, so that a run directory made with other prompts is not resumed."""
        return {"system": self.prompt.system, "instruction": self.prompt.instruction}

    def load_state(self, state: dict[str, Any], **kwargs: Any) -> RGBResponder:
        self.prompt = RGBPrompt(system=state["system"], instruction=state["instruction"])
        return self


def responder_output(prediction_text: str, inputs: dict[str, Any]) -> dict[str, Any]:
    """The recorded output of one answered item: RGB's prediction record plus the raw text.

    ``prediction``, ``label`` and ``factlabel`` are RGB's (:func:`~jurist.metrics.rgb.rgb_labels`:
    for Chinese, ``prediction`` has its spaces removed); ``raw_prediction`` is the model's
    text as it came, from which other checks can be recomputed without calling the model.
    """
    labels = rgb_labels(prediction_text, inputs["answer"], language=inputs["language"])
    return {
        "query": inputs["query"],
        "ans": inputs["answer"],
        "docs": list(inputs["docs"]),
        "noise_rate": inputs["noise_rate"],
        "prediction": labels.prediction,
        "raw_prediction": prediction_text,
        "label": labels.label,
        "factlabel": labels.factlabel,
    }


def responder_postprocess(prediction: Any, inputs: dict[str, Any]) -> dict[str, Any]:
    """:func:`responder_output` of an :class:`RGBResponder` prediction."""
    text = getattr(prediction, "prediction", None)
    if not isinstance(text, str):
        raise OutputError("the responder returned no prediction text")
    return responder_output(text, inputs)


class RejectionJudge(dspy.Module):
    """Decides whether an answer rejects the question (RGB's Rej*)."""

    def __init__(self) -> None:
        super().__init__()
        self.judge = dspy.Predict(RejectionJudgment)

    def forward(self, question: str, answer: str, **context: Any) -> dspy.Prediction:
        return self.judge(question=question, answer=answer)

    async def aforward(self, question: str, answer: str, **context: Any) -> dspy.Prediction:
        return await self.judge.acall(question=question, answer=answer)


class ErrorDetectionJudge(dspy.Module):
    """Decides whether a response reports factual errors in the documents (RGB's ED*)."""

    def __init__(self) -> None:
        super().__init__()
        self.judge = dspy.Predict(ErrorDetectionJudgment)

    def forward(self, answer: str, **context: Any) -> dspy.Prediction:
        return self.judge(answer=answer)

    async def aforward(self, answer: str, **context: Any) -> dspy.Prediction:
        return await self.judge.acall(answer=answer)


def _verdict_bool(prediction: Any, name: str) -> bool:
    value = getattr(prediction, name, None)
    if not isinstance(value, bool):
        raise OutputError(f"{name} must be true or false, got {value!r}")
    return value


def rejection_postprocess(prediction: Any, inputs: dict[str, Any]) -> RejectionVerdict:
    """The validated verdict of a :class:`RejectionJudge` prediction.

    Raises:
        OutputError: ``rejects`` is missing or not a boolean.
    """
    return RejectionVerdict(
        rejects=_verdict_bool(prediction, "rejects"), reason=str(getattr(prediction, "reason", "") or "")
    )


def error_detection_postprocess(prediction: Any, inputs: dict[str, Any]) -> ErrorDetectionVerdict:
    """The validated verdict of an :class:`ErrorDetectionJudge` prediction.

    Raises:
        OutputError: ``detects_error`` is missing or not a boolean.
    """
    return ErrorDetectionVerdict(
        detects_error=_verdict_bool(prediction, "detects_error"),
        reason=str(getattr(prediction, "reason", "") or ""),
    )
