"""AlpacaEval's leaderboard figures from its preferences, by its own rules (pure functions).

An AlpacaEval annotation compares the baseline's output (``output_1``) with the model's
(``output_2``); its ``preference`` is ``1`` (the baseline is better), ``2`` (the model is),
``0`` or ``1.5`` (a draw), a float in ``[1, 2]`` (a weighted annotator's expected
preference, from log-probabilities), or missing. alpaca_eval's ``get_winrate`` reports:

- ``win_rate``, ``standard_error``, ``n_wins``, ``n_wins_base``, ``n_draws``, ``n_total``
  (its absolute scoring rule, :func:`alpaca_winrate`);
- ``discrete_win_rate`` (its zero-one rule: each preference rounded to a verdict first);

and ``get_length_controlled_winrate`` adds ``length_controlled_winrate`` and
``lc_standard_error`` from a logistic model of the preference on the length difference
(:func:`length_controlled_winrate`, which needs scikit-learn: the extra ``alpacaeval``).
Every rate is in percent, as alpaca_eval reports it.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from jurist.metrics._arrays import ratio
from jurist.metrics.gold_agreement import bootstrap_cis
from jurist.metrics.pairwise.subeval import LengthBias

__all__ = [
    "GLM_CS",
    "GLM_FOLDS",
    "GLM_GAMED_WEIGHT",
    "AlpacaWinRate",
    "GamedAnnotations",
    "LengthControlled",
    "alpaca_bootstrap",
    "alpaca_length_bias",
    "alpaca_winrate",
    "discrete_preferences",
    "length_controlled_winrate",
    "sample_mean_sem",
]

GLM_FOLDS = 5
"""Folds of the cross-validation that picks the GLM's regularization (grouped by annotation)."""
GLM_CS = 10
"""Inverse regularization strengths tried: ``10`` values from ``1e-4`` to ``1e4`` (log-spaced)."""
GLM_GAMED_WEIGHT = 0.2 / 2
"""Sample weight of each length-gamed baseline annotation: alpaca_eval's ``λ = 0.2`` over its
two gamed baselines."""
GLM_SEED = 123
"""The solver's seed, as alpaca_eval sets it."""


@dataclass(frozen=True)
class AlpacaWinRate:
    """The figures of alpaca_eval's ``get_winrate`` (rates in percent).

    Attributes:
        win_rate: ``100 · mean(p − 1)`` over the preferences ``p`` in ``[1, 2]`` (a draw
            ``0`` counts as ``1.5``).
        standard_error: ``100 · s / sqrt(n)`` of the same values, ``s`` their sample standard
            deviation (``n − 1``); NaN below two values.
        n_wins: Those with ``p − 1 > 0.5`` (the model's output preferred).
        n_wins_base: Those with ``p − 1 < 0.5`` (the baseline's preferred).
        n_draws: Preferences exactly ``0`` or ``1.5`` (every given one, even among others
            that are dropped).
        n_total: The preferences in ``[1, 2]`` (``0`` counted as ``1.5``); the others —
            missing, or out of range — are not preferences and are dropped.
        discrete_win_rate: ``win_rate`` after each preference is first rounded to a verdict
            (:func:`discrete_preferences`).
    """

    win_rate: float
    standard_error: float
    n_wins: int
    n_wins_base: int
    n_draws: int
    n_total: int
    discrete_win_rate: float

    def as_dict(self) -> dict[str, float | int]:
        """The figures under alpaca_eval's names."""
        return {
            "win_rate": self.win_rate,
            "standard_error": self.standard_error,
            "n_wins": self.n_wins,
            "n_wins_base": self.n_wins_base,
            "n_draws": self.n_draws,
            "n_total": self.n_total,
            "discrete_win_rate": self.discrete_win_rate,
        }


def _floats(values: Sequence[float | None] | np.ndarray) -> np.ndarray:
    return np.array([math.nan if value is None else float(value) for value in values], dtype=np.float64)


def sample_mean_sem(values: np.ndarray) -> tuple[float, float]:
    """``(mean, s / sqrt(n))`` of the non-NaN ``values``, ``s`` with ``n − 1`` degrees of freedom
    (NaN when undefined: no value for the mean, fewer than two for the standard error)."""
    kept = values[~np.isnan(values)]
    n = kept.size
    mean = float(kept.mean()) if n else math.nan
    sem = float(kept.std(ddof=1) / math.sqrt(n)) if n > 1 else math.nan
    return mean, sem


def _absolute_scores(preferences: np.ndarray) -> np.ndarray:
    """``p − 1`` for the preferences in ``[1, 2]`` (``0`` read as ``1.5``), NaN for the others."""
    values = np.where(preferences == 0.0, 1.5, preferences)
    valid = (values >= 1.0) & (values <= 2.0)
    return np.where(valid, values - 1.0, math.nan)


def discrete_preferences(preferences: Sequence[float | None] | np.ndarray) -> np.ndarray:
    """Each preference as alpaca_eval's zero-one rule reads it: ``1.5`` is a draw (``0``), any
    other value is rounded half to even (``1.4 → 1``, ``1.6 → 2``, ``2.5 → 2``, ``0.4 → 0``);
    a draw ``0`` then counts as ``1.5``, and a value outside ``[1, 2]`` (or missing) is NaN."""
    values = _floats(preferences)
    rounded = np.round(np.where(values == 1.5, 0.0, values))
    rounded = np.where(rounded == 0.0, 1.5, rounded)
    return np.where((rounded >= 1.0) & (rounded <= 2.0), rounded, math.nan)


def alpaca_winrate(preferences: Sequence[float | None] | np.ndarray) -> AlpacaWinRate:
    """alpaca_eval's ``get_winrate`` of the preferences (missing ones as ``None`` or NaN).

    With ``q = p − 1`` over the preferences in ``[1, 2]`` (see :class:`AlpacaWinRate`):
    ``win_rate = 100 · Σq / n``, ``standard_error = 100 · sd(q) / sqrt(n)``,
    ``n_wins = #{q > 0.5}``, ``n_wins_base = #{q < 0.5}``; ``discrete_win_rate`` is the same
    mean over :func:`discrete_preferences`, where a draw counts half.
    """
    values = _floats(preferences)
    scores = _absolute_scores(values)
    kept = scores[~np.isnan(scores)]
    win_rate, sem = sample_mean_sem(kept)
    discrete = discrete_preferences(values) - 1.0
    discrete_rate, _ = sample_mean_sem(discrete)
    return AlpacaWinRate(
        win_rate=win_rate * 100,
        standard_error=sem * 100,
        n_wins=int((kept > 0.5).sum()),
        n_wins_base=int((kept < 0.5).sum()),
        n_draws=int(((values == 1.5) | (values == 0.0)).sum()),
        n_total=int(kept.size),
        discrete_win_rate=discrete_rate * 100,
    )


def alpaca_length_bias(
    preferences: Sequence[float | None] | np.ndarray,
    lengths_1: Sequence[int] | np.ndarray,
    lengths_2: Sequence[int] | np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Per annotation: whether it is decisive and whether it chose the longer output.

    Decisive: a preference in ``[1, 2]`` with a winner (``q > 0.5`` or ``q < 0.5``, as
    :func:`alpaca_winrate` counts wins) and outputs of unequal length; it chose the longer
    output when the winner's output is the longer one — the same rule as the SubEval
    length bias (:func:`jurist.metrics.pairwise.subeval.length_bias`), one annotation a judgement.

    Returns:
        ``(decisive, longer_wins)``: two 0/1 arrays.
    """
    scores = _absolute_scores(_floats(preferences))
    first = np.asarray(lengths_1, dtype=np.float64)
    second = np.asarray(lengths_2, dtype=np.float64)
    has_winner = ~np.isnan(scores) & (scores != 0.5)
    decisive = has_winner & (first != second)
    model_won = scores > 0.5
    longer_wins = decisive & (model_won == (second > first))
    return decisive.astype(np.float64), longer_wins.astype(np.float64)


def alpaca_bootstrap(
    preferences: Sequence[float | None] | np.ndarray,
    lengths_1: Sequence[int] | np.ndarray,
    lengths_2: Sequence[int] | np.ndarray,
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[dict[str, tuple[float, float]], LengthBias]:
    """Percentile bootstrap intervals of ``win_rate`` and ``discrete_win_rate`` (percent), and
    the length bias (:func:`alpaca_length_bias`: ``longer_wins / decisive``) with its interval.

    One resample draws the annotations with replacement (every annotation, dropped ones too,
    so a resample's ``n_total`` varies as it would); each rate is then ``Σ values / Σ kept``
    of the drawn annotations (see :func:`jurist.metrics.gold_agreement.bootstrap_cis`).
    """
    values = _floats(preferences)
    scores = _absolute_scores(values)
    discrete = discrete_preferences(values) - 1.0
    decisive, longer = alpaca_length_bias(values, lengths_1, lengths_2)
    counts = np.column_stack(
        [
            np.nan_to_num(scores),
            (~np.isnan(scores)).astype(np.float64),
            np.nan_to_num(discrete),
            (~np.isnan(discrete)).astype(np.float64),
            longer,
            decisive,
        ]
    ).reshape(-1, 6)
    intervals = bootstrap_cis(
        counts,
        [
            lambda c: 100 * ratio(c[:, 0], c[:, 1]),
            lambda c: 100 * ratio(c[:, 2], c[:, 3]),
            lambda c: ratio(c[:, 4], c[:, 5]),
        ],
        n_resamples=n_resamples,
        confidence=confidence,
        seed=seed,
    )
    bias = LengthBias(
        decisive=int(decisive.sum()),
        longer_wins=int(longer.sum()),
        ci_low=intervals[2][0],
        ci_high=intervals[2][1],
    )
    return {"win_rate": intervals[0], "discrete_win_rate": intervals[1]}, bias


@dataclass(frozen=True)
class GamedAnnotations:
    """The length-gamed baselines' annotations alpaca_eval fits its GLM with (``df_gamed.csv``).

    Attributes:
        std_delta_len: Each annotation's standardised length difference (baseline − model).
        instruction_difficulty: Its instruction's difficulty.
        not_gamed_baseline: Whether it is not a gamed baseline's (weight 1 instead of 0.1).
        preference: Its preference in ``[0, 1]`` (NaN: left out of the fit).
    """

    std_delta_len: np.ndarray
    instruction_difficulty: np.ndarray
    not_gamed_baseline: np.ndarray
    preference: np.ndarray


@dataclass(frozen=True)
class LengthControlled:
    """alpaca_eval's length-controlled win rate and the GLM behind it.

    Attributes:
        length_controlled_winrate: ``100 · mean(ŷ)`` (percent).
        lc_standard_error: ``100 · sd(ŷ) / sqrt(n)`` (percent).
        weights: The GLM's coefficients, under alpaca_eval's (patsy's) feature names.
        regularization: The inverse regularization strength the cross-validation chose
            (``None`` for a model compared with itself: nothing is fitted).
    """

    length_controlled_winrate: float
    lc_standard_error: float
    weights: dict[str, float]
    regularization: float | None


FEATURES = ("np.tanh(std_delta_len)", "instruction_difficulty", "not_gamed_baseline.astype(float)")
"""The GLM's features, named as alpaca_eval's formula names its design-matrix columns."""


def _design(std_delta_len: np.ndarray, difficulty: np.ndarray, not_gamed: np.ndarray) -> np.ndarray:
    return np.column_stack([np.tanh(std_delta_len), difficulty, not_gamed.astype(np.float64)])


def _weighted_log_loss(
    y_true: np.ndarray, y_pred: np.ndarray, true_prob: np.ndarray, true_sample_weight: np.ndarray
) -> float:
    """The CV score (lower is better): ``−mean(w · (t·log q + (1 − t)·log(1 − q)))`` where ``t`` is
    the annotation's preference (``true_prob`` on its label-1 copy, ``1 − true_prob`` on its
    label-0 copy) and ``q`` the predicted probability, clipped to ``[1e-15, 1 − 1e-15]``."""
    labels = np.asarray(y_true)
    prob = np.asarray(true_prob, dtype=np.float64)
    target = np.where(labels == 1, prob, 1.0 - prob)
    predicted = np.clip(np.asarray(y_pred, dtype=np.float64), 1e-15, 1 - 1e-15)
    losses = target * np.log(predicted) + (1 - target) * np.log(1 - predicted)
    return float(-np.mean(losses * np.asarray(true_sample_weight, dtype=np.float64)))


def _l1_settings() -> dict[str, Any]:
    """The L1 penalty in the spelling of the installed scikit-learn (``penalty`` before 1.8)."""
    import sklearn

    major, minor = (int(part) for part in sklearn.__version__.split(".")[:2])
    return {"l1_ratios": (1.0,)} if (major, minor) >= (1, 8) else {"penalty": "l1"}


def _fit(features: np.ndarray, target: np.ndarray, weight: np.ndarray) -> tuple[Any, float]:
    """The cross-validated L1 logistic regression of the probabilities ``target``.

    Each annotation enters twice, as label 1 weighted ``w·t`` and as label 0 weighted
    ``w·(1 − t)`` (so the fit maximises the expected log-likelihood of the preference), the
    two copies kept in one fold (grouped folds); liblinear, no intercept, seed 123; the
    strength is the one of :data:`GLM_CS` with the best mean :func:`_weighted_log_loss`
    over :data:`GLM_FOLDS` folds, then refitted on everything.
    """
    import sklearn
    from sklearn.linear_model import LogisticRegressionCV
    from sklearn.metrics import make_scorer
    from sklearn.model_selection import GroupKFold

    n = len(target)
    doubled = np.concatenate([features, features])
    labels = np.concatenate([np.ones(n, dtype=int), np.zeros(n, dtype=int)])
    prob = np.concatenate([target, 1.0 - target])
    weights = np.concatenate([weight, weight])
    groups = np.concatenate([np.arange(n), np.arange(n)])
    with sklearn.config_context(enable_metadata_routing=True), warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        scorer = make_scorer(
            _weighted_log_loss, response_method="predict_proba", greater_is_better=False
        ).set_score_request(true_prob=True, true_sample_weight=True)
        model = LogisticRegressionCV(
            Cs=GLM_CS,
            cv=GroupKFold(n_splits=GLM_FOLDS),
            scoring=scorer,
            solver="liblinear",
            dual=False,
            fit_intercept=False,
            random_state=GLM_SEED,
            **_l1_settings(),
        )
        model.fit(
            doubled,
            labels,
            sample_weight=prob * weights,
            groups=groups,
            true_prob=prob,
            true_sample_weight=weights,
        )
    return model, float(np.ravel(model.C_)[0])


def length_controlled_winrate(
    preferences: Sequence[float | None] | np.ndarray,
    lengths_1: Sequence[int] | np.ndarray,
    lengths_2: Sequence[int] | np.ndarray,
    difficulty: Sequence[float] | np.ndarray,
    gamed: GamedAnnotations,
    *,
    same_model: bool = False,
) -> LengthControlled:
    """alpaca_eval's ``get_length_controlled_winrate`` (its GLM ``length_controlled_v1``).

    For annotation ``i``: ``d_i = (ℓ1_i − ℓ2_i) / sd(ℓ1 − ℓ2)`` (output lengths in
    characters, ``sd`` with ``n − 1``), target ``t_i = p_i − 1`` (``0`` read as ``1.5``), and
    features ``x_i = (tanh d_i, difficulty_i, 1)``. The gamed baselines' annotations join with
    their own features, target and ``not_gamed_baseline`` (weight 1 when true, else
    :data:`GLM_GAMED_WEIGHT`); annotations without a target are left out of the fit (see
    :func:`_fit` for the fit). The length-controlled win rate is the mean prediction with the
    length difference set to zero, ``ŷ_i = σ(w_difficulty · difficulty_i + w_not_gamed)``,
    over every annotation: ``100 · mean(ŷ)``, with ``100 · sd(ŷ) / sqrt(n)``.

    A model compared with itself (``same_model``) is 50 by construction; nothing is fitted.

    Raises:
        ImportError: scikit-learn is not installed (the extra ``alpacaeval``).
        ValueError: Every length difference is the same (``sd`` is 0), or no annotation has a
            preference.
    """
    values = _floats(preferences)
    n = values.size
    if same_model:
        predicted = np.where(np.isnan(values), math.nan, 0.5)
        mean, sem = sample_mean_sem(predicted)
        return LengthControlled(mean * 100, sem * 100, dict.fromkeys(FEATURES, 0.0), None)
    delta = np.asarray(lengths_1, dtype=np.float64) - np.asarray(lengths_2, dtype=np.float64)
    spread = float(delta.std(ddof=1)) if n > 1 else 0.0
    if not spread > 0:
        raise ValueError(
            "the length-controlled win rate needs length differences that vary (their deviation is 0)"
        )
    target = np.where(values == 0.0, 1.5, values) - 1.0
    difficulties = np.asarray(difficulty, dtype=np.float64)
    own = _design(delta / spread, difficulties, np.ones(n, dtype=bool))
    features = np.vstack(
        [_design(gamed.std_delta_len, gamed.instruction_difficulty, gamed.not_gamed_baseline), own]
    )
    targets = np.concatenate([gamed.preference, target])
    not_gamed = np.concatenate([gamed.not_gamed_baseline.astype(bool), np.ones(n, dtype=bool)])
    weights = np.where(not_gamed, 1.0, GLM_GAMED_WEIGHT)
    kept = ~np.isnan(targets)
    if not kept[-n:].any():
        raise ValueError("no annotation has a preference to fit the length-controlled model with")
    model, strength = _fit(features[kept], targets[kept], weights[kept])
    test = _design(np.zeros(n), difficulties, np.ones(n, dtype=bool))
    predicted = np.asarray(model.predict_proba(test))[:, 1]
    mean, sem = sample_mean_sem(predicted)
    coefficients = np.ravel(model.coef_)
    return LengthControlled(
        length_controlled_winrate=mean * 100,
        lc_standard_error=sem * 100,
        weights={name: float(value) for name, value in zip(FEATURES, coefficients, strict=True)},
        regularization=strength,
    )
