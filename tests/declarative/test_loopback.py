"""YAML tasks end to end against the loopback OpenAI-compatible server.

The loopback "model" answers each item deterministically from a marker in its text
(``SCORE=k`` gives the score k, ``LABEL=x`` the label x, ``PICK=first`` the first
position), so every figure below is computed by hand.
"""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path
from typing import Any

import pytest

from jurist import verbs
from jurist.judges.config import JudgeConfig
from jurist.testing import OpenAICompatibleServer
from support import loopback_config, prompt_sections, write_jsonl

SCORE_TASK = """\
name: loopback-grader
instructions: Rate the answer from 1 to 5.
inputs:
  question: prompt
  answer: response
output:
  kind: score
  range: [1, 5]
gold: human
"""

LABEL_TASK = """\
name: loopback-labeller
instructions: Say whether the answer is right.
inputs: [answer]
output:
  kind: label
  labels: [right, wrong]
  reasoning: false
gold: gold
"""

PAIR_TASK = """\
name: loopback-pairs
instructions: Pick the better response.
inputs:
  question: q
  response_a: first
  response_b: second
output:
  kind: pairwise
  allow_tie: true
gold: label
"""

_MARK = re.compile(r"(SCORE|LABEL|PICK)=(\w+)")


def responder(body: dict[str, Any]) -> str:
    sections = prompt_sections(body)
    text = sections.get("answer", "") + sections.get("response_a", "")
    found = _MARK.search(text)
    fields: dict[str, str] = {}
    if "reasoning" in json.dumps(body):
        fields["reasoning"] = "Because of the marker."
    if found is None:
        fields["verdict"] = "A" if "response_a" in sections else "3"
    elif found.group(1) == "PICK":
        fields["verdict"] = "A"
    else:
        fields["verdict"] = found.group(2)
    return "\n\n".join(f"[[ ## {k} ## ]]\n{v}" for k, v in fields.items()) + "\n\n[[ ## completed ## ]]"


@pytest.fixture
def marker_server():
    with OpenAICompatibleServer(responder) as server:
        yield server


@pytest.fixture
def config(marker_server, tmp_path) -> JudgeConfig:
    return loopback_config(marker_server.base_url, tmp_path / "cache").model_copy(update={"parse_retries": 1})


def task_file(tmp_path: Path, text: str, name: str) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def score_rows(pairs: list[tuple[int, int]], start: int = 0) -> list[dict[str, Any]]:
    """Rows whose loopback score is the first number and whose gold is the second."""
    return [
        {
            "id": f"r{start + i}",
            "prompt": f"Question {start + i}?",
            "response": f"Answer SCORE={said}.",
            "human": gold,
        }
        for i, (said, gold) in enumerate(pairs)
    ]


def test_score_task_judge_score_calibrate_optimize_and_rerun(tmp_path, config, marker_server):
    task = task_file(tmp_path, SCORE_TASK, "grader")
    # said, gold: |errors| = 0, 1, 0, 2, 0 and one out-of-range answer (9) that must fail.
    data = write_jsonl(tmp_path / "data.jsonl", score_rows([(3, 3), (4, 5), (1, 1), (2, 4), (5, 5), (9, 2)]))
    run = verbs.judge(task, data, config, out=tmp_path / "run", progress=False)
    summary = run.summary
    assert (summary["items"], summary["ok"], summary["failed"]) == (6, 5, 1)
    assert summary["failed_ids"] == ["r5"]
    failed = run.set_index("id").loc["r5"]
    assert failed["status"] == "failed" and pd_isna(failed["verdict"])
    results = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    raw = next(r for r in results if r["id"] == "r5")["raw"]
    assert raw and "9" in raw[0]
    figures = summary["agreement"]
    assert summary["gold"] == {"column": "human", "rows": 6, "scored": 5, "not_scored": 1, "normalised": 0}
    assert figures["mae"] == pytest.approx(3 / 5)
    assert figures["rmse"] == pytest.approx((5 / 5) ** 0.5)
    assert figures["exact_agreement"] == pytest.approx(3 / 5)
    assert figures["within_1"] == pytest.approx(4 / 5)

    scored = verbs.score(task, tmp_path / "run", gold=data)
    assert scored.summary["agreement"]["mae"] == pytest.approx(3 / 5)
    assert scored.items.set_index("id").loc["r1", "abs_error"] == 1.0

    calibration = verbs.calibrate(task, [data], [config], out=tmp_path / "cal", n_resamples=100)
    row = calibration.leaderboard.iloc[0]
    assert (
        row["failed"] == 1 and row["accuracy"] == pytest.approx(3 / 5) and row["mae"] == pytest.approx(3 / 5)
    )

    train = write_jsonl(tmp_path / "train.jsonl", score_rows([(2, 2), (4, 4), (5, 3), (1, 1)], start=100))
    dev = write_jsonl(tmp_path / "dev.jsonl", score_rows([(3, 3), (2, 4)], start=200))
    result = verbs.optimize(task, train, dev, config, out=tmp_path / "compiled.json", optimizer="bootstrap")
    assert result.artifact.task == "loopback-grader"
    assert result.artifact.scores["dev_before"].score == pytest.approx((1 + 0.5) / 2)
    demos = result.artifact.program["predict"]["demos"]
    assert 1 <= len(demos) <= 3  # only the examples the loopback got right become demos

    with_program = config.model_copy(update={"program": result.path})
    rerun = verbs.judge(task, data, with_program, out=tmp_path / "run2", progress=False)
    assert rerun.summary["agreement"]["mae"] == pytest.approx(3 / 5)
    assert rerun.summary["failed"] == 1


def pd_isna(value: Any) -> bool:
    return value is None or value != value


def test_unknown_label_is_a_failed_item_never_scored(tmp_path, config):
    task = task_file(tmp_path, LABEL_TASK, "labeller")
    rows = [
        {"id": "a", "answer": "LABEL=right", "gold": "right"},
        {"id": "b", "answer": "LABEL=wrong", "gold": "right"},
        {"id": "c", "answer": "LABEL=maybe", "gold": "wrong"},
        {"id": "d", "answer": "LABEL=wrong", "gold": "wrong"},
    ]
    data = write_jsonl(tmp_path / "labels.jsonl", rows)
    run = verbs.judge(task, data, config, out=tmp_path / "run", progress=False)
    assert run.summary["failed_ids"] == ["c"]
    results = {
        json.loads(line)["id"]: json.loads(line) for line in (tmp_path / "run" / "results.jsonl").open()
    }
    assert any("maybe" in text for text in results["c"]["raw"])
    figures = run.summary["agreement"]
    assert figures["accuracy"] == pytest.approx(2 / 3)
    assert figures["confusion"]["matrix"] == [[1, 1], [0, 1]]
    # kappa by hand: p_o = 2/3; p_e = (2/3·1/3) + (1/3·2/3) = 4/9; κ = (2/3 − 4/9) / (1 − 4/9) = 0.4
    assert figures["kappa"] == pytest.approx(0.4)


def test_pairwise_task_on_loopback_measures_position_bias(tmp_path, config):
    task = task_file(tmp_path, PAIR_TASK, "pairs")
    rows = [
        {
            "id": "p1",
            "q": "Q1",
            "first": "PICK=first short",
            "second": "a longer second answer here",
            "label": 1,
        },
        {
            "id": "p2",
            "q": "Q2",
            "first": "PICK=first, a much longer first answer",
            "second": "short",
            "label": 2,
        },
        {"id": "p3", "q": "Q3", "first": "PICK=first same", "second": "PICK=first same", "label": 0},
    ]
    data = write_jsonl(tmp_path / "pairs.jsonl", rows)
    run = verbs.judge(task, data, config, out=tmp_path / "run", progress=False)
    figures = run.summary["pairs"]
    # The loopback always answers A (the first position): every row is inconsistent -> tie.
    assert figures["position_1_rate"] == 1.0 and figures["position_bias"] == 0.5
    assert figures["consistency"] == 0.0 and figures["win_rate_tie"] == 1.0
    assert run.summary["agreement"]["accuracy"] == pytest.approx(1 / 3)  # only p3 (gold tie) agrees
    prompt = verbs.prompt(task, data, config, row=0)
    assert [call["item"] for call in prompt] == ["p1|AB", "p1|BA"]
    assert "PICK=first short" in prompt[0]["messages"][-1]["content"]
