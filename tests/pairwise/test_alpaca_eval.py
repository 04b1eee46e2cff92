"""AlpacaEval annotations as published, scored by `jurist score pairwise` (file and results folder).

Every figure is checked twice: against a restatement of alpaca_eval's rules written here
(its `metrics/helpers.py`: the absolute and zero-one scoring rules of `get_winrate`), and
against the figures of the `alpaca-eval` package itself on the same files
(`tests/data/alpacaeval/reference.json`, written by `reference.py` there with alpaca_eval
0.6.6; with `JURIST_ALPACA_EVAL_PYTHON` naming a Python that has it, that script runs again).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import statistics
import subprocess
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from typer.testing import CliRunner

import jurist.cli.verbs  # noqa: F401  (registers the commands)
from jurist.cli import app
from jurist.errors import ConfigError, InputError
from jurist.verbs import score
from support import run_cli

DATA = Path(__file__).parents[1] / "data" / "alpacaeval"
RESULTS = DATA / "results"
GAMED = DATA / "df_gamed.csv"
AV1 = DATA / "av1-annotations.json"
REFERENCE = json.loads((DATA / "reference.json").read_text(encoding="utf-8"))
WEIGHTED = [
    "results/model-long/weighted_alpaca_eval_gpt4_turbo/annotations.json",
    "results/model-short/weighted_alpaca_eval_gpt4_turbo/annotations.json",
    "results/gpt4_1106_preview/weighted_alpaca_eval_gpt4_turbo/annotations.json",
]
FIGURES = ("win_rate", "standard_error", "n_wins", "n_wins_base", "n_draws", "n_total", "discrete_win_rate")


def _round_half_even(value: float) -> float:
    return float(round(value))  # Python's round is half to even, like numpy's


def restated(preferences: list[Any]) -> dict[str, float]:
    """alpaca_eval's `get_winrate`, restated: missing preferences (None, NaN) are not preferences;
    0 is a draw and counts as 1.5; only values in [1, 2] count; the discrete rate first turns 1.5
    into 0, rounds half to even, turns 0 back into 1.5 and keeps what lies in [1, 2]."""
    given = [float(p) for p in preferences if p is not None and not (isinstance(p, float) and math.isnan(p))]
    draws = sum(1 for p in given if p in (0.0, 1.5))
    kept = [(1.5 if p == 0.0 else p) - 1 for p in given if 1 <= (1.5 if p == 0.0 else p) <= 2]
    discrete = []
    for p in given:
        rounded = _round_half_even(0.0 if p == 1.5 else p)
        rounded = 1.5 if rounded == 0.0 else rounded
        if 1 <= rounded <= 2:
            discrete.append(rounded - 1)
    return {
        "win_rate": 100 * sum(kept) / len(kept),
        "standard_error": 100 * statistics.stdev(kept) / math.sqrt(len(kept)),
        "n_wins": sum(1 for q in kept if q > 0.5),
        "n_wins_base": sum(1 for q in kept if q < 0.5),
        "n_draws": draws,
        "n_total": len(kept),
        "discrete_win_rate": 100 * sum(discrete) / len(discrete),
    }


def _preferences(path: Path) -> list[Any]:
    return [record.get("preference") for record in json.loads(path.read_text(encoding="utf-8"))]


def _same(found: dict[str, Any], expected: dict[str, Any], keys: tuple[str, ...], tol: float = 1e-9) -> None:
    for key in keys:
        assert found[key] == pytest.approx(expected[key], abs=tol), key


@pytest.fixture(scope="module")
def leaderboard(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    """The results folder scored through the `jurist` command, with the length control."""
    out = tmp_path_factory.mktemp("leaderboard")
    result = CliRunner().invoke(
        app,
        ["score", "pairwise", str(RESULTS), "--length-control", str(GAMED), "--out", str(out), "--json"],
    )
    assert result.exit_code == 0, result.output
    return json.loads(result.output), out


@pytest.mark.parametrize("name", ["av1-annotations.json", *WEIGHTED])
def test_file_gives_alpaca_evals_leaderboard_row(name: str) -> None:
    summary = score("pairwise", DATA / name, options={"resamples": 50}).summary
    expected = restated(_preferences(DATA / name))
    _same(summary, expected, FIGURES)
    _same(summary, REFERENCE["figures"][name], (*FIGURES, "avg_length"))
    assert isinstance(summary["n_total"], int) and summary["format"] == "alpaca_eval"
    assert summary["win_rate_low"] <= summary["win_rate"] <= summary["win_rate_high"]


def test_every_preference_encoding_counts_as_alpaca_eval_counts_it(tmp_path: Path) -> None:
    """1/2 verdicts, draws as 0 and 1.5, floats from a weighted annotator, a null and an absent
    preference (dropped), and values outside [1, 2] (dropped by the win rate, but rounded into
    a verdict by the discrete one: 0.4 is a draw, 2.4 a win)."""
    encodings = [1, 2, 2, 0, 1.5, None, "absent", 2.0, 1.3, 1.7, 1.5000001, 3, -1, 0.4, 2.4, 2.5, 1.0]
    records = []
    for position, preference in enumerate(encodings):
        record = {
            "instruction": f"q{position}",
            "output_1": "short" * (position % 3 + 1),
            "generator_1": "base",
            "output_2": "longer answer " * (position % 4 + 1),
            "generator_2": "model",
            "annotator": "alpaca_eval_gpt4",
            "preference": preference,
        }
        if preference == "absent":
            del record["preference"]
        records.append(record)
    path = tmp_path / "annotations.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    summary = score("pairwise", path, options={"resamples": 0}).summary
    given = [p for p in encodings if p != "absent"]
    expected = restated(given)
    _same(summary, expected, FIGURES)
    assert (summary["n_total"], summary["n_draws"], summary["items"]) == (10, 2, 17)
    # what alpaca_eval 0.6.6's get_winrate gives for these preferences
    package = {"win_rate": 55.000001, "standard_error": 12.041594532655957, "n_wins": 5, "n_wins_base": 3}
    _same(summary, {**package, "discrete_win_rate": 65.38461538461539}, (*package, "discrete_win_rate"))


def test_length_bias_and_lengths_follow_the_subeval_rule() -> None:
    from jurist.datasets.pairwise.alpaca_eval import read_annotations
    from jurist.tasks.pairwise.alpaca import score_annotations

    data = read_annotations(AV1)
    scores = score_annotations(data, n_resamples=0, count=len, length_unit="characters")
    decisive = longer = 0
    for record in json.loads(AV1.read_text(encoding="utf-8")):
        p = record.get("preference")
        if p is None or not 1 <= (1.5 if p == 0 else p) <= 2 or (1.5 if p == 0 else p) == 1.5:
            continue
        first, second = len(record["output_1"]), len(record["output_2"])
        if first != second:
            decisive += 1
            longer += (p > 1.5) == (second > first)
    assert (scores.length_bias.decisive, scores.length_bias.longer_wins) == (decisive, longer)
    means = scores.length_stats.set_index("model")["mean"]
    records = json.loads(AV1.read_text(encoding="utf-8"))
    assert means["alpaca-7b"] == pytest.approx(statistics.fmean(len(r["output_2"]) for r in records))
    assert scores.avg_length == int(statistics.fmean(len(r["output_2"]) for r in records))
    assert list(scores.items["verdict"][:6]) == ["2", "1", "2", "tie", "tie", None]


def test_length_controlled_win_rate_equals_alpaca_evals() -> None:
    """One file with df_gamed.csv (the folder's leaderboard checks the others)."""
    name = WEIGHTED[1]
    summary = score("pairwise", DATA / name, options={"length_control": GAMED, "resamples": 0}).summary
    _same(summary, REFERENCE["figures"][name], ("length_controlled_winrate", "lc_standard_error"), tol=1e-6)
    assert summary["lc_regularization"] > 0 and set(summary) >= {"lc_weight[instruction_difficulty]"}


def test_folder_gives_the_leaderboard(leaderboard: tuple[dict[str, Any], Path]) -> None:
    summary, out = leaderboard
    rows = {row["model"]: row for row in summary["leaderboard"]}
    for name in WEIGHTED:
        model = name.split("/")[1]
        expected = REFERENCE["figures"][name]
        _same(rows[model], expected, (*FIGURES, "avg_length"))
        _same(rows[model], expected, ("length_controlled_winrate", "lc_standard_error"), tol=1e-6)
    order = [row["model"] for row in summary["leaderboard"]]
    assert order == sorted(order, key=lambda model: -rows[model]["length_controlled_winrate"])
    table = pd.read_csv(out / "leaderboard.csv", index_col=0)
    assert list(table.columns) == [
        "win_rate", "standard_error", "n_wins", "n_wins_base", "n_draws", "n_total",
        "discrete_win_rate", "mode", "avg_length", "length_controlled_winrate", "lc_standard_error",
    ]  # fmt: skip
    assert list(table.index) == order and table.index.name is None
    assert table.loc["model-short", "n_wins"] == REFERENCE["figures"][WEIGHTED[1]]["n_wins"]
    page = (out / "report.html").read_text(encoding="utf-8")
    assert all(model in page for model in order) and "Win rates against gpt4_1106_preview" in page
    assert json.loads((out / "summary.json").read_text(encoding="utf-8"))["models"] == 3
    assert rows["gpt4_1106_preview"]["length_controlled_winrate"] == 50.0  # the baseline against itself


@pytest.mark.skipif(
    not os.environ.get("JURIST_ALPACA_EVAL_PYTHON"),
    reason="JURIST_ALPACA_EVAL_PYTHON names no Python with alpaca-eval; reference.json holds its figures",
)
def test_alpaca_eval_package_itself_agrees(tmp_path: Path) -> None:
    out = tmp_path / "reference.json"
    python = os.environ["JURIST_ALPACA_EVAL_PYTHON"]
    subprocess.run([python, str(DATA / "reference.py"), str(out)], check=True, capture_output=True)
    live = json.loads(out.read_text(encoding="utf-8"))["figures"]
    for name, expected in live.items():
        options: dict[str, Any] = {"resamples": 0}
        if "length_controlled_winrate" in expected:
            options["length_control"] = GAMED
        summary = score("pairwise", DATA / name, options=options).summary
        _same(summary, expected, tuple(key for key in expected if key != "avg_length"), tol=1e-6)


def test_bad_preference_names_file_record_and_field(tmp_path: Path) -> None:
    records = json.loads(AV1.read_text(encoding="utf-8"))
    records[4]["preference"] = "2"
    path = tmp_path / "annotations.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    result = CliRunner().invoke(app, ["score", "pairwise", str(path)])
    assert isinstance(result.exception, InputError)
    assert (result.exception.line, result.exception.field) == (5, "preference")
    assert str(path) in str(result.exception)
    assert run_cli(["score", "pairwise", str(path)]) == 2


def test_gamed_file_in_another_order_is_refused(tmp_path: Path) -> None:
    lines = GAMED.read_text(encoding="utf-8").splitlines()
    shuffled = tmp_path / "df_gamed.csv"
    shuffled.write_text("\n".join([lines[0], lines[2], lines[1], *lines[3:]]) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="another instruction's difficulty"):
        score("pairwise", DATA / WEIGHTED[0], options={"length_control": shuffled, "resamples": 0})


def test_folder_of_several_annotators_needs_one_named(tmp_path: Path) -> None:
    folder = tmp_path / "results"
    shutil.copytree(RESULTS, folder)
    other = folder / "alpaca-7b" / "alpaca_eval_gpt4"
    other.mkdir(parents=True)
    shutil.copy(AV1, other / "annotations.json")
    with pytest.raises(ConfigError, match="several annotators"):
        score("pairwise", folder, options={"resamples": 0})
    board = score("pairwise", folder, options={"resamples": 0, "annotator": "alpaca_eval_gpt4"}).summary
    assert [row["model"] for row in board["leaderboard"]] == ["alpaca-7b"]
    assert "length_controlled_winrate" not in board["leaderboard"][0]
