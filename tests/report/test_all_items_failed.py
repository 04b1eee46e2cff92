"""A judge whose every answer is unusable still gives a finished run, not a crash.

Every item is recorded as failed with its raw answer; ``jurist judge`` exits 3 (completed
with failed items) and still writes the exports and the HTML report, whose figures leave
out what nobody answered. Checked for every task that judges through a model, against a
loopback server that answers prose the judge cannot parse.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from tests.support import run_cli

from jurist.errors import ExitCode
from jurist.testing import OpenAICompatibleServer

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

CASES = {
    "ragbench": ["ragbench", "sample:ragbench"],
    "pairwise": ["pairwise", "sample:pairs"],
    "heritage": ["heritage", "sample:heritage"],
    "yaml": [
        str(EXAMPLES / "context-faithfulness" / "task.yaml"),
        str(EXAMPLES / "context-faithfulness" / "rows.jsonl"),
    ],
}


@pytest.fixture(scope="module")
def prose_server():
    with OpenAICompatibleServer("I would rather not say.") as server:
        yield server


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_run_whose_every_answer_fails_is_reported_not_crashed(
    case: str, prose_server: OpenAICompatibleServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JURIST_TEST_API_KEY", "test-key")
    config = tmp_path / "judge.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "model": "openai/prose-judge",
                "api_base": prose_server.base_url,
                "api_key_env": "JURIST_TEST_API_KEY",
                "cache_dir": str(tmp_path / "cache"),
                "parse_retries": 0,
                "concurrency": 8,
            }
        ),
        encoding="utf-8",
    )
    out = tmp_path / "run"
    code = run_cli(["judge", *CASES[case], "--config", str(config), "--out", str(out), "--no-progress"])
    assert code == ExitCode.FAILED_ITEMS
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["failed"] > 0 and summary.get("ok", 0) == 0
    results = [json.loads(line) for line in (out / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    assert results and all(r["status"] == "failed" and r["raw"] for r in results)
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "<dt>status</dt><dd>finished: all items failed</dd>" in page
    assert isinstance(json.loads((out / "figures.json").read_text(encoding="utf-8")), list)
