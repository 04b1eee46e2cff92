"""jurist's adapters format and parse exactly as DSPy's do (the values a judge answers with, the
errors of a reply that does not parse), while building each pydantic TypeAdapter once; except
that a value DSPy would coerce into its type (``True`` as the int 1, ``["a"] ["b"]`` as its
last list) or a label outside a Literal's values is refused with a message naming the problem."""

from __future__ import annotations

import enum
from typing import Literal

import dspy
import pydantic
import pytest
from dspy.utils.exceptions import AdapterParseError

from jurist.judges import adapters
from jurist.judges.adapters import CachedChatAdapter, CachedJSONAdapter, InvalidVerdictError


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
    _chat(**{**GOOD, "count": "three"}),
    _chat(**{**GOOD, "support": '[{"key": "s1"}]'}),  # a required field missing inside
    _chat(**{name: value for name, value in GOOD.items() if name != "score"}),  # a field missing
    "Here you go:\n" + _chat(**GOOD) + "\ntrailing words",
    "no structure at all",
]

JSON_REPLIES = [
    '{"label": "yes", "score": 0.75, "count": 3, "passed": true, "keys": ["a"], '
    '"support": [{"key": "s1", "supported": false}], "note": null, "mood": "bad"}',
    '{"label": "no", "score": "2", "count": "4", "passed": "True", "keys": "[\\"a\\"]", '
    '"support": "[]", "note": "x", "mood": "good", "ignored": 1}',
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


JSON_BASE = (
    '{"label": "yes", "score": 1, "count": 1, "passed": true, "keys": [], "support": [], '
    '"note": null, "mood": "good"}'
)

# (the reply, what our message says) for values DSPy reads by coercion, or a label it refuses
# with pydantic's text: each is an invalid verdict, named.
REFUSED = [
    (_chat(**{**GOOD, "label": "perhaps"}), "'perhaps' is not one of yes, no, maybe"),
    # An indented first header: cut as DSPy cuts it, the label's text starts with "]]".
    ("  " + _chat(**GOOD), "field 'label': ']]\\nyes' is not one of yes, no, maybe"),
    (
        _chat(**{**GOOD, "count": "True"}),
        "field 'count': expected an integer written as one (like 7), got 'True'",
    ),
    (_chat(**{**GOOD, "count": "1e1"}), "got '1e1'"),
    (_chat(**{**GOOD, "count": "0x7"}), "got '0x7'"),
    (_chat(**{**GOOD, "count": "7 # score"}), "got '7 # score'"),
    (_chat(**{**GOOD, "count": "7.0"}), "got '7.0'"),
    (_chat(**{**GOOD, "score": "true"}), "field 'score': expected a number (like 0.8), got 'true'"),
    (_chat(**{**GOOD, "passed": "1"}), "field 'passed': expected true or false, got '1'"),
    (_chat(**{**GOOD, "keys": '["a"] ["b"]'}), "field 'keys': the field holds more than one value"),
    (JSON_BASE.replace('"label": "yes"', '"label": "nope"'), "'nope' is not one of yes, no, maybe"),
    (JSON_BASE.replace('"count": 1', '"count": true'), "field 'count': expected an integer"),
    (JSON_BASE.replace('"count": 1', '"count": 1e1'), "got 10.0"),
    (JSON_BASE.replace('"count": 1', '"count": 7.0'), "got 7.0"),
    (
        JSON_BASE.replace('"score": 1', '"score": true'),
        "field 'score': expected a number (like 0.8), got True",
    ),
    (JSON_BASE.replace('"keys": []', '"keys": "[\\"a\\"] [\\"b\\"]"'), "more than one value"),
]


@pytest.mark.parametrize(("reply", "message"), REFUSED)
def test_values_dspy_would_coerce_are_invalid_verdicts_named(reply: str, message: str) -> None:
    json_style = reply.startswith("{")
    ours = CachedJSONAdapter() if json_style else CachedChatAdapter()
    with pytest.raises(InvalidVerdictError) as refused:
        ours.parse(Verdict, reply)
    first_line = str(refused.value).splitlines()[0]
    assert first_line.startswith("invalid verdict: field ") and message in first_line
    assert refused.value.lm_response  # the raw text travels with the error
    if "is not one of" not in message:  # DSPy's own parser reads a value out of each of these
        theirs = (dspy.JSONAdapter() if json_style else dspy.ChatAdapter()).parse(Verdict, reply)
        assert set(theirs) == set(Verdict.output_fields)


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
