"""Judging with a cascade: every item by the first stage, and each later stage only on the items
the stage before it was unsure of (:mod:`jurist.jury.cascade_paths`).

Each stage is an ordinary run directory ``DIR/stages/NAME`` (a jury stage's with its jurors
inside) holding only the items sent to it (the judging loop's or the jury's ``only``), resumable
on its own and sharing the response cache. ``DIR`` is the cascade's
run: per item the output of the stage that decided it plus ``cascade`` (``stage``, ``path``:
the stages it went through, ``reasons``: why each one before the last sent it on), with the
usage, raw answers and LM calls of every stage on its path. So ``task.score(DIR)`` scores the
cascade with the task's own scoring, and the HTML report and ``jurist view`` read it like any
run. The cascade's run is rebuilt from its stages' runs on every call
(:mod:`jurist.jury.cascade_build`, no model call), so the same command again resumes every stage
and makes no request for what is done.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from jurist.datasets.samples import resolve_input
from jurist.errors import ConfigError, RunDirectoryError
from jurist.jury.cascade_build import CASCADE_JSON, build_cascade_run
from jurist.jury.cascade_config import Cascade, Stage, load_cascade
from jurist.jury.cascade_paths import StageRecord, stage_record, unsure_reason
from jurist.jury.derived_run import default_dir, read_manifest
from jurist.jury.loop import run_judgment
from jurist.jury.panel import jury_panel
from jurist.jury.run import check_task, run_panel
from jurist.report.review import Review
from jurist.runner import MANIFEST, RESULTS_DB, iter_run_results
from jurist.tasks._contract import JudgeRun, Task, atomic_write_text
from jurist.tasks._results import strict_json
from jurist.tasks._selection import Selection

__all__ = ["STAGES", "check_cascade", "default_cascade_dir", "judge_cascade", "run_cascade"]

STAGES = "stages"


def check_cascade(
    task: Task, options: BaseModel, cascade: Cascade, *, need_thresholds: bool = True
) -> Review:
    """The task's review, once it is clear that ``task`` can run ``cascade``.

    A task whose output holds many labels (:meth:`~jurist.tasks.Task.panel_labels`) passes on
    its whole output per item, so its verdict may follow from the output rather than be a field.

    Raises:
        ConfigError: The task's verdict is not one output field (nor follows from labels a jury
            votes per key); a stage before the last needs a confidence the task does not give, or
            (``need_thresholds``) has no ``escalate_below``; a jury stage cannot be (see
            :func:`jurist.jury.run.check_task`).
    """
    review = task.review(options)
    labelled = review.verdict is not None and task.panel_labels(options) is not None
    if review.verdict is None or (review.verdict not in task.outputs and not labelled):
        outputs = ", ".join(task.outputs) or "none"
        raise ConfigError(
            f"task {task.name!r} cannot have a cascade: its verdict {review.verdict!r} is not one of its "
            f"output fields ({outputs}), and a cascade passes on one output value per item",
            field="task",
        )
    if "cascade" in task.outputs:
        raise ConfigError(
            f"task {task.name!r} cannot have a cascade: its output field 'cascade' is where the path goes",
            field="task",
        )
    path = cascade.path
    for index, stage in enumerate(cascade.stages):
        last = index == len(cascade.stages) - 1
        if stage.kind == "jury" and stage.jury is not None:
            check_task(task, options, jury_panel(stage.jury))
            continue
        needs_confidence = stage.escalate_below is not None or (stage.kind == "model" and not last)
        if needs_confidence and review.confidence is None:
            raise ConfigError(
                f"stage {stage.name!r} sends items on by the judge's confidence, but task {task.name!r} "
                "gives none (its review names no confidence column); make it a jury stage or the last stage",
                path=path,
                line=stage.line,
                field=f"{stage.field}.escalate_below",
            )
        weighed = stage.config is not None and stage.config.logprobs
        if (
            needs_confidence
            and stage.kind == "model"
            and review.confidence not in task.outputs
            and not weighed
        ):
            where = (
                f"config {stage.config.source}"
                if stage.config and stage.config.source
                else "its judge config"
            )
            raise ConfigError(
                f"stage {stage.name!r} sends items on by the judge's confidence, but task {task.name!r} "
                f"states none and {where} asks for no log-probabilities: set logprobs: true there (the "
                "verdict's probability becomes the confidence), or make it a jury stage or the last stage",
                path=path,
                line=stage.line,
                field=f"{stage.field}.escalate_below",
            )
        if need_thresholds and stage.kind == "model" and not last and stage.escalate_below is None:
            raise ConfigError(
                f"stage {stage.name!r} is not the last: give it escalate_below (the confidence below which "
                "its items go on), or let `jurist calibrate TASK --gold FILE -c CASCADE` choose one",
                path=path,
                line=stage.line,
                field=f"{stage.field}.escalate_below",
            )
    return review


def default_cascade_dir(task: Task, data: str | Path, cascade: Cascade) -> Path:
    """``runs/TASK/DATA-cascade-NAME-FINGERPRINT``: where a cascade's run goes without ``out``."""
    return default_dir(task, data, "cascade", cascade.name, cascade.fingerprint())


def judge_cascade(
    task: Task,
    data: str | Path,
    config: str | Path,
    *,
    out: str | Path | None = None,
    options: BaseModel | None = None,
    overrides: Mapping[str, Any] | None = None,
    retry_failed: bool = False,
    progress: bool = True,
    select: Selection | None = None,
) -> JudgeRun:
    """Judge ``data`` with the cascade file ``config`` into ``out`` (see the module docstring).

    Args:
        task: The task.
        data: The rows to judge (``sample:NAME`` allowed).
        config: The cascade file.
        out: The cascade's run directory (default: :func:`default_cascade_dir`).
        options: The task's options (validated).
        overrides: Judge-config fields applied to every stage's judge and juror (the command line's).
        retry_failed: Judge again what a stage failed (unless a later stage answered the item).
        progress: Show each stage's progress bar.
        select: Judge only some rows (``--limit``, ``--sample``): every stage and the cascade.
    """
    cascade = load_cascade(config, overrides)
    task_options = options if options is not None else task.options()
    target = Path(out) if out is not None else default_cascade_dir(task, data, cascade)
    return run_cascade(
        task, cascade, data, target, task_options, retry_failed=retry_failed, progress=progress, select=select
    )


def _claim(out: Path, cascade: Cascade) -> None:
    """Refuse a directory that holds another run; mark it as this cascade's before any stage runs."""
    fingerprint = cascade.fingerprint()
    marker = out / CASCADE_JSON
    found: list[tuple[Any, Any]] = []
    if (out / MANIFEST).is_file():
        manifest = read_manifest(out)
        config = manifest.get("config")
        config = config if isinstance(config, dict) else {}
        found.append((manifest.get("judge"), config.get("cascade_fingerprint")))
    if marker.is_file():
        try:
            recorded = json.loads(marker.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            recorded = {}
        name = recorded.get("name") if isinstance(recorded, dict) else None
        found.append((f"cascade {name}", recorded.get("fingerprint") if isinstance(recorded, dict) else None))
    for judge, recorded in found:
        if (judge, recorded) != (cascade.judge_name, fingerprint):
            raise RunDirectoryError(
                f"{out} holds another run (judge {judge!r}, cascade {recorded}; now {cascade.judge_name!r}, "
                f"cascade {fingerprint}): another cascade, stage or threshold writes its own run directory; "
                "use another --out directory"
            )
    if not marker.is_file():
        out.mkdir(parents=True, exist_ok=True)
        atomic_write_text(marker, strict_json({"name": cascade.name, "fingerprint": fingerprint}))


def _statuses(run_dir: Path) -> dict[str, str]:
    """Item id -> the status a stage's run recorded (nothing before it ran)."""
    if not (run_dir / RESULTS_DB).is_file():
        return {}
    return {result.id: result.status for result in iter_run_results(run_dir)}


def _run_stage(
    task: Task,
    stage: Stage,
    data: str | Path,
    out: Path,
    options: BaseModel,
    ids: set[str],
    retry: bool,
    progress: bool,
    select: Selection | None = None,
) -> JudgeRun:
    """Judge the items ``ids`` (of the rows ``select`` picks) by ``stage`` (its jury, or its
    judge) into ``out``."""
    if stage.kind == "jury" and stage.jury is not None:
        panel = jury_panel(stage.jury)
        return run_panel(
            task, panel, data, out, options, retry_failed=retry, progress=progress, only=ids, select=select
        )
    config = stage.judge_config
    return run_judgment(
        task, data, out, config, options, retry_failed=retry, progress=progress, only=ids, select=select
    )


def run_cascade(
    task: Task,
    cascade: Cascade,
    data: str | Path,
    out: Path,
    options: BaseModel,
    *,
    retry_failed: bool = False,
    progress: bool = True,
    select: Selection | None = None,
) -> JudgeRun:
    """Run the stages in order, each on the items the one before sent on, then build ``out``
    (of the rows ``select`` picks, all by default)."""
    review = check_cascade(task, options, cascade)
    _claim(out, cascade)
    dataset = task.read(resolve_input(data), options)
    items = list(task.items(dataset, options))
    if select is not None:
        items = select.choose(task, dataset, options, items)
    ids = [item.id for item in items]
    records: dict[str, StageRecord] = {}
    sent = list(ids)
    for index, stage in enumerate(cascade.stages):
        if not sent:
            break
        stage_dir = out / STAGES / stage.name
        wanted = set(sent)
        if retry_failed:
            # An item a later stage answered stays escalated: asking this stage again could only
            # leave that later answer in a run the item no longer reaches.
            later = {
                item_id
                for later_stage in cascade.stages[index + 1 :]
                for item_id, status in _statuses(out / STAGES / later_stage.name).items()
                if status == "ok"
            }
            wanted -= {item_id for item_id, status in _statuses(stage_dir).items() if status != "ok"} & later
        run = _run_stage(task, stage, data, stage_dir, options, wanted, retry_failed, progress, select)
        records[stage.name] = record = stage_record(stage_dir, run.scores.items)
        sent = [item_id for item_id in sent if unsure_reason(stage, record, item_id, review) is not None]
    if select is None:
        return build_cascade_run(task, cascade, data, out, options, records)
    return build_cascade_run(task, cascade, data, out, options, records, only=ids, select=select)
