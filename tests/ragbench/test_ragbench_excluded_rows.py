"""Every row left out of a RAGBench figure is counted with its reason; nothing is dropped silently.

Rows are cut from the RAGBench covidqa export (tests/data/ragbench/covidqa_rows.json); the gold
TRACe scores added below are test values (the export carries none). Reference figures come
from scikit-learn on the rows the test itself says are kept.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import mean_squared_error, roc_auc_score

import jurist
from jurist.tasks.ragbench import scoring
from support import run_cli

COVIDQA = Path(__file__).resolve().parents[1] / "data" / "ragbench" / "covidqa_rows.json"

GOLD_SCORES = {  # id: (relevance_score, utilization_score, completeness_score)
    "358": (0.5, 0.4, 0.9),
    "1172": (0.2, 0.1, 0.5),
    "1432": (0.1, 0.05, 0.4),
    "143": (0.6, 0.3, 0.7),
    "329": (0.05, 0.0, 0.0),
    "265": (0.3, 0.2, 0.8),
}


def _write(path: Path, records: list[dict]) -> Path:
    path.write_text(json.dumps(records), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Judge (baseline) the covidqa rows in a shape that exercises every reason."""
    base = tmp_path_factory.mktemp("excluded")
    records = json.loads(COVIDQA.read_text(encoding="utf-8"))
    gold = []
    for record in records:
        row = dict(record)
        if row["source_id"] in GOLD_SCORES:
            row["relevance_score"], row["utilization_score"], row["completeness_score"] = GOLD_SCORES[
                row["source_id"]
            ]
        if row["source_id"] == "265":
            del row["risk_type"]  # no gold support label
        gold.append(row)
    data = []
    for record in records:
        if record["source_id"] == "518":
            continue  # a gold row the run never judged
        row = dict(record)
        if row["source_id"] == "1432":
            row["candidate_answer"] = ""  # no response sentence: adherence is undefined
        data.append(row)
    data.append({**records[0], "source_id": "9999"})  # judged, but no gold row
    gold_path = _write(base / "gold.json", gold)
    data_path = _write(base / "data.json", data)
    out = base / "run"
    assert run_cli(["judge", "ragbench", str(data_path), "--out", str(out), "--no-progress"]) == 0
    items = jurist.score("ragbench", out, gold=gold_path).items.copy()
    # 1172 as a failed item looks: status "failed", no scores.
    failed = items["id"] == "1172"
    items.loc[failed, "status"] = "failed"
    score_columns = [c for c in items.columns if c.startswith(("context_", "completeness", "adherence"))]
    items.loc[failed, score_columns] = np.nan
    return {"items": items, "summary": scoring.summarize(items, gold_path), "gold": gold_path, "run": out}


def test_reasons_for_hallucination_auroc_and_the_reference_value(scored: dict):
    agreement = scored["summary"]["agreement"]
    expected = {
        scoring.NOT_JUDGED: 1,  # 518
        scoring.NO_GOLD_ROW: 1,  # 9999
        scoring.FAILED: 1,  # 1172
        scoring.NO_GOLD_LABEL: 1,  # 265
        scoring.UNDEFINED: 1,  # 1432: empty response
    }
    assert agreement["excluded"]["hallucination_auroc"] == expected
    assert agreement["excluded"]["adherence_accuracy"] == expected
    kept = ["358", "143", "329", "1761"]
    assert agreement["labeled_items"] == len(kept)
    items = scored["items"].set_index("id")
    gold_supported = {"358": True, "143": True, "329": True, "1761": False}
    reference = roc_auc_score(
        [not gold_supported[i] for i in kept], [1 - items.loc[i, "adherence_fraction"] for i in kept]
    )
    assert agreement["hallucination_auroc"] == pytest.approx(reference)
    accuracy = np.mean([bool(items.loc[i, "adherence"]) == gold_supported[i] for i in kept])
    assert agreement["adherence_accuracy"] == pytest.approx(accuracy)


@pytest.mark.parametrize(
    ("metric", "position", "kept", "undefined"),
    [
        ("context_relevance", 0, ["358", "1432", "143", "329", "265"], 0),
        ("context_utilization", 1, ["358", "1432", "143", "329", "265"], 0),
        ("completeness", 2, ["358", "143", "265"], 2),  # 329, 1432: nothing relevant
    ],
)
def test_reasons_for_rmse_and_the_reference_value(
    scored: dict, metric: str, position: int, kept: list[str], undefined: int
):
    agreement = scored["summary"]["agreement"]
    field = ("relevance_score", "utilization_score", "completeness_score")[position]
    expected = {
        scoring.NOT_JUDGED: 1,
        scoring.NO_GOLD_ROW: 1,
        scoring.FAILED: 1,
        f"gold score missing ({field})": 1,  # 1761
    }
    if undefined:
        expected[scoring.UNDEFINED] = undefined
    assert agreement["excluded"][f"rmse_{metric}"] == expected
    assert agreement[f"rmse_{metric}_items"] == len(kept)
    items = scored["items"].set_index("id")
    reference = math.sqrt(
        mean_squared_error([GOLD_SCORES[i][position] for i in kept], [items.loc[i, metric] for i in kept])
    )
    assert agreement[f"rmse_{metric}"] == pytest.approx(reference)


def test_trace_means_count_failed_and_undefined_items(scored: dict):
    summary = scored["summary"]
    assert summary["excluded"]["context_relevance"] == {scoring.FAILED: 1}
    assert summary["excluded"]["completeness"] == {scoring.FAILED: 1, scoring.UNDEFINED: 2}
    assert summary["excluded"]["adherence_fraction"] == {scoring.FAILED: 1, scoring.UNDEFINED: 1}
    assert summary["trace"]["completeness"]["n"] == len(scored["items"]) - 3


def test_every_row_is_either_used_or_counted(scored: dict):
    agreement = scored["summary"]["agreement"]
    universe = 9  # 8 gold rows and the judged row without a gold row
    assert agreement["labeled_items"] + sum(agreement["excluded"]["hallucination_auroc"].values()) == universe
    for metric in ("context_relevance", "context_utilization", "completeness"):
        left_out = sum(agreement["excluded"][f"rmse_{metric}"].values())
        assert agreement[f"rmse_{metric}_items"] + left_out == universe


def test_report_and_summary_lines_name_the_reasons(scored: dict, capsys: pytest.CaptureFixture[str]):
    from jurist.tasks.ragbench.report import render_report

    items = scored["items"]
    report = render_report({**scored["summary"], **_counts(items)}, items[items["status"] == "failed"])
    assert "## Rows left out of a figure" in report
    assert (
        "| hallucination auroc | gold row not in the run | 1 |\n"
        "|  | item has no gold row | 1 |\n"
        "|  | judge failed on the item | 1 |\n"
        "|  | gold label missing (adherence_score) | 1 |\n"
        "|  | judge's value undefined (zero denominator) | 1 |\n"
    ) in report
    undefined = "judge's value undefined (zero denominator)"
    assert f"| completeness | judge failed on the item | 1 |\n|  | {undefined} | 2 |" in report
    # the run as recorded (no failed item), scored by the CLI: its report names the reasons
    assert run_cli(["score", "ragbench", str(scored["run"]), "--gold", str(scored["gold"])]) == 0
    printed = capsys.readouterr().out
    assert "| hallucination auroc | gold row not in the run | 1 |\n|  | item has no gold row | 1 |" in printed


def _counts(items) -> dict:
    failed = int((items["status"] != "ok").sum())
    return {"items": len(items), "ok": len(items) - failed, "failed": failed}


def test_nothing_left_out_says_so():
    import pandas as pd

    from jurist.tasks.ragbench.report import render_report

    report = render_report({"items": 0, "ok": 0, "failed": 0, "excluded": {}}, pd.DataFrame())
    assert "None: every figure uses every row." in report


def test_calibration_counts_rows_without_a_gold_label(tmp_path: Path):
    from jurist.verbs import calibrate

    records = json.loads(COVIDQA.read_text(encoding="utf-8"))
    del records[7]["risk_type"]  # 265: no gold support label
    path = _write(tmp_path / "gold.json", records)
    row = calibrate(
        "ragbench", [str(path)], out=tmp_path / "c", n_resamples=50, write=False
    ).leaderboard.iloc[0]
    assert (row["items"], row["no_gold_label"], row["failed"]) == (7, 1, 0)
