"""Artifacts: what they hold, and every bad one refused with a message that says what to do."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jurist.cli import main
from jurist.errors import ArtifactError
from jurist.judges.config import JudgeConfig
from jurist.optimization import (
    Artifact,
    DataSplit,
    SplitScore,
    load_judge_program,
    load_program,
    read_artifact,
    write_artifact,
)
from jurist.optimization._artifact import program_state
from jurist.programs.pairwise.program import PairwiseJudgeProgram
from jurist.programs.ragbench.program import RagbenchJudge
from jurist.runner import versions
from jurist.tasks import get_task


def _artifact(
    task: str = "pairwise", num_options: int = 2, cache_dir: Path = Path("unused-cache"), **changes
) -> Artifact:
    program = PairwiseJudgeProgram(num_options) if task == "pairwise" else RagbenchJudge()
    state = program_state(program)
    name = next(iter(state))
    state[name]["signature"]["instructions"] = "Compiled instructions."
    state[name]["demos"] = [{"augmented": True, "question": "q", "choice": "A"}]
    values = {
        "task": task,
        "options": {"num_options": num_options} if task == "pairwise" else {},
        "optimizer": {"name": "bootstrap", "settings": {}},
        "judge_config": JudgeConfig(
            model="openai/compiled-for", api_base="http://127.0.0.1:9/v1", cache_dir=cache_dir
        ).model_dump(mode="json", exclude={"program"}),
        "data": {"train": DataSplit(path="t", sha256="0" * 64, examples=1), "dev": None, "test": None},
        "versions": versions(),
        "scores": {"dev_before": SplitScore(metric="m", score=0.5, examples=2, scored=2, failed=0)},
        "created_at": "2026-01-01T00:00:00+00:00",
        "program": state,
    }
    values.update(changes)
    return Artifact(**values)


def _write(tmp_path: Path, data: dict | str, name: str = "artifact.json") -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def make_pairwise_judge(config: JudgeConfig, num_options: int):
    """The judge the pairwise task makes for ``config`` with ``num_options`` options."""
    task = get_task("pairwise")
    return task.make_judge(config, task.options({"num_options": num_options}))


def _data(artifact: Artifact) -> dict:
    return artifact.model_dump(mode="json")


def test_an_artifact_round_trips_into_the_judge(tmp_path):
    path = write_artifact(_artifact(), tmp_path / "a.json")
    program, artifact = load_program(
        path, task="pairwise", program=PairwiseJudgeProgram(2), options={"num_options": 2}
    )
    assert program.choose.signature.instructions == "Compiled instructions."
    assert len(program.choose.demos) == 1 and program.choose.lm is None
    assert artifact.config().model == "openai/compiled-for"


def test_judge_uses_the_artifacts_config_when_none_is_given(tmp_path, caplog):
    path = write_artifact(_artifact(cache_dir=tmp_path / "cache"), tmp_path / "a.json")
    judge = make_pairwise_judge(JudgeConfig(program=path), 2)
    assert judge.name == "openai/compiled-for"
    assert judge.program.choose.signature.instructions == "Compiled instructions."
    # Another model is used as given, with a warning.
    program, runtime = load_judge_program(
        JudgeConfig(model="openai/other", program=path),
        task="pairwise",
        program=PairwiseJudgeProgram(2),
        options={"num_options": 2},
    )
    assert runtime.model == "openai/other"
    assert "compiled for openai/compiled-for" in caplog.text


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json {", "not a JSON file"),
        (json.dumps({"choose": {"demos": []}}), "not a jurist compiled-program artifact"),
        ("[1, 2]", "not a jurist compiled-program artifact"),
    ],
)
def test_files_that_are_not_artifacts_are_refused(tmp_path, content, message):
    with pytest.raises(ArtifactError, match=message):
        read_artifact(_write(tmp_path, content))


def test_a_plain_dspy_save_file_is_refused(tmp_path):
    plain = tmp_path / "plain.json"
    PairwiseJudgeProgram(2).save(str(plain))
    with pytest.raises(ArtifactError, match="plain DSPy program.save"):
        make_pairwise_judge(JudgeConfig(model="openai/x", program=plain), 2)


def test_a_newer_format_version_is_refused(tmp_path):
    data = _data(_artifact())
    data["format_version"] = 2
    with pytest.raises(
        ArtifactError, match=r"newer jurist \(artifact format version 2; this jurist reads up to 1\)"
    ):
        read_artifact(_write(tmp_path, data))
    data["format_version"] = "1"
    with pytest.raises(ArtifactError, match="format_version must be a positive integer"):
        read_artifact(_write(tmp_path, data))


def test_another_dspy_minor_version_is_refused(tmp_path):
    data = _data(_artifact())
    data["versions"]["dspy"] = "3.3.2"
    with pytest.raises(ArtifactError, match=r"compiled with DSPy 3\.3\.2.*recompile"):
        read_artifact(_write(tmp_path, data))


def test_a_malformed_artifact_names_the_field(tmp_path):
    data = _data(_artifact())
    del data["task"]
    with pytest.raises(ArtifactError, match="field 'task'"):
        read_artifact(_write(tmp_path, data))


def test_an_artifact_of_another_task_is_refused(tmp_path):
    path = write_artifact(_artifact("ragbench"), tmp_path / "rb.json")
    with pytest.raises(ArtifactError, match="compiled for the task 'ragbench', not 'pairwise'"):
        make_pairwise_judge(JudgeConfig(model="openai/x", program=path), 2)
    pairwise = write_artifact(_artifact("pairwise"), tmp_path / "pw.json")
    ragbench = get_task("ragbench")
    with pytest.raises(ArtifactError, match="compiled for the task 'pairwise', not 'ragbench'"):
        ragbench.make_judge(JudgeConfig(model="openai/x", program=pairwise), ragbench.options())


def test_an_artifact_for_other_options_is_refused(tmp_path):
    path = write_artifact(_artifact(num_options=3), tmp_path / "a.json")
    with pytest.raises(ArtifactError, match="options num_options=3, but this judge runs with num_options=2"):
        make_pairwise_judge(JudgeConfig(model="openai/x", program=path), 2)


def test_a_program_state_of_another_shape_is_refused(tmp_path):
    data = _data(_artifact())
    data["program"] = {"other": data["program"]["choose"]}
    with pytest.raises(ArtifactError, match=r"parts \['other'\].*has \['choose'\]"):
        make_pairwise_judge(JudgeConfig(model="openai/x", program=_write(tmp_path, data)), 2)
    data = _data(_artifact())
    data["program"]["choose"]["signature"]["fields"].pop()
    with pytest.raises(ArtifactError, match="does not match"):
        make_pairwise_judge(JudgeConfig(model="openai/x", program=_write(tmp_path, data)), 2)


def test_an_artifact_never_sets_the_lm(tmp_path):
    data = _data(_artifact())
    data["program"]["choose"]["lm"] = {"model": "openai/evil", "api_base": "http://evil.example/v1"}
    program, _ = load_program(
        _write(tmp_path, data), task="pairwise", program=PairwiseJudgeProgram(2), options={"num_options": 2}
    )
    assert program.choose.lm is None


def test_the_cli_reports_a_bad_artifact_in_one_line(tmp_path, capsys):
    path = write_artifact(_artifact("ragbench"), tmp_path / "rb.json")
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(json.dumps({"id": "1", "question": "q", "response_1": "a", "response_2": "b"}) + "\n")
    with pytest.raises(SystemExit) as exit_info:
        main(["judge", "pairwise", str(pairs), "--out", str(tmp_path / "out"), "--program", str(path)])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "compiled for the task 'ragbench'" in err and "Traceback" not in err
