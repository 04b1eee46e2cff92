"""A jury in ``jurist calibrate``: a leaderboard row for the jury and one per juror, and the
weights calibration can write back into a copy of the jury file.

The jury's row is the row every judge gets (:func:`~jurist.jury.gold_row.calibration_row`: the task's
own comparison with gold), computed on the jury's run: the jury's panel is what judges the gold
file. Each juror's
run is kept where its own leaderboard row (``JURY/JUROR``) reads it (the same path under the
juror's folder as the jury's run under the jury's), so every juror is judged once and the jury's
row costs no further call.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import BaseModel

from jurist.errors import ConfigError
from jurist.judges.config import JudgeConfig
from jurist.jury.config import Jury, load_jury, write_weighted_copy
from jurist.jury.gold_row import calibration_row
from jurist.jury.loop import one_judge
from jurist.jury.panel import jury_panel
from jurist.jury.run import check_task, run_panel
from jurist.tasks._contract import JudgeRun, Task
from jurist.tasks.calibration_rows import JudgeSpec, dataset_name, judge_run_dir

__all__ = [
    "JurySpec",
    "calibration_rows",
    "juror_specs",
    "jury_spec",
    "log_odds_weight",
    "weighted_copy_path",
    "write_weights",
]

ACCURACY_CLIP = (0.01, 0.99)
"""The accuracy range a weight is computed from: a perfect juror gets a finite weight."""


@dataclass(frozen=True)
class JurySpec(JudgeSpec):
    """A jury among a calibration's judges. Its ``config`` only stands for the jury (model
    ``jury/FINGERPRINT``, the first juror's ``mlflow`` key) and is never run."""

    jury: Jury


def jury_spec(path: str | Path, name: str | None = None) -> JurySpec:
    """The calibration judge of a jury file (named after the file unless ``name`` is given)."""
    jury = load_jury(path)
    tracking = next((juror.config.mlflow for juror in jury.jurors if juror.config.mlflow is not None), None)
    stand_in = JudgeConfig(model=f"jury/{jury.fingerprint()}", mlflow=tracking).with_source(path)
    return JurySpec(name or jury.name, stand_in, jury)


def juror_specs(spec: JurySpec) -> dict[str, JudgeSpec]:
    """Each juror of a calibrated jury as a judge of its own (``JURY/JUROR``), by juror name: its
    run on a gold file is the one the jury's row votes over."""
    return {juror.name: JudgeSpec(f"{spec.name}/{juror.name}", juror.config) for juror in spec.jury.jurors}


def calibration_rows(
    task: Task, gold: str | Path, spec: JurySpec, out: Path, settings: dict[str, Any], progress: bool
) -> list[tuple[dict[str, Any], pd.DataFrame]]:
    """The jury's leaderboard row on one gold file, then one row per juror (``JURY/JUROR``).

    Raises:
        ConfigError: The task cannot have a jury (see :func:`jurist.jury.run.check_task`).
    """
    jurors = juror_specs(spec)
    options = settings.get("options") or task.options()
    check_task(task, options, jury_panel(spec.jury))
    home = judge_run_dir(out, spec)

    def run_jury(
        data: str | Path,
        run_dir: Path,
        options: BaseModel,
        retry: bool,
        shown: bool,
        /,
        *,
        only: Collection[str] | None = None,
    ) -> JudgeRun:
        inner = run_dir.relative_to(home) if run_dir.is_relative_to(home) else Path(dataset_name(gold))
        dirs = {name: judge_run_dir(out, juror) / inner for name, juror in jurors.items()}
        panel = jury_panel(spec.jury, run_dirs=dirs)
        return run_panel(task, panel, data, run_dir, options, retry_failed=retry, progress=shown, only=only)

    row, table = calibration_row(task, gold, spec, out, settings, progress, run_jury)
    row["model"] = f"jury of {', '.join(jurors)} ({spec.jury.aggregate})"
    rows = [(row, table)]
    for juror in jurors.values():
        rows.append(
            calibration_row(task, gold, juror, out, settings, progress, one_judge(task, juror.config))
        )
    return rows


def log_odds_weight(accuracy: float) -> float:
    """A juror's weight from its accuracy on gold: ``max(0, ln(p / (1 − p)))`` with ``p`` the
    accuracy clipped to :data:`ACCURACY_CLIP`. A juror no better than a coin gets 0 (its vote no
    longer counts); for independent jurors on yes/no verdicts these weights make the weighted
    majority the most accurate vote (Nitzan and Paroush 1982).

    Examples:
        >>> round(log_odds_weight(0.75), 4), log_odds_weight(0.4), round(log_odds_weight(1.0), 4)
        (1.0986, 0.0, 4.5951)
    """
    low, high = ACCURACY_CLIP
    p = min(max(float(accuracy), low), high)
    return max(0.0, math.log(p / (1.0 - p)))


def write_weights(spec: JurySpec, leaderboard: pd.DataFrame, target: str | Path) -> dict[str, float]:
    """Each juror's weight from its leaderboard rows (accuracy pooled over the gold files by
    items), written into a copy of the jury file at ``target``; returns the weights.

    Raises:
        ConfigError: A juror has no accuracy on gold, or no juror is better than a coin.
    """
    weights: dict[str, float] = {}
    for name, juror in juror_specs(spec).items():
        rows = leaderboard[leaderboard["judge"] == juror.name]
        known = rows[rows["accuracy"].notna() & (rows["items"] > 0)]
        if known.empty:
            raise ConfigError(
                f"juror {name!r} has no accuracy on the gold files; no weights written", field="jury"
            )
        accuracy = float((known["accuracy"] * known["items"]).sum() / known["items"].sum())
        weights[name] = log_odds_weight(accuracy)
    if not any(weights.values()):
        raise ConfigError("no juror agrees with gold more often than not; no weights written", field="jury")
    write_weighted_copy(spec.jury, weights, target)
    return weights


def weighted_copy_path(spec: JurySpec, out: str | Path) -> Path:
    """Where ``jurist calibrate --write-weights`` writes a jury's weighted copy:
    ``OUT/JURY.weighted.yaml``."""
    return Path(out) / f"{spec.name}.weighted.yaml"
