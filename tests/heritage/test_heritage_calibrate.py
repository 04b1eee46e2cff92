"""``jurist calibrate heritage-*``: leaderboard rows on a four-text fixture, computed by hand.

Two judges: the offline baseline, and a loopback "LLM" whose answers are fixed per text
(a wrong type of the same category, an unparseable type, a mistyped span, a span with
wrong boundaries, a gold id ranked second, NIL for a linked mention, a wrong answer).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from jurist.cli import main
from jurist.judges.config import JudgeConfig
from jurist.report.calibrate import CalibrationThresholds, calibration_markdown
from jurist.tasks import get_task, task_names
from jurist.tasks.calibration_rows import JudgeSpec
from jurist.testing import OpenAICompatibleServer
from jurist.verbs import calibrate
from support import prompt_sections, write_jsonl

RIJKS = "Het Rijksmuseum in Amsterdam werd opgericht in 1800."
ARCHIEF = "Het Nationaal Archief in Den Haag bewaart de archieven van de VOC."
VLASWIEK = "De Oudheidkamer Vlaswiek in Makkum is een klein museum."
LONDON = "The London Library in London is a subscription library founded in 1841."


def _span(text: str, mention: str, label: str, after: int = 0) -> dict[str, Any]:
    start = text.index(mention, after)
    return {"text": mention, "type": label, "start": start, "end": start + len(mention)}


GOLD = [
    {
        "id": "rijks",
        "text": RIJKS,
        "ner_annotations": [
            _span(RIJKS, "Rijksmuseum", "GRP.HER.MUS"),
            _span(RIJKS, "Amsterdam", "TOP"),
            _span(RIJKS, "1800", "TMP"),
        ],
        "type_classification": {"primary_type": "M"},
        "entity_linking": {"Rijksmuseum": {"wikidata_id": "Q190804"}},
        "qa_pairs": [{"question": "Wanneer werd het Rijksmuseum opgericht?", "answer": "In 1800."}],
    },
    {
        "id": "archief",
        "text": ARCHIEF,
        "ner_annotations": [
            _span(ARCHIEF, "Nationaal Archief", "GRP.HER.ARC"),
            _span(ARCHIEF, "Den Haag", "TOP"),
        ],
        "type_classification": {"primary_type": "A"},
        "entity_linking": {"Nationaal Archief": {"wikidata_id": "Q1857081"}},
        "qa_pairs": [
            {"question": "Wat bewaart het Nationaal Archief?", "answer": "De archieven van de VOC."}
        ],
    },
    {
        "id": "vlaswiek",
        "text": VLASWIEK,
        "ner_annotations": [
            _span(VLASWIEK, "Oudheidkamer Vlaswiek", "GRP.HER.MUS"),
            _span(VLASWIEK, "Makkum", "TOP"),
        ],
        "type_classification": {"primary_type": "M"},
        "entity_linking": {"Oudheidkamer Vlaswiek": None},
    },
    {
        "id": "london",
        "text": LONDON,
        "ner_annotations": [
            _span(LONDON, "London Library", "GRP.HER.LIB"),
            _span(LONDON, "London", "TOP", after=10),
            _span(LONDON, "1841", "TMP"),
        ],
        "type_classification": {"primary_type": "L"},
        "entity_linking": {"London Library": {"wikidata_id": "Q269192"}},
    },
]

STATED = {  # the loopback extractor's entities per text
    RIJKS: [
        _span(RIJKS, "Rijksmuseum", "GRP.HER.MUS"),
        _span(RIJKS, "Amsterdam", "TMP"),  # wrong type
        _span(RIJKS, "1800", "TMP"),
        _span(RIJKS, "Het", "ART"),  # unknown type: flagged, not kept
    ],
    ARCHIEF: [
        _span(ARCHIEF, "Nationaal Archief", "GRP.HER.ARC"),
        _span(ARCHIEF, "Den Haag", "TOP"),
        _span(ARCHIEF, "VOC", "GRP.HER.SOC"),  # not in gold
    ],
    VLASWIEK: [],
    LONDON: [_span(LONDON, "The London Library", "GRP.HER.LIB"), _span(LONDON, "London", "TOP", after=10)],
}
TYPES = {RIJKS: "M", ARCHIEF: "L", VLASWIEK: "Z", LONDON: "L"}  # "Z" cannot be parsed
LINKS = {  # mention -> (ranked ids, NIL)
    "Rijksmuseum": (["Q2310268", "Q190804"], False),
    "Nationaal Archief": (["Q1857081"], False),
    "Oudheidkamer Vlaswiek": ([], True),
    "London Library": ([], True),
}
ANSWERS = {
    "Wanneer werd het Rijksmuseum opgericht?": "Het werd gesticht in 1801.",
    "Wat bewaart het Nationaal Archief?": "De archieven van de VOC.",
}


def _chat(fields: dict[str, Any]) -> str:
    return "\n\n".join(f"[[ ## {k} ## ]]\n{v}" for k, v in fields.items()) + "\n\n[[ ## completed ## ]]"


def fixed_answer(body: dict[str, Any]) -> str:
    sections = prompt_sections(body)
    if "entity_types" in sections:
        return _chat({"entities": json.dumps(STATED[sections["text"]])})
    if "candidates" in sections:
        ranked, nil = LINKS[sections["mention"]]
        return _chat({"ranked_ids": json.dumps(ranked), "is_nil": str(nil)})
    if "question" in sections:
        return _chat({"answer": ANSWERS[sections["question"]], "supporting_facts": "[]"})
    return _chat({"primary_type": TYPES[sections["text"]], "secondary_types": "[]", "rationale": "Fixed."})


@pytest.fixture(scope="module")
def fixed_server():
    with OpenAICompatibleServer(fixed_answer) as srv:
        yield srv


@pytest.fixture
def judges(fixed_server: OpenAICompatibleServer, tmp_path: Path) -> list[Any]:
    config = JudgeConfig(
        model="openai/loopback-judge",
        api_base=fixed_server.base_url,
        api_key_env="JURIST_TEST_API_KEY",
        cache_dir=tmp_path / "cache",
        parse_retries=0,
        retry_max_wait=0.2,
        timeout=5,
    )
    return ["baseline", JudgeSpec("fixed", config)]


@pytest.fixture
def gold(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "heritage_small.jsonl", GOLD)


def _rows(result: Any) -> dict[str, pd.Series]:
    return {row["judge"]: row for _, row in result.leaderboard.iterrows()}


def _check_intervals(row: pd.Series, *names: str) -> None:
    for name in names:
        assert row[f"{name}_low"] <= row[name] + 1e-12 and row[name] <= row[f"{name}_high"] + 1e-12


def test_the_heritage_calibration_tasks_are_listed():
    calibrated = {name for name in task_names() if "calibrate" in get_task(name).verbs}
    assert {"heritage-ner", "heritage-classification", "heritage-linking", "heritage-qa"} <= calibrated


def test_classification_rows_by_hand(judges, gold, fixed_server, tmp_path: Path):
    fixed_server.reset_count()
    result = calibrate("heritage-classification", [gold], judges, out=tmp_path / "cal", n_resamples=200)
    rows = _rows(result)
    baseline, fixed = rows["baseline"], rows["fixed"]
    assert (baseline["dataset"], baseline["task"], baseline["items"]) == (
        "heritage_small",
        "heritage-classification",
        4,
    )
    # Baseline keywords: museum, archief, museum, library -> M, A, M, L: all right.
    assert baseline["failed"] == 0 and baseline["accuracy"] == 1.0 and baseline["kappa"] == 1.0
    assert baseline["tokens_per_judgment"] == 0 and baseline["calls"] == 0
    # Fixed judge: M, L (gold A), unparseable (failed), L. Scored: gold M A L, judge M L L.
    assert (fixed["failed"], fixed["failed_rate"]) == (1, 0.25)
    assert fixed["accuracy"] == pytest.approx(2 / 3)
    # p_o = 2/3; marginals gold (L, A, M) = 1/3 each, judge L 2/3, M 1/3: p_e = 2/9 + 1/9 = 1/3;
    # kappa = (2/3 − 1/3) / (1 − 1/3) = 1/2.
    assert fixed["kappa"] == pytest.approx(0.5)
    _check_intervals(fixed, "accuracy", "kappa")
    assert (fixed["precision_L"], fixed["recall_L"], fixed["precision_M"], fixed["recall_M"]) == (
        0.5,
        1,
        1,
        1,
    )
    assert fixed["recall_A"] == 0 and pd.isna(fixed["precision_A"])
    assert fixed["macro_f1"] == pytest.approx((2 / 3 + 0 + 1) / 3)  # F1 of L, A, M
    assert fixed["category_accuracy"] == 1.0  # M, A and L are all CULTURAL
    assert fixed["calls"] == fixed_server.requests and fixed["tokens_per_judgment"] > 0
    assert fixed["latency_s"] > 0 and pd.isna(fixed["cost_per_judgment"])
    run_dir = Path(fixed["run_dir"])
    assert run_dir.parts[-2:] == ("heritage_small", "classification")
    assert json.loads((run_dir / "summary.json").read_text())["headline"]["type_accuracy"] == pytest.approx(
        2 / 3
    )

    # A rerun reads the judgments back: no request, same numbers; gates apply to the rows.
    fixed_server.reset_count()
    again = calibrate(
        "heritage-classification",
        [gold],
        judges,
        out=tmp_path / "cal",
        n_resamples=200,
        thresholds=CalibrationThresholds(min_kappa=0.6, max_failed_rate=0.1),
    )
    assert fixed_server.requests == 0
    assert _rows(again)["fixed"]["kappa"] == pytest.approx(0.5)
    failed = {(check.gate, check.judge) for check in again.gates if not check.passed}
    assert failed == {("min_kappa", "fixed"), ("max_failed_rate", "fixed")}


def test_ner_rows_by_hand(judges, gold, tmp_path: Path):
    result = calibrate("heritage-ner", [gold], judges, out=tmp_path / "cal", n_resamples=200)
    rows = _rows(result)
    baseline, fixed = rows["baseline"], rows["fixed"]
    # Baseline: every gold span but "Makkum": TP 9, FP 0, FN 1.
    assert baseline["entity_f1"] == pytest.approx(18 / 19) and baseline["partial_f1"] == pytest.approx(
        18 / 19
    )
    assert (baseline["entity_precision"], baseline["entity_recall"]) == pytest.approx((1.0, 0.9))
    # Fixed judge, strict (TP, FP, FN) per text: (2, 1, 1), (2, 1, 0), (0, 0, 2), (1, 1, 2).
    assert fixed["entity_f1"] == pytest.approx(2 * 5 / (2 * 5 + 3 + 5))
    assert (fixed["entity_precision"], fixed["entity_recall"]) == pytest.approx((5 / 8, 5 / 10))
    # Partial: "The London Library" overlaps "London Library": (2, 1, 1), (2, 1, 0), (0, 0, 2), (2, 0, 1).
    assert fixed["partial_f1"] == pytest.approx(2 * 6 / (2 * 6 + 2 + 4))
    _check_intervals(fixed, "entity_f1", "entity_precision", "entity_recall", "partial_f1")
    assert fixed["flagged_entities"] == 1 and fixed["failed"] == 0
    assert pd.isna(fixed["accuracy"]) and pd.isna(fixed["kappa"])
    assert fixed["recall_TOP"] == 0.5 and fixed["recall_GRP.HER.MUS"] == 0.5 and fixed["recall_TMP"] == 0.5
    assert fixed["precision_TMP"] == 0.5 and fixed["precision_GRP.HER.SOC"] == 0.0
    assert fixed["precision_TOP"] == 1.0 and fixed["recall_GRP.HER.LIB"] == 0.0
    summary = json.loads((Path(fixed["run_dir"]) / "summary.json").read_text())
    assert summary["ner"]["strict"]["f1"] == pytest.approx(fixed["entity_f1"])
    by_label = result.by_label[(result.by_label["judge"] == "fixed") & (result.by_label["side"] == "gold")]
    assert by_label.set_index("label").loc["TOP", ["n", "agreed"]].tolist() == [4, 2]
    # The Markdown leaderboard shows the task's own figures, not only accuracy and kappa.
    markdown = calibration_markdown(result)
    assert "## Task metrics" in markdown and "| entity f1 |" in markdown
    assert f"{fixed['entity_f1']:.3f} [" in markdown


def test_linking_rows_by_hand(judges, gold, tmp_path: Path):
    result = calibrate("heritage-linking", [gold], judges, out=tmp_path / "cal", n_resamples=200)
    rows = _rows(result)
    baseline, fixed = rows["baseline"], rows["fixed"]
    assert baseline["mentions"] == 4
    for name in ("accuracy", "hits@1", "mrr", "nil_f1"):
        assert baseline[name] == 1.0
    # Fixed judge: Rijksmuseum at rank 2, Nationaal Archief at 1, Vlaswiek NIL (right), London NIL (wrong).
    assert fixed["hits@1"] == pytest.approx(1 / 3) and fixed["mrr"] == pytest.approx((0.5 + 1 + 0) / 3)
    assert fixed["nil_f1"] == pytest.approx(2 / 3)  # NIL: TP 1, FP 1, FN 0
    assert fixed["accuracy"] == pytest.approx(2 / 4)
    _check_intervals(fixed, "accuracy", "hits@1", "mrr", "nil_f1")
    assert (fixed["precision_linked"], fixed["recall_linked"]) == pytest.approx((1 / 2, 1 / 3))
    assert (fixed["precision_NIL"], fixed["recall_NIL"]) == (0.5, 1.0)
    linking = json.loads((Path(fixed["run_dir"]) / "summary.json").read_text())["linking"]
    assert (linking["hits@1"], linking["mrr"], linking["nil"]["nil_f1"]) == pytest.approx(
        (fixed["hits@1"], fixed["mrr"], fixed["nil_f1"])
    )


def test_qa_rows_by_hand_and_the_cli(judges, gold, tmp_path: Path, capsys):
    result = calibrate("heritage-qa", [gold], judges, out=tmp_path / "cal", n_resamples=200)
    rows = _rows(result)
    baseline, fixed = rows["baseline"], rows["fixed"]
    assert (baseline["items"], baseline["questions"]) == (2, 2)
    # Baseline copies the sentence: LCS 2 of 8 and 2 words (F 0.4); 5 of 12 and 5 words (F 10/17).
    assert baseline["rouge_l"] == pytest.approx((0.4 + 10 / 17) / 2) and baseline["faithfulness"] == 1.0
    # Fixed: "Het werd gesticht in 1801." vs "In 1800.": LCS 1, P 1/5, R 1/2, F 2/7; the other exact.
    assert fixed["rouge_l"] == pytest.approx((2 / 7 + 1) / 2)
    assert fixed["faithfulness"] == 0.5  # "gesticht" and "1801" are not in the text
    _check_intervals(fixed, "rouge_l")
    assert result.by_label.empty

    code = 0
    try:
        main(
            [
                "calibrate",
                "heritage-qa",
                "--gold",
                str(gold),
                "--out",
                str(tmp_path / "cli"),
                "--format",
                "csv",
            ]
        )
    except SystemExit as exc:
        code = int(exc.code or 0)
    assert code == 0
    printed = capsys.readouterr().out
    assert "rouge_l" in printed.splitlines()[0] and "heritage_small,baseline" in printed
