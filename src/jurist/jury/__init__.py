"""Juries and repeats: several judges (or one judge asked several times) whose verdicts are
aggregated per item, on any task whose verdict is one output value.

- A **jury** file lists judges (:mod:`jurist.jury.config`); ``jurist judge TASK DATA --config
  jury.yaml`` runs each juror into ``DIR/jurors/NAME`` and the jury's verdicts into ``DIR``.
- **Repeats** (``--repeats K``) ask one judge ``K`` times, each with its own cache entries, into
  ``DIR/repeats/1..K``, and report its self-consistency.
- ``jurist calibrate TASK --gold F -c jury.yaml`` puts the jury and each juror on the
  leaderboard (:mod:`jurist.jury.calibrate`) and can write calibrated weights.
- A **cascade** file (:mod:`jurist.jury.cascade_config`) tries judges in order, each on the
  items the one before was unsure of (:mod:`jurist.jury.cascade_run`); ``jurist calibrate``
  chooses its thresholds (:mod:`jurist.jury.cascade_calibrate`).

Only the command line and :mod:`jurist.verbs` import this package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jurist._lazy import lazy_exports

if TYPE_CHECKING:
    from jurist.jury.calibrate import JurySpec, calibration_rows, jury_spec, weighted_copy_path, write_weights
    from jurist.jury.cascade_calibrate import CascadeSpec, cascade_spec
    from jurist.jury.cascade_calibrate import calibration_rows as cascade_calibration_rows
    from jurist.jury.cascade_config import Cascade, Stage, is_cascade_file, load_cascade
    from jurist.jury.cascade_report import cascade_lines, choice_lines
    from jurist.jury.cascade_run import judge_cascade, run_cascade
    from jurist.jury.config import AGGREGATES, Juror, Jury, is_jury_file, load_jury
    from jurist.jury.estimate import calibration_judges, default_out, estimate_targets
    from jurist.jury.panel import Member, Panel, jury_panel, panel_of, repeats_panel
    from jurist.jury.report import panel_lines
    from jurist.jury.run import judge_panel, run_panel

__all__ = [
    "AGGREGATES",
    "Cascade",
    "CascadeSpec",
    "Juror",
    "Jury",
    "JurySpec",
    "Member",
    "Panel",
    "Stage",
    "calibration_judges",
    "calibration_rows",
    "cascade_calibration_rows",
    "cascade_lines",
    "cascade_spec",
    "choice_lines",
    "default_out",
    "estimate_targets",
    "is_cascade_file",
    "is_jury_file",
    "judge_cascade",
    "judge_panel",
    "jury_panel",
    "jury_spec",
    "load_cascade",
    "load_jury",
    "panel_lines",
    "panel_of",
    "repeats_panel",
    "run_cascade",
    "run_panel",
    "weighted_copy_path",
    "write_weights",
]

# Imported on first use (:mod:`jurist._lazy`): the runs load DSPy and pandas, and the command
# line defines its options with :mod:`jurist.jury.options` (jury and cascade files) alone.
__getattr__, __dir__ = lazy_exports(__name__)
