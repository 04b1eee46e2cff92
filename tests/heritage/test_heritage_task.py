"""Heritage programs and the task end to end: anchoring, baselines, CLI, resume, the LLM path."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import jurist
from jurist.datasets.heritage.kb import load_knowledge_base
from jurist.judges.config import JudgeConfig
from jurist.programs.heritage.baseline import (
    Bm25Retriever,
    FuzzyLinker,
    KeywordTypeClassifier,
    RegexGazetteerExtractor,
)
from jurist.programs.heritage.program import anchor_entities, classification_output, linking_output, qa_output
from jurist.signatures.heritage import LinkCandidate
from jurist.tasks.heritage import compare_heritage
from jurist.testing import OpenAICompatibleServer
from support import prompt_sections, run_cli

TEXT = (
    "Het Rijksmuseum Amsterdam (ISIL: NL-AmRM) werd opgericht in 1800 en beheert de grootste "
    "collectie Nederlandse kunst."
)
SEED_ENTRY = {
    "id": "eval_001",
    "text": TEXT,
    "language": "nl",
    "ner_annotations": [
        {"text": "Rijksmuseum Amsterdam", "type": "GRP.HER.MUS", "start": 4, "end": 25},
        {"text": "NL-AmRM", "type": "IDENTIFIER", "start": 33, "end": 40},
        {"text": "1800", "type": "TMP", "start": 60, "end": 64},
        {"text": "Nederlandse", "type": "TOP", "start": 98, "end": 109},
    ],
    "type_classification": {"primary_type": "M", "secondary_types": []},
    "entity_linking": {"Rijksmuseum Amsterdam": {"wikidata_id": "Q190804", "isil_code": "NL-RIJ"}},
    "qa_pairs": [
        {
            "question": "Wanneer is het Rijksmuseum opgericht?",
            "answer": "Het Rijksmuseum werd opgericht in 1800.",
            "answer_type": "temporal",
            "supporting_facts": ["opgericht in 1800"],
        }
    ],
}
BROKEN_TEXT = "Het Onbekend Archief in Utrecht bewaart akten sinds 1811."
BROKEN_ENTRY = {
    "id": "eval_002",
    "text": BROKEN_TEXT,
    "ner_annotations": [{"text": "Utrecht", "type": "TOP", "start": 24, "end": 31}],
    "type_classification": {"primary_type": "A"},
}
STATED = [
    {"text": "Rijksmuseum Amsterdam", "type": "GRP.HER.MUS", "start": 0, "end": 21},  # mis-anchored
    {"text": "Amsterdam", "type": "TOP", "start": 16, "end": 25},  # overlaps the museum
    {"text": "NL-AmRM)", "type": "IDENTIFIER", "start": 33, "end": 41},  # over-long by a bracket
    {"text": "1800", "type": "TMP", "start": 60, "end": 500},  # over-long past the text
    {"text": "kunst", "type": "ART", "start": 110, "end": 115},  # unknown type
    {"text": "Louvre", "type": "GRP.HER.MUS", "start": 5, "end": 11},  # not in the text
    {"text": "Nederlandse", "type": "TOP", "start": 98, "end": 109},  # exact
    {"text": "Nederlandse", "type": "TOP", "start": 98, "end": 109},  # duplicate
]


def test_anchor_entities_keeps_reanchors_trims_and_flags() -> None:
    result = anchor_entities(TEXT, STATED)
    kept = [(e.text, e.start, e.end, e.anchoring) for e in result.entities]
    assert kept == [
        ("Rijksmuseum Amsterdam", 4, 25, "re-anchored"),
        ("NL-AmRM", 33, 40, "trimmed"),
        ("1800", 60, 64, "re-anchored"),
        ("Nederlandse", 98, 109, "exact"),
    ]
    assert all(TEXT[e.start : e.end] == e.text for e in result.entities)
    reasons = sorted((f.reason, f.text) for f in result.flagged)
    assert reasons == [
        ("duplicate", "Nederlandse"),
        ("not_in_text", "Louvre"),
        ("overlap", "Amsterdam"),
        ("unknown_type", "kunst"),
    ]
    assert result.entities[0].stated_start == 0


def test_output_checks() -> None:
    class P:
        primary_type = "m"
        secondary_types = ["M", "A", "Z", "A"]
        rationale = "museum"
        ranked_ids = ["Q2", "Q9", "Q1"]
        is_nil = False
        answer = "In 1800."
        supporting_facts = ["opgericht  in 1800", "verzonnen citaat"]

    label = classification_output(P())
    assert label.primary_type == "M" and label.secondary_types == ["A"]
    offered = [LinkCandidate(kb_id="Q1"), LinkCandidate(kb_id="Q2")]
    decision = linking_output(P(), offered, id="x", mention="m")
    assert [c.kb_id for c in decision.candidates] == ["Q2", "Q1"] and decision.dropped_ids == ["Q9"]
    answer = qa_output(P(), TEXT, id="q", question="?")
    assert answer.supporting_facts == ["opgericht  in 1800"] and answer.ungrounded_facts == [
        "verzonnen citaat"
    ]
    P.primary_type = "Z"
    with pytest.raises(ValueError, match="primary_type"):
        classification_output(P())


def test_baseline_components() -> None:
    entities = RegexGazetteerExtractor()(TEXT)
    found = {(e.text, e.type) for e in entities}
    assert {
        ("Rijksmuseum Amsterdam", "GRP.HER.MUS"),
        ("NL-AmRM", "IDENTIFIER"),
        ("1800", "TMP"),
        ("Nederlandse", "TOP"),
    } <= found
    only_time = RegexGazetteerExtractor(labels=["TMP"])(TEXT)
    assert [e.type for e in only_time] == ["TMP"]
    assert KeywordTypeClassifier()(TEXT, entities).primary_type == "M"
    assert KeywordTypeClassifier()("Nothing to see.").primary_type == "U"
    linker = FuzzyLinker(load_knowledge_base())
    candidates, nil = linker("Nationaal Archief", "Het Nationaal Archief in Den Haag")
    assert not nil and candidates[0].kb_id == "Q1857081"
    candidates, nil = linker(
        "Nationaal Onderduikmuseum", "Het Nationaal Onderduikmuseum in Aalten (ISIL NL-AtNOM)"
    )
    assert candidates[0].kb_id == "Q2710899" and candidates[0].score == 100  # the ISIL next to the name
    retriever = Bm25Retriever(
        {"a": TEXT, "b": BROKEN_TEXT, "c": "De bibliotheek van Leiden.", "d": "Een molen."}
    )
    assert retriever.search("Wanneer is het Rijksmuseum opgericht?")[0].doc_id == "a"


def test_cli_judges_the_bundled_gold_with_the_baseline_then_scores(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    assert run_cli(["judge", "heritage", "--out", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "NER (strict) F1" in printed and "QA Relevance Score: n/a (not measured)" in printed
    for name in (
        "manifest.json",
        "results.sqlite",
        "results.jsonl",
        "items.csv",
        "mentions.csv",
        "summary.json",
        "report.md",
    ):
        assert (out / name).is_file()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["ok"] == summary["items"] >= 60 and summary["failed"] == 0
    assert {row["status"] for row in summary["targets"]} <= {"pass", "fail", "not measured"}
    assert len(summary["targets"]) == 11
    assert run_cli(["score", "heritage", str(out)]) == 0
    report = capsys.readouterr().out
    for heading in (
        "## Targets",
        "## Entity extraction",
        "## Custodian type classification",
        "## Entity linking",
        "## Retrieval",
        "## Question answering",
    ):
        assert heading in report
    assert "| NER (strict) | F1 |" in report
    # Resume: the second call judges nothing again.
    run = jurist.judge("heritage", "sample:heritage", out=out, progress=False)
    assert run.scores.summary["items"] == summary["items"]
    # A split and a subset of tasks into another run; the comparison table.
    other = tmp_path / "other"
    assert (
        run_cli(
            [
                "judge",
                "heritage",
                "--out",
                str(other),
                "--split",
                "test",
                "--tasks",
                "ner,classification",
                "--no-progress",
            ]
        )
        == 0
    )
    capsys.readouterr()
    table = compare_heritage(out, other)
    assert set(table["metric"]) == {"ner_strict_f1", "ner_partial_f1", "type_correct"}
    assert (table["mean_difference"].abs() < 1e-12).all()  # the same baseline on the same texts
    assert run_cli(["score", "heritage", str(out), "--compare", str(other), "--json"]) == 0
    assert "comparison" in json.loads(capsys.readouterr().out)


def _chat(fields: dict[str, Any]) -> str:
    body = "\n\n".join(f"[[ ## {name} ## ]]\n{value}" for name, value in fields.items())
    return body + "\n\n[[ ## completed ## ]]"


def heritage_answer(body: dict[str, Any]) -> str:
    """Answers like an LLM heritage program, with bad spans and an unparseable type for one text."""
    sections = prompt_sections(body)
    if "entity_types" in sections:
        stated = STATED if "Rijksmuseum" in sections["text"] else []
        return _chat({"entities": json.dumps(stated)})
    if "candidates" in sections:
        return _chat({"ranked_ids": json.dumps(["Q190804", "Q999999999"]), "is_nil": "False"})
    if "question" in sections:
        facts = ["opgericht in 1800", "a quote that is not in the text"]
        return _chat(
            {"answer": "Het Rijksmuseum werd opgericht in 1800.", "supporting_facts": json.dumps(facts)}
        )
    primary = "Z" if "Onbekend" in sections.get("text", "") else "M"
    return _chat({"primary_type": primary, "secondary_types": "[]", "rationale": "A museum."})


def test_llm_path_through_the_loopback_server(tmp_path: Path) -> None:
    gold = tmp_path / "gold.jsonl"
    gold.write_text(json.dumps(SEED_ENTRY) + "\n" + json.dumps(BROKEN_ENTRY) + "\n", encoding="utf-8")
    with OpenAICompatibleServer(heritage_answer) as server:
        config = JudgeConfig(
            model="openai/loopback-judge",
            api_base=server.base_url,
            api_key_env="JURIST_TEST_API_KEY",
            cache_dir=tmp_path / "cache",
            parse_retries=0,
            retry_max_wait=0.2,
            timeout=5,
        )
        run = jurist.judge("heritage", gold, config, out=tmp_path / "run", progress=False)
        first_calls = server.requests
        again = jurist.judge(
            "heritage", gold, config, out=tmp_path / "run", progress=False, retry_failed=True
        )
    scores = run.scores
    items = scores.items.set_index("id")
    assert items.loc["eval_001", "status"] == "ok"
    assert items.loc["eval_002", "status"] == "failed"  # the type "Z" could not be parsed
    assert items.loc["eval_002", "error_type"] == "unparseable_output"
    assert scores.summary["failed_ids"] == ["eval_002"]
    assert scores.summary["classification"]["n"] == 1  # the failed text is not scored
    records = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    output = next(r["output"] for r in records if r["id"] == "eval_001")  # in finishing order
    spans = [(e["text"], e["start"], e["end"], e["anchoring"]) for e in output["entities"]]
    assert ("Rijksmuseum Amsterdam", 4, 25, "re-anchored") in spans
    assert ("NL-AmRM", 33, 40, "trimmed") in spans
    assert {f["reason"] for f in output["flagged_entities"]} == {
        "overlap",
        "unknown_type",
        "not_in_text",
        "duplicate",
    }
    assert scores.summary["ner"]["strict"]["f1"] == 1.0  # after anchoring, the four gold spans
    link = output["links"][0]
    assert link["candidates"][0]["kb_id"] == "Q190804" and link["dropped_ids"] == ["Q999999999"]
    assert scores.summary["linking"]["hits@1"] == 1.0
    answer = output["answers"][0]
    assert answer["ungrounded_facts"] == ["a quote that is not in the text"]
    assert scores.summary["qa"]["factual_accuracy"] == 1.0
    # The retry of the failed text hits the server again; the finished one comes from the run.
    assert first_calls > 0
    assert again.scores.summary["ok"] == 1
