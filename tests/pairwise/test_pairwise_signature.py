"""The pairwise signatures, the typed choice and SubEval's choice extraction."""

from __future__ import annotations

from pathlib import Path

import pytest

import jurist
from jurist.signatures.pairwise import (
    OPTION_TEXTS,
    PairwiseChoice,
    extract_choice,
    option_letters,
    pairwise_signature,
    parse_judgement,
)


@pytest.mark.parametrize("num_options", [2, 3, 4])
def test_signature_words_the_options_as_the_seed(num_options: int) -> None:
    signature = pairwise_signature(num_options)
    assert OPTION_TEXTS[num_options] in signature.instructions
    assert list(signature.input_fields) == [
        "question",
        "evaluating_guidance",
        "reference_answer",
        "response_1",
        "response_2",
    ]
    assert list(signature.output_fields) == ["choice", "reason"]
    assert "model" not in " ".join(signature.input_fields)


def test_seed_option_wording() -> None:
    assert OPTION_TEXTS[3].splitlines()[-1] == "C. Both Response 1 and Response 2 are good."
    assert OPTION_TEXTS[4].splitlines()[-1] == "D. Neither Response 1 nor Response 2 is good."
    assert option_letters(2) == ("A", "B")
    with pytest.raises(ValueError):
        pairwise_signature(5)


@pytest.mark.parametrize(
    ("text", "num_options", "expected"),
    [
        ("Choice: A\nReason: \n1. better", 4, "A"),
        ("Some preamble.\nChoice: D\nReason: both bad", 4, "D"),
        ("选择：B\n理由：", 4, "B"),
        ("Choice: B then later Choice: A", 4, None),  # two different choices: ambiguous, not the first
        ("choice: A", 4, None),
        ("Choice:A", 4, None),
        ("Choice: **A**", 4, None),
        ("Choice: C", 2, None),
        ("Choice: C", 3, "C"),
        ("EM", 4, None),
        (float("nan"), 4, None),
        (None, 4, None),
    ],
)
def test_extract_choice_like_subeval(text: object, num_options: int, expected: str | None) -> None:
    assert extract_choice(text, num_options) == expected


def test_parse_and_render_round_trip() -> None:
    parsed = parse_judgement("Choice: B\nReason: \n1. clearer\n2. complete")
    assert parsed == PairwiseChoice(choice="B", reason="1. clearer\n2. complete")
    assert parse_judgement(parsed.to_text()) == parsed
    missing = parse_judgement("I cannot decide.")
    assert missing.choice is None and missing.reason == "I cannot decide."
    assert parse_judgement(missing.to_text()).choice is None


PROMPTS = Path(__file__).resolve().parents[1] / "data" / "pairwise-prompts"


@pytest.mark.parametrize("num_options", [2, 3, 4])
def test_prompt_of_each_option_count_is_unchanged(num_options: int) -> None:
    # Recorded from the three hand-written signatures before they were built from one
    # template: the instructions and the system message a model is sent stay byte for byte.
    expected_instructions = (PROMPTS / f"instructions-{num_options}.txt").read_text(encoding="utf-8")
    expected_system = (PROMPTS / f"system-{num_options}.txt").read_text(encoding="utf-8")
    assert pairwise_signature(num_options).instructions == expected_instructions
    calls = jurist.prompt("pairwise", "sample:pairs", options={"num_options": num_options})
    assert {call["messages"][0]["content"] for call in calls} == {expected_system}
