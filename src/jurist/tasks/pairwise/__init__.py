"""The pairwise (SubEval) tasks: ``pairwise`` and ``pairwise-gold`` (see :class:`PairwiseTask`).

- :func:`judge_pairwise` judges a SubEval table or pairs file in both orders through the
  batch runner (``jurist judge pairwise``);
- :func:`score_pairwise_records` scores judged SubEval records without calling a model
  (``jurist score pairwise``);
- :func:`judge_pairs_baseline` judges pairs files with the offline baseline and reports
  agreement with their gold labels (``jurist score pairwise-gold``).
"""

from jurist.report.pairwise import PairsAgreement, PairwiseScores
from jurist.tasks.pairwise.gold import judge_pairs, judge_pairs_baseline, pairs_agreement
from jurist.tasks.pairwise.lengths import token_counter
from jurist.tasks.pairwise.optimization import PairwiseAdapter
from jurist.tasks.pairwise.run import PairwiseRun, judge_pairwise, make_pairwise_judge, summary_markdown
from jurist.tasks.pairwise.scoring import (
    EXACT_MATCH,
    FAIL_MESSAGE,
    PairwiseJudge,
    infer_reference_model,
    judge_comparisons,
    records_from_table,
    score_pairwise_records,
)
from jurist.tasks.pairwise.task import PairwiseGoldTask, PairwiseTask

TASKS = {"pairwise": PairwiseTask, "pairwise-gold": PairwiseGoldTask}
"""The tasks this package registers (name -> class)."""

__all__ = [
    "EXACT_MATCH",
    "FAIL_MESSAGE",
    "TASKS",
    "PairsAgreement",
    "PairwiseAdapter",
    "PairwiseGoldTask",
    "PairwiseJudge",
    "PairwiseRun",
    "PairwiseScores",
    "PairwiseTask",
    "infer_reference_model",
    "judge_comparisons",
    "judge_pairs",
    "judge_pairs_baseline",
    "judge_pairwise",
    "make_pairwise_judge",
    "pairs_agreement",
    "records_from_table",
    "score_pairwise_records",
    "summary_markdown",
    "token_counter",
]
