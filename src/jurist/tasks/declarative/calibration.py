"""The calibration row of a YAML task: one judge run on one gold file, compared with gold.

Leaderboard columns, per output kind:

- label, bool: ``accuracy`` and Cohen's ``kappa`` (with ``_low``/``_high``); bool with
  ``confidence``: ``auroc`` of the confidence against gold ``true``;
- score: ``kappa`` is the quadratic-weighted kappa, ``accuracy`` the exact agreement,
  plus ``mae`` and ``spearman`` (with intervals);
- labels: ``accuracy`` is the exact-match ratio, plus ``micro_f1`` and ``macro_f1``;
- pairwise: ``accuracy``/``kappa`` of the combined verdicts against gold, ``consistency``,
  ``position_1_rate``, ``position_bias``, ``longer_win_rate``, ``gold_longer_rate``,
  ``length_bias`` and ``length_bias_abs``.

A judge with a confidence (stated, or weighed by its token probabilities with
``logprobs: true``) adds ``ece``; a weighed judge adds ``weighted_items`` (items weighed),
and for a score ``expected_mae``, ``expected_spearman`` and ``expected_kendall_tau`` (of
the expected scores), for pairwise ``weighted_win_rate_B`` (with its interval).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from jurist.errors import InputError
from jurist.tasks._calibration import CalibrationPlan, GoldAgreement
from jurist.tasks._results import JudgeRun
from jurist.tasks.calibration_rows import NAN, run_results
from jurist.tasks.declarative.agreement import gold_agreement, pair_figures
from jurist.tasks.declarative.data import GoldColumns, positions_of, read_gold_columns, split_item_id
from jurist.tasks.declarative.scoring import (
    expected_score_agreement,
    pairs_table,
    present,
    scored_pairs,
    weighted_counts,
)

if TYPE_CHECKING:
    from jurist.tasks._contract import Task
    from jurist.tasks.declarative.spec import TaskFile

__all__ = ["calibration"]

_INTERVAL = ("", "_low", "_high")


def _copy(row: dict[str, Any], figures: dict[str, Any], source: str, target: str | None = None) -> None:
    for suffix in _INTERVAL:
        row[(target or source) + suffix] = figures.get(source + suffix, NAN)


def calibration(task: Task, task_spec: TaskFile, file: Path, settings: Mapping[str, Any]) -> CalibrationPlan:
    """Every row of the gold file judged (a pairwise row in both orders), compared with the rows
    that carry a gold verdict (see the module).

    ``task`` is the YAML task and ``task_spec`` its task file.

    Raises:
        ConfigError: The task file names no gold column.
        InputError: No row carries a gold verdict.
    """
    if task_spec.gold is None:
        raise task.unsupported("be calibrated (the task file names no 'gold' column)")
    every = read_gold_columns(task_spec, file)
    gold_rows = every.labelled()
    if not len(gold_rows):
        raise InputError("no row carries a gold verdict", path=file, field=task_spec.gold)

    def compare(run: JudgeRun) -> GoldAgreement:
        return _agreement(task_spec, every, gold_rows, run, settings)

    return CalibrationPlan(options=settings.get("options") or task.options(), compare=compare)


def _agreement(
    task_spec: TaskFile,
    every: GoldColumns,
    gold_rows: GoldColumns,
    run: JudgeRun,
    settings: Mapping[str, Any],
) -> GoldAgreement:
    items = run.items
    labelled_ids = set(gold_rows.ids.tolist())
    results = [r for r in run_results(run.run_dir) if split_item_id(r.id)[0] in labelled_ids]
    failed = sum(r.status == "failed" for r in results)
    judgments = len(gold_rows) * (2 if task_spec.kind == "pairwise" else 1)
    own: dict[str, Any] = {"auroc": NAN, "auroc_low": NAN, "auroc_high": NAN}
    recorded: dict[str, Any] = {}
    stats = {key: settings[key] for key in ("n_resamples", "confidence", "seed")}
    if task_spec.kind == "pairwise":
        pairs = pairs_table(items, every)
        labelled = pairs[pairs["gold"].notna()].reset_index(drop=True)
        scored = scored_pairs(labelled)
        figures, by_label = gold_agreement(
            task_spec, list(scored["gold"]), list(scored["verdict"]), settings=stats
        )
        bias = pair_figures(labelled, stats)
        if "weighted_preference" in labelled:
            own["weighted_items"] = int(labelled["weighted_preference"].notna().sum())
            _copy(own, bias, "weighted_win_rate_B")
        _copy(own, figures, "accuracy")
        _copy(own, figures, "kappa")
        own["consistency"] = bias["consistency"]
        _copy(own, bias, "position_1_rate")
        own["position_bias"] = bias["position_bias"]
        _copy(own, bias, "longer_win_rate")
        for name in ("gold_longer_rate", "length_bias", "length_bias_abs"):
            own[name] = bias.get(name, NAN)
        recorded["length_unit"] = "words"
    else:
        ok = items[items["status"] == "ok"] if "status" in items else items.iloc[0:0]
        # Each gold row's answered item (the last one with its id), in the gold file's order.
        at = positions_of(ok["id"], gold_rows.ids) if len(ok) else np.full(len(gold_rows), -1)
        taken = at[at >= 0]
        golds = gold_rows.values[at >= 0].tolist()

        def column(name: str) -> list[Any]:
            return ok[name].iloc[taken].tolist() if name in ok else [None] * len(taken)

        judged = column("verdict")
        weighed = "weighted" in ok
        confidence = (
            [present(v) for v in column("confidence")] if task_spec.output.confidence or weighed else None
        )
        figures, by_label = gold_agreement(task_spec, golds, judged, confidence, stats)
        if confidence is not None:
            own["ece"] = figures.get("ece", NAN)
        if weighed:
            own["weighted_items"] = weighted_counts(ok)["items"]
        if weighed and task_spec.kind == "score":
            expected = expected_score_agreement(
                golds, judged, [present(v) for v in column("expected_score")]
            )["expected_score"]
            for name in ("mae", "spearman", "kendall_tau"):
                own[f"expected_{name}"] = expected[name]
        if task_spec.kind == "score":
            recorded["agreement_names"] = {"accuracy": "exact agreement", "kappa": "QWK"}
            _copy(own, figures, "exact_agreement", "accuracy")
            _copy(own, figures, "qwk", "kappa")
            _copy(own, figures, "mae")
            _copy(own, figures, "spearman")
        elif task_spec.kind == "labels":
            recorded["agreement_names"] = {"accuracy": "exact match"}
            _copy(own, figures, "exact_match", "accuracy")
            own.update(kappa=NAN, kappa_low=NAN, kappa_high=NAN)
            _copy(own, figures, "micro_f1")
            _copy(own, figures, "macro_f1")
        else:
            _copy(own, figures, "accuracy")
            _copy(own, figures, "kappa")
            if "auroc" in figures:
                _copy(own, figures, "auroc")
    return GoldAgreement(
        items=len(gold_rows),
        judgments=judgments,
        failed=failed,
        results=results,
        by_label=by_label,
        figures=own,
        settings=recorded,
    )
