"""jurist: LLM judges people can trust.

The public API, one import away (loaded on first use, so ``import jurist`` stays cheap)::

    import jurist

    task = jurist.Task.from_yaml("helpfulness.yaml")      # or a name: jurist.get_task("ragbench")
    items = jurist.judge(task, "data.jsonl", "judge.yaml", out="runs/a")  # DataFrame; .summary, .run_dir
    scores = jurist.score(task, "runs/a", gold="data.jsonl")
    board = jurist.calibrate(task, ["gold.jsonl"], ["a.yaml", "b.yaml"], out="calibration")
    result = jurist.optimize(task, "train.jsonl", "dev.jsonl", "judge.yaml", out="judge.json")
    messages = jurist.prompt(task, "data.jsonl", "judge.yaml", row=0)

A task is a :class:`jurist.Task` (``jurist/tasks/_contract.py`` says what one must provide);
register your own with :func:`jurist.register_task` or the ``jurist.tasks`` entry-point
group. Metrics live in :mod:`jurist.metrics`, optimization internals in :mod:`jurist.optimization`.
"""

from __future__ import annotations

import os
from importlib import import_module
from typing import Any

# LiteLLM fetches its price map from the network when it is first imported (and retries in a
# background thread) unless told to use its bundled copy. This package runs before any of its
# modules imports DSPy or LiteLLM; a user who wants the remote map sets the variable to False.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

_EXPORTS = {
    "Task": "jurist.tasks",
    "register_task": "jurist.tasks",
    "get_task": "jurist.tasks",
    "task_names": "jurist.tasks",
    "judge": "jurist.tasks",
    "score": "jurist.tasks",
    "calibrate": "jurist.tasks",
    "optimize": "jurist.tasks",
    "prompt": "jurist.tasks",
    "JudgeConfig": "jurist.judges.config",
    "load_config": "jurist.judges.config",
    "judge_ragbench": "jurist.tasks.ragbench",
    "score_ragbench": "jurist.tasks.ragbench",
    "judge_pairwise": "jurist.tasks.pairwise",
    "score_pairwise_records": "jurist.tasks.pairwise",
    "score_traces": "jurist.tasks.gates",
    "run_rgb_suite": "jurist.tasks.rgb",
    "score_rgb_predictions": "jurist.tasks.rgb",
    "judge_heritage": "jurist.tasks.heritage",
    "score_heritage": "jurist.tasks.heritage",
    "OpenAICompatibleServer": "jurist.testing",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'jurist' has no attribute {name!r}")
    return getattr(import_module(module), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
