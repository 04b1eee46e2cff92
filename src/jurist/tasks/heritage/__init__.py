"""The heritage custodian tasks (see :class:`HeritageTask`).

``heritage`` judges a gold set with the heritage programs (offline baselines or an LLM) and
scores every metric of the heritage evaluation framework; ``heritage-ner``,
``heritage-classification``, ``heritage-linking`` and ``heritage-qa`` run one program
each, and are what ``jurist calibrate`` and ``jurist optimize`` take.
"""

from jurist.tasks.heritage.compare import PER_ITEM_METRICS
from jurist.tasks.heritage.judging import (
    ALL_TASKS,
    HeritageBaselineProgram,
    heritage_items,
    load_heritage_programs,
)
from jurist.tasks.heritage.optimization import PROGRAM_PARTS, write_heritage_splits
from jurist.tasks.heritage.rescoring import compare_heritage
from jurist.tasks.heritage.scoring import TARGETS, HeritageScores, target_rows, target_table
from jurist.tasks.heritage.task import (
    HeritageClassificationTask,
    HeritageLinkingTask,
    HeritageNerTask,
    HeritageQATask,
    HeritageTask,
)

TASKS = {
    "heritage": HeritageTask,
    "heritage-ner": HeritageNerTask,
    "heritage-classification": HeritageClassificationTask,
    "heritage-linking": HeritageLinkingTask,
    "heritage-qa": HeritageQATask,
}
"""The tasks this package registers (name -> class)."""

__all__ = [
    "ALL_TASKS",
    "PER_ITEM_METRICS",
    "PROGRAM_PARTS",
    "TARGETS",
    "TASKS",
    "HeritageBaselineProgram",
    "HeritageClassificationTask",
    "HeritageLinkingTask",
    "HeritageNerTask",
    "HeritageQATask",
    "HeritageScores",
    "HeritageTask",
    "compare_heritage",
    "heritage_items",
    "load_heritage_programs",
    "target_rows",
    "target_table",
    "write_heritage_splits",
]
