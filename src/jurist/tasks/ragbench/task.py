"""The RAGBench/TRACe task: sentence-level support labels of a RAG response, scored as TRACe."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
from pydantic import BaseModel

from jurist.datasets.ragbench import load_ragbench
from jurist.judges.judge import BaselineJudge, Judge
from jurist.optimization import MetricResult
from jurist.report.console import Headline
from jurist.report.figures import Figure
from jurist.report.review import Review
from jurist.runner import Item
from jurist.schemas import ItemResult
from jurist.tasks._calibration import CalibrationPlan
from jurist.tasks._contract import JudgeRun, Scores, Task
from jurist.tasks.ragbench import calibration, optimization, scoring
from jurist.tasks.ragbench.figures import REVIEW, ragbench_figures, with_gold_columns
from jurist.tasks.ragbench.panel import SentenceLabels
from jurist.tasks.ragbench.report import render_report

if TYPE_CHECKING:
    import dspy


class RagbenchTask(Task):
    """RAGBench (arXiv 2407.11005): which document sentences are relevant and utilized, and
    whether each response sentence is supported; TRACe scores follow from those labels."""

    name = "ragbench"
    description = (
        "Label a RAG response sentence by sentence (RAGBench/TRACe): the relevant and utilized "
        "document-sentence keys, and whether each response sentence is fully supported. "
        "Scores: context relevance, context utilization, completeness, adherence; agreement "
        "with RAGBench gold (hallucination AUROC, adherence accuracy, RMSE)."
    )
    inputs = {
        "question": "the user's question",
        "documents": "the retrieved documents (sentences keyed 0a, 0b, ...)",
        "response": "the RAG system's answer (sentences keyed a, b, ...)",
    }
    outputs = {
        "all_relevant_sentence_keys": "document sentences relevant to the question",
        "all_utilized_sentence_keys": "document sentences the response uses",
        "sentence_support_information": "per response sentence: fully supported or not, with the keys",
        "overall_supported": "the whole response is supported",
    }
    metrics = {
        "context_relevance": "relevant tokens / document tokens",
        "context_utilization": "utilized tokens / document tokens",
        "completeness": "relevant and utilized tokens / relevant tokens",
        "adherence": "every response sentence fully supported",
        "hallucination_auroc": "AUROC of 1 − adherence fraction against gold 'not supported'",
    }

    def read(self, path: str | Path, options: BaseModel) -> Any:
        return load_ragbench(path)

    def items(self, dataset: Any, options: BaseModel) -> Any:
        return (Item(id=row.id, inputs=scoring.ragbench_inputs(row)) for row in dataset)

    def program(self, options: BaseModel) -> dspy.Module:
        from jurist.programs.ragbench.program import RagbenchJudge

        return RagbenchJudge()

    def postprocess(self, prediction: Any, inputs: dict[str, Any], options: BaseModel) -> dict[str, Any]:
        return scoring.llm_postprocess(prediction, inputs)

    def baseline(self, options: BaseModel) -> Judge:
        return BaselineJudge(scoring.baseline_output, name="baseline", version="1")

    def item_row(self, result: ItemResult, options: BaseModel) -> dict[str, Any]:
        return scoring.item_row(result)

    gold_from_run = True

    def gold_columns(self, items: pd.DataFrame, gold: str | Path, options: BaseModel) -> pd.DataFrame:
        """The gold labels and TRACe scores of each item, and ``adherence_agrees`` (see
        :func:`~jurist.tasks.ragbench.figures.with_gold_columns`)."""
        return with_gold_columns(items, scoring.gold_table(gold))

    def summarize(self, items: pd.DataFrame, options: BaseModel, gold: str | Path | None) -> dict[str, Any]:
        return scoring.summarize(items, gold)

    def summary_lines(self, run: JudgeRun) -> list[str]:
        summary = run.summary
        lines = super().summary_lines(run)[:1]
        for name in scoring.TRACE_METRICS:
            value = summary["trace"].get(name, {}).get("mean")
            lines.append(f"  {name}: {'n/a' if value is None else f'{value:.3f}'}")
        auroc = (summary.get("agreement") or {}).get("hallucination_auroc")
        if auroc is not None:
            lines.append(f"  hallucination AUROC vs gold: {auroc:.3f}")
        keys = summary.get("gold_sentence_keys") or {}
        if keys.get("normalised"):
            lines.append(
                f"  gold sentence keys normalised: {keys['normalised']} of {keys['keys']} "
                f"(e.g. {keys['fixes'][0]['key']!r} read as {keys['fixes'][0]['normalised']!r})"
            )
        excluded = {**summary.get("excluded", {}), **(summary.get("agreement") or {}).get("excluded", {})}
        for name, reasons in excluded.items():
            text = "; ".join(f"{reason}: {count}" for reason, count in reasons.items())
            lines.append(f"  left out of {name}: {sum(reasons.values())} ({text})")
        return [*lines, f"report: {run.run_dir / 'report.md'}"]

    def headline(self, summary: Any) -> list[Headline]:
        """The hallucination AUROC against gold (when the data has gold labels)."""
        found = Headline.of(
            (summary.get("agreement") or {}) if isinstance(summary, dict) else {}, "hallucination_auroc"
        )
        return [found] if found is not None else []

    def report(self, scores: Scores) -> str:
        return render_report(scores.summary, scores.items[scores.items["status"] == "failed"])

    def review(self, options: BaseModel) -> Review:
        return REVIEW

    def panel_labels(self, options: BaseModel) -> SentenceLabels:
        """A jury or ``--repeats`` votes per sentence key (relevant, utilized, supported) and on
        ``overall_supported``; TRACe is recomputed from the voted labels
        (:mod:`jurist.tasks.ragbench.panel`)."""
        return SentenceLabels()

    def figures(self, scores: Scores, options: BaseModel) -> list[Figure]:
        """The confusion of adherence against gold, the TRACe histograms, the hallucination ROC
        and the TRACe scores against gold (see :mod:`jurist.tasks.ragbench.figures`)."""
        return super().figures(scores, options) + ragbench_figures(scores.items, scores.summary)

    def calibration(self, gold: Path, settings: Mapping[str, Any]) -> CalibrationPlan:
        """Every row judged with the default options, its adherence compared with the gold
        ``adherence_score`` (see :mod:`jurist.tasks.ragbench.calibration`)."""
        return calibration.calibration(self.options(), gold, settings)

    # ------------------------------------------------------------------ optimization

    optimized_metric = optimization.METRIC_NAME
    demo_threshold = optimization.DEMO_THRESHOLD

    def gold_examples(self, path: str | Path, options: BaseModel) -> list[dspy.Example]:
        """One example per row with a gold label (see :mod:`jurist.tasks.ragbench.optimization`)."""
        return optimization.gold_examples(path)

    def example_score(
        self, example: dspy.Example, output: dict[str, Any], options: BaseModel
    ) -> MetricResult:
        """Support correct against ``adherence_score``, and F1 of the relevant and utilized keys."""
        return optimization.example_score(example, output)
