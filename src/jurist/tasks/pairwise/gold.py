"""Pairs judged in both orders, and their agreement with gold preference labels.

- :func:`judged_pairs` groups a run's judgements of pairs in both orders;
- :func:`pairs_agreement` scores pairs judged in both orders against their gold labels,
  per dataset.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from jurist.metrics.annotators import annotator_agreement
from jurist.metrics.gold_agreement import agreement_by_label
from jurist.metrics.pairwise.choice_readings import ChoiceReadings, read_choices
from jurist.metrics.pairwise.subeval import gold_agreement, pair_verdicts
from jurist.signatures.pairwise import ChoiceRule, extract_choice
from jurist.tasks.pairwise.report import PairsAgreement
from jurist.tasks.pairwise.scoring import FAIL_MESSAGE

__all__ = [
    "PairsAgreement",
    "agreement_summary",
    "human_agreement",
    "judged_pairs",
    "pairs_agreement",
]

ORDERS = ("12", "21")
"""The two orders of a pair: response 1 first, then swapped."""


def judged_pairs(
    pairs: pd.DataFrame, texts: Mapping[str, str], num_options: int, rule: ChoiceRule = "subeval"
) -> pd.DataFrame:
    """``pairs`` with both orders' judgements and choices, from the texts of items ``{id}|{order}``.

    An order with no text is a failed judgement (SubEval's failure message, no choice). The
    choices are read by ``rule`` (see :func:`~jurist.signatures.pairwise.extract_choice`).
    """
    judged = pairs.copy()
    for order in ORDERS:
        judged[f"judgement_{order}"] = [
            texts.get(f"{pair_id}|{order}", FAIL_MESSAGE) for pair_id in pairs["id"]
        ]
        judged[f"choice_{order}"] = pd.Series(
            [extract_choice(text, num_options, rule) for text in judged[f"judgement_{order}"]],
            dtype=object,
        )
    judged["gold"] = judged["label"]
    return judged


def pairs_agreement(
    judged_pairs: pd.DataFrame,
    *,
    num_options: int = 2,
    judge_name: str = "judge",
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    choice_rule: ChoiceRule = "subeval",
) -> PairsAgreement:
    """Agreement with gold of pairs judged in both orders (``choice_12``, ``choice_21``, ``gold``).

    Pairs without a gold label are kept in ``judged`` but left out of the agreement. When the
    pairs carry the judge's texts (``judgement_12``, ``judgement_21``, read by
    ``choice_rule``), both orders are read by both rules: the result lists SubEval's-rule
    letters that begin a longer word and, when the rules read some order differently, holds
    the agreement by the other rule too.
    """
    judged = pair_verdicts(judged_pairs)
    labelled = judged[judged["gold"].notna()].reset_index(drop=True)
    agreement = gold_agreement(labelled, n_resamples=n_resamples, confidence=confidence, seed=seed)
    readings, other_agreement = _other_agreement(
        judged_pairs, choice_rule, num_options, n_resamples=n_resamples, confidence=confidence, seed=seed
    )
    tables = []
    for name, group in labelled.groupby("dataset", sort=False):
        complete = group[group["complete"]]
        table = agreement_by_label(list(complete["gold"]), list(complete["verdict"]), confidence=confidence)
        tables.append(table.assign(dataset=name))
    columns = ["dataset", "side", "label", "n", "agreed", "rate", "rate_low", "rate_high"]
    by_label = pd.concat(tables, ignore_index=True)[columns] if tables else pd.DataFrame(columns=columns)
    return PairsAgreement(
        judged=judged,
        agreement=agreement,
        by_label=by_label,
        num_options=num_options,
        judge=judge_name,
        human=human_agreement(judged),
        readings=readings,
        other_agreement=other_agreement,
    )


def _other_agreement(
    pairs: pd.DataFrame, rule: ChoiceRule, num_options: int, **bootstrap: Any
) -> tuple[ChoiceReadings, pd.DataFrame | None]:
    """How both orders' texts read by both rules, and the agreement by the other rule if they differ."""
    if not {"judgement_12", "judgement_21"} <= set(pairs.columns):
        return ChoiceReadings(rule), None
    frame = pairs.reset_index(drop=True)
    ids = [f"{pair_id}|{order}" for pair_id in frame["id"] for order in ORDERS]
    texts = [text for pair in zip(frame["judgement_12"], frame["judgement_21"], strict=True) for text in pair]
    _used, others, readings = read_choices(ids, texts, num_options, rule)
    if not readings.differ:
        return readings, None
    other = frame.assign(
        choice_12=pd.Series(others[0::2], dtype=object), choice_21=pd.Series(others[1::2], dtype=object)
    )
    judged = pair_verdicts(other)
    labelled = judged[judged["gold"].notna()].reset_index(drop=True)
    return readings, gold_agreement(labelled, **bootstrap)


def human_agreement(judged: pd.DataFrame) -> pd.DataFrame | None:
    """Human–human agreement of the annotators, next to the judge's agreement with each of them.

    Per dataset (and ``all`` with several): see
    :func:`~jurist.metrics.annotators.annotator_agreement`, with three options (ties as voted)
    and two (tie votes and tie verdicts left out). Every annotated pair counts, also those whose
    gold was excluded for a split vote. ``None`` when no pair carries annotators' labels.
    """
    if "annotations" not in judged.columns:
        return None
    annotated = judged[[isinstance(votes, list) for votes in judged["annotations"]]]
    if annotated.empty:
        return None
    names = list(dict.fromkeys(annotated["dataset"].astype(str)))
    groups = [(name, annotated[annotated["dataset"].astype(str) == name]) for name in names]
    if len(names) > 1:
        groups.append(("all", annotated))
    rows = []
    for name, group in groups:
        verdicts = [v if isinstance(v, str) else None for v in group["verdict"]]
        rows.append({"dataset": name, **annotator_agreement(list(group["annotations"]), verdicts)})
    return pd.DataFrame(rows)


def agreement_summary(result: PairsAgreement) -> dict[str, Any]:
    """The agreement figures as JSON-ready records (``jurist score pairwise-gold RUN --json``)."""
    return {
        "judge": result.judge,
        "num_options": result.num_options,
        "agreement": result.agreement.to_dict(orient="records"),
        "by_label": result.by_label.to_dict(orient="records"),
        "human_agreement": result.human.to_dict(orient="records") if result.human is not None else None,
        **result.readings.summary(),
        "other_reading": None
        if result.other_agreement is None
        else {"rule": result.readings.other, "agreement": result.other_agreement.to_dict(orient="records")},
    }
