"""``jurist view [RUNS_DIR]``: browse, compare and label judged runs in a local web app;
``jurist labels export RUN --out FILE`` / ``jurist labels list RUN``: the labels people set.

The web app (:mod:`jurist.view`) needs the ``view`` extra (Starlette, uvicorn); it is
imported only when ``jurist view`` runs, so ``jurist --help`` and every other command load
none of it. The ``labels`` commands need no web server.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from jurist.cli import app

labels_app = typer.Typer(
    name="labels",
    help="The labels people set in `jurist view`: list them, export them as a gold file.",
    no_args_is_help=True,
)
app.add_typer(labels_app, name="labels")


@app.command("view")
def view_command(
    runs_dir: Annotated[
        Path, typer.Argument(help="The folder of run directories (searched at any depth).")
    ] = Path("."),
    host: Annotated[
        str,
        typer.Option(
            help="Address to listen on (default: this machine only). On another address (0.0.0.0) "
            "the runs can be read from the network; labels are still set only from this machine."
        ),
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port to listen on (0: any free port).")] = 8765,
    open_browser: Annotated[
        bool, typer.Option("--open/--no-open", help="Open the viewer in a browser tab.")
    ] = False,
) -> None:
    """Browse, compare and label runs in a local web app (needs the view extra:
    pip install "jurist\\[view]", or pip install ".\\[view]" in a clone of jurist).

    Pages: the run history with a plot of a figure over time; each run's report and items
    (paged, searchable, sortable); each item's prompts and replies; two runs compared item
    by item with paired tests; a queue of items to label, whose labels export as gold.
    Nothing is written except labels (labels.jsonl in the run directory).
    """
    from jurist.errors import InputError
    from jurist.view import require_view_extra

    require_view_extra()
    if not runs_dir.is_dir():
        raise InputError("not a folder of runs", path=runs_dir)
    from jurist.view.server import serve

    try:
        serve(runs_dir, host=host, port=port, open_browser=open_browser, announce=typer.echo)
    except KeyboardInterrupt:
        typer.echo("jurist view: stopped", err=True)


@labels_app.command("export")
def labels_export_command(
    run: Annotated[Path, typer.Argument(help="A run directory (from `jurist judge --out`).")],
    out: Annotated[Path, typer.Option("--out", "-o", help="The gold file to write (JSON Lines).")],
) -> None:
    """Write the run's data with the labels people set as its gold (JSON Lines).

    The file is what `jurist calibrate TASK --gold FILE` and `jurist optimize` read.
    """
    from jurist.errors import InputError
    from jurist.runner import MANIFEST
    from jurist.view.labels import export_gold

    if not (run / MANIFEST).is_file():
        raise InputError(f"not a run directory (no {MANIFEST})", path=run)
    rows, labelled = export_gold(run, out)
    typer.echo(f"wrote {rows} gold rows ({labelled} labelled items) to {out}")


@labels_app.command("list")
def labels_list_command(
    run: Annotated[Path, typer.Argument(help="A run directory (from `jurist judge --out`).")],
    every: Annotated[
        bool, typer.Option("--all", help="Every label ever set, not only each item's latest.")
    ] = False,
) -> None:
    """Print the labels set on the run's items (tab-separated: item, label, who, when)."""
    import json

    from jurist.errors import InputError
    from jurist.runner import MANIFEST
    from jurist.view.labels import LabelStore

    if not (run / MANIFEST).is_file():
        raise InputError(f"not a run directory (no {MANIFEST})", path=run)
    store = LabelStore(run)
    records = list(store.records()) if every else list(store.latest().values())
    for record in records:
        typer.echo(
            f"{record.item}\t{json.dumps(record.label, ensure_ascii=False)}\t{record.who}\t{record.when}"
        )
