"""Scoring of the heritage question answering: per answer, per text and over the corpus."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from jurist.datasets.heritage import HeritageGoldEntry
from jurist.metrics.heritage.qa import factual_accuracy, faithfulness, rouge_scores
from jurist.signatures.heritage import HeritageOutput, QAAnswer
from jurist.tasks.heritage._stats import mean_present

__all__ = ["QAScorer", "score_answers"]

Similarity = Callable[[str, str], float]


def score_answers(
    entry: HeritageGoldEntry, answers: Sequence[QAAnswer], similarity: Similarity | None
) -> list[dict[str, Any]]:
    """One row per answer: its gold pair (``None`` for an unknown question id), ROUGE-1/2/L,
    faithfulness to the text (and strict), relevance (with ``similarity``), ungrounded quotes."""
    pairs = {f"{entry.id}#q{i}": pair for i, pair in enumerate(entry.qa_pairs)}
    rows: list[dict[str, Any]] = []
    for answer in answers:
        pair = pairs.get(answer.id)
        if pair is None:
            rows.append({"pair": None, "rouge1": None, "rouge2": None, "rougeL": None, "faithfulness": None,
                         "faithfulness_strict": None, "relevance": None, "ungrounded": 0})  # fmt: skip
            continue
        rouge = rouge_scores(answer.answer, pair.answer)
        rows.append(
            {
                "pair": pair,
                **rouge,
                "faithfulness": faithfulness(answer.answer, entry.text),
                "faithfulness_strict": faithfulness(answer.answer, entry.text, min_supported_fraction=1.0),
                "relevance": similarity(answer.question, answer.answer) if similarity else None,
                "ungrounded": len(answer.ungrounded_facts),
            }
        )
    return rows


class QAScorer:
    """Collects scored answers; :meth:`summarize` gives ROUGE, faithfulness, factual accuracy.

    Args:
        similarity: Optional ``f(question, answer) -> [0, 1]`` for QA relevance (else not measured).
    """

    def __init__(self, similarity: Similarity | None = None) -> None:
        self.similarity = similarity
        self.answers: list[dict[str, Any]] = []
        self.claims: list[str] = []
        self.facts_correct = 0
        self.facts_total = 0

    def add(self, entry: HeritageGoldEntry, output: HeritageOutput, row: dict[str, Any]) -> None:
        """Score one text's answers into ``row`` (mean ROUGE-L and faithfulness)."""
        if "qa" not in output.tasks:
            return
        qa_rows = score_answers(entry, output.answers, self.similarity)
        self.answers += qa_rows
        for answer, qa_row in zip(output.answers, qa_rows, strict=True):
            pair = qa_row["pair"]
            if pair is None:
                continue
            facts = factual_accuracy(answer.supporting_facts, pair.supporting_facts)
            self.facts_correct += facts["correct_claims"]
            self.facts_total += facts["correct_claims"] + facts["incorrect_claims"]
            self.claims += answer.supporting_facts
        row["qa_rougeL"] = mean_present([r["rougeL"] for r in qa_rows])
        row["qa_faithfulness"] = mean_present([r["faithfulness"] for r in qa_rows])

    def summarize(self) -> tuple[dict[str, Any] | None, dict[str, float | None]]:
        """``(summary["qa"], headline figures)``; ``(None, {})`` when no text's answers were scored."""
        if not self.answers:
            return None, {}
        scored = [r for r in self.answers if r["pair"] is not None]
        summary = {
            "answers": len(scored),
            "rouge1": mean_present([r["rouge1"] for r in scored]),
            "rouge2": mean_present([r["rouge2"] for r in scored]),
            "rougeL": mean_present([r["rougeL"] for r in scored]),
            "faithfulness": mean_present([r["faithfulness"] for r in scored]),
            "faithfulness_strict": mean_present([r["faithfulness_strict"] for r in scored]),
            "relevance": mean_present([r["relevance"] for r in scored]),
            "factual_accuracy": self.facts_correct / self.facts_total if self.facts_total else None,
            "supporting_facts": len(self.claims),
            "ungrounded_facts": sum(r["ungrounded"] for r in scored),
        }
        return summary, {"qa_faithfulness": summary["faithfulness"], "qa_relevance": summary["relevance"]}
