"""Values are redacted with one scan when nothing in them is secret, and exactly as redacting
each of their texts on its own redacts them otherwise (inside redacting_once too)."""

from __future__ import annotations

import random
from collections import OrderedDict

from pydantic import BaseModel, ConfigDict

from jurist.redaction import (
    REDACTED,
    _pattern,
    _redact_walk,
    redact,
    redact_value,
    redacting_once,
    register_secret,
)

SECRET = "judge-secret-value-991"
PIECES = [
    "plain words",
    "api_key",
    "=",
    ": ",
    "sk" + "-abcdef1234567890XYZ",  # key-shaped; built so the file holds no key
    "Bearer",
    " token1234567890",
    SECRET,
    "authorization",
    '"',
    "x",
    "",
    "AKIA" + "ABCDEFGHIJKLMNOP",
    "[REDACTED]",
    "http://",  # URL user-info (issue 21, item 5)
    "user:pw1234@host/v1",
    "@",
]


class _Reply(BaseModel):
    """An object like a provider's response: fields, nested objects, extra fields."""

    model_config = ConfigDict(extra="allow")

    content: str
    parts: list[object] = []


def _text(rng: random.Random) -> str:
    return "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 4)))


def _value(rng: random.Random, depth: int = 0) -> object:
    kind = rng.randint(0, 9 if depth < 3 else 3)
    if kind == 0:
        return _text(rng)
    if kind == 1:
        return rng.choice([None, True, 3, 2.5])
    if kind in (2, 3):
        return _text(rng) if rng.random() < 0.7 else rng.randint(0, 9)
    if kind == 4:
        return [_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    if kind == 5:
        return tuple(_value(rng, depth + 1) for _ in range(rng.randint(0, 3)))
    if kind == 6:
        return _Reply(content=_text(rng), parts=[_value(rng, depth + 1)], note=_text(rng))
    if kind == 7:
        return _text(rng).encode("utf-8")
    if kind == 8:
        return OrderedDict((_text(rng), _value(rng, depth + 1)) for _ in range(rng.randint(0, 3)))
    return {_text(rng): _value(rng, depth + 1) for _ in range(rng.randint(0, 4))}


def _each_text(value: object) -> object:
    """The value with each of its texts redacted on its own (no joined scan)."""
    return _redact_walk(value, _pattern(), 0, set())[0]


def test_values_are_redacted_as_redacting_each_text_redacts_them():
    register_secret(SECRET)
    rng = random.Random(7)
    for _ in range(3000):
        value = _value(rng)
        assert redact_value(value) == _each_text(value)


def test_inside_redacting_once_values_are_redacted_as_outside_it():
    register_secret(SECRET)
    rng = random.Random(11)
    values = [_value(rng) for _ in range(1500)]
    expected = [_each_text(value) for value in values]
    with redacting_once():
        for _ in range(2):  # the second time, the clean texts are known
            assert [redact_value(value) for value in values] == expected
        assert redact(f"key {SECRET}") == f"key {REDACTED}"
        assert redact("clean text") == "clean text"
        assert redact("clean text") == "clean text"


def test_a_clean_value_is_returned_as_it_is_and_a_secret_one_is_copied():
    clean = {"outputs": ["[[ ## verdict ## ]]\nyes"], "usage": {"prompt_tokens": 3}, "cost": None}
    assert redact_value(clean) is clean
    register_secret(SECRET)
    leaked = {"outputs": [f"my key is {SECRET}"], "raw": None}
    redacted = redact_value(leaked)
    assert redacted == {"outputs": [f"my key is {REDACTED}"], "raw": None}
    assert leaked["outputs"] == [f"my key is {SECRET}"]  # the original is not modified


def test_redacting_once_holds_a_bounded_amount_of_clean_text():
    from jurist.redaction import _CLEAN_CHARACTERS, _once

    with redacting_once():
        for i in range(400):
            text = f"clean text {i} " * 500  # about 7,000 characters each
            assert redact(text) == text
            assert redact_value({"reply": text, "n": i}) == {"reply": text, "n": i}
        assert 0 < _once.active.characters <= _CLEAN_CHARACTERS
        assert sum(map(len, _once.active.clean)) == _once.active.characters
    assert _once.active is None
