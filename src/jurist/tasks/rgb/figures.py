"""What people look at in RGB runs: the review columns, the plots, and the gold file.

A suite's plots are the paper's: accuracy against the noise rate (noise robustness and
information integration, per language), negative rejection (Rej, Rej*) and counterfactual
robustness (Acc, Acc_doc, ED, ED*, CR), each rate with the Wilson interval of its counts.
Scored prediction files plot accuracy against noise rate per file series. The Rej* and ED*
judges' items carry one yes/no gold value each, which people can label.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from jurist.errors import ConfigError
from jurist.metrics.gold_agreement import wilson_interval
from jurist.report.figures import Figure
from jurist.report.review import LabelSpec, Review
from jurist.report.standard_figures import bars_figure, is_present
from jurist.tasks.rgb.judges import RGB_JUDGE_LABELS, JudgeKind
from jurist.tasks.rgb.judgments import RGBJudgments

__all__ = [
    "judgment_gold_rows",
    "judgment_review",
    "predictions_figures",
    "suite_figures",
    "with_gold_labels",
]

_LANGUAGES = ("en", "zh")


def _rate(successes: int | None, n: int | None) -> dict[str, float] | None:
    """``{"value", "low", "high"}`` of ``successes / n`` (Wilson), or ``None`` when ``n`` is 0."""
    if not n or successes is None:
        return None
    low, high = wilson_interval(int(successes), int(n))
    return {"value": successes / n, "low": low, "high": high}


def _languages(runs: Sequence[Mapping[str, Any]]) -> list[str]:
    found = {str(run["setting"]["language"]) for run in runs}
    return [lang for lang in _LANGUAGES if lang in found] + sorted(found - set(_LANGUAGES))


def suite_figures(summary: Mapping[str, Any]) -> list[Figure]:
    """Accuracy against noise rate, negative rejection and counterfactual robustness of a suite."""
    runs = [run for run in summary.get("runs") or [] if isinstance(run, Mapping) and "setting" in run]
    found: list[Figure | None] = [_noise_lines(runs), _rejection_bars(runs), _counterfactual_bars(runs)]
    return [figure for figure in found if figure is not None]


def _noise_lines(runs: Sequence[Mapping[str, Any]]) -> Figure | None:
    series = []
    for set_name, title in (("noise", "noise robustness"), ("integration", "information integration")):
        for language in _languages(runs):
            points: list[tuple[float, dict[str, float]]] = []
            for run in runs:
                rate = _rate(run.get("tt"), run.get("nums"))
                if run["setting"]["set"] == set_name and run["setting"]["language"] == language and rate:
                    points.append((float(run["setting"]["noise_rate"]), rate))
            points.sort(key=lambda point: point[0])
            if points:
                series.append(
                    {
                        "name": f"{language} {title}",
                        "x": [x for x, _ in points],
                        "y": [rate["value"] for _, rate in points],
                        "low": [rate["low"] for _, rate in points],
                        "high": [rate["high"] for _, rate in points],
                    }
                )
    if not series:
        return None
    return Figure(
        kind="lines",
        title="Accuracy against noise rate",
        data={"series": series, "xlabel": "noise rate", "ylabel": "accuracy", "ylim": [0.0, 1.0]},
        caption=(
            "Share of questions answered correctly (RGB's tt / nums) as the share of noisy passages grows: "
            "noise robustness, and information integration (answers that need several passages). Bands "
            "are 95% Wilson intervals over the questions of each run."
        ),
    )


def _judge(run: Mapping[str, Any]) -> Mapping[str, Any]:
    judge = run.get("judge")
    return judge if isinstance(judge, Mapping) else {}


def _rejection_bars(runs: Sequence[Mapping[str, Any]]) -> Figure | None:
    bars = []
    for run in runs:
        if run["setting"]["set"] != "rejection":
            continue
        language = str(run["setting"]["language"])
        judge = _judge(run)
        for label, rate in (
            ("Rej", _rate(run.get("tt"), run.get("nums"))),
            ("Rej*", _rate(judge.get("count"), judge.get("nums"))),
        ):
            if rate is not None:
                bars.append({"label": f"{language} {label}", **rate, "group": language})
    return bars_figure(
        bars,
        title="Negative rejection",
        ylim=(0.0, 1.0),
        caption=(
            "With only noisy passages (noise rate 1), the share of answers that decline: Rej by RGB's "
            "keyword check, Rej* as the rejection judge decides. Whiskers are 95% Wilson intervals."
        ),
    )


def _counterfactual_bars(runs: Sequence[Mapping[str, Any]]) -> Figure | None:
    bars = []
    for language in _languages(runs):
        closed = [
            r for r in runs if r["setting"]["set"] == "closed_book" and r["setting"]["language"] == language
        ]
        with_docs = [
            r
            for r in runs
            if r["setting"]["set"] == "counterfactual" and r["setting"]["language"] == language
        ]
        entries: list[tuple[str, dict[str, float] | None]] = []
        if closed:
            entries.append(("Acc", _rate(closed[0].get("tt"), closed[0].get("nums"))))
        if with_docs:
            run, judge = with_docs[0], _judge(with_docs[0])
            entries += [
                ("Acc_doc", _rate(run.get("tt"), run.get("nums"))),
                ("ED", _rate(run.get("fact_tt"), run.get("nums"))),
                ("ED*", _rate(judge.get("count"), judge.get("nums"))),
                ("CR", _rate(run.get("correct_tt"), run.get("fact_tt"))),
            ]
        bars += [
            {"label": f"{language} {label}", **rate, "group": language} for label, rate in entries if rate
        ]
    return bars_figure(
        bars,
        title="Counterfactual robustness",
        ylim=(0.0, 1.0),
        caption=(
            "Acc: accuracy without passages (the model's own knowledge); Acc_doc: with counterfactual "
            "passages; ED / ED*: share of answers reporting factual errors, by RGB's keywords / by the "
            "judge; CR: corrections among keyword detections (no bar when nothing was detected). Whiskers "
            "are 95% Wilson intervals."
        ),
    )


_NOISE = re.compile(r"_noise[0-9.]+")


def predictions_figures(results: Sequence[Mapping[str, Any]]) -> list[Figure]:
    """Accuracy against noise rate of scored prediction files, one series per file name with its
    noise rate taken out (RGB's ``prediction_{data}_{model}_temp{t}_noise{n}_passage{p}...``)."""
    groups: dict[str, list[tuple[float, dict[str, float]]]] = {}
    for result in results:
        rate = _rate(result.get("tt"), result.get("nums"))
        if rate is None or not is_present(result.get("noise_rate")):
            continue
        stem = Path(str(result.get("file", ""))).stem.removeprefix("prediction_")
        groups.setdefault(_NOISE.sub("", stem), []).append((float(result["noise_rate"]), rate))
    series = []
    for name, points in groups.items():
        points.sort(key=lambda point: point[0])
        series.append(
            {
                "name": name,
                "x": [x for x, _ in points],
                "y": [rate["value"] for _, rate in points],
                "low": [rate["low"] for _, rate in points],
                "high": [rate["high"] for _, rate in points],
            }
        )
    if not series:
        return []
    return [
        Figure(
            kind="lines",
            title="Accuracy against noise rate",
            data={"series": series, "xlabel": "noise rate", "ylabel": "accuracy", "ylim": [0.0, 1.0]},
            caption=(
                f"RGB's accuracy (tt / nums; at noise rate 1, the rejections) of {len(results)} prediction "
                "files, one line per file name without its noise rate. Bands are 95% Wilson intervals."
            ),
        )
    ]


# ---------------------------------------------------------------------- the Rej* and ED* judges


def judgment_review(kind: JudgeKind) -> Review:
    """The judge's yes/no verdict against the gold label (``gold_<label>``), labelled yes/no."""
    label = RGB_JUDGE_LABELS[kind]
    return Review(
        verdict=label,
        gold=f"gold_{label}",
        agrees="agrees",
        label=LabelSpec(kind="bool"),
        columns=("reason",),
    )


def with_gold_labels(kind: JudgeKind, items: pd.DataFrame, dataset: RGBJudgments) -> pd.DataFrame:
    """``items`` with the gold label (``gold_<label>``, ``None`` where unlabelled) and ``agrees``."""
    label = RGB_JUDGE_LABELS[kind]
    table = items.copy()
    if table.empty or "id" not in table:
        return table
    gold = {str(row.id): row.label(label) for row in dataset}
    values = [gold.get(str(item)) for item in table["id"]]
    table[f"gold_{label}"] = pd.Series(values, index=table.index, dtype=object)
    verdicts = table[label] if label in table else pd.Series(None, index=table.index)
    table["agrees"] = pd.Series(
        [
            bool(verdict) == value if status == "ok" and value is not None and is_present(verdict) else None
            for status, verdict, value in zip(table["status"], verdicts, values, strict=True)
        ],
        index=table.index,
        dtype=object,
    )
    return table


def judgment_gold_rows(
    kind: JudgeKind, dataset: RGBJudgments, labels: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """The rows of a Rej*/ED* gold file with people's yes/no labels in the judge's label field.

    Every row labelled afterwards is kept (with no label in the data: the rows people
    labelled), with its other fields (and the other judge's label) as read.

    Raises:
        ConfigError: A label names no row, or is not yes/no.
    """
    label = RGB_JUDGE_LABELS[kind]
    known = {str(row.id) for row in dataset}
    chosen: dict[str, bool] = {}
    for item, value in labels.items():
        if str(item) not in known:
            raise ConfigError(f"label for item {item!r}: the data has no row with that id", field="labels")
        try:
            chosen[str(item)] = LabelSpec(kind="bool").parse(value)
        except ValueError as exc:
            raise ConfigError(f"label for item {item!r}: {exc}", field="labels") from None
    rows = []
    for row in dataset:
        value = chosen.get(str(row.id), row.label(label))
        if value is not None:
            rows.append(row.model_copy(update={label: value}).model_dump(mode="json", exclude_none=True))
    return rows
