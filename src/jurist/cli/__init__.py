"""The ``jurist`` command: one Typer app with a subcommand group per verb.

The verbs over any task (``judge``, ``score``, ``prompt``, ``calibrate``, ``optimize``,
``tasks``) are in :mod:`jurist.cli.verbs`, ``calibrate`` and ``optimize``; ``gate`` and
``rgb run`` are commands of one task each. ``main`` is the console-script entry point.
"""

from __future__ import annotations

import sys

import typer

from jurist.errors import JuristError

app = typer.Typer(
    name="jurist",
    help="LLM judges people can trust: judge, score, gate and optimize.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        typer.echo(f"jurist {version('jurist')}")
        raise typer.Exit()


@app.callback()
def _root(
    show_version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """LLM judges people can trust: judge, score, gate and optimize."""


def _register_commands() -> None:
    # Imported for their side effect of adding commands to the app above: the verbs over
    # any task first, then the commands of one task's own (``gate``, ``rgb run``).
    from jurist.cli import calibrate, gates, optimize, rgb, verbs  # noqa: F401


def main(argv: list[str] | None = None) -> None:
    """Run the CLI; its exit status follows :class:`jurist.errors.ExitCode` for every command.

    jurist's own errors print one line on stderr (``error: ...``) and exit with their code
    (bad input 2, run locked 4, fatal provider error 5); usage errors exit 2 (Click's rule).
    """
    _register_commands()
    try:
        app(args=argv, standalone_mode=True)
    except JuristError as exc:
        typer.echo(f"error: {exc}", err=True)
        sys.exit(int(exc.exit_code))
