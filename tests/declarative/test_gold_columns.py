"""Scoring reads a YAML task's gold file once, into columns: ids, gold verdicts and (pairwise)
the responses' lengths, with no object per row; the same rows and errors as ``read_gold``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from jurist import verbs
from jurist.errors import InputError
from jurist.tasks.declarative import data as data_module
from jurist.tasks.declarative import load_task_file
from jurist.tasks.declarative.data import positions_of, read_gold, read_gold_columns
from jurist.tasks.declarative.spec import validate_task

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def _spec(kind: str):
    output = {"kind": "label", "labels": ["archive", "museum"]} if kind == "label" else {"kind": "pairwise"}
    inputs = ["text"] if kind == "label" else ["response_a", "response_b"]
    return validate_task(
        {"name": "t", "instructions": "Judge.", "inputs": inputs, "output": output, "gold": "g"}
    )


def test_gold_columns_hold_the_rows_read_gold_reads(tmp_path):
    rows = [
        {"id": "a", "text": "x", "g": "museum"},
        {"id": "b", "text": "x", "g": " Museum"},  # read as the listed label, and counted
        {"id": "c", "text": "x", "g": None},
        {"id": "d", "g": "archive"},  # no input: gold files need only id and gold
    ]
    spec = _spec("label")
    file = _write(tmp_path / "gold.jsonl", rows)
    columns = read_gold_columns(spec, file)
    every = read_gold(spec, file, every_row=True)
    assert columns.ids.tolist() == list(every)
    assert columns.values.tolist() == [row.gold for row in every.values()]
    assert columns.normalised.tolist() == [row.gold_given is not None for row in every.values()]
    assert columns.lengths is None
    labelled = columns.labelled()
    assert labelled.ids.tolist() == list(read_gold(spec, file)) == ["a", "b", "d"]
    # One string object per label, whatever the rows: the task's own.
    assert labelled.values[0] is labelled.values[1]


def test_pairwise_gold_columns_hold_word_counts_not_texts(tmp_path):
    rows = [
        {"id": "1", "response_a": "one two three", "response_b": "four", "g": "A"},
        {"id": "2", "response_a": "five", "g": "2"},  # no response_b: no lengths
    ]
    columns = read_gold_columns(_spec("pairwise"), _write(tmp_path / "pairs.jsonl", rows))
    assert columns.values.tolist() == ["A", "B"]
    assert columns.lengths.tolist() == [[3, 1], [-1, -1]]


def test_gold_columns_raise_what_read_gold_raises(tmp_path):
    spec = _spec("label")
    file = _write(tmp_path / "gold.jsonl", [{"id": "a", "g": "museum"}, {"id": "a", "g": "archive"}])
    with pytest.raises(InputError) as expected:
        read_gold(spec, file)
    with pytest.raises(InputError) as found:
        read_gold_columns(spec, file)
    assert str(found.value) == str(expected.value)
    assert "also occurs on line 1" in str(found.value)


def test_positions_find_the_last_of_repeated_keys():
    assert positions_of(["a", "b", "a"], ["a", "c", "b"]).tolist() == [2, -1, 1]
    assert positions_of(np.array([], dtype=object), ["a"]).tolist() == [-1]


@pytest.mark.parametrize(
    ("name", "data"), [("mt-bench-grader", "answers.jsonl"), ("llmbar-pairwise", "pairs.json")]
)
def test_scoring_reads_the_gold_file_once(name, data, tmp_path, monkeypatch):
    task_file, gold = EXAMPLES / name / "task.yaml", EXAMPLES / name / data
    judged = verbs.judge(task_file, gold, out=tmp_path / "run", progress=False)
    reads: list[Path] = []
    original = data_module.iter_records

    def counted(path, *args, **kwargs):
        reads.append(Path(path))
        return original(path, *args, **kwargs)

    monkeypatch.setattr(data_module, "iter_records", counted)
    again = verbs.score(task_file, tmp_path / "run", gold=gold)
    assert reads == [gold]
    assert again.summary["agreement"] == judged.summary["agreement"]
    assert again.items["gold"].notna().all()
    if load_task_file(task_file).spec.kind == "pairwise":
        assert again.extra["pairs"]["gold"].notna().all()
