"""The RGB suite: every set the paper reports, on the RGB files of a directory.

:func:`run_rgb_suite` finds the files, plans the runs (noise robustness at noise rates
0-0.8, negative rejection at noise rate 1, information integration, counterfactual
robustness; see :mod:`jurist.tasks.rgb.plan`), runs each with
:func:`jurist.tasks.rgb.run_rgb` in its own resumable run directory, then writes
``summary.json``, ``report.md`` (tables shaped like the paper's) and a chart of accuracy
against noise rate.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from jurist.atomic import atomic_write_text
from jurist.datasets.rgb import LANGUAGES, RGB_SEED, RGBDataset, check_preparation, load_rgb, load_rgb_prompts
from jurist.errors import ConfigError, InputError
from jurist.judges.config import JudgeConfig, load_config
from jurist.metrics.rgb import AnswerCheck
from jurist.report.jsonout import dumps
from jurist.runner import RESULTS_DB, ResultStore
from jurist.schemas import Usage
from jurist.tasks.rgb.judges import (
    INTEGRATION_NOISE_RATES,
    NOISE_RATES,
    PASSAGE_NUM,
    RGB_JUDGE_TASKS,
    SETS,
    TASK,
    JudgeKind,
    rgb_judge_configs,
)
from jurist.tasks.rgb.plan import find_rgb_files, plan_rgb_suite
from jurist.tasks.rgb.run import RGBRun, run_rgb


@dataclass
class RGBSuiteRun:
    """A finished :func:`run_rgb_suite`: its runs, the summary (as in ``summary.json``) and files."""

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


def run_rgb_suite(
    data_dir: str | Path,
    out_dir: str | Path,
    config: JudgeConfig | str | Path | None = None,
    *,
    judge_config: JudgeConfig | None = None,
    judge_programs: Sequence[str | Path] = (),
    sets: Sequence[str] = SETS,
    languages: Sequence[str] = LANGUAGES,
    noise_rates: Sequence[float] = NOISE_RATES,
    integration_noise_rates: Sequence[float] = INTEGRATION_NOISE_RATES,
    passage_num: int = PASSAGE_NUM,
    counterfactual_noise_rate: float = 0.0,
    correct_rate: float = 0.0,
    closed_book: bool = True,
    prefer: Literal["refine", "plain"] = "refine",
    instructions: str | Path | None = None,
    seed: int = RGB_SEED,
    limit: int | None = None,
    answer_check: AnswerCheck = "original",
    chart: bool = True,
    retry_failed: bool = False,
    progress: bool = True,
    log: Callable[[str], None] | None = None,
) -> RGBSuiteRun:
    """Run RGB's whole evaluation on one model and write the summary, report and chart.

    Every (set, setting) gets its own resumable run directory under ``out_dir`` (see
    :func:`run_rgb`); running the same command again skips what is finished. Sets whose
    files are missing are skipped and listed with the reason.

    Args:
        data_dir: A directory with RGB's files named as RGB names them (``en.json``,
            ``zh_refine.json``, ``en_int.json``, ``zh_fact.json``, ...), or ``sample:rgb``.
        out_dir: Where the runs, ``summary.json``, ``report.md`` and the chart go.
        config: The model under test (``JudgeConfig``, YAML path, or ``None`` for the offline
            extractive responder).
        judge_config: The LM of the Rej* and ED* judges; ``None`` uses the keyword judges.
        judge_programs: Compiled Rej*/ED* programs (artifacts of ``jurist optimize
            rgb-rejection`` / ``rgb-error-detection``), each run by the judge it was compiled
            for (see :func:`rgb_judge_configs`); checked before any model call.
        sets: Which of ``noise``, ``rejection``, ``integration``, ``counterfactual`` to run.
        languages: Which of ``en``, ``zh`` to run.
        noise_rates: Noise-robustness noise rates (paper: 0, 0.2, 0.4, 0.6, 0.8).
        integration_noise_rates: Integration noise rates (paper: 0, 0.2, 0.4).
        passage_num: Passages per instance (paper: 5).
        counterfactual_noise_rate: Noise rate of the counterfactual run.
        correct_rate: Share of correct passages in the counterfactual run (RGB's ``--correct_rate``).
        closed_book: Also run the counterfactual questions without passages (the paper's Acc).
        prefer: Which of ``{lang}_refine`` and ``{lang}`` to use when both exist.
        instructions: A YAML file of prompts shaped like RGB's ``config/instruction.yaml``
            (default: the bundled copy of RGB's).
        seed: The seed re-set before every instance (RGB: 2333).
        limit: Only the first ``limit`` rows of every file.
        answer_check: ``original`` (RGB's check only) or ``improved`` (jurist's figures are
            added next to RGB's, never in their place).
        chart: Write ``accuracy_vs_noise.png`` (when a noise or integration set ran).
        retry_failed: Answer and judge items recorded as failed again.
        progress: Show progress bars on stderr.
        log: Called with one line per run started and per note (e.g. ``print``).
    """
    from jurist.report.rgb import rgb_tables, write_accuracy_chart, write_rgb_report

    responder_config = config if isinstance(config, JudgeConfig) else load_config(config)
    say = log or (lambda _line: None)
    files = find_rgb_files(data_dir)
    plan = plan_rgb_suite(
        files,
        sets=sets,
        languages=languages,
        noise_rates=noise_rates,
        integration_noise_rates=integration_noise_rates,
        passage_num=passage_num,
        counterfactual_noise_rate=counterfactual_noise_rate,
        correct_rate=correct_rate,
        closed_book=closed_book,
        prefer=prefer,
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
            path=data_dir,
        )
    judges = rgb_judge_configs(judge_config, judge_programs)
    prompts = None if responder_config.is_baseline else load_rgb_prompts(instructions)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    notes = [f"skipped {entry['set']} ({entry['language']}): {entry['reason']}" for entry in plan.skipped]
    for note in notes:
        say(note)
    loaded: dict[Path, RGBDataset] = {}
    runs: list[RGBRun] = []
    for setting in plan.settings:
        if setting.path not in loaded:
            loaded[setting.path] = load_rgb(
                setting.path, language=setting.language, kind=setting.kind, limit=limit
            )
        say(f"run {setting.name} ({setting.set})")
        runs.append(
            run_rgb(
                setting,
                out,
                responder_config,
                judge_config=judges[setting.judge] if setting.judge is not None else None,
                prompts=prompts,
                seed=seed,
                answer_check=answer_check,
                retry_failed=retry_failed,
                progress=progress,
                dataset=loaded[setting.path],
            )
        )
    run_scores = [
        run.scores | {"run_dir": str(run.run_dir), "predictions": str(run.predictions)} for run in runs
    ]
    summary: dict[str, Any] = {
        "task": TASK,
        "model": responder_config.model,
        "responder": runs[0].scores["responder"] if runs else None,
        "judge_model": _judge_description(judges),
        "judge_programs": {
            RGB_JUDGE_TASKS[kind]: str(judge.program)
            for kind, judge in judges.items()
            if judge is not None and judge.program is not None
        },
        "data_dir": str(data_dir),
        "files": {name: str(entry.path) for name, entry in files.items()},
        "settings": {
            "passage_num": passage_num,
            "noise_rates": [float(rate) for rate in noise_rates],
            "integration_noise_rates": [float(rate) for rate in integration_noise_rates],
            "counterfactual_noise_rate": counterfactual_noise_rate,
            "correct_passage_rate": correct_rate,
            "seed": seed,
            "limit": limit,
            "answer_check": answer_check,
            "temperature": responder_config.temperature,
        },
        "skipped": plan.skipped,
        "runs": run_scores,
        "tables": rgb_tables(run_scores),
        "items": sum(scores["items"] for scores in run_scores),
        "failed": sum(scores["failed"] for scores in run_scores),
        "usage": _usage(runs).model_dump(),
    }
    if answer_check == "improved":
        summary["tables_improved"] = rgb_tables(
            [scores | {key: value for key, value in scores["improved"].items()} for scores in run_scores]
        )
    chart_path = None
    if chart and summary["tables"]["noise_robustness"] | summary["tables"]["integration"]:
        chart_path = write_accuracy_chart(out / "accuracy_vs_noise.png", summary)
    summary["chart"] = str(chart_path) if chart_path else None
    summary["notes"] = notes
    atomic_write_text(out / "summary.json", dumps(summary, ensure_ascii=False))
    report = write_rgb_report(out / "report.md", summary)
    return RGBSuiteRun(out_dir=out, runs=runs, summary=summary, report=report, chart=chart_path, notes=notes)


__all__ = ["RGBSuiteRun", "run_rgb_suite"]
