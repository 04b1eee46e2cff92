"""A cascade in ``jurist calibrate``: every stage on every gold item once, thresholds chosen
offline from the recorded confidences, and leaderboard rows for each stage and the cascade.

Each stage is judged on the gold files like any judge (``CASCADE/STAGE`` rows; a jury stage
adds its jurors' rows). Then each model stage before the last gets the ``escalate_below`` that
reaches the target agreement with gold at the least cost: a grid over every combination of
candidate thresholds (0, each confidence in the verdict the stage gave, and 1), each evaluated
on the recorded judgments, with no further model call. The cascade's own row (``CASCADE``) is
the row every judge gets (:func:`~jurist.jury.gold_row.calibration_row`) for the cascade with
the chosen thresholds, built from the stages' runs, so its usage is what the items' paths cost.
The thresholds are written into a copy of the cascade file, ``OUT/CASCADE.calibrated.yaml``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from pydantic import BaseModel

from jurist.datasets.samples import resolve_input
from jurist.errors import ConfigError
from jurist.judges.config import JudgeConfig
from jurist.jury.calibrate import JurySpec
from jurist.jury.calibrate import calibration_rows as jury_rows
from jurist.jury.cascade_build import build_cascade_run
from jurist.jury.cascade_config import Cascade, Stage, load_cascade, write_calibrated_copy
from jurist.jury.cascade_paths import StageRecord, stage_record, unsure_reason
from jurist.jury.cascade_run import check_cascade
from jurist.jury.gold_row import calibration_row
from jurist.jury.loop import one_judge
from jurist.report.review import Review
from jurist.schemas import Usage
from jurist.tasks._contract import JudgeBy, JudgeRun, Task
from jurist.tasks.calibration_rows import JudgeSpec, dataset_name, judge_run_dir

__all__ = [
    "GRID_LIMIT",
    "CascadeSpec",
    "Choice",
    "calibrated_copy_path",
    "calibration_rows",
    "cascade_spec",
    "stage_spec",
]

GRID_LIMIT = 100_000
"""Most threshold combinations tried; above it each stage's candidates are thinned evenly by rank."""


@dataclass(frozen=True)
class CascadeSpec(JudgeSpec):
    """A cascade among a calibration's judges. Its ``config`` only stands for the cascade (model
    ``cascade/FINGERPRINT``) and is never run."""

    cascade: Cascade


def cascade_spec(path: str | Path, name: str | None = None) -> CascadeSpec:
    """The calibration judge of a cascade file (named after the file unless ``name`` is given)."""
    cascade = load_cascade(path)
    return CascadeSpec(name or cascade.name, _stand_in(cascade, path), cascade)


def _stand_in(cascade: Cascade, path: str | Path | None) -> JudgeConfig:
    tracking = next((s.config.mlflow for s in cascade.stages if s.config and s.config.mlflow), None)
    return JudgeConfig(model=f"cascade/{cascade.fingerprint()}", mlflow=tracking).with_source(path)


def stage_spec(spec: CascadeSpec, stage: Stage) -> JudgeSpec:
    """A stage of a cascade as a calibration judge (``CASCADE/STAGE``): a :class:`JurySpec` for
    a jury stage, else its judge config."""
    name = f"{spec.name}/{stage.name}"
    if stage.jury is not None:
        return JurySpec(name, JudgeConfig(model=f"jury/{stage.jury.fingerprint()}"), stage.jury)
    return JudgeSpec(name, stage.judge_config)


def calibrated_copy_path(spec: JudgeSpec, out: str | Path) -> Path:
    """Where calibration writes a copy of a cascade file with the chosen thresholds:
    ``OUT/CASCADE.calibrated.yaml``."""
    return Path(out) / f"{spec.name}.calibrated.yaml"


@dataclass
class _Pool:
    """The gold items of every gold file, with per stage arrays over them (stages × items)."""

    fixed: np.ndarray
    certainty: np.ndarray
    agrees: np.ndarray
    price: np.ndarray
    gold: np.ndarray
    unit: str


@dataclass(frozen=True)
class Choice:
    """The chosen thresholds and what they give, against each stage alone."""

    thresholds: dict[str, float]
    target: float
    met: bool
    unit: str
    items: int
    gold_items: int
    combinations: int
    agreement: float
    cost: float
    decided: dict[str, int]
    alone: dict[str, dict[str, float]]

    def to_json(self) -> dict[str, Any]:
        last = list(self.alone)[-1]
        everything = self.alone[last]["cost"]
        return {
            "target_agreement": self.target,
            "met": self.met,
            "thresholds": self.thresholds,
            "unit": self.unit,
            "items": self.items,
            "gold_items": self.gold_items,
            "combinations": self.combinations,
            "cascade": {"agreement": self.agreement, "cost": self.cost, "decided": self.decided},
            "stages_alone": self.alone,
            "all_by_last_stage": {"stage": last, **self.alone[last]},
            "saved": everything - self.cost,
            "saved_share": (everything - self.cost) / everything if everything else None,
        }


def _value(usage: Usage, unit: str) -> float | None:
    if unit == "calls":
        return float(usage.calls + usage.cache_hits)
    if not usage.calls and not usage.cache_hits:
        return 0.0  # no model call: an offline stage
    if usage.cache_hits:
        return math.nan  # answered from the cache: costs what the stage's paid answers cost on average
    return usage.cost if unit == "usd" else float(usage.prompt_tokens + usage.completion_tokens)


def _prices(usages: list[Usage], unit: str) -> np.ndarray | None:
    """A stage's price per item in ``unit``, or ``None`` when the unit is unknown for it."""
    values = [_value(usage, unit) for usage in usages]
    if any(value is None for value in values):
        return None
    prices = np.asarray(values, dtype=np.float64)
    cached = np.isnan(prices)
    if cached.any():
        if cached.all():
            return None
        prices[cached] = prices[~cached].mean()
    return prices


def _pool(
    cascade: Cascade, files: list[tuple[list[str], dict[str, StageRecord]]], review: Review, tuned: set[int]
) -> _Pool:
    """Per stage over every gold item: unsure whatever the threshold (failed, jurors split, no
    rule fired), the confidence in the verdict, agreement with gold, and the price."""
    count = len(cascade.stages)
    fixed: list[list[bool]] = [[] for _ in range(count)]
    certainty: list[list[float]] = [[] for _ in range(count)]
    agrees: list[list[bool]] = [[] for _ in range(count)]
    usages: list[list[Usage]] = [[] for _ in range(count)]
    gold: list[bool] = []
    for ids, records in files:
        for index, stage in enumerate(cascade.stages):
            record = records[stage.name]
            own = replace(stage, escalate_below=None) if index in tuned else stage
            for item_id in ids:
                fixed[index].append(unsure_reason(own, record, item_id, review) is not None)
                found = record.certainty(item_id, review)
                certainty[index].append(math.nan if found is None else found)
                agrees[index].append(bool(record.agrees(item_id, review)))
                result = record.results.get(item_id)
                usages[index].append(result.usage if result is not None else Usage())
        gold += [any(records[s.name].agrees(i, review) is not None for s in cascade.stages) for i in ids]
    unit, price = "calls", np.asarray([[float(u.calls + u.cache_hits) for u in row] for row in usages])
    for name in ("usd", "tokens"):
        found_prices = [_prices(row, name) for row in usages]
        if all(prices is not None for prices in found_prices):
            unit, price = name, np.vstack([p for p in found_prices if p is not None])
            break
    return _Pool(
        fixed=np.asarray(fixed, dtype=bool),
        certainty=np.asarray(certainty, dtype=np.float64),
        agrees=np.asarray(agrees, dtype=bool),
        price=price,
        gold=np.asarray(gold, dtype=bool),
        unit=unit,
    )


def _evaluate(pool: _Pool, thresholds: dict[int, float]) -> tuple[float, float, list[int]]:
    """Agreement with gold (share of gold items), total cost, and items decided per stage."""
    stages = pool.fixed.shape[0]
    reach = np.ones(pool.fixed.shape[1], dtype=bool)
    cost, agreed, decided = 0.0, 0, []
    for s in range(stages):
        cost += float(pool.price[s][reach].sum())
        if s == stages - 1:
            settled = reach
        else:
            unsure = pool.fixed[s].copy()
            if s in thresholds:
                certainty = pool.certainty[s]
                unsure |= np.isnan(certainty) | (certainty < thresholds[s])
            settled = reach & ~unsure
            reach = reach & unsure
        agreed += int((settled & pool.agrees[s] & pool.gold).sum())
        decided.append(int(settled.sum()))
    total = int(pool.gold.sum())
    return (agreed / total if total else math.nan), cost, decided


def _candidates(values: np.ndarray, limit: int) -> list[float]:
    found = sorted({0.0, 1.0, *(float(v) for v in values if not math.isnan(v))})
    if len(found) <= limit:
        return found
    picks = np.linspace(0, len(found) - 1, max(limit, 2)).round().astype(int)
    return sorted({found[i] for i in picks})


def choose(
    cascade: Cascade, files: list[tuple[list[str], dict[str, StageRecord]]], review: Review, target: float
) -> Choice:
    """The thresholds that reach ``target`` agreement with gold at the least cost (ties: the higher
    agreement, then the lower thresholds); without any that reach it, the most agreeing ones."""
    last = len(cascade.stages) - 1
    tuned = [i for i, stage in enumerate(cascade.stages) if stage.kind == "model" and i < last]
    pool = _pool(cascade, files, review, set(tuned))
    limit = max(2, int(GRID_LIMIT ** (1 / len(tuned)))) if tuned else 1
    grids = [_candidates(pool.certainty[i], limit) for i in tuned]
    best: tuple[Any, ...] | None = None
    combinations = 0
    for combo in itertools.product(*grids):
        combinations += 1
        agreement, cost, decided = _evaluate(pool, dict(zip(tuned, combo, strict=True)))
        met = not math.isnan(agreement) and agreement >= target - 1e-12
        key = (0, cost, -agreement, combo) if met else (1, -agreement, cost, combo)
        if best is None or key < best[0]:
            best = (key, combo, agreement, cost, decided, met)
    assert best is not None
    _, combo, agreement, cost, decided, met = best
    gold = int(pool.gold.sum())
    alone = {
        stage.name: {
            "agreement": int((pool.agrees[index] & pool.gold).sum()) / gold if gold else math.nan,
            "cost": float(pool.price[index].sum()),
        }
        for index, stage in enumerate(cascade.stages)
    }
    return Choice(
        thresholds={cascade.stages[i].name: float(t) for i, t in zip(tuned, combo, strict=True)},
        target=target,
        met=met,
        unit=pool.unit,
        items=int(pool.gold.size),
        gold_items=int(pool.gold.sum()),
        combinations=combinations,
        agreement=agreement,
        cost=cost,
        decided={stage.name: n for stage, n in zip(cascade.stages, decided, strict=True)},
        alone=alone,
    )


def _building_from(task: Task, cascade: Cascade, records: dict[str, StageRecord]) -> JudgeBy:
    """What judges a gold file by ``cascade``: its run built from the recorded stages (no call)."""

    def build(
        data: str | Path,
        out: Path,
        options: BaseModel,
        retry_failed: bool,
        progress: bool,
        /,
        *,
        only: Collection[str] | None = None,
    ) -> JudgeRun:
        return build_cascade_run(task, cascade, data, out, options, records, only)

    return build


def calibration_rows(
    task: Task,
    gold: Sequence[str | Path],
    spec: CascadeSpec,
    out: Path,
    settings: dict[str, Any],
    progress: bool,
    target_agreement: float | None = None,
) -> list[tuple[dict[str, Any], pd.DataFrame]]:
    """Every stage's rows on every gold file, then the cascade's row with the chosen thresholds.

    The choice (thresholds, agreement and cost of the cascade, of each stage alone and of
    everything by the last stage) is added to ``settings["cascades"][NAME]`` (it is written to
    ``calibration.json``), and the thresholds to a copy of the cascade file
    (:func:`calibrated_copy_path`).

    Raises:
        ConfigError: No target agreement, a task whose items have no agreement with gold, or a
            cascade the task cannot run (see :func:`jurist.jury.cascade_run.check_cascade`).
    """
    cascade = spec.cascade
    options = settings.get("options") or task.options()
    review = check_cascade(task, options, cascade, need_thresholds=False)
    if review.agrees is None:
        raise ConfigError(
            f"task {task.name!r} names no agreement column: a cascade cannot be calibrated", field="task"
        )
    target = target_agreement if target_agreement is not None else cascade.target_agreement
    if target is None or not 0 < target <= 1:
        raise ConfigError(
            f"cascade {cascade.name!r}: give the agreement with gold to reach (0 < target <= 1): "
            "--target-agreement 0.9, or target_agreement in the cascade file",
            path=cascade.path,
            field="cascade.target_agreement",
        )
    rows: list[tuple[dict[str, Any], pd.DataFrame]] = []
    files: list[tuple[Path, list[str], dict[str, StageRecord]]] = []
    for path in gold:
        file, dataset = resolve_input(path), dataset_name(path)
        records: dict[str, StageRecord] = {}
        for stage in cascade.stages:
            judge = stage_spec(spec, stage)
            if isinstance(judge, JurySpec):
                rows += jury_rows(task, path, judge, out, settings, progress)
            else:
                alone = one_judge(task, judge.config)
                rows.append(calibration_row(task, path, judge, out, settings, progress, alone))
            run_dir = judge_run_dir(out, judge) / dataset
            records[stage.name] = stage_record(run_dir, task.score(run_dir, options, gold=file).items)
        ids = [item.id for item in task.items(task.read(file, options), options)]
        files.append((file, ids, records))
    choice = choose(cascade, [(ids, records) for _, ids, records in files], review, float(target))
    chosen = cascade.with_thresholds(choice.thresholds)
    stand_in = JudgeSpec(spec.name, _stand_in(chosen, cascade.path))
    for path, (_, _, records) in zip(gold, files, strict=True):
        built = _building_from(task, chosen, records)
        row, table = calibration_row(task, path, stand_in, out, settings, progress, built)
        row["model"] = "cascade of " + " > ".join(stage.name for stage in cascade.stages)
        rows.append((row, table))
    copy = write_calibrated_copy(cascade, choice.thresholds, calibrated_copy_path(spec, out), float(target))
    settings.setdefault("cascades", {})[spec.name] = {**choice.to_json(), "written_to": str(copy)}
    return rows
