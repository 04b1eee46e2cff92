"""``calibrate``: leaderboard numbers on small fixtures, checked against values computed by hand."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from optimize_helpers import longer_or_first, marker_ragbench_answer

from jurist.cli import main
from jurist.metrics.agreement import auroc
from jurist.metrics.gold_agreement import auroc_from_counts
from jurist.report.calibrate import CalibrationThresholds
from jurist.tasks.calibration_rows import JudgeSpec
from jurist.testing import OpenAICompatibleServer
from jurist.verbs import calibrate
from support import write_jsonl

RB_ROWS = [  # (gold supported, response): the marker judge says "unsup" sentences are unsupported
    (True, "Alpha is one. Beta is two."),  # judge: supported, fraction 1
    (True, "Alpha is one. Gamma unsup claim."),  # judge: not supported, fraction 1/2
    (False, "Delta unsup one. Epsilon unsup two."),  # judge: not supported, fraction 0
    (False, "Alpha is one. Beta is two. Zeta unsup three."),  # judge: not supported, fraction 2/3
    (False, "Alpha is one. Beta is two."),  # judge: supported, fraction 1
    (True, "Alpha is one. Beta is two. Gamma is three."),  # judge: supported, fraction 1
    (True, "BROKEN answer."),  # judge: unparseable -> failed
]

PAIRS = [
    {
        "id": "p1",
        "question": "q1",
        "response_1": "The first response is long and good.",
        "response_2": "Short.",
        "label": 1,
    },
    {
        "id": "p2",
        "question": "q2",
        "response_1": "This one is long but actually bad.",
        "response_2": "Brief.",
        "label": 2,
    },
    {
        "id": "p3",
        "question": "q3",
        "response_1": "Tiny.",
        "response_2": "The second response is long and good.",
        "label": 2,
    },
    {"id": "p4", "question": "q4", "response_1": "Same one", "response_2": "Same two", "label": 1},
    {"id": "p5", "question": "q5", "response_1": "UNSURE oak tree here", "response_2": "Birch.", "label": 1},
]


def _rb_gold(tmp_path: Path) -> Path:
    rows = [
        {
            "id": f"r{i + 1}",
            "question": f"Question {i}?",
            "documents": [f"Document {i} says alpha is one and beta is two."],
            "response": response,
            "adherence_score": supported,
        }
        for i, (supported, response) in enumerate(RB_ROWS)
    ]
    return write_jsonl(tmp_path / "rb_gold.jsonl", rows)


def _usage_from_server(srv: OpenAICompatibleServer, responder) -> int:
    """Tokens the loopback server reported, recomputed from the request bodies it received."""
    total = 0
    for body in srv.bodies:
        prompt = max(1, sum(len(str(m.get("content", ""))) for m in body["messages"]) // 4)
        total += prompt + max(1, len(responder(body)) // 4)
    return total


def test_auroc_from_counts_matches_the_rank_auroc():
    rng = np.random.default_rng(3)
    labels = rng.integers(0, 2, 40)
    scores = rng.integers(0, 5, 40) / 4
    distinct = sorted(set(scores))
    counts = np.zeros(2 * len(distinct))
    for label, score in zip(labels, scores, strict=True):
        counts[(0 if label else len(distinct)) + distinct.index(score)] += 1
    assert auroc_from_counts(counts)[0] == pytest.approx(auroc(list(labels), list(scores)))
    assert np.isnan(auroc_from_counts(np.array([1.0, 2.0, 0.0, 0.0]))[0])


def test_ragbench_leaderboard_by_hand(llm_config, tmp_path):
    gold = _rb_gold(tmp_path)
    with OpenAICompatibleServer(marker_ragbench_answer) as srv:
        config = llm_config.model_copy(update={"api_base": srv.base_url})
        result = calibrate(
            "ragbench", [gold], [JudgeSpec("marker", config)], out=tmp_path / "cal", n_resamples=200
        )
        row = result.leaderboard.iloc[0]
        assert (row["dataset"], row["judge"], row["model"]) == ("rb_gold", "marker", config.model)
        assert (row["items"], row["failed"]) == (7, 1)
        assert row["failed_rate"] == pytest.approx(1 / 7)
        # Confusion (gold × judge, [supported, unsupported]): [[2, 1], [1, 2]] over 6 scored items.
        assert row["accuracy"] == pytest.approx(4 / 6)
        # p_o = 4/6, p_e = (3/6)(3/6) + (3/6)(3/6) = 1/2, kappa = (2/3 − 1/2) / (1/2) = 1/3
        assert row["kappa"] == pytest.approx(1 / 3)
        # Positive: unsupported (r3 1.0, r4 1/3, r5 0); negatives r1 0, r2 1/2, r6 0.
        # Pairs won: r3 3, r4 2, r5 0.5 + 0.5 = 1 -> 6 / 9.
        assert row["auroc"] == pytest.approx(6 / 9)
        for name in ("accuracy", "kappa", "auroc"):
            assert row[f"{name}_low"] <= row[name] <= row[f"{name}_high"]
        for label in ("supported", "unsupported"):
            assert row[f"precision_{label}"] == pytest.approx(2 / 3)
            assert row[f"recall_{label}"] == pytest.approx(2 / 3)
        assert row["tokens_per_judgment"] == pytest.approx(
            _usage_from_server(srv, marker_ragbench_answer) / 7
        )
        assert row["latency_s"] > 0 and pd.isna(row["cost_per_judgment"])
        assert row["calls"] == srv.requests

        # A rerun into the same directory reads every judgment back: no request, same numbers.
        srv.reset_count()
        again = calibrate(
            "ragbench", [gold], [JudgeSpec("marker", config)], out=tmp_path / "cal", n_resamples=200
        )
        assert srv.requests == 0
        pd.testing.assert_frame_equal(again.leaderboard, result.leaderboard)
    written = json.loads((tmp_path / "cal" / "calibration.json").read_text())
    assert written["leaderboard"][0]["kappa"] == pytest.approx(1 / 3)
    assert (tmp_path / "cal" / "leaderboard.md").read_text().startswith("# Judge calibration: ragbench")


def test_pairwise_leaderboard_and_bias_probes_by_hand(llm_config, tmp_path):
    gold = write_jsonl(tmp_path / "prefs.jsonl", PAIRS)
    with OpenAICompatibleServer(longer_or_first) as srv:
        config = llm_config.model_copy(update={"api_base": srv.base_url})
        result = calibrate(
            "pairwise", [gold], [JudgeSpec("longer", config)], out=tmp_path / "cal", n_resamples=200
        )
        row = result.leaderboard.iloc[0]
        assert (row["items"], row["judgments"], row["failed"]) == (5, 10, 2)
        assert row["failed_rate"] == pytest.approx(0.2)
        # Verdicts of the complete pairs p1..p4: 1, 1, 2, tie (p4 chose A in both orders); gold 1, 2, 2, 1.
        assert row["accuracy"] == pytest.approx(0.5)
        # Confusion gold × verdict (1, 2, tie): [[1,0,1],[1,1,0],[0,0,0]]; p_o = 1/2,
        # p_e = (2·2 + 2·1 + 0·1) / 16 = 3/8, kappa = (1/2 − 3/8) / (5/8) = 0.2
        assert row["kappa"] == pytest.approx(0.2)
        assert row["consistency"] == pytest.approx(3 / 4)
        # Decisive judgments: p1 A,B; p2 A,B; p3 B,A; p4 A,A -> 5 of 8 chose position 1.
        assert row["position_1_rate"] == pytest.approx(5 / 8)
        assert row["position_bias"] == pytest.approx(1 / 8)
        # Longer response chosen in all 6 decisive judgments of unequal lengths (p4 is equal).
        assert row["longer_win_rate"] == pytest.approx(1.0)
        # Gold prefers the longer one in p1, p3, p5 but not p2.
        assert row["gold_longer_rate"] == pytest.approx(3 / 4)
        assert row["length_bias"] == pytest.approx(1 / 4)
        assert (row["precision_1"], row["recall_1"]) == (pytest.approx(0.5), pytest.approx(0.5))
        assert (row["precision_2"], row["recall_2"]) == (pytest.approx(1.0), pytest.approx(0.5))
        assert row["precision_tie"] == pytest.approx(0.0)
        assert pd.isna(row["auroc"])
        assert row["tokens_per_judgment"] == pytest.approx(_usage_from_server(srv, longer_or_first) / 10)


def test_gates_and_the_cli(llm_config, tmp_path, capsys):
    gold = write_jsonl(tmp_path / "prefs.jsonl", PAIRS)
    with OpenAICompatibleServer(longer_or_first) as srv:
        config_file = tmp_path / "longer.yaml"
        config_file.write_text(
            json.dumps(llm_config.model_copy(update={"api_base": srv.base_url}).model_dump(mode="json"))
        )
        base = [
            "calibrate",
            "pairwise",
            "--gold",
            str(gold),
            "--config",
            str(config_file),
            "--out",
            str(tmp_path / "c"),
        ]
        with pytest.raises(SystemExit) as exit_info:
            main([*base, "--min-kappa", "0.1", "--max-failed-rate", "0.25", "--resamples", "50"])
        assert exit_info.value.code == 0
        out = capsys.readouterr().out
        assert "| prefs | longer |" in out and "## Gates: passed" in out and "## Bias probes" in out

        with pytest.raises(SystemExit) as exit_info:
            main(
                [*base, "--config", "baseline", "--min-kappa", "0.5", "--min-auroc", "0.5", "--format", "csv"]
            )
        assert exit_info.value.code == 1
        captured = capsys.readouterr()
        frame = pd.read_csv(pd.io.common.StringIO(captured.out))
        assert set(frame["judge"]) == {"longer", "baseline"}
        assert "gate failed: min_kappa 0.5: longer on prefs = 0.200" in captured.err
        assert "gate failed: min_auroc 0.5: longer on prefs = n/a" in captured.err


def test_thresholds_on_nan_fail_and_unset_gates_pass(tmp_path):
    result = calibrate("ragbench", ["sample:ragbench"], out=tmp_path / "c", n_resamples=50, write=False)
    assert result.passed and result.gates == []
    gated = calibrate(
        "ragbench",
        ["sample:ragbench"],
        ["baseline"],
        out=tmp_path / "c",
        n_resamples=50,
        thresholds=CalibrationThresholds(min_consistency=0.5),
        write=False,
    )
    assert not gated.passed and gated.gates[0].value is None


def test_baseline_figures_in_the_docs(tmp_path):
    """docs/optimize.md quotes these baseline figures; keep them in step."""
    result = calibrate("ragbench", ["sample:ragbench"], out=tmp_path / "c", write=False)
    row = result.leaderboard.iloc[0]
    assert (round(row["accuracy"], 3), round(row["kappa"], 3), round(row["auroc"], 3)) == (0.683, 0.36, 0.711)
    pairs = calibrate("pairwise", ["sample:pairs"], out=tmp_path / "p", write=False).leaderboard.iloc[0]
    docs = (Path(__file__).resolve().parents[2] / "docs" / "optimize.md").read_text(encoding="utf-8")
    assert f"| llmbar_natural_sample | baseline | 50 | {pairs['accuracy']:.3f}" in docs
    assert "| ragbench_covidqa_sample | baseline | 60 | 0.683" in docs


def test_pairwise_calibration_settings_name_its_options_and_keep_the_seed(tmp_path):
    result = calibrate("pairwise", ["sample:pairs"], out=tmp_path / "p", n_resamples=20, seed=3, write=False)
    assert result.settings["seed"] == 3 and result.settings["num_options"] == 2
    assert set(result.settings) == {
        "n_resamples",
        "confidence",
        "seed",
        "num_options",
        "length_unit",
        "judges",
        "gold",
    }
    three = calibrate(
        "pairwise",
        ["sample:pairs"],
        out=tmp_path / "p",
        n_resamples=20,
        options={"num_options": 3},
        write=False,
    )
    assert three.settings["num_options"] == 3
    assert three.leaderboard.iloc[0]["run_dir"].endswith("__3opt")
