"""Where a run's items are judged: in this process, in several local processes, or on Ray.

A :class:`Scale` says which backend judges a run (``local`` or ``ray``), how many local
processes (``workers``) and which Ray cluster (``address``). The verbs set it for the
runs they start with :func:`scaling` (``jurist judge --workers N --backend ray``), so a
task's judging code needs no argument for it; :func:`jurist.runner.run_items` reads it.

A judge cannot be sent to another process (a DSPy LM holds thread locks), so a run that
leaves this process also gets a :class:`JudgeRecipe`: the function that built the judge
and the config it was built from, both picklable (``cloudpickle``), and the repeat the judge
answers as (a jury's repeated member). Each process rebuilds the judge from it, with its
share of the config's rate limits, and the runner refuses to go on unless the rebuilt
judge's fingerprint equals the driver's.

What scaling never changes: answers, the cache, fingerprints, what a run directory holds,
its order (by dataset position), and every figure computed from it.
"""

from __future__ import annotations

import contextvars
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Literal

from jurist.errors import ConfigError
from jurist.judges.cache_context import current_repeat, repeat_salt
from jurist.judges.config import JudgeConfig
from jurist.judges.judge import Judge

Backend = Literal["local", "ray"]

AUTO_ITEMS_PER_WORKER = 5000
"""``workers="auto"`` gives each process at least this many items to judge: starting one
costs one to two seconds and its own copy of DSPy and LiteLLM in memory, which a smaller
share of the work does not pay back (``docs/scale.md`` has the measurements)."""

AUTO_CONCURRENCY_PER_WORKER = 32
"""... and at least this many items in flight: below it, one process keeps up with any
provider slower than about 0.1 s per answer, and more processes only cost their start."""

RATE_LIMIT_FIELDS = ("rpm", "tpm")
"""Config fields that limit one process's request or token rate: each of N processes gets 1/N."""


@dataclass(frozen=True)
class Scale:
    """Where a run is judged.

    Attributes:
        backend: ``local`` (this machine) or ``ray`` (a Ray cluster: the extra ``jurist[ray]``).
        workers: Local processes: a number, or ``"auto"`` (one process for small runs, up to
            one per core for large ones; :func:`worker_count`). Ignored by ``ray``, which
            spreads items over the cluster's CPUs.
        address: The Ray cluster (``ray://host:10001``, ``host:6379``, ``auto``); ``None``
            uses ``$RAY_ADDRESS``, or starts a Ray instance on this machine.
    """

    backend: Backend = "local"
    workers: int | Literal["auto"] = 1
    address: str | None = None

    def __post_init__(self) -> None:
        if self.backend not in ("local", "ray"):
            raise ConfigError(f"unknown backend {self.backend!r} (local or ray)", field="backend")
        if self.workers != "auto" and (not isinstance(self.workers, int) or self.workers < 1):
            raise ConfigError(
                f"workers must be a number >= 1 or 'auto' (got {self.workers!r})", field="workers"
            )

    @property
    def in_process(self) -> bool:
        """Whether this scale judges in the calling process (one local worker)."""
        return self.backend == "local" and self.workers == 1


_current: contextvars.ContextVar[Scale | None] = contextvars.ContextVar("jurist_scale", default=None)


def current_scale() -> Scale:
    """The scale set by the innermost :func:`scaling` (default: this process alone)."""
    return _current.get() or Scale()


@contextmanager
def scaling(scale: Scale) -> Iterator[Scale]:
    """Judge the runs started in this block at ``scale`` (see :class:`Scale`)."""
    token = _current.set(scale)
    try:
        yield scale
    finally:
        _current.reset(token)


def parse_backend(value: str) -> Backend:
    """``--backend`` as given: ``local`` or ``ray``.

    Raises:
        ConfigError: Neither.
    """
    text = value.strip().lower()
    if text == "local":
        return "local"
    if text == "ray":
        return "ray"
    raise ConfigError(f"--backend takes local or ray (got {value!r})", field="backend")


def parse_workers(value: str | int) -> int | Literal["auto"]:
    """``--workers`` as given: a number >= 1 or ``auto``.

    Raises:
        ConfigError: Neither.
    """
    text = str(value).strip().lower()
    if text == "auto":
        return "auto"
    if text.isdigit() and int(text) >= 1:
        return int(text)
    raise ConfigError(f"--workers takes a number >= 1 or 'auto' (got {value!r})", field="workers")


def worker_count(workers: int | Literal["auto"], pending: int | None, concurrency: int) -> int:
    """How many local processes judge a run.

    ``auto`` is one process per core at most, and no more than give each one
    :data:`AUTO_ITEMS_PER_WORKER` items and :data:`AUTO_CONCURRENCY_PER_WORKER` items in
    flight (an unknown count of items counts as small): so one process for most runs. A
    number is taken as given, but never more processes than items to judge or than
    concurrent items (each process judges at least one item at a time).
    """
    cores = os.cpu_count() or 1
    if workers == "auto":
        wanted = min(
            cores, (pending or 0) // AUTO_ITEMS_PER_WORKER, concurrency // AUTO_CONCURRENCY_PER_WORKER
        )
    else:
        wanted = workers
        if pending is not None:
            wanted = min(wanted, pending)
    return max(1, min(wanted, concurrency))


@dataclass(frozen=True)
class JudgeRecipe:
    """How to build a run's judge again in another process.

    Attributes:
        make: Builds the judge from a config (e.g. ``functools.partial(task.make_judge,
            options=options)``); it must be picklable by ``cloudpickle``.
        config: The config the driver's judge was built from.
        repeat: The repeat of its config the driver's judge answers as (a jury member asked
            several times; :func:`~jurist.judges.cache_context.repeat_salt`): by default the one in force
            where the recipe is made. It salts the cache keys, not the fingerprint, so each
            process builds its judge under the same repeat.
    """

    make: Callable[[JudgeConfig], Judge]
    config: JudgeConfig
    repeat: int = field(default_factory=current_repeat)

    def share(self, processes: int) -> JudgeConfig:
        """The config one of ``processes`` processes builds its judge with: the same, except
        that each rate limit it sets (:data:`RATE_LIMIT_FIELDS`) is divided among them."""
        update: dict[str, float] = {}
        for name in RATE_LIMIT_FIELDS:
            limit = getattr(self.config, name, None)
            if limit is not None and processes > 1:
                update[name] = max(1, limit // processes) if isinstance(limit, int) else limit / processes
        return self.config.model_copy(update=update) if update else self.config

    def build(self, processes: int = 1) -> Judge:
        """The judge, built with one process's share of the config (see :meth:`share`) and
        as the driver's repeat."""
        with repeat_salt(self.repeat):
            return self.make(self.share(processes))


def check_fingerprint(rebuilt: str, expected: str, where: str) -> None:
    """Refuse a judge rebuilt elsewhere that would answer differently.

    Raises:
        ConfigError: ``rebuilt`` differs from ``expected``.
    """
    if rebuilt != expected:
        raise ConfigError(
            f"the judge rebuilt in {where} has fingerprint {rebuilt}, this process's {expected}: "
            "the judge depends on state that does not travel to another process; "
            "judge with --workers 1 and --backend local",
            field="workers",
        )
