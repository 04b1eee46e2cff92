"""The LLM judge for RAGBench/TRACe labeling, and the cleaning of its answers.

The judge never sees a key it could not use: the documents and the response are keyed by
:mod:`jurist.sentences` (or by RAGBench's own sentence lists when a row carries them), and
:func:`clean_labels` removes keys of the answer that name no sentence, counting them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import dspy

from jurist.judges.judge import OutputError
from jurist.sentences import KeyedSentence, format_keyed, keyed_inputs
from jurist.signatures.ragbench import RagbenchLabeling, RagbenchLabels, SentenceSupport


def _known(keys: Sequence[Any], valid: set[str], dropped: list[str]) -> list[str]:
    kept: list[str] = []
    for key in keys:
        text = str(key).strip()
        if text in valid:
            if text not in kept:
                kept.append(text)
        else:
            dropped.append(text)
    return kept


def clean_labels(
    prediction: Any,
    doc_sentences: Sequence[KeyedSentence],
    response_sentences: Sequence[KeyedSentence],
) -> RagbenchLabels:
    """Validate a judge's six fields against the item's real keys.

    Keys that name no sentence are dropped from every field and listed in ``dropped_keys``;
    a response sentence labeled twice keeps its first label; response sentences without a
    label are listed in ``unlabeled_response_keys``.

    Raises:
        OutputError: A field is missing or of the wrong kind (the answer is unusable).
    """
    doc_keys = {sentence.key for sentence in doc_sentences}
    response_keys = [sentence.key for sentence in response_sentences]
    dropped: list[str] = []
    try:
        support_items = list(prediction.sentence_support_information or [])
        relevant = _known(prediction.all_relevant_sentence_keys or [], doc_keys, dropped)
        utilized = _known(prediction.all_utilized_sentence_keys or [], doc_keys, dropped)
        overall = prediction.overall_supported
    except AttributeError as exc:
        raise OutputError(f"the answer lacks a field: {exc}") from None
    if not isinstance(overall, bool):
        raise OutputError(f"overall_supported must be true or false, got {overall!r}")
    support: dict[str, SentenceSupport] = {}
    for entry in support_items:
        item = entry if isinstance(entry, SentenceSupport) else SentenceSupport.model_validate(entry)
        key = item.response_sentence_key.strip()
        if key not in response_keys:
            dropped.append(key)
            continue
        if key in support:
            continue
        support[key] = item.model_copy(
            update={
                "response_sentence_key": key,
                "supporting_sentence_keys": _known(item.supporting_sentence_keys, doc_keys, dropped),
            }
        )
    return RagbenchLabels(
        relevance_explanation=str(getattr(prediction, "relevance_explanation", "") or ""),
        all_relevant_sentence_keys=relevant,
        overall_supported_explanation=str(getattr(prediction, "overall_supported_explanation", "") or ""),
        overall_supported=overall,
        sentence_support_information=[support[key] for key in response_keys if key in support],
        all_utilized_sentence_keys=utilized,
        dropped_keys=dropped,
        unlabeled_response_keys=[key for key in response_keys if key not in support],
    )


class RagbenchJudge(dspy.Module):
    """Labels one RAGBench item with an LM: keyed sentences in, the six TRACe fields out."""

    def __init__(self) -> None:
        super().__init__()
        self.label = dspy.Predict(RagbenchLabeling)

    def _prompt_inputs(
        self,
        question: str,
        documents: Sequence[str],
        response: str,
        document_sentences: Sequence[Sequence[str]] | None,
        response_sentences: Sequence[Sequence[str]] | None,
    ) -> dict[str, str]:
        docs, resp = keyed_inputs(documents, response, document_sentences, response_sentences)
        return {"documents": format_keyed(docs), "question": question, "response": format_keyed(resp)}

    def forward(
        self,
        question: str,
        documents: Sequence[str],
        response: str,
        document_sentences: Sequence[Sequence[str]] | None = None,
        response_sentences: Sequence[Sequence[str]] | None = None,
    ) -> dspy.Prediction:
        return self.label(
            **self._prompt_inputs(question, documents, response, document_sentences, response_sentences)
        )

    async def aforward(
        self,
        question: str,
        documents: Sequence[str],
        response: str,
        document_sentences: Sequence[Sequence[str]] | None = None,
        response_sentences: Sequence[Sequence[str]] | None = None,
    ) -> dspy.Prediction:
        return await self.label.acall(
            **self._prompt_inputs(question, documents, response, document_sentences, response_sentences)
        )
