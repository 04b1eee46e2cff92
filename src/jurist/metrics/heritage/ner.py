"""Entity extraction metrics: token-level and entity-level (strict, partial) P/R/F1.

A span is ``(start, end, type)`` with character offsets, ``end`` exclusive; the functions
also accept mappings or objects with ``start``, ``end`` and ``type`` (or ``label``).

Differences from the heritage evaluation framework's sample code, on purpose:

- **Tokens carry their real offsets.** The sample mapped ``text.split()`` tokens to
  spans through a running position ``+= len(token) + 1``, which drifts after any double
  space, tab or newline, and labelled a token only by its first character. Here tokens
  come from :data:`TOKEN_PATTERN` with their true character offsets, and a token takes the
  type of the span it overlaps most (see :func:`token_labels`).
- **Entities are matched within their document, one-to-one, maximally.** The sample
  matched greedily across all documents pooled together, so two entities at the same
  offsets in different texts could match, and a greedy first choice could block a
  later, better match. The corpus functions match per document and add the counts; the
  matching is a maximum bipartite matching (:func:`match_entities`).

**Partial matching here is the framework's, not nervaluate's.** The framework defines a
partial match as overlapping spans *of the same type*, counted as a full match; jurist
matches one-to-one with a maximum matching. nervaluate's ``partial`` scheme ignores the
type, counts an inexact overlap as half a match, and matches greedily in list order. The
two cannot agree by design (different definitions), so both are given:
:func:`entity_level_metrics` (``"partial"``) for the framework's figure and
:func:`nervaluate_metrics` for nervaluate's four schemes, count for count.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

__all__ = [
    "NERVALUATE_SCHEMES",
    "TOKEN_PATTERN",
    "Span",
    "as_span",
    "corpus_entity_level_metrics",
    "corpus_token_level_metrics",
    "entity_example_f1",
    "entity_level_metrics",
    "match_entities",
    "nervaluate_metrics",
    "prf",
    "token_labels",
    "token_level_metrics",
    "token_offsets",
    "type_distribution_analysis",
]

Span = tuple[int, int, str]
MatchType = Literal["strict", "partial"]
NerDocument = tuple[str, Sequence[Any], Sequence[Any]]
"""``(text, gold_spans, pred_spans)`` of one document."""

TOKEN_PATTERN = re.compile(r"\w+|[^\w\s]")
"""A token is a run of word characters or a single other non-space character."""


def as_span(value: Any) -> Span:
    """``(start, end, type)`` from a tuple, a mapping or an object with those fields.

    Raises:
        ValueError: The span has ``end <= start`` or a negative start.
    """
    if isinstance(value, Mapping):
        start, end = value["start"], value["end"]
        label = value["type"] if "type" in value else value["label"]
    elif isinstance(value, tuple | list):
        start, end, label = value
    else:
        start, end = value.start, value.end
        label = getattr(value, "type", None) or value.label
    start, end = int(start), int(end)
    if start < 0 or end <= start:
        raise ValueError(f"span [{start}, {end}) is empty or negative")
    return start, end, str(label)


def prf(tp: int, fp: int, fn: int) -> dict[str, float]:
    """Precision ``tp/(tp+fp)``, recall ``tp/(tp+fn)`` and F1 ``2PR/(P+R)``; 0.0 when undefined."""
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1}


def token_offsets(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of every token of ``text`` (:data:`TOKEN_PATTERN`).

    >>> token_offsets("Het  Rijksmuseum (1800)")
    [(0, 3), (5, 16), (17, 18), (18, 22), (22, 23)]
    """
    return [match.span() for match in TOKEN_PATTERN.finditer(text)]


def token_labels(text: str, spans: Iterable[Any]) -> list[str | None]:
    """The entity type of each token, ``None`` outside every span.

    A token takes the type of the span that shares the most characters with it (at
    least one); on a tie, the span listed first.
    """
    tokens = token_offsets(text)
    parsed = [as_span(span) for span in spans]
    labels: list[str | None] = []
    for start, end in tokens:
        best, best_overlap = None, 0
        for span_start, span_end, label in parsed:
            overlap = min(end, span_end) - max(start, span_start)
            if overlap > best_overlap:
                best, best_overlap = label, overlap
        labels.append(best)
    return labels


def _token_counts(text: str, gold: Iterable[Any], pred: Iterable[Any], counts: dict[str, Counter]) -> None:
    for g, p in zip(token_labels(text, gold), token_labels(text, pred), strict=True):
        if g is not None:
            counts.setdefault(g, Counter())["support"] += 1
            counts[g]["tp" if p == g else "fn"] += 1
        if p is not None:
            counts.setdefault(p, Counter())
            if p != g:
                counts[p]["fp"] += 1


def _report(counts: Mapping[str, Counter], labels: Sequence[str] | None) -> dict[str, Any]:
    names = list(labels) if labels is not None else sorted(counts)
    result: dict[str, Any] = {}
    for name in names:
        c = counts.get(name, Counter())
        result[name] = {
            **prf(c["tp"], c["fp"], c["fn"]),
            "support": c["support"],
            "tp": c["tp"],
            "fp": c["fp"],
            "fn": c["fn"],
        }
    per_type = [result[name] for name in names]
    n = len(per_type)
    result["macro_avg"] = {
        key: (sum(m[key] for m in per_type) / n if n else 0.0) for key in ("precision", "recall", "f1")
    }
    tp = sum(m["tp"] for m in per_type)
    fp = sum(m["fp"] for m in per_type)
    fn = sum(m["fn"] for m in per_type)
    result["micro_avg"] = {**prf(tp, fp, fn), "tp": tp, "fp": fp, "fn": fn}
    return result


def token_level_metrics(
    pred_spans: Iterable[Any], gold_spans: Iterable[Any], text: str, *, labels: Sequence[str] | None = None
) -> dict[str, Any]:
    """Token-level precision, recall and F1 per entity type, macro- and micro-averaged, for one text.

    Each token gets one gold and one predicted type (:func:`token_labels`). For type ``t``:
    ``TP_t`` = tokens with gold ``t`` and predicted ``t``; ``FP_t`` = predicted ``t``, gold
    not ``t``; ``FN_t`` = gold ``t``, predicted not ``t``. ``P_t = TP_t/(TP_t+FP_t)``,
    ``R_t = TP_t/(TP_t+FN_t)``, ``F1_t = 2 P_t R_t/(P_t+R_t)`` (0 when undefined).
    ``macro_avg`` is the unweighted mean over the types (the types seen in gold or
    predictions, or ``labels``); ``micro_avg`` pools the counts of those types.

    Returns:
        ``{type: {precision, recall, f1, support, tp, fp, fn}, "macro_avg": {...},
        "micro_avg": {...}}``; ``support`` counts gold tokens.
    """
    return corpus_token_level_metrics([(text, list(gold_spans), list(pred_spans))], labels=labels)


def corpus_token_level_metrics(
    documents: Iterable[NerDocument], *, labels: Sequence[str] | None = None
) -> dict[str, Any]:
    """:func:`token_level_metrics` over many ``(text, gold_spans, pred_spans)`` documents.

    Token counts are added over documents before P/R/F1 are computed (pooled).
    """
    counts: dict[str, Counter] = {}
    for text, gold, pred in documents:
        _token_counts(text, gold, pred, counts)
    return _report(counts, labels)


def _compatible(pred: Span, gold: Span, match_type: MatchType) -> bool:
    if pred[2] != gold[2]:
        return False
    if match_type == "strict":
        return pred[0] == gold[0] and pred[1] == gold[1]
    if match_type == "partial":
        return pred[0] < gold[1] and gold[0] < pred[1]
    raise ValueError(f"match_type must be 'strict' or 'partial', got {match_type!r}")


def match_entities(
    pred: Sequence[Any], gold: Sequence[Any], match_type: MatchType = "strict"
) -> list[tuple[int, int]]:
    """A maximum one-to-one matching of predicted to gold entities of one document.

    A pair can match if the types are equal and the spans are equal (``strict``) or share
    at least one character (``partial``). Each entity is matched at most once, and the
    number of matched pairs is the largest possible (augmenting paths, Kuhn's algorithm);
    candidates are tried in order of character overlap, so among maximum matchings the
    better-overlapping pairs are preferred.

    Returns:
        ``(pred_index, gold_index)`` pairs, sorted by prediction.
    """
    p_spans = [as_span(span) for span in pred]
    g_spans = [as_span(span) for span in gold]
    options: list[list[int]] = []
    for p in p_spans:
        compatible = [j for j, g in enumerate(g_spans) if _compatible(p, g, match_type)]
        compatible.sort(key=lambda j: -(min(p[1], g_spans[j][1]) - max(p[0], g_spans[j][0])))
        options.append(compatible)
    gold_owner: dict[int, int] = {}

    def augment(i: int, seen: set[int]) -> bool:
        for j in options[i]:
            if j in seen:
                continue
            seen.add(j)
            if j not in gold_owner or augment(gold_owner[j], seen):
                gold_owner[j] = i
                return True
        return False

    for i in range(len(p_spans)):
        augment(i, set())
    return sorted((i, j) for j, i in gold_owner.items())


def _entity_counts(
    pred: Sequence[Any], gold: Sequence[Any], match_type: MatchType, counts: dict[str, Counter]
) -> None:
    p_spans = [as_span(span) for span in pred]
    g_spans = [as_span(span) for span in gold]
    matched = match_entities(p_spans, g_spans, match_type)
    matched_pred = {i for i, _ in matched}
    matched_gold = {j for _, j in matched}
    for j, (_, _, label) in enumerate(g_spans):
        counts.setdefault(label, Counter())["support"] += 1
        counts[label]["tp" if j in matched_gold else "fn"] += 1
    for i, (_, _, label) in enumerate(p_spans):
        if i not in matched_pred:
            counts.setdefault(label, Counter())["fp"] += 1


def entity_level_metrics(
    pred_entities: Sequence[Any],
    gold_entities: Sequence[Any],
    match_type: MatchType = "strict",
    *,
    labels: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Entity-level precision, recall and F1 of one document, overall and per type.

    ``TP`` = matched pairs of a maximum one-to-one matching (:func:`match_entities`),
    ``FP = |pred| - TP``, ``FN = |gold| - TP``; ``P = TP/(TP+FP)``, ``R = TP/(TP+FN)``,
    ``F1 = 2PR/(P+R)`` (0 when undefined). ``strict``: same span and type; ``partial``:
    overlapping spans of the same type, a full match either way.

    Returns:
        ``precision``, ``recall``, ``f1`` (micro over all types), ``true_positives``,
        ``false_positives``, ``false_negatives``, ``match_type``, ``per_type`` (per-type
        P/R/F1 and counts) and ``macro_f1`` (mean F1 over the types).
    """
    return corpus_entity_level_metrics(
        [("", list(gold_entities), list(pred_entities))], match_type, labels=labels
    )


def corpus_entity_level_metrics(
    documents: Iterable[NerDocument],
    match_type: MatchType = "strict",
    *,
    labels: Sequence[str] | None = None,
) -> dict[str, Any]:
    """:func:`entity_level_metrics` over ``(text, gold, pred)`` documents, matched per document.

    Counts are added over documents (micro average); the text is not used.
    """
    counts: dict[str, Counter] = {}
    for _text, gold, pred in documents:
        _entity_counts(pred, gold, match_type, counts)
    report = _report(counts, labels)
    micro = report.pop("micro_avg")
    macro = report.pop("macro_avg")
    return {
        "precision": micro["precision"],
        "recall": micro["recall"],
        "f1": micro["f1"],
        "true_positives": micro["tp"],
        "false_positives": micro["fp"],
        "false_negatives": micro["fn"],
        "match_type": match_type,
        "macro_f1": macro["f1"],
        "per_type": report,
    }


def entity_example_f1(gold: Sequence[Any], pred: Sequence[Any], *, match_type: MatchType = "strict") -> float:
    """Entity-level F1 of one example: the per-example target for optimizing an extractor.

    ``F1 = 2 TP / (|gold| + |pred|)`` with ``TP`` from :func:`match_entities`; 1.0 when both
    are empty (nothing to find, nothing found).

    >>> entity_example_f1([(0, 4, "TOP")], [(0, 4, "TOP"), (5, 9, "TMP")])
    0.6666666666666666
    """
    if not gold and not pred:
        return 1.0
    tp = len(match_entities(pred, gold, match_type))
    return 2 * tp / (len(gold) + len(pred))


def type_distribution_analysis(pred_entities: Iterable[Any], gold_entities: Iterable[Any]) -> dict[str, Any]:
    """How often each entity type is predicted against how often it is in gold.

    Per type: ``predicted``, ``gold``, ``over_prediction = predicted - gold`` and
    ``ratio = predicted / gold`` (``None`` when the type has no gold entity: undefined,
    where the sample code gave infinity, which JSON cannot carry).
    """
    pred_types = Counter(as_span(e)[2] for e in pred_entities)
    gold_types = Counter(as_span(e)[2] for e in gold_entities)
    analysis: dict[str, Any] = {}
    for label in sorted(set(pred_types) | set(gold_types)):
        p, g = pred_types.get(label, 0), gold_types.get(label, 0)
        analysis[label] = {
            "predicted": p,
            "gold": g,
            "over_prediction": p - g,
            "ratio": p / g if g else None,
        }
    return analysis


NERVALUATE_SCHEMES = ("strict", "exact", "partial", "ent_type")
"""nervaluate's evaluation schemes, in the order it reports them."""


def _overlap_percentage(pred: Span, gold: Span) -> float:
    shared = min(pred[1], gold[1]) - max(pred[0], gold[0])
    if shared <= 0:
        return 0.0
    return (shared / (gold[1] - gold[0])) * 100.0


def _nervaluate_counts(
    gold: Sequence[Span], pred: Sequence[Span], scheme: str, min_overlap: float
) -> Counter:
    counts: Counter[str] = Counter()
    taken: set[int] = set()
    for p in pred:
        outcome, chosen = "spurious", None
        best_distance: int | None = None
        for j, g in enumerate(gold):
            if j in taken:
                continue
            same_span = p[0] == g[0] and p[1] == g[1]
            enough = _overlap_percentage(p, g) >= min_overlap
            if scheme in ("strict", "exact"):
                if same_span and (scheme == "exact" or p[2] == g[2]):
                    outcome, chosen = "correct", j
                    break
                if enough and outcome == "spurious":
                    outcome, chosen = "incorrect", j
            elif scheme == "partial":
                if enough and same_span:
                    outcome, chosen = "correct", j
                    break
                if enough and outcome == "spurious":
                    outcome, chosen = "partial", j
            elif enough:  # ent_type
                distance = abs(p[0] - g[0]) + abs(p[1] - g[1])
                if p[2] == g[2]:
                    if best_distance is None or distance < best_distance:
                        outcome, chosen, best_distance = "correct", j, distance
                elif outcome == "spurious":
                    outcome, chosen = "incorrect", j
        counts[outcome] += 1
        if chosen is not None:
            taken.add(chosen)
    counts["missed"] += len(gold) - len(taken)
    return counts


def _nervaluate_figures(counts: Counter, scheme: str) -> dict[str, Any]:
    correct, incorrect, partial = counts["correct"], counts["incorrect"], counts["partial"]
    actual = correct + incorrect + partial + counts["spurious"]
    possible = correct + incorrect + partial + counts["missed"]
    credit = correct + 0.5 * partial if scheme in ("partial", "ent_type") else correct
    precision = credit / actual if actual else 0.0
    recall = credit / possible if possible else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {
        **{key: counts[key] for key in ("correct", "incorrect", "partial", "missed", "spurious")},
        "possible": possible,
        "actual": actual,
        "precision": precision,
        "recall": recall,
        "f1": f1,
    }


def nervaluate_metrics(
    documents: Iterable[NerDocument],
    *,
    labels: Sequence[str] | None = None,
    min_overlap_percentage: float = 1.0,
) -> dict[str, Any]:
    """nervaluate's four schemes (strict, exact, partial, ent_type) over ``(text, gold, pred)`` documents.

    These follow nervaluate (1.x, MUC-style counts) exactly, including its greedy matching,
    so that its published figures can be reproduced; they are *not* the framework's
    partial match (see the module docstring). In each document, predictions are taken in
    list order; each looks at the gold spans not yet taken, in list order. A pair
    *overlaps enough* when ``shared characters / gold length × 100 ≥ min_overlap_percentage``.

    - ``strict``: the first gold span with the same offsets and type is ``correct``;
      failing that, the first that overlaps enough makes the prediction ``incorrect``.
    - ``exact``: as ``strict``, with the type ignored.
    - ``partial``: the type is ignored; the first gold span with the same offsets (and
      enough overlap) is ``correct``, failing that the first that overlaps enough is
      ``partial``.
    - ``ent_type``: among gold spans of the same type that overlap enough, the one with
      the smallest ``|Δstart| + |Δend|`` (the first on a tie) is ``correct``; failing
      that, the first overlapping gold span of another type makes it ``incorrect``.

    The gold span involved is taken; a prediction with none is ``spurious``; gold spans
    never taken are ``missed``. ``actual = COR + INC + PAR + SPU``, ``possible = COR + INC
    + PAR + MIS``; ``P = COR / actual`` and ``R = COR / possible`` for strict and exact,
    ``P = (COR + 0.5 PAR) / actual`` and ``R = (COR + 0.5 PAR) / possible`` for partial
    and ent_type; ``F1 = 2PR/(P+R)``; 0 when undefined. Counts are added over documents.
    Per type, nervaluate keeps only that type's spans on both sides and evaluates again.

    Args:
        documents: ``(text, gold_spans, pred_spans)`` per document (the text is not used).
        labels: Only spans of these types count (nervaluate's ``tags``); default: all.
        min_overlap_percentage: nervaluate's threshold, in [1, 100].

    Returns:
        ``{scheme: {correct, incorrect, partial, missed, spurious, possible, actual,
        precision, recall, f1}}`` for each scheme, and ``per_type: {type: {scheme: ...}}``.
    """
    if not 1.0 <= min_overlap_percentage <= 100.0:
        raise ValueError("min_overlap_percentage must be between 1 and 100")
    keep = set(labels) if labels is not None else None
    docs = []
    for _text, gold, pred in documents:
        g = [span for span in (as_span(x) for x in gold) if keep is None or span[2] in keep]
        p = [span for span in (as_span(x) for x in pred) if keep is None or span[2] in keep]
        docs.append((g, p))
    types = sorted({span[2] for g, p in docs for span in (*g, *p)})
    result: dict[str, Any] = {}
    per_type: dict[str, dict[str, Any]] = {label: {} for label in types}
    for scheme in NERVALUATE_SCHEMES:
        total: Counter[str] = Counter()
        by_type: dict[str, Counter] = {label: Counter() for label in types}
        for g, p in docs:
            total.update(_nervaluate_counts(g, p, scheme, min_overlap_percentage))
            for label in types:
                by_type[label].update(
                    _nervaluate_counts(
                        [s for s in g if s[2] == label],
                        [s for s in p if s[2] == label],
                        scheme,
                        min_overlap_percentage,
                    )
                )
        result[scheme] = _nervaluate_figures(total, scheme)
        for label in types:
            per_type[label][scheme] = _nervaluate_figures(by_type[label], scheme)
    result["per_type"] = per_type
    return result
