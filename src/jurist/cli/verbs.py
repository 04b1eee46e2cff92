"""The verbs over any task: ``jurist judge``, ``score``, ``prompt``, ``calibrate``, ``optimize``, ``tasks``.

Each takes TASK (a registered name or a path to a YAML task file) first, then its own
arguments; the task's options (``jurist tasks show TASK``) follow as ``--name VALUE``.
Nothing here names a task: every command calls the task's hooks.

Defining the commands loads only Typer and light modules (``jurist --help`` and ``jurist gate``
start in a fraction of a second, ``tests/cli/test_startup.py``): what a command needs to run
(the task registry, the runner, DSPy) is imported in its body. A new option goes into the
command's signature like the others; a module it needs goes into the body.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from jurist.cli import app
from jurist.cli.options import with_judge_options
from jurist.cli.task_options import split_task_arguments
from jurist.errors import ExitCode, InputError
from jurist.jury.options import accepts_jury_file
from jurist.report.jsonout import dumps

if TYPE_CHECKING:
    from jurist.judges.config import JudgeConfig
    from jurist.tasks import Task

TASK_ARGS = {"allow_extra_args": True, "ignore_unknown_options": True}
TASK_OPTIONS = "Task options follow TASK as --name VALUE; `jurist tasks show TASK` lists them."
TaskArgs = Annotated[
    list[str] | None,
    typer.Argument(
        help="TASK (a name from `jurist tasks`, or a YAML task file), then its arguments and task options.",
        show_default=False,
        metavar="TASK [ARGS]",
    ),
]
MlflowOpt = Annotated[
    bool | None,
    typer.Option(
        "--mlflow/--no-mlflow",
        help="Log to MLflow (the jurist extra 'mlflow'); --no-mlflow ignores a config's mlflow key.",
        show_default=False,
    ),
]
MlflowUriOpt = Annotated[
    str | None,
    typer.Option(help="MLflow tracking URI (default: $MLFLOW_TRACKING_URI, the config's); sets --mlflow."),
]
MlflowExperimentOpt = Annotated[
    str | None, typer.Option(help="MLflow experiment (default: the task's name); sets --mlflow.")
]


def task_and_arguments(
    tokens: list[str] | None, names: tuple[str, ...], command: str
) -> tuple[Task, list[str], dict[str, Any]]:
    """The task, its positional arguments (as many as ``names``, the last may repeat), its options."""
    from jurist.tasks import get_task, task_names

    if not tokens:
        raise typer.BadParameter(f"give a task: jurist {command} TASK ...; tasks: {', '.join(task_names())}")
    task = get_task(tokens[0])
    positional, values = split_task_arguments(task, tokens[1:])
    if not positional and names == ("DATA",) and task.default_data is not None:
        positional = [task.default_data]
    if len(positional) < len(names):
        missing = names[len(positional)]
        raise typer.BadParameter(
            f"Missing argument {missing} (usage: jurist {command} TASK {' '.join(names)})"
        )
    if len(positional) > len(names) and not names[-1].endswith("..."):
        extra = positional[len(names)]
        raise typer.BadParameter(
            f"unexpected argument {extra!r} (usage: jurist {command} TASK {' '.join(names)})"
        )
    return task, positional, values


@app.command("judge", context_settings=TASK_ARGS, epilog=TASK_OPTIONS)
@accepts_jury_file
@with_judge_options()
def judge_command(
    judge: JudgeConfig,
    arguments: TaskArgs = None,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Run directory (resumed if it exists).")
    ] = None,
    retry_failed: Annotated[bool, typer.Option(help="Judge items that failed before again.")] = False,
    progress: Annotated[bool, typer.Option(help="Show a progress bar.")] = True,
    mlflow: MlflowOpt = None,
    mlflow_uri: MlflowUriOpt = None,
    mlflow_experiment: MlflowExperimentOpt = None,
    repeats: Annotated[
        int, typer.Option(min=1, help="Ask the judge (each juror) K times; report self-consistency.")
    ] = 1,
    max_cost: Annotated[
        float | None,
        typer.Option(
            min=0,
            metavar="USD",
            help="Stop (exit 7, resumable) once the run has spent this many dollars; cached answers cost 0.",
        ),
    ] = None,
    workers: Annotated[
        str,
        typer.Option(
            metavar="N|auto",
            help="Local processes that judge (auto: one for small runs, up to one per core; docs/scale.md).",
        ),
    ] = "auto",
    backend: Annotated[
        str, typer.Option(metavar="local|ray", help="Judge here, or on a Ray cluster (the extra 'ray').")
    ] = "local",
    ray_address: Annotated[
        str | None,
        typer.Option(envvar="RAY_ADDRESS", help="Ray cluster for --backend ray (default: start one here)."),
    ] = None,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run", help="Print items, cached items, tokens and cost per judge; call and write nothing."
        ),
    ] = False,
    limit: Annotated[
        int | None,
        typer.Option(min=1, metavar="N", help="Judge only the first N rows (try a judge on a few)."),
    ] = None,
    sample: Annotated[
        int | None,
        typer.Option(min=1, metavar="N", help="Judge a random sample of N rows, drawn with --seed."),
    ] = None,
    seed: Annotated[
        int | None,
        typer.Option(metavar="S", help="The seed of --sample (default 0): the same seed, the same rows."),
    ] = None,
    jury_file: Path | None = None,
) -> None:
    """Judge every row of DATA with TASK's judge into a run directory: jurist judge TASK DATA --out DIR.

    The config names the judge (default: the task's offline baseline), or is a jury file
    (docs/juries.md) or a cascade file (docs/cascades.md). Rerunning resumes. --limit N or
    --sample N --seed S judges a few rows (both orders of a comparison stay together).

    Failed items are recorded with their raw answers and never scored.
    """
    from jurist.jury import cascade_lines, is_cascade_file, judge_cascade, judge_panel, panel_lines
    from jurist.jury.options import overrides_of
    from jurist.tasks._selection import selection_of
    from jurist.tracking import Tracking

    task, positional, values = task_and_arguments(arguments, ("DATA",), "judge")
    if out is None:
        raise typer.BadParameter("give the run directory: --out DIR", param_hint="--out")
    select = selection_of(limit, sample, seed)
    if dry_run:
        from jurist.verbs import estimate

        plan = estimate(
            task,
            positional[0],
            jury_file or judge,
            out=out,
            options=values,
            retry_failed=retry_failed,
            repeats=repeats,
            overrides=overrides_of(judge) if jury_file is not None else None,
            limit=limit,
            sample=sample,
            seed=seed,
        )
        for line in plan.lines():
            typer.echo(line)
        return
    tracking = Tracking.from_options(
        enabled=mlflow, tracking_uri=mlflow_uri, experiment=mlflow_experiment, configs=[judge]
    )
    from jurist.runner.budget import spending_limit
    from jurist.runner.scale import Scale, parse_backend, parse_workers, scaling

    scale = Scale(backend=parse_backend(backend), workers=parse_workers(workers), address=ray_address)
    with spending_limit(max_cost), scaling(scale):
        if jury_file is not None and is_cascade_file(jury_file):
            if repeats > 1:
                raise typer.BadParameter(
                    "a cascade is not repeated; make a stage a jury file", param_hint="--repeats"
                )
            run = judge_cascade(
                task,
                positional[0],
                jury_file,
                out=out,
                options=task.options(values),
                overrides=overrides_of(judge),
                retry_failed=retry_failed,
                progress=progress,
                select=select,
            )
        elif jury_file is not None or repeats > 1:
            run = judge_panel(
                task,
                positional[0],
                jury_file or judge,
                out=out,
                options=task.options(values),
                repeats=repeats,
                overrides=overrides_of(judge) if jury_file is not None else None,
                retry_failed=retry_failed,
                progress=progress,
                select=select,
            )
        else:
            from jurist.verbs import judge_run

            run = judge_run(
                task,
                positional[0],
                out,
                judge,
                task.options(values),
                retry_failed=retry_failed,
                progress=progress,
                select=select,
            )
    from jurist.report.usage import usage_lines

    lines = [
        *task.summary_lines(run),
        *usage_lines(run.summary, getattr(run, "now", None)),
        *panel_lines(run.summary),
        *cascade_lines(run.summary),
    ]
    html = run.run_dir / "report.html"
    if html.is_file() and not any("report.html" in line for line in lines):
        # Next to the Markdown report's line, where a task prints one.
        markdown = [i for i, line in enumerate(lines) if line.rstrip().endswith("report.md")]
        lines.insert(markdown[0] + 1 if markdown else len(lines), f"html report: {html}")
    for line in lines:
        typer.echo(line)
    failed = failed_count(run.summary)
    if failed:
        typer.echo(
            f"{failed} item(s) failed (recorded with their raw answers; --retry-failed judges them again)",
            err=True,
        )
    if tracking is not None:
        typer.echo(tracking.log_run(run.run_dir).describe(), err=True)
    if failed:
        raise typer.Exit(int(ExitCode.FAILED_ITEMS))


def failed_count(summary: Any) -> int:
    """Failed items in a summary (a mapping, or a list of them for tasks that score several files)."""
    entries = summary if isinstance(summary, list) else [summary]
    total = 0
    for entry in entries:
        value = entry.get("failed") if isinstance(entry, dict) else None
        total += int(value) if isinstance(value, int | float) and value == value else 0
    return total


def _item_count(summary: Any) -> int | None:
    entries = summary if isinstance(summary, list) else [summary]
    counts = [entry.get("items") for entry in entries if isinstance(entry, dict)]
    known = [int(count) for count in counts if isinstance(count, int)]
    return sum(known) if known and len(known) == len(counts) else None


@app.command("score", context_settings=TASK_ARGS, epilog=TASK_OPTIONS)
def score_command(
    arguments: TaskArgs = None,
    gold: Annotated[Path | None, typer.Option(help="Gold labels to compare with (matched by id).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
    partial: Annotated[
        bool,
        typer.Option(
            "--partial",
            help="Score an unfinished run (killed, stopped, still judging): the items judged so far.",
        ),
    ] = False,
) -> None:
    """Score a recorded run (no model is called) and print its report: jurist score TASK RUN.

    Exit status 3 when the run holds failed items (they are listed, never scored). An
    unfinished run (killed, stopped, or still being judged) is refused, exit 2 (4 while a
    process is judging it), unless --partial asks for a score of the items judged so far.
    """
    from jurist.runner.finished import check_finished, partial_note

    task, positional, values = task_and_arguments(arguments, ("RUN...",), "score")
    runs = [Path(p) for p in positional]
    options = task.options(values)
    unfinished = check_finished(runs, partial=partial)
    scores = task.score(runs if len(runs) > 1 else runs[0], options, gold=gold)
    if _item_count(scores.summary) == 0:
        raise InputError("no judged items: nothing to score", path=runs[0])
    if unfinished:
        typer.echo(partial_note(unfinished), err=True)
        if isinstance(scores.summary, dict):
            scores.summary["unfinished"] = [item.as_dict() for item in unfinished]
    if as_json:
        typer.echo(dumps(scores.summary))
    else:
        for line in task.score_lines(scores):
            typer.echo(line)
    failed = failed_count(scores.summary)
    if failed:
        typer.echo(f"{failed} item(s) failed and were not scored (`jurist judge --retry-failed`)", err=True)
        raise typer.Exit(int(ExitCode.FAILED_ITEMS))


@app.command("prompt", context_settings=TASK_ARGS, epilog=TASK_OPTIONS)
@with_judge_options()
def prompt_command(
    judge: JudgeConfig,
    arguments: TaskArgs = None,
    row: Annotated[int, typer.Option(min=0, help="Which row of DATA (counted from 0).")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the messages as JSON.")] = False,
) -> None:
    """Print the exact messages the judge would send for one row, calling nothing: jurist prompt TASK DATA."""
    from jurist.verbs import prompt

    task, positional, values = task_and_arguments(arguments, ("DATA",), "prompt")
    calls = prompt(task, positional[0], judge, row=row, options=values)
    if as_json:
        typer.echo(dumps(calls, ensure_ascii=False))
        return
    for call in calls:
        typer.echo(f"=== item {call['item']} ===")
        for message in call["messages"]:
            typer.echo(f"--- {message['role']} ---")
            typer.echo(message["content"])


tasks_app = typer.Typer(
    help="The judge tasks jurist knows: built-in, installed, YAML.", invoke_without_command=True
)
app.add_typer(tasks_app, name="tasks")


def _describe_lines(description: dict[str, Any]) -> list[str]:
    lines = [f"{description['name']}  ({description['source']})", ""]
    if description["description"]:
        lines += [description["description"], ""]
    lines.append("verbs: " + ", ".join(description["verbs"]))
    for section in ("inputs", "outputs", "metrics"):
        lines.append(f"{section}:")
        entries = description[section] or {"(none)": ""}
        lines += [f"  {name}: {text}".rstrip(": ") for name, text in entries.items()]
    lines.append("options:")
    options = description["options"] or {}
    if not options:
        lines.append("  (none)")
    for name, option in options.items():
        default = "required" if option["required"] else f"default {option['default']!r}"
        lines.append(f"  --{name.replace('_', '-')} ({option['type']}, {default}): {option['description']}")
    return lines


@tasks_app.callback()
def tasks_command(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print the tasks as JSON.")] = False,
    path: Annotated[
        Path,
        typer.Option(
            "--path",
            help="Folder whose YAML task files are listed too (with its immediate sub-folders).",
            show_default="the current folder",
        ),
    ] = Path("."),
) -> None:
    """List every task with its inputs, outputs and metrics, built-in and the YAML task files
    in the current folder or --path (`jurist tasks show NAME` for one)."""
    if ctx.invoked_subcommand is not None:
        return
    from jurist.tasks import find_task_files, get_task, task_names

    described = [get_task(name).describe() for name in task_names()]
    files = find_task_files(path)
    if as_json:
        found = [
            {**file.description, "path": str(file.path)}
            if file.description is not None
            else {"name": None, "path": str(file.path), "error": file.error}
            for file in files
        ]
        typer.echo(dumps(described + found))
        return
    for entry in described + [file.description for file in files if file.description is not None]:
        typer.echo(f"{entry['name']}  [{', '.join(entry['verbs'])}]  ({entry['source']})")
        typer.echo(f"  inputs: {', '.join(entry['inputs']) or '-'}")
        typer.echo(f"  outputs: {', '.join(entry['outputs']) or '-'}")
        typer.echo(f"  metrics: {', '.join(entry['metrics']) or '-'}")
    for file in files:
        if file.error is not None:
            typer.echo(f"invalid task file: {file.error}")


@tasks_app.command("show")
def tasks_show_command(
    name: Annotated[str, typer.Argument(help="A task name, or a YAML task file.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the task as JSON.")] = False,
) -> None:
    """Print one task in full: description, inputs, outputs, metrics, options, verbs."""
    from jurist.tasks import get_task

    task = get_task(name)
    description = task.describe()
    if as_json:
        typer.echo(dumps(description))
    else:
        typer.echo("\n".join(_describe_lines(description)))
