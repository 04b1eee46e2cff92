"""The heritage programs as optimization targets: scores and feedback, and ``optimize`` end to end.

The loopback "model" answers each heritage prompt with the offline baseline's answer
(entities, type, the offered candidates in order, an extractive answer), so compiled
programs get demos, and runs are deterministic.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import dspy
import pytest

from jurist.cli import main
from jurist.datasets.heritage.gold import linking_gold, load_heritage_gold
from jurist.errors import ArtifactError, InputError
from jurist.judges.config import JudgeConfig
from jurist.metrics.heritage.ner import entity_example_f1
from jurist.metrics.heritage.qa import qa_example_score
from jurist.optimization import (
    OptimizerSettings,
    evaluate_program,
    load_program,
    read_artifact,
    write_artifact,
)
from jurist.programs.heritage.baseline import ExtractiveQA, KeywordTypeClassifier, RegexGazetteerExtractor
from jurist.tasks import get_task, task_names
from jurist.tasks.heritage import PROGRAM_PARTS, heritage_items, write_heritage_splits
from jurist.testing import OpenAICompatibleServer, last_user_message
from jurist.verbs import judge, optimize
from support import optimized as _optimized
from support import prompt_sections

HINT = "Extract every place name, including small villages."
TASKS = {  # optimize task -> (sub-task of `jurist judge heritage`, predictor of the program)
    "heritage-ner": ("ner", "extract"),
    "heritage-classification": ("classification", "classify"),
    "heritage-linking": ("linking", "link"),
    "heritage-qa": ("qa", "answer"),
}


def _chat(fields: dict[str, Any]) -> str:
    body = "\n\n".join(f"[[ ## {name} ## ]]\n{value}" for name, value in fields.items())
    return body + "\n\n[[ ## completed ## ]]"


GOLD_SPANS = {entry.text: entry.spans() for entry in load_heritage_gold("sample:heritage").entries}


def _system(body: dict[str, Any]) -> str:
    return "".join(str(m.get("content", "")) for m in body.get("messages", []) if m.get("role") == "system")


def baseline_answer(body: dict[str, Any]) -> str:
    """Answers heritage prompts as the offline baselines would; GEPA's reflection gets the hint,
    and an extraction prompt whose instructions carry it gets the gold entities."""
    text = last_user_message(body)
    if "Respond with a JSON object in the following order of fields" in text:  # GEPA's reflection
        fields = [name for name in ("new_instruction", "proposed_instruction") if f"`{name}`" in text]
        return json.dumps({name: HINT for name in fields or ["new_instruction"]})
    sections = prompt_sections(body)
    if "entity_types" in sections:
        labels = [line.split(":", 1)[0] for line in sections["entity_types"].splitlines()]
        found = [(e.start, e.end, e.type) for e in RegexGazetteerExtractor(labels)(sections["text"])]
        if HINT in _system(body):  # the instruction GEPA proposes makes this "model" extract the gold
            found = GOLD_SPANS.get(sections["text"], found)
        entities = [{"text": sections["text"][s:e], "type": t, "start": s, "end": e} for s, e, t in found]
        return _chat({"entities": json.dumps(entities)})
    if "candidates" in sections:
        ids = [line.split(" | ", 1)[0] for line in sections["candidates"].splitlines() if " | " in line]
        return _chat({"ranked_ids": json.dumps(ids[:3]), "is_nil": str(not ids)})
    if "question" in sections:
        answer = ExtractiveQA()(sections["question"], sections["context"], id="q")
        return _chat({"answer": answer.answer, "supporting_facts": json.dumps(answer.supporting_facts)})
    label = KeywordTypeClassifier()(sections.get("text", ""))
    return _chat({"primary_type": label.primary_type, "secondary_types": "[]", "rationale": "Keywords."})


@pytest.fixture(scope="module")
def baseline_server():
    """One server for the module (stopping one takes half a second); tests reset its count."""
    with OpenAICompatibleServer(baseline_answer) as srv:
        yield srv


@pytest.fixture
def config(baseline_server: OpenAICompatibleServer, tmp_path: Path) -> JudgeConfig:
    return JudgeConfig(
        model="openai/loopback-judge",
        api_base=baseline_server.base_url,
        api_key_env="JURIST_TEST_API_KEY",
        cache_dir=tmp_path / "cache",
        concurrency=8,
        retry_max_wait=0.2,
        timeout=5,
    )


@pytest.fixture
def splits(tmp_path: Path) -> dict[str, Path]:
    """The bundled gold's stratified train (60 texts), dev (13) and test (13) files."""
    return write_heritage_splits("sample:heritage", tmp_path / "splits")


def _prompt(body: dict[str, Any]) -> str:
    return "\n".join(str(message.get("content", "")) for message in body["messages"])


def _demo_texts(state: dict[str, Any]) -> list[str]:
    demo = state["demos"][0]
    return [demo[field] for field in ("text", "mention", "question") if field in demo]


# --------------------------------------------------------------------------- scores and feedback

NER_TEXT = "Het Rijksmuseum in Amsterdam werd in 1800 opgericht; het Westfries Archief in Hoorn."


def _entity(text: str, label: str, start: int | None = None) -> dict[str, Any]:
    begin = NER_TEXT.index(text) if start is None else start
    return {"text": text, "type": label, "start": begin, "end": begin + len(text)}


def test_the_four_tasks_are_discovered():
    assert set(PROGRAM_PARTS) <= {name for name in task_names() if "optimize" in get_task(name).verbs}
    for task, (subtask, _) in TASKS.items():
        found = get_task(task)
        assert found.subtask == subtask and found.program_options(found.options()) == {}


def test_ner_score_and_feedback_name_missed_spurious_mistyped_and_misbounded_spans():
    adapter = _optimized("heritage-ner")
    gold = [_entity("Rijksmuseum", "GRP.HER.MUS"), _entity("Amsterdam", "TOP"), _entity("1800", "TMP")]
    gold += [_entity("Westfries Archief", "GRP.HER.ARC"), _entity("Hoorn", "TOP")]
    example = dspy.Example(
        text=NER_TEXT, gold_spans=[[g["start"], g["end"], g["type"]] for g in gold]
    ).with_inputs("text")
    stated = [
        _entity("Rijksmuseum", "GRP.HER.MUS"),  # right
        _entity("Amsterdam", "TMP"),  # wrong type
        _entity("het Westfries Archief", "GRP.HER.ARC"),  # wrong boundaries
        _entity("opgericht", "TOP"),  # spurious
        _entity("Louvre", "GRP.HER.MUS", start=3),  # not in the text: flagged
        _entity("1800", "DATE"),  # unknown type: flagged
    ]
    output = adapter.postprocess(dspy.Prediction(entities=stated), {"text": NER_TEXT})
    result = adapter.score(example, output)
    pred = [(e["start"], e["end"], e["type"]) for e in output["entities"]]
    assert result.score == pytest.approx(entity_example_f1([tuple(s) for s in example.gold_spans], pred))
    assert result.score == pytest.approx(2 * 1 / (5 + 4))
    assert result.details | {"entity_f1": 0} == {
        "entity_f1": 0,
        "true_positives": 1,
        "missed": 2,
        "spurious": 1,
        "mistyped": 1,
        "wrong_boundaries": 1,
        "flagged": 2,
        "reanchored": 0,
    }
    feedback = result.feedback
    assert "Missed gold entities: '1800' (TMP) at [37, 41); 'Hoorn' (TOP)" in feedback
    assert "Wrong type: 'Amsterdam' at [19, 28) is TOP, not TMP." in feedback
    assert "Wrong boundaries: 'het Westfries Archief' (GRP.HER.ARC)" in feedback
    assert "should be 'Westfries Archief' (GRP.HER.ARC)" in feedback
    assert "Not entities in gold (spurious): 'opgericht' (TOP)" in feedback
    assert "'Louvre' (GRP.HER.MUS): not_in_text" in feedback and "'1800' (DATE): unknown_type" in feedback
    perfect = adapter.score(example, {"entities": gold, "flagged": []})
    assert perfect.score == 1.0 and perfect.feedback.startswith("Correct: all 5 gold entities")


def test_classification_score_gives_category_credit_and_names_the_types():
    adapter = _optimized("heritage-classification")
    example = dspy.Example(
        text="t", gold_type="M", gold_secondary=["A"], gold_rationale="A national museum."
    ).with_inputs("text")
    right = adapter.score(example, {"primary_type": "M", "secondary_types": ["A"]})
    assert right.score == 1.0 and right.feedback.startswith(
        "Correct: the institution is M (museum, CULTURAL)."
    )
    near = adapter.score(example, {"primary_type": "L", "secondary_types": []})
    assert near.score == 0.5 and near.details == {"type_correct": 0.0, "type_score": 0.5}
    assert "the gold type is M (museum, CULTURAL), but the judge said L (library, CULTURAL)" in near.feedback
    assert "partial credit 0.5" in near.feedback and "Secondary types: gold A, judge none." in near.feedback
    assert "Gold rationale: A national museum." in near.feedback
    far = adapter.score(example, {"primary_type": "S", "secondary_types": []})
    assert far.score == 0.0 and "S (collecting society" in far.feedback
    strict = _optimized("heritage-classification", category_credit=0.0)
    assert strict.score(example, {"primary_type": "L"}).score == 0.0


def test_linking_score_is_the_reciprocal_rank_with_nil_and_says_where_gold_was():
    adapter = _optimized("heritage-linking")
    linked = dspy.Example(mention="Rijksmuseum", context="c", start=0, gold_kb_id="Q190804")
    nil_gold = dspy.Example(mention="Oudheidkamer", context="c", start=0, gold_kb_id=None)

    def output(ranked: list[str], nil: bool, offered: list[str], dropped: list[str] = ()) -> dict[str, Any]:
        candidates = [] if nil else [{"kb_id": kb_id} for kb_id in ranked]
        return {"candidates": candidates, "nil": nil, "offered": offered, "dropped_ids": list(dropped)}

    second = adapter.score(linked, output(["Q2310268", "Q190804"], False, ["Q190804", "Q2310268"], ["Q9"]))
    assert second.score == 0.5
    assert "is Q190804 (Rijksmuseum), but the judge ranked it 2 (reciprocal rank 0.50)" in second.feedback
    assert "behind Q2310268 (Rijksmuseum Research Library)" in second.feedback
    assert "Ids that were not among the candidates were ignored: Q9." in second.feedback
    said_nil = adapter.score(linked, output([], True, ["Q190804"]))
    assert said_nil.score == 0.0
    assert "(it was candidate 1 of 1 offered), but the judge answered NIL" in said_nil.feedback
    absent = adapter.score(linked, output(["Q2310268"], False, ["Q2310268"]))
    assert absent.score == 0.0 and "not among the offered candidates" in absent.feedback
    assert absent.details["gold_offered"] == 0.0
    assert adapter.score(nil_gold, output([], True, [])).score == 1.0
    wrong_link = adapter.score(nil_gold, output(["Q190804"], False, ["Q190804"]))
    assert wrong_link.score == 0.0
    assert (
        "has no entry in the knowledge base (NIL), but the judge linked it to Q190804" in wrong_link.feedback
    )


def test_qa_score_is_rouge_l_and_feedback_names_missing_words_and_ungrounded_quotes():
    adapter = _optimized("heritage-qa")
    context = "Het Rijksmuseum werd opgericht in 1800."
    example = dspy.Example(question="Wanneer?", context=context, gold_answer="Opgericht in 1800.")
    prediction = dspy.Prediction(answer="Het werd gesticht in 1801.", supporting_facts=["gesticht in 1801"])
    output = adapter.postprocess(prediction, {"question": "Wanneer?", "context": context})
    result = adapter.score(example, output)
    # LCS("het werd gesticht in 1801", "opgericht in 1800") = 1: P = 1/5, R = 1/3, F = 1/4.
    assert (
        result.score
        == pytest.approx(0.25)
        == pytest.approx(qa_example_score(output["answer"], "Opgericht in 1800."))
    )
    assert "Gold words missing from the answer: opgericht, 1800." in result.feedback
    assert "Quotes not found in the context: 'gesticht in 1801'" in result.feedback
    with pytest.raises(ValueError, match="empty"):
        adapter.postprocess(
            dspy.Prediction(answer=" ", supporting_facts=[]), {"question": "?", "context": context}
        )


def test_examples_follow_the_gold_and_the_judge_ids():
    gold = load_heritage_gold("sample:heritage")
    items = {item.id: item.inputs for item in heritage_items(gold.entries)}
    ner = _optimized("heritage-ner").examples("sample:heritage")
    assert len(ner) == len(gold) == 86 and set(ner[0].inputs().keys()) == {"text"}
    types = _optimized("heritage-classification").examples("sample:heritage")
    assert len(types) == 86 and {e.gold_type for e in types} >= {"M", "A", "L", "S"}
    links = _optimized("heritage-linking").examples("sample:heritage")
    assert len(links) == len(linking_gold(gold.entries)) == 88
    assert sum(e.gold_kb_id is None for e in links) == 14
    assert {e.example_id for e in links} == {m["id"] for inputs in items.values() for m in inputs["mentions"]}
    questions = _optimized("heritage-qa").examples("sample:heritage")
    assert {e.example_id for e in questions} == {q["id"] for i in items.values() for q in i["questions"]}
    assert _optimized("heritage-ner", labels=["TOP"]).options() == {"labels": ["TOP"]}


def test_a_gold_file_without_the_tasks_gold_is_refused(tmp_path: Path):
    bare = tmp_path / "bare.jsonl"
    bare.write_text(json.dumps({"id": "x", "text": "Nothing here."}) + "\n", encoding="utf-8")
    for task in ("heritage-classification", "heritage-linking", "heritage-qa"):
        with pytest.raises(InputError, match="no entry carries"):
            _optimized(task).examples(bare)


# --------------------------------------------------------------------------- optimize end to end


@pytest.mark.parametrize("task", list(TASKS))
def test_bootstrap_compiles_reloads_rescores_and_runs_in_the_heritage_judge(
    task: str, config: JudgeConfig, baseline_server: OpenAICompatibleServer, splits, tmp_path: Path
):
    subtask, predictor = TASKS[task]
    out = tmp_path / f"{task}.json"
    result = optimize(task, splits["train"], splits["dev"], config, out=out)

    artifact = read_artifact(out)
    assert artifact.task == task and artifact.options == {} and artifact.optimizer["name"] == "bootstrap"
    assert set(artifact.program) == {predictor}
    assert len(artifact.program[predictor]["demos"]) == 4 and artifact.program[predictor]["lm"] is None
    dev_after = artifact.scores["dev_after"]
    assert dev_after.failed == 0 and dev_after.scored == dev_after.examples > 0
    assert artifact.compile["failed_calls"] == 0 and artifact.compile["unusable_answers"] == 0

    # It loads, differs from the uncompiled program, and scores the same on reload.
    adapter = _optimized(task)
    fresh = adapter.program()
    program, _ = load_program(out, task=task, program=adapter.program(), options=adapter.options())
    assert program.dump_state() == result.program.dump_state() != fresh.dump_state()
    again = evaluate_program(
        adapter.task, program, config, adapter.examples(splits["dev"]), options=adapter.values
    )
    assert again.score.score == pytest.approx(dev_after.score)

    # The heritage judge runs it (as `jurist judge heritage --program`), demos in every prompt
    # (a fresh cache: the dev evaluation already made these calls).
    baseline_server.reset_count()
    runtime = JudgeConfig(program=out, cache_dir=tmp_path / "judge-cache")
    run = judge(
        "heritage", splits["dev"], runtime, out=tmp_path / "run", options={"tasks": [subtask]}, progress=False
    )
    assert run.scores.summary["failed"] == 0 and baseline_server.requests > 0
    demo = _demo_texts(artifact.program[predictor])[0]
    assert all(demo in _prompt(body) for body in baseline_server.bodies)
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["config"]["program"] == str(out)


def _run_cli(args: list[str]) -> int:
    try:
        main(args)
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def test_cli_optimizes_two_programs_and_judges_with_a_directory_of_artifacts(
    config: JudgeConfig, baseline_server: OpenAICompatibleServer, splits, tmp_path: Path, capsys
):
    config_file = tmp_path / "judge.yaml"
    config_file.write_text(json.dumps(config.model_dump(mode="json")), encoding="utf-8")
    folder = tmp_path / "compiled"
    for task in ("heritage-classification", "heritage-ner"):
        args = ["optimize", task, "--train", str(splits["train"]), "--dev", str(splits["dev"])]
        args += ["--config", str(config_file), "--max-demos", "2", "--out", str(folder / f"{task}.json")]
        assert _run_cli(args) == 0
    printed = capsys.readouterr().out
    assert "heritage-classification · bootstrap" in printed and "type_score on dev:" in printed
    assert "entity_f1 on dev:" in printed

    baseline_server.reset_count()
    run_dir = tmp_path / "run"
    args = ["judge", "heritage", str(splits["dev"]), "--out", str(run_dir), "--program", str(folder)]
    args += ["--tasks", "ner,classification", "--cache-dir", str(tmp_path / "judge-cache")]
    assert _run_cli([*args, "--no-progress"]) == 0
    # Each part got its own demos: extraction prompts carry the NER demos, type prompts the others.
    states = {
        task: read_artifact(folder / f"{task}.json").program
        for task in ("heritage-ner", "heritage-classification")
    }
    ner_demo = states["heritage-ner"]["extract"]["demos"][0]["text"]
    type_demo = states["heritage-classification"]["classify"]["demos"][0]["text"]
    prompts = [_prompt(body) for body in baseline_server.bodies]
    extraction = [p for p in prompts if "entity_types" in p]
    typing = [p for p in prompts if "entity_types" not in p]
    assert len(extraction) == len(typing) == 13
    assert all(ner_demo in p for p in extraction) and all(type_demo in p for p in typing)
    summary = json.loads((run_dir / "summary.json").read_text())
    # The run records the model the artifacts were compiled with, the one it ran with.
    assert summary["ok"] == 13 and summary["run"]["model"] == config.model


def test_artifacts_the_heritage_judge_refuses(config: JudgeConfig, splits, tmp_path: Path, capsys):
    out = tmp_path / "types.json"
    optimize("heritage-classification", splits["train"], splits["dev"], config, out=out)
    artifact = read_artifact(out)

    # An artifact compiled for another task.
    other = write_artifact(artifact.model_copy(update={"task": "ragbench"}), tmp_path / "rb.json")
    with pytest.raises(ArtifactError, match="compiled for the task 'ragbench', not for a heritage program"):
        judge("heritage", splits["dev"], JudgeConfig(program=other), out=tmp_path / "r1", progress=False)
    args = ["judge", "heritage", str(splits["dev"]), "--out", str(tmp_path / "r2"), "--program", str(other)]
    assert _run_cli([*args, "--no-progress"]) == 2
    error = capsys.readouterr().err
    assert "rb.json: compiled for the task 'ragbench', not for a heritage program" in error
    assert "use it with `jurist judge ragbench`" in error
    # A heritage artifact is no RAGBench judge either.
    rb_args = ["judge", "ragbench", "sample:ragbench", "--out", str(tmp_path / "r3"), "--program", str(out)]
    assert _run_cli(rb_args) == 2
    assert "compiled for the task 'heritage-classification', not 'ragbench'" in capsys.readouterr().err

    # Two artifacts for one program in a directory.
    folder = tmp_path / "two"
    write_artifact(artifact, folder / "a.json")
    write_artifact(artifact, folder / "b.json")
    with pytest.raises(ArtifactError, match="a second artifact for heritage-classification"):
        judge("heritage", splits["dev"], JudgeConfig(program=folder), out=tmp_path / "r4", progress=False)
    # An extractor compiled for other entity types.
    ner = artifact.model_copy(update={"task": "heritage-ner", "options": {"labels": ["TOP", "TMP"]}})
    labelled = write_artifact(ner, tmp_path / "ner.json")
    with pytest.raises(ArtifactError, match="compiled with the options labels="):
        judge("heritage", splits["dev"], JudgeConfig(program=labelled), out=tmp_path / "r5", progress=False)
    # Artifacts compiled with different models and no config to run them with.
    mixed = tmp_path / "mixed"
    write_artifact(artifact, mixed / "types.json")
    qa_state = {"answer": read_artifact(out).program["classify"]}
    other_model = artifact.model_copy(
        update={
            "task": "heritage-qa",
            "program": qa_state,
            "judge_config": {**artifact.judge_config, "model": "openai/other"},
        }
    )
    write_artifact(other_model, mixed / "qa.json")
    with pytest.raises(ArtifactError, match="compiled with different judge configs"):
        judge("heritage", splits["dev"], JudgeConfig(program=mixed), out=tmp_path / "r6", progress=False)
    # A directory without artifacts, a path that does not exist.
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match=r"no compiled program \(\*\.json\)"):
        judge(
            "heritage",
            splits["dev"],
            JudgeConfig(program=tmp_path / "empty"),
            out=tmp_path / "r7",
            progress=False,
        )
    with pytest.raises(InputError, match="compiled program not found"):
        judge(
            "heritage",
            splits["dev"],
            JudgeConfig(program=tmp_path / "no.json"),
            out=tmp_path / "r8",
            progress=False,
        )


def test_gepa_on_ner_reflects_on_missed_spans(config: JudgeConfig, baseline_server, splits, tmp_path: Path):
    baseline_server.reset_count()
    result = optimize(
        "heritage-ner",
        splits["train"],
        splits["dev"],
        config,
        out=tmp_path / "gepa-ner.json",
        optimizer="gepa",
        settings=OptimizerSettings(auto=None, max_metric_calls=24, reflection_minibatch_size=3),
    )
    reflections = [
        json.dumps(body) for body in baseline_server.bodies if "examples_with_feedback" in json.dumps(body)
    ]
    assert reflections, "GEPA never asked the reflection LM"
    assert any("Missed gold entities:" in text for text in reflections)
    artifact = result.artifact
    assert artifact.program["extract"]["signature"]["instructions"] == HINT
    assert artifact.scores["dev_before"].score < 0.9 and artifact.scores["dev_after"].score == 1.0


def test_the_linking_score_reads_the_knowledge_base_once_and_again_when_it_changes(tmp_path: Path):
    from jurist.tasks.heritage.optimize_linking_qa import knowledge_base

    kb = tmp_path / "kb.tsv"
    kb.write_text("wikidata_id\tlabel\nQ1\tOld Museum\n", encoding="utf-8")
    first = knowledge_base(kb)
    assert knowledge_base(kb) is first and first.get("Q1").label == "Old Museum"
    kb.write_text("wikidata_id\tlabel\nQ1\tThe New Museum\n", encoding="utf-8")
    assert knowledge_base(kb).get("Q1").label == "The New Museum"
    linked = dspy.Example(mention="M", context="c", start=0, gold_kb_id="Q1")
    found = get_task("heritage-linking")
    output = {"candidates": [{"kb_id": "Q1"}], "nil": False, "offered": ["Q1"], "dropped_ids": []}
    result = found.example_score(linked, output, found.options({"kb": str(kb)}))
    assert result.score == 1.0 and "Q1 (The New Museum), ranked first" in result.feedback
