"""A panel: the judges whose verdicts are aggregated per item, and where each one's run goes.

Two kinds exist. A **jury** (a jury file) is several judges; their runs are ``DIR/jurors/NAME``.
**Repeats** ask one judge ``K`` times (``--repeats K``); their runs are ``DIR/repeats/1..K``,
and repeat ``k`` is salted into its own cache entries (:func:`jurist.judges.cache_context.repeat_salt`).
A jury with repeats asks each juror ``K`` times: each ``DIR/jurors/NAME`` is then the panel of
that juror's repeats. Every member's folder is an ordinary run directory.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from jurist.errors import ConfigError
from jurist.judges.config import JudgeConfig, load_config
from jurist.jury.config import Aggregate, Jury, is_jury_file, load_jury

__all__ = ["Member", "Panel", "PanelKind", "jury_panel", "panel_of", "repeats_panel"]

PanelKind = Literal["jury", "repeats"]
FOLDERS: dict[str, str] = {"jury": "jurors", "repeats": "repeats"}
"""The folder of a panel's run directory that holds its members' runs."""


@dataclass(frozen=True)
class Member:
    """One member of a panel.

    Attributes:
        name: Its name (its run's folder; ``1``, ``2``, ... for repeats).
        config: Its judge config.
        weight: The weight of its vote.
        repeat: Which repeat of ``config`` it answers as (1: the same cache entries as a run
            without repeats).
        repeats: Above 1, the member is itself the panel of that many repeats of ``config``.
        run_dir: Where its run goes, when not in the panel's own folder (calibration keeps
            each juror's run where its leaderboard row reads it).
    """

    name: str
    config: JudgeConfig
    weight: float = 1.0
    repeat: int = 1
    repeats: int = 1
    run_dir: Path | None = None


@dataclass(frozen=True)
class Panel:
    """Judges whose verdicts are aggregated per item (see :mod:`jurist.jury.aggregate`)."""

    kind: PanelKind
    name: str
    aggregate: Aggregate
    members: tuple[Member, ...]
    weights: Mapping[str, float] | None = field(default=None)

    @property
    def judge_name(self) -> str:
        """The panel's judge name in its run's manifest."""
        if self.kind == "jury":
            return f"jury {self.name}"
        return f"{self.name} x{len(self.members)}"

    @property
    def member_word(self) -> str:
        """What a member is called in reports: ``juror`` or ``repeat``."""
        return "juror" if self.kind == "jury" else "repeat"

    def fingerprint(self) -> str:
        """A short hash of what decides the panel's verdicts: kind, aggregate, weights, and each
        member's name, config fingerprint and repeats."""
        data = {
            "kind": self.kind,
            "aggregate": self.aggregate,
            "weights": dict(sorted(self.weights.items())) if self.weights is not None else None,
            "members": [
                [member.name, member.config.fingerprint(), member.repeat, member.repeats]
                for member in self.members
            ],
        }
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]

    def member_dir(self, out: Path, member: Member) -> Path:
        """The run directory of ``member`` in a panel whose run directory is ``out``."""
        return member.run_dir if member.run_dir is not None else out / FOLDERS[self.kind] / member.name

    def describe(self) -> dict[str, Any]:
        """The panel as its run's manifest records it (as ``config``): no secret, only names."""
        names = ", ".join(member.name for member in self.members)
        model = (
            f"jury of {names}"
            if self.kind == "jury"
            else f"{self.members[0].config.model} x{len(self.members)}"
        )
        return {
            "model": model,
            "panel": self.kind,
            "panel_fingerprint": self.fingerprint(),
            "aggregate": self.aggregate,
            "weights": dict(self.weights) if self.weights is not None else None,
            "members": [
                {
                    "name": member.name,
                    "repeat": member.repeat,
                    "repeats": member.repeats,
                    "config": member.config.model_dump(mode="json"),
                }
                for member in self.members
            ],
        }


def _refuse_baseline(config: JudgeConfig, who: str) -> None:
    if config.is_baseline and config.program is None:
        raise ConfigError(
            f"{who} is the offline baseline, which is deterministic: its repeats would all give the "
            "same verdicts; --repeats needs a judge config that names a model",
            field="repeats",
        )


def repeats_panel(config: JudgeConfig, repeats: int, aggregate: Aggregate = "majority") -> Panel:
    """The panel of ``repeats`` asks of one judge (``DIR/repeats/1..K``), aggregated by ``aggregate``.

    Raises:
        ConfigError: ``repeats`` is below 2, or the config names the offline baseline.
    """
    if repeats < 2:
        raise ConfigError(f"repeats must be 2 or more for a panel (got {repeats})", field="repeats")
    _refuse_baseline(config, "the judge")
    name = config.source.stem if config.source is not None else config.model.replace("/", "_")
    members = tuple(Member(str(index), config, repeat=index) for index in range(1, repeats + 1))
    return Panel("repeats", name, aggregate, members)


def jury_panel(jury: Jury, repeats: int = 1, run_dirs: Mapping[str, Path] | None = None) -> Panel:
    """The panel of a jury; with ``repeats`` above 1 each juror is asked that many times.

    Args:
        jury: The jury.
        repeats: How many times each juror is asked.
        run_dirs: Juror name -> its run directory, instead of ``DIR/jurors/NAME``.

    Raises:
        ConfigError: ``repeats`` is below 1, or above 1 with a juror that is the offline baseline.
    """
    if repeats < 1:
        raise ConfigError(f"repeats must be 1 or more (got {repeats})", field="repeats")
    if repeats > 1:
        for juror in jury.jurors:
            _refuse_baseline(juror.config, f"juror {juror.name!r}")
    members = tuple(
        Member(
            juror.name,
            juror.config,
            weight=jury.weight(juror.name),
            repeats=repeats,
            run_dir=(run_dirs or {}).get(juror.name),
        )
        for juror in jury.jurors
    )
    return Panel("jury", jury.name, jury.aggregate, members, jury.weights)


def panel_of(config: Any, repeats: int = 1, overrides: Mapping[str, Any] | None = None) -> Panel | None:
    """The panel a judge config source asks for, or ``None`` for one plain run.

    Args:
        config: A jury file, a judge config file, a :class:`JudgeConfig`, or ``None`` (the baseline).
        repeats: How many times each judge is asked.
        overrides: Judge-config fields applied to every judge (the command line's).

    Raises:
        ConfigError: A bad jury or judge config, or repeats that cannot be (see above).
    """
    if repeats < 1:
        raise ConfigError(f"repeats must be 1 or more (got {repeats})", field="repeats")
    if is_jury_file(config):
        return jury_panel(load_jury(config, overrides), repeats)
    if repeats == 1:
        return None
    judge = config if isinstance(config, JudgeConfig) else load_config(config, dict(overrides or {}))
    return repeats_panel(judge, repeats)
