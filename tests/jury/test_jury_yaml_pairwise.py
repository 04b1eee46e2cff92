"""A jury of a YAML pairwise task votes per row on each juror's verdict after the swap rule.

Each row is asked in both orders (``ID|AB``, ``ID|BA``). Three simulated jurors on loopback
servers: one picks the response marked better in the prompt, one the response marked worse,
and one always the first position (a tie on every row once both orders are combined). The
jury's verdicts and its agreement with gold are computed here from those rules.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jury_simulation import PAIR_TASK, fleiss_kappa, juror_line, task_file, write_jury

from jurist import verbs
from jurist.testing import OpenAICompatibleServer
from support import prompt_sections, write_jsonl

ROWS = 12


def _answer(choice: str) -> str:
    return f"[[ ## reasoning ## ]]\nCompared.\n\n[[ ## verdict ## ]]\n{choice}\n\n[[ ## completed ## ]]"


def _picker(rule: str):
    def respond(body: dict[str, Any]) -> str:
        sections = prompt_sections(body)
        if rule == "first":
            return _answer("A")
        wanted = "better" if rule == "right" else "worse"
        return _answer("A" if wanted in sections.get("response_a", "") else "B")

    return respond


RULES = ("right", "contrary", "first")


def _rows() -> list[dict[str, Any]]:
    rows = []
    for i in range(ROWS):
        good_first = i % 3 != 0
        good, bad = f"Answer {i}, the better one.", f"Answer {i}, the worse one."
        rows.append(
            {
                "id": f"r{i}",
                "question": f"Question {i}?",
                "response_a": good if good_first else bad,
                "response_b": bad if good_first else good,
                "label": "A" if good_first else "B",
            }
        )
    return rows


@pytest.fixture(scope="module")
def servers():
    started = {rule: OpenAICompatibleServer(_picker(rule)).start() for rule in RULES}
    yield started
    for server in started.values():
        server.stop()


def _verdict(rule: str, gold: str) -> str:
    return {"right": gold, "contrary": "B" if gold == "A" else "A", "first": "tie"}[rule]


@pytest.mark.parametrize(
    ("jurors", "aggregate"),
    [
        ({"right": "right", "first": "first", "right-too": "right"}, "majority"),
        ({"right": "right", "contrary": "contrary", "first": "first"}, "plurality"),
    ],
    ids=["majority-of-right", "three-way-split"],
)
def test_a_yaml_pairwise_jury_votes_on_each_rows_verdict_after_the_swap_rule(
    jurors: dict[str, str], aggregate: str, servers, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JURIST_TEST_API_KEY", "test-key")
    task = task_file(tmp_path, PAIR_TASK, "pairs")
    rows = _rows()
    data = write_jsonl(tmp_path / "pairs.jsonl", rows)
    lines = [juror_line(name, servers[rule].base_url, tmp_path / "cache") for name, rule in jurors.items()]
    jury = write_jury(tmp_path / "jury.yaml", lines, aggregate)
    run = verbs.judge(task, data, jury, out=tmp_path / "run", progress=False)

    votes = [[_verdict(rule, row["label"]) for rule in jurors.values()] for row in rows]
    expected = []
    for row_votes in votes:
        top = max(row_votes.count(v) for v in row_votes)
        winners = {v for v in row_votes if row_votes.count(v) == top}
        decided = len(winners) == 1 and (aggregate == "plurality" or top * 2 > len(row_votes))
        expected.append(winners.pop() if decided else "tie")
    assert _row_verdicts(tmp_path / "run") == {row["id"]: v for row, v in zip(rows, expected, strict=True)}
    gold_rate = sum(v == row["label"] for row, v in zip(rows, expected, strict=True)) / ROWS
    assert run.summary["agreement"]["accuracy"] == pytest.approx(gold_rate)
    assert run.summary["jury"]["agreement"]["fleiss_kappa"] == pytest.approx(fleiss_kappa(votes))

    # Judged again: every juror's run and the jury's are complete, nothing is asked.
    before = {rule: server.requests for rule, server in servers.items()}
    verbs.judge(task, data, jury, out=tmp_path / "run", progress=False)
    assert {rule: server.requests for rule, server in servers.items()} == before


def _row_verdicts(run_dir: Path) -> dict[str, str]:
    """Each row's verdict from the jury run's two orders (the task's own combination)."""
    by_row: dict[str, dict[str, str]] = {}
    for line in (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines():
        result = json.loads(line)
        row, order = result["id"].rsplit("|", 1)
        by_row.setdefault(row, {})[order] = result["output"]["verdict"]
    swap = {"A": "B", "B": "A", "tie": "tie"}
    combined = {}
    for row, orders in by_row.items():
        first, second = orders["AB"], swap[orders["BA"]]
        combined[row] = first if first == second else "tie"
    return combined
