"""The RGB suite: every set the paper reports, on the RGB files of a directory, as a recipe of
ordinary runs with one combined report.

:func:`suite_recipe` finds the files and plans the runs (noise robustness at noise rates
0-0.8, negative rejection at noise rate 1, information integration, counterfactual
robustness; see :mod:`jurist.tasks.rgb.plan`): for each setting, the model under test
answers it (:class:`~jurist.tasks.rgb.parts.RGBAnswers`) in its own resumable run
directory and, for the rejection and counterfactual sets, the Rej* / ED* judge judges the
answers in the directory next to it. :func:`combine_suite` then writes each setting's
prediction file (RGB's format) and ``scores.json``, and the suite's ``summary.json``,
``report.md`` (tables shaped like the paper's) and a chart of accuracy against noise rate.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jurist.atomic import atomic_write_text, atomic_writer
from jurist.datasets.rgb.loader import check_preparation
from jurist.errors import ConfigError, InputError
from jurist.judges.config import JudgeConfig
from jurist.metrics.rgb import AnswerCheck
from jurist.report.jsonout import dumps
from jurist.runner import RESULTS_DB, ResultStore
from jurist.schemas import Usage
from jurist.tasks._contract import JudgeRun, NoOptions, Part, Recipe
from jurist.tasks.rgb.judges import RGB_JUDGE_LABELS, RGB_JUDGE_TASKS, TASK, JudgeKind, rgb_judge_configs
from jurist.tasks.rgb.options import RGBOptions
from jurist.tasks.rgb.parts import RGBAnswerOptions, RGBAnswers, answers_judge
from jurist.tasks.rgb.plan import RGBFile, find_rgb_files, plan_rgb_suite
from jurist.tasks.rgb.run import RGBRun, RGBSetting, prediction_file_name, prediction_record, setting_scores


@dataclass
class RGBSuiteRun:
    """A finished suite: its runs, the summary (as in ``summary.json``) and files."""

    out_dir: Path
    runs: list[RGBRun]
    summary: dict[str, Any]
    report: Path
    chart: Path | None = None
    notes: list[str] = field(default_factory=list)


def _usage(runs: Sequence[RGBRun]) -> Usage:
    total = Usage()
    for run in runs:
        for directory in (run.run_dir, run.judge_dir):
            if directory is not None and (directory / RESULTS_DB).is_file():
                with ResultStore(directory / RESULTS_DB) as store:
                    total = total.add(store.total_usage())
    return total


def _judge_description(judges: dict[JudgeKind, JudgeConfig | None]) -> str | None:
    """The Rej*/ED* judges in one line for the report: the judge model when both use it
    uncompiled, ``None`` when both are keyword judges."""
    configs = list(judges.values())
    if (
        all(judge is not None and judge.program is None for judge in configs)
        and len({judge.model for judge in configs if judge is not None}) == 1
    ):
        first = configs[0]
        return None if first is None or first.is_baseline else first.model
    parts = []
    for kind, judge in judges.items():
        if judge is None or (judge.is_baseline and judge.program is None):
            continue
        model = "" if judge.is_baseline else judge.model
        compiled = f"compiled {judge.program.name}" if judge.program is not None else ""
        label = "Rej*" if kind == "rejection" else "ED*"
        parts.append(f"{label}: {' '.join(part for part in (model, compiled) if part)}")
    return "; ".join(parts) or None


@dataclass(frozen=True)
class SuitePlan:
    """What :func:`combine_suite` needs of a suite's plan (the recipe's ``about``)."""

    data: str
    files: dict[str, RGBFile]
    settings: list[RGBSetting]
    skipped: list[dict[str, str]]
    judges: dict[JudgeKind, JudgeConfig | None]


def _answers_name(setting: RGBSetting) -> str:
    return setting.name


def _judge_name(setting: RGBSetting) -> str:
    assert setting.judge is not None
    return f"{setting.name}.{setting.judge.replace('_', '-')}-judge"


def suite_recipe(data: str | Path, options: RGBOptions) -> Recipe:
    """The runs of RGB's whole evaluation of one model on ``data``, as ``options`` say.

    Every (set, setting) is answered in its own resumable run directory (``<file>/<setting>``)
    and, for the rejection and counterfactual sets, judged next to it
    (``<file>/<setting>.rejection-judge``, ``...error-detection-judge``); running the same
    command again skips what is finished. Sets whose files are missing are skipped and
    listed with the reason (the recipe's notes).

    ``data`` is a directory with RGB's files named as RGB names them (``en.json``,
    ``zh_refine.json``, ``en_int.json``, ``zh_fact.json``, ...), one of them, or ``sample:rgb``.

    Raises:
        InputError: No RGB file for the sets and languages asked for.
        ConfigError: A setting RGB cannot prepare (e.g. too few passages at that rate), or a
            compiled judge program that is not an RGB judge's (checked before any model call).
    """
    files = find_rgb_files(data)
    plan = plan_rgb_suite(
        files,
        sets=options.sets,
        languages=options.languages,
        noise_rates=options.noise_rates,
        integration_noise_rates=options.integration_noise_rates,
        passage_num=options.passage_num,
        counterfactual_noise_rate=options.counterfactual_noise_rate,
        correct_rate=options.correct_rate,
        closed_book=options.closed_book,
        prefer=options.prefer,
    )
    for setting in plan.settings:  # refuse bad settings before any model call
        try:
            check_preparation(setting.kind, setting.noise_rate, setting.passage_num, setting.correct_rate)
        except ValueError as exc:
            raise ConfigError(
                str(exc), field="correct_rate" if setting.kind == "fact" else "noise_rates"
            ) from None
    if not plan.settings:
        reasons = "; ".join(f"{e['set']} ({e['language']}): {e['reason']}" for e in plan.skipped)
        raise InputError(
            f"nothing to run: no RGB file for the sets and languages asked for ({reasons or 'none found'}); "
            "name the files as RGB does (en.json, zh_refine.json, en_int.json, en_fact.json, ...)",
            path=data,
        )
    judges = rgb_judge_configs(options.judge_lm(), list(options.judge_program))
    parts: list[Part] = []
    for setting in plan.settings:
        answers = _answers_name(setting)
        parts.append(
            Part(
                name=answers,
                task=RGBAnswers(setting),
                options=RGBAnswerOptions(
                    language=setting.language,
                    kind=setting.kind,
                    noise_rate=setting.noise_rate,
                    passage_num=setting.passage_num,
                    correct_rate=setting.correct_rate,
                    seed=options.seed,
                    limit=options.limit,
                    instructions=options.instructions,
                ),
                data=setting.path,
                says=f"run {setting.name} ({setting.set})",
            )
        )
        if setting.judge is not None:
            # The default config is the keyword judge, as no judge config is.
            parts.append(
                Part(
                    name=_judge_name(setting),
                    task=answers_judge(setting.judge, setting),
                    options=NoOptions(),
                    reads=answers,
                    config=judges[setting.judge] or JudgeConfig(),
                )
            )
    notes = [f"skipped {entry['set']} ({entry['language']}): {entry['reason']}" for entry in plan.skipped]
    about = SuitePlan(str(data), files, plan.settings, plan.skipped, judges)
    return Recipe(parts=parts, notes=notes, about=about)


def _setting_run(
    setting: RGBSetting,
    runs: Mapping[str, JudgeRun],
    config: JudgeConfig,
    options: RGBOptions,
) -> RGBRun:
    """A setting's records (its judge's verdicts added), scores, prediction file and ``scores.json``."""
    answered = runs[_answers_name(setting)]
    run_dir = answered.run_dir
    records: list[dict[str, Any]] = [dict(record) for record in answered.scores.extra["records"]]
    judge_dir = None
    judge_name = None
    if setting.judge is not None:
        judged = runs[_judge_name(setting)]
        judge_dir = judged.run_dir
        judge_name = judged.summary["run"]["judge"]
        verdicts = judged.scores.extra["verdicts"]
        key = RGB_JUDGE_LABELS[setting.judge]
        for record in records:
            verdict = verdicts.get(str(record["id"]))
            if record["status"] != "ok" or verdict is None:
                continue
            record["judge_status"] = verdict.status
            if verdict.status == "ok" and verdict.output is not None:
                record["judged"] = bool(verdict.output[key])
                record["judge_reason"] = verdict.output.get("reason", "")
    answer_check: AnswerCheck = options.answer_check
    scores = setting_scores(records, setting, answer_check, judge_name)
    scores["responder"] = answered.summary["run"]["judge"]
    scores["setting"] = {
        "set": setting.set,
        "dataset": setting.dataset,
        "language": setting.language,
        "noise_rate": setting.noise_rate,
        "passage_num": setting.passage_num,
        "correct_passage_rate": setting.correct_rate,
        "seed": options.seed,
        "answer_check": answer_check,
    }
    predictions = run_dir / prediction_file_name(setting, config)
    with atomic_writer(predictions) as handle:
        for record in records:
            if record["status"] == "ok":
                handle.write(json.dumps(prediction_record(record["id"], record), ensure_ascii=False) + "\n")
    atomic_write_text(run_dir / "scores.json", dumps(scores, ensure_ascii=False))
    return RGBRun(
        setting=setting,
        run_dir=run_dir,
        records=records,
        scores=scores,
        judge_dir=judge_dir,
        predictions=predictions,
    )


def combine_suite(
    recipe: Recipe, runs: Mapping[str, JudgeRun], out: Path, config: JudgeConfig, options: RGBOptions
) -> RGBSuiteRun:
    """The suite of the finished runs of :func:`suite_recipe`: each setting's prediction file and
    ``scores.json``, then ``summary.json``, ``report.md`` and (with ``options.chart``, when a
    noise or integration set ran) ``accuracy_vs_noise.png`` in ``out``."""
    from jurist.tasks.rgb.report import rgb_tables, write_accuracy_chart, write_rgb_report

    about: SuitePlan = recipe.about
    settings = about.settings
    suite_runs = [_setting_run(setting, runs, config, options) for setting in settings]
    run_scores = [
        run.scores | {"run_dir": str(run.run_dir), "predictions": str(run.predictions)} for run in suite_runs
    ]
    summary: dict[str, Any] = {
        "task": TASK,
        "model": config.model,
        "responder": suite_runs[0].scores["responder"] if suite_runs else None,
        "judge_model": _judge_description(about.judges),
        "judge_programs": {
            RGB_JUDGE_TASKS[kind]: str(judge.program)
            for kind, judge in about.judges.items()
            if judge is not None and judge.program is not None
        },
        "data_dir": about.data,
        "files": {name: str(entry.path) for name, entry in about.files.items()},
        "settings": {
            "passage_num": options.passage_num,
            "noise_rates": [float(rate) for rate in options.noise_rates],
            "integration_noise_rates": [float(rate) for rate in options.integration_noise_rates],
            "counterfactual_noise_rate": options.counterfactual_noise_rate,
            "correct_passage_rate": options.correct_rate,
            "seed": options.seed,
            "limit": options.limit,
            "answer_check": options.answer_check,
            "temperature": config.temperature,
        },
        "skipped": about.skipped,
        "runs": run_scores,
        "tables": rgb_tables(run_scores),
        "items": sum(scores["items"] for scores in run_scores),
        "failed": sum(scores["failed"] for scores in run_scores),
        "usage": _usage(suite_runs).model_dump(),
    }
    if options.answer_check == "improved":
        summary["tables_improved"] = rgb_tables(
            [scores | {key: value for key, value in scores["improved"].items()} for scores in run_scores]
        )
    chart_path = None
    if options.chart and summary["tables"]["noise_robustness"] | summary["tables"]["integration"]:
        chart_path = write_accuracy_chart(out / "accuracy_vs_noise.png", summary)
    summary["chart"] = str(chart_path) if chart_path else None
    summary["notes"] = list(recipe.notes)
    atomic_write_text(out / "summary.json", dumps(summary, ensure_ascii=False))
    report = write_rgb_report(out / "report.md", summary)
    return RGBSuiteRun(
        out_dir=out,
        runs=suite_runs,
        summary=summary,
        report=report,
        chart=chart_path,
        notes=list(recipe.notes),
    )


__all__ = ["RGBSuiteRun", "SuitePlan", "combine_suite", "suite_recipe"]
