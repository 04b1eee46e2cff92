"""A cascade file: judges tried in order, each one asked only about the items the one before it
was unsure of (selective escalation).

::

    cascade:
      stages:
        - {name: rules, config: baseline}                        # the task's offline baseline
        - {name: small, config: small.yaml, escalate_below: 0.8}  # a judge config file
        - {name: panel, jury: panel.yaml}                        # a jury file
        - {name: large, model: openai/gpt-4o, api_key_env: KEY}  # inline judge-config keys
      target_agreement: 0.9          # optional: what ``jurist calibrate`` aims for

A stage is the offline baseline (``config: baseline``), a judge config (a file, inline keys,
or both, as for a juror), or a jury file. Paths are relative to the cascade file. Errors name
the cascade file, the line and the field (``cascade.stages[1].escalate_below``); a stage's own
config or jury file is named when it is at fault.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from jurist.errors import ConfigError
from jurist.judges.config import BASELINE, JudgeConfig, load_config, make_config
from jurist.jury.config import Jury, load_jury
from jurist.jury.yaml_file import (
    NAME,
    copied_body,
    entry_lines,
    has_top_key,
    named_entries,
    read_body,
    relative_to,
    write_copy,
)

__all__ = ["Cascade", "Stage", "StageKind", "is_cascade_file", "load_cascade", "write_calibrated_copy"]

StageKind = Literal["baseline", "model", "jury"]
_CASCADE_KEYS = ("stages", "target_agreement")
_STAGE_KEYS = ("name", "config", "jury", "escalate_below")


@dataclass(frozen=True)
class Stage:
    """One stage of a cascade.

    Attributes:
        name: Its name (its run's folder ``DIR/stages/NAME``, its column in reports).
        kind: ``baseline`` (the task's offline judge: unsure where no rule fired), ``model``
            (unsure below ``escalate_below``) or ``jury`` (unsure where the jurors disagree).
        config: The judge config of a baseline or model stage.
        jury: The jury of a jury stage.
        escalate_below: Items whose confidence in the verdict is below this go to the next stage.
        field: Where the stage is in its file (``cascade.stages[1]``), for error messages.
        line: The stage's line in its file.
    """

    name: str
    kind: StageKind
    config: JudgeConfig | None = None
    jury: Jury | None = None
    escalate_below: float | None = None
    field: str = "cascade.stages"
    line: int | None = None

    @property
    def model(self) -> str:
        """What judges at this stage, as reports show it."""
        if self.jury is not None:
            return f"jury of {', '.join(juror.name for juror in self.jury.jurors)}"
        return self.config.model if self.config is not None else BASELINE

    def fingerprint_data(self) -> list[Any]:
        """What decides this stage's verdicts and escalations (no secret, no path)."""
        judge = self.jury.fingerprint() if self.jury is not None else self.judge_config.fingerprint()
        return [self.name, self.kind, judge, self.escalate_below]

    @property
    def judge_config(self) -> JudgeConfig:
        """The judge config of a baseline or model stage."""
        if self.config is None:
            raise ConfigError(f"stage {self.name!r} is a jury and has no judge config", field=self.field)
        return self.config


@dataclass(frozen=True)
class Cascade:
    """A validated cascade file.

    Attributes:
        name: The cascade's name (its file's stem).
        stages: The stages in order; the last answers every item that reaches it.
        target_agreement: The agreement with gold ``jurist calibrate`` chooses thresholds for.
        path: The cascade file.
    """

    name: str
    stages: tuple[Stage, ...]
    target_agreement: float | None = None
    path: Path | None = None

    def fingerprint(self) -> str:
        """A short hash of what decides the cascade's verdicts: each stage's judge and threshold."""
        data = [stage.fingerprint_data() for stage in self.stages]
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]

    @property
    def judge_name(self) -> str:
        """The cascade's judge name in its run's manifest."""
        return f"cascade {self.name}"

    def with_thresholds(self, thresholds: Mapping[str, float]) -> Cascade:
        """The same cascade with the ``escalate_below`` of the named stages replaced."""
        stages = tuple(
            replace(stage, escalate_below=float(thresholds[stage.name]))
            if stage.name in thresholds
            else stage
            for stage in self.stages
        )
        return replace(self, stages=stages)

    def describe(self) -> dict[str, Any]:
        """The cascade as its run's manifest records it (as ``config``): names, no secret."""
        return {
            "model": "cascade of " + " > ".join(stage.name for stage in self.stages),
            "cascade": self.name,
            "cascade_fingerprint": self.fingerprint(),
            "stages": [
                {
                    "name": stage.name,
                    "kind": stage.kind,
                    "escalate_below": stage.escalate_below,
                    "config": stage.config.model_dump(mode="json") if stage.config is not None else None,
                    "jury": stage.jury.name if stage.jury is not None else None,
                    "jury_fingerprint": stage.jury.fingerprint() if stage.jury is not None else None,
                }
                for stage in self.stages
            ],
        }


def is_cascade_file(source: Any) -> bool:
    """Whether ``source`` is a path to a YAML file whose top-level mapping has a ``cascade`` key."""
    return has_top_key(source, "cascade")


def _fraction(value: Any) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and 0.0 <= value <= 1.0
    )


def load_cascade(path: str | Path, overrides: Mapping[str, Any] | None = None) -> Cascade:
    """Read and validate a cascade file.

    Args:
        path: The cascade file.
        overrides: Judge-config fields applied to every stage's judge (and every juror) after
            its own keys (the command line's ``--concurrency``, ``--set timeout=30``, ...).

    Raises:
        ConfigError: The file is not a cascade (names its line and field), or a stage's config
            or jury file is missing or invalid.
    """
    file = Path(path)
    document = read_body(file, "cascade", _CASCADE_KEYS, "stages (and target_agreement)")
    body, lines, error = document.body, document.lines, document.error
    target = body.get("target_agreement")
    if target is not None and not (_fraction(target) and target > 0):
        raise error(
            f"target_agreement must be a number in (0, 1] (got {target!r})", "cascade.target_agreement"
        )
    stages = named_entries(
        document,
        "stages",
        "stage",
        lambda entry, field: _stage(file, entry, field, lines, dict(overrides or {})),
    )
    last = stages[-1]
    if last.escalate_below is not None:
        raise error(
            "the last stage answers every item that reaches it: escalate_below has no stage to send to",
            f"{last.field}.escalate_below",
        )
    return Cascade(
        name=file.stem,
        stages=tuple(stages),
        target_agreement=float(target) if target is not None else None,
        path=file,
    )


def _stage(file: Path, entry: Any, field: str, lines: dict[str, int], overrides: dict[str, Any]) -> Stage:
    def error(message: str, key: str | None = None) -> ConfigError:
        where = f"{field}.{key}" if key else field
        return ConfigError(message, path=file, line=lines.get(where, lines.get(field)), field=where)

    if not isinstance(entry, dict):
        raise error("a stage is a mapping with a name and a judge: config, jury, or judge-config keys")
    values = dict(entry)
    name = values.pop("name", None)
    if not isinstance(name, str) or not NAME.match(name):
        raise error(
            "each stage needs a name of letters, digits, '.', '-' or '_' (it names its run's folder)", "name"
        )
    threshold = values.pop("escalate_below", None)
    if threshold is not None and not _fraction(threshold):
        raise error(f"escalate_below must be a number in [0, 1] (got {threshold!r})", "escalate_below")
    below = float(threshold) if threshold is not None else None
    line = lines.get(field)
    jury_source = values.pop("jury", None)
    if jury_source is not None:
        if values:
            raise error(
                "a jury stage takes only name and jury (its jurors' configs are in the jury file)",
                str(next(iter(values))),
            )
        if below is not None:
            raise error(
                "a jury stage sends on the items its jurors disagree on; escalate_below does not apply",
                "escalate_below",
            )
        jury_path = _relative(file, jury_source, error, "jury", "a jury file")
        return Stage(name, "jury", jury=load_jury(jury_path, overrides), field=field, line=line)
    source = values.pop("config", None)
    if source is None and not values:
        raise error(
            "give the stage a judge: config (a judge config file, or baseline), jury (a jury file), "
            "or judge-config keys such as model"
        )
    stage_lines = entry_lines(lines, field)
    try:
        make_config(values, path=file, lines=stage_lines)
    except ConfigError as exc:
        raise error(exc.reason, exc.field) from None
    merged = {**values, **overrides}
    if source is None or source == BASELINE:
        config = make_config(merged, path=file, lines=stage_lines).with_source(file)
    else:
        config = load_config(_relative(file, source, error, "config", "a judge config file"), merged)
    kind: StageKind = "baseline" if config.is_baseline and config.program is None else "model"
    return Stage(name, kind, config=config, escalate_below=below, field=field, line=line)


def _relative(file: Path, source: Any, error: Any, key: str, what: str) -> Path:
    if not isinstance(source, str | Path):
        raise error(f"{key} must be the path of {what}", key)
    path = relative_to(file, source)
    if not path.is_file():
        raise error(f"{what} {path} not found (paths are relative to the cascade file)", key)
    return path


def write_calibrated_copy(
    cascade: Cascade, thresholds: Mapping[str, float], target: str | Path, target_agreement: float | None
) -> Path:
    """Write a copy of ``cascade``'s file with each named stage's ``escalate_below`` set (atomically).

    Config and jury paths are rewritten relative to the copy's folder, so the copy runs the same
    judges wherever it is written. Comments of the original are not kept (YAML is re-written).

    Raises:
        ConfigError: The cascade has no file to copy.
    """
    destination = Path(target)
    body = copied_body(cascade.path, "cascade", "stages", ("config", "jury"), destination, keep=(BASELINE,))
    for entry in body["stages"]:
        if entry.get("name") in thresholds:
            # Exact: a threshold is an observed confidence, and an item at it stays.
            entry["escalate_below"] = float(thresholds[entry["name"]])
    if target_agreement is not None:
        body["target_agreement"] = float(target_agreement)
    return write_copy(destination, "cascade", body, _CASCADE_KEYS)
