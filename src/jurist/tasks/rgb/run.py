"""One RGB set at one setting (RGB's ``evalue.py`` with one ``--noise_rate``/``--passage_num``/
``--correct_rate``): what it is (:class:`RGBSetting`), what a finished one holds
(:class:`RGBRun`), RGB's prediction file name, and its figures from its records.

The runs themselves are ordinary runs of the suite's parts (:mod:`jurist.tasks.rgb.parts`);
the suite writes each setting's prediction file and ``scores.json``
(:mod:`jurist.tasks.rgb.suite`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jurist.datasets.rgb.loader import Language, RGBKind
from jurist.judges.config import JudgeConfig
from jurist.metrics.rgb import (
    AnswerCheck,
    accuracy,
    fact_check,
    judged_fact_check,
    judged_rate,
    rejection_rate,
)
from jurist.tasks.rgb.judges import PASSAGE_NUM, JudgeKind

# ---------------------------------------------------------------------------------------------
# One set at one setting


def _rate_text(value: float) -> str:
    return format(float(value), "g") if float(value) != int(value) else f"{float(value):.1f}"


@dataclass(frozen=True)
class RGBSetting:
    """One run of RGB's evaluation: a file at a noise rate, passage number and correct rate."""

    dataset: str
    language: Language
    kind: RGBKind
    path: Path
    noise_rate: float
    passage_num: int = PASSAGE_NUM
    correct_rate: float = 0.0
    judge: JudgeKind | None = None
    set: str = "noise"

    @property
    def name(self) -> str:
        """The run directory's name, e.g. ``zh_refine/noise0.2_passage5``."""
        tail = f"noise{_rate_text(self.noise_rate)}_passage{self.passage_num}"
        if self.kind == "fact":
            tail += f"_correct{_rate_text(self.correct_rate)}"
        return f"{self.dataset}/{tail}"


@dataclass
class RGBRun:
    """A finished setting of the suite: where its answers (and its judge's verdicts) were
    recorded, its per-item records (RGB's fields, status, judge verdict), its scores and its
    prediction file."""

    setting: RGBSetting
    run_dir: Path
    records: list[dict[str, Any]]
    scores: dict[str, Any]
    judge_dir: Path | None = None
    predictions: Path | None = None


def _model_name(config: JudgeConfig) -> str:
    return re.sub(r"[^\w.\-]+", "-", config.model).strip("-") or "model"


def prediction_record(row_id: Any, output: dict[str, Any]) -> dict[str, Any]:
    """RGB's prediction record: id, query, ans, label, prediction, docs, noise_rate, factlabel."""
    return {
        "id": row_id,
        "query": output["query"],
        "ans": output["ans"],
        "label": output["label"],
        "prediction": output["prediction"],
        "docs": output["docs"],
        "noise_rate": output["noise_rate"],
        "factlabel": output["factlabel"],
    }


def prediction_file_name(setting: RGBSetting, config: JudgeConfig) -> str:
    """RGB's name for a prediction file:
    ``prediction_{dataset}_{model}_temp{t}_noise{n}_passage{p}_correct{c}.json``."""
    return (
        f"prediction_{setting.dataset}_{_model_name(config)}_temp{config.temperature}"
        f"_noise{setting.noise_rate}_passage{setting.passage_num}_correct{setting.correct_rate}.json"
    )


def setting_scores(
    records: Sequence[dict[str, Any]], setting: RGBSetting, check: AnswerCheck, judge_name: str | None
) -> dict[str, Any]:
    """The figures of one run from its records (failed items counted, not scored)."""
    ok = [record for record in records if record["status"] == "ok"]
    failed = [record for record in records if record["status"] != "ok"]
    scores: dict[str, Any] = {
        "items": len(records),
        "ok": len(ok),
        "failed": len(failed),
        "failed_ids": [record["id"] for record in failed][:100],
        "failure_kinds": dict(Counter(record.get("error_type") or "error" for record in failed)),
    }
    checks: tuple[AnswerCheck, ...] = ("original", "improved") if check == "improved" else ("original",)
    for name in checks:
        labels = [record["label"] if name == "original" else record["label_improved"] for record in ok]
        factlabels = [
            record["factlabel"] if name == "original" else record["factlabel_improved"] for record in ok
        ]
        acc = accuracy(labels, setting.noise_rate)
        figures: dict[str, Any] = {
            "all_rate": acc.rate,
            "tt": acc.count,
            "nums": acc.total,
            "noise_rate": setting.noise_rate,
            "rejection_share": rejection_rate(labels).rate,
        }
        if setting.kind == "fact":
            fact = fact_check(labels, factlabels)
            figures.update(
                fact_check_rate=fact.fact_check_rate,
                correct_rate=fact.correct_rate,
                fact_tt=fact.fact_tt,
                correct_tt=fact.correct_tt,
                detected_rejections=fact.detected_rejections,
            )
        if name == "original":
            scores.update(figures)
        else:
            scores["improved"] = figures
    if setting.judge is not None:
        judged = [record for record in ok if record.get("judged") is not None]
        flags = [bool(record["judged"]) for record in judged]
        rate = judged_rate(flags)
        judge_scores: dict[str, Any] = {
            "judge": judge_name,
            "kind": setting.judge,
            "rate": rate.rate,
            "count": rate.count,
            "nums": rate.total,
            "failed": sum(1 for record in ok if record.get("judge_status") == "failed"),
        }
        if setting.judge == "error_detection":
            star = judged_fact_check([record["label"] for record in judged], flags)
            judge_scores.update(
                correct_tt=star.correct_tt,
                correct_rate=star.correct_rate,
                detected_rejections=star.detected_rejections,
            )
        scores["judge"] = judge_scores
    return scores


__all__ = ["RGBRun", "RGBSetting", "prediction_file_name", "prediction_record", "setting_scores"]
