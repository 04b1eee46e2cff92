"""Reading a verdict's probabilities from a reply's token log-probabilities (the rule of
:mod:`jurist.judges.logprobs`), on token lists built here, checked against hand computations."""

from __future__ import annotations

import math

import pytest

from jurist.judges.logprobs import VerdictValues, weigh_verdict
from jurist.testing.openai_server import Reply, Token

BOOL = VerdictValues("verdict", ("true", "false"))
LABELS = VerdictValues("verdict", ("supported", "partial", "partially_supported", "unsupported"))
SCORES = VerdictValues("verdict", tuple(str(s) for s in range(1, 11)))


def content(reply: Reply) -> dict:
    """The ``logprobs`` of a chat completion whose reply is ``reply``, as OpenAI shapes it."""
    return {
        "content": [
            {
                "token": token.text,
                "logprob": token.logprob,
                "top_logprobs": [{"token": t, "logprob": lp} for t, lp in token.top],
            }
            for token in reply.tokens
        ]
    }


def chat(probabilities: dict[str, float], chosen: str | None = None) -> dict:
    return content(
        Reply.choosing(
            "[[ ## reasoning ## ]]\nIt is.\n\n[[ ## verdict ## ]]\n",
            probabilities,
            "\n\n[[ ## completed ## ]]",
            chosen=chosen,
        )
    )


def test_yes_no_probabilities_are_renormalised_over_the_allowed_values() -> None:
    # "True" and " true" both read as true; "Maybe" reads as no allowed value and is dropped.
    found = weigh_verdict(chat({"True": 0.6, " true": 0.1, "False": 0.2, "Maybe": 0.1}), BOOL, "true")
    assert found.reason is None
    assert found.probabilities == pytest.approx({"true": 0.7 / 0.9, "false": 0.2 / 0.9})


def test_a_json_answer_is_weighed_at_its_verdict_key() -> None:
    reply = Reply(
        (
            Token('{"reasoning": "fine", ', 0.0),
            Token('"verdict": ', 0.0),
            Token('"', 0.0),
            Token("part", math.log(0.5), (("part", math.log(0.5)), ("supported", math.log(0.3)))),
            Token('ial"}', 0.0),
        )
    )
    # "part" begins both "partial" and "partially_supported": it tells them apart from nothing.
    assert weigh_verdict(content(reply), LABELS, "partial").probabilities is None
    reply = Reply(
        (
            Token('{"verdict": "', 0.0),
            Token("uns", math.log(0.25), (("supported", math.log(0.5)), ("uns", math.log(0.25)))),
            Token('upported"}', 0.0),
        )
    )
    found = weigh_verdict(content(reply), LABELS, "unsupported")
    assert found.probabilities == pytest.approx(
        {"supported": 2 / 3, "partial": 0.0, "partially_supported": 0.0, "unsupported": 1 / 3}
    )


def test_a_score_token_reads_as_the_score_it_equals_before_one_it_begins() -> None:
    # "1" equals the score 1 (and begins 10): it is 1.
    found = weigh_verdict(chat({"8": 0.5, "7": 0.3, "1": 0.1, "10": 0.1}), SCORES, "8")
    assert found.probabilities is not None
    assert {k: v for k, v in found.probabilities.items() if v} == pytest.approx(
        {"8": 0.5, "7": 0.3, "1": 0.1, "10": 0.1}
    )


def test_the_sampled_token_counts_when_the_provider_does_not_list_it() -> None:
    reply = Reply.of("[[ ## verdict ## ]]\n")
    sampled = Token("False", math.log(0.2), (("True", math.log(0.7)),))
    tokens = Reply((*reply.tokens, sampled, *Reply.of("\n\n[[ ## completed ## ]]").tokens))
    found = weigh_verdict(content(tokens), BOOL, "false")
    assert found.probabilities == pytest.approx({"true": 0.7 / 0.9, "false": 0.2 / 0.9})


@pytest.mark.parametrize(
    ("logprobs", "verdict", "reason"),
    [
        (None, "true", "no log-probabilities"),
        ({"content": []}, "true", "no log-probabilities"),
        (content(Reply.of("True")), "true", "not found exactly once"),
        (
            content(Reply.of("[[ ## verdict ## ]]\nTrue\n[[ ## verdict ## ]]\nTrue")),
            "true",
            "not found exactly once",
        ),
        # The value shares its token with the marker: its alternatives are the marker's.
        (content(Reply((Token("[[ ## verdict ## ]]\nTrue", 0.0, ()),))), "true", "no token starts"),
        # The sampled token reads as another verdict than the parsed one.
        (chat({"True": 0.9, "False": 0.1}), "false", "does not tell"),
        # No alternative is an allowed value.
        (chat({"Yes": 0.9, "No": 0.1}, chosen="Yes"), "true", "does not tell"),
    ],
)
def test_an_item_that_cannot_be_weighed_says_why(logprobs, verdict, reason) -> None:
    found = weigh_verdict(logprobs, BOOL, verdict)
    assert found.probabilities is None and reason in (found.reason or "")
