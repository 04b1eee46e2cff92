"""The verbs over any task: judge, score, calibrate, optimize, prompt.

Each takes a task (a registered name, a path to a YAML task file, or a
:class:`~jurist.tasks.Task`) and calls the task's hooks; none of them names a task.
These are the public Python API (``jurist.judge``, ``jurist.score``, ...) and what the
CLI's generic commands call.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from contextlib import AbstractContextManager, ExitStack, nullcontext
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import BaseModel

from jurist.errors import ConfigError
from jurist.judges.config import JudgeConfig, load_config
from jurist.jury.loop import one_judge, run_judgment
from jurist.report.calibrate import (
    LEADERBOARD_COLUMNS,
    Calibration,
    CalibrationThresholds,
    GateCheck,
    write_calibration,
)
from jurist.runner.budget import check_priced_configs, spending_limit
from jurist.runner.scale import Scale, parse_backend, parse_workers, scaling
from jurist.tasks._contract import JudgedItems, JudgeRun, Scores, Task, write_views
from jurist.tasks._estimate import Estimate
from jurist.tasks._metric import computed_metrics
from jurist.tasks._registry import get_task
from jurist.tasks._selection import Selection, selection_of
from jurist.tasks.calibration_rows import JudgeSpec
from jurist.verbs._data import (
    INPUT,
    Data,
    Rows,
    data_files,
    data_list,
    hashed_file,
    no_folder_if_refused,
    path_or_rows,
    reading,
    run_input,
    temporary_files,
)

__all__ = ["calibrate", "default_run_dir", "estimate", "judge", "judge_specs", "optimize", "prompt", "score"]

TaskRef = str | Path | Task
ConfigRef = JudgeConfig | str | Path | None


def _config(config: ConfigRef) -> JudgeConfig:
    return config if isinstance(config, JudgeConfig) else load_config(config)


def default_run_dir(task: Task, data: str | Path, config: JudgeConfig) -> Path:
    """``runs/TASK/DATA-JUDGE``: where ``judge`` writes when no ``out`` is given (stable, so a
    second call resumes the first). ``DATA`` is the data file's stem (for rows given in
    memory, ``rows-`` and 12 hex digits of their SHA-256)."""
    judge_name = "baseline" if config.is_baseline else config.model.replace("/", "_")
    stem = Path(str(data).removeprefix("sample:")).stem or "data"
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in task.name)
    return Path("runs") / safe / f"{stem}-{judge_name}-{config.fingerprint()}"


def _default_out(task: Task, name: str, config: ConfigRef, repeats: int, overrides: Any = None) -> Path:
    """The run directory ``judge`` chooses for data named ``name`` when no ``out`` is given."""
    if _is_cascade(config) or _is_jury(config) or repeats != 1:
        from jurist.jury import default_out

        return default_out(task, name, config, repeats=repeats, overrides=overrides)
    return default_run_dir(task, name, _config(config))


def judge(
    task: TaskRef,
    data: Data,
    config: ConfigRef = None,
    *,
    out: str | Path | None = None,
    options: dict[str, Any] | BaseModel | None = None,
    retry_failed: bool = False,
    progress: bool = True,
    repeats: int = 1,
    max_cost: float | None = None,
    workers: int | str = 1,
    backend: str = "local",
    ray_address: str | None = None,
    limit: int | None = None,
    sample: int | None = None,
    seed: int | None = None,
) -> JudgedItems:
    """Judge every row of ``data`` with a task's judge into a run directory.

    The config names the judge (``None``: the task's offline baseline). Running again into
    the same directory resumes: finished items are kept and not judged again. Failed items
    are recorded with their raw answers and never scored. Next to the exports, the run
    directory gets its HTML report (``report.html``, with ``figures.json`` and ``review.json``).

    Args:
        task: A registered name, a YAML task file, or a :class:`Task`.
        data: The rows to judge: a data file, ``sample:NAME``, a pandas DataFrame or a list
            of dicts. Rows given in memory are kept in the run directory as ``input.jsonl``
            (``docs/formats.md``); the same rows given again resume the run, other rows into
            the same directory are refused.
        config: A judge config, its YAML path, ``None`` for the offline baseline, a jury
            file (``docs/juries.md``: each juror is judged into ``out/jurors/NAME``, the
            jury's verdicts into ``out``), or a cascade file (``docs/cascades.md``: each stage
            into ``out/stages/NAME`` on the items the one before was unsure of).
        out: The run directory (default: :func:`default_run_dir`).
        options: The task's options (``jurist tasks show TASK`` lists them).
        retry_failed: Judge items recorded as failed again.
        progress: Show a progress bar on stderr.
        repeats: Ask the judge (each juror) this many times, into ``out/repeats/1..K``, and
            aggregate the answers like a jury's.
        max_cost: Stop once this many dollars are spent (what the run directories under it
            recorded before counts too; cached answers cost nothing): no item is started
            after the limit is reached, items in flight are recorded, and
            :class:`~jurist.errors.CostLimitReached` is raised. The same call with a higher
            limit (or none) resumes (``docs/costs.md``).
        workers: Local processes that judge: a number, or ``"auto"`` (one for small runs, up
            to one per core for large ones). A script that uses more than one needs the
            ``if __name__ == "__main__":`` guard (``docs/scale.md``).
        backend: ``"local"``, or ``"ray"`` to judge on a Ray cluster (the extra ``jurist[ray]``).
        ray_address: The Ray cluster (default: ``$RAY_ADDRESS``, else one started here).
        limit: Judge only the first ``limit`` rows (to try a judge on a few).
        sample: Judge a random sample of ``sample`` rows, drawn with ``seed`` (default 0).
            A task whose verdict is derived from several items (a comparison asked in both
            orders) keeps them together. The selection is recorded in the run's manifest;
            the run directory is resumed only with the same selection, and gold is compared
            on the rows judged.
        seed: The seed of ``sample``.

    Returns:
        The per-item DataFrame; ``.run_dir``, ``.summary`` (as in ``summary.json``),
        ``.report`` (Markdown) and ``.extra`` tell the rest.

    Raises:
        RowError: A row given in memory is bad (named by its 0-based position and field).
        RunDirectoryError: ``out`` holds a run of other data (or other rows).
    """
    found = get_task(task)
    task_options = found.options(options)
    select = selection_of(limit, sample, seed)
    scale = Scale(backend=parse_backend(backend), workers=parse_workers(workers), address=ray_address)
    if _is_cascade(config) and repeats != 1:
        raise ConfigError("a cascade is not repeated; make a stage a jury file instead", field="repeats")
    source = path_or_rows(data, found)
    files: dict[Path, Rows] = {}
    guard: AbstractContextManager[None] = nullcontext()
    if isinstance(source, Rows):
        out = Path(out) if out is not None else _default_out(found, source.name, config, repeats)
        guard = no_folder_if_refused(out)
    with guard:
        if isinstance(source, Rows):
            rows, source = source, run_input(source, Path(str(out)))
            files[source] = rows
        with spending_limit(max_cost), scaling(scale), reading(files):
            if _is_cascade(config):
                from jurist.jury import judge_cascade

                cascade_run = judge_cascade(
                    found,
                    source,
                    str(config),
                    out=out,
                    options=task_options,
                    retry_failed=retry_failed,
                    progress=progress,
                    select=select,
                )
                return _judged(found, cascade_run)
            if repeats != 1 or _is_jury(config):
                from jurist.jury import judge_panel

                panel_run = judge_panel(
                    found,
                    source,
                    config,
                    out=out,
                    options=task_options,
                    repeats=repeats,
                    retry_failed=retry_failed,
                    progress=progress,
                    select=select,
                )
                return _judged(found, panel_run)
            judge_config = _config(config)
            run = judge_run(
                found,
                source,
                out if out is not None else default_run_dir(found, source, judge_config),
                judge_config,
                task_options,
                retry_failed=retry_failed,
                progress=progress,
                select=select,
            )
            return _judged(found, run)


def _judged(task: Task, run: JudgeRun) -> JudgedItems:
    """The table ``judge`` returns, with the task's headline figures of the run."""
    if not run.scores.headline:
        run.scores.headline = task.headline(run.summary)
    return JudgedItems.of(run)


def judge_run(
    task: Task,
    data: str | Path,
    out: str | Path,
    config: JudgeConfig,
    options: BaseModel,
    *,
    retry_failed: bool = False,
    progress: bool = True,
    select: Selection | None = None,
) -> JudgeRun:
    """One judge's run of a task: the judging loop (on the rows ``select`` picks, all by
    default), then the HTML report with its ``figures.json`` and ``review.json`` next to the
    exports (what every judged run gets), its figures served from the figure cache of the
    config's ``cache_dir`` when drawn before (unless the config turns the cache off)."""
    run = run_judgment(
        task, data, out, config, options, retry_failed=retry_failed, progress=progress, select=select
    )
    cache_dir = Path(config.cache_dir) if config.cache else None
    write_views(task, run.run_dir, run.scores, options, cache_dir=cache_dir)
    return run


def score(
    task: TaskRef,
    run: str | Path,
    *,
    gold: Data | None = None,
    options: dict[str, Any] | BaseModel | None = None,
    write: bool = False,
    partial: bool = False,
) -> Scores:
    """Score a recorded run of a task (no model is called), with agreement against ``gold``.

    ``gold`` is a file, ``sample:NAME``, a pandas DataFrame or a list of dicts. With
    ``write`` and a run directory, the exports are written into it, and the HTML report
    with its ``figures.json`` and ``review.json`` next to them; gold rows given in memory
    are then kept there as ``gold-<12 hex digits>.jsonl`` (the file the summary names).

    An unfinished run (killed, stopped, interrupted, or still being judged; a jury's juror or
    a cascade's stage included) is refused unless ``partial``: then the items judged so far are
    scored and ``summary["unfinished"]`` lists the unfinished runs (``judged`` of ``total``).

    Raises:
        UnfinishedRunError: The run is unfinished and ``partial`` is false; the message says
            how many of how many items are judged (see :mod:`jurist.runner.finished`).
    """
    from jurist.runner.finished import check_finished

    found = get_task(task)
    task_options = found.options(options)
    source = None if gold is None else path_or_rows(gold, found)
    unfinished = check_finished([run], partial=partial)
    files: dict[Path, Rows] = {}
    with ExitStack() as stack:
        if isinstance(source, Rows):
            rows = source
            if write and Path(run).is_dir():
                source = hashed_file(rows, Path(run), f"gold-{rows.sha256[:12]}")
            else:
                source = stack.enter_context(temporary_files({"gold.jsonl": rows}))["gold.jsonl"]
            files[source] = rows
        with reading(files):
            scores = found.score(run, task_options, gold=source, write=write)
    if unfinished and isinstance(scores.summary, dict):
        scores.summary["unfinished"] = [item.as_dict() for item in unfinished]
    scores.headline = found.headline(scores.summary)
    if write and Path(run).is_dir():
        from jurist.report.svg_cache import run_cache_dir

        write_views(found, Path(run), scores, task_options, cache_dir=run_cache_dir(Path(run)))
    return scores


def estimate(
    task: TaskRef,
    data: Data,
    config: ConfigRef = None,
    *,
    out: str | Path | None = None,
    options: dict[str, Any] | BaseModel | None = None,
    retry_failed: bool = False,
    repeats: int = 1,
    overrides: dict[str, Any] | None = None,
    limit: int | None = None,
    sample: int | None = None,
    seed: int | None = None,
) -> Estimate:
    """What :func:`judge` with the same arguments would do, calling nothing and writing nothing
    (rows given in memory are read from a temporary file, or from the run's ``input.jsonl``).

    Per judge (each juror of a jury, each stage of a cascade): the items it would judge now
    (those recorded in its run directory are skipped, as a resume skips them), how many the
    response cache answers, the prompt tokens of the others (counted from the exact
    messages), their completion tokens and cost (estimates; the rules are in
    ``docs/costs.md``). A model without a price has an unknown cost, never 0.

    Args:
        task, data, config, out, options, retry_failed, repeats, limit, sample, seed: As for
            :func:`judge`.
        overrides: Judge-config fields applied to every juror or stage of a jury or cascade
            file (the command line's).

    Returns:
        An :class:`~jurist.tasks._estimate.Estimate`: ``.table`` (one row per judge),
        ``.cost`` (``None`` if a model has no price) and ``.lines()`` (what the CLI prints).
    """
    from jurist.tasks._estimate import JudgeTarget, estimate_judges

    found = get_task(task)
    task_options = found.options(options)
    select = selection_of(limit, sample, seed)
    source = path_or_rows(data, found)
    files: dict[Path, Rows] = {}
    with ExitStack() as stack:
        if isinstance(source, Rows):  # judge's input.jsonl, or a temporary copy: nothing is written
            rows = source
            out = Path(out) if out is not None else _default_out(found, rows.name, config, repeats, overrides)
            kept = run_input(rows, out, write=False)
            source = kept if kept.is_file() else stack.enter_context(temporary_files({INPUT: rows}))[INPUT]
            files[source] = rows
        with reading(files):
            if _is_cascade(config) or _is_jury(config) or repeats != 1:
                from jurist.jury import estimate_targets

                targets = estimate_targets(
                    found, source, config, out=out, repeats=repeats, overrides=overrides
                )
            else:
                judge_config = _config(config)
                run_dir = Path(out) if out is not None else default_run_dir(found, source, judge_config)
                name = judge_config.source.stem if judge_config.source is not None else _name_of(config)
                targets = [JudgeTarget(name, judge_config, run_dir)]
            return estimate_judges(
                found, source, targets, task_options, retry_failed=retry_failed, select=select
            )


# ---------------------------------------------------------------------- calibrate


def _is_cascade(source: Any) -> bool:
    from jurist.jury import is_cascade_file

    return is_cascade_file(source)


def _is_jury(source: Any) -> bool:
    from jurist.jury import is_jury_file

    return is_jury_file(source)


def _name_of(source: str | Path | JudgeConfig | None) -> str:
    if source is None or str(source) == "baseline":
        return "baseline"
    if isinstance(source, JudgeConfig):
        return "baseline" if source.is_baseline else source.model.replace("/", "_")
    return Path(source).stem


def judge_specs(configs: Sequence[str | Path | JudgeConfig | JudgeSpec | None]) -> list[JudgeSpec]:
    """Judges from config files (``baseline`` or ``None`` for the offline baseline), named
    after their files (or models), or given as :class:`JudgeSpec`; repeated names get
    ``-2``, ``-3``, ... An empty list gives the baseline alone. A jury file gives a jury
    (:class:`jurist.jury.JurySpec`: a leaderboard row for the jury and one per juror); a
    cascade file a cascade (:class:`jurist.jury.CascadeSpec`: chosen thresholds, a row for the
    cascade and one per stage)."""
    specs: list[JudgeSpec] = []
    seen: dict[str, int] = {}
    for source in configs or [None]:
        if _is_cascade(source):
            from jurist.jury import cascade_spec

            source = cascade_spec(str(source))
        elif _is_jury(source):
            from jurist.jury import jury_spec

            source = jury_spec(str(source))
        if isinstance(source, JudgeSpec):
            name, config = source.name, source.config
        else:
            config = _config(None if source is None or str(source) == "baseline" else source)
            name = _name_of(source)
        seen[name] = seen.get(name, 0) + 1
        unique = name if seen[name] == 1 else f"{name}-{seen[name]}"
        specs.append(
            replace(source, name=unique) if isinstance(source, JudgeSpec) else JudgeSpec(unique, config)
        )
    return specs


def _check_gates(leaderboard: pd.DataFrame, thresholds: CalibrationThresholds) -> list[GateCheck]:
    checks = []
    for gate, column, kind, threshold in thresholds.checks():
        for row in leaderboard.to_dict(orient="records"):
            value = row.get(column)
            present = value is not None and not (isinstance(value, float) and math.isnan(value))
            passed = present and (value >= threshold if kind == "min" else value <= threshold)
            checks.append(
                GateCheck(
                    gate=gate,
                    dataset=str(row["dataset"]),
                    judge=str(row["judge"]),
                    value=float(value) if present else None,
                    threshold=float(threshold),
                    passed=bool(passed),
                )
            )
    return checks


def calibration_settings(
    options: BaseModel, n_resamples: int, confidence: float, seed: int
) -> dict[str, Any]:
    """The settings every calibration row is computed with: the task's options first (so that
    calibrate's own, seed and the rest, are never replaced by them), and the options object."""
    return {
        **options.model_dump(),
        "n_resamples": n_resamples,
        "confidence": confidence,
        "seed": seed,
        "options": options,
    }


def calibration_task(
    task: TaskRef, gold: Sequence[Data], options: dict[str, Any] | BaseModel | None
) -> tuple[Task, BaseModel]:
    """The task a calibration runs and its options, checked: the task can be calibrated and
    at least one gold file is given.

    Raises:
        ConfigError: The task cannot be calibrated, no gold file is given, or bad options.
    """
    found = get_task(task)
    if "calibrate" not in found.verbs:
        raise found.unsupported("be calibrated (it has no gold labels to compare with)")
    if not gold:
        raise ConfigError("give at least one gold file", field="gold")
    return found, found.options(options)


def single_judges(specs: Sequence[JudgeSpec]) -> list[JudgeSpec]:
    """The single judges a calibration of ``specs`` runs: each judge, each juror of a jury,
    each stage of a cascade (:func:`jurist.jury.calibration_judges`)."""
    from jurist.jury import calibration_judges

    return [single for spec in specs for single in calibration_judges(spec)]


def _calibration_rows(
    found: Task,
    gold: Sequence[str | Path],
    specs: list[JudgeSpec],
    out_dir: Path,
    settings: dict[str, Any],
    progress: bool,
    target_agreement: float | None,
) -> tuple[list[dict[str, Any]], list[pd.DataFrame]]:
    from jurist.jury import CascadeSpec, JurySpec, calibration_rows, cascade_calibration_rows
    from jurist.jury.gold_row import calibration_row

    rows: list[dict[str, Any]] = []
    tables: list[pd.DataFrame] = []
    for path in gold:
        for spec in specs:
            if isinstance(spec, CascadeSpec):
                continue  # its thresholds are chosen on every gold file at once, below
            if isinstance(spec, JurySpec):
                found_rows = calibration_rows(found, path, spec, out_dir, settings, progress)
            else:
                judge_by = one_judge(found, spec.config)
                found_rows = [calibration_row(found, path, spec, out_dir, settings, progress, judge_by)]
            for row, by_label in found_rows:
                rows.append(row)
                tables.append(by_label)
    for spec in specs:
        if isinstance(spec, CascadeSpec):
            found_rows = cascade_calibration_rows(
                found, list(gold), spec, out_dir, settings, progress, target_agreement
            )
            rows += [row for row, _ in found_rows]
            tables += [by_label for _, by_label in found_rows]
    return [_with_declared_metrics(found, row) for row in rows], tables


def _with_declared_metrics(task: Task, row: dict[str, Any]) -> dict[str, Any]:
    """A leaderboard row with the task's computed metrics (:class:`jurist.Metric`), taken
    from the summary of the run the row names (``run_dir/summary.json``, scored against the
    gold file), unless the row already has them; a run without them leaves them empty."""
    import json

    metrics = computed_metrics(task.metrics)
    if not metrics:
        return row
    try:
        summary = json.loads(
            (Path(str(row.get("run_dir") or "")) / "summary.json").read_text(encoding="utf-8")
        )
    except (OSError, ValueError):
        summary = {}
    summary = summary if isinstance(summary, dict) else {}
    out = dict(row)
    for metric in metrics:
        for name in (metric.name, f"{metric.name}_low", f"{metric.name}_high"):
            if name not in out and (name == metric.name or name in summary):
                value = summary.get(name)
                out[name] = math.nan if value is None else value
    return out


def calibrate(
    task: TaskRef,
    gold: Data | Sequence[Data],
    configs: Sequence[str | Path | JudgeConfig | JudgeSpec | None] = (),
    *,
    out: str | Path,
    thresholds: CalibrationThresholds | None = None,
    options: dict[str, Any] | BaseModel | None = None,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    progress: bool = False,
    write: bool = True,
    target_agreement: float | None = None,
    max_cost: float | None = None,
) -> Calibration:
    """Run every judge on every gold file and compare each with the gold labels.

    Each judge's runs go to ``OUT/runs/{judge}-{fingerprint}/{dataset}``, so running the
    same calibration again reads finished judgments back instead of calling a provider.

    Args:
        task: A task whose :meth:`~jurist.tasks.Task.calibration` compares with gold.
        gold: Gold sets, each one dataset of the leaderboard: files (``sample:NAME``
            allowed), pandas DataFrames or lists of dicts (one set may be given alone).
            Rows given in memory are kept as ``OUT/data/rows-<12 hex digits>.jsonl``, the
            dataset's name on the leaderboard.
        configs: Judge configs (paths, ``JudgeConfig``s, named :class:`JudgeSpec`s, or
            ``"baseline"``/``None`` for the offline baseline); empty means the baseline alone.
        out: Directory for the judges' run directories and the reports.
        thresholds: Gates (see :class:`CalibrationThresholds`); a value that cannot be
            computed fails its gate.
        options: The task's options (e.g. ``{"num_options": 3}``).
        n_resamples: Bootstrap resamples of the intervals.
        confidence: Confidence level of the intervals.
        seed: Seed of the bootstrap.
        progress: Show the runner's progress bars.
        write: Write ``leaderboard.md``, ``leaderboard.html``, ``leaderboard.csv``,
            ``by_label.csv`` and ``calibration.json`` into ``out``.
        target_agreement: The agreement with gold a cascade's thresholds must reach (instead
            of its file's ``target_agreement``); the choice is in ``settings["cascades"]``.
        max_cost: Stop once every judge on every gold file together (jurors and stages
            included) has spent this many dollars, as :func:`judge` stops: what their run
            directories recorded before counts, cached answers cost nothing. Only the runs
            are written then (no leaderboard); the same call with a higher limit (or none)
            resumes to the leaderboard of a calibration without one.
            :func:`estimate_calibration` says what it would cost first.

    Raises:
        ConfigError: The task cannot be calibrated, a config is invalid, or ``max_cost`` is
            set and a judge's model has no price (refused before anything is judged).
        InputError: A gold file is malformed or holds no gold label (a
            :class:`~jurist.errors.RowError` names a bad row given in memory).
        CostLimitReached: The spend reached ``max_cost``; ``.run_dir`` is the run it stopped.
    """
    sets = data_list(gold)
    found, task_options = calibration_task(task, sets, options)
    out_dir = Path(out)
    specs = judge_specs(list(configs))
    settings = calibration_settings(task_options, n_resamples, confidence, seed)
    with ExitStack() as stack, spending_limit(max_cost):
        if max_cost is not None:
            check_priced_configs(single.config for single in single_judges(specs))
        paths, files = data_files(found, sets, out_dir / "data", stack)
        with reading(files):
            rows, tables = _calibration_rows(
                found, paths, specs, out_dir, settings, progress, target_agreement
            )
    leaderboard = pd.DataFrame(rows)
    declared = {metric.name: metric.description for metric in computed_metrics(found.metrics)}
    extra = sorted(c for c in leaderboard.columns if c not in LEADERBOARD_COLUMNS)
    leaderboard = leaderboard.reindex(columns=LEADERBOARD_COLUMNS + extra)
    order = {name: i for i, name in enumerate(dict.fromkeys(leaderboard["dataset"]))}
    leaderboard = (
        leaderboard.assign(_order=leaderboard["dataset"].map(order))
        .sort_values(["_order", "kappa"], ascending=[True, False], na_position="last", kind="stable")
        .drop(columns="_order")
        .reset_index(drop=True)
    )
    label_columns = ["dataset", "judge", "side", "label", "n", "agreed", "rate", "rate_low", "rate_high"]
    by_label = pd.concat(tables, ignore_index=True).reindex(columns=label_columns)
    settings.pop("options")
    if declared:
        settings["metrics"] = declared
    result = Calibration(
        task=found.name,
        leaderboard=leaderboard,
        by_label=by_label,
        gates=_check_gates(leaderboard, thresholds or CalibrationThresholds()),
        settings={**settings, "judges": [spec.name for spec in specs], "gold": [str(g) for g in paths]},
        out_dir=out_dir,
    )
    if write:
        write_calibration(result, out_dir)
    return result


# ---------------------------------------------------------------------- optimize


def optimize(
    task: TaskRef,
    train: Data,
    dev: Data,
    config: ConfigRef,
    *,
    out: str | Path,
    options: dict[str, Any] | BaseModel | None = None,
    **kwargs: Any,
) -> Any:
    """Compile a task's LLM judge against gold labels and write a versioned artifact.

    ``train``, ``dev`` (and ``test``) are files, ``sample:NAME``, pandas DataFrames or lists
    of dicts; rows given in memory are kept beside the artifact ``out`` as
    ``STEM.train-<12 hex digits>.jsonl`` (``.dev-``, ``.test-``), the files its ``data``
    records. ``kwargs`` go to :func:`jurist.optimization.optimize` (``optimizer``, ``test``,
    ``prompt_config``, ``settings``). Returns its :class:`~jurist.optimization.OptimizeResult`.
    """
    from jurist.optimization import optimize as compile_judge

    found = get_task(task)
    if "optimize" not in found.verbs:
        raise found.unsupported("be optimized")
    validated = found.options(options)
    artifact = Path(out)
    splits = {
        "train": train,
        "dev": dev,
        **({"test": kwargs["test"]} if kwargs.get("test") is not None else {}),
    }
    files: dict[Path, Rows] = {}
    paths: dict[str, str | Path] = {}
    for split, data in splits.items():
        source = path_or_rows(data, found)
        if isinstance(source, Rows):
            rows = source
            source = hashed_file(rows, artifact.parent, f"{artifact.stem}.{split}-{rows.sha256[:12]}")
            files[source] = rows
        paths[split] = source
    kwargs.update({"test": paths["test"]} if "test" in paths else {})
    with reading(files):
        return compile_judge(
            found, paths["train"], paths["dev"], _config(config), out=out, options=validated, **kwargs
        )


# ---------------------------------------------------------------------- prompt


def prompt(
    task: TaskRef,
    data: Data,
    config: ConfigRef = None,
    *,
    row: int = 0,
    options: dict[str, Any] | BaseModel | None = None,
) -> list[dict[str, Any]]:
    """The exact messages the judge would send for one row, without calling anything.

    With a config that names the offline baseline, the messages are those of the task's
    uncompiled LLM program (what a model would see). A compiled program (``program`` in
    the config) shows its instructions and demos.

    ``data`` is a file, ``sample:NAME``, a pandas DataFrame or a list of dicts (read from a
    temporary file: nothing is written); ``row`` counts from 0.

    Returns:
        One entry per judge call of the row: ``{"item": id, "messages": [{"role", "content"}]}``.
    """
    from jurist.datasets.samples import resolve_input
    from jurist.judges.judge import LLMJudge
    from jurist.judges.prompting import capture_messages

    found = get_task(task)
    task_options = found.options(options)
    judge_config = _config(config)
    if judge_config.is_baseline and judge_config.program is None:
        judge_config = judge_config.model_copy(update={"model": "openai/prompt-preview"})
    # Nothing is sent and nothing cached: no key is needed, no cache directory is made.
    judge_config = judge_config.model_copy(update={"api_key_env": None, "cache": False})
    made = found.make_judge(judge_config, task_options)
    if not isinstance(made, LLMJudge):
        raise found.unsupported("show a prompt (its judge sends no messages)")
    source = path_or_rows(data, found)
    with ExitStack() as stack:
        files: dict[Path, Rows] = {}
        if isinstance(source, Rows):
            rows = source
            source = stack.enter_context(temporary_files({INPUT: rows}))[INPUT]
            files[source] = rows
        with reading(files):
            dataset = found.read(resolve_input(source), task_options)
            items = found.row_items(dataset, task_options, row)
    return [
        {"item": item.id, "messages": capture_messages(made.program, made.config, item.inputs)}
        for item in items
    ]
