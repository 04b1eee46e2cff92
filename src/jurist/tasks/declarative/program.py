"""The LLM judge of a YAML task: a DSPy signature built from the file, and its validation.

The signature has one input field per ``inputs`` key, then (with ``reasoning: true``) a
``reasoning`` text, then the ``verdict`` typed by the output kind (label: a ``Literal`` of
the labels; labels: ``list[str]``; score: ``int``; bool: ``bool``, plus ``confidence``
with ``confidence: true``; pairwise: ``Literal["A", "B"]`` or with ``"tie"``). Its
instructions are the file's ``instructions``; few-shot ``examples`` become the
predictor's demos.
"""

from __future__ import annotations

from typing import Any, Literal, cast

import dspy

from jurist.tasks.declarative.spec import TaskFile
from jurist.tasks.declarative.verdicts import check_confidence, check_verdict, normalised_verdict

__all__ = ["DeclarativeProgram", "build_signature", "make_demos", "make_program", "postprocess_prediction"]


def _verdict_field(spec: TaskFile) -> tuple[Any, str]:
    output = spec.output
    if output.kind == "label":
        labels = tuple(output.labels or ())
        return cast(Any, Literal)[labels], f"exactly one of: {', '.join(labels)}"
    if output.kind == "labels":
        return list[
            str
        ], f"the labels that apply (zero or more), each one of: {', '.join(output.labels or [])}"
    if output.kind == "score":
        low, high = output.range or (0, 0)
        return int, f"an integer score from {low} to {high} (inclusive)"
    if output.kind == "bool":
        return bool, "true or false"
    choices = ("A", "B", "tie") if output.allow_tie else ("A", "B")
    meaning = "A if response_a is better, B if response_b is better"
    if output.allow_tie:
        meaning += ", tie if neither is better"
    return cast(Any, Literal)[choices], meaning


def build_signature(spec: TaskFile) -> type[dspy.Signature]:
    """The judge's signature: inputs, optional reasoning, the verdict (and confidence)."""
    fields: dict[str, tuple[Any, Any]] = {}
    for name, column in spec.columns.items():
        fields[name] = (
            str,
            dspy.InputField(desc=f"from the data column '{column}'" if column != name else ""),
        )
    if spec.output.reasoning:
        fields["reasoning"] = (str, dspy.OutputField(desc="a short rationale, written before the verdict"))
    annotation, desc = _verdict_field(spec)
    fields["verdict"] = (annotation, dspy.OutputField(desc=desc))
    if spec.output.confidence:
        fields["confidence"] = (
            float,
            dspy.OutputField(desc="the probability, from 0 to 1, that the verdict is true"),
        )
    name = "".join(part.capitalize() for part in spec.name.replace(".", "-").replace("_", "-").split("-"))
    return dspy.make_signature(fields, spec.instructions.strip(), signature_name=f"{name or 'Task'}Judge")


class DeclarativeProgram(dspy.Module):
    """Runs the task's signature with one ``dspy.Predict``; inputs it does not know (the
    pairwise ``order``) are ignored."""

    def __init__(self, signature: type[dspy.Signature], demos: list[dspy.Example] | None = None) -> None:
        super().__init__()
        self.input_names = tuple(signature.input_fields)
        self.predict = dspy.Predict(signature)
        self.predict.demos = list(demos or [])

    def _inputs(self, inputs: dict[str, Any]) -> dict[str, Any]:
        return {name: inputs[name] for name in self.input_names}

    def forward(self, **inputs: Any) -> dspy.Prediction:
        return self.predict(**self._inputs(inputs))

    async def aforward(self, **inputs: Any) -> dspy.Prediction:
        return await self.predict.acall(**self._inputs(inputs))


def make_demos(spec: TaskFile, rows: list[Any]) -> list[dspy.Example]:
    """Few-shot demos from rows with gold verdicts (:class:`~jurist.tasks.declarative.data.Row`)."""
    demos = []
    for row in rows:
        verdict = row.gold
        if spec.kind == "score" and isinstance(verdict, float):
            raise ValueError(f"example {row.id}: a score demo needs an integer gold score, got {verdict}")
        demos.append(dspy.Example(**row.inputs, verdict=verdict).with_inputs(*row.inputs))
    return demos


def make_program(spec: TaskFile, demos: list[dspy.Example] | None = None) -> DeclarativeProgram:
    """The uncompiled judge program of a task, with its few-shot demos."""
    return DeclarativeProgram(build_signature(spec), demos)


def _get(prediction: Any, name: str) -> Any:
    if isinstance(prediction, dict):
        return prediction.get(name)
    return getattr(prediction, name, None)


def postprocess_prediction(spec: TaskFile, prediction: Any, inputs: dict[str, Any]) -> dict[str, Any]:
    """The validated output ``{"verdict", "reasoning", "confidence"}`` (pairwise: and ``order``).

    A label written with only a different letter case or spacing than a listed one is the
    listed label; the output then also holds ``normalised_from``, what the judge wrote
    (:func:`~jurist.tasks.declarative.verdicts.normalised_verdict`).

    Raises:
        ValueError: The verdict or confidence is not valid (never clamped or coerced).
    """
    verdict, given = normalised_verdict(spec.output, _get(prediction, "verdict"))
    verdict = check_verdict(spec.output, verdict)
    reasoning = _get(prediction, "reasoning") if spec.output.reasoning else None
    confidence = check_confidence(_get(prediction, "confidence")) if spec.output.confidence else None
    output: dict[str, Any] = {
        "verdict": verdict,
        "reasoning": str(reasoning) if reasoning is not None else None,
        "confidence": confidence,
    }
    if spec.kind == "pairwise":
        output["order"] = inputs.get("order", "AB")
    if given is not None:
        output["normalised_from"] = given
    return output
