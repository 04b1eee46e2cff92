"""Pairwise calibration: a judge's two-order verdicts against gold preference labels.

Gold: pairs files with a preference ``label`` (LLMBar, MT-Bench human judgments). Every
pair is judged in both orders; the verdict is the consistent choice, an inconsistent pair
is a ``tie`` (wrong unless gold is a tie). Classes ``1``, ``2``, ``tie``. A choice is not
a score, so there is no AUROC. Bias probes: consistency across the two orders, the share
of decisive judgments that chose the first position, and how often the longer response
won (against how often gold prefers the longer one).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from jurist.datasets.pairwise import load_pairs
from jurist.datasets.preference_shapes import NoMajority
from jurist.datasets.samples import resolve_input
from jurist.errors import InputError
from jurist.metrics.gold_agreement import agreement_by_label
from jurist.metrics.pairwise import length_bias
from jurist.runner import call_blocking
from jurist.tasks.calibration_rows import (
    NAN,
    JudgeSpec,
    bootstrap,
    dataset_name,
    judge_run_dir,
    per_class_columns,
    ratio,
    run_results,
    usage_columns,
)
from jurist.tasks.pairwise.lengths import token_counter
from jurist.tasks.pairwise.run import judge_pairwise


def pairwise_records(judged: pd.DataFrame) -> pd.DataFrame:
    """One record per ordered comparison, in :mod:`jurist.metrics.pairwise`'s format."""
    rows = []
    for pair in judged.itertuples(index=False):
        for order, first, second, choice in (
            ("12", "response_1", "response_2", pair.choice_12),
            ("21", "response_2", "response_1", pair.choice_21),
        ):
            rows.append(
                {
                    "index": str(pair.id),
                    "A": first,
                    "B": second,
                    "answer1": getattr(pair, first),
                    "answer2": getattr(pair, second),
                    "choice": choice if isinstance(choice, str) else None,
                    "status": "ok" if isinstance(choice, str) else "failed",
                    "order": order,
                }
            )
    return pd.DataFrame(rows)


def calibration_row(
    gold_path: str | Path, spec: JudgeSpec, out: Path, settings: dict[str, Any], progress: bool
) -> tuple[dict[str, Any], pd.DataFrame]:
    """One leaderboard row: accuracy, kappa, consistency, position and length bias, usage."""
    num_options = settings.get("num_options") or 2
    settings["num_options"] = num_options  # the calibration's settings name the options used
    file = resolve_input(gold_path)
    dataset = dataset_name(gold_path)
    options = settings.get("options")
    mapping = getattr(options, "map", None)
    split_vote: NoMajority = "exclude" if getattr(options, "split_vote", "tie") == "exclude" else "tie"
    pairs = load_pairs(file, mapping=mapping, no_majority=split_vote)
    if pairs["label"].notna().sum() == 0:
        raise InputError("no pair carries a gold preference label", path=file, field="label")
    run = call_blocking(
        judge_pairwise,
        file,
        judge_run_dir(out, spec) / dataset,
        spec.config,
        num_options=num_options,
        mapping=mapping,
        split_vote=split_vote,
        progress=progress,
        n_resamples=settings["n_resamples"],
        subdirectory=True,
    )
    assert run.agreement is not None
    judged = run.agreement.judged
    labelled = judged[judged["gold"].notna()].reset_index(drop=True)
    pooled = run.agreement.agreement.iloc[-1]
    labelled_ids = {f"{pair_id}|{order}" for pair_id in labelled["id"] for order in ("12", "21")}
    results = [r for r in run_results(run.run_dir) if r.id in labelled_ids]
    failed = sum(r.status == "failed" for r in results)
    complete = labelled[labelled["complete"]]
    row_out: dict[str, Any] = {
        "task": "pairwise",
        "dataset": dataset,
        "judge": spec.name,
        "model": spec.config.model,
        "items": len(labelled),
        "judgments": 2 * len(labelled),
        "failed": failed,
        "failed_rate": failed / (2 * len(labelled)) if len(labelled) else NAN,
        "consistency": float(pooled["consistency_rate"]),
        "run_dir": str(run.run_dir),
        "auroc": NAN,
        "auroc_low": NAN,
        "auroc_high": NAN,
    }
    for metric in ("accuracy", "kappa"):
        for suffix in ("", "_low", "_high"):
            row_out[metric + suffix] = float(pooled[metric + suffix])
    # Position: share of decisive (A/B) judgments, both orders, that chose the first position.
    cells = np.array(
        [
            [
                sum(c == "A" for c in (a, b)),
                sum(c in ("A", "B") for c in (a, b)),
            ]
            for a, b in zip(labelled["choice_12"], labelled["choice_21"], strict=True)
        ],
        dtype=np.float64,
    ).reshape(-1, 2)
    rate, low, high = bootstrap(cells, lambda c: ratio(c[:, 0], c[:, 1]), settings)
    row_out.update(position_1_rate=rate, position_1_rate_low=low, position_1_rate_high=high)
    row_out["position_bias"] = abs(rate - 0.5) if not math.isnan(rate) else NAN
    count, unit = token_counter()
    records = pairwise_records(labelled)
    bias = length_bias(records, count, n_resamples=settings["n_resamples"], seed=settings["seed"])
    row_out.update(
        longer_win_rate=bias.rate, longer_win_rate_low=bias.ci_low, longer_win_rate_high=bias.ci_high
    )
    decided = [
        (count(r1) > count(r2)) == (g == "1")
        for r1, r2, g in zip(labelled["response_1"], labelled["response_2"], labelled["gold"], strict=True)
        if g in ("1", "2") and count(r1) != count(r2)
    ]
    row_out["gold_longer_rate"] = sum(decided) / len(decided) if decided else NAN
    row_out["length_bias"] = row_out["longer_win_rate"] - row_out["gold_longer_rate"]
    row_out["length_bias_abs"] = abs(row_out["length_bias"])
    settings.setdefault("length_unit", unit)
    by_label = agreement_by_label(
        [str(g) for g in complete["gold"]],
        [str(v) for v in complete["verdict"]],
        confidence=settings["confidence"],
    )
    row_out.update(per_class_columns(by_label))
    row_out["accuracy_2"] = float(pooled["accuracy_2"])
    human = run.agreement.human
    if human is not None:
        pooled_human = human.iloc[-1]
        for suffix in ("_3", "_2"):
            for metric in (
                "pairwise_agreement",
                "fleiss_kappa",
                "krippendorff_alpha",
                "judge_annotator_agreement",
            ):
                row_out[f"human_{metric}{suffix}"] = float(pooled_human[f"{metric}{suffix}"])
    row_out.update(usage_columns(results))
    return row_out, by_label.assign(dataset=dataset, judge=spec.name)
