"""The verbs: judge, score, calibrate, optimize, prompt and estimate, over any task.

The verbs own the pipeline (read → judge → score → export → views) and name no task: they
look a task up in the registry (:func:`jurist.tasks.get_task`), run it through the runner,
and hand a jury, repeats or a cascade to :mod:`jurist.jury`. They sit above both: ``cli →
verbs → {jury, optimization} → tasks``, so nothing below imports them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jurist._lazy import lazy_exports

if TYPE_CHECKING:
    from jurist.verbs._calibration_estimate import estimate_calibration
    from jurist.verbs._probe import default_probe_dir, probe_injection
    from jurist.verbs._verbs import (
        calibrate,
        default_run_dir,
        estimate,
        judge,
        judge_run,
        judge_specs,
        optimize,
        prompt,
        score,
    )

__all__ = [
    "calibrate",
    "default_probe_dir",
    "default_run_dir",
    "estimate",
    "estimate_calibration",
    "judge",
    "judge_run",
    "judge_specs",
    "optimize",
    "probe_injection",
    "prompt",
    "score",
]

# Imported on first use (:mod:`jurist._lazy`): the verbs load pandas and DSPy, and the command
# line imports this package before it knows which verb runs.
__getattr__, __dir__ = lazy_exports(__name__)
