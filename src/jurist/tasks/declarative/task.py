"""A YAML task file as a :class:`~jurist.tasks.Task`: every verb from one file, no code.

:func:`load_task_file` reads and validates the file and returns an instance of a
:class:`DeclarativeTask` subclass made for it (class attributes such as ``name`` and
``metrics`` are the file's), with ``source`` set to the file's path.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from jurist.datasets.io import iter_records
from jurist.errors import ConfigError
from jurist.report.console import Headline
from jurist.report.figures import Figure
from jurist.report.review import Review
from jurist.runner import Item
from jurist.schemas import ItemResult
from jurist.tasks._contract import Scores, Task
from jurist.tasks._metric import Metric, metric_list
from jurist.tasks.declarative.data import DeclarativeDataset, Row, pair_items, read_rows, rows_from_records
from jurist.tasks.declarative.spec import TaskFile, read_task_file, validate_task

if TYPE_CHECKING:
    import dspy

    from jurist.judges.judge import Judge
    from jurist.optimization import MetricResult
    from jurist.tasks._calibration import CalibrationPlan
    from jurist.tasks._unit_verdicts import UnitVerdicts

__all__ = ["DeclarativeTask", "load_task_file"]

METRICS: dict[str, dict[str, str]] = {
    "label": {
        "accuracy": "share of items whose label equals gold",
        "kappa": "Cohen's kappa with gold",
        "macro_f1": "mean F1 over the labels used",
        "confusion": "confusion matrix (rows gold, columns judge)",
    },
    "labels": {
        "micro_f1": "F1 of all label decisions pooled",
        "macro_f1": "mean per-label F1",
        "exact_match": "share of items whose label set equals gold",
        "per_label": "precision, recall and F1 per label",
    },
    "score": {
        "mae": "mean absolute error",
        "rmse": "root mean squared error",
        "pearson": "Pearson correlation",
        "spearman": "Spearman rank correlation",
        "kendall_tau": "Kendall tau-b",
        "exact_agreement": "share of scores equal to gold",
        "within_1": "share of scores within 1 of gold",
        "qwk": "quadratic-weighted kappa",
    },
    "bool": {
        "accuracy": "share of verdicts equal to gold",
        "kappa": "Cohen's kappa with gold",
        "f1": "F1 of the true class",
        "auroc": "AUROC of the confidence (with confidence: true)",
    },
    "pairwise": {
        "consistency": "share of rows answered alike in both orders",
        "position_1_rate": "share of decisive answers picking the first position",
        "position_bias": "|position_1_rate - 0.5|",
        "longer_win_rate": "share of decisive answers picking the longer response",
        "length_bias": "longer_win_rate - gold_longer_rate",
        "win_rate_A": "share of rows won by response A (also B, tie)",
        "accuracy": "agreement of the combined verdict with gold",
        "kappa": "Cohen's kappa of the combined verdict with gold",
    },
}


OPTIMIZED_METRICS = {
    "label": "accuracy",
    "bool": "accuracy",
    "pairwise": "order_accuracy",
    "score": "score_closeness",
    "labels": "jaccard",
}
"""The name of the score ``jurist optimize`` maximizes, per output kind (see
:mod:`jurist.tasks.declarative.optimization`)."""


class DeclarativeOptions(BaseModel):
    """The options of every YAML task."""

    model_config = ConfigDict(extra="forbid")

    no_gold: bool = Field(
        default=False,
        description="judge data without the gold column the task names (no agreement figures)",
    )


def _reads_gold(options: BaseModel) -> bool:
    return not getattr(options, "no_gold", False)


def _scored_spec(spec: TaskFile, options: BaseModel) -> TaskFile:
    """The task file scoring reads: without its gold column under ``--no-gold``."""
    return spec if _reads_gold(options) or spec.gold is None else spec.model_copy(update={"gold": None})


class DeclarativeTask(Task):
    """A task defined by a YAML file, or by the same keys as a dict (see ``docs/tasks.md``).

    Subclass it to keep the YAML keys and override a hook in Python (``read`` to normalise
    rows, ``postprocess`` to accept synonyms, ...): scoring, calibration and optimization
    go through the hooks, so they see what the subclass does.

    Args:
        spec: The validated file, or a mapping of its keys (validated like a file).
        source: Where the task comes from (the file's path: relative ``examples`` paths are
            read from its folder).
    """

    Options = DeclarativeOptions

    def __init__(self, spec: TaskFile | dict[str, Any], source: str | Path = "python") -> None:
        self.spec = spec if isinstance(spec, TaskFile) else validate_task(spec, path=str(source))
        self.source = str(source)
        self.name = self.spec.name
        self.description = self.spec.description.strip()
        self.inputs = {name: f"data column '{column}'" for name, column in self.spec.columns.items()}
        self.outputs = _outputs(self.spec)
        # The output kind's figures, then the metrics a subclass declares (jurist.Metric).
        declared = [metric for metric in metric_list(type(self).metrics) if metric.fn is not None]
        kind = [Metric(name, description=text) for name, text in METRICS[self.spec.kind].items()]
        self.metrics = metric_list([*kind, *declared]) if declared else dict(METRICS[self.spec.kind])
        self.version = f"yaml-{self.spec.fingerprint()}"
        self.optimized_metric = OPTIMIZED_METRICS[self.spec.kind]
        self._demo_rows: list[Row] | None = None
        # A gold file given to scoring is ignored when the file names no gold column; a
        # pairwise task still reads its responses' lengths from it (length bias).
        self.reads_gold = self.spec.gold is not None or self.spec.kind == "pairwise"

    # ------------------------------------------------------------------ reading

    def read(self, path: str | Path, options: BaseModel) -> DeclarativeDataset:
        return read_rows(self.spec, path, gold=_reads_gold(options))

    def items(self, dataset: DeclarativeDataset, options: BaseModel) -> Iterable[Item]:
        for row in dataset.rows:
            if dataset.pairwise:
                yield from pair_items(row)
            else:
                yield Item(row.id, dict(row.inputs))

    def row_items(self, dataset: DeclarativeDataset, options: BaseModel, row: int) -> list[Item]:
        if not 0 <= row < len(dataset.rows):
            raise ConfigError(f"the data has no row {row} (rows count from 0)", field="row")
        found = dataset.rows[row]
        return pair_items(found) if dataset.pairwise else [Item(found.id, dict(found.inputs))]

    # ------------------------------------------------------------------ judging

    def demo_rows(self) -> list[Row]:
        """The few-shot example rows of the file's ``examples`` key (read once)."""
        if self._demo_rows is None:
            examples = self.spec.examples
            if examples is None:
                self._demo_rows = []
            elif isinstance(examples, str):
                file = Path(examples)
                if not file.is_absolute():
                    file = Path(self.source).parent / file
                if not file.is_file():
                    raise ConfigError("examples file not found", path=file, field="examples")
                self._demo_rows = rows_from_records(self.spec, iter_records(file), file, need_gold=True)
            else:
                records = [(index, record) for index, record in enumerate(examples)]
                self._demo_rows = rows_from_records(
                    self.spec, records, f"{self.source} (examples)", need_gold=True
                )
        return self._demo_rows

    def program(self, options: BaseModel) -> dspy.Module:
        from jurist.tasks.declarative.program import make_demos, make_program

        try:
            demos = make_demos(self.spec, self.demo_rows())
        except ValueError as exc:
            raise ConfigError(str(exc), path=self.source, field="examples") from None
        return make_program(self.spec, demos)

    def adapter(self, options: BaseModel, name: str) -> Callable[[], Any]:
        """The config's adapter reading a label written with only a different letter case or
        spacing as the listed label, which the output records (``normalised_from``) and the
        summary counts (``normalised_verdicts``)."""
        return functools.partial(_normalising_adapter, name)

    def weigh(self, options: BaseModel) -> Callable[[dict[str, Any], Any], dict[str, Any]]:
        """With ``logprobs: true``, the verdict weighed by the reply's token probabilities
        (:mod:`jurist.tasks.declarative.weighted`)."""
        from jurist.tasks.declarative.weighted import weigh_output

        return functools.partial(weigh_output, self.spec)

    def _judge_files(self, options: BaseModel) -> list[Path]:
        """The task file and its examples file (they decide the program)."""
        files = [Path(self.source)]
        if isinstance(self.spec.examples, str):
            examples = Path(self.spec.examples)
            files.append(examples if examples.is_absolute() else Path(self.source).parent / examples)
        return files

    def postprocess(self, prediction: Any, inputs: dict[str, Any], options: BaseModel) -> dict[str, Any]:
        from jurist.tasks.declarative.program import postprocess_prediction

        return postprocess_prediction(self.spec, prediction, inputs)

    def baseline(self, options: BaseModel) -> Judge:
        from jurist.tasks.declarative.baseline import make_baseline

        judge = make_baseline(self.spec, version=f"{self.version}")
        if judge is None:
            raise ConfigError(
                f"task {self.name!r} ({self.source}) has no offline baseline (no 'baseline' key); pass "
                "--config with a judge config that names a model",
                field="config",
            )
        return judge

    # ------------------------------------------------------------------ scoring

    def item_row(self, result: ItemResult, options: BaseModel) -> dict[str, Any]:
        from jurist.tasks.declarative.scoring import item_row

        return item_row(self.spec, result)

    def summarize(self, items: pd.DataFrame, options: BaseModel, gold: str | Path | None) -> dict[str, Any]:
        from jurist.tasks.declarative.scoring import summarize_items

        return summarize_items(_scored_spec(self.spec, options), items, gold)

    def report(self, scores: Scores) -> str:
        from jurist.tasks.declarative.scoring import report_markdown

        return report_markdown(self.name, scores.summary)

    def headline(self, summary: Any) -> list[Headline]:
        """The output kind's headline agreement with gold (``docs/tasks.md``): score: QWK (with a
        ``range``; else Spearman) and MAE; label: accuracy and κ; bool: accuracy and AUROC (κ
        without confidence); labels: micro-F1; pairwise: agreement with gold and consistency.
        Then a subclass's declared metrics, three figures at most."""
        from jurist.tasks.declarative.scoring import kind_headline

        if not isinstance(summary, dict):
            return []
        return [*kind_headline(self.spec, summary), *super().headline(summary)][:3]

    def score_lines(self, scores: Scores) -> list[str]:
        """The compact table of the summary (headline first), then the per-label figures and
        the confusion matrix as plain text."""
        from jurist.tasks.declarative.scoring import console_lines

        return console_lines(self.name, scores.summary, self.headline(scores.summary))

    def gold_columns(self, items: pd.DataFrame, gold: str | Path, options: BaseModel) -> pd.DataFrame:
        """``gold`` and ``correct`` columns (score: also ``abs_error``; pairwise: per order, the
        row's gold winner), see :func:`~jurist.tasks.declarative.scoring.gold_columns`; metrics a
        subclass declares see the table with them."""
        from jurist.tasks.declarative.scoring import gold_columns

        return gold_columns(_scored_spec(self.spec, options), items, gold)

    def extras(self, items: pd.DataFrame, gold: str | Path | None, options: BaseModel) -> dict[str, Any]:
        """A pairwise run's per-row table (``pairs``: both orders' answers, the combined verdict,
        and with gold the responses' lengths and the gold verdict), see
        :func:`~jurist.tasks.declarative.scoring.pairs_table`."""
        if self.spec.kind != "pairwise":
            return {}
        from jurist.tasks.declarative.scoring import pairs_table, read_gold_once

        rows = read_gold_once(_scored_spec(self.spec, options), gold) if gold is not None else None
        return {"pairs": pairs_table(items, rows)}

    # ------------------------------------------------------------------ review

    def review(self, options: BaseModel) -> Review:
        from jurist.tasks.declarative.figures import review_of

        return review_of(self.spec)

    def panel_verdicts(self, options: BaseModel) -> UnitVerdicts | None:
        """A pairwise task's jury votes per row on each juror's verdict after the swap rule
        (``tie`` without a winner); other kinds vote per item on the verdict."""
        if self.spec.kind != "pairwise":
            return None
        from jurist.tasks.declarative.panel import PairRowVerdicts

        return PairRowVerdicts()

    def figures(self, scores: Scores, options: BaseModel) -> list[Figure]:
        """The standard plots of the review columns (for pairwise, whose items are orders and
        whose confusion is of the rows' verdicts, only those of the confidence) and the figures
        of the output kind."""
        from jurist.report.standard_figures import review_figures
        from jurist.tasks.declarative.figures import kind_figures

        if self.spec.kind != "pairwise":
            standard = super().figures(scores, options)
        else:  # each order's confidence against its answer naming the gold winner
            review = self.review(options)
            standard = review_figures(
                scores.items, Review(agrees=review.agrees, confidence=review.confidence)
            )
        return standard + kind_figures(self.spec, scores.items, scores.summary)

    def gold_rows(
        self, dataset: DeclarativeDataset, labels: dict[str, Any], options: BaseModel
    ) -> list[dict[str, Any]]:
        """The data rows with the task's gold column set to people's labels (see
        :func:`~jurist.tasks.declarative.figures.gold_file_rows`)."""
        from jurist.tasks.declarative.figures import gold_file_rows

        return gold_file_rows(self.spec, dataset, labels)

    # ------------------------------------------------------------------ calibration and optimization

    def calibration(self, gold: Path, settings: Mapping[str, Any]) -> CalibrationPlan:
        """Every row judged; the rows with a gold verdict compared by the output's kind (see
        :mod:`jurist.tasks.declarative.calibration`)."""
        from jurist.tasks.declarative.calibration import calibration

        return calibration(self, self.spec, gold, settings)

    def gold_examples(self, path: str | Path, options: BaseModel) -> list[dspy.Example]:
        """The rows with a gold verdict, read by :meth:`read` (a pairwise row in both orders)."""
        from jurist.tasks.declarative.optimization import gold_examples

        if self.spec.gold is None:
            raise self.unsupported("be optimized (the task file names no 'gold' column)")
        return gold_examples(self, self.spec, path)

    def example_score(
        self, example: dspy.Example, output: dict[str, Any], options: BaseModel
    ) -> MetricResult:
        """Equal to gold (label, bool, pairwise order), closeness (score) or Jaccard (labels)."""
        from jurist.tasks.declarative.optimization import example_score

        return example_score(self.spec, example, output)


def load_task_file(path: str | Path) -> DeclarativeTask:
    """The task a YAML task file defines (``source`` = the path).

    Raises:
        ConfigError: The file is missing, not YAML, or a key is invalid; the message names
            the file, the key's line and path, and what was expected.
    """
    return DeclarativeTask(read_task_file(path), Path(path))


def _outputs(spec: TaskFile) -> dict[str, str]:
    output = spec.output
    verdict = {
        "label": f"one of {', '.join(output.labels or [])}",
        "labels": f"a list of labels from {', '.join(output.labels or [])}",
        "score": f"an integer from {output.range[0]} to {output.range[1]}" if output.range else "an integer",
        "bool": "true or false",
        "pairwise": "A, B" + (" or tie" if output.allow_tie else "") + " (the better response's position)",
    }[spec.kind]
    found = {"verdict": verdict}
    if output.reasoning:
        found["reasoning"] = "the judge's rationale"
    if output.confidence:
        found["confidence"] = "probability in [0, 1] that the verdict is true"
    if spec.kind == "pairwise":
        found["order"] = "AB (as given) or BA (responses swapped)"
    return found


def _normalising_adapter(adapter: str) -> Any:
    """The adapter of a task file's LLM judge: it reads a label written with only a different
    letter case or spacing as the listed label."""
    from jurist.judges.adapters import make_adapter

    return make_adapter(adapter, normalise_labels=True)
