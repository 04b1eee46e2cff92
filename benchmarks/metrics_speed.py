"""Time jurist's arrays-in metrics against scikit-learn and SciPy on the same NumPy inputs.

Run: ``python benchmarks/metrics_speed.py [--sizes 10000 100000 1000000] [--repeats 5] [--json FILE]``
(``--json`` also writes the timings to a file, read by ``benchmarks/table.py``).

Each timing is the best of ``--repeats`` runs after one warm-up run. The ratio is
reference ms / jurist ms: 1 or more means jurist is as fast or faster. The ordinal
statistics (MAE … QWK) are computed by jurist from the contingency table of the scores,
so their time includes building the table; the references take the raw arrays.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats
from sklearn import metrics as sk

from jurist.metrics import ordinal, verdicts
from jurist.metrics.agreement import auroc, rmse
from jurist.metrics.gold_agreement import accuracy, cohens_kappa, confusion_matrix

Case = tuple[str, Callable[[], Any], Callable[[], Any]]


def best_ms(function: Callable[[], Any], repeats: int) -> float:
    """Best wall time of ``repeats`` calls in milliseconds, after one untimed warm-up call."""
    function()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return best * 1000.0


def cases(n: int, rng: np.random.Generator) -> list[Case]:
    """The (metric, jurist call, reference call) triples for inputs of ``n`` elements."""
    labels = rng.random(n) < 0.3
    scores = np.round(rng.random(n), 3)  # ties
    gold_f, pred_f = rng.random(n), rng.random(n)
    k = 5
    gold_i = rng.integers(0, k, n)
    pred_i = np.where(rng.random(n) < 0.6, gold_i, rng.integers(0, k, n))
    names = np.array(["entailed", "neutral", "contradicted", "unclear", "other"])
    gold_s, pred_s = names[gold_i], names[pred_i]
    label_set = list(range(k))
    gold_o, pred_o = gold_i + 1.0, pred_i + 1.0
    values = np.arange(1.0, k + 1.0)

    def table() -> np.ndarray:
        return ordinal._contingency_table(gold_o, pred_o, values)

    return [
        ("auroc", lambda: auroc(labels, scores), lambda: sk.roc_auc_score(labels, scores)),
        ("rmse", lambda: rmse(pred_f, gold_f), lambda: np.sqrt(sk.mean_squared_error(gold_f, pred_f))),
        ("accuracy (int)", lambda: accuracy(gold_i, pred_i), lambda: sk.accuracy_score(gold_i, pred_i)),
        ("accuracy (str)", lambda: accuracy(gold_s, pred_s), lambda: sk.accuracy_score(gold_s, pred_s)),
        (
            "confusion_matrix (int)",
            lambda: confusion_matrix(gold_i, pred_i, label_set),
            lambda: sk.confusion_matrix(gold_i, pred_i, labels=label_set),
        ),
        (
            "confusion_matrix (str)",
            lambda: confusion_matrix(gold_s, pred_s, names),
            lambda: sk.confusion_matrix(gold_s, pred_s, labels=names),
        ),
        (
            "cohens_kappa (int)",
            lambda: cohens_kappa(gold_i, pred_i),
            lambda: sk.cohen_kappa_score(gold_i, pred_i),
        ),
        (
            "cohens_kappa (str)",
            lambda: cohens_kappa(gold_s, pred_s),
            lambda: sk.cohen_kappa_score(gold_s, pred_s),
        ),
        (
            "macro_f1 (int)",
            lambda: verdicts.macro_f1_from_confusion(confusion_matrix(gold_i, pred_i, label_set).ravel()),
            lambda: sk.f1_score(gold_i, pred_i, average="macro"),
        ),
        (
            "ordinal MAE",
            lambda: ordinal.mean_absolute_error(table(), values),
            lambda: sk.mean_absolute_error(gold_o, pred_o),
        ),
        (
            "ordinal RMSE",
            lambda: ordinal.root_mean_squared_error(table(), values),
            lambda: np.sqrt(sk.mean_squared_error(gold_o, pred_o)),
        ),
        ("ordinal Pearson", lambda: ordinal.pearson(table(), values), lambda: stats.pearsonr(gold_o, pred_o)),
        ("ordinal Spearman", lambda: ordinal.spearman(table()), lambda: stats.spearmanr(gold_o, pred_o)),
        (
            "ordinal Kendall τ_b",
            lambda: ordinal.kendall_tau_b(table()),
            lambda: stats.kendalltau(gold_o, pred_o),
        ),
        (
            "ordinal QWK",
            lambda: ordinal.quadratic_weighted_kappa(table(), values),
            lambda: sk.cohen_kappa_score(gold_i, pred_i, weights="quadratic"),
        ),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="also write the timings to this JSON file")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    print(f"| {'metric':<24} | {'n':>9} | {'jurist ms':>10} | {'reference ms':>12} | {'ratio':>6} |")
    print(f"|{'-' * 26}|{'-' * 11}:|{'-' * 11}:|{'-' * 13}:|{'-' * 7}:|")
    found = []
    for n in args.sizes:
        for name, ours, reference in cases(n, rng):
            ours_ms = best_ms(ours, args.repeats)
            reference_ms = best_ms(reference, args.repeats)
            ratio = reference_ms / ours_ms
            print(
                f"| {name:<24} | {n:>9,} | {ours_ms:>10.3f} | {reference_ms:>12.3f} | {ratio:>6.2f} |",
                flush=True,
            )
            found.append({"metric": name, "n": n, "jurist_ms": ours_ms, "reference_ms": reference_ms})
    if args.json:
        args.json.write_text(json.dumps(found, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
