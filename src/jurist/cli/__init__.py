"""The ``jurist`` command: one Typer app with a subcommand group per verb.

The verbs over any task (``judge``, ``score``, ``prompt``, ``calibrate``, ``optimize``,
``tasks``) are in :mod:`jurist.cli.verbs`, ``calibrate`` and ``optimize``; ``gate`` and
``rgb run`` are commands of one task each. ``main`` is the console-script entry point: it
turns every error into one line on stderr and the exit code of :class:`jurist.errors.ExitCode`.

Every command module is imported to build the app, so each imports at its top only Typer and
light modules: what a command needs to run (the task registry, the runner, DSPy, pandas) is
imported in its body. ``jurist --help``, every ``--help``, ``--version`` and ``jurist gate``
load neither DSPy, LiteLLM, pandas nor numpy (``tests/cli/test_startup.py``;
``benchmarks/startup.py`` measures them).
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import gc
import os
import signal
import sqlite3
import sys
import traceback
from typing import NoReturn

import typer

from jurist.errors import ExitCode, JuristError, Terminated

BROKEN_PIPE = 141
"""Exit status when the reader of standard output went away (the shell's 128 + SIGPIPE)."""

# Help wraps to the terminal's width (``COLUMNS`` when set), never cut at Click's default 80.
_HELP_WIDTH = {"max_content_width": 1000}

app = typer.Typer(
    name="jurist",
    help="LLM judges people can trust: judge, score, gate and optimize.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings=_HELP_WIDTH,
)

_state = {"debug": False}


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        typer.echo(f"jurist {version('jurist')}")
        raise typer.Exit()


@app.callback(context_settings=_HELP_WIDTH)
def _root(
    show_version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
    debug: bool = typer.Option(
        False, "--debug", envvar="JURIST_DEBUG", help="Print the full traceback of an error."
    ),
) -> None:
    """LLM judges people can trust: judge, score, gate and optimize.

    Exit status: 0 ok, 1 a gate not met, 2 bad input or usage, 3 completed with failed
    items, 4 run directory locked, 5 fatal provider error, 6 MLflow logging failed (results
    kept), 7 stopped at the cost limit (resumable), 70 internal error (or judging processes
    lost again and again), 130 interrupted (Ctrl-C), 143 stopped by SIGTERM (resumable).
    """
    _state["debug"] = _state["debug"] or debug


def _register_commands() -> None:
    # Imported for their side effect of adding commands to the app above: the verbs over
    # any task first, then the commands of one task's own (``gate``, ``rgb run``). A new
    # option goes into its command's signature; a module it needs, into the command's body.
    from jurist.cli import calibrate, gates, optimize, probe, report, rgb, show, verbs, view  # noqa: F401


_OS_REASONS = {
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.EROFS: "read-only file system",
    errno.EISDIR: "is a directory; expected a file",
    errno.ENOTDIR: "a part of the path is a file, not a directory",
    errno.EEXIST: "already exists (and is not a directory)",
    errno.ENOENT: "no such file or directory",
    errno.ENOSPC: "no space left on the device",
}


def describe_error(exc: BaseException) -> tuple[str, int] | None:
    """The one-line message and exit code of an error a user can act on, or ``None`` for a bug.

    jurist's own errors carry both. Errors from the system and from libraries are described
    here as a fallback, for those that escape the loaders: file system errors (permission,
    read-only, a directory where a file is expected, ...), text that is not UTF-8, and a
    ``results.sqlite`` that SQLite cannot read.
    """
    if isinstance(exc, JuristError):
        return str(exc), int(exc.exit_code)
    if isinstance(exc, UnicodeDecodeError):
        return (
            f"not UTF-8 text (byte offset {exc.start}: {exc.reason}); save the file as UTF-8",
            int(ExitCode.BAD_INPUT),
        )
    if isinstance(exc, sqlite3.DatabaseError):
        return (
            f"a run's results.sqlite cannot be read ({exc}); it is truncated or not a jurist run: "
            "move the run directory aside and judge again into a new --out (cached answers make "
            "finished items free), or restore it from a backup",
            int(ExitCode.BAD_INPUT),
        )
    if isinstance(exc, OSError):
        reason = _OS_REASONS.get(exc.errno or -1) or exc.strerror or str(exc) or type(exc).__name__
        names = [str(name) for name in (exc.filename, exc.filename2) if name is not None]
        where = " -> ".join(names)
        return (f"{where}: {reason}" if where else reason), int(ExitCode.BAD_INPUT)
    return None


def _interrupted_reported(exc: KeyboardInterrupt) -> bool:
    """Whether the runner raised this interrupt after saying what was kept (its own message)."""
    frame = exc.__traceback__
    while frame is not None and frame.tb_next is not None:
        frame = frame.tb_next
    return frame is not None and frame.tb_frame.f_globals.get("__name__", "").startswith("jurist.runner")


def _fail(exc: BaseException, message: str, code: int) -> NoReturn:
    """Print the error (and with ``--debug`` its traceback), redacted, and exit with ``code``.

    A provider may have echoed the API key into an exception's message: the line and the
    traceback go through :func:`jurist.redaction.redact`. The line is at most about
    :data:`jurist.safe_load.LINE_LIMIT` characters whatever the error quotes (cut before
    redaction too, far from what is shown, so a huge message costs nothing to redact).
    """
    from jurist.redaction import redact
    from jurist.safe_load import LINE_LIMIT, clip

    if _state["debug"]:
        typer.echo(redact("".join(traceback.format_exception(exc))).rstrip("\n"), err=True)
    typer.echo(f"error: {clip(redact(clip(message, 4 * LINE_LIMIT)))}", err=True)
    sys.exit(code)


def _is(exc: BaseException, name: str) -> bool:
    """Whether ``exc`` is Click's (or Typer's vendored Click's) exception class ``name``."""
    return any(
        kind.__name__ == name and kind.__module__.split(".")[0] in ("click", "typer")
        for kind in type(exc).__mro__
    )


def _run(args: list[str]) -> int:
    """Parse and run one command line, as Click's standalone mode does, but leave jurist's own
    errors, other exceptions and Ctrl-C to :func:`main`."""
    command = typer.main.get_command(app)
    try:
        with command.make_context("jurist", args) as ctx:
            command.invoke(ctx)
    except Exception as exc:
        if _is(exc, "Exit"):
            return int(getattr(exc, "exit_code", 0) or 0)
        if _is(exc, "ClickException"):  # usage errors: Click's own message, exit 2
            exc.show()  # type: ignore[attr-defined]
            return int(getattr(exc, "exit_code", ExitCode.BAD_INPUT))
        if _is(exc, "Abort"):
            raise KeyboardInterrupt from exc
        raise
    return int(ExitCode.OK)


_GC_THRESHOLDS = (50_000, 20, 20)
"""The cyclic collector's thresholds in a ``jurist`` process (Python's default: 700, 10, 10)."""


def _collect_less() -> None:
    """Fewer garbage collections in a process that runs one command and ends.

    A command holds DSPy, pandas and matplotlib in memory, so every full collection walks a
    large heap that lives until the end: raising the thresholds and freezing the heap at exit
    (the collections of interpreter shutdown then skip it) cut the CPU time of a cached
    ``jurist judge`` re-run of 2,000 items by about 0.45 s (of 3.0 s). Garbage is still
    collected, in larger batches. Only the console script does this: ``main(argv)`` called
    from another program leaves that program's collector alone.
    """
    gc.set_threshold(*_GC_THRESHOLDS)
    atexit.register(gc.freeze)


def _terminate(signum: int, frame: object) -> None:
    """SIGTERM's handler: stop the command as Ctrl-C does (:class:`~jurist.errors.Terminated`).

    Further SIGTERMs are ignored: the stop is under way (finished items are being committed and
    the manifest written), and a second signal must not cut it short; SIGKILL still ends it.
    """
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise Terminated


def _stop_on_sigterm() -> None:
    """Handle SIGTERM like Ctrl-C in a process that runs one command line (the console script).
    The default action would end the process at once, leaving a run's manifest on ``"running"``
    and its last finished items uncommitted."""
    if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _terminate)


def main(argv: list[str] | None = None) -> NoReturn:
    """Run the CLI and exit; the exit status follows :class:`jurist.errors.ExitCode` for every command.

    Every error is one line on stderr, ``error: ...``, naming the file and, where known, the
    line or row and the field; ``jurist --debug ...`` (or ``JURIST_DEBUG=1``) also prints the
    traceback. Usage errors exit 2 (Click's rule). Ctrl-C exits 130 and says that the same
    command resumes; so does SIGTERM in the console script, with exit 143. An unexpected error
    (a bug) exits 70 and asks for a report.
    """
    from jurist.redaction import install_log_redaction

    if argv is None:  # this process runs one command line and ends
        _collect_less()
        _stop_on_sigterm()
    install_log_redaction()
    _register_commands()
    args = list(sys.argv[1:] if argv is None else argv)
    # Known before parsing, so an error while parsing the command line honours it too.
    first_command = next((i for i, arg in enumerate(args) if not arg.startswith("-")), len(args))
    from_env = os.environ.get("JURIST_DEBUG", "") not in ("", "0")
    _state["debug"] = from_env or "--debug" in args[:first_command]
    try:
        code = _run(args)
    except KeyboardInterrupt as exc:
        terminated = isinstance(exc, Terminated)
        if _state["debug"]:
            traceback.print_exception(exc, file=sys.stderr)
        if not _interrupted_reported(exc):
            typer.echo(
                f"{'stopped by SIGTERM' if terminated else 'interrupted'}: work already finished is "
                "kept; run the same command again to resume",
                err=True,
            )
        sys.exit(int(ExitCode.TERMINATED if terminated else ExitCode.INTERRUPTED))
    except Exception as exc:
        if isinstance(exc, BrokenPipeError):  # e.g. `jurist tasks | head`: the reader left early
            with contextlib.suppress(OSError, ValueError):
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(BROKEN_PIPE)
        described = describe_error(exc)
        if described is None:
            _fail(
                exc,
                f"internal error: {type(exc).__name__}: {exc} (a bug in jurist; run again with "
                "`jurist --debug ...` for the traceback, and please report it)",
                int(ExitCode.INTERNAL),
            )
        _fail(exc, *described)
    sys.exit(code)
