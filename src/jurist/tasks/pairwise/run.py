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
of stopping the batch. :func:`rescore_run` groups the two orders of each comparison again when
the run is scored.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
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
    subeval_models,
)
from jurist.datasets.samples import resolve_input
from jurist.errors import InputError
from jurist.judges.judge import BaselineJudge, Judge
from jurist.programs.pairwise.baseline import PairwiseBaseline
from jurist.runner import MANIFEST, Item, iter_run_results
from jurist.signatures.pairwise import ChoiceRule, PairwiseChoice, PairwiseInputs
from jurist.tasks._results import run_counts
from jurist.tasks.pairwise.gold import ORDERS, judged_pairs, pairs_agreement
from jurist.tasks.pairwise.report import (
    PairsAgreement,
    PairwiseScores,
    pairs_agreement_markdown,
    pairwise_markdown,
    write_record_table,
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


def judgement_texts(run_dir: Path) -> dict[str, str]:
    """Each judged comparison's text as SubEval records it: ``Choice: X\\nReason: ...`` or the failure."""
    return {
        result.id: PairwiseChoice.model_validate(result.output).to_text()
        if result.status == "ok" and result.output is not None
        else FAIL_MESSAGE
        for result in iter_run_results(run_dir)
    }


@dataclass
class PairwiseRun:
    """A scored run directory of the pairwise task (:func:`rescore_run`).

    Attributes:
        run_dir: The run directory.
        records: The record table (SubEval's columns plus the judge's column) or, for a
            pairs file, one row per pair with both orders' judgements and choices.
        scores: Extraction, consistency, win rates, length statistics (SubEval input).
        agreement: Agreement with gold labels (pairs files that carry them).
        counts: The runner's counts of the run's items, as for every task: ``items``, ``ok``,
            ``failed``, ``failed_ids``, ``failure_kinds`` and ``usage``.
    """

    run_dir: Path
    records: pd.DataFrame
    scores: PairwiseScores | None = None
    agreement: PairsAgreement | None = None
    counts: dict[str, Any] = field(default_factory=dict)


def item_counts(run_dir: Path) -> dict[str, Any]:
    """Items, ok, failed (ids and kinds) and usage of a run directory's recorded results."""
    rows = [result.table_row() for result in iter_run_results(run_dir)]
    columns = ["id", "status", "error_type", "error"]
    return run_counts(pd.DataFrame(rows) if rows else pd.DataFrame(columns=columns))


_OPTIONS_IN_NAME = re.compile(r"__(?P<n>[234])opt$")


def find_run_dir(path: Path) -> Path:
    """The run directory at ``path``, or the one run directory inside it (``judge``'s ``--out``).

    Raises:
        InputError: ``path`` holds no run of ``judge pairwise``, or several.
    """
    if (path / MANIFEST).is_file():
        return path
    runs = sorted(child for child in path.iterdir() if (child / MANIFEST).is_file())
    if len(runs) == 1:
        return runs[0]
    found = "no run directory" if not runs else f"{len(runs)} run directories; name one"
    raise InputError(f"not a run directory of judge pairwise ({found})", path=path)


def rescore_run(
    path: Path,
    *,
    data: str | Path | None = None,
    num_options: int | None = None,
    reference_model: str | None = None,
    judge_column: str | None = None,
    n_resamples: int = 1000,
    seed: int = 0,
    mapping: Sequence[str] | None = None,
    split_vote: NoMajority | None = None,
    models: Sequence[str] | None = None,
    fill_contents: Sequence[str] = (),
    choice_rule: ChoiceRule = "subeval",
    rebuild: bool = False,
) -> PairwiseRun:
    """Score a run directory of the pairwise task, without calling a model.

    A SubEval run is scored from the record table it holds; a pairs run from its recorded
    judgements and its pairs file (``data``, else the file the run's manifest names). A SubEval
    run with no record table (one a jury's votes derived), or any SubEval run with ``rebuild``,
    is scored from its recorded judgements and the table's comparisons (``reference_model``,
    ``models`` and ``fill_contents`` as judged); with ``rebuild`` its record table
    (``record_{judge}_{n}.tsv``) is written from them, as a judged run's is.
    """
    run_dir = find_run_dir(path)
    manifest = json.loads((run_dir / MANIFEST).read_text(encoding="utf-8"))
    recorded = manifest.get("dataset") or {}
    named = _OPTIONS_IN_NAME.search(run_dir.name)
    options = num_options or recorded.get("num_options") or (int(named.group("n")) if named else None)
    tables = sorted(run_dir.glob("record_*.tsv"))
    if tables and not rebuild:
        scores = score_records(
            tables[0],
            reference_model=reference_model or recorded.get("reference_model"),
            judge_column=judge_column,
            num_options=options,
            n_resamples=n_resamples,
            seed=seed,
            choice_rule=choice_rule,
        )
        return PairwiseRun(
            run_dir=run_dir, records=scores.records, scores=scores, counts=item_counts(run_dir)
        )
    source = resolve_input(data if data is not None else recorded["path"])
    if is_subeval(source):
        reference = reference_model or recorded.get("reference_model")
        chosen = models if models is not None else recorded.get("models")
        table = read_pairwise(source, reference_model=reference, models=chosen, fill_contents=fill_contents)
        records = subeval_records(table.frame, judgement_texts(run_dir), str(manifest["judge"]))
        if rebuild:
            write_record_table(records, run_dir, judge=str(manifest["judge"]), num_options=options or 2)
        scores = score_records(
            records,
            reference_model=reference,
            judge_column=str(manifest["judge"]),
            judge_name=str(manifest["judge"]),
            num_options=options or 2,
            n_resamples=n_resamples,
            seed=seed,
            choice_rule=choice_rule,
        )
        return PairwiseRun(run_dir=run_dir, records=records, scores=scores, counts=item_counts(run_dir))
    pairs = load_pairs(
        source,
        mapping=mapping if mapping is not None else recorded.get("map"),
        no_majority=split_vote or recorded.get("split_vote") or "tie",
    )
    judged = judged_pairs(pairs, judgement_texts(run_dir), options or 2, choice_rule)
    agreement = pairs_agreement(
        judged,
        num_options=options or 2,
        judge_name=str(manifest["judge"]),
        n_resamples=n_resamples,
        seed=seed,
        choice_rule=choice_rule,
    )
    return PairwiseRun(
        run_dir=run_dir, records=agreement.judged, agreement=agreement, counts=item_counts(run_dir)
    )


def summary_markdown(run: PairwiseRun) -> str:
    """The Markdown summary of a pairwise run (SubEval numbers, or gold agreement)."""
    if run.scores is not None:
        return pairwise_markdown(run.scores)
    assert run.agreement is not None
    return pairs_agreement_markdown(run.agreement)
