"""Pairwise calibration: a judge's two-order verdicts against gold preference labels.

Gold: pairs files with a preference ``label`` (LLMBar, MT-Bench human judgments). Every
pair is judged in both orders; the verdict is the consistent choice, an inconsistent pair
is a ``tie`` (wrong unless gold is a tie). Classes ``1``, ``2``, ``tie``. A choice is not
a score, so there is no AUROC. Bias probes: consistency across the two orders, the share
of decisive judgments that chose the first position, and how often the longer response
won (against how often gold prefers the longer one).

The ``calibrate`` verb judges the pairs (one judge, a jury or a cascade) and hands the run to
the comparison here, so a jury's row is computed the same way on the jury's run. Its run is
``OUT/runs/JUDGE-…/DATASET/pairs__{n}opt``: one per number of options.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jurist.datasets.pairwise.shapes import NoMajority
from jurist.datasets.pairwise.tables import load_pairs
from jurist.errors import InputError
from jurist.metrics.gold_agreement import agreement_by_label
from jurist.tasks._calibration import DATASET, CalibrationPlan, GoldAgreement
from jurist.tasks._results import JudgeRun
from jurist.tasks.calibration_rows import NAN, run_results
from jurist.tasks.pairwise.bias import pair_bias
from jurist.tasks.pairwise.options import PairwiseOptions
from jurist.tasks.pairwise.run import PairwiseRun

__all__ = ["BIAS_COLUMNS", "calibration"]

BIAS_COLUMNS = (
    *("position_1_rate", "position_1_rate_low", "position_1_rate_high", "position_bias"),
    *("longer_win_rate", "longer_win_rate_low", "longer_win_rate_high"),
    *("gold_longer_rate", "length_bias", "length_bias_abs"),
)
"""The leaderboard columns from :func:`~jurist.tasks.pairwise.bias.pair_bias`."""


def calibration(file: Path, settings: Mapping[str, Any]) -> CalibrationPlan:
    """Every pair of the gold file judged in both orders (``num_options`` of the settings,
    default 2); the comparison gives accuracy, kappa, consistency, position and length bias.

    Raises:
        InputError: No pair carries a gold preference label.
    """
    num_options = settings.get("num_options") or 2
    options = settings.get("options")
    mapping = getattr(options, "map", None)
    split_vote: NoMajority = "exclude" if getattr(options, "split_vote", "tie") == "exclude" else "tie"
    pairs = load_pairs(file, mapping=mapping, no_majority=split_vote)
    if pairs["label"].notna().sum() == 0:
        raise InputError("no pair carries a gold preference label", path=file, field="label")
    chosen = PairwiseOptions.model_validate(
        {
            "num_options": num_options,
            "map": mapping,
            "split_vote": split_vote,
            "resamples": settings["n_resamples"],
        }
    )

    def compare(run: JudgeRun) -> GoldAgreement:
        return _agreement(run.scores.extra["run"], num_options, settings)

    return CalibrationPlan(options=chosen, compare=compare, folder=f"{DATASET}/pairs__{num_options}opt")


def _agreement(run: PairwiseRun, num_options: int, settings: Mapping[str, Any]) -> GoldAgreement:
    assert run.agreement is not None
    judged = run.agreement.judged
    labelled = judged[judged["gold"].notna()].reset_index(drop=True)
    pooled = run.agreement.agreement.iloc[-1]
    labelled_ids = {f"{pair_id}|{order}" for pair_id in labelled["id"] for order in ("12", "21")}
    results = [r for r in run_results(run.run_dir) if r.id in labelled_ids]
    failed = sum(r.status == "failed" for r in results)
    complete = labelled[labelled["complete"]]
    own: dict[str, Any] = {
        "consistency": float(pooled["consistency_rate"]),
        "auroc": NAN,
        "auroc_low": NAN,
        "auroc_high": NAN,
    }
    for metric in ("accuracy", "kappa"):
        for suffix in ("", "_low", "_high"):
            own[metric + suffix] = float(pooled[metric + suffix])
    bias = pair_bias(labelled, dict(settings))
    for name in BIAS_COLUMNS:
        own[name] = bias[name]
    by_label = agreement_by_label(
        [str(g) for g in complete["gold"]],
        [str(v) for v in complete["verdict"]],
        confidence=settings["confidence"],
    )
    own["accuracy_2"] = float(pooled["accuracy_2"])
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
                own[f"human_{metric}{suffix}"] = float(pooled_human[f"{metric}{suffix}"])
    return GoldAgreement(
        items=len(labelled),
        judgments=2 * len(labelled),
        failed=failed,
        results=results,
        by_label=by_label,
        figures=own,
        # The calibration's settings name the options used and the unit of lengths.
        settings={"num_options": num_options, "length_unit": bias["length_unit"]},
    )
