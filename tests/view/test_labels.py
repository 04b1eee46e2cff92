"""Labels: appended, the latest wins, checked by the task's label, exported as a gold file."""

from __future__ import annotations

import io
import json
import textwrap

import pandas as pd
import pytest

from jurist.errors import ConfigError, InputError
from jurist.report.review import LabelSpec
from jurist.verbs import judge
from jurist.view.labels import LABELS_FILE, LabelStore, default_who, export_gold
from support import run_cli, write_jsonl

CHOICE = LabelSpec(kind="choice", choices=("pos", "neg"))


def test_labels_are_appended_and_the_latest_of_an_item_wins(tmp_path):
    store = LabelStore(tmp_path)
    store.append("a", "pos", "ann", spec=CHOICE)
    store.append("b", "neg", "bob", spec=CHOICE)
    store.append("a", "neg", "cy", spec=CHOICE)
    lines = [json.loads(line) for line in (tmp_path / LABELS_FILE).read_text().splitlines()]
    assert [(line["item"], line["label"], line["who"]) for line in lines] == [
        ("a", "pos", "ann"),
        ("b", "neg", "bob"),
        ("a", "neg", "cy"),
    ]
    assert all(line["when"].endswith("+00:00") for line in lines)
    latest = store.latest()
    assert {item: (record.label, record.who) for item, record in latest.items()} == {
        "a": ("neg", "cy"),
        "b": ("neg", "bob"),
    }


def test_values_are_checked_and_parsed(tmp_path):
    store = LabelStore(tmp_path)
    yes_no = LabelSpec(kind="bool")
    score = LabelSpec(kind="score", low=1, high=5)
    assert store.append("x", "yes", "ann", spec=yes_no).label is True
    assert store.append("y", "4", "ann", spec=score).label == 4
    with pytest.raises(ValueError, match="one of pos, neg"):
        store.append("x", "maybe", "ann", spec=CHOICE)
    with pytest.raises(ValueError, match=r"in \[1, 5\]"):
        store.append("y", "9", "ann", spec=score)
    with pytest.raises(ValueError, match="longer than"):
        store.append("y", "3", "a" * 101, spec=score)
    assert [record.label for record in store.records()] == [True, 4]  # nothing bad was written
    assert store.append("z", "2", None, spec=score).who == default_who()


def test_a_damaged_line_names_the_file_and_line(tmp_path):
    (tmp_path / LABELS_FILE).write_text('{"item": "a", "label": "pos"}\n{"item": \n')
    with pytest.raises(InputError, match=r"labels.jsonl, line 2: not JSON"):
        LabelStore(tmp_path).latest()


LABEL_TASK = """\
name: toy-sentiment
instructions: Say whether the text is positive or negative.
inputs: [text]
output:
  kind: label
  labels: [pos, neg]
  reasoning: false
gold: gold
baseline:
  rules:
    - {pattern: "(?i)good", value: pos}
  default: neg
"""


def test_export_round_trip_through_calibrate(tmp_path, capsys):
    task = tmp_path / "task.yaml"
    task.write_text(textwrap.dedent(LABEL_TASK))
    texts = ["good film", "bad film", "good but long", "dull", "good grief", "fine"]
    golds = ["pos", "neg", "neg", "neg", "neg", "pos"]
    data = write_jsonl(
        tmp_path / "data.jsonl",
        [
            {"id": f"t{i}", "text": text, "gold": gold}
            for i, (text, gold) in enumerate(zip(texts, golds, strict=True))
        ],
    )
    run = tmp_path / "run"
    judge(task, data, out=run, progress=False)
    review = json.loads((run / "review.json").read_text())
    assert review["label"]["choices"] == ["pos", "neg"]

    store = LabelStore(run)
    store.append("t2", "pos", "ann", spec=CHOICE)  # the rule judge said pos: a person agrees
    store.append("t4", "neg", "ann", spec=CHOICE)
    store.append("t4", "pos", "bob", spec=CHOICE)  # the latest label of t4 wins
    out = tmp_path / "gold.jsonl"
    assert export_gold(run, out) == (6, 2)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [row["gold"] for row in rows] == ["pos", "neg", "pos", "neg", "pos", "pos"]
    assert [row["text"] for row in rows] == texts

    # The baseline says pos for t0, t2, t4 and neg for the rest: against the labelled gold
    # it is right on t0, t1, t2, t3, t4 and wrong on t5.
    assert (
        run_cli(
            ["calibrate", str(task), "--gold", str(out), "--out", str(tmp_path / "cal"), "--format", "csv"]
        )
        == 0
    )
    leaderboard = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert leaderboard.loc[0, "accuracy"] == pytest.approx(5 / 6)

    assert run_cli(["labels", "list", str(run)]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert [line.split("\t")[:3] for line in listed] == [["t2", '"pos"', "ann"], ["t4", '"pos"', "bob"]]


def test_export_refuses_a_label_the_task_does_not_take_and_a_missing_data_file(tmp_path):
    task = tmp_path / "task.yaml"
    task.write_text(textwrap.dedent(LABEL_TASK))
    data = write_jsonl(tmp_path / "data.jsonl", [{"id": "t0", "text": "good", "gold": "pos"}])
    run = tmp_path / "run"
    judge(task, data, out=run, progress=False)
    (run / LABELS_FILE).write_text('{"item": "t0", "label": "great", "who": "x", "when": ""}\n')
    with pytest.raises(InputError, match="item 't0': label must be one of pos, neg"):
        export_gold(run, tmp_path / "gold.jsonl")
    (run / LABELS_FILE).write_text('{"item": "nope", "label": "pos", "who": "x", "when": ""}\n')
    with pytest.raises(ConfigError, match="no row with that id"):
        export_gold(run, tmp_path / "gold.jsonl")
    data.unlink()
    with pytest.raises(InputError, match="no longer there"):
        export_gold(run, tmp_path / "gold.jsonl")
    assert not (tmp_path / "gold.jsonl").exists()
