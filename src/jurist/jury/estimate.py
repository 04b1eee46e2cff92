"""The judges a jury, repeats or cascade would call, with their run directories, for a dry run.

Each juror (each repeat of a juror asked several times) and each stage is one
:class:`~jurist.tasks._estimate.JudgeTarget`, with the run directory its run would use. A
cascade's first stage judges every item; later stages are marked ``upper bound``, since
they judge only the items the stages before send on, which cannot be known before.

In ``calibrate`` a jury or cascade is judged through its single judges
(:func:`calibration_judges`): every juror and every stage on every gold item; the jury's
votes and the cascade's paths are derived from their runs and call nothing.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from jurist.errors import ConfigError
from jurist.jury.calibrate import JurySpec, juror_specs
from jurist.jury.cascade_calibrate import CascadeSpec, stage_spec
from jurist.jury.cascade_config import is_cascade_file, load_cascade
from jurist.jury.cascade_run import STAGES, default_cascade_dir
from jurist.jury.panel import Panel, jury_panel, panel_of, repeats_panel
from jurist.jury.run import default_panel_dir
from jurist.tasks._contract import Task
from jurist.tasks._estimate import JudgeTarget, Scope
from jurist.tasks.calibration_rows import JudgeSpec

__all__ = ["calibration_judges", "default_out", "estimate_targets"]


def _panel_targets(panel: Panel, out: Path, scope: Scope, prefix: str = "") -> Iterator[JudgeTarget]:
    for member in panel.members:
        directory = panel.member_dir(out, member)
        if member.repeats > 1:
            inner = repeats_panel(member.config, member.repeats, panel.aggregate)
            yield from _panel_targets(inner, directory, scope, f"{prefix}{member.name}/")
        else:
            yield JudgeTarget(f"{prefix}{member.name}", member.config, directory, scope, member.repeat)


def estimate_targets(
    task: Task,
    data: str | Path,
    source: Any,
    *,
    out: str | Path | None = None,
    repeats: int = 1,
    overrides: Mapping[str, Any] | None = None,
) -> list[JudgeTarget]:
    """The judges of a jury file, a cascade file, or one judge asked ``repeats`` times.

    Args:
        task: The task.
        data: The rows (for the default run directory's name).
        source: A jury or cascade file, or a judge config (file or object) to repeat.
        out: The run directory the judgment would use (default: the one it would choose).
        repeats: How many times each judge is asked.
        overrides: Judge-config fields applied to every judge (the command line's).

    Raises:
        ConfigError: A bad jury, cascade or judge config, or repeats that cannot be.
    """
    if is_cascade_file(source):
        cascade = load_cascade(source, overrides)
        target = Path(out) if out is not None else default_cascade_dir(task, data, cascade)
        found: list[JudgeTarget] = []
        for index, stage in enumerate(cascade.stages):
            scope: Scope = "exact" if index == 0 else "upper bound"
            directory = target / STAGES / stage.name
            if stage.jury is not None:
                found += _panel_targets(jury_panel(stage.jury), directory, scope, f"{stage.name}/")
            else:
                found.append(JudgeTarget(stage.name, stage.judge_config, directory, scope))
        return found
    panel = panel_of(source, repeats, overrides)
    if panel is None:
        raise ConfigError("give a jury file, a cascade file or --repeats 2 or more", field="config")
    target = Path(out) if out is not None else default_panel_dir(task, data, panel)
    return list(_panel_targets(panel, target, "exact"))


def default_out(
    task: Task,
    data: str | Path,
    source: Any,
    *,
    repeats: int = 1,
    overrides: Mapping[str, Any] | None = None,
) -> Path:
    """The run directory a jury file, a cascade file, or one judge asked ``repeats`` times
    judges ``data`` into when no ``out`` is given (named after ``data``'s stem; the file need
    not exist).

    Raises:
        ConfigError: A bad jury, cascade or judge config, or repeats that cannot be.
    """
    if is_cascade_file(source):
        return default_cascade_dir(task, data, load_cascade(source, overrides))
    panel = panel_of(source, repeats, overrides)
    if panel is None:
        raise ConfigError("give a jury file, a cascade file or --repeats 2 or more", field="config")
    return default_panel_dir(task, data, panel)


def calibration_judges(spec: JudgeSpec) -> list[JudgeSpec]:
    """The single judges ``calibrate`` runs for ``spec``: a jury's jurors (``JURY/JUROR``), a
    cascade's stages (``CASCADE/STAGE``, a jury stage's jurors), or the judge itself."""
    if isinstance(spec, CascadeSpec):
        return [
            judge for stage in spec.cascade.stages for judge in calibration_judges(stage_spec(spec, stage))
        ]
    if isinstance(spec, JurySpec):
        return list(juror_specs(spec).values())
    return [spec]
