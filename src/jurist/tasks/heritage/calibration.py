"""Calibration of the heritage judges against heritage gold, one leaderboard per program.

``jurist calibrate TASK --gold FILE`` with ``TASK`` one of ``heritage-ner``,
``heritage-classification``, ``heritage-linking``, ``heritage-qa`` (the names of
``jurist optimize``) has each judge judge every text of the gold file as ``jurist judge
TASK`` would (an ordinary run of the sub-task's task), into
``OUT/runs/{judge}-{fingerprint}/{dataset}/{subtask}/`` (a rerun reads finished judgments
back); the sub-task's ``calibration`` part (:func:`subtask_calibration`) compares its
outputs with the gold of the texts that carry that kind of gold. The judge extracts the
entity types of the task option ``labels`` (``heritage-ner``; default: the seven heritage
types, and then every gold span counts; with other labels, only gold spans of those types)
and links against the knowledge base of the task option ``kb`` (``heritage-linking``;
default: the bundled subset). One text is one judgment; a text whose judgment failed is
counted in ``failed`` and left out of every figure, never scored. Intervals are percentile
bootstraps over texts (the mentions, spans and questions of one text stay together), with
the resamples, confidence and seed of the calibration. Columns, besides the common
ones (failed rate, tokens, cost, latency per judgment):

- ``heritage-classification``: ``accuracy`` and Cohen's ``kappa`` of the primary type
  over the types in gold or predictions; ``precision_{type}``/``recall_{type}``;
  ``macro_f1`` (:func:`~jurist.metrics.heritage.classification.type_classification_metrics`)
  and ``category_accuracy`` (:func:`~jurist.metrics.heritage.classification.hierarchical_type_metrics`).
- ``heritage-ner``: with ``TP`` the pairs of the maximum one-to-one matching of each text
  (:func:`~jurist.metrics.heritage.ner.match_entities`) summed over texts,
  ``entity_f1 = 2TP / (2TP + FP + FN)`` (strict: same span and type), ``entity_precision
  = TP/(TP+FP)``, ``entity_recall = TP/(TP+FN)``, ``partial_f1`` (overlapping spans of
  the same type); ``precision_{type}``/``recall_{type}`` per entity type (strict).
- ``heritage-linking``: over gold mentions ``M`` (``G`` the non-NIL ones): ``accuracy =
  (1/|M|) Σ [decision right]`` (the gold id ranked first, or NIL for a NIL mention),
  ``hits@1 = (1/|G|) Σ [rank = 1]``, ``mrr = (1/|G|) Σ 1/rank``, ``nil_f1`` with NIL as
  the positive class (:mod:`jurist.metrics.heritage.linking`); ``precision_linked``,
  ``recall_linked`` (= Hits@1), ``precision_NIL``, ``recall_NIL``.
- ``heritage-qa``: ``rouge_l``, the mean ROUGE-L F of the answers against the gold answers
  (:func:`~jurist.metrics.heritage.qa.qa_example_score`), and ``faithfulness``, the mean
  lexical grounding of the answers in their text (:func:`~jurist.metrics.heritage.qa.faithfulness`).

Columns a task does not define (e.g. ``kappa`` of ``heritage-ner``) are n/a, so a gate on
them fails: gate heritage rows with ``--max-failed-rate``, and the type rows with
``--min-accuracy``/``--min-kappa`` (linking rows also with ``--min-accuracy``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from pydantic import BaseModel

from jurist.datasets.heritage.conll import TagDecoding
from jurist.datasets.heritage.gold import HeritageGoldEntry, linking_gold, load_heritage_gold
from jurist.errors import InputError
from jurist.metrics.gold_agreement import agreement_by_label, wilson_interval
from jurist.metrics.heritage.classification import (
    hierarchical_type_metrics,
    ordered_labels,
    type_classification_metrics,
)
from jurist.metrics.heritage.linking import linking_example_score
from jurist.metrics.heritage.ner import match_entities
from jurist.metrics.heritage.qa import faithfulness, qa_example_score
from jurist.metrics.heritage.taxonomy import ENTITY_LABELS
from jurist.schemas import ItemResult
from jurist.signatures.heritage import HeritageOutput
from jurist.tasks._calibration import DATASET, CalibrationPlan, GoldAgreement
from jurist.tasks._contract import Task
from jurist.tasks._results import JudgeRun
from jurist.tasks.calibration_rows import NAN, bootstrap, label_agreement, ratio, run_results

__all__ = ["subtask_calibration"]

_LABEL_COLUMNS = ["side", "label", "n", "agreed", "rate", "rate_low", "rate_high"]
Scored = list[tuple[HeritageGoldEntry, HeritageOutput]]
Measure = Callable[[Scored, dict[str, Any]], tuple[dict[str, Any], pd.DataFrame]]


def _label_rows(counts: Sequence[tuple[str, str, int, int]], confidence: float) -> pd.DataFrame:
    """``(side, label, n, agreed)`` as rows of ``by_label``, with Wilson intervals."""
    rows = []
    for side, label, n, agreed in counts:
        low, high = wilson_interval(agreed, n, confidence)
        rate = agreed / n if n else NAN
        rows.append(dict(zip(_LABEL_COLUMNS, (side, label, n, agreed, rate, low, high), strict=True)))
    return pd.DataFrame(rows, columns=_LABEL_COLUMNS)


def _with_ci(
    name: str, cells: np.ndarray, statistic: Callable[[np.ndarray], np.ndarray], settings: dict[str, Any]
) -> dict[str, float]:
    point, low, high = bootstrap(cells, statistic, settings)
    return {name: point, f"{name}_low": low, f"{name}_high": high}


def _share(numerator: int, *denominator: int) -> Callable[[np.ndarray], np.ndarray]:
    """The statistic ``Σ c[numerator] / Σ_{d ∈ denominator} Σ c[d]`` of per-text counts."""
    return lambda c: ratio(c[:, numerator], c[:, list(denominator)].sum(axis=1))


def _f1(tp: int, fp: int, fn: int) -> Callable[[np.ndarray], np.ndarray]:
    """The statistic ``2TP / (2TP + FP + FN)`` of per-text counts."""
    return lambda c: ratio(2 * c[:, tp], 2 * c[:, tp] + c[:, fp] + c[:, fn])


def _measure_classification(scored: Scored, settings: dict[str, Any]) -> tuple[dict[str, Any], pd.DataFrame]:
    gold: list[str] = []
    pred: list[str] = []
    for entry, output in scored:
        if entry.type_classification is None or output.classification is None:
            raise ValueError(f"text {entry.id!r} has no type to compare")
        gold.append(entry.type_classification.primary_type)
        pred.append(output.classification.primary_type)
    labels = ordered_labels(set(gold) | set(pred))
    row: dict[str, Any] = label_agreement(gold, pred, labels, settings)
    row["macro_f1"] = type_classification_metrics(gold, pred)["macro_f1"] if gold else NAN
    row["category_accuracy"] = hierarchical_type_metrics(gold, pred)["category_accuracy"] if gold else NAN
    return row, agreement_by_label(gold, pred, confidence=settings["confidence"])


def _measure_ner(
    scored: Scored, settings: dict[str, Any], allowed: frozenset[str] | None = None
) -> tuple[dict[str, Any], pd.DataFrame]:
    # Per text: strict TP, FP, FN, then partial TP, FP, FN.
    cells = []
    gold_n: Counter[str] = Counter()
    gold_found: Counter[str] = Counter()
    pred_n: Counter[str] = Counter()
    pred_right: Counter[str] = Counter()
    flagged = 0
    for entry, output in scored:
        gold = [span for span in entry.spans() if allowed is None or span[2] in allowed]
        pred = [(e.start, e.end, e.type) for e in output.entities]
        strict = match_entities(pred, gold)
        partial = match_entities(pred, gold, "partial")
        cells.append(
            [len(strict), len(pred) - len(strict), len(gold) - len(strict)]
            + [len(partial), len(pred) - len(partial), len(gold) - len(partial)]
        )
        matched_pred, matched_gold = {i for i, _ in strict}, {j for _, j in strict}
        for j, span in enumerate(gold):
            gold_n[span[2]] += 1
            gold_found[span[2]] += j in matched_gold
        for i, span in enumerate(pred):
            pred_n[span[2]] += 1
            pred_right[span[2]] += i in matched_pred
        flagged += len(output.flagged_entities)
    counts = np.array(cells, dtype=np.float64).reshape(-1, 6)
    row: dict[str, Any] = {"flagged_entities": flagged}
    row.update(_with_ci("entity_f1", counts, _f1(0, 1, 2), settings))
    row.update(_with_ci("entity_precision", counts, _share(0, 0, 1), settings))
    row.update(_with_ci("entity_recall", counts, _share(0, 0, 2), settings))
    row.update(_with_ci("partial_f1", counts, _f1(3, 4, 5), settings))
    by_label = _label_rows(
        [("gold", label, gold_n[label], gold_found[label]) for label in sorted(gold_n)]
        + [("judge", label, pred_n[label], pred_right[label]) for label in sorted(pred_n)],
        settings["confidence"],
    )
    return row, by_label


_LINK_COUNTS = (
    "linked_gold",  # 0: non-NIL gold mentions
    "hits_1",  # 1: ... whose gold id is ranked first
    "reciprocal_ranks",  # 2: Σ 1/rank over them
    "nil_tp",  # 3: gold NIL, judged NIL
    "nil_fp",  # 4: gold linked, judged NIL
    "nil_fn",  # 5: gold NIL, not judged NIL
    "mentions",  # 6: gold mentions
    "right",  # 7: decisions right (gold id first, or NIL for NIL)
    "linked_decisions",  # 8: mentions the judge linked (not NIL)
    "nil_decisions",  # 9: mentions the judge called NIL
)


def _link_counts(entry: HeritageGoldEntry, output: HeritageOutput) -> list[float]:
    decisions = {decision.id: decision for decision in output.links}
    counts = dict.fromkeys(_LINK_COUNTS, 0.0)
    for gold in linking_gold([entry]):
        decision = decisions.get(gold.id)  # a mention the judge did not answer is no NIL claim
        nil = decision is not None and decision.nil
        ranked = [c.kb_id for c in decision.candidates] if decision is not None else []
        counts["mentions"] += 1
        counts["linked_decisions"] += decision is not None and not nil
        counts["nil_decisions"] += nil
        if gold.is_nil:
            counts["nil_tp" if nil else "nil_fn"] += 1
            counts["right"] += nil
            continue
        reciprocal = linking_example_score(gold.gold_kb_id, ranked, nil)
        counts["linked_gold"] += 1
        counts["hits_1"] += reciprocal == 1.0
        counts["reciprocal_ranks"] += reciprocal
        counts["nil_fp"] += nil
        counts["right"] += reciprocal == 1.0
    return list(counts.values())


def _measure_linking(scored: Scored, settings: dict[str, Any]) -> tuple[dict[str, Any], pd.DataFrame]:
    counts = np.array([_link_counts(entry, output) for entry, output in scored], dtype=np.float64)
    counts = counts.reshape(-1, len(_LINK_COUNTS))
    total = counts.sum(axis=0).astype(int)
    row: dict[str, Any] = {"mentions": int(total[6])}
    row.update(_with_ci("accuracy", counts, _share(7, 6), settings))
    row.update(_with_ci("hits@1", counts, _share(1, 0), settings))
    row.update(_with_ci("mrr", counts, _share(2, 0), settings))
    row.update(_with_ci("nil_f1", counts, _f1(3, 4, 5), settings))
    by_label = _label_rows(
        [
            ("gold", "NIL", int(total[3] + total[5]), int(total[3])),
            ("gold", "linked", int(total[0]), int(total[1])),
            ("judge", "NIL", int(total[9]), int(total[3])),
            ("judge", "linked", int(total[8]), int(total[1])),
        ],
        settings["confidence"],
    )
    return row, by_label


def _measure_qa(scored: Scored, settings: dict[str, Any]) -> tuple[dict[str, Any], pd.DataFrame]:
    # Per text: Σ ROUGE-L F, answers, Σ faithfulness, answers with a faithfulness.
    cells = []
    for entry, output in scored:
        answers = {answer.id: answer for answer in output.answers}
        counts = [0.0, 0.0, 0.0, 0.0]
        for index, pair in enumerate(entry.qa_pairs):
            answer = answers.get(f"{entry.id}#q{index}")
            if answer is None:
                continue
            counts[0] += qa_example_score(answer.answer, pair.answer)
            counts[1] += 1
            grounded = faithfulness(answer.answer, entry.text)
            if grounded is not None:
                counts[2] += grounded
                counts[3] += 1
        cells.append(counts)
    data = np.array(cells, dtype=np.float64).reshape(-1, 4)
    row: dict[str, Any] = {"questions": int(data[:, 1].sum())}
    row.update(_with_ci("rouge_l", data, _share(0, 1), settings))
    total = data.sum(axis=0)
    row["faithfulness"] = total[2] / total[3] if total[3] else NAN
    return row, pd.DataFrame(columns=_LABEL_COLUMNS)


_SUBTASKS: dict[str, tuple[str, Callable[[HeritageGoldEntry], bool], Measure]] = {
    "heritage-classification": (
        "classification",
        lambda entry: entry.type_classification is not None,
        _measure_classification,
    ),
    "heritage-ner": ("ner", lambda entry: True, _measure_ner),
    "heritage-linking": ("linking", lambda entry: bool(entry.entity_linking), _measure_linking),
    "heritage-qa": ("qa", lambda entry: bool(entry.qa_pairs), _measure_qa),
}


def subtask_calibration(
    task: Task,
    options: BaseModel,
    file: Path,
    settings: Mapping[str, Any],
    *,
    labels: Sequence[str] = ENTITY_LABELS,
    tags: TagDecoding | None = None,
) -> CalibrationPlan:
    """What ``jurist calibrate`` judges for one heritage calibration task, and how its run
    compares with gold (see the module docstring).

    Args:
        task: ``heritage-ner``, ``heritage-classification``, ``heritage-linking`` or ``heritage-qa``.
        options: Its options (every text of the gold is judged, whatever their ``split``).
        file: The heritage gold file.
        settings: ``n_resamples``, ``confidence`` and ``seed`` of the intervals.
        labels: The entity types the judge extracts (those of ``options``).
        tags: How a token-tag gold file is decoded (those of ``options``; default: lenient).

    Raises:
        InputError: The gold file is malformed, or no entry carries the sub-task's gold.
    """
    subtask, has_gold, measure = _SUBTASKS[task.name]
    gold = load_heritage_gold(file, tags=tags)
    entries = [entry for entry in gold.entries if has_gold(entry)]
    if not entries:
        raise InputError(f"no entry carries {subtask} gold", path=gold.path)
    if subtask == "ner" and tuple(labels) != ENTITY_LABELS:
        measure = partial(_measure_ner, allowed=frozenset(labels))

    def compare(run: JudgeRun) -> GoldAgreement:
        results: dict[str, ItemResult] = {r.id: r for r in run_results(run.run_dir)}
        judged = [results[entry.id] for entry in entries if entry.id in results]
        scored: Scored = [
            (entry, HeritageOutput.model_validate(results[entry.id].output))
            for entry in entries
            if entry.id in results and results[entry.id].status == "ok"
        ]
        figures, by_label = measure(scored, dict(settings))
        return GoldAgreement(
            items=len(entries),
            failed=len(entries) - len(scored),
            results=judged,
            by_label=by_label,
            figures=figures,
        )

    whole = options.model_copy(update={"split": None, "compare": None})
    return CalibrationPlan(options=whole, compare=compare, folder=f"{DATASET}/{subtask}")
