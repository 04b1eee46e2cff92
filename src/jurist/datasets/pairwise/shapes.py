"""Preference data in the shapes people publish, recognised from the columns.

Every shape becomes one pair per row: ``question``, ``response_1``, ``response_2``, an optional
``reference``, a gold ``label`` (``"1"``, ``"2"``, ``"tie"`` or ``None``) and, when several
annotators labelled the row, their ``annotations`` (one label or ``None`` per annotator).

=================  ==========================================================  ===================
shape              columns                                                     label convention
=================  ==========================================================  ===================
``arena``          ``prompt, response_a, response_b, winner_model_a,``         one-hot columns
                   ``winner_model_b, winner_tie`` (Chatbot Arena)
``mt-bench-human`` ``model_a, model_b, winner, conversation_a,``               ``model_a``, ``model_b``,
                   ``conversation_b`` (MT-Bench human judgments)               ``tie``, ``tie (bothbad)``
``alpacaeval``     ``instruction, output_1, output_2, preference``             1, 2; 1.5 = tie;
                                                                               -1, 0, empty = none
``alpaca-pairs``   ``instruction, input, response1, response2`` + ``label``,   0 = tie, 1, 2
                   ``preference`` or annotators (PandaLM-style)
``llmbar``         ``input, output_1, output_2, label`` (LLMBar)               1, 2
``pairs``          ``question, response_1, response_2, label`` and aliases     1/2, A/B, tie, ...
=================  ==========================================================  ===================

Several annotators: columns ``annotator1`` ... ``annotatorN`` (``annotator_1`` too), or one
list column ``annotators``; their labels follow the shape's convention and the gold label is
their majority (a shared top count: ``tie``, or no gold, by ``no_majority``).

An ``input`` next to an ``instruction`` is the instruction's input, shown to the judge after
the instruction as in Alpaca's template (``### Instruction:`` then ``### Input:``). A
conversation (a list of ``{role, content}`` messages, or Arena's JSON list of turns) is
rendered turn by turn. Empty responses are legal responses.

A column mapping (``target=column``) renames a file's column to a name a shape knows
before the shape is recognised, e.g. ``response_a=answer_left``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from jurist.datasets.io import cell_text, is_missing
from jurist.errors import ConfigError, InputError
from jurist.metrics.annotators import majority_label
from jurist.safe_load import JSONLimitError, loads_json

__all__ = [
    "SHAPES",
    "NoMajority",
    "Shape",
    "detect_shape",
    "parse_mapping",
    "render_turns",
    "shape_row",
]

NoMajority = Literal["tie", "exclude"]
Label = str | None

_ANNOTATOR = re.compile(r"^annotator_?(\d+)$")
_LIST_COLUMNS = ("annotators", "annotations")

_GENERIC = {
    "1": "1",
    "2": "2",
    "a": "1",
    "b": "2",
    "response_1": "1",
    "response_2": "2",
    "output_1": "1",
    "output_2": "2",
    "model_a": "1",
    "model_b": "2",
    "tie": "tie",
    "tie (bothbad)": "tie",
    "both": "tie",
}


def generic_label(value: Any) -> Label:
    """1/2, A/B, response_1/2, output_1/2, model_a/b, tie, "tie (bothbad)", both; missing → None."""
    if is_missing(value):
        return None
    key = cell_text(value).strip().lower()
    if key not in _GENERIC:
        raise ValueError(f"unknown preference label {value!r}; use 1, 2 or tie")
    return _GENERIC[key]


def _number(value: Any) -> float:
    try:
        return float(cell_text(value).strip())
    except ValueError:
        raise ValueError(f"expected a number, got {value!r}") from None


def alpacaeval_label(value: Any) -> Label:
    """AlpacaEval's ``preference``: 1 = output_1, 2 = output_2, 1.5 = tie; -1, 0, empty = none.

    A weighted preference strictly between 1 and 2 goes to the nearer output (1.5: tie).
    """
    if is_missing(value):
        return None
    number = _number(value)
    if number in (-1.0, 0.0):
        return None
    if not 1.0 <= number <= 2.0:
        raise ValueError(f"AlpacaEval's preference is 1, 2 or 1.5 (tie), got {value!r}")
    return "tie" if number == 1.5 else "1" if number < 1.5 else "2"


def zero_tie_label(value: Any) -> Label:
    """Alpaca-style pairs (PandaLM): 0 = tie, 1 = response1, 2 = response2; empty = none."""
    if is_missing(value):
        return None
    key = cell_text(value).strip().lower()
    if key in ("0", "0.0", "tie"):
        return "tie"
    if key in ("1", "1.0", "2", "2.0"):
        return key[0]
    raise ValueError(f"expected 0 (tie), 1 or 2, got {value!r}")


@dataclass(frozen=True)
class Shape:
    """One published preference-data shape.

    Attributes:
        name: The shape's name.
        title: Where it comes from.
        required: Columns (lower case) that make a file this shape.
        question: Columns of the question, first present wins.
        response_1: Columns of the first response.
        response_2: Columns of the second response.
        label: Columns of the gold label, first present wins (empty: one-hot or none).
        decode: The label convention.
    """

    name: str
    title: str
    required: tuple[str, ...]
    question: tuple[str, ...]
    response_1: tuple[str, ...]
    response_2: tuple[str, ...]
    label: tuple[str, ...]
    decode: Callable[[Any], Label]

    def describe(self) -> str:
        """``name (title): columns``, for messages."""
        return f"{self.name} ({self.title}): {', '.join(self.required)}"


SHAPES: tuple[Shape, ...] = (
    Shape(
        "arena",
        "Chatbot Arena",
        ("prompt", "response_a", "response_b", "winner_model_a", "winner_model_b", "winner_tie"),
        ("prompt",),
        ("response_a",),
        ("response_b",),
        (),
        generic_label,
    ),
    Shape(
        "mt-bench-human",
        "MT-Bench human judgments",
        ("model_a", "model_b", "winner", "conversation_a", "conversation_b"),
        (),
        ("conversation_a",),
        ("conversation_b",),
        ("winner",),
        generic_label,
    ),
    Shape(
        "alpacaeval",
        "AlpacaEval annotations",
        ("instruction", "output_1", "output_2", "preference"),
        ("instruction",),
        ("output_1",),
        ("output_2",),
        ("preference",),
        alpacaeval_label,
    ),
    Shape(
        "alpaca-pairs",
        "Alpaca-style instruction pairs, label 0 = tie",
        ("instruction", "response1", "response2"),
        ("instruction",),
        ("response1",),
        ("response2",),
        ("label", "preference", "winner"),
        zero_tie_label,
    ),
    Shape(
        "llmbar",
        "LLMBar",
        ("input", "output_1", "output_2"),
        ("input",),
        ("output_1",),
        ("output_2",),
        ("label",),
        generic_label,
    ),
    Shape(
        "pairs",
        "jurist pairs",
        ("question", "response_1", "response_2"),
        ("question", "instruction", "prompt", "questions", "input"),
        ("response_1", "response_a", "answer_1", "answer1", "answer_a", "output_1"),
        ("response_2", "response_b", "answer_2", "answer2", "answer_b", "output_2"),
        ("label", "gold", "gold_label", "winner", "preference"),
        generic_label,
    ),
)
"""The shapes, in the order they are tried."""

_PAIRS_ANY = {
    "question": SHAPES[-1].question,
    "response_1": SHAPES[-1].response_1,
    "response_2": SHAPES[-1].response_2,
}


def parse_mapping(entries: Iterable[str] | Mapping[str, str] | None) -> dict[str, str]:
    """``target=column`` entries (the ``--map`` option) as ``{target: column}``.

    Raises:
        ConfigError: An entry is not ``target=column`` or a target is given twice.
    """
    if entries is None:
        return {}
    if isinstance(entries, Mapping):
        return {str(k): str(v) for k, v in entries.items()}
    out: dict[str, str] = {}
    for entry in entries:
        target, sep, column = str(entry).partition("=")
        if not sep or not target.strip() or not column.strip():
            raise ConfigError(f"cannot read {entry!r} as target=column", field="map")
        if target.strip() in out:
            raise ConfigError(f"the target {target.strip()!r} is mapped twice", field="map")
        out[target.strip()] = column.strip()
    return out


def _annotator_columns(lowered: Mapping[str, str]) -> list[str]:
    numbered = sorted(
        ((int(m.group(1)), column) for key, column in lowered.items() if (m := _ANNOTATOR.match(key))),
    )
    if numbered:
        return [column for _n, column in numbered]
    return [lowered[name] for name in _LIST_COLUMNS if name in lowered][:1]


@dataclass(frozen=True)
class DetectedShape:
    """A shape matched to a file's columns.

    Attributes:
        shape: The shape.
        columns: Field → the file's column (``None`` when absent) for ``id``, ``question``,
            ``input``, ``response_1``, ``response_2``, ``reference``, ``label``, ``dataset``,
            ``turn``, ``judge``, ``question_id``, ``model_1``, ``model_2``.
        annotators: The annotators' label columns (one list column, or several).
    """

    shape: Shape
    columns: dict[str, str | None]
    annotators: list[str]


def _first(lowered: Mapping[str, str], names: Sequence[str]) -> str | None:
    return next((lowered[name] for name in names if name in lowered), None)


def detect_shape(columns: Sequence[str], where: str) -> DetectedShape:
    """The first shape of :data:`SHAPES` whose required columns are all present (any case).

    Raises:
        InputError: No shape matches; the message lists every shape and its columns.
    """
    lowered = {str(c).lower(): str(c) for c in columns}
    annotators = _annotator_columns(lowered)
    for shape in SHAPES:
        if shape.name == "pairs":
            found = all(_first(lowered, names) for names in _PAIRS_ANY.values())
        else:
            found = all(name in lowered for name in shape.required)
        if not found:
            continue
        label = _first(lowered, shape.label)
        mapped: dict[str, str | None] = {
            "id": _first(lowered, ("id", "question_id", "pair_id", "idx", "index")),
            "question": _first(lowered, shape.question),
            "input": lowered.get("input") if "instruction" in lowered and shape.name != "llmbar" else None,
            "response_1": _first(lowered, shape.response_1),
            "response_2": _first(lowered, shape.response_2),
            "reference": _first(lowered, ("reference", "reference_answer", "ref_answer")),
            "label": label,
            "dataset": _first(lowered, ("dataset", "source")),
            "turn": lowered.get("turn"),
            "judge": lowered.get("judge"),
            "question_id": lowered.get("question_id"),
            "model_1": lowered.get("model_a"),
            "model_2": lowered.get("model_b"),
        }
        if mapped["input"] is not None and mapped["question"] == mapped["input"]:
            mapped["input"] = None
        return DetectedShape(shape, mapped, annotators)
    listing = "; ".join(shape.describe() for shape in SHAPES)
    raise InputError(
        f"the columns {list(columns)} match no preference-data shape; the shapes are: {listing}; "
        "map your columns with --map target=column",
        path=where,
        line=1,
    )


def render_turns(value: Any, *, role: str, turns: int | None = None) -> str:
    """The ``role``'s messages of a conversation, one block per turn.

    ``value`` is a list of ``{role, content}`` messages (MT-Bench), a list of strings (Arena's
    turns, one per entry), a JSON text of either, or plain text (returned as is). With
    ``turns``, only the first ``turns`` messages of the role. One message is returned bare;
    several as ``Turn 1:\\n...`` blocks separated by a blank line.

    Examples:
        >>> render_turns([{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}],
        ...              role="assistant")
        'Hello'
    """
    if isinstance(value, str):
        stripped = value.strip()
        if not stripped.startswith("["):
            return value
        try:
            value = loads_json(stripped)  # a too-deep or repeated-key text raises (a ValueError)
        except json.JSONDecodeError:
            return value
    if hasattr(value, "tolist"):
        value = value.tolist()
    if not isinstance(value, list):
        raise ValueError(f"expected a conversation (a list of messages), got {type(value).__name__}")
    texts: list[str] = []
    for message in value:
        if isinstance(message, dict):
            if str(message.get("role", "")).lower() == role:
                texts.append(cell_text(message.get("content")))
        elif message is None or isinstance(message, str):
            texts.append(cell_text(message))
        else:
            raise ValueError(f"a message must be text or {{role, content}}, got {type(message).__name__}")
    if turns is not None:
        texts = texts[:turns]
    if len(texts) == 1:
        return texts[0]
    return "\n\n".join(f"Turn {n}:\n{text}" for n, text in enumerate(texts, start=1))


def _annotations(
    row: Mapping[str, Any], detected: DetectedShape, fail: Callable[[str, str], InputError]
) -> list[Label] | None:
    if not detected.annotators:
        return None
    if len(detected.annotators) == 1 and detected.annotators[0].lower() in _LIST_COLUMNS:
        column = detected.annotators[0]
        value = row.get(column)
        if isinstance(value, str) and value.strip().startswith("["):
            try:
                value = loads_json(value)
            except json.JSONDecodeError:
                raise fail("expected a JSON list of labels", column) from None
            except JSONLimitError as exc:
                raise fail(exc.reason, column) from None
        if value is not None and hasattr(value, "tolist"):
            value = value.tolist()
        if is_missing(value):
            return []
        if not isinstance(value, list):
            raise fail(f"expected a list of labels, got {type(value).__name__}", column)
        cells = [(column, v) for v in value]
    else:
        cells = [(column, row.get(column)) for column in detected.annotators]
    labels = []
    for column, cell in cells:
        try:
            labels.append(detected.shape.decode(cell))
        except ValueError as exc:
            raise fail(str(exc), column) from None
    return labels


def shape_row(
    row: Mapping[str, Any],
    detected: DetectedShape,
    *,
    number: int,
    where: str,
    no_majority: NoMajority = "tie",
) -> dict[str, Any]:
    """One row of a detected shape as a pair (see the module docstring).

    Returns:
        ``id`` (``""`` when the file has none), ``question``, ``response_1``, ``response_2``,
        ``reference``, ``label``, ``annotations`` (``None`` without annotators) and ``dataset``
        (``""`` when the file has none).

    Raises:
        InputError: A cell is not what the shape needs (named by line and column).
    """

    def fail(message: str, column: str | None) -> InputError:
        return InputError(message, path=where, line=number, field=column)

    columns = detected.columns
    shape = detected.shape.name

    def get(field: str) -> Any:
        column = columns.get(field)
        return row.get(column) if column is not None else None

    def text(field: str) -> str:
        value = get(field)
        if isinstance(value, dict | list):
            kind = "a JSON object" if isinstance(value, dict) else "a list"
            raise fail(f"expected text, got {kind}", columns.get(field))
        return cell_text(value)

    turns: int | None = None
    if columns.get("turn") is not None and not is_missing(get("turn")):
        try:
            turns = int(_number(get("turn")))
        except ValueError as exc:
            raise fail(str(exc), columns["turn"]) from None
    if shape in ("arena", "mt-bench-human"):
        try:
            if shape == "arena":
                question = render_turns(get("question"), role="user", turns=turns)
            else:
                question = render_turns(get("response_1"), role="user", turns=turns)
        except ValueError as exc:
            raise fail(str(exc), columns.get("question") or columns["response_1"]) from None
        responses = []
        for field in ("response_1", "response_2"):
            try:
                responses.append(render_turns(get(field), role="assistant", turns=turns))
            except ValueError as exc:
                raise fail(str(exc), columns[field]) from None
    else:
        question = text("question")
        responses = [text("response_1"), text("response_2")]
    extra = text("input")
    if extra.strip():
        question = f"### Instruction:\n{question}\n\n### Input:\n{extra}"
    annotations = _annotations(row, detected, fail)
    if annotations is not None:
        label = majority_label(annotations)
        if label is None and any(vote is not None for vote in annotations) and no_majority == "tie":
            label = "tie"
    elif shape == "arena":
        label = _one_hot(row, fail)
    else:
        try:
            label = detected.shape.decode(get("label"))
        except ValueError as exc:
            raise fail(str(exc), columns.get("label")) from None
    identifier = text("id")
    if shape == "mt-bench-human":
        parts = [identifier or str(number), text("model_1"), text("model_2")]
        parts += [f"turn{turns}"] if turns is not None else []
        parts += [text("judge")] if text("judge") else []
        identifier = ";".join(parts)
    return {
        "id": identifier,
        "question": question,
        "response_1": responses[0],
        "response_2": responses[1],
        "reference": text("reference"),
        "label": label,
        "annotations": annotations,
        "dataset": text("dataset"),
    }


def _one_hot(row: Mapping[str, Any], fail: Callable[[str, str], InputError]) -> Label:
    lowered = {str(k).lower(): k for k in row}
    flags = {}
    for label, name in (("1", "winner_model_a"), ("2", "winner_model_b"), ("tie", "winner_tie")):
        value = row.get(lowered[name])
        if is_missing(value):
            flags[label] = 0
            continue
        try:
            flags[label] = int(_number(value))
        except ValueError as exc:
            raise fail(str(exc), lowered[name]) from None
        if flags[label] not in (0, 1):
            raise fail(f"expected 0 or 1, got {value!r}", lowered[name])
    chosen = [label for label, flag in flags.items() if flag]
    if len(chosen) > 1:
        raise fail("more than one of winner_model_a, winner_model_b, winner_tie is 1", "winner_model_a")
    return chosen[0] if chosen else None
