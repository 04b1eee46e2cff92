"""YAML tasks judged with ``logprobs: true`` against a loopback server that returns
OpenAI-shaped token log-probabilities: every figure below is computed by hand from the
probabilities the server gives."""

from __future__ import annotations

import json
import math
import textwrap
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from jurist.testing.openai_server import OpenAICompatibleServer, Reply
from support import CLAIMS_TASK, prompt_sections, run_cli

BOOL_TASK = CLAIMS_TASK
# P(true) per claim, and gold. Verdicts (the most probable): T, F, T, F; against gold 2 of 4.
BOOL_ROWS = {"c1": (0.9, True), "c2": (0.3, False), "c3": (0.6, False), "c4": (0.2, True)}

LABEL_TASK = """\
name: support
instructions: Is the answer supported?
inputs: [answer]
output:
  kind: label
  labels: [supported, unsupported, unclear]
  reasoning: false
gold: gold
"""
LABEL_ROWS = {
    "a1": ({"supported": 0.8, "unsupported": 0.15, "unclear": 0.05}, "supported"),
    "a2": ({"unsupported": 0.5, "supported": 0.3, "unclear": 0.2}, "supported"),
    "a3": ({"unclear": 0.6, "unsupported": 0.4}, "unclear"),
}

SCORE_TASK = """\
name: grade
instructions: Grade the essay from 1 to 5.
inputs: [essay]
output:
  kind: score
  range: [1, 5]
  reasoning: false
gold: gold
"""
SCORE_ROWS = {
    "e1": ({"4": 0.6, "5": 0.3, "3": 0.1}, 5),  # expected 4.2, sampled 4
    "e2": ({"2": 0.7, "1": 0.2, "3": 0.1}, 1),  # expected 1.9, sampled 2
    "e3": ({"3": 0.5, "4": 0.5}, 4),  # expected 3.5, sampled 3 (the first listed)
    "e4": ({"5": 0.9, "4": 0.1}, 5),  # expected 4.9, sampled 5
}

PAIR_TASK = """\
name: duel
instructions: Which response answers the question better?
inputs: [question, response_a, response_b]
output:
  kind: pairwise
  allow_tie: true
  reasoning: false
gold: gold
"""
# Positional probabilities in each order; the first response of each pair starts "alpha".
PAIR_ROWS = {
    "p1": ({"A": 0.7, "B": 0.2, "tie": 0.1}, {"B": 0.6, "A": 0.3, "tie": 0.1}, "A"),
    "p2": ({"B": 0.8, "A": 0.1, "tie": 0.1}, {"A": 0.9, "B": 0.1}, "B"),
}


def field_reply(probabilities: dict[str, float]) -> Reply:
    return Reply.choosing("[[ ## verdict ## ]]\n", probabilities, "\n\n[[ ## completed ## ]]")


def bool_responder(body: dict[str, Any]) -> Reply:
    p = BOOL_ROWS[prompt_sections(body)["claim"].strip()][0]
    return field_reply({"True": p, "False": 1 - p})


def write(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def write_rows(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def config(folder: Path, server: OpenAICompatibleServer, name: str = "weighted", **extra: Any) -> Path:
    fields = {
        "model": "openai/loop",
        "api_base": server.base_url,
        "api_key_env": "JURIST_TEST_API_KEY",
        "cache_dir": str(folder / "cache"),
        "retry_max_wait": 0.2,
        "timeout": 5,
        "logprobs": True,
        **extra,
    }
    return write(
        folder / f"{name}.yaml", "".join(f"{key}: {json.dumps(value)}\n" for key, value in fields.items())
    )


def judged(
    folder: Path, task: str, rows: list[dict[str, Any]], cfg: Path, out: str = "run"
) -> tuple[int, Path]:
    task_file = write(folder / "task.yaml", task)
    data = write_rows(folder / "data.jsonl", rows)
    target = folder / out
    return run_cli(["judge", str(task_file), str(data), "-c", str(cfg), "--out", str(target)]), target


def outputs(run: Path) -> dict[str, dict[str, Any]]:
    lines = (run / "results.jsonl").read_text(encoding="utf-8").splitlines()
    return {record["id"]: record["output"] for record in map(json.loads, lines)}


@pytest.fixture
def bool_server():
    with OpenAICompatibleServer(bool_responder) as server:
        yield server


def bool_rows() -> list[dict[str, Any]]:
    return [{"id": key, "claim": key, "gold": gold} for key, (_, gold) in BOOL_ROWS.items()]


@pytest.mark.parametrize("engine", ["auto", "litellm", "lm15"])
def test_a_yes_no_verdict_gets_the_probability_of_yes_as_its_confidence(
    tmp_path, bool_server, engine
) -> None:
    code, run = judged(tmp_path, BOOL_TASK, bool_rows(), config(tmp_path, bool_server, engine=engine))
    assert code == 0
    assert bool_server.bodies[0]["logprobs"] is True and bool_server.bodies[0]["top_logprobs"] == 5
    found = outputs(run)
    for key, (p, _) in BOOL_ROWS.items():
        assert found[key]["verdict"] is (p > 0.5)
        assert found[key]["weighted"] is True
        assert found[key]["probabilities"] == pytest.approx({"true": p, "false": 1 - p})
        assert found[key]["confidence"] == pytest.approx(p)
    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    assert summary["weighted"] == {"items": 4, "answered": 4, "not_weighted": {}}
    agreement = summary["agreement"]
    assert agreement["accuracy"] == pytest.approx(0.5)
    # Positives (gold true) 0.9 and 0.2, negatives 0.3 and 0.6: 2 of 4 pairs ordered.
    assert agreement["auroc"] == pytest.approx(0.5)
    # One item per bin: |1 - 0.9|, |0 - 0.3|, |0 - 0.6|, |1 - 0.2|, averaged.
    assert agreement["ece"] == pytest.approx((0.1 + 0.3 + 0.6 + 0.8) / 4)
    html = (run / "report.html").read_text(encoding="utf-8")
    assert "Reliability of the judge" in html and "calibration error 0.450 over 4 items" in html
    items = pd.read_csv(run / "items.csv")
    assert list(items["confidence"]) == pytest.approx([0.9, 0.3, 0.6, 0.2])


def test_a_json_answer_is_weighed_at_its_verdict_key(tmp_path) -> None:
    def respond(body: dict[str, Any]) -> Reply:
        p = BOOL_ROWS[prompt_sections(body)["claim"].strip()][0]
        return Reply.choosing('{"verdict": ', {"true": p, "false": 1 - p}, "}")

    with OpenAICompatibleServer(respond) as server:
        code, run = judged(tmp_path, BOOL_TASK, bool_rows(), config(tmp_path, server, adapter="json"))
    assert code == 0
    found = outputs(run)
    assert [found[key]["confidence"] for key in BOOL_ROWS] == pytest.approx([0.9, 0.3, 0.6, 0.2])


def test_a_cached_rerun_serves_the_same_weighed_verdicts(tmp_path, bool_server) -> None:
    cfg = config(tmp_path, bool_server)
    assert judged(tmp_path, BOOL_TASK, bool_rows(), cfg)[0] == 0
    sent = bool_server.requests
    code, again = judged(tmp_path, BOOL_TASK, bool_rows(), cfg, out="again")
    assert code == 0 and bool_server.requests == sent
    assert outputs(again) == outputs(tmp_path / "run")
    # A judge without logprobs is another judge: it asks, and keeps no probabilities.
    plain = config(tmp_path, bool_server, name="plain", logprobs=False)
    assert judged(tmp_path, BOOL_TASK, bool_rows(), plain, out="plain")[0] == 0
    assert bool_server.requests == sent + 4 and "logprobs" not in bool_server.bodies[-1]
    assert all("weighted" not in output for output in outputs(tmp_path / "plain").values())
    # Its report and the viewer offer no confidence column nor "confidence below" queue.
    review = json.loads((tmp_path / "plain" / "review.json").read_text(encoding="utf-8"))
    assert review["confidence"] is None
    assert (
        json.loads((tmp_path / "run" / "review.json").read_text(encoding="utf-8"))["confidence"]
        == "confidence"
    )


def test_a_label_verdict_gets_its_own_probability_and_a_reliability_curve(tmp_path) -> None:
    def respond(body: dict[str, Any]) -> Reply:
        return field_reply(LABEL_ROWS[prompt_sections(body)["answer"].strip()][0])

    rows = [{"id": key, "answer": key, "gold": gold} for key, (_, gold) in LABEL_ROWS.items()]
    with OpenAICompatibleServer(respond) as server:
        code, run = judged(tmp_path, LABEL_TASK, rows, config(tmp_path, server, top_logprobs=3))
    assert code == 0 and server.bodies[0]["top_logprobs"] == 3
    found = outputs(run)
    assert {key: output["verdict"] for key, output in found.items()} == {
        "a1": "supported",
        "a2": "unsupported",
        "a3": "unclear",
    }
    assert found["a3"]["probabilities"] == pytest.approx(
        {"supported": 0.0, "unsupported": 0.4, "unclear": 0.6}
    )
    assert [found[key]["confidence"] for key in ("a1", "a2", "a3")] == pytest.approx([0.8, 0.5, 0.6])
    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    # Correct: a1 (0.8), a3 (0.6); wrong: a2 (0.5). One item per bin.
    assert summary["agreement"]["ece"] == pytest.approx((0.2 + 0.5 + 0.4) / 3)
    html = (run / "report.html").read_text(encoding="utf-8")
    assert "Reliability of the judge" in html


def test_a_score_keeps_its_expected_value_beside_the_sampled_one(tmp_path) -> None:
    def respond(body: dict[str, Any]) -> Reply:
        return field_reply(SCORE_ROWS[prompt_sections(body)["essay"].strip()][0])

    rows = [{"id": key, "essay": key, "gold": gold} for key, (_, gold) in SCORE_ROWS.items()]
    with OpenAICompatibleServer(respond) as server:
        code, run = judged(tmp_path, SCORE_TASK, rows, config(tmp_path, server))
    assert code == 0
    found = outputs(run)
    assert {key: output["verdict"] for key, output in found.items()} == {"e1": 4, "e2": 2, "e3": 3, "e4": 5}
    expected = {"e1": 4.2, "e2": 1.9, "e3": 3.5, "e4": 4.9}
    assert {key: output["expected_score"] for key, output in found.items()} == pytest.approx(expected)
    items = pd.read_csv(run / "items.csv").set_index("id")
    assert dict(items["expected_score"]) == pytest.approx(expected)
    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    # The sampled score's probability against exact agreement: only e4 (0.9) is exact.
    assert summary["agreement"]["ece"] == pytest.approx((0.6 + 0.7 + 0.5 + 0.1) / 4)
    assert "Reliability of the judge" in (run / "report.html").read_text(encoding="utf-8")
    weighted = summary["weighted"]
    assert weighted["items"] == 4
    by_hand = weighted["expected_score"]
    assert by_hand["mae"] == pytest.approx((0.8 + 0.9 + 0.5 + 0.1) / 4)
    assert by_hand["rmse"] == pytest.approx(math.sqrt((0.64 + 0.81 + 0.25 + 0.01) / 4))
    # Ranks of the expected scores 3, 1, 2, 4; of gold 3.5, 1, 2, 3.5 (5 and 5 tied).
    assert by_hand["spearman"] == pytest.approx(4.5 / math.sqrt(5 * 4.5))
    # Five pairs concordant, none discordant, one tied in gold (e1, e4) of six.
    assert by_hand["kendall_tau"] == pytest.approx(5 / math.sqrt(6 * 5))
    sampled = weighted["sampled_score"]
    assert sampled["mae"] == pytest.approx(0.75)
    # Sampled 4, 2, 3, 5 (ranks 3, 1, 2, 4) against the same gold: the same orderings.
    assert sampled["kendall_tau"] == pytest.approx(5 / math.sqrt(30))


def test_a_pair_gets_a_swap_averaged_weighted_win_rate(tmp_path) -> None:
    def respond(body: dict[str, Any]) -> Reply:
        sections = prompt_sections(body)
        key = sections["question"].strip()
        in_order, swapped, _ = PAIR_ROWS[key]
        return field_reply(in_order if sections["response_a"].startswith("alpha") else swapped)

    rows = [
        {"id": key, "question": key, "response_a": f"alpha {key}", "response_b": f"beta {key}", "gold": gold}
        for key, (_, _, gold) in PAIR_ROWS.items()
    ]
    with OpenAICompatibleServer(respond) as server:
        code, run = judged(tmp_path, PAIR_TASK, rows, config(tmp_path, server))
    assert code == 0
    found = outputs(run)
    assert found["p1|AB"]["probabilities"] == pytest.approx({"A": 0.7, "B": 0.2, "tie": 0.1})
    assert found["p2|BA"]["probabilities"] == pytest.approx({"A": 0.9, "B": 0.1, "tie": 0.0})
    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    # Every order names the gold winner, with confidence 0.7, 0.6 (p1), 0.8, 0.9 (p2): one per bin.
    assert summary["agreement"]["ece"] == pytest.approx((0.3 + 0.4 + 0.2 + 0.1) / 4)
    assert "calibration error 0.250 over 4 items" in (run / "report.html").read_text(encoding="utf-8")
    pairs = summary["pairs"]
    # p1: B preferred with (0.2 + 0.05) in AB and (0.3 + 0.05) in BA: 0.3; p2: (0.85 + 0.9) / 2.
    assert pairs["weighted_rows"] == 2
    assert pairs["weighted_win_rate_B"] == pytest.approx((0.3 + 0.875) / 2)
    assert pairs["weighted_win_rate_A"] == pytest.approx(1 - (0.3 + 0.875) / 2)
    assert pairs["weighted_tie_rate"] == pytest.approx((0.1 + 0.05) / 2)


def test_a_provider_that_returns_none_leaves_plain_verdicts_counted(tmp_path) -> None:
    with OpenAICompatibleServer(bool_responder, serve_logprobs=False) as server:
        code, run = judged(tmp_path, BOOL_TASK, bool_rows(), config(tmp_path, server))
    assert code == 0
    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    assert summary["weighted"] == {
        "items": 0,
        "answered": 4,
        "not_weighted": {"no log-probabilities in the answer": 4},
    }
    assert summary["agreement"]["accuracy"] == pytest.approx(0.5)
    assert "auroc" not in summary["agreement"] and "ece" not in summary["agreement"]


def test_a_provider_that_refuses_the_parameter_stops_the_run_at_the_first_call(tmp_path, capsys) -> None:
    with OpenAICompatibleServer(bool_responder, refuse_logprobs=True) as server:
        code, run = judged(tmp_path, BOOL_TASK, bool_rows(), config(tmp_path, server, concurrency=1))
        assert code == 5 and server.requests == 1
    err = capsys.readouterr().err
    assert "refused to return log-probabilities (logprobs: true)" in err
    assert "set logprobs: false" in err


def test_a_cascade_escalates_the_items_whose_verdict_is_improbable(tmp_path, bool_server) -> None:
    with OpenAICompatibleServer(bool_responder) as large:
        small = config(tmp_path, bool_server, name="small")
        big = config(tmp_path, large, name="large", model="openai/large", logprobs=False)
        cascade = write(
            tmp_path / "cascade.yaml",
            f"""\
            cascade:
              stages:
                - {{name: small, config: {small.name}, escalate_below: 0.7}}
                - {{name: large, config: {big.name}}}
            """,
        )
        code, run = judged(tmp_path, BOOL_TASK, bool_rows(), cascade)
        assert code == 0
        # Confidence in the verdict: 0.9 (true), 0.7 (false), 0.6 (true), 0.8 (false): only c3 is below 0.7.
        assert large.requests == 1
        assert prompt_sections(large.bodies[0])["claim"].strip() == "c3"


def test_a_weighed_judge_and_its_plain_twin_share_a_leaderboard(tmp_path, bool_server) -> None:
    task_file = write(tmp_path / "task.yaml", BOOL_TASK)
    gold = write_rows(tmp_path / "gold.jsonl", bool_rows())
    weighted = config(tmp_path, bool_server)
    plain = config(tmp_path, bool_server, name="plain", logprobs=False)
    out = tmp_path / "cal"
    args = ["calibrate", str(task_file), "--gold", str(gold), "-c", str(weighted), "-c", str(plain)]
    assert run_cli([*args, "--out", str(out), "--resamples", "50"]) == 0
    board = pd.read_csv(out / "leaderboard.csv").set_index("judge")
    assert board.loc["weighted", "accuracy"] == pytest.approx(0.5) == board.loc["plain", "accuracy"]
    assert board.loc["weighted", "auroc"] == pytest.approx(0.5)
    assert board.loc["weighted", "ece"] == pytest.approx(0.45)
    assert board.loc["weighted", "weighted_items"] == 4
    assert math.isnan(board.loc["plain", "auroc"]) and math.isnan(board.loc["plain", "ece"])
