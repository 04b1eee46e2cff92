"""The judge a task's parts make (``Task.make_judge``, overridden by no such task): the
refusal of an LLM judge by a task without a program (and where it points), the task's DSPy
adapter and weighing on its LLM judge, compiled or not, and the task a compiled program must
have been compiled for (``program_task``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import dspy
import pytest
from pydantic import BaseModel

from jurist.datasets.samples import resolve_input
from jurist.errors import ArtifactError, ConfigError
from jurist.judges.adapters import make_adapter
from jurist.judges.config import JudgeConfig
from jurist.judges.judge import BaselineJudge, Judge, LLMJudge
from jurist.optimization._artifact import program_state
from jurist.tasks import Task, get_task
from support import run_cli, write_compiled

MODEL = JudgeConfig(model="openai/some-model", api_base="http://127.0.0.1:9/v1", cache=False)
PAIRWISE_GOLD_REFUSAL = (
    "task 'pairwise-gold' cannot run an LLM judge: it judges with the offline baseline only; "
    "use `jurist judge pairwise` for an LLM judge"
)


class _Offline(Task):
    """A task with an offline judge only."""

    name = "test-offline-only"

    def baseline(self, options: BaseModel) -> Judge:
        return BaselineJudge(lambda text: {"verdict": True}, name="always", version="1")


class _Nothing(Task):
    """A task with no judge at all."""

    name = "test-no-judge"


class _Program(dspy.Module):
    def __init__(self) -> None:
        super().__init__()
        self.judge = dspy.Predict("text -> verdict: bool")

    def forward(self, text: str) -> Any:
        return self.judge(text=text)


def _weigh(output: dict[str, Any], logprobs: Any) -> dict[str, Any]:
    return {**output, "weighed": True}


class _Parts(Task):
    """A task with an LLM program, its own adapter and weighing, and a compiled-for name."""

    name = "test-parts part"
    program_task = "test-parts"

    def program(self, options: BaseModel) -> dspy.Module:
        return _Program()

    def adapter(self, options: BaseModel, name: str) -> Any:
        def make() -> Any:
            adapter = make_adapter(name)
            adapter.made_by = ("test-parts", name)
            return adapter

        return make

    def weigh(self, options: BaseModel) -> Any:
        return _weigh


def _artifact(task: str, path: Path) -> Path:
    state = program_state(_Program())
    state["judge"]["signature"]["instructions"] = "Compiled."
    return write_compiled(task, state, path, MODEL)


def test_pairwise_gold_refuses_an_llm_judge_and_points_to_pairwise(tmp_path: Path, capsys):
    task = get_task("pairwise-gold")
    assert type(task).make_judge is Task.make_judge
    assert isinstance(task.make_judge(JudgeConfig(), task.options()), BaselineJudge)
    pairs = str(resolve_input("sample:pairs"))
    missing = tmp_path / "missing.json"
    for name, text in (
        ("model", f"model: {MODEL.model}\n"),
        ("program", f"program: {json.dumps(str(missing))}\n"),
    ):
        config = tmp_path / f"{name}.yaml"
        config.write_text(text, encoding="utf-8")
        out = tmp_path / name
        assert (
            run_cli(["judge", "pairwise-gold", pairs, "-c", str(config), "--out", str(out), "--no-progress"])
            == 2
        )
        assert PAIRWISE_GOLD_REFUSAL in capsys.readouterr().err
        assert not out.exists()  # refused before anything is written


def test_a_task_without_a_program_says_which_tasks_can():
    with pytest.raises(ConfigError) as offline:
        _Offline().make_judge(MODEL, _Offline().options())
    assert str(offline.value) == (
        "field 'task': task 'test-offline-only' cannot run an LLM judge: it judges with the offline "
        "baseline only; the tasks that can list 'prompt' among their verbs (`jurist tasks`)"
    )
    with pytest.raises(
        ConfigError, match="task 'test-no-judge' cannot run an LLM judge: it has no LLM program"
    ):
        _Nothing().make_judge(MODEL, _Nothing().options())


def test_the_task_adapter_and_weighing_are_on_its_llm_judge(tmp_path: Path):
    task = _Parts()
    options = task.options()
    judge = task.make_judge(MODEL.model_copy(update={"adapter": "json"}), options)
    assert isinstance(judge, LLMJudge)
    assert judge.adapter.made_by == ("test-parts", "json") and judge.weigh is _weigh
    # A program compiled for the task it names (not its own name) loads, with the same parts.
    compiled = task.make_judge(JudgeConfig(program=_artifact("test-parts", tmp_path / "a.json")), options)
    assert isinstance(compiled, LLMJudge)
    assert compiled.program.dump_state()["judge"]["signature"]["instructions"] == "Compiled."
    assert compiled.adapter.made_by == ("test-parts", "chat") and compiled.weigh is _weigh
    own = JudgeConfig(program=_artifact("test-parts part", tmp_path / "b.json"))
    with pytest.raises(ArtifactError, match="compiled for the task 'test-parts part', not 'test-parts'"):
        task.make_judge(own, options)
    # A task that declares neither keeps jurist's adapter and outputs as given.
    plain = type("_Plain", (_Parts,), {"adapter": Task.adapter, "weigh": Task.weigh})()
    judge = plain.make_judge(MODEL, options)
    assert isinstance(judge, LLMJudge)
    assert not hasattr(judge.adapter, "made_by") and judge.weigh is None
