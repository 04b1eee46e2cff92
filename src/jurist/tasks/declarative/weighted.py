"""A YAML task's verdict weighted by the judge's token probabilities (``logprobs: true``).

The verdict's allowed values are the output kind's: the labels (label), ``true`` and
``false`` (bool), every integer of the range (score), ``A``, ``B`` and, with ``allow_tie``,
``tie`` (pairwise, in the order the responses were shown). A set of labels (``labels``)
is not weighed. How the probabilities are read from the reply is
:func:`jurist.judges.logprobs.weigh_verdict`'s rule. A weighed output gains:

- ``weighted``: ``true``; ``probabilities``: each allowed value's probability;
- ``confidence``: for a yes/no verdict the probability of ``true`` (as a stated confidence
  is), else the probability of the verdict given; a confidence the judge stated
  (``output.confidence``) moves to ``stated_confidence``;
- score: ``expected_score``, ``Σ p(s) · s`` over the range (G-Eval's weighting), beside
  the sampled ``verdict``.

An output that could not be weighed keeps its plain verdict and gains ``weighted: false``
and ``unweighted`` (why); the summary counts both.
"""

from __future__ import annotations

from typing import Any

from jurist.judges.logprobs import VerdictValues, weigh_verdict
from jurist.tasks.declarative.spec import TaskFile
from jurist.tasks.declarative.verdicts import verdict_text

__all__ = ["verdict_values", "weigh_output"]


def verdict_values(spec: TaskFile) -> VerdictValues | None:
    """The verdict field and its allowed values, or ``None`` for a kind that is not weighed."""
    output = spec.output
    if spec.kind == "label":
        return VerdictValues("verdict", tuple(output.labels or ()))
    if spec.kind == "bool":
        return VerdictValues("verdict", ("true", "false"))
    if spec.kind == "score" and output.range is not None:
        low, high = output.range
        return VerdictValues("verdict", tuple(str(value) for value in range(int(low), int(high) + 1)))
    if spec.kind == "pairwise":
        return VerdictValues("verdict", ("A", "B", "tie") if output.allow_tie else ("A", "B"))
    return None


def weigh_output(spec: TaskFile, output: dict[str, Any], logprobs: Any) -> dict[str, Any]:
    """``output`` with the fields its verdict's probabilities give (see the module docstring)."""
    values = verdict_values(spec)
    weighed = dict(output)
    if values is None:
        weighed.update(weighted=False, unweighted=f"a {spec.kind!r} verdict is not weighed")
        return weighed
    verdict = verdict_text(output["verdict"])
    found = weigh_verdict(logprobs, values, verdict)
    if found.probabilities is None:
        weighed.update(weighted=False, unweighted=found.reason)
        return weighed
    probabilities = found.probabilities
    weighed.update(weighted=True, probabilities=probabilities)
    if spec.output.confidence:
        weighed["stated_confidence"] = output.get("confidence")
    weighed["confidence"] = probabilities["true"] if spec.kind == "bool" else probabilities[verdict]
    if spec.kind == "score":
        weighed["expected_score"] = sum(p * int(value) for value, p in probabilities.items())
    return weighed
