"""Preference data in the published shapes, read directly by `judge pairwise`, `judge pairwise-gold`
and `calibrate pairwise`, and the human–human agreement next to the judge's.

The reference values of Fleiss' kappa and Krippendorff's alpha are computed here by the
textbook formulas written out independently (neither `krippendorff` nor `statsmodels` is
installed in the test environment): Fleiss from the item × category count table, alpha from
the pairable-values form ``1 − (n − 1) · Σ_i Σ_{c≠k} n_ic n_ik / (m_i − 1) / Σ_{c≠k} n_c n_k``.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

import jurist
from jurist.datasets.pairwise.tables import load_pairs
from jurist.errors import ConfigError, InputError
from jurist.metrics.annotators import (
    annotator_agreement,
    fleiss_kappa,
    krippendorff_alpha_nominal,
    majority_label,
    pairwise_agreement,
)
from jurist.tasks.pairwise.report import pairs_agreement_markdown
from support import run_cli

DATA = Path(__file__).parents[1] / "data" / "preference-shapes"
LLMBAR = Path(__file__).parents[1] / "data" / "llmbar" / "natural_sample.json"
MAPPING = ["question=prompt_text", "response_1=left", "response_2=right", "label=pref", "id=uid"]

SHAPES = {
    "llmbar": (LLMBAR, None),
    "llmbar-mt-bench": (DATA / "llmbar_mtbench.json", ["1", "2", "1", "1"]),
    "alpacaeval": (DATA / "alpacaeval_annotations.json", ["1", "2", "tie", "1", None]),
    "mt-bench-human": (DATA / "mtbench_human.jsonl", ["1", "1", "tie", "tie", "2"]),
    "arena": (DATA / "arena.csv", ["1", "2", "tie"]),
    "alpaca-pairs": (DATA / "alpaca_pairs_annotators.json", ["1", "tie", "2", "tie", "1"]),
}


def _labels(frame: pd.DataFrame) -> list[str | None]:
    return [label if isinstance(label, str) else None for label in frame["label"]]


@pytest.mark.parametrize("name", list(SHAPES))
def test_each_shape_is_recognised_with_its_label_convention(name: str) -> None:
    path, labels = SHAPES[name]
    pairs = load_pairs(path)
    assert pairs.attrs["shape"] == ("llmbar" if name.startswith("llmbar") else name)
    if labels is not None:
        assert _labels(pairs) == labels


def test_instruction_input_and_empty_responses() -> None:
    pairs = load_pairs(DATA / "alpaca_pairs_annotators.json")
    # Alpaca's template: the instruction, then its input
    assert pairs.at[0, "question"] == (
        "### Instruction:\nCorrect the grammar of the sentence.\n\n### Input:\nHe go to school every days."
    )
    assert pairs.at[4, "question"] == "Summarize in one sentence what photosynthesis is."  # empty input
    assert pairs.at[2, "response_1"] == ""  # an empty response is a legal response
    alpaca = load_pairs(DATA / "alpacaeval_annotations.json")
    assert alpaca.at[3, "response_2"] == ""


def test_conversations_are_rendered_turn_by_turn() -> None:
    pairs = load_pairs(DATA / "mtbench_human.jsonl")
    assert pairs.at[0, "id"] == "81;gpt-4;alpaca-13b;turn1;author_2"
    assert pairs.at[0, "question"] == "Compose a short travel blog post about a recent trip to Hawaii."
    assert pairs.at[2, "response_1"] == (
        "Turn 1:\nAloha! I recently visited Hawaii and loved the beaches.\n\n"
        "Turn 2:\nAloha! A trip to Hawaii: amazing beaches."
    )
    arena = load_pairs(DATA / "arena.csv")
    assert arena.at[1, "question"].startswith("Turn 1:\nWhat is the difference")
    assert arena.at[0, "response_2"] == "As an AI, I don't have personal beliefs."


def test_a_column_mapping_and_the_message_listing_the_shapes(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="match no preference-data shape") as caught:
        load_pairs(DATA / "custom_columns.csv")
    assert caught.value.line == 1 and "alpacaeval" in str(caught.value) and "--map" in str(caught.value)
    pairs = load_pairs(DATA / "custom_columns.csv", mapping=MAPPING)
    assert list(pairs["id"]) == ["a1", "a2", "a3"] and _labels(pairs) == ["1", "2", "tie"]
    assert load_pairs(DATA / "custom_columns.csv", mapping=dict(m.split("=") for m in MAPPING)).equals(pairs)
    with pytest.raises(InputError, match="no column 'nope'") as caught:
        load_pairs(DATA / "custom_columns.csv", mapping=["label=nope"])
    assert (caught.value.line, caught.value.field) == (1, "nope")
    with pytest.raises(ConfigError, match="target=column"):
        load_pairs(DATA / "custom_columns.csv", mapping=["label"])


def test_bad_cells_name_line_and_column(tmp_path: Path) -> None:
    arena = tmp_path / "arena.csv"
    arena.write_text(
        "prompt,response_a,response_b,winner_model_a,winner_model_b,winner_tie\n"
        '"[""q""]","[""a""]","[""b""]",1,0,0\n'
        '"[""q""]","[""a""]","[""b""]",1,1,0\n',
        encoding="utf-8",
    )
    with pytest.raises(InputError, match="more than one") as caught:
        load_pairs(arena)
    assert caught.value.line == 3
    alpaca = tmp_path / "a.jsonl"
    alpaca.write_text(
        json.dumps({"instruction": "i", "output_1": "a", "output_2": "b", "preference": 3}) + "\n",
        encoding="utf-8",
    )
    with pytest.raises(InputError, match="1.5") as caught:
        load_pairs(alpaca)
    assert (caught.value.line, caught.value.field) == (1, "preference")


def test_majority_gold_and_split_votes() -> None:
    tie = load_pairs(DATA / "alpaca_pairs_annotators.json")
    assert tie.at[3, "annotations"] == ["1", "2", "tie"]  # a three-way split
    assert tie.at[3, "label"] == "tie" and tie.at[1, "label"] == "tie"  # split → tie; 0 0 2 → tie by majority
    excluded = load_pairs(DATA / "alpaca_pairs_annotators.json", no_majority="exclude")
    assert _labels(excluded) == ["1", "tie", "2", None, "1"]
    votes = pd.DataFrame(
        {"instruction": ["i"], "response1": ["a"], "response2": ["b"], "annotators": ["[1, 2]"]}
    )
    assert load_pairs(votes).at[0, "annotations"] == ["1", "2"]
    assert majority_label(["1", "2", "2"]) == "2"


def _fleiss_reference(ratings: list[list[str]]) -> float:
    categories = sorted({v for item in ratings for v in item})
    table = [[item.count(c) for c in categories] for item in ratings]
    n = len(ratings[0])
    p_i = [(sum(x * x for x in row) - n) / (n * (n - 1)) for row in table]
    p_j = [sum(row[j] for row in table) / (len(table) * n) for j in range(len(categories))]
    p_bar, p_e = sum(p_i) / len(p_i), sum(p * p for p in p_j)
    return (p_bar - p_e) / (1 - p_e)


def _alpha_reference(ratings: list[list[str | None]]) -> float:
    units = [[v for v in item if v is not None] for item in ratings]
    units = [u for u in units if len(u) > 1]
    totals: Counter[str] = Counter(v for u in units for v in u)
    n = sum(totals.values())
    disagree_within = sum(
        sum(Counter(u)[c] * Counter(u)[k] for c in set(u) for k in set(u) if c != k) / (len(u) - 1)
        for u in units
    )
    disagree_expected = sum(totals[c] * totals[k] for c in totals for k in totals if c != k)
    return 1 - (n - 1) * disagree_within / disagree_expected


def test_human_agreement_against_reference_formulas() -> None:
    pairs = load_pairs(DATA / "alpaca_pairs_annotators.json")
    ratings = list(pairs["annotations"])
    assert fleiss_kappa(ratings) == pytest.approx(_fleiss_reference(ratings))
    assert krippendorff_alpha_nominal(ratings) == pytest.approx(_alpha_reference(ratings))
    # 1+1/3+1+0+1/3 agreeing pairs per item over 5 items (three votes each)
    assert pairwise_agreement(ratings) == pytest.approx((1 + 1 / 3 + 1 + 0 + 1 / 3) / 5)
    missing = [["1", None, "2"], ["2", "2", None], ["1", "1", "1"], [None, None, "1"]]
    assert krippendorff_alpha_nominal(missing) == pytest.approx(_alpha_reference(missing))
    row = annotator_agreement(ratings, ["1", "2", "2", "tie", "1"])
    two = [[v for v in item if v in ("1", "2")] for item in ratings]
    assert row["items_2"] == 4  # item 1 keeps one decisive vote
    assert row["pairwise_agreement_2"] == pytest.approx(pairwise_agreement(two))
    assert row["judge_annotator_agreement_3"] == pytest.approx((3 + 1 + 3 + 1 + 2) / 15)


def _baseline(path: Path, out: Path, **options: object) -> jurist.JudgeRun:
    """``path`` judged with the offline baseline into ``out`` (bootstrap off)."""
    return jurist.judge("pairwise-gold", path, out=out, options={"resamples": 0, **options}, progress=False)


def test_python_api_reports_human_and_judge_agreement(tmp_path: Path) -> None:
    result = _baseline(DATA / "alpaca_pairs_annotators.json", tmp_path / "a").scores.extra["agreement"]
    assert result.human is not None
    human = result.human.iloc[0]
    ratings = list(load_pairs(DATA / "alpaca_pairs_annotators.json")["annotations"])
    assert human["fleiss_kappa_3"] == pytest.approx(fleiss_kappa(ratings))
    assert {"accuracy", "accuracy_2", "decisive"} <= set(result.agreement.columns)
    assert "Human–human agreement" in pairs_agreement_markdown(result)
    plain = _baseline(LLMBAR, tmp_path / "b").scores.extra["agreement"]
    assert plain.human is None


@pytest.mark.parametrize("name", list(SHAPES))
def test_cli_judge_pairwise_gold_reads_each_shape(name: str, tmp_path: Path) -> None:
    path, _labels_ = SHAPES[name]
    assert run_cli(["judge", "pairwise-gold", str(path), "--resamples", "0", "--out", str(tmp_path)]) == 0
    agreement = pd.read_csv(tmp_path / "agreement.csv")
    assert agreement.at[0, "pairs"] == len(load_pairs(path).dropna(subset=["label"]))
    assert (tmp_path / "human_agreement.csv").exists() == (name == "alpaca-pairs")


def test_cli_map_and_split_vote_options(tmp_path: Path) -> None:
    mapped = ["--map", ",".join(MAPPING[:2]), *[f"--map={m}" for m in MAPPING[2:]]]
    args = ["judge", "pairwise-gold", str(DATA / "custom_columns.csv"), "--resamples", "0", "--no-progress"]
    assert run_cli([*args, *mapped, "--out", str(tmp_path / "a")]) == 0
    assert pd.read_csv(tmp_path / "a" / "agreement.csv").at[0, "pairs"] == 3
    assert run_cli([*args, "--out", str(tmp_path / "c")]) == 2  # no shape matches without the mapping
    split = ["judge", "pairwise-gold", str(DATA / "alpaca_pairs_annotators.json"), "--resamples", "0"]
    assert run_cli([*split, "--split-vote", "exclude", "--out", str(tmp_path / "b"), "--no-progress"]) == 0
    assert pd.read_csv(tmp_path / "b" / "agreement.csv").at[0, "pairs"] == 4
    # Scored again without the options: the run's recorded mapping and split-vote rule.
    assert run_cli(["score", "pairwise-gold", str(tmp_path / "b"), "--out", str(tmp_path / "b2")]) == 0
    assert pd.read_csv(tmp_path / "b2" / "agreement.csv").at[0, "pairs"] == 4


def test_cli_judge_and_calibrate_read_the_shapes(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert run_cli(
        ["judge", "pairwise", str(DATA / "mtbench_human.jsonl"), "--out", str(out), "--resamples", "0"]
    ) in (
        0,
        3,
    )
    judged = pd.read_csv(out / "judged_pairs.csv")
    assert len(judged) == 5
    rerun = tmp_path / "mapped"
    args = ["judge", "pairwise", str(DATA / "custom_columns.csv"), "--out", str(rerun), "--resamples", "0"]
    assert run_cli([*args, *[f"--map={m}" for m in MAPPING]]) in (0, 3)
    assert run_cli(["score", "pairwise", str(rerun), "--resamples", "0"]) == 0  # the mapping is recorded
    calibration = tmp_path / "cal"
    code = run_cli(
        [
            "calibrate",
            "pairwise",
            "--gold",
            str(DATA / "alpaca_pairs_annotators.json"),
            "--out",
            str(calibration),
            "--resamples",
            "0",
        ]
    )
    assert code in (0, 1)
    board = pd.read_csv(next(calibration.rglob("leaderboard.csv")))
    assert {"accuracy_2", "human_fleiss_kappa_3", "human_judge_annotator_agreement_2"} <= set(board.columns)
