"""``jurist rgb run``: the RGB robustness suite, with the flags it has always had.

The same run is ``jurist judge rgb DATA_DIR --out DIR`` (the task ``rgb``, whose options are
these flags); RGB prediction files are scored by ``jurist score rgb FILES...``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from jurist.cli import app
from jurist.cli.options import with_judge_options
from jurist.datasets.rgb.protocol import INTEGRATION_NOISE_RATES, NOISE_RATES, PASSAGE_NUM, RGB_SEED, SETS
from jurist.errors import ExitCode

if TYPE_CHECKING:
    from jurist.judges.config import JudgeConfig

rgb_app = typer.Typer(
    help="RGB (arXiv 2309.01431): RAG robustness of a model under test.", no_args_is_help=True
)
app.add_typer(rgb_app, name="rgb")


def _floats(text: str, option: str) -> list[float]:
    try:
        values = [float(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise typer.BadParameter(
            f"expected comma-separated numbers, got {text!r}", param_hint=option
        ) from None
    if not values or any(not 0.0 <= value <= 1.0 for value in values):
        raise typer.BadParameter(f"expected rates in [0, 1], got {text!r}", param_hint=option)
    return values


def _names(text: str, allowed: tuple[str, ...], option: str) -> list[str]:
    values = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [value for value in values if value not in allowed]
    if unknown or not values:
        raise typer.BadParameter(f"expected some of {', '.join(allowed)}, got {text!r}", param_hint=option)
    return values


def _rates_text(rates: tuple[float, ...]) -> str:
    return ",".join(format(rate, "g") for rate in rates)


@rgb_app.command("run")
@with_judge_options(target="responder")
def rgb_run_command(
    responder: JudgeConfig,
    data_dir: Annotated[
        str,
        typer.Option(
            help="Directory of RGB files named as RGB names them (en.json, zh_refine.json, en_int.json, "
            "en_fact.json, ...), or sample:rgb for the bundled sample."
        ),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Output directory (each run in it resumes).")],
    judge_config_path: Annotated[
        Path | None,
        typer.Option("--judge-config", help="Config YAML of the Rej*/ED* judge (default: keyword judges)."),
    ] = None,
    judge_model: Annotated[
        str | None, typer.Option(help="LiteLLM model of the Rej*/ED* judge (default: keyword judges).")
    ] = None,
    judge_program: Annotated[
        list[Path] | None,
        typer.Option(
            "--judge-program",
            help="Compiled Rej*/ED* judge from `jurist optimize rgb-rejection|rgb-error-detection` "
            "(repeatable; each runs the judge it was compiled for, with its own config unless a "
            "judge model is given).",
        ),
    ] = None,
    sets: Annotated[str, typer.Option(help="Comma-separated sets to run.")] = ",".join(SETS),
    languages: Annotated[str, typer.Option("--languages", help="Comma-separated languages.")] = "en,zh",
    noise_rates: Annotated[str, typer.Option(help="Noise-robustness noise rates.")] = _rates_text(
        NOISE_RATES
    ),
    integration_noise_rates: Annotated[
        str, typer.Option(help="Information-integration noise rates.")
    ] = _rates_text(INTEGRATION_NOISE_RATES),
    passage_num: Annotated[int, typer.Option(min=0, help="Passages per question.")] = PASSAGE_NUM,
    counterfactual_noise_rate: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="Noise rate of the counterfactual run.")
    ] = 0.0,
    correct_rate: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="Share of correct passages in the counterfactual run.")
    ] = 0.0,
    closed_book: Annotated[
        bool, typer.Option(help="Also ask the counterfactual questions without passages (the paper's Acc).")
    ] = True,
    prefer: Annotated[
        str, typer.Option(help="refine or plain: which file to use when {lang}_refine and {lang} both exist.")
    ] = "refine",
    instructions: Annotated[
        Path | None, typer.Option(help="Prompts YAML shaped like RGB's config/instruction.yaml.")
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed re-set before preparing each instance.")] = RGB_SEED,
    limit: Annotated[int | None, typer.Option(min=1, help="Only the first N rows of each file.")] = None,
    answer_check: Annotated[
        str, typer.Option(help="original (RGB's) or improved (adds jurist's figures next to RGB's).")
    ] = "original",
    chart: Annotated[bool, typer.Option(help="Write accuracy_vs_noise.png (needs matplotlib).")] = True,
    retry_failed: Annotated[bool, typer.Option(help="Answer and judge failed items again.")] = False,
    progress: Annotated[bool, typer.Option(help="Show progress bars.")] = True,
) -> None:
    """Run RGB's noise robustness, negative rejection, integration and counterfactual sets."""
    from jurist.jury.loop import run_recipe
    from jurist.tasks import get_task
    from jurist.tasks.rgb import RGBOptions
    from jurist.tasks.rgb.report import render_rgb_report

    if prefer not in ("refine", "plain"):
        raise typer.BadParameter("expected refine or plain", param_hint="--prefer")
    if answer_check not in ("original", "improved"):
        raise typer.BadParameter("expected original or improved", param_hint="--answer-check")
    options = RGBOptions.model_validate(
        {
            "judge_config": judge_config_path,
            "judge_model": judge_model,
            "judge_program": list(judge_program or []),
            "sets": _names(sets, SETS, "--sets"),
            "languages": _names(languages, ("en", "zh"), "--languages"),
            "noise_rates": _floats(noise_rates, "--noise-rates"),
            "integration_noise_rates": _floats(integration_noise_rates, "--integration-noise-rates"),
            "passage_num": passage_num,
            "counterfactual_noise_rate": counterfactual_noise_rate,
            "correct_rate": correct_rate,
            "closed_book": closed_book,
            "prefer": prefer,
            "instructions": instructions,
            "seed": seed,
            "limit": limit,
            "answer_check": answer_check,
            "chart": chart,
        }
    )
    task = get_task("rgb")
    recipe = task.plan(data_dir, options)
    assert recipe is not None  # the rgb task is a recipe of runs
    run = run_recipe(
        task,
        recipe,
        out,
        responder,
        options,
        retry_failed=retry_failed,
        progress=progress,
        log=lambda line: typer.echo(line, err=True),
    )
    suite = run.scores.extra["suite"]
    typer.echo(render_rgb_report(suite.summary))
    typer.echo(f"report: {suite.report}")
    if suite.chart is not None:
        typer.echo(f"chart: {suite.chart}")
    failed = int(suite.summary.get("failed") or 0)
    if failed:
        typer.echo(
            f"{failed} item(s) failed (recorded with their raw answers; --retry-failed answers them again)",
            err=True,
        )
        raise typer.Exit(int(ExitCode.FAILED_ITEMS))
