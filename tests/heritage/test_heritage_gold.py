"""The heritage gold set: schema validation with precise errors, splits, linking gold, the KB."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from jurist.datasets.heritage.gold import (
    linking_gold,
    load_heritage_gold,
    retrieval_qrels,
    split_gold,
)
from jurist.datasets.heritage.kb import load_knowledge_base
from jurist.errors import InputError

ENTRY = {
    "id": "eval_001",
    "text": "Het Rijksmuseum Amsterdam (ISIL: NL-AmRM) werd opgericht in 1800 en beheert de grootste "
    "collectie Nederlandse kunst.",
    "ner_annotations": [
        {"text": "Rijksmuseum Amsterdam", "type": "GRP.HER.MUS", "start": 4, "end": 25},
        {"text": "NL-AmRM", "type": "IDENTIFIER", "start": 33, "end": 40},
        {"text": "1800", "type": "TMP", "start": 60, "end": 64},
        {"text": "Nederlandse", "type": "TOP", "start": 98, "end": 109},
    ],
    "type_classification": {"primary_type": "M", "secondary_types": [], "rationale": "Art museum"},
    "entity_linking": {"Rijksmuseum Amsterdam": {"wikidata_id": "Q190804", "isil_code": "NL-RIJ"}},
    "qa_pairs": [
        {
            "question": "Wanneer is het Rijksmuseum opgericht?",
            "answer": "In 1800.",
            "answer_type": "temporal",
            "supporting_facts": ["opgericht in 1800"],
        }
    ],
}


def _write(tmp_path: Path, entries: list[dict]) -> Path:
    path = tmp_path / "gold.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    return path


def test_seed_style_entry_loads(tmp_path: Path) -> None:
    gold = load_heritage_gold(_write(tmp_path, [ENTRY]))
    assert gold.entries[0].spans()[0] == (4, 25, "GRP.HER.MUS")
    assert gold.entries[0].custodian_type == "M"
    assert gold.describe()["items"] == 1


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        (
            {"start": 5, "end": 26},
            "ner_annotations[0]",
            ["'eval_002'", "'Rijksmuseum Amsterdam'", "[5, 26)", "ijksmuseum Amsterdam "],
        ),
        ({"start": 100, "end": 400}, "ner_annotations[0]", ["'eval_002'", "ends past the text"]),
        (
            {"start": 4, "end": 40, "text": ENTRY["text"][4:40]},
            "ner_annotations[1]",
            ["'eval_002'", "overlaps"],
        ),
    ],
)
def test_offset_errors_name_entry_span_file_and_line(
    tmp_path: Path, change: dict, field: str, words: list[str]
) -> None:
    bad = json.loads(json.dumps(ENTRY))
    bad["id"] = "eval_002"
    bad["ner_annotations"][0].update(change)
    if "text" in change:
        bad["entity_linking"] = {}
    path = _write(tmp_path, [ENTRY | {"id": "ok"}, bad])
    with pytest.raises(InputError) as caught:
        load_heritage_gold(path)
    error = caught.value
    assert error.line == 2
    assert error.field == field
    assert error.path == str(path)
    for word in words:
        assert word in str(error)


def test_linking_mention_and_supporting_fact_must_be_in_the_entry(tmp_path: Path) -> None:
    bad = json.loads(json.dumps(ENTRY))
    bad["entity_linking"] = {"Rijksmuseum": None}
    with pytest.raises(InputError, match=r"entry 'eval_001'.*not the text of any ner annotation"):
        load_heritage_gold(_write(tmp_path, [bad]))
    bad = json.loads(json.dumps(ENTRY))
    bad["qa_pairs"][0]["supporting_facts"] = ["opgericht in 1801"]
    with pytest.raises(InputError) as caught:
        load_heritage_gold(_write(tmp_path, [bad]))
    assert caught.value.field == "qa_pairs[0].supporting_facts[0]"


def test_schema_errors_and_duplicate_ids(tmp_path: Path) -> None:
    bad = json.loads(json.dumps(ENTRY))
    bad["type_classification"]["primary_type"] = "Q"
    with pytest.raises(InputError) as caught:
        load_heritage_gold(_write(tmp_path, [bad]))
    assert caught.value.field == "type_classification.primary_type"
    assert "'eval_001'" in str(caught.value)
    with pytest.raises(InputError, match="repeats line 1"):
        load_heritage_gold(_write(tmp_path, [ENTRY, ENTRY]))


def test_bundled_gold_set_is_valid_and_covers_the_issue() -> None:
    gold = load_heritage_gold("sample:heritage")
    assert len(gold) >= 60
    assert {"en", "nl"} <= {e.language for e in gold}
    types = Counter(e.custodian_type for e in gold)
    assert all(types[t] >= 5 for t in "MALS")
    for entry in gold:  # offsets re-checked independently of the validator
        for ann in entry.ner_annotations:
            assert entry.text[ann.start : ann.end] == ann.text
    links = linking_gold(gold.entries)
    nil_share = sum(link.is_nil for link in links) / len(links)
    assert 0.10 <= nil_share <= 0.25
    kb = load_knowledge_base()
    assert all(link.gold_kb_id in kb for link in links if not link.is_nil)
    for link in links:
        if link.target and link.target.isil_code:
            assert link.target.isil_code in kb.get(link.gold_kb_id).isil
    qrels = retrieval_qrels(gold.entries)
    assert len(qrels) >= len(gold)
    assert all(max(q.values()) == 3 for q in qrels.values())


def test_split_is_70_15_15_stratified_and_seeded() -> None:
    gold = load_heritage_gold("sample:heritage").entries
    parts = split_gold(gold)
    sizes = {name: len(part) for name, part in parts.items()}
    assert sum(sizes.values()) == len(gold)
    assert abs(sizes["train"] - 0.70 * len(gold)) <= 2
    assert abs(sizes["dev"] - 0.15 * len(gold)) <= 2
    ids = [e.id for part in parts.values() for e in part]
    assert len(ids) == len(set(ids))
    for letter, count in Counter(e.custodian_type for e in gold).items():
        in_train = sum(e.custodian_type == letter for e in parts["train"])
        assert abs(in_train - 0.7 * count) <= 1
    assert [e.id for e in split_gold(gold)["test"]] == [e.id for e in parts["test"]]
    assert [e.id for e in split_gold(gold, seed=1)["test"]] != [e.id for e in parts["test"]]
    by_language = split_gold(gold, stratify=("custodian_type", "language"))
    assert sum(len(p) for p in by_language.values()) == len(gold)
    with pytest.raises(ValueError, match="no entry has a value"):
        split_gold(gold, stratify=("nonexistent",))


def test_kb_reads_sparql_export_layout(tmp_path: Path) -> None:
    path = tmp_path / "kb.tsv"
    path.write_text(
        "?item\t?itemLabel\t?isil\t?gndId\t?dbsId\n"
        "http://www.wikidata.org/entity/Q190804\tRijksmuseum\tNL-RIJ\t1009452-0\t\n"
        "http://www.wikidata.org/entity/Q190804\tRijksmuseum\tNL-AmRM\t\n"
        "http://www.wikidata.org/entity/Q28733477\tBibliothek des Bundesarchivs\t\tEA470\n",
        encoding="utf-8",
    )
    kb = load_knowledge_base(path)
    assert len(kb) == 2
    assert kb.get("Q190804").isil == ("NL-RIJ", "NL-AmRM")
    assert kb.find_isil("nl-amrm").kb_id == "Q190804"
    assert kb.get("Q28733477").dbs == ("EA470",) and kb.get("Q28733477").gnd == ()
    bad = tmp_path / "bad.tsv"
    bad.write_text("name\tcode\nx\ty\n", encoding="utf-8")
    with pytest.raises(InputError, match="wikidata_id"):
        load_knowledge_base(bad)


def test_the_frameworks_own_sample_offsets_are_caught(tmp_path: Path) -> None:
    seed = json.loads(json.dumps(ENTRY))
    seed["ner_annotations"][2].update(start=58, end=62)  # as printed in the framework's sample
    with pytest.raises(InputError) as caught:
        load_heritage_gold(_write(tmp_path, [seed]))
    assert caught.value.field == "ner_annotations[2]"
    assert "'1800' at [58, 62)" in str(caught.value) and "'n 18'" in str(caught.value)
