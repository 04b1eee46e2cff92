"""The batch engine: judge items concurrently, record each as it finishes, resume after a stop.

A run is (task, dataset, judge). Its directory holds ``manifest.json`` (what the run is:
config, judge fingerprint, dataset hash, versions, status) and ``results.sqlite`` (every
finished item, each row with the fingerprint of the judge that made it). Running again
into the same directory skips finished items, so an interrupted run resumes where it
stopped and a finished one makes no provider calls at all.

What the engine guarantees:

- **One writer.** The run directory's OS lock (:func:`jurist.runner.run_lock`) is held for
  the whole call; a second process gets :class:`~jurist.errors.RunLockedError` (exit 4)
  before it reads or writes anything.
- **One judge per directory.** A directory made for another task, judge (fingerprint) or
  dataset is refused, and so is one whose ``results.sqlite`` holds rows but whose
  ``manifest.json`` is gone (nobody can tell which judge made them), or whose rows carry
  another judge's fingerprint (:class:`~jurist.errors.RunDirectoryError`, exit 2).
- **Finished items are durable quickly.** The event loop hands each finished item to one
  writer thread (:class:`~jurist.runner.store.ResultWriter`), which commits them in batches:
  at the latest 64 items or 0.2 s after an item finished, and everything when the run ends,
  stops or is interrupted. A killed process loses at most the items of that last moment.
- **Failures are recorded, not fatal.** An item whose judgment fails is recorded with its
  error and raw answers; the batch goes on.
- **Fatal provider errors stop the run.** A judge that raises
  :class:`~jurist.errors.FatalProviderError` (wrong key, unknown model, unreachable server)
  stops the whole run at once: items in flight are cancelled, finished items are kept, the
  manifest's status says ``"stopped"``, and the error is raised (exit 5). Before an item in
  flight stops, its provider attempt in flight ends (a request that may have reached the
  provider is answered; nothing new is sent), so the calls of the judgments the error
  stopped, in no item, are known: the manifest's ``usage`` counts them too (and
  ``unrecorded_usage`` holds them alone), and its ``calls`` are the requests that reached
  the provider. (With worker processes or Ray, only the stopping judgment's calls are
  added: items in flight in other processes are cancelled.)
- **A cost limit stops the run cleanly.** Under :func:`~jurist.runner.budget.spending_limit`
  no item is started once the spend reached the limit; items in flight finish and are
  recorded, the manifest's status says ``"stopped"``, and
  :class:`~jurist.errors.CostLimitReached` is raised (exit 7); a higher limit resumes.
- **SIGTERM stops the run as Ctrl-C does.** When the ``jurist`` command's handler raises
  :class:`~jurist.errors.Terminated`, finished items are committed, the manifest's status
  says ``"stopped"`` (``stopped_by``: ``"SIGTERM"``), one line says so on stderr, and the
  same command resumes.
- **A damaged** ``results.sqlite`` is reported with the way to recover
  (:class:`~jurist.errors.RunDirectoryError`), never as a traceback.
- **The manifest says whether the run is complete.** ``status`` is ``"running"`` while it
  is judged (and after a kill), ``"finished"`` once every item is recorded, ``"stopped"`` or
  ``"interrupted"`` after an early stop; ``total`` is the number of items the run judges
  (``None`` when unknown). ``jurist score`` refuses a run that is not finished
  (:mod:`jurist.runner.finished`). The manifest is written atomically (:mod:`jurist.atomic`):
  a write that fails (a full disk) leaves the previous one and no temporary file.
"""

from __future__ import annotations

import asyncio
import gc
import json
import platform
import sys
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from jurist.atomic import atomic_write_text
from jurist.errors import ConfigError, FatalProviderError, RunDirectoryError, Terminated
from jurist.judges.cache_context import deferring_cache_writes, writing_cache_together
from jurist.judges.judge import Judge, Stopping, judging_in_run, program_identity
from jurist.redaction import redact
from jurist.runner.blocking import call_blocking
from jurist.runner.budget import Budget, active_limit, check_priced
from jurist.runner.given import with_given
from jurist.runner.lock import run_lock
from jurist.runner.plan import capture, planning_active
from jurist.runner.scale import JudgeRecipe, Scale, current_scale, worker_count
from jurist.runner.store import MANIFEST, RESULTS_DB, ResultStore, ResultWriter
from jurist.runner.tally import Item, RunSummary, Tally, judge_one, pending, to_judge
from jurist.schemas import ItemResult, Usage


def versions() -> dict[str, str]:
    """Versions of the packages that decide a run's answers."""
    found = {"python": platform.python_version()}
    for package in ("jurist", "dspy", "litellm", "pydantic"):
        try:
            found[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            found[package] = "not installed"
    return found


def config_changes(before: Any, now: Any) -> list[str]:
    """``["temperature 0 → 0.3"]``: each field of a judge config (as the manifest records it)
    whose value differs, in field order; nested values compared as a whole."""
    if not isinstance(before, dict) or not isinstance(now, dict):
        return []

    def shown(value: Any) -> str:
        if value is None:
            return "unset"
        if isinstance(value, float) and value.is_integer():
            return str(int(value))
        return json.dumps(value, sort_keys=True, default=str).strip('"')

    return [
        f"{key} {shown(before.get(key))} → {shown(now.get(key))}"
        for key in dict.fromkeys([*before, *now])
        if before.get(key) != now.get(key)
    ]


def _check_manifest(
    run_dir: Path, identity: dict[str, Any], config: dict[str, Any] | None = None
) -> dict[str, Any] | None:
    path = run_dir / MANIFEST
    if not path.exists():
        return None
    try:
        existing = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise RunDirectoryError(f"{path} is not valid JSON ({exc}); use another --out directory") from None
    if not isinstance(existing, dict):
        raise RunDirectoryError(f"{path} is not a jurist run manifest; use another --out directory")
    for key, value in identity.items():
        changes = config_changes(existing.get("config"), config) if key.startswith("judge") else []
        if existing.get(key) != value and changes:
            raise RunDirectoryError(
                f"{run_dir} holds a run of another judge config ({', '.join(changes)}); resume it "
                "with the same config, or write to another --out directory"
            )
        if existing.get(key) != value:
            raise RunDirectoryError(
                f"{run_dir} holds a run with another {key.replace('_', ' ')} "
                f"({existing.get(key)!r}, now {value!r}); resume it with the same inputs, "
                "or write to another --out directory"
            )
    return existing


def _check_rows(run_dir: Path, fingerprint: str, has_manifest: bool) -> None:
    """Refuse recorded rows that this judge cannot adopt (read only: nothing is changed)."""
    db = run_dir / RESULTS_DB
    if not db.exists():
        return
    with ResultStore(db) as store:
        recorded = sum(store.counts().values())
        if not recorded:
            return
        if not has_manifest:
            raise RunDirectoryError(
                f"{run_dir} holds {recorded} judged item(s) in {RESULTS_DB} but no {MANIFEST}, so the "
                f"judge that made them is unknown; move {db} aside to judge into this directory "
                "afresh, or write to another --out directory"
            )
        others = {found for found in store.fingerprints() if found is not None and found != fingerprint}
        if others:
            raise RunDirectoryError(
                f"{run_dir} holds items judged by another judge (fingerprint {sorted(others)[0]}, now "
                f"{fingerprint}); write to another --out directory, or move {db} aside to start afresh"
            )


@contextmanager
def _long_lived_objects_frozen() -> Iterator[None]:
    """Leave the objects that exist before the batch out of the cycle collector's scans
    while it runs (``gc.freeze``), and give them back after (``gc.unfreeze``).

    A judging process holds a large, long-lived heap (DSPy, LiteLLM, pandas and their
    modules) and each item allocates thousands of short-lived objects, so the collector's
    full collections re-scan the whole heap again and again: about 15% of the CPU time of
    an item. Objects created during the run are collected as usual, and after it nothing
    stays frozen, so garbage that the frozen objects become later is still collected.
    """
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def _unrecorded_before(existing: dict[str, Any] | None) -> Usage:
    """The usage of unrecorded judgments that earlier calls of the run noted in its manifest."""
    try:
        return Usage.model_validate((existing or {}).get("unrecorded_usage") or {})
    except ValueError:
        return Usage()


def _write_manifest(run_dir: Path, manifest: dict[str, Any]) -> None:
    """Replace the run's manifest atomically (redacted); a failure names the file and leaves
    the previous manifest and no temporary file."""
    atomic_write_text(run_dir / MANIFEST, json.dumps(manifest, indent=2, default=str))


async def _run(
    work: Iterator[tuple[int, Item]], judge: Judge, writer: ResultWriter, tally: Tally, *, concurrency: int
) -> None:
    """Judge ``work`` on this process's event loop, ``concurrency`` items at a time."""
    # The event loop hands each finished item (and the answers that item put in the response
    # cache) to the writer thread and never waits for the disk; it commits in batches.
    finished: asyncio.Queue[asyncio.Task[ItemResult]] = asyncio.Queue()
    running: set[asyncio.Task[ItemResult]] = set()
    stopping = Stopping()

    async def judge_and_store(position: int, item: Item) -> ItemResult:
        with deferring_cache_writes() as cache_writes, judging_in_run(stopping):
            result = await judge_one(judge, item)
        writer.submit(result, cache_writes, position, item.recorded_inputs)
        return result

    def done(task: asyncio.Task[ItemResult]) -> None:
        running.discard(task)
        finished.put_nowait(task)

    def record(task: asyncio.Task[ItemResult]) -> None:
        # An exception is read here (asyncio would log one left unread); it stops the run.
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:
            raise exc
        if writer.error is not None:
            raise writer.error
        tally.record(task.result())

    in_flight = 0
    try:
        for position, item in work:
            while in_flight >= concurrency or (in_flight and not tally.may_launch()):
                record(await finished.get())
                in_flight -= 1
            if not tally.may_launch():
                break
            task = asyncio.create_task(judge_and_store(position, item))
            running.add(task)
            task.add_done_callback(done)
            in_flight += 1
        while in_flight:
            record(await finished.get())
            in_flight -= 1
    except FatalProviderError:
        # The provider attempts in flight end before their judgments stop, so the calls they
        # made (which may have reached the provider) are counted in the run's usage.
        stopping.finish_calls = True
        raise
    finally:
        for task in list(running):
            task.cancel()
        if running:
            await asyncio.gather(*running, return_exceptions=True)
        tally.summary.add_unrecorded(stopping.unrecorded)
        while not finished.empty():
            task = finished.get_nowait()
            if not task.cancelled():
                # Read (the run already stops for the first error); the calls of a judgment a
                # fatal provider error stopped are still the run's.
                tally.summary.count_unrecorded(task.exception())


def _judge_all(
    items: Iterable[Item],
    judge: Judge,
    recipe: JudgeRecipe | None,
    store: ResultStore,
    tally: Tally,
    *,
    scale: Scale,
    total: int | None,
    concurrency: int,
    retry_failed: bool,
) -> None:
    """Judge the items not recorded yet with the backend ``scale`` names; one writer thread
    records every finished item in ``store``."""
    # A fresh run has nothing to skip; a resumed one reads every recorded status at once.
    recorded = store.statuses() if store.counts() else {}
    work = pending(items, recorded, retry_failed=retry_failed, tally=tally)
    writer = ResultWriter(store, writing_together=writing_cache_together)
    try:
        if recipe is not None and scale.backend == "ray":
            from jurist.runner.ray_backend import judge_on_ray

            judge_on_ray(
                work,
                recipe,
                judge.fingerprint(),
                writer,
                tally,
                address=scale.address,
                concurrency=concurrency,
            )
            return
        count = to_judge(total, recorded, retry_failed=retry_failed)
        processes = worker_count(scale.workers, count, concurrency)
        if recipe is not None and processes > 1:
            from jurist.runner.workers import judge_in_workers

            judge_in_workers(
                work, recipe, judge.fingerprint(), writer, tally, processes=processes, concurrency=concurrency
            )
            return
        call_blocking(lambda: asyncio.run(_run(work, judge, writer, tally, concurrency=concurrency)))
    finally:
        writer.close()
        if writer.error is not None:
            raise writer.error


def _scale_for(scale: Scale | None, recipe: JudgeRecipe | None, task: str) -> Scale:
    """The scale a run is judged at: the one given, or else the one of :func:`scaling`.

    A run whose judge comes without a recipe is judged in this process: asked explicitly
    to leave it, it is refused; asked by the surrounding :func:`scaling`, it says so on stderr.
    """
    chosen = scale if scale is not None else current_scale()
    if recipe is not None or chosen.in_process or chosen.workers == "auto" and chosen.backend == "local":
        return chosen
    message = (
        f"{task}: this run's judge cannot be rebuilt in another process (no recipe); it is judged in this one"
    )
    if scale is not None:
        raise ConfigError(message + "; judge with --workers 1 and --backend local", field="workers")
    print(message, file=sys.stderr)
    return Scale()


def run_items(
    items: Iterable[Item],
    judge: Judge,
    run_dir: str | Path,
    *,
    task: str,
    dataset: dict[str, Any],
    config: dict[str, Any],
    task_source: str | None = None,
    task_options: dict[str, Any] | None = None,
    total: int | None = None,
    concurrency: int = 8,
    retry_failed: bool = False,
    progress: bool = True,
    recipe: JudgeRecipe | None = None,
    scale: Scale | None = None,
) -> RunSummary:
    """Judge ``items`` into ``run_dir``, skipping items already recorded there.

    The run directory's lock is held for the whole call (see :mod:`jurist.runner.lock`);
    every row written carries the judge's fingerprint.

    Args:
        items: The dataset's items, streamed; ids must be unique.
        judge: The judge to call for each item.
        run_dir: The run directory; created if missing, resumed if it holds this run.
        task: The task name recorded in the manifest.
        task_source: Where the task comes from (``built-in``, an entry point, or a YAML
            file's path), recorded in the manifest so a viewer can find the task again.
        task_options: The task's options as JSON-ready data, recorded in the manifest.
        dataset: ``{"path": ..., "sha256": ..., "items": ...}`` of the input data.
        config: The judge config as JSON-ready data (it never holds secrets).
        total: Number of items, for the progress bar's ETA.
        concurrency: How many items are judged at once (in all processes together).
        retry_failed: Judge items recorded as failed again (by default they are kept).
        progress: Show a progress bar (rate, ETA, failures) on stderr.
        recipe: How to build ``judge`` again in another process; without one, the run is
            judged in this process.
        scale: Where to judge (:class:`~jurist.runner.scale.Scale`); default: the scale set
            by :func:`~jurist.runner.scale.scaling`, or this process alone.

    Raises:
        RunLockedError: Another process is judging or exporting into ``run_dir``; nothing
            was read or written.
        RunDirectoryError: ``run_dir`` holds a run of another task, judge or dataset, holds
            results without their manifest, or its ``results.sqlite`` is damaged.
        ConfigError: ``scale`` asks for other processes but no ``recipe`` is given, or the
            judge rebuilt from it has another fingerprint.
        WorkerLostError: Worker processes died again and again while judging the same item.
        FatalProviderError: The provider refused in a way no retry can fix; the run stopped,
            items finished before are kept and the manifest's status is ``"stopped"``.
        CostLimitReached: The spend reached the cost limit set by
            :func:`~jurist.runner.budget.spending_limit`: no item was started after it, the
            items in flight were recorded, the manifest's status is ``"stopped"`` (its
            ``stopped_by`` says so), and the same call with a higher limit resumes.
        KeyboardInterrupt: Interrupted; finished items are kept, the manifest's status is
            ``"interrupted"``, and the same call resumes.
        Terminated: SIGTERM (the ``jurist`` command's handler raised it); as for Ctrl-C, but
            the manifest's status is ``"stopped"`` and its ``stopped_by`` is ``"SIGTERM"``.
        Planned: Inside :func:`jurist.runner.plan.planning` (a dry run): nothing was judged,
            read or written; it holds what would have been judged.
    """
    run_path = Path(run_dir)
    if planning_active():  # a dry run: hand over what would be judged, judge and write nothing
        capture(items, judge, run_path, retry_failed=retry_failed)
    chosen = _scale_for(scale, recipe, task)
    with run_lock(run_path):
        return _run_locked(
            items,
            judge,
            run_path,
            task=task,
            task_source=task_source,
            task_options=task_options,
            dataset=dataset,
            config=config,
            total=total,
            concurrency=concurrency,
            retry_failed=retry_failed,
            progress=progress,
            recipe=recipe,
            scale=chosen,
        )


def _run_locked(
    items: Iterable[Item],
    judge: Judge,
    run_path: Path,
    *,
    task: str,
    task_source: str | None,
    task_options: dict[str, Any] | None,
    dataset: dict[str, Any],
    config: dict[str, Any],
    total: int | None,
    concurrency: int,
    retry_failed: bool,
    progress: bool,
    recipe: JudgeRecipe | None,
    scale: Scale,
) -> RunSummary:
    fingerprint = judge.fingerprint()
    identity = {
        "task": task,
        "judge": judge.name,
        "judge_fingerprint": fingerprint,
        "dataset_sha256": dataset.get("sha256"),
    }
    existing = _check_manifest(run_path, identity, config)
    _check_rows(run_path, fingerprint, has_manifest=existing is not None)
    limit = active_limit()
    if limit is not None:
        check_priced(judge)  # before anything is written: a limit needs the model's price
    program = program_identity(judge)
    manifest: dict[str, Any] = {
        **identity,
        "task_source": task_source,
        "task_options": task_options or {},
        "program": program,
        "dataset": with_given(dataset),
        "config": config,
        "versions": versions(),
        "created_at": (existing or {}).get("created_at") or datetime.now(UTC).isoformat(timespec="seconds"),
        "status": "running",
        "total": total,
    }
    if _unrecorded_before(existing) != Usage():  # kept while this call runs (and if it is killed)
        manifest["unrecorded_usage"] = _unrecorded_before(existing).model_dump()
    summary = RunSummary(run_dir=run_path)
    start = time.perf_counter()
    error: Exception | None = None
    terminated = False
    with ResultStore(run_path / RESULTS_DB, judge_fingerprint=fingerprint, program=program) as store:
        _write_manifest(run_path, manifest)
        with tqdm(
            total=total, desc=f"{task} · {judge.name}", unit="item", disable=not progress, dynamic_ncols=True
        ) as bar:
            try:
                tally = Tally(summary, bar, Budget(limit))
                if limit is not None:
                    tally.budget.start(run_path, store.total_usage().cost)
                with _long_lived_objects_frozen():
                    _judge_all(
                        items,
                        judge,
                        recipe,
                        store,
                        tally,
                        scale=scale,
                        total=total,
                        concurrency=concurrency,
                        retry_failed=retry_failed,
                    )
                if tally.held_back and not tally.work_done:  # the cost limit left items unstarted
                    raise tally.budget.reached(run_path, summary.judged)
            except KeyboardInterrupt as exc:
                summary.interrupted = True
                terminated = isinstance(exc, Terminated)
            except Exception as exc:  # a fatal provider error, a damaged store: stop, keep what is done
                error = exc
                summary.stopped = redact(str(exc))
                summary.count_unrecorded(exc)
        summary.elapsed_s = time.perf_counter() - start
        finished = not summary.interrupted and error is None
        status = "interrupted" if summary.interrupted and not terminated else "stopped"
        manifest.update(
            status="finished" if finished else status,
            finished_at=datetime.now(UTC).isoformat(timespec="seconds"),
        )
        if finished:  # every item was handed out and recorded: the exact count
            manifest["total"] = summary.skipped + summary.judged
        if error is not None:
            manifest["stopped_by"] = summary.stopped
        elif terminated:
            manifest["stopped_by"] = "SIGTERM"
        try:
            counts = store.counts()
            # Every provider call of the run: the recorded items' and those of judgments a
            # fatal provider error stopped (kept apart as unrecorded_usage).
            unrecorded = _unrecorded_before(existing).add(summary.unrecorded)
            manifest.update(
                counts={"ok": counts.get("ok", 0), "failed": counts.get("failed", 0)},
                usage=store.total_usage().add(unrecorded).model_dump(),
            )
            if unrecorded != Usage():
                manifest["unrecorded_usage"] = unrecorded.model_dump()
        except RunDirectoryError:
            pass  # the store itself is what failed; the error below says so
    try:
        _write_manifest(run_path, manifest)
    except OSError:
        if finished:
            raise
        # The run stops for another reason (often the same full disk): that one is reported.
    if summary.interrupted:
        print(
            f"{'stopped by SIGTERM' if terminated else 'interrupted'}: {summary.judged} items finished "
            f"in this call are kept in {run_path}; run the same command again to resume",
            file=sys.stderr,
        )
        raise Terminated if terminated else KeyboardInterrupt
    if error is not None:
        raise error
    return summary
