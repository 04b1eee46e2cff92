"""User-defined judges from a YAML task file (``jurist judge my-task.yaml DATA``).

A task file names the rubric the judge reads, the data columns it sees, the kind of
verdict it gives (``label``, ``labels``, ``score``, ``bool`` or ``pairwise``), an optional
gold column to score and calibrate against, few-shot examples, and an optional rule-based
offline baseline. ``docs/tasks.md`` documents every key; :func:`load_task_file` turns a
file into a :class:`~jurist.tasks.Task` that every jurist verb serves.

Modules: :mod:`.spec` (the file's schema), :mod:`.verdicts` (verdict validation, gold
values), :mod:`.data` (rows and items), :mod:`.program` (the DSPy judge), :mod:`.baseline`
(the rule judge), :mod:`.agreement` and :mod:`.scoring` (figures against gold),
:mod:`.calibration`, :mod:`.optimization`, :mod:`.task` (the task itself).
"""

from jurist.tasks.declarative.spec import TaskFile, read_task_file, validate_task
from jurist.tasks.declarative.task import DeclarativeTask, load_task_file

__all__ = ["DeclarativeTask", "TaskFile", "load_task_file", "read_task_file", "validate_task"]
