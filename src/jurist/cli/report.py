"""``jurist report RUN``: the self-contained HTML report of a run directory.

The page (:func:`jurist.report.html.render_run_html`) opens from disk with no network: its
header, summary table, figures, the filterable item table with each item's messages and
raw replies, and the Markdown report. ``jurist judge`` writes it as ``report.html`` already;
this command writes it again (e.g. with more items, or to another file), and computes the
figures of a run written before jurist recorded them, through the run's task. Figures drawn
before are read from the figure cache of the run's judge config (its ``cache_dir``, when
it is there).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from jurist.cli import app
from jurist.errors import ConfigError, InputError
from jurist.report.html import FIGURES_JSON, MAX_ITEMS, REPORT_HTML, REVIEW_JSON, render_run_html


def _missing_views(run: Path) -> dict[str, Any]:
    """What the run directory lacks of the page's input (``figures.json``, ``review.json``,
    the item table, ``summary.json``), computed by scoring the run with its task; ``{}``
    when it lacks nothing. The run directory is not written to."""
    has_items = (run / "items.parquet").is_file() or (run / "items.csv").is_file()
    has_summary = (run / "summary.json").is_file()
    has_views = (run / FIGURES_JSON).is_file() and (run / REVIEW_JSON).is_file()
    if has_views and has_items and has_summary:
        return {}
    import json

    from jurist.tasks import run_task

    try:
        task, options = run_task(run)
    except ConfigError:
        if not has_views:
            raise
        return {}  # e.g. a run judged inside another command: the page shows what the run holds
    dataset = json.loads((run / "manifest.json").read_text(encoding="utf-8")).get("dataset") or {}
    gold = dataset.get("path") if isinstance(dataset, dict) else None
    scores = task.score(run, options, gold=gold if gold and Path(gold).is_file() else None)
    return {
        "figures": list(task.figures(scores, options)),
        "review": task.review(options),
        "items": None if has_items else scores.items,
        "summary": None if has_summary else scores.summary,
    }


@app.command("report")
def report_command(
    run: Annotated[Path, typer.Argument(help="A run directory (from `jurist judge --out`).")],
    html: Annotated[
        Path | None, typer.Option("--html", help="The HTML file to write (default: RUN/report.html).")
    ] = None,
    max_items: Annotated[
        int,
        typer.Option("--max-items", min=0, help="Embed at most this many items (`jurist view` pages all)."),
    ] = MAX_ITEMS,
) -> None:
    """Write the self-contained HTML report of a run: jurist report RUN [--html FILE].

    No model is called. A run written before jurist recorded its figures gets them computed
    by its task (from the run's results and the gold its data carries).
    """
    from jurist.atomic import atomic_write_text
    from jurist.runner.lock import run_lock

    if not run.is_dir() or not (run / "manifest.json").is_file():
        raise InputError("not a run directory (no manifest.json)", path=run)
    target = html if html is not None else run / REPORT_HTML
    if target.is_dir():
        raise InputError("is a directory; give --html a file name", path=target)
    from jurist.report.svg_cache import run_cache_dir
    from jurist.tasks import run_task
    from jurist.tasks.run_inputs import RunInputs

    inputs = RunInputs(run, lambda: run_task(run)).of
    page = render_run_html(
        run, max_items=max_items, inputs=inputs, figure_cache=run_cache_dir(run), **_missing_views(run)
    )
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.resolve().parent == run.resolve():
        with run_lock(run):
            atomic_write_text(target, page)
    else:
        atomic_write_text(target, page)
    typer.echo(f"html report: {target}")
