"""A toxicity judge published by a third-party package under the ``jurist.tasks`` entry point.

The judgment is declared like a YAML task file (as a Python dict: rubric, input column,
labels, regex baseline, gold column), and hooks are overridden in Python for what
a task file cannot say:

- :meth:`ToxicityTask.read` normalises the comments (HTML entities, runs of whitespace),
  so the judge and the baseline read ``&amp;`` as ``&`` and one space between words;
- :meth:`ToxicityTask.program` lets the model answer in free text, and
  :meth:`ToxicityTask.postprocess` maps synonyms (``non-toxic``, ``offensive``, ``not
  sure``, any case) onto the three labels before they are validated;
- ``jurist optimize`` and ``jurist calibrate`` go through those hooks, so they see the
  same normalised rows and mapped answers with no further code.
"""

from __future__ import annotations

import dataclasses
import html
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from jurist.tasks.declarative import DeclarativeTask
from jurist.tasks.declarative.data import DeclarativeDataset

SPEC: dict[str, Any] = {
    "name": "toxicity",
    "description": "Is a user comment toxic (insulting, hateful or abusive)?",
    "instructions": (
        "Read the user comment and say whether it is toxic: insulting, hateful or abusive. "
        "Answer toxic, not_toxic, or unsure when the tone cannot be told."
    ),
    "inputs": {"comment": "comment_text"},
    "id": "id",
    "output": {"kind": "label", "labels": ["toxic", "not_toxic", "unsure"], "reasoning": False},
    "gold": "label",
    "baseline": {
        "rules": [
            {"pattern": r"(?i)\b(idiot|stupid|hate|troll)\b", "value": "toxic"},
            {"pattern": r"\?\?\?", "value": "unsure"},
        ],
        "default": "not_toxic",
    },
}

SYNONYMS = {
    "toxic": "toxic",
    "offensive": "toxic",
    "abusive": "toxic",
    "not toxic": "not_toxic",
    "non toxic": "not_toxic",
    "not_toxic": "not_toxic",
    "clean": "not_toxic",
    "safe": "not_toxic",
    "unsure": "unsure",
    "not sure": "unsure",
    "unclear": "unsure",
}
"""Answers the model may give (lowercased, ``-``/``_`` read as spaces) -> the task's label."""


def normalise(text: str) -> str:
    """A comment as the judge reads it: HTML entities decoded, whitespace collapsed."""
    return re.sub(r"\s+", " ", html.unescape(text)).strip()


def label_of(answer: Any) -> Any:
    """The label an answer means, or the answer unchanged (then validation rejects it)."""
    if not isinstance(answer, str):
        return answer
    key = re.sub(r"[\s_\-]+", " ", answer).strip().strip(".").lower()
    return SYNONYMS.get(key, answer)


class ToxicityTask(DeclarativeTask):
    """The ``toxicity`` task: every jurist verb serves it, with no edit to jurist."""

    def __init__(self) -> None:
        super().__init__(SPEC, source=Path(__file__))  # validated like a task file
        self.inputs = {"comment": "the user comment (data column 'comment_text'), normalised"}
        self.outputs = {"verdict": "one of toxic, not_toxic, unsure (synonyms mapped)"}
        self.version = "toxicity-plugin-1"

    def read(self, path: str | Path, options: BaseModel) -> DeclarativeDataset:
        dataset = super().read(path, options)
        rows = [
            dataclasses.replace(row, inputs={name: normalise(text) for name, text in row.inputs.items()})
            for row in dataset.rows
        ]
        return dataclasses.replace(dataset, rows=rows)

    def program(self, options: BaseModel) -> Any:
        program = super().program(options)
        program.predict.signature = program.predict.signature.with_updated_fields(
            "verdict", type_=str, desc="toxic, not_toxic or unsure"
        )
        return program

    def postprocess(self, prediction: Any, inputs: dict[str, Any], options: BaseModel) -> dict[str, Any]:
        found = (
            prediction.get("verdict")
            if isinstance(prediction, dict)
            else getattr(prediction, "verdict", None)
        )
        return super().postprocess({"verdict": label_of(found)}, inputs, options)
