"""The calibration leaderboard as Markdown (CI logs, PRs, README), CSV/JSON (machines) and a
self-contained HTML page (``leaderboard.html``: agreement bars with interval whiskers, the
leaderboard, per-class precision and recall, gates)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from jurist.atomic import atomic_write_text
from jurist.report.console import figure_name
from jurist.report.figures import Figure
from jurist.report.jsonout import dumps
from jurist.report.markdown import fmt, table

__all__ = [
    "LEADERBOARD_COLUMNS",
    "Calibration",
    "CalibrationThresholds",
    "GateCheck",
    "calibration_csv",
    "calibration_figures",
    "calibration_html",
    "calibration_markdown",
    "write_calibration",
]


@dataclass(frozen=True)
class CalibrationThresholds:
    """Gates on every leaderboard row; ``None`` leaves a gate off.

    Attributes:
        min_kappa: Cohen's kappa with gold at least this.
        min_accuracy: Accuracy at least this.
        min_auroc: AUROC at least this (judges with a score only).
        max_failed_rate: Failed judgments / judgments at most this.
        min_consistency: Pairwise: consistent pairs / pairs with both orders at least this.
        max_position_bias: Pairwise: ``|position_1_rate − 0.5|`` at most this.
        max_length_bias: Pairwise: ``|longer_win_rate − gold_longer_rate|`` at most this.
    """

    min_kappa: float | None = None
    min_accuracy: float | None = None
    min_auroc: float | None = None
    max_failed_rate: float | None = None
    min_consistency: float | None = None
    max_position_bias: float | None = None
    max_length_bias: float | None = None

    def checks(self) -> list[tuple[str, str, str, float]]:
        """``(gate, column, "min"|"max", threshold)`` of every gate that is set."""
        table_ = [
            ("min_kappa", "kappa", "min"),
            ("min_accuracy", "accuracy", "min"),
            ("min_auroc", "auroc", "min"),
            ("max_failed_rate", "failed_rate", "max"),
            ("min_consistency", "consistency", "min"),
            ("max_position_bias", "position_bias", "max"),
            ("max_length_bias", "length_bias_abs", "max"),
        ]
        return [
            (gate, column, kind, getattr(self, gate))
            for gate, column, kind in table_
            if getattr(self, gate) is not None
        ]


@dataclass(frozen=True)
class GateCheck:
    """The outcome of one gate on one leaderboard row."""

    gate: str
    dataset: str
    judge: str
    value: float | None
    threshold: float
    passed: bool


def _clean(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, np.generic):
        return _clean(value.item())
    return value


@dataclass
class Calibration:
    """A finished calibration.

    Attributes:
        task: The task.
        leaderboard: One row per (dataset, judge); columns in :data:`LEADERBOARD_COLUMNS`
            order, then the task's own columns and per-class ``precision_{label}`` / ``recall_{label}``.
        by_label: Per (dataset, judge, side, label): ``n``, ``agreed``, ``rate`` and its
            Wilson interval (side ``gold``: recall; side ``judge``: precision).
        gates: Every gate checked, one per (gate, row).
        settings: Resamples, confidence, seed, options, length unit, and ``metrics`` (the
            task's declared metrics, name -> what it measures) when it declares any.
        out_dir: Where the runs and reports were written.
    """

    task: str
    leaderboard: pd.DataFrame
    by_label: pd.DataFrame
    gates: list[GateCheck] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)
    out_dir: Path | None = None

    @property
    def passed(self) -> bool:
        """True when every gate passed (also when none was set)."""
        return all(check.passed for check in self.gates)

    def __repr__(self) -> str:
        rows = self.leaderboard.to_dict(orient="records")
        names = agreement_names(self.settings)
        judges = ", ".join(f"{row['judge']} {names['kappa']} {_ci(row, 'kappa')}" for row in rows[:4])
        more = f", +{len(rows) - 4} more" if len(rows) > 4 else ""
        gates = "" if not self.gates else (" · gates passed" if self.passed else " · a gate failed")
        return f"<Calibration {self.task}: {len(rows)} row(s) · {judges}{more}{gates}>"

    def _repr_html_(self) -> str:
        """Jupyter's display: the leaderboard's agreement and cost columns, one row per judge."""
        from html import escape

        names = agreement_names(self.settings)
        headers = ["dataset", "judge", "items", "failed", names["accuracy"], names["kappa"]]
        headers += ["paid tokens/judgment", "cached"]
        body = []
        for row in self.leaderboard.to_dict(orient="records"):
            cells = [row["dataset"], row["judge"], _number(row.get("items")), _number(row.get("failed"))]
            cells += [_ci(row, "accuracy"), _ci(row, "kappa"), _number(row.get("tokens_per_judgment"))]
            cells.append(cached_share(row))
            body.append("<tr>" + "".join(f"<td>{escape(str(cell))}</td>" for cell in cells) + "</tr>")
        head = "".join(f"<th>{escape(name)}</th>" for name in headers)
        caption = f"<caption>calibration · {escape(self.task)}</caption>"
        return f"<table>{caption}<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready contents (NaN written as ``None``)."""

        def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
            return [{k: _clean(v) for k, v in row.items()} for row in frame.to_dict(orient="records")]

        return {
            "task": self.task,
            "passed": self.passed,
            "settings": self.settings,
            "leaderboard": records(self.leaderboard),
            "by_label": records(self.by_label),
            "gates": [{k: _clean(v) for k, v in asdict(check).items()} for check in self.gates],
        }


LEADERBOARD_COLUMNS = [
    "task",
    "dataset",
    "judge",
    "model",
    "items",
    "judgments",
    "failed",
    "failed_rate",
    "accuracy",
    "accuracy_low",
    "accuracy_high",
    "kappa",
    "kappa_low",
    "kappa_high",
    "auroc",
    "auroc_low",
    "auroc_high",
    "consistency",
    "position_1_rate",
    "position_1_rate_low",
    "position_1_rate_high",
    "position_bias",
    "longer_win_rate",
    "longer_win_rate_low",
    "longer_win_rate_high",
    "gold_longer_rate",
    "length_bias",
    "length_bias_abs",
    "tokens_per_judgment",
    "prompt_tokens_per_judgment",
    "completion_tokens_per_judgment",
    "cost_per_judgment",
    "latency_s",
    "calls",
    "cache_hits",
    "run_dir",
]
"""The leaderboard's columns, in order (the task's own and per-class columns follow)."""


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _ci(row: dict[str, Any], name: str) -> str:
    value = row.get(name)
    if _missing(value):
        return "n/a"
    low, high = row.get(f"{name}_low"), row.get(f"{name}_high")
    if _missing(low) or _missing(high):
        return fmt(value)
    return f"{fmt(value)} [{fmt(low)}, {fmt(high)}]"


def _number(value: Any, digits: int = 0) -> str:
    if _missing(value):
        return "n/a"
    return f"{value:,.{digits}f}"


def _cost(value: Any) -> str:
    return "n/a" if _missing(value) else f"${value:.5f}"


_SHOWN_ELSEWHERE = {"accuracy", "kappa", "auroc", "position_1_rate", "longer_win_rate"}


PAID_NOTE = (
    "Paid tokens and cost: what this calibration's provider calls cost; an answer read from the "
    "response cache counts 0. Cached: the share of the judge's calls answered from the cache "
    "(a judge run before is mostly cached: compare judges on runs with the same share)."
)


def cached_share(row: dict[str, Any]) -> str:
    """``"75% (3 of 4)"``: the share of a row's LM calls answered from the cache, or ``n/a``
    for a judge that made no call (a baseline)."""
    calls: Any = row.get("calls")
    hits: Any = row.get("cache_hits")
    if _missing(calls) or _missing(hits):
        return "n/a"
    total = int(calls) + int(hits)
    if total == 0:
        return "n/a"
    return f"{round(100 * int(hits) / total)}% ({int(hits)} of {total})"


def _task_metrics(rows: list[dict[str, Any]], declared: Any = ()) -> list[str]:
    """A task's own figures with intervals (e.g. entity F1, Hits@1, ROUGE-L), and the metrics
    it declares (``declared``: names, with or without an interval), in column order."""
    names: list[str] = []
    for row in rows:
        for key in row:
            if (
                key not in _SHOWN_ELSEWHERE
                and not key.endswith(("_low", "_high"))
                and not key.startswith(("precision_", "recall_"))
                and (f"{key}_low" in row or key in declared)
                and key not in names
                and not all(_missing(other.get(key)) for other in rows)
            ):
                names.append(key)
    return names


def calibration_markdown(calibration: Calibration) -> str:
    """The leaderboard, per-class agreement, bias probes (pairwise) and gates, in Markdown."""
    rows = calibration.leaderboard.to_dict(orient="records")
    settings = calibration.settings
    lines = [
        f"# Judge calibration: {calibration.task}",
        "",
        f"Gold: {', '.join(settings.get('gold', []))}. Judges: {', '.join(settings.get('judges', []))}. "
        f"Intervals: {int(100 * settings.get('confidence', 0.95))}% percentile bootstrap "
        f"({settings.get('n_resamples')} resamples, seed {settings.get('seed')}). "
        "Failed judgments are counted, never scored.",
        "",
        "## Leaderboard",
        "",
    ]
    # Columns and sections follow the figures the rows have, never the task's name.
    pairwise = any(not _missing(row.get("consistency")) for row in rows)
    with_auroc = any(not _missing(row.get("auroc")) for row in rows) or not pairwise
    names = agreement_names(settings)
    headers = ["dataset", "judge", "model", "items", "failed", names["accuracy"], names["kappa"]]
    headers += [names["auroc"]] if with_auroc else []
    headers += ["paid tokens/judgment", "cached", "paid cost/judgment", "latency s"]
    body = []
    for row in rows:
        cells = [
            row["dataset"],
            row["judge"],
            row["model"],
            row["items"],
            f"{row['failed']} ({fmt(row['failed_rate'] * 100, 1)}%)",
            _ci(row, "accuracy"),
            _ci(row, "kappa"),
        ]
        cells += [_ci(row, "auroc")] if with_auroc else []
        cells += [
            _number(row.get("tokens_per_judgment")),
            cached_share(row),
            _cost(row.get("cost_per_judgment")),
        ]
        cells += [_number(row.get("latency_s"), 3)]
        body.append(cells)
    lines += [table(headers, body), "", PAID_NOTE, ""]
    task_metrics = _task_metrics(rows, settings.get("metrics") or ())
    if task_metrics:
        lines += [
            "## Task metrics",
            "",
            table(
                ["dataset", "judge", *[figure_name(name) for name in task_metrics]],
                [[row["dataset"], row["judge"], *[_ci(row, name) for name in task_metrics]] for row in rows],
            ),
            "",
        ]
    if pairwise:
        unit = settings.get("length_unit", "words")
        lines += [
            "## Bias probes",
            "",
            "Consistency: pairs whose two orders agree / pairs with both orders answered. Position-1 "
            "rate: decisive judgments (both orders) that chose the response shown first; 0.5 is no "
            "position bias. Longer wins: decisive judgments that chose the longer response "
            f"(in {unit}); gold longer: pairs whose gold winner is the longer one; length bias is "
            "their difference.",
            "",
            table(
                [
                    "dataset",
                    "judge",
                    "consistency",
                    "position-1 rate",
                    "longer wins",
                    "gold longer",
                    "length bias",
                ],
                [
                    [
                        row["dataset"],
                        row["judge"],
                        fmt(row.get("consistency")),
                        _ci(row, "position_1_rate"),
                        _ci(row, "longer_win_rate"),
                        fmt(row.get("gold_longer_rate")),
                        fmt(row.get("length_bias")),
                    ]
                    for row in rows
                ],
            ),
            "",
        ]
    lines += ["## Per-class precision and recall", ""]
    labels = calibration.by_label
    class_rows = []
    for (dataset, judge), group in labels.groupby(["dataset", "judge"], sort=False):
        recall = {r.label: r for r in group[group["side"] == "gold"].itertuples(index=False)}
        precision = {r.label: r for r in group[group["side"] == "judge"].itertuples(index=False)}
        for label in sorted(set(recall) | set(precision), key=str):
            r, p = recall.get(label), precision.get(label)
            class_rows.append(
                [
                    dataset,
                    judge,
                    label,
                    "n/a" if p is None else f"{fmt(p.rate)} ({p.agreed}/{p.n})",
                    "n/a" if r is None else f"{fmt(r.rate)} ({r.agreed}/{r.n})",
                ]
            )
    lines += [table(["dataset", "judge", "class", "precision", "recall"], class_rows), ""]
    if calibration.gates:
        verdict = "passed" if calibration.passed else "FAILED"
        lines += [f"## Gates: {verdict}", ""]
        lines += [
            f"- {'PASS' if check.passed else 'FAIL'} {check.gate} {check.threshold:g}: "
            f"{check.judge} on {check.dataset} = {'n/a' if check.value is None else f'{check.value:.3f}'}"
            for check in calibration.gates
        ]
        lines.append("")
    return "\n".join(lines)


def calibration_csv(calibration: Calibration) -> str:
    """The leaderboard as CSV, every column (intervals, per-class rates, usage, run dirs)."""
    return calibration.leaderboard.to_csv(index=False)


_AGREEMENT = (
    ("accuracy", "Accuracy against gold", "accuracy", "judgments equal to the gold label / judged items"),
    ("kappa", "Cohen's kappa against gold", "kappa", "agreement beyond chance: (p_o - p_e) / (1 - p_e)"),
    ("auroc", "AUROC against gold", "AUROC", "how well the judge's score separates the gold classes"),
)

_NAMED = {
    "QWK": (
        "QWK (quadratic-weighted kappa) against gold",
        "agreement beyond chance, each disagreement "
        "weighted by its squared distance: 1 - sum(w O) / sum(w E)",
    ),
    "exact agreement": ("Exact agreement with gold", "scores equal to the gold score / judged items"),
    "exact match": ("Exact match with gold", "label sets equal to the gold set / judged items"),
}
"""Title and meaning of the ``accuracy`` and ``kappa`` columns under the names a task gives
them (``settings["agreement_names"]``: a score task's ``kappa`` is its QWK)."""


def agreement_names(settings: dict[str, Any]) -> dict[str, str]:
    """What the leaderboard calls its ``accuracy``, ``kappa`` and ``auroc`` columns: the names
    the task's calibration rows gave them (``settings["agreement_names"]``), else these."""
    return {
        "accuracy": "accuracy",
        "kappa": "kappa",
        "auroc": "AUROC",
        **(settings.get("agreement_names") or {}),
    }


def _agreement(settings: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    names = agreement_names(settings)
    found = []
    for key, title, axis, meaning in _AGREEMENT:
        if names[key] in _NAMED:
            title, meaning = _NAMED[names[key]]
            axis = names[key]
        found.append((key, title, axis, meaning))
    return found


def _bar(row: dict[str, Any], name: str, several_datasets: bool) -> dict[str, Any]:
    label = f"{row['judge']} · {row['dataset']}" if several_datasets else str(row["judge"])
    bar: dict[str, Any] = {"label": label, "value": _clean(row.get(name)), "group": str(row["dataset"])}
    low, high = _clean(row.get(f"{name}_low")), _clean(row.get(f"{name}_high"))
    if low is not None and high is not None:
        bar.update(low=low, high=high)
    return bar


def calibration_figures(calibration: Calibration) -> list[Figure]:
    """Bars of each judge's agreement with gold (accuracy, kappa, AUROC where any judge has
    it, and the task's own figures with intervals), one bar per (dataset, judge), with the
    bootstrap interval as a whisker."""
    rows = calibration.leaderboard.to_dict(orient="records")
    if not rows:
        return []
    several = len({row["dataset"] for row in rows}) > 1
    level = int(100 * calibration.settings.get("confidence", 0.95))
    whiskers = f"Whiskers: {level}% bootstrap interval."
    figures = []
    for name, title, axis, meaning in _agreement(calibration.settings):
        if all(_missing(row.get(name)) for row in rows):
            continue
        limits = {"ylim": [0, 1.05]} if name in {"accuracy", "auroc"} else {}
        figures.append(
            Figure(
                kind="bars",
                title=title,
                data={"bars": [_bar(row, name, several) for row in rows], "ylabel": axis, **limits},
                caption=f"{axis[0].upper() + axis[1:]}: {meaning}. {whiskers} Colour: gold dataset.",
            )
        )
    declared = calibration.settings.get("metrics") or {}
    for name in _task_metrics(rows, declared):
        label = figure_name(name)
        figures.append(
            Figure(
                kind="bars",
                title=label,
                data={"bars": [_bar(row, name, several) for row in rows], "ylabel": label},
                caption=f"The task's own figure {label}"
                + (f": {declared[name]}." if isinstance(declared, dict) and declared.get(name) else ".")
                + (f" {whiskers}" if any(not _missing(row.get(f"{name}_low")) for row in rows) else ""),
            )
        )
    return figures


def _cell(row: dict[str, Any], name: str) -> dict[str, str]:
    value = _clean(row.get(name))
    return {"text": _ci(row, name), "sort": "" if value is None else repr(float(value))}


def _failed(row: dict[str, Any]) -> str:
    rate = _clean(row.get("failed_rate"))
    return f"{_number(row.get('failed'))} ({fmt(100 * (rate or 0.0), 1)}%)"


def _natural(label: Any) -> tuple[int, float, str]:
    text = str(label)
    try:
        return (0, float(text), text)
    except ValueError:
        return (1, 0.0, text)


def calibration_html(calibration: Calibration) -> str:
    """The calibration as one self-contained HTML page (``leaderboard.html``): agreement bars
    with interval whiskers, the leaderboard, per-class precision and recall, and gates."""
    from jurist.report.html import figure_blocks, render_template

    rows = calibration.leaderboard.to_dict(orient="records")
    settings = calibration.settings
    with_auroc = any(not _missing(row.get("auroc")) for row in rows)
    declared = settings.get("metrics") or ()
    metrics = ["accuracy", "kappa", *(["auroc"] if with_auroc else []), *_task_metrics(rows, declared)]
    leaderboard = [
        {
            "dataset": row["dataset"],
            "judge": row["judge"],
            "model": row.get("model"),
            "n_items": _number(row.get("items")),
            "failed": _failed(row),
            "metrics": [_cell(row, name) for name in metrics],
            "tokens": _number(row.get("tokens_per_judgment")),
            "cached": cached_share(row),
            "cost": _cost(row.get("cost_per_judgment")),
            "latency": _number(row.get("latency_s"), 3),
        }
        for row in rows
    ]
    classes = []
    labels = calibration.by_label
    for (dataset, judge), group in labels.groupby(["dataset", "judge"], sort=False):
        recall = {r.label: r for r in group[group["side"] == "gold"].itertuples(index=False)}
        precision = {r.label: r for r in group[group["side"] == "judge"].itertuples(index=False)}
        for label in sorted(set(recall) | set(precision), key=_natural):
            cells = []
            for found in (precision.get(label), recall.get(label)):
                if found is None:
                    cells.append({"text": "n/a", "sort": ""})
                    continue
                interval = {"rate": found.rate, "rate_low": found.rate_low, "rate_high": found.rate_high}
                text = f"{_ci(interval, 'rate')} ({found.agreed}/{found.n})"
                rate = _clean(found.rate)
                cells.append({"text": text, "sort": "" if rate is None else repr(float(rate))})
            classes.append({"dataset": dataset, "judge": judge, "label": label, "cells": cells})
    return render_template(
        "calibration.html",
        title=f"calibration · {calibration.task}",
        task=calibration.task,
        gold=", ".join(str(g) for g in settings.get("gold", [])),
        judges=", ".join(str(j) for j in settings.get("judges", [])),
        level=int(100 * settings.get("confidence", 0.95)),
        resamples=settings.get("n_resamples"),
        seed=settings.get("seed"),
        figures=figure_blocks(calibration_figures(calibration)),
        metrics=[agreement_names(settings).get(name, name.replace("_", " ")) for name in metrics],
        paid_note=PAID_NOTE,
        leaderboard=leaderboard,
        classes=classes,
        gates=[
            {
                "passed": check.passed,
                "text": f"{check.gate} {check.threshold:g}: {check.judge} on {check.dataset} = "
                + ("n/a" if check.value is None else f"{check.value:.3f}"),
            }
            for check in calibration.gates
        ],
        passed=calibration.passed,
    )


def write_calibration(calibration: Calibration, out_dir: str | Path) -> list[Path]:
    """Write ``leaderboard.md``, ``leaderboard.html``, ``leaderboard.csv``, ``by_label.csv``
    and ``calibration.json`` (each atomically, redacted)."""
    folder = Path(out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    written = {
        "leaderboard.md": calibration_markdown(calibration),
        "leaderboard.html": calibration_html(calibration),
        "leaderboard.csv": calibration_csv(calibration),
        "by_label.csv": pd.DataFrame(calibration.by_label).to_csv(index=False),
        "calibration.json": dumps(calibration.to_dict()),
    }
    paths = []
    for name, text in written.items():
        path = folder / name
        atomic_write_text(path, text)
        paths.append(path)
    return paths
