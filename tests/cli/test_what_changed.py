"""Messages that say what changed: a finished run judged again prints the calls made now (0),
a refused resume names the config fields that differ, and a refused command leaves no
folder behind."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import run_cli, write_jsonl

import jurist
from jurist.errors import RowError
from jurist.testing import OpenAICompatibleServer

TASK = """\
name: helpful
instructions: Rate the answer from 1 to 5.
inputs: [answer]
output: {kind: score, range: [1, 5], reasoning: false}
gold: human
"""


def _answer(body: dict) -> str:
    return "[[ ## verdict ## ]]\n4\n\n[[ ## completed ## ]]"


@pytest.fixture
def llm(tmp_path: Path):
    """A YAML task, three rows, and a judge config for a loopback model."""
    with OpenAICompatibleServer(_answer) as server:
        task = tmp_path / "task.yaml"
        task.write_text(TASK, encoding="utf-8")
        data = write_jsonl(
            tmp_path / "rows.jsonl", [{"id": f"r{i}", "answer": "ok", "human": 4} for i in range(3)]
        )
        config = tmp_path / "judge.yaml"
        config.write_text(
            f"model: openai/loopback-judge\napi_base: '{server.base_url}'\napi_key_env: JURIST_TEST_API_KEY\n"
            f"cache_dir: '{tmp_path / 'cache'}'\nretry_max_wait: 0.2\ntemperature: 0\n",
            encoding="utf-8",
        )
        yield task, data, config, server


def test_rerun_prints_the_calls_made_now_and_a_refused_resume_names_what_differs(llm, tmp_path, capsys):
    task, data, config, server = llm
    out = str(tmp_path / "run")
    command = ["judge", str(task), str(data), "--config", str(config), "--out", out, "--no-progress"]
    assert run_cli(command) == 0
    first = capsys.readouterr().out
    assert "3 items: 3 scored, 0 failed; judged now 3: 3 provider calls, 0 cache hits" in first
    assert server.requests == 3
    assert run_cli(command) == 0
    again = capsys.readouterr().out
    assert (
        "3 items: 3 scored, 0 failed; judged now 0 (3 already judged): 0 provider calls, 0 cache hits"
        in again
    )
    assert "usage now: 0 prompt + 0 completion tokens, $0; the whole run: " in again
    assert server.requests == 3
    warmer = tmp_path / "warmer.yaml"
    warmer.write_text(config.read_text(encoding="utf-8").replace("temperature: 0", "temperature: 0.3"))
    assert (
        run_cli(["judge", str(task), str(data), "--config", str(warmer), "--out", out, "--no-progress"]) == 2
    )
    error = capsys.readouterr().err
    assert "holds a run of another judge config (temperature 0 → 0.3)" in error
    assert "fingerprint" not in error


def test_a_refused_command_leaves_no_folder(llm, tmp_path, capsys):
    task, data, config, server = llm
    out = tmp_path / "new" / "run"
    # A cost limit needs the model's price: refused before anything is judged.
    command = ["judge", str(task), str(data), "--config", str(config), "--out", str(out), "--max-cost", "1"]
    assert run_cli(command) == 2
    assert "no price for model" in capsys.readouterr().err
    assert not (tmp_path / "new").exists() and server.requests == 0
    # Rows given in memory that the task's reader refuses: their input.jsonl goes too.
    with pytest.raises(RowError):
        jurist.judge(task, [{"answer": "ok", "human": 9}], out=out, progress=False)
    assert not (tmp_path / "new").exists()
    for verb in (["calibrate", str(task), "--gold", str(tmp_path / "none.csv"), "-c", "baseline"],):
        assert run_cli([*verb, "--out", str(out)]) == 2
        assert not (tmp_path / "new").exists()
