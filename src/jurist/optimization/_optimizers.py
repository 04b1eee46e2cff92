"""The DSPy optimizers ``jurist optimize`` runs, with settings small enough to reason about.

- ``bootstrap``: :class:`dspy.BootstrapFewShot`. Runs the judge on training examples and
  keeps as few-shot demos the traces whose score reaches the task's ``demo_threshold``.
- ``mipro``: :class:`dspy.MIPROv2`. Bootstraps demo sets, asks the *prompt model* to
  propose instructions, and searches (with optuna) for the best instruction + demo set
  on a validation split carved out of the training file.
- ``gepa``: :class:`dspy.GEPA`. Evolves the instructions: the *prompt model* reads the
  judge's answers with the metric's textual feedback and proposes better instructions;
  candidates are kept on a Pareto front over the validation split of the training file.

The dev file is never given to an optimizer: MIPRO and GEPA select on ``val_fraction``
of the training examples (split by example group, so both orders of a pairwise
comparison stay together), and dev only measures the result.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Literal

from jurist.errors import ConfigError, install_hint

if TYPE_CHECKING:  # DSPy loads when a program is compiled, not with the optimizers' names
    import dspy

    from jurist.optimization._metric import Tally
    from jurist.optimization._target import Target

OptimizerName = Literal["bootstrap", "mipro", "gepa"]
OPTIMIZERS: tuple[str, ...] = ("bootstrap", "mipro", "gepa")

__all__ = ["OPTIMIZERS", "OptimizerName", "OptimizerSettings", "compile_program", "split_train"]


@dataclass(frozen=True)
class OptimizerSettings:
    """Budget and knobs of an optimization run (each optimizer reads the ones it uses).

    Attributes:
        max_demos: Few-shot demos per predictor (bootstrap, mipro).
        max_rounds: Bootstrap attempts per training example (bootstrap).
        auto: MIPRO's and GEPA's preset budget (``light``, ``medium``, ``heavy``); ``None``
            uses ``num_candidates``/``num_trials`` (mipro) or ``max_metric_calls`` (gepa).
        num_candidates: Instruction and demo-set candidates (mipro, when ``auto`` is None).
        num_trials: Search trials (mipro, when ``auto`` is None).
        max_metric_calls: Budget of program runs (gepa, when ``auto`` is None).
        reflection_minibatch_size: Examples GEPA reflects on per step.
        val_fraction: Share of the training examples held out for MIPRO's and GEPA's
            candidate selection (by group); the rest trains.
        seed: Seed of the split and the optimizers.
        num_threads: Parallel program calls (mipro, gepa); default: the config's concurrency.
    """

    max_demos: int = 4
    max_rounds: int = 1
    auto: Literal["light", "medium", "heavy"] | None = "light"
    num_candidates: int = 6
    num_trials: int = 10
    max_metric_calls: int = 200
    reflection_minibatch_size: int = 3
    val_fraction: float = 0.3
    seed: int = 0
    num_threads: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def split_train(
    examples: Sequence[dspy.Example], val_fraction: float, seed: int
) -> tuple[list[dspy.Example], list[dspy.Example]]:
    """Split training examples into (train, validation) by ``example_group``, seeded.

    At least one group goes to each side when there are two or more groups.

    Raises:
        ConfigError: ``val_fraction`` is not in (0, 1), or there is only one group.
    """
    if not 0.0 < val_fraction < 1.0:
        raise ConfigError(f"val_fraction must be between 0 and 1, got {val_fraction}", field="val_fraction")
    groups = list(dict.fromkeys(example.example_group for example in examples))
    if len(groups) < 2:
        raise ConfigError(
            "the training file needs at least 2 examples (groups) to hold some out for candidate selection"
        )
    random.Random(seed).shuffle(groups)
    n_val = min(len(groups) - 1, max(1, round(len(groups) * val_fraction)))
    held = set(groups[:n_val])
    train = [example for example in examples if example.example_group not in held]
    val = [example for example in examples if example.example_group in held]
    return train, val


def compile_program(
    name: str,
    student: dspy.Module,
    target: Target,
    train: Sequence[dspy.Example],
    *,
    settings: OptimizerSettings,
    tally: Tally,
    prompt_lm: dspy.LM | None,
    task_lm: dspy.LM,
    num_threads: int,
) -> tuple[dspy.Module, dict[str, Any]]:
    """Compile ``student`` (a guarded program) with the named optimizer against the target's
    metric (:func:`~jurist.optimization.task_metric`); the task LM and the DSPy adapter
    (prompt format) must already be set in ``dspy.settings``.

    Returns:
        The compiled program and what was used: ``{"train_examples": n, "val_examples": m}``.

    Raises:
        ConfigError: An unknown optimizer name, or MIPRO without optuna installed.
    """
    import dspy

    from jurist.optimization._metric import target_metric

    examples = list(train)
    failures = len(examples) * max(8, settings.num_candidates + settings.num_trials) + 10
    if name == "bootstrap":
        optimizer = dspy.BootstrapFewShot(
            metric=target_metric(target, tally),
            metric_threshold=target.demo_threshold,
            max_bootstrapped_demos=settings.max_demos,
            max_labeled_demos=0,
            max_rounds=settings.max_rounds,
            max_errors=failures,
        )
        compiled = optimizer.compile(student, trainset=examples)
        return compiled, {"train_examples": len(examples), "val_examples": 0}
    if name not in OPTIMIZERS:
        known = ", ".join(OPTIMIZERS)
        raise ConfigError(f"unknown optimizer {name!r}; use one of {known}", field="optimizer")
    fit, val = split_train(examples, settings.val_fraction, settings.seed)
    used = {"train_examples": len(fit), "val_examples": len(val)}
    if name == "mipro":
        try:
            import optuna  # noqa: F401
        except ImportError:
            raise ConfigError(
                "the mipro optimizer needs the package optuna: " + install_hint("optimize"),
                field="optimizer",
            ) from None
        budget: dict[str, Any] = (
            {"auto": settings.auto}
            if settings.auto
            else {"auto": None, "num_candidates": settings.num_candidates}
        )
        mipro = dspy.MIPROv2(
            metric=target_metric(target, tally),
            prompt_model=prompt_lm or task_lm,
            task_model=task_lm,
            max_bootstrapped_demos=settings.max_demos,
            max_labeled_demos=0,
            num_threads=num_threads,
            max_errors=failures,
            seed=settings.seed,
            metric_threshold=target.demo_threshold,
            verbose=False,
            **budget,
        )
        trials = {} if settings.auto else {"num_trials": settings.num_trials}
        minibatch = len(val) > 35
        compiled = mipro.compile(
            student,
            trainset=fit,
            valset=val,
            minibatch=minibatch,
            minibatch_size=min(35, len(val)),
            **trials,
        )
        return compiled, used
    gepa_budget: dict[str, Any] = (
        {"auto": settings.auto} if settings.auto else {"max_metric_calls": settings.max_metric_calls}
    )
    gepa = dspy.GEPA(
        metric=target_metric(target, tally, feedback=True),
        reflection_lm=prompt_lm or task_lm,
        reflection_minibatch_size=settings.reflection_minibatch_size,
        num_threads=num_threads,
        seed=settings.seed,
        use_merge=False,
        track_stats=False,
        warn_on_score_mismatch=False,
        **gepa_budget,
    )
    return gepa.compile(student, trainset=fit, valset=val), used
