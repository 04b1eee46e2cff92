"""What people look at in a heritage run: the review columns, the plots, and the gold file.

Each sub-task's plots come from its section of the summary (whatever the run scored): entity
P/R/F1 per type (NER), the custodian-type confusion and agreement (classification), Hits@K,
MRR and NIL detection (linking), NDCG/P/R@K (retrieval), ROUGE and grounding (QA), and the
framework's target table as pass/fail gates. The custodian type is the one gold value per
text, so ``heritage-classification`` is the sub-task whose items a person can label.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from jurist.datasets.heritage.gold import HeritageGold, TypeClassification
from jurist.errors import ConfigError
from jurist.metrics.heritage.taxonomy import CUSTODIAN_TYPE_NAMES, CUSTODIAN_TYPES
from jurist.report.figures import Figure
from jurist.report.review import LabelSpec, Review
from jurist.report.standard_figures import bars_figure

__all__ = ["heritage_figures", "heritage_review", "type_gold_rows"]

TYPE_LABEL = LabelSpec(kind="choice", choices=tuple(CUSTODIAN_TYPES))
"""A text's custodian type, one letter of GLAMORCUBESFIXPHDNT."""

_COLUMNS = {
    "ner": ("ner_strict_f1", "ner_partial_f1", "entities"),
    "classification": ("gold_type", "pred_type"),
    "linking": ("linking_score",),
    "qa": ("qa_rougeL", "qa_faithfulness"),
    "retrieval": ("retrieval_ndcg@10",),
}


def heritage_review(tasks: Sequence[str], *, labelled: bool) -> Review:
    """The review columns of a run of ``tasks``: the custodian type when classification ran.

    Args:
        tasks: The sub-tasks of the run.
        labelled: People may label the type (``heritage-classification``); other gold is a
            structure (spans, links, answers) no single label stands for.
    """
    columns = tuple(column for task in tasks for column in _COLUMNS.get(task, ()))
    if "classification" not in tasks:
        return Review(columns=columns)
    return Review(
        verdict="pred_type",
        gold="gold_type",
        agrees="type_agrees",
        label=TYPE_LABEL if labelled else None,
        columns=columns,
    )


def heritage_figures(summary: Mapping[str, Any]) -> list[Figure]:
    """The plots of every sub-task the summary holds, then the target table."""
    found: list[Figure | None] = []
    ner = summary.get("ner") or {}
    if ner:
        found += _ner_figures(ner)
    classification = summary.get("classification") or {}
    if classification:
        found += _classification_figures(classification)
    linking = summary.get("linking") or {}
    if linking:
        found += _linking_figures(linking)
    retrieval = summary.get("retrieval") or {}
    if retrieval:
        found.append(_retrieval_figure(retrieval))
    qa = summary.get("qa") or {}
    if qa:
        found.append(_qa_figure(qa))
    found.append(_targets_figure(summary.get("targets") or []))
    return [figure for figure in found if figure is not None]


def _ner_figures(ner: Mapping[str, Any]) -> list[Figure | None]:
    strict = ner.get("strict") or {}
    per_type = strict.get("per_type") or {}
    bars = [
        {"label": f"{entity_type} {name}", "value": values.get(name), "group": name}
        for entity_type, values in per_type.items()
        for name in ("precision", "recall", "f1")
    ]
    overall = [
        {"label": f"{match} {name}", "value": (ner.get(match) or {}).get(name), "group": match}
        for match in ("strict", "partial")
        for name in ("precision", "recall", "f1")
    ]
    return [
        bars_figure(
            bars,
            title="Entities per type (strict match)",
            ylim=(0.0, 1.0),
            caption=(
                "Precision, recall and F1 of each entity type, a predicted entity counting only with the "
                f"same span and type as a gold one, over {ner.get('texts', 0)} texts "
                f"({strict.get('true_positives', 0)} matches, {strict.get('false_positives', 0)} spurious, "
                f"{strict.get('false_negatives', 0)} missed)."
            ),
        ),
        bars_figure(
            overall,
            title="Entities: strict and partial match",
            ylim=(0.0, 1.0),
            caption=(
                "Micro precision, recall and F1 over all entities: strict needs the exact span and type, "
                "partial an overlapping span of the same type."
            ),
        ),
    ]


def _classification_figures(classification: Mapping[str, Any]) -> list[Figure | None]:
    labels = [str(label) for label in classification.get("labels") or []]
    matrix = classification.get("confusion_matrix") or []
    n = int(classification.get("n") or 0)
    hierarchy = classification.get("hierarchy") or {}
    found: list[Figure | None] = []
    if labels and matrix:
        agreed = sum(matrix[i][i] for i in range(len(labels)))
        names = ", ".join(f"{label} {CUSTODIAN_TYPE_NAMES.get(label, '')}".strip() for label in labels)
        found.append(
            Figure(
                kind="confusion",
                title="Custodian type: judge vs gold",
                data={"labels": labels, "matrix": matrix, "row_title": "gold", "col_title": "judge"},
                caption=(
                    f"Rows: the gold primary type; columns: the judge's; each cell counts texts. "
                    f"{agreed} of {n} texts on the diagonal. Types: {names}."
                ),
            )
        )
    found.append(
        bars_figure(
            [
                {"label": "accuracy", "value": classification.get("accuracy")},
                {"label": "macro F1", "value": classification.get("macro_f1")},
                {"label": "weighted F1", "value": classification.get("weighted_f1")},
                {"label": "category accuracy", "value": hierarchy.get("category_accuracy")},
            ],
            title="Custodian type agreement",
            ylim=(0.0, 1.0),
            caption=(
                f"Over {n} texts: accuracy of the primary type, macro-F1 (every type weighs the same) and "
                "weighted F1 (by gold support), and the accuracy of the type's category (a near miss "
                "within the category counts)."
            ),
        )
    )
    return found


def _linking_figures(linking: Mapping[str, Any]) -> list[Figure | None]:
    hits = sorted(
        (int(key.split("@")[1]), value) for key, value in linking.items() if key.startswith("hits@")
    )
    nil = linking.get("nil") or {}
    bars = [{"label": f"Hits@{k}", "value": value, "group": "ranking"} for k, value in hits]
    bars.append({"label": "MRR", "value": linking.get("mrr"), "group": "ranking"})
    bars += [
        {"label": f"NIL {name}", "value": nil.get(f"nil_{name}"), "group": "NIL"}
        for name in ("precision", "recall", "f1")
    ]
    return [
        bars_figure(
            bars,
            title="Entity linking",
            ylim=(0.0, 1.0),
            caption=(
                f"Hits@K: share of the {linking.get('evaluated', 0)} evaluated mentions whose gold id is "
                "among the first K candidates (a NIL mention counts when the judge says NIL); MRR: mean "
                f"reciprocal rank of the gold id. NIL: detecting the {linking.get('nil_gold', 0)} mentions "
                "that have no knowledge-base entry."
            ),
        )
    ]


def _retrieval_figure(retrieval: Mapping[str, Any]) -> Figure | None:
    bars = []
    for family in ("ndcg", "precision", "recall"):
        cut = sorted(
            (int(key.split("@")[1]), value)
            for key, value in retrieval.items()
            if key.startswith(f"{family}@")
        )
        label = {"ndcg": "NDCG", "precision": "P", "recall": "R"}[family]
        bars += [{"label": f"{label}@{k}", "value": value, "group": label} for k, value in cut]
    bars.append({"label": "MRR", "value": retrieval.get("mrr"), "group": "MRR"})
    return bars_figure(
        bars,
        title="Retrieval",
        ylim=(0.0, 1.0),
        caption=(
            f"The ranking of the gold texts for {retrieval.get('queries', 0)} questions: NDCG@K (graded "
            "relevance, discounted by rank), precision and recall at K, and the mean reciprocal rank of the "
            f"first relevant text; queries without a relevant text: {retrieval.get('empty_queries')}."
        ),
    )


def _qa_figure(qa: Mapping[str, Any]) -> Figure | None:
    return bars_figure(
        [
            {"label": "ROUGE-1", "value": qa.get("rouge1"), "group": "overlap"},
            {"label": "ROUGE-2", "value": qa.get("rouge2"), "group": "overlap"},
            {"label": "ROUGE-L", "value": qa.get("rougeL"), "group": "overlap"},
            {"label": "faithfulness", "value": qa.get("faithfulness"), "group": "grounding"},
            {"label": "factual accuracy", "value": qa.get("factual_accuracy"), "group": "grounding"},
            {"label": "relevance", "value": qa.get("relevance"), "group": "grounding"},
        ],
        title="Question answering",
        ylim=(0.0, 1.0),
        caption=(
            f"Over {qa.get('answers', 0)} answers: ROUGE F against the gold answer, faithfulness (the "
            "answer's content words found in the text) and factual accuracy (the gold supporting facts "
            "the answer states); relevance needs a similarity function and has no bar without one."
        ),
    )


def _targets_figure(targets: Sequence[Mapping[str, Any]]) -> Figure | None:
    measured = [row for row in targets if isinstance(row, Mapping) and row.get("value") is not None]
    if not measured:
        return None
    passed = sum(row.get("status") == "pass" for row in measured)
    return Figure(
        kind="gates",
        title="Targets of the evaluation framework",
        data={
            "gates": [
                {
                    "name": f"{row['task']} {row['metric']}",
                    "value": row["value"],
                    "threshold": row["target"],
                    "op": ">=",
                    "passed": row.get("status") == "pass",
                }
                for row in measured
            ]
        },
        caption=(
            f"Each measured figure against the framework's target (pass when at or above it): {passed} of "
            f"{len(measured)} pass. Rows the run did not measure are left out."
        ),
    )


def type_gold_rows(gold: HeritageGold, labels: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The gold entries with people's custodian types as their primary type.

    Every entry with a type afterwards is kept (with no type in the data: the texts people
    labelled), as a record of the heritage gold format that ``jurist calibrate
    heritage-classification --gold FILE`` reads; a changed type drops the old rationale and
    the new type from the secondary ones.

    Raises:
        ConfigError: A label names no entry, or is not a custodian type.
    """
    known = gold.by_id()
    chosen: dict[str, str] = {}
    for item, value in labels.items():
        if str(item) not in known:
            raise ConfigError(
                f"label for item {item!r}: the gold file has no text with that id", field="labels"
            )
        try:
            chosen[str(item)] = TYPE_LABEL.parse(value)
        except ValueError as exc:
            raise ConfigError(f"label for item {item!r}: {exc}", field="labels") from None
    rows = []
    for entry in gold.entries:
        current = entry.type_classification
        label = chosen.get(entry.id)
        if label is not None and (current is None or current.primary_type != label):
            secondary = [t for t in current.secondary_types if t != label] if current else []
            current = TypeClassification.model_validate({"primary_type": label, "secondary_types": secondary})
        if current is None:
            continue
        rows.append(entry.model_copy(update={"type_classification": current}).model_dump(mode="json"))
    return rows
