"""The ``probe`` verb: an injection probe of a task's judge, judged as ordinary runs.

:func:`probe_injection` judges the probe's recipe (:class:`~jurist.tasks.probes.task.InjectionProbe`:
the clean items, then the attack and control items planted from their verdicts) through the
judging loop (:func:`jurist.jury.loop.run_judgment`) into a run directory, and returns the
report. What a run gets, a probe gets: the response cache, resuming (the same call again
judges nothing it recorded), ``retry_failed``, failed items recorded with their raw answers,
``workers``, a cost limit and each run's manifest.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from jurist.errors import ConfigError
from jurist.judges.config import JudgeConfig, load_config
from jurist.jury.loop import run_judgment
from jurist.runner.budget import spending_limit
from jurist.runner.scale import Scale, parse_workers, scaling
from jurist.tasks._contract import Task
from jurist.tasks._registry import get_task
from jurist.tasks.probes.cases import ProbeCase, load_cases
from jurist.tasks.probes.report import ProbeReport
from jurist.tasks.probes.task import InjectionProbe, ProbeSettings
from jurist.verbs._data import Data, Rows, no_folder_if_refused, path_or_rows, reading, run_input

__all__ = ["default_probe_dir", "probe_injection"]


def default_probe_dir(task: Task, data: str | Path, config: JudgeConfig, settings: ProbeSettings) -> Path:
    """``runs/TASK/DATA-probe-injection-JUDGE-FINGERPRINT-SETTINGS``: where a probe writes when
    no ``out`` is given (stable, so the same probe again resumes the first; other items, cases
    or fields go to another directory)."""
    judge_name = "baseline" if config.is_baseline else config.model.replace("/", "_")
    stem = Path(str(data).removeprefix("sample:")).stem or "data"
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in task.name)
    return (
        Path("runs")
        / safe
        / f"{stem}-probe-injection-{judge_name}-{config.fingerprint()}-{settings.digest()}"
    )


def _cases(cases: Sequence[ProbeCase] | str | Path | None, families: Sequence[str] | None) -> list[ProbeCase]:
    chosen = list(cases) if isinstance(cases, Sequence) and not isinstance(cases, str) else load_cases(cases)
    if families:
        chosen = [case for case in chosen if case.family in families]
        if not chosen:
            raise ConfigError(f"no probe case has family {', '.join(families)}", field="family")
    return chosen


def probe_injection(
    task: str | Path | Task,
    data: Data,
    config: JudgeConfig | str | Path | None = None,
    options: dict[str, Any] | BaseModel | None = None,
    *,
    out: str | Path | None = None,
    limit: int = 3,
    cases: Sequence[ProbeCase] | str | Path | None = None,
    families: Sequence[str] | None = None,
    fields: Sequence[str] | None = None,
    retry_failed: bool = False,
    progress: bool = True,
    workers: int | str = 1,
    max_cost: float | None = None,
) -> ProbeReport:
    """Probe the judge ``config`` names with injected payloads on the first ``limit`` items of ``data``.

    Args:
        task: A registered name, a YAML task file, or a :class:`Task`.
        data: The rows: a data file, ``sample:NAME``, a pandas DataFrame or a list of dicts.
        config: A judge config or its YAML path; ``None``: the task's offline baseline.
        options: The task's options.
        out: The probe's run directory, with its runs ``clean/`` and ``probes/`` (default:
            :func:`default_probe_dir`); resumed if it holds the same probe.
        limit: Probe the first ``limit`` items.
        cases: The probe set, or a probe-set YAML file (default: the bundled injection set).
        families: Only the cases of these families.
        fields: Plant payloads in these inputs only (default: every injectable input).
        retry_failed: Judge again the items recorded as failed.
        progress: Show the progress bars (and each run's line) on stderr.
        workers: Local processes that judge (a number, or ``"auto"``).
        max_cost: Stop once this many dollars are spent (:class:`~jurist.errors.CostLimitReached`).

    Returns:
        The report; its ``run_dir`` is the probe's directory.

    Raises:
        ConfigError: A family matches no case, or an item has no input named in ``fields``.
        InputError: The data has no items.
        RunDirectoryError: ``out`` holds another probe (another judge, data, items, cases or fields).
    """
    found = get_task(task)
    task_options = found.options(options)
    judge_config = config if isinstance(config, JudgeConfig) else load_config(config)
    settings = ProbeSettings(
        cases=tuple(_cases(cases, families)),
        limit=limit,
        fields=tuple(fields) if fields is not None else None,
    )
    source = path_or_rows(data, found)
    files: dict[Path, Rows] = {}
    name = source.name if isinstance(source, Rows) else source
    where = Path(out) if out is not None else default_probe_dir(found, name, judge_config, settings)
    scale = Scale(workers=parse_workers(workers))
    with no_folder_if_refused(where):  # a probe refused before judging leaves no folder behind
        if isinstance(source, Rows):
            rows, source = source, run_input(source, where)
            files[source] = rows
        with spending_limit(max_cost), scaling(scale), reading(files):
            run = run_judgment(
                InjectionProbe(found, settings),
                source,
                where,
                judge_config,
                task_options,
                retry_failed=retry_failed,
                progress=progress,
            )
    report: ProbeReport = run.scores.extra["report"]
    return report
