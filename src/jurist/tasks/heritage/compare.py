"""Paired significance tests of two heritage runs on the texts both scored (``--compare``):
:func:`paired_tests` of their per-item tables; :func:`jurist.tasks.heritage.rescoring.compare_heritage`
scores two runs first."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from jurist.metrics.significance import significance_test

__all__ = ["PER_ITEM_METRICS", "paired_tests"]

PER_ITEM_METRICS = (
    "ner_strict_f1",
    "ner_partial_f1",
    "type_correct",
    "linking_score",
    "qa_rougeL",
    "qa_faithfulness",
    "retrieval_ndcg@10",
)
"""Per-text scores :func:`paired_tests` can test."""


def paired_tests(
    a: pd.DataFrame,
    b: pd.DataFrame,
    *,
    metrics: Sequence[str] = PER_ITEM_METRICS,
    alpha: float = 0.05,
    seed: int = 0,
) -> pd.DataFrame:
    """Paired significance tests of two runs' per-item tables on the texts both scored.

    For each per-text metric present in both runs: the paired t-test, the Wilcoxon
    signed-rank test and a bootstrap 95% interval of the mean difference (A − B), over the
    texts scored in both (failed items are left out, not scored as 0).
    """
    rows = []
    for metric in metrics:
        if metric not in a or metric not in b:
            continue
        joined = a[["id", metric]].merge(b[["id", metric]], on="id", suffixes=("_a", "_b")).dropna()
        if len(joined) < 2:
            continue
        x, y = joined[f"{metric}_a"].astype(float).tolist(), joined[f"{metric}_b"].astype(float).tolist()
        t = significance_test(x, y, "paired_t", alpha)
        w = significance_test(x, y, "wilcoxon", alpha)
        boot = significance_test(x, y, "bootstrap", alpha, seed=seed)
        rows.append(
            {
                "metric": metric,
                "n": len(joined),
                "mean_a": sum(x) / len(x),
                "mean_b": sum(y) / len(y),
                "mean_difference": boot["mean_difference"],
                "t_p_value": t["p_value"],
                "wilcoxon_p_value": w["p_value"],
                "ci_lower": boot["ci_lower"],
                "ci_upper": boot["ci_upper"],
                "significant_t": t["significant"],
                "significant_wilcoxon": w["significant"],
                "significant_bootstrap": boot["significant"],
            }
        )
    return pd.DataFrame(rows)
