"""A jury file: several judges, each a judge config with a name, whose verdicts are aggregated.

::

    jury:
      aggregate: majority            # majority, plurality, mean or median
      weights: {small-a: 1.2, small-b: 0.8}   # optional (``jurist calibrate --write-weights``)
      jurors:
        - {name: small-a, config: small-a.yaml}        # a judge config file, relative to this file
        - {name: small-b, model: openai/b, api_base: http://localhost:8001/v1, api_key_env: B_KEY}

A juror is a judge config file (``config``), inline judge-config keys, or both (the inline keys
override the file's). Errors name the jury file, the line and the field
(``jury.jurors[1].temperature``); a juror's own config file is named when it is at fault.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from jurist.errors import ConfigError
from jurist.judges.config import JudgeConfig, load_config, make_config
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

__all__ = ["AGGREGATES", "Aggregate", "Juror", "Jury", "is_jury_file", "load_jury", "write_weighted_copy"]

Aggregate = Literal["majority", "plurality", "mean", "median"]
AGGREGATES: tuple[str, ...] = get_args(Aggregate)
_JURY_KEYS = ("aggregate", "weights", "jurors")


@dataclass(frozen=True)
class Juror:
    """One judge of a jury: its name (the folder of its run, its column in reports) and config."""

    name: str
    config: JudgeConfig


@dataclass(frozen=True)
class Jury:
    """A validated jury file.

    Attributes:
        name: The jury's name (its file's stem).
        aggregate: How the jurors' verdicts make the jury's (see :mod:`jurist.jury.aggregate`).
        jurors: The jurors, in the file's order (the order that breaks ties).
        weights: Juror name -> the weight of its vote, or ``None`` (every vote counts 1).
        path: The jury file.
    """

    name: str
    aggregate: Aggregate
    jurors: tuple[Juror, ...]
    weights: Mapping[str, float] | None = None
    path: Path | None = None

    def weight(self, name: str) -> float:
        """The weight of juror ``name``'s vote (1 without weights)."""
        return float(self.weights[name]) if self.weights is not None else 1.0

    def fingerprint(self) -> str:
        """A short hash of what decides the jury's verdicts: the aggregate, the weights and each
        juror's name and config fingerprint."""
        data = {
            "aggregate": self.aggregate,
            "weights": dict(sorted(self.weights.items())) if self.weights is not None else None,
            "jurors": [[juror.name, juror.config.fingerprint()] for juror in self.jurors],
        }
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]


def is_jury_file(source: Any) -> bool:
    """Whether ``source`` is a path to a YAML file whose top-level mapping has a ``jury`` key.

    Anything else (a :class:`JudgeConfig`, ``None``, a judge config file, a file that cannot be
    read) is not a jury file; reading it as a judge config reports its problems.
    """
    return has_top_key(source, "jury")


def load_jury(path: str | Path, overrides: Mapping[str, Any] | None = None) -> Jury:
    """Read and validate a jury file.

    Args:
        path: The jury file.
        overrides: Judge-config fields applied to every juror after its own keys (the command
            line's ``--concurrency``, ``--set timeout=30``, ...).

    Raises:
        ConfigError: The file is not a jury (names its line and field), a juror's config file is
            missing or invalid, or the weights do not name exactly the jurors.
    """
    file = Path(path)
    document = read_body(file, "jury", _JURY_KEYS, "aggregate, weights and jurors")
    body, lines, error = document.body, document.lines, document.error
    aggregate = body.get("aggregate", "majority")
    if aggregate not in AGGREGATES:
        raise error(f"aggregate must be one of {', '.join(AGGREGATES)} (got {aggregate!r})", "jury.aggregate")
    jurors = named_entries(
        document,
        "jurors",
        "juror",
        lambda entry, field: _juror(file, entry, field, lines, dict(overrides or {})),
    )
    weights = _weights(body.get("weights"), [juror.name for juror in jurors], error)
    return Jury(name=file.stem, aggregate=aggregate, jurors=tuple(jurors), weights=weights, path=file)


def _juror(file: Path, entry: Any, field: str, lines: dict[str, int], overrides: dict[str, Any]) -> Juror:
    if not isinstance(entry, dict):
        raise ConfigError(
            "a juror is a mapping with a name and a config file or judge-config keys",
            path=file,
            line=lines.get(field),
            field=field,
        )
    values = dict(entry)
    name = values.pop("name", None)
    if not isinstance(name, str) or not NAME.match(name):
        raise ConfigError(
            "each juror needs a name of letters, digits, '.', '-' or '_' (it names its run's folder)",
            path=file,
            line=lines.get(f"{field}.name", lines.get(field)),
            field=f"{field}.name",
        )
    source = values.pop("config", None)
    # The inline keys alone, so that their errors name the jury file and the juror's field.
    juror_lines = entry_lines(lines, field)
    try:
        make_config(values, path=file, lines=juror_lines)
    except ConfigError as exc:
        where = f"{field}.{exc.field}" if exc.field else field
        raise ConfigError(exc.reason, path=file, line=exc.line or lines.get(field), field=where) from None
    merged = {**values, **overrides}
    if source is None:
        return Juror(name, make_config(merged, path=file, lines=juror_lines).with_source(file))
    if not isinstance(source, str | Path):
        raise ConfigError(
            "config must be the path of a judge config file",
            path=file,
            line=lines.get(f"{field}.config"),
            field=f"{field}.config",
        )
    config_path = relative_to(file, source)
    if not config_path.is_file():
        raise ConfigError(
            f"juror {name!r}: config file {config_path} not found (paths are relative to the jury file)",
            path=file,
            line=lines.get(f"{field}.config"),
            field=f"{field}.config",
        )
    return Juror(name, load_config(config_path, merged))


def _weights(value: Any, names: list[str], error: Any) -> dict[str, float] | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise error("weights must map each juror's name to a number", "jury.weights")
    unknown = [str(key) for key in value if key not in names]
    if unknown:
        raise error(
            f"weight for {unknown[0]!r}, which is no juror (jurors: {', '.join(names)})", "jury.weights"
        )
    missing = [name for name in names if name not in value]
    if missing:
        raise error(f"weights must name every juror; missing: {', '.join(missing)}", "jury.weights")
    weights: dict[str, float] = {}
    for name in names:
        weight = value[name]
        if (
            isinstance(weight, bool)
            or not isinstance(weight, int | float)
            or not math.isfinite(weight)
            or weight < 0
        ):
            raise error(
                f"the weight of {name!r} must be a number >= 0 (got {weight!r})", f"jury.weights.{name}"
            )
        weights[name] = float(weight)
    if not any(weights.values()):
        raise error("at least one weight must be above 0", "jury.weights")
    return weights


def write_weighted_copy(jury: Jury, weights: Mapping[str, float], target: str | Path) -> Path:
    """Write a copy of ``jury``'s file with ``weights`` at ``target`` (atomically).

    Juror config paths are rewritten relative to the copy's folder, so the copy runs the same
    jurors wherever it is written. Comments of the original are not kept (YAML is re-written).

    Raises:
        ConfigError: The jury has no file to copy.
    """
    destination = Path(target)
    body = copied_body(jury.path, "jury", "jurors", ("config",), destination)
    body["weights"] = {name: round(float(weights[name]), 4) for name in (j.name for j in jury.jurors)}
    return write_copy(destination, "jury", body, _JURY_KEYS)
