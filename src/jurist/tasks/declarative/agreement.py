"""Agreement of a YAML task's verdicts with gold, per output kind, with bootstrap intervals.

Point values are computed on every scored item; intervals are percentile-bootstrap
intervals (:func:`jurist.metrics.gold_agreement.bootstrap_ci`) resampling items (pairwise:
rows, both orders together). Every figure is a pure function of :mod:`jurist.metrics`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from jurist.metrics import ordinal, preference, verdicts
from jurist.metrics.count_codes import CountCodes, summed_rows
from jurist.metrics.curves import expected_calibration_error
from jurist.metrics.gold_agreement import agreement_by_label, auroc_from_counts, bootstrap_cis
from jurist.tasks.calibration_rows import bootstrap
from jurist.tasks.declarative.spec import TaskFile
from jurist.tasks.declarative.verdicts import verdict_text

__all__ = ["DEFAULT_SETTINGS", "calibration_figures", "gold_agreement", "pair_figures", "with_interval"]

NAN = float("nan")
DEFAULT_SETTINGS: dict[str, Any] = {"n_resamples": 1000, "confidence": 0.95, "seed": 0}
Statistic = Callable[[np.ndarray], np.ndarray]
Cells = np.ndarray | CountCodes
"""Per-item count rows, or one code per item (:mod:`jurist.metrics.count_codes`)."""


def with_interval(
    name: str, cells: Cells, statistic: Statistic, settings: dict[str, Any]
) -> dict[str, float]:
    """``{name, name_low, name_high}``: the statistic on all rows and its bootstrap interval."""
    point, low, high = bootstrap(cells, statistic, settings)
    return {name: point, f"{name}_low": low, f"{name}_high": high}


def with_intervals(
    cells: Cells, statistics: dict[str, Statistic], settings: dict[str, Any]
) -> dict[str, float]:
    """:func:`with_interval` of each statistic, from one set of resamples of ``cells`` (the
    same intervals as one bootstrap per statistic, drawn once)."""
    if len(cells) == 0:
        return {key: NAN for name in statistics for key in (name, f"{name}_low", f"{name}_high")}
    total = summed_rows(cells)
    intervals = bootstrap_cis(
        cells,
        list(statistics.values()),
        n_resamples=settings["n_resamples"],
        confidence=settings["confidence"],
        seed=settings["seed"],
    )
    figures: dict[str, float] = {}
    for (name, statistic), (low, high) in zip(statistics.items(), intervals, strict=True):
        point = float(np.asarray(statistic(total)).reshape(-1)[0])
        figures.update({name: point, f"{name}_low": low, f"{name}_high": high})
    return figures


def _label_set(spec: TaskFile) -> list[str]:
    if spec.kind == "label":
        return list(spec.output.labels or [])
    if spec.kind == "bool":
        return ["true", "false"]
    return list(preference.CHOICES)


def _categorical(
    spec: TaskFile, gold: list[Any], judged: list[Any], settings: dict[str, Any]
) -> dict[str, Any]:
    labels = _label_set(spec)
    g = [verdict_text(v) for v in gold]
    p = [verdict_text(v) for v in judged]
    cells = verdicts.confusion_codes(g, p, labels)
    k = len(labels)

    def kappa(c: np.ndarray) -> np.ndarray:
        from jurist.metrics.gold_agreement import kappa_from_confusion

        return kappa_from_confusion(c.reshape(*c.shape[:-1], k, k))

    statistics: dict[str, Statistic] = {"accuracy": verdicts.accuracy_from_confusion, "kappa": kappa}
    if spec.kind != "bool":
        statistics["macro_f1"] = verdicts.macro_f1_from_confusion
    figures: dict[str, Any] = with_intervals(cells, statistics, settings)
    if spec.kind == "bool":
        binary = verdicts.binary_codes(list(gold), list(judged))
        figures.update(with_interval("f1", binary, verdicts.binary_f1_from_counts, settings))
    matrix = summed_rows(cells).reshape(k, k).astype(int)
    figures["confusion"] = {"labels": labels, "matrix": matrix.tolist(), "rows": "gold", "columns": "judge"}
    return figures


def _auroc(gold: list[bool], confidence: list[float], settings: dict[str, Any]) -> dict[str, float]:
    """AUROC of the confidences against gold, from one code per item: its class and the rank
    of its confidence among the distinct ones (:func:`auroc_from_counts`'s columns)."""
    distinct, rank = np.unique(np.asarray(confidence, dtype=np.float64), return_inverse=True)
    k = len(distinct)
    negative = ~np.asarray(gold, dtype=bool)
    cells = CountCodes(negative.astype(np.intp) * k + rank.reshape(-1), 2 * k)
    return with_interval("auroc", cells, auroc_from_counts, settings)


def _scores(gold: list[float], judged: list[float], settings: dict[str, Any]) -> dict[str, Any]:
    values = sorted({*gold, *judged})
    cells = ordinal.contingency_codes(gold, judged, values)
    statistics: dict[str, Statistic] = {
        "mae": lambda c: ordinal.mean_absolute_error(c, values),
        "rmse": lambda c: ordinal.root_mean_squared_error(c, values),
        "pearson": lambda c: ordinal.pearson(c, values),
        "spearman": ordinal.spearman,
        "kendall_tau": ordinal.kendall_tau_b,
        "exact_agreement": ordinal.exact_agreement,
        "within_1": lambda c: ordinal.within_agreement(c, values, 1.0),
        "qwk": lambda c: ordinal.quadratic_weighted_kappa(c, values),
    }
    figures: dict[str, Any] = with_intervals(cells, statistics, settings)
    figures["mean_gold"] = float(np.mean(gold)) if gold else NAN
    figures["mean_judge"] = float(np.mean(judged)) if judged else NAN
    return figures


def _multilabel(
    spec: TaskFile, gold: list[list[str]], judged: list[list[str]], settings: dict[str, Any]
) -> dict[str, Any]:
    labels = list(spec.output.labels or [])
    g = np.array([[label in row for label in labels] for row in gold], dtype=bool).reshape(-1, len(labels))
    p = np.array([[label in row for label in labels] for row in judged], dtype=bool).reshape(-1, len(labels))
    cells = verdicts.multilabel_codes(g, p)
    statistics: dict[str, Statistic] = {
        "micro_f1": verdicts.multilabel_micro_f1,
        "macro_f1": verdicts.multilabel_macro_f1,
        "exact_match": verdicts.multilabel_exact_match,
    }
    figures: dict[str, Any] = with_intervals(cells, statistics, settings)
    precision, recall, f1 = verdicts.multilabel_per_label(summed_rows(cells)[0])
    figures["per_label"] = {
        label: {"precision": precision[i], "recall": recall[i], "f1": f1[i], "gold": int(g[:, i].sum())}
        for i, label in enumerate(labels)
    }
    return figures


def _multilabel_table(
    spec: TaskFile, gold: list[list[str]], judged: list[list[str]], confidence: float
) -> pd.DataFrame:
    from jurist.metrics.gold_agreement import wilson_interval

    rows = []
    for label in spec.output.labels or []:
        has_gold = [label in row for row in gold]
        has_judge = [label in row for row in judged]
        both = sum(a and b for a, b in zip(has_gold, has_judge, strict=True))
        for side, members in (("gold", sum(has_gold)), ("judge", sum(has_judge))):
            if members == 0:
                continue
            low, high = wilson_interval(both, members, confidence)
            rows.append(
                {
                    "side": side,
                    "label": label,
                    "n": members,
                    "agreed": both,
                    "rate": both / members,
                    "rate_low": low,
                    "rate_high": high,
                }
            )
    return pd.DataFrame(rows, columns=["side", "label", "n", "agreed", "rate", "rate_low", "rate_high"])


def calibration_figures(
    spec: TaskFile, gold: list[Any], judged: list[Any], confidence: list[float | None]
) -> dict[str, Any]:
    """``ece`` (:func:`jurist.metrics.curves.expected_calibration_error`, 10 equal-width bins)
    over the items with a confidence, and ``ece_items``: of the probability of yes against
    gold yes (bool), else of the confidence in the verdict against the verdict equal to gold."""
    outcome: list[bool] = []
    values: list[float] = []
    for g, j, c in zip(gold, judged, confidence, strict=True):
        if c is None:
            continue
        outcome.append(bool(g) if spec.kind == "bool" else verdict_text(g) == verdict_text(j))
        values.append(float(c))
    ece = expected_calibration_error(outcome, values, n_bins=10)
    return {"ece": ece if ece is not None else NAN, "ece_items": len(values)}


def gold_agreement(
    spec: TaskFile,
    gold: list[Any],
    judged: list[Any],
    confidence: list[float | None] | None = None,
    settings: dict[str, Any] | None = None,
    *,
    by_label: bool = True,
) -> tuple[dict[str, Any], pd.DataFrame]:
    """The agreement figures of judged verdicts with gold ones, and the per-label table.

    Args:
        spec: The task (its output kind decides the figures).
        gold: Gold verdicts, one per scored item (pairwise: per row, ``A``/``B``/``tie``).
        judged: The judge's verdicts (pairwise: the rows' combined verdicts).
        confidence: The judge's confidence per item, or ``None`` where it gave none (a stated
            ``confidence``, or the probability its tokens gave: bool, the probability of
            yes, whence AUROC; others, the probability of the verdict): ECE.
        settings: ``n_resamples``, ``confidence`` and ``seed`` of the intervals.
        by_label: Build the per-label table (``False``: an empty one, for a summary that
            shows none).

    Returns:
        The figures (see ``docs/tasks.md``) and a table with ``side``, ``label``, ``n``,
        ``agreed``, ``rate``, ``rate_low``, ``rate_high`` (recall per gold label,
        precision per judged label).
    """
    settings = {**DEFAULT_SETTINGS, **(settings or {})}
    level = settings["confidence"]
    if confidence is not None and not spec.output.confidence and all(c is None for c in confidence):
        confidence = None  # a weighed judge whose items none could be weighed
    if spec.kind == "score":
        figures = _scores([float(v) for v in gold], [float(v) for v in judged], settings)
        if confidence is not None:
            figures.update(calibration_figures(spec, gold, judged, confidence))
        return figures, _label_table(gold, judged, level) if by_label else _no_table()
    if spec.kind == "labels":
        table = _multilabel_table(spec, gold, judged, level) if by_label else _no_table()
        return _multilabel(spec, gold, judged, settings), table
    figures = _categorical(spec, gold, judged, settings)
    if spec.kind == "bool" and confidence is not None:
        pairs = [(bool(g), float(c)) for g, c in zip(gold, confidence, strict=True) if c is not None]
        figures.update(_auroc([g for g, _ in pairs], [c for _, c in pairs], settings))
    if confidence is not None:
        figures.update(calibration_figures(spec, gold, judged, confidence))
    return figures, _label_table(gold, judged, level) if by_label else _no_table()


def _label_table(gold: list[Any], judged: list[Any], level: float) -> pd.DataFrame:
    return agreement_by_label(
        [verdict_text(v) for v in gold], [verdict_text(v) for v in judged], confidence=level
    )


def _no_table() -> pd.DataFrame:
    return pd.DataFrame(columns=["side", "label", "n", "agreed", "rate", "rate_low", "rate_high"])


def _weighted_preference(pairs: pd.DataFrame, settings: dict[str, Any]) -> dict[str, Any]:
    """The win rates of the swap-averaged weighted preferences (:mod:`jurist.metrics.weighted`)
    over the rows weighed in both orders: B's with its bootstrap interval, A's its complement."""
    weighed = pairs[pairs["weighted_preference"].notna()]
    preferences = np.asarray(weighed["weighted_preference"], dtype=float)
    cells = np.column_stack([preferences, np.ones(len(preferences))])
    figures: dict[str, Any] = {"weighted_rows": len(weighed)}
    figures.update(with_interval("weighted_win_rate_B", cells, preference.ratio_of_sums, settings))
    rate = figures["weighted_win_rate_B"]
    figures["weighted_win_rate_A"] = 1.0 - rate if not math.isnan(rate) else NAN
    ties = np.asarray(weighed["weighted_tie"], dtype=float)
    figures["weighted_tie_rate"] = float(ties.mean()) if len(ties) else NAN
    return figures


def pair_figures(pairs: pd.DataFrame, settings: dict[str, Any] | None = None) -> dict[str, Any]:
    """Two-order figures of a pairwise run (see :mod:`jurist.metrics.preference`).

    ``pairs`` has one row per data row with ``choice_AB``/``choice_BA`` (positional
    answers or ``None``), ``winner_AB``/``winner_BA``, ``verdict`` (combined) and, when
    known, ``length_a``/``length_b`` and ``gold``.
    """
    settings = {**DEFAULT_SETTINGS, **(settings or {})}
    first, second = list(pairs["winner_AB"]), list(pairs["winner_BA"])
    figures: dict[str, Any] = {"rows": len(pairs), "complete": int(pairs["verdict"].notna().sum())}
    consistency = preference.consistency_cells(first, second)
    figures.update(with_interval("consistency", consistency, preference.ratio_of_sums, settings))
    position = preference.position_cells(list(pairs["choice_AB"]), list(pairs["choice_BA"]))
    figures.update(with_interval("position_1_rate", position, preference.ratio_of_sums, settings))
    rate = figures["position_1_rate"]
    figures["position_bias"] = abs(rate - 0.5) if not math.isnan(rate) else NAN
    if "weighted_preference" in pairs:
        figures.update(_weighted_preference(pairs, settings))
    complete = [v for v in pairs["verdict"] if isinstance(v, str)]
    for choice in preference.CHOICES:
        figures[f"win_rate_{choice}"] = (
            sum(v == choice for v in complete) / len(complete) if complete else NAN
        )
    if "length_a" in pairs and pairs["length_a"].notna().all():
        length_a = [int(v) for v in pairs["length_a"]]
        length_b = [int(v) for v in pairs["length_b"]]
        cells = preference.length_cells(
            [[a, b] for a, b in zip(first, second, strict=True)], length_a, length_b
        )
        figures.update(with_interval("longer_win_rate", cells, preference.ratio_of_sums, settings))
        if "gold" in pairs and pairs["gold"].notna().any():
            labelled = pairs[pairs["gold"].notna()]
            gold_cells = preference.length_cells(
                [[g] for g in labelled["gold"]],
                [int(v) for v in labelled["length_a"]],
                [int(v) for v in labelled["length_b"]],
            )
            figures["gold_longer_rate"] = float(preference.ratio_of_sums(gold_cells.sum(axis=0)))
            figures["length_bias"] = figures["longer_win_rate"] - figures["gold_longer_rate"]
            figures["length_bias_abs"] = abs(figures["length_bias"])
    return figures
