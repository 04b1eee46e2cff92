"""The offline rule judge of a YAML task (its ``baseline`` key).

Rules are Python regular expressions, tried in order with ``re.search``:

- label, labels, score, bool: the first rule whose pattern is found gives the verdict
  (searched in the rule's ``field``, or in every input joined by blank lines); when none
  matches, ``default``. With ``output.confidence``, the confidence is the rule's
  ``confidence``, else 1.0 for ``true`` and 0.0 for ``false``. The output's ``rule`` is the
  number (from 1) of the rule that gave the verdict, or ``None`` when no rule matched and the
  verdict is the default (a cascade sends those items on: ``docs/cascades.md``).
- pairwise: every rule whose pattern is found in a response adds its numeric ``value``
  to that response's score; the higher score wins. Equal scores give ``default``:
  ``tie``, ``A`` or ``B`` (the first or second position shown), ``longer`` or
  ``shorter`` (by words; equal lengths give ``tie`` when allowed, else ``A``).

Every verdict is validated like an LLM's (:func:`~jurist.tasks.declarative.verdicts.check_verdict`).
"""

from __future__ import annotations

import re
from typing import Any

from jurist.judges.judge import BaselineJudge
from jurist.tasks.declarative.spec import BaselineSpec, TaskFile
from jurist.tasks.declarative.verdicts import check_confidence, check_verdict

__all__ = ["RuleJudge", "make_baseline", "word_count"]


def word_count(text: str) -> int:
    """Length of a response in whitespace-separated words."""
    return len(text.split())


class RuleJudge:
    """A callable judging one item's inputs by the task's rules."""

    def __init__(self, spec: TaskFile, baseline: BaselineSpec) -> None:
        self.spec = spec
        self.baseline = baseline
        self.patterns = [re.compile(rule.pattern) for rule in baseline.rules]

    def __call__(self, **inputs: Any) -> dict[str, Any]:
        if self.spec.kind == "pairwise":
            return self._pairwise(inputs)
        names = [name for name in self.spec.columns]
        for index, (rule, pattern) in enumerate(zip(self.baseline.rules, self.patterns, strict=True)):
            text = inputs[rule.field] if rule.field else "\n\n".join(str(inputs[name]) for name in names)
            if pattern.search(text):
                reason = f"rule {index + 1} matched: {rule.pattern}"
                return self._output(rule.value, reason, rule.confidence, index + 1)
        return self._output(self.baseline.default, "no rule matched: default", None, None)

    def _output(self, value: Any, reason: str, confidence: float | None, rule: int | None) -> dict[str, Any]:
        verdict = check_verdict(self.spec.output, value)
        output: dict[str, Any] = {"verdict": verdict, "reasoning": reason, "confidence": None, "rule": rule}
        if self.spec.output.confidence:
            output["confidence"] = check_confidence(confidence if confidence is not None else float(verdict))
        return output

    def _pairwise(self, inputs: dict[str, Any]) -> dict[str, Any]:
        totals = {"A": 0.0, "B": 0.0}
        for rule, pattern in zip(self.baseline.rules, self.patterns, strict=True):
            for position, name in (("A", "response_a"), ("B", "response_b")):
                if pattern.search(str(inputs[name])):
                    totals[position] += float(rule.value)
        if totals["A"] != totals["B"]:
            verdict = "A" if totals["A"] > totals["B"] else "B"
            reason = f"rule scores A={totals['A']:g}, B={totals['B']:g}"
        else:
            verdict = self._tie_break(inputs)
            reason = f"rule scores equal ({totals['A']:g}): default {self.baseline.default}"
        output = {
            "verdict": check_verdict(self.spec.output, verdict),
            "reasoning": reason,
            "confidence": None,
            "order": inputs.get("order", "AB"),
        }
        return output

    def _tie_break(self, inputs: dict[str, Any]) -> str:
        default = str(self.baseline.default)
        if default in ("tie", "A", "B"):
            return default
        la, lb = word_count(str(inputs["response_a"])), word_count(str(inputs["response_b"]))
        if la == lb:
            return "tie" if self.spec.output.allow_tie else "A"
        longer = "A" if la > lb else "B"
        return longer if default == "longer" else ("B" if longer == "A" else "A")


def make_baseline(spec: TaskFile, version: str) -> BaselineJudge | None:
    """The task's rule judge, or ``None`` when the file has no ``baseline``."""
    if spec.baseline is None:
        return None
    return BaselineJudge(RuleJudge(spec, spec.baseline), name=f"{spec.name}-rules", version=version)
