"""Judge a run in several local processes (``jurist judge --workers N``).

The calling process stays the **driver**: it holds the run directory's lock, reads the
dataset, and is the one writer of ``results.sqlite``. N **worker** processes (started with
``spawn``, so nothing of the driver's threads or locks is copied) each rebuild the judge
from the run's :class:`~jurist.runner.scale.JudgeRecipe` with 1/N of its rate limits, and
the driver refuses them unless the rebuilt judge has the driver's fingerprint.

The driver keeps at most ``concurrency`` items in flight in all workers together, each
new one sent to the worker with the fewest; a worker judges what it gets concurrently on
its event loop and sends each result back as soon as it finishes. The driver records it
(:meth:`jurist.runner.tally.Tally.record`) and hands it to the run's one writer thread. A
worker writes the answers it got to the response cache itself (the cache is safe for
several processes), so an item finished but not yet recorded when a process dies is
answered from the cache when it is judged again.

A worker that dies (killed, out of memory) is replaced, and the items it held are sent
again; an item whose worker died :data:`ITEM_TRIES` times stops the run with
:class:`~jurist.errors.WorkerLostError`, everything finished kept. A worker that dies while
starting (before it said it is ready; e.g. killed on a loaded machine) is replaced too, up
to :data:`START_TRIES` such deaths in a run. A driver that dies takes its workers with it:
each exits when the driver's end of its pipe closes.

A worker leaves Ctrl-C to the driver (it ignores SIGINT) and takes SIGTERM as the driver's
"stop": it cancels what it holds, writes its response-cache entries and exits. So a SIGTERM
sent to the driver's whole process group, or to the driver alone, stops the run cleanly
(:class:`~jurist.errors.Terminated`): the driver keeps the results that came back, stops
its workers and waits for them.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import multiprocessing
import pickle
import queue
import signal
import threading
from collections.abc import Callable, Iterator
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from typing import Any

import cloudpickle

from jurist.errors import WorkerLostError
from jurist.judges.cache_context import deferring_cache_writes, writing_cache_together
from jurist.judges.judge import Judge
from jurist.runner.scale import JudgeRecipe, check_fingerprint
from jurist.runner.store import ResultWriter
from jurist.runner.tally import Item, Tally, judge_one

ITEM_TRIES = 3
"""How many times an item is sent to a worker that then dies before the run stops."""

START_TRIES = 3
"""Worker processes that die while starting (before they are ready) in one run: each one is
replaced, and the one that makes this many stops the run."""

STOP_WAIT_SECONDS = 10.0
"""How long a worker is given to finish its cache writes and exit when the run ends."""

Work = tuple[int, Item]


def portable_error(exc: BaseException) -> BaseException:
    """``exc`` if it survives pickling, else a ``RuntimeError`` with its type and message."""
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        return RuntimeError(f"{type(exc).__name__}: {exc}")
    return exc


# ---------------------------------------------------------------------- worker process side


class _CacheWriter:
    """The worker's thread that makes each finished item's response-cache writes, in batches
    (one transaction for what waits), off the event loop."""

    def __init__(self) -> None:
        self._waiting: queue.SimpleQueue[list[Callable[[], None]] | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._loop, name="jurist-cache", daemon=True)
        self._thread.start()

    def submit(self, writes: list[Callable[[], None]]) -> None:
        if writes:
            self._waiting.put(writes)

    def close(self) -> None:
        self._waiting.put(None)
        self._thread.join()

    def _loop(self) -> None:
        while True:
            batch = [self._waiting.get()]
            while not self._waiting.empty():
                batch.append(self._waiting.get())
            with writing_cache_together():
                for writes in batch:
                    for write in writes or []:
                        with contextlib.suppress(Exception):  # the cache is an optimisation
                            write()
            if None in batch:
                return


async def _serve(conn: Connection, judge: Judge) -> None:
    """Judge every item the driver sends until it says stop (or its end of the pipe closes)."""
    loop = asyncio.get_running_loop()
    inbox: asyncio.Queue[Any] = asyncio.Queue()
    cache = _CacheWriter()

    def receive() -> None:
        while True:
            try:
                message = conn.recv()
            except (EOFError, OSError):
                message = ("stop",)
            try:
                loop.call_soon_threadsafe(inbox.put_nowait, message)
            except RuntimeError:  # the loop has closed: SIGTERM stopped this worker already
                return
            if message[0] == "stop":
                return

    async def judge_and_send(position: int, item: Item) -> None:
        try:
            with deferring_cache_writes() as writes:
                result = await judge_one(judge, item)
        except Exception as exc:  # a fatal provider error (or a bug): the driver stops the run
            conn.send(("error", portable_error(exc)))
            return
        conn.send(("result", position, result))
        cache.submit(writes)

    threading.Thread(target=receive, name="jurist-inbox", daemon=True).start()
    with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):  # not on Windows
        loop.add_signal_handler(signal.SIGTERM, inbox.put_nowait, ("stop",))
    running: set[asyncio.Task[None]] = set()
    try:
        while (message := await inbox.get())[0] != "stop":
            task = asyncio.create_task(judge_and_send(message[1], message[2]))
            running.add(task)
            task.add_done_callback(running.discard)
    finally:
        for task in list(running):
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)
        cache.close()


def worker_main(conn: Connection, recipe: bytes, processes: int) -> None:
    """A worker process: rebuild the judge, report its fingerprint, then judge what comes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the driver's to handle
    try:
        judge = pickle.loads(recipe).build(processes)
        conn.send(("ready", judge.fingerprint()))
    except Exception as exc:
        conn.send(("error", portable_error(exc)))
        return
    asyncio.run(_serve(conn, judge))


# ---------------------------------------------------------------------- driver side


class _Worker:
    """One worker process as the driver sees it: its pipe and the items it holds."""

    def __init__(self, context: Any, recipe: bytes, processes: int, number: int) -> None:
        self.number = number
        self.conn, child = context.Pipe(duplex=True)
        self.process: BaseProcess = context.Process(
            target=worker_main, args=(child, recipe, processes), name=f"jurist-worker-{number}", daemon=True
        )
        self.process.start()
        child.close()
        self.held: dict[int, Item] = {}
        self.ready = False

    def send(self, position: int, item: Item) -> bool:
        """Send an item; ``False`` if the worker is gone."""
        try:
            self.conn.send(("item", position, item))
        except (OSError, ValueError):
            return False
        self.held[position] = item
        return True

    def stop(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.conn.send(("stop",))

    def end(self) -> None:
        """Wait for the process to exit (kill it if it does not), and close the pipe."""
        self.process.join(STOP_WAIT_SECONDS)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
        self.conn.close()

    def death(self) -> str:
        self.process.join(STOP_WAIT_SECONDS)
        code = self.process.exitcode
        if code is not None and code < 0:
            with contextlib.suppress(ValueError):
                return f"killed by {signal.Signals(-code).name}"
        return f"exit code {code}"


class _Pool:
    """The driver's worker processes, replaced as they die. :meth:`start_all` starts them;
    :meth:`close` ends every one started, also when starting them failed half-way."""

    def __init__(self, recipe: JudgeRecipe, fingerprint: str, processes: int) -> None:
        self.blob = cloudpickle.dumps(recipe)
        self.fingerprint = fingerprint
        self.processes = processes
        self.context = multiprocessing.get_context("spawn")
        self.started = 0
        self.start_deaths = 0
        """Workers that died before they were ready (see :data:`START_TRIES`)."""
        self.workers: list[_Worker] = []

    def start_all(self) -> None:
        for _ in range(self.processes):
            self.start()

    def start(self) -> None:
        self.started += 1
        self.workers.append(_Worker(self.context, self.blob, self.processes, self.started))

    def held(self) -> int:
        return sum(len(worker.held) for worker in self.workers)

    def least_busy(self) -> _Worker | None:
        ready = [worker for worker in self.workers if worker.ready]
        return min(ready, key=lambda worker: len(worker.held)) if ready else None

    def close(self) -> None:
        for worker in self.workers:
            worker.stop()
        for worker in self.workers:
            worker.end()


def judge_in_workers(
    work: Iterator[Work],
    recipe: JudgeRecipe,
    fingerprint: str,
    writer: ResultWriter,
    tally: Tally,
    *,
    processes: int,
    concurrency: int,
) -> None:
    """Judge ``work`` in ``processes`` worker processes, ``concurrency`` items at a time in all.

    Raises:
        ConfigError: A worker's judge has another fingerprint than the driver's.
        WorkerLostError: Workers died while starting :data:`START_TRIES` times, or while
            holding the same item :data:`ITEM_TRIES` times.
        FatalProviderError: A worker met one; the run stops.
    """
    pool = _Pool(recipe, fingerprint, processes)
    again: collections.deque[Work] = collections.deque()
    tries: collections.Counter[int] = collections.Counter()
    exhausted = False
    try:
        pool.start_all()
        while True:
            while pool.held() < concurrency and tally.may_launch() and (again or not exhausted):
                worker = pool.least_busy()
                if worker is None:
                    break
                if again:
                    position, item = again.popleft()
                else:
                    found = next(work, None)
                    if found is None:
                        exhausted = True
                        break
                    position, item = found
                if not worker.send(position, item):
                    again.appendleft((position, item))
                    break
            if not pool.held() and (not tally.may_launch() or (exhausted and not again)):
                return
            _receive(pool, writer, tally, again, tries)
    finally:
        pool.close()


def _receive(
    pool: _Pool,
    writer: ResultWriter,
    tally: Tally,
    again: collections.deque[Work],
    tries: collections.Counter[int],
) -> None:
    """Take in what the workers sent (results, readiness, errors) and replace dead workers."""
    by_conn = {worker.conn: worker for worker in pool.workers}
    for conn in wait(list(by_conn)):
        worker = by_conn[conn]  # type: ignore[index]
        try:
            while worker.conn.poll():
                _handle(worker, worker.conn.recv(), pool, writer, tally)
        except (EOFError, OSError):
            _replace(worker, pool, again, tries)
    if writer.error is not None:
        raise writer.error


def _handle(
    worker: _Worker, message: tuple[Any, ...], pool: _Pool, writer: ResultWriter, tally: Tally
) -> None:
    kind = message[0]
    if kind == "result":
        _, position, result = message
        item = worker.held.pop(position, None)
        if item is not None:
            writer.submit(result, (), position, item.recorded_inputs)
            tally.record(result)
    elif kind == "ready":
        check_fingerprint(message[1], pool.fingerprint, f"worker process {worker.number}")
        worker.ready = True
    else:
        raise message[1]


def _replace(
    worker: _Worker, pool: _Pool, again: collections.deque[Work], tries: collections.Counter[int]
) -> None:
    """A worker died: send its items again (to the others and a new worker), or stop."""
    how = worker.death()
    pool.workers.remove(worker)
    worker.conn.close()
    if not worker.ready:
        pool.start_deaths += 1
        if pool.start_deaths >= START_TRIES:
            raise WorkerLostError(
                f"worker processes died {pool.start_deaths} times before they could judge (the last "
                f"one, worker process {worker.number}, {how}); finished items are kept: run the same "
                "command again to resume, or judge with --workers 1 to see the error in this process"
            )
        pool.start()  # died while starting (killed, out of memory): it held no item
        return
    for position, item in sorted(worker.held.items()):
        tries[position] += 1
        if tries[position] >= ITEM_TRIES:
            raise WorkerLostError(
                f"worker processes died {tries[position]} times while judging item {item.id!r} (the last one "
                f"{how}); finished items are kept: run the same command again to resume, or judge with "
                "--workers 1"
            )
        again.append((position, item))
    pool.start()
