"""The RGB tasks: ``rgb`` (the robustness suite of a model under test, and RGB's prediction
files) and ``rgb-rejection`` / ``rgb-error-detection`` (the Rej* and ED* judges on their own)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, ClassVar

import dspy
import pandas as pd
from pydantic import BaseModel

from jurist.errors import ConfigError
from jurist.judges.config import JudgeConfig
from jurist.judges.judge import BaselineJudge, Judge
from jurist.optimization import MetricResult
from jurist.programs.rgb import (
    ErrorDetectionJudge,
    RejectionJudge,
    error_detection_postprocess,
    rejection_postprocess,
)
from jurist.programs.rgb_baseline import keyword_error_detection, keyword_rejection
from jurist.report.figures import Figure
from jurist.report.review import Review
from jurist.report.rgb import render_rgb_report, render_rgb_scores
from jurist.runner import Item, iter_run_results, run_lock
from jurist.tasks._contract import JudgeBy, JudgeRun, Scores, Task, write_exports
from jurist.tasks.calibration_rows import JudgeSpec
from jurist.tasks.rgb import optimization
from jurist.tasks.rgb.calibration import calibrate_rgb_judge
from jurist.tasks.rgb.figures import (
    judgment_gold_rows,
    judgment_review,
    predictions_figures,
    suite_figures,
    with_gold_labels,
)
from jurist.tasks.rgb.judges import RGB_JUDGE_LABELS, RGB_JUDGE_TASKS, JudgeKind, make_rgb_judge
from jurist.tasks.rgb.judgments import judgment_items, read_judgments, summarize_judgments
from jurist.tasks.rgb.options import RGBOptions, run_suite
from jurist.tasks.rgb.predictions import score_rgb_predictions
from jurist.tasks.rgb.suite import RGBSuiteRun

__all__ = ["RGBErrorDetectionTask", "RGBJudgmentTask", "RGBRejectionTask", "RGBTask", "suite_scores"]

_RUN_COLUMNS = ("items", "ok", "failed", "all_rate", "tt", "nums", "rejection_share")
_FACT_COLUMNS = ("fact_check_rate", "correct_rate", "fact_tt", "correct_tt", "detected_rejections")
_SCORE_FILES = ("_result.json", "_chatgptresult.json")
"""The score files RGB's scripts write next to their prediction files (not predictions)."""


def _log_to_stderr(line: str) -> None:
    print(line, file=sys.stderr)


def _rgb_options(options: BaseModel) -> RGBOptions:
    return options if isinstance(options, RGBOptions) else RGBOptions.model_validate(options.model_dump())


def suite_scores(suite: RGBSuiteRun) -> Scores:
    """A finished suite as scores: one row per run, the suite's summary and report."""
    rows = []
    for run in suite.runs:
        scores = run.scores
        setting = scores["setting"]
        row: dict[str, Any] = {
            "run": run.setting.name,
            "set": setting["set"],
            "dataset": setting["dataset"],
            "language": setting["language"],
            "noise_rate": setting["noise_rate"],
            "passage_num": setting["passage_num"],
            "correct_passage_rate": setting["correct_passage_rate"],
        }
        row.update({key: scores.get(key) for key in (*_RUN_COLUMNS, *_FACT_COLUMNS) if key in scores})
        judge = scores.get("judge")
        if judge is not None:
            row.update(judge=judge["judge"], judge_rate=judge["rate"], judge_failed=judge["failed"])
        row["run_dir"] = str(run.run_dir)
        rows.append(row)
    return Scores(
        items=pd.DataFrame(rows),
        summary=suite.summary,
        report=render_rgb_report(suite.summary),
        extra={"suite": suite},
    )


class RGBTask(Task):
    """RGB (arXiv 2309.01431): the RAG robustness of a model under test, as the paper measures it."""

    name = "rgb"
    description = (
        "RGB (arXiv 2309.01431): the RAG robustness of a model under test (the judge config names "
        "it; the default is an offline extractive responder). `judge` runs RGB's sets on a "
        "directory of RGB files (or one file, or sample:rgb) as RGB's evaluation does: noise "
        "robustness, negative rejection (Rej, and Rej* by a judge), information integration and "
        "counterfactual robustness (ED, ED*, CR); `score` scores RGB prediction files."
    )
    inputs = {
        "query": "the question of an RGB instance",
        "docs": "the passages, mixed from positive and negative ones at the noise rate",
    }
    outputs = {
        "prediction": "the answer of the model under test",
        "label": "RGB's label of the answer (1 per answer part found, 0 if not, [-1] for a rejection)",
        "factlabel": "1 when the answer reports factual errors (counterfactual set)",
    }
    metrics = {
        "all_rate": "accuracy: tt / nums (at noise rate 1, rejections count: Rej)",
        "rej_star": "share of answers the Rej* judge judges to reject",
        "fact_check_rate": "ED: share of answers that report factual errors",
        "ed_star": "share of answers the ED* judge judges to report errors",
        "correct_rate": "CR: share of detections that also give the correct answer (a rejection never does)",
    }
    Options: ClassVar[type[BaseModel]] = RGBOptions
    needs_files: ClassVar[str | None] = (
        "RGB's files, told apart by their names (en.json, zh_int.json, en_fact.json, ...): "
        "a directory of them, one of them, or sample:rgb"
    )

    def unsupported(self, verb: str) -> ConfigError:
        error = super().unsupported(verb)
        if verb.startswith(("be calibrated", "be optimized")):
            judges = ", ".join(sorted(RGB_JUDGE_TASKS.values()))
            return ConfigError(f"{error.reason}; its Rej*/ED* judges can: {judges}", field="task")
        return error

    def judge(
        self,
        data: str | Path,
        out: str | Path,
        config: JudgeConfig,
        options: BaseModel,
        *,
        retry_failed: bool = False,
        progress: bool = True,
    ) -> JudgeRun:
        """Run the RGB suite on ``data`` into ``out`` with the model under test ``config``."""
        log = _log_to_stderr if progress else None
        suite = run_suite(
            data, out, config, _rgb_options(options), retry_failed=retry_failed, progress=progress, log=log
        )
        return JudgeRun(run_dir=Path(out), scores=suite_scores(suite))

    def summary_lines(self, run: JudgeRun) -> list[str]:
        lines = [*render_rgb_report(run.summary).split("\n"), f"report: {run.run_dir / 'report.md'}"]
        if run.summary.get("chart"):
            lines.append(f"chart: {run.summary['chart']}")
        return lines

    def score(
        self,
        run: str | Path | list[Path],
        options: BaseModel,
        *,
        gold: str | Path | None = None,
        write: bool = False,
    ) -> Scores:
        """Score RGB prediction files as RGB's evaluation does (no model is called).

        A directory stands for the prediction files under it (e.g. the ``--out`` of a suite, or
        RGB's ``result-en``), without the score files RGB writes next to them
        (``..._result.json``, ``..._chatgptresult.json``).
        ``summary`` is the list of per-file scores (what ``jurist score rgb --json`` prints).
        """
        chosen = _rgb_options(options)
        paths: list[Path] = []
        for path in run if isinstance(run, list) else [Path(run)]:
            found = (
                sorted(
                    file
                    for file in Path(path).rglob("prediction_*.json")
                    if not file.name.endswith(_SCORE_FILES)
                )
                if Path(path).is_dir()
                else []
            )
            paths.extend(found or [Path(path)])
        results = score_rgb_predictions(
            paths,
            recheck=chosen.recheck,
            language=chosen.language,
            duplicates=chosen.duplicates,
            judgment=chosen.judgment,
        )
        scores = Scores(items=pd.DataFrame(results), summary=results)
        scores.report = self.report(scores)
        return scores

    def report(self, scores: Scores) -> str:
        summary: Any = scores.summary
        return render_rgb_scores(summary) if isinstance(summary, list) else render_rgb_report(summary)

    def figures(self, scores: Scores, options: BaseModel) -> list[Figure]:
        """A suite: accuracy against noise rate, rejection and counterfactual robustness;
        prediction files: accuracy against noise rate (see :mod:`jurist.tasks.rgb.figures`)."""
        summary: Any = scores.summary
        return predictions_figures(summary) if isinstance(summary, list) else suite_figures(summary)


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

    def make_judge(self, config: JudgeConfig, options: BaseModel) -> Judge:
        return make_rgb_judge(self.kind, config)

    def summarize(self, items: pd.DataFrame, options: BaseModel, gold: str | Path | None) -> dict[str, Any]:
        return summarize_judgments(self.kind, items, gold)

    def score(
        self,
        run: str | Path | list[Path],
        options: BaseModel,
        *,
        gold: str | Path | None = None,
        write: bool = False,
    ) -> Scores:
        """Score a recorded run; with ``gold``, the per-item table also holds the gold label
        (``gold_<label>``) and ``agrees`` (see :func:`~jurist.tasks.rgb.figures.with_gold_labels`)."""
        scores = super().score(run, options, gold=gold, write=False)
        if gold is not None:
            scores.items = with_gold_labels(self.kind, scores.items, read_judgments(gold))
        path = Path(run[0] if isinstance(run, list) else run)
        if write and path.is_dir():
            with run_lock(path):
                write_exports(path, scores, iter_run_results(path))
        return scores

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

    def calibration_row(
        self,
        gold: str | Path,
        spec: JudgeSpec,
        out: Path,
        settings: dict[str, Any],
        progress: bool,
        judge_by: JudgeBy | None = None,
    ) -> tuple[dict[str, Any], pd.DataFrame]:
        return calibrate_rgb_judge(self, self.kind, gold, spec, out, settings, progress, judge_by)

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
