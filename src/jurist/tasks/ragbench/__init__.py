"""The RAGBench/TRACe task (see :class:`RagbenchTask`)."""

from jurist.tasks.ragbench.task import RagbenchTask

TASKS = {"ragbench": RagbenchTask}
"""The tasks this package registers (name -> class)."""

__all__ = ["TASKS", "RagbenchTask"]
