"""Gold sentence keys as RAGBench publishes them: ``0b.``-style spellings are normalised and counted.

Fixture: tests/data/ragbench/covidqa_rows.json, 8 rows cut unchanged from the RAGBench covidqa
export (see its SOURCE.txt); rows 143 and 1761 carry the 13 keys written like ``0b.``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jurist.datasets.ragbench import load_ragbench
from jurist.datasets.samples import sample_path
from jurist.errors import InputError
from jurist.sentences import key_documents, normalise_key
from support import run_cli

COVIDQA = Path(__file__).resolve().parents[1] / "data" / "ragbench" / "covidqa_rows.json"


def _records() -> list[dict]:
    return json.loads(COVIDQA.read_text(encoding="utf-8"))


def test_normalise_key_spellings():
    assert [normalise_key(k) for k in ("0b.", " 0b ", "0B", "3c.,", "'1a'", "[2d]", "a.", "12ab")] == [
        "0b",
        "0b",
        "0b",
        "3c",
        "1a",
        "2d",
        "a",
        "12ab",
    ]
    assert normalise_key(".") == ""
    assert normalise_key("0 b") == "0 b"  # inner characters are kept


def test_covidqa_keys_written_like_0b_dot_are_read_canonically():
    dataset = load_ragbench(COVIDQA)
    rows = {row.id: row for row in dataset}
    written = {str(r["source_id"]): r.get("supporting_chunk_ids") for r in _records()}
    assert written["143"] == ["0b.", "0c.", "0e.", "1b.", "1c.", "1d.", "2d.", "3c.", "3d."]
    assert rows["143"].all_relevant_sentence_keys == ["0b", "0c", "0e", "1b", "1c", "1d", "2d", "3c", "3d"]
    assert rows["1761"].all_relevant_sentence_keys == ["2a", "2b", "3a", "3c"]
    assert rows["358"].all_relevant_sentence_keys == written["358"]  # clean keys are unchanged
    assert rows["358"].key_fixes == ()
    assert rows["329"].all_relevant_sentence_keys is None  # no keys in the file
    assert dataset.gold_keys == sum(len(keys or []) for keys in written.values()) == 26
    assert len(dataset.key_fixes) == 13
    assert {fix.id for fix in dataset.key_fixes} == {"143", "1761"}
    first = dataset.key_fixes[0]
    assert (first.id, first.field, first.key, first.normalised, first.duplicate) == (
        "143",
        "all_relevant_sentence_keys",
        "0b.",
        "0b",
        False,
    )


def test_every_normalised_gold_key_names_a_sentence_of_the_row():
    """After normalising, each published key of the cut rows names a sentence of the row's
    documents as jurist keys them (document i, sentence j -> f"{i}{letters(j)}")."""
    for row in load_ragbench(COVIDQA):
        keys = {sentence.key for sentence in key_documents(row.documents)}
        assert set(row.all_relevant_sentence_keys or []) <= keys, row.id


def test_whitespace_case_and_repeats(tmp_path: Path):
    records = _records()[:2]
    records[0]["supporting_chunk_ids"] = [" 0D ", "0d.", "0e", "0E"]
    path = tmp_path / "keys.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    dataset = load_ragbench(path)
    row = next(iter(dataset))
    assert row.all_relevant_sentence_keys == ["0d", "0e"]
    assert [(f.key, f.normalised, f.duplicate) for f in row.key_fixes] == [
        (" 0D ", "0d", False),
        ("0d.", "0d", True),
        ("0E", "0e", True),
    ]
    assert row.gold_key_count == 4
    assert dataset.gold_keys == 4 + len(records[1]["supporting_chunk_ids"])


def test_utilized_keys_are_normalised_too(tmp_path: Path):
    record = {**_records()[0], "all_utilized_sentence_keys": ["0d.", "0E"]}
    path = tmp_path / "u.json"
    path.write_text(json.dumps([record]), encoding="utf-8")
    row = next(iter(load_ragbench(path)))
    assert row.all_utilized_sentence_keys == ["0d", "0e"]
    assert {fix.field for fix in row.key_fixes} == {"all_utilized_sentence_keys"}


def test_a_key_that_is_only_punctuation_names_file_line_and_field(tmp_path: Path):
    records = _records()[:3]
    records[2]["supporting_chunk_ids"] = ["0a", "."]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_ragbench(path)
    assert (info.value.line, info.value.field) == (3, "supporting_chunk_ids")
    assert "'.'" in str(info.value) and "bad.json" in str(info.value)


def test_bundled_sample_13_of_263_keys_fixed():
    dataset = load_ragbench(sample_path("ragbench"))
    assert dataset.gold_keys == 263
    assert len(dataset.key_fixes) == 13
    assert all(fix.key == fix.normalised + "." for fix in dataset.key_fixes)


def test_judge_reports_the_fixed_keys(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    out = tmp_path / "run"
    assert run_cli(["judge", "ragbench", str(COVIDQA), "--out", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "gold sentence keys normalised: 13 of 26 (e.g. '0b.' read as '0b')" in printed
    # rows left out are printed with their reason (329: nothing relevant; no gold scores in the export)
    assert "left out of completeness: 1 (judge's value undefined (zero denominator): 1)" in printed
    assert "left out of rmse_context_relevance: 8 (gold score missing (relevance_score): 8)" in printed
    summary = json.loads((out / "summary.json").read_text())
    keys = summary["gold_sentence_keys"]
    assert (keys["keys"], keys["normalised"], keys["rows"]) == (26, 13, 2)
    assert keys["fixes"][0] == {
        "id": "143",
        "field": "all_relevant_sentence_keys",
        "key": "0b.",
        "normalised": "0b",
        "duplicate": False,
    }
    report = (out / "report.md").read_text()
    assert "13 of 26 gold sentence keys were written in another spelling" in report
    assert "| 143 | all_relevant_sentence_keys | `0b.` | `0b` |" in report


def test_optimization_compares_normalised_gold_keys():
    """The optimizer's key F1 sees '0b.' as '0b': a judge naming exactly the gold keys scores 1."""
    import dspy

    from jurist.tasks import get_task

    task = get_task("ragbench")
    options = task.options()
    example = next(e for e in task.gold_examples(COVIDQA, options) if e.example_id == "143")
    output = {"scores": {"adherence": True}, "all_relevant_sentence_keys": list(example.gold_relevant)}
    result = task.example_score(example, output, options)
    assert result.details["relevant_f1"] == 1.0
    assert "relevant_gold_keys_unknown" not in result.details
    assert isinstance(example, dspy.Example)
