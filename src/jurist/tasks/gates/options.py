"""The options of the ``gates`` task: the gold QA set, the gate thresholds, the refusal token.

The field names are those of ``jurist gate``'s flags (``--precision-min 0.9`` sets
``precision_min``), so the same options work on ``jurist score gates`` and ``jurist judge gates``.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from jurist.datasets.gates import load_thresholds
from jurist.errors import ConfigError
from jurist.metrics.gates import DEFAULT_REFUSAL_TOKEN, GateThresholds

__all__ = ["THRESHOLD_OPTIONS", "GatesOptions", "as_gates_options", "gold_of", "thresholds_of"]

THRESHOLD_OPTIONS = (
    "precision_min",
    "under_refusal_max",
    "over_refusal_max",
    "citation_hit_rate_min",
    "compliance_min",
    "fail_on_na",
)
"""The options that override a gate threshold (the fields of :class:`GateThresholds`)."""


class GatesOptions(BaseModel):
    """Options of the ``gates`` task. Thresholds: defaults, then ``thresholds``, then the options."""

    model_config = ConfigDict(extra="forbid")

    gold: Path | None = Field(
        None,
        description="Gold QA set (JSON list or JSONL: qid, q, answerable, gold_ids) the traces are "
        "scored against (`jurist score` takes it as its own --gold).",
    )
    thresholds: Path | None = Field(None, description="YAML file of gate thresholds.")
    precision_min: float | None = Field(None, ge=0.0, le=1.0, description="G1: answer precision ≥ (0.80).")
    under_refusal_max: float | None = Field(None, ge=0.0, le=1.0, description="G2: under-refusal ≤ (0.05).")
    over_refusal_max: float | None = Field(None, ge=0.0, le=1.0, description="G3: over-refusal ≤ (0.25).")
    citation_hit_rate_min: float | None = Field(
        None, ge=0.0, le=1.0, description="G4: citation hit rate ≥ (0.75)."
    )
    compliance_min: float | None = Field(None, ge=0.0, le=1.0, description="G5: compliance ≥ (0.98).")
    fail_on_na: bool = Field(
        False,
        description="Fail a gate whose metric is n/a (default: skip); when not given, the "
        "thresholds file decides.",
    )
    refusal_token: str = Field(
        DEFAULT_REFUSAL_TOKEN, description="Answer text that means 'refused' (case-insensitive)."
    )


def as_gates_options(options: BaseModel) -> GatesOptions:
    """``options`` as :class:`GatesOptions` (validated again if it is another model)."""
    if isinstance(options, GatesOptions):
        return options
    return GatesOptions.model_validate(options.model_dump(exclude_unset=True))


def thresholds_of(options: BaseModel) -> GateThresholds:
    """The gate thresholds the options give: defaults, then the thresholds file, then the options.

    ``fail_on_na`` overrides the file only when it was given.

    Raises:
        ConfigError: Unreadable thresholds file, an unknown key or a bad value.
    """
    opts = as_gates_options(options)
    overrides: dict[str, float | bool | None] = {name: getattr(opts, name) for name in THRESHOLD_OPTIONS}
    if "fail_on_na" not in opts.model_fields_set:
        overrides["fail_on_na"] = None
    return load_thresholds(opts.thresholds, **overrides)


def gold_of(options: BaseModel, gold: str | Path | None = None) -> str | Path:
    """The gold QA set: ``gold`` if given, else the ``gold`` option.

    Raises:
        ConfigError: Neither is given.
    """
    found = gold if gold is not None else as_gates_options(options).gold
    if found is None:
        raise ConfigError("give the gold QA set the traces are scored against: --gold FILE", field="gold")
    return found
