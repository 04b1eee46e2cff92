"""The run store keeps each item's judged inputs (redacted, each text once), reads them back,
searches them, and reads files written before it kept them."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

import jurist
from jurist.errors import RunDirectoryError
from jurist.runner import RESULTS_DB, Item, ResultStore
from jurist.schemas import ItemResult
from support import write_jsonl

KEY = "sk" + "-test-9f8e7d6c5b4a39281706f5e4d3c2b1a0"  # built: the file holds no key-shaped text
SHARED = "A context every item shares. " * 20


def _result(item_id: str) -> ItemResult:
    return ItemResult(id=item_id, status="ok", output={"verdict": "yes"}, calls=[])


def test_inputs_are_kept_redacted_read_back_and_searched(tmp_path: Path):
    with ResultStore(tmp_path / RESULTS_DB, judge_fingerprint="fp") as store:
        store.put_many(
            [_result("a"), _result("b"), _result("c")],
            [0, 1, 2],
            [
                {"question": "Where is Zürich?", "context": SHARED, "ranks": [1, 2]},
                {"question": f"My key is {KEY}, is it safe?", "context": SHARED, "ranks": [3]},
                None,  # an item whose inputs are not recorded
            ],
        )
    with ResultStore(tmp_path / RESULTS_DB, read_only=True) as store:
        found = store.item_inputs(["a", "b", "c", "missing"])
        assert set(found) == {"a", "b"}
        assert found["a"] == {"question": "Where is Zürich?", "context": SHARED, "ranks": [1, 2]}
        assert KEY not in found["b"]["question"] and "[REDACTED" in found["b"]["question"]
        assert store.item_detail("a").inputs == found["a"]
        assert store.item_detail("c").inputs is None
        assert store.items_with_input("zÜRICH".replace("Ü", "ü")) == {"a"}
        assert store.items_with_input("every item SHARES") == {"a", "b"}
        assert store.items_with_input("nowhere") == set()
    with sqlite3.connect(tmp_path / RESULTS_DB) as db:
        texts = [row[0] for row in db.execute("SELECT content FROM messages")]
    assert texts.count(SHARED) == 1  # the shared context is stored once
    assert not any(KEY in text for text in texts)


def test_a_file_from_before_inputs_is_read_without_them_and_not_written_to(tmp_path: Path):
    """A run recorded before jurist kept the judged text is still read (the pages take the text
    from its data file); resuming it is refused, naming the layout, and the file is left as it was."""
    database = tmp_path / RESULTS_DB
    with ResultStore(database, judge_fingerprint="fp") as store:
        store.put(_result("old"), 0)
    with sqlite3.connect(database) as db:
        db.execute("ALTER TABLE results DROP COLUMN inputs")
    with ResultStore(database, read_only=True) as store:
        assert store.item_detail("old").inputs is None
        assert store.item_inputs(["old"]) == {} and store.items_with_input("x") is None
    before = database.read_bytes()
    with pytest.raises(RunDirectoryError, match="no column 'inputs'.*does not write to"):
        ResultStore(database, judge_fingerprint="fp")
    assert database.read_bytes() == before


def test_a_rerecorded_item_keeps_its_inputs(tmp_path: Path):
    with ResultStore(tmp_path / RESULTS_DB, judge_fingerprint="fp") as store:
        store.put(_result("a"), 0, {"text": "kept"})
        store.put(_result("a"), 0)  # a derived run re-records its verdict without inputs
        assert store.item_inputs(["a"]) == {"a": {"text": "kept"}}


def test_items_that_only_point_at_other_runs_record_no_inputs():
    assert Item("a", {"item": "a"}, record_inputs=False).recorded_inputs is None
    assert Item("a", {"text": "t"}).recorded_inputs == {"text": "t"}


def test_a_baseline_run_records_the_judged_text(tmp_path: Path):
    task = tmp_path / "task.yaml"
    task.write_text(
        "name: tone\ninstructions: Say the tone.\ninputs: [text]\n"
        "output: {kind: label, labels: [calm, angry]}\n"
        'baseline: {rules: [{pattern: "!", value: angry}], default: calm}\n',
        encoding="utf-8",
    )
    data = write_jsonl(tmp_path / "rows.jsonl", [{"id": "x1", "text": "Fine."}, {"id": "x2", "text": "No!"}])
    jurist.judge(task, data, out=tmp_path / "run", progress=False)
    with ResultStore(tmp_path / "run" / RESULTS_DB, read_only=True) as store:
        assert store.item_inputs(["x1", "x2"]) == {"x1": {"text": "Fine."}, "x2": {"text": "No!"}}
