"""The task contract: what one kind of judgment must say so every jurist verb works on it.

A :class:`Task` is the single object behind ``jurist judge``, ``score``, ``calibrate``,
``optimize`` and ``prompt``. Those verbs (:mod:`jurist.verbs`) never name a task:
they look one up in the registry (:mod:`jurist.tasks._registry`) and call its hooks.

A task says, for one kind of judgment:

- what it is: :attr:`Task.name`, :attr:`Task.description`, and for ``jurist tasks`` its
  :attr:`Task.inputs`, :attr:`Task.outputs` and :attr:`Task.metrics`;
- its metrics (:attr:`Task.metrics`): named functions of the scored per-item table
  (:class:`~jurist.tasks._metric.Metric`), declared once and computed by :meth:`Task.score`
  into the summary, from where the reports, ``jurist view``, MLflow and the calibration
  leaderboard take them;
- its options: :attr:`Task.Options`, a pydantic model (``jurist judge pairwise DATA
  --num-options 3`` sets ``num_options``; unknown or invalid options are named errors);
- how rows are read and validated (:meth:`Task.read`; errors name file, row and field) and
  turned into runner items (:meth:`Task.items`), and what else decides those items that a
  resumed run directory must share (:meth:`Task.run_identity`);
- its judges, which :meth:`Task.make_judge` composes from its parts: the offline baseline
  (:meth:`Task.baseline`) for the default config, the LLM program (:meth:`Task.program`,
  parsed and validated by :meth:`Task.postprocess`, with the task's DSPy adapter
  :meth:`Task.adapter` and its weighing by log-probabilities :meth:`Task.weigh`) for a
  config that names a model, or a compiled program from ``jurist optimize`` (compiled for
  :attr:`Task.program_task`); where to find an LLM judge when the task has none
  (:attr:`Task.llm_judge_hint`); what of the data a judge needs besides its items
  (:meth:`Task.judge_options`);
- how recorded results are scored (:meth:`Task.score`, built from the pure functions
  of :mod:`jurist.metrics`) and reported (:meth:`Task.report`); a run just judged is scored
  by the same :meth:`Task.score`, inside a block where the dataset it was judged from is
  already read (:func:`jurist.tasks.read_once` of kind ``"dataset"``);
- how gold joins the per-item table when a run is scored against it (:meth:`Task.gold_columns`),
  the tables of units of several items (:meth:`Task.extras`), whether a gold file is
  read at all (:attr:`Task.reads_gold`), and whether a run scored without one is compared
  with the data it judged (:attr:`Task.gold_from_run`), the table exported when a verdict
  spans several items (:attr:`Task.unit_table`), the task's own files written beside the
  exports (:meth:`Task.export_files`, also into :meth:`Task.export_to`), and another run a
  scored run is compared with
  (:meth:`Task.compared_run`, :meth:`Task.comparison`); :meth:`Task.score` composes them, and
  the exports, for every task that scores one run, its parts reading what the run recorded
  through :func:`jurist.tasks.recorded_run`;
- how people look at its items (:meth:`Task.review`: which columns are the verdict, the
  gold, the agreement and the confidence, and what label a person may give an item), the
  plots of a scored run (:meth:`Task.figures`), and the gold file that labels people set
  in ``jurist view`` become (:meth:`Task.gold_rows`);
- how its judged gold items compare with gold (:meth:`Task.calibration`: what of a gold file
  to judge, and its own figures and per-label table of the run; a task whose metrics compare
  with gold is calibrated without writing it). The ``calibrate`` verb judges the gold file
  (one judge, a jury, a cascade) and builds the columns every leaderboard row has, once;
- what a jury votes on when its verdict is derived from several items (:meth:`Task.panel_verdicts`),
  or when one item's output holds many labels (:meth:`Task.panel_labels`);
- what ``jurist optimize`` maximizes: how one judged gold example scores, with feedback in
  words for GEPA (:meth:`Task.example_score`, named :attr:`Task.optimized_metric`), and how
  a gold file becomes examples (:meth:`Task.gold_examples`); the program compiled is the
  task's own (:meth:`Task.optimization_program`), and the DSPy metric is derived from these
  parts by :func:`jurist.optimization.task_metric`.
- for a judgment made of several runs (RGB's suite: noise rates × languages × sets), its
  recipe (:meth:`Task.plan`: the ordinary runs it is made of, each a
  :class:`Part`) and how their runs combine into one report
  (:meth:`Task.combine`), to which a part's scored run hands values rather than writing
  exports (:meth:`Task.combine_values`).

The pipeline (read → items → judge with the batch runner → score → write exports) is not a
hook: :func:`jurist.jury.loop.run_judgment` composes it from these parts for every judged
run, so a task overrides a part only where its judgment differs. A task with a recipe is run
by :func:`jurist.jury.loop.run_recipe`: each part an ordinary run into its own
sub-directory, then the task's :meth:`Task.combine`. No task package calls the runner: the
``calibrate`` verb judges a gold file by a :class:`JudgeBy` (one judge, a jury, a cascade) and
hands the run to the task's comparison. A hook a task cannot serve raises
:class:`~jurist.errors.ConfigError` through :meth:`Task.unsupported`, so ``jurist optimize
gates`` says that gates cannot be optimized rather than failing somewhere inside.

Three ways to add a task: a YAML file (``get_task("file.yaml")``, no code), a subclass
registered with :func:`jurist.register_task`, or a subclass published by another package
under the entry-point group ``jurist.tasks``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import pandas as pd
from pydantic import BaseModel, ConfigDict, ValidationError

from jurist.errors import ConfigError
from jurist.report.console import Headline, compact_table, headline_line
from jurist.report.figures import Figure
from jurist.report.review import Review
from jurist.schemas import ItemResult
from jurist.tasks._calibration import CalibrationPlan, GoldAgreement
from jurist.tasks._metric import Metric, computed_metrics, metric_list, metric_markdown, metric_values
from jurist.tasks._other_files import OtherFiles, scorer_of
from jurist.tasks._read_once import DATASET, read_once, reading_once
from jurist.tasks._recorded_run import RecordedRun, run_manifest, scoring_run
from jurist.tasks._results import (
    JudgedItems,
    JudgeRun,
    Scores,
    atomic_write_text,
    items_table,
    json_ready,
    run_counts,
    run_data_file,
    run_info,
    write_exports,
    write_files,
)
from jurist.tasks._selection import SELECTED

if TYPE_CHECKING:
    import dspy

    from jurist.judges.config import JudgeConfig
    from jurist.judges.judge import Judge, LLMJudge
    from jurist.optimization import MetricResult
    from jurist.runner import Item
    from jurist.tasks._item_labels import ItemLabels
    from jurist.tasks._unit_verdicts import UnitVerdicts

__all__ = [
    "CalibrationPlan",
    "GoldAgreement",
    "JudgeBy",
    "JudgeRun",
    "JudgedItems",
    "Metric",
    "NoOptions",
    "Part",
    "Recipe",
    "Scores",
    "Task",
    "atomic_write_text",
    "finish_scores",
    "json_ready",
    "recorded_options",
    "scored_items",
    "write_views",
]


Postprocess = Callable[[Any, dict[str, Any]], dict[str, Any]]
"""A prediction and its inputs -> the validated, JSON-ready output (``ValueError``: unusable)."""


# ---------------------------------------------------------------------- recipes
#
# A task whose judgment is several ordinary runs gives a :class:`Recipe` (:meth:`Task.plan`):
# its :class:`Part` objects in the order they run. Each part is one ordinary run of the judging
# loop into its own sub-directory of the recipe's output directory, with a task of its own
# (often an internal one that is not registered), its data, options and, when it is not the
# config the command was given, its judge config. A part that judges what an earlier part
# produced names that part in :attr:`Part.reads`: its data is the earlier part's run directory.
# When every part has run, the task combines their runs into one report (:meth:`Task.combine`).


@dataclass(frozen=True)
class Part:
    """One ordinary run of a recipe.

    Attributes:
        name: Its run directory, relative to the recipe's output directory (``/`` allowed,
            e.g. ``zh_refine/noise0.2_passage5``); unique in the recipe.
        task: The task whose judging loop runs it (its name is what the run's manifest records).
        options: That task's validated options.
        data: What the task reads (a path or ``sample:NAME``); unused when :attr:`reads` is set.
        reads: The name of an earlier part whose run directory is this part's data.
        config: The judge config of this part; ``None``: the config the recipe is run with.
        says: A line told before the part runs (e.g. ``run zh_refine/noise0.2_passage5 (noise)``).
    """

    name: str
    task: Task
    options: BaseModel
    data: str | Path | None = None
    reads: str | None = None
    config: JudgeConfig | None = None
    says: str | None = None


@dataclass
class Recipe:
    """The runs a task's judgment is made of (:meth:`Task.plan`), in the order they run.

    Attributes:
        parts: The runs.
        notes: Lines told before any part runs (e.g. sets skipped for want of a file).
        about: What the task's :meth:`Task.combine` needs of the plan (the task's own object).
    """

    parts: list[Part]
    notes: list[str] = field(default_factory=list)
    about: Any = None


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
        metrics: The task's metrics: a mapping name -> what it measures (figures its
            ``summarize`` computes), or a list of :class:`~jurist.tasks._metric.Metric`
            (named functions of the scored per-item table, computed by :meth:`score`).
        Options: The pydantic model of the task's options (defaults: none).
        version: Bumped when the task's judgments change meaning, so old runs are not resumed.
    """

    name: str = ""
    description: str = ""
    inputs: dict[str, str] = {}  # noqa: RUF012 - read-only defaults, set per subclass or instance
    outputs: dict[str, str] = {}  # noqa: RUF012
    metrics: Mapping[str, str] | Sequence[Metric | str] = {}  # noqa: RUF012
    Options: ClassVar[type[BaseModel]] = NoOptions
    version: str = "1"
    default_data: ClassVar[str | None] = None
    """The data ``jurist judge TASK`` reads when none is given (e.g. a bundled sample)."""
    needs_files: ClassVar[str | None] = None
    """``None`` when the task's data may be given as rows in memory (a pandas DataFrame or a
    list of dicts: the verbs write them as JSONL for :meth:`read`); else what the task reads
    instead (e.g. files it tells apart by their names), for the error that refuses rows."""
    optional_inputs: ClassVar[frozenset[str]] = frozenset()
    """Input fields that may be blank by design (a comparison's reference answer): a blank one
    is not warned about (``blank_inputs`` counts the others)."""
    source: str = "built-in"
    """Where the task comes from: ``built-in``, ``entry point PKG``, or a YAML file's path."""
    optimized_metric: str = "score"
    """The name of :meth:`example_score`, reported before and after ``jurist optimize``."""
    demo_threshold: float = 1.0
    """The :meth:`example_score` a judged training example needs for its trace to become a
    few-shot demo (``jurist optimize`` with bootstrap or MIPRO)."""
    program_task: ClassVar[str | None] = None
    """The task a compiled program must have been compiled for (the ``task`` its ``jurist
    optimize`` artifact records) to load into this task's judge; ``None``: this task's own
    name. A recipe's part that runs another task's judge under a name of its own (each RGB
    setting's Rej*/ED* judge) names that task, so it loads that task's artifacts."""
    llm_judge_hint: ClassVar[str | None] = None
    """For a task without an LLM program (:meth:`program`): where to find one, told when a
    judge config names a model or a compiled program (pairwise-gold: ``use `jurist judge
    pairwise` for an LLM judge``); ``None``: the tasks that can are pointed to."""

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
        if kind.calibration is not Task.calibration or self._gold_metrics():
            found.append("calibrate")
        if kind.example_score is not Task.example_score:
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

    def run_identity(self, dataset: Any, options: BaseModel) -> dict[str, Any]:
        """What else decides a dataset's items, besides the data file, the task and the judge
        (e.g. the models a table compares, the number of options): ``{field: value}``.

        :func:`~jurist.jury.loop.run_judgment` records these fields in the manifest's
        ``dataset`` and refuses to resume a run directory whose manifest records another value
        for one of them (:class:`~jurist.errors.RunDirectoryError`). Default: none.
        """
        return {}

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

    def adapter(self, options: BaseModel, name: str) -> Callable[[], Any] | None:
        """How the LLM judge's DSPy adapter (which formats prompts and parses answers) is
        made, for the adapter the judge config names (``name``: ``chat``, ``json``, ...):
        a function of no argument called when the judge is built. ``None`` (the default):
        jurist's adapter of that name (:func:`jurist.judges.adapters.make_adapter`). A YAML
        task's reads a label written with another letter case or spacing as the listed one.
        It does not enter the judge's fingerprint."""
        return None

    def weigh(self, options: BaseModel) -> Callable[[dict[str, Any], Any], dict[str, Any]] | None:
        """How an accepted output is weighed by its reply's token log-probabilities when the
        judge config asks for them (``logprobs: true``): ``weigh(output, logprobs)`` -> the
        output to keep (``logprobs`` is ``None`` when the provider returned none; see
        :mod:`jurist.judges.logprobs`). ``None`` (the default): outputs are kept as
        :meth:`postprocess` gives them."""
        return None

    def load_program(self, config: JudgeConfig, program: dspy.Module, options: BaseModel) -> JudgeConfig:
        """Load the compiled program ``config.program`` names into ``program`` (a fresh
        :meth:`program`, updated in place) and give the config to run it with.

        The default loads an artifact of ``jurist optimize`` compiled for :attr:`program_task`
        with :meth:`program_options` (:func:`jurist.optimization.load_judge_program`): with the
        baseline config (no model given) the artifact's own judge config runs. A task whose
        compiled programs are kept otherwise says how they load (heritage: a directory of
        artifacts, one per sub-program; RGB's model under test: a plain DSPy save).

        Raises:
            InputError: The compiled program is not found.
            ArtifactError: The artifact was compiled for another task or program.
        """
        from jurist.errors import InputError
        from jurist.optimization import load_judge_program

        if config.program is None or not config.program.is_file():
            raise InputError("compiled program not found", path=config.program, field="program")
        _, runtime = load_judge_program(
            config,
            task=self.program_task or self.name,
            program=program,
            options=self.program_options(options),
        )
        return runtime

    def make_judge(self, config: JudgeConfig, options: BaseModel) -> Judge:
        """The judge a config names, made of the task's parts: the :meth:`baseline` when it
        names no model, else the LLM judge of :meth:`program` and :meth:`postprocess` (with
        the task's :meth:`adapter` and :meth:`weigh`), compiled when it names a program
        (loaded into a fresh :meth:`program` by :meth:`load_program`, which gives the
        config to run with). Its finished verdicts are kept under the task's scope
        (:mod:`jurist.judges.verdicts`), which holds what :meth:`judge_options` handed over
        of the data.

        The LLM program of a task whose code is jurist's own (its class and the class's
        ``program`` and ``postprocess``) is built when first needed
        (:meth:`~jurist.judges.judge.LLMJudge.deferred`): a run whose every verdict is
        cached builds it not, nor imports DSPy.

        Raises:
            ConfigError: The config names a model or a compiled program and the task has
                no LLM program (the message says where to find one, :attr:`llm_judge_hint`).
            InputError: The compiled program is not found.
            ArtifactError: The artifact was compiled for another task or program.
        """
        from jurist.judges.judge import LLMJudge

        if (config.program is not None or not config.is_baseline) and type(self).program is Task.program:
            raise self._no_llm_judge()

        def postprocess(prediction: Any, inputs: dict[str, Any]) -> dict[str, Any]:
            return self.postprocess(prediction, inputs, options)

        if config.program is not None:
            program = self.program(options)
            runtime = self.load_program(config, program, options)
            judge = LLMJudge(program, runtime, postprocess)
            judge.verdict_scope = _verdict_scope(self, options, judge.program)
            return self._fitted(judge, options)
        if config.is_baseline:
            return self.baseline(options)
        judge = LLMJudge.deferred(
            functools.partial(self.program, options),
            config,
            postprocess,
            scope=functools.partial(_verdict_scope, self, options),
            identity=_judge_identity(self, options),
            files=self._judge_files(options),
        )
        return self._fitted(judge, options)

    def _fitted(self, judge: LLMJudge, options: BaseModel) -> LLMJudge:
        """``judge`` with the task's :meth:`adapter` and :meth:`weigh`."""
        make = self.adapter(options, judge.config.adapter)
        if make is not None:
            judge.use_adapter(make)
        judge.weigh = self.weigh(options)
        return judge

    def _no_llm_judge(self) -> ConfigError:
        """The refusal of a model or compiled program for a task without an LLM program."""
        has_baseline = type(self).baseline is not Task.baseline
        why = "it judges with the offline baseline only" if has_baseline else "it has no LLM program"
        hint = self.llm_judge_hint or "the tasks that can list 'prompt' among their verbs (`jurist tasks`)"
        return ConfigError(f"task {self.name!r} cannot run an LLM judge: {why}; {hint}", field="task")

    def _judge_files(self, options: BaseModel) -> list[Path]:
        """Files besides jurist's own code that decide this task's program (a task file, its
        examples, a prompts file an option names): part of the key of its judge's card
        (:mod:`jurist.judges.verdicts`)."""
        return []

    def judge_options(self, dataset: Any, options: BaseModel) -> BaseModel:
        """The options :meth:`make_judge` is called with to judge ``dataset`` (``options`` by default).

        A task whose judge needs something of the data it judges (heritage's BM25 retrieval
        searches every text of the gold file) returns a copy carrying it in a private
        attribute, so it reaches the judge in other processes too (``--workers``, Ray) while
        the manifest records ``options`` as given.
        """
        return options

    def plan(self, data: str | Path, options: BaseModel) -> Recipe | None:
        """The ordinary runs judging ``data`` is made of, when it is more than one run
        (:class:`Recipe`); ``None`` (the default): one ordinary run of
        this task's own parts.

        Called before anything is judged or written, so a bad option or missing data is
        refused before any model call. The runs are made by :func:`jurist.jury.loop.run_recipe`, their
        results combined by :meth:`combine`.
        """
        return None

    def combine(
        self, recipe: Recipe, runs: Mapping[str, JudgeRun], out: Path, config: JudgeConfig, options: BaseModel
    ) -> Scores:
        """The scores of a recipe's finished runs (``runs``: part name -> its run), written
        into ``out`` as the task's own report says (summary, report, charts), with ``config``
        the judge config the recipe was run with. Needed by every task whose :meth:`plan`
        gives a recipe."""
        raise self.unsupported("combine the runs of a recipe")

    # ------------------------------------------------------------------ scoring

    def item_row(self, result: ItemResult, options: BaseModel) -> dict[str, Any]:
        """One row of the per-item table for a recorded result (status and usage, plus the verdict)."""
        row = result.table_row()
        row.update((result.output or {}) if result.status == "ok" else {})
        return row

    def summarize(self, items: pd.DataFrame, options: BaseModel, gold: str | Path | None) -> dict[str, Any]:
        """The aggregate figures of a per-item table (and agreement with ``gold``, if given)."""
        return {}

    def headline(self, summary: Any) -> list[Headline]:
        """The figures a person reads first, with their intervals: what ``jurist judge`` prints
        on one line and ``jurist score`` first (:mod:`jurist.report.console`).

        ``summary`` is the run's summary (a mapping, or a list for a task that scores several
        files). Default: the task's computed metrics (:class:`~jurist.tasks._metric.Metric`) found in
        the summary, the first three. A task with figures of its own overrides it (a YAML
        score task: QWK and MAE; ragbench: the hallucination AUROC).
        """
        if not isinstance(summary, Mapping):
            return []
        found = (Headline.of(summary, metric.name) for metric in computed_metrics(self.metrics))
        return [figure for figure in found if figure is not None][:3]

    def summary_lines(self, run: JudgeRun) -> list[str]:
        """What ``jurist judge`` prints after a run: counts, usage and the headline figures."""
        summary = run.summary
        usage = summary.get("usage", {})
        html = run.run_dir / "report.html"
        line = headline_line(self.headline(summary))
        return [
            f"{summary.get('items', 0)} items: {summary.get('ok', 0)} scored, {summary.get('failed', 0)} "
            f"failed; {calls_text(usage, run.now)}",
            *([line] if line else []),
            f"report: {run.run_dir / 'report.md'}",
            *([f"html report: {html}"] if html.is_file() else []),
        ]

    def report(self, scores: Scores) -> str:
        """The Markdown report of a scored run (``report.md``)."""
        from jurist.report.markdown import summary_markdown

        return summary_markdown(self.name, scores.summary)

    def score_lines(self, scores: Scores) -> list[str]:
        """What ``jurist score`` prints: the headline first, then a compact table of the other
        figures (:func:`jurist.report.console.compact_table`); a task with a report of its own
        (:meth:`report` overridden) prints its headline line, then that report."""
        headline = self.headline(scores.summary)
        if type(self).report is Task.report and isinstance(scores.summary, Mapping):
            return [compact_table(self.name, scores.summary, headline)]
        line = headline_line(headline)
        return [*([line, ""] if line else []), scores.report.rstrip("\n")]

    reads_gold: bool = True
    """Whether scoring compares with a gold file it is given; when false, a given gold file is
    ignored (a YAML task whose file names no gold column and that reads nothing else from it)."""
    gold_from_run: ClassVar[bool] = False
    """Scored without a gold file, compare with the data file the run judged (the path its
    manifest records), when that file is still there: the task's data carries its gold labels
    (``ragbench``), so ``jurist score`` agrees with what ``jurist judge`` reported."""

    def gold_columns(self, items: pd.DataFrame, gold: str | Path, options: BaseModel) -> pd.DataFrame:
        """How gold joins the per-item table: ``items`` with the gold of each item and whether
        the verdict agrees with it, for ``items.csv``, the review and the figures.

        Called by :meth:`score` only with a gold file, after :meth:`summarize` (which is
        given the table without these columns) and before the declared metrics and
        :meth:`report` (which see them). An item without a gold row gets ``None``. Read the
        file with :func:`jurist.tasks.read_once`, so :meth:`summarize` and this
        part read it once. Default: ``items`` unchanged.
        """
        return items

    def extras(self, items: pd.DataFrame, gold: str | Path | None, options: BaseModel) -> dict[str, Any]:
        """What a scored run holds besides its per-item table and summary, by name, for
        ``Scores.extra``: tables with one row per unit of several items (a YAML pairwise task's
        ``pairs``: one row per data row, its two orders side by side; ``gates``' per-question
        table) and the values the task's :meth:`report`, :meth:`summary_lines` and
        :meth:`figures` read (``gates``: its gate report, rendered as ``report.md``).
        :meth:`score` calls it with the per-item table after :meth:`gold_columns`, and
        ``gold`` when given, reading gold through :func:`jurist.tasks.read_once` as the other
        parts do. Default: none."""
        return {}

    def run_options(self, run: Path, options: BaseModel) -> BaseModel:
        """The options a recorded run directory (``run``) is scored with. :meth:`score` calls
        it first, so every later part is given what it returns. Default: ``options`` as given.

        A task whose figures depend on options the run was judged with (``gates``: the QA set,
        the thresholds and the refusal token) completes the options given from those the
        run's manifest records (:func:`recorded_options`), so ``jurist score TASK RUN_DIR``
        agrees with what ``jurist judge`` reported without the options given again."""
        return options

    def combine_values(self, run: Path, gold: str | Path | None, options: BaseModel) -> dict[str, Any] | None:
        """For a task run as a part of a recipe (:meth:`plan`) whose :meth:`combine` writes
        the files: the values a scored run hands to it, by name, into ``Scores.extra`` (RGB's
        answer records in the order of the file answered, a judge's verdicts by item id).

        Made of the run's recorded results (:func:`jurist.runner.iter_run_results` of
        ``run``) and, when ``gold`` is given, the dataset the run judged, read with
        ``read_once("dataset", gold, lambda: self.read(gold, options))``
        (:func:`jurist.tasks.read_once`), which the judging loop already holds. :meth:`score`
        calls it after :meth:`extras`. A run that hands values writes no exports, with
        ``write`` or not: the combination writes what it reports. ``None`` (the default):
        nothing is handed and the exports are written."""
        return None

    def score(
        self,
        run: str | Path | list[Path],
        options: BaseModel,
        *,
        gold: str | Path | None = None,
        write: bool = False,
    ) -> Scores:
        """Score a recorded run (its directory or ``results.jsonl``); no model is called.

        ``run`` is a list when the command line names several files. Files another tool
        judged go to the task's :meth:`other_files` kind that takes them all; the rest of
        this describes a run of jurist's.

        It is also the judging loop's last step (:func:`jurist.jury.loop.run_judgment`):
        the run just judged is scored with ``write``, against ``gold`` the data it judged,
        inside a block where that data's dataset (what :meth:`read` gave) is already read:
        a part that needs it asks ``read_once("dataset", gold, lambda: self.read(gold,
        options))`` (:func:`jurist.tasks.read_once`) and gets it without reading the file
        again; ``jurist score`` reads it.

        The steps, the same for every task that scores one run: the gold file
        (:attr:`reads_gold`, :attr:`gold_from_run`); the per-item table (:meth:`item_row`)
        and :meth:`summarize`; the gold columns (:meth:`gold_columns`) and the unit tables
        (:meth:`extras`), reading the gold file once for all of them; the declared
        metrics and :meth:`report`; with :attr:`unit_table`, that table as the per-item
        table; the exports, with the task's :meth:`export_files` (also into :meth:`export_to`);
        with :meth:`compared_run`, the other run scored by the same steps and the
        :meth:`comparison` added to what is returned. The parts ask what the run recorded
        (its manifest, a ``results.jsonl``'s being its folder's) through
        :func:`jurist.tasks.recorded_run`.

        Failed items are counted and listed, never scored. With ``write`` and a run
        directory, writes ``results.jsonl``, ``items.csv``, ``items.parquet``,
        ``summary.json`` and ``report.md`` into it (each atomically), unless the task hands
        its run's values to a recipe's combination instead (:meth:`combine_values`).
        """
        paths = [Path(path) for path in run] if isinstance(run, list) else [Path(run)]
        other = scorer_of(self.other_files(options), paths)
        if other is not None:
            if len(paths) > 1 and not other.several:
                raise ConfigError(f"task {self.name!r} scores one of its {other.what} at a time", field="run")
            return other.score(paths, options, gold)
        path = one_run(self, run)
        options = self.run_options(path, options)
        # The summary, the gold columns, the unit tables and the metrics read gold once.
        with reading_once():
            copy_to = self.export_to(options)
            scored_gold = scoring_gold(self, path, gold)
            scores = score_run(self, path, options, scored_gold, write=write, copy_to=copy_to)
            compared_run = self.compared_run(options)
            if compared_run is None:
                return scores
            against = Path(compared_run)
            other_options = self.run_options(against, options)
            compared = score_run(self, against, other_options, scoring_gold(self, against, gold), write=False)
            return with_comparison(self, scores, compared, (path, against), options)

    unit_table: ClassVar[str | None] = None
    """For a task whose verdict spans several items, the name of the table of :meth:`extras`
    with one row per unit (``pairwise``'s ``records``: one row per SubEval comparison with
    both orders' judgements, or per pair): :meth:`score` returns it as the run's per-item
    table, so ``items.csv``, ``items.parquet``, the review and the figures show units.
    ``None`` (the default): one row per judged item. The summary's counts are the judged
    items' either way."""

    def export_files(self, scores: Scores, options: BaseModel) -> dict[str, pd.DataFrame | str]:
        """The task's own files of a scored run, by file name: a table is written in the
        format its name's suffix says (``.csv``, ``.tsv`` with every cell quoted, ``.parquet``,
        ``.xlsx``: skipped when openpyxl is not installed), a text as it is
        (:func:`~jurist.tasks._results.write_files`). :meth:`score` writes them beside the
        standard exports, under the run's lock, whenever it writes those, and into
        :meth:`export_to` whenever it scores. Made of the finished ``scores`` (its ``extra``
        holds what :meth:`extras` gave). Default: none."""
        return {}

    def export_to(self, options: BaseModel) -> Path | None:
        """A folder (an option of the task: ``pairwise``'s ``--out``) into which :meth:`score`
        writes the task's :meth:`export_files` of the run it scores, written or not; ``None``
        (the default): none."""
        return None

    def compared_run(self, options: BaseModel) -> Path | None:
        """Another run of the same data that :meth:`score` compares a scored run with (an
        option of the task, e.g. ``--compare RUN``); ``None`` (the default): none."""
        return None

    def comparison(self, scores: Scores, other: Scores, options: BaseModel) -> dict[str, pd.DataFrame]:
        """Tables comparing a scored run with :meth:`compared_run`'s (e.g. paired significance
        tests on the items both scored), by name.

        :meth:`score` scores the other run by the same steps (against the same gold, writing
        nothing), calls this after the scored run's exports are written, and adds each table
        to ``Scores.extra`` and its records to the returned summary under its name, with
        ``extra["compared"]`` the two runs as given; the report is made again, so
        :meth:`report` shows them. ``summary.json`` and ``report.md`` stay the run's own.
        Needed by every task whose :meth:`compared_run` names a run."""
        raise self.unsupported("compare two runs")

    def other_files(self, options: BaseModel) -> Sequence[OtherFiles]:
        """Files another tool judged that this task scores (RGB's prediction files, a
        tagger's token-tag file), each kind an :class:`~jurist.tasks._other_files.OtherFiles`:
        how a path is recognised and how the files are scored. :meth:`score` hands the paths
        it is given to the first kind that takes all of them. Default: none."""
        return ()

    def _gold_metrics(self) -> list[Metric]:
        return [metric for metric in computed_metrics(self.metrics) if metric.needs_gold]

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

    def panel_labels(self, options: BaseModel) -> ItemLabels | None:
        """What a jury or ``--repeats`` votes on when one item's output holds many labels (e.g.
        one per sentence): an :class:`~jurist.tasks._item_labels.ItemLabels` that breaks an
        output into labelled keys and composes the voted labels back into an output, which the
        task scores as usual. ``None`` (the default): the output is one labelled key, the
        :meth:`review` verdict (or the units of :meth:`panel_verdicts`)."""
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

    def calibration(self, gold: Path, settings: Mapping[str, Any]) -> CalibrationPlan:
        """What ``jurist calibrate`` judges of a gold file, and how its run compares with gold.

        ``gold`` is the gold file (``sample:NAME`` already resolved); ``settings`` holds
        ``n_resamples``, ``confidence`` and ``seed`` (of the intervals), ``options`` (the
        task's options) and each option by name. The hook reads the gold file and refuses one
        that holds no gold label (:class:`~jurist.errors.InputError`), then returns a
        :class:`~jurist.tasks._calibration.CalibrationPlan`: the options to judge with, the
        items to judge, the run's folder, and ``compare``, which turns the finished run into
        the task's :class:`~jurist.tasks._calibration.GoldAgreement` (its figures, per-label
        table and counts).

        It judges nothing: the ``calibrate`` verb judges the gold file (by one judge, a jury or
        a cascade) into ``OUT/runs/{judge}-{fingerprint}/{folder}`` (resumed on a rerun),
        hands the run to ``compare``, and builds the leaderboard row: the columns every row has
        (:func:`~jurist.tasks.calibration_rows.leaderboard_row`), the task's figures, and the
        declared metrics from the run's summary. So what a task compares for one judge is
        compared the same way on a jury's or a cascade's run.

        The default, for a task with a :class:`~jurist.tasks._metric.Metric` that needs gold:
        every item of the gold file, judged with the given options into the dataset's folder;
        the row has the common columns over its items and the declared metrics. Other tasks
        cannot be calibrated unless they override it.
        """
        if not self._gold_metrics():
            raise self.unsupported("be calibrated (it has no gold labels to compare with)")
        from jurist.tasks.calibration_rows import run_results

        def compare(run: JudgeRun) -> GoldAgreement:
            results = run_results(run.run_dir)
            failed = sum(result.status == "failed" for result in results)
            return GoldAgreement(items=len(results), failed=failed, results=results)

        return CalibrationPlan(options=settings.get("options") or self.options(), compare=compare)

    # ------------------------------------------------------------------ optimization

    def example_score(
        self, example: dspy.Example, output: dict[str, Any], options: BaseModel
    ) -> MetricResult | tuple[float, str]:
        """How one judged gold example scores: what ``jurist optimize`` maximizes.

        ``output`` is the postprocessed output of the judge on the example's inputs, and
        ``example`` one of :meth:`gold_examples` (with its gold fields). Returns the score in
        [0, 1] (higher is better) and what went right or wrong in words (GEPA's reflection
        reads it): a :class:`~jurist.optimization.MetricResult`, which may also carry the
        score's components, or a ``(score, feedback)`` pair. A task that defines it can be
        optimized; :func:`jurist.optimization.task_metric` turns it into DSPy's
        ``metric(example, prediction, trace=None)``.
        """
        raise self.unsupported("be optimized")

    def gold_examples(self, path: str | Path, options: BaseModel) -> list[dspy.Example]:
        """The gold examples of a file (``sample:NAME`` allowed) that ``jurist optimize`` trains
        and scores on.

        Each is a ``dspy.Example`` whose inputs (``with_inputs``) are the keyword inputs of
        :meth:`optimization_program`'s program, with the gold fields :meth:`example_score`
        reads and three bookkeeping fields: ``example_id`` (unique in the file),
        ``example_key`` (:func:`~jurist.optimization.content_key` of the inputs, equal for the
        same content in two files, so train and dev are checked disjoint) and
        ``example_group`` (examples that must stay in one split, e.g. the two orders of one
        comparison). Rows without gold are left out.

        Raises:
            InputError: The file is malformed or holds no example with a gold label.
        """
        raise self.unsupported("be optimized")

    def optimization_program(self, options: BaseModel) -> tuple[dspy.Module, Postprocess]:
        """The program ``jurist optimize`` compiles, and how its prediction becomes an output.

        Default: :meth:`program` with :meth:`postprocess`, so an artifact loads into the
        judge :meth:`make_judge` builds. A task whose judge runs several programs compiles
        one of them (e.g. a heritage sub-task's program).
        """

        def postprocess(prediction: Any, inputs: dict[str, Any]) -> dict[str, Any]:
            return self.postprocess(prediction, inputs, options)

        return self.program(options), postprocess

    def program_options(self, options: BaseModel) -> dict[str, Any]:
        """The options that shape :meth:`optimization_program`'s program (e.g.
        ``{"num_options": 2}``); an artifact records them and loads only into a program
        built with the same. Default: none."""
        return {}

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
            "metrics": {metric.name: metric.description for metric in metric_list(self.metrics)},
            "options": options,
            "verbs": self.verbs,
        }


def calls_text(usage: Mapping[str, Any], now: Any = None) -> str:
    """The calls a ``judge`` call made: ``judged now 3 (13 already judged): 3 provider calls, 0
    cache hits`` when what this call did is known (``now``, the runner's summary; a finished
    run judged again makes 0 calls), else the run's totals from its summary's ``usage``."""
    if now is None:
        return f"{usage.get('calls', 0)} provider calls, {usage.get('cache_hits', 0)} cache hits"
    kept = f" ({now.skipped} already judged)" if now.skipped else ""
    return (
        f"judged now {now.judged}{kept}: {now.usage.calls} provider calls, {now.usage.cache_hits} cache hits"
    )


def one_run(task: Task, run: str | Path | list[Path], what: str = "run") -> Path:
    """The one run (or other ``what``) a task that scores one at a time is given (a list must
    hold one)."""
    if isinstance(run, list):
        if len(run) != 1:
            raise ConfigError(f"task {task.name!r} scores one {what} at a time", field="run")
        run = run[0]
    return Path(run)


def scoring_gold(task: Task, run: Path, gold: str | Path | None) -> str | Path | None:
    """The gold file :meth:`Task.score` compares with: ``gold``, or ``None`` for a task that
    does not read gold (:attr:`Task.reads_gold`); without one, for a task whose data carries
    its gold (:attr:`Task.gold_from_run`), the data file the run judged if it is still there."""
    if not task.reads_gold:
        return None
    if gold is None and task.gold_from_run:
        recorded = run_data_file(run)
        if recorded is not None and recorded.is_file():
            return recorded
    return gold


def recorded_options(task: Task, run: Path, options: BaseModel) -> BaseModel:
    """``options`` completed by those the run directory ``run`` was judged with: each option
    not given (not in ``options.model_fields_set``) whose recorded value (the manifest's
    ``task_options``) differs from its default takes that value. ``options`` itself when
    ``run`` has no manifest of ``task``.

    A recorded value equal to the default is not taken: the manifest cannot tell one given
    from one left unset.
    """
    try:
        found = run_manifest(run)
    except ValueError:
        return options
    if found.get("task") != task.name:
        return options
    recorded = found.get("task_options")
    if not isinstance(recorded, dict):
        return options
    fields = type(options).model_fields
    given = {name: getattr(options, name) for name in options.model_fields_set}
    taken = {
        name: value
        for name, value in recorded.items()
        if name in fields
        and name not in given
        and value != json_ready(fields[name].get_default(call_default_factory=True))
    }
    return task.options({**taken, **given}) if taken else options


def scored_items(task: Task, run: Path, options: BaseModel, gold: str | Path | None) -> Scores:
    """A recorded run's per-item table (:meth:`Task.item_row`) and its summary: the counts,
    the task's :meth:`Task.summarize`, the task's name, the run's blank inputs
    (``blank_inputs``) and its identity. The declared metrics and the report are added by
    :func:`finish_scores`.

    When the run judged some rows (``--limit``, ``--sample``), the table's
    ``attrs["selection"]`` records it: a task's :meth:`Task.summarize` then compares with
    the gold rows of the judged items only (those not judged are not missing)."""
    from jurist.runner import iter_run_results

    items = items_table(task.item_row(result, options) for result in iter_run_results(run))
    if items.empty:
        items = pd.DataFrame(columns=["id", "status", "error_type", "error"])
    info = run_info(run)
    dataset = info.get("run", {}).get("dataset") if info else None
    dataset = dataset if isinstance(dataset, dict) else {}
    if dataset.get(SELECTED):
        # Some rows were judged (--limit, --sample): gold rows without an item are not missing.
        items.attrs[SELECTED] = dataset[SELECTED]
    summary = {**run_counts(items), **task.summarize(items, options, gold)}
    summary["task"] = task.name
    if dataset.get("blank_inputs"):
        summary["blank_inputs"] = dataset["blank_inputs"]
    summary.update(info)
    return Scores(items=items, summary=json_ready(summary))


def finish_scores(
    task: Task,
    scores: Scores,
    run: Path,
    options: BaseModel,
    gold: str | Path | None,
    *,
    write: bool,
    copy_to: Path | None = None,
) -> Scores:
    """Complete a scored run: the task's computed metrics into the summary (those that need
    gold only with ``gold``, given the task's dataset read from it, through
    :func:`~jurist.tasks._read_once.read_once` of kind ``"dataset"``), the report (the task's
    :meth:`Task.report` and a table of those metrics), with ``write`` and a run directory
    the exports and the task's :meth:`Task.export_files`, written under the run's lock, and
    with ``copy_to`` those files into that folder.

    Raises:
        ConfigError: A metric failed, or its name is already a figure of the summary.
    """
    metrics = computed_metrics(task.metrics)
    if metrics and isinstance(scores.summary, dict):
        gold_data = None
        with_gold = gold is not None
        if gold is not None and any(metric.needs_gold for metric in metrics):
            from jurist.datasets.samples import resolve_input

            file = resolve_input(gold)
            gold_data = read_once(DATASET, file, lambda: task.read(file, options))
        values = metric_values(metrics, scores.items, gold_data, with_gold=with_gold, taken=scores.summary)
        scores.summary = json_ready({**scores.summary, **values})
    _report(task, scores)
    writes = write and run.is_dir()
    files = task.export_files(scores, options) if writes or copy_to is not None else {}
    if writes:
        from jurist.runner import iter_run_results, run_lock

        with run_lock(run):
            write_exports(run, scores, iter_run_results(run))
            if files:
                write_files(run, files)
    if copy_to is not None and files:
        write_files(Path(copy_to), files)
    return scores


def _report(task: Task, scores: Scores) -> None:
    """Set ``scores``' report (the task's :meth:`Task.report` and a table of its computed
    metrics) and headline from its summary."""
    scores.report = task.report(scores)
    scores.headline = task.headline(scores.summary)
    summary = scores.summary
    section = metric_markdown(computed_metrics(task.metrics), summary) if isinstance(summary, dict) else ""
    if section:
        scores.report = scores.report.rstrip("\n") + "\n\n" + section


def score_run(
    task: Task,
    run: Path,
    options: BaseModel,
    gold: str | Path | None,
    *,
    write: bool,
    copy_to: Path | None = None,
) -> Scores:
    """The steps of :meth:`Task.score` for one run of jurist's, inside the block where
    :func:`~jurist.tasks._recorded_run.recorded_run` is that run: the per-item table and
    summary, the gold columns, the unit tables (one of them the per-item table, for a task
    with a :attr:`Task.unit_table`), the values handed to a recipe's combination, the
    metrics and report, with ``write`` the exports with the task's
    :meth:`Task.export_files`, and with ``copy_to`` those files into that folder."""
    with scoring_run(RecordedRun.of(run, gold)):
        scores = scored_items(task, run, options, gold)
        if gold is not None:
            scores.items = task.gold_columns(scores.items, gold, options)
        scores.extra.update(task.extras(scores.items, gold, options))
        if task.unit_table is not None:
            scores.items = scores.extra[task.unit_table]
        handed = task.combine_values(run, gold, options)
        if handed is not None:
            scores.extra.update(handed)
        return finish_scores(
            task, scores, run, options, gold, write=write and handed is None, copy_to=copy_to
        )


def with_comparison(
    task: Task, scores: Scores, other: Scores, runs: tuple[Path, Path], options: BaseModel
) -> Scores:
    """``scores`` with :meth:`Task.comparison` of it and ``other`` (the run
    :meth:`Task.compared_run` names, scored): each table into ``extra`` and its records into
    the summary, ``extra["compared"]`` the two runs as given, and the report and headline
    made again. Nothing is written."""
    tables = task.comparison(scores, other, options)
    scores.extra.update(tables)
    scores.extra["compared"] = (str(runs[0]), str(runs[1]))
    records = {name: table.to_dict(orient="records") for name, table in tables.items()}
    scores.summary = json_ready({**scores.summary, **records})
    _report(task, scores)
    return scores


def _judge_identity(task: Task, options: BaseModel) -> dict[str, Any] | None:
    """What builds ``task``'s LLM program, for the key of its judge's card: its class, name,
    version and options; ``None`` when the class, its ``program`` or its ``postprocess`` is
    not jurist's own code (a user's task may build its program from anything)."""
    cls = type(task)
    parts = [cls, *(getattr(hook, "__func__", hook) for hook in (cls.program, cls.postprocess))]
    if not all(str(getattr(part, "__module__", "")).startswith("jurist.") for part in parts):
        return None
    identity = {
        "class": f"{cls.__module__}.{cls.__qualname__}",
        "task": task.name,
        "version": task.version,
        "options": options.model_dump(mode="json"),
    }
    handed = _judge_data(options)
    return identity if handed is None else {**identity, "judge_data": handed}


def _judge_data(options: BaseModel) -> str | None:
    """The SHA-256 of what :meth:`Task.judge_options` handed the judge of the data it judges
    (the options' private attributes that are set: heritage's texts BM25 searches), ``None``
    when nothing was. The options' dump leaves it out, so the judge's card and its finished
    verdicts are keyed with it too: two runs that hand over other data share no verdict."""
    import hashlib
    import json

    private = getattr(options, "__pydantic_private__", None) or {}
    handed = {name: value for name, value in private.items() if value is not None}
    if not handed:
        return None
    text = json.dumps(handed, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _verdict_scope(task: Task, options: BaseModel, program: Any) -> str:
    """What decides a verdict of ``task`` beyond the judge's fingerprint (the key of its
    finished verdicts, :mod:`jurist.judges.verdicts`): the task's name (its
    :attr:`Task.program_task` when it runs another task's judge, so the two share verdicts),
    version and options, the source of its ``postprocess`` (how an answer becomes a
    verdict), the typed fields of its program's signatures (a label list is a type, not
    in the program's state), and what :meth:`Task.judge_options` handed over of the data
    (:func:`_judge_data`, when anything was)."""
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
        "task": task.program_task or task.name,
        "version": task.version,
        "options": options.model_dump(mode="json"),
        "postprocess": hashlib.sha256(reading.encode("utf-8")).hexdigest(),
        "signatures": fields,
    }
    handed = _judge_data(options)
    if handed is not None:
        scope["judge_data"] = handed
    return json.dumps(scope, sort_keys=True, default=str)


class JudgeBy(Protocol):
    """How the ``calibrate`` verb judges a gold file for a leaderboard row:
    ``(data, out, options, retry_failed, progress, *, only=None) -> JudgeRun``.

    It judges the items of ``data`` (only those whose id is in ``only``, if given) into the
    run directory ``out`` and returns the scored run: one judge
    (:func:`jurist.jury.loop.one_judge`), or a jury's or a cascade's run
    (:mod:`jurist.jury.calibrate`, :mod:`jurist.jury.cascade_calibrate`). The verb calls it
    with what the task's :meth:`Task.calibration` plan says
    (:func:`jurist.jury.gold_row.calibration_row`).
    """

    def __call__(
        self,
        data: str | Path,
        out: Path,
        options: BaseModel,
        retry_failed: bool,
        progress: bool,
        /,
        *,
        only: Collection[str] | None = None,
    ) -> JudgeRun: ...


def write_views(
    task: Task, run_dir: Path, scores: Scores, options: BaseModel, *, cache_dir: Path | None = None
) -> Path:
    """Write a scored run's ``figures.json``, ``review.json`` and ``report.html``.

    The task's views (``task.figures(scores, options)``, ``task.review(options)``) are
    computed here and handed to the report as values
    (:func:`jurist.report.html.write_run_views`). ``cache_dir`` is the judge's cache folder,
    whose figure cache serves the figures drawn before (``None``: every figure is drawn).

    Returns:
        The path of ``report.html``.
    """
    from jurist.report.html import write_run_views
    from jurist.tasks.run_inputs import RunInputs

    return write_run_views(
        Path(run_dir),
        figures=list(task.figures(scores, options)),
        review=task.review(options),
        items=scores.items,
        summary=scores.summary,
        inputs=RunInputs(Path(run_dir), lambda: (task, options)).of,
        figure_cache=cache_dir,
    )
