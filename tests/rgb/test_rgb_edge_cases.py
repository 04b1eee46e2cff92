"""RGB prediction files as they come: the language from the data (never the file name),
repeated ids, rejections on counterfactual data (never a correction), and files judged by
RGB's ChatGPT-based scripts (``reject_evalue.py``, ``fact_evalue.py``).

Reference figures restate RGB's scoring loops over the parsed lines of a file
(``reference_fact_evalue``, ``reference_reject_evalue``), and are also read from the
``_chatgptresult.json`` files stored next to the judged fixtures.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from rgb_support import DATA_DIR, fact_rows, run_setting, write_rgb

from jurist.datasets.rgb.loader import (
    load_rgb,
    read_rgb_prediction_file,
    read_rgb_predictions,
    script_language,
)
from jurist.errors import InputError
from jurist.judges.config import JudgeConfig
from jurist.metrics.rgb import chatgpt_detects_error, chatgpt_rejects, counterfactual_score, fact_check
from jurist.tasks.rgb import RGBSetting
from jurist.tasks.rgb.predictions import score_rgb_predictions
from jurist.testing import OpenAICompatibleServer
from support import run_cli

JUDGED = DATA_DIR / "chatgpt-judged"
EN_FACT = (
    JUDGED / "result-en" / "prediction_en_fact_chatgpt_temp0.7_noise0.0_passage5_correct0.0_chatgpt.json"
)
ZH_FACT = (
    JUDGED / "result-zh" / "prediction_zh_fact_chatgpt_temp0.7_noise0.0_passage5_correct0.0_chatgpt.json"
)
ZH_REJECT = JUDGED / "result-zh" / "prediction_zh_chatgpt_temp0.7_noise1.0_passage5_correct0.0_chatgpt.json"
REJECT_AFTER_DETECTING = (
    "There are factual errors in the provided documents. I can not answer the question because of "
    "the insufficient information in documents."
)


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _write(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
    return path


def _unjudged(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The lines RGB's evalue.py wrote, before a ChatGPT script added its evaluation."""
    return [{key: value for key, value in line.items() if key != "evaluation"} for line in lines]


def reference_fact_evalue(lines: list[dict[str, Any]]) -> dict[str, Any]:
    """RGB's fact_evalue.py scoring loop, restated."""
    rejecttt = tt = correct_tt = 0
    for line in lines:
        if "has identified" in line["evaluation"] or "Yes" in line["evaluation"]:
            rejecttt += 1
            if 0 not in line["label"] and 1 in line["label"]:
                correct_tt += 1
        if 0 not in line["label"] and 1 in line["label"]:
            tt += 1
    return {
        "reject_rate": rejecttt / len(lines),
        "all_rate": tt / len(lines),
        "correct_rate": correct_tt / rejecttt if rejecttt > 0 else 0,
        "tt": tt,
        "rejecttt": rejecttt,
        "correct_tt": correct_tt,
        "nums": len(lines),
        "noise_rate": lines[0]["noise_rate"],
    }


def reference_reject_evalue(lines: list[dict[str, Any]]) -> dict[str, Any]:
    """RGB's reject_evalue.py scoring loop, restated."""
    rejecttt = tt = 0
    for line in lines:
        if "not addressed" in line["evaluation"]:
            rejecttt += 1
        if 0 not in line["label"] and 1 in line["label"]:
            tt += 1
    return {
        "reject_rate": rejecttt / len(lines),
        "all_rate": tt / len(lines),
        "tt": tt,
        "rejecttt": rejecttt,
        "nums": len(lines),
    }


def _score_json(args: list[str], capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    assert run_cli(["score", "rgb", *args, "--json"]) == 0
    result: list[dict[str, Any]] = json.loads(capsys.readouterr().out)
    return result


# ---------------------------------------------------------------------------------------------
# Language from the data


def test_script_language_on_rgbs_own_questions():
    for name, kind, expected in (("en_fact.json", "fact", "en"), ("zh_fact.json", "fact", "zh")):
        dataset = load_rgb(DATA_DIR / name, kind=kind)
        assert script_language([row.query for row in dataset]) == expected
    refine = load_rgb(DATA_DIR / "zh_refine.json")
    assert script_language([row.query for row in refine]) == "zh"  # "KF-21战斗机研发国家" too
    assert script_language(["Who wrote 三体?", "Who acquired Instagram?", "Super Bowl 2021 location"]) == "en"


@pytest.fixture
def misnamed(tmp_path: Path) -> dict[str, Path]:
    """A Chinese file named like an English one, and an English file with "zh" in its name.

    The Chinese prediction has a space inside the answer (江苏 苏宁): RGB removes spaces from
    Chinese predictions, so only a Chinese check finds the answer. The English prediction
    needs its spaces: a Chinese check would remove them and miss "Tampa, Florida".
    """
    chinese = _unjudged(_lines(ZH_FACT))
    chinese[3]["prediction"] = "文档信息有误，2020赛季中超冠军是江苏 苏宁。"
    english = _unjudged(_lines(EN_FACT))
    english[0]["prediction"] = "It was held in Tampa, Florida."
    return {
        "zh": _write(tmp_path / "prediction_en_model_temp0.7_noise0.0_passage5_correct0.0.json", chinese),
        "en": _write(tmp_path / "prediction_zh_model_temp0.7_noise0.0_passage5_correct0.0.json", english),
    }


def test_recheck_takes_the_language_from_the_questions_not_the_file_name(misnamed, capsys):
    chinese, english = score_rgb_predictions([misnamed["zh"], misnamed["en"]], recheck="original")
    assert (chinese["language"], chinese["language_source"]) == ("zh", "script")
    assert (english["language"], english["language_source"]) == ("en", "script")
    assert chinese["labels"] == "recomputed (original check, zh)"
    # 江苏 苏宁 is found once the spaces are gone; Tampa, Florida keeps its spaces
    assert (chinese["tt"], english["tt"]) == (2, 2)
    printed = _score_json([str(misnamed["zh"]), str(misnamed["en"]), "--recheck", "original"], capsys)
    assert [(entry["language"], entry["tt"]) for entry in printed] == [("zh", 2), ("en", 2)]


def test_an_explicit_language_still_overrides(misnamed, capsys):
    (chinese,) = score_rgb_predictions([misnamed["zh"]], recheck="original", language="en")
    assert (chinese["language"], chinese["language_source"], chinese["tt"]) == ("en", "option", 1)
    (english,) = _score_json([str(misnamed["en"]), "--recheck", "original", "--language", "zh"], capsys)
    assert (english["language"], english["language_source"], english["tt"]) == ("zh", "option", 1)


def test_a_language_field_on_the_lines_is_used(tmp_path, capsys):
    lines = _unjudged(_lines(EN_FACT))
    for line in lines:
        line["language"] = "zh"
    path = _write(tmp_path / "predictions.json", lines)
    (scores,) = score_rgb_predictions([path], recheck="original")
    assert (scores["language"], scores["language_source"]) == ("zh", "field")
    lines[2]["language"] = "en"
    _write(path, lines)
    with pytest.raises(InputError, match="different languages") as caught:
        score_rgb_predictions([path], recheck="original")
    assert (caught.value.line, caught.value.field, caught.value.path) == (3, "language", str(path))
    lines[2]["language"] = "fr"
    _write(path, lines)
    assert run_cli(["score", "rgb", str(path)]) == 2
    assert "line 3, field 'language'" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------
# Repeated ids


@pytest.fixture
def repeated(tmp_path: Path) -> Path:
    lines = _unjudged(_lines(EN_FACT))
    again = dict(lines[1], prediction="Norway won the most medals.", label=[1], factlabel=0)
    return _write(
        tmp_path / "prediction_en_fact_m_temp0.7_noise0.0_passage5_correct0.0.json", [*lines, again]
    )


def test_a_repeated_id_is_an_error_naming_both_lines(repeated, capsys):
    with pytest.raises(InputError, match="id 1 already used on line 2") as caught:
        score_rgb_predictions([repeated])
    assert (caught.value.line, caught.value.field) == (5, "id")
    assert run_cli(["score", "rgb", str(repeated)]) == 2
    error = capsys.readouterr().err
    assert "line 5, field 'id'" in error and "already used on line 2" in error
    with pytest.raises(InputError, match="already used on line 2"):
        read_rgb_predictions(repeated)


def test_duplicates_first_counts_the_first_line_once_with_a_warning(repeated, capsys, caplog):
    lines = _lines(repeated)[:4]  # what counts: the first line of each id
    (scores,) = score_rgb_predictions([repeated], duplicates="first")
    assert scores["nums"] == 4 and scores["duplicates"] == 1
    assert (scores["tt"], scores["fact_tt"]) == (
        sum(0 not in line["label"] and 1 in line["label"] for line in lines),
        sum(line["factlabel"] for line in lines),
    )
    (warning,) = scores["warnings"]
    assert "id 1 on line 5 repeats line 2" in warning and "counted once" in warning
    assert "a different prediction" in warning
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        (printed,) = _score_json([str(repeated), "--duplicates", "first"], capsys)
    assert printed["nums"] == 4 and printed["warnings"] == [warning]
    assert any("repeats line 2" in record.getMessage() for record in caplog.records)
    assert run_cli(["score", "rgb", str(repeated), "--duplicates", "first"]) == 0
    assert "## Warnings" in capsys.readouterr().out
    prediction_file = read_rgb_prediction_file(repeated, duplicates="first")
    assert [entry.line for entry in prediction_file.duplicates] == [5]


# ---------------------------------------------------------------------------------------------
# A rejection is never a correction


def test_a_rejection_on_counterfactual_data_is_not_a_correction():
    result = fact_check([[1], [-1], [0], [-1]], [1, 1, 1, 0])
    assert (result.fact_tt, result.correct_tt, result.detected_rejections) == (3, 1, 1)
    assert result.fact_check_rate == 0.75 and result.correct_rate == pytest.approx(1 / 3)
    only_rejections = fact_check([[-1], [-1]], [1, 1])
    assert (only_rejections.fact_check_rate, only_rejections.correct_rate) == (1.0, 0.0)
    score = counterfactual_score(REJECT_AFTER_DETECTING, "Paris")
    assert score.score == 0.0 and "rejects instead of giving the correct answer" in score.feedback


def test_fact_scores_of_a_file_where_the_model_rejects(capsys):
    lines = _lines(EN_FACT)
    assert lines[1]["label"] == [-1] and lines[1]["factlabel"] == 1  # detects, then rejects
    (scores,) = _score_json([str(EN_FACT)], capsys)
    # ED over RGB's keyword: ids 0 and 1 say "factual errors"; only id 0 gives the answer
    assert (scores["fact_tt"], scores["correct_tt"], scores["detected_rejections"]) == (2, 1, 1)
    assert (scores["fact_check_rate"], scores["correct_rate"]) == (0.5, 0.5)
    (api,) = score_rgb_predictions([EN_FACT])
    assert {key: api[key] for key in scores if key != "file"} == {
        k: v for k, v in scores.items() if k != "file"
    }


def test_the_suite_counts_no_correction_when_the_model_rejects_counterfactual_data(tmp_path):
    path = write_rgb(tmp_path / "data" / "en_fact.json", fact_rows(3))
    setting = RGBSetting(
        dataset="en_fact",
        language="en",
        kind="fact",
        path=path,
        noise_rate=0.0,
        judge="error_detection",
        set="counterfactual",
    )
    with OpenAICompatibleServer(lambda body: REJECT_AFTER_DETECTING) as server:
        config = JudgeConfig(
            model="openai/loopback-rgb",
            api_base=server.base_url,
            api_key_env="JURIST_TEST_API_KEY",
            cache_dir=tmp_path / "cache",
            retry_max_wait=0.2,
        )
        run = run_setting(setting, tmp_path / "out", config)
    scores = run.scores
    assert all(record["label"] == [-1] for record in run.records)
    assert (scores["fact_tt"], scores["fact_check_rate"]) == (3, 1.0)
    assert (scores["correct_tt"], scores["correct_rate"], scores["detected_rejections"]) == (0, 0.0, 3)
    judge = scores["judge"]  # ED* by the keyword judge: detected, never corrected
    assert (judge["count"], judge["correct_tt"], judge["correct_rate"]) == (3, 0, 0.0)
    (rescored,) = score_rgb_predictions([run.predictions])
    assert (rescored["correct_tt"], rescored["detected_rejections"]) == (0, 3)


# ---------------------------------------------------------------------------------------------
# Files judged by RGB's ChatGPT scripts


def test_chatgpt_verdicts_are_rgbs_string_tests():
    assert chatgpt_rejects("No, the question is not addressed by the documents.")
    assert not chatgpt_rejects("Yes, the question is addressed by the documents.")
    assert chatgpt_detects_error("Yes, the model has identified the factual errors.")
    assert not chatgpt_detects_error("NO, the model fail to identify the factual errors.")


@pytest.mark.parametrize(
    ("path", "judgment", "reference"),
    [
        (EN_FACT, "error-detection", reference_fact_evalue),
        (ZH_FACT, "error-detection", reference_fact_evalue),
        (ZH_REJECT, "rejection", reference_reject_evalue),
    ],
)
def test_judged_files_give_the_figures_rgbs_scripts_write(path, judgment, reference):
    (scores,) = score_rgb_predictions([path])
    stored = json.loads(path.with_name(path.name.replace("_chatgpt.json", "_chatgptresult.json")).read_text())
    assert scores["judgment"] == judgment
    assert scores["chatgpt"] == reference(_lines(path)) == stored
    if judgment == "rejection":
        assert scores["rej_star"] == stored["reject_rate"] == 0.5
        assert "fact_check_rate" not in scores
        # RGB's Rej (evalue.py at noise rate 1) counts the keyword rejection and the answers
        assert (scores["tt"], scores["rejection_share"]) == (3, 0.25)
    else:
        assert (scores["ed_star"], scores["cr_star"]) == (0.75, pytest.approx(2 / 3))
        assert (scores["fact_check_rate"], scores["correct_rate"]) == (0.5, 0.5)


def test_score_rgb_reads_rgbs_result_directories(capsys):
    printed = _score_json([str(JUDGED)], capsys)  # the _chatgptresult.json files are skipped
    assert sorted(Path(entry["file"]).name for entry in printed) == sorted(
        path.name for path in (EN_FACT, ZH_FACT, ZH_REJECT)
    )
    by_name = {Path(entry["file"]).name: entry for entry in printed}
    assert by_name[ZH_REJECT.name]["chatgpt"] == reference_reject_evalue(_lines(ZH_REJECT))
    assert by_name[ZH_FACT.name]["language"] == "zh"
    assert run_cli(["score", "rgb", str(JUDGED)]) == 0
    report = capsys.readouterr().out
    assert "## Judged by ChatGPT" in report and "Rej* 0.5000" in report and "ED* 0.7500" in report


def test_the_judgment_is_given_when_chatgpts_wording_does_not_tell(tmp_path, capsys):
    lines = _lines(EN_FACT)
    for line in lines:
        line["evaluation"] = "Yes." if line["evaluation"].startswith("Yes") else "No."
    path = _write(tmp_path / "judged.json", lines)
    with pytest.raises(InputError, match="give the judgment option") as caught:
        score_rgb_predictions([path])
    assert (caught.value.line, caught.value.field) == (1, "evaluation")
    assert run_cli(["score", "rgb", str(path)]) == 2
    assert "field 'evaluation'" in capsys.readouterr().err
    (scores,) = _score_json([str(path), "--judgment", "error-detection"], capsys)
    assert scores["chatgpt"] == reference_fact_evalue(lines)
    (as_rejection,) = score_rgb_predictions([path], judgment="rejection")
    assert as_rejection["chatgpt"] == reference_reject_evalue(lines)


def test_a_judged_file_needs_an_evaluation_on_every_line(tmp_path, capsys):
    lines = _lines(ZH_REJECT)
    del lines[2]["evaluation"]
    path = _write(tmp_path / "judged.json", lines)
    with pytest.raises(InputError, match="has no ChatGPT 'evaluation' while line 1 has one") as caught:
        score_rgb_predictions([path])
    assert (caught.value.line, caught.value.field) == (3, "evaluation")
    lines[2]["evaluation"] = {"text": "No"}
    _write(path, lines)
    assert run_cli(["score", "rgb", str(path)]) == 2
    assert "line 3, field 'evaluation'" in capsys.readouterr().err


def test_a_label_list_must_not_be_empty(tmp_path):
    lines = _unjudged(_lines(EN_FACT))
    lines[1]["label"] = []
    with pytest.raises(InputError) as caught:
        read_rgb_predictions(_write(tmp_path / "p.json", lines))
    assert (caught.value.line, caught.value.field) == (2, "label")
