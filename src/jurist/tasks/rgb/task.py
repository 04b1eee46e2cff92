"""The RGB tasks: ``rgb`` (the robustness suite of a model under test, and RGB's prediction
files) and ``rgb-rejection`` / ``rgb-error-detection`` (the Rej* and ED* judges on their own,
defined in :mod:`jurist.tasks.rgb.judgment_tasks`)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import pandas as pd
from pydantic import BaseModel

from jurist.errors import ConfigError
from jurist.judges.config import JudgeConfig
from jurist.report.figures import Figure
from jurist.tasks._contract import JudgeRun, Recipe, Scores, Task
from jurist.tasks._other_files import OtherFiles
from jurist.tasks.rgb.figures import predictions_figures, suite_figures
from jurist.tasks.rgb.judges import RGB_JUDGE_TASKS
from jurist.tasks.rgb.judgment_tasks import RGBErrorDetectionTask, RGBJudgmentTask, RGBRejectionTask
from jurist.tasks.rgb.options import RGBOptions
from jurist.tasks.rgb.predictions import score_rgb_predictions
from jurist.tasks.rgb.report import render_rgb_report, render_rgb_scores

if TYPE_CHECKING:
    from jurist.tasks.rgb.suite import RGBSuiteRun

__all__ = ["RGBErrorDetectionTask", "RGBJudgmentTask", "RGBRejectionTask", "RGBTask", "suite_scores"]

_RUN_COLUMNS = ("items", "ok", "failed", "all_rate", "tt", "nums", "rejection_share")
_FACT_COLUMNS = ("fact_check_rate", "correct_rate", "fact_tt", "correct_tt", "detected_rejections")
_SCORE_FILES = ("_result.json", "_chatgptresult.json")
"""The score files RGB's scripts write next to their prediction files (not predictions)."""


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

    def plan(self, data: str | Path, options: BaseModel) -> Recipe:
        """RGB's suite on ``data`` (a directory of RGB files, one of them, or ``sample:rgb``):
        for each (set, setting) an ordinary run of the model under test and, for the
        rejection and counterfactual sets, one of its Rej*/ED* judge (see
        :func:`jurist.tasks.rgb.suite.suite_recipe`)."""
        from jurist.tasks.rgb.suite import suite_recipe

        return suite_recipe(data, _rgb_options(options))

    def combine(
        self, recipe: Recipe, runs: Mapping[str, JudgeRun], out: Path, config: JudgeConfig, options: BaseModel
    ) -> Scores:
        """The suite's prediction files, ``summary.json``, ``report.md`` and chart; one row per
        run (see :func:`jurist.tasks.rgb.suite.combine_suite`)."""
        from jurist.tasks.rgb.suite import combine_suite

        return suite_scores(combine_suite(recipe, runs, out, config, _rgb_options(options)))

    def summary_lines(self, run: JudgeRun) -> list[str]:
        lines = [*render_rgb_report(run.summary).split("\n"), f"report: {run.run_dir / 'report.md'}"]
        if run.summary.get("chart"):
            lines.append(f"chart: {run.summary['chart']}")
        return lines

    def other_files(self, options: BaseModel) -> list[OtherFiles]:
        """RGB's prediction files, scored as RGB's evaluation scores them (no model is called).

        A directory stands for the prediction files under it (e.g. the ``--out`` of a suite, or
        RGB's ``result-en``), without the score files RGB writes next to them
        (``..._result.json``, ``..._chatgptresult.json``). The scores' ``summary`` is the list
        of per-file scores (what ``jurist score rgb --json`` prints).
        """
        return [OtherFiles("RGB prediction files", lambda path: True, self._score_predictions, several=True)]

    def _score_predictions(self, given: list[Path], options: BaseModel, gold: str | Path | None) -> Scores:
        chosen = _rgb_options(options)
        paths: list[Path] = []
        for path in given:
            found = sorted(path.rglob("prediction_*.json")) if path.is_dir() else []
            found = [file for file in found if not file.name.endswith(_SCORE_FILES)]
            paths.extend(found or [path])
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
