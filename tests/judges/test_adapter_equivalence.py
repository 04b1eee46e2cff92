"""jurist's adapters format and parse exactly as DSPy's do (the values a judge answers with, the
errors of a reply that does not parse), while building each pydantic TypeAdapter once."""

from __future__ import annotations

import enum
from typing import Literal

import dspy
import pydantic
import pytest
from dspy.utils.exceptions import AdapterParseError

from jurist.judges import adapters
from jurist.judges.adapters import CachedChatAdapter, CachedJSONAdapter


class Support(pydantic.BaseModel):
    key: str
    supported: bool
    keys: list[str] = []


class Mood(enum.Enum):
    GOOD = "good"
    BAD = "bad"


class Verdict(dspy.Signature):
    """Judge the answer."""

    question: str = dspy.InputField()
    documents: list[str] = dspy.InputField()
    extra: dict[str, int] = dspy.InputField()
    label: Literal["yes", "no", "maybe"] = dspy.OutputField()
    score: float = dspy.OutputField()
    count: int = dspy.OutputField()
    passed: bool = dspy.OutputField()
    keys: list[str] = dspy.OutputField()
    support: list[Support] = dspy.OutputField()
    note: str | None = dspy.OutputField()
    mood: Mood = dspy.OutputField()


def _chat(**fields: str) -> str:
    return (
        "\n\n".join(f"[[ ## {name} ## ]]\n{value}" for name, value in fields.items())
        + "\n\n[[ ## completed ## ]]"
    )


GOOD = {
    "label": "yes",
    "score": "0.75",
    "count": "3",
    "passed": "True",
    "keys": '["a", "b"]',
    "support": '[{"key": "s1", "supported": true, "keys": ["d1"]}]',
    "note": "fine",
    "mood": "good",
}

CHAT_REPLIES = [
    _chat(**GOOD),
    _chat(**{**GOOD, "label": "'maybe'", "passed": "false", "note": "None", "mood": "BAD"}),
    _chat(**{**GOOD, "label": "Literal[no]", "score": "1", "keys": "['x']"}),
    _chat(**{**GOOD, "label": "perhaps"}),  # not one of the Literal's values
    _chat(**{**GOOD, "count": "three"}),
    _chat(**{**GOOD, "support": '[{"key": "s1"}]'}),  # a required field missing inside
    _chat(**{name: value for name, value in GOOD.items() if name != "score"}),  # a field missing
    "  " + _chat(**GOOD),  # an indented first header
    "Here you go:\n" + _chat(**GOOD) + "\ntrailing words",
    "no structure at all",
]

JSON_REPLIES = [
    '{"label": "yes", "score": 0.75, "count": 3, "passed": true, "keys": ["a"], '
    '"support": [{"key": "s1", "supported": false}], "note": null, "mood": "bad"}',
    '{"label": "no", "score": "2", "count": "4", "passed": "True", "keys": "[\\"a\\"]", '
    '"support": "[]", "note": "x", "mood": "good", "ignored": 1}',
    '{"label": "nope", "score": 1, "count": 1, "passed": true, "keys": [], "support": [], '
    '"note": null, "mood": "good"}',
    '{"label": "yes", "score": 1, "count": 1.5, "passed": true, "keys": [], "support": [], '
    '"note": null, "mood": "good"}',
    '{"label": "yes", "score": 1}',
]


def _outcome(adapter: dspy.Adapter, completion: str) -> object:
    try:
        return adapter.parse(Verdict, completion)
    except AdapterParseError as exc:
        return ("unparseable", str(exc))


@pytest.mark.parametrize("reply", CHAT_REPLIES)
def test_chat_replies_parse_as_dspy_parses_them(reply: str) -> None:
    ours, theirs = _outcome(CachedChatAdapter(), reply), _outcome(dspy.ChatAdapter(), reply)
    assert ours == theirs


@pytest.mark.parametrize("reply", JSON_REPLIES)
def test_json_replies_parse_as_dspy_parses_them(reply: str) -> None:
    ours, theirs = _outcome(CachedJSONAdapter(), reply), _outcome(dspy.JSONAdapter(), reply)
    if isinstance(theirs, tuple):  # errors: the same kind and message, the adapter named as each is
        assert isinstance(ours, tuple) and ours[0] == theirs[0]
        assert ours[1].replace("CachedJSONAdapter", "JSONAdapter") == theirs[1]
    else:
        assert ours == theirs


@pytest.mark.parametrize("adapter", [CachedChatAdapter, CachedJSONAdapter])
def test_prompts_are_dspys_prompts(adapter: type[dspy.Adapter]) -> None:
    reference = dspy.JSONAdapter if adapter is CachedJSONAdapter else dspy.ChatAdapter
    inputs = {"question": "Is it 42?", "documents": ["one", "two"], "extra": {"a": 1}}
    demos = [{**inputs, "question": "Is it 7?", **{name: value for name, value in GOOD.items()}}]
    assert adapter().format(Verdict, demos, inputs) == reference().format(Verdict, demos, inputs)


def test_each_type_adapter_is_built_once(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[object] = []

    class Counting(pydantic.TypeAdapter):  # type: ignore[type-arg]
        def __init__(self, annotation: object, *args: object, **kwargs: object) -> None:
            built.append(annotation)
            super().__init__(annotation, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(adapters, "TypeAdapter", Counting)
    monkeypatch.setattr(adapters, "_type_adapters", {})
    chat = CachedChatAdapter()
    inputs = {"question": "Is it 42?", "documents": ["one", "two"], "extra": {"a": 1}}
    for _ in range(20):
        chat.format(Verdict, [], inputs)
        chat.parse(Verdict, CHAT_REPLIES[0])
    assert len(built) == len(set(map(repr, built))), built  # no annotation twice
    assert len(built) <= 8
