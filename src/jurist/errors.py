"""Every error jurist raises on purpose, each carrying what a user needs to fix it, and the
one table of exit codes every ``jurist`` command shares."""

from __future__ import annotations

from enum import IntEnum
from pathlib import Path
from typing import Any


class ExitCode(IntEnum):
    """What a ``jurist`` command's exit status means: the same for every command."""

    OK = 0
    """Success: everything asked for was done (and every gate, if any, passed)."""
    GATE_FAILED = 1
    """Done, but a quality gate was not met (``jurist gate``, ``calibrate --min-...``)."""
    BAD_INPUT = 2
    """Bad input, config or usage: nothing was judged past the problem; the message names it."""
    FAILED_ITEMS = 3
    """The run completed, but some items (or all) failed; they are recorded with their raw
    answers and can be judged again with ``--retry-failed``."""
    RUN_LOCKED = 4
    """Another process is writing to the same run directory; nothing was touched."""
    FATAL_PROVIDER = 5
    """The provider refused every call (wrong key, unknown model or provider, used-up quota or
    billing limit, unreachable server, failed TLS handshake): the run stopped early; items
    already done are kept."""
    TRACKING_FAILED = 6
    """The work is done and on disk (run directory, calibration, artifact), but logging it to
    MLflow failed (tracking server unreachable or refusing); the message names the URI."""
    COST_LIMIT = 7
    """Stopped at the cost limit (``--max-cost``): items finished before are kept, and the
    same command with a higher limit (or none) resumes where it stopped."""
    INTERNAL = 70
    """A bug in jurist (an unexpected exception): one line, and the traceback with ``--debug``."""
    INTERRUPTED = 130
    """Interrupted (Ctrl-C); items already done are kept, the same command resumes."""
    TERMINATED = 143
    """Stopped by SIGTERM (a process manager, ``kill``, ``timeout``): as for Ctrl-C, items
    already done are kept, the run's manifest says ``"stopped"``, the same command resumes."""


def install_hint(extra: str) -> str:
    """How to install one of jurist's extras, from a published release or from a clone.

    Examples:
        >>> install_hint("view")
        'pip install "jurist[view]" (in a clone of jurist: pip install ".[view]")'
    """
    return f'pip install "jurist[{extra}]" (in a clone of jurist: pip install ".[{extra}]")'


class JuristError(Exception):
    """Base class of jurist's own errors; the CLI prints these without a traceback."""

    exit_code: ExitCode = ExitCode.BAD_INPUT


class InputError(JuristError):
    """A bad input file: names the file, the line or row, and the field.

    Args:
        message: What is wrong, in words a user can act on.
        path: The file that holds the bad value.
        line: The 1-based line (JSONL) or row (tables, counting the header as line 1) number.
        field: The field or column that is missing or wrong.
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | Path | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.path = str(path) if path is not None else None
        self.line = line
        self.field = field
        self.reason = message
        where = []
        if self.path is not None:
            where.append(self.path)
        if line is not None:
            where.append(f"line {line}")
        if field is not None:
            where.append(f"field '{field}'")
        prefix = ", ".join(where)
        super().__init__(f"{prefix}: {message}" if prefix else message)


class ConfigError(InputError):
    """A judge configuration (YAML file or command-line override) that does not validate."""


class RowError(InputError):
    """A bad row of data given in memory (a pandas DataFrame or a list of dicts): names the
    row by its 0-based position (the DataFrame's row, the list's index) and the field.

    Args:
        message: What is wrong, in words a user can act on.
        given: ``"DataFrame"`` or ``"list"``: how the rows were given.
        row: The row's 0-based position (``None``: the data as a whole).
        field: The field or column that is missing or wrong.
    """

    def __init__(self, message: str, *, given: str, row: int | None = None, field: str | None = None) -> None:
        super().__init__(message, field=field)
        self.given = given
        self.row = row
        where = [given if row is None else f"{given} {'row' if given == 'DataFrame' else 'item'} {row}"]
        if field is not None:
            where.append(f"field '{field}'")
        self.args = (f"{', '.join(where)}: {message}",)


class RunDirectoryError(JuristError):
    """A run directory that cannot be used, e.g. one made with another config or dataset."""


class RunLockedError(RunDirectoryError):
    """Another live process holds the run directory's lock."""

    exit_code = ExitCode.RUN_LOCKED


class FatalProviderError(JuristError):
    """A provider error no retry can fix (authentication, permission, unknown model or
    provider, missing key, quota or billing, bad ``api_base``, connection refused, TLS
    handshake): the run stops at once instead of failing item by item. The message names
    the config file, model and provider and what to do.

    Attributes:
        usage: The usage (a :class:`jurist.schemas.Usage`) of the provider calls made by the
            judgment that met the error, or ``None``: the item is not recorded, so the runner
            adds these calls to the run's usage itself.
    """

    exit_code = ExitCode.FATAL_PROVIDER
    usage: Any = None


class CostLimitReached(JuristError):
    """The spend of a run reached its cost limit (``--max-cost``, ``max_cost=``): no new
    item was started, the items in flight were finished and recorded, and the run stopped.
    The same command with a higher limit (or none) resumes.

    Attributes:
        spent: Dollars spent by the runs under the limit (recorded before, and in this call).
        limit: The limit in dollars.
        run_dir: The run directory that stopped.
    """

    exit_code = ExitCode.COST_LIMIT

    def __init__(self, message: str, *, spent: float, limit: float, run_dir: str | Path) -> None:
        super().__init__(message)
        self.spent = spent
        self.limit = limit
        self.run_dir = Path(run_dir)


class UnfinishedRunError(RunDirectoryError):
    """A run asked to be scored is not finished: killed, stopped, interrupted, or still being
    judged. It is scored only when a partial score is asked for (``jurist score --partial``).

    Exit code 2, or 4 (:attr:`ExitCode.RUN_LOCKED`) when a live process is judging it now.
    """

    def __init__(self, message: str, *, live: bool) -> None:
        super().__init__(message)
        self.live = live
        self.exit_code = ExitCode.RUN_LOCKED if live else ExitCode.BAD_INPUT


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived (raised by the ``jurist`` command's handler). A subclass of
    ``KeyboardInterrupt``, so every place that stops cleanly on Ctrl-C stops cleanly on it;
    the command exits with :attr:`ExitCode.TERMINATED`."""


class WorkerLostError(JuristError):
    """Worker processes (local, or Ray's) died again and again while judging the same item, or
    while starting: the run stopped; items already done are kept."""

    exit_code = ExitCode.INTERNAL


class ArtifactError(JuristError):
    """A compiled-program artifact that cannot be loaded for this task or version."""
