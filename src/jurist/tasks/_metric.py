"""A task's metrics, declared once as named functions (:class:`Metric`).

A task lists its metrics in :attr:`jurist.Task.metrics`: a mapping ``name -> description``
(figures the task's own ``summarize`` computes), or a list of :class:`Metric` objects. A
``Metric`` with a function is computed by the scoring loop on the scored per-item table
(and the gold, when it needs gold) and written into the run's summary as ``name`` (and
``name_low`` / ``name_high`` when it gives an interval). From ``summary.json`` it reaches
``jurist score``, the Markdown and HTML reports, the run comparison of ``jurist view``,
MLflow, and the calibration leaderboard, with no other definition.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from numbers import Real
from typing import TYPE_CHECKING, Any

from jurist.errors import ConfigError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Metric", "MetricValue", "computed_metrics", "metric_list", "metric_markdown", "metric_values"]

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.@-]*$")


@dataclass(frozen=True)
class MetricValue:
    """A metric's value with an interval (``low <= value <= high`` is not checked)."""

    value: float | None
    low: float | None = None
    high: float | None = None


@dataclass(frozen=True)
class Metric:
    """One named figure of a task, declared once.

    Attributes:
        name: Its name in the summary, the reports, the leaderboard and MLflow: letters,
            digits, ``_``, ``.``, ``@``, ``-``, starting with a letter or ``_``, and not
            ending in ``_low`` or ``_high`` (those name its interval).
        fn: ``fn(items)`` (or ``fn(items, gold)`` when ``needs_gold``), where ``items`` is
            the scored per-item table (one row per item, failed items included with
            ``status == "failed"``) and ``gold`` the task's dataset read from the gold file
            (what :meth:`jurist.Task.read` returns). It returns a number, ``None`` (not
            defined, e.g. no item), a ``(value, low, high)`` tuple, or a
            :class:`MetricValue`. ``None``: the task's ``summarize`` computes the figure and
            this only describes it.
        description: What it measures (``jurist tasks show``, the reports).
        higher_is_better: Whether a larger value is better (the reports say so).
        needs_gold: Computed only when the run is scored against gold (``jurist score
            --gold``, ``jurist judge`` on data that carries gold, ``jurist calibrate``). A
            task with such a metric can be calibrated without writing ``calibration``.
    """

    name: str
    fn: Callable[..., Any] | None = None
    description: str = ""
    higher_is_better: bool = True
    needs_gold: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise ConfigError(
                f"metric name {self.name!r} must start with a letter or '_' and hold only "
                "letters, digits, '_', '.', '@', '-'",
                field="metrics",
            )
        if self.name.endswith(("_low", "_high")):
            raise ConfigError(
                f"metric name {self.name!r} must not end in '_low' or '_high' (they name its interval)",
                field="metrics",
            )
        if self.fn is not None and not callable(self.fn):
            raise ConfigError(f"metric {self.name!r}: fn must be callable", field="metrics")

    def compute(self, items: pd.DataFrame, gold: Any = None) -> MetricValue:
        """The metric's value on a scored per-item table (and the gold dataset).

        Raises:
            ConfigError: The function failed or returned something that is not a number,
                ``None``, a ``(value, low, high)`` tuple or a :class:`MetricValue`.
        """
        if self.fn is None:
            raise ConfigError(f"metric {self.name!r} has no function to compute it", field="metrics")
        try:
            found = self.fn(items, gold) if self.needs_gold else self.fn(items)
        except Exception as exc:
            raise ConfigError(
                f"metric {self.name!r} failed: {type(exc).__name__}: {exc}", field="metrics"
            ) from exc
        if isinstance(found, MetricValue):
            parts: tuple[Any, ...] = (found.value, found.low, found.high)
        elif isinstance(found, tuple) and len(found) == 3:
            parts = found
        else:
            parts = (found, None, None)
        value, low, high = (_number(self.name, part) for part in parts)
        return MetricValue(value, low, high)


def _number(name: str, value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ConfigError(
            f"metric {name!r} returned {type(value).__name__} {value!r}; expected a number, None, "
            "a (value, low, high) tuple or a MetricValue",
            field="metrics",
        )
    number = float(value)
    return number if math.isfinite(number) else None


def metric_list(declared: Mapping[str, str] | Sequence[Metric | str]) -> list[Metric]:
    """A task's ``metrics`` attribute as :class:`Metric` objects, in order.

    ``declared`` is a mapping ``name -> description`` or a sequence of :class:`Metric`
    (a bare name stands for a metric without a function or description).

    Raises:
        ConfigError: An entry is neither, or two metrics share a name.
    """
    found: list[Metric] = []
    if isinstance(declared, Mapping):
        entries: list[Metric] = []
        for name, text in declared.items():
            entries.append(text if isinstance(text, Metric) else Metric(str(name), description=str(text)))
    else:
        entries = []
        for value in declared:
            if isinstance(value, Metric):
                entries.append(value)
            elif isinstance(value, str):
                entries.append(Metric(value))
            else:
                raise ConfigError(
                    f"metrics: {value!r} is not a jurist.Metric (or a metric name)", field="metrics"
                )
    names: set[str] = set()
    for metric in entries:
        if metric.name in names:
            raise ConfigError(f"metrics: {metric.name!r} is declared twice", field="metrics")
        names.add(metric.name)
        found.append(metric)
    return found


def computed_metrics(declared: Mapping[str, str] | Sequence[Metric | str]) -> list[Metric]:
    """The declared metrics the loop computes (those with a function)."""
    return [metric for metric in metric_list(declared) if metric.fn is not None]


def metric_values(
    metrics: Sequence[Metric], items: pd.DataFrame, gold: Any, *, with_gold: bool, taken: Mapping[str, Any]
) -> dict[str, float | None]:
    """The summary entries of computed metrics: ``name`` and, with an interval, ``name_low``
    and ``name_high``. Metrics that need gold are left out unless ``with_gold``.

    Raises:
        ConfigError: A metric failed, or its name is already a figure of the summary
            (``taken``).
    """
    out: dict[str, float | None] = {}
    for metric in metrics:
        if metric.fn is None or (metric.needs_gold and not with_gold):
            continue
        if metric.name in taken:
            raise ConfigError(
                f"metric {metric.name!r}: the summary already has a figure of that name; rename the metric",
                field="metrics",
            )
        result = metric.compute(items, gold)
        out[metric.name] = result.value
        if result.low is not None or result.high is not None:
            out[f"{metric.name}_low"] = result.low
            out[f"{metric.name}_high"] = result.high
    return out


def metric_markdown(metrics: Sequence[Metric], summary: Mapping[str, Any]) -> str:
    """The report section of the computed metrics a summary holds ("" when none)."""
    from jurist.report.markdown import fmt, table

    rows = []
    for metric in metrics:
        if metric.name not in summary:
            continue
        value = fmt(summary[metric.name])
        low, high = summary.get(f"{metric.name}_low"), summary.get(f"{metric.name}_high")
        if low is not None and high is not None and summary[metric.name] is not None:
            value = f"{value} [{fmt(low)}, {fmt(high)}]"
        better = "higher" if metric.higher_is_better else "lower"
        rows.append([metric.name, value, better, metric.description])
    if not rows:
        return ""
    return "## metrics\n\n" + table(["metric", "value", "better", "what it measures"], rows) + "\n"
