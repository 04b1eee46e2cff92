"""Entity linking metrics: Hits@K, MRR, NIL detection, cross-KB consistency.

A gold record is a mapping with a key (``id``, else ``mention``) and ``gold_kb_id``
(``None`` for a NIL mention, one that has no entry in the knowledge base), or
``is_nil_gold``. A prediction has the same key, ``candidates`` (best first: KB ids or
``{"kb_id": ..., "score": ...}`` mappings) and optionally ``nil`` / ``is_nil_pred``.

Differences from the framework's sample code, on purpose:

- **Predictions are aligned to gold by key.** The sample zipped the NIL lists by
  position (any reordering or missing prediction shifted every later pair) and looked up
  gold by mention text alone (the same name in two texts collided). Here records are
  joined on their key; a duplicated gold key is an error; a gold mention without a
  prediction is reported in ``missing_predictions``.
- **Hits@K is normalised by the mentions it sums over.** The sample summed hits over
  predictions with a non-NIL gold id but divided by *all* gold records (NIL ones and ones
  without a prediction included). Here Hits@K and MRR share one denominator: the non-NIL
  gold mentions; a missing prediction counts as a miss.
- A prediction that answers NIL has no ranking: for a non-NIL gold mention it is a miss
  whatever candidates it also listed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from jurist.metrics.heritage.ner import prf

__all__ = [
    "cross_kb_consistency",
    "linking_accuracy",
    "linking_example_score",
    "mean_reciprocal_rank",
    "nil_detection_metrics",
    "ranked_ids",
]


_LINKED = "\x00linked"  # a non-NIL gold mention whose id was not given (NIL metrics only)


def _key(record: Mapping[str, Any]) -> Any:
    return record["id"] if "id" in record else record["mention"]


def _gold_index(gold: Iterable[Mapping[str, Any]]) -> dict[Any, str | None]:
    index: dict[Any, str | None] = {}
    for record in gold:
        key = _key(record)
        if key in index:
            raise ValueError(f"gold key {key!r} occurs twice; give each mention a unique 'id'")
        if "gold_kb_id" in record:
            index[key] = record["gold_kb_id"] or None
        elif "is_nil_gold" in record:
            index[key] = None if record["is_nil_gold"] else _LINKED
        else:
            raise ValueError(f"gold record {key!r} has neither 'gold_kb_id' nor 'is_nil_gold'")
    return index


def _pred_index(predictions: Iterable[Mapping[str, Any]]) -> dict[Any, Mapping[str, Any]]:
    index: dict[Any, Mapping[str, Any]] = {}
    for record in predictions:
        index.setdefault(_key(record), record)  # a repeated key keeps its first prediction
    return index


def _is_nil(prediction: Mapping[str, Any]) -> bool:
    return bool(prediction.get("nil", prediction.get("is_nil_pred", False)))


def ranked_ids(prediction: Mapping[str, Any] | None) -> list[str]:
    """The candidate KB ids of a prediction, best first, without repeats; empty for NIL."""
    if prediction is None or _is_nil(prediction):
        return []
    seen: list[str] = []
    for candidate in prediction.get("candidates") or []:
        kb_id = candidate["kb_id"] if isinstance(candidate, Mapping) else candidate
        if kb_id not in seen:
            seen.append(str(kb_id))
    return seen


def _ranks(predictions: Iterable[Mapping[str, Any]], gold: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    gold_ids = _gold_index(gold)
    preds = _pred_index(predictions)
    ranks: list[int | None] = []
    missing = 0
    for key, gold_id in gold_ids.items():
        if gold_id is None:
            continue
        if key not in preds:
            missing += 1
        ids = ranked_ids(preds.get(key))
        ranks.append(ids.index(gold_id) + 1 if gold_id in ids else None)
    return {
        "ranks": ranks,
        "missing": missing,
        "nil_gold": sum(v is None for v in gold_ids.values()),
        "unmatched": sum(key not in gold_ids for key in preds),
    }


def linking_accuracy(
    predictions: Iterable[Mapping[str, Any]],
    gold: Iterable[Mapping[str, Any]],
    k_values: Sequence[int] = (1, 5, 10),
) -> dict[str, Any]:
    """Hits@K: the share of non-NIL gold mentions whose gold id is among the top K candidates.

    ``Hits@K = (1/|G|) Σ_{m∈G} [rank_m ≤ K]`` with ``G`` the non-NIL gold mentions and
    ``rank_m`` the 1-based position of the gold id in ``m``'s candidates (∞ when absent,
    when the prediction is NIL, or when ``m`` has no prediction).

    Returns:
        ``hits@K`` per K, ``evaluated = |G|``, ``missing_predictions``, ``nil_gold``
        (NIL mentions left out) and ``unmatched_predictions`` (keys not in gold).
    """
    found = _ranks(predictions, gold)
    ranks = found["ranks"]
    n = len(ranks)
    result: dict[str, Any] = {
        f"hits@{k}": (sum(r is not None and r <= k for r in ranks) / n if n else None) for k in k_values
    }
    result.update(
        evaluated=n,
        missing_predictions=found["missing"],
        nil_gold=found["nil_gold"],
        unmatched_predictions=found["unmatched"],
    )
    return result


def mean_reciprocal_rank(
    predictions: Iterable[Mapping[str, Any]], gold: Iterable[Mapping[str, Any]]
) -> float | None:
    """MRR over the non-NIL gold mentions: ``(1/|G|) Σ_{m∈G} 1/rank_m`` (``1/∞ = 0``).

    Same set ``G`` and ranks as :func:`linking_accuracy`; ``None`` when ``G`` is empty.
    """
    ranks = _ranks(predictions, gold)["ranks"]
    return sum(1.0 / r for r in ranks if r is not None) / len(ranks) if ranks else None


def nil_detection_metrics(
    predictions: Iterable[Mapping[str, Any]], gold: Iterable[Mapping[str, Any]]
) -> dict[str, Any]:
    """Precision, recall and F1 of answering NIL, with NIL as the positive class.

    Over every gold mention ``m`` (joined to its prediction by key): ``TP`` = gold NIL and
    predicted NIL, ``FP`` = gold linked and predicted NIL, ``FN`` = gold NIL and not
    predicted NIL, ``TN`` = neither; ``P = TP/(TP+FP)``, ``R = TP/(TP+FN)``,
    ``F1 = 2PR/(P+R)`` (0 when undefined). A mention without a prediction made no NIL
    claim: it counts as not predicted NIL (and in ``missing_predictions``).
    """
    gold_ids = _gold_index(gold)
    preds = _pred_index(predictions)
    tp = fp = fn = tn = missing = 0
    for key, gold_id in gold_ids.items():
        prediction = preds.get(key)
        missing += prediction is None
        predicted_nil = prediction is not None and _is_nil(prediction)
        gold_nil = gold_id is None
        if gold_nil and predicted_nil:
            tp += 1
        elif predicted_nil:
            fp += 1
        elif gold_nil:
            fn += 1
        else:
            tn += 1
    scores = prf(tp, fp, fn)
    return {
        "nil_precision": scores["precision"],
        "nil_recall": scores["recall"],
        "nil_f1": scores["f1"],
        "true_positives": tp,
        "false_positives": fp,
        "false_negatives": fn,
        "true_negatives": tn,
        "missing_predictions": missing,
    }


def cross_kb_consistency(
    linked_entities: Iterable[Mapping[str, Any]], isil_by_wikidata: Mapping[str, Iterable[str]]
) -> dict[str, Any]:
    """Whether the ISIL codes given with linked Wikidata ids agree with the knowledge base.

    For each entity with both ``wikidata_id`` and ``isil_code``: consistent if the KB lists
    that ISIL for that item, else inconsistent; with only one of them (or another id):
    partial. ``consistency_rate = consistent / (consistent + inconsistent)`` (1.0 when no
    pair was checked), ``coverage_rate = (consistent + partial) / total``. The sample code
    asked Wikidata over the network; this takes the KB's mapping instead.
    """
    consistent = inconsistent = partial = 0
    for entity in linked_entities:
        wikidata, isil = entity.get("wikidata_id"), entity.get("isil_code")
        if wikidata and isil:
            if isil in set(isil_by_wikidata.get(wikidata, ())):
                consistent += 1
            else:
                inconsistent += 1
        elif wikidata or isil or entity.get("gnd_id") or entity.get("viaf_id"):
            partial += 1
    total = consistent + inconsistent + partial
    checked = consistent + inconsistent
    return {
        "consistent": consistent,
        "inconsistent": inconsistent,
        "partial": partial,
        "consistency_rate": consistent / checked if checked else 1.0,
        "coverage_rate": (consistent + partial) / total if total else 0.0,
    }


def linking_example_score(gold_kb_id: str | None, candidates: Sequence[Any], predicted_nil: bool) -> float:
    """The score of one linking decision: the per-example target for optimizing a linker.

    Gold NIL: 1 if the prediction is NIL, else 0. Gold id ``g``: 0 if the prediction is
    NIL, else ``1/rank(g)`` in ``candidates`` (0 when absent), the reciprocal rank, so
    its mean over non-NIL mentions is the MRR.

    >>> linking_example_score("Q2", ["Q1", "Q2"], False)
    0.5
    """
    if gold_kb_id is None:
        return 1.0 if predicted_nil else 0.0
    ids = ranked_ids({"candidates": list(candidates), "nil": predicted_nil})
    return 1.0 / (ids.index(gold_kb_id) + 1) if gold_kb_id in ids else 0.0
