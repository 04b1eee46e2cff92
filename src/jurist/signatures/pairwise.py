"""Pairwise (SubEval) judging: the judge's signatures, its typed output and the answer parser.

The judge sees a question, optional evaluating guidance and reference answer, and two
responses it knows only as "Response 1" and "Response 2" (never the models' names). It
picks one of 2, 3 or 4 lettered options, worded as in the SubEval seed, and gives its
reasons. Every comparison is asked twice, the second time with the responses swapped;
the scoring of both orders lives in ``jurist.metrics.pairwise.subeval``.

A judge that answers in free text (as SubEval's judges did) is parsed by
:func:`parse_judgement`, whose choice follows the rules of
:mod:`jurist.metrics.pairwise.choice_readings` (re-exported here: :func:`extract_choice`,
:func:`read_choice`, :data:`CHOICE_RULES`).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, fields, replace
from typing import Literal

import dspy
from pydantic import BaseModel, Field

from jurist.metrics.pairwise.choice_readings import (
    CHOICE_RULES,
    Choice,
    ChoiceReading,
    ChoiceRule,
    extract_choice,
    option_letters,
    read_choice,
)

__all__ = [
    "CHOICE_RULES",
    "INPUT_NAMES",
    "OPTION_TEXTS",
    "Choice",
    "ChoiceReading",
    "ChoiceRule",
    "PairwiseChoice",
    "PairwiseChoice2",
    "PairwiseChoice3",
    "PairwiseChoice4",
    "PairwiseInputs",
    "extract_choice",
    "option_letters",
    "pairwise_signature",
    "parse_judgement",
    "read_choice",
]

OPTION_TEXTS: dict[int, str] = {
    2: (
        "Please choose from the following 2 options based on the scoring criteria:\n"
        "A. Response 1 is better than Response 2.\n"
        "B. Response 2 is better than Response 1."
    ),
    3: (
        "Please choose from the following 3 options based on the scoring criteria:\n"
        "A. Response 1 is better than Response 2.\n"
        "B. Response 2 is better than Response 1.\n"
        "C. Both Response 1 and Response 2 are good."
    ),
    4: (
        "Please choose from the following 4 options based on the scoring criteria:\n"
        "A. Response 1 is good; Response 2 is not good.\n"
        "B. Response 2 is good; Response 1 is not good.\n"
        "C. Both Response 1 and Response 2 are good.\n"
        "D. Neither Response 1 nor Response 2 is good."
    ),
}
"""The option lists of the SubEval seed, word for word, by number of options."""


@dataclass(frozen=True)
class PairwiseInputs:
    """What a pairwise judge sees of one ordered comparison: never the models' names.

    The judge's keyword inputs (:meth:`as_inputs`), the same for the LLM program, the offline
    baseline and a runner item; :meth:`swapped` is the other order of the same comparison.

    Examples:
        >>> first = PairwiseInputs(question="Capital of France?", response_1="Paris", response_2="Lyon")
        >>> first.swapped().response_1
        'Lyon'
        >>> sorted(first.as_inputs())
        ['evaluating_guidance', 'question', 'reference_answer', 'response_1', 'response_2']
    """

    question: str
    response_1: str
    response_2: str
    reference_answer: str = ""
    evaluating_guidance: str = ""

    def swapped(self) -> PairwiseInputs:
        """The same comparison with Response 1 and Response 2 exchanged."""
        return replace(self, response_1=self.response_2, response_2=self.response_1)

    def as_inputs(self) -> dict[str, str]:
        """The judge's keyword inputs, one per field of the signature's inputs."""
        return asdict(self)


INPUT_NAMES: tuple[str, ...] = tuple(field.name for field in fields(PairwiseInputs))
"""The names of the judge's inputs, in the order of :class:`PairwiseInputs`."""

_REASON_PATTERN = re.compile(r"(?:理由：|Reason:)[ \t]*\n?(.*)", re.DOTALL)


class PairwiseChoice(BaseModel):
    """One judgement of (Response 1, Response 2): the chosen option and the reasons.

    ``choice`` is ``None`` when no valid choice could be extracted from the judge's
    answer; such a judgement is counted as not extracted and never scored.
    """

    choice: Choice | None = Field(description="The chosen option letter, or None if none could be extracted.")
    reason: str = Field(default="", description="The judge's reasons for its choice.")

    def to_text(self) -> str:
        """The judgement in SubEval's record format, ``Choice: X\\nReason: ...``.

        A judgement without a choice is written as its reason alone, so that re-parsing
        it gives "not extracted" again.
        """
        if self.choice is None:
            return self.reason
        return f"Choice: {self.choice}\nReason: \n{self.reason}"


def parse_judgement(text: object, num_options: int = 4) -> PairwiseChoice:
    """Parse a judge's raw ``Choice: X\\nReason: ...`` answer into a :class:`PairwiseChoice`.

    The choice follows :func:`extract_choice`; the reason is the text after ``Reason:``
    (the whole text when there is no such marker).

    Examples:
        >>> parse_judgement("Choice: A\\nReason: \\n1. complete").reason
        '1. complete'
    """
    raw = text if isinstance(text, str) else ""
    match = _REASON_PATTERN.search(raw)
    reason = match.group(1).strip() if match else raw.strip()
    return PairwiseChoice(choice=extract_choice(raw, num_options), reason=reason)


class _PairwiseInputs(dspy.Signature):
    """Compare two responses to the same question."""

    question: str = dspy.InputField(desc="The question or task both responses answer.")
    evaluating_guidance: str = dspy.InputField(
        desc="The scoring criteria to judge by; may be empty (then judge overall quality)."
    )
    reference_answer: str = dspy.InputField(
        desc="A reference (ground-truth) answer to compare against; may be empty."
    )
    response_1: str = dspy.InputField(desc="Response 1.")
    response_2: str = dspy.InputField(desc="Response 2.")


_INSTRUCTIONS = """Evaluate the two responses (Response 1, Response 2) to the question by the scoring criteria
in the evaluating guidance, and by the reference answer when one is given.

- A response that is incomplete or misses a required key component is a bad one.
- Count verbosity and repetition against a response, to the extent they occur.
- Give extra credit to a response that is well formatted and clearly structured.

Be an impartial, objective judge: the order in which the responses are shown must not
influence your decision, nor must their length. Pay the same attention to both.

{options}"""

_ABSOLUTE_NOTE = """

If both responses are good but one is better, choose C and say which is better in the
reasons; choose A or B only if one of the responses is not good."""
"""With 4 options the choices say whether each response is good, not which is better."""


def _instructions(num_options: int) -> str:
    """The judge's instructions for 2, 3 or 4 options: one text, the seed's option list."""
    note = _ABSOLUTE_NOTE if num_options == 4 else ""
    return _INSTRUCTIONS.format(options=OPTION_TEXTS[num_options]) + note


class PairwiseChoice2(_PairwiseInputs):
    __doc__ = _instructions(2)

    choice: Literal["A", "B"] = dspy.OutputField(desc="The letter of the chosen option.")
    reason: str = dspy.OutputField(desc="Detailed reasons for the choice, as a numbered list.")


class PairwiseChoice3(_PairwiseInputs):
    __doc__ = _instructions(3)

    choice: Literal["A", "B", "C"] = dspy.OutputField(desc="The letter of the chosen option.")
    reason: str = dspy.OutputField(desc="Detailed reasons for the choice, as a numbered list.")


class PairwiseChoice4(_PairwiseInputs):
    __doc__ = _instructions(4)

    choice: Literal["A", "B", "C", "D"] = dspy.OutputField(desc="The letter of the chosen option.")
    reason: str = dspy.OutputField(desc="Detailed reasons for the choice, as a numbered list.")


_SIGNATURES: dict[int, type[dspy.Signature]] = {2: PairwiseChoice2, 3: PairwiseChoice3, 4: PairwiseChoice4}


def pairwise_signature(num_options: int) -> type[dspy.Signature]:
    """The judge's signature for 2, 3 or 4 options (:class:`PairwiseChoice2` ... ``4``).

    Raises:
        ValueError: If ``num_options`` is not 2, 3 or 4.
    """
    option_letters(num_options)
    return _SIGNATURES[num_options]
