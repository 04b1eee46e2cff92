"""Scores of AlpacaEval's judged runs as published (``jurist score pairwise annotations.json``).

:func:`score_annotations` gives one annotations file's leaderboard row exactly as alpaca_eval's
metrics compute it (:mod:`jurist.metrics.pairwise.alpaca_eval`), with jurist's additions: bootstrap
intervals, the length statistics and length bias the task reports for SubEval runs, the
generators compared, and — given alpaca_eval's ``df_gamed.csv`` — the length-controlled win
rate. :func:`score_folder` gives the leaderboard of a results folder, one row per model.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from jurist.datasets.pairwise.alpaca_eval import (
    AlpacaAnnotations,
    GamedData,
    annotation_files,
    is_annotations_file,
    read_annotations,
    read_gamed,
)
from jurist.errors import ConfigError, InputError, install_hint
from jurist.metrics.pairwise.alpaca_eval import (
    LengthControlled,
    alpaca_bootstrap,
    alpaca_winrate,
    discrete_preferences,
    length_controlled_winrate,
)
from jurist.metrics.pairwise.subeval import length_stats
from jurist.report.figures import Figure
from jurist.report.standard_figures import bars_figure
from jurist.tasks.pairwise.alpaca_report import AlpacaLeaderboard, AlpacaScores, leaderboard_frame
from jurist.tasks.pairwise.lengths import token_counter

__all__ = ["alpaca_figures", "alpaca_source", "read_length_control", "score_annotations", "score_folder"]


def alpaca_source(path: Path) -> list[Path] | None:
    """The AlpacaEval annotations files ``path`` stands for: itself, or those below a folder
    that holds no run directory of ``judge pairwise``; ``None`` when it is neither."""
    if path.is_file():
        return [path] if is_annotations_file(path) else None
    if not path.is_dir() or (path / "manifest.json").is_file():
        return None
    if any((child / "manifest.json").is_file() for child in path.iterdir() if child.is_dir()):
        return None
    return annotation_files(path) or None


_VERDICTS = {1.0: "1", 2.0: "2", 1.5: "tie"}


def _items(data: AlpacaAnnotations, lengths_1: list[int], lengths_2: list[int]) -> pd.DataFrame:
    """One row per annotation: its fields, the verdict alpaca_eval's zero-one rule reads from its
    preference (``1`` baseline, ``2`` model, ``tie``; none when dropped) and the output lengths."""
    discrete = discrete_preferences(data.preference)
    return pd.DataFrame(
        {
            "id": [str(position) for position in range(len(data))],
            "status": "ok",
            "instruction": data.instruction,
            "generator_1": data.generator_1,
            "generator_2": data.generator_2,
            "preference": data.preference,
            "verdict": pd.Series([_VERDICTS.get(float(value)) for value in discrete], dtype=object),
            "length_1": lengths_1,
            "length_2": lengths_2,
            "output_1": data.output_1,
            "output_2": data.output_2,
        }
    )


def score_annotations(
    data: AlpacaAnnotations,
    *,
    gamed: GamedData | None = None,
    n_resamples: int = 1000,
    seed: int = 0,
    count: Callable[[str], int] | None = None,
    length_unit: str | None = None,
) -> AlpacaScores:
    """Score one annotations file without calling a model (see the module docstring).

    Lengths are counted by ``count`` (default: the task's :func:`token_counter`, as for
    SubEval runs) for the length statistics and bias; ``avg_length`` and the
    length-controlled win rate count characters, as alpaca_eval does.

    Raises:
        InputError: The file holds no annotation, or (with ``gamed``) several models or
            baselines, or annotations the GLM cannot fit (its reason named).
        ConfigError: ``gamed`` is given and scikit-learn is not installed.
    """
    if len(data) == 0:
        raise InputError("no annotation to score", path=data.path)
    if count is None:
        count, unit = token_counter()
    else:
        unit = length_unit or "custom units"
    lengths_1 = [count(text) for text in data.output_1]
    lengths_2 = [count(text) for text in data.output_2]
    intervals, bias = alpaca_bootstrap(
        data.preference, lengths_1, lengths_2, n_resamples=n_resamples, seed=seed
    )
    records = pd.DataFrame(
        {"A": data.generator_1, "B": data.generator_2, "answer1": data.output_1, "answer2": data.output_2}
    )
    chars_2 = np.array([len(text) for text in data.output_2], dtype=np.float64)
    return AlpacaScores(
        source=str(data.path),
        annotator=data.annotator_name,
        models=data.models,
        baselines=data.baselines,
        annotations=len(data),
        winrate=alpaca_winrate(data.preference),
        intervals=intervals,
        n_resamples=n_resamples,
        avg_length=int(chars_2.mean()),
        length_stats=length_stats(records, count),
        length_unit=unit,
        length_bias=bias,
        length_controlled=None if gamed is None else _length_controlled(data, gamed),
        items=_items(data, lengths_1, lengths_2),
    )


def _length_controlled(data: AlpacaAnnotations, gamed: GamedData) -> LengthControlled:
    """alpaca_eval's length-controlled win rate of one model's annotations."""
    if len(data.models) != 1 or len(data.baselines) != 1:
        raise InputError(
            "the length-controlled win rate compares one model with one baseline; the file has "
            f"models {data.models} and baselines {data.baselines}",
            path=data.path,
            field="generator_2" if len(data.models) != 1 else "generator_1",
        )
    difficulty = gamed.difficulties(len(data), data.path)
    try:
        return length_controlled_winrate(
            data.preference,
            [len(text) for text in data.output_1],
            [len(text) for text in data.output_2],
            difficulty,
            gamed.gamed,
            same_model=data.models == data.baselines,
        )
    except ImportError:
        raise ConfigError(
            f"the length-controlled win rate needs scikit-learn; {install_hint('alpacaeval')}",
            field="length_control",
        ) from None
    except ValueError as exc:
        raise InputError(str(exc), path=data.path) from None


def _sort_key(board: pd.DataFrame) -> str:
    return "length_controlled_winrate" if "length_controlled_winrate" in board.columns else "win_rate"


def score_folder(
    folder: Path,
    files: list[Path],
    *,
    annotator: str | None = None,
    gamed: GamedData | None = None,
    n_resamples: int = 1000,
    seed: int = 0,
) -> AlpacaLeaderboard:
    """The leaderboard of the annotations ``files`` of a results ``folder``: one row per model
    (each file one model), of one annotator (``annotator``; default the only one), sorted by
    the length-controlled win rate when computed, else the win rate (highest first, as
    alpaca_eval sorts its leaderboard).

    Raises:
        InputError: A file compares several models, two files the same model, or the files are
            of several annotators and ``annotator`` names none of them (or one absent).
    """
    read = [read_annotations(file) for file in files]
    annotators = list(dict.fromkeys(data.annotator_name for data in read))
    if annotator is None and len(annotators) > 1:
        raise ConfigError(
            f"{folder} holds the annotations of several annotators ({', '.join(annotators)}); "
            "choose one with --annotator",
            field="annotator",
        )
    chosen = annotator or annotators[0]
    if chosen not in annotators:
        raise ConfigError(
            f"no annotations of annotator {chosen!r} in {folder} (it has {', '.join(annotators)})",
            field="annotator",
        )
    count, unit = token_counter()
    rows: dict[str, AlpacaScores] = {}
    for data in read:
        if data.annotator_name != chosen:
            continue
        if len(data.models) != 1:
            raise InputError(
                f"a leaderboard file holds one model's annotations; this one has {data.models}",
                path=data.path,
                field="generator_2",
            )
        if data.models[0] in rows:
            raise InputError(
                f"a second annotations file of model {data.models[0]!r} "
                f"(the first: {rows[data.models[0]].source})",
                path=data.path,
                field="generator_2",
            )
        rows[data.models[0]] = score_annotations(
            data, gamed=gamed, n_resamples=n_resamples, seed=seed, count=count, length_unit=unit
        )
    board = AlpacaLeaderboard(source=str(folder), annotator=chosen, rows=list(rows.values()))
    frame = leaderboard_frame(board)
    order = frame.sort_values(_sort_key(frame), ascending=False, kind="stable").index
    board.rows = [rows[model] for model in order]
    return board


def read_length_control(path: Path | None) -> GamedData | None:
    """``df_gamed.csv`` when the option names it."""
    return None if path is None else read_gamed(path)


def alpaca_figures(result: AlpacaScores | AlpacaLeaderboard) -> list[Figure]:
    """The win rates per model (alpaca_eval's, its discrete one and the length-controlled one,
    with bootstrap whiskers), the length bias per model, and the mean output lengths."""
    rows = result.rows if isinstance(result, AlpacaLeaderboard) else [result]
    rates = []
    for scores in rows:
        low, high = scores.intervals["win_rate"]
        rates.append(
            {
                "label": f"{scores.model}",
                "value": scores.winrate.win_rate,
                "low": low,
                "high": high,
                "group": "win_rate",
            }
        )
        low, high = scores.intervals["discrete_win_rate"]
        rates.append(
            {
                "label": f"{scores.model} (discrete)",
                "value": scores.winrate.discrete_win_rate,
                "low": low,
                "high": high,
                "group": "discrete_win_rate",
            }
        )
        if scores.length_controlled is not None:
            rates.append(
                {
                    "label": f"{scores.model} (length-controlled)",
                    "value": scores.length_controlled.length_controlled_winrate,
                    "group": "length_controlled_winrate",
                }
            )
    bias = [
        {
            "label": scores.model,
            "value": scores.length_bias.rate if scores.length_bias.decisive else None,
            "low": scores.length_bias.ci_low,
            "high": scores.length_bias.ci_high,
            "group": "length",
        }
        for scores in rows
    ]
    baseline = "+".join(dict.fromkeys(name for scores in rows for name in scores.baselines))
    found = [
        bars_figure(
            rates,
            title=f"Win rates against {baseline} (percent)",
            ylabel="percent",
            ylim=(0.0, 100.0),
            caption=(
                "alpaca_eval's win rate (mean preference, a draw counting half), its discrete win rate "
                "(each preference rounded to a verdict first) and, where alpaca_eval's df_gamed.csv was "
                "given, the length-controlled win rate. Whiskers are 95% bootstrap intervals over "
                f"annotations. {len(rows)} model(s)."
            ),
        ),
        bars_figure(
            bias,
            title="Length bias",
            ylim=(0.0, 1.0),
            caption=(
                "Share of the decisive annotations (a winner, outputs of unequal length) that preferred "
                f"the longer output, in {rows[0].length_unit}; 0.5 is no length bias. Whiskers are 95% "
                "bootstrap intervals over annotations."
            ),
        ),
        bars_figure(
            [{"label": scores.model, "value": scores.avg_length} for scores in rows],
            title="Mean output length (characters)",
            ylabel="characters",
            caption="alpaca_eval's avg_length: the mean length in characters of each model's outputs.",
        ),
    ]
    return [figure for figure in found if figure is not None]
