"""What a jury or ``--repeats`` votes on in a RAGBench item: one label per sentence key.

The label kinds (:data:`KINDS`):

- ``relevant`` and ``utilized``: per document-sentence key (``0a``, ``0b``, ...), whether the
  judge listed it in ``all_relevant_sentence_keys`` / ``all_utilized_sentence_keys``;
- ``supported``: per response-sentence key (``a``, ``b``, ...), the sentence's
  ``fully_supported`` (a sentence the judge left unlabeled counts as not supported, as the
  task's scoring counts it);
- ``overall_supported``: the judge's ``overall_supported``, one key (``response``).

The keys come from the item's inputs, so every member labels the same keys. The voted labels
make the panel's output through the task's own :func:`~jurist.tasks.ragbench.scoring.ragbench_output`,
so TRACe (relevance, utilization, completeness, adherence) is recomputed from them. What is not
voted comes from the members' outputs, in panel order: each response sentence's explanation
and supporting keys from the first member whose label of it is the voted one; the relevance
explanation from the first member, the overall explanation from the first whose
``overall_supported`` is the voted one; ``dropped_keys`` are every member's, once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from jurist.sentences import keyed_inputs
from jurist.tasks._item_labels import ItemLabels, Labels
from jurist.tasks.ragbench.scoring import ragbench_output

__all__ = ["KINDS", "OVERALL_KEY", "SentenceLabels"]

KINDS = ("relevant", "utilized", "supported", "overall_supported")
OVERALL_KEY = "response"
"""The one key of the ``overall_supported`` label."""


def _keys(inputs: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    docs, resp = keyed_inputs(
        inputs["documents"],
        inputs["response"],
        inputs.get("document_sentences"),
        inputs.get("response_sentences"),
    )
    return [sentence.key for sentence in docs], [sentence.key for sentence in resp]


def _support(output: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """Response-sentence key -> its support entry in ``output`` (the first, as recorded)."""
    found: dict[str, Mapping[str, Any]] = {}
    for entry in output.get("sentence_support_information") or []:
        if isinstance(entry, Mapping):
            found.setdefault(str(entry.get("response_sentence_key")), entry)
    return found


class SentenceLabels(ItemLabels):
    """RAGBench's labels per sentence key (see the module docstring)."""

    kinds = KINDS

    def labels(self, inputs: Mapping[str, Any], output: Mapping[str, Any]) -> Labels:
        documents, response = _keys(inputs)
        relevant = set(output.get("all_relevant_sentence_keys") or [])
        utilized = set(output.get("all_utilized_sentence_keys") or [])
        support = _support(output)
        return {
            "relevant": {key: key in relevant for key in documents},
            "utilized": {key: key in utilized for key in documents},
            "supported": {key: bool(support.get(key, {}).get("fully_supported", False)) for key in response},
            "overall_supported": {OVERALL_KEY: bool(output.get("overall_supported"))},
        }

    def compose(
        self, inputs: Mapping[str, Any], voted: Labels, outputs: Sequence[Mapping[str, Any]]
    ) -> dict[str, Any]:
        from jurist.signatures.ragbench import RagbenchLabels, SentenceSupport

        documents, response = _keys(inputs)
        supports = [_support(output) for output in outputs]
        sentences = []
        for key in response:
            value = voted.get("supported", {}).get(key)
            entry = next(
                (
                    found[key]
                    for found in supports
                    if key in found and bool(found[key].get("fully_supported")) is value
                ),
                None,
            )
            if entry is not None:  # no member gave the voted label explicitly: it stays unlabeled
                sentences.append(SentenceSupport.model_validate({**entry, "fully_supported": value}))
        overall = bool(voted.get("overall_supported", {}).get(OVERALL_KEY, False))
        explained = next(
            (output for output in outputs if bool(output.get("overall_supported")) is overall), outputs[0]
        )
        dropped: list[str] = []
        for output in outputs:
            dropped += [key for key in output.get("dropped_keys") or [] if key not in dropped]
        labels = RagbenchLabels(
            relevance_explanation=str(outputs[0].get("relevance_explanation") or ""),
            all_relevant_sentence_keys=[key for key in documents if voted.get("relevant", {}).get(key)],
            overall_supported_explanation=str(explained.get("overall_supported_explanation") or ""),
            overall_supported=overall,
            sentence_support_information=sentences,
            all_utilized_sentence_keys=[key for key in documents if voted.get("utilized", {}).get(key)],
            dropped_keys=dropped,
            unlabeled_response_keys=[
                key for key in response if key not in {s.response_sentence_key for s in sentences}
            ],
        )
        return ragbench_output(labels, dict(inputs))
