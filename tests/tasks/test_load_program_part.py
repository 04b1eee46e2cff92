"""How a compiled program loads is one declared part of a task (``Task.load_program``): a
Python task that declares only that part gets its own kind of compiled program loaded
through ``jurist judge -c CONFIG`` (the config naming the program), by the contract's
``make_judge``; what ``judge_options`` hands over of the data keys the judge's finished
verdicts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import dspy
import pytest
import yaml
from pydantic import BaseModel, ConfigDict, PrivateAttr

from jurist.judges.config import JudgeConfig
from jurist.judges.judge import LLMJudge
from jurist.runner import Item
from jurist.tasks import Task, register_task
from jurist.testing import OpenAICompatibleServer
from support import last_user_message, run_cli

TEXTS = [{"id": "a", "text": "HELLO"}, {"id": "b", "text": "hello"}]


class _Texts:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]

    def describe(self) -> dict[str, Any]:
        return {"path": str(self.path), "sha256": "0" * 64, "items": len(self.rows)}


class _LoadsItsWay(Task):
    """A task whose compiled program is a plain JSON file of instructions (no artifact)."""

    name = "test-loads-its-way"
    inputs = {"text": "the text"}
    outputs = {"verdict": "true when every letter is a capital"}

    def read(self, path: str | Path, options: BaseModel) -> _Texts:
        return _Texts(Path(path))

    def items(self, dataset: _Texts, options: BaseModel) -> list[Item]:
        return [Item(id=row["id"], inputs={"text": row["text"]}) for row in dataset.rows]

    def program(self, options: BaseModel) -> dspy.Module:
        return dspy.Predict("text -> verdict: bool")

    def load_program(self, config: JudgeConfig, program: dspy.Module, options: BaseModel) -> JudgeConfig:
        assert config.program is not None
        saved = json.loads(config.program.read_text(encoding="utf-8"))
        program.signature = program.signature.with_instructions(saved["instructions"])
        return config.model_copy(update={"temperature": saved["temperature"]})


def _reply(body: dict[str, Any]) -> str:
    capitals = "HELLO" in last_user_message(body)
    return f"[[ ## verdict ## ]]\n{capitals}\n\n[[ ## completed ## ]]"


def test_a_task_declaring_only_its_load_part_runs_its_compiled_program(tmp_path: Path, monkeypatch, capsys):
    monkeypatch.setenv("JURIST_TEST_API_KEY", "loopback-test-key")
    register_task(_LoadsItsWay)
    assert _LoadsItsWay.make_judge is Task.make_judge
    data = tmp_path / "texts.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in TEXTS), encoding="utf-8")
    saved = tmp_path / "saved.json"
    saved.write_text(json.dumps({"instructions": "Answer in capitals only.", "temperature": 0.25}))
    with OpenAICompatibleServer(_reply) as server:
        config = tmp_path / "judge.yaml"
        config.write_text(
            yaml.safe_dump(
                {
                    "model": "openai/loopback-judge",
                    "api_base": server.base_url,
                    "api_key_env": "JURIST_TEST_API_KEY",
                    "cache_dir": str(tmp_path / "cache"),
                    "program": str(saved),
                }
            ),
            encoding="utf-8",
        )
        out = tmp_path / "run"
        args = [
            "judge",
            "test-loads-its-way",
            str(data),
            "-c",
            str(config),
            "--out",
            str(out),
            "--no-progress",
        ]
        assert run_cli(args) == 0
        bodies = list(server.bodies)
    assert len(bodies) == 2
    # The program loaded its way: the saved instructions in every prompt, its config's temperature.
    assert all("Answer in capitals only." in body["messages"][0]["content"] for body in bodies)
    assert {body["temperature"] for body in bodies} == {0.25}
    results = {
        row["id"]: row["output"]
        for row in map(json.loads, (out / "results.jsonl").read_text(encoding="utf-8").splitlines())
    }
    assert results == {"a": {"verdict": True}, "b": {"verdict": False}}
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["config"]["program"] == str(saved) and manifest["config"]["temperature"] == 0.25
    capsys.readouterr()


def test_the_default_load_part_refuses_a_missing_program(tmp_path: Path):
    from jurist.errors import InputError

    task = _LoadsItsWay()
    with pytest.raises(InputError, match="compiled program not found"):
        Task.load_program(
            task, JudgeConfig(program=tmp_path / "none.json"), task.program(task.options()), task.options()
        )


class _CorpusOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    _corpus: dict[str, str] | None = PrivateAttr(default=None)


class _Handed(_LoadsItsWay):
    """A task whose judge gets data besides its items (as heritage's BM25 texts)."""

    name = "test-handed-data"
    Options = _CorpusOptions


def _scope(corpus: dict[str, str] | None) -> str:
    task = _Handed()
    options = task.options()
    options._corpus = corpus
    judge = task.make_judge(
        JudgeConfig(model="openai/m", api_base="http://127.0.0.1:9/v1", cache=False), options
    )
    assert isinstance(judge, LLMJudge) and judge.verdict_scope is not None
    return judge.verdict_scope


def test_what_judge_options_hands_over_keys_the_finished_verdicts():
    plain = json.loads(_scope(None))
    assert "judge_data" not in plain  # nothing handed over: the scope of every task as before
    one, other = json.loads(_scope({"d1": "a text"})), json.loads(_scope({"d1": "another text"}))
    assert one["judge_data"] != other["judge_data"]
    assert {k: v for k, v in one.items() if k != "judge_data"} == plain
