"""The RGB tasks (RGB, arXiv 2309.01431).

- ``rgb`` (:class:`RGBTask`): the RAG robustness of a model under test. ``jurist.judge("rgb",
  DATA_DIR, config, out=...)`` runs RGB's suite on a directory of RGB files, as a recipe of
  ordinary runs (:mod:`jurist.tasks.rgb.suite`: the model under test answers each set at each
  setting, the Rej*/ED* judge judges the answers) with one combined report;
  ``jurist.score("rgb", FILE_OR_DIR)`` scores RGB's prediction files.
- ``rgb-rejection`` (Rej*) and ``rgb-error-detection`` (ED*): the two LLM judges of the
  suite on their own, judged, scored, calibrated and optimized against gold yes/no labels.
"""

from jurist.tasks.rgb.calibration import rgb_calibration
from jurist.tasks.rgb.judges import (
    INTEGRATION_NOISE_RATES,
    NOISE_RATES,
    PASSAGE_NUM,
    RGB_JUDGE_CLASSES,
    RGB_JUDGE_LABELS,
    RGB_JUDGE_TASKS,
    SETS,
    JudgeKind,
    SetName,
    rgb_judge_configs,
)
from jurist.tasks.rgb.judgment_tasks import make_rgb_judge
from jurist.tasks.rgb.options import RGBOptions
from jurist.tasks.rgb.plan import SAMPLE, RGBFile, RGBPlan, find_rgb_files, plan_rgb_suite
from jurist.tasks.rgb.run import RGBRun, RGBSetting, prediction_file_name
from jurist.tasks.rgb.suite import RGBSuiteRun
from jurist.tasks.rgb.task import (
    RGBErrorDetectionTask,
    RGBJudgmentTask,
    RGBRejectionTask,
    RGBTask,
    suite_scores,
)

TASKS = {
    "rgb": RGBTask,
    "rgb-rejection": RGBRejectionTask,
    "rgb-error-detection": RGBErrorDetectionTask,
}
"""The tasks this package registers (name -> class)."""

__all__ = [
    "INTEGRATION_NOISE_RATES",
    "NOISE_RATES",
    "PASSAGE_NUM",
    "RGB_JUDGE_CLASSES",
    "RGB_JUDGE_LABELS",
    "RGB_JUDGE_TASKS",
    "SAMPLE",
    "SETS",
    "TASKS",
    "JudgeKind",
    "RGBErrorDetectionTask",
    "RGBFile",
    "RGBJudgmentTask",
    "RGBOptions",
    "RGBPlan",
    "RGBRejectionTask",
    "RGBRun",
    "RGBSetting",
    "RGBSuiteRun",
    "RGBTask",
    "SetName",
    "rgb_calibration",
    "find_rgb_files",
    "make_rgb_judge",
    "plan_rgb_suite",
    "prediction_file_name",
    "rgb_judge_configs",
    "suite_scores",
]
