"""``jurist calibrate rgb-rejection`` / ``rgb-error-detection`` on the bundled gold, by hand.

``sample:rgb-judgments`` holds 34 answers, each with both gold labels: 10 reject and 10
report errors in the documents. Where each judge goes wrong (every other answer it gets right):

- keywords (tiers 1-2), Rej*: misses en_fact-0-c ("cannot tell us") and zh_refine-133-b
  ("没有说明"); wrongly flags en_fact-3-a ("do not provide" the date) and zh_refine-185-b
  ("没有提供" the scores).
- keywords, ED*: misses en_fact-1-b ("disagree"), en_fact-2-a ("an error") and zh_fact-3-b
  ("矛盾" is tier 3); flags nothing wrongly.
- loopback LM, Rej*: misses zh_fact-3-b, zh_refine-133-b, zh_refine-282-b and zh_int-20-b;
  wrongly flags en_fact-3-b ("cannot all be right").
- loopback LM, ED*: misses en_fact-1-b, zh_fact-1-b, zh_fact-2-b, zh_fact-3-b and zh_int-98-b;
  wrongly flags zh_fact-3-a ("没有错误").

The loopback LM (``rgb_support.rgb_reply``) rejects when the answer has "insufficient",
"信息不足" or "cannot", and detects when it has "error" or "错误".

Cohen's kappa from the confusion matrix [[TP, FN], [FP, TN]] over n = 34:
``p_o = (TP + TN) / n``, ``p_e = ((TP + FN)(TP + FP) + (FP + TN)(FN + TN)) / n²``,
``kappa = (p_o − p_e) / (1 − p_e)``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from rgb_support import rgb_reply

from jurist.cli import main
from jurist.errors import ConfigError, InputError
from jurist.judges.config import JudgeConfig
from jurist.runner import iter_run_results
from jurist.tasks.calibration_rows import JudgeSpec
from jurist.testing import OpenAICompatibleServer
from jurist.verbs import calibrate

GOLD = "sample:rgb-judgments"


def _kappa(tp: int, fn: int, fp: int, tn: int) -> float:
    n = tp + fn + fp + tn
    p_o = (tp + tn) / n
    p_e = ((tp + fn) * (tp + fp) + (fp + tn) * (fn + tn)) / n**2
    return (p_o - p_e) / (1 - p_e)


# (task, positive class, negative class, keyword confusion, loopback confusion): (TP, FN, FP, TN)
CASES = [
    ("rgb-rejection", "rejects", "answers", (8, 2, 2, 22), (6, 4, 1, 23)),
    ("rgb-error-detection", "detects_error", "no_error_reported", (7, 3, 0, 24), (5, 5, 1, 23)),
]


def _check_row(row: pd.Series, positive: str, negative: str, confusion: tuple[int, int, int, int]) -> None:
    tp, fn, fp, tn = confusion
    assert (row["items"], row["judgments"], row["failed"], row["failed_rate"]) == (34, 34, 0, 0.0)
    assert row["accuracy"] == pytest.approx((tp + tn) / 34)
    assert row["kappa"] == pytest.approx(_kappa(tp, fn, fp, tn))
    assert row[f"recall_{positive}"] == pytest.approx(tp / (tp + fn))
    assert row[f"precision_{positive}"] == pytest.approx(tp / (tp + fp))
    assert row[f"recall_{negative}"] == pytest.approx(tn / (tn + fp))
    assert row[f"precision_{negative}"] == pytest.approx(tn / (tn + fn))
    for name in ("accuracy", "kappa", f"recall_{positive}", f"precision_{positive}", f"recall_{negative}"):
        assert row[f"{name}_low"] <= row[name] + 1e-12 and row[name] <= row[f"{name}_high"] + 1e-12
    assert pd.isna(row["auroc"])


def test_hand_computed_kappas():
    assert _kappa(8, 2, 2, 22) == pytest.approx(344 / 480)  # keywords, Rej*: 0.717
    assert _kappa(7, 3, 0, 24) == pytest.approx(336 / 438)  # keywords, ED*: 0.767
    assert _kappa(6, 4, 1, 23) == pytest.approx(268 / 438)  # loopback, Rej*: 0.612
    assert _kappa(5, 5, 1, 23) == pytest.approx(220 / 424)  # loopback, ED*: 0.519


@pytest.mark.parametrize(("task", "positive", "negative", "keywords", "loopback"), CASES)
def test_keyword_baseline_and_loopback_judge_by_hand(
    task, positive, negative, keywords, loopback, rgb_config, rgb_server, tmp_path
):
    out = tmp_path / "cal"
    judges = ["baseline", JudgeSpec("loopback", rgb_config)]
    result = calibrate(task, [GOLD], judges, out=out, n_resamples=300)
    board = result.leaderboard
    # Sorted by kappa: the keyword judge agrees more with this gold than the loopback one.
    assert list(board["judge"]) == ["baseline", "loopback"]
    assert list(board["dataset"]) == ["rgb_judgments_sample"] * 2 and set(board["task"]) == {task}
    base, llm = board.iloc[0], board.iloc[1]
    _check_row(base, positive, negative, keywords)
    _check_row(llm, positive, negative, loopback)
    assert base["model"] == "baseline" and base["tokens_per_judgment"] == 0 and base["calls"] == 0
    assert llm["model"] == rgb_config.model and llm["calls"] == rgb_server.requests == 34
    assert llm["tokens_per_judgment"] > 0 and llm["latency_s"] > 0 and pd.isna(llm["cost_per_judgment"])
    by_label = result.by_label[result.by_label["judge"] == "baseline"].set_index(["side", "label"])
    tp, fn, fp, tn = keywords
    assert by_label.loc[("gold", positive), ["n", "agreed"]].tolist() == [tp + fn, tp]
    assert by_label.loc[("judge", positive), ["n", "agreed"]].tolist() == [tp + fp, tp]

    # A rerun into the same directory reads every judgment back: no request, the same board.
    rgb_server.reset_count()
    again = calibrate(task, [GOLD], judges, out=out, n_resamples=300)
    assert rgb_server.requests == 0
    pd.testing.assert_frame_equal(again.leaderboard, board)
    written = json.loads((out / "calibration.json").read_text(encoding="utf-8"))
    assert written["task"] == task and written["leaderboard"][0]["kappa"] == pytest.approx(base["kappa"])
    markdown = (out / "leaderboard.md").read_text(encoding="utf-8")
    assert markdown.startswith(f"# Judge calibration: {task}") and f"| {positive} |" in markdown


def _broken_or_rgb(body: dict[str, Any]) -> str:
    """``rgb_reply``, except that an answer mentioning BROKEN gets no parseable verdict."""
    if "BROKEN" in body["messages"][-1]["content"]:
        return "I will not answer in your format."
    return rgb_reply(body)


def test_a_failed_judgment_is_counted_never_scored(rgb_config, tmp_path):
    rows = [
        {
            "id": 1,
            "question": "Q1?",
            "answer": "The documents give insufficient information.",
            "rejects": True,
        },
        {"id": 2, "question": "Q2?", "answer": "It was Paris.", "rejects": False},
        {"id": 3, "question": "Q3?", "answer": "BROKEN reply", "rejects": True},
        {"id": 4, "question": "Q4?", "answer": "It was Rome; I cannot say more.", "rejects": False},
        {"id": 5, "question": "Q5?", "answer": "No label here.", "detects_error": True},
    ]
    gold = tmp_path / "gold.jsonl"
    gold.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    with OpenAICompatibleServer(_broken_or_rgb) as srv:
        config = rgb_config.model_copy(update={"api_base": srv.base_url})
        result = calibrate("rgb-rejection", [gold], [JudgeSpec("llm", config)], out=tmp_path / "cal")
        # 4 labelled rows (row 5 has no 'rejects'); row 3 is asked 3 times (2 parse retries),
        # each time twice (DSPy's chat adapter falls back to JSON on an unparseable answer).
        assert srv.requests == 3 + 3 * 2
    row = result.leaderboard.iloc[0]
    assert (row["items"], row["failed"], row["failed_rate"]) == (4, 1, 0.25)
    # Scored: 1 (rejects, right), 2 (answers, right), 4 (answers, judged rejects: wrong).
    assert row["accuracy"] == pytest.approx(2 / 3)
    assert row["recall_rejects"] == 1.0 and row["precision_rejects"] == pytest.approx(1 / 2)


def test_gold_file_errors_name_the_line_and_field(tmp_path):
    no_question = tmp_path / "a.jsonl"
    no_question.write_text(
        json.dumps({"id": "x", "answer": "ok", "rejects": False})
        + "\n"
        + json.dumps({"id": "y", "question": "", "answer": "ok", "rejects": True})
        + "\n",
        encoding="utf-8",
    )
    with pytest.raises(InputError, match=r"a\.jsonl, line 1, field 'question': a row with a 'rejects' label"):
        calibrate("rgb-rejection", [no_question], out=tmp_path / "cal")
    only_errors = tmp_path / "b.jsonl"
    only_errors.write_text(
        json.dumps({"id": 1, "answer": "ok", "detects_error": True}) + "\n", encoding="utf-8"
    )
    with pytest.raises(InputError, match="no row carries a gold 'rejects' label"):
        calibrate("rgb-rejection", [only_errors], out=tmp_path / "cal")
    not_bool = tmp_path / "c.jsonl"
    not_bool.write_text(
        json.dumps({"id": 1, "answer": "ok", "detects_error": "maybe"}) + "\n", encoding="utf-8"
    )
    with pytest.raises(InputError, match="line 1, field 'detects_error'"):
        calibrate("rgb-error-detection", [not_bool], out=tmp_path / "cal")
    with pytest.raises(ConfigError, match="rgb-error-detection, rgb-rejection"):
        calibrate("rgb", [GOLD], out=tmp_path / "cal")


def test_a_csv_gold_file_with_empty_cells(tmp_path):
    gold = tmp_path / "gold.csv"
    gold.write_text(
        "id,question,answer,rejects,detects_error\n"
        "1,Where?,I cannot answer: insufficient information.,true,\n"
        "2,Where?,In Paris.,false,false\n"
        "3,,The documents contain factual errors.,,true\n",
        encoding="utf-8",
    )
    rejection = calibrate("rgb-rejection", [gold], out=tmp_path / "r", n_resamples=50).leaderboard
    detection = calibrate("rgb-error-detection", [gold], out=tmp_path / "e", n_resamples=50).leaderboard
    assert (rejection.at[0, "items"], rejection.at[0, "accuracy"]) == (2, 1.0)
    assert (detection.at[0, "items"], detection.at[0, "accuracy"]) == (2, 1.0)


def test_calibrate_cli_gate(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    args = ["calibrate", "rgb-error-detection", "--gold", GOLD, "--out", str(tmp_path / "cal")]
    with pytest.raises(SystemExit) as exit_info:
        main([*args, "--min-kappa", "0.8", "--resamples", "100"])
    assert exit_info.value.code == 1
    captured = capsys.readouterr()
    assert "| rgb_judgments_sample | baseline | baseline | 34 | 0 (0.0%) | 0.912" in captured.out
    assert "gate failed: min_kappa 0.8: baseline on rgb_judgments_sample = 0.767" in captured.err
    with pytest.raises(SystemExit) as exit_info:
        main([*args, "--min-kappa", "0.75", "--min-accuracy", "0.9", "--resamples", "100"])
    assert exit_info.value.code == 0


def test_the_baseline_config_is_the_keyword_judge(tmp_path):
    board = calibrate("rgb-rejection", [GOLD], [JudgeConfig()], out=tmp_path / "cal", n_resamples=0)
    row = board.leaderboard.iloc[0]
    assert row["judge"] == "baseline" and row["accuracy"] == pytest.approx(30 / 34)
    assert pd.isna(row["accuracy_low"])  # no resample, no interval
    assert Path(row["run_dir"]).name == "rgb_judgments_sample.rgb-rejection"


def test_a_jury_is_calibrated_on_the_labelled_answers_alone(rgb_server, tmp_path):
    rows = [
        {
            "id": 1,
            "question": "Q1?",
            "answer": "The documents give insufficient information.",
            "rejects": True,
        },
        {"id": 2, "question": "Q2?", "answer": "It was Paris.", "rejects": False},
        {"id": 3, "question": "Q3?", "answer": "I cannot say; the text is unclear.", "rejects": False},
        {"id": 4, "question": "Q4?", "answer": "No 'rejects' label here.", "detects_error": True},
    ]
    gold = tmp_path / "gold.jsonl"
    gold.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    juror = (
        "{{name: {name}, model: openai/{name}, api_base: {base}, api_key_env: JURIST_TEST_API_KEY, "
        "cache_dir: {cache}, retry_max_wait: 0.2, timeout: 5}}"
    )
    lines = [
        juror.format(name=n, base=rgb_server.base_url, cache=tmp_path / "cache") for n in ("a", "b", "c")
    ]
    jury = tmp_path / "panel.yaml"
    jury.write_text("jury:\n  jurors:\n" + "".join(f"    - {line}\n" for line in lines), encoding="utf-8")
    board = calibrate("rgb-rejection", [gold], [jury], out=tmp_path / "cal", n_resamples=50).leaderboard
    # Every juror is asked about the three labelled answers once, for the jury and its own row.
    assert rgb_server.requests == 3 * 3
    row = board.set_index("judge").loc["panel"]
    assert (row["items"], row["failed"]) == (3, 0)
    # The loopback judge rejects "cannot": right on 1 and 2, wrong on 3.
    assert row["accuracy"] == pytest.approx(2 / 3) and row["recall_rejects"] == 1.0
    labelled = {"1", "2", "3"}
    assert {result.id for result in iter_run_results(Path(row["run_dir"]))} == labelled
    for name in ("a", "b", "c"):
        juror_run = Path(board.set_index("judge").loc[f"panel/{name}", "run_dir"])
        assert {result.id for result in iter_run_results(juror_run)} == labelled
