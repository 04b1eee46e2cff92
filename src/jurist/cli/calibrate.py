"""``jurist calibrate TASK``: a leaderboard of judges against gold labels, optionally a CI gate."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from jurist.cli import app
from jurist.cli.verbs import (
    TASK_ARGS,
    TASK_OPTIONS,
    MlflowExperimentOpt,
    MlflowOpt,
    MlflowUriOpt,
    TaskArgs,
    task_and_arguments,
)
from jurist.errors import ExitCode

if TYPE_CHECKING:
    import pandas as pd

_Threshold = float | None


@app.command("calibrate", context_settings=TASK_ARGS, epilog=TASK_OPTIONS)
def calibrate_command(
    gold: Annotated[
        list[Path], typer.Option("--gold", "-g", help="Gold file (repeatable; sample:NAME allowed).")
    ],
    config: Annotated[
        list[str] | None,
        typer.Option(
            "--config", "-c", help="Judge config YAML, or 'baseline' (repeatable; default: baseline)."
        ),
    ] = None,
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Directory for runs and reports (rerun: resumed).")
    ] = Path("calibration"),
    output_format: Annotated[str, typer.Option("--format", help="Print markdown or csv.")] = "markdown",
    resamples: Annotated[int, typer.Option(min=0, help="Bootstrap resamples of the 95% intervals.")] = 1000,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap.")] = 0,
    min_kappa: Annotated[_Threshold, typer.Option(help="Gate: Cohen's kappa at least this.")] = None,
    min_accuracy: Annotated[_Threshold, typer.Option(help="Gate: accuracy at least this.")] = None,
    min_auroc: Annotated[_Threshold, typer.Option(help="Gate: AUROC at least this (ragbench).")] = None,
    max_failed_rate: Annotated[
        _Threshold, typer.Option(help="Gate: failed judgments at most this share.")
    ] = None,
    min_consistency: Annotated[
        _Threshold, typer.Option(help="Gate (pairwise): consistency at least this.")
    ] = None,
    max_position_bias: Annotated[
        _Threshold, typer.Option(help="Gate (pairwise): |position-1 rate - 0.5| at most this.")
    ] = None,
    max_length_bias: Annotated[
        _Threshold, typer.Option(help="Gate (pairwise): |longer wins - gold longer| at most this.")
    ] = None,
    progress: Annotated[bool, typer.Option(help="Show progress bars.")] = False,
    write_weights_: Annotated[
        bool,
        typer.Option(
            "--write-weights",
            help="Write each jury's weights (log-odds of juror accuracy) to OUT/JURY.weighted.yaml.",
        ),
    ] = False,
    target_agreement: Annotated[
        float | None,
        typer.Option(
            min=0.0,
            max=1.0,
            help="A cascade's target agreement with gold (default: its file's target_agreement).",
        ),
    ] = None,
    max_cost: Annotated[
        float | None,
        typer.Option(
            min=0,
            metavar="USD",
            help="Stop (exit 7, resumable) once all judges together have spent this many dollars.",
        ),
    ] = None,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run",
            help="Print items, cached items, tokens and cost per judge and gold file; call, write nothing.",
        ),
    ] = False,
    mlflow: MlflowOpt = None,
    mlflow_uri: MlflowUriOpt = None,
    mlflow_experiment: MlflowExperimentOpt = None,
    arguments: TaskArgs = None,
) -> None:
    """Run judges on gold data; print a leaderboard (agreement, bias, cost). Exit 1 if a gate fails.

    jurist calibrate TASK --gold FILE --config A --config B [task options]

    Exit 3 when a judge failed on some items (or all) and no gate failed; --max-failed-rate
    makes failed judgments a gate instead. Exit 5 when the provider refused every call.

    --max-cost and --dry-run work as for `jurist judge`, over every judge and gold file (docs/costs.md).
    """
    from jurist.jury import CascadeSpec, JurySpec, choice_lines, weighted_copy_path, write_weights
    from jurist.report.calibrate import CalibrationThresholds, calibration_csv, calibration_markdown
    from jurist.tracking import Tracking
    from jurist.verbs import calibrate, estimate_calibration, judge_specs

    task, _, values = task_and_arguments(arguments, (), "calibrate")
    if output_format not in ("markdown", "csv"):
        raise typer.BadParameter("use markdown or csv", param_hint="--format")
    thresholds = CalibrationThresholds(
        min_kappa=min_kappa,
        min_accuracy=min_accuracy,
        min_auroc=min_auroc,
        max_failed_rate=max_failed_rate,
        min_consistency=min_consistency,
        max_position_bias=max_position_bias,
        max_length_bias=max_length_bias,
    )
    specs = judge_specs(list(config or []))
    juries = [spec for spec in specs if isinstance(spec, JurySpec)]
    if write_weights_ and not juries:
        raise typer.BadParameter(
            "--write-weights needs a jury file among --config", param_hint="--write-weights"
        )
    if target_agreement is not None and not any(isinstance(spec, CascadeSpec) for spec in specs):
        raise typer.BadParameter(
            "--target-agreement needs a cascade file among --config", param_hint="--target-agreement"
        )
    if dry_run:
        for line in estimate_calibration(task, list(gold), specs, out=out, options=values).lines():
            typer.echo(line)
        return
    tracking = Tracking.from_options(
        enabled=mlflow,
        tracking_uri=mlflow_uri,
        experiment=mlflow_experiment,
        configs=[spec.config for spec in specs],
    )
    result = calibrate(
        task,
        list(gold),
        specs,
        out=out,
        thresholds=thresholds,
        options=values,
        n_resamples=resamples,
        seed=seed,
        progress=progress,
        target_agreement=target_agreement,
        max_cost=max_cost,
    )
    typer.echo(calibration_markdown(result) if output_format == "markdown" else calibration_csv(result))
    typer.echo(f"written to {out}", err=True)
    for jury in juries if write_weights_ else []:
        weights = write_weights(jury, result.leaderboard, weighted_copy_path(jury, out))
        shown = ", ".join(f"{name} {weight:.3f}" for name, weight in weights.items())
        typer.echo(f"jury weights ({shown}) written to {weighted_copy_path(jury, out)}", err=True)
    for name, choice in (result.settings.get("cascades") or {}).items():
        for line in choice_lines(name, choice):
            typer.echo(line, err=True)
    if tracking is not None:
        typer.echo(tracking.log_calibration(out).describe(), err=True)
    failed = [check for check in result.gates if not check.passed]
    for check in failed:
        value = "n/a" if check.value is None else f"{check.value:.3f}"
        typer.echo(
            f"gate failed: {check.gate} {check.threshold:g}: {check.judge} on {check.dataset} = {value}",
            err=True,
        )
    failed_rows = failed_judgments(result.leaderboard)
    if failed_rows:
        typer.echo(
            f"failed judgments (counted, never scored; their raw answers are in the runs under {out}): "
            + ", ".join(failed_rows),
            err=True,
        )
    if failed:
        raise typer.Exit(int(ExitCode.GATE_FAILED))
    if failed_rows and max_failed_rate is None:
        raise typer.Exit(int(ExitCode.FAILED_ITEMS))


def failed_judgments(leaderboard: pd.DataFrame) -> list[str]:
    """``"JUDGE on DATASET: F of N"`` for each leaderboard row with failed judgments."""
    rows = []
    for row in leaderboard.to_dict(orient="records"):
        failed, judgments = row.get("failed"), row.get("judgments")
        if isinstance(failed, int | float) and failed == failed and failed > 0:
            total = (
                f" of {int(judgments)}"
                if isinstance(judgments, int | float) and judgments == judgments
                else ""
            )
            rows.append(f"{row.get('judge')} on {row.get('dataset')}: {int(failed)}{total}")
    return rows
