"""The RAGBench/TRACe task (see :class:`RagbenchTask`)."""

from jurist.tasks.ragbench.task import RagbenchTask, judge_ragbench, make_ragbench_judge, score_ragbench

TASKS = {"ragbench": RagbenchTask}
"""The tasks this package registers (name -> class)."""

__all__ = ["TASKS", "RagbenchTask", "judge_ragbench", "make_ragbench_judge", "score_ragbench"]
