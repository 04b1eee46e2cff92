"""The pairwise task's data, judges and scoring of a run directory.

Two inputs are understood:

- a **SubEval table** (``questions``/``question``, ``index``, ``evaluating_guidance``,
  ``task``, ``reference_answer``, ``answer-{model}`` columns): every model is compared with
  a reference model, or all pairs; a scored run holds SubEval's record table, log and win
  tables (see :mod:`jurist.tasks.pairwise.report`);
- a **pairs file** (``id``, ``question``, ``response_1``, ``response_2``, optional
  ``reference`` and gold ``label``; LLMBar's files too): every pair is judged in both
  orders; with gold labels a scored run holds the judge's agreement with them.

Each ordered comparison is one item of the judging loop (:func:`jurist.jury.loop.run_judgment`),
so judging is concurrent, cached, resumable, and a comparison whose choice cannot be extracted
after the retries is recorded as failed (SubEval's "Failed to obtain answer via API.") instead
of stopping the batch. :func:`score_run_dir` groups the two orders of each comparison again when
the run is scored.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from jurist.datasets.io import iter_records, sha256_file
from jurist.datasets.pairwise.shapes import NoMajority
from jurist.datasets.pairwise.tables import (
    ANSWER_PREFIX,
    build_comparisons,
    load_pairs,
    load_subeval_table,
    read_record_table,
    subeval_models,
)
from jurist.errors import InputError
from jurist.judges.judge import BaselineJudge, Judge
from jurist.programs.pairwise.baseline import PairwiseBaseline
from jurist.runner import Item
from jurist.schemas import ItemResult
from jurist.signatures.pairwise import ChoiceRule, PairwiseChoice, PairwiseInputs
from jurist.tasks.pairwise.gold import ORDERS, judged_pairs, pairs_agreement
from jurist.tasks.pairwise.report import (
    PairsAgreement,
    PairwiseScores,
    pairs_agreement_markdown,
    pairwise_markdown,
    record_stem,
)
from jurist.tasks.pairwise.scoring import FAIL_MESSAGE, score_records, subeval_records

TASK = "pairwise"


def baseline_judge(num_options: int) -> Judge:
    """The offline :class:`~jurist.programs.pairwise.baseline.PairwiseBaseline` as a runner judge."""
    baseline = PairwiseBaseline()

    def judge(**inputs: Any) -> PairwiseChoice:
        return baseline(**inputs, num_options=num_options)

    return BaselineJudge(judge, name="baseline", version=f"1-{num_options}opt")


def is_subeval(path: Path) -> bool:
    """Whether a file is a SubEval table (it has ``answer-{model}`` columns), not a pairs file."""
    for _line, record in iter_records(path):
        return any(str(column).startswith(ANSWER_PREFIX) for column in record)
    return False


@dataclass
class PairwiseData:
    """A SubEval table's comparisons or a pairs file, as the runner items to judge.

    Attributes:
        path: The file.
        kind: ``"subeval"`` or ``"pairs"``.
        frame: The comparisons (:func:`~jurist.datasets.pairwise.build_comparisons`) or
            the pairs (:func:`~jurist.datasets.pairwise.load_pairs`).
        models: The compared models (``["pairs"]`` for a pairs file), for the run's name.
        items: One item per ordered comparison that is judged (exact matches are not).
        rows: For each item, the row of the input it comes from (SubEval ``index`` or pair id).
    """

    path: Path
    kind: Literal["subeval", "pairs"]
    frame: pd.DataFrame
    models: list[str]
    items: list[Item] = field(default_factory=list)
    rows: list[str] = field(default_factory=list)
    selection: dict[str, Any] = field(default_factory=dict)
    """What else decides the items: options, reference model, compared models (kept in the
    manifest, so a run directory is never resumed with other settings)."""

    def describe(self) -> dict[str, Any]:
        """The dataset as the run's manifest records it."""
        return {
            "path": str(self.path),
            "sha256": sha256_file(self.path),
            "items": len(self.items),
            **self.selection,
        }


def read_pairwise(
    path: Path,
    *,
    reference_model: str | None = None,
    models: Sequence[str] | None = None,
    fill_contents: Sequence[str] = (),
    mapping: Sequence[str] | None = None,
    split_vote: NoMajority = "tie",
    num_options: int = 2,
) -> PairwiseData:
    """Read a SubEval table (compared as the options say) or a pairs file (both orders).

    A pairs file may be in any shape of :mod:`jurist.datasets.pairwise.shapes`; ``mapping``
    (``target=column`` entries) and ``split_vote`` are handed to
    :func:`~jurist.datasets.pairwise.load_pairs`. The data's ``selection`` records them, or the
    reference model and compared models, with ``num_options``.
    """
    if is_subeval(path):
        table = load_subeval_table(path, fill_contents=fill_contents, base_dir=path.parent)
        comparisons = build_comparisons(table, models=models, reference_model=reference_model)
        chosen = list(models) if models is not None else subeval_models(table)
        data = PairwiseData(path, "subeval", comparisons, chosen)
        data.selection = {"num_options": num_options, "reference_model": reference_model, "models": chosen}
        for row in comparisons.itertuples(index=False):
            if row.exact_match:
                continue
            inputs = PairwiseInputs(
                question=row.question,
                response_1=row.answer1,
                response_2=row.answer2,
                reference_answer=str(row.reference_answer or ""),
                evaluating_guidance=str(row.evaluating_guidance or ""),
            )
            data.items.append(Item(id=row.cmp_index, inputs=inputs.as_inputs()))
            data.rows.append(str(row.index))
        return data
    pairs = load_pairs(path, mapping=mapping, no_majority=split_vote)
    data = PairwiseData(path, "pairs", pairs, ["pairs"])
    data.selection = {"num_options": num_options, "map": list(mapping or []), "split_vote": split_vote}
    for row in pairs.itertuples(index=False):
        first = PairwiseInputs(
            question=row.question,
            response_1=row.response_1,
            response_2=row.response_2,
            reference_answer=str(row.reference or ""),
        )
        for order, inputs in zip(ORDERS, (first, first.swapped()), strict=True):
            data.items.append(Item(id=f"{row.id}|{order}", inputs=inputs.as_inputs()))
            data.rows.append(str(row.id))
    return data


def judgement_text(result: ItemResult) -> str:
    """A judged comparison's text as SubEval records it: ``Choice: X\nReason: ...`` or the failure."""
    if result.status == "ok" and result.output is not None:
        return PairwiseChoice.model_validate(result.output).to_text()
    return FAIL_MESSAGE


@dataclass
class PairwiseRun:
    """A scored run directory of the pairwise tasks (:func:`score_run_dir`).

    Attributes:
        run_dir: The run directory.
        records: The record table built from the run's judgements (SubEval's columns plus
            the judge's column; ``None`` when scored from the record table the run holds)
            or, for a pairs file, one row per pair with both orders' judgements and choices.
        scores: Extraction, consistency, win rates, length statistics (SubEval input).
        agreement: Agreement with gold labels (pairs files that carry them).
    """

    run_dir: Path
    records: pd.DataFrame | None
    scores: PairwiseScores | None = None
    agreement: PairsAgreement | None = None


def score_run_dir(
    run_dir: Path,
    dataset: PairwiseData | None,
    texts: Mapping[str, str],
    *,
    judge: str,
    num_options: int | None,
    reference_model: str | None = None,
    judge_column: str | None = None,
    n_resamples: int = 1000,
    seed: int = 0,
    choice_rule: ChoiceRule = "subeval",
) -> PairwiseRun:
    """Score a run directory of the pairwise tasks from what it recorded, without calling a model.

    With the ``dataset`` the run judged, each comparison's two orders are grouped again from
    the run's recorded judgements (``texts``, by item id: :func:`judgement_text`; ``judge``
    their column): a SubEval table gives the record
    table (one row per comparison, every model pair of every question, exact matches
    included) and SubEval's figures; a pairs file gives one row per pair with both orders and
    the agreement with its gold labels. Without it (the data file has left the place the run
    recorded), a SubEval run is scored from the record table it holds
    (``record_{judge}_{n}.tsv``, ``judge_column`` its judge's column).

    Raises:
        InputError: No ``dataset``, and the run holds no record table.
    """
    if dataset is None:
        tables = sorted(run_dir.glob("record_*.tsv"))
        if not tables:
            raise InputError("the run holds no record table: give the data it judged (--gold)", path=run_dir)
        scores = score_records(
            tables[0],
            reference_model=reference_model,
            judge_column=judge_column,
            num_options=num_options,
            n_resamples=n_resamples,
            seed=seed,
            choice_rule=choice_rule,
        )
        return PairwiseRun(run_dir=run_dir, records=None, scores=scores)
    if dataset.kind == "subeval":
        records = subeval_records(dataset.frame, texts, judge)
        # Named as the record table the run holds (its exports write it).
        file = run_dir / f"{record_stem(judge, num_options or 2)}.tsv"
        table = replace(read_record_table(records, judge_column=judge), source=str(file))
        scores = score_records(
            table,
            reference_model=reference_model,
            judge_column=judge,
            judge_name=judge,
            num_options=num_options or 2,
            n_resamples=n_resamples,
            seed=seed,
            choice_rule=choice_rule,
        )
        return PairwiseRun(run_dir=run_dir, records=records, scores=scores)
    judged = judged_pairs(dataset.frame, texts, num_options or 2, choice_rule)
    agreement = pairs_agreement(
        judged,
        num_options=num_options or 2,
        judge_name=judge,
        n_resamples=n_resamples,
        seed=seed,
        choice_rule=choice_rule,
    )
    return PairwiseRun(run_dir=run_dir, records=agreement.judged, agreement=agreement)


def summary_markdown(run: PairwiseRun) -> str:
    """The Markdown summary of a pairwise run (SubEval numbers, or gold agreement)."""
    if run.scores is not None:
        return pairwise_markdown(run.scores)
    assert run.agreement is not None
    return pairs_agreement_markdown(run.agreement)
