"""``calibrate``: run several judges on gold-labelled data and compare them with the gold labels.

Each judge (a judge config; the offline baseline by default) is run on each gold file
through the batch runner, into ``OUT/runs/{judge}-{fingerprint}/...``, so running the
same calibration again reads finished judgments back instead of calling a provider. The
result is a leaderboard with one row per (dataset, judge):

- agreement with gold: accuracy and Cohen's kappa with percentile-bootstrap 95% intervals,
  per-class precision and recall (with Wilson intervals), and AUROC where the judge gives
  a score;
- bias probes of pairwise judges: consistency across the two orders, the share of
  decisive judgments that chose the first position, and how often the longer response
  won (against how often gold prefers the longer one);
- cost: failed-judgment rate, tokens, cost and latency per judgment.

Gold, per task:

- ``ragbench``: RAGBench rows' ``adherence_score`` (support label). Classes ``supported``
  / ``unsupported``; the judge's label is its adherence (every response sentence fully
  supported); its score for AUROC is ``1 − adherence_fraction`` with ``unsupported`` as
  the positive class (RAGBench's hallucination AUROC).
- ``pairwise``: pairs files with a preference ``label`` (LLMBar, MT-Bench human
  judgments). Every pair is judged in both orders; the verdict is the consistent choice,
  an inconsistent pair is a ``tie`` (wrong unless gold is a tie). Classes ``1``, ``2``,
  ``tie``. A choice is not a score, so there is no AUROC.

:class:`CalibrationThresholds` turn the leaderboard into a CI gate: every row must pass
every threshold set; a value that cannot be computed (n/a) fails its gate.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from jurist.datasets.pairwise import load_pairs
from jurist.datasets.ragbench import load_ragbench
from jurist.datasets.samples import resolve_input
from jurist.errors import ConfigError, InputError
from jurist.judges.config import JudgeConfig, load_config
from jurist.metrics.gold_agreement import agreement_by_label
from jurist.metrics.pairwise import length_bias
from jurist.runner import call_blocking
from jurist.tasks.calibrate_heritage import (
    calibrate_heritage_classification,
    calibrate_heritage_linking,
    calibrate_heritage_ner,
    calibrate_heritage_qa,
)
from jurist.tasks.calibrate_rgb import calibrate_rgb_error_detection, calibrate_rgb_rejection
from jurist.tasks.calibration_rows import (
    NAN,
    JudgeSpec,
    bootstrap,
    dataset_name,
    judge_run_dir,
    label_agreement,
    per_class_columns,
    ratio,
    run_results,
    usage_columns,
)
from jurist.tasks.pairwise import token_counter
from jurist.tasks.pairwise_run import judge_pairwise
from jurist.tasks.ragbench import judge_ragbench

__all__ = [
    "CALIBRATION_TASKS",
    "Calibration",
    "CalibrationThresholds",
    "GateCheck",
    "JudgeSpec",
    "auroc_from_counts",
    "calibrate",
    "judge_specs",
]


def _name_of(source: str | Path | JudgeConfig | None) -> str:
    if source is None or str(source) == "baseline":
        return "baseline"
    if isinstance(source, JudgeConfig):
        return "baseline" if source.is_baseline else source.model.replace("/", "_")
    return Path(source).stem


def judge_specs(configs: Sequence[str | Path | JudgeConfig | JudgeSpec | None]) -> list[JudgeSpec]:
    """Judges from config files (``baseline`` or ``None`` for the offline baseline), named
    after their files (or models), or given as :class:`JudgeSpec`; repeated names get
    ``-2``, ``-3``, ... An empty list gives the baseline alone."""
    specs: list[JudgeSpec] = []
    seen: dict[str, int] = {}
    for source in configs or [None]:
        if isinstance(source, JudgeSpec):
            seen[source.name] = seen.get(source.name, 0) + 1
            specs.append(
                source
                if seen[source.name] == 1
                else JudgeSpec(f"{source.name}-{seen[source.name]}", source.config)
            )
            continue
        if isinstance(source, JudgeConfig):
            config = source
        elif source is None or str(source) == "baseline":
            config = load_config(None)
        else:
            config = load_config(source)
        name = _name_of(source)
        seen[name] = seen.get(name, 0) + 1
        specs.append(JudgeSpec(name if seen[name] == 1 else f"{name}-{seen[name]}", config))
    return specs


@dataclass(frozen=True)
class CalibrationThresholds:
    """Gates on every leaderboard row; ``None`` leaves a gate off.

    Attributes:
        min_kappa: Cohen's kappa with gold at least this.
        min_accuracy: Accuracy at least this.
        min_auroc: AUROC at least this (judges with a score only; ragbench).
        max_failed_rate: Failed judgments / judgments at most this.
        min_consistency: Pairwise: consistent pairs / pairs with both orders at least this.
        max_position_bias: Pairwise: ``|position_1_rate − 0.5|`` at most this.
        max_length_bias: Pairwise: ``|longer_win_rate − gold_longer_rate|`` at most this.
    """

    min_kappa: float | None = None
    min_accuracy: float | None = None
    min_auroc: float | None = None
    max_failed_rate: float | None = None
    min_consistency: float | None = None
    max_position_bias: float | None = None
    max_length_bias: float | None = None

    def checks(self) -> list[tuple[str, str, str, float]]:
        """``(gate, column, "min"|"max", threshold)`` of every gate that is set."""
        table = [
            ("min_kappa", "kappa", "min"),
            ("min_accuracy", "accuracy", "min"),
            ("min_auroc", "auroc", "min"),
            ("max_failed_rate", "failed_rate", "max"),
            ("min_consistency", "consistency", "min"),
            ("max_position_bias", "position_bias", "max"),
            ("max_length_bias", "length_bias_abs", "max"),
        ]
        return [
            (gate, column, kind, getattr(self, gate))
            for gate, column, kind in table
            if getattr(self, gate) is not None
        ]


@dataclass(frozen=True)
class GateCheck:
    """The outcome of one gate on one leaderboard row."""

    gate: str
    dataset: str
    judge: str
    value: float | None
    threshold: float
    passed: bool


@dataclass
class Calibration:
    """A finished calibration.

    Attributes:
        task: The task.
        leaderboard: One row per (dataset, judge); columns in :data:`LEADERBOARD_COLUMNS`
            order, then per-class ``precision_{label}`` / ``recall_{label}``.
        by_label: Per (dataset, judge, side, label): ``n``, ``agreed``, ``rate`` and its
            Wilson interval (side ``gold``: recall; side ``judge``: precision).
        gates: Every gate checked, one per (gate, row).
        settings: Resamples, confidence, seed, options, length unit.
        out_dir: Where the runs and reports were written.
    """

    task: str
    leaderboard: pd.DataFrame
    by_label: pd.DataFrame
    gates: list[GateCheck] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)
    out_dir: Path | None = None

    @property
    def passed(self) -> bool:
        """True when every gate passed (also when none was set)."""
        return all(check.passed for check in self.gates)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready contents (NaN written as ``None``)."""

        def clean(value: Any) -> Any:
            if isinstance(value, float) and math.isnan(value):
                return None
            if isinstance(value, np.generic):
                return clean(value.item())
            return value

        def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
            return [{k: clean(v) for k, v in row.items()} for row in frame.to_dict(orient="records")]

        return {
            "task": self.task,
            "passed": self.passed,
            "settings": self.settings,
            "leaderboard": records(self.leaderboard),
            "by_label": records(self.by_label),
            "gates": [{k: clean(v) for k, v in asdict(check).items()} for check in self.gates],
        }


LEADERBOARD_COLUMNS = [
    "task",
    "dataset",
    "judge",
    "model",
    "items",
    "judgments",
    "failed",
    "failed_rate",
    "accuracy",
    "accuracy_low",
    "accuracy_high",
    "kappa",
    "kappa_low",
    "kappa_high",
    "auroc",
    "auroc_low",
    "auroc_high",
    "consistency",
    "position_1_rate",
    "position_1_rate_low",
    "position_1_rate_high",
    "position_bias",
    "longer_win_rate",
    "longer_win_rate_low",
    "longer_win_rate_high",
    "gold_longer_rate",
    "length_bias",
    "length_bias_abs",
    "tokens_per_judgment",
    "prompt_tokens_per_judgment",
    "completion_tokens_per_judgment",
    "cost_per_judgment",
    "latency_s",
    "calls",
    "cache_hits",
    "run_dir",
]
"""The leaderboard's columns, in order (per-class precision/recall columns follow)."""


def auroc_from_counts(counts: np.ndarray) -> np.ndarray:
    """AUROC from per-score class counts (one row per resample, or a single row).

    ``counts`` has ``2k`` columns for ``k`` distinct scores sorted ascending: the first
    ``k`` count positives at each score, the last ``k`` negatives. With ``P`` and ``N``
    the totals, ``AUROC = Σ_u pos_u · (neg_{<u} + ½ neg_u) / (P · N)`` — the rank form of
    :func:`jurist.metrics.agreement.auroc` (ties count ½), which makes AUROC a function of
    summed counts and so fit :func:`~jurist.metrics.gold_agreement.bootstrap_ci`. NaN
    where a class is absent.
    """
    data = np.atleast_2d(np.asarray(counts, dtype=np.float64))
    k = data.shape[1] // 2
    pos, neg = data[:, :k], data[:, k:]
    below = np.cumsum(neg, axis=1) - neg
    total = pos.sum(axis=1) * neg.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        value = (pos * (below + 0.5 * neg)).sum(axis=1) / total
    return np.where(total > 0, value, np.nan)


def _calibrate_ragbench(
    gold_path: str | Path, spec: JudgeSpec, out: Path, settings: dict[str, Any], progress: bool
) -> tuple[dict[str, Any], pd.DataFrame]:
    dataset = dataset_name(gold_path)
    file = resolve_input(gold_path)
    gold = {row.id: row.adherence_score for row in load_ragbench(file) if row.adherence_score is not None}
    if not gold:
        raise InputError("no row carries a gold support label (adherence_score)", path=file)
    run_dir = judge_run_dir(out, spec) / dataset
    run = call_blocking(judge_ragbench, file, run_dir, spec.config, progress=progress)
    items = run.items.set_index("id")
    results = [r for r in run_results(run_dir) if r.id in gold]
    labels = ("supported", "unsupported")
    gold_labels: list[str] = []
    predicted: list[str] = []
    scores: list[float] = []
    failed = 0
    for item_id, supported in gold.items():
        row = items.loc[item_id] if item_id in items.index else None
        verdict = None if row is None or row["status"] != "ok" else row.get("adherence")
        if row is None or verdict is None or (isinstance(verdict, float) and math.isnan(verdict)):
            failed += 1
            continue
        gold_labels.append(labels[0] if supported else labels[1])
        predicted.append(labels[0] if bool(verdict) else labels[1])
        scores.append(1.0 - float(row["adherence_fraction"]))
    row_out: dict[str, Any] = {
        "task": "ragbench",
        "dataset": dataset,
        "judge": spec.name,
        "model": spec.config.model,
        "items": len(gold),
        "judgments": len(gold),
        "failed": failed,
        "failed_rate": failed / len(gold),
        "run_dir": str(run_dir),
    }
    row_out.update(label_agreement(gold_labels, predicted, labels, settings))
    distinct = sorted(set(scores))
    position = {score: i for i, score in enumerate(distinct)}
    cells = np.zeros((len(scores), 2 * len(distinct)))
    for i, (g, score) in enumerate(zip(gold_labels, scores, strict=True)):
        offset = 0 if g == "unsupported" else len(distinct)
        cells[i, offset + position[score]] = 1
    row_out["auroc"], row_out["auroc_low"], row_out["auroc_high"] = bootstrap(
        cells, auroc_from_counts, settings
    )
    by_label = agreement_by_label(gold_labels, predicted, confidence=settings["confidence"])
    row_out.update(per_class_columns(by_label))
    row_out.update(usage_columns(results))
    return row_out, by_label.assign(dataset=dataset, judge=spec.name)


# --------------------------------------------------------------------------- pairwise


def _pairwise_records(judged: pd.DataFrame) -> pd.DataFrame:
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


def _calibrate_pairwise(
    gold_path: str | Path, spec: JudgeSpec, out: Path, settings: dict[str, Any], progress: bool
) -> tuple[dict[str, Any], pd.DataFrame]:
    file = resolve_input(gold_path)
    dataset = dataset_name(gold_path)
    pairs = load_pairs(file)
    if pairs["label"].notna().sum() == 0:
        raise InputError("no pair carries a gold preference label", path=file, field="label")
    run = call_blocking(
        judge_pairwise,
        file,
        judge_run_dir(out, spec) / dataset,
        spec.config,
        num_options=settings["num_options"],
        progress=progress,
        n_resamples=settings["n_resamples"],
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
    records = _pairwise_records(labelled)
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
    row_out.update(usage_columns(results))
    return row_out, by_label.assign(dataset=dataset, judge=spec.name)


Calibrator = Callable[
    [str | Path, JudgeSpec, Path, dict[str, Any], bool], tuple[dict[str, Any], pd.DataFrame]
]

CALIBRATION_TASKS: dict[str, Calibrator] = {
    "ragbench": _calibrate_ragbench,
    "pairwise": _calibrate_pairwise,
    "rgb-rejection": calibrate_rgb_rejection,
    "rgb-error-detection": calibrate_rgb_error_detection,
    "heritage-ner": calibrate_heritage_ner,
    "heritage-classification": calibrate_heritage_classification,
    "heritage-linking": calibrate_heritage_linking,
    "heritage-qa": calibrate_heritage_qa,
}
"""Tasks with gold labels to calibrate against, and the function that compares one judge."""


def _check_gates(leaderboard: pd.DataFrame, thresholds: CalibrationThresholds) -> list[GateCheck]:
    checks = []
    for gate, column, kind, threshold in thresholds.checks():
        for row in leaderboard.to_dict(orient="records"):
            value = row.get(column)
            present = value is not None and not (isinstance(value, float) and math.isnan(value))
            passed = present and (value >= threshold if kind == "min" else value <= threshold)
            checks.append(
                GateCheck(
                    gate=gate,
                    dataset=str(row["dataset"]),
                    judge=str(row["judge"]),
                    value=float(value) if present else None,
                    threshold=float(threshold),
                    passed=bool(passed),
                )
            )
    return checks


def calibrate(
    task: str,
    gold: Sequence[str | Path],
    configs: Sequence[str | Path | JudgeConfig | JudgeSpec | None] = (),
    *,
    out: str | Path,
    thresholds: CalibrationThresholds | None = None,
    num_options: int = 2,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    progress: bool = False,
    write: bool = True,
) -> Calibration:
    """Run every judge on every gold file and compare each with the gold labels.

    Args:
        task: ``ragbench`` or ``pairwise`` (see :data:`CALIBRATION_TASKS`).
        gold: Gold files (``sample:NAME`` allowed); each is one dataset of the leaderboard.
        configs: Judge configs (paths, ``JudgeConfig``s, named :class:`JudgeSpec`s, or
            ``"baseline"``/``None`` for the offline baseline); empty means the baseline alone.
        out: Directory for the judges' run directories and the reports; a rerun into it
            resumes and reuses finished judgments.
        thresholds: Gates (see :class:`CalibrationThresholds`).
        num_options: Pairwise: options the judges choose from (2, 3 or 4).
        n_resamples: Bootstrap resamples of the 95% intervals.
        confidence: Confidence level of the intervals.
        seed: Seed of the bootstrap.
        progress: Show the runner's progress bars.
        write: Write ``leaderboard.md``, ``leaderboard.csv``, ``by_label.csv`` and
            ``calibration.json`` into ``out``.

    Raises:
        ConfigError: The task has no gold labels to calibrate against, or a config is invalid.
        InputError: A gold file is malformed or holds no gold label.
    """
    if task not in CALIBRATION_TASKS:
        raise ConfigError(
            f"no calibration for task {task!r}; tasks: {', '.join(sorted(CALIBRATION_TASKS))}", field="task"
        )
    if not gold:
        raise ConfigError("give at least one gold file", field="gold")
    out_dir = Path(out)
    specs = judge_specs(list(configs))
    settings: dict[str, Any] = {
        "n_resamples": n_resamples,
        "confidence": confidence,
        "seed": seed,
        "num_options": num_options,
    }
    rows, tables = [], []
    for path in gold:
        for spec in specs:
            row, by_label = CALIBRATION_TASKS[task](path, spec, out_dir, settings, progress)
            rows.append(row)
            tables.append(by_label)
    leaderboard = pd.DataFrame(rows)
    extra = sorted(c for c in leaderboard.columns if c not in LEADERBOARD_COLUMNS)
    leaderboard = leaderboard.reindex(columns=LEADERBOARD_COLUMNS + extra)
    order = {name: i for i, name in enumerate(dict.fromkeys(leaderboard["dataset"]))}
    leaderboard = (
        leaderboard.assign(_order=leaderboard["dataset"].map(order))
        .sort_values(["_order", "kappa"], ascending=[True, False], na_position="last", kind="stable")
        .drop(columns="_order")
        .reset_index(drop=True)
    )
    label_columns = ["dataset", "judge", "side", "label", "n", "agreed", "rate", "rate_low", "rate_high"]
    by_label = pd.concat(tables, ignore_index=True)[label_columns]
    result = Calibration(
        task=task,
        leaderboard=leaderboard,
        by_label=by_label,
        gates=_check_gates(leaderboard, thresholds or CalibrationThresholds()),
        settings={**settings, "judges": [spec.name for spec in specs], "gold": [str(g) for g in gold]},
        out_dir=out_dir,
    )
    if write:
        from jurist.report.calibrate import write_calibration

        write_calibration(result, out_dir)
    return result
