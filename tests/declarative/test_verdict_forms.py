"""A YAML task's verdict is accepted only in its output kind's literal form, never coerced.

The loopback judge answers each item with the text after ``ANSWER=`` in it (chat fields), so
each row below is one reply. A label that differs from a listed one only in letter case or
spacing is that label and is counted (``normalised_verdicts``); anything else is a failed
item with its raw text and a message naming the problem, asked again once (not six times).
"""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

from jurist.errors import ExitCode
from jurist.testing import OpenAICompatibleServer, last_user_message
from support import loopback_config, run_cli, write_jsonl

_ANSWER = re.compile(r"ANSWER=(.*?)=END", re.S)

LABEL_TASK = """\
name: ticket-router
instructions: Route the support ticket.
inputs: [ticket]
output:
  kind: label
  labels: [billing, account, technical]
  reasoning: false
"""


def answering_judge(body: dict[str, Any]) -> str:
    """Chat fields whose ``verdict`` (and ``confidence``) is the item's ``ANSWER=...=END`` text;
    an item whose answer is ``GARBAGE`` gets a reply with no structure at all."""
    found = _ANSWER.search(last_user_message(body))
    answer = found.group(1) if found else "?"
    if answer == "GARBAGE":
        return "I would rather not use your format."
    verdict, _, confidence = answer.partition("|")
    fields = {"reasoning": "Read it.", "verdict": verdict}
    if confidence:
        fields["confidence"] = confidence
    system = str(body["messages"][0]["content"])
    wanted = [name for name in fields if f"`{name}`" in system]
    return "\n\n".join(f"[[ ## {name} ## ]]\n{fields[name]}" for name in wanted) + "\n\n[[ ## completed ## ]]"


def _write(
    tmp_path: Path, task: str, rows: list[dict[str, Any]], server: OpenAICompatibleServer
) -> list[str]:
    task_file = tmp_path / "task.yaml"
    task_file.write_text(textwrap.dedent(task), encoding="utf-8")
    data = write_jsonl(tmp_path / "rows.jsonl", rows)
    config = loopback_config(server.base_url, tmp_path / "cache").model_copy(update={"concurrency": 1})
    config_file = tmp_path / "judge.yaml"
    config_file.write_text(yaml.safe_dump(config.model_dump(mode="json")), encoding="utf-8")
    out = tmp_path / "run"
    return [
        "judge",
        str(task_file),
        str(data),
        "--config",
        str(config_file),
        "--out",
        str(out),
        "--no-progress",
    ]


def _results(run: Path) -> dict[str, dict[str, Any]]:
    lines = (run / "results.jsonl").read_text(encoding="utf-8").splitlines()
    return {record["id"]: record for record in map(json.loads, lines)}


def test_labels_normalised_counted_refused_and_asked_again_once(tmp_path: Path) -> None:
    rows = [
        {"id": "case", "ticket": "My card was charged twice. ANSWER=Billing=END"},
        {"id": "spacing", "ticket": "I cannot log in. ANSWER=  Account =END"},
        {"id": "exact", "ticket": "The app crashes. ANSWER=technical=END"},
        {"id": "outside", "ticket": "I want my money back. ANSWER=refunds=END"},
        {"id": "garbage", "ticket": "Hello? ANSWER=GARBAGE=END"},
    ]
    with OpenAICompatibleServer(answering_judge) as server:
        args = _write(tmp_path, LABEL_TASK, rows, server)
        assert run_cli(args) == ExitCode.FAILED_ITEMS == 3
        # 1 call each for the three accepted labels; the label outside the list is asked again
        # once (2 calls, no JSON fallback); a reply with no structure keeps its policy: the chat
        # call and DSPy's JSON fallback, asked parse_retries (2) more times (6 calls).
        assert server.requests == 3 + 2 + 6
    run = tmp_path / "run"
    results = _results(run)
    assert results["case"]["output"]["verdict"] == "billing"
    assert results["case"]["output"]["normalised_from"] == "Billing"
    assert results["spacing"]["output"]["verdict"] == "account"
    assert "normalised_from" not in results["exact"]["output"]
    outside = results["outside"]
    assert outside["status"] == "failed" and outside["attempts"] == 2
    assert "'refunds' is not one of billing, account, technical" in outside["error"]
    assert outside["error"].startswith("invalid verdict") and "holds no JSON object" not in outside["error"]
    assert any("refunds" in text for text in outside["raw"])
    assert results["garbage"]["attempts"] == 3 and "could not be parsed" in results["garbage"]["error"]
    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    assert summary["normalised_verdicts"] == 2
    assert summary["verdicts"] == {"account": 1, "billing": 1, "technical": 1}


SCORE_TASK = """\
name: grader
instructions: Grade the answer from 1 to 10.
inputs: [answer]
output:
  kind: score
  range: [1, 10]
"""

LABELS_TASK = """\
name: tagger
instructions: Tag the review.
inputs: [answer]
output:
  kind: labels
  labels: [pos, neg, mixed]
"""

BOOL_TASK = """\
name: checker
instructions: Is the answer supported?
inputs: [answer]
output:
  kind: bool
  confidence: true
"""


@pytest.mark.parametrize(
    ("task", "answers", "refused"),
    [
        (
            SCORE_TASK,
            {"ok": "7", "signed": "+7"},
            {
                "bool": ("True", "expected an integer written as one (like 7), got 'True'"),
                "exponent": ("1e1", "got '1e1'"),
                "hex": ("0x7", "got '0x7'"),
                "comment": ("7 # score", "got '7 # score'"),
                "float": ("7.0", "got '7.0'"),
                "range": ("11", "score 11 is outside the range [1, 10]"),
            },
        ),
        (
            LABELS_TASK,
            {"ok": '["neg", "pos"]', "python": "['mixed']", "case": '["Pos"]'},
            {
                "twice": ('["pos"] ["neg"]', "the field holds more than one value (a list is given once)"),
                "outside": ('["pos", "great"]', "'great' is not one of pos, neg, mixed"),
            },
        ),
        (
            BOOL_TASK,
            {"ok": "true|0.8", "upper": "False|1"},
            {
                "bool-confidence": (
                    "true|true",
                    "field 'confidence': expected a number (like 0.8), got 'true'",
                ),
                "yes": ("yes|0.5", "field 'verdict': expected true or false, got 'yes'"),
                "range": ("true|1.5", "confidence 1.5 is outside [0, 1]"),
            },
        ),
    ],
    ids=["score", "labels", "bool-confidence"],
)
def test_verdicts_only_in_their_literal_forms(
    task: str, answers: dict[str, str], refused: dict[str, tuple[str, str]], tmp_path: Path
) -> None:
    rows = [{"id": key, "answer": f"ANSWER={text}=END"} for key, text in answers.items()]
    rows += [{"id": key, "answer": f"ANSWER={text}=END"} for key, (text, _message) in refused.items()]
    with OpenAICompatibleServer(answering_judge) as server:
        assert run_cli(_write(tmp_path, task, rows, server)) == ExitCode.FAILED_ITEMS
        assert server.requests == len(answers) + 2 * len(refused)  # each refused answer asked again once
    results = _results(tmp_path / "run")
    assert all(results[key]["status"] == "ok" for key in answers)
    for key, (text, message) in refused.items():
        record = results[key]
        assert record["status"] == "failed" and record["output"] is None, key
        assert message in record["error"] and record["error"].startswith("invalid verdict"), record["error"]
        assert any(text.split("|")[0] in raw for raw in record["raw"])
    if task is LABELS_TASK:
        assert results["ok"]["output"]["verdict"] == ["pos", "neg"]  # in the declared order
        assert results["case"]["output"] == {
            "verdict": ["pos"],
            "reasoning": "Read it.",
            "confidence": None,
            "normalised_from": '["Pos"]',
        }
        summary = json.loads((tmp_path / "run" / "summary.json").read_text(encoding="utf-8"))
        assert summary["normalised_verdicts"] == 1
    if task is BOOL_TASK:
        assert (
            results["upper"]["output"]["verdict"] is False and results["upper"]["output"]["confidence"] == 1.0
        )
