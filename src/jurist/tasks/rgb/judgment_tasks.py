"""The Rej* and ED* tasks (``rgb-rejection``, ``rgb-error-detection``): RGB's two LLM judges on
their own, judged, scored, calibrated and optimized against gold yes/no labels; also the
judges of the suite's answers (:mod:`jurist.tasks.rgb.parts`)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import dspy
import pandas as pd
from pydantic import BaseModel

from jurist.judges.config import JudgeConfig
from jurist.judges.judge import BaselineJudge, Judge
from jurist.optimization import MetricResult
from jurist.programs.rgb.baseline import keyword_error_detection, keyword_rejection
from jurist.programs.rgb.program import (
    ErrorDetectionJudge,
    RejectionJudge,
    error_detection_postprocess,
    rejection_postprocess,
)
from jurist.report.review import Review
from jurist.runner import Item
from jurist.tasks._calibration import CalibrationPlan
from jurist.tasks._contract import JudgeRun, Task
from jurist.tasks.rgb import optimization
from jurist.tasks.rgb.calibration import rgb_calibration
from jurist.tasks.rgb.figures import judgment_gold_rows, judgment_review, with_gold_labels
from jurist.tasks.rgb.judges import RGB_JUDGE_LABELS, RGB_JUDGE_TASKS, JudgeKind
from jurist.tasks.rgb.judgments import gold_judgments, judgment_items, read_judgments, summarize_judgments

__all__ = ["RGBErrorDetectionTask", "RGBJudgmentTask", "RGBRejectionTask", "make_rgb_judge"]


class RGBJudgmentTask(Task):
    """The shared part of the Rej* and ED* tasks: judge answers, score against gold yes/no labels."""

    kind: ClassVar[JudgeKind]

    def read(self, path: str | Path, options: BaseModel) -> Any:
        return read_judgments(path)

    def items(self, dataset: Any, options: BaseModel) -> list[Item]:
        return judgment_items(self.kind, dataset)

    def program(self, options: BaseModel) -> dspy.Module:
        return RejectionJudge() if self.kind == "rejection" else ErrorDetectionJudge()

    def postprocess(self, prediction: Any, inputs: dict[str, Any], options: BaseModel) -> dict[str, Any]:
        check = rejection_postprocess if self.kind == "rejection" else error_detection_postprocess
        return check(prediction, inputs).model_dump(mode="json")

    def baseline(self, options: BaseModel) -> Judge:
        if self.kind == "rejection":
            return BaselineJudge(keyword_rejection, name="rgb-rejection-keywords", version="1")
        return BaselineJudge(keyword_error_detection, name="rgb-error-keywords", version="1")

    def summarize(self, items: pd.DataFrame, options: BaseModel, gold: str | Path | None) -> dict[str, Any]:
        return summarize_judgments(self.kind, items, gold)

    def gold_columns(self, items: pd.DataFrame, gold: str | Path, options: BaseModel) -> pd.DataFrame:
        """The gold label (``gold_<label>``) and ``agrees`` (see
        :func:`~jurist.tasks.rgb.figures.with_gold_labels`)."""
        return with_gold_labels(self.kind, items, gold_judgments(gold))

    def review(self, options: BaseModel) -> Review:
        return judgment_review(self.kind)

    def gold_rows(self, dataset: Any, labels: dict[str, Any], options: BaseModel) -> list[dict[str, Any]]:
        """The answers with people's yes/no labels in the judge's label field (see
        :func:`~jurist.tasks.rgb.figures.judgment_gold_rows`)."""
        return judgment_gold_rows(self.kind, dataset, labels)

    def summary_lines(self, run: JudgeRun) -> list[str]:
        summary = run.summary
        label = RGB_JUDGE_LABELS[self.kind]
        judged = summary.get(label) or {}
        rate = judged.get("rate")
        lines = super().summary_lines(run)[:1]
        shown = "n/a" if rate is None else f"{rate:.3f}"
        lines.append(f"  {label}: {judged.get('count', 0)}/{judged.get('nums', 0)} ({shown})")
        agreement = summary.get("agreement") or {}
        if agreement.get("accuracy") is not None:
            kappa = agreement.get("kappa")
            lines.append(
                f"  vs gold ({agreement['matched']} labelled): accuracy {agreement['accuracy']:.3f}, "
                f"kappa {'n/a' if kappa is None else f'{kappa:.3f}'}"
            )
        return [*lines, f"report: {run.run_dir / 'report.md'}"]

    def calibration(self, gold: Path, settings: Mapping[str, Any]) -> CalibrationPlan:
        """The answers with this judge's gold label, judged and compared with it (see
        :mod:`jurist.tasks.rgb.calibration`)."""
        return rgb_calibration(self, self.kind, gold, settings)

    demo_threshold = optimization.DEMO_THRESHOLD

    def gold_examples(self, path: str | Path, options: BaseModel) -> list[dspy.Example]:
        """One example per answer with the judge's gold label (see :mod:`jurist.tasks.rgb.optimization`)."""
        return optimization.gold_examples(path, self.kind)

    def example_score(
        self, example: dspy.Example, output: dict[str, Any], options: BaseModel
    ) -> MetricResult:
        """1 when the yes/no verdict equals gold, else 0, with the judge's reason in the feedback."""
        return optimization.example_score(example, output, self.kind)


class RGBRejectionTask(RGBJudgmentTask):
    """Rej*: does an answer say the documents do not address the question?"""

    name = "rgb-rejection"
    program_task = RGB_JUDGE_TASKS["rejection"]  # its suite's parts too (their names differ)
    kind = "rejection"
    optimized_metric = optimization.METRIC_NAMES["rejection"]
    description = (
        "RGB's Rej* judge: does the answer reject the question (say the documents do not "
        "address it, or the information is insufficient)? Offline: tiered rejection keywords. "
        "Gold: a boolean 'rejects' per answer (sample:rgb-judgments)."
    )
    inputs = {"question": "the question", "answer": "the model's answer"}
    outputs = {"rejects": "the answer rejects the question", "reason": "why, in a sentence"}
    metrics = {
        "rejects": "share of answers judged to reject (Rej*)",
        "accuracy": "agreement with the gold 'rejects' labels",
        "kappa": "Cohen's kappa against the gold labels",
    }


class RGBErrorDetectionTask(RGBJudgmentTask):
    """ED*: does an answer say the documents contain factual errors?"""

    name = "rgb-error-detection"
    program_task = RGB_JUDGE_TASKS["error_detection"]  # its suite's parts too (their names differ)
    kind = "error_detection"
    optimized_metric = optimization.METRIC_NAMES["error_detection"]
    description = (
        "RGB's ED* judge: does the answer report factual errors in the documents (wrong, "
        "inaccurate or contradictory information)? It reads the answer only, as in RGB. "
        "Offline: tiered error keywords. Gold: a boolean 'detects_error' per answer "
        "(sample:rgb-judgments)."
    )
    inputs = {"answer": "the model's answer"}
    outputs = {"detects_error": "the answer reports factual errors", "reason": "why, in a sentence"}
    metrics = {
        "detects_error": "share of answers judged to report errors (ED*)",
        "accuracy": "agreement with the gold 'detects_error' labels",
        "kappa": "Cohen's kappa against the gold labels",
    }


def make_rgb_judge(kind: JudgeKind, config: JudgeConfig | None = None) -> Judge:
    """The judge the Rej* (``rejection``: ``rgb-rejection``) or ED* (``error_detection``:
    ``rgb-error-detection``) task makes for ``config``: tiered keywords offline (``None`` or
    ``model: baseline`` with no program), else the DSPy judge with the configured LM,
    compiled when ``config.program`` names an artifact of ``jurist optimize rgb-rejection``
    / ``rgb-error-detection`` (run with the artifact's own judge config when the config
    names no model).

    Raises:
        InputError: ``config.program`` does not exist.
        ArtifactError: The artifact was compiled for another task (e.g. the other RGB judge).
    """
    task = RGBRejectionTask() if kind == "rejection" else RGBErrorDetectionTask()
    return task.make_judge(config or JudgeConfig(), task.options())
