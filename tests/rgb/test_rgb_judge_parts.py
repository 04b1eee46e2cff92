"""The Rej* and ED* judges are made by the task contract from their parts, for the tasks
``rgb-rejection`` / ``rgb-error-detection`` and for each RGB suite setting that judges its
answers, so a compiled program loads the same way into both: the artifact check uses the
task the program was compiled for (``Task.program_task``), not the suite part's own name. The
model under test (each setting's answer part) is made of parts too, a saved responder
loaded by its own load part (``Task.load_program``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from jurist.errors import ArtifactError
from jurist.judges.config import JudgeConfig
from jurist.judges.judge import BaselineJudge, LLMJudge
from jurist.optimization._artifact import program_state
from jurist.programs.rgb.program import ErrorDetectionJudge, RejectionJudge
from jurist.tasks import Task, get_task
from jurist.tasks.rgb import make_rgb_judge
from support import write_compiled


def _artifact(task: str, path: Path) -> Path:
    program = RejectionJudge() if task == "rgb-rejection" else ErrorDetectionJudge()
    state = program_state(program)
    state["judge"]["signature"]["instructions"] = f"Compiled instructions of {task}."
    return write_compiled(task, state, path)


def _instructions(judge: LLMJudge) -> str:
    return str(judge.program.dump_state()["judge"]["signature"]["instructions"])


def test_the_suite_loads_compiled_judges_through_the_generic_path(tmp_path: Path):
    rejection = _artifact("rgb-rejection", tmp_path / "rej.json")
    detection = _artifact("rgb-error-detection", tmp_path / "ed.json")
    suite = get_task("rgb")
    recipe = suite.plan("sample:rgb", suite.options({"judge_program": [str(detection), str(rejection)]}))
    judged = [part for part in recipe.parts if part.reads is not None]
    assert {type(part.task).__name__ for part in judged} == {
        "RGBAnswersRejection",
        "RGBAnswersErrorDetection",
    }
    for part in judged:
        task = part.task
        assert type(task).make_judge is Task.make_judge  # no judge of its own: the task's parts
        assert task.name.startswith("rgb ") and task.name != task.program_task
        judge = task.make_judge(part.config, part.options)
        assert isinstance(judge, LLMJudge)
        assert _instructions(judge) == f"Compiled instructions of {task.program_task}."
        assert judge.config.model == "openai/compiled-for"  # the artifact's own config runs it
        # The standalone task loads the same artifact into the same judge, and their finished
        # verdicts share one scope.
        alone = get_task(task.program_task)
        same = alone.make_judge(part.config, alone.options())
        assert isinstance(same, LLMJudge)
        assert same.fingerprint() == judge.fingerprint()
        assert same.verdict_scope is not None and same.verdict_scope == judge.verdict_scope
        # An artifact of the other judge is refused, naming both tasks.
        other = detection if task.program_task == "rgb-rejection" else rejection
        with pytest.raises(ArtifactError, match=f"not '{task.program_task}'"):
            task.make_judge(JudgeConfig(program=other), part.options)


def test_make_rgb_judge_is_the_task_judge(tmp_path: Path):
    assert isinstance(make_rgb_judge("rejection"), BaselineJudge)
    detection = get_task("rgb-error-detection")
    assert make_rgb_judge("error_detection", JudgeConfig()).fingerprint() == (
        detection.make_judge(JudgeConfig(), detection.options()).fingerprint()
    )
    rejection = _artifact("rgb-rejection", tmp_path / "rej.json")
    judge = make_rgb_judge("rejection", JudgeConfig(program=rejection))
    assert isinstance(judge, LLMJudge) and _instructions(judge) == "Compiled instructions of rgb-rejection."


# --------------------------------------------------------------------------- the model under test
#
# RGB's answer part is made of parts too (its program, postprocess, baseline, and how a saved
# responder loads). The fingerprints are pinned from when an override of make_judge made them,
# so answer runs made before resume.

ANSWER_LLM = JudgeConfig(model="openai/pinned", api_base="http://127.0.0.1:9/v1", cache=False)


def _answers(language: str) -> tuple[Task, Any]:
    from jurist.tasks.rgb.parts import RGBAnswerOptions, RGBAnswers
    from jurist.tasks.rgb.run import RGBSetting

    setting = RGBSetting(
        dataset=language, language=language, kind="plain", path=Path("x.json"), noise_rate=0.2
    )
    options = RGBAnswerOptions(
        language=language, kind="plain", noise_rate=0.2, passage_num=5, correct_rate=0.0, seed=2333
    )
    return RGBAnswers(setting), options


@pytest.mark.parametrize(
    ("language", "fingerprint", "saved"),
    [("en", "78e42d59ae53e551", "52abce3af70fb256"), ("zh", "eb6af880072c0cb8", "62222f0bc6e06996")],
)
def test_the_model_under_test_keeps_its_fingerprints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, language: str, fingerprint: str, saved: str
):
    from jurist.datasets.rgb.loader import load_rgb_prompts
    from jurist.programs.rgb.program import RGBResponder

    task, options = _answers(language)
    assert type(task).make_judge is Task.make_judge
    judge = task.make_judge(ANSWER_LLM, options)
    assert isinstance(judge, LLMJudge) and judge.fingerprint() == fingerprint
    assert judge.verdict_scope is not None
    baseline = task.make_judge(JudgeConfig(), options)
    assert isinstance(baseline, BaselineJudge) and baseline.fingerprint() == "8872ec03666210b4"
    assert baseline.name == "rgb-extractive-baseline"
    # A responder saved by DSPy (not an artifact) loads as it is, and runs with the config given.
    monkeypatch.chdir(tmp_path)  # the program's path is part of the fingerprint: pinned relative
    RGBResponder(load_rgb_prompts()[language]).save(f"resp-{language}.json")
    compiled = task.make_judge(
        ANSWER_LLM.model_copy(update={"program": Path(f"resp-{language}.json")}), options
    )
    assert isinstance(compiled, LLMJudge) and compiled.fingerprint() == saved
    assert compiled.config.model == "openai/pinned"


def test_a_saved_responder_needs_a_model_and_a_file(tmp_path: Path):
    from jurist.errors import ConfigError, InputError

    task, options = _answers("en")
    with pytest.raises(ConfigError, match="name one"):
        task.make_judge(JudgeConfig(program=tmp_path / "resp.json"), options)
    with pytest.raises(InputError, match="compiled program not found"):
        task.make_judge(ANSWER_LLM.model_copy(update={"program": tmp_path / "resp.json"}), options)
