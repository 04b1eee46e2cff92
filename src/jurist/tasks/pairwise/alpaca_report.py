"""What ``jurist score pairwise`` reports for AlpacaEval annotations: the leaderboard row of one
file, the leaderboard of a results folder, their summaries, Markdown and tables.

:func:`write_alpaca` writes, into one directory:

- ``leaderboard.csv``: alpaca_eval's leaderboard columns (:data:`LEADERBOARD_COLUMNS`, the
  length-controlled ones only when computed), one row per model, indexed by the model's name
  (an unnamed first column, as alpaca_eval writes it), sorted as alpaca_eval sorts it;
- ``leaderboard_details.csv``: the same rows with jurist's additions (annotator, baseline,
  bootstrap intervals, length bias, the GLM's coefficients);
- ``annotations.csv`` (one file): one row per annotation with its verdict;
- ``summary.json`` and ``summary.md``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from jurist.atomic import atomic_write, atomic_write_text
from jurist.metrics.pairwise.alpaca_eval import AlpacaWinRate, LengthControlled
from jurist.metrics.pairwise.subeval import LengthBias
from jurist.report.jsonout import dumps, json_ready
from jurist.report.markdown import fmt, table

__all__ = [
    "ALPACA_COLUMNS",
    "LEADERBOARD_COLUMNS",
    "LEADERBOARD_MODE",
    "AlpacaLeaderboard",
    "AlpacaScores",
    "alpaca_markdown",
    "alpaca_summary",
    "leaderboard_frame",
    "leaderboard_markdown",
    "leaderboard_summary",
    "write_alpaca",
]

ALPACA_COLUMNS = (
    "win_rate",
    "standard_error",
    "n_wins",
    "n_wins_base",
    "n_draws",
    "n_total",
    "discrete_win_rate",
)
"""The figures of alpaca_eval's ``get_winrate``, under its names."""

LEADERBOARD_COLUMNS = (
    *ALPACA_COLUMNS,
    "mode",
    "avg_length",
    "length_controlled_winrate",
    "lc_standard_error",
)
"""The columns of alpaca_eval's leaderboard CSV (AlpacaEval 2), after the model's name."""

LEADERBOARD_MODE = "community"
"""The ``mode`` column: what alpaca_eval writes for a model it evaluates (its default
``current_leaderboard_mode``); whether a published model is ``minimal`` or ``verified`` is
not in its annotations."""


@dataclass
class AlpacaScores:
    """The leaderboard row of one AlpacaEval annotations file, and jurist's additions.

    Attributes:
        source: The file.
        annotator: Its annotator (the records' ``annotator``, else its folder's name).
        models: The compared models (``generator_2``).
        baselines: The baselines (``generator_1``).
        annotations: How many records the file holds.
        winrate: alpaca_eval's ``get_winrate`` figures.
        intervals: Bootstrap intervals of ``win_rate`` and ``discrete_win_rate`` (percent).
        n_resamples: Bootstrap resamples behind them.
        avg_length: alpaca_eval's ``avg_length``: the model's mean output length in characters,
            truncated to an integer.
        length_stats: Mean and std of each generator's output length (``length_unit``).
        length_unit: What a length counts.
        length_bias: How often a decisive preference chose the longer output.
        length_controlled: The length-controlled win rate, when ``df_gamed.csv`` was given.
        items: One row per annotation (``id`` is its position).
    """

    source: str
    annotator: str
    models: list[str]
    baselines: list[str]
    annotations: int
    winrate: AlpacaWinRate
    intervals: dict[str, tuple[float, float]]
    n_resamples: int
    avg_length: int
    length_stats: pd.DataFrame
    length_unit: str
    length_bias: LengthBias
    length_controlled: LengthControlled | None
    items: pd.DataFrame

    @property
    def model(self) -> str:
        """The compared model's name (several joined with ``+``)."""
        return "+".join(self.models)


@dataclass
class AlpacaLeaderboard:
    """The leaderboard of a folder of annotations files, one per model.

    Attributes:
        source: The folder.
        annotator: The annotator whose files make the leaderboard.
        rows: Each model's scores, in leaderboard order.
    """

    source: str
    annotator: str
    rows: list[AlpacaScores]


def _leaderboard_row(scores: AlpacaScores) -> dict[str, Any]:
    row: dict[str, Any] = {
        **scores.winrate.as_dict(),
        "mode": LEADERBOARD_MODE,
        "avg_length": scores.avg_length,
    }
    if scores.length_controlled is not None:
        row["length_controlled_winrate"] = scores.length_controlled.length_controlled_winrate
        row["lc_standard_error"] = scores.length_controlled.lc_standard_error
    return row


def _details(scores: AlpacaScores) -> dict[str, Any]:
    """jurist's additions to a leaderboard row."""
    bias = scores.length_bias
    details: dict[str, Any] = {
        "annotator": scores.annotator,
        "baseline": "+".join(scores.baselines),
        "annotations": scores.annotations,
        "win_rate_low": scores.intervals["win_rate"][0],
        "win_rate_high": scores.intervals["win_rate"][1],
        "discrete_win_rate_low": scores.intervals["discrete_win_rate"][0],
        "discrete_win_rate_high": scores.intervals["discrete_win_rate"][1],
        "length_bias": bias.rate,
        "length_bias_low": bias.ci_low,
        "length_bias_high": bias.ci_high,
        "length_bias_decisive": bias.decisive,
    }
    lc = scores.length_controlled
    if lc is not None:
        details["lc_regularization"] = lc.regularization
        details.update({f"lc_weight[{name}]": value for name, value in lc.weights.items()})
    return details


def alpaca_summary(scores: AlpacaScores) -> dict[str, Any]:
    """The leaderboard row under alpaca_eval's names (percent), then jurist's additions: bootstrap
    intervals (``win_rate_low``/``_high``, ...), the generators compared, the length statistics
    and length bias (what ``jurist score pairwise FILE --json`` prints)."""
    summary: dict[str, Any] = {
        "format": "alpaca_eval",
        "source": scores.source,
        "items": scores.annotations,
        "model": scores.model,
        "generators": {"baseline": scores.baselines, "model": scores.models},
        **_leaderboard_row(scores),
        **_details(scores),
        "bootstrap": {"n_resamples": scores.n_resamples, "confidence": 0.95},
        "length_unit": scores.length_unit,
        "length_stats": scores.length_stats.to_dict(orient="records"),
        "length_bias_longer_wins": scores.length_bias.longer_wins,
    }
    ready: dict[str, Any] = json_ready(summary)
    return ready


def leaderboard_frame(board: AlpacaLeaderboard, *, details: bool = False) -> pd.DataFrame:
    """The leaderboard as alpaca_eval's CSV holds it: indexed by model, its columns (the
    length-controlled ones when computed), with ``details`` jurist's additions after them."""
    records = {}
    for scores in board.rows:
        row = _leaderboard_row(scores)
        records[scores.model] = {**row, **_details(scores)} if details else row
    frame = pd.DataFrame.from_dict(records, orient="index")
    columns = [column for column in LEADERBOARD_COLUMNS if column in frame.columns]
    extra = [column for column in frame.columns if column not in columns]
    return frame[columns + extra]


def leaderboard_summary(board: AlpacaLeaderboard) -> dict[str, Any]:
    """The leaderboard (``jurist score pairwise FOLDER --json``): one entry per model with its
    row under alpaca_eval's names and jurist's additions."""
    frame = leaderboard_frame(board, details=True)
    rows = [
        {"model": model, **record}
        for model, record in zip(frame.index, frame.to_dict(orient="records"), strict=True)
    ]
    summary: dict[str, Any] = json_ready(
        {
            "format": "alpaca_eval",
            "source": board.source,
            "annotator": board.annotator,
            "models": len(board.rows),
            "items": sum(scores.annotations for scores in board.rows),
            "leaderboard": rows,
        }
    )
    return summary


def _interval(value: float, bounds: tuple[float, float]) -> str:
    low, high = bounds
    if any(math.isnan(x) for x in (value, low, high)):
        return fmt(value, 2)
    return f"{value:.2f} [{low:.2f}, {high:.2f}]"


def alpaca_markdown(scores: AlpacaScores) -> str:
    """One file's leaderboard row and jurist's additions, in Markdown."""
    rate = scores.winrate
    bias = scores.length_bias
    lc = scores.length_controlled
    rows: list[list[Any]] = [
        ["win_rate", _interval(rate.win_rate, scores.intervals["win_rate"])],
        ["standard_error", fmt(rate.standard_error, 2)],
        ["n_wins", rate.n_wins],
        ["n_wins_base", rate.n_wins_base],
        ["n_draws", rate.n_draws],
        ["n_total", rate.n_total],
        ["discrete_win_rate", _interval(rate.discrete_win_rate, scores.intervals["discrete_win_rate"])],
        ["avg_length", scores.avg_length],
    ]
    if lc is not None:
        rows += [
            ["length_controlled_winrate", fmt(lc.length_controlled_winrate, 2)],
            ["lc_standard_error", fmt(lc.lc_standard_error, 2)],
        ]
    dropped = scores.annotations - rate.n_total
    lines = [
        f"# AlpacaEval annotations: {scores.model} vs {'+'.join(scores.baselines)}",
        "",
        f"- Annotations: `{scores.source}` ({scores.annotations} records; annotator {scores.annotator})",
        f"- Preferences counted: {rate.n_total}"
        + (f" ({dropped} missing or outside [1, 2], dropped as alpaca_eval drops them)" if dropped else ""),
        "",
        "## Leaderboard row (alpaca_eval's figures, percent)",
        "",
        f"95% bootstrap intervals over annotations ({scores.n_resamples} resamples) in brackets.",
        "",
        table(["", "value"], rows),
        "",
    ]
    if lc is None:
        lines += [
            "The length-controlled win rate needs alpaca_eval's df_gamed.csv (option --length-control FILE).",
            "",
        ]
    lines += [
        f"## Output length ({scores.length_unit})",
        "",
        table(
            ["generator", "mean", "std"], [[r.model, r.mean, r.std] for r in scores.length_stats.itertuples()]
        ),
        "",
        f"Length bias: the longer output was preferred in {bias.longer_wins} of {bias.decisive} decisive "
        f"annotations (a winner, unequal lengths); rate {fmt(bias.rate)} "
        f"[{fmt(bias.ci_low)}, {fmt(bias.ci_high)}].",
        "",
    ]
    return "\n".join(lines)


def leaderboard_markdown(board: AlpacaLeaderboard) -> str:
    """The leaderboard of a results folder, in Markdown."""
    frame = leaderboard_frame(board)
    lc = "length_controlled_winrate" in frame.columns
    headers = ["model", "win_rate", "standard_error", "n_total", "discrete_win_rate", "avg_length"]
    if lc:
        headers[1:1] = ["length_controlled_winrate"]
    lines = [
        f"# AlpacaEval leaderboard: {board.annotator}",
        "",
        f"- Annotations: `{board.source}` ({len(board.rows)} models)",
        f"- Sorted by {'length_controlled_winrate' if lc else 'win_rate'}, as alpaca_eval sorts it; "
        "rates in percent",
        "",
        table(
            headers,
            [
                [model]
                + [
                    fmt(row[column], 2) if isinstance(row[column], float) else row[column]
                    for column in headers[1:]
                ]
                for model, row in frame.iterrows()
            ],
        ),
        "",
    ]
    return "\n".join(lines)


def write_alpaca(result: AlpacaScores | AlpacaLeaderboard, out_dir: str | Path) -> list[Path]:
    """Write the tables and summaries of ``result`` into ``out_dir`` (see the module docstring).

    Returns:
        The files written.
    """
    folder = Path(out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    board = (
        result
        if isinstance(result, AlpacaLeaderboard)
        else AlpacaLeaderboard(result.source, result.annotator, [result])
    )
    written: list[Path] = []

    def save(name: str, frame: pd.DataFrame, *, index: bool) -> None:
        path = folder / name
        atomic_write(path, lambda tmp: frame.to_csv(tmp, index=index, encoding="utf-8"))
        written.append(path)

    save("leaderboard.csv", leaderboard_frame(board), index=True)
    save("leaderboard_details.csv", leaderboard_frame(board, details=True), index=True)
    if isinstance(result, AlpacaScores):
        save("annotations.csv", result.items, index=False)
        summary, markdown = alpaca_summary(result), alpaca_markdown(result)
    else:
        summary, markdown = leaderboard_summary(result), leaderboard_markdown(result)
    atomic_write_text(folder / "summary.json", dumps(summary, ensure_ascii=False) + "\n")
    atomic_write_text(folder / "summary.md", markdown)
    written += [folder / "summary.json", folder / "summary.md"]
    return written
