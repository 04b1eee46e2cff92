"""What people look at in a pairwise run: the review columns, the plots, and the gold file.

Two kinds of run share the task. A **pairs** run (a pairs file, e.g. LLMBar) has one row per
pair: both orders' choices, the two-order ``verdict`` (``1``, ``2`` or ``tie``) and the
``gold`` label; its plots are the confusion of verdict and gold, the agreement per dataset
and the judge's consistency, position bias and length bias. A **SubEval** run has one row
per ordered comparison and no gold; its plots are the win rates against each opponent, the
consistency and biases, and the response lengths per model.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd
from pydantic import BaseModel

from jurist.errors import ConfigError
from jurist.metrics.gold_agreement import wilson_interval
from jurist.report.console import Headline
from jurist.report.figures import Figure
from jurist.report.review import LabelSpec, Review
from jurist.report.standard_figures import bars_figure, is_present
from jurist.tasks._contract import Scores, Task
from jurist.tasks.pairwise.alpaca import alpaca_figures
from jurist.tasks.pairwise.bias import pair_bias
from jurist.tasks.pairwise.run import PairwiseData

__all__ = ["REVIEW", "PairwiseReview", "gold_pairs", "pairs_figures", "subeval_figures", "with_agreement"]

LABELS = ("1", "2", "tie")
"""A pair's gold label: response 1 is better, response 2 is, or neither."""

REVIEW = Review(
    verdict="verdict",
    gold="gold",
    agrees="agrees",
    label=LabelSpec(kind="choice", choices=LABELS),
    columns=("dataset", "choice_12", "choice_21", "consistent"),
)
"""Pairs runs: the two-order verdict against the gold label (a SubEval run has no such columns)."""

GOLD_COLUMNS = ("id", "question", "response_1", "response_2", "reference", "label", "dataset")
"""The columns of a gold pairs file (jurist's pairs shape, read by ``load_pairs``)."""


def with_agreement(judged: pd.DataFrame) -> pd.DataFrame:
    """``judged`` (one row per pair) with ``agrees``: the verdict equals gold, ``None`` unless
    both orders were answered and the pair has a gold label."""
    table = judged.copy()
    if table.empty or "verdict" not in table or "gold" not in table:
        table["agrees"] = pd.Series(dtype=object)
        return table
    table["agrees"] = pd.Series(
        [
            str(verdict) == str(gold) if is_present(verdict) and is_present(gold) else None
            for verdict, gold in zip(table["verdict"], table["gold"], strict=True)
        ],
        index=table.index,
        dtype=object,
    )
    return table


def _settings(options: Any) -> dict[str, Any]:
    return {
        "n_resamples": getattr(options, "resamples", 1000),
        "confidence": 0.95,
        "seed": getattr(options, "seed", 0),
    }


def _rate_bar(label: str, successes: int, n: int, group: str) -> dict[str, Any]:
    """A bar of ``successes / n`` with its Wilson interval (no bar when ``n`` is 0)."""
    if n == 0:
        return {"label": label, "value": None}
    low, high = wilson_interval(successes, n)
    return {"label": label, "value": successes / n, "low": low, "high": high, "group": group}


def pairs_figures(items: pd.DataFrame, summary: Mapping[str, Any], options: Any) -> list[Figure]:
    """Agreement per dataset (accuracy, order accuracy, κ with intervals, from the summary) and
    the consistency, position and length bias of the pairs."""
    found: list[Figure | None] = []
    rows = [row for row in summary.get("agreement") or [] if isinstance(row, Mapping)]
    bars = [
        {
            "label": f"{metric} ({row.get('dataset')})" if len(rows) > 1 else metric,
            "value": row.get(metric),
            "low": row.get(f"{metric}_low"),
            "high": row.get(f"{metric}_high"),
            "group": str(row.get("dataset")),
        }
        for row in rows
        for metric in ("accuracy", "order_accuracy", "kappa")
    ]
    pairs = sum(int(row.get("pairs") or 0) for row in rows if row.get("dataset") != "all")
    found.append(
        bars_figure(
            bars,
            title="Agreement with gold",
            caption=(
                "Accuracy: the two-order verdict (inconsistent = tie) equals gold; order accuracy: "
                "each order's choice equals gold; κ: Cohen's kappa of verdict and gold (0 = chance). "
                f"Whiskers are 95% bootstrap intervals over pairs. {pairs} labelled pairs."
            ),
        )
    )
    if len(items) and {"choice_12", "choice_21", "response_1", "response_2"} <= set(items.columns):
        found.append(_pairs_bias_figure(items, options))
    return [figure for figure in found if figure is not None]


def _pairs_bias_figure(items: pd.DataFrame, options: Any) -> Figure | None:
    answered = [
        is_present(a) and is_present(b) for a, b in zip(items["choice_12"], items["choice_21"], strict=True)
    ]
    complete = items[answered]
    consistent = int(complete["consistent"].astype(bool).sum()) if "consistent" in complete else 0
    judged = items if "gold" in items else items.assign(gold=None)
    bias = pair_bias(judged, _settings(options))
    bars = [
        _rate_bar("consistency", consistent, len(complete), "consistency"),
        {
            "label": "first position picked",
            "value": bias["position_1_rate"],
            "low": bias["position_1_rate_low"],
            "high": bias["position_1_rate_high"],
            "group": "position",
        },
        {
            "label": "longer picked (judge)",
            "value": bias["longer_win_rate"],
            "low": bias["longer_win_rate_low"],
            "high": bias["longer_win_rate_high"],
            "group": "length",
        },
        {"label": "longer preferred (gold)", "value": bias["gold_longer_rate"], "group": "length"},
    ]
    return bars_figure(
        bars,
        title="Consistency, position and length bias",
        ylim=(0.0, 1.0),
        caption=(
            f"Consistency: pairs with the same verdict in both orders ({consistent} of {len(complete)} "
            f"answered in both; Wilson interval). First position: share of the {bias['position_decisive']} "
            "decisive judgments (A or B, both orders) that picked the response shown first; 0.5 is no "
            f"position bias. Longer picked: share of the {bias['length_decisive']} decisive judgments of "
            f"unequal-length pairs (lengths in {bias['length_unit']}) that picked the longer response, "
            f"next to how often gold prefers the longer one ({bias['gold_decisive']} labelled pairs). "
            "Whiskers are 95% bootstrap intervals over pairs."
        ),
    )


def subeval_figures(scores: Any, summary: Mapping[str, Any]) -> list[Figure]:
    """Win rates against each opponent (inconsistent judgements as ties, from the summary), the
    consistency and biases, and the response lengths per model.

    Args:
        scores: The run's :class:`~jurist.tasks.pairwise.report.PairwiseScores` (``None`` when only
            the summary is known: the bias figures then carry no intervals).
        summary: The run's summary.
    """
    found: list[Figure | None] = []
    overall = [
        row
        for row in summary.get("win_rates_with_ties") or []
        if isinstance(row, Mapping) and row.get("metric") == "Overall"
    ]
    found.append(
        bars_figure(
            [
                {
                    "label": f"{row['model']} vs {row['opponent']}",
                    "value": row.get("win_rate_with_tie"),
                    "low": row.get("win_rate_with_tie_low"),
                    "high": row.get("win_rate_with_tie_high"),
                    "group": str(row["model"]),
                }
                for row in overall
            ],
            title="Win rates (ties count half)",
            ylabel="win rate",
            ylim=(0.0, 1.0),
            caption=(
                "Per model and opponent over all tasks: (wins + ties / 2) / comparisons, where a "
                "judgement inconsistent across the two orders counts as a tie (SubEval's new version). "
                f"Whiskers are 95% bootstrap intervals over comparisons. {len(overall)} model pairs."
            ),
        )
    )
    if scores is not None:
        consistency, bias = scores.consistency, scores.length_bias
        inconsistent_picks = consistency.first_position_wins + consistency.second_position_wins
        position = (
            f"First position: of the {inconsistent_picks} judgements of inconsistent comparisons, the "
            "share that picked the response shown first (0.5 is no position bias)."
            if inconsistent_picks
            else "No inconsistent comparison picked a position, so there is no position preference to show."
        )
        bars = [
            _rate_bar("consistency", consistency.consistent_pairs, consistency.complete_pairs, "consistency"),
            {
                "label": "first position (inconsistent)",
                "value": consistency.first_position_rate if inconsistent_picks else None,
                "group": "position",
            },
            {
                "label": "longer picked",
                "value": bias.rate if bias.decisive else None,
                "low": bias.ci_low,
                "high": bias.ci_high,
                "group": "length",
            },
        ]
        found.append(
            bars_figure(
                bars,
                title="Consistency, position and length bias",
                ylim=(0.0, 1.0),
                caption=(
                    f"Consistency: comparisons with the same verdict in both orders "
                    f"({consistency.consistent_pairs} of {consistency.complete_pairs}; Wilson interval). "
                    f"{position} Longer picked: share of the {bias.decisive} decisive judgements (A or B, "
                    f"unequal lengths in {scores.length_unit}) that picked the longer response, with a 95% "
                    "bootstrap interval."
                ),
            )
        )
        lengths = scores.length_stats
        if len(lengths):
            found.append(
                bars_figure(
                    [{"label": row.model, "value": row.mean} for row in lengths.itertuples(index=False)],
                    title=f"Mean response length ({scores.length_unit})",
                    ylabel=scores.length_unit,
                    caption=(
                        f"The mean length of the responses of each of the {len(lengths)} compared models, "
                        f"in {scores.length_unit}: a judge that favours longer responses (see the length "
                        "bias) favours the models with the longest bars."
                    ),
                )
            )
    return [figure for figure in found if figure is not None]


def gold_pairs(pairs: pd.DataFrame, labels: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The rows of a gold pairs file: every pair with a label, a person's label winning over
    the data's (so with no label in the data, the pairs people labelled).

    Rows are in jurist's pairs shape (:data:`GOLD_COLUMNS`), which ``jurist calibrate
    pairwise --gold FILE`` reads as is. Labels are keyed by item id: a pair's id, or one of
    its orders (``ID|12``, ``ID|21``).

    Raises:
        ConfigError: A label names no pair of the data, or the two orders of one pair carry
            different labels.
    """
    known = {str(pair_id) for pair_id in pairs["id"]}
    by_pair: dict[str, str] = {}
    for item, value in labels.items():
        base, _, order = str(item).rpartition("|")
        pair_id = base if order in ("12", "21") and base in known else str(item)
        if pair_id not in known:
            raise ConfigError(f"label for item {item!r}: no pair with that id in the data", field="labels")
        label = str(value)
        if label not in LABELS:
            raise ConfigError(f"label for item {item!r} must be one of {', '.join(LABELS)}; got {value!r}")
        if by_pair.get(pair_id, label) != label:
            raise ConfigError(
                f"pair {pair_id!r} has two labels ({by_pair[pair_id]!r} and {label!r}); keep one",
                field="labels",
            )
        by_pair[pair_id] = label
    rows = []
    for record in pairs.to_dict(orient="records"):
        pair_id = str(record["id"])
        gold = by_pair.get(pair_id, record["label"] if is_present(record["label"]) else None)
        if gold is not None:
            rows.append(
                {column: record.get(column) for column in GOLD_COLUMNS} | {"id": pair_id, "label": gold}
            )
    return rows


class PairwiseReview(Task):
    """The review, figures, headline and gold file of both pairwise tasks (``pairwise``,
    ``pairwise-gold``)."""

    optional_inputs = frozenset({"reference_answer", "evaluating_guidance"})

    def headline(self, summary: Any) -> list[Headline]:
        """Agreement with gold (accuracy and Cohen's κ, with their intervals) and the share of
        comparisons judged the same in both orders, for a run of one pairs file; a SubEval
        run's consistency; nothing for several datasets (their table says it)."""
        if not isinstance(summary, Mapping):
            return []
        agreement = summary.get("agreement")
        if isinstance(agreement, list) and len(agreement) == 1 and isinstance(agreement[0], Mapping):
            figures = agreement[0]
            found = [
                Headline.of(figures, "accuracy"),
                Headline.of(figures, "kappa", "Cohen's κ"),
                Headline.of(figures, "consistency_rate", "consistency"),
            ]
            return [figure for figure in found if figure is not None]
        consistency = Headline.of(summary, "consistency_rate", "consistency")
        return [consistency] if consistency is not None else []

    def review(self, options: BaseModel) -> Review:
        return REVIEW

    def figures(self, scores: Scores, options: BaseModel) -> list[Figure]:
        """Pairs runs: the confusion of verdict and gold, agreement, consistency and biases;
        SubEval runs: win rates, consistency and biases, response lengths; AlpacaEval
        annotations: win rates, length bias and output lengths per model."""
        if "alpaca" in scores.extra:
            return alpaca_figures(scores.extra["alpaca"])
        if "scores" in scores.extra or "win_rates_with_ties" in scores.summary:
            return subeval_figures(scores.extra.get("scores"), scores.summary)
        return super().figures(scores, options) + pairs_figures(scores.items, scores.summary, options)

    def gold_rows(
        self, dataset: PairwiseData, labels: dict[str, Any], options: BaseModel
    ) -> list[dict[str, Any]]:
        """The pairs of a pairs file with their gold labels, people's labels winning
        (:func:`gold_pairs`); a SubEval table has no gold."""
        if dataset.kind != "pairs":
            raise ConfigError(
                "a SubEval table has no gold label per comparison; label a pairs file's run instead",
                field="task",
            )
        return gold_pairs(dataset.frame, labels)
