"""The pairwise (SubEval) tasks: ``pairwise`` and ``pairwise-gold`` (see :class:`PairwiseTask`).

``jurist.judge("pairwise", DATA, ...)`` judges a SubEval table or pairs file in both orders
(each ordered comparison one item of the judging loop, a pair's two orders one verdict);
``jurist.score("pairwise", RUN_OR_RECORDS)`` scores a run directory or judged SubEval records
without calling a model; ``jurist.judge("pairwise-gold", PAIRS, ...)`` judges a pairs file with
the offline baseline and reports its agreement with the gold labels.
"""

from jurist.tasks.pairwise.gold import pairs_agreement
from jurist.tasks.pairwise.lengths import token_counter
from jurist.tasks.pairwise.report import PairsAgreement, PairwiseScores
from jurist.tasks.pairwise.run import PairwiseRun, summary_markdown
from jurist.tasks.pairwise.scoring import (
    EXACT_MATCH,
    FAIL_MESSAGE,
    infer_reference_model,
    records_from_table,
)
from jurist.tasks.pairwise.task import PairwiseGoldTask, PairwiseTask

TASKS = {"pairwise": PairwiseTask, "pairwise-gold": PairwiseGoldTask}
"""The tasks this package registers (name -> class)."""

__all__ = [
    "EXACT_MATCH",
    "FAIL_MESSAGE",
    "TASKS",
    "PairsAgreement",
    "PairwiseGoldTask",
    "PairwiseRun",
    "PairwiseScores",
    "PairwiseTask",
    "infer_reference_model",
    "pairs_agreement",
    "records_from_table",
    "summary_markdown",
    "token_counter",
]
