"""jurist: LLM judges people can trust.

The public API, one import away (loaded on first use, so ``import jurist`` stays cheap)::

    import jurist

    task = jurist.get_task("helpfulness.yaml")      # a task file, or a name: "ragbench"
    items = jurist.judge(task, "data.jsonl", "judge.yaml", out="runs/a")  # DataFrame; .summary, .run_dir
    items = jurist.judge(task, frame, "judge.yaml", out="runs/b")  # data: a DataFrame or a list of dicts too
    scores = jurist.score(task, "runs/a", gold="data.jsonl")
    board = jurist.calibrate(task, ["gold.jsonl"], ["a.yaml", "b.yaml"], out="calibration")
    result = jurist.optimize(task, "train.jsonl", "dev.jsonl", "judge.yaml", out="judge.json")
    messages = jurist.prompt(task, "data.jsonl", "judge.yaml", row=0)
    plan = jurist.estimate(task, "data.jsonl", "judge.yaml", out="runs/a")  # dry run: tokens, cost
    plan = jurist.estimate_calibration(task, ["gold.jsonl"], ["a.yaml"], out="calibration")

A task is a :class:`jurist.Task` (``jurist/tasks/_contract.py`` says what one must provide),
its metrics :class:`jurist.Metric` objects declared once;
register your own with :func:`jurist.register_task` or the ``jurist.tasks`` entry-point
group. Metrics live in :mod:`jurist.metrics`, optimization internals in :mod:`jurist.optimization`.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from jurist._lazy import lazy_exports

if TYPE_CHECKING:
    from jurist.judges.config import JudgeConfig, load_config
    from jurist.tasks import Task, get_task, register_task, task_names
    from jurist.tasks._metric import Metric, MetricValue
    from jurist.testing import OpenAICompatibleServer
    from jurist.verbs import calibrate, estimate, estimate_calibration, judge, optimize, prompt, score

# LiteLLM fetches its price map from the network when it is first imported (and retries in a
# background thread) unless told to use its bundled copy. This package runs before any of its
# modules imports DSPy or LiteLLM; a user who wants the remote map sets the variable to False.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

__all__ = [
    "JudgeConfig",
    "Metric",
    "MetricValue",
    "OpenAICompatibleServer",
    "Task",
    "calibrate",
    "estimate",
    "estimate_calibration",
    "get_task",
    "judge",
    "load_config",
    "optimize",
    "prompt",
    "register_task",
    "score",
    "task_names",
]

__getattr__, __dir__ = lazy_exports(__name__)
