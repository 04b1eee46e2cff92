"""Position and length bias of pairs judged in both orders, with bootstrap intervals.

One computation for the calibration leaderboard and the run's figures, so both show the
same numbers: the share of decisive judgments (A or B, both orders) that picked the first
position, and how often the judge (and gold) picked the longer response.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from jurist.metrics.pairwise.subeval import length_bias
from jurist.tasks.calibration_rows import NAN, bootstrap, ratio
from jurist.tasks.pairwise.lengths import token_counter

__all__ = ["pair_bias", "pairwise_records"]


def pairwise_records(judged: pd.DataFrame) -> pd.DataFrame:
    """One record per ordered comparison, in :mod:`jurist.metrics.pairwise.subeval`'s format."""
    rows = []
    for pair in judged.itertuples(index=False):
        for order, first, second, choice in (
            ("12", "response_1", "response_2", pair.choice_12),
            ("21", "response_2", "response_1", pair.choice_21),
        ):
            rows.append(
                {
                    "index": str(pair.id),
                    "A": first,
                    "B": second,
                    "answer1": getattr(pair, first),
                    "answer2": getattr(pair, second),
                    "choice": choice if isinstance(choice, str) else None,
                    "status": "ok" if isinstance(choice, str) else "failed",
                    "order": order,
                }
            )
    return pd.DataFrame(rows, columns=["index", "A", "B", "answer1", "answer2", "choice", "status", "order"])


def pair_bias(judged: pd.DataFrame, settings: dict[str, Any]) -> dict[str, Any]:
    """Position and length bias of pairs judged in both orders.

    - ``position_1_rate`` = first-position picks / decisive judgments (A or B, both orders),
      with a bootstrap interval over pairs; ``position_bias = |position_1_rate − ½|``;
    - ``longer_win_rate``: :func:`jurist.metrics.pairwise.subeval.length_bias` of the pairs' records
      (lengths in ``length_unit``, see :func:`~jurist.tasks.pairwise.lengths.token_counter`);
    - ``gold_longer_rate``: the share of gold labels ``1``/``2`` of unequal-length pairs that
      name the longer response; ``length_bias = longer_win_rate − gold_longer_rate``.

    Args:
        judged: One row per pair with ``id``, ``response_1``, ``response_2``, ``choice_12``,
            ``choice_21`` and ``gold`` (``1``, ``2``, ``tie`` or missing).
        settings: ``n_resamples``, ``confidence`` and ``seed`` of the intervals.
    """
    cells = np.array(
        [
            [sum(c == "A" for c in (a, b)), sum(c in ("A", "B") for c in (a, b))]
            for a, b in zip(judged["choice_12"], judged["choice_21"], strict=True)
        ],
        dtype=np.float64,
    ).reshape(-1, 2)
    rate, low, high = bootstrap(cells, lambda c: ratio(c[:, 0], c[:, 1]), settings)
    found: dict[str, Any] = {
        "position_1_rate": rate,
        "position_1_rate_low": low,
        "position_1_rate_high": high,
        "position_decisive": int(cells[:, 1].sum()),
        "position_bias": abs(rate - 0.5) if not math.isnan(rate) else NAN,
    }
    count, unit = token_counter()
    bias = length_bias(
        pairwise_records(judged), count, n_resamples=settings["n_resamples"], seed=settings["seed"]
    )
    found.update(
        longer_win_rate=bias.rate,
        longer_win_rate_low=bias.ci_low,
        longer_win_rate_high=bias.ci_high,
        length_decisive=bias.decisive,
        length_unit=unit,
    )
    decided = [
        (count(str(r1)) > count(str(r2))) == (g == "1")
        for r1, r2, g in zip(judged["response_1"], judged["response_2"], judged["gold"], strict=True)
        if g in ("1", "2") and count(str(r1)) != count(str(r2))
    ]
    found["gold_longer_rate"] = sum(decided) / len(decided) if decided else NAN
    found["gold_decisive"] = len(decided)
    found["length_bias"] = found["longer_win_rate"] - found["gold_longer_rate"]
    found["length_bias_abs"] = abs(found["length_bias"])
    return found
