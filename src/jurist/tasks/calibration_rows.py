"""What every calibration shares: the judge spec, the columns every leaderboard row has
(:func:`leaderboard_row`), bootstrap intervals of count statistics, agreement from
confusion cells, and run-directory naming.

The ``calibrate`` verb (:func:`jurist.jury.gold_row.calibration_row`) judges each gold file
and builds every row with :func:`leaderboard_row`; a task's ``calibration`` part
(``jurist.tasks.<task>.calibration``) computes only what is its own (which items it
compares, its agreement figures, its per-label table), so no task package repeats the
common columns. The verb also adds the task's declared metrics (:class:`jurist.Metric`) to
every row."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from jurist.datasets.samples import resolve_input
from jurist.judges.config import JudgeConfig
from jurist.metrics.count_codes import CountCodes, summed_rows
from jurist.metrics.gold_agreement import bootstrap_ci, kappa_from_confusion
from jurist.runner import iter_run_results
from jurist.schemas import ItemResult

NAN = float("nan")

LABEL_COLUMNS = ["side", "label", "n", "agreed", "rate", "rate_low", "rate_high"]
"""The columns of a per-label table (``by_label``), before ``dataset`` and ``judge``."""


@dataclass(frozen=True)
class JudgeSpec:
    """One judge of a calibration: its name in the leaderboard and its config."""

    name: str
    config: JudgeConfig


def ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """``numerator / denominator`` element-wise, NaN where the denominator is 0."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, numerator / denominator, np.nan)


def bootstrap(
    cells: np.ndarray | CountCodes, statistic: Callable[[np.ndarray], np.ndarray], settings: dict[str, Any]
) -> tuple[float, float, float]:
    """Point value (on all rows) and bootstrap interval of a statistic of summed counts (per-item
    rows, or :class:`~jurist.metrics.count_codes.CountCodes`: the same figures)."""
    if len(cells) == 0:
        return NAN, NAN, NAN
    point = float(np.asarray(statistic(summed_rows(cells))).reshape(-1)[0])
    low, high = bootstrap_ci(
        cells,
        statistic,
        n_resamples=settings["n_resamples"],
        confidence=settings["confidence"],
        seed=settings["seed"],
    )
    return point, low, high


def confusion_cells(gold: Sequence[str], predicted: Sequence[str], labels: Sequence[str]) -> np.ndarray:
    """One row per item: the item's cell of the ``k × k`` confusion matrix, one-hot, flattened."""
    k = len(labels)
    index = {label: i for i, label in enumerate(labels)}
    cells = np.zeros((len(gold), k * k))
    for row, (g, p) in enumerate(zip(gold, predicted, strict=True)):
        cells[row, index[g] * k + index[p]] = 1
    return cells


def label_agreement(
    gold: list[str], predicted: list[str], labels: Sequence[str], settings: dict[str, Any]
) -> dict[str, float]:
    """Accuracy and kappa (with intervals) from per-item one-hot confusion cells."""
    k = len(labels)
    cells = confusion_cells(gold, predicted, labels)

    def accuracy(c: np.ndarray) -> np.ndarray:
        matrix = c.reshape(-1, k, k)
        return ratio(np.trace(matrix, axis1=1, axis2=2), matrix.sum(axis=(1, 2)))

    def kappa(c: np.ndarray) -> np.ndarray:
        return kappa_from_confusion(c.reshape(-1, k, k))

    result: dict[str, float] = {}
    for name, fn in (("accuracy", accuracy), ("kappa", kappa)):
        result[name], result[f"{name}_low"], result[f"{name}_high"] = bootstrap(cells, fn, settings)
    return result


def per_class_columns(by_label: pd.DataFrame) -> dict[str, float]:
    """``recall_{label}`` (gold side) and ``precision_{label}`` (verdict side) columns."""
    out: dict[str, float] = {}
    for row in by_label.itertuples(index=False):
        kind = "recall" if row.side == "gold" else "precision"
        out[f"{kind}_{row.label}"] = float(row.rate)
    return out


def usage_columns(results: list[ItemResult]) -> dict[str, Any]:
    """Tokens, cost and latency per judgment, and the run's calls and cache hits."""
    n = len(results)
    if n == 0:
        return {}
    prompt = sum(r.usage.prompt_tokens for r in results)
    completion = sum(r.usage.completion_tokens for r in results)
    costs = [r.usage.cost for r in results if r.usage.cost is not None]
    return {
        "tokens_per_judgment": (prompt + completion) / n,
        "prompt_tokens_per_judgment": prompt / n,
        "completion_tokens_per_judgment": completion / n,
        "cost_per_judgment": sum(costs) / n if costs else None,
        "latency_s": sum(r.latency_s for r in results) / n,
        "calls": sum(r.usage.calls for r in results),
        "cache_hits": sum(r.usage.cache_hits for r in results),
    }


def run_results(run_dir: Path) -> list[ItemResult]:
    """Every recorded item of a judge's run directory."""
    return list(iter_run_results(run_dir))


def judge_run_dir(out: Path, spec: JudgeSpec) -> Path:
    """Where a judge's run on the gold set is kept (resumed and cached on re-runs)."""
    return out / "runs" / f"{spec.name}-{spec.config.fingerprint()[:8]}"


def dataset_name(path: str | Path) -> str:
    """A gold file's name in the leaderboard: its stem, or its folder for generic stems."""
    file = resolve_input(path)
    return file.parent.name if file.stem.lower() in {"dataset", "data", "test", "train", "dev"} else file.stem


def label_table() -> pd.DataFrame:
    """An empty per-label table (a task whose verdict has no classes)."""
    return pd.DataFrame(columns=LABEL_COLUMNS)


def leaderboard_row(
    task: str,
    dataset: str,
    spec: JudgeSpec,
    run_dir: Path,
    *,
    items: int,
    failed: int,
    results: Sequence[ItemResult],
    judgments: int | None = None,
    model: str | None = None,
    by_label: pd.DataFrame | None = None,
    figures: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """One leaderboard row: the columns every row has, then the task's own.

    Common columns: ``task``, ``dataset``, ``judge`` (the spec's name), ``model`` (default:
    the spec's), ``items`` (gold items compared), ``judgments`` (default: ``items``),
    ``failed``, ``failed_rate`` (``failed / judgments``, NaN without judgments),
    ``run_dir``, the per-class ``recall_{label}`` / ``precision_{label}`` of ``by_label``,
    and the usage of ``results`` (:func:`usage_columns`). ``figures`` (agreement, bias,
    the task's own columns) come between the counts and the per-class columns and may
    not name a common column.

    Raises:
        ValueError: ``figures`` names a common column.
    """
    count = items if judgments is None else judgments
    row: dict[str, Any] = {
        "task": task,
        "dataset": dataset,
        "judge": spec.name,
        "model": spec.config.model if model is None else model,
        "items": items,
        "judgments": count,
        "failed": failed,
        "failed_rate": failed / count if count else NAN,
        "run_dir": str(run_dir),
    }
    clash = sorted(set(figures or {}) & set(row))
    if clash:
        raise ValueError(f"the task's figures name common leaderboard columns: {', '.join(clash)}")
    row.update(figures or {})
    if by_label is not None:
        row.update(per_class_columns(by_label))
    row.update(usage_columns(list(results)))
    return row
