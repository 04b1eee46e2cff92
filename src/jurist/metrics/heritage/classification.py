"""Custodian type classification metrics: accuracy, per-class and averaged F1, confusions, hierarchy.

Labels are GLAMORCUBESFIXPHDNT letters (:mod:`jurist.metrics.heritage.taxonomy`), but
every function except the hierarchical one works for any string labels.

On the label set of the averages: by default the macro average runs over the labels
that occur in the gold labels or the predictions (scikit-learn's default), not over all
19 types. The framework's sample passed all 19 letters, so every type absent from a
test set counted as F1 = 0 and capped macro-F1 at (types present)/19; pass ``labels``
to average over a fixed set on purpose.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from jurist.metrics.heritage.ner import prf
from jurist.metrics.heritage.taxonomy import CUSTODIAN_TYPES, TYPE_HIERARCHY

__all__ = [
    "classification_example_score",
    "hierarchical_type_metrics",
    "ordered_labels",
    "secondary_type_metrics",
    "type_classification_metrics",
    "type_confusion_analysis",
]


def _check_lengths(y_true: Sequence[Any], y_pred: Sequence[Any]) -> None:
    if len(y_true) != len(y_pred):
        raise ValueError(f"y_true has {len(y_true)} labels and y_pred {len(y_pred)}; they must align")


def ordered_labels(labels: Sequence[str] | set[str]) -> list[str]:
    """Labels in GLAMORCUBESFIXPHDNT order, other labels after them, sorted.

    >>> ordered_labels({"M", "A", "Z", "G"})
    ['G', 'A', 'M', 'Z']
    """
    known = [label for label in CUSTODIAN_TYPES if label in labels]
    return known + sorted(set(labels) - set(CUSTODIAN_TYPES))


def type_classification_metrics(
    y_true: Sequence[str], y_pred: Sequence[str], labels: Sequence[str] | None = None
) -> dict[str, Any]:
    """Accuracy, per-class precision/recall/F1, macro and weighted averages, confusion matrix.

    - ``accuracy = (1/n) Σ_i [y_true_i = y_pred_i]`` over all items.
    - Per class ``c``: ``P_c = TP_c/(TP_c+FP_c)``, ``R_c = TP_c/(TP_c+FN_c)``,
      ``F1_c = 2 P_c R_c/(P_c+R_c)``, 0 when undefined; ``support_c`` = gold count.
    - ``macro_* = (1/|L|) Σ_{c∈L} metric_c``; ``weighted_f1 = Σ_c support_c F1_c / Σ_c support_c``.
    - ``confusion_matrix[i][j]`` = items of gold ``labels[i]`` predicted ``labels[j]``.

    Args:
        y_true: Gold labels.
        y_pred: Predicted labels, aligned with ``y_true``.
        labels: The label set ``L``; default: labels present in either list, in
            GLAMORCUBESFIXPHDNT order. Items whose labels are outside ``L`` still count in
            accuracy but in no per-class figure (as scikit-learn does).
    """
    _check_lengths(y_true, y_pred)
    names = list(labels) if labels is not None else ordered_labels(set(y_true) | set(y_pred))
    n = len(y_true)
    pairs = Counter(zip(y_true, y_pred, strict=True))
    per_class: dict[str, dict[str, Any]] = {}
    for label in names:
        tp = pairs.get((label, label), 0)
        fp = sum(count for (t, p), count in pairs.items() if p == label and t != label)
        fn = sum(count for (t, p), count in pairs.items() if t == label and p != label)
        per_class[label] = {**prf(tp, fp, fn), "support": tp + fn}
    count = len(names)
    support = sum(m["support"] for m in per_class.values())
    return {
        "n": n,
        "accuracy": sum(t == p for t, p in zip(y_true, y_pred, strict=True)) / n if n else None,
        "macro_precision": sum(m["precision"] for m in per_class.values()) / count if count else 0.0,
        "macro_recall": sum(m["recall"] for m in per_class.values()) / count if count else 0.0,
        "macro_f1": sum(m["f1"] for m in per_class.values()) / count if count else 0.0,
        "weighted_f1": (
            sum(m["f1"] * m["support"] for m in per_class.values()) / support if support else 0.0
        ),
        "per_class": per_class,
        "confusion_matrix": [[pairs.get((t, p), 0) for p in names] for t in names],
        "labels": names,
    }


def type_confusion_analysis(y_true: Sequence[str], y_pred: Sequence[str], top_k: int = 10) -> dict[str, Any]:
    """The most frequent (gold, predicted) pairs among the misclassified items.

    ``count(t, p) = |{i : y_true_i = t ≠ p = y_pred_i}|``; pairs sorted by count, then by
    gold and predicted label (deterministic); ``total_errors = Σ count``.
    """
    _check_lengths(y_true, y_pred)
    confusions = Counter((t, p) for t, p in zip(y_true, y_pred, strict=True) if t != p)
    ranked = sorted(confusions.items(), key=lambda item: (-item[1], item[0]))[:top_k]
    return {
        "top_confusions": [{"true_type": t, "predicted_type": p, "count": count} for (t, p), count in ranked],
        "total_errors": sum(confusions.values()),
        "unique_confusion_pairs": len(confusions),
    }


def hierarchical_type_metrics(
    y_true: Sequence[str],
    y_pred: Sequence[str],
    hierarchy: Mapping[str, Sequence[str]] = TYPE_HIERARCHY,
) -> dict[str, Any]:
    """Exact accuracy, category accuracy and their gap under the type hierarchy.

    ``category_accuracy = (1/n) Σ_i [cat(y_true_i) = cat(y_pred_i)]`` with ``cat`` the
    category of a type in ``hierarchy`` (CULTURAL: G L A M, INSTITUTIONAL: O R E,
    COMMUNITY: S I N, SPECIALIZED: B H T F, DIGITAL: D, PRIVATE: C P, UNKNOWN: U X);
    ``hierarchy_gap = category_accuracy - exact_accuracy``.

    Raises:
        ValueError: A label is in no category (the sample code silently called it UNKNOWN,
            which would count two different invalid labels as a category match).
    """
    _check_lengths(y_true, y_pred)
    category = {label: name for name, members in hierarchy.items() for label in members}
    unknown = sorted({label for label in [*y_true, *y_pred] if label not in category})
    if unknown:
        raise ValueError(f"labels in no category of the hierarchy: {', '.join(map(repr, unknown))}")
    n = len(y_true)
    if not n:
        return {"n": 0, "exact_accuracy": None, "category_accuracy": None, "hierarchy_gap": None}
    exact = sum(t == p for t, p in zip(y_true, y_pred, strict=True)) / n
    by_category = sum(category[t] == category[p] for t, p in zip(y_true, y_pred, strict=True)) / n
    return {
        "n": n,
        "exact_accuracy": exact,
        "category_accuracy": by_category,
        "hierarchy_gap": by_category - exact,
    }


def secondary_type_metrics(
    true_sets: Sequence[Sequence[str]], pred_sets: Sequence[Sequence[str]]
) -> dict[str, Any]:
    """Precision, recall and F1 of secondary types, pooled over items, and the exact-set rate.

    ``TP = Σ_i |T_i ∩ P_i|``, ``FP = Σ_i |P_i \\ T_i|``, ``FN = Σ_i |T_i \\ P_i|`` with ``T_i``,
    ``P_i`` the gold and predicted secondary type sets; ``exact_set_rate = (1/n) Σ_i [T_i = P_i]``.
    """
    _check_lengths(true_sets, pred_sets)
    tp = fp = fn = exact = 0
    for gold, pred in zip(true_sets, pred_sets, strict=True):
        t, p = set(gold), set(pred)
        tp += len(t & p)
        fp += len(p - t)
        fn += len(t - p)
        exact += t == p
    n = len(true_sets)
    return {**prf(tp, fp, fn), "tp": tp, "fp": fp, "fn": fn, "exact_set_rate": exact / n if n else None}


def classification_example_score(
    gold: str,
    pred: str,
    *,
    category_credit: float = 0.0,
    hierarchy: Mapping[str, Sequence[str]] = TYPE_HIERARCHY,
) -> float:
    """The score of one classification: the per-example target for optimizing a classifier.

    ``1`` if ``pred = gold``; ``category_credit`` if they differ but share a category of
    ``hierarchy`` (e.g. 0.5 gives an optimizer partial credit for a near miss); else ``0``.
    With the default ``category_credit = 0`` its mean over examples is the accuracy.

    >>> classification_example_score("M", "G", category_credit=0.5)
    0.5
    """
    if gold == pred:
        return 1.0
    if category_credit:
        category = {label: name for name, members in hierarchy.items() for label in members}
        if gold in category and category.get(pred) == category[gold]:
            return float(category_credit)
    return 0.0
