"""docs/tutorial.md runs as written: its offline steps give the figures it quotes, and its
keyless step judges through a local OpenAI-compatible server with a fixed reply."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from jurist.testing import OpenAICompatibleServer
from support import run_cli

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "support-answers"
TASK, DATA = EXAMPLE / "task.yaml", EXAMPLE / "answers.csv"
TUTORIAL = (ROOT / "docs" / "tutorial.md").read_text(encoding="utf-8")


def test_the_offline_steps_print_and_score_what_the_tutorial_says(tmp_path: Path, capsys) -> None:
    out = tmp_path / "runs" / "support-baseline"
    assert run_cli(["judge", str(TASK), str(DATA), "--out", str(out), "--no-progress"]) == 0
    assert "16 items: 16 scored, 0 failed" in capsys.readouterr().out
    assert "`16 items: 16 scored, 0 failed`" in TUTORIAL
    assert run_cli(["score", str(TASK), str(out), "--gold", str(DATA), "--json"]) == 0
    agreement = json.loads(capsys.readouterr().out)["agreement"]
    quoted = re.search(r"MAE\s+(\d\.\d\d) and QWK (\d\.\d\d)", TUTORIAL)
    assert quoted is not None
    assert f"{agreement['mae']:.2f}" == quoted.group(1)
    assert f"{agreement['qwk']:.2f}" == quoted.group(2)
    board = tmp_path / "calibration"
    assert run_cli(["calibrate", str(TASK), "--gold", str(DATA), "-c", "baseline", "--out", str(board)]) == 0
    assert (board / "leaderboard.html").is_file()


def test_the_keyless_step_judges_through_a_local_server(tmp_path: Path, capsys, monkeypatch) -> None:
    reply = re.search(r"printf '(.*?)' > reply.txt", TUTORIAL)
    assert reply is not None
    text = reply.group(1).encode().decode("unicode_escape")
    monkeypatch.setenv("LOCAL_LLM_KEY", "anything")
    with OpenAICompatibleServer(text) as server:
        out = tmp_path / "runs" / "support-local"
        args = ["judge", str(TASK), str(DATA), "-c", str(ROOT / "configs" / "local-openai-compatible.yaml")]
        args += ["--api-base", server.base_url, "--cache-dir", str(tmp_path / "cache"), "--out", str(out)]
        assert run_cli([*args, "--no-progress"]) == 0
    assert "16 items: 16 scored, 0 failed; judged now 16: 16 provider calls" in capsys.readouterr().out
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    assert {row["output"]["verdict"] for row in rows} == {4}


@pytest.mark.parametrize("page", sorted(p.name for p in (ROOT / "docs").glob("*.md")))
def test_every_docs_page_is_listed_in_the_index(page: str) -> None:
    if page == "index.md":
        return
    assert f"({page}" in (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
