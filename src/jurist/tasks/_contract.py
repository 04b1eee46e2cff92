"""The task contract: what one kind of judgment must say so every jurist verb works on it.

A :class:`Task` is the single object behind ``jurist judge``, ``score``, ``calibrate``,
``optimize`` and ``prompt``. Those verbs (:mod:`jurist.verbs`) never name a task:
they look one up in the registry (:mod:`jurist.tasks._registry`) and call its hooks.

A task says, for one kind of judgment:

- what it is: :attr:`Task.name`, :attr:`Task.description`, and for ``jurist tasks`` its
  :attr:`Task.inputs`, :attr:`Task.outputs` and :attr:`Task.metrics`;
- its options: :attr:`Task.Options`, a pydantic model (``jurist judge pairwise DATA
  --num-options 3`` sets ``num_options``; unknown or invalid options are named errors);
- how rows are read and validated (:meth:`Task.read`; errors name file, row and field) and
  turned into runner items (:meth:`Task.items`);
- its judges (:meth:`Task.make_judge`): the offline baseline for the default config, the
  LLM program (:meth:`Task.program`, parsed and validated by :meth:`Task.postprocess`)
  for a config that names a model, or a compiled program from ``jurist optimize``;
- how recorded results are scored (:meth:`Task.score`, built from the pure functions
  of :mod:`jurist.metrics`) and reported (:meth:`Task.report`);
- how people look at its items (:meth:`Task.review`: which columns are the verdict, the
  gold, the agreement and the confidence, and what label a person may give an item), the
  plots of a scored run (:meth:`Task.figures`), and the gold file that labels people set
  in ``jurist view`` become (:meth:`Task.gold_rows`);
- the rows calibration compares against gold (:meth:`Task.calibration_row`);
- what a jury votes on when its verdict is derived from several items (:meth:`Task.panel_verdicts`);
- the optimization target (:meth:`Task.optimization`, a :class:`~jurist.optimization.TaskAdapter`
  whose metric has textual feedback for GEPA).

The default :meth:`Task.judge` is the whole pipeline (read → items → judge with the batch
runner → score → write exports) built from those hooks; a task overrides a hook only where
its judgment differs. A hook a task cannot serve raises :class:`~jurist.errors.ConfigError`
through :meth:`Task.unsupported`, so ``jurist optimize gates`` says that gates cannot be
optimized rather than failing somewhere inside.

Three ways to add a task: a YAML file (``get_task("file.yaml")``, no code), a subclass
registered with :func:`jurist.register_task`, or a subclass published by another package
under the entry-point group ``jurist.tasks``.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import pandas as pd
from pydantic import BaseModel, ConfigDict, ValidationError

from jurist.errors import ConfigError
from jurist.report.figures import Figure
from jurist.report.review import Review
from jurist.schemas import ItemResult
from jurist.tasks._results import (
    JudgedItems,
    JudgeRun,
    Scores,
    atomic_write_text,
    items_table,
    json_ready,
    run_counts,
    run_info,
    write_exports,
)

if TYPE_CHECKING:
    import dspy

    from jurist.judges.config import JudgeConfig
    from jurist.judges.judge import Judge
    from jurist.optimization import TaskAdapter
    from jurist.runner import Item
    from jurist.tasks._unit_verdicts import UnitVerdicts
    from jurist.tasks.calibration_rows import JudgeSpec

__all__ = [
    "JudgeRun",
    "JudgedItems",
    "NoOptions",
    "Scores",
    "Task",
    "atomic_write_text",
    "json_ready",
    "write_views",
]


class NoOptions(BaseModel):
    """The options of a task that takes none."""

    model_config = ConfigDict(extra="forbid")


class Task:
    """One kind of judgment. Subclass it (or write a YAML task file) to add a judge to jurist.

    Attributes a subclass (or an instance, e.g. one per YAML file) sets:
        name: The registry name (``jurist judge NAME DATA``).
        description: One paragraph: what is judged and what the verdict means.
        inputs: Judge input field -> what it holds (shown by ``jurist tasks``).
        outputs: Output field -> what it holds.
        metrics: Metric name -> what it measures (reported by ``jurist score``).
        Options: The pydantic model of the task's options (defaults: none).
        version: Bumped when the task's judgments change meaning, so old runs are not resumed.
    """

    name: str = ""
    description: str = ""
    inputs: dict[str, str] = {}  # noqa: RUF012 - read-only defaults, set per subclass or instance
    outputs: dict[str, str] = {}  # noqa: RUF012
    metrics: dict[str, str] = {}  # noqa: RUF012
    Options: ClassVar[type[BaseModel]] = NoOptions
    version: str = "1"
    default_data: ClassVar[str | None] = None
    """The data ``jurist judge TASK`` reads when none is given (e.g. a bundled sample)."""
    source: str = "built-in"
    """Where the task comes from: ``built-in``, ``entry point PKG``, or a YAML file's path."""

    # ------------------------------------------------------------------ construction

    def options(self, values: dict[str, Any] | BaseModel | None = None) -> BaseModel:
        """Validate option values into :attr:`Options` (errors name the option)."""
        if isinstance(values, self.Options):
            return values
        if isinstance(values, BaseModel):
            values = values.model_dump()
        try:
            return self.Options.model_validate(dict(values or {}))
        except ValidationError as exc:
            first = exc.errors()[0]
            option = ".".join(str(p) for p in first["loc"]) or None
            message = "unknown option" if first["type"] == "extra_forbidden" else first["msg"]
            known = ", ".join(self.Options.model_fields) or "none"
            raise ConfigError(
                f"task {self.name!r}: {message} (options of this task: {known})",
                field=option.replace("_", "-") if option else None,
            ) from None

    def unsupported(self, verb: str) -> ConfigError:
        """The error a hook raises when this task cannot do ``verb``."""
        return ConfigError(f"task {self.name!r} cannot {verb}", field="task")

    @property
    def verbs(self) -> list[str]:
        """The verbs this task serves (``judge``, ``score``, ``calibrate``, ``optimize``, ``prompt``)."""
        found = ["judge", "score"]
        kind = type(self)
        if kind.calibration_row is not Task.calibration_row:
            found.append("calibrate")
        if kind.optimization is not Task.optimization:
            found.append("optimize")
        if kind.program is not Task.program:
            found.append("prompt")
        if kind.gold_rows is not Task.gold_rows:
            found.append("label")
        return found

    # ------------------------------------------------------------------ reading

    def read(self, path: str | Path, options: BaseModel) -> Any:
        """Read and validate a data file (``sample:NAME`` allowed) into the task's dataset.

        The dataset has ``describe() -> {"path", "sha256", "items"}`` and is what
        :meth:`items` and :meth:`score` take. Bad rows raise
        :class:`~jurist.errors.InputError` naming the file, row and field.
        """
        raise self.unsupported("read data")

    def items(self, dataset: Any, options: BaseModel) -> Iterable[Item]:
        """The runner items of a dataset: an id unique in the run, and the judge's inputs."""
        raise self.unsupported("make judge items")

    def row_items(self, dataset: Any, options: BaseModel, row: int) -> list[Item]:
        """The items of the ``row``-th row (0-based) of a dataset, for ``jurist prompt``."""
        for index, item in enumerate(self.items(dataset, options)):
            if index == row:
                return [item]
        raise ConfigError(f"the data has no row {row} (rows count from 0)", field="row")

    # ------------------------------------------------------------------ judging

    def program(self, options: BaseModel) -> dspy.Module:
        """The uncompiled LLM judge program (a ``dspy.Module`` called with an item's inputs)."""
        raise self.unsupported("run an LLM judge")

    def postprocess(self, prediction: Any, inputs: dict[str, Any], options: BaseModel) -> dict[str, Any]:
        """The validated, JSON-ready output of the LLM program's prediction.

        Raises:
            ValueError: Not a usable verdict (out of range, unknown label, ...); the runner
                asks again and finally records the item as failed with the raw answer.
        """
        return dict(prediction.toDict()) if hasattr(prediction, "toDict") else dict(prediction)

    def baseline(self, options: BaseModel) -> Judge:
        """The offline judge used when the config names no model."""
        raise self.unsupported("judge without a model (no offline baseline)")

    def make_judge(self, config: JudgeConfig, options: BaseModel) -> Judge:
        """The judge a config names: the baseline, the LLM program, or a compiled program."""
        from jurist.errors import InputError
        from jurist.judges.judge import LLMJudge
        from jurist.optimization import load_judge_program

        def postprocess(prediction: Any, inputs: dict[str, Any]) -> dict[str, Any]:
            return self.postprocess(prediction, inputs, options)

        if config.program is not None:
            if not config.program.is_file():
                raise InputError("compiled program not found", path=config.program, field="program")
            adapter = self.optimization(options)
            program, runtime = load_judge_program(
                config, task=adapter.task, program=self.program(options), options=adapter.options()
            )
            judge = LLMJudge(program, runtime, postprocess)
        elif config.is_baseline:
            return self.baseline(options)
        else:
            judge = LLMJudge(self.program(options), config, postprocess)
        judge.verdict_scope = _verdict_scope(self, options, judge.program)
        return judge

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
        """Judge every item of ``data`` into the run directory ``out`` (resumed if it exists),
        then score the run against the gold the data carries and write its exports."""
        from jurist.datasets.samples import resolve_input
        from jurist.judges.judge import effective_config
        from jurist.runner import JudgeRecipe, run_items, run_lock

        path = resolve_input(data)
        dataset = self.read(path, options)
        judge = self.make_judge(config, options)
        effective = effective_config(judge, config)
        description = dataset.describe()
        # One lock over judging and the exports: no other process writes between them.
        with run_lock(out):
            run_items(
                self.items(dataset, options),
                judge,
                out,
                task=self.name,
                task_source=_source_of(self),
                task_options=options.model_dump(mode="json"),
                dataset=description,
                config=effective.model_dump(mode="json"),
                total=description.get("items"),
                concurrency=effective.concurrency,
                retry_failed=retry_failed,
                progress=progress,
                # Other processes (--workers, Ray) rebuild the same judge from this.
                recipe=JudgeRecipe(functools.partial(self.make_judge, options=options), config),
            )
            scores = self.score(Path(out), options, gold=path, write=True)
        return JudgeRun(run_dir=Path(out), scores=scores)

    # ------------------------------------------------------------------ scoring

    def item_row(self, result: ItemResult, options: BaseModel) -> dict[str, Any]:
        """One row of the per-item table for a recorded result (status and usage, plus the verdict)."""
        row = result.table_row()
        row.update((result.output or {}) if result.status == "ok" else {})
        return row

    def summarize(self, items: pd.DataFrame, options: BaseModel, gold: str | Path | None) -> dict[str, Any]:
        """The aggregate figures of a per-item table (and agreement with ``gold``, if given)."""
        return {}

    def summary_lines(self, run: JudgeRun) -> list[str]:
        """What ``jurist judge`` prints after a run: counts, usage and the headline figures."""
        summary = run.summary
        usage = summary.get("usage", {})
        html = run.run_dir / "report.html"
        return [
            f"{summary.get('items', 0)} items: {summary.get('ok', 0)} scored, {summary.get('failed', 0)} "
            f"failed; {usage.get('calls', 0)} provider calls, {usage.get('cache_hits', 0)} cache hits",
            f"report: {run.run_dir / 'report.md'}",
            *([f"html report: {html}"] if html.is_file() else []),
        ]

    def report(self, scores: Scores) -> str:
        """The Markdown report of a scored run (what ``jurist score`` prints)."""
        from jurist.report.markdown import summary_markdown

        return summary_markdown(self.name, scores.summary)

    def score(
        self,
        run: str | Path | list[Path],
        options: BaseModel,
        *,
        gold: str | Path | None = None,
        write: bool = False,
    ) -> Scores:
        """Score a recorded run (its directory or ``results.jsonl``); no model is called.

        ``run`` is a list when the command line names several files; tasks that score
        several files at once (e.g. RGB prediction files) override this method.

        Failed items are counted and listed, never scored. With ``write`` and a run
        directory, writes ``results.jsonl``, ``items.csv``, ``items.parquet``,
        ``summary.json`` and ``report.md`` into it (each atomically).
        """
        from jurist.runner import iter_run_results

        if isinstance(run, list):
            if len(run) != 1:
                raise ConfigError(f"task {self.name!r} scores one run at a time", field="run")
            run = run[0]
        path = Path(run)
        items = items_table(self.item_row(result, options) for result in iter_run_results(path))
        if items.empty:
            items = pd.DataFrame(columns=["id", "status", "error_type", "error"])
        summary = {**run_counts(items), **self.summarize(items, options, gold)}
        summary["task"] = self.name
        summary.update(run_info(path))
        scores = Scores(items=items, summary=json_ready(summary))
        scores.report = self.report(scores)
        if write and path.is_dir():
            from jurist.runner import run_lock

            with run_lock(path):
                write_exports(path, scores, iter_run_results(path))
        return scores

    # ------------------------------------------------------------------ review

    def review(self, options: BaseModel) -> Review:
        """Which per-item columns people review: verdict, gold, agreement, confidence, and the
        label a person may set (see :class:`~jurist.report.review.Review`)."""
        return Review()

    def panel_verdicts(self, options: BaseModel) -> UnitVerdicts | None:
        """What a jury or ``--repeats`` votes on when the task's verdict is derived from
        several items' outputs (e.g. one comparison asked in both orders): a
        :class:`~jurist.tasks._unit_verdicts.UnitVerdicts`. ``None`` (the default): a panel
        votes per item on the :meth:`review` verdict, one of the task's output fields."""
        return None

    def figures(self, scores: Scores, options: BaseModel) -> list[Figure]:
        """The plots of a scored run (:class:`~jurist.report.figures.Figure`, numbers only).

        The default draws what the :meth:`review` columns allow: a confusion matrix of
        verdict against gold, ROC and reliability curves where there is a confidence, and
        score distributions. A task adds its own (``super().figures(...) + [...]``).
        """
        from jurist.report.standard_figures import review_figures

        return review_figures(scores.items, self.review(options))

    def gold_rows(self, dataset: Any, labels: dict[str, Any], options: BaseModel) -> list[dict[str, Any]]:
        """The rows of a gold file that ``calibrate`` and ``optimize`` read, with the labels
        people set (item id -> label, already checked by the :meth:`review` label) in
        place of the data's own gold.

        Raises:
            ConfigError: The task's items cannot be labelled one value at a time.
        """
        raise self.unsupported("export labels as gold (its items have no single label)")

    # ------------------------------------------------------------------ calibration

    def calibration_row(
        self,
        gold: str | Path,
        spec: JudgeSpec,
        out: Path,
        settings: dict[str, Any],
        progress: bool,
    ) -> tuple[dict[str, Any], pd.DataFrame]:
        """Run one judge on one gold file and compare it with the gold labels.

        Returns the leaderboard row (columns of
        :data:`jurist.report.calibrate.LEADERBOARD_COLUMNS` that apply, plus any of the
        task's own) and the per-label table (``side``, ``label``, ``n``, ``agreed``,
        ``rate``, ``rate_low``, ``rate_high``). ``settings`` holds ``n_resamples``,
        ``confidence``, ``seed`` and ``options`` (the task's options).
        """
        raise self.unsupported("be calibrated (it has no gold labels to compare with)")

    # ------------------------------------------------------------------ optimization

    def optimization(self, options: BaseModel) -> TaskAdapter:
        """The optimization target: program, gold examples, postprocess and metric with feedback."""
        raise self.unsupported("be optimized")

    # ------------------------------------------------------------------ description

    def describe(self) -> dict[str, Any]:
        """What ``jurist tasks show`` prints: every part of the task a user can rely on."""
        options = {
            name: {
                "type": getattr(info.annotation, "__name__", str(info.annotation)),
                "default": json_ready(info.default) if not info.is_required() else None,
                "required": info.is_required(),
                "description": info.description or "",
            }
            for name, info in self.Options.model_fields.items()
        }
        return {
            "name": self.name,
            "source": self.source,
            "description": self.description,
            "inputs": dict(self.inputs),
            "outputs": dict(self.outputs),
            "metrics": dict(self.metrics),
            "options": options,
            "verbs": self.verbs,
        }


def _verdict_scope(task: Task, options: BaseModel, program: Any) -> str:
    """What decides a verdict of ``task`` beyond the judge's fingerprint (the key of its
    finished verdicts, :mod:`jurist.judges.verdicts`): the task's name, version and options,
    the source of its ``postprocess`` (how an answer becomes a verdict), and the typed
    fields of its program's signatures (a label list is a type, not in the program's state)."""
    import hashlib
    import inspect
    import json

    hook = type(task).postprocess
    try:
        reading = inspect.getsource(hook)
    except (OSError, TypeError):
        reading = repr(hook)
    fields = {
        name: {field: repr(info.annotation) for field, info in predictor.signature.fields.items()}
        for name, predictor in program.named_predictors()
    }
    scope = {
        "task": task.name,
        "version": task.version,
        "options": options.model_dump(mode="json"),
        "postprocess": hashlib.sha256(reading.encode("utf-8")).hexdigest(),
        "signatures": fields,
    }
    return json.dumps(scope, sort_keys=True, default=str)


def _source_of(task: Task) -> str:
    """The task's source as the manifest keeps it: a task file's absolute path, else as is."""
    path = Path(task.source)
    return str(path.resolve()) if task.source.endswith((".yaml", ".yml")) and path.is_file() else task.source


def write_views(task: Task, run_dir: Path, scores: Scores, options: BaseModel) -> Path:
    """Write a scored run's ``figures.json``, ``review.json`` and ``report.html``.

    The task's views (``task.figures(scores, options)``, ``task.review(options)``) are
    computed here and handed to the report as values
    (:func:`jurist.report.html.write_run_views`).

    Returns:
        The path of ``report.html``.
    """
    from jurist.report.html import write_run_views

    return write_run_views(
        Path(run_dir),
        figures=list(task.figures(scores, options)),
        review=task.review(options),
        items=scores.items,
        summary=scores.summary,
    )
