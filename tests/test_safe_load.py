"""The one reader of YAML and JSON input (jurist.safe_load): what it refuses, and that what it
accepts is exactly what ``yaml.safe_load`` and ``json.loads`` read."""

from __future__ import annotations

import json
import math
import sys
import unicodedata

import pytest
import yaml

from jurist import safe_load
from jurist.datasets.io import normalise_id
from jurist.safe_load import (
    LINE_LIMIT,
    MAX_DEPTH,
    QUOTE_LIMIT,
    JSONLimitError,
    clip,
    compose_yaml,
    load_yaml,
    load_yaml_node,
    loads_json,
    quote,
    raw_decode_json,
)


def alias_bomb(levels: int = 9, width: int = 9) -> str:
    """A "billion laughs" YAML document: ``width ** levels`` strings once expanded."""
    lines = [f"a0: &a0 [{', '.join(['lol'] * width)}]"]
    for level in range(1, levels):
        lines.append(f"a{level}: &a{level} [{', '.join([f'*a{level - 1}'] * width)}]")
    lines.append(f"model: *a{levels - 1}")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- YAML

ORDINARY_YAML = [
    "model: openai/gpt-4o-mini\ntemperature: 0.2\nmax_tokens: null\n",
    "defaults: &d {model: m, temperature: 0}\njurors:\n  - {<<: *d, name: one}\n  - {<<: *d, name: two}\n",
    "text: &t |\n  a long\n  block\nagain: *t\nlist: [*t, *t]\n",
    "- 1\n- 2.5\n- true\n- 2001-12-14\n- ~\n- 0x1F\n- 'quoted'\n",
    "",
    "# only a comment\n",
    "a: {b: {c: [1, {d: [2, 3]}]}}\n",
]


@pytest.mark.parametrize("text", ORDINARY_YAML)
def test_ordinary_yaml_reads_as_safe_load_does(text: str) -> None:
    assert load_yaml(text) == yaml.safe_load(text)
    value, node = load_yaml_node(text)
    assert value == yaml.safe_load(text)
    assert (node is None) == (compose_yaml(text) is None)


def test_an_alias_bomb_is_refused_while_composing() -> None:
    with pytest.raises(yaml.YAMLError) as info:
        load_yaml(alias_bomb())
    assert "expand to more than" in str(info.value)
    assert info.value.problem_mark is not None  # type: ignore[attr-defined]
    with pytest.raises(yaml.YAMLError):
        compose_yaml(alias_bomb())


def test_aliases_of_a_long_text_count_their_characters() -> None:
    # Few aliases, but each stands for a long scalar: the expansion is counted in characters.
    text = "big: &b " + "x" * 200_000 + "\nuses: [" + ", ".join(["*b"] * 6) + "]\n"
    with pytest.raises(yaml.YAMLError, match="expand to more than"):
        load_yaml(text)
    assert len(load_yaml(text.replace(", ".join(["*b"] * 6), "*b, *b"))["uses"]) == 2


def test_a_recursive_alias_is_refused() -> None:
    with pytest.raises(yaml.YAMLError, match="recursive"):
        load_yaml("a: &a [1, *a]\n")


@pytest.mark.parametrize("opening", ["[", "{a: "])
def test_yaml_nesting_is_bounded(opening: str) -> None:
    closing = "]" if opening == "[" else "}"
    ok = opening * MAX_DEPTH + "1" + closing * MAX_DEPTH
    assert load_yaml(ok) is not None
    deep = opening * 50_000 + "1" + closing * 50_000  # Python's own recursion would fail here
    with pytest.raises(yaml.YAMLError, match=f"nested deeper than {MAX_DEPTH}"):
        load_yaml(deep)
    block = "".join("  " * level + "- \n" for level in range(MAX_DEPTH + 5))
    with pytest.raises(yaml.YAMLError, match="nested deeper"):
        load_yaml(block)


def test_a_yaml_integer_too_long_to_read_is_a_yaml_error() -> None:
    with pytest.raises(yaml.YAMLError, match="digits") as info:
        load_yaml("max_tokens: " + "9" * (sys.get_int_max_str_digits() + 1) + "\n")
    assert info.value.problem_mark.line == 0  # type: ignore[attr-defined]


# ---------------------------------------------------------------- JSON

ORDINARY_JSON = [
    '{"id": "a", "score": 3, "ok": true, "x": null, "f": 1.5e-7, "l": [1, [2, {"k": "v"}]]}',
    '[{"a": 1}, {"a": 2}]',
    '"caf\\u00e9 \\ud83d\\ude00"',
    '{"nan": NaN, "inf": -Infinity, "big": 1e400}',
    '"\\ud800"',  # a lone surrogate: Python's json reads it
    '  {"a": [ ]}  \n',
    "12345678901234567890123456789",
    '{"a": "b", "A": "c"}',
]


@pytest.mark.parametrize("text", ORDINARY_JSON)
@pytest.mark.parametrize("fast", [True, False], ids=["jiter", "stdlib"])
def test_ordinary_json_reads_as_json_loads_does(text: str, fast: bool, monkeypatch) -> None:
    if not fast:
        monkeypatch.setattr(safe_load, "_FAST", None)
    expected = json.loads(text)
    got = loads_json(text)
    assert json.dumps(got) == json.dumps(expected)
    assert json.dumps(loads_json(text.encode("utf-8"))) == json.dumps(expected)


@pytest.mark.parametrize(
    "text",
    ['{"a": 1,', "[1,]", "{'a': 1}", '{"a": "x\ty"}', "", '{"a": 1} 2', "[01]", "NaNa"],
)
@pytest.mark.parametrize("fast", [True, False], ids=["jiter", "stdlib"])
def test_not_json_raises_pythons_own_error(text: str, fast: bool, monkeypatch) -> None:
    if not fast:
        monkeypatch.setattr(safe_load, "_FAST", None)
    with pytest.raises(json.JSONDecodeError) as mine:
        loads_json(text)
    with pytest.raises(json.JSONDecodeError) as theirs:
        json.loads(text)
    assert (mine.value.msg, mine.value.pos) == (theirs.value.msg, theirs.value.pos)


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ('{"id": "a", "label": "x", "label": "y"}', "label"),
        ('{"row": {"a": 1, "b": 2, "a": 3}}', "a"),
        ('[{"ok": 1}, {"k": 1, "\\u006b": 2}]', "k"),
        ('{"a\\"b": 1, "a\\"b": 2}', 'a"b'),
    ],
)
@pytest.mark.parametrize("fast", [True, False], ids=["jiter", "stdlib"])
def test_a_key_given_twice_is_refused_and_named(text: str, key: str, fast: bool, monkeypatch) -> None:
    if not fast:
        monkeypatch.setattr(safe_load, "_FAST", None)
    with pytest.raises(JSONLimitError) as info:
        loads_json(text)
    assert info.value.key == key
    assert "twice" in info.value.reason and repr(key) in info.value.reason


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 300, 1_000, 100_000])
@pytest.mark.parametrize("fast", [True, False], ids=["jiter", "stdlib"])
def test_json_nesting_is_bounded(depth: int, fast: bool, monkeypatch) -> None:
    if not fast:
        monkeypatch.setattr(safe_load, "_FAST", None)
    deep = '{"id": "a", "unused": ' + "[" * depth + "]" * depth + "}"
    with pytest.raises(JSONLimitError, match=f"nested deeper than {MAX_DEPTH}"):
        loads_json(deep)
    with pytest.raises(JSONLimitError):
        raw_decode_json("[" + deep + "]", 1)


def test_json_at_the_depth_limit_and_brackets_in_strings_are_read() -> None:
    assert loads_json("[" * MAX_DEPTH + "]" * MAX_DEPTH) is not None
    many = json.dumps({"text": "[" * 5_000 + "{" * 5_000, "list": [[1]] * 300})
    assert loads_json(many)["text"].startswith("[[[")
    assert raw_decode_json("  " + many + " tail", 2)[1] == len(many) + 2


def test_a_json_integer_too_long_to_read_is_refused() -> None:
    digits = sys.get_int_max_str_digits()
    with pytest.raises(JSONLimitError, match="digits"):
        loads_json('{"n": ' + "7" * (digits + 1) + "}")
    assert loads_json("7" * digits) == int("7" * digits)


# ---------------------------------------------------------------- quoting and ids


@pytest.mark.parametrize(
    "value",
    [
        "x" * 10_000_000,
        "\x00" * 5_000,
        ["y" * 300] * 1_000,
        {"k" * 500: list(range(10_000))},
        10 ** (sys.get_int_max_str_digits() + 5),
        b"z" * 100_000,
        3.5,
    ],
    ids=["long text", "escapes", "list", "dict", "huge int", "bytes", "float"],
)
def test_quote_is_short_whatever_the_value(value: object) -> None:
    text = quote(value)
    assert len(text) <= QUOTE_LIMIT + 40, len(text)
    if isinstance(value, str):
        assert f"{len(value):,} characters" in text


def test_quote_of_a_shared_structure_costs_what_a_small_one_costs() -> None:
    # What a YAML alias bomb builds: one list shared at every level (9 ** 9 leaves).
    shared: list[object] = ["lol"] * 9
    for _ in range(8):
        shared = [shared] * 9
    assert len(quote(shared)) <= QUOTE_LIMIT


def test_short_values_are_quoted_as_repr() -> None:
    assert quote("Billing") == "'Billing'"
    assert quote(5) == "5"
    assert quote({"a": [1, 2]}) == "{'a': [1, 2]}"


def test_clip_keeps_the_start_and_the_end() -> None:
    assert clip("short") == "short"
    message = "data.jsonl, line 7, field 'x': expected text, got " + "q" * 100_000 + " (the end)"
    clipped = clip(message)
    assert len(clipped) <= LINE_LIMIT + 60
    assert clipped.startswith("data.jsonl, line 7, field 'x'") and clipped.endswith("(the end)")
    assert "characters left out" in clipped


def test_ids_are_put_in_composed_form() -> None:
    composed, decomposed = "caf\u00e9", "cafe\u0301"
    assert composed != decomposed
    assert normalise_id(decomposed) == normalise_id(composed) == composed
    assert normalise_id("plain-ascii-1") == "plain-ascii-1"
    assert unicodedata.is_normalized("NFC", normalise_id("\u212b"))  # the angstrom sign


def test_nan_survives_the_fast_path() -> None:
    assert math.isnan(loads_json('{"x": NaN}')["x"])
