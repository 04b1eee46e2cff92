"""The heritage judges are made by the task contract from the task's parts (its program,
postprocess, baseline and how its compiled programs load), and their fingerprints are
what they were when an override of ``make_judge`` made them: run directories made before
resume (their manifests record the fingerprint). The pinned values were computed with that
earlier code; a DSPy upgrade that changes the program's state changes them too."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from jurist.datasets.heritage.kb import load_knowledge_base
from jurist.datasets.samples import resolve_input
from jurist.judges.config import JudgeConfig
from jurist.judges.judge import BaselineJudge, LLMJudge
from jurist.metrics.heritage.taxonomy import ENTITY_LABELS
from jurist.optimization._artifact import program_state
from jurist.programs.heritage.program import HeritageEntityExtractor, HeritageTypeClassifier
from jurist.tasks import Task, get_task
from support import write_compiled

LLM = JudgeConfig(model="openai/pinned", api_base="http://127.0.0.1:9/v1", cache=False)
LLM_FINGERPRINT = "6949061777fe029f"
BASELINE_FINGERPRINT = "ac4d4ed4133ddce5"


def _options(task: Task, values: dict[str, Any]) -> Any:
    options = task.options(values)
    return task.judge_options(task.read(resolve_input("sample:heritage"), options), options)


@pytest.mark.parametrize(
    ("name", "values"),
    [
        ("heritage", {}),  # every sub-task: linking and retrieval
        ("heritage", {"tasks": ["ner", "classification", "qa"]}),  # neither
        ("heritage", {"tasks": ["linking"]}),
        ("heritage", {"tasks": ["retrieval"]}),
        ("heritage-ner", {}),
        ("heritage-linking", {}),
    ],
)
def test_heritage_judges_keep_their_fingerprints(name: str, values: dict[str, Any]):
    task = get_task(name)
    assert type(task).make_judge is Task.make_judge  # no judge of its own: the task's parts
    options = _options(task, values)
    judge = task.make_judge(LLM, options)
    assert isinstance(judge, LLMJudge) and judge.fingerprint() == LLM_FINGERPRINT
    assert judge.name == "openai/pinned" and judge.verdict_scope is not None
    linking = "linking" in task.setup(options).tasks
    assert (judge.program.linker.candidate_source is not None) == linking
    baseline = task.make_judge(JudgeConfig(), options)
    assert isinstance(baseline, BaselineJudge) and baseline.fingerprint() == BASELINE_FINGERPRINT
    assert (baseline.name, baseline.version) == ("baseline", "1")
    assert (baseline.function.linker is not None) == linking
    retrieves = "retrieval" in task.setup(options).tasks
    assert (baseline.function.retriever is not None) == retrieves


def test_the_llm_judge_retrieves_over_the_texts_judge_options_hands_over():
    task = get_task("heritage")
    options = _options(task, {"tasks": ["retrieval"]})
    judge = task.make_judge(LLM, options)
    inputs = {"text": "t", "tasks": ["retrieval"], "questions": [{"id": "q", "question": "Rijksmuseum"}]}
    found = judge.postprocess(None, inputs)["retrieval"][0]["results"]
    assert found and found[0]["source"] == "bm25"
    # Without the texts (``jurist prompt``), nothing is retrieved; the verdicts are keyed apart.
    bare = task.make_judge(LLM, task.options({"tasks": ["retrieval"]}))
    assert bare.postprocess(None, inputs)["retrieval"] == []
    assert json.loads(bare.verdict_scope or "{}").get("judge_data") is None
    assert json.loads(judge.verdict_scope or "{}")["judge_data"]


def _artifact(task: str, program: Any, path: Path) -> None:
    state = program_state(program)
    for predictor in state.values():
        predictor["signature"]["instructions"] = f"Compiled {task}."
    write_compiled(task, state, path)


@pytest.mark.parametrize(
    ("config", "program", "fingerprint", "model"),
    [
        (LLM, "arts", "f23f7af05c943e24", "openai/pinned"),
        (LLM, "arts/heritage-ner.json", "cce8dc7b13cd61df", "openai/pinned"),
        (JudgeConfig(), "arts", "d4ba264f2e98d4a8", "openai/compiled-for"),
        (JudgeConfig(), "arts/heritage-ner.json", "9dc168d8efe9a820", "openai/compiled-for"),
    ],
)
def test_compiled_heritage_programs_load_their_way_and_keep_their_fingerprints(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    config: JudgeConfig,
    program: str,
    fingerprint: str,
    model: str,
):
    monkeypatch.chdir(tmp_path)  # the program's path is part of the fingerprint: pinned relative
    _artifact("heritage-ner", HeritageEntityExtractor(ENTITY_LABELS), Path("arts/heritage-ner.json"))
    _artifact("heritage-classification", HeritageTypeClassifier(), Path("arts/heritage-classification.json"))
    task = get_task("heritage")
    judge = task.make_judge(config.model_copy(update={"program": Path(program)}), _options(task, {}))
    assert isinstance(judge, LLMJudge) and judge.fingerprint() == fingerprint
    assert judge.config.model == model and judge.config.program == Path(program)
    assert judge.program.linker.candidate_source is not None  # set again after loading
    state = judge.program.dump_state()
    assert state["extractor.extract"]["signature"]["instructions"] == "Compiled heritage-ner."


def test_a_knowledge_base_edited_in_place_keys_the_linking_verdicts_apart(tmp_path):
    kb = tmp_path / "kb.tsv"
    kb.write_bytes(load_knowledge_base().path.read_bytes())
    task = get_task("heritage-linking")

    def scope() -> dict[str, Any]:
        judge = task.make_judge(LLM, _options(task, {"kb": str(kb)}))
        assert judge.fingerprint() == LLM_FINGERPRINT  # the program is the same; its verdicts are not
        return json.loads(judge.verdict_scope or "{}")

    before = scope()
    assert before == scope()  # the same knowledge base: the same verdicts
    lines = kb.read_text(encoding="utf-8").splitlines()
    kb.write_text("\n".join(lines[:-1]) + "\n", encoding="utf-8")  # one entry fewer, same path
    after = scope()
    assert before["judge_data"] and after["judge_data"] and before["judge_data"] != after["judge_data"]
    assert {**before, "judge_data": None} == {**after, "judge_data": None}
