"""Loading and validating RGB files, and RGB's prompts."""

from __future__ import annotations

import json

import pytest
from rgb_support import DATA_DIR, fact_rows, plain_rows, write_rgb

from jurist.datasets.rgb.loader import (
    RGBFactRow,
    RGBIntRow,
    load_rgb,
    load_rgb_prompts,
    read_rgb_predictions,
    rgb_file_name,
    rgb_set_of,
)
from jurist.errors import ConfigError, InputError


@pytest.mark.parametrize(
    ("name", "language", "kind"),
    [
        ("en.json", "en", "plain"),
        ("zh.json", "zh", "plain"),
        ("en_refine.json", "en", "refine"),
        ("zh_int.json", "zh", "int"),
        ("en_fact.jsonl", "en", "fact"),
    ],
)
def test_set_from_rgb_file_names(name, language, kind):
    assert rgb_set_of(name) == (language, kind)
    assert rgb_file_name(language, kind) == name.replace(".jsonl", ".json")


def test_unknown_file_name_is_refused():
    with pytest.raises(InputError, match="name it as RGB does"):
        rgb_set_of("data/fr_fact.json")


def test_loads_every_kind_of_rgb_file():
    fact = load_rgb(DATA_DIR / "en_fact.json")
    assert (fact.language, fact.kind, fact.name, len(fact)) == ("en", "fact", "en_fact", 4)
    assert all(isinstance(row, RGBFactRow) for row in fact)
    integration = load_rgb(DATA_DIR / "zh_int.json")
    assert all(isinstance(row, RGBIntRow) and len(row.positive) >= 2 for row in integration)
    refine = load_rgb(DATA_DIR / "zh_refine.json", limit=2)
    assert refine.kind == "refine" and [row.id for row in refine] == [107, 133]
    assert refine.describe()["items"] == 2 and len(refine.sha256) == 64


def test_language_and_kind_can_be_given_for_other_names(tmp_path):
    path = write_rgb(tmp_path / "my_rows.jsonl", plain_rows(2))
    dataset = load_rgb(path, language="en", kind="plain")
    assert dataset.name == "en" and len(dataset) == 2


def test_a_json_list_file_is_read_too(tmp_path):
    path = tmp_path / "en.json"
    path.write_text(json.dumps(plain_rows(3)), encoding="utf-8")
    assert len(load_rgb(path)) == 3


def _write_lines(path, lines):
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _bad(tmp_path, name, record):
    good = [json.dumps(row) for row in (fact_rows(2) if "fact" in name else plain_rows(2))]
    return _write_lines(tmp_path / name, [*good, record if isinstance(record, str) else json.dumps(record)])


@pytest.mark.parametrize(
    ("name", "record", "field", "message"),
    [
        ("en.json", "{not json", None, "not valid JSON"),
        ("en.json", "[1, 2]", None, "JSON object"),
        ("en.json", {"id": 9, "answer": "x", "positive": [], "negative": []}, "query", "missing"),
        (
            "en.json",
            {"id": 9, "query": "q", "answer": "x", "positive": "text", "negative": []},
            "positive",
            "",
        ),
        (
            "en.json",
            {"id": 9, "query": "q", "answer": "x", "positive": [1], "negative": []},
            "positive[0]",
            "",
        ),
        ("en.json", {"id": 9, "query": "q", "answer": "", "positive": [], "negative": []}, "answer", "empty"),
        (
            "en.json",
            {"id": 9, "query": "q", "answer": [["a", 3]], "positive": [], "negative": []},
            "answer",
            "",
        ),
        (
            "en.json",
            {"id": 9, "query": "q", "answer": [[]], "positive": [], "negative": []},
            "answer",
            "empty",
        ),
        (
            "en.json",
            {"id": 0, "query": "q", "answer": "x", "positive": [], "negative": []},
            "id",
            "already used",
        ),
        (
            "en_int.json",
            {"id": 9, "query": "q", "answer": ["a"], "positive": [["p"], []], "negative": []},
            "positive",
            "empty",
        ),
        (
            "en_int.json",
            {"id": 9, "query": "q", "answer": ["a"], "positive": ["p"], "negative": []},
            "positive[0]",
            "",
        ),
        (
            "en_fact.json",
            {
                "id": 9,
                "query": "q",
                "answer": "a",
                "positive": ["p", "q"],
                "positive_wrong": ["w"],
                "negative": [],
            },
            "positive_wrong",
            "align",
        ),
        (
            "en_fact.json",
            {"id": 9, "query": "q", "answer": "a", "positive": ["p"], "negative": []},
            "positive_wrong",
            "missing",
        ),
    ],
)
def test_malformed_line_names_file_line_and_field(tmp_path, name, record, field, message):
    if name == "en_int.json":
        rows = [{**row, "positive": [row["positive"]]} for row in plain_rows(2)]
        path = _write_lines(tmp_path / name, [*(json.dumps(row) for row in rows), json.dumps(record)])
    else:
        path = _bad(tmp_path, name, record)
    with pytest.raises(InputError) as caught:
        load_rgb(path)
    error = caught.value
    assert error.line == 3
    assert error.path == str(path)
    assert error.field == field
    assert message in str(error)
    assert f"{path}, line 3" in str(error)


def test_empty_and_missing_files(tmp_path):
    with pytest.raises(InputError, match="file not found"):
        load_rgb(tmp_path / "en.json")
    (tmp_path / "zh.json").write_text("\n\n", encoding="utf-8")
    with pytest.raises(InputError, match="no RGB rows"):
        load_rgb(tmp_path / "zh.json")


def test_bundled_prompts_are_rgbs():
    prompts = load_rgb_prompts()
    assert set(prompts) >= {"en", "zh"}
    assert "insufficient information" in prompts["en"].system
    assert "信息不足" in prompts["zh"].system and "事实性错误" in prompts["zh"].system
    assert prompts["en"].user_message("Who?", ["A", "B"]) == "Document:\nA\nB \n\nQuestion:\nWho?"
    assert prompts["zh"].user_message("谁？", []) == "文档：\n \n\n问题：\n谁？"


def test_custom_prompts_are_validated(tmp_path):
    good = tmp_path / "good.yaml"
    good.write_text("en:\n  system: S\n  instruction: 'D: {DOCS} Q: {QUERY}'\n", encoding="utf-8")
    assert load_rgb_prompts(good)["en"].user_message("q", ["d"]) == "D: d Q: q"
    bad = tmp_path / "bad.yaml"
    bad.write_text("en:\n  system: S\n  instruction: 'Q: {QUERY}'\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="en.instruction"):
        load_rgb_prompts(bad)
    extra = tmp_path / "extra.yaml"
    extra.write_text("en:\n  system: S\n  instruction: '{DOCS} {QUERY} {OTHER}'\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="placeholder"):
        load_rgb_prompts(extra)
    with pytest.raises(ConfigError, match="cannot read"):
        load_rgb_prompts(tmp_path / "missing.yaml")


def test_prediction_file_lines_are_validated(tmp_path):
    good = {
        "id": 1,
        "query": "q",
        "ans": "a",
        "label": [1],
        "prediction": "a",
        "docs": [],
        "noise_rate": 0.2,
        "factlabel": 0,
    }
    path = _write_lines(tmp_path / "p.json", [json.dumps(good), json.dumps({**good, "label": [2]})])
    with pytest.raises(InputError) as caught:
        read_rgb_predictions(path)
    assert (caught.value.line, caught.value.field) == (2, "label")
    missing = {key: value for key, value in good.items() if key != "factlabel"}
    path = _write_lines(tmp_path / "q.json", [json.dumps(good), "", json.dumps(missing)])
    with pytest.raises(InputError) as caught:
        read_rgb_predictions(path)
    assert (caught.value.line, caught.value.field, caught.value.reason) == (3, "factlabel", "missing")
    path = _write_lines(tmp_path / "r.json", [json.dumps(good), "{oops"])
    with pytest.raises(InputError, match="line 2: not valid JSON"):
        read_rgb_predictions(path)
    records = read_rgb_predictions(_write_lines(tmp_path / "s.json", [json.dumps(good)]))
    assert records[0].label == [1] and records[0].line == 1
