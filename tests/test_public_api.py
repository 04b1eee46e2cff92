"""``jurist`` exports one public API: the verbs, the task contract and registry, and what a
user needs to call them; no per-task function beside the verbs."""

from __future__ import annotations

import subprocess
import sys

import jurist

VERBS = {"judge", "score", "calibrate", "optimize", "prompt", "estimate", "estimate_calibration"}
TASKS = {"Task", "register_task", "get_task", "task_names", "Metric", "MetricValue"}
CONFIGS = {"JudgeConfig", "load_config"}
TESTING = {"OpenAICompatibleServer"}

HISTORICAL = {
    "judge_ragbench",
    "score_ragbench",
    "judge_pairwise",
    "score_pairwise_records",
    "judge_heritage",
    "score_heritage",
    "score_traces",
    "run_rgb_suite",
    "score_rgb_predictions",
}
"""The per-task functions the verbs replaced (``jurist.judge("ragbench", ...)`` and so on)."""


def test_the_exports_are_exactly_the_public_api():
    assert sorted(jurist.__all__) == sorted(VERBS | TASKS | CONFIGS | TESTING)
    assert set(jurist.__all__) <= set(dir(jurist))


def test_no_per_task_function_is_left_beside_the_verbs():
    import jurist.tasks.ragbench

    for name in HISTORICAL:
        assert not hasattr(jurist, name), name
    assert set(jurist.tasks.ragbench.__all__) == {"TASKS", "RagbenchTask"}


def test_every_exported_name_resolves():
    for name in jurist.__all__:
        assert callable(getattr(jurist, name)), name
    assert jurist.JudgeConfig().is_baseline


def test_importing_jurist_does_not_load_dspy():
    code = "import sys, jurist; print('dspy' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "False"
