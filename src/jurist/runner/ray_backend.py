"""Judge a run on a Ray cluster (``jurist judge --backend ray``; the extra ``jurist[ray]``).

The calling process is the **driver**, as with local workers (:mod:`jurist.runner.workers`):
it holds the run directory's lock, reads the dataset and is the one writer of
``results.sqlite``. Items go to the cluster in small chunks, each a Ray task that rebuilds
the judge from the run's :class:`~jurist.runner.scale.JudgeRecipe` (once per Ray worker
process, then kept), checks its fingerprint against the driver's, judges the chunk's
items concurrently, writes their answers to the response cache, and returns their
results, which the driver records as each chunk comes back.

The driver keeps at most ``concurrency`` items in flight on the cluster. A chunk is as
small as keeps every CPU of the cluster busy at that concurrency, so little is judged
again when a task is lost.

- **A worker that dies** (killed, node lost): Ray runs its task again (up to
  :data:`TASK_RETRIES` times); items it had finished are answered from the response cache
  where the cache directory is shared (one machine, or a shared filesystem).
- **A driver that dies**: its tasks end with it; every item recorded before is kept, and
  the same command judges only the rest.
- **Rate limits** (``rpm``/``tpm`` in the config) are divided among the cluster's CPUs.

Where the cluster is: ``address`` (``--ray-address``, else ``$RAY_ADDRESS``), e.g.
``ray://head:10001``, ``head:6379``, or ``auto`` for the one ``ray start`` started on this
machine; with neither, a Ray instance is started on this machine, and it stays up until the
process ends (a jury's jurors share it). Ray is imported only here, when this backend
judges.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import os
import pickle
from collections.abc import Iterator
from typing import Any

import cloudpickle

from jurist.errors import ConfigError, JuristError, WorkerLostError, install_hint
from jurist.judges.judge import Judge
from jurist.runner.scale import JudgeRecipe, check_fingerprint
from jurist.runner.store import ResultWriter
from jurist.runner.tally import Item, Tally, judge_one
from jurist.schemas import ItemResult

TASK_RETRIES = 3
"""How many times Ray runs a chunk again after the worker process running it died."""

Work = tuple[int, Item]

_judges: dict[str, Judge] = {}
"""The judges this Ray worker process built, by the SHA-256 of their recipe."""


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ConfigError(
            f"the Ray backend needs Ray: {install_hint('ray')} (or judge with --backend local)",
            field="backend",
        ) from None
    return ray


def judge_chunk(
    recipe: bytes, fingerprint: str, processes: int, chunk: list[Work]
) -> list[tuple[int, ItemResult]]:
    """A Ray task: judge ``chunk`` concurrently with the judge ``recipe`` builds, return the results."""
    digest = hashlib.sha256(recipe).hexdigest()
    judge = _judges.get(digest)
    if judge is None:
        judge = pickle.loads(recipe).build(processes)
        check_fingerprint(judge.fingerprint(), fingerprint, "a Ray worker")
        _judges[digest] = judge

    async def judge_all() -> list[ItemResult]:
        return list(await asyncio.gather(*(judge_one(judge, item) for _, item in chunk)))

    results = asyncio.run(judge_all())
    return [(position, result) for (position, _), result in zip(chunk, results, strict=True)]


def _connect(ray: Any, address: str | None) -> None:
    """Connect to the cluster at ``address`` (else ``$RAY_ADDRESS``), or start a Ray instance
    here, unless this process is connected already. It stays connected until it exits."""
    if ray.is_initialized():
        return
    target = address or os.environ.get("RAY_ADDRESS") or "local"
    try:
        ray.init(address=target, include_dashboard=False, logging_level="warning", log_to_driver=False)
    except (ConnectionError, ValueError, RuntimeError) as exc:
        raise ConfigError(f"cannot reach the Ray cluster {target}: {exc}", field="ray-address") from None


def _raised(ray: Any, exc: BaseException) -> BaseException:
    """What a failed chunk stops the run with: jurist's own error as it was raised on the
    cluster (a fatal provider error, a fingerprint mismatch), or :class:`WorkerLostError`."""
    cause = getattr(exc, "cause", None)
    if isinstance(cause, JuristError):
        return cause
    if isinstance(exc, ray.exceptions.RayTaskError) and cause is not None:
        return cause
    return WorkerLostError(
        f"a Ray task died {TASK_RETRIES + 1} times ({type(exc).__name__}: {str(exc).splitlines()[0]}); "
        "finished items are kept: run the same command again to resume, or judge with --backend local"
    )


def judge_on_ray(
    work: Iterator[Work],
    recipe: JudgeRecipe,
    fingerprint: str,
    writer: ResultWriter,
    tally: Tally,
    *,
    address: str | None,
    concurrency: int,
) -> None:
    """Judge ``work`` on a Ray cluster, ``concurrency`` items in flight at most.

    Raises:
        ConfigError: Ray is not installed, the cluster cannot be reached, or a judge rebuilt
            on it has another fingerprint than the driver's.
        WorkerLostError: A chunk's task died more often than Ray retries it.
        FatalProviderError: A task met one; the run stops.
    """
    ray = _import_ray()
    _connect(ray, address)
    cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
    size = max(1, math.ceil(concurrency / cpus))
    remote = ray.remote(judge_chunk).options(max_retries=TASK_RETRIES, retry_exceptions=False, num_cpus=1)
    blob = ray.put(cloudpickle.dumps(recipe))
    processes = min(cpus, math.ceil(concurrency / size))
    running: dict[Any, list[Work]] = {}
    exhausted = False
    try:
        while True:
            while not exhausted and sum(map(len, running.values())) < concurrency and tally.may_launch():
                chunk: list[Work] = []
                while len(chunk) < size and tally.may_launch():
                    found = next(work, None)
                    if found is None:
                        exhausted = True
                        break
                    chunk.append(found)
                if chunk:
                    running[remote.remote(blob, fingerprint, processes, chunk)] = chunk
            if not running:
                return
            done, _ = ray.wait(list(running), num_returns=1)
            for ref in done:
                sent = dict(running.pop(ref))
                try:
                    results = ray.get(ref)
                except Exception as exc:
                    raise _raised(ray, exc) from None
                for position, result in results:
                    writer.submit(result, (), position, sent[position].recorded_inputs)
                    tally.record(result)
                if writer.error is not None:
                    raise writer.error
    finally:
        for ref in running:
            ray.cancel(ref, force=True)
