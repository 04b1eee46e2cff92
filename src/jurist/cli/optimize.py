"""``jurist optimize TASK``: compile a judge against gold labels into a versioned artifact."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from jurist.cli import app
from jurist.cli.options import with_judge_options
from jurist.cli.verbs import (
    TASK_ARGS,
    TASK_OPTIONS,
    MlflowExperimentOpt,
    MlflowOpt,
    MlflowUriOpt,
    TaskArgs,
    task_and_arguments,
)
from jurist.errors import ConfigError
from jurist.optimization import OPTIMIZERS

if TYPE_CHECKING:
    from jurist.judges.config import JudgeConfig
    from jurist.optimization import OptimizeResult


def _score(result: OptimizeResult, name: str) -> str:
    score = result.artifact.scores.get(name)
    if score is None:
        return "n/a"
    value = "n/a" if score.score is None else f"{score.score:.3f}"
    failed = f", {score.failed} failed" if score.failed else ""
    return f"{value} ({score.scored}/{score.examples} scored{failed})"


def optimize_summary(result: OptimizeResult) -> str:
    """The lines ``jurist optimize`` prints: scores before and after, and what compilation did."""
    artifact = result.artifact
    compiled = artifact.compile
    metric = next(iter(artifact.scores.values())).metric
    lines = [
        f"{artifact.task} · {artifact.optimizer['name']} · {artifact.judge_config.get('model')}",
        f"  {metric} on dev:  before {_score(result, 'dev_before')}  after {_score(result, 'dev_after')}",
    ]
    if "test_before" in artifact.scores:
        before, after = _score(result, "test_before"), _score(result, "test_after")
        lines.append(f"  {metric} on test: before {before}  after {after}")
    demos = sum(len(state.get("demos", [])) for state in artifact.program.values())
    lines.append(
        f"  compiled on {compiled.get('train_examples')} train examples "
        f"({compiled.get('val_examples')} held out for selection) in {compiled.get('seconds')} s: "
        f"{compiled.get('program_calls')} judge calls, {compiled.get('failed_calls')} failed, "
        f"{compiled.get('unusable_answers')} unusable; {demos} demo(s) in the program"
    )
    lines.append(f"artifact: {result.path}")
    return "\n".join(lines)


@app.command("optimize", context_settings=TASK_ARGS, epilog=TASK_OPTIONS)
@with_judge_options(target="judge", exclude=("program",))
def optimize_command(
    judge: JudgeConfig,
    train: Annotated[Path, typer.Option(help="Gold examples to compile on (sample:NAME allowed).")],
    dev: Annotated[Path, typer.Option(help="Held-out gold examples, scored before and after.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="The artifact file to write (JSON).")],
    optimizer: Annotated[str, typer.Option(help=f"One of {', '.join(OPTIMIZERS)}.")] = "bootstrap",
    test: Annotated[
        Path | None, typer.Option(help="Held-out gold examples for the final report only.")
    ] = None,
    prompt_config: Annotated[
        Path | None,
        typer.Option(help="Config of the LM that proposes instructions (mipro, gepa); default: the judge's."),
    ] = None,
    max_demos: Annotated[int, typer.Option(min=0, help="Few-shot demos per predictor.")] = 4,
    auto: Annotated[
        str, typer.Option(help="mipro/gepa budget: light, medium, heavy, or off (then the counts below).")
    ] = "light",
    candidates: Annotated[int, typer.Option(min=1, help="mipro with --auto off: candidates.")] = 6,
    trials: Annotated[int, typer.Option(min=1, help="mipro with --auto off: search trials.")] = 10,
    max_metric_calls: Annotated[int, typer.Option(min=1, help="gepa with --auto off: program runs.")] = 200,
    val_fraction: Annotated[
        float, typer.Option(help="mipro/gepa: share of train held out for candidate selection.")
    ] = 0.3,
    seed: Annotated[int, typer.Option(help="Seed of the split and the optimizer.")] = 0,
    mlflow: MlflowOpt = None,
    mlflow_uri: MlflowUriOpt = None,
    mlflow_experiment: MlflowExperimentOpt = None,
    arguments: TaskArgs = None,
) -> None:
    """Optimize a judge's prompt against gold labels; write an artifact `jurist judge --program` runs.

    Prints the dev score before and after (stdout); the optimizer's progress goes to stderr.

    jurist optimize TASK --train FILE --dev FILE --out ARTIFACT --config JUDGE [task options]
    """
    from jurist.optimization import OptimizerSettings
    from jurist.tracking import Tracking
    from jurist.verbs import optimize

    task, _, values = task_and_arguments(arguments, (), "optimize")
    if auto not in ("light", "medium", "heavy", "off"):
        raise ConfigError(f"--auto must be light, medium, heavy or off, got {auto!r}", field="auto")
    tracking = Tracking.from_options(
        enabled=mlflow, tracking_uri=mlflow_uri, experiment=mlflow_experiment, configs=[judge]
    )
    settings = OptimizerSettings(
        max_demos=max_demos,
        auto=None if auto == "off" else auto,  # type: ignore[arg-type]
        num_candidates=candidates,
        num_trials=trials,
        max_metric_calls=max_metric_calls,
        val_fraction=val_fraction,
        seed=seed,
    )
    # The optimizers print their progress (DSPy's "Bootstrapped N full traces ..."): it goes to
    # stderr with the progress bars, so stdout holds only the summary below.
    with contextlib.redirect_stdout(sys.stderr):
        result = optimize(
            task,
            train,
            dev,
            judge,
            out=out,
            optimizer=optimizer,
            test=test,
            prompt_config=prompt_config,
            settings=settings,
            options=values,
        )
    typer.echo(optimize_summary(result))
    if tracking is not None:
        typer.echo(tracking.log_optimization(result.path).describe(), err=True)
