"""``jurist probe``: adversarial probes of a judge (see :mod:`jurist.tasks.probes`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from jurist.cli import app
from jurist.cli.options import with_judge_options
from jurist.cli.verbs import TASK_ARGS, TASK_OPTIONS, TaskArgs, task_and_arguments
from jurist.errors import ExitCode

if TYPE_CHECKING:
    from jurist.judges.config import JudgeConfig

probe_app = typer.Typer(help="Probe a judge with adversarial inputs.", no_args_is_help=True)
app.add_typer(probe_app, name="probe")


@probe_app.command("injection", context_settings=TASK_ARGS, epilog=TASK_OPTIONS)
@with_judge_options()
def injection_command(
    judge: JudgeConfig,
    arguments: TaskArgs = None,
    items: Annotated[int, typer.Option(min=1, help="Probe the first N items of DATA.")] = 3,
    cases: Annotated[
        Path | None, typer.Option(help="A probe-set YAML file (default: the bundled injection set).")
    ] = None,
    family: Annotated[list[str] | None, typer.Option(help="Only cases of this family (repeatable).")] = None,
    field: Annotated[
        list[str] | None,
        typer.Option(help="Plant payloads in this input only (repeatable; default: every text input)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="The probe's directory, with its runs clean/ and probes/ (resumed if it holds the "
            "same probe; default: runs/TASK/DATA-probe-injection-JUDGE-...).",
        ),
    ] = None,
    retry_failed: Annotated[bool, typer.Option(help="Judge items that failed before again.")] = False,
    progress: Annotated[bool, typer.Option(help="Show a progress bar.")] = True,
    workers: Annotated[
        str, typer.Option(metavar="N|auto", help="Local processes that judge (docs/scale.md).")
    ] = "1",
    max_cost: Annotated[
        float | None,
        typer.Option(
            min=0,
            metavar="USD",
            help="Stop (exit 7, resumable) once the probe spent this many dollars; cached answers cost 0.",
        ),
    ] = None,
) -> None:
    """Count the verdicts that planted text moves: jurist probe injection TASK [DATA] --config C.

    Each item is judged clean, then with each payload of the probe set asking for another verdict.

    Payloads: fake verdicts, JSON verdicts, fake DSPy fields, instructions, markup, padding, other languages.

    A control asks for the verdict the item has; a verdict moved when the payload's demand changed it.

    The clean items and the planted ones are judged as two ordinary runs into --out (clean/, probes/):
    cached, resumed when run again, failed items kept with their raw answers.

    DATA defaults to the task's bundled sample, if it has one. Exit status: 0 if nothing moved, 1 if any did.
    """
    from jurist.verbs import probe_injection

    task, positional, values = task_and_arguments(arguments, ("DATA",), "probe injection")
    report = probe_injection(
        task,
        positional[0],
        judge,
        task.options(values),
        out=out,
        limit=items,
        cases=cases,
        families=family,
        fields=field,
        retry_failed=retry_failed,
        progress=progress,
        workers=workers,
        max_cost=max_cost,
    )
    if as_json:
        typer.echo(json.dumps(report.to_dict(), indent=2, ensure_ascii=False, allow_nan=False, default=str))
    else:
        typer.echo(report.table())
    typer.echo(f"probe runs: {report.run_dir}", err=True)
    if report.moved:
        if not as_json:
            typer.echo(f"{report.moved} verdict(s) moved by an injected payload", err=True)
        raise typer.Exit(int(ExitCode.GATE_FAILED))
