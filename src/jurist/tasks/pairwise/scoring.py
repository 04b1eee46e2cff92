"""Scores of judged SubEval records, without calling a model (``jurist score pairwise``).

- :func:`score_records` scores a SubEval record table (or any judge's records):
  extraction, consistency, old- and new-version win rates with bootstrap intervals,
  length statistics and length bias.
- :func:`subeval_records` builds a SubEval record table from a run's judgements of the
  comparisons of :func:`~jurist.datasets.pairwise.build_comparisons` (every comparison is
  judged by the loop every task runs, ``jurist judge pairwise``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from jurist.datasets.pairwise.tables import RecordTable, read_record_table
from jurist.errors import InputError
from jurist.metrics.pairwise.choice_readings import ChoiceReadings, read_choices
from jurist.metrics.pairwise.subeval import (
    LengthBias,
    consistency_stats,
    judgement_counts,
    length_bias,
    length_stats,
    pair_table,
    win_rates,
    win_rates_with_ties,
)
from jurist.signatures.pairwise import Choice, ChoiceRule
from jurist.tasks.pairwise.lengths import token_counter
from jurist.tasks.pairwise.report import OtherReading, PairwiseScores

__all__ = [
    "EXACT_MATCH",
    "FAIL_MESSAGE",
    "PairwiseScores",
    "infer_reference_model",
    "records_from_table",
    "score_records",
    "scores_summary",
    "subeval_records",
]

FAIL_MESSAGE = "Failed to obtain answer via API."
"""What SubEval writes in the judge's column when the judge gave no answer."""
EXACT_MATCH = "EM"
"""What SubEval writes in the judge's column for identical answers (not judged)."""


def records_from_table(
    table: RecordTable | pd.DataFrame, num_options: int = 4, rule: ChoiceRule = "subeval"
) -> pd.DataFrame:
    """Judged records (see :mod:`jurist.metrics.pairwise.subeval`) from a record table.

    The judge's raw answer (column ``judgement``) gives the ``choice`` by
    :func:`~jurist.signatures.pairwise.extract_choice` with ``rule`` (SubEval's published
    rule by default) and the ``status``: ``"EM"`` is an exact match (not judged), a text
    holding SubEval's failure message or an empty text is a failed judgement.
    """
    return _read_records(table, num_options, rule)[0]


def _read_records(
    table: RecordTable | pd.DataFrame, num_options: int, rule: ChoiceRule
) -> tuple[pd.DataFrame, list[Choice | None], ChoiceReadings]:
    """:func:`records_from_table`, the choices by the other rule, and how the answers were read."""
    frame = (table.frame if isinstance(table, RecordTable) else table).copy()
    texts = frame["judgement"].tolist()
    frame["status"] = [
        "exact_match"
        if text == EXACT_MATCH
        else "failed"
        if FAIL_MESSAGE in text or not text.strip()
        else "ok"
        for text in texts
    ]
    ids = [str(value) for value in frame["cmp_index"]] if "cmp_index" in frame.columns else [""] * len(frame)
    lines = [int(value) for value in frame["line"]] if "line" in frame.columns else None
    used, others, readings = read_choices(
        ids,
        texts,
        num_options,
        rule,
        lines=lines,
        skip=[status == "exact_match" for status in frame["status"]],
    )
    frame["choice"] = pd.Series(used, index=frame.index, dtype=object)
    if "task" not in frame.columns:
        frame["task"] = ""
    return frame, others, readings


def infer_reference_model(records: pd.DataFrame) -> str | None:
    """The reference model of SubEval-style records, or ``None`` if it cannot be told.

    It is the one model that takes part in every comparison; with only two models (both
    in every comparison), the one in position 1 of every comparison's first order, as
    SubEval and :func:`~jurist.datasets.pairwise.build_comparisons` list them.
    """
    pairs = pair_table(records)
    if pairs.empty:
        return None
    common = set(pairs["model_1"]) | set(pairs["model_2"])
    for first, second in zip(pairs["model_1"], pairs["model_2"], strict=True):
        common &= {first, second}
    if len(common) == 1:
        return common.pop()
    firsts = set(pairs["model_1"])
    if len(common) == 2 and len(firsts) == 1:
        return firsts.pop()
    return None


def _judged_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Judged records given directly (with ``choice``): add ``index`` from ``cmp_index`` if needed."""
    out = frame.reset_index(drop=True).copy()
    for column in ("A", "B"):
        if column not in out.columns:
            raise InputError(f"judged records need the column '{column}'", path="<DataFrame>", field=column)
    if "index" not in out.columns:
        if "cmp_index" not in out.columns:
            raise InputError("judged records need 'index' or 'cmp_index'", path="<DataFrame>", field="index")
        indexes = []
        for line, (cmp_index, a, b) in enumerate(
            zip(out["cmp_index"], out["A"], out["B"], strict=True), start=1
        ):
            suffix = f";{a};{b}"
            if not str(cmp_index).endswith(suffix):
                raise InputError(
                    f"cmp_index {cmp_index!r} does not end in {suffix!r}",
                    path="<DataFrame>",
                    line=line,
                    field="cmp_index",
                )
            indexes.append(str(cmp_index)[: -len(suffix)])
        out["index"] = indexes
    return out


def score_records(
    source: str | Path | pd.DataFrame | RecordTable,
    *,
    reference_model: str | None = None,
    judge_column: str | None = None,
    judge_name: str | None = None,
    num_options: int | None = None,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    count: Callable[[str], int] | None = None,
    length_unit: str | None = None,
    choice_rule: ChoiceRule = "subeval",
) -> PairwiseScores:
    """Score judged records without calling any model.

    Answers are read by ``choice_rule`` (SubEval's published rule by default, which its
    figures need), never silently: the scores list every choice that rule read from a letter
    beginning a longer word, and when the two rules read some answer differently they carry
    the other rule's figures too (``other_reading``).

    Args:
        source: A SubEval record file (``record_{judge}_{nopt}.tsv``, XLSX, Parquet, ...),
            a DataFrame in that format, a :class:`RecordTable`, or a DataFrame of judged
            records that already has a ``choice`` column (see :mod:`jurist.metrics.pairwise.subeval`;
            ``index`` or ``cmp_index``, ``A``, ``B``, optional ``task``, ``status``,
            ``answer1``, ``answer2``) from any judge.
        reference_model: The reference model; inferred when omitted (see
            :func:`infer_reference_model`); ``None`` after inference means all pairs.
        judge_column: The column holding the judge's answers, if not the only extra one.
        judge_name: The judge's name for records given with ``choice`` (default ``"judge"``).
        num_options: 2, 3 or 4; default from the file name, else 4 (any letter A-D).
        n_resamples: Bootstrap resamples for the confidence intervals (0: none).
        confidence: Confidence level of the intervals.
        seed: Seed of the bootstrap.
        count: How to measure a response's length; default :func:`token_counter`.
        length_unit: Name of ``count``'s unit.
        choice_rule: ``"subeval"`` or ``"strict"`` (see :mod:`jurist.signatures.pairwise`);
            records given with ``choice`` are not read.

    Raises:
        InputError: The input is not a record table or judged records (e.g. a comparison
            occurs twice), or the reference model is not in it.
    """
    others: list[Choice | None] = []
    if isinstance(source, pd.DataFrame) and "choice" in source.columns:
        records = _judged_frame(source)
        judge, where, options = judge_name or "judge", "<DataFrame>", num_options or 4
        readings = ChoiceReadings(choice_rule)
    else:
        table = (
            source
            if isinstance(source, RecordTable)
            else read_record_table(source, judge_column=judge_column)
        )
        options = num_options or table.num_options or 4
        records, others, readings = _read_records(table, options, choice_rule)
        judge, where = judge_name or table.judge, table.source
    try:
        pairs = pair_table(records)
    except ValueError as exc:
        raise InputError(str(exc), path=where) from None
    models = list(dict.fromkeys([*records["A"], *records["B"]]))
    inferred = False
    if reference_model is None:
        reference_model = infer_reference_model(records)
        inferred = reference_model is not None
    elif reference_model not in models:
        raise InputError(
            f"unknown reference model {reference_model!r}; the records compare {models}",
            path=where,
            field="reference_model",
        )
    if count is None:
        count, unit = token_counter()
    else:
        unit = length_unit or "custom units"
    have_answers = {"answer1", "answer2"} <= set(records.columns)
    bootstrap: dict[str, Any] = {"n_resamples": n_resamples, "confidence": confidence, "seed": seed}
    no_bias = LengthBias(0, 0, float("nan"), float("nan"))
    return PairwiseScores(
        judge=judge,
        num_options=options,
        reference_model=reference_model,
        reference_inferred=inferred,
        source=where,
        records=records,
        pairs=pairs,
        counts=judgement_counts(records),
        consistency=consistency_stats(records),
        length_stats=length_stats(records, count)
        if have_answers
        else pd.DataFrame(columns=["model", "mean", "std"]),
        length_unit=unit,
        length_bias=length_bias(records, count, **bootstrap) if have_answers else no_bias,
        win_rates=win_rates(records, **bootstrap),
        win_rates_with_ties=win_rates_with_ties(records, **bootstrap),
        readings=readings,
        other_reading=_other_reading(records, others, readings, bootstrap) if readings.differ else None,
    )


def _other_reading(
    records: pd.DataFrame, others: list[Choice | None], readings: ChoiceReadings, bootstrap: dict[str, Any]
) -> OtherReading:
    """The headline figures of ``records`` with the other rule's choices."""
    other = records.assign(choice=pd.Series(others, index=records.index, dtype=object))
    return OtherReading(
        rule=readings.other,
        counts=judgement_counts(other),
        consistency=consistency_stats(other),
        win_rates=win_rates(other, **bootstrap),
        win_rates_with_ties=win_rates_with_ties(other, **bootstrap),
    )


def scores_summary(scores: PairwiseScores) -> dict[str, Any]:
    """The headline numbers of scored records (what ``jurist score pairwise --json`` prints)."""
    counts, consistency = scores.counts, scores.consistency
    return {
        "judge": scores.judge,
        "num_options": scores.num_options,
        "reference_model": scores.reference_model,
        "comparisons": counts.comparisons,
        "failed": counts.failed,
        "exact_matches": counts.exact_matches,
        "extracted": counts.extracted,
        "extraction_rate": counts.extraction_rate,
        "row_consistency_rate": consistency.row_consistency_rate,
        "consistency_rate": consistency.consistency_rate,
        "first_position_rate": consistency.first_position_rate,
        "length_bias": scores.length_bias.rate,
        "win_rates": scores.win_rates.to_dict(orient="records"),
        "win_rates_with_ties": scores.win_rates_with_ties.to_dict(orient="records"),
        **scores.readings.summary(),
        "other_reading": _other_summary(scores),
    }


def _other_summary(scores: PairwiseScores) -> dict[str, Any] | None:
    """The other rule's headline figures (``other_reading`` of ``--json``), or ``None``."""
    other = scores.other_reading
    if other is None:
        return None
    return {
        "rule": other.rule,
        "extracted": other.counts.extracted,
        "extraction_rate": other.counts.extraction_rate,
        "row_consistency_rate": other.consistency.row_consistency_rate,
        "consistency_rate": other.consistency.consistency_rate,
        "first_position_rate": other.consistency.first_position_rate,
        "win_rates": other.win_rates.to_dict(orient="records"),
        "win_rates_with_ties": other.win_rates_with_ties.to_dict(orient="records"),
    }


def subeval_records(comparisons: pd.DataFrame, texts: Mapping[str, str], judge_name: str) -> pd.DataFrame:
    """SubEval's record table of judged comparisons: its columns plus the judge's, holding each
    comparison's text (``EM`` for identical answers, the failure message for one not judged)."""
    records = comparisons.drop(columns=["index", "order", "exact_match"]).copy()
    records[judge_name] = [
        EXACT_MATCH if exact else texts.get(cmp_index, FAIL_MESSAGE)
        for cmp_index, exact in zip(comparisons["cmp_index"], comparisons["exact_match"], strict=True)
    ]
    return records
