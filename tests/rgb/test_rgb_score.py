"""``score rgb`` on RGB prediction files gives the numbers of RGB's own evaluation.

``reference_scores`` restates RGB's evaluation loop (``tt`` with the noise
rate 1 special case, then ``fact_tt``/``correct_tt`` for ``_fact`` files) over the parsed
lines of a file; jurist's scores must equal it key for key. The correction test is RGB's
definition of CR (``fact_evalue.py``: ``0 not in label and 1 in label``; a rejection is never a
correction); ``evalue_correct_tt`` restates ``evalue.py``'s looser ``0 not in label``, which
jurist's ``correct_tt + detected_rejections`` reproduces.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from rgb_support import DATA_DIR, run_suite

from jurist.cli import main
from jurist.errors import InputError
from jurist.tasks.rgb.predictions import score_rgb_predictions


def _results(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def reference_scores(path: Path, noise_rate: float) -> dict[str, Any]:
    results = _results(path)
    tt = 0
    for result in results:
        label = result["label"]
        if noise_rate == 1 and label[0] == -1:  # noqa: SIM114 - RGB's two branches, kept apart
            tt += 1
        elif 0 not in label and 1 in label:
            tt += 1
    scores = {"all_rate": tt / len(results), "noise_rate": noise_rate, "tt": tt, "nums": len(results)}
    if "_fact" in path.name:
        fact_tt = correct_tt = 0
        for result in results:
            if result["factlabel"] == 1:
                fact_tt += 1
                if 0 not in result["label"] and 1 in result["label"]:
                    correct_tt += 1
        scores["fact_check_rate"] = fact_tt / len(results)
        scores["correct_rate"] = correct_tt / fact_tt if fact_tt > 0 else 0
        scores["fact_tt"] = fact_tt
        scores["correct_tt"] = correct_tt
    return scores


def evalue_correct_tt(path: Path) -> int:
    """``correct_tt`` as RGB's keyword ``evalue.py`` counts it (``0 not in label`` only)."""
    return sum(1 for r in _results(path) if r["factlabel"] == 1 and 0 not in r["label"])


def _line(i: int, label: list[int], noise_rate: float, factlabel: int = 0, prediction: str = "p") -> dict:
    return {
        "id": i,
        "query": f"q{i}",
        "ans": ["a"],
        "label": label,
        "prediction": prediction,
        "docs": ["d"],
        "noise_rate": noise_rate,
        "factlabel": factlabel,
    }


def _write(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
    return path


HAND_BUILT = {
    "prediction_en_chatgpt_temp0.7_noise0.4_passage5_correct0.0.json": (
        0.4,
        [[1], [0], [1, 1], [1, 0], [-1], [0, 0], [1], [1, 1, 0]],
        [0] * 8,
    ),
    "prediction_zh_chatgpt_temp0.7_noise1.0_passage5_correct0.0.json": (
        1.0,
        [[-1], [-1], [0], [1], [-1], [0, 1]],
        [0] * 6,
    ),
    "prediction_en_fact_chatgpt_temp0.7_noise0.0_passage5_correct0.0.json": (
        0.0,
        [[1], [0], [-1], [1], [0], [1, 0], [1]],
        [1, 1, 1, 0, 0, 1, 1],
    ),
    "prediction_zh_fact_chatgpt_temp0.7_noise0.2_passage5_correct0.4.json": (0.2, [[0], [0]], [0, 0]),
    "prediction_en_int_chatgpt_temp0.7_noise0.2_passage5_correct0.0.json": (
        0.2,
        [[1, 1], [1, 0], [0, 1]],
        [0] * 3,
    ),
}


@pytest.fixture
def prediction_files(tmp_path) -> list[tuple[Path, float]]:
    files = []
    for name, (noise, labels, factlabels) in HAND_BUILT.items():
        lines = [
            _line(i, label, noise, fact)
            for i, (label, fact) in enumerate(zip(labels, factlabels, strict=True))
        ]
        files.append((_write(tmp_path / name, lines), noise))
    return files


def _rgb_keys(scores: dict[str, Any]) -> dict[str, Any]:
    keys = (
        "all_rate",
        "noise_rate",
        "tt",
        "nums",
        "fact_check_rate",
        "correct_rate",
        "fact_tt",
        "correct_tt",
    )
    return {key: scores[key] for key in keys if key in scores}


def test_scores_equal_rgbs_evaluation_on_hand_built_files(prediction_files):
    scores = score_rgb_predictions([path for path, _ in prediction_files])
    for (path, noise), result in zip(prediction_files, scores, strict=True):
        assert _rgb_keys(result) == reference_scores(path, noise), path.name
    by_name = {Path(result["file"]).name: result for result in scores}
    noise_1 = by_name["prediction_zh_chatgpt_temp0.7_noise1.0_passage5_correct0.0.json"]
    assert (noise_1["tt"], noise_1["nums"]) == (4, 6)  # three rejections and one answer
    fact_name = "prediction_en_fact_chatgpt_temp0.7_noise0.0_passage5_correct0.0.json"
    fact = by_name[fact_name]
    # five detections: [1], [0], [-1], [1, 0], [1]; the rejection [-1] is not a correction
    assert (fact["fact_tt"], fact["correct_tt"], fact["detected_rejections"]) == (5, 2, 1)
    assert fact["correct_rate"] == pytest.approx(2 / 5)
    fact_path = next(path for path, _ in prediction_files if path.name == fact_name)
    assert fact["correct_tt"] + fact["detected_rejections"] == evalue_correct_tt(fact_path) == 3
    no_detection = by_name["prediction_zh_fact_chatgpt_temp0.7_noise0.2_passage5_correct0.4.json"]
    assert no_detection["correct_rate"] == 0 and no_detection["fact_check_rate"] == 0.0
    assert (
        "fact_check_rate"
        not in by_name["prediction_en_int_chatgpt_temp0.7_noise0.2_passage5_correct0.0.json"]
    )


def test_scores_equal_rgbs_evaluation_on_files_the_suite_wrote(tmp_path):
    suite = run_suite(DATA_DIR, tmp_path / "out", chart=False)
    for run in suite.runs:
        (result,) = score_rgb_predictions([run.predictions])
        expected = reference_scores(run.predictions, run.setting.noise_rate)
        assert _rgb_keys(result) == expected
        assert _rgb_keys(result) == {key: run.scores[key] for key in expected}


def test_recheck_recomputes_labels_from_the_predictions(tmp_path):
    lines = [
        _line(0, [0], 0.0, prediction="The capital is Paris"),  # stored label is wrong
        _line(1, [1], 0.0, prediction="The capital is Rome"),
        _line(2, [0], 0.0, prediction="I cannot answer that"),
    ]
    for line in lines:
        line["ans"] = "Paris"
    path = _write(tmp_path / "prediction_en_m_temp0_noise0.0_passage5_correct0.0.json", lines)
    stored, original, improved = (
        score_rgb_predictions([path]),
        score_rgb_predictions([path], recheck="original"),
        score_rgb_predictions([path], recheck="improved"),
    )
    assert (stored[0]["tt"], stored[0]["labels"]) == (1, "stored")
    assert (original[0]["tt"], original[0]["changed_labels"]) == (1, 2)
    assert improved[0]["rejection_share"] == pytest.approx(1 / 3)


def test_mixed_noise_rates_and_malformed_lines_are_refused(tmp_path):
    path = _write(tmp_path / "p.json", [_line(0, [1], 0.2), _line(1, [1], 0.4)])
    with pytest.raises(InputError, match="one noise rate per file") as caught:
        score_rgb_predictions([path])
    assert caught.value.line == 2
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(_line(0, [1], 0.2)) + "\n" + json.dumps({"id": 1}) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        score_rgb_predictions([bad])
    assert (caught.value.line, caught.value.field) == (2, "query")


def test_score_command(prediction_files, capsys):
    paths = [str(path) for path, _ in prediction_files]
    with pytest.raises(SystemExit) as exited:
        main(["score", "rgb", *paths, "--json"])
    assert exited.value.code == 0
    printed = json.loads(capsys.readouterr().out)
    for (path, noise), result in zip(prediction_files, printed, strict=True):
        assert _rgb_keys(result) == reference_scores(path, noise)
    with pytest.raises(SystemExit):
        main(["score", "rgb", paths[0]])
    assert "| file | noise_rate | nums | tt | all_rate |" in capsys.readouterr().out
