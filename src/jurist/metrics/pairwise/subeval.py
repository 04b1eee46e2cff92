"""Pairwise (SubEval) metrics over judged records: extraction, consistency, win rates, length.

Judged records are a DataFrame with one row per *ordered* comparison, i.e. per question
and per (model in position 1, model in position 2). Every comparison is judged twice, the
second time with the responses swapped, so ``(index, A, B)`` and ``(index, B, A)`` are
the two orders of one comparison. Columns:

- ``index``: the question's id (SubEval's ``index``; ``cmp_index`` is ``index;A;B``).
- ``A``, ``B``: the models whose responses are Response 1 and Response 2.
- ``choice``: the extracted option letter ``"A"``-``"D"``, or ``None`` (not extracted).
- ``task`` (optional): ``{software_design_file}-{metric}``, e.g. ``uml_class-general``;
  several tasks may be joined by ``", "`` as in SubEval.
- ``status`` (optional, default ``"ok"``): ``"failed"`` when the judge gave no answer,
  ``"exact_match"`` when both answers were identical and the comparison was not judged.
- ``answer1``, ``answer2`` (for the length statistics only).

The option letters mean: A = Response 1 wins (is good while Response 2 is not), B =
Response 2 wins, C = both are good (3 and 4 options), D = neither is good (4 options).
A pair of orders is *consistent* when its choices, original order first, are one of
``(A, B)``, ``(B, A)``, ``(C, C)`` or ``(D, D)``.

As in SubEval, an extracted judgement whose other order is missing or was not extracted
counts as consistent in the row-level figures (it has nothing to disagree with); the
pair-level figures count only comparisons with both orders extracted. A rate whose
denominator is zero is NaN (undefined) here; SubEval's own files write 0.0 and jurist's
SubEval-named files do too. A self-comparison (the same model as A and B) is accepted.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from jurist.metrics._arrays import ratio
from jurist.metrics.gold_agreement import bootstrap_ci, kappa_from_confusion

__all__ = [
    "CONSISTENT_PAIRS",
    "ConsistencyStats",
    "JudgementCounts",
    "LengthBias",
    "consistency_stats",
    "consistent_rows",
    "design_file_of",
    "gold_agreement",
    "is_consistent",
    "judgement_counts",
    "length_bias",
    "length_stats",
    "metric_of",
    "pair_table",
    "pair_verdicts",
    "task_list",
    "win_rates",
    "win_rates_with_ties",
]

CONSISTENT_PAIRS: frozenset[tuple[str, str]] = frozenset({("A", "B"), ("B", "A"), ("C", "C"), ("D", "D")})
"""The consistent (original order, swapped order) choices."""

STATUSES = ("ok", "failed", "exact_match")
_LETTERS = ("A", "B", "C", "D")
OVERALL = "Overall"
_OLD_COUNTS = ["win", "lose", "both_good", "both_fail"]
_NEW_COUNTS = ["win", "tie", "total"]


def _share(part: int, whole: int) -> float:
    """``part / whole``, NaN when ``whole`` is 0."""
    return part / whole if whole else float("nan")


def is_consistent(first: str | None, second: str | None) -> bool:
    """Whether the choices in the original and the swapped order agree.

    Examples:
        >>> is_consistent("A", "B"), is_consistent("C", "C"), is_consistent("A", "A")
        (True, True, False)
    """
    return (first, second) in CONSISTENT_PAIRS


def task_list(task: str) -> list[str]:
    """The tasks of a record; SubEval allows several joined by ``", "``.

    Examples:
        >>> task_list("uml_class-general, uml_class-faithfulness")
        ['uml_class-general', 'uml_class-faithfulness']
    """
    return [part.strip() for part in task.split(", ") if part.strip()]


def design_file_of(task: str) -> str:
    """The software-design file of a task ``{file}-{metric}``: the part before the first ``-``.

    Examples:
        >>> design_file_of("UML_sequence-faithfulness")
        'UML_sequence'
    """
    return task.split("-", 1)[0]


def metric_of(task: str) -> str:
    """The metric of a task ``{file}-{metric}``: the part after the last ``-``.

    Examples:
        >>> metric_of("architecture_design-general")
        'general'
    """
    return task.rsplit("-", 1)[-1]


def _is_missing(value: object) -> bool:
    """``None``, NaN or ``pd.NA``: a cell with no value."""
    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))


def _normalize(records: pd.DataFrame) -> pd.DataFrame:
    """A validated copy with columns index, A, B, task, choice, status and a RangeIndex."""
    missing = [column for column in ("index", "A", "B", "choice") if column not in records.columns]
    if missing:
        raise ValueError(f"judged records lack the column(s) {missing}")
    frame = records.reset_index(drop=True).copy()
    for column in ("index", "A", "B"):
        frame[column] = frame[column].astype(str)
    tasks = frame["task"] if "task" in frame.columns else [""] * len(frame)
    frame["task"] = ["" if _is_missing(value) else str(value) for value in tasks]
    choices: list[str | None] = []
    for position, value in enumerate(frame["choice"]):
        if _is_missing(value):
            choices.append(None)
        elif value in _LETTERS:
            choices.append(str(value))
        else:
            raise ValueError(f"record {position}: choice must be A, B, C, D or None, got {value!r}")
    frame["choice"] = pd.Series(choices, dtype=object)
    if "status" not in frame.columns:
        frame["status"] = "ok"
    bad = sorted(set(frame["status"]) - set(STATUSES))
    if bad:
        raise ValueError(f"status must be one of {STATUSES}, got {bad}")
    # A self-comparison (A = B) has both of its orders under one key: it may occur twice.
    occurrence = frame.groupby(["index", "A", "B"], sort=False).cumcount()
    allowed = np.where(frame["A"] == frame["B"], 2, 1)
    duplicated = occurrence.to_numpy() >= allowed
    if duplicated.any():
        first = frame.index[duplicated][0]
        raise ValueError(
            f"record {first}: the comparison {frame.at[first, 'index']};{frame.at[first, 'A']};"
            f"{frame.at[first, 'B']} occurs more than once"
        )
    return frame


def _extracted(frame: pd.DataFrame) -> pd.Series:
    return frame["choice"].notna() & (frame["status"] != "exact_match")


def _cluster_keys(frame: pd.DataFrame) -> list[tuple[str, str, str]]:
    """One key per comparison, shared by both orders: (index, lower model, higher model)."""
    return [(i, min(a, b), max(a, b)) for i, a, b in zip(frame["index"], frame["A"], frame["B"], strict=True)]


@dataclass(frozen=True)
class JudgementCounts:
    """How many ordered comparisons were judged and how many choices were extracted.

    Attributes:
        comparisons: All ordered comparisons (records), both orders counted.
        failed: Comparisons the judge gave no answer for.
        exact_matches: Comparisons of identical answers, not judged.
        judged: ``comparisons − exact_matches`` (SubEval's "non exact matches").
        extracted: Judged comparisons with a valid choice.
    """

    comparisons: int
    failed: int
    exact_matches: int
    judged: int
    extracted: int

    @property
    def extraction_rate(self) -> float:
        """``extracted / judged``; NaN when nothing was judged."""
        return _share(self.extracted, self.judged)


def judgement_counts(records: pd.DataFrame) -> JudgementCounts:
    """Count comparisons, failures, exact matches and extracted choices.

    ``extraction_rate = extracted / (comparisons − exact_matches)``; a failed comparison
    counts as judged but not extracted.
    """
    frame = _normalize(records)
    exact = int((frame["status"] == "exact_match").sum())
    return JudgementCounts(
        comparisons=len(frame),
        failed=int((frame["status"] == "failed").sum()),
        exact_matches=exact,
        judged=len(frame) - exact,
        extracted=int(_extracted(frame).sum()),
    )


def consistent_rows(records: pd.DataFrame) -> pd.Series:
    """Per record: is it an extracted judgement that its swapped order does not contradict?

    A record ``(index, A, B)`` with choice ``x`` is consistent when the record ``(index,
    B, A)`` is missing or not extracted (SubEval's rule), or has a choice ``y`` with
    ``(x, y)`` in :data:`CONSISTENT_PAIRS`. Records that are not extracted are ``False``.

    A self-comparison (``A = B``) is counted as SubEval's ``find_inconsistent`` counts it:
    both orders share one ``cmp_index``, so the swapped lookup finds the last extracted
    choice ``v`` of that ``cmp_index`` and every record of it is consistent exactly when
    ``(v, v)`` is consistent, i.e. ``v`` is C or D.

    Returns:
        A boolean Series aligned with ``records``' rows (RangeIndex positions).
    """
    frame = _normalize(records)
    extracted = _extracted(frame)
    choice_of = {
        (i, a, b): c
        for i, a, b, c, ok in zip(
            frame["index"], frame["A"], frame["B"], frame["choice"], extracted, strict=True
        )
        if ok
    }
    flags = []
    for i, a, b, c, ok in zip(
        frame["index"], frame["A"], frame["B"], frame["choice"], extracted, strict=True
    ):
        if not ok:
            flags.append(False)
            continue
        other = choice_of.get((i, b, a))
        if a == b:  # SubEval looks the swapped cmp_index up and finds the same one: its last choice
            flags.append(is_consistent(other, other))
        else:
            flags.append(other is None or is_consistent(c, other))
    return pd.Series(flags, index=frame.index, dtype=bool)


def pair_table(records: pd.DataFrame) -> pd.DataFrame:
    """One row per comparison with the choices of both orders.

    ``model_1`` is the model in position 1 of the order that comes first in ``records``
    (the original order); ``choice_12`` is the choice in that order and ``choice_21`` the
    choice with the responses swapped (``None`` when missing or not extracted).

    Returns:
        A DataFrame with columns ``index``, ``task``, ``model_1``, ``model_2``,
        ``choice_12``, ``choice_21`` and ``status``: ``"exact_match"`` (not judged),
        ``"consistent"`` or ``"inconsistent"`` (both orders extracted), ``"one_order"``
        (one order extracted) or ``"not_extracted"``.
    """
    frame = _normalize(records)
    extracted = _extracted(frame)
    pairs: dict[tuple[str, str, str], dict[str, object]] = {}
    for key, row, ok in zip(_cluster_keys(frame), frame.itertuples(index=False), extracted, strict=True):
        pair = pairs.get(key)
        if pair is None:
            pair = {
                "index": row.index,
                "task": row.task,
                "model_1": row.A,
                "model_2": row.B,
                "choice_12": None,
                "choice_21": None,
                "exact_match": False,
            }
            pairs[key] = pair
        pair["exact_match"] = bool(pair["exact_match"]) or row.status == "exact_match"
        seen = int(pair.get("_rows", 0))  # type: ignore[call-overload]
        pair["_rows"] = seen + 1
        if ok:
            original = pair["model_1"] == row.A and (row.A != row.B or seen == 0)
            pair["choice_12" if original else "choice_21"] = row.choice
    rows = []
    for pair in pairs.values():
        first, second = pair.pop("choice_12"), pair.pop("choice_21")
        pair.pop("_rows")
        if pair.pop("exact_match"):
            status = "exact_match"
        elif first is not None and second is not None:
            status = "consistent" if is_consistent(first, second) else "inconsistent"  # type: ignore[arg-type]
        elif first is not None or second is not None:
            status = "one_order"
        else:
            status = "not_extracted"
        rows.append({**pair, "choice_12": first, "choice_21": second, "status": status})
    columns = ["index", "task", "model_1", "model_2", "choice_12", "choice_21", "status"]
    return pd.DataFrame(rows, columns=columns)


@dataclass(frozen=True)
class ConsistencyStats:
    """Agreement of the judge with itself when the responses are swapped.

    Attributes:
        extracted_rows: Extracted judgements (records).
        consistent_rows: Extracted judgements that are consistent (see :func:`consistent_rows`).
        complete_pairs: Comparisons with both orders extracted.
        consistent_pairs: Complete comparisons whose two choices are consistent.
        first_position_wins: In inconsistent comparisons, judgements choosing A (Response 1).
        second_position_wins: In inconsistent comparisons, judgements choosing B (Response 2).
    """

    extracted_rows: int
    consistent_rows: int
    complete_pairs: int
    consistent_pairs: int
    first_position_wins: int
    second_position_wins: int

    @property
    def row_consistency_rate(self) -> float:
        """SubEval's consistent rate: ``consistent_rows / extracted_rows``; NaN if none."""
        return _share(self.consistent_rows, self.extracted_rows)

    @property
    def consistency_rate(self) -> float:
        """``consistent_pairs / complete_pairs``; NaN if no comparison has both orders."""
        return _share(self.consistent_pairs, self.complete_pairs)

    @property
    def inconsistent_pairs(self) -> int:
        """``complete_pairs − consistent_pairs``."""
        return self.complete_pairs - self.consistent_pairs

    @property
    def first_position_rate(self) -> float:
        """Position preference: ``first_position_wins / (first_position_wins + second_position_wins)``.

        Over the judgements of inconsistent comparisons only; 0.5 means no preference for
        a position, 1.0 that the judge always picked Response 1 when it contradicted
        itself. NaN when no inconsistent judgement chose A or B.
        """
        return _share(self.first_position_wins, self.first_position_wins + self.second_position_wins)


def consistency_stats(records: pd.DataFrame) -> ConsistencyStats:
    """Consistency of the judge across both orders, and its position preference.

    Row level (as SubEval logs it): ``consistent_rows / extracted_rows``. Pair level:
    ``consistent_pairs / complete_pairs``, where a pair is consistent if its choices
    (original, swapped) are in :data:`CONSISTENT_PAIRS`. Position preference:
    ``first_position_wins / (first_position_wins + second_position_wins)`` over the two
    judgements of every inconsistent pair (e.g. ``(A, A)`` adds two first-position wins).
    """
    rows = consistent_rows(records)
    pairs = pair_table(records)
    complete = pairs[pairs["status"].isin(["consistent", "inconsistent"])]
    inconsistent = complete[complete["status"] == "inconsistent"]
    choices = list(inconsistent["choice_12"]) + list(inconsistent["choice_21"])
    return ConsistencyStats(
        extracted_rows=int(_extracted(_normalize(records)).sum()),
        consistent_rows=int(rows.sum()),
        complete_pairs=len(complete),
        consistent_pairs=int((complete["status"] == "consistent").sum()),
        first_position_wins=choices.count("A"),
        second_position_wins=choices.count("B"),
    )


def _groups(task: str) -> list[tuple[str, str]]:
    """The (kind, name) groups a record with this task belongs to, Overall first."""
    tasks = task_list(task)
    groups = [("overall", OVERALL)]
    for name in sorted({design_file_of(t) for t in tasks} - set(tasks)):
        groups.append(("design_file", name))
    groups.extend(("task", name) for name in sorted(set(tasks)))
    return groups


def _rate_columns(
    table: pd.DataFrame,
    clusters: dict[tuple[Hashable, ...], np.ndarray],
    rates: dict[str, Callable[[np.ndarray], np.ndarray]],
    keys: list[str],
    n_resamples: int,
    confidence: float,
    seed: int,
) -> pd.DataFrame:
    """Add each rate and its bootstrap interval (``{rate}_low``, ``{rate}_high``) to ``table``."""
    for name, rate in rates.items():
        values, lows, highs = [], [], []
        for row in table[keys].itertuples(index=False):
            per_cluster = clusters[tuple(row)]
            values.append(float(rate(per_cluster.sum(axis=0, keepdims=True))[0]))
            low, high = bootstrap_ci(
                per_cluster, rate, n_resamples=n_resamples, confidence=confidence, seed=seed
            )
            lows.append(low)
            highs.append(high)
        table[name] = values
        table[f"{name}_low"] = lows
        table[f"{name}_high"] = highs
    return table


def _win_rate(c: np.ndarray) -> np.ndarray:
    return ratio(c[:, 0], c[:, 0] + c[:, 1])


def _win_both_good_rate(c: np.ndarray) -> np.ndarray:
    return ratio(c[:, 0] + c[:, 2], c[:, 0] + c[:, 2] + c[:, 1])


def _win_half_tie_rate(c: np.ndarray) -> np.ndarray:
    return ratio(c[:, 0] + (c[:, 2] + c[:, 3]) / 2.0, c.sum(axis=1))


def win_rates(
    records: pd.DataFrame,
    reference_model: str | None = None,
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """Old-version (SubEval) win rates over consistent judgements, per group and model pair.

    Every consistent record (see :func:`consistent_rows`) credits its two models: choice
    A is a *win* for the model in position 1 and a *lose* for the other, B the reverse,
    C a *both_good* and D a *both_fail* for both. Counts are summed over records (both
    orders of a consistent pair count twice, which leaves every rate unchanged), for
    each group: ``Overall``, each software-design file and each task. For a model
    against an opponent:

    - ``win_rate = win / (win + lose)`` (the 2-option rate)
    - ``win_both_good_rate = (win + both_good) / (win + both_good + lose)``
    - ``win_half_tie_rate = (win + (both_good + both_fail) / 2) / (win + both_good + both_fail + lose)``

    A self-comparison (a model against itself) is left out: SubEval counts it only in the
    model's own cell, which it never reports. With 2 options the three coincide. A zero
    denominator gives NaN (SubEval's files write 0.0; see :mod:`jurist.tasks.pairwise.report`).
    Each rate has a percentile-bootstrap interval (columns ``{rate}_low``, ``{rate}_high``)
    that resamples comparisons (both orders together).

    Args:
        records: Judged records (see the module docstring).
        reference_model: If given, only rows with this model as the opponent.
        n_resamples: Bootstrap resamples; 0 for no intervals.
        confidence: Confidence level of the intervals.
        seed: Seed of the bootstrap.

    Returns:
        A DataFrame with columns ``group_kind``, ``group``, ``model``, ``opponent``, the
        counts ``win``, ``lose``, ``both_good``, ``both_fail``, ``n`` (their sum), and the
        three rates with their intervals; sorted by group kind, group, model, opponent.
    """
    frame = _normalize(records)
    consistent = consistent_rows(frame)
    credit = {
        "A": ("win", "lose"),
        "B": ("lose", "win"),
        "C": ("both_good", "both_good"),
        "D": ("both_fail", "both_fail"),
    }
    entries = []
    for cluster, row, ok in zip(_cluster_keys(frame), frame.itertuples(index=False), consistent, strict=True):
        if not ok or row.A == row.B:
            continue
        first, second = credit[row.choice]
        for kind, group in _groups(row.task):
            entries.append((kind, group, row.A, row.B, cluster, first))
            entries.append((kind, group, row.B, row.A, cluster, second))
    table = _count_table(
        entries,
        _OLD_COUNTS,
        {
            "win_rate": _win_rate,
            "win_both_good_rate": _win_both_good_rate,
            "win_half_tie_rate": _win_half_tie_rate,
        },
        ["group_kind", "group"],
        reference_model,
        n_resamples=n_resamples,
        confidence=confidence,
        seed=seed,
    )
    table.insert(len(_OLD_COUNTS) + 4, "n", table[_OLD_COUNTS].sum(axis=1).astype(np.int64))
    kind_order = {"overall": 0, "design_file": 1, "task": 2}
    order = table["group_kind"].map(kind_order)
    return (
        table.assign(_order=order)
        .sort_values(["_order", "group", "model", "opponent"])
        .drop(columns="_order")
        .reset_index(drop=True)
    )


def _count_table(
    entries: Sequence[tuple[object, ...]],
    counts: list[str],
    rates: dict[str, Callable[[np.ndarray], np.ndarray]],
    group_columns: list[str],
    reference_model: str | None,
    *,
    n_resamples: int,
    confidence: float,
    seed: int,
) -> pd.DataFrame:
    """Sum one-hot credits per (group, model, opponent) and add rates with intervals.

    Each entry is ``(*groups, model, opponent, cluster, outcome)``; an outcome names one
    of ``counts`` (or none of them); a ``total`` count, if asked for, counts every entry.
    """
    keys = [*group_columns, "model", "opponent"]
    rate_columns = [column for name in rates for column in (name, f"{name}_low", f"{name}_high")]
    long = pd.DataFrame(entries, columns=[*keys, "cluster", "outcome"])
    if reference_model is not None:
        long = long[long["opponent"] == reference_model].reset_index(drop=True)
    if long.empty:
        return pd.DataFrame(columns=[*keys, *counts, *rate_columns])
    credited = [name for name in counts if name != "total"]
    one_hot = pd.DataFrame({name: (long["outcome"] == name).astype(np.int64) for name in credited})
    if "total" in counts:
        one_hot["total"] = 1
    long = pd.concat([long[[*keys, "cluster"]], one_hot[counts]], axis=1)
    per_cluster = long.groupby([*keys, "cluster"], sort=True)[counts].sum()
    levels = list(range(len(keys)))
    clusters = {key: group.to_numpy(dtype=np.float64) for key, group in per_cluster.groupby(level=levels)}
    table = per_cluster.groupby(level=levels).sum().reset_index()
    return _rate_columns(table, clusters, rates, keys, n_resamples, confidence, seed)


def _with_tie_rate(c: np.ndarray) -> np.ndarray:
    return ratio(c[:, 0] + c[:, 1] / 2.0, c[:, 2])


def _without_tie_rate(c: np.ndarray) -> np.ndarray:
    return ratio(c[:, 0], c[:, 2] - c[:, 1])


def win_rates_with_ties(
    records: pd.DataFrame,
    reference_model: str | None = None,
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """New-version (SubEval) win rates: inconsistent judgements count as ties.

    Over all extracted records, grouped by *metric* (the part of the task after its last
    ``-``, pooling the software-design files) plus ``Overall``. A consistent record (see
    :func:`consistent_rows`) credits choice A as a *win* of the model in position 1, B as
    a win of the model in position 2, C as a *tie* for both; an inconsistent record is a
    tie for both. Every record adds 1 to the *total* of both directions; a consistent D
    ("neither is good") is thus in the total but neither a win nor a tie, as in SubEval.
    A self-comparison credits both directions to the one row ``(model, model)``, as
    SubEval's keys do: A or B adds one win and two to the total, C or an inconsistent
    record two ties.

    - ``win_rate_with_tie = (win + tie / 2) / total``
    - ``win_rate_without_tie = win / (total − tie)``

    A zero denominator gives NaN. Intervals as in :func:`win_rates`.

    Returns:
        A DataFrame with columns ``metric``, ``model``, ``opponent``, ``win``, ``tie``,
        ``total`` and both rates with their ``_low``/``_high`` intervals, sorted by
        metric (``Overall`` first), model, opponent.
    """
    frame = _normalize(records)
    extracted = _extracted(frame)
    consistent = consistent_rows(frame)
    entries = []
    for cluster, row, ok, agrees in zip(
        _cluster_keys(frame), frame.itertuples(index=False), extracted, consistent, strict=True
    ):
        if not ok:
            continue
        if not agrees or row.choice == "C":
            first = second = "tie"
        elif row.choice == "A":
            first, second = "win", "none"
        elif row.choice == "B":
            first, second = "none", "win"
        else:
            first = second = "none"
        metrics = [OVERALL, *sorted({metric_of(t) for t in task_list(row.task)})]
        for metric in metrics:
            entries.append((metric, row.A, row.B, cluster, first))
            entries.append((metric, row.B, row.A, cluster, second))
    table = _count_table(
        entries,
        _NEW_COUNTS,
        {"win_rate_with_tie": _with_tie_rate, "win_rate_without_tie": _without_tie_rate},
        ["metric"],
        reference_model,
        n_resamples=n_resamples,
        confidence=confidence,
        seed=seed,
    )
    if not table.empty:
        order = table["metric"].ne(OVERALL)
        table = (
            table.assign(_order=order)
            .sort_values(["_order", "metric", "model", "opponent"])
            .drop(columns="_order")
            .reset_index(drop=True)
        )
    return table


def length_stats(records: pd.DataFrame, count: Callable[[str], int] = len) -> pd.DataFrame:
    """Mean and standard deviation of each model's response length.

    Every record contributes ``count(answer1)`` to model A and ``count(answer2)`` to
    model B (so each answer counts once per order). ``mean = Σ ℓ / n`` and the
    population ``std = sqrt(Σ (ℓ − mean)² / n)``, as SubEval computes them. Models are
    listed in order of first appearance.

    Args:
        records: Judged records with ``answer1`` and ``answer2`` columns.
        count: The length of a text, e.g. its number of tokens; characters by default.
    """
    lengths: dict[str, list[int]] = {}
    for row in records[["A", "B", "answer1", "answer2"]].itertuples(index=False):
        lengths.setdefault(str(row.A), []).append(count(str(row.answer1)))
        lengths.setdefault(str(row.B), []).append(count(str(row.answer2)))
    return pd.DataFrame(
        {
            "model": list(lengths),
            "mean": [float(np.mean(values)) for values in lengths.values()],
            "std": [float(np.std(values)) for values in lengths.values()],
        }
    )


@dataclass(frozen=True)
class LengthBias:
    """How often the judge picks the longer response.

    Attributes:
        decisive: Extracted judgements with choice A or B and answers of unequal length.
        longer_wins: Those of them that chose the longer answer.
        ci_low: Lower bound of the bootstrap interval of ``rate``.
        ci_high: Upper bound.
    """

    decisive: int
    longer_wins: int
    ci_low: float
    ci_high: float

    @property
    def rate(self) -> float:
        """``longer_wins / decisive``; 0.5 is no length bias; NaN if nothing was decisive."""
        return _share(self.longer_wins, self.decisive)


def length_bias(
    records: pd.DataFrame,
    count: Callable[[str], int] = len,
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> LengthBias:
    """Win rate of the longer response: ``longer_wins / decisive``.

    Over every extracted judgement (both orders, consistent or not) whose choice is A or
    B and whose two answers differ in length; C and D say nothing about which is better.
    The interval resamples comparisons (both orders together).
    """
    frame = _normalize(records)
    frame["answer1"] = records["answer1"].to_numpy()
    frame["answer2"] = records["answer2"].to_numpy()
    per_cluster: dict[tuple[str, str, str], list[int]] = {}
    for cluster, row, ok in zip(
        _cluster_keys(frame), frame.itertuples(index=False), _extracted(frame), strict=True
    ):
        if not ok or row.choice not in ("A", "B"):
            continue
        first, second = count(str(row.answer1)), count(str(row.answer2))
        if first == second:
            continue
        longer = "A" if first > second else "B"
        counts = per_cluster.setdefault(cluster, [0, 0])
        counts[0] += int(row.choice == longer)
        counts[1] += 1
    data = np.array(list(per_cluster.values()), dtype=np.float64).reshape(-1, 2)
    low, high = bootstrap_ci(
        data, lambda c: ratio(c[:, 0], c[:, 1]), n_resamples=n_resamples, confidence=confidence, seed=seed
    )
    return LengthBias(
        decisive=int(data[:, 1].sum()), longer_wins=int(data[:, 0].sum()), ci_low=low, ci_high=high
    )


_ORIGINAL = {"A": "1", "B": "2", "C": "tie", "D": "tie"}
_SWAPPED = {"A": "2", "B": "1", "C": "tie", "D": "tie"}
_LABELS = ("1", "2", "tie")


def gold_agreement(
    pairs: pd.DataFrame, *, n_resamples: int = 1000, confidence: float = 0.95, seed: int = 0
) -> pd.DataFrame:
    """Agreement of a judge's two-order verdicts with gold preference labels, per dataset.

    ``pairs`` has one row per comparison with ``gold`` (``"1"``, ``"2"`` or ``"tie"``:
    which response is better), ``choice_12`` (choice with response 1 in position 1),
    ``choice_21`` (choice with the responses swapped) and optionally ``dataset``. A
    choice is mapped back to the original numbering (original order: A→1, B→2; swapped:
    A→2, B→1; C, D→tie). The *verdict* of a comparison with both orders extracted is the
    mapped choice if the orders are consistent, else ``tie`` (inconsistent = tie).

    - ``accuracy = #{verdict = gold} / complete`` over comparisons with both orders
      extracted (an inconsistent comparison is wrong unless gold is a tie)
    - ``order_accuracy = #{mapped choice = gold} / extracted judgements``, both orders
      counted separately (LLMBar's average over the two orders)
    - ``kappa``: Cohen's kappa of verdict against gold over complete comparisons, labels
      ``1``, ``2``, ``tie`` (see :func:`jurist.metrics.gold_agreement.kappa_from_confusion`)
    - ``consistency_rate = consistent / complete``; ``coverage = complete / pairs``
    - ``accuracy_2 = #{verdict = gold} / decisive`` (two-option agreement): over the
      ``decisive`` comparisons whose gold and verdict are both ``1`` or ``2`` (ties on either
      side left out, as MT-Bench's "without tie" agreement); ``accuracy`` is the
      three-option agreement, with ties

    Each of the first three has a percentile-bootstrap interval over comparisons.

    Returns:
        One row per dataset (``"all"`` when there is no ``dataset`` column) and, with
        several datasets, a final ``"all"`` row pooling them.
    """
    frame = pairs.reset_index(drop=True)
    if "dataset" not in frame.columns:
        frame = frame.assign(dataset="all")
    datasets = list(dict.fromkeys(frame["dataset"].astype(str)))
    groups = [(name, frame[frame["dataset"].astype(str) == name]) for name in datasets]
    if len(datasets) > 1:
        groups.append(("all", frame))
    return pd.DataFrame(
        [_agreement_row(name, group, n_resamples, confidence, seed) for name, group in groups]
    )


def pair_verdicts(pairs: pd.DataFrame) -> pd.DataFrame:
    """Map both orders' choices to the original numbering and derive the verdict.

    Returns:
        ``pairs`` with columns ``judged_12``, ``judged_21`` (mapped choices or ``None``),
        ``complete`` (both extracted), ``consistent`` and ``verdict`` (``None`` unless
        complete).
    """
    out = pairs.copy()
    first = [_ORIGINAL.get(c) if isinstance(c, str) else None for c in out["choice_12"]]
    second = [_SWAPPED.get(c) if isinstance(c, str) else None for c in out["choice_21"]]
    out["judged_12"] = pd.Series(first, index=out.index, dtype=object)
    out["judged_21"] = pd.Series(second, index=out.index, dtype=object)
    out["complete"] = [a is not None and b is not None for a, b in zip(first, second, strict=True)]
    out["consistent"] = [
        is_consistent(a, b) if done else False
        for a, b, done in zip(out["choice_12"], out["choice_21"], out["complete"], strict=True)
    ]
    out["verdict"] = pd.Series(
        [
            (a if ok else "tie") if done else None
            for a, ok, done in zip(first, out["consistent"], out["complete"], strict=True)
        ],
        index=out.index,
        dtype=object,
    )
    return out


def _agreement_row(
    name: str, pairs: pd.DataFrame, n_resamples: int, confidence: float, seed: int
) -> dict[str, object]:
    judged = pair_verdicts(pairs)
    gold = [str(g) for g in judged["gold"]]
    bad = sorted(set(gold) - set(_LABELS))
    if bad:
        raise ValueError(f"gold labels must be '1', '2' or 'tie', got {bad}")
    complete = judged["complete"].to_numpy(dtype=bool)
    k = len(_LABELS)
    cells = np.zeros((len(judged), k * k + 4))
    for i, (g, verdict, a, b) in enumerate(
        zip(gold, judged["verdict"], judged["judged_12"], judged["judged_21"], strict=True)
    ):
        if verdict is not None:
            cells[i, _LABELS.index(g) * k + _LABELS.index(verdict)] = 1
        cells[i, k * k] = sum(x is not None and x == g for x in (a, b))
        cells[i, k * k + 1] = sum(x is not None for x in (a, b))
        cells[i, k * k + 2] = float(verdict is not None and verdict == g)
        cells[i, k * k + 3] = float(verdict is not None)

    def pair_accuracy(c: np.ndarray) -> np.ndarray:
        return ratio(c[:, k * k + 2], c[:, k * k + 3])

    def order_accuracy(c: np.ndarray) -> np.ndarray:
        return ratio(c[:, k * k], c[:, k * k + 1])

    def kappa(c: np.ndarray) -> np.ndarray:
        return kappa_from_confusion(c[:, : k * k].reshape(-1, k, k))

    row: dict[str, object] = {
        "dataset": name,
        "pairs": len(judged),
        "complete": int(complete.sum()),
        "coverage": float(complete.mean()) if len(judged) else float("nan"),
        "consistent": int(judged["consistent"].sum()),
        "consistency_rate": float(judged["consistent"].sum() / complete.sum())
        if complete.any()
        else float("nan"),
    }
    decisive = [
        (g, v) for g, v in zip(gold, judged["verdict"], strict=True) if g in ("1", "2") and v in ("1", "2")
    ]
    row["decisive"] = len(decisive)
    row["accuracy_2"] = sum(g == v for g, v in decisive) / len(decisive) if decisive else float("nan")
    total = cells.sum(axis=0, keepdims=True)
    for metric, fn in (("accuracy", pair_accuracy), ("order_accuracy", order_accuracy), ("kappa", kappa)):
        low, high = bootstrap_ci(cells, fn, n_resamples=n_resamples, confidence=confidence, seed=seed)
        row[metric] = float(np.asarray(fn(total))[0])
        row[f"{metric}_low"] = low
        row[f"{metric}_high"] = high
    return row
