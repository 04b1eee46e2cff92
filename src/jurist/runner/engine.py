"""The batch engine: judge items concurrently, record each as it finishes, resume after a stop.

A run is (task, dataset, judge). Its directory holds ``manifest.json`` (what the run is:
config, judge fingerprint, dataset hash, versions) and ``results.sqlite`` (every finished
item). Running again into the same directory skips finished items, so an interrupted run
resumes where it stopped and a finished one makes no provider calls at all; a directory
made for another judge or dataset is refused rather than mixed.
"""

from __future__ import annotations

import asyncio
import json
import platform
import sys
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from jurist.errors import RunDirectoryError
from jurist.judges.judge import Judge, JudgeFailure
from jurist.runner.blocking import call_blocking
from jurist.runner.store import RESULTS_DB, ResultStore
from jurist.schemas import ItemResult, Usage

MANIFEST = "manifest.json"


@dataclass(frozen=True)
class Item:
    """One unit of work: an id unique in its dataset and the judge's keyword inputs."""

    id: str
    inputs: dict[str, Any]


@dataclass
class RunSummary:
    """What a call of :func:`run_items` did, and the state of the whole run after it."""

    run_dir: Path
    judged: int = 0
    skipped: int = 0
    ok: int = 0
    failed: int = 0
    elapsed_s: float = 0.0
    usage: Usage = field(default_factory=Usage)
    interrupted: bool = False

    @property
    def rate(self) -> float:
        """Items judged per second in this call."""
        return self.judged / self.elapsed_s if self.elapsed_s > 0 else 0.0


def versions() -> dict[str, str]:
    """Versions of the packages that decide a run's answers."""
    found = {"python": platform.python_version()}
    for package in ("jurist", "dspy", "litellm", "pydantic"):
        try:
            found[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            found[package] = "not installed"
    return found


def _check_manifest(run_dir: Path, identity: dict[str, Any]) -> dict[str, Any] | None:
    path = run_dir / MANIFEST
    if not path.exists():
        return None
    try:
        existing = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise RunDirectoryError(f"{path} is not valid JSON ({exc}); use another --out directory") from None
    for key, value in identity.items():
        if existing.get(key) != value:
            raise RunDirectoryError(
                f"{run_dir} holds a run with another {key.replace('_', ' ')} "
                f"({existing.get(key)!r}, now {value!r}); resume it with the same inputs, "
                "or write to another --out directory"
            )
    return existing


def _write_manifest(run_dir: Path, manifest: dict[str, Any]) -> None:
    tmp = run_dir / (MANIFEST + ".tmp")
    tmp.write_text(json.dumps(manifest, indent=2, default=str), encoding="utf-8")
    tmp.replace(run_dir / MANIFEST)


async def _judge_one(judge: Judge, item: Item) -> ItemResult:
    start = time.perf_counter()
    try:
        judgment = await judge.judge(item.inputs)
    except JudgeFailure as failure:
        return ItemResult(
            id=item.id,
            status="failed",
            error=str(failure),
            error_type=failure.error_type,
            raw=failure.raw,
            attempts=failure.attempts,
            latency_s=time.perf_counter() - start,
            usage=failure.usage,
        )
    return ItemResult(
        id=item.id,
        status="ok",
        output=judgment.output,
        raw=judgment.raw,
        attempts=judgment.attempts,
        latency_s=time.perf_counter() - start,
        usage=judgment.usage,
    )


async def _run(
    items: Iterable[Item],
    judge: Judge,
    store: ResultStore,
    summary: RunSummary,
    *,
    concurrency: int,
    retry_failed: bool,
    bar: tqdm,
) -> None:
    pending: set[asyncio.Task[ItemResult]] = set()
    loop = asyncio.get_running_loop()
    # One writer thread: SQLite writes leave the event loop, and stay in finishing order.
    writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="jurist-store")

    async def judge_and_store(item: Item) -> ItemResult:
        result = await _judge_one(judge, item)
        await loop.run_in_executor(writer, store.put, result)
        return result

    def record(done: set[asyncio.Task[ItemResult]]) -> None:
        for task in done:
            result = task.result()
            summary.judged += 1
            summary.usage = summary.usage.add(result.usage)
            if result.status == "ok":
                summary.ok += 1
            else:
                summary.failed += 1
                bar.set_postfix(failed=summary.failed, refresh=False)
            bar.update(1)

    resuming = store.counts() != {}
    try:
        for item in items:
            # A fresh run has nothing to skip: no lookup per item.
            status = store.status(item.id) if resuming else None
            if status == "ok" or (status == "failed" and not retry_failed):
                summary.skipped += 1
                bar.update(1)
                continue
            if len(pending) >= concurrency:
                done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                record(done)
            pending.add(asyncio.create_task(judge_and_store(item)))
        while pending:
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            record(done)
    finally:
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
        writer.shutdown(wait=True)


def run_items(
    items: Iterable[Item],
    judge: Judge,
    run_dir: str | Path,
    *,
    task: str,
    dataset: dict[str, Any],
    config: dict[str, Any],
    total: int | None = None,
    concurrency: int = 8,
    retry_failed: bool = False,
    progress: bool = True,
) -> RunSummary:
    """Judge ``items`` into ``run_dir``, skipping items already recorded there.

    Args:
        items: The dataset's items, streamed; ids must be unique.
        judge: The judge to call for each item.
        run_dir: The run directory; created if missing, resumed if it holds this run.
        task: The task name recorded in the manifest.
        dataset: ``{"path": ..., "sha256": ..., "items": ...}`` of the input data.
        config: The judge config as JSON-ready data (it never holds secrets).
        total: Number of items, for the progress bar's ETA.
        concurrency: How many items are judged at once.
        retry_failed: Judge items recorded as failed again (by default they are kept).
        progress: Show a progress bar (rate, ETA, failures) on stderr.

    Raises:
        RunDirectoryError: ``run_dir`` holds a run of another task, judge or dataset.
    """
    run_path = Path(run_dir)
    run_path.mkdir(parents=True, exist_ok=True)
    identity = {
        "task": task,
        "judge": judge.name,
        "judge_fingerprint": judge.fingerprint(),
        "dataset_sha256": dataset.get("sha256"),
    }
    existing = _check_manifest(run_path, identity)
    manifest: dict[str, Any] = {
        **identity,
        "dataset": dataset,
        "config": config,
        "versions": versions(),
        "created_at": (existing or {}).get("created_at") or datetime.now(UTC).isoformat(timespec="seconds"),
        "status": "running",
    }
    _write_manifest(run_path, manifest)
    summary = RunSummary(run_dir=run_path)
    start = time.perf_counter()
    with (
        ResultStore(run_path / RESULTS_DB) as store,
        tqdm(
            total=total, desc=f"{task} · {judge.name}", unit="item", disable=not progress, dynamic_ncols=True
        ) as bar,
    ):
        try:
            call_blocking(
                lambda: asyncio.run(
                    _run(
                        items,
                        judge,
                        store,
                        summary,
                        concurrency=concurrency,
                        retry_failed=retry_failed,
                        bar=bar,
                    )
                )
            )
        except KeyboardInterrupt:
            summary.interrupted = True
        summary.elapsed_s = time.perf_counter() - start
        counts = store.counts()
        manifest.update(
            status="interrupted" if summary.interrupted else "finished",
            finished_at=datetime.now(UTC).isoformat(timespec="seconds"),
            counts={"ok": counts.get("ok", 0), "failed": counts.get("failed", 0)},
            usage=store.total_usage().model_dump(),
        )
    _write_manifest(run_path, manifest)
    if summary.interrupted:
        print(
            f"interrupted: {summary.judged} items finished in this call are kept in {run_path}; "
            "run the same command again to resume",
            file=sys.stderr,
        )
        raise KeyboardInterrupt
    return summary
